"""Distinct-URL counts from the bounded URL sample: exact under `url_sample_size` URLs per
pattern, estimated within a few percent above it, and memory that does not grow with URLs;
names merged while reading: what one merge at the end makes, whatever the batches."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from unittest.mock import patch

import polars as pl
from hypothesis import example, given
from hypothesis import settings as hsettings
from hypothesis import strategies as st
from polars.testing import assert_frame_equal

from logtrap import schema as s
from logtrap import traffic as traffic_module
from logtrap.patterns import add_patterns
from logtrap.settings import Settings
from logtrap.traffic import PEOPLE_URLS as PEOPLE
from logtrap.traffic import READS_BOUND as READS
from logtrap.traffic import Tally
from builders import BOT, HUMAN, bots, pinned_string_bytes, requests_frame

T0 = datetime(2026, 3, 2, tzinfo=timezone.utc)


def day_of_urls(day: int, ids: range, **extra) -> pl.DataFrame:
    rows = [{s.URL: f"/item/{i}", s.TIME: T0 + timedelta(days=day, seconds=i % 80_000), **extra}
            for i in ids]
    return add_patterns(requests_frame(rows))


def tally_of(frames: list[pl.DataFrame], k: int) -> Tally:
    tally = Tally(settings=Settings(url_sample_size=k))
    for frame in frames:
        tally.add(frame)
    return tally


def test_counts_are_exact_below_the_sample_size():
    # 300 URLs on day 0, 100 more on day 1 (and day 0's again), 50 more on day 2
    frames = [day_of_urls(0, range(300)), day_of_urls(1, range(400)), day_of_urls(2, range(450))]
    traffic = tally_of(frames, k=1000).finish()
    windows = traffic.windows.filter(pl.col(s.PATTERN) == "/item/{n}")
    assert windows[s.NEW_URLS].to_list() == [300, 100, 50]
    assert windows[s.URLS_TO_DATE].to_list() == [300, 400, 450]
    assert traffic.patterns.select(s.UNIQUE_URLS, s.UNIQUE_URLS_EXACT).row(0) == (450, True)


def test_counts_past_the_sample_size_are_estimated_within_its_error():
    # 4 days, 5,000 new URLs a day (each day also fetches the day before's again), k = 400:
    # the k-minimum-values estimate has a relative error of about 1/sqrt(400) = 5%
    frames = [day_of_urls(d, range(max(0, d - 1) * 5000, (d + 1) * 5000)) for d in range(4)]
    traffic = tally_of(frames, k=400).finish()
    unique, exact = traffic.patterns.select(s.UNIQUE_URLS, s.UNIQUE_URLS_EXACT).row(0)
    assert exact is False
    assert abs(unique - 20_000) <= 0.15 * 20_000  # three standard errors
    windows = traffic.windows.filter(pl.col(s.PATTERN) == "/item/{n}")
    to_date = windows[s.URLS_TO_DATE].to_list()
    assert to_date == sorted(to_date) and to_date[-1] == unique
    # every day brings about a quarter of the URLs: 100 of the 400 sampled, +-30%
    assert all(0.7 * 5000 <= n <= 1.3 * 5000 for n in windows[s.NEW_URLS].to_list())


def test_memory_is_bounded_by_the_sample_not_by_the_urls():
    # 40 batches of 2,000 new URLs each: 80,000 distinct URLs, one pattern
    frames = [day_of_urls(b // 10, range(b * 2000, (b + 1) * 2000)) for b in range(40)]
    tally = tally_of(frames, k=300)
    kept = {name: frame.height for name, frame in tally.frames().items()}
    assert kept["urls"] == 300  # one row per sampled URL (one status and size each)
    assert sum(kept.values()) < 2000  # windows, statuses, per-minute rows: no per-URL table


def test_the_sample_is_the_same_whether_read_in_one_batch_or_many():
    # later batches are cut by the hash cutoffs of earlier ones; that must lose no sampled URL
    frames = [day_of_urls(b // 5, range(b * 700, b * 700 + 1500)) for b in range(12)]
    many = tally_of(frames, k=250)
    assert many._cutoffs.height == 1  # the cutoffs were in use
    one = tally_of([pl.concat(frames)], k=250)
    order = [s.URL_HASH, s.STATUS, s.BYTES]
    assert many.frames()["urls"].sort(order).equals(one.frames()["urls"].sort(order))
    assert many.finish().windows.equals(one.finish().windows)


def test_the_cutoffs_keep_every_request_of_the_sampled_urls_and_of_patterns_not_full():
    # six batches of the same 800 URLs (the k-th smallest hash, the cutoff, asked for in each)
    # and of five URLs of a pattern whose sample never fills, whatever their hashes
    frames = [day_of_urls(b, range(800)).vstack(add_patterns(requests_frame(
        {s.URL: f"/other/{j}", s.TIME: T0 + timedelta(days=b, seconds=j)} for j in range(5))))
        for b in range(6)]
    many = tally_of(frames, k=250)
    assert many._cutoffs.height == 1
    one = tally_of([pl.concat(frames)], k=250)
    order = [s.URL_HASH, s.STATUS, s.BYTES]
    urls = many.frames()["urls"].sort(order)
    assert urls.equals(one.frames()["urls"].sort(order))
    assert urls.group_by(s.PATTERN).agg(pl.len(), pl.col(s.REQUESTS).unique()).sort(s.PATTERN).rows() == [
        ("/item/{n}", 250, [6]), ("/other/{n}", 5, [6])]


def bot_day(day: int, per_minute: dict[int, int]) -> pl.DataFrame:
    """A bot's requests on one day: `per_minute[m]` requests in minute m (others: one)."""
    rows = []
    for minute in range(0, 1440, 10):
        for i in range(per_minute.get(minute, 1)):
            at = T0 + timedelta(days=day, minutes=minute, seconds=i % 60)
            rows.append({s.URL: f"/p/{minute}", s.TIME: at, s.IS_BOT: True,
                         s.BOT_NAME: "AhrefsBot", s.BOT_KIND: "seo"})
    return add_patterns(requests_frame(rows))


def test_old_hours_and_minutes_fold_so_months_of_logs_stay_small():
    # 30 days, one batch a day; day 3 has the busiest minute (40 requests at minute 600)
    frames = [bot_day(d, {600: 40} if d == 3 else {}) for d in range(30)]
    tally = tally_of(frames, k=1000)
    kept = tally.frames()
    windows, minutes = kept["windows"], kept["bot_minutes"]
    # the newest day and the two before it stay hourly (24 windows, 144 minutes each), older
    # days are one row each
    assert windows.height == 27 + 3 * 24
    assert minutes.height == 27 + 3 * 144
    assert minutes[s.REQUESTS].max() == 40
    traffic = tally.finish()
    assert traffic.windows[s.REQUESTS].to_list() == [144] * 3 + [183] + [144] * 26
    assert traffic.patterns[s.REQUESTS].sum() == 30 * 144 + 39
    from logtrap.analysis import bot_table
    assert bot_table(traffic).select(s.BOT_NAME, "peak_per_minute").rows() == [("AhrefsBot", 40)]


def test_of_old_minutes_as_busy_the_earliest_is_kept_whatever_the_order_of_the_rows():
    # day 0's minutes 600 and 900 both have 5 requests; the tally reaches day 5 (day 0 folds)
    frames = [bot_day(0, {600: 5, 900: 5}), bot_day(5, {})]
    for reverse in (False, True):
        batches = [f.reverse() for f in reversed(frames)] if reverse else frames
        kept = tally_of(batches, k=1000).frames()["bot_minutes"]
        day0 = kept.filter(pl.col(s.MINUTE) < T0 + timedelta(days=1))
        assert day0.select(s.MINUTE, s.REQUESTS).rows() == [(T0 + timedelta(minutes=600), 5)]


def test_an_estimate_never_passes_the_requests_made():
    # a sample whose k hashes are tiny: the estimate would be ~10^16 distinct URLs, but the
    # pattern had 50 requests an hour for two hours
    from logtrap.traffic import _sample_fill, _windows

    k = 10
    hours = [T0, T0 + timedelta(hours=1)]
    hourly = pl.DataFrame({
        s.HOST: ["-"] * 2, s.PATTERN: ["/t/{token}"] * 2, s.SECTION: ["/t/{token}"] * 2,
        s.WINDOW: hours, s.REQUESTS: [50, 50], s.BOT_REQUESTS: [50, 50],
        s.FIRST_SEEN: hours, s.LAST_SEEN: hours,
    })
    urls = pl.DataFrame({
        s.HOST: ["-"] * k, s.PATTERN: ["/t/{token}"] * k, s.URL_HASH: list(range(1, k + 1)),
        s.FIRST_SEEN: [hours[i % 2] for i in range(k)],
    }, schema_overrides={s.URL_HASH: pl.UInt64})
    windows = _windows(hourly, urls, _sample_fill(urls), "1h", k)
    assert windows[s.URLS_TO_DATE].to_list() == [50, 100]
    assert windows[s.NEW_URLS].to_list() == [50, 50]


def test_finish_merges_many_names_into_one_pattern_and_the_saved_frames_keep_them():
    # 30 tags, 40 URLs each (a page and its ?page=N list pages apart), two bots, two days
    rows = []
    for t in range(30):
        for i in range(40):
            rows.append({s.URL: f"/tag/word{chr(97 + t % 26)}{chr(97 + t // 26)}/?page={i}",
                         s.TIME: T0 + timedelta(days=i % 2, minutes=t),
                         s.IS_BOT: True, s.BOT_NAME: ("Googlebot", "bingbot")[i % 2],
                         s.BOT_KIND: "search", s.STATUS: 200 if i < 35 else 404})
    tally = Tally(settings=Settings(url_sample_size=500))
    tally.add(add_patterns(requests_frame(rows)))
    traffic = tally.finish()
    assert traffic.patterns.select(s.PATTERN, s.SECTION, s.REQUESTS).rows() == [
        ("/tag/{name}/?page", "/tag/{name}", 1200)]
    # 1,200 URLs, 500 sampled: estimated from the merged sample, 1/sqrt(500) = 4.5% error
    unique, exact = traffic.patterns.select(s.UNIQUE_URLS, s.UNIQUE_URLS_EXACT).row(0)
    assert exact is False and abs(unique - 1200) <= 0.15 * 1200
    assert traffic.windows[s.REQUESTS].to_list() == [600, 600]
    assert traffic.statuses.select(s.STATUS, s.REQUESTS).rows() == [(200, 1050), (404, 150)]
    assert traffic.agents.group_by(s.BOT_NAME).agg(pl.col(s.REQUESTS).sum()).sort(s.BOT_NAME).rows() == [
        ("Googlebot", 600), ("bingbot", 600)]
    assert traffic.urls[s.URL].n_unique() == 500  # the 500 smallest hashes of all 1,200
    assert traffic.urls[s.PATTERN].unique().to_list() == ["/tag/{name}/?page"]
    # what cron state saves: the rows under the merged pattern (no later log can undo this
    # merge: nothing follows the name but parameters), and the 30 patterns it merged
    frames = tally.frames()
    assert frames["windows"][s.PATTERN].unique().to_list() == ["/tag/{name}/?page"]
    names = frames["names"].sort(s.PATTERN)
    assert names[s.PATTERN].to_list()[:2] == ["/tag/wordaa/?page", "/tag/wordab/?page"]
    assert names["merged"].unique().to_list() == ["/tag/{name}/?page"] and names.height == 30


def test_names_joining_a_slug_template_make_one_pattern_in_its_section():
    # /blog/geekery/<3+ words>.html is {slug}; 30 posts named in one or two words join it, and
    # a pattern that merges with nothing keeps its own section
    rows = [{s.URL: f"/blog/geekery/post-number-{i}-here.html"} for i in range(10)]
    rows += [{s.URL: f"/blog/geekery/note{chr(97 + i % 26)}{chr(97 + i // 26)}.html"}
             for i in range(30)]
    rows += [{s.URL: "/about/team"}]
    tally = Tally(settings=Settings())
    tally.add(add_patterns(requests_frame(rows)))
    patterns = tally.finish().patterns.sort(s.PATTERN)
    assert patterns.select(s.PATTERN, s.SECTION, s.REQUESTS).rows() == [
        ("/about/team", "/about/team", 1), ("/blog/geekery/{slug}.html", "/blog/geekery", 40)]


def test_ties_are_broken_the_same_way_whatever_the_order_of_the_rows():
    # one URL answered 404 once and 200 once; statuses tied two and two. Polars sorts ties in
    # any order it likes: a finding hanging on one of them came and went from run to run.
    from logtrap.detectors import _shape

    rows = [{s.URL: "/a", s.STATUS: 404, s.BYTES: 10}, {s.URL: "/a", s.STATUS: 200, s.BYTES: 900},
            {s.URL: "/b", s.STATUS: 301, s.BYTES: 0}, {s.URL: "/b", s.STATUS: 200, s.BYTES: 500}]
    for order in (rows, rows[::-1]):
        tally = Tally(settings=Settings())
        tally.add(add_patterns(requests_frame(order)))
        traffic = tally.finish()
        one = _shape.per_url(traffic.urls).sort(s.URL)
        assert one.select(s.URL, s.STATUS, s.BYTES).rows() == [("/a", 200, 900), ("/b", 200, 500)]
        statuses = traffic.patterns.filter(pl.col(s.PATTERN) == "/a")[s.STATUSES].to_list()
        assert statuses == [[{"status": 200, "requests": 1}, {"status": 404, "requests": 1}]]


def shop_batch(day: int, products: range) -> pl.DataFrame:
    """A day of a shop whose product handles are two words (`/products/red-shirt`: a pattern
    each until merged), read by Googlebot from two addresses and by browsers, some with a
    ?page, and a few pages that merge with nothing."""
    rows = []
    for i in products:
        handle = f"w{i % 17}-x{i}"
        rows.append({**(BOT if i % 3 else HUMAN), s.URL: f"/products/{handle}",
                     s.CLIENT: f"66.249.66.{i % 2}", s.STATUS: 404 if i % 11 == 0 else 200,
                     s.TIME: T0 + timedelta(days=day, minutes=i % 1000)})
        if i % 4 == 0:
            rows.append({**BOT, s.URL: f"/products/{handle}?page={i % 3}",
                         s.TIME: T0 + timedelta(days=day, minutes=i % 900)})
    rows += [{**BOT, s.URL: u, s.TIME: T0 + timedelta(days=day)} for u in ("/about", "/tag/red")]
    return add_patterns(requests_frame(rows))


def kept_patterns(tally: Tally) -> int:
    """The patterns a tally's windows table keeps rows under, as read so far."""
    return pl.concat(tally._parts["windows"])[s.PATTERN].n_unique()


def test_names_merged_during_the_tally_are_those_one_merge_at_the_end_makes(monkeypatch):
    # six days, each fetching 120 products (60 new a day): 420 products, 105 of them with a
    # ?page too, and 2 other pages: 527 patterns; 50 URLs sampled per pattern
    frames = [shop_batch(day, range(day * 60, day * 60 + 120)) for day in range(6)]
    at_the_end = tally_of(frames, k=50)
    assert kept_patterns(at_the_end) == 527  # not merged while reading
    monkeypatch.setattr(traffic_module, "_MERGE_NAMES_AT", 100)
    during = tally_of(frames, k=50)
    # merged while reading: the tables hold the two product patterns and the few new ones
    assert kept_patterns(during) < 100
    assert during.frames()["names"].height == 527  # every pattern seen, merged or not
    one, many = at_the_end.finish(), during.finish()
    assert one.patterns[s.PATTERN].to_list()[:2] == ["/products/{name}", "/products/{name}?page"]
    # (bot_minutes has no patterns, and keeps one of a day's tied busiest minutes, any one)
    for table in ("patterns", "sections", "windows", "statuses", "agents", "claims", "urls"):
        assert getattr(many, table).equals(getattr(one, table)), table
    # a tally spent making its traffic (`analyze`'s own) makes the same, the merges at the end
    # renamed table by table, and keeps none of its tables
    spent = tally_of(frames, k=50)
    released = spent.finish(release=True)
    assert spent._parts == {}
    for table in ("patterns", "sections", "windows", "statuses", "agents", "claims", "urls", "names"):
        assert getattr(released, table).equals(getattr(one, table)), table


def test_a_merge_later_patterns_undo_is_not_made_while_reading(monkeypatch):
    # /tag/a|b|c/feed merge into /tag/{name}/feed (3 names); then /tag/a/ gains two pages, so
    # its segment after /tag/a/ merges (feed, x, y) and leaves the feed group two names. Made
    # while reading, the first merge would have mixed rows that the end tells apart.
    monkeypatch.setattr(traffic_module, "_MERGE_NAMES_AT", 3)
    first = add_patterns(requests_frame(bots(["/tag/a/feed", "/tag/b/feed", "/tag/c/feed"])))
    later = add_patterns(requests_frame(bots(["/tag/a/x", "/tag/a/y", "/tag/b/feed"])))
    settings = Settings(pattern_min_names=3)
    tally = Tally(settings=settings)
    tally.add(first)
    assert tally.finish().patterns[s.PATTERN].to_list() == ["/tag/{name}/feed"]
    assert kept_patterns(tally) == 3 and tally.frames()["windows"].height == 3  # kept apart
    tally.add(later)
    patterns = tally.finish().patterns.sort(s.PATTERN)
    assert patterns.select(s.PATTERN, s.REQUESTS).rows() == [
        ("/tag/a/{name}", 3), ("/tag/b/feed", 2), ("/tag/c/feed", 1)]
    at_once = Tally(settings=settings)
    at_once.add(pl.concat([first, later]))
    assert at_once.finish().patterns.sort(s.PATTERN).equals(patterns)


_SEGMENTS = st.lists(st.sampled_from(["a", "b", "c", "d", "feed", "7"]), min_size=1, max_size=3)
_URLS = st.tuples(_SEGMENTS, st.sampled_from(["", "/", "?page=2"])).map(
    lambda u: "/" + "/".join(u[0]) + u[1])


@hsettings(max_examples=80, deadline=None)
@given(st.lists(_URLS, min_size=1, max_size=60), st.integers(1, 5), st.integers(2, 3),
       st.booleans())
@example(["/a/a/feed", "/a/b/feed", "/a/c/feed", "/a/a/b", "/a/a/c"], 2, 3, False)  # undone
def test_merging_while_reading_gives_what_one_merge_at_the_end_gives(urls, batches, min_names,
                                                                      via_state):
    # names merged every 2 patterns seen, in 1-5 batches, each saved and restored as cron
    # state does or not: the same patterns, counts and growth as one batch merged at the end
    settings = Settings(pattern_min_names=min_names, url_sample_size=4)
    frame = add_patterns(requests_frame(bots(urls)))
    one = Tally(settings=settings)
    one.add(frame)
    expected = one.finish()

    def read() -> Tally:
        tally = Tally(settings=settings)
        size = -(-frame.height // batches)
        for start in range(0, frame.height, size):
            tally.add(frame.slice(start, size))
            if via_state:
                tally = Tally.from_frames(tally.frames(), settings)
        return tally

    with patch.object(traffic_module, "_MERGE_NAMES_AT", 2):
        got = read().finish()
        spent = read().finish(release=True)  # analyze's: no stable merge before the last
    columns = [s.PATTERN, s.REQUESTS, s.BOT_REQUESTS, s.UNIQUE_URLS]
    for traffic in (got, spent):
        assert traffic.patterns.select(columns).sort(s.PATTERN).equals(
            expected.patterns.select(columns).sort(s.PATTERN))
        assert traffic.windows.sort(s.PATTERN, s.WINDOW).equals(expected.windows.sort(s.PATTERN, s.WINDOW))


# -- distinct addresses of bots a crowd may send (traffic.bot_addresses) --------------------


def app_requests(hosts_and_addresses: list[tuple[str, range]], day: int = 0) -> pl.DataFrame:
    """One okhttp request per address and host, from 10.0.x.y."""
    rows = [{s.HOST: host, s.CLIENT: f"10.0.{i // 250}.{i % 250}", s.URL: "/api/feed",
             s.IS_BOT: True, s.BOT_NAME: "okhttp", s.BOT_KIND: "tool",
             s.TIME: T0 + timedelta(days=day)}
            for host, addresses in hosts_and_addresses for i in addresses]
    return add_patterns(requests_frame(rows))


def test_bot_addresses_are_exact_below_the_sample_and_estimated_above():
    # a: 200 addresses, b: 150 of them new; together 250, under ADDRESS_SAMPLE (1,024): exact
    both = app_requests([("a.example", range(200)), ("b.example", range(100, 250))])
    traffic = tally_of([both], 1000).finish()
    assert traffic_module.bot_addresses(traffic).rows() == [  # one request an address: even
        ("a.example", "okhttp", 200, 200, 0.005, 1.0), ("b.example", "okhttp", 150, 150, 0.0067, 1.0)]
    # across hosts: 350 requests from 250 addresses, 100 of which called both hosts
    assert traffic_module.bot_addresses(traffic, by_host=False).rows() == [
        ("okhttp", 350, 250, 0.0057, 1.0)]
    # 3,000 addresses over three batches (and cron runs): a bounded sample, within 5%
    batches = [app_requests([("a.example", range(1000 * d, 1000 * (d + 1)))], day=d) for d in range(3)]
    tally = tally_of(batches[:2], 1000)
    tally = Tally.from_frames(tally.frames(), tally.settings)  # a cron run saved and resumed
    tally.add(batches[2])
    traffic = tally.finish()
    assert traffic.bot_clients.height == traffic_module.ADDRESS_SAMPLE
    [(host, bot, requests, addresses, _, spread)] = traffic_module.bot_addresses(traffic).rows()
    assert (host, bot, requests) == ("a.example", "okhttp", 3000)
    assert abs(addresses - 3000) <= 150 and abs(spread - 1) <= 0.05


def test_bot_addresses_count_only_the_kinds_a_crowd_may_send():
    # Googlebot from 300 addresses is one party's crawler: not counted, never a crowd
    rows = [{**BOT, s.CLIENT: f"66.249.66.{i % 250}", s.URL: f"/a/{i}"} for i in range(300)]
    traffic = tally_of([add_patterns(requests_frame(rows))], 1000).finish()
    assert traffic.bot_clients.height == 0
    assert traffic_module.crowd_bots(traffic, Settings(crowd_min_addresses=1)).height == 0


def test_a_state_saved_before_addresses_were_counted_still_loads():
    tally = tally_of([app_requests([("a.example", range(10))])], 1000)
    frames = {k: v for k, v in tally.frames().items() if k != "bot_clients"}
    resumed = Tally.from_frames(frames, tally.settings)
    resumed.add(app_requests([("a.example", range(5, 20))], day=1))
    # the 10 requests of the run before: their addresses were not kept, so they spread less
    assert traffic_module.bot_addresses(resumed.finish()).rows() == [
        ("a.example", "okhttp", 25, 15, 0.04, 0.6)]


# -- the URLs people read, beside the URL sample (Traffic.people_urls) ------------------------


def _read(traffic, pattern: str) -> dict[str, int]:
    rows = traffic.people_urls.filter(pl.col(s.PATTERN) == pattern)
    return dict(zip(rows[s.URL], rows[s.HUMAN_REQUESTS]))


def test_every_page_people_read_is_kept_beside_the_url_sample_across_runs():
    # bots walk 200 items; people read 4 of them, across two cron runs: the URL sample
    # (k = 4) holds 4 items by hash, the people's table every page they were answered 2xx/3xx
    def run(day: int, people: list[tuple[str, int]]) -> pl.DataFrame:
        rows = [{**BOT, s.URL: f"/item/{i}", s.TIME: T0 + timedelta(days=day)} for i in range(200)]
        rows += [{**HUMAN, s.URL: url, s.STATUS: status, s.TIME: T0 + timedelta(days=day)}
                 for url, status in people]
        return add_patterns(requests_frame(rows))

    tally = tally_of([run(0, [("/item/7", 200), ("/item/150", 200), ("/item/3", 404)])], k=4)
    tally = Tally.from_frames(tally.frames(), tally.settings)  # saved and resumed
    tally.add(run(1, [("/item/7", 200), ("/item/199", 200), ("/item/5", 301)]))
    traffic = tally.finish()
    # (the 404 is no page; the 301 is, as log content counts it)
    assert _read(traffic, "/item/{n}") == {"/item/7": 2, "/item/150": 1, "/item/199": 1, "/item/5": 1}
    sampled = set(traffic.urls[s.URL])
    assert len(sampled) == 4 and not {"/item/150", "/item/199", "/item/5"} <= sampled
    got = traffic.people_read.filter(pl.col(s.PATTERN) == "/item/{n}")
    assert sorted(got[s.URL]) == ["/item/150", "/item/199", "/item/5", "/item/7"]


def _people(urls: list[str], day: int) -> pl.DataFrame:
    return add_patterns(requests_frame(
        [{**HUMAN, s.URL: u, s.TIME: T0 + timedelta(days=day, seconds=i)} for i, u in enumerate(urls)]))


def test_the_pages_people_read_are_the_most_read_under_merged_names():
    # people read 12 wiki titles over four days, merged into /wiki/{name} while reading: k = 4
    # are kept, whatever the batches: the one read every day, then the smallest hashes
    titles = [f"/wiki/{w}" for w in "Alpha Beta Gamma Delta Epsilon Zeta Eta Theta Iota Kappa Lambda Mu".split()]
    by_hash = pl.DataFrame({s.HOST: "-", s.URL: titles}).with_columns(
        traffic_module._URL_KEY.alias("h")).sort("h")[s.URL].to_list()
    popular = by_hash[-1]
    days = [[u for u in titles[i:i + 3] if u != popular] + [popular] for i in range(0, 12, 3)]
    with patch.object(traffic_module, "_MERGE_NAMES_AT", 2):
        tally = Tally(settings=Settings(url_sample_size=4, pattern_min_names=3))
        for day, urls in enumerate(days):
            tally.add(_people(urls, day))
        traffic = tally.finish()
    assert traffic.people_urls[s.PATTERN].unique().to_list() == ["/wiki/{name}"]
    most = [popular, *[u for u in by_hash if u != popular][:3]]
    assert _read(traffic, "/wiki/{name}") == {popular: 4, **dict.fromkeys(most[1:], 1)}


def _url_keys(urls: list[str]) -> list[int]:
    return pl.DataFrame({s.HOST: "-", s.URL: urls}).select(traffic_module._URL_KEY).to_series().to_list()


def test_a_page_people_read_steadily_or_heavily_once_is_kept_past_the_sample_size():
    # (code review 17) k = 4: a page read twice in each of ten batches, beside pages read three
    # times in one batch each, was cut from every batch's top 4
    def word(i: int) -> str:  # letters only: a name, not a number
        return "/item/" + "".join(chr(97 + i // 26**k % 26) for k in range(3))

    tally = Tally(settings=Settings(url_sample_size=4, pattern_min_names=3))
    daily = [[word(100 * day + i) for i in range(5)] for day in range(1, 11)]
    # the first run reads each page once and keeps the k smallest hashes: steady's among them
    smallest = min(_url_keys([u for urls in daily for u in urls]))
    steady = next(u for u in (word(i).replace("/item/", "/item/steady") for i in range(10_000))
                  if _url_keys([u])[0] < smallest)
    # a run that reads each page once and merges their names, so that the next's batches
    # are counted under `/item/{name}` as they come
    tally.add(_people([steady, *(u for urls in daily for u in urls)], 0))
    tally = Tally.from_frames(tally.frames(), tally.settings)
    for day in range(1, 11):
        tally.add(_people([steady] * 2 + [u for u in daily[day - 1] for _ in range(3)], day))
    assert _read(tally.finish(), "/item/{name}")[steady] == 21  # the first run's 1 and 20
    # a festival read 40 times in the first of 15 hourly cron runs, each of which reads 6 new
    # pages once: kept (halving each run's counts, tried in review, lost it in ten runs)
    tally = Tally(settings=Settings(url_sample_size=4, pattern_min_names=3))
    tally.add(_people(["/item/festival"] * 40 + [word(i) for i in range(6)], 0))
    for run in range(1, 15):
        tally = Tally.from_frames(tally.frames(), tally.settings)
        tally.add(_people([word(10 * run + i) for i in range(6)], run))
    assert _read(tally.finish(), "/item/{name}")["/item/festival"] == 40


def _bounds(traffic, pattern: str) -> dict[str, int]:
    rows = traffic.people_urls.filter(pl.col(s.PATTERN) == pattern)
    return dict(zip(rows[s.URL], rows[traffic_module.READS_BOUND]))


def test_a_page_new_to_a_pattern_whose_pages_were_cut_is_kept_by_the_reads_it_may_have_had():
    # (adversarial review 17, cal_late) k = 4: six days read 5 times each in one cron run, a
    # festival read 4 times in the next: by its reads alone, it lost to days it had no chance
    # against. Its bound counts up to 5 reads more, as any page cut from the table may have
    # had (Space-Saving), and keeps it
    days = [f"/item/{i}" for i in range(1, 7)]
    tally = Tally(settings=Settings(url_sample_size=4))
    tally.add(_people([u for u in days for _ in range(3)], 0))
    tally.add(_people([u for u in days for _ in range(2)], 0))
    first = _read(tally.finish(), "/item/{n}")
    assert sorted(first.values()) == [5, 5, 5, 5]
    tally = Tally.from_frames(tally.frames(), tally.settings)
    kept = sorted(first)[0]
    tally.add(_people(["/item/2030"] * 4 + [kept], 1))
    traffic = tally.finish()
    got, bounds = _read(traffic, "/item/{n}"), _bounds(traffic, "/item/{n}")
    assert (got["/item/2030"], bounds["/item/2030"], got[kept], bounds[kept]) == (4, 9, 6, 6)
    assert sorted(got.values()) == [4, 5, 5, 5, 6]  # the four read most, the four bound most
    # (adversarial review 18) a festival read 5 times in the first run, then 6 new pages read
    # two or three times each per run: their bounds rise run by run past the festival's,
    # and its reads keep it
    tally = Tally(settings=Settings(url_sample_size=4))
    tally.add(_people(["/item/2030"] * 5 + days[:3], 0))
    tally.add(_people(days[3:], 0))
    for run in range(1, 8):
        tally = Tally.from_frames(tally.frames(), tally.settings)
        tally.add(_people([f"/item/{100 * run + i}" for i in range(6) for _ in range(2 + i % 2)], run))
    traffic = tally.finish()
    bounds = _bounds(traffic, "/item/{n}")
    assert _read(traffic, "/item/{n}")["/item/2030"] == bounds["/item/2030"] == 5
    assert sorted(bounds.values(), reverse=True)[3] > 5  # not among the four bound most
    # a pattern with fewer than k pages kept lost none: a new page counts its own reads
    tally = Tally(settings=Settings(url_sample_size=4))
    tally.add(_people([u for u in days[:3] for _ in range(5)], 0))
    tally = Tally.from_frames(tally.frames(), tally.settings)
    tally.add(_people(["/item/2030"], 1))
    traffic = tally.finish()
    assert _read(traffic, "/item/{n}") == _bounds(traffic, "/item/{n}") == {**dict.fromkeys(days[:3], 5), "/item/2030": 1}


def test_a_state_saved_before_the_reads_bound_was_kept_still_loads():
    tally = tally_of([day_of_urls(0, range(3), **HUMAN)], 1000)
    frames = tally.frames()
    frames[traffic_module.PEOPLE_URLS] = frames[traffic_module.PEOPLE_URLS].drop(traffic_module.READS_BOUND)
    resumed = Tally.from_frames(frames, tally.settings)
    resumed.add(day_of_urls(1, range(2, 4), **HUMAN))
    traffic = resumed.finish()
    assert _read(traffic, "/item/{n}") == _bounds(traffic, "/item/{n}") == {
        "/item/0": 1, "/item/1": 1, "/item/2": 2, "/item/3": 1}


def test_a_state_saved_before_the_pages_people_read_were_kept_still_loads():
    tally = tally_of([day_of_urls(0, range(3), **HUMAN)], 1000)
    frames = {k: v for k, v in tally.frames().items() if k != traffic_module.PEOPLE_URLS}
    resumed = Tally.from_frames(frames, tally.settings)
    resumed.add(day_of_urls(1, range(2, 4), **HUMAN))
    # the run before's pages are in the URL sample still; people_read takes them from there
    traffic = resumed.finish()
    assert _read(traffic, "/item/{n}") == {"/item/2": 1, "/item/3": 1}
    assert sorted(traffic.people_read[s.URL]) == [f"/item/{i}" for i in range(4)]


def test_a_persons_post_is_no_page_read():
    # members POST their reactions to the URLs crawlers follow as links (XenForo's
    # `/posts/{id}/react?reaction_id=1`): no page people read, in the URL sample or beside it
    react = [f"/posts/{n}/react?reaction_id=1" for n in range(5)]
    rows = [{**BOT, s.URL: u} for u in react]
    rows += [{**HUMAN, s.URL: u, s.METHOD: "POST", s.BYTES: 431} for u in react[:3]]
    rows += [{**HUMAN, s.URL: u, s.METHOD: method} for u, method in
             (("/threads/a.1/", "GET"), ("/threads/b.2/", "HEAD"), ("/threads/c.3/", None),
              ("/threads/d.4/", "get"))]
    tally = Tally()
    tally.add(add_patterns(requests_frame(rows)))
    traffic = tally.finish()
    assert sorted(traffic.people_read[s.URL].to_list()) == [
        "/threads/a.1/", "/threads/b.2/", "/threads/c.3/", "/threads/d.4/"]
    sample = traffic.urls.filter(pl.col(s.PATTERN) == "/posts/{n}/react?reaction_id")
    assert (sample[s.REQUESTS].sum(), sample[s.BOT_REQUESTS].sum()) == (5, 5)
    # the pattern counts every request all the same
    assert traffic.patterns.filter(pl.col(s.PATTERN) == "/posts/{n}/react?reaction_id").select(
        s.REQUESTS, s.BOT_REQUESTS).row(0) == (8, 5)


_HOSTS = st.sampled_from(["-", "a.org", "b.org"])
_SOME_URLS = st.sampled_from(["/", "/a/1", "/a/2", "/b?x=1", "/b?y=2", "/c/d.html", None])
_WHO = st.sampled_from([HUMAN, BOT, {**BOT, s.BOT_NAME: "bingbot"},
                        {s.IS_BOT: True, s.BOT_NAME: "GPTBot", s.BOT_KIND: "ai"}])


@hsettings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(_HOSTS, _SOME_URLS, _WHO, st.sampled_from([200, 301, 404]),
                          st.sampled_from(["1.1.1.1", "2.2.2.2"]), st.integers(0, 7200)),
                min_size=1, max_size=40),
       st.booleans())
@example([("-", "/a/1", BOT, 200, "1.1.1.1", 0), ("-", "/a/2", BOT, 200, "1.1.1.1", 1)], True)
def test_tables_grouped_on_a_hash_are_those_grouped_on_the_text(rows, paths):
    frame = add_patterns(requests_frame(
        {s.HOST: host, s.URL: url, **who, s.STATUS: status, s.CLIENT: client,
         s.TIME: T0 + timedelta(seconds=second)}
        for host, url, who, status, client, second in rows))
    if paths:  # sections of a frame made elsewhere, not the pattern's: still apart
        frame = frame.with_columns(pl.col(s.PATH).alias(s.SECTION))
    batch = traffic_module._keyed(frame)
    numbered = batch.lazy().with_row_index(traffic_module._ROW)
    hashed = [n for n, t in traffic_module._TABLES.items() if t.hashed is not None]
    assert hashed == ["windows", "statuses", "agents", "claims", "people_urls"]
    for name in hashed:
        table = traffic_module._TABLES[name]
        rows_of = numbered if table.rows is None else numbered.filter(table.rows)
        got = traffic_module._grouped(rows_of, name, batch).collect()
        want = rows_of.group_by(table.keys).agg(table.batch).collect()
        assert got.columns == traffic_module._COLUMNS[name]
        assert got.sort(table.keys, nulls_last=True).equals(want.sort(table.keys, nulls_last=True))


def test_the_tallys_tables_pin_none_of_the_batches_they_come_from():
    # each table's part is the batch's rows grouped: kept as views, a part would keep its
    # batch's strings alive (hosts, URLs, addresses, agents), and memory grow with the logs
    host = "www.a-host-name-long-enough.example"
    tally = Tally(settings=Settings(url_sample_size=50))
    for batch in range(6):
        rows = [{**BOT, s.HOST: host, s.CLIENT: f"2001:db8:aaaa:bbbb::{batch}:{i % 7}",
                 s.URL: f"/a-long-enough-section/{batch}-{i}-page", s.TIME: T0 + timedelta(hours=batch, seconds=i)}
                for i in range(300)]
        rows += [{**HUMAN, s.HOST: host, s.CLIENT: f"2001:db8:{'aaaa:bbbb' if i < 20 else 'cccc:dddd'}::{batch}:{i % 5}",
                  s.USER_AGENT: "Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0",
                  s.URL: f"/a-long-enough-section/{batch}-{i}-page", s.TIME: T0 + timedelta(hours=batch, seconds=i)}
                 for i in range(100)]
        tally.add(add_patterns(requests_frame(rows)))
        parts = [(name, part) for name, kept in tally._parts.items() for part in kept]
        assert {name for name, part in parts if part.height} >= {
            "windows", "statuses", "agents", "bot_minutes", "claims", "claim_people", PEOPLE, "urls"}
        for name, part in parts:
            pinned, needed = pinned_string_bytes(part)
            assert pinned == needed, (name, pinned, needed)


def test_keys_and_flags_from_annotate_are_those_made_from_the_text():
    # `annotate` hands the tally each URL's and pattern's hash (made once per distinct URL
    # and pattern) and, with the analysis's agent cache, the agents' flags (made once per
    # agent); a frame annotated by the public functions has none, and the tally makes them
    # from the text. Two virtual hosts, so the host's part of each key counts too.
    from logtrap import read_logs
    from logtrap.analysis import annotate
    from logtrap.bots import AgentCache, add_bots

    requests = read_logs("sample_logs/vhost/*")
    assert requests.get_column(s.HOST).n_unique() > 1
    # and agents whose addresses are counted (an app's HTTP library, a link previewer), or
    # not (a crawler framework), which the sample has none of
    agents = ["python-requests/2.31.0", "WhatsApp/2.23.20.0", "Scrapy/2.11 (+https://scrapy.org)",
              "okhttp/4.12.0"]
    requests = pl.concat([requests, requests.slice(0, 400).with_columns(
        pl.Series(s.USER_AGENT, [agents[i % 4] for i in range(400)]))])
    settings = Settings()
    annotated = annotate(requests, settings, AgentCache(flags=traffic_module.AGENT_FLAGS))
    assert annotated.get_column("__pattern_key").equals(
        annotated.get_column(s.PATTERN).hash(0), check_names=False)
    for name, flag in traffic_module.AGENT_FLAGS.items():
        assert annotated.get_column(name).equals(
            annotated.select(flag).to_series(), check_names=False)
        assert annotated.get_column(name).sum() > 100, name
    by_text, by_hash = Tally(settings=settings), Tally(settings=settings)
    by_text.add(add_patterns(add_bots(requests), settings))
    by_hash.add(annotated)
    text_frames, hash_frames = by_text.frames(), by_hash.frames()
    assert text_frames.keys() == hash_frames.keys()
    for name, frame in text_frames.items():
        assert_frame_equal(hash_frames[name], frame, check_row_order=False)
    assert hash_frames["urls"].height > 100
    assert hash_frames["claims"].height > 10 and hash_frames["bot_clients"].height > 10


def test_tables_grouped_on_one_integer_hold_what_grouping_on_their_keys_gives():
    # Tally.add groups a batch on one integer standing for a row's keys (`_group_key`); the
    # tables must be what Polars' group-by on the keys themselves gives
    from logtrap import read_logs
    from logtrap.analysis import annotate

    settings = Settings()
    requests = annotate(read_logs("sample_logs/vhost/*"), settings)
    tally = Tally(settings=settings)
    tally.add(requests)
    frames = tally.frames()
    bots_only = requests.filter(pl.col(s.IS_BOT))
    want = {
        "statuses": requests.group_by(s.HOST, s.PATTERN, s.STATUS).agg(
            pl.len().cast(pl.Int64).alias(s.REQUESTS),
            pl.col(s.IS_BOT).sum().cast(pl.Int64).alias(s.BOT_REQUESTS)),
        "agents": bots_only.group_by(s.HOST, s.PATTERN, s.BOT_NAME, s.BOT_KIND, s.STATUS).agg(
            pl.len().cast(pl.Int64).alias(s.REQUESTS),
            pl.col(s.TIME).min().alias(s.FIRST_SEEN), pl.col(s.TIME).max().alias(s.LAST_SEEN)),
        "claims": bots_only.filter(pl.col(s.BOT_KIND) == "search")
        .group_by(s.CLIENT, s.BOT_NAME, s.HOST, s.PATTERN).agg(
            pl.len().cast(pl.Int64).alias(s.REQUESTS),
            pl.col(s.TIME).min().alias(s.FIRST_SEEN), pl.col(s.TIME).max().alias(s.LAST_SEEN)),
    }
    for name, frame in want.items():
        got = frames[name]
        assert got.height == frame.height > 10, name
        assert_frame_equal(got.sort(got.columns), frame.select(got.columns).sort(got.columns))
    # the URL sample (under its size here) keeps every URL and answer
    urls = frames["urls"]
    reads = requests.filter(pl.col(s.METHOD).is_in(["GET", "HEAD"]) | pl.col(s.METHOD).is_null())
    assert urls.height == reads.select(s.HOST, s.URL, s.STATUS, s.BYTES).n_unique()
    assert urls[s.REQUESTS].sum() == reads.height


def test_parts_merged_on_one_integer_are_those_merged_on_their_keys():
    # a table's parts (a batch's rows each) are merged on one integer standing for their keys
    # (`_merge_rows`), as batches are grouped: the same as Polars' group-by on the keys
    from logtrap import read_logs
    from logtrap.analysis import annotate

    settings = Settings()
    requests = annotate(read_logs("sample_logs/vhost/*"), settings)
    tally = Tally(settings=settings)
    for start in range(0, requests.height, 700):
        tally.add(requests.slice(start, 700))
    merged = 0
    for name, parts in tally._parts.items():
        table = traffic_module._TABLES[name]
        if name in ("urls", PEOPLE) or len(parts) < 2:  # merged on their URLs' hashes
            continue
        rows = pl.concat(parts, how="vertical_relaxed")
        got = traffic_module._merge_rows(rows.lazy(), table).collect()
        want = rows.group_by(table.keys).agg(table.merge)
        assert got.columns == want.columns
        assert got.height == want.height, name
        assert_frame_equal(got.sort(table.keys, nulls_last=True), want.sort(table.keys, nulls_last=True))
        merged += got.height < rows.height  # parts that share keys
    assert merged >= 4
    # and the URL sample's (under its size here: every URL and answer kept)
    table = traffic_module._TABLES["urls"]
    rows = pl.concat(tally._parts["urls"], how="vertical_relaxed")
    got = tally._merged("urls")
    want = rows.group_by(table.keys).agg(table.merge).select(got.columns)
    assert got.height == want.height < rows.height
    assert_frame_equal(got.sort(table.keys, nulls_last=True), want.sort(table.keys, nulls_last=True))


@hsettings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["a", "b"]), st.sampled_from(["/p/{n}", "/q/{n}"]),
                          st.integers(1, 4), st.integers(0, 6)), max_size=40),
       st.integers(1, 4))
def test_the_pages_people_read_keep_each_patterns_k_most_read_and_k_of_the_highest_bound(pages, k):
    # per host+pattern: the k pages of most reads and the k of the highest bound on them, ties
    # to the smallest hashes (`_people_sample`), by the definition, sorted in Python
    rows = [{s.HOST: host, s.PATTERN: pattern, s.URL: pattern.replace("{n}", str(i)),
             s.HUMAN_REQUESTS: reads, READS: reads + extra}
            for i, (host, pattern, reads, extra) in enumerate(pages)]
    frame = pl.DataFrame(rows, schema={s.HOST: pl.String, s.PATTERN: pl.String, s.URL: pl.String,
                                       s.HUMAN_REQUESTS: pl.Int64, READS: pl.Int64})
    frame = frame.with_columns(traffic_module._URL_KEY.alias(s.URL_HASH))
    got = traffic_module._people_sample(frame.lazy(), Tally(settings=Settings(url_sample_size=k))).collect()
    want = set()
    for key in {(r[s.HOST], r[s.PATTERN]) for r in frame.iter_rows(named=True)}:
        mine = [r for r in frame.iter_rows(named=True) if (r[s.HOST], r[s.PATTERN]) == key]
        for column in (s.HUMAN_REQUESTS, READS):
            want |= {r[s.URL_HASH] for r in sorted(mine, key=lambda r: (-r[column], r[s.URL_HASH]))[:k]}
    assert sorted(got[s.URL_HASH].to_list()) == sorted(want)
    assert got.columns == frame.columns


def test_people_with_no_address_are_no_claimers_people():
    # claim_people matches the addresses of a batch's search-engine claims by their hashes;
    # a request with no address has none to match, as a claim with none has none to give
    rows = [{**BOT, s.CLIENT: None, s.URL: "/a"}, {**BOT, s.CLIENT: "66.249.66.1", s.URL: "/a"},
            {**HUMAN, s.CLIENT: None, s.URL: "/b"}, {**HUMAN, s.CLIENT: "66.249.66.1", s.URL: "/b"},
            {**HUMAN, s.CLIENT: "66.249.66.1", s.URL: "/c"}, {**HUMAN, s.CLIENT: "10.0.0.9", s.URL: "/b"}]
    tally = Tally()
    tally.add(add_patterns(requests_frame(rows)))
    people = tally.frames()["claim_people"]
    assert people.select(s.CLIENT, s.HUMAN_REQUESTS).rows() == [("66.249.66.1", 2)]

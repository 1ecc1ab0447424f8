"""budget_hog, growing_pattern, aggressive_bot, fake_bot: each fires on its trap with exact
numbers, stays silent on real content, and returns the empty shape on no traffic.

Traffic is built the way the pipeline builds it (request rows -> `patterns.add_patterns` ->
`Tally.add` -> `finish`, via tests/builders.py). Each row also names the pattern the test
expects, and `traffic_of` checks patterns.py agrees, so a change there shows up here by name.
"""

from __future__ import annotations

import gc
import json
import random
import re
from datetime import datetime, timedelta, timezone

import polars as pl
import pytest

from logtrap import schema as s
from logtrap import server_rules
from logtrap.bots import NOT_LOGGED_NAME
from logtrap.detectors import _shape, aggressive_bot, budget_hog, fake_bot, growing_pattern, relative_loop
from logtrap.findings import empty_findings
from logtrap.settings import Settings
from logtrap.traffic import Tally, Traffic
from builders import requests_frame
from builders import traffic_of as build_traffic

T0 = datetime(2026, 3, 2, tzinfo=timezone.utc)
GOOGLE = ("Googlebot", "search")
BING = ("bingbot", "search")
META = ("meta-externalagent", "ai")
AHREFS = ("AhrefsBot", "seo")


def req(
    url: str,
    pattern: str,
    *,
    at: datetime = T0,
    bot: tuple[str, str] | None = GOOGLE,
    status: int = 200,
    size: int = 1000,
    client: str = "66.249.66.1",
    host: str = "-",
) -> dict:
    """One request row: REQUEST_SCHEMA + bot columns, and the pattern the test expects."""
    path = url.split("?")[0]
    return {
        s.HOST: host,
        s.CLIENT: client if bot else "203.0.113.9",
        s.TIME: at,
        s.METHOD: "GET",
        s.URL: url,
        s.PATH: path,
        s.QUERY: url.split("?", 1)[1] if "?" in url else None,
        s.PROTOCOL: "HTTP/1.1",
        s.STATUS: status,
        s.BYTES: size,
        s.REFERER: None,
        s.USER_AGENT: bot[0] if bot else "Mozilla/5.0 Firefox/130.0",
        s.REQUEST_TIME: None,
        s.SOURCE: "test.log",
        s.IS_BOT: bot is not None,
        s.BOT_NAME: bot[0] if bot else None,
        s.BOT_KIND: bot[1] if bot else None,
        s.PATTERN: pattern,
    }


def traffic_of(rows: list[dict]) -> Traffic:
    traffic = build_traffic(requests_frame([{k: v for k, v in r.items() if k != s.PATTERN} for r in rows]))
    expected = pl.DataFrame({s.URL: [r[s.URL] for r in rows], s.PATTERN: [r[s.PATTERN] for r in rows]})
    computed = traffic.urls.select(s.URL, s.PATTERN).unique()
    assert computed.join(expected, on=s.URL).filter(pl.col(s.PATTERN) != pl.col("pattern_right")).height == 0
    return traffic


def evidence(findings: pl.DataFrame, i: int = 0) -> dict:
    return json.loads(findings[s.EVIDENCE][i])


def articles(n: int, *, at: datetime = T0, bot=GOOGLE) -> list[dict]:
    """n distinct articles, each its own size (real content)."""
    return [
        req(f"/article/{i}/post-about-{i}", "/article/{n}/{slug}", at=at + timedelta(seconds=i),
            bot=bot, size=4000 + 37 * i)
        for i in range(n)
    ]


EMPTY = Tally().finish()
DETECTORS = [budget_hog, growing_pattern, aggressive_bot, fake_bot]


@pytest.mark.parametrize("module", DETECTORS, ids=lambda m: m.KIND)
def test_empty_traffic_gives_the_empty_shape(module):
    out = module.detect(EMPTY, Settings())
    assert out.schema == empty_findings().schema
    assert out.height == 0


# -- budget_hog -----------------------------------------------------------------------------


def session_hog() -> list[dict]:
    """600 copies of the home page with session ids (one size) beside 100 real articles."""
    copies = [
        req(f"/?sid={i:08x}", "/?sid", at=T0 + timedelta(seconds=i), size=5120)
        for i in range(600)
    ]
    return copies + articles(100)


def test_budget_hog_fires_on_a_pattern_eating_the_budget():
    out = budget_hog.detect(traffic_of(session_hog()), Settings())
    assert out.select(s.KIND, s.SEVERITY, s.HOST, s.PATTERN, s.REQUESTS, s.WASTED_REQUESTS).rows() == [
        ("budget_hog", "critical", "-", "/?sid", 600, 600)
    ]
    assert evidence(out) == {
        "bot_share": 0.8571,
        "bot_requests": 600,
        "host_bot_requests": 700,
        "human_requests": 0,
        "human_share": 0.0,
        "unique_urls": 600,
        "sampled_ok_urls": 600,
        "distinct_ok_sizes": 1,
        "urls_per_size": 600.0,
        "shell_urls": 0,
        "error_share": 0.0,
        "wasteful_because": ["repeated_answers"],
    }
    examples = out[s.EXAMPLES][0].to_list()
    assert len(examples) == 5 and all(u.startswith("/?sid=") for u in examples)


def test_budget_hog_failing_answers_and_bot_only_signals():
    # a soft-404-ish route answered 404 and never visited by people who do use the site
    missing = [
        req(f"/old/{i}", "/old/{n}", at=T0 + timedelta(seconds=i), status=404, size=300 + i)
        for i in range(300)
    ]
    people = [req("/", "/", bot=None, size=9000)] * 100 + articles(50, bot=None)
    out = budget_hog.detect(traffic_of(missing + articles(100) + people), Settings())
    assert out[s.PATTERN].to_list() == ["/old/{n}"]
    assert out[s.SEVERITY].to_list() == ["warning"]
    # not bots_only as well: no URL of it answers 200, so there is no page for people to read
    assert evidence(out)["wasteful_because"] == ["failing_answers"]
    assert evidence(out)["error_share"] == 1.0


def test_budget_hog_silent_on_a_moved_sites_old_urls():
    # the old URLs of a migration answer 301, fetched by crawlers only and most of the crawl:
    # following them is what crawlers should do, and a Disallow would stop it
    moved = [req(f"/index.php?id={i}", "/index.php?id", at=T0 + timedelta(seconds=i), status=301,
                 size=0) for i in range(300)]
    people = [req("/", "/", bot=None, size=9000)] * 100 + articles(50, bot=None)
    assert budget_hog.detect(traffic_of(moved + articles(100) + people), Settings()).height == 0
    temporary = [{**r, s.STATUS: 302} for r in moved]  # a login wall's redirects: failing
    out = budget_hog.detect(traffic_of(temporary + articles(100) + people), Settings())
    assert evidence(out)["wasteful_because"] == ["failing_answers"]


def test_budget_hog_silent_when_bots_mostly_fetch_real_articles():
    # a blog: 500 articles take 91% of the bot fetches, but each is its own page, answered 200,
    # and read by people too
    people = [req(f"/article/{i}/post-about-{i}", "/article/{n}/{slug}", bot=None, size=4000 + 37 * i)
              for i in range(200)]
    home = [req("/", "/", size=9000, at=T0 + timedelta(minutes=i)) for i in range(50)]
    traffic = traffic_of(articles(500) + home + people)
    assert traffic.patterns.filter(pl.col(s.PATTERN) == "/article/{n}/{slug}")[s.BOT_SHARE].item() > 0.9
    assert budget_hog.detect(traffic, Settings()).height == 0


def test_budget_hog_bots_only_is_no_waste_where_each_url_is_a_page_of_its_own():
    # a B2B catalog (or an image library an image bot crawls): bots fetch 600 products, each
    # its own page; people use the site but opened 2 of them (0.3%)
    def catalog(size) -> list[dict]:
        rows = [req(f"/product/{i}", "/product/{n}", at=T0 + timedelta(seconds=i), size=size(i))
                for i in range(600)]
        rows += [req("/product/1", "/product/{n}", bot=None, size=size(1))] * 2
        return rows + articles(100) + [req("/", "/", bot=None, size=9000)] * 150

    assert budget_hog.detect(traffic_of(catalog(lambda i: 6000 + 7 * i)), Settings()).height == 0
    # the same URLs answering one of 3 pages: bots only there is waste
    out = budget_hog.detect(traffic_of(catalog(lambda i: 6000 + i % 3)), Settings())
    assert evidence(out)["wasteful_because"] == ["repeated_answers", "bots_only"]
    # answers nearly all distinct, 1.2 URLs per size (100 pages answered twice): not each a
    # page of its own
    out = budget_hog.detect(traffic_of(catalog(lambda i: 6000 + 37 * (i % 500))), Settings())
    assert (evidence(out)["urls_per_size"], evidence(out)["wasteful_because"]) == (1.2, ["bots_only"])
    # sizes 7 bytes apart on average, so two or three products share a size by chance, as
    # many as on the sizes beside it: pages apiece, not one page answered twice
    dense = [6000 + (i * 2654435761 % 600) // 7 for i in range(600)]
    assert len(set(dense)) < 100  # about 7 URLs per distinct size
    assert budget_hog.detect(traffic_of(catalog(lambda i: dense[i])), Settings()).height == 0


SHELL = 2345  # a single-page app's index.html: every route answers with it


def single_page_app(shell_routes: bool) -> list[dict]:
    """Bots fetch 600 products (86% of their fetches) and 100 articles; people read products,
    categories and the home page. With `shell_routes`, every page answers the app's shell."""
    def size(real: int) -> int:
        return SHELL if shell_routes else real

    rows = [req(f"/product/{i}", "/product/{n}", at=T0 + timedelta(seconds=i), size=size(6000 + i))
            for i in range(600)]
    rows += [req(f"/blog/{i}/a-story-about-{i}", "/blog/{n}/{slug}", size=size(9000 + i))
             for i in range(100)]
    rows += [req(f"/product/{i}", "/product/{n}", bot=None, size=size(6000 + i)) for i in range(300)]
    rows += [req(f"/category/{c}", f"/category/{c}", bot=None, size=size(3000 + len(c)))
             for c in ("shoes", "hats")]
    rows += [req("/", "/", bot=None, size=size(7000))] * 50
    rows += [req("/static/js/main.js", "/static/js/main.js", bot=None, size=250000)] * 50
    return rows


def test_budget_hog_silent_on_a_single_page_app_whose_pages_share_one_size():
    # one size for 600 product URLs is the app's shell (also the size of the home page and the
    # categories people read), not one page behind many URLs
    traffic = traffic_of(single_page_app(shell_routes=True))
    assert _shape.shell_sizes(traffic, Settings()).rows() == [("-", SHELL)]
    assert budget_hog.detect(traffic, Settings()).height == 0


def test_budget_hog_silent_on_app_routes_people_read_whose_shell_is_no_shell_site_wide():
    # the products answer the app's shell, the home page and categories are rendered on the
    # server: no size is shared by three patterns, and the products, people's a third of their
    # requests, were called waste ("disallow the pattern"; a scenario review of a recipe site)
    rendered = ("/", "/category/shoes", "/category/hats")
    rows = [r for r in single_page_app(shell_routes=True) if r[s.PATTERN] not in rendered]
    rows += [req(u, u, bot=None, size=7000 + len(u)) for u in rendered] * 20
    traffic = traffic_of(rows)
    assert _shape.shell_sizes(traffic, Settings()).height == 0
    assert budget_hog.detect(traffic, Settings()).height == 0
    # the same products, people's a tenth of their requests: one page behind many URLs
    few = [r for r in rows if not (r[s.PATTERN] == "/product/{n}" and r[s.IS_BOT] is False)]
    few += [req(f"/product/{i}", "/product/{n}", bot=None, size=SHELL) for i in range(60)]
    ev = evidence(budget_hog.detect(traffic_of(few), Settings()))
    assert (ev["human_share"], ev["wasteful_because"]) == (0.0909, ["repeated_answers"])


def test_the_shell_is_found_once_per_url_sample_and_let_go_with_it():
    traffic = traffic_of(single_page_app(shell_routes=True))
    first = _shape.shell_sizes(traffic, Settings())
    assert _shape.shell_sizes(traffic, Settings()) is first  # the eight detectors share it
    assert _shape.shell_sizes(traffic, Settings(shell_min_patterns=9)).height == 0
    key = ("shell", 3, id(traffic.urls))
    assert key in _shape._MEMO
    del traffic, first
    gc.collect()
    assert key not in _shape._MEMO


def test_tables_the_detectors_share_are_made_once_and_let_go_with_their_frames():
    traffic = traffic_of(single_page_app(shell_routes=True))
    assert _shape.per_url(traffic.urls) is _shape.per_url(traffic.urls)
    assert _shape.pattern_totals(traffic) is _shape.pattern_totals(traffic)
    # another URL sample beside the same patterns: totals made again, from it
    fewer = traffic.replace(urls=traffic.urls.head(0))
    assert _shape.pattern_totals(fewer)[_shape.SAMPLED_BOT_REQUESTS].sum() == 0
    assert _shape.pattern_totals(traffic)[_shape.SAMPLED_BOT_REQUESTS].sum() > 0
    keys = [("per_url", id(traffic.urls)), ("totals", id(traffic.patterns), id(fewer.urls))]
    assert all(key in _shape._MEMO for key in keys)
    del fewer
    gc.collect()  # the empty sample is gone: its totals too, the full sample's stay
    assert [key in _shape._MEMO for key in keys] == [True, False]


def test_the_shell_is_no_shell_on_a_classic_site():
    # the same site rendering each page: no size is shared by three patterns people read
    traffic = traffic_of(single_page_app(shell_routes=False))
    assert _shape.shell_sizes(traffic, Settings()).height == 0
    assert budget_hog.detect(traffic, Settings()).height == 0  # distinct sizes: content


def test_budget_hog_silent_on_one_url_polled_over_and_over():
    # an uptime monitor's HEAD /health every minute for a week, on a site people use and
    # crawlers barely visit: 82% of the "bot budget", bots only; it was a critical budget_hog
    # advising a Disallow the monitor never reads. A trap is a URL space, not one URL.
    monitor = ("UptimeRobot", "monitoring")
    polls = [req("/health", "/health", at=T0 + timedelta(minutes=i), bot=monitor, size=2)
             for i in range(1000)]
    people = [req("/", "/", bot=None, size=9000)] * 100 + articles(50, bot=None)
    traffic = traffic_of(polls + articles(100) + people)
    assert budget_hog.detect(traffic, Settings()).height == 0
    # ten URLs a crawler fetches so make a URL space, judged as before (one answer: repeated);
    # a monitor's are its checks, whatever their number (`_shape.monitored`)
    spread = [req(f"/health?n={i % 10}", "/health?n", at=T0 + timedelta(minutes=i), size=2)
              for i in range(1000)]
    out = budget_hog.detect(traffic_of(spread + articles(100) + people), Settings())
    assert (out[s.PATTERN].to_list(), evidence(out)["wasteful_because"]) == (
        ["/health?n"], ["repeated_answers", "bots_only"])


def test_budget_hog_silent_on_tiny_logs():
    out = budget_hog.detect(traffic_of(session_hog()[:150]), Settings())
    assert out.height == 0


# -- growing_pattern ------------------------------------------------------------------------


def calendar_growth(days: int = 7) -> list[dict]:
    """40 new calendar months a day, each fetched once; 100 articles found on day 1 and
    re-fetched every day after (real content converges)."""
    rows = []
    for day in range(days):
        at = T0 + timedelta(days=day)
        rows += [
            req(f"/calendar?date={2000 + day}-{m:02d}-{k}", "/calendar?date",
                at=at + timedelta(minutes=m), size=2000)
            for m in range(1, 11) for k in range(4)
        ]
        rows += articles(100, at=at)
    return rows


def test_growing_pattern_fires_on_a_url_space_that_never_converges():
    traffic = traffic_of(calendar_growth())
    assert traffic.window_size == "1d"
    out = growing_pattern.detect(traffic, Settings())
    assert out.select(s.KIND, s.SEVERITY, s.PATTERN, s.REQUESTS, s.WASTED_REQUESTS).rows() == [
        # every month the same empty page: all but one fetch of it fetched nothing new
        ("growing_pattern", "warning", "/calendar?date", 280, 279)
    ]
    assert evidence(out) == {
        "window_size": "1d",
        "new_urls_per_window": [40, 40, 40, 40, 40, 40],  # day 7: 10 minutes of log, left out
        "unique_urls": 280,
        "early_new_urls_per_window": 40.0,
        "late_new_urls_per_window": 40.0,
        "late_new_urls": 120,
        "late_requests": 120,
        "novelty": 1.0,
        "sampled_ok_urls": 280,
        "distinct_sizes": 1,  # every month the same empty page
        "urls_per_size": 280.0,
        "shell_urls": 0,
        "human_requests": 0,
    }
    assert out[s.EXAMPLES][0].to_list()[0].startswith("/calendar?date=2006-")


def test_growing_pattern_silent_when_only_people_fetch_the_growth():
    # people arriving with new ad click ids every day: the same landing page, no crawl wasted
    # (it was a warning with "0 of 170 requests wasted", exit 3 on any site with ads)
    people = [{**r, s.IS_BOT: False, s.BOT_NAME: None, s.BOT_KIND: None,
               s.USER_AGENT: "Mozilla/5.0 Firefox/130.0", s.CLIENT: "203.0.113.9"}
              for r in calendar_growth() if r[s.PATTERN] == "/calendar?date"]
    bots = [r for r in calendar_growth() if r[s.PATTERN] != "/calendar?date"]
    assert growing_pattern.detect(traffic_of(people + bots), Settings()).height == 0
    # a sliver of the crawl is still a warning: one trap split over many patterns (filters in
    # every order) is a sliver in each
    out = growing_pattern.detect(traffic_of(calendar_growth()), Settings(trap_warning_share=0.3))
    assert out.select(s.SEVERITY, s.WASTED_REQUESTS).rows() == [("warning", 279)]


def test_growing_pattern_on_urls_that_answer_404_or_301_is_info():
    # a forum's deleted topics, new ones every day, all answering 404: the site already does
    # what the advice asks, and a warning made every cron run exit 3
    gone = [{**r, s.STATUS: 404} if r[s.PATTERN] == "/calendar?date" else r for r in calendar_growth()]
    out = growing_pattern.detect(traffic_of(gone), Settings())
    assert out.select(s.SEVERITY, s.PATTERN).rows() == [("info", "/calendar?date")]
    # a retired host's old URLs, each answering 301 to the new one, found bit by bit: crawlers
    # follow them (it was a warning, exit 3, on a CDN's retired m. host); a 302 stays one
    # (its robots.txt and favicon still answer 200)
    housekeeping = [req(u, u, size=300) for u in ("/robots.txt", "/favicon.ico")] * 100
    for status, severity in ((301, "info"), (308, "info"), (302, "warning")):
        moved = [{**r, s.STATUS: status} for r in calendar_growth()] + housekeeping
        out = growing_pattern.detect(traffic_of(moved), Settings())
        assert out.select(s.SEVERITY, s.PATTERN).rows() == [(severity, "/calendar?date")]
    # on a host whose pages answer 200, URLs answering 301 are a template appending
    # `?ts=<time>` to its links and the site redirecting them back: a trap
    redirected = [{**r, s.STATUS: 301} if r[s.PATTERN] == "/calendar?date" else r
                  for r in calendar_growth()]
    out = growing_pattern.detect(traffic_of(redirected), Settings())
    assert out.select(s.SEVERITY).rows() == [("warning",)]


def test_growing_pattern_on_a_polling_api_people_call_is_info():
    # a live page polls /api/live/{n}/updates?since=<time> from people's browsers; crawlers
    # rendering the page call it too: a growth, and the site's own working part (a warning
    # made every cron run of a news site exit 3, and its Disallow would break rendering)
    polls = []
    for day in range(7):
        for m in range(40):
            at = T0 + timedelta(days=day, minutes=m)
            url = f"/api/live/7/updates?since={int(at.timestamp())}"
            polls.append(req(url, "/api/live/{n}/updates?since", at=at, size=2,
                             bot=None if m % 5 else GOOGLE))  # people 4 in 5
    rows = polls + [r for r in calendar_growth() if r[s.PATTERN] != "/calendar?date"]
    out = growing_pattern.detect(traffic_of(rows), Settings())
    assert out.select(s.SEVERITY, s.PATTERN, s.WASTED_REQUESTS).rows() == [
        ("info", "/api/live/{n}/updates?since", 55)]
    assert evidence(out)["human_requests"] == 224
    # crawlers alone: a warning, as before
    crawled = [{**r, s.IS_BOT: True, s.BOT_NAME: GOOGLE[0], s.BOT_KIND: GOOGLE[1],
                s.CLIENT: "66.249.66.1"} for r in polls]
    out = growing_pattern.detect(traffic_of(crawled + rows[len(polls):]), Settings())
    assert out.select(s.SEVERITY).rows() == [("warning",)]


def test_growing_pattern_min_new_urls_is_counted_over_the_windows_compared():
    # 40 new URLs on each of the last three full days (day 7, a partial window, is left out of
    # the comparison, and so out of the count): 120 is enough for a threshold of 120, not 121
    traffic = traffic_of(calendar_growth())
    fires = [
        growing_pattern.detect(traffic, Settings(growing_pattern_min_new_urls=n)).height
        for n in (120, 121)
    ]
    assert fires == [1, 0]


def deeper_each_day(segment) -> list[dict]:
    """Two deeper patterns a day: `/x/<segment(1)>`, `/x/<segment(1)>/<segment(2)>`, ..."""
    rows = articles(50)
    for day in range(8):
        for depth in (2 * day + 1, 2 * day + 2):
            path = "/x" + "".join(f"/{segment(k)}" for k in range(depth))
            rows += [req(path, path, at=T0 + timedelta(days=day, minutes=depth))]
    return rows


def test_growing_pattern_host_level_when_patterns_keep_appearing():
    # links nesting one level deeper per visit, a new name at each level
    out = growing_pattern.detect(traffic_of(deeper_each_day(lambda k: f"level{k}")), Settings())
    host = out.filter(pl.col(s.PATTERN).is_null())
    # requests to the 8 patterns born from day 5 on (day 8, barely logged, is no window)
    assert host.select(s.REQUESTS, s.WASTED_REQUESTS).rows() == [(8, 8)]
    ev = evidence(host)
    assert ev["new_patterns_per_window"] == [3, 2, 2, 2, 2, 2, 2]
    assert ev["late_new_patterns"] == 6
    assert ev["patterns"] == 17
    # the same page at every depth
    assert (ev["sampled_ok_urls"], ev["distinct_sizes"], ev["urls_per_size"]) == (8, 1, 8.0)
    assert out.filter(pl.col(s.PATTERN).is_not_null()).height == 0  # one URL each: too few


def test_growing_pattern_leaves_a_relative_loop_to_its_own_finding():
    # /x/related/related/...: relative_loop names it (16 depths), a host-level
    # growing_pattern over the same patterns was the same trap twice
    rows = deeper_each_day(lambda k: "related")
    assert relative_loop.detect(traffic_of(rows), Settings()).height == 1
    assert growing_pattern.detect(traffic_of(rows), Settings()).height == 0


def test_growing_pattern_silent_on_content_fetched_again_and_again():
    # a live blog: 300 articles crawled over and over, one new post a day
    rows = []
    for day in range(7):
        rows += articles(300 + day, at=T0 + timedelta(days=day))
    traffic = traffic_of(rows)
    growth = traffic.windows.filter(pl.col(s.PATTERN) == "/article/{n}/{slug}")[s.NEW_URLS]
    assert growth.to_list() == [300, 1, 1, 1, 1, 1, 1]
    assert growing_pattern.detect(traffic, Settings()).height == 0


def test_growing_pattern_silent_on_a_catalog_crawled_once_then_revisited():
    # 2,000 product pages discovered over the first two days, then only revisited
    rows = []
    for day in range(6):
        ids = range(day * 1000, day * 1000 + 1000) if day < 2 else range(0, 2000, 3)
        rows += [req(f"/p/{i}", "/p/{n}", at=T0 + timedelta(days=day, seconds=i % 3600),
                     size=3000 + i) for i in ids]
    assert growing_pattern.detect(traffic_of(rows), Settings()).height == 0


def catalog_first_crawl(sizes: int) -> list[dict]:
    """A catalog of 700 products crawled for the first time, 100 new ones a day spread over
    the day, each fetched once; the pages take `sizes` distinct response sizes in turn, 37
    bytes apart (a size two URLs share then stands out: one page, not a chance collision)."""
    return [
        req(f"/p/{i}", "/p/{n}", at=T0 + timedelta(days=i // 100, seconds=864 * (i % 100)),
            size=3000 + 37 * (i % sizes))
        for i in range(700)
    ]


def test_growing_pattern_silent_on_a_catalog_crawled_for_the_first_time():
    # it grows like a trap (new URLs every day, each fetched once), but each page has a size
    # of its own: URLs growing with new content are not a trap
    traffic = traffic_of(catalog_first_crawl(sizes=700))  # a size per product
    growth = traffic.windows.filter(pl.col(s.PATTERN) == "/p/{n}")[s.NEW_URLS]
    assert growth.to_list() == [100] * 7
    assert growing_pattern.detect(traffic, Settings()).height == 0


def test_growing_pattern_fires_when_the_repeated_page_carries_a_token():
    # 700 URLs of one empty page whose size a CSRF token spreads over 13 bytes, compressed
    rows = [{**r, s.BYTES: 3000 + (i * 7 % 13)} for i, r in enumerate(catalog_first_crawl(700))]
    out = growing_pattern.detect(traffic_of(rows), Settings())
    assert (evidence(out)["distinct_sizes"], evidence(out)["urls_per_size"]) == (1, 700.0)


def test_growing_pattern_silent_on_a_catalog_whose_page_sizes_are_close():
    # templated product pages within 400 bytes of each other: 700 products take about 330
    # sizes, two or three to a size by chance, as many on the sizes beside each (the old
    # count, 2.1 URLs per size, called that repeated content)
    rng = random.Random(7)
    rows = [{**r, s.BYTES: 16300 + rng.randrange(400)} for r in catalog_first_crawl(700)]
    assert 300 < len({r[s.BYTES] for r in rows}) < 350
    traffic = traffic_of(rows)
    assert growing_pattern.detect(traffic, Settings()).height == 0
    assert budget_hog.detect(traffic, Settings()).height == 0


COLORS = ("red", "blue", "green", "black", "white", "grey", "navy", "beige", "pink", "gold")
ITEMS = ("shirt", "hat", "coat", "scarf", "sock", "glove", "boot", "belt", "bag", "tie",
         "vest", "cap", "dress", "skirt")


def test_growing_pattern_silent_on_a_catalog_whose_products_are_patterns_of_their_own():
    # a two-word handle at the first level (/blue-shirt) is a pattern of its own: 20 new
    # patterns a day while the catalog is first crawled, each product page its own size
    handles = [f"{c}-{i}" for c in COLORS for i in ITEMS]
    rows = articles(50)
    rows += [
        req(f"/{h}", f"/{h}",
            at=T0 + timedelta(days=k // 20, seconds=4000 * (k % 20)), size=5000 + 7 * k)
        for k, h in enumerate(handles)
    ]
    traffic = traffic_of(rows)
    assert traffic.patterns.height == 141
    assert growing_pattern.detect(traffic, Settings()).height == 0


def test_product_handles_below_the_first_level_are_one_pattern():
    # the same 140 handles under /products/: one template, its URLs found 20 a day, each page
    # its own size (a catalog, not a trap)
    handles = [f"{c}-{i}" for c in COLORS for i in ITEMS]
    rows = articles(50)
    rows += [
        req(f"/products/{h}", "/products/{name}",
            at=T0 + timedelta(days=k // 20, seconds=4000 * (k % 20)), size=5000 + 7 * k)
        for k, h in enumerate(handles)
    ]
    traffic = traffic_of(rows)
    products = traffic.patterns.filter(pl.col(s.PATTERN) == "/products/{name}")
    assert products.select(s.REQUESTS, s.UNIQUE_URLS, s.SECTION).row(0) == (140, 140, "/products/{name}")
    assert traffic.patterns.height == 2
    assert traffic.windows.filter(pl.col(s.PATTERN) == "/products/{name}")[s.NEW_URLS].to_list() == [20] * 7
    assert growing_pattern.detect(traffic, Settings()).height == 0


def test_growing_pattern_silent_on_a_single_page_app_catalog_crawled_for_the_first_time():
    # every product answers the app's shell, as do the pages people read: one size for all
    # says nothing about the products, so their growth is no evidence of a trap
    people = [req(u, p, bot=None, size=SHELL) for u, p in (("/", "/"), ("/category/shoes",
              "/category/shoes"), ("/category/hats", "/category/hats"), ("/p/3", "/p/{n}"))]
    catalog = [{**r, s.BYTES: SHELL} for r in catalog_first_crawl(sizes=700)]
    traffic = traffic_of(catalog + people * 10)
    assert growing_pattern.detect(traffic, Settings()).height == 0
    # without people's pages to show the shell, the one size is a repeated page
    out = growing_pattern.detect(traffic_of(catalog), Settings())
    assert evidence(out)["urls_per_size"] == 700.0


def test_growing_pattern_silent_on_a_large_catalog_whose_sizes_collide_by_chance():
    # 70,000 products crawled for the first time, 10,000 a day: real pages of one template,
    # their sizes spread over ~8,000 byte values, so the whole pattern has ~7 URLs per size by
    # chance alone; the 1,000 sampled URLs have nearly a size each, as real content does
    import random

    rng = random.Random(7)
    catalog = [
        req(f"/p/{i}", "/p/{n}", at=T0 + timedelta(days=i // 10_000, seconds=8 * (i % 10_000)),
            size=int(rng.gauss(30_000, 2_000)))
        for i in range(70_000)
    ]
    traffic = traffic_of(catalog)
    per_size = traffic.urls.group_by(s.BYTES).len()["len"]
    assert per_size.len() < 1000 and (per_size > 1).sum() > 0  # the sample shares a few sizes
    assert growing_pattern.detect(traffic, Settings()).height == 0


def test_growing_pattern_silent_on_a_catalog_revalidated_with_304():
    # the crawler fetched the catalog before these logs began and now revalidates it, 100
    # products a day: every answer is 304 Not Modified, no body. URLs new to the log every
    # day, no 200 among them; but a 304 says the page exists and has not changed: content
    catalog = [{**r, s.STATUS: 304, s.BYTES: 0} for r in catalog_first_crawl(sizes=700)]
    assert growing_pattern.detect(traffic_of(catalog), Settings()).height == 0
    # redirects instead (a short link minted per view): no content behind the growth
    minted = [{**r, s.STATUS: 302, s.BYTES: 0} for r in catalog_first_crawl(sizes=700)]
    out = growing_pattern.detect(traffic_of(minted), Settings())
    assert out.select(s.PATTERN, s.WASTED_REQUESTS).rows() == [("/p/{n}", 700)]


def test_growing_pattern_fires_when_the_growing_urls_repeat_their_content():
    # the same growth, the pages' sizes repeating: two URLs per size, one above the threshold
    out = growing_pattern.detect(traffic_of(catalog_first_crawl(sizes=350)), Settings())
    assert out.select(s.PATTERN, s.WASTED_REQUESTS).rows() == [("/p/{n}", 350)]  # one per pair
    ev = evidence(out)
    assert (ev["sampled_ok_urls"], ev["distinct_sizes"], ev["urls_per_size"]) == (700, 350, 2.0)
    assert ev["new_urls_per_window"] == [100] * 7


# -- aggressive_bot -------------------------------------------------------------------------


def meta_hammering() -> list[dict]:
    """meta-externalagent: 600 requests in 10 minutes on /asl/ and /psl/; Googlebot, bingbot
    and AhrefsBot at a gentle pace across the site."""
    rows = []
    for i in range(600):
        route = "asl" if i % 3 else "psl"
        rows.append(req(f"/{route}/{i}", f"/{route}/{{n}}", bot=META, client="57.141.0.9",
                        at=T0 + timedelta(seconds=i)))
    for i in range(300):
        rows.append(req(f"/article/{i}/post-about-{i}", "/article/{n}/{slug}",
                        at=T0 + timedelta(seconds=12 * i), size=4000 + i))
    for i in range(100):
        rows.append(req(f"/article/{i}/post-about-{i}", "/article/{n}/{slug}", bot=BING,
                        client="40.77.167.1", at=T0 + timedelta(seconds=30 * i), size=4000 + i))
    for i in range(50):
        rows.append(req(f"/section/{i}", "/section/{n}", bot=AHREFS, client="54.36.148.1",
                        at=T0 + timedelta(seconds=60 * i)))
    return rows


def test_aggressive_bot_fires_on_a_bot_hammering_a_few_routes():
    out = aggressive_bot.detect(traffic_of(meta_hammering()), Settings())
    assert out.select(s.KIND, s.SEVERITY, s.PATTERN, s.REQUESTS, s.WASTED_REQUESTS).rows() == [
        ("aggressive_bot", "critical", "/asl/{n}", 600, 600)
    ]
    assert evidence(out) == {
        "bot_name": "meta-externalagent",
        "bot_kind": "ai",
        "requests": 600,
        "host_bot_requests": 1050,
        "share": 0.5714,
        "peak_per_minute": 60,
        "median_other_peak_per_minute": 2.0,
        "peak_ratio": 30.0,
        "routes": ["/asl/", "/psl/"],
        "route_requests": 600,
        "route_share": 1.0,
        "patterns": ["/asl/{n}", "/psl/{n}"],
        "addresses": None,  # counted for HTTP libraries, unnamed agents and link previewers
    }
    assert all(u.startswith("/asl/") for u in out[s.EXAMPLES][0].to_list())


def test_aggressive_bot_names_and_shows_its_routes_not_its_most_fetched_page_elsewhere():
    # meta-externalagent on a relative-link loop under /docs/: a pattern per URL, each fetched
    # once, and 60 fetches of the home page besides: its most fetched pattern is "/", off the
    # route its rule takes; the finding names the loop's patterns and shows their URLs
    names = ("api", "css", "img")
    loop = [f"/docs/{a}/{b}/{c}/" for a in names for b in names for c in names] * 20
    rows = [r for r in meta_hammering() if r[s.BOT_NAME] != META[0]]
    rows += [req(url, url, bot=META, client="57.141.0.9", at=T0 + timedelta(seconds=i))
             for i, url in enumerate(loop[:540])]
    rows += [req("/", "/", bot=META, client="57.141.0.9", at=T0 + timedelta(seconds=600 + i))
             for i in range(60)]
    out = aggressive_bot.detect(traffic_of(rows), Settings())
    ev = evidence(out)
    assert (ev["routes"], ev["route_requests"], ev["requests"]) == (["/docs/"], 540, 600)
    assert out[s.PATTERN].to_list() == ["/docs/api/api/api/"]  # 20 fetches, the first by name
    assert ev["patterns"] == ["/docs/api/api/api/", "/docs/api/api/css/", "/docs/api/api/img/",
                              "/docs/api/css/api/", "/docs/api/css/css/"]
    assert out[s.EXAMPLES][0].to_list() == ev["patterns"]  # a URL each, the pattern its own


def test_aggressive_bot_leaves_the_fastest_search_engine_alone():
    # the same hammering from Googlebot: the biggest crawler is not flagged by user agent
    rows = [{**r, s.BOT_NAME: "Googlebot", s.BOT_KIND: "search"} if r[s.BOT_NAME] == META[0] else r
            for r in meta_hammering()]
    assert aggressive_bot.detect(traffic_of(rows), Settings()).height == 0


def test_aggressive_bot_leaves_requests_without_a_logged_user_agent_alone():
    # the same hammering in a log that records no user agent (a second file in Apache common
    # format): not one bot, and no server rule can match an agent the log never showed
    rows = [{**r, s.BOT_NAME: NOT_LOGGED_NAME, s.BOT_KIND: "unknown", s.USER_AGENT: None}
            if r[s.BOT_NAME] == META[0] else r for r in meta_hammering()]
    assert aggressive_bot.detect(traffic_of(rows), Settings()).height == 0


def test_aggressive_bot_silent_when_bots_crawl_at_a_similar_pace():
    rows = [r for r in meta_hammering() if r[s.BOT_NAME] != META[0]]
    rows += [req(f"/asl/{i}", "/asl/{n}", bot=META, at=T0 + timedelta(seconds=20 * i))
             for i in range(200)]
    assert aggressive_bot.detect(traffic_of(rows), Settings()).height == 0


def test_aggressive_bot_needs_a_few_routes():
    # fast, but spread over twenty routes: no scoped rule to write
    rows = [r for r in meta_hammering() if r[s.BOT_NAME] != META[0]]
    rows += [req(f"/r{i % 20}/{i}", f"/r{i % 20}/{{n}}", bot=META, at=T0 + timedelta(seconds=i))
             for i in range(600)]
    assert aggressive_bot.detect(traffic_of(rows), Settings()).height == 0


def test_aggressive_bot_needs_other_bots_to_be_far_above():
    # a vhost only a health check fetches, plus two stray bot requests: no rest to compare
    rows = [r for r in meta_hammering() if r[s.BOT_NAME] == META[0]]
    rows += [req(f"/section/{i}", "/section/{n}", bot=AHREFS, client="54.36.148.1",
                 at=T0 + timedelta(minutes=i)) for i in range(2)]
    assert aggressive_bot.detect(traffic_of(rows), Settings()).height == 0
    # the same with a real crawl beside it is a finding
    rows += [req(f"/section/{i}", "/section/{n}", bot=AHREFS, client="54.36.148.1",
                 at=T0 + timedelta(seconds=20 * i)) for i in range(2, 100)]
    assert aggressive_bot.detect(traffic_of(rows), Settings()).height == 1


OKHTTP = ("okhttp", "tool")


def app_feed(addresses: int) -> list[dict]:
    """meta_hammering with its hammering sent by okhttp, an HTTP library, from `addresses`
    addresses (one: a script; many: a shop's Android app on its users' phones)."""
    return [
        {**r, s.BOT_NAME: OKHTTP[0], s.BOT_KIND: OKHTTP[1], s.USER_AGENT: "okhttp/4.12.0",
         s.CLIENT: f"10.{i % addresses // 250}.{i % addresses % 250}.1"}
        if r[s.BOT_NAME] == META[0] else r
        for i, r in enumerate(meta_hammering())
    ]


def test_aggressive_bot_flags_an_http_library_sent_from_a_few_addresses():
    out = aggressive_bot.detect(traffic_of(app_feed(3)), Settings())
    assert out.select(s.PATTERN, s.SEVERITY, s.WASTED_REQUESTS).rows() == [("/asl/{n}", "critical", 600)]
    assert (evidence(out)["bot_name"], evidence(out)["addresses"]) == ("okhttp", 3)
    assert out[s.ADVICE][0] == aggressive_bot.ADVICE


def test_aggressive_bot_on_an_http_library_from_many_even_addresses_is_a_warning():
    # 80 addresses, one request each: a small app's users as likely as a scraper's pool
    out = aggressive_bot.detect(traffic_of(app_feed(80)), Settings())
    assert out.select(s.SEVERITY, s.WASTED_REQUESTS).rows() == [("warning", 600)]
    assert evidence(out)["addresses"] == 80
    assert out[s.ADVICE][0] == aggressive_bot.ADVICE + aggressive_bot.MANY_ADDRESSES


def test_aggressive_bot_flags_one_scraper_among_many_scripts_of_its_library():
    # 600 addresses send okhttp once each, and one of them sends 600 requests more: not a
    # crowd (its busiest address sends half of it all)
    rows = app_feed(600) + [{**r, s.CLIENT: "10.0.0.1"} for r in app_feed(600) if r[s.BOT_NAME] == OKHTTP[0]]
    out = aggressive_bot.detect(traffic_of(rows), Settings())
    assert (evidence(out)["bot_name"], evidence(out)["requests"], evidence(out)["addresses"]) == (
        "okhttp", 1200, 600)  # 600 addresses, under ADDRESS_SAMPLE: counted exactly


def test_aggressive_bot_leaves_an_http_library_sent_from_many_addresses_alone():
    # 600 phones running the shop's app: a 403 on okhttp would lock every one of them out
    assert aggressive_bot.detect(traffic_of(app_feed(600)), Settings()).height == 0
    # the threshold is a setting: 600 addresses under it are one party's again
    crowd = Settings(crowd_min_addresses=601)
    assert aggressive_bot.detect(traffic_of(app_feed(600)), crowd).height == 1


def test_aggressive_bot_counts_an_ipv6_client_by_its_64():
    # one scraper taking a new address of its /64 for every request is one client
    one = [{**r, s.CLIENT: f"2001:db8:1:2:{i:x}::1"} if r[s.BOT_NAME] == OKHTTP[0] else r
           for i, r in enumerate(app_feed(600))]
    assert evidence(aggressive_bot.detect(traffic_of(one), Settings()))["addresses"] == 1
    # 600 phones, each in a /64 of its own, are a crowd
    phones = [{**r, s.CLIENT: f"2001:db8:{i:x}:1::1"} if r[s.BOT_NAME] == OKHTTP[0] else r
              for i, r in enumerate(app_feed(600))]
    assert aggressive_bot.detect(traffic_of(phones), Settings()).height == 0


def test_aggressive_bot_flags_a_crawler_framework_from_a_proxy_pool():
    # Scrapy from 600 addresses is a scraper's pool: no app sends Scrapy
    rows = [{**r, s.BOT_NAME: "Scrapy", s.USER_AGENT: "Scrapy/2.11.0 (+https://scrapy.org)"}
            if r[s.BOT_NAME] == OKHTTP[0] else r for r in app_feed(600)]
    assert evidence(aggressive_bot.detect(traffic_of(rows), Settings()))["bot_name"] == "Scrapy"


def test_aggressive_bot_leaves_link_previews_from_phones_alone():
    # WhatsApp fetches a shared link's preview from each sender's phone
    rows = [{**r, s.BOT_NAME: "WhatsApp", s.BOT_KIND: "social", s.USER_AGENT: "WhatsApp/2.23.20.0"}
            if r[s.BOT_NAME] == OKHTTP[0] else r for r in app_feed(600)]
    assert aggressive_bot.detect(traffic_of(rows), Settings()).height == 0


def fediverse(addresses: int) -> list[dict]:
    """app_feed's hammering sent by Mastodon servers, each naming itself in its user agent."""
    return [{**r, s.BOT_NAME: "Mastodon", s.BOT_KIND: "social",
             s.USER_AGENT: f"http.rb/5.1.1 (Mastodon/4.2.10; +https://{r[s.CLIENT]}.example/)"}
            if r[s.BOT_NAME] == OKHTTP[0] else r for r in app_feed(addresses)]


def test_aggressive_bot_leaves_a_fediverse_stampede_alone():
    # a boosted post: 400 Mastodon servers fetch it within minutes, one or two requests each.
    # Many servers, not one crawler: a rule on "Mastodon" would cut the site off them all
    assert aggressive_bot.detect(traffic_of(fediverse(400)), Settings()).height == 0
    # the same 400 addresses under an HTTP library's name may be a scraper's pool: a warning
    out = aggressive_bot.detect(traffic_of(app_feed(400)), Settings())
    assert out.select(s.SEVERITY, s.WASTED_REQUESTS).rows() == [("warning", 600)]
    # one instance hammering from three addresses is one party's crawl: a finding
    out = aggressive_bot.detect(traffic_of(fediverse(3)), Settings())
    assert (out[s.SEVERITY].to_list(), evidence(out)["bot_name"], evidence(out)["addresses"]) == (
        ["critical"], "Mastodon", 3)


def test_aggressive_bot_counts_an_apps_addresses_over_every_host():
    # old versions of the app call shop.example, new ones api.shop.example: 300 phones each
    rows = [{**r, s.HOST: ("shop.example", "api.shop.example")[i % 2]} for i, r in enumerate(app_feed(600))]
    assert aggressive_bot.detect(traffic_of(rows), Settings()).height == 0


def test_aggressive_bot_ignores_asset_bursts_and_server_wide_requests():
    # a headless browser rendering pages fetches their assets in bursts; Apache's own
    # "internal dummy connection" sends OPTIONS * — neither is a crawl of routes
    base = [r for r in meta_hammering() if r[s.BOT_NAME] != META[0]]
    assets = [req(f"/static/{name}", f"/static/{name}", bot=META, at=T0 + timedelta(seconds=i))
              for i in range(600) for name in [("app.css", "app.js", "logo.png")[i % 3]]]
    star = [req("*", "*", bot=META, at=T0 + timedelta(seconds=i)) for i in range(600)]
    assert aggressive_bot.detect(traffic_of(base + assets), Settings()).height == 0
    assert aggressive_bot.detect(traffic_of(base + star), Settings()).height == 0


def cgit_hammering() -> list[dict]:
    """A code browser whose whole site is under /cgit/: Bytespider on every file at every
    commit (tree/ and blame/ views, 600 requests in 10 minutes), people on the repositories'
    pages and commits, Googlebot and bingbot at a gentle pace."""
    bytespider = ("Bytespider", "ai")
    rows = [req(f"/cgit/r{i % 4}.git/{('tree', 'blame')[i % 2]}/src/f{i % 7}.c?id={i:040x}",
                f"/cgit/r{i % 4}.git/{('tree', 'blame')[i % 2]}/src/f{i % 7}.c?id",
                bot=bytespider, client="110.249.201.9", at=T0 + timedelta(seconds=i)) for i in range(600)]
    for i in range(300):
        rows.append(req(f"/cgit/r{i % 4}.git/commit/?id={i:040x}", f"/cgit/r{i % 4}.git/commit/?id",
                        bot=None, at=T0 + timedelta(seconds=20 * i), size=4000 + i))
        rows.append(req(f"/cgit/r{i % 4}.git/commit/?id={i:040x}", f"/cgit/r{i % 4}.git/commit/?id",
                        at=T0 + timedelta(seconds=20 * i), size=4000 + i))
    rows += [req(f"/cgit/r{i % 4}.git/", f"/cgit/r{i % 4}.git/", bot=BING, client="40.77.167.1",
                 at=T0 + timedelta(seconds=30 * i)) for i in range(100)]
    return rows


def test_aggressive_bot_on_a_site_under_one_folder_is_kept_off_its_views_not_the_site():
    # every page is under /cgit/: the route /cgit/ banned Bytespider from the whole site
    out = aggressive_bot.detect(traffic_of(cgit_hammering()), Settings())
    assert evidence(out)["routes"] == ["/cgit/*/blame/", "/cgit/*/tree/"]
    regex = re.compile(server_rules.route_regex(evidence(out)["routes"]))
    assert [bool(regex.search(p)) for p in ["/cgit/r1.git/tree/src/f1.c", "/cgit/r1.git/blame/x",
                                            "/cgit/r1.git/commit/", "/cgit/r1.git/", "/cgit/tree/"]] == [
        True, True, False, False, False]
    # its pattern and examples on those routes (a view one level in)
    assert out[s.PATTERN].to_list() == ["/cgit/r0.git/tree/src/f0.c?id"]  # r0 at even i: tree
    assert len(out[s.EXAMPLES][0]) == 5 and all(regex.search(u) for u in out[s.EXAMPLES][0])
    # a site with more than the folder (people read /about and /blog/ as much): the folder
    rows = cgit_hammering() + [req(f"/blog/p{i}", "/blog/{name}", bot=None, at=T0 + timedelta(seconds=i))
                               for i in range(300)]
    out = aggressive_bot.detect(traffic_of(rows), Settings())
    assert evidence(out)["routes"] == ["/cgit/"]


def test_aggressive_bot_on_a_site_under_a_language_folder_is_kept_off_its_sections():
    # a site whose pages are all under /en/: meta-externalagent on two sections, one level in
    rows = [{**r, s.URL: "/en" + r[s.URL], s.PATH: "/en" + r[s.PATH], s.PATTERN: "/en" + r[s.PATTERN]}
            for r in meta_hammering()]
    rows += [req(f"/en/article/{i}/post-about-{i}", "/en/article/{n}/{slug}", bot=None,
                 at=T0 + timedelta(seconds=7 * i), size=4000 + i) for i in range(300)]
    out = aggressive_bot.detect(traffic_of(rows), Settings())
    assert evidence(out)["routes"] == ["/en/asl/", "/en/psl/"]


def test_route_of_patterns():
    patterns = ["/asl/{n}?page", "/about", "/", "/{n}/x", "/?sid", "/calendar?date", "/a/b/c"]
    routes = pl.select(aggressive_bot.route_of(pl.Series(patterns))).to_series().to_list()
    assert routes == ["/asl/", "/about", "/", "/", "/", "/calendar", "/a/"]


# -- fake_bot -------------------------------------------------------------------------------

VERDICTS = {"66.249.66.1": "verified", "10.0.0.7": "fake", "10.0.0.8": "fake",
            "198.51.100.4": "unverified"}


def claims_traffic() -> Traffic:
    rows = articles(100)  # real Googlebot from 66.249.66.1
    rows += [req(f"/wp-login.php?x={i}", "/wp-login.php?x", client="10.0.0.7",
                 at=T0 + timedelta(seconds=i)) for i in range(30)]
    rows += [req(f"/article/{i}/post-about-{i}", "/article/{n}/{slug}", client="10.0.0.8",
                 size=4000 + 37 * i) for i in range(10)]
    rows += [req("/", "/", client="198.51.100.4", size=9000)] * 5
    rows += [req("/", "/", bot=BING, client="40.77.167.1", size=9000)] * 5
    traffic = traffic_of(rows)
    verdicts = pl.DataFrame({s.CLIENT: list(VERDICTS), s.VERIFIED: list(VERDICTS.values())})
    claims = traffic.claims.join(verdicts, on=s.CLIENT, how="left").with_columns(
        pl.col(s.VERIFIED).fill_null("unverified")
    )
    return traffic.replace(claims=claims)


def test_fake_bot_fires_per_claimed_engine_with_addresses():
    out = fake_bot.detect(claims_traffic(), Settings())
    assert out.select(s.KIND, s.SEVERITY, s.HOST, s.PATTERN, s.REQUESTS, s.WASTED_REQUESTS).rows() == [
        ("fake_bot", "warning", "-", None, 145, 40)
    ]
    assert evidence(out) == {
        "bot_name": "Googlebot",
        "addresses": ["10.0.0.7", "10.0.0.8"],
        "fake_address_count": 2,
        "fake_requests": 40,
        "verified_requests": 100,
        "unverified_requests": 5,
        "patterns": ["/wp-login.php?x", "/article/{n}/{slug}"],
        "first_seen": "2026-03-02T00:00:00Z",
        "last_seen": "2026-03-02T00:00:29Z",
    }
    assert out[s.EXAMPLES][0].to_list()[0].startswith("/wp-login.php?x=")


def test_fake_bot_silent_when_claims_are_verified_or_unverified():
    traffic = claims_traffic()
    honest = traffic.claims.with_columns(
        pl.when(pl.col(s.VERIFIED) == "fake").then(pl.lit("unverified"))
        .otherwise(pl.col(s.VERIFIED)).alias(s.VERIFIED)
    )
    assert fake_bot.detect(traffic.replace(claims=honest), Settings()).height == 0


def test_fake_bot_silent_before_verification():
    traffic = claims_traffic()
    assert fake_bot.detect(traffic.replace(claims=traffic.claims.drop(s.VERIFIED)), Settings()).height == 0


def test_fake_bot_caps_the_address_list():
    out = fake_bot.detect(claims_traffic(), Settings(fake_bot_max_addresses=1))
    assert evidence(out)["addresses"] == ["10.0.0.7"]
    assert evidence(out)["fake_address_count"] == 2


def test_growing_pattern_host_level_says_filters_where_new_patterns_are_new_parameter_sets():
    # a shop's layered navigation: each day new sets of filters on the category pages seen
    # from day one, a pattern each; the advice was about relative links nesting deeper
    import itertools

    names = ["climate", "color", "material", "price", "size", "style"]
    sets = [c for n in (2, 3) for c in itertools.combinations(names, n)]
    rows = articles(50) + [req(f"/c{k}.html", f"/c{k}.html", size=9000 + k) for k in range(4)]
    for day in range(8):
        for j in (0, 1):
            chosen = sets[2 * day + j]
            path = f"/c{(day + j) % 4}.html"
            query = "&".join(f"{n}={day}" for n in reversed(chosen))
            rows.append(req(f"{path}?{query}", f"{path}?{'&'.join(chosen)}",
                            at=T0 + timedelta(days=day, minutes=j), size=5000))
    host = growing_pattern.detect(traffic_of(rows), Settings()).filter(pl.col(s.PATTERN).is_null())
    assert host[s.ADVICE].to_list() == [growing_pattern.FILTERS_ADVICE]
    # links nesting deeper: new paths, the relative links' advice
    out = growing_pattern.detect(traffic_of(deeper_each_day(lambda k: f"level{k}")), Settings())
    assert out.filter(pl.col(s.PATTERN).is_null())[s.ADVICE].to_list() == [growing_pattern.HOST_ADVICE]


def test_growing_pattern_host_level_ignores_scanner_probes():
    # a scanner probes two new paths a day on a real site: answered 404, not a growing site
    rows = []
    for day in range(7):
        at = T0 + timedelta(days=day)
        rows += articles(50, at=at)
        rows += [req(f"/probe{day}-{k}.php", f"/probe{day}-{k}.php", at=at + timedelta(hours=k + 1),
                     status=404, bot=AHREFS) for k in range(2)]
    assert growing_pattern.detect(traffic_of(rows), Settings()).height == 0


def test_growing_pattern_silent_when_early_and_late_windows_would_overlap():
    # Four days of a site still being discovered (new patterns 30, 20, 12, 6 a day, as on the
    # real semicomplete.com log): the first and last three days overlap, so there is no
    # trend to read, and a slowing discovery must not be reported as growth.
    rows = articles(50)
    born = 0
    for day, count in enumerate((30, 20, 12, 6)):
        for _ in range(count):
            born += 1
            path = f"/{'abcdefghijklmnopqrstuvwxyz'[born % 26]}{born}x/page"  # first level: kept
            rows += [req(path, path, at=T0 + timedelta(days=day, hours=12))]
    assert growing_pattern.detect(traffic_of(rows), Settings()).height == 0


def daily_deploys(ext: dict[str, str]) -> list[dict]:
    """A single-page app deployed every day: its four bundles get a new hash in their names
    (`/static/js/main.8483e2c9.js`, a pattern each), the same sizes every build, and Googlebot
    fetches the day's build ten times a day to render the pages; 50 articles re-fetched daily."""
    import hashlib

    sizes = {"js/main": 180_000, "js/vendor": 420_000, "js/runtime": 2_100, "css/main": 31_000}
    rows = []
    for day in range(8):
        at = T0 + timedelta(days=day)
        rows += articles(50, at=at)
        build = hashlib.md5(str(day).encode()).hexdigest()[:8]
        for name, size in sizes.items():
            kind, stem = name.split("/")
            url = f"/static/{kind}/{stem}.{build}.{ext[kind]}"
            rows += [req(url, url, at=at + timedelta(hours=1, minutes=k), size=size) for k in range(10)]
    return rows


def test_growing_pattern_host_level_ignores_bundles_renamed_every_deploy():
    # a React app's hashed bundles, renamed by every daily deploy: four new patterns a day
    # (it was a warning about relative links nesting deeper, exit 3 after every deploy)
    traffic = traffic_of(daily_deploys({"js": "js", "css": "css"}))
    assert traffic.patterns.height == 33  # 32 bundles and the articles
    assert growing_pattern.detect(traffic, Settings()).height == 0
    # the same growth in pages (not static files): the host-level finding, as before
    out = growing_pattern.detect(traffic_of(daily_deploys({"js": "html", "css": "htm"})), Settings())
    assert out.select(s.SEVERITY, s.PATTERN, s.REQUESTS, s.WASTED_REQUESTS).rows() == [
        ("warning", None, 160, 160)]
    assert evidence(out)["new_patterns_per_window"] == [5, 4, 4, 4, 4, 4, 4]  # + articles


FACEBOOK = ("facebookexternalhit", "social")
BLOG = [f"/blog/how-{who}-track-metrics" for who in ("teams", "startups", "agencies", "shops", "banks", "schools")]


def shared_links(param, pattern: str, *, people: bool = True) -> list[dict]:
    """Six blog posts (each its own size, Googlebot re-fetching them daily) and 20 new links a
    day to them carrying `param(k)`: shared links people follow (one request in three) and link
    previewers and Googlebot fetch, each answered with its post (a few bytes of jitter)."""
    rows = []
    for day in range(8):
        at = T0 + timedelta(days=day)
        rows += [req(u, "/blog/{slug}", at=at, size=35_000 + 500 * i) for i, u in enumerate(BLOG)]
        for k in range(20):
            n = 20 * day + k
            i = n % len(BLOG)
            who = None if people and k % 3 == 0 else (FACEBOOK if k % 3 == 1 else GOOGLE)
            rows.append(req(f"{BLOG[i]}?{param(n)}", pattern, at=at + timedelta(minutes=30 * k + 1),
                            bot=who, size=35_000 + 500 * i + n % 5))
    return rows


def test_growing_pattern_silent_on_pages_growing_by_their_click_ids():
    # gclid, fbclid, utm_* on links people share and ads: the pattern is the posts again
    # (it was a warning advising to disallow the pattern, exit 3 on any site with campaigns)
    clicks = [lambda n: f"gclid=Cj0KCQ{n:06d}x9Fq", lambda n: f"fbclid=IwAR{n:05d}Zk",
              lambda n: f"utm_source=news&utm_campaign=spring{n}"]
    rows = shared_links(lambda n: clicks[n % 3](n), "/blog/{slug}?{tracking}")
    assert growing_pattern.detect(traffic_of(rows), Settings()).height == 0


def test_growing_pattern_on_a_referral_parameter_people_share_is_info():
    # `?via=dan305`, the site's own referral links: a parameter that does not change the page,
    # which people follow: point rel=canonical at the page, never disallow it (it was a warning)
    out = growing_pattern.detect(traffic_of(shared_links(lambda n: f"via=dan{n}", "/blog/{slug}?via")),
                                 Settings())
    assert out.select(s.SEVERITY, s.PATTERN, s.REQUESTS, s.WASTED_REQUESTS, s.ADVICE).rows() == [
        ("info", "/blog/{slug}?via", 160, 98, growing_pattern.COPY_ADVICE)]
    assert evidence(out)["human_requests"] == 56
    # crawlers alone minting the values (a parameter appended per visit): a warning, as before
    out = growing_pattern.detect(
        traffic_of(shared_links(lambda n: f"via=dan{n}", "/blog/{slug}?via", people=False)), Settings())
    assert out.select(s.SEVERITY, s.ADVICE).rows() == [("warning", growing_pattern.ADVICE)]
    # a session id in the links stays a warning, people or not (session_id names it too)
    out = growing_pattern.detect(
        traffic_of(shared_links(lambda n: f"sid={n:08x}", "/blog/{slug}?sid")), Settings())
    assert out.select(s.SEVERITY, s.PATTERN, s.ADVICE).rows() == [
        ("warning", "/blog/{slug}?sid", growing_pattern.ADVICE)]


def test_an_uptime_checks_cache_buster_is_no_growing_pattern_nor_budget_hog():
    # Better Uptime's `/?cb=<epoch>` every minute on a quiet site: a new URL a poll, 13% of
    # the "bot budget"; a growing_pattern warning (cron exit 3) whose fix sought links
    monitor = ("Better Uptime Bot", "monitoring")
    polls = [req(f"/?cb={1700000000 + 60 * i}", "/?cb", at=T0 + timedelta(minutes=i), bot=monitor,
                 size=9000) for i in range(7 * 1440)]
    people = [req("/", "/", bot=None, size=9000)] * 100 + articles(50, bot=None)
    traffic = traffic_of(polls + articles(100) + people)
    assert growing_pattern.detect(traffic, Settings()).height == 0
    assert budget_hog.detect(traffic, Settings()).height == 0
    # the same URLs fetched by a crawler are a growing pattern and the budget's hog; so they
    # are by a site-audit crawler filed as monitoring that follows every link (Siteimprove)
    crawled = [{**r, s.BOT_NAME: GOOGLE[0], s.BOT_KIND: GOOGLE[1], s.USER_AGENT: GOOGLE[0]} for r in polls]
    audit = ("Siteimprove", "monitoring")
    pages = [req(f"/{name}", f"/{name}", size=7000 + len(name)) for name in ("about", "contact", "news")]
    audited = [{**r, s.BOT_NAME: audit[0], s.BOT_KIND: audit[1], s.USER_AGENT: audit[0]}
               for r in polls + articles(100) + pages]
    for rows in (crawled + articles(100), audited):
        traffic = traffic_of(rows + people)
        assert growing_pattern.detect(traffic, Settings())[s.PATTERN].to_list() == ["/?cb"]
        assert budget_hog.detect(traffic, Settings())[s.PATTERN].to_list() == ["/?cb"]

"""The eight URL-shape detectors: each fires on its trap with exact numbers, stays silent on a
real content site, and returns the right empty shape on no traffic."""

from __future__ import annotations

import itertools
import json

import polars as pl
import pytest
from protego import Protego

from builders import BOT, HUMAN, bots, empty_traffic, humans, requests_frame, traffic_of
from logtrap import robots
from logtrap import schema as s
from logtrap.rules import suggest
from logtrap.detectors import (
    _shape,
    calendar,
    facets,
    internal_search,
    pagination,
    random_token,
    relative_loop,
    session_id,
    soft_404,
)
from logtrap.settings import Settings

MODULES = [calendar, session_id, facets, pagination, soft_404, relative_loop, random_token, internal_search]
WORDS = ["crawl", "budget", "river", "stone", "maple", "harbor", "signal", "lantern", "orbit"]


def _slug(i: int) -> str:
    return "-".join(WORDS[(i * k + k) % len(WORDS)] for k in (1, 2, 4))


def content_rows() -> list[dict]:
    """A real site, fetched by bots and people: every URL a distinct page with its own size,
    except static files (a tracking pixel is one size on purpose)."""
    pages = [("/", 18000), ("/about-us", 7000), ("/search", 4000)]
    for sec in range(10):
        pages.append((f"/section/{sec}/", 9000 + 131 * sec))
        pages += [(f"/section/{sec}/?page={p}", 8000 + 131 * sec + 17 * p) for p in range(2, 9)]
    pages += [(f"/article/{i}/{_slug(i)}", 6000 + 37 * i) for i in range(200)]
    pages += [(f"/product/{i}", 12000 + 53 * i) for i in range(300)]
    pages += [(f"/news/{2015 + i // 12}/{i % 12 + 1:02d}/", 15000 + 71 * i) for i in range(120)]
    rows = []
    for round_ in range(3):
        rows += [{**BOT, s.URL: u, s.BYTES: b} for u, b in pages]
        rows += [{**HUMAN, s.URL: u, s.BYTES: b, s.CLIENT: f"198.51.100.{i % 50}"}
                 for i, (u, b) in enumerate(pages[round_::3])]  # fmt: skip
    rows += humans([f"/pixel/{i}.gif" for i in range(100)], bytes=43)
    rows += humans(["/static/app.css", "/static/app.js"] * 50, bytes=20000)
    rows += bots([f"/img/{i}.png" for i in range(50)], bytes=3000)
    rows += humans([f"/search?q=word{i}" for i in range(30)], bytes=5000)
    return rows


EXACT = Settings(url_sample_size=10_000)  # the whole trap in the URL sample: exact evidence


def _findings(module, rows, settings=EXACT):
    out = module.detect(traffic_of(requests_frame(rows), settings), settings)
    assert out.schema == pl.Schema(s.FINDING_SCHEMA)
    return out


def _one(out: pl.DataFrame) -> dict:
    assert out.height == 1, out
    row = out.row(0, named=True)
    row["evidence"] = json.loads(row[s.EVIDENCE])
    assert 1 <= len(row[s.EXAMPLES]) <= 5
    assert row[s.ADVICE]
    return row


@pytest.fixture(scope="module")
def clean():
    return traffic_of(requests_frame(content_rows()))


@pytest.mark.parametrize("module", MODULES, ids=lambda m: m.KIND)
def test_silent_on_real_content(module, clean):
    out = module.detect(clean, Settings())
    assert out.schema == pl.Schema(s.FINDING_SCHEMA)
    assert out.select(s.PATTERN, s.EVIDENCE).rows() == []


@pytest.mark.parametrize("module", MODULES, ids=lambda m: m.KIND)
def test_empty_shape_on_no_traffic(module):
    out = module.detect(empty_traffic(), Settings())
    assert out.schema == pl.Schema(s.FINDING_SCHEMA)
    assert out.height == 0


SHELL = 2345  # a single-page app's index.html


def spa_rows() -> list[dict]:
    """The same site as a single-page app: every page answers the app's one index.html (static
    files keep their sizes). Sizes then say nothing about pages."""
    static = (".gif", ".css", ".js", ".png")
    return [r if r[s.URL].endswith(static) else {**r, s.BYTES: SHELL} for r in content_rows()]


@pytest.mark.parametrize("module", MODULES, ids=lambda m: m.KIND)
def test_silent_on_the_real_content_of_a_single_page_app(module):
    out = module.detect(traffic_of(requests_frame(spa_rows())), Settings())
    assert out.select(s.PATTERN, s.EVIDENCE).rows() == []


def app_rows() -> list[dict]:
    """The single-page app mounted under /app/ beside a classic site at /: every /app/ page
    (`/app/<section>/<page>`, all at one depth) answers its index.html."""
    rows = []
    for r in content_rows():
        static = r[s.URL].endswith((".gif", ".css", ".js", ".png"))
        path, sep, query = r[s.URL].partition("?")
        first, *rest = path.strip("/").split("/")
        url = r[s.URL] if static or path == "/" else f"/app/{first}/{'-'.join(rest) or 'index'}{sep}{query}"
        rows.append({**r, s.URL: url, s.BYTES: r[s.BYTES] if static or path == "/" else SHELL})
    return rows


@pytest.mark.parametrize("module", MODULES, ids=lambda m: m.KIND)
def test_silent_on_the_real_content_of_a_single_page_app_under_a_folder(module):
    # every page under /app/: counted by routes (first folder and depth), its shell was
    # no shell, and five detectors called its real pages traps
    traffic = traffic_of(requests_frame(app_rows()))
    assert _shape.shell_sizes(traffic, Settings()).rows() == [("-", SHELL)]
    assert module.detect(traffic, Settings()).select(s.PATTERN, s.EVIDENCE).rows() == []


@pytest.mark.parametrize("module", [pagination, soft_404, facets, session_id, random_token],
                         ids=lambda m: m.KIND)
def test_single_page_app_pages_only_bots_fetch_are_not_one_page(module):
    # deep list pages, profiles, filtered lists, shared-link ids and item ids nobody but
    # crawlers read: all the shell's size, as every page of the app, so nothing says they are
    # empty, missing or copies of one page
    deep = [f"/tags/?page={p}" for p in range(2, 60)]
    profiles = [f"/user/{i}/{_slug(i)}" for i in range(100)]
    filters = [f"/section/{sec}/?color={c}&size={z}&sort={o}" for sec in range(5)
               for c in ("red", "blue", "green") for z in ("s", "m", "l") for o in ("new", "old")]
    shared = [f"/?ref={i * 7919:012x}a1" for i in range(200)]
    items = [f"/i/{i * 2654435761 % 36**8:08x}z9" for i in range(300)]
    rows = spa_rows() + bots(deep + profiles + filters + shared + items, bytes=SHELL)
    assert _findings(module, rows).height == 0


def test_calendar_on_a_single_page_app_still_fires_on_months_far_in_the_future():
    # the shell's size is no evidence, the dates are: 2071 is decades past the logs
    months = [f"/calendar?date={1950 + i // 12}-{i % 12 + 1:02d}" for i in range(1456)]
    row = _one(_findings(calendar, spa_rows() + bots(months, bytes=SHELL)))
    ev = row["evidence"]
    # wasted: the months past the horizon (2028-02 on: 519); the past ones answered the shell,
    # which says nothing of them (and the rule leaves them open)
    assert (row[s.PATTERN], row[s.WASTED_REQUESTS]) == ("/calendar?date", 519)
    assert (ev["sampled_empty_urls"], ev["distinct_sizes"], ev["latest"]) == (0, 0, "2071-04")
    assert ev["sampled_future_urls"] > 0


# -- each trap, on top of the real site ----------------------------------------------------------


def test_calendar_fires_on_months_forever():
    months = [f"/calendar?date={1950 + i // 12}-{i % 12 + 1:02d}" for i in range(1456)]
    row = _one(_findings(calendar, content_rows() + bots(months, bytes=2100)))
    assert (row[s.KIND], row[s.PATTERN], row[s.REQUESTS], row[s.WASTED_REQUESTS]) == (
        "calendar", "/calendar?date", 1456, 1456)  # fmt: skip
    ev = row["evidence"]
    assert (ev["earliest"], ev["latest"], ev["empty_size"], ev["human_requests"]) == ("1950-01", "2071-04", 2100, 0)
    assert ev["span_years"] == 121.2
    assert ev["distinct_values"] == 1456
    assert ev["unique_urls"] == 1456
    assert row[s.SEVERITY] == "critical"


def joomla_calendar() -> list[dict]:
    """JEvents' month view: the year and the month in parameters of their own, beside two that
    never change. Bots walk "next month" from 1950 to 2120, onto one empty page; people read
    the months of 2023-2025, each with its own events."""
    def month(y: int, m: int) -> str:
        return f"/index.php?option=com_jevents&task=month.calendar&year={y}&month={m:02d}"
    walked = [{**BOT, s.URL: month(1950 + i // 12, i % 12 + 1), s.BYTES: 18870}
              for i in range(170 * 12) if not 2023 <= 1950 + i // 12 <= 2025]
    real = [(month(y, m), 24000 + 97 * (y * 12 + m) % 5000) for y in (2023, 2024, 2025) for m in range(1, 13)]
    read = [{**HUMAN, s.URL: u, s.BYTES: b} for u, b in real] * 3
    return walked + [{**BOT, s.URL: u, s.BYTES: b} for u, b in real] + read


def test_calendar_fires_on_a_year_and_a_month_in_parameters_of_their_own():
    # it was a critical facets trap (four parameter names, one empty page), whose rule
    # blocked the 36 months people read
    rows = content_rows() + joomla_calendar()
    row = _one(_findings(calendar, rows))
    assert (row[s.PATTERN], row[s.WASTED_REQUESTS], row[s.SEVERITY]) == (
        "/index.php?month&option&task&year", 2004, "critical")  # not the 36 months people read
    ev = row["evidence"]
    assert (ev["earliest"], ev["latest"], ev["empty_size"]) == ("1950-01", "2119-12", 18870)
    assert _findings(facets, rows).height == 0  # two parameters vary: one date, not facets


def test_facets_fires_on_two_filters_beside_parameters_that_never_change():
    # a Joomla shop routes by option= and view=; colour and size are multi-select, their
    # subsets endless, nearly all answering the same "no products match" page
    colors, sizes = ["red", "blue", "green", "black", "white"], ["s", "m", "l", "xl"]
    subsets = [",".join(c) for n in (1, 2, 3) for c in itertools.combinations(colors, n)]
    urls = [f"/index.php?option=com_shop&view=category&color={c}&size={z}"
            for c in subsets for z in sizes]
    # one filter at a time too: the path's other parameter sets
    alone = ([f"/index.php?option=com_shop&view=category&color={c}" for c in subsets]
             + [f"/index.php?option=com_shop&view=category&size={z}" for z in sizes])
    found = _findings(facets, content_rows() + bots(urls + alone, bytes=15230))
    row = _one(found.filter(pl.col(s.PATTERN) == "/index.php?color&option&size&view"))
    assert row[s.WASTED_REQUESTS] == 99
    ev = row["evidence"]
    # a listed colour is a filter of its own: option, view, three colours and size at most;
    # its sets, the 20 lists of colours with a size and a colour alone with one
    assert (ev["param_count"], ev["varying_params"], ev["param_sets"]) == (6, 2, 21)


def test_facets_silent_on_a_pagination_trap_over_two_filters():
    # a job board's listings by location and category, paged past their last page onto one
    # empty page: pagination's trap (facets called it critical, and its `Disallow: /jobs?*&*&`
    # blocked every real page 2 and 3)
    listings = [(loc, cat) for loc in ("berlin", "paris", "rome", "oslo") for cat in ("it", "ops", "law")]
    past = [f"/jobs?location={loc}&category={cat}&page={p}" for loc, cat in listings for p in range(4, 40)]
    real = [(f"/jobs?location={loc}&category={cat}&page={p}", 30000 + 977 * i + 31 * p)
            for i, (loc, cat) in enumerate(listings) for p in (2, 3)]
    first = [(f"/jobs?location={loc}&category={cat}", 31000 + 977 * i) for i, (loc, cat) in enumerate(listings)]
    rows = (bots(past, bytes=4100) + [{**BOT, s.URL: u, s.BYTES: b} for u, b in real + first]
            + [{**HUMAN, s.URL: u, s.BYTES: b} for u, b in real + first]
            + bots([f"/jobs?q=word{i}&location=berlin" for i in range(30)], bytes=5000))
    assert _findings(facets, content_rows() + rows).height == 0
    assert _one(_findings(pagination, content_rows() + rows))[s.PATTERN] == "/jobs?category&location&page"


def test_facets_fires_on_a_filter_form_sending_every_field_onto_one_empty_page():
    # a GET form sends colour, size and sort every time, in one order: one set of filters,
    # and 80% of its combinations answer "no products match"
    urls = [(f"/shop?color={c}&size={z}&sort={o}", 4100 if (i % 5) else 20000 + 37 * i)
            for i, (c, z, o) in enumerate((c, z, o) for c in range(12) for z in range(8) for o in range(3))]
    rows = content_rows() + [{**BOT, s.URL: u, s.BYTES: b} for u, b in urls]
    row = _one(_findings(facets, rows))
    assert (row[s.PATTERN], row["evidence"]["param_sets"], row["evidence"]["name_orders"]) == (
        "/shop?color&size&sort", 1, 1)


NO_HOMES = 24108  # one listing's "no homes match" page


def homes_by_filters() -> tuple[list[dict], list[dict]]:
    """A real-estate site's listing per city, `/homes/CITY?` with six filters (the city left in
    the path: a pattern per city and set of filters). People pick three filters, two choices
    each, in the form's order; bots follow every set of four to six, in every order (as far as
    rotations go: 12 URLs a set). Seven choices of filters in ten answer the same "no homes"
    page, the rest a listing of their own, whatever the order. (people's rows, bots' rows)"""
    values = {"baths": ["1", "2"], "beds": ["2", "3"], "price_max": ["500000", "750000"],
              "price_min": ["100000", "200000"], "sort": ["newest", "price_asc"], "type": ["condo", "house"]}
    cities = ["austin-tx", "boise-id", "denver-co", "tampa-fl"]
    sizes: dict[tuple, int] = {}

    def url(city: str, order: tuple[str, ...], choice: int, who: dict) -> dict:
        picked = tuple(sorted((n, values[n][(choice >> j % 3) & 1]) for j, n in enumerate(sorted(order))))
        i = sizes.setdefault((city, picked), len(sizes))
        query = "&".join(f"{n}={dict(picked)[n]}" for n in order)
        return {**who, s.URL: f"/homes/{city}?{query}", s.BYTES: NO_HOMES if i % 10 < 7 else 60000 + 977 * i}

    people, crawl = [], []
    for city in cities:
        for names in itertools.combinations(sorted(values), 3):
            people += [url(city, names, choice, HUMAN) for choice in (0, 1)]
        for names in (n for size in (4, 5, 6) for n in itertools.combinations(sorted(values), size)):
            crawl += [url(city, names[v % len(names):] + names[:v % len(names)], v // len(names), BOT)
                      for v in range(12)]
    return people, crawl


def test_one_listings_no_results_page_is_no_shell_and_its_facets_are_a_trap():
    # "no homes" answers many sets of filters on every city: a pattern per city and set of
    # filters people read, but one route, so no single-page app's shell (it was, and masked
    # the very page that makes the filters a trap: facets said nothing)
    people, crawl = homes_by_filters()
    rows = content_rows() + people + crawl
    assert (len(people), len(crawl)) == (4 * 20 * 2, 4 * 22 * 12)
    traffic = traffic_of(requests_frame(rows), EXACT)
    assert _shape.shell_sizes(traffic, EXACT).height == 0
    found = _findings(facets, rows)
    assert (found.height, found[s.WASTED_REQUESTS].sum()) == (4 * 22, 900)  # every set of 4-6
    # the four cities' filters are one trap, 900 of the host's 3,215 bot requests: critical
    # (each city's alone, 226, a warning)
    assert found[s.SEVERITY].unique().to_list() == ["critical"]
    six = _one(found.filter(pl.col(s.PATTERN) == "/homes/austin-tx?baths&beds&price_max&price_min&sort&type"))
    ev = six["evidence"]
    assert (six[s.REQUESTS], six[s.WASTED_REQUESTS]) == (12, 11)
    assert (ev["param_sets"], ev["name_orders"], ev["distinct_sizes"], ev["path_wasted_requests"],
            ev["host_facet_wasted_requests"]) == (42, 6, 1, 226, 900)
    # the rule blocks four filters and more, never the three people pick nor the bare listing
    robots = Protego.parse(suggest(found, traffic, EXACT).robots_txt)
    people_urls = [r[s.URL] for r in people] + [f"/homes/{c}" for c in ("austin-tx", "tampa-fl")]
    assert [u for u in people_urls if not robots.can_fetch(f"https://x{u}", "Googlebot")] == []
    assert [r[s.URL] for r in crawl if robots.can_fetch(f"https://x{r[s.URL]}", "Googlebot")] == []


def test_a_single_page_apps_shell_on_routes_with_a_query_is_a_shell():
    # an app at / whose pages are `/product?id=`, `/catalog?category=`, `/blog?post=`: two
    # patterns without a query (/ and /about); its shell was missed, and its products were a
    # budget_hog, its categories' pages a pagination trap
    app = ([{**HUMAN, s.URL: u, s.BYTES: 2391} for u in ("/", "/about")]
           + [{**HUMAN, s.URL: f"/product?id={i}", s.BYTES: 2391} for i in range(1, 60)]
           + [{**HUMAN, s.URL: f"/catalog?category=c{i}", s.BYTES: 2391} for i in range(8)]
           + [{**HUMAN, s.URL: f"/blog?post=p{i}", s.BYTES: 2391} for i in range(8)])
    crawl = ([{**BOT, s.URL: f"/product?id={i}", s.BYTES: 2391} for i in range(1, 600)]
             + [{**BOT, s.URL: f"/catalog?category=c{i}&page={p}", s.BYTES: 2391} for i in range(8) for p in range(1, 30)])
    traffic = traffic_of(requests_frame(app + crawl), EXACT)
    assert _shape.shell_sizes(traffic, EXACT).rows() == [("-", 2391)]
    for module in MODULES:
        assert module.detect(traffic, EXACT).height == 0, module.KIND


def test_a_single_page_apps_shell_answers_routes_not_filters():
    # the same site as a single-page app: the home page, the city listings, listings and
    # agents people read all answer index.html, so its size is the shell; the "no homes"
    # size beside it on the filters of one listing is no shell
    people, crawl = homes_by_filters()
    app = [{**HUMAN, s.URL: u, s.BYTES: 2391} for u in
           ("/", "/homes/austin-tx", "/listing/48000037-oak-st", "/agent/anna-smith")]
    traffic = traffic_of(requests_frame(app * 5 + people + crawl), EXACT)
    assert _shape.shell_sizes(traffic, EXACT).rows() == [("-", 2391)]


def test_facets_counts_a_lone_year_or_day_as_a_filter():
    # used cars by make, model and year (a year alone is a filter, not a date) on a path
    # whose makes and models are also filtered alone
    urls = [f"/cars?make=m{m}&model=x{x}&year={2000 + y}" for m in range(6) for x in range(5) for y in range(10)]
    urls += [f"/cars?make=m{m}" for m in range(6)] + [f"/cars?make=m{m}&model=x{x}" for m in range(6) for x in range(5)]
    row = _one(_findings(facets, content_rows() + bots(urls, bytes=4100)))
    assert (row[s.PATTERN], row["evidence"]["params"], row["evidence"]["param_sets"]) == (
        "/cars?make&model&year", "make&model&year", 3)
    # a photo archive's tag and year: `tag` is no date's day here (German "Tag")
    photos = [u.replace("/cars?make=m", "/photos?tag=t").replace("&model=x", "&camera=c") for u in urls]
    row = _one(_findings(facets, content_rows() + bots(photos, bytes=4100)))
    assert row[s.PATTERN] == "/photos?camera&tag&year"


def test_facets_silent_on_an_image_resizer_whose_images_people_load():
    # Next.js's /_next/image?url=&w=&q=: 60 images in 8 widths, one placeholder size logged
    # for all of them, every URL bots fetched loaded by people too (a review site: a facets
    # warning whose `Disallow: /_next/image?*&*&` blocked all 512 images)
    urls = [f"/_next/image?url=%2Fimg%2F{i}.jpg&w={w}&q=75" for i in range(60)
            for w in (640, 750, 828, 1080, 1200, 1920, 2048, 3840)]
    rows = bots(urls, bytes=40000) + humans(urls, bytes=40000)
    assert _findings(facets, content_rows() + rows).height == 0
    # the same URLs fetched by bots alone: combinations nobody asked for, the trap
    row = _one(_findings(facets, content_rows() + bots(urls, bytes=40000)))
    assert (row[s.PATTERN], row[s.WASTED_REQUESTS]) == ("/_next/image?q&url&w", 479)


def test_facets_fires_on_filters_in_every_order_beside_the_links_people_read():
    # 100 combinations of two filters in both orders, 80 of them one empty page: people read
    # every combination in the site's order, bots fetch both (code review: with people on all
    # 100 the finding vanished, with 49 it was critical; the other order is nobody's link)
    pairs = [(c, z) for c in range(10) for z in range(10)]
    size = {p: 9000 + 97 * i if i % 5 == 0 else 2000 for i, p in enumerate(pairs)}
    mine = [(f"/shop/list?color=c{c}&size=s{z}", size[(c, z)]) for c, z in pairs]
    swapped = [(f"/shop/list?size=s{z}&color=c{c}", size[(c, z)]) for c, z in pairs]
    rows = [{**BOT, s.URL: u, s.BYTES: b} for u, b in mine + swapped]
    people = [{**HUMAN, s.URL: u, s.BYTES: b} for u, b in mine]
    alone, read = (_one(_findings(facets, content_rows() + rows + extra)) for extra in ([], people))
    assert (read[s.PATTERN], read["evidence"]["name_orders"]) == ("/shop/list?color&size", 2)
    assert (read[s.SEVERITY], read[s.WASTED_REQUESTS]) == (alone[s.SEVERITY], alone[s.WASTED_REQUESTS])


def test_facets_silent_on_one_forms_pages_of_one_template():
    # a currency converter: /convert?amount=&from=&to=, always these fields in this order,
    # 3,480 real pages whose sizes fall within 80 bytes, read by people (it was a critical
    # facets trap whose `Disallow: /convert?*&*&` blocked all of them)
    codes = ["USD", "EUR", "GBP", "JPY", "CHF", "CAD", "AUD", "SEK", "NOK", "PLN"]
    pages = [(f"/convert?amount={a}&from={f}&to={to}", 9000 + (a * 7 + i * 13) % 80)
             for a in (1, 5, 10, 50, 100, 500) for i, (f, to) in
             enumerate((f, to) for f in codes for to in codes if f != to)]
    rows = ([{**BOT, s.URL: u, s.BYTES: b} for u, b in pages]
            + [{**HUMAN, s.URL: u, s.BYTES: b} for u, b in pages[::3]])
    assert _findings(facets, content_rows() + rows).height == 0
    # with its form page and people arriving from ads: no other sets of filters
    ads = [{**HUMAN, s.URL: f"{u}&gclid=a{i}&utm_source=google", s.BYTES: b} for i, (u, b) in enumerate(pages[::7])]
    form = [{**HUMAN, s.URL: "/convert", s.BYTES: 7000}] * 20
    assert _findings(facets, content_rows() + rows + ads + form).height == 0


def standings(first_future: int = 2026, last: int = 2150) -> list[dict]:
    """A league's standings per season and week, 1990-2025, each its own table, people reading
    every third; a "next season" link walked by bots from 2026 on, onto one empty table."""
    real = [(f"/standings?season={y}&week={w}", 30000 + 41 * (y - 1990) * 17 + 13 * w)
            for y in range(1990, 2026) for w in range(1, 18)]
    walked = [f"/standings?season={y}&week={w}" for y in range(first_future, last + 1) for w in (1, 2, 3)]
    return ([{**BOT, s.URL: u, s.BYTES: b} for u, b in real]
            + [{**HUMAN, s.URL: u, s.BYTES: b} for u, b in real[::3]]
            + [{**BOT, s.URL: u, s.BYTES: 5000} for u in walked])


def test_calendar_fires_on_seasons_walked_into_the_future_and_wastes_only_those():
    # a year alone was no date: the walk to 2150 went unseen. The logs end in January 2026,
    # so 2029 on lies past the two years' horizon; the seasons people read are no waste
    row = _one(_findings(calendar, content_rows() + standings()))
    ev = row["evidence"]
    assert (row[s.PATTERN], row[s.WASTED_REQUESTS]) == ("/standings?season&week", (2150 - 2029 + 1) * 3)
    assert (ev["earliest"], ev["latest"], ev["sampled_future_urls"]) == ("1990", "2150", 122 * 3)
    assert all(int(u.split("=")[1].split("&")[0]) >= 2029 for u in row[s.EXAMPLES])


def test_calendar_fires_on_seasons_walked_onto_a_table_gzip_spreads_over_a_few_bytes():
    # the empty table, compressed with its season's label, takes a few sizes: an exact size
    # for half of the future seasons was asked, and the walk went unseen
    rows = [{**r, s.BYTES: 8000 + int(r[s.URL].split("=")[1].split("&")[0]) % 5}
            if r[s.BYTES] == 5000 else r for r in standings()]
    row = _one(_findings(calendar, content_rows() + rows))
    assert (row[s.PATTERN], row[s.WASTED_REQUESTS]) == ("/standings?season&week", (2150 - 2029 + 1) * 3)


def test_calendar_empty_month_spread_by_a_nonce_is_one_page():
    # the empty month carries a nonce: 2100-2112 bytes. An exact size for half the months
    # was asked, so the months before the horizon counted as months with pages of their own
    months = [f"/calendar?date={1950 + i // 12}-{i % 12 + 1:02d}" for i in range(1456)]
    rows = content_rows() + [{**BOT, s.URL: u, s.BYTES: 2100 + i * 7 % 13} for i, u in enumerate(months)]
    row = _one(_findings(calendar, rows))
    ev = row["evidence"]
    assert (ev["sampled_empty_urls"], ev["sampled_future_urls"]) == (1456, 519)


def test_calendar_silent_on_seasons_people_read_and_next_seasons_fixtures():
    # players' seasons 1990-2025 (distinct pages), and the fixtures of the next three
    # seasons: two of them lie past the horizon, no walk
    players = [{**BOT, s.URL: f"/players/{p}?season={y}", s.BYTES: 20000 + 97 * p + 31 * y}
               for p in range(20) for y in range(1990, 2026)]
    fixtures = [{**BOT, s.URL: f"/fixtures?season={y}&round={r}", s.BYTES: 9000 + 7 * r + y}
                for y in range(2020, 2031) for r in range(1, 5)]
    assert _findings(calendar, content_rows() + players + fixtures).height == 0


def test_calendar_silent_on_future_years_that_are_pages_of_their_own():
    # a budget's projections to 2050, announced Olympic Games: every future year its own
    # size. A year walked past the horizon had been enough to call them a calendar
    budget = [{**BOT, s.URL: f"/budget?year={y}", s.BYTES: 40000 + 531 * (y - 2000)}
              for y in range(2000, 2051)]
    games = [{**BOT, s.URL: f"/games?year={y}", s.BYTES: 25000 + 97 * (y - 1896)}
             for y in range(1896, 2036, 4)]
    assert _findings(calendar, content_rows() + budget + games).height == 0


def test_calendar_pages_that_repeat_a_few_answers_are_its_examples():
    # a relative link nesting tag pages under dated posts: a few templates over twelve years,
    # nothing in the future and no one empty page; its examples were none
    slugs = [f"{WORDS[i % 9]}-{WORDS[i // 9 % 9]}-{WORDS[i // 81]}" for i in range(120)]
    urls = [f"/{2012 + i % 12}/{1 + i % 12:02d}/{slug}/tags/guide/" for i, slug in enumerate(slugs)]
    rows = content_rows() + [{**BOT, s.URL: u, s.BYTES: 3000 + 100 * (i % 3)} for i, u in enumerate(urls)]
    row = _one(_findings(calendar, rows))
    assert (row[s.PATTERN], row[s.WASTED_REQUESTS], row["evidence"]["distinct_sizes"]) == (
        "/{n}/{n}/{slug}/tags/guide/", 120, 3)
    assert set(row[s.EXAMPLES]) <= set(urls)


def test_calendar_silent_on_map_tiles_whose_row_and_layer_look_like_a_year_and_a_month():
    # zoom 13 over Central Europe: tile rows 2700-2950, `m=` the layer
    tiles = [f"/tiles?x={4400 + i % 30}&y={2700 + i // 30}&z=13&m={1 + i % 3}" for i in range(2400)]
    rows = content_rows() + [{**BOT, s.URL: u, s.BYTES: 900 + i % 7} for i, u in enumerate(tiles)]
    assert _findings(calendar, rows).height == 0


def test_calendar_silent_on_event_pages_two_of_them_announced_far_ahead():
    # 300 events with their date in the slug, 2016 to 2026, a page apiece; two announced for
    # 2029 and 2030, past the horizon, their sizes apart: each was half of "the dates past
    # it", called the empty page, and a calendar finding named the gala's own page
    events = [(f"/event/concert-night-{2016 + i // 30}-{i % 12 + 1:02d}-{i % 28 + 1:02d}/",
               30000 + 97 * i) for i in range(300)]
    events += [("/event/world-games-2029-06-15/", 51234), ("/event/centenary-gala-2030-09-01/", 56891)]
    rows = [{**who, s.URL: u, s.BYTES: b} for u, b in events for who in (BOT, BOT, HUMAN)]
    assert _findings(calendar, content_rows() + rows).height == 0


def test_calendar_silent_on_a_decades_long_archive_of_distinct_pages():
    archive = [(f"/archive?month={1990 + i // 12}-{i % 12 + 1:02d}", 20000 + 13 * i) for i in range(400)]
    rows = content_rows() + [{**BOT, s.URL: u, s.BYTES: b} for u, b in archive]
    assert _findings(calendar, rows).height == 0


def test_session_id_fires_on_copies_of_the_home_page():
    copies = [f"/?sid={i * 7919:016x}" for i in range(1451)]
    row = _one(_findings(session_id, content_rows() + bots(copies, bytes=18000)))
    assert (row[s.KIND], row[s.PATTERN], row[s.REQUESTS], row[s.WASTED_REQUESTS]) == (
        "session_id", "/?sid", 1451, 1450)  # fmt: skip
    ev = row["evidence"]
    assert (ev["session_param"], ev["pages"], ev["new_value_share"], ev["one_size_share"]) == ("sid", 1, 1.0, 1.0)


def test_session_id_on_a_click_id_advises_canonical_not_cookies():
    # Google's srsltid, minted per click: copies of the page like a session's, but no session
    copies = [f"/?srsltid=AfmBOo{i * 7919:024x}" for i in range(200)]
    row = _one(_findings(session_id, content_rows() + bots(copies, bytes=18000)))
    assert (row[s.PATTERN], row["evidence"]["session_param"]) == ("/?{tracking}", "srsltid")
    assert row[s.ADVICE] == session_id.TRACKING_ADVICE


def test_session_id_fires_when_a_token_spreads_the_copies_sizes():
    # each copy carries a CSRF token: 4 pages copied 50 times, each copy within 7 bytes of its
    # page (it was only a growing_pattern, with the wrong advice: the copies had to be one size)
    copies = [(f"/section/{i % 4}/?sid={i * 7919:012x}a1", 9000 + 131 * (i % 4) + (i * 5) % 8)
              for i in range(200)]
    row = _one(_findings(session_id, content_rows() + [{**BOT, s.URL: u, s.BYTES: b} for u, b in copies]))
    assert (row[s.PATTERN], row[s.WASTED_REQUESTS], row["evidence"]["one_size_share"]) == (
        "/section/{n}/?sid", 196, 1.0)


def test_session_id_silent_on_variant_pages_people_read():
    # a shop's ?sku= variants: ids that look minted, one exact size per product (the variant
    # only moves `selected`), read by people too: they were a critical session_id, and
    # Disallow: /*?sku= blocked 72,000 real pages
    variants = [(f"/product/{p}?sku={p * 7919:06x}k{v}", 12000 + 53 * p) for p in range(40)
                for v in range(6)]
    rows = [{**BOT, s.URL: u, s.BYTES: b} for u, b in variants]
    rows += [{**HUMAN, s.URL: u, s.BYTES: b} for u, b in variants[::2]]
    assert _findings(session_id, content_rows() + rows).height == 0


def test_session_id_finds_an_unknown_parameter_by_its_values():
    copies = [f"/section/{i % 4}/?visit={i * 7919:012x}a1" for i in range(200)]
    rows = content_rows() + [{**BOT, s.URL: u, s.BYTES: 9000 + 131 * (i % 4)} for i, u in enumerate(copies)]
    row = _one(_findings(session_id, rows))
    assert (row[s.PATTERN], row[s.REQUESTS], row[s.WASTED_REQUESTS]) == ("/section/{n}/?visit", 200, 196)
    assert (row["evidence"]["session_param"], row["evidence"]["pages"]) == ("visit", 4)


def test_session_id_fires_on_a_site_wide_trap_larger_than_the_url_sample():
    # a session id on every link of a 5,000-product catalog: 30,000 URLs, six per product, of
    # which the default sample keeps 1,000, nearly all of them of different products
    copies = [(f"/product/{i % 5000}?sid={i * 7919 % 10**12:012x}", 12000 + 53 * (i % 5000))
              for i in range(30_000)]
    rows = content_rows() + [{**BOT, s.URL: u, s.BYTES: b} for u, b in copies]
    row = _one(_findings(session_id, rows, settings=Settings()))
    assert (row[s.PATTERN], row[s.REQUESTS]) == ("/product/{n}?sid", 30_000)
    ev = row["evidence"]
    assert (ev["sampled_urls"], ev["new_value_share"], ev["one_size_share"]) == (1000, 1.0, 1.0)
    # estimated from the sample's pairs of copies of one product: six copies, 5,000 products
    assert 5.0 <= ev["urls_per_page"] <= 7.0 and 4_000 <= ev["pages"] <= 6_000
    assert row[s.WASTED_REQUESTS] == 30_000 - ev["pages"]


def test_session_id_counts_the_pages_of_an_uneven_trap_past_the_url_sample():
    # a tracking id on product links: 100 products linked 50 times each, 4,900 once (9,900
    # URLs, 1,000 sampled). The few much-copied pages must not hide the many copied once.
    links = [(f"/product/{p}?ref={(p * 100 + j) * 7919 % 10**12:012x}", 12000 + 53 * p)
             for p in range(5000) for j in range(50 if p < 100 else 1)]
    rows = content_rows() + [{**BOT, s.URL: u, s.BYTES: b} for u, b in links]
    row = _one(_findings(session_id, rows, settings=Settings()))
    ev = row["evidence"]
    assert (row[s.PATTERN], ev["session_param"], ev["sampled_urls"]) == (
        "/product/{n}?ref", "ref", 1000)  # fmt: skip
    # 5,000 pages; the sample has ~590 of them, the mean copies per URL would say ~360
    assert 3_000 <= ev["pages"] <= 6_000
    assert row[s.WASTED_REQUESTS] == 9_900 - ev["pages"]


def test_session_id_fires_on_a_forums_topics_each_crawled_under_a_few_session_ids():
    # phpBB: 300 topics, each fetched under 3 or 4 new `sid`s in a week (24% of the bot
    # budget); 3.5 copies per URL were under the 5 a parameter found by its values needs
    copies = [(f"/viewtopic.php?f={t % 7}&t={t}&sid={(t * 4 + c) * 7919:032x}", 14000 + 61 * t)
              for t in range(300) for c in range(3 + t % 2)]
    rows = content_rows() + [{**BOT, s.URL: u, s.BYTES: b} for u, b in copies]
    row = _one(_findings(session_id, rows, settings=Settings()))
    assert (row[s.PATTERN], row["evidence"]["session_param"], row[s.REQUESTS]) == (
        "/viewtopic.php?f&sid&t", "sid", 1050)
    # the same copies under a name that says nothing need five per URL
    named_not = [{**r, s.URL: r[s.URL].replace("sid=", "vid=")} for r in rows[-len(copies):]]
    assert _findings(session_id, content_rows() + named_not, settings=Settings()).height == 0
    # PHP's trans-sid: a crawler without cookies keeps one session through a visit, twelve
    # visits of 100 topics each: few values, each a minted id (it was critical, then nothing)
    visits = [(f"/viewtopic.php?f={t % 7}&t={t}&sid={(v + 1) * 7919:032x}", 14000 + 61 * t)
              for v in range(12) for t in range(v * 20, v * 20 + 100)]
    rows = content_rows() + [{**BOT, s.URL: u, s.BYTES: b} for u, b in visits]
    assert _one(_findings(session_id, rows, settings=Settings()))[s.PATTERN] == "/viewtopic.php?f&sid&t"
    # nor a `sid` naming one of three stores: the same products a few bytes apart per store,
    # two values or three for 300 URLs; a session mints one per visit
    stores = [{**BOT, s.URL: f"/product/{n}?sid={k}", s.BYTES: 9000 + 71 * n + k}
              for n in range(300) for k in (1, 2, 3)]
    assert _findings(session_id, content_rows() + stores, settings=Settings()).height == 0
    # and a `sid` naming stories (PHP-Nuke: a page of its own each) is no session
    stories = [{**BOT, s.URL: f"/modules.php?name=News&file=article&sid={n}", s.BYTES: 9000 + 71 * n}
               for n in range(300)]
    assert _findings(session_id, content_rows() + stories, settings=Settings()).height == 0


def test_session_id_names_vbulletins_session_hash_s_by_its_values():
    # vBulletin's (and Invision's) `?s=<32 hex digits>` on every link for a visitor without
    # cookies: each thread crawled under three or four, under the five copies a parameter
    # found by its values alone needs (a scenario review: 10% of the bots' fetches, no finding)
    copies = [(f"/showthread.php?s={(t * 4 + c) * 7919:032x}&t={t}", 14000 + 61 * t)
              for t in range(300) for c in range(3 + t % 2)]
    rows = content_rows() + [{**BOT, s.URL: u, s.BYTES: b} for u, b in copies]
    row = _one(_findings(session_id, rows))
    assert (row[s.PATTERN], row["evidence"]["session_param"], row[s.REQUESTS]) == ("/showthread.php?s&t", "s", 1050)
    # its rule is the whole site's, as a session name's is
    lines = robots.candidates("session_id", row[s.PATTERN], [u for u, _ in copies[:50]], Settings())[0].lines
    assert lines == ("Disallow: /*?s=", "Disallow: /*&s=")
    # WordPress's search `?s=` holds words: no session
    words = [(f"/?s={WORDS[i % 9]}{i}&lang=en", 5000) for i in range(300)] * 3
    assert _findings(session_id, content_rows() + [{**BOT, s.URL: u, s.BYTES: b} for u, b in words]).height == 0


def test_session_id_fires_on_a_login_link_that_carries_every_page():
    # Drupal's /user/login?destination=<the page>: the login form again per page of the site,
    # its hidden field echoing the page (sizes a few bytes apart), fetched again and again
    pages = [f"/news/{2020 + i % 5}/story-{i}" for i in range(400)]
    logins = [(f"/user/login?destination={u}", 14800 + len(u)) for u in pages for _ in range(2)]
    rows = content_rows() + [{**BOT, s.URL: u, s.BYTES: b} for u, b in logins]
    row = _one(_findings(session_id, rows))
    assert (row[s.PATTERN], row["evidence"]["session_param"], row["evidence"]["pages"]) == (
        "/user/login?destination", "destination", 1)
    assert row[s.WASTED_REQUESTS] == 800 and row[s.ADVICE] == session_id.RETURN_ADVICE  # every one
    # people log in from the pages they read (a fifth of a code forge's login links: review
    # 19): the form again whoever opens it, and the bots' fetches as wasted
    people = [{**HUMAN, s.URL: u, s.BYTES: b} for u, b in logins[::4]]
    row = _one(_findings(session_id, rows + people))
    assert (row[s.PATTERN], row[s.REQUESTS], row[s.WASTED_REQUESTS]) == ("/user/login?destination", 1000, 800)
    # not a return-to name on another page people read: a travel site's destinations, nor
    # a page whose name holds a login word (an author's page)
    for path in ("/tours", "/authors/bob", "/sessions/2024", "/photo-session", "/designing-tours",
                 "/catalog-online", "/catalogue/login-free-cameras"):
        elsewhere = [{**r, s.URL: r[s.URL].replace("/user/login", path)} for r in rows[-len(logins):] + people]
        assert _findings(session_id, content_rows() + elsewhere).height == 0
    # Rails' Devise signs in at /users/sign_in, ASP.NET sites at /MemberLogin.aspx
    for path in ("/users/sign_in", "/MemberLogin.aspx"):
        login = [{**r, s.URL: r[s.URL].replace("/user/login", path)} for r in rows[-len(logins):] + people]
        assert _one(_findings(session_id, content_rows() + login))[s.PATTERN] == f"{path}?destination"
    # MediaWiki's returnto takes titles: the name says it all
    titles = [(f"/index.php?title=Special:UserLogin&returnto=Page_{i}", 9100 + i % 9) for i in range(300)]
    rows = content_rows() + [{**BOT, s.URL: u, s.BYTES: b} for u, b in titles]
    assert _one(_findings(session_id, rows))[s.PATTERN] == "/index.php?returnto&title"
    # a trip's destination is a filter: its values are no pages of the site
    trips = [(f"/flights?destination={WORDS[i % 9]}-{i}", 14800 + i % 7) for i in range(400)]
    rows = content_rows() + [{**BOT, s.URL: u, s.BYTES: b} for u, b in trips]
    assert _findings(session_id, rows).height == 0


def test_session_id_silent_on_numeric_ids_that_select_content():
    # a shop's product variants (/products/blue-shirt?variant=40123456789): one page per
    # product, each variant id a database number, crawled once each in a week's log. Duplicate
    # URLs, but not session ids minted per visit, and "keep them in cookies" would be wrong
    rows = content_rows()
    for p in range(60):
        rows += [{**BOT, s.URL: f"/product/{p}?variant={40_000_000_000 + 97 * p + v}",
                  s.BYTES: 12000 + 53 * p} for v in range(6)]
    assert _findings(session_id, rows).height == 0
    # the same with random tokens (letters and digits) as values: a session id
    tokens = [{**r, s.URL: r[s.URL].replace("variant=", "visit=x")} for r in rows[-360:]]
    assert _one(_findings(session_id, content_rows() + tokens))[s.PATTERN] == "/product/{n}?visit"


def replytocom_rows(spread: int) -> list[dict]:
    """WordPress's comment reply links: each post again once per comment (`?replytocom=ID`,
    the reply form moved under that comment, its author's name in the heading): 20 posts,
    300 copies, their sizes up to `spread` bytes apart."""
    return [
        {**BOT, s.URL: f"/article/{i % 20}/{_slug(i % 20)}?replytocom={5000 + i}",
         s.BYTES: 6000 + 37 * (i % 20) + (i * 7) % (spread + 1)}
        for i in range(300)
    ]


def test_session_id_fires_on_wordpress_reply_links():
    row = _one(_findings(session_id, content_rows() + replytocom_rows(spread=40)))
    assert (row[s.PATTERN], row[s.REQUESTS], row[s.WASTED_REQUESTS]) == (
        "/article/{n}/{slug}?replytocom", 300, 300)  # fmt: skip (each a copy of its post)
    ev = row["evidence"]
    assert (ev["session_param"], ev["pages"], ev["urls_per_page"], ev["one_size_share"]) == (
        "replytocom", 20, 15.0, 1.0)  # fmt: skip
    assert "replytocom" in row[s.ADVICE] and "cookies" not in row[s.ADVICE]


def test_session_id_fires_on_a_few_reply_links_per_post_crawled_again_and_again():
    # 40 posts with 3 comments each, every reply link fetched three times by bots in the
    # week, a tenth of them opened once by people too: 3 copies a post and a third of the
    # requests new, below an unnamed id's thresholds; the name says what they are (a review
    # site's WordPress blog: 8,253 bot requests on 2,663 such links, no finding)
    links = [(f"/article/{i % 40}/{_slug(i % 40)}?replytocom={7000 + i}", 6000 + 37 * (i % 40))
             for i in range(120)]
    rows = [{**BOT, s.URL: u, s.BYTES: b} for u, b in links for _ in range(3)]
    rows += [{**HUMAN, s.URL: u, s.BYTES: b} for u, b in links[::10]]
    row = _one(_findings(session_id, content_rows() + rows))
    assert (row[s.PATTERN], row[s.REQUESTS], row[s.WASTED_REQUESTS]) == (
        "/article/{n}/{slug}?replytocom", 372, 360)  # fmt: skip (every bot request)
    ev = row["evidence"]
    assert (ev["pages"], ev["copies_per_url"], ev["new_value_share"], ev["human_requests"]) == (
        40, 3.0, 0.323, 12)  # fmt: skip
    # a Q&A site's own `?replytocom=` answer permalinks, opened by people from their mail (60%
    # of the requests): pages, not copies (an adversarial review: every permalink blocked)
    rows += [{**HUMAN, s.URL: u, s.BYTES: b} for u, b in links for _ in range(4)]
    assert _findings(session_id, content_rows() + rows).height == 0


@pytest.mark.parametrize("status", [200, 302])
def test_session_id_fires_on_a_shops_add_to_cart_links_crawled_again_and_again(status):
    # WooCommerce's listing pages, 12 products each, every product's `?add-to-cart=ID` link
    # fetched three times in the week: the listing again with a notice naming the product,
    # or a redirect to the cart (review 17: 22% of the bot budget, no finding)
    links = [(f"/shop/page/{p}/?add-to-cart={100 + 12 * p + i}", 30000 + 97 * p + 3 * i)
             for p in range(2, 22) for i in range(12)]
    rows = [{**BOT, s.URL: u, s.STATUS: status, s.BYTES: b if status == 200 else 0}
            for u, b in links for _ in range(3)]
    row = _one(_findings(session_id, content_rows() + rows))
    assert (row[s.PATTERN], row[s.REQUESTS], row[s.WASTED_REQUESTS]) == (
        "/shop/page/{n}/?add-to-cart", 720, 720)  # fmt: skip (the listing's own URL does)
    ev = row["evidence"]
    assert (ev["session_param"], ev["pages"], ev["copies_per_url"]) == ("add-to-cart", 20, 12.0)
    assert row[s.ADVICE] == session_id.ACTION_ADVICE


NETWORKS = ("facebook", "x", "linkedin", "reddit", "pinterest", "email")


def share_rows(people_every: int = 0) -> tuple[list[dict], list[str]]:
    """Jetpack's sharing buttons under 40 posts, six networks each: every `?share=NETWORK&nb=1`
    link a redirect to the network, fetched twice by bots in the week; with `people_every`,
    one click in that many by people too. Returns the rows and the links."""
    links = [f"/article/{i}/{_slug(i)}?share={n}&nb=1" for i in range(40) for n in NETWORKS]
    rows = [{**BOT, s.URL: u, s.STATUS: 302, s.BYTES: 0} for u in links for _ in range(2)]
    if people_every:
        rows += [{**HUMAN, s.URL: u, s.STATUS: 302, s.BYTES: 0} for u in links[::people_every]]
    return rows, links


def test_session_id_fires_on_sharing_buttons_links():
    # a WordPress blog's Jetpack buttons: 17% of the bot budget on redirects to the networks,
    # which had no finding (a session's values are new on each request, these are six on
    # every post)
    rows, links = share_rows(people_every=20)
    row = _one(_findings(session_id, content_rows() + rows))
    assert (row[s.PATTERN], row[s.REQUESTS], row[s.WASTED_REQUESTS]) == (
        "/article/{n}/{slug}?nb&share", 492, 480)  # fmt: skip (every bot request)
    ev = row["evidence"]
    assert (ev["session_param"], ev["pages"], ev["copies_per_url"], ev["human_requests"]) == (
        "share", 40, 6.0, 12)  # fmt: skip
    assert row[s.ADVICE] == session_id.SHARE_ADVICE
    # its lines block every link, people's clicks too (redirects to the network, no page: a
    # person's click on a page's button, too few for a finding, kept them off as content),
    # and none of the posts
    about = "/about-us?share=facebook&nb=1"
    rows += [{**who, s.URL: about, s.STATUS: 302, s.BYTES: 0} for who in (BOT, HUMAN)]
    traffic = traffic_of(requests_frame(content_rows() + rows), EXACT)
    robots = Protego.parse(suggest(_findings(session_id, content_rows() + rows), traffic, EXACT).robots_txt)
    assert [u for u in [*links, about] if robots.can_fetch(f"https://x{u}", "Googlebot")] == []
    posts = [f"/article/{i}/{_slug(i)}" for i in range(200)]
    assert [u for u in posts if not robots.can_fetch(f"https://x{u}", "Googlebot")] == []


def test_session_id_silent_on_share_links_people_follow_or_that_name_no_network():
    # people making a fifth of the requests: links people follow, as action links' (a tenth
    # at most, `_UNNAMED_MAX_HUMAN_SHARE`)
    rows, _ = share_rows(people_every=2)
    assert _findings(session_id, content_rows() + rows).height == 0
    # values that are no network (a poll's `?share=results`, a list's `?share=1`)
    rows = [{**BOT, s.URL: f"/article/{i}/{_slug(i)}?share={v}&nb=1", s.STATUS: 302, s.BYTES: 0}
            for i in range(40) for v in ("1", "2", "results", "yes", "open", "all") for _ in range(2)]
    assert _findings(session_id, content_rows() + rows).height == 0


def test_session_id_silent_on_reply_links_that_lead_to_other_pages():
    # sizes a third apart: whatever the parameter does here, it is not the post again
    assert _findings(session_id, content_rows() + replytocom_rows(spread=3000)).height == 0


def test_facets_fires_on_filters_in_every_order():
    colors, sizes, sorts = ["red", "blue", "green"], ["s", "m", "l", "xl"], ["price", "new"]
    urls = []
    for sec in range(5):
        for c in colors:
            for z in sizes:
                for o in sorts:
                    urls.append((f"/section/{sec}/?color={c}&size={z}&sort={o}", 9000 + sec))
                    urls.append((f"/section/{sec}/?sort={o}&size={z}&color={c}", 9000 + sec))
    rows = content_rows() + [{**BOT, s.URL: u, s.BYTES: b} for u, b in urls]
    row = _one(_findings(facets, rows))
    assert (row[s.KIND], row[s.PATTERN], row[s.REQUESTS], row[s.WASTED_REQUESTS]) == (
        "facets", "/section/{n}/?color&size&sort", 240, 235)  # fmt: skip
    ev = row["evidence"]
    assert (ev["param_count"], ev["name_orders"], ev["distinct_sizes"], ev["urls_per_size"]) == (3, 2, 5, 48.0)
    # one set of filters on the path (the bare section and its ?page are none): found by the
    # two orders its names come in
    assert ev["param_sets"] == 1


def layered_navigation(subsets: int = 3, sizes: int | None = None) -> list[dict]:
    """A category's layered navigation: six filters, bots adding one after another, so every
    set of three (20 sets) comes in every order, `subsets` URLs per set... onto one empty
    page, or onto `sizes` distinct pages."""
    names = ["color", "size", "material", "climate", "activity", "style"]
    rows, i = [], 0
    for chosen in itertools.combinations(names, 3):
        for k in range(subsets):
            order = list(itertools.permutations(chosen))[k % 6]
            url = "/women/tops.html?" + "&".join(f"{n}={k}" for n in order)
            rows.append({**BOT, s.URL: url, s.BYTES: 38112 if sizes is None else 30000 + i % sizes})
            i += 1
    return rows


def test_facets_fires_on_one_trap_spread_over_every_set_of_filters():
    # 20 sets of three filters, 12 URLs each: no pattern had the 50 URLs a verdict needs, so
    # the trap went unseen. The path's sets count together; each is a sliver of the crawl
    # (0.5% of it: info), the severity is the path's (10%)
    rows = content_rows() + layered_navigation(subsets=12)
    out = _findings(facets, rows)
    assert out.height == 20
    assert out[s.SEVERITY].unique().to_list() == ["warning"]
    assert out[s.WASTED_REQUESTS].to_list() == [11] * 20
    ev = json.loads(out[s.EVIDENCE][0])
    assert (ev["path_sampled_urls"], ev["path_wasted_requests"], ev["param_sets"]) == (240, 220, 20)
    # fewer than 10 URLs a set say nothing on their own, whatever the path's total
    assert _findings(facets, content_rows() + layered_navigation(subsets=9)).height == 0


def test_facets_silent_on_small_sets_of_filters_people_browse():
    # a used-car search: most combinations "no cars match", a quarter list stock, which
    # people read; no set has the 50 URLs a verdict of its own needs. Counted together, they
    # were a trap, and its rule blocked the listings people read
    rows = layered_navigation(subsets=12)
    for i, row in enumerate(rows):
        if i % 4 == 0:
            row[s.BYTES] = 20000 + 53 * i
    people = [{**HUMAN, s.URL: r[s.URL], s.BYTES: r[s.BYTES]} for r in rows if r[s.BYTES] != 38112]
    assert _findings(facets, content_rows() + rows + people * 2).height == 0


def test_facets_silent_on_every_set_of_filters_showing_its_own_products():
    rows = content_rows() + layered_navigation(subsets=12, sizes=240)
    assert _findings(facets, rows).height == 0


PATH_FACETS = {"color": ["red", "blue", "green", "black"], "size": ["s", "m", "l", "xl"],
               "brand": ["acme", "zen", "nova"]}


def path_facet_rows(orders: int = 2, sizes: int | None = None, sep: str = "-") -> tuple[list[dict], list[str]]:
    """A shop's layered navigation written in the path (`/shoes/color-red/size-m/`, or with
    `sep` "/" `/shoes/color/red/size/m/`): people read each filter alone (a page each); bots
    fetch every pair of filters, in `orders` orders of the two, onto one "no products match"
    page, or onto `sizes` distinct pages. Returns the rows and the pairs' URLs."""
    rows, pairs, i = [], [], 0
    for name, values in PATH_FACETS.items():
        for value in values:
            one = {s.URL: f"/shoes/{name}{sep}{value}/", s.BYTES: 30000 + 77 * i}
            rows += [{**BOT, **one}, {**HUMAN, **one}, {**HUMAN, **one}]
            i += 1
    for a, b in itertools.combinations(PATH_FACETS, 2):
        for first, second in [(a, b), (b, a)][:orders]:
            for x in PATH_FACETS[first]:
                for y in PATH_FACETS[second]:
                    pairs.append(f"/shoes/{first}{sep}{x}/{second}{sep}{y}/")
                    size = 21000 if sizes is None else 40000 + len(pairs) % sizes
                    rows.append({**BOT, s.URL: pairs[-1], s.BYTES: size})
    return rows, pairs


@pytest.mark.parametrize("sep", ["-", "/"], ids=["color-red", "color/red"])
def test_facets_fires_on_filters_in_the_path_in_every_order(sep):
    # 75% of a generated shop's bot budget on such combinations gave "No crawler traps
    # found": each combination was a pattern of its own, one URL each
    rows, pairs = path_facet_rows(sep=sep)
    out = _findings(facets, content_rows() + rows)
    expected = {
        "/shoes/color-{value}/size-{value}/": 15, "/shoes/size-{value}/color-{value}/": 15,
        "/shoes/color-{value}/brand-{value}/": 11, "/shoes/brand-{value}/color-{value}/": 11,
        "/shoes/size-{value}/brand-{value}/": 11, "/shoes/brand-{value}/size-{value}/": 11,
    }  # every bot request but one per distinct page (one here)
    assert dict(zip(out[s.PATTERN], out[s.WASTED_REQUESTS])) == {
        p.replace("-{", sep + "{"): w for p, w in expected.items()}
    size_color = "/shoes/size-{value}/color-{value}/".replace("-{", sep + "{")
    ev = json.loads(out.filter(pl.col(s.PATTERN) == size_color)[s.EVIDENCE].item())
    assert (ev["params"], ev["varying_params"], ev["name_orders"], ev["param_sets"]) == ("size&color", 2, 2, 6)
    assert (ev["sampled_urls"], ev["distinct_sizes"], ev["path_sampled_urls"], ev["path_wasted_requests"]) == (
        16, 1, 80, 74)  # fmt: skip
    # its lines block every pair, and none of the filters people read alone
    traffic = traffic_of(requests_frame(content_rows() + rows), EXACT)
    robots = Protego.parse(suggest(out, traffic, EXACT).robots_txt)
    assert [u for u in pairs if robots.can_fetch(f"https://x{u}", "Googlebot")] == []
    alone = [r[s.URL] for r in rows if r[s.URL] not in pairs]
    assert [u for u in alone if not robots.can_fetch(f"https://x{u}", "Googlebot")] == []
    assert f"Disallow: /shoes/color{sep}*/size{sep}\n" in suggest(out, traffic, EXACT).robots_txt


def test_facets_in_the_path_people_read_in_one_order_are_no_shell_and_stay_open():
    # people open the site's own links, each pair in one order, most of them "no products
    # match": that page, answered to people on a pattern per pair of filters without a
    # query, was taken for a single-page app's shell, and the trap hid behind it
    rows, pairs = path_facet_rows()
    def in_order(url: str) -> bool:  # `/shoes/color-red/size-m/`: color before size
        names = [segment.split("-")[0] for segment in url.strip("/").split("/")[1:]]
        return names == [n for n in PATH_FACETS if n in names]

    read = [u for u in pairs if in_order(u)]
    rows += [{**HUMAN, s.URL: u, s.BYTES: 21000} for u in read]
    traffic = traffic_of(requests_frame(content_rows() + rows), EXACT)
    assert _shape.shell_sizes(traffic, EXACT).height == 0
    out = _findings(facets, content_rows() + rows)
    crawled = {"/shoes/size-{value}/color-{value}/": 15, "/shoes/brand-{value}/color-{value}/": 11,
               "/shoes/brand-{value}/size-{value}/": 11}  # the orders only bots fetch
    assert {p: w for p, w in zip(out[s.PATTERN], out[s.WASTED_REQUESTS]) if p in crawled} == crawled
    # the lines block the pairs in the crawlers' orders, none that people read
    robots = Protego.parse(suggest(out, traffic, EXACT).robots_txt)
    assert [u for u in pairs if u not in read and robots.can_fetch(f"https://x{u}", "Googlebot")] == []
    assert [u for u in read if not robots.can_fetch(f"https://x{u}", "Googlebot")] == []


def test_facets_silent_on_filters_in_the_path_in_one_order_or_each_its_own_page():
    # two filters in the site's one order: pages of one template, as `?color=&size=` are
    rows, _ = path_facet_rows(orders=1)
    assert _findings(facets, content_rows() + rows).height == 0
    # in both orders, each combination showing its own products
    rows, _ = path_facet_rows(sizes=1000)
    assert _findings(facets, content_rows() + rows).height == 0


PACKED = {"Size": ["S", "M", "L"], "Color": ["White", "Black", "Red", "Blue"], "Composition": ["Cotton", "Polyester"]}


def packed_rows(sizes: int | None = None) -> tuple[list[dict], list[str]]:
    """PrestaShop's faceted search: every filter in `?q=` (`Size-S/Color-White`, in the
    module's one order), bots fetching every set of one to three filters with every value;
    each filter alone a page of its own, people reading them; sets of two or more onto one
    "no products match" page, or onto `sizes` distinct pages. Returns the rows and the URLs
    of the sets of two or more."""
    rows, sets = [], []
    for k in (1, 2, 3):
        for names in itertools.combinations(PACKED, k):
            for values in itertools.product(*(PACKED[n] for n in names)):
                url = "/3-clothes?q=" + "/".join(f"{n}-{v}" for n, v in zip(names, values))
                if k == 1:
                    one = {s.URL: url, s.BYTES: 30000 + 97 * len(rows)}
                    rows += [{**BOT, **one}, {**HUMAN, **one}]
                else:
                    sets.append(url)
                    size = 21000 if sizes is None else 40000 + len(sets) % sizes
                    rows.append({**BOT, s.URL: url, s.BYTES: size})
    return rows, sets


def test_facets_fires_on_filters_packed_in_one_parameter():
    # a PrestaShop shop: every set of filters is one pattern, `/{n}-clothes?q`, whose one
    # parameter made it no facets at all (75% of a generated shop's bot budget: no finding)
    rows, sets = packed_rows()
    row = _one(_findings(facets, content_rows() + rows))
    assert (row[s.PATTERN], row[s.REQUESTS], row[s.WASTED_REQUESTS]) == ("/{n}-clothes?q", 68, 49)
    ev = row["evidence"]
    assert (ev["params"], ev["param_count"], ev["varying_params"], ev["name_orders"], ev["param_sets"]) == (
        "Color&Composition&Size", 3, 3, 1, 7)  # fmt: skip
    assert (ev["sampled_urls"], ev["distinct_sizes"], ev["urls_per_size"]) == (59, 10, 5.9)
    assert row[s.EXAMPLES] and set(row[s.EXAMPLES]) <= set(sets)  # no filter alone
    # its lines take the sets of two filters or more, not one filter alone (people's or not)
    traffic = traffic_of(requests_frame(content_rows() + rows), EXACT)
    text = suggest(_findings(facets, content_rows() + rows), traffic, EXACT).robots_txt
    assert "Disallow: /*-clothes?q=*/\nDisallow: /*-clothes?*&q=*/\n" in text
    robots = Protego.parse(text)
    assert [u for u in sets if robots.can_fetch(f"https://x{u}", "Googlebot")] == []
    alone = [r[s.URL] for r in rows if r[s.URL] not in sets]
    assert len(alone) == 18 and [u for u in alone if not robots.can_fetch(f"https://x{u}", "Googlebot")] == []


def test_facets_silent_on_packed_filters_each_its_own_page_and_on_a_search_for_hyphened_words():
    rows, _ = packed_rows(sizes=1000)
    assert _findings(facets, content_rows() + rows).height == 0
    # a search's `q`: words joined by "-", a third with a "/" ("ac-dc/live"), all one empty
    # page: as many first words as searches, no filters' few names
    first = [f"{w}{i}" for i in range(3) for w in WORDS]
    terms = [f"{a}-{b}" for a in first for b in WORDS[:2]] + [f"{a}-{b}/{b}-{a}" for a in first for b in WORDS[3:4]]
    rows = bots([f"/search?q={w}&sort={o}" for w in terms for o in ("price", "name")], bytes=4100)
    assert _findings(facets, content_rows() + rows).height == 0


COLOURS = ["red", "blue", "green", "black", "white"]


def listed_rows(sizes: int | None = None, orders: bool = True) -> tuple[list[dict], list[str]]:
    """WooCommerce's layered navigation: a filter's values listed in its one parameter in the
    order they were picked (`?filter_color=red,blue`), bots fetching every list of two and
    three colours (in every order, or in one with `orders=False`) onto one "no products match"
    page, or onto `sizes` distinct pages; each colour alone a page of its own, people reading
    them. Returns the rows and the URLs of the lists."""
    rows, lists = [], []
    for i, colour in enumerate(COLOURS):
        one = {s.URL: f"/product-category/shirts/?filter_color={colour}", s.BYTES: 30000 + 97 * i}
        rows += [{**BOT, **one}, {**HUMAN, **one}]
    for k in (2, 3):
        picks = itertools.permutations(COLOURS, k) if orders else itertools.combinations(COLOURS, k)
        for picked in picks:
            lists.append(f"/product-category/shirts/?filter_color={','.join(picked)}")
            size = 21000 if sizes is None else 40000 + len(lists) % sizes
            rows.append({**BOT, s.URL: lists[-1], s.BYTES: size})
    return rows, lists


def test_facets_fires_on_a_filter_whose_values_are_listed_in_its_parameter():
    # a WooCommerce shop: `?filter_color=red,blue` is one parameter, so its lists, in every
    # order, were no facets at all
    rows, lists = listed_rows()
    row = _one(_findings(facets, content_rows() + rows))
    # 90 requests, 85 by bots; 85 URLs answered 200 in 6 sizes (the colours' 5, the empty
    # list's 1): 85 * (1 - 6 / 85) = 79 wasted
    assert (row[s.PATTERN], row[s.REQUESTS], row[s.WASTED_REQUESTS]) == ("/product-category/shirts/?filter_color", 90, 79)
    ev = row["evidence"]
    # a listed value is a filter: three at most; a set of three colours in six orders; sets:
    # 10 pairs, 10 threes and the filter with one value
    assert (ev["params"], ev["param_count"], ev["name_orders"], ev["param_sets"]) == ("filter_color", 3, 6, 21)
    assert (ev["sampled_urls"], ev["distinct_sizes"], ev["urls_per_size"]) == (85, 6, 14.2)
    assert row[s.EXAMPLES] and set(row[s.EXAMPLES]) <= set(lists)  # no colour alone
    # its lines take the lists, not a colour alone, which people read
    traffic = traffic_of(requests_frame(content_rows() + rows), EXACT)
    text = suggest(_findings(facets, content_rows() + rows), traffic, EXACT).robots_txt
    assert ("Disallow: /product-category/shirts/?filter_color=*,\n"
            "Disallow: /product-category/shirts/?*&filter_color=*,\n") in text
    robots = Protego.parse(text)
    assert [u for u in lists if robots.can_fetch(f"https://x{u}", "Googlebot")] == []
    alone = [r[s.URL] for r in rows if r[s.URL] not in lists]
    assert len(alone) == 10 and [u for u in alone if not robots.can_fetch(f"https://x{u}", "Googlebot")] == []


def test_facets_silent_on_listed_values_each_its_own_page_in_one_order():
    # each list of colours showing its own products, picked in one order
    rows, _ = listed_rows(sizes=1000, orders=False)
    assert _findings(facets, content_rows() + rows).height == 0
    # a map's boxes, four numbers listed in `?bbox=`, each its own tile
    boxes = [f"/tiles?bbox={x},{y},{x + 1},{y + 1}" for x in range(12) for y in range(12)]
    rows = [{**BOT, s.URL: u, s.BYTES: 9000 + 31 * i} for i, u in enumerate(boxes)]
    assert _findings(facets, content_rows() + rows).height == 0


def large_facets(sizes: int) -> list[dict]:
    """A large shop's filters: 2,000 category pages under 25 combinations of three filters
    each, 50,000 URLs (the default sample keeps 1,000); their responses take `sizes` sizes."""
    combos = [(c, z, o) for c in ("red", "blue", "green", "black", "white")
              for z in ("s", "m", "l", "xl", "xxl") for o in ("new",)]  # fmt: skip
    rows = []
    for i in range(50_000):
        c, z, o = combos[i // 2000]
        rows.append({**BOT, s.URL: f"/c/{i % 2000}?color={c}&size={z}&sort={o}",
                     s.BYTES: 20_000 + i % sizes})
    return rows


def test_facets_silent_on_a_large_filter_space_of_distinct_pages():
    # 50,000 URLs, each its own response: real filtered listings. (Were their 50,000 responses
    # 2,000, 25 URLs each, the 1,000 sampled URLs would still show nearly one size each: a
    # trap whose responses outnumber the sample is not seen by its sizes. Estimating the
    # pattern's sizes from the sample's (Chao & Lin) was tried: it sees that trap, but a large
    # catalog's real pages share sizes by chance, ~7 URLs per size over 50,000 pages.)
    rows = content_rows() + large_facets(sizes=50_000)
    assert _findings(facets, rows, settings=Settings()).height == 0


def test_pagination_fires_past_the_last_page():
    past = [f"/section/{sec}/?page={p}" for sec in range(10) for p in range(9, 109)]
    row = _one(_findings(pagination, content_rows() + bots(past, bytes=1500)))
    assert (row[s.KIND], row[s.PATTERN], row[s.REQUESTS], row[s.WASTED_REQUESTS]) == (
        "pagination", "/section/{n}/?page", 3 * 70 + 70 + 1000, 1000)  # fmt: skip
    ev = row["evidence"]
    assert (ev["last_page_with_content"], ev["first_page_past_last"], ev["max_page_requested"]) == (8, 9, 108)
    assert (ev["pages_past_last"], ev["empty_size"], ev["human_requests_past_last"]) == (1000, 1500, 0)


def test_pagination_judges_a_shops_collections_paged_past_their_ends_together():
    # 12 collections, pages 2..4 with products, 5..25 one empty page: under one percent of
    # the bot budget each, a tenth together (a review shop: 20 findings, all info, that cron
    # never reported)
    names = ["shoes", "bags", "dresses", "skirts", "jeans", "tops", "knitwear", "swim",
             "beauty", "gifts", "home", "kids"]
    real = [(f"/collections/{n}?page={p}", 9000 + 100 * i + 10 * p)
            for i, n in enumerate(names) for p in range(2, 5)]
    rows = [{**who, s.URL: u, s.BYTES: b} for u, b in real for who in (BOT, HUMAN)]
    rows += bots([f"/collections/{n}?page={p}" for n in names for p in range(5, 26)], bytes=1500)
    out = _findings(pagination, content_rows() + rows)
    assert out.height == 12
    assert set(out[s.SEVERITY]) == {"warning"}
    row = _one(out.filter(pl.col(s.PATTERN) == "/collections/shoes?page"))
    assert (row[s.WASTED_REQUESTS], row["evidence"]["sibling_listings"],
            row["evidence"]["sibling_wasted_requests"]) == (21, 12, 252)
    # alone, one collection's is info
    alone = [r for r in rows if "/shoes?" in r[s.URL]]
    assert _one(_findings(pagination, content_rows() + alone))[s.SEVERITY] == "info"
    # listings at the root, or under a placeholder, are no siblings: each is judged alone
    # (code review: `/news?page` and `/forum?page` made each other warnings)
    apart = [r for r in rows if "/shoes?" in r[s.URL] or "/bags?" in r[s.URL]]
    for a, b in (("/news", "/forum"), ("/user/7", "/tag/7")):
        pair = [{**r, s.URL: r[s.URL].replace("/collections/shoes", a).replace("/collections/bags", b)}
                for r in apart]
        out = _findings(pagination, content_rows() + pair)
        assert (out.height, set(out[s.SEVERITY])) == (2, {"info"}), (a, b)


def test_pagination_judges_each_listings_own_empty_page_where_their_names_merge():
    # (review 18, Shopify) 30 collections merged into `/collections/{slug}?page`, each empty
    # page with the collection's title and description in it: no one size for half the
    # pattern's pages, and 17% of the bots' requests went unreported
    names = [f"{a}-{b}" for a in ("summer", "winter", "city", "trail", "studio", "harbor")
             for b in ("hats", "bags", "boots", "coats", "scarves")]
    rows = []
    for i, n in enumerate(names):
        rows += [{**who, s.URL: f"/collections/{n}?page={p}", s.BYTES: 60000 + 1000 * i + 97 * p}
                 for p in range(2, 4) for who in (BOT, HUMAN)]
        rows += [{**BOT, s.URL: f"/collections/{n}?page={p}", s.BYTES: 20000 + 413 * i + p % 3}
                 for p in range(4, 30)]
    row = _one(_findings(pagination, content_rows() + rows))
    # (a listing's first empty page counts as its last: a forum repeating its last page past
    # the end, phpBB, repeats a real page; adversarial review 18)
    assert (row[s.PATTERN], row[s.WASTED_REQUESTS]) == ("/collections/{name}?page", 30 * 25)
    ev = row["evidence"]
    assert (ev["listings"], ev["last_page_with_content"], ev["first_page_past_last"]) == (30, 4, 5)
    # a listing with a page between its empty one and its pages with content is one
    # template's pages a few bytes apart (the newest a digit wider): not judged
    wider = [{**r, s.BYTES: r[s.BYTES] + 30} if r[s.URL] == "/collections/summer-hats?page=4" else r
             for r in rows]
    assert _one(_findings(pagination, content_rows() + wider))[s.WASTED_REQUESTS] == 29 * 25
    # phpBB's topics: a `start=` past the end answers the last page, which the listing's
    # pages past it repeat; the last page is no waste
    topics = []
    for i in range(30):
        last = 15 * (2 + i % 3)
        topics += [{**BOT, s.URL: f"/viewtopic.php?t={i}&start={n}", s.BYTES: 40000 + 311 * i + 7 * n}
                   for n in range(15, last, 15)]
        topics += [{**BOT, s.URL: f"/viewtopic.php?t={i}&start={n}", s.BYTES: 21000 + 97 * i}
                   for n in range(last, last + 15 * 6, 15)]
    row = _one(_findings(pagination, content_rows() + topics))
    assert row[s.WASTED_REQUESTS] == 30 * 5
    # a gallery's albums, 24 thumbnails of fixed-width names a page, alike within a few bytes
    # from page 2 on, page 1 bigger (adversarial review 18): real pages, no trap
    albums = [{**BOT, s.URL: f"/album/{a}?page={p}",
               s.BYTES: 30000 + 211 * a + (900 if p == 1 else (p * 5) % 7)}
              for a in range(40) for p in range(1, 4 + a % 9)]
    assert _findings(pagination, content_rows() + albums).height == 0
    assert all(int(u.rpartition("=")[2]) > 15 * (2 + int(u.split("t=")[1].split("&")[0]) % 3) for u in row[s.EXAMPLES])


def test_pagination_reads_xenforos_page_segment():
    # XenForo's 60 threads: /threads/<title>.<id>/page-N, real to page 3, one empty page past
    # it (a review forum: only a growing pattern, whose advice does not fit)
    real = [(f"/threads/{_slug(t)}.{100 + t}/page-{p}", 20000 + 211 * t + 37 * p)
            for t in range(60) for p in range(2, 4)]
    rows = [{**who, s.URL: u, s.BYTES: b} for u, b in real for who in (BOT, HUMAN)]
    rows += bots([f"/threads/{_slug(t)}.{100 + t}/page-{p}" for t in range(60) for p in range(4, 30)],
                 bytes=12480)
    row = _one(_findings(pagination, content_rows() + rows))
    assert (row[s.PATTERN], row[s.WASTED_REQUESTS]) == ("/threads/{name}/page-{n}", 60 * 26)
    ev = row["evidence"]
    assert (ev["last_page_with_content"], ev["first_page_past_last"], ev["listings"]) == (3, 4, 60)


@pytest.mark.parametrize("param", ["tribe_paged", "product-page", "cpage", "query-3-page"])
def test_pagination_reads_plugins_page_parameters(param):
    # The Events Calendar's past events `?eventDisplay=past&tribe_paged=N`, real to page 18
    # (review 17: missed, 4,174 requests), WooCommerce's block pager, a query loop's
    real = [(f"/events/list/?eventDisplay=past&{param}={p}", 20000 + 211 * p) for p in range(2, 19)]
    rows = [{**who, s.URL: u, s.BYTES: b} for u, b in real for who in (BOT, HUMAN)]
    rows += bots([f"/events/list/?eventDisplay=past&{param}={p}" for p in range(19, 80)], bytes=12480)
    row = _one(_findings(pagination, content_rows() + rows))
    ev = row["evidence"]
    assert (row[s.WASTED_REQUESTS], ev["last_page_with_content"], ev["first_page_past_last"]) == (61, 18, 19)


def test_pagination_evidence_is_one_listings_last_page_and_first_past_it():
    # two searches' pages: "boots" real to page 40 (5 past it), "hats" to page 3 (67 past):
    # the evidence said last page 40, first past it 4 (one listing's beside the other's)
    real = [(f"/search?q=boots&page={p}", 20000 + 37 * p) for p in range(2, 41)]
    real += [(f"/search?q=hats&page={p}", 30000 + 37 * p) for p in range(2, 4)]
    rows = [{**who, s.URL: u, s.BYTES: b} for u, b in real for who in (BOT, HUMAN)]
    rows += bots([f"/search?q=boots&page={p}" for p in range(41, 46)]
                 + [f"/search?q=hats&page={p}" for p in range(4, 71)], bytes=1500)
    ev = _one(_findings(pagination, content_rows() + rows))["evidence"]
    assert (ev["example_listing"], ev["last_page_with_content"], ev["first_page_past_last"]) == (
        "/search?q=hats&page={n}", 3, 4)
    assert (ev["max_page_requested"], ev["pages_past_last"], ev["listings"]) == (70, 72, 2)


def test_pagination_fires_past_the_last_page_when_a_token_spreads_the_empty_page():
    # the empty listing carries a CSRF token: its size spreads over 1,496-1,504 bytes (it was
    # missed: the empty page had to be one exact size); a page 16 bytes off its middle is no
    # page with content that would make its listing look longer
    past = [f"/section/{sec}/?page={p}" for sec in range(10) for p in range(9, 109)]
    rows = [{**BOT, s.URL: u, s.BYTES: 1496 + (i * 7) % 9} for i, u in enumerate(past)]
    rows += [{**BOT, s.URL: f"/section/{sec}/?page=200", s.BYTES: 1516} for sec in range(10)]
    row = _one(_findings(pagination, content_rows() + rows))
    assert (row[s.PATTERN], row[s.WASTED_REQUESTS]) == ("/section/{n}/?page", 1000)
    ev = row["evidence"]
    assert (ev["last_page_with_content"], ev["first_page_past_last"], ev["pages_past_last"]) == (8, 9, 1000)


@pytest.mark.parametrize("spread", [12, 31])
def test_pagination_silent_on_real_pages_of_fixed_width_rows(spread):
    # an explorer's 600 pages of blocks, 20 rows of one width each: sizes within a few dozen
    # bytes, more than half in any 17-byte window. They were all "past the last page", and
    # Disallow: /blocks?p= blocked pages people read
    pages = [(f"/blocks?p={p}", 5000 + (p * 7) % spread) for p in range(1, 601)]
    rows = [{**BOT, s.URL: u, s.BYTES: b} for u, b in pages] * 3
    rows += [{**HUMAN, s.URL: u, s.BYTES: b} for u, b in pages[:5]] * 2
    assert _findings(pagination, content_rows() + rows).height == 0


def test_pagination_silent_when_the_newest_pages_are_a_digit_wider():
    # the same explorer, its newest 300 pages 25 bytes bigger (block heights one digit
    # longer): those were "pages with content", and every older page "past the last"
    pages = [(f"/blocks?p={p}", (5025 if p <= 300 else 5000) + (p * 7) % 9) for p in range(1, 901)]
    rows = [{**BOT, s.URL: u, s.BYTES: b} for u, b in pages] * 3
    rows += [{**HUMAN, s.URL: u, s.BYTES: b} for u, b in pages[:5]] * 2
    assert _findings(pagination, content_rows() + rows).height == 0


def test_calendar_silent_on_product_ids_that_look_like_a_year_and_a_month():
    # ids 20000-20999 at the end of a slug: "20011" is no date (it would read 2001-1, and the
    # catalog would span 2000-01 to 2099-09), so no Disallow for the catalog
    products = [{**BOT, s.URL: f"/product/{_slug(i)}-{20000 + i}", s.BYTES: 9000 + 37 * i}
                for i in range(1000)]
    assert _findings(calendar, content_rows() + products).height == 0


def test_soft_404_fires_on_the_error_page_size():
    rows = content_rows()
    rows += bots([f"/gone/{i}" for i in range(10)], status=404, bytes=512)
    rows += bots([f"/product/{i}" for i in range(300, 340)], bytes=512)  # unknown ids, 200 + error page
    row = _one(_findings(soft_404, rows))
    assert (row[s.KIND], row[s.PATTERN], row[s.REQUESTS], row[s.WASTED_REQUESTS]) == (
        "soft_404", "/product/{n}", 3 * 300 + 300 + 40, 40)  # fmt: skip
    ev = row["evidence"]
    assert (ev["error_page_size"], ev["soft_404_urls"], ev["error_signature"]) == (512, 40, True)


def test_soft_404_fires_on_an_error_page_that_echoes_the_path():
    # "No page at /product/301": the 404s and the soft 404s are 500 bytes and the path
    rows = content_rows()
    gone = [f"/gone/{i}{'x' * i}" for i in range(10)]
    rows += [r for u in gone for r in bots([u], status=404, bytes=500 + len(u))]
    unknown = [f"/product/{i}" for i in range(300, 340)]
    rows += [r for u in unknown for r in bots([u], bytes=500 + len(u))]
    row = _one(_findings(soft_404, rows))
    assert (row[s.PATTERN], row[s.WASTED_REQUESTS]) == ("/product/{n}", 40)
    assert (row["evidence"]["error_page_size"], row["evidence"]["soft_404_urls"]) == (500, 40)


def test_soft_404_silent_on_profiles_of_the_error_pages_layout():
    # a forum's 404 page is 7,420 bytes in the layout of its member profiles, which spread
    # over 7,390-7,450: near the error page, but no denser there than beside it
    rows = content_rows() + bots([f"/gone/{i}" for i in range(10)], status=404, bytes=7420)
    profiles = [(f"/u/member{i}", 7390 + (i * 37) % 61) for i in range(600)]
    rows += [{**BOT, s.URL: u, s.BYTES: b} for u, b in profiles]
    rows += [{**HUMAN, s.URL: u, s.BYTES: b} for u, b in profiles[::5]]
    assert _findings(soft_404, rows).height == 0


def catalog_around() -> list[dict]:
    """2,000 items whose page sizes spread evenly over 12,000-16,000 bytes, read by people."""
    items = [(f"/item/{i}", 12000 + (i * 7919) % 4000) for i in range(2000)]
    return ([{**BOT, s.URL: u, s.BYTES: b} for u, b in items]
            + [{**HUMAN, s.URL: u, s.BYTES: b} for u, b in items[::4]])


def test_soft_404_silent_on_real_pages_merely_near_the_error_page_size():
    # the 404 page is 14,000 bytes, inside the catalog's spread: 64 items fall within 64 bytes
    # of it, about as many as in any window of that width
    rows = content_rows() + bots([f"/gone/{i}" for i in range(10)], status=404, bytes=14000)
    assert _findings(soft_404, rows + catalog_around()).height == 0
    # a 404 page of another size, and 40 unknown items answered 200 with it: they stand out
    rows = content_rows() + bots([f"/gone/{i}" for i in range(10)], status=404, bytes=9000)
    missing = bots([f"/item/{i}" for i in range(2000, 2040)], bytes=9004)
    row = _one(_findings(soft_404, rows + catalog_around() + missing))
    assert (row[s.PATTERN], row[s.WASTED_REQUESTS], row["evidence"]["soft_404_urls"]) == (
        "/item/{n}", 40, 40)


def test_soft_404_fires_on_a_route_answering_any_value_alike():
    missing = [f"/missing/{i}/{_slug(i)}" for i in range(100)]
    row = _one(_findings(soft_404, content_rows() + bots(missing, bytes=512)))
    assert (row[s.PATTERN], row[s.REQUESTS], row[s.WASTED_REQUESTS]) == ("/missing/{n}/{slug}", 100, 100)
    ev = row["evidence"]
    assert (ev["any_value_one_page"], ev["answer_size"], ev["soft_404_urls"]) == (True, 512, 100)


def test_soft_404_fires_on_a_route_of_names_answering_any_name_alike():
    # /user/<name> answers 200 "no such user" for any name: 56 names, one pattern once merged
    names = [f"/user/{a}{b}" for a in WORDS for b in WORDS[:7] if a != b]
    row = _one(_findings(soft_404, content_rows() + bots(names, bytes=777)))
    assert (row[s.PATTERN], row[s.REQUESTS], row[s.WASTED_REQUESTS]) == ("/user/{name}", 56, 56)
    # real profiles, each its own size: silent
    profiles = [{**BOT, s.URL: u, s.BYTES: 5000 + 61 * i} for i, u in enumerate(names)]
    assert _findings(soft_404, content_rows() + profiles).height == 0


def test_soft_404_fires_on_a_page_echoing_the_value_asked_for():
    # "No product named <value>": the page's size grows with the URL, byte for byte
    missing = [f"/missing/{i}/{_slug(i)}" for i in range(100)]
    rows = [{**BOT, s.URL: u, s.BYTES: 480 + len(u)} for u in missing]
    assert len({r[s.BYTES] for r in rows}) > 5
    row = _one(_findings(soft_404, content_rows() + rows))
    assert (row[s.PATTERN], row[s.WASTED_REQUESTS], row["evidence"]["soft_404_urls"]) == (
        "/missing/{n}/{slug}", 100, 100)


def test_soft_404_fires_on_a_page_whose_size_a_token_spreads():
    # one "not found" page with a CSRF token, compressed: its size varies over 12 bytes, and
    # the commonest size is at an edge (seen on real gzip output)
    missing = [f"/missing/{i}/{_slug(i)}" for i in range(100)]
    rows = [{**BOT, s.URL: u, s.BYTES: 7180 + (0, 0, 1, 3, 5, 8, 12)[i % 7]} for i, u in enumerate(missing)]
    row = _one(_findings(soft_404, content_rows() + rows))
    assert (row[s.PATTERN], row["evidence"]["soft_404_urls"]) == ("/missing/{n}/{slug}", 100)
    # ...and when the page also echoes the value asked for, not byte for byte
    rows = [{**BOT, s.URL: u, s.BYTES: 7180 + len(u) + (0, 2, 3, 5)[i % 4]} for i, u in enumerate(missing)]
    assert _one(_findings(soft_404, content_rows() + rows))["evidence"]["soft_404_urls"] == 100


def test_soft_404_silent_on_real_pages_of_one_template():
    # member profiles, most of them empty: one template, sizes within 30 bytes that the URL
    # does not explain (the member's name, their join date): real pages, not a "not found"
    profiles = [{**BOT, s.URL: f"/members/{i}/", s.BYTES: 7390 + i * 7919 % 31} for i in range(100)]
    assert _findings(soft_404, content_rows() + profiles).height == 0


def test_relative_loop_fires_on_nesting_segments():
    loop = ["/docs" + "/related" * depth for depth in range(1, 41)]
    row = _one(_findings(relative_loop, content_rows() + bots(loop, bytes=7000)))
    assert (row[s.KIND], row[s.PATTERN], row[s.REQUESTS], row[s.WASTED_REQUESTS]) == (
        "relative_loop", "/docs/related/related/{loop}", 39, 39)  # fmt: skip
    ev = row["evidence"]
    assert (ev["repeated_segment"], ev["max_repeats"], ev["max_depth"], ev["site_depth"]) == ("related", 40, 41, 4)



def test_relative_loop_silent_on_a_real_tree_that_names_a_segment_again():
    # a docs site's module `api` with functions, one of them `api` too: the segment three
    # times in `/docs/v3/api/reference/modules/api/functions/api/`, pages people read half the
    # time (a scenario review: 21 sitemap pages called a loop, WARNING, "answer 404")
    functions = ["api", "retry", "fetch", "parse", "load", "dump", "open"]
    pages = [f"/docs/v{v}/api/reference/modules/api/functions/{fn}/" for v in (1, 2, 3) for fn in functions]
    rows = [{**who, s.URL: u, s.BYTES: 12000 + 131 * i} for i, u in enumerate(pages) for who in (BOT, HUMAN)]
    assert _findings(relative_loop, content_rows() + rows).height == 0
    # the same pages, crawlers' alone: their deep nestings are crawlers' URLs, and a loop
    bots_only = [r for r in rows if r[s.IS_BOT]]
    assert _one(_findings(relative_loop, content_rows() + bots_only))["evidence"]["repeated_segment"] == "api"


LANGS, CURRENCIES = ["de", "fr", "sv", "it"], ["EUR", "SEK", "CHF"]


def appended_switchers(products: int = 20) -> list[dict]:
    """A shop whose language and currency switchers append to the query instead of setting
    it: crawlers click on, `?lang=de&currency=EUR&lang=fr&currency=SEK&lang=de...`, the page
    of the last value again; people read the product pages with one of each."""
    rows = []
    for p in range(products):
        clicks = [f"lang={LANGS[(p + i) % 4]}&currency={CURRENCIES[(p + i) % 3]}" for i in range(6)]
        for depth in range(2, 7):
            rows.append({**BOT, s.URL: f"/products/item-{p}?" + "&".join(clicks[:depth]), s.BYTES: 30000 + 97 * p})
        rows += [{**who, s.URL: f"/products/item-{p}?{clicks[0]}", s.BYTES: 30000 + 97 * p} for who in (BOT, HUMAN)]
    return rows


def test_relative_loop_fires_on_a_parameter_appended_again_and_again():
    # review 17: 9,567 requests (20% of the bot budget), no finding
    row = _one(_findings(relative_loop, content_rows() + appended_switchers()))
    assert (row[s.PATTERN], row[s.REQUESTS]) == ("/products/item-{n}?currency&lang", 140)
    # (wasted: the URLs of 2 to 6 clicks, carrying the names twice; found by those of 4, 5 and
    # 6 clicks, where a currency's pair has come back, and a language's)
    assert row[s.WASTED_REQUESTS] == 100
    ev = row["evidence"]
    assert (ev["repeated_params"], ev["doubled_urls"], ev["max_params"], ev["human_requests_doubled"]) == (
        ["currency", "lang"], 60, 12, 0)
    assert row[s.ADVICE] == relative_loop.APPEND_ADVICE


def test_relative_loop_silent_on_a_multi_select_filter_and_on_loops_people_make():
    # `?color=red&color=blue&color=tan`: a name twice or three times, never a pair (30 URLs)
    colors = ["red", "blue", "green", "black", "tan", "grey"]
    filters = [{**BOT, s.URL: f"/shop?color={a}&color={b}&color={c}", s.BYTES: 9000 + 37 * i}
               for i, (a, b, c) in enumerate((a, b, c) for a in colors for b in colors for c in colors
                                             if a < b < c)]
    assert len(filters) == 20
    assert _findings(relative_loop, content_rows() + filters).height == 0
    # a form's hidden field sent twice on every URL, each a page of its own (adversarial
    # review 17b: 24 findings, their rules took 244 listing pages people read)
    forms = [{**BOT, s.URL: f"/catalog/boots?brand={b}&view=grid&view=grid&page={p}", s.BYTES: 20000 + 37 * p + b}
             for b in range(5) for p in range(1, 9)]
    assert _findings(relative_loop, content_rows() + forms).height == 0
    # ...and a grid toggle appending it a third time on some of them (review 17c: 23 findings
    # again): a loop needs the pages it appends to, with the name once
    toggles = [{**r, s.URL: r[s.URL] + "&view=grid"} for r in forms[::3]]
    assert _findings(relative_loop, content_rows() + forms + toggles).height == 0
    # the same switcher, its long URLs clicked by people more than by crawlers
    rows = appended_switchers()
    rows += [{**r, **HUMAN} for r in rows if r[s.URL].count("&") > 2] * 2
    assert _findings(relative_loop, content_rows() + rows).height == 0


def test_random_token_fires_on_fresh_short_links():
    tokens = [f"/s/{i * 2654435761 % 36**8:08x}z9" for i in range(300)]
    row = _one(_findings(random_token, content_rows() + bots(tokens, bytes=900)))
    assert (row[s.KIND], row[s.PATTERN], row[s.REQUESTS], row[s.WASTED_REQUESTS]) == (
        "random_token", "/s/{token}", 300, 300)  # fmt: skip
    ev = row["evidence"]
    assert (ev["requests_per_url"], ev["share_from_bots"], ev["distinct_sizes"]) == (1.0, 1.0, 1)


def test_random_token_silent_on_a_catalog_of_hex_ids():
    items = [(f"/item/{i * 2654435761 % 16**10:010x}", 30000 + 7 * i) for i in range(300)]
    rows = content_rows() + [{**BOT, s.URL: u, s.BYTES: b} for u, b in items]
    assert _findings(random_token, rows).height == 0


def test_random_token_silent_on_a_catalog_of_hex_ids_revalidated_with_304():
    """A crawler that fetched a page before asks again with If-Modified-Since and gets 304
    Not Modified: the URL is stable, the opposite of a token minted per view. Most of
    Googlebot's refetches on a site with ETags are 304s; they are not redirects."""
    items = [f"/item/{i * 2654435761 % 16**6:06x}beef" for i in range(300)]  # all {hex}
    rows = content_rows() + [{**BOT, s.URL: u, s.STATUS: 304, s.BYTES: 0} for u in items]
    assert _findings(random_token, rows).height == 0
    minted = [{**BOT, s.URL: u, s.STATUS: 302, s.BYTES: 0} for u in items]  # a real redirect
    row = _one(_findings(random_token, content_rows() + minted))
    assert (row[s.PATTERN], row[s.WASTED_REQUESTS], row["evidence"]["redirect_share"]) == (
        "/item/{hex}", 300, 1.0)  # fmt: skip


def test_internal_search_fires_on_bots_fetching_search_results():
    searches = [f"/search?q=word{i}" for i in range(200)]
    row = _one(_findings(internal_search, content_rows() + bots(searches, bytes=5000)))
    assert (row[s.KIND], row[s.PATTERN], row[s.REQUESTS], row[s.WASTED_REQUESTS]) == (
        "internal_search", "/search?q", 230, 200)  # fmt: skip
    ev = row["evidence"]
    assert (ev["search_params"], ev["search_path"], ev["bot_requests"], ev["human_requests"]) == ("q", True, 200, 30)


def test_internal_search_silent_on_lists_whose_search_box_is_empty():
    # Gitea links every issue list with its filters and an empty `q=`: lists, not searches
    # (they were a warning, and one Disallow per repository on a code host)
    lists = [f"/u/repo/issues?type=all&sort={o}&state={st}&labels={i}&q="
             for o in ("oldest", "newest", "mostcomment") for st in ("open", "closed") for i in range(40)]
    rows = content_rows() + [{**BOT, s.URL: u, s.BYTES: 20000 + 13 * i} for i, u in enumerate(lists)]
    assert _findings(internal_search, rows).height == 0
    # the same box with terms in it is a search; under a search path, even when empty
    searched = [u.replace("q=", f"q=word{i}") for i, u in enumerate(lists)]
    row = _one(_findings(internal_search, content_rows() + bots(searched, bytes=5000)))
    assert (row[s.PATTERN], row[s.WASTED_REQUESTS]) == ("/u/repo/issues?labels&q&sort&state&type", 240)
    box = [f"/search?q=&page={i}" for i in range(200)]
    assert _one(_findings(internal_search, content_rows() + bots(box, bytes=5000)))[s.PATTERN] == "/search?page&q"


def test_internal_search_silent_on_a_search_parameter_carrying_filters():
    # (review 18) PrestaShop's faceted search: a category's filters in one `?q=`, groups of
    # `Group-Value-Value` joined by `/`: 118 internal_search findings and `Disallow: /*?q=`
    # over the filtered category pages people read
    values = {"Color": ["Red", "Blue", "Grey", "Black"], "Size": ["S", "M", "L", "XL"],
              "Availability": ["In+stock", "Not+available"], "Price": [f"%E2%82%AC-{5 * n}-{5 * n + 40}" for n in range(9)]}
    names = sorted(values)

    def chosen(i: int, name: str) -> str:  # one value or two, by the URL's number
        vs = values[name]
        return "-".join(dict.fromkeys([vs[i % len(vs)], vs[i // 7 % len(vs)]]))

    filters = [f"/{c}-{cat}?q=" + "/".join(f"{g}-{chosen(i, g)}" for g in names if i >> names.index(g) & 1)
               for i in range(1, 121) for c, cat in ((3, "clothes"), (9, "art"))]
    assert filters[:2] == ["/3-clothes?q=Availability-Not+available-In+stock", "/9-art?q=Availability-Not+available-In+stock"]
    rows = content_rows() + [{**BOT, s.URL: u, s.BYTES: 20000 + 13 * i} for i, u in enumerate(filters)]
    assert _findings(internal_search, rows).height == 0
    # words people type, a hyphen in some (`t-shirt`) or all (a recipe blog's related searches,
    # `?s=gluten-free+brownies`, of a dozen first words), are searches all the same
    typed = [f"/3-clothes?q={WORDS[i % 9]}{'-' if i % 3 == 0 else '+'}{WORDS[i // 9 % 9]}+{i}" for i in range(200)]
    assert _one(_findings(internal_search, content_rows() + bots(typed, bytes=5000)))[s.PATTERN] == "/{n}-clothes?q"
    diets = [f"/?s={WORDS[i % 9]}-free+{WORDS[i // 9 % 9]}+{i}" for i in range(200)]
    assert _one(_findings(internal_search, content_rows() + bots(diets, bytes=5000)))[s.PATTERN] == "/?s"


def test_internal_search_silent_on_a_repository_named_search():
    # a code host's repository `dave/search`: its issues and commits are pages of the
    # repository, not searches; they were 18 findings and `Disallow: /dave/search/issues/`
    pages = ([f"/dave/search/issues/{i}" for i in range(120)]
             + [f"/dave/search/commit/{i * 7919:040x}" for i in range(120)])
    rows = content_rows() + [{**BOT, s.URL: u, s.BYTES: 20000 + 13 * i} for i, u in enumerate(pages)]
    assert _findings(internal_search, rows).height == 0
    # nor its issue lists, an empty box on every link (`/search/issues` read as a search path)
    issues = [f"/dave/search/issues?state=open&q=&type=all&page={i}" for i in range(200)]
    rows = content_rows() + [{**BOT, s.URL: u, s.BYTES: 20000 + 13 * i} for i, u in enumerate(issues)]
    assert _findings(internal_search, rows).height == 0
    # a search by its path, a term in the path and its pages, is one; Drupal's too
    for node in ([f"/search/node/word-{i}" for i in range(200)],):
        assert _one(_findings(internal_search, content_rows() + bots(node, bytes=5000)))["evidence"]["search_path"]
    paged = [f"/search/word-{i}/page/{1 + i % 3}/" for i in range(200)]
    row = _one(_findings(internal_search, content_rows() + bots(paged, bytes=5000)))
    assert (row[s.PATTERN], row["evidence"]["search_path"]) == ("/search/word-{n}/page/{n}/", True)


def test_internal_search_silent_on_a_session_hash_named_s():
    # vBulletin's `?s=<32 hex digits>` is its session: four internal_search warnings with
    # "noindex your search results" advice
    threads = [f"/showthread.php?s={i * 7919:032x}&t={i % 50}" for i in range(300)]
    rows = content_rows() + [{**BOT, s.URL: u, s.BYTES: 9000 + 37 * (i % 50)} for i, u in enumerate(threads)]
    assert _findings(internal_search, rows).height == 0
    # WordPress's `?s=` holds the words searched for
    words = [f"/?s={WORDS[i % 9]}+{WORDS[i // 9 % 9]}+{i}" for i in range(300)]
    assert _one(_findings(internal_search, content_rows() + bots(words, bytes=5000)))[s.PATTERN] == "/?s"


def test_internal_search_fires_on_a_search_trap_with_ads_landing_on_a_few_of_its_pages():
    # 600 junk searches crawled again and again; ads land people on 12 of them, 400 visits:
    # people's share of the requests passes a tenth, but they read 2% of the pages
    junk = [(f"/search?q=junk{i}&lang=en", 5000 + 7 * i) for i in range(600)]
    crawled = [{**BOT, s.URL: u, s.BYTES: b} for u, b in junk] * 5
    ads = [{**HUMAN, s.URL: f"{junk[i % 12][0]}&gclid=ad{i}", s.BYTES: junk[i % 12][1]}
           for i in range(400)]
    row = _one(_findings(internal_search, content_rows() + crawled + ads))
    assert (row[s.PATTERN], row[s.WASTED_REQUESTS]) == ("/search?lang&q", 3000)


def test_internal_search_silent_on_a_course_catalog_by_semester():
    # /courses/CS/{n}?term=2024FA: one course's sections in one semester, 40 semesters over
    # 100 courses, crawled about twice each in a week (`term` names searches elsewhere: it
    # was a warning per department, whose Disallow blocked 20,000 course pages)
    terms = [f"{1990 + i // 2}{('SP', 'FA')[i % 2]}" for i in range(40)]
    pages = [(f"/courses/CS/{100 + c}?term={t}", 9000 + 37 * c + 11 * i)
             for c in range(100) for i, t in enumerate(terms)]
    rows = [{**BOT, s.URL: u, s.BYTES: b} for u, b in pages] * 2
    rows += [{**HUMAN, s.URL: u, s.BYTES: b} for u, b in pages[::2]]
    assert _findings(internal_search, content_rows() + rows).height == 0
    # searches paged three deep still differ enough in what they search for
    paged = [f"/products?q=word{i}&page={p}" for i in range(100) for p in (1, 2, 3)]
    row = _one(_findings(internal_search, content_rows() + bots(paged, bytes=5000)))
    assert (row[s.PATTERN], row[s.WASTED_REQUESTS]) == ("/products?page&q", 300)


def test_internal_search_fires_on_related_searches_people_also_type():
    # a blog links 200 related searches, crawled 5 times each; people read the 20 popular ones
    # (12% of the requests to crawled searches) and type 80 of their own: a search box in use,
    # not landing pages (it passed for landing pages: people read the crawled URLs)
    related = [f"/search?q=topic{i}" for i in range(200)]
    popular = [{**HUMAN, s.URL: u, s.BYTES: 5000} for u in related[:20]] * 7
    typed = [{**HUMAN, s.URL: f"/search?q=own{i}", s.BYTES: 5000} for i in range(80)]
    rows = content_rows() + bots(related, bytes=5000) * 5 + popular + typed
    row = _one(_findings(internal_search, rows))
    assert (row[s.PATTERN], row[s.WASTED_REQUESTS]) == ("/search?q", 1000)


def test_internal_search_fires_on_dspace_discovery_with_an_empty_box():
    # DSpace's faceted discovery: an empty `query=` and free-text filters, endless
    urls = [f"/discover?query=&filtertype=subject&filter=topic+{i}" for i in range(300)]
    row = _one(_findings(internal_search, content_rows() + bots(urls, bytes=5000)))
    assert (row[s.PATTERN], row[s.WASTED_REQUESTS]) == ("/discover?filter&filtertype&query", 300)
    sections = [f"/discover/travel-{i}" for i in range(300)]  # a section's pages, no query
    assert _findings(internal_search, content_rows() + bots(sections, bytes=5000)).height == 0
    # DSpace 6: numbered filters, no query
    numbered = [f"/discover?filtertype_0=subject&filter_0=topic+{i}&filter_relational_operator_0=equals"
                for i in range(300)]
    row = _one(_findings(internal_search, content_rows() + bots(numbered, bytes=5000)))
    assert row[s.WASTED_REQUESTS] == 300
    # an events site's Discover listings: no search parameter, no search
    listings = [(f"/discover?category=c{i % 30}&page={i // 30 + 1}", 9000 + 37 * i) for i in range(300)]
    rows = [{**BOT, s.URL: u, s.BYTES: b} for u, b in listings]
    assert _findings(internal_search, content_rows() + rows).height == 0


def test_internal_search_silent_on_a_fixed_set_of_pages_named_like_a_search():
    # a portal's 60 landing pages /search?city=&type=, each its own listing, crawled again
    # and again (5 bot fetches each) and read by people (a fifth of the requests): its
    # Disallow blocked pages people read in the same log
    pages = [(f"/search?city=c{c}&type={t}", 20000 + 97 * (c * 3 + k))
             for c in range(20) for k, t in enumerate(("flat", "house", "land"))]
    crawled = [{**BOT, s.URL: u, s.BYTES: b} for u, b in pages] * 5
    read = [{**HUMAN, s.URL: u, s.BYTES: b} for u, b in pages[::2]] * 2
    assert _findings(internal_search, content_rows() + crawled + read).height == 0
    # people come through the form, which writes the fields in the other order: the same pages
    formed = [{**r, s.URL: "/search?" + "&".join(reversed(r[s.URL].split("?")[1].split("&")))}
              for r in read]
    assert _findings(internal_search, content_rows() + crawled + formed).height == 0
    # people read only the popular pages (5 of 60 here), making a fifth of the
    # requests: still read landing pages
    popular = [{**HUMAN, s.URL: u, s.BYTES: b} for u, b in pages[:5]] * 17
    assert _findings(internal_search, content_rows() + crawled + popular).height == 0
    # people come from ads and campaigns: each visit with a click id of its own (gclid,
    # utm_*), a pattern of its own (`...&{tracking}`), and the same pages
    ads = [{**r, s.URL: f"{r[s.URL]}&gclid=Cj0K{i}x&utm_source=google"} for i, r in enumerate(read)]
    assert _findings(internal_search, content_rows() + crawled + ads).height == 0
    # crawlers following a newsletter's tagged links to the same pages fetch no page more
    # often: the twin lends people's requests only (its bot fetches made the pages look
    # unread, and `Disallow: /search?*&` blocked them)
    tagged = [{**BOT, s.URL: f"{u}&utm_source=newsletter&utm_medium=email", s.BYTES: b}
              for u, b in pages] * 6
    assert _findings(internal_search, content_rows() + crawled + read + tagged).height == 0
    # fetched as often, but by crawlers alone: a crawl of search pages, named
    row = _one(_findings(internal_search, content_rows() + crawled))
    assert (row[s.PATTERN], row[s.WASTED_REQUESTS], row["evidence"]["bot_requests_per_url"]) == (
        "/search?city&type", 300, 5.0)
    # and while people search for other places than the ones crawlers follow from links: the
    # popular searches are crawled, the box is people's (it was silent on the pattern's share)
    typed = [{**HUMAN, s.URL: f"/search?city=t{i}&type=flat", s.BYTES: 30000 + i} for i in range(40)]
    row = _one(_findings(internal_search, content_rows() + crawled * 2 + typed * 10))
    assert (row[s.PATTERN], row[s.WASTED_REQUESTS]) == ("/search?city&type", 600)


def test_a_handful_of_requests_never_fires():
    few = (
        bots([f"/calendar?date={2000 + i}-01" for i in range(5)], bytes=10)
        + bots([f"/?sid={i:016x}" for i in range(5)])
        + bots([f"/s/a{i}b2c3d4" for i in range(5)])
        + bots([f"/search?q={i}" for i in range(5)])
        + bots(["/x" + "/y" * d for d in range(1, 5)])
    )
    for module in MODULES:
        assert _findings(module, content_rows() + few).height == 0, module.KIND


def _booking(last_day: int, hotel: str = "hotel") -> list[dict]:
    """A hotel's check-in dates walked day by day from the logs' end (2026-01-01) for
    `last_day` days: bookable for 18 months (a price apiece), then "no rooms" (one page);
    people book a few."""
    from datetime import date, timedelta

    days = [date(2026, 1, 1) + timedelta(days=i) for i in range(last_day)]
    rows = [{**BOT, s.URL: f"/{hotel}/7/book?checkin={d}",
             s.BYTES: 21000 + 37 * i if d < date(2027, 7, 1) else 8400} for i, d in enumerate(days)]
    return rows + [{**HUMAN, s.URL: r[s.URL], s.BYTES: r[s.BYTES]} for r in rows[:300:10]]


def test_calendar_fires_on_a_booking_walk_past_the_horizon_however_short_its_span():
    # check-in dates walked daily to mid-2028 span 2.4 years (a week's log of a walk), under
    # calendar_min_years: no calendar, however far past two years ahead the walk went. Its
    # dates past the horizon (February to June 2028: 151) are evidence enough on their own.
    # Not so: a walk that stops a fortnight past the horizon; sports results by date for
    # 2.5 years up to the logs' end (each day its page, nothing ahead); one far date every
    # offer's link carries (its expiry), 100 URLs of one date
    results = [{**BOT, s.URL: f"/results?date={2023 + i // 365}-{i % 365 // 31 + 1:02d}-{i % 31 + 1:02d}",
                s.BYTES: 15000 + 29 * i} for i in range(912)]
    offers = [{**BOT, s.URL: f"/offer/{i}?until=2031-12-31", s.BYTES: 9000 + 41 * i} for i in range(100)]
    rows = content_rows() + _booking(912) + _booking(775, "inn") + results + offers
    row = _one(_findings(calendar, rows))
    ev = row["evidence"]
    assert (row[s.PATTERN], row[s.WASTED_REQUESTS]) == ("/hotel/{n}/book?checkin", 151)
    assert (ev["span_years"], ev["latest"], ev["sampled_future_urls"]) == (2.4, "2028-06", 151)
    assert all(u >= "/hotel/7/book?checkin=2028-02-01" for u in row[s.EXAMPLES])


def test_calendar_silent_on_sailings_published_past_the_horizon_each_a_page():
    # a cruise line's weekly sailings of three ships published to September 2028, 2.7 years
    # ahead, each a page of its own (its prices, its cabins), people viewing some: the 35
    # sailings a ship past the horizon were 20 distinct dates or more, every one wasted
    # whatever its answer, and each ship a calendar whose rule blocked its 35 sailings. A
    # booking calendar's far dates answer one page ("no rooms"); a schedule's are pages apiece
    from datetime import date, timedelta

    urls = [f"/cruises/{ship}?sailing={date(2026, 1, 3) + timedelta(weeks=w)}"
            for ship in ("aurora", "borealis", "celeste") for w in range(144)]
    sailings = [{**BOT, s.URL: u, s.BYTES: 30000 + 97 * i} for i, u in enumerate(urls)]
    viewed = [{**r, **HUMAN} for r in sailings[::9]]
    assert max(urls) == "/cruises/celeste?sailing=2028-09-30"
    assert _findings(calendar, content_rows() + sailings + viewed).height == 0


def test_calendar_silent_on_forum_topics_whose_ids_read_as_years():
    # `/t/{id}/{page}`: topics 1900-2149, one to three pages each, every page its own size, a
    # few deleted topics answering 404, people reading some. Read as years and months, ids
    # 2029 on were "the far future", wasted whatever their answer: a calendar whose rule
    # (`Disallow: /t/2029/`, `/t/203`, ...) blocked 242 of the 500 topic pages
    urls = [f"/t/{t}/{p}" for t in range(1900, 2150) for p in range(1, 1 + t % 3 + 1)]
    pages = [{**BOT, s.URL: u, s.BYTES: 10000 + 13 * i} for i, u in enumerate(urls)]
    deleted = [{**r, s.STATUS: 404, s.BYTES: 3100} for r in pages[::23]]
    read = [{**r, **HUMAN} for r in pages[:200:10]]
    assert _findings(calendar, content_rows() + pages + deleted + read).height == 0


def test_calendar_leaves_open_the_months_beside_the_real_ones_where_its_sample_is_thin():
    # two empty days sampled of a January whose sixteen events the sample missed made
    # `Disallow: /events/2016/01`: with part of the pattern sampled, the month before the
    # first real one and the one after the last are left open with those between
    from logtrap.detectors.calendar import _among_real

    months = [2015 * 12 + 11, 2016 * 12, 2016 * 12 + 1, 2016 * 12 + 2, 2016 * 12 + 3, 2016 * 12 + 4]
    urls = pl.DataFrame({
        s.HOST: "-", s.PATTERN: "/events/{n}/{n}/{n}/", s.URL: [f"/e/{m}" for m in months],
        "months": months, "day": [1] * 6, s.STATUS: [200] * 6,
        "wasted": [True, True, False, True, False, True],
    })
    for thin, between in ((False, [False, False, False, True, False, False]),
                          (True, [False, True, False, True, False, True])):
        flags = pl.DataFrame({s.HOST: ["-"], s.PATTERN: ["/events/{n}/{n}/{n}/"], "_thin": [thin]})
        assert _among_real(urls, flags)["between_real"].to_list() == between


def _months_answered(status: int) -> list[dict]:
    """Bots walking a calendar's months, 1,456 of them, each answered `status` (a firewall's
    403, the 404 the advice asks for, a 429 asking them to slow down)."""
    months = [f"/calendar?date={1950 + i // 12}-{i % 12 + 1:02d}" for i in range(1456)]
    return content_rows() + bots(months, bytes=2100 if status == 200 else 199, status=status)


@pytest.mark.parametrize("status", [403, 404])
def test_a_trap_the_server_already_refuses_to_crawlers_is_info_with_the_refusal_as_evidence(status):
    # a calendar whose every month a rule answers 403 was critical, its advice to answer 404:
    # crawlers spend requests there, the server no page
    from logtrap.detectors import run_detectors

    found = run_detectors(traffic_of(requests_frame(_months_answered(status))))
    rows = found.filter(pl.col(s.PATTERN) == "/calendar?date").select(s.KIND, s.SEVERITY, s.WASTED_REQUESTS).rows()
    assert rows == [("calendar", "info", 514)]  # (the months past the log's end, whatever they answer)
    row = found.row(0, named=True)
    ev = json.loads(row[s.EVIDENCE])
    assert (ev["refused_share"], ev["refused_status"]) == (1.0, status)
    assert row[s.ADVICE].startswith(
        f"The server already refuses these URLs to crawlers ({status}): no page is served, and crawlers "
        "keep asking only because links still lead here. Disallow them in robots.txt to stop the "
        "requests too. The fix at the source: Stop linking to next/previous periods")


def test_a_trap_answered_429_or_200_keeps_its_severity():
    # a 429 asks crawlers to come back later: the trap stands
    from logtrap.detectors import run_detectors

    for status, severity in ((200, "critical"), (429, "warning")):
        found = run_detectors(traffic_of(requests_frame(_months_answered(status))))
        (row,) = found.rows(named=True)
        assert (row[s.KIND], row[s.SEVERITY]) == ("calendar", severity)
        assert "refused_share" not in json.loads(row[s.EVIDENCE])

"""Sorted copies of a site's lists (detectors/_sort.py): one facets finding per host naming its
sort parameters, with a pair of robots.txt lines for the whole site where they block no content,
the lists' paths where they would, and none where a sitemap lists a sorted page.

The Shopify shop is built by tests/builders.py (`shopify`) and read by the whole pipeline; the
counter-cases add pages to it, or are small sites of their own.
"""

from __future__ import annotations

import polars as pl
import pytest
from builders import (SHOPIFY_COLLECTIONS, SHOPIFY_ORDERS, WOO_BROWSER, bots, combined_lines, humans, letters,
                      requests_frame, shopify, traffic_of)
from protego import Protego

from logtrap import schema as s
from logtrap.analysis import analyze
from logtrap.detectors import Detector, facets, run_detectors
from logtrap.findings import Finding, to_frame, to_records
from logtrap.rules import suggest
from logtrap.settings import Settings

SITE_WIDE = "Disallow: /*?sort_by=\nDisallow: /*&sort_by="
BY_PATH = "Disallow: /collections/*?sort_by=\nDisallow: /collections/*?*&sort_by="


def allowed(robots_txt: str, url: str) -> bool:
    return Protego.parse(robots_txt).can_fetch(f"https://shop.example{url}", "Googlebot")


def people(urls: list[str]) -> list[dict]:
    """People's requests as `analyze` of a frame classifies them: a browser's user agent."""
    return humans(urls, **{s.USER_AGENT: WOO_BROWSER})


def _sorted(url: str) -> bool:
    return "sort_by=" in url


@pytest.fixture(scope="module")
def rows():
    return shopify()


@pytest.fixture(scope="module")
def shop(rows):
    return analyze(requests_frame(rows))


def _sort_finding(result) -> Finding:
    [finding] = [x for x in to_records(result.findings) if x.pattern.startswith("/{any}?")]
    return finding


def test_a_shops_sort_orders_are_one_finding_for_the_whole_host(shop, rows):
    [finding] = to_records(shop.findings)
    sorted_rows = [r for r in rows if _sorted(r[s.URL])]
    bot_rows = [r for r in sorted_rows if r[s.IS_BOT]]
    assert (finding.kind, finding.severity, finding.pattern) == ("facets", "critical", "/{any}?sort_by")
    # every request of a sorted copy, people's too; every bot's one is wasted
    assert (finding.requests, finding.wasted_requests) == (len(sorted_rows), len(bot_rows))
    evidence = finding.evidence
    assert evidence["sort_params"] == ["sort_by"]
    assert evidence["orders"] == sorted(SHOPIFY_ORDERS)
    assert evidence["member_patterns"] == ["/collections/{name}?page&sort_by", "/collections/{name}?sort_by"]
    assert evidence["unlisted_patterns"] == []
    lists = {r[s.URL].replace("&sort_by=", "?sort_by=").split("?sort_by=")[0] for r in sorted_rows}
    assert evidence["lists"] == len(lists) == 114  # 30 collections, 84 of their later pages
    assert (evidence["bot_requests"], evidence["human_requests"]) == (
        len(bot_rows), len(sorted_rows) - len(bot_rows))
    # people open a sorted view now and then beside the lists they read
    assert evidence["list_human_requests"] == sum(
        not r[s.IS_BOT] and r[s.URL].startswith("/collections/") and not _sorted(r[s.URL]) for r in rows)
    # every sampled sorted page's list was sampled too, and answers within a few hundred bytes
    assert (evidence["sampled_urls"], evidence["pages_compared"], evidence["pages_changed"]) == (911, 911, 0)
    assert all(_sorted(url) for url in finding.examples)
    assert evidence["wasted_share_of_host_bot_requests"] == round(
        len(bot_rows) / sum(r[s.IS_BOT] for r in rows), 4)


def test_its_lines_block_every_sorted_copy_and_no_list_or_product(shop, rows):
    sug = suggest(shop)
    assert sug.rules.select("pattern", "status", "rule").rows() == [("/{any}?sort_by", "emitted", SITE_WIDE)]
    urls = sorted({r[s.URL] for r in rows})
    blocked = [u for u in urls if not allowed(sug.robots_txt, u)]
    assert blocked == [u for u in urls if _sorted(u)] and len(blocked) == 911
    # people's sorted views are blocked for crawlers too (they still sort); their lists are open
    read = {r[s.URL] for r in rows if not r[s.IS_BOT]}
    assert {u for u in read if not allowed(sug.robots_txt, u)} == {u for u in read if _sorted(u)}
    assert all(allowed(sug.robots_txt, u) for u in ("/collections/city-bags", "/collections/city-bags?page=3"))


def test_an_order_id_is_no_sort(rows):
    # people's orders, `?order=<id>`: a value per order, no sort of a list
    orders = [r for i in range(300) for r in people([f"/account/orders?order={5000 + i}", "/account/orders"])]
    orders += bots([f"/account/orders?order={5000 + i}" for i in range(300)])
    result = analyze(requests_frame(rows + orders))
    finding = _sort_finding(result)
    assert finding.evidence["sort_params"] == ["sort_by"]
    robots_txt = suggest(result).robots_txt
    assert "order=" not in robots_txt.replace("sort_by", "")
    assert allowed(robots_txt, "/account/orders?order=5001")


def test_a_list_only_ever_linked_sorted_keeps_its_page_and_the_lines_go_by_the_lists_paths(rows):
    # the menu's "New arrivals" is `/new-arrivals?sort_by=created-descending`: no list without
    # the sort, so a page of its own, which people read
    arrivals = "/new-arrivals?sort_by=created-descending"
    extra = people([arrivals] * 40) + bots([arrivals] * 10)
    result = analyze(requests_frame(rows + extra))
    finding = _sort_finding(result)
    assert "/new-arrivals?sort_by" not in finding.evidence["member_patterns"]
    assert finding.evidence["unlisted_patterns"] == ["/new-arrivals?sort_by"]
    sug = suggest(result)
    [(status, rule, reason)] = sug.rules.select("status", "rule", "reason").rows()
    assert (status, rule) == ("narrowed", BY_PATH)
    assert reason == ("Disallow: /*?sort_by= would reach /new-arrivals?sort_by, a pattern whose list "
                      "without the parameter is none: its URLs may be pages of their own; narrowed to "
                      "the lists' paths")
    assert allowed(sug.robots_txt, arrivals)
    assert not allowed(sug.robots_txt, "/collections/city-bags?page=3&sort_by=best-selling")
    # the same where only bots fetched it: a page no person read is a page all the same
    bots_only = suggest(analyze(requests_frame(rows + bots([arrivals] * 10)))).rules
    assert bots_only.select("status", "rule").rows() == [("narrowed", BY_PATH)]


def test_a_line_by_the_lists_paths_may_not_reach_a_page_whose_list_is_none(rows):
    # a grid view of one collection linked only sorted: under the lists' path, so their line
    # for a later sort parameter reaches it, and an Allow line keeps it open
    grid = "/collections/new?view=grid&sort_by=created-descending"
    result = analyze(requests_frame(rows + bots([grid] * 10)))
    assert _sort_finding(result).evidence["unlisted_patterns"] == ["/collections/new?sort_by&view"]
    sug = suggest(result)
    [(status, rule, reason)] = sug.rules.select("status", "rule", "reason").rows()
    assert (status, rule) == ("narrowed", f"{BY_PATH}\nAllow: {grid}$")
    assert reason.startswith("Disallow: /*?sort_by= would reach /collections/new?sort_by&view, a pattern "
                             "whose list without the parameter is none")
    assert f"narrowed to the lists' paths: {grid} (log, a page carrying the parameter whose list without " \
           "it is no pattern: a page of its own): Allow lines keep it open; blocks all " in reason
    assert allowed(sug.robots_txt, grid)
    # eleven such pages are more than Allow lines: withheld
    grids = [f"/collections/new?view=v{i}&sort_by=created-descending" for i in range(11)]
    rules = suggest(analyze(requests_frame(rows + bots(grids * 10)))).rules
    [(status, rule, reason)] = rules.select("status", "rule", "reason").rows()
    assert (status, rule) == ("withheld", "")
    assert "; by path: Disallow: /collections/*?*&sort_by= would block content URL /collections/new?view=" in reason


def test_a_sorted_page_a_sitemap_lists_is_allowed_back_and_more_withhold_the_rule(shop, tmp_path):
    def rules_with(pages: list[str]):
        sitemap = tmp_path / "sitemap.xml"
        sitemap.write_text('<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">' + "".join(
            f"<url><loc>https://shop.example{page}</loc></url>" for page in pages) + "</urlset>")
        return suggest(shop, settings=shop.settings.replace(sitemaps=(sitemap,)))

    page = "/collections/summer-shoes?sort_by=best-selling"
    sug = rules_with([page])
    [(status, rule, reason)] = sug.rules.select("status", "rule", "reason").rows()
    assert (status, rule) == ("narrowed", f"{SITE_WIDE}\nAllow: {page}$")
    assert reason.startswith(f"{page} (sitemap): Allow lines keep it open; blocks all ")
    assert allowed(sug.robots_txt, page) and not allowed(sug.robots_txt, page + "&page=2")
    # ten of them get an Allow line each; eleven are more than Allow lines, and the lists'
    # paths take them too
    pages = [f"/collections/{c}?sort_by={o}" for c in SHOPIFY_COLLECTIONS[:6] for o in ("best-selling", "manual")]
    sug = rules_with(pages[:10])
    assert sug.rules["status"].to_list() == ["narrowed"]
    assert all(allowed(sug.robots_txt, page) for page in pages[:10])
    assert not allowed(sug.robots_txt, pages[10])
    [(status, rule, reason)] = rules_with(pages[:11]).rules.select("status", "rule", "reason").rows()
    assert (status, rule) == ("withheld", "")
    assert reason.startswith("Disallow: /*?sort_by= would block content URL /collections/")
    assert "; by path: Disallow: /collections/*?sort_by= would block content URL" in reason


def _listing(lists: int, urls_each: int, orders: list[str], name: str = "sort") -> list[dict]:
    """Bots read `lists` lists and each in `orders`, up to `urls_each` sorted URLs a list;
    people read the lists."""
    rows = []
    for i in range(lists):
        base = f"/blog/list{'' if i == 0 else f'?page={i + 1}'}"
        sep = "?" if i == 0 else "&"
        rows += humans([base]) + bots([base])
        rows += bots([f"{base}{sep}{name}={order}" for order in orders[:urls_each]])
    return rows


@pytest.mark.parametrize(("lists", "urls_each", "orders", "name", "found"), [
    (7, 3, ["new", "old", "top"], "sort", True),  # 21 sorted URLs over 7 lists
    (21, 1, ["new"], "sort", True),  # one order is still a copy of each list
    (2, 12, [f"o{i}" for i in range(12)], "sort", False),  # two lists: no site's sort of its lists
    (6, 3, ["new", "old", "top"], "sort", False),  # 18 sorted URLs: fewer than 20
    (3, 25, [f"o{i}" for i in range(25)], "sort", False),  # 25 values: an id, no order
    (7, 3, ["1", "2", "3"], "order", False),  # a quiz's steps, `?order=2`: pages of their own
    (7, 3, ["0", "5", "10"], "orderby", True),  # nopCommerce's sort codes: the name says "sort by"
    (7, 3, ["ASC", "DESC", "asc"], "dir", True),  # a direction
    (7, 3, ["/photos", "/music", "/docs"], "dir", False),  # a file browser's folders
])
def test_a_sort_needs_few_values_over_enough_lists_and_urls(lists, urls_each, orders, name, found):
    rows = _listing(lists, urls_each, orders, name)
    traffic = traffic_of(requests_frame(rows))
    got = facets.detect(traffic, Settings())
    assert got[s.PATTERN].to_list() == ([f"/{{any}}?{name}"] if found else [])


def test_a_parameter_a_sort_finding_names_is_not_merged_again():
    # six aisles' growing_pattern findings blame `sort_by`, which a sort finding names: they
    # stay as they are (without it, they are merged into one /{any}?sort_by)
    aisles = [f"/{name}/list/" for name in ("hats", "bags", "socks", "boots", "belts", "gloves")]
    rows = [r for k, aisle in enumerate(aisles) for v in range(1, 31)
            for r in bots([f"{aisle}?sort_by={v}"], **{s.BYTES: 40_000 + 1_000 * k})]
    rows += [r for k, aisle in enumerate(aisles) for r in humans([aisle] * 20, **{s.BYTES: 40_000 + 1_000 * k})]
    growing = [Finding("growing_pattern", "warning", "-", f"{aisle}?sort_by", 30, 29,
                       (f"{aisle}?sort_by=1",)) for aisle in aisles]
    sort = Finding("facets", "warning", "-", "/{any}?sort_by", 180, 180, (f"{aisles[0]}?sort_by=1",),
                   {"sort_params": ["sort_by"], "member_patterns": [f"{a}?sort_by" for a in aisles]})
    traffic = traffic_of(requests_frame(rows))

    def merged(findings: list[Finding]) -> list[tuple[str, str]]:
        given = Detector("given", lambda traffic, settings: to_frame(findings))
        return sorted(run_detectors(traffic, Settings(), detectors=(given,)).select("kind", "pattern").rows())

    assert merged(growing) == [("growing_pattern", "/{any}?sort_by")]
    assert merged([*growing, sort]) == sorted([("facets", "/{any}?sort_by"),
                                               *(("growing_pattern", f"{a}?sort_by") for a in aisles)])


def _lists(values: list[str], name: str, size, people_sorted: int, people_lists: int) -> list[dict]:
    """Eight lists and their pages 2 and 3 (24 URLs), each fetched by bots with every value of
    `name`, answered `size(list, value)` bytes (the list itself: `size(list, None)`); people
    read each list `people_lists` times and each of its sorted pages `people_sorted` times."""
    rows = []
    for k in range(8):
        for page in (1, 2, 3):
            base = f"/c/list-{letters(k)}" + ("" if page == 1 else f"?page={page}")
            rows += [{**r, s.BYTES: size(k, None)} for r in bots([base]) + people([base] * people_lists)]
            for v in values:
                url = f"{base}{'&' if '?' in base else '?'}{name}={v}"
                rows += [{**r, s.BYTES: size(k, v)} for r in bots([url]) + people([url] * people_sorted)]
    return rows


def _sort_patterns(rows: list[dict]) -> list[str]:
    traffic = traffic_of(requests_frame(rows))
    return facets.detect(traffic, Settings())[s.PATTERN].to_list()


def test_a_parameter_whose_pages_are_no_copies_of_their_lists_is_no_sort():
    # a recipe site's categories as `?sort=dessert`: pages of other sizes than the list
    categories = ["dessert", "dinner", "soup"]
    copies = _lists(categories, "sort", lambda k, v: 40_000 + 1_000 * k + (0 if v is None else len(v)), 0, 1)
    assert _sort_patterns(copies) == ["/{any}?sort"]  # within a few bytes: copies
    apart = _lists(categories, "sort", lambda k, v: 40_000 + 1_000 * k + (0 if v is None else 15_000 * len(v)), 0, 1)
    assert _sort_patterns(apart) == []


def test_a_parameter_people_read_as_much_as_the_lists_is_how_they_browse():
    # a timetable's `?direction=down` per route, read more than the route's page: no sort,
    # whatever the sizes
    same = lambda k, v: 40_000 + 1_000 * k + (0 if v is None else len(v))  # noqa: E731
    assert _sort_patterns(_lists(["up", "down"], "direction", same, 1, 4)) == ["/{any}?direction"]
    assert _sort_patterns(_lists(["up", "down"], "direction", same, 3, 4)) == []
    # a transit site's direction ids, 0 and 1, say no direction of a sort
    assert _sort_patterns(_lists(["0", "1"], "direction", same, 0, 4)) == []


def test_a_sorted_view_people_land_on_stays_open(rows):
    # "New arrivals" is a collection's newest first, where people land: read 60 times, its list
    # never; another sorted view read as often as its list is one too, and one read less is no
    # landing page
    arrivals = "/collections/new?sort_by=created-descending"
    landing = people([arrivals] * 60) + bots([arrivals] * 5)
    result = analyze(requests_frame(rows + landing))
    assert "/collections/{name}?sort_by" in _sort_finding(result).evidence["member_patterns"]
    sug = suggest(result)
    [(status, rule, reason)] = sug.rules.select("status", "rule", "reason").rows()
    assert (status, rule) == ("narrowed", f"{SITE_WIDE}\nAllow: {arrivals}$")
    assert reason.startswith(f"{arrivals} (log, a list's first page sorted, which people read as often as "
                             "a page of its own: it may be a page they land on): Allow lines keep it open")
    assert allowed(sug.robots_txt, arrivals)
    assert not allowed(sug.robots_txt, "/collections/new?sort_by=price-ascending")
    # read four times: a sorted view a few people opened
    few = analyze(requests_frame(rows + people([arrivals] * 4) + bots([arrivals] * 5)))
    assert suggest(few).rules.select("status", "rule").rows() == [("emitted", SITE_WIDE)]


def test_a_log_without_user_agents_gets_no_sort_finding(rows, tmp_path):
    # Apache's common format: people's reads and bots' cannot be told apart, so a sorted view
    # may be a page people land on (adversarial review 19)
    log = tmp_path / "access.log"
    log.write_text("".join(line.rsplit(' "', 2)[0] + "\n" for line in combined_lines(rows).splitlines()))
    result = analyze(str(log))
    assert result.stats.files[0].format_name == "common"
    assert [x for x in to_records(result.findings) if x.pattern.startswith("/{any}")] == []


def test_a_page_cache_answering_304_hides_no_sort(rows):
    # crawlers come back three times to each page they fetch, answered `304 0` by a page cache:
    # most of a URL's answers, and its page is its 200 answer (adversarial review 19)
    cached = [*rows, *({**r, s.STATUS: 304, s.BYTES: 0} for r in rows if r[s.IS_BOT] for _ in range(3))]
    finding = _sort_finding(analyze(requests_frame(cached)))
    assert finding.pattern == "/{any}?sort_by"
    assert finding.evidence["pages_changed"] == 0 and finding.evidence["pages_compared"] > 100


def test_an_ads_landing_on_a_sorted_view_is_its_copy_by_tracking(rows):
    # ad clicks land on `?sort_by=created-descending&gclid=<token>`: copies of a page by a
    # tracking parameter, no page of their own to keep the lines off, but reads of the page
    # they copy, which the ads make a landing page (never logged without the click id)
    arrivals = "/collections/new?sort_by=created-descending"
    ads = people([f"{arrivals}&gclid=Cj0K{i:05d}" for i in range(300)])
    result = analyze(requests_frame(rows + ads))
    finding = _sort_finding(result)
    assert finding.evidence["unlisted_patterns"] == []
    sug = suggest(result)
    assert sug.rules.select("status", "rule").rows() == [("narrowed", f"{SITE_WIDE}\nAllow: {arrivals}$")]
    assert allowed(sug.robots_txt, arrivals) and not allowed(sug.robots_txt, f"{arrivals}&gclid=Cj0K00001")
    # a few clicks make no landing page: the lines block them all
    few = analyze(requests_frame(rows + ads[:4]))
    assert suggest(few).rules.select("status", "rule").rows() == [("emitted", SITE_WIDE)]


def test_a_landing_page_reached_by_tracked_links_is_the_page_kept_open(rows):
    # a newsletter links "New arrivals" with utm parameters, a campaign a week: the reads are
    # the page's, and its Allow line its clean URL's (adversarial round 3 of review 19)
    arrivals = "/collections/new?sort_by=created-descending"
    tracked = [f"{arrivals}&utm_source=newsletter&utm_medium=email&utm_campaign=wk{w}" for w in range(12)]
    result = analyze(requests_frame(rows + people(tracked * 5) + bots([arrivals] * 5)))
    sug = suggest(result)
    [(status, rule)] = sug.rules.select("status", "rule").rows()
    assert (status, rule) == ("narrowed", f"{SITE_WIDE}\nAllow: {arrivals}$")
    assert allowed(sug.robots_txt, arrivals)


def test_a_busy_lists_menu_page_is_a_landing_page_and_a_sorted_page_2_is_none(rows):
    # "Shop all" by best sellers, read 60 times beside its list's 1,000 (adversarial round 5 of
    # review 19); a sorted page 2 people go on to, read more than the list's own page 2, is
    # still a sorted copy
    best = "/collections/all?sort_by=best-selling"
    deep = "/collections/city-bags?page=2&sort_by=price-ascending"
    extra = people(["/collections/all"] * 1000 + [best] * 60 + [deep] * 30)
    sug = suggest(analyze(requests_frame(rows + extra + bots([best, deep] * 3))))
    [(status, rule)] = sug.rules.select("status", "rule").rows()
    assert (status, rule) == ("narrowed", f"{SITE_WIDE}\nAllow: {best}$")
    assert allowed(sug.robots_txt, best) and not allowed(sug.robots_txt, deep)
    # the landing page's own page 2, which people go on to, is one of its pages
    next_page = "/collections/all?page=2&sort_by=best-selling"
    extra += people([next_page] * 8)
    sug = suggest(analyze(requests_frame(rows + extra + bots([best, deep, next_page] * 3))))
    assert allowed(sug.robots_txt, next_page) and not allowed(sug.robots_txt, deep)


def test_a_sorted_menu_page_read_a_fifth_as_much_as_its_list_is_a_landing_page(rows):
    # the "Sale" menu page is the sale collection by price, read 140 times; the collection
    # itself 420 times, through ads (adversarial round 4 of review 19)
    sale = "/collections/sale?sort_by=price-ascending"
    extra = people([f"/collections/sale?gclid=Cj{i:04d}" for i in range(420)]) + people([sale] * 140)
    sug = suggest(analyze(requests_frame(rows + extra + bots([sale] * 3))))
    [(status, rule)] = sug.rules.select("status", "rule").rows()
    assert (status, rule) == ("narrowed", f"{SITE_WIDE}\nAllow: {sale}$")
    assert allowed(sug.robots_txt, sale)

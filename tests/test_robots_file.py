"""robots_file.py: the merge keeps every line of the current robots.txt and repeats the `*`
rules where a crawler would not see them; hostile text stays in its comment; bots that ignore
the current file and current rules that block sitemap URLs."""

from __future__ import annotations

import polars as pl
from builders import bots, requests_frame, traffic_of
from hypothesis import given, settings
from hypothesis import strategies as st
import pytest
from protego import Protego

from logtrap import robots, robots_file
from logtrap.analysis import analyze

# -- the merge keeps every line ----------------------------------------------------------------

CURRENT = """# shop robots.txt
User-agent: *
Disallow: /cart
Allow: /cart/help

User-agent: Googlebot
Allow: /

Sitemap: https://shop.example/sitemap.xml
"""


def star_rule(lines, kind="calendar", pattern="/calendar?date"):
    return robots.RobotsRule("-", kind, pattern, "*", tuple(lines), "emitted", "", 12)


def test_merge_keeps_every_line_and_repeats_star_rules_for_specific_groups():
    bot = robots.RobotsRule("-", "aggressive_bot", None, "meta-externalagent",
                            ("Disallow: /asl/",), "emitted", "")  # fmt: skip
    merged = robots_file.render("-", [star_rule(["Disallow: /calendar?date="]), bot], CURRENT, 10)
    assert merged == """# shop robots.txt
User-agent: *
Disallow: /cart
Allow: /cart/help
# logtrap calendar /calendar?date: 12 bot requests
Disallow: /calendar?date=

User-agent: Googlebot
Allow: /
# logtrap: the * rules again (a crawler obeys only its most specific group)
Disallow: /calendar?date=

Sitemap: https://shop.example/sitemap.xml

User-agent: meta-externalagent
# logtrap aggressive_bot
Disallow: /asl/
# logtrap: the * rules again (a crawler obeys only its most specific group)
Disallow: /cart
Allow: /cart/help
Disallow: /calendar?date=
"""
    parsed = Protego.parse(merged)
    verdicts = [parsed.can_fetch(f"http://s{u}", a) for u, a in [
        ("/calendar?date=1", "Googlebot"), ("/calendar?date=1", "otherbot"),
        ("/asl/1", "meta-externalagent"), ("/cart", "meta-externalagent"), ("/asl/1", "otherbot")]]
    assert verdicts == [False, False, False, False, True]


def test_a_crawler_sharing_a_group_gets_its_lines_in_a_group_of_its_own():
    # AhrefsBot hammers /product/; the current file gives it a group with SemrushBot, which
    # did nothing: lines added to that group would keep SemrushBot off every product page
    current = "User-agent: AhrefsBot\nUser-agent: SemrushBot\nDisallow: /private/\n"
    rule = robots.RobotsRule("-", "aggressive_bot", "/product/{n}", "AhrefsBot",
                             ("Disallow: /product/",), "emitted", "", 12)
    merged = robots_file.render("-", [rule], current, 0)
    assert merged.startswith(current)
    assert merged[len(current):] == (
        "\nUser-agent: AhrefsBot\n"
        "# (and the lines of the group AhrefsBot shares above: RFC 9309 combines a crawler's "
        "groups)\n# logtrap aggressive_bot /product/{n}: 12 bot requests\nDisallow: /product/\n"
    )
    parsed = Protego.parse(merged)
    verdicts = [parsed.can_fetch(f"http://s{u}", a) for u, a in [
        ("/product/1", "AhrefsBot"), ("/private/1", "AhrefsBot"),
        ("/product/1", "SemrushBot"), ("/private/1", "SemrushBot")]]  # fmt: skip
    assert verdicts == [False, False, True, False]


@given(st.lists(st.sampled_from(["User-agent: *", "User-agent: a", "Disallow: /x", "Allow: /y",
                                 "# c", "", "Sitemap: https://s/s.xml", "junk"]), max_size=12))  # fmt: skip
def test_merge_keeps_every_current_line_in_order(lines):
    current = "\n".join(lines) + "\n"
    merged = robots_file.render("-", [star_rule(["Disallow: /t?d="])], current, 0).splitlines()
    it = iter(merged)
    assert all(any(m == line for m in it) for line in current.splitlines())
    assert not Protego.parse(merged and "\n".join(merged)).can_fetch("http://s/t?d=1", "zbot")


def test_a_line_another_line_covers_is_written_once():
    # facets at two or more parameters cover the growing patterns at three or four
    rules = [star_rule(["Disallow: /c/*?*&*&*&"], "growing_pattern", "/c/{name}?a&b&c&d"),
             star_rule(["Disallow: /s?q="], "internal_search", "/s?q"),
             star_rule(["Disallow: /c/*?*&*&"], "growing_pattern", "/c/{name}?a&b&c"),
             star_rule(["Disallow: /c/*?*&"], "facets", "/c/{name}?a&b")]
    text = robots_file.render("-", rules, None, 5)
    assert text.splitlines()[8:] == [
        "User-agent: *",
        "# logtrap growing_pattern /c/{name}?a&b&c&d: 12 bot requests "
        "(Disallow: /c/*?*& covers it)",
        "# logtrap internal_search /s?q: 12 bot requests",
        "Disallow: /s?q=",
        "# logtrap growing_pattern /c/{name}?a&b&c: 12 bot requests (Disallow: /c/*?*& covers it)",
        "# logtrap facets /c/{name}?a&b: 12 bot requests",
        "Disallow: /c/*?*&",
    ]
    every_line = "User-agent: *\n" + "".join(f"{r.lines[0]}\n" for r in rules)
    urls = ["/c/x?a=1&b=2&c=3&d=4", "/c/x?a=1&b=2&c=3", "/c/x?a=1&b=2", "/c/x?a=1", "/c/x",
            "/s?q=1", "/s"]
    assert verdicts(text, urls) == verdicts(every_line, urls) == [
        False, False, False, True, True, False, True]
    # beside an Allow line the longest match decides: every line it may meet is written
    merged = robots_file.render("-", rules, "User-agent: *\nAllow: /c/x?a=1&b=2&c=3\n", 5)
    assert sum(line.startswith("Disallow: /c/") for line in merged.splitlines()) == 3
    # an Allow line no path of theirs can match leaves them out as before (the sample shop's
    # `Allow: /account/login` kept a covered line per facet trap)
    elsewhere = robots_file.render("-", rules, "User-agent: *\nAllow: /account/login\n", 5)
    assert [line for line in elsewhere.splitlines() if line.startswith("Disallow")] == [
        "Disallow: /s?q=", "Disallow: /c/*?*&"]
    assert verdicts(elsewhere, urls) == verdicts(every_line, urls)


def test_an_allow_line_written_in_utf_8_meets_its_percent_encoded_disallow():
    # `/käse/` and `/k%C3%A4se/` are one path to a matcher: the covered line stays
    rules = [star_rule(["Disallow: /k%C3%A4se/*?*&*&"], "growing_pattern", "/k%C3%A4se/{name}?a&b&c"),
             star_rule(["Disallow: /k%C3%A4se/*?*&"], "facets", "/k%C3%A4se/{name}?a&b")]
    current = "User-agent: *\nAllow: /käse/brie?a\n"
    merged = robots_file.render("-", rules, current, 5)
    every_line = current + "Disallow: /k%C3%A4se/*?*&*&\nDisallow: /k%C3%A4se/*?*&\n"
    urls = ["/k%C3%A4se/brie?a=1&b=2&c=3", "/k%C3%A4se/brie?a=1&b=2", "/k%C3%A4se/brie?a=1"]
    assert verdicts(merged, urls) == verdicts(every_line, urls) == [False, True, True]


_TRAP_URLS = ["/c/x?a=1&b=2&c=3&d=4", "/c/x?a=1&b=2&c=3", "/c/x?a=1&b=2", "/c/x?a=1"]
# Allow lines that start like a trap URL (where the longest match decides), or anything
_ALLOWS = st.one_of(
    st.tuples(st.sampled_from(_TRAP_URLS), st.integers(2, 20), st.sampled_from(["", "*", "$"]))
    .map(lambda p: p[0][: p[1]] + p[2]),
    st.text("c/x?ab&=*", max_size=8).map(lambda p: "/" + p),
)


@settings(max_examples=300, deadline=None)
@given(_ALLOWS, st.lists(st.text("cx/?ab&=", max_size=10), max_size=8))
def test_lines_left_out_beside_an_allow_line_change_no_verdict(allow, paths):
    rules = [star_rule(["Disallow: /c/*?*&*&*&"], "growing_pattern", "/c/{name}?a&b&c&d"),
             star_rule(["Disallow: /c/*?*&*&"], "growing_pattern", "/c/{name}?a&b&c"),
             star_rule(["Disallow: /c/*?*&"], "facets", "/c/{name}?a&b")]
    current = f"User-agent: *\nAllow: {allow}\n"
    every_line = current + "".join(f"{r.lines[0]}\n" for r in rules)
    urls = ["/" + p for p in paths] + _TRAP_URLS + [allow.removesuffix("$").replace("*", "")]
    assert verdicts(robots_file.render("-", rules, current, 5), urls) == verdicts(every_line, urls)


def verdicts(text: str, urls: list[str]) -> list[bool]:
    parsed = Protego.parse(text)
    return [parsed.can_fetch(f"http://s{u}", "anybot") for u in urls]


_ROBOTS_PATTERNS = st.tuples(st.text("ab/?&=*", max_size=6), st.booleans()).map(
    lambda p: "/" + p[0] + ("$" if p[1] else ""))


@settings(max_examples=300, deadline=None)
@given(_ROBOTS_PATTERNS, _ROBOTS_PATTERNS, st.lists(st.text("ab/?&=", max_size=8), max_size=8))
def test_a_covering_line_blocks_every_path_the_line_it_covers_blocks(wide, narrow, paths):
    paths = ["/" + p for p in paths] + [narrow.removesuffix("$").replace("*", "")]
    if robots_file._covers(wide, narrow):
        for path in paths:
            if verdicts(f"User-agent: *\nDisallow: {narrow}\n", [path]) == [False]:
                assert verdicts(f"User-agent: *\nDisallow: {wide}\n", [path]) == [False], path


def test_a_line_the_current_file_covers_is_not_added_nor_said_to_save():
    # the file disallows /search already: `Disallow: /search?q=` was added, "saving" 12
    current = "User-agent: *\nDisallow: /search\n"
    rules = [star_rule(["Disallow: /search?q="], "internal_search", "/search?q"),
             star_rule(["Disallow: /calendar?date="])]
    assert robots_file.render("-", rules, current, 5) == (
        "User-agent: *\nDisallow: /search\n"
        "# logtrap internal_search /search?q (the current Disallow: /search covers it)\n"
        "# logtrap calendar /calendar?date: 12 bot requests\nDisallow: /calendar?date=\n")
    # beside an Allow line the longest match decides: nothing is left out
    allowing = "User-agent: *\nDisallow: /search\nAllow: /search?q=shoes\n"
    assert "Disallow: /search?q=\n" in robots_file.render("-", rules[:1], allowing, 5)


def test_a_pagination_line_says_it_takes_the_pages_a_list_grows():
    rule = robots.RobotsRule("-", "pagination", "/c/{name}?page", "*", ("Disallow: /c/*?page=",),
                             "emitted", "ok", 40)
    assert robots_file.render("-", [rule], None, 3).splitlines()[-2:] == [
        "# logtrap pagination /c/{name}?page: 40 bot requests (these lines also block the pages "
        "its lists will have when they grow: renew them then, or better, answer 404 past the "
        "last page)",
        "Disallow: /c/*?page=",
    ]


def test_withheld_only_rules_add_no_group():
    rule = robots.RobotsRule("-", "pagination", "/l?page", "*", (), "withheld", "why")
    text = robots_file.render("-", [rule], None, 3)
    assert text.splitlines() == [
        "# robots.txt lines suggested by logtrap: none, every rule found was withheld "
        "(the reasons follow).",
        "",
        "# logtrap withheld (pagination /l?page): why",
    ]


def test_hostile_pattern_text_stays_in_its_comment():
    rule = robots.RobotsRule("-", "calendar", "/c\nDisallow: /\u2028x", "*", (), "withheld", "a\rb")
    text = robots_file.render("-", [rule], None, 0)
    assert Protego.parse(text).can_fetch("http://s/anything", "bot")
    assert len(text.splitlines()) == 3  # title, blank, the one withheld comment


# -- the current file --------------------------------------------------------------------------


def test_bots_that_ignore_the_current_robots_txt():
    rows = bots(["/cart/1", "/cart/2"], bot_name="BadBot", user_agent="BadBot/1") + bots(["/a"])
    traffic = traffic_of(requests_frame(rows))
    got = robots_file.ignoring_bots(traffic, "-", "User-agent: *\nDisallow: /cart/\n")
    assert got.select("bot_name", "pattern", "requests").rows() == [("BadBot", "/cart/{n}", 2)]


def test_requests_without_a_url_ask_nothing_of_the_current_robots_txt(tmp_path):
    # an empty request target and "-" as the request line (a TLS handshake on port 80) leave
    # no URL to match: they crashed `suggest --robots` ('NoneType' has no 'startswith')
    agent = '"-" "Mozilla/5.0 (compatible; AhrefsBot/7.0; +http://ahrefs.com/robot/)"'
    at = "[01/Nov/2026:00:00:1{} +0000] "
    log = tmp_path / "access.log"
    log.write_text("".join(f"66.249.66.1 - - {at.format(i)}{request} {agent}\n" for i, request in
                           enumerate(['"GET /cart/1 HTTP/1.1" 200 5', '"GET  HTTP/1.1" 200 5',
                                      '"-" 400 0'])))
    traffic = analyze(log, detectors=()).traffic
    got = robots_file.ignoring_bots(traffic, None, "User-agent: *\nDisallow: /cart/\n")
    assert got.select("bot_name", "pattern", "requests").rows() == [
        ("AhrefsBot", "/cart/{n}", 1)]


def test_bots_that_ignore_the_current_robots_txt_on_every_host_at_once():
    # each host's own sampled URLs decide: on b.example /cart/{n} holds a URL the file allows
    bad = {"bot_name": "BadBot", "user_agent": "BadBot/1"}
    rows = (bots(["/cart/1", "/cart/2"], host="a.example", **bad)
            + bots(["/cart/3", "/cart/5"], host="b.example", **bad)
            + bots(["/cart/4"], host="c.example", **bad) + bots(["/a"], host="c.example"))
    traffic = traffic_of(requests_frame(rows))
    current = "User-agent: *\nDisallow: /cart/\nAllow: /cart/5\n"
    every = robots_file.ignoring_bots(traffic, None, current)
    assert every.select("host", "bot_name", "pattern", "requests").rows() == [
        ("a.example", "BadBot", "/cart/{n}", 2), ("c.example", "BadBot", "/cart/{n}", 1)]
    one_by_one = [robots_file.ignoring_bots(traffic, h, current) for h in traffic.hosts]
    assert every.equals(pl.concat(one_by_one))


def test_each_bot_is_judged_by_its_own_group_of_the_current_file():
    # Googlebot has a group of its own that allows /cart/; BadBot and AhrefsBot fall under `*`
    # (answered once for both); GPTBot's group disallows everything
    rows = []
    for name in ("Googlebot", "BadBot", "AhrefsBot", "GPTBot"):
        rows += bots(["/cart/1", "/cart/2", "/a"], bot_name=name, user_agent=f"{name}/1")
    traffic = traffic_of(requests_frame(rows))
    current = ("User-agent: *\nDisallow: /cart/\n\nUser-agent: Googlebot\nAllow: /\n\n"
               "User-agent: GPTBot\nDisallow: /\n")
    got = robots_file.ignoring_bots(traffic, "-", current)
    assert got.select("bot_name", "pattern").sort("bot_name", "pattern").rows() == [
        ("AhrefsBot", "/cart/{n}"), ("BadBot", "/cart/{n}"), ("GPTBot", "/a"), ("GPTBot", "/cart/{n}"),
    ]


def test_current_rules_that_block_sitemap_urls():
    notes = robots_file.blocking_sitemap(CURRENT, ["/cart/shoes", "/cart/help/x", "/a"])
    assert notes == [
        "current robots.txt `Disallow: /cart` (User-agent: *) blocks sitemap URL /cart/shoes"]


LANDING = "/collections/new?sort_by=created-descending"


def sort_rule(landing: str = LANDING) -> robots.RobotsRule:
    """A sort's lines for the whole site, a landing page allowed back among them."""
    return star_rule(["Disallow: /*?sort_by=", "Disallow: /*&sort_by=", f"Allow: {landing}$"],
                     kind="facets", pattern="/{any}?sort_by")


def merged_with_sort(current: str, landing: str = LANDING) -> tuple[str, Protego]:
    """The current file with a sort's rule merged in, and its matcher."""
    merged = robots_file.render("-", [sort_rule(landing)], current, 10)
    return merged, Protego.parse(merged)


def test_star_lines_again_open_nothing_a_group_closed_nor_bind_google_ads_crawlers():
    # Shopify's default file bans Nutch and gives AdsBot its own group (adversarial review 19)
    current = ("User-agent: *\nDisallow: /cart\n\nUser-agent: Nutch\nDisallow: /\n\n"
               "User-agent: adsbot-google\nDisallow: /checkouts/\n")
    landing = LANDING
    merged, parsed = merged_with_sort(current)
    # Nutch gets the Disallow lines again, not the Allow line that would open a page to it
    nutch = merged.split("User-agent: Nutch\n", 1)[1].split("\n\n", 1)[0].splitlines()
    assert nutch == ["Disallow: /", "# logtrap: the * rules again (a crawler obeys only its most specific group)",
                     "Disallow: /*?sort_by=", "Disallow: /*&sort_by="]
    assert not parsed.can_fetch(f"https://s{landing}", "Nutch")
    # AdsBot ignores the * group: its own group stays the admin's
    assert merged.split("User-agent: adsbot-google\n", 1)[1] == "Disallow: /checkouts/\n"
    assert parsed.can_fetch(f"https://s{landing}&utm_source=google", "adsbot-google")
    # and everyone else gets the lines and the landing page
    assert parsed.can_fetch(f"https://s{landing}", "Googlebot")
    assert not parsed.can_fetch("https://s/collections/new?sort_by=price-ascending", "Googlebot")


def test_an_allow_line_goes_again_where_the_groups_own_lines_leave_its_page_open():
    # bingbot's own `Disallow: /*.pdf$` meets every path by its start, not the landing page
    # (adversarial review 19); a group shared with an ads crawler, or naming one with a `*`,
    # gets nothing
    current = ("User-agent: bingbot\nDisallow: /*.pdf$\n\nUser-agent: Nutch\nUser-agent: AdsBot-Google\n"
               "Disallow: /cart\n\nUser-agent: Mediapartners-Google*\nDisallow: /private\n")
    landing = LANDING
    merged, parsed = merged_with_sort(current)
    assert parsed.can_fetch(f"https://s{landing}", "bingbot")
    assert not parsed.can_fetch("https://s/collections/new?sort_by=price-ascending", "bingbot")
    assert not parsed.can_fetch("https://s/doc.pdf", "bingbot")
    for agent in ("AdsBot-Google", "Mediapartners-Google"):
        assert parsed.can_fetch(f"https://s{landing}&gclid=abc", agent)
    assert "User-agent: AdsBot-Google\nDisallow: /cart\n" in merged


@pytest.mark.parametrize(("current", "agent", "open_before"), [
    # two groups of one crawler are one (RFC 9309): the second's `Disallow: /` binds the first
    ("User-agent: Nutch\nDisallow: /cart\n\nUser-agent: Nutch\nDisallow: /\n", "Nutch", False),
    # the `*` group's own line for the page: no Allow line of ours reopens it
    ("User-agent: *\nDisallow: /collections/all\n", "Googlebot", False),
    # a group's own Allow line keeps the page open: so does ours, beside our Disallow lines
    ("User-agent: Nutch\nDisallow: /\nAllow: /coll\n", "Nutch", True),
    # read as matchers read them (adversarial round 5): `Nutch*` is Nutch, `Dissallow` a
    # Disallow, and a line with no directive in it splits no group
    ("User-agent: Nutch*\nDisallow: /\n\nUser-agent: Nutch\nDisallow: /cart\n", "Nutch", False),
    ("User-agent: Nutch\nDissallow: /\n", "Nutch", False),
    ("User-agent: Nutch\nNoindex /cart\nUser-agent: AhrefsBot\nDisallow: /\n", "Nutch", False),
])
def test_a_merge_leaves_a_landing_page_as_open_as_the_admins_file_had_it(current, agent, open_before):
    # adversarial round 4 of review 19
    landing = "/collections/all?sort_by=best-selling"
    _, parsed = merged_with_sort(current, landing)
    assert Protego.parse(current).can_fetch(f"https://s{landing}", agent) is open_before
    assert parsed.can_fetch(f"https://s{landing}", agent) is open_before


def test_a_new_group_for_a_crawler_named_in_a_shared_group_opens_nothing_it_closed():
    # meta-externalagent shares a group that closes /collections/; its new group (an
    # aggressive_bot rule) may not reopen the landing page there
    current = "User-agent: meta-externalagent\nUser-agent: Bytespider\nDisallow: /collections/\n"
    landing = "/collections/all?sort_by=best-selling"
    rules = [sort_rule(landing),
             robots.RobotsRule("-", "aggressive_bot", None, "meta-externalagent", ("Disallow: /asl/",), "emitted", "")]
    merged = robots_file.render("-", rules, current, 10)
    assert not Protego.parse(merged).can_fetch(f"https://s{landing}", "meta-externalagent")
    assert Protego.parse(merged).can_fetch(f"https://s{landing}", "Googlebot")
    # nor does the admin's `*` group, which never bound it, get written into its new group
    current = ("User-agent: *\nDisallow: /collections/winter-\n\n"
               "User-agent: meta-externalagent\nUser-agent: Bytespider\nDisallow: /old/\n")
    merged = robots_file.render("-", rules, current, 10)
    assert Protego.parse(merged).can_fetch("https://s/collections/winter-coats", "meta-externalagent")
    assert not Protego.parse(merged).can_fetch("https://s/asl/1", "meta-externalagent")


def test_findings_one_line_covers_share_a_comment_past_the_first_three():
    # a shop's layered navigation: a facet finding per category and set of filters, each
    # covered by its category's line (718 comments under 60 lines); the current file's line
    # covers the search's
    sets = ["a&b", "a&c", "b&c", "a&b&c", "a&b&d"]
    rules = [star_rule(["Disallow: /c/shoes?*&"], "facets", f"/c/shoes?{x}") for x in sets]
    rules.insert(2, star_rule(["Disallow: /c/bags?*&"], "facets", "/c/bags?a&b"))
    rules += [star_rule(["Disallow: /s?q="], "internal_search", f"/s{x}?q") for x in ("", "/a", "/b")]
    text = robots_file.render("-", rules, "User-agent: *\nDisallow: /s\n", 5)
    assert text.splitlines() == [
        "User-agent: *",
        "Disallow: /s",
        "# logtrap facets /c/shoes?a&b: 12 bot requests",
        "Disallow: /c/shoes?*&",
        "# logtrap facets /c/shoes?a&c: 12 bot requests (the lines above cover it)",
        "# logtrap facets /c/bags?a&b: 12 bot requests",
        "Disallow: /c/bags?*&",
        "# logtrap facets /c/shoes?b&c: 12 bot requests (the lines above cover it)",
        "# logtrap facets: 2 more patterns (the lines above cover them)",
        "# logtrap internal_search /s?q (the current Disallow: /s covers it)",
        "# logtrap internal_search /s/a?q (the current Disallow: /s covers it)",
        "# logtrap internal_search /s/b?q (the current Disallow: /s covers it)",
    ]  # (three of a kind: each its own)
    rules.append(star_rule(["Disallow: /s?q="], "internal_search", "/s/c?q"))
    text = robots_file.render("-", rules, "User-agent: *\nDisallow: /s\n", 5)
    assert text.splitlines()[-3:] == [
        "# logtrap internal_search /s?q (the current Disallow: /s covers it)",
        "# logtrap internal_search /s/a?q (the current Disallow: /s covers it)",
        "# logtrap internal_search: 2 more patterns (the current Disallow: /s covers them)"]
    # the same verdicts as every line written
    every_line = "User-agent: *\nDisallow: /s\n" + "".join(f"{r.lines[0]}\n" for r in rules)
    urls = ["/c/shoes?a=1&b=2", "/c/shoes?a=1", "/c/bags?a=1&c=2", "/s?q=1", "/s/c?q=1", "/shop"]
    assert verdicts(text, urls) == verdicts(every_line, urls) == [False, True, False, False, False, False]

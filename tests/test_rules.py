"""rules.suggest: the stage entry point, on hand-built findings and on every sample site."""

from __future__ import annotations

import gzip
import json
import re
from datetime import timedelta
from pathlib import Path

import polars as pl
import pytest

from builders import BOT, HUMAN, START, WOO_BROWSER, bots, combined_lines, humans, requests_frame, traffic_of
from logtrap import robots, rules, schema as s
from logtrap.errors import InputError
from logtrap.findings import Finding, empty_findings, to_frame
from logtrap.settings import Settings

SAMPLES = Path(__file__).resolve().parent.parent / "sample_logs"
META = {"bot_name": "meta-externalagent", "bot_kind": "ai", "user_agent": "meta-externalagent/1.1"}


def site():
    rows = (
        bots(["/calendar?date=2090-01", "/calendar?date=2091-02"])
        + bots(["/asl/1", "/psl/2"], **META)
        + bots(["/cart/1"], bot_name="BadBot", bot_kind="unknown", user_agent="BadBot/2")
        + humans(["/", "/calendar", "/asl/1"])
    )
    findings = to_frame([
        Finding("calendar", "warning", "-", "/calendar?date", 2, 2, ("/calendar?date=2090-01",)),
        Finding("aggressive_bot", "critical", "-", "/asl/{n}", 2, 2,
                evidence={"bot_name": "meta-externalagent", "routes": ["/asl/", "/psl/"]}),
    ])  # fmt: skip
    return findings, traffic_of(requests_frame(rows))


def test_suggest_on_a_small_site_with_a_current_robots_txt(tmp_path):
    (tmp_path / "robots.txt").write_text("# mine\nUser-agent: *\nDisallow: /cart/\n")
    (tmp_path / "sitemap.xml").write_text("<urlset><url><loc>https://s.example/calendar</loc></url></urlset>")
    findings, traffic = site()
    sug = rules.suggest(findings, traffic, Settings(robots=tmp_path / "robots.txt",
                                                    sitemaps=(tmp_path / "sitemap.xml",)))  # fmt: skip
    assert sug.robots_txt == """# mine
User-agent: *
Disallow: /cart/
# logtrap calendar /calendar?date: 2 bot requests
Disallow: /calendar?date=

User-agent: meta-externalagent
# logtrap aggressive_bot: 2 bot requests
Disallow: /asl/
Disallow: /psl/
# logtrap: the * rules again (a crawler obeys only its most specific group)
Disallow: /cart/
Disallow: /calendar?date=
"""
    assert sug.robots_by_host == {"-": sug.robots_txt}
    table = sug.rules.select("target", "kind", "group", "status", "saved_bot_requests").rows()
    assert table == [
        ("robots", "calendar", "*", "emitted", 2),
        ("robots", "aggressive_bot", "meta-externalagent", "emitted", 2),
        ("litespeed", "ignores_robots", "BadBot", "emitted", 1),
        ("apache", "ignores_robots", "BadBot", "emitted", 1),
        ("nginx", "ignores_robots", "BadBot", "emitted", 1),
        ("litespeed", "aggressive_bot", "meta-externalagent", "emitted", 2),
        ("apache", "aggressive_bot", "meta-externalagent", "emitted", 2),
        ("nginx", "aggressive_bot", "meta-externalagent", "emitted", 2),
    ]
    assert sug.rules.schema == pl.Schema(rules.RULE_SCHEMA)
    assert sug.notes[0] == (
        "BadBot fetched 1 URLs the current robots.txt disallows for it (/cart/{n}): if that "
        "robots.txt was served while the logs were written, it ignores robots.txt and only a "
        "server rule stops it"
    )
    assert sug.notes[1] == ("Together, the `User-agent: *` lines save 2 of 5 bot requests (40%), "
                            "each request counted once.")
    assert sug.notes[-1].startswith("robots.txt does not remove URLs that are already indexed")
    assert "RewriteCond %{HTTP_USER_AGENT} BadBot [NC]\nRewriteCond %{REQUEST_URI} ^/(cart)/ [NC]" in sug.htaccess
    assert sug.nginx_http in sug.nginx and sug.nginx_server in sug.nginx


def test_no_deny_rule_over_a_folder_where_the_bot_fetched_pages_robots_txt_allows(tmp_path):
    # the file disallows a relative loop under /blog/; the deny rule for the bot that fetched
    # it covered all of /blog/, and 403'd the posts it may fetch
    (tmp_path / "robots.txt").write_text("User-agent: *\nDisallow: /*/related/related/\n")
    ahrefs = {"bot_name": "AhrefsBot", "bot_kind": "seo", "user_agent": "AhrefsBot/7.0"}
    rows = (bots([f"/blog/post-{i}/related/related/" for i in range(3)], **ahrefs)
            + bots([f"/blog/post-{i}" for i in range(20)], **ahrefs))
    sug = rules.suggest(empty_findings(), traffic_of(requests_frame(rows)),
                        Settings(robots=tmp_path / "robots.txt"))
    server = sug.rules.filter(pl.col("kind") == "ignores_robots")
    assert server.select("target", "status").unique(maintain_order=True).rows() == [
        ("litespeed", "withheld"), ("apache", "withheld"), ("nginx", "withheld")]
    assert server["reason"][0] == (
        "its routes (/blog/) also hold 20 of AhrefsBot's requests the current robots.txt allows, "
        "which a deny rule there would block too: deny the disallowed URLs by hand")
    assert "RewriteCond" not in sug.htaccess and "# No server rule is needed." in sug.htaccess


def test_suggest_on_nothing_is_empty():
    sug = rules.suggest(empty_findings(), traffic_of(requests_frame([])))
    assert (sug.robots_txt, sug.htaccess, sug.nginx, sug.notes, sug.rules.height) == ("", "", "", [], 0)


def test_multiple_hosts_get_one_section_each():
    rows = bots(["/s/a8fk21qz", "/s/Q9x7ZkP2"], host="a.example") + bots(["/?sid=abcdef123456"], host="b.example")
    findings = to_frame([Finding("random_token", "warning", "a.example", "/s/{token}", 2, 2),
                         Finding("session_id", "warning", "b.example", "/?sid", 1, 1)])  # fmt: skip
    sug = rules.suggest(findings, traffic_of(requests_frame(rows)))
    assert list(sug.robots_by_host) == ["a.example", "b.example"]
    assert sug.robots_txt.startswith("# ==== host: a.example ====\n# robots.txt lines suggested by logtrap for host a.example\n")
    assert "# ==== host: b.example ====" in sug.robots_txt and "Disallow: /*&sid=" in sug.robots_by_host["b.example"]


def test_unified_diff():
    assert rules.unified_diff("a\n", "a\n") == ""


SHOP_EXTRA = {"sitemaps": (SAMPLES / "sitemap.xml",), "robots": SAMPLES / "robots.txt"}
VHOST_EXTRA = {"ip_ranges": (Path(__file__).parent / "data" / "googlebot.json",)}
SID = "Disallow: /*?sid=\nDisallow: /*&sid="

# Every rule suggest() gives on each sample site: (target, host, kind, pattern, status, rule)
# for robots.txt; server rules by target, host and kind (their exact text is in
# test_server_rules.py).
SAMPLE_RULES = {
    "nginx-shop": (SHOP_EXTRA, {
        ("robots", "-", "session_id", "/?sid", "emitted", SID),
        ("robots", "-", "internal_search", "/search?q", "emitted", "Disallow: /search?q="),
        ("robots", "-", "facets", "/shop/jackets?color&size&sort", "emitted",
         "Disallow: /shop/jackets?*&*&"),
        ("robots", "-", "facets", "/shop/shirts?color&size&sort", "emitted",
         "Disallow: /shop/shirts?*&*&"),
        ("robots", "-", "facets", "/shop/shoes?color&size&sort", "emitted",
         "Disallow: /shop/shoes?*&*&"),
        # two filters in either order, each a few URLs: the path's trap together
        *(("robots", "-", "facets", f"/shop/{path}?{names}", "emitted", f"Disallow: /shop/{path}?*&")
          for path, names in (("jackets", "color&sort"), ("jackets", "size&sort"),
                              ("shirts", "size&sort"), ("shoes", "color&sort"), ("shoes", "size&sort"))),
        ("robots", "-", "pagination", "/shop/shoes?page", "withheld", ""),
        ("robots", "-", "pagination", "/shop/shirts?page", "withheld", ""),
    }),
    "apache-blog": ({}, {
        ("robots", "-", "calendar", "/calendar?date", "emitted", "Disallow: /calendar?date="),
        ("robots", "-", "soft_404", "/tag/{slug}", "withheld", ""),
        ("robots", "-", "relative_loop", "/{any}/related/related/{loop}", "emitted",
         "Disallow: /*/related/related/"),
    }),
    "vhost": (VHOST_EXTRA, {
        ("robots", "news.example.net", "random_token", "/s/{token}", "emitted", "Disallow: /s/"),
        *((target, host, "fake_bot", None, "emitted", None)
          for target in ("litespeed", "apache", "nginx")
          for host in ("news.example.net", "www.example.net")),
    }),
    "litespeed": ({}, {
        ("robots", "-", "aggressive_bot", None, "emitted", "Disallow: /asl/\nDisallow: /psl/"),
        *((target, "-", "aggressive_bot", None, "emitted", None)
          for target in ("litespeed", "apache", "nginx")),
    }),
    "nginx-custom": ({}, {
        # people read upcoming event days (/events/2026-12-02): no Disallow over their decade;
        # the walk into the past is blocked, and into the future past the horizon (the logs'
        # end, November 2026, plus two years)
        ("robots", "events.example.io", "calendar", "/events/{date}", "narrowed", "\n".join(
            f"Disallow: /events/{p}" for p in ["2023-11", "2023-12", "2024", "2025", "2026-0", "2028-12",
                                               *robots.year_prefixes(2029, 2199)])),
    }),
}


@pytest.mark.parametrize("site", sorted(SAMPLE_RULES))
def test_sample_site_rules(site):
    from logtrap.analysis import analyze

    extra, expected = SAMPLE_RULES[site]
    truth = json.loads((SAMPLES / "ground_truth.json").read_text())["sites"][site]
    settings = Settings(log_format=truth["format"], **extra)
    analysis = analyze(str(SAMPLES / site / "access.log*"), settings)
    sug = rules.suggest(analysis.findings, analysis.traffic, settings)
    got = {
        (r["target"], r[s.HOST], r[s.KIND], r[s.PATTERN], r["status"],
         r["rule"] if r["target"] == "robots" else None)
        for r in sug.rules.iter_rows(named=True)
    }
    assert got == expected
    withheld = sug.rules.filter(pl.col("status") == "withheld")["reason"].to_list()
    assert all("would block content URL" in why for why in withheld)


def test_a_robots_txt_with_a_byte_order_mark_is_merged_into_its_own_group(tmp_path):
    # Windows editors save UTF-8 with a BOM; its first line was not read as "User-agent: *",
    # and the suggestions went into a second "*" group
    (tmp_path / "robots.txt").write_bytes(b"\xef\xbb\xbfUser-agent: *\nDisallow: /cart/\n")
    findings, traffic = site()
    sug = rules.suggest(findings.filter(pl.col("kind") == "calendar"), traffic,
                        Settings(robots=tmp_path / "robots.txt"))
    assert sug.robots_txt == (
        "User-agent: *\nDisallow: /cart/\n# logtrap calendar /calendar?date: 2 bot requests\n"
        "Disallow: /calendar?date=\n")


def test_a_binary_file_given_as_robots_txt_is_refused(tmp_path):
    # merged, it was printed to the terminal byte for byte
    (tmp_path / "robots.txt").write_bytes(bytes(range(256)) * 4)
    findings, traffic = site()
    with pytest.raises(InputError, match="robots.txt is not a robots.txt: it holds binary data"):
        rules.suggest(findings, traffic, Settings(robots=tmp_path / "robots.txt"))


@pytest.mark.parametrize("text", [
    '1.2.3.4 - - [01/Jan/2026:00:00:00 +0000] "GET / HTTP/1.1" 200 5 "-" "curl/8"\n',
    "<html><body>Not found</body></html>\n",
])
def test_a_file_without_a_robots_line_given_as_robots_txt_is_refused(tmp_path, text):
    # merged, every line of a log given by mistake went into the file suggested for publishing
    (tmp_path / "robots.txt").write_text("# not it\n" + text)
    findings, traffic = site()
    with pytest.raises(InputError) as err:
        rules.suggest(findings, traffic, Settings(robots=tmp_path / "robots.txt"))
    assert str(err.value) == (f"{tmp_path / 'robots.txt'} is not a robots.txt: no line of it "
                              "is a User-agent, Allow, Disallow or Sitemap line")
    (tmp_path / "robots.txt").write_text("# nothing disallowed\n\n")  # valid: allows all
    assert rules.suggest(findings, traffic, Settings(robots=tmp_path / "robots.txt")).notes


def test_sample_shop_merges_the_current_robots_txt():
    from logtrap.analysis import analyze

    settings = Settings(**SHOP_EXTRA)
    analysis = analyze(str(SAMPLES / "nginx-shop" / "access.log*"), settings)
    sug = rules.suggest(analysis.findings, analysis.traffic, settings)
    current = [line for line in (SAMPLES / "robots.txt").read_text().splitlines() if line]
    merged = sug.robots_txt.splitlines()
    rest = iter(merged)
    assert all(line in rest for line in current)  # every line kept, in its order
    assert "Disallow: /search?q=" in merged
    assert sug.htaccess == "" and sug.nginx == ""  # the shop has no aggressive or fake bot


def test_a_log_without_user_agents_gets_no_rule_that_could_block_pages_people_read(tmp_path):
    # The shop's logs as Apache `common` writes them: no referer, no user agent. Every request
    # is then a bot's "(not logged)", and any page answered with success may be one people
    # read: the rules that rest on knowing people's pages (pagination) are withheld, where
    # the combined logs get them withheld because people read pages 2 to 5 -- before this,
    # `Disallow: /shop/shoes?page=` was emitted here, blocking those pages.
    from logtrap import report
    from logtrap.analysis import analyze
    from logtrap.bots import NOT_LOGGED_NAME

    combined = re.compile(rb'^(.*" [0-9]{3} [0-9-]+) ".*$', re.MULTILINE)
    for src in sorted((SAMPLES / "nginx-shop").glob("access.log*")):
        opener = gzip.open if src.suffix == ".gz" else open
        with opener(src, "rb") as f:
            text = combined.sub(rb"\1", f.read())
        with opener(tmp_path / src.name, "wb") as f:
            f.write(text)
    # with the shop's current robots.txt, which disallows /cart: people put things in carts,
    # and before, "(not logged)" got a server rule for ignoring robots.txt there
    settings = Settings(robots=SAMPLES / "robots.txt")
    analysis = analyze(str(tmp_path / "access.log*"), settings)
    assert {fr.format_name for fr in analysis.stats.files} == {"common"}
    assert analysis.traffic.agents[s.BOT_NAME].unique().to_list() == [NOT_LOGGED_NAME]
    summary = report.to_dict(analysis)["summary"]
    assert summary["parsed"] == summary["bot_requests"] == 7344
    assert summary["requests_without_user_agent"] == 7344
    assert ("7,344 requests have no user agent in the log (its format does not record one)"
            in report.to_text(analysis, width=200))

    sug = rules.suggest(analysis.findings, analysis.traffic, settings)
    got = {(r[s.KIND], r[s.PATTERN], r["status"], r["rule"])
           for r in sug.rules.iter_rows(named=True)}
    # the two-filter sets: every other page of the shop may be people's here, and
    # `?color=&size=` is one (its rule over any two parameters narrowed, or withheld)
    two = {("facets", f"/shop/{path}?{names}") for path, names in (
        ("jackets", "color&sort"), ("jackets", "size&sort"), ("shirts", "size&sort"),
        ("shoes", "color&sort"), ("shoes", "size&sort"))}
    expected = {row[2:] for row in SAMPLE_RULES["nginx-shop"][1] if row[2:4] not in two} | {
        ("facets", f"/shop/{path}?{names}", "narrowed",
         f"Disallow: /shop/{path}?sort=\nDisallow: /shop/{path}?*&sort=")
        for path, names in (("jackets", "color&sort"), ("jackets", "size&sort"),
                            ("shoes", "color&sort"), ("shoes", "size&sort"))
    } | {("facets", "/shop/shirts?size&sort", "withheld", "")}
    assert got == expected
    withheld = sug.rules.filter(pl.col("status") == "withheld")["reason"].to_list()
    assert len(withheld) == 3
    assert sum(why.startswith("the log records no user agent for this pattern's requests")
               for why in withheld) == 2
    # (whichever page of two filters the URL sample holds first)
    assert re.match(r"Disallow: /shop/shirts\?\*& would block content URL /shop/shirts\?(color|size)=\w+&(color|size)=\w+ \(log\)$",
                    withheld[-1]), withheld[-1]
    assert [line for line in sug.robots_txt.splitlines() if "page=" in line] == []
    # checked against every URL answered with success outside the traps (the combined logs
    # have 298: the ones people or a verified search engine fetched), fetched: not the
    # `/cart/add` the shop's forms POST to
    emitted = sug.rules.filter(pl.col("status") == "emitted")["reason"].to_list()
    assert len(emitted) == 5 and all(why.endswith("none of 521 content URLs") for why in emitted)
    assert sug.htaccess == "" and sug.nginx == ""
    assert not any("ignores robots.txt" in note for note in sug.notes)


def small_app(addresses: int) -> tuple[pl.DataFrame, object]:
    """An aggressive_bot finding on okhttp's /api/ requests, sent from `addresses` addresses
    (a small shop's app on its customers' phones, or one script), beside Googlebot's crawl."""
    rows = [{"url": f"/api/feed?since={i}", "client": f"10.0.{i % addresses // 250}.{i % addresses % 250}",
             "is_bot": True, "bot_name": "okhttp", "bot_kind": "tool", "user_agent": "okhttp/4.12.0"}
            for i in range(300)]
    rows += bots([f"/blog/{i}" for i in range(100)]) + humans(["/", "/blog/1"])
    findings = to_frame([Finding("aggressive_bot", "critical", "-", "/api/feed?since", 300, 300,
                                 evidence={"bot_name": "okhttp", "routes": ["/api/"]})])
    return findings, traffic_of(requests_frame(rows))


def test_a_deny_rule_for_an_http_library_from_many_addresses_is_withheld():
    findings, traffic = small_app(3)  # one script's few addresses: the rule is written
    emitted = rules.suggest(findings, traffic).rules.filter(pl.col("target") == "apache")
    assert emitted.select("status", "saved_bot_requests").rows() == [("emitted", 300)]
    findings, traffic = small_app(80)  # 80 phones of a small shop's app: checked first
    withheld = rules.suggest(findings, traffic).rules.filter(pl.col("target") == "apache")
    assert withheld.select("status", "reason").rows() == [(
        "withheld", "okhttp came from 80 addresses: if they are an app's users, a deny rule "
        "locks them all out; see them with logtrap bots, and add the rule by hand if they are "
        "one scraper's")]
    robots_rule = rules.suggest(findings, traffic).rules.filter(pl.col("target") == "robots")
    assert robots_rule["status"].to_list() == ["emitted"]  # no app reads robots.txt: harmless


def test_a_url_pythons_parser_refuses_stops_no_suggestion(tmp_path):
    # a scanner's absolute-form target with a broken IPv6 host, checked against the current
    # robots.txt: Protego's URL parser raised ValueError and suggest stopped
    (tmp_path / "robots.txt").write_text("User-agent: *\nDisallow: /\n")
    rows = (bots(["http://[x"], bot_name="BadBot", bot_kind="unknown", user_agent="BadBot/1.0")
            + bots(["/a", "/b"]))
    sug = rules.suggest(empty_findings(), traffic_of(requests_frame(rows)),
                        Settings(robots=tmp_path / "robots.txt"))
    assert [n for n in sug.notes if "BadBot" in n] == []  # no rule applies to that URL
    assert "Googlebot fetched 2 URLs the current robots.txt disallows" in sug.notes[0]


def _forum(method: str) -> list[dict]:
    """A forum's ten days: people and a crawler read 40 threads; the crawler follows 150 new
    reaction links a day (`/posts/{n}/react?reaction_id=`, the same small form each), and
    members react to 20 posts a day by `method`."""
    person = {**HUMAN, s.USER_AGENT: WOO_BROWSER, s.CLIENT: "198.51.100.7"}
    rows = []
    for day in range(10):
        at = START + timedelta(days=day)
        for i in range(40):
            thread = {s.URL: f"/threads/topic-{i}.{i}/", s.BYTES: 30_000 + 97 * i}
            rows += [{**BOT, **thread, s.TIME: at + timedelta(seconds=i)},
                     {**person, **thread, s.TIME: at + timedelta(seconds=100 + i)}]
        rows += [{**BOT, s.TIME: at + timedelta(seconds=1000 + k), s.BYTES: 2900,
                  s.URL: f"/posts/{day * 150 + k}/react?reaction_id={1 + k % 3}"} for k in range(150)]
        rows += [{**person, s.METHOD: method, s.TIME: at + timedelta(seconds=3000 + k), s.BYTES: 431,
                  s.URL: f"/posts/{day * 150 + k}/react?reaction_id=1"} for k in range(20)]
    return rows


def test_members_posting_to_the_links_crawlers_follow_read_no_page(tmp_path):
    # review 19: members' reactions, POSTed, kept a forum's reaction links out of robots.txt;
    # read from the log, as the reader parses its request lines
    from logtrap.analysis import analyze

    got = {}
    for method in ("POST", "GET"):
        log = tmp_path / f"{method}.log"
        log.write_text(combined_lines(_forum(method)))
        got[method] = rules.suggest(analyze(str(log))).rules.filter(
            pl.col(s.PATTERN) == "/posts/{n}/react?reaction_id").select("status", "rule", "reason").rows()
    assert got["POST"] == [("emitted", "Disallow: /posts/*/react?reaction_id=",
                            "blocks all 1,000 distinct logged URLs of the trap and none of 40 content URLs")]
    # a frame of requests with a method column says the same
    framed = rules.suggest(analyze(requests_frame(_forum("POST")))).rules
    assert framed.filter(pl.col(s.PATTERN) == "/posts/{n}/react?reaction_id")["status"].to_list() == ["emitted"]
    # people reading them by GET: pages people read, which the rule may not block
    assert got["GET"] == [("withheld", "", "Disallow: /posts/*/react?reaction_id= would block content URL "
                           "/posts/450/react?reaction_id=1 (log, a page of the trap's own pattern fetched by people)")]


def _tag_trap() -> tuple[pl.DataFrame, object]:
    """A shop's joined tags (`/collections/basics/red+s+sale`) fetched by bots, beside two
    tag pages of a sub-collection only bots fetched, which `/collections/basics/*+` reaches."""
    trap = [f"/collections/basics/{a}+{b}+{c}" for a in ("red", "blue", "wool", "linen", "grey", "navy")
            for b in ("s", "m", "l", "xl") for c in ("cotton", "sale", "new")]
    rows = bots(trap) + bots(["/collections/basics/tees/red+blue", "/collections/basics/tees/s+m"])
    rows += humans(["/", "/about", "/collections/basics", "/collections/basics/tees"])
    finding = Finding("growing_pattern", "warning", "-", "/collections/basics/{name}", 72, 72, tuple(trap[:5]))
    return to_frame([finding]), traffic_of(requests_frame(rows))


def test_a_page_the_current_robots_txt_closes_already_is_no_content_a_rule_could_take(tmp_path):
    # the admin closed the sub-collection: its tag pages only bots fetched are closed to every
    # crawler already, and the tag trap's line needs no Allow lines to keep them open (it had
    # two, which the merge then dropped as the admin's closed pages, leaving a rule whose
    # reason named pages it did not keep open)
    (tmp_path / "robots.txt").write_text("User-agent: *\nDisallow: /collections/basics/tees/\n")
    findings, traffic = _tag_trap()
    sug = rules.suggest(findings, traffic, Settings(robots=tmp_path / "robots.txt"))
    (row,) = sug.rules.filter(pl.col("target") == "robots").select("rule", "status", "reason").rows()
    assert row == ("Disallow: /collections/basics/*+", "emitted",
                   "blocks all 72 distinct logged URLs of the trap and none of 4 content URLs")
    assert sug.robots_txt == ("User-agent: *\nDisallow: /collections/basics/tees/\n"
                              "# logtrap growing_pattern /collections/basics/{name}: 74 bot requests\n"
                              "Disallow: /collections/basics/*+\n")
    # Shopify's own `/collections/*+*` closes them and the trap: the merge says so (the rule
    # was withheld for the pages that line closes)
    (tmp_path / "robots.txt").write_text("User-agent: *\nDisallow: /collections/*+*\n")
    sug = rules.suggest(findings, traffic, Settings(robots=tmp_path / "robots.txt"))
    assert sug.robots_txt == ("User-agent: *\nDisallow: /collections/*+*\n# logtrap growing_pattern "
                              "/collections/basics/{name} (the current Disallow: /collections/*+* covers it)\n")


def test_a_page_closed_to_the_star_group_alone_stays_content_where_another_group_gets_the_lines(tmp_path):
    # Googlebot obeys its own group, which the `*` lines are copied into: the tag pages the `*`
    # group closes are open to it, and the line keeps them open
    (tmp_path / "robots.txt").write_text(
        "User-agent: *\nDisallow: /collections/*+*\n\nUser-agent: Googlebot\nDisallow: /checkout\n")
    findings, traffic = _tag_trap()
    sug = rules.suggest(findings, traffic, Settings(robots=tmp_path / "robots.txt"))
    (row,) = sug.rules.filter(pl.col("target") == "robots").select("rule", "status").rows()
    assert row == ("Disallow: /collections/basics/*+\nAllow: /collections/basics/tees/red+blue$\n"
                   "Allow: /collections/basics/tees/s+m$", "narrowed")

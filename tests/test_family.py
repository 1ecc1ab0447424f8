"""budget_hog over pattern families (detectors/_family.py): a code browser's views of every
file at every commit, split into a pattern per repository, view and file, judged together;
its robots.txt rule; and the sites that must stay silent.

Traffic is built as the pipeline builds it (tests/builders.py).
"""

from __future__ import annotations

import hashlib
import json
import re

import polars as pl
import pytest
from hypothesis import given
from hypothesis import settings as hsettings
from hypothesis import strategies as st

from logtrap import schema as s
from logtrap import server_rules as sr
from logtrap.detectors import _family, budget_hog
from logtrap.robots import host_rules
from logtrap.robots_match import blocked, matcher
from logtrap.rules import suggest
from logtrap.settings import Settings
import code_hosts
from builders import bots, humans, requests_frame, traffic_of
from test_server_rules import apache_ok, needs_apache, needs_nginx, nginx_ok

REPOS = ["libfoo.git", "bar.git"]
VIEWS = ["tree", "blame", "plain", "diff"]
FILES = ["Makefile", "README", "src/main.c", "src/util.c"]
AI = {s.IS_BOT: True, s.BOT_NAME: "ClaudeBot", s.BOT_KIND: "ai",
      s.USER_AGENT: "Mozilla/5.0 (compatible; ClaudeBot/1.0)"}  # fmt: skip


def sha(*parts: object) -> str:
    return hashlib.sha1("/".join(map(str, parts)).encode()).hexdigest()


def file_size(repo: str, view: str, name: str, commit: int) -> int:
    """The same file at commits 0-9, 10-19, ... answers the same bytes (it changed then)."""
    return 6000 + int(sha(repo, view, name, commit // 10)[:4], 16) % 20000


def crawl(commits: int = 40) -> list[dict]:
    """An AI crawler fetching every view of every file at every commit: 2 x 4 x 4 x 40."""
    return [
        {**AI, s.URL: f"/cgit/{repo}/{view}/{name}?id={sha(repo, c)}",
         s.BYTES: file_size(repo, view, name, c)}
        for repo in REPOS for view in VIEWS for name in FILES for c in range(commits)
    ]  # fmt: skip


def site() -> list[dict]:
    """What people and a search engine read: summaries, commits, files at the head."""
    pages = [f"/cgit/{repo}/" for repo in REPOS]
    pages += [f"/cgit/{repo}/commit/?id={sha(repo, c)}" for repo in REPOS for c in range(40)]
    pages += [f"/cgit/{repo}/tree/{name}" for repo in REPOS for name in FILES]
    sized = [{s.URL: u, s.BYTES: 9000 + 13 * i} for i, u in enumerate(pages)]
    people = [{**r, s.IS_BOT: False, s.BOT_NAME: None, s.BOT_KIND: None} for r in sized] * 3
    crawler = [{**r, **bots([r[s.URL]])[0]} for r in sized]
    return people + crawler


def families(rows: list[dict]) -> pl.DataFrame:
    out = budget_hog.detect(traffic_of(requests_frame(rows)), Settings())
    return out.filter(pl.col(s.PATTERN).str.contains("{path}", literal=True))


def test_fires_on_every_file_at_every_commit():
    out = families(crawl() + site())
    assert out.select(s.KIND, s.SEVERITY, s.HOST, s.PATTERN, s.REQUESTS, s.WASTED_REQUESTS).rows() == [
        ("budget_hog", "critical", "-", "/cgit/{path}?id", 1280, 1280)
    ]
    evidence = json.loads(out[s.EVIDENCE].item())
    assert {k: evidence[k] for k in ("bot_share", "bot_requests", "host_bot_requests",
                                     "human_requests", "unique_urls", "sampled_ok_urls",
                                     "distinct_ok_sizes", "urls_per_size", "patterns")} == {
        "bot_share": 0.9343, "bot_requests": 1280, "host_bot_requests": 1370,
        "human_requests": 0, "unique_urls": 1280, "sampled_ok_urls": 1280,
        "distinct_ok_sizes": 128, "urls_per_size": 10.0, "patterns": 32,
    }
    assert len(out[s.EXAMPLES].item()) == 5


def test_budget_hog_names_the_family_and_no_member_alone():
    # no one member takes the budget: the per-pattern judgement alone stays silent
    out = budget_hog.detect(traffic_of(requests_frame(crawl() + site())), Settings())
    assert out[s.PATTERN].to_list() == ["/cgit/{path}?id"]


def test_robots_rule_blocks_the_views_at_a_commit_and_no_page_people_read():
    traffic = traffic_of(requests_frame(crawl() + site()))
    findings = budget_hog.detect(traffic, Settings())
    rules = host_rules(findings, traffic, "-", [], Settings()).rules
    assert [(r.pattern, r.status, r.lines) for r in rules] == [(
        "/cgit/{path}?id", "emitted",
        ("Disallow: /cgit/*/blame/*?id=", "Disallow: /cgit/*/diff/*?id=",
         "Disallow: /cgit/*/plain/*?id=", "Disallow: /cgit/*/tree/*?id="),
    )]
    robots = matcher(rules[0].lines)
    read = [r[s.URL] for r in site()]
    assert not any(blocked(robots, read))
    assert all(blocked(robots, [r[s.URL] for r in crawl()]))
    assert rules[0].saved_bot_requests == 1280


def test_rule_keeps_the_views_when_nothing_else_asking_for_a_commit_is_logged():
    # no commit pages in the log: the rule still names the views, and blocks none of the
    # sibling family's pages (a commit, a log, a tree at a tag) it never saw
    people = [r for r in site() if "commit" not in r[s.URL]]
    traffic = traffic_of(requests_frame(crawl() + people))
    rules = host_rules(budget_hog.detect(traffic, Settings()), traffic, "-", [], Settings()).rules
    assert [(r.status, r.lines) for r in rules] == [("emitted", (
        "Disallow: /cgit/*/blame/*?id=", "Disallow: /cgit/*/diff/*?id=",
        "Disallow: /cgit/*/plain/*?id=", "Disallow: /cgit/*/tree/*?id=",
    ))]
    siblings = [f"/cgit/libfoo.git/commit/?id={sha('libfoo.git', 1)}",
                f"/cgit/libfoo.git/log/?id={sha('libfoo.git', 1)}", "/cgit/bar.git/refs/?id=v1.0"]
    assert not any(blocked(matcher(rules[0].lines), siblings))


def test_silent_on_a_repository_browser_people_use():
    # people click through files at commits too: it is read, not a trap
    reading = [{**r, s.IS_BOT: False, s.BOT_NAME: None, s.BOT_KIND: None} for r in crawl()[::20]]
    assert families(crawl() + site() + reading).height == 0


def test_silent_where_each_file_at_each_commit_differs():
    # every URL its own page (a size each): a big history crawled once, not the same bytes
    distinct = [{**r, s.BYTES: 6000 + 17 * i} for i, r in enumerate(crawl())]
    assert families(distinct + site()).height == 0


def test_silent_on_literal_pages_without_a_commit():
    # a docs site's many literal pages, asked for by version name: no commit id in them
    docs = [{**r, s.URL: r[s.URL].split("?")[0] + f"?ref=v{i % 40}"} for i, r in enumerate(crawl())]
    assert families(docs + site()).height == 0


def test_silent_on_a_registrys_hashed_downloads():
    # 64 hex digits name a file's bytes, not a commit
    files = [{**r, s.URL: r[s.URL].split("?")[0] + "?digest=" + hashlib.sha256(r[s.URL].encode()).hexdigest()}
             for r in crawl()]
    assert families(files + site()).height == 0


def test_silent_when_the_family_takes_under_half_the_budget():
    more = [{**r, **bots([r[s.URL]])[0]} for r in site()] * 3
    articles = bots([f"/article/{i}" for i in range(1000)])
    assert families(crawl() + site() + more + articles).height == 0


def test_families_group_literal_segments_below_the_first_level():
    patterns = pl.DataFrame({"pattern": ["/cgit/a.git/tree/src/x.c?id", "/cgit/a.git/blame/README?id",
                          "/cgit/a.git/commit/?id", "/cgit/a.git/tree/README",
                          "/g/p/-/blame/{hex}/src/x.c", "/a/{n}"]})  # fmt: skip
    assert patterns.select(_family.family_of(pl.col("pattern"))).to_series().to_list() == [
        "/cgit/{path}?id", "/cgit/{path}?id", "/cgit/{path}/?id", "/cgit/{path}",
        "/g/{path}/{hex}/{path}", None,
    ]


def family_by_hand(pattern: str) -> str | None:
    """`family_of` for one pattern, segment by segment: below the first, each run of literal
    segments (not empty, no placeholder) one `{path}`, a trailing slash kept."""
    path, asked, query = pattern.partition("?")
    head = re.match(r"/[^/]*", path)
    if head is None:
        return None
    rest = path[head.end():]
    body = rest.removesuffix("/")
    out: list[str | None] = []  # None: a run of literal segments
    for segment in body.split("/")[1:]:
        literal = segment != "" and "{" not in segment and "}" not in segment
        if not (literal and out and out[-1] is None):
            out.append(None if literal else segment)
    runs = "".join("/" + ("{path}" if x is None else x) for x in out) + ("/" if rest.endswith("/") else "")
    return head.group() + runs + asked + query if "{path}" in runs else None


_SEGMENT = st.sampled_from(["a", "r.git", "tree", "{n}", "{hex}", "x{n}", "{n}.html", "", "-", "~u",
                            "{path}", "a;b", "%2F", "{token}"])


@hsettings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(st.lists(_SEGMENT, max_size=6), st.booleans(),
                          st.sampled_from(["", "?id", "?", "?q&{n}"]), st.booleans()), min_size=1, max_size=40))
def test_family_of_takes_each_run_of_literal_segments_as_one(shapes):
    # in one query, as the detector takes a log's patterns (each run taken once: 2.3 s of
    # 700,000 patterns against 0.8)
    patterns = [("/" if rooted else "") + "/".join(segments) + ("/" if slash and segments else "") + query
                for segments, slash, query, rooted in shapes]
    got = pl.DataFrame({"pattern": patterns}).select(_family.family_of(pl.col("pattern"))).to_series()
    assert got.to_list() == [family_by_hand(p) for p in patterns]


def test_empty_traffic_has_no_family():
    from builders import empty_traffic

    assert _family.detect(empty_traffic(), Settings()).height == 0
    assert budget_hog.detect(empty_traffic(), Settings()).height == 0


def test_fires_on_a_commit_in_the_path_as_gitlab_blames():
    # /group/project/-/blame/SHA/FILE: the commit a segment, the files literal after it
    gitlab = [{**r, s.URL: "/group/{}/-/{}/{}/{}".format(
        *r[s.URL].removeprefix("/cgit/").split("?id=")[0].split("/", 2)[:2],
        r[s.URL].split("?id=")[1], r[s.URL].split("?")[0].split("/", 4)[4])} for r in crawl()]
    people = humans(["/group/", "/group/libfoo.git/", "/group/bar.git/"] * 5)
    traffic = traffic_of(requests_frame(gitlab + people))
    out = budget_hog.detect(traffic, Settings())
    assert out.select(s.SEVERITY, s.PATTERN, s.WASTED_REQUESTS).rows() == [
        ("critical", "/group/{path}/{hex}/{path}", 1280)
    ]
    rules = host_rules(out, traffic, "-", [], Settings()).rules
    # robots.txt has no hex digits: `*` for the commit would take branches and issues too
    assert [(r.status, r.lines) for r in rules] == [("withheld", ())]
    assert rules[0].reason.startswith("the commit id is a path segment")


def catalog(ids: list[str]) -> list[dict]:
    """Bots fetching every product and its tabs: reviews and questions empty (one page each),
    specs a page of its own per product."""
    rows = []
    for j, oid in enumerate(ids):
        rows += bots([f"/products/{oid}"], **{s.BYTES: 20000 + 37 * j})
        rows += bots([f"/products/{oid}/reviews"], **{s.BYTES: 5120})
        rows += bots([f"/products/{oid}/questions"], **{s.BYTES: 4980})
        rows += bots([f"/products/{oid}/specs"], **{s.BYTES: 11000 + 43 * j})
    return rows + humans(["/", "/about"] * 60)


def test_silent_on_a_catalog_whose_members_are_pages_apiece():
    # two tabs repeat one empty page, the third is a page per product: counted per member,
    # the repeating two are not a family (pooled, they carried the specs' 700 pages as waste)
    assert families(catalog([sha("product", j) for j in range(700)])).height == 0


def test_a_member_of_pages_apiece_is_not_counted_in_the_family():
    # a view whose every URL answers a page of its own: not the family's waste
    stats = [{**AI, s.URL: f"/cgit/libfoo.git/stats/README?id={sha('libfoo.git', c)}",
              s.BYTES: 30000 + 29 * c} for c in range(40)]  # fmt: skip
    out = families(crawl() + stats + site())
    assert out.select(s.PATTERN, s.WASTED_REQUESTS).rows() == [("/cgit/{path}?id", 1280)]
    assert json.loads(out[s.EVIDENCE].item())["patterns"] == 32
    # nor does its rule block them: pages apiece stay open
    traffic = traffic_of(requests_frame(crawl() + stats + site()))
    (rule,) = host_rules(budget_hog.detect(traffic, Settings()), traffic, "-", [], Settings()).rules
    assert rule.status == "emitted"
    assert not any(blocked(matcher(rule.lines), [r[s.URL] for r in stats]))
    assert all(blocked(matcher(rule.lines), [r[s.URL] for r in crawl()]))


def test_rule_blocks_no_sitemap_url_of_the_family():
    # a member's URL the sitemap lists is content, though only crawlers fetched it
    traffic = traffic_of(requests_frame(crawl() + site()))
    listed = crawl()[0][s.URL]
    rules = host_rules(budget_hog.detect(traffic, Settings()), traffic, "-",
                       ["https://example.org" + listed], Settings()).rules
    assert [r.status for r in rules] == ["narrowed"]
    assert not any(blocked(matcher(rules[0].lines), [listed]))
    assert all(blocked(matcher(rules[0].lines), [r[s.URL] for r in crawl()[1:]]))


def test_silent_on_ids_of_a_length_no_commit_has():
    # 24 hex digits: a MongoDB ObjectId names a product, not a commit (git: 7-12 or 40)
    oids = [{**r, s.URL: r[s.URL].split("?id=")[0] + "?id=" + r[s.URL].split("?id=")[1][:24]}
            for r in crawl()]
    assert families(oids + site()).height == 0
    # git's short form is a commit still
    short = [{**r, s.URL: r[s.URL].split("?id=")[0] + "?id=" + r[s.URL].split("?id=")[1][:12]}
             for r in crawl()]
    assert families(short + site())[s.WASTED_REQUESTS].to_list() == [1280]


def test_rule_keeps_the_views_when_every_file_is_in_a_folder():
    # files only under src/ and docs/: the directories were literal in every member and, tried
    # deepest first, the rule was `/cgit/*/src/*?id=`: the next crawl's tests/ open, a
    # commit's log/src/ pages blocked
    deep = [{**r, s.URL: r[s.URL].replace("/Makefile?", "/docs/Makefile?").replace("/README?", "/docs/README?")}
            for r in crawl()]
    traffic = traffic_of(requests_frame(deep + site()))
    (rule,) = host_rules(budget_hog.detect(traffic, Settings()), traffic, "-", [], Settings()).rules
    assert (rule.lines, rule.status) == (tuple(f"Disallow: /cgit/*/{v}/*?id=" for v in sorted(VIEWS)), "emitted")


def test_rule_keeps_the_views_of_a_cgit_under_a_script_path():
    # /git/cgit.cgi/REPO/VIEW/FILE: the view is no longer the third level, and tried first by
    # its place the repositories' `/git/*/libfoo.git/*?id=` took their commit and log pages
    moved = [{**r, s.URL: r[s.URL].replace("/cgit/", "/git/cgit.cgi/")} for r in crawl()]
    site_ = [{**r, s.URL: r[s.URL].replace("/cgit/", "/git/cgit.cgi/")} for r in site()
             if "/commit/" not in r[s.URL]]
    traffic = traffic_of(requests_frame(moved + site_))
    (rule,) = host_rules(budget_hog.detect(traffic, Settings()), traffic, "-", [], Settings()).rules
    assert (rule.lines, rule.status) == (tuple(f"Disallow: /git/*/{v}/*?id=" for v in sorted(VIEWS)), "emitted")
    siblings = [f"/git/cgit.cgi/libfoo.git/{p}?id={sha('x', 1)}" for p in ("commit/", "log/", "log/src/main.c")]
    assert not any(blocked(matcher(rule.lines), siblings))


def listings_and_tags(tags: int) -> list[dict]:
    """The crawler fetching each repository's tree listings at every commit too (a page
    apiece); Googlebot fetching the tree listings of the first `tags` releases of bar.git."""
    listings = [{**AI, s.URL: f"/cgit/{repo}/tree/{d}?id={sha(repo, c)}", s.BYTES: 4000 + 17 * c + len(d)}
                for repo in REPOS for d in ("", "src/") for c in range(40)]  # fmt: skip
    released = [{**code_hosts.GOOGLE, s.URL: f"/cgit/bar.git/tree/{d}?id=v1.{n}", s.BYTES: 3000 + 7 * n + len(d)}
                for n in range(tags) for d in ("", "src/")]  # fmt: skip
    return listings + released


def test_rule_keeps_open_a_tags_listing_only_a_search_engine_fetched():
    # `/cgit/*/tree/*?id=` spans the empty segment: the tree at tag v1.0, fetched by Googlebot
    # only, was blocked; the listings at a commit are the crawl's, and stay blocked
    rows = crawl() + site() + listings_and_tags(1)
    traffic = traffic_of(requests_frame(rows))
    (rule,) = host_rules(budget_hog.detect(traffic, Settings()), traffic, "-", [], Settings()).rules
    assert (rule.status, rule.lines, rule.saved_bot_requests) == ("narrowed", (
        "Disallow: /cgit/*/blame/*?id=", "Disallow: /cgit/*/diff/*?id=", "Disallow: /cgit/*/plain/*?id=",
        "Disallow: /cgit/*/tree/*?id=", "Allow: /cgit/bar.git/tree/?id=v1.0$", "Allow: /cgit/bar.git/tree/src/?id=v1.0$",
    ), 1440)
    assert rule.reason == (
        "blocks all 1,280 distinct logged URLs of the family's 32 patterns and none of 92 content "
        "URLs; narrowed: Disallow: /cgit/*/tree/*?id= would block content URL /cgit/bar.git/tree/?id=v1.0 "
        "(log, a page of a pattern no finding names, which the rule's lines reached) (and 1 more): "
        "Allow lines keep them open"
    )
    robots = matcher(rule.lines)
    assert all(blocked(robots, [r[s.URL] for r in rows if r[s.BOT_NAME] == "ClaudeBot"]))
    assert not any(blocked(robots, [r[s.URL] for r in rows if r[s.BOT_NAME] != "ClaudeBot"]))


def test_rule_withheld_where_it_reaches_more_tags_than_allow_lines_keep_open():
    traffic = traffic_of(requests_frame(crawl() + site() + listings_and_tags(2)))
    (rule,) = host_rules(budget_hog.detect(traffic, Settings()), traffic, "-", [], Settings()).rules
    assert (rule.status, rule.lines, rule.saved_bot_requests) == ("withheld", (), 0)
    assert rule.reason == (
        "Disallow: /cgit/*/tree/*?id= would block content URL /cgit/bar.git/tree/?id=v1.1 (log, a "
        "page of a pattern no finding names, which the rule's lines reached)"
    )


# -- code hosts whose first segment is an owner (tests/code_hosts.py) ---------------------------


@pytest.mark.parametrize("kind", sorted(code_hosts.HOSTS))
def test_fires_across_the_owners_of_a_code_host(kind):
    # a family per owner took a quarter of the budget each, and none fired
    out = families(code_hosts.site(kind))
    assert out.select(s.KIND, s.SEVERITY, s.HOST, s.PATTERN, s.REQUESTS, s.WASTED_REQUESTS).rows() == [
        ("budget_hog", "critical", "-", "/{path}/{hex}/{path}", 1920, 1920)
    ]
    evidence = json.loads(out[s.EVIDENCE].item())
    assert {k: evidence[k] for k in ("bot_share", "bot_requests", "host_bot_requests",
                                     "human_requests", "patterns", "urls_per_size")} == {
        "bot_share": 0.9302, "bot_requests": 1920, "host_bot_requests": 2064,
        "human_requests": 0, "patterns": 96, "urls_per_size": 10.0,
    }


def test_an_owner_taking_the_budget_alone_keeps_its_own_family():
    # alice's repositories take most of the crawl: her family fires under her name, and the
    # other owners' crawl (under half) is none
    rows = code_hosts.crawl("gitea", ["alice"], commits=80) + code_hosts.site("gitea", ["bob", "carol"])
    assert families(rows).select(s.PATTERN, s.WASTED_REQUESTS).rows() == [("/alice/{path}/{hex}/{path}", 1920)]


def test_silent_on_a_shop_whose_first_segment_is_a_category():
    # /{category}/{brand}/p/{id}/{tab}: shaped like /{owner}/{repo}/blob/{sha}/{file}, its
    # empty tabs repeat one page, three quarters of the bot fetches; its ids are 24 hex
    # digits, no commit's
    assert families(code_hosts.shop()).height == 0


def test_silent_on_a_blog_whose_first_segment_is_its_author():
    # /{author}/2024/05/{slug}/comment/{id}: each comment's permalink shows the post again;
    # its ids are 16 hex digits, no commit's
    assert families(code_hosts.blog()).height == 0


def test_sections_pinned_to_commits_are_not_one_family():
    # /builds/P/artifacts/SHA/F and /docs/P/pages/SHA/F: each under half the budget, over
    # half together, alike below their first level; no view under both: two sections
    assert families(code_hosts.sections_with_ids()).height == 0
    # a third owner of the docs' view makes the view shared: then it is a code host's
    more = [{**r, s.URL: r[s.URL].replace("/docs/", "/manuals/")} for r in code_hosts.sections_with_ids()
            if r[s.URL].startswith("/docs/")]
    assert families(code_hosts.sections_with_ids() + more).select(s.PATTERN, s.WASTED_REQUESTS).rows() == [
        ("/{path}/{hex}/{path}", 720)
    ]


def code_rules(rows: list[dict]):
    traffic = traffic_of(requests_frame(rows))
    findings = budget_hog.detect(traffic, Settings())
    return traffic, findings, host_rules(findings, traffic, "-", [], Settings()).rules


def test_gitea_rule_blocks_the_views_that_name_the_commit():
    # Gitea keeps commits apart from branches (src/commit/SHA/ beside src/branch/main/): a
    # line per view, the owners and repositories as `*`
    _, _, rules = code_rules(code_hosts.site("gitea"))
    assert [(r.pattern, r.status, r.lines, r.saved_bot_requests) for r in rules] == [(
        "/{path}/{hex}/{path}", "emitted",
        ("Disallow: /*/*/blame/commit/", "Disallow: /*/*/raw/commit/", "Disallow: /*/*/src/commit/"),
        1920,
    )]
    robots = matcher(rules[0].lines)
    assert all(blocked(robots, [r[s.URL] for r in code_hosts.crawl("gitea")]))
    assert not any(blocked(robots, code_hosts.pages("gitea")))  # branch heads, commits, homes


# Gitea's src view, a line per owner and repository: where `/*/*/src/commit/` would reach a
# branch head's folder named `src/commit/`
SRC_PER_REPO = tuple(f"Disallow: /{o}/{r}/src/commit/" for o in code_hosts.OWNERS
                     for r in sorted(code_hosts.REPOS))


def test_gitea_view_takes_a_line_per_repository_where_its_line_blocks_a_page_people_read():
    # people read a library's files at the branch head in its folder `src/commit/`:
    # `/*/*/src/commit/` spans segments and blocks them, and the view was left open
    heads = [f"/alice/gitlib/src/branch/main/src/commit/{f}" for f in ("mod.rs", "decode.rs", "encode.rs", "iter.rs")]
    _, _, rules = code_rules(code_hosts.site("gitea") + code_hosts.read(heads))
    assert [(r.status, r.lines, r.saved_bot_requests) for r in rules] == [
        ("narrowed", ("Disallow: /*/*/blame/commit/", "Disallow: /*/*/raw/commit/", *SRC_PER_REPO), 1920)
    ]
    assert rules[0].reason == (
        "blocks all 1,920 distinct logged URLs of the family's views that name the commit, and "
        "none of 148 content URLs; narrowed: Disallow: /*/*/src/commit/ would block content URL "
        "/alice/gitlib/src/branch/main/src/commit/decode.rs (log): 8 lines instead, one per owner "
        "and repository (a line without * takes only the paths that start with it)"
    )
    robots = matcher(rules[0].lines)
    assert not any(blocked(robots, heads))
    assert all(blocked(robots, [r[s.URL] for r in code_hosts.crawl("gitea")]))


def heads_in_a_folder_named_commit() -> tuple[list[dict], list[str]]:
    """Gitea crawled at every commit, the root listing at each commit too (a page apiece);
    and the branch head of a library with a source folder `src/commit/`, fetched by
    Googlebot only: (rows, the head's URLs)."""
    roots = [{**code_hosts.AI, s.URL: f"/{o}/{r}/src/commit/{code_hosts.sha(o, r, c)}", s.BYTES: 5000 + 31 * i}
             for i, (o, r, c) in enumerate((o, r, c) for o in code_hosts.OWNERS for r in code_hosts.REPOS
                                           for c in range(code_hosts.COMMITS))]  # fmt: skip
    heads = [f"/alice/gitlib/src/branch/main/src/commit/{f}" for f in ("mod.rs", "decode.rs", "encode.rs")]
    heads.append("/alice/gitlib/raw/branch/main/src/commit/mod.rs")
    fetched = [{**code_hosts.GOOGLE, s.URL: u, s.BYTES: 7000 + 131 * i} for i, u in enumerate(heads)]
    return code_hosts.site("gitea") + roots + fetched, heads


def test_gitea_rule_spares_a_branch_heads_folder_named_like_the_view():
    # `/*/*/src/commit/` spans segments: it took /alice/gitlib/src/branch/main/src/commit/mod.rs,
    # a page only Googlebot fetched; the src view takes a line per owner and repository
    # instead, the other views keep theirs, the listings at a commit stay blocked
    rows, heads = heads_in_a_folder_named_commit()
    _, _, rules = code_rules(rows)
    assert [(r.status, r.lines, r.saved_bot_requests) for r in rules] == [
        ("narrowed", ("Disallow: /*/*/blame/commit/", "Disallow: /*/*/raw/commit/", *SRC_PER_REPO), 2080)
    ]
    assert rules[0].reason == (
        "blocks all 1,920 distinct logged URLs of the family's views that name the commit, and "
        "none of 148 content URLs; narrowed: Disallow: /*/*/src/commit/ would block content URL "
        "/alice/gitlib/raw/branch/main/src/commit/mod.rs (log, a page of a pattern no finding "
        "names, which the rule's lines reached): 8 lines instead, one per owner and repository "
        "(a line without * takes only the paths that start with it)"
    )
    robots = matcher(rules[0].lines)
    assert not any(blocked(robots, heads))
    assert all(blocked(robots, [r[s.URL] for r in rows if "/commit/" in r[s.URL] and r[s.BOT_NAME] == "ClaudeBot"]))
    assert not any(blocked(robots, code_hosts.pages("gitea")))


def test_gitea_view_stays_open_where_its_repositories_take_too_many_lines(monkeypatch):
    monkeypatch.setattr(_family, "MAX_REPOSITORY_LINES", 4)
    rows, heads = heads_in_a_folder_named_commit()
    _, _, rules = code_rules(rows)
    assert [(r.status, r.lines, r.saved_bot_requests) for r in rules] == [
        ("narrowed", ("Disallow: /*/*/blame/commit/", "Disallow: /*/*/raw/commit/"), 1280)
    ]
    assert rules[0].reason == (
        "blocks all 1,280 distinct logged URLs of the family's views that name the commit, and "
        "none of 148 content URLs; left open: Disallow: /*/*/src/commit/ would block content URL "
        "/alice/gitlib/raw/branch/main/src/commit/mod.rs (log, a page of a pattern no finding "
        "names, which the rule's lines reached), and a line per owner and repository would take "
        "8 lines, more than 4"
    )
    assert not any(blocked(matcher(rules[0].lines), heads))


@pytest.mark.parametrize("kind", ["github", "gitlab", "sourcehut"])
def test_no_robots_line_where_a_view_takes_branch_names_too(kind):
    # /-/tree/SHA/ and /-/tree/main/: robots.txt has `*` and `$` only
    _, _, rules = code_rules(code_hosts.site(kind))
    assert [(r.status, r.lines, r.saved_bot_requests) for r in rules] == [("withheld", (), 0)]
    assert rules[0].reason.startswith("the commit id is a path segment after a view that takes a branch's name")


def test_the_withheld_rule_says_why_and_what_to_do_instead():
    _, _, (rule,) = code_rules(code_hosts.site("gitlab"))
    assert rule.reason == (
        "the commit id is a path segment after a view that takes a branch's name as well "
        "(/*/*/-/blame/{commit}/, /*/*/-/blob/{commit}/, /*/*/-/tree/{commit}/: `main` as well as "
        "a commit): robots.txt (RFC 9309) has only `*` and `$`, no way to say a commit id, so a "
        "`*` in the commit's place would block the pages at the branch head people read, and no "
        "robots.txt line is drafted for them; a server rule (.htaccess, nginx) can refuse a "
        "crawler there by a regex of a commit id in the commit's place (7 to 12 or 40 hex digits, "
        "letters and digits mixed), or link these views at the branch head, or mark "
        "commit-pinned links rel=\"nofollow\""
    )


def test_server_rules_refuse_the_crawler_on_commits_only():
    # where robots.txt cannot, a regex can: a commit id in the commit's place
    rows = code_hosts.site("gitlab")
    traffic = traffic_of(requests_frame(rows))
    out = suggest(budget_hog.detect(traffic, Settings()), traffic, Settings())
    server = out.rules.filter(pl.col("target") != "robots")
    assert server.select("target", s.KIND, "group", "status", "saved_bot_requests", "other_requests").rows() == [
        (t, "budget_hog", "ClaudeBot", "emitted", 1920, 0) for t in ("litespeed", "apache", "nginx")
    ]
    commit = "(?=[0-9a-f]*[0-9])(?=[0-9a-f]*[a-f])(?:[0-9a-f]{7,12}|[0-9a-f]{40})"
    condition = (f"RewriteCond %{{REQUEST_URI}} ^/([^/]+/[^/]+/\\x2d/blame/{commit}|"
                 f"[^/]+/[^/]+/\\x2d/blob/{commit}|[^/]+/[^/]+/\\x2d/tree/{commit})/ [NC]")
    assert condition in out.htaccess.splitlines()
    route = re.compile(condition.split(" ")[2], sr.FLAGS)
    assert all(route.search(sr.decoded_path(r[s.URL])) for r in code_hosts.crawl("gitlab"))
    assert not any(route.search(sr.decoded_path(u)) for u in code_hosts.pages("gitlab"))


def short(rows: list[dict], length: int = 8) -> list[dict]:
    """The rows with each 40-hex commit in their URLs cut to git's short form."""
    return [{**r, s.URL: "/".join(p[:length] if len(p) == 40 else p for p in r[s.URL].split("/"))} for r in rows]


def test_server_rules_refuse_the_crawler_at_short_commit_ids():
    # GitLab links commits by 8 hex digits: the family counts them, and its server rules
    # matched none of the crawler's requests (40 hex digits only)
    crawled = short(code_hosts.crawl("gitlab"))
    traffic = traffic_of(requests_frame(crawled + code_hosts.read(code_hosts.pages("gitlab"))))
    findings = budget_hog.detect(traffic, Settings())
    assert findings.select(s.PATTERN, s.WASTED_REQUESTS).rows() == [("/{path}/{hex}/{path}", 1896)]
    out = suggest(findings, traffic, Settings())
    assert out.rules.select("target", "group", "status", "saved_bot_requests", "other_requests").rows() == [
        ("robots", "*", "withheld", 0, 0),
        *((t, "ClaudeBot", "emitted", 1896, 0) for t in ("litespeed", "apache", "nginx")),
    ]
    (condition,) = {line for line in out.htaccess.splitlines() if "REQUEST_URI" in line}
    route = re.compile(condition.split(" ")[2], sr.FLAGS)
    # the commit ids the family counts, no others: an id of digits alone (24 of the 1,920
    # requests) is a number to it, and to the rule
    urls = [r[s.URL] for r in crawled]
    counted = pl.DataFrame({"url": urls}).select(_family.commit_like(pl.col("url"))).to_series().to_list()
    assert [bool(route.search(sr.decoded_path(u))) for u in urls] == counted
    assert counted.count(False) == 24
    assert not any(route.search(sr.decoded_path(u)) for u in code_hosts.pages("gitlab"))


def test_server_rules_take_no_branch_named_like_hex_digits_alone():
    route = re.compile(sr.route_regex(["/*/*/-/tree/{commit}/"]), sr.FLAGS)
    refused = {name: bool(route.search(f"/g/p/-/tree/{name}/README.md"))
               for name in ("5fec6e2", "5FEC6E2A", "deadbeef", "20240115", "cafe1234", "5fec6e2a0", "a" * 13,
                            sha("x"), sha("x")[:39], "main")}  # fmt: skip
    assert refused == {"5fec6e2": True, "5FEC6E2A": True, "deadbeef": False, "20240115": False,
                       "cafe1234": True, "5fec6e2a0": True, "a" * 13: False, sha("x"): True,
                       sha("x")[:39]: False, "main": False}


HEX_SEGMENT = st.integers(0, 42).flatmap(lambda n: st.text("0123456789abcdefABCDEFg", min_size=n, max_size=n))


@hsettings(max_examples=300, deadline=None)
@given(segment=HEX_SEGMENT)
def test_server_rules_tell_a_commit_as_the_family_does(segment):
    # the server rule's `{commit}` and the family's membership agree on every segment
    route = re.compile(sr.route_regex(["/*/*/-/tree/{commit}/"]), sr.FLAGS)
    url = f"/g/p/-/tree/{segment}/README.md"
    counted = pl.DataFrame({"url": [url]}).select(_family.commit_like(pl.col("url"))).item()
    assert bool(route.search(url)) is counted


def test_no_server_rule_where_robots_lines_do():
    traffic = traffic_of(requests_frame(code_hosts.site("gitea")))
    out = suggest(budget_hog.detect(traffic, Settings()), traffic, Settings())
    assert out.rules.select("target", "status").rows() == [("robots", "emitted")]
    assert (out.htaccess, out.nginx) == ("", "")


def test_a_search_engine_on_the_commits_gets_no_server_rule():
    # Googlebot crawling the commits too: a deny rule for it is withheld, as for any
    # search engine (slow it in its webmaster tools)
    rows = code_hosts.site("gitlab") + [{**r, **code_hosts.GOOGLE} for r in code_hosts.crawl("gitlab", ["erin"])]
    traffic = traffic_of(requests_frame(rows))
    finding = budget_hog.detect(traffic, Settings())
    assert _family.server_targets(traffic, Settings(), "-", finding[s.PATTERN].item()) == (
        ["/*/*/-/blame/{commit}/", "/*/*/-/blob/{commit}/", "/*/*/-/tree/{commit}/"], ["ClaudeBot", "Googlebot"])
    server = suggest(finding, traffic, Settings()).rules.filter(pl.col("target") == "apache")
    assert server.select("group", "status", "saved_bot_requests", "reason").rows() == [
        ("ClaudeBot", "emitted", 1920, ""),
        ("Googlebot", "withheld", 0, "would hit a search engine (Googlebot): slow it in its webmaster tools instead"),
    ]


def gitlab_server_rules() -> list[sr.ServerRule]:
    traffic = traffic_of(requests_frame(code_hosts.site("gitlab")))
    (family,) = budget_hog.detect(traffic, Settings())[s.PATTERN].to_list()
    routes, names = _family.server_targets(traffic, Settings(), "-", family)
    return [sr.check(sr.rule_for("-", "budget_hog", name, routes), traffic) for name in names]


@needs_apache
def test_apache_accepts_the_family_rules(tmp_path):
    rules = gitlab_server_rules()
    assert [(r.bot_name, r.status) for r in rules] == [("ClaudeBot", "emitted")]
    done = apache_ok(rules, tmp_path)
    assert done.returncode == 0, done.stderr


@needs_nginx
def test_nginx_accepts_the_family_rules(tmp_path):
    done = nginx_ok(gitlab_server_rules(), tmp_path)
    assert done.returncode == 0, done.stderr


# -- cgit's diff view: each commit's change to a file, a page apiece ------------------------------


def diffs() -> list[dict]:
    """The crawler fetching every file's diff at every commit: a page apiece (a size each)."""
    return [{**AI, s.URL: f"/cgit/{repo}/diff/{name}?id={sha(repo, c)}", s.BYTES: 3000 + 7 * i}
            for i, (repo, name, c) in enumerate((r, n, c) for r in REPOS for n in FILES for c in range(40))]  # fmt: skip


def without_diff() -> list[dict]:
    return [r for r in crawl() if "/diff/" not in r[s.URL]]


def test_rule_takes_the_diff_view_at_every_commit():
    # the same crawl walking every commit; its pages are cuts of the commit's page, which
    # stays open: blocked, though not counted as waste
    traffic = traffic_of(requests_frame(without_diff() + diffs() + site()))
    out = budget_hog.detect(traffic, Settings())
    assert out.select(s.PATTERN, s.WASTED_REQUESTS).rows() == [("/cgit/{path}?id", 960)]
    assert json.loads(out[s.EVIDENCE].item())["patterns"] == 24
    (rule,) = host_rules(out, traffic, "-", [], Settings()).rules
    assert (rule.status, rule.lines, rule.saved_bot_requests) == ("emitted", (
        "Disallow: /cgit/*/blame/*?id=", "Disallow: /cgit/*/plain/*?id=", "Disallow: /cgit/*/tree/*?id=",
        "Disallow: /cgit/*/diff/*?id=",
    ), 1280)
    assert rule.reason == (
        "blocks all 960 distinct logged URLs of the family's 24 patterns and none of 90 content "
        "URLs; and 320 URLs of its diff views, pages apiece but each a cut of its commit's page, "
        "which stays open"
    )
    robots = matcher(rule.lines)
    assert all(blocked(robots, [r[s.URL] for r in diffs()]))
    assert not any(blocked(robots, [r[s.URL] for r in site()]))  # the commits' pages among them


def test_a_diff_view_people_read_stays_open():
    read = humans([r[s.URL] for r in diffs()[:5]] * 3)
    traffic = traffic_of(requests_frame(without_diff() + diffs() + site() + read))
    (rule,) = host_rules(budget_hog.detect(traffic, Settings()), traffic, "-", [], Settings()).rules
    assert (rule.status, rule.lines) == ("emitted", (
        "Disallow: /cgit/*/blame/*?id=", "Disallow: /cgit/*/plain/*?id=", "Disallow: /cgit/*/tree/*?id=",
    ))
    assert rule.reason.endswith("; the diff view stays open: people make 27% of the requests of "
                                "/cgit/libfoo.git/diff/Makefile?id")
    assert not any(blocked(matcher(rule.lines), [r[s.URL] for r in diffs()]))


def test_a_repository_named_diff_is_no_diff_view():
    # /cgit/diff/tree/F?id=: a repository's name at the level of the repositories, pages
    # apiece: not the diff view, and open
    named = [{**r, s.URL: r[s.URL].replace("/cgit/bar.git/diff/", "/cgit/diff/stats/")} for r in diffs()]
    traffic = traffic_of(requests_frame(without_diff() + named + site()))
    (rule,) = host_rules(budget_hog.detect(traffic, Settings()), traffic, "-", [], Settings()).rules
    assert rule.lines == ("Disallow: /cgit/*/blame/*?id=", "Disallow: /cgit/*/plain/*?id=",
                          "Disallow: /cgit/*/tree/*?id=", "Disallow: /cgit/*/diff/*?id=")
    assert not any(blocked(matcher(rule.lines), [r[s.URL] for r in named if "/cgit/diff/" in r[s.URL]]))


def test_views_that_name_the_commit_get_lines_the_others_do_not():
    # one host serving Gitea's src/commit/ and GitHub-like blob/: the first blocked, the
    # second left open, and the rule says so
    rows = code_hosts.site("gitea", ["alice", "bob"]) + code_hosts.site("github", ["carol", "dave"])
    traffic, findings, rules = code_rules(rows)
    assert findings.select(s.PATTERN, s.WASTED_REQUESTS).rows() == [("/{path}/{hex}/{path}", 1920)]
    assert [(r.status, r.lines, r.saved_bot_requests) for r in rules] == [("narrowed", (
        "Disallow: /*/*/blame/commit/", "Disallow: /*/*/raw/commit/", "Disallow: /*/*/src/commit/",
    ), 960)]
    assert rules[0].reason.startswith(
        "blocks all 960 distinct logged URLs of the family's views that name the commit, and none "
        "of 144 content URLs; left open: the commit id is a path segment after a view that takes "
        "a branch's name as well (/*/*/blame/{commit}/, /*/*/blob/{commit}/, /*/*/raw/{commit}/:")
    assert _family.server_targets(traffic, Settings(), "-", "/{path}/{hex}/{path}") == (
        ["/*/*/blame/{commit}/", "/*/*/blob/{commit}/", "/*/*/raw/{commit}/"], ["ClaudeBot"])



def test_a_family_rule_names_three_lines_left_open_and_counts_the_rest():
    # people read a permalink at a commit in every repository: each repository's line would
    # block one, and the reason listed all of them (thirty on a review's Gitea, a screen)
    permalinks = [code_hosts.GITEA["src"][0].format(o=o, r=r, c=code_hosts.sha(o, r, 1), f=code_hosts.FILES[0])
                  for o in code_hosts.OWNERS for r in sorted(code_hosts.REPOS)]
    _, _, rules = code_rules(code_hosts.site("gitea") + code_hosts.read(permalinks, times=1))
    (rule,) = rules
    assert (rule.status, rule.lines) == ("narrowed", ("Disallow: /*/*/blame/commit/", "Disallow: /*/*/raw/commit/"))
    tail = rule.reason.split("; left open: ")
    assert len(tail) == 1 + 3 and tail[-1].endswith(
        f"; and {len(permalinks) - 3} more views or repositories left open for the same reason")

"""Every sample site, read from its rotated log files by the whole pipeline, gives exactly the
finding kinds its ground truth expects, per host, naming the trap's patterns and never a real
content route (sample_logs/ground_truth.json, written by sample_logs/generate.py).

Search-engine claims are verified against the published range files in tests/data (Google's
and Bing's), as a user would pass them with `--ip-ranges`.
"""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl
import pytest

from logtrap import schema as s
from logtrap.analysis import Analysis, analyze
from logtrap.findings import to_records
from logtrap.settings import Settings

ROOT = Path(__file__).resolve().parent.parent
SAMPLES = ROOT / "sample_logs"
RANGES = (ROOT / "tests" / "data" / "googlebot.json", ROOT / "tests" / "data" / "bingbot.json")
TRUTH = json.loads((SAMPLES / "ground_truth.json").read_text())
SITES = TRUTH["sites"]

# Kinds whose finding is about a client or spans many patterns: the pattern they name is not
# one of the trap's URL patterns (aggressive_bot names the hammered route's pattern, checked
# through evidence.routes; fake_bot names none; relative_loop one pattern per depth).
NOT_BY_PATTERN = {"aggressive_bot", "fake_bot", "relative_loop"}

_runs: dict[str, Analysis] = {}


def run(name: str) -> Analysis:
    """The site analysed once per test session (five sites, a week of logs each)."""
    if name not in _runs:
        site = SITES[name]
        files = sorted((SAMPLES / site["directory"]).glob("access.log*"))
        assert sorted(p.name for p in files) == sorted(site["files"])
        settings = Settings(log_format=site["format"], ip_ranges=RANGES)
        _runs[name] = analyze([str(p) for p in files], settings)
    return _runs[name]


def findings(name: str) -> list:
    return to_records(run(name).findings)


@pytest.mark.parametrize("name", sorted(SITES))
def test_reads_every_line(name):
    stats = run(name).stats
    assert stats is not None
    lines = sum(f["lines"] for f in SITES[name]["files"].values())
    assert (stats.lines, stats.rejected) == (lines, 0)


@pytest.mark.parametrize("name", sorted(SITES))
def test_finding_kinds_per_host_are_exactly_the_expected_ones(name):
    got: dict[str, set[str]] = {}
    for f in findings(name):
        got.setdefault(f.host, set()).add(f.kind)
    expected = {h: set(kinds) for h, kinds in SITES[name]["expected_kinds_by_host"].items() if kinds}
    assert got == expected


@pytest.mark.parametrize("name", sorted(SITES))
def test_each_trap_is_named_by_each_of_its_kinds(name):
    site = SITES[name]
    missing = []
    for trap in site["traps"]:
        patterns = set(trap.get("patterns") or {}) | {trap["pattern"]} - {None}
        for kind in trap["kinds"]:
            if kind in NOT_BY_PATTERN or not patterns:
                continue
            named = set()
            for f in findings(name):
                if f.kind == kind and f.host == trap["host"]:
                    # a host-level growing_pattern finding names the patterns that kept appearing
                    named |= {f.pattern} if f.pattern else set(f.evidence.get("late_patterns", ()))
            if not named & patterns:
                missing.append((trap["id"], kind))
        # the trap's own detector names its main pattern
        own = trap["kinds"][0]
        if trap["pattern"] and own not in NOT_BY_PATTERN:
            if trap["pattern"] not in {f.pattern for f in findings(name) if f.kind == own}:
                missing.append((trap["id"], own, trap["pattern"]))
    assert missing == []


@pytest.mark.parametrize("name", sorted(SITES))
def test_no_finding_names_real_content(name):
    site = SITES[name]
    trap_patterns = {
        (t["host"], p) for t in site["traps"] for p in (t.get("patterns") or {})
    }
    # a real route can share its pattern with a trap (real pages 2-3 and the empty pages past
    # the last one are all `/shop/shirts?page`); such a pattern is the trap's to name
    content = {p for route in site["content"] for p in route["patterns"]}
    content -= {p for _, p in trap_patterns}
    wrong = []
    for f in findings(name):
        if f.kind in NOT_BY_PATTERN or f.pattern is None:
            continue
        if f.pattern in content or (f.host, f.pattern) not in trap_patterns:
            wrong.append((f.kind, f.host, f.pattern))
    assert wrong == []


@pytest.mark.parametrize("name", sorted(SITES))
def test_examples_are_urls_of_the_log(name):
    traffic = run(name).traffic
    for f in findings(name):
        urls = set(traffic.urls.filter(pl.col(s.HOST) == f.host)[s.URL].to_list())
        assert 0 < len(f.examples) <= 5 and set(f.examples) <= urls, (f.kind, f.pattern)


def _traps(kind: str) -> list[tuple[str, dict]]:
    return [(n, t) for n, site in SITES.items() for t in site["traps"] if kind in t["kinds"]]


@pytest.mark.parametrize("name,trap", _traps("fake_bot"), ids=lambda x: x if isinstance(x, str) else x["id"])
def test_fake_bot_names_the_fake_addresses(name, trap):
    fakes = [f for f in findings(name) if f.kind == "fake_bot"]
    assert {f.evidence["bot_name"] for f in fakes} == {trap["ua_family"]}
    addresses = {a for f in fakes for a in f.evidence["addresses"]}
    assert addresses == set(trap["fake_addresses"])


@pytest.mark.parametrize("name,trap", _traps("aggressive_bot"), ids=lambda x: x if isinstance(x, str) else x["id"])
def test_aggressive_bot_names_the_bot_and_its_routes(name, trap):
    (f,) = [f for f in findings(name) if f.kind == "aggressive_bot"]
    assert f.evidence["bot_name"] == trap["ua_family"]
    assert sorted(f.evidence["routes"]) == sorted(trap["routes"])


# -- a mobile app's API beside the website -----------------------------------------------------


def app_log(path: Path, addresses: int, crawled: int = 0) -> Path:
    """Googlebot and people read 300 blog posts; an Android app (okhttp) fetches 1,000 user
    records by UUID, each once, from `addresses` addresses; Googlebot fetches `crawled`
    records more."""
    lines = []
    for i in range(crawled):
        uuid = f"{i * 40503 % 2**32:08x}-{i:04x}-4b{i % 256:02x}-9cde-{i * 89:012x}"
        lines.append(f'66.249.66.9 - - [01/Mar/2026:11:{i // 60 % 60:02d}:{i % 60:02d} +0000] '
                     f'"GET /api/v2/users/{uuid} HTTP/1.1" 200 {640 + i % 25} "-" '
                     '"Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)"')
    for i in range(1000):
        minute, second = divmod(i, 60)
        when = f"01/Mar/2026:10:{minute % 60:02d}:{second:02d} +0000"
        post = f"/blog/post-{i % 300}"
        lines.append(f'66.249.66.{1 + i % 5} - - [{when}] "GET {post} HTTP/1.1" 200 {9000 + i % 300 * 7} '
                     '"-" "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)"')
        lines.append(f'203.0.113.{i % 200} - - [{when}] "GET {post} HTTP/1.1" 200 {9000 + i % 300 * 7} '
                     '"-" "Mozilla/5.0 (Windows NT 10.0; Win64; x64) Firefox/128.0"')
        uuid = f"{i * 2654435761 % 2**32:08x}-{i:04x}-4a{i % 256:02x}-8bcd-{i * 97:012x}"
        lines.append(f'10.{i % addresses // 250}.{i % addresses % 250}.7 - - [{when}] '
                     f'"GET /api/v2/users/{uuid} HTTP/1.1" 200 {640 + i % 25} "-" "okhttp/4.12.0"')
    path.write_text("\n".join(lines) + "\n")
    return path


def test_an_apps_api_fetched_from_many_phones_is_not_a_trap(tmp_path):
    from logtrap.report import to_dict, to_text

    one_script = analyze(str(app_log(tmp_path / "script.log", 2)))
    assert {(f.kind, f.pattern) for f in to_records(one_script.findings)} >= {
        ("random_token", "/api/v2/users/{hex}")}  # the same API fetched by one script: a crawl
    app = analyze(str(app_log(tmp_path / "app.log", 1000)))
    assert app.findings.height == 0
    assert app.crowds.rows() == [("okhttp", 1000, 1000)]  # 1,000 addresses, under the sample: exact
    report = to_dict(app)
    assert report["summary"]["crowds"] == [{"bot": "okhttp", "requests": 1000, "addresses": 1000}]
    assert {b["bot"]: b["addresses"] for b in report["bots"]} == {"okhttp": 1000, "Googlebot": None}
    assert "Sent by many machines, not one crawler: okhttp (1,000 requests from about 1,000 " \
        "addresses)" in to_text(app, width=200)
    assert to_dict(one_script)["summary"]["crowds"] == []
    # Googlebot fetching 400 records too (29% of the pattern's bot requests): a crawl to judge
    crawled = analyze(str(app_log(tmp_path / "crawled.log", 1000, crawled=400)))
    assert crawled.crowds.height == 1
    assert {(f.kind, f.pattern) for f in to_records(crawled.findings)} >= {
        ("random_token", "/api/v2/users/{hex}")}


def test_requests_get_the_patterns_the_report_counts_them_under(tmp_path):
    # 30 tags: add_patterns alone gives each tag its pattern, the analysis merges them into
    # /tag/{name}; Analysis.add_patterns gives the report's, so its counts can be rebuilt
    from logtrap.logs import read_logs

    log = tmp_path / "access.log"
    tags = [f"/tag/{word}" for word in ("php", "rust", "go", "java", "perl", "lua", "ruby", "ocaml",
                                       "scala", "swift", "dart", "elm", "nim", "zig", "julia", "r",
                                       "bash", "awk", "sed", "tcl", "ada", "cobol", "forth", "lisp",
                                       "scheme", "racket", "clojure", "erlang", "elixir", "haskell")]
    log.write_text("".join(
        f'66.249.66.1 - - [28/Nov/2026:10:{i // 60:02d}:{i % 60:02d} +0000] "GET {url} HTTP/1.1" '
        f'200 {3000 + i} "-" "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)"\n'
        for i, url in enumerate([*tags, *tags, "/about"])))
    result = analyze(log)
    assert result.patterns.select(s.PATTERN, s.REQUESTS).rows() == [("/tag/{name}", 60), ("/about", 1)]
    requests = result.add_patterns(read_logs(log))
    assert requests.group_by(s.PATTERN, s.SECTION).len().sort(s.PATTERN).rows() == [
        ("/about", "/about", 1), ("/tag/{name}", "/tag/{name}", 60)]
    from logtrap.patterns import add_patterns

    assert add_patterns(read_logs(log))[s.PATTERN].n_unique() == 31  # each tag its own


def test_the_stages_one_by_one_find_what_analyze_finds():
    # README's "stages": the same findings as `analyze`, fake_bot included (the verification
    # stage was private, and skipping it silently lost every fake_bot finding)
    from logtrap import add_bots, add_patterns, run_detectors, scan_logs, verify_claims
    from logtrap.traffic import Tally

    settings = Settings(log_format="vhost_combined", ip_ranges=RANGES)
    tally = Tally(settings=settings)
    for batch in scan_logs(str(SAMPLES / "vhost" / "access.log*"), settings=settings):
        tally.add(add_patterns(add_bots(batch), settings))
    traffic = tally.finish()
    verified = verify_claims(traffic, settings)
    verdicts = verified.claims.group_by("verified").agg(
        pl.col("client").n_unique(), pl.col("requests").sum()).sort("verified")
    # (addresses, requests): three scrapers posing as Googlebot/bingbot, outside both ranges
    assert verdicts.rows() == [("fake", 3, 220), ("unverified", 376, 662), ("verified", 378, 1237)]
    expected = run("vhost").findings
    assert run_detectors(verified, settings).equals(expected)
    # the stage forgotten: run_detectors verifies, rather than find no fake bot
    assert run_detectors(traffic, settings).equals(expected)


# -- a site behind a CDN that logs its edges' addresses ----------------------------------------


def with_google_ranges(tmp_path: Path, lines: list[str]) -> tuple[Analysis, list[list[str]]]:
    """The analysis of these log lines with Google's ranges (66.249.64.0/19) given, and each
    fake_bot finding's addresses."""
    (tmp_path / "access.log").write_text("\n".join(lines) + "\n")
    (tmp_path / "googlebot.json").write_text('{"prefixes": [{"ipv4Prefix": "66.249.64.0/19"}]}')
    result = analyze(str(tmp_path / "access.log"),
                     Settings(ip_ranges=(f"Googlebot={tmp_path / 'googlebot.json'}",)))
    fakes = [f.evidence["addresses"] for f in to_records(result.findings) if f.kind == "fake_bot"]
    return result, fakes


def test_googlebot_through_a_cdns_edges_is_not_called_fake(tmp_path):
    # people and Googlebot alike arrive from three edge addresses: with Google's ranges
    # given, every Googlebot request was "fake", and the server rules refused them all. A
    # scraper's own address, that no person shares, still is. People come with many
    # browsers (versions of Firefox here)
    ua_ff = "Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:{v}.0) Gecko/20100101 Firefox/{v}.0"
    ua_gb = "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)"
    edges = ["162.158.1.10", "162.158.2.20", "172.70.3.30"]
    lines = []
    for k in range(900):
        ip, ua = ((edges[k % 3], ua_gb if k // 3 % 3 == 0 else ua_ff.format(v=110 + k % 17))
                  if k < 870 else ("45.133.1.7", ua_gb))
        lines.append(f'{ip} - - [01/Mar/2026:{10 + k // 3600:02d}:{k // 60 % 60:02d}:{k % 60:02d} '
                     f'+0000] "GET /word/{k % 300} HTTP/1.1" 200 {20000 + k % 300 * 13} "-" "{ua}"')
    result, fakes = with_google_ranges(tmp_path, lines)
    assert fakes == [["45.133.1.7"]]
    verdicts = dict(result.traffic.claims.select(s.CLIENT, s.VERIFIED).unique().iter_rows())
    assert verdicts == {**{e: "unverified" for e in edges}, "45.133.1.7": "fake"}


@pytest.mark.parametrize("log_format,proxy,trusted", [
    ('%h %l %u %t "%r" %>s %b "%{Referer}i" "%{User-Agent}i" "%{X-Forwarded-For}i"', "10.0.0.2", ()),
    ("auto", "10.0.0.2", ()),  # nginx's `main` layout: found as combined_forwarded
    # a CDN's public edge, its published range given
    ("auto", "173.245.49.7", ("173.245.48.0/20",)),
])
def test_a_fake_googlebot_behind_a_load_balancer_is_found_by_the_address_it_passed_on(
        tmp_path, log_format, proxy, trusted):
    # every request comes from the balancer's 10.0.0.2, the client in X-Forwarded-For: read
    # as the connection's, every claim was the balancer's, an address people share, and the
    # scraper passed. Its own header names Google's 66.249.66.1; the balancer appended its
    # real address, which is the one judged. So behind a CDN's edge, trusted by its range
    ua_ff = "Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:{v}.0) Gecko/20100101 Firefox/{v}.0"
    ua_gb = "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)"
    lines = []
    for k in range(900):
        person = (f"203.0.113.{k % 50}", ua_ff.format(v=110 + k % 17))
        chain, ua = (("66.249.66.5", ua_gb) if k % 3 == 0 else person) if k < 870 else (
            "66.249.66.1, 45.133.1.7", ua_gb)
        lines.append(f'{proxy} - - [01/Mar/2026:{10 + k // 3600:02d}:{k // 60 % 60:02d}:{k % 60:02d} '
                     f'+0000] "GET /word/{k % 300} HTTP/1.1" 200 {20000 + k % 300 * 13} "-" "{ua}" "{chain}"')
    (tmp_path / "access.log").write_text("\n".join(lines) + "\n")
    (tmp_path / "googlebot.json").write_text('{"prefixes": [{"ipv4Prefix": "66.249.64.0/19"}]}')
    result = analyze(str(tmp_path / "access.log"),
                     Settings(log_format=log_format, trusted_proxies=trusted,
                              ip_ranges=(f"Googlebot={tmp_path / 'googlebot.json'}",)))
    assert result.stats is not None and [f.format_name for f in result.stats.files] == [
        "custom" if log_format != "auto" else "combined_forwarded"]
    fakes = [f.evidence["addresses"] for f in to_records(result.findings) if f.kind == "fake_bot"]
    assert fakes == [["45.133.1.7"]]
    verdicts = dict(result.traffic.claims.select(s.CLIENT, s.VERIFIED).unique().iter_rows())
    assert verdicts == {"66.249.66.5": "verified", "45.133.1.7": "fake"}


def test_a_scraper_asking_for_missing_files_as_a_browser_is_still_fake(tmp_path):
    # 300 Googlebot-agent pages and 300 browser-agent 404s for /favicon.ico from one address:
    # the 404s made it an address people share, and it escaped fake_bot. People's pages are
    # what an edge carries: answered ones only count
    ua_ch = "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0 Safari/537.36"
    ua_gb = "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)"
    lines = []
    for k in range(600):
        at = f"01/Mar/2026:10:{k // 60 % 60:02d}:{k % 60:02d} +0000"
        lines.append(f'45.133.1.7 - - [{at}] "GET /word/{k} HTTP/1.1" 200 {20000 + k} "-" "{ua_gb}"'
                     if k % 2 else f'45.133.1.7 - - [{at}] "GET /favicon.ico HTTP/1.1" 404 0 "-" "{ua_ch}"')
    assert with_google_ranges(tmp_path, lines)[1] == [["45.133.1.7"]]


def test_a_forges_git_fetches_are_no_trap(tmp_path):
    # a CI's git clients fetch forty repositories every few seconds: refs (a size a
    # repository) by GET, then an up-to-date pack negotiation by POST, 8 bytes each time. A
    # POST reads no page: forty URLs answered alike looked like one soft 404 (critical)
    lines = []
    for i in range(2000):
        at = f"{20 + i // 4320:02d}/Nov/2026:{i // 180 % 24:02d}:{i // 3 % 60:02d}:{i * 20 % 60:02d} +0000"
        repo, ip = f"/org/repo{i % 40}.git", f"10.0.{i % 3}.{i % 5}"
        lines += [f'{ip} - - [{at}] "GET {repo}/info/refs?service=git-upload-pack HTTP/1.1" 200 {500 + i % 40} "-" "git/2.39.2"',
                  f'{ip} - - [{at}] "POST {repo}/git-upload-pack HTTP/1.1" 200 8 "-" "git/2.39.2"']
    (tmp_path / "access.log").write_text("\n".join(lines) + "\n")
    result = analyze(str(tmp_path / "access.log"))
    assert result.findings.height == 0
    patterns = result.traffic.patterns.sort(s.PATTERN)
    assert patterns.select(s.PATTERN, s.BOT_REQUESTS, s.UNIQUE_URLS).rows() == [
        ("/org/{name}.git/info/refs?service", 2000, 40), ("/org/{name}.git/{slug}", 2000, 0)]
    assert not result.traffic.urls[s.URL].str.ends_with(".git/git-upload-pack").any()

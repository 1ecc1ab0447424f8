"""One query parameter causing the traps of many URL patterns (detectors/_param.py): one
finding and one site-wide robots.txt pair where that is safe, today's findings per pattern
where it is not (people read pages through it, its values choose pages, a sitemap URL
carries it).

The WooCommerce shop is built by tests/builders.py (`woocommerce`) and read by the whole
pipeline; the counter-cases are small sites with findings given by hand, as test_robots.py
gives them.
"""

from __future__ import annotations

import json

import polars as pl
import pytest
from builders import bots, combined_lines, humans, requests_frame, traffic_of, woocommerce
from click.testing import CliRunner
from protego import Protego

from logtrap import schema as s
from logtrap.analysis import analyze
from logtrap.cli import cli
from logtrap.detectors import Detector, run_detectors
from logtrap.findings import Finding, rank, to_frame, to_records
from logtrap.robots import host_rules
from logtrap.rules import suggest
from logtrap.settings import Settings
from logtrap.traffic import _URL_KEY as URL_KEY

SITE_WIDE = ("Disallow: /*?add-to-cart=", "Disallow: /*&add-to-cart=")
# the shop's listings whose add-to-cart links grow window after window (a growing_pattern
# finding each), and those whose links crawlers come back to (session_id's action links: the
# listing again per product), 87 patterns in all (two have both)
GROWING, ACTING, PATTERNS = 30, 59, 87


@pytest.fixture(scope="module")
def shop():
    return analyze(requests_frame(woocommerce()))


def allowed(robots_txt: str, url: str) -> bool:
    parser = Protego.parse(robots_txt)
    return parser.can_fetch(f"https://shop.example{url}", "Googlebot")


def test_a_shops_add_to_cart_links_are_one_finding_with_one_site_wide_rule(shop):
    [finding] = to_records(shop.findings)
    assert (finding.kind, finding.severity, finding.host, finding.pattern) == (
        "session_id", "warning", "-", "/{any}?add-to-cart")
    assert (finding.requests, finding.wasted_requests) == (19_416, 17_708)
    evidence = finding.evidence
    assert (evidence["parameter"], evidence["patterns"], evidence["kinds"]) == (
        "add-to-cart", PATTERNS, [{"kind": "session_id", "findings": ACTING},
                                  {"kind": "growing_pattern", "findings": GROWING}])
    assert len(evidence["member_patterns"]) == PATTERNS
    assert all("?add-to-cart" in p or "&add-to-cart" in p for p in evidence["member_patterns"])
    assert (evidence["human_requests"], evidence["pages_changed"]) == (0, 0)
    # examples from as many listings
    assert finding.examples[:2] == ("/shop/page/57/?orderby=popularity&add-to-cart=1322",
                                    "/shop/page/39/?add-to-cart=1466")
    assert len({url.split("?")[0].rsplit("/page/", 1)[0] for url in finding.examples}) == 4

    rules = suggest(shop).rules
    assert rules.select("target", "pattern", "status", "rule").rows() == [
        ("robots", "/{any}?add-to-cart", "emitted", "\n".join(SITE_WIDE))]


def test_the_site_wide_lines_block_every_add_to_cart_url_and_no_page_people_read(shop):
    robots_txt = suggest(shop).robots_txt
    assert [line for line in robots_txt.splitlines() if line.startswith(("Disallow", "Allow"))] == list(SITE_WIDE)
    urls = shop.traffic.urls
    carts = urls.filter(pl.col(s.URL).str.contains("add-to-cart=", literal=True))[s.URL].unique().to_list()
    read = urls.filter(pl.col(s.REQUESTS) > pl.col(s.BOT_REQUESTS))[s.URL].unique().to_list()
    assert len(carts) > 10_000 and len(read) > 1_000
    assert [u for u in carts if allowed(robots_txt, u)] == []
    assert [u for u in read if not allowed(robots_txt, u)] == []


def test_logtrap_analyze_prints_one_finding_for_the_parameter(tmp_path):
    log = tmp_path / "access.log"
    log.write_text(combined_lines(woocommerce()))
    result = CliRunner().invoke(cli, ["analyze", str(log), "--json", str(tmp_path / "r.json")])
    assert result.exit_code == 3, result.output
    lines = result.output.splitlines()
    assert "Findings: 0 critical, 1 warning, 0 info" in lines
    assert [ln for ln in lines if ln.startswith("WARNING")] == ["WARNING session_id /{any}?add-to-cart"]
    report = json.loads((tmp_path / "r.json").read_text())
    assert [(x["kind"], x["pattern"]) for x in report["findings"]] == [("session_id", "/{any}?add-to-cart")]
    assert sorted(report["findings"][0]) == ["advice", "evidence", "examples", "host", "kind",
                                             "pattern", "requests", "severity", "wasted_requests"]
    disallows = [ln for ln in report["robots_txt"].splitlines() if ln.startswith("Disallow")]
    assert disallows == list(SITE_WIDE)


def _sitemap(tmp_path):
    # a landing page that adds the starter kit to the cart: a page of the site's own
    path = tmp_path / "sitemap.xml"
    path.write_text('<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">'
                    "<url><loc>https://shop.example/product/classic-hoodie-1/</loc></url>"
                    "<url><loc>https://shop.example/offers/starter-kit/?add-to-cart=1001</loc></url>"
                    "</urlset>")
    return path


def test_a_sitemap_url_the_site_wide_line_would_block_keeps_the_findings_per_pattern(tmp_path):
    result = analyze(requests_frame(woocommerce()), Settings(sitemaps=[_sitemap(tmp_path)]))
    found = result.findings
    assert (found.height, found[s.PATTERN].n_unique()) == (GROWING + ACTING, PATTERNS)
    assert set(found[s.KIND]) == {"growing_pattern", "session_id"}
    assert all("add-to-cart" in p and not p.startswith("/{any}") for p in found[s.PATTERN])
    sug = suggest(result)
    robots = sug.rules.filter(pl.col("target") == "robots")
    # (session_id's own rule is the site-wide pair: narrowed to its path)
    assert robots.height == PATTERNS and set(robots["status"]) == {"emitted", "narrowed"}
    assert not any(line in SITE_WIDE for r in robots["rule"] for line in r.split("\n"))
    assert allowed(sug.robots_txt, "/offers/starter-kit/?add-to-cart=1001")
    assert [n for n in sug.notes if "add-to-cart" in n] == [
        f"`?add-to-cart=` makes the traps of {PATTERNS} URL patterns, but gets no robots.txt line "
        "for the whole site (`/*?add-to-cart=`), as Disallow: /*?add-to-cart= would block content "
        "URL /offers/starter-kit/?add-to-cart=1001 (sitemap); each pattern keeps its own rule"]


def test_a_sitemap_given_to_suggest_only_narrows_the_parameters_rule_to_its_patterns(shop, tmp_path):
    rules = suggest(shop, settings=shop.settings.replace(sitemaps=(_sitemap(tmp_path),))).rules
    [(pattern, status, rule, reason)] = rules.select("pattern", "status", "rule", "reason").rows()
    assert (pattern, status) == ("/{any}?add-to-cart", "narrowed")
    assert reason == ("Disallow: /*?add-to-cart= would block content URL "
                      "/offers/starter-kit/?add-to-cart=1001 (sitemap); narrowed to a rule per pattern")
    lines = rule.split("\n")
    assert len(lines) == PATTERNS and not set(lines) & set(SITE_WIDE)
    assert "Disallow: /shop/page/*/?add-to-cart=" in lines


# -- small sites, findings given by hand -------------------------------------------------------

AISLES = [f"/{name}/list/" for name in ("hats", "bags", "socks", "boots", "belts", "gloves")]


def _site(name: str, *, aisles=AISLES, size=lambda k, v: 40_000 + 1_000 * k + v % 7, people=20,
          extra=()) -> tuple[pl.DataFrame, list[dict]]:
    """Bots fetch 30 values of the parameter on every aisle's list; people read the lists
    (`people` times each); (findings of growing_pattern per aisle, the rows)."""
    rows = [{**r, s.BYTES: size(k, v)} for k, aisle in enumerate(aisles) for v in range(1, 31)
            for r in bots([f"{aisle}?{name}={v}"])]
    rows += [{**r, s.BYTES: 40_000 + 1_000 * k} for k, aisle in enumerate(aisles)
             for r in humans([aisle] * people)]
    rows += list(extra)
    findings = [Finding("growing_pattern", "warning", "-", f"{aisle}?{name}", 30, 29,
                        (f"{aisle}?{name}=1",)) for aisle in aisles]
    return to_frame(findings), rows


def _merged(findings: pl.DataFrame, rows: list[dict], settings: Settings | None = None):
    """(the findings as run_detectors returns them when a detector found these, what
    `suggest` notes, the traffic)."""
    settings = settings or Settings()
    traffic = traffic_of(requests_frame(rows), settings)
    given = Detector("given", lambda traffic, settings: findings)
    merged = run_detectors(traffic, settings, detectors=(given,))
    return merged, suggest(merged, traffic, settings).notes, traffic


def _note(name: str, why: str) -> list[str]:
    return [f"`?{name}=` makes the traps of 6 URL patterns, but gets no robots.txt line for the "
            f"whole site (`/*?{name}=`), as {why}; each pattern keeps its own rule"]


def test_a_parameter_on_as_many_paths_as_the_setting_is_merged_and_on_fewer_is_not():
    findings, rows = _site("add-to-cart", aisles=AISLES[:4], people=30)
    assert _merged(findings, rows)[0].equals(rank(findings))
    merged, notes, traffic = _merged(findings, rows, Settings(site_param_min_paths=4))
    assert merged[s.PATTERN].to_list() == ["/{any}?add-to-cart"]
    assert [n for n in notes if n.startswith("`")] == []
    [rule] = host_rules(merged, traffic, "-", [], Settings()).rules
    assert (rule.status, rule.lines) == ("emitted", SITE_WIDE)


def test_a_parameter_people_navigate_by_on_many_patterns_gets_no_site_wide_line():
    # `?id=` across six aisles: bots walk the ids, and people read an item through it
    read = humans(["/socks/list/?id=3"], **{s.BYTES: 42_003})
    findings, rows = _site("id", extra=read)
    merged, notes, traffic = _merged(findings, rows)
    assert merged.equals(rank(findings))
    assert [n for n in notes if n.startswith("`")] == _note(
        "id", "people fetched /socks/list/?id=3 through it: a parameter people navigate by")
    rules = host_rules(merged, traffic, "-", [], Settings()).rules
    # today's rules, a pattern each: the one whose page people read withheld
    assert sorted((r.pattern, r.status, r.lines) for r in rules) == sorted(
        (f"{aisle}?id", "withheld", ()) if aisle == "/socks/list/" else
        (f"{aisle}?id", "emitted", (f"Disallow: {aisle}?id=",)) for aisle in AISLES)


def test_a_page_people_read_through_the_parameter_outside_the_url_sample_counts():
    # the same, with a URL sample of 10 URLs a pattern: the item people read is not in it
    # (adversarial review 17: 12 people's pages outside the samples, the site-wide pair emitted)
    urls = pl.DataFrame({s.HOST: "-", s.URL: [f"/socks/list/?id={v}" for v in range(1, 31)]})
    by_hash = urls.sort(URL_KEY)[s.URL].to_list()
    item = by_hash[-1]
    findings, rows = _site("id", extra=humans([item], **{s.BYTES: 42_003}))
    merged, notes, traffic = _merged(findings, rows, Settings(url_sample_size=10))
    assert item not in traffic.urls[s.URL].to_list()
    assert merged.equals(rank(findings))
    assert [n for n in notes if n.startswith("`")] == _note(
        "id", f"people fetched {item} through it: a parameter people navigate by")


def test_a_parameter_whose_values_choose_pages_gets_no_site_wide_line():
    # `?page=` crawled by bots alone: each value of it a list page of its own
    findings, rows = _site("page", size=lambda k, v: 30_000 + 900 * v)
    merged, notes, _ = _merged(findings, rows)
    assert merged.equals(rank(findings))
    assert [n for n in notes if n.startswith("`")] == _note(
        "page", "its value changes the page on 6 of 6 pages where two of its values were "
                "answered (such as /bags/list/ (30,900 to 57,000 bytes))")


def test_a_parameter_a_pagination_finding_has_gets_no_site_wide_line():
    findings, rows = _site("add-to-cart")
    paged = to_frame([Finding("pagination", "warning", "-", "/scarves/?add-to-cart&page", 9, 9)])
    merged, notes, _ = _merged(pl.concat([findings, paged]), rows)
    assert merged.equals(rank(pl.concat([findings, paged])))
    assert [n for n in notes if n.startswith("`")] == _note(
        "add-to-cart", "a pagination finding on /scarves/?add-to-cart&page has it: its values "
                       "have pages of their own there")


def test_a_host_people_do_not_use_gets_no_site_wide_line():
    findings, rows = _site("add-to-cart", people=10)
    merged, notes, _ = _merged(findings, rows)
    assert merged.equals(rank(findings))
    assert [n for n in notes if n.startswith("`")] == _note(
        "add-to-cart", "people made 60 requests on the host, fewer than "
                       "site_param_min_human_requests (100): the log cannot show whether they "
                       "read pages through it")


def test_the_parameter_a_finding_blames_is_the_one_carrying_its_variety():
    # a listing's sort (five values) beside its add-to-cart links (one per product): the
    # links; two filters alike: neither
    sorts = ["date", "price", "rating", "popularity", "price-desc"]
    rows = bots([f"/l/?orderby={o}&add-to-cart={p}" for o in sorts for p in range(20)])
    rows += bots([f"/f/?color=c{c}&size=s{z}" for c in range(5) for z in range(5)])
    findings = to_frame([Finding("growing_pattern", "warning", "-", p, 1, 1)
                         for p in ("/l/?add-to-cart&orderby", "/f/?color&size")])
    from logtrap.detectors import _param

    blamed = _param._blamed(findings, traffic_of(requests_frame(rows)))
    assert blamed.select(s.PATTERN, _param.NAME).rows() == [("/l/?add-to-cart&orderby", "add-to-cart")]

"""report/: the report-v1 contract key by key, exact text, and escaping of log strings."""

import json
from datetime import datetime, timedelta, timezone

import polars as pl
import pytest

from logtrap import findings as f
from logtrap import report
from logtrap.analysis import Analysis
from logtrap.logs import FileRead, ReadStats
from logtrap.rules import RULE_SCHEMA, Suggestions
from logtrap.settings import Settings
from logtrap.traffic import Tally

# Every string in a report comes from a log: these must show as text, never run or style.
EVIL_UA = '"><script>alert(1)</script>'
EVIL_URL = "/evil/<img src=x onerror=alert(2)>"
EVIL_MARKUP = "[bold red]styled[/bold red]\x1b[31m\x07"

T0 = datetime(2026, 1, 1, tzinfo=timezone.utc)

TOP_KEYS = {"schema", "summary", "patterns", "findings", "robots_txt", "htaccess", "nginx",
            "rules", "notes", "bots", "sections"}
SUMMARY_KEYS = {"lines", "parsed", "rejected", "requests", "server_requests", "bot_requests",
                "requests_without_user_agent", "crowds", "start", "end", "hosts",
                "rejected_examples", "files"}
REJECTED_KEYS = {"source", "line_no", "line", "reason"}
PATTERN_KEYS = {"host", "pattern", "section", "requests", "bot_requests", "human_requests",
                "unique_urls", "unique_urls_exact", "bot_share", "statuses", "bots", "first_seen", "last_seen"}
FINDING_KEYS = {"kind", "severity", "host", "pattern", "requests", "wasted_requests",
                "examples", "evidence", "advice"}
BOT_KEYS = {"bot", "kind", "requests", "share", "verified_requests", "fake_requests",
            "unverified_requests", "top_patterns", "statuses", "peak_per_minute",
            "addresses", "first_seen", "last_seen"}


def _row(minute, url, pattern, section, bot=None, status=200, size=100, client="10.0.0.1"):
    return {
        "host": "example.com", "client": client, "time": T0 + timedelta(minutes=minute),
        "url": url, "status": status, "bytes": size, "is_bot": bot is not None,
        "bot_name": bot, "bot_kind": "search" if bot == "Googlebot" else (
            "unknown" if bot else None),
        "pattern": pattern, "section": section,
    }


def sample_analysis(*, findings=True) -> Analysis:
    """A small hand-made analysis: a calendar trap crawled by Googlebot, two articles read by
    people, and a bot whose name and URL are hostile.
    """
    rows = [_row(i, f"/calendar?date={2030 + i}-01", "/calendar?date", "/calendar",
                 bot="Googlebot", size=512, client="66.249.66.1") for i in range(6)]
    rows += [_row(10 + i, f"/article/{i % 2}", "/article/{n}", "/article/{n}")
             for i in range(3)]
    rows += [_row(20, EVIL_URL, EVIL_URL, "/evil", bot=EVIL_UA, status=404, size=0)]
    tally = Tally(settings=Settings())
    tally.add(pl.DataFrame(rows))
    traffic = tally.finish()
    found = f.empty_findings()
    if findings:
        found = f.finding_rows(
            "calendar",
            pl.DataFrame({"host": ["example.com"], "pattern": ["/calendar?date"],
                          "requests": [6], "wasted_requests": [6],
                          "examples": [["/calendar?date=2030-01", EVIL_URL]],
                          "years": [6], "note": [EVIL_UA]}),
            severity="warning", evidence=["years", "note"],
            advice="Return 404 outside the years with events.",
        )
    stats = ReadStats(
        lines=11, parsed=10, rejected=1,
        rejected_examples=pl.DataFrame(
            {"source": ["access.log"], "line_no": [4], "line": [EVIL_MARKUP],
             "reason": ["does not match combined"]},
            schema={"source": pl.String, "line_no": pl.Int64, "line": pl.String,
                    "reason": pl.String},
        ),
        files=[FileRead(path="access.log", device=1, inode=2, fingerprint="x", size=900,
                        start_offset=0, end_offset=900, lines=11, parsed=10, rejected=1,
                        format_name="combined")],
        bytes_read=900,
    )
    return Analysis(traffic=traffic, findings=f.rank(found), stats=stats, settings=Settings())


RULE = {"target": "robots", "host": "example.com", "kind": "calendar",
        "pattern": "/calendar?date", "group": "*", "rule": "Disallow: /calendar?date=",
        "status": "emitted", "reason": "blocks all 3 distinct logged URLs of the trap",
        "saved_bot_requests": 3, "other_requests": None, "blocked_examples": ["/calendar?date=1"]}
SUGGESTIONS = Suggestions(
    robots_txt="User-agent: *\nDisallow: /calendar?date=\n",
    htaccess="<IfModule LiteSpeed>\n</IfModule>\n",
    nginx="",
    rules=pl.DataFrame([RULE], schema=RULE_SCHEMA),
    notes=["Together, the `User-agent: *` lines save 3 of 7 bot requests (43%), ..."],
)


def test_json_has_exactly_the_report_v1_keys():
    doc = json.loads(report.to_json(sample_analysis(), SUGGESTIONS))
    assert set(doc) == TOP_KEYS
    assert doc["schema"] == "logtrap/report-v1"
    assert set(doc["summary"]) == SUMMARY_KEYS
    assert all(set(x) == REJECTED_KEYS for x in doc["summary"]["rejected_examples"])
    assert doc["patterns"] and all(set(p) == PATTERN_KEYS for p in doc["patterns"])
    assert doc["findings"] and all(set(x) == FINDING_KEYS for x in doc["findings"])
    assert doc["bots"] and all(set(b) == BOT_KEYS for b in doc["bots"])
    assert (doc["robots_txt"], doc["htaccess"], doc["nginx"]) == (
        SUGGESTIONS.robots_txt, SUGGESTIONS.htaccess, "")
    assert (doc["rules"], doc["notes"]) == ([RULE], SUGGESTIONS.notes)


def test_json_values():
    doc = report.to_dict(sample_analysis(), SUGGESTIONS)
    assert doc["summary"] == {
        "lines": 11, "parsed": 10, "rejected": 1, "requests": 10, "server_requests": 0,
        "bot_requests": 7,
        "requests_without_user_agent": 0, "crowds": [],
        "start": "2026-01-01T00:00:00+00:00", "end": "2026-01-01T00:20:00+00:00",
        "hosts": ["example.com"],
        "rejected_examples": [{"source": "access.log", "line_no": 4, "line": EVIL_MARKUP,
                               "reason": "does not match combined"}],
        "files": [{"path": "access.log", "format": "combined", "lines": 11, "parsed": 10,
                   "rejected": 1}],
    }
    assert doc["patterns"][0] == {
        "host": "example.com", "pattern": "/calendar?date", "section": "/calendar",
        "requests": 6, "bot_requests": 6, "human_requests": 0, "unique_urls": 6,
        "unique_urls_exact": True,
        "bot_share": 6 / 7, "statuses": {"200": 6}, "bots": {"Googlebot": 6},
        "first_seen": "2026-01-01T00:00:00+00:00", "last_seen": "2026-01-01T00:05:00+00:00",
    }
    assert [(p["pattern"], p["requests"], p["unique_urls"]) for p in doc["patterns"]] == [
        ("/calendar?date", 6, 6), (EVIL_URL, 1, 1), ("/article/{n}", 3, 2)]
    assert doc["findings"] == [{
        "kind": "calendar", "severity": "warning", "host": "example.com",
        "pattern": "/calendar?date", "requests": 6, "wasted_requests": 6,
        "examples": ["/calendar?date=2030-01", EVIL_URL],
        "evidence": {"years": 6, "note": EVIL_UA},
        "advice": "Return 404 outside the years with events.",
    }]
    assert [(b["bot"], b["requests"], b["statuses"], b["peak_per_minute"], b["addresses"])
            for b in doc["bots"]] == [("Googlebot", 6, {"200": 6}, 1, None),  # a named crawler
                                      (EVIL_UA, 1, {"404": 1}, 1, 1)]  # an unnamed agent
    assert doc["bots"][0]["top_patterns"] == [
        {"host": "example.com", "pattern": "/calendar?date", "requests": 6}]
    assert doc["bots"][0]["share"] == 6 / 7


def test_empty_analysis_is_still_a_full_report():
    tally = Tally()
    analysis = Analysis(traffic=tally.finish(), findings=f.empty_findings(), stats=None,
                        settings=Settings())
    doc = report.to_dict(analysis, SUGGESTIONS)
    assert set(doc) == TOP_KEYS
    assert doc["summary"]["start"] is None
    assert (doc["patterns"], doc["findings"], doc["bots"]) == ([], [], [])


def test_text_summary_exact():
    rule = "\u2500" * 100
    assert report.to_text(sample_analysis(), width=100) == f"""\
Where the bot budget goes

example.com: 7 bot requests of 10 requests, 3 patterns
Pattern                           Bot requests   Share   Unique URLs   Top bots
{rule}
/calendar?date                               6   85.7%             6   Googlebot 6
/evil/<img src=x                             1   14.3%             1   "><script>alert(1)</script> 1
onerror=alert(2)>

Findings: 0 critical, 1 warning, 0 info

WARNING calendar example.com /calendar?date
  6 of 6 requests wasted
  Evidence: years 6; note "><script>alert(1)</script>
  Fix: Return 404 outside the years with events.
  Examples: /calendar?date=2030-01
            /evil/<img src=x onerror=alert(2)>

Rules for these traps (robots.txt, .htaccess, nginx), each checked not to block a real page, or why none can be: run logtrap suggest on the same logs.
"""


def test_budget_view_says_what_the_patterns_not_shown_hold():
    text = _render(report.budget_view(sample_analysis().patterns, top=1), width=200)
    assert text.splitlines()[-1] == (
        "  ... and 1 more pattern, with fewer bot requests each, 1 together (14.3%) (all of them: "
        "logtrap patterns --json; by section: logtrap patterns --sections)")


def test_text_without_findings():
    text = report.to_text(sample_analysis(findings=False), width=100)
    assert text.endswith("\n\nNo crawler traps found.\n")
    assert "logtrap suggest" not in text


def test_read_summary_strips_control_characters_and_markup():
    analysis = sample_analysis()
    console_text = _render(report.read_summary(analysis.stats, analysis.traffic))
    assert console_text == """\
Read 11 lines from 1 file (900 B): 10 parsed, 1 rejected
  access.log: combined, 11 lines, 1 rejected
Time span: 2026-01-01 00:00:00 to 2026-01-01 00:20:00 UTC
Hosts: example.com
First rejected lines (1 shown):
  access.log:4: does not match combined: [bold red]styled[/bold red]
"""


def _render(items, width=100):
    import io

    from rich.console import Console

    buffer = io.StringIO()
    report.print_lines(Console(file=buffer, width=width, color_system=None), items)
    return buffer.getvalue()


@pytest.mark.parametrize("text, expected", [
    ("plain", "plain"),
    ("a\x1b[2J\x1b[31mb", "ab"),  # CSI: clear screen, colour
    ("a\x1b]0;title\x07b", "ab"),  # OSC: window title
    ("a\x1b]8;;http://x\x1b\\link", "alink"),  # OSC 8 hyperlink
    ("a\x00b\x7fc\x9bd", "abcd"),  # NUL, DEL, C1 CSI
    ("tab\there\nnew", "tab here new"),
    ("abc\u202edcba", "abcdcba"),  # right-to-left override
])
def test_clean(text, expected):
    assert report.clean(text) == expected


def test_safe_escapes_rich_markup():
    assert _render([report.safe("[bold]x[/bold] [link=http://e]y[/link]")]) == (
        "[bold]x[/bold] [link=http://e]y[/link]\n")


def test_markdown_keeps_log_strings_in_code_spans():
    md = report.to_markdown(sample_analysis(), SUGGESTIONS)
    # inside a code span, HTML is shown as text by every Markdown renderer
    assert "| `/evil/<img src=x onerror=alert(2)>` | 1 | 14.3% | 1 | `\"><script>alert(1)</script>` 1 |" in md
    assert md.count("<script>") == 1  # only in that code span; the evidence note is escaped
    assert "note \"\\>\\<script\\>" in md
    assert "- `/evil/<img src=x onerror=alert(2)>`" in md
    assert "| `example.com` | `/calendar?date` | 6 | 85.7% | 6 | `Googlebot` 6 |" in md
    assert "Evidence: years 6; note \"\\>\\<script\\>alert\\(1\\)\\</script\\>" in md
    assert md.startswith("# logtrap report\n\n## Summary\n\n- Lines: 11 (10 parsed, 1 rejected)\n")
    assert "## Suggested robots.txt\n\n```text\nUser-agent: *\nDisallow: /calendar?date=\n```" in md
    assert "## Suggested nginx" not in md  # empty suggestions are left out


def test_markdown_code_span_cannot_be_broken_out_of():
    assert report.md_code("a``b") == "``` a``b ```"
    assert report.md_code("x|y") == "`x\\|y`"


def test_html_escapes_every_log_string():
    page = report.to_html(sample_analysis(), SUGGESTIONS, charts=[])
    assert "<script" not in page  # no charts: no script at all, so nothing was injected
    assert "&quot;&gt;&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert "/evil/&lt;img src=x onerror=alert(2)&gt;" in page
    assert "[bold red]styled[/bold red]" in page
    assert "\x1b" not in page and "\x07" not in page
    assert page.startswith("<!DOCTYPE html>")


def test_html_inlines_plotly_once_and_needs_no_network():
    analysis = sample_analysis()
    page = report.to_html(analysis, SUGGESTIONS)
    charts = len(report.figures(analysis))
    assert charts == 5
    assert page.count("Plotly.newPlot(") == charts
    assert page.count("plotly.js v") == 1  # the library's banner: inlined exactly once
    assert "<script src=" not in page and 'src="http' not in page


def test_render_dispatches_by_format():
    analysis = sample_analysis()
    assert report.render(analysis, "json", SUGGESTIONS) == report.to_json(analysis, SUGGESTIONS)
    assert set(report.RENDERERS) == {"text", "json", "markdown", "html"}


def test_a_finding_without_pattern_is_about_the_whole_host():
    from rich.console import Console

    from logtrap.findings import Finding, to_frame

    findings = to_frame([Finding("fake_bot", "warning", "www.example.net", None, 220, 220,
                                 ("/docs/1",), {"bot_name": "Googlebot"}, "Block them.")])
    console = Console(width=100, color_system=None, record=True)
    report.print_lines(console, report.findings_view(findings))
    assert "WARNING fake_bot www.example.net (whole host)" in console.export_text()


def test_findings_of_one_kind_under_one_folder_are_counted_past_the_first_three():
    # a filter trap on a shop's collections is a finding per parameter set: 129 of them
    # filled the terminal; the first three of each kind and folder are shown, the rest counted
    from rich.console import Console

    from logtrap.findings import Finding, to_frame

    def finding(kind, severity, pattern, wasted):
        return Finding(kind, severity, "-", pattern, wasted, wasted, ("/x",), {}, "Fix it.")

    sets = ["a&b", "a&c", "b&c", "a&b&c", "a&b&d"]
    findings = to_frame(
        [finding("growing_pattern", "warning", f"/collections/{{slug}}?{q}", 100 - i) for i, q in enumerate(sets)]
        + [finding("growing_pattern", "info", "/collections/lotus?a&b", 10),
           finding("facets", "info", "/collections/{slug}?a&b", 50),
           finding("growing_pattern", "warning", "/blog/{slug}?p", 5)]
        # top-level sections are never one folder: four facets traps, each shown
        + [finding("facets", "info", f"/{section}?a&b&c", 40) for section in ("products", "outlet", "rentals", "events")])
    console = Console(width=200, color_system=None, record=True)
    report.print_lines(console, report.findings_view(f.rank(findings)))
    text = console.export_text()
    headings = [line for line in text.splitlines() if line.startswith(("WARNING", "INFO", "  ..."))]
    assert headings == [
        "WARNING growing_pattern /collections/{slug}?a&b",
        "WARNING growing_pattern /collections/{slug}?a&c",
        "WARNING growing_pattern /collections/{slug}?b&c",
        "  ... and 3 more growing_pattern findings under /collections/ (2 warning, 1 info), likely "
        "the same trap: /collections/{slug}?a&b&c, /collections/{slug}?a&b&d, ... (all of them: "
        "--json, --markdown)",
        "WARNING growing_pattern /blog/{slug}?p",
        "INFO facets /collections/{slug}?a&b",
        *(f"INFO facets /{section}?a&b&c" for section in ("events", "outlet", "products", "rentals")),
    ]
    assert text.startswith("Findings: 0 critical, 6 warning, 6 info")


def test_requests_without_a_url_have_a_named_pattern_in_every_table(tmp_path):
    # a 408 for a connection that sent nothing ("-" as request line) has no URL, so its
    # pattern is the empty string: the JSON keeps it, the tables name it
    log = tmp_path / "access.log"
    log.write_text(
        '1.2.3.4 - - [28/Nov/2026:10:00:00 +0000] "-" 408 0 "-" "-"\n'
        '1.2.3.4 - - [28/Nov/2026:10:00:01 +0000] "GET /a HTTP/1.1" 200 5 "-" "curl/8.0"\n'
    )
    import logtrap

    run = logtrap.analyze(str(log))
    assert sorted(run.patterns["pattern"].to_list()) == ["", "/a"]
    text = report.to_text(run, width=120)
    budget = [line.split()[:2] for line in text.splitlines() if "(empty)" in line]
    assert budget == [["(no", "URL)"]]
    assert "| `-` | `(no URL)` | 1 |" in report.to_markdown(run)
    assert "<code>(no URL)</code>" in report.to_html(run, charts=[])
    assert {p["pattern"] for p in json.loads(report.to_json(run))["patterns"]} == {"", "/a"}


def test_a_long_log_string_is_cut_in_the_terminal_and_whole_in_the_reports():
    # a scanner's payload as a URL: five of them would bury the summary
    url = "/x/" + "A" * 20_000
    findings = f.to_frame([f.Finding("soft_404", "warning", "-", "/x/{slug}", 5, 5, (url,),
                                     {"n": 1}, "Fix it.")])
    run = Analysis(traffic=sample_analysis().traffic, findings=findings, stats=None,
                   settings=Settings())
    lines = report.to_text(run, width=100).splitlines()
    example = next(line for line in lines if line.startswith("  Examples:"))
    assert example == f"  Examples: /x/{'A' * 297}… (19,703 more characters)"
    assert json.loads(report.to_json(run))["findings"][0]["examples"] == [url]


def test_a_log_of_many_hosts_names_the_busiest_and_counts_the_rest():
    # nginx's $host logs whatever Host header a scanner sends: one request per junk host
    rows = [_row(i, "/a", "/a", "/a", bot="Googlebot") for i in range(30)]
    rows += [{**_row(i, "/a", "/a", "/a", bot="zgrab"), "host": f"scan{i:02d}.example.net"}
             for i in range(14)]
    tally = Tally(settings=Settings())
    tally.add(pl.DataFrame(rows))
    run = Analysis(traffic=tally.finish(), findings=f.empty_findings(), stats=None,
                   settings=Settings())
    hosts = _render(report.read_summary(None, run.traffic)).splitlines()[-1]
    assert hosts == ("Hosts: example.com, scan00.example.net, scan01.example.net, "
                     "scan02.example.net, scan03.example.net, scan04.example.net, "
                     "scan05.example.net, scan06.example.net, scan07.example.net, "
                     "scan08.example.net, and 5 more (15 in all)")
    text = report.to_text(run, width=100)
    sections = [line.split(":")[0] for line in text.splitlines() if " bot request" in line]
    assert sections == ["example.com", *(f"scan{i:02d}.example.net" for i in range(9)),
                        "... 5 more hosts with 5 bot requests of 5 requests (all of them"]
    assert "scan09" not in text


def test_markdown_and_html_name_a_finding_as_the_terminal_does():
    from logtrap.findings import Finding, to_frame

    findings = to_frame([
        Finding("calendar", "warning", "-", "/cal?date", 9, 9, ("/cal?date=2090-01",), {}, "x"),
        Finding("fake_bot", "warning", "www.example.net", None, 5, 5, (), {}, "y"),
    ])
    run = Analysis(traffic=sample_analysis().traffic, findings=findings, stats=None,
                   settings=Settings())
    heads = [line for line in report.to_markdown(run).splitlines() if line.startswith("### ")]
    # a log without virtual hosts ("-") names no host
    assert heads == ["### WARNING: calendar on `/cal?date`",
                     "### WARNING: fake_bot on `www.example.net` (whole host)"]
    html = report.to_html(run, charts=[])
    assert "<b>calendar</b> on <code>/cal?date</code><p>" in html
    assert "<b>fake_bot</b> on <code>www.example.net</code> (whole host)<p>" in html


def test_a_finding_about_a_bot_names_the_bot_and_says_what_its_numbers_count():
    from rich.console import Console

    from logtrap.findings import Finding, to_frame

    findings = to_frame([
        Finding("aggressive_bot", "critical", "-", "/asl/{n}", 2136, 1888, ("/asl/1",),
                {"bot_name": "meta-externalagent", "routes": ["/asl/", "/psl/"]}, "x"),
        Finding("fake_bot", "warning", "-", None, 145, 40, (), {"bot_name": "Googlebot"}, "y"),
    ])
    console = Console(width=200, color_system=None, record=True)
    report.print_lines(console, report.findings_view(findings))
    text = console.export_text()
    # the pattern alone would say 1,888 of its 2,136 requests were wasted
    assert "CRITICAL aggressive_bot /asl/, /psl/ by meta-externalagent\n" \
        "  1,888 of its 2,136 requests went to these routes\n" in text
    assert "WARNING fake_bot (whole host), claiming Googlebot\n  40 of the 145 requests in " \
        "this name came from addresses that failed verification\n" in text
    run = Analysis(traffic=sample_analysis().traffic, findings=findings, stats=None,
                   settings=Settings())
    md = report.to_markdown(run)
    assert "### CRITICAL: aggressive_bot on `/asl/`, `/psl/` by `meta-externalagent`\n\n" \
        "1,888 of its 2,136 requests went to these routes.\n" in md
    html = report.to_html(run, charts=[])
    assert ("<b>fake_bot</b> on (whole host), claiming <code>Googlebot</code><p>40 of the 145 "
            "requests in this name came from addresses that failed verification.<br>") in html


def test_a_request_without_a_host_is_named_so():
    # nginx logs $host empty for a client that sent no Host header (scanners, HTTP/1.0)
    rows = [{**_row(0, "/", "/", "/", bot="zgrab"), "host": ""},
            _row(1, "/a", "/a", "/a", bot="Googlebot")]
    tally = Tally(settings=Settings())
    tally.add(pl.DataFrame(rows))
    run = Analysis(traffic=tally.finish(), findings=f.empty_findings(), stats=None,
                   settings=Settings())
    assert _render(report.read_summary(None, run.traffic)).splitlines()[-1] == (
        "Hosts: (no host), example.com")
    assert "(no host): 1 bot request of 1 request, 1 pattern" in report.to_text(run)


def test_the_reports_people_read_list_the_patterns_with_most_bot_requests(monkeypatch):
    # a scanner-heavy log has a pattern per probed path: the Markdown and HTML tables stop at
    # REPORT_ROWS (most bot requests first) and say where the rest are; the JSON has them all
    from logtrap.report import html, markdown

    monkeypatch.setattr(markdown, "REPORT_ROWS", 2)
    monkeypatch.setattr(html, "REPORT_ROWS", 2)
    run = sample_analysis()  # three patterns
    md = report.to_markdown(run, SUGGESTIONS)
    rows = [line for line in md.splitlines() if line.startswith("| `example.com`")]
    assert [row.split(" | ")[1] for row in rows] == [
        "`/calendar?date`", "`/evil/<img src=x onerror=alert(2)>`"]
    assert "... and 1 more pattern, with fewer bot requests (all of them: --json" in md
    page = report.to_html(run, SUGGESTIONS, charts=[])
    assert page.count("<code>/article/{n}</code>") == 0 and "and 1 more pattern," in page
    # with the bot requests the patterns left out hold, where they hold any
    monkeypatch.setattr(markdown, "REPORT_ROWS", 1)
    monkeypatch.setattr(html, "REPORT_ROWS", 1)
    held = "... and 2 more patterns, with fewer bot requests each, 1 together (14.3%) (all of them: --json"
    assert held in report.to_markdown(run, SUGGESTIONS)
    assert held in report.to_html(run, SUGGESTIONS, charts=[])
    assert len(json.loads(report.to_json(run, SUGGESTIONS))["patterns"]) == 3


def _card(kind, severity, pattern, wasted, host="-"):
    from logtrap.findings import Finding

    return Finding(kind, severity, host, pattern, wasted + 1, wasted, ("/x",), {}, "Fix it.")


def _headings(cards) -> list[str]:
    """The terminal's findings view of `cards`, its headings, "Also" and count lines only."""
    from rich.console import Console

    from logtrap.findings import to_frame

    console = Console(width=300, color_system=None, record=True)
    report.print_lines(console, report.findings_view(f.rank(to_frame(cards))))
    return [line for line in console.export_text().splitlines()
            if line.startswith(("CRITICAL", "WARNING", "INFO", "  Also", "Findings", "  ..."))]


def test_a_growing_pattern_on_a_pattern_another_finding_names_is_a_line_under_it():
    # the sample shop's /?sid was two warning cards, session_id and growing_pattern: one trap.
    # A generic finding (growing_pattern, budget_hog) goes under a finding at least as severe
    # on the same host and pattern; one more severe, or on another host, keeps its own card
    assert _headings([
        _card("session_id", "warning", "/?sid", 510),
        _card("growing_pattern", "warning", "/?sid", 511),
        _card("budget_hog", "critical", "/cal?date", 900),
        _card("calendar", "warning", "/cal?date", 800),
        _card("growing_pattern", "info", "/cal?date", 100),
        _card("growing_pattern", "warning", "/?sid", 300, host="b.example"),
    ]) == [
        "Findings: 1 critical, 4 warning, 1 info (2 of them shown as a line under another "
        "finding on the same pattern or family)",
        "CRITICAL budget_hog /cal?date",
        "WARNING calendar /cal?date",
        "  Also growing_pattern (info): its new URLs keep appearing window after window; 100 of "
        "101 requests wasted by its measure (evidence: --json, --markdown)",
        "WARNING session_id /?sid",
        "  Also growing_pattern (warning): its new URLs keep appearing window after window; 511 "
        "of 512 requests wasted by its measure (evidence: --json, --markdown)",
        "WARNING growing_pattern b.example /?sid",
    ]
    # under a finding past the first three of its folder (counted, not shown) the line would
    # go unseen: the growing pattern keeps its card
    facets = [_card("facets", "warning", f"/shop/cat{i}?a&b&c", 800 - i) for i in range(5)]
    assert _headings([*facets, _card("growing_pattern", "warning", "/shop/cat4?a&b&c", 700)]) == [
        "Findings: 0 critical, 6 warning, 0 info",
        *(f"WARNING facets /shop/cat{i}?a&b&c" for i in range(3)),
        "  ... and 2 more facets findings under /shop/ (2 warning), likely the same trap: "
        "/shop/cat3?a&b&c, /shop/cat4?a&b&c (all of them: --json, --markdown)",
        "WARNING growing_pattern /shop/cat4?a&b&c",
    ]


def test_findings_on_a_familys_member_patterns_are_one_line_under_it():
    # a code host's crawl of every file at every commit: 730 per-file cards (growth, random
    # tokens) beside the family's one; counted in a line under it, where it is as severe
    assert _headings([
        _card("budget_hog", "warning", "/cgit/{path}?id", 9000),
        _card("growing_pattern", "warning", "/cgit/r.git/tree/README?id", 300),
        _card("random_token", "info", "/cgit/r.git/blame/src/a.c?id", 200),
        _card("random_token", "info", "/cgit/r.git/tree/src/a.c?id", 100),
        _card("soft_404", "critical", "/cgit/r.git/plain/x?id", 8000),  # more severe: its card
        _card("growing_pattern", "warning", "/blog/{slug}?p", 50),  # no member
    ]) == [
        "Findings: 1 critical, 3 warning, 2 info (3 of them shown as a line under another finding "
        "on the same pattern or family)",
        "CRITICAL soft_404 /cgit/r.git/plain/x?id",
        "WARNING budget_hog /cgit/{path}?id",
        "  Also 3 findings on its member patterns, the same crawl: 1 growing_pattern (warning), "
        "2 random_token (info) (all of them: --json, --markdown)",
        "WARNING growing_pattern /blog/{slug}?p",
    ]


def _forge_bots() -> pl.DataFrame:
    """The bot table of a code host's log: git clients from 91 CI addresses polling 40
    repositories (long patterns, counts of three digits), and Googlebot."""
    from logtrap.analysis import analyze
    from logtrap.bots import add_bots

    start = datetime(2026, 11, 1, tzinfo=timezone.utc)
    rows = []
    for k in range(20_000):
        repo = f"/team{k % 40 % 5}/repo{k % 40}"
        if k % 2 == 0:
            rows.append((f"10.0.{k % 7}.{k % 13 + 1}", f"{repo}.git/info/refs?service=git-upload-pack",
                         "git/2.39.2"))
        else:
            rows.append(("66.249.66.1", f"{repo}/src/branch/main/README.md",
                         "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)"))
    frame = pl.DataFrame(rows, schema=["client", "url", "user_agent"], orient="row").with_columns(
        host=pl.lit("-"), status=pl.lit(200), bytes=pl.lit(300),
        time=pl.datetime_range(start, start + timedelta(seconds=20_000 - 1), "1s", eager=True,
                               time_zone="UTC"))
    assert add_bots(frame.head(1))["bot_name"].item() == "git"
    return analyze(frame).bots


@pytest.mark.parametrize("width", [80, 100, 120])
def test_a_table_wider_than_the_console_is_fitted_not_cut(width):
    # the folding columns' least widths made rich lay the bot table out 102 characters wide
    # at 100, and the console cut the last two: "/team1/repo31.git/info/refs?service 270"
    # folded to "...git/" + "fo/refs?service 27", the count lost its last digit
    bots = _forge_bots()
    lines = _render([report.bots_table(bots)], width=width).splitlines()
    assert max(len(line) for line in lines) <= width
    # the last column, its folded lines joined: every pattern and count whole
    start = lines[3].index("/team")
    shown = "".join(line[start:] for line in lines[3:]).replace(" ", "")
    assert shown == "".join(f"{p['pattern']}{p['requests']:,}"
                            for top in bots["top_patterns"] for p in top[:3])


def test_the_pattern_table_keeps_its_top_bots_at_80_characters():
    # at 80 characters rich laid it out 90 wide, and the console cut its last column whole
    import glob

    from logtrap.analysis import analyze

    patterns = analyze(sorted(glob.glob("sample_logs/vhost/access.log*"))).patterns
    lines = _render([report.pattern_table(patterns, 5)], width=80).splitlines()
    assert max(len(line) for line in lines) <= 80
    assert lines[0].split() == ["Bot", "Unique"]  # the numbers' headers on two lines
    start = lines[1].index("Top bots")
    shown = "".join(line[start:] for line in lines[3:]).replace(" ", "")
    assert shown == "".join(f"{b['bot_name']}{b['requests']:,}" + ("," if i < 2 else "")
                            for top in patterns["bots"].head(5) for i, b in enumerate(top[:3]))


def test_a_pattern_only_posted_to_shows_no_count_of_urls_rather_than_zero():
    # URLs are counted from the reads (GET, HEAD); /xmlrpc.php took only POSTs
    rows = [{**_row(i, "/xmlrpc.php", "/xmlrpc.php", "/xmlrpc.php", bot="(empty)"), "method": "POST"}
            for i in range(4)]
    rows += [{**_row(10 + i, f"/article/{i}", "/article/{n}", "/article/{n}", bot="Googlebot"),
              "method": "GET"} for i in range(3)]
    tally = Tally(settings=Settings())
    tally.add(pl.DataFrame(rows))
    patterns = tally.finish().patterns
    assert dict(patterns.select("pattern", "unique_urls").iter_rows()) == {
        "/xmlrpc.php": 0, "/article/{n}": 3}  # the JSON report's number stays 0
    lines = _render([report.pattern_table(patterns)], width=120).splitlines()
    cells = {line.split()[0]: line.split()[1:] for line in lines[2:]}
    # pattern, requests, bot requests, share, unique URLs, statuses, top bots
    assert cells["/xmlrpc.php"][:4] == ["4", "4", "57.1%", "-"]
    assert cells["/article/{n}"][:4] == ["3", "3", "42.9%", "3"]
    markdown = report.to_markdown(Analysis(tally.finish(), f.empty_findings(), None, Settings()))
    assert "| `example.com` | `/xmlrpc.php` | 4 | 57.1% | - | `(empty)` 4 |" in markdown


def test_suggest_text_shows_three_rules_of_a_kind_with_the_same_lines_then_one_line_for_the_rest():
    # a shop's facet findings, one per category and set of filters, the category's line each:
    # 718 blocks of text for 60 lines
    from logtrap.report.text import suggestions_view

    facets = [{**RULE, "kind": "facets", "pattern": f"/c/shoes?{x}", "rule": "Disallow: /c/shoes?*&"}
              for x in ("a&b", "a&c", "b&c", "a&b&c", "a&b&d")]
    withheld = {**RULE, "status": "withheld", "rule": "", "reason": "would block /calendar?date=2026-01"}
    rows = [*facets[:2], RULE, *facets[2:], withheld, withheld]
    view = suggestions_view(Suggestions("", "", "", pl.DataFrame(rows, schema=RULE_SCHEMA)))
    heads = [line.split("] ", 1)[-1] for line in view[1:] if isinstance(line, str) and line.startswith("\n")]
    assert heads == [
        "robots.txt for *: facets /c/shoes?a&b (example.com): saves 3 bot requests",
        "robots.txt for *: facets /c/shoes?a&c (example.com): saves 3 bot requests",
        "robots.txt for *: calendar /calendar?date (example.com): saves 3 bot requests",
        "robots.txt for *: facets /c/shoes?b&c (example.com): saves 3 bot requests",
        "\n  ... and 2 more emitted facets rules with the same lines (Disallow: /c/shoes?*&) (all of them: --json)",
        "robots.txt for *: calendar /calendar?date (example.com)",  # withheld, no lines: each shown
        "robots.txt for *: calendar /calendar?date (example.com)",
    ]

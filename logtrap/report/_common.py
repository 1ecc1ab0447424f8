"""What every report format shares: log strings made safe, numbers and dates formatted.

Every string that comes from a log (URLs, patterns, user agents, hosts, rejected lines) is
attacker-controlled: `clean` strips control characters and terminal escape sequences before
anything reaches a terminal, and `safe` also escapes rich markup.
"""

from __future__ import annotations

import re
from datetime import datetime
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

import polars as pl
from rich.markup import escape

from logtrap import schema as s
from logtrap.bots import NOT_LOGGED_NAME

if TYPE_CHECKING:  # imported for types only: the report sits below the pipeline
    from logtrap.analysis import Analysis

# CSI / OSC / two-byte escape sequences, then any other C0/C1 control character, then the
# Unicode bidi controls that can make a terminal show text in another order than it is.
_ESCAPES = re.compile(
    r"\x1b\[[0-?]*[ -/]*[@-~]"
    r"|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?"
    r"|\x1b[@-_]"
    r"|[\x00-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]"
)


# -- sanitising ------------------------------------------------------------------------------


def clean(value: object) -> str:
    """Text from a log made safe for a terminal: escape sequences and control characters go.

    >>> clean("Mozilla\\x1b[31m red\\x07\\nnext")
    'Mozilla red next'
    >>> clean(None)
    '-'
    """
    if value is None:
        return "-"
    text = str(value)
    cleaned = _ESCAPES.sub(lambda m: " " if m.group(0) in "\t\n\r" else "", text)
    return cleaned


# Log strings longer than this are cut in the terminal: the longest URLs of the real corpus
# logs are ~600 characters (99.9% are under 170), a scanner's payload can be megabytes, and
# five of those would bury the summary. Reports (--json, --markdown, --html) keep them whole.
SHOWN_CHARS = 300
# Patterns listed in the Markdown and HTML reports and `logtrap patterns`' table, most bot
# requests first: a scanner-heavy log has one pattern per probed path, 70,000 in 200,000
# lines, more than anyone reads, a 19 MB page, and rich takes 2.5 ms a row to lay out a
# table (417,000 rows: 17 minutes); the JSON and Parquet reports have them all (judgement).
REPORT_ROWS = 1000


def more_patterns(n: int, where: str = "--json, --parquet or logtrap patterns --json",
                  what: str = "pattern", held: int = 0, total: int = 0) -> str:
    """The line under a pattern (or section) table cut short, and, where the rows left out
    hold bot requests, how many (`held`) and their share of the table's (`total`): a loop's
    400,000 patterns of two requests each held most of the budget.

    >>> more_patterns(69_273)[:46], more_patterns(1)[:28]
    ('... and 69,273 more patterns, with fewer bot r', '... and 1 more pattern, with')
    >>> more_patterns(397_712, "--json", held=1_035_271, total=1_449_830)
    '... and 397,712 more patterns, with fewer bot requests each, 1,035,271 together (71.4%) (all of them: --json)'
    """
    together = f" each, {_n(held)} together ({_pct(held / total)})" if held and total else ""
    return f"... and {count(n, f'more {what}')}, with fewer bot requests{together} (all of them: {where})"


def rest_held(table: pl.DataFrame, shown: int) -> dict[str, int]:
    """`more_patterns`' `held` and `total`: the bot requests of `table`'s rows past the first
    `shown`, and of them all."""
    bots = table[s.BOT_REQUESTS]
    return {"held": int(bots.slice(shown).sum() or 0), "total": int(bots.sum() or 0)}


def safe(value: object, limit: int | None = None) -> str:
    """`clean`, then escaped for rich markup (a log string never styles the terminal); cut to
    `limit` characters, if given, with the number of characters left out.

    >>> safe("[bold]x[/bold]")
    '\\\\[bold]x\\\\[/bold]'
    >>> safe("/a" + "b" * 2000, limit=5)
    '/abbb… (1,997 more characters)'
    """
    text = clean(value)
    if limit is not None and len(text) > limit:
        text = f"{text[:limit]}… ({len(text) - limit:,} more characters)"
    return escape(text)


# -- what the log could not say ----------------------------------------------------------------
NO_URL = "(no URL)"


def pattern_label(pattern: str | None) -> str:
    """A pattern as tables show it: the requests with no URL (an empty or junk request line,
    a TLS handshake sent to the plain port) have the empty pattern, shown as `NO_URL`.

    >>> pattern_label(""), pattern_label("/a/{n}")
    ('(no URL)', '/a/{n}')
    """
    return pattern or NO_URL


def server_own_note(n: int) -> str:
    """The line for the requests Apache sent itself (`analysis._without_server_own`).

    >>> server_own_note(2)
    '2 `OPTIONS *` requests Apache sent itself (its internal dummy connections): left out of the analysis'
    """
    return (f"{count(n, '`OPTIONS *` request')} Apache sent itself (its internal dummy "
            "connections): left out of the analysis")


NOT_LOGGED_NOTE = (
    "{n} requests have no user agent in the log (its format does not record one): they are "
    "counted as bot requests, and people's requests cannot be told apart from them, so "
    "human_* evidence counts none of them; rules are checked against every URL they "
    "fetched with success outside the traps."
)


def not_logged_requests(patterns: pl.DataFrame) -> int:
    """Requests whose user agent the log does not record (`bots.NOT_LOGGED_NAME`), from a
    patterns frame (its `bots` lists).

    >>> not_logged_requests(pl.DataFrame({"bots": [[{"bot_name": "(not logged)", "requests": 3},
    ...     {"bot_name": "curl", "requests": 1}]]}))
    3
    """
    if patterns.height == 0:
        return 0
    bots = patterns.select(pl.col(s.BOTS).explode()).unnest(s.BOTS)
    return int(bots.filter(pl.col(s.BOT_NAME) == NOT_LOGGED_NAME)[s.REQUESTS].sum() or 0)


# -- what a finding is about -------------------------------------------------------------------
def finding_subject(
    kind: str,
    pattern: str | None,
    evidence: Mapping[str, Any],
    code: Callable[[str], str],
    plain: Callable[[str], str],
) -> str:
    """What a finding's heading names, with `code` and `plain` formatting its pieces: the
    pattern, or "(whole host)" for a finding without one (new patterns keep appearing, fake
    bots); for a finding about a bot, the routes it hammers or the name it claims, and the bot.

    >>> finding_subject("aggressive_bot", "/asl/{n}", {"bot_name": "meta-externalagent",
    ...     "routes": ["/asl/", "/psl/"]}, lambda t: f"`{t}`", str)
    '`/asl/`, `/psl/` by `meta-externalagent`'
    >>> finding_subject("fake_bot", None, {"bot_name": "Googlebot"}, lambda t: f"`{t}`", str)
    '(whole host), claiming `Googlebot`'
    """
    bot = evidence.get(s.BOT_NAME)
    routes = [str(r) for r in evidence.get("routes") or []]
    if kind == "aggressive_bot" and bot and routes:
        return ", ".join(map(code, routes)) + plain(" by ") + code(str(bot))
    where = code(pattern) if pattern is not None else plain("(whole host)")
    if kind == "fake_bot" and bot:
        return where + plain(", claiming ") + code(str(bot))
    return where


def waste_sentence(kind: str, wasted: int | None, requests: int | None) -> str:
    """The finding's numbers in words: for a bot, what its requests and wasted requests are.

    >>> waste_sentence("calendar", 9, 10)
    '9 of 10 requests wasted'
    >>> waste_sentence("aggressive_bot", 1888, 2136)
    '1,888 of its 2,136 requests went to these routes'
    """
    if kind == "aggressive_bot":
        return f"{_n(wasted)} of its {_n(requests)} requests went to these routes"
    if kind == "fake_bot":
        return (f"{_n(wasted)} of the {_n(requests)} requests in this name came from addresses "
                "that failed verification")
    return f"{_n(wasted)} of {_n(requests)} requests wasted"


# -- numbers -----------------------------------------------------------------------------------


def _n(value: int | None) -> str:
    return f"{value or 0:,}"


def count(value: int | None, noun: str) -> str:
    """A count and its noun, plural unless one.

    >>> count(1, "pattern"), count(1234, "bot request")
    ('1 pattern', '1,234 bot requests')
    """
    return f"{_n(value)} {noun}" + ("" if value == 1 else "s")


def _urls(value: int | None, exact: bool | None = True) -> str:
    """A count of distinct URLs; "~" marks one estimated from the URL sample, and "-" none
    counted: the URLs counted are those read (GET or HEAD, or a log that does not say), and a
    pattern or section with requests but no such URL was only POSTed to (`/xmlrpc.php`, a
    form's target), which "0" misstated.

    >>> _urls(1234), _urls(31074, exact=False), _urls(0)
    ('1,234', '~31,074', '-')
    """
    if not value:
        return "-"
    return _n(value) if exact is not False else "~" + _n(value)


def _pct(value: float | None) -> str:
    return f"{(value or 0.0) * 100:.1f}%"


def _iso(value: datetime | None) -> str | None:
    return value.isoformat() if value is not None else None


def _when(value: datetime | None) -> str:
    return value.strftime("%Y-%m-%d %H:%M:%S") if value is not None else "-"


def _bytes(value: int) -> str:
    size = float(value)
    for unit in ("B", "kB", "MB", "GB"):
        if size < 1000 or unit == "GB":
            return f"{size:.0f} {unit}" if unit == "B" else f"{size:.1f} {unit}"
        size /= 1000
    return f"{value} B"


# -- the doctests' example ---------------------------------------------------------------------


def example_run() -> Analysis:
    """The run the report's doctests show: one Googlebot request for a calendar URL, read
    from a log file like any other (the report sits below the pipeline: imported on call).

    >>> example_run().patterns["pattern"].to_list()
    ['/cal?date']
    """
    import pathlib
    import tempfile

    from logtrap.analysis import analyze
    from logtrap.logs import read_logs

    with tempfile.TemporaryDirectory() as folder:
        log = pathlib.Path(folder) / "access.log"
        log.write_text('1.2.3.4 - - [01/Jan/2026:10:00:00 +0000] "GET /cal?date=2030-01 '
                       'HTTP/1.1" 200 5 "-" "Googlebot/2.1"\n')
        return analyze(read_logs(log))


# Why `Analysis.crowds` get no finding, as every report says it.
CROWD_LEAD = "Sent by many machines, not one crawler"
CROWD_NOTE = ("An HTTP library, unnamed agent or link previewer whose requests spread evenly "
              "over that many addresses is many people's app or many machines: no finding or "
              "rule targets it, nor the patterns almost only it fetches.")

_EVIDENCE_ITEMS = 8  # list items shown per evidence value in a report (the JSON has all)


def evidence_line(evidence: Mapping[str, Any], escape_text: Callable[[object], str]) -> str:
    """A finding's evidence as one readable line, every log string through `escape_text`
    (the format's own escaping: terminal, Markdown or HTML).

    >>> evidence_line({"span_years": 31, "share": 0.12345,
    ...     "top_bots": [{"bot_name": "Googlebot", "requests": 92}]}, str)
    'span_years 31; share 0.123; top_bots Googlebot 92'
    >>> evidence_line({"weeks": list(range(10))}, str)
    'weeks 0, 1, 2, 3, 4, 5, 6, 7, ... (2 more)'
    >>> evidence_line({"new_urls_per_window": 2027.33, "urls_per_size": 511.0}, str)
    'new_urls_per_window 2,027; urls_per_size 511'
    >>> evidence_line({"unlisted_patterns": []}, str)
    'unlisted_patterns none'
    """

    def show(value: Any) -> str:
        if isinstance(value, float):  # three significant digits, never in e-notation past 999
            return f"{value:,.0f}" if abs(value) >= 1000 else f"{value:.3g}"
        if isinstance(value, int) and not isinstance(value, bool):
            return _n(value)
        if isinstance(value, Mapping):  # {"bot_name": "Googlebot", "requests": 92}
            return " ".join(show(v) for v in value.values())
        if isinstance(value, (list, tuple)):
            if not value:
                return "none"
            shown = ", ".join(show(v) for v in value[:_EVIDENCE_ITEMS])
            more = len(value) - _EVIDENCE_ITEMS
            return shown + (f", ... ({more} more)" if more > 0 else "")
        return escape_text(value)

    return "; ".join(f"{escape_text(k)} {show(v)}" for k, v in evidence.items()) or "-"

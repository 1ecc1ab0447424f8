"""The terminal views (rich tables and lines) and `to_text`, the summary as plain text.

Every log string goes through `safe`: no control characters, no escape sequences, no rich
markup reaches the terminal from a log.
"""

from __future__ import annotations

import copy
import io
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

import polars as pl
from rich import box
from rich.console import Console, RenderableType
from rich.segment import Segment
from rich.table import Table
from rich.text import Text

from logtrap import findings as f
from logtrap import schema as s
from logtrap.detectors import _family
from logtrap.report._common import (
    CROWD_LEAD, CROWD_NOTE, NOT_LOGGED_NOTE, SHOWN_CHARS, _bytes, _n, _pct, _urls, _when, count,
    evidence_line, finding_subject, more_patterns, not_logged_requests, pattern_label, rest_held,
    safe, server_own_note, waste_sentence,
)

if TYPE_CHECKING:  # imported for types only: the report sits below the pipeline
    from logtrap.analysis import Analysis
    from logtrap.logs import ReadStats
    from logtrap.rules import Suggestions

TOP_PATTERNS = 10  # patterns per host in the budget summary (judgement: one screen)
FILES_LISTED = 10  # files named in the read summary (judgement: rotated sets are ~7-14)
# hosts named in the read summary, and given a budget table each (judgement: a server's own
# sites; nginx's $host logs any Host header a scanner sends, hundreds of one-request hosts)
TOP_HOSTS = 10
SEVERITY_STYLE = {"critical": "bold red", "warning": "yellow", "info": "cyan"}


def read_summary(stats: "ReadStats | None", traffic: Any) -> list[RenderableType]:
    """What was read (for stderr): counts, the format chosen per file, span, hosts, bad lines."""
    out: list[RenderableType] = []
    if stats is not None:
        files = len(stats.files)
        out.append(
            f"Read {_n(stats.lines)} line{'s' if stats.lines != 1 else ''} from {files} "
            f"file{'s' if files != 1 else ''} "
            f"({_bytes(stats.bytes_read)}): {_n(stats.parsed)} parsed, "
            f"{_n(stats.rejected)} rejected"
        )
        for fr in stats.files[:FILES_LISTED]:
            if fr.format_name is None:  # nothing (new) in it
                what = ("no new lines" if fr.start_offset else
                        "blank lines only" if fr.lines else "empty")
                out.append(f"  {safe(fr.path)}: {what}")
                continue
            out.append(
                f"  {safe(fr.path)}: {safe(fr.format_name)}, "
                f"{_n(fr.lines)} lines, {_n(fr.rejected)} rejected"
            )
        if len(stats.files) > FILES_LISTED:
            out.append(f"  ... {len(stats.files) - FILES_LISTED} more files")
        if stats.unnamed_host:
            files = list(stats.unnamed_host)
            named = ", ".join(safe(p) for p in files[:3]) + (
                f" and {len(files) - 3} more" if len(files) > 3 else "")
            out.append(f"  {named}: their format names no host; read as "
                       f"{safe(next(iter(stats.unnamed_host.values())))}'s, the one host the "
                       "other files name")
        if stats.server_requests:
            out.append("  " + server_own_note(stats.server_requests))
    if traffic.start is not None:
        out.append(f"Time span: {_when(traffic.start)} to {_when(traffic.end)} UTC")
    out.append(_hosts_line(traffic.patterns))
    if stats is not None and stats.rejected_examples.height:
        out.append(f"First rejected lines ({stats.rejected_examples.height} shown):")
        for row in stats.rejected_examples.iter_rows(named=True):
            out.append(
                f"  {safe(row[s.SOURCE])}:{row[s.LINE_NO]}: {safe(row[s.REASON])}: "
                f"{safe(row[s.LINE], SHOWN_CHARS)}"
            )
    return out


def _hosts_line(patterns: pl.DataFrame, top: int = TOP_HOSTS) -> str:
    """The hosts, busiest first, the first `top` of them named.

    >>> frame = pl.DataFrame({"host": ["b", "a", "c", "a"], "requests": [5, 1, 1, 1]})
    >>> _hosts_line(frame), _hosts_line(frame, top=1)
    ('Hosts: b, a, c', 'Hosts: b, and 2 more (3 in all)')
    """
    hosts = (
        patterns.group_by(s.HOST).agg(pl.col(s.REQUESTS).sum())
        .sort([s.REQUESTS, s.HOST], descending=[True, False])[s.HOST].to_list()
    )
    if not hosts:
        return "Hosts: none"
    if hosts == ["-"]:  # the format logs none: "Hosts: -" read as a missing value
        return "Hosts: no virtual host in the log"
    line = "Hosts: " + ", ".join(_host(h) for h in hosts[:top])
    if len(hosts) > top:
        line += f", and {_n(len(hosts) - top)} more ({_n(len(hosts))} in all)"
    return line


def _unique(row: Mapping[str, Any]) -> str:
    """A row's unique URLs, "~" before an estimate."""
    return _urls(row[s.UNIQUE_URLS], row.get(s.UNIQUE_URLS_EXACT))


def _top(items: Iterable[Mapping[str, Any]] | None, key: str, n: int = 3,
         sep: str = ", ") -> str:
    parts = [f"{safe(item[key] if item[key] is not None else 'unknown')} {_n(item[s.REQUESTS])}"
             for item in list(items or [])[:n]]
    return sep.join(parts) if parts else "-"


# The narrowest a folding column (patterns, hosts) is squeezed to while the others wrap: a
# pattern cut every 13 characters could not be read (judgement: most patterns are shorter).
FOLD_MIN_WIDTH = 20
# ...and the narrowest it is squeezed to where the table would not fit the console otherwise
# (`_fit`): still a path segment or two a line (judgement)
FIT_MIN_WIDTH = 14


def _table(*columns: str, right: Iterable[str] = (), fold: Iterable[str] = ()) -> Table:
    """A plain table: numbers right-aligned and never wrapped; `fold` columns (patterns,
    URLs: no spaces to wrap at) break anywhere, but keep `FOLD_MIN_WIDTH` (or their longest
    value, if shorter) while text columns wrap at spaces.
    """
    table = Table(box=box.SIMPLE_HEAD, show_edge=False, pad_edge=False)
    numeric, folding = set(right), set(fold)
    for name in columns:
        table.add_column(name, justify="right" if name in numeric else "left",
                         no_wrap=name in numeric, overflow="fold" if name in folding else "ellipsis")
    return table


def _fit_folding(table: Table) -> Table:
    """Give each folding column `FOLD_MIN_WIDTH`, or its longest cell when shorter."""
    for column in table.columns:
        if column.overflow == "fold":
            longest = max((len(line) for cell in column.cells for line in str(cell).split("\n")),
                          default=0)
            column.min_width = min(FOLD_MIN_WIDTH, max(longest, len(str(column.header))))
    return table


def _where(row: Mapping[str, Any], key: str, hosts: bool) -> str:
    """A pattern or section cell: the host above it when the table has several hosts (one
    column less than a Host column: the table fits 100 characters)."""
    label = safe(pattern_label(row[key]) if key == s.PATTERN else row[key], SHOWN_CHARS)
    return f"{_host(row[s.HOST])}\n{label}" if hosts else label


def pattern_table(patterns: pl.DataFrame, limit: int | None = None) -> Table:
    """The pattern table: pattern (under its host, when there are several), requests, bot
    requests, share, unique URLs, statuses, top bots; the `limit` rows with most bot requests.
    """
    hosts = patterns[s.HOST].n_unique() > 1
    table = _table("Host / pattern" if hosts else "Pattern", "Requests", "Bot requests",
                   "Share", "Unique URLs", "Statuses", "Top bots",
                   right=("Requests", "Bot requests", "Share", "Unique URLs"),
                   fold=("Host / pattern", "Pattern"))
    rows = patterns if limit is None else patterns.head(limit)
    for row in rows.iter_rows(named=True):
        table.add_row(
            _where(row, s.PATTERN, hosts), _n(row[s.REQUESTS]),
            _n(row[s.BOT_REQUESTS]), _pct(row[s.BOT_SHARE]), _unique(row),
            _top(row[s.STATUSES], s.STATUS, sep="\n"), _top(row[s.BOTS], s.BOT_NAME),
        )
    return _fit_folding(table)


def section_table(sections: pl.DataFrame, limit: int | None = None) -> Table:
    """Requests per section (first two path levels; under its host, when there are several):
    the coarse budget split."""
    hosts = sections[s.HOST].n_unique() > 1
    table = _table("Host / section" if hosts else "Section", "Requests", "Bot requests",
                   "Share", "Unique URLs", "Patterns",
                   right=("Requests", "Bot requests", "Share", "Unique URLs", "Patterns"),
                   fold=("Host / section", "Section"))
    rows = sections if limit is None else sections.head(limit)
    for row in rows.iter_rows(named=True):
        table.add_row(
            _where(row, s.SECTION, hosts), _n(row[s.REQUESTS]),
            _n(row[s.BOT_REQUESTS]), _pct(row[s.BOT_SHARE]), _unique(row),
            _n(row["patterns"]),
        )
    return _fit_folding(table)


def bots_table(bots: pl.DataFrame) -> Table:
    """The bot table: requests, share of bot requests, verified/fake/unverified, top patterns,
    status mix and peak requests per minute.
    """
    checked = "Verified/\nfake/unverif."  # two lines: the numbers below are short
    table = _table("Bot", "Requests", "Share", checked, "Peak/min", "Statuses", "Top patterns",
                   right=("Requests", "Share", checked, "Peak/min"), fold=("Bot", "Top patterns"))
    hosts = {p[s.HOST] for ps in bots["top_patterns"].to_list() for p in ps or []}
    for row in bots.iter_rows(named=True):
        top = "\n".join(
            (_host(p[s.HOST]) if len(hosts) > 1 else "")
            + f"{safe(pattern_label(p[s.PATTERN]), SHOWN_CHARS)} {_n(p[s.REQUESTS])}"
            for p in (row["top_patterns"] or [])[:3]
        )
        kind = safe(row[s.BOT_KIND])
        if row.get("addresses") is not None:  # an HTTP library's or unnamed agent's spread
            kind += f", {_n(row['addresses'])} address{'es' if row['addresses'] != 1 else ''}"
        table.add_row(
            f"{safe(row[s.BOT_NAME] or 'unknown')}\n({kind})", _n(row[s.REQUESTS]),
            _pct(row["share"]),
            "/".join(_n(row[f"{v}_requests"]) for v in s.VERIFICATIONS),
            _n(row["peak_per_minute"]),
            _top(row[s.STATUSES], s.STATUS, sep="\n"), top or "-",
        )
    return _fit_folding(table)


def budget_view(
    patterns: pl.DataFrame, top: int = TOP_PATTERNS, hosts: int = TOP_HOSTS
) -> list[RenderableType]:
    """Where the bot budget goes, per host (the `hosts` with most bot requests): the `top`
    patterns with most bot requests."""
    out: list[RenderableType] = [Text("Where the bot budget goes", style="bold")]
    by_host = (
        patterns.group_by(s.HOST)
        .agg(pl.col(s.REQUESTS).sum(), pl.col(s.BOT_REQUESTS).sum())
        .sort([s.BOT_REQUESTS, s.HOST], descending=[True, False])
    )
    if by_host.height == 0:
        return [*out, "No requests."]
    for host, requests, bots in by_host.head(hosts).iter_rows():
        rows = patterns.filter(pl.col(s.HOST) == host)
        out.append(
            f"\n[bold]{host_label(host)}[/bold]: {count(bots, 'bot request')} of "
            f"{count(requests, 'request')}, {count(rows.height, 'pattern')}"
        )
        not_logged = not_logged_requests(rows)
        if not_logged:
            out.append("  " + NOT_LOGGED_NOTE.format(n=_n(not_logged)))
        if bots == 0:
            continue
        table = _table("Pattern", "Bot requests", "Share", "Unique URLs", "Top bots",
                       right=("Bot requests", "Share", "Unique URLs"), fold=("Pattern",))
        shown = rows.filter(pl.col(s.BOT_REQUESTS) > 0).head(top)
        for row in shown.iter_rows(named=True):
            table.add_row(safe(pattern_label(row[s.PATTERN]), SHOWN_CHARS),
                          _n(row[s.BOT_REQUESTS]),
                          _pct(row[s.BOT_SHARE]), _unique(row),
                          _top(row[s.BOTS], s.BOT_NAME))
        out.append(_fit_folding(table))
        fetched = rows.filter(pl.col(s.BOT_REQUESTS) > 0)
        if fetched.height > shown.height:
            # with what they hold together: a loop's 400,000 patterns of two requests each
            # took 70% of the budget, and the table's top ten said nothing of it
            where = "logtrap patterns --json; by section: logtrap patterns --sections"
            out.append("  " + more_patterns(fetched.height - shown.height, where,
                                            **rest_held(fetched, shown.height)))
    others = by_host.slice(hosts)
    if others.height:
        out.append(
            f"\n... {_n(others.height)} more hosts with "
            f"{count(others[s.BOT_REQUESTS].sum(), 'bot request')} of "
            f"{count(others[s.REQUESTS].sum(), 'request')} (all of them: logtrap patterns; "
            "one alone: --host HOST)"
        )
    return out


def host_label(host: str | None) -> str:
    """A host as shown in the terminal ("-" is a log format without a virtual host; "" a
    request that named none, as nginx logs `$host` for a client that sent no Host header).

    >>> host_label("-"), host_label("[x]"), host_label("")
    ('All requests (no virtual host in the log)', '\\\\[x]', '(no host)')
    """
    if host in (None, "-"):
        return "All requests (no virtual host in the log)"
    return _host(host)


def _host(host: str) -> str:
    return safe(host, SHOWN_CHARS) if host else "(no host)"


# Findings of one kind under one path shown in full before the rest are counted in one line:
# a filter trap on a shop's collections is a finding per parameter set, 60 and more
SHOWN_PER_ROOT = 3


def trap_root(pattern: str | None) -> str:
    """The folder a pattern's variable part lies in, where findings of one kind are likely one
    trap's: the path up to its first placeholder segment, or up to its last "/" (a collection
    named in full is one of its folder's); never the site's root, which holds every section
    (there the whole path).

    >>> trap_root("/collections/{slug}?filter&sort_by"), trap_root("/collections/lotus?filter")
    ('/collections/', '/collections/')
    >>> trap_root("/u/r/src/commit/{hex}/tests/a.py"), trap_root("/search?q"), trap_root("/{name}/x?a")
    ('/u/r/src/commit/', '/search', '/{name}/x')
    """
    path = (pattern or "").split("?", 1)[0]
    cut = path.find("{")
    root = path[: path.rfind("/", 0, len(path) if cut < 0 else cut) + 1]
    return path if root in ("", "/") else root


# Kinds whose signal any trap gives (a pattern that keeps growing, one that takes half the
# budget): beside a finding that names the trap on the same pattern, a line under it.
_GENERIC_KINDS = {
    "growing_pattern": "its new URLs keep appearing window after window",
    "budget_hog": "it takes more than half of the host's bot requests",
}


def _as_severe(a: f.Finding, b: f.Finding) -> bool:
    """Whether `a` is at least as severe as `b`: a line under it loses `b` no rank."""
    return s.SEVERITIES.index(a.severity) >= s.SEVERITIES.index(b.severity)


def _group(x: f.Finding) -> tuple[str, str | None, str]:
    """The findings of one kind under one folder (`trap_root`): likely one trap's."""
    return (x.kind, x.host, trap_root(x.pattern))


def _folded(records: list[f.Finding]) -> dict[int, list[f.Finding]]:
    """Generic findings (`_GENERIC_KINDS`) to show as a line under another finding on the same
    host and pattern, by that finding's index: only under one at least as severe, so a
    generic finding never loses its rank, and only under one shown in full (not past the
    first `SHOWN_PER_ROOT` of its group, where the line would go unseen). The session id's
    pattern is one trap, not two."""
    named: dict[tuple[str | None, str], int] = {}
    seen: dict[tuple[str, str | None, str], int] = {}
    for i, x in enumerate(records):
        if x.kind not in _GENERIC_KINDS and x.pattern is not None:
            seen[_group(x)] = seen.get(_group(x), 0) + 1
            if seen[_group(x)] <= SHOWN_PER_ROOT:
                named.setdefault((x.host, x.pattern), i)  # the most severe: records are ranked
    under: dict[int, list[f.Finding]] = {}
    for x in records:
        i = named.get((x.host, x.pattern)) if x.kind in _GENERIC_KINDS and x.pattern else None
        if i is not None and _as_severe(records[i], x):
            under.setdefault(i, []).append(x)
    return under


def _members(records: list[f.Finding]) -> dict[int, list[f.Finding]]:
    """Findings on a family's member patterns (`_family.family_of`, `wide_of`: a code host's
    per-file growth, random tokens, soft 404s, beside the crawl of every file at every
    commit), by the family finding's index: counted in one line under it, where it is at
    least as severe. A Gitea host gave 730 such cards beside the one that names the trap."""
    families = {(x.host, x.pattern): i for i, x in enumerate(records) if _family.is_family(x.pattern)}
    others = [x for x in records if x.pattern is not None and not _family.is_family(x.pattern)]
    if not families or not others:
        return {}
    names = pl.DataFrame({s.PATTERN: [x.pattern for x in others]}, schema={s.PATTERN: pl.String})
    names = names.select(_family.family_of(pl.col(s.PATTERN)).alias("below"),
                         _family.wide_of(pl.col(s.PATTERN)).alias("across"))
    under: dict[int, list[f.Finding]] = {}
    for x, below, across in zip(others, names["below"], names["across"]):
        i = families.get((x.host, below), families.get((x.host, across)))
        if i is not None and _as_severe(records[i], x):
            under.setdefault(i, []).append(x)
    return under


def findings_view(findings: pl.DataFrame) -> list[RenderableType]:
    """Findings by severity, each with its evidence, fix and example URLs; past the first
    `SHOWN_PER_ROOT` of one kind under one folder (`trap_root`), a count, after the last one
    shown. A growing pattern or a budget hog on a pattern another finding names is a line
    under that finding (`_folded`); `--json` and `--markdown` keep each whole."""
    records = f.to_records(findings)
    counts = {sev: sum(1 for x in records if x.severity == sev) for sev in s.SEVERITIES}
    if not records:
        return [Text("No crawler traps found.", style="bold green")]
    under = _folded(records)
    members = _members(records)
    folded = {id(x) for xs in [*under.values(), *members.values()] for x in xs}
    heading = "[bold]Findings[/bold]: " + ", ".join(
        f"{counts[sev]} {sev}" for sev in reversed(s.SEVERITIES))
    if folded:
        heading += (f" ({len(folded)} of them shown as a line under another finding on the "
                    "same pattern or family)")
    out: list[RenderableType] = [heading]
    shown: dict[tuple[str, str | None, str], int] = {}
    hidden: dict[tuple[str, str | None, str], list[f.Finding]] = {}
    last: dict[tuple[str, str | None, str], int] = {}  # where a group's count line goes
    for i, x in enumerate(records):
        if id(x) in folded:
            continue
        group = _group(x)
        shown[group] = shown.get(group, 0) + 1
        if x.pattern is not None and shown[group] > SHOWN_PER_ROOT:
            hidden.setdefault(group, []).append(x)
            continue
        style = SEVERITY_STYLE.get(x.severity, "")
        parts = [_host(x.host)] if x.host not in (None, "-") else []
        parts.append(finding_subject(x.kind, x.pattern, x.evidence,
                                     lambda t: safe(t, SHOWN_CHARS), safe))
        where = " ".join(parts)
        out.append(f"\n[{style}]{x.severity.upper()}[/{style}] [bold]{x.kind}[/bold] {where}")
        out.append(f"  {waste_sentence(x.kind, x.wasted_requests, x.requests)}")
        out.append(f"  Evidence: {evidence_line(x.evidence, safe)}")
        if x.advice:
            out.append(f"  Fix: {safe(x.advice)}")
        for n, url in enumerate(x.examples):
            out.append(f"  {'Examples:' if n == 0 else '         '} {safe(url, SHOWN_CHARS)}")
        for y in under.get(i, ()):
            out.append(f"  Also {y.kind} ({y.severity}): {_GENERIC_KINDS[y.kind]}; "
                       f"{waste_sentence(y.kind, y.wasted_requests, y.requests)} by its measure "
                       "(evidence: --json, --markdown)")
        if members.get(i):
            kinds: dict[tuple[str, str], int] = {}
            for y in members[i]:
                kinds[(y.kind, y.severity)] = kinds.get((y.kind, y.severity), 0) + 1
            by = ", ".join(f"{n} {kind} ({sev})" for (kind, sev), n in sorted(kinds.items()))
            out.append(f"  Also {len(members[i])} findings on its member patterns, the same crawl: "
                       f"{by} (all of them: --json, --markdown)")
        last[group] = len(out)
    for group in sorted(hidden, key=lambda g: last[g], reverse=True):
        kind, host, root = group
        more = hidden[group]
        where = (f"{_host(host)} " if host not in (None, "-") else "") + safe(root)
        severities = [x.severity for x in more]
        by = ", ".join(f"{severities.count(v)} {v}" for v in reversed(s.SEVERITIES) if v in severities)
        named = ", ".join(safe(x.pattern or "", SHOWN_CHARS) for x in more[:2])
        out.insert(last[group], f"  ... and {len(more)} more {kind} findings under {where} ({by}), "
                   f"likely the same trap: {named}{', ...' if len(more) > 2 else ''} "
                   "(all of them: --json, --markdown)")
    return out


def crowds_view(crowds: pl.DataFrame) -> list[RenderableType]:
    """The bots judged as many people's app (`Analysis.crowds`), and why none is a finding.

    >>> crowds = pl.DataFrame({"bot_name": ["okhttp"], "requests": [3000], "addresses": [2981]})
    >>> print(crowds_view(crowds)[1])
    Sent by many machines, not one crawler: okhttp (3,000 requests from about 2,981 addresses). An HTTP library, unnamed agent or link previewer whose requests spread evenly over that many addresses is many people's app or many machines: no finding or rule targets it, nor the patterns almost only it fetches.
    """
    if crowds.height == 0:
        return []
    listed = ", ".join(
        f"{safe(name)} ({_n(requests)} requests from about {_n(addresses)} addresses)"
        for name, requests, addresses in crowds.sort(s.BOT_NAME).iter_rows()
    )
    return ["", f"{CROWD_LEAD}: {listed}. {CROWD_NOTE}"]


def summary_view(analysis: "Analysis", top: int = TOP_PATTERNS) -> list[RenderableType]:
    """The ranked `analyze` summary: budget per host, findings, and where the rules are."""
    if analysis.patterns.height == 0:  # not "no traps found": nothing was looked at
        return ["No request was read: there is nothing to judge (what was read is on stderr)."]
    out = [*budget_view(analysis.patterns, top), "", *findings_view(analysis.findings)]
    out += crowds_view(analysis.crowds)
    if analysis.findings.height:
        # not "rules that block them": suggest may withhold every one, and says why
        out += ["", "Rules for these traps (robots.txt, .htaccess, nginx), each checked not to "
                    "block a real page, or why none can be: run [bold]logtrap suggest[/bold] on "
                    "the same logs."]
    return out


def print_lines(console: Console, renderables: Iterable[RenderableType]) -> None:
    """Print renderables; plain lines are never wrapped (URLs stay whole, grep finds them),
    and tables lose the padding rich puts at the end of their lines.
    """
    for item in renderables:
        if isinstance(item, str):
            console.print(item, soft_wrap=True, highlight=False)
            continue
        if isinstance(item, Table):
            _fit(item, console)
        with console.capture() as captured:
            # never cropped: a line wider than the console is a line the terminal wraps,
            # not one whose end is lost
            console.print(item, highlight=False, crop=False)
        lines = captured.get().splitlines()
        console.file.write("".join(line.rstrip(" ") + "\n" for line in lines))


def _fit(table: Table, console: Console) -> None:
    """Fit the table to the console. Given least widths for its folding columns
    (`_fit_folding`), rich 15 lays some tables out wider than the console (the bot table at
    100 characters: 102; the pattern table at 80: 90), and the console cut the ends of its
    lines: a count of 270 in the last column read 27, at 80 the top bots were gone.

    Where a table does not fit whole (wider, or with words cut short with "…" or columns
    left out), the first of these that does is taken: the headers of its number columns on
    two lines ("Bot requests", "Peak/min"), then the folding columns narrower, to
    `FIT_MIN_WIDTH` at the least, with that least width, then with it as a fixed width (rich
    keeps a least width only where the table fits). Failing that, the one that fits with the
    fewest words cut short ("…" says where) or left out; or, where none fits, the table is
    printed whole, wider than the console, for the terminal to wrap.

    Tried on a table of the rows that set its columns' widths (`_probe`): a table of 1,000
    patterns takes half a second to render."""
    probe = _probe(table)
    folding = [(i, c.min_width or 0) for i, c in enumerate(probe.columns) if c.overflow == "fold"]
    # the words of its other columns, each of which a table shown whole shows (rich cuts a
    # word short with "…", or leaves a column out)
    words = {word for column in probe.columns if column.overflow != "fold"
             for text in (column.header, *column.cells) for word in str(text).split()}

    def tried(headers: bool, width: int | None, fixed: bool) -> int | None:
        """How many of `words` it does not show with these settings (which the probe then
        has), or None where it does not fit."""
        for column, given in zip(probe.columns, table.columns):
            column.header = given.header
            if headers and column.no_wrap and isinstance(column.header, str):
                column.header = _two_lines(column.header)
        for i, least in folding:
            narrowed = least if width is None else min(least, width)
            column = probe.columns[i]
            column.min_width, column.width = (None, narrowed) if fixed else (narrowed, None)
        lines = list(Segment.split_lines(console.render(probe, console.options)))
        if max((Segment.get_line_length(line) for line in lines), default=0) > console.width:
            return None
        shown = "".join(segment.text for line in lines for segment in line)
        return sum(word not in shown for word in words)

    widest = max((least for _, least in folding), default=0)
    steps = [(False, None, False), (True, None, False)] + [
        (True, width, fixed) for fixed in (False, True)
        for width in range(widest - 1, FIT_MIN_WIDTH - 1, -1)]
    fitting, fewest = None, len(words) + 1
    for step in steps:
        missing = tried(*step)
        if missing is not None and missing < fewest:
            fitting, fewest = step, missing
            if not missing:
                break
    if fitting is None:
        return  # printed whole
    tried(*fitting)
    for column, chosen in zip(table.columns, probe.columns):
        column.header = chosen.header
        column.min_width, column.width = chosen.min_width, chosen.width


def _two_lines(header: str) -> str:
    """A one-line header on two: at its first space, else after its first "/".

    >>> _two_lines("Bot requests"), _two_lines("Peak/min"), _two_lines("Share")
    ('Bot\\nrequests', 'Peak/\\nmin', 'Share')
    """
    if "\n" in header:
        return header
    if " " in header:
        return header.replace(" ", "\n", 1)
    return header.replace("/", "/\n", 1)


def _probe(table: Table) -> Table:
    """A table like `table` (its columns and their settings copied), of the rows that set
    its columns' widths: per column, the cell with the longest line and the one with the
    longest word (rich sizes a column between those two), and the first rows."""
    cells = [[str(cell) for cell in column.cells] for column in table.columns]
    rows = set(range(min(table.row_count, 10)))
    for column in cells:
        if column:
            lines = [max(map(len, cell.split("\n"))) for cell in column]
            words = [max(map(len, cell.split()), default=0) for cell in column]
            rows.add(lines.index(max(lines)))
            rows.add(words.index(max(words)))
    kept = sorted(rows)
    probe = copy.copy(table)
    probe.columns = [copy.copy(column) for column in table.columns]
    probe.rows = [table.rows[i] for i in kept]
    for column in probe.columns:
        column._cells = [column._cells[i] for i in kept]
    return probe


def to_text(analysis: "Analysis", suggestions: "Suggestions | None" = None,
            *, width: int = 100) -> str:
    """The terminal summary as plain text (no colour), as `logtrap analyze` prints it when
    piped.
    
    >>> from logtrap.report._common import example_run
    >>> run = example_run()  # one Googlebot request for /cal?date=2030-01
    >>> text = to_text(run, width=80)
    >>> text.splitlines()[2]
    'All requests (no virtual host in the log): 1 bot request of 1 request, 1 pattern'
    >>> text.splitlines()[5], text.splitlines()[-1]
    ('/cal?date              1   100.0%             1   Googlebot 1', 'No crawler traps found.')
    """
    buffer = io.StringIO()
    console = Console(file=buffer, width=width, color_system=None, force_terminal=False,
                      force_jupyter=False, force_interactive=False)
    print_lines(console, summary_view(analysis))
    return buffer.getvalue()


_SAME_RULES = 3  # robots.txt rules of a kind with the same lines shown one by one


def suggestions_view(suggestions: "Suggestions") -> list[RenderableType]:
    """What `logtrap suggest` prints: each rule with what it saves (or why it was withheld),
    the notes, then the suggested files' text.
    """
    rules = suggestions.rules
    out: list[RenderableType] = [Text("Suggested rules", style="bold")]
    if rules.height == 0:
        out.append("No rules to suggest: no finding calls for one.")
    # past `_SAME_RULES` robots.txt rules of a kind with the same lines (a shop's facet
    # findings, one per category and set of filters, the category's line each), one line for
    # the rest, where the fourth would be: (its index in `out`, how many)
    same: dict[tuple, list[int]] = {}
    # Server rules come once per server (LiteSpeed, Apache, nginx): show each rule once.
    for row in rules.filter(pl.col("target").is_in(["robots", "litespeed"])).iter_rows(named=True):
        where = _host(row[s.HOST]) if row[s.HOST] not in (None, "-") else ""
        status = row["status"]
        if row["target"] == "robots" and row["rule"]:
            key = (row[s.HOST], row["group"], row[s.KIND], status, row["rule"])
            seen = same.setdefault(key, [len(out), 0])
            seen[1] += 1
            if seen[1] == _SAME_RULES + 1:
                seen[0] = len(out)
                out.append("")  # the line for the rest, written below
            if seen[1] > _SAME_RULES:
                continue
        style = {"emitted": "green", "narrowed": "yellow", "withheld": "red"}.get(status, "")
        if row["target"] == "robots":
            pattern = f" {safe(row[s.PATTERN])}" if row[s.PATTERN] is not None else ""
            head = f"robots.txt for {safe(row['group'])}: {row[s.KIND]}{pattern}"
            effect = f"saves {_n(row['saved_bot_requests'])} bot requests"
        else:
            routes = ", ".join(safe(x) for x in row["blocked_examples"] or [])
            head = f"server rule: {row[s.KIND]} {safe(row['group'])} on {routes}"
            effect = (f"matches {_n(row['saved_bot_requests'])} offending requests, "
                      f"{_n(row['other_requests'])} others")
        effect = "" if status == "withheld" else f": {effect}"  # nothing saved: see Why
        out.append(f"\n[{style}]{status.upper()}[/{style}] {head}"
                   + (f" ({where})" if where else "") + effect)
        if row["target"] == "robots" and row["rule"]:
            out += [f"  {safe(line)}" for line in row["rule"].split("\n")]
        if row[s.REASON]:
            out.append(f"  Why: {safe(row[s.REASON])}")
    for (_, _, kind, status, rule), (at, n) in same.items():
        if n > _SAME_RULES:
            first = rule.split("\n")[0] + (" ..." if "\n" in rule else "")
            out[at] = (f"\n  ... and {n - _SAME_RULES:,} more {status} {kind} rules with the same lines "
                       f"({safe(first)}) (all of them: --json)")
    if suggestions.notes:
        out += ["", Text("Notes", style="bold")]
        out += [f"  - {safe(note)}" for note in suggestions.notes]
    for title, text in (("robots.txt", suggestions.robots_txt),
                        (".htaccess (LiteSpeed, Apache)", suggestions.htaccess),
                        ("nginx", suggestions.nginx)):
        if text:
            out += ["", Text(f"--- {title} ---", style="bold")]
            out += [safe(line) for line in text.rstrip("\n").split("\n")]
    return out

"""The report as Markdown: log strings in code spans (`md_code`), free text escaped."""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import TYPE_CHECKING

from logtrap.report._common import (
    CROWD_LEAD, CROWD_NOTE, NOT_LOGGED_NOTE, REPORT_ROWS, _n, _pct, _urls, clean, evidence_line,
    finding_subject, more_patterns, pattern_label, rest_held, server_own_note, waste_sentence,
)
from logtrap.report.data import to_dict

if TYPE_CHECKING:  # imported for types only: the report sits below the pipeline
    from logtrap.analysis import Analysis
    from logtrap.rules import Suggestions


def md_code(value: object) -> str:
    """A log string as a Markdown code span that nothing inside can break out of.

    >>> md_code("/a|b`c")
    '`` /a\\\\|b`c ``'
    """
    text = clean(value).replace("|", "\\|")
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    fence = "`" * (longest + 1)
    pad = " " if longest or text.startswith(" ") else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def md_text(value: object) -> str:
    """Free text escaped for Markdown (and the HTML a Markdown renderer lets through).

    >>> md_text("<b>*x*</b>")
    '\\\\<b\\\\>\\\\*x\\\\*\\\\</b\\\\>'
    """
    return re.sub(r"([\\`*_{}\[\]<>()#+!|~&])", r"\\\1", clean(value))


def _md_fence(text: str, lang: str = "") -> str:
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}{lang}\n{text.rstrip()}\n{fence}"


def _md_row(cells: Iterable[str]) -> str:
    return "| " + " | ".join(cells) + " |"


def to_markdown(analysis: "Analysis", suggestions: "Suggestions | None" = None) -> str:
    """The report as Markdown: summary, budget per host, findings, suggested rules.
    >>> from logtrap.report._common import example_run
    >>> run = example_run()  # one Googlebot request for /cal?date=2030-01
    >>> to_markdown(run).splitlines()[:5]
    ['# logtrap report', '', '## Summary', '', '- Lines: 1 (1 parsed, 0 rejected)']
    """
    report = to_dict(analysis, suggestions, rows=REPORT_ROWS)
    summary = report["summary"]
    lines = ["# logtrap report", "", "## Summary", ""]
    lines += [
        f"- Lines: {_n(summary['lines'])} ({_n(summary['parsed'])} parsed, "
        f"{_n(summary['rejected'])} rejected)",
        f"- Bot requests: {_n(summary['bot_requests'])} of {_n(summary['requests'])}",
        f"- Time span: {summary['start'] or '-'} to {summary['end'] or '-'}",
        "- Hosts: " + (", ".join(md_code(h) for h in summary["hosts"]) or "none"),
    ]
    if summary["server_requests"]:
        lines.append("- " + server_own_note(summary["server_requests"]))
    if summary["requests_without_user_agent"]:
        lines.append("- " + NOT_LOGGED_NOTE.format(n=_n(summary["requests_without_user_agent"])))
    if summary["crowds"]:
        lines.append(f"- {CROWD_LEAD}: " + ", ".join(
            f"{md_code(c['bot'])} ({_n(c['requests'])} requests from about "
            f"{_n(c['addresses'])} addresses)" for c in summary["crowds"]) + ". " + CROWD_NOTE)
    lines += ["", "## Findings", ""]
    if not report["findings"]:
        lines += ["No crawler traps found.", ""]
    for x in report["findings"]:
        # as in the terminal: no host when the log has none ("-")
        parts = [md_code(x["host"])] if x["host"] not in (None, "-") else []
        parts.append(finding_subject(x["kind"], x["pattern"], x["evidence"], md_code, str))
        where = " ".join(parts)
        lines += [
            f"### {x['severity'].upper()}: {x['kind']} on {where}",
            "",
            waste_sentence(x["kind"], x["wasted_requests"], x["requests"]) + ".",
            "",
            "Evidence: " + evidence_line(x["evidence"], md_text),
            "",
            f"Fix: {md_text(x['advice'])}" if x["advice"] else "",
            "",
            *(f"- {md_code(url)}" for url in x["examples"]),
            "",
        ]
    lines += ["## Where the bot budget goes", ""]
    lines.append(_md_row(["Host", "Pattern", "Bot requests", "Share", "Unique URLs",
                          "Top bots"]))
    lines.append(_md_row(["---", "---", "---:", "---:", "---:", "---"]))
    for p in report["patterns"]:
        if not p["bot_requests"]:
            continue
        bots = ", ".join(f"{md_code(name)} {_n(n)}" for name, n in list(p["bots"].items())[:3])
        lines.append(_md_row([md_code(p["host"]), md_code(pattern_label(p["pattern"])),
                              _n(p["bot_requests"]), _pct(p["bot_share"]),
                              _urls(p["unique_urls"], p.get("unique_urls_exact")), bots or "-"]))
    if analysis.patterns.height > REPORT_ROWS:
        lines += ["", more_patterns(analysis.patterns.height - REPORT_ROWS,
                                    **rest_held(analysis.patterns, REPORT_ROWS))]
    for title, key, lang in (("robots.txt", "robots_txt", "text"),
                             (".htaccess", "htaccess", "apache"), ("nginx", "nginx", "nginx")):
        if report[key]:
            lines += ["", f"## Suggested {title}", "", _md_fence(report[key], lang)]
    return "\n".join(lines).rstrip() + "\n"

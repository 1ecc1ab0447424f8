"""The report as one self-contained HTML page; every log string is escaped with `h`."""

from __future__ import annotations

import html
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from logtrap.report._common import (
    CROWD_LEAD, CROWD_NOTE, NOT_LOGGED_NOTE, REPORT_ROWS, _n, _pct, _urls, clean, evidence_line,
    finding_subject, more_patterns, pattern_label, rest_held, server_own_note, waste_sentence,
)
from logtrap.report.data import to_dict

if TYPE_CHECKING:  # imported for types only: the report sits below the pipeline
    from logtrap.analysis import Analysis
    from logtrap.rules import Suggestions


def h(value: object) -> str:
    """A log string escaped for HTML text and attribute values.

    >>> h('"><script>alert(1)</script>')
    '&quot;&gt;&lt;script&gt;alert(1)&lt;/script&gt;'
    """
    return html.escape(clean(value), quote=True)


_CSS = """
body{font-family:system-ui,sans-serif;margin:2rem auto;max-width:72rem;padding:0 1rem;
color:#1d2733}
h1{font-size:1.6rem}h2{margin-top:2.5rem;border-bottom:1px solid #ccd}
table{border-collapse:collapse;margin:1rem 0;font-size:.9rem}
th,td{padding:.3rem .6rem;border-bottom:1px solid #e3e6ee;text-align:left;vertical-align:top}
td.n{text-align:right;font-variant-numeric:tabular-nums}
code,pre{font-family:ui-monospace,monospace;font-size:.85rem;word-break:break-all}
td code{display:inline-block;max-width:24rem;word-break:normal;overflow-wrap:break-word}
pre{background:#f5f6fa;padding:1rem;overflow:auto;white-space:pre-wrap}
.critical{color:#b00020;font-weight:bold}.warning{color:#9a6700;font-weight:bold}
.info{color:#0969da}.finding{margin:1.2rem 0}.figure{margin:1.5rem 0}
"""


def _html_table(headers: list[str], rows: Iterable[list[tuple[str, bool]]]) -> str:
    head = "".join(f"<th>{h(x)}</th>" for x in headers)
    body = "".join(
        "<tr>" + "".join(f"<td class=\"n\">{cell}</td>" if numeric else f"<td>{cell}</td>"
                         for cell, numeric in row) + "</tr>"
        for row in rows
    )
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def _figures_html(charts: Iterable[Any]) -> str:
    """Plotly figures as divs; Plotly's JS is inlined once (the page works offline)."""
    parts = []
    for i, fig in enumerate(charts):
        div = fig.to_html(full_html=False, include_plotlyjs=(i == 0),
                          config={"displaylogo": False, "responsive": True})
        parts.append(f'<div class="figure">{div}</div>')
    return "\n".join(parts)


def figures(analysis: "Analysis") -> list[Any]:
    """The report's charts (Plotly figures, titled), in reading order, from `logtrap.plots`."""
    from logtrap import plots

    return list(plots.figures(analysis.traffic).values())


def to_html(analysis: "Analysis", suggestions: "Suggestions | None" = None,
            *, charts: list[Any] | None = None) -> str:
    """A self-contained HTML page (Plotly's JS inlined, no CDN): summary, findings, budget,
    bots, charts and suggested rules. Every log string is HTML-escaped.
    
    >>> from logtrap.report._common import example_run
    >>> run = example_run()  # one Googlebot request for /cal?date=2030-01
    >>> page = to_html(run, charts=[])
    >>> page.startswith("<!DOCTYPE html>"), "<code>/cal?date</code>" in page
    (True, True)
    """
    report = to_dict(analysis, suggestions, rows=REPORT_ROWS)
    summary = report["summary"]
    charts = figures(analysis) if charts is None else charts
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>logtrap report</title><style>{_CSS}</style></head><body>",
        "<h1>logtrap report</h1>",
        "<h2>Summary</h2>",
        _html_table(["", ""], [
            [("Lines", False), (_n(summary["lines"]), True)],
            [("Parsed", False), (_n(summary["parsed"]), True)],
            [("Rejected", False), (_n(summary["rejected"]), True)],
            [("Bot requests", False), (_n(summary["bot_requests"]), True)],
            [("From", False), (h(summary["start"] or "-"), False)],
            [("To", False), (h(summary["end"] or "-"), False)],
            [("Hosts", False), (", ".join(h(x) for x in summary["hosts"]) or "-", False)],
        ]),
    ]
    if summary["requests_without_user_agent"]:
        note = NOT_LOGGED_NOTE.format(n=_n(summary["requests_without_user_agent"]))
        parts.append(f"<p>{h(note)}</p>")
    if summary["server_requests"]:
        note = h(server_own_note(summary["server_requests"]))
        parts.append("<p>" + note.replace("`OPTIONS *`", "<code>OPTIONS *</code>") + "</p>")
    if summary["crowds"]:
        listed = ", ".join(f"<code>{h(c['bot'])}</code> ({_n(c['requests'])} requests from about "
                           f"{_n(c['addresses'])} addresses)" for c in summary["crowds"])
        parts.append(f"<p>{h(CROWD_LEAD)}: {listed}. {h(CROWD_NOTE)}</p>")
    parts.append("<h2>Findings</h2>")
    if not report["findings"]:
        parts.append("<p>No crawler traps found.</p>")
    for x in report["findings"]:
        evidence = evidence_line(x["evidence"], h)
        examples = "".join(f"<li><code>{h(url)}</code></li>" for url in x["examples"])
        # as in the terminal: no host when the log has none ("-")
        where = [f"<code>{h(x['host'])}</code>"] if x["host"] not in (None, "-") else []
        where.append(finding_subject(x["kind"], x["pattern"], x["evidence"],
                                     lambda t: f"<code>{h(t)}</code>", h))
        parts.append(
            f'<div class="finding"><span class="{h(x["severity"])}">'
            f"{h(x['severity'].upper())}</span> <b>{h(x['kind'])}</b> on {' '.join(where)}"
            f"<p>{h(waste_sentence(x['kind'], x['wasted_requests'], x['requests']))}.<br>"
            f"Evidence: {evidence}<br>Fix: {h(x['advice'] or '-')}</p>"
            f"<ul>{examples}</ul></div>"
        )
    parts.append("<h2>Where the bot budget goes</h2>")
    parts.append(_html_table(
        ["Host", "Pattern", "Requests", "Bot requests", "Share", "Unique URLs", "Statuses",
         "Bots"],
        ([(f"<code>{h(p['host'])}</code>", False),
          (f"<code>{h(pattern_label(p['pattern']))}</code>", False),
          (_n(p["requests"]), True), (_n(p["bot_requests"]), True),
          (_pct(p["bot_share"]), True), (_urls(p["unique_urls"], p.get("unique_urls_exact")), True),
          (", ".join(f"{h(k)}: {_n(v)}" for k, v in p["statuses"].items()), False),
          (", ".join(f"{h(k)}: {_n(v)}" for k, v in p["bots"].items()), False)]
         for p in report["patterns"]),
    ))
    if analysis.patterns.height > REPORT_ROWS:
        rest = more_patterns(analysis.patterns.height - REPORT_ROWS,
                             **rest_held(analysis.patterns, REPORT_ROWS))
        parts.append(f"<p>{h(rest)}</p>")
    parts.append("<h2>Bots</h2>")
    parts.append(_html_table(
        ["Bot", "Kind", "Requests", "Share", "Verified", "Fake", "Unverified", "Peak/min"],
        ([(h(b["bot"]), False), (h(b["kind"]), False), (_n(b["requests"]), True),
          (_pct(b["share"]), True), (_n(b["verified_requests"]), True),
          (_n(b["fake_requests"]), True), (_n(b["unverified_requests"]), True),
          (_n(b["peak_per_minute"]), True)] for b in report["bots"]),
    ))
    if charts:
        parts += ["<h2>Charts</h2>", _figures_html(charts)]
    for title, key in (("robots.txt", "robots_txt"), (".htaccess", "htaccess"),
                       ("nginx", "nginx")):
        if report[key]:
            parts += [f"<h2>Suggested {h(title)}</h2>", f"<pre>{h_block(report[key])}</pre>"]
    if summary["rejected_examples"]:
        parts.append("<h2>Rejected lines</h2>")
        parts.append(_html_table(["Where", "Reason", "Line"], (
            [(f"{h(r['source'])}:{r['line_no']}", False), (h(r["reason"]), False),
             (f"<code>{h(r['line'])}</code>", False)] for r in summary["rejected_examples"]
        )))
    parts.append("</body></html>")
    return "\n".join(parts) + "\n"


def h_block(text: str) -> str:
    """Multi-line text (suggested rules) escaped for a <pre> block, newlines kept.

    >>> h_block("a<b\\nc")
    'a&lt;b\\nc'
    """
    return "\n".join(h(line) for line in text.split("\n"))

"""Findings and aggregates -> text | json | markdown | html.

Every output format has the same signature, `render(analysis, suggestions=None) -> str`, and
`RENDERERS` maps a format name to its function (table-driven, like goaccess's outputs).
`to_dict` is the `logtrap/report-v1` JSON contract of DESIGN.md; the other formats show the
same numbers.

Every string that comes from a log (URLs, patterns, user agents, hosts, rejected lines) is
attacker-controlled: `clean` strips control characters and terminal escape sequences before
anything reaches a terminal, `safe` also escapes rich markup, the HTML report escapes it with
`html.escape`, and the Markdown report puts it in code spans.
One module per output format: `data` (the report-v1 dict and JSON), `text` (terminal views),
`markdown` and `html`; `_common` holds what they share (cleaning, numbers, dates).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from logtrap.report._common import REPORT_ROWS, SHOWN_CHARS, clean, more_patterns, rest_held, safe
from logtrap.report.data import (
    SCHEMA,
    JsonRows,
    bot_dicts,
    dumps,
    pattern_dicts,
    pattern_rows,
    section_dicts,
    section_rows,
    summary_dict,
    to_dict,
    to_json,
)
from logtrap.report.html import figures, h, h_block, to_html
from logtrap.report.markdown import md_code, md_text, to_markdown
from logtrap.report.text import (
    FILES_LISTED,
    SEVERITY_STYLE,
    TOP_HOSTS,
    TOP_PATTERNS,
    bots_table,
    budget_view,
    findings_view,
    host_label,
    pattern_table,
    print_lines,
    read_summary,
    section_table,
    suggestions_view,
    summary_view,
    to_text,
)

if TYPE_CHECKING:  # imported for types only: the report sits below the pipeline
    from logtrap.analysis import Analysis
    from logtrap.rules import Suggestions


Renderer = Callable[..., str]

RENDERERS: dict[str, Renderer] = {
    "text": to_text,
    "json": to_json,
    "markdown": to_markdown,
    "html": to_html,
}


def render(analysis: "Analysis", fmt: str, suggestions: "Suggestions | None" = None) -> str:
    """The report in one of `RENDERERS`' formats.
    >>> from logtrap.report._common import example_run
    >>> run = example_run()  # one Googlebot request for /cal?date=2030-01
    >>> render(run, "markdown") == to_markdown(run)
    True
    """
    try:
        renderer = RENDERERS[fmt]
    except KeyError:
        from logtrap.errors import ConfigError

        raise ConfigError(f"unknown report format {fmt!r}",
                          hint="one of: " + ", ".join(RENDERERS)) from None
    return renderer(analysis, suggestions)


__all__ = [
    "FILES_LISTED",
    "RENDERERS",
    "REPORT_ROWS",
    "SCHEMA",
    "SEVERITY_STYLE",
    "SHOWN_CHARS",
    "TOP_HOSTS",
    "TOP_PATTERNS",
    "JsonRows",
    "Renderer",
    "bot_dicts",
    "dumps",
    "bots_table",
    "budget_view",
    "clean",
    "figures",
    "findings_view",
    "h",
    "h_block",
    "host_label",
    "md_code",
    "md_text",
    "more_patterns",
    "pattern_dicts",
    "pattern_rows",
    "pattern_table",
    "print_lines",
    "read_summary",
    "render",
    "rest_held",
    "safe",
    "section_dicts",
    "section_rows",
    "section_table",
    "suggestions_view",
    "summary_dict",
    "summary_view",
    "to_dict",
    "to_html",
    "to_json",
    "to_markdown",
    "to_text",
]

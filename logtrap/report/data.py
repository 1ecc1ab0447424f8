"""The `logtrap/report-v1` JSON contract of DESIGN.md: `to_dict`, its parts, and `to_json`."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import polars as pl

from logtrap import findings as f
from logtrap import schema as s
from logtrap.report._common import _iso, not_logged_requests

if TYPE_CHECKING:  # imported for types only: the report sits below the pipeline
    from logtrap.analysis import Analysis
    from logtrap.rules import Suggestions

SCHEMA = "logtrap/report-v1"


def _suggest(analysis: "Analysis") -> "Suggestions":
    from logtrap.rules import suggest

    return suggest(analysis.findings, analysis.traffic, analysis.settings)


def summary_dict(analysis: "Analysis") -> dict[str, Any]:
    """The `summary` object: what was read, the bot requests, the time span and the hosts.
    >>> from logtrap.report._common import example_run
    >>> run = example_run()  # one Googlebot request for /cal?date=2030-01
    >>> d = summary_dict(run); d["parsed"], d["bot_requests"], d["start"]
    (1, 1, '2026-01-01T10:00:00+00:00')
    """
    traffic = analysis.traffic
    stats = analysis.stats
    requests = int(traffic.patterns[s.REQUESTS].sum() or 0)
    rejected = stats.rejected_examples if stats is not None else s.empty(s.REJECTED_SCHEMA)
    out: dict[str, Any] = {
        "lines": stats.lines if stats is not None else requests,
        "parsed": stats.parsed if stats is not None else requests,
        "rejected": stats.rejected if stats is not None else 0,
        "requests": requests,
        # the server's own `OPTIONS *`, parsed but left out of every count below
        "server_requests": stats.server_requests if stats is not None else 0,
        "bot_requests": int(traffic.patterns[s.BOT_REQUESTS].sum() or 0),
        # counted in bot_requests: the log format records no user agent (Apache common)
        "requests_without_user_agent": not_logged_requests(traffic.patterns),
        # bots judged as many people's app, not one crawler (`Analysis.crowds`)
        "crowds": [
            {"bot": bot, "requests": requests, "addresses": addresses}
            for bot, requests, addresses in analysis.crowds.iter_rows()
        ],
        "start": _iso(traffic.start),
        "end": _iso(traffic.end),
        "hosts": traffic.hosts,
        "rejected_examples": [
            {
                "source": row[s.SOURCE],
                "line_no": row[s.LINE_NO],
                "line": row[s.LINE],
                "reason": row[s.REASON],
            }
            for row in rejected.iter_rows(named=True)
        ],
        "files": [
            {
                "path": fr.path,
                "format": fr.format_name,
                "lines": fr.lines,
                "parsed": fr.parsed,
                "rejected": fr.rejected,
            }
            for fr in (stats.files if stats is not None else [])
        ],
    }
    return out


def _counts(items: Iterable[Mapping[str, Any]] | None, key: str) -> dict[str, int]:
    return {str(item[key] if item[key] is not None else "unknown"): item[s.REQUESTS]
            for item in (items or [])}


def _iso_column(name: str) -> pl.Expr:
    """A time column as `datetime.isoformat` writes it, in Polars (a Python call per value
    took half a second on 70,000 patterns): microseconds only when there are any."""
    c = pl.col(name)
    return (
        pl.when(c.dt.microsecond() == 0)
        .then(c.dt.to_string("%Y-%m-%dT%H:%M:%S%:z"))
        .otherwise(c.dt.to_string("%Y-%m-%dT%H:%M:%S%.6f%:z"))
        .alias(name)
    )


def _rows(frame: pl.DataFrame) -> list[dict[str, Any]]:
    """The rows as dicts, first/last seen as ISO text."""
    times = [c for c in (s.FIRST_SEEN, s.LAST_SEEN) if c in frame.columns]
    return frame.with_columns(_iso_column(c) for c in times).to_dicts()


def pattern_dicts(patterns: pl.DataFrame) -> list[dict[str, Any]]:
    """One report-v1 object per host+pattern (`statuses` and `bots` as name -> count).
    >>> from logtrap.report._common import example_run
    >>> run = example_run()  # one Googlebot request for /cal?date=2030-01
    >>> [(p["pattern"], p["statuses"], p["bots"]) for p in pattern_dicts(run.patterns)]
    [('/cal?date', {'200': 1}, {'Googlebot': 1})]
    """
    return [
        {
            "host": row[s.HOST],
            "pattern": row[s.PATTERN],
            "section": row[s.SECTION],
            "requests": row[s.REQUESTS],
            "bot_requests": row[s.BOT_REQUESTS],
            "human_requests": row[s.HUMAN_REQUESTS],
            "unique_urls": row[s.UNIQUE_URLS],
            "unique_urls_exact": row[s.UNIQUE_URLS_EXACT],
            "bot_share": row[s.BOT_SHARE],
            "statuses": _counts(row[s.STATUSES], s.STATUS),
            "bots": _counts(row[s.BOTS], s.BOT_NAME),
            "first_seen": row[s.FIRST_SEEN],
            "last_seen": row[s.LAST_SEEN],
        }
        for row in _rows(patterns)
    ]


def section_dicts(sections: pl.DataFrame) -> list[dict[str, Any]]:
    """One object per host and section (the first two path levels of the patterns).

    >>> from logtrap.traffic import Tally
    >>> section_dicts(Tally().finish().sections)
    []
    """
    return [
        {
            "host": row[s.HOST],
            "section": row[s.SECTION],
            "requests": row[s.REQUESTS],
            "bot_requests": row[s.BOT_REQUESTS],
            "bot_share": row[s.BOT_SHARE],
            "unique_urls": row[s.UNIQUE_URLS],
            "unique_urls_exact": row[s.UNIQUE_URLS_EXACT],
            "patterns": row["patterns"],
            "first_seen": row[s.FIRST_SEEN],
            "last_seen": row[s.LAST_SEEN],
        }
        for row in _rows(sections)
    ]


@dataclass(frozen=True)
class JsonRows:
    """A list of objects already written as JSON text, one compact object per row, for
    `dumps` to write as they are: Polars writes them (`pattern_rows`, `section_rows`) ten
    times faster than Python makes and encodes dicts (417,000 patterns: 1.4 s against 13)."""

    rows: list[str]


def _json(*columns: str | pl.Expr) -> pl.Expr:
    return pl.struct(*columns).struct.json_encode()


def _json_counts(column: str, key: str) -> pl.Expr:
    """A list of {key, requests} as the JSON object `_counts` makes of it."""
    name = pl.element().struct.field(key).cast(pl.String).fill_null("unknown")
    quoted = _json(name.alias("k")).str.slice(len('{"k":')).str.strip_suffix("}")
    entry = pl.concat_str(quoted, pl.lit(":"), pl.element().struct.field(s.REQUESTS).cast(pl.String))
    inner = pl.col(column).list.eval(entry).list.join(",")
    return pl.concat_str(pl.lit("{"), inner, pl.lit("}")).fill_null("{}")


def _json_rows(frame: pl.DataFrame, line: pl.Expr) -> JsonRows:
    return JsonRows(frame.select(line.alias("_json")).get_column("_json").to_list())


def pattern_rows(patterns: pl.DataFrame) -> JsonRows:
    """`pattern_dicts` as JSON text, written by Polars.

    >>> from logtrap.report._common import example_run
    >>> run = example_run()  # one Googlebot request for /cal?date=2030-01
    >>> [json.loads(row) for row in pattern_rows(run.patterns).rows] == pattern_dicts(run.patterns)
    True
    """
    head = _json(
        s.HOST, s.PATTERN, s.SECTION, s.REQUESTS, s.BOT_REQUESTS, s.HUMAN_REQUESTS,
        s.UNIQUE_URLS, s.UNIQUE_URLS_EXACT, s.BOT_SHARE,
    )
    tail = _json(_iso_column(s.FIRST_SEEN), _iso_column(s.LAST_SEEN))
    return _json_rows(patterns, pl.concat_str(
        head.str.strip_suffix("}"),
        pl.lit(',"statuses":'), _json_counts(s.STATUSES, s.STATUS),
        pl.lit(',"bots":'), _json_counts(s.BOTS, s.BOT_NAME),
        pl.lit(","), tail.str.strip_prefix("{"),
    ))  # fmt: skip


def section_rows(sections: pl.DataFrame) -> JsonRows:
    """`section_dicts` as JSON text, written by Polars.

    >>> from logtrap.report._common import example_run
    >>> run = example_run()  # one Googlebot request for /cal?date=2030-01
    >>> rows = run.traffic.sections
    >>> [json.loads(row) for row in section_rows(rows).rows] == section_dicts(rows)
    True
    """
    return _json_rows(sections, _json(
        s.HOST, s.SECTION, s.REQUESTS, s.BOT_REQUESTS, s.BOT_SHARE, s.UNIQUE_URLS,
        s.UNIQUE_URLS_EXACT, "patterns", _iso_column(s.FIRST_SEEN), _iso_column(s.LAST_SEEN),
    ))  # fmt: skip


def bot_dicts(bots: pl.DataFrame) -> list[dict[str, Any]]:
    """One object per bot: requests, share, verification counts, top patterns, statuses.
    >>> from logtrap.report._common import example_run
    >>> run = example_run()  # one Googlebot request for /cal?date=2030-01
    >>> [(b["bot"], b["requests"], b["unverified_requests"]) for b in bot_dicts(run.bots)]
    [('Googlebot', 1, 1)]
    """
    return [
        {
            "bot": row[s.BOT_NAME] if row[s.BOT_NAME] is not None else "unknown",
            "kind": row[s.BOT_KIND],
            "requests": row[s.REQUESTS],
            "share": row["share"],
            "verified_requests": row["verified_requests"],
            "fake_requests": row["fake_requests"],
            "unverified_requests": row["unverified_requests"],
            "top_patterns": [dict(p) for p in row["top_patterns"] or []],
            "statuses": _counts(row[s.STATUSES], s.STATUS),
            "peak_per_minute": row["peak_per_minute"],
            "addresses": row["addresses"],
            "first_seen": row[s.FIRST_SEEN],
            "last_seen": row[s.LAST_SEEN],
        }
        for row in _rows(bots)
    ]


def to_dict(
    analysis: "Analysis", suggestions: "Suggestions | None" = None, *, rows: int | None = None
) -> dict[str, Any]:
    """The whole run as a `logtrap/report-v1` object (see DESIGN.md); rules are suggested
    here when `suggestions` is not given. `rows`: at most that many patterns and sections,
    those with most bot requests (the reports people read; the JSON holds them all).
    
    >>> from logtrap.report._common import example_run
    >>> run = example_run()  # one Googlebot request for /cal?date=2030-01
    >>> sorted(to_dict(run))
    ['bots', 'findings', 'htaccess', 'nginx', 'notes', 'patterns', 'robots_txt', 'rules', 'schema', 'sections', 'summary']
    """
    return _document(analysis, suggestions, rows, pattern_dicts, section_dicts)


def _document(
    analysis: "Analysis",
    suggestions: "Suggestions | None",
    rows: int | None,
    patterns: Callable[[pl.DataFrame], Any],
    sections: Callable[[pl.DataFrame], Any],
) -> dict[str, Any]:
    suggestions = suggestions if suggestions is not None else _suggest(analysis)
    return {
        "schema": SCHEMA,
        "summary": summary_dict(analysis),
        "patterns": patterns(analysis.patterns.head(rows) if rows else analysis.patterns),
        "sections": sections(
            analysis.traffic.sections.head(rows) if rows else analysis.traffic.sections
        ),
        "findings": [x.to_dict() for x in f.to_records(analysis.findings)],
        "robots_txt": suggestions.robots_txt,
        "htaccess": suggestions.htaccess,
        "nginx": suggestions.nginx,
        # each rule of the three files, with its status, its reason and what it saves
        "rules": suggestions.rules.to_dicts(),
        "notes": suggestions.notes,
        "bots": bot_dicts(analysis.bots),
    }


def to_json(analysis: "Analysis", suggestions: "Suggestions | None" = None) -> str:
    """`to_dict` as JSON text (`dumps`), ending in a newline.
    >>> from logtrap.report._common import example_run
    >>> run = example_run()  # one Googlebot request for /cal?date=2030-01
    >>> import json; json.loads(to_json(run))["schema"]
    'logtrap/report-v1'
    """
    return dumps(_document(analysis, suggestions, None, pattern_rows, section_rows))


_COMPACT = (",", ":")  # the separators Polars writes objects with (`JsonRows`)


def dumps(doc: Mapping[str, Any]) -> str:
    """A JSON document indented by two, its lists of objects one compact object per line:
    readable, greppable, and written by Python's C encoder or by Polars (`JsonRows`;
    indenting every level took 1.8 s for the 70,000 patterns of a scanner-heavy log of
    200,000 lines).

    >>> print(dumps({"schema": "x", "rows": [{"a": 1}, {"a": 2}], "empty": []}), end="")
    {
      "schema": "x",
      "rows": [
        {"a":1},
        {"a":2}
      ],
      "empty": []
    }
    """
    parts = []
    for key, value in doc.items():
        if isinstance(value, list) and value and all(isinstance(v, dict) for v in value):
            value = JsonRows([json.dumps(v, ensure_ascii=False, separators=_COMPACT) for v in value])
        if isinstance(value, JsonRows) and value.rows:
            text = "[\n" + ",\n".join("    " + row for row in value.rows) + "\n  ]"
        elif isinstance(value, JsonRows):
            text = "[]"
        else:
            text = json.dumps(value, indent=2, ensure_ascii=False).replace("\n", "\n  ")
        parts.append(f"  {json.dumps(key)}: {text}")
    return "{\n" + ",\n".join(parts) + "\n}\n"

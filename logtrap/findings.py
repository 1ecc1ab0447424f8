"""The Finding record every stage after detection shares.

Detectors return frames in `schema.FINDING_SCHEMA` (one row per candidate finding); the rest of
logtrap (rules, reports, state) works on those frames, or on `Finding` records made from them
when one finding at a time is easier to read.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import polars as pl

from logtrap import schema as s
from logtrap.errors import LogtrapError

# The trap kinds of DESIGN.md, in the order reports list them when severities tie.
KINDS = (
    "calendar",
    "session_id",
    "facets",
    "pagination",
    "soft_404",
    "relative_loop",
    "random_token",
    "internal_search",
    "budget_hog",
    "growing_pattern",
    "aggressive_bot",
    "fake_bot",
)

MAX_EXAMPLES = 5  # real URLs shown per finding (DESIGN.md: "up to 5 real example URLs")


@dataclass(frozen=True)
class Finding:
    """One verdict: a trap kind on a host's URL pattern, with the numbers behind it."""

    kind: str
    severity: str
    host: str
    pattern: str | None
    requests: int
    wasted_requests: int
    examples: tuple[str, ...] = ()
    evidence: Mapping[str, Any] = field(default_factory=dict)
    advice: str = ""

    def to_dict(self) -> dict[str, Any]:
        """The finding as a `logtrap/report-v1` JSON object.

        >>> Finding("calendar", "warning", "-", "/cal?date", 10, 9).to_dict()["kind"]
        'calendar'
        """
        return {
            "kind": self.kind,
            "severity": self.severity,
            "host": self.host,
            "pattern": self.pattern,
            "requests": self.requests,
            "wasted_requests": self.wasted_requests,
            "examples": list(self.examples),
            "evidence": dict(self.evidence),
            "advice": self.advice,
        }


def finding_rows(
    kind: str,
    rows: pl.DataFrame,
    *,
    severity: pl.Expr | str,
    evidence: Sequence[str],
    advice: str | pl.Expr,
) -> pl.DataFrame:
    """Candidate findings of one kind from a frame of per-pattern rows, in FINDING_SCHEMA.

    `rows` must have HOST, PATTERN, REQUESTS, WASTED_REQUESTS and EXAMPLES (a list of URLs);
    the columns named in `evidence` become the finding's evidence object.

    >>> rows = pl.DataFrame({"host": ["-"], "pattern": ["/c?date"], "requests": [9],
    ...     "wasted_requests": [8], "examples": [["/c?date=2099-01"]], "years": [40]})
    >>> finding_rows("calendar", rows, severity="warning", evidence=["years"],
    ...     advice="x").row(0)[:6]
    ('calendar', 'warning', '-', '/c?date', 9, 8)
    """
    severities = s.SEVERITY_DTYPE.categories.to_list()
    if isinstance(severity, str) and severity not in severities:
        raise LogtrapError(f"{kind}: severity {severity!r} is none of {', '.join(severities)}")
    severity_expr = pl.lit(severity) if isinstance(severity, str) else severity
    evidence_expr = (
        pl.struct(list(evidence)).struct.json_encode() if evidence else pl.lit("{}")
    )
    missing = [c for c in (s.HOST, s.PATTERN, s.REQUESTS, s.WASTED_REQUESTS, s.EXAMPLES, *evidence)
               if c not in rows.columns]
    if missing:
        raise LogtrapError(f"{kind}: finding_rows needs the columns host, pattern, requests, "
                           f"wasted_requests, examples and the evidence named; the rows lack "
                           f"{', '.join(missing)}")
    try:
        return _finding_rows(kind, rows, severity_expr, evidence_expr, advice)
    except pl.exceptions.InvalidOperationError as exc:  # a severity expression's value
        raise LogtrapError(f"{kind}: finding_rows could not make its rows (a severity must be "
                           f"one of {', '.join(severities)}): {str(exc).splitlines()[0]}") from exc


def _finding_rows(
    kind: str, rows: pl.DataFrame, severity_expr: pl.Expr, evidence_expr: pl.Expr,
    advice: str | pl.Expr,
) -> pl.DataFrame:
    return rows.select(
        pl.lit(kind).alias(s.KIND),
        severity_expr.cast(s.SEVERITY_DTYPE).alias(s.SEVERITY),
        pl.col(s.HOST).cast(pl.String),
        pl.col(s.PATTERN).cast(pl.String),
        pl.col(s.REQUESTS).cast(pl.Int64),
        pl.col(s.WASTED_REQUESTS).cast(pl.Int64),
        pl.col(s.EXAMPLES).list.head(MAX_EXAMPLES).cast(pl.List(pl.String)),
        evidence_expr.alias(s.EVIDENCE),
        (pl.lit(advice) if isinstance(advice, str) else advice).cast(pl.String).alias(s.ADVICE),
    )


def schema_text(schema: Mapping[str, pl.DataType]) -> str:
    """A schema as an error message shows it: each column with its dtype, an Enum's values.

    >>> schema_text({"severity": s.SEVERITY_DTYPE, "requests": pl.Int64()})
    'severity (info|warning|critical), requests (Int64)'
    """
    def shown(dtype: pl.DataType) -> str:
        if isinstance(dtype, pl.Enum):
            return "|".join(dtype.categories.to_list())
        return str(dtype)

    return ", ".join(f"{name} ({shown(dtype)})" for name, dtype in schema.items())


def critical_when(condition: pl.Expr) -> pl.Expr:
    """Severity "critical" where `condition` holds, else "warning".

    >>> pl.select(critical_when(pl.lit(3) >= 2)).item()
    'critical'
    """
    return pl.when(condition).then(pl.lit("critical")).otherwise(pl.lit("warning"))


def empty_findings() -> pl.DataFrame:
    """The right empty shape for any detector's output.

    >>> empty_findings().columns[:3]
    ['kind', 'severity', 'host']
    """
    return s.empty(s.FINDING_SCHEMA)


def rank(findings: pl.DataFrame) -> pl.DataFrame:
    """Most severe first, then most wasted requests. Findings on the same host+pattern and
    severity stay together (a session-id trap is also a growing pattern: one place to fix),
    ordered by kind as DESIGN.md lists them, the specific trap before the generic signal.

    >>> rows = pl.DataFrame({"host": ["-"] * 3, "pattern": ["/a", "/b", "/b"],
    ...     "requests": [5, 9, 9], "wasted_requests": [5, 9, 8], "examples": [[], [], []]})
    >>> df = pl.concat([finding_rows("growing_pattern", rows.head(2), severity="info",
    ...     evidence=[], advice=""), finding_rows("session_id", rows.tail(1),
    ...     severity="info", evidence=[], advice="")])
    >>> rank(df).select("kind", "pattern").rows()
    [('session_id', '/b'), ('growing_pattern', '/b'), ('growing_pattern', '/a')]
    """
    order = {kind: i for i, kind in enumerate(KINDS)}
    place = [s.SEVERITY, s.HOST, s.PATTERN]
    return findings.sort(
        [
            pl.col(s.SEVERITY).to_physical(),
            pl.col(s.WASTED_REQUESTS).max().over(place),
            pl.col(s.HOST),
            pl.col(s.PATTERN),
            pl.col(s.KIND).replace_strict(order, default=len(KINDS), return_dtype=pl.Int32),
            pl.col(s.WASTED_REQUESTS),
        ],
        descending=[True, True, False, False, False, True],
        nulls_last=True,
    )


def to_records(findings: pl.DataFrame) -> list[Finding]:
    """Finding records from a FINDING_SCHEMA frame (evidence decoded from JSON).

    >>> to_records(empty_findings())
    []
    """
    return [
        Finding(
            kind=row[s.KIND],
            severity=row[s.SEVERITY],
            host=row[s.HOST],
            pattern=row[s.PATTERN],
            requests=row[s.REQUESTS],
            wasted_requests=row[s.WASTED_REQUESTS],
            examples=tuple(row[s.EXAMPLES] or ()),
            evidence=json.loads(row[s.EVIDENCE] or "{}"),
            advice=row[s.ADVICE] or "",
        )
        for row in findings.iter_rows(named=True)
    ]


def to_frame(findings: Iterable[Finding]) -> pl.DataFrame:
    """The inverse of `to_records`.

    >>> to_frame([Finding("calendar", "info", "-", "/c?date", 3, 2)]).height
    1
    """
    rows = [
        {
            s.KIND: f.kind,
            s.SEVERITY: f.severity,
            s.HOST: f.host,
            s.PATTERN: f.pattern,
            s.REQUESTS: f.requests,
            s.WASTED_REQUESTS: f.wasted_requests,
            s.EXAMPLES: list(f.examples),
            s.EVIDENCE: json.dumps(dict(f.evidence), sort_keys=True),
            s.ADVICE: f.advice,
        }
        for f in findings
    ]
    return pl.DataFrame(rows, schema=s.FINDING_SCHEMA)

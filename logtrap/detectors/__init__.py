"""Trap detectors: one module per kind, one signature, an explicit registry.

Every detector is a function `detect(traffic: Traffic, settings: Settings) -> pl.DataFrame`
returning candidate findings in `schema.FINDING_SCHEMA` (use `findings.finding_rows` to build
them and `findings.empty_findings()` for none). Detectors read only the bounded aggregates in
`Traffic`; they never see individual log lines.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import polars as pl

from logtrap import findings as f
from logtrap import schema as s
from logtrap.detectors import _param, aggressive_bot, budget_hog, fake_bot, growing_pattern
from logtrap.detectors import (
    calendar,
    facets,
    internal_search,
    pagination,
    random_token,
    relative_loop,
    session_id,
    soft_404,
)
from logtrap.errors import LogtrapError
from logtrap.settings import Settings
from logtrap.traffic import AGENT_HASHES, Traffic, crowd_bots
from logtrap.verify import PEOPLES_AGENTS_COLUMN, verify_clients

DetectorFn = Callable[[Traffic, Settings], pl.DataFrame]


@dataclass(frozen=True)
class Detector:
    """One trap detector: the `kind` its findings carry, and its `detect` function.

    `detect(traffic, settings)` reads the bounded aggregates of `Traffic` (never single log
    lines) and returns a frame in `schema.FINDING_SCHEMA`, one row per candidate finding: kind,
    severity (info, warning or critical), host, pattern, requests, wasted_requests, examples
    (real URLs), evidence (a JSON object) and advice. `findings.finding_rows` builds those
    rows from per-pattern rows, `findings.empty_findings()` is the answer when nothing is
    found. A kind of your own ranks after the built-in kinds when severities tie.

    >>> from logtrap.findings import empty_findings
    >>> from logtrap.traffic import Tally
    >>> quiet = Detector("quiet", lambda traffic, settings: empty_findings())
    >>> run_detectors(Tally().finish(), detectors=(quiet,)).height
    0
    """

    kind: str
    detect: DetectorFn


# The registry: an explicit tuple, in the order of DESIGN.md's trap table. A new detector is
# added here (see notebooks/custom_detector.ipynb for one added from outside the package).
REGISTRY: tuple[Detector, ...] = (
    Detector(calendar.KIND, calendar.detect),
    Detector(session_id.KIND, session_id.detect),
    Detector(facets.KIND, facets.detect),
    Detector(pagination.KIND, pagination.detect),
    Detector(soft_404.KIND, soft_404.detect),
    Detector(relative_loop.KIND, relative_loop.detect),
    Detector(random_token.KIND, random_token.detect),
    Detector(internal_search.KIND, internal_search.detect),
    Detector(budget_hog.KIND, budget_hog.detect),
    Detector(growing_pattern.KIND, growing_pattern.detect),
    Detector(aggressive_bot.KIND, aggressive_bot.detect),
    Detector(fake_bot.KIND, fake_bot.detect),
)


def verify_claims(traffic: Traffic, settings: Settings | None = None) -> Traffic:
    """The aggregates with each address that claims to be a search engine marked verified,
    fake or unverified (`traffic.claims` gains the `verified` column; see `verify.py`).

    The stage between the tally and detection: `analyze` runs it, and so does
    `run_detectors` on aggregates that skipped it (fake_bot judges by its verdicts). With
    `settings.ip_ranges` the engines' published ranges decide; with `settings.verify_dns`,
    reverse and forward DNS (network); with neither every claim stays "unverified".

    >>> from logtrap.traffic import Tally
    >>> verify_claims(Tally().finish()).claims.columns[-1]
    'verified'
    """
    settings = Settings.of(settings)
    claims = traffic.claims
    if s.VERIFIED in claims.columns:
        claims = claims.drop(s.VERIFIED)  # verified again: new range files, or DNS now on
    verdicts = verify_clients(claimers(traffic), settings).select(s.CLIENT, s.BOT_NAME, s.VERIFIED)
    return traffic.replace(claims=claims.join(verdicts, on=[s.CLIENT, s.BOT_NAME], how="left"))


def claimers(traffic: Traffic) -> pl.DataFrame:
    """One row per address and claimed search engine, with when its requests began (an old
    range file cannot disprove an address first seen long after it was made), its requests,
    and the people's requests from the address (a CDN's edge carries everyone's:
    `verify.shared_addresses`)."""
    people = traffic.claim_people.group_by(s.CLIENT).agg(
        pl.col(s.HUMAN_REQUESTS).sum(),
        pl.col(AGENT_HASHES).explode().drop_nulls().n_unique().alias(PEOPLES_AGENTS_COLUMN),
    )
    return (
        traffic.claims.group_by(s.CLIENT, s.BOT_NAME)
        .agg(pl.col(s.FIRST_SEEN).min(), pl.col(s.REQUESTS).sum())
        .join(people, on=s.CLIENT, how="left")
        .with_columns(pl.col(s.HUMAN_REQUESTS, PEOPLES_AGENTS_COLUMN).fill_null(0))
    )


def run_detectors(
    traffic: Traffic,
    settings: Settings | None = None,
    detectors: tuple[Detector, ...] | None = None,
) -> pl.DataFrame:
    """Run detectors (the registry by default) on the aggregates, and return their findings
    ranked, most severe first: one row per finding in `schema.FINDING_SCHEMA` (kind,
    severity, host, pattern, requests, wasted_requests, examples, evidence as JSON, advice).

    Findings one query parameter causes on many patterns of a host are one finding, of
    pattern `/{any}?NAME`, where a robots.txt rule for the whole site is safe
    (`detectors/_param.py`).

    Aggregates whose claims were never verified (a `Tally` finished by hand) are verified
    first (`verify_claims`), so that fake_bot is not silently blind. A detector of your own
    that returns anything but a FINDING_SCHEMA frame, or raises, is a `LogtrapError` naming it.

    >>> import logtrap
    >>> traffic = logtrap.analyze("sample_logs/litespeed/access.log*").traffic
    >>> run_detectors(traffic).select("kind", "severity", "pattern", "wasted_requests").rows()
    [('aggressive_bot', 'critical', '/asl/{n}', 1888)]
    """
    settings = Settings.of(settings)
    if s.VERIFIED not in traffic.claims.columns:
        traffic = verify_claims(traffic, settings)
    chosen = REGISTRY if detectors is None else detectors
    frames = [f.empty_findings()]
    if all(d in REGISTRY for d in chosen):
        # side by side: each reads the aggregates only, and their Polars work releases the
        # GIL (run_detectors took 0.40 s against 0.27 on the benchmark's 1M lines; a
        # detector of your own runs them one at a time, as it may not be made for threads)
        with ThreadPoolExecutor(_WORKERS) as pool:
            frames += pool.map(lambda d: _run(d, traffic, settings), chosen)
    else:
        frames += [_run(d, traffic, settings) for d in chosen]
    findings = _not_crowds(pl.concat(frames, how="vertical"), traffic, settings)
    # one parameter causing the traps of many patterns of a host: one finding (_param.py)
    return f.rank(_refused(_param.merge(findings, traffic, settings), traffic))


_WORKERS = 2  # threads for the built-in detectors (three were no quicker on two cores)


def _run(detector: Detector, traffic: Traffic, settings: Settings) -> pl.DataFrame:
    """The detector's findings, checked: a FINDING_SCHEMA frame (columns in any order, dtypes
    that cast strictly), or a LogtrapError naming the detector and the schema it owes."""
    if not isinstance(detector, Detector):
        raise LogtrapError(f"detectors are logtrap.Detector(kind, detect) values, not "
                           f"{type(detector).__name__} {str(detector)[:60]!r}")
    if detector in REGISTRY:
        out = detector.detect(traffic, settings)
    else:  # someone's own: its failure must name it
        try:
            out = detector.detect(traffic, settings)
        except LogtrapError:
            raise
        except Exception as exc:
            raise LogtrapError(f"detector {detector.kind!r} failed: {type(exc).__name__}: "
                               f"{exc}") from exc
    expected = f.empty_findings().schema
    if isinstance(out, pl.DataFrame) and out.schema == expected:
        return out
    wanted = f.schema_text(expected)
    hint = ("build its rows with logtrap.finding_rows(kind, rows, severity=..., evidence=[...], "
            "advice=...), and return logtrap.findings.empty_findings() for none")
    if not isinstance(out, pl.DataFrame):
        raise LogtrapError(f"detector {detector.kind!r} returned {type(out).__name__}, not a "
                           f"DataFrame of FINDING_SCHEMA: {wanted}", hint=hint)
    missing = [name for name in expected if name not in out.columns]
    extra = [name for name in out.columns if name not in expected]
    if missing or extra:
        raise LogtrapError(
            f"detector {detector.kind!r} returned columns {', '.join(out.columns) or 'none'}"
            f"{'; missing ' + ', '.join(missing) if missing else ''}"
            f"{'; unknown ' + ', '.join(extra) if extra else ''}. A detector returns "
            f"FINDING_SCHEMA: {wanted}", hint=hint)
    try:
        return out.select(pl.col(name).cast(dtype, strict=True) for name, dtype in expected.items())
    except pl.exceptions.PolarsError as exc:
        wrong = [f"{name} is {out.schema[name]}" for name, dtype in expected.items()
                 if out.schema[name] != dtype]
        raise LogtrapError(
            f"detector {detector.kind!r} returned {'; '.join(wrong)}, which do not cast to "
            f"FINDING_SCHEMA: {wanted} ({str(exc).splitlines()[0]})", hint=hint) from exc


# A pattern this share of whose bot requests the server refused (`_refused`) is served to no
# crawler already (judgement, as growing_pattern's share of 404s and 410s)
_REFUSED_SHARE = 0.9
# Refusals: the client's error answers but 429, which asks a crawler to come back later
_REFUSALS = pl.col(s.STATUS).is_between(400, 499) & (pl.col(s.STATUS) != 429)
REFUSED_ADVICE = (
    "The server already refuses these URLs to crawlers ({status}): no page is served, and "
    "crawlers keep asking only because links still lead here. Disallow them in robots.txt to "
    "stop the requests too. The fix at the source: "
)


def _refused(findings: pl.DataFrame, traffic: Traffic) -> pl.DataFrame:
    """Findings on a pattern whose bot requests the server nearly all refused (`_REFUSED_SHARE`,
    4xx but 429: a 403 from a firewall, a 404 for every empty date) at "info", with the share
    and the main status as evidence (`refused_share`, `refused_status`) and the advice said
    so: crawlers spend requests there, the server no page (a calendar whose every date a rule
    answers 403 was critical, its advice to answer 404). Bot kinds judge a bot, not the
    pattern's answers; growing_pattern weighs its 404s and 410s itself."""
    keys = [s.HOST, s.PATTERN]
    refused = (
        traffic.statuses.filter(pl.col(s.BOT_REQUESTS) > 0)
        .group_by(keys)
        .agg(
            (pl.col(s.BOT_REQUESTS).filter(_REFUSALS).sum() / pl.col(s.BOT_REQUESTS).sum()).alias("_share"),
            pl.col(s.STATUS).filter(_REFUSALS).sort_by(pl.col(s.BOT_REQUESTS).filter(_REFUSALS), descending=True)
            .first().alias("_status"),
        )
        .filter(pl.col("_share") >= _REFUSED_SHARE)
    )
    judged = ~pl.col(s.KIND).is_in([*BOT_KINDS, growing_pattern.KIND])
    hit = findings.filter(judged).join(refused, on=keys)
    if hit.height == 0:
        return findings
    evidence = [json.dumps({**json.loads(e), "refused_share": round(share, 3), "refused_status": status})
                for e, share, status in hit.select(s.EVIDENCE, "_share", "_status").iter_rows()]
    hit = hit.with_columns(
        pl.lit("info").cast(s.SEVERITY_DTYPE).alias(s.SEVERITY),
        pl.Series(s.EVIDENCE, evidence, dtype=pl.String),
        pl.format(REFUSED_ADVICE.replace("{status}", "{}") + "{}", "_status", pl.col(s.ADVICE).fill_null(""))
        .alias(s.ADVICE),
    ).select(findings.columns)
    return pl.concat([findings.join(hit.select(s.KIND, *keys), on=[s.KIND, *keys], how="anti"), hit])


# Findings about one bot (evidence `bot_name`), which judge that bot and not a pattern's crawl.
BOT_KINDS = (aggressive_bot.KIND, fake_bot.KIND)
# A pattern this share of whose bot requests are crowds' is no crawl to judge (judgement).
_CROWD_ONLY = 0.9


def _not_crowds(findings: pl.DataFrame, traffic: Traffic, settings: Settings) -> pl.DataFrame:
    """Findings without those on patterns almost only crowds fetch (`traffic.crowd_bots`):
    many people's app fetching its API is no crawl to fix. Where crawlers make more than a
    tenth of a pattern's bot requests, its findings stay: a robots.txt line reaches only
    them (apps do not read robots.txt)."""
    crowds = crowd_bots(traffic, settings)
    if crowds.height == 0 or findings.height == 0:
        return findings
    keys = [s.HOST, s.PATTERN]
    crowd_requests = (
        traffic.agents.join(crowds.select(s.BOT_NAME), on=s.BOT_NAME)
        .group_by(keys)
        .agg(pl.col(s.REQUESTS).sum().alias("_crowd"))
    )
    mostly = (
        traffic.patterns.select(*keys, s.BOT_REQUESTS)
        .join(crowd_requests, on=keys)
        .filter(pl.col("_crowd") >= _CROWD_ONLY * pl.col(s.BOT_REQUESTS))
        .select(keys)
    )
    dropped = findings.join(mostly, on=keys, how="semi").filter(~pl.col(s.KIND).is_in(BOT_KINDS))
    return findings.join(dropped.select(s.KIND, *keys), on=[s.KIND, *keys], how="anti")

"""Trap detectors: one module per kind, one signature, an explicit registry.

Every detector is a function `detect(traffic: Traffic, settings: Settings) -> pl.DataFrame`
returning candidate findings in `schema.FINDING_SCHEMA` (use `findings.finding_rows` to build
them and `findings.empty_findings()` for none). Detectors read only the bounded aggregates in
`Traffic`; they never see individual log lines.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import polars as pl

from logtrap import findings as f
from logtrap import schema as s
from logtrap.detectors import aggressive_bot, budget_hog, fake_bot, growing_pattern
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
from logtrap.settings import Settings
from logtrap.traffic import Traffic, crowd_bots

DetectorFn = Callable[[Traffic, Settings], pl.DataFrame]


@dataclass(frozen=True)
class Detector:
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


def run_detectors(
    traffic: Traffic,
    settings: Settings | None = None,
    detectors: tuple[Detector, ...] | None = None,
) -> pl.DataFrame:
    """Run detectors (the registry by default) and rank their findings, most severe first."""
    settings = Settings.of(settings)
    frames = [f.empty_findings()]
    frames += [d.detect(traffic, settings) for d in (REGISTRY if detectors is None else detectors)]
    return f.rank(_not_crowds(pl.concat(frames, how="vertical"), traffic, settings))


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

"""fake_bot: addresses claiming to be a search engine that failed verification.

From `traffic.claims` (one row per address, claimed bot, host and pattern, with the `verified`
verdict of `verify.py`): one finding per host and claimed `bot_name` that has at least
`fake_bot_min_requests` requests from addresses verified as "fake" (outside the engine's
published ranges, or failing reverse+forward DNS).

"unverified" addresses (no range file or DNS answer to judge by) are *not* fake: they are only
counted in the evidence, beside the verified and fake request counts. Without a `verified`
column (verification not run) nothing is fake and the detector is silent.

The finding is about addresses, not URLs, so its pattern is null; evidence lists the fake
addresses (most requests first, capped at `fake_bot_max_addresses`; the count is always given),
the claimed `bot_name`, and the patterns the fakes fetched, for the server rules.
"""

from __future__ import annotations

import polars as pl

from logtrap import findings as f
from logtrap import schema as s
from logtrap.settings import Settings
from logtrap.traffic import Traffic

KIND = "fake_bot"

ADVICE = (
    "These addresses send a search engine's user agent but are not that search engine "
    "(verified against its published address ranges / DNS). robots.txt will not stop them: "
    "deny these addresses at the server or firewall, and never whitelist a crawler by its "
    "user agent alone."
)

_CLAIM = [s.HOST, s.BOT_NAME]
_verdict = pl.col(s.VERIFIED)


def detect(traffic: Traffic, settings: Settings) -> pl.DataFrame:
    """One finding per host and claimed search engine with requests from fake addresses.

    >>> from logtrap.traffic import Tally
    >>> detect(Tally().finish(), Settings()).shape
    (0, 9)
    """
    claims = traffic.claims
    if claims.height == 0 or s.VERIFIED not in claims.columns:
        return f.empty_findings()
    counts = claims.group_by(_CLAIM).agg(
        *(
            pl.col(s.REQUESTS).filter(_verdict == v).sum().cast(pl.Int64).alias(f"{v}_requests")
            for v in s.VERIFICATIONS
        ),
        pl.col(s.CLIENT).filter(_verdict == "fake").n_unique().cast(pl.Int64).alias("fake_address_count"),
    )
    counts = counts.filter(pl.col("fake_requests") >= max(settings.fake_bot_min_requests, 1))
    if counts.height == 0:
        return f.empty_findings()
    fakes = claims.filter(_verdict == "fake")
    addresses = (
        fakes.group_by(*_CLAIM, s.CLIENT)
        .agg(pl.col(s.REQUESTS).sum(), pl.col(s.FIRST_SEEN).min(), pl.col(s.LAST_SEEN).max())
        .sort(s.REQUESTS, s.CLIENT, descending=[True, False])
        .group_by(_CLAIM, maintain_order=True)
        .agg(
            pl.col(s.CLIENT).head(settings.fake_bot_max_addresses).alias("addresses"),
            pl.col(s.FIRST_SEEN).min().dt.to_string("%Y-%m-%dT%H:%M:%SZ").alias(s.FIRST_SEEN),
            pl.col(s.LAST_SEEN).max().dt.to_string("%Y-%m-%dT%H:%M:%SZ").alias(s.LAST_SEEN),
        )
    )
    fake_patterns = (
        fakes.group_by(*_CLAIM, s.PATTERN)
        .agg(pl.col(s.REQUESTS).sum())
        .sort(s.REQUESTS, s.PATTERN, descending=[True, False])
    )
    patterns = fake_patterns.group_by(_CLAIM, maintain_order=True).agg(
        pl.col(s.PATTERN).head(f.MAX_EXAMPLES).alias("patterns")
    )
    examples = (
        fake_patterns.rename({s.REQUESTS: "fake_pattern_requests"})
        .join(traffic.urls.filter(pl.col(s.BOT_REQUESTS) > 0), on=[s.HOST, s.PATTERN])
        .sort(["fake_pattern_requests", s.BOT_REQUESTS, s.URL], descending=[True, True, False])
        .group_by(_CLAIM, maintain_order=True)
        .agg(pl.col(s.URL).unique(maintain_order=True).head(f.MAX_EXAMPLES).alias(s.EXAMPLES))
    )
    rows = (
        counts.join(addresses, on=_CLAIM)
        .join(patterns, on=_CLAIM)
        .join(examples, on=_CLAIM, how="left")
        .with_columns(
            pl.lit(None, pl.String).alias(s.PATTERN),
            (pl.col("fake_requests") + pl.col("verified_requests") + pl.col("unverified_requests"))
            .alias(s.REQUESTS),
            pl.col("fake_requests").alias(s.WASTED_REQUESTS),
            pl.col(s.EXAMPLES).fill_null([]),
        )
        .sort(_CLAIM)
    )
    severity = f.critical_when(pl.col("fake_requests") >= settings.fake_bot_critical_requests)
    return f.finding_rows(
        KIND,
        rows,
        severity=severity,
        evidence=[
            s.BOT_NAME,
            "addresses",
            "fake_address_count",
            "fake_requests",
            "verified_requests",
            "unverified_requests",
            "patterns",
            s.FIRST_SEEN,
            s.LAST_SEEN,
        ],
        advice=ADVICE,
    )

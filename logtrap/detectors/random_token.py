"""random_token: links minted per page view (`/s/a8fk21qz`) — each token seen about once, by bots.

Patterns with a `{token}` or `{hex}` path segment (see `patterns`) are candidates. One is a trap
when

- it has at least `random_token_min_urls` distinct URLs,
- each was fetched about once: requests per distinct URL at most
  `random_token_max_requests_per_url`,
- bots made at least `random_token_min_bot_share` of its requests, and
- the tokens do not lead to distinct pages: at least `random_token_min_urls_per_size` sampled
  URLs per distinct 200 size, or most answers are redirects (304 Not Modified is not one: it
  answers a crawler revalidating a URL it has fetched before).

A catalog addressed by hex ids (each id its own page, its own size) stays silent.
Wasted requests: all bot requests to the pattern.
"""

from __future__ import annotations

import polars as pl

from logtrap import findings as f
from logtrap import schema as s
from logtrap.detectors import _shape
from logtrap.settings import Settings
from logtrap.traffic import Traffic

KIND = "random_token"

ADVICE = (
    "Give each target one stable URL: stop minting a new short link or token per page view "
    "(mint once per target and reuse it), answer unknown tokens with 404, and add "
    "rel=nofollow to the links; then Disallow the token path in robots.txt."
)


def detect(traffic: Traffic, settings: Settings) -> pl.DataFrame:
    """Random-token traps: a path segment of fresh random values fetched once each by bots.

    >>> from logtrap.traffic import Tally
    >>> detect(Tally().finish(), Settings()).shape
    (0, 9)
    """
    totals = _shape.pattern_totals(traffic).filter(
        _shape.path_of(pl.col(s.PATTERN)).str.contains(r"\{(?:token|hex)\}")
    )
    if totals.height == 0:
        return f.empty_findings()
    shell = _shape.shell_sizes(traffic, settings)
    urls = _shape.per_url(traffic.urls, shell).join(
        totals.select(_shape.KEYS), on=_shape.KEYS, how="semi"
    )
    ok = _shape.sized_ok()  # answered 200 with a size that is evidence
    # 304 Not Modified is a crawler revalidating a URL it fetched before: a stable URL
    redirect = (pl.col(s.STATUS) >= 300) & (pl.col(s.STATUS) < 400) & (pl.col(s.STATUS) != 304)
    sampled = urls.group_by(_shape.KEYS).agg(
        pl.len().alias("sampled_urls"),
        ok.sum().alias("sampled_ok_urls"),
        pl.col(s.BYTES).filter(ok).n_unique().alias("distinct_sizes"),
        redirect.mean().alias("redirect_share"),
    )
    rows = (
        totals.join(sampled, on=_shape.KEYS)
        .with_columns(
            (pl.col(s.REQUESTS) / pl.col(s.UNIQUE_URLS).clip(lower_bound=1)).round(2).alias("requests_per_url"),
            (pl.col(s.BOT_REQUESTS) / pl.col(s.REQUESTS).clip(lower_bound=1)).round(3).alias("share_from_bots"),
            (pl.col("sampled_ok_urls") / pl.col("distinct_sizes").clip(lower_bound=1)).round(1).alias("urls_per_size"),
            pl.col("redirect_share").round(3),
            pl.col(s.BOT_REQUESTS).alias(s.WASTED_REQUESTS),
        )
        .filter(
            (pl.col(s.UNIQUE_URLS) >= settings.random_token_min_urls)
            & (pl.col("requests_per_url") <= settings.random_token_max_requests_per_url)
            & (pl.col("share_from_bots") >= settings.random_token_min_bot_share)
            & (
                (pl.col("urls_per_size") >= settings.random_token_min_urls_per_size)
                | (pl.col("redirect_share") >= 0.5)
            )
        )
    )
    rows = rows.join(_shape.examples(urls), on=_shape.KEYS, how="left")
    return _shape.findings(
        KIND,
        rows,
        settings,
        evidence=[
            "unique_urls", "requests_per_url", "share_from_bots", "sampled_urls", "distinct_sizes",
            "urls_per_size", "redirect_share", s.HUMAN_REQUESTS,
        ],  # fmt: skip
        advice=ADVICE,
    )

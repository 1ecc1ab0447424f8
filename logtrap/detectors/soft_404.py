"""soft_404: missing resources answered 200 — the error page's size, or one size for any value.

Two signals, per pattern, on the sampled URLs answered 200:

- *error signature*: the host answers 404 with a typical size (the most common 404 size, on at
  least 5 404 URLs, less the URL's length where its 404 page echoes it: `_shape.less_echo`);
  200 URLs within `one_page_bytes` of it (a token or nonce spreads one page over a dozen
  bytes) are soft 404s, if they stand out: at least `soft_404_min_contrast` times as dense as
  the 200 URLs beside that window, up to `soft_404_size_tolerance` bytes from the error
  page's size (a catalog, or member profiles of the error page's layout, whose sizes spread
  across it have as many there; soft 404s hidden among real pages of about their size are
  left unnamed, not guessed at);
- *any value, one page*: a route with a variable path segment (`{n}`, `{slug}`, `{hex}`,
  `{name}`; tokens are random_token's, dates calendar's, query-string patterns the other
  detectors') where at least `soft_404_min_share` of its 200 URLs get one page
  (`_shape.one_page`: sizes within `one_page_bytes` of one value, as a token or the date
  compressed with the page spreads them, or such sizes plus the URL's length, as a "no such
  item" page that echoes the value asked for). Sizes merely near each other are not one page:
  real pages of one template (member profiles, an API's records) spread over a few dozen
  bytes that the URL does not explain.

Either way at least `soft_404_min_urls` URLs must match; for the second signal humans made at
most `soft_404_max_human_share` of the requests to them (pages people read are not error
pages; the first is proof enough, people follow broken links too), and
static files (images, scripts, styles, fonts) are never considered: a 1x1 pixel is one size on
purpose. Wasted requests: the bot requests to the matching URLs, scaled from the sample.
"""

from __future__ import annotations

import polars as pl

from logtrap import findings as f
from logtrap import schema as s
from logtrap.detectors import _shape
from logtrap.detectors.calendar import dated
from logtrap.settings import Settings
from logtrap.traffic import Traffic

KIND = "soft_404"

ADVICE = (
    "Answer missing pages with a real 404 (or 410) status instead of 200, so crawlers drop "
    "them; fix the links that point there. Disallow in robots.txt only if the URLs keep coming."
)

_MIN_404_URLS = 5  # 404 URLs needed to trust a size signature (judgement)


def _error_sizes(traffic: Traffic) -> pl.DataFrame:
    """Per host, its error page: the most common size of its 404 answers (on enough of them),
    less the URL's length "_m" times, for the m that gathers most (`_shape.less_echo`: a
    404 page that echoes the path asked for is one size once that is taken off)."""
    errors = traffic.urls.filter((pl.col(s.STATUS) == 404) & pl.col(s.BYTES).is_not_null())
    return (
        _shape.less_echo(errors.unique([s.HOST, s.URL]).select(s.HOST, s.URL, s.BYTES))
        .group_by(s.HOST, "_m", "_d")
        .agg(pl.len().alias("n"))
        .filter(pl.col("n") >= _MIN_404_URLS)
        .sort("n", "_m", "_d", descending=[True, False, False])
        .group_by(s.HOST, maintain_order=True)
        .agg(pl.col("_m").first(), pl.col("_d").first().alias("error_page_size"))
    )


def detect(traffic: Traffic, settings: Settings) -> pl.DataFrame:
    """Soft 404s: 200 answers that look like the error page, or one page for any value.

    >>> from logtrap.traffic import Tally
    >>> detect(Tally().finish(), Settings()).shape
    (0, 9)
    """
    if traffic.urls.height == 0:
        return f.empty_findings()
    w, reach = settings.one_page_bytes, max(settings.soft_404_size_tolerance, settings.one_page_bytes + 1)
    max_human = settings.soft_404_max_human_share
    path = _shape.path_of(pl.col(s.PATTERN))
    urls = dated(_shape.per_url(traffic.urls, _shape.shell_sizes(traffic, settings))).filter(
        (pl.col(s.STATUS) == 200)
        & pl.col(s.BYTES).is_not_null()
        & ~_shape.is_static(pl.col(s.URL))
    )
    variable_route = (
        path.str.contains(r"\{(?:n|slug|hex|name)\}")
        & ~path.str.contains(r"\{(?:token|date)\}")
        & ~pl.col(s.PATTERN).str.contains("?", literal=True)
    )
    # the one page of a route: the URLs whose sizes share its fullest window (`_shape.one_page`;
    # only routes with a variable segment can answer any value alike)
    routes = urls.filter(variable_route)
    inside = _shape.one_page(routes, settings)
    urls = (
        urls.join(inside.with_columns(pl.lit(True).alias("route_like")),
                  on=[*_shape.KEYS, s.URL, s.BYTES], how="left")
        .with_columns(pl.col("route_like").fill_null(False))
        .join(_error_sizes(traffic), on=s.HOST, how="left")
        .with_columns(
            (pl.col(s.BYTES) - pl.col("_m") * pl.col(s.URL).str.len_bytes() - pl.col("error_page_size"))
            .abs()
            .alias("_off")
        )
        .with_columns(
            (pl.col("_off") <= w).fill_null(False).alias("error_like"),
            pl.col("_off").is_between(w, reach, closed="right").fill_null(False).alias("error_flank"),
        )
    )
    # the one size of a route: the most common size of the URLs that get its one page
    route_size = (
        urls.filter("route_like")
        .group_by(*_shape.KEYS, s.BYTES)
        .agg(pl.len().alias("n"))
        .sort("n", s.BYTES, descending=[True, False])
        .group_by(_shape.KEYS, maintain_order=True)
        .agg(pl.col(s.BYTES).first().alias("route_size"))
    )
    urls = urls.join(route_size, on=_shape.KEYS, how="left")
    per_pattern = (
        urls.group_by(_shape.KEYS)
        .agg(
            pl.len().alias("sampled_ok_urls"),
            pl.col("error_like").sum().alias("error_like_urls"),
            pl.col("error_flank").sum().alias("flank_urls"),
            pl.col("route_like").sum().alias("one_size_urls"),
            pl.col("months").is_not_null().mean().alias("dated_share"),
            pl.col("error_page_size").first(),
            pl.col("route_size").first(),
            pl.col(s.BOT_REQUESTS).filter(pl.col("error_like")).sum().alias("bot_error_like"),
            pl.col(s.BOT_REQUESTS).filter(pl.col("route_like")).sum().alias("bot_one_size"),
            pl.col(s.HUMAN_REQUESTS).filter(pl.col("route_like")).sum().alias("human_one_size"),
            pl.col(s.REQUESTS).filter(pl.col("route_like")).sum().alias("requests_one_size"),
        )
        .with_columns(
            # the error page's signature needs no more proof (people hit broken links too), as
            # long as it stands out: real pages whose sizes merely spread across the error
            # page's (a template of the same layout) are as dense just beside it
            (
                (pl.col("error_like_urls") >= settings.soft_404_min_urls)
                & (
                    pl.col("error_like_urls") / (2 * w + 1)
                    >= settings.soft_404_min_contrast * pl.col("flank_urls") / (2 * (reach - w))
                )
            ).alias("error_signature"),
            (
                variable_route
                & (pl.col("human_one_size") <= max_human * pl.col("requests_one_size"))
                & (pl.col("dated_share") < 0.5)
                & (pl.col("one_size_urls") >= settings.soft_404_min_urls)
                & (pl.col("one_size_urls") >= settings.soft_404_min_share * pl.col("sampled_ok_urls"))
            ).alias("any_value_one_page"),
        )
        .filter(pl.col("error_signature") | pl.col("any_value_one_page"))
    )
    if per_pattern.height == 0:
        return f.empty_findings()
    rows = (
        per_pattern.with_columns(
            pl.when(pl.col("error_signature"))
            .then(pl.col("bot_error_like"))
            .otherwise(pl.col("bot_one_size"))
            .alias("sampled_wasted"),
            pl.when(pl.col("error_signature"))
            .then(pl.col("error_like_urls"))
            .otherwise(pl.col("one_size_urls"))
            .alias("soft_404_urls"),
            pl.when(pl.col("error_signature"))
            .then(pl.col("error_page_size"))
            .otherwise(pl.col("route_size"))
            .alias("answer_size"),
        )
        .join(_shape.pattern_totals(traffic), on=_shape.KEYS, how="left")
        .with_columns(_shape.scale("sampled_wasted").alias(s.WASTED_REQUESTS))
        .filter(pl.col(s.WASTED_REQUESTS) > 0)
    )
    matching = urls.join(rows.select(*_shape.KEYS, "error_signature"), on=_shape.KEYS).filter(
        pl.when(pl.col("error_signature")).then(pl.col("error_like")).otherwise(pl.col("route_like"))
    )
    rows = rows.join(_shape.examples(matching), on=_shape.KEYS, how="left")
    return _shape.findings(
        KIND,
        rows,
        settings,
        evidence=[
            "soft_404_urls", "sampled_ok_urls", "answer_size", "error_page_size",
            "error_signature", "any_value_one_page", "unique_urls", s.HUMAN_REQUESTS,
        ],  # fmt: skip
        advice=ADVICE,
    )

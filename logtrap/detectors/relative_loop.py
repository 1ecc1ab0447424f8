"""relative_loop: relative links nesting one level deeper per visit (`/x/related/related/…`).

Each pattern's path is split into segments; its loop segment is the literal segment (not a
placeholder) it repeats most. Patterns of a host looping on the same segment are one loop (one
relative link in a template, nesting under every page that uses it): every nesting depth is its
own pattern, so they are summed. A loop is reported when its deepest path repeats the segment at
least `relative_loop_min_repeats` times, it holds at least `relative_loop_min_urls` distinct
URLs, and people made at most `_LOOP_MAX_HUMAN_SHARE` of the requests to its paths that repeat
the segment that often (a docs site's real `/api/.../api/functions/api/` people read). Evidence compares the loop's depth with the site's real depth (the deepest path people
requested outside loops).

Wasted requests: every bot request to a path that repeats the segment (all copies past the
first are the same page reached by a longer URL). The finding's pattern is the loop's first
nesting, `<root>/<segment>/<segment>/{loop}`, where the root (the path before the segment's
first occurrence) is `{any}` when the loop starts under several roots; evidence lists them.

The query's loop is links that append their parameter to the URL they are on instead of
setting it (a language or currency switcher: `?lang=de&currency=EUR&lang=fr&lang=de`): a pattern
is reported where at least `relative_loop_min_urls` of its sampled URLs hold one name=value
pair twice (`doubled`: a multi-select filter repeats a name, never a pair), one of them a
name three times (`max_repeats`: appended on), a sampled URL carrying the name once beside
them (a page the links append to, where a form sending one field twice on every URL has
none), and people made at most `_APPEND_MAX_HUMAN_SHARE` of those URLs' requests. Its pattern is
the pattern itself (names are listed once in a pattern); `repeated_params` names the
parameters doubled, and wasted requests are the bot requests to the URLs that carry one of
them twice, with one value or two (`_twice`: the copies its rule blocks), scaled from the
sample.
"""

from __future__ import annotations

import polars as pl

from logtrap import findings as f
from logtrap import schema as s
from logtrap.detectors import _shape
from logtrap.settings import Settings
from logtrap.traffic import Traffic

KIND = "relative_loop"

ADVICE = (
    "Use root-relative links (href=\"/related/\") or absolute URLs instead of relative ones "
    "(href=\"related/\"), and answer 404 to paths that nest the same segment; then Disallow "
    "the repeated segment in robots.txt."
)

APPEND_ADVICE = (
    "Links here append their parameter to the URL they are on instead of setting it (a "
    "language or currency switcher, a filter link built from the current query): each click "
    "adds a copy, `?lang=de&lang=fr&lang=de`, the page of its last value again. Build those "
    "links with the parameter replaced (or link the clean URL); then Disallow URLs that carry "
    "the parameter twice in robots.txt."
)

_LOOP = "{loop}"
_LOOP_KEYS = [s.HOST, "seg"]
# People make at most this share of the requests to a pattern's doubled URLs (judgement, as
# for session ids found by their values: such links are crawlers' URLs)
_APPEND_MAX_HUMAN_SHARE = 0.1
# ...and at most this share of the requests to a path loop's deep nestings (judgement: people
# clicking a broken relative menu link nest a level or two; a crawler every level)
_LOOP_MAX_HUMAN_SHARE = 0.25


def doubled(url: pl.Expr) -> pl.Expr:
    """True where the URL's query holds one name=value pair twice.

    >>> pl.select(doubled(pl.Series(["/c?lang=de&x=1&lang=de", "/c?color=red&color=blue", "/c/a/a"]))).to_series().to_list()
    [True, False, False]
    """
    pairs = _pairs(url)
    return pairs.list.len() > pairs.list.unique().list.len()


def _pairs(url: pl.Expr) -> pl.Expr:
    """A URL's query pairs as a list, empty ones (`&&`) and a fragment left out."""
    query = _shape.query_of(url).str.splitn("#", 2).struct.field("field_0")
    return query.str.split("&").list.eval(pl.element().filter(pl.element() != ""))


def repeated_names(url: str) -> list[str]:
    """The names whose name=value pair a URL's query holds twice, in their order.

    >>> repeated_names("/c?lang=de&currency=EUR&lang=fr&lang=de&currency=EUR")
    ['lang', 'currency']
    """
    pairs = [p for p in url.partition("?")[2].partition("#")[0].split("&") if p]
    return list(dict.fromkeys(p.partition("=")[0] for i, p in enumerate(pairs) if p in pairs[:i]))


def _segments(patterns: pl.DataFrame) -> pl.DataFrame:
    """Per pattern: its most repeated literal segment, the count, the root and the depth.

    Segments are counted per row number, not per host and pattern: a relative-link loop has
    400,000 patterns of nine segments each, and their strings copied per segment took 1 GB."""
    path = _shape.path_of(pl.col(s.PATTERN))
    keys = patterns.select(*_shape.KEYS).with_row_index("_row")
    exploded = (
        keys.select("_row", path.str.split("/").alias("seg"))
        .with_columns(
            pl.col("seg").list.len().alias("depth"),
            pl.int_ranges(pl.col("seg").list.len()).alias("pos"),
        )
        .explode("seg", "pos")
        .filter((pl.col("seg") != "") & ~pl.col("seg").str.contains(_shape.PLACEHOLDER))
    )
    return (
        exploded.group_by("_row", "seg")
        .agg(pl.len().alias("repeats"), pl.col("pos").min().alias("first_pos"), pl.col("depth").first())
        .filter(pl.col("repeats") >= 2)
        .sort("repeats", "first_pos", descending=[True, False])
        .unique("_row", keep="first", maintain_order=True)
        .join(keys, on="_row")
        .select(
            *_shape.KEYS,
            "seg",
            "repeats",
            "first_pos",
            "depth",
            path.str.split("/").list.head(pl.col("first_pos")).list.join("/").alias("root"),
        )
    )


def _loops(traffic: Traffic, settings: Settings) -> tuple[pl.DataFrame, pl.DataFrame]:
    """(one row per reported loop: host, segment and its sums; the patterns of every loop
    found, with their segment, before the thresholds)."""
    totals = _shape.pattern_totals(traffic)
    looping = _segments(totals.select(*_shape.KEYS, s.HUMAN_REQUESTS)) if totals.height else None
    if looping is None or looping.height == 0:
        return pl.DataFrame(), pl.DataFrame()
    members = looping.join(totals, on=_shape.KEYS)
    deep = pl.col("repeats") >= settings.relative_loop_min_repeats
    rows = (
        members.group_by(_LOOP_KEYS)
        .agg(
            pl.col(s.REQUESTS).sum(),
            pl.col(s.BOT_REQUESTS).sum().alias(s.WASTED_REQUESTS),
            pl.col(s.HUMAN_REQUESTS).sum(),
            pl.col(s.UNIQUE_URLS).sum().alias("unique_urls"),
            pl.len().alias("nesting_patterns"),
            pl.col("repeats").max().alias("max_repeats"),
            (pl.col("depth") - 1).max().alias("max_depth"),
            pl.col(_shape.HOST_BOT_REQUESTS).first(),
            pl.col("root").unique().sort().alias("roots"),
            # the requests to its deep nestings, the segment `relative_loop_min_repeats` times
            # or more in their path, and people's part of them
            pl.col(s.REQUESTS).filter(deep).sum().alias("_deep_requests"),
            pl.col(s.HUMAN_REQUESTS).filter(deep).sum().alias("_deep_human"),
        )
        .filter(
            (pl.col("max_repeats") >= settings.relative_loop_min_repeats)
            & (pl.col("unique_urls") >= settings.relative_loop_min_urls)
            & (pl.col(s.WASTED_REQUESTS) > 0)
            # a loop's deep copies are crawlers' URLs: people follow a broken relative link a
            # level or two. A docs site's module `api` with a function `api`
            # (`/docs/v3/api/reference/modules/api/functions/api/`) is pages people read half
            # the time (a scenario review: 21 sitemap pages called a loop)
            & (pl.col("_deep_human") <= _LOOP_MAX_HUMAN_SHARE * pl.col("_deep_requests"))
        )
        .drop("_deep_requests", "_deep_human")
    )
    return rows, members


def loop_patterns(traffic: Traffic, settings: Settings) -> pl.DataFrame:
    """(host, pattern) of every pattern in a loop this detector reports: one per depth."""
    rows, members = _loops(traffic, settings)
    if rows.height == 0:
        return pl.DataFrame(schema={s.HOST: pl.String, s.PATTERN: pl.String})
    return members.join(rows.select(_LOOP_KEYS), on=_LOOP_KEYS, how="semi").select(_shape.KEYS)


def detect(traffic: Traffic, settings: Settings) -> pl.DataFrame:
    """Relative-link loops: the same path segment nested again and again, or the same
    parameter appended again and again.

    >>> from logtrap.traffic import Tally
    >>> detect(Tally().finish(), Settings()).shape
    (0, 9)
    """
    return pl.concat([_path_loops(traffic, settings), _appended(traffic, settings)])


def _appended(traffic: Traffic, settings: Settings) -> pl.DataFrame:
    """Patterns whose URLs append a parameter again and again (see the module docstring)."""
    # one row per URL (the sample keeps one per URL and answer)
    urls = _shape.per_url(traffic.urls).filter(doubled(pl.col(s.URL)))
    if urls.height == 0:
        return f.empty_findings()
    urls = urls.with_row_index("_id")
    pairs = (
        urls.select("_id", _pairs(pl.col(s.URL)).alias("_pair"))
        .explode("_pair")
        .with_columns(pl.col("_pair").str.splitn("=", 2).struct.field("field_0").alias("_name"))
    )
    names = (  # each URL's names whose pair it holds twice, and the most times one name is in it
        pairs.group_by("_id", "_pair").agg(pl.len(), pl.col("_name").first())
        .filter(pl.col("len") > 1)
        .group_by("_id").agg(pl.col("_name").alias("_names"))
        .join(pairs.group_by("_id", "_name").len().group_by("_id").agg(pl.col("len").max().alias("_most")),
              on="_id")
    )
    rows = (
        urls.join(names, on="_id")
        .group_by(_shape.KEYS)
        .agg(
            pl.len().alias("doubled_urls"),
            pl.col("_most").max().alias("max_repeats"),
            pl.col(s.REQUESTS).sum().alias("_doubled_requests"),
            (pl.col(s.REQUESTS) - pl.col(s.BOT_REQUESTS)).sum().alias("human_requests_doubled"),
            pl.col("_names").list.explode().unique().sort().alias("repeated_params"),
            (_shape.query_of(pl.col(s.URL)).str.count_matches("&") + 1).max().alias("max_params"),
        )
        .filter(
            (pl.col("doubled_urls") >= settings.relative_loop_min_urls)
            # appended on: a name three times somewhere, not a form's one field sent twice
            # on every URL (`view=grid&view=grid`, each a page of its own)
            & (pl.col("max_repeats") >= 3)
            & (pl.col("human_requests_doubled")
               <= _APPEND_MAX_HUMAN_SHARE * pl.col("_doubled_requests"))
        )
    )
    rows = (
        rows.join(_twice(_shape.per_url(traffic.urls), rows), on=_shape.KEYS)
        # appended to pages that carry it once: not a form's field sent twice on every URL
        # (a toggle appending it a third time there is no loop of the pages: review 17c).
        # One such page is enough: a deep crawl's copies outnumber them (review 17d)
        .filter(pl.col("_once_urls") >= 1)
        .join(_shape.pattern_totals(traffic), on=_shape.KEYS)
        .with_columns(_shape.scale("_sampled_wasted").alias(s.WASTED_REQUESTS))
        .filter(pl.col(s.WASTED_REQUESTS) > 0)
    )
    rows = rows.join(_shape.examples(urls), on=_shape.KEYS, how="left")
    return _shape.findings(
        KIND,
        rows,
        settings,
        evidence=["repeated_params", "doubled_urls", "max_repeats", "max_params",
                  "human_requests_doubled", "unique_urls"],
        advice=APPEND_ADVICE,
    )


def _twice(urls: pl.DataFrame, rows: pl.DataFrame) -> pl.DataFrame:
    """Per host+pattern of `rows`, the bot requests to its sampled URLs that carry one of its
    `repeated_params` twice, with one value twice or two (`_sampled_wasted`): the appended
    copies, as the rule blocks them (a copy's pairs repeat only once the switcher has come
    round to a value again); and its sampled URLs that carry one of them once (`_once_urls`):
    the pages the links append to."""
    mine = rows.select(*_shape.KEYS, pl.col("repeated_params").alias("_name")).explode("_name")
    urls = urls.join(rows.select(_shape.KEYS), on=_shape.KEYS, how="semi").with_row_index("_id")
    times = (
        urls.select("_id", *_shape.KEYS, _pairs(pl.col(s.URL)).alias("_name")).explode("_name")
        .with_columns(pl.col("_name").str.splitn("=", 2).struct.field("field_0").alias("_name"))
        .join(mine, on=[*_shape.KEYS, "_name"])
        .group_by("_id", "_name").len()
        .group_by("_id").agg(pl.col("len").max())
    )
    marked = urls.join(times, on="_id", how="left").with_columns(pl.col("len").fill_null(0))
    return marked.group_by(_shape.KEYS).agg(
        pl.col(s.BOT_REQUESTS).filter(pl.col("len") >= 2).sum().alias("_sampled_wasted"),
        (pl.col("len") == 1).sum().alias("_once_urls"),
    )


def _path_loops(traffic: Traffic, settings: Settings) -> pl.DataFrame:
    """Loops of a path segment nested again and again."""
    rows, members = _loops(traffic, settings)
    if rows.height == 0:
        return f.empty_findings()
    totals = _shape.pattern_totals(traffic)
    site_depth = (
        totals.join(members.select(_shape.KEYS), on=_shape.KEYS, how="anti")
        .filter(pl.col(s.HUMAN_REQUESTS) > 0)
        .group_by(s.HOST)
        .agg(
            (_shape.path_of(pl.col(s.PATTERN)).str.count_matches("/").max()).alias("site_depth")
        )
    )
    loop_keys = _LOOP_KEYS
    rows = (
        rows.join(site_depth, on=s.HOST, how="left")
        .with_columns(
            pl.concat_str(
                pl.when(pl.col("roots").list.len() == 1).then(pl.col("roots").list.first()).otherwise(pl.lit("/{any}")),
                pl.lit("/"), pl.col("seg"), pl.lit("/"), pl.col("seg"), pl.lit("/" + _LOOP),
            ).alias(s.PATTERN),
            pl.col("roots").list.head(5).list.eval(pl.element().replace("", "/")),
            pl.col("seg").alias("repeated_segment"),
        )
    )
    urls = _shape.per_url(traffic.urls).join(members.select(*_shape.KEYS, "seg"), on=_shape.KEYS)
    ex = _shape.examples(urls, keys=loop_keys)
    rows = rows.join(ex, on=loop_keys, how="left")
    return _shape.findings(
        KIND,
        rows,
        settings,
        evidence=[
            "repeated_segment", "roots", "max_repeats", "max_depth", "site_depth", "nesting_patterns",
            "unique_urls", s.HUMAN_REQUESTS,
        ],  # fmt: skip
        advice=ADVICE,
    )

"""What the URL-shape detectors share: per-pattern totals, the URL sample, examples, severity.

The URL sample (`Traffic.urls`) holds up to `url_sample_size` distinct URLs per host+pattern,
with exact counts per URL. A share measured on the sample is scaled to the whole pattern by
the pattern's exact totals (`scale`), so wasted requests stay right when the sample is partial.
Response sizes are evidence only where they are not the site's shell (`shell_sizes`,
`per_url(urls, shell)`, `sized_ok`).
"""

from __future__ import annotations

import weakref
from collections.abc import Callable, Sequence

import polars as pl

from logtrap import findings as f
from logtrap import schema as s
from logtrap.patterns import VALUE
from logtrap.settings import Settings
from logtrap.traffic import Traffic

KEYS = [s.HOST, s.PATTERN]
HOST_BOT_REQUESTS = "host_bot_requests"
SAMPLED_BOT_REQUESTS = "sampled_bot_requests"

PLACEHOLDER = r"\{[a-z]+\}"


def memo(
    frames: Sequence[pl.DataFrame], key: tuple[object, ...], compute: Callable[[], pl.DataFrame]
) -> pl.DataFrame:
    """`compute()`, once per `key` and set of `frames` (tables of a Traffic) it is made from:
    the detectors ask for the same derived tables again and again (per_url nine times a run:
    2.0 of 7.3 s on a log with 417,000 patterns). The answer is dropped with the first of
    the frames to go, so a frame that gets the same id later never sees it."""
    full = (*key, *map(id, frames))
    if full not in _MEMO:
        _MEMO[full] = compute()
        for frame in frames:
            weakref.finalize(frame, _MEMO.pop, full, None)
    return _MEMO[full]


_MEMO: dict[tuple[object, ...], pl.DataFrame] = {}


def pattern_totals(traffic: Traffic) -> pl.DataFrame:
    """One row per host+pattern: requests, bot/human requests, unique URLs, host bot requests,
    and the bot requests the URL sample covers (for scaling)."""
    return memo((traffic.patterns, traffic.urls), ("totals",), lambda: _totals(traffic))


def _totals(traffic: Traffic) -> pl.DataFrame:
    patterns = traffic.patterns.group_by(KEYS).agg(
        pl.col(s.REQUESTS, s.BOT_REQUESTS, s.HUMAN_REQUESTS).sum(),
        pl.col(s.UNIQUE_URLS).max(),
    )
    hosts = patterns.group_by(s.HOST).agg(pl.col(s.BOT_REQUESTS).sum().alias(HOST_BOT_REQUESTS))
    sampled = traffic.urls.group_by(KEYS).agg(
        pl.col(s.BOT_REQUESTS).sum().alias(SAMPLED_BOT_REQUESTS)
    )
    return (
        patterns.join(hosts, on=s.HOST, how="left")
        .join(sampled, on=KEYS, how="left")
        .with_columns(pl.col(SAMPLED_BOT_REQUESTS).fill_null(0))
    )


# Of a pattern's bot requests, monitors' (uptime checks, feed readers: `bots` kind
# "monitoring") at least this share: the site's own checks, not a crawl (judgement)
_MONITORED_SHARE = 0.9
# ...of monitors that fetch at most this many patterns of a host (judgement: an uptime check
# polls `/`, `/health`, a status page)
_MONITOR_PATTERNS = 3


def monitored(traffic: Traffic) -> pl.DataFrame:
    """(HOST, PATTERN) of the patterns nearly all of whose bot requests are monitors': an
    uptime check's cache-buster (`/?cb=<epoch>` every minute) grows a URL a poll, and no
    robots.txt line or link fix stops it; it is the admin's own. Computed once per agents
    table."""
    def compute() -> pl.DataFrame:
        bots = traffic.agents.filter(pl.col(s.BOT_NAME).is_not_null())
        # a check polls a URL or three; a site-audit crawler filed as monitoring
        # (Siteimprove, Monsido, a link checker) follows every link: a crawl like any
        polls = (pl.col(s.BOT_KIND) == "monitoring") & (
            pl.col(s.PATTERN).n_unique().over(s.HOST, s.BOT_NAME) <= _MONITOR_PATTERNS)
        return (
            bots.with_columns(polls.alias("_poll"))
            .group_by(KEYS)
            .agg((pl.col(s.REQUESTS).filter("_poll").sum()
                  >= _MONITORED_SHARE * pl.col(s.REQUESTS).sum()).alias("_monitored"))
            .filter("_monitored")
            .select(KEYS)
        )
    return memo((traffic.agents,), ("monitored",), compute)


SHELL = "shell"  # per_url with `shell`: answered 200 with the host's shell size


def per_url(urls: pl.DataFrame, shell: pl.DataFrame | None = None) -> pl.DataFrame:
    """The URL sample with one row per URL: summed counts, the most frequent status and size
    (between answers as frequent, the lowest status, then size: the same one every run).

    With `shell` (`shell_sizes`), a URL answered 200 with its host's shell size has no size
    (BYTES null: it says nothing about the page) and SHELL true.
    """
    out = memo((urls,), ("per_url",), lambda: _per_url(urls))
    if shell is None:
        return out
    marked = out.join(
        shell.with_columns(pl.lit(True).alias(SHELL)), on=[s.HOST, s.BYTES], how="left",
        maintain_order="left",
    ).with_columns((pl.col(SHELL).fill_null(False) & (pl.col(s.STATUS) == 200)).alias(SHELL))
    return marked.with_columns(
        pl.when(pl.col(SHELL)).then(None).otherwise(pl.col(s.BYTES)).alias(s.BYTES)
    )


def _per_url(urls: pl.DataFrame) -> pl.DataFrame:
    return (
        urls.sort([s.REQUESTS, s.STATUS, s.BYTES], descending=[True, False, False],
                  nulls_last=True, maintain_order=True)
        .group_by(*KEYS, s.URL, maintain_order=True)
        .agg(
            pl.col(s.STATUS).first(),
            pl.col(s.BYTES).first(),
            pl.col(s.REQUESTS).sum(),
            pl.col(s.BOT_REQUESTS).sum(),
        )
        .with_columns((pl.col(s.REQUESTS) - pl.col(s.BOT_REQUESTS)).alias(s.HUMAN_REQUESTS))
    )


ANSWER = "answer"  # with_answers: which page a URL answered 200 with a size got


def less_echo(urls: pl.DataFrame) -> pl.DataFrame:
    """Each row (with URL and BYTES) four times, with "_m" (0 to 3) and "_d", its size less
    the URL's length `_m` times: a page that echoes the URL asked for once, twice or three
    times (title, heading, search box) is one size again once that is taken off.

    >>> less_echo(pl.DataFrame({"url": ["/t/ab"], "bytes": [505]}))["_d"].to_list()
    [505, 500, 495, 490]
    """
    return urls.join(pl.DataFrame({"_m": [0, 1, 2, 3]}), how="cross").with_columns(
        (pl.col(s.BYTES) - pl.col("_m") * pl.col(s.URL).str.len_bytes()).alias("_d")
    )


def _sized_values(urls: pl.DataFrame, keys: Sequence[str]) -> pl.DataFrame:
    """The rows of `urls` answered 200 with a size (`sized_ok`), on integers only: "_row"
    (their position in `urls`) and, per row and m (`less_echo`), "_g" (one number per keys
    and m) and "_d" (the size less the URL's length m times). String keys joined on millions
    of rows took most of the time (400,000 patterns: 13 s)."""
    group = pl.struct(*keys).hash(0).rank("dense").cast(pl.Int64)
    return (
        urls.with_row_index("_row")
        .filter(sized_ok())
        .select("_row", (group * 4).alias("_g"), s.URL, s.BYTES)
        .pipe(less_echo)
        .select("_row", pl.col("_g") + pl.col("_m"), "_m", "_d")
    )


def _value_counts(values: pl.DataFrame, reach: int) -> pl.DataFrame:
    """Per "_g" and value "_d" of `_sized_values`: its URLs "_c", in one sorted line "_x"
    where each group has a stretch of its own, `reach` apart from the next (so a window of up
    to `reach` never crosses groups), and the running total "_cum" along it."""
    counts = values.group_by("_g", "_d").agg(pl.len().cast(pl.Int64).alias("_c"))
    if counts.height == 0:
        return counts.with_columns(
            pl.lit(0, pl.Int64).alias("_x"), pl.lit(0, pl.Int64).alias("_cum")
        )
    low, high = counts.select(pl.col("_d").min().alias("lo"), pl.col("_d").max().alias("hi")).row(0)
    stride = high - low + 2 * reach + 2
    return (
        counts.with_columns((pl.col("_g") * stride + pl.col("_d") - low).alias("_x"))
        .sort("_x")
        .with_columns(pl.col("_c").cum_sum().alias("_cum"))
    )


def _within(counts: pl.DataFrame, span: int) -> pl.Series:
    """Per row of `_value_counts`: the URLs whose value lies within `span` of the row's (both
    ends included), from the running totals at x + span and x - span - 1."""
    x, cum = counts["_x"], pl.concat([pl.Series([0], dtype=pl.Int64), counts["_cum"]])
    hi = x.search_sorted(x + span, side="right")
    lo = x.search_sorted(x - span - 1, side="right")
    return cum.gather(hi) - cum.gather(lo)


def _stands_out(seen: pl.Expr, chance: pl.Expr, contrast: float) -> pl.Expr:
    """Two URLs or more, `contrast` times what chance puts there and beyond its noise: a
    catalog whose sizes are sparse still puts two products on a size now and then.

    >>> seen, chance = pl.Series([2, 2, 6]), pl.Series([0.0, 0.6, 0.6])  # 0.6: five or more
    >>> pl.select(_stands_out(pl.lit(seen), pl.lit(chance), 3.0)).to_series().to_list()
    [True, False, True]
    """
    return (seen >= 2) & (seen >= contrast * chance + 3 * chance.sqrt() + 1)


def with_answers(
    urls: pl.DataFrame, settings: Settings, keys: Sequence[str] = KEYS
) -> pl.DataFrame:
    """`per_url` rows with ANSWER, for counting the distinct pages behind a set of URLs
    (`keys`): URLs that got one page share an answer, every other URL is a page of its own.

    A page answered many times shows as sizes that stand out from the sizes around them, by
    `one_page_contrast` times their density and beyond chance (`_stands_out`),
    `one_page_bytes` being the reach of one page:
    - a cluster within that reach against the sizes up to `one_page_flank_bytes` around it:
      one page does not always keep one size, as a CSRF token or a nonce in it, or the date,
      compressed with the rest, spreads it over a dozen bytes;
    - else one exact size held by two URLs or more (an empty calendar month answered a
      thousand times, or two products' pages answered twice) against the sizes within reach,
      where pages of a few sizes close together hide each other's clusters.
    A catalog whose pages spread over hundreds of bytes has as many URLs beside any size or
    window, and its pages are pages apiece, even where two share a size by chance. Sizes are
    taken less the URL's length 0 to 3 times (`less_echo`: a page that echoes the value asked
    for), whichever leaves the fewest pages. ANSWER is null where the URL has no size
    (`sized_ok`). Pages of one template that differ by a few dozen bytes (member profiles)
    can look like one page here, as they would to a crawler.

    >>> sizes = [4213, 4215, 4220, 4226] * 5 + list(range(6000, 6400, 20))  # a page, jittered
    >>> urls = pl.DataFrame({"host": "-", "pattern": "/p/{n}", "status": 200, "bytes": sizes,
    ...                      "url": [f"/p/{i}" for i in range(len(sizes))]})
    >>> with_answers(urls, Settings()).select(pl.col("answer").n_unique()).item()  # 1 + 20
    21
    """
    w, flank = settings.one_page_bytes, settings.one_page_flank_bytes
    contrast = settings.one_page_contrast
    values = _sized_values(urls, list(keys))
    counts = _value_counts(values, flank)
    counts = counts.with_columns(
        _within(counts, w).alias("_near"), _within(counts, flank).alias("_around")
    )
    # what chance would put on a size, and in a window, at the density around them
    one_size = (pl.col("_near") - pl.col("_c")) / (2 * w)
    one_window = (pl.col("_around") - pl.col("_near")) * (2 * w + 1) / (2 * (flank - w))
    spike = _stands_out(pl.col("_c"), one_size, contrast)
    dense = _stands_out(pl.col("_near"), one_window, contrast)
    # centres closer than the reach of one page are one cluster (groups are further apart)
    centres = counts.filter(dense).select(
        "_x", ((pl.col("_x").diff().fill_null(w + 1) > w).cum_sum()).alias("_page")
    )
    # each value to the nearest centre within reach, if any
    x, cx, pages = counts["_x"], centres["_x"], centres["_page"].cast(pl.Int64)
    page = pl.repeat(-1, len(x), dtype=pl.Int64, eager=True)
    if len(cx):
        last = len(cx) - 1
        right = cx.search_sorted(x).cast(pl.Int64).clip(0, last)
        left = (right - 1).clip(0, last)
        nearer_left = (cx.gather(left) - x).abs() <= (cx.gather(right) - x).abs()
        nearest = pl.select(pl.when(nearer_left).then(left).otherwise(right)).to_series()
        within = (cx.gather(nearest) - x).abs() <= w
        page = pl.select(pl.when(within).then(pages.gather(nearest)).otherwise(-1)).to_series()
    # a page: its cluster, else its exact size if that stands out, else the URL itself (-1 - row)
    answer = (
        pl.when(pl.col("_page") >= 0).then(pl.col("_page") * 2)
        .when(spike).then(pl.col("_x") * 2 + 1)
    )
    placed = values.join(
        counts.with_columns(pl.Series("_page", page)).select("_g", "_d", answer.alias("_a")),
        on=["_g", "_d"], how="left",
    ).with_columns(pl.coalesce("_a", -1 - pl.col("_row").cast(pl.Int64)).alias("_a"))
    # per keys, the m that leaves the fewest pages
    best = (
        placed.group_by("_g", "_m")
        .agg(pl.col("_a").n_unique().alias("_n"))
        .with_columns((pl.col("_g") - pl.col("_m")).alias("_keys"))
        .sort("_n", "_m")
        .group_by("_keys", maintain_order=True)
        .agg(pl.col("_g").first())
    )
    answers = placed.join(best.select("_g"), on="_g").select(
        "_row",
        pl.when(pl.col("_a") >= 0)
        .then(pl.format("\x00{}", pl.col("_a")))
        .otherwise(None)
        .alias(ANSWER),
    )
    out = urls.with_row_index("_row").join(answers, on="_row", how="left", maintain_order="left")
    # a URL that is a page of its own: its URL
    own = sized_ok() & pl.col(ANSWER).is_null()
    return out.with_columns(
        pl.when(own).then(pl.col(s.URL)).otherwise(pl.col(ANSWER)).alias(ANSWER)
    ).drop("_row")


def one_page(
    urls: pl.DataFrame, settings: Settings, keys: Sequence[str] = KEYS
) -> pl.DataFrame:
    """The URLs (keys, url, bytes) of each keys' one page: those answered 200 with a size
    within `one_page_bytes` of the value that gathers most of them, for the m (`less_echo`)
    that gathers most. Not chained as `with_answers`' clusters are: one page for any value
    keeps its sizes in one window, while pages of one template spread over a few dozen bytes
    fill none.

    >>> urls = pl.DataFrame({"host": "-", "pattern": "/t/{slug}", "status": 200,
    ...     "bytes": [7180, 7181, 7183, 7183, 9000],
    ...     "url": ["/t/a", "/t/b", "/t/c", "/t/d", "/t/e"]})
    >>> sorted(one_page(urls, Settings())["url"])
    ['/t/a', '/t/b', '/t/c', '/t/d']
    """
    w = settings.one_page_bytes
    values = _sized_values(urls, list(keys))
    counts = _value_counts(values, w)
    best = (  # per keys (`_g` less its m), the fullest window of any m
        counts.with_columns(
            _within(counts, w).alias("_near"), (pl.col("_g") - pl.col("_g") % 4).alias("_keys")
        )
        .sort("_near", "_g", "_d", descending=[True, False, False])
        .group_by("_keys", maintain_order=True)
        .agg(pl.col("_g", "_d").first())
    )
    inside = (
        values.join(best.select("_g", pl.col("_d").alias("_centre")), on="_g")
        .filter((pl.col("_d") - pl.col("_centre")).abs() <= w)
        .select("_row")
    )
    rows = urls.with_row_index("_row").join(inside, on="_row", how="semi")
    return rows.select(*keys, s.URL, s.BYTES)


def sized_ok() -> pl.Expr:
    """Answered 200 with a size that can be evidence (not the shell's, not unlogged)."""
    return (pl.col(s.STATUS) == 200) & pl.col(s.BYTES).is_not_null()


def shell_sizes(traffic: Traffic, settings: Settings) -> pl.DataFrame:
    """Per host, the response sizes (BYTES) that say nothing about a page: sizes answered 200
    to people on at least `shell_min_patterns` patterns of pages (not static files), one of
    them at least without a query.

    A single-page app answers every route with the same `index.html`, so its home page,
    products, categories and articles all have one size, at `/` or under `/app/`, its state
    in the path or in the query, and people open its mount (`/`, `/app/`) too; on a classic
    site distinct pages practically never share an exact size. A listing's "no results" page
    answers filter combinations only (`/homes/austin-tx?beds&sort`, `/homes/denver-co?baths`:
    patterns apiece, each with a query or filters in the path, `/shoes/color-{value}/`), the
    very signature of a facet trap, not a shell.
    Where in doubt, a shell: taken for one, a trap's empty page hides the trap (a few empty
    categories people open beside the filters do); missed, it calls an app's pages traps.
    Repeated sizes are a trap's signature only where they are not the site's shell: every
    detector that reads sizes takes its URLs from `per_url(urls, shell_sizes(...))`. Computed
    once per URL sample and setting, however many detectors ask (the answer is dropped with
    the sample).
    """
    ok = (
        (pl.col(s.STATUS) == 200)
        & pl.col(s.BYTES).is_not_null()
        & (pl.col(s.HUMAN_REQUESTS) > 0)
        & ~is_static(pl.col(s.PATTERN))
    )
    # filters in the path (`/shoes/color-{value}/size-{value}/`) are a query's too
    plain = ~pl.col(s.PATTERN).str.contains("?", literal=True) & ~pl.col(s.PATTERN).str.contains(
        VALUE, literal=True
    )
    return memo(
        (traffic.urls,),
        ("shell", settings.shell_min_patterns),
        lambda: per_url(traffic.urls)
        .filter(ok)
        .group_by(s.HOST, s.BYTES)
        .agg(pl.col(s.PATTERN).n_unique().alias("_patterns"), plain.any().alias("_plain"))
        .filter(pl.col("_patterns") >= settings.shell_min_patterns, pl.col("_plain"))
        .select(s.HOST, s.BYTES),
    )


def scale(sampled: str) -> pl.Expr:
    """Bot requests counted on the sample, scaled to the pattern's exact bot requests."""
    exact = pl.col(SAMPLED_BOT_REQUESTS) >= pl.col(s.BOT_REQUESTS)
    ratio = pl.col(s.BOT_REQUESTS) / pl.col(SAMPLED_BOT_REQUESTS).clip(lower_bound=1)
    return (
        pl.when(exact)
        .then(pl.col(sampled))
        .otherwise((pl.col(sampled) * ratio).round(0))
        .cast(pl.Int64)
    )


def examples(urls: pl.DataFrame, keys: Sequence[str] = KEYS) -> pl.DataFrame:
    """Up to 5 real URLs per group, those bots fetched most first."""
    return (
        urls.sort(s.BOT_REQUESTS, s.URL, descending=[True, False])
        .group_by(list(keys), maintain_order=True)
        .agg(pl.col(s.URL).unique(maintain_order=True).head(f.MAX_EXAMPLES).alias(s.EXAMPLES))
    )


def severity(settings: Settings, wasted: str = s.WASTED_REQUESTS) -> pl.Expr:
    """critical / warning / info by the wasted share (`wasted`: the column of wasted
    requests it is judged by) of the host's bot requests."""
    share = pl.col(wasted) / pl.col(HOST_BOT_REQUESTS).clip(lower_bound=1)
    return (
        pl.when(share >= settings.trap_critical_share)
        .then(pl.lit("critical"))
        .when(share >= settings.trap_warning_share)
        .then(pl.lit("warning"))
        .otherwise(pl.lit("info"))
    )


def findings(
    kind: str,
    rows: pl.DataFrame,
    settings: Settings,
    *,
    evidence: Sequence[str],
    advice: str | pl.Expr,
    severity_by: str = s.WASTED_REQUESTS,
) -> pl.DataFrame:
    """FINDING_SCHEMA rows from per-pattern rows with REQUESTS, WASTED_REQUESTS, EXAMPLES and
    HOST_BOT_REQUESTS; the wasted share of the host's bot requests is added to the evidence.
    `advice` is one text, or an expression over the rows for advice that depends on them.
    `severity_by`: the column of wasted requests the severity is judged by (one trap split
    over several patterns: their sum)."""
    if rows.height == 0:
        return f.empty_findings()
    rows = rows.with_columns(
        pl.col(s.EXAMPLES).fill_null([]),
        (pl.col(s.WASTED_REQUESTS) / pl.col(HOST_BOT_REQUESTS).clip(lower_bound=1))
        .round(4)
        .alias("wasted_share_of_host_bot_requests"),
    ).sort(KEYS)
    return f.finding_rows(
        kind,
        rows,
        severity=severity(settings, severity_by),
        evidence=[*evidence, "wasted_share_of_host_bot_requests"],
        advice=advice,
    )


def path_of(pattern: pl.Expr) -> pl.Expr:
    """The path part of a pattern or URL (before "?")."""
    return pattern.str.splitn("?", 2).struct.field("field_0")


def query_of(url: pl.Expr) -> pl.Expr:
    """The query part of a URL (after the first "?"), "" when there is none."""
    return url.str.splitn("?", 2).struct.field("field_1").fill_null("")


# Static files: pages load them in bursts and they carry no crawl budget worth a verdict.
_STATIC = r"(?i)\.(?:png|jpe?g|gif|webp|avif|svg|ico|css|js|mjs|map|woff2?|ttf|otf|eot|mp4|webm|mp3|pdf)$"


def is_static(url_or_pattern: pl.Expr) -> pl.Expr:
    """True where the path (query left out) names a static file.

    >>> pl.select(is_static(pl.lit("/static/app.css?__WB_REVISION__"))).item()
    True
    """
    return path_of(url_or_pattern).str.contains(_STATIC)

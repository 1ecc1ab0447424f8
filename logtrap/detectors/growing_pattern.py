"""growing_pattern: a URL space that keeps growing window after window, never converging.

Healthy crawls converge: a site's real pages are all found in the first windows, and later
windows re-fetch them (few or no new URLs). An unbounded URL space keeps minting new URLs.

Per host+pattern, over the log's windows (`traffic.window_size`: a day, or an hour when the
logs span less than two days), with W = `growing_pattern_windows` (3):

1. the logs span at least `growing_pattern_min_windows` windows and 2W, so that the first and
   the last W windows do not overlap (2W + 1 at host level, whose first window is discovery);
2. the pattern got new distinct URLs in *each* of the last W windows;
3. no convergence: new URLs per window over the last W windows are at least
   `growing_pattern_min_ratio` (0.5) times those over the first W windows;
4. at least `growing_pattern_min_new_urls` new URLs over the last W windows (a blog publishing a
   post a day is not a trap);
5. novelty: at least `growing_pattern_min_novelty` of the pattern's requests in the last W
   windows went to URLs never seen before. A real site whose content is fetched again and again
   has low novelty even while it publishes; a trap's crawlers fetch each URL about once;
6. no new content: the pattern's sampled URLs answered 200 share their response sizes, at
   least `growing_pattern_min_urls_per_size` URLs per distinct size, or none answered 200 or
   304 (redirects and errors are not content, while a 304 Not Modified answers a crawler
   revalidating a page it fetched before, unchanged: content). A large catalog crawled for
   the first time grows like a trap, window after window, but each of its pages has a size of
   its own (DESIGN: "URLs growing without new content" is the signal, not the count of URLs):
   distinct sizes count pages (`_shape.with_answers`: one page's sizes may spread over a few
   bytes, while two products sharing a size by chance are two pages). Search result
   pages differ in size too: `internal_search` names them. URLs answered with the size of the
   site's shell (`_shape.shell_sizes`: a single-page app answers every route with one page),
   or with no size logged, are no evidence either way, and a pattern with only those stays
   silent.

At host level (pattern = null) the same rule applies to the number of distinct patterns: new
patterns first seen in each of the last W windows, at least `growing_pattern_min_new_patterns`
of them, and not slowing down compared with the W windows *after the first* (the first window is
discovery: every real pattern is new in it). Only patterns mostly answered 2xx count: scanners
probe new paths every day on every site, and those answer 404 (a relative-link loop answers 200
and mints a deeper pattern per visit). Static files (`_shape.is_static`) do not count: a
single-page app's deploy renames its bundles every day (`/static/js/main.8483e2c9.js`, a
pattern each), which crawlers fetch to render the pages, and a trap's pages are no static files
(a loop nesting its stylesheets deeper nests its pages too). The patterns of a loop
`relative_loop` reports are its finding and are not counted again here. The new patterns' pages must repeat their sizes, as in
rule 6: a catalog whose products are each a pattern of their own (two-word handles such as
`/products/blue-shirt`) shows new patterns every day while it is first crawled, each page its
own size; a relative-link loop serves the same page at every depth.

Windows the logs cover for less than `growing_pattern_min_coverage` of their length (the first
and last day of a rotated set usually) are left out: their counts are not comparable.

Wasted requests (pattern level): the bot requests that fetched nothing new, counted on the URL
sample and scaled to the pattern: to URLs sharing their size with another URL of the pattern,
beyond one (the page), and to redirects and errors. Real pages among a trap's URLs (list pages
2-5 beside the empty pages past the last one) have sizes of their own and are not counted.
A pattern no bot wasted a request on (people arriving with ad click ids) gives no finding;
nor does a `{tracking}` pattern whose sampled URLs are at least `_TRACKED_COPIES` per page they
copy (the URL without its tracking parameters): pages growing by campaign and click ids alone,
which link previewers and ad checks fetch as people share them, are the pages again (the fix is
rel=canonical, which a log cannot check, and a Disallow on `gclid` fails Google Ads' landing
page checks).
Severity: a warning, whatever its share of the crawl (one trap split over many patterns is a
sliver in each); info where 90% of its requests were answered 404 or 410 (deleted topics: the
site already does what the advice asks), or 301 or 308 on a host whose pages are answered so
as often (a retired host's old URLs, found bit by bit: crawlers follow them to the new ones;
on a live host, a template appending `?ts=<time>` to links the site redirects back is a trap),
or where people made half of its requests or more (a live page's polling API `?since=<time>`,
which crawlers fetch while rendering the page: a part of the site that works, and blocking it
would break their rendering), or where the pattern's parameters do not change the page and
people follow its links: more than `_COPY_SHARE` of its URLs answered 200 answer with the size
of the URL without its query (a page of the log), no session name among its parameters, people
at least `_COPY_PEOPLE_SHARE` of its requests (`?via=dan305`, a referral link people share:
the advice is rel=canonical, not a Disallow; crawlers alone minting such values, a parameter
appended per visit, stay a warning, as do session ids, which session_id names); never
critical, as the growth is a sign that a trap's own kind names.
"""

from __future__ import annotations

import polars as pl

from logtrap import findings as f
from logtrap import schema as s
from logtrap.detectors import _shape, relative_loop
from logtrap.patterns import TRACKING, is_tracking, session_params
from logtrap.settings import Settings
from logtrap.traffic import Traffic

KIND = "growing_pattern"

ADVICE = (
    "New URLs of this pattern keep appearing window after window: the URL space is unbounded. "
    "Find the links that generate them (next-month links, parameters appended per visit, "
    "relative links), stop generating them at the source, answer 404/410 for values that "
    "carry no content, and disallow the pattern in robots.txt."
)

HOST_ADVICE = (
    "The number of distinct URL patterns keeps growing: crawlers keep finding new URL shapes "
    "(often relative links nesting deeper on every visit). Make the links root-relative and "
    "answer 404 for paths that do not exist."
)

# ...where most of the new patterns are new sets of query parameters on paths already seen
# (a shop's layered navigation: filters, sorts and views combined on every category)
FILTERS_ADVICE = (
    "The number of distinct URL patterns keeps growing: crawlers keep finding new "
    "combinations of query parameters (filters, sorts and views combined on listings), each "
    "too thin to judge alone. Link filter combinations with rel=nofollow, keep one canonical "
    "parameter order (and rel=canonical to the unfiltered page), and stop generating links "
    "for combinations beyond one or two filters; then Disallow the multi-parameter URLs in "
    "robots.txt."
)

COPY_ADVICE = (
    "These URLs are pages of the site under a parameter that does not change them (a "
    "referral or campaign link people share; link previewers and crawlers follow it from "
    "outside): point rel=canonical at the URL without the parameter, or redirect to it. If "
    "the site's own links add the parameter, stop adding it. Do not disallow the pattern: a "
    "crawler that cannot fetch these URLs never sees their canonical."
)

_KEYS = [s.HOST, s.PATTERN]
# A `{tracking}` pattern whose sampled URLs are at least this many per page they copy (the URL
# without its tracking parameters) grows by campaign and click ids alone (judgement: a calendar
# whose links carry a utm name has about one URL per date)
_TRACKED_COPIES = 2.0
# A parameter that does not change the page: more than this share of the pattern's URLs
# answered 200 answer with the size of the URL without its query (judgement: "most")
_COPY_SHARE = 0.5
# ...and people make at least this share of its requests: they reach it by shared links (the
# session_id detector calls an unnamed parameter a session id where they make at most this)
_COPY_PEOPLE_SHARE = 0.1
# A pattern this share of whose requests answer 404 or 410 is gone (or 301 or 308, moved), a
# growth with no fix to ask for (judgement: a few may have answered before the pages went)
_GONE_SHARE = 0.9
# A pattern people make this share of the requests to is the site's own working part (a live
# page's polling API, fetched by crawlers rendering the page): a growth worth a look, not an
# alert (judgement: a trap is crawlers' traffic; where people mint its URLs too, session ids
# or searches, their own kind names it)
_PEOPLE_SHARE = 0.5
_INDEX = "window_index"
# Files a host answers for crawlers and browsers whatever its pages do
_HOUSEKEEPING = r"(?i)^/(?:robots\.txt|favicon\.ico|ads\.txt|app-ads\.txt|humans\.txt|sitemap[^/]*|\.well-known/)"


def detect(traffic: Traffic, settings: Settings) -> pl.DataFrame:
    """Patterns (and hosts' pattern sets) whose distinct URLs keep growing.

    >>> from logtrap.traffic import Tally
    >>> detect(Tally().finish(), Settings()).shape
    (0, 9)
    """
    grid = _grid(traffic, settings.growing_pattern_min_coverage)
    n = settings.growing_pattern_windows
    # The early and late windows compared must not overlap, or a slowing growth (348, 262,
    # 205, 118 new patterns a day) would be compared with itself and never look like it.
    frames = [f.empty_findings()]
    shell = _shape.shell_sizes(traffic, settings)
    if grid.height >= max(settings.growing_pattern_min_windows, 2 * n):
        # an uptime check's cache-buster grows too: the admin's own, no crawl (`monitored`)
        frames.append(_pattern_findings(traffic, grid, shell, settings).join(
            _shape.monitored(traffic), on=_KEYS, how="anti"))
    if grid.height >= max(settings.growing_pattern_min_windows, 2 * n + 1):  # + discovery
        frames.append(_host_findings(traffic, grid, shell, settings))
    return pl.concat(frames, how="vertical")


def _grid(traffic: Traffic, min_coverage: float = 0.5) -> pl.DataFrame:
    """Every window of the logs' span, numbered from 0 (windows with no traffic included),
    without the first and last windows when the logs cover less than `min_coverage` of them."""
    if traffic.start is None or traffic.end is None:
        return pl.DataFrame(schema={s.WINDOW: s.TIME_DTYPE, _INDEX: pl.Int64()})
    size = traffic.window_size
    first, last = pl.select(
        pl.lit(traffic.start, s.TIME_DTYPE).dt.truncate(size).alias("a"),
        pl.lit(traffic.end, s.TIME_DTYPE).dt.truncate(size).alias("b"),
    ).row(0)
    windows = pl.datetime_range(first, last, interval=size, eager=True, time_zone="UTC")
    length = windows.dt.offset_by(size)[0] - windows[0] if len(windows) else None
    keep = pl.Series([True] * len(windows))
    if length and len(windows) > 1:
        keep[0] = (windows[1] - traffic.start) / length >= min_coverage
        keep[-1] = (traffic.end - windows[-1]) / length >= min_coverage
    return (
        pl.DataFrame({s.WINDOW: windows.cast(s.TIME_DTYPE)})
        .filter(keep)
        .with_row_index(_INDEX)
        .with_columns(pl.col(_INDEX).cast(pl.Int64))
    )


def _series(
    frame: pl.DataFrame, keys: list[str], value: str, grid: pl.DataFrame
) -> pl.DataFrame:
    """Per key: `value` in every window of the grid (0 where absent), in window order."""
    dense = (
        frame.select(keys).unique().join(grid, how="cross")
        .join(frame.select(*keys, s.WINDOW, value), on=[*keys, s.WINDOW], how="left")
        .with_columns(pl.col(value).fill_null(0))
        .sort(*keys, _INDEX)
    )
    return dense.group_by(keys, maintain_order=True).agg(pl.col(value))


def _trend(value: str, n: int, skip: int = 0) -> list[pl.Expr]:
    """Early (after `skip` windows) and late means, the late minimum and total."""
    return [
        pl.col(value).list.slice(skip, n).list.mean().alias("early_mean"),
        pl.col(value).list.tail(n).list.mean().alias("late_mean"),
        pl.col(value).list.tail(n).list.min().alias("late_min"),
        pl.col(value).list.tail(n).list.sum().alias("late_total"),
    ]


def _not_converging(settings: Settings) -> pl.Expr:
    return (pl.col("late_min") > 0) & (
        pl.col("late_mean") >= settings.growing_pattern_min_ratio * pl.col("early_mean")
    )


def _pattern_findings(
    traffic: Traffic, grid: pl.DataFrame, shell: pl.DataFrame, settings: Settings
) -> pl.DataFrame:
    n = settings.growing_pattern_windows
    windows = traffic.windows.join(_growing_late(traffic.windows, grid, settings), on=_KEYS)
    new_urls = _series(windows, _KEYS, s.NEW_URLS, grid).rename({s.NEW_URLS: "new_urls_per_window"})
    requests = _series(windows, _KEYS, s.REQUESTS, grid).select(
        *_KEYS, pl.col(s.REQUESTS).list.tail(n).list.sum().alias("late_requests")
    )
    # pages are counted only where URLs keep coming (most patterns of a big log do not), once
    growing = _answered(traffic.urls.join(new_urls.select(_KEYS), on=_KEYS, how="semi"),
                        shell, settings)
    rows = (
        new_urls.with_columns(_trend("new_urls_per_window", n))
        .join(requests, on=_KEYS)
        .join(_sizes(growing), on=_KEYS, how="left")
        .with_columns(
            # a share: new URLs are counted by a ~3% estimate, requests exactly
            (pl.col("late_total") / pl.col("late_requests").clip(lower_bound=1))
            .clip(upper_bound=1.0)
            .alias("novelty"),
            pl.col("_answered", "sampled_ok_urls", "distinct_sizes", "shell_urls").fill_null(0),
            pl.col("urls_per_size").fill_null(0.0),
        )
        .filter(
            _not_converging(settings)
            & (pl.col("late_total") >= settings.growing_pattern_min_new_urls)
            & (pl.col("novelty") >= settings.growing_pattern_min_novelty)
            & _repeated_content(settings)
        )
    )
    if rows.height == 0:
        return f.empty_findings()
    rows = (
        rows.join(_shape.pattern_totals(traffic), on=_KEYS)
        .join(
            _sampled_wasted(growing.join(rows.select(_KEYS), on=_KEYS, how="semi")),
            on=_KEYS, how="left",
        )
        .with_columns(pl.col("sampled_wasted").fill_null(0))
        .with_columns(_shape.scale("sampled_wasted").alias(s.WASTED_REQUESTS))
        # people's URLs growing (an ad campaign's click ids) waste no crawl: no finding
        .filter(pl.col(s.WASTED_REQUESTS) > 0)
        # nor pages growing by their campaign and click ids (link previewers and ad checks
        # fetch the tagged links people share): the pattern is its pages again
        .join(_tracked_copies(traffic.urls, settings), on=_KEYS, how="anti")
        .join(_copies(growing, traffic.urls, settings), on=_KEYS, how="left")
        .with_columns(pl.col("_copies").fill_null(False))
        .join(_examples(traffic.urls, _KEYS), on=_KEYS, how="left")
        .with_columns(
            pl.col(s.EXAMPLES).fill_null([]),
            pl.lit(traffic.window_size).alias("window_size"),
            pl.col("late_total").alias("late_new_urls"),
            pl.col("early_mean").round(2).alias("early_new_urls_per_window"),
            pl.col("late_mean").round(2).alias("late_new_urls_per_window"),
            pl.col("novelty").round(4),
        )
        .sort(_KEYS)
    )
    # a warning whatever its share: one trap split over many patterns (filters in every order,
    # each its own pattern) is a sliver in each, and would go unheard. Info where nearly every
    # request was answered 404 or 410: crawlers drop those URLs, and nothing is asked of anyone
    total = pl.col(s.REQUESTS).sum().clip(lower_bound=1)
    gone = traffic.statuses.group_by(_KEYS).agg(
        (pl.col(s.REQUESTS).filter(pl.col(s.STATUS).is_in([404, 410])).sum() / total).alias("_gone"),
        (pl.col(s.REQUESTS).filter(pl.col(s.STATUS).is_in([301, 308])).sum() / total).alias("_moved"),
    )
    # over the host's pages: a retired host still answers its robots.txt, favicon and ads.txt
    pages = ~_shape.is_static(pl.col(s.PATTERN)) & ~pl.col(s.PATTERN).str.contains(_HOUSEKEEPING)
    moved_host = traffic.statuses.filter(pages).group_by(s.HOST).agg(
        (pl.col(s.REQUESTS).filter(pl.col(s.STATUS).is_in([301, 308])).sum() / total)
        .alias("_host_moved")
    )
    rows = rows.join(gone, on=_KEYS, how="left").join(moved_host, on=s.HOST, how="left")
    # a parameter that does not change the page, on links people follow: a referral link
    copies = pl.col("_copies") & (pl.col(s.HUMAN_REQUESTS) >= _COPY_PEOPLE_SHARE * pl.col(s.REQUESTS))
    return f.finding_rows(
        KIND,
        rows,
        severity=pl.when(
            copies
            | (pl.col("_gone").fill_null(0.0) >= _GONE_SHARE)
            | ((pl.col("_moved").fill_null(0.0) >= _GONE_SHARE)
               & (pl.col("_host_moved").fill_null(0.0) >= _GONE_SHARE))
            | (pl.col(s.HUMAN_REQUESTS) >= _PEOPLE_SHARE * pl.col(s.REQUESTS))
        ).then(pl.lit("info")).otherwise(pl.lit("warning")),
        evidence=[
            "window_size",
            "new_urls_per_window",
            s.UNIQUE_URLS,
            "early_new_urls_per_window",
            "late_new_urls_per_window",
            "late_new_urls",
            "late_requests",
            "novelty",
            "sampled_ok_urls",
            "distinct_sizes",
            "urls_per_size",
            "shell_urls",
            s.HUMAN_REQUESTS,
        ],
        advice=pl.when(copies).then(pl.lit(COPY_ADVICE)).otherwise(pl.lit(ADVICE)),
    )


def _tracked_copies(urls: pl.DataFrame, settings: Settings) -> pl.DataFrame:
    """The `{tracking}` host+patterns whose sampled URLs are at least `_TRACKED_COPIES` per
    URL they copy (tracking parameters left out): campaign and click ids on the same pages."""
    name = pl.element().str.splitn("=", 2).struct.field("field_0")
    kept = _shape.query_of(pl.col(s.URL)).str.split("&").list.eval(
        pl.element().filter(~is_tracking(name, settings) & (pl.element() != ""))
    ).list.sort().list.join("&")
    page = pl.when(kept == "").then(_shape.path_of(pl.col(s.URL))).otherwise(
        pl.concat_str(_shape.path_of(pl.col(s.URL)), pl.lit("?"), kept))
    return (
        urls.filter(pl.col(s.PATTERN).str.contains(TRACKING, literal=True))
        .select(*_KEYS, s.URL).unique()
        .group_by(_KEYS)
        .agg((pl.len() / page.n_unique()).alias("_per_page"))
        .filter(pl.col("_per_page") >= _TRACKED_COPIES)
        .select(_KEYS)
    )


def _copies(answered: pl.DataFrame, urls: pl.DataFrame, settings: Settings) -> pl.DataFrame:
    """Per host+pattern with a query and no session parameter (session_id's): `_copies`, true
    where more than `_COPY_SHARE` of its URLs answered 200 with a size answer with the size of
    the URL without its query (a page of the sample answered 200, `one_page_bytes` either side
    of its sizes). `answered`: `_answered` URLs."""
    sessions = sorted(session_params(settings))
    names = _shape.query_of(pl.col(s.PATTERN)).str.to_lowercase().str.split("&")
    bare = (
        urls.filter(pl.col(s.STATUS) == 200, pl.col(s.BYTES).is_not_null(),
                    ~pl.col(s.URL).str.contains("?", literal=True))
        .group_by(s.HOST, s.URL)
        .agg(pl.col(s.BYTES).min().alias("_low"), pl.col(s.BYTES).max().alias("_high"))
        .rename({s.URL: "_bare"})
    )
    w = settings.one_page_bytes
    return (
        answered.filter(
            _shape.sized_ok(),
            pl.col(s.PATTERN).str.contains("?", literal=True),
            ~names.list.eval(pl.element().is_in(sessions)).list.any(),
        )
        .with_columns(_shape.path_of(pl.col(s.URL)).alias("_bare"))
        .join(bare, on=[s.HOST, "_bare"], how="left")
        .group_by(_KEYS)
        .agg(
            (pl.col(s.BYTES).is_between(pl.col("_low") - w, pl.col("_high") + w).fill_null(False)
             .mean() > _COPY_SHARE).alias("_copies")
        )
    )


def _growing_late(windows: pl.DataFrame, grid: pl.DataFrame, settings: Settings) -> pl.DataFrame:
    """The host+patterns that got new URLs in each of the grid's last W windows, at least
    `growing_pattern_min_new_urls` of them (rules 2 and 4), found on the sparse windows. Only
    these need a value in every window: a relative-link loop has a pattern per nesting, and
    400,000 patterns times a month of days made 12 million rows (4 GB) to find six."""
    n = settings.growing_pattern_windows
    late = grid[s.WINDOW].tail(n)
    return (
        windows.filter(pl.col(s.WINDOW).is_in(late.implode()) & (pl.col(s.NEW_URLS) > 0))
        .group_by(_KEYS)
        .agg(pl.len().alias("_late_windows"), pl.col(s.NEW_URLS).sum().alias("_late_new"))
        .filter(
            (pl.col("_late_windows") == n)
            & (pl.col("_late_new") >= settings.growing_pattern_min_new_urls)
        )
        .select(_KEYS)
    )


def _answered(
    urls: pl.DataFrame, shell: pl.DataFrame, settings: Settings, keys: list[str] = _KEYS
) -> pl.DataFrame:
    """The sampled URLs, one row each, with the page each answered (`_shape.with_answers`,
    pages counted per `keys`)."""
    return _shape.with_answers(_shape.per_url(urls, shell), settings, keys)


def _sizes(answered: pl.DataFrame, keys: list[str] = _KEYS) -> pl.DataFrame:
    """Per key of `_answered` URLs: those answered 200, those with a size that is evidence
    (not the site's shell, `_shape.shell_sizes`; not unlogged), their distinct pages and URLs
    per page, and the URLs answered with the shell's size."""
    sized = _shape.sized_ok()
    return (
        answered.group_by(keys)
        .agg(
            # 304 Not Modified: a page the crawler fetched before, unchanged (content)
            pl.col(s.STATUS).is_in([200, 304]).sum().cast(pl.Int64).alias("_answered"),
            sized.sum().cast(pl.Int64).alias("sampled_ok_urls"),
            # distinct pages: sizes shared by chance in a dense catalog are pages apiece
            pl.col(_shape.ANSWER).filter(sized).n_unique().cast(pl.Int64).alias("distinct_sizes"),
            pl.col(_shape.SHELL).sum().cast(pl.Int64).alias("shell_urls"),
        )
        .with_columns(
            (pl.col("sampled_ok_urls") / pl.col("distinct_sizes").clip(lower_bound=1))
            .round(1)
            .alias("urls_per_size")
        )
    )


def _sampled_wasted(per_url: pl.DataFrame) -> pl.DataFrame:
    """Per host+pattern, the sampled bot requests that fetched nothing new: to URLs answered
    200 with a size another URL of the pattern has too, beyond the most fetched URL of that size
    (one of them is the page), and to URLs answered with a redirect or an error (304 aside).
    A real page among a trap's URLs (list pages 2-5 beside the empty pages past the last) has a
    size of its own and is not counted; nor are URLs whose size is no evidence (the shell's).
    `per_url`: `_answered` URLs."""
    repeated = (
        per_url.filter(_shape.sized_ok())
        .group_by(*_KEYS, _shape.ANSWER)
        .agg(
            pl.len().alias("_urls"),
            pl.col(s.BOT_REQUESTS).sum(),
            pl.col(s.BOT_REQUESTS).max().alias("_page"),
        )
        .filter(pl.col("_urls") > 1)
        .group_by(_KEYS)
        .agg((pl.col(s.BOT_REQUESTS) - pl.col("_page")).sum().alias("_repeated"))
    )
    failing = (
        per_url.filter((pl.col(s.STATUS) >= 300) & (pl.col(s.STATUS) != 304))
        .group_by(_KEYS)
        .agg(pl.col(s.BOT_REQUESTS).sum().alias("_failing"))
    )
    wasted = pl.col("_repeated").fill_null(0) + pl.col("_failing").fill_null(0)
    return repeated.join(failing, on=_KEYS, how="full", coalesce=True).select(
        *_KEYS, wasted.alias("sampled_wasted")
    )


def _repeated_content(settings: Settings) -> pl.Expr:
    """No URL answered 200 or 304 (redirects and errors are not content), or the sizes of
    the 200s repeat.
    URLs whose size is no evidence (the shell's, or not logged) count neither way: with only
    those, silent."""
    return (pl.col("_answered") == 0) | (
        pl.col("urls_per_size") >= settings.growing_pattern_min_urls_per_size
    )


def _host_findings(
    traffic: Traffic, grid: pl.DataFrame, shell: pl.DataFrame, settings: Settings
) -> pl.DataFrame:
    n = settings.growing_pattern_windows
    answered = traffic.statuses.group_by(_KEYS).agg(
        (pl.col(s.REQUESTS).filter(pl.col(s.STATUS) < 300).sum() * 2 > pl.col(s.REQUESTS).sum())
        .alias("mostly_2xx")
    )
    # static files are no pages: a deploy renames its bundles (`main.8483e2c9.js`, each a
    # pattern of its own) and crawlers rendering the pages fetch the new ones every day
    born = (
        traffic.windows.filter(pl.col(s.REQUESTS) > 0, ~_shape.is_static(pl.col(s.PATTERN)))
        .group_by(_KEYS)
        .agg(pl.col(s.WINDOW).min())
        .join(answered.filter("mostly_2xx"), on=_KEYS)
        .drop("mostly_2xx")
    )

    def growing(born: pl.DataFrame) -> pl.DataFrame:
        per_window = born.group_by(s.HOST, s.WINDOW).agg(
            pl.len().cast(pl.Int64).alias("new_patterns")
        )
        return (
            _series(per_window, [s.HOST], "new_patterns", grid)
            .rename({"new_patterns": "new_patterns_per_window"})
            .with_columns(_trend("new_patterns_per_window", n, skip=1))
            .filter(
                _not_converging(settings)
                & (pl.col("late_total") >= settings.growing_pattern_min_new_patterns)
            )
        )

    rows = growing(born)
    if rows.height:  # a loop relative_loop names is its finding, not a second one here
        loops = relative_loop.loop_patterns(traffic, settings)
        if loops.height:
            born = born.join(loops, on=_KEYS, how="anti")
            rows = growing(born)
    if rows.height == 0:
        return f.empty_findings()
    late_start = grid[s.WINDOW][grid.height - n]
    path = _shape.path_of(pl.col(s.PATTERN)).alias("_path")
    seen = born.filter(pl.col(s.WINDOW) < late_start).select(s.HOST, path).unique()
    late = (
        born.filter(pl.col(s.WINDOW) >= late_start)
        .join(traffic.patterns, on=_KEYS)
        .with_columns(path)
        .join(seen.with_columns(pl.lit(True).alias("_seen_path")), on=[s.HOST, "_path"], how="left")
    )
    totals = late.group_by(s.HOST).agg(
        pl.col(s.REQUESTS).sum(),
        pl.col(s.BOT_REQUESTS).sum().alias(s.WASTED_REQUESTS),
        pl.col(s.PATTERN).sort().head(f.MAX_EXAMPLES).alias("late_patterns"),
        # new sets of parameters on a path seen before: filters combined, not new paths
        (pl.col(s.PATTERN).str.contains("?", literal=True) & pl.col("_seen_path").fill_null(False))
        .mean().alias("_filters_share"),
    ).filter(pl.col(s.WASTED_REQUESTS) > 0)  # new pages people found: no crawl wasted
    late_urls = traffic.urls.join(late.select(_KEYS), on=_KEYS, how="semi")
    examples = _examples(late_urls, [s.HOST])
    patterns = traffic.patterns.group_by(s.HOST).agg(pl.len().cast(pl.Int64).alias("patterns"))
    rows = (
        rows.join(totals, on=s.HOST)
        # hosts with no late URL sampled: none
        .join(_sizes(_answered(late_urls, shell, settings, [s.HOST]), [s.HOST]), on=s.HOST)
        .filter(_repeated_content(settings))
        .join(examples, on=s.HOST, how="left")
        .join(patterns, on=s.HOST)
        .with_columns(
            pl.lit(None, pl.String).alias(s.PATTERN),
            pl.col(s.EXAMPLES).fill_null([]),
            pl.lit(traffic.window_size).alias("window_size"),
            pl.col("late_total").alias("late_new_patterns"),
            pl.col("early_mean").round(2).alias("early_new_patterns_per_window"),
            pl.col("late_mean").round(2).alias("late_new_patterns_per_window"),
        )
        .sort(s.HOST)
    )
    return f.finding_rows(
        KIND,
        rows,
        severity="warning",
        evidence=[
            "window_size",
            "new_patterns_per_window",
            "patterns",
            "early_new_patterns_per_window",
            "late_new_patterns_per_window",
            "late_new_patterns",
            "late_patterns",
            "sampled_ok_urls",
            "distinct_sizes",
            "urls_per_size",
            "shell_urls",
        ],
        advice=pl.when(pl.col("_filters_share") >= 0.5).then(pl.lit(FILTERS_ADVICE))
        .otherwise(pl.lit(HOST_ADVICE)),
    )


def _examples(urls: pl.DataFrame, keys: list[str]) -> pl.DataFrame:
    """Up to 5 sampled URLs per key, the most recently first seen first (the growth)."""
    return (
        urls.group_by(*keys, s.URL)
        .agg(pl.col(s.FIRST_SEEN).min())
        .sort(s.FIRST_SEEN, s.URL, descending=[True, False])
        .group_by(keys, maintain_order=True)
        .agg(pl.col(s.URL).head(f.MAX_EXAMPLES).alias(s.EXAMPLES))
    )

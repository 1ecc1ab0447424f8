"""calendar: "next month" links forever — a date value spanning years, far future, empty pages.

Dates are read from the sampled raw URLs (`?date=2071-04`, `/events/2019/03/`, `20240501`), not
from the pattern: `/events/{n}/{n}` keeps a year apart from an id only in the raw URL. A
pattern is a calendar trap when

- at least `calendar_min_urls` sampled URLs carry a date and they are at least
  `calendar_min_dated_share` of the pattern's sampled URLs (so an id space that happens to
  contain some date-shaped numbers never qualifies),
- the dates span at least `calendar_min_years`, or at least `calendar_min_future_dates`
  distinct ones lie past the horizon (`horizon`) and answered no page of their own (a booking
  calendar's check-in dates walked on day by day for two and a half years, onto "no rooms";
  an archive, of results, weather, a newspaper's days, has none past it, a few dates
  announced that far ahead are too few, one far date many URLs carry, an offer's expiry, is
  one, and a schedule published that far ahead, a cruise line's sailings, has pages apiece),
  and
- they show no new content: some past the horizon answered no page of their own (at least
  `calendar_empty_share` of those answered 200 answered one page: the empty month, "no
  rooms"; or, without a size, the shell or an error, where none answered a page of its own),
  or one 200 size is shared by at least `calendar_empty_share` of the dated pages (the empty
  month), or the dated pages repeat a few answers (at least `calendar_min_urls_per_size`
  dated 200 URLs per distinct size).

A news archive spanning decades stays silent: its months have distinct sizes and none lies in
the future; so do ids read as years and months (forum topics `/t/{id}/{page}`, ids 1900-2149),
whose "far future" has a page apiece. Wasted requests: the bot requests to its wasted dates
(`marked`: empty, past the horizon and no page of its own, or, where the dated pages repeat a
few answers, those answered a page as many dates got), counted on the URL sample and scaled to
the pattern: what its robots.txt rule blocks (a month with events of its own, a date still
bookable, a sailing, is a page, however far ahead). Evidence counts the future and empty
dates separately, among the sampled URLs (`sampled_urls`). Wasted dates among real ones (an
empty Sunday between days with events, `_among_real`) no robots.txt line by years or months
takes without the real dates beside them: `sampled_wasted_among_real` counts them, and the
advice says what stops crawlers there instead (`AMONG_REAL_ADVICE`).

A year alone (`?season=2150`, `?year=2150`, in a parameter named for it) is a date too, but a
season's table or a year's archive is a page of its own whatever its size: such a pattern is a
calendar only by years past the horizon that answer one page (at least `calendar_empty_share`
of its future years; the empty table), at least `_MIN_FUTURE_YEARS` of them (a "next season"
link walked on; one link to next year's fixtures is none; announced editions and budget
projections have sizes of their own).
"""

from __future__ import annotations

from datetime import datetime
from typing import NamedTuple

import polars as pl

from logtrap import findings as f
from logtrap import schema as s
from logtrap.detectors import _shape
from logtrap.settings import Settings
from logtrap.traffic import Traffic

KIND = "calendar"

ADVICE = (
    "Stop linking to next/previous periods without end: render calendar links only for dates "
    "that have content (or a bounded range), return 404 for empty or out-of-range dates, and "
    "add rel=nofollow to the navigation links; then Disallow the empty and far-future dates "
    "in robots.txt."
)
# where its wasted dates lie among real ones (`_among_real`): a Disallow takes them with the
# real dates beside them, so the walk is stopped on their pages and at the links
AMONG_REAL_ADVICE = (
    "Stop linking to next/previous periods without end: render calendar links only for dates "
    "that have content (or a bounded range), return 404 for empty or out-of-range dates, and "
    "add rel=nofollow to the navigation links. Some of its empty dates lie among dates with "
    "content (an empty day between days with events): robots.txt lines are prefixes, and one "
    "by years or months that took them would take the real dates beside them, so until the "
    "links are fixed serve those pages `noindex, nofollow` (meta tag or X-Robots-Tag) instead; "
    "robots.txt can take the empty and far-future dates before its first date with content "
    "and after its last."
)

# year, then month (and an optional day), in a path segment or a parameter value: separated
# (`2019/3`, `2071-04-05`) or written out in full (`202405`, `20240501`). A year and a month
# of one digit run together are no date: `walnut-20011` is product 20011, and a catalog of
# ids 20000-20999 read so spans a century (2000-01 to 2099-09).
_DATE = (
    r"(?:^|[^0-9])([12][0-9]{3})"
    r"(?:[-/_.](1[0-2]|0?[1-9])(?:[-/_.](3[01]|[12][0-9]|0?[1-9]))?"
    r"|(1[0-2]|0[1-9])(3[01]|[12][0-9]|0[1-9])?)"
    r"(?:[^0-9]|$)"
)


# a year and a month in parameters of their own (JEvents' `task=month.calendar&year=&month=`,
# MediaWiki calendars), the names in English, German, French or Spanish, written out: a map
# tile's `?x=&y=2817&m=2` (row and layer) is no date
_YEAR_PARAM = r"(?i)[?&;](?:year|jahr|annee|anio|ano)=([12][0-9]{3})(?:[&;#]|$)"
_MONTH_PARAM = r"(?i)[?&;](?:month|monat|mois|mes)=(1[0-2]|0?[1-9])(?:[&;#]|$)"
# a year alone, or a season (`2024-25`, `2024/2025`), in a parameter named for it; a
# season's `2000-01` is no year and month
_YEAR_ONLY_PARAM = (
    r"(?i)[?&;](?:year|jahr|annee|anio|ano|season|saison|temporada)="
    r"([12][0-9]{3})(?:[-/](?:[0-9]{2}|[12][0-9]{3}))?(?:[&;#]|$)"
)
_SEASON_VALUE = r"(?i)([?&;](?:season|saison|temporada)=)[^&;#]*"
# years past the horizon a pattern dated by years alone needs (judgement: a fixture list links
# next season, maybe the one after; a "next season" link walked on passes dozens)
_MIN_FUTURE_YEARS = 3


def dated(urls: pl.DataFrame) -> pl.DataFrame:
    """Add `year` and `month` (null when the URL carries no date), `months` (year*12+month-1),
    `year_only` (the date is a year alone: its month is taken as January) and `day` (null
    when the date has none).

    >>> urls = ["/c?date=2071-04", "/e/2019/3/", "/d/20240501", "/a/7", "/p/walnut-20011",
    ...         "/index.php?task=month&year=2071&month=04", "/c?id=20240501&year=2030&month=12",
    ...         "/c?year=2030", "/tiles?x=4410&y=2817&z=13&m=2", "/t?season=2150-51&week=3",
    ...         "/t?id=2150&week=3", "/t?season=2000-01", "/f?season=2026-27&date=2031-05-02"]
    >>> out = dated(pl.DataFrame({"url": urls}))
    >>> out["months"].to_list()
    [24855, 24230, 24292, None, None, 24855, 24371, 24360, None, 25800, None, 24000, 24376]
    >>> out["year_only"].to_list()
    [False, False, False, False, False, False, False, True, False, True, False, True, False]
    >>> out["day"].to_list()
    [None, None, 1, None, None, None, None, None, None, None, None, None, 2]
    """
    # each regex over the URLs once, in a step of its own: an expression used in several
    # others was made as often, Polars sharing no subexpression across these `when`s
    # (960,000 URLs: 0.58 s against 0.2)
    # a season's `2000-01` is no year and month: read apart (a date beside it is the date)
    seasonless = pl.col(s.URL).str.replace_all(_SEASON_VALUE, "$1")
    read = urls.with_columns(
        seasonless.str.extract_groups(_DATE).alias("_parts"),
        # or each in a parameter of its own: `?year=2071&month=4`
        pl.col(s.URL).str.extract(_YEAR_PARAM).cast(pl.Int32, strict=False).alias("_year_param"),
        pl.col(s.URL).str.extract(_MONTH_PARAM).cast(pl.Int32, strict=False).alias("_month_param"),
        # or a year alone: `?year=2150`, `?season=2150-51`
        pl.col(s.URL).str.extract(_YEAR_ONLY_PARAM).cast(pl.Int32, strict=False).alias("_alone"),
    )
    parts = pl.col("_parts")
    split = pl.col("_year_param").is_not_null() & pl.col("_month_param").is_not_null()
    year = parts.struct.field("1").cast(pl.Int32, strict=False)
    month = pl.coalesce(parts.struct.field("2"), parts.struct.field("4")).cast(pl.Int32, strict=False)
    day = pl.coalesce(parts.struct.field("3"), parts.struct.field("5")).cast(pl.Int32, strict=False)
    read = read.with_columns(
        pl.when(split).then(pl.col("_year_param")).otherwise(year).alias("_year"),
        pl.when(split).then(pl.col("_month_param")).otherwise(month).alias("_month"),
        pl.when(split).then(None).otherwise(day).alias("_day"),
    )
    year_only = pl.col("_year").is_null() & pl.col("_alone").is_not_null()
    return read.with_columns(
        pl.when(year_only).then(pl.col("_alone")).otherwise(pl.col("_year")).alias("year"),
        pl.when(year_only).then(pl.lit(1, pl.Int32)).otherwise(pl.col("_month")).alias("month"),
        year_only.alias("year_only"),
        pl.when(year_only).then(None).otherwise(pl.col("_day")).alias("day"),
    ).with_columns((pl.col("year") * 12 + pl.col("month") - 1).alias("months")).drop(
        "_parts", "_year_param", "_month_param", "_alone", "_year", "_month", "_day"
    )


def _label(months: pl.Expr, years_only: pl.Expr) -> pl.Expr:
    year = (months // 12).cast(pl.String)
    month = (months % 12 + 1).cast(pl.String).str.zfill(2)
    return pl.when(years_only).then(year).otherwise(pl.concat_str(year, pl.lit("-"), month))


def _one_page(rows: pl.DataFrame, settings: Settings, flag: str, size: str) -> pl.DataFrame:
    """Per pattern, its `rows`' URLs that answered one page (`_shape.one_page`: a nonce, the
    date echoed, gzip spreading it over a few bytes), where they are at least
    `calendar_empty_share` of its `rows`, and two at least (one URL's size is its own page:
    of an events site's 921 dated pages, the two announced past the horizon, their sizes
    apart, were each half of "the dates past it" and called wasted); flagged `flag`, with
    `size` the page's most frequent size: the empty month, the empty future table."""
    inside = _shape.one_page(rows, settings) if rows.height else rows.select(*_shape.KEYS, s.URL, s.BYTES)
    n = pl.len().over(_shape.KEYS)
    return (
        inside.join(rows.group_by(_shape.KEYS).agg(pl.len().alias("_rows")), on=_shape.KEYS)
        .filter(n >= settings.calendar_empty_share * pl.col("_rows"), n >= 2)
        .select(
            *_shape.KEYS, s.URL, pl.lit(True).alias(flag),
            pl.col(s.BYTES).mode().min().over(_shape.KEYS).cast(pl.Int64).alias(size),
        )
    )


def _repeated(rows: pl.DataFrame, settings: Settings, flag: str) -> pl.DataFrame:
    """Per pattern, its `rows`' URLs flagged `flag`: whether the page they answered
    (`_shape.with_answers`) at least `calendar_min_urls_per_size` of its `rows` got."""
    answers = _shape.with_answers(rows, settings).filter(pl.col(_shape.ANSWER).is_not_null())
    return answers.select(
        *_shape.KEYS, s.URL,
        (pl.len().over(*_shape.KEYS, _shape.ANSWER) >= settings.calendar_min_urls_per_size).alias(flag),
    )


def marked(traffic: Traffic, settings: Settings, only: pl.Expr | None = None) -> pl.DataFrame:
    """The URL sample, one row per URL (`_shape.per_url`; `only`: of these patterns), dated
    (`dated`), with `future` (past the logs' end plus `calendar_future_years`), `empty` (a 200
    answered with the pattern's empty page, `empty_size` its size), `repeats` (the pattern's dated
    pages repeat a few answers: `calendar_min_urls_per_size`), `blank` (a date that answered no
    page of its own: empty, or past the horizon answered as most dates past it were,
    `future_size`, or a page as many there got, or, of a pattern that repeats, answered a page
    as many dates got, `_repeated`) and `wasted` (a blank date, or one past the horizon that says
    nothing of itself, no size, where none past it has a page of its own; a year alone only
    when blank and future). A date past the horizon with a page of its own is a page: a
    sailing published two years ahead, a date still bookable, an announced edition."""
    urls = _shape.per_url(traffic.urls, _shape.shell_sizes(traffic, settings))
    urls = dated(urls if only is None else urls.filter(only))
    urls = urls.with_columns((pl.col("months") > horizon(traffic, settings)).fill_null(False).alias("future"))
    # answered 200 with a size that is evidence (not the site's shell, not unlogged), dated
    # by more than a year: a year's page has content of its own whatever its size
    sized = _shape.sized_ok() & pl.col("months").is_not_null()
    ok_dated = sized & ~pl.col("year_only")
    # the dated pages repeat a few answers (a few templates, no content of their own)
    repeats = ok_dated.sum().over(_shape.KEYS) >= settings.calendar_min_urls_per_size * (
        pl.col(s.BYTES).filter(ok_dated).n_unique().over(_shape.KEYS)
    )
    on = [*_shape.KEYS, s.URL]
    future = sized & pl.col("future")
    # of a pattern whose pages repeat, the dates answered a page as many dates got (the empty
    # month, a template); and past the horizon, the dates answered one page (as most there
    # were: "no rooms", the empty month or table) or a page as many there got (the empty
    # month's grid of five weeks or six): a month with a page of its own is a page, however
    # far ahead (an event announced, a sailing), as are two whose sizes fall together by chance
    blank = (pl.col("empty") | pl.col("_future_empty") | pl.col("_future_repeated")
             | (pl.col("repeats") & pl.col("_repeated")))
    # a date past the horizon without a size (the shell, an error) says nothing of itself: wasted
    # unless the pattern's others past it are pages apiece (a schedule's 404 for a cancelled one)
    own_future = (pl.col("future") & ~pl.col("year_only") & sized & ~pl.col("blank")).any().over(_shape.KEYS)
    unsized_future = pl.col("future") & ~pl.col("year_only") & ~sized & ~own_future
    return (
        urls.join(_one_page(urls.filter(ok_dated), settings, "empty", "empty_size"), on=on, how="left")
        .join(_one_page(urls.filter(future), settings, "_future_empty", "future_size"), on=on, how="left")
        .join(_repeated(urls.filter(ok_dated), settings, "_repeated"), on=on, how="left")
        .join(_repeated(urls.filter(future & ~pl.col("year_only")), settings, "_future_repeated"),
              on=on, how="left")
        .with_columns(
            pl.col("empty").fill_null(False),
            (ok_dated.any().over(_shape.KEYS) & repeats).alias("repeats"),
            pl.col("_future_empty").fill_null(False),
            pl.col("_repeated").fill_null(False),
            pl.col("_future_repeated").fill_null(False),
        )
        .with_columns(
            pl.when(pl.col("year_only")).then(pl.col("_future_empty"))
            .otherwise(pl.col("months").is_not_null() & blank).alias("blank")
        )
        .with_columns((pl.col("blank") | unsized_future).alias("wasted"))
        .drop("_repeated", "_future_empty", "_future_repeated")
        .pipe(_among_real, _thin(traffic))
    )


def _thin(traffic: Traffic) -> pl.DataFrame:
    """(HOST, PATTERN, `_thin`): whether the URL sample holds only part of the pattern's URLs."""
    sampled = traffic.urls.group_by(_shape.KEYS).agg(pl.col(s.URL).n_unique().alias("_sampled"))
    return (
        _shape.pattern_totals(traffic).select(*_shape.KEYS, s.UNIQUE_URLS)
        .join(sampled, on=_shape.KEYS, how="left")
        .select(*_shape.KEYS, (pl.col(s.UNIQUE_URLS) > pl.col("_sampled").fill_null(0)).alias("_thin"))
    )


def _among_real(urls: pl.DataFrame, thin: pl.DataFrame) -> pl.DataFrame:
    """`urls` (`marked`'s) with `among_real`: a wasted date between two dates with a page of
    their own, in a month that has one (an empty Sunday among days with events), which no
    robots.txt line by years or months takes without the real dates beside it (a line per
    date would); and `between_real`: a wasted date in the pattern's first month with a page
    of its own, its last, or a month between (the empty days after a month's last event too),
    and, where the URL sample holds only part of the pattern (`thin`), the month before the
    first and the one after the last: two empty days sampled of a January whose sixteen
    events the sample missed made it look empty.
    """
    real = pl.col("months").is_not_null() & ~pl.col("wasted") & (pl.col(s.STATUS) == 200)
    months = urls.filter(real).select(*_shape.KEYS, "months").unique().sort(*_shape.KEYS, "months")
    # a real month far from any other (a page far past the horizon answered an odd size)
    # bounds no run: it stays open by the rule's own check, and the empty walk around it is
    # blocked (one odd 2150 left 1,490 walked months open)
    gap = pl.lit(_ISLAND_MONTHS + 1)
    apart = ((pl.col("months") - pl.col("months").shift(1).over(_shape.KEYS)).fill_null(gap) > _ISLAND_MONTHS) & (
        (pl.col("months").shift(-1).over(_shape.KEYS) - pl.col("months")).fill_null(gap) > _ISLAND_MONTHS)
    months = months.with_columns(
        (apart & (pl.len().over(_shape.KEYS) > 1) & (~apart).any().over(_shape.KEYS)).alias("_island"))
    run = months.filter(~pl.col("_island")).group_by(_shape.KEYS).agg(
        pl.col("months").min().alias("_first"), pl.col("months").max().alias("_last"))
    when = pl.col("months") * 32 + pl.col("day").fill_null(0)  # a date's place, day by day
    wasted = pl.col("wasted") & pl.col("months").is_not_null()
    edge = pl.col("_thin").fill_null(False).cast(pl.Int32)

    def between(at: pl.Expr, strict: bool, margin: pl.Expr | int = 0) -> pl.Expr:
        if strict:  # days: between real dates of the run's months
            inside = real & pl.col("months").is_between(pl.col("_first"), pl.col("_last"))
            first, last = at.filter(inside).min().over(_shape.KEYS), at.filter(inside).max().over(_shape.KEYS)
            return (at > first) & (at < last)
        return at.is_between(pl.col("_first") - margin, pl.col("_last") + margin)

    return (
        urls.join(months.filter(~pl.col("_island")).select(*_shape.KEYS, "months")
                  .with_columns(pl.lit(True).alias("_real_month")),
                  on=[*_shape.KEYS, "months"], how="left", maintain_order="left")
        .join(run, on=_shape.KEYS, how="left", maintain_order="left")
        .join(thin, on=_shape.KEYS, how="left", maintain_order="left")
        .with_columns(
            (wasted & pl.col("_real_month").fill_null(False) & between(when, strict=True))
            .fill_null(False).alias("among_real"),
            (wasted & between(pl.col("months"), strict=False, margin=edge)).fill_null(False)
            .alias("between_real"),
        )
        .drop("_real_month", "_thin", "_first", "_last")
    )


# Months of wasted dates on each side that make a real month an island (judgement: events
# announced a year or three ahead are the run's, their neighbours perhaps outside the URL
# sample; a real month five years from any other is an odd answer)
_ISLAND_MONTHS = 60


def horizon(traffic: Traffic, settings: Settings) -> int:
    """The last month (year * 12 + month - 1) not in the far future: the logs' end plus
    `calendar_future_years`; a date past it is wasted unless it is a page of its own (`marked`).

    >>> from logtrap.traffic import Tally
    >>> horizon(Tally().finish(), Settings()) // 12
    10001
    """
    end = traffic.end or datetime.max
    return end.year * 12 + end.month - 1 + int(settings.calendar_future_years * 12)


class Dates(NamedTuple):
    """A calendar pattern's sampled URLs by what its robots.txt rule may do with them, those
    bots fetched most first (`wasted_urls`)."""

    wasted: list[str]  # empty, repeated, or future and no page: what its rule must block
    real: list[str]  # answered 200, not wasted: pages of their own, which it must not
    between_real: list[str]  # of the wasted, those between its first and last real months (`_among_real`)


def wasted_urls(traffic: Traffic, settings: Settings, host: str, pattern: str) -> Dates:
    """The sampled URLs of a calendar pattern whose dates are wasted (empty, repeated, or
    future and no page of their own), those whose dates are pages of their own (a month with
    events, an announced edition, a date still bookable), and the wasted among them (`Dates`)."""
    mine = (pl.col(s.HOST) == host) & (pl.col(s.PATTERN) == pattern)
    urls = marked(traffic, settings, mine).sort(s.BOT_REQUESTS, s.URL, descending=[True, False])
    real = ~pl.col("wasted") & pl.col("months").is_not_null() & (pl.col(s.STATUS) == 200)
    return Dates(*(urls.filter(c)[s.URL].to_list()
                   for c in (pl.col("wasted"), real, pl.col("between_real"))))


def detect(traffic: Traffic, settings: Settings) -> pl.DataFrame:
    """Calendar traps: date values spanning years into the far future or onto empty pages.

    >>> from logtrap.traffic import Tally
    >>> detect(Tally().finish(), Settings()).shape
    (0, 9)
    """
    if traffic.urls.height == 0 or traffic.end is None:
        return f.empty_findings()
    urls = marked(traffic, settings)
    wasted = pl.col("wasted")
    sized = _shape.sized_ok() & pl.col("months").is_not_null()
    future_years = pl.col("year").filter(pl.col("wasted") & pl.col("year_only")).n_unique()
    per_pattern = urls.group_by(_shape.KEYS).agg(
        pl.len().alias("sampled_urls"),
        pl.col("months").is_not_null().sum().alias("dated_urls"),
        pl.col("months").n_unique().alias("distinct_values"),  # null counts as one value
        pl.col("months").is_null().any().alias("has_undated"),
        pl.col("months").min().alias("min_months"),
        pl.col("months").max().alias("max_months"),
        pl.col("future").sum().alias("future_urls"),
        (pl.col("future") & wasted & ~pl.col("year_only")).sum().alias("future_dates"),
        # distinct ones: a walk, not one far date many URLs carry (an offer's expiry); that
        # answered no page of their own (blank), not a schedule published that far ahead
        pl.struct("months", "day").filter(pl.col("future") & pl.col("blank") & ~pl.col("year_only"))
        .n_unique().alias("distinct_future_dates"),
        future_years.alias("future_years"),
        pl.col("year_only").filter(pl.col("months").is_not_null()).all().alias("years_only"),
        pl.col(s.BOT_REQUESTS).filter(wasted).sum().alias("sampled_wasted"),
        pl.col("empty").sum().alias("empty_urls"),
        pl.coalesce("empty_size", "future_size").drop_nulls().first().alias("empty_size"),
        # the empty page's size: a month's, or the future years' where dated by years alone
        pl.col(s.BYTES).filter(sized).n_unique().alias("distinct_sizes"),
        pl.col("repeats").any(),
        pl.col(s.HUMAN_REQUESTS).filter(wasted).sum().alias("human_requests_to_wasted"),
        pl.col("among_real").sum().alias("sampled_wasted_among_real"),
    )
    rows = (
        per_pattern.with_columns(
            (pl.col("distinct_values") - pl.col("has_undated").cast(pl.UInt32)).alias("distinct_values"),
            ((pl.col("max_months") - pl.col("min_months")) / 12).round(1).alias("span_years"),
            _label(pl.col("min_months"), pl.col("years_only")).alias("earliest"),
            _label(pl.col("max_months"), pl.col("years_only")).alias("latest"),
        )
        .filter(
            (pl.col("dated_urls") >= settings.calendar_min_urls)
            & (pl.col("dated_urls") >= settings.calendar_min_dated_share * pl.col("sampled_urls"))
            # spanning years, or walked far past the horizon whatever its span (a booking
            # calendar's check-in dates two and a half years on, in a week's log)
            & ((pl.col("span_years") >= settings.calendar_min_years)
               | (pl.col("distinct_future_dates") >= settings.calendar_min_future_dates))
            & (
                (pl.col("future_dates") + pl.col("empty_urls") > 0)
                | (pl.col("future_years") >= _MIN_FUTURE_YEARS)
                | pl.col("repeats")  # never when every size is the shell's
            )
        )
        .join(_shape.pattern_totals(traffic), on=_shape.KEYS, how="left")
        # the requests to its wasted dates (future, empty, repeated): a month with events of
        # its own is a page, as a year's page is, which the rules leave open too
        .with_columns(_shape.scale("sampled_wasted").alias(s.WASTED_REQUESTS))
        .filter(pl.col(s.WASTED_REQUESTS) > 0)
    )
    trap_urls = urls.filter(wasted)
    rows = rows.join(_shape.examples(trap_urls), on=_shape.KEYS, how="left").with_columns(
        pl.col(s.UNIQUE_URLS).alias("unique_urls"),
        pl.lit(traffic.end.strftime("%Y-%m")).alias("logs_end"),
        # counted on the URL sample, as sampled_urls says: named so beside unique_urls
        pl.col("future_urls").alias("sampled_future_urls"),
        pl.col("empty_urls").alias("sampled_empty_urls"),
    )
    return _shape.findings(
        KIND,
        rows,
        settings,
        evidence=[
            "distinct_values", "span_years", "earliest", "latest", "logs_end",
            "sampled_future_urls", "sampled_empty_urls", "empty_size", "distinct_sizes",
            "sampled_urls", "unique_urls", s.HUMAN_REQUESTS,
            "human_requests_to_wasted", "sampled_wasted_among_real",
        ],  # fmt: skip
        advice=pl.when(pl.col("sampled_wasted_among_real") > 0)
        .then(pl.lit(AMONG_REAL_ADVICE)).otherwise(pl.lit(ADVICE)),
    )

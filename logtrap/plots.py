"""Plotly figures of where the crawl budget goes, one function per figure.

Every function takes `Traffic` (the bounded aggregates of traffic.py) or the `Analysis` that
holds it, and returns a `plotly.graph_objects.Figure`, titled and labelled for a reader who
has never seen logtrap. The work happens in Polars; Plotly only receives plain lists, and only `graph_objects` is used
(plotly.express would want pandas). With several hosts in the logs, each pattern is prefixed by
its host (`shop.example/cart?id`). A figure with nothing to show carries a "no data"
annotation instead of raising, so a report can always embed all of them.

Times on the x axes are UTC, without an offset (Plotly ignores offsets; saying "UTC" in the
axis title is clearer than a silently dropped "+00:00").
"""

from __future__ import annotations

import math
import textwrap
from collections.abc import Sequence

import plotly.graph_objects as go
import polars as pl
from plotly.subplots import make_subplots

from logtrap import schema as s
from logtrap.analysis import Analysis
from logtrap.errors import ConfigError
from logtrap.traffic import Traffic

Data = Traffic | Analysis

NO_DATA = "no data"
OTHER = "other patterns"  # the budget figure's bar for everything outside the top patterns

_LABEL = "label"  # the pattern as shown: prefixed by its host when there are several hosts
_RANK = "rank"  # display order of a pattern (0 = first)
_OTHER_COLOR = "#b0b0b0"
# Bins across the size axis: narrow enough that one repeated size stands out as a spike,
# wide enough that real pages of varied sizes still form a visible shape (judgement).
_SIZE_BINS = 60
# Status colours by class, so a glance tells healthy answers (2xx green, 3xx blue) from
# errors (4xx orange, 5xx red); several codes of a class get shades of its colour.
_STATUS_COLORS = {
    2: ("#2ca02c", "#98df8a", "#1a6e1a"),
    3: ("#1f77b4", "#aec7e8", "#17becf"),
    4: ("#ff7f0e", "#ffbb78", "#c15d00"),
    5: ("#d62728", "#ff9896", "#8c1a1a"),
}
_ANY_STATUS_COLORS = ("#7f7f7f", "#c7c7c7")


def budget_by_pattern(traffic: Data, top: int = 10) -> go.Figure:
    """Bot requests per window, stacked by URL pattern: where the crawl budget goes.

    One bar trace per pattern (the `top` patterns by bot requests, largest first), plus one
    for all other patterns; every trace has a value for every window (0 when none).

    >>> from logtrap.traffic import Tally
    >>> budget_by_pattern(Tally().finish()).layout.annotations[0].text
    'no data'
    """
    traffic = _traffic(traffic)
    _check_top(top)
    title = _title(
        "Where the crawlers' budget goes: bot requests per URL pattern",
        f"Bot requests per {_window_word(traffic)}, stacked by URL pattern "
        f"(the {top} patterns bots fetch most; the rest grouped). "
        "A pattern that takes most of the stack is where crawl budget is spent.",
    )
    if traffic.patterns.height == 0:
        return _empty(title)
    ranked = _top(traffic, [s.BOT_REQUESTS], top, pl.col(s.BOT_REQUESTS) > 0)
    if ranked.height == 0:
        return _empty(title, "no bot requests in these logs")
    per_label = (
        traffic.windows.join(ranked, on=[s.HOST, s.PATTERN], how="left")
        .with_columns(pl.col(_LABEL).fill_null(OTHER), pl.col(_RANK).fill_null(top))
        .group_by(_RANK, _LABEL, s.WINDOW)
        .agg(pl.col(s.BOT_REQUESTS).sum())
    )
    labels = per_label.group_by(_RANK, _LABEL).agg(pl.col(s.BOT_REQUESTS).sum())
    labels = labels.filter(pl.col(s.BOT_REQUESTS) > 0).drop(s.BOT_REQUESTS)
    windows = per_label.select(s.WINDOW).unique()
    series = (
        labels.join(windows, how="cross")
        .join(per_label, on=[_RANK, _LABEL, s.WINDOW], how="left")
        .with_columns(pl.col(s.BOT_REQUESTS).fill_null(0), _naive(s.WINDOW))
        .sort(_RANK, s.WINDOW)
        .group_by(_RANK, _LABEL, maintain_order=True)
        .agg(s.WINDOW, s.BOT_REQUESTS)
    )
    fig = go.Figure(
        [
            go.Bar(
                x=row[s.WINDOW],
                y=row[s.BOT_REQUESTS],
                name=row[_LABEL],
                marker_color=_OTHER_COLOR if row[_RANK] == top else None,
                hovertemplate="%{y:,} bot requests<extra>%{fullData.name}</extra>",
            )
            for row in series.iter_rows(named=True)
        ]
    )
    fig.update_layout(
        title=title,
        margin_t=_top_margin(title),
        barmode="stack",
        xaxis_title=f"{_window_word(traffic)} (UTC)",
        yaxis_title="bot requests",
        legend_title_text="URL pattern",
        hovermode="x unified",
    )
    return fig


def growth_curves(traffic: Data, top: int = 10) -> go.Figure:
    """Distinct URLs seen so far, per pattern, window after window: the trap signature.

    One line per pattern (the `top` patterns by distinct URLs). Real content levels off once
    crawled; a line that keeps climbing is an unbounded URL space.

    >>> from logtrap.traffic import Tally
    >>> growth_curves(Tally().finish()).layout.annotations[0].text
    'no data'
    """
    traffic = _traffic(traffic)
    _check_top(top)
    title = _title(
        "Distinct URLs per URL pattern, window after window",
        f"Distinct URLs seen up to each {_window_word(traffic)}, for the {top} patterns "
        "with the most distinct URLs. Real pages level off once crawled; "
        "a line that keeps climbing is an endless URL space (a likely crawler trap).",
    )
    if traffic.patterns.height == 0:
        return _empty(title)
    ranked = _top(traffic, [s.UNIQUE_URLS], top, pl.col(s.UNIQUE_URLS) > 0)
    series = (
        traffic.windows.join(ranked, on=[s.HOST, s.PATTERN], how="inner")
        .with_columns(_naive(s.WINDOW))
        .sort(_RANK, s.WINDOW)
        .group_by(_RANK, _LABEL, maintain_order=True)
        .agg(s.WINDOW, s.URLS_TO_DATE)
    )
    fig = go.Figure(
        [
            go.Scatter(
                x=row[s.WINDOW],
                y=row[s.URLS_TO_DATE],
                name=row[_LABEL],
                mode="lines+markers",
                hovertemplate="%{y:,} distinct URLs so far<extra>%{fullData.name}</extra>",
            )
            for row in series.iter_rows(named=True)
        ]
    )
    fig.update_layout(
        title=title,
        margin_t=_top_margin(title),
        xaxis_title=f"{_window_word(traffic)} (UTC)",
        yaxis_title="distinct URLs seen so far",
        legend_title_text="URL pattern",
    )
    return fig


def status_mix(traffic: Data, top: int = 15) -> go.Figure:
    """Requests per HTTP status for each URL pattern, as horizontal stacked bars.

    One bar trace per status code (ascending); y holds the `top` patterns bots fetch most,
    first at the top; x the requests (all clients) answered with that status.

    >>> from logtrap.traffic import Tally
    >>> status_mix(Tally().finish()).layout.annotations[0].text
    'no data'
    """
    traffic = _traffic(traffic)
    _check_top(top)
    title = _title(
        "How the server answers each URL pattern",
        f"Requests by HTTP status, for the {top} patterns bots fetch most. "
        "A trap often answers 200 to every URL it is asked for; "
        "404 or 410 past the end of real content is the healthy answer.",
    )
    if traffic.patterns.height == 0:
        return _empty(title)
    ranked = _top(traffic, [s.BOT_REQUESTS, s.REQUESTS], top, pl.col(s.REQUESTS) > 0)
    counts = (
        traffic.statuses.join(ranked, on=[s.HOST, s.PATTERN], how="inner")
        .group_by(_RANK, s.STATUS)
        .agg(pl.col(s.REQUESTS).sum())
    )
    series = (
        counts.select(s.STATUS)
        .unique()
        .join(ranked.select(_RANK, _LABEL), how="cross")
        .join(counts, on=[_RANK, s.STATUS], how="left")
        .with_columns(pl.col(s.REQUESTS).fill_null(0))
        .sort(s.STATUS, _RANK)
        .group_by(s.STATUS, maintain_order=True)
        .agg(_LABEL, s.REQUESTS)
    )
    statuses = series[s.STATUS].to_list()
    fig = go.Figure(
        [
            go.Bar(
                y=row[_LABEL],
                x=row[s.REQUESTS],
                name=str(row[s.STATUS]),
                orientation="h",
                marker_color=_status_color(row[s.STATUS], statuses),
                hovertemplate="%{x:,} requests answered %{fullData.name}<extra>%{y}</extra>",
            )
            for row in series.iter_rows(named=True)
        ]
    )
    fig.update_layout(
        title=title,
        margin_t=_top_margin(title),
        barmode="stack",
        xaxis_title="requests (all clients)",
        yaxis_title="URL pattern",
        yaxis_autorange="reversed",
        yaxis_automargin=True,
        legend_title_text="HTTP status",
        showlegend=True,  # even with one status: the reader needs to see which one
        height=_bars_height(ranked.height),
    )
    return fig


def bot_pattern_matrix(traffic: Data, top_bots: int = 10, top_patterns: int = 15) -> go.Figure:
    """Requests per bot (columns) and URL pattern (rows), as a heatmap.

    Columns: the `top_bots` bots by requests; rows: the `top_patterns` patterns bots fetch
    most, first at the top; z[row][column] the requests (0 where none).

    >>> from logtrap.traffic import Tally
    >>> bot_pattern_matrix(Tally().finish()).layout.annotations[0].text
    'no data'
    """
    traffic = _traffic(traffic)
    title = _title(
        "Which bots fetch which URL patterns",
        f"Requests per bot ({top_bots} busiest) and URL pattern ({top_patterns} "
        "most fetched by bots). A bright cell alone in its column is one bot "
        "spending its visits on a few routes.",
    )
    if traffic.patterns.height == 0:
        return _empty(title)
    agents = traffic.agents.with_columns(pl.col(s.BOT_NAME).fill_null("unnamed bot"))
    bots = (
        agents.group_by(s.BOT_NAME)
        .agg(pl.col(s.REQUESTS).sum())
        .sort([s.REQUESTS, s.BOT_NAME], descending=[True, False])
        .head(top_bots)
        .with_row_index("bot_rank")
    )
    ranked = _top(traffic, [s.BOT_REQUESTS], top_patterns, pl.col(s.BOT_REQUESTS) > 0)
    if bots.height == 0 or ranked.height == 0:
        return _empty(title, "no bot requests in these logs")
    cells = agents.group_by(s.HOST, s.PATTERN, s.BOT_NAME).agg(pl.col(s.REQUESTS).sum())
    rows = (
        ranked.join(bots.select("bot_rank", s.BOT_NAME), how="cross")
        .join(cells, on=[s.HOST, s.PATTERN, s.BOT_NAME], how="left")
        .with_columns(pl.col(s.REQUESTS).fill_null(0))
        .sort(_RANK, "bot_rank")
        .group_by(_RANK, _LABEL, maintain_order=True)
        .agg(s.REQUESTS)
    )
    fig = go.Figure(
        go.Heatmap(
            x=bots[s.BOT_NAME].to_list(),
            y=rows[_LABEL].to_list(),
            z=rows[s.REQUESTS].to_list(),
            colorscale="Blues",
            texttemplate="%{z:,}",
            hovertemplate="%{x} on %{y}: %{z:,} requests<extra></extra>",
            colorbar_title_text="requests",
        )
    )
    fig.update_layout(
        title=title,
        margin_t=_top_margin(title),
        xaxis_title="bot (user agent family)",
        yaxis_title="URL pattern",
        yaxis_autorange="reversed",
        yaxis_automargin=True,
        height=_bars_height(rows.height),
    )
    return fig


def size_distribution(
    traffic: Data, patterns: str | Sequence[str] | None = None, top: int = 6
) -> go.Figure:
    """Requests by response size, one panel per URL pattern.

    Panels: the given `patterns` (one, or several in that order; every host that has them),
    or the `top`
    patterns bots fetch most, titled with their number of URLs in the sample. Each
    panel is a histogram of the pattern's sampled URLs' sizes (x: bytes, ascending, one value
    per distinct size) weighted by their requests (y, summed per bin), with the same bins in
    every panel. Many different URLs answering with one size show as a spike: an error page
    served with 200 (soft 404), an empty listing past the last page, a session-id copy.

    >>> from logtrap.traffic import Tally
    >>> size_distribution(Tally().finish()).layout.annotations[0].text
    'no data'
    """
    traffic = _traffic(traffic)
    _check_top(top)
    title = _title(
        "Response sizes per URL pattern",
        "Requests by response size, from the sample of distinct URLs kept per pattern. "
        "One tall spike means many URLs answer the same page: an error page served with "
        "200 (soft 404), an empty page past the last page, or a duplicate.",
    )
    if traffic.patterns.height == 0:
        return _empty(title)
    if isinstance(patterns, str):  # one pattern, not its characters
        patterns = [patterns]
    if patterns is None:
        ranked = _top(traffic, [s.BOT_REQUESTS, s.REQUESTS], top, pl.col(s.REQUESTS) > 0)
    else:
        ranked = _chosen(traffic, patterns)
        if ranked.height == 0:
            return _empty(title, "no data for " + ", ".join(patterns))
    sampled = traffic.urls.join(ranked, on=[s.HOST, s.PATTERN], how="inner").with_columns(
        # Apache's %b logs "-" for a response without a body: that is 0 bytes.
        pl.col(s.BYTES).fill_null(0)
    )
    if sampled.height == 0:
        return _empty(title, "no data: no sampled URLs for these patterns")
    distinct = sampled.group_by(_RANK).agg(pl.col(s.URL).n_unique().alias("distinct_urls"))
    sizes = (
        sampled.group_by(_RANK, _LABEL, s.BYTES)
        .agg(pl.col(s.REQUESTS).sum())
        .sort(_RANK, s.BYTES)
        .group_by(_RANK, _LABEL, maintain_order=True)
        .agg(s.BYTES, s.REQUESTS)
        .join(distinct, on=_RANK)
        .sort(_RANK)
    )
    bins = _size_bins(sampled[s.BYTES].min(), sampled[s.BYTES].max())
    titles = [  # the sample's URLs, not the pattern's (a pattern of 2,220 URLs keeps 1,000)
        f"{label} ({n:,} sampled URL{'s' if n != 1 else ''})"
        for label, n in sizes.select(_LABEL, "distinct_urls").iter_rows()
    ]
    fig = make_subplots(
        rows=len(titles),
        cols=1,
        shared_xaxes=True,
        subplot_titles=titles,
        vertical_spacing=min(0.08, 0.3 / len(titles)),
    )
    for i, row in enumerate(sizes.iter_rows(named=True), start=1):
        fig.add_trace(
            go.Histogram(
                x=row[s.BYTES],
                y=row[s.REQUESTS],
                histfunc="sum",
                xbins=bins,  # the same bins in every panel, so spikes compare
                name=row[_LABEL],
                showlegend=False,
                hovertemplate="%{x} bytes: %{y:,} requests<extra>%{fullData.name}</extra>",
            ),
            row=i,
            col=1,
        )
        fig.update_yaxes(title_text="requests", row=i, col=1)
    fig.update_xaxes(title_text="response size (bytes)", showticklabels=True, row=len(titles), col=1)
    fig.update_layout(
        # the first panel's title stands above its plot, in the top margin
        title=title, margin_t=_top_margin(title) + 24, height=160 * len(titles) + 180,
        bargap=0.05,
    )
    return fig


def figures(traffic: Data) -> dict[str, go.Figure]:
    """Every figure with its default arguments, by function name, in reading order.

    >>> from logtrap.traffic import Tally
    >>> list(figures(Tally().finish()))
    ['budget_by_pattern', 'growth_curves', 'status_mix', 'bot_pattern_matrix', 'size_distribution']
    """
    traffic = _traffic(traffic)
    return {
        fn.__name__: fn(traffic)
        for fn in (budget_by_pattern, growth_curves, status_mix, bot_pattern_matrix, size_distribution)
    }


# -- helpers ---------------------------------------------------------------------------------


def _traffic(data: object) -> Traffic:
    """The aggregates to plot: `Traffic`, or an `Analysis`'s."""
    if isinstance(data, Analysis):
        return data.traffic
    if not isinstance(data, Traffic):
        raise ConfigError(f"a figure plots a Traffic or an Analysis (from logtrap.analyze), "
                          f"not {type(data).__name__}")
    return data


def _label(traffic: Traffic) -> pl.Expr:
    """The pattern as shown: prefixed by its host when the logs have several hosts."""
    if len(traffic.hosts) > 1:
        return pl.concat_str(s.HOST, s.PATTERN).alias(_LABEL)
    return pl.col(s.PATTERN).alias(_LABEL)


def _check_top(top: object) -> None:
    """`top` of a figure: a number of patterns (-1 drew all but the last, as Polars' head)."""
    if isinstance(top, bool) or not isinstance(top, int) or top < 1:
        raise ConfigError(f"top must be a whole number of patterns, 1 or more, not {top!r}")


def _top(traffic: Traffic, order: list[str], n: int, keep: pl.Expr) -> pl.DataFrame:
    """The first n host+patterns by `order` (descending; ties by host, pattern): host,
    pattern, label, rank."""
    return (
        _per_pattern(traffic)
        .filter(keep)
        .sort([*order, s.HOST, s.PATTERN], descending=[True] * len(order) + [False, False])
        .head(n)
        .select(s.HOST, s.PATTERN, _label(traffic))
        .with_row_index(_RANK)
    )


def _per_pattern(traffic: Traffic) -> pl.DataFrame:
    """One row per host+pattern. `Traffic.patterns` also keys by section, so a pattern whose
    URLs fall in several sections would otherwise be ranked (and shown) more than once."""
    return traffic.patterns.group_by(s.HOST, s.PATTERN).agg(
        pl.col(s.REQUESTS, s.BOT_REQUESTS).sum(), pl.col(s.UNIQUE_URLS).max()
    )


def _chosen(traffic: Traffic, patterns: Sequence[str]) -> pl.DataFrame:
    """The host+patterns named in `patterns`, in that order (then by host)."""
    order = pl.DataFrame({s.PATTERN: list(patterns)}, schema={s.PATTERN: pl.String}).with_row_index(
        "order"
    )
    return (
        _per_pattern(traffic).join(order, on=s.PATTERN, how="inner")
        .sort("order", s.HOST)
        .select(s.HOST, s.PATTERN, _label(traffic))
        .with_row_index(_RANK)
    )


def _naive(column: str) -> pl.Expr:
    return pl.col(column).dt.replace_time_zone(None)


def _window_word(traffic: Traffic) -> str:
    return "hour" if traffic.window_size == "1h" else "day"


def _title(text: str, subtitle: str) -> dict:
    """The title and, below it, what the figure shows and how to read it (`title.subtitle`),
    top-left, below the mode bar.

    (The subtitle was once `<br><sup>` lines of the title anchored 0.99 down the figure:
    rendered, its first line was cut off at the top and the rest ran under the mode bar.)
    """
    # Plotly does not wrap titles: break the subtitle into lines that fit a notebook's width
    # (110 characters of 12px text, ~700 px, leave the legend its room).
    lines = textwrap.wrap(subtitle, _SUBTITLE_CHARS)
    return {
        "text": text,
        "subtitle": {"text": "<br>".join(lines)},
        "x": 0.01,
        "xanchor": "left",
        "y": 1,
        "yanchor": "top",
        "yref": "container",
        "pad": {"t": _MODEBAR},
    }


_SUBTITLE_CHARS = 110
_MODEBAR = 32  # px at the top of a figure the mode bar covers when the pointer is over it


def _top_margin(title: dict) -> int:
    """Room above the plot for the mode bar, the title and its subtitle's lines (px)."""
    lines = title["subtitle"]["text"].count("<br>") + 1
    return _MODEBAR + 30 + 17 * lines + 16


def _empty(title: dict, message: str = NO_DATA) -> go.Figure:
    """A figure with nothing to plot: the title, and `message` where the plot would be."""
    if message != NO_DATA and not message.startswith(NO_DATA):
        message = f"{NO_DATA}: {message}"
    fig = go.Figure()
    fig.update_layout(
        title=title,
        margin_t=_top_margin(title),
        xaxis_visible=False,
        yaxis_visible=False,
        annotations=[
            {
                "text": message,
                "xref": "paper",
                "yref": "paper",
                "x": 0.5,
                "y": 0.5,
                "showarrow": False,
                "font": {"size": 16},
            }
        ],
    )
    return fig


def _status_color(status: int, statuses: list[int]) -> str:
    shades = _STATUS_COLORS.get(status // 100, _ANY_STATUS_COLORS)
    same_class = [code for code in statuses if code // 100 == status // 100]
    return shades[same_class.index(status) % len(shades)]


def _size_bins(lo: int, hi: int) -> dict:
    """About `_SIZE_BINS` bins of a round width (1, 2 or 5 times a power of ten bytes) from a
    round start, covering lo..hi."""
    raw = max(1.0, (hi - lo + 1) / _SIZE_BINS)
    power = 10 ** math.floor(math.log10(raw))
    width = next(m * power for m in (1, 2, 5, 10) if m * power >= raw)
    start = lo // width * width
    return {"start": start, "end": (hi // width + 1) * width, "size": width}


def _bars_height(rows: int) -> int:
    """Tall enough that every pattern label stays readable."""
    return max(400, 28 * rows + 200)

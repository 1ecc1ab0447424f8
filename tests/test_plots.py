"""Each figure's traces checked value by value on a small, hand-counted Traffic."""

from __future__ import annotations

import subprocess
import sys
from datetime import datetime, timedelta, timezone

import plotly.graph_objects as go
import polars as pl
import pytest

from logtrap import plots
from logtrap import schema as s
from logtrap.errors import ConfigError
from logtrap.patterns import add_patterns
from logtrap.settings import Settings
from logtrap.traffic import Tally, Traffic

DAY0 = datetime(2026, 3, 1, 12, tzinfo=timezone.utc)
DAYS = [datetime(2026, 3, d) for d in (1, 2, 3)]  # windows as plotted: naive UTC

CAL = "/calendar?date"
ABOUT = "/about"
ARTICLE = "/article/{n}"


def _requests(rows: list[tuple[str, int, str, int, int | None, str | None]]) -> pl.DataFrame:
    """Requests with bot columns from (host, day, url, status, bytes, bot name or None)."""
    frame = pl.DataFrame(
        {
            s.HOST: [r[0] for r in rows],
            s.CLIENT: ["192.0.2.1"] * len(rows),
            s.TIME: [DAY0 + timedelta(days=r[1], seconds=i) for i, r in enumerate(rows)],
            s.METHOD: ["GET"] * len(rows),
            s.URL: [r[2] for r in rows],
            s.PATH: [r[2].partition("?")[0] for r in rows],
            s.QUERY: [r[2].partition("?")[2] or None for r in rows],
            s.PROTOCOL: ["HTTP/1.1"] * len(rows),
            s.STATUS: [r[3] for r in rows],
            s.BYTES: [r[4] for r in rows],
            s.REFERER: [None] * len(rows),
            s.USER_AGENT: [r[5] or "Mozilla/5.0 (X11; Linux x86_64) Firefox/130.0" for r in rows],
            s.REQUEST_TIME: [None] * len(rows),
            s.SOURCE: ["test.log"] * len(rows),
            s.IS_BOT: [r[5] is not None for r in rows],
            s.BOT_NAME: [r[5] for r in rows],
            s.BOT_KIND: ["search" if r[5] else None for r in rows],
        },
        schema={**s.REQUEST_SCHEMA, **s.BOT_SCHEMA},
    )
    return frame


def _traffic(rows) -> Traffic:
    tally = Tally()
    tally.add(add_patterns(_requests(rows), Settings()))
    return tally.finish()


def _site(host: str = "-") -> list[tuple]:
    """Googlebot walks an endless calendar, 2, 3 then 4 new months a day; bingbot reads
    /about and hits one calendar month that answers 404 with no body; a person reads."""
    cal = [(host, day, f"/calendar?date=20{day}{i}-01", 200, 512, "Googlebot")
           for day, n in enumerate((2, 3, 4)) for i in range(n)]
    return cal + [
        (host, 1, "/calendar?date=1999-01", 404, None, "bingbot"),
        (host, 0, "/about", 200, 3000, "bingbot"),
        (host, 0, "/about", 200, 3000, "bingbot"),
        (host, 2, "/about", 200, 3000, "bingbot"),
        (host, 1, "/about", 200, 3000, None),
        (host, 0, "/article/7", 200, 4100, None),
        (host, 0, "/article/8", 200, 4200, None),
    ]


@pytest.fixture(scope="module")
def site() -> Traffic:
    return _traffic(_site())


def _traces(fig: go.Figure) -> list[tuple]:
    return [(t.name, list(t.x), list(t.y)) for t in fig.data]


def test_the_builder_gives_the_patterns_the_expected_counts(site):
    # the hand counts every figure test below relies on
    assert site.patterns.select(s.PATTERN, s.BOT_REQUESTS, s.REQUESTS, s.UNIQUE_URLS).rows() == [
        (CAL, 10, 10, 10),
        (ABOUT, 3, 4, 1),
        (ARTICLE, 0, 2, 2),
    ]
    assert site.window_size == "1d"


def test_budget_by_pattern_stacks_bot_requests_per_day(site):
    fig = plots.budget_by_pattern(site)
    assert _traces(fig) == [(CAL, DAYS, [2, 4, 4]), (ABOUT, DAYS, [2, 0, 1])]
    assert {t.type for t in fig.data} == {"bar"}
    assert fig.layout.barmode == "stack"
    assert fig.layout.xaxis.title.text == "day (UTC)"
    assert fig.layout.yaxis.title.text == "bot requests"
    assert fig.layout.title.text.startswith("Where the crawlers' budget goes")


def test_budget_by_pattern_groups_the_rest_as_other_patterns(site):
    fig = plots.budget_by_pattern(site, top=1)
    assert _traces(fig) == [(CAL, DAYS, [2, 4, 4]), (plots.OTHER, DAYS, [2, 0, 1])]


def test_growth_curves_count_distinct_urls_to_date(site):
    fig = plots.growth_curves(site)
    assert _traces(fig) == [
        (CAL, DAYS, [2, 6, 10]),
        (ARTICLE, DAYS[:1], [2]),
        (ABOUT, DAYS, [1, 1, 1]),
    ]
    assert fig.layout.yaxis.title.text == "distinct URLs seen so far"
    assert plots.growth_curves(site, top=1).data[0].name == CAL
    assert len(plots.growth_curves(site, top=1).data) == 1


def test_status_mix_has_one_trace_per_status(site):
    fig = plots.status_mix(site)
    assert [(t.name, list(t.y), list(t.x)) for t in fig.data] == [
        ("200", [CAL, ABOUT, ARTICLE], [9, 4, 2]),
        ("404", [CAL, ABOUT, ARTICLE], [1, 0, 0]),
    ]
    assert [t.orientation for t in fig.data] == ["h", "h"]
    assert fig.layout.yaxis.autorange == "reversed"  # the busiest pattern on top
    assert fig.layout.legend.title.text == "HTTP status"


def test_bot_pattern_matrix_counts_each_bot_on_each_pattern(site):
    fig = plots.bot_pattern_matrix(site)
    (heatmap,) = fig.data
    assert heatmap.type == "heatmap"
    assert list(heatmap.x) == ["Googlebot", "bingbot"]
    assert list(heatmap.y) == [CAL, ABOUT]
    assert [list(row) for row in heatmap.z] == [[9, 1], [0, 3]]
    one = plots.bot_pattern_matrix(site, top_bots=1, top_patterns=1).data[0]
    assert (list(one.x), list(one.y), [list(r) for r in one.z]) == (["Googlebot"], [CAL], [[9]])


def test_size_distribution_weights_sizes_by_requests(site):
    fig = plots.size_distribution(site)
    assert [(t.name, list(t.x), list(t.y), t.histfunc) for t in fig.data] == [
        (CAL, [0, 512], [1, 9], "sum"),  # the 404 without a body counts as 0 bytes
        (ABOUT, [3000], [4], "sum"),
        (ARTICLE, [4100, 4200], [1, 1], "sum"),
    ]
    assert [a.text for a in fig.layout.annotations] == [  # panel titles
        f"{CAL} (10 sampled URLs)",
        f"{ABOUT} (1 sampled URL)",
        f"{ARTICLE} (2 sampled URLs)",
    ]
    # one set of round bins for every panel: 0..4200 bytes in 60 bins is 70 bytes a bin,
    # rounded up to 100
    assert {(t.xbins.start, t.xbins.end, t.xbins.size) for t in fig.data} == {(0, 4300, 100)}


def test_size_distribution_of_chosen_patterns_keeps_their_order(site):
    fig = plots.size_distribution(site, patterns=[ARTICLE, CAL])
    assert [t.name for t in fig.data] == [ARTICLE, CAL]
    fig = plots.size_distribution(site, patterns=["/nowhere"])
    assert fig.data == ()
    assert fig.layout.annotations[0].text == "no data for /nowhere"


def test_size_distribution_of_one_pattern_given_as_a_string(site):
    # a str is one pattern, not a sequence of one-character patterns ("/", "c", ...)
    fig = plots.size_distribution(site, patterns=CAL)
    assert [t.name for t in fig.data] == [CAL]
    assert [a.text for a in fig.layout.annotations] == [f"{CAL} (10 sampled URLs)"]


@pytest.mark.parametrize("name", list(plots.figures(Tally().finish())))
def test_every_figure_takes_an_analysis_as_its_traffic(site, name):
    from logtrap.analysis import Analysis
    from logtrap.findings import empty_findings

    analysis = Analysis(traffic=site, findings=empty_findings(), stats=None, settings=Settings())
    fig = getattr(plots, name)(analysis)
    assert fig.to_plotly_json() == getattr(plots, name)(site).to_plotly_json()


def test_a_figure_of_something_else_is_a_clear_error():
    with pytest.raises(ConfigError, match=r"^a figure plots a Traffic or an Analysis \(from "
                       r"logtrap.analyze\), not DataFrame$"):
        plots.growth_curves(pl.DataFrame())


@pytest.mark.parametrize("name", list(plots.figures(Tally().finish())))
def test_titles_stand_below_the_mode_bar_within_the_top_margin(site, name):
    # A three-line title (title<br><sup>two lines</sup>) anchored 0.99 down the figure lost
    # its first line above the page when rendered, and its subtitle ran under the mode bar.
    title = getattr(plots, name)(site).layout.title
    subtitle_lines = title.subtitle.text.count("<br>") + 1
    assert "<br>" not in title.text
    assert subtitle_lines == (3 if name == "size_distribution" else 2)
    assert (title.y, title.yanchor, title.yref, title.pad.t) == (1, "top", "container", 32)
    margin = getattr(plots, name)(site).layout.margin.t
    # the mode bar (32 px), the title (30 px), 17 px a subtitle line, 16 px between
    # (size_distribution: 24 more for its first panel's title)
    assert margin == 32 + 30 + 17 * subtitle_lines + 16 + (24 if name == "size_distribution" else 0)


def test_several_hosts_prefix_patterns_with_their_host():
    traffic = _traffic(_site("a.example") + _site("b.example")[:2])
    fig = plots.budget_by_pattern(traffic, top=2)
    assert _traces(fig) == [
        ("a.example" + CAL, DAYS, [2, 4, 4]),
        ("a.example" + ABOUT, DAYS, [2, 0, 1]),
        (plots.OTHER, DAYS, [2, 0, 0]),
    ]
    assert list(plots.bot_pattern_matrix(traffic).data[0].y) == [
        "a.example" + CAL,
        "a.example" + ABOUT,
        "b.example" + CAL,
    ]


@pytest.mark.parametrize("name", list(plots.figures(Tally().finish())))
def test_empty_traffic_gives_a_titled_no_data_figure(name):
    fig = getattr(plots, name)(Tally().finish())
    assert fig.data == ()
    assert [a.text for a in fig.layout.annotations] == ["no data"]
    assert fig.layout.title.text


def test_humans_only_say_there_were_no_bot_requests():
    traffic = _traffic([("-", 0, "/about", 200, 10, None)])
    for fig in (plots.budget_by_pattern(traffic), plots.bot_pattern_matrix(traffic)):
        assert fig.data == ()
        assert fig.layout.annotations[0].text == "no data: no bot requests in these logs"
    assert traffic.window_size == "1h"
    assert _traces(plots.growth_curves(traffic)) == [(ABOUT, [datetime(2026, 3, 1, 12)], [1])]


def test_hourly_windows_say_hour():
    traffic = _traffic([("-", 0, "/about", 200, 10, "bingbot")])
    assert traffic.window_size == "1h"
    assert plots.budget_by_pattern(traffic).layout.xaxis.title.text == "hour (UTC)"


def test_figures_need_no_pandas():
    # plotly.express would pull pandas in; graph_objects with plain lists must not
    code = """
import sys
from datetime import datetime, timezone
import polars as pl
from logtrap import plots
from logtrap.traffic import Tally
tally = Tally()
tally.add(pl.DataFrame({
    "host": ["-"], "client": ["192.0.2.1"], "time": [datetime(2026, 3, 1, tzinfo=timezone.utc)],
    "url": ["/a?x=1"], "status": [200], "bytes": [10], "is_bot": [True],
    "bot_name": ["Googlebot"], "bot_kind": ["search"], "pattern": ["/a?x"], "section": ["/a"]}))
figures = plots.figures(tally.finish())
assert all(fig.data for fig in figures.values())
[fig.to_json() for fig in figures.values()]
print("pandas" in sys.modules)
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_a_pattern_spread_over_sections_is_shown_once():
    # Traffic.patterns keys by section too; the figures rank and show host+patterns
    rows = _requests([("-", 0, "/item/1", 200, 10, "bingbot"), ("-", 0, "/item/2", 200, 10, None)])
    tally = Tally()
    tally.add(rows.with_columns(
        pl.lit("/item/{n}").alias(s.PATTERN), pl.col(s.PATH).alias(s.SECTION)
    ))
    traffic = tally.finish()
    assert traffic.patterns.height == 2
    fig = plots.status_mix(traffic)
    assert [(t.name, list(t.y), list(t.x)) for t in fig.data] == [("200", ["/item/{n}"], [2])]


def test_a_number_of_patterns_below_one_is_refused():
    # top=-1 drew every pattern but the last (Polars' head(-1))
    from logtrap.errors import ConfigError
    from logtrap.traffic import Tally

    with pytest.raises(ConfigError, match=r"^top must be a whole number of patterns, 1 or more, not -1$"):
        plots.growth_curves(Tally().finish(), top=-1)

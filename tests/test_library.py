"""The library as a notebook uses it: `analyze` on the analyst's own frames, the summary and
`Analysis.add_patterns` of a frame agreeing with those of the logs, and the errors a
custom detector meets."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest

import logtrap
from logtrap import Detector, InputError, LogtrapError, Settings, analyze, read_logs
from logtrap.report import to_dict

ROOT = Path(__file__).resolve().parent.parent
LITESPEED = str(ROOT / "sample_logs" / "litespeed" / "access.log*")
# Its one finding, as `analyze` of the files gives it
FINDING = [("aggressive_bot", "critical", "-", "/asl/{n}", 2136, 1888)]
NEEDED = "host, client, time, url, status, bytes, user_agent"


@pytest.fixture(scope="module")
def requests() -> pl.DataFrame:
    return read_logs(LITESPEED)


def found(result) -> list[tuple]:
    return result.findings.select(
        "kind", "severity", "host", "pattern", "requests", "wasted_requests").rows()


def test_the_files_give_the_finding():
    assert found(analyze(LITESPEED)) == FINDING


# Frames whose dtypes can be made the reader's without losing anything: the same finding.
CASTABLE = {
    "LazyFrame": lambda df: df.lazy(),
    "naive time (taken as UTC)": lambda df: df.with_columns(pl.col("time").dt.replace_time_zone(None)),
    "time in Europe/Paris": lambda df: df.with_columns(pl.col("time").dt.convert_time_zone("Europe/Paris")),
    "time in ms": lambda df: df.with_columns(pl.col("time").dt.cast_time_unit("ms")),
    "status Int64, bytes Int32": lambda df: df.with_columns(pl.col("status").cast(pl.Int64),
                                                           pl.col("bytes").cast(pl.Int32)),
    "bytes UInt64": lambda df: df.with_columns(pl.col("bytes").cast(pl.UInt64)),
    "host Categorical, url Enum": lambda df: df.with_columns(
        pl.col("host").cast(pl.Categorical), pl.col("url").cast(pl.Enum(df["url"].unique()))),
    "only the analysis columns": lambda df: df.select(NEEDED.split(", ")),
}


@pytest.mark.parametrize("change", list(CASTABLE), ids=list(CASTABLE))
def test_a_frame_whose_dtypes_cast_safely_gives_the_files_finding(requests, change):
    assert found(analyze(CASTABLE[change](requests))) == FINDING


def test_a_naive_time_is_taken_as_utc(requests):
    naive = requests.with_columns(pl.col("time").dt.replace_time_zone(None))
    assert analyze(naive).traffic.start == analyze(requests).traffic.start


# Frames that are no requests: one InputError, before anything is read, saying what is wrong.
WRONG = {
    "time as text": (
        lambda df: df.with_columns(pl.col("time").dt.to_string("%Y-%m-%dT%H:%M:%S%z")),
        "time is String, not Datetime (a time zone, converted to UTC; none: taken as UTC)",
    ),
    "status as text": (
        lambda df: df.with_columns(pl.col("status").cast(pl.String)),
        "status is String, not integer",
    ),
    "no host, no bytes": (lambda df: df.drop("host", "bytes"), "host is missing; bytes is missing"),
    "own column names": (lambda df: df.rename({"url": "request_uri"}), "url is missing"),
    "an empty frame": (
        lambda df: pl.DataFrame(),
        "host is missing; client is missing; time is missing; url is missing; status is "
        "missing; bytes is missing; user_agent is missing",
    ),
}


@pytest.mark.parametrize("case", list(WRONG), ids=list(WRONG))
def test_a_frame_that_is_no_requests_is_one_clear_error(requests, case):
    change, problems = WRONG[case]
    with pytest.raises(InputError) as caught:
        analyze(change(requests))
    assert str(caught.value) == (
        f"a frame of requests needs the columns {NEEDED} (as read_logs gives them): {problems}")


def test_a_frame_without_hosts_is_told_how_to_add_them(requests):
    with pytest.raises(InputError) as caught:
        analyze(requests.drop("host"))
    assert caught.value.hint == 'a log without virtual hosts: .with_columns(host=pl.lit("-")), as read_logs does'


def test_a_status_out_of_range_is_an_error_not_a_wrapped_number(requests):
    with pytest.raises(InputError, match=r"^the frame of requests cannot be read as requests: "
                       r"conversion from `i64` to `u16` failed in column 'status'"):
        analyze(requests.with_columns(pl.col("status").cast(pl.Int64) * 1000))


@pytest.mark.parametrize(
    ("sources", "message"),
    [
        (42, 'logs to read are paths, globs or "-", or a frame from read_logs; not int'),
        ([1.5], 'logs to read are paths, globs or "-"; not float \'1.5\''),
        ("frames", "several frames of requests: analyze takes one"),
    ],
)
def test_sources_that_are_no_logs_are_one_clear_error(requests, sources, message):
    if sources == "frames":
        sources = [requests, requests]
    with pytest.raises(InputError) as caught:
        analyze(sources)
    assert str(caught.value) == message


def test_read_logs_of_a_frame_says_to_analyse_the_frame(requests):
    # iterated, the frame gave its columns: the error printed a Series, "no file matches"
    with pytest.raises(InputError) as caught:
        read_logs(requests)
    assert (str(caught.value), caught.value.hint) == (
        'logs to read are paths, globs or "-", not a frame of requests',
        "a frame of requests is analysed as it is: logtrap.analyze(frame)")
    with pytest.raises(InputError, match="not int '7'"):
        read_logs(["sample_logs/litespeed/access.log", 7])


def apache_log(tmp_path: Path) -> Path:
    """Two requests, and three of Apache's own `OPTIONS *` (its internal dummy connections)."""
    dummy = '127.0.0.1 - - [28/Nov/2026:10:00:0{s} +0000] "OPTIONS * HTTP/1.0" 200 126 "-" ' \
        '"Apache/2.4.29 (Ubuntu) (internal dummy connection)"\n'
    get = '66.249.66.1 - - [28/Nov/2026:10:00:0{s} +0000] "GET /a/{s} HTTP/1.1" 200 512 "-" ' \
        '"Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)"\n'
    path = tmp_path / "access.log"
    path.write_text("".join(line.format(s=i) for i, line in enumerate([get, dummy, dummy, get, dummy])))
    return path


def test_a_frame_summary_is_the_summary_of_its_logs(tmp_path):
    path = apache_log(tmp_path)
    keys = ("lines", "parsed", "rejected", "requests", "server_requests", "bot_requests")
    from_path = to_dict(analyze(str(path)))["summary"]
    from_frame = to_dict(analyze(read_logs(str(path))))["summary"]
    assert [from_frame[k] for k in keys] == [from_path[k] for k in keys] == [5, 5, 0, 2, 3, 2]


def test_add_patterns_leaves_out_what_the_analysis_does_not_count(tmp_path):
    path = apache_log(tmp_path)
    result = analyze(str(path))
    requests = result.add_patterns(read_logs(str(path)))
    assert requests.select("url", "pattern").rows() == [("/a/0", "/a/{n}"), ("/a/3", "/a/{n}")]
    assert result.patterns.select("pattern", "requests").rows() == [("/a/{n}", 2)]


def test_add_patterns_keeps_only_the_hosts_analysed():
    vhost = str(ROOT / "sample_logs" / "vhost" / "access.log*")
    result = analyze(vhost, Settings(hosts=("www.example.net",)))
    requests = result.add_patterns(read_logs(vhost))
    assert requests["host"].unique().to_list() == ["www.example.net"]
    assert requests.height == result.patterns["requests"].sum() == 2710


def test_a_host_no_request_of_a_frame_names_is_an_error_as_from_the_logs():
    vhost = str(ROOT / "sample_logs" / "vhost" / "access.log*")
    settings = Settings(hosts=("nosuch.example",))
    message = ("no request for nosuch.example in these logs (7,203 requests parsed; hosts: "
               "news.example.net (4,493), www.example.net (2,710))")
    for sources in (vhost, read_logs(vhost)):
        with pytest.raises(logtrap.ConfigError) as caught:
            analyze(sources, settings)
        assert str(caught.value) == message


# -- a detector of one's own ----------------------------------------------------------------

WANTED = ("kind (String), severity (info|warning|critical), host (String), pattern (String), "
          "requests (Int64), wasted_requests (Int64), examples (List(String)), evidence "
          "(String), advice (String)")


def test_a_detector_returning_other_columns_is_named_with_the_schema_it_owes():
    def mine(traffic, settings):
        return traffic.patterns.select("host", "pattern", "requests")

    with pytest.raises(LogtrapError) as caught:
        analyze(LITESPEED, detectors=[Detector("mine", mine)])
    assert str(caught.value) == (
        "detector 'mine' returned columns host, pattern, requests; missing kind, severity, "
        f"wasted_requests, examples, evidence, advice. A detector returns FINDING_SCHEMA: {WANTED}")
    assert caught.value.hint.startswith("build its rows with logtrap.finding_rows(")


def test_a_detector_returning_no_frame_or_raising_is_named():
    with pytest.raises(LogtrapError, match=r"^detector 'none' returned NoneType, not a DataFrame"):
        analyze(LITESPEED, detectors=[Detector("none", lambda traffic, settings: None)])
    with pytest.raises(LogtrapError, match=r"^detector 'boom' failed: ZeroDivisionError: "):
        analyze(LITESPEED, detectors=[Detector("boom", lambda traffic, settings: 1 / 0)])


def test_a_detector_whose_dtypes_cast_strictly_is_accepted():
    def mine(traffic, settings):  # requests as Int32, columns in another order
        return traffic.patterns.filter(pl.col("pattern") == "/").select(
            "host", "pattern", pl.col("requests").cast(pl.Int32), pl.lit(0).alias("wasted_requests"),
            pl.lit(["/"]).alias("examples"), pl.lit("{}").alias("evidence"),
            pl.lit("mine").alias("kind"), pl.lit("info").alias("severity"), pl.lit("").alias("advice"))

    result = analyze(LITESPEED, detectors=[Detector("mine", mine)])
    assert found(result) == [("mine", "info", "-", "/", 353, 0)]


def test_finding_rows_names_the_severities():
    rows = pl.DataFrame({"host": ["-"], "pattern": ["/x"], "requests": [1], "wasted_requests": [1],
                         "examples": [["/x"]]})
    with pytest.raises(LogtrapError) as caught:
        logtrap.finding_rows("mine", rows, severity="high", evidence=[], advice="a")
    assert str(caught.value) == "mine: severity 'high' is none of info, warning, critical"
    with pytest.raises(LogtrapError, match=r"^mine: finding_rows needs .* the rows lack examples, size$"):
        logtrap.finding_rows("mine", rows.drop("examples"), severity="info", evidence=["size"], advice="a")


def test_the_public_docstrings_say_what_they_take():
    assert "FINDING_SCHEMA" in Detector.__doc__ and "detect(traffic, settings)" in Detector.__doc__
    assert "FINDING_SCHEMA" in logtrap.run_detectors.__doc__
    assert "taken as UTC" in analyze.__doc__


def test_the_readme_stages_example_finds_what_analyze_finds(monkeypatch):
    import re

    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    (code,) = [block for block in re.findall(r"```python\n(.*?)```", readme, re.S)
               if "verify_claims" in block]
    monkeypatch.chdir(ROOT)  # its paths are the repo's
    scope: dict = {"logtrap": logtrap}
    exec(code, scope)
    expected = analyze("sample_logs/vhost/access.log*", scope["settings"]).findings
    assert scope["findings"].equals(expected)
    assert sorted(set(expected["kind"])) == ["fake_bot", "growing_pattern", "random_token"]

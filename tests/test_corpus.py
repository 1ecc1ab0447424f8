"""Every real log in ../shared/corpus/real parses with zero rejected lines, with exact values."""

from __future__ import annotations

from datetime import datetime, timezone
from pathlib import Path

import polars as pl
import pytest
from polars.testing import assert_frame_equal

from logtrap import schema as s
from logtrap.logs import read_logs, scan_logs
from logtrap.settings import Settings

CORPUS = Path(__file__).resolve().parents[2] / "shared" / "corpus" / "real"
pytestmark = pytest.mark.skipif(
    not CORPUS.is_dir(), reason="real corpus not present (../shared/corpus/real)"
)
UTC = timezone.utc

# The netnea format exactly as SOURCES.md gives it (with the `%X` field).
NETNEA_FORMAT = (
    '%h %{GEOIP_COUNTRY_CODE}e %u [%{%Y-%m-%d %H:%M:%S}t.%{usec_frac}t] "%r" %>s %b '
    '"%{Referer}i" "%{User-Agent}i" %v %A %p %R %{BALANCER_WORKER_ROUTE}e %X "%{cookie}n" '
    "%{UNIQUE_ID}e %{SSL_PROTOCOL}x %{SSL_CIPHER}x %I %O %{ratio}n%% %D %{ModSecTimeIn}e "
    "%{ApplicationTime}e %{ModSecTimeOut}e %{ModSecAnomalyScoreIn}e %{ModSecAnomalyScore}e"
)

# file -> (lines as `wc -l` counts them, detected format, first row's values)
EXPECTED = {
    "elastic_apache_combined_2015.log": (10_000, "combined", {
        s.HOST: "-", s.CLIENT: "83.149.9.216", s.TIME: datetime(2015, 5, 17, 10, 5, 3, tzinfo=UTC),
        s.METHOD: "GET", s.PATH: "/presentations/logstash-monitorama-2013/images/kibana-search.png",
        s.STATUS: 200, s.BYTES: 203023,
        s.REFERER: "http://semicomplete.com/presentations/logstash-monitorama-2013/"}),
    "netnea_extended_2015.log": (10_000, "netnea", {
        s.HOST: "www.example.com", s.CLIENT: "75.249.65.145",
        s.TIME: datetime(2015, 9, 2, 10, 42, 51, 3372, tzinfo=UTC),
        s.PATH: "/cms/tina-access-editor-for-download/", s.STATUS: 200, s.BYTES: 7113,
        s.REQUEST_TIME: 0.088871}),
    "geolynx_vhost_combined_2020.log": (9_935, "vhost_combined", {
        s.HOST: "fenix.geolynx.com.ar", s.CLIENT: "181.10.31.82",
        s.TIME: datetime(2020, 11, 2, 9, 55, 25, tzinfo=UTC), s.PATH: "/", s.STATUS: 503,
        s.BYTES: 2595}),
    "geolynx_combined_2020.log": (7_395, "combined", {
        s.HOST: "-", s.CLIENT: "5.188.210.227", s.TIME: datetime(2020, 11, 13, 6, 37, 22, tzinfo=UTC),
        s.PROTOCOL: "HTTP/1.0", s.STATUS: 400, s.BYTES: 0, s.USER_AGENT: "-"}),
    "twiki_common_2004.log": (1_535, "common", {
        s.CLIENT: "64.242.88.10", s.TIME: datetime(2004, 3, 8, 0, 5, 49, tzinfo=UTC),
        s.PATH: "/twiki/bin/edit/Main/Double_bounce_sender",
        s.QUERY: "topicparent=Main.ConfigurationVariables", s.STATUS: 401, s.BYTES: 12846,
        s.USER_AGENT: None}),
    "nasa_aug95_head.log": (1_880, "common", {
        s.CLIENT: "in24.inetnebr.com", s.TIME: datetime(1995, 8, 1, 4, 0, 1, tzinfo=UTC),
        s.PATH: "/shuttle/missions/sts-68/news/sts-68-mcc-05.txt", s.STATUS: 200, s.BYTES: 1839}),
}


def test_corpus_holds_exactly_the_expected_files():
    assert sorted(p.name for p in CORPUS.glob("*.log")) == sorted(EXPECTED)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_real_log_parses_with_no_rejected_line(name):
    lines, fmt, first = EXPECTED[name]
    path = str(CORPUS / name)
    stream = scan_logs(path)
    req = pl.concat(list(stream))
    st = stream.stats
    assert (st.lines, st.parsed, st.rejected, stream.formats[path].name) == (lines, lines, 0, fmt)
    assert req.height == lines
    assert req[s.TIME].null_count() == 0
    row = req.row(0, named=True)
    assert {k: row[k] for k in first} == first


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_real_log_reads_the_same_without_the_c_cut(name, monkeypatch):
    # every line the cut takes, it cuts as Polars does (netnea's strftime time included)
    from logtrap import formats

    path = CORPUS / name
    with_cut = read_logs(path)
    monkeypatch.setattr(formats, "_cut", None)
    assert_frame_equal(with_cut, read_logs(path))


def test_netnea_with_its_format_string_from_sources_equals_auto_detection():
    path = CORPUS / "netnea_extended_2015.log"
    assert_frame_equal(read_logs(path, log_format=NETNEA_FORMAT), read_logs(path))


def test_all_files_at_once_in_small_batches():
    stream = scan_logs(str(CORPUS / "*.log"), settings=Settings(batch_bytes=64 * 1024))
    total = sum(frame.height for frame in stream)
    assert total == stream.stats.lines == sum(v[0] for v in EXPECTED.values()) == 40_745


def test_elastic_line_8899_truncated_user_agent_is_parsed_leniently():
    # The line ends inside the user agent (no closing quote). Every other field is whole, so
    # the request is kept and the user agent is what the line holds.
    req = read_logs(CORPUS / "elastic_apache_combined_2015.log")
    row = req.row(8898, named=True)
    assert (row[s.CLIENT], row[s.PATH], row[s.STATUS], row[s.BYTES], row[s.USER_AGENT]) == (
        "46.118.127.106", "/scripts/grok-py-test/configlib.py", 200, 235,
        "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html")
    assert req.filter(pl.col(s.BYTES).is_null()).height == 669  # size "-"


def test_geolynx_junk_requests_are_rows_without_a_request():
    vhost = read_logs(CORPUS / "geolynx_vhost_combined_2020.log")
    assert vhost.filter(pl.col(s.URL).is_null()).height == 541  # 327 "-" and 214 TLS/binary
    assert vhost[s.HOST].value_counts(sort=True).rows() == [
        ("fenix.geolynx.com.ar", 7664), ("geolynx.com.ar", 2077), ("127.0.0.1", 194)]
    combined = read_logs(CORPUS / "geolynx_combined_2020.log")
    tls = combined.row(582, named=True)  # line 583: "\x16\x03\x01" 400
    assert (tls[s.CLIENT], tls[s.STATUS], tls[s.METHOD], tls[s.URL]) == (
        "49.49.234.182", 400, None, None)
    # line 597: Apache's \" inside the user agent is unescaped
    assert combined.row(596, named=True)[s.USER_AGENT].startswith('"Mozilla/4.0 (compatible;')


def test_twiki_crlf_lines_have_no_carriage_return():
    req = read_logs(CORPUS / "twiki_common_2004.log")
    assert req.filter(pl.col(s.PATH).str.contains("\r") | pl.col(s.PROTOCOL).str.contains("\r")).height == 0
    assert req[s.PROTOCOL].unique().sort().to_list() == ["HTTP/1.0", "HTTP/1.1"]

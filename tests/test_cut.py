"""The C cut (`logtrap/_cut.c`, `formats.parse_chunk`) gives what the Polars way gives, line for
line: the same requests, the same rejected lines, the same count of lines."""

from __future__ import annotations

import glob
import gzip

import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from polars.testing import assert_frame_equal

from logtrap import formats, logs, scan_logs
from logtrap.analysis import ANALYSIS_COLUMNS, OPTIONAL_COLUMNS
from logtrap.formats import compile_format, parse_chunk, parse_lines, to_lines
from logtrap.schema import REQUEST_SCHEMA
from logtrap.settings import Settings

COMBINED = (
    '66.249.66.1 - frank [28/Nov/2026:10:00:00 +0100] "GET /cal?date=2026-11 HTTP/1.1" 200 5120 '
    '"https://ex.org/" "Mozilla/5.0 (compatible; Googlebot/2.1)"'
)
STRFTIME_SPEC = '%h %{%d/%b/%Y %T}t %{%z}t "%r" %>s %b'  # strftime, fixed-width directives
ISO_SPEC = '$remote_addr - $remote_user [$time_iso8601] "$request" $status $body_bytes_sent "$http_user_agent"'
FORMATS = [
    "combined", "common", "vhost_combined", "vhost_common", "nginx", "combined_extra",
    "host_combined",
    '%h %l %u %t "%U%q" %>s %b',
    '$remote_addr [$time_local] "$request" $status $body_bytes_sent $request_time $msec',
    '%v:%p %h %{sec}t.%{usec_frac}t %{msec_frac}t "%r" %s %>s %B %D',
    '%h %t "%r" %>s %b %{Host}i|%{User-Agent}i',
    STRFTIME_SPEC,
    "netnea",
    ISO_SPEC,
]
STRFTIME = '1.2.3.4 28/Nov/2026 10:00:00 +0100 "GET /a?b=1 HTTP/1.1" 200 512'
ISO = '1.2.3.4 - - [2026-11-28T10:00:00+01:00] "GET /a?b=1 HTTP/1.1" 200 512 "Mozilla/5.0 (X)"'


def polars_way(
    chunk: bytes, fmt: formats.LogFormat, columns: list[str] | None = None
) -> tuple[pl.DataFrame, pl.DataFrame, int]:
    lines = to_lines(chunk)
    req, bad = parse_lines(lines, fmt, columns=columns)
    return req, bad, lines.height


def assert_same(chunk: bytes, spec: str, columns: list[str] | None = None) -> None:
    fmt = compile_format(spec)
    assert fmt.cut is not None, spec
    req, bad, n = parse_chunk(chunk, fmt, columns=columns)
    want_req, want_bad, want_n = polars_way(chunk, fmt, columns)
    assert n == want_n
    assert_frame_equal(req, want_req)
    assert_frame_equal(bad, want_bad)


def test_the_c_extension_is_built():
    # `pip install -e .` builds it wherever a C compiler is (CI has gcc); without it every
    # test here would compare the Polars way with itself.
    assert formats._cut is not None


@pytest.mark.parametrize("spec", FORMATS)
def test_every_format_the_cut_takes_has_a_program(spec):
    assert compile_format(spec).cut is not None


def test_a_quoted_apache_time_is_cut_as_text_and_read_by_polars():
    # (adversarial review 20: the cut was asked to turn a quoted field into a time, refused
    # the program, and the read failed)
    spec = '"$time_local" "$remote_addr" "$request" $status'
    line = '"28/Nov/2026:10:00:00 +0100" "1.2.3.4" "GET /a HTTP/1.1" 200\n'
    assert compile_format(spec).cut is not None
    assert_same(line.encode(), spec)
    req, _, _ = parse_chunk(line.encode(), compile_format(spec))
    assert str(req.get_column("time")[0]) == "2026-11-28 09:00:00+00:00"


def test_a_program_the_cut_cannot_run_is_refused_not_run():
    for column in (2**31 - 1, -2**31, 1):
        with pytest.raises(ValueError, match="bad program step"):
            formats._cut.cut(b"x\n", ((2, b" ", column, 0),), b"s")
    with pytest.raises(ValueError, match="bad program step"):  # a time from a quoted field
        formats._cut.cut(b"x\n", ((1, b"", 0, 2),), b"i")
    # (adversarial review 20: columns no step fills were read unwritten; a step that is no
    # tuple returned an error without an exception)
    for steps, kinds in [(((2, b" ", 0, 0),), b"ss"), (((0, b"ab", 0, 0),), b"s"),
                         (((2, b" ", 0, 0), (2, b" ", 0, 0)), b"s")]:
        with pytest.raises(ValueError, match="bad program step"):
            formats._cut.cut(b"ab\n", steps, kinds)
    with pytest.raises(ValueError, match="is a tuple"):
        formats._cut.cut(b"a\n", (5,), b"s")
    # a column not wanted ('x') is text left out: an Apache time (an integer) is no such column
    with pytest.raises(ValueError, match="bad program step"):
        formats._cut.cut(b"x\n", ((10, b"", 0, 2),), b"x")
    with pytest.raises(ValueError, match="'s', 'i' or 'x'"):
        formats._cut.cut(b"x\n", ((2, b"", 0, 0),), b"y")
    assert formats._cut.cut(b"a b\n", ((2, b" ", 0, 0), (0, b" ", -1, 0), (2, b"", 1, 0)),
                            b"xs")[2][0] is None


@pytest.mark.parametrize("spec", ['%{User-Agent}i"', '%v %h"', '$host"'])
def test_a_format_that_takes_a_blank_line_keeps_the_polars_way(spec):
    fmt = compile_format(spec)
    assert fmt.cut is None
    assert_frame_equal(parse_chunk(b" \n\t\n", fmt)[0], polars_way(b" \n\t\n", fmt)[0])


def test_formats_with_bodies_the_cut_does_not_know_keep_the_polars_way():
    assert compile_format('%h %{%B %d %Y}t "%r" %>s').cut is None  # %B: a month's name, any width
    assert compile_format("%h %t %r %>s").cut is None  # no quote: the full regex only


def test_exact_values_of_a_combined_line_and_its_neighbours():
    chunk = "\n".join([
        "\ufeff" + COMBINED,  # a byte-order mark opens the chunk: dropped
        "",  # blank lines count as lines, and are neither parsed nor rejected
        " \t",
        COMBINED.replace("Mozilla", '\\"Mozilla'),  # an escape: the Polars way, in its row
        COMBINED.replace("28/Nov", "31/Jun"),  # no such day: a bad time, with its line
        COMBINED.replace("frank", "frank smith"),  # a user with a space: the full regex
        COMBINED.replace("/cal", "/café"),  # not ASCII: the Polars way
        "junk",
        COMBINED + "\r",  # a CR before the newline is dropped
    ]).encode()
    req, bad, n = parse_chunk(chunk, compile_format("combined"))
    assert n == 9
    assert req.get_column("path").to_list() == ["/cal", "/cal", "/cal", "/café", "/cal"]
    assert req.get_column("user_agent").to_list()[1] == '"Mozilla/5.0 (compatible; Googlebot/2.1)'
    assert req.row(0, named=True) | {"time": None} == {
        "host": "-", "client": "66.249.66.1", "time": None, "method": "GET",
        "url": "/cal?date=2026-11", "path": "/cal", "query": "date=2026-11", "protocol": "HTTP/1.1",
        "status": 200, "bytes": 5120, "referer": "https://ex.org/",
        "user_agent": "Mozilla/5.0 (compatible; Googlebot/2.1)", "request_time": None,
        "source": "-",
    }
    assert str(req.get_column("time")[0]) == "2026-11-28 09:00:00+00:00"
    assert bad.rows() == [
        (4, COMBINED.replace("28/Nov", "31/Jun"), "bad time"),
        (7, "junk", "does not match combined"),
    ]
    assert_same(chunk, "combined")


@pytest.mark.parametrize("spec, line", [
    ("combined", COMBINED), (ISO_SPEC, ISO), (ISO_SPEC, ISO.replace("+01:00", ".250Z")),
])
def test_the_cut_is_used_for_clean_lines(spec, line):
    # every clean line is cut in C: nothing handed back to Polars
    fmt = compile_format(spec)
    n, fast_rows, _, slow_rows, slow_text = formats._cut.cut(
        ((line + "\n") * 3 + "\n").encode(), fmt.cut.steps, fmt.cut.kinds)
    assert (n, len(fast_rows) // 4, slow_rows, slow_text) == (4, 3, b"", b"")


@pytest.mark.parametrize("request_line", [
    "GET / HTTP/1.1", "GET /a?b=1&c HTTP/2", "GET /a?", "GET ?x HTTP/1.0", "GET", "GET ",
    " GET / HTTP/1.1", "G3T.x-_ /", "3GET / HTTP/1.1", "GET  HTTP/1.1", "GET HTTP/1.1",
    "GET  HTTP/", "GET HTTP/", "GET x HTTP/", "GET /a HTTP/1.1 HTTP/1.1", "-", "",
    "\x16\x03\x01", "GET /a b c HTTP/1.1", "GET http://ex.org/a?b HTTP/1.1",
])
def test_request_lines_split_as_polars_splits_them(request_line):
    assert_same(COMBINED.replace("GET /cal?date=2026-11 HTTP/1.1", request_line).encode(),
                "combined")


@pytest.mark.parametrize("stamp", [
    "28/Nov/2026:10:00:00 +0100", "29/Feb/2024:23:59:59 -1130", "29/Feb/2023:00:00:00 +0000",
    "31/Apr/2026:00:00:00 +0000", "00/Jan/2026:00:00:00 +0000", "01/nov/2026:00:00:00 +0000",
    "01/NOV/2026:00:00:00 +0000", "01/Xyz/2026:00:00:00 +0000", "01/Jan/2026:24:00:00 +0000",
    "01/Jan/2026:23:60:00 +0000", "31/Dec/2026:23:59:60 +0000", "01/Jan/0000:00:00:00 +0000",
    "01/Jan/0001:00:00:00 +0100", "31/Dec/9999:23:59:59 -0100", "01/Jan/1969:12:00:00 +2359",
    "15/Oct/1582:00:00:00 +0000", "01/Jan/1900:00:00:00 -2300",
])
def test_times_read_as_polars_reads_them(stamp):
    assert_same(COMBINED.replace("28/Nov/2026:10:00:00 +0100", stamp).encode(), "combined")


# Times the cut checks by their shape and Polars reads from the text: (format, a clean line,
# its time)
TEXT_TIMES = {
    "iso": (ISO_SPEC, ISO, "2026-11-28T10:00:00+01:00"),  # `_ISO_TIME`
    "strftime": (STRFTIME_SPEC, STRFTIME, "28/Nov/2026 10:00:00 +0100"),  # `formats._shape`
}


@pytest.mark.parametrize("kind, stamp", [("iso", stamp) for stamp in (
    "2026-11-28T10:00:00+01:00", "2026-11-28T10:00:00Z", "2026-11-28T10:00:00.123+0100",
    "2026-11-28T10:00:00.5-05:30", "2026-02-30T10:00:00+00:00", "2026-11-28T24:00:00+00:00",
    "0001-01-01T00:00:00+01:00", "9999-12-31T23:59:59-01:00", "2026-11-28T10:00:00.+01:00",
    "2026-11-28T10:00:00+1:00", "2026-11-28T10:00:00+01:0", "2026-11-28T10:00:00+01:000",
    "2026-11-28 10:00:00+01:00", "2026-11-28T10:00:00", "2026-11-28T10:00:00z",
)] + [("strftime", stamp) for stamp in (
    "28/Nov/2026 10:00:00 +0100", "31/Jun/2026 10:00:00 +0100", "28/nov/2026 10:00:00 -0000",
    "28/Nov/2026 24:00:00 +0100", "28/Nov/2026 10:00:00 0100", "2/Nov/2026 10:00:00 +0100",
    "28/Nov/2026 10:00 +0100", "28/No1/2026 10:00:00 +0100", "28/Nov/2026 10:00:00 +01",
)])
def test_times_cut_as_text_are_read_as_polars_reads_them(kind, stamp):
    # cut as text and read by Polars as without the cut: a bad date is a bad time either
    # way, a bad shape a line the regex does not match
    spec, clean, time = TEXT_TIMES[kind]
    assert_same(f"{clean.replace(time, stamp)}\n{clean}\n".encode(), spec)


@pytest.mark.parametrize("kind, stamps, utc", [
    ("iso", ["2026-11-28T10:00:00+01:00", "2026-11-28T09:00:00.123Z", "2026-11-28T04:00:00-0500"],
     ["2026-11-28 09:00:00+00:00", "2026-11-28 09:00:00.123000+00:00", "2026-11-28 09:00:00+00:00"]),
    ("strftime", ["28/Nov/2026 10:00:00 +0100", "28/Nov/2026 10:00:00 -0230"],
     ["2026-11-28 09:00:00+00:00", "2026-11-28 12:30:00+00:00"]),
])
def test_times_cut_as_text_have_their_exact_values(kind, stamps, utc):
    spec, clean, time = TEXT_TIMES[kind]
    fmt = compile_format(spec)
    chunk = "".join(clean.replace(time, stamp) + "\n" for stamp in stamps).encode()
    fast_rows = formats._cut.cut(chunk, fmt.cut.steps, fmt.cut.kinds)[1]
    assert len(fast_rows) // 4 == len(stamps)  # every line cut in C
    req, bad, n = parse_chunk(chunk, fmt)
    assert [str(t) for t in req["time"]] == utc
    assert (req["url"].to_list(), bad.height, n) == (["/a?b=1"] * len(stamps), 0, len(stamps))


# Which request columns a read keeps: all (None), the analysis' own, or any few
_columns = st.one_of(
    st.none(),
    st.just([*ANALYSIS_COLUMNS, *OPTIONAL_COLUMNS]),
    st.lists(st.sampled_from(list(REQUEST_SCHEMA)), min_size=1, unique=True),
)
_bits = st.sampled_from([
    '"', "\\", " ", "\\\"", "-", "[", "]", ":", "200", "x", "\t", "%", "?", " HTTP/", "\r",
    "\x00", "é", "\n", "\n\n", "0", "9", "Feb", "nov", ".", "12", "+", "/", "\ufeff", "|",
])


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(base=st.sampled_from([
           COMBINED, "ex.org:80 " + COMBINED, COMBINED + ' 12 "a b"', COMBINED.split(' "https')[0],
           'ex.org 1.2.3.4 - - [28/Nov/2026:10:00:00 +0100] "GET /a HTTP/1.1" 200 12 "-" "ua"',
           '1.2.3.4 - - [28/Nov/2026:10:00:00 +0100] "/a?b=1" 200 -',
           '1.2.3.4 [28/Nov/2026:10:00:00 +0100] "GET /a HTTP/2.0" 404 0 0.012 1795860000.250',
           'ex.org:443 1.2.3.4 1795860000.123456 250 "GET / HTTP/1.1" 301 200 512 88871',
           '1.2.3.4 [28/Nov/2026:10:00:00 +0100] "GET / HTTP/1.1" 200 5 Ex.org:8080|Mozilla/5.0 (X)',
           ISO, ISO.replace("+01:00", ".250Z"), STRFTIME,
           '75.249.65.145 US - [2015-09-02 10:42:51.003372] "GET /cms/feed/?q=1 HTTP/1.1" 200 7113 "-" '
           '"Mozilla/5.0 (compatible; Googlebot/2.1)" www.example.com 124.165.3.7 443 redirect-handler - + '
           '"-" Vea2i8CoAwcAADevXAgAAAAB TLSv1.2 ECDHE-RSA-AES128-GCM-SHA256 701 12118 -% 88871 803 0 0 0 0',
       ]),
       edits=st.lists(st.tuples(st.integers(0, 140), st.integers(0, 3), _bits), max_size=5),
       spec=st.sampled_from(FORMATS),
       ending=st.sampled_from(["", "\n", "\r\n"]),
       columns=_columns)
def test_the_cut_equals_the_polars_way(base, edits, spec, ending, columns):
    line = base
    for at, cut, bit in edits:  # splice junk in: quotes, backslashes, digits, newlines...
        line = line[:at] + bit + line[at + cut:]
    chunk = "\n".join([line, base, "", line]) + ending
    assert_same(chunk.encode(), spec, columns)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.binary(max_size=300), spec=st.sampled_from(FORMATS), columns=_columns)
def test_any_bytes_give_what_the_polars_way_gives(data, spec, columns):
    assert_same(data, spec, columns)


def test_columns_not_wanted_are_not_copied_out_of_the_cut():
    """A read of some columns (the analysis': no referer, protocol, path or query) has the
    cut leave out the text that feeds only the others; what it reads is as a whole read's."""
    fmt = compile_format("combined")
    wanted = [*ANALYSIS_COLUMNS, *OPTIONAL_COLUMNS]
    assert formats._kinds_for(fmt.cut, frozenset(wanted)) == b"sissxxxssxs"
    chunk = (COMBINED + "\n" + COMBINED.replace("/cal?", "/x?") + "\n").encode()
    req, bad, n = parse_chunk(chunk, fmt, columns=wanted)
    whole, _, _ = parse_chunk(chunk, fmt)
    assert req.columns == [c for c in whole.columns if c in wanted]
    assert_frame_equal(req, whole.select(req.columns))
    assert req.row(1, named=True)["url"] == "/x?date=2026-11"
    assert (bad.height, n) == (0, 2)


@pytest.mark.parametrize("path", sorted(glob.glob("sample_logs/*/access.log*")))
def test_the_bundled_logs_read_the_same_without_the_extension(path, monkeypatch):
    with_cut = pl.concat(scan_logs([path]))
    monkeypatch.setattr(formats, "_cut", None)
    without = pl.concat(scan_logs([path]))
    assert with_cut.height > 500
    assert_frame_equal(with_cut, without)


@pytest.mark.parametrize("path", sorted(glob.glob("sample_logs/*/access.log*")))
def test_the_bundled_logs_read_for_the_analysis_as_read_whole(path):
    wanted = [*ANALYSIS_COLUMNS, *OPTIONAL_COLUMNS]
    some = pl.concat(scan_logs([path], columns=wanted))
    whole = pl.concat(scan_logs([path]))
    assert some.columns == [c for c in whole.columns if c in wanted]
    assert_frame_equal(some, whole.select(some.columns))


def test_a_rotated_gzip_file_is_cut_the_same(tmp_path):
    text = "\n".join([COMBINED] * 1000 + ["junk", COMBINED.replace("Mozilla", '\\"Mozilla')]) + "\n"
    path = tmp_path / "access.log.2.gz"
    path.write_bytes(gzip.compress(text.encode()))
    stream = scan_logs([str(path)])
    frame = pl.concat(stream)
    assert frame.height == 1001
    assert frame.get_column("user_agent").to_list()[-2:] == [
        "Mozilla/5.0 (compatible; Googlebot/2.1)", '"Mozilla/5.0 (compatible; Googlebot/2.1)']
    assert (stream.stats.lines, stream.stats.rejected) == (1002, 1)
    assert stream.stats.rejected_examples.rows() == [(str(path), 1001, "junk", "does not match combined")]


@given(st.binary(max_size=64), st.binary(max_size=4096), st.integers(min_value=0, max_value=4096))
def test_a_carried_line_is_joined_to_the_next_lines_as_bytes_join_does(head, data, cut):
    # the reader's copy of a batch's lines after the start of a line carried over (made
    # without the GIL held), and its fallback without the extension
    body = memoryview(data)[:cut]
    want = head + data[:cut]
    assert formats._cut.joined(head, body) == want
    assert isinstance(formats._cut.joined(head, body), bytes)
    assert logs._joined(head, body) == want


def test_lines_across_small_batches_are_read_whole_without_the_extension(tmp_path, monkeypatch):
    # 300-byte batches: nearly every line carried over from one batch to the next
    lines = [COMBINED.replace("/cal?date=2026-11", f"/cal?date={i}") for i in range(50)]
    path = tmp_path / "access.log"
    path.write_text("\n".join(lines) + "\n")
    with_c = pl.concat(scan_logs([str(path)], settings=Settings(batch_bytes=300)))
    monkeypatch.setattr(formats, "_cut", None)
    without = pl.concat(scan_logs([str(path)], settings=Settings(batch_bytes=300)))
    assert with_c.get_column("url").to_list() == [f"/cal?date={i}" for i in range(50)]
    assert_frame_equal(with_c, without)

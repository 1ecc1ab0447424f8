"""formats.py: each format's exact parsed values, real-world mess, and property tests."""

from __future__ import annotations

import ipaddress
from datetime import datetime, timezone

import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from logtrap import schema as s
from logtrap.errors import FormatError, LogtrapError
from logtrap.formats import (PRESETS, _client, _for_hops, _forwarded, _trusted_clients,
                             compile_format, detect_format, parse_lines)

UTC = timezone.utc


def parse(fmt: str, *lines: str) -> tuple[list[dict], list[tuple]]:
    req, bad = parse_lines(pl.DataFrame({"line": list(lines)}, schema={"line": pl.String}),
                           compile_format(fmt))
    assert list(req.schema.items()) == list(s.REQUEST_SCHEMA.items())
    return req.rows(named=True), bad.rows()


def one(fmt: str, line: str) -> dict:
    rows, bad = parse(fmt, line)
    assert bad == []
    assert len(rows) == 1
    return rows[0]


COMBINED = (
    '66.249.66.1 - frank [28/Nov/2026:10:00:00 +0100] "GET /cal?date=2026-11 HTTP/1.1" 200 5120 '
    '"https://ex.org/" "Mozilla/5.0 (compatible; Googlebot/2.1)"'
)


def test_combined_exact_values():
    assert one("combined", COMBINED) == {
        s.HOST: "-", s.CLIENT: "66.249.66.1", s.TIME: datetime(2026, 11, 28, 9, 0, tzinfo=UTC),
        s.METHOD: "GET", s.URL: "/cal?date=2026-11", s.PATH: "/cal", s.QUERY: "date=2026-11",
        s.PROTOCOL: "HTTP/1.1", s.STATUS: 200, s.BYTES: 5120, s.REFERER: "https://ex.org/",
        s.USER_AGENT: "Mozilla/5.0 (compatible; Googlebot/2.1)", s.REQUEST_TIME: None,
        s.SOURCE: "-",
    }


@pytest.mark.parametrize("fmt", ["combined", "nginx"])
def test_only_the_asked_columns_are_returned_with_the_same_values(fmt):
    # the analysis asks for seven columns; escaped quotes and a junk line take the slow paths
    lines = [COMBINED, COMBINED.replace("Googlebot/2.1", 'x \\"y\\" Googlebot/2.1'), "junk", ""]
    frame = pl.DataFrame({"line": lines}, schema={"line": pl.String})
    wanted = [s.USER_AGENT, s.URL, s.TIME, s.CLIENT]
    full, full_bad = parse_lines(frame, compile_format(fmt))
    some, some_bad = parse_lines(frame, compile_format(fmt), columns=wanted)
    assert some.columns == [s.CLIENT, s.TIME, s.URL, s.USER_AGENT]  # in schema order
    assert some.equals(full.select(some.columns))
    assert some[s.USER_AGENT].to_list()[1] == 'Mozilla/5.0 (compatible; x "y" Googlebot/2.1)'
    assert some_bad.equals(full_bad) and some_bad["line"].to_list() == ["junk"]


def test_common_exact_values():
    row = one("common", 'h.example.com - - [07/Mar/2004:16:05:49 -0800] "GET /a HTTP/1.0" 401 12846')
    assert (row[s.CLIENT], row[s.TIME], row[s.PATH], row[s.QUERY], row[s.STATUS], row[s.BYTES],
            row[s.REFERER], row[s.USER_AGENT]) == (
        "h.example.com", datetime(2004, 3, 8, 0, 5, 49, tzinfo=UTC), "/a", None, 401, 12846,
        None, None)


def test_vhost_combined_keeps_port_out_of_host():
    row = one("vhost_combined", 'Fenix.Example.org:443 ::1 - - [02/Nov/2020:09:55:25 +0000] '
              '"OPTIONS * HTTP/1.0" 200 126 "-" "Apache/2.4.29 (Ubuntu) (internal dummy connection)"')
    assert (row[s.HOST], row[s.CLIENT], row[s.METHOD], row[s.URL], row[s.BYTES]) == (
        "fenix.example.org", "::1", "OPTIONS", "*", 126)


def test_litespeed_and_nginx_presets_are_combined():
    assert one("litespeed", COMBINED) == one("combined", COMBINED) == one("nginx", COMBINED)
    assert compile_format("nginx").kind == "nginx"
    assert compile_format("litespeed").kind == "apache"


def test_custom_nginx_log_format():
    fmt = ('$remote_addr - $remote_user [$time_local] "$request" $status $body_bytes_sent '
           '"$http_referer" "$http_user_agent" $host $request_time $time_iso8601 '
           '"$upstream_response_time"')
    row = one(fmt, '2001:db8::1 - - [28/Nov/2026:10:00:00 +0000] "GET /x?a=1 HTTP/2.0" 200 512 '
              '"-" "Mo \\x22q\\x22" Example.COM:8443 0.012 2026-11-28T11:00:00+01:00 "0.010, 0.002"')
    assert row == {
        s.HOST: "example.com", s.CLIENT: "2001:db8::1",
        s.TIME: datetime(2026, 11, 28, 10, 0, tzinfo=UTC), s.METHOD: "GET", s.URL: "/x?a=1",
        s.PATH: "/x", s.QUERY: "a=1", s.PROTOCOL: "HTTP/2.0", s.STATUS: 200, s.BYTES: 512,
        s.REFERER: "-", s.USER_AGENT: 'Mo "q"', s.REQUEST_TIME: 0.012, s.SOURCE: "-",
    }


def test_nginx_time_iso8601_alone_is_converted_to_utc():
    row = one('$remote_addr $time_iso8601 "$request" $status $bytes_sent',
              '10.0.0.1 2026-11-28T11:30:00+01:00 "GET / HTTP/1.1" 304 0')
    assert (row[s.TIME], row[s.STATUS], row[s.BYTES]) == (
        datetime(2026, 11, 28, 10, 30, tzinfo=UTC), 304, 0)


def test_nginx_split_request_variables_and_http_host():
    row = one('$remote_addr [$time_local] "$request_method $request_uri $server_protocol" '
              '$status $bytes_sent $http_host',
              '1.2.3.4 [28/Nov/2026:10:00:00 +0000] "GET /a?b HTTP/1.1" 200 99 ex.org:443')
    assert (row[s.HOST], row[s.METHOD], row[s.URL], row[s.PATH], row[s.QUERY], row[s.PROTOCOL]) == (
        "ex.org", "GET", "/a?b", "/a", "b", "HTTP/1.1")


NETNEA = PRESETS["netnea"]
NETNEA_LINE = (
    '75.249.65.145 US - [2015-09-02 10:42:51.003372] "GET /cms/feed/?q=1 HTTP/1.1" 200 7113 "-" '
    '"Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)" www.example.com '
    '124.165.3.7 443 redirect-handler - + "-" Vea2i8CoAwcAADevXAgAAAAB TLSv1.2 '
    "ECDHE-RSA-AES128-GCM-SHA256 701 12118 -% 88871 803 0 0 0 0"
)


def test_netnea_extended_format_given_as_string():
    row = one(NETNEA, NETNEA_LINE)
    assert (row[s.HOST], row[s.CLIENT], row[s.TIME], row[s.QUERY], row[s.BYTES],
            row[s.REQUEST_TIME]) == (
        "www.example.com", "75.249.65.145", datetime(2015, 9, 2, 10, 42, 51, 3372, tzinfo=UTC),
        "q=1", 7113, 0.088871)
    assert compile_format(NETNEA).name == "custom"


def test_strftime_time_and_D_T():
    row = one('%h %l %u [%{%Y-%m-%d %H:%M:%S}t.%{usec_frac}t] "%r" %>s %b %D %T',
              '1.2.3.4 - - [2026-11-28 10:00:00.123456] "POST /a HTTP/1.0" 201 - 1500 0')
    assert (row[s.TIME], row[s.METHOD], row[s.BYTES], row[s.REQUEST_TIME]) == (
        datetime(2026, 11, 28, 10, 0, 0, 123456, tzinfo=UTC), "POST", None, 0.0015)


def test_strftime_time_with_offset():
    row = one('%h [%{%d/%b/%Y %H:%M:%S %z}t] "%r" %>s %b',
              '1.2.3.4 [28/Nov/2026 10:00:00 -0200] "GET / HTTP/1.1" 200 1')
    assert row[s.TIME] == datetime(2026, 11, 28, 12, 0, tzinfo=UTC)


def test_T_seconds_alone():
    row = one('%h %t "%r" %>s %b %T', '1.2.3.4 [28/Nov/2026:10:00:00 +0000] "GET / HTTP/1.1" 200 1 3')
    assert row[s.REQUEST_TIME] == 3.0


def test_split_url_directives_and_percent_literal():
    row = one("%v %h %U%q %m %H %>s %B %{ms}T 100%%",
              "ex.org:8080 1.2.3.4 /p?x=1 GET HTTP/1.1 200 5 12 100%")
    assert (row[s.HOST], row[s.URL], row[s.PATH], row[s.QUERY], row[s.REQUEST_TIME]) == (
        "ex.org", "/p?x=1", "/p", "x=1", 0.012)


def test_opaque_directives_are_matched_not_kept():
    row = one('%h %{X-Thing}e %{c}C %{Loc}o %X %I %O "%{cookie}n" %t "%r" %>s %b',
              '1.2.3.4 a b c + 10 20 "k=v; x=\\"y\\"" [28/Nov/2026:10:00:00 +0000] "GET / HTTP/1.1" 200 1')
    assert (row[s.CLIENT], row[s.STATUS], row[s.BYTES]) == ("1.2.3.4", 200, 1)


def test_trailer_directives_are_matched_not_kept():
    # %{Name}^ti and ^to (request and response trailers): read as literal text before, so no
    # line of a format holding one parsed
    row = one('%h %t "%r" %>s %b "%{grpc-message}^to" %{Expires}^ti "%{User-Agent}i"',
              '1.2.3.4 [28/Nov/2026:10:00:00 +0000] "GET /a HTTP/1.1" 200 1 "not found" - "curl/8.5"')
    assert (row[s.CLIENT], row[s.URL], row[s.STATUS], row[s.BYTES], row[s.USER_AGENT]) == (
        "1.2.3.4", "/a", 200, 1, "curl/8.5")


def test_escaped_quotes_apache_and_nginx_are_unescaped():
    apache = one("combined", '1.2.3.4 - - [28/Nov/2026:10:00:00 +0000] "GET /a HTTP/1.1" 200 1 '
                 '"-" "\\"Mozilla/4.0\\" back\\\\slash"')
    nginx = one("nginx", '1.2.3.4 - - [28/Nov/2026:10:00:00 +0000] "GET /a HTTP/1.1" 200 1 '
                '"-" "\\x22Mozilla/4.0\\x22 back\\x5Cslash"')
    assert apache[s.USER_AGENT] == nginx[s.USER_AGENT] == '"Mozilla/4.0" back\\slash'


def test_ipv6_dash_size_and_dash_request():
    row = one("combined", '2001:db8:0:0::ff - - [28/Nov/2026:10:00:00 +0000] "-" 408 - "-" "-"')
    assert (row[s.CLIENT], row[s.STATUS], row[s.BYTES], row[s.METHOD], row[s.URL], row[s.PATH],
            row[s.PROTOCOL]) == ("2001:db8:0:0::ff", 408, None, None, None, None, None)


def test_tls_handshake_junk_is_a_parsed_row_without_request():
    row = one("combined", '1.2.3.4 - - [28/Nov/2026:10:00:00 +0000] "\\x16\\x03\\x01\\x00\\xa5\\x01" '
              '400 0 "-" "-"')
    assert (row[s.STATUS], row[s.METHOD], row[s.URL], row[s.PATH]) == (400, None, None, None)


def test_http09_request_has_no_protocol_and_http2_short_form():
    rows, _ = parse("common", '1.2.3.4 - - [28/Nov/2026:10:00:00 +0000] "GET /old" 200 1',
                    '1.2.3.4 - - [28/Nov/2026:10:00:00 +0000] "GET /new HTTP/2" 200 1')
    assert [(r[s.URL], r[s.PROTOCOL]) for r in rows] == [("/old", None), ("/new", "HTTP/2")]


def test_truncated_last_quoted_field_is_parsed_leniently():
    row = one("combined", '1.2.3.4 - - [20/May/2015:12:05:17 +0000] "GET /x HTTP/1.1" 200 235 "-" '
              '"Mozilla/5.0 (compatible; Googlebot/2.1')
    assert row[s.USER_AGENT] == "Mozilla/5.0 (compatible; Googlebot/2.1"


def test_non_utf8_replacement_and_100k_line():
    long_ua = "A" * 100_000
    rows, bad = parse("combined",
                      '1.2.3.4 - - [28/Nov/2026:10:00:00 +0000] "GET /\ufffd HTTP/1.1" 200 1 "-" "x"',
                      f'1.2.3.4 - - [28/Nov/2026:10:00:00 +0000] "GET / HTTP/1.1" 200 1 "-" "{long_ua}"')
    assert bad == []
    assert rows[0][s.PATH] == "/\ufffd"
    assert len(rows[1][s.USER_AGENT]) == 100_000


def test_rejected_rows_reasons_and_blank_lines():
    rows, bad = parse("combined", COMBINED, "garbage", "", "   ",
                      '1.2.3.4 - - [31/Feb/2026:10:00:00 +0000] "GET / HTTP/1.1" 200 1 "-" "-"',
                      COMBINED + " trailing")
    assert len(rows) == 1
    assert bad == [
        (1, "garbage", "does not match combined"),
        (4, '1.2.3.4 - - [31/Feb/2026:10:00:00 +0000] "GET / HTTP/1.1" 200 1 "-" "-"', "bad time"),
        (5, COMBINED + " trailing", "does not match combined"),
    ]


def test_large_frame_keeps_order_and_row_numbers():
    lines = [COMBINED.replace("/cal?", f"/p{i}?") for i in range(120_001)]
    lines[100_000] = "junk"
    req, bad = parse_lines(pl.DataFrame({"line": lines}), compile_format("combined"))
    assert req.height == 120_000
    assert req[s.PATH][0] == "/p0" and req[s.PATH][-1] == "/p120000"
    assert bad.rows() == [(100_000, "junk", "does not match combined")]


def test_detect_format_picks_the_matching_preset():
    vhost = 'ex.org:80 ' + COMBINED.replace("+0100", "+0000")
    assert detect_format([vhost]).name == "vhost_combined"
    assert detect_format([COMBINED, "junk"]).name == "combined"
    assert detect_format(['1.2.3.4 - - [28/Nov/2026:10:00:00 +0000] "GET / HTTP/1.1" 200 1']).name == "common"
    assert detect_format([NETNEA_LINE]).name == "netnea"
    assert detect_format([COMBINED + " 1234 ex.org"]).name == "combined_extra"
    # nginx configs that log $host first: with or without fields after the user agent
    for tail in ("", " rt=0.006 up=-"):
        fmt = detect_format(["shop.example.com " + COMBINED + tail])
        assert fmt is not None and fmt.name == "host_combined"
        req, bad = parse_lines(pl.DataFrame({"line": ["shop.example.com " + COMBINED + tail]}), fmt)
        assert (req["host"].item(), bad.height) == ("shop.example.com", 0)
    # nginx's combined with $time_iso8601 for its time: every offset spelling it may have
    for stamp, utc in (("2026-11-28T10:00:00+01:00", "2026-11-28 09:00:00+00:00"),
                       ("2026-11-28T09:00:00Z", "2026-11-28 09:00:00+00:00"),
                       ("2026-11-28T04:00:00.5-0500", "2026-11-28 09:00:00.500000+00:00")):
        line = COMBINED.replace("28/Nov/2026:10:00:00 +0100", stamp)
        fmt = detect_format([line])
        assert fmt is not None and fmt.name == "combined_iso"
        req, bad = parse_lines(pl.DataFrame({"line": [line]}), fmt)
        assert (str(req["time"].item()), req["user_agent"].item(), bad.height) == (
            utc, "Mozilla/5.0 (compatible; Googlebot/2.1)", 0)
    # nginx's `main`: a last quoted field of X-Forwarded-For chains (or `-`) is read as one,
    # the client behind a balancer the address it passed on; any other last field is an extra
    lb = COMBINED.replace("66.249.66.1", "10.0.0.2")
    for extras, name in ((['"-"', '"203.0.113.9, 10.0.0.1"'], "combined_forwarded"),
                         (['"-"', '"-"'], "combined_extra"),  # no proxy in front: nothing to read
                         (['"a=b; c=d"', '"203.0.113.9"'], "combined_extra"),  # a cookie
                         (['"shop.example.com"'] * 2, "combined_extra")):
        lines = [f"{lb} {extra}" for extra in extras]
        fmt = detect_format(lines)
        assert fmt is not None and fmt.name == name
        req, bad = parse_lines(pl.DataFrame({"line": lines}), fmt)
        assert (req[s.CLIENT].to_list(), bad.height) == (
            ["10.0.0.2", "203.0.113.9"] if name == "combined_forwarded" else ["10.0.0.2"] * 2, 0)
    assert detect_format(["hello", ""]) is None


def test_detect_format_reads_a_log_written_without_the_method(tmp_path):
    # `"%U%q"` in place of `"%r"`: under combined every request line is junk and every URL
    # none ("(no URL)" for all of a review's shop, and no finding); read as paths it is the shop
    bare = COMBINED.replace('"GET /cal?date=2026-11 HTTP/1.1"', '"/cal?date=2026-11"')
    fmt = detect_format([bare] * 20)
    assert fmt.spec == '%h %l %u %t "%U%q" %>s %b "%{Referer}i" "%{User-Agent}i"'
    req, bad = parse_lines(pl.DataFrame({"line": [bare]}), fmt)
    assert (req[s.URL].item(), req[s.METHOD].item(), bad.height) == ("/cal?date=2026-11", None, 0)
    # a combined log with a few junk request lines (TLS bytes on port 80) stays combined, and
    # so does one that starts with nothing else: `-` requests and TLS bytes are no paths
    junk = COMBINED.replace('"GET /cal?date=2026-11 HTTP/1.1"', '"\\x16\\x03\\x01"')
    assert detect_format([COMBINED] * 18 + [junk] * 2).name == "combined"
    dash = COMBINED.replace('"GET /cal?date=2026-11 HTTP/1.1"', '"-"')
    assert detect_format([junk, dash, junk.replace("\\x01", "")] * 7).name == "combined"
    # while a `"%U%q"` log's `-` and `*` requests (idle connections, Apache's own) are no
    # reason to keep combined (adversarial round 4 of review 19)
    star = COMBINED.replace('"GET /cal?date=2026-11 HTTP/1.1"', '"*"')
    assert detect_format([star] * 4 + [bare] * 12 + [dash] * 4).spec == fmt.spec
    # nor its TLS handshakes (three in the 20 lines sampled)
    tls = bare.replace('"/cal?date=2026-11"', '"\\x16\\x03\\x01\\x02"')
    assert detect_format([tls] * 3 + [bare] * 17).spec == fmt.spec


def test_combined_extra_parses_combined_fields():
    row = one("combined_extra", COMBINED + ' 1234 "x y"')
    assert (row[s.PATH], row[s.USER_AGENT]) == ("/cal", "Mozilla/5.0 (compatible; Googlebot/2.1)")


def test_unknown_preset_and_empty_format_raise_format_error():
    with pytest.raises(FormatError, match="unknown log format 'apache2'.*combined, common"):
        compile_format("apache2")
    with pytest.raises(FormatError, match="empty log format"):
        compile_format("  ")


def test_a_mistyped_preset_gets_the_preset_meant():
    with pytest.raises(FormatError) as raised:
        compile_format("Combind")
    assert raised.value.hint == (
        "did you mean 'combined'? Or pass the LogFormat / log_format string from the server config")
    with pytest.raises(FormatError) as raised:
        compile_format("xyzzy")
    assert raised.value.hint == (
        "pass a preset name or the LogFormat / log_format string from the server config")


def test_format_kind_from_sigils():
    assert compile_format("$remote_addr $status").kind == "nginx"
    assert compile_format("%h %>s").kind == "apache"
    assert compile_format("$remote_addr $status").fields == ("client", "status")


# -- properties ----------------------------------------------------------------------------------
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(lines=st.lists(st.text(max_size=200), max_size=8),
       fmt=st.sampled_from(["combined", "common", "vhost_combined", "nginx", NETNEA,
                            '$remote_addr [$time_iso8601] "$request" $status $request_time',
                            "%h %{%Y-%m-%d}t %U%q %>s %D",
                            ("%h\t%u\t[%{%d/%b/%Y %T}t.%{msec_frac}t %{%z}t]\t%r\t%>s\t"
                             "%{User-Agent}i"),
                            '%{X-Forwarded-For}i %u %{sec}t "%r" %s %>s %{Referer}i']))
def test_parse_lines_never_raises_and_accounts_for_every_line(lines, fmt):
    lines = [ln.replace("\n", " ").replace("\r", " ") for ln in lines]
    req, bad = parse_lines(pl.DataFrame({"line": lines}, schema={"line": pl.String}),
                           compile_format(fmt))
    blank = sum(1 for ln in lines if not ln.strip(" \t"))
    assert req.height + bad.height + blank == len(lines)


@settings(max_examples=100, deadline=None)
@given(spec=st.text(max_size=60))
def test_compile_format_raises_only_format_error(spec):
    try:
        compile_format(spec)
    except LogtrapError:
        pass


_token = st.text(st.characters(min_codepoint=33, max_codepoint=126, exclude_characters='"\\?#'),
                 min_size=1, max_size=20)
_free = st.text(st.characters(min_codepoint=32, max_codepoint=0x2FFF, exclude_categories=("Cs",)),
                max_size=40)


def _apache_escape(v: str) -> str:
    return v.replace("\\", "\\\\").replace('"', '\\"')


def _nginx_escape(v: str) -> str:
    return v.replace("\\", "\\x5C").replace('"', "\\x22")


@settings(max_examples=200, deadline=None)
@given(
    client=st.one_of(st.ip_addresses(v=4).map(str), st.ip_addresses(v=6).map(str)),
    when=st.datetimes(min_value=datetime(1990, 1, 1), max_value=datetime(2090, 1, 1)).map(
        lambda d: d.replace(microsecond=0)),
    offset=st.integers(-12 * 60, 14 * 60),
    method=st.sampled_from(["GET", "POST", "HEAD", "PROPFIND"]),
    path=_token.map(lambda t: "/" + t),
    query=st.one_of(st.none(), _token),
    status=st.integers(100, 599),
    size=st.one_of(st.none(), st.integers(0, 2**40)),
    referer=_free,
    agent=_free,
    kind=st.sampled_from(["combined", "nginx"]),
)
def test_formatted_line_round_trips(client, when, offset, method, path, query, status, size,
                                    referer, agent, kind):
    from datetime import timedelta

    sign = "-" if offset < 0 else "+"
    local = when + timedelta(minutes=offset)
    stamp = local.strftime("%d/%b/%Y:%H:%M:%S") + f" {sign}{abs(offset) // 60:02d}{abs(offset) % 60:02d}"
    esc = _apache_escape if kind == "combined" else _nginx_escape
    url = path if query is None else f"{path}?{query}"
    line = (f'{client} - - [{stamp}] "{method} {url} HTTP/1.1" {status} '
            f'{"-" if size is None else size} "{esc(referer)}" "{esc(agent)}"')
    row = one(kind, line)
    assert row == {
        s.HOST: "-", s.CLIENT: client, s.TIME: when.replace(tzinfo=UTC), s.METHOD: method,
        s.URL: url, s.PATH: path, s.QUERY: query, s.PROTOCOL: "HTTP/1.1", s.STATUS: status,
        s.BYTES: size, s.REFERER: referer, s.USER_AGENT: agent, s.REQUEST_TIME: None,
        s.SOURCE: "-",
    }


def test_epoch_times_nginx_msec_and_apache_sec_msec_frac():
    nginx = one('$msec $remote_addr "$request" $status', '1795860000.250 1.2.3.4 "GET / HTTP/1.1" 200')
    apache = one('%{sec}t.%{msec_frac}t %h "%r" %>s', '1795860000.250 1.2.3.4 "GET / HTTP/1.1" 200')
    expected = datetime(2026, 11, 28, 10, 0, 0, 250000, tzinfo=UTC)
    assert nginx[s.TIME] == apache[s.TIME] == expected


def test_host_header_directive_and_formats_pasted_from_configs():
    row = one('%{Host}i %h %t "%r" %>s %b', 'Shop.Example:8080 1.2.3.4 [28/Nov/2026:10:00:00 +0000] "GET / HTTP/1.1" 200 1')
    assert row[s.HOST] == "shop.example"
    apache_conf = r'"%h %l %u %t \"%r\" %>s %b \"%{Referer}i\" \"%{User-Agent}i\""'
    nginx_conf = ("'$remote_addr - $remote_user [$time_local] ' '\"$request\" $status $body_bytes_sent '"
                  " '\"$http_referer\" \"$http_user_agent\"'")
    assert compile_format(apache_conf).regex == compile_format("combined").regex
    assert compile_format(nginx_conf).regex == compile_format("nginx").regex
    assert one(nginx_conf, COMBINED) == one("combined", COMBINED)


def test_client_prefers_a_address_over_h_name():
    row = one('%h %a %t "%r" %>s %b', 'crawl-1.example.com 66.249.66.1 [28/Nov/2026:10:00:00 +0000] "GET / HTTP/1.1" 200 1')
    assert row[s.CLIENT] == "66.249.66.1"


# -- the quote-cut fast path gives what the full regex gives ------------------------------------
_bits = st.sampled_from(['"', "\\", " ", "\\\"", "-", "[", "]", ":", "200", "x", "\t", "%"])


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(base=st.sampled_from([COMBINED, 'ex.org:80 ' + COMBINED, NETNEA_LINE, COMBINED + ' 12 "a b"',
                             COMBINED.split(' "https')[0]]),
       edits=st.lists(st.tuples(st.integers(0, 400), st.integers(0, 3), _bits), max_size=4),
       fmt=st.sampled_from(["combined", "common", "vhost_combined", "nginx", NETNEA,
                            "combined_extra", '"%h %l" %t "%r" %>s %b']))
def test_fast_path_equals_full_regex(base, edits, fmt):
    import dataclasses

    line = base
    for at, cut, bit in edits:  # splice junk in: quotes, backslashes, spaces...
        line = line[:at] + bit + line[at + cut:]
    lines = pl.DataFrame({"line": [line, base, line]}, schema={"line": pl.String})
    fast = compile_format(fmt)
    assert fast.pieces is not None
    slow = dataclasses.replace(fast, pieces=None)
    for got, want in zip(parse_lines(lines, fast), parse_lines(lines, slow)):
        assert got.equals(want)


def test_fast_path_and_fallback_rows_mix_in_order():
    escaped = COMBINED.replace('"Mozilla', '"\\"Mozilla')
    truncated = COMBINED[:-1]
    quote_in_user = COMBINED.replace(" frank ", ' fr"nk ')
    escaped_close = COMBINED.replace('ex.org/"', 'ex.org/\\"')  # the referer never closes
    rows, bad = parse("combined", COMBINED, escaped, truncated, quote_in_user, "junk",
                      escaped_close, COMBINED)
    assert [r[s.USER_AGENT] for r in rows] == [
        "Mozilla/5.0 (compatible; Googlebot/2.1)", '"Mozilla/5.0 (compatible; Googlebot/2.1)',
        "Mozilla/5.0 (compatible; Googlebot/2.1)", "Mozilla/5.0 (compatible; Googlebot/2.1)",
        "Mozilla/5.0 (compatible; Googlebot/2.1)"]
    assert bad == [(4, "junk", "does not match combined"),
                   (5, escaped_close, "does not match combined")]


def test_streamed_batch_equals_small_batches():
    # a batch big enough for the streaming engine gives what small in-memory ones give
    escaped = COMBINED.replace('"Mozilla', '"\\"Mozilla')
    lines = [COMBINED, escaped, COMBINED[:-1], "junk", "", COMBINED.replace("+0100", "-0230")] * 5000
    frame = pl.DataFrame({"line": lines}, schema={"line": pl.String})
    fmt = compile_format("combined")
    req, bad = parse_lines(frame, fmt)
    parts = [parse_lines(frame.slice(i, 600), fmt) for i in range(0, frame.height, 600)]
    assert req.equals(pl.concat([p[0] for p in parts]))
    assert bad.height == 5000 and bad["row"].to_list() == list(range(3, len(lines), 6))


# -- times outside Python's datetime, offsets, split and explicit time layouts -----------------
@pytest.mark.parametrize("fmt,line", [
    ("combined", '1.2.3.4 - - [01/Jan/0001:00:00:00 +0100] "GET / HTTP/1.1" 200 1 "-" "-"'),
    ("combined", '1.2.3.4 - - [01/Jan/0000:00:00:00 +0000] "GET / HTTP/1.1" 200 1 "-" "-"'),
    ("combined", '1.2.3.4 - - [31/Dec/9999:23:59:59 -0100] "GET / HTTP/1.1" 200 1 "-" "-"'),
    ('%h [%{%d/%b/%Y:%T %z}t] "%r" %>s',
     '1.2.3.4 [01/Jan/0001:00:00:00 +0100] "GET / HTTP/1.1" 200'),
    ('%h [%{%Y-%m-%d %T}t] "%r" %>s', '1.2.3.4 [0000-10-10 13:55:36] "GET / HTTP/1.1" 200'),
    ('$remote_addr $time_iso8601 "$request" $status',
     '1.2.3.4 0001-01-01T00:30:00+01:00 "GET / HTTP/1.1" 200'),
    ('%h %{sec}t "%r" %>s', '1.2.3.4 99999999999999 "GET / HTTP/1.1" 200'),  # wrapped around
    ('%h %{sec}t "%r" %>s', '1.2.3.4 253402300800 "GET / HTTP/1.1" 200'),
    ('%h %{msec}t "%r" %>s', '1.2.3.4 99999999999999999 "GET / HTTP/1.1" 200'),
    ('%h %{usec}t "%r" %>s', '1.2.3.4 99999999999999999999 "GET / HTTP/1.1" 200'),
    ('$remote_addr $msec "$request" $status', '1.2.3.4 253402300800.000 "GET / HTTP/1.1" 200'),
])
def test_times_outside_years_1_to_9999_in_utc_are_bad_times(fmt, line):
    assert parse(fmt, line) == ([], [(0, line, "bad time")])


def test_times_at_the_edges_of_years_1_to_9999_are_kept():
    rows, bad = parse("combined",
                      '1.2.3.4 - - [01/Jan/0001:00:00:00 -0100] "GET / HTTP/1.1" 200 1 "-" "-"',
                      '1.2.3.4 - - [31/Dec/9999:23:59:59 +0000] "GET / HTTP/1.1" 200 1 "-" "-"')
    assert bad == []
    assert [r[s.TIME] for r in rows] == [datetime(1, 1, 1, 1, 0, tzinfo=UTC),
                                         datetime(9999, 12, 31, 23, 59, 59, tzinfo=UTC)]
    row = one('%h %{sec}t.%{msec_frac}t "%r" %>s', '1.2.3.4 253402300799.999 "GET / HTTP/1.1" 200')
    assert row[s.TIME] == datetime(9999, 12, 31, 23, 59, 59, 999000, tzinfo=UTC)


def test_utc_offsets_that_are_no_offsets_do_not_match():
    lines = [f'1.2.3.4 - - [28/Nov/2026:10:00:00 {o}] "GET / HTTP/1.1" 200 1 "-" "-"'
             for o in ("+0060", "+9999", "-2400", "-2359", "+1345")]
    rows, bad = parse("combined", *lines)
    assert bad == [(i, lines[i], "does not match combined") for i in range(3)]
    assert [r[s.TIME] for r in rows] == [datetime(2026, 11, 29, 9, 59, tzinfo=UTC),
                                         datetime(2026, 11, 27, 20, 15, tzinfo=UTC)]


def test_a_time_split_across_strftime_fields_keeps_its_offset():
    row = one('%h %l %u [%{%d/%b/%Y %T}t.%{msec_frac}t %{%z}t] "%r" %>s %b',
              '192.0.2.1 - - [10/Oct/2000 13:55:36.123 -0700] "GET / HTTP/1.1" 200 5')
    assert row[s.TIME] == datetime(2000, 10, 10, 20, 55, 36, 123000, tzinfo=UTC)
    row = one('%h [%{%d/%b/%Y:%H:%M:%S}t %{%z}t] "%r" %>s',
              '192.0.2.1 [10/Oct/2000:13:55:36 +0130] "GET / HTTP/1.1" 200')
    assert row[s.TIME] == datetime(2000, 10, 10, 12, 25, 36, tzinfo=UTC)


def test_a_repeated_strftime_time_is_matched_not_combined():
    fmt = '%h [%{begin:%d/%b/%Y:%T %z}t] [%{end:%d/%b/%Y:%T %z}t] "%r" %>s'
    assert compile_format(fmt).fields == ("client", "time_strftime", "request", "status")
    row = one(fmt, '1.2.3.4 [10/Oct/2000:13:55:36 -0700] [10/Oct/2000:13:55:37 -0700] '
                   '"GET / HTTP/1.1" 200')
    assert row[s.TIME] == datetime(2000, 10, 10, 20, 55, 36, tzinfo=UTC)


def test_an_epoch_time_wins_over_a_strftime_time_without_offset():
    row = one('%h [%{%Y-%m-%d %T}t] %{sec}t "%r" %>s',
              '1.2.3.4 [2000-10-10 06:55:36] 971186136 "GET / HTTP/1.1" 200')
    assert row[s.TIME] == datetime(2000, 10, 10, 13, 55, 36, tzinfo=UTC)


def test_a_zone_name_without_an_offset_is_a_format_error():
    with pytest.raises(FormatError, match=r"zone name \(%Z\) but no UTC offset"):
        compile_format('%h [%{%d/%b/%Y %T %Z}t] "%r" %>s')
    row = one('%h [%{%d/%b/%Y %T %z %Z}t] "%r" %>s',
              '1.2.3.4 [10/Oct/2000 13:55:36 +0200 CEST] "GET / HTTP/1.1" 200')
    assert row[s.TIME] == datetime(2000, 10, 10, 11, 55, 36, tzinfo=UTC)


def test_iso_times_have_an_explicit_layout_whatever_the_batch_starts_with():
    fmt = ('{"time":"$time_iso8601","remote_addr":"$remote_addr","request":"$request",'
           '"status":$status}')
    junk = '{"date":"2000-10-10","client":"1.2.3.4","req":"GET /odd HTTP/1.1","code":200}'
    odd = junk.replace('"date"', '"time"').replace('"client"', '"remote_addr"').replace(
        '"req"', '"request"').replace('"code"', '"status"')
    times = ("2000-10-10T13:55:36+00:00", "2000-10-10T13:55:36.25Z", "2000-10-10T13:55:36-0130")
    good = [f'{{"time":"{t}","remote_addr":"1.2.3.4","request":"GET / HTTP/1.1","status":200}}'
            for t in times]
    rows, bad = parse(fmt, junk, odd, *good)
    assert bad == [(0, junk, f"does not match nginx log_format {fmt!r}"), (1, odd, "bad time")]
    assert [r[s.TIME] for r in rows] == [
        datetime(2000, 10, 10, 13, 55, 36, tzinfo=UTC),
        datetime(2000, 10, 10, 13, 55, 36, 250000, tzinfo=UTC),
        datetime(2000, 10, 10, 15, 25, 36, tzinfo=UTC)]


# -- status, escapes ---------------------------------------------------------------------------
@pytest.mark.parametrize("statuses,values,status", [
    ("%s %>s", "301 200", 200), ("%<s %>s", "301 200", 200), ("%>s %s", "404 302", 404),
    ("%<s", "302", 302), ("%s", "302", 302),
])
def test_the_final_status_wins_over_the_original_one(statuses, values, status):
    row = one(f'%h %t "%r" {statuses} %b',
              f'1.2.3.4 [10/Oct/2000:13:55:36 +0000] "GET / HTTP/1.1" {values} 5')
    assert row[s.STATUS] == status


def test_hex_escapes_in_the_url_become_percent_escapes():
    start = '1.2.3.4 - - [10/Oct/2000:13:55:36 -0700] "GET /caf'
    nginx = one("nginx", start + '\\xC3\\xA9?q=\\x22a\\x5C HTTP/1.1" 200 5 "-" '
                '"Mozilla \\xD0\\x9F \\x22q\\x22"')
    apache = one("combined", start + '\\xc3\\xa9?q=\\"a\\\\ HTTP/1.1" 200 5 "-" '
                 '"Mozilla \\xd0\\x9f \\"q\\""')
    assert (nginx[s.URL], nginx[s.PATH], nginx[s.QUERY], nginx[s.USER_AGENT]) == (
        "/caf%C3%A9?q=\"a\\", "/caf%C3%A9", "q=\"a\\", 'Mozilla \\xD0\\x9F "q"')
    assert (apache[s.URL], apache[s.USER_AGENT]) == ("/caf%C3%A9?q=\"a\\", 'Mozilla \\xd0\\x9f "q"')


def test_unescaping_is_one_left_to_right_pass():
    # `\\x41` is an escaped backslash, then the text x41; `\x4` and `\xZZ` are no escapes
    row = one("combined", '1.2.3.4 - - [10/Oct/2000:13:55:36 -0700] "GET /a\\\\x41\\x4\\xZZ\\x7f '
              'HTTP/1.1" 200 5 "-" "-"')
    assert row[s.URL] == "/a\\x41\\x4\\xZZ%7F"


def test_json_escapes_in_the_url_become_percent_escapes():
    row = one('{"request":"$request","status":$status}',
              '{"request":"GET /a\\tb\\u001f\\u00e9\\"\\\\ HTTP/1.1","status":200}')
    assert row[s.URL] == '/a%09b%1F\\u00e9"\\'  # \u00e9 is a character, not a byte: kept


# -- fields that hold spaces, formats pasted from configs ----------------------------------------
def test_formats_pasted_with_config_escapes():
    fmt = '%h\\t%u\\t%t\\t"%r"\\t%>s\\t%b\\t"%{User-Agent}i"'
    assert compile_format(fmt).spec == '%h\t%u\t%t\t"%r"\t%>s\t%b\t"%{User-Agent}i"'
    row = one(fmt, '1.2.3.4\tbob smith\t[10/Oct/2000:13:55:36 -0700]\t"GET /a HTTP/1.1"\t200\t5\t'
                   '"UA x"')
    assert (row[s.CLIENT], row[s.PATH], row[s.STATUS], row[s.USER_AGENT]) == (
        "1.2.3.4", "/a", 200, "UA x")
    assert compile_format("'$remote_addr\\t' '$status\\\\t'").spec == "$remote_addr\t$status\\t"
    assert compile_format(r'%h \\t %>s \d').spec == r"%h \t %>s \d"


def test_an_apache_x_forwarded_for_list_is_one_field():
    fmt = '%{X-Forwarded-For}i %l %u %t "%r" %>s %b "%{Referer}i" "%{User-Agent}i"'
    tail = ' - - [10/Oct/2000:13:55:36 -0700] "GET /{} HTTP/1.1" 200 5 "-" "UA"'
    rows, bad = parse(fmt, "203.0.113.9, 10.0.0.1" + tail.format("a"),
                      "203.0.113.9" + tail.format("b"), "-" + tail.format("c"))
    # the client: the chain's last address outside the site's network (an internal proxy's
    # 10.0.0.1 passed over); none where the header was not sent
    assert bad == [] and [(r[s.CLIENT], r[s.PATH]) for r in rows] == [
        ("203.0.113.9", "/a"), ("203.0.113.9", "/b"), (None, "/c")]


def test_a_client_behind_a_proxy_is_the_address_the_proxy_passed_on():
    apache = '%h %t "%r" %>s %b "%{X-Forwarded-For}i"'
    tail = ' [10/Oct/2000:13:55:36 -0700] "GET /{} HTTP/1.1" 200 5 "{}"'
    rows, bad = parse(
        apache,
        "10.0.0.2" + tail.format("lb", "203.0.113.9"),  # a load balancer's address: the chain's
        "127.0.0.1" + tail.format("local", "203.0.113.9, 192.168.1.4"),  # a local proxy's
        # a scraper's own header, the balancer appending its address: not Googlebot's
        "10.0.0.2" + tail.format("spoof", "66.249.66.1, 198.51.100.20"),
        "198.51.100.1" + tail.format("direct", "66.249.66.1"),  # a public address stays
        "10.0.0.2" + tail.format("none", "-"),  # no header: the connection's, whatever it is
    )
    assert bad == [] and [(r[s.PATH], r[s.CLIENT]) for r in rows] == [
        ("/lb", "203.0.113.9"), ("/local", "203.0.113.9"), ("/spoof", "198.51.100.20"),
        ("/direct", "198.51.100.1"), ("/none", "10.0.0.2")]
    # a format that logs no address of its own: the header a proxy set to it
    line = '[10/Oct/2000:13:55:36 -0700] "GET /a HTTP/1.1" 200 5 {}'
    for header in ("$http_x_real_ip", "$http_cf_connecting_ip", "%{True-Client-IP}i"):
        fmt = (f'[$time_local] "$request" $status $body_bytes_sent {header}' if "$" in header
               else f'%t "%r" %>s %b {header}')
        rows, bad = parse(fmt, line.format("203.0.113.9"), line.format("2001:db8::7"), line.format("-"))
        assert bad == [] and [r[s.CLIENT] for r in rows] == ["203.0.113.9", "2001:db8::7", None]


def test_every_single_address_header_a_format_logs_is_read_in_its_order():
    # a balancer's X-Real-IP beside a CDN's CF-Connecting-IP and True-Client-IP: the first
    # that holds an address (only the first was read before: `-` there left the balancer's)
    fmt = ("$remote_addr [$time_local] \"$request\" $status $body_bytes_sent "
           "$http_x_real_ip $http_cf_connecting_ip $http_true_client_ip")
    assert compile_format(fmt).fields[-3:] == (
        "proxied_client", "proxied_client_2", "proxied_client_3")
    tail = ' [10/Oct/2000:13:55:36 -0700] "GET /{} HTTP/1.1" 200 5 {} {} {}'
    lines = ["10.0.0.2" + tail.format("second", "-", "203.0.113.9", "-"),
             "10.0.0.2" + tail.format("first", "198.51.100.1", "203.0.113.9", "-"),
             "10.0.0.2" + tail.format("third", "-", "-", "2001:db8::1"),
             "10.0.0.2" + tail.format("none", "-", "-", "-")]
    expected = [("/second", "203.0.113.9"), ("/first", "198.51.100.1"), ("/third", "2001:db8::1"),
                ("/none", "10.0.0.2")]
    rows, bad = parse(fmt, *lines)
    assert bad == [] and [(r[s.PATH], r[s.CLIENT]) for r in rows] == expected
    # the same with a CDN's ranges trusted (read by `_trusted_clients`)
    trusting = compile_format(fmt).trusting(("173.245.48.0/20",))
    req, bad = parse_lines(pl.DataFrame({"line": lines}), trusting)
    assert bad.height == 0 and req.select(s.PATH, s.CLIENT).rows() == expected


def test_rfc_7239_forwarded_gives_the_client_a_proxy_passed_on():
    # Apache's `%{Forwarded}i`, quoted: the header's own quotes escaped as Apache writes them
    apache = '%h %t "%r" %>s %b "%{Forwarded}i"'
    tail = ' [10/Oct/2000:13:55:36 -0700] "GET /{} HTTP/1.1" 200 5 "{}"'
    rows, bad = parse(
        apache,
        "10.0.0.2" + tail.format("lb", "for=203.0.113.9;proto=https;by=10.0.0.2"),
        "10.0.0.2" + tail.format("v6", 'proto=https;for=\\"[2001:db8:cafe::17]:4711\\"'),
        # a scraper's own header, the balancer appending its hop: not Googlebot's
        "10.0.0.2" + tail.format("spoof", "for=66.249.66.1, for=198.51.100.20"),
        # a hidden hop (`_hidden`) and the site's own proxy passed over
        "10.0.0.2" + tail.format("hidden", "for=198.51.100.20, for=_hidden, for=10.0.0.9"),
        "198.51.100.1" + tail.format("direct", "for=66.249.66.1"),  # a public address stays
        "10.0.0.2" + tail.format("none", "-"),  # no header: the connection's
        "10.0.0.2" + tail.format("unknown", "for=unknown;proto=http"),  # no address told
    )
    assert bad == [] and [(r[s.PATH], r[s.CLIENT]) for r in rows] == [
        ("/lb", "203.0.113.9"), ("/v6", "2001:db8:cafe::17"), ("/spoof", "198.51.100.20"),
        ("/hidden", "198.51.100.20"), ("/direct", "198.51.100.1"), ("/none", "10.0.0.2"),
        ("/unknown", "10.0.0.2")]
    # nginx's `$http_forwarded` (quotes escaped `\x22`), beside X-Forwarded-For: that one
    # where it holds an address, else Forwarded's
    nginx = ('$remote_addr [$time_local] "$request" $status $body_bytes_sent '
             '"$http_x_forwarded_for" "$http_forwarded"')
    tail = ' [10/Oct/2000:13:55:36 -0700] "GET /{} HTTP/1.1" 200 5 "{}" "{}"'
    rows, bad = parse(
        nginx,
        "127.0.0.1" + tail.format("both", "198.51.100.5", "for=203.0.113.9"),
        "127.0.0.1" + tail.format("fwd", "-", r"for=\x22[2001:db8::7]:443\x22;proto=https"),
    )
    assert bad == [] and [(r[s.PATH], r[s.CLIENT]) for r in rows] == [
        ("/both", "198.51.100.5"), ("/fwd", "2001:db8::7")]
    # behind a CDN whose ranges are given: its edge's Forwarded header is believed too
    fmt = compile_format('%h %t "%r" %>s %b "%{Forwarded}i"')
    tail = ' [10/Oct/2000:13:55:36 -0700] "GET /{} HTTP/1.1" 200 5 "{}"'
    lines = pl.DataFrame({"line": [
        "173.245.49.7" + tail.format("edge", "for=66.249.66.1, for=198.51.100.20"),
        "198.51.100.1" + tail.format("direct", "for=66.249.66.1"),
    ]})
    req, bad = parse_lines(lines, fmt.trusting(("173.245.48.0/20",)))
    assert bad.height == 0 and req.select(s.PATH, s.CLIENT).rows() == [
        ("/edge", "198.51.100.20"), ("/direct", "198.51.100.1")]
    # and beside X-Forwarded-For there, that one first where it holds an address
    both = compile_format('%h %t "%r" %>s %b "%{X-Forwarded-For}i" "%{Forwarded}i"')
    tail = ' [10/Oct/2000:13:55:36 -0700] "GET /{} HTTP/1.1" 200 5 "{}" "{}"'
    lines = pl.DataFrame({"line": [
        "173.245.49.7" + tail.format("xff", "198.51.100.5", "for=203.0.113.9"),
        "173.245.49.7" + tail.format("fwd", "-", "for=203.0.113.9"),
    ]})
    req, bad = parse_lines(lines, both.trusting(("173.245.48.0/20",)))
    assert bad.height == 0 and req.select(s.PATH, s.CLIENT).rows() == [
        ("/xff", "198.51.100.5"), ("/fwd", "203.0.113.9")]


# loopback, private (RFC 1918, RFC 4193), link-local: not `is_private`, which takes in the
# documentation ranges too (203.0.113.0/24, 2001:db8::/32)
_OWN_NETWORKS = [ipaddress.ip_network(n) for n in (
    "127.0.0.0/8", "10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16", "169.254.0.0/16", "::1/128",
    "fc00::/7", "fe80::/10")]


def _chain_client(chain: str) -> str | None:
    """What `_forwarded` must give, by Python's own address parser: each hop's address (port
    and brackets off; no address: passed over), the last outside `_OWN_NETWORKS`, else the
    first."""
    hops = []
    for hop in chain.split(","):
        hop = hop.strip()
        text = hop[1:hop.index("]")] if hop.startswith("[") and "]" in hop else (
            hop.rsplit(":", 1)[0] if hop.count(":") == 1 else hop)
        try:
            address = ipaddress.ip_address(text)
        except ValueError:
            continue
        mapped = getattr(address, "ipv4_mapped", None) or address
        hops.append((text, any(mapped in net for net in _OWN_NETWORKS if net.version == mapped.version)))
    outside = [text for text, internal in hops if not internal]
    return outside[-1] if outside else hops[0][0] if hops else None


_HOPS = ["66.249.66.1", "203.0.113.9", "10.0.0.1", "192.168.1.4", "172.16.5.5", "172.31.0.9",
         "172.32.0.1", "100.64.0.1",  # just outside 172.16.0.0/12; shared (RFC 6598), not own
         "127.0.0.1", "169.254.1.1", "2001:db8::5", "[2001:db8::7]:443", "fd00::1", "fe80::2",
         "::1", "[::1]", "198.51.100.7:5311", "::ffff:10.1.1.1", "::ffff:8.8.8.8", "unknown", "-",
         "", "_hidden", "proxy.example.com"]


@given(hops=st.lists(st.sampled_from(_HOPS), min_size=1, max_size=5),
       sep=st.sampled_from([", ", ",", " , "]))
def test_a_chains_client_is_the_last_address_outside_the_sites_network(hops, sep):
    chain = sep.join(hops)
    assert pl.select(_forwarded(pl.lit(chain))).item() == _chain_client(chain)


@given(hops=st.lists(st.sampled_from(_HOPS), min_size=1, max_size=5),
       pairs=st.sampled_from(["for={}", "for={};proto=https", "by=10.0.0.2;for={}",
                              "proto=http;FOR={};host=a"]))
def test_a_forwarded_header_reads_as_its_x_forwarded_for_chain(hops, pairs):
    # RFC 7239: each hop an element of pairs, its address quoted where it holds `:` or `[`
    header = ", ".join(pairs.format(f'"{h}"' if ":" in h or "[" in h else h) for h in hops)
    assert pl.select(_forwarded(_for_hops(pl.lit(header)))).item() == _chain_client(", ".join(hops))


# connections as servers log them (`%h`, `$remote_addr`): bare, a host name where resolved
_CONNECTIONS = [None, "66.249.66.1", "203.0.113.9", "10.0.0.1", "192.168.1.4", "172.32.0.1",
                "127.0.0.1", "2001:db8::5", "fd00::1", "fe80::2", "::1", "::ffff:10.1.1.1",
                "::ffff:8.8.8.8", "crawl-66-249-66-1.googlebot.com"]


@given(rows=st.lists(st.tuples(st.sampled_from(_CONNECTIONS),
                                st.lists(st.sampled_from(_HOPS), max_size=4).map(", ".join),
                                st.sampled_from([None, "-", "203.0.113.9", "[2001:db8::7]:443"])),
                      min_size=1, max_size=6))
def test_trusting_no_public_proxy_reads_clients_as_the_regexes_do(rows):
    # `_trusted_clients` (on a batch, by address ranges) and `_client` (an expression, by
    # text) are one rule
    frame = pl.DataFrame(rows, schema={"c": pl.String, "f": pl.String, "h": pl.String}, orient="row")
    named = frame.rename({"c": "client", "f": "forwarded_for", "h": "proxied_client"})
    by_text = named.select(_client({"client", "forwarded_for", "proxied_client"})).to_series()
    by_range = _trusted_clients(frame.select(pl.struct("c", "f", "h")).to_series(), ())
    assert by_range.to_list() == by_text.to_list()


_EDGES = (ipaddress.ip_network("173.245.48.0/20"), ipaddress.ip_network("2400:cb00::/32"))


def _client_behind(connection: str | None, chain: str | None, header: str | None) -> str | None:
    """What `_trusted_clients` must give with `_EDGES` trusted, by Python's address parser:
    the connection where it is outside the site's network and the edges; else the chain's
    last address outside them (else its first), else the header's, else the connection."""
    def believed(text: str) -> bool:
        address = ipaddress.ip_address(text)
        address = getattr(address, "ipv4_mapped", None) or address
        return any(address in n for n in (*_OWN_NETWORKS, *_EDGES) if n.version == address.version)

    def bare(hop: str) -> str | None:
        hop = hop.strip()
        text = hop[1:hop.index("]")] if hop.startswith("[") and "]" in hop else (
            hop.rsplit(":", 1)[0] if hop.count(":") == 1 else hop)
        try:
            ipaddress.ip_address(text)
        except ValueError:
            return None
        return text

    if connection is not None and (bare(connection) is None or not believed(bare(connection))):
        return connection
    hops = [h for h in (bare(h) for h in (chain or "").split(",")) if h is not None]
    outside = [h for h in hops if not believed(h)]
    passed = outside[-1] if outside else hops[0] if hops else (bare(header) if header else None)
    return passed if passed is not None else connection


@given(rows=st.lists(st.tuples(st.sampled_from([*_CONNECTIONS, "173.245.49.7", "2400:cb00::7"]),
                               st.lists(st.sampled_from([*_HOPS, "173.245.49.7", "173.245.63.1",
                                                         "[2400:cb00::8]:443", "2400:cb01::1"]),
                                        max_size=4).map(", ".join),
                               st.sampled_from([None, "-", "203.0.113.9"])),
                     min_size=1, max_size=6))
def test_a_chains_client_behind_trusted_edges_is_the_last_address_outside_them(rows):
    frame = pl.DataFrame(rows, schema={"c": pl.String, "f": pl.String, "h": pl.String}, orient="row")
    got = _trusted_clients(frame.select(pl.struct("c", "f", "h")).to_series(), _EDGES).to_list()
    # up to three edges in a row are passed over (`_TRUSTED_HOPS`): the chains here hold four
    # hops at most, so that three passes reach the first
    assert got == [_client_behind(*row) for row in rows]


def test_a_public_proxy_whose_range_is_given_is_believed():
    # a CDN's edges (Cloudflare's 173.245.48.0/20, 2400:cb00::/32): what they pass on is the
    # client; from any other public address, a header anyone could send is not believed
    fmt = compile_format('%h %t "%r" %>s %b "%{X-Forwarded-For}i" %{CF-Connecting-IP}i')
    tail = ' [10/Oct/2000:13:55:36 -0700] "GET /{} HTTP/1.1" 200 5 "{}" {}'
    lines = pl.DataFrame({"line": [
        "173.245.49.7" + tail.format("edge", "66.249.66.1, 198.51.100.20", "-"),  # a forged chain
        "2400:cb00:2049:1::a29f:1a2b" + tail.format("edge6", "-", "2001:db8::9"),  # its header
        "198.51.100.1" + tail.format("direct", "66.249.66.1", "66.249.66.1"),  # not an edge
        "10.0.0.2" + tail.format("lb", "198.51.100.20, 173.245.49.7", "-"),  # balancer behind it
    ]})
    edges = ("173.245.48.0/20", "2400:cb00::/32")
    req, bad = parse_lines(lines, fmt.trusting(edges))
    assert bad.height == 0 and req.select(s.PATH, s.CLIENT).rows() == [
        ("/edge", "198.51.100.20"), ("/edge6", "2001:db8::9"), ("/direct", "198.51.100.1"),
        ("/lb", "198.51.100.20")]
    # without the ranges: the edges are clients, and behind the balancer the edge is
    req, _ = parse_lines(lines, fmt)
    assert req[s.CLIENT].to_list() == ["173.245.49.7", "2400:cb00:2049:1::a29f:1a2b", "198.51.100.1",
                                       "173.245.49.7"]


@pytest.mark.parametrize("fmt", ["combined", "nginx", "common"])
def test_a_user_name_may_hold_spaces(fmt):
    line = '1.2.3.4 - bob smith [10/Oct/2000:13:55:36 -0700] "GET /a HTTP/1.1" 401 5'
    line += "" if fmt == "common" else ' "-" "UA"'
    row = one(fmt, line)
    assert (row[s.CLIENT], row[s.PATH], row[s.STATUS]) == ("1.2.3.4", "/a", 401)


def test_a_user_name_does_not_swallow_a_leading_field():
    # a line with one field more in front puts identd's "-" first in the user's place
    for extra in ("shop.example.com " + COMBINED, "ex.org " + COMBINED.replace(" frank ", " - ")):
        assert parse("combined", extra)[1] == [(0, extra, "does not match combined")]
        assert detect_format([extra]).name == "host_combined"
    vhost_common = 'ex.org 1.2.3.4 - - [28/Nov/2026:10:00:00 +0000] "GET / HTTP/1.1" 200 1'
    assert parse("common", vhost_common)[0] == []
    assert detect_format([vhost_common]).name == "vhost_common"
    # no word of a user name is a lone "-": `- 66.249.66.1 - frank` is no user
    assert parse("combined", "ex.org - " + COMBINED)[0] == []


@pytest.mark.parametrize("fmt,line", [
    ('%h\t%t\t%r\t%>s\t%{User-Agent}i',
     '1.2.3.4\t[10/Oct/2000:13:55:36 -0700]\tGET /a HTTP/1.1\t200\tMozilla/5.0 (X11)'),
    ('$remote_addr|[$time_local]|$request|$status|$http_user_agent',
     '1.2.3.4|[10/Oct/2000:13:55:36 -0700]|GET /a HTTP/1.1|200|Mozilla/5.0 (X11)'),
    ('%h %t "%r" %>s %b %{User-Agent}i',
     '1.2.3.4 [10/Oct/2000:13:55:36 -0700] "GET /a HTTP/1.1" 200 5 Mozilla/5.0 (X11)'),
])
def test_free_text_ending_at_a_tab_a_bar_or_the_line_may_hold_spaces(fmt, line):
    row = one(fmt, line)
    assert (row[s.TIME], row[s.METHOD], row[s.PATH], row[s.STATUS], row[s.USER_AGENT]) == (
        datetime(2000, 10, 10, 20, 55, 36, tzinfo=UTC), "GET", "/a", 200, "Mozilla/5.0 (X11)")

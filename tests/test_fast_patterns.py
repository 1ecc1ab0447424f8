"""The C patterns (`logtrap/_patterns.c`, `patterns._patterns_of`) are the Polars patterns
(`patterns._with_patterns`), URL for URL: the same pattern and the same section."""

from __future__ import annotations

import glob
import struct
from pathlib import Path

import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from polars.testing import assert_frame_equal

from logtrap import patterns, read_logs
from logtrap import schema as s
from logtrap.errors import ConfigError
from logtrap.patterns import _URL_KEY, _patterns_of, _with_patterns, tracking_names
from logtrap.settings import Settings

CORPUS = Path(__file__).resolve().parents[2] / "shared" / "corpus" / "real"

# Pieces URLs are made of here: every character a rule or a pass looks at, the values each
# rule takes and the ones just outside it, and bytes the C way must hand back (not ASCII).
PIECES = [
    "/", "/", "/", "//", "?", "&", "&", "=", "#", ";", ".", ",", "-", "_", "%", "%2F", "%zz",
    "%4", "\x01", "\x00", " ", "{n}", "{", "}", "a", "Z", "abc", "Abcd", "html", ".html",
    ".php", ".xhtml", ".tar", ".gz", ".mp4", ".abcdef", ".a1b2c", ".1", "0", "7", "12", "123", "00001",
    "2024", "05", "13", "31", "32", "3", "2024-05-01", "2024_5", "2024-13", "01-05-2024",
    "1.5.2024", "31_12_1999", "32-1-2024", "2024.05.01", "2024.5", "1.5", "1,5", "-4", "-",
    "deadbeef", "DEADBEEF1", "abcdef0", "a1", "a8fk21qz", "iphone15", "abc12345", "ab1234",
    "1abcd", "1abcde", "0123abcd-0000-4000-8000-0123456789ab", "utm_", "UTM_Source", "utm",
    "gclid", "GCLID", "Gclid", "sid", "PHPSESSID", "jsessionid", "http://", "HTTPS://host",
    "h.t-t+p://x", "1http://", "://", "my-first-post", "a_b_c", "a--b-c", "item_37",
    "12-days", "thread-", "x-1-2", "é", "٣", "ſ", "K", "myparam", "ab", "&ab",
]  # fmt: skip

urls = st.lists(st.sampled_from(PIECES), max_size=14).map("".join)


def polars_way(frame: pl.DataFrame, setup: Settings) -> pl.DataFrame:
    return _with_patterns(frame.lazy(), setup).drop(s.URL).collect().sort(_URL_KEY)


def assert_same(values: list[str | None], setup: Settings | None = None) -> None:
    setup = setup or Settings()
    frame = pl.DataFrame(
        {_URL_KEY: range(len(values)), s.URL: values},
        schema={_URL_KEY: pl.UInt64, s.URL: pl.String},
    )
    assert_frame_equal(_patterns_of(frame, setup).sort(_URL_KEY), polars_way(frame, setup))


def test_the_patterns_extension_is_built():
    # `pip install -e .` builds it wherever a C compiler is (CI has gcc); without it every
    # test here would compare the Polars way with itself.
    assert patterns._fast is not None


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(urls | st.none(), min_size=1, max_size=40))
def test_generated_urls_get_the_polars_patterns(values):
    assert_same(values)


@settings(max_examples=100, deadline=None)
@given(st.lists(st.text(max_size=30), min_size=1, max_size=20))
def test_any_text_gets_the_polars_patterns(values):
    assert_same(values)


@pytest.mark.parametrize(
    "url, pattern, section",
    [
        ("/2024-05-01/x", "/{date}/x", "/{date}/x"),
        ("/a/1-5-2024.html", "/a/{date}.html", "/a/{date}.html"),
        ("/p/0123abcd-0000-4000-8000-0123456789ab", "/p/{hex}", "/p/{hex}"),
        ("/p/deadbeef1", "/p/{hex}", "/p/{hex}"),
        ("/s/a8fk21qz?x=1", "/s/{token}?x", "/s/{token}"),
        ("/s/iphone15", "/s/iphone15", "/s/iphone15"),
        ("/blog/my-first-post.html", "/blog/{slug}.html", "/blog/{slug}.html"),
        ("/f/thread-12345.html", "/f/thread-{n}.html", "/f/thread-{n}.html"),
        ("/f/12-days", "/f/{n}-days", "/f/{n}-days"),
        ("/cart;jsessionid=AB12/x", "/cart;jsessionid/x", "/cart;jsessionid/x"),
        ("https://ex.org/a?utm_source=x&b=2&a&2024=1", "/a?a&b&{n}&{tracking}", "/a"),
        ("HTTP://ex.org", "/", "/"),
        ("/a//b#frag?x", "/a//b", "/a"),
        ("/a\x01b/c", "/a%01b/c", "/a%01b/c"),
        ("/f/12.xhtml", "/f/{n}.xhtml", "/f/{n}.xhtml"),  # an .ext of five characters
        ("/f/12.xhtmls", "/f/12.xhtmls", "/f/12.xhtmls"),  # six: no .ext
        ("/q?ab=1&a=2&abc&a", "/q?a&ab&abc", "/q"),  # sorted bytewise, a name before its longer ones
        ("*", "*", "*"),
        ("", "", "/"),
    ],
)
def test_each_rule_in_c(url, pattern, section):
    frame = pl.DataFrame({_URL_KEY: [1], s.URL: [url]}, schema={_URL_KEY: pl.UInt64, s.URL: pl.String})
    assert _patterns_of(frame, Settings()).row(0) == (1, pattern, section)
    assert_same([url])


def test_a_sites_own_tracking_names_in_c_and_not_ascii_ones_in_polars():
    own = Settings(tracking_params=["Ref", "camp.id"])
    assert_same(["/a?ref=1&REF=2&camp.id=3&campXid=4", "/b?Camp.Id"], own)
    # `(?i)` folds the long s of `ſid` onto `sid`: such names are left to Polars whole
    folded = Settings(tracking_params=["ſid"])
    assert "ſid" in tracking_names(folded)
    assert_same(["/a?sid=1&SID=2&ſid=3"], folded)


def test_urls_that_are_not_ascii_are_handed_back():
    array = pl.Series(["/é/12", "/a/12", None]).to_arrow(compat_level=pl.CompatLevel.oldest())
    validity, offsets, data = array.buffers()
    result = patterns._fast.patterns(offsets, data, validity, 0, 3, ())
    pat_offsets, pat_data, _, sec_data, slow = result
    assert slow == b"\x01\x00\x00"
    assert pat_data == b"/a/{n}" and sec_data == b"/a/{n}/"  # the null URL: "" and "/"


def test_buffers_shorter_than_their_rows_are_an_error():
    array = pl.Series(["/a"]).to_arrow(compat_level=pl.CompatLevel.oldest())
    _, offsets, data = array.buffers()
    with pytest.raises(ValueError, match="shorter"):
        patterns._fast.patterns(offsets, data, None, 0, 5, ())
    with pytest.raises(ValueError, match="out of order"):
        patterns._fast.patterns(b"\x00" * 8 + b"\xff" * 8, b"", None, 0, 1, ())
    # (adversarial review 21: offset + n wrapped around and passed the check, then crashed)
    two = struct.pack("<2q", 0, 1)
    for offset, n in [(2**61 - 2**40, 2**40), (0, 2**62), (0, 2**61 - 1), (-1, 1), (1, 1)]:
        with pytest.raises(ValueError, match="shorter"):
            patterns._fast.patterns(two, b"/", None, offset, n, ())
    with pytest.raises(ValueError, match="shorter"):  # a validity bitmap too short for its rows
        patterns._fast.patterns(struct.pack("<10q", *range(10)), b"/" * 9, b"", 0, 9, ())
    with pytest.raises(ValueError, match="aligned"):
        patterns._fast.patterns(memoryview(b"\x00" + two)[1:], b"/", None, 0, 1, ())


@pytest.mark.parametrize("bad", ["", "a&b", "ref="])
def test_a_parameter_name_that_cannot_be_one_is_a_config_error(bad):
    # (adversarial review 21: in the Polars regex "" took every "&&" between two names as
    # tracking, and "a&" the name before another; the C way did neither)
    with pytest.raises(ConfigError, match="is not a query parameter name"):
        Settings(tracking_params=["ref", bad])
    with pytest.raises(ConfigError, match="is not a query parameter name"):
        Settings(session_params=[bad])


def test_a_sliced_frame_is_read_from_its_own_rows():
    frame = pl.DataFrame({_URL_KEY: range(6), s.URL: ["/a/1", None, "/b/x-y-z", "/c", "/d/7", "/é/2"]},
                         schema={_URL_KEY: pl.UInt64, s.URL: pl.String})
    part = frame.slice(2, 3)
    assert _patterns_of(part, Settings()).rows() == [
        (2, "/b/{slug}", "/b/{slug}"), (3, "/c", "/c"), (4, "/d/{n}", "/d/{n}")]


def distinct_urls(paths: list[str]) -> list[str | None]:
    return read_logs(paths).get_column(s.URL).unique().sort().to_list()


def test_the_bundled_logs_urls_get_the_polars_patterns():
    paths = sorted(glob.glob("sample_logs/**/access.log*", recursive=True))
    values = distinct_urls(paths)
    assert len(values) > 7_000
    assert_same(values)


@pytest.mark.skipif(not CORPUS.is_dir(), reason="real corpus not present (../shared/corpus/real)")
def test_the_real_corpus_urls_get_the_polars_patterns():
    paths = sorted(str(p) for p in CORPUS.iterdir() if p.is_file() and p.name != "SOURCES.md")
    for path in paths:  # each with its own format (auto-detected)
        assert_same(distinct_urls([path]))


def test_urls_handed_back_keep_their_place():
    # a cache takes the patterns of its new URLs in the order it gave them
    urls = ["/a/1", "/\u00e9t\u00e9/2", "/b/x-y-z", "/caf\u00e9?q=1", "/c/2024-05-01"]
    frame = pl.DataFrame({s.URL: urls}).with_columns(pl.col(s.URL).hash(0).alias(_URL_KEY))
    got = _patterns_of(frame, Settings())
    assert got[_URL_KEY].to_list() == frame[_URL_KEY].to_list()
    assert got[s.PATTERN].to_list() == ["/a/{n}", "/\u00e9t\u00e9/{n}", "/b/{slug}", "/caf\u00e9?q", "/c/{date}"]

"""logs.py: files, compression, rotated sets, stdin, resume offsets, bad lines, batching."""

from __future__ import annotations

import bz2
import gzip
import hashlib
import io
import lzma
import os
import random
import sys
import warnings
from datetime import datetime, timezone

import polars as pl
import pytest
from polars.testing import assert_frame_equal

from builders import pinned_string_bytes
from logtrap import schema as s
from logtrap.errors import FormatError, InputError, RejectedLinesWarning
from logtrap.logs import FileRead, Source, order_rotated, read_logs, scan_logs
from logtrap.settings import Settings

UTC = timezone.utc


def line(day: int, hour: int, path: str = "/", status: int = 200) -> str:
    return (f'10.0.0.{day} - - [{day:02d}/Nov/2026:{hour:02d}:00:00 +0000] "GET {path} HTTP/1.1" '
            f'{status} 100 "-" "curl/8.0"\n')


def write(path, text: str | bytes, opener=open):
    data = text.encode() if isinstance(text, str) else text
    with opener(path, "wb") as f:
        f.write(data)
    return str(path)


def test_plain_gzip_bz2_and_xz_read_the_same(tmp_path):
    text = "".join(line(1, h, f"/p{h}") for h in range(10))
    plain = write(tmp_path / "a.log", text)
    gz = write(tmp_path / "b.log.gz", text, gzip.open)
    bz = write(tmp_path / "c.log.bz2", text, bz2.open)
    xz = write(tmp_path / "d.log.xz", text, lzma.open)  # logrotate's compresscmd xz
    frames = [read_logs(p) for p in (plain, gz, bz, xz)]
    for frame, p in zip(frames, (plain, gz, bz, xz)):
        assert frame[s.PATH].to_list() == [f"/p{h}" for h in range(10)]
        assert frame[s.SOURCE].unique().to_list() == [p]
    stream = scan_logs([gz])
    list(stream)
    f = stream.stats.files[0]
    assert (f.lines, f.parsed, f.end_offset, f.size) == (10, 10, len(text), os.path.getsize(gz))
    assert f.fingerprint == hashlib.sha1(text.split("\n")[0].encode()).hexdigest()


def test_a_zstd_log_is_named_and_its_way_in_given(tmp_path):
    # it failed as "cannot split input into lines (Frame requires too much memory)", no file
    zst = tmp_path / "access.log.2.zst"
    zst.write_bytes(b"\x28\xb5\x2f\xfd" + bytes(60))
    with pytest.raises(InputError) as caught:
        read_logs(zst)
    assert str(caught.value) == f"{zst}: compressed with zstd, which logtrap cannot read"
    assert caught.value.hint == (
        f"decompress it on the way in (zstd -dc {zst} | logtrap analyze -); under cron, leave "
        ".zst files out of the glob or have logrotate compress with gzip or xz")


def test_a_log_beside_its_compressed_copy_is_read_once(tmp_path):
    # access.log.1 and access.log.1.gz while logrotate compresses it (the .gz cut short), or
    # after gzip -k: 2,000 lines were counted 4,000 times, or the cut .gz failed the run
    text = "".join(line(1, h % 24, f"/p{h}") for h in range(2000))
    one = write(tmp_path / "access.log.1", text)
    gz = write(tmp_path / "access.log.1.gz", gzip.compress(text.encode())[:3000])
    live = write(tmp_path / "access.log", line(2, 1, "/today"))
    stream = scan_logs(str(tmp_path / "access.log*"))
    assert sum(f.height for f in stream) == 2001
    assert stream.stats.copies == {gz: one}
    assert [f.path for f in stream.stats.files] == [one, live]
    # the same, named another way, or with no byte decompressed yet (just begun)
    stream = scan_logs([one, str(tmp_path / "." / "access.log.1.gz")])
    assert sum(f.height for f in stream) == 2000
    write(tmp_path / "access.log.1.gz", gzip.compress(text.encode())[:12])
    stream = scan_logs(str(tmp_path / "access.log*"))
    assert sum(f.height for f in stream) == 2001 and stream.stats.copies == {gz: one}
    # a .gz that is not the plain file's copy is a log of its own, read
    write(tmp_path / "access.log.1.gz", gzip.compress(line(3, 1, "/other").encode()))
    stream = scan_logs(str(tmp_path / "access.log*"))
    assert sum(f.height for f in stream) == 2002 and stream.stats.copies == {}


def test_rotated_set_given_shuffled_is_read_oldest_first(tmp_path):
    # access.log.3.gz holds day 1 ... access.log holds day 5
    names = ["access.log.4.gz", "access.log.3.gz", "access.log.2", "access.log.1", "access.log"]
    paths = []
    for day, name in enumerate(names, start=1):
        opener = gzip.open if name.endswith(".gz") else open
        paths.append(write(tmp_path / name, line(day, 1) + line(day, 2), opener))
    shuffled = paths[:]
    random.Random(7).shuffle(shuffled)
    assert shuffled != paths
    req = read_logs(shuffled)
    assert req[s.SOURCE].unique(maintain_order=True).to_list() == paths
    assert req[s.TIME].is_sorted()
    assert req[s.TIME][0] == datetime(2026, 11, 1, 1, tzinfo=UTC)
    assert req[s.TIME][-1] == datetime(2026, 11, 5, 2, tzinfo=UTC)


def test_a_rotated_set_from_before_the_format_named_the_host_is_that_hosts(tmp_path):
    # the admin added %v to the format: the older files name no host, the newer one host
    # (their traps were reported twice, under "-" and its name, and cron alerted again)
    old = write(tmp_path / "access.log.1.gz", line(1, 1) + line(1, 2), gzip.open)
    vhosts = [f"Shop.example:443 {line(2, h)}" for h in (1, 2)]
    write(tmp_path / "access.log", "".join(vhosts))
    stream = scan_logs(str(tmp_path / "access.log*"))
    req = pl.concat(list(stream))
    assert req[s.HOST].to_list() == ["shop.example"] * 4
    assert stream.stats.unnamed_host == {old: "shop.example"}
    assert [f.format_name for f in stream.stats.files] == ["combined", "vhost_combined"]
    # the newer files name two hosts: whose the older lines were cannot be told
    write(tmp_path / "access.log", vhosts[0] + f"blog.example:443 {line(2, 3)}")
    stream = scan_logs(str(tmp_path / "access.log*"))
    assert pl.concat(list(stream))[s.HOST].to_list() == ["-", "-", "shop.example", "blog.example"]
    assert stream.stats.unnamed_host == {}
    # a file read alone is read as it is
    assert read_logs(old)[s.HOST].to_list() == ["-", "-"]


def test_glob_expands_and_duplicates_are_read_once(tmp_path):
    a = write(tmp_path / "x.log", line(2, 1))
    b = write(tmp_path / "x.log.1", line(1, 1))
    req = read_logs([str(tmp_path / "x.log*"), a, str(tmp_path / "." / "x.log")])
    assert req[s.SOURCE].to_list() == [b, a]


def test_order_rotated_numbers_dates_and_sets():
    assert order_rotated(["b/access.log", "a.log.10.gz", "a.log.9", "b/access.log.1", "a.log",
                          "a.log.2.gz"]) == [
        "b/access.log.1", "b/access.log", "a.log.10.gz", "a.log.9", "a.log.2.gz", "a.log"]
    assert order_rotated(["s.log", "s.log-20261201.gz", "s.log-20261115", "s.log-20261128.bz2"]) == [
        "s.log-20261115", "s.log-20261128.bz2", "s.log-20261201.gz", "s.log"]
    assert order_rotated(["-", "x.log"]) == ["-", "x.log"]


class _Stdin:
    def __init__(self, data: bytes) -> None:
        self.buffer = io.BytesIO(data)


def test_stdin(monkeypatch):
    monkeypatch.setattr(sys, "stdin", _Stdin((line(3, 4) + line(3, 5)).encode()))
    stream = scan_logs("-")
    req = pl.concat(list(stream))
    assert req[s.SOURCE].to_list() == ["-", "-"]
    assert req[s.TIME].to_list() == [datetime(2026, 11, 3, 4, tzinfo=UTC),
                                     datetime(2026, 11, 3, 5, tzinfo=UTC)]
    f = stream.stats.files[0]
    assert (f.path, f.device, f.inode, f.size, f.lines) == ("-", None, None, None, 2)


@pytest.mark.parametrize("opener", [open, gzip.open], ids=["plain", "gzip"])
def test_resume_from_offset_reads_exactly_the_rest(tmp_path, opener):
    first = line(1, 1, "/a") + line(1, 2, "/b")
    rest = line(1, 3, "/c") + "bad line\n" + line(1, 4, "/d")
    path = write(tmp_path / ("r.log.gz" if opener is gzip.open else "r.log"), first + rest, opener)
    stream = scan_logs(Source(path, offset=len(first), line_no=2))
    req = pl.concat(list(stream))
    assert req[s.PATH].to_list() == ["/c", "/d"]
    f = stream.stats.files[0]
    assert (f.start_offset, f.end_offset, f.lines, f.parsed, f.rejected) == (
        len(first), len(first + rest), 3, 2, 1)
    assert f.fingerprint == hashlib.sha1(first.split("\n")[0].encode()).hexdigest()
    assert stream.stats.rejected_examples.rows() == [(path, 4, "bad line", "does not match combined")]


def test_bad_lines_are_counted_with_file_and_line_number(tmp_path):
    a = write(tmp_path / "a.log", line(1, 1) + "oops\n\n" + line(1, 2) + "worse\n")
    b = write(tmp_path / "b.log", line(2, 1) + "\r\n" + "again\r\n")
    stream = scan_logs([a, b], settings=Settings(rejected_examples=2))
    req = pl.concat(list(stream))
    assert req.height == 3
    st = stream.stats
    assert (st.lines, st.parsed, st.rejected) == (8, 3, 3)
    assert st.rejected_examples.schema == pl.Schema(s.REJECTED_SCHEMA)
    assert st.rejected_examples.rows() == [
        (a, 2, "oops", "does not match combined"), (a, 5, "worse", "does not match combined")]
    assert [(f.path, f.lines, f.parsed, f.rejected) for f in st.files] == [(a, 5, 2, 2), (b, 3, 1, 1)]


def test_read_logs_warns_of_the_lines_it_leaves_out(tmp_path):
    a = write(tmp_path / "a.log", line(1, 1) + "oops\n\n" + line(1, 2) + "worse\n")
    with pytest.warns(RejectedLinesWarning) as caught:
        req = read_logs(a)
    assert req.height == 2
    assert str(caught[0].message) == (
        f"2 of 5 lines did not parse and are not in the frame; the first, {a} line 2: does not "
        "match combined: 'oops' (scan_logs(...).stats counts them per file, with examples)")
    assert caught[0].filename == __file__  # pointed at the caller's line, not logtrap's
    with pytest.warns(RejectedLinesWarning, match=r"^2 of 5 lines did not parse and are not in "
                      r"the frame \(scan_logs"):
        read_logs(a, settings=Settings(rejected_examples=0))  # no example kept to show
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # every line parsed: no warning
        assert read_logs(write(tmp_path / "b.log", line(1, 1))).height == 1


def test_bad_line_examples_keep_no_batch_alive(tmp_path):
    # one bad line in each of many batches: kept as views, each example held its whole batch
    good = "".join(line(1, i % 24, "/a-path-long-enough-to-need-a-buffer") for i in range(30))
    text = "".join(good + f"bad line number {i} of the log\n" for i in range(5))
    stream = scan_logs(write(tmp_path / "a.log", text), settings=Settings(batch_bytes=4096))
    assert sum(f.height for f in stream) == 150
    examples = stream.stats.rejected_examples
    assert examples[s.LINE].to_list() == [f"bad line number {i} of the log" for i in range(5)]
    pinned, needed = pinned_string_bytes(examples)
    assert pinned == needed


def test_wrong_format_file_raises_one_clear_error(tmp_path):
    path = write(tmp_path / "json.log", '{"msg": "hello"}\n' * 3)
    with pytest.raises(FormatError) as err:
        read_logs(path)
    msg = str(err.value)
    assert path in msg and "auto-detection (vhost_combined, combined" in msg and '{"msg": "hello"}' in msg
    assert "none of its first 3 lines parse; first line: " in msg
    common = write(tmp_path / "common.log", line(1, 1).split(' "-"')[0] + "\n")
    with pytest.raises(FormatError, match=r"common\.log: not in the vhost_combined format: "
                       r"its only line does not parse: '10\.0\.0\.1"):
        read_logs(common, log_format="vhost_combined")


@pytest.mark.parametrize("log_format", ["auto", "combined"])
def test_a_log_whose_first_lines_are_junk_is_read_from_its_first_lines_that_parse(tmp_path, log_format):
    # more junk than the 20 lines a format is chosen from: a crash's bytes, another program's
    # lines; rejected and counted, the log read from there
    junk = "".join(f"\x00\x00 garbage {i} left by a crash\n" for i in range(25))
    path = write(tmp_path / "a.log", junk + "".join(line(1, h, f"/p/{h}") for h in range(24)))
    stream = scan_logs(path, settings=Settings(log_format=log_format))
    frame = pl.concat(list(stream))
    assert frame[s.URL].to_list() == [f"/p/{h}" for h in range(24)]
    assert stream.formats[path].name == "combined"
    assert (stream.stats.lines, stream.stats.parsed, stream.stats.rejected) == (49, 24, 25)
    assert stream.stats.rejected_examples[s.LINE_NO].to_list()[:2] == [1, 2]
    # past the lines looked at (1,000), or a file with no line of the format: the clear error
    for n in (1_001, 30):
        path = write(tmp_path / f"{n}.log", "not a log line\n" * n + line(1, 1) * (n > 30))
        with pytest.raises(FormatError, match=f"none of its first {min(n, 1000):,} lines parse; "
                           "first line: 'not a log line'"):
            read_logs(path, log_format=log_format)


def test_missing_unreadable_and_corrupt_inputs_raise_input_error(tmp_path):
    missing = str(tmp_path / "nope.log")
    with pytest.raises(InputError, match="nope.log"):
        read_logs(missing)
    with pytest.raises(InputError, match="no file matches"):
        read_logs(str(tmp_path / "*.nothing"))
    with pytest.raises(InputError, match="is a directory"):
        read_logs(str(tmp_path))
    good = gzip.compress((line(1, 1) * 50).encode())
    corrupt = write(tmp_path / "c.log.gz", good[: len(good) // 2])
    with pytest.raises(InputError, match="c.log.gz"):
        read_logs(corrupt)
    garbage = write(tmp_path / "g.log.gz", b"\x1f\x8bnot gzip at all")
    with pytest.raises(InputError, match="g.log.gz"):
        read_logs(garbage)


def test_tiny_batches_equal_one_batch_and_keep_line_numbers(tmp_path):
    lines = [line(1 + i % 28, i % 24, f"/p{i}") for i in range(60)]
    lines[7] = "bad seven\n"
    lines[45] = "bad forty-five\n"
    lines[30] = "\n"
    long = line(9, 9, "/" + "x" * 700)  # longer than a batch
    path = write(tmp_path / "t.log", "".join(lines) + long)
    big = scan_logs(path)
    one = pl.concat(list(big))
    small = scan_logs(path, settings=Settings(batch_bytes=300, rejected_examples=10))
    frames = list(small)
    assert len(frames) > 10
    assert_frame_equal(pl.concat(frames), one)
    assert one.height == 58
    assert small.stats.rejected_examples.select(s.LINE_NO, s.LINE).rows() == [
        (8, "bad seven"), (46, "bad forty-five")]
    assert (small.stats.lines, big.stats.lines) == (61, 61)


def test_mess_in_a_file_crlf_nul_non_utf8_no_final_newline(tmp_path):
    raw = (line(1, 1).replace("\n", "\r\n").encode()
           + b'10.0.0.2 - - [02/Nov/2026:00:00:00 +0000] "GET /\xff\xfe HTTP/1.1" 200 1 "-" "a\x00b"\n'
           + line(3, 3, "/last").rstrip("\n").encode())
    path = write(tmp_path / "m.log", raw)
    stream = scan_logs(path)
    req = pl.concat(list(stream))
    assert req[s.PATH].to_list() == ["/", "/\ufffd\ufffd", "/last"]
    assert req[s.USER_AGENT].to_list() == ["curl/8.0", "a\\x00b", "curl/8.0"]
    assert stream.stats.files[0].end_offset == len(raw)
    assert stream.stats.rejected == 0


def test_empty_file_and_blank_only_file(tmp_path):
    empty = write(tmp_path / "e.log", "")
    blank = write(tmp_path / "b.log", "\n\n  \n")
    stream = scan_logs([empty, blank])
    assert list(stream) == []
    assert [(f.lines, f.format_name) for f in stream.stats.files] == [(0, None), (3, None)]
    assert read_logs(empty).schema == pl.Schema(s.REQUEST_SCHEMA)


def test_a_byte_order_mark_is_no_line(tmp_path):
    # a log saved by a Windows editor starts with one; alone, it is an empty file
    alone = write(tmp_path / "bom.log", b"\xef\xbb\xbf")
    first = write(tmp_path / "first.log", b"\xef\xbb\xbf" + line(1, 1).encode())
    stream = scan_logs([alone, first])
    assert pl.concat(list(stream))[s.PATH].to_list() == ["/"]
    assert [(f.lines, f.rejected) for f in stream.stats.files] == [(0, 0), (1, 0)]


def test_progress_reports_disk_bytes_and_stream_reads_once(tmp_path):
    text = "".join(line(1, h % 24) for h in range(40))
    path = write(tmp_path / "p.log.gz", text, gzip.open)
    calls = []
    stream = scan_logs(path, settings=Settings(batch_bytes=1000),
                       on_progress=lambda done, total, n: calls.append((done, total, n)))
    list(stream)
    size = os.path.getsize(path)
    assert calls[-1] == (size, size, 40)
    assert all(total == size for _, total, _ in calls)
    assert [n for _, _, n in calls] == sorted(n for _, _, n in calls)
    with pytest.raises(InputError, match="only once"):
        list(stream)


def test_explicit_format_and_formats_map(tmp_path):
    path = write(tmp_path / "n.log", '1.2.3.4 2026-11-28T10:00:00+00:00 "GET /x HTTP/1.1" 200 0.5\n')
    spec = '$remote_addr $time_iso8601 "$request" $status $request_time'
    stream = scan_logs(path, settings=Settings(log_format=spec))
    req = pl.concat(list(stream))
    assert (req[s.REQUEST_TIME][0], stream.formats[path].kind) == (0.5, "nginx")
    f: FileRead = stream.stats.files[0]
    assert (f.format_name, f.format_spec) == ("custom", spec)


# -- property: any bytes in a file give frames or a LogtrapError, nothing else ----------------
from hypothesis import HealthCheck, given, settings as hsettings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from logtrap.errors import LogtrapError  # noqa: E402

_LINE = line(1, 1)
_pieces = st.one_of(st.binary(max_size=60), st.just(_LINE.encode()), st.just(b"\n"),
                    st.just(b"\r\n"), st.just(b"\x00"), st.just(b'"'), st.just(b"\\"),
                    st.just(b"\x1f\x8b"), st.just(b"BZh"))


@hsettings(max_examples=150, deadline=None,
           suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(parts=st.lists(_pieces, max_size=12),
       fmt=st.sampled_from(["auto", "combined", "common", '$remote_addr "$request" $status']),
       batch=st.sampled_from([64, 1000, 1 << 20]))
def test_reader_raises_only_logtrap_errors_on_any_bytes(tmp_path, parts, fmt, batch):
    path = tmp_path / "any.log"
    path.write_bytes(b"".join(parts))
    try:
        stream = scan_logs(str(path), settings=Settings(log_format=fmt, batch_bytes=batch))
        frames = list(stream)
    except LogtrapError:
        return
    st_ = stream.stats
    assert sum(f.height for f in frames) == st_.parsed
    assert st_.parsed + st_.rejected <= st_.lines


def test_stopping_early_stops_the_read_ahead_thread(tmp_path):
    import threading

    path = write(tmp_path / "big.log.gz", "".join(line(1, h % 24) for h in range(500)), gzip.open)
    stream = scan_logs(path, settings=Settings(batch_bytes=2000))
    it = iter(stream)
    first = next(it)
    assert first.height > 0
    assert any(t.name == "logtrap-read" for t in threading.enumerate())
    it.close()
    assert not any(t.name == "logtrap-read" for t in threading.enumerate())
    assert stream.stats.files[0].fingerprint == hashlib.sha1(line(1, 0).rstrip("\n").encode()).hexdigest()


def test_read_ahead_runs_ahead_up_to_its_weight_limit():
    import threading
    import time

    from logtrap.logs import _read_ahead

    produced: list[int] = []
    made = threading.Condition()

    def items():
        for i in range(100):
            with made:
                produced.append(i)
                made.notify_all()
            yield 4  # each item weighs 4

    def settles_at(n: int) -> int:
        with made:
            made.wait_for(lambda: len(produced) >= n, timeout=5)
        time.sleep(0.2)  # would it go further?
        return len(produced)

    it = _read_ahead(items(), limit=10, weight=lambda w: w)
    assert next(it) == 4
    # one taken; waiting: 4+4+4 (each put while under 10); one more made, held for room
    assert settles_at(5) == 5
    next(it)
    assert settles_at(6) == 6
    assert sum(1 for _ in it) == 98
    assert len(produced) == 100


def test_hosts_setting_keeps_only_those_virtual_hosts(tmp_path):
    text = "".join(f"{h}:443 " + line(1, 1) for h in ("a.org", "b.org", "A.org"))
    path = write(tmp_path / "v.log", text)
    stream = scan_logs(path, settings=Settings(hosts=("a.org",)))
    req = pl.concat(list(stream))
    assert req[s.HOST].to_list() == ["a.org", "a.org"]
    assert stream.stats.parsed == 3


def test_stdin_progress_counts_bytes_read(monkeypatch):
    data = (line(3, 4) * 3).encode()
    monkeypatch.setattr(sys, "stdin", _Stdin(data))
    calls = []
    list(scan_logs("-", on_progress=lambda done, total, n: calls.append((done, total, n))))
    assert calls == [(len(data), None, 3)]


def test_empty_file_fingerprint_is_sha1_of_nothing(tmp_path):
    stream = scan_logs(write(tmp_path / "e.log", ""))
    list(stream)
    assert stream.stats.files[0].fingerprint == hashlib.sha1(b"").hexdigest()


def test_gzip_on_stdin(monkeypatch):
    monkeypatch.setattr(sys, "stdin", _Stdin(gzip.compress((line(5, 6, "/z") * 2).encode())))
    req = read_logs("-")
    assert req[s.PATH].to_list() == ["/z", "/z"]


def _inflaters():
    import zlib

    out = [pytest.param(zlib, id="zlib")]
    try:
        from isal import isal_zlib
    except ImportError:  # the platform marker left isal out: zlib is what runs here
        return out
    return out + [pytest.param(isal_zlib, id="isal")]


@pytest.mark.parametrize("inflater", _inflaters())
def test_gzip_members_concatenated_and_zero_padded(tmp_path, monkeypatch, inflater):
    # `cat a.gz b.gz > c.gz` is a valid gzip file; tape-style zero padding after it too.
    # The same with ISA-L and with zlib (where isal has no wheel).
    import logtrap.logs

    monkeypatch.setattr(logtrap.logs, "_inflate", inflater)
    first, second = line(1, 1, "/a") * 3, line(1, 2, "/b") * 2
    data = gzip.compress(first.encode()) + gzip.compress(second.encode()) + b"\x00" * 10
    path = write(tmp_path / "m.log.gz", data)
    stream = scan_logs(path, settings=Settings(batch_bytes=100))
    req = pl.concat(list(stream))
    assert req[s.PATH].to_list() == ["/a"] * 3 + ["/b"] * 2
    assert stream.stats.files[0].end_offset == len(first + second)
    bad_crc = bytearray(gzip.compress(first.encode()))
    bad_crc[-5] ^= 0xFF  # the CRC-32 in the trailer
    with pytest.raises(InputError, match="corrupt"):
        read_logs(write(tmp_path / "crc.log.gz", bytes(bad_crc)))

"""Paths, rotated sets, .gz/.bz2/.xz and stdin -> a stream of request frames.

The reader never holds a whole file: it reads `settings.batch_bytes` of decompressed data at a
time, cuts at the last newline (the rest waits for the next batch) and parses the batch with
`formats.parse_chunk`: its lines cut into columns in C (`_cut.c`), the few that are not plain
(escapes, other bytes than ASCII) parsed by `formats.parse_lines` in Polars. Without the
extension, the batch becomes a one-column frame with Polars' CSV reader, all of it parsed by
`parse_lines`. The format is detected from the first lines of each file.

Line counting: every line counts in `lines`, empty ones too (a blank line is a line of the
file, so line numbers stay those of an editor); an empty line is neither parsed nor rejected.
"""

from __future__ import annotations

import bz2
import collections
import glob
import hashlib
import lzma
import os
import re
import sys
import threading
import warnings
import zlib
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import BinaryIO, TypeVar

import polars as pl

from logtrap import schema as s
from logtrap.errors import FormatError, InputError, LogtrapError, RejectedLinesWarning
from logtrap import formats
from logtrap.formats import (
    DETECT_ORDER, LogFormat, compile_format, detect_format, parse_chunk, parse_lines, to_lines,
)
from logtrap.settings import Settings

try:  # ISA-L's inflate: the same stream, 1.7x faster than zlib's here (benchmarks/run.py)
    from isal import isal_zlib as _inflate
except ImportError:  # no wheel for this platform: zlib does the same job
    _inflate = zlib  # type: ignore[assignment]

STDIN = "-"
_FINGERPRINT_BYTES = 256  # first line, capped: identifies a file across renames by rotation
COMPRESSED_SUFFIXES = (".gz", ".bz2", ".xz", ".zst")  # compressed logs, by name
_GLOB_CHARS = re.compile(r"[*?\[]")


@dataclass(frozen=True)
class Source:
    """A file to read, from `offset` bytes into its decompressed stream (cron resume).

    `line_no` is the number of lines before `offset`, so line numbers stay those of the file.
    """

    path: str
    offset: int = 0
    line_no: int = 0
    # Leave a last line without its newline unread (cron: the server may be mid-write; the
    # next run reads it whole).
    whole_lines: bool = False
    # (device, inode, fingerprint) the file had when a cron run planned to read it: read only
    # if it still has them when its turn comes (`LogStream.moved`)
    expect: tuple[int, int, str] | None = None


@dataclass
class FileRead:
    """What reading one file did: enough for state.py to resume it and to notice rotation."""

    path: str
    device: int | None  # None for stdin
    inode: int | None
    fingerprint: str  # sha1 hex of the first line (up to 256 bytes) of the decompressed stream
    size: int | None  # bytes on disk when opened; None for stdin
    start_offset: int  # decompressed offset reading started at
    end_offset: int  # decompressed offset reached (after the last line read)
    lines: int = 0  # lines read in this run (empty lines included)
    parsed: int = 0
    rejected: int = 0
    format_name: str | None = None  # None when no line was read
    format_spec: str | None = None


@dataclass
class ReadStats:
    """Counts over every file read; `rejected_examples` is in REJECTED_SCHEMA."""

    lines: int = 0
    parsed: int = 0
    rejected: int = 0
    rejected_examples: pl.DataFrame = field(default_factory=lambda: s.empty(s.REJECTED_SCHEMA))
    files: list[FileRead] = field(default_factory=list)
    bytes_read: int = 0  # decompressed bytes parsed
    # with `settings.hosts`: requests of the other hosts, per host (the first
    # `_OTHER_HOSTS` hosts), so a mistyped --host can be told what the logs hold
    other_hosts: dict[str, int] = field(default_factory=dict)
    # compressed copies not read, each with the log read instead (`compressed_copies`)
    copies: dict[str, str] = field(default_factory=dict)
    # requests the server made of itself (Apache's `OPTIONS *`), which the analysis leaves
    # out (`analysis.tally_logs`); `read_logs` returns them like any other
    server_requests: int = 0
    # files not read: no longer the file the run planned (`Source.expect`), rotated while it
    # read the others; the next run reads them
    moved: list[str] = field(default_factory=list)
    # files in a format that names no host, read as the one host the others name (a rotated
    # set from before the format named one: `LogStream._unnamed_hosts`), with that host
    unnamed_host: dict[str, str] = field(default_factory=dict)


_OTHER_HOSTS = 1000  # hosts counted beside the ones asked for (judgement: bounded memory)
# What is read of each file of several to tell whether their formats name the host, and
# which (judgement: a busy vhost log's first few hundred lines name its hosts)
_HOST_PEEK_BYTES = 1 << 18
_HOST_PEEK_LINES = 1000


# -- rotated sets ---------------------------------------------------------------------------
_ROTATION = re.compile(
    r"^(?P<base>.+?)(?:\.(?P<num>[0-9]{1,7})|[.-](?P<date>(?:19|20)[0-9]{2}-?[0-9]{2}-?[0-9]{2})(?P<more>[0-9]*))$"
)


def _uncompressed_name(path: str) -> str | None:
    """The name without its compression suffix (`a.log.2.gz` -> `a.log.2`); None without one."""
    return next((path[: -len(ext)] for ext in COMPRESSED_SUFFIXES if path.endswith(ext)), None)


def _rotation_key(path: str) -> tuple[str, tuple[int, str, int]]:
    """(set name, position in the set): older sorts first, the live file last."""
    directory, name = os.path.split(path)
    name = _uncompressed_name(name) or name
    m = _ROTATION.match(name)
    if m is None:
        return os.path.join(directory, name), (2, "", 0)
    base = os.path.join(directory, m["base"])
    if m["date"]:
        return base, (0, m["date"].replace("-", "") + (m["more"] or ""), 0)
    return base, (1, "", -int(m["num"]))


def log_set(path: str) -> str:
    """The path a rotated set goes by: the live file's.

    >>> [log_set(p) for p in ["/var/log/a/access.log.2.gz", "old/access.log-20261128"]]
    ['/var/log/a/access.log', 'old/access.log']
    """
    return _rotation_key(path)[0]


def order_rotated(paths: Sequence[str]) -> list[str]:
    """Order each rotated set oldest first; sets keep the order they first appear in.

    Numbered rotations (`.1`, `.2.gz`) go highest number first, dated ones (`-20261128`) by
    date, and the live file last.

    >>> order_rotated(["access.log", "access.log.2.gz", "error.log", "access.log.1"])
    ['access.log.2.gz', 'access.log.1', 'access.log', 'error.log']
    >>> order_rotated(["a.log", "a.log-20261128.gz", "a.log-20261121"])
    ['a.log-20261121', 'a.log-20261128.gz', 'a.log']
    """
    groups: dict[str, list[str]] = {}
    for p in paths:
        groups.setdefault(_rotation_key(p)[0] if p != STDIN else STDIN + p, []).append(p)
    return [p for g in groups.values() for p in sorted(g, key=lambda q: _rotation_key(q)[1])]


def expand_sources(sources: object) -> list[str]:
    """The files `scan_logs` would read, in the order it would read them (globs expanded,
    duplicates dropped, rotated sets oldest first).

    >>> expand_sources(["-"])
    ['-']
    """
    return [src.path for src in _expand(sources)]


def source_items(sources: object) -> list[str | Path | Source]:
    """The sources as a list, each a path, a glob, "-" or a Source; an InputError for others
    (a frame of requests, iterated, gave its columns: "<a Series printout>: no file matches")."""
    if isinstance(sources, (str, Path, Source)):
        return [sources]
    if isinstance(sources, (pl.DataFrame, pl.LazyFrame, pl.Series)):
        raise InputError("logs to read are paths, globs or \"-\", not a frame of requests",
                         hint="a frame of requests is analysed as it is: logtrap.analyze(frame)")
    if not isinstance(sources, Iterable):
        raise InputError(f"logs to read are paths, globs or \"-\"; not {type(sources).__name__}")
    items = list(sources)
    for item in items:
        if not isinstance(item, (str, Path, Source)):
            raise InputError(f"logs to read are paths, globs or \"-\"; not "
                             f"{type(item).__name__} {str(item)[:40]!r}")
    return items


def _expand(sources: object) -> list[Source]:
    out: list[Source] = []
    for item in source_items(sources):
        src = item if isinstance(item, Source) else Source(str(item))
        if src.path == STDIN or os.path.exists(src.path) or not _GLOB_CHARS.search(src.path):
            out.append(src)
            continue
        matches = sorted(glob.glob(src.path))
        if not matches:
            raise InputError(f"{src.path}: no file matches", hint="check the path or quote the glob")
        out.extend(Source(m) for m in matches)
    seen: set[str] = set()
    unique: dict[str, Source] = {}
    for src in out:
        key = src.path if src.path == STDIN else os.path.realpath(src.path)
        if key not in seen:
            seen.add(key)
            unique[src.path] = src
    return [unique[p] for p in order_rotated(list(unique))]


_SAME_START = 64 * 1024  # decompressed bytes compared to tell a compressed copy of a log


def compressed_copies(paths: Sequence[str]) -> dict[str, str]:
    """The compressed files among `paths` that are a copy of a plain one also among them, each
    with that one: `access.log.1.gz` beside `access.log.1` while logrotate compresses it (or
    after `gzip -k`). Its decompressed start must be the start of the plain file's (a .gz
    still being written holds less), or empty (one just begun). A plain file shorter than
    its compressed copy, over the first 64 KiB, is not told apart: the compressed one is
    left out.

    >>> import tempfile, gzip, os
    >>> d = tempfile.mkdtemp(); a = os.path.join(d, "a.log.1")
    >>> _ = open(a, "w").write("x\\n" * 5); _ = gzip.open(a + ".gz", "wt").write("x\\n" * 3)
    >>> compressed_copies([a, a + ".gz"]) == {a + ".gz": a}
    True
    """
    given = {os.path.realpath(p): p for p in paths}  # `./a.log.1` is `a.log.1`
    copies = {}
    for path in paths:
        stem = _uncompressed_name(path)
        plain = given.get(os.path.realpath(stem)) if stem is not None else None
        if plain is None:
            continue
        # nothing decompressed yet: logrotate has only begun to write it
        start = file_start(path, _SAME_START)
        if not start or file_start(plain, _SAME_START).startswith(start):
            copies[path] = plain
    return copies


# -- opening ----------------------------------------------------------------------------------
class _Prefixed:
    """A stream with its first bytes (read to sniff compression) put back in front."""

    def __init__(self, prefix: bytes, stream: BinaryIO) -> None:
        self.prefix, self.stream = prefix, stream

    def read(self, n: int = -1) -> bytes:
        head, self.prefix = (self.prefix, b"") if n < 0 else (self.prefix[:n], self.prefix[n:])
        if n < 0:
            return head + self.stream.read()
        return head + (self.stream.read(n - len(head)) if n > len(head) else b"")

    def close(self) -> None:
        pass


class _Gunzip:
    """gzip members one after another, inflated by ISA-L (or zlib), which checks each member's
    CRC and length: GzipFile computes the CRC again in Python (~40% more CPU per byte, in the
    thread that feeds the parser). Zero padding between members is skipped, as gzip does."""

    _RAW = 1 << 20  # compressed bytes read at a time

    def __init__(self, raw: BinaryIO) -> None:
        self.raw = raw
        self.z = _inflate.decompressobj(31)  # 31: a gzip header and trailer around deflate

    def read(self, n: int) -> bytes:
        parts: list[bytes] = []
        got = 0
        while got < n:
            if self.z.eof:  # a member ended: another one, or the end of the file
                # (the rest is in unused_data; unconsumed_tail may repeat it after a max_length)
                rest = self.z.unused_data.lstrip(b"\x00")
                while not rest:
                    more = self.raw.read(self._RAW)
                    if not more:
                        return b"".join(parts)
                    rest = more.lstrip(b"\x00")
                self.z = _inflate.decompressobj(31)
                data = self.z.decompress(rest, n - got)
            elif self.z.unconsumed_tail:
                data = self.z.decompress(self.z.unconsumed_tail, n - got)
            else:
                raw = self.raw.read(self._RAW)
                if not raw:
                    raise EOFError("compressed file ended before the end-of-stream marker")
                data = self.z.decompress(raw, n - got)
            parts.append(data)
            got += len(data)
        return b"".join(parts)

    def close(self) -> None:
        pass


class _Input:
    """A decompressed byte stream plus the on-disk position, for progress."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.consumed = 0  # decompressed bytes read
        self.raw: BinaryIO
        self.stream: BinaryIO
        if path == STDIN:
            stdin = sys.stdin.buffer
            try:
                magic = stdin.read(3)
            except (OSError, ValueError) as e:
                raise InputError(f"stdin: cannot read ({e})") from None
            self.raw = _Prefixed(magic, stdin)  # type: ignore[assignment]
            self.device = self.inode = self.size = None
            self._decompress(magic)
            return
        try:
            if os.path.isdir(path):
                raise InputError(f"{path}: is a directory", hint="pass the log files, or a glob")
            self.raw = open(path, "rb")  # noqa: SIM115 - closed in close()
            st = os.fstat(self.raw.fileno())
            magic = self.raw.read(3)
            self.raw.seek(0)
        except OSError as e:
            raise InputError(f"{path}: cannot read ({e.strerror or e})") from None
        self.device, self.inode, self.size = st.st_dev, st.st_ino, st.st_size
        try:
            self._decompress(magic)
        except InputError:  # zstd: the file is not read, and not left open either
            self.raw.close()
            raise

    def _decompress(self, magic: bytes) -> None:
        """Choose by content, not by name: a rotated `access.log.2` may well be gzip."""
        kind = compression(magic)
        if kind == "gzip":
            self.stream = _Gunzip(self.raw)  # type: ignore[assignment]
        elif kind == "bz2":
            self.stream = bz2.BZ2File(self.raw, mode="rb")  # type: ignore[assignment]
        elif kind == "xz":  # logrotate's `compresscmd xz`
            self.stream = lzma.LZMAFile(self.raw, mode="rb")  # type: ignore[assignment]
        elif kind == "zstd":  # Python 3.11 has no zstd: said plainly, not parsed as text
            raise InputError(
                f"{self.path}: compressed with zstd, which logtrap cannot read",
                hint=f"decompress it on the way in (zstd -dc {self.path} | logtrap analyze -); "
                "under cron, leave .zst files out of the glob or have logrotate compress with "
                "gzip or xz",
            )
        else:
            self.stream = self.raw

    def read(self, n: int) -> bytes:
        try:
            data = self.stream.read(n)
            self.consumed += len(data)
            return data
        except (OSError, EOFError, zlib.error, _inflate.error, lzma.LZMAError, ValueError) as e:
            raise InputError(f"{self.path}: cannot read, corrupt or truncated file ({e})") from None

    def skip(self, n: int) -> int:
        """Skip n decompressed bytes; returns how many were there to skip."""
        if self.stream is self.raw and self.path != STDIN:
            size = self.size or 0
            self.raw.seek(min(n, size))
            return min(n, size)
        done = 0
        while done < n:
            got = len(self.read(min(n - done, 1 << 20)))
            if not got:
                break
            done += got
        return done

    def disk_pos(self) -> int:
        if self.path == STDIN:
            return self.consumed
        try:
            return self.raw.tell()
        except (OSError, ValueError):
            return 0

    def close(self) -> None:
        if self.path != STDIN:
            self.stream.close()
            self.raw.close()


def _batches(inp: _Input, size: int) -> Iterator[tuple[bytes, int]]:
    """(batch, on-disk position after it), then (b"", position) at the end of the stream."""
    while True:
        data = inp.read(size)
        yield data, inp.disk_pos()
        if not data:
            return


_T = TypeVar("_T")


def _read_ahead(
    items: Iterator[_T], limit: int = 1, weight: Callable[[_T], int] = lambda item: 1
) -> Iterator[_T]:
    """The same items, produced ahead in a thread: it waits while the items produced and not
    yet taken weigh `limit` or more (one item at a time by default).

    Reading, decompressing (ISA-L, zlib and bz2 let go of the GIL) and cutting the next chunk
    at a newline happen while Polars parses the current one, so a .gz costs little more than a
    plain file. The thread stops when the consumer does (close() or garbage collection).
    """
    ready: collections.deque[tuple[bool, object, int]] = collections.deque()  # (ok, item, weight)
    waiting = [0]  # the weight of what is in `ready`
    changed = threading.Condition()
    stop = threading.Event()

    def put(ok: bool, item: object, w: int = 0) -> None:
        with changed:
            changed.wait_for(lambda: waiting[0] < limit or stop.is_set())
            ready.append((ok, item, w))
            waiting[0] += w
            changed.notify_all()

    def work() -> None:
        try:
            for item in items:
                put(True, item, weight(item))
                if stop.is_set():  # the consumer stopped: read no further
                    return
            put(False, None)
        except BaseException as e:  # handed to the consumer, raised there
            put(False, e)
        finally:
            close = getattr(items, "close", None)
            if close is not None:  # a generator's own clean-up (files, its threads) runs now
                close()

    thread = threading.Thread(target=work, name="logtrap-read", daemon=True)
    thread.start()
    try:
        while True:
            with changed:
                changed.wait_for(lambda: ready)
                ok, item, w = ready.popleft()
                waiting[0] -= w
                changed.notify_all()
            if not ok:
                if item is not None:
                    raise item  # type: ignore[misc]
                return
            yield item  # type: ignore[misc]
    finally:
        with changed:
            stop.set()
            changed.notify_all()
        thread.join()


def _line_chunks(
    inp: _Input, size: int, whole_lines: bool = False
) -> Iterator[tuple[bytes, int, bool]]:
    """(whole lines, on-disk position, is this the end) from raw batches.

    Each batch is cut after its last newline and the rest waits for the next one, so a line is
    never split; a line longer than a batch waits for as many batches as it needs. The end of
    the stream always yields once, with a last line that has no newline or with b"" (always
    b"" with `whole_lines`: a last line without its newline is left unread).
    """
    carry = b""
    for data, pos in _batches(inp, size):
        if not data:
            yield (b"" if whole_lines else carry), pos, True
            return
        cut = data.rfind(b"\n") + 1
        if not cut:  # no line ends in this batch: all of it waits
            carry += data
            continue
        # One copy of the batch at most (a copy of carry + data, then of its whole lines, was
        # two): the carried start of a line joined to this batch's whole lines.
        lines = data if cut == len(data) and not carry else _joined(carry, memoryview(data)[:cut])
        carry = data[cut:]
        yield lines, pos, False


def _joined(head: bytes, body: memoryview) -> bytes:
    """head + body, copied without holding the GIL where the `_cut` extension is built (a
    batch's copy by bytes.join held it ~2 ms, while the parse and the analysis waited)."""
    return formats._cut.joined(head, body) if formats._cut is not None else b"".join((head, body))


@dataclass
class _Chunk:
    data: bytes  # whole lines
    disk_pos: int  # on-disk position after them, for progress
    eof: bool
    frame: pl.DataFrame | None = None  # one row per line ("line"), once split

    @property
    def nbytes(self) -> int:  # decompressed bytes the lines came from
        return len(self.data)

    @property
    def head(self) -> bytes:  # first bytes, for the fingerprint
        return self.data[:_FINGERPRINT_BYTES]

    def lines(self) -> pl.DataFrame:
        if self.frame is None:
            self.frame = to_lines(self.data)
        return self.frame

    def head_lines(self, n: int) -> list[str]:
        """Its first `n` non-blank lines (all it has, if fewer), split from as little of it as
        gives them: format detection reads 20 lines, and the rest is cut in C."""
        size = 1 << 16
        while True:
            whole = self.frame is not None or size >= len(self.data)
            lines = self.frame if self.frame is not None else to_lines(
                self.data if whole else self.data[: self.data.rfind(b"\n", 0, size) + 1])
            sample = (lines.filter(pl.col("line").str.strip_chars(" \t") != "").head(n)
                      .get_column("line").to_list())
            if len(sample) >= n or whole:
                return sample
            size *= 4


# Lines looked at past the first `detect_lines` when none of those parse, as a multiple of
# them: junk at a log's start is a few lines (a crash, a burst of handshakes; judgement)
_WIDER = 50


def _sample(chunks: list[_Chunk], n: int) -> list[str]:
    """The first `n` non-blank lines of these chunks (all they have, if fewer)."""
    sample: list[str] = []
    for c in chunks:
        if len(sample) >= n:
            break
        sample += c.head_lines(n - len(sample))
    return sample


def _line_frames(inp: _Input, size: int, whole_lines: bool = False) -> Iterator[_Chunk]:
    """Whole-line chunks, run in the read-ahead thread. Without the `_cut` extension they are
    split into frames of lines here (Polars' CSV reader lets go of the GIL, so this overlaps
    with parsing the previous chunk); with it, `parse_chunk` cuts the bytes itself."""
    for chunk, pos, eof in _line_chunks(inp, size, whole_lines):
        yield _Chunk(chunk, pos, eof, to_lines(chunk) if formats._cut is None else None)


def _fingerprint(head: bytes) -> str:
    return hashlib.sha1(head[:_FINGERPRINT_BYTES].split(b"\n", 1)[0]).hexdigest()


def file_fingerprint(path: str) -> str:
    r"""The fingerprint `FileRead.fingerprint` would give this file: its first line's hash,
    taken from the decompressed stream, so a log keeps it when logrotate renames or
    compresses it.

    >>> import tempfile, os
    >>> with tempfile.NamedTemporaryFile("wb", suffix=".log", delete=False) as f:
    ...     _ = f.write(b"first line\nsecond\n")
    >>> file_fingerprint(f.name) == _fingerprint(b"first line")
    True
    >>> os.unlink(f.name)
    """
    inp = _Input(path)
    try:
        return _fingerprint(inp.read(_FINGERPRINT_BYTES))
    finally:
        inp.close()


_MAGIC = {b"\x1f\x8b": "gzip", b"BZh": "bz2", b"\xfd7z": "xz", b"\x28\xb5\x2f": "zstd"}


def compression(magic: bytes) -> str | None:
    """"gzip", "bz2", "xz", "zstd" or None (plain), from a file's first three bytes.

    >>> compression(b"\\x1f\\x8b\\x08"), compression(b"BZh"), compression(b"\\xfd7z"), compression(b"1.2")
    ('gzip', 'bz2', 'xz', None)
    """
    return next((kind for head, kind in _MAGIC.items() if magic.startswith(head)), None)


def file_start(path: str, size: int) -> bytes:
    """The first `size` bytes of a file's decompressed stream, or as many as can be read: a
    .gz still being written gives what it holds so far (for comparing, never parsing). An
    InputError only when the file cannot be opened."""
    inp = _Input(path)
    parts: list[bytes] = []
    try:
        while (got := sum(map(len, parts))) < size:
            part = inp.read(min(4096, size - got))  # small reads: a cut stream loses little
            if not part:
                break
            parts.append(part)
    except InputError:
        pass  # compressed, and cut short (or corrupt) here: what came before it stands
    finally:
        inp.close()
    return b"".join(parts)


# -- the stream --------------------------------------------------------------------------------
ProgressCallback = Callable[[int, "int | None", int], None]


class LogStream:
    """Request frames from every source, in order; iterable once.

    `stats` (a ReadStats) and `formats` (path -> LogFormat) fill in as the stream is read.
    """

    def __init__(
        self,
        sources: list[Source],
        settings: Settings,
        on_progress: ProgressCallback | None,
        columns: Sequence[str] | None = None,
    ) -> None:
        self.sources = sources
        self.settings = settings
        self.on_progress = on_progress
        self.columns = columns
        self.stats = ReadStats()
        self.formats: dict[str, LogFormat] = {}
        self._started = False
        self._fixed: LogFormat | None = (
            None if settings.log_format == "auto" else compile_format(settings.log_format)
        )
        self._bytes_total: int | None = 0
        for src in sources:
            if src.path == STDIN:
                self._bytes_total = None
            elif self._bytes_total is not None:
                try:
                    self._bytes_total += os.path.getsize(src.path)
                except OSError:
                    pass
        self._bytes_before = 0

    def __iter__(self) -> Iterator[pl.DataFrame]:
        if self._started:
            raise InputError("a LogStream can be read only once", hint="call scan_logs again")
        self._started = True
        self.stats.unnamed_host = self._unnamed_hosts()
        for src in self.sources:
            # Parsing one file runs ahead of the caller, in a thread (Polars lets go of the
            # GIL), so its parse overlaps with the caller's work on the rows before: up to
            # `analysis_rows` rows, one step of the analysis. One batch ahead, the parse stood
            # still while the caller analysed the four batches of a step: 10M lines took 15.4 s
            # to analyse instead of 13.9 (two steps ahead: 13.7 s, 25 MB more; judgement).
            frames = self._read_file(src)
            ahead = self.settings.analysis_rows
            yield from frames if src.path == STDIN else _read_ahead(frames, ahead, len)

    def _choose_format(
        self, path: str, sample: list[str], wider: Callable[[], list[str]] = list
    ) -> LogFormat | None:
        """The format for this file from its first non-blank lines; FormatError if none parse.

        Where none of them parse, the format chosen from the `wider()` sample (more of the
        lines read so far): a log whose first lines are another program's or junk (a crash's
        bytes, a scanner's burst of TLS handshakes) is read in the format of the lines after,
        its junk rejected and counted as any line that does not parse is."""
        if not sample:
            return None
        if (fmt := self._choose(sample)) is not None:
            return fmt
        more = wider() or sample
        if len(more) > len(sample) and (fmt := self._choose(more)) is not None:
            return fmt
        fmt = self._fixed or detect_format(sample)
        tried = (
            f"the {fmt.describe()}" + ("" if fmt.name == "custom" else " format")
            if fmt is not None
            else "any format tried by auto-detection (" + ", ".join(DETECT_ORDER) + ")"
        )
        raise FormatError(
            f"{path}: not in {tried}: "
            + (f"its only line does not parse: {sample[0][:300]!r}" if len(more) == 1
               else f"none of its first {max(len(sample), len(more)):,} lines parse; "
               f"first line: {sample[0][:300]!r}"),
            hint="pass the server's LogFormat / log_format string with --format",
        )

    def _unnamed_hosts(self) -> dict[str, str]:
        """The files whose format names no host, each with the host to read them as: the one
        host the other files' first lines name, where there is one. An admin who adds `$host`
        (or `%v`) to the format leaves a rotated set of both, one site's: read as they are,
        its traps were reported twice, under "-" and its name, and cron alerted on each again.
        Where the others name two hosts or more, the lines of the first cannot be told apart,
        and stay "-"."""
        paths = [src.path for src in self.sources if src.path != STDIN]
        if len(paths) < 2 or self._fixed is not None:  # one format for all: all alike
            return {}
        unnamed: list[str] = []
        hosts: set[str] = set()
        for path in paths:
            try:
                lines = to_lines(file_start(path, _HOST_PEEK_BYTES)).head(_HOST_PEEK_LINES)
                sample = lines.filter(pl.col("line").str.strip_chars(" \t") != "")
                fmt = (self._choose(sample.head(self.settings.detect_lines)["line"].to_list())
                       if sample.height else None)
            except LogtrapError:
                continue  # reading it says why, in its turn
            if fmt is None:
                continue
            if not fmt.names_host:
                unnamed.append(path)
                continue
            named = parse_lines(sample, fmt, columns=(s.HOST,))[0].get_column(s.HOST)
            hosts |= set(named.filter(named.is_not_null() & (named != "-")).unique().to_list())
        if not unnamed or len(hosts) != 1:
            return {}
        return dict.fromkeys(unnamed, hosts.pop())

    def _choose(self, sample: list[str]) -> LogFormat | None:
        """The format (given, or detected) that parses some of these lines, or None."""
        fmt = self._fixed or detect_format(sample)
        if fmt is not None:
            req, _ = parse_lines(pl.DataFrame({"line": sample}, schema={"line": pl.String}), fmt)
            if req.height:
                return fmt
        return None

    def _open(self, src: Source) -> tuple[_Input, FileRead] | None:
        """Open at the source's offset; the fingerprint comes from the stream's start. None
        (the path in `stats.moved`) where the file is not the one a cron run planned to read
        (`Source.expect`): logrotate renamed another file to its name, or copied and truncated
        it, since the run began. Read by name, it would be read from the other file's offset,
        its lines counted twice or never; left, the next run finds each file by its content."""
        try:
            inp = _Input(src.path)
        except InputError:
            if src.expect is None or os.path.exists(src.path):
                raise
            self.stats.moved.append(src.path)  # compressed and removed since the run began
            return None
        fingerprint = ""
        if src.offset > 0 and src.path != STDIN:
            try:
                fingerprint = _fingerprint(inp.read(_FINGERPRINT_BYTES))
            finally:
                inp.close()
            inp = _Input(src.path)
        if src.expect is not None:
            device, inode, planned = src.expect
            if (inp.device, inp.inode) != (device, inode) or (src.offset > 0 and fingerprint != planned):
                inp.close()
                self.stats.moved.append(src.path)
                return None
        start = inp.skip(src.offset) if src.offset > 0 else 0
        info = FileRead(
            path=src.path, device=inp.device, inode=inp.inode, fingerprint=fingerprint,
            size=inp.size, start_offset=start, end_offset=start,
        )
        self.stats.files.append(info)
        return inp, info

    def _read_file(self, src: Source) -> Iterator[pl.DataFrame]:
        """Whole-line chunks -> (format chosen from the first lines) -> parsed frames."""
        st = self.settings
        opened = self._open(src)
        if opened is None:
            return
        inp, info = opened
        chunks_in = _line_frames(inp, st.batch_bytes, src.whole_lines)
        # A thread blocked on a pipe could not be stopped: stdin is read inline.
        batches = chunks_in if src.path == STDIN else _read_ahead(chunks_in)
        try:
            fmt: LogFormat | None = None
            pending: list[_Chunk] = []  # chunks read before the format is known
            line_base = src.line_no
            for chunk in batches:
                if not info.fingerprint and info.start_offset == 0:
                    info.fingerprint = _fingerprint(chunk.head)
                if fmt is None:
                    pending.append(chunk)
                    sample = _sample(pending, st.detect_lines)
                    if len(sample) < st.detect_lines and not chunk.eof:
                        continue
                    fmt = self._choose_format(
                        src.path, sample, lambda: _sample(pending, _WIDER * st.detect_lines))
                    if fmt is None:  # blank lines only, so far
                        continue
                    fmt = fmt.trusting(st.trusted_proxies)
                    self.formats[src.path] = fmt
                    info.format_name, info.format_spec = fmt.name, fmt.spec
                chunks, pending = pending or [chunk], []
                for c in chunks:
                    if not c.nbytes:
                        continue
                    frame, line_base = self._parse_chunk(info, c, fmt, line_base)
                    if frame.height:
                        yield frame
            for c in pending:  # a file of blank lines: counted, nothing to parse
                line_base = self._count_only(info, c, line_base)
            if not info.fingerprint:
                info.fingerprint = _fingerprint(b"")
        finally:
            batches.close()  # stops the read-ahead thread before the file closes
            chunks_in.close()
            self._bytes_before += inp.size or 0
            inp.close()

    def _count_only(self, info: FileRead, chunk: _Chunk, line_base: int) -> int:
        n = chunk.lines().height
        info.lines += n
        info.end_offset += chunk.nbytes
        self.stats.lines += n
        self.stats.bytes_read += chunk.nbytes
        self._progress(chunk.disk_pos)
        return line_base + n

    def _parse_chunk(
        self, info: FileRead, chunk: _Chunk, fmt: LogFormat, line_base: int
    ) -> tuple[pl.DataFrame, int]:
        source = info.path
        if chunk.frame is None:  # cut in C where the format allows (`parse_chunk`)
            req, bad, n = parse_chunk(chunk.data, fmt, source=source, columns=self.columns)
        else:  # split ahead already (no extension)
            req, bad = parse_lines(chunk.frame, fmt, source=source, columns=self.columns)
            n = chunk.frame.height
        host = self.stats.unnamed_host.get(source)
        if host is not None and s.HOST in req.columns:
            req = req.with_columns(pl.lit(host, pl.String).alias(s.HOST))
        info.lines += n
        info.parsed += req.height
        info.rejected += bad.height
        info.end_offset += chunk.nbytes
        stats = self.stats
        stats.lines += n
        stats.parsed += req.height
        stats.rejected += bad.height
        stats.bytes_read += chunk.nbytes
        room = self.settings.rejected_examples - stats.rejected_examples.height
        if room > 0 and bad.height:
            examples = bad.head(room).select(
                pl.lit(source, dtype=pl.String).alias(s.SOURCE),
                (pl.col("row") + line_base + 1).cast(pl.Int64).alias(s.LINE_NO),
                pl.col("line").alias(s.LINE),
                pl.col(s.REASON),
            )
            # copied: as views into the batch, a few examples would keep each batch's bytes
            stats.rejected_examples = s.owned(pl.concat([stats.rejected_examples, examples]))
        if self.settings.hosts:  # `parsed` counts every request; frames keep only these hosts
            kept = pl.col(s.HOST).is_in(list(self.settings.hosts))
            others = stats.other_hosts
            for host, n in req.filter(~kept).group_by(s.HOST).len().iter_rows():
                if host in others or len(others) < _OTHER_HOSTS:
                    others[host] = others.get(host, 0) + n
            req = req.filter(kept)
        self._progress(chunk.disk_pos)
        return req, line_base + n

    def _progress(self, disk_pos: int) -> None:
        if self.on_progress is not None:
            self.on_progress(self._bytes_before + disk_pos, self._bytes_total, self.stats.lines)


def scan_logs(
    sources: object,
    *,
    settings: Settings | None = None,
    on_progress: ProgressCallback | None = None,
    columns: Sequence[str] | None = None,
) -> LogStream:
    """Stream request frames (REQUEST_SCHEMA) from files, globs, rotated sets or stdin ("-").

    `columns` keeps only those request columns: the others are not built (their fields are
    still matched, a line's validity depends on them, but not copied out; the analysis reads
    eight of the fourteen, and skips a tenth of the parse).

    Rotated sets are read oldest first; a path given twice is read once, and so is a log
    given beside its compressed copy (`access.log.1` and `access.log.1.gz` while logrotate
    compresses it: the plain one is read, `stats.copies` names the other). Formats come from
    `settings.log_format` ("auto" detects per file). `on_progress(bytes_done, bytes_total,
    lines)` is called after each batch, in on-disk bytes (None total when stdin is read).
    With `settings.hosts` set, frames keep only those virtual hosts (`stats.parsed` still
    counts every parsed line). A last line without a newline is read, and counted in
    `end_offset`: servers write whole lines, so such a line is the file's real end.
    A file is parsed in a thread up to `settings.analysis_rows` rows ahead of the caller
    (stdin inline).

    >>> import tempfile, pathlib
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "access.log"
    >>> _ = p.write_text('1.2.3.4 - - [28/Nov/2026:10:00:00 +0000] "GET / HTTP/1.1" 200 5\\nbad\\n')
    >>> stream = scan_logs(p)
    >>> [frame.height for frame in stream]
    [1]
    >>> stream.stats.lines, stream.stats.rejected, stream.formats[str(p)].name
    (2, 1, 'common')
    """
    settings = Settings.of(settings)
    if not isinstance(settings, Settings):
        raise LogtrapError("settings must be a logtrap Settings")
    if columns is not None and s.HOST not in columns and settings.hosts:
        columns = [*columns, s.HOST]  # the host filter reads it
    items = source_items(sources)
    expanded = _expand(items)
    # a compressed copy beside its log is read once (a cron run's sources are planned already)
    copies = {} if any(isinstance(i, Source) for i in items) else compressed_copies(
        [src.path for src in expanded if src.path != STDIN])
    stream = LogStream([src for src in expanded if src.path not in copies], settings,
                       on_progress, columns)
    stream.stats.copies = copies
    return stream


def read_logs(
    sources: object, *, log_format: str = "auto", settings: Settings | None = None
) -> pl.DataFrame:
    """Every request from these sources in one frame (REQUEST_SCHEMA), for notebooks.

    `log_format` (a preset name or a format string) overrides `settings.log_format`; "auto",
    the default, leaves `settings.log_format` as given. Lines that do not parse are not in the
    frame: a `RejectedLinesWarning` says how many and shows the first.

    >>> import tempfile, pathlib
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "access.log"
    >>> _ = p.write_text('1.2.3.4 - - [28/Nov/2026:10:00:00 +0000] "GET /a?b=1 HTTP/1.1" 200 5 "-" "curl/8"\\n')
    >>> read_logs(p).select("client", "path", "query", "status", "user_agent").row(0)
    ('1.2.3.4', '/a', 'b=1', 200, 'curl/8')
    """
    if settings is None or log_format != "auto":
        settings = (settings or Settings()).replace(log_format=log_format)
    stream = scan_logs(sources, settings=settings)
    frames = list(stream)
    _warn_rejected(stream.stats)
    return pl.concat(frames) if frames else s.empty(s.REQUEST_SCHEMA)


def _warn_rejected(stats: ReadStats) -> None:
    """A RejectedLinesWarning naming how many lines did not parse and the first of them: the
    frame alone cannot show what is missing from it."""
    if not stats.rejected:
        return
    first = ""
    if stats.rejected_examples.height:  # none kept with rejected_examples = 0
        row = stats.rejected_examples.row(0, named=True)
        line = row[s.LINE] if len(row[s.LINE]) <= 120 else row[s.LINE][:117] + "..."
        first = f"; the first, {row[s.SOURCE]} line {row[s.LINE_NO]}: {row[s.REASON]}: {line!r}"
    warnings.warn(
        f"{stats.rejected:,} of {stats.lines:,} lines did not parse and are not in the frame"
        f"{first} (scan_logs(...).stats counts them per file, with examples)",
        RejectedLinesWarning,
        stacklevel=3,
    )

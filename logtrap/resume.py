"""Which log files a cron run reads, and from where: resuming each after what an earlier run
read of the same content, across logrotate.

Log files are recognised by their content, not by name, because logrotate renames them. Each
mark keeps a fingerprint of the file's first line (of the decompressed stream, so a file keeps
it when compressed) and its device and inode. `plan_sources` resumes a file

1. from the mark of the same file (device, inode and first line), unless it is a plain file
   now shorter than what was read (truncated, then refilled): the live log appended to, or
   renamed by rotation (`create`, `dateext`, `olddir` on the same disk);
2. else from a mark of its first line whose file holds that content no more: the content
   compressed into a new file (`compress`, `delaycompress`), copied before the original was
   truncated (`copytruncate`), or moved to another disk. Two logs may share a first line (a
   health check every vhost logs at the same second), so a mark of the file's own path, then
   of the nearest name in its folder (`a.log.1` for `a.log.2.gz`, not `b.log.1`) is taken;
   if nothing tells marks apart, the one read furthest (reading less never counts a line
   twice);
3. else, if its decompressed start (64 KiB) is the start of a file read in this run and it is
   no longer (for two plain files), it is taken for that file's copy and not read: while
   logrotate compresses (`access.log.2` and `access.log.2.gz`) or between copytruncate's copy
   and its truncate (`access.log.1` and `access.log`). It gets no mark: the next run decides
   again, resuming it from the original's mark once the original is gone or truncated;
4. else from its start.

A compressed file whose own mark (1.) was made at its present size is not read at all: it holds
nothing new, and skipping what was read would decompress it from its start (a rotated set of
fourteen such files, every hour).

Where content cannot decide, a line may be counted late, never twice: a log that so far is
the start of another log with the same first line (a quiet vhost holding only that health
check) waits until it grows apart, then is read from its start; a new log with the first line
of a log no longer on disk takes that log's mark. A .gz so new it holds hardly anything yet
cannot be fingerprinted: it is left for the next run, unless it is older than ten minutes
(then it is corrupt, and the run says so).
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from pathlib import Path

from logtrap.errors import ConfigError, InputError, LogtrapError
from logtrap.logs import (
    COMPRESSED_SUFFIXES, FileRead, Source, compression, expand_sources, file_fingerprint, file_start,
)

# Marks of files not read in a run that are kept (the files of a run all keep theirs): older
# ones are of files long rotated away (judgement).
_MAX_MARKS = 200
# Decompressed bytes compared to tell a copy of a log from another log with the same first
# line: two logs alike this far are one (judgement; a few hundred lines).
_COMPARED = 1 << 16


@dataclass(frozen=True)
class FileMark:
    """How far one log file was read, and how to recognise it again."""

    path: str
    fingerprint: str | None
    offset: int  # bytes of the decompressed stream consumed
    line_no: int  # lines consumed (so line numbers in reports stay right)
    device: int = 0
    inode: int = 0
    # bytes on disk when read (0: not known, a state from before it was kept): a compressed
    # file of this inode and size holds nothing the mark has not read
    size: int = 0


def plan_sources(
    paths: Sequence[str | Path], marks: Sequence[FileMark]
) -> tuple[list[Source], dict[str, FileMark], list[str]]:
    """Where to start in each file: after what an earlier run read of the same content (see
    the module docstring); copies of a file read in this run are left out. Also returns the
    marks resumed, by the path resuming each (the others stay, for files not given this time),
    and the compressed files left for the next run, as logrotate is still writing them. Each
    source expects its file as it is now (`Source.expect`)."""
    files = []
    waiting: list[str] = []
    for path in expand_sources(paths):
        if path == "-":
            raise ConfigError(
                "--state cannot follow standard input", hint="give the log files by path"
            )
        try:
            files.append(_probe(path))
        except InputError as e:
            compressed, recent = _compressed(path)
            if not compressed:
                raise
            if not recent:
                raise InputError(str(e), hint="if logrotate is still compressing it, run again "
                                 "once it is done; else the file is damaged: leave it out of "
                                 "the logs given") from None
            # logrotate is writing it: its lines are still in the file it compresses, and the
            # next run reads it (it gets no mark, so it is not counted as read)
            waiting.append(path)
    resume: dict[str, FileMark] = {}
    skip: set[str] = set()
    free = list(marks)
    inodes: set[tuple[int, int]] = set()
    for f in files:  # 1. the same file
        if (f.device, f.inode) in inodes:  # a hard link to a file given before: read once
            skip.add(f.path)
            continue
        inodes.add((f.device, f.inode))
        mark = next((m for m in free if f.holds(m)), None)
        if mark is not None:
            resume[f.path] = mark
            free.remove(mark)
    rest = [f for f in files if f.path not in resume and f.path not in skip]
    prints = {f.fingerprint for f in rest}
    free = [m for m in free if m.fingerprint in prints and not _still_there(m, inodes)]
    pairs = [  # 2. the same content in another file; its inode's file is newer content
        (f, m) for f in rest for m in free
        if m.fingerprint == f.fingerprint and (m.device, m.inode) != (f.device, f.inode)
    ]
    taken: set[int] = set()
    for f, m in sorted(pairs, key=lambda pair: _affinity(*pair), reverse=True):
        if f.path not in resume and id(m) not in taken:
            resume[f.path] = m
            taken.add(id(m))
    read: dict[str, list[_OnDisk]] = {}  # 3. copies of the files read, per first line
    for f in files:
        if f.path in resume:
            read.setdefault(f.fingerprint, []).append(f)
    heads: dict[str, bytes] = {}
    for f in sorted(rest, key=lambda f: (f.compressed, -f.size)):  # the likely original first
        if f.path in resume:
            continue
        same = read.setdefault(f.fingerprint, [])
        if any(_is_copy(f, g, heads) for g in same):
            skip.add(f.path)
        else:
            same.append(f)
    # 4. a compressed file read to its end, unchanged since: nothing to read (to skip what was
    # read, its stream is decompressed from the start: 5 s an hour for one rotated 2 GB log)
    skip |= {f.path for f in files if (m := resume.get(f.path)) is not None and f.compressed
             and m.size > 0 and (m.device, m.inode, m.size) == (f.device, f.inode, f.size)}
    sources = [
        Source(f.path, offset=m.offset if m else 0, line_no=m.line_no if m else 0,
               whole_lines=True, expect=(f.device, f.inode, f.fingerprint))
        for f in files if f.path not in skip
        for m in [resume.get(f.path)]
    ]
    return sources, resume, waiting


@dataclass(frozen=True)
class _OnDisk:
    """A log file as it is now, to match against the marks."""

    path: str
    fingerprint: str
    device: int
    inode: int
    size: int  # bytes on disk (compressed, for a .gz or .bz2)
    compressed: bool

    def holds(self, mark: FileMark) -> bool:
        """Whether this is the file the mark was made of, with what was read still in it."""
        same = (self.device, self.inode, self.fingerprint) == (
            mark.device, mark.inode, mark.fingerprint)
        return same and (self.compressed or self.size >= mark.offset)


def _probe(path: str) -> _OnDisk:
    fingerprint = file_fingerprint(path)  # an InputError naming the file if it cannot be read
    try:
        st = os.stat(path)
        with open(path, "rb") as f:
            magic = f.read(3)
    except OSError as e:
        raise InputError(f"{path}: cannot read ({e.strerror or e})") from None
    compressed = compression(magic) is not None  # by content: `access.log.2` may be gzip
    return _OnDisk(path, fingerprint, st.st_dev, st.st_ino, st.st_size, compressed)


# A compressed file changed this recently that cannot be read yet is being written (logrotate
# compresses a log in seconds; judgement), not corrupt.
_WRITING_SECONDS = 600


def _compressed(path: str) -> tuple[bool, bool]:
    """(whether this file is compressed in a form logtrap reads (.gz, .bz2, .xz), by its first
    bytes or, with none yet, by its name; whether it was modified within `_WRITING_SECONDS`:
    then it may still be being written). zstd is never read: its error stands at once."""
    try:
        st = os.stat(path)
        with open(path, "rb") as f:
            magic = f.read(3)
    except OSError:
        return False, False
    kind = compression(magic)
    compressed = kind not in (None, "zstd") or (len(magic) < 3 and path.endswith(COMPRESSED_SUFFIXES))
    return compressed, datetime.now().timestamp() - st.st_mtime < _WRITING_SECONDS


def _still_there(mark: FileMark, given: set[tuple[int, int]]) -> bool:
    """Whether the mark's file, not given this time, still holds what was read where it was
    (so another log with the same first line does not take its mark)."""
    if (mark.device, mark.inode) in given:
        return False  # given, and not matched: it holds other content now
    try:
        st = os.stat(mark.path)
        return (st.st_dev, st.st_ino) == (mark.device, mark.inode) and (
            file_fingerprint(mark.path) == mark.fingerprint
        )
    except (OSError, LogtrapError):
        return False


def _affinity(f: _OnDisk, mark: FileMark) -> tuple[bool, bool, int, bool, int]:
    """How likely the mark is of this file's content, among marks of its first line: its own
    path, its folder, the longest shared start of the name (`a.log.1` for `a.log.2.gz`), a
    mark the file can hold (a plain file as long as the offset), the mark read furthest."""
    folder, name = os.path.split(f.path)
    mark_folder, mark_name = os.path.split(mark.path)
    return (
        f.path == mark.path,
        folder == mark_folder,
        len(os.path.commonprefix([name, mark_name])),
        f.compressed or f.size >= mark.offset,
        mark.offset,
    )


def _is_copy(f: _OnDisk, g: _OnDisk, heads: dict[str, bytes]) -> bool:
    """Whether `f` holds nothing `g` does not: its start is a start of `g`'s, and it is no
    longer (known for two plain files; a compressed file is a copy of a plain one, never the
    reverse)."""
    if not (f.compressed or g.compressed) and f.size > g.size:
        return False
    for file in (f, g):
        if file.path not in heads:
            heads[file.path] = file_start(file.path, _COMPARED)
    return heads[g.path].startswith(heads[f.path])


@dataclass(frozen=True)
class Left:
    """A log given by a name whose file, at an earlier run, was rotated to another name that is
    not given: what was written to it after that run is not read."""

    path: str  # the name given (`access.log`)
    rotated: str  # where the file it named is now (`access.log.1`, `access.log.1.gz`)
    unread: int | None  # bytes of it not read (None: compressed by another tool than gzip)


def rotated_away(paths: Sequence[str | Path], marks: Sequence[FileMark],
                 resumed: Mapping[str, FileMark]) -> list[Left]:
    """The logs given whose earlier file, under its name at the last run, was rotated beside
    it to a name not given and holds lines not read (a cron run given `access.log`, not
    `access.log*`). Found in the log's folder by inode, or for a compressed copy by its first
    line; a gzip file's unread bytes by its trailer's size (mod 4 GiB, as gzip keeps it)."""
    given = {os.path.abspath(p) for p in expand_sources(paths) if p != "-"}
    used = {id(m) for m in resumed.values()}
    out = []
    seen: set[str] = set()
    for mark in marks:  # the last run's mark of a name first (`new_marks`): once per rotation
        where = os.path.abspath(mark.path)
        if where in seen:
            continue
        seen.add(where)
        if id(mark) in used or where not in given:
            continue  # resumed: its file, under whichever name, is read on from the mark
        found = _beside(mark, given)
        if found is not None and (found.unread is None or found.unread > 0):
            out.append(found)
    return out


def _beside(mark: FileMark, given: set[str]) -> Left | None:
    """Where the mark's file went in its folder (`access.log` -> `access.log.1`, `.1.gz`,
    `-20261128`), among names not given: by inode (renamed), else by its first line (compressed,
    or copied before the log was truncated)."""
    folder, name = os.path.split(os.path.abspath(mark.path))
    try:
        names = sorted(n for n in os.listdir(folder) if n.startswith(name) and n != name)
    except OSError:
        return None
    for other in names:
        path = os.path.join(folder, other)
        if path in given:
            continue
        try:
            st = os.stat(path)
            shown = os.path.join(os.path.dirname(mark.path), other)  # as the log was given
            if (st.st_dev, st.st_ino) == (mark.device, mark.inode):
                return Left(mark.path, shown, st.st_size - mark.offset)
            if file_fingerprint(path) == mark.fingerprint:
                with open(path, "rb") as f:
                    kind = compression(f.read(3))
                unread = (st.st_size - mark.offset if kind is None
                          else (_gzip_size(path) - mark.offset) % 2**32 if kind == "gzip" else None)
                return Left(mark.path, shown, unread)
        except (OSError, LogtrapError):
            continue
    return None


def _gzip_size(path: str) -> int:
    """A gzip file's decompressed size mod 4 GiB (its trailer's ISIZE)."""
    with open(path, "rb") as f:
        f.seek(-4, os.SEEK_END)
        return int.from_bytes(f.read(4), "little")


def new_marks(
    sources: Sequence[Source],
    files: Sequence[FileRead],
    earlier: Sequence[FileMark],
    resumed: Mapping[str, FileMark],
) -> list[FileMark]:
    """The marks after a run: where each file read stopped; the marks of files given and not
    read (a compressed file unchanged since, one rotated during the run: `LogStream.moved`),
    under the name the file had when the run began; then the earlier marks of files not given
    this time but still on disk (capped at `_MAX_MARKS` in all, only these: a mark of a file
    given, dropped, would have it read again from its start)."""
    start_line = {src.path: src.line_no for src in sources}
    now = [
        FileMark(
            path=f.path,
            fingerprint=f.fingerprint,
            offset=f.end_offset,
            line_no=start_line.get(f.path, 0) + f.lines,
            device=f.device or 0,
            inode=f.inode or 0,
            size=f.size or 0,
        )
        for f in files
    ]
    # Keep marks of files not given this time but still on disk, so a later run that names
    # them again does not read them twice. Only those are capped: a file read now without
    # its mark would be read again from its start.
    read = {f.path for f in files}
    unread = [replace(m, path=path) for path, m in resumed.items() if path not in read]
    given = list(resumed.values())
    kept = [m for m in earlier if m not in given and Path(m.path).exists()]
    return now + unread + kept[: max(_MAX_MARKS - len(now) - len(unread), 0)]

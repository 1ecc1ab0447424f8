"""Cron state: every line counted exactly once across appends, logrotate (rename,
copytruncate, compression, and runs in the middle of them), logs sharing a first line and
half-written lines; findings alerted when new or grown; atomic writes, saved only once the
reports are out; clear errors."""

import errno
import gzip
import json
import os
import shutil
import signal
import subprocess
import sys
import time
import zipfile
from pathlib import Path

import polars as pl
import pytest
from click.testing import CliRunner

from logtrap import schema as s
from logtrap import resume
from logtrap import state as state_module
from logtrap import traffic
from logtrap.analysis import analyze
from logtrap.cli import cli
from logtrap.errors import InputError, StateError
from logtrap.logs import ReadStats
from logtrap.settings import Settings
from logtrap.state import load_state, read_incremental, run_incremental

BROWSER = "Mozilla/5.0 (X11; Linux x86_64; rv:120.0) Gecko/20100101 Firefox/120.0"


class Log:
    """A log file written line by line; `n` numbers the lines across every file."""

    def __init__(self, directory: Path) -> None:
        self.dir = directory
        self.n = 0

    def lines(self, count: int) -> str:
        out = []
        for _ in range(count):
            self.n += 1
            minute, second = divmod(self.n, 60)
            out.append(
                f'10.0.0.{self.n % 250} - - [01/Jan/2026:10:{minute % 60:02d}:{second:02d} '
                f'+0000] "GET /page/{self.n} HTTP/1.1" 200 {1000 + self.n} "-" "{BROWSER}"\n'
            )
        return "".join(out)

    def append(self, name: str, count: int) -> None:
        with open(self.dir / name, "a") as f:
            f.write(self.lines(count))


def run(log: Log, names: str = "access.log*") -> tuple[int, int]:
    """One cron run over the files `names` matches: (lines read this run, requests remembered
    in all)."""
    analysis, _ = run_incremental([str(log.dir / names)], log.dir / "state", Settings())
    return analysis.stats.lines, analysis.traffic.patterns[s.REQUESTS].sum()


def rewrite_meta(state: Path, edit) -> None:
    """Rewrite a state file's meta.json as `edit` returns it, given the one it holds."""
    with zipfile.ZipFile(state) as z:
        files = {name: z.read(name) for name in z.namelist()}
    meta = edit(json.loads(files["meta.json"]))
    with zipfile.ZipFile(state, "w") as z:
        for name, data in files.items():
            z.writestr(name, json.dumps(meta) if name == "meta.json" else data)


def drop_from_meta(state: Path, key: str) -> object:
    """Rewrite a state file without one key of its meta.json (as an older logtrap wrote it);
    returns the value it had."""
    dropped = []
    rewrite_meta(state, lambda meta: dropped.append(meta.pop(key)) or meta)
    return dropped[0]


def gzip_file(src: Path, dst: Path) -> None:
    with open(src, "rb") as f, gzip.open(dst, "wb") as g:
        shutil.copyfileobj(f, g)
    src.unlink()


def rotate_with_unread_lines(log: Log) -> bytes:
    """Ten lines read by a run, three more written just before logrotate renames access.log
    to access.log.1, four in the new access.log; returns access.log.1 gzipped (what
    logrotate's compression writes)."""
    log.append("access.log", 10)
    assert run(log) == (10, 10)
    log.append("access.log", 3)
    os.rename(log.dir / "access.log", log.dir / "access.log.1")
    log.append("access.log", 4)
    return gzip.compress((log.dir / "access.log.1").read_bytes())


def run_rotated_after_planning(log: Log, monkeypatch, rotate) -> ReadStats:
    """One cron run in which logrotate does `rotate()` after the run planned where to start in
    each file, before it reads them; the run's read stats."""
    plan = state_module.plan_sources

    def plan_then_rotate(*args):
        planned = plan(*args)
        rotate()
        return planned

    with monkeypatch.context() as patched:
        patched.setattr(state_module, "plan_sources", plan_then_rotate)
        analysis, _ = run_incremental([str(log.dir / "access.log*")], log.dir / "state", Settings())
    return analysis.stats


@pytest.fixture
def log(tmp_path):
    return Log(tmp_path)


def test_appended_lines_are_read_once(log):
    log.append("access.log", 10)
    assert run(log) == (10, 10)
    log.append("access.log", 5)
    assert run(log) == (5, 15)
    assert run(log) == (0, 15)


def test_rename_rotation_then_compression(log):
    log.append("access.log", 10)
    assert run(log) == (10, 10)
    # Lines written just before logrotate renames the file, unread so far ...
    log.append("access.log", 3)
    os.rename(log.dir / "access.log", log.dir / "access.log.1")
    log.append("access.log", 4)
    assert run(log) == (7, 17)
    # ... then the next rotation compresses the old file (delaycompress) and renames again.
    gzip_file(log.dir / "access.log.1", log.dir / "access.log.2.gz")
    os.rename(log.dir / "access.log", log.dir / "access.log.1")
    log.append("access.log", 2)
    assert run(log) == (2, 19)


def test_a_run_given_the_live_log_alone_says_what_rotation_left_unread(log):
    # cron given `access.log`, not `access.log*`: the lines written before logrotate renamed
    # it are in access.log.1, which no run reads (they were lost without a word)
    def left(names: str = "access.log") -> list[tuple[str, str, int | None]]:
        run = read_incremental([str(log.dir / names)], log.dir / "state", Settings())
        run.save()
        return [(Path(x.path).name, Path(x.rotated).name, x.unread) for x in run.left]

    def written(count: int) -> int:  # bytes of `count` lines appended to access.log
        before = (log.dir / "access.log").stat().st_size
        log.append("access.log", count)
        return (log.dir / "access.log").stat().st_size - before

    log.append("access.log", 10)
    assert left() == []
    unread = written(3)
    os.rename(log.dir / "access.log", log.dir / "access.log.1")
    log.append("access.log", 4)
    assert left() == [("access.log", "access.log.1", unread)]
    assert left() == []  # said once, at the run after the rotation
    # compressed as it is rotated: found by its first line, its unread bytes by gzip's trailer
    unread = written(2)
    os.rename(log.dir / "access.log.1", log.dir / "access.log.2")
    gzip_file(log.dir / "access.log", log.dir / "access.log.1.gz")
    log.append("access.log", 1)
    assert left() == [("access.log", "access.log.1.gz", unread)]
    # rotated once read to its end: nothing left
    os.rename(log.dir / "access.log", log.dir / "access.log.1")
    log.append("access.log", 1)
    assert left() == []
    # the whole set given: the rotated file is read, nothing is said
    written(5)
    os.rename(log.dir / "access.log", log.dir / "access.log.0")
    log.append("access.log", 1)
    assert left("access.log*") == []


def test_a_run_given_the_live_log_alone_says_what_copytruncate_left_unread(log):
    # logrotate's copytruncate: the three lines written after the run are in the copy
    log.append("access.log", 10)
    assert run(log, "access.log") == (10, 10)
    read = (log.dir / "access.log").stat().st_size
    log.append("access.log", 3)
    shutil.copy(log.dir / "access.log", log.dir / "access.log.1")
    os.truncate(log.dir / "access.log", 0)
    log.append("access.log", 2)
    increment = read_incremental([str(log.dir / "access.log")], log.dir / "state", Settings())
    assert [(Path(x.path).name, Path(x.rotated).name, x.unread) for x in increment.left] == [
        ("access.log", "access.log.1", (log.dir / "access.log.1").stat().st_size - read)]


def test_a_rotation_while_a_run_reads_leaves_the_moved_files_to_the_next_run(log, monkeypatch):
    # logrotate renames every file after the run planned where to start in each: read by name
    # when their turn came, access.log.1 was the old live log read from the older file's
    # offset, and access.log the new one read from the old live log's (a cron review: 1,501
    # lines counted twice, 1,505 never). Files not as planned are left for the next run.
    log.append("access.log", 10)
    assert run(log) == (10, 10)
    os.rename(log.dir / "access.log", log.dir / "access.log.1")
    log.append("access.log", 8)

    def rotate():
        os.rename(log.dir / "access.log.1", log.dir / "access.log.2")
        os.rename(log.dir / "access.log", log.dir / "access.log.1")
        log.append("access.log", 4)

    stats = run_rotated_after_planning(log, monkeypatch, rotate)
    assert (stats.lines, stats.moved) == (0, [str(log.dir / "access.log.1"), str(log.dir / "access.log")])
    assert run(log) == (12, 22)  # the 8 lines of the old live log and the 4 of the new one
    assert run(log) == (0, 22)


def test_copytruncate_while_a_run_reads_leaves_the_log_to_the_next_run(log, monkeypatch):
    # copytruncate after the run planned: the live log read from its old offset gave nothing
    # (or the middle of new lines) and took a mark of the new content at that offset; the next
    # run read the copy from its start again and lost the new lines before the offset
    log.append("access.log", 10)
    assert run(log) == (10, 10)
    log.append("access.log", 2)

    def copytruncate():
        shutil.copy(log.dir / "access.log", log.dir / "access.log.1")
        with open(log.dir / "access.log", "r+") as f:
            f.truncate(0)
        log.append("access.log", 3)

    stats = run_rotated_after_planning(log, monkeypatch, copytruncate)
    assert (stats.lines, stats.moved) == (0, [str(log.dir / "access.log")])
    assert run(log) == (5, 15)
    assert run(log) == (0, 15)


def test_a_compressed_log_read_to_its_end_is_not_decompressed_again(log):
    # every run decompressed each rotated .gz from its start to skip what it had read (5 s an
    # hour for one 2 GB log): one read at its present size is not opened now
    log.append("access.log", 10)
    gzip_file(log.dir / "access.log", log.dir / "access.log.1.gz")
    log.append("access.log", 3)
    assert run(log) == (13, 13)
    log.append("access.log", 2)
    analysis, _ = run_incremental([str(log.dir / "access.log*")], log.dir / "state", Settings())
    assert [Path(f.path).name for f in analysis.stats.files] == ["access.log"]
    assert analysis.stats.lines == 2
    # a state from before sizes were kept: the .gz is read (from its mark) once more
    rewrite_meta(log.dir / "state", lambda meta: {
        **meta, "files": [{k: v for k, v in m.items() if k != "size"} for m in meta["files"]]})
    analysis, _ = run_incremental([str(log.dir / "access.log*")], log.dir / "state", Settings())
    assert [Path(f.path).name for f in analysis.stats.files] == ["access.log.1.gz", "access.log"]
    assert (analysis.stats.lines, run(log)) == (0, (0, 15))


def test_a_state_missing_a_table_is_refused(log):
    # a damaged copy without windows.parquet was taken as a state with no windows: the
    # remembered requests and the finding gone, the lines read before never read again
    log.append("access.log", 10)
    run(log)
    state = log.dir / "state"
    with zipfile.ZipFile(state) as z:
        files = {name: z.read(name) for name in z.namelist() if name != "windows.parquet"}
    with zipfile.ZipFile(state, "w") as z:
        for name, data in files.items():
            z.writestr(name, data)
    with pytest.raises(StateError, match="is not a logtrap state file or is corrupt "
                       r"\(its windows.parquet is missing\)"):
        load_state(state)


def test_marks_of_files_given_and_not_read_are_kept_past_the_cap(log, monkeypatch):
    # unchanged .gz files are not read, so their marks are not renewed: past the cap on marks
    # kept (200; 3 here) the oldest were dropped and those files read again, every run
    monkeypatch.setattr(resume, "_MAX_MARKS", 3)
    for day in range(5):
        log.append("access.log", 2)
        gzip_file(log.dir / "access.log", log.dir / f"access.log-2026010{day + 1}.gz")
    log.append("access.log", 1)
    assert run(log) == (11, 11)
    assert run(log) == (0, 11)
    assert run(log) == (0, 11)


def test_a_compressed_log_renamed_while_no_file_has_its_old_name_keeps_its_mark(log):
    # a run between logrotate's renames: access.log.1.gz is access.log.2.gz, no new .1.gz yet;
    # the mark kept the old name, which no file had, and was dropped: read again next run
    log.append("access.log", 10)
    gzip_file(log.dir / "access.log", log.dir / "access.log.1.gz")
    log.append("access.log", 5)
    assert run(log) == (15, 15)
    os.rename(log.dir / "access.log.1.gz", log.dir / "access.log.2.gz")
    assert run(log) == (0, 15)
    assert run(log) == (0, 15)


def test_a_log_removed_before_its_turn_is_left_to_the_next_run(log, monkeypatch):
    # dateext and delaycompress: yesterday's log compressed and removed after the run planned
    # it stopped the run with "No such file"
    log.append("access.log", 10)
    os.rename(log.dir / "access.log", log.dir / "access.log-20260101")
    log.append("access.log", 3)

    def compress():
        gzip_file(log.dir / "access.log-20260101", log.dir / "access.log-20260101.gz")

    stats = run_rotated_after_planning(log, monkeypatch, compress)
    assert (stats.lines, stats.moved) == (3, [str(log.dir / "access.log-20260101")])
    assert run(log) == (10, 13)
    assert run(log) == (0, 13)


def test_ctrl_c_ends_a_run_waiting_for_the_state(log):
    # polars' import made a blocking flock restart after SIGINT: Ctrl-C waited for the other
    # run; and the wait was silent, a person at a shell saw a run hang
    log.append("access.log", 3)
    with state_module.state_lock(log.dir / "state"):
        proc = subprocess.Popen([sys.executable, "-m", "logtrap", "analyze", str(log.dir / "access.log"),
                                 "--state", str(log.dir / "state")], stderr=subprocess.PIPE, text=True)
        assert proc.stderr.readline() == (
            f"{log.dir / 'state'}: another logtrap run is using it; waiting for it to finish "
            "(Ctrl-C to stop)\n")
        proc.send_signal(signal.SIGINT)
        assert proc.wait(timeout=30) == 130  # while the lock is still held
    assert not (log.dir / "state").exists()


def test_copytruncate_rotation(log):
    log.append("access.log", 10)
    assert run(log) == (10, 10)
    log.append("access.log", 2)
    shutil.copy(log.dir / "access.log", log.dir / "access.log.1")
    with open(log.dir / "access.log", "r+") as f:
        f.truncate(0)
    log.append("access.log", 3)
    assert run(log) == (5, 15)


def test_a_run_while_logrotate_compresses_reads_each_line_once(log):
    # compress without delaycompress: access.log.1.gz is written, access.log.1 not yet removed
    packed = rotate_with_unread_lines(log)
    (log.dir / "access.log.1.gz").write_bytes(packed)
    assert run(log) == (7, 17)  # the .gz is the same content: not read again from its start
    (log.dir / "access.log.1").unlink()  # logrotate is done: the .gz resumes where it was read
    log.append("access.log", 2)
    assert run(log) == (2, 19)


def test_a_first_run_while_logrotate_compresses_reads_the_log_once(log):
    # no state yet, and gzip is half-way through access.log.1.gz (it cannot be read whole)
    log.append("access.log.1", 200)
    log.append("access.log", 5)
    packed = gzip.compress((log.dir / "access.log.1").read_bytes())
    (log.dir / "access.log.1.gz").write_bytes(packed[: len(packed) // 2])
    assert run(log) == (205, 205)
    (log.dir / "access.log.1.gz").write_bytes(packed)
    (log.dir / "access.log.1").unlink()
    assert run(log) == (0, 205)


def test_a_run_as_logrotate_starts_compressing_waits_for_the_compressed_file(log):
    # gzip has written only its header so far: nothing of access.log.1.gz can be read yet
    packed = rotate_with_unread_lines(log)
    (log.dir / "access.log.1.gz").write_bytes(packed[:10])
    result = CliRunner().invoke(cli, ["analyze", str(log.dir / "access.log*"), "--state",
                                      str(log.dir / "state"), "--json", str(log.dir / "r.json")])
    assert f"{log.dir / 'access.log.1.gz'}: logrotate is still writing it; its lines are read " \
        "next run" in result.stderr
    summary = json.loads((log.dir / "r.json").read_text())["summary"]
    assert (summary["lines"], summary["requests"]) == (7, 17)  # as ever
    (log.dir / "access.log.1.gz").write_bytes(packed)  # done: the .gz resumes where it was read
    (log.dir / "access.log.1").unlink()
    assert run(log) == (0, 17)


def test_a_compressed_log_unreadable_for_ten_minutes_is_an_error(log):
    log.append("access.log", 10)
    (log.dir / "access.log.1.gz").write_bytes(gzip.compress(b"x" * 1000)[:10])
    old = time.time() - 601
    os.utime(log.dir / "access.log.1.gz", (old, old))
    with pytest.raises(InputError, match="access.log.1.gz: cannot read, corrupt") as err:
        run(log)
    assert err.value.hint.startswith("if logrotate is still compressing it, run again once")


def test_a_run_between_copytruncate_copy_and_truncate_reads_each_line_once(log):
    log.append("access.log", 10)
    assert run(log) == (10, 10)
    log.append("access.log", 2)
    shutil.copy(log.dir / "access.log", log.dir / "access.log.1")  # copied, not yet truncated
    log.append("access.log", 1)  # logged after the copy: read now, truncated away later
    assert run(log) == (3, 13)  # the copy holds nothing the live file does not
    with open(log.dir / "access.log", "r+") as f:
        f.truncate(0)
    log.append("access.log", 3)
    assert run(log) == (3, 16)  # the copy resumes where the live file was read


HEALTH = '127.0.0.1 - - [01/Jan/2026:00:00:01 +0000] "GET /health HTTP/1.1" 200 2 "-" "Monit/5"\n'


def test_logs_with_the_same_first_line_each_resume_where_they_were(log):
    # a health check every vhost logs at the same second: one first line, two logs
    (log.dir / "a.example.log").write_text(HEALTH + log.lines(8))
    (log.dir / "b.example.log").write_text(HEALTH + log.lines(5))
    assert run(log, "*.example.log*") == (15, 15)
    assert run(log, "*.example.log*") == (0, 15)
    log.append("a.example.log", 2)  # unread when logrotate comes
    log.append("b.example.log", 1)
    for vhost in ("a", "b"):  # rotated and compressed: new inodes, the same first line
        gzip_file(log.dir / f"{vhost}.example.log", log.dir / f"{vhost}.example.log.1.gz")
        log.append(f"{vhost}.example.log", 1)
    assert run(log, "*.example.log*") == (5, 20)
    assert run(log, "*.example.log*") == (0, 20)


def test_half_written_line_waits_for_the_next_run(log):
    log.append("access.log", 4)
    whole = log.lines(1)
    with open(log.dir / "access.log", "a") as f:
        f.write(whole[:30])  # the server is mid-write
    assert run(log) == (4, 4)
    with open(log.dir / "access.log", "a") as f:
        f.write(whole[30:])
    assert run(log) == (1, 5)


def test_a_file_not_named_this_time_is_not_read_twice_later(log):
    log.append("access.log", 6)
    log.append("other.log", 3)
    paths = [str(log.dir / "access.log"), str(log.dir / "other.log")]
    analysis, _ = run_incremental(paths, log.dir / "state", Settings())
    assert analysis.stats.lines == 9
    run_incremental(paths[:1], log.dir / "state", Settings())
    analysis, _ = run_incremental(paths, log.dir / "state", Settings())
    assert analysis.stats.lines == 0
    assert analysis.traffic.patterns[s.REQUESTS].sum() == 9


def test_files_past_the_marks_kept_are_resumed_too(log, monkeypatch):
    # every file read keeps its mark (dropped, it was read from its start on every run); only
    # the marks of files not given this time are capped
    monkeypatch.setattr(resume, "_MAX_MARKS", 3)
    for site in range(5):
        log.append(f"site{site}.log", 2)
    assert run(log, "site*.log") == (10, 10)
    assert run(log, "site*.log") == (0, 10)
    assert len(load_state(log.dir / "state").marks) == 5
    assert run(log, "site0.log") == (0, 10)
    assert [m.path for m in load_state(log.dir / "state").marks] == [
        str(log.dir / f"site{site}.log") for site in (0, 1, 2)]


def test_findings_are_new_once(tmp_path):
    trap = tmp_path / "access.log"
    lines = [
        f'66.249.66.1 - - [01/Jan/2026:10:{i // 60:02d}:{i % 60:02d} +0000] '
        f'"GET /?sid={i:08x}{i * 7919:08x} HTTP/1.1" 200 4000 "-" '
        f'"Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)"\n'
        for i in range(300)
    ]
    trap.write_text("".join(lines))
    first, new = run_incremental([str(trap)], tmp_path / "state", Settings())
    assert "session_id" in new[s.KIND].to_list()
    assert new.height == first.findings.height
    again, new = run_incremental([str(trap)], tmp_path / "state", Settings())
    assert new.height == 0
    assert again.findings.select(s.KIND, s.PATTERN).equals(first.findings.select(s.KIND, s.PATTERN))
    assert load_state(tmp_path / "state").runs == 2


GOOGLEBOT = "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)"


def session_trap(path: Path, ids: range, pages: int = 0) -> None:
    """Googlebot fetching the home page under a new session id each (a session_id trap),
    then `pages` times a page of content; appended to `path`."""
    with open(path, "a") as f:
        for i in ids:
            f.write(f'66.249.66.1 - - [01/Jan/2026:10:{i // 60 % 60:02d}:{i % 60:02d} +0000] '
                    f'"GET /?sid={i:08x}{i * 7919:08x} HTTP/1.1" 200 4000 "-" "{GOOGLEBOT}"\n')
        for i in range(pages):
            f.write(f'66.249.66.1 - - [01/Jan/2026:11:{i // 60 % 60:02d}:{i % 60:02d} +0000] '
                    f'"GET /about HTTP/1.1" 200 3000 "-" "{GOOGLEBOT}"\n')


def alerts(tmp_path: Path) -> list[tuple[str, str]]:
    _, new = run_incremental([str(tmp_path / "access.log")], tmp_path / "state")
    return new.select(s.KIND, pl.col(s.SEVERITY).cast(pl.String)).rows()


def test_a_finding_is_new_again_when_its_severity_rises(tmp_path):
    # 29 of 3,030 bot requests wasted: info; then 99 of 3,100: warning; then most: critical
    session_trap(tmp_path / "access.log", range(0, 30), pages=3000)
    assert alerts(tmp_path) == [("session_id", "info")]
    session_trap(tmp_path / "access.log", range(30, 100))
    assert alerts(tmp_path) == [("session_id", "warning")]
    assert alerts(tmp_path) == []
    session_trap(tmp_path / "access.log", range(100, 1200))
    assert alerts(tmp_path) == [("session_id", "critical")]
    assert load_state(tmp_path / "state").known == [
        {s.KIND: "session_id", s.HOST: "-", s.PATTERN: "/?sid", s.BOT_NAME: None,
         s.SEVERITY: "critical", "alerted": None, "subjects": None}]  # seen, alerted by no one


def cron(tmp_path: Path, fail_on: str) -> list[tuple[str, str]]:
    """One cron run as `analyze --state --fail-on` makes it: the findings it alerts on."""
    run = read_incremental([str(tmp_path / "access.log")], tmp_path / "state")
    alerting = run.alerting(fail_on)
    run.save(alerted=fail_on)
    return alerting.select(s.KIND, pl.col(s.SEVERITY).cast(pl.String)).rows()


def test_a_finding_seen_below_the_threshold_alerts_once_the_threshold_is_lowered(tmp_path):
    session_trap(tmp_path / "access.log", range(0, 100), pages=3000)  # a warning
    assert cron(tmp_path, "critical") == []
    assert cron(tmp_path, "warning") == [("session_id", "warning")]  # never alerted before
    assert cron(tmp_path, "warning") == []
    assert cron(tmp_path, "info") == []  # alerted at warning: above info too
    assert load_state(tmp_path / "state").known[0]["alerted"] == "warning"
    session_trap(tmp_path / "access.log", range(100, 1200))  # grows to critical
    assert cron(tmp_path, "critical") == [("session_id", "critical")]
    assert cron(tmp_path, "warning") == []


def test_a_state_from_before_alerts_were_kept_alerts_once_more(tmp_path):
    # It took every finding seen for alerted, under any --fail-on: one seen under `critical`
    # may never have been told. Each at or above the threshold alerts once, then not again.
    session_trap(tmp_path / "access.log", range(0, 100), pages=3000)
    assert cron(tmp_path, "warning") == [("session_id", "warning")]
    rewrite_meta(tmp_path / "state", lambda meta: {**meta, "known_findings": [
        {k: v for k, v in known.items() if k != "alerted"} for known in meta["known_findings"]]})
    assert load_state(tmp_path / "state").known[0]["alerted"] is None
    assert cron(tmp_path, "warning") == [("session_id", "warning")]
    assert cron(tmp_path, "warning") == []


def test_a_state_from_before_severities_were_kept_takes_them_as_the_lowest(tmp_path):
    session_trap(tmp_path / "access.log", range(0, 100), pages=3000)
    assert alerts(tmp_path) == [("session_id", "warning")]
    rewrite_meta(tmp_path / "state", lambda meta: {**meta, "known_findings": [
        {k: v for k, v in known.items() if k != "severity"} for known in meta["known_findings"]]})
    assert load_state(tmp_path / "state").known[0][s.SEVERITY] == "info"
    assert alerts(tmp_path) == [("session_id", "warning")]  # reported at info, for all we know
    assert alerts(tmp_path) == []


def test_corrupt_state_is_a_clear_error(tmp_path):
    bad = tmp_path / "state"
    bad.write_bytes(b"not a zip at all")
    with pytest.raises(StateError, match="not a logtrap state file or is corrupt"):
        load_state(bad)


@pytest.mark.parametrize(("meta", "message"), [
    ('{"schema": "something/else"}', "state file of another kind"),
    ('{"schema": "logtrap/state-v1", "polars": "0.0.1"}', "written with Polars 0.0.1"),
])
def test_foreign_state_is_a_clear_error(tmp_path, meta, message):
    # another tool's file, or ours from a Polars whose hashes may differ
    state = tmp_path / "state"
    with zipfile.ZipFile(state, "w") as z:
        z.writestr("meta.json", meta)
    with pytest.raises(StateError, match=message):
        load_state(state)


def without(entry: dict, key: str) -> dict:
    return {k: v for k, v in entry.items() if k != key}


@pytest.mark.parametrize(("edit", "message"), [
    (lambda meta: [meta], "meta.json holds no JSON object"),
    (lambda meta: {**meta, "files": [without(meta["files"][0], "offset")]},
     "meta.json files[0] has no 'offset'"),
    (lambda meta: {**meta, "files": [{**meta["files"][0], "line_no": "3"}]},
     "meta.json files[0]['line_no'] is '3'"),
    (lambda meta: {**meta, "files": {}}, "meta.json['files'] is {}"),
    (lambda meta: {**meta, "known_findings": [{"kind": "calendar"}]},
     "meta.json known_findings[0] has no 'host'"),
    (lambda meta: {**meta, "known_findings": [
        {"kind": "calendar", "host": "-", "pattern": "/c", "severity": "dire"}]},
     "meta.json known_findings[0]['severity'] is 'dire'"),
])
def test_a_malformed_meta_is_a_clear_error(log, edit, message):
    log.append("access.log", 3)
    run(log)
    state = log.dir / "state"
    rewrite_meta(state, edit)
    with pytest.raises(StateError) as err:
        run(log)
    assert str(err.value) == f"{state} is not a logtrap state file or is corrupt ({message})"
    assert err.value.hint == NOT_A_STATE


NOT_A_STATE = ("if it is a state logtrap wrote, delete it to start over (the next run reads the "
               "logs from the start); if not, give --state a path of its own")


def test_a_log_given_as_the_state_is_not_said_to_be_deleted(log):
    # a mistyped --state access.log.1: "delete it" would be the admin's log
    log.append("access.log", 3)
    with pytest.raises(StateError) as err:
        run_incremental([str(log.dir / "access.log")], log.dir / "access.log", Settings())
    assert str(err.value).endswith("is not a logtrap state file or is corrupt (File is not a zip file)")
    assert err.value.hint == NOT_A_STATE


@pytest.mark.parametrize("keys", [None, 1])
def test_a_state_whose_urls_were_kept_by_other_keys_is_refused(log, keys):
    # an earlier logtrap's (no "keys" written: the first way): its URLs would all count as new
    log.append("access.log", 3)
    run(log)
    state = log.dir / "state"
    rewrite_meta(state, lambda meta: {**without(meta, "keys"), **({} if keys is None else {"keys": keys})})
    with pytest.raises(StateError) as err:
        run(log)
    assert str(err.value) == (f"{state} was written by an earlier logtrap, which kept URLs by other "
                              "keys: its remembered URLs cannot be matched")
    assert err.value.hint == "delete it to start over (the next run reads the logs from the start)"
    rewrite_meta(state, lambda meta: {**meta, "keys": traffic.KEYS})  # this logtrap's: continued
    log.append("access.log", 2)
    assert run(log) == (2, 5)


def test_keys_a_newer_logtrap_adds_are_ignored(log):
    log.append("access.log", 3)
    assert run(log) == (3, 3)
    rewrite_meta(log.dir / "state", lambda meta: {
        **meta, "retention": "30d", "files": [{**f, "size": 1} for f in meta["files"]]})
    log.append("access.log", 2)
    assert run(log) == (2, 5)


def test_aggregates_made_by_other_pattern_rules_are_not_continued(log):
    # a site's own tracking parameter added to the config between two cron runs: its URLs'
    # patterns change (?ref -> ?{tracking}), so the remembered ones cannot be added to
    log.append("access.log", 5)
    assert run(log) == (5, 5)
    log.append("access.log", 5)
    with pytest.raises(StateError, match="URL patterns made by other pattern rules"):
        run_incremental([str(log.dir / "access.log*")], log.dir / "state",
                        Settings(tracking_params=("ref",)))
    assert load_state(log.dir / "state").runs == 1  # left as it was


def test_aggregates_of_other_hosts_are_not_continued(log):
    # a cron job's --host changed (or added) with the same state: the report would have shown
    # the remembered hosts beside the one asked for, and mixed them in the state from then on
    log.append("access.log", 5)
    assert run(log) == (5, 5)
    log.append("access.log", 5)
    with pytest.raises(StateError) as err:
        run_incremental([str(log.dir / "access.log*")], log.dir / "state",
                        Settings(hosts=("News.Example.net",)))
    assert str(err.value).endswith(
        "holds the aggregates of every host (no --host), and this run asks for host "
        "news.example.net (--host)")
    assert err.value.hint == "give each --host its own --state file, or delete it to start over"
    assert load_state(log.dir / "state").runs == 1  # left as it was
    assert run(log) == (5, 10)  # the same hosts as before: continued


def test_a_state_from_before_hosts_were_kept_is_continued(log):
    # states written before the --host filter was recorded hold no "hosts": taken as they are
    log.append("access.log", 5)
    run(log)
    state = log.dir / "state"
    assert drop_from_meta(state, "hosts") == []
    log.append("access.log", 5)
    assert run(log) == (5, 10)
    assert load_state(state).hosts == []


def test_a_state_from_before_pattern_rules_were_kept_is_not_continued(log):
    log.append("access.log", 5)
    run(log)
    assert drop_from_meta(log.dir / "state", "pattern_rules").startswith("2:")
    with pytest.raises(StateError, match="made by other pattern rules") as err:
        run(log)
    assert err.value.hint == "delete it to start over (the next run reads the logs from the start)"


def write_products(path: Path, products: range) -> None:
    """Googlebot fetching one product page each (two-word handles: a pattern each until
    their names are merged), appended to `path`."""
    with open(path, "a") as f:
        for i in products:
            f.write(f'66.249.66.1 - - [01/Jan/2026:11:{i // 60 % 60:02d}:{i % 60:02d} +0000] '
                    f'"GET /products/red-x{i} HTTP/1.1" 200 {500 + i} "-" "Googlebot/2.1"\n')


def product_rows(analysis) -> list[tuple]:
    return analysis.traffic.patterns.select(s.PATTERN, s.REQUESTS, s.UNIQUE_URLS).rows()


def test_a_catalog_merged_across_runs_counts_as_one_run_over_it_all(tmp_path, monkeypatch):
    # 150 products over three runs, their names merged during each run and at its end
    monkeypatch.setattr(traffic, "_MERGE_NAMES_AT", 30)
    for products in (range(0, 40), range(20, 100), range(100, 150)):
        write_products(tmp_path / "access.log", products)
        analysis, _ = run_incremental([str(tmp_path / "access.log")], tmp_path / "state")
    assert product_rows(analysis) == [("/products/{name}", 170, 150)]
    assert product_rows(analyze(str(tmp_path / "access.log"))) == product_rows(analysis)
    assert load_state(tmp_path / "state").tally["names"].height == 150


def test_a_state_keeps_a_catalog_under_its_merged_pattern(tmp_path):
    # hourly runs bring a few new products each: the state keeps one pattern, not one each;
    # new products join it 25 at a time (each run reports them merged all the same)
    kept = []
    for products in (range(0, 30), range(30, 40), range(40, 45), range(45, 75)):
        write_products(tmp_path / "access.log", products)
        analysis, _ = run_incremental([str(tmp_path / "access.log")], tmp_path / "state")
        assert product_rows(analysis) == [("/products/{name}", products.stop, products.stop)]
        tally = load_state(tmp_path / "state").tally
        kept.append(tally["windows"][s.PATTERN].n_unique())
    assert kept == [1, 11, 16, 1]
    assert tally["windows"][s.PATTERN].unique().to_list() == ["/products/{name}"]
    assert tally["names"].height == 75


def test_a_state_from_before_names_were_kept_is_continued(tmp_path):
    # states written before `names` held the patterns as their URLs gave them, never merged
    write_products(tmp_path / "access.log", range(0, 10))
    run_incremental([str(tmp_path / "access.log")], tmp_path / "state")
    with zipfile.ZipFile(tmp_path / "state") as z:
        files = {name: z.read(name) for name in z.namelist() if name != "names.parquet"}
    with zipfile.ZipFile(tmp_path / "state", "w") as z:
        for name, data in files.items():
            z.writestr(name, data)
    drop_from_meta(tmp_path / "state", "tables")  # nor did they list their tables
    write_products(tmp_path / "access.log", range(10, 40))
    analysis, _ = run_incremental([str(tmp_path / "access.log")], tmp_path / "state")
    assert product_rows(analysis) == [("/products/{name}", 40, 40)]


def test_a_state_of_other_logs_is_not_continued(log):
    # one state file given to two cron jobs: the second site's counts would join the first's
    log.append("www.access.log", 5)
    assert run(log, "www.access.log*") == (5, 5)
    log.append("shop.access.log", 7)
    with pytest.raises(StateError) as err:
        run(log, "shop.access.log*")
    assert str(err.value).endswith(
        f"holds the counts of other logs ({log.dir / 'www.access.log'}), not of these "
        f"({log.dir / 'shop.access.log'}): continuing would add the two together")
    assert err.value.hint == (
        "give each site's logs a --state file of their own; the same logs under a new name or "
        "folder? give the old files too for one run (or delete the state to start over)")
    assert load_state(log.dir / "state").runs == 1  # left as it was


def test_a_state_of_another_sites_logs_of_the_same_name_is_not_continued(log):
    # one folder per site, the same file name in each (Plesk, ISPConfig, containers)
    os.makedirs(log.dir / "www"), os.makedirs(log.dir / "shop")
    log.append("www/access.log", 5)
    assert run(log, "www/access.log*") == (5, 5)
    log.append("shop/access.log", 7)
    with pytest.raises(StateError, match="holds the counts of other logs"):
        run(log, "shop/access.log*")


def test_daily_log_names_and_a_first_empty_log_go_on(log):
    # rotatelogs' access.%Y-%m-%d.log: a new name every day, the same family
    log.append("access.2026-11-27.log", 5)
    assert run(log, "access.2026-11-27.log") == (5, 5)
    log.append("access.2026-11-28.log", 3)
    assert run(log, "access.2026-11-28.log") == (3, 8)
    # a state that has read nothing yet holds no counts to mix: any log may follow
    (log.dir / "empty.log").write_text("")
    run_incremental([str(log.dir / "empty.log")], log.dir / "fresh", Settings())
    analysis, _ = run_incremental([str(log.dir / "access.2026-11-28.log")], log.dir / "fresh", Settings())
    assert analysis.stats.lines == 3


def test_the_same_logs_after_every_file_read_was_rotated_away_go_on(log):
    # cron stopped for weeks: the files read then are gone, the set's name is the same
    log.append("access.log", 5)
    assert run(log) == (5, 5)
    (log.dir / "access.log").unlink()
    log.append("access.log", 3)  # a new file: no mark of the state is of it
    assert run(log) == (3, 8)


def test_stdin_cannot_carry_state(tmp_path):
    from logtrap.errors import ConfigError

    with pytest.raises(ConfigError, match="standard input"):
        run_incremental(["-"], tmp_path / "state", Settings())


CRASHER = """
import os, signal, sys, time
from pathlib import Path
import polars as pl
from logtrap import cli
from logtrap.state import State, save_state
signal.signal(signal.SIGTERM, cli._terminate)  # as the console script does

def fsync(fd):  # the new state is in its temporary file, not yet in place: say so, and wait
    print("writing", flush=True)
    time.sleep(60)

os.fsync = fsync
table = pl.DataFrame({"url_hash": pl.int_range(0, 300_000, eager=True).cast(pl.UInt64)})
try:
    save_state(Path(sys.argv[1]), State(tally={"url_hashes": table}, runs=99))
except cli._Terminated:
    sys.exit(cli.EXIT_TERMINATED)
"""


def _stop_while_writing(state: Path, how: signal.Signals) -> int:
    """Start a process writing a new `state`, send it `how` once the new state is in its
    temporary file, not yet in place; its exit code."""
    proc = subprocess.Popen([sys.executable, "-c", CRASHER, str(state)], stdout=subprocess.PIPE, text=True)
    assert proc.stdout.readline().strip() == "writing"
    proc.send_signal(how)
    return proc.wait()


def test_killed_mid_write_leaves_the_old_state_usable(log):
    log.append("access.log", 10)
    assert run(log) == (10, 10)
    state = log.dir / "state"
    assert _stop_while_writing(state, signal.SIGKILL) == -signal.SIGKILL
    assert len(list(state.parent.glob(".state.*.tmp"))) == 1  # kill -9: nothing can tidy up
    # The file is the old state, never a torn one, and it resumes where it was.
    assert load_state(state).runs == 1
    for leftover in state.parent.glob(".state.*"):
        leftover.unlink()
    log.append("access.log", 2)
    assert run(log) == (2, 12)


def test_terminated_mid_write_leaves_no_temporary_file(log):
    # SIGTERM (a shutdown, `timeout`, kill) while the state was written left its temporary
    # file for good; the console script turns it into an unwinding, as Ctrl-C
    log.append("access.log", 10)
    assert run(log) == (10, 10)
    state = log.dir / "state"
    assert _stop_while_writing(state, signal.SIGTERM) == 143
    assert list(state.parent.glob(".state.*")) == []
    assert load_state(state).runs == 1


def test_a_state_that_cannot_be_written_is_an_error_not_a_traceback(log):
    # a folder that does not exist (cron jobs run where nobody looks): after the whole read
    log.append("access.log", 3)
    with pytest.raises(StateError, match="cannot write state .*/missing/state: No such file"):
        run_incremental([str(log.dir / "access.log")], log.dir / "missing" / "state", Settings())
    assert list(log.dir.glob("**/.state.*")) == []  # nothing left behind


def test_a_state_on_a_full_disk_says_so(log, monkeypatch):
    # the hint was the folder's permissions, whatever the error
    log.append("access.log", 3)

    def full_disk(src, dst):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(os, "replace", full_disk)
    with pytest.raises(StateError, match="cannot write state .*: No space left on device") as err:
        run_incremental([str(log.dir / "access.log")], log.dir / "state", Settings())
    assert err.value.hint == ("the disk is full (or the user's quota): free some space; nothing "
                              "was remembered, so the next run reads these lines again")


def test_a_zstd_log_under_cron_is_refused_at_once_with_its_way_in(log):
    # it waited ten minutes as "being written", then was called damaged
    log.append("access.log", 3)
    zst = log.dir / "access.log.2.zst"
    zst.write_bytes(b"\x28\xb5\x2f\xfd" + bytes(60))
    with pytest.raises(InputError, match="compressed with zstd") as err:
        run(log)
    assert err.value.hint.startswith(f"decompress it on the way in (zstd -dc {zst} | logtrap")


def test_a_state_is_saved_only_when_asked(log):
    # for a caller that sends the findings out after the read: saved once they are out
    log.append("access.log", 4)
    first = read_incremental([str(log.dir / "access.log")], log.dir / "state")
    assert (first.analysis.stats.lines, (log.dir / "state").exists()) == (4, False)
    again = read_incremental([str(log.dir / "access.log")], log.dir / "state")
    assert again.analysis.stats.lines == 4  # not remembered: read again
    again.save()
    assert run(log) == (0, 4)


def test_a_report_that_cannot_be_written_alerts_again_next_run(tmp_path, monkeypatch):
    # the disk is full when the report is written: the run fails, and the next one (the disk
    # freed) still reports the trap as new, instead of taking it as reported
    monkeypatch.chdir(tmp_path)
    session_trap(tmp_path / "access.log", range(300))
    replace = os.replace

    def full_disk(src, dst):
        if str(dst).endswith("report.json"):
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        replace(src, dst)

    monkeypatch.setattr(os, "replace", full_disk)
    args = ["analyze", "access.log", "--state", "state", "--quiet", "--json", "report.json"]
    failed = CliRunner().invoke(cli, args, catch_exceptions=False)
    assert (failed.exit_code, failed.stdout) == (1, "")
    assert failed.stderr == ("Error: cannot write report.json: No space left on device\n"
                             "Hint: the disk is full (or the user's quota): free some space, or "
                             "write elsewhere\n")
    assert not (tmp_path / "state").exists()
    monkeypatch.setattr(os, "replace", replace)
    again = CliRunner().invoke(cli, args, catch_exceptions=False)
    assert again.exit_code == 3
    assert again.stdout.startswith("Findings: 2 critical, 0 warning, 0 info (1 of them shown as "
                                   "a line under another finding on the same pattern or family)\n\n"
                                   "CRITICAL session_id /?sid\n")
    assert [f["kind"] for f in json.loads((tmp_path / "report.json").read_text())["findings"]] \
        == ["session_id", "budget_hog"]
    assert load_state(tmp_path / "state").runs == 1


BINGBOT = "Mozilla/5.0 (compatible; bingbot/2.0; +http://www.bing.com/bingbot.htm)"
RANGES = (Path(__file__).parent / "data" / "googlebot.json", Path(__file__).parent / "data" / "bingbot.json")


def fakes(path: Path, agent: str, client: str, count: int, minute: int) -> None:
    """`count` requests claiming `agent` from `client` (in neither engine's ranges)."""
    with open(path, "a") as f:
        for i in range(count):
            f.write(f'{client} - - [01/Jan/2026:10:{minute:02d}:{i % 60:02d} +0000] '
                    f'"GET /page/{minute}-{i} HTTP/1.1" 200 {3000 + i} "-" "{agent}"\n')


def test_a_second_fake_bot_on_a_host_is_new_and_a_bot_is_known_by_its_name(tmp_path):
    # findings about a bot are known by the bot, whatever pattern it fetched most: a fake
    # bingbot after a fake Googlebot was reported is news (both findings have no pattern),
    # the same fakes fetching other pages are not; a fake from an address the deployed
    # rule does not name is (it went unsaid: the rule made for the old ones let it through)
    log, settings = tmp_path / "access.log", Settings(ip_ranges=RANGES)
    fakes(log, GOOGLEBOT, "203.0.113.9", 40, 0)

    def alerts() -> list[tuple[str, str, list[str]]]:
        _, new = run_incremental([str(log)], tmp_path / "state", settings)
        return [(k, json.loads(e)["bot_name"], json.loads(e)["addresses"])
                for k, e in new.select(s.KIND, s.EVIDENCE).rows() if k == "fake_bot"]

    assert alerts() == [("fake_bot", "Googlebot", ["203.0.113.9"])]
    fakes(log, BINGBOT, "203.0.113.10", 40, 1)
    assert alerts() == [("fake_bot", "bingbot", ["203.0.113.10"])]
    fakes(log, GOOGLEBOT, "203.0.113.9", 40, 2)
    fakes(log, BINGBOT, "203.0.113.10", 40, 3)
    assert alerts() == []
    fakes(log, GOOGLEBOT, "203.0.113.11", 40, 4)
    assert alerts() == [("fake_bot", "Googlebot", ["203.0.113.9", "203.0.113.11"])]
    assert alerts() == []
    assert [(k[s.BOT_NAME], k["subjects"]) for k in load_state(tmp_path / "state").known
            if k[s.KIND] == "fake_bot"] == [
        ("Googlebot", ["203.0.113.11", "203.0.113.9"]), ("bingbot", ["203.0.113.10"])]


def as_saved_before_the_sample_grew(state: Path) -> None:
    """Rewrite a state as logtrap kept it with 256 addresses per host and bot: bot_clients
    cut to its 256 smallest hashes, and no address_sample in meta.json."""
    import io

    with zipfile.ZipFile(state) as z:
        files = {name: z.read(name) for name in z.namelist()}
    meta = json.loads(files["meta.json"])
    del meta["address_sample"]
    files["meta.json"] = json.dumps(meta).encode()
    name = next(n for n in files if n.endswith("bot_clients.parquet"))
    rank = pl.col(traffic._CLIENT_HASH).rank("dense").over(s.HOST, s.BOT_NAME)
    buffer = io.BytesIO()
    pl.read_parquet(files[name]).filter(rank <= traffic.OLD_ADDRESS_SAMPLE).write_parquet(buffer)
    files[name] = buffer.getvalue()
    with zipfile.ZipFile(state, "w") as z:
        for n, data in files.items():
            z.writestr(n, data)


def test_a_state_kept_with_256_addresses_is_continued_with_256(tmp_path):
    # an app's okhttp from 1,000 phones, then 1,000 others: a crowd of 2,000. The old state's
    # 256 addresses read as a sample of 1,024 made it 1,343 with a spread too low (a crowd of
    # 2,900 was judged no crowd: a critical finding on the app's API after the upgrade)
    from test_end_to_end import app_log

    log = app_log(tmp_path / "access.log", 1000)
    first, _ = run_incremental([str(log)], tmp_path / "state", Settings())
    assert first.crowds.rows() == [("okhttp", 1000, 1000)] and first.findings.height == 0
    as_saved_before_the_sample_grew(tmp_path / "state")
    more = app_log(tmp_path / "more.log", 1000).read_text()  # the next hour, 1,000 other phones
    with open(log, "a") as f:
        f.write(more.replace("10:", "11:").replace('\n10.', '\n172.'))
    second, new = run_incremental([str(log)], tmp_path / "state", Settings())
    assert (second.findings.height, new.height) == (0, 0)
    [(bot, requests, addresses)] = second.crowds.rows()
    assert (bot, requests) == ("okhttp", 2000) and abs(addresses - 2000) <= 300  # estimated
    assert load_state(tmp_path / "state").address_sample == 256  # kept for the state's life

"""Cron state: every line counted exactly once across appends, logrotate (rename,
copytruncate, compression) and half-written lines; atomic writes; clear errors."""

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

import pytest

from logtrap import schema as s
from logtrap import traffic
from logtrap.analysis import analyze
from logtrap.errors import StateError
from logtrap.settings import Settings
from logtrap.state import load_state, run_incremental

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


def run(log: Log) -> tuple[int, int]:
    """One cron run over access.log*: (lines read this run, requests remembered in all)."""
    analysis, _ = run_incremental(
        [str(log.dir / "access.log*")], log.dir / "state", Settings()
    )
    return analysis.stats.lines, analysis.traffic.patterns[s.REQUESTS].sum()


def drop_from_meta(state: Path, key: str) -> object:
    """Rewrite a state file without one key of its meta.json (as an older logtrap wrote it);
    returns the value it had."""
    with zipfile.ZipFile(state) as z:
        files = {name: z.read(name) for name in z.namelist()}
    meta = json.loads(files["meta.json"])
    value = meta.pop(key)
    with zipfile.ZipFile(state, "w") as z:
        for name, data in files.items():
            z.writestr(name, json.dumps(meta) if name == "meta.json" else data)
    return value


def gzip_file(src: Path, dst: Path) -> None:
    with open(src, "rb") as f, gzip.open(dst, "wb") as g:
        shutil.copyfileobj(f, g)
    src.unlink()


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


def test_copytruncate_rotation(log):
    log.append("access.log", 10)
    assert run(log) == (10, 10)
    log.append("access.log", 2)
    shutil.copy(log.dir / "access.log", log.dir / "access.log.1")
    with open(log.dir / "access.log", "r+") as f:
        f.truncate(0)
    log.append("access.log", 3)
    assert run(log) == (5, 15)


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
    write_products(tmp_path / "access.log", range(10, 40))
    analysis, _ = run_incremental([str(tmp_path / "access.log")], tmp_path / "state")
    assert product_rows(analysis) == [("/products/{name}", 40, 40)]


def test_stdin_cannot_carry_state(tmp_path):
    from logtrap.errors import ConfigError

    with pytest.raises(ConfigError, match="standard input"):
        run_incremental(["-"], tmp_path / "state", Settings())


CRASHER = """
import sys
from pathlib import Path
import polars as pl
from logtrap.state import State, save_state
# A state with a big table, so writing it takes long enough to be killed mid-write.
big = pl.DataFrame({"url_hash": pl.int_range(0, 3_000_000, eager=True).cast(pl.UInt64)})
print("ready", flush=True)
while True:
    save_state(Path(sys.argv[1]), State(tally={"url_hashes": big}, runs=99))
"""


def _kill_while_writing(state: Path) -> bool:
    """Start a process that rewrites `state` over and over, kill -9 it; True when the kill
    caught it mid-write (its temporary file is left behind)."""
    proc = subprocess.Popen(
        [sys.executable, "-c", CRASHER, str(state)], stdout=subprocess.PIPE, text=True
    )
    assert proc.stdout.readline().strip() == "ready"
    time.sleep(0.3)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    return any(p.name.startswith(".state.") for p in state.parent.iterdir())


def test_killed_mid_write_leaves_the_old_state_usable(log):
    log.append("access.log", 10)
    assert run(log) == (10, 10)
    state = log.dir / "state"
    # Writing takes most of each loop, so a kill nearly always lands mid-write; try a few
    # times so the test is about that case, not about luck.
    caught = [_kill_while_writing(state) for _ in range(3)]
    assert any(caught)
    # The file is the old state or a complete new one, never a torn one.
    loaded = load_state(state)
    assert loaded.runs in (1, 99)
    for leftover in state.parent.glob(".state.*"):
        leftover.unlink()
    if loaded.runs == 1:  # the old state still resumes where it was
        log.append("access.log", 2)
        assert run(log) == (2, 12)


def test_a_state_that_cannot_be_written_is_an_error_not_a_traceback(log):
    # a folder that does not exist (cron jobs run where nobody looks): after the whole read
    log.append("access.log", 3)
    with pytest.raises(StateError, match="cannot write state .*/missing/state: No such file"):
        run_incremental([str(log.dir / "access.log")], log.dir / "missing" / "state", Settings())
    assert list(log.dir.glob("**/.state.*")) == []  # nothing left behind

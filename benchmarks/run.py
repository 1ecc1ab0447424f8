"""The logtrap benchmark: lines/second, MB/second and peak memory, beside the bare cost of
reading the file.

    python benchmarks/run.py                      # 1M and 10M lines, plain and gzip
    python benchmarks/run.py --lines 1000000      # one size
    python benchmarks/run.py --lines 200000 --no-gzip --repeat 1

For each size and compression it generates a realistic combined log once (benchmarks/make_log.py,
kept in benchmarks/data/), then measures, each in a fresh process so peak memory is its own,
three times in turns by default (`--repeat`), and shows each stage's median run:

- `bare read`: reading the file and counting lines (gzip decompressed as a stream) — the floor;
- `read_logs`: logtrap's streaming reader, every batch parsed into typed frames;
- `analyze`: the whole `logtrap analyze FILE --json FILE` run, as an admin would start it;
- `goaccess`: GoAccess on the same file, when it is installed, for scale;
- on plain logs, the time `analyze()` spends in each per-batch stage (classification,
  patterns, tally), summed, and in its once-per-run stages (the tally's last merge, the
  claims' check, the detectors), and the rules `logtrap analyze` makes after it, each as a
  share of `analyze()`.

Peak memory is the process's maximum resident set size (wait4's ru_maxrss); CPU seconds are
its user and system time, all its threads together (on 2 cores, at most twice the seconds).
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
DATA = HERE / "data"

BARE = """
import gzip, sys
path = sys.argv[1]
opener = gzip.open if path.endswith(".gz") else open
n = 0
with opener(path, "rb") as f:
    while chunk := f.read(1 << 24):
        n += chunk.count(b"\\n")
print(n)
"""

READ = """
import sys
from logtrap.logs import scan_logs
stream = scan_logs([sys.argv[1]])
n = sum(batch.height for batch in stream)
print(n, stream.stats.rejected)
"""

# The whole analysis in one process, with the time spent in each per-batch stage summed. The
# parse runs a batch ahead in a thread meanwhile, so a stage's time includes waiting for the
# cores it shares with the parse: an upper bound on what the stage adds.
STAGES = """
import sys, time
from logtrap import analysis
from logtrap.traffic import Tally
spent = {}
def timed(name, fn):
    def wrapper(*args, **kwargs):
        start = time.perf_counter()
        try:
            return fn(*args, **kwargs)
        finally:
            spent[name] = spent.get(name, 0.0) + time.perf_counter() - start
    return wrapper
from logtrap import bots
bots._classified = timed("  of which classifying new agents", bots._classified)
analysis.add_bots = timed("bots (add_bots: classify + join back)", analysis.add_bots)
analysis.add_patterns_keyed = timed("patterns (add_patterns_keyed)", analysis.add_patterns_keyed)
Tally.add = timed("tally (Tally.add)", Tally.add)
# ...and once per run, after the last batch
Tally.finish = timed("once: the tally's last merge (Tally.finish)", Tally.finish)
analysis.verify_claims = timed("once: verifying search engines' claims", analysis.verify_claims)
analysis.run_detectors = timed("once: the detectors", analysis.run_detectors)
from logtrap import rules
start = time.perf_counter()
result = analysis.analyze(sys.argv[1])
total = time.perf_counter() - start
start = time.perf_counter()
rules.suggest(result.findings, result.traffic, result.settings)
spent["after analyze(): the rules (suggest, as `logtrap analyze` makes them)"] = time.perf_counter() - start
order = lambda item: (item[0].startswith("after"), item[0].startswith("once"), item[0].startswith(" "))
for name, seconds in sorted(spent.items(), key=order):
    share = f"{100 * seconds / total:.0f}% of analyze() ({total:.2f} s)"
    print(f"| {name} | {seconds:.2f} s | {share} |")
"""


def _measure(
    argv: list[str], ok: tuple[int, ...] = (0,), *, env: dict[str, str] | None = None,
    cwd: Path | None = None,
) -> tuple[float, float, float, str]:
    """Run argv in a child (with `env` and in `cwd` where given); return (seconds, CPU seconds:
    user and system, of all its threads, peak RSS in MB, stdout)."""
    start = time.perf_counter()
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, cwd=cwd)
    out, err = proc.stdout.read(), proc.stderr.read()
    _, status, usage = os.wait4(proc.pid, 0)
    seconds = time.perf_counter() - start
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode not in ok:
        where = f" in {cwd}" if cwd is not None else ""
        raise SystemExit(f"{' '.join(argv)} failed ({proc.returncode}){where}:\n{err.decode()[-2000:]}")
    cpu = usage.ru_utime + usage.ru_stime
    return seconds, cpu, usage.ru_maxrss / 1024, out.decode().strip()


# --quiet exits 3 when it finds traps, which the generated log has: that is success here
ANALYZED = (0, 3)


def analyze_argv(log: Path, report: Path) -> list[str]:
    """The whole run an admin would start: `logtrap analyze LOG --json REPORT --quiet`."""
    return [sys.executable, "-m", "logtrap", "analyze", str(log), "--json", str(report), "--quiet"]


def _log(lines: int, gz: bool) -> Path:
    DATA.mkdir(exist_ok=True)
    path = DATA / f"access_{lines}.log{'.gz' if gz else ''}"
    if not path.exists():
        print(f"generating {path.name} ...", file=sys.stderr, flush=True)
        cmd = [sys.executable, str(HERE / "make_log.py"), str(lines), str(path)]
        subprocess.run(cmd + (["--gzip"] if gz else []), check=True)
    return path


def _row(name: str, lines: int, size_mb: float, seconds: float, cpu: float, peak: float) -> str:
    return (
        f"| {name:<9} | {lines:>11,} | {seconds:>7.2f} | {cpu:>7.2f} | {lines / seconds / 1e6:>9.2f} "
        f"| {size_mb / seconds:>7.1f} | {peak:>8.0f} |"
    )


def _median(runs: list[tuple[float, float, float, str]]) -> tuple[float, float, float]:
    """(seconds, CPU seconds) of the run of median seconds (the lower of the two middle ones
    for an even count), and the highest peak of all the runs."""
    middle = sorted(runs, key=lambda run: run[0])[(len(runs) - 1) // 2]
    return middle[0], middle[1], max(run[2] for run in runs)


def bench(lines: int, gz: bool, goaccess_lines: int, repeat: int) -> list[str]:
    path = _log(lines, gz)
    rows = []
    report = DATA / "report.json"
    analyze = analyze_argv(path, report)
    # In turns (bare, read_logs, analyze; again), so a slow spell of the machine falls on
    # every stage alike rather than on one.
    bare_runs, read_runs, all_runs = [], [], []
    for _ in range(repeat):
        bare_runs.append(_measure([sys.executable, "-c", BARE, str(path)]))
        read_runs.append(_measure([sys.executable, "-c", READ, str(path)]))
        all_runs.append(_measure(analyze, ok=ANALYZED))
    counted = int(bare_runs[0][3])
    for run in read_runs:
        parsed, rejected = (int(x) for x in run[3].split())
        if parsed + rejected != counted:
            raise SystemExit(f"read_logs saw {parsed}+{rejected} lines, the file has {counted}")
    # MB/s are of the uncompressed log, so plain and gzip compare on the same work.
    size_mb = _uncompressed_size(path) / 1e6
    (t_bare, c_bare, m_bare), (t_read, c_read, m_read), (t_all, c_all, m_all) = (
        _median(runs) for runs in (bare_runs, read_runs, all_runs)
    )
    rows.append(_row("bare read", counted, size_mb, t_bare, c_bare, m_bare))
    rows.append(_row("read_logs", counted, size_mb, t_read, c_read, m_read))
    rows.append(_row("analyze", counted, size_mb, t_all, c_all, m_all))
    goaccess = shutil.which("goaccess")
    # GoAccess reads 27-100k lines/s here, by the machine, and cannot read .gz itself: run it
    # on plain files up to --goaccess-lines (10M lines would take it two to six minutes).
    if goaccess and not gz and counted <= goaccess_lines:
        t_ga, c_ga, m_ga, _ = _measure(
            [goaccess, str(path), "--log-format=COMBINED", "-o", str(DATA / "goaccess.json")]
        )
        rows.append(_row("goaccess", counted, size_mb, t_ga, c_ga, m_ga))
        rows.append(f"| logtrap analyze is {t_ga / t_all:.1f}x faster than GoAccess ||||||")
    rows.append(f"| analyze / read_logs = {t_all / t_read:.2f}x (CPU: {c_all / c_read:.2f}x), "
                f"analyze / bare = {t_all / t_bare:.2f}x ||||||")
    if repeat > 1:
        rows.append(f"| medians of {repeat} runs in turns (peak: the highest); analyze / read_logs "
                    "by turn: " + ", ".join(f"{a[0] / r[0]:.2f}x" for r, a in zip(read_runs, all_runs))
                    + " ||||||")
    if not gz:
        *_, out = _measure([sys.executable, "-c", STAGES, str(path)])
        rows += ["", "| stage of analyze() | time in it | share |", "|---|---:|---|", out]
    return rows


def _uncompressed_size(path: Path) -> int:
    if path.suffix != ".gz":
        return path.stat().st_size
    import gzip

    total = 0
    with gzip.open(path, "rb") as f:
        while chunk := f.read(1 << 24):
            total += len(chunk)
    return total


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--lines", type=int, nargs="*", default=[1_000_000, 10_000_000])
    parser.add_argument("--no-gzip", action="store_true", help="plain files only")
    parser.add_argument("--goaccess-lines", type=int, default=1_000_000,
                        help="run GoAccess (when installed) on plain logs up to this size")
    parser.add_argument("--repeat", type=int, default=3,
                        help="runs of each stage, in turns; the table shows the median (this "
                             "shared machine's runs move by 10-25%%)")
    args = parser.parse_args()
    if args.repeat < 1:
        parser.error("--repeat must be at least 1")
    header = [
        "| stage     |       lines | seconds |   CPU s | M lines/s |    MB/s |  peak MB |",
        "|-----------|------------:|--------:|--------:|----------:|--------:|---------:|",
    ]
    for gz in [False] if args.no_gzip else [False, True]:
        for lines in args.lines:
            print(f"\n### {lines:,} lines, {'gzip' if gz else 'plain'}\n")
            print("\n".join(header + bench(lines, gz, args.goaccess_lines, args.repeat)), flush=True)


if __name__ == "__main__":
    main()

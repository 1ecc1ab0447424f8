"""Is a change quicker? The whole `logtrap analyze` of a generated log, run by two versions of
the code in turns, their times compared turn by turn.

    python benchmarks/ab.py HEAD                    # the working tree against HEAD
    python benchmarks/ab.py HEAD~3 HEAD --turns 30  # two commits
    python benchmarks/ab.py HEAD HEAD               # the noise: a version against itself

This shared machine's speed moves by 10-25% within minutes, so the medians of three runs in
`run.py` cannot tell a 5% change from the noise (the same code measured 5.9 and 7.8 s in one
hour). Here each turn runs both versions back to back, in alternating order, and the ratio
of their times is taken; the median of the ratios over many turns is steadier (16 turns of
4M lines, the same code against itself: x0.98, the turns' quartiles 0.91 and 1.11).

Each version is its source (`git archive` of a commit; the working tree's `logtrap/` as it
is) with its C extensions built beside it, in a temporary directory, run with
`PYTHONPATH` set to it. The JSON reports of the two are compared too: a change made for
speed should not change what the run reports.
"""

from __future__ import annotations

import argparse
import io
import os
import shutil
import statistics
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

from run import ANALYZED, _log, _measure, analyze_argv

ROOT = Path(__file__).resolve().parent.parent

BUILD = """
import tomllib
from setuptools import Extension
from setuptools.command.build_ext import build_ext
from setuptools.dist import Distribution
conf = tomllib.load(open("pyproject.toml", "rb"))["tool"]["setuptools"].get("ext-modules", [])
exts = [Extension(e["name"], e["sources"], extra_compile_args=e.get("extra-compile-args", []))
        for e in conf]
cmd = build_ext(Distribution({"ext_modules": exts}))
cmd.inplace, cmd.verbose = True, 0
cmd.ensure_finalized()
cmd.run()
"""


def _source(rev: str | None, into: Path) -> str:
    """The package and pyproject.toml of `rev` (None: the working tree) copied into `into`,
    with its extensions built; its name for the table."""
    into.mkdir(parents=True)
    if rev is None:
        shutil.copytree(ROOT / "logtrap", into / "logtrap",
                        ignore=shutil.ignore_patterns("__pycache__", "*.so"))
        shutil.copy(ROOT / "pyproject.toml", into)
        name = "working tree"
    else:
        found = subprocess.run(["git", "rev-parse", "--short", "--verify", f"{rev}^{{commit}}"],
                               cwd=ROOT, capture_output=True, text=True)
        if found.returncode:
            raise SystemExit(f"{rev!r} is not a commit of {ROOT}: {found.stderr.strip()}")
        sha = found.stdout.strip()
        archive = subprocess.run(["git", "archive", sha, "logtrap", "pyproject.toml"], cwd=ROOT,
                                 check=True, capture_output=True).stdout
        with tarfile.open(fileobj=io.BytesIO(archive)) as tar:  # our own files (Python
            # before 3.11.4 has no extraction filters)
            tar.extractall(into, **({"filter": "data"} if hasattr(tarfile, "data_filter") else {}))
        name = f"{rev} ({sha})" if rev != sha else sha
    built = subprocess.run([sys.executable, "-c", BUILD], cwd=into, capture_output=True, text=True)
    if built.returncode:
        raise SystemExit(f"{name}: its C extensions did not build:\n{built.stderr[-2000:]}")
    return name


def _run(code: Path, log: Path, report: Path) -> tuple[float, float, float]:
    """(seconds, CPU seconds of all its threads, peak RSS in MB) of one `logtrap analyze`, as
    `run.py` runs it, by the code in `code`."""
    env = dict(os.environ, PYTHONPATH=str(code))
    seconds, cpu, peak, _ = _measure(analyze_argv(log, report), ANALYZED, env=env, cwd=code)
    return seconds, cpu, peak


def _spread(ratios: list[float]) -> str:
    q1, _, q3 = statistics.quantiles(ratios, n=4)
    return f"x{statistics.median(ratios):.3f} (quartiles {q1:.3f}, {q3:.3f})"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("base", help="the commit to compare against (any git revision)")
    parser.add_argument("new", nargs="?", help="the commit to compare (default: the working tree)")
    parser.add_argument("--lines", type=int, default=4_000_000,
                        help="lines of the generated log (default: 4,000,000, ~4 s a run)")
    parser.add_argument("--turns", type=int, default=16,
                        help="turns, each running both versions once (default: 16)")
    args = parser.parse_args()
    if args.turns < 2:
        parser.error("--turns must be at least 2")
    if args.lines < 1:
        parser.error("--lines must be at least 1")
    with tempfile.TemporaryDirectory(prefix="logtrap-ab-") as tmp:
        codes = [Path(tmp) / "base", Path(tmp) / "new"]
        # the versions first: a revision that is none fails before a log is generated
        names = [_source(rev, code) for rev, code in zip((args.base, args.new), codes)]
        log = _log(args.lines, gz=False)
        reports = [code.with_suffix(".json") for code in codes]
        runs: list[list[tuple[float, float, float]]] = [[], []]
        for turn in range(args.turns):
            for i in (0, 1) if turn % 2 == 0 else (1, 0):
                runs[i].append(_run(codes[i], log, reports[i]))
            print(f"turn {turn + 1}/{args.turns}: {names[0]} {runs[0][-1][0]:.2f} s, "
                  f"{names[1]} {runs[1][-1][0]:.2f} s", file=sys.stderr, flush=True)
        same = reports[0].read_bytes() == reports[1].read_bytes()
    print(f"\n`logtrap analyze` of {args.lines:,} lines, {args.turns} turns\n")
    print("| version | median s | median CPU s | peak MB |")
    print("|---|---:|---:|---:|")
    for name, mine in zip(names, runs):
        print(f"| {name} | {statistics.median(r[0] for r in mine):.2f} "
              f"| {statistics.median(r[1] for r in mine):.2f} | {max(r[2] for r in mine):.0f} |")
    wall = [new[0] / base[0] for base, new in zip(*runs)]
    cpu = [new[1] / base[1] for base, new in zip(*runs)]
    print(f"\n{names[1]} / {names[0]}, turn by turn: seconds {_spread(wall)}, CPU {_spread(cpu)}")
    print(f"JSON reports {'identical' if same else 'DIFFERENT'}")


if __name__ == "__main__":
    main()

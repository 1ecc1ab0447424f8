"""What cron runs remember between runs: where each log file was read up to, the aggregates,
and the findings already reported.

A state file is a zip archive holding `meta.json` (schema `logtrap/state-v1`: the files read
and how far, the findings already reported) and one Parquet file per aggregate table. It is
written to a temporary file beside the target and renamed over it, so a run killed mid-write
leaves the previous state intact.

Log files are recognised by a fingerprint of their first line, not by name or inode, because
logrotate changes both: `access.log` renamed to `access.log.1` keeps its content and so its
fingerprint; compressed to `access.log.2.gz` it keeps it too (fingerprints are of the
decompressed stream); with `copytruncate` the copy keeps the old fingerprint and the
truncated original starts a new one. A file is resumed where it was left whatever it is now
called; a file never seen is read from its start; so no line is read twice or missed.
"""

from __future__ import annotations

import io
import json
import os
import tempfile
import zipfile
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from datetime import datetime, timezone
from pathlib import Path

import polars as pl

from logtrap import schema as s
from logtrap.analysis import Analysis, Progress, analyze
from logtrap.errors import ConfigError, StateError
from logtrap.logs import FileRead, Source, expand_sources, file_fingerprint
from logtrap.patterns import rules_id
from logtrap.settings import Settings
from logtrap.traffic import Tally

STATE_SCHEMA = "logtrap/state-v1"
_MAX_MARKS = 200  # files remembered; older marks are of files long rotated away (judgement)
_KNOWN = "known_findings"


@dataclass(frozen=True)
class FileMark:
    """How far one log file was read, and how to recognise it again."""

    path: str
    fingerprint: str | None
    offset: int  # bytes of the decompressed stream consumed
    line_no: int  # lines consumed (so line numbers in reports stay right)
    device: int = 0
    inode: int = 0


@dataclass
class State:
    """A cron run's memory. `tally` continues the aggregates; `known` the findings reported."""

    marks: list[FileMark] = field(default_factory=list)
    tally: dict[str, pl.DataFrame] = field(default_factory=dict)
    known: list[dict[str, str | None]] = field(default_factory=list)
    runs: int = 0
    created: str = ""
    pattern_rules: str = ""  # patterns.rules_id of the runs that made `tally` ("": not kept)
    # the --host filter of the runs that made `tally` ([]: every host; None: not kept)
    hosts: list[str] | None = None


def load_state(path: str | Path) -> State:
    """Read a state file; a missing file is a fresh state.

    >>> load_state("/nonexistent/logtrap.state").runs
    0
    """
    path = Path(path)
    if not path.exists():
        return State()
    try:
        with zipfile.ZipFile(path) as archive:
            meta = json.loads(archive.read("meta.json"))
            if meta.get("schema") != STATE_SCHEMA:
                raise StateError(
                    f"{path} is a state file of another kind ({meta.get('schema')!r}), "
                    f"not {STATE_SCHEMA}",
                    hint="give --state a file of its own; delete it to start over",
                )
            if meta.get("polars", pl.__version__) != pl.__version__:
                # Distinct URLs are remembered by Polars' hash, which may change between
                # releases: mixing hashes would count a URL twice without a word.
                raise StateError(
                    f"{path} was written with Polars {meta.get('polars')}, and this is Polars "
                    f"{pl.__version__}: its remembered URLs cannot be matched",
                    hint="delete it to start over (the next run reads the logs from the start)",
                )
            tables = {
                name[: -len(".parquet")]: pl.read_parquet(io.BytesIO(archive.read(name)))
                for name in archive.namelist()
                if name.endswith(".parquet")
            }
    except StateError:
        raise
    except (zipfile.BadZipFile, KeyError, ValueError, OSError, pl.exceptions.PolarsError) as exc:
        raise StateError(
            f"{path} is not a logtrap state file or is corrupt ({exc})",
            hint="delete it to start over (the next run reads the logs from the start)",
        ) from exc
    return State(
        marks=[FileMark(**m) for m in meta.get("files", [])],
        tally=tables,
        known=meta.get(_KNOWN, []),
        runs=meta.get("runs", 0),
        created=meta.get("created", ""),
        pattern_rules=meta.get("pattern_rules", ""),
        hosts=meta.get("hosts"),
    )


def save_state(path: str | Path, state: State) -> None:
    """Write the state atomically: a temporary file beside `path`, fsynced, then renamed."""
    path = Path(path)
    meta = {
        "schema": STATE_SCHEMA,
        "created": state.created,
        "updated": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "runs": state.runs,
        "polars": pl.__version__,
        "pattern_rules": state.pattern_rules,
        "hosts": state.hosts,
        "files": [asdict(m) for m in state.marks],
        _KNOWN: state.known,
    }
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent or ".")
    except OSError as exc:  # no such folder, no permission, a full disk
        raise StateError(f"cannot write state {path}: {exc.strerror or exc}") from None
    try:
        with os.fdopen(fd, "wb") as raw:
            with zipfile.ZipFile(raw, "w", compression=zipfile.ZIP_STORED) as archive:
                archive.writestr("meta.json", json.dumps(meta, indent=1))
                for name, frame in state.tally.items():
                    buf = io.BytesIO()
                    frame.write_parquet(buf, compression="zstd")
                    archive.writestr(f"{name}.parquet", buf.getvalue())
            raw.flush()
            os.fsync(raw.fileno())
        os.replace(tmp, path)
    except OSError as exc:  # a full disk, or the path became a folder: the old state is kept
        Path(tmp).unlink(missing_ok=True)
        raise StateError(f"cannot write state {path}: {exc.strerror or exc}") from None
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def plan_sources(paths: Sequence[str | Path], marks: Sequence[FileMark]) -> list[Source]:
    """Where to start in each file: after what an earlier run read of the same content."""
    by_print = {m.fingerprint: m for m in marks if m.fingerprint}
    sources = []
    for path in expand_sources(paths):
        if path == "-":
            raise ConfigError(
                "--state cannot follow standard input", hint="give the log files by path"
            )
        mark = by_print.pop(file_fingerprint(path), None)
        if mark is None:
            sources.append(Source(path, whole_lines=True))
        else:
            sources.append(
                Source(path, offset=mark.offset, line_no=mark.line_no, whole_lines=True)
            )
    return sources


def _marks(
    sources: Sequence[Source], files: Sequence[FileRead], earlier: Sequence[FileMark]
) -> list[FileMark]:
    start_line = {src.path: src.line_no for src in sources}
    now = [
        FileMark(
            path=f.path,
            fingerprint=f.fingerprint,
            offset=f.end_offset,
            line_no=start_line.get(f.path, 0) + f.lines,
            device=f.device or 0,
            inode=f.inode or 0,
        )
        for f in files
    ]
    seen = {m.fingerprint for m in now}
    # Keep marks of files not given this time but still on disk, so a later run that names
    # them again does not read them twice.
    kept = [m for m in earlier if m.fingerprint not in seen and Path(m.path).exists()]
    return (now + kept)[:_MAX_MARKS]


def _finding_keys(findings: pl.DataFrame) -> pl.DataFrame:
    return findings.select(s.KIND, s.HOST, s.PATTERN)


def run_incremental(
    paths: Sequence[str | Path],
    state_path: str | Path,
    settings: Settings | None = None,
    *,
    on_progress: Progress | None = None,
) -> tuple[Analysis, pl.DataFrame]:
    """Analyse only what was appended since the last run, continuing its aggregates.

    Returns the analysis (its `stats` count this run's lines; its patterns and findings
    cover everything remembered) and the findings not reported by an earlier run.
    """
    settings = settings or Settings()
    state = load_state(state_path)
    rules = rules_id(settings)
    if state.tally and state.pattern_rules != rules:
        # Its aggregates are keyed by URL pattern: continued under other rules, one URL's
        # requests would be split between its old pattern and its new one, without a word.
        raise StateError(
            f"{state_path} holds URL patterns made by other pattern rules (an earlier logtrap, "
            "or other tracking_params): its aggregates cannot be continued",
            hint="delete it to start over (the next run reads the logs from the start)",
        )
    hosts = sorted(settings.hosts)
    if state.tally and state.hosts is not None and state.hosts != hosts:
        # Continued, the report would show the hosts remembered beside (or instead of) the
        # ones asked for, and the state would mix them from then on.
        raise StateError(
            f"{state_path} holds the aggregates of {_hosts_text(state.hosts)}, and this run "
            f"asks for {_hosts_text(hosts)}",
            hint="give each --host its own --state file, or delete it to start over",
        )
    sources = plan_sources(paths, state.marks)
    tally = Tally.from_frames(state.tally, settings)
    analysis = analyze(sources, settings, tally=tally, on_progress=on_progress)

    known = pl.DataFrame(
        state.known, schema={s.KIND: pl.String, s.HOST: pl.String, s.PATTERN: pl.String}
    )
    keys = _finding_keys(analysis.findings)
    is_new = ~pl.struct(s.KIND, s.HOST, s.PATTERN).is_in(
        known.select(pl.struct(s.KIND, s.HOST, s.PATTERN)).to_series().implode()
    )
    new = analysis.findings.filter(is_new)

    files = analysis.stats.files if analysis.stats is not None else []
    save_state(
        state_path,
        State(
            marks=_marks(sources, files, state.marks),
            tally=tally.frames(),
            known=pl.concat([known, keys]).unique(maintain_order=True).to_dicts(),
            runs=state.runs + 1,
            created=state.created or datetime.now(timezone.utc).isoformat(timespec="seconds"),
            pattern_rules=rules,
            hosts=hosts,
        ),
    )
    return analysis, new


def _hosts_text(hosts: Sequence[str]) -> str:
    """`--host` as a state error names it.

    >>> _hosts_text([]), _hosts_text(["a.example", "b.example"])
    ('every host (no --host)', 'host a.example, b.example (--host)')
    """
    return f"host {', '.join(hosts)} (--host)" if hosts else "every host (no --host)"

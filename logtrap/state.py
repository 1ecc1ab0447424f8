"""What cron runs remember between runs: where each log file was read up to, the aggregates,
and the findings already seen and alerted on.

A state file is a zip archive holding `meta.json` (schema `logtrap/state-v1`: the files read
and how far, the findings seen and the ones alerted on) and one Parquet file per aggregate table. It is
written to a temporary file beside the target and renamed over it, so a run killed mid-write
leaves the previous state intact. Keys a newer logtrap adds to `meta.json` are ignored.

Which file to read from where, across logrotate, is `logtrap.resume`'s.
"""

from __future__ import annotations

import errno
import io
import json
import os
import re
import tempfile
import time
import zipfile
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import MISSING, asdict, dataclass, field, fields, replace
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import polars as pl

from logtrap import schema as s
from logtrap.analysis import Analysis, Progress, analyze
from logtrap.detectors import BOT_KINDS
from logtrap.errors import StateError
from logtrap.logs import Source, log_set
from logtrap.patterns import rules_id
from logtrap.resume import FileMark, Left, new_marks, plan_sources, rotated_away
from logtrap.settings import Settings
from logtrap.traffic import ADDRESS_SAMPLE, KEYS, OLD_ADDRESS_SAMPLE, Tally

STATE_SCHEMA = "logtrap/state-v1"
_KNOWN = "known_findings"
_REPORTED = "reported_severity"  # the severity a finding was last reported at (a temporary column)
# The highest severity a finding was alerted at (at or above the --fail-on of its run); None:
# seen, never alerted. Kept apart from the severity seen, so that a finding seen under
# `--fail-on critical` still alerts once the threshold is lowered to warning.
ALERTED = "alerted"


_MARK_TYPES: dict[str, Any] = {
    "path": str, "fingerprint": (str, type(None)), "offset": int, "line_no": int,
    "device": int, "inode": int, "size": int,
}


@dataclass
class State:
    """A cron run's memory. `tally` continues the aggregates; `known` the findings seen
    (kind, host, pattern or, for a finding about a bot, its name, see `_identity`; the highest
    severity seen, and the highest it was alerted at, `ALERTED`, None if never)."""

    marks: list[FileMark] = field(default_factory=list)
    tally: dict[str, pl.DataFrame] = field(default_factory=dict)
    known: list[dict[str, str | None]] = field(default_factory=list)
    runs: int = 0
    created: str = ""
    pattern_rules: str = ""  # patterns.rules_id of the runs that made `tally` ("": not kept)
    # the --host filter of the runs that made `tally` ([]: every host; None: not kept)
    hosts: list[str] | None = None
    # addresses kept per host+bot in `tally`'s bot_clients (traffic.ADDRESS_SAMPLE)
    address_sample: int = ADDRESS_SAMPLE


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
            if not isinstance(meta, dict):
                raise ValueError("meta.json holds no JSON object")
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
            if tables and meta.get("keys", 1) != KEYS:
                # its URLs and patterns are kept by keys made another way (`traffic.KEYS`;
                # none written: the first way): matched against this run's, every URL of
                # the logs read before would count as new
                raise StateError(
                    f"{path} was written by an earlier logtrap, which kept URLs by other keys: "
                    "its remembered URLs cannot be matched",
                    hint="delete it to start over (the next run reads the logs from the start)",
                )
            listed = _field(meta, "tables", list, "meta.json", [])  # none before it was kept
            if missing := sorted(set(map(str, listed)) - set(tables)):
                raise ValueError(f"its {missing[0]}.parquet is missing")
            return _state_of(meta, tables)
    except StateError:
        raise
    except (zipfile.BadZipFile, KeyError, ValueError, OSError, pl.exceptions.PolarsError) as exc:
        # not "delete it": the path may well be a log or a report given by mistake
        raise StateError(
            f"{path} is not a logtrap state file or is corrupt ({exc})",
            hint="if it is a state logtrap wrote, delete it to start over (the next run reads "
            "the logs from the start); if not, give --state a path of its own",
        ) from exc


def _state_of(meta: dict[str, Any], tables: dict[str, pl.DataFrame]) -> State:
    """The State `meta.json` describes; ValueError naming the first entry that is not right."""
    files = _field(meta, "files", list, "meta.json", [])
    known = _field(meta, _KNOWN, list, "meta.json", [])
    hosts = _field(meta, "hosts", (list, type(None)), "meta.json", None)
    if hosts is not None and not all(isinstance(h, str) for h in hosts):
        raise ValueError(f"meta.json['hosts'] is {hosts!r}")
    return State(
        marks=[_mark_of(m, f"meta.json files[{i}]") for i, m in enumerate(files)],
        tally=tables,
        known=[_known_of(k, f"meta.json {_KNOWN}[{i}]") for i, k in enumerate(known)],
        runs=_field(meta, "runs", int, "meta.json", 0),
        created=_field(meta, "created", str, "meta.json", ""),
        pattern_rules=_field(meta, "pattern_rules", str, "meta.json", ""),
        hosts=hosts,
        # a state saved before the size was kept kept 256 addresses, if it kept any
        address_sample=_field(meta, "address_sample", int, "meta.json",
                              OLD_ADDRESS_SAMPLE if "bot_clients" in tables else ADDRESS_SAMPLE),
    )


def _field(entry: object, key: str, kind: Any, where: str, default: Any = MISSING) -> Any:
    """`entry[key]`, of type `kind`, or `default` when it is not there (MISSING: required)."""
    if not isinstance(entry, dict):
        raise ValueError(f"{where} is not an object")
    if key not in entry:
        if default is MISSING:
            raise ValueError(f"{where} has no {key!r}")
        return default
    if not isinstance(entry[key], kind):
        raise ValueError(f"{where}[{key!r}] is {entry[key]!r}")
    return entry[key]


def _mark_of(entry: object, where: str) -> FileMark:
    """A FileMark from its JSON; keys a newer logtrap added are ignored."""
    return FileMark(**{
        f.name: _field(entry, f.name, _MARK_TYPES[f.name], where, f.default)
        for f in fields(FileMark)
    })


def _known_of(entry: object, where: str) -> dict[str, str | None]:
    """A finding seen from its JSON; a state from before severities were kept gives none,
    taken as the lowest (a finding seen then is new again once, if above it)."""
    known = {s.KIND: _field(entry, s.KIND, str, where)}
    for key in (s.HOST, s.PATTERN):  # None where a finding has no host or pattern
        known[key] = _field(entry, key, (str, type(None)), where)
    # None for findings about URLs; a state from before bots were named has none either, so
    # its findings about bots are reported once more, then known by name
    known[s.BOT_NAME] = _field(entry, s.BOT_NAME, (str, type(None)), where, None)
    known[s.SEVERITY] = _field(entry, s.SEVERITY, str, where, s.SEVERITIES[0])
    if known[s.SEVERITY] not in s.SEVERITIES:
        raise ValueError(f"{where}[{s.SEVERITY!r}] is {known[s.SEVERITY]!r}")
    # A state from before alerts were kept took every finding seen as alerted, whatever the
    # --fail-on (one seen under `critical` stayed silent under `warning`): none is taken as
    # alerted, so each at or above the threshold alerts once more rather than never.
    known[ALERTED] = _field(entry, ALERTED, (str, type(None)), where, None)
    if known[ALERTED] not in (None, *s.SEVERITIES):
        raise ValueError(f"{where}[{ALERTED!r}] is {known[ALERTED]!r}")
    # a state from before subjects were kept: those of the next run are all news, once
    subjects = _field(entry, SUBJECTS, (list, type(None)), where, None)
    if subjects is not None and not all(isinstance(x, str) for x in subjects):
        raise ValueError(f"{where}[{SUBJECTS!r}] is {subjects!r}")
    known[SUBJECTS] = subjects
    return known


# A state is written as a new file beside the old, then renamed over it: the folder must be
# writable, not only the file (and an immutable file, chattr +i, cannot be replaced).
_WRITE_HINT = ("the user running logtrap needs to write the state file's folder (a folder of its "
               "own, such as /var/lib/logtrap/, made with mkdir -p); nothing was remembered, so "
               "the next run reads these lines again")
_FULL_HINT = ("the disk is full (or the user's quota): free some space; nothing was remembered, "
              "so the next run reads these lines again")


def _write_hint(exc: OSError) -> str:
    """What to do about a state that could not be written: a full disk is no permission."""
    return _FULL_HINT if exc.errno in (errno.ENOSPC, errno.EDQUOT) else _WRITE_HINT


def save_state(path: str | Path, state: State) -> None:
    """Write the state atomically: a temporary file beside `path`, fsynced, then renamed."""
    path = Path(path)
    meta = {
        "schema": STATE_SCHEMA,
        "created": state.created,
        "updated": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "runs": state.runs,
        "polars": pl.__version__,
        "keys": KEYS,
        "pattern_rules": state.pattern_rules,
        "hosts": state.hosts,
        "address_sample": state.address_sample,
        "files": [asdict(m) for m in state.marks],
        _KNOWN: state.known,
        # the archive's tables: one gone (a damaged copy) is refused, not taken as empty
        "tables": sorted(state.tally),
    }
    # built in memory, then written: a zip interrupted on the file (Ctrl-C) printed
    # "Exception ignored in ZipFile.__del__" as Python tidied it up after the file closed
    packed = io.BytesIO()
    with zipfile.ZipFile(packed, "w", compression=zipfile.ZIP_STORED) as archive:
        archive.writestr("meta.json", json.dumps(meta, indent=1))
        for name, frame in state.tally.items():
            buf = io.BytesIO()
            frame.write_parquet(buf, compression="zstd")
            archive.writestr(f"{name}.parquet", buf.getvalue())
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent or ".")
    except OSError as exc:  # no such folder, no permission, a full disk
        raise StateError(f"cannot write state {path}: {exc.strerror or exc}",
                         hint=_write_hint(exc)) from None
    try:
        with os.fdopen(fd, "wb") as raw:
            raw.write(packed.getbuffer())
            raw.flush()
            os.fsync(raw.fileno())
        os.replace(tmp, path)
    except OSError as exc:  # a full disk, or the path became a folder: the old state is kept
        Path(tmp).unlink(missing_ok=True)
        raise StateError(f"cannot write state {path}: {exc.strerror or exc}",
                         hint=_write_hint(exc)) from None
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


_IDENTITY = [s.KIND, s.HOST, s.PATTERN, s.BOT_NAME]
# What a finding's server rule is scoped by, seen so far: a fake bot's addresses, an
# aggressive bot's routes. One the rule deployed does not hold yet is news (a fake Googlebot
# back from a new address gets past the rule made for the old ones).
SUBJECTS = "subjects"
_SUBJECT_OF = {"fake_bot": "$.addresses", "aggressive_bot": "$.routes"}


def _identity(findings: pl.DataFrame) -> pl.DataFrame:
    """What makes a finding the same one run after run, and its severity: its kind, host and
    pattern; for a finding about a bot (`detectors.BOT_KINDS`), the bot's name instead of the
    pattern. A fake bingbot is news after a fake Googlebot on the same host (neither has a
    pattern), and an aggressive bot is not news because its most fetched pattern changed."""
    about_bot = pl.col(s.KIND).is_in(BOT_KINDS)
    subjects = pl.lit(None, pl.List(pl.String))
    for kind, path in _SUBJECT_OF.items():
        listed = pl.col(s.EVIDENCE).str.json_path_match(path).str.json_decode(pl.List(pl.String))
        subjects = pl.when(pl.col(s.KIND) == kind).then(listed).otherwise(subjects)
    return findings.select(
        s.KIND,
        s.HOST,
        pl.when(~about_bot).then(pl.col(s.PATTERN)).alias(s.PATTERN),
        pl.when(about_bot).then(pl.col(s.EVIDENCE).str.json_path_match("$.bot_name"))
        .alias(s.BOT_NAME),
        s.SEVERITY,
        subjects.alias(SUBJECTS),
    )


_KNOWN_SCHEMA = {s.KIND: pl.String, s.HOST: pl.String, s.PATTERN: pl.String,
                 s.BOT_NAME: pl.String, s.SEVERITY: s.SEVERITY_DTYPE, ALERTED: s.SEVERITY_DTYPE,
                 SUBJECTS: pl.List(pl.String)}


def _merged(frames: Sequence[pl.DataFrame]) -> pl.DataFrame:
    """Findings remembered, one row per identity: the highest severity seen and alerted at,
    and every subject seen."""
    return (
        pl.concat(frames, how="diagonal_relaxed")
        .group_by(_IDENTITY, maintain_order=True)
        .agg(
            pl.col(s.SEVERITY).max(),
            pl.col(ALERTED).max(),
            pl.col(SUBJECTS).explode().drop_nulls().unique().sort(),
        )
        .with_columns(
            pl.when(pl.col(SUBJECTS).list.len() > 0).then(pl.col(SUBJECTS)).alias(SUBJECTS)
        )
    )


def _unreported(findings: pl.DataFrame, known: pl.DataFrame, column: str) -> pl.Series:
    """Per finding, whether `known[column]` (the severity seen, or alerted at) holds no
    severity for it as high as its own: never seen (alerted), or seen at a lower severity (a
    trap that grew from info to warning is news again); or whether it names a subject (an
    address, a route: `SUBJECTS`) no earlier run saw."""
    reported = known.select(*_IDENTITY, pl.col(column).alias(_REPORTED), pl.col(SUBJECTS).alias("_seen"))
    unseen = pl.col(SUBJECTS).list.set_difference(pl.col("_seen").fill_null([])).list.len() > 0
    return (
        _identity(findings)
        .join(reported, on=_IDENTITY, how="left", nulls_equal=True, maintain_order="left")
        .select(
            pl.col(_REPORTED).is_null()
            | (pl.col(s.SEVERITY).to_physical() > pl.col(_REPORTED).to_physical())
            | unseen.fill_null(False)
        )
        .to_series()
        .alias("new")
    )


def _at_or_above(findings: pl.DataFrame, severity: str) -> pl.Series:
    if severity not in s.SEVERITIES:
        raise StateError(f"unknown severity {severity!r}: one of {', '.join(s.SEVERITIES)}")
    return findings.get_column(s.SEVERITY).to_physical() >= s.SEVERITIES.index(severity)


@dataclass(frozen=True)
class Increment:
    """One cron run, read and not yet remembered: `save()` once its findings are reported
    (and alerted on: `save(alerted=fail_on)`)."""

    analysis: Analysis  # `stats` count this run's lines; patterns and findings everything kept
    new: pl.DataFrame  # the findings not seen before, or seen at a lower severity
    state: State  # what the next run continues from (its findings seen, not yet alerted)
    path: Path
    waiting: list[str] = field(default_factory=list)  # .gz files logrotate is still writing
    # the findings remembered before this run (`_KNOWN_SCHEMA`)
    known: pl.DataFrame = field(default_factory=lambda: pl.DataFrame(schema=_KNOWN_SCHEMA))
    # logs given by a name whose file was rotated since the last run to one not given
    left: list[Left] = field(default_factory=list)

    def is_new(self) -> pl.Series:
        """Per row of `analysis.findings`, whether it is in `new` (a boolean Series)."""
        return _unreported(self.analysis.findings, self.known, s.SEVERITY)

    def alerting(self, fail_on: str) -> pl.DataFrame:
        """The findings to alert on under `--fail-on fail_on`: at or above it, and never
        alerted at their severity or above (whether seen before or not: a finding seen while
        the threshold was higher alerts once it is lowered)."""
        findings = self.analysis.findings
        return findings.filter(
            _at_or_above(findings, fail_on) & _unreported(findings, self.known, ALERTED))

    def save(self, alerted: str | None = None) -> None:
        """Remember this run: its lines as read, its findings as seen and, with `alerted` (the
        --fail-on the run alerted under), those at or above it as alerted."""
        findings = self.analysis.findings
        if alerted is not None and findings.height:
            done = _identity(findings.filter(_at_or_above(findings, alerted))).select(
                *_IDENTITY, pl.col(s.SEVERITY).alias(ALERTED))
            # every finding of the run is in state.known already, as seen
            known = _merged([pl.DataFrame(self.state.known, schema=_KNOWN_SCHEMA), done])
            save_state(self.path, replace(self.state, known=known.to_dicts()))
            return
        save_state(self.path, self.state)


@contextmanager
def state_lock(
    state_path: str | Path | None, on_wait: Callable[[], None] | None = None
) -> Iterator[None]:
    """Hold the state's folder locked (flock) for a run, from its read to its save: two runs on
    one state at once (an hourly cron run and logrotate's prerotate run) both read the same new
    lines and both alerted on them; the second waits for the first now (`on_wait` called once
    when it must), then reads what came after. Nothing where it cannot lock (no state, not a
    Unix, no such folder: the run says what is wrong with it, a file system without locks)."""
    fd = None
    if state_path is not None:
        try:
            import fcntl

            fd = os.open(Path(state_path).parent, os.O_RDONLY)
            # polled: Ctrl-C ends the wait (a blocking flock is restarted after SIGINT once
            # Polars is imported, and waited on for the other run to finish)
            while True:
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    break
                except BlockingIOError:
                    if on_wait is not None:
                        on_wait()
                        on_wait = None
                    time.sleep(0.2)
        except (ImportError, OSError):
            if fd is not None:
                os.close(fd)
            fd = None
    try:
        yield
    finally:
        if fd is not None:
            os.close(fd)  # lets go of the lock


def read_incremental(
    paths: Sequence[str | Path],
    state_path: str | Path,
    settings: Settings | None = None,
    *,
    on_progress: Progress | None = None,
) -> Increment:
    """Analyse only what was appended since the last run, continuing its aggregates; the
    state is saved only by `Increment.save()`, so a run whose reports or alerts fail to go
    out is read again, and alerts again, next time (the CLI saves after writing them).

    >>> import tempfile
    >>> logs = Path(tempfile.mkdtemp())
    >>> _ = (logs / "access.log").write_text(
    ...     '10.0.0.1 - - [01/Jan/2026:10:00:00 +0000] "GET / HTTP/1.1" 200 5 "-" "curl/8"\\n')
    >>> run = read_incremental([logs / "access.log"], logs / "state")
    >>> run.analysis.stats.lines, (logs / "state").exists()
    (1, False)
    >>> run.save()
    >>> read_incremental([logs / "access.log"], logs / "state").analysis.stats.lines
    0
    >>> import shutil; shutil.rmtree(logs)
    """
    settings = Settings.of(settings)
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
    sources, resumed, waiting = plan_sources(paths, state.marks)
    left = rotated_away(paths, state.marks, resumed)
    _check_same_logs(state_path, state, sources, resumed)
    tally = Tally.from_frames(state.tally, settings, state.address_sample)
    analysis = analyze(sources, settings, tally=tally, on_progress=on_progress)

    known = pl.DataFrame(state.known, schema=_KNOWN_SCHEMA)
    # the highest severity each finding was seen at, and alerted at (`save` adds), and the
    # subjects seen
    seen = _merged([known, _identity(analysis.findings)])
    files = analysis.stats.files if analysis.stats is not None else []
    return Increment(
        analysis=analysis,
        new=analysis.findings.filter(_unreported(analysis.findings, known, s.SEVERITY)),
        state=State(
            marks=new_marks(sources, files, state.marks, resumed),
            tally=tally.frames(),
            known=seen.to_dicts(),
            runs=state.runs + 1,
            created=state.created or datetime.now(timezone.utc).isoformat(timespec="seconds"),
            pattern_rules=rules,
            hosts=hosts,
            address_sample=tally.address_sample,
        ),
        path=Path(state_path),
        waiting=waiting,
        known=known,
        left=left,
    )


def run_incremental(
    paths: Sequence[str | Path],
    state_path: str | Path,
    settings: Settings | None = None,
    *,
    on_progress: Progress | None = None,
) -> tuple[Analysis, pl.DataFrame]:
    """`read_incremental`, saved at once: the analysis (its `stats` count this run's lines;
    its patterns and findings cover everything remembered) and the findings not seen by an
    earlier run (or seen at a lower severity); none is remembered as alerted on. For a notebook; where the findings go out
    after this returns (reports, alerts), use `read_incremental` and save once they are out.
    """
    run = read_incremental(paths, state_path, settings, on_progress=on_progress)
    run.save()
    return run.analysis, run.new


def _check_same_logs(
    state_path: str | Path, state: State, sources: Sequence[Source], resumed: Mapping[str, FileMark]
) -> None:
    """A StateError when the state holds the counts of other logs: it read something, none of
    its files is among these, and none of its log families (`_family`) either (one state file
    given to two sites' cron jobs would add one site's counts to the other's)."""
    if resumed or not sources or not any(m.offset > 0 for m in state.marks):
        return
    before = {_family(m.path) for m in state.marks if m.offset > 0}
    now = {_family(src.path) for src in sources}
    if before & now:
        return

    def listed(paths: set[str]) -> str:
        names = sorted(paths)
        return ", ".join(names[:3]) + (f" and {len(names) - 3} more" if len(names) > 3 else "")

    raise StateError(
        f"{state_path} holds the counts of other logs ({listed({m.path for m in state.marks})}), "
        f"not of these ({listed({src.path for src in sources})}): continuing would add the two "
        "together",
        hint="give each site's logs a --state file of their own; the same logs under a new name "
        "or folder? give the old files too for one run (or delete the state to start over)",
    )


def _family(path: str) -> tuple[str, str]:
    """A log's family: the folder of its rotated set and the set's name with its numbers as
    `#`. A site's logs keep it across rotation (`access.log.2.gz`, `access.log-20261128`,
    `olddir` moving only the rotated files) and across daily names (`access.2026-11-28.log`),
    while two sites' differ in folder (`/srv/www/logs/access.log`, `/srv/shop/logs/access.log`)
    or name (`www.access.log`, `shop.access.log`).

    >>> _family("/var/log/access.2026-11-28.log") == _family("/var/log/access.2026-11-29.log")
    True
    >>> _family("/srv/www/access.log") == _family("/srv/shop/access.log.1")
    False
    """
    folder, name = os.path.split(os.path.abspath(log_set(path)))
    return folder, re.sub(r"[0-9]+", "#", name)


def _hosts_text(hosts: Sequence[str]) -> str:
    """`--host` as a state error names it.

    >>> _hosts_text([]), _hosts_text(["a.example", "b.example"])
    ('every host (no --host)', 'host a.example, b.example (--host)')
    """
    return f"host {', '.join(hosts)} (--host)" if hosts else "every host (no --host)"

"""Click commands only: flags in, one library call, exceptions -> messages.

Every command reads logs through the same options (`log_options`), turns them and the site
config into one `Settings` (config.py), calls the library, and prints with report/. A
`LogtrapError` becomes one `Error: ...` line and a `Hint: ...` line on stderr, exit 1.
"""

from __future__ import annotations

import contextlib
import difflib
import errno
import functools
import lzma
import os
import re
import signal
import stat
import sys
import tempfile
import textwrap
import zlib
from collections.abc import Callable, Iterator, Sequence
from datetime import timedelta
from pathlib import Path
from typing import Any

import click
import polars as pl
from rich.console import Console
from rich.progress import BarColumn, DownloadColumn, Progress, TextColumn, TimeElapsedColumn

from logtrap import config as cfg
from logtrap import report
from logtrap import schema as s
from logtrap.errors import ConfigError, FormatError, InputError, LogtrapError, OutputError, StateError
from logtrap.settings import Settings

EXIT_OK = 0
EXIT_ERROR = 1  # a LogtrapError: bad input, bad config, an output that may not be overwritten
EXIT_USAGE = 2  # Click's convention for a bad command line
EXIT_FINDINGS = 3  # findings at or above --fail-on

STDOUT = "-"
# `patterns --json` and `bots --json`: {"schema", "patterns"|"bots"}, each entry exactly as in
# a logtrap/report-v1 report's list of the same name.
PATTERNS_SCHEMA = "logtrap/patterns-v1"
SECTIONS_SCHEMA = "logtrap/sections-v1"
BOTS_SCHEMA = "logtrap/bots-v1"

def _exit_codes(ok: str, extra: str = "", error: str = "") -> str:
    """A command's --help epilog: what each exit code means for it."""
    return f"""\b
Exit codes:
  0  {ok}
  1  error (bad log file, config or output; one "Error:" line and a hint
     on stderr); also more than half the lines read rejected (after the
     output){error}
  2  usage error (unknown option, missing argument)
{extra}  130  interrupted (Ctrl-C); 143  terminated (kill); 141  the reader of
     stdout left (| head)
"""


EXIT_CODES = _exit_codes("no findings at or above --fail-on",
                         "  3  findings at or above --fail-on (analyze)\n")
_TABLE_EXIT_CODES = _exit_codes("the table was printed (or written)")
_SUGGEST_EXIT_CODES = _exit_codes(
    "the rules were printed, and written where asked",
    error="; or an existing rule file that differs, without --force (the\n"
          "     diff is printed)")


# -- errors ----------------------------------------------------------------------------------


class UserError(click.ClickException):
    """A LogtrapError as Click shows it: `Error: message`, then `Hint: hint`, exit 1."""

    exit_code = EXIT_ERROR

    def __init__(self, message: str, hint: str | None = None) -> None:
        super().__init__(message)
        self.hint = hint

    def show(self, file: Any = None) -> None:
        # Messages may quote a log line: never let it reach the terminal raw.
        click.echo(f"Error: {report.clean(self.message)}", err=True)
        if self.hint:
            click.echo(f"Hint: {report.clean(self.hint)}", err=True)


EXIT_INTERRUPTED = 130  # Ctrl-C: 128 + SIGINT, as a shell reports a program it interrupted
EXIT_TERMINATED = 143  # kill, a shutdown, `timeout`: 128 + SIGTERM


class _Terminated(BaseException):
    """SIGTERM, raised where the program is (`main`): it unwinds as Ctrl-C does, so a state
    being written leaves no temporary file behind (the default action left one for good)."""


def _terminate(signum: int, frame: object) -> None:
    raise _Terminated
EXIT_PIPE = 141  # the reader of stdout left (`| head`): 128 + SIGPIPE, as `cat` ends


# The hint for an error raised without one (the README promises "one Error: line and a hint"),
# by what caused it, then by its kind.
_DENIED = "this user may not {}: run as one who may (root, or a member of its group, often adm)"
_DAMAGED = ("the compressed file is damaged or cut short: leave it out of the logs given (if "
            "logrotate is still writing it, run again once it is done)")
_HINTS: dict[type[LogtrapError], str] = {
    InputError: "check the path, and that this user may read it (paths in logtrap.toml are "
                "relative to its folder)",
    FormatError: "pass the server's LogFormat / log_format string with --format",
    ConfigError: "`logtrap settings` lists every setting with its value here and its default",
    StateError: "delete the state file to start over (the next run reads the logs from the "
                "start)",
    OutputError: "give the output a path of its own, in a folder this user may write",
}


def _hint(exc: LogtrapError) -> str | None:
    """The error's own hint, else one from its cause (permission denied, a damaged file), else
    its kind's."""
    if exc.hint:
        return exc.hint
    cause = exc.__cause__ or exc.__context__
    if isinstance(cause, PermissionError) or (
            isinstance(cause, OSError) and cause.errno in (errno.EACCES, errno.EPERM)):
        return _DENIED.format("read it" if isinstance(exc, InputError) else "write there")
    if isinstance(cause, OSError) and cause.errno in (errno.ENOSPC, errno.EDQUOT):
        return "the disk is full (or the user's quota): free some space, or write elsewhere"
    if isinstance(exc, InputError) and _damaged(cause):
        return _DAMAGED  # EOFError, zlib/lzma errors, gzip's BadGzipFile: the content, not the path
    return next((hint for kind, hint in _HINTS.items() if isinstance(exc, kind)), None)


def _damaged(cause: BaseException | None) -> bool:
    """Whether a read failed on the content of a compressed file: the stream ended early, or
    gzip / bz2 / xz found it corrupt (an OSError without an errno: BadGzipFile, bz2's)."""
    from logtrap.logs import _inflate  # zlib, or isal's, whose error is no zlib.error

    if isinstance(cause, (EOFError, zlib.error, lzma.LZMAError, _inflate.error)):
        return True
    return isinstance(cause, OSError) and cause.errno is None


def _quiet_stdout() -> None:
    """Point stdout at /dev/null: the reader left, and Python's last flush at exit would
    otherwise print a BrokenPipeError."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())


class _Group(click.Group):
    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except LogtrapError as exc:
            raise UserError(str(exc), _hint(exc)) from exc
        except KeyboardInterrupt:
            # no "Aborted!" and exit 1 (Click's): nothing is saved (--state reads the same
            # lines again), and a script sees an interrupt, not an error
            raise click.exceptions.Exit(EXIT_INTERRUPTED) from None
        except _Terminated:
            raise click.exceptions.Exit(EXIT_TERMINATED) from None
        except BrokenPipeError:
            # `logtrap analyze ... | head`: the reader left; say nothing more, as `cat` would
            _quiet_stdout()
            raise click.exceptions.Exit(EXIT_PIPE) from None


# -- consoles and progress -------------------------------------------------------------------


class _Console(Console):
    def on_broken_pipe(self) -> None:
        # rich's own ends the program with exit 1, as if it had failed
        self.quiet = True
        raise BrokenPipeError(errno.EPIPE, os.strerror(errno.EPIPE))


def _console(stderr: bool = False) -> Console:
    """Rich console on stdout or stderr: colour on a terminal, plain text when piped."""
    stream = sys.stderr if stderr else sys.stdout
    tty = stream.isatty()
    width = None if tty else (int(os.environ.get("COLUMNS", "0") or 0) or 100)
    return _Console(file=stream, width=width, soft_wrap=False, highlight=False,
                    force_terminal=tty, color_system="auto" if tty else None)


class _Rate(TextColumn):
    """Lines per second so far."""

    def __init__(self) -> None:
        super().__init__("")

    def render(self, task: Any) -> Any:
        from rich.text import Text

        lines = task.fields.get("lines", 0)
        elapsed = task.elapsed or 0.0
        rate = lines / elapsed if elapsed > 0 else 0.0
        return Text(f"{lines:,} lines, {rate:,.0f} lines/s")


@contextlib.contextmanager
def _progress(quiet: bool) -> Iterator[Callable[[int, int | None, int], None] | None]:
    """A progress bar on stderr (bytes read of total, lines/s), only on a terminal."""
    if quiet or not sys.stderr.isatty():
        yield None
        return
    with Progress(TextColumn("Reading"), BarColumn(), DownloadColumn(), _Rate(),
                  TimeElapsedColumn(), console=_console(stderr=True), transient=True) as bar:
        task = bar.add_task("read", total=None, lines=0)

        def update(done: int, total: int | None, lines: int) -> None:
            bar.update(task, completed=done, total=total, lines=lines)

        yield update


# -- shared options --------------------------------------------------------------------------


def log_options(fn: Callable[..., Any]) -> Callable[..., Any]:
    """LOG... plus every option that says how to read and classify them."""
    options = [
        click.argument("logs", nargs=-1, metavar="LOG...", type=str),
        click.option("--format", "log_format", metavar="FORMAT",
                     help="Log format: auto (default), a preset (common, combined, "
                          "vhost_combined, nginx...), or an Apache LogFormat / nginx "
                          "log_format string."),
        click.option("--host", "hosts", multiple=True, metavar="HOST",
                     help="Only this virtual host (repeatable)."),
        click.option("--ip-ranges", multiple=True, metavar="FILE",
                     help="A search engine's published IP ranges (JSON, e.g. googlebot.json; "
                          "or BOT=FILE) to verify bots with (repeatable). Download it again "
                          "now and then: an address outside a file made over 30 days before "
                          "its requests is unverified, not fake (engines add ranges)."),
        click.option("--verify-dns/--no-verify-dns", default=None,
                     help="Verify search-engine bots by reverse and forward DNS (network)."),
        click.option("--sitemap", "sitemaps", multiple=True, metavar="FILE",
                     type=click.Path(exists=True, dir_okay=False, path_type=Path),
                     help="The site's sitemap.xml: its URLs are content, never blocked "
                          "(repeatable; for the rules of analyze and suggest)."),
        click.option("--robots", metavar="FILE",
                     type=click.Path(exists=True, dir_okay=False, path_type=Path),
                     help="The site's current robots.txt (suggestions are merged into it; "
                          "analyze and suggest)."),
        click.option("--session-param", "session_params", multiple=True, metavar="NAME",
                     help="A query parameter holding a session id on this site (repeatable)."),
        click.option("--tracking-param", "tracking_params", multiple=True, metavar="NAME",
                     help="A query parameter used for tracking on this site (repeatable): "
                          "its copies of pages are one pattern, advised rel=canonical, and "
                          "get no robots.txt line."),
        click.option("--set", "assignments", multiple=True, metavar="NAME=VALUE",
                     help="Any setting by name, e.g. --set url_sample_size=500 (repeatable; "
                          "logtrap settings lists them)."),
        click.option("--config", "config_path", metavar="FILE",
                     type=click.Path(dir_okay=False, path_type=Path),
                     help="Site config (TOML); default: ./logtrap.toml if it exists."),
        click.option("-q", "--quiet", is_flag=True,
                     help="No read summary or progress on stderr (analyze: and only the "
                          "findings at or above --fail-on on stdout, nothing if none). A "
                          "file with over 5% of its lines rejected is still named."),
    ]
    for option in reversed(options):
        fn = option(fn)
    return fn


_LOG_KEYS = ("logs", "log_format", "hosts", "ip_ranges", "verify_dns", "sitemaps", "robots",
             "session_params", "tracking_params", "assignments", "config_path")


def _split(params: dict[str, Any]) -> tuple[list[str], Settings, dict[str, Any]]:
    """Take the shared options out of a command's parameters: (logs, settings, the rest)."""
    shared = {key: params.pop(key) for key in _LOG_KEYS}
    logs = list(shared.pop("logs"))
    if not logs:
        raise click.UsageError(
            "no log files given. Name one or more: paths, globs or - for stdin, e.g.\n"
            "  logtrap analyze /var/log/nginx/access.log*"
        )
    config_file = cfg.find_config(shared.pop("config_path"))
    from_file = cfg.read_config(config_file) if config_file is not None else {}
    assignments = dict(cfg.parse_assignment(a) for a in shared.pop("assignments"))
    flags = {key: value for key, value in shared.items() if value not in ((), None)}
    overrides = {**cfg.coerce(assignments, where="--set"), **cfg.coerce(flags, where="option")}
    settings = cfg.build_settings(from_file, overrides)
    _check_site_files(settings)
    _refuse_error_logs(logs)
    return logs, settings, params


# The first line of a web server's error log: nginx's `2026/11/28 10:00:00 [error] 123#0: ...`,
# Apache's `[Sat Nov 28 10:00:00.123 2026] [core:error] [pid 1] ...` (2.4; 2.2 has no module
# and no fraction). `/var/log/nginx/*` takes error.log beside access.log.
_ERROR_LOG = re.compile(
    r"^(?:[0-9]{4}/[0-9]{2}/[0-9]{2} [0-9]{2}:[0-9]{2}:[0-9]{2} "
    r"\[(?:debug|info|notice|warn|error|crit|alert|emerg)\] [0-9]+#[0-9]+:"
    r"|\[[A-Z][a-z]{2} [A-Z][a-z]{2} +[0-9]{1,2} [0-9:.]+ [0-9]{4}\] "
    r"\[(?:[a-z_0-9]+:)?(?:debug|info|notice|warn|error|crit|alert|emerg|trace[1-8])\])"
)


def _refuse_error_logs(logs: Sequence[str]) -> None:
    """A FormatError naming an error log among the logs, before any is read: auto-detection
    would only say that no access-log format fits, after reading the files before it."""
    from logtrap.formats import detect_format
    from logtrap.logs import expand_sources, file_start

    try:
        paths = expand_sources(logs)
    except LogtrapError:
        return  # the reader says what is wrong with them
    for path in paths:
        target = Path(path)
        if path == "-" or not target.is_file():  # stdin or a pipe: read once, by the reader
            continue
        try:
            head = file_start(path, 4096).decode("utf-8", errors="replace")
        except LogtrapError:
            continue
        whole = head.splitlines()[:-1] if not head.endswith("\n") else head.splitlines()
        lines = [line for line in whole or head.splitlines() if line.strip()]
        # the first lines, not the first alone: Apache's error.log may start with a startup
        # message of no format (`AH00558: apache2: Could not reliably determine ...`)
        first = next((line for line in lines[:5] if _ERROR_LOG.match(line)), None)
        if first is not None and detect_format(lines[:5]) is None:
            raise FormatError(
                f"{path} is a web server's error log, not an access log: "
                f"{report.clean(first[:200])!r}",
                hint="give the access logs only, e.g. /var/log/nginx/access.log* or "
                "/var/log/apache2/access.log* (a glob of the whole folder takes the error logs "
                "too)",
            )


def _check_site_files(settings: Settings) -> None:
    """Read the sitemaps and robots.txt (from the flags or logtrap.toml) before the logs: a
    missing or wrong one would otherwise stop the run only after the (long) read, or never
    (analyze without --json does not use them). Both are small and parse in milliseconds."""
    from logtrap.rules import read_robots  # the check suggest() makes
    from logtrap.sitemaps import load_sitemap_urls

    load_sitemap_urls(settings.sitemaps)
    read_robots(settings)


def _with_logs(fn: Callable[..., Any]) -> Callable[..., Any]:
    """Turn the shared options into (logs, settings) before the command body runs."""

    @functools.wraps(fn)
    def wrapper(**params: Any) -> Any:
        logs, settings, rest = _split(params)
        return fn(logs, settings, **rest)

    return log_options(wrapper)


def _read_summary(analysis: Any, quiet: bool) -> None:
    if not quiet:
        report.print_lines(_console(stderr=True),
                           [*report.read_summary(analysis.stats, analysis.traffic),
                            *_stale_ranges(analysis), *_behind_a_proxy(analysis)])
        copies = analysis.stats.copies if analysis.stats is not None else {}
        for path, plain in copies.items():
            click.echo(f"{path}: not read, a compressed copy of {plain} (read instead)", err=True)
    for warning in _rejected_warnings(analysis.stats, quiet):  # with -q too: see below
        click.echo(warning, err=True)


# A file whose rejected lines pass both is said so even with -q: a bad line is never silently
# dropped (DESIGN.md), and a share this large is a format that stopped fitting (a LogFormat
# changed mid-file, two formats mixed), not the scanners' junk a healthy log rejects (TLS
# handshakes sent to port 80, binary probes: well under 1%). Judgement: 5%, and 10 lines, so a
# cron run reading a few dozen new lines is not told of two junk ones.
_REJECTED_WARN_SHARE = 0.05
_REJECTED_WARN_LINES = 10
# More than half the lines of a run rejected: its findings rest on the minority that parsed,
# so the run fails (exit 1) once its output is out, rather than pass for an all-clear.
_REJECTED_FAIL_SHARE = 0.5


def _rejected_warnings(stats: Any, quiet: bool) -> list[str]:
    """A `Warning:` line per file with a large share of its lines rejected."""
    if stats is None:
        return []
    out = []
    for fr in stats.files:
        tried = fr.parsed + fr.rejected
        if fr.rejected < _REJECTED_WARN_LINES or fr.rejected <= _REJECTED_WARN_SHARE * tried:
            continue
        first = stats.rejected_examples.filter(pl.col(s.SOURCE) == fr.path)
        where = f", the first at line {first[s.LINE_NO][0]:,}" if first.height else ""
        fmt = f" as not {fr.format_name}" if fr.format_name else ""
        see = " (run without -q to see the first ones)" if quiet else ""
        out.append(f"Warning: {report.clean(fr.path)}: {fr.rejected:,} of {tried:,} lines "
                   f"({fr.rejected / tried:.0%}) rejected{fmt}{where}{see}")
    return out


def _check_rejected(stats: Any) -> None:
    """An InputError (exit 1) when most lines read were rejected: raised once the output is
    out, so what was read is still shown and written."""
    if stats is None:
        return
    tried = stats.parsed + stats.rejected
    if stats.rejected < _REJECTED_WARN_LINES or stats.rejected <= _REJECTED_FAIL_SHARE * tried:
        return
    raise InputError(
        f"{stats.rejected:,} of {tried:,} lines ({stats.rejected / tried:.0%}) were rejected: "
        f"what was found rests on the {stats.parsed:,} that parsed",
        hint="the log format changed or is not the one detected: give the server's LogFormat "
        "/ log_format string with --format (the first rejected lines are shown without -q)",
    )


def _stale_ranges(analysis: Any) -> list[str]:
    """A line per range file date older than the logs by over `ip_ranges_max_age_days`: its
    bots' addresses outside the ranges were left unverified, not called fake (verify.py)."""
    settings, end = analysis.settings, analysis.traffic.end
    if not settings.ip_ranges or end is None:
        return []
    from logtrap.verify import load_ranges

    by_date: dict[Any, list[str]] = {}
    for bot, made in load_ranges(settings.ip_ranges).created.items():
        if end - made > timedelta(days=settings.ip_ranges_max_age_days):
            by_date.setdefault(made, []).append(bot)
    return [
        f"Note: the IP ranges of {', '.join(sorted(bots))} were published {made:%Y-%m-%d}, "
        f"{(end - made).days:,} days before the last request: an address outside them is "
        "unverified, not fake (engines add ranges; download the file again)"
        for made, bots in sorted(by_date.items())
    ]


def _behind_a_proxy(analysis: Any) -> list[str]:
    """A line where claims are to be verified and every one came from the site's own network
    (or a trusted proxy's range): a load balancer's or proxy's address, logged in place of the
    clients' (they are then all unverified, and a fake search engine passes)."""
    settings = analysis.settings
    if not (settings.ip_ranges or settings.verify_dns):
        return []
    from logtrap.formats import proxy_addresses, trusted_networks

    from logtrap.detectors import claimers
    from logtrap.verify import shared_addresses

    clients = analysis.traffic.claims.group_by(s.CLIENT).agg(pl.col(s.REQUESTS).sum())
    if clients.height == 0:
        return []
    trusted = trusted_networks(settings.trusted_proxies)
    top = clients.sort([s.REQUESTS, s.CLIENT], descending=[True, False])[s.CLIENT].head(3).to_list()
    more = f" and {clients.height - 3:,} more" if clients.height > 3 else ""
    log_it = ("Log the address it passes on (%{X-Forwarded-For}i, $http_x_forwarded_for) and give "
              "the format with --format")
    if proxy_addresses(clients[s.CLIENT], trusted).all():
        return [
            f"Note: every request claiming a search engine came from the site's own network"
            f"{' or a trusted proxy' if trusted else ''} "
            f"({', '.join(top)}{more}): a load balancer's or proxy's address, by which no claim "
            f"can be verified. {log_it}"
        ]
    # a CDN's edges: people's requests come from them too (`verify.shared_addresses`), and
    # every claim is left unverified, a fake Googlebot's too (a scenario review: no word)
    shared = shared_addresses(claimers(analysis.traffic))[s.CLIENT]
    if not clients[s.CLIENT].is_in(shared.implode()).all():
        return []
    files = analysis.stats.files if analysis.stats is not None else []
    if any("forwarded" in (f.format_spec or "").lower() for f in files):  # logged, not believed
        how = ("The format logs the address they pass on: give their ranges (the CDN publishes "
               "them) with --set trusted_proxies=RANGES to read the clients' from it")
    else:
        how = f"{log_it}, and their ranges with --set trusted_proxies=RANGES"
    return [
        f"Note: every request claiming a search engine came from addresses people's requests "
        f"come from too ({', '.join(top)}{more}): a CDN's or proxy's edges, by which no claim "
        f"can be verified. {how}"
    ]


# -- outputs ---------------------------------------------------------------------------------


# How every report logtrap writes begins (JSON, Markdown, HTML). A file at a report's path is
# replaced only if it begins so, or is empty: any other file is the user's (a mistyped
# `--json access.log` would otherwise replace the log it reads).
_REPORT_HEADS = ('"schema": "logtrap/', "# logtrap report", "<title>logtrap report</title>")
_PARQUET_KEY = "logtrap"  # key-value metadata naming the table in each Parquet file written
# Columns each table written by --parquet holds: a file written before the metadata key was
# (by an earlier logtrap) is recognised by them.
_PARQUET_TABLES = {
    "patterns": {"host", "pattern", "requests", "bot_requests", "unique_urls"},
    "findings": {"kind", "severity", "host", "pattern", "wasted_requests", "evidence"},
    "windows": {"host", "pattern", "window", "requests"},
    "bots": {"bot_name", "requests", "share"},
}


def _check_output(path: str | None, *, directory: bool = False, report: bool = True) -> None:
    """Fail before the (long) read if an output cannot be written where asked, or if a report
    (not a rule file: `_write_user_files` guards those) would replace a file logtrap did not
    write."""
    if path is None or path == STDOUT or _own_stream(path) is not None:
        return
    target = Path(path)
    if _special(target) and stat.S_ISBLK(target.stat().st_mode):
        raise OutputError(f"cannot write {path}: it is a block device (a disk)")
    parent = target.parent
    if not parent.is_dir():
        raise OutputError(f"cannot write {path}: folder {str(parent)!r} does not exist",
                          hint=f"create it first (mkdir -p {parent}), or give another path")
    if directory and target.exists() and not target.is_dir():
        raise OutputError(f"cannot write Parquet files into {path}: it is a file")
    if not directory and target.is_dir():
        raise OutputError(f"cannot write {path}: it is a folder")
    files = [target / f"{name}.parquet" for name in _PARQUET_TABLES] if directory else [target]
    for file in files if report else ():
        if file.exists() and not _is_report(file, table=file.stem if directory else None):
            raise OutputError(
                f"{file} exists and is not a report logtrap wrote: it was left alone, and "
                "nothing was read",
                hint="give the report a path of its own (logtrap rewrites its reports on "
                "every run)",
            )


def _distinct_outputs(**paths: str | None) -> None:
    """Refuse one file named by two output options (`--json x --state x`): one would
    overwrite the other without a word."""
    seen: dict[str, str] = {}
    for option, path in paths.items():
        if path is None or path == STDOUT or _special(Path(path)):  # /dev/null twice is fine
            continue
        flag = "--" + option.replace("_", "-")
        key = os.path.realpath(path)
        if key in seen:
            raise click.UsageError(f"{seen[key]} and {flag} name the same file ({path}): "
                                   "give each its own")
        seen[key] = flag


def _is_report(file: Path, *, table: str | None = None) -> bool:
    """Whether logtrap wrote this file (so a run may rewrite it); an empty file counts.
    `table`: the Parquet table the file should hold."""
    try:
        if file.stat().st_size == 0:
            return True
        if table is not None:
            if _PARQUET_KEY in pl.read_parquet_metadata(file):
                return True
            return _PARQUET_TABLES[table] <= set(pl.read_parquet_schema(file))
        with file.open("rb") as fh:
            head = fh.read(1024).decode("utf-8", "replace")
    except (OSError, pl.exceptions.PolarsError):
        return False
    return any(mark in head for mark in _REPORT_HEADS)


def _write_text(path: str, text: str) -> None:
    """Write a file whole or not at all (a cron reader never sees half a report).

    What is not a regular file (`--json /dev/stdout`, `/dev/null`, a named pipe) is written
    into as it is: replacing it would put a file where the device was. A symbolic link's
    target is rewritten and the link kept (a robots.txt linked from the web root), and a
    rewritten file keeps its mode, owner and group (a report the web server reads).
    """
    if path == STDOUT:
        sys.stdout.write(text)
        return
    target = Path(path)
    try:
        fd = _own_stream(path)
        if fd is not None:  # reopened, /dev/stderr would truncate the file `2>>` appends to
            stream = {1: sys.stdout, 2: sys.stderr}.get(fd)
            if stream is not None:
                stream.write(text)
                stream.flush()
            else:
                with os.fdopen(os.dup(fd), "w", encoding="utf-8") as fh:
                    fh.write(text)
            return
        if _special(target):
            _write_special(target, text)
            return
        target = Path(os.path.realpath(target))
        old = target.stat() if target.exists() else None
        fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", dir=target.parent)
        # a merged file's own bytes that are not UTF-8 (a Latin-1 .htaccess) are written back
        # as they were read (surrogateescape), not as U+FFFD
        with os.fdopen(fd, "w", encoding="utf-8", errors="surrogateescape", newline="") as fh:
            fh.write(text)
        _keep_owner(tmp, old)
        os.replace(tmp, target)
    except OSError as exc:
        with contextlib.suppress(OSError, UnboundLocalError):
            os.unlink(tmp)
        raise OutputError(f"cannot write {path}: {exc.strerror or exc}") from exc


def _special(path: Path) -> bool:
    """An existing path that is no regular file or folder: a device, a pipe, a socket."""
    return path.exists() and not path.is_file() and not path.is_dir()


_OWN_STREAM = re.compile(r"^/(?:dev/fd|proc/self/fd)/([0-9]+)$")


def _own_stream(path: str | Path) -> int | None:
    """The file descriptor a path names of this process's own (`/dev/stdout`, `/dev/fd/3`):
    written through it, never reopened (reopening truncates the file a shell's `>>` appends
    to, and replacing it would replace that file)."""
    path = str(path)
    if path in ("/dev/stdout", "/dev/stderr"):
        return 1 if path == "/dev/stdout" else 2
    match = _OWN_STREAM.match(path)
    return int(match.group(1)) if match else None


def _write_special(target: Path, text: str) -> None:
    """Write into a device or pipe. A pipe no program reads is an error, not a wait forever
    (cron would pile up stuck runs); a block device (a disk) is refused."""
    mode = target.stat().st_mode
    if stat.S_ISBLK(mode):
        raise OutputError(f"cannot write {target}: it is a block device (a disk)")
    flags = os.O_WRONLY | (os.O_NONBLOCK if stat.S_ISFIFO(mode) else 0)
    try:
        fd = os.open(target, flags)
    except OSError as exc:
        if exc.errno == errno.ENXIO:
            raise OutputError(f"cannot write {target}: no program is reading the pipe",
                              hint="start the program that reads it first, or give a file")\
                from None
        raise
    os.set_blocking(fd, True)
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        fh.write(text)


def _keep_owner(tmp: str, old: os.stat_result | None) -> None:
    """Give a file written beside `old` its mode, owner and group (mkstemp's are 0600 and
    ours); a new file gets the umask's mode. An owner we may not give is left ours."""
    if old is None:
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)
        return
    try:
        os.chown(tmp, old.st_uid, old.st_gid)
    except OSError:  # not root: the group, at least, if we are in it (a report www-data reads)
        with contextlib.suppress(OSError):
            os.chown(tmp, -1, old.st_gid)
    os.chmod(tmp, old.st_mode & 0o7777)  # after chown, which may clear setuid bits


def _write_parquet(directory: str, tables: dict[str, pl.DataFrame]) -> None:
    """Every table to a temporary file first, then each renamed over its old one: a full
    disk leaves the last run's tables whole, not a cut one beside them."""
    folder = Path(directory)
    written: list[tuple[str, Path]] = []
    try:
        folder.mkdir(parents=True, exist_ok=True)
        for name, frame in tables.items():
            target = Path(os.path.realpath(folder / f"{name}.parquet"))
            fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", dir=target.parent)
            os.close(fd)
            written.append((tmp, target))
            frame.write_parquet(tmp, metadata={_PARQUET_KEY: name})
            _keep_owner(tmp, target.stat() if target.exists() else None)
        for tmp, target in written:
            os.replace(tmp, target)
    except (OSError, pl.exceptions.PolarsError) as exc:
        for tmp, _ in written:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        raise OutputError(f"cannot write Parquet files into {directory}: {reason}") from exc


def _diff(old: str, new: str, path: str) -> str:
    return "".join(difflib.unified_diff(old.splitlines(keepends=True),
                                        new.splitlines(keepends=True),
                                        fromfile=f"{path} (current)",
                                        tofile=f"{path} (suggested)"))


def _write_user_files(outputs: Sequence[tuple[str, str]], force: bool) -> list[str]:
    """Write rule files; an existing, different file only with --force (else show the diff
    and fail before writing anything). Returns the paths written.
    """
    conflicts = []
    for path, text in outputs:
        target = Path(path)
        if _own_stream(path) is not None:  # --robots-out /dev/stdout: printed, nothing to keep
            continue
        if target.is_dir():
            raise OutputError(f"cannot write {path}: it is a folder")
        _refuse_a_log(target)
        if target.exists() and not force and not _special(target):
            try:
                current = _read_kept(target)
            except OSError as exc:
                raise OutputError(f"cannot read {path}: {exc.strerror}") from exc
            if current != text:
                conflicts.append((path, current, text))
    if conflicts:
        out = sys.stdout
        for path, current, text in conflicts:  # bytes that are no UTF-8 shown escaped
            out.write(_diff(current, text, path).encode("utf-8", "surrogateescape")
                      .decode("utf-8", "backslashreplace"))
        names = ", ".join(path for path, _, _ in conflicts)
        raise OutputError(
            f"{names} already exist{'s' if len(conflicts) == 1 else ''} and differ"
            f"{'s' if len(conflicts) == 1 else ''} from the suggestion; nothing was written",
            hint="the diff above shows what would change; pass --force to overwrite",
        )
    written = []
    for path, text in outputs:
        target = Path(path)
        if (_own_stream(path) is None and target.exists() and not _special(target)
                and _read_kept(target) == text):
            continue
        _write_text(path, text)
        written.append(path)
    return written


# logtrap's part of an .htaccess, between these lines: Apache and LiteSpeed read only the file
# named .htaccess, which holds the site's own rules too (WordPress's rewrites, redirects)
HTACCESS_BEGIN, HTACCESS_END = "# BEGIN logtrap", "# END logtrap"


def _htaccess_merged(path: str, rules: str) -> str:
    """The .htaccess to write: logtrap's rules between its markers, in place of the ones a
    run before wrote, or ahead of the file's own lines (ahead of a CMS's catch-all rewrite,
    which would otherwise end the request first); every other line of the file as it was.

    >>> import tempfile, os
    >>> f = os.path.join(tempfile.mkdtemp(), ".htaccess")
    >>> _ = open(f, "w").write("# BEGIN WordPress\\nRewriteRule . /index.php [L]\\n# END WordPress\\n")
    >>> print(_htaccess_merged(f, "RewriteRule .* - [F]\\n"), end="")
    # BEGIN logtrap
    RewriteRule .* - [F]
    # END logtrap
    <BLANKLINE>
    # BEGIN WordPress
    RewriteRule . /index.php [L]
    # END WordPress
    """
    block = f"{HTACCESS_BEGIN}\n{rules.rstrip()}\n{HTACCESS_END}\n"
    target = Path(path)
    if _own_stream(path) is not None or not target.is_file():
        return block
    try:
        current = _read_kept(target)
    except OSError:
        return block  # writing it says why
    lines = current.splitlines(keepends=True)
    marks = [i for i, line in enumerate(lines) if line.strip() in (HTACCESS_BEGIN, HTACCESS_END)]
    if (len(marks) == 2 and lines[marks[0]].strip() == HTACCESS_BEGIN
            and lines[marks[1]].strip() == HTACCESS_END):
        return "".join([*lines[: marks[0]], block, *lines[marks[1] + 1 :]])
    if marks:  # one marker, or its pair out of order: whose lines are whose cannot be told
        raise OutputError(
            f"{path} holds a {HTACCESS_BEGIN!r} / {HTACCESS_END!r} pair that is not whole",
            hint="fix or remove the markers by hand, then run again")
    return block + ("\n" + current if current.strip() else "")


def _read_kept(target: Path) -> str:
    """A rule file's text as its bytes are: line ends kept (CRLF too), bytes that are no
    UTF-8 carried as surrogates, so that writing it back changes none of them."""
    return target.read_bytes().decode("utf-8", "surrogateescape")


def _refuse_a_log(target: Path) -> None:
    """A rule file given the path of an access log (`--robots-out access.log`) is refused even
    with --force, which the diff's hint would otherwise offer: it would replace the log."""
    from logtrap.formats import detect_format

    if _special(target):  # reading a pipe or a terminal would wait for input
        return
    try:
        with open(target, "rb") as f:
            head = f.read(64 * 1024).decode("utf-8", errors="replace")
    except OSError:
        return  # absent (or unreadable: writing it says why)
    sample = [line for line in head.splitlines()[:-1] or head.splitlines() if line.strip()][:5]
    fmt = detect_format(sample) if sample else None
    if fmt is not None:
        raise OutputError(
            f"{target} looks like an access log ({fmt.describe()}): logtrap does not write "
            "rules over it, even with --force",
            hint="give the rules a path of their own",
        )


# -- the commands ----------------------------------------------------------------------------


@click.group(cls=_Group, epilog=EXIT_CODES)
@click.version_option(package_name="logtrap")
def cli() -> None:
    """Find crawler traps in web-server access logs and say exactly what to change.

    \b
    Start with:
      logtrap analyze /var/log/nginx/access.log*

    Every command but settings takes log files (plain, .gz, .bz2, .xz, rotated sets, globs, or -
    for stdin) and the same options for reading them. A site config file, logtrap.toml in the working
    directory (or --config FILE), may hold any of them; flags override it. Paths in it are
    relative to its folder; any setting (logtrap settings lists them) may go under
    [thresholds] by name:

    \b
      log_format = "combined"
      hosts = ["example.com"]
      session_params = ["sid"]
      sitemaps = ["sitemap.xml"]
      robots = "robots.txt"
      [thresholds]
      url_sample_size = 500
    """


def _json_report(analysis: Any, suggestions: Any, new: pl.Series | None) -> str:
    """The report-v1 JSON; with --state (`new` given), each finding says whether it is new
    since the last run (`"new"`: a key added, as the contract allows)."""
    if new is None:
        return report.to_json(analysis, suggestions)
    doc = report.to_dict(analysis, suggestions)
    for finding, is_new in zip(doc["findings"], new, strict=True):  # rows in the same order
        finding["new"] = is_new
    return report.dumps(doc)


def _new_view(findings: pl.DataFrame, new: pl.Series | None) -> list[str]:
    """Under the summary of a --state run, which of its findings are new since the last run:
    the summary shows every finding remembered, old and new alike."""
    if new is None or findings.height == 0:
        return []
    from logtrap.findings import to_records
    from logtrap.report._common import finding_subject

    fresh = [x for x, is_new in zip(to_records(findings), new, strict=True) if is_new]
    of = f"{findings.height:,} finding{'s' if findings.height != 1 else ''}"
    lines = ["", f"New since the last run (--state): {len(fresh):,} of the {of}" if fresh
             else f"New since the last run (--state): none of the {of}"]
    for x in fresh:
        subject = finding_subject(x.kind, x.pattern, x.evidence, report.safe, report.safe)
        host = f" on {report.safe(x.host)}" if x.host not in (None, "-") else ""
        lines.append(f"  NEW {x.severity.upper()} {x.kind} {subject}{host}")
    return lines


def _at_or_above(findings: pl.DataFrame, severity: str) -> pl.DataFrame:
    level = s.SEVERITIES.index(severity)
    return findings.filter(pl.col(s.SEVERITY).to_physical() >= level)


@cli.command(epilog=EXIT_CODES)
@click.option("--json", "json_out", metavar="FILE|-",
              help="Write the JSON report (schema logtrap/report-v1); - for stdout.")
@click.option("--markdown", "markdown_out", metavar="FILE|-",
              help="Write a Markdown report; - for stdout.")
@click.option("--html", "html_out", metavar="FILE",
              help="Write a self-contained HTML report with charts (works offline).")
@click.option("--parquet", "parquet_out", metavar="DIR",
              help="Write patterns, findings, windows and bots tables as Parquet into DIR.")
@click.option("--fail-on", type=click.Choice(s.SEVERITIES), default="warning",
              show_default=True,
              help="Exit with 3 when there are findings of this severity or worse (with "
                   "--state: ones no earlier run alerted on at or above it).")
@click.option("--state", "state_path", metavar="FILE",
              type=click.Path(dir_okay=False, path_type=Path),
              help="Cron mode: remember what was read and alerted on in FILE, read only "
                   "new lines next time, and alert (--fail-on, --quiet) only once per "
                   "finding (again if its severity rises). The summary and the JSON "
                   "(\"new\") say which findings are new since the last run.")
@click.option("--top", default=report.TOP_PATTERNS, show_default=True, metavar="N",
              type=click.IntRange(min=1),
              help=f"Patterns shown per host (for the {report.TOP_HOSTS} hosts with most bot "
                   "requests; the others are counted). Long URLs are cut at "
                   f"{report.SHOWN_CHARS} characters on screen, whole in the reports.")
@_with_logs
def analyze(logs: list[str], settings: Settings, *, json_out: str | None,
            markdown_out: str | None, html_out: str | None, parquet_out: str | None,
            fail_on: str, state_path: Path | None, top: int, quiet: bool) -> None:
    """Find crawler traps in access logs: where the bot budget goes, and why.

    Prints what was read on stderr, then a ranked summary on stdout: the URL patterns bots
    spend their requests on (per host), the traps found with their evidence, a fix and
    example URLs.

    \b
    Examples:
      logtrap analyze /var/log/nginx/access.log*
      logtrap analyze access.log.*.gz --host example.com --html report.html
      zcat access.log.*.gz | logtrap analyze -
      logtrap analyze /var/log/apache2/access.log* --quiet --json out.json --fail-on warning

    Under cron, --quiet prints nothing unless there are findings at or above --fail-on
    (then only those findings). Report files (--json FILE, --markdown FILE, --html,
    --parquet) are rewritten on every run, but never a file logtrap did not write
    (that stops the run before reading); --json - and --markdown - print the report
    on stdout instead of the summary.
    """
    # /dev/stdout is stdout: the summary is left out as for -, and the two cannot share it
    json_out, markdown_out, html_out = (
        STDOUT if p is not None and _own_stream(p) == 1 else p for p in (json_out, markdown_out, html_out))
    if json_out == STDOUT and markdown_out == STDOUT:
        raise click.UsageError("--json - and --markdown - cannot both use stdout")
    _distinct_outputs(json=json_out, markdown=markdown_out, html=html_out, parquet=parquet_out,
                      state=state_path)
    for path in (json_out, markdown_out, html_out):
        _check_output(path)
    _check_output(parquet_out, directory=True)
    _check_output(state_path, report=False)  # a foreign file there is refused when it is read

    from logtrap.analysis import analyze as run_analysis
    from logtrap.state import read_incremental, state_lock

    def waiting() -> None:
        if not quiet:  # a person at a shell; cron hears nothing of a short wait
            click.echo(f"{state_path}: another logtrap run is using it; waiting for it to "
                       "finish (Ctrl-C to stop)", err=True)

    # one cron run on a state at a time: the next waits for it, then reads what came after
    with state_lock(state_path, waiting):
        increment = None
        with _progress(quiet) as on_progress:
            if state_path is not None:
                # saved once the reports and alerts are out: a run that fails to write them reads
                # the same lines, and alerts, again next time
                increment = read_incremental(logs, state_path, settings, on_progress=on_progress)
                analysis = increment.analysis
                failing = increment.alerting(fail_on)
            else:
                analysis = run_analysis(logs, settings, on_progress=on_progress)
                failing = _at_or_above(analysis.findings, fail_on)

        # with --state, which findings no earlier run saw (or saw at a lower severity)
        new = increment.is_new() if increment is not None else None
        suggestions = None
        if json_out or markdown_out or html_out:
            from logtrap.rules import suggest

            suggestions = suggest(analysis.findings, analysis.traffic, analysis.settings)
        if json_out:
            _write_text(json_out, _json_report(analysis, suggestions, new))
        if markdown_out:
            _write_text(markdown_out, report.to_markdown(analysis, suggestions))
        if html_out:
            _write_text(html_out, report.to_html(analysis, suggestions))
        if parquet_out:
            _write_parquet(parquet_out, {
                "patterns": analysis.patterns,
                "findings": analysis.findings if new is None else analysis.findings.with_columns(new),
                "windows": analysis.traffic.windows,
                "bots": analysis.bots,
            })

        _read_summary(analysis, quiet)
        # lines no run will read, said under --quiet too (as a file mostly rejected is)
        for left in increment.left if increment is not None else ():
            lost = (f"its {left.unread:,} bytes written after that run" if left.unread is not None
                    else "lines written to it after that run")
            click.echo(f"{left.path} was rotated since the last run, to {left.rotated}, which is "
                       f"not among the logs given: {lost} are not read; give the rotated files "
                       f"too ({left.path}*: each line is read once)", err=True)
        for path in increment.waiting if increment is not None and not quiet else ():
            click.echo(f"{path}: logrotate is still writing it; its lines are read next run", err=True)
        for path in analysis.stats.moved if analysis.stats is not None and not quiet else ():
            click.echo(f"{path}: rotated or removed during the run; its lines are read next run",
                       err=True)
        if STDOUT not in (json_out, markdown_out):
            if not quiet:
                report.print_lines(_console(), [*report.summary_view(analysis, top),
                                                *_new_view(analysis.findings, new)])
            elif failing.height:
                report.print_lines(_console(), report.findings_view(failing))
        # Mostly rejected, the run fails, unsaved: once --format is given, its lines are read
        # (and alerted on) again.
        _check_rejected(analysis.stats)
        if increment is not None:
            increment.save(alerted=fail_on)
        if failing.height:
            sys.exit(EXIT_FINDINGS)


@cli.command(epilog=_TABLE_EXIT_CODES)
@click.option("--json", "json_out", metavar="FILE|-",
              help="Write the pattern table as JSON (schema logtrap/patterns-v1; entries as "
                   "in report-v1's patterns; with --sections logtrap/sections-v1, entries as "
                   "in its sections); - for stdout.")
@click.option("--limit", type=click.IntRange(min=1), metavar="N",
              help="Only the N patterns with most bot requests. Without it the table shows "
                   "the first 1,000 and --json writes them all.")
@click.option("--sections", is_flag=True,
              help="One row per section (the first two path levels) instead of per pattern.")
@_with_logs
def patterns(logs: list[str], settings: Settings, *, json_out: str | None,
             limit: int | None, sections: bool, quiet: bool) -> None:
    """The URL pattern table: where every request (and every bot request) went.

    One row per host and URL pattern (the path with variable parts as {n}, {date},
    {token}..., plus the sorted query parameter names), most bot requests first: requests,
    bot requests, share of the host's bot requests, unique URLs, statuses, top bots. Past
    1,000 distinct URLs a pattern's count is estimated from a sample (about 3% error) and
    shown as ~N.

    \b
    Examples:
      logtrap patterns /var/log/nginx/access.log --limit 20
      logtrap patterns /var/log/nginx/access.log --sections
      logtrap patterns access.log --json - | jq '.patterns[0]'
    """
    _check_output(json_out)
    from logtrap.analysis import analyze as run_analysis

    with _progress(quiet) as on_progress:
        analysis = run_analysis(logs, settings, detectors=(), on_progress=on_progress)
    _read_summary(analysis, quiet)
    source = analysis.traffic.sections if sections else analysis.patterns
    table = source if limit is None else source.head(limit)
    if json_out:
        doc = ({"schema": SECTIONS_SCHEMA, "sections": report.section_rows(table)} if sections
               else {"schema": PATTERNS_SCHEMA, "patterns": report.pattern_rows(table)})
        _write_text(json_out, report.dumps(doc))
        if json_out == STDOUT:
            _check_rejected(analysis.stats)
            return
    shown = table if limit is not None else table.head(report.REPORT_ROWS)
    view = report.section_table(shown) if sections else report.pattern_table(shown)
    notes = _not_logged_note(analysis)
    if shown.height < table.height:  # rich lays out 400 rows a second
        rest, what = table.height - shown.height, "section" if sections else "pattern"
        notes = [report.more_patterns(rest, "--json, or --limit N", what,
                                      **report.rest_held(table, shown.height)), *notes]
    report.print_lines(_console(), [view, *notes])
    _check_rejected(analysis.stats)


def _not_logged_note(analysis: Any) -> list[str]:
    """The note under a table when the log records no user agent for some requests."""
    from logtrap.report._common import NOT_LOGGED_NOTE, not_logged_requests

    n = not_logged_requests(analysis.patterns)
    return [NOT_LOGGED_NOTE.format(n=f"{n:,}")] if n else []


@cli.command(epilog=_TABLE_EXIT_CODES)
@click.option("--json", "json_out", metavar="FILE|-",
              help="Write the bot table as JSON (schema logtrap/bots-v1; entries as in "
                   "report-v1's bots); - for stdout.")
@_with_logs
def bots(logs: list[str], settings: Settings, *, json_out: str | None, quiet: bool) -> None:
    """The bot table: who crawls, how much, how fast, and whether they are who they claim.

    One row per bot (by user agent family): requests, share of all bot requests,
    requests from verified / fake / unverified addresses (for bots claiming a search
    engine; verify with --ip-ranges or --verify-dns), top patterns, status mix, peak
    requests per minute and, for HTTP libraries and unnamed agents, distinct addresses
    (from 500 on, many people's app rather than one crawler: never an aggressive bot).

    \b
    Examples:
      logtrap bots /var/log/nginx/access.log*
      logtrap bots access.log --ip-ranges googlebot.json --json bots.json
    """
    _check_output(json_out)
    from logtrap.analysis import analyze as run_analysis

    with _progress(quiet) as on_progress:
        analysis = run_analysis(logs, settings, detectors=(), on_progress=on_progress)
    _read_summary(analysis, quiet)
    table = analysis.bots
    if json_out:
        bots = report.bot_dicts(table)
        _write_text(json_out, report.dumps({"schema": BOTS_SCHEMA, "bots": bots}))
        if json_out == STDOUT:
            _check_rejected(analysis.stats)
            return
    report.print_lines(_console(), [report.bots_table(table), *_not_logged_note(analysis)])
    _check_rejected(analysis.stats)


@cli.command(epilog=_SUGGEST_EXIT_CODES)
@click.option("--robots-out", metavar="FILE", help="Write the suggested robots.txt to FILE.")
@click.option("--htaccess-out", metavar="FILE",
              help="Write the suggested .htaccess rules (LiteSpeed / Apache) to FILE, between "
                   "'# BEGIN logtrap' and '# END logtrap' lines: the file's other lines are "
                   "kept, and a later run replaces only that part.")
@click.option("--nginx-out", metavar="FILE",
              help="Write the suggested nginx rules to FILE (for inside http {}).")
@click.option("--force", is_flag=True,
              help="Overwrite existing --robots-out / --htaccess-out / --nginx-out files.")
@_with_logs
def suggest(logs: list[str], settings: Settings, *, robots_out: str | None,
            htaccess_out: str | None, nginx_out: str | None, force: bool,
            quiet: bool) -> None:
    """Rules that stop crawlers wasting time in the traps found: robots.txt lines, and
    server rules (.htaccess, nginx) for bots that ignore robots.txt or hammer a few routes,
    and for a code host's crawl at every commit where robots.txt cannot tell a commit from
    a branch's name.

    Each robots.txt rule is checked with an RFC 9309 matcher before it is shown: it must
    block the trap's URLs and no content URL (the --sitemap URLs and content seen in the
    logs). Rules that would block content are withheld, and the output says why. Pass the
    site's robots.txt with --robots to merge into it.

    Files are written only where asked, and only with rules in them (with none needed, a
    file is left as it is). An existing file is never overwritten without --force: logtrap
    shows the diff instead and exits with 1.

    \b
    Examples:
      logtrap suggest /var/log/nginx/access.log* --sitemap sitemap.xml
      logtrap suggest access.log --robots /var/www/robots.txt --robots-out robots.new.txt
      logtrap suggest access.log --nginx-out /etc/nginx/conf.d/logtrap.conf --force

    A robots.txt serves one host: where the logs give one for several, --robots-out needs
    --host. The --nginx-out file goes inside http {} (conf.d/ is included there); the one
    line each server {} needs is printed when it is written.
    """
    _distinct_outputs(robots_out=robots_out, htaccess_out=htaccess_out, nginx_out=nginx_out)
    for path in (robots_out, htaccess_out, nginx_out):
        _check_output(path, report=False)
    from logtrap.analysis import analyze as run_analysis
    from logtrap.rules import STATUS, TARGET
    from logtrap.rules import suggest as run_suggest

    with _progress(quiet) as on_progress:
        analysis = run_analysis(logs, settings, on_progress=on_progress)
    suggestions = run_suggest(analysis.findings, analysis.traffic, analysis.settings)
    _read_summary(analysis, quiet)
    report.print_lines(_console(), report.suggestions_view(suggestions))
    hosts = list(suggestions.robots_by_host)
    if robots_out and len(hosts) > 1:  # one file for all, a host's rule would bind the others
        listed = ", ".join(hosts[:5]) + (", ..." if len(hosts) > 5 else "")
        raise OutputError(
            f"not writing {robots_out}: a robots.txt serves one host, and these logs give "
            f"one for {len(hosts):,} hosts ({listed})",
            hint="write each host's with --host NAME --robots-out FILE",
        )
    rules = suggestions.rules
    serving = rules.filter(pl.col(TARGET) != "robots", pl.col(STATUS) != "withheld").height
    asked = [(path, text, what) for path, text, what in (
        (robots_out, suggestions.robots_txt, "robots.txt rule"),
        (htaccess_out, suggestions.htaccess if serving else "", "server rule"),
        (nginx_out, suggestions.nginx_conf if serving else "", "server rule")) if path]
    # Nothing to suggest (or withheld rules only): a file of comments would only wipe the
    # rules a file holds (--force)
    for path, text, what in asked:
        if not text:
            kept = " (left as it was)" if Path(path).exists() else ""
            click.echo(f"Nothing to write to {path}: no {what} is needed{kept}", err=True)
    outputs = [(path, _htaccess_merged(path, text) if path == htaccess_out else text)
               for path, text, _ in asked if text]
    for path in _write_user_files(outputs, force):
        if not quiet:
            click.echo(f"Wrote {path}", err=True)
        if path == nginx_out:  # what the file cannot hold (see server_rules.nginx_conf)
            click.echo(f"Include {path} inside http {{}}, and add to each server {{}} of the "
                       f"site: {' '.join(suggestions.nginx_server.split())}", err=True)
    _check_rejected(analysis.stats)


@cli.command("settings")
@click.argument("words", nargs=-1, metavar="[WORD...]")
@click.option("--set", "assignments", multiple=True, metavar="NAME=VALUE",
              help="A setting as the other commands would take it (repeatable).")
@click.option("--config", "config_path", metavar="FILE",
              type=click.Path(dir_okay=False, path_type=Path),
              help="Site config (TOML); default: ./logtrap.toml if it exists.")
def settings_command(words: tuple[str, ...], assignments: tuple[str, ...],
                     config_path: Path | None) -> None:
    """Every setting: its value, its default, and why the default is what it is.

    The values are those the other commands would use here: the defaults, then
    logtrap.toml (or --config FILE), then --set. WORDs list only the settings whose name or
    heading contains one of them.

    \b
    Examples:
      logtrap settings
      logtrap settings soft_404 crowd
      logtrap settings --config /etc/logtrap/site.toml
    """
    from logtrap.formats import compile_format
    from logtrap.settings import described

    config_file = cfg.find_config(config_path)
    broken: LogtrapError | None = None
    try:
        from_file = cfg.read_config(config_file) if config_file is not None else {}
    except LogtrapError as e:  # listed without it, then the error: this is where to fix it
        broken, from_file, config_file = e, {}, None
    given = dict(cfg.parse_assignment(a) for a in assignments)
    settings = cfg.build_settings(from_file, cfg.coerce(given, where="--set"))
    if settings.log_format != "auto":
        compile_format(settings.log_format)  # the error every other command would give
    # a WORD finds a name, or the heading's own words ("soft_404", "reading"), not its prose
    rows = [d for d in described() if not words or any(
        w.lower() in f"{d.name} {d.group.split(':')[0]}".lower() for w in words)]
    if not rows:
        names = [d.name for d in described()]
        close = [m for w in words for m in difflib.get_close_matches(w, names, n=1)]
        raise click.UsageError(f"no setting matches {' '.join(words)}"
                               + (f" (did you mean {close[0]}?)" if close else ""))
    where = f" (from {config_file})" if config_file is not None else ""
    lines = [f"Settings{where}: in logtrap.toml by name (top level or [thresholds]), or "
             "--set NAME=VALUE on any command."]
    if broken is not None:
        lines.append("(The site config is left out: see the error below.)")
    group = None
    for d in rows:
        if d.group != group:
            group = d.group
            lines += ["", textwrap.fill(group, 100)]
        value = getattr(settings, d.name)
        changed = "" if value == d.default else f"   (default {_shown(d.default)})"
        lines += [f"  {d.name} = {_shown(value)}{changed}",
                  textwrap.fill(d.text, 100, initial_indent=" " * 6, subsequent_indent=" " * 6)]
    click.echo("\n".join(lines))  # plain text: "[thresholds]" is no markup
    if broken is not None:
        raise broken


def _shown(value: object) -> str:
    """A setting's value as it would be written in logtrap.toml (which reads "none" as no
    value: TOML has no null)."""
    if isinstance(value, tuple):
        return "[" + ", ".join(_shown(v) for v in value) + "]"
    if isinstance(value, Path):  # absolute: a relative one is relative to the config's folder
        name, sep, file = str(value).rpartition("=")  # an ip_ranges BOT=FILE
        whole = os.path.abspath(file if sep and os.sep not in name else value)
        value = f"{name}{sep}{whole}" if sep and os.sep not in name else whole
    if isinstance(value, (str, Path)):
        return '"' + str(value).replace("\\", "\\\\").replace('"', '\\"') + '"'
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return '"none"'
    return f"{value:,}".replace(",", "_") if isinstance(value, int) else str(value)


def main() -> None:
    """The `logtrap` console script.

    Once the command is done, with its files closed and stdout and stderr flushed, the
    process leaves at once (`os._exit`): Python's teardown would free the analysis's frames
    and caches one by one, which took 0.1 s of the benchmark's runs (of 1M lines and of 10M)
    and keeps nothing of the user's.
    """
    signal.signal(signal.SIGTERM, _terminate)
    try:
        cli(prog_name="logtrap")
    except SystemExit as done:
        code = done.code
        # Output still buffered when the reader left (`| head -2` of a short summary) breaks
        # the pipe only here, at the last flush.
        try:
            sys.stdout.flush()
        except BrokenPipeError:
            _quiet_stdout()
            code = EXIT_PIPE
        if code is not None and not isinstance(code, int):  # a message: Python prints it
            raise done from None
        try:
            sys.stderr.flush()
        finally:
            os._exit(code or 0)

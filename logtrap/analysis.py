"""The pipeline, stage after stage: logs -> bots -> patterns -> tally -> verify -> detect -> rules.

Each stage is its own module; this one only strings them together, so the CLI, cron runs and
notebooks all get the same answers from one call.
"""

from __future__ import annotations

import difflib
import importlib
import sys
import threading
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import polars as pl

from logtrap import schema as s
from logtrap.bots import AgentCache, add_bots
from logtrap.detectors import Detector, run_detectors, verify_claims
from logtrap.errors import ConfigError, InputError, LogtrapError
from logtrap.logs import ReadStats, Source, scan_logs, source_items
from logtrap.patterns import PatternCache, add_patterns, add_patterns_keyed, section_expr
from logtrap.settings import Settings
from logtrap.traffic import AGENT_FLAGS, Tally, Traffic, bot_addresses, crowd_bots

Progress = Callable[[int, int | None, int], None]
# The request columns annotate and Tally.add read: the reader parses no others.
ANALYSIS_COLUMNS = (s.HOST, s.CLIENT, s.TIME, s.URL, s.STATUS, s.BYTES, s.USER_AGENT)
# ...and those they read where a frame has them (a person's POST reads no page: traffic._reads)
OPTIONAL_COLUMNS = (s.METHOD,)
Sources = str | Path | Source | Sequence[str | Path | Source]


@dataclass(frozen=True)
class Analysis:
    """Everything one run found: the aggregates, the ranked findings, how the read went."""

    traffic: Traffic
    findings: pl.DataFrame
    stats: ReadStats | None
    settings: Settings

    @property
    def patterns(self) -> pl.DataFrame:
        """One row per host+pattern: where the bot budget goes."""
        return self.traffic.patterns

    @property
    def bots(self) -> pl.DataFrame:
        """One row per bot: requests, share, verification, top patterns, status mix, peak rate
        and, for HTTP libraries and unnamed agents, distinct addresses."""
        return bot_table(self.traffic)

    def add_patterns(self, requests: pl.DataFrame) -> pl.DataFrame:
        """Requests (from `read_logs`) with the pattern and section this analysis counts each
        under: `add_patterns` gives each tag its own `/tag/php`, while the analysis, having
        seen 200 tags, merged them into `/tag/{name}` (`Traffic.names`). Filtering on a
        pattern of `patterns` or `findings` then gives its requests.

        The requests the analysis does not count are left out, so that the rows add up to
        `patterns`' requests: Apache's own `OPTIONS *` (`stats.server_requests`) and, with
        `settings.hosts`, other hosts' requests.

        >>> result = analyze("sample_logs/apache-blog/access.log*")
        >>> from logtrap import read_logs
        >>> requests = result.add_patterns(read_logs("sample_logs/apache-blog/access.log*"))
        >>> requests.filter(pl.col("pattern") == "/calendar?date").height
        448
        """
        if not isinstance(requests, pl.DataFrame):
            raise LogtrapError("Analysis.add_patterns takes a DataFrame of requests (from "
                               "read_logs); collect a LazyFrame first")
        if self.settings.hosts:
            requests = requests.filter(pl.col(s.HOST).is_in(list(self.settings.hosts)))
        frame = add_patterns(_without_server_own(requests)[0], self.settings)
        names = self.traffic.names.filter(pl.col("merged") != pl.col(s.PATTERN))
        if names.height == 0:
            return frame
        merged = frame.select(s.HOST, s.PATTERN).join(
            names, on=[s.HOST, s.PATTERN], how="left", maintain_order="left")["merged"]
        return frame.with_columns(
            pl.coalesce(merged, s.PATTERN).alias(s.PATTERN),
            pl.when(merged.is_not_null()).then(section_expr(merged)).otherwise(pl.col(s.SECTION))
            .alias(s.SECTION),
        )

    @property
    def crowds(self) -> pl.DataFrame:
        """The bots judged as many people's app, not one crawler (`traffic.crowd_bots`):
        bot_name, requests, addresses."""
        return crowd_bots(self.traffic, self.settings)


def annotate(
    requests: pl.DataFrame,
    settings: Settings,
    cache: AgentCache | None = None,
    pattern_cache: PatternCache | None = None,
) -> pl.DataFrame:
    """Add bot and pattern columns to parsed requests (each distinct UA and URL done once;
    with the caches, once across batches), and the hashes of each URL and pattern, which
    `Tally.add` makes its keys of (`add_patterns_keyed`); with a cache made with the tally's
    flags (`traffic.AGENT_FLAGS`), the flags it filters on too."""
    return add_patterns_keyed(add_bots(requests, cache), settings, pattern_cache)


def tally_logs(
    sources: Sources | pl.DataFrame | pl.LazyFrame,
    settings: Settings | None = None,
    *,
    tally: Tally | None = None,
    on_progress: Progress | None = None,
) -> tuple[Tally, ReadStats]:
    """Read logs (or take a frame of parsed requests) into a tally, batch by batch.

    The stats of a frame count its rows as lines, all parsed: what `analyze` of the logs
    the frame was read from would say (a frame's server requests are left out as the
    logs' are, and counted).
    """
    settings = Settings.of(settings)
    frame = requests_frame(sources) if isinstance(sources, (pl.DataFrame, pl.LazyFrame)) else None
    if frame is None:
        sources = _checked_sources(sources)
    # Polars imports it to take its first arrow array (`keys._uint32`, `schema.owned`): it
    # stalled the first step 36-40 ms; overlapped with reading it
    _import_in_background("pyarrow.compute")
    acc = tally if tally is not None else Tally(settings=settings)
    cache, pattern_cache = AgentCache(flags=AGENT_FLAGS), PatternCache(settings.pattern_cache_urls)
    if frame is not None:
        stats = ReadStats()
        batches: Iterable[pl.DataFrame] = _frame_batches(frame, settings, stats)
    else:
        stream = scan_logs(
            sources, settings=settings, on_progress=on_progress,
            columns=(*ANALYSIS_COLUMNS, *OPTIONAL_COLUMNS),
        )
        stats, batches = stream.stats, stream
    for step in _steps(batches, settings.analysis_rows):
        step, own = _without_server_own(step)
        stats.server_requests += own
        acc.add(annotate(step, settings, cache, pattern_cache))
    return acc, stats


# What a frame given to `analyze` must hold, column by column: the dtypes it may have, and
# the cast to the reader's dtype (REQUEST_SCHEMA). Only casts that lose nothing: a naive time
# is taken as UTC (the reader's times are UTC), an aware one converted to UTC; integer widths
# are cast strictly (a status of 70000 is an error, not a wrapped number).
_NEEDS = {
    s.HOST: "String",
    s.CLIENT: "String",
    s.TIME: "Datetime (a time zone, converted to UTC; none: taken as UTC)",
    s.URL: "String",
    s.STATUS: "integer",
    s.BYTES: "integer, null for none",
    s.USER_AGENT: "String, null for none",
}


def _cast(name: str, dtype: pl.DataType) -> pl.Expr | None:
    """The expression giving column `name` the reader's dtype, or None if `dtype` is not one
    it can safely be cast from."""
    col, want = pl.col(name), s.REQUEST_SCHEMA[name]
    if want == pl.String:
        ok = dtype in (pl.String, pl.Categorical, pl.Enum, pl.Null)
        return col.cast(pl.String) if ok else None
    if name == s.TIME:
        if not isinstance(dtype, pl.Datetime):
            return None
        utc = (col.dt.replace_time_zone("UTC") if dtype.time_zone is None
               else col.dt.convert_time_zone("UTC"))
        return utc.dt.cast_time_unit("us")
    ok = dtype.is_integer() or (dtype == pl.Null and name == s.BYTES)
    return col.cast(want, strict=True) if ok else None


def requests_frame(requests: pl.DataFrame | pl.LazyFrame) -> pl.LazyFrame:
    """A frame of requests made elsewhere, checked and given the reader's dtypes: the
    columns `analyze` reads (`ANALYSIS_COLUMNS`), lazily. One `InputError` names every
    missing or mistyped column, before anything is read.

    >>> import datetime as dt
    >>> frame = pl.DataFrame({"host": ["-"], "client": ["1.2.3.4"],
    ...     "time": [dt.datetime(2026, 1, 1, 12)], "url": ["/"], "status": [200],
    ...     "bytes": [512], "user_agent": ["curl/8.0"]})
    >>> requests_frame(frame).collect_schema()["time"]
    Datetime(time_unit='us', time_zone='UTC')
    >>> requests_frame(frame.drop("host").with_columns(pl.col("status").cast(pl.String)))
    Traceback (most recent call last):
    ...
    logtrap.errors.InputError: a frame of requests needs the columns host, client, time, url, status, bytes, user_agent (as read_logs gives them): host is missing; status is String, not integer
    """
    if not isinstance(requests, (pl.DataFrame, pl.LazyFrame)):
        raise InputError(f"a frame of requests must be a Polars DataFrame or LazyFrame, "
                         f"not {type(requests).__name__}")
    lazy = requests.lazy()
    try:
        schema = lazy.collect_schema()
    except pl.exceptions.PolarsError as exc:
        raise InputError(f"the frame of requests cannot be read: {exc}") from exc
    casts, problems = [], []
    for name, needs in _NEEDS.items():
        if name not in schema:
            problems.append(f"{name} is missing")
            continue
        cast = _cast(name, schema[name])
        if cast is None:
            problems.append(f"{name} is {schema[name]}, not {needs}")
        else:
            casts.append(cast.alias(name))
    if problems:
        raise InputError(
            f"a frame of requests needs the columns {', '.join(ANALYSIS_COLUMNS)} (as "
            f"read_logs gives them): {'; '.join(problems)}",
            hint=_frame_hint(problems),
        )
    # the method where the frame has it as text (else every person's request reads a page)
    if s.METHOD in schema and schema[s.METHOD] in (pl.String, pl.Categorical, pl.Enum):
        casts.append(pl.col(s.METHOD).cast(pl.String))
    return lazy.select(casts)


def _frame_hint(problems: list[str]) -> str:
    """What to do about the first problem a frame has."""
    first = problems[0]
    if first == f"{s.HOST} is missing":
        return 'a log without virtual hosts: .with_columns(host=pl.lit("-")), as read_logs does'
    if first.endswith("is missing"):
        return "rename your columns to these names (.rename({...}))"
    if first.startswith(f"{s.TIME} is String"):
        return 'parse it first: .with_columns(pl.col("time").str.to_datetime(...))'
    return "cast it first (.cast(...)); read_logs gives every column its dtype"


def _frame_batches(frame: pl.LazyFrame, settings: Settings, stats: ReadStats) -> Iterator[pl.DataFrame]:
    """The frame's requests in batches, counted into `stats` as the reader counts a log's
    (with `settings.hosts`, other hosts' requests counted per host and left out).

    Streamed, so a LazyFrame over large files stays in bounded memory as logs do.
    """
    try:
        # collect_batches streams (Polars 1.3x lacks it: collected whole there, then sliced)
        batches = (frame.collect_batches(chunk_size=settings.analysis_rows)
                   if hasattr(frame, "collect_batches")
                   else frame.collect().iter_slices(settings.analysis_rows))
        for batch in batches:
            stats.lines += batch.height
            stats.parsed += batch.height
            if settings.hosts:
                kept = pl.col(s.HOST).is_in(list(settings.hosts))
                for host, n in batch.filter(~kept).group_by(s.HOST).len().iter_rows():
                    stats.other_hosts[host] = stats.other_hosts.get(host, 0) + n
                batch = batch.filter(kept)
            yield batch
    except pl.exceptions.PolarsError as exc:  # a strict cast: a status of 70000, say
        raise InputError(f"the frame of requests cannot be read as requests: "
                         f"{str(exc).splitlines()[0]}") from exc


def _checked_sources(sources: object) -> Sources:
    """The sources as a list (`logs.source_items`), or an InputError now for sources that are
    no paths, not deep in the reader."""
    if not isinstance(sources, (Path, Source, Iterable)) or isinstance(sources, (bytes, Mapping)):
        raise InputError(f"logs to read are paths, globs or \"-\", or a frame from "
                         f"read_logs; not {type(sources).__name__}")
    if not isinstance(sources, (str, Path, Source)):
        sources = list(sources)
        if any(isinstance(item, (pl.DataFrame, pl.LazyFrame)) for item in sources):
            raise InputError("several frames of requests: analyze takes one",
                             hint="join them first: pl.concat([...])")
    return source_items(sources)


def _without_server_own(requests: pl.DataFrame) -> tuple[pl.DataFrame, int]:
    """(the requests but the server's own, how many those were).

    Apache wakes its idle children by sending itself `OPTIONS *` (its "internal dummy
    connection"). It asks for no resource: no crawler spent budget on it, no rule could
    block it, and on a quiet vhost it was a third of the "bot" requests.

    Known by its user agent as well as its target: a scanner's `GET *` is someone's request.

    >>> dummy = "Apache/2.4.29 (Ubuntu) (internal dummy connection)"
    >>> frame = pl.DataFrame({"url": ["/a", "*", None, "*"], "user_agent": [dummy, dummy, dummy, "zgrab"]})
    >>> rest, own = _without_server_own(frame)
    >>> rest["url"].to_list(), own
    (['/a', None, '*'], 1)
    """
    own = requests.get_column(s.URL).eq_missing("*")
    if not own.any():  # the usual case: one pass over the URLs, none over the agents
        return requests, 0
    agents = requests.get_column(s.USER_AGENT)
    own = own & agents.str.contains(_DUMMY_AGENT, literal=True).fill_null(False)
    n = int(own.sum())
    return (requests.filter(~own) if n else requests), n


_DUMMY_AGENT = "(internal dummy connection)"


def _import_in_background(module: str) -> None:
    if module not in sys.modules:
        threading.Thread(target=importlib.import_module, args=(module,), daemon=True).start()


def _steps(batches: Iterable[pl.DataFrame], rows: int) -> Iterator[pl.DataFrame]:
    """Read batches gathered into frames of at least `rows` rows (the last one may be short).

    >>> frames = [pl.DataFrame({"a": [i] * 3}) for i in range(5)]
    >>> [f.height for f in _steps(frames, 7)]
    [9, 6]
    """
    gathered: list[pl.DataFrame] = []
    size = 0
    for batch in batches:
        gathered.append(batch)
        size += batch.height
        if size >= rows:
            yield pl.concat(gathered) if len(gathered) > 1 else gathered[0]
            gathered, size = [], 0
    if gathered:
        yield pl.concat(gathered) if len(gathered) > 1 else gathered[0]


def analyze(
    sources: Sources | pl.DataFrame | pl.LazyFrame,
    settings: Settings | None = None,
    *,
    tally: Tally | None = None,
    detectors: Iterable[Detector] | None = None,
    on_progress: Progress | None = None,
) -> Analysis:
    """Read logs and find the crawler traps in them.

    `sources` are paths, globs, "-" for stdin, or one frame of requests: a DataFrame or a
    LazyFrame (streamed in batches, as logs are). A frame needs the columns of
    `ANALYSIS_COLUMNS`, as `read_logs` gives them: host ("-" for none), client, time, url,
    status, bytes (null for none) and user_agent (null for none), and where it has one the
    method (a person's POST reads no page); other columns are ignored.
    Their dtypes are made the reader's where nothing is lost: a Datetime in any unit, a time
    zone converted to UTC and a naive time *taken as UTC*; any integer width for status and
    bytes; Categorical or Enum for the text columns. Anything else (a time as text, a status
    as text, a missing column) is an `InputError` naming every such column, before anything is
    read. Pass `tally` to continue an earlier run's aggregates (cron), `detectors` to run
    others than the registry.

    >>> result = analyze("sample_logs/litespeed/access.log*")
    >>> result.findings.select("kind", "severity", "pattern").rows()
    [('aggressive_bot', 'critical', '/asl/{n}')]
    >>> result.stats.parsed, result.stats.rejected
    (6095, 0)
    >>> from logtrap import read_logs
    >>> requests = read_logs("sample_logs/litespeed/access.log*")
    >>> analyze(requests.lazy()).findings.equals(result.findings)
    True
    """
    settings = Settings.of(settings)
    acc, stats = tally_logs(sources, settings, tally=tally, on_progress=on_progress)
    # a tally made here is spent making the traffic: its tables are let go before the
    # detectors run, not a second copy of each all the while (1.5 GB of a log whose trap
    # mints a pattern per URL, 8M lines); a tally given is continued (cron saves it after)
    traffic = acc.finish(release=tally is None)
    if settings.hosts and traffic.patterns.height == 0 and stats.parsed:
        raise _no_such_host(settings.hosts, stats)
    traffic = verify_claims(traffic, settings)
    chosen = None if detectors is None else tuple(detectors)
    findings = run_detectors(traffic, settings, chosen)
    return Analysis(traffic=traffic, findings=findings, stats=stats, settings=settings)


def _no_such_host(hosts: Sequence[str], stats: ReadStats) -> ConfigError:
    """The error for --host values no request of the logs named (a typo, most likely)."""
    seen = sorted(stats.other_hosts.items(), key=lambda item: (-item[1], item[0]))
    names = {"-": "no virtual host in the log", "": "no host"}  # as the terminal names them
    listed = ", ".join(f"{names.get(host, host)} ({n:,})" for host, n in seen[:10])
    close = [m for h in hosts for m in difflib.get_close_matches(h, stats.other_hosts, n=1)]
    if set(stats.other_hosts) <= {"-", ""}:
        hint = ("these logs' format records no virtual host: drop --host (or `hosts` in "
                "logtrap.toml)")
    else:
        hint = f"did you mean --host {close[0]}?" if close else "check the --host values"
    return ConfigError(
        f"no request for {', '.join(hosts)} in these logs ({stats.parsed:,} requests parsed; "
        f"hosts: {listed or 'none'}{', ...' if len(seen) > 10 else ''})",
        hint=hint,
    )


def bot_table(traffic: Traffic) -> pl.DataFrame:
    """One row per bot (host-wide): requests, share of bot requests, verification counts,
    top patterns, status mix, the peak requests per minute and, for the kinds a crowd may
    send (`traffic.CROWD_KINDS`), distinct addresses (null for other kinds).
    """
    agents = traffic.agents
    total = agents[s.REQUESTS].sum() or 0
    per_bot = agents.group_by(s.BOT_NAME, s.BOT_KIND).agg(
        pl.col(s.REQUESTS).sum(),
        pl.col(s.FIRST_SEEN).min(),
        pl.col(s.LAST_SEEN).max(),
    )
    top_patterns = (
        agents.group_by(s.BOT_NAME, s.HOST, s.PATTERN)
        .agg(pl.col(s.REQUESTS).sum())
        .sort(s.REQUESTS, s.HOST, s.PATTERN, descending=[True, False, False])
        .group_by(s.BOT_NAME, maintain_order=True)
        .agg(pl.struct(s.HOST, s.PATTERN, s.REQUESTS).head(5).alias("top_patterns"))
    )
    statuses = (
        agents.group_by(s.BOT_NAME, s.STATUS)
        .agg(pl.col(s.REQUESTS).sum())
        .sort(s.REQUESTS, s.STATUS, descending=[True, False])
        .group_by(s.BOT_NAME, maintain_order=True)
        .agg(pl.struct(s.STATUS, s.REQUESTS).alias(s.STATUSES))
    )
    peak = traffic.bot_minutes.group_by(s.BOT_NAME, s.MINUTE).agg(pl.col(s.REQUESTS).sum()).group_by(
        s.BOT_NAME
    ).agg(pl.col(s.REQUESTS).max().alias("peak_per_minute"))
    verification = _verification_counts(traffic.claims)
    addresses = bot_addresses(traffic, by_host=False).select(s.BOT_NAME, "addresses")
    return (
        per_bot.join(verification, on=s.BOT_NAME, how="left")
        .join(addresses, on=s.BOT_NAME, how="left")
        .join(top_patterns, on=s.BOT_NAME, how="left")
        .join(statuses, on=s.BOT_NAME, how="left")
        .join(peak, on=s.BOT_NAME, how="left")
        .with_columns(
            (pl.col(s.REQUESTS) / total if total else pl.lit(0.0)).alias("share"),
            pl.col("verified_requests", "fake_requests", "unverified_requests").fill_null(0),
        )
        .select(
            s.BOT_NAME,
            s.BOT_KIND,
            s.REQUESTS,
            "share",
            "verified_requests",
            "fake_requests",
            "unverified_requests",
            "top_patterns",
            s.STATUSES,
            "peak_per_minute",
            "addresses",
            s.FIRST_SEEN,
            s.LAST_SEEN,
        )
        .sort([s.REQUESTS, s.BOT_NAME], descending=[True, False])
    )


def _verification_counts(claims: pl.DataFrame) -> pl.DataFrame:
    if s.VERIFIED not in claims.columns:
        claims = claims.with_columns(pl.lit("unverified").alias(s.VERIFIED))
    return claims.group_by(s.BOT_NAME).agg(
        *(
            pl.col(s.REQUESTS).filter(pl.col(s.VERIFIED) == v).sum().alias(f"{v}_requests")
            for v in s.VERIFICATIONS
        ),
    )

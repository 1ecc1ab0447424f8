"""Requests -> the bounded aggregates every detector, report and plot reads.

Logs are read in batches; each batch is reduced at once to small tables keyed by host and URL
pattern (per window, per status, per bot, per address claiming a search engine) and to a
sample of distinct URLs per pattern. Memory then grows with the number of patterns, bots and
windows, never with the number of lines:

- the URL sample keeps, per host+pattern, the `url_sample_size` URLs with the smallest hash.
  Hash order is the same in every batch and every run, so a URL that is in the final sample
  was in every earlier one, and its counts are exact (bottom-k sampling);
- distinct URLs per pattern and window (the growth curves) come from that sample and the
  window each sampled URL was first seen in: exact for a pattern with fewer than
  `url_sample_size` URLs, estimated within a few percent beyond (see `_windows`). Exact
  counts would take memory for every distinct URL, and trap patterns are the ones whose
  URLs never stop;
- path segments that take many names (`/products/blue-shirt`, `/wiki/Main_Page`) are merged
  into one pattern (`patterns.merge_names`) at the end, and while reading too once the logs
  hold many patterns (the merges no later line can undo): a shop whose 200,000 product
  handles are each a pattern would otherwise keep a row per product in every table (see
  `Tally._merge_names`).

`Tally` accumulates; `Tally.finish()` returns the immutable `Traffic` the detectors read.
A Tally can be saved and restored as plain frames (`frames()` / `Tally.from_frames`) so cron
runs continue the same aggregates.
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from functools import cache, cached_property, reduce

import polars as pl

from logtrap import schema as s
from logtrap.bots import NOT_LOGGED_NAME
from logtrap.keys import replaced
from logtrap.patterns import PATTERN_TEXT_HASH, URL_TEXT_HASH, merge_names, section_expr
from logtrap.settings import Settings

_HOUR = "1h"
_DAY = "1d"
# Partial frames per table kept before they are merged. Each merge re-reads everything kept
# so far, so fewer merges cost less; 32 batches of 8 MB hold what 8 of 32 MB did (judgement).
# Measured on 1M lines (26 batches): Tally.add + finish 0.92 -> 0.81 CPU-s against 8.
_COMPACT_EVERY = 32
# ...or once they hold this many rows beyond the first: the URL sample takes up to
# url_sample_size rows per pattern a batch, ~100 bytes each, and 32 of those were 40 MB kept
# (judgement; measured at 10M lines, analysis peak 683 -> 655 MB)...
_COMPACT_ROWS = 100_000
# ...and at least this share of the first (merged) part's rows: a log with a pattern per URL
# (a relative-link loop) grows its tables by 100,000 rows a batch, and merging all of them
# each time cost the square of their size (2M lines, 417,000 patterns: merges 4.4 -> 3.3 s).
_COMPACT_SHARE = 0.5
# Distinct patterns seen before their names are first merged while reading, and the fewest
# new ones before the next merge (see Tally._merge_names). Each merge re-reads the patterns
# and the tables. Ordinary logs never get here (the benchmark's has 73 patterns): their names
# are merged once, at the end.
_MERGE_NAMES_AT = 20_000

_time = pl.col(s.TIME)
_is_bot = pl.col(s.IS_BOT).fill_null(False)


def _one_of(column: pl.Expr, values: tuple[str, ...]) -> pl.Expr:
    """`column.is_in(values)` for a few values, compared one by one: on every row of a batch,
    `is_in` on text took two to four times as long (1.5 against 0.9 ms for four methods)."""
    return pl.any_horizontal(*(column == value for value in values))


# A request that reads a page: GET or HEAD, or one whose method the log does not say. A
# person's POST (a form, an AJAX call) is no page read: members' reactions, POSTed to
# `/posts/{id}/react?reaction_id=1`, kept a forum's reaction links, which crawlers fetched
# 8,604 times, out of robots.txt (review 19).
_reads = pl.col(s.METHOD).is_null() | _one_of(pl.col(s.METHOD), ("GET", "HEAD", "get", "head"))
# Bots whose distinct addresses are counted (`bot_clients`, `crowd_bots`): HTTP libraries,
# unnamed agents and link previewers, which a mobile app, a browser extension or a messenger
# sends from every user's device (WhatsApp fetches a link's preview from the sender's phone).
# A named crawler is one party's crawler however many addresses it uses...
CROWD_KINDS = ("tool", "unknown", "social")
# ...and so are crawler frameworks, headless browsers, command-line tools and scanners, which
# no app sends: a scraper's proxy pool gives them many addresses, not many people.
NOT_CROWDS = (
    "Scrapy", "Wget", "curl", "HeadlessChrome", "PhantomJS", "Puppeteer", "Playwright",
    "Selenium", "zgrab", "masscan", "Nmap", "CensysInspect", "Expanse", "HTTPie",
    "PostmanRuntime", "libwww-perl",
)
# A request's agent as the tables filter on it: a search engine's claimed request (`claims`),
# a bot whose addresses are counted (`bot_clients`). `analysis.annotate` gathers them with the
# classes, made once per agent (`AgentCache`'s flags); a batch without them has them made
# here from the text (compared per request, its kinds and names took 3.5 ms of a step).
SEARCH_CLAIM = "__search_claim"
CROWD_AGENT = "__crowd_agent"
AGENT_FLAGS = {
    SEARCH_CLAIM: (_is_bot & (pl.col(s.BOT_KIND) == "search")).fill_null(False),
    CROWD_AGENT: (_is_bot & _one_of(pl.col(s.BOT_KIND), CROWD_KINDS)
                  & ~pl.col(s.BOT_NAME).is_in([*NOT_CROWDS, NOT_LOGGED_NAME])).fill_null(False),
}
# whether a request reads a page (`_reads`), made once a batch for the two tables that ask
_READS = "_tally_reads"
# a hash of the client's address, null for none (claim_people's filter: a request with no
# address is from no claimer's, as `is_in` of the text had it)
_CLIENT_KEY = "_tally_client"
# Addresses kept per host+bot in that count (bottom-k, as the URL sample): exact below, an
# estimate within about 3% above (1/sqrt(k); 10% at worst in a thousand). Exact past
# `crowd_min_addresses` and `crowd_review_addresses`, so those verdicts are never an
# estimate's. A tally keeps the size it began with (`Tally.address_sample`): a cron state
# kept with 256 (`OLD_ADDRESS_SAMPLE`, before 1,024) holds no more, and read as 1,024 its
# count and spread would be wrong.
ADDRESS_SAMPLE = 1024
OLD_ADDRESS_SAMPLE = 256
_CLIENT_HASH = "client_hash"
AGENT_HASHES = "agent_hashes"  # claim_people: its people's distinct user agents (hashes)
PEOPLES_AGENTS = 16  # user agents kept per address claiming a search engine (judgement)
PEOPLE_URLS = "people_urls"  # the table (and Traffic's frame) of the URLs people read
# people_urls: its reads plus the most any page cut from the table may have had before
# (Space-Saving's count; `_people_merged`)
READS_BOUND = "reads_bound"


def _client_key(client: pl.Expr) -> pl.Expr:
    """The address a client is counted by: an IPv6 address by its /64 (one home or phone;
    a scraper rotating through one /64 is one client), any other by itself. A /64 written
    with `::` before its fourth group is counted by its text up to the `::`.

    >>> pl.select(_client_key(pl.Series(["2001:db8:1:2::5", "2001:db8:1:2:a:b:c:d",
    ...     "2001:db8::7", "::ffff:10.0.0.1", "10.0.0.1"]))).to_series().to_list()
    ['2001:db8:1:2:', '2001:db8:1:2:', '2001:db8::', '::ffff:10.0.0.1', '10.0.0.1']
    """
    v6 = client.str.contains(":", literal=True) & ~client.str.to_lowercase().str.starts_with("::ffff:")
    four = client.str.extract(r"^((?:[0-9A-Fa-f]{1,4}:){4})", 1)
    short = client.str.extract(r"^([^:]*(?::[^:]+)*::)", 1)
    return pl.when(v6).then(pl.coalesce(four, short, client)).otherwise(client)
# host+URL and host+pattern as one integer each (the URL sample's order, its grouping key):
# the text's hash and the host's, by another seed (`/a` on host `b` is not `/b` on `a`),
# xor'd; a struct's hash took 4.3 and 3.3 ms of a 195,000-line batch, these 1.6 together.
# Cron state keeps them: KEYS names the way, and a state made another way is refused.
KEYS = 2


def _key(text: pl.Expr) -> pl.Expr:
    return _host_xor(text.hash(0))


def _host_xor(text_hash: pl.Expr) -> pl.Expr:
    return pl.col(s.HOST).hash(1) ^ text_hash


_URL_KEY = _key(pl.col(s.URL))
_PATTERN_KEY = _key(pl.col(s.PATTERN))
_MERGED = "merged"  # the pattern a pattern's rows are kept under (see Tally._merge_names)


def _sum(name: str) -> pl.Expr:
    return pl.col(name).sum()


def _seen() -> list[pl.Expr]:
    return [pl.col(s.FIRST_SEEN).min(), pl.col(s.LAST_SEEN).max()]


def _first_last() -> list[pl.Expr]:
    return [_time.min().alias(s.FIRST_SEEN), _time.max().alias(s.LAST_SEEN)]


def _counts() -> list[pl.Expr]:
    return [
        pl.len().cast(pl.Int64).alias(s.REQUESTS),
        _is_bot.sum().cast(pl.Int64).alias(s.BOT_REQUESTS),
    ]


@dataclass(frozen=True)
class _Table:
    """How one aggregate is made from a batch and how partial aggregates are merged."""

    keys: tuple[str, ...]
    batch: tuple[pl.Expr, ...]  # aggregations over request rows
    merge: tuple[pl.Expr, ...]  # aggregations over partial aggregates
    rows: pl.Expr | None = None  # which requests count (None = all)
    derived: tuple[pl.Expr, ...] = ()  # key columns computed from request columns
    # applied to the merged table: coarsens old rows so a long history stays small
    fold: Callable[[pl.LazyFrame, "_Table"], pl.LazyFrame] | None = None
    # applied to a batch's rows and to merged ones: keeps a bounded sample of them (the
    # tally says how many)
    limit: Callable[[pl.LazyFrame, "Tally"], pl.LazyFrame] | None = None
    limit_batches: bool = True  # False: a batch's rows are kept whole until parts are merged
    # key columns computed on this table's own rows only (after `rows` picks them): a regex
    # over a few rows, not over every request of the batch
    keyed: tuple[pl.Expr, ...] = ()
    # the hash a batch's rows are grouped on (`_grouped`): PATTERN_HASH for their host and
    # pattern, or URL_HASH for a table keyed by host, pattern and URL; None: the keys' text
    hashed: str | None = None


# Hours and minutes are kept this long behind the newest request; older ones are folded so
# that months of cron runs keep a few rows a day, not 24 or 1,440 (per pattern, per bot).
_FINE_DAYS = 2


def _horizon(column: str) -> pl.Expr:
    """The start of the day `_FINE_DAYS` before the newest `column` value: older rows fold."""
    return (pl.col(column).max() - pl.duration(days=_FINE_DAYS)).dt.truncate(_DAY)


def _fold_hours(windows: pl.LazyFrame, table: _Table) -> pl.LazyFrame:
    """Hourly windows older than the horizon become daily ones (growth curves of logs that
    span two days or more are daily anyway: `_window_size`)."""
    old = pl.col(s.WINDOW) < _horizon(s.WINDOW)
    day = pl.when(old).then(pl.col(s.WINDOW).dt.truncate(_DAY)).otherwise(pl.col(s.WINDOW))
    return _merge_rows(windows.with_columns(day.alias(s.WINDOW)), table)


def _address_sample(clients: pl.LazyFrame, tally: "Tally") -> pl.LazyFrame:
    """Per host+bot, the k addresses with the smallest hashes (bottom-k): the same ones in
    every batch and run, so their request counts are exact."""
    rank = pl.col(_CLIENT_HASH).rank("dense").over(s.HOST, s.BOT_NAME)
    return clients.filter(rank <= tally.address_sample)


def _people_sample(urls: pl.LazyFrame, tally: "Tally") -> pl.LazyFrame:
    """Per host+pattern, the `url_sample_size` URLs people read most, and the as many whose
    reads may have been most (`READS_BOUND`, see `_people_merged`; ties: the smallest
    hashes): all of them on a pattern people read few pages of, and past that the pages that
    matter most. Not by hash alone: a calendar's festival page, read 584 times, fell out
    where people read 1,430 days, or where a scraper with a browser's user agent walked
    9,800 dates. Counts are summed as parts are merged (a batch's rows are kept whole till
    then, `_Table.limit_batches`: a page read steadily is not cut from each batch's top) and
    over cron runs. By reads, a page read heavily once stays (a feed of a run's 40 new dates
    an hour does not push a festival read 584 times out, nor 1,200 dates a day read one to
    three times each one read 12 times its first week); by their bound, a page new to a
    pattern whose history fills the table gets in (a festival read 20 times in one run, after
    1,100 days read 25 times each in the run before)."""
    k = tally.settings.url_sample_size
    # the k of each order per pattern by a selection, not a rank of every URL by a struct
    # (a 10M-line log's merges of this table: 25 against 33 ms, in turns)
    kept = (
        urls.group_by(_PATTERN_KEY.alias("_pattern"))
        .agg(pl.col(s.URL_HASH).bottom_k_by([-pl.col(n), pl.col(s.URL_HASH)], k).alias(n)
             for n in (s.HUMAN_REQUESTS, READS_BOUND))
        .select(pl.concat_list(s.HUMAN_REQUESTS, READS_BOUND).alias(s.URL_HASH))
        .explode(s.URL_HASH)
    )
    # (a URL's hash stands for its host and URL, and so for its pattern)
    return urls.join(kept, on=s.URL_HASH, how="semi")


def _people_merged(parts: list[pl.DataFrame], table: "_Table", k: int) -> pl.LazyFrame:
    """The people's table's parts merged, `READS_BOUND` Space-Saving's way (Metwally et al.
    2005; merged as in Agarwal et al., "Mergeable summaries", 2012): where the first part (the
    table kept so far) holds k pages of a pattern or more, pages may have been cut from it,
    each with a bound no higher than the k-th highest kept. So a page not in it has its
    reads since plus that floor as its bound: the festival read 20 times in one run, after
    1,100 days read 25 times each in the run before, was cut at once by days it had no
    chance against (adversarial review 17). Its reads stay its reads: the bound alone rose
    run by run where more than k pages were read a run, and pushed out a festival read 12
    times its first week (adversarial review 18), which its reads keep (`_people_sample`).
    The later parts are whole batches: a page not in them was not read there."""
    first = pl.lit(True).alias("_first")
    floors = (
        parts[0].lazy().group_by(s.HOST, s.PATTERN)
        .agg(pl.len().alias("_n"), pl.col(READS_BOUND).sort(descending=True).get(k - 1, null_on_oob=True)
             .alias("_floor"))
        .filter(pl.col("_n") >= k)
        .drop("_n")
    )
    frame = pl.concat(
        [parts[0].with_columns(first), *(p.with_columns(~first) for p in parts[1:])],
        how="vertical_relaxed",
    )
    cut = pl.col("_floor").is_not_null() & ~pl.col("_first")
    # grouped on the URL's hash, which stands for its host and URL, and so its pattern (the
    # parts are renamed together, `_renamed`): 14 against 5 ms on 115,000 rows of text keys
    sums = [e for e in table.merge if e.meta.output_name() != s.URL_HASH]
    return (
        frame.lazy().group_by(s.URL_HASH).agg(pl.col(*table.keys).first(), *sums, pl.col("_first").any())
        .join(floors, on=[s.HOST, s.PATTERN], how="left")
        .with_columns(
            pl.when(cut).then(pl.col(READS_BOUND) + pl.col("_floor"))
            .otherwise(pl.col(READS_BOUND)).alias(READS_BOUND)
        )
        .select(_COLUMNS[PEOPLE_URLS])
    )


def _fold_minutes(minutes: pl.LazyFrame, table: _Table) -> pl.LazyFrame:
    """Per host, bot and day older than the horizon, only the busiest minute is kept: peaks
    per minute are all that is read from this table. (Exact for logs read in time order; a
    minute split between files read far apart may be undercounted.) Of minutes as busy, the
    earliest: ranked by their requests alone, the one kept went by the order the rows came
    in, which a group-by does not keep, and the same logs left a different table each run.

    Found by a group-by of the old rows on one integer (`_group_key`): ranked within each
    day, all rows, it took 27 of a 10M-line log's 51 ms merge, against 2."""
    old = pl.col(s.MINUTE) < _horizon(s.MINUTE)
    top = pl.col(s.REQUESTS) == pl.col(s.REQUESTS).max()
    busiest = (
        minutes.filter(old).with_columns(pl.col(s.MINUTE).dt.truncate(_DAY).alias("_day"))
        .group_by(_group_key(None, (s.HOST, s.BOT_NAME, "_day")))
        .agg(pl.col(s.HOST, s.BOT_NAME).first(), pl.col(s.MINUTE).filter(top).min(), pl.col(s.REQUESTS).max())
        .select(*table.keys, *(e.meta.output_name() for e in table.merge))
    )
    return pl.concat([minutes.filter(~old), busiest])


_TABLES: dict[str, _Table] = {
    # requests per host+pattern per hour: budget split, growth, first/last seen
    "windows": _Table(
        keys=(s.HOST, s.PATTERN, s.SECTION, s.WINDOW),
        batch=(*_counts(), *_first_last()),
        merge=(_sum(s.REQUESTS), _sum(s.BOT_REQUESTS), *_seen()),
        derived=(_time.dt.truncate(_HOUR).alias(s.WINDOW),),
        fold=_fold_hours,
        hashed=s.PATTERN_HASH,
    ),
    # status mix per host+pattern
    "statuses": _Table(
        keys=(s.HOST, s.PATTERN, s.STATUS),
        batch=tuple(_counts()),
        merge=(_sum(s.REQUESTS), _sum(s.BOT_REQUESTS)),
        hashed=s.PATTERN_HASH,
    ),
    # which bots fetch which patterns, with what answers
    "agents": _Table(
        keys=(s.HOST, s.PATTERN, s.BOT_NAME, s.BOT_KIND, s.STATUS),
        batch=(pl.len().cast(pl.Int64).alias(s.REQUESTS), *_first_last()),
        merge=(_sum(s.REQUESTS), *_seen()),
        rows=_is_bot,
        hashed=s.PATTERN_HASH,
    ),
    # each bot's rate, minute by minute (peak requests per minute)
    "bot_minutes": _Table(
        keys=(s.HOST, s.BOT_NAME, s.MINUTE),
        batch=(pl.len().cast(pl.Int64).alias(s.REQUESTS),),
        merge=(_sum(s.REQUESTS),),
        rows=_is_bot,
        derived=(_time.dt.truncate("1m").alias(s.MINUTE),),
        fold=_fold_minutes,
    ),
    # addresses claiming to be a search engine, and what they fetched (verified later, once
    # per distinct address)
    "claims": _Table(
        keys=(s.CLIENT, s.BOT_NAME, s.HOST, s.PATTERN),
        batch=(pl.len().cast(pl.Int64).alias(s.REQUESTS), *_first_last()),
        merge=(_sum(s.REQUESTS), *_seen()),
        rows=pl.col(SEARCH_CLAIM),
        hashed=s.PATTERN_HASH,
    ),
    # people's requests from the addresses claiming a search engine (counted in the batches
    # where they claim one): an address people share too is a CDN's or proxy's edge, which
    # says nothing of who sent a request (`verify.shared_addresses`)
    "claim_people": _Table(
        keys=(s.HOST, s.CLIENT),
        # and the browsers they came with, up to PEOPLES_AGENTS of them (bottom-k of their
        # hashes): an edge carries many, a scraper mixing in a browser's agent one or two
        batch=(pl.len().cast(pl.Int64).alias(s.HUMAN_REQUESTS),
               pl.col(s.USER_AGENT).hash(0).unique().sort().head(PEOPLES_AGENTS)
               .alias(AGENT_HASHES)),
        merge=(_sum(s.HUMAN_REQUESTS),
               pl.col(AGENT_HASHES).explode().drop_nulls().unique().sort().head(PEOPLES_AGENTS)),
        # pages answered (2xx): a scraper's browser-agent 404s for /favicon.ico are none, nor
        # its 301s for / with nothing in them
        # (the addresses compared by their hashes: as text, 3.9 against 1.5 ms a step)
        rows=~_is_bot & pl.col(s.STATUS).is_between(200, 299) & pl.col(_CLIENT_KEY).is_in(
            pl.col(_CLIENT_KEY).filter(SEARCH_CLAIM).implode()
        ),
    ),
    # a bounded sample of the addresses of each bot that may be many people's app
    # (`crowd_bots`), with their requests
    "bot_clients": _Table(
        keys=(s.HOST, s.BOT_NAME, _CLIENT_HASH),
        batch=(pl.len().cast(pl.Int64).alias(s.REQUESTS),),
        merge=(_sum(s.REQUESTS),),
        # not the requests of a log without user agents: people's and bots' alike
        rows=pl.col(CROWD_AGENT),
        keyed=(_client_key(pl.col(s.CLIENT)).hash(0).alias(_CLIENT_HASH),),
        limit=_address_sample,
    ),
    # the URLs people were answered 2xx/3xx, per host+pattern (all of them up to
    # url_sample_size, the most read past it): the pages no rule may block, which the URL
    # sample below holds by chance (a calendar walked over 35 years: its festival)
    PEOPLE_URLS: _Table(
        keys=(s.HOST, s.PATTERN, s.URL),
        batch=(pl.len().cast(pl.Int64).alias(s.HUMAN_REQUESTS), pl.col(s.URL_HASH).first(),
               pl.len().cast(pl.Int64).alias(READS_BOUND)),
        merge=(_sum(s.HUMAN_REQUESTS), pl.col(s.URL_HASH).first(), _sum(READS_BOUND)),
        rows=~_is_bot & pl.col(_READS) & pl.col(s.STATUS).is_between(200, 399),
        limit=_people_sample,
        limit_batches=False,
        hashed=s.URL_HASH,
    ),
    # a bounded sample of distinct URLs per host+pattern, with their answers to reads (bots'
    # and people's: `_reads`, see Tally.add)
    "urls": _Table(
        keys=(s.HOST, s.PATTERN, s.URL, s.STATUS, s.BYTES),
        batch=(*_counts(), *_first_last(), pl.col(s.URL_HASH).first()),
        merge=(
            _sum(s.REQUESTS),
            _sum(s.BOT_REQUESTS),
            *_seen(),
            pl.col(s.URL_HASH).first(),
        ),
        derived=(_URL_KEY.alias(s.URL_HASH), _PATTERN_KEY.alias(s.PATTERN_HASH)),
    ),
}

# The columns tables key on that a batch's rows are given first (`_Table.derived`)...
_DERIVED = list({e.meta.output_name(): e for t in _TABLES.values() for e in t.derived}.values())
# ...and so, where the hashes of the URL and pattern are given (`patterns.add_patterns_keyed`)
_TEXT_HASHES = {s.URL_HASH: URL_TEXT_HASH, s.PATTERN_HASH: PATTERN_TEXT_HASH}
_DERIVED_KEYED = [
    _host_xor(pl.col(_TEXT_HASHES[e.meta.output_name()])).alias(e.meta.output_name())
    if e.meta.output_name() in _TEXT_HASHES else e
    for e in _DERIVED
]

# The tables keyed by pattern, which merging names renames.
_BY_PATTERN = [name for name, table in _TABLES.items() if s.PATTERN in table.keys]
# Each table's columns in order: its keys, then its aggregations.
_COLUMNS = {n: [*t.keys, *(e.meta.output_name() for e in t.batch)] for n, t in _TABLES.items()}


def _keyed(batch: pl.DataFrame) -> pl.DataFrame:
    """A batch with the columns the tables key and filter on (`_Table.derived`, the agents'
    flags, `_READS`, `_CLIENT_KEY`)."""
    # the keys of host+URL and host+pattern from the hashes `annotate` made once per URL and
    # per pattern, where the batch has them (else the text is hashed here)...
    keyed = PATTERN_TEXT_HASH in batch.columns and URL_TEXT_HASH in batch.columns
    # ...and so the agents' flags (`AGENT_FLAGS`)
    flags = [e.alias(n) for n, e in AGENT_FLAGS.items() if n not in batch.columns]
    return batch.with_columns(
        *(_DERIVED_KEYED if keyed else _DERIVED), *flags, _reads.alias(_READS),
        pl.when(pl.col(s.CLIENT).is_not_null()).then(pl.col(s.CLIENT).hash(0)).alias(_CLIENT_KEY),
    ).drop(URL_TEXT_HASH, PATTERN_TEXT_HASH, strict=False)


_NAMED = (s.HOST, s.PATTERN)  # what PATTERN_HASH stands for in a batch
_ROW = "_tally_row"  # a request's row in its batch (`_grouped`, `_url_sample`)
_NO_CUTOFF = 2**64 - 1  # a pattern whose URL sample is not full: every URL may enter it


def _grouped(rows: pl.LazyFrame, name: str, batch: pl.DataFrame) -> pl.LazyFrame:
    """A batch's rows aggregated as table `name` does (`_Table.batch`), its columns in order.
    `rows` are rows of `batch`, with their row number (`_ROW`).

    Grouped on one integer (`_group_key`), never on text: on the text of several columns,
    Polars encoded every row's keys (12% of a 10M-line analysis went to that). In a batch a
    hash stands for one host and pattern (PATTERN_HASH: `Tally.add` makes it, `_Renames`
    renames the pattern and its hash together) or one host and URL (URL_HASH, and the URL
    gives the pattern), and the other keys are taken from a group's first row. A table
    `hashed` on URL_HASH (keyed by host, pattern and URL) has its text gathered from that row
    (people's reads: 12.6 against 6.2 ms a batch).
    """
    table = _TABLES[name]
    if table.hashed == s.URL_HASH:
        aggs = [e for e in table.batch if e.meta.output_name() != s.URL_HASH]
        return (rows.group_by(s.URL_HASH).agg(*aggs, pl.col(_ROW).first())
                .with_columns(_at_row(batch, table.keys)).select(_COLUMNS[name]))
    others = [key for key in table.keys if table.hashed is None or key not in _NAMED]
    named = _NAMED if table.hashed is not None else ()
    return (rows.group_by(_group_key(table.hashed, others))
            .agg(*table.batch, pl.col(*named, *others).first())
            .select(_COLUMNS[name]))


def _merge_rows(frame: pl.LazyFrame, table: _Table) -> pl.LazyFrame:
    """Partial aggregates of the same keys combined (`_Table.merge`), in the table's columns:
    grouped on one integer standing for the keys (`_group_key`), as a batch's rows are. On
    several keys with text, Polars encoded each row's keys: merging the bots' minutes of a
    10M-line log took 34 against 12.5 ms."""
    return (frame.group_by(_group_key(None, table.keys))
            .agg(pl.col(*table.keys).first(), *table.merge).drop(_GROUP))


_GROUP = "_tally_group"  # a row's keys as one integer (`_group_key`)
_GROUP_SEED = 10  # the seeds of the keys' hashes in it: not 0 or 1, the URL's and host's


def _group_key(hashed: str | None, keys: Sequence[str]) -> pl.Expr:
    """One UInt64 standing for a row's keys: the `hashed` column (which stands for a host and
    pattern or URL), xor'd with each other key's hash, each by a seed of its own. Polars
    groups on one integer column two to three times quicker than on several: it encodes the
    rows' keys of several as bytes and hashes those (a step's hours by pattern: 2.3 against
    4.8 CPU-ms). Rows of other keys share a group only where their 64-bit hashes collide,
    as two URLs' may (a chance of 2^-64 a pair)."""
    parts = ([pl.col(hashed)] if hashed is not None else []) + [
        pl.col(key).hash(_GROUP_SEED + i) for i, key in enumerate(keys)]
    return reduce(operator.xor, parts).alias(_GROUP)


# a URL and its answer (status, size) as one integer: what the URL sample's rows are grouped
# on, in a batch and as its parts are merged
_URL_ANSWER = _group_key(s.URL_HASH, (s.STATUS, s.BYTES))


def _url_sample(rows: pl.DataFrame, sampled: pl.LazyFrame, k: int) -> pl.LazyFrame:
    """A batch's URL sample, in the columns of the `urls` table: requests per distinct URL and
    answer (status, size), of the `k` URLs with the smallest hashes per host+pattern, from the
    `sampled` rows of `rows` (with their row, `_ROW`).

    Grouped on integer keys (the URL hash stands for host and URL, the pattern hash for host
    and pattern; with the answer, one integer: `_group_key`), and the text gathered for the
    groups kept only, from one row of each: taken for every group, most of which the sample
    then drops, it took 26 against 16 ms a batch.
    """
    answers = sampled.group_by(_URL_ANSWER).agg(
        *_counts(), *_first_last(), pl.col(s.URL_HASH, s.STATUS, s.BYTES, s.PATTERN_HASH, _ROW).first()
    )
    kept = _bottom_k(answers, k, pl.col(s.PATTERN_HASH))
    return kept.with_columns(_at_row(rows, (s.HOST, s.PATTERN, s.URL))).select(_COLUMNS["urls"])


def _at_row(batch: pl.DataFrame, names: Sequence[str]) -> list[pl.Expr]:
    """Columns `names` of `batch` at each aggregate's row of it (`_ROW`)."""
    return [pl.lit(batch.get_column(name)).gather(pl.col(_ROW)).alias(name) for name in names]


def _sample_fill(urls: pl.DataFrame) -> pl.DataFrame:
    """Per host+pattern of a URL sample: its distinct URLs ("_n") and the largest of their
    hashes ("_kth": the k-th smallest of the pattern's URLs once the sample is full)."""
    return urls.group_by(s.HOST, s.PATTERN).agg(
        pl.col(s.URL_HASH).n_unique().alias("_n"), pl.col(s.URL_HASH).max().alias("_kth")
    )


def _bottom_k(frame: pl.LazyFrame, k: int, pattern_key: pl.Expr) -> pl.LazyFrame:
    """Keep, per host+pattern (`pattern_key`, a hash of them), the rows of the k distinct URLs
    with the smallest hashes."""
    return frame.filter(pl.col(s.URL_HASH).rank("dense").over(pattern_key) <= k)


# The tally's queries of a batch share its rows (`rows` in `Tally.add`). Polars' search for
# the plans they share, to run those once for all, cost more than it saved: `Tally.add` took
# 8-14% less CPU with it off (in turns in one process, the same steps of a 4M-line log, Polars
# on one thread and on two; the tables the same).
_SEPARATE = pl.QueryOptFlags(comm_subplan_elim=False)


@dataclass
class Tally:
    """Accumulates request batches into bounded aggregates.

    >>> from datetime import datetime, timezone
    >>> batch = pl.DataFrame({
    ...     "host": ["-", "-"], "client": ["1.2.3.4", "5.6.7.8"],
    ...     "time": [datetime(2026, 1, 1, tzinfo=timezone.utc)] * 2,
    ...     "url": ["/a?x=1", "/a?x=2"], "status": [200, 200], "bytes": [10, 10],
    ...     "is_bot": [True, False], "bot_name": ["Googlebot", None],
    ...     "bot_kind": ["search", None], "pattern": ["/a?x"] * 2, "section": ["/a"] * 2})
    >>> tally = Tally()
    >>> tally.add(batch)
    >>> tally.finish().patterns.select("pattern", "requests", "bot_requests", "unique_urls").row(0)
    ('/a?x', 2, 1, 2)
    """

    settings: Settings = field(default_factory=Settings)
    address_sample: int = ADDRESS_SAMPLE  # addresses kept per host+bot (see ADDRESS_SAMPLE)
    _parts: dict[str, list[pl.DataFrame]] = field(default_factory=dict)
    # every host+pattern seen, as its URLs gave it, with the pattern its rows are kept under
    # (null: itself, until its name is merged; see _merge_names)
    _names: pl.DataFrame = field(default_factory=lambda: _empty_names())
    # how `add` renames the rows of merged patterns
    _renames: "_Renames" = field(default_factory=lambda: _Renames.of(_empty_names()))
    # merge names once this many patterns were seen; how many there were at the last merge
    _merge_at: int = field(default_factory=lambda: _MERGE_NAMES_AT)
    _names_at_merge: int = 0
    # per host+pattern (PATTERN_HASH) whose URL sample is full: no URL hash above "_cutoff"
    # can enter it (see _may_be_sampled)
    _cutoffs: pl.DataFrame = field(
        default_factory=lambda: pl.DataFrame(
            schema={s.PATTERN_HASH: pl.UInt64, "_cutoff": pl.UInt64}
        )
    )

    def add(self, batch: pl.DataFrame) -> None:
        """Reduce one batch of requests (with bot and pattern columns) into the aggregates."""
        if self.settings.hosts:
            batch = batch.filter(pl.col(s.HOST).is_in(list(self.settings.hosts)))
        if batch.height == 0:
            return
        for name in (s.USER_AGENT, s.METHOD):  # a frame of requests made without one
            if name not in batch.columns:
                batch = batch.with_columns(pl.lit(None, pl.String).alias(name))
        batch = _keyed(batch)
        new_names = (
            batch.lazy()
            .join(self._names.lazy().select(s.PATTERN_HASH), on=s.PATTERN_HASH, how="anti")
            .group_by(s.PATTERN_HASH)
            .agg(pl.col(s.HOST, s.PATTERN).first())
            .with_columns(s.copies((s.HOST, s.PATTERN)))
        )
        renamed = self._renames.apply(batch)
        rows = renamed.lazy().with_row_index(_ROW)
        queries = []
        for name, table in _TABLES.items():
            if name == "urls":
                # the URL sample's requests are reads, bots' and people's alike: a URL only
                # POSTed to is no page (a CI's up-to-date git fetches of forty repositories,
                # alike in size, looked like one soft 404); the patterns count every request
                sampled = rows.filter(pl.col(_READS) & self._may_be_sampled(renamed))
                q = _url_sample(renamed, sampled, self.settings.url_sample_size)
            else:
                q = rows if table.rows is None else rows.filter(table.rows)
                q = _grouped(q.with_columns(table.keyed), name, renamed)
                if table.limit is not None and table.limit_batches:
                    q = table.limit(q, self)
            # kept across batches, so its strings are copied out of the batch's buffers, in
            # the same collect (`schema.owned` after it: a collect of its own per table,
            # 0.4 ms each however small the table)
            queries.append(q.with_columns(s.copies(_text_columns(name))))
        # In memory: the batch is in memory already (measured 62 against 99 CPU-ms per batch
        # with the default streaming engine).
        *frames, new = pl.collect_all([*queries, new_names], engine="in-memory", optimizations=_SEPARATE)
        for name, frame in zip(_TABLES, frames):
            self._add_part(name, frame)
            if name == "urls":
                self._lower_cutoffs(frame)
        self._note_names(new)

    def _may_be_sampled(self, batch: pl.DataFrame) -> pl.Expr:
        """Which rows of a batch could still enter the URL sample: a pattern's sample keeps
        the k smallest URL hashes, so once k URLs below some hash have been seen, no URL above
        it ever enters. Most of a busy pattern's rows are dropped here, before grouping."""
        if self._cutoffs.height == 0:
            return pl.lit(True)
        # each row's cutoff looked up, not joined: a join gathered every column of the rows
        # (22 against 9 ms a batch)
        cut = replaced(batch.get_column(s.PATTERN_HASH), self._cutoffs.get_column(s.PATTERN_HASH),
                       self._cutoffs.get_column("_cutoff"), default=_NO_CUTOFF)
        return pl.col(s.URL_HASH) <= pl.lit(cut)

    def _lower_cutoffs(self, sample: pl.DataFrame) -> None:
        """Take a batch's URL sample into the cutoffs: where it has k URLs, the largest of their
        hashes bounds the k-th smallest of all the URLs ever seen."""
        full = _sample_fill(sample).filter(pl.col("_n") >= self.settings.url_sample_size)
        if full.height == 0:
            return
        new = full.select(_PATTERN_KEY.alias(s.PATTERN_HASH), pl.col("_kth").alias("_cutoff"))
        self._cutoffs = (
            pl.concat([self._cutoffs, new]).group_by(s.PATTERN_HASH).agg(pl.col("_cutoff").min())
        )

    def _note_names(self, new: pl.DataFrame) -> None:
        """Take a batch's patterns not seen before (PATTERN_HASH, host, pattern) into
        `_names`; merge names when there are enough of them."""
        if new.height == 0:
            return
        self._names = pl.concat([self._names, _given_names(new)])  # `new`: copied in `add`
        if self._names.height >= self._merge_at:
            self._merge_names()

    def _merge_names(self) -> None:
        """Merge the names of the patterns seen so far, and keep the rows of each merged
        pattern under its merged one, in every table and from now on.

        Only the merges more patterns cannot undo are made (`merge_names`' `stable_only`), so
        the rows kept under a merged pattern never need to be told apart again: `finish` makes
        the others from every pattern as its URLs gave it. So the names merged are those of a
        single merge at the end, whatever the batches and however many cron runs the logs
        were read in.
        """
        moves = self._moves(stable_only=True)
        seen, merged_before = self._names.height, self._renames.index.height
        if moves.height:
            self._move(moves)
        # soon again while most patterns new since the last merge merge (a catalog), else once
        # their number doubles (a relative-link loop: 100,000 new a batch, a few to merge)
        most = 2 * (self._renames.index.height - merged_before) >= seen - self._names_at_merge
        self._merge_at = seen + (_MERGE_NAMES_AT if most else max(_MERGE_NAMES_AT, seen))
        self._names_at_merge = seen

    def _moves(self, stable_only: bool) -> pl.DataFrame:
        """(host, pattern its rows are kept under, "merged": the pattern they move to).

        Stable merges are made from the patterns rows are kept under: a merged one stands for
        all its names (a wiki's million titles are one pattern at each merge while reading,
        not a million: 16 merges took 16 of 29 s), and names new to its group join it once
        `pattern_min_names` of them are seen (the merge at the end takes in every one). That
        merge reads every pattern as its URLs gave it.
        """
        min_names = self.settings.pattern_min_names
        if stable_only:
            kept = self._names.select(s.HOST, _kept().alias(s.PATTERN)).unique()
            merged = merge_names(kept, min_names, stable_only=True)
            return merged.filter(pl.col(s.PATTERN) != pl.col(_MERGED))
        given = self._names.select(s.HOST, s.PATTERN)
        merged = merge_names(given, min_names)
        return (
            self._names.select(s.HOST, s.PATTERN, _kept())
            .join(merged, on=[s.HOST, s.PATTERN])
            .group_by(s.HOST, "_kept")
            # one pattern always, as the merges kept are stable: none is split at random
            .agg(pl.col(_MERGED).unique())
            .filter(pl.col(_MERGED).list.len() == 1)
            .select(s.HOST, pl.col("_kept").alias(s.PATTERN), pl.col(_MERGED).list.first())
            .filter(pl.col(s.PATTERN) != pl.col(_MERGED))
        )

    def _move(self, moves: pl.DataFrame) -> None:
        """Keep the rows of each host+pattern of `moves` under its "merged" one."""
        # a table at a time, each let go before the next is merged: all at once, a log whose
        # trap mints a pattern per URL (1.2M of them in 8M lines) held every table three times
        for name in _BY_PATTERN:
            self._parts[name] = [s.owned(_renamed({name: self._merged(name)}, moves, self)[name])]
        onward = moves.rename({s.PATTERN: "_kept", _MERGED: "_to"})
        self._names = (
            self._names.with_columns(_kept())
            .join(onward, on=[s.HOST, "_kept"], how="left", maintain_order="left")
            .with_columns(pl.coalesce("_to", _MERGED).alias(_MERGED))
            .drop("_kept", "_to")
        )
        self._renames = _Renames.of(self._names)
        # the cutoffs of patterns no row is kept under any more
        gone = moves.select(_PATTERN_KEY).to_series().implode()
        self._cutoffs = self._cutoffs.filter(~pl.col(s.PATTERN_HASH).is_in(gone))

    def _add_part(self, name: str, frame: pl.DataFrame) -> None:
        """Keep a batch's part of table `name` (its strings its own, as `add` makes them: not
        views into the batch, which is let go), merging the parts once there are many."""
        parts = self._parts.setdefault(name, [])
        parts.append(frame)
        later = sum(p.height for p in parts[1:])
        enough = max(_COMPACT_ROWS, _COMPACT_SHARE * parts[0].height)
        if len(parts) >= _COMPACT_EVERY or later >= enough:
            self._parts[name] = [self._merged(name, copied=True)]

    def _merged(self, name: str, copied: bool = False) -> pl.DataFrame:
        """Table `name`'s parts merged into one frame; with `copied`, its strings in buffers of
        their own (`schema.owned`), not views into the parts'."""
        table = _TABLES[name]
        parts = self._parts.get(name, [])
        if not parts:
            return _empty_table(name)
        if len(parts) == 1 and name != "urls":
            return parts[0]
        k = self.settings.url_sample_size
        if name == "urls":  # on one integer for URL and answer, as in `add` (29 against 39 ms)
            sums = [e for e in table.merge if e.meta.output_name() != s.URL_HASH]
            q = pl.concat(parts, how="vertical_relaxed").lazy().group_by(_URL_ANSWER).agg(
                pl.col(s.URL_HASH, s.STATUS, s.BYTES, s.HOST, s.PATTERN, s.URL).first(), *sums)
            q = _bottom_k(q, k, _PATTERN_KEY)
            q = q.select(_COLUMNS["urls"])
        else:
            q = (_people_merged(parts, table, k) if name == PEOPLE_URLS
                 else _merge_rows(pl.concat(parts, how="vertical_relaxed").lazy(), table))
            if table.fold is not None:
                q = table.fold(q, table)
            if table.limit is not None:
                q = table.limit(q, self)
        if copied:
            q = q.with_columns(s.copies(_text_columns(name)))
        return q.collect(engine="in-memory")

    def frames(self) -> dict[str, pl.DataFrame]:
        """The merged aggregates, one frame per table, and `names` (what cron state saves),
        with the stable merges of every pattern seen made (a cron run's new products join
        `/products/{name}` in the state once `pattern_min_names` of them are seen, and do
        not stay patterns of their own)."""
        if self._names.height > self._names_at_merge:
            self._merge_names()
        merged = {name: self._merged(name) for name in _TABLES}
        self._parts = {name: [frame] for name, frame in merged.items()}
        return {**merged, _NAMES: self._names}

    @classmethod
    def from_frames(
        cls,
        frames: Mapping[str, pl.DataFrame],
        settings: Settings,
        address_sample: int = ADDRESS_SAMPLE,
    ) -> "Tally":
        """A tally continuing from saved frames (see `frames`), whose address sample kept
        `address_sample` addresses per host+bot."""
        tally = cls(settings=settings, address_sample=address_sample)
        for name in _TABLES:
            if name in frames:
                tally._parts[name] = [frames[name]]
        people = frames.get(PEOPLE_URLS)
        if people is not None and READS_BOUND not in people.columns:  # saved before it was kept
            tally._parts[PEOPLE_URLS] = [people.with_columns(pl.col(s.HUMAN_REQUESTS).alias(READS_BOUND))]
        if _NAMES in frames:
            tally._names = frames[_NAMES]
        elif "windows" in frames:  # saved before names were kept: rows are under their own
            tally._names = _given_names(frames["windows"].unique([s.HOST, s.PATTERN]))
        tally._renames = _Renames.of(tally._names)
        tally._names_at_merge = tally._names.height
        tally._merge_at = tally._names.height + _MERGE_NAMES_AT
        return tally

    def finish(self, *, release: bool = False) -> "Traffic":
        """The aggregates as the immutable tables the detectors read, with the path segments
        that take many names merged (`patterns.merge_names`; `frames`, what cron state saves,
        keeps only the stable merges, which no later log can undo).

        With `release`, the tally lets go of its tables as the traffic is made from them (a
        copy of each fewer at a time: a log whose trap mints a pattern per URL, 1.2M patterns
        in 8M lines, peaked 0.8 GB higher without) and is spent: for a caller that keeps only
        the traffic (`analyze`, where it was given no tally to continue)."""
        k = self.settings.url_sample_size
        if release:  # each table merged, then its parts let go; and no stable merge first
            # (what `frames` makes for cron's state): the merges at the end make them too
            frames = {}
            for name in _TABLES:
                frames[name] = self._merged(name)
                self._parts.pop(name, None)
        else:
            frames = self.frames()
        moves = self._moves(stable_only=False)
        for name in _BY_PATTERN if moves.height else ():  # a table at a time, as in `_move`
            frames[name] = _renamed({name: frames.pop(name)}, moves, self)[name]
        return _finish(frames, k).replace(
            names=_final_names(self._names, moves), address_sample=self.address_sample
        )


_NAMES = "names"  # the frame of every pattern seen (Tally._names), as `frames` gives it


def _empty_names() -> pl.DataFrame:
    return _given_names(_empty_table("windows"))


def _given_names(frame: pl.DataFrame) -> pl.DataFrame:
    """Distinct host+pattern rows of `frame` (with their PATTERN_HASH, or not), as
    `Tally._names` keeps patterns not merged."""
    hashed = pl.col(s.PATTERN_HASH) if s.PATTERN_HASH in frame.columns else _PATTERN_KEY
    return frame.select(
        s.HOST,
        s.PATTERN,
        pl.lit(None, pl.String).alias(_MERGED),
        hashed.alias(s.PATTERN_HASH),
    )


def _final_names(names: pl.DataFrame, moves: pl.DataFrame | None) -> pl.DataFrame:
    """`Traffic.names`: each pattern as URLs gave it, and the one the finished tables count it
    under (where `Tally._names` keeps it, then moved by the merges made at the end)."""
    out = names.select(s.HOST, s.PATTERN, _kept())
    if moves is not None and moves.height:
        out = out.join(moves.rename({s.PATTERN: "_kept"}), on=[s.HOST, "_kept"], how="left")
        out = out.with_columns(pl.coalesce(_MERGED, "_kept").alias("_kept"))
    return _sorted(out.select(s.HOST, s.PATTERN, pl.col("_kept").alias(_MERGED)), s.HOST, s.PATTERN)


def _kept() -> pl.Expr:
    """The pattern a row of `Tally._names` is kept under."""
    return pl.coalesce(_MERGED, s.PATTERN).alias("_kept")


@dataclass(frozen=True)
class _Renames:
    """How `Tally.add` renames request rows whose pattern is merged: the hash of the pattern
    as given (PATTERN_HASH) -> "_t", a row of `targets` (the pattern it is merged into, with
    its section and hash). A catalog's rows all go to a few targets, so a row is renamed by
    one join of its hash and gathers from a small table (12 ms a batch; joining whole rows to
    a table of the new columns took 75 ms)."""

    index: pl.DataFrame
    targets: pl.DataFrame

    @classmethod
    def of(cls, names: pl.DataFrame) -> "_Renames":
        """From `Tally._names`."""
        merged = names.filter(pl.col(_MERGED).is_not_null())
        targets = merged.select(s.HOST, _MERGED).unique(maintain_order=True).with_row_index("_t")
        index = merged.join(targets, on=[s.HOST, _MERGED]).select(s.PATTERN_HASH, "_t")
        to = pl.col(_MERGED)
        return cls(
            index,
            targets.select(
                to.alias(s.PATTERN),
                section_expr(to).alias(s.SECTION),
                _key(to).alias(s.PATTERN_HASH),
            ),
        )

    def apply(self, rows: pl.DataFrame) -> pl.DataFrame:
        """Rows (with PATTERN_HASH) under the patterns they are kept under."""
        if self.index.height == 0:
            return rows
        at = rows.select(s.PATTERN_HASH).join(
            self.index, on=s.PATTERN_HASH, how="left", maintain_order="left"
        )["_t"]
        return rows.with_columns(
            pl.coalesce(pl.lit(self.targets[name]).gather(pl.lit(at)), name).alias(name)
            for name in (s.PATTERN, s.SECTION, s.PATTERN_HASH)
        )


def _renamed(
    frames: Mapping[str, pl.DataFrame], moves: pl.DataFrame, tally: Tally
) -> dict[str, pl.DataFrame]:
    """Tables keyed by pattern (`_BY_PATTERN`) with each host+pattern of `moves` renamed to
    its "merged", and the rows that then share their keys combined as partial aggregates are
    (`_Table.merge`). A URL has one pattern, so a merged pattern's URLs are its parts' URLs:
    their counts add up, and the k smallest hashes of them all are among the k smallest of
    each part (bottom-k)."""
    keys = [s.HOST, s.PATTERN]
    renamed = moves.select(*keys, _MERGED)
    out: dict[str, pl.DataFrame] = {}
    for name, frame in frames.items():
        table = _TABLES[name]
        lazy = (
            frame.lazy()
            .join(renamed.lazy(), on=keys, how="left")
            .with_columns(pl.coalesce(_MERGED, s.PATTERN).alias(s.PATTERN))
        )
        if s.SECTION in table.keys:
            section = section_expr(pl.col(_MERGED))
            lazy = lazy.with_columns(
                pl.when(pl.col(_MERGED).is_not_null()).then(section).otherwise(pl.col(s.SECTION))
                .alias(s.SECTION)
            )
        lazy = lazy.drop(_MERGED)
        if name == "urls":
            lazy = _bottom_k(lazy, tally.settings.url_sample_size, _PATTERN_KEY)
        else:
            lazy = _merge_rows(lazy, table)
            if table.limit is not None:
                lazy = table.limit(lazy, tally)
        out[name] = lazy.select(_COLUMNS[name]).collect()
    return out


@cache
def _text_columns(name: str) -> tuple[str, ...]:
    """Table `name`'s String columns: the ones that may hold views into a batch's buffers (its
    other columns are made by the aggregation, in buffers of its own; none is nested with
    strings in it)."""
    return tuple(c for c, dtype in _empty_table(name).schema.items() if dtype == pl.String)


def _empty_table(name: str) -> pl.DataFrame:
    """An empty aggregate with the right columns, made by running the table on no requests."""
    table = _TABLES[name]
    dtypes = {
        **s.REQUEST_SCHEMA,
        **s.BOT_SCHEMA,
        s.PATTERN: pl.String(),
        s.SECTION: pl.String(),
    }
    rows = s.empty(dtypes).lazy()
    rows = rows.with_columns(_DERIVED).with_columns(table.keyed)
    return rows.group_by(table.keys).agg(table.batch).collect()


@dataclass(frozen=True)
class Traffic:
    """The bounded aggregates of a set of logs; the input of every detector.

    Frames (all keyed by host):
    - `patterns`: one row per host+pattern: requests, bot/human requests, unique URLs,
      bot share of the host's bot requests, status and bot mix, first/last seen.
    - `sections`: the same per first-two-path-levels section.
    - `windows`: per host+pattern+window (`window_size`: "1d", or "1h" when the logs span
      less than two days): requests, bot requests, new distinct URLs, distinct URLs to date.
    - `statuses`, `agents` (bots only, per pattern and status), `bot_minutes`, `claims`
      (addresses claiming a search engine; a `verified` column once verified), `urls`
      (the bounded URL sample, with status, size and counts per URL), `bot_clients` (a
      bounded sample of the addresses of bots of `CROWD_KINDS`, with their requests; see
      `crowd_bots`), `claim_people` (people's requests from addresses claiming a search
      engine, in the batches where they claimed one), `people_urls` (the URLs answered
      2xx/3xx to people's reads, `_reads`, with their requests and `READS_BOUND`: every one
      of a pattern people read fewer than `url_sample_size` pages of, the most read beyond),
      `names` (every pattern as URLs gave it, "pattern", with the one the tables count it
      under, "merged": a tag's `/tag/php` is `/tag/{name}`; see `Analysis.add_patterns`).
    """

    patterns: pl.DataFrame
    sections: pl.DataFrame
    windows: pl.DataFrame
    statuses: pl.DataFrame
    agents: pl.DataFrame
    bot_minutes: pl.DataFrame
    claims: pl.DataFrame
    urls: pl.DataFrame
    window_size: str
    start: datetime | None
    end: datetime | None
    bot_clients: pl.DataFrame = field(default_factory=lambda: _empty_table("bot_clients"))
    claim_people: pl.DataFrame = field(default_factory=lambda: _empty_table("claim_people"))
    people_urls: pl.DataFrame = field(default_factory=lambda: _empty_table(PEOPLE_URLS))
    names: pl.DataFrame = field(default_factory=lambda: _final_names(_empty_names(), None))
    address_sample: int = ADDRESS_SAMPLE  # the k of `bot_clients` (Tally.address_sample)

    @cached_property
    def hosts(self) -> list[str]:
        return sorted(self.patterns[s.HOST].unique().to_list())

    @cached_property
    def people_read(self) -> pl.DataFrame:
        """(host, pattern, URL) of the URLs answered 2xx/3xx to people: the URL sample's and
        `people_urls`, the former's first, each once (made once: asked for per pattern)."""
        sampled = self.urls.filter(
            pl.col(s.STATUS).is_between(200, 399), pl.col(s.REQUESTS) > pl.col(s.BOT_REQUESTS)
        )
        columns = [s.HOST, s.PATTERN, s.URL]
        return pl.concat([sampled.select(columns), self.people_urls.select(columns)]).unique(
            maintain_order=True
        )

    def replace(self, **changes: object) -> "Traffic":
        from dataclasses import replace

        return replace(self, **changes)


def _sorted(frame: pl.DataFrame, *columns: str) -> pl.DataFrame:
    """`frame.sort(*columns)`, by one struct of them: the same order (nulls first too), but
    Polars sorts one struct column ~2.5x faster than several columns (bot_minutes of 1M lines,
    168k rows: 115 -> 45 CPU-ms)."""
    return frame.sort(pl.struct(columns))


def _window_size(start: datetime | None, end: datetime | None) -> str:
    # Per day when the logs span two days or more, else per hour (issue #4).
    if start is None or end is None or (end - start).total_seconds() >= 2 * 86400:
        return _DAY
    return _HOUR


def _finish(frames: Mapping[str, pl.DataFrame], k: int) -> Traffic:
    hourly = frames["windows"]
    start = hourly[s.FIRST_SEEN].min()
    end = hourly[s.LAST_SEEN].max()
    size = _window_size(start, end)

    fill = _sample_fill(frames["urls"])
    windows = _windows(hourly, frames["urls"], fill, size, k)
    patterns = _patterns(hourly, frames, windows, fill, k)
    sections = _sections(hourly, patterns)
    return Traffic(
        patterns=patterns,
        sections=sections,
        windows=windows,
        statuses=_sorted(frames["statuses"], s.HOST, s.PATTERN, s.STATUS),
        agents=_sorted(frames["agents"], s.HOST, s.PATTERN, s.BOT_NAME, s.STATUS),
        bot_minutes=_sorted(frames["bot_minutes"], s.HOST, s.BOT_NAME, s.MINUTE),
        claims=_sorted(frames["claims"], s.CLIENT, s.BOT_NAME, s.HOST, s.PATTERN),
        urls=_sorted(frames["urls"], s.HOST, s.PATTERN, s.URL_HASH),
        window_size=size,
        start=start,
        end=end,
        bot_clients=_sorted(frames["bot_clients"], s.HOST, s.BOT_NAME, _CLIENT_HASH),
        claim_people=_sorted(frames["claim_people"], s.HOST, s.CLIENT),
        people_urls=_sorted(frames[PEOPLE_URLS], s.HOST, s.PATTERN, s.URL_HASH),
    )


def bot_addresses(traffic: Traffic, by_host: bool = True) -> pl.DataFrame:
    """Per host (or only, with `by_host` false, across hosts) and bot of `CROWD_KINDS`: its
    requests, its distinct addresses (`_client_key`), and how evenly its requests spread over
    them.

    Addresses are exact up to `traffic.address_sample` and estimated beyond from the sample's largest
    hash (the k-minimum-values estimate, as for URLs: `_windows`). The sample is a uniform
    random choice of addresses, each with its exact requests, so it also tells whether a few
    addresses send most of the requests: "busiest_share" is the share of the busiest sampled
    address, and "spread" the sample's requests scaled to every address against the real
    total (about 1 when the requests spread evenly; far below when a few addresses outside
    the sample send most of them: one scraper among a thousand scripts of the same library).

    >>> from datetime import datetime, timezone
    >>> batch = pl.DataFrame({
    ...     "host": "-", "client": [f"10.0.{i // 250}.{i % 250}" for i in range(3000)],
    ...     "time": datetime(2026, 1, 1, tzinfo=timezone.utc), "url": "/api/feed",
    ...     "status": 200, "bytes": 10, "is_bot": True, "bot_name": "okhttp",
    ...     "bot_kind": "tool", "pattern": "/api/feed", "section": "/api"})
    >>> tally = Tally(); tally.add(batch)
    >>> bot_addresses(tally.finish()).rows()  # 3,000 addresses: estimated
    [('-', 'okhttp', 3000, 3022, 0.0003, 1.01)]
    """
    k = traffic.address_sample
    keys = [s.HOST, s.BOT_NAME] if by_host else [s.BOT_NAME]
    # Across hosts, the k smallest hashes of the hosts' samples are the k smallest of all.
    sample = (
        traffic.bot_clients.group_by(*keys, _CLIENT_HASH)
        .agg(_sum(s.REQUESTS))
        .filter(pl.col(_CLIENT_HASH).rank("dense").over(keys) <= k)
    )
    n = pl.len()
    kth = pl.col(_CLIENT_HASH).max().cast(pl.Float64) / 2.0**64
    estimate = pl.when(n >= k).then(((k - 1) / kth).round()).otherwise(n).cast(pl.Int64)
    requests = traffic.agents.group_by(keys).agg(_sum(s.REQUESTS).alias("_total"))
    total = pl.col("_total").clip(lower_bound=1)
    return (
        sample.group_by(keys)
        .agg(
            estimate.alias("addresses"),
            pl.col(s.REQUESTS).max().alias("_busiest"),
            pl.col(s.REQUESTS).mean().alias("_mean"),
        )
        .join(requests, on=keys, how="left")
        .select(
            *keys,
            pl.col("_total").fill_null(0).alias(s.REQUESTS),
            "addresses",
            (pl.col("_busiest") / total).round(4).alias("busiest_share"),
            (pl.col("_mean") * pl.col("addresses") / total).round(2).alias("spread"),
        )
        .sort(keys)
    )


def crowd_bots(traffic: Traffic, settings: Settings) -> pl.DataFrame:
    """The bots (`bot_addresses` across hosts: one app may call several) whose requests
    spread evenly over `crowd_min_addresses` addresses or more: an HTTP library, an unnamed
    agent or a link previewer on that many machines, no one of them sending more than
    `crowd_max_address_share` of the requests, is many people's app, not one crawler, and a
    rule against its user agent would lock them all out (a shop's Android app sends
    `okhttp/4.12.0` from every phone). Such a bot is judged as people are: no aggressive_bot
    finding, no server rule, and no finding on a pattern almost only it fetches (see
    `detectors.run_detectors`). Columns: bot_name, requests, addresses.

    Where a few addresses send most of the requests (one scraper among the scripts that
    share its library's name: "spread" under 1/2, or a busiest address over the share), the
    bot is judged as any other.
    """
    return (
        bot_addresses(traffic, by_host=False)
        .filter((pl.col("addresses") >= settings.crowd_min_addresses) & spread_evenly(settings))
        .select(s.BOT_NAME, s.REQUESTS, "addresses")
    )


def spread_evenly(settings: Settings) -> pl.Expr:
    """Over `bot_addresses` rows: the requests spread evenly over the addresses (no address
    sends over `crowd_max_address_share` of them, and the sample's average explains them)."""
    return (pl.col("busiest_share") <= settings.crowd_max_address_share) & pl.col(
        "spread"
    ).is_between(0.5, 2.0)


def _windows(
    hourly: pl.DataFrame, urls: pl.DataFrame, fill: pl.DataFrame, size: str, k: int
) -> pl.DataFrame:
    """Requests and distinct URLs per host+pattern+window, from the URL sample.

    A pattern with fewer than k distinct URLs has them all in the sample: its counts are
    exact. One with more has in the sample a uniform random k of them (the k smallest hashes),
    each with its true first window (a URL in the final sample was in every earlier one), so
    its counts are scaled by its estimated total: (k - 1) / (k-th smallest hash / 2^64), the
    k-minimum-values estimate, about 1/sqrt(k) relative error (3% at k = 1,000). Counts to
    date are scaled, so they never fall, and kept at or under the requests made so far (each
    URL is a request at least); new URLs are their differences.
    """
    keys = [s.HOST, s.PATTERN]
    firsts = (
        urls.group_by(*keys, s.URL_HASH)
        .agg(pl.col(s.FIRST_SEEN).min().dt.truncate(size).alias(s.WINDOW))
        .group_by(*keys, s.WINDOW)
        .agg(pl.len().alias("_firsts"))
    )
    n = pl.col("_n")
    scale = pl.when(n >= k).then((k - 1) / (pl.col("_kth").cast(pl.Float64) / 2.0**64) / n)
    estimate = (pl.col("_firsts").cum_sum().over(keys) * pl.col("_scale")).round()
    to_date = pl.col(s.URLS_TO_DATE)
    return (
        hourly.lazy()
        .group_by(*keys, pl.col(s.WINDOW).dt.truncate(size))
        .agg(_sum(s.REQUESTS), _sum(s.BOT_REQUESTS))
        .join(firsts.lazy(), on=[*keys, s.WINDOW], how="full", coalesce=True)
        .join(fill.lazy().select(*keys, scale.alias("_scale")), on=keys, how="left")
        .with_columns(
            pl.col(s.REQUESTS, s.BOT_REQUESTS, "_firsts").fill_null(0),
            pl.col("_scale").fill_null(1.0),
        )
        .sort(*keys, s.WINDOW)
        .with_columns(
            pl.min_horizontal(  # clipped before the cast: a freak sample cannot overflow it
                estimate.clip(upper_bound=2.0**53).cast(pl.Int64),
                pl.col(s.REQUESTS).cum_sum().over(keys),
            ).alias(s.URLS_TO_DATE)
        )
        .with_columns((to_date - to_date.shift(1, fill_value=0).over(keys)).alias(s.NEW_URLS))
        .select(*keys, s.WINDOW, s.REQUESTS, s.BOT_REQUESTS, s.NEW_URLS, s.URLS_TO_DATE)
        .collect()
    )


def _patterns(
    hourly: pl.DataFrame,
    frames: Mapping[str, pl.DataFrame],
    windows: pl.DataFrame,
    fill: pl.DataFrame,
    k: int,
) -> pl.DataFrame:
    keys = [s.HOST, s.PATTERN]
    exact = fill.select(*keys, (pl.col("_n") < k).alias(s.UNIQUE_URLS_EXACT))
    statuses = (
        frames["statuses"]
        .sort([s.REQUESTS, s.STATUS], descending=[True, False])  # ties in status order
        .group_by(keys, maintain_order=True)
        .agg(pl.struct(s.STATUS, s.REQUESTS).alias(s.STATUSES))
    )
    bots = (
        frames["agents"]
        .group_by(*keys, s.BOT_NAME)
        .agg(_sum(s.REQUESTS))
        .sort(s.REQUESTS, s.BOT_NAME, descending=[True, False])
        .group_by(keys, maintain_order=True)
        .agg(pl.struct(s.BOT_NAME, s.REQUESTS).alias(s.BOTS))
    )
    unique = windows.group_by(keys).agg(_sum(s.NEW_URLS).alias(s.UNIQUE_URLS))
    return (
        hourly.group_by(*keys, s.SECTION)
        .agg(_sum(s.REQUESTS), _sum(s.BOT_REQUESTS), *_seen())
        .with_columns(
            (pl.col(s.REQUESTS) - pl.col(s.BOT_REQUESTS)).alias(s.HUMAN_REQUESTS),
            _share(s.BOT_REQUESTS).alias(s.BOT_SHARE),
        )
        .join(unique, on=keys, how="left")
        .join(exact, on=keys, how="left")
        .join(statuses, on=keys, how="left")
        .join(bots, on=keys, how="left")
        .with_columns(
            pl.col(s.UNIQUE_URLS).fill_null(0),
            pl.col(s.UNIQUE_URLS_EXACT).fill_null(True),
            pl.col(s.BOTS).fill_null([]),
        )
        .select(
            s.HOST,
            s.PATTERN,
            s.SECTION,
            s.REQUESTS,
            s.BOT_REQUESTS,
            s.HUMAN_REQUESTS,
            s.UNIQUE_URLS,
            s.UNIQUE_URLS_EXACT,
            s.BOT_SHARE,
            s.STATUSES,
            s.BOTS,
            s.FIRST_SEEN,
            s.LAST_SEEN,
        )
        .sort([s.BOT_REQUESTS, s.REQUESTS, s.HOST, s.PATTERN], descending=[True, True, False, False])
    )


def _share(column: str) -> pl.Expr:
    """This row's share of its host's total of `column` (0 when the host has none)."""
    total = pl.col(column).sum().over(s.HOST)
    return pl.when(total > 0).then(pl.col(column) / total).otherwise(0.0)


def _sections(hourly: pl.DataFrame, patterns: pl.DataFrame) -> pl.DataFrame:
    counts = patterns.group_by(s.HOST, s.SECTION).agg(
        _sum(s.UNIQUE_URLS),
        pl.col(s.UNIQUE_URLS_EXACT).all(),
        pl.len().cast(pl.Int64).alias("patterns"),
    )
    return (
        hourly.group_by(s.HOST, s.SECTION)
        .agg(_sum(s.REQUESTS), _sum(s.BOT_REQUESTS), *_seen())
        .with_columns(_share(s.BOT_REQUESTS).alias(s.BOT_SHARE))
        .join(counts, on=[s.HOST, s.SECTION], how="left")
        .sort([s.BOT_REQUESTS, s.HOST, s.SECTION], descending=[True, False, False])
    )


def tally(batches: Iterable[pl.DataFrame], settings: Settings | None = None) -> Traffic:
    """Reduce batches of annotated requests (bot and pattern columns) to `Traffic`."""
    acc = Tally(settings=Settings.of(settings))
    for batch in batches:
        acc.add(batch)
    return acc.finish()

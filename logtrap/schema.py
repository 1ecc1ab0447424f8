"""Column names and dtypes, declared once.

Every stage reads and writes these names; nothing else spells a column name as a string.
"""

from __future__ import annotations

from collections.abc import Sequence

import polars as pl

# -- one row per request, as the reader produces it ------------------------------------------
HOST = "host"  # virtual host; "-" when the log format has none
# client address as logged (IPv4, IPv6 or a resolved host name); behind a proxy, the one it
# passed on (`formats._client`)
CLIENT = "client"
TIME = "time"  # request time, timezone-aware, normalised to UTC
METHOD = "method"
URL = "url"  # the request target exactly as requested ("/a/b?x=1")
PATH = "path"  # URL before "?"
QUERY = "query"  # URL after "?", null when there is none
PROTOCOL = "protocol"
STATUS = "status"
BYTES = "bytes"  # response size; null where the log says "-"
REFERER = "referer"
USER_AGENT = "user_agent"
REQUEST_TIME = "request_time"  # seconds, where the format has it
SOURCE = "source"  # the file the line came from ("-" for stdin)

TIME_DTYPE = pl.Datetime("us", "UTC")

REQUEST_SCHEMA: dict[str, pl.DataType] = {
    HOST: pl.String(),
    CLIENT: pl.String(),
    TIME: TIME_DTYPE,
    METHOD: pl.String(),
    URL: pl.String(),
    PATH: pl.String(),
    QUERY: pl.String(),
    PROTOCOL: pl.String(),
    STATUS: pl.UInt16(),
    BYTES: pl.Int64(),
    REFERER: pl.String(),
    USER_AGENT: pl.String(),
    REQUEST_TIME: pl.Float64(),
    SOURCE: pl.String(),
}

# -- added by bots.py (once per distinct user agent) -----------------------------------------
IS_BOT = "is_bot"
BOT_NAME = "bot_name"  # stable family name ("Googlebot"); null for browsers
BOT_KIND = "bot_kind"  # search | ai | seo | social | monitoring | tool | unknown; null for browsers

BOT_KINDS = ("search", "ai", "seo", "social", "monitoring", "tool", "unknown")

BOT_SCHEMA: dict[str, pl.DataType] = {
    IS_BOT: pl.Boolean(),
    BOT_NAME: pl.String(),
    BOT_KIND: pl.String(),
}

# -- added by verify.py (once per distinct address claiming a search engine) -----------------
VERIFIED = "verified"  # "verified" | "fake" | "unverified"; null when no search engine is claimed
VERIFICATIONS = ("verified", "fake", "unverified")

# -- added by patterns.py (once per distinct URL) --------------------------------------------
PATTERN = "pattern"  # "/article/{n}?page"
SECTION = "section"  # the first two path levels ("/shop/shoes")
WINDOW = "window"  # start of the time window (hour or day) a request falls in

# -- the rejected-line record ----------------------------------------------------------------
LINE_NO = "line_no"
LINE = "line"
REASON = "reason"

REJECTED_SCHEMA: dict[str, pl.DataType] = {
    SOURCE: pl.String(),
    LINE_NO: pl.Int64(),
    LINE: pl.String(),
    REASON: pl.String(),
}

# -- findings (findings.py) -------------------------------------------------------------------
KIND = "kind"
SEVERITY = "severity"
REQUESTS = "requests"
WASTED_REQUESTS = "wasted_requests"
EXAMPLES = "examples"
EVIDENCE = "evidence"  # JSON object text: the numbers behind the verdict
ADVICE = "advice"

SEVERITIES = ("info", "warning", "critical")
SEVERITY_DTYPE = pl.Enum(list(SEVERITIES))

FINDING_SCHEMA: dict[str, pl.DataType] = {
    KIND: pl.String(),
    SEVERITY: SEVERITY_DTYPE,
    HOST: pl.String(),
    PATTERN: pl.String(),
    REQUESTS: pl.Int64(),
    WASTED_REQUESTS: pl.Int64(),
    EXAMPLES: pl.List(pl.String()),
    EVIDENCE: pl.String(),
    ADVICE: pl.String(),
}


def empty(schema: dict[str, pl.DataType]) -> pl.DataFrame:
    """An empty frame with exactly these columns and dtypes.

    >>> empty({"a": pl.Int64()}).shape
    (0, 1)
    """
    return pl.DataFrame(schema=schema)

# -- aggregates (traffic.py): per host + pattern, per window, per bot -------------------------
BOT_REQUESTS = "bot_requests"
HUMAN_REQUESTS = "human_requests"
UNIQUE_URLS = "unique_urls"
# False when unique_urls is estimated from the URL sample (a pattern with url_sample_size
# distinct URLs or more; see traffic._windows)
UNIQUE_URLS_EXACT = "unique_urls_exact"
BOT_SHARE = "bot_share"  # share of the host's bot requests that went to this pattern
STATUSES = "statuses"
BOTS = "bots"
FIRST_SEEN = "first_seen"
LAST_SEEN = "last_seen"
NEW_URLS = "new_urls"  # distinct URLs first seen in this window
URLS_TO_DATE = "urls_to_date"  # distinct URLs seen up to and including this window
MINUTE = "minute"
URL_HASH = "url_hash"
PATTERN_HASH = "pattern_hash"


def owned(frame: pl.DataFrame) -> pl.DataFrame:
    """The same frame, its strings copied into buffers of their own.

    Polars strings are views into shared buffers: a 100-row slice of a batch keeps the whole
    batch's bytes alive. Anything kept across batches (aggregates, caches) goes through this,
    or memory would grow with every batch read (measured: 60 batches, 880 MB instead of 90).

    String columns are written anew (`pl.format`: 0.15 ms for a table of a few hundred
    rows, where a round trip through Arrow took 0.45 ms, nine tables a batch); a frame with
    nested columns goes through Arrow whole.

    >>> big = pl.DataFrame({"url": [f"/page/{i}" for i in range(1000)] + [None]})
    >>> owned(big.tail(3)).rows()
    [('/page/998',), ('/page/999',), (None,)]
    """
    if any(dtype.is_nested() for dtype in frame.dtypes):
        return pl.from_arrow(frame.to_arrow()).cast(frame.schema)  # type: ignore[return-value]
    strings = [name for name, dtype in frame.schema.items() if dtype == pl.String()]
    return frame.with_columns(copies(strings)) if strings else frame


def copies(columns: Sequence[str]) -> list[pl.Expr]:
    """These String columns written anew, into buffers of their own: `owned` as a step of a
    query, where the columns are known (no collect of its own)."""
    return [pl.format("{}", name).alias(name) for name in columns]

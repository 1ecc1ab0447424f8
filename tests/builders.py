"""Small builders for detector tests: request rows -> frame -> Traffic.

    rows = [{"url": "/a?x=1", "is_bot": True, "bot_name": "Googlebot"}] * 3
    traffic = traffic_of(requests_frame(rows))

Every column of REQUEST_SCHEMA plus IS_BOT / BOT_NAME / BOT_KIND has a default, so a row only
names what the test is about. Times advance one second per row from START unless given.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import datetime, timedelta, timezone
from typing import Any

import polars as pl

from logtrap import schema as s
from logtrap.patterns import add_patterns
from logtrap.settings import Settings
from logtrap.traffic import Tally, Traffic

START = datetime(2026, 1, 1, tzinfo=timezone.utc)

DEFAULTS: dict[str, Any] = {
    s.HOST: "-",
    s.CLIENT: "192.0.2.1",
    s.METHOD: "GET",
    s.URL: "/",
    s.PROTOCOL: "HTTP/1.1",
    s.STATUS: 200,
    s.BYTES: 1000,
    s.REFERER: "-",
    s.USER_AGENT: "Mozilla/5.0",
    s.REQUEST_TIME: None,
    s.SOURCE: "test.log",
    s.IS_BOT: False,
    s.BOT_NAME: None,
    s.BOT_KIND: None,
}

BOT = {s.IS_BOT: True, s.BOT_NAME: "Googlebot", s.BOT_KIND: "search",
       s.USER_AGENT: "Mozilla/5.0 (compatible; Googlebot/2.1)"}  # fmt: skip
HUMAN = {s.IS_BOT: False, s.BOT_NAME: None, s.BOT_KIND: None}


def requests_frame(rows: Iterable[Mapping[str, Any]]) -> pl.DataFrame:
    """A request frame (REQUEST_SCHEMA + bot columns) from partial rows; PATH/QUERY from URL."""
    full = []
    for i, row in enumerate(rows):
        r = {**DEFAULTS, s.TIME: START + timedelta(seconds=i), **row}
        url = r[s.URL]  # None: a request line with no URL ("-")
        path, sep, query = (url or "").partition("?")
        r.setdefault(s.PATH, path if url is not None else None)
        r.setdefault(s.QUERY, query if sep else None)
        full.append(r)
    schema = {**s.REQUEST_SCHEMA, **s.BOT_SCHEMA}
    return pl.DataFrame(full, schema=schema) if full else s.empty(schema)


def bots(urls: Iterable[str], **extra: Any) -> list[dict[str, Any]]:
    """One bot (Googlebot by default) request per URL."""
    return [{**BOT, s.URL: u, **extra} for u in urls]


def humans(urls: Iterable[str], **extra: Any) -> list[dict[str, Any]]:
    """One browser request per URL."""
    return [{**HUMAN, s.URL: u, **extra} for u in urls]


def traffic_of(frame: pl.DataFrame, settings: Settings | None = None) -> Traffic:
    """Patterns added, tallied and finished: what a detector reads."""
    settings = settings or Settings()
    tally = Tally(settings=settings)
    tally.add(add_patterns(frame, settings))
    return tally.finish()


def empty_traffic(settings: Settings | None = None) -> Traffic:
    """The Traffic of no requests at all."""
    return Tally(settings=settings or Settings()).finish()


def pinned_string_bytes(frame: pl.DataFrame) -> tuple[int, int]:
    """(bytes of the string buffers the frame keeps alive, bytes of its strings that need one).

    Polars strings are views: a string longer than 12 bytes points into a shared buffer, and a
    frame keeps every buffer any of its strings points into. Equal numbers mean the frame
    pins nothing beyond its own strings.
    """
    arrow = frame.to_arrow(compat_level=pl.CompatLevel.newest())
    pinned = sum(
        buf.size
        for column in arrow.columns
        for chunk in column.chunks
        if str(chunk.type) == "string_view"
        for buf in chunk.buffers()[2:]  # validity and views come first, then the data buffers
        if buf is not None
    )
    lengths = [pl.col(c).str.len_bytes() for c, t in frame.schema.items() if t == pl.String]
    if not lengths:
        return pinned, 0
    needed = frame.select(pl.sum_horizontal(n.filter(n > 12).sum() for n in lengths)).item()
    return pinned, needed


def letters(i: int) -> str:
    """A distinct letters-only word per number (no placeholder rule turns it into one)."""
    word = ""
    while True:
        word += chr(ord("a") + i % 26)
        i //= 26
        if not i:
            return word

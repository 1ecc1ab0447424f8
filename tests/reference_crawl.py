"""The reference experiment of DESIGN.md, simulated: a naive crawler on a site with five traps.

Not a test file: a module the tests import. No network: the site is a pure function
``url -> (status, size, outlinks)`` and the crawler is an event-driven simulation, both seeded.

The site (551 real pages: ``/``, 50 sections ``/section/{n}``, 500 articles ``/article/{n}/{n}``)
- home links the 50 sections; a section links its 10 articles, except that 51 articles are
  orphans (only in the sitemap, which a naive crawler does not read);
- calendar: every section's sidebar opens its event calendar at its own month
  (``/calendar?date=YYYY-MM``, the sections' months three years apart, 1879..2026); a calendar
  page links the next month, forever;
- session ids: the section template mints a fresh session id into its "home" link
  (``/?sessionid=<26 chars>``); the home page served for such a URL is a copy of the home page
  (same size) whose "home" link carries yet another new id;
- pagination: even sections have a "next" link to ``?page=2``; every page past the last (there is
  only one real page) answers 200 with the same small empty list and another "next";
- facets: odd sections link a filter ``?color=..``; every filtered page links the next filter
  combination (color, size, sort in every order: 180 combinations per section), same size for
  the same filters in any order;
- relative loop: sections 7, 19, 31 and 43 have a relative link ``related/``, so
  ``/section/7/related/`` links ``/section/7/related/related/`` and so on; the site's router
  answers 414 above 1,000 characters (~124 levels; the budget runs out long before).

The crawler: 20 workers, a FIFO frontier (breadth first), exact-URL dedup only, a budget of 5,000
fetches, no robots.txt, no cookies. Each trap is a chain (one new URL per fetched page), so
after the first two levels the frontier holds a steady ~154 chain heads (50 calendar, 50
session, 25 pagination, 25 facet, 4 loop) and every pass over it advances each chain once. That
reproduces the source's split (source -> this model, seed 0): calendar months 1,456 -> 1,462,
home-page copies 1,451 -> 1,463, facet+pagination pages 1,474 -> 1,459 (730 + 729), relative loop
~119 -> 116, real pages ~500 -> 500 (51 never fetched: the crawl never finishes the real site).

>>> lines, truth = simulate_reference_crawl()
>>> len(lines), truth["counts"]["real"]
(5000, 500)
"""

from __future__ import annotations

import heapq
import random
import zlib
from collections import Counter, deque
from datetime import datetime, timedelta, timezone
from pathlib import Path

SECTIONS = 50
ARTICLES_PER_SECTION = 10
BUDGET = 5000
WORKERS = 20
MAX_URL = 1000  # the router's limit: longer URLs answer 414
LOOP_SECTIONS = (7, 19, 31, 43)
UA = "NaiveCrawler/1.0 (+https://crawler.example.org/about)"
CLIENT = "203.0.113.50"
START = datetime(2026, 11, 20, 9, 0, 0, tzinfo=timezone.utc)

COLORS = ("red", "blue", "green", "black", "white")
SIZES = ("s", "m", "l", "xl")
SORTS = ("price", "newest", "rating")
PARAM_ORDERS = (("color", "size", "sort"), ("color", "sort", "size"), ("size", "color", "sort"),
                ("size", "sort", "color"), ("sort", "color", "size"), ("sort", "size", "color"))

HOME_SIZE = 24817
EMPTY_PAGE_SIZE = 3904
SESSION_CHARS = "abcdefghijklmnopqrstuvwxyz0123456789"

# The kinds a fetched URL can be, as reported in the truth.
KINDS = ("real", "calendar", "session_id", "pagination", "facets", "relative_loop")


def _size(key: str, lo: int, hi: int) -> int:
    return lo + zlib.crc32(key.encode()) % (hi - lo)


def _article_id(section: int, k: int) -> int:
    return section * 100 + k * 7 + 3  # /article/{section}/{id}: ids distinct per site


def _orphans() -> set[tuple[int, int]]:
    """51 articles no page links to: the last one of every section, plus one more."""
    return {(s, ARTICLES_PER_SECTION - 1) for s in range(1, SECTIONS + 1)} | {(1, 0)}


def _facet_url(section: int, i: int) -> str:
    """The i-th filter combination of a section: value combination x parameter order."""
    combo, order = divmod(i, len(PARAM_ORDERS))
    c, rest = divmod(combo, len(SIZES) * len(SORTS))
    z, o = divmod(rest, len(SORTS))
    values = {"color": COLORS[c % len(COLORS)], "size": SIZES[z], "sort": SORTS[o]}
    query = "&".join(f"{k}={values[k]}" for k in PARAM_ORDERS[order])
    return f"/section/{section}?{query}"


FACETS_PER_SECTION = len(COLORS) * len(SIZES) * len(SORTS) * len(PARAM_ORDERS)


class Site:
    """The reference site: ``respond(url) -> (status, size, kind, outlinks)``."""

    def __init__(self, rng: random.Random):
        self.rng = rng  # mints session ids
        self.orphans = _orphans()
        self.facet_index: dict[str, int] = {}

    def _session_link(self) -> str:
        return "/?sessionid=" + "".join(self.rng.choices(SESSION_CHARS, k=26))

    def respond(self, url: str) -> tuple[int, int, str, list[str]]:
        path, _, query = url.partition("?")
        parts = [p for p in path.split("/") if p]
        if len(url) > MAX_URL:
            return 414, 226, "relative_loop" if "/related/" in url else "real", []
        if path == "/":
            if query.startswith("sessionid="):
                return 200, HOME_SIZE, "session_id", [self._session_link()]
            return 200, HOME_SIZE, "real", [f"/section/{n}" for n in range(1, SECTIONS + 1)]
        if parts[0] == "calendar":
            year, month = map(int, query.split("=")[1].split("-"))
            year, month = (year + 1, 1) if month == 12 else (year, month + 1)
            return 200, 7012 + 4 * (month % 3), "calendar", [f"/calendar?date={year:04d}-{month:02d}"]
        if parts[0] == "article":
            return 200, _size(url, 18000, 64000), "real", ["/", f"/section/{parts[1]}"]
        if parts[0] == "section":
            n = int(parts[1])
            if len(parts) > 2:  # relative loop: the same related page, one level deeper
                return 200, 15220 + n, "relative_loop", [url + "related/"]
            if query.startswith("page="):
                page = int(query[5:])
                return 200, EMPTY_PAGE_SIZE, "pagination", [f"/section/{n}?page={page + 1}"]
            if query:
                i = self.facet_index[url]
                filters = dict(kv.split("=") for kv in query.split("&"))
                size = _size(f"{n}|{filters.get('color')}|{filters.get('size')}", 6000, 30000)
                nxt = _facet_url(n, (i + 1) % FACETS_PER_SECTION)
                self.facet_index.setdefault(nxt, (i + 1) % FACETS_PER_SECTION)
                return 200, size, "facets", [nxt]
            links = [f"/article/{n}/{_article_id(n, k)}" for k in range(ARTICLES_PER_SECTION)
                     if (n, k) not in self.orphans]
            start = 2026 * 12 + 10 - 36 * (n - 1)  # the section's calendar month
            links.append(f"/calendar?date={start // 12:04d}-{start % 12 + 1:02d}")
            links.append(self._session_link())
            if n % 2 == 0:
                links.append(f"/section/{n}?page=2")
            else:
                first = _facet_url(n, 0)
                self.facet_index.setdefault(first, 0)
                links.append(first)
            if n in LOOP_SECTIONS:
                links.append(f"/section/{n}/related/")
            return 200, _size(url, 30000, 52000), "real", links
        return 404, 4120, "real", []


def simulate_reference_crawl(seed: int = 0) -> tuple[list[str], dict]:
    """Crawl the reference site; return (combined-format log lines, truth).

    truth: ``kind_by_url`` (each fetched URL -> "real" or its trap kind), ``counts`` per kind
    (plus "facets_and_pagination" and "traps"), ``real_pages``, ``real_unfetched``, ``patterns``.

    >>> _, truth = simulate_reference_crawl()
    >>> sorted(truth["counts"])[:3]
    ['calendar', 'facets', 'facets_and_pagination']
    """
    rng = random.Random(seed)
    site = Site(rng)
    frontier: deque[str] = deque(["/"])
    seen = {"/"}
    running: list[tuple[float, int, str, float, tuple]] = []  # (done_at, seq, url, started, response)
    free = WORKERS
    now = 0.0
    fetched = 0
    seq = 0
    lines: list[tuple[float, int, str]] = []
    kind_by_url: dict[str, str] = {}
    while fetched < BUDGET and (frontier or running):
        while free and frontier and fetched + len(running) < BUDGET:
            url = frontier.popleft()
            status, size, kind, links = site.respond(url)
            latency = (1.5 + rng.random() * 5) if kind == "real" else (0.3 + rng.random() * 1.2)  # seconds
            seq += 1
            heapq.heappush(running, (now + latency, seq, url, now, (status, size, kind, links)))
            free -= 1
        done_at, s, url, started, (status, size, kind, links) = heapq.heappop(running)
        now = done_at
        free += 1
        fetched += 1
        kind_by_url[url] = kind
        t = (START + timedelta(seconds=started)).strftime("%d/%b/%Y:%H:%M:%S %z")
        lines.append((done_at, s, f'{CLIENT} - - [{t}] "GET {url} HTTP/1.1" {status} {size} "-" "{UA}"'))
        for link in links:
            if link not in seen:
                seen.add(link)
                frontier.append(link)
    counts = Counter(kind_by_url.values())
    counts = {k: counts.get(k, 0) for k in KINDS}
    counts["facets_and_pagination"] = counts["facets"] + counts["pagination"]
    counts["traps"] = BUDGET - counts["real"]
    real_pages = 1 + SECTIONS + SECTIONS * ARTICLES_PER_SECTION
    truth = {
        "kind_by_url": kind_by_url,
        "counts": counts,
        "real_pages": real_pages,
        "real_unfetched": real_pages - counts["real"],
        "user_agent": UA,
        "client": CLIENT,
        "patterns": {
            "real": ["/", "/section/{n}", "/article/{n}/{n}"],
            "calendar": "/calendar?date",
            "session_id": "/?sessionid",
            "pagination": "/section/{n}?page",
            "facets": "/section/{n}?color&size&sort",
            "relative_loop": "/section/{n}/related/related/... (one pattern per depth)",
        },
    }
    return [line for _, _, line in sorted(lines)], truth


def write_reference_log(path: str | Path) -> dict:
    """Write the reference crawl as a combined-format log at `path`; return its truth."""
    lines, truth = simulate_reference_crawl()
    Path(path).write_text("\n".join(lines) + "\n")
    return truth


if __name__ == "__main__":
    _, truth = simulate_reference_crawl()
    print(truth["counts"], "real unfetched:", truth["real_unfetched"])

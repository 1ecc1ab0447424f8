"""robots.txt: the narrowest rules that block each trap, verified (the merge: robots_file).

A rule must block every logged URL of its trap (a calendar's: its future, empty or repeated
dates, by year prefixes where the whole parameter would block a year people read) and no known
content URL: the sitemaps, plus the URLs the log shows as content (on patterns without a trap
finding: 2xx/3xx answers to people, 2xx to a verified search engine; where the log records no
user agent, every 2xx/3xx), and the pages people read on any trap's pattern whose pages can be
real (calendar, pagination, soft_404, the symptoms). A rule that would block content is
narrowed (another candidate, or Allow lines for a few content URLs, or one by the start more
of them share) or withheld, and the reason names the content URL that stopped it.

Candidates are judged in bulk by `robots_match` (RFC 9309 matching as Polars expressions,
equal to Protego's answers by a property test), then the rule chosen is confirmed with
Protego, an RFC 9309 matcher (tests/test_robots.py pins it to Google's published examples):
every content URL its Disallow lines touch, the content URL a reason names, the trap's
examples and an even spread of its other URLs and of the content URLs. Should the two ever
disagree, the rule is withheld and the reason says so.
"""

from __future__ import annotations

import functools
import os
import re
from bisect import bisect_left
from collections import Counter
from collections.abc import Collection, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace
from typing import NamedTuple
from urllib.parse import unquote, urlsplit

import polars as pl

from logtrap import findings as f
from logtrap import schema as s
from logtrap.bots import NOT_LOGGED_NAME
from logtrap.detectors import _family as family
from logtrap.detectors import _param as param
from logtrap.detectors import _shape
from logtrap.detectors import _sort as sorts
from logtrap.detectors import calendar, facets, growing_pattern, pagination, relative_loop, session_id
from logtrap.patterns import TRACKING, is_tracking_name
from logtrap.robots_match import (
    CHECK_AGENT,
    absolute,
    blocked,
    blocked_expr,
    matcher,
    normalise,
)
from logtrap.settings import Settings
from logtrap.traffic import Traffic

__all__ = ["CHECK_AGENT", "absolute", "blocked", "matcher"]  # the verifier, re-exported

# Kinds robots.txt can address: the URL shape is the trap. budget_hog and growing_pattern are
# symptoms; they get a rule of their own only when no URL-shape finding covers the pattern.
SHAPE_KINDS = (
    "calendar", "session_id", "facets", "pagination", "soft_404",
    "relative_loop", "random_token", "internal_search",
)  # fmt: skip
SYMPTOM_KINDS = ("budget_hog", "growing_pattern")
ROBOTS_KINDS = SHAPE_KINDS + SYMPTOM_KINDS
# A symptom's pattern (budget_hog, growing_pattern) this share of whose logged URLs answer
# 301 or 308 may be a moved site's old URLs (judgement: a few may answer 404 for products gone
# since); a trap kind's are its own (short links minted per page view redirect too)
_MOVED_SHARE = 0.9
# A session_id finding on a campaign or click id (session_id.TRACKING_ADVICE)
TRACKING_REASON = (
    "tracking parameters are on the URLs people land on from ads, newsletters and search "
    "results (Google adds srsltid to its own): a Disallow keeps search engines from the URL "
    "people click and from its rel=canonical; point rel=canonical at the URL without them "
    "(the finding's advice)"
)
# Kinds whose own pattern can hold real pages (page 2 of a list, an existing product, a
# calendar's day with events): the pages people fetched with a 2xx/3xx answer stay allowed.
OWN_CONTENT_KINDS = ("calendar", "pagination", "soft_404") + SYMPTOM_KINDS
OWN = "log, a page of the trap's own pattern fetched by people"
OTHER_OWN = "log, a page people fetched on another trap's pattern whose pages can be real"
OWN_DATED = "log, a date of the calendar's own pattern with a page of its own (neither empty nor far off)"
OWN_PAGED = "log, a page of the list's own pattern with content of its own (not past its last page)"
OWN_FILTERED = "log, a page of the trap's own pattern filtered once: one filter, or one value per filter, where its trap is sets of them"
OTHER_DATED = "log, a date with a page of its own on another calendar's pattern"
NEAR_DATED = "log, a date of the calendar's own pattern from the logs' last month to its horizon, where content may still come"
UNNAMED = "log, a page of a pattern no finding names, which the rule's lines reached"
OWN_NOT_LOGGED = (
    "log, a page of the trap's own pattern fetched without a user agent in the log "
    "(people's requests cannot be told apart)"
)
# A calendar's line by dates: it ends in a year's start, a month or a day (`/events/203`,
# `/calendar/2027/`, `/calendar/2026/12$`), not in the parameter's `=` (the whole parameter)
_DATE_LINE = re.compile(r"[0-9](?:/|\$)?$")
# content URLs allowed back by `Allow: <url>$`; more get one line by their shared start
# (`_shared_start`), or the rule is withheld
MAX_ALLOW_LINES = 3
# Trap and content URLs Protego re-checks per chosen rule besides the ones it must (judgement:
# a few milliseconds a rule; the property test is what proves the bulk matcher equal)
CONFIRM_SPREAD = 32
_NORMAL = "robots_normal"  # the URL as rules match it (robots_match.normalise)
PITFALL = (
    "robots.txt does not remove URLs that are already indexed, and a disallowed URL's noindex "
    "is never seen: if these URLs are in search results, serve `noindex` (meta tag or "
    "X-Robots-Tag) first, wait until they drop out, then add the Disallow lines."
)
_PLACEHOLDER = re.compile(r"\{[a-z]+\}")
_RULE_VALUE_SAFE = re.compile(r"[!-~]")  # printable ASCII without space
_HEX2 = re.compile(r"%[0-9A-Fa-f]{2}")


@dataclass(frozen=True)
class RobotsRule:
    """One suggested robots.txt rule (one or more lines) for one finding."""

    host: str
    kind: str
    pattern: str | None
    group: str  # "*" or a crawler's product token
    lines: tuple[str, ...]  # "Disallow: /x", "Allow: /x$"
    status: str  # emitted | narrowed | withheld
    reason: str
    saved_bot_requests: int = 0
    blocked_examples: tuple[str, ...] = ()
    left_open: int = 0  # a calendar's wasted dates among its real ones, which no line takes

    @property
    def text(self) -> str:
        return "\n".join(self.lines)


@dataclass(frozen=True)
class _Unit:
    lines: tuple[str, ...]
    tier: int
    order: int
    blocks: frozenset[int] = frozenset()  # indices of trap URLs blocked
    content_hits: tuple[tuple[str, str], ...] = ()  # (content URL, source) blocked


# -- text helpers ------------------------------------------------------------------------------


def escape_value(text: str) -> str:
    """A literal URL piece as a robots.txt rule value: `#`, `*`, `$`, spaces, controls and
    non-ASCII percent-encoded (RFC 9309 2.2.2-2.2.3), everything else left as requested.

    >>> escape_value("/a b#c*$/é")
    '/a%20b%23c%2A%24/%C3%A9'
    >>> escape_value("/x%2fy%zz")
    '/x%2Fy%zz'
    """
    out = []
    i = 0
    while i < len(text):
        ch = text[i]
        if ch == "%" and _HEX2.match(text, i):
            out.append(text[i : i + 3].upper())
            i += 3
            continue
        # a "%" that starts no escape stays as it is: matchers compare it literally
        if ch in "#*$" or not _RULE_VALUE_SAFE.fullmatch(ch):
            out.append("".join(f"%{b:02X}" for b in ch.encode("utf-8")))
        else:
            out.append(ch)
        i += 1
    return "".join(out)


def comment(text: str) -> str:
    """Text safe inside a `#` comment: one line, printable ASCII, never ending in a backslash
    (other characters escaped).

    >>> comment("a\\nUser-agent: *\\u2028b")
    'a\\\\x0aUser-agent: *\\\\u2028b'
    """
    # "\\" is escaped too: a config line ending in a backslash continues onto the next (Apache)
    return "".join(
        ch if " " <= ch <= "~" and ch != "\\" else (f"\\x{ord(ch):02x}" if ord(ch) < 256 else f"\\u{ord(ch):04x}")
        for ch in text
    )


def url_path(url: str) -> str:
    """The path and query of a URL (absolute or not), the part robots.txt rules match.

    >>> url_path("https://shop.example/a?b=1#top"), url_path("/x")
    ('/a?b=1', '/x')
    """
    if url.startswith("/"):
        return url.split("#", 1)[0]
    parts = urlsplit(url)
    return (parts.path or "/") + (f"?{parts.query}" if parts.query else "")


# -- content URLs ------------------------------------------------------------------------------


def _host_key(host: str) -> str:
    host = host.lower().split(":", 1)[0]
    return host[4:] if host.startswith("www.") else host


@functools.lru_cache(maxsize=4)
def _host_keys(hosts: tuple[str, ...]) -> frozenset[str]:
    """`_host_key` of every log host, made once per run, not once per host (9,000 hosts of
    a scanner-heavy log: 81 million calls)."""
    return frozenset(_host_key(h) for h in hosts)


def sitemap_paths(sitemap_urls: Sequence[str], host: str, hosts: Sequence[str]) -> list[str]:
    """The sitemap URLs that belong to a log host (all of them when the log has no host
    names, or when no log host matches the sitemap's host), as paths.

    >>> sitemap_paths(["https://www.shop.example/a", "https://blog.example/b"], "shop.example",
    ...     ["shop.example", "blog.example"])
    ['/a']
    """
    if not sitemap_urls:
        return []
    known = _host_keys(tuple(hosts))
    out = []
    for url in sitemap_urls:
        netloc = urlsplit(url).netloc
        key = _host_key(netloc) if netloc else ""
        if host == "-" or not key or key == _host_key(host) or key not in known:
            out.append(url_path(url))
    return out


def log_content(traffic: Traffic, trap_patterns: pl.DataFrame, host: str) -> pl.DataFrame:
    """URLs the log shows as content for a host, on patterns with no trap finding: 2xx/3xx
    answers to people, 2xx answers on a pattern a verified search engine crawls, 2xx/3xx
    answers on a pattern requested without a user agent in the log (people cannot be told
    apart there)."""
    urls = traffic.urls.filter(pl.col(s.HOST) == host, pl.col(s.STATUS).is_between(200, 399))
    urls = urls.join(trap_patterns.select(s.HOST, s.PATTERN), on=[s.HOST, s.PATTERN], how="anti")
    claims = traffic.claims.filter(pl.col(s.HOST) == host)
    # only a verified search engine says "content": crawlers fetch traps too (that is the
    # problem), and an unverified claim may be anyone
    if s.VERIFIED not in claims.columns:
        claims = claims.with_columns(pl.lit(None, pl.String).alias(s.VERIFIED))
    claims = claims.filter(pl.col(s.VERIFIED) == "verified")
    crawled = claims.select(s.HOST, s.PATTERN).unique()
    # a page it was answered, not a redirect: an engine follows a short link's 301 as it
    # follows a trap's (people's 3xx stay: a page's canonical slash, a login's redirect)
    searched = urls.join(crawled, on=[s.HOST, s.PATTERN], how="semi").filter(
        pl.col(s.STATUS).is_between(200, 299)
    )
    human = traffic.people_read.filter(pl.col(s.HOST) == host).join(
        trap_patterns.select(s.HOST, s.PATTERN), on=[s.HOST, s.PATTERN], how="anti"
    )
    unknown = urls.filter(pl.col(s.PATTERN).is_in(_unlogged_patterns(traffic, host)))
    return pl.concat([human.select(s.URL), searched.select(s.URL), unknown.select(s.URL)]).unique(
        maintain_order=True
    )


def _unlogged_patterns(traffic: Traffic, host: str) -> list[str]:
    """A host's patterns requested without a user agent in the log (`bots.NOT_LOGGED_NAME`):
    any of their pages may be one people read."""
    unlogged = traffic.agents.filter(pl.col(s.HOST) == host, pl.col(s.BOT_NAME) == NOT_LOGGED_NAME)
    return unlogged[s.PATTERN].unique().to_list()


# -- candidate rules ---------------------------------------------------------------------------


def _glob(path: str) -> str:
    """A pattern's path with placeholders as `*`: `/shop/{n}/x` -> `/shop/*/x`."""
    pieces = _PLACEHOLDER.split(path)
    return re.sub(r"\*+", "*", "*".join(escape_value(p) for p in pieces))


# `/color-{value}`, `/color/{value}` (`patterns.merge_names`)
_PATH_FACET = re.compile(r"/[^/{}]+(?:[-_]|/)\{value\}")


def _two_facets(path: str) -> str | None:
    """A pattern's path up to its second facet's value: the trap in the combination.

    >>> _two_facets("/shoes/color-{value}/size-{value}/brand-{value}/"), _two_facets("/c/size-{value}")
    ('/shoes/color-{value}/size-', None)
    >>> _two_facets("/p/shoes/color/{value}/size/{value}.html")
    '/p/shoes/color/{value}/size/'
    """
    found = list(_PATH_FACET.finditer(path))
    return path[: found[1].end() - len("{value}")] if len(found) >= 2 else None


def _pairs(urls: Sequence[str]) -> pl.DataFrame:
    """(name, value) of every query parameter of these URLs, decoded as `parse_qsl` decodes
    them (`+` a space, %-escapes as UTF-8): split in Polars, the few pieces with an escape or
    a `+` decoded in Python.

    >>> _pairs(["/a?x=1&y", "/b?x=%C3%A9&&z=a+b", "/c"]).rows()
    [('x', '1'), ('y', ''), ('x', 'é'), ('z', 'a b')]
    """
    piece = pl.col("piece")
    frame = (
        pl.LazyFrame({"piece": list(urls)}, schema={"piece": pl.String})
        .select(piece.str.splitn("?", 2).struct.field("field_1").str.split("&").alias("piece"))
        .explode("piece")
        .filter(piece != "")
        .select(
            piece.str.splitn("=", 2).struct.field("field_0").alias("name"),
            piece.str.splitn("=", 2).struct.field("field_1").fill_null("").alias("value"),
        )
        .collect()
    )
    coded = pl.col("name").str.contains("[%+]") | pl.col("value").str.contains("[%+]")
    if not frame.select(coded.any()).item():
        return frame
    decode = [pl.col(c).map_elements(_unquote_plus, return_dtype=pl.String) for c in ("name", "value")]
    return frame.with_columns(pl.when(coded).then(d).otherwise(pl.col(d.meta.output_name())) for d in decode)


def _unquote_plus(text: str) -> str:
    return unquote(text.replace("+", " "))


def _params(pairs: pl.DataFrame) -> list[tuple[str, int]]:
    """Query parameter names (as spelled) with their distinct value counts, most varied
    first."""
    counts = pairs.group_by("name").agg(pl.col("value").n_unique())
    return sorted(counts.iter_rows(), key=lambda nv: (-nv[1], nv[0]))


# A parameter in every trap URL chooses what the path serves where it has one value there,
# or a few (a wiki's `?do=recent` and `?do=revisions`, two views; judgement), and is named
# as front controllers name their routes: a filter's few values in a trap's sample, or its
# one (`?type=condo` on every URL of a set of filters), beside others people read, are no
# route
_ROUTE_VALUES = 3
_ROUTE_NAMES = re.compile(r"(?i)^(?:route|option|view|task|layout|controller|do|action|act|module|mod|mode|op|cmd|fc|page_type)$")


def routes(trap: Sequence[str], others: Sequence[str]) -> frozenset[str]:
    """Where the path of the trap serves other pages by a parameter (named as a route,
    `_ROUTE_NAMES`, in every trap URL with one value or a few, `_ROUTE_VALUES`, and another
    on `others`, logged URLs of the same path: a front controller's `?route=product/category`
    beside `?route=product/product`, Joomla's `?view=`, a wiki's `?do=`), every parameter
    name `others` hold: a line by one of them, or by the count of parameters, takes the
    path's other pages (`?*&Itemid=` an article's, `?*&*&*&` a product's linked from a sorted
    list). Else none.

    >>> sorted(routes(["/i?route=a&x=1", "/i?route=a&x=2"], ["/i?route=b&id=7&x=1"]))
    ['id', 'route', 'x']
    >>> routes(["/i?route=a&x=1", "/i?route=a&x=2"], ["/i?route=a"])
    frozenset()
    """
    if not others:
        return frozenset()
    pairs = _pairs(trap).group_by("name").agg(pl.len().alias("n"), pl.col("value").unique())
    few = pl.col("value").list.len() <= min(_ROUTE_VALUES, max(1, len(trap) // 2))
    chosen = few & pl.col("name").str.contains(_ROUTE_NAMES.pattern)
    by = dict(pairs.filter((pl.col("n") == len(trap)) & chosen).select("name", "value").iter_rows())
    if not by:  # no route: every pair of `others` is its own (`suggest` 6% quicker at 1M lines)
        return frozenset()
    elsewhere = _pairs(others).unique()
    if all(v in by.get(n, (v,)) for n, v in elsewhere.rows()):
        return frozenset()
    return frozenset(elsewhere["name"].to_list())


def _repeat(path: str) -> str | None:
    """The repeated segment run of a relative-link loop: `/b/related/related/x` -> `related`;
    or, with no run repeated back to back, the first segment that comes again further on
    (two relative links taking turns: `/docs/guide/faq/guide/` -> `guide`).

    >>> _repeat("/b/x/y/x/y/"), _repeat("/docs/guide/faq/guide/"), _repeat("/a/b/c")
    ('x/y', 'guide', None)
    """
    segs = [x for x in path.split("/") if x]
    for size in range(1, len(segs) // 2 + 1):
        for i in range(len(segs) - 2 * size + 1):
            if segs[i : i + size] == segs[i + size : i + 2 * size]:
                return "/".join(segs[i : i + size])
    seen: set[str] = set()
    for seg in segs:
        if seg in seen:
            return seg
        seen.add(seg)
    return None


# What joins several values in one path segment: a store's tags (`/collections/shoes/red+wool`,
# Shopify's robots.txt disallows `/collections/*+*`), a filter's list (`/c/red,blue`). Written
# as is: escaped (`%2B`), it is a name's own character (Stack Overflow's `/tagged/c%2b%2b`, a
# real tag), and a URL holding one is no joined URL. RFC 9309 matchers take `+` and `%2B` alike
# (Protego does), so the `+` line reaches such names too: they must not be among the trap's,
# and none unseen (the line is a candidate only where the URL sample holds the whole pattern).
_JOINERS = ("+", ",")


def _joined(path: str, trap: Sequence[str]) -> tuple[str, ...]:
    """The line by the joiner every trap URL holds, as is, in one of the pattern's variable
    segments (the first such), kept to the pattern up to that segment
    (`Disallow: /forum/*/tags/*+`, not `/forum/*+`, which takes a thread `/forum/3/c++-tips`);
    none where a trap URL holds it escaped only (a tag `c%2b%2b`), or no literal segment comes
    before it (a site-wide `/*+`).

    >>> _joined("/c/{n}/tags/{name}", ["/c/3/tags/red+wool", "/c/4/tags/blue+s"])
    ('Disallow: /c/*/tags/*+',)
    >>> _joined("/c/{n}/tags/{name}", ["/c/3/tags/red+wool", "/c/4/tags/c%2b%2b"])
    ()
    >>> _joined("/{n}/tags/{name}", ["/3/tags/red+wool"]), _joined("/{name}", ["/red+wool"])
    (('Disallow: /*/tags/*+',), ())
    """
    segments = path.split("/")
    values = [url_path(u).split("?", 1)[0].split("/") for u in trap]
    if not values or any(len(v) != len(segments) for v in values):
        return ()
    for i, segment in enumerate(segments):
        if not _PLACEHOLDER.search(segment):
            continue
        for joiner in _JOINERS:
            if not all(joiner in v[i] for v in values):
                continue
            if not any(s and not _PLACEHOLDER.search(s) for s in segments[:i]):
                return ()  # nothing literal before it
            return (f"Disallow: {_glob('/'.join(segments[:i]))}/*{joiner}",)
    return ()


# Parameter names that carry each kind's trap value (judgement, from common platforms).
_KEY_NAMES = {
    "calendar": re.compile(r"(?i)^(date|day|month|year|week|cal|d|m|y|ym|time|from|to)$"),
    "internal_search": re.compile(r"(?i)^(q|s|search|query|keywords?|term|text|k|w)$"),
    "pagination": re.compile(rf"(?i)^(?:{'|'.join(pagination.PAGE_PARAMS)})$"),
}
_DATE_VALUE = re.compile(r"^\d{4}([-/._]?\d{1,2}){0,2}$")


def _key_params(kind: str, pairs: pl.DataFrame) -> tuple[list[str], list[str]]:
    """(key parameters, other parameters worth a rule) for a trap's query parameters: those
    that vary, then those with one value in every trap URL (MediaWiki's red links,
    `?title=X&action=edit&redlink=1`: `&redlink=` is the trap's mark where `title` names
    content and a line by the count of parameters takes the site's other views).

    >>> _key_params("growing_pattern", _pairs(["/w?title=A&action=edit&redlink=1",
    ...                                         "/w?title=B&action=edit&redlink=1"]))
    ([], ['title', 'action', 'redlink'])
    """
    params = _params(pairs)
    hint = _KEY_NAMES.get(kind)
    dated = set()
    if kind == "calendar":
        values = pairs.group_by("name").agg(pl.col("value").unique()).iter_rows()
        dated = {n for n, vs in values if any(_DATE_VALUE.match(v) for v in vs)}
    key = [n for n, _ in params if n in dated or (hint is not None and hint.match(n))]
    # a list's page is pagination's trap, or a search's: another trap's line on it takes the
    # list's pages (a facet finding over Joomla's listings narrowed to `?*&limitstart=`)
    paged = _KEY_NAMES[pagination.KIND]
    kept = [(n, count) for n, count in params
            if n not in key and (kind == "internal_search" or not paged.match(n))]
    return key, [n for n, count in kept if count > 1] + [n for n, count in kept if count == 1]


def candidates(
    kind: str, pattern: str, trap: Sequence[str], settings: Settings, open_after: int | None = None,
    *, whole: bool = False, routed: Collection[str] = (),
) -> list[_Unit]:
    """Candidate rules for a trap, narrowest first (tier order), as units of lines
    (`open_after`: a calendar's horizon, see `date_spans`; `whole`: the URL sample holds the
    trap's whole pattern, which a joiner's line needs, `_joined`; `routed`: the parameter names
    a line may not be by, where the path serves other pages by parameters, `routes`).

    >>> [u.lines[0] for u in candidates("random_token", "/s/{token}", ["/s/a8fk21qz"], Settings())]
    ['Disallow: /s/']
    """
    path, _, query = pattern.partition("?")
    glob = _glob(path)
    units: list[tuple[tuple[str, ...], int]] = []
    pairs = _pairs(trap)
    key, rest = _key_params(kind, pairs)
    if kind == "session_id":
        # a session's name (sid, jsessionid, WordPress's replytocom) is appended to every
        # link, whatever the path: a rule for the whole site; a parameter found by its values
        # alone (`?id=` a code browser's commit) may name content elsewhere: its path's rules
        sessions = session_id.named_params(settings) | set(session_id.named_by_values(pairs))
        names = [n for n, _ in _params(pairs) if n.lower() in sessions]
        for name in names:
            value = escape_value(name)
            units.append(((f"Disallow: /*?{value}=", f"Disallow: /*&{value}="), 0))
        for name in re.findall(r";([^;/?=]+)", path):  # matrix form: /cart;jsessionid=AB12
            units.append(((f"Disallow: /*;{escape_value(name)}=",), 0))
    if kind == "relative_loop" and query:  # a parameter appended again and again: its pair
        # twice, for the whole site (a switcher's links are on every page), else on the path;
        # nothing broader (the pattern's other URLs are its pages, with the parameter once)
        for name in dict.fromkeys(n for u in trap for n in relative_loop.repeated_names(url_path(u))):
            value = escape_value(name)
            units.append(((f"Disallow: /*?{value}=*&{value}=", f"Disallow: /*&{value}=*&{value}="), 0))
            units.append(((f"Disallow: {glob}?{value}=*&{value}=", f"Disallow: {glob}?*&{value}=*&{value}="), 1))
        return _units(units)
    if kind == "relative_loop":
        runs = {r for r in (_repeat(url_path(u).split("?", 1)[0]) for u in trap) if r}
        for run in sorted(runs):
            loop = escape_value(f"{run}/{run}/")
            apart = escape_value(f"{run}/") + "*/" + escape_value(f"{run}/")  # run/.../run/
            units += [((f"Disallow: /*/{loop}",), 0), ((f"Disallow: /{loop}",), 0)]
            units += [((f"Disallow: /*/{apart}",), 0), ((f"Disallow: /{apart}",), 0)]
            units.append(((f"Disallow: /*{loop}",), 1))
    if not path:
        return _units(units)  # a finding about many patterns: only the shape rules above
    units += _date_units(path, trap, open_after)
    # where the path serves other pages by a parameter's values (`routes`), a line by the
    # count of parameters, or by a name the path's other pages carry, takes them: it took an
    # article's print view (Joomla), or product pages linked from a sorted list (OpenCart)
    many = 0 if routed else query.count("&")
    key, rest = [n for n in key if n not in routed], [n for n in rest if n not in routed]
    if kind == "internal_search" and routed:  # a search is a route's every page: its lines
        # (OpenCart's `?route=product/search`), as its URLs spell it
        raw = Counter(p for u in trap for p in set(url_path(u).partition("?")[2].split("&")))
        for piece, n in sorted(raw.items()):
            if n == len(trap) and _ROUTE_NAMES.match(piece.partition("=")[0]) and piece.partition("=")[2]:
                value = escape_value(piece)
                units.append(((f"Disallow: {glob}?{value}&", f"Disallow: {glob}?{value}$",
                               f"Disallow: {glob}?*&{value}&", f"Disallow: {glob}?*&{value}$"), 2))
    if kind == "facets" and many:  # the trap is the combination: as many parameters or more
        units.append(((f"Disallow: {glob}?{'*&' * many}",), 1))
    if kind == "facets" and facets.PACKED_PARAM in query.split("&"):  # two filters or more
        # packed in one parameter (`?q=Size-S/Color-White`), their `/` as the trap's URLs spell it
        value = escape_value(facets.PACKED_PARAM)
        queries = [url_path(u).partition("?")[2].upper() for u in trap]
        spelled = [sep for sep in ("/", "%2F") if any(sep in q for q in queries)]
        if spelled:
            units.append((tuple(f"Disallow: {glob}?{start}{value}=*{sep}"
                                for sep in spelled for start in ("", "*&")), 1))
    if kind == "facets":  # a filter's values listed (`?filter_color=red,blue`), as spelled
        pieces = (p.partition("=") for u in trap for p in url_path(u).partition("?")[2].split("&"))
        listed = {(name, sep.upper()) for name, _, value in pieces
                  for sep in re.findall(facets.LIST_SEPARATOR, value)}
        tracking = {n for n, _ in listed if is_tracking_name(n, settings)}  # no filter's list
        lines = [f"Disallow: {glob}?{start}{escape_value(name)}=*{escape_value(sep)}"
                 for name, sep in sorted(listed) if name not in tracking for start in ("", "*&")]
        if lines:
            units.append((tuple(lines), 1))
    two = _two_facets(path) if kind == "facets" else None
    if two:  # facets in the path: its first two in their order, whatever follows
        units.append(((f"Disallow: {_glob(two)}",), 1))
    if kind == pagination.KIND:  # its trap is the page number: a line by another parameter
        # (a sort's `?*&order=`), or by their count (`?*&`), takes every page of the list in
        # that order
        rest, many = [], 0
    for names, tier in ((key, 2), (rest, 5)):
        for name in names:
            value = escape_value(name)
            units += [((f"Disallow: {glob}?{value}=",), tier), ((f"Disallow: {glob}?*&{value}=",), tier + 1)]
    if kind == "calendar":  # after the whole parameter's: chosen where those block content
        units += _year_param_units(glob, key, trap, open_after)
    if many:  # narrower than one line per parameter when the trap is in the combinations
        units.append(((f"Disallow: {glob}?{'*&' * many}",), 4))
    if query and not routed:
        units.append(((f"Disallow: {glob}?",), 6))
    if "{slug}" in path:  # three words or more: past the pages of one or two words
        words = [_glob(path.replace("{slug}", sep.join(["{w}"] * 3))).rstrip("*")
                 for sep in ("-", "_")]
        units += [((f"Disallow: {w}",), 6) for w in words]
        units.append((tuple(f"Disallow: {w}" for w in words), 6))
    exact = glob.rstrip("*")
    if not query and exact == glob:
        units.append(((f"Disallow: {glob}$",), 6))
    joined = _joined(path, trap) if whole else ()
    if joined:  # values joined in one segment: `/collections/shoes/*+` (Shopify's own), after
        # the lines above (a search's `/search/*/$` takes one-word searches too)
        units.append((joined, 6))
    if routed:
        return _units(units)
    units.append(((f"Disallow: {exact}",), 7))
    literal = exact.split("*", 1)[0]
    literal = literal[: literal.rfind("/") + 1] if "*" in exact else literal
    if len(literal) > 1:
        units.append(((f"Disallow: {literal}",), 8))
    return _units(units)


_YEAR_FIRST = re.compile(r"(1[5-9]|2[0-9])[0-9]{2}")
_MAX_DATE_LINES = 12  # lines one date rule may take (judgement: a decade each, a century)
# lines one rule by years may take (judgement: 2027..2199 takes 11; a run's first and last
# years by their months up to 6 each; two runs, the walk back before a site's first event and
# on past its last: an events calendar walked to 2012 and to 2040 took 25 and was withheld)
_MAX_YEAR_LINES = 36


def _runs(ordered: Sequence[int]) -> list[tuple[int, int]]:
    runs, start = [], ordered[0]
    for before, after in zip(ordered, ordered[1:]):
        if after != before + 1:
            runs.append((start, before))
            start = after
    runs.append((start, ordered[-1]))
    return runs


# the month after a year (2026-12, 2026/12/01, 202612, 20261201): two digits, then a day's
# two or no digit
_MONTH = re.compile(r"([-/._]?)(0[1-9]|1[0-2])(?=\d\d(?!\d)|(?!\d))")
# ...or one or two digits, then the day's separator (2026-5-1, 2026/11/3), or the end of a
# path whose last segments are the year and the month (2026/5/, 2026/5$, or 2026/5? before
# a query: `_segment_dates`)
_LOOSE_MONTH = re.compile(r"([-/._])(1[0-2]|[1-9])(?:([-/._])(?=\d)|([/$?])$)")
_LAST_YEAR = 2199  # where a walk into the future is blocked to (judgement: `21` ends it)


def date_spans(dates: Sequence[str], open_after: int | None = None) -> list[list[str]]:
    """Prefixes for dates written year first, widest first: by years from the first to the
    last (`year_prefixes`), then run by run (the empty months before a site's launch and the
    far future, without the years between, which people read); then, where every date has a
    month (two digits, or one or two and the day's separator after: `2026-5-`, or the end of
    the path: `2026/5$`, `2026/5/`, see `_segment_dates`), both again
    with the partly walked years at their ends by their months (the walk starts the month
    after the last real one: its year is partly people's).
    `open_after` (a month, as year * 12 + month - 1): where the last run goes past it (into
    the far future, all wasted), it runs on to 2199, where the walk goes next. No prefixes if
    a date does not start with a year.

    >>> date_spans(["1998-05", "1999-01", "2000-02", "2001-03", "2029-04", "2030-12"])[:2]
    [['1998', '1999', '200', '201', '202', '2030'], ['1998', '1999', '2000', '2001', '2029', '2030']]
    >>> date_spans(["2026-12-01", "2027-12-02", "2031-01-01"])[-1]
    ['2026-12', '2027', '2031-01']
    >>> date_spans(["2008-01", "2008-02", "2026-05", "2027-11"])[-1]
    ['2008-01', '2008-02', '2026-05', '2026-06', '2026-07', '2026-08', '2026-09', '2026-1', '2027-0', '2027-10', '2027-11']
    >>> date_spans(["2028-04-02", "2031-01-01"], open_after=2028 * 12 + 2)[-2]
    ['2028-04', '2028-05', '2028-06', '2028-07', '2028-08', '2028-09', '2028-1', '2029', '203', '204', '205', '206', '207', '208', '209', '21']
    >>> date_spans(["2026-5-1", "2026-11-30", "2027-1-2"])[-1]
    ['2026-5-', '2026-6-', '2026-7-', '2026-8-', '2026-9-', '2026-10-', '2026-11-', '2026-12-', '2027-1-']
    >>> date_spans(["2026/9$", "2026/10$", "2027/1$"])[-1]
    ['2026/9$', '2026/10$', '2026/11$', '2026/12$', '2027/1$']
    >>> date_spans(["01-05-2024"])
    []
    """
    years: set[int] = set()
    months: dict[int, set[int]] = {}
    padded, loose = set(), set()  # the months' forms: (separator), (separator, after)
    for text in dates:
        year = _YEAR_FIRST.match(text)
        if year is None:
            return []
        years.add(int(year.group()))
        month = _MONTH.match(text, year.end())
        free = _LOOSE_MONTH.match(text, year.end())
        if month is not None or free is not None:
            months.setdefault(int(year.group()), set()).add(int((month or free).group(2)))  # type: ignore[union-attr]
        padded.add(month and month.group(1))
        loose.add(free and (free.group(1), free.group(3) or free.group(4), len(free.group(2))))
    if not years:
        return []
    runs = _runs(sorted(years))
    # months written without a leading zero (2026-5-1): each month a line of its own, its day's
    # separator after it (`2026-1` would be October to December too)
    unpadded = None not in loose and any(n == 1 for _, _, n in loose) and len({f[:2] for f in loose}) == 1
    sep, after = (next(iter(loose))[:2] if unpadded else
                  (padded.pop() if len(padded) == 1 else None, ""))
    last = runs[-1][1]
    open_end = sep is not None and open_after is not None and last * 12 + max(months[last]) - 1 > open_after

    def by_months(year: int, first: int, last: int) -> list[str]:
        if (first, last) == (1, 12):
            return [str(year)]
        if unpadded:
            return [f"{year}{sep}{month}{after}" for month in range(first, last + 1)]
        out, month = [], first
        while month <= last:
            if month == 1 and last >= 9:
                out.append(f"{year}{sep}0")
                month = 10
            elif month == 10 and last == 12:
                out.append(f"{year}{sep}1")
                month = 13
            else:
                out.append(f"{year}{sep}{month:02d}")
                month += 1
        return out

    def prefixes(runs: list[tuple[int, int]], edged: bool) -> list[str]:
        out = []
        for i, (first, last) in enumerate(runs):
            ends = open_end and i == len(runs) - 1
            head = edged and min(months[first]) > 1  # years partly walked
            tail = edged and not ends and max(months[last]) < 12
            if head and first == last and not ends:
                out += by_months(first, min(months[first]), max(months[first]))
                continue
            out += by_months(first, min(months[first]), 12) if head else []
            out += year_prefixes(first + head, _LAST_YEAR if ends else last - tail)
            out += by_months(last, 1, max(months[last])) if tail else []
        return out

    whole = [(runs[0][0], last)]
    shapes = [(whole, False), (runs, False)] + ([(whole, True), (runs, True)] if sep is not None else [])
    spans: list[list[str]] = []
    for shape in shapes:
        if (spanned := prefixes(*shape)) not in spans:
            spans.append(spanned)
    return spans


def year_prefixes(first: int, last: int) -> list[str]:
    """The fewest prefixes of four-digit years that match every year from `first` to `last`
    and no other (a decade as three digits, a century as two).

    >>> year_prefixes(2027, 2199)
    ['2027', '2028', '2029', '203', '204', '205', '206', '207', '208', '209', '21']
    """
    out, year = [], first
    while year <= last:
        size = next(n for n in (1000, 100, 10, 1) if year % n == 0 and year + n - 1 <= last)
        out.append(str(year)[: 5 - len(str(size))])
        year += size
    return out


def _date_units(path: str, trap: Sequence[str], open_after: int | None = None) -> list[tuple[tuple[str, ...], int]]:
    """Rules for a date in the path (`/events/{date}`, or a year and a month in segments of
    their own, `_segment_dates`) by the decades, then the centuries, its trap's dates begin
    with (`Disallow: /events/203`, ... or `/events/20`), then by the years from its first to
    its last, and by the months of the years at a run's edges (`date_spans`): the section
    itself (`/events/`), its named pages (`/events/summer-fest`) and the years and months
    outside the trap stay open. A year that is a segment of its own is blocked by its months
    (`/calendar/2027/`), its own page left to its pattern.

    >>> _date_units("/events/{date}", ["/events/2031-01-01", "/events/2090-12-01"])[:2]
    [(('Disallow: /events/203', 'Disallow: /events/209'), 6), (('Disallow: /events/20',), 6)]
    >>> _date_units("/w/{slug}/{date}", ["/w/oslo/2026-10-01", "/w/rome/2027-12-02"])[-2:]
    [(('Disallow: /w/*/2026', 'Disallow: /w/*/2027'), 6), (('Disallow: /w/*/2026-1', 'Disallow: /w/*/2027'), 6)]
    >>> _date_units("/calendar/{n}/{n}", ["/calendar/2026/12", "/calendar/2027/1"])[-1]
    (('Disallow: /calendar/2026/12$', 'Disallow: /calendar/2027/1$'), 6)
    """
    found = _date_segment(path, trap) if "{date}" in path else _segment_dates(path, trap)
    if found is None:
        return []
    base, dates = found
    glob = _glob(base)
    units = []
    for prefixes in ({d[:3] for d in dates}, {d[:2] for d in dates}):  # decades, centuries
        if 0 < len(prefixes) <= _MAX_DATE_LINES:
            lines = tuple(f"Disallow: {glob}{p}" for p in sorted(prefixes))
            units.append((lines, 6))
    whole_year = "/" if "{date}" not in path else ""  # the year a segment: its months
    for spanned in date_spans(dates, open_after):
        if len(spanned) <= _MAX_YEAR_LINES:
            spanned = [p + whole_year if len(p) == 4 else p for p in spanned]
            units.append((tuple(f"Disallow: {glob}{p}" for p in spanned), 6))
    return units


def _date_segment(path: str, trap: Sequence[str]) -> tuple[str, list[str]] | None:
    """(the path before it, the dates) of a pattern's `{date}` segment in its trap's URLs;
    None where a date does not start with its year (01-05-2024: no prefix says it)."""
    base = path[: path.index("{date}")]
    # the segment holding the date, and its literal start (`day-` in `/e/day-{date}`)
    at, lead = base.count("/"), base.rpartition("/")[2]
    if _PLACEHOLDER.search(lead):
        return None  # another variable part in its segment: the year cannot be found by its place
    dates = []
    for url in trap:
        parts = url_path(url).partition("?")[0].split("/")
        segment = parts[at] if len(parts) > at else ""
        if not segment.startswith(lead) or _YEAR_FIRST.match(segment, len(lead)) is None:
            return None
        dates.append(segment[len(lead) :])
    return base, dates


# a year and a month (and a day) as a path's last segments, ending there or in a slash:
# `/calendar/2028/3`, `/events/2028/03/`, `/calendar/2028/3/14` (a year is `{n}` in a pattern)
_SEGMENT_TAILS = (("{n}", "{n}"), ("{n}", "{n}", ""), ("{n}", "{n}", "{n}"), ("{n}", "{n}", "{n}", ""))
_MONTH_SEGMENT = re.compile(r"0?[1-9]|1[0-2]")
_DAY_SEGMENT = re.compile(r"0?[1-9]|[12][0-9]|3[01]")


def _segment_dates(path: str, trap: Sequence[str]) -> tuple[str, list[str]] | None:
    """(the path before the year, the dates) of a pattern ending in a year, a month and maybe
    a day in segments of their own (`/calendar/{n}/{n}`), written as in the URL from the year
    on, `$` where the path ends after the month (`2026/1$`: `2026/1` would take October to
    December too), or `?` where a query follows it (`2026/1?` matches `2026/1?view=month`,
    RFC 9309 matching `?` as itself, and not `2026/10?view=month`; `$` matches neither);
    None where a trap URL holds no such date there (an id, not a year).
    Only at the path's end: before a page's own segments (`/2012/01/a-post/`) the year is a
    folder of pages, not a calendar's.

    >>> _segment_dates("/c/{n}/{n}", ["/c/2026/12", "/c/2027/1"])
    ('/c/', ['2026/12$', '2027/1$'])
    >>> _segment_dates("/c/{n}/{n}", ["/c/2026/12?view=month", "/c/2027/1?view=list"])
    ('/c/', ['2026/12?', '2027/1?'])
    >>> _segment_dates("/c/{n}/{n}/", ["/c/2026/12/", "/c/48113/1/"]) is None
    True
    """
    segs = path.split("/")
    at = next((i for i in range(1, len(segs)) if tuple(segs[i:]) in _SEGMENT_TAILS), None)
    if at is None:
        return None
    dates = []
    for url in trap:
        parts = url_path(url).partition("?")[0].split("/")
        tail = parts[at:]
        day = len(segs) > at + 2 and segs[at + 2] == "{n}"
        if (len(parts) != len(segs) or _YEAR_FIRST.fullmatch(tail[0]) is None
                or _MONTH_SEGMENT.fullmatch(tail[1]) is None
                or (day and _DAY_SEGMENT.fullmatch(tail[2]) is None)):
            return None
        end = "?" if "?" in url_path(url) else "$"  # the month's end: the query's, or the URL's
        dates.append("/".join(tail) + (end if len(tail) == 2 else ""))
    return "/".join(segs[:at]) + "/", dates


def _year_param_units(
    glob: str, names: Sequence[str], trap: Sequence[str], open_after: int | None = None
) -> list[tuple[tuple[str, ...], int]]:
    """Rules for a calendar's date parameter by the years its trap's values begin with, from
    the first to the last (`Disallow: /standings?season=2027`, ... `=21`), and by months at
    a run's edges (`date_spans`): the years people
    read stay open, which a rule over the whole parameter would block.

    >>> _year_param_units("/t", ["season"], ["/t?season=2030&w=1", "/t?w=2&season=2041-42"])[0]
    (('Disallow: /t?season=203', 'Disallow: /t?season=2040', 'Disallow: /t?season=2041', 'Disallow: /t?*&season=203', 'Disallow: /t?*&season=2040', 'Disallow: /t?*&season=2041'), 4)
    """
    units = []
    for name in names:
        dates = []
        first = later = False
        for url in trap:
            pieces = url_path(url).partition("?")[2].split("&")
            at = next((i for i, p in enumerate(pieces) if p.startswith(f"{name}=")), None)
            year = None if at is None else _YEAR_FIRST.match(pieces[at], len(name) + 1)
            if year is None or (pieces[at][year.end() : year.end() + 1].isdigit()
                                and _MONTH.match(pieces[at], year.end()) is None):
                break  # a URL without a year there (nor a compact date): no prefix says it
            dates.append(pieces[at][len(name) + 1 :])
            first, later = first or at == 0, later or at > 0
        else:
            value = escape_value(name)
            for prefixes in date_spans(dates, open_after):
                lines = [f"Disallow: {glob}?{value}={p}" for p in prefixes if first]
                lines += [f"Disallow: {glob}?*&{value}={p}" for p in prefixes if later]
                if len(lines) <= _MAX_YEAR_LINES:
                    units.append((tuple(lines), 4))
    return units


def _units(units: Sequence[tuple[tuple[str, ...], int]]) -> list[_Unit]:
    seen: dict[tuple[str, ...], _Unit] = {}
    for order, (lines, tier) in enumerate(units):
        seen.setdefault(lines, _Unit(lines, tier, order))
    return list(seen.values())


@dataclass(frozen=True)
class _Urls:
    """A trap's URLs, then the content URLs, normalised once for every rule checked."""

    trap: Sequence[str]
    content: Sequence[tuple[str, str]]
    frame: pl.DataFrame  # one column, _NORMAL: trap rows, then content rows

    @classmethod
    def of(
        cls, trap: Sequence[str], content: Sequence[tuple[str, str]], known: Mapping[str, str | None]
    ) -> _Urls:
        urls = [*trap, *(u for u, _ in content)]
        more = normal_forms([u for u in urls if u not in known])
        normal = [known[u] if u in known else more[u] for u in urls]
        return cls(trap, content, pl.DataFrame({_NORMAL: normal}, schema={_NORMAL: pl.String}))

    def verdicts(self, rules: Sequence[Sequence[str]]) -> list[tuple[list[int], list[int]]]:
        """(trap rows blocked, content rows blocked) per group of rule lines, all groups in
        one Polars pass."""
        if not rules:
            return []
        n = len(self.trap)
        row = pl.int_range(pl.len())
        exprs = [
            row.filter(blocked_expr(lines, pl.col(_NORMAL))).implode().alias(str(i))
            for i, lines in enumerate(rules)
        ]
        out = []
        for rows in self.frame.select(exprs).row(0):
            split = bisect_left(rows, n)
            out.append((rows[:split], [r - n for r in rows[split:]]))
        return out


def _checked(units: Sequence[_Unit], urls: _Urls) -> list[_Unit]:
    """Each unit with the trap URLs it blocks and its first content URLs blocked."""
    out = []
    for unit, (trap, content) in zip(units, urls.verdicts([u.lines for u in units])):
        hits = tuple(urls.content[j] for j in content[: MAX_ALLOW_LINES + 1])
        out.append(_Unit(unit.lines, unit.tier, unit.order, frozenset(trap), hits))
    return out


def _cover(units: Sequence[_Unit], n: int) -> list[_Unit] | None:
    """Fewest, narrowest units that block all n trap URLs (greedy, tier by tier)."""
    uncovered = set(range(n))
    chosen: list[_Unit] = []
    for tier in sorted({u.tier for u in units}):
        pool = [u for u in units if u.tier == tier]
        while uncovered and pool:
            best = max(pool, key=lambda u: (len(u.blocks & uncovered), -u.order))
            if not best.blocks & uncovered:
                break
            chosen.append(best)
            uncovered -= best.blocks
            pool.remove(best)
    if uncovered:
        return None
    for unit in list(chosen):  # a broad later unit can make the narrow earlier ones redundant
        rest = [u for u in chosen if u is not unit]
        if rest and frozenset().union(*(u.blocks for u in rest)) >= frozenset(range(n)):
            chosen = rest
    return sorted(chosen, key=lambda u: u.order)


def _year(url: str) -> int:
    """The first year (1800-2199) a URL names, 0 if none.

    >>> _year("/events?date=2030-07-04"), _year("/e/2031/05/"), _year("/e?d=20320704"), _year("/p/12345")
    (2030, 2031, 2032, 0)
    """
    found = re.search(r"(?<![0-9])(1[89][0-9]{2}|2[01][0-9]{2})(?:[0-9]{2}){0,2}(?![0-9])", url)
    return int(found.group(1)) if found else 0


def _stopped(unit: _Unit) -> str:
    """What stops a unit: the line of it that blocks its first content URL (a unit of decades
    has several: /events/199 blocks no 2024 day), and that URL."""
    hit = unit.content_hits[0]
    line = next((ln for ln in unit.lines if all(blocked(matcher((ln,)), [hit[0]]))), unit.lines[0])
    return f"{line} would block content URL {_hit_text(hit)}"


def _shared_start(urls: Sequence[str], lines: Sequence[str]) -> str | None:
    """The start the content URLs a rule blocks share, cut after its last `=`, `&` or `/`,
    when it is longer than every Disallow line (so that an Allow line by it wins, RFC 9309
    2.2.2: the longest match) and no `%`, `*` or `$` makes its length a guess; else None.
    An online shop's category lists behind an empty search box (`/search?q=&cat=bags`,
    `&cat=shoes`, ...): `Allow: /search?q=&cat=` beside `Disallow: /search?q=`.

    >>> _shared_start(["/search?q=&cat=bags", "/search?q=&cat=shoes"], ["Disallow: /search?q="])
    '/search?q=&cat='
    >>> _shared_start(["/search?q=&cat=bags", "/search?q=x"], ["Disallow: /search?q="]) is None
    True
    """
    start = os.path.commonprefix(list(urls))
    cut = max(start.rfind(c) for c in "=&/") + 1
    start = start[:cut]
    longest = max((len(ln.split(":", 1)[1].strip()) for ln in lines if ln.startswith("Disallow")),
                  default=0)
    if not urls or len(start) <= longest or any(c in start for c in "%*$"):
        return None
    return start


def _opens(start: str, known: Mapping[str, str | None], content: set[str]) -> bool:
    """Whether an Allow line by `start` would open a logged URL that is no content (`known`:
    the host's sampled URLs and their normal forms): another trap's, which the same group's
    lines block (a search's `Allow: /search?q=&cat=` is longer than a session's
    `Disallow: /*&sid=`, and wins over its copies `/search?q=&cat=bags&sid=...`).

    >>> known = normal_forms(["/s?q=&c=a", "/s?q=&c=a&sid=1"])
    >>> _opens("/s?q=&c=", known, {"/s?q=&c=a"}), _opens("/s?q=&c=", known, set(known))
    (True, False)
    """
    head = normal_forms([start])[start] or start
    logged = pl.DataFrame({s.URL: list(known), _NORMAL: list(known.values())},
                          schema={s.URL: pl.String, _NORMAL: pl.String})
    under = pl.col(_NORMAL).str.starts_with(head) & ~pl.col(s.URL).is_in(sorted(content))
    return bool(logged.select(under.any()).item())


def _hit_text(hit: tuple[str, str]) -> str:
    return f"{hit[0]} ({hit[1]})"


def normal_forms(urls: Sequence[str]) -> dict[str, str | None]:
    """Each URL's normal form (robots_match.normalise), to look up instead of recomputing.

    >>> normal_forms(["/a?b", "/a?b"])
    {'/a?b': '/a%3Fb'}
    """
    unique = list(dict.fromkeys(urls))
    return dict(zip(unique, normalise(pl.Series(unique, dtype=pl.String)).to_list()))


def choose(
    kind: str, pattern: str, trap: Sequence[str], content: Sequence[tuple[str, str]],
    settings: Settings, known: Mapping[str, str | None] | None = None, open_after: int | None = None,
    *, whole: bool = False, routed: Collection[str] = (),
) -> tuple[tuple[str, ...], str, str]:
    """(lines, status, reason): the narrowest verified rule for a trap's URLs (`known`:
    normal forms already computed, see `normal_forms`; `open_after`, see `date_spans`; `whole`
    and `routed`, see `candidates`).

    >>> choose("calendar", "/calendar?date", ["/calendar?date=2090-01"],
    ...     [("/calendar", "sitemap")], Settings())
    (('Disallow: /calendar?date=',), 'emitted', 'blocks all 1 distinct logged URLs of the trap and none of 1 content URLs')
    """
    if not trap:
        return (), "withheld", "no logged URL of the trap is left once content URLs are set aside"
    urls = _Urls.of(trap, content, known or {})
    units = _checked(candidates(kind, pattern, trap, settings, open_after, whole=whole, routed=routed), urls)
    free = _cover(units, len(trap))
    if free is None:
        some = frozenset().union(*(u.blocks for u in units))
        first = next(url for i, url in enumerate(trap) if i not in some)
        why = f"no rule derived from the pattern blocks its logged URL {first}"
        if routed:
            by = ", ".join(f"`{n}=`" for n in sorted(routed) if _ROUTE_NAMES.match(n)) or "a parameter"
            why += (f" without the other pages {pattern.partition('?')[0]} serves by {by}, which carry "
                    "the trap's other parameters too (fix it at the source: the finding's advice)")
        return (), "withheld", why
    ok = f"blocks all {len(trap):,} distinct logged URLs of the trap and none of {len(content):,} content URLs"
    if not any(u.content_hits for u in free):
        return _confirmed(_lines(free), "emitted", ok, urls)
    stopper = next(u for u in free if u.content_hits)
    hit = stopper.content_hits[0][0]
    why = _stopped(stopper)
    if not all(blocked(matcher(stopper.lines), [hit])):
        return (), "withheld", _disagree(hit, stopper.lines)
    safe = _cover([u for u in units if not u.content_hits], len(trap))
    if safe is not None:
        return _confirmed(_lines(safe), "narrowed", f"{why}; narrowed: {ok}", urls)
    # Allow lines only for pages outside the trap's own pattern (a calendar's index page):
    # allowing pages 2 and 3 of a list would block page 4 the day it exists. The cover the
    # Allow lines go with is of units that block none of those (a calendar's decade line
    # beside its odd far date `/events/2150/2`, not its century line over the years people read)
    def own_hit(units: Sequence[_Unit]) -> bool:
        return any(source in (OWN, OWN_NOT_LOGGED) for u in units for _, source in u.content_hits)

    picks = [free if not own_hit(free) else _cover([u for u in units if not own_hit([u])], len(trap))]
    if kind == "calendar":
        # a date far off with a page people read (a festival announced years ahead, among
        # the years bots walked): allowed back by itself among lines by dates, as the
        # decade's next real date is blocked the day it exists anyway (the lines take the
        # walk's future, `open_after`); not beside the whole parameter's line, which takes
        # the dates with pages of their own the log does not show
        # (nor a date up to the horizon: the dates beside it, with pages the log may not
        # show, are the calendar's present)
        horizon = (open_after or 0) // 12
        picks.append(_cover([u for u in units if len(u.content_hits) <= MAX_ALLOW_LINES
                             and all(_DATE_LINE.search(ln) for ln in u.lines)
                             and all(_year(url) > horizon for url, _ in u.content_hits)], len(trap)))
    for pick in picks:
        if kind == "pagination" or not pick:
            continue
        hits = sorted({h for u in pick for h in u.content_hits})
        if len(hits) <= MAX_ALLOW_LINES:
            allow = tuple(f"Allow: {escape_value(url)}$" for url, _ in hits)
        else:  # more pages than Allow lines: one by their shared start
            [(_, on_content)] = urls.verdicts([_lines(pick)])
            start = _shared_start([url_path(urls.content[i][0]) for i in on_content], _lines(pick))
            if not start or _opens(start, known or {}, {u for u, _ in content}):
                continue
            allow = (f"Allow: {escape_value(start)}",)
        lines = _lines(pick) + allow
        [(on_trap, on_content)] = urls.verdicts([lines])
        if len(on_trap) == len(trap) and not on_content:
            # the pages the Allow lines keep open, not the first rule's
            kept = _stopped(next(u for u in pick if u.content_hits))
            more = len(hits) - 1 if len(hits) <= MAX_ALLOW_LINES else 0
            kept += f" (and {more} more)" if more else ""
            return _confirmed(lines, "narrowed", f"{kept}; Allow lines keep {'them' if more else 'it'} open; {ok}", urls)
    if kind == "pagination":
        why += (
            "; robots.txt cannot express 'page numbers past the last page': fix it at the "
            "source (answer 404 or 410 past the last page, never 200 with an empty list)"
        )
    return (), "withheld", why


def verify(
    lines: Sequence[str], trap: Sequence[str], content: Sequence[tuple[str, str]],
    known: Mapping[str, str | None] | None = None, *, allow_few: int = 0,
) -> tuple[tuple[str, ...], str, str]:
    """(lines, status, reason) for rule lines given rather than chosen (a parameter's
    site-wide pair): emitted where they block every trap URL and no content URL, as `choose`
    checks its own (the bulk matcher, then Protego); else withheld, naming the URL. Lines
    that block `allow_few` content URLs at most are narrowed by an `Allow: <url>$` line each,
    as `choose` narrows its own (`MAX_ALLOW_LINES`).

    >>> verify(["Disallow: /*?sid="], ["/a?sid=1"], [("/b?sid=2", "sitemap")])[1:]
    ('withheld', 'Disallow: /*?sid= would block content URL /b?sid=2 (sitemap)')
    >>> verify(["Disallow: /*?sid="], ["/a?sid=1"], [("/b?sid=2", "sitemap")], allow_few=3)[:2]
    (('Disallow: /*?sid=', 'Allow: /b?sid=2$'), 'narrowed')
    """
    lines = tuple(lines)
    if not trap:
        return (), "withheld", "no logged URL of the trap is left once content URLs are set aside"
    urls = _Urls.of(trap, content, known or {})
    ok = f"blocks all {len(trap):,} distinct logged URLs of the trap and none of {len(content):,} content URLs"
    [(on_trap, on_content)] = urls.verdicts([lines])
    if on_content and len(on_content) <= allow_few:
        hits = [urls.content[i] for i in on_content]
        allowing = lines + tuple(f"Allow: {escape_value(url)}$" for url, _ in hits)
        [(still_trap, still_content)] = urls.verdicts([allowing])
        if not still_content and len(still_trap) == len(trap):
            kept = _hit_text(hits[0]) + (f" (and {len(hits) - 1} more)" if len(hits) > 1 else "")
            return _confirmed(allowing, "narrowed", f"{kept}: Allow lines keep {'them' if len(hits) > 1 else 'it'} open; {ok}", urls)
    if on_content:
        hit = urls.content[on_content[0]]
        line = next((ln for ln in lines if all(blocked(matcher((ln,)), [hit[0]]))), lines[0])
        return (), "withheld", f"{line} would block content URL {_hit_text(hit)}"
    if len(on_trap) < len(trap):
        hit_rows = set(on_trap)
        missed = next(url for i, url in enumerate(trap) if i not in hit_rows)
        return (), "withheld", f"{'; '.join(lines)} would not block its logged URL {missed}"
    return _confirmed(lines, "emitted", ok, urls)


def _lines(units: Sequence[_Unit]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(line for u in units for line in u.lines))


def _confirmed(
    lines: tuple[str, ...], status: str, reason: str, urls: _Urls
) -> tuple[tuple[str, ...], str, str]:
    """The chosen rule as Protego sees it: every content URL its Disallow lines touch (kept
    open by Allow lines) and an even spread of the other content URLs must be allowed, the
    trap's first URLs and an even spread of the rest blocked. A disagreement withholds it."""
    content, trap = [u for u, _ in urls.content], urls.trap
    disallows = [line for line in lines if line.startswith("Disallow")]
    [(_, hit)] = urls.verdicts([disallows])
    touched = [content[i] for i in hit]
    hit_rows = set(hit)
    free = _spread([u for i, u in enumerate(content) if i not in hit_rows], CONFIRM_SPREAD)
    shown = [*trap[: f.MAX_EXAMPLES], *_spread(trap[f.MAX_EXAMPLES :], CONFIRM_SPREAD)]
    robots = matcher(lines)
    for group, want in ((shown, True), ([*touched, *free], False)):
        for url, verdict in zip(group, blocked(robots, group)):
            if verdict is not want:
                return (), "withheld", _disagree(url, lines)
    return lines, status, reason


def _spread(items: Sequence[str], n: int) -> list[str]:
    """Up to n items evenly spread over the sequence (all of them when there are few)."""
    if len(items) <= n:
        return list(items)
    return [items[i * len(items) // n] for i in range(n)]


def _disagree(url: str, lines: Sequence[str]) -> str:
    return (
        f"logtrap's bulk matcher and Protego disagree on {url} for {'; '.join(lines)}: "
        "a logtrap bug, please report it"
    )


# -- one host ----------------------------------------------------------------------------------


def bot_urls(traffic: Traffic, host: str, known: Mapping[str, str | None]) -> pl.DataFrame:
    """A host's sampled URLs that bots fetched, with their normal form (from `known`) and
    their pattern's bot requests: what `saved_requests` counts over."""
    sampled = traffic.urls.filter(pl.col(s.HOST) == host)
    urls = sampled.filter(pl.col(s.BOT_REQUESTS) > 0)
    totals = (
        traffic.patterns.filter(pl.col(s.HOST) == host)
        .group_by(s.PATTERN)
        .agg(pl.col(s.BOT_REQUESTS).sum().alias("pattern_bot_requests"),
             pl.col(s.UNIQUE_URLS).max().alias("pattern_urls"))
        .join(sampled.group_by(s.PATTERN).agg(pl.col(s.URL).n_unique().alias("sampled_urls")),
              on=s.PATTERN, how="left")
    )
    normal = pl.Series(_NORMAL, [known[u] for u in urls[s.URL].to_list()], dtype=pl.String)
    return urls.select(s.PATTERN, s.BOT_REQUESTS).with_columns(normal).join(totals, on=s.PATTERN, how="left")


def saved_requests(rules: Sequence[Sequence[str]], urls: pl.DataFrame) -> list[int]:
    """Bot requests each rule would have saved, over `bot_urls`: whole patterns (from
    traffic.patterns) where every sampled URL is blocked, else the blocked sampled URLs' bot
    requests scaled to the pattern (a sample of 1,000 URLs of 50,000 counted alone a fiftieth
    of what a rule saves), by the lesser of two estimates: their share of the sample's bot
    requests times the pattern's, and their requests times the pattern's URLs per sampled URL.
    A page outside the sample polled 30,000 times skews either: unblocked, it made the first
    say 96% of a calendar's budget where its lines took 35%; blocked, the lesser says 35%
    where they take 98%. What a rule saves is said low rather than high. All rules in one
    pass."""
    if not rules or urls.height == 0:
        return [0] * len(rules)
    bots = pl.col(s.BOT_REQUESTS)
    hits = urls.with_columns(blocked_expr(lines, pl.col(_NORMAL)).alias(f"hit{i}") for i, lines in enumerate(rules))
    per = hits.group_by(s.PATTERN).agg(
        pl.col("pattern_bot_requests").first().fill_null(bots.sum()).alias("total"),
        bots.sum().alias("sampled"),
        (pl.col("pattern_urls") / pl.col("sampled_urls")).first().fill_null(1.0).clip(lower_bound=1.0)
        .alias("per_url"),
        *(pl.col(f"hit{i}").all().alias(f"all{i}") for i in range(len(rules))),
        *(bots.filter(f"hit{i}").sum().alias(f"blocked{i}") for i in range(len(rules))),
    )
    scaled = [
        pl.min_horizontal(pl.col(f"blocked{i}") * pl.col("total") / pl.col("sampled"),
                          pl.col(f"blocked{i}") * pl.col("per_url")).round()
        for i in range(len(rules))
    ]
    saved = per.select(
        pl.when(f"all{i}").then("total").otherwise(scaled[i]).sum().alias(str(i))
        for i in range(len(rules))
    )
    return [int(v or 0) for v in saved.row(0)]


# Sampled URLs a robots.txt can be asked about: requests with no URL ("-" as the request
# line, a TLS handshake on port 80; an empty target) have none to match a rule.
HAS_URL = pl.col(s.URL).is_not_null() & (pl.col(s.URL) != "")


class HostRules(NamedTuple):
    rules: list[RobotsRule]
    content: int  # the content URLs they were checked against
    saved: int  # bot requests all their lines together would have saved, each counted once


def host_rules(
    findings: pl.DataFrame,
    traffic: Traffic,
    host: str,
    sitemap_urls: Sequence[str],
    settings: Settings,
    closed: Sequence[Sequence[str]] = (),
) -> HostRules:
    """One verified rule per robots-addressable finding of a host (symptom findings only
    where no URL-shape finding covers the same pattern), the number of content URLs they
    were checked against, and what they save together (rules that share a line each count
    its requests).

    `closed`: the current robots.txt's rule lines for each crawler the new `*` lines bind
    (`robots_file.star_bound`). A page of the log all of them close already is no content a
    rule could take (the sitemap's URLs stay: one the file closes is a mistake of its own,
    `robots_file.blocking_sitemap`)."""
    mine = findings.filter(
        pl.col(s.HOST) == host,
        pl.col(s.KIND).is_in(SYMPTOM_KINDS).not_() | pl.col(s.PATTERN).is_not_null(),
        pl.col(s.KIND).is_in(ROBOTS_KINDS),
        # a parameter that does not change the page: its advice is rel=canonical, a crawler
        # kept off its URLs would never see it
        pl.col(s.ADVICE).ne_missing(growing_pattern.COPY_ADVICE),
    )
    shaped = set(mine.filter(pl.col(s.KIND).is_in(SHAPE_KINDS))[s.PATTERN].to_list())
    # the patterns a parameter's site-wide lines rule: their URLs are its trap, no content,
    # and their symptoms need no rule of their own (detectors/_param.py)
    covered = param.covered(mine, traffic)
    shaped |= set(covered[s.PATTERN].to_list())
    # the pages people read on patterns whose pages can be real: no rule may block them,
    # whichever trap's it is (a calendar's rule over `?season=` blocked the seasons people
    # read on its sibling pattern `?season=&week=`)
    # (not a pattern another kind calls a trap too: a search's page 2 people read is still
    # the search's, and its rule over `?q=` stands)
    # (and an appended parameter's pattern: its pages with the parameter once, or twice with
    # two values, a multi-select filter's, are pages; its copies hold a pair twice, their page
    # logged with each pair once: `_undoubled`, below)
    appended = (pl.col(s.KIND) == relative_loop.KIND) & pl.col(s.PATTERN).str.contains("?", literal=True)
    own_kind = pl.col(s.KIND).is_in(OWN_CONTENT_KINDS) | appended.fill_null(False)
    trapped = set(mine.filter(~own_kind)[s.PATTERN].drop_nulls().to_list())
    own_patterns = mine.filter(own_kind, ~pl.col(s.PATTERN).is_in(list(trapped)))[s.PATTERN]
    loops = {x.pattern: x for x in f.to_records(mine.filter(appended.fill_null(False))) if x.pattern}
    own = {p: _own_pages(traffic, host, p) for p in own_patterns.unique().sort().to_list()}
    traps = pl.concat([mine.select(s.HOST, s.PATTERN), covered]).unique()
    traffic = traffic.replace(urls=_with_urls(traffic.urls), people_urls=_with_urls(traffic.people_urls))
    # each calendar's dates, once (its rule reads them, and a pass is 50 ms a calendar); and
    # those with pages of their own, which only bots may have fetched: no other rule may block
    # them either (the month's `.ics` calendar `/events/month/{date}/?ical` called June's few
    # events empty, and its `Disallow: /events/month/2025-06` took the page)
    calendars = {p: calendar.wasted_urls(traffic, settings, host, p)
                 for p in mine.filter(pl.col(s.KIND) == "calendar")[s.PATTERN].unique().sort().to_list()}
    dated = {p: [(u, OTHER_DATED) for u in dates.real] for p, dates in calendars.items()}
    content = [(u, "sitemap") for u in sitemap_paths(sitemap_urls, host, traffic.hosts)]
    content += [(u, "log") for u in log_content(traffic, traps, host)[s.URL].to_list()]
    read = frozenset(traffic.people_read.filter(pl.col(s.HOST) == host)[s.URL].to_list())
    host_urls = traffic.urls.filter(pl.col(s.HOST) == host)[s.URL].to_list()
    known = normal_forms([*host_urls, *(u for u, _ in content)])  # once per URL for all rules
    if closed:  # (a shop's `Disallow: /collections/*+*` and the tag pages only bots fetched)
        content = _unclosed(content, known, closed)
    # an appended parameter's pattern's pages, but its copies (`_undoubled`)
    own = {p: _undoubled(loops[p], pages, known) if p in loops else pages for p, pages in own.items()}
    counted = bot_urls(traffic, host, known)
    untrapped = _untrapped(traffic, mine, traps, host, known)
    if closed:
        untrapped = untrapped.filter(~_closed_expr(closed))
    # what a family's lines must not reach: its own patterns and pages at a commit left out
    families = [p for p in mine[s.PATTERN].drop_nulls().unique().sort().to_list() if family.is_family(p)]
    unfamilied = family.to_spare(untrapped, traffic, settings, host, families)
    # A pattern two kinds name gets the first kind's rule, or, where that one is withheld,
    # the next kind's too (a paged search's pagination cannot be ruled by page numbers; its
    # search can: `/page/{n}/?s`). So each pattern's findings are ruled in their rank's
    # order, and the patterns side by side, in two threads (their Polars work lets go of
    # the GIL: `suggest` took 0.50 s against 0.42 on the benchmark's 1M lines).
    by_key: dict[str, list[tuple[int, f.Finding]]] = {}
    for rank, finding in enumerate(f.to_records(f.rank(mine))):
        key = finding.pattern or f"{finding.kind}:{','.join(finding.examples)}"
        if not (finding.kind in SYMPTOM_KINDS and key in shaped):
            by_key.setdefault(key, []).append((rank, finding))

    def rules_of(key: str, findings: list[tuple[int, f.Finding]]) -> list[tuple[int, RobotsRule]]:
        out = []
        for rank, finding in findings:
            tried = bool(out)  # the first kind's rule was withheld (else no later kind's is tried)
            others = [(u, OTHER_OWN) for p, pages in own.items() if p != finding.pattern
                      for u, why in pages if why == OWN]
            others += [page for p, pages in dated.items() if p != finding.pattern for page in pages]
            # where the first kind's rule was withheld, the pages people read on the pattern
            # stay content for the next (a shop's category lists `/search?q=&cat=boots&page=3`:
            # their search's narrowed `/search?*&*&` took them; a search's own results do not
            # count)
            mine = content + (_own_pages(traffic, host, key) if tried and finding.pattern else [])
            mine_content = _undoubled(finding, _unacted(finding, _unsearched(finding, mine), read), known) + others
            rule = _rule(finding, traffic, mine_content, known, settings, calendars)
            # what a calendar's year prefix or `*`, or a line narrowed to the trap URLs'
            # shared start (`/c/gloves?page=` for `?page=&lang=&currency=` copies), may reach
            # beyond the trap: another pattern's pages, which no content list holds where only
            # bots fetched them (the list's real pages past page 1); or a family's `*` across
            # segments (Gitea's `/*/*/src/commit/` and a branch head's folder
            # `/alice/lib/src/branch/main/src/commit/`), its own patterns left out.
            # Every rule but a facet trap's (its lines take the path's every combination of
            # filters, by design) and a parameter's for the whole site (`_reached` leaves
            # site-wide lines out): a `*` spans segments (a code host's `/tree/*/_posts$` took
            # the branch's `/tree/main/_posts`), and a line by the count of parameters takes a
            # list's sorted views (`/forumdisplay.php?*&*&`).
            familied = family.is_family(finding.pattern or "")
            spare = unfamilied if familied else untrapped
            spans = finding.kind == "calendar" or (
                finding.kind != "facets" and not param.is_param(finding.pattern))
            reached = _reached(rule, spare, finding, known) if spans else spare.clear()
            if reached.height:
                # chosen again with those pages as content (a year rule may spare them, a
                # family takes a line per repository), and withheld if it still reaches one
                unnamed = [(u, UNNAMED) for u in reached[s.URL].to_list()]
                rule = _spanning(_rule(finding, traffic, mine_content + unnamed, known, settings, calendars),
                                 spare, finding, known)
            if rule.status != "withheld":
                out.append((rank, rule))
                break  # ruled: the pattern's later kinds need none
            if not tried:
                out.append((rank, rule))  # the first kind's rule, withheld, is shown
        return out

    with ThreadPoolExecutor(2) as pool:
        ruled = pool.map(rules_of, by_key, by_key.values())
        rules = [rule for _, rule in sorted((x for each in ruled for x in each), key=lambda x: x[0])]
    together = [line for r in rules if r.status != "withheld" for line in r.lines]
    *saved, total = saved_requests([*(r.lines for r in rules), together], counted)
    rules = [replace(r, saved_bot_requests=n) if r.lines else r for r, n in zip(rules, saved)]
    return HostRules(rules, len({u for u, _ in content}), total)


def _closed_expr(closed: Sequence[Sequence[str]]) -> pl.Expr:
    """Whether every crawler's rule lines in `closed` (`host_rules`) block a URL (_NORMAL)."""
    groups = dict.fromkeys(tuple(lines) for lines in closed)
    return pl.all_horizontal([blocked_expr(lines, pl.col(_NORMAL)) for lines in groups])


def _unclosed(
    content: list[tuple[str, str]], known: Mapping[str, str | None], closed: Sequence[Sequence[str]]
) -> list[tuple[str, str]]:
    """The content URLs (URL, why) but the log's pages the current robots.txt closes already."""
    frame = pl.DataFrame({s.URL: [u for u, _ in content], "why": [w for _, w in content]},
                         schema={s.URL: pl.String, "why": pl.String})
    frame = frame.with_columns(pl.col(s.URL).replace_strict(known, return_dtype=pl.String).alias(_NORMAL))
    kept = frame.filter((pl.col("why") == "sitemap") | ~_closed_expr(closed))
    return list(zip(kept[s.URL].to_list(), kept["why"].to_list(), strict=True))


def _with_urls(rows: pl.DataFrame) -> pl.DataFrame:
    """`rows` with a URL (HAS_URL): the same frame where all have one, as in nearly every log,
    so the tables the detectors derived from it once (`_shape.memo`: the URLs one row each,
    the site's shell sizes, the patterns' totals) serve the rules too.

    >>> rows = pl.DataFrame({"url": ["/a", "/b"]})
    >>> _with_urls(rows) is rows, _with_urls(pl.DataFrame({"url": ["/a", "", None]})).height
    (True, 1)
    """
    kept = rows.filter(HAS_URL)
    return rows if kept.height == rows.height else kept


_SEGMENTS = "_segments"


def _path_segments(urls: pl.DataFrame, host: str) -> pl.DataFrame:
    """A host's rows of the URL sample with their path's segments (`_SEGMENTS`), split once
    for all its loops' rules (a log whose loop nests six names in every order: six findings,
    each splitting 740,000 URLs)."""
    def compute() -> pl.DataFrame:
        path = pl.col(s.URL).str.splitn("?", 2).struct.field("field_0")
        return urls.filter(pl.col(s.HOST) == host).with_columns(path.str.split("/").alias(_SEGMENTS))
    return _shape.memo((urls,), (_SEGMENTS, host), compute)


def _unsearched(finding: f.Finding, content: list[tuple[str, str]]) -> list[tuple[str, str]]:
    """`content` without, for an internal search's finding, the log's pages of its own search:
    its path, a search parameter with a term (`/search?q=shoes&page=2` people read beside the
    trap `/search?q`, on a pattern no finding names). A search's results are no content to
    keep its rule off: they kept `Disallow: /search?q=` from a search bots spammed with 21,000
    requests. A page with an empty search box (`/search?q=&cat=shoes`, a category's list)
    stays content, as internal_search leaves it alone; so does a sitemap's search URL: the
    admin listed it.

    >>> x = f.Finding("internal_search", "warning", "-", "/{lang}/search?q", 9, 9, (),
    ...               {"search_params": "q"})
    >>> _unsearched(x, [("/en/search?page=2&q=a", "log"), ("/en/search?q=a", "sitemap"),
    ...                 ("/en/search?page=2", "log"), ("/en/shop?q=a", "log"),
    ...                 ("/en/search?q=&cat=bags", "log")])
    [('/en/search?q=a', 'sitemap'), ('/en/search?page=2', 'log'), ('/en/shop?q=a', 'log'), ('/en/search?q=&cat=bags', 'log')]
    """
    names = {n.lower() for n in str(finding.evidence.get("search_params") or "").split("&") if n}
    if finding.kind != "internal_search" or not names:
        return content
    path = (finding.pattern or "").partition("?")[0]
    same = re.compile("".join("[^/]+" if _PLACEHOLDER.fullmatch(p) else re.escape(p)
                              for p in re.split(f"({_PLACEHOLDER.pattern})", path)))

    def searched(url: str) -> bool:
        where, _, query = url_path(url).partition("?")
        terms = {name.lower() for name, _, value in (pair.partition("=") for pair in query.split("&"))
                 if value and value != "+"}
        return bool(terms & names) and same.fullmatch(where) is not None

    return [(u, why) for u, why in content if why == "sitemap" or not searched(u)]


def _undoubled(
    finding: f.Finding, content: list[tuple[str, str]], logged: Collection[str]
) -> list[tuple[str, str]]:
    """`content` without, for an appended parameter's finding (relative_loop's query loop),
    the log's URLs holding one of its parameters' pairs twice whose page, the URL with each
    pair once, is `logged` too: copies of it wherever they are (the switcher appends for
    people too, who click on). Not those with the name twice and two values: a multi-select
    filter's pages (`?color=red&color=grey`), which its lines by the name twice would take;
    nor a pair twice on a page never logged without it: a form's field sent twice, its pages
    (adversarial review 17c).

    >>> x = f.Finding("relative_loop", "warning", "-", "/c/{slug}?lang", 9, 9, (),
    ...               {"repeated_params": ["lang"]})
    >>> _undoubled(x, [("/c/a?lang=de&lang=de", "log"), ("/c/a?lang=de&x=1&lang=fr", "log"),
    ...                ("/c/b?lang=de&lang=de", "log"), ("/c/a?lang=de&lang=de", "sitemap")],
    ...            {"/c/a?lang=de"})
    [('/c/a?lang=de&x=1&lang=fr', 'log'), ('/c/b?lang=de&lang=de', 'log'), ('/c/a?lang=de&lang=de', 'sitemap')]
    """
    names = finding.evidence.get("repeated_params") or []
    if finding.kind != relative_loop.KIND or not names:
        return content
    mine = set(names)

    def copy(url: str) -> bool:
        return bool(mine & set(relative_loop.repeated_names(url_path(url)))) and _deduped(url) in logged

    return [(u, why) for u, why in content if why == "sitemap" or not copy(u)]


def _deduped(url: str) -> str:
    """The URL with each of its query's pairs once, in their order (a fragment left out).

    >>> _deduped("/c?lang=de&x=1&lang=de&lang=fr#top")
    '/c?lang=de&x=1&lang=fr'
    """
    path, _, query = url.partition("#")[0].partition("?")
    return f"{path}?{'&'.join(dict.fromkeys(p for p in query.split('&') if p))}"


def _unacted(
    finding: f.Finding, content: list[tuple[str, str]], read: frozenset[str] = frozenset()
) -> list[tuple[str, str]]:
    """`content` without, for an action link's finding (`session_id.ACTION_PARAMS`), the log's
    URLs carrying that parameter that no person `read`: one a search engine fetched on a
    listing too thin for a finding of its own kept the shop's `Disallow: /*?add-to-cart=` off.
    A sitemap's stays (the admin listed it), and so does one people read (a landing page
    that adds a kit to the cart, read 600 times: adversarial review 17b). For a sharing
    button's (`session_id.SHARE_PARAM`) every log URL carrying it goes, people's too: their
    clicks are redirects to the network's dialog, no page of the site.

    >>> x = f.Finding("session_id", "warning", "-", "/shop/?add-to-cart", 9, 9, (),
    ...               {"session_param": "add-to-cart"})
    >>> _unacted(x, [("/c/hats/?add-to-cart=7", "log"), ("/c/hats/", "log"), ("/kit/?add-to-cart=1", "log"),
    ...              ("/c/?x=1&add-to-cart=2", "sitemap"), ("/c/?my-add-to-cart=2", "log")],
    ...          frozenset({"/kit/?add-to-cart=1"}))
    [('/c/hats/', 'log'), ('/kit/?add-to-cart=1', 'log'), ('/c/?x=1&add-to-cart=2', 'sitemap'), ('/c/?my-add-to-cart=2', 'log')]
    >>> y = f.Finding("session_id", "warning", "-", "/{any}?share", 9, 9, (), {"session_param": "share"})
    >>> _unacted(y, [("/p/?share=x&nb=1", "log"), ("/p/", "log")], frozenset({"/p/?share=x&nb=1"}))
    [('/p/', 'log')]
    """
    name = str(finding.evidence.get("session_param") or "").lower()
    if finding.kind != session_id.KIND or name not in {*session_id.ACTION_PARAMS, session_id.SHARE_PARAM}:
        return content
    if name == session_id.SHARE_PARAM:
        read = frozenset()

    def acting(url: str) -> bool:
        query = url_path(url).partition("?")[2]
        return any(pair.partition("=")[0].lower() == name for pair in query.split("&"))

    return [(u, why) for u, why in content if why == "sitemap" or u in read or not acting(u)]


def _rule(
    finding: f.Finding, traffic: Traffic, content: list[tuple[str, str]],
    known: Mapping[str, str | None], settings: Settings, calendars: Mapping[str, calendar.Dates],
) -> RobotsRule:
    pattern = finding.pattern or ""
    # a finding over many patterns alike (detectors/_family.py), or made by one parameter
    # (detectors/_param.py)
    helper = (sorts if sorts.is_sort(finding) else family if family.is_family(pattern)
              else param if param.is_param(pattern) else None)
    if helper is not None:
        lines, status, reason, trap = helper.robots_rule(finding, traffic, content, known, settings)
        examples = tuple(trap[: f.MAX_EXAMPLES]) if lines else ()
        return RobotsRule(finding.host, finding.kind, pattern, "*", lines, status, reason, 0, examples)
    rows = traffic.urls.filter(pl.col(s.HOST) == finding.host, pl.col(s.PATTERN) == pattern)
    appended = finding.kind == "relative_loop" and "?" in pattern
    own = _own_pages(traffic, finding.host, pattern) if finding.kind in OWN_CONTENT_KINDS else []
    if appended:  # the pattern's URLs with the parameter once are its pages; twice, the trap
        rows = rows.filter(relative_loop.doubled(pl.col(s.URL)))
        own = _undoubled(finding, _own_pages(traffic, finding.host, pattern), known)
    sets = facets.set_urls(rows) if finding.kind == facets.KIND else None
    if sets is not None:  # one pattern holds every set of filters: packed in one parameter
        # (PrestaShop's `?q=Size-S/Color-White`, two or more the trap) or a filter's values
        # listed (WooCommerce's `?filter_color=red,blue`, lists the trap); the rest are pages
        own = own + [(u, OWN_FILTERED) for u in rows.filter(~sets)[s.URL].to_list()]
        rows = rows.filter(sets)
    if finding.kind == pagination.KIND:  # its pages with content, people's or not
        mine = {u for u, _ in own}
        own = own + [(u, OWN_PAGED) for u in pagination.real_pages(traffic, settings, finding.host, pattern)
                     if u not in mine]
    content = content + own
    content_set = {u for u, _ in content}
    if finding.kind == "relative_loop" and not appended:  # one finding over every depth
        if pattern:  # `<root>/<segment>/<segment>/{loop}`: the URLs repeating the segment,
            # as many as a pattern's sample holds, by the sample's order (the URL hash)
            repeats = pl.col(_SEGMENTS).list.count_matches(pattern.split("/")[-2]) >= 2
            rows = (
                _path_segments(traffic.urls, finding.host).filter(repeats)
                .drop(_SEGMENTS)
                .unique(s.URL_HASH)
                .sort(s.URL_HASH)
                .head(settings.url_sample_size)
            )
        else:
            host_urls = traffic.urls.filter(pl.col(s.HOST) == finding.host).select(s.URL).unique()
            runs = {_repeat(url_path(u).split("?", 1)[0]) for u in finding.examples} - {None}
            urls = host_urls[s.URL].sort().to_list()
            rows = pl.DataFrame({s.URL: [u for u in urls if _repeat(u.split("?", 1)[0]) in runs]})
    logged = list(dict.fromkeys([*finding.examples, *rows[s.URL].to_list()]))
    dates, left_open = None, 0
    if finding.kind == "calendar":  # its future and empty dates: a month with events is a page
        dates = calendars[pattern]
        wasted_set = {*finding.examples, *dates.wasted}
        logged = [u for u in logged if u in wasted_set]
        dated = [(u, OWN_DATED) for u in dates.real if u not in wasted_set]
        content, content_set = content + dated, content_set | {u for u, _ in dated}
    trap = [u for u in logged if url_path(u) not in content_set]
    gone = s.STATUS in rows.columns and rows.height and rows[s.STATUS].is_in([404, 410]).all()
    # a symptom only: a trap's own kind proves its redirects minted (short links per view).
    # growing_pattern cannot tell a big move found bit by bit from filters redirected to their
    # canonical order: blocking the move's redirects costs its rankings, withholding the
    # filters' rule costs crawl budget, and the finding still names them
    moved = (finding.kind in SYMPTOM_KINDS and s.STATUS in rows.columns and rows.height
             and rows[s.STATUS].is_in([301, 308]).mean() >= _MOVED_SHARE)
    if not trap and any(why == OWN_NOT_LOGGED for _, why in own):
        lines, status, reason = (), "withheld", (
            "the log records no user agent for this pattern's requests, so any of its pages "
            "answered with success may be one people read: no rule can be checked not to "
            "block them; fix it at the source (the finding's advice)"
        )
    elif gone:  # a search engine drops a URL once it sees the 404; a Disallow would hide it
        lines, status, reason = (), "withheld", (
            "every logged URL of it answers 404 or 410: crawlers drop such URLs once they "
            "see that answer, and a Disallow would hide it from them (keep answering 404/410)"
        )
    elif moved:  # a Disallow over a site's old URLs is the classic migration mistake
        lines, status, reason = (), "withheld", (
            "its logged URLs answer permanent redirects (301 or 308): crawlers must fetch the "
            "old URLs to follow them to the new ones and pass their standing on, which a "
            "Disallow would stop (link the new URLs instead, and let the redirects be crawled)"
        )
    elif (finding.kind == "session_id"
          and is_tracking_name(str(finding.evidence.get("session_param", "")), settings)) or (
          pattern.partition("?")[2] == TRACKING):  # a page's copies by tracking parameters alone
        lines, status, reason = (), "withheld", TRACKING_REASON
    elif dates is not None:
        open_after = calendar.horizon(traffic, settings)
        end = traffic.end
        logs_end = open_after if end is None else end.year * 12 + end.month - 1
        lines, status, reason, blocked = _choose_dates(pattern, trap, dates, content, settings, known,
                                                       open_after, logs_end)
        trap, left_open = blocked, len(trap) - len(blocked)
    else:
        # a joiner's line reaches names with the joiner of their own (a tag `c%2b%2b`): only
        # where the sample holds every URL of the pattern can none be unseen
        whole = rows.height < settings.url_sample_size
        path, query = pattern.partition("?")[::2]
        routed: frozenset[str] = frozenset()
        if query and "{" not in path:  # a literal path serving pages by parameters
            logged_here = traffic.urls.filter(pl.col(s.HOST) == finding.host, pl.col(s.PATTERN) != pattern,
                                              pl.col(s.PATTERN).str.starts_with(path + "?"))[s.URL]
            others = [*logged_here.unique().sort().to_list(),
                      *(u for u, _ in content if u.startswith(path + "?"))]
            routed = routes(trap, others)
        lines, status, reason = choose(finding.kind, pattern, trap, content, settings, known,
                                       whole=whole, routed=routed)
    examples = tuple(trap[: f.MAX_EXAMPLES]) if lines else ()
    return RobotsRule(finding.host, finding.kind, pattern, "*", lines, status, reason, 0, examples,
                      left_open if lines else 0)


def _choose_dates(
    pattern: str, trap: list[str], dates: calendar.Dates, content: list[tuple[str, str]],
    settings: Settings, known: Mapping[str, str | None], open_after: int, logs_end: int,
) -> tuple[tuple[str, ...], str, str, list[str]]:
    """A calendar's rule (`choose`), and the trap URLs it blocks: its wasted dates before its
    first real month and after its last. Those between (`Dates.between_real`: an empty Sunday
    among days with events, an empty-looking month inside the years with events) stay open:
    robots.txt lines are prefixes, and a line by years or months that took them would take
    the real dates beside them -- those the URL sample shows, and those it does not (two
    empty days sampled of a January with sixteen events made `/events/2016/01`). So do those
    from the logs' last month (`logs_end`, as year * 12 + month - 1) up to the horizon
    (`open_after`), where content may still come: next month's articles, on a news site
    whose archives share their prefix (`Disallow: /2026/02` took them), a month's events
    announced later; they are content for the rule, which blocks the far future from the
    horizon on (a calendar none of whose dates has a page of its own, a sidebar's, is blocked
    whole). The reason says which dates stay open, and what stops crawlers there instead."""
    months = calendar.dated(pl.DataFrame({s.URL: trap}, schema={s.URL: pl.String}))["months"].to_list()
    soon = [u for u, m in zip(trap, months) if m is not None and logs_end <= m <= open_after]
    if soon and dates.real:
        near = set(soon)
        trap = [u for u in trap if u not in near]
        content = content + [(u, NEAR_DATED) for u in soon]
        lines, status, reason, taken = _choose_dates(pattern, trap, dates, content, settings, known,
                                                     open_after, logs_end)
        status = "narrowed" if lines else status
        return lines, status, f"{reason}; {_near_open(soon)}", taken
    inside = set(dates.between_real)
    left = [u for u in trap if u in inside]
    if not left:
        lines, status, reason = choose("calendar", pattern, trap, content, settings, known, open_after)
        return lines, status, reason, trap
    apart = [u for u in trap if u not in inside]
    if not apart:
        return (), "withheld", _left_open(left), trap
    found, _, why = choose("calendar", pattern, apart, content, settings, known, open_after)
    if found:
        # those its lines block all the same are blocked (a line by the date parameter's
        # place: `/hotel/*/?*&checkout=2029` takes a wasted 2029 among real 2029 dates)
        hits = blocked(matcher(found), left)
        taken = [u for u, hit in zip(left, hits) if hit]
        still = [u for u, hit in zip(left, hits) if not hit]
        if taken:  # counted with the trap's URLs the lines block
            why = why.replace(f"blocks all {len(apart):,} distinct", f"blocks all {len(apart) + len(taken):,} distinct")
        reason = f"{why}; {_left_open(still)}" if still else why
        return found, "narrowed", reason, apart + taken
    return (), "withheld", f"{why}; {_left_open(left)}", trap


def _near_open(urls: Sequence[str]) -> str:
    return (
        f"{len(urls):,} of its wasted dates lie from the logs' last month up to its horizon "
        f"(`calendar_future_years`), where content may still come, and stay open (e.g. "
        f"{min(urls)}): answer 404 for dates without content, or add rel=nofollow to the "
        "calendar's next/previous links"
    )


def _left_open(urls: Sequence[str]) -> str:
    return (
        f"{len(urls):,} of its wasted dates lie among dates with pages of their own and stay "
        f"open (e.g. {min(urls)}): a robots.txt line by years or months that took them "
        "would take the real dates beside them; answer 404 for dates without content, or "
        "serve their pages `noindex, nofollow` and add rel=nofollow to the calendar's "
        "next/previous links"
    )


def _untrapped(
    traffic: Traffic, mine: pl.DataFrame, traps: pl.DataFrame, host: str,
    known: Mapping[str, str | None],
) -> pl.DataFrame:
    """The 2xx pages (URL, PATTERN, normal form) of the host's patterns no finding names, bots'
    too: what a calendar's year prefix or `*`, or a narrowed line, may reach (`_reached`). A
    relative loop's URLs left out (its finding names no pattern of theirs)."""
    pages = (
        traffic.urls.filter(pl.col(s.HOST) == host, pl.col(s.STATUS).is_between(200, 299))
        .join(traps, on=[s.HOST, s.PATTERN], how="anti")
        .select(s.URL, s.PATTERN).unique(maintain_order=True)
    )
    path_loops = mine.filter(pl.col(s.KIND) == relative_loop.KIND,
                             ~pl.col(s.PATTERN).fill_null("").str.contains("?", literal=True))
    if path_loops.height:  # (an appended parameter's finding names its pattern)
        pages = pages.filter(pl.Series(
            [_repeat(url_path(u).partition("?")[0]) is None for u in pages[s.URL].to_list()],
            dtype=pl.Boolean))
    return pages.with_columns(
        pl.Series(_NORMAL, [known[u] for u in pages[s.URL].to_list()], dtype=pl.String))


# A session's or a parameter's line for the whole site (`/*?sid=`, `/*&sid=`, `/*;jsessionid=`):
# it reaches other patterns by design, every URL carrying the name
_SITE_WIDE_LINE = re.compile(r"^Disallow: /\*[?&;][^*$]*=$")


def _reached(
    rule: RobotsRule, untrapped: pl.DataFrame, finding: f.Finding, known: Collection[str]
) -> pl.DataFrame:
    """The pages of patterns no finding names (URL, PATTERN) the rule's lines block, but by a
    session's line for the whole site (`_SITE_WIDE_LINE`), and but a search's own result
    pages (`_unsearched`: the search's wherever they are) and an appended parameter's copies
    (`_undoubled`: its lines for the whole site reach the multi-select pages only bots read)."""
    # a session's lines for the whole site, not another kind's line that reads like one (a
    # pagination's `/*?page=` for `/{n}?page`)
    lines = [line for line in rule.lines
             if rule.kind != session_id.KIND or not _SITE_WIDE_LINE.match(line)]
    if rule.status == "withheld" or not any(ln.startswith("Disallow") for ln in lines) or untrapped.height == 0:
        return untrapped.clear()
    hit = untrapped.filter(
        pl.col(s.PATTERN) != (rule.pattern or ""), blocked_expr(lines, pl.col(_NORMAL))
    )
    kept = [u for u, _ in _undoubled(finding, _unsearched(finding, [(u, UNNAMED) for u in hit[s.URL].to_list()]), known)]
    return hit if len(kept) == hit.height else hit.filter(pl.col(s.URL).is_in(kept))


def _spanning(
    rule: RobotsRule, untrapped: pl.DataFrame, finding: f.Finding, known: Collection[str]
) -> RobotsRule:
    """A rule withheld where it reaches into a page of a pattern no finding names, which no
    content list holds where only bots fetched it (a search's own result pages aside,
    `_unsearched`): by a `*` across segments (a variable segment before the date:
    `/weather/*/2029` and `/weather/station/2029`), by a year prefix (`/events/203` and the
    event `/events/2031`), by a shared start (`/c/gloves?page=` and the list's page
    `/c/gloves?page=9`), or by a count of parameters (a list's sorted views)."""
    disallows = [line for line in rule.lines if line.startswith("Disallow")]
    hit = _reached(rule, untrapped, finding, known)
    if hit.height == 0 or not disallows:
        return rule
    url, pattern = hit.sort(s.URL).row(0)[:2]  # the same one every run
    line = next((ln for ln in disallows if all(blocked(matcher((ln,)), [url]))), disallows[0])
    reason = f"{line} would block {url} (of {pattern}, which no finding calls a trap)"
    if "*" in line:
        reason += ": its * spans path segments"
    return replace(rule, lines=(), status="withheld", reason=reason, blocked_examples=(), left_open=0)


def _own_pages(traffic: Traffic, host: str, pattern: str) -> list[tuple[str, str]]:
    """A pattern's pages answered 2xx/3xx to people (OWN), and, where the log records no
    user agent for it, its other pages so answered (OWN_NOT_LOGGED)."""
    rows = traffic.urls.filter(pl.col(s.HOST) == host, pl.col(s.PATTERN) == pattern)
    answered = rows.filter(pl.col(s.STATUS).is_between(200, 399))
    people = traffic.people_read.filter(pl.col(s.HOST) == host, pl.col(s.PATTERN) == pattern)
    own = [(u, OWN) for u in people[s.URL]]
    if pattern in _unlogged_patterns(traffic, host):
        seen = {u for u, _ in own}
        own += [(u, OWN_NOT_LOGGED) for u in answered[s.URL].unique(maintain_order=True)
                if u not in seen]
    return own


def bot_group_rule(
    host: str, bot_name: str, routes: Sequence[str], kind: str, saved: int = 0
) -> RobotsRule:
    """A robots.txt group keeping one crawler off a few routes (polite bots obey it; the
    server rules stop the rest). Not checked against content: keeping this one bot off
    these routes is the point. `saved`: the crawler's requests on them (the finding's)."""
    token = bot_name if re.fullmatch(r"[A-Za-z_-]+", bot_name or "") else None
    if token is None:  # named by the bot all the same: the rule was for it, not for `*`
        reason = f"{comment(bot_name)!r} is not a robots.txt product token ([A-Za-z_-]+)"
        return RobotsRule(host, kind, None, comment(bot_name or ""), (), "withheld", reason)
    if not routes or "/" in routes:
        reason = "a route is the whole site (/): no site-wide ban by default"
        return RobotsRule(host, kind, None, token, (), "withheld", reason)
    lines = []
    for route in routes:  # a `*` segment: any (`/cgit/*/tree/`, aggressive_bot.deep_route_of)
        value = "/".join("*" if part == "*" else escape_value(part) for part in route.split("/"))
        lines += [f"Disallow: {value}"] if route.endswith(("/", ";")) else [
            f"Disallow: {value}$", f"Disallow: {value}?"]  # fmt: skip
    reason = f"keeps {token} off {', '.join(routes)} (for this crawler only)"
    if any("/*/" in route for route in routes):  # the server rule's [^/]+ has no robots.txt form
        reason += "; robots.txt's * spans folders: deeper paths of that name too"
    return RobotsRule(host, kind, None, token, tuple(lines), "emitted", comment(reason), saved)

"""robots.txt matching: Protego, the verifier of record, and the same RFC 9309 matching as
Polars expressions for the bulk.

Protego costs ~25 µs a call (urlsplit, percent-decoding, quoting, then the match), and
`suggest` asks about every candidate rule against every sampled URL: a million calls on a
million-line log. Here each URL is normalised once, vectorised, the way Protego normalises it
(RFC 9309 2.2.2: escapes decoded except `%25` and `%2F`, then everything outside the
unreserved set, `/`, `%` and `=` percent-encoded), and a group of rule lines becomes one
expression over the normalised column: each value a regex (a path prefix, `*` any sequence,
a final `$` the end; RFC 9309 2.2.3), the longest matching value deciding and Allow winning
ties (RFC 9309 2.2.2). tests/test_robots_match.py checks with Hypothesis that `blocked_by`
agrees with Protego's `can_fetch` on generated rules and URLs; robots.py still confirms each
rule it emits with Protego.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from functools import lru_cache
from urllib.parse import quote, urlparse, urlsplit

import polars as pl
from protego import Protego

CHECK_AGENT = "logtrap-check"  # a product token no group names: it obeys the `*` group

# Protego's normalisation, as it reads (protego/_utils.py): the escapes it keeps encoded, and
# the characters it leaves verbatim besides the unreserved ones.
_URL_KEPT, _URL_SAFE = "/%", "/%="
_RULE_KEPT, _RULE_SAFE = "/%*", "/%*="
_HEX = frozenset("0123456789ABCDEFabcdef")
_DISALLOW = frozenset({"disallow", "dissallow", "dissalow", "disalow", "diasllow", "disallaw"})

# A path of printable ASCII without `%` (no escape to decode) and `#` (no fragment): its
# normal form is itself with each reserved character percent-encoded, done in Polars.
_SIMPLE = r"^/[\x21\x22\x24\x26-\x7E]*$"
_ENCODED = [chr(c) for c in range(0x21, 0x7F) if quote(chr(c), safe=_URL_SAFE) != chr(c) and chr(c) not in "%#"]
_ENCODINGS = [quote(ch, safe="") for ch in _ENCODED]
_ROBOTS_TXT = "/robots.txt"  # always allowed (Protego answers it before any rule)


# -- Protego, the verifier ---------------------------------------------------------------------


def matcher(lines: Iterable[str], agent: str = "*") -> Protego:
    """A Protego matcher for rule lines under one `User-agent` group."""
    return Protego.parse(f"User-agent: {agent}\n" + "\n".join(lines) + "\n")


def blocked(robots: Protego, urls: Sequence[str], agent: str = CHECK_AGENT) -> list[bool]:
    """Which URLs the matcher disallows for this crawler.

    >>> blocked(matcher(["Disallow: /*?sid="]), ["/?sid=1", "/?a=1&sid=2", "/a"])
    [True, False, False]
    """
    return [is_blocked(robots, url, agent) for url in urls]


def is_blocked(robots: Protego, url: str, agent: str = CHECK_AGENT) -> bool:
    """One URL; one Python's URL parser refuses (`http://[x`, a scanner's absolute-form
    target with a broken IPv6 host) is one no rule applies to, as in `blocked_expr` (before,
    it stopped `suggest` with a ValueError).

    >>> is_blocked(matcher(["Disallow: /"]), "http://[x")
    False
    """
    try:
        return not robots.can_fetch(absolute(url), agent)
    except ValueError:
        return False


def absolute(url: str) -> str:
    """A path as an absolute URL, so a matcher never reads `//x` as a host name.

    >>> absolute("//a?b"), absolute("https://s/x")
    ('http://logtrap.invalid//a?b', 'https://s/x')
    """
    return f"http://logtrap.invalid{url}" if url.startswith("/") else url


# -- the same matching, vectorised -------------------------------------------------------------


def normalise(urls: pl.Series) -> pl.Series:
    """Each URL as rules are matched against it: path and query, percent-encoding normalised
    (null for a URL no rule applies to: /robots.txt itself). Printable-ASCII paths are
    normalised in Polars; the others once each in Python.

    >>> normalise(pl.Series(["/a?b=1&c", "/caf%c3%a9 x", "/robots.txt"])).to_list()
    ['/a%3Fb=1%26c', '/caf%C3%A9%20x', None]
    """
    urls = urls.cast(pl.String)
    url = pl.col("url")
    simple = url.str.contains(_SIMPLE) & ~url.str.contains(_ROBOTS_TXT, literal=True)
    fast = pl.DataFrame({"url": urls}).select(pl.when(simple).then(url.str.replace_many(_ENCODED, _ENCODINGS)))
    fast = fast.to_series()
    odd = urls.filter(fast.is_null() & urls.is_not_null()).unique()
    if odd.len() == 0:
        return fast.alias(urls.name)
    slow = urls.replace_strict(odd, [_normal(u) for u in odd.to_list()], default=None, return_dtype=pl.String)
    return fast.zip_with(fast.is_not_null(), slow).alias(urls.name)


@lru_cache(maxsize=65536)
def _normal(url: str) -> str | None:
    """One URL's normal form, step by step as Protego's `can_fetch` takes it."""
    url = absolute(url)
    try:
        if _ROBOTS_TXT in url and urlparse(url).path == _ROBOTS_TXT:
            return None
        url = url.partition("#")[0]
        parts = urlsplit(url)
    except ValueError:  # not a URL Protego can read either: no rule applies
        return None
    path = parts.path + (f"?{parts.query}" if "?" in url else "")
    path = quote(_unquote(path, _URL_KEPT), safe=_URL_SAFE)
    return path if path.startswith("/") else f"/{path}"


def _unquote(text: str, kept: str) -> str:
    """Decode %xy escapes (as UTF-8, invalid bytes replaced) except those of `kept`."""
    if "%" not in text:
        return text
    keep = {f"{ord(c):02X}" for c in kept}
    first, *rest = text.split("%")
    out = [first.encode("utf-8")]
    for part in rest:
        if len(part) >= 2 and set(part[:2]) <= _HEX:
            code, part = part[:2].upper(), part[2:]
            if code not in keep:
                out.append(bytes.fromhex(code) + part.encode("utf-8"))
                continue
            part = code + part
        out.append(b"%" + part.encode("utf-8"))
    return b"".join(out).decode("utf-8", "replace")


def _pattern(value: str) -> str:
    """A rule value's normal form: a final `$` is the end anchor, any other `$` a character."""
    if value.startswith(("https://", "http://")):
        value = f"/{value}"
    anchor = "$" if value.endswith("$") else ""
    value = value[: len(value) - len(anchor)]
    return quote(_unquote(value, _RULE_KEPT), safe=_RULE_SAFE) + anchor


def rules(lines: Iterable[str]) -> list[tuple[bool, str]]:
    """(disallow?, normalised value) for a group's Allow/Disallow lines, in the order they
    are tried: longest value first, Allow first among equals; the first match decides.

    Protego also reads a value with `$` as the same value with `%24` (a literal dollar), and
    `Allow: .../index.html` as allowing `.../` too.

    >>> rules(["Disallow: /a", "Allow: /a$", "Disallow: /b*"])
    [(False, '/a%24'), (False, '/a$'), (True, '/b*'), (True, '/a')]
    """
    found: list[tuple[str, bool]] = []

    def add(value: str, disallow: bool) -> None:
        if "$" in value:
            add(value.replace("$", "%24"), disallow)
        normal = _pattern(value)
        found.append((normal, disallow))
        if not disallow and normal.endswith("/index.html"):
            found.append((normal.removesuffix("index.html") + "$", False))

    for line in lines:
        body = line.split("#", 1)[0].strip()
        field, sep, value = body.partition(":")
        field, value = field.strip().lower(), value.strip()
        if not sep or (field != "allow" and field not in _DISALLOW):
            raise ValueError(f"not an Allow or Disallow line: {line!r}")
        if value:
            add(value, field != "allow")
    ordered = sorted(found, key=lambda r: (len(r[0]), not r[1]), reverse=True)
    return [(disallow, normal) for normal, disallow in ordered]


def regex(normal: str) -> str:
    """The regex (Rust syntax, for Polars) of a normalised rule value over normalised URLs.

    >>> regex("/a*.php$"), regex("/s/")
    ('^/a.*\\\\x{2e}php$', '^/s/')
    """
    anchored = normal.endswith("$")
    parts = re.sub(r"\*+", "*", normal[: len(normal) - anchored]).split("*")
    return "^" + ".*".join(map(_literal, parts)) + ("$" if anchored else "")


def _literal(text: str) -> str:
    return "".join(ch if ch.isascii() and (ch.isalnum() or ch in "/_%=") else f"\\x{{{ord(ch):x}}}" for ch in text)


def blocked_expr(lines: Iterable[str], normal: pl.Expr) -> pl.Expr:
    """Whether a group of rule lines disallows each normalised URL (see `normalise`), as
    one Polars expression.

    >>> frame = pl.DataFrame({"n": normalise(pl.Series(["/a/1", "/a/", "/b"]))})
    >>> frame.select(blocked_expr(["Disallow: /a/", "Allow: /a/$"], pl.col("n")))["n"].to_list()
    [True, False, False]
    """
    ordered = rules(lines)
    if not any(disallow for disallow, _ in ordered):
        return normal.is_null() & pl.lit(False)  # a column of False
    if all(disallow for disallow, _ in ordered):
        alternation = "|".join(f"(?:{regex(n)})" for _, n in ordered)
        return normal.str.contains(alternation).fill_null(False)
    chain = pl.when(normal.str.contains(regex(ordered[0][1]))).then(ordered[0][0])
    for disallow, n in ordered[1:]:
        chain = chain.when(normal.str.contains(regex(n))).then(disallow)
    return chain.otherwise(False).fill_null(False).alias(normal.meta.output_name())


def blocked_by(lines: Iterable[str], urls: Sequence[str]) -> list[bool]:
    """`blocked(matcher(lines), urls)` computed in Polars (the same answers, for many URLs).

    >>> blocked_by(["Disallow: /*?sid="], ["/?sid=1", "/?a=1&sid=2", "/a"])
    [True, False, False]
    """
    frame = pl.DataFrame({"n": normalise(pl.Series(list(urls), dtype=pl.String))})
    return frame.select(blocked_expr(list(lines), pl.col("n")))["n"].to_list()

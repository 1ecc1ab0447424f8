"""URL -> pattern: the unit every aggregate and detector works on.

A pattern is the path with its variable segments replaced by placeholders, plus the sorted
names of the query parameters (DESIGN.md), e.g. `/article/{n}/{slug}`, `/calendar?date`,
`/section/{n}?color&size&sort`, `/s/{token}`. Placeholders, tried in this order on each path
segment (the part before any `.ext` suffix and `;matrix` parameters):

- `{date}`  2024-05-01, 2024-05, 2024_05_01, 2024.05.01, 01-05-2024
- `{n}`     a number: 123, -4, 3.5 (so `/events/2019/03` is `/events/{n}/{n}`: a year alone is
            indistinguishable from an id, and an id space must never split into two patterns.
            The calendar detector reads dates from the sampled raw URLs, not from patterns)
- `{hex}`   a UUID, or 8+ hex digits mixing letters and digits (hashes, object ids)
- `{token}` 6+ letters and digits mixed in a way words are not (`a8fk21qz`, `Xk3jQm9`);
            a word followed or preceded by a short number (`iphone15`, `2024report`) is kept
- `{slug}`  three or more words joined by `-` or `_` (`my-first-post`): one article template
            is one pattern, not one per article. Two-word names (`about-us`) are kept

Then a segment that is one word and a number joined by `-` or `_` keeps the word and loses the
number: `thread-12345.html` -> `thread-{n}.html`, `item_37` -> `item_{n}`, `12-days` ->
`{n}-days` (a forum's threads or a shop's items are one template, not a pattern each).

Query parameters keep their names, sorted and deduplicated (values are dropped); names that are
numbers or tokens get the same placeholders. Tracking parameters (utm_*, gclid, fbclid, ... plus
`Settings.tracking_params`) become one `{tracking}` name, so campaign links do not look like
content. Session parameters (sid, phpsessid, ... plus `Settings.session_params`) stay named: the
session_id detector needs them. Matrix parameters (`/cart;jsessionid=AB12`) keep their name
only (`/cart;jsessionid`).

Patterns are computed once per distinct URL, in Polars expressions, then joined back.
`url_pattern(pattern)` is `pattern`: patterns are fixed points, so a pattern can be re-read.

One URL cannot tell a tag from a section: `/tag/python` and `/tag/red-shoes` keep their names.
Once the patterns of a log are known, `merge_names` makes such a segment `{name}` where it
takes many names among patterns otherwise alike (`/tag/{name}`, `/wiki/view/Main/{name}`);
`Tally` applies it (at the end, and while reading once the logs hold many patterns), so
reports and detectors see one template where there is one. It first makes a shop's filters
written into the path (`/shoes/color-red/size-42/`, a facet's name and a value) one template
per order of the filters: `/shoes/color-{value}/size-{value}/`.
"""

from __future__ import annotations

import re

import polars as pl
import pyarrow as pa

from logtrap import schema as s
from logtrap.errors import LogtrapError
from logtrap.keys import NO_CAP, KeyedCache
from logtrap.settings import Settings

try:  # the C fast way (`_patterns.c`); without it, the same in Polars
    from logtrap import _patterns as _fast
except ImportError:  # pragma: no cover - a machine with no C compiler
    _fast = None

TRACKING = "{tracking}"  # the one name all tracking parameters become

# Click and campaign identifiers added by ad platforms, mail tools and analytics; every
# `utm_*` name is tracking too.
TRACKING_PARAMS = frozenset(
    {
        "gclid", "gclsrc", "dclid", "gbraid", "wbraid", "fbclid", "msclkid", "yclid",
        "twclid", "ttclid", "igshid", "li_fat_id", "mc_cid", "mc_eid", "_ga", "_gl",
        "mkt_tok", "_hsenc", "_hsmi", "hsctatracking", "vero_id", "oly_anon_id",
        "oly_enc_id", "rb_clickid", "s_cid", "srsltid", "_openstat", "wickedid",
    }
)  # fmt: skip

# Session-id parameter names used by common platforms (PHP, Java, ASP, ColdFusion, shops).
SESSION_PARAMS = frozenset(
    {
        "sid", "sessionid", "session_id", "session", "sess", "sessid", "phpsessid",
        "jsessionid", "aspsessionid", "cfid", "cftoken", "zenid", "oscsid", "sessionkey",
        "sesskey", "s_id", "xtcsid", "wmsid",
    }
)  # fmt: skip

_EXT = r"\.[A-Za-z][A-Za-z0-9]{0,4}"  # a file extension kept after a placeholder (`{n}.html`)
_MONTH = r"(?:0?[1-9]|1[0-2])"
_DAY = r"(?:0?[1-9]|[12][0-9]|3[01])"
_DATE = (
    rf"\d{{4}}[-_]{_MONTH}(?:[-_]{_DAY})?"
    rf"|\d{{4}}\.{_MONTH}\.{_DAY}"
    rf"|{_DAY}[-_.]{_MONTH}[-_.]\d{{4}}"
)
_NUMBER = r"-?\d+(?:[.,]\d+)?"
_UUID = r"[0-9A-Fa-f]{8}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{12}"
# 8+ hex digits with at least one digit (pure digits are {n} already): spelled out by the
# position of the first digit, because the regex engine has no lookahead
_HEX = "|".join(
    [rf"[A-Fa-f]{{{i}}}\d[0-9A-Fa-f]{{{7 - i},}}" for i in range(7)]
    + [r"[A-Fa-f]{7,}\d[0-9A-Fa-f]*"]
)
# 6+ letters and digits where a digit comes before a letter somewhere (then some digit is
# directly followed by a letter: spelled out by that pair's position), or letters followed by
# 5+ digits. Kept: a word and a short number, `iphone15`, `covid19`.
_A = "[A-Za-z0-9]"
_TOKEN = "|".join(
    [
        r"[A-Za-z]+\d{5,}",
        rf"{_A}{{4,}}\d[A-Za-z]{_A}*",
        rf"{_A}{{3}}\d[A-Za-z]{_A}+",
        rf"{_A}{{2}}\d[A-Za-z]{_A}{{2,}}",
        rf"{_A}\d[A-Za-z]{_A}{{3,}}",
        rf"\d[A-Za-z]{_A}{{4,}}",
    ]
)
_WORD = r"(?:[A-Za-z0-9]|%[0-9A-Fa-f]{2})+"
_SLUG = rf"{_WORD}(?:[-_]{_WORD}){{2,}}"

# (placeholder, segment regex), tried in this order; a segment that became a placeholder is
# never matched again (braces are in no rule), which makes patterns fixed points.
_RULES = (
    ("{date}", _DATE),
    ("{n}", _NUMBER),
    ("{hex}", _UUID),
    ("{hex}", _HEX),
    ("{token}", _TOKEN),
    ("{slug}", _SLUG),
)
_NAME_RULES = _RULES[:-1]  # parameter names: `filter_by_color` is a name, not a slug

# Path segments are matched whole without lookaround by doubling every "/", so each segment
# sits between its own pair of slashes ("/a/12" -> "///a//12/"). A `.ext` or `;matrix` suffix
# is first moved into a pseudo-segment marked with \x01, so the rules see the bare stem.
# Each step is its own `with_columns`: one regex pass over the column per step.
_MARK = "\x01"
_ABSOLUTE = r"^[A-Za-z][A-Za-z0-9+.\-]*://[^/?]*"  # RFC 9112 absolute-form request target
_KEY = "__key"  # private join keys
# the hashes (seed 0) of a row's URL and of its pattern, as `annotate` hands them to the tally
# (`add_patterns_keyed`): its keys of host+URL and host+pattern are these xor'd with the host's
URL_TEXT_HASH = _URL_KEY = "__url_key"
PATTERN_TEXT_HASH = "__pattern_key"
_PATH, _NAMES = "__path", "__names"


def _segment_steps(col: str, rules: tuple[tuple[str, str], ...], sep: str) -> list[pl.Expr]:
    c = pl.col(col)
    return [c.str.replace_all(f"{sep}(?:{rx}){sep}", f"{sep}{ph}{sep}") for ph, rx in rules]


def _path_steps(col: str) -> list[pl.Expr]:
    """Path -> path pattern, one expression per pass."""
    c = pl.col(col)
    return [
        # matrix parameters keep their names only: ";jsessionid=AB12" -> ";jsessionid"
        c.str.replace_all(_MARK, "%01", literal=True).str.replace_all(r";([^/;=]*)=[^/;]*", ";$1"),
        pl.concat_str(pl.lit("/"), c.str.replace_all("/", "//", literal=True), pl.lit("/")),
        c.str.replace_all(rf"((?:{_EXT})(?:;[^/]*)?|;[^/]*)/", f"/{_MARK}$1/"),
        *_segment_steps(col, _RULES, "/"),
        # a word and a number (`thread-12345`, `item_37`, `12-days`): the number is an id
        c.str.replace_all(r"/([A-Za-z]+[-_])[0-9]+/", "/$1{n}/"),
        c.str.replace_all(r"/[0-9]+([-_][A-Za-z]+)/", "/{n}$1/"),
        c.str.replace_all(f"/{_MARK}", "", literal=True)
        .str.strip_prefix("/")
        .str.strip_suffix("/")
        .str.replace_all("//", "/", literal=True),
    ]


def _names_steps(col: str, tracking: list[str]) -> list[pl.Expr]:
    """Parameter names ("b&a&utm_source&b", values already dropped) -> "a&b&{tracking}"."""
    c = pl.col(col)
    known = "|".join(re.escape(name) for name in tracking)
    return [
        pl.concat_str(pl.lit("&"), c.str.replace_all("&", "&&", literal=True), pl.lit("&")),
        c.str.replace_all(rf"(?i)&(?:utm_[^&]*|{known})&", f"&{TRACKING}&"),
        *_segment_steps(col, _NAME_RULES, "&"),
        c.str.replace_all("&+", "&").str.strip_chars("&"),
        pl.when(c.str.contains("&", literal=True))
        .then(c.str.split("&").list.unique().list.sort().list.join("&"))
        .otherwise(c),
    ]


def is_tracking_name(name: str, settings: Settings) -> bool:
    """`is_tracking` for one name.

    >>> is_tracking_name("srsltid", Settings()), is_tracking_name("sid", Settings())
    (True, False)
    """
    return bool(pl.select(is_tracking(pl.lit(name), settings)).item())


def tracking_names(settings: Settings) -> list[str]:
    """The parameter names that become `{tracking}` (lower case), but `utm_*`, which all do."""
    return sorted(TRACKING_PARAMS | {p.lower() for p in settings.tracking_params})


def is_tracking(name: pl.Expr, settings: Settings) -> pl.Expr:
    """True for a raw parameter name that becomes `{tracking}`, in any case.

    >>> pl.select(is_tracking(pl.Series(["UTM_Source", "gclid", "q"]), Settings())).to_series().to_list()
    [True, True, False]
    """
    lower = name.str.to_lowercase()
    return lower.str.starts_with("utm_") | lower.is_in(tracking_names(settings))


# Raised whenever a rule changes the pattern some URL gets: aggregates kept across runs (cron
# state) are keyed by pattern and cannot be continued under other rules.
# 2: a word and a number in one segment lose the number (`thread-{n}.html`).
RULES_VERSION = 2


def rules_id(settings: Settings) -> str:
    """What decides every URL's pattern: the rules' version and the tracking parameters.

    >>> rules_id(Settings()).split(":")[0]
    '2'
    """
    return f"{RULES_VERSION}:" + ",".join(tracking_names(settings))


def _apply(frame: pl.LazyFrame, col: str, steps: list[pl.Expr]) -> pl.LazyFrame:
    for step in steps:
        frame = frame.with_columns(step.alias(col))
    return frame


def _once_per_value(
    frame: pl.LazyFrame, col: str, steps: list[pl.Expr], out: str, also: tuple[pl.Expr, ...] = ()
) -> pl.LazyFrame:
    """Add `out` = `steps` applied to `col`, computed once per distinct value of `col`, and
    the `also` columns computed from `out` (also once per distinct value).

    Distinct values are found by a 64-bit hash: hashing, deduplicating and joining on an integer
    is several times faster than on the strings. A collision among 10^6 distinct values has a
    chance of about 1 in 10^7 and would only give one value another's result.
    """
    frame = frame.with_columns(pl.col(col).hash(0).alias(_KEY))
    distinct = frame.filter(pl.col(_KEY).is_first_distinct()).select(_KEY, pl.col(col).alias(out))
    done = _apply(distinct, out, steps)
    if also:
        done = done.with_columns(also)
    return frame.join(done, on=_KEY, how="left", maintain_order="left").drop(_KEY)


def _with_patterns(urls: pl.LazyFrame, settings: Settings) -> pl.LazyFrame:
    """Add PATTERN and SECTION to a frame of URLs (each step once per distinct path / names)."""
    url = pl.col(s.URL).fill_null("").str.replace(r"(?s)#.*", "")  # no `$`: twice as fast
    absolute = url.str.contains(_ABSOLUTE)
    url = pl.when(absolute).then(url.str.replace(_ABSOLUTE, "/").str.replace("^//", "/")).otherwise(url)
    split = url.str.splitn("?", 2)
    frame = urls.with_columns(
        split.struct.field("field_0").fill_null("").alias(_PATH),
        # parameter names only: values dropped before deduplicating
        split.struct.field("field_1").str.replace_all(r"=[^&]*", "").alias(_NAMES),
    )
    # the section reads only the path, so it is computed once per distinct path too
    section = section_expr(pl.col(s.PATTERN)).alias(s.SECTION)
    frame = _once_per_value(frame, _PATH, _path_steps(s.PATTERN), s.PATTERN, also=(section,))
    frame = _once_per_value(frame, _NAMES, _names_steps("__n", tracking_names(settings)), "__n")
    names = pl.col("__n")
    pattern = (
        pl.when(names.is_not_null() & (names != ""))
        .then(pl.concat_str(pl.col(s.PATTERN), pl.lit("?"), names))
        .otherwise(pl.col(s.PATTERN))
    )
    return frame.with_columns(pattern.alias(s.PATTERN)).drop(_PATH, _NAMES, "__n")


def _patterns_of(urls: pl.DataFrame, settings: Settings) -> pl.DataFrame:
    """(_URL_KEY, PATTERN, SECTION) for a frame of distinct URLs (_URL_KEY, URL), in its
    order, in strings of their own (`schema.owned`: no view into the batch's buffers).

    In C (`_patterns.c`) where the extension is built, a URL at a time, several times faster
    than `_with_patterns`' regex passes over the column: a crawler trap is new URLs, and 1.5M
    new URLs in a 10M-line log took 2.2 s in Polars. URLs that are not ASCII, and every URL
    when a tracking name is not, are left to `_with_patterns`; both ways give the same
    patterns (tests/test_fast_patterns.py).
    """
    tracking = tracking_names(settings)
    if _fast is None or urls.height == 0 or not all(name.isascii() for name in tracking):
        return s.owned(_with_patterns(urls.lazy(), settings).drop(s.URL).collect())
    array = urls.get_column(s.URL).rechunk().to_arrow(compat_level=pl.CompatLevel.oldest())
    validity, offsets, data = array.buffers()
    n = len(array)
    pat_offsets, pat_data, sec_offsets, sec_data, slow = _fast.patterns(
        offsets, data if data is not None else b"", validity, array.offset, n,
        tuple(name.encode() for name in tracking),
    )

    def strings(offsets: bytes, data: bytes) -> pl.Series:
        buffers = [None, pa.py_buffer(offsets), pa.py_buffer(data)]
        return pl.Series(pa.Array.from_buffers(pa.large_string(), n, buffers))

    done = pl.DataFrame({  # strings copied out of the C buffers: owned
        _URL_KEY: urls.get_column(_URL_KEY),
        s.PATTERN: strings(pat_offsets, pat_data),
        s.SECTION: strings(sec_offsets, sec_data),
    })
    if 1 not in slow:  # no URL handed back
        return done
    flags = pa.Array.from_buffers(pa.uint8(), n, [None, pa.py_buffer(slow)])
    left = pl.Series(flags).cast(pl.Boolean)  # the URLs C handed back
    rest = s.owned(_with_patterns(urls.filter(left).lazy(), settings).drop(s.URL).collect())
    # in the order given: each row of `rest` in its URL's place
    at = pl.arg_where(left, eager=True)
    return done.with_columns(done.get_column(c).scatter(at, rest.get_column(c)) for c in (s.PATTERN, s.SECTION))


def session_params(settings: Settings | None = None) -> frozenset[str]:
    """Session-id parameter names (lower case): the built-in list plus the site's own.

    >>> "phpsessid" in session_params()
    True
    """
    extra = (settings or Settings()).session_params
    return SESSION_PARAMS | {p.lower() for p in extra}


def section_expr(pattern: pl.Expr) -> pl.Expr:
    """The first two path levels of a pattern (`/shop/shoes`; `/` for the home page).

    >>> pl.select(section_expr(pl.lit("/article/{n}/{slug}?page"))).item()
    '/article/{n}'
    """
    path = pattern.str.splitn("?", 2).struct.field("field_0").fill_null("")
    head = path.str.extract(r"^(?s)(/?[^/]*(?:/[^/]*)?)", 1).fill_null("")
    trimmed = head.str.strip_suffix("/")
    return pl.when(trimmed == "").then(pl.lit("/")).otherwise(trimmed)


# a URL's pattern and section, and the pattern's hash, made once per distinct pattern there
# rather than per request in the tally (1.5-2 ms of a 195,000-line step)
_CACHE_SCHEMA = {s.PATTERN: pl.String(), s.SECTION: pl.String(), PATTERN_TEXT_HASH: pl.UInt64()}


class PatternCache:
    """The patterns of URLs already seen, so a streaming caller computes each URL's once.

    Keyed by a 64-bit hash of the URL (see `_once_per_value` on collisions), which a lasting
    index (`keys.KeyedCache`) turns into the cache's row. Bounded: when the cache would pass
    `max_urls`, it keeps only the URLs of the current batch, so memory stays flat however many
    distinct URLs the logs hold (a batch's URLs are the likeliest in the next). A cache serves
    one set of settings: other tracking parameters empty it.

    >>> cache = PatternCache(max_urls=10)
    >>> df = pl.DataFrame({"url": ["/a/1", "/a/2", "/a/1"]})
    >>> add_patterns(df, cache=cache)["pattern"].to_list(), len(cache)
    (['/a/{n}', '/a/{n}', '/a/{n}'], 2)
    """

    def __init__(self, max_urls: int = 500_000) -> None:
        self.max_urls = max_urls
        self._cache = KeyedCache(_CACHE_SCHEMA, max_urls)
        self._tracking: list[str] | None = None

    def __len__(self) -> int:
        return len(self._cache)

    @property
    def frame(self) -> pl.DataFrame:
        """The URLs held: `_URL_KEY`, PATTERN, SECTION."""
        return self._cache.frame(_URL_KEY).drop(PATTERN_TEXT_HASH)

    def patterns(self, urls: pl.DataFrame, settings: Settings) -> pl.DataFrame:
        """PATTERN and SECTION of each row of `urls` (`_URL_KEY`, URL), in its order,
        computing only the URLs not seen before."""
        return self._keyed(urls, settings).drop(PATTERN_TEXT_HASH)

    def _keyed(self, urls: pl.DataFrame, settings: Settings) -> pl.DataFrame:
        """`patterns`, and each pattern's hash (PATTERN_TEXT_HASH)."""
        if self._tracking != tracking_names(settings):
            self._cache.clear()
            self._tracking = tracking_names(settings)

        def compute(first: pl.Series) -> pl.DataFrame:
            done = _patterns_of(urls.select(_URL_KEY, s.URL).gather(first), settings)
            return done.with_columns(pl.col(s.PATTERN).hash(0).alias(PATTERN_TEXT_HASH))

        return self._cache.rows(urls.get_column(_URL_KEY), compute)

    def lookup(self, urls: pl.DataFrame, settings: Settings) -> pl.DataFrame:
        """Patterns of these distinct URLs (`_URL_KEY`, URL), computing only the new ones."""
        return self.patterns(urls, settings).insert_column(0, urls.get_column(_URL_KEY))


def add_patterns(
    requests: pl.DataFrame | pl.LazyFrame,
    settings: Settings | None = None,
    cache: PatternCache | None = None,
):
    """Add PATTERN and SECTION columns, computed once per distinct URL and joined back.

    Takes and returns a DataFrame or a LazyFrame alike. With a `cache`, URLs seen in earlier
    calls are not computed again (a LazyFrame's distinct URLs are then collected).

    >>> df = pl.DataFrame({"url": ["/s/a8fk21qz", "/s/Q9x7ZkP2", "/s/a8fk21qz"]})
    >>> add_patterns(df).select("pattern", "section").unique().rows()
    [('/s/{token}', '/s/{token}')]
    """
    if isinstance(requests, pl.DataFrame):
        return add_patterns_keyed(requests, settings, cache).drop(URL_TEXT_HASH, PATTERN_TEXT_HASH)
    settings = Settings.of(settings)
    key = pl.col(s.URL).hash(0).alias(_URL_KEY)
    frame = requests.drop(s.PATTERN, s.SECTION, strict=False).with_columns(key)
    distinct = frame.select(_URL_KEY, s.URL).filter(pl.col(_URL_KEY).is_first_distinct())
    if cache is None:
        done = _with_patterns(distinct, settings).drop(s.URL)
    else:
        done = cache.lookup(distinct.collect(), settings).lazy()
    return frame.join(done, on=_URL_KEY, how="left", maintain_order="left").drop(_URL_KEY)


def add_patterns_keyed(
    requests: pl.DataFrame, settings: Settings | None = None, cache: PatternCache | None = None
) -> pl.DataFrame:
    """`add_patterns` of a DataFrame, with the hashes of each row's URL and pattern
    (URL_TEXT_HASH, PATTERN_TEXT_HASH), which the tally's keys are made of: the URL's is
    the cache's key, the pattern's is kept in the cache, so neither is hashed again per
    request.

    Its rows gather their patterns from a cache (one of its own, with none given) by number:
    no join, which kept the row order at a fraction of what the streaming engine's ordered
    join costs but rebuilt a hash table of the cache each batch.
    """
    settings = Settings.of(settings)
    frame = requests.drop(s.PATTERN, s.SECTION, URL_TEXT_HASH, PATTERN_TEXT_HASH, strict=False)
    frame = frame.with_columns(pl.col(s.URL).hash(0).alias(_URL_KEY))
    cache = cache if cache is not None else PatternCache(max_urls=NO_CAP)
    return frame.hstack(cache._keyed(frame, settings))


NAME = "{name}"  # a path segment that takes many names (merge_names)
VALUE = "{value}"  # a facet's value in a path segment: `color-{value}` (merge_names)
# The filters a shop's "SEO" layered navigation writes into the path, a segment `name-value`
# each (`/shoes/color-red/size-42/`: WooCommerce's filter plugins, Magento's and PrestaShop's
# friendly-URL modules), in the languages of the shops that use them most
FACET_NAMES = frozenset(
    {
        "color", "colour", "colors", "colours", "size", "sizes", "brand", "brands", "price",
        "material", "style", "gender", "fit", "length", "width", "height", "season", "pattern",
        "sleeve", "heel", "shape", "finish", "manufacturer", "vendor", "condition", "rating",
        "farbe", "groesse", "grosse", "marke", "preis", "couleur", "taille", "marque", "prix",
        "matiere", "talla", "marca", "precio", "colore", "taglia", "prezzo", "kleur", "maat",
        "merk", "prijs", "cor", "tamanho", "kolor", "rozmiar",
    }
)  # fmt: skip
FACET_NAMES_RX = "|".join(sorted(FACET_NAMES))  # their regex alternation
# A facet name merges where it takes this many values on the host, or a number (`size-{n}`,
# the word-and-number rule's: numbers are a value space), or two beside a facet that merges:
# a blog's `/blog/size-matters` stays a page; a shop's colours are more (judgement)
_MIN_FACET_VALUES = 3
_FACET = rf"(?i)^({FACET_NAMES_RX})([-_])(.+?)((?:{_EXT})?)$"
_path = pl.col(s.PATTERN).str.splitn("?", 2).struct.field("field_0")
# Deeper segments are never merged: templates are shallower, and paths nested deeper than this
# are relative_loop's (a scanner's path of 500 levels would otherwise cost 500 passes)
_MAX_MERGE_LEVEL = 12


def merge_names(pairs: pl.DataFrame, min_names: int, *, stable_only: bool = False) -> pl.DataFrame:
    """Distinct (host, pattern) -> (host, pattern, "merged"): the pattern with every literal
    path segment below the first level that takes at least `min_names` distinct names, among
    patterns alike in everything else (host, the path before it, its `.ext`, the path after
    it and the parameter names), replaced by `{name}`, or by `{slug}` where a `{slug}` pattern
    is among them (the same template: `/blog/{slug}.html` takes `/blog/releases.html` in).

    A URL alone cannot tell a tag from a section, but a log shows 200 tags. First-level
    segments (`/news`, `/shop`) are a site's sections, and stay. Deepest segments first, so
    `/wiki/Main/{name}` and `/wiki/Help/{name}` are alike when the level above is looked at.

    More patterns can undo a merge: `/tag/a/feed` ... `/tag/z/feed` merge, then `/tag/a/` shows
    25 pages of its own and its `feed` merges into `/tag/a/{name}`, which leaves the `feed`
    group a name short. `stable_only` makes only the merges no pattern added later can undo:
    those of a segment with no literal segment after it (`/products/blue-shirt`,
    `/tag/{name}/`, `/user/{name}/{name}`), whose group can only grow.

    >>> pairs = pl.DataFrame({"host": "-", "pattern": [f"/tag/t{i}/" for i in range(3)]
    ...     + ["/tag/t0/feed", "/about", "/blog/{slug}.html", "/blog/x.html", "/blog/y.html"]})
    >>> merge_names(pairs, 3).filter(pl.col("pattern") != pl.col("merged"))["merged"].to_list()
    ['/tag/{name}/', '/tag/{name}/', '/tag/{name}/']
    >>> merge_names(pairs, 2).filter(pl.col("pattern") == "/blog/x.html")["merged"].item()
    '/blog/{slug}.html'
    """
    frame = pairs.select(s.HOST, s.PATTERN).unique(maintain_order=True).with_columns(
        pl.col(s.PATTERN).alias("merged")
    )
    if frame.height == 0 or min_names <= 0:  # 0: every name kept
        return frame
    frame = _merge_facets(frame)
    # A segment's level is the number of "/" before it; merging never changes that number.
    # No group of patterns alike can take more names at a level than its host has there, and
    # levels are merged deepest first, so a level's names are still those of the patterns.
    segs = frame.select(s.HOST, _path.str.split("/").alias("_segs"))
    frame = frame.with_columns((segs["_segs"].list.len() - 1).alias("_levels"))
    deepest = min(frame["_levels"].max() or 0, _MAX_MERGE_LEVEL)
    for level in range(deepest, 1, -1):  # segment 1 is the first level, kept
        if _most_segments(segs, level) < min_names:  # most levels of a deep log stop here
            continue
        deep = pl.col("_levels") >= level
        merged = _merge_level(frame.filter(deep), level, min_names, stable_only)
        frame = pl.concat([frame.filter(~deep), merged])
    return frame.drop("_levels")


def _merge_facets(frame: pl.DataFrame) -> pl.DataFrame:
    """`merge_names`' first step: a facet's value in a path segment below the first level,
    after its name in the segment (`color-red`, `size-{n}`, `Farbe_rot.html`) or in the
    segment before (`/color/red`: Drupal's pretty paths, Magento's long filter URLs), becomes
    `{value}` where the host's patterns give that name `_MIN_FACET_VALUES` values, a number,
    or merged it before; or two values, in a path beside a facet that merges.

    Orders and subsets of facets stay apart (`/shoes/color-{value}/size-{value}/` and
    `/shoes/size-{value}/color-{value}/`): a rule for the path has to spell them.

    >>> pairs = pl.DataFrame({"host": "-", "pattern": [
    ...     "/shoes/color-red/size-{n}/", "/shoes/color-blue/", "/bags/color-black.html",
    ...     "/blog/style-matters", "/color-red/", "/p/hats/Color/white/size/m.html"]})
    >>> _merge_facets(pairs.with_columns(merged=pl.col("pattern")))["merged"].to_list()
    ['/shoes/color-{value}/size-{value}/', '/shoes/color-{value}/', '/bags/color-{value}.html', '/blog/style-matters', '/color-red/', '/p/hats/Color/{value}/size/{value}.html']
    """
    maybe = pl.col("merged").str.contains(rf"(?i)/[^/?]*/(?:{FACET_NAMES_RX})(?:[-_]|/[^/?])")
    if not frame.select(maybe.any()).item():
        return frame
    split = pl.col("merged").str.splitn("?", 2)
    segs = (
        frame.with_row_index("_row")
        .filter(maybe)
        .select(
            "_row", s.HOST,
            split.struct.field("field_0").str.split("/").alias("_seg"),
            split.struct.field("field_1").alias("_q"),
        )
        .with_columns(pl.int_ranges(pl.col("_seg").list.len()).alias("_level"))
        .explode("_seg", "_level")
    )
    joined = pl.col("_seg").str.extract_groups(_FACET)  # name, separator, value, extension
    after = pl.col("_seg").str.extract_groups(rf"^(.+?)((?:{_EXT})?)$")  # value, extension
    before = pl.col("_seg").shift(1).over("_row", order_by="_level")
    paired = (pl.col("_level") >= 3) & before.str.to_lowercase().is_in(sorted(FACET_NAMES))
    segs = segs.with_columns(  # segment 1 is a section
        pl.when(pl.col("_level") >= 2).then(joined).alias("_joined"),
        pl.when(paired).then(after).alias("_after"),
        before.alias("_before"),
    )
    first = pl.col("_joined").struct.field("1").is_not_null()
    segs = segs.with_columns(
        pl.when(first).then(pl.col("_joined").struct.field("1")).otherwise(pl.col("_before"))
        .str.to_lowercase().alias("_name"),
        pl.when(first).then(pl.concat_str(pl.col("_joined").struct.field("1"), pl.col("_joined").struct.field("2")))
        .otherwise(pl.lit("")).alias("_prefix"),
        pl.coalesce(pl.col("_joined").struct.field("3"), pl.col("_after").struct.field("1")).alias("_value"),
        pl.coalesce(pl.col("_joined").struct.field("4"), pl.col("_after").struct.field("2")).alias("_ext"),
    )
    value = pl.col("_value")
    counts = (
        segs.filter(value.is_not_null())
        .group_by(s.HOST, "_name")
        .agg(value.n_unique().alias("_values"), value.is_in([VALUE, "{n}"]).any().alias("_merged"))
        .with_columns(((pl.col("_values") >= _MIN_FACET_VALUES) | pl.col("_merged")).alias("_merge"))
    )
    # two values where a facet that merges is in the same path (a material, cotton or wool,
    # beside colours and sizes)
    rows = segs.join(counts.filter("_merge").select(s.HOST, "_name"), on=[s.HOST, "_name"], how="semi")
    beside = (
        segs.filter(value.is_not_null())
        .join(rows.select("_row").unique(), on="_row", how="semi")
        .select(s.HOST, "_name")
        .unique()
    )
    values = (  # a facet that merges is beside itself
        counts.filter(pl.col("_merge") | (pl.col("_values") >= 2))
        .join(beside, on=[s.HOST, "_name"], how="semi")
        .select(s.HOST, "_name", pl.lit(True).alias("_merge"))
    )
    merged = (
        segs.join(values, on=[s.HOST, "_name"], how="left", maintain_order="left")
        .with_columns(
            pl.when(pl.col("_merge") & value.is_not_null())
            .then(pl.concat_str(pl.col("_prefix"), pl.lit(VALUE), pl.col("_ext")))
            .otherwise(pl.col("_seg"))
            .alias("_seg")
        )
        .group_by("_row", maintain_order=True)
        .agg(pl.col("_seg").str.join("/"), pl.col("_q").first())
        .select(
            "_row",
            pl.when(pl.col("_q").is_not_null())
            .then(pl.concat_str(pl.col("_seg"), pl.lit("?"), pl.col("_q")))
            .otherwise(pl.col("_seg"))
            .alias("_facets"),
        )
    )
    return (
        frame.with_row_index("_row")
        .join(merged, on="_row", how="left", maintain_order="left")
        .with_columns(pl.coalesce("_facets", "merged").alias("merged"))
        .drop("_row", "_facets")
    )


def _most_segments(segs: pl.DataFrame, level: int) -> int:
    """The most distinct segments any host has at path level `level` (a relative-link loop
    nests the same few names 400,000 ways: 11 levels skipped, 6.4 s -> 0.6 s)."""
    seg = pl.col("_segs").list.get(level, null_on_oob=True).alias("_seg")
    most = segs.select(s.HOST, seg).drop_nulls().group_by(s.HOST).agg(pl.col("_seg").n_unique())
    return most.get_column("_seg").max() or 0  # type: ignore[return-value]


def _merge_level(
    frame: pl.DataFrame, level: int, min_names: int, stable_only: bool
) -> pl.DataFrame:
    """`merge_names` for the path segment at `level` (1 = the first)."""
    split = pl.col("merged").str.splitn("?", 2)
    segs = split.struct.field("field_0").str.split("/")
    query = split.struct.field("field_1")
    parts = frame.with_columns(
        segs.alias("_segs"),
        pl.when(query.is_not_null()).then(pl.lit("?") + query).otherwise(pl.lit("")).alias("_q"),
    )
    seg = pl.col("_segs").list.get(level, null_on_oob=True)
    after = pl.col("_segs").list.slice(level + 1)
    parts = parts.with_columns(
        pl.col("_segs").list.head(level).list.join("/").alias("_prefix"),
        seg.str.extract(f"({_EXT})$", 1).fill_null("").alias("_ext"),
        seg.alias("_seg"),
        (
            pl.when(after.list.len() > 0)
            .then(pl.lit("/") + after.list.join("/"))
            .otherwise(pl.lit(""))
            + pl.col("_q")
        ).alias("_rest"),
    ).with_columns(
        pl.col("_seg")
        .str.slice(0, pl.col("_seg").str.len_chars() - pl.col("_ext").str.len_chars())
        .alias("_stem"),
    )
    group = [s.HOST, "_prefix", "_ext", "_rest"]
    stem = pl.col("_stem")
    literal = pl.col("_seg").is_not_null() & (stem != "") & ~stem.str.contains("{", literal=True)
    if stable_only:  # and nothing after it that a later merge could change
        named = pl.element().str.contains("{", literal=True).not_() & (pl.element() != "")
        literal = literal & ~pl.col("_segs").list.slice(level + 1).list.eval(named).list.any()
        # nor a facet's name or value (`_merge_facets`): more patterns may make it a facet's
        facets = sorted(FACET_NAMES)
        previous = pl.col("_segs").list.get(level - 1, null_on_oob=True).str.to_lowercase()
        literal = literal & ~(
            stem.str.contains(_FACET) | stem.str.to_lowercase().is_in(facets)
            | ((level >= 3) & previous.is_in(facets).fill_null(False))
        )
    names = parts.filter(literal).group_by(group).agg(stem.n_unique().alias("_names"))
    slugs = parts.filter(stem == "{slug}").select(group).unique().with_columns(_slug=pl.lit(True))
    placeholder = pl.when(pl.col("_slug")).then(pl.lit("{slug}")).otherwise(pl.lit(NAME))
    merged = pl.concat_str(
        pl.col("_prefix"), pl.lit("/"), placeholder, pl.col("_ext"), pl.col("_rest")
    )
    return (
        parts.join(names, on=group, how="left", nulls_equal=False)
        .join(slugs, on=group, how="left")
        .with_columns(
            pl.when(literal & (pl.col("_names") >= min_names))
            .then(merged)
            .otherwise(pl.col("merged"))
            .alias("merged")
        )
        .select(s.HOST, s.PATTERN, "merged", "_levels")
    )


def url_pattern(url: str, settings: Settings | None = None) -> str:
    """The pattern of one URL (the same expressions `add_patterns` runs on every URL).

    >>> url_pattern("/section/3?sort=price&color=red&size=9")
    '/section/{n}?color&size&sort'
    >>> url_pattern("/calendar?date=2071-04&utm_source=x")
    '/calendar?date&{tracking}'
    >>> url_pattern("/article/12/my-first-post")
    '/article/{n}/{slug}'
    """
    if url is None:  # str(None) made the pattern 'None'
        raise LogtrapError("url_pattern takes a URL, not None")
    return _patterns_of(_one_url(url), Settings.of(settings))[s.PATTERN].item()


def section(url: str) -> str:
    """The first two path levels of a URL's pattern.

    >>> section("/shop/shoes/1234?page=2")
    '/shop/shoes'
    """
    return _patterns_of(_one_url(url), Settings())[s.SECTION].item()


def _one_url(url: object) -> pl.DataFrame:
    text = url if isinstance(url, str) else str(url)
    return pl.DataFrame({_URL_KEY: [0], s.URL: [text]}, schema={_URL_KEY: pl.UInt64, s.URL: pl.String})

"""facets: every filter combined with every other, in every order — URLs far outnumber pages.

A pattern is a facet trap when

- its URLs carry at least `facets_min_params` filters (`_filters`: tracking and session
  names, a list's page and the parts of a date not counted: a calendar's `?option=events&
  task=month&year=&month=` is one varying date, a job board's `?location=&category=&page=`
  two filters and pagination's trap), at least two of which take more than one value in its
  sampled URLs, on a path with at least `_MIN_PARAM_SETS` sets of filters (filters are
  combined one, two, three at a time; a form always sending the same fields is one
  template's pages) or with one answer to at least `_TOP_SIZE_SHARE` of its URLs (a filter
  form sending every field onto "no products match"); or at least two names appear in more
  than one order,
- at least `facets_min_urls` distinct URLs were sampled, on the pattern or on the path's
  patterns that pass the other tests together (each with `_MIN_SET_URLS` at least, hardly
  read by people, `_SET_PEOPLE_SHARE`: one trap over every set of filters), and
- they far outnumber their distinct responses: at least `facets_min_urls_per_size` URLs
  answered 200 per distinct response size, and
- people fetched fewer than `_PEOPLE_READ_SHARE` of the sampled URLs bots were answered 200
  on, or the names come in several orders: the combinations are the crawlers' own.

A catalog whose URLs each show a distinct page has about one URL per size, so it stays silent.
Wasted requests: the bot requests beyond one per distinct response, scaled from the sample.
The severity is judged by the host's facet findings together (`host_facet_wasted_requests`;
`path_wasted_requests` counts the path's): one trap split over many sets of filters is a
sliver in each, and a shop's layered navigation, one engine over every category, a sliver in
each category (the 718 findings of a Magento shop's layered navigation, together wasting a
fifth of its crawl, were each "info"). Evidence also counts the path's sets
of filters (`param_sets`: its patterns with other filter combinations) and the distinct orders
the names were seen in.

Filters are not always parameters of their own. Written into the path (`/shoes/color-red/
size-42/`, which `patterns.merge_names` makes `/shoes/color-{value}/size-{value}/`), they are
read as the parameters of the path without them, its patterns of one set of filters in
several orders being that set's orders. Packed into one parameter (PrestaShop's `?q=Size-S/
Color-White`, `_packed`), one pattern holds every set: its filters, sets and orders are its
URLs', and its robots.txt lines take the URLs with two filters or more (`packs_many`). A
filter's values listed in its parameter (WooCommerce's `?filter_color=red,blue`, `_listed`)
are a filter each, the same way: a pattern's lists are its sets of values, in the orders they
were picked, and its robots.txt lines take the lists (`has_list`), not one value alone.
"""

from __future__ import annotations

import polars as pl

from logtrap import findings as f
from logtrap import schema as s
from logtrap.detectors import _shape, _sort
from logtrap.detectors.pagination import PAGE_PARAMS
from logtrap.patterns import FACET_NAMES_RX, TRACKING, is_tracking, session_params
from logtrap.settings import Settings
from logtrap.traffic import Traffic

KIND = "facets"

ADVICE = (
    "Link filter combinations with rel=nofollow, keep one canonical parameter order (and "
    "rel=canonical to the unfiltered page), and stop generating links for combinations beyond "
    "one or two filters; then Disallow the multi-parameter URLs in robots.txt (noindex first "
    "if they are already indexed)."
)


# Filters are picked one, two, three at a time: the path shows several sets of filters (its
# patterns with other filter combinations; the bare path and the tracked twins are none). One
# form always sending the same fields (a currency converter's `?amount=&from=&to=`, a map's
# `?lat=&lng=&zoom=`) is pages of one template, however alike their sizes (judgement: one
# filter, another, both)...
_MIN_PARAM_SETS = 3
# ...unless one answer is a good share of its URLs: a filter form sending every field, empty
# ones too, onto "no products match" (83% of a trap's URLs; 1.7% of a converter's, whose pages
# merely fall within 80 bytes of each other; judgement)
_TOP_SIZE_SHARE = 0.25
# A path's facet patterns count their URLs together (`facets_min_urls`): a crawler adding one
# filter at a time to every link spreads the trap over every set of filters, each a pattern of
# a few URLs. Each still needs this many, for its own URLs per size to mean anything (judgement)
_MIN_SET_URLS = 10
# ...and people may make this share of its requests at most: a used-car search's sets of
# three filters, a few dozen URLs each, mostly "no cars match" but people reading the ones
# with stock (18%), were a trap whose rule blocked those pages (judgement)
_SET_PEOPLE_SHARE = 0.05
# A trap's combinations are the crawlers' own: people open a few of them. Where people also
# fetched this share of the URLs bots were answered 200 on, in one order of the names, the
# URLs are what the site's own pages link for people (an image resizer's `?url=&w=&q=`, each
# image in a few widths, one placeholder size in the log), not combinations nobody asked for
# (judgement: the sample shop's facets, none; a resizer's images, all of them). Names in
# several orders are a crawler's permutations, however many of the site's own links people
# read beside them.
_PEOPLE_READ_SHARE = 0.5
# Parameters that are no filters: a list's page, whose empty pages past the last one are
# pagination's trap; and a date's parts where two or more of them vary together as one value
# (a calendar's `?year=&month=`; a used car's `?make=&model=&year=` is filtered by its year)
# (`p` stays a filter here: a tyre's profile, a post, as often as a page)
_PAGE = rf"(?i)^(?:{'|'.join(n for n in PAGE_PARAMS if n != 'p')})$"
_DATE_PARTS = r"(?i)^(?:date|day|week|month|year|d|m|y|monat|jahr|jour|mois|annee|dia|mes|anio)$"


def _filters(names: pl.Expr, ignored: list[str]) -> pl.Expr:
    """A list of parameter names -> the filters among them: not `ignored`, no list's page
    (`_PAGE`), and no date's parts where two or more of them come together (`_DATE_PARTS`).

    >>> names = pl.Series([["make", "model", "year"], ["option", "task", "year", "month"],
    ...                    ["page", "q", "sid"], [""]])
    >>> pl.select(_filters(names, ["sid"])).to_series().to_list()
    [['make', 'model', 'year'], ['option', 'task'], ['q'], []]
    """
    kept = names.list.eval(pl.element().filter(
        (pl.element() != "") & ~pl.element().str.to_lowercase().is_in(ignored)
        & ~pl.element().str.contains(_PAGE)
    ))
    dates = kept.list.eval(pl.element().str.contains(_DATE_PARTS)).list.sum()
    return pl.when(dates >= 2).then(
        kept.list.eval(pl.element().filter(~pl.element().str.contains(_DATE_PARTS)))
    ).otherwise(kept)


# A facet in the path: `/shoes/color-{value}/size-{value}/` (or `/shoes/color/{value}/size/
# {value}`) is `/shoes/` filtered by color and size (`patterns.merge_names`), as `/shoes/?color=
# &size=` is; its URLs' segments are the pairs
_PATTERN_FACET = rf"/((?i:{FACET_NAMES_RX}))(?:[-_]|/)\{{value\}}[^/?]*"
_URL_FACET = r"/([^/?]+?)(?:[-_]|/)([^/?]+)"  # one of a pattern's facets (`_as_query`)
_QUERIED = "_queried"  # the URL with its path's facets as parameters (`_as_query`)


# PrestaShop's faceted search packs every filter into one parameter, a group per filter: its
# name, `-`, its values joined by `-`; groups joined by `/` (`?q=Size-S-M/Color-White`). A
# pattern's `q` is packed filters where nearly all its values are groups (`_PACKED_SHARE`), a
# good share two or more (`_PACKED_MULTI_SHARE`: a search for "t-shirt" is one group, and
# searches hardly ever hold a "/"), under a few names (`_PACKED_MAX_NAMES`) (judgement)
PACKED_PARAM = "q"
_GROUP = r"[^-/&=]+-[^/&]+"
_PACKED = rf"^{_GROUP}(?:/{_GROUP})*$"
_PACKED_SHARE = 0.9
_PACKED_MULTI_SHARE = 0.25
_PACKED_MAX_NAMES = 12


def _packed_value(url: pl.Expr) -> pl.Expr:
    """The value of a URL's `q` parameter, its escaped slashes as slashes ("" without one).

    >>> pl.select(_packed_value(pl.lit("/3-clothes?page=2&q=Size-S%2FColor-White"))).item()
    'Size-S/Color-White'
    """
    value = _shape.query_of(url).str.extract(rf"(?:^|&){PACKED_PARAM}=([^&]*)", 1)
    return value.str.replace_all("(?i)%2F", "/").fill_null("")


def _unpacked(url: pl.Expr) -> pl.Expr:
    """A URL with its packed filters as parameters of their own, first.

    >>> pl.select(_unpacked(pl.lit("/3-clothes?page=2&q=Size-S-M/Color-White"))).item()
    '/3-clothes?Size=S-M&Color=White&page=2'
    """
    pairs = _packed_value(url).str.split("/").list.eval(
        pl.element().str.replace(r"^([^-]+)-", "${1}=")
    ).list.join("&")
    rest = _shape.query_of(url).str.replace_all(rf"(?:^|&){PACKED_PARAM}=[^&]*", "").str.strip_prefix("&")
    joined = pl.when(rest != "").then(pl.lit("&")).otherwise(pl.lit(""))
    return pl.concat_str(_shape.path_of(url), pl.lit("?"), pairs, joined, rest)


def _packed(urls: pl.DataFrame) -> pl.DataFrame:
    """(host, pattern) of the sampled URLs' patterns whose `q` packs filters ("_packed").

    >>> urls = pl.DataFrame({"host": "-", "pattern": ["/{n}-men?q"] * 2 + ["/search?q"] * 2,
    ...     "url": ["/3-men?q=Size-S/Color-Red", "/3-men?q=Size-M", "/search?q=t-shirt", "/search?q=red"]})
    >>> _packed(urls).sort("pattern").rows()
    [('-', '/search?q', False), ('-', '/{n}-men?q', True)]
    """
    value = _packed_value(pl.col(s.URL))
    groups = value.str.split("/")
    return urls.filter(value != "").group_by(_shape.KEYS).agg(
        (
            (value.str.contains(_PACKED).mean() >= _PACKED_SHARE)
            & (value.str.contains("/", literal=True).mean() >= _PACKED_MULTI_SHARE)
            & (groups.list.eval(pl.element().str.extract("^([^-]+)-", 1)).explode().n_unique()
               <= _PACKED_MAX_NAMES)
        ).alias("_packed")
    )


def packs_many(url: pl.Expr) -> pl.Expr:
    """True for a URL whose `q` packs two filters or more (a filter set, not one filter).

    >>> pl.select(packs_many(pl.Series(["/3-men?q=Size-S%2FColor-Red", "/3-men?q=Size-S-M"]))).to_series().to_list()
    [True, False]
    """
    return _packed_value(url).str.contains("/", literal=True)


# WooCommerce's layered navigation lists a filter's values in its one parameter, in the order
# they were picked (`?filter_color=red,blue&filter_size=m`): each value is a filter of the
# set, and one set comes in several orders. A pattern lists values where this share of its
# sampled URLs hold a list (judgement: a shop's lists are most of its bots' filter URLs; one
# single value a page of its own)
LIST_SEPARATOR = r"(?i)(?:,|%2C|\||%7C)"  # what joins the values: a comma or a bar, escaped or not
_LISTED_SHARE = 0.25
_ITEM = "~"  # a listed value as a filter of its own: `filter_color~red` (`_listed_filters`)


def has_list(url: pl.Expr) -> pl.Expr:
    """True for a URL whose query holds a parameter with a list of values (`a,b`, `a|b`).

    >>> pl.select(has_list(pl.Series(["/c?filter_color=red%2Cblue", "/c?color=red", "/c?n=1,"]))).to_series().to_list()
    [True, False, False]
    """
    return _shape.query_of(url).str.contains(rf"(?:^|&)[^=&]+=[^&]*?[^&=]{LIST_SEPARATOR}[^&]")


def _listed(urls: pl.DataFrame) -> pl.DataFrame:
    """(host, pattern) of the sampled URLs' patterns that list values ("_listed").

    >>> urls = pl.DataFrame({"host": "-", "pattern": ["/c?color"] * 3,
    ...     "url": ["/c?color=red,blue", "/c?color=red", "/c?color=blue"]})
    >>> _listed(urls).rows()
    [('-', '/c?color', True)]
    """
    return urls.group_by(_shape.KEYS).agg(
        (has_list(pl.col(s.URL)).mean() >= _LISTED_SHARE).alias("_listed")
    )


def set_urls(urls: pl.DataFrame) -> pl.Expr | None:
    """Where one pattern holds every set of filters, which of its sampled URLs (host, pattern,
    url) are its trap: two packed filters or more (`packs_many`), or a list of values
    (`has_list`); the others are pages filtered once. None for a pattern of one set.

    >>> urls = pl.DataFrame({"host": "-", "pattern": "/c?color", "url": ["/c?color=red,blue", "/c?color=red"]})
    >>> urls.filter(set_urls(urls))["url"].to_list()
    ['/c?color=red,blue']
    """
    if _packed(urls).get_column("_packed").any():
        return packs_many(pl.col(s.URL))
    if _listed(urls).get_column("_listed").any():
        return has_list(pl.col(s.URL))
    return None


def _listed_filters(urls: pl.DataFrame, column: str, ignored: list[str], settings: Settings) -> pl.Series:
    """Each URL's (`column`) parameter names in order, a listed value a name of its own
    (`color~red`; tracking and session names' lists not split).

    >>> urls = pl.DataFrame({"u": ["/c?color=red,blue&size=m&utm_term=a,b", "/c"]})
    >>> _listed_filters(urls, "u", [], Settings()).to_list()
    [['color~red', 'color~blue', 'size', 'utm_term'], []]
    """
    pair = pl.col("_pair")
    name, value = pair.str.extract(r"^([^=]*)"), pair.str.extract(r"=(.*)$").fill_null("")
    split = value.str.contains(LIST_SEPARATOR) & ~is_tracking(name, settings) & ~name.str.to_lowercase().is_in(ignored)
    item = pl.col("_item")
    return (
        urls.select(_shape.query_of(pl.col(column)).str.split("&").alias("_pair"))
        .with_row_index("_i")
        .explode("_pair")
        .with_columns(pl.when(split).then(value.str.replace_all(LIST_SEPARATOR, ",")).otherwise(pl.lit(""))
                      .str.split(",").alias("_item"), name.alias("_name"))
        .explode("_item")
        .group_by("_i", maintain_order=True)
        .agg(
            pl.when(item != "").then(pl.concat_str("_name", pl.lit(_ITEM), item)).otherwise("_name")
            .filter(pl.col("_name") != "")
        )
        .get_column("_name")
    )


def _path_facets(pattern: pl.Expr) -> tuple[pl.Expr, pl.Expr]:
    """A pattern -> (its path without facet segments, the facets' names in path order).

    >>> path, names = _path_facets(pl.lit("/shoes/color-{value}/Size_{value}.html/?page"))
    >>> pl.select(path, names.alias("names")).row(0)
    ('/shoes/', ['color', 'Size'])
    """
    path = _shape.path_of(pattern)
    names = path.str.extract_all(_PATTERN_FACET).list.eval(
        pl.element().str.extract(_PATTERN_FACET, 1)
    )
    return path.str.replace_all(_PATTERN_FACET, "").str.replace(r"^$", "/"), names


def _as_query(url: pl.Expr, names: pl.Expr) -> pl.Expr:
    """A URL with the facets of its path (below the first level) that its pattern names
    (`names`, `_path_facets`) as query parameters first, so they are read as a query's.

    >>> names = pl.lit(["color", "size"])
    >>> pl.select(_as_query(pl.lit("/shoes/color-red/size/42/?page=2"), names)).item()
    '/shoes/color-red/size/42/?color=red&size=42&page=2'
    >>> pl.select(_as_query(pl.lit("/color-red/style-x/"), names)).item()
    '/color-red/style-x/'
    """
    path = _shape.path_of(url).str.replace(r"^/[^/]*", "")  # the first level: a section
    named = pl.concat_str(pl.lit("/((?i:"), names.list.join("|"), pl.lit(r"))(?:[-_]|/)([^/?]+)"))
    pairs = path.str.extract_all(named).list.eval(
        pl.element().str.replace(_URL_FACET, "${1}=${2}")
    ).list.join("&")
    pairs = pl.when(names.list.len() > 0).then(pairs).otherwise(pl.lit(""))
    query = _shape.query_of(url)
    joined = pl.when((pairs != "") & (query != "")).then(pl.lit("&")).otherwise(pl.lit(""))
    return pl.when(pairs == "").then(url).otherwise(
        pl.concat_str(_shape.path_of(url), pl.lit("?"), pairs, joined, query)
    )


def _varying(urls: pl.DataFrame, ignored: list[str], settings: Settings) -> pl.DataFrame:
    """Per pattern, how many of its filters (`_filters`; tracking and session names not
    counted) take more than one value in its sampled URLs ("varying_params").

    >>> urls = pl.DataFrame({"host": "-", "pattern": "/c?color&month&option&year", "url": [
    ...     "/c?option=cal&year=2024&month=1&color=red",
    ...     "/c?option=cal&year=2031&month=5&color=blue&gclid=x"]})
    >>> _varying(urls, [], Settings())["varying_params"].to_list()
    [1]
    """
    pair = pl.col("_pair").str.splitn("=", 2)
    name = pair.struct.field("field_0")
    tracking = is_tracking(name, settings) | name.str.to_lowercase().is_in(ignored)
    per_name = (
        urls.select(*_shape.KEYS, _shape.query_of(pl.col(s.URL)).str.split("&").alias("_pair"))
        .explode("_pair")
        .filter((pl.col("_pair") != "") & ~tracking)
        .group_by(*_shape.KEYS, name.alias("_name"))
        .agg(pair.struct.field("field_1").fill_null("").n_unique().alias("_values"))
    )
    names = per_name.group_by(_shape.KEYS).agg(pl.col("_name")).select(
        *_shape.KEYS, _filters(pl.col("_name"), []).alias("_filters")
    )
    return (
        per_name.join(names, on=_shape.KEYS)
        .filter(pl.col("_filters").list.contains(pl.col("_name")))
        .group_by(_shape.KEYS)
        .agg((pl.col("_values") >= 2).sum().cast(pl.Int64).alias("varying_params"))
    )


def detect(traffic: Traffic, settings: Settings) -> pl.DataFrame:
    """Facet traps: many parameters, many orders, many URLs per distinct response; and the
    sort orders of a host's lists, a finding per sort parameter (`_sort.py`).

    >>> from logtrap.traffic import Tally
    >>> detect(Tally().finish(), Settings()).shape
    (0, 9)
    """
    combined = _combinations(traffic, settings)
    return pl.concat([combined, _sort.detect(traffic, settings, combined)])


def _combinations(traffic: Traffic, settings: Settings) -> pl.DataFrame:
    """Facet traps: many parameters, many orders, many URLs per distinct response."""
    if traffic.urls.height == 0:
        return f.empty_findings()
    ignored = sorted(session_params(settings) | {TRACKING})
    names = (
        pl.col(s.PATTERN).str.splitn("?", 2).struct.field("field_1").fill_null("").str.split("&")
    )
    path, facets = _path_facets(pl.col(s.PATTERN))
    patterns = (
        _shape.pattern_totals(traffic)
        .with_columns(
            _filters(pl.concat_list(facets, names), ignored).alias("params"),
            path.alias("path"),
        )
        .with_columns(pl.col("params").list.len().alias("param_count"))
    )
    # the path's distinct sets of filters, the bare path's (none) not counted
    sets = (
        patterns.filter(pl.col("param_count") > 0)
        .group_by(s.HOST, "path")
        .agg(pl.col("params").list.sort().list.join("&").n_unique().alias("param_sets"))
    )
    # one filter may pack the others (`_packed`) or list its values (`_listed`)
    patterns = patterns.filter(pl.col("param_count") >= 1).join(
        sets, on=[s.HOST, "path"], how="left"
    )
    # a path's facets in several orders are patterns apart (`/shoes/color-{value}/size-{value}/`
    # and `/shoes/size-{value}/color-{value}/`): the orders a set of filters comes in on its path
    name_set = pl.col("params").list.sort().list.join("&")
    patterns = patterns.with_columns(
        pl.col("params").list.join("&").n_unique().over(s.HOST, "path", name_set).alias("_path_orders")
    )
    if patterns.height == 0:
        return f.empty_findings()
    shell = _shape.shell_sizes(traffic, settings)
    urls = _shape.per_url(traffic.urls, shell).join(
        patterns.select(_shape.KEYS), on=_shape.KEYS, how="semi"
    )
    urls = (
        urls.join(_packed(urls), on=_shape.KEYS, how="left")
        .join(_listed(urls), on=_shape.KEYS, how="left")
        .with_columns(
            pl.col("_packed").fill_null(False),
            (pl.col("_listed").fill_null(False) & ~pl.col("_packed").fill_null(False)).alias("_listed"),
        )
        .with_columns(
            pl.when(pl.col("_packed"))
            .then(_unpacked(pl.col(s.URL)))
            .otherwise(_as_query(pl.col(s.URL), facets))
            .alias(_QUERIED)
        )
        .with_row_index("_i")
    )
    in_order = (
        _shape.query_of(pl.col(_QUERIED))
        .str.replace_all(r"=[^&]*", "")
        .str.split("&")
        .list.eval(pl.element().filter(pl.element() != ""))
    )
    listed = urls.filter("_listed")
    urls = urls.with_columns(in_order.alias("_in_order")).update(  # a listed value a filter
        listed.select("_i", _listed_filters(listed, _QUERIED, ignored, settings).alias("_in_order")),
        on="_i",
    ).drop("_i")
    in_order = pl.col("_in_order").list.unique(maintain_order=True)
    urls = urls.with_columns(
        in_order.list.join("&").alias("_order"),
        _filters(in_order, ignored).list.sort().list.join("&").alias("_set"),
        _filters(in_order, ignored).list.len().alias("_filters"),
    )
    # packed filters and listed values: one pattern holds every set of filters, in every
    # order; its sets and orders are its URLs'
    unpacked = (
        urls.filter(pl.col("_packed") | pl.col("_listed"))
        .group_by(*_shape.KEYS, "_set")
        .agg(pl.col("_order").n_unique().alias("_orders"), pl.col("_filters").first())
        .group_by(_shape.KEYS)
        .agg(
            pl.col("_set").filter(pl.col("_set") != "").str.split("&")
            .list.explode(keep_nulls=False, empty_as_null=False)
            .str.replace(f"{_ITEM}.*", "").unique().sort().alias("_params"),  # names, not values
            pl.col("_filters").max().alias("_param_count"),
            pl.col("_set").filter(pl.col("_filters") > 0).n_unique().alias("_param_sets"),
            pl.col("_orders").max().alias("_set_orders"),
        )
    )
    patterns = patterns.join(unpacked, on=_shape.KEYS, how="left").with_columns(
        pl.coalesce(*pair).alias(pair[1])
        for pair in (("_params", "params"), ("_param_count", "param_count"), ("_param_sets", "param_sets"))
    ).filter(pl.col("param_count") >= 2)
    ok = _shape.sized_ok()  # answered 200 with a size that is evidence
    varying = _varying(urls.with_columns(pl.col(_QUERIED).alias(s.URL)), ignored, settings)
    sampled = urls.join(varying, on=_shape.KEYS, how="left").group_by(
        _shape.KEYS
    ).agg(
        pl.col("varying_params").first().fill_null(0),
        pl.len().alias("sampled_urls"),
        ok.sum().alias("sampled_ok_urls"),
        pl.col(s.BYTES).filter(ok).n_unique().alias("distinct_sizes"),
        pl.col(s.BYTES).filter(ok).value_counts(sort=True).first().struct.field("count")
        .alias("_top_size_urls"),
        pl.col("_order").n_unique().alias("name_orders"),
        pl.col(s.BOT_REQUESTS).filter(ok).sum().alias("sampled_ok_bot"),
        (pl.col(s.HUMAN_REQUESTS) > 0).filter(ok & (pl.col(s.BOT_REQUESTS) > 0)).mean()
        .fill_null(0.0).alias("_people_read"),
    )
    shaped = (
        ((pl.col("param_count") >= settings.facets_min_params)
         & (pl.col("varying_params") >= 2)
         & ((pl.col("param_sets") >= _MIN_PARAM_SETS)
            | (pl.col("_top_size_urls").fill_null(0)
               >= _TOP_SIZE_SHARE * pl.col("sampled_ok_urls").clip(lower_bound=1))))
        | (pl.col("name_orders") >= 2)
    ) & (pl.col("urls_per_size") >= settings.facets_min_urls_per_size) & (
        (pl.col("_people_read") < _PEOPLE_READ_SHARE) | (pl.col("name_orders") >= 2)
    )
    path = [s.HOST, "path"]
    rows = (
        patterns.join(sampled, on=_shape.KEYS)
        .with_columns(
            pl.when(pl.col("_set_orders").is_not_null())
            .then(pl.col("_set_orders"))
            .otherwise(pl.max_horizontal("name_orders", "_path_orders"))
            .alias("name_orders")
        )
        .with_columns(
            (pl.col("sampled_ok_urls") / pl.col("distinct_sizes").clip(lower_bound=1))
            .round(1)
            .alias("urls_per_size"),
        )
        .with_columns(shaped.alias("_shaped"))
        .with_columns(
            pl.col("sampled_urls").filter("_shaped").sum().over(path).alias("path_sampled_urls")
        )
        .filter(
            pl.col("_shaped")
            & (
                (pl.col("sampled_urls") >= settings.facets_min_urls)
                # one trap over many sets of filters, each a pattern of a few URLs that
                # people hardly read (a few sets with stock people browse are listings)
                | ((pl.col("path_sampled_urls") >= settings.facets_min_urls)
                   & (pl.col("sampled_urls") >= _MIN_SET_URLS)
                   & (pl.col(s.HUMAN_REQUESTS) <= _SET_PEOPLE_SHARE * pl.col(s.REQUESTS)))
            )
        )
        .with_columns(
            # bot requests beyond one per distinct response
            (
                pl.col("sampled_ok_bot")
                * (1 - pl.col("distinct_sizes") / pl.col("sampled_ok_urls").clip(lower_bound=1))
            )
            .round(0)
            .alias("sampled_wasted")
        )
        .with_columns(_shape.scale("sampled_wasted").alias(s.WASTED_REQUESTS))
        .filter(pl.col(s.WASTED_REQUESTS) > 0)
        .with_columns(pl.col(s.WASTED_REQUESTS).sum().over(path).alias("path_wasted_requests"),
                      pl.col(s.WASTED_REQUESTS).sum().over(s.HOST).alias("host_facet_wasted_requests"))
    )
    # packed filters' examples: sets of two or more (one filter is the category's page);
    # listed values': lists
    trap_urls = urls.filter(
        (~pl.col("_packed") | packs_many(pl.col(s.URL))) & (~pl.col("_listed") | has_list(pl.col(s.URL)))
    )
    rows = rows.join(_shape.examples(trap_urls), on=_shape.KEYS, how="left").with_columns(
        pl.col("params").list.join("&")
    )
    return _shape.findings(
        KIND,
        rows,
        settings,
        evidence=[
            "params", "param_count", "varying_params", "name_orders", "param_sets", "unique_urls",
            "sampled_urls", "distinct_sizes", "urls_per_size", s.HUMAN_REQUESTS,
            "path_sampled_urls", "path_wasted_requests", "host_facet_wasted_requests",
        ],  # fmt: skip
        advice=ADVICE,
        severity_by="host_facet_wasted_requests",
    )

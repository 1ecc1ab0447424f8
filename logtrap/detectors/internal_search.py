"""internal_search: the site's search result pages, linked from its pages and fetched by bots.

A pattern is internal search when it has a search parameter (`q`, `s`, `search`, `query`,
`keyword(s)`, `term`, `searchterm`, `text`) or a `search` path segment (`/search`,
`/search/results`, `/suche`, `/recherche`, `/buscar`; not a code host's repository named
`search`, `/dave/search/issues/{n}`; DSpace's `/discover?query=`), at least
`internal_search_min_urls` distinct URLs, and at least `internal_search_min_bot_requests` bot
requests. Named by its parameter alone, most of its URLs must search for something (Gitea's
issue lists carry an empty `q=` on every link), and for different things (a course catalog's
`/courses/CS/{n}?term=2024FA` is a hundred semesters over thousands of courses). Search
results are infinite and duplicate real pages, so every bot fetch is wasted.

Not a fixed set of pages named like a search: a property portal's `/search?city=&type=`
landing pages, a glossary's `?term=`. Crawlers come back to those again and again (more
than `internal_search_max_revisits` bot requests per URL), and people read the same URLs (at
least `internal_search_page_human_share` of the requests to the sampled URLs bots fetched);
search results crawled from links are new URLs nearly every fetch, and the searches people
type are other URLs than the popular ones crawlers follow from links.
"""

from __future__ import annotations

import polars as pl

from logtrap import findings as f
from logtrap import schema as s
from logtrap.detectors import _shape
from logtrap.patterns import TRACKING, is_tracking
from logtrap.settings import Settings
from logtrap.traffic import Traffic

KIND = "internal_search"

ADVICE = (
    "Do not link to search result pages (they are endless and duplicate real pages): add "
    "noindex to search results (before disallowing, if they are indexed), then Disallow the "
    "search path or parameter in robots.txt."
)

_NAMES = r"(?:q|s|search|query|keywords?|term|searchterm|search_query|text)"
_PARAMS = rf"(?i)^{_NAMES}$"
_TERM = rf"(?i)^{_NAMES}=[^&]"  # a search parameter with a value: something was searched for
# Of a pattern named a search by its parameters alone, at least this share of the sampled
# URLs must search for something: Gitea links every issue list with an empty `q=` (judgement)
_MIN_TERM_SHARE = 0.5
# ...and search for different things: at least this many distinct terms per sampled URL with
# one. A course catalog's `/courses/CS/{n}?term=2024FA` repeats 106 semesters over 850 courses
# (0.12); searches paged three deep are 0.33 (judgement)
_MIN_TERM_SPREAD = 0.25
# People arriving from ads (the tracked twin) count toward a landing page's readers where they
# fetch at least this share of the pages crawlers come back to: ads landing people on 12 of a
# search trap's 600 crawled pages made it look read (judgement)
_PAGES_READ = 0.1
# A search box people use: this share of people's requests to the pattern go to URLs no bot
# fetched (the searches they type), whatever popular searches crawlers and people share (45%
# on a blog linking 2,000 related searches; about none on a portal's landing pages; judgement)
_TYPED_SHARE = 0.3
# A search parameter's value that is an id minted per visit, no term: 16 hex digits or more
# (vBulletin's `s=`, a session hash), or 20 letters and digits or more, digits among them
_HEX_ID, _LONG_ID, _DIGIT = r"=[0-9a-fA-F]{16,}$", r"=[A-Za-z0-9]{20,}$", r"=.*[0-9]"


# A search parameter that carries filters instead: PrestaShop's faceted search writes each
# chosen filter as `Group-Value-Value` and joins them with `/` (`?q=Color-Red-Blue/Size-M`),
# on its category pages. Its groups are a few (`_FILTER_GROUPS` at most) over many URLs,
# where the first words of searches people type are as many as the searches. Those pages are
# the category's own, filtered, which people pick from its links: no search, and its rule
# (`Disallow: /*?q=`) took them (review 18)
_FILTERS = r"^[^=]+=[^-/&=]+-[^/&]+(?:/[^-/&=]+-[^/&]+)*$"
_FILTER_GROUPS = 12
_FILTER_SHARE = 0.8  # of a pattern's sampled searches, those written as filters (judgement)
_FILTER_MIN_URLS = 20  # sampled searches needed to tell (judgement)
# ...of which this share at least combine two filters or more: a blog's searches with a
# hyphen in every term, `?s=gluten-free+brownies`, of a dozen first words, were taken for
# filters (adversarial review 18); a search holds a `/` hardly ever (judgement)
_COMBINED_SHARE = 0.2


def _minted(pair: pl.Expr) -> pl.Expr:
    """A `name=value` pair whose value is a minted id (`_HEX_ID`, or `_LONG_ID` with a digit)."""
    return pair.str.contains(_HEX_ID) | (pair.str.contains(_LONG_ID) & pair.str.contains(_DIGIT))


# A search by its path: a `search` segment (`/search/results`, `/search/node/{slug}`,
# `/suche/{slug}/seite/{n}`, `search.html`)...
_PATH = r"(?i)(?:^|/)(?:search|suche|recherche|buscar|zoeken|szukaj)(?:/|$|\.)"
# ...but a code host's repository named `search` (`/dave/search/issues/{n}`,
# `/dave/search/commit/{hex}`): a view of the repository after it is no search
_REPOSITORY = (
    r"(?i)(?:^|/)(?:search|suche|recherche|buscar|zoeken|szukaj)/"
    r"(?:issues|pulls|merge_requests|commits?|src|tree|blob|raw|blame|wiki|releases|compare|tags|branches|-)(?:/|$)"
)
# a search page by its name with DSpace's parameters (`/discover?query=&filter=`): an events
# site's `/discover?category=&page=` is listings, `/discover/travel` pages
_QUERIED_PATH = r"(?i)(?:^|/)discover\?(?:.*&)?(?:query|filtertype(?:_\{n\}|_[0-9]+)?|scope|fq)(?:&|$)"


def _people_on_crawled(traffic: Traffic, keys: pl.DataFrame, settings: Settings) -> pl.DataFrame:
    """Per pattern, people's share of the requests to the sampled URLs bots fetched: a
    landing page both read, while the searches people type are other URLs than the ones
    crawlers follow from links.

    People arriving from ads and campaigns add a click id (`gclid`, `utm_*`): their URLs are
    another pattern (`/search?city&type&{tracking}`) and are the same pages without it. The
    twin lends its people's requests only (crawlers following a newsletter's tagged links
    fetch no landing page more often), and only where people read at least `_PAGES_READ` of
    the crawled pages: ads landing people on 12 of a search trap's 600 pages leave it unread.
    None where `_TYPED_SHARE` of people's requests go to URLs no bot fetched: a search box in
    use, whatever popular searches people and crawlers share.
    """
    page = pl.concat_str(_shape.path_of(pl.col(s.URL)), pl.lit("?"), _page_query(settings))
    base = _untracked(pl.col(s.PATTERN)).alias("_base")
    twin = pl.col("_own") != pl.col(s.PATTERN)
    crawled = pl.col(s.BOT_REQUESTS) > 0
    return (
        _shape.per_url(traffic.urls)
        .with_columns(base)
        .rename({s.PATTERN: "_own"})
        # the candidates' URLs only, and those of their tracked and untracked twins
        .join(keys.with_columns(base), on=[s.HOST, "_base"], how="inner")
        .with_columns(
            pl.when(twin).then(0).otherwise(pl.col(s.BOT_REQUESTS)).alias(s.BOT_REQUESTS),
            pl.when(twin).then(pl.col(s.HUMAN_REQUESTS)).otherwise(pl.col(s.REQUESTS))
            .alias(s.REQUESTS),
            pl.when(twin).then(0).otherwise(pl.col(s.HUMAN_REQUESTS)).alias("_own_people"),
            pl.when(twin).then(0).otherwise(pl.col(s.REQUESTS)).alias("_own_requests"),
        )
        .group_by(*_shape.KEYS, page.alias("_page"))
        .agg(pl.col(s.REQUESTS, s.BOT_REQUESTS, s.HUMAN_REQUESTS, "_own_people", "_own_requests").sum())
        .group_by(_shape.KEYS)
        .agg(
            (pl.col(s.HUMAN_REQUESTS).filter(crawled).sum()
             / pl.col(s.REQUESTS).filter(crawled).sum().clip(lower_bound=1)).alias("_share"),
            (pl.col("_own_people").filter(crawled).sum()
             / pl.col("_own_requests").filter(crawled).sum().clip(lower_bound=1)).alias("_own_share"),
            (pl.col(s.HUMAN_REQUESTS) > 0).filter(crawled).mean().alias("_pages_read"),
            (pl.col("_own_people").filter(~crawled).sum()
             / pl.col("_own_people").sum().clip(lower_bound=1)).alias("_typed"),
        )
        .select(
            *_shape.KEYS,
            # people on the pattern's own URLs count whatever pages they read (the popular
            # landing pages); with the twin's, arriving from ads an advertiser points at a
            # few pages, only where they read a tenth of them
            pl.when(pl.col("_typed") >= _TYPED_SHARE).then(0.0)
            .when(pl.col("_pages_read").fill_null(0.0) >= _PAGES_READ).then(pl.col("_share"))
            .otherwise(pl.col("_own_share")).alias("_people_share"),
        )
    )


def _term_share(traffic: Traffic, keys: pl.DataFrame) -> pl.DataFrame:
    """Per pattern, the share of its sampled URLs whose search parameter holds a term
    (`?q=word`, not `?q=`: "_term_share"), and their distinct terms per URL ("_term_spread":
    searches differ in what they search for, while a course page's `?term=2024FA` is one of
    a hundred semesters over thousands of courses)."""
    pairs = _shape.query_of(pl.col(s.URL)).str.split("&")
    # a term, not a minted id: vBulletin's `?s=<32 hex digits>` is its session, not a search
    terms = pairs.list.eval(pl.element().filter(
        pl.element().str.contains(_TERM) & ~_minted(pl.element()))).list.sort()
    searched = terms.list.len() > 0
    term = terms.list.first()
    filters = term.str.contains(_FILTERS)
    groups = term.str.splitn("=", 2).struct.field("field_1").str.split("/").list.eval(
        pl.element().str.splitn("-", 2).struct.field("field_0"))
    return (
        _shape.per_url(traffic.urls)
        .join(keys, on=_shape.KEYS, how="semi")
        .group_by(_shape.KEYS)
        .agg(
            searched.mean().alias("_term_share"),
            (terms.filter(searched).list.join("&").n_unique()
             / searched.sum().clip(lower_bound=1)).alias("_term_spread"),
            ((searched.sum() >= _FILTER_MIN_URLS)
             & (filters.filter(searched).mean() >= _FILTER_SHARE)
             & (term.str.contains("/", literal=True).filter(searched).mean() >= _COMBINED_SHARE)
             & (groups.filter(searched & filters).explode().n_unique() <= _FILTER_GROUPS))
            .alias("_filtered"),
        )
    )


def _untracked(pattern: pl.Expr) -> pl.Expr:
    """The pattern without its `{tracking}` name.

    >>> pl.select(_untracked(pl.Series(["/s?city&{tracking}", "/s?{tracking}", "/s?q"]))).to_series().to_list()
    ['/s?city', '/s', '/s?q']
    """
    names = _shape.query_of(pattern).str.split("&").list.eval(
        pl.element().filter((pl.element() != TRACKING) & (pl.element() != ""))
    ).list.join("&")
    path = _shape.path_of(pattern)
    return pl.when(names == "").then(path).otherwise(pl.concat_str(path, pl.lit("?"), names))


def _page_query(settings: Settings) -> pl.Expr:
    """A URL's query as one page has it: tracking parameters left out, the others sorted (a
    form writes `?type=&city=`, the links `?city=&type=`)."""
    name = pl.element().str.splitn("=", 2).struct.field("field_0")
    return _shape.query_of(pl.col(s.URL)).str.split("&").list.eval(
        pl.element().filter(~is_tracking(name, settings))
    ).list.sort().list.join("&")


def detect(traffic: Traffic, settings: Settings) -> pl.DataFrame:
    """Internal search result pages fetched by bots.

    >>> from logtrap.traffic import Tally
    >>> detect(Tally().finish(), Settings()).shape
    (0, 9)
    """
    totals = _shape.pattern_totals(traffic)
    if totals.height == 0:
        return f.empty_findings()
    names = pl.col(s.PATTERN).str.splitn("?", 2).struct.field("field_1").fill_null("").str.split("&")
    search_params = names.list.eval(pl.element().filter(pl.element().str.contains(_PARAMS)))
    rows = (
        totals.with_columns(
            search_params.list.join("&").alias("search_params"),
            ((_shape.path_of(pl.col(s.PATTERN)).str.contains(_PATH)
              & ~_shape.path_of(pl.col(s.PATTERN)).str.contains(_REPOSITORY))
             | pl.col(s.PATTERN).str.contains(_QUERIED_PATH)).alias("search_path"),
        )
        .filter(
            ((pl.col("search_params") != "") | pl.col("search_path"))
            & (pl.col(s.UNIQUE_URLS) >= settings.internal_search_min_urls)
            & (pl.col(s.BOT_REQUESTS) >= settings.internal_search_min_bot_requests)
        )
    )
    rows = rows.join(_term_share(traffic, rows.select(_shape.KEYS)), on=_shape.KEYS, how="left")
    rows = rows.filter(
        pl.col("search_path")
        | ((pl.col("_term_share") >= _MIN_TERM_SHARE) & (pl.col("_term_spread") >= _MIN_TERM_SPREAD)
           & ~pl.col("_filtered").fill_null(False))
    )
    rows = (
        rows.join(_people_on_crawled(traffic, rows.select(_shape.KEYS), settings), on=_shape.KEYS,
                  how="left")
        .filter(
            ~(
                (pl.col(s.BOT_REQUESTS) > settings.internal_search_max_revisits * pl.col(s.UNIQUE_URLS))
                & (pl.col("_people_share").fill_null(0.0) >= settings.internal_search_page_human_share)
            )
        )
        .with_columns(
            pl.col(s.BOT_REQUESTS).alias(s.WASTED_REQUESTS),
            (pl.col(s.BOT_REQUESTS) / pl.col(s.REQUESTS)).round(3).alias("share_from_bots"),
            (pl.col(s.BOT_REQUESTS) / pl.col(s.UNIQUE_URLS)).round(2).alias("bot_requests_per_url"),
        )
    )
    if rows.height == 0:
        return f.empty_findings()
    urls = _shape.per_url(traffic.urls).join(rows.select(_shape.KEYS), on=_shape.KEYS, how="semi")
    bots = traffic.patterns.select(*_shape.KEYS, s.BOTS).unique(_shape.KEYS)
    rows = (
        rows.join(_shape.examples(urls), on=_shape.KEYS, how="left")
        .join(bots, on=_shape.KEYS, how="left")
        .with_columns(pl.col(s.BOTS).list.head(5).alias("top_bots"))
    )
    return _shape.findings(
        KIND,
        rows,
        settings,
        evidence=[
            "search_params", "search_path", "unique_urls", s.BOT_REQUESTS, "bot_requests_per_url",
            "share_from_bots", s.HUMAN_REQUESTS, "top_bots",
        ],  # fmt: skip
        advice=ADVICE,
    )

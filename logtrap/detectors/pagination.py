"""pagination: "next" links on empty pages — page numbers past the last page with content.

Page numbers are read from the sampled raw URLs: a `page`, `p`, `pg`, `paged`, `pagenum`,
`page_num`, `pageno`, `start`, `offset`, `tribe_paged`, `product-page`, `cpage` or
`query-N-page` parameter, or a `/page/7` or `/page-7` (XenForo's)
path segment. Past the last page a site with this trap answers 200 with one constant page (the
empty listing). In a pattern:

- the empty page is one page (`_shape.one_page`: sizes within `one_page_bytes` of one value,
  as a CSRF token or nonce spreads it) answering at least `pagination_empty_share` of the
  numbered pages with 200; `empty_size` is the size most of them have. Pages with content
  must be further from it than `one_page_flank_bytes`, and bigger (they list what it does
  not); where none is, or as many are smaller, the pages are one template a few dozen bytes
  apart (an explorer's listings of fixed-width rows are real pages, the newest a digit
  wider): then only one exact size is the empty page;
- or, where no one page answers half of them, each listing's own (`_by_listing`: a shop's
  collections merged into one pattern, each empty page with its own title in it);
- per listing (the URL without its page number) the last page with content is the highest
  page answered with a size of its own (more than `one_page_flank_bytes` from the middle of
  the empty page's); a page is past the last when it is numbered higher and is the empty page
  (the evidence shows both for the listing with most pages past its last, `example_listing`);
- it is a trap when at least `pagination_min_urls` sampled pages are past the last and humans
  made at most `pagination_max_human_share` of their requests.

The severity is judged by the trap's sibling listings together (`sibling_wasted_requests`:
the patterns that differ only in the listing's name, `_LISTING`).

Real pagination (pages 2..8 each with its own size) has no shared size and stays silent.
Wasted requests: the bot requests to pages past the last, scaled from the sample.
"""

from __future__ import annotations

import polars as pl

from logtrap import findings as f
from logtrap import schema as s
from logtrap.detectors import _shape
from logtrap.settings import Settings
from logtrap.traffic import Traffic

KIND = "pagination"

ADVICE = (
    "Return 404 (or 410) past the last page instead of an empty 200 page, and stop rendering "
    "a 'next' link on the last page; then Disallow page numbers beyond the real range if "
    "crawlers keep coming back."
)

# Pages with content smaller than the empty page, at most this share of them (judgement: a
# listing of one short item may be)
_FEW_SMALLER = 0.1
# Parameter names that carry a page number (facets reads them too: a page is no filter),
# as regular expressions: WordPress's `paged`, The Events Calendar's `tribe_paged`,
# WooCommerce's `product-page`, a block theme's query loop `query-3-page`, Joomla's
# `limitstart` (its readable URLs' `start`)
PAGE_PARAMS = ("page", "p", "pg", "paged", "pagenum", "page_num", "pageno", "start", "offset",
               "tribe_paged", "product-page", "cpage", "query-[0-9]+-page", "limitstart")
_NAMES = "|".join(PAGE_PARAMS)
_PARAM = rf"(?:^|[?&])(?:{_NAMES})=([0-9]{{1,9}})(?:&|$)"
_SEGMENT = r"/page[/-]([0-9]{1,9})(?:/|$|\?)"
# A listing's name in its pattern: a literal segment right before the page, under a literal
# parent (`/collections/shoes?page`, `/category/baking/page/{n}/`). Listings that differ only
# there are siblings, one template's pager: a shop's 20 collections paged past their ends are
# one trap, a sliver in each (`sibling_wasted_requests`, by which the severity is judged).
# Listings at the root (`/news?page`, `/forum?page`) or under a placeholder are no siblings.
_LISTING = r"^(/[^{}?]*[^/{}?]/)[^/{}?]+((?:/page(?:/\{n\}|-\{n\}))?/?(?:\?.*)?)$"


def page_number(url: pl.Expr) -> pl.Expr:
    """The page number a URL asks for (null when none).

    >>> pl.select(page_number(pl.lit("/s/3/?page=12&x=1"))).item()
    12
    """
    query = url.str.extract(_PARAM, 1)
    segment = url.str.extract(_SEGMENT, 1)
    return pl.coalesce(query, segment).cast(pl.Int64, strict=False)


def _listing(url: pl.Expr) -> pl.Expr:
    """The URL with `{n}` for its page number: the listing a page belongs to (as the
    evidence shows it: `/shop/page/{n}/`, not `/shop/page//`).

    >>> pl.select(_listing(pl.lit("/shop/page/7/?orderby=price&paged=2"))).item()
    '/shop/page/{n}/?orderby=price&paged={n}'
    """
    return url.str.replace(
        rf"([?&](?:{_NAMES})=)[0-9]{{1,9}}", "${1}{n}"
    ).str.replace(r"/page([/-])[0-9]{1,9}", "/page${1}{n}")


def _marked(traffic: Traffic, settings: Settings, only: pl.Expr | None = None) -> pl.DataFrame | None:
    """The sampled numbered pages of patterns with an empty page (`only`: of these patterns),
    each with "_empty" and "_content" (a page of its own), its listing and "last_page" (its
    listing's last page with content); None where no pattern has an empty page."""
    if traffic.urls.height == 0:
        return None
    urls = _shape.per_url(traffic.urls, _shape.shell_sizes(traffic, settings))
    urls = (
        (urls if only is None else urls.filter(only))
        .with_columns(page_number(pl.col(s.URL)).alias("page"), _listing(pl.col(s.URL)).alias("listing"))
        .filter(pl.col("page").is_not_null())
    )
    ok = urls.filter(_shape.sized_ok())  # the shell's size says nothing of a page: left out
    # the empty listing: one page, its sizes within a token's spread (`_shape.one_page`)
    inside = _shape.one_page(ok, settings).select(*_shape.KEYS, s.URL, pl.lit(True).alias("_near"))
    ok = ok.join(inside, on=[*_shape.KEYS, s.URL], how="left").with_columns(
        pl.col("_near").fill_null(False),
        # the size most pages have (a tie: the smallest, the same one every run)
        pl.col(s.BYTES).mode().min().over(_shape.KEYS).alias("_mode"),
    )
    near = pl.col(s.BYTES).filter("_near")
    ok = ok.with_columns(((near.min() + near.max()) / 2).over(_shape.KEYS).alias("_mid"))
    # pages with content differ from the empty one by more than the sizes around a page
    # (one a few bytes past the window is the empty page still, a page a digit wider another
    # of the same listing), and are bigger: they list what it does not.
    # Where they are not (none at all, or as many smaller), the pages are one template a few
    # dozen bytes apart (an explorer's listings of fixed-width rows), or empty pages whose
    # listings start unnumbered: only one exact size may be called empty there, as before
    ok = ok.with_columns(
        (~pl.col("_near") & ((pl.col(s.BYTES) - pl.col("_mid")).abs() > settings.one_page_flank_bytes))
        .alias("_far")
    )
    far = pl.col("_far")
    smaller = (far & (pl.col(s.BYTES) < pl.col("_mid"))).sum().over(_shape.KEYS)
    spread_ok = far.any().over(_shape.KEYS) & (smaller <= _FEW_SMALLER * far.sum().over(_shape.KEYS))
    ok = ok.with_columns(spread_ok.alias("_spread_ok")).with_columns(
        pl.when("_spread_ok").then(pl.col("_near"))
        .otherwise(pl.col(s.BYTES) == pl.col("_mode")).alias("_empty"),
    )
    ok = _by_listing(ok, settings)
    empty = (
        ok.group_by(_shape.KEYS)
        .agg(
            (pl.col("_empty").mean() >= settings.pagination_empty_share).alias("_has_empty"),
            pl.col(s.BYTES).filter("_empty").mode().min().alias("empty_size"),
        )
        .filter("_has_empty")
        .drop("_has_empty")
    )
    if empty.height == 0:
        return None
    ok = ok.join(empty, on=_shape.KEYS)
    content = ~pl.col("_empty") & (~pl.col("_spread_ok") | far | pl.col("_listed"))
    return ok.with_columns(content.alias("_content")).with_columns(
        pl.col("page").filter("_content").max().over(*_shape.KEYS, "listing").fill_null(0).alias("last_page")
    )


# Pages of one listing answering its empty page, past every page of it with content: a
# listing's empty page once it repeats this often (judgement: a list's last pages of one size
# within a few bytes are no chance)
_LISTING_EMPTY_PAGES = 3


def _by_listing(ok: pl.DataFrame, settings: Settings) -> pl.DataFrame:
    """Where no one page answers half of a pattern's numbered pages, each listing's own empty
    page ("_listed"): a shop's collections merged into `/collections/{slug}?page` each answer
    an empty page with their own title and description in it, sizes apart, and the pattern
    held no one size (review 18, Shopify: 17% of the bots' requests). A listing's is the size
    most of its pages have (within `one_page_bytes`), at least `_LISTING_EMPTY_PAGES` of them,
    all numbered past every page of the listing with content (further from it than
    `one_page_flank_bytes`), which are bigger: they list what it does not. The lowest of them
    counts as the listing's last page: a forum that answers a page number past the end with
    its last page (phpBB's `start=`) repeats that page, which is real, while an empty page's
    first is one page more said to be content. A listing with a page between the two is not
    judged: its pages are one template's, a few bytes apart (an explorer's fixed-width rows,
    the newest a digit wider)."""
    keys = [*_shape.KEYS, "listing"]
    judged = (pl.col("_empty").mean() < settings.pagination_empty_share).over(_shape.KEYS)
    mode = pl.col(s.BYTES).mode().min().over(keys)
    near = (pl.col(s.BYTES) - pl.col("_lmode")).abs() <= settings.one_page_bytes
    far = (pl.col(s.BYTES) - pl.col("_lmode")).abs() > settings.one_page_flank_bytes
    # a page with content numbered past the first, or none sampled and the repeated size
    # from the third page on: a gallery's fixed-width pages, alike from its second page on,
    # its first bigger, were read as empty (adversarial review 18)
    shown = (far & (pl.col("page") >= 2)).any().over(keys) | (
        ~far.any().over(keys) & (pl.col("page").filter(near).min().over(keys) >= 3))
    listed = (
        judged
        & (near.sum().over(keys) >= _LISTING_EMPTY_PAGES)
        & (near | far).all().over(keys)
        & shown
        & (pl.col("page").filter(far).max().over(keys).fill_null(0) < pl.col("page").filter(near).min().over(keys))
        & ~(far & (pl.col(s.BYTES) < pl.col("_lmode"))).any().over(keys)
    )
    # the lowest of those is a page of the listing: its last (phpBB answers a `start=` past
    # the end with the last page; adversarial review 18), or its first empty one
    last = near & (pl.col("page") == pl.col("page").filter(near).min().over(keys))
    return (
        ok.with_columns(mode.alias("_lmode"))
        .with_columns(listed.alias("_listed"))
        .with_columns(
            (pl.when("_listed").then(near & ~last).otherwise(pl.col("_empty"))).alias("_empty"),
            (pl.col("_listed") & (far | last)).alias("_listed"),
        )
        .drop("_lmode")
    )


def real_pages(traffic: Traffic, settings: Settings, host: str, pattern: str) -> list[str]:
    """The sampled pages of a pagination pattern with content of their own: what its
    robots.txt rule must not block, whoever read them. Where the empty page's size varies by
    listing (a long collection name in it) its pages count too, and withhold a rule that
    would be right: a real list's pages can share a size (fixed-width rows) or be smaller
    than the empty page (a carousel on it), and no test of sizes told them apart (reviews
    17c, 17d)."""
    ok = _marked(traffic, settings, (pl.col(s.HOST) == host) & (pl.col(s.PATTERN) == pattern))
    if ok is None:
        return []
    mine = ok.filter(pl.col("_content"))
    return mine[s.URL].unique(maintain_order=True).to_list()


def detect(traffic: Traffic, settings: Settings) -> pl.DataFrame:
    """Pagination traps: page numbers past the last page with content, answered 200 alike.

    >>> from logtrap.traffic import Tally
    >>> detect(Tally().finish(), Settings()).shape
    (0, 9)
    """
    ok = _marked(traffic, settings)
    if ok is None:
        return f.empty_findings()
    is_empty = pl.col("_empty")
    # the last page and the first past it are one listing's, the one with most pages past
    # its last (the highest last page of one beside the lowest first of another read as a
    # listing whose pages past its end come before it ends)
    past = ok.filter(is_empty & (pl.col("page") > pl.col("last_page"))).with_columns(
        (-pl.len().over(*_shape.KEYS, "listing").cast(pl.Int64)).alias("_fewer_past")
    ).with_columns(
        (pl.struct("_fewer_past", "listing").rank("ordinal").over(_shape.KEYS) == 1).alias("_shown")
    )
    shown = pl.col("_shown")
    per_pattern = past.group_by(_shape.KEYS).agg(
        pl.len().alias("pages_past_last"),
        pl.col(s.BOT_REQUESTS).sum().alias("sampled_wasted"),
        pl.col(s.REQUESTS).sum().alias("sampled_past_requests"),
        pl.col(s.HUMAN_REQUESTS).sum().alias("human_requests_past_last"),
        pl.col("listing").filter(shown).first().alias("example_listing"),
        pl.col("last_page").filter(shown).first().alias("last_page_with_content"),
        pl.col("page").filter(pl.col("listing") == pl.col("listing").filter(shown).first())
        .min().alias("first_page_past_last"),
        pl.col("page").max().alias("max_page_requested"),
        pl.col("empty_size").first(),
    )
    last = ok.group_by(_shape.KEYS).agg(pl.col("listing").n_unique().alias("listings"))
    rows = (
        per_pattern.join(last, on=_shape.KEYS)
        .filter(
            (pl.col("pages_past_last") >= settings.pagination_min_urls)
            & (
                pl.col("human_requests_past_last")
                <= settings.pagination_max_human_share * pl.col("sampled_past_requests")
            )
        )
        .join(_shape.pattern_totals(traffic), on=_shape.KEYS, how="left")
        .with_columns(_shape.scale("sampled_wasted").alias(s.WASTED_REQUESTS))
        .filter(pl.col(s.WASTED_REQUESTS) > 0)
    )
    family = [s.HOST, "_siblings"]
    rows = (
        rows.join(_shape.examples(past), on=_shape.KEYS, how="left")
        .with_columns(pl.col(s.PATTERN).str.replace(_LISTING, "${1}*${2}").alias("_siblings"))
        .with_columns(
            pl.len().over(family).alias("sibling_listings"),
            pl.col(s.WASTED_REQUESTS).sum().over(family).alias("sibling_wasted_requests"),
        )
    )
    return _shape.findings(
        KIND,
        rows,
        settings,
        evidence=[
            "last_page_with_content", "first_page_past_last", "example_listing",
            "max_page_requested", "pages_past_last", "empty_size", "listings", "human_requests_past_last",
            "unique_urls", "sibling_listings", "sibling_wasted_requests",
        ],  # fmt: skip
        advice=ADVICE,
        severity_by="sibling_wasted_requests",
    )

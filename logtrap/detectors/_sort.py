"""Sorted copies: a list's sort parameter repeats the list once per order, for crawlers to read.

A shop's category links its sort orders on every list page (Shopify's `?sort_by=price-ascending`,
WooCommerce's `?orderby=`, PrestaShop's `?order=product.price.desc`, OpenCart's `&sort=p.price&
order=DESC`, Magento's `?product_list_order=`): each page of each list again in every order,
the same products shuffled. Crawlers follow them all; the review sites' sort orders were 7.6%
(Shopify), 8.8% (PrestaShop) and 15.7% (OpenCart) of their bot requests, and no other finding
named them: one parameter of a few values is no facet combination.

A facets finding of pattern `/{any}?NAME` (`_param.pattern_of`: every path it sorts on), one
per host and sort parameter (`SORT_NAMES`; one each, so that a cron state's key stays when a
second parameter qualifies later), is made where, over the host's sampled URLs,

1. its values are few: `_MAX_ORDERS` at most (an order id, `/account/orders?order=51234`, has
   one per order; a forum's threads linked by reactions alone, `?order=reaction_score`, one),
   none a number (a quiz's `?order=2`, a step of its own) but sort codes where the name says
   "sort by" (nopCommerce's `?orderby=5`), and a direction's all a direction
   (`?dir=asc`, not a file browser's `?dir=/photos`, nor a timetable's direction id `0`);
2. it sorts at least `_MIN_LISTINGS` lists (the URL without its sort parameters; a list's
   pages count apiece), and bots fetched at least `_MIN_URLS` sorted URLs;
3. a sorted page answers as its list does: where the sample holds both answered 200, sizes
   within `SPREAD` of each other, on all but `_CHANGED_SHARE` of `_MIN_COMPARED` pages or more
   (a recipe site's categories as `?sort=dessert`, a timetable per direction, are pages of
   other sizes);
4. people read its sorted pages at most `_PEOPLE_SHARE` as much as the lists: a copy they open
   now and then, not the way they browse;

on the patterns carrying it whose list is a pattern of its own too (`member_patterns`: the
pattern without its sort parameters, `/collections/{name}?page` for `/collections/{name}?page&
sort_by`), and which no other parameter makes a trap of its own (`carriers`: a cart link, a
facet combination). A list only ever linked sorted (a menu's `?sort=newest`) is its own page:
its pattern is no member, and the finding's lines must spare its pages: they go by the lists'
paths where such a pattern carries the parameter (`unlisted_patterns`; `robots_rule`).

Its wasted requests are every bot request of its member patterns: each is a list again in
another order. People sort lists too, and their sorted views are no content to keep the rule
off (as a search's results are not, `robots._unsearched`): robots.txt keeps only crawlers off,
people still sort. The pages of the lists themselves stay open, and so do a page a sitemap
names and a list's first page sorted that people read a twentieth as often as the list or more
(a page they land on, a menu's "New arrivals"; its tracked links' reads its own); up to
`MAX_ALLOW_LINES` of those are allowed back by `Allow:` lines. A sorted view's page is its
answer 200 (a page cache answers crawlers' repeat fetches 304), and its copies by tracking
parameters (an ad's `&gclid=`) are neither members nor pages.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Mapping, Sequence

import polars as pl

from logtrap import findings as f
from logtrap import schema as s
from logtrap.bots import NOT_LOGGED_NAME
from logtrap.detectors import _shape, session_id
from logtrap.detectors.pagination import PAGE_PARAMS
from logtrap.patterns import TRACKING, is_tracking
from logtrap.settings import Settings
from logtrap.traffic import Traffic

# Sort and direction parameters of common platforms and frameworks (judgement): Shopify's
# sort_by; WooCommerce's orderby; PrestaShop's, XenForo's and Discourse's order (with direction,
# ascending); OpenCart's sort and order; Magento's product_list_order, _dir and _mode (grid or list);
# Drupal views' sort_by, sort_order. A name alone is no verdict: its values must be few and sort
# many lists (the module's tests).
SORT_NAMES = frozenset({
    "sort", "sort_by", "sortby", "sort_order", "sortorder", "sorting", "sort_dir", "sortdir",
    "orderby", "order_by", "order", "dir", "direction", "ascending",
    "product_list_order", "product_list_dir", "product_list_mode",
})
# ...of which these say a direction, and their values must say one too: a file browser's
# `?dir=/photos` names its folders (judgement)
_DIRECTION_NAMES = frozenset({"dir", "direction", "sort_dir", "sortdir", "ascending", "product_list_dir"})
_DIRECTIONS = ["asc", "desc", "ascending", "descending", "up", "down", "a", "d", "true", "false"]
# ...and the others' values are not numbers: a quiz's `?order=2`, a gallery's slide, is a page
# of its own; but for the names that say "sort by", whose numbers are sort codes
# (nopCommerce's `?orderby=5`; judgement)
_NUMBER = r"^[0-9]+$"
_PAGE_NAMES = frozenset(n.lower() for n in PAGE_PARAMS)
_SORT_BY_NAMES = ["sort_by", "sortby", "orderby", "order_by", "sort_order", "sortorder", "product_list_order"]
_MAX_ORDERS = 24  # values of one sort parameter at most (Shopify has 8, OpenCart 5; judgement)
_MIN_LISTINGS = 3  # lists sorted (judgement: a list and two of its pages, say)
_MIN_URLS = 20  # sorted URLs bots fetched (judgement: as a facet set's few dozen)
# A sorted page and its list, both sampled and answered 200, are the same template with as
# many items: sizes within this share of the larger (other products' cards, a forum's posts
# of other lengths; a timetable per direction is twice or four times its route's page:
# judgement)...
SPREAD = 0.3
# ...on all but this share of the pages compared (cards of very unequal sizes, a list
# changing while the log is written)...
_CHANGED_SHARE = 0.2
# ...of at least this many: a sort whose pages and lists the sample never shows together is
# not judged (judgement)
_MIN_COMPARED = 3
# People open sorted views now and then: at most this share of their requests to the lists
# (the review shop's 30% of visits sorting once: 15%; judgement)
_PEOPLE_SHARE = 0.5
NAME = "_name"
SORT_PARAMS = "sort_params"  # the finding's evidence: the parameters, as the URLs spell them
MEMBERS = "member_patterns"
# ...and the patterns carrying them whose list is none: a list only ever linked sorted, or a
# parameter of the name that is no sort there (`robots_rule`)
UNLISTED = "unlisted_patterns"
OWN_PAGE = "log, a page carrying the parameter whose list without it is no pattern: a page of its own"
LANDING = ("log, a list's first page sorted, which people read as often as a page of its own: it may "
           "be a page they land on")
_LANDING_READS = 5  # judgement: a sorted view a few people opened is no landing page
# ...and one read this share of its list's reads at least (judgement: a "Shop all" menu link to
# the whole catalogue by best sellers, read 57 times beside its list's 884, is a page; a
# sorted view people open now and then is one of several orders each a few reads;
# adversarial review 19)
_LANDING_SHARE = 0.05
# Pages kept open by an `Allow: <url>$` line each among the lines, at most: a shop's sorted
# menu pages (best sellers, new in, sale, gifts) and the pages people go on to (judgement;
# more than a calendar's or a search's, `robots.MAX_ALLOW_LINES`: each is a page people land on)
MAX_ALLOW_LINES = 10
LISTED = "_listed"
ADVICE = (
    "Every sort order repeats a list crawlers already read in its own order: link the orders "
    "as buttons or a form (or with rel=nofollow), and point rel=canonical at the unsorted "
    "list; then Disallow the sort parameters in robots.txt. People still sort (robots.txt "
    "keeps only crawlers off); a sorted list that is a landing page of its own (\"New "
    "arrivals\") wants a path of its own first."
)
_ANY = "/{any}"  # _param.ANY (_param imports this module)


def is_sort(finding: f.Finding) -> bool:
    """True for a sorted copies finding (this module's)."""
    return finding.kind == "facets" and SORT_PARAMS in finding.evidence


def _names(pattern: pl.Expr) -> pl.Expr:
    """A pattern's (or URL's) query pieces: its parameter names (or `name=value` pairs)."""
    return _shape.query_of(pattern).str.split("&")


def _sorting(name: pl.Expr) -> pl.Expr:
    return name.str.to_lowercase().is_in(list(SORT_NAMES))


def _unsorted(url: pl.Expr) -> pl.Expr:
    """A URL (or pattern) without its sort parameters: its list."""
    path = _shape.path_of(url)
    rest = _names(url).list.eval(pl.element().filter(
        (pl.element() != "") & ~_sorting(pl.element().str.splitn("=", 2).struct.field("field_0"))
    )).list.join("&")
    return pl.when(rest == "").then(path).otherwise(pl.concat_str(path, pl.lit("?"), rest))


def carriers(traffic: Traffic, settings: Settings, combined: pl.DataFrame) -> pl.DataFrame:
    """(host, pattern, LISTED) of the patterns carrying a sort parameter, but those whose
    other parameters make them a trap of another kind whatever their order (a session's, an
    action link's: `session_id.named_params`; WooCommerce's `?orderby=price&add-to-cart=5` is
    a cart link, its own finding's), and facet `combined` patterns (host, pattern), whose
    lines take every combination of filters, sorted or not. LISTED: its list (the pattern
    without its sort parameters) is a pattern of the host too, and people's requests can be
    told there (a user agent logged), which makes it a member."""
    patterns = traffic.patterns.select(_shape.KEYS).unique()
    names = _names(pl.col(s.PATTERN))
    named = list(session_id.named_params(settings))
    carrying = patterns.filter(
        names.list.eval(_sorting(pl.element())).list.any(),
        ~names.list.eval(pl.element().str.to_lowercase().is_in(named)).list.any(),
        # a page's copies by tracking parameters (`?sort_by=...&gclid=`, an ad's landing on a
        # sorted view): no member, no page of their own (they get no line of their own)
        ~names.list.contains(TRACKING),
    ).join(combined.select(_shape.KEYS), on=_shape.KEYS, how="anti")
    lists = patterns.select(s.HOST, pl.col(s.PATTERN).alias("_list"), pl.lit(True).alias(LISTED))
    # requested without a user agent logged: people's reads and bots' cannot be told apart, so
    # its sorted views may be pages people land on (a log in Apache's `common` format)
    unlogged = traffic.agents.filter(pl.col(s.BOT_NAME) == NOT_LOGGED_NAME).select(_shape.KEYS).unique()
    return (
        carrying.with_columns(_unsorted(pl.col(s.PATTERN)).alias("_list"))
        .join(lists, on=[s.HOST, "_list"], how="left")
        .join(unlogged.with_columns(pl.lit(True).alias("_unlogged")), on=_shape.KEYS, how="left")
        .select(*_shape.KEYS, (pl.col(LISTED).fill_null(False) & pl.col("_unlogged").is_null()).alias(LISTED))
        .sort(_shape.KEYS)
    )


def detect(traffic: Traffic, settings: Settings, combined: pl.DataFrame) -> pl.DataFrame:
    """A facets finding per host and sort parameter (the module's tests), facet `combined`
    patterns left out (`carriers`)."""
    if traffic.urls.height == 0:
        return f.empty_findings()
    carrying = carriers(traffic, settings, combined)
    member = carrying.filter(LISTED).select(_shape.KEYS)
    if member.height == 0:
        return f.empty_findings()
    shell = _shape.shell_sizes(traffic, settings)
    urls = _shape.per_url(traffic.urls, shell).filter(pl.col(s.URL).is_not_null())
    # each URL's page: its most requested answer 200 with a size that is evidence (a page
    # cache answers crawlers' repeat fetches 304, most of a sorted URL's answers)
    pages = (
        traffic.urls.filter(pl.col(s.STATUS) == 200, pl.col(s.BYTES).is_not_null())
        .join(shell.select(s.HOST, s.BYTES), on=[s.HOST, s.BYTES], how="anti")
        .sort(s.REQUESTS, s.BYTES, descending=[True, False])
        .group_by(s.HOST, s.URL, maintain_order=True).agg(pl.col(s.BYTES).first().alias("_page"))
    )
    pair = pl.col("_pair").str.splitn("=", 2)
    pairs = (
        urls.join(member, on=_shape.KEYS, how="semi")
        .select(*_shape.KEYS, s.URL, s.BOT_REQUESTS,
                _shape.query_of(pl.col(s.URL)).str.split("&").alias("_pair"))
        .explode("_pair")
        .with_columns(pair.struct.field("field_0").alias(NAME),
                      pair.struct.field("field_1").fill_null("").alias("_value"))
        .filter(_sorting(pl.col(NAME)))
        .with_columns(_unsorted(pl.col(s.URL)).alias("_list"))
        .join(pages, on=[s.HOST, s.URL], how="left")
        # the list's own page, where the sample holds it
        .join(pages.select(s.HOST, pl.col(s.URL).alias("_list"), pl.col("_page").alias("_list_page")),
              on=[s.HOST, "_list"], how="left")
    )
    compared = pl.col("_page").is_not_null() & pl.col("_list_page").is_not_null()
    apart = (pl.col("_page") - pl.col("_list_page")).abs() > SPREAD * pl.max_horizontal("_page", "_list_page")
    values = pl.col("_values").list.eval(pl.element().str.to_lowercase())
    direction = pl.col(NAME).str.to_lowercase().is_in(list(_DIRECTION_NAMES))
    names = (
        pairs.group_by(s.HOST, NAME)
        .agg(
            pl.col("_value").filter(pl.col("_value") != "").unique().sort().alias("_values"),
            pl.col("_list").n_unique().alias("lists"),
            pl.col(s.URL).filter(pl.col(s.BOT_REQUESTS) > 0).n_unique().alias("_bot_urls"),
            pl.col(s.URL).n_unique().alias("sampled_urls"),
            compared.sum().alias("pages_compared"),
            (compared & apart).sum().alias("pages_changed"),
        )
        .filter(
            pl.col("_values").list.len().is_between(1, _MAX_ORDERS),
            pl.when(direction).then(values.list.eval(pl.element().is_in(_DIRECTIONS)).list.all())
            .when(pl.col(NAME).str.to_lowercase().is_in(_SORT_BY_NAMES)).then(pl.lit(True))
            .otherwise(~values.list.eval(pl.element().str.contains(_NUMBER)).list.any()),
            pl.col("lists") >= _MIN_LISTINGS,
            pl.col("_bot_urls") >= _MIN_URLS,
            pl.col("pages_compared") >= _MIN_COMPARED,
            pl.col("pages_changed") <= _CHANGED_SHARE * pl.col("pages_compared"),
        )
    )
    if names.height == 0:
        return f.empty_findings()
    by_name = (
        carrying.with_columns(_names(pl.col(s.PATTERN)).alias(NAME)).explode(NAME)
        .join(names.select(s.HOST, NAME), on=[s.HOST, NAME], how="semi")
    )
    unlisted = (
        by_name.filter(~pl.col(LISTED)).sort(s.PATTERN)
        .group_by(s.HOST, NAME, maintain_order=True).agg(pl.col(s.PATTERN).alias(UNLISTED))
    )
    totals = _shape.pattern_totals(traffic)
    carried = by_name.filter(LISTED).select(*_shape.KEYS, NAME).join(totals, on=_shape.KEYS)
    # people's requests on the lists the name sorts (each list pattern once)
    people_on_lists = (
        carried.select(s.HOST, NAME, _unsorted(pl.col(s.PATTERN)).alias(s.PATTERN)).unique()
        .join(totals.select(*_shape.KEYS, s.HUMAN_REQUESTS), on=_shape.KEYS)
        .group_by(s.HOST, NAME).agg(pl.col(s.HUMAN_REQUESTS).sum().alias("list_human_requests"))
    )
    examples = (
        pairs.join(carried.select(*_shape.KEYS, NAME), on=[*_shape.KEYS, NAME], how="semi")
        .sort(s.BOT_REQUESTS, s.URL, descending=[True, False])
        .group_by(s.HOST, NAME, maintain_order=True)
        .agg(pl.col(s.URL).unique(maintain_order=True).head(f.MAX_EXAMPLES).alias(s.EXAMPLES))
    )
    rows = (
        carried.sort(s.BOT_REQUESTS, s.PATTERN, descending=[True, False])
        .group_by(s.HOST, NAME, maintain_order=True)
        .agg(
            pl.col(s.REQUESTS, s.BOT_REQUESTS, s.HUMAN_REQUESTS).sum(),
            pl.col(_shape.HOST_BOT_REQUESTS).first(),
            pl.col(s.PATTERN).alias(MEMBERS),
            pl.len().alias("patterns"),
        )
        .join(names, on=[s.HOST, NAME])
        .join(people_on_lists, on=[s.HOST, NAME], how="left")
        .join(examples, on=[s.HOST, NAME], how="left")
        .join(unlisted, on=[s.HOST, NAME], how="left")
        .with_columns(
            pl.col(UNLISTED).fill_null(pl.lit([], pl.List(pl.String))),
            pl.col("list_human_requests").fill_null(0),
            pl.concat_list(NAME).alias(SORT_PARAMS),
            pl.col("_values").alias("orders"),
            pl.concat_str(pl.lit(f"{_ANY}?"), NAME).alias(s.PATTERN),
            pl.col(s.BOT_REQUESTS).alias(s.WASTED_REQUESTS),
        )
        # people read the sorted pages as much as the lists: the parameter is how they
        # browse, not a copy they open now and then (a timetable's `?direction=`, a recipe
        # site's categories as `?sort=dessert`; review 19)
        .filter(
            pl.col(s.WASTED_REQUESTS) > 0,
            pl.col(s.HUMAN_REQUESTS) <= _PEOPLE_SHARE * pl.col("list_human_requests"),
        )
        .sort(s.HOST, NAME)
    )
    return _shape.findings(
        "facets", rows, settings,
        evidence=[SORT_PARAMS, "orders", "lists", "patterns", s.BOT_REQUESTS, s.HUMAN_REQUESTS,
                  "list_human_requests", "sampled_urls", "pages_compared", "pages_changed",
                  MEMBERS, UNLISTED],
        advice=ADVICE,
    )


def lines_for(names: Sequence[str], glob: str = "/*") -> tuple[str, ...]:
    """The lines for sort parameters, first or later in the query, on a path (`/*`: any).

    >>> lines_for(["sort_by"])
    ('Disallow: /*?sort_by=', 'Disallow: /*&sort_by=')
    >>> lines_for(["order"], "/index.php")
    ('Disallow: /index.php?order=', 'Disallow: /index.php?*&order=')
    """
    from logtrap import robots  # robots imports the detectors: imported on call

    out = []
    for name in names:
        value = robots.escape_value(name)
        later = f"{glob}&{value}=" if glob == "/*" else f"{glob}?*&{value}="
        out += [f"{glob}?{value}=", later]
    return tuple(f"Disallow: {line}" for line in out)


def _carries(names: Sequence[str]) -> pl.Expr:
    """True for a URL whose query has one of the parameters with `=` (as the lines match)."""
    alternatives = "|".join(re.escape(n) for n in names)
    return pl.col(s.URL).str.contains(rf"\?(?:[^#]*&)?(?:{alternatives})=")


def robots_rule(
    finding: f.Finding, traffic: Traffic, content: list[tuple[str, str]],
    known: Mapping[str, str | None], settings: Settings,
) -> tuple[tuple[str, ...], str, str, list[str]]:
    """(lines, status, reason, trap URLs) for a sorted copies finding: the sort parameter's
    lines for the whole site, or, where those would block a content URL or where a pattern
    carries it whose list is none (`UNLISTED`: a list only ever linked sorted, a page whose
    parameter of the name is no sort; its logged URLs are content then, whoever read them),
    on each member pattern's path; checked as every rule is (`robots.verify`, a few content
    URLs kept open by Allow lines). The trap is the member patterns' sampled URLs bots
    fetched; the sorted views of their lists people read are no content here (the lists are),
    nor are other findings' pages on those patterns (a list's page 3, sorted, is its page 3
    again); a sitemap's URL stays content, and so does a sorted view people land on."""
    from logtrap import robots  # robots imports the detectors: imported on call

    names = [str(n) for n in finding.evidence.get(SORT_PARAMS) or []]
    patterns = [str(p) for p in finding.evidence.get(MEMBERS) or []]
    here = (pl.col(s.HOST) == finding.host) & _carries(names)
    mine = pl.col(s.PATTERN).is_in(patterns) & here
    copies = set(traffic.people_read.filter(mine)[s.URL].to_list())
    rows = traffic.urls.filter(mine, robots.HAS_URL)
    copies |= set(rows[s.URL].to_list())
    # and their copies by tracking parameters: an ad's landing on a sorted view
    # (`?sort_by=created-descending&gclid=`), which no crawler needs (`carriers`)
    tracked = here & _names(pl.col(s.PATTERN)).list.contains(TRACKING)
    copies |= set(traffic.people_read.filter(tracked)[s.URL].to_list())
    # but a sorted view people read a twentieth as often as its list or more, `_LANDING_READS`
    # times at least: a page they land on (a shop's "New arrivals", `?sort_by=created-
    # descending`; review 19), its tracking copies' reads its own (a newsletter's
    # `&utm_source=` links to it), logged clean or not
    reads, tracking = _people_reads(traffic, finding.host, settings, {u.partition("?")[0] for u in copies})
    # (a list's first page only: a menu links it, and pages 2 and 3 sorted, which people who
    # sort go on to, would be compared with pages of the list few people read)
    views = {_untracked(u, tracking) for u in copies}
    landing = {u for u in views if not _paged(u) and reads.get(u, 0) >= max(
        _LANDING_READS, _LANDING_SHARE * reads.get(_list_of(u), 0))}
    # ...and the pages people go on to from one, `_LANDING_READS` times at least ("New
    # arrivals" page 2; adversarial review 19)
    landing |= {u for u in views if _paged(u) and _first_page(u) in landing
                and reads.get(u, 0) >= _LANDING_READS}
    content = [(u, why) for u, why in content if why == "sitemap" or u not in copies or u in landing]
    content += [(u, LANDING) for u in sorted(landing - {u for u, _ in content})]
    taken = {u for u, _ in content}
    trap = rows.filter(pl.col(s.BOT_REQUESTS) > 0).unique(s.URL).sort(s.URL_HASH)[s.URL].to_list()
    trap = [u for u in trap if robots.url_path(u) not in taken]
    known = {**known, **robots.normal_forms([u for u in trap if u not in known])}
    unlisted = [str(p) for p in finding.evidence.get(UNLISTED) or []]
    if unlisted:  # a page of its own, or the name's other meaning, whoever read it: no line
        # may reach its logged URLs
        theirs = pl.col(s.PATTERN).is_in(unlisted) & (pl.col(s.HOST) == finding.host)
        logged = pl.concat([traffic.urls.filter(theirs, robots.HAS_URL).select(s.URL),
                            traffic.people_read.filter(theirs).select(s.URL)])
        content += [(u, OWN_PAGE) for u in logged[s.URL].unique().sort().to_list() if u not in taken]
        reason = (f"{lines_for(names)[0]} would reach {unlisted[0]}, a pattern whose list "
                  "without the parameter is none: its URLs may be pages of their own")
    else:
        lines, status, reason = robots.verify(lines_for(names), trap, content, known, allow_few=MAX_ALLOW_LINES)
        if status != "withheld" or not trap:
            return lines, status, reason, trap
    by_path: dict[str, list[str]] = {}
    for pattern in patterns:
        path, _, query = pattern.partition("?")
        on_path = by_path.setdefault(robots._glob(path), [])
        on_path += [n for n in names if n in query.split("&") and n not in on_path]
    per_path = tuple(line for glob, on_path in by_path.items() for line in lines_for(on_path, glob))
    narrowed, status, why = robots.verify(per_path, trap, content, known, allow_few=MAX_ALLOW_LINES)
    if status == "withheld":
        return (), "withheld", f"{reason}; by path: {why}", trap
    allowing = "" if status == "emitted" else f": {why}"  # (narrowed: Allow lines too)
    return narrowed, "narrowed", f"{reason}; narrowed to the lists' paths{allowing}", trap


def _paged(url: str) -> bool:
    """Whether the URL asks for a list's page past the first (`pagination.PAGE_PARAMS`, or a
    `/page/N` segment).

    >>> _paged("/c?page=2&sort_by=x"), _paged("/c/page/3/?orderby=x"), _paged("/c?sort_by=x")
    (True, True, False)
    """
    path, _, query = url.partition("?")
    names = {p.partition("=")[0].lower() for p in query.split("&")}
    return bool(names & _PAGE_NAMES) or re.search(r"/page/[0-9]+", path) is not None


def _first_page(url: str) -> str:
    """The URL without its page number (`pagination.PAGE_PARAMS`).

    >>> _first_page("/c?page=2&sort_by=x")
    '/c?sort_by=x'
    """
    path, _, query = url.partition("?")
    rest = [p for p in query.split("&") if p and p.partition("=")[0].lower() not in _PAGE_NAMES]
    return f"{path}?{'&'.join(rest)}" if rest else path


def _list_of(url: str) -> str:
    """The URL without its sort parameters (`_unsorted`, for one URL).

    >>> _list_of("/c/shoes?page=2&sort_by=price-ascending"), _list_of("/c/shoes?Sort=x")
    ('/c/shoes?page=2', '/c/shoes')
    """
    path, _, query = url.partition("?")
    rest = [p for p in query.split("&") if p and p.partition("=")[0].lower() not in SORT_NAMES]
    return f"{path}?{'&'.join(rest)}" if rest else path


def _people_reads(
    traffic: Traffic, host: str, settings: Settings, paths: Collection[str]
) -> tuple[dict[str, int], frozenset[str]]:
    """(people's reads per URL of the host on these paths, the URL sample's and those kept
    beside it, a URL's copies by tracking parameters counted as its own reads; the tracking
    parameters' names among them, for `_untracked`)."""
    sampled = traffic.urls.filter(pl.col(s.HOST) == host, pl.col(s.STATUS).is_between(200, 399)).select(
        s.URL, (pl.col(s.REQUESTS) - pl.col(s.BOT_REQUESTS)).alias("_n"))
    kept = traffic.people_urls.filter(pl.col(s.HOST) == host).select(s.URL, pl.col(s.HUMAN_REQUESTS).alias("_n"))
    both = pl.concat([sampled.group_by(s.URL).agg(pl.col("_n").sum()), kept.select(s.URL, "_n")])
    both = both.group_by(s.URL).agg(pl.col("_n").max()).filter(pl.col("_n") > 0, _shape.path_of(pl.col(s.URL)).is_in(paths))
    names = (both.select(_shape.query_of(pl.col(s.URL)).str.split("&").alias("_p")).explode("_p")
             .select(pl.col("_p").str.splitn("=", 2).struct.field("field_0").alias("_name")).unique())
    tracking = frozenset(names.filter(is_tracking(pl.col("_name"), settings))["_name"].to_list())
    reads: dict[str, int] = {}
    for url, n in both.iter_rows():
        page = _untracked(url, tracking)
        reads[page] = reads.get(page, 0) + n
    return reads, tracking


def _untracked(url: str, tracking: frozenset[str]) -> str:
    """The URL without its `tracking` parameters.

    >>> _untracked("/c?sort_by=new&utm_source=mail&utm_medium=email", frozenset({"utm_source", "utm_medium"}))
    '/c?sort_by=new'
    """
    path, _, query = url.partition("?")
    pairs = [p for p in query.split("&") if p]
    rest = [p for p in pairs if p.partition("=")[0] not in tracking]
    if len(rest) == len(pairs):
        return url
    return f"{path}?{'&'.join(rest)}" if rest else path

"""Site-wide parameters: one query parameter causing the traps of many URL patterns, judged as one.

WooCommerce links each product of a listing as `?add-to-cart=<id>` on the listing's own URL
(its page and sort kept; YITH's wishlist does the same with `?add_to_wishlist=<id>`).
Crawlers follow those links from every listing, and each listing's pattern grows a finding
of its own (`/shop/page/{n}/?add-to-cart`, `/product-category/hats/page/{n}/?add-to-cart&orderby`,
...), each with its path's robots.txt line, where the fix an admin knows is one pair of
lines for the whole site: `Disallow: /*?add-to-cart=` and `Disallow: /*&add-to-cart=`.

`merge` (run by `run_detectors` after the detectors) makes those findings one, of pattern
`/{any}?NAME` (`pattern_of`), whose evidence names the patterns (`member_patterns`): the
findings of `KINDS` on a host that blame the same parameter (`_blamed`: session_id's
parameter, a search's one parameter, else the one parameter with the most values in the
pattern's sampled URLs, `_DOMINANT` times as many as any other), when all of these hold:

1. the parameter causes the traps of at least `site_param_min_paths` distinct paths;
2. no finding whose pages can be real (`OWN_VALUE_KINDS`: calendar, pagination, soft_404)
   has the parameter in its pattern on the host: its values have pages there (a month with
   events, page 2 of a list);
3. people use the host (`site_param_min_human_requests`): only then can the log show them
   reading pages through the parameter;
4. no page carrying the parameter was answered 2xx or 3xx to people, on any pattern of the
   host (those kept beside the URL sample too), nor on a pattern requested with no user agent
   logged (`_read`): a parameter people navigate by (`?page=`, `?id=`, a sort they choose) is
   never ruled for the whole site (nor an add-to-cart link people follow: a theme without
   AJAX sends their clicks as links, and a landing page may add a kit to the cart);
5. its value chooses no page (`_changes`): wherever the host's sampled URLs hold two values
   of it on one page (the URL without it) answered 200, their sizes lie within `SPREAD` of
   each other, on all but `_CHANGED_SHARE` of those pages. A `?page=` or `?id=` gives each
   value a page of its own; `?add-to-cart=` gives the listing again, with a notice naming
   the product (a few dozen bytes, as WordPress's reply links name a comment's author:
   session_id.REPLY_SIZE_SPREAD);
6. its site-wide lines pass the check every rule passes (`robots.verify`): they block no
   sitemap URL and no page the log shows as content (`robots.log_content`, on the patterns
   no finding names and none carrying the parameter: by 5, a crawler's fetch of one is its
   page again).

Otherwise the findings stay as they were, one per pattern, each with its path's rule, and
`suggest` says why in its notes (`notes`). The finding's robots.txt rule (`robots_rule`) is
the pair checked again against what `suggest` knows (it may be given another sitemap): where
they would block a content URL there, its patterns get their own rules instead, together.

Why a site-wide line is safe here while session_id rules a parameter found by its values
alone on its path (commit d79e876): that parameter was seen on one path (a code browser's
`?id=<commit>` on one file's views), and the site-wide line reached every page a site names
by `?id=` (`/product.php?id=`), which the log never showed. Here the log shows the parameter
wasting crawls on five paths or more, across the site's templates, as a session's name is
appended to every link, and shows it making no page anywhere: no person reads a page through
it on any pattern, no sitemap or content URL carries it, and its values answer one page. A
parameter that chooses content (`?id=`, `?page=`) fails 4, 5 or 6 on a site people use, for
they read its pages. What stays unseen is a page carrying the parameter that no one fetched
while the log was written and no sitemap lists: the reach a session name's line (`/*?sid=`)
has always had.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Mapping, Sequence

import polars as pl

from logtrap import findings as f
from logtrap import schema as s
from logtrap.bots import NOT_LOGGED_NAME
from logtrap.detectors import _shape, _sort, budget_hog, facets, growing_pattern, internal_search
from logtrap.detectors import session_id
from logtrap.detectors import calendar, pagination, soft_404
from logtrap.settings import Settings
from logtrap.sitemaps import load_sitemap_urls
from logtrap.traffic import Traffic

ANY = "/{any}"  # the path of a parameter's finding: every path it was found on
NAME = "param_name"
_FINDING_KEYS = [s.KIND, s.HOST, s.PATTERN]
# Findings whose trap is every URL carrying the parameter, on their pattern: merged
KINDS = (session_id.KIND, facets.KIND, internal_search.KIND, budget_hog.KIND, growing_pattern.KIND)
# The sort orders' findings (_sort.py), whose parameters no merge takes again
_SORTS = pl.col(s.PATTERN).str.starts_with(f"{ANY}?") & pl.col(s.EVIDENCE).str.contains(
    f'"{_sort.SORT_PARAMS}":', literal=True)
# Findings whose pattern can hold real pages through its parameter: never merged, and a
# parameter in their pattern is ruled path by path
OWN_VALUE_KINDS = (calendar.KIND, pagination.KIND, soft_404.KIND)
# The parameter a growth or facet finding blames: the one with the most distinct values in
# the pattern's sampled URLs, at least this many times as many as the next (judgement: the
# listing's sort takes five values, its add-to-cart one per product; two alike say nothing)
_DOMINANT = 2.0
# Two values of the parameter on one page answer within this share of its size: the page
# again (a notice naming the product, a reply form under a named comment; judgement)
SPREAD = session_id.REPLY_SIZE_SPREAD
# ...on all but this share of the pages where two values were compared: a listing changes
# while the log is written (a product sold out), while a `?page=` or `?id=` changes nearly
# every page it is compared on (judgement)
_CHANGED_SHARE = 0.1
PEOPLE = "log, a page people fetched through the parameter"
UNLOGGED = "log, a page fetched through the parameter without a user agent in the log"
ADVICE = (
    "One parameter makes this trap on many URL patterns: the site adds `?{name}=` to links "
    "on every page of a kind (an add-to-cart or wishlist link, a sort, a session), and no "
    "page people read is reached through it. Stop linking it (a button or POST form instead "
    "of a link, rel=\"nofollow\"), then disallow it for the whole site: the robots.txt lines "
    "`Disallow: /*?{name}=` and `Disallow: /*&{name}=` take every URL carrying it, on every path."
)


def pattern_of(name: str) -> str:
    """The pattern of a parameter's finding.

    >>> pattern_of("add-to-cart")
    '/{any}?add-to-cart'
    """
    return f"{ANY}?{name}"


def is_param(pattern: str | None) -> bool:
    """True for a finding's pattern that names a parameter over many patterns.

    >>> is_param("/{any}?add-to-cart"), is_param("/shop/?add-to-cart")
    (True, False)
    """
    return bool(pattern) and pattern.startswith(f"{ANY}?")  # type: ignore[union-attr]


def lines_for(name: str) -> tuple[str, ...]:
    """The site-wide robots.txt lines for a parameter, first or later in the query.

    >>> lines_for("add-to-cart")
    ('Disallow: /*?add-to-cart=', 'Disallow: /*&add-to-cart=')
    """
    from logtrap import robots  # robots imports the detectors: imported on call

    value = robots.escape_value(name)
    return (f"Disallow: /*?{value}=", f"Disallow: /*&{value}=")


def covered(findings: pl.DataFrame, traffic: Traffic) -> pl.DataFrame:
    """(host, pattern) of every pattern the site-wide lines of the parameter findings among
    `findings` rule: their members, and any other pattern carrying the parameter (`carriers`:
    a listing the detectors did not call a trap, its sample too thin, is the same trap)."""
    params = f.to_records(findings.filter(pl.col(s.PATTERN).str.starts_with(f"{ANY}?")))
    # (a sort's finding rules its members only: a list linked sorted alone is a page, _sort.py)
    frames = [carriers(traffic, x.host, str(x.evidence["parameter"])) for x in params
              if "parameter" in x.evidence]
    members = [(x.host, p) for x in params for p in x.evidence.get("member_patterns") or []]
    schema = {s.HOST: pl.String, s.PATTERN: pl.String}
    frames.append(pl.DataFrame(members, schema=schema, orient="row"))
    return pl.concat(frames).unique(maintain_order=True)


def carriers(traffic: Traffic, host: str, name: str) -> pl.DataFrame:
    """(host, pattern) of the host's patterns whose query has the parameter."""
    patterns = traffic.patterns.filter(pl.col(s.HOST) == host).select(s.HOST, s.PATTERN).unique()
    has = _query_names(pl.col(s.PATTERN)).list.contains(pl.lit(name))
    return patterns.filter(has).sort(s.PATTERN)


# -- merging -----------------------------------------------------------------------------------


def merge(findings: pl.DataFrame, traffic: Traffic, settings: Settings) -> pl.DataFrame:
    """The findings with those one parameter causes on many patterns of a host made one
    (`site_wide`)."""
    return site_wide(findings, traffic, settings)[0]


def site_wide(
    findings: pl.DataFrame, traffic: Traffic, settings: Settings
) -> tuple[pl.DataFrame, dict[tuple[str, str], tuple[int, str]]]:
    """(the findings, each parameter's merged where the module's conditions hold; for each
    (host, parameter) causing traps on `site_param_min_paths` paths but left per pattern,
    its patterns and why)."""
    if findings.height == 0:
        return findings, {}
    blamed = _blamed(findings, traffic)
    # a sort's parameters have their finding for the whole host already (_sort.py)
    sorts = [(x.host, str(name)) for x in f.to_records(findings.filter(_SORTS))
             for name in x.evidence.get(_sort.SORT_PARAMS) or []]
    sorted_names = pl.DataFrame(sorts, schema={s.HOST: pl.String, NAME: pl.String}, orient="row")
    merging = blamed.filter(pl.col(s.KIND).is_in(KINDS)).join(sorted_names, on=[s.HOST, NAME], how="anti")
    paths = pl.col(s.PATTERN).str.splitn("?", 2).struct.field("field_0").n_unique()
    groups = (
        merging.group_by(s.HOST, NAME).agg(paths.alias("_paths"))
        .filter(pl.col("_paths") >= settings.site_param_min_paths)
        .sort(s.HOST, NAME)
    )
    if groups.height == 0:
        return findings, {}
    sitemap = load_sitemap_urls(settings.sitemaps)
    refused: dict[tuple[str, str], tuple[int, str]] = {}
    merged: list[f.Finding] = []
    taken = []
    for host, name in groups.select(s.HOST, NAME).iter_rows():
        members = merging.filter(pl.col(s.HOST) == host, pl.col(NAME) == name)
        why, numbers = _refusal(findings, blamed, traffic, settings, host, name, sitemap)
        if why is not None:
            refused[host, name] = (members[s.PATTERN].n_unique(), why)
            continue
        keys = members.select(_FINDING_KEYS)
        merged.append(_finding(findings.join(keys, on=_FINDING_KEYS, how="semi"), traffic, host,
                               name, numbers))
        taken.append(keys)
    if not merged:
        return findings, refused
    kept = findings.join(pl.concat(taken), on=_FINDING_KEYS, how="anti", nulls_equal=True)
    return pl.concat([kept, f.to_frame(merged)]), refused


def _query_names(pattern: pl.Expr) -> pl.Expr:
    """A pattern's query parameter names, placeholders (`{tracking}`) left out."""
    names = pattern.str.splitn("?", 2).struct.field("field_1").str.split("&")
    return names.list.eval(pl.element().filter(~pl.element().str.contains("{", literal=True)))


def _blamed(findings: pl.DataFrame, traffic: Traffic) -> pl.DataFrame:
    """(kind, host, pattern, NAME): the parameter each finding of `KINDS` blames, where one
    does; and every parameter of the patterns of `OWN_VALUE_KINDS` findings."""
    rows = findings.filter(
        pl.col(s.KIND).is_in([*KINDS, *OWN_VALUE_KINDS]),
        pl.col(s.PATTERN).str.contains("?", literal=True),
        ~pl.col(s.PATTERN).str.starts_with(f"{ANY}?"),
        # a parameter that does not change the page, which people follow: its advice is
        # rel=canonical, and it gets no rule
        pl.col(s.ADVICE).ne_missing(growing_pattern.COPY_ADVICE),
    ).select(*_FINDING_KEYS, s.EVIDENCE, _query_names(pl.col(s.PATTERN)).alias("_names"))
    out = [*_FINDING_KEYS, NAME]
    own = rows.filter(pl.col(s.KIND).is_in(OWN_VALUE_KINDS)).explode("_names").select(
        *_FINDING_KEYS, pl.col("_names").alias(NAME))
    # named by the finding itself: session_id's parameter, a search's one parameter
    named = rows.filter(pl.col(s.KIND).is_in([session_id.KIND, internal_search.KIND])).with_columns(
        pl.when(pl.col(s.KIND) == session_id.KIND)
        .then(pl.col(s.EVIDENCE).str.json_path_match("$.session_param"))
        .otherwise(pl.col(s.EVIDENCE).str.json_path_match("$.search_params"))
        .alias(NAME)
    ).filter(pl.col("_names").list.contains(pl.col(NAME))).select(out)
    varied = rows.filter(pl.col(s.KIND).is_in([facets.KIND, budget_hog.KIND, growing_pattern.KIND]))
    return pl.concat([own.select(out), named, _dominant(varied, traffic).select(out)])


def _dominant(rows: pl.DataFrame, traffic: Traffic) -> pl.DataFrame:
    """`rows` (with `_names`) with NAME: the parameter of the pattern with the most distinct
    values in its sampled URLs, `_DOMINANT` times as many as any other; rows with none out."""
    if rows.height == 0:
        return rows.with_columns(pl.lit(None, pl.String).alias(NAME))
    keys = [s.HOST, s.PATTERN]
    names = rows.select(*keys, "_names").unique(keys).explode("_names").rename({"_names": NAME})
    pairs = (
        traffic.urls.join(rows.select(keys).unique(), on=keys, how="semi")
        .select(*keys, _shape.query_of(pl.col(s.URL)).str.split("&").alias("_pair"))
        .explode("_pair")
        .select(
            *keys,
            pl.col("_pair").str.splitn("=", 2).struct.field("field_0").alias(NAME),
            pl.col("_pair").str.splitn("=", 2).struct.field("field_1").alias("_value"),
        )
        .join(names, on=[*keys, NAME], how="semi")
    )
    counts = (
        pairs.group_by(*keys, NAME).agg(pl.col("_value").n_unique().alias("_values"))
        .sort([*keys, "_values", NAME], descending=[False, False, True, False])
        .group_by(keys, maintain_order=True)
        .agg(pl.col(NAME).first(), pl.col("_values").first().alias("_top"),
             pl.col("_values").get(1, null_on_oob=True).alias("_next"))
        .filter(pl.col("_next").is_null() | (pl.col("_top") >= _DOMINANT * pl.col("_next")))
    )
    return rows.join(counts.select(*keys, NAME), on=keys, how="inner")


def _refusal(
    findings: pl.DataFrame, blamed: pl.DataFrame, traffic: Traffic, settings: Settings,
    host: str, name: str, sitemap: Sequence[str],
) -> tuple[str | None, dict[str, int]]:
    """(why the parameter is not ruled site-wide on the host, or None; the numbers of
    condition 5, `_changes`, for the evidence)."""
    here = (pl.col(s.HOST) == host) & (pl.col(NAME) == name)
    own = blamed.filter(pl.col(s.KIND).is_in(OWN_VALUE_KINDS), here)
    if own.height:
        kind, pattern = own.sort(s.PATTERN).select(s.KIND, s.PATTERN).row(0)
        return f"a {kind} finding on {pattern} has it: its values have pages of their own there", {}
    people = traffic.patterns.filter(pl.col(s.HOST) == host)[s.HUMAN_REQUESTS].sum()
    if people < settings.site_param_min_human_requests:
        return (f"people made {people:,} requests on the host, fewer than "
                f"site_param_min_human_requests ({settings.site_param_min_human_requests:,}): the log "
                "cannot show whether they read pages through it"), {}
    read = _read(traffic, host, name)
    if read:
        url, why = read[0]
        who = "people" if why == PEOPLE else "a request with no user agent logged (anyone's)"
        return f"{who} fetched {url} through it: a parameter people navigate by", {}
    compared, changed, example = _changes(traffic, settings, host, name)
    numbers = {"pages_compared": compared, "pages_changed": changed}
    if compared == 0:
        return ("no page was answered 200 for two of its values: the log does not show that "
                "its value chooses no page"), numbers
    if changed > _CHANGED_SHARE * compared:
        return (f"its value changes the page on {changed:,} of {compared:,} pages where two of "
                f"its values were answered (such as {example})"), numbers
    from logtrap import robots  # robots imports the detectors: imported on call

    # every pattern carrying it is the trap the lines would rule: no content of the log's
    traps = findings.filter(pl.col(s.HOST) == host, pl.col(s.PATTERN).is_not_null())
    traps = pl.concat([traps.select(s.HOST, s.PATTERN), carriers(traffic, host, name)]).unique()
    content = [(u, "sitemap") for u in robots.sitemap_paths(sitemap, host, traffic.hosts)]
    content += [(u, "log") for u in robots.log_content(traffic, traps, host)[s.URL].to_list()]
    _, status, reason, _ = site_rule(traffic, host, name, content)
    return (None if status == "emitted" else reason), numbers


def _carries(name: str) -> pl.Expr:
    """True for a URL whose query has the parameter (with a value or none)."""
    return pl.col(s.URL).str.contains(rf"\?(?:[^#]*&)?{re.escape(name)}(?:=|&|#|$)")


def _read(traffic: Traffic, host: str, name: str) -> list[tuple[str, str]]:
    """The host's URLs carrying the parameter answered 2xx or 3xx to people (PEOPLE: the URL
    sample's and the people's, `traffic.people_read`), or sampled on a pattern requested with
    no user agent logged, where people cannot be told apart (UNLOGGED): pages someone may
    read through it. Sorted, the same every run."""
    answered = traffic.urls.filter(
        pl.col(s.HOST) == host, _carries(name), pl.col(s.STATUS).is_between(200, 399))
    people = traffic.people_read.filter(pl.col(s.HOST) == host, _carries(name))[s.URL].unique().sort()
    unlogged = traffic.agents.filter(pl.col(s.HOST) == host, pl.col(s.BOT_NAME) == NOT_LOGGED_NAME)
    blind = answered.join(unlogged.select(s.PATTERN).unique(), on=s.PATTERN, how="semi")[s.URL]
    read = [(u, PEOPLE) for u in people.to_list()]
    return read + [(u, UNLOGGED) for u in blind.unique().sort().to_list() if u not in set(people)]


def notes(findings: pl.DataFrame, traffic: Traffic, settings: Settings) -> list[str]:
    """What `suggest` says of each parameter that causes the traps of many patterns of a host
    and still gets a rule per pattern: why no line for the whole site."""
    _, refused = site_wide(findings, traffic, settings)
    return [
        f"`?{name}=` makes the traps of {n:,} URL patterns{'' if host == '-' else f' of {host}'}, "
        f"but gets no robots.txt line for the whole site (`/*?{name}=`), as {why}; each "
        "pattern keeps its own rule"
        for (host, name), (n, why) in sorted(refused.items())
    ]


def _changes(traffic: Traffic, settings: Settings, host: str, name: str) -> tuple[int, int, str]:
    """(pages compared, pages changed, one changed page): the host's sampled URLs carrying the
    parameter answered 200 with a size that is evidence (`_shape.sized_ok`), grouped by the
    page they are without it; a page where two values or more were answered is compared,
    and changed where their sizes spread beyond `SPREAD` of the largest."""
    shell = _shape.shell_sizes(traffic, settings)
    urls = traffic.urls.filter(pl.col(s.HOST) == host, _carries(name))
    urls = _shape.per_url(urls, shell).filter(_shape.sized_ok())
    pairs = _shape.query_of(pl.col(s.URL)).str.split("&")
    mine = pl.element().str.starts_with(f"{name}=") | (pl.element() == name)
    rest = pairs.list.eval(pl.element().filter(~mine)).list.join("&")
    path = _shape.path_of(pl.col(s.URL))
    pages = (
        urls.select(
            pl.when(rest == "").then(path).otherwise(pl.concat_str(path, pl.lit("?"), rest))
            .alias("_page"),
            pairs.list.eval(pl.element().filter(mine)).list.first().alias("_value"),
            s.BYTES,
        )
        .group_by("_page")
        .agg(pl.col("_value").n_unique().alias("_values"), pl.col(s.BYTES).min().alias("_low"),
             pl.col(s.BYTES).max().alias("_high"))
        .filter(pl.col("_values") >= 2)
    )
    changed = pages.filter(pl.col("_high") - pl.col("_low") > SPREAD * pl.col("_high")).sort("_page")
    example = ""
    if changed.height:
        page, low, high = changed.select("_page", "_low", "_high").row(0)
        example = f"{page} ({low:,} to {high:,} bytes)"
    return pages.height, changed.height, example


def site_rule(
    traffic: Traffic, host: str, name: str, content: Sequence[tuple[str, str]],
    known: Mapping[str, str | None] | None = None,
) -> tuple[tuple[str, ...], str, str, list[str]]:
    """(lines, status, reason, trap URLs): the parameter's site-wide lines checked against
    `content` (sitemap and log content, `robots.log_content` of patterns no finding names
    and none carrying the parameter: a crawler's fetch of one is its page again, `_changes`)
    and the pages people, or requests with no user agent logged, fetched through the
    parameter on any pattern; trapped are the other sampled URLs of the patterns carrying it
    (`carriers`)."""
    from logtrap import robots  # robots imports the detectors: imported on call

    urls = traffic.urls.filter(pl.col(s.HOST) == host, robots.HAS_URL)
    content = [*content, *_read(traffic, host, name)]
    taken = {u for u, _ in content}
    trap = (
        urls.join(carriers(traffic, host, name), on=[s.HOST, s.PATTERN], how="semi")
        .unique(s.URL).sort(s.URL_HASH)[s.URL].to_list()
    )
    trap = [u for u in trap if robots.url_path(u) not in taken]
    known = dict(known or {})
    known.update(robots.normal_forms([u for u in [*trap, *taken] if u not in known]))
    lines, status, reason = robots.verify(lines_for(name), trap, content, known)
    return lines, status, reason, trap


def robots_rule(
    finding: f.Finding, traffic: Traffic, content: list[tuple[str, str]],
    known: Mapping[str, str | None], settings: Settings,
) -> tuple[tuple[str, ...], str, str, list[str]]:
    """(lines, status, reason, trap URLs) for a parameter's finding: its site-wide lines
    (`site_rule`); where content given here and not when it was merged stops them (another
    sitemap), the rules of its patterns one by one (`robots.choose`), together."""
    from logtrap import robots  # robots imports the detectors: imported on call

    name = str(finding.evidence.get("parameter") or "")
    patterns = [str(p) for p in finding.evidence.get("member_patterns") or []]
    lines, status, reason, trap = site_rule(traffic, finding.host, name, content, known)
    if status == "emitted" or not trap:
        return lines, status, reason, trap
    chosen, trapped = [], set(trap)
    for pattern in patterns:
        rows = traffic.urls.filter(pl.col(s.HOST) == finding.host, pl.col(s.PATTERN) == pattern)
        urls = [u for u in rows.unique(s.URL).sort(s.URL_HASH)[s.URL].to_list() if u in trapped]
        chosen.append(robots.choose(finding.kind, pattern, urls, content, settings, known))
    refused = next((why for ls, st, why in chosen if st == "withheld"), None)
    if refused is not None:
        return (), "withheld", f"{reason}; by pattern: {refused}", trap
    per_pattern = tuple(dict.fromkeys(line for ls, _, _ in chosen for line in ls))
    return per_pattern, "narrowed", f"{reason}; narrowed to a rule per pattern", trap


def _finding(
    rows: pl.DataFrame, traffic: Traffic, host: str, name: str, numbers: Mapping[str, int]
) -> f.Finding:
    """The parameter's one finding from its patterns' findings: requests and wasted requests
    summed over the patterns (a pattern's most wasteful finding counted once), examples from
    the patterns that waste most, the most frequent kind and the highest severity."""
    records = f.to_records(rows)
    best: dict[str, f.Finding] = {}
    for x in records:
        if x.pattern not in best or x.wasted_requests > best[x.pattern].wasted_requests:
            best[x.pattern] = x  # type: ignore[index]
    order = sorted(best, key=lambda p: (-best[p].wasted_requests, p))
    kinds = Counter(x.kind for x in records)
    kind = min(kinds, key=lambda k: (-kinds[k], f.KINDS.index(k)))
    severity = max((x.severity for x in records), key=s.SEVERITIES.index)
    totals = _shape.pattern_totals(traffic).filter(pl.col(s.HOST) == host,
                                                   pl.col(s.PATTERN).is_in(order))
    examples = [best[p].examples[0] for p in order if best[p].examples][: f.MAX_EXAMPLES]
    evidence = {
        "parameter": name,
        "patterns": len(order),
        "member_patterns": order,
        "kinds": [{"kind": k, "findings": n}
                  for k, n in sorted(kinds.items(), key=lambda kn: (-kn[1], kn[0]))],
        s.BOT_REQUESTS: int(totals[s.BOT_REQUESTS].sum()),
        s.HUMAN_REQUESTS: int(totals[s.HUMAN_REQUESTS].sum()),
        **numbers,
    }
    return f.Finding(
        kind=kind,
        severity=severity,
        host=host,
        pattern=pattern_of(name),
        requests=sum(best[p].requests for p in order),
        wasted_requests=sum(best[p].wasted_requests for p in order),
        examples=tuple(examples),
        evidence=evidence,
        advice=ADVICE.format(name=name),
    )

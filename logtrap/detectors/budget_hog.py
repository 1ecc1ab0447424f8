"""budget_hog: one wasteful-looking URL pattern takes most of a host's bot fetches.

The rule (DESIGN.md: "one pattern takes more than half of a host's bot fetches"):

1. the pattern's share of its host's bot requests is above `budget_hog_share` (0.5), the
   host has at least `budget_hog_min_bot_requests` bot requests (tiny logs say nothing), and
   the pattern has at least `budget_hog_min_urls` distinct URLs: a trap is a URL space, and
   one URL fetched over and over (an uptime monitor polling `/health` every minute on a site
   crawlers barely visit) is a rate, which no robots.txt line changes;
2. the pattern looks wasteful, by at least one signal read from the traffic itself:
   - *repeated answers*: among the sampled URLs answered 200, there are at least
     `budget_hog_urls_per_size` URLs per distinct page (many URLs, one page; a page's sizes
     may spread over a few bytes, a catalog's pages are pages apiece: `_shape.with_answers`); URLs
     answered with the size of the site's shell (`_shape.shell_sizes`: a single-page app
     answers every route with one page) are left out, counted as `shell_urls`; and people
     made at most `budget_hog_repeated_max_human_share` of the pattern's requests (an app
     whose shell only two routes answer, `/recipes/{slug}` and `/cooks/{name}` beside a
     server-rendered home page, is no shell site-wide: its recipes, a quarter of their
     requests people's, were called waste);
   - *failing answers*: at least `budget_hog_error_share` of its bot requests were answered
     with a temporary redirect or an error (302, 303, 307, 4xx, 5xx). Not a permanent
     redirect (301, 308): a moved site's old URLs are fetched by crawlers to follow them to
     the new ones, for months, and must stay crawlable;
   - *bots only*: humans use the host (`budget_hog_min_human_requests`) but under
     `budget_hog_max_human_share` of this pattern's requests are theirs, some of its sampled
     URLs answer 200, and they are not each a page of their own (at most
     `budget_hog_distinct_urls_per_size` sampled URLs per distinct size, over at least
     `_MIN_SAMPLED` of them): a catalog few people open, or an image library crawled by an
     image bot, is content, however few people fetch it; and old URLs that only redirect
     are fetched by crawlers alone by nature.

Why step 2: a blog's bots mostly fetch its articles (`/article/{n}/{slug}`), and that is the
budget well spent — each URL a distinct page, answered 200, read by people too. Detectors are
independent, so the trap kinds' own findings are not consulted; the same signals they rest on
(repeated sizes, failing answers, bot-only URLs) are read here directly. The finding usually
co-occurs with the trap kind of the same pattern: that one says what the trap is, this one
says it is eating the crawl budget.
"""

from __future__ import annotations

import polars as pl

from logtrap import findings as f
from logtrap import schema as s
from logtrap.detectors import _family, _shape
from logtrap.settings import Settings
from logtrap.traffic import Traffic

KIND = "budget_hog"

ADVICE = (
    "This one URL pattern takes most of the crawl budget. Fix the trap behind it at the "
    "source (see the other findings on this pattern), and disallow the pattern in robots.txt "
    "so crawlers spend their fetches on real content."
)

FAMILY_ADVICE = (
    "These patterns differ only in literal path segments (a code browser's owners, "
    "repositories, views and files) and together take most of the crawl budget: every file "
    "at every commit, each URL new, the same bytes again and again. Disallow the views asked "
    "for at a commit in robots.txt (the rule below keeps the pages people read open); where "
    "a view takes a branch's name as well as a commit, robots.txt cannot tell them apart, and "
    "the server rules refuse the crawlers on its commits only. Link file views at the branch "
    "head, or mark commit-pinned links rel=\"nofollow\"."
)

_KEYS = [s.HOST, s.PATTERN]
# The evidence a pattern's finding and a family's share (a family's answers: its members')
_EVIDENCE = [
    s.BOT_SHARE,
    s.BOT_REQUESTS,
    "host_bot_requests",
    s.HUMAN_REQUESTS,
    "human_share",
    s.UNIQUE_URLS,
    "sampled_ok_urls",
    "distinct_ok_sizes",
    "urls_per_size",
    "shell_urls",
]
# Sampled 200-URLs below which their sizes tell nothing about distinct pages (judgement)
_MIN_SAMPLED = 20


def detect(traffic: Traffic, settings: Settings) -> pl.DataFrame:
    """Patterns taking more than half of their host's bot fetches while looking wasteful.

    >>> from logtrap.traffic import Tally
    >>> detect(Tally().finish(), Settings()).shape
    (0, 9)
    """
    if traffic.patterns.height == 0:
        return f.empty_findings()
    # one row per host+pattern even if a pattern spans several sections
    patterns = traffic.patterns.group_by(_KEYS).agg(
        pl.col(s.REQUESTS, s.BOT_REQUESTS, s.HUMAN_REQUESTS, s.BOT_SHARE).sum(),
        pl.col(s.UNIQUE_URLS).first(),
    )
    hosts = patterns.group_by(s.HOST).agg(
        pl.col(s.BOT_REQUESTS).sum().alias("host_bot_requests"),
        pl.col(s.HUMAN_REQUESTS).sum().alias("host_human_requests"),
    )
    candidates = patterns.join(hosts, on=s.HOST).filter(
        (pl.col(s.BOT_SHARE) > settings.budget_hog_share)
        & (pl.col("host_bot_requests") >= settings.budget_hog_min_bot_requests)
        & (pl.col(s.UNIQUE_URLS) >= settings.budget_hog_min_urls)
    ).join(_shape.monitored(traffic), on=_KEYS, how="anti")  # the admin's own checks
    candidates = (
        candidates.join(_answer_signals(traffic, candidates, settings), on=_KEYS, how="left")
        .join(_error_shares(traffic), on=_KEYS, how="left")
        .with_columns(
            pl.col("sampled_ok_urls", "distinct_ok_sizes", "shell_urls").fill_null(0),
            pl.col("error_share").fill_null(0.0),
            (pl.col(s.HUMAN_REQUESTS) / pl.col(s.REQUESTS)).alias("human_share"),
        )
        .with_columns(_reasons(settings).alias("wasteful_because"))
        .filter(pl.col("wasteful_because").list.len() > 0)
    )
    families = _families(traffic, settings)
    if candidates.height == 0:
        return families
    rows = candidates.join(_examples(traffic), on=_KEYS, how="left").with_columns(
        pl.col(s.BOT_REQUESTS).alias(s.WASTED_REQUESTS),
        pl.col(s.EXAMPLES).fill_null([]),
        pl.col(s.BOT_SHARE).round(4),
        pl.col("human_share").round(4),
        pl.col("error_share").round(4),
        pl.col("urls_per_size").round(2),
    )
    severity = f.critical_when(pl.col(s.BOT_SHARE) >= settings.budget_hog_critical_share)
    found = f.finding_rows(
        KIND,
        rows.sort(_KEYS),
        severity=severity,
        evidence=[*_EVIDENCE, "error_share", "wasteful_because"],
        advice=ADVICE,
    )
    return pl.concat([found, families])


def _families(traffic: Traffic, settings: Settings) -> pl.DataFrame:
    """Findings on pattern families (`_family`): a code browser's views of every file at
    every commit, split into a pattern per file, taking the budget together."""
    rows = _family.detect(traffic, settings)
    if rows.height == 0:
        return f.empty_findings()
    rows = rows.with_columns(
        pl.col(s.BOT_REQUESTS).alias(s.WASTED_REQUESTS),
        pl.col(s.EXAMPLES).fill_null([]),
        pl.col(s.BOT_SHARE, "human_share").round(4),
        pl.col("urls_per_size").round(2),
        pl.lit(["repeated_answers"]).alias("wasteful_because"),
    )
    return f.finding_rows(
        KIND,
        rows,
        severity=f.critical_when(pl.col(s.BOT_SHARE) >= settings.budget_hog_critical_share),
        evidence=[*_EVIDENCE, "wasteful_because", "patterns", "top_patterns"],
        advice=FAMILY_ADVICE,
    )


def _answer_signals(traffic: Traffic, candidates: pl.DataFrame, settings: Settings) -> pl.DataFrame:
    """Per pattern of `candidates`: sampled URLs answered 200 with a size other than the site's
    shell, how many distinct pages they have, and the URLs answered with the shell's size."""
    shell = _shape.shell_sizes(traffic, settings)
    urls = _shape.per_url(traffic.urls, shell).join(candidates.select(_KEYS), on=_KEYS, how="semi")
    urls = _shape.with_answers(urls, settings)
    sized = _shape.sized_ok()
    return (
        urls.group_by(_KEYS)
        .agg(
            sized.sum().cast(pl.Int64).alias("sampled_ok_urls"),
            # distinct pages: sizes shared by chance in a dense catalog are pages apiece
            pl.col(_shape.ANSWER).filter(sized).n_unique().cast(pl.Int64)
            .alias("distinct_ok_sizes"),
            pl.col(_shape.SHELL).sum().cast(pl.Int64).alias("shell_urls"),
        )
        .with_columns(
            (pl.col("sampled_ok_urls") / pl.col("distinct_ok_sizes").clip(lower_bound=1))
            .alias("urls_per_size")
        )
    )


def _error_shares(traffic: Traffic) -> pl.DataFrame:
    """Per pattern: the share of bot requests answered with a temporary redirect or an error
    (a permanent one moves the URL: crawlers follow it, and should)."""
    failing = (pl.col(s.STATUS) >= 300) & ~pl.col(s.STATUS).is_in([301, 304, 308])
    return traffic.statuses.group_by(_KEYS).agg(
        (
            pl.col(s.BOT_REQUESTS).filter(failing).sum()
            / pl.col(s.BOT_REQUESTS).sum().clip(lower_bound=1)
        ).alias("error_share")
    )


def _reasons(settings: Settings) -> pl.Expr:
    """The wasteful signals a pattern shows, by name (empty list = looks like real content)."""
    repeated = (pl.col("urls_per_size").fill_null(0.0) >= settings.budget_hog_urls_per_size) & (
        pl.col("human_share") <= settings.budget_hog_repeated_max_human_share)
    failing = pl.col("error_share") >= settings.budget_hog_error_share
    distinct_pages = (pl.col("sampled_ok_urls") >= _MIN_SAMPLED) & (
        pl.col("urls_per_size").fill_null(0.0) <= settings.budget_hog_distinct_urls_per_size
    )
    bots_only = (
        (pl.col("host_human_requests") >= settings.budget_hog_min_human_requests)
        & (pl.col("human_share") < settings.budget_hog_max_human_share)
        & (pl.col("sampled_ok_urls") > 0)
        & ~distinct_pages
    )
    return pl.concat_list(
        pl.when(repeated).then(pl.lit(["repeated_answers"])).otherwise(pl.lit([], pl.List(pl.String))),
        pl.when(failing).then(pl.lit(["failing_answers"])).otherwise(pl.lit([], pl.List(pl.String))),
        pl.when(bots_only).then(pl.lit(["bots_only"])).otherwise(pl.lit([], pl.List(pl.String))),
    )


def _examples(traffic: Traffic) -> pl.DataFrame:
    """Up to 5 sampled URLs per pattern, the ones bots fetched most first."""
    return (
        traffic.urls.group_by(_KEYS + [s.URL])
        .agg(pl.col(s.BOT_REQUESTS).sum())
        .sort(s.BOT_REQUESTS, s.URL, descending=[True, False])
        .group_by(_KEYS, maintain_order=True)
        .agg(pl.col(s.URL).head(f.MAX_EXAMPLES).alias(s.EXAMPLES))
    )

"""aggressive_bot: one bot fetching far faster than the rest, concentrated on a few routes.

Per host and bot (`bot_name`), from `traffic.agents` and `traffic.bot_minutes`:

1. at least `aggressive_bot_min_requests` requests and `aggressive_bot_min_share` of the host's
   bot requests;
2. its peak requests per minute is at least `aggressive_bot_min_peak` and at least
   `aggressive_bot_peak_ratio` times the median peak of the host's *other* bots ("far above the
   rest" needs a rest: the other bots must make `aggressive_bot_min_other_requests` requests
   between them, so a local health check on a vhost nothing else crawls gives no finding);
3. a few routes: at most `aggressive_bot_max_routes` routes (path prefixes such as `/asl/`)
   hold `aggressive_bot_route_share` of its requests. Server rules are then scoped by user
   agent AND path (DESIGN.md), never a whole-site ban: where a route is a folder the whole
   site lives under (`site_folders`: `/cgit/`, `/en/`), routes one level in (`/en/asl/`,
   `/cgit/*/tree/`) where they hold that share.

Only requests for paths count (not `OPTIONS *`, which Apache sends itself as its "internal dummy
connection"; `analyze` leaves those out before any table). Static files (CSS, scripts,
images, fonts) are left out of the counts too: a headless browser rendering a page fetches
its assets in a burst, which is neither a crawl nor a trap, and a rule blocking them would
only break the renderer.

Nor is an HTTP library, unnamed agent or link previewer whose requests spread evenly over
`crowd_min_addresses` addresses or more (`traffic.crowd_bots`): that is many people's app,
and a rule against its user agent would lock them all out. For such agents the evidence
gives `addresses` (null for the others). One whose requests spread evenly over
`crowd_review_addresses` addresses or more may still be a small app's users: its finding is
a warning at most, its advice says so, and `rules` withholds its server rule.

Nor is federation software (`FEDERATION`: Mastodon, Pleroma, Misskey...) whose requests spread
evenly over `crowd_review_addresses` addresses or more. Every server of a federated network
sends the same product name (`http.rb/5.1.1 (Mastodon/4.2.10; +https://<its own name>/)`), and
a boosted post makes hundreds of them fetch it, and the author's profile, within a minute or
two: a stampede of many servers, each fetching once, not one crawler's rate. A rule against
the name would cut the site off its followers on every server. One instance hammering from a
few addresses is still a finding.

Search engines (`bot_kind == "search"`) are never flagged: Googlebot is usually the biggest and
fastest crawler and that is the crawl a site wants; a rule matching its user agent would block
the real engine too. Addresses that only claim to be one are `fake_bot`'s findings. Nor are
requests whose log records no user agent (`bots.named_bot`): they are not one bot, and no
server rule could match an agent the log never showed.

The finding's pattern is the bot's most fetched pattern on its routes, its examples URLs of
its most fetched patterns there; evidence names the bot (`bot_name`), its routes (`routes`,
path prefixes) for the server rules, and its most fetched patterns on them (`patterns`).
"""

from __future__ import annotations

import polars as pl

from logtrap import findings as f
from logtrap import schema as s
from logtrap.bots import named_bot
from logtrap.detectors import _shape
from logtrap.settings import Settings
from logtrap.traffic import Traffic, bot_addresses, crowd_bots, spread_evenly

KIND = "aggressive_bot"

ADVICE = (
    "One bot fetches these routes far faster than any other. It may ignore robots.txt: add a "
    "server rule scoped to its user agent and these paths (rate-limit or deny), and a "
    "robots.txt group for it; leave the rest of the site open to it."
)

MANY_ADDRESSES = (
    " It came from many addresses, its requests spread evenly: if they are your app's or your "
    "customers' devices, leave it be (logtrap withholds the server rule; see logtrap bots)."
)

_BOT = [s.HOST, s.BOT_NAME]
# A first folder people make this share of their page requests under is the whole site
# (`/cgit/`): a rule over it bans the bot from the site (judgement: the odd page outside,
# an about page, does not make the rest a route)
_SITE_SHARE = 0.9

# Fediverse (ActivityPub) server software, as logtrap names it: every instance sends the name,
# so many addresses are many servers, not one crawler's pool
FEDERATION = (
    "Mastodon", "Pleroma", "Akkoma", "Misskey", "Sharkey", "Firefish", "Calckey", "Iceshrimp",
    "GoToSocial", "Friendica", "Hubzilla", "Lemmy", "Mbin", "kbin", "PeerTube", "Pixelfed",
    "WriteFreely", "BookWyrm", "Funkwhale",
)


def route_of(pattern: pl.Expr) -> pl.Expr:
    """The path prefix a pattern lives under: its first path segment.

    `/asl/{n}?page` -> `/asl/`; `/about` -> `/about`; `/{n}/x` and `/` -> `/`. A segment
    with matrix parameters gives its stem and `;`, a prefix too: the pattern `/img;v` keeps
    the parameter's name only, and the server sees `/img;v=2`.

    >>> pl.select(route_of(pl.Series(["/asl/{n}?page", "/img;v"]))).to_series().to_list()
    ['/asl/', '/img;']
    """
    path = pattern.str.split("?").list.first()
    first = path.str.extract(r"^/([^/]*)", 1).fill_null("")
    nested = path.str.contains(r"^/[^/]*/")
    matrix = first.str.contains(";", literal=True)
    return (
        pl.when((first == "") | first.str.contains("{", literal=True) | first.str.starts_with(";"))
        .then(pl.lit("/"))
        .when(nested)
        .then(pl.lit("/") + first + pl.lit("/"))
        .when(matrix)
        .then(pl.lit("/") + first.str.split(";").list.first() + pl.lit(";"))
        .otherwise(pl.lit("/") + first)
    )


def deep_route_of(pattern: pl.Expr, any_second: bool = True) -> pl.Expr:
    """The path prefix a pattern lives under inside a folder that is the whole site: its
    first and third segments, any second (`/cgit/{repo}/blame/...` -> `/cgit/*/blame/`), or
    (`any_second=False`) its first two (`/en/asl/...` -> `/en/asl/`); null for a pattern less
    deep or with a variable segment there.

    >>> pats = pl.Series(["/cgit/a.git/tree/x.c?id", "/cgit/a.git/", "/{n}/b/c/d", "/en/asl/{n}"])
    >>> pl.select(deep_route_of(pats)).to_series().to_list()
    ['/cgit/*/tree/', None, None, None]
    >>> pl.select(deep_route_of(pats, any_second=False)).to_series().to_list()
    ['/cgit/a.git/', '/cgit/a.git/', None, '/en/asl/']
    """
    path = pattern.str.split("?").list.first()
    if not any_second:
        return path.str.extract(r"^(/[^/{};]+/[^/{};]+/)", 1)
    parts = path.str.extract_groups(r"^/([^/{};]+)/[^/]+/([^/{};]+)/")
    return pl.lit("/") + parts.struct.field("1") + pl.lit("/*/") + parts.struct.field("2") + pl.lit("/")


def in_routes(pattern: pl.Expr, routes: list[str]) -> pl.Expr:
    """Whether a pattern lives under one of `routes` (`route_of` or `deep_route_of`'s; the
    latter's only where a route is one level in, `/en/asl/` or `/cgit/*/tree/`: a first
    folder's, `/asl/`, is none of them)."""
    under = route_of(pattern).is_in(routes)
    if any(route.count("/") > 2 for route in routes):
        under = (under | deep_route_of(pattern).is_in(routes).fill_null(False)
                 | deep_route_of(pattern, any_second=False).is_in(routes).fill_null(False))
    return under


def site_folders(traffic: Traffic) -> pl.DataFrame:
    """Per host, the first folder (`route_of`) holding `_SITE_SHARE` of people's requests for
    pages (not static files): the whole site lives under it (`/cgit/`), and a rule over it
    is a site-wide ban."""
    people = (
        traffic.patterns.filter(~_shape.is_static(pl.col(s.PATTERN)))
        .select(s.HOST, route_of(pl.col(s.PATTERN)).alias("route"),
                (pl.col(s.REQUESTS) - pl.col(s.BOT_REQUESTS)).alias("people"))
        .group_by(s.HOST, "route").agg(pl.col("people").sum())
    )
    return people.filter(
        pl.col("route").str.ends_with("/"), pl.col("route") != "/",
        pl.col("people") > 0, pl.col("people") >= _SITE_SHARE * pl.col("people").sum().over(s.HOST),
    ).select(s.HOST, "route")


def detect(traffic: Traffic, settings: Settings) -> pl.DataFrame:
    """Bots (not search engines) far faster than the rest, on a few routes.

    >>> from logtrap.traffic import Tally
    >>> detect(Tally().finish(), Settings()).shape
    (0, 9)
    """
    agents = traffic.agents.filter(
        named_bot()
        & pl.col(s.PATTERN).str.starts_with("/")
        & ~_shape.is_static(pl.col(s.PATTERN))
    )
    if agents.height == 0:
        return f.empty_findings()
    addresses = bot_addresses(traffic).select(
        *_BOT,
        "addresses",
        # many evenly spread addresses, though fewer than a crowd: maybe a small app's users
        ((pl.col("addresses") >= settings.crowd_review_addresses) & spread_evenly(settings))
        .alias("_many"),
    )
    # ...or, for federation software, many servers
    federated = addresses.filter(pl.col("_many") & pl.col(s.BOT_NAME).is_in(FEDERATION))
    bots = (
        _bots(agents, traffic.bot_minutes)
        .join(crowd_bots(traffic, settings).select(s.BOT_NAME), on=s.BOT_NAME, how="anti")
        .join(federated.select(_BOT), on=_BOT, how="anti")
    )
    candidates = bots.filter(
        (pl.col(s.BOT_KIND) != "search")
        & (pl.col(s.REQUESTS) >= settings.aggressive_bot_min_requests)
        & (pl.col("share") >= settings.aggressive_bot_min_share)
        & pl.col("median_other_peak_per_minute").is_not_null()
        & (
            pl.col("host_bot_requests") - pl.col(s.REQUESTS)
            >= settings.aggressive_bot_min_other_requests
        )
        & (pl.col("peak_per_minute") >= settings.aggressive_bot_min_peak)
        & (pl.col("peak_ratio") >= settings.aggressive_bot_peak_ratio)
    )
    if candidates.height == 0:
        return f.empty_findings()
    routes, on_routes = _routes(agents.join(candidates.select(_BOT), on=_BOT), site_folders(traffic),
                                settings)
    rows = candidates.join(routes, on=_BOT).filter(
        pl.col("route_share") >= settings.aggressive_bot_route_share
    )
    if rows.height == 0:
        return f.empty_findings()
    rows = (
        rows.join(_examples(traffic, on_routes.join(rows.select(_BOT), on=_BOT, how="semi")), on=_BOT,
                  how="left")
        .join(addresses, on=_BOT, how="left")
        .with_columns(
            pl.col("route_requests").alias(s.WASTED_REQUESTS),
            pl.col(s.EXAMPLES).fill_null([]),
            pl.col("share").round(4),
            pl.col("route_share").round(4),
            pl.col("peak_ratio").round(2),
            pl.col("median_other_peak_per_minute").cast(pl.Float64),
            pl.col("_many").fill_null(False),
        )
        .sort(_BOT)
    )
    critical = (pl.col("share") >= settings.aggressive_bot_critical_share) & ~pl.col("_many")
    severity = f.critical_when(critical)
    advice = (
        pl.when(pl.col("_many")).then(pl.lit(ADVICE + MANY_ADDRESSES)).otherwise(pl.lit(ADVICE))
    )
    return f.finding_rows(
        KIND,
        rows,
        severity=severity,
        evidence=[
            s.BOT_NAME,
            s.BOT_KIND,
            s.REQUESTS,
            "host_bot_requests",
            "share",
            "peak_per_minute",
            "median_other_peak_per_minute",
            "peak_ratio",
            "routes",
            "route_requests",
            "route_share",
            "patterns",
            "addresses",
        ],
        advice=advice,
    )


def _bots(agents: pl.DataFrame, minutes: pl.DataFrame) -> pl.DataFrame:
    """One row per host+bot: requests, share of the host's bot requests, peak per minute and
    the median peak of the host's other bots."""
    per_bot = agents.group_by(_BOT).agg(
        pl.col(s.REQUESTS).sum(),
        pl.col(s.BOT_KIND).mode().sort().first(),
    )
    peaks = minutes.group_by(_BOT).agg(pl.col(s.REQUESTS).max().alias("peak_per_minute"))
    per_bot = per_bot.join(peaks, on=_BOT, how="left").with_columns(
        pl.col("peak_per_minute").fill_null(0),
        pl.col(s.REQUESTS).sum().over(s.HOST).alias("host_bot_requests"),
    )
    others = (
        per_bot.select(_BOT)
        .join(per_bot.select(s.HOST, pl.col(s.BOT_NAME).alias("other"), "peak_per_minute"), on=s.HOST)
        .filter(pl.col("other") != pl.col(s.BOT_NAME))
        .group_by(_BOT)
        .agg(pl.col("peak_per_minute").median().alias("median_other_peak_per_minute"))
    )
    return per_bot.join(others, on=_BOT, how="left").with_columns(
        (pl.col(s.REQUESTS) / pl.col("host_bot_requests")).alias("share"),
        (
            pl.col("peak_per_minute")
            / pl.col("median_other_peak_per_minute").clip(lower_bound=1.0)
        ).alias("peak_ratio"),
    )


def _routes(
    agents: pl.DataFrame, sites: pl.DataFrame, settings: Settings
) -> tuple[pl.DataFrame, pl.DataFrame]:
    """Per host+bot: its fewest routes holding `aggressive_bot_route_share` of its requests
    (at most `aggressive_bot_max_routes`), their share, and its top patterns on them; and its
    requests by pattern on them (`_on_routes`). Where a route is a folder the whole site
    lives under (`site_folders`), routes one level in instead, where they hold that share
    (`/cgit/*/tree/`: the rule keeps the bot off the trap, not off the site). One level in
    is the second folder (`/en/asl/`), or the third under any second (`/cgit/*/tree/`)
    where that takes fewer routes (a bot on every repository's views)."""
    routed = agents.with_columns(route_of(pl.col(s.PATTERN)).alias("route"))
    normal = _chosen(routed, settings)
    under = routed.join(sites.with_columns(pl.lit(True).alias("_site")), on=[s.HOST, "route"], how="left")

    def site_wide(chosen: pl.DataFrame) -> pl.DataFrame:  # the bots with a site folder among their routes
        return chosen.explode("routes").join(sites, left_on=[s.HOST, "routes"], right_on=[s.HOST, "route"],
                                             how="semi").select(_BOT).unique()

    def deeper(any_second: bool) -> pl.DataFrame:  # the bots' routes one level in, where they do
        deep = pl.coalesce(deep_route_of(pl.col(s.PATTERN), any_second), "route")
        chosen = _chosen(under.with_columns(pl.when(pl.col("_site")).then(deep).otherwise("route").alias("route")),
                         settings)
        return chosen.join(site_wide(chosen), on=_BOT, how="anti").filter(
            pl.col("route_share") >= settings.aggressive_bot_route_share
        ).with_columns(pl.col("routes").list.len().alias("_n"), pl.lit(any_second).alias("_star"))

    better = (
        pl.concat([deeper(False), deeper(True)])
        .join(site_wide(normal), on=_BOT, how="semi")
        .sort("_n", "_star")
        .unique(_BOT, keep="first", maintain_order=True)
        .drop("_n", "_star")
    )
    per_route = pl.concat([normal.join(better.select(_BOT), on=_BOT, how="anti"), better])
    on_routes = _on_routes(agents, per_route)
    top_patterns = (
        on_routes
        .sort(s.REQUESTS, s.PATTERN, descending=[True, False])
        .group_by(_BOT, maintain_order=True)
        .agg(
            pl.col(s.PATTERN).first(),
            pl.col(s.PATTERN).head(f.MAX_EXAMPLES).alias("patterns"),
        )
    )
    return per_route.join(top_patterns, on=_BOT).drop("total"), on_routes


def _on_routes(agents: pl.DataFrame, routes: pl.DataFrame) -> pl.DataFrame:
    """Per host+bot of `routes` (its list of them), its requests (REQUESTS) by pattern, of
    the patterns under them (`in_routes`): what its finding names and shows. Not its most
    fetched patterns anywhere: a bot on a relative-link loop fetches each of its thousands of
    patterns once or twice, and its most fetched pattern was an article of the site's, off
    the route its rule takes."""
    fetched = agents.group_by(*_BOT, s.PATTERN).agg(pl.col(s.REQUESTS).sum())
    return pl.concat([
        fetched.filter(pl.col(s.HOST) == host, pl.col(s.BOT_NAME) == name,
                       in_routes(pl.col(s.PATTERN), list(routed)))
        for host, name, routed in routes.select(*_BOT, "routes").iter_rows()
    ] or [fetched.clear()])


def _chosen(routed: pl.DataFrame, settings: Settings) -> pl.DataFrame:
    """Per host+bot, from its requests by `route`: its fewest routes holding
    `aggressive_bot_route_share` of them (at most `aggressive_bot_max_routes`)."""
    return (
        routed.group_by(*_BOT, "route")
        .agg(pl.col(s.REQUESTS).sum())
        .sort(s.REQUESTS, "route", descending=[True, False])
        .with_columns(
            (pl.col(s.REQUESTS).cum_sum().over(_BOT) - pl.col(s.REQUESTS)).alias("before"),
            pl.col(s.REQUESTS).sum().over(_BOT).alias("total"),
        )
        # keep routes until the share is reached (a route is kept if the ones before fall short)
        .filter(pl.col("before") < settings.aggressive_bot_route_share * pl.col("total"))
        .group_by(_BOT, maintain_order=True)
        .agg(
            pl.col("route").head(settings.aggressive_bot_max_routes).alias("routes"),
            pl.col(s.REQUESTS).head(settings.aggressive_bot_max_routes).sum().alias("route_requests"),
            pl.col("total").first(),
        )
        .with_columns((pl.col("route_requests") / pl.col("total")).alias("route_share"))
    )


def _examples(traffic: Traffic, agents: pl.DataFrame) -> pl.DataFrame:
    """Up to 5 sampled URLs from each flagged bot's most fetched patterns (`agents`: its
    requests by pattern, those on its routes)."""
    fetched = (
        agents.group_by(*_BOT, s.PATTERN)
        .agg(pl.col(s.REQUESTS).sum().alias("bot_pattern_requests"))
    )
    urls = traffic.urls.filter(pl.col(s.BOT_REQUESTS) > 0).group_by(s.HOST, s.PATTERN, s.URL).agg(
        pl.col(s.BOT_REQUESTS).sum()
    )
    return (
        fetched.join(urls, on=[s.HOST, s.PATTERN])
        .sort(
            ["bot_pattern_requests", s.BOT_REQUESTS, s.URL],
            descending=[True, True, False],
        )
        .group_by(_BOT, maintain_order=True)
        .agg(pl.col(s.URL).unique(maintain_order=True).head(f.MAX_EXAMPLES).alias(s.EXAMPLES))
    )

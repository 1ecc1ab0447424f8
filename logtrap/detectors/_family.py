"""Pattern families: a code browser's views of every file at every commit, judged together.

A code browser (cgit, gitweb, GitLab, Gitea) shows every file at every commit —
`/cgit/REPO/tree/FILE?id=SHA`, `/group/project/-/blame/SHA/FILE` — an unbounded space that
AI crawlers walk to the end. File names stay literal in patterns (a repository has a few
dozen, too few to merge into `{name}`), so such a crawl splits into one pattern per
repository, view and file, none of which takes much of the budget. A *family* is the
patterns of a host alike in all but their literal path segments below the first level, and
how many there are: `/cgit/{path}?id` holds `/cgit/libfoo.git/tree/README?id` and
`/cgit/bar.git/blame/src/main.c?id`, not `/cgit/libfoo.git/commit/?id` (a listing's trailing
slash is kept) nor `/cgit/libfoo.git/tree/README` (no commit asked for).

A code host whose first segment is an owner (Gitea `/OWNER/REPO/src/commit/SHA/FILE`, GitHub
`/OWNER/REPO/blob/SHA/FILE`, SourceHut `/~OWNER/REPO/tree/SHA/item/FILE`, GitLab
`/GROUP/PROJECT/-/tree/SHA/FILE`) splits that way into a family per owner, none of which
takes half the budget. Where a pattern's own family is not wasteful, it is judged in its
family across the first level (`wide_of`: `/{path}/{hex}/{path}`) when the commit is a path
segment after an owner, a repository and a literal view, and that view (`commit`, `blob`,
`tree`) is one of two owners or more among the members: a code host's owners share their
views. A shop's `/CATEGORY/PRODUCT/reviews` carries no commit id; two sections of a site that
each pin pages to a build (`/builds/P/artifacts/SHA/log`, `/docs/P/pages/SHA/api.html`)
share no view, and stay apart.

budget_hog judges a family as one pattern (`detect` here). A member counts toward it only
where nearly all (`MIN_COMMIT_SHARE`) of its sampled URLs carry a commit id (`commit_like`) and its
own sampled URLs answered 200 repeat their answers: at least `budget_hog_urls_per_size` URLs
per distinct page (the same file at many commits is the same bytes; counted per member, so a
catalog's tab answering one empty page does not make its other tabs, a page apiece, waste).
The family is the members that count, and fires when there are at least `MIN_MEMBERS` of
them, none taking half the host's bot fetches alone, together taking more than half of them
(`budget_hog_share`, on a host with `budget_hog_min_bot_requests`), people making under
`budget_hog_max_human_share` of their requests, and at least `MIN_URLS_PER_FETCH` distinct
URLs per bot request (each fetched about once). Each of those is required: a repository
browser people use, a docs site's literal pages, a registry's hashed downloads (64 hex
digits) stay out.

Its robots.txt rule (`robots_rule`) is chosen by `robots.choose` over the members grouped by
one path level kept literal, at most `MAX_RULE_LINES` lines: the deepest level above the file
names whose lines block no content URL (the view: `Disallow: /cgit/*/tree/*?id=`, one line
per view). Never the whole family in one line (`/cgit/*?id=`): it would block the sibling
family (`/cgit/R/commit/?id=SHA`) wherever the log shows none of its pages. A `*` still spans
an empty segment: the view's line blocks that view's listing at a commit (`/cgit/R/tree/?id=`).
A diff view's pages (`/cgit/R/diff/FILE?id=SHA`) are pages apiece, not the family's waste, but
the same crawl: each is a cut of its commit's page (`/cgit/R/commit/?id=SHA`), which stays
open, so the rule takes the view too (`diff_views`) where people do not read it and its line
blocks no content URL. A view of pages apiece of any other kind stays open.

A `*` spans segments, so a line may reach pages no content list holds, which only bots
fetched: `robots.host_rules` checks the rule against the host's pages of patterns no finding
names, all but the family's own and those at a commit (`to_spare`: the crawl's, the view's
listing at a commit among them), and chooses again with those it reaches as content, or
withholds it.

Where the commit is a path segment (`_path_rule`), a robots.txt line can stop only before it:
a line per view that names the kind of ref (`REF_KIND`: Gitea's `Disallow: /*/*/src/commit/`,
beside `src/branch/`); where that line blocks a content URL (a file at the branch head in a
folder `src/commit/`), a line per owner and repository (`Disallow: /alice/lib/src/commit/`,
at most `MAX_REPOSITORY_LINES`), which no other path starts with. A view that takes a branch's name as well (GitLab's `/-/tree/SHA/` and
`/-/tree/main/`) gets none: RFC 9309 has `*` and `$`, no class of hex digits, and a `*` in the
commit's place blocks the branch's pages people read. The finding then carries server rules
(`server_targets`), where a regex can say a commit id (`server_rules.COMMIT`: 7 to 12 or 40 hex
digits, letters and digits mixed, as `commit_like`): its crawlers, on those views at a commit
only.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

import polars as pl

from logtrap import findings as f
from logtrap import schema as s
from logtrap.detectors import _shape
from logtrap.settings import Settings
from logtrap.traffic import Traffic

PATH = "{path}"  # the literal segments a family's members differ in, however many
FAMILY = "family"
_KEYS = [s.HOST, s.PATTERN]
_GAP = "\x00"  # a literal segment, before runs of them become one PATH
_WIDE, _OWNER, _VIEW = "_wide", "_owner", "_view"  # a code route's (`wide_of`, `_code_route`)
# Member patterns a family needs: fewer are one pattern's business (judgement)
MIN_MEMBERS = 3
# Share of a family's sampled URLs carrying a commit-like value (judgement: nearly all; a
# view asked for without one, the branch's head, is a page people read)
MIN_COMMIT_SHARE = 0.9
# A family's sampled URLs per bot request: each fetched about once, new commits every time,
# not a few known pages crawled again and again (judgement)
MIN_URLS_PER_FETCH = 0.5
# Lines one family rule may take, one per view (judgement: cgit has about ten views)
MAX_RULE_LINES = 10
# Lines a view naming the commit may take, one per owner and repository, where its line across
# them (`/*/*/src/commit/`) blocks a content URL (judgement: a small forge's repositories; more,
# and the lines are a list of the repositories the log happened to show, which the next crawl
# passes by)
MAX_REPOSITORY_LINES = 40
# The view before a commit segment that names the kind of ref, so the route takes commits
# only: Gitea and Forgejo's `src/commit/`, `blame/commit/`, `raw/commit/` beside their
# `src/branch/` and `src/tag/` (not GitLab's `-/commits/`, which lists a branch's history too)
REF_KIND = "commit"
# A code browser's views of the change a commit made (cgit's `diff`, `rawdiff`): cuts of the
# commit's own page (`diff_views`)
DIFF_VIEWS = ("diff", "rawdiff")
# Share of a family's bot requests a bot makes to get a server rule (judgement: the crawlers
# that make the crawl, not one that passed by)
CRAWLER_SHARE = 0.05
# A commit id: git's short form, 7 to 12 hex digits (its default abbreviation grows from 7 to
# 12 with the repository), or a whole SHA-1, 40; a whole parameter value or path segment,
# letters and digits mixed (`commit_like`). Not the lengths other ids take: 24 (a MongoDB
# ObjectId: a catalog's products), 32 (an MD5, a UUID without its dashes), 64 (a SHA-256
# names a file's bytes: a registry's downloads).
_COMMIT = r"[=/;]([0-9A-Fa-f]{40}|[0-9A-Fa-f]{7,12})(?:[&/;]|$)"
# A code route (`wide_of`): an owner, one or more names (the repository, a GitLab group's
# subgroups), a literal view, the commit's placeholder, the rest of the path. A name may be a
# placeholder a repository's name takes (`my-cool-project` is `{slug}`), never an id's
_NAME = r"(?:[^/{}]+|\{(?:name|slug|n)\})"
_CODE_ROUTE = (
    rf"^/(?P<owner>{_NAME})(?:/{_NAME})+/(?P<view>[^/{{}}]+)/(?P<commit>\{{(?:hex|token)\}})"
    r"(?P<rest>(?:/.*)?)$"
)


def family_of(pattern: pl.Expr) -> pl.Expr:
    """A pattern's family: literal path segments below the first level as `{path}`, runs of
    them as one; null where the pattern has none.

    >>> pats = pl.DataFrame({"pattern": ["/cgit/r.git/tree/src/a.c?id", "/cgit/r.git/commit/?id",
    ...                                  "/g/p/-/blame/{hex}/README", "/about", "/a/{n}"]})
    >>> pats.select(family_of(pl.col("pattern"))).to_series().to_list()
    ['/cgit/{path}?id', '/cgit/{path}/?id', '/g/{path}/{hex}/{path}', None, None]
    """
    path = _shape.path_of(pattern)
    head = path.str.extract(r"^(/[^/]*)", 1)
    runs = _gapped(path.str.slice(head.str.len_chars()))
    # null where the runs hold no PATH: they are taken once (a `when` on them, then them,
    # made them twice, Polars sharing no subexpression there: 2.3 s of 700,000 patterns)
    return pl.concat_str(head, runs.str.extract(rf"(?s)^(.*{re.escape(PATH)}.*)$", 1), _query(pattern))


def wide_of(pattern: pl.Expr) -> pl.Expr:
    """A pattern's family across the first level, for a code host whose first segment is an
    owner: null unless the commit's place (`{hex}`, `{token}`: the first) is a path segment
    after an owner, a repository and a view, the view literal, the others names (literal,
    `{name}`, `{slug}`, `{n}`); all of them one `{path}`, literal runs after the commit too.

    `/alice/tools/src/commit/{hex}/README.md` (Gitea), `/~bob/r/tree/{hex}/item/x.c`
    (SourceHut) and `/g/p/-/blame/{hex}/x` (GitLab) are `/{path}/{hex}/{path}`; a shop's
    `/shoes/{hex}/reviews` has no repository and view before the id, and no wide family.

    >>> pats = pl.DataFrame({"pattern": ["/alice/tools/src/commit/{hex}/README.md",
    ...     "/~bob/r/log/{hex}", "/g/p/-/tree/{hex}/docs/?ref", "/shoes/{hex}/reviews",
    ...     "/a/{hex}/b/{hex}/c", "/cgit/r/tree/README?id"]})
    >>> pats.select(wide_of(pl.col("pattern"))).to_series().to_list()
    ['/{path}/{hex}/{path}', '/{path}/{hex}', '/{path}/{hex}/{path}/?ref', None, None, None]
    """
    parts = _code_route(pattern)
    wide = pl.concat_str(pl.lit(f"/{PATH}/"), parts.struct.field("commit"),
                         _gapped(parts.struct.field("rest")))  # fmt: skip
    return wide + _query(pattern)


def _code_route(pattern: pl.Expr) -> pl.Expr:
    """A struct of a code route's pieces (`wide_of`), null fields where the pattern is none:
    `owner` (the first segment), `view` (the literal segment before the commit), `commit`
    (its placeholder), `rest` (the path after it)."""
    return _shape.path_of(pattern).str.extract_groups(_CODE_ROUTE)


def _gapped(rest: pl.Expr) -> pl.Expr:
    """A path's literal segments as `{path}`, runs of them as one, a trailing slash kept."""
    # each segment between its own pair of slashes, so a rule matches it whole (patterns.py)
    doubled = pl.concat_str(rest.str.replace_all("/", "//", literal=True), pl.lit("/"))
    gaps = (
        doubled.str.replace_all(r"/[^/{}]+/", f"/{_GAP}/")
        .str.replace_all("//", "/", literal=True)
        .str.strip_suffix("/")
    )
    runs = gaps.str.replace_all(f"{_GAP}(?:/{_GAP})*", PATH, literal=False)
    # a trailing slash the doubling dropped comes back: a listing is not a file (`runs` taken
    # once, as in `family_of`)
    slash = pl.when(rest.str.ends_with("/")).then(pl.lit("/")).otherwise(pl.lit(""))
    return pl.concat_str(runs.str.strip_suffix("/"), slash)


def _query(pattern: pl.Expr) -> pl.Expr:
    """"?" and a pattern's parameter names, "" without."""
    query = pattern.str.splitn("?", 2).struct.field("field_1")
    return pl.when(query.is_not_null()).then("?" + query).otherwise(pl.lit(""))


def commit_like(url: pl.Expr) -> pl.Expr:
    """True for a URL carrying a commit id: a whole parameter value or path segment of 7 to
    12 or of 40 hex digits, with at least one letter (a-f) and one digit among them.

    >>> urls = pl.DataFrame({"url": ["/t/README?id=3daaf6aebd79447c780884e13fcba5580b5e3dd4",
    ...     "/-/blame/5fec6e2/x", "/p?id=1234567", "/p/" + "ab12" * 16 + "/x.tgz", "/deadbeef",
    ...     "/products/65f1c0a2b3d4e5f60718293a/specs"]})
    >>> urls.select(commit_like(pl.col("url"))).to_series().to_list()
    [True, True, False, False, False, False]
    """
    ids = url.str.extract_all(_COMMIT)
    mixed = pl.element().str.contains("[0-9]") & pl.element().str.contains("[A-Fa-f]")
    return ids.list.eval(mixed).list.any().fill_null(False)


def members(traffic: Traffic, settings: Settings, host: str, family: str) -> list[str]:
    """The patterns of a host's family that count in it (`_members`: commit ids, answers
    repeated), sorted: what its rule may block (a member whose URLs are pages apiece is not
    the family's, and its pages stay open)."""
    counted = _members(traffic, settings).filter(pl.col(s.HOST) == host, pl.col(FAMILY) == family)
    return sorted(counted[s.PATTERN].to_list())


def to_spare(
    pages: pl.DataFrame, traffic: Traffic, settings: Settings, host: str, families: Sequence[str]
) -> pl.DataFrame:
    """The rows of `pages` (a host's pages of patterns no finding names: URL, PATTERN) that
    its families' robots.txt lines must not reach (`robots.host_rules` checks them as a
    calendar's): not of a pattern the rules take by design (their members, their diff
    views), and with no commit id. A page at a commit is the crawl's, every view at every
    commit: the view's listing at one (`/cgit/R/tree/?id=SHA`, Gitea's
    `/alice/lib/src/commit/SHA`), which its line takes by design, a page apiece; a page at a
    branch head or a tag (`/alice/lib/src/branch/main/src/commit/mod.rs`, `/cgit/R/tree/?id=v1.0`)
    is one people read and search engines index, which a `*` across segments may reach."""
    if not families or pages.height == 0:
        return pages
    counted = _members(traffic, settings)
    own = set() if counted.height == 0 else set(
        counted.filter(pl.col(s.HOST) == host, pl.col(FAMILY).is_in(list(families)))[s.PATTERN])
    for family in families:
        own.update(diff_views(traffic, settings, host, family)[s.PATTERN])
    return pages.filter(~pl.col(s.PATTERN).is_in(sorted(own)), ~commit_like(pl.col(s.URL)))


def is_family(pattern: str | None) -> bool:
    """True for a finding's pattern that names a family rather than a pattern of the log."""
    return bool(pattern) and PATH in pattern  # type: ignore[operator]


def detect(traffic: Traffic, settings: Settings) -> pl.DataFrame:
    """Families (rows keyed by HOST and PATTERN = the family) that budget_hog calls wasteful:
    the family's totals and evidence, in the columns budget_hog's findings carry."""
    patterns = _members(traffic, settings)
    families = _judged(patterns, settings)
    if families.height == 0:
        return pl.DataFrame()
    member_rows = patterns.join(families.select(s.HOST, FAMILY), on=[s.HOST, FAMILY], how="semi")
    return (
        families.with_columns(
            (pl.col(s.BOT_REQUESTS) / pl.col(_shape.HOST_BOT_REQUESTS)).alias(s.BOT_SHARE),
            (pl.col(s.HUMAN_REQUESTS) / pl.col(s.REQUESTS)).alias("human_share"),
            # each member at or above budget_hog_urls_per_size: so are they together
            (pl.col("sampled_ok_urls") / pl.col("distinct_ok_sizes").clip(lower_bound=1))
            .alias("urls_per_size"),
        )
        .join(_examples(traffic, member_rows), on=[s.HOST, FAMILY], how="left")
        .rename({FAMILY: s.PATTERN})
        .sort(_KEYS)
    )


def _judged(patterns: pl.DataFrame, settings: Settings) -> pl.DataFrame:
    """The families (HOST, FAMILY and totals) of member rows that budget_hog calls wasteful."""
    if patterns.height == 0:
        return pl.DataFrame(schema={s.HOST: pl.String, FAMILY: pl.String})
    # a member that takes half the budget alone is budget_hog's own (judged as a pattern)
    alone = pl.col(s.BOT_REQUESTS) > settings.budget_hog_share * pl.col(_shape.HOST_BOT_REQUESTS)
    return (
        patterns.group_by(s.HOST, FAMILY)
        .agg(
            pl.len().alias("patterns"),
            pl.col(s.REQUESTS, s.BOT_REQUESTS, s.HUMAN_REQUESTS, s.UNIQUE_URLS).sum(),
            pl.col("sampled_ok_urls", "distinct_ok_sizes", "shell_urls").sum(),
            pl.col(_shape.HOST_BOT_REQUESTS).first(),
            alone.any().alias("_alone"),
        )
        .filter(
            (pl.col("patterns") >= MIN_MEMBERS)
            & ~pl.col("_alone")
            & (pl.col(_shape.HOST_BOT_REQUESTS) >= settings.budget_hog_min_bot_requests)
            & (pl.col(s.BOT_REQUESTS) > settings.budget_hog_share * pl.col(_shape.HOST_BOT_REQUESTS))
            & (pl.col(s.HUMAN_REQUESTS) < settings.budget_hog_max_human_share * pl.col(s.REQUESTS))
            & (pl.col(s.UNIQUE_URLS) >= MIN_URLS_PER_FETCH * pl.col(s.BOT_REQUESTS))
        )
        .drop("_alone")
    )


def _committed(traffic: Traffic, settings: Settings) -> pl.DataFrame:
    """The pattern rows (`_shape.pattern_totals`, FAMILY and the code route's columns,
    answers) of families taking half the budget whose URLs carry commit ids."""
    totals = _shape.pattern_totals(traffic)
    if totals.height == 0:
        return totals.with_columns(pl.lit(None, pl.String).alias(FAMILY))
    route = _code_route(pl.col(s.PATTERN))
    patterns = totals.with_columns(
        family_of(pl.col(s.PATTERN)).alias(FAMILY),
        wide_of(pl.col(s.PATTERN)).alias(_WIDE),
        route.struct.field("owner").alias(_OWNER),
        route.struct.field("view").alias(_VIEW),
    ).drop_nulls(FAMILY)
    # members only leave a family below: one under half the budget with all of them is none,
    # and its URLs need not be read (most patterns of a site have a literal segment)
    half = settings.budget_hog_share * pl.col(_shape.HOST_BOT_REQUESTS)
    share = pl.col(s.BOT_REQUESTS).sum().over(s.HOST, FAMILY)
    wide_share = pl.col(s.BOT_REQUESTS).sum().over(s.HOST, _WIDE)
    patterns = patterns.filter((share > half) | (pl.col(_WIDE).is_not_null() & (wide_share > half)))
    urls = traffic.urls.join(patterns.select(_KEYS), on=_KEYS, how="semi")
    committed = urls.group_by(_KEYS).agg(
        commit_like(pl.col(s.URL)).mean().alias("commit_share"),
    )
    patterns = patterns.join(committed, on=_KEYS, how="inner").filter(
        pl.col("commit_share") >= MIN_COMMIT_SHARE
    )
    return patterns.join(_answers(traffic, patterns, settings), on=_KEYS, how="inner")


def _members(traffic: Traffic, settings: Settings) -> pl.DataFrame:
    """The pattern rows (`_shape.pattern_totals`, FAMILY, answers) that count in their family:
    its URLs carry commit ids, and repeat their answers. FAMILY is the pattern's family below
    the first level (`family_of`), or, where that one is not wasteful, its family across the
    first level (`wide_of`) if its view is one of two owners or more (`_spanning`)."""
    patterns = _committed(traffic, settings)
    if patterns.height == 0:
        return patterns
    # each member repeats its own answers (the same file at many commits is the same bytes):
    # pooled, one member answering one page (a product's empty reviews tab) carried the rest
    # (its specs, a page apiece); a member whose URLs are pages apiece is not the family's
    patterns = patterns.filter(pl.col("urls_per_size") >= settings.budget_hog_urls_per_size)
    return _spanning(patterns, settings).drop(_WIDE, _OWNER, _VIEW)


def diff_views(traffic: Traffic, settings: Settings, host: str, family: str) -> pl.DataFrame:
    """The patterns (PATTERN, "human_share") of a family's diff views at a commit that are not
    its members, their URLs pages apiece: cgit's `/cgit/R/diff/FILE?id=SHA`, the change a
    commit made to a file. Each is a cut of the commit's own page (`/cgit/R/commit/?id=SHA`
    shows the whole diff, and stays open), so its rule takes no page only it holds; their
    bot fetches are the same crawl, every commit walked, though not waste by their answers."""
    rows = _committed(traffic, settings)
    if rows.height == 0:
        return pl.DataFrame(schema={s.PATTERN: pl.String, "human_share": pl.Float64})
    views = "|".join(DIFF_VIEWS)
    return (
        rows.filter(
            pl.col(s.HOST) == host, pl.col(FAMILY) == family,
            pl.col("urls_per_size") < settings.budget_hog_urls_per_size,
            _shape.path_of(pl.col(s.PATTERN)).str.contains(f"/(?:{views})/"),
        )
        .select(s.PATTERN, (pl.col(s.HUMAN_REQUESTS) / pl.col(s.REQUESTS)).alias("human_share"))
        .sort(s.PATTERN)
    )


def _spanning(patterns: pl.DataFrame, settings: Settings) -> pl.DataFrame:
    """Member rows with FAMILY their wide family (`wide_of`) where their own family is not
    wasteful (`_judged`) and their view (the literal segment before the commit: `commit`,
    `tree`, `blob`) is in that wide family under two owners or more: a code host's owners
    show the same views; two sections of a site that each pin pages to a build's commit
    (`/builds/P/artifacts/SHA/`, `/docs/P/pages/SHA/`) do not, and stay apart."""
    fired = _judged(patterns, settings).select(s.HOST, FAMILY)
    spanning = (
        patterns.join(fired, on=[s.HOST, FAMILY], how="anti")
        .filter(pl.col(_WIDE).is_not_null())
        .filter(pl.col(_OWNER).n_unique().over(s.HOST, _WIDE, _VIEW) >= 2)
        .select(*_KEYS, pl.col(_WIDE).alias("_spans"))
    )
    return (
        patterns.join(spanning, on=_KEYS, how="left")
        .with_columns(pl.coalesce("_spans", FAMILY).alias(FAMILY))
        .drop("_spans")
    )


def _answers(traffic: Traffic, members: pl.DataFrame, settings: Settings) -> pl.DataFrame:
    """Per member pattern: sampled URLs answered 200 with a size, their distinct pages, how
    many URLs per page, and URLs answered with the shell's size."""
    shell = _shape.shell_sizes(traffic, settings)
    urls = _shape.per_url(traffic.urls, shell).join(members.select(_KEYS), on=_KEYS, how="semi")
    sized = _shape.sized_ok()
    return (
        _shape.with_answers(urls, settings)
        .group_by(_KEYS)
        .agg(
            sized.sum().cast(pl.Int64).alias("sampled_ok_urls"),
            pl.col(_shape.ANSWER).filter(sized).n_unique().cast(pl.Int64).alias("distinct_ok_sizes"),
            pl.col(_shape.SHELL).sum().cast(pl.Int64).alias("shell_urls"),
        )
        .with_columns(
            (pl.col("sampled_ok_urls") / pl.col("distinct_ok_sizes").clip(lower_bound=1))
            .alias("urls_per_size")
        )
    )


def _examples(traffic: Traffic, member_rows: pl.DataFrame) -> pl.DataFrame:
    """Per family: up to 5 sampled URLs, each from another member where there are as many
    (the member patterns bots fetched most first), and the members fetched most."""
    top = member_rows.sort([s.BOT_REQUESTS, s.PATTERN], descending=[True, False])
    firsts = (
        traffic.urls.join(top.select(*_KEYS, FAMILY), on=_KEYS)
        .sort([s.BOT_REQUESTS, s.URL], descending=[True, False])
        .group_by(_KEYS, maintain_order=True)
        .agg(pl.col(s.URL).first(), pl.col(FAMILY).first())
    )
    order = top.select(_KEYS).with_row_index("_rank")
    return (
        firsts.join(order, on=_KEYS)
        .sort("_rank")
        .group_by(s.HOST, FAMILY, maintain_order=True)
        .agg(
            pl.col(s.URL).head(f.MAX_EXAMPLES).alias(s.EXAMPLES),
            pl.col(s.PATTERN).head(f.MAX_EXAMPLES).alias("top_patterns"),
        )
    )


# -- robots.txt --------------------------------------------------------------------------------


def robots_rule(
    finding: f.Finding, traffic: Traffic, content: list[tuple[str, str]],
    known: Mapping[str, str | None], settings: Settings,
) -> tuple[tuple[str, ...], str, str, list[str]]:
    """(lines, status, reason, trap URLs) for a family's finding: `robots.choose` per group
    of members, grouped by the one path level kept literal (`_literal_levels`): the view
    first, the levels below it, the repository last; the first whose rules block no content
    URL wins, else the one whose rules are narrowed least. No level, no rule: the whole
    family's one line (`/cgit/*?id=`) would take the sibling family's pages too, which the log
    may not show."""
    # robots imports the detectors (calendar's dates): imported here, once both are loaded
    from logtrap import robots

    host, family = finding.host, finding.pattern or ""
    names = members(traffic, settings, host, family)
    rows = traffic.urls.filter(pl.col(s.HOST) == host, pl.col(s.PATTERN).is_in(names))
    people = set(rows.filter(pl.col(s.REQUESTS) > pl.col(s.BOT_REQUESTS))[s.URL].to_list())
    mine = set(rows[s.URL].to_list())
    # the log's content on the family's own patterns stands only where people read it
    # (log_content, labelled "log", took a crawler's 2xx on a pattern no finding names: these
    # patterns have one); a sitemap's URL and any other content stays content
    content = [(u, why) for u, why in content if why != "log" or u not in mine or u in people]
    content += [(u, robots.OWN) for u in sorted(people)]
    taken = {u for u, _ in content}
    by_pattern: dict[str, list[str]] = {}
    for pattern, url in rows.sort(s.URL_HASH).select(s.PATTERN, s.URL).iter_rows():
        if robots.url_path(url) not in taken:
            by_pattern.setdefault(pattern, []).append(url)
    trap = [u for urls in by_pattern.values() for u in urls]
    if in_path(family):  # the commit a path segment: `*` in its place reaches far wider
        return _path_rule(finding, by_pattern, content, known, settings)
    best: tuple[int, tuple[str, ...], str, str, int] | None = None
    first_refusal = None
    # the view first (`tree`, `blame`), then the deepest level: the view outlasts the folders
    # and file names the next crawl adds (`/cgit/*/src/*?id=` misses its `tests/`, and takes
    # `log/src/` at a commit), and a repository's `/cgit/R/*?id=`, like the whole family's
    # `/cgit/*?id=`, takes the sibling family's pages the rule never saw (`/cgit/R/commit/?id=`)
    for level in _level_order(list(by_pattern)):
        groups: dict[str, list[str]] = {}
        for pattern, urls in by_pattern.items():
            groups.setdefault(_kept(pattern, level), []).extend(urls)
        if len(groups) > MAX_RULE_LINES:
            continue
        chosen = [robots.choose(finding.kind, g, urls, content, settings, known)
                  for g, urls in sorted(groups.items())]
        refused = next((why for lines, status, why in chosen if status == "withheld"), None)
        if refused is not None:
            first_refusal = first_refusal or refused
            continue
        lines = tuple(dict.fromkeys(line for ls, _, _ in chosen for line in ls))
        narrowed = sum(status == "narrowed" for _, status, _ in chosen)
        if best is None or narrowed < best[0]:
            status = "narrowed" if narrowed else "emitted"
            reason = (f"blocks all {len(trap):,} distinct logged URLs of the family's "
                      f"{len(by_pattern):,} patterns and none of {len(content):,} content URLs")
            reason += "".join(f"; narrowed: {_narrowing(ls, why)}"
                              for ls, how, why in chosen if how == "narrowed")
            best = (narrowed, lines, status, reason, level)
        if not narrowed:
            break
    if best is None:
        why = first_refusal or (
            "no logged URL of the family is left once content URLs are set aside" if not trap
            else f"no path level above the file names is literal in every member, or kept "
                 f"literal it takes more than {MAX_RULE_LINES} lines"
        )
        return (), "withheld", why, trap
    _, lines, status, reason, level = best
    more, note, diffs = _diff_rule(finding, traffic, content, known, settings, level)
    return (*lines, *more), status, reason + note, trap + diffs


def _narrowing(lines: Sequence[str], why: str) -> str:
    """What narrowed a group's line (`robots.choose`'s reason, first clause): the content URL
    it would block, and what keeps that open.

    >>> _narrowing(["Disallow: /a/*?id=", "Allow: /a/b?id=v1$"],
    ...            "Disallow: /a/*?id= would block content URL /a/b?id=v1 (sitemap); Allow lines keep it open; blocks all 2")
    'Disallow: /a/*?id= would block content URL /a/b?id=v1 (sitemap): Allow lines keep it open'
    """
    first = why.split("; ")[0]
    them = "them" if first.endswith(" more)") else "it"  # `choose` names the first of several
    kept = f"Allow lines keep {them} open" if any(ln.startswith("Allow") for ln in lines) else "a narrower line"
    return f"{first}: {kept}"


def _diff_rule(
    finding: f.Finding, traffic: Traffic, content: list[tuple[str, str]],
    known: Mapping[str, str | None], settings: Settings, level: int,
) -> tuple[tuple[str, ...], str, list[str]]:
    """(lines, a note for the reason, URLs blocked) for the family's diff views (`diff_views`)
    at the level its rule kept: a line per view (`/cgit/*/diff/*?id=`) where people make under
    `budget_hog_max_human_share` of its requests and it blocks no content URL, else the view
    stays open and the note says why."""
    from logtrap import robots

    views = diff_views(traffic, settings, finding.host, finding.pattern or "")
    # a diff view at the level the rule kept, the views' (`/cgit/R/diff/F`), not a repository
    # or folder of that name (`/cgit/diff/tree/F`)
    at_level = [p for p in views[s.PATTERN] if _segment(p, level) in DIFF_VIEWS]
    views = views.filter(pl.col(s.PATTERN).is_in(at_level))
    if views.height == 0:
        return (), "", []
    read = views.filter(pl.col("human_share") >= settings.budget_hog_max_human_share)
    if read.height:
        pattern, share = read.row(0)
        return (), f"; the diff view stays open: people make {share:.0%} of the requests of {pattern}", []
    names = views[s.PATTERN].to_list()
    rows = traffic.urls.filter(pl.col(s.HOST) == finding.host, pl.col(s.PATTERN).is_in(names))
    groups: dict[str, list[str]] = {}
    for pattern, url in rows.sort(s.URL_HASH).select(s.PATTERN, s.URL).iter_rows():
        groups.setdefault(_kept(pattern, level), []).append(url)
    lines: list[str] = []
    for group, urls in sorted(groups.items()):
        got, status, why = robots.choose(finding.kind, group, urls, content, settings, known)
        if status != "emitted":
            return (), f"; the diff view stays open: {why}", []
        lines += got
    urls = [u for group in groups.values() for u in group]
    note = (f"; and {len(urls):,} URLs of its diff views, pages apiece but each a cut of its "
            f"commit's page, which stays open")
    return tuple(dict.fromkeys(lines)), note, urls


def in_path(family: str) -> bool:
    """True for a family whose commit is a path segment (`/g/{path}/{hex}/{path}`), not a
    parameter (`/cgit/{path}?id`)."""
    return bool(re.search(r"/\{(?:hex|token)\}(?:/|$)", family.partition("?")[0]))


def commit_route(pattern: str, wide: bool) -> tuple[str, str, bool] | None:
    """(the route up to the commit, its view, whether more path follows the commit) of a
    member whose commit is a path segment; the owner (in a `wide` family) and the repository
    as `{path}`, the view and what is between them kept: None where it has no commit segment.

    >>> commit_route("/alice/tools/src/commit/{hex}/README.md", True)
    ('/{path}/{path}/src/commit/', 'commit', True)
    >>> commit_route("/group/proj/-/commits/{hex}", False)
    ('/group/{path}/-/commits/', 'commits', False)
    """
    segs = pattern.partition("?")[0].split("/")
    at = next((i for i, seg in enumerate(segs) if seg in ("{hex}", "{token}")), None)
    if at is None or at < 2:
        return None
    names = [PATH if (i == 1 and wide) or i == 2 else seg for i, seg in enumerate(segs[1:at], start=1)]
    return "/" + "/".join(names) + "/", segs[at - 1], len(segs) > at + 1


def server_targets(
    traffic: Traffic, settings: Settings, host: str, family: str
) -> tuple[list[str], list[str]]:
    """(routes, bots) for server rules against a family's crawl where no robots.txt line can
    tell its commits from branch names (`_path_rule`): the routes of its views at a commit
    (`/*/*/-/tree/{commit}/`: `server_rules` spells `{commit}` as a commit id), and
    the bots that made at least `CRAWLER_SHARE` of its bot requests, most first. Empty for a
    family whose every view names the commit (`src/commit/`: its robots.txt lines do)."""
    if not in_path(family):
        return [], []
    names = members(traffic, settings, host, family)
    wide = family.startswith(f"/{PATH}/")
    routes = []
    for pattern in names:
        route = commit_route(pattern, wide)
        if route is None or route[1] == REF_KIND:
            continue
        routes.append(_server_route(route[0], route[2]))
    if not routes:
        return [], []
    bots = (
        traffic.agents.filter(pl.col(s.HOST) == host, pl.col(s.PATTERN).is_in(names))
        .group_by(s.BOT_NAME).agg(pl.col(s.REQUESTS).sum())
        .filter(pl.col(s.REQUESTS) >= CRAWLER_SHARE * pl.col(s.REQUESTS).sum())
        .sort([s.REQUESTS, s.BOT_NAME], descending=[True, False])
    )
    return sorted(set(routes)), bots[s.BOT_NAME].drop_nulls().to_list()


def _server_route(prefix: str, deeper: bool) -> str:
    """A server rule's route (`server_rules.route_regex`) for a commit route (`commit_route`):
    `*` for any one segment, `{commit}` for a commit id, a trailing `/` where the path goes
    on (`/*/*/-/tree/{commit}/`), none where the commit ends it (`/*/*/-/commits/{commit}`)."""
    return re.sub(r"\{[a-z]+\}", "*", prefix) + "{commit}" + ("/" if deeper else "")


def _path_rule(
    finding: f.Finding, by_pattern: Mapping[str, list[str]], content: list[tuple[str, str]],
    known: Mapping[str, str | None], settings: Settings,
) -> tuple[tuple[str, ...], str, str, list[str]]:
    """`robots_rule` for a family whose commit is a path segment: a line per view that names
    the kind of ref before the commit (Gitea's `/OWNER/REPO/src/commit/SHA/`, beside
    `src/branch/` and `src/tag/`: `Disallow: /*/*/src/commit/`), each checked by
    `robots.choose`. A view whose line blocks a content URL gets a line per owner and
    repository instead (`_repository_routes`): robots.txt's `*` spans segments, so
    `/*/*/src/commit/` takes a file at the branch head in a folder `src/commit/`
    (`/alice/lib/src/branch/main/src/commit/mod.rs`), `/alice/lib/src/commit/` never does.
    A view that takes a branch's name as well as a commit (`/-/tree/SHA/` and
    `/-/tree/main/`, GitHub's `/blob/`, SourceHut's `/tree/`) gets none: robots.txt
    (RFC 9309) has `*` and `$` only, and `*` in the commit's place takes the branch's pages
    people read; the reason says so, and `server_targets` gives the server rules that can."""
    from logtrap import robots

    family = finding.pattern or ""
    wide = family.startswith(f"/{PATH}/")
    lines: list[str] = []
    blocked: list[str] = []
    notes: list[str] = []  # views narrowed to their repositories, and why
    refusals: list[str] = []
    narrowed = False
    named: dict[str, list[str]] = {}  # route -> URLs, views naming the commit
    branchy: dict[str, list[str]] = {}  # server route -> URLs, views taking a branch's name too
    for pattern, urls in sorted(by_pattern.items()):
        route = commit_route(pattern, wide)
        if route is None:
            continue
        prefix, view, deeper = route
        if view == REF_KIND:
            named.setdefault(prefix, []).extend(urls)
        else:
            branchy.setdefault(_server_route(prefix, deeper), []).extend(urls)
    if len(named) > MAX_RULE_LINES:
        refusals.append(f"the views that name the commit would take more than {MAX_RULE_LINES} lines")
        named = {}
    for route, urls in sorted(named.items()):
        got, status, why = robots.choose(finding.kind, route, urls, content, settings, known)
        if status == "emitted":
            lines += got
            blocked += urls
            continue
        # its `*` reaches a content URL (a withheld or a narrowed choice: Allow lines would
        # keep open only the logged pages of a folder named like the view, not its next file)
        stopped = why.split("; ")[0]
        repos = _repository_routes(route, urls)
        if len(repos) > MAX_REPOSITORY_LINES:
            refusals.append(f"{stopped}, and a line per owner and repository would take "
                            f"{len(repos):,} lines, more than {MAX_REPOSITORY_LINES}")
            continue
        taken = 0
        for repo, repo_urls in sorted(repos.items()):
            got, status, why = robots.choose(finding.kind, repo, repo_urls, content, settings, known)
            if status == "withheld":
                refusals.append(why)
                continue
            lines += got
            blocked += repo_urls
            taken += 1
        if taken:
            narrowed = True
            notes.append(f"{stopped}: {taken:,} lines instead, one per owner and repository (a "
                         f"line without * takes only the paths that start with it)")
    if branchy:
        shown = ", ".join(sorted(branchy)[:MAX_RULE_LINES])
        why_open = (
            f"the commit id is a path segment after a view that takes a branch's name as well "
            f"({shown}: `main` as well as a commit): robots.txt (RFC 9309) has only `*` and `$`, "
            f"no way to say a commit id, so a `*` in the commit's place would block the pages "
            f"at the branch head people read, and no robots.txt line is drafted for them; a "
            f"server rule (.htaccess, nginx) can refuse a crawler there by a regex of a commit "
            f"id in the commit's place (7 to 12 or 40 hex digits, letters and digits mixed), "
            f"or link these views at the branch head, or mark commit-pinned links "
            f"rel=\"nofollow\""
        )
        refusals.insert(0, why_open)
    if not lines:
        why = refusals[0] if refusals else "no member names its commit by a path segment"
        return (), "withheld", why, [u for urls in by_pattern.values() for u in urls]
    lines = list(dict.fromkeys(lines))
    ok = (f"blocks all {len(blocked):,} distinct logged URLs of the family's views that name "
          f"the commit, and none of {len(content):,} content URLs")
    if not refusals and not narrowed:
        return tuple(lines), "emitted", ok, blocked
    # a line per repository left open reads as one list: the first few, then a count
    shown_refusals = [f"left open: {r}" for r in refusals[:_SHOWN_REFUSALS]]
    if len(refusals) > _SHOWN_REFUSALS:
        shown_refusals.append(f"and {len(refusals) - _SHOWN_REFUSALS:,} more views or "
                              "repositories left open for the same reason")
    reason = "; ".join([ok, *(f"narrowed: {n}" for n in notes), *shown_refusals])
    return tuple(lines), "narrowed", reason, blocked


# Lines left open named in a family rule's reason, the rest counted (judgement: a Gitea host
# with thirty repositories people read permalinks in named them all, a screen of text)
_SHOWN_REFUSALS = 3


def _repository_routes(route: str, urls: Sequence[str]) -> dict[str, list[str]]:
    """A view's URLs grouped by their path up to the commit, the owner and repository
    literal: `/alice/lib/src/commit/` for `/alice/lib/src/commit/SHA/README.md` (`route` the
    view's, `/{path}/{path}/src/commit/`, as many segments as the URLs' up to the commit).
    Braces escaped: in a route, `{x}` is a placeholder.

    >>> _repository_routes("/{path}/{path}/src/commit/",
    ...     ["/a/my-lib/src/commit/5fec6e2/x", "/a/b{c}/src/commit/5fec6e2/x"])
    {'/a/my-lib/src/commit/': ['/a/my-lib/src/commit/5fec6e2/x'], '/a/b%7Bc%7D/src/commit/': ['/a/b{c}/src/commit/5fec6e2/x']}
    """
    at = route.count("/")  # the commit's place among the path's segments
    out: dict[str, list[str]] = {}
    for url in urls:
        prefix = "/".join(url.partition("?")[0].split("/")[:at]) + "/"
        out.setdefault(prefix.replace("{", "%7B").replace("}", "%7D"), []).append(url)
    return out


def _level_order(patterns: Sequence[str]) -> list[int]:
    """The literal levels (`_literal_levels`) a family's rule is tried by: first those where a
    value sits under two values of the level above (the view: `tree` under every repository,
    however deep the repositories are: `/git/cgit.cgi/R/tree/`, `/cgit/team/R/tree/`),
    shallowest first; then the others, deepest first (a repository's name is under one
    parent: its lines would take the repository's every page at a commit).

    >>> _level_order(["/cgit/a/tree/src/x.c?id", "/cgit/b/tree/src/y.c?id", "/cgit/a/blame/src/x.c?id"])
    [3, 4, 2]
    >>> _level_order(["/git/cgit.cgi/a/tree/x/y.c?id", "/git/cgit.cgi/b/tree/x/y.c?id",
    ...               "/git/cgit.cgi/a/plain/x/y.c?id"])
    [4, 5, 3, 2]
    """
    levels = _literal_levels(patterns)
    paths = [p.partition("?")[0].split("/") for p in patterns]
    parents: dict[tuple[int, str], set[str]] = {}
    for path in paths:
        for level in levels:
            parents.setdefault((level, path[level]), set()).add(path[level - 1])
    shared = [n for n in levels if any(len(v) > 1 for (m, _), v in parents.items() if m == n)]
    return [*shared, *(n for n in reversed(levels) if n not in shared)]


def _literal_levels(patterns: Sequence[str]) -> list[int]:
    """Path levels below the first that are a literal segment in every pattern given, and
    not the last segment of any (a file's name, which the next crawl adds to).

    >>> _literal_levels(["/cgit/r/tree/README?id", "/cgit/r/blame/src/a.c?id"])
    [2, 3]
    """
    paths = [p.partition("?")[0].split("/") for p in patterns]
    depth = min((len(p) for p in paths), default=0)
    return [i for i in range(2, depth - 1)
            if all(p[i] and "{" not in p[i] for p in paths)]


def _segment(pattern: str, level: int) -> str:
    """A pattern's path segment at a level ("" past its end): `/cgit/r/diff/x?id`, 3 -> `diff`."""
    segs = pattern.partition("?")[0].split("/")
    return segs[level] if level < len(segs) else ""


def _kept(pattern: str, level: int) -> str:
    """The pattern with its literal segments below the first level as one `{path}` per run,
    but the one at `level`: `/cgit/r/tree/src/a.c?id`, 3 -> `/cgit/{path}/tree/{path}?id`."""
    path, sep, query = pattern.partition("?")
    segs = path.split("/")
    out: list[str] = segs[:2]
    for i, seg in enumerate(segs[2:], start=2):
        gap = i != level and seg and "{" not in seg
        if not (gap and out[-1] == PATH):
            out.append(PATH if gap else seg)
    return "/".join(out) + sep + query

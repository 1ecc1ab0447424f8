"""Findings -> robots.txt, .htaccess and nginx text, each rule verified (the stage entry point).

`suggest` strings the pieces together: `sitemaps` loads the known content URLs, `robots`
derives and verifies one robots.txt rule per URL-shape finding (`robots_match` matching as
RFC 9309 says), `robots_file` merges them into the current file and reads what it says, `server_rules` writes and checks the rules for bots that robots.txt does not
stop (aggressive bots, bots that ignore the current robots.txt, fake search bots).
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping
from dataclasses import dataclass, field, replace

import polars as pl

from logtrap import findings as f
from logtrap import robots, robots_file, server_rules
from logtrap import schema as s
from logtrap.analysis import Analysis
from logtrap.detectors import _family
from logtrap.detectors import _param as param
from logtrap.detectors.aggressive_bot import deep_route_of, in_routes, route_of, site_folders
from logtrap.errors import InputError, LogtrapError
from logtrap.settings import Settings
from logtrap.sitemaps import load_sitemap_urls
from logtrap.traffic import Traffic, bot_addresses, crowd_bots, spread_evenly

__all__ = ["RULE_SCHEMA", "Suggestions", "load_sitemap_urls", "suggest", "unified_diff"]

# -- the rules frame (one row per rule) --------------------------------------------------------
TARGET = "target"  # robots | litespeed | apache | nginx
GROUP = "group"  # robots.txt user-agent group, or the bot a server rule is about
RULE = "rule"  # the rule's text as it appears in the file
STATUS = "status"  # emitted | narrowed | withheld
SAVED_BOT_REQUESTS = "saved_bot_requests"  # robots: bot requests on blocked URLs; server: matched
BLOCKED_EXAMPLES = "blocked_examples"
OTHER_REQUESTS = "other_requests"  # server rules: requests of other bots the regexes match
RULE_STATUSES = ("emitted", "narrowed", "withheld")

RULE_SCHEMA: dict[str, pl.DataType] = {
    TARGET: pl.String(),
    s.HOST: pl.String(),
    s.KIND: pl.String(),
    s.PATTERN: pl.String(),
    GROUP: pl.String(),
    RULE: pl.String(),
    STATUS: pl.String(),
    s.REASON: pl.String(),
    SAVED_BOT_REQUESTS: pl.Int64(),
    OTHER_REQUESTS: pl.Int64(),
    BLOCKED_EXAMPLES: pl.List(pl.String()),
}


@dataclass(frozen=True)
class Suggestions:
    """What to change: the files' text, one row per rule, and notes for the report."""

    robots_txt: str
    htaccess: str
    nginx: str
    rules: pl.DataFrame
    notes: list[str] = field(default_factory=list)
    robots_by_host: Mapping[str, str] = field(default_factory=dict)
    nginx_http: str = ""  # the part of `nginx` that goes in http {}
    nginx_server: str = ""  # the part of `nginx` that goes in server {}
    nginx_conf: str = ""  # the file for inside http {}, the server part in a comment


def suggest(
    findings: Analysis | pl.DataFrame,
    traffic: Traffic | None = None,
    settings: Settings | None = None,
) -> Suggestions:
    """robots.txt lines and server rules for these findings, each checked against the traffic.

    Give an `Analysis` (what `analyze` returns) and its findings, traffic and settings are
    used: the rules are then checked against the same sitemaps and merged into the same
    robots.txt as the analysis was given. Or give the findings, the traffic and the settings
    apart (a `settings` given beside an Analysis replaces its own).
    `settings.sitemaps` are the known content URLs, `settings.robots` the site's current
    robots.txt (merged, never overwritten).

    >>> from logtrap.traffic import tally
    >>> sug = suggest(f.empty_findings(), tally([]))
    >>> sug.rules.height, sug.robots_txt
    (0, '')
    """
    if isinstance(findings, Analysis):
        if traffic is not None:
            raise LogtrapError(
                "suggest takes an Analysis alone, or findings and their traffic",
                hint="suggest(result) or suggest(result.findings, result.traffic, settings)",
            )
        findings, traffic, settings = findings.findings, findings.traffic, settings or findings.settings
    if not isinstance(findings, pl.DataFrame) or not isinstance(traffic, Traffic):
        raise LogtrapError(
            "suggest needs the findings and traffic of an analysis",
            hint="result = logtrap.analyze(...); logtrap.suggest(result)",
        )
    settings = Settings.of(settings)
    sitemap = load_sitemap_urls(settings.sitemaps)
    current = read_robots(settings)
    closed = [] if current is None else robots_file.star_bound(current)
    notes: list[str] = []
    all_robots: list[robots.RobotsRule] = []
    by_host: dict[str, str] = {}
    server: list[server_rules.ServerRule] = []
    aggressive: dict[str, list[f.Finding]] = {}
    for finding in f.to_records(findings.filter(pl.col(s.KIND) == "aggressive_bot")):
        aggressive.setdefault(finding.host, []).append(finding)
    ignoring = pl.DataFrame() if current is None else robots_file.ignoring_bots(traffic, None, current)
    sites = site_folders(traffic) if ignoring.height else pl.DataFrame(schema={s.HOST: pl.String, "route": pl.String})
    found = set(findings[s.HOST].unique().to_list())
    hosts = sorted(set(traffic.hosts) | found)
    totals = traffic.patterns.group_by(s.HOST).agg(pl.col(s.BOT_REQUESTS).sum())
    bot_requests = dict(totals.iter_rows())  # once, not per host (9,000 hosts of a scanner log)
    for host in hosts:
        if host in found:
            rules, content, saved = robots.host_rules(findings, traffic, host, sitemap, settings, closed)
        else:  # nothing to rule on (nginx's $host logs every Host header scanners send)
            rules, content, saved = [], 0, 0
        for finding in aggressive.get(host, []):
            name = str(finding.evidence.get(s.BOT_NAME) or "")
            routes = [str(r) for r in finding.evidence.get("routes") or []]
            on_routes = finding.wasted_requests  # the bot's requests on its routes
            rules.append(robots.bot_group_rule(host, name, routes, finding.kind, on_routes))
        if current is not None:
            notes += _current_notes(traffic, host, current, sitemap, server, ignoring, sites)
        notes += _together(host, saved, bot_requests)
        if rules or current is not None:
            by_host[host] = robots_file.render(host, rules, current, content)
        all_robots += rules
    # a parameter causing the traps of many patterns, ruled pattern by pattern: why
    notes += param.notes(findings, traffic, settings)
    server = _server_rules(findings, traffic, server, settings)
    if any(r.status != "withheld" and r.lines for r in all_robots):
        notes.append(robots.PITFALL)
    rows = [_robots_row(r) for r in all_robots]
    rows += [_server_row(target, r) for r in server for target in ("litespeed", "apache", "nginx")]
    frame = pl.DataFrame(rows, schema=RULE_SCHEMA) if rows else s.empty(RULE_SCHEMA)
    return Suggestions(
        robots_txt=_combined(by_host),
        htaccess=server_rules.htaccess(server) if server else "",
        nginx=server_rules.nginx(server) if server else "",
        rules=frame,
        notes=notes,
        robots_by_host=by_host,
        nginx_http=server_rules.nginx_http(server) if server else "",
        nginx_server=server_rules.nginx_server() if server else "",
        nginx_conf=server_rules.nginx_conf(server) if server else "",
    )


def unified_diff(old: str, new: str, name: str = "robots.txt") -> str:
    """The change from `old` to `new` as a unified diff (empty when they are equal).

    >>> print(unified_diff("a\\n", "a\\nb\\n"), end="")
    --- robots.txt (current)
    +++ robots.txt (suggested)
    @@ -1 +1,2 @@
     a
    +b
    """
    lines = difflib.unified_diff(
        old.splitlines(keepends=True),
        new.splitlines(keepends=True),
        fromfile=f"{name} (current)",
        tofile=f"{name} (suggested)",
    )
    return "".join(lines)


_CONTROL = bytes(b for b in range(32) if b not in b"\t\n\r\f")


def read_robots(settings: Settings) -> str | None:
    """The site's robots.txt as text (a UTF-8 byte order mark dropped, as Google does); a file
    of binary data (a NUL, or more than 1% control bytes) is refused: it would be merged into
    the suggested file and printed to the terminal as it is."""
    if settings.robots is None:
        return None
    try:
        data = settings.robots.read_bytes()
    except OSError as exc:
        raise InputError(f"cannot read robots.txt {settings.robots}: {exc.strerror}") from None
    data = data.removeprefix(b"\xef\xbb\xbf")
    controls = len(data) - len(data.translate(None, _CONTROL))
    if b"\x00" in data or controls > len(data) / 100:
        raise InputError(f"{settings.robots} is not a robots.txt: it holds binary data",
                         hint="pass the site's robots.txt, a text file (--robots)")
    text = data.decode("utf-8", errors="replace")
    # A log or a page given by mistake would be merged, every line of it, into the file
    # suggested for publishing.
    if not robots_file.is_robots_txt(text):
        raise InputError(
            f"{settings.robots} is not a robots.txt: no line of it is a User-agent, Allow, "
            "Disallow or Sitemap line",
            hint="pass the site's robots.txt (--robots)",
        )
    return text


def _together(host: str, saved: int, bot_requests: Mapping[str, int]) -> list[str]:
    """What a host's robots.txt lines save together: rules that share a line each count its
    requests, so their "saves" overlap.

    >>> _together("-", 0, {"-": 10}), _together("a.example", 5, {"a.example": 10})[0][36:]
    ([], 'for a.example save 5 of 10 bot requests (50%), each request counted once.')
    """
    if not saved:
        return []
    bots = bot_requests[host]
    where = "" if host == "-" else f" for {host}"
    return [f"Together, the `User-agent: *` lines{where} save {saved:,} of {bots:,} bot "
            f"requests ({saved / bots:.0%}), each request counted once."]


def _current_notes(
    traffic: Traffic, host: str, current: str, sitemap: list[str], server: list,
    ignoring: pl.DataFrame, sites: pl.DataFrame,
) -> list[str]:
    """Notes on the current robots.txt; bots that ignore it (`ignoring`: `ignoring_bots` of
    every host) get server rules (appended), on routes (`_routes`; `sites`: `site_folders`)."""
    notes = robots_file.blocking_sitemap(current, robots.sitemap_paths(sitemap, host, traffic.hosts))
    mine = ignoring.filter(pl.col(s.HOST) == host) if ignoring.height else ignoring
    for (name,), group in mine.group_by(s.BOT_NAME, maintain_order=True):
        requests = int(group[s.REQUESTS].sum())
        patterns = group[s.PATTERN].to_list()
        notes.append(
            f"{robots.comment(str(name))} fetched {requests:,} URLs the current robots.txt "
            f"disallows for it ({robots.comment(', '.join(patterns[:3]))}): if that robots.txt "
            "was served while the logs were written, it ignores robots.txt and only a server "
            "rule stops it"
        )
        routes = _routes(patterns, sites.filter(pl.col(s.HOST) == host)["route"].to_list())
        rule = server_rules.rule_for(host, "ignores_robots", str(name), routes)
        # A route is a whole first folder: where the bot's requests the file allows share it
        # (a loop's URLs under /blog/, beside the posts), a deny rule would block those too
        on_routes = traffic.agents.filter(
            pl.col(s.HOST) == host, pl.col(s.BOT_NAME) == name, in_routes(pl.col(s.PATTERN), routes),
        )[s.REQUESTS].sum()
        if on_routes > requests:
            rule = replace(rule, status="withheld", reason=(
                f"its routes ({', '.join(routes)}) also hold {on_routes - requests:,} of "
                f"{name}'s requests the current robots.txt allows, which a deny rule there "
                "would block too: deny the disallowed URLs by hand"
            ))
        server.append(rule)
    return notes


def _routes(patterns: list[str], sites: list[str]) -> list[str]:
    """The routes of the patterns (`route_of`); under a folder that is the whole site
    (`site_folders`: `/cgit/`), one level in where every pattern has one: the second folder
    (`/en/asl/`), or the third under any second where that takes fewer (`/cgit/*/snapshot/`).

    >>> _routes(["/cgit/a.git/snapshot/{slug}", "/cgit/b.git/snapshot/x.zip"], ["/cgit/"])
    ['/cgit/*/snapshot/']
    >>> _routes(["/en/asl/{n}", "/en/asl/{n}/x/y", "/about"], ["/en/"])
    ['/en/asl/', '/about']
    """
    frame = pl.DataFrame({s.PATTERN: patterns}, schema={s.PATTERN: pl.String}).select(
        route_of(pl.col(s.PATTERN)).alias("route"),
        deep_route_of(pl.col(s.PATTERN), any_second=False).alias("second"),
        deep_route_of(pl.col(s.PATTERN)).alias("star"))
    inside = pl.col("route").is_in(sites)
    deeper = [frame.with_columns(pl.when(inside).then(c).otherwise("route").alias("route"))
              for c in ("second", "star") if frame.filter(inside)[c].null_count() == 0]
    if frame.filter(inside).height and deeper:
        frame = min(deeper, key=lambda d: d["route"].n_unique())  # the first of the fewest
    return frame["route"].unique(maintain_order=True).to_list()


def _server_rules(
    findings: pl.DataFrame, traffic: Traffic, extra: list, settings: Settings
) -> list:
    rules = list(extra)
    wanted = findings.filter(pl.col(s.KIND).is_in(["aggressive_bot", "fake_bot"]))
    for finding in f.to_records(wanted):
        name = str(finding.evidence.get(s.BOT_NAME) or "")
        if finding.kind == "aggressive_bot":
            routes = [str(r) for r in finding.evidence.get("routes") or []]
            rules.append(server_rules.rule_for(finding.host, finding.kind, name, routes))
        else:
            addresses = [str(a) for a in finding.evidence.get("addresses") or []]
            rules.append(server_rules.rule_for(finding.host, finding.kind, name, addresses=addresses))
    # a code host's views at a commit that robots.txt cannot tell from a branch's (GitLab's
    # /-/tree/SHA/ and /-/tree/main/): its crawlers, there only
    for finding in f.to_records(findings.filter(pl.col(s.KIND) == "budget_hog")):
        if _family.is_family(finding.pattern):
            routes, names = _family.server_targets(traffic, settings, finding.host, finding.pattern or "")
            rules += [server_rules.rule_for(finding.host, finding.kind, name, routes) for name in names]
    spread = _spread_agents(traffic, settings)
    return [server_rules.check(_unless_many(r, spread), traffic) for r in rules]


def _spread_agents(traffic: Traffic, settings: Settings) -> dict[tuple[str, str], str]:
    """(host, bot) -> why a rule against the bot's user agent is withheld: it is a crowd
    (`traffic.crowd_bots`), or its requests spread evenly over `crowd_review_addresses` or
    more addresses, which may be a small app's users (one scraper among a few scripts of its
    library sends most of them, and gets its rule)."""
    crowds = set(crowd_bots(traffic, settings)[s.BOT_NAME].to_list())
    why = {}
    for host, name, addresses, even in bot_addresses(traffic).select(
        s.HOST, s.BOT_NAME, "addresses", spread_evenly(settings)
    ).iter_rows():
        if name in crowds:
            why[host, name] = (f"{name}'s requests spread over about {addresses:,} addresses: many "
                               "people's app, which a deny rule would lock out")
        elif even and addresses >= settings.crowd_review_addresses:
            why[host, name] = (f"{name} came from {addresses:,} addresses: if they are an app's "
                               "users, a deny rule locks them all out; see them with logtrap "
                               "bots, and add the rule by hand if they are one scraper's")
    return why


def _unless_many(
    rule: server_rules.ServerRule, spread: dict[tuple[str, str], str]
) -> server_rules.ServerRule:
    """The rule, withheld where its user agent came from many addresses (`_spread_agents`);
    a fake search engine's rule names its addresses, never its user agent alone."""
    why = spread.get((rule.host, rule.bot_name))
    if why is None or rule.kind == "fake_bot" or rule.status == "withheld":
        return rule
    return replace(rule, status="withheld", reason=why)


def _robots_row(rule: robots.RobotsRule) -> dict:
    return {
        TARGET: "robots",
        s.HOST: rule.host,
        s.KIND: rule.kind,
        s.PATTERN: rule.pattern,
        GROUP: rule.group,
        RULE: rule.text,
        STATUS: rule.status,
        s.REASON: rule.reason,
        SAVED_BOT_REQUESTS: rule.saved_bot_requests,
        OTHER_REQUESTS: 0,
        BLOCKED_EXAMPLES: list(rule.blocked_examples),
    }


def _server_row(target: str, rule: server_rules.ServerRule) -> dict:
    text = {
        "litespeed": lambda: server_rules.litespeed([rule]),
        "apache": lambda: server_rules.apache([rule]),
        "nginx": lambda: server_rules.nginx_http([rule]),
    }[target]() if rule.status != "withheld" else ""
    body = [line for line in text.splitlines() if line and not line.startswith("#")]
    return {
        TARGET: target,
        s.HOST: rule.host,
        s.KIND: rule.kind,
        s.PATTERN: None,
        GROUP: rule.bot_name,
        RULE: "\n".join(body),
        STATUS: rule.status,
        s.REASON: rule.reason,
        SAVED_BOT_REQUESTS: rule.offending_requests,
        OTHER_REQUESTS: rule.other_requests,
        BLOCKED_EXAMPLES: list(rule.routes or rule.addresses),
    }


def _combined(by_host: Mapping[str, str]) -> str:
    """One text: the single host's file as is, or one section per host."""
    if len(by_host) <= 1:
        return next(iter(by_host.values()), "")
    parts = [f"# ==== host: {robots.comment(host)} ====\n{text}" for host, text in by_host.items()]
    return "\n".join(parts)

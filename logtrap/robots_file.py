"""An existing robots.txt: its groups, the merge of the suggested lines into it (every current
line kept, in order), and what it already says: bots that ignore it, sitemap URLs it blocks.

Matching follows RFC 9309 through Protego (robots_match); groups as RFC 9309 2.1 reads them.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace

import polars as pl
from protego import Protego

from logtrap import schema as s
from logtrap.bots import named_bot
from logtrap.robots import HAS_URL, RobotsRule, comment
from logtrap.robots_match import CHECK_AGENT, is_blocked, matcher
from logtrap.traffic import Traffic

# -- the file: new lines, or a merge that keeps every line of the current one ------------------


@dataclass
class _Group:
    agents: list[str] = field(default_factory=list)
    last: int = 0  # index of the group's last directive line (new lines go after it)
    rules: list[str] = field(default_factory=list)  # its Allow/Disallow lines, as written


_SITE_WIDE = ("sitemap", "host")


# Directive names as Protego (our matcher, as generous as Google's parser) reads them: a
# crawler obeys the file as they do, so the merge must see its groups and rules as they do
# (adversarial review 19: a `Dissallow: /` is one, a `Noindex /cart` line no directive)
_USER_AGENT = frozenset({"user-agent", "useragent", "user agent"})
_DISALLOWS = frozenset({"disallow", "dissallow", "dissalow", "disalow", "diasllow", "disallaw"})
_KNOWN = _USER_AGENT | _DISALLOWS | {"allow", "sitemap", "sitemaps", "site-map", "host", "crawl-delay",
                                    "crawl delay", "request-rate", "request rate", "visit-time", "visit time"}


def _directive(line: str) -> tuple[str, str] | None:
    """(name, value) of a robots.txt line as Protego reads it, or None where it reads none:
    `name: value`, an unknown name too when a space or nothing follows its colon; else a known
    name of one or two words and its value, without a colon (`User agent Nutch`). Names come
    canonical: `user-agent`, `disallow` (its misspellings too), `allow`, `sitemap`, `host`.

    >>> _directive("Dissallow: /x"), _directive("User agent Nutch"), _directive("Noindex /cart")
    (('disallow', '/x'), ('user-agent', 'Nutch'), None)
    """
    body = line.split("#", 1)[0].strip()
    if not body:
        return None
    parsed = None
    if ":" in body:
        name, raw = body.split(":", 1)
        name = name.strip().lower()
        if name in _KNOWN or not raw or raw[0].isspace():
            parsed = (name, raw.strip())
    if parsed is None or parsed[0] not in _KNOWN:
        words = body.split()
        for n in (1, 2):
            if " ".join(words[:n]).lower() in _KNOWN:
                parsed = (" ".join(words[:n]).lower(), " ".join(words[n:]))
                break
    if parsed is None:
        return None
    name, value = parsed
    name = ("user-agent" if name in _USER_AGENT else "disallow" if name in _DISALLOWS
            else "sitemap" if name in ("sitemaps", "site-map") else name.replace(" ", "-"))
    return name, value


_DIRECTIVES = frozenset({"user-agent", "allow", "disallow", "sitemap", "host", "crawl-delay"})


def is_robots_txt(text: str) -> bool:
    """Whether the text can be a robots.txt: some line of it is a directive, or it has nothing
    but comments and blank lines (a file that allows everything).

    >>> is_robots_txt("# open\\n"), is_robots_txt("Disallow: /x"), is_robots_txt("1.2.3.4 - - [")
    (True, True, False)
    """
    bodies = [line for line in text.splitlines() if line.split("#", 1)[0].strip()]
    parsed = [_directive(line) for line in bodies]
    return not bodies or any(p is not None and p[0] in _DIRECTIVES for p in parsed)


def _agent(token: str) -> str:
    """A user-agent line's token as matchers read it: lower case, without `*` but for `*`
    itself (`Mediapartners-Google*` is `mediapartners-google`).

    >>> _agent("Nutch*"), _agent("*")
    ('nutch', '*')
    """
    token = token.strip().lower()
    return token if token == "*" else token.replace("*", "")


def groups(text: str) -> list[_Group]:
    """The groups of a robots.txt (RFC 9309 2.1: user-agent lines, then their rules).

    >>> [(g.agents, g.rules) for g in groups("User-agent: a\\nUser-agent: *\\nDisallow: /x\\n")]
    [(['a', '*'], ['Disallow: /x'])]
    """
    out: list[_Group] = []
    previous = None
    for i, line in enumerate(text.splitlines()):
        parsed = _directive(line)
        if parsed is None or parsed[0] in _SITE_WIDE:
            continue
        name, value = parsed
        if name == "user-agent":
            if previous != "user-agent" or not out:
                out.append(_Group())
            out[-1].agents.append(_agent(value))
        elif out:
            if name in ("allow", "disallow") and value:
                out[-1].rules.append(f"{name.capitalize()}: {value}")
        if out:
            out[-1].last = i
        previous = name
    return out


_DISALLOW = "Disallow: "


def _covers(wide: str, narrow: str) -> bool:
    """Whether the robots.txt path pattern `wide` matches every path `narrow` matches: it
    matches `narrow`'s own text, where each `*` of `narrow` is a character that a `*` of
    `wide` can stand for (a sound test, not a complete one).

    >>> _covers("/c/*?*&", "/c/*?*&*&"), _covers("/c/*?*&*&", "/c/*?*&"), _covers("/a", "/a$")
    (True, False, True)
    """
    if wide.endswith("$") and not narrow.endswith("$"):
        return False
    body = "".join(".*" if c == "*" else re.escape(c) for c in wide.removesuffix("$"))
    tail = "" if wide.endswith("$") else ".*"
    return re.fullmatch(body + tail, narrow.removesuffix("$"), re.DOTALL) is not None


def _literal(path: str) -> str:
    """The text every path a robots.txt pattern matches starts with: up to its first `*`/`$`,
    and before its first `%` or non-ASCII character (`/käse/` and `/k%C3%A4se/` are one
    path to a matcher, which normalises both: cut there, they compare as `/k`).

    >>> _literal("/shop/*?*&"), _literal("/k%C3%A4se/brie"), _literal("/käse/brie")
    ('/shop/', '/k', '/k')
    """
    head = re.split(r"[*$]", path, maxsplit=1)[0]
    return re.split(r"[%\x80-\U0010ffff]", head, maxsplit=1)[0]


def _may_meet(a: str, b: str) -> bool:
    """Whether some path may match both robots.txt patterns: not when neither literal start is
    a start of the other (a sound test: `/account/login` and `/shop/*?*&` never meet).

    >>> _may_meet("/käse/brie?a", "/k%C3%A4se/*?*&"), _may_meet("/account/login", "/shop/*?*&")
    (True, False)
    """
    la, lb = _literal(a), _literal(b)
    return la.startswith(lb) or lb.startswith(la)


def _redundant(lines: Sequence[str], allows: Sequence[str] = ()) -> dict[str, str]:
    """The Disallow lines another of `lines` makes redundant -> a line written that covers
    each.

    Beside an Allow line (of `lines` or `allows`, the group's) the longest match decides, and
    a narrow Disallow can outweigh an Allow that a wide one does not (RFC 9309 2.2.2): a line
    some Allow may meet is never left out.

    >>> _redundant(["Disallow: /c/*?*&*&", "Disallow: /s?q=", "Disallow: /c/*?*&"])
    {'Disallow: /c/*?*&*&': 'Disallow: /c/*?*&'}
    >>> _redundant(["Disallow: /c/*?*&*&", "Disallow: /c/*?*&"], ["Allow: /c/a?x&y&z"])
    {}
    >>> _redundant(["Disallow: /c/*?*&*&", "Disallow: /c/*?*&"], ["Allow: /account/login"])
    {'Disallow: /c/*?*&*&': 'Disallow: /c/*?*&'}
    """
    unique = list(dict.fromkeys(lines))
    allowed = [_path(line) for line in [*allows, *unique] if line.startswith("Allow:")]
    kept: list[str] = []
    by: dict[str, str] = {}  # each line left out -> the line that covered it then
    for line in (line for line in unique if line.startswith(_DISALLOW)):
        path = _path(line)
        free = not any(_may_meet(a, path) for a in allowed)
        wider = next((k for k in kept if _covers(_path(k), path)), None) if free else None
        if wider is not None:
            by[line] = wider
            continue
        for k in [k for k in kept if _covers(path, _path(k))
                  and not any(_may_meet(a, _path(k)) for a in allowed)]:
            kept.remove(k)
            by[k] = line
        kept.append(line)
    for line in by:  # to the line that stays (covering is transitive)
        while by[line] in by:
            by[line] = by[by[line]]
    return by


def _path(line: str) -> str:
    """A rule line's path pattern: `Disallow: /a*` -> `/a*`."""
    return line.split(":", 1)[1].strip()


def _block(
    rules: Sequence[RobotsRule], current: Sequence[str] = ()
) -> list[str]:
    """Emitted rules with a comment each (a line already written, or one another line or a
    `current` line of the group covers, is not written, unless an Allow line of the group may
    meet it: `_redundant`); withheld ones as comments only. Past `_ALIKE` rules of a kind one
    line covers, the rest share one comment.

    >>> rule = RobotsRule("-", "facets", "/c?a", "*", ("Disallow: /c?*&",), "emitted", "")
    >>> print("\\n".join(_block([replace(rule, pattern=f"/c?{x}") for x in "abcde"])))
    # logtrap facets /c?a
    Disallow: /c?*&
    # logtrap facets /c?b (the lines above cover it)
    # logtrap facets /c?c (the lines above cover it)
    # logtrap facets: 2 more patterns (the lines above cover them)
    """
    emitted = [line for r in rules if r.status != "withheld" for line in r.lines]
    allows = [c for c in current if c.startswith("Allow:")]
    covered = _redundant(emitted, allows)
    allowed = [_path(a) for a in [*allows, *emitted] if a.startswith("Allow:")]
    # the file's own lines first: `Disallow: /search` covers `/search?q=`
    mine = [c for c in current if c.startswith(_DISALLOW)]
    for line in emitted:
        if line.startswith(_DISALLOW) and line not in covered:
            path = _path(line)
            if any(_may_meet(a, path) for a in allowed):
                continue
            wider = next((c for c in mine if _covers(_path(c), path)), None)
            if wider is not None:
                covered[line] = f"the current {wider}"
    out: list[str | None] = []
    # covered findings of a kind, by the line that covers them: past `_ALIKE`, one comment for
    # the rest (a shop's facet findings, one per category and set of filters: 718 comments
    # under 60 lines)
    alike: dict[tuple[str, str], list[int]] = {}  # (kind, the note, or the line written) -> indices
    for rule in rules:
        what = comment(f"{rule.kind} {rule.pattern or ''}".strip())
        if rule.status == "withheld":
            out.append(f"# logtrap withheld ({what}): {comment(rule.reason)}")
            continue
        new = [line for line in rule.lines if line not in out and line not in covered]
        wider = next((covered[line] for line in rule.lines if line in covered), None)
        note = " (the lines above cover it)" if wider is None else f" ({comment(wider)} covers it)"
        if not new and not rule.left_open:
            by = note if wider is not None else next((ln for ln in rule.lines if ln in out), "")
            alike.setdefault((rule.kind, by), []).append(len(out))
        # what a rule saves is what its new lines add: none where the file's lines cover it
        ours = any(not covered.get(line, "").startswith("the current ") for line in rule.lines)
        saved = (f": {rule.saved_bot_requests:,} bot requests"
                 if rule.saved_bot_requests and ours else "")
        if rule.left_open:  # the header's "every logged URL of its trap" is not so here
            saved += f" ({rule.left_open:,} of its wasted dates left open, among real ones or before its horizon: logtrap suggest says why)"
        if rule.kind == "pagination" and new:  # a line by the page number takes the pages a
            # list grows later (review 19: a shop's categories of one page, `?page=`)
            saved += f" ({_GROWS})"
        out += [f"# logtrap {what}{saved}{'' if new else note}", *new]
    for (kind, by), at in alike.items():
        if len(at) > _ALIKE:
            cover = by[:-3] + "them)" if by.startswith(" (") else " (the lines above cover them)"
            out[at[_ALIKE - 1]] = f"# logtrap {comment(kind)}: {len(at) - _ALIKE + 1:,} more patterns{cover}"
            for i in at[_ALIKE:]:
                out[i] = None
    return [line for line in out if line is not None]


# Covered findings of a kind whose comments are written one by one; the rest share one
_ALIKE = 3


_GROWS = ("these lines also block the pages its lists will have when they grow: renew them then, "
          "or better, answer 404 past the last page")


def _lines_again(
    lines: Sequence[str], current: Sequence[str], closed: Callable[[str], bool] = lambda _: False
) -> list[str]:
    """The `*` lines written again in another group (`current`: the lines they join), without
    those another of them covers, nor an Allow line of ours whose page is `closed` to the
    group (`_closed`): it would open a page the admin closed to that crawler (a sorted landing
    page allowed back among sort lines, copied into `User-agent: Nutch` / `Disallow: /`;
    adversarial review 19).

    >>> closed = lambda allowed: _closes(["Disallow: /"], allowed)
    >>> _lines_again(["Disallow: /*?s=", "Allow: /new?s=a$"], ["Disallow: /"], closed)
    ['Disallow: /*?s=']
    >>> _lines_again(["Disallow: /*?s=", "Allow: /new?s=a$"], ["Disallow: /cart"])
    ['Disallow: /*?s=', 'Allow: /new?s=a$']
    """
    covered = _redundant(lines, [c for c in current if c.startswith("Allow:")])
    return [line for line in dict.fromkeys(lines) if line not in covered and not (
        line.startswith("Allow:") and line not in current and closed(_path(line)))]


def _closes(rules: Sequence[str], allowed: str) -> bool:
    """Whether a group's own `rules` (all its groups', RFC 9309 merging a crawler's groups)
    block the page an Allow line opens: the page itself, matched with its Allow lines too,
    for an Allow line of one URL (`/c?s=a$`; a crawler's own `Disallow: /*.pdf$` meets every
    path by its start, and took a shop's landing pages from bingbot; adversarial review 19);
    else where a Disallow line's start may meet its start (a sound test).

    >>> _closes(["Disallow: /*.pdf$"], "/c?s=a$"), _closes(["Disallow: /"], "/c?s=a$")
    (False, True)
    >>> _closes(["Disallow: /", "Allow: /c"], "/c?s=a$")
    False
    """
    disallows = [c for c in rules if c.startswith(_DISALLOW) and _path(c)]
    if not disallows:
        return False
    page = allowed.removesuffix("$")
    if allowed.endswith("$") and "*" not in page:
        return is_blocked(matcher(rules), page, CHECK_AGENT)
    return any(_may_meet(page, _path(c)) for c in disallows)


def _unopening(rules: Sequence[RobotsRule], closed: Callable[[str], bool]) -> list[RobotsRule]:
    """The rules without the Allow lines whose page is `closed` to the group (`_closed`): a
    landing page allowed back among a sort's lines stays closed where the admin closed it
    (`Disallow: /collections/all` in the `*` group)."""
    return [replace(r, lines=tuple(ln for ln in r.lines
                                   if not (ln.startswith("Allow:") and closed(_path(ln)))))
            for r in rules]


def _rules_of(existing: Sequence[_Group], agents: Sequence[str]) -> list[str]:
    """The rule lines of every group naming one of these agents (`*` only for `*`)."""
    return [r for g in existing if set(g.agents) & set(agents) for r in g.rules]


def _closed(existing: Sequence[_Group], agents: Sequence[str]) -> Callable[[str], bool]:
    """For a group naming `agents`: whether an Allow line's page is closed to every one of
    them by the admin's lines (each crawler's groups together, RFC 9309 merging them). Where
    the group's crawlers disagree (`User-agent: *` beside a `Nutch` closed elsewhere), the
    line stays: blocking a page from every crawler is worse than opening it to one the admin
    banned (adversarial review 19)."""
    per_agent = [_rules_of(existing, [agent]) for agent in agents] or [[]]
    return lambda allowed: all(_closes(rules, allowed) for rules in per_agent)


# Crawlers Google documents as ignoring the `*` group (its ads, AdSense and APIs crawlers): a
# group the admin wrote for them gets no `*` rules again (adversarial review 19: sort lines
# copied into `User-agent: adsbot-google` blocked ad landing pages)
_IGNORE_STAR = frozenset({"adsbot-google", "adsbot-google-mobile", "adsbot-google-mobile-apps",
                          "mediapartners-google", "apis-google"})


def _ignores_star(agents: Sequence[str]) -> bool:
    """Whether a group names (as `groups` reads its tokens, `_agent`: `Mediapartners-Google*`
    is `mediapartners-google`) one of Google's crawlers that ignore `*`: the `*` rules written
    there would bind it, and a group shared with others is the admin's to split.

    >>> _ignores_star(["nutch", "adsbot-google"]), _ignores_star([_agent("Mediapartners-Google*")])
    (True, True)
    """
    return any(agent in _IGNORE_STAR for agent in agents)


def star_bound(current: str) -> list[list[str]]:
    """The rule lines each crawler the new `*` lines bind obeys in the current robots.txt
    (`render` writes them into the `*` group and again into every other group but those of
    Google's crawlers that ignore `*`): a page closed by all of them is closed already, and
    no new line takes it from anyone. With no `*` group, crawlers no group names obey
    nothing, and no page is closed.

    >>> star_bound("User-agent: *\\nDisallow: /a\\n\\nUser-agent: bingbot\\nDisallow: /b\\n")
    [['Disallow: /a'], ['Disallow: /b']]
    """
    existing = groups(current)
    agents = {"*"} | {a for g in existing if not _ignores_star(g.agents) for a in g.agents}
    return [_rules_of(existing, [agent]) for agent in sorted(agents)]


_AGAIN = "# logtrap: the * rules again (a crawler obeys only its most specific group)"


def render(
    host: str,
    rules: Sequence[RobotsRule],
    current: str | None,
    content_count: int,
) -> str:
    """The suggested robots.txt for one host: the new lines, or the current file with the new
    lines merged in (every current line kept, in order).

    The `*` lines go into the `User-agent: *` group and are repeated in every other group
    already in the file (a crawler obeys only its most specific group, RFC 9309 2.2.1); a
    crawler's own group gets its routes plus the `*` rules for the same reason. A crawler
    whose group names other crawlers too gets a group of its own: RFC 9309 combines its
    groups, and lines added to the shared one would bind the others. A group is
    only written with at least one rule line: a bare `User-agent` line would join the next
    group (RFC 9309 2.1).

    >>> rule = RobotsRule("-", "calendar", "/c?d", "*", ("Disallow: /c?d=",), "emitted", "")
    >>> print(render("-", [rule], "User-agent: *\\nDisallow: /tmp/\\n", 0), end="")
    User-agent: *
    Disallow: /tmp/
    # logtrap calendar /c?d
    Disallow: /c?d=
    """
    emitted = [r for r in rules if r.status != "withheld" and r.lines]
    withheld = [r for r in rules if r not in emitted]
    star = [r for r in emitted if r.group == "*"]
    star_lines = list(dict.fromkeys(line for r in star for line in r.lines))
    bots: dict[str, list[RobotsRule]] = {}
    for rule in emitted:
        if rule.group != "*":
            bots.setdefault(rule.group, []).append(rule)
    lines = current.splitlines() if current is not None else []
    existing = groups(current or "")
    inserts: dict[int, list[str]] = {}
    star_done = False
    shared: set[str] = set()  # crawlers named in a group with others: a group of their own
    for group in existing:
        here = inserts.setdefault(group.last, [])
        for token in [t for t in bots if t.lower() in group.agents]:
            if set(group.agents) == {token.lower()}:  # the crawler's own group: add there
                here += _block(bots.pop(token), group.rules)
            else:  # added there, the lines would bind the group's other crawlers too
                shared.add(token)
        closed = _closed(existing, group.agents)
        if "*" in group.agents and not star_done:
            star_done = True
            here += _block(_unopening(star, closed), group.rules)
        elif star_lines and not _ignores_star(group.agents):
            here += [_AGAIN, *_lines_again(star_lines, group.rules, closed)]
    out: list[str] = []
    title = "# robots.txt lines suggested by logtrap" + (
        "" if host == "-" else f" for host {comment(host)}"
    )
    if current is None and not emitted:  # withheld rules only: say so, not how rules were checked
        out += [title + ": none, every rule found was withheld (the reasons follow)."]
    elif current is None:
        out += [
            title,
            "# Each rule blocks every logged URL of its trap and none of the "
            f"{content_count:,} known content URLs",
            "# (the sitemap's, and pages the log shows people or a verified search engine",
            "# fetching outside the trapped patterns), nor a page people read on a trap",
            "# whose pages can be real (a calendar's, a list's); checked with an RFC 9309 matcher.",
            "# Pages neither names are not known: --sitemap adds them.",
            "# robots.txt does not remove indexed URLs: serve noindex first, then disallow.",
        ]
    for i, line in enumerate(lines):
        out += [line, *inserts.get(i, [])]
    if star and not star_done:
        out += ["", "User-agent: *", *_block(star)] if out else ["User-agent: *", *_block(star)]
    star_rules = [r for g in existing if "*" in g.agents for r in g.rules]
    for token, bot_rules in bots.items():
        out += ["", f"User-agent: {token}"]
        if token in shared:
            out += [f"# (and the lines of the group {comment(token)} shares above: RFC 9309 "
                    "combines a crawler's groups)"]
        out += _block(bot_rules)
        # the admin's `*` lines bound the crawler before only where no group named it: a
        # crawler of a shared group gets ours alone (RFC 9309 joins its new group to that one)
        copied = [] if token in shared else star_rules
        own = [*copied, *_rules_of(existing, [_agent(token)]), *(line for r in bot_rules for line in r.lines)]
        again = _lines_again([*copied, *star_lines], copied, lambda allowed: _closes(own, allowed))
        out += [_AGAIN, *again] if again else []
    if withheld:
        out += ["", *_block(withheld)]
    text = "\n".join(out)
    return (text if current is not None else text.rstrip("\n")) + "\n"


# -- the current file: who ignores it, and what it blocks that it should not -------------------


def ignoring_bots(traffic: Traffic, host: str | None, current: str) -> pl.DataFrame:
    """Bots that fetched patterns the current robots.txt disallows for them (every sampled URL
    of the pattern they fetched is disallowed): host, bot_name, pattern, requests; on one
    host, or on every host (None: once for them all, where a log of thousands of hosts took
    a pass over the tables per host). Only bots the log names (`bots.named_bot`): people do
    not read robots.txt, and a log without user agents cannot tell them from bots."""
    robots = Protego.parse(current)
    on_host = pl.lit(True) if host is None else pl.col(s.HOST) == host
    agents = (
        traffic.agents.filter(on_host, pl.col(s.PATTERN) != "/robots.txt", named_bot())
        .group_by(s.HOST, s.BOT_NAME, s.PATTERN)
        .agg(pl.col(s.REQUESTS).sum())
        .sort(s.HOST, s.BOT_NAME, s.PATTERN)
    )
    urls = traffic.urls.filter(on_host, pl.col(s.BOT_REQUESTS) > 0, HAS_URL)
    sample = {key: g[s.URL].to_list() for key, g in urls.group_by(s.HOST, s.PATTERN)}
    # Bots under the same group of the file (most fall under `*`) get the same answers, so a
    # pattern is checked once per group, not once per bot: a disallowed pattern means asking
    # about every sampled URL (1M lines: 0.9 s before). Protego names the group an agent
    # falls under only privately; without it, each bot is its own group.
    group_of = getattr(robots, "_get_matching_rule_set", None)
    done: dict[tuple[object, str, str], bool] = {}
    keep = []
    for row in agents.iter_rows(named=True):
        fetched = sample.get((row[s.HOST], row[s.PATTERN]), [])
        agent = row[s.BOT_NAME] or CHECK_AGENT
        key = (id(group_of(agent)) if group_of else agent, row[s.HOST], row[s.PATTERN])
        if key not in done:
            # the first allowed URL settles it: most patterns a bot fetches are not disallowed
            allowed = any(not is_blocked(robots, u, agent) for u in fetched)
            done[key] = bool(fetched) and not allowed
        keep.append(done[key])
    return agents.filter(pl.Series(keep, dtype=pl.Boolean))


def blocking_sitemap(current: str, sitemap: Sequence[str]) -> list[str]:
    """Notes on current rules that block sitemap URLs, per group (the longest blocking line)."""
    robots = Protego.parse(current)
    notes = []
    for group in groups(current):
        agent = next((a for a in group.agents if a != "*"), CHECK_AGENT)
        hit = [u for u in sitemap if is_blocked(robots, u, agent)]
        if not hit:
            continue
        per_line: dict[str, list[str]] = {}
        disallows = [r for r in group.rules if r.startswith("Disallow")]
        singles = {line: matcher([line]) for line in disallows}
        for url in hit:
            lines = [line for line, m in singles.items() if is_blocked(m, url, CHECK_AGENT)]
            line = max(lines, key=len) if lines else "(its rules)"
            per_line.setdefault(line, []).append(url)
        for line, urls in per_line.items():
            more = f" and {len(urls) - 1:,} more" if len(urls) > 1 else ""
            notes.append(
                f"current robots.txt `{comment(line)}` (User-agent: {comment(', '.join(group.agents))})"
                f" blocks sitemap URL {comment(urls[0])}{more}"
            )
    return notes

"""Server rules (LiteSpeed/Apache .htaccess, nginx) for bots robots.txt does not stop.

robots.txt is a request, not access control. Bots that hammer a few routes (aggressive_bot),
ignore the current robots.txt, spoof a search engine's user agent (fake_bot), or crawl a code
host's views at every commit where robots.txt cannot tell a commit from a branch's name
(a budget_hog family: `{commit}` in a route is a commit id, `COMMIT`) get a rule
scoped by user agent AND path -- or, for spoofed user agents, by the addresses that failed
verification -- never a whole-site ban by default.

User agents, paths and host names come from the log, so they are attacker-controlled: every
piece of them that reaches a config file is a regex literal escaped to `[A-Za-z0-9_./-]` plus
`\\xHH` escapes (no space, quote, `$`, `%`, `{`, `;`, `#` or newline survives), and comments
are printable ASCII only. Every rule is evaluated in Python (`re`, case-insensitive, ASCII
case folding like PCRE without UTF mode) against the traffic before it is emitted: it must
match the offending requests and no person or search engine.
"""

from __future__ import annotations

import re
import textwrap
from collections.abc import Sequence
from dataclasses import dataclass, replace
from urllib.parse import unquote_to_bytes

import polars as pl

from logtrap import schema as s
from logtrap.bots import EMPTY_NAME, NOT_LOGGED_NAME, SEARCH_ENGINES, UNKNOWN_NAME, bot_family_pattern
from logtrap.robots import comment
from logtrap.traffic import Traffic
from logtrap.verify import client_address

FLAGS = re.IGNORECASE | re.ASCII  # [NC] / ~*: PCRE folds ASCII letters only
ADDRESSES_PER_LINE = 20  # addresses per RewriteCond alternation, to keep lines short (judgement)

# What people and search engines send: a rule whose user-agent regex matches one is withheld.
BROWSER_AGENTS = (
    "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) "
    "Chrome/124.0.0.0 Safari/537.36",
    "Mozilla/5.0 (Macintosh; Intel Mac OS X 14_4) AppleWebKit/605.1.15 (KHTML, like Gecko) "
    "Version/17.4 Safari/605.1.15",
    "Mozilla/5.0 (X11; Linux x86_64; rv:125.0) Gecko/20100101 Firefox/125.0",
    "Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like "
    "Gecko) Version/17.4 Mobile/15E148 Safari/604.1",
    "Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) "
    "Chrome/124.0.0.0 Mobile Safari/537.36",
    "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) "
    "Chrome/124.0.0.0 Safari/537.36 Edg/124.0.0.0",
)
SEARCH_AGENTS = (
    "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)",
    "Mozilla/5.0 (compatible; bingbot/2.0; +http://www.bing.com/bingbot.htm)",
    "Mozilla/5.0 (compatible; YandexBot/3.0; +http://yandex.com/bots)",
    "Mozilla/5.0 (compatible; Applebot/0.1; +http://www.apple.com/go/applebot)",
    "DuckDuckBot/1.1; (+http://duckduckgo.com/duckduckbot.html)",
)
# bots.bot_family_pattern's alphabet, minus anything a config parser could read: escaped
# metacharacters, \xHH, \s, groups and alternation, anchors.
_SAFE_FRAGMENT = re.compile(r"(?:[A-Za-z0-9_]|\\[.()\[\]*+?^|/-]|\\x[0-9a-fA-F]{2}|\\s|[()?:|^$.-])+")


@dataclass(frozen=True)
class ServerRule:
    """Refuse one bot's requests on some routes (or from some addresses)."""

    host: str
    kind: str  # aggressive_bot | fake_bot | ignores_robots | budget_hog (a family's views at a commit)
    bot_name: str
    agent_regex: str
    routes: tuple[str, ...] = ()  # "/asl/" (prefix) or "/about" (exact path); () = every path
    addresses: tuple[str, ...] = ()  # () = any address
    status: str = "emitted"
    reason: str = ""
    offending_requests: int = 0
    other_requests: int = 0

    @property
    def route_regex(self) -> str | None:
        return route_regex(self.routes) if self.routes else None

    @property
    def address_regex(self) -> str | None:
        return address_regex(self.addresses) if self.addresses else None

    def describe(self) -> str:
        where = f" on {', '.join(self.routes)}" if self.routes else ""
        who = f" from {len(self.addresses)} addresses that failed verification" if self.addresses else ""
        return comment(f"{self.kind}: {self.bot_name}{where}{who}")


# -- regexes -----------------------------------------------------------------------------------


def regex_literal(text: str) -> str:
    """A regex matching `text` (as UTF-8 bytes) literally, made of `[A-Za-z0-9_./-]` and
    `\\xHH` only.

    >>> regex_literal("meta-externalagent/1.1"), regex_literal('a b"$%{x};#')
    ('meta-externalagent/1\\\\.1', 'a\\\\x20b\\\\x22\\\\x24\\\\x25\\\\x7bx\\\\x7d\\\\x3b\\\\x23')
    """
    return _literal(text.encode("utf-8"))


def _literal(data: bytes) -> str:
    out = []
    for i, byte in enumerate(data):
        ch = chr(byte)
        if ch.isascii() and (ch.isalnum() or ch in "_/" or (ch == "-" and i > 0)):
            out.append(ch)
        elif ch == ".":
            out.append("\\.")
        else:
            out.append(f"\\x{byte:02x}")
    return "".join(out)


def decoded_path(url: str) -> str:
    """What Apache's REQUEST_URI and nginx's $uri hold: the path, %-decoded, one character
    per byte (as `_as_matched`).

    >>> decoded_path("/a%20b/%aa?x=1")
    '/a b/\xaa'
    """
    return unquote_to_bytes(url.split("?", 1)[0]).decode("latin-1")


def agent_regex(bot_name: str) -> str:
    """The user-agent regex for a bot: `bots.bot_family_pattern` when the name is ASCII and
    the fragment is within the safe alphabet (and compiles), else the name as an escaped
    literal.

    >>> agent_regex("meta-externalagent"), agent_regex("x%{y}")
    ('meta-externalagent', 'x\\\\x25\\\\x7by\\\\x7d')
    """
    fragment = bot_family_pattern(bot_name)
    # non-ASCII names: servers match bytes, so only the byte-wise literal is faithful
    if bot_name.isascii() and _SAFE_FRAGMENT.fullmatch(fragment) and fragment[0] not in "!<>=-":
        try:
            re.compile(fragment, FLAGS)
            return fragment
        except re.error:
            pass
    return regex_literal(bot_name)


def route_regex(routes: Sequence[str]) -> str:
    """One anchored regex for decoded URL paths: prefixes end in `/` (or `;`, matrix
    parameters), other routes are exact.

    >>> route_regex(["/asl/", "/psl/"]), route_regex(["/asl/", "/about", "/img;"])
    ('^/(asl|psl)/', '^/(asl/|about$|img\\\\x3b)')
    >>> route_regex(["/cgit/*/tree/"])
    '^/(cgit/[^/]+/tree)/'
    """
    decoded = [unquote_to_bytes(r) for r in routes]
    if all(r.endswith(b"/") for r in decoded):
        return "^/(" + "|".join(_segments(r[1:-1]) for r in decoded) + ")/"
    parts = [_segments(r[1:]) + ("" if r.endswith((b"/", b";")) else "$") for r in decoded]
    return "^/(" + "|".join(parts) + ")"


def _segments(route: bytes) -> str:
    """A route's literal regex, a `*` segment (`aggressive_bot.deep_route_of`) any segment,
    a `{commit}` segment a whole commit id (`COMMIT`: a budget_hog family's views at a
    commit, `_family.server_targets`: robots.txt cannot tell them from a branch's name).

    >>> _segments(b"cgit/*/tree"), _segments(b"*/*/blob/{commit}")[:24]
    ('cgit/[^/]+/tree', '[^/]+/[^/]+/blob/(?=[0-9')
    """
    return "/".join(_SEGMENT_REGEX.get(part) or _literal(part) for part in route.split(b"/"))


# A whole path segment that is a commit id, as the family's members are told by
# (`_family.commit_like`): git's short form, 7 to 12 hex digits, or a whole SHA-1, 40; letters
# and digits mixed, so a branch named `deadbeef` or `20240115` is none (`cafe1234` is, as it
# is to the family). A group of its own: the route regex alternates routes. Look-aheads: PCRE
# (Apache, LiteSpeed, nginx) and `re` have them, Polars does not (`_routed_patterns`).
COMMIT = r"(?=[0-9a-f]*[0-9])(?=[0-9a-f]*[a-f])(?:[0-9a-f]{7,12}|[0-9a-f]{40})"  # [NC] / ~*: A-F too
_SEGMENT_REGEX = {b"*": "[^/]+", b"{commit}": COMMIT}


def address_regex(addresses: Sequence[str]) -> str:
    """An anchored alternation of exact addresses.

    >>> address_regex(["203.0.113.7", "2001:db8::1"])
    '^(203\\\\.0\\\\.113\\\\.7|2001:db8::1)$'
    """
    return "^(" + "|".join(regex_literal(a).replace("\\x3a", ":") for a in addresses) + ")$"


def _as_matched(text: str) -> str:
    """What PCRE sees without UTF mode: one character per byte."""
    return text.encode("utf-8").decode("latin-1")


# -- rules from findings -----------------------------------------------------------------------


def valid_addresses(addresses: Sequence[str]) -> tuple[tuple[str, ...], list[str]]:
    """(IP addresses, rejected values): log clients can be host names or garbage.

    An IPv4-mapped address (`::ffff:198.51.100.8`, logged by a dual-stack socket) gives both
    its forms: nginx's geo looks such a client up among the IPv4 entries, and Apache's
    REMOTE_ADDR is the form it logged (Python would print it `::ffff:c633:6408`).

    >>> valid_addresses(["::ffff:198.51.100.8", "2001:DB8::1", "crawler.example"])
    (('198.51.100.8', '::ffff:198.51.100.8', '2001:db8::1'), ['crawler.example'])
    """
    good, bad = [], []
    for a in addresses:
        text = str(a).strip()
        address = client_address(text)  # the IPv4 form of a mapped one
        if address is None:
            bad.append(str(a))
            continue
        mapped = address.version == 4 and ":" in text
        good += [str(address), f"::ffff:{address}"] if mapped else [str(address)]
    return tuple(dict.fromkeys(good)), bad


# Names logtrap gives where the user agent has none: a rule written for them matches nothing
# (`\(unknown\)` is in no request's user agent), or, for an empty agent, everyone's
_NO_AGENT_NAMES = (UNKNOWN_NAME, EMPTY_NAME, NOT_LOGGED_NAME)


def rule_for(
    host: str, kind: str, bot_name: str, routes: Sequence[str] = (), addresses: Sequence[str] = ()
) -> ServerRule:
    """An unchecked rule; `check` decides whether it is emitted."""
    routes = tuple(dict.fromkeys(r for r in routes if r))
    good, bad = valid_addresses(addresses)
    rule = ServerRule(host, kind, bot_name, agent_regex(bot_name), routes, good)
    if kind != "fake_bot" and bot_name in _NO_AGENT_NAMES:
        return replace(rule, status="withheld", reason=(
            f"{bot_name} names no product in the user agent: no user-agent rule matches it "
            "alone (find the agents in the log, or deny their addresses)"))
    if kind != "fake_bot" and (not routes or "/" in routes):
        return replace(rule, status="withheld", reason="a route is the whole site (/): no site-wide ban by default")
    if kind == "fake_bot" and not good:
        return replace(rule, status="withheld", reason="no valid IP address to deny")
    if bad:
        rule = replace(rule, reason=f"skipped {len(bad)} values that are not IP addresses")
    return rule


def check(rule: ServerRule, traffic: Traffic) -> ServerRule:
    """Evaluate the rule's regexes against the traffic: matched offending requests, matched
    other requests; withheld if it would hit people or a (verified) search engine."""
    if rule.status == "withheld":
        return rule
    agent = re.compile(rule.agent_regex, FLAGS)
    why = [rule.reason] if rule.reason else []
    people = [ua for ua in BROWSER_AGENTS if agent.search(ua)]
    if people:
        return replace(rule, status="withheld", reason=f"user-agent regex matches browsers ({people[0][:40]}...)")
    engines = [n for n in SEARCH_ENGINES if agent.search(_as_matched(n))]
    engines += [ua for ua in SEARCH_AGENTS if agent.search(ua)]
    if engines and rule.kind != "fake_bot":
        return replace(rule, status="withheld", reason=f"would hit a search engine ({engines[0]}): slow it in its webmaster tools instead")
    if rule.kind == "fake_bot":
        return _check_addresses(rule, traffic, agent, why)
    routed = _routed_patterns(rule, traffic)
    agents = traffic.agents.filter(pl.col(s.HOST) == rule.host, pl.col(s.PATTERN).is_in(routed))
    names = agents[s.BOT_NAME].drop_nulls().unique().to_list()
    matched = [n for n in names if n != rule.bot_name and n and agent.search(_as_matched(n))]
    requests = pl.col(s.REQUESTS)
    offending, other = agents.select(
        requests.filter(pl.col(s.BOT_NAME) == rule.bot_name).sum().alias("offending"),
        requests.filter(pl.col(s.BOT_NAME).is_in(matched)).sum().alias("other"),
    ).row(0)
    if not offending:  # the finding's own requests: a rule matching none of them is wrong
        others = f", and {other:,} of other bots" if other else ""
        return replace(rule, status="withheld", other_requests=other,
                       reason=f"its regexes match none of {rule.bot_name}'s logged requests{others}")
    if other:
        why.append(f"its user-agent regex also matches {other:,} requests of other bots")
    return replace(rule, offending_requests=offending, other_requests=other, reason="; ".join(why))


def _routed_patterns(rule: ServerRule, traffic: Traffic) -> list[str]:
    """The host's patterns with a sampled URL the route regex matches (as the server sees
    the path: %-decoded, one character per byte). Printable-ASCII paths without an escape
    are matched in Polars (ASCII case folding is then all `(?i)` can do); the rest, once
    each, with `re`; all of them with `re` where the regex has a commit id's look-aheads
    (`COMMIT`), which Polars' regex lacks."""
    urls = traffic.urls.filter(pl.col(s.HOST) == rule.host).select(s.PATTERN, s.URL)
    route = re.compile(rule.route_regex or "", FLAGS)
    if "(?=" in (rule.route_regex or ""):
        hits = [u for u in urls[s.URL].unique().to_list() if route.search(decoded_path(u))]
        return urls.filter(pl.col(s.URL).is_in(hits))[s.PATTERN].unique().to_list()
    path = pl.col(s.URL).str.splitn("?", 2).struct.field("field_0")
    plain = path.str.contains(r"^[\x20-\x24\x26-\x7E]*$")
    urls = urls.with_columns(plain.alias("plain"), path.str.contains(f"(?i){rule.route_regex}").alias("hit"))
    odd = urls.filter(~pl.col("plain"))[s.URL].unique().to_list()
    odd_hits = [u for u in odd if route.search(decoded_path(u))]
    hit = pl.when("plain").then("hit").otherwise(pl.col(s.URL).is_in(odd_hits))
    return urls.filter(hit)[s.PATTERN].unique().to_list()


def _check_addresses(rule: ServerRule, traffic: Traffic, agent: re.Pattern, why: list[str]) -> ServerRule:
    address = re.compile(rule.address_regex or "", FLAGS)
    claims = traffic.claims.filter(pl.col(s.HOST) == rule.host)
    if s.VERIFIED not in claims.columns:
        claims = claims.with_columns(pl.lit("unverified").alias(s.VERIFIED))
    clients = [c for c in claims[s.CLIENT].unique().to_list() if address.search(str(c))]
    names = [n for n in claims[s.BOT_NAME].unique().to_list() if agent.search(_as_matched(n or ""))]
    requests = pl.col(s.REQUESTS)
    matched = claims.filter(
        pl.col(s.CLIENT).is_in(clients, nulls_equal=True), pl.col(s.BOT_NAME).is_in(names, nulls_equal=True)
    )
    offending, other = matched.select(
        requests.filter(pl.col(s.VERIFIED).ne_missing("verified")).sum().alias("offending"),
        requests.filter(pl.col(s.VERIFIED).eq_missing("verified")).sum().alias("other"),
    ).row(0)
    if other:
        return replace(rule, status="withheld", other_requests=other, offending_requests=offending,
                       reason=f"would deny {other:,} request{'' if other == 1 else 's'} "
                       f"of the verified {rule.bot_name}")
    if not offending:
        return replace(rule, status="withheld",
                       reason=f"its regexes match none of {rule.bot_name}'s logged requests")
    return replace(rule, offending_requests=offending, reason="; ".join(why))


# -- text --------------------------------------------------------------------------------------


def _hosts(rules: Sequence[ServerRule]) -> bool:
    """Whether rules must be scoped by host (more than one named host)."""
    return len({r.host for r in rules if r.host != "-"}) > 1


def _conditions(rule: ServerRule, by_host: bool) -> list[str]:
    out = []
    if by_host and rule.host != "-":
        out.append(f"RewriteCond %{{HTTP_HOST}} ^{regex_literal(rule.host.lower())}$ [NC]")
    if rule.addresses:
        chunks = [rule.addresses[i : i + ADDRESSES_PER_LINE] for i in range(0, len(rule.addresses), ADDRESSES_PER_LINE)]
        for i, chunk in enumerate(chunks):
            more = " [OR]" if i < len(chunks) - 1 else ""
            out.append(f"RewriteCond %{{REMOTE_ADDR}} {address_regex(chunk)}{more}")
    out.append(f"RewriteCond %{{HTTP_USER_AGENT}} {rule.agent_regex} [NC]")
    if rule.routes:
        out.append(f"RewriteCond %{{REQUEST_URI}} {rule.route_regex} [NC]")
    return out


def _counts(rule: ServerRule) -> str:
    return f"{rule.offending_requests:,} offending requests matched, {rule.other_requests:,} others"


def _withheld(rules: Sequence[ServerRule]) -> list[str]:
    return [f"# logtrap withheld ({r.describe()}): {comment(r.reason)}" for r in rules if r.status == "withheld"]


def litespeed(rules: Sequence[ServerRule]) -> str:
    """LiteSpeed .htaccess blocks: `[E=blockbot:1]` makes LiteSpeed deny the request."""
    emitted = [r for r in rules if r.status != "withheld"]
    by_host = _hosts(emitted)
    out = [
        "# ---- LiteSpeed ----",
        "# [E=blockbot:1] sets LiteSpeed's blockbot variable: LiteSpeed denies the request",
        "# (403) before it reaches the site.",
    ]
    if any(r.addresses for r in emitted):
        out += ["# Behind a proxy or CDN, REMOTE_ADDR is its address: set \"Use Client IP in Header\"",
                "# (Server Configuration > General) so that it is the client's."]
    for rule in emitted:
        out += [f"# {rule.describe()} ({_counts(rule)})", "<IfModule LiteSpeed>", "RewriteEngine On"]
        out += _conditions(rule, by_host)
        out += ["RewriteRule .* - [E=blockbot:1]", "</IfModule>"]
    return "\n".join(out) + "\n"


def apache(rules: Sequence[ServerRule], status: int = 403) -> str:
    """Apache mod_rewrite: 403 with `[F]`, or 429 with `[R=429,L]`."""
    emitted = [r for r in rules if r.status != "withheld"]
    by_host = _hosts(emitted)
    flag = "[F]" if status == 403 else f"[R={int(status)},L]"
    out = [
        "# ---- Apache (mod_rewrite) ----",
        f"# {flag} answers {status}. Put this in .htaccess or the <VirtualHost>; behind a proxy,",
        "# REMOTE_ADDR is the proxy's address (use mod_remoteip).",
    ]
    if emitted:
        out += ["<IfModule mod_rewrite.c>", "RewriteEngine On"]
        for rule in emitted:
            out += [f"# {rule.describe()} ({_counts(rule)})", *_conditions(rule, by_host)]
            out.append(f"RewriteRule .* - {flag}")
        out.append("</IfModule>")
    return "\n".join(out) + "\n"


def htaccess(rules: Sequence[ServerRule], status: int = 403) -> str:
    """The .htaccess text: header, LiteSpeed section, Apache section, withheld rules."""
    # a code host's crawl named only where a rule is about one: a shop's admin would wonder
    code = any(r.kind == "budget_hog" and r.status != "withheld" for r in rules)
    bots = ("ignore it, hammer a few routes or crawl a code host's every commit" if code
            else "ignore it or hammer a few routes")
    head = ["# " + line for line in textwrap.wrap(
        "Server rules suggested by logtrap. robots.txt is a request, not access control: these "
        f"refuse the requests of bots that {bots}, scoped by user agent AND path (fake search "
        "bots: by the addresses that failed verification).", 88)]
    if not any(r.status != "withheld" for r in rules):
        return "\n".join(head + ["# No server rule is needed.", *_withheld(rules)]) + "\n"
    tail = _withheld(rules)
    return "\n".join([*head, "", litespeed(rules), apache(rules, status), *tail]).rstrip("\n") + "\n"


def nginx_http(rules: Sequence[ServerRule]) -> str:
    """The `http {}` part: maps from user agent, address and URI to `$logtrap_block`."""
    emitted = [r for r in rules if r.status != "withheld"]
    by_host = _hosts(emitted)
    ids = {rx: f"b{i + 1}" for i, rx in enumerate(dict.fromkeys(r.agent_regex for r in emitted))}
    out = ["map $http_user_agent $logtrap_bot {", '    default "";']
    out += [f'    "~*{rx}" "{bot}";' for rx, bot in ids.items()]
    out += ["}"]
    if any(r.addresses for r in emitted):  # geo reads $remote_addr
        out += ["# Behind a proxy or CDN, $remote_addr is its address: make it the client's with",
                "# ngx_http_realip_module (set_real_ip_from <its ranges>; real_ip_header X-Forwarded-For;)."]
    out += ["geo $logtrap_fake_addr {", "    default 0;"]
    out += [f"    {a} 1;" for a in dict.fromkeys(a for r in emitted for a in r.addresses)]
    key = "$host:" if by_host else ""
    out += ["}", f'map "{key}$logtrap_bot:$logtrap_fake_addr:$uri" $logtrap_block {{', "    default 0;"]
    for rule in emitted:
        host = f"{regex_literal(rule.host.lower())}:" if by_host else ""
        fake = "1" if rule.addresses else "[01]"
        path = rule.route_regex[1:] if rule.routes else ""
        out += [f"    # {rule.describe()}", f'    "~*^{host}{ids[rule.agent_regex]}:{fake}:{path}" 1;']
    out.append("}")
    return "\n".join(out) + "\n"


def nginx_server(status: int = 403) -> str:
    """The `server {}` part: refuse what the http part marked."""
    return f"if ($logtrap_block) {{\n    return {int(status)};\n}}\n"


def nginx_conf(rules: Sequence[ServerRule], status: int = 403) -> str:
    """The file `--nginx-out` writes: the `http {}` part, ready to include there (the stock
    nginx.conf includes conf.d/*.conf inside http {}), and the `server {}` part as a comment
    to add by hand. nginx refuses `map` inside server {} and `if` inside http {}, so one file
    holding both could be included nowhere; the server part never changes with the rules."""
    head = [
        "# nginx rules suggested by logtrap (scoped by user agent AND path), for inside",
        "# http {} (e.g. /etc/nginx/conf.d/logtrap.conf). Then add these lines to each",
        "# server {} of the site, once:",
        *(f"#     {line}" for line in nginx_server(status).splitlines()),
    ]
    if not any(r.status != "withheld" for r in rules):
        return "\n".join(["# No nginx rule is needed.", *_withheld(rules)]) + "\n"
    return "\n".join([*head, nginx_http(rules).rstrip("\n"), *_withheld(rules)]) + "\n"


def nginx(rules: Sequence[ServerRule], status: int = 403) -> str:
    """Both nginx parts, each headed by where it goes."""
    head = ["# nginx rules suggested by logtrap (scoped by user agent AND path)."]
    if not any(r.status != "withheld" for r in rules):
        return "\n".join(head + ["# No server rule is needed.", *_withheld(rules)]) + "\n"
    return "\n".join([
        *head,
        "# ---- part 1: inside http {} (e.g. /etc/nginx/conf.d/logtrap.conf; the stock nginx.conf",
        "# includes conf.d/*.conf inside http {}) ----",
        nginx_http(rules),
        "# ---- part 2: inside each server {} of the site (e.g. save as",
        "# /etc/nginx/snippets/logtrap.conf and add `include snippets/logtrap.conf;`) ----",
        nginx_server(status),
        *_withheld(rules),
    ]).rstrip("\n") + "\n"  # fmt: skip

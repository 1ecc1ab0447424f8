"""User agent -> is_bot, bot name, bot kind (once per distinct user agent).

Sources, in the order they are consulted for a name and a kind:

1. ``_FAMILIES`` below: our own small table, only for *stable names and kinds* of the bots a
   site admin writes rules for (Googlebot, GPTBot, meta-externalagent, curl, ...).
2. crawler-user-agents (monperrus/crawler-user-agents): ~1,500 maintained patterns with tags.
   Its plain-literal patterns run as one Aho-Corasick pass (``str.extract_many``); the few real
   regexes run as Rust regexes. A pattern's tags give the kind (``_KIND_BY_TAG``).
3. ua-parser's (uap-core) device rules whose device is "Spider", run as Rust regexes.
4. Generic rules for what no list names: bot words (``bot``, ``crawl``, ``spider``...), a URL or
   e-mail in the UA (browsers never carry one), tool and library names, and shapes no browser
   sends (a bare ``Mozilla/5.0``, a quoted UA, a ``User-Agent:`` prefix, a UA with no browser
   token at all). A browser guard keeps the word rules off device names such as "CUBOT".

Empty user agents -- "" or "-" -- are bots of kind "unknown" named ``EMPTY_NAME``: no browser
omits the header, scripts and scanners do. A null user agent is one the log does not record
(Apache ``common``, a format without ``%{User-Agent}i``): such requests are bots of kind
"unknown" named ``NOT_LOGGED_NAME``, so a log without agents still shows where its crawl
budget goes, and the report says that people's requests cannot be told apart there.

Everything runs as Polars expressions over the column of *distinct* user agents, then is joined
back, so the cost follows the number of distinct UAs, not of lines
(``benchmarks/bots_accuracy.py`` measures accuracy and microseconds per UA).
"""

from __future__ import annotations

import ast
import functools
import re
from collections.abc import Mapping
from functools import lru_cache
from pathlib import Path

import polars as pl

from logtrap.errors import ConfigError
from logtrap.keys import NO_CAP, KeyedCache
from logtrap.schema import BOT_KIND, BOT_NAME, BOT_SCHEMA, IS_BOT, USER_AGENT

__all__ = [
    "EMPTY_NAME",
    "NOT_LOGGED_NAME",
    "SEARCH_ENGINES",
    "AgentCache",
    "add_bots",
    "bot_family_pattern",
    "bot_names",
    "classify_agents",
    "named_bot",
]

EMPTY_NAME = "(empty)"  # bot_name of a "" or "-" user agent
NOT_LOGGED_NAME = "(not logged)"  # bot_name of a null user agent: the log format has none
UNKNOWN_NAME = "(unknown)"  # bot_name of a bot whose UA carries no usable product token


def named_bot() -> pl.Expr:
    """True for the requests of one bot the log names: what a verdict on a bot (it hammers,
    it ignores robots.txt) and a server rule matching its user agent can be about. Not
    ``NOT_LOGGED_NAME``: the requests of a log without user agents, people's among them.

    >>> names = pl.DataFrame({BOT_NAME: ["curl", NOT_LOGGED_NAME, None]})
    >>> names.select(named_bot()).to_series().to_list()
    [True, False, False]
    """
    return pl.col(BOT_NAME).is_not_null() & (pl.col(BOT_NAME) != NOT_LOGGED_NAME)

# -- our own table: stable names and kinds only ------------------------------------------------
# (name, kind, tokens). Tokens are case-insensitive literal substrings of the UA; the first
# token is the one rules use when the name itself is not a substring (bot_family_pattern).
# The name is the product token the bot's operator documents, so it also works as a robots.txt
# `User-agent:` value.
_FAMILIES: tuple[tuple[str, str, tuple[str, ...]], ...] = (
    # search engines
    ("Googlebot", "search", ("Googlebot",)),
    ("AdsBot-Google", "search", ("AdsBot-Google",)),
    ("Mediapartners-Google", "search", ("Mediapartners-Google",)),
    ("Storebot-Google", "search", ("Storebot-Google",)),
    ("GoogleOther", "search", ("GoogleOther",)),
    ("Google-InspectionTool", "search", ("Google-InspectionTool",)),
    ("APIs-Google", "search", ("APIs-Google",)),
    ("FeedFetcher-Google", "monitoring", ("FeedFetcher-Google",)),
    ("bingbot", "search", ("bingbot", "msnbot", "adidxbot", "BingPreview")),
    ("YandexBot", "search", ("yandex.com/bots", "YandexBot", "YandexImages", "YandexMobileBot")),
    ("Baiduspider", "search", ("Baiduspider",)),
    ("Applebot", "search", ("Applebot",)),
    ("DuckDuckBot", "search", ("DuckDuckBot", "DuckDuckGo-Favicons-Bot")),
    ("PetalBot", "search", ("PetalBot", "AspiegelBot")),
    ("Yahoo! Slurp", "search", ("Slurp",)),
    ("SeznamBot", "search", ("SeznamBot",)),
    ("Sogou", "search", ("Sogou web spider", "Sogou inst spider", "Sogou Pic Spider")),
    ("Exabot", "search", ("Exabot",)),
    ("Qwantbot", "search", ("Qwantbot", "Qwantify")),
    ("coccocbot", "search", ("coccocbot",)),
    ("Yeti", "search", ("Yeti/", "naver.me/spd")),
    ("MojeekBot", "search", ("MojeekBot",)),
    ("archive.org_bot", "search", ("archive.org_bot", "ia_archiver")),
    # AI crawlers and AI assistants' fetchers
    ("GPTBot", "ai", ("GPTBot",)),
    ("OAI-SearchBot", "ai", ("OAI-SearchBot",)),
    ("ChatGPT-User", "ai", ("ChatGPT-User",)),
    ("ClaudeBot", "ai", ("ClaudeBot", "Claude-Web", "anthropic-ai")),
    ("Claude-User", "ai", ("Claude-User",)),
    ("Claude-SearchBot", "ai", ("Claude-SearchBot",)),
    ("PerplexityBot", "ai", ("PerplexityBot",)),
    ("Perplexity-User", "ai", ("Perplexity-User",)),
    ("CCBot", "ai", ("CCBot",)),
    ("Bytespider", "ai", ("Bytespider",)),
    ("meta-externalagent", "ai", ("meta-externalagent",)),
    ("meta-externalfetcher", "ai", ("meta-externalfetcher",)),
    ("Amazonbot", "ai", ("Amazonbot",)),
    ("Google-CloudVertexBot", "ai", ("Google-CloudVertexBot",)),
    ("cohere-ai", "ai", ("cohere-ai", "cohere-training-data-crawler")),
    ("Diffbot", "ai", ("Diffbot",)),
    ("YouBot", "ai", ("YouBot",)),
    ("AI2Bot", "ai", ("AI2Bot",)),
    ("Timpibot", "ai", ("Timpibot",)),
    ("ImagesiftBot", "ai", ("ImagesiftBot",)),
    ("omgili", "ai", ("omgili",)),
    # SEO tools
    ("AhrefsBot", "seo", ("AhrefsBot", "AhrefsSiteAudit")),
    ("SemrushBot", "seo", ("SemrushBot", "SiteAuditBot", "SEMrush")),
    ("MJ12bot", "seo", ("MJ12bot",)),
    ("DotBot", "seo", ("DotBot",)),
    ("BLEXBot", "seo", ("BLEXBot",)),
    ("DataForSeoBot", "seo", ("DataForSeoBot",)),
    ("serpstatbot", "seo", ("serpstatbot",)),
    ("Barkrowler", "seo", ("Barkrowler",)),
    ("rogerbot", "seo", ("rogerbot",)),
    ("Screaming Frog SEO Spider", "seo", ("Screaming Frog",)),
    ("Sitebulb", "seo", ("Sitebulb",)),
    ("SEOkicks", "seo", ("SEOkicks",)),
    ("linkdexbot", "seo", ("linkdexbot",)),
    # social previews
    ("facebookexternalhit", "social", ("facebookexternalhit", "Facebot", "facebookcatalog")),
    ("Twitterbot", "social", ("Twitterbot",)),
    ("LinkedInBot", "social", ("LinkedInBot",)),
    ("Slackbot", "social", ("Slackbot", "Slack-ImgProxy")),
    ("Discordbot", "social", ("Discordbot",)),
    ("TelegramBot", "social", ("TelegramBot",)),
    ("WhatsApp", "social", ("WhatsApp/",)),
    ("Pinterestbot", "social", ("Pinterestbot", "pinterest.com/bot")),
    ("redditbot", "social", ("redditbot",)),
    ("Embedly", "social", ("Embedly",)),
    ("SkypeUriPreview", "social", ("SkypeUriPreview",)),
    # monitoring
    ("UptimeRobot", "monitoring", ("UptimeRobot",)),
    ("Pingdom", "monitoring", ("Pingdom",)),
    ("StatusCake", "monitoring", ("StatusCake",)),
    ("Site24x7", "monitoring", ("Site24x7",)),
    ("NewRelicPinger", "monitoring", ("NewRelicPinger",)),
    ("Datadog", "monitoring", ("Datadog",)),
    ("Uptime-Kuma", "monitoring", ("Uptime-Kuma",)),
    ("check_http", "monitoring", ("check_http", "monitoring-plugins")),
    ("Zabbix", "monitoring", ("Zabbix",)),
    # tools: HTTP clients, scrapers, headless browsers, scanners
    ("curl", "tool", ("curl/", "libcurl")),
    ("Wget", "tool", ("Wget/",)),
    ("python-requests", "tool", ("python-requests",)),
    ("Python-urllib", "tool", ("Python-urllib",)),
    ("python-httpx", "tool", ("python-httpx",)),
    ("aiohttp", "tool", ("aiohttp",)),
    ("Go-http-client", "tool", ("Go-http-client", "Go http package")),
    ("Scrapy", "tool", ("Scrapy",)),
    ("HeadlessChrome", "tool", ("HeadlessChrome",)),
    ("PhantomJS", "tool", ("PhantomJS",)),
    ("Puppeteer", "tool", ("Puppeteer",)),
    ("Playwright", "tool", ("Playwright",)),
    ("Selenium", "tool", ("Selenium",)),
    ("okhttp", "tool", ("okhttp",)),
    ("axios", "tool", ("axios/",)),
    ("node-fetch", "tool", ("node-fetch",)),
    ("undici", "tool", ("undici",)),
    ("Java", "tool", ("Java/",)),
    ("Apache-HttpClient", "tool", ("Apache-HttpClient",)),
    ("libwww-perl", "tool", ("libwww-perl",)),
    ("GuzzleHttp", "tool", ("GuzzleHttp",)),
    ("PHP", "tool", ("PHP/",)),
    ("HTTPie", "tool", ("HTTPie",)),
    ("PostmanRuntime", "tool", ("PostmanRuntime",)),
    ("zgrab", "tool", ("zgrab",)),
    ("masscan", "tool", ("masscan",)),
    ("Nmap", "tool", ("Nmap Scripting Engine", "nmap.org")),
    ("CensysInspect", "tool", ("CensysInspect",)),
    ("Expanse", "tool", ("Expanse, a Palo Alto",)),
    # the web server itself: Apache wakes its idle children with `OPTIONS *` under this agent
    # (named apart from the Apache-HttpClient library, which "Apache" alone would suggest);
    # `analyze` leaves its requests out (`analysis._without_server_own`)
    ("Apache dummy connection", "unknown", ("(internal dummy connection)",)),
)

# crawler-user-agents tags -> our kinds. The first tag of a pattern found in this order wins.
# "scanner", "http-library" and "browser-automation" are tools someone runs; feed readers poll
# a URL on a schedule as monitors do; advertising, archiving and academic crawlers have no kind
# of their own here (judgement).
_KIND_BY_TAG: tuple[tuple[str, str], ...] = (
    ("ai-crawler", "ai"),
    ("search-engine", "search"),
    ("social-preview", "social"),
    ("seo", "seo"),
    ("monitoring", "monitoring"),
    ("feed-reader", "monitoring"),
    ("http-library", "tool"),
    ("browser-automation", "tool"),
    ("scanner", "tool"),
)

# Words no browser UA carries, but bots do. `bot` needs a word end or a separator after it so
# that words like "Bottle" stay out; the browser guard below removes device names ("CUBOT").
_GENERIC_BOT = (
    r"(?i)bot(?-u:\b)|bot[/_\-;:.)]|robot|crawl|spider|scrap(?:er|y)|slurp|fetcher|archiv"
    r"|indexer|scanner|checker|validator|monitor|preview|feed|rss|aggregator|harvest|headless"
    r"|http[-_ ]?client|https?://|www\.|\+http|(?-i:[a-z0-9]\.(?:com|net|org|io|ru|de)(?-u:\b))"
    r"|[a-z0-9._\-]+@[a-z0-9\-]+\.[a-z]{2,}"  # an e-mail address; "ios@11.0" is not one
)
# Tool and library words (kind "tool" when no list names the bot).
_GENERIC_TOOL = (
    r"(?i)^(?:curl|wget|python|java|php|ruby|perl|go|node|okhttp|libwww|lwp|httpclient|"
    r"apache-httpclient|winhttp|jakarta|guzzle|axios|http_request2?|chef|ansible|"
    r"powershell|postman|insomnia|restsharp|dart|rust|reqwest|hyper|nim|deno|"
    # version control clients: git/2.39.2, JGit/6.5, git-lfs/3.4, SVN/1.14, mercurial/proto-1.0
    r"git|jgit|libgit2|svn|mercurial)(?-u:\b)"
)
# Shapes no browser sends: a bare "Mozilla/x.y" (optionally "(compatible;)") or one with no
# "(platform)" part, a UA quoted or
# prefixed with "User-Agent:" by a script that pasted a header, and a UA with no browser,
# engine, phone-platform or app-runtime token at all.
_BARE_SHAPE = (
    r"""(?i)^(?:mozilla/\d+(?:\.\d+)?\s*(?:\(compatible;?\s*\))?$|mozilla/[\d.]+ [^(]*$|["'\\]|user-agent\s*:)"""
    r"|gzip\(gfe\)"  # fetched through Google's front end (Docs viewer, Apps Script), not a browser
)
_BROWSER_TOKEN = (
    r"(?i)mozilla/|opera|presto/|gecko|webkit|trident/|msie |lynx|links \(|elinks|w3m/"
    r"|browser|midp|wap|openwave|obigo|netfront|dalvik/|cfnetwork/|ucweb|blackberry|nokia"
    r"|series60|symbianos|j2me|maui|netsurf|dillo|konqueror|amaya|ibrowse|icab|mosaic"
)
# Desktop programs people browse maps with, sending no browser token: their requests are a
# person's, as a browser's are (91 people's QGIS on a map server were an aggressive bot).
_PEOPLES_APPS = r"(?i)(?:^|[\s/(;])(?:QGIS|JOSM|ArcGIS(?: Pro)?|ArcMap|uDig|gvSIG)/"
# Device and product names that contain a bot word but are browsers (judgement, from lists).
_BROWSER_GUARD = r"(?i)cubot|robotic|silk/"
# "like X" names what an agent resembles, not what it is: FreshRSS's "... like Googlebot" was
# named Googlebot (and, not from Google's addresses, a fake one), Feedly's "like
# FeedFetcher-Google" Google's feed fetcher. Names and kinds are read without it ("like
# Gecko" and "like Mac OS X" name nothing either).
_LIKE = r"(?i)\blike\s+[^;(),]*"

# Product token of an unlisted bot: a word containing a bot word, else the UA's first token.
_NAME_BOT_WORD = (
    r"(?i)([a-z0-9][a-z0-9._\-]*(?:bot|crawler|spider|scraper|fetcher|archiver|indexer"
    r"|scanner|checker|validator|monitor|preview|reader|favicon)[a-z0-9_\-]*)"
)
_NAME_COMPATIBLE = r"compatible;\s*([A-Za-z][A-Za-z0-9._\-]*(?: [A-Za-z][A-Za-z0-9._\-]*)*)\s*[/;)]"
# Words after a bare "Mozilla/5.0" that name a browser, an engine or a platform, not the
# product sending it: "Mozilla/5.0 Gecko/20100101 Firefox/3.6" is no bot named Gecko
_NOT_PRODUCTS = [
    "mozilla", "user-agent", "msie", "gecko", "firefox", "chrome", "chromium", "safari",
    "applewebkit", "webkit", "khtml", "opera", "edge", "edg", "trident", "presto", "version",
    "mobile", "windows", "linux", "android", "iphone", "ipad", "ipod", "macintosh", "mac", "x11",
    "compatible", "brave", "vivaldi", "samsungbrowser", "yabrowser", "ucbrowser", "crios",
    "fxios", "darwin", "cfnetwork", "dalvik", "ubuntu", "win64", "wow64",
]
_NAME_AFTER_MOZILLA = r"(?i)^mozilla/[\d.]+\s+([A-Za-z][A-Za-z0-9._\-]*)/[0-9]"  # a product has a version
_NAME_FIRST_TOKEN = r"^[\s\"'\\]*(?:user-agent\s*:\s*)?([A-Za-z][A-Za-z0-9._\-!]*(?: [A-Za-z][A-Za-z0-9._\-]*)?)"


def _family_tables() -> tuple[list[str], dict[str, str], dict[str, str]]:
    tokens: list[str] = []
    name_by_token: dict[str, str] = {}
    kind_by_name: dict[str, str] = {}
    for name, kind, toks in _FAMILIES:
        kind_by_name[name] = kind
        for tok in toks:
            tokens.append(tok)
            name_by_token[tok.lower()] = name
    # Longest first, so "Googlebot-Image" style tokens would win over their prefixes at the
    # same position (Aho-Corasick leftmost-first prefers the earlier pattern).
    tokens.sort(key=len, reverse=True)
    return tokens, name_by_token, kind_by_name


_META = set("[]()*+?^$|.{}\\")


def _tag_kind(tags: list[str]) -> str:
    for tag, kind in _KIND_BY_TAG:
        if tag in tags:
            return kind
    return "unknown"


def _clean_name(pattern: str) -> str:
    name = re.sub(r"\\(.)", r"\1", pattern)
    name = re.sub(r"\(\^\| \)|[\^$]|\[([a-zA-Z])[a-zA-Z]\]", lambda m: m.group(1) or "", name)
    name = re.sub(r"\((\w+)\|[^)]*\)", r"\1", name)  # "Ahrefs(Bot|SiteAudit)" -> "AhrefsBot"
    name = re.split(r"[\[\]()*+?{}|]", name)[0]
    return name.strip(" /;:") or UNKNOWN_NAME


@lru_cache(maxsize=1)
def _crawler_list() -> tuple[list[str], dict[str, tuple[str, str]], list[tuple[str, str, str]]]:
    """crawler-user-agents split into literal tokens and real regexes, with names and kinds."""
    import crawleruseragents

    literals: list[str] = []
    by_literal: dict[str, tuple[str, str]] = {}
    regexes: list[tuple[str, str, str]] = []
    for entry in crawleruseragents.CRAWLER_USER_AGENTS_DATA:
        pattern = entry["pattern"]
        kind = _tag_kind(entry.get("tags", []))
        if not any(ch in _META for ch in re.sub(r"\\.", "", pattern)):
            literal = re.sub(r"\\(.)", r"\1", pattern)
            if literal.lower() not in by_literal:
                literals.append(literal)
                by_literal[literal.lower()] = (_clean_name(literal), kind)
        else:
            regexes.append((pattern, _clean_name(pattern), kind))
    literals.sort(key=len, reverse=True)
    return literals, by_literal, regexes


@lru_cache(maxsize=1)
def _uap_spider_regexes() -> tuple[tuple[int | None, str], ...]:
    """ua-parser's (uap-core) device rules that name the device "Spider", as Rust regexes.

    Each is (prefix length or None, regex). A rule written ``^.{0,N}(...)`` ("a token within
    the first N characters") becomes an unanchored search over the UA's first N+60 characters
    (plus the reach of any later bounded repeat):
    the bounded repeat makes the Rust engine take its slow path (30 us per UA here), the slice
    costs nothing. The rules also run one by one, and word boundaries become ASCII ones, for the
    same reason.
    """
    out: list[tuple[int | None, str]] = []
    for regex, flag in _spider_rules():
        flags = "(?i)" if flag == "i" else ""
        regex = regex.replace(r"\b", r"(?-u:\b)")
        bounded = re.match(r"\^\.\{0,(\d+)\}\??", regex)
        if bounded:
            rest = regex[bounded.end() :]
            reach = int(bounded.group(1)) + sum(int(k) for k in re.findall(r"\{0,(\d+)\}", rest)) + 60
            out.append((reach, flags + rest))
        else:
            out.append((None, flags + regex))
    return tuple(out)


def _spider_rules() -> list[tuple[str, str | None]]:
    """(regex, flag) of uap-core's device rules whose family is "Spider".

    Read from the text of ua-parser-builtins' generated `lazy.py`, one `DeviceMatcher(...)` per
    line: importing ua_parser for seven strings cost 40 ms a run (the eager loader compiles all
    ~1,000 rules: 0.4 s). Should that file change shape, the lazy loader is asked instead.
    """
    import importlib.util

    try:
        spec = importlib.util.find_spec("ua_parser_builtins.lazy")
        path = spec.origin if spec else None
        text = Path(path).read_text(encoding="utf-8") if path else ""
        rules = []
        for line in text.splitlines():
            line = line.strip()
            if line.startswith("DeviceMatcher(") and "'Spider'" in line:
                args = ast.literal_eval(line.removeprefix("DeviceMatcher").rstrip(","))
                if len(args) >= 3 and args[2] == "Spider":
                    rules.append((args[0], args[1]))
        if rules:
            return rules
    except (OSError, ValueError, SyntaxError, ImportError):
        pass
    from ua_parser.loaders import load_lazy_builtins

    return [(m.regex, m.regex_flag) for m in load_lazy_builtins()[2] if m.family == "Spider"]


def _no_capture(pattern: str) -> str:
    """The pattern with its own groups made non-capturing, so each pattern owns one group."""
    return re.sub(r"(?<!\\)\((?!\?)", "(?:", pattern)


def _classify(frame: pl.DataFrame) -> pl.DataFrame:
    """Add IS_BOT, BOT_NAME, BOT_KIND to a frame of distinct user agents.

    Staged through private columns (``_t``, ``_fam``...) so that each regex pass runs once;
    the stages are built once per process and run as one lazy query (a batch with a handful
    of new agents paid ~7 ms of expression building and four collects before).
    """
    lazy = frame.lazy()
    for stage in _stages():
        lazy = lazy.with_columns(*stage)
    out = lazy.select(USER_AGENT, IS_BOT, BOT_NAME, BOT_KIND).collect(engine="in-memory")
    return out.cast(BOT_SCHEMA)  # type: ignore[arg-type]


@functools.cache
def _stages() -> tuple[tuple[pl.Expr, ...], ...]:
    """The classification's expression stages, each reading the columns the last one added."""
    tokens, name_by_token, kind_by_name = _family_tables()
    literals, by_literal, regexes = _crawler_list()
    t = pl.col("_t")
    named = pl.col("_named")  # the agent without its "like X" (_LIKE): what names it

    def first_hit(patterns: list[str], ci: bool) -> pl.Expr:
        return named.str.extract_many(patterns, ascii_case_insensitive=ci).list.first().str.to_lowercase()

    stages: list[tuple[pl.Expr, ...]] = [(pl.col(USER_AGENT).str.strip_chars().alias("_t"),)]
    stages.append((t.str.replace_all(_LIKE, "").alias("_named"),))
    # Stage 1: every independent test, one pass each.
    stages.append(_named(
        _missing=pl.col(USER_AGENT).is_null(),
        _empty=pl.col(USER_AGENT).is_null() | t.is_in(["", "-", '"-"']),
        _fam=first_hit(tokens, True).replace_strict(name_by_token, default=None, return_dtype=pl.String),
        # crawler-user-agents is case-sensitive by design ("NING/" must not match "Lightning/").
        _lit=first_hit(literals, False),
        # The list's real regexes: one pass, one capture group per pattern.
        _rx=named.str.extract_groups("|".join(f"({_no_capture(p)})" for p, _, _ in regexes)),
        _guard=t.str.contains(_BROWSER_GUARD),
        _spider=pl.any_horizontal(
            [(t if n is None else t.str.slice(0, n)).str.contains(rx) for n, rx in _uap_spider_regexes()]
        ),
        _word=t.str.contains(_GENERIC_BOT),
        _tool=t.str.contains(_GENERIC_TOOL),
        _shape=(t.str.contains(_BARE_SHAPE) | ~t.str.contains(_BROWSER_TOKEN))
        & ~t.str.contains(_PEOPLES_APPS),
    ))
    # Stage 2: names and kinds from each source.
    rx_index = pl.coalesce(
        [pl.when(pl.col("_rx").struct.field(str(i + 1)).is_not_null()).then(pl.lit(i)) for i in range(len(regexes))]
    )
    stages.append(_named(
        _lit_name=pl.col("_lit").replace_strict(
            {k: v[0] for k, v in by_literal.items()}, default=None, return_dtype=pl.String
        ),
        _lit_kind=pl.col("_lit").replace_strict(
            {k: v[1] for k, v in by_literal.items()}, default=None, return_dtype=pl.String
        ),
        _rx_name=rx_index.replace_strict({i: r[1] for i, r in enumerate(regexes)}, default=None, return_dtype=pl.String),
        _rx_kind=rx_index.replace_strict({i: r[2] for i, r in enumerate(regexes)}, default=None, return_dtype=pl.String),
        _generic=((pl.col("_word") | pl.col("_spider")) & ~pl.col("_guard")) | pl.col("_tool") | pl.col("_shape"),
    ))
    stages.append(_named(
        _bot=pl.col("_empty")
        | pl.col("_fam").is_not_null()
        | pl.col("_lit").is_not_null()
        | pl.col("_rx_name").is_not_null()
        | pl.col("_generic"),
    ))
    # Stage 3: a name for the bots no list names (only those rows pay for the extraction).
    generic_name = pl.coalesce(
        t.str.extract(_NAME_BOT_WORD, 1),
        t.str.extract(_NAME_COMPATIBLE, 1).str.strip_chars(),
        t.str.extract(_NAME_FIRST_TOKEN, 1).str.strip_chars(),
    )
    after = t.str.extract(_NAME_AFTER_MOZILLA, 1)  # "Mozilla/5.0 QGIS/33400/...": QGIS
    generic_name = pl.coalesce(
        pl.when(generic_name.str.to_lowercase().is_in(["mozilla", "user-agent", "msie"]).not_())
        .then(generic_name),
        pl.when(after.str.to_lowercase().is_in(_NOT_PRODUCTS).not_()).then(after),
    )
    unnamed = pl.col("_bot") & ~pl.col("_empty") & pl.coalesce("_fam", "_lit_name", "_rx_name").is_null()
    stages.append((
        pl.when(pl.col("_missing"))
        .then(pl.lit(NOT_LOGGED_NAME))
        .when(pl.col("_empty"))
        .then(pl.lit(EMPTY_NAME))
        .when(pl.col("_bot"))
        .then(
            pl.coalesce(
                "_fam", "_lit_name", "_rx_name", pl.when(unnamed).then(generic_name), pl.lit(UNKNOWN_NAME)
            )
        )
        .alias(BOT_NAME),
        pl.when(pl.col("_empty"))
        .then(pl.lit("unknown"))
        .when(pl.col("_bot"))
        .then(
            pl.coalesce(
                pl.col("_fam").replace_strict(kind_by_name, default=None, return_dtype=pl.String),
                "_lit_kind",
                "_rx_kind",
                pl.when(pl.col("_tool")).then(pl.lit("tool")),
                pl.lit("unknown"),
            )
        )
        .alias(BOT_KIND),
        pl.col("_bot").alias(IS_BOT),
    ))
    return tuple(stages)


def _named(**exprs: pl.Expr) -> tuple[pl.Expr, ...]:
    return tuple(expr.alias(name) for name, expr in exprs.items())


def classify_agents(agents: pl.Series | pl.DataFrame) -> pl.DataFrame:
    """One row per distinct user agent (null included) with IS_BOT, BOT_NAME and BOT_KIND.

    >>> df = classify_agents(pl.Series([
    ...     "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)",
    ...     "curl/7.88.1", "-", None,
    ...     "Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0",
    ... ]))
    >>> df.sort(USER_AGENT, nulls_last=True).rows()  # doctest: +NORMALIZE_WHITESPACE
    [('-', True, '(empty)', 'unknown'),
     ('Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0', False, None, None),
     ('Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)', True, 'Googlebot', 'search'),
     ('curl/7.88.1', True, 'curl', 'tool'),
     (None, True, '(not logged)', 'unknown')]
    """
    if isinstance(agents, pl.DataFrame):
        if USER_AGENT not in agents.columns:
            raise ConfigError(f"classify_agents needs a {USER_AGENT!r} column; got {agents.columns}")
        series = agents.get_column(USER_AGENT)
    else:
        series = agents
    series = series.cast(pl.String).alias(USER_AGENT)
    frame = series.unique(maintain_order=True).to_frame()
    return _classify(frame)


_UA_KEY = "__ua_key"  # private join key: a 64-bit hash of the user agent


class AgentCache:
    """The user agents already classified, so a streaming caller classifies each one once.

    Keyed by a 64-bit hash of the user agent, which a lasting index (`keys.KeyedCache`) turns
    into the cache's row: a batch's rows gather their classes by number, several times
    cheaper than joining on the strings (a collision among 10^5 agents has a chance of about
    1 in 10^9 and would only give one agent another's class). Bounded: when the cache would
    pass `max_agents`, it keeps only the current batch's agents.

    `flags` are Boolean columns of the classes (name: an expression over IS_BOT, BOT_NAME
    and BOT_KIND), made once per distinct class and gathered with them, so a caller that
    filters on a class (the tally: a search engine's requests) compares no text per request.

    >>> cache = AgentCache()
    >>> cache.lookup(pl.Series(["Wget/1.21", "Wget/1.21"])).height, len(cache)
    (1, 1)
    >>> flagged = AgentCache(flags={"tool": pl.col(BOT_KIND) == "tool"})
    >>> flagged.lookup(pl.Series(["Wget/1.21", "GPTBot/1.1"])).select(BOT_NAME, "tool").rows()
    [('Wget', True), ('GPTBot', False)]
    """

    # A site sees thousands of distinct agents, a scanner-heavy one tens of thousands; 100,000
    # keep it under 5 MB (a key and two numbers each, and each distinct class once; judgement).
    def __init__(self, max_agents: int = 100_000, flags: Mapping[str, pl.Expr] | None = None) -> None:
        self.max_agents = max_agents
        # null (a comparison with a null kind) is False: a flag says whether a filter keeps a row
        self._flags = [e.fill_null(False).alias(name) for name, e in (flags or {}).items()]
        schema = {**BOT_SCHEMA, **{name: pl.Boolean() for name in (flags or {})}}
        self._cache = KeyedCache(schema, max_agents)

    def __len__(self) -> int:
        return len(self._cache)

    @property
    def flag_names(self) -> list[str]:
        """The flag columns its classes come with (none unless made with `flags`)."""
        return [e.meta.output_name() for e in self._flags]

    @property
    def frame(self) -> pl.DataFrame:
        """The agents held: `_UA_KEY` and their classes (and flags)."""
        return self._cache.frame(_UA_KEY)

    def lookup(self, agents: pl.Series) -> pl.DataFrame:
        """Classifications of these agents (distinct), classifying only the ones not seen yet."""
        distinct = _distinct_agents(_with_key(agents.alias(USER_AGENT).to_frame()))
        return self._lookup(distinct).drop(_UA_KEY)

    def _lookup(self, distinct: pl.DataFrame) -> pl.DataFrame:
        """`distinct` (_UA_KEY, USER_AGENT) -> their classes, keyed by _UA_KEY."""
        return distinct.select(_UA_KEY, USER_AGENT).hstack(self.classes(distinct))

    def classes(self, keyed: pl.DataFrame) -> pl.DataFrame:
        """IS_BOT, BOT_NAME and BOT_KIND (and the flags) of each row of `keyed` (_UA_KEY,
        USER_AGENT), in its order."""
        def compute(first: pl.Series) -> pl.DataFrame:
            return _classified(keyed.select(_UA_KEY, USER_AGENT).gather(first)).with_columns(self._flags)

        return self._cache.rows(keyed.get_column(_UA_KEY), compute)


def _with_key(frame: pl.DataFrame | pl.LazyFrame) -> pl.DataFrame | pl.LazyFrame:
    return frame.with_columns(pl.col(USER_AGENT).cast(pl.String).hash(0).alias(_UA_KEY))


def _distinct_agents(frame: pl.DataFrame | pl.LazyFrame) -> pl.DataFrame | pl.LazyFrame:
    """One row (_UA_KEY, USER_AGENT) per distinct agent of a frame that has _UA_KEY."""
    return frame.filter(pl.col(_UA_KEY).is_first_distinct()).select(_UA_KEY, USER_AGENT)


def _classified(distinct: pl.DataFrame) -> pl.DataFrame:
    """`distinct` (_UA_KEY, USER_AGENT) with their classes, in its order."""
    table = classify_agents(distinct.get_column(USER_AGENT))
    return distinct.join(table, on=USER_AGENT, how="left", nulls_equal=True, maintain_order="left")


def add_bots(
    requests: pl.DataFrame | pl.LazyFrame, cache: AgentCache | None = None
) -> pl.DataFrame | pl.LazyFrame:
    """Add IS_BOT, BOT_NAME and BOT_KIND to requests, classifying each distinct UA once.

    A LazyFrame stays lazy: its distinct user agents are collected (a small frame), classified,
    and joined back lazily. A DataFrame's rows gather their classes from the cache by number
    (`AgentCache.classes`). With a cache made with flags, its flag columns are added too.

    >>> req = pl.DataFrame({USER_AGENT: ["GPTBot/1.1", "-", "GPTBot/1.1"], "n": [1, 2, 3]})
    >>> add_bots(req).select("n", IS_BOT, BOT_NAME, BOT_KIND).rows()
    [(1, True, 'GPTBot', 'ai'), (2, True, '(empty)', 'unknown'), (3, True, 'GPTBot', 'ai')]
    """
    lazy = isinstance(requests, pl.LazyFrame)
    columns = requests.collect_schema().names() if lazy else requests.columns
    if USER_AGENT not in columns:
        raise ConfigError(f"add_bots needs a {USER_AGENT!r} column; got {columns}")
    flags = [] if cache is None else cache.flag_names
    existing = [c for c in (IS_BOT, BOT_NAME, BOT_KIND, *flags) if c in columns]
    if existing:
        requests = requests.drop(existing)
    requests = _with_key(requests)
    if not lazy:  # each row's classes gathered from a cache (one of its own, with none given)
        cache = cache if cache is not None else AgentCache(max_agents=NO_CAP)
        return requests.drop(_UA_KEY).hstack(cache.classes(requests))
    distinct = _distinct_agents(requests).collect()
    table = (_classified(distinct) if cache is None else cache._lookup(distinct)).drop(USER_AGENT)
    return requests.join(table.lazy(), on=_UA_KEY, how="left", maintain_order="left").drop(_UA_KEY)


def bot_family_pattern(bot_name: str) -> str:
    """A case-insensitive regex fragment matching this bot's user agents, safe in server rules.

    The fragment has no whitespace, quotes or semicolons, so it drops into an Apache
    ``RewriteCond %{HTTP_USER_AGENT} <fragment> [NC]`` line or an nginx ``~*`` match as is.
    Several tokens come as one non-capturing group. Match it case-insensitively.

    >>> bot_family_pattern("Googlebot"), bot_family_pattern("meta-externalagent")
    ('Googlebot', 'meta-externalagent')
    >>> bot_family_pattern("bingbot")
    '(?:bingbot|msnbot|adidxbot|BingPreview)'
    >>> bot_family_pattern("(empty)"), bot_family_pattern("Yahoo! Slurp")
    ('^-?$', 'Slurp')
    """
    if bot_name == EMPTY_NAME:
        return "^-?$"
    tokens = next((toks for name, _, toks in _FAMILIES if name == bot_name), (bot_name,))
    if bot_name in tokens:  # the name itself is a token: match on it alone where it is enough
        tokens = (bot_name,) + tuple(t for t in tokens if bot_name.lower() not in t.lower())
    escaped = [_escape(t) for t in tokens]
    return escaped[0] if len(escaped) == 1 else "(?:" + "|".join(escaped) + ")"


def _escape(token: str) -> str:
    out = []
    for ch in token:
        if ch in _META or ch == "/":
            out.append("\\" + ch)
        elif ch.isspace():
            out.append("\\s")
        elif ch in "\"';`":
            out.append(f"\\x{ord(ch):02x}")
        else:
            out.append(ch)
    return "".join(out)


def bot_names() -> tuple[str, ...]:
    """The names logtrap gives the bots it knows by name, search engines first.

    >>> bot_names()[:2]
    ('Googlebot', 'AdsBot-Google')
    """
    return tuple(dict.fromkeys([*SEARCH_ENGINES, *(name for name, _, _ in _FAMILIES)]))


# Search engines that can be verified by reverse DNS (then forward confirmation), with the
# domain suffixes their operators document. Google's common crawlers, special crawlers and
# user-triggered fetchers share Google's domains. DuckDuckBot: DuckDuckGo publishes only IP
# addresses, no reverse-DNS domain, so DNS gives no verdict for it -- pass its IP list instead.
SEARCH_ENGINES: dict[str, tuple[str, ...]] = {
    "Googlebot": ("googlebot.com", "google.com", "googleusercontent.com"),
    "AdsBot-Google": ("google.com", "googlebot.com", "googleusercontent.com"),
    "Mediapartners-Google": ("google.com", "googlebot.com", "googleusercontent.com"),
    "Storebot-Google": ("google.com", "googlebot.com", "googleusercontent.com"),
    "GoogleOther": ("google.com", "googlebot.com", "googleusercontent.com"),
    "Google-InspectionTool": ("google.com", "googlebot.com", "googleusercontent.com"),
    "APIs-Google": ("google.com", "googlebot.com", "googleusercontent.com"),
    "FeedFetcher-Google": ("google.com", "googlebot.com", "googleusercontent.com"),
    "bingbot": ("search.msn.com",),
    "Applebot": ("applebot.apple.com",),
    "YandexBot": ("yandex.ru", "yandex.net", "yandex.com"),
    "Baiduspider": ("baidu.com", "baidu.jp"),
    "DuckDuckBot": ("duckduckgo.com",),
    "PetalBot": ("petalsearch.com", "aspiegel.com"),
    "Yahoo! Slurp": ("crawl.yahoo.net",),
    "SeznamBot": ("seznam.cz",),
    "coccocbot": ("coccoc.com",),
}

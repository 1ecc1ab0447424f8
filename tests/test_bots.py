"""logtrap.bots: names and kinds per family, browsers stay browsers, the once-per-UA contract."""

from __future__ import annotations

import json
import re
from pathlib import Path

import polars as pl
import pytest

from builders import letters, pinned_string_bytes
from logtrap.bots import (
    EMPTY_NAME, NOT_LOGGED_NAME, SEARCH_ENGINES, UNKNOWN_NAME, AgentCache, add_bots, bot_family_pattern,
    classify_agents,
)
from logtrap.errors import LogtrapError
from logtrap.schema import BOT_KIND, BOT_KINDS, BOT_NAME, IS_BOT, USER_AGENT

DATA = Path(__file__).parent / "data"

BOTS = [
    # (user agent, name, kind) -- real strings as the operators document or logs show them
    ("Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)", "Googlebot", "search"),
    ("Mozilla/5.0 (Linux; Android 6.0.1; Nexus 5X Build/MMB29P) AppleWebKit/537.36 (KHTML, like Gecko) "
     "Chrome/126.0.6478.126 Mobile Safari/537.36 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)",
     "Googlebot", "search"),
    ("Googlebot-Image/1.0", "Googlebot", "search"),
    ("Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; bingbot/2.0; +http://www.bing.com/bingbot.htm) "
     "Chrome/116.0.1938.76 Safari/537.36", "bingbot", "search"),
    ("Mozilla/5.0 (compatible; YandexBot/3.0; +http://yandex.com/bots)", "YandexBot", "search"),
    ("Mozilla/5.0 (compatible; Baiduspider/2.0; +http://www.baidu.com/search/spider.html)", "Baiduspider", "search"),
    ("Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_5) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/13.1.1 "
     "Safari/605.1.15 (Applebot/0.1; +http://www.apple.com/go/applebot)", "Applebot", "search"),
    ("DuckDuckBot/1.1; (+http://duckduckgo.com/duckduckbot.html)", "DuckDuckBot", "search"),
    ("Mozilla/5.0 (Linux; Android 7.0;) AppleWebKit/537.36 (KHTML, like Gecko) Mobile Safari/537.36 "
     "(compatible; PetalBot;+https://webmaster.petalsearch.com/site/petalbot)", "PetalBot", "search"),
    ("meta-externalagent/1.1 (+https://developers.facebook.com/docs/sharing/webmasters/crawler)",
     "meta-externalagent", "ai"),
    ("facebookexternalhit/1.1 (+http://www.facebook.com/externalhit_uatext.php)", "facebookexternalhit", "social"),
    ("Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; GPTBot/1.2; +https://openai.com/gptbot)",
     "GPTBot", "ai"),
    ("Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko); compatible; OAI-SearchBot/1.0; "
     "+https://openai.com/searchbot", "OAI-SearchBot", "ai"),
    ("Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; ClaudeBot/1.0; +claudebot@anthropic.com)",
     "ClaudeBot", "ai"),
    ("Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; PerplexityBot/1.0; "
     "+https://perplexity.ai/perplexitybot)", "PerplexityBot", "ai"),
    ("CCBot/2.0 (https://commoncrawl.org/faq/)", "CCBot", "ai"),
    ("Mozilla/5.0 (Linux; Android 5.0) AppleWebKit/537.36 (KHTML, like Gecko) Mobile Safari/537.36 "
     "(compatible; Bytespider; spider-feedback@bytedance.com)", "Bytespider", "ai"),
    ("Mozilla/5.0 (compatible; AhrefsBot/7.0; +http://ahrefs.com/robot/)", "AhrefsBot", "seo"),
    ("Mozilla/5.0 (compatible; SemrushBot/7~bl; +http://www.semrush.com/bot.html)", "SemrushBot", "seo"),
    ("Mozilla/5.0 (compatible; MJ12bot/v1.4.8; http://mj12bot.com/)", "MJ12bot", "seo"),
    ("Mozilla/5.0 (compatible; DotBot/1.2; +https://opensiteexplorer.org/dotbot; help@moz.com)", "DotBot", "seo"),
    ("Twitterbot/1.0", "Twitterbot", "social"),
    ("Mozilla/5.0+(compatible; UptimeRobot/2.0; http://www.uptimerobot.com/)", "UptimeRobot", "monitoring"),
    ("curl/7.88.1", "curl", "tool"),
    ("Apache/2.4.29 (Ubuntu) OpenSSL/1.1.1 (internal dummy connection)", "Apache dummy connection",
     "unknown"),
    ("Apache-HttpClient/4.5.13 (Java/11.0.8)", "Apache-HttpClient", "tool"),
    ("Wget/1.21", "Wget", "tool"),
    # a bare "Mozilla/5.0" and a product: named by the product (it was "(unknown)", which
    # every unnamed agent shares, and no server rule could single it out); a browser's or a
    # platform's word there names nothing
    ("Mozilla/5.0 Linkwalker/2.0", "Linkwalker", "unknown"),
    ("Mozilla/5.0 Gecko/20100101 Firefox/3.6", "(unknown)", "unknown"),
    ("Mozilla/5.0 Vivaldi/6.1", "(unknown)", "unknown"),
    ("Mozilla/5.0 Mac OS X", "(unknown)", "unknown"),
    ("python-requests/2.31.0", "python-requests", "tool"),
    ("Go-http-client/1.1", "Go-http-client", "tool"),
    # version control clients: developers' and CI's fetches, tools someone runs (they were
    # "unknown", as a bot no list knows is)
    ("git/2.39.2", "git", "tool"),
    ("JGit/6.5.0.202303070854-r", "JGit", "tool"),
    ("git-lfs/3.4.0 (GitHub; linux amd64; go 1.21.1)", "git-lfs", "tool"),
    ("SVN/1.14.2 (x86_64-pc-linux-gnu) serf/1.3.9", "SVN", "tool"),
    ("mercurial/proto-1.0 (Mercurial 6.3.2)", "mercurial", "tool"),
    ("GitHub-Hookshot/a1b2c3d", "GitHub-Hookshot", "unknown"),  # a webhook, not a git client
    ("Scrapy/2.11.0 (+https://scrapy.org)", "Scrapy", "tool"),
    ("Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) HeadlessChrome/120.0.0.0 "
     "Safari/537.36", "HeadlessChrome", "tool"),
    ("", EMPTY_NAME, "unknown"),
    ("-", EMPTY_NAME, "unknown"),
    # unlisted bots: named from their product token, kind unknown
    ("Mozilla/5.0 (compatible; Foobarbot/1.0; +https://foobar.example/bot)", "Foobarbot", "unknown"),
    ("Hello, World", "Hello", "unknown"),
]

BROWSERS = [
    "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36",
    "Mozilla/5.0 (X11; Linux x86_64; rv:133.0) Gecko/20100101 Firefox/133.0",
    "Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.1 "
    "Safari/605.1.15",
    "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 "
    "Safari/537.36 Edg/131.0.0.0",
    "Mozilla/5.0 (iPhone; CPU iPhone OS 18_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.1 "
    "Mobile/15E148 Safari/604.1",
    "Mozilla/5.0 (Linux; Android 14; SM-S918B) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.6778.81 "
    "Mobile Safari/537.36",
    "Mozilla/5.0 (Linux; Android 9; CUBOT P30) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.0.0 "
    "Mobile Safari/537.36",
    "Mozilla/5.0 (Linux; Android 11; KFTUWI) AppleWebKit/537.36 (KHTML, like Gecko) Silk/134.1.82 like "
    "Chrome/134.0.6998.135 Safari/537.36",
    "Mozilla/5.0 (X11; Linux x86_64; rv:24.0) Gecko/20100101 Thunderbird/24.2.0 Lightning/2.6.4",
    "Mozilla/4.0 (compatible; MSIE 8.0; Windows NT 6.1; Trident/4.0; SLCC2; .NET CLR 2.0.50727; .NET CLR 3.5.30729)",
    "Opera/9.80 (J2ME/MIDP; Opera Mini/4.5.40312/37.6546; U; en) Presto/2.12.423 Version/12.16",
    "Lynx/2.8.7rel.2 libwww-FM/2.14 SSL-MM/1.4.1 OpenSSL/1.0.1f",
    # desktop map programs: a person browsing tiles, as in a browser
    "Mozilla/5.0 QGIS/33400/Windows 10 Version 2009",
    "JOSM/1.5 (18822 en) Windows 10 64-bit",
]


@pytest.mark.parametrize(("agent", "name", "kind"), BOTS, ids=[b[1] + ":" + b[0][:30] for b in BOTS])
def test_bot_families_and_kinds(agent: str, name: str, kind: str) -> None:
    row = classify_agents(pl.Series([agent])).row(0, named=True)
    assert row == {USER_AGENT: agent, IS_BOT: True, BOT_NAME: name, BOT_KIND: kind}


@pytest.mark.parametrize("agent", BROWSERS)
def test_browsers_are_not_bots(agent: str) -> None:
    assert classify_agents(pl.Series([agent])).row(0) == (agent, False, None, None)


def test_null_user_agent_is_a_bot_whose_agent_is_not_logged() -> None:
    # null: the format records no user agent (Apache common); "-" or "": the client sent none
    df = classify_agents(pl.Series([None, None, "-"], dtype=pl.String))
    assert df.sort(USER_AGENT, nulls_last=True).rows() == [
        ("-", True, EMPTY_NAME, "unknown"), (None, True, NOT_LOGGED_NAME, "unknown")]


def test_one_row_per_distinct_agent_with_the_schema() -> None:
    agents = pl.Series(["curl/8.0", "curl/8.0", None, BROWSERS[0], None])
    df = classify_agents(agents)
    assert df.height == 3
    assert df.schema == pl.Schema({USER_AGENT: pl.String, IS_BOT: pl.Boolean, BOT_NAME: pl.String, BOT_KIND: pl.String})
    assert classify_agents(pl.DataFrame({USER_AGENT: ["curl/8.0"]})).height == 1


def test_empty_input_gives_empty_frame() -> None:
    df = classify_agents(pl.Series([], dtype=pl.String))
    assert df.shape == (0, 4)


def test_kinds_are_the_declared_ones() -> None:
    df = classify_agents(pl.Series([b[0] for b in BOTS]))
    assert set(df[BOT_KIND].drop_nulls()) <= set(BOT_KINDS)


def test_frame_without_user_agent_column_raises() -> None:
    with pytest.raises(LogtrapError, match="user_agent"):
        classify_agents(pl.DataFrame({"x": [1]}))


def test_add_bots_joins_back_per_line_eager_and_lazy() -> None:
    req = pl.DataFrame({USER_AGENT: ["curl/8.0", BROWSERS[1], "curl/8.0", None], "n": [1, 2, 3, 4]})
    expected = [(1, True, "curl", "tool"), (2, False, None, None), (3, True, "curl", "tool"),
                (4, True, NOT_LOGGED_NAME, "unknown")]
    assert add_bots(req).select("n", IS_BOT, BOT_NAME, BOT_KIND).rows() == expected
    lazy = add_bots(req.lazy())
    assert isinstance(lazy, pl.LazyFrame)
    assert lazy.collect().select("n", IS_BOT, BOT_NAME, BOT_KIND).rows() == expected


def test_cache_classifies_each_agent_once_across_batches() -> None:
    cache = AgentCache()
    add_bots(pl.DataFrame({USER_AGENT: ["curl/8.0", BROWSERS[0]]}), cache)
    assert len(cache) == 2
    out = add_bots(pl.DataFrame({USER_AGENT: ["curl/8.0", "Wget/1.21", "-"]}), cache)
    assert len(cache) == 4
    assert out[BOT_NAME].to_list() == ["curl", "Wget", EMPTY_NAME]


def test_an_agent_like_another_is_named_as_itself():
    # "like Googlebot" is no claim to be Google's (FreshRSS's agent was called a fake
    # Googlebot), and "like Gecko", "like Mac OS X" hide no name
    agents = {
        "FreshRSS/1.11.2 (Linux; https://freshrss.org) like Googlebot": ("FreshRSS", "monitoring"),
        "Mozilla/5.0 (compatible;acapbot/0.1;treat like Googlebot)": ("acapbot", "seo"),
        "Feedly/1.0 (+http://www.feedly.com/fetcher.html; like FeedFetcher-Google)": ("Feedly", "monitoring"),
        "Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; Googlebot/2.1; "
        "+http://www.google.com/bot.html) Chrome/120.0.0.0 Safari/537.36": ("Googlebot", "search"),
        "Mozilla/5.0 (iPhone; CPU iPhone OS 8_1 like Mac OS X) AppleWebKit/600.1.4 (KHTML, like Gecko) "
        "Version/8.0 Mobile/12B410 Safari/600.1.4 (Applebot/0.1; +http://www.apple.com/go/applebot)": ("Applebot", "search"),
        "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko, Foregenix) "
        "Chrome/91.0.4472.77 Safari/537.36": ("Foregenix", "tool"),
    }
    got = classify_agents(pl.Series(list(agents)))
    assert {a: (n, k) for a, _, n, k in got.rows()} == agents


@pytest.mark.parametrize(
    ("name", "pattern"),
    [
        ("Googlebot", "Googlebot"),
        ("meta-externalagent", "meta-externalagent"),
        ("bingbot", "(?:bingbot|msnbot|adidxbot|BingPreview)"),
        ("Yahoo! Slurp", "Slurp"),
        ("Screaming Frog SEO Spider", r"Screaming\sFrog"),
        ("Some.Bot(x)", r"Some\.Bot\(x\)"),
        (EMPTY_NAME, "^-?$"),
    ],
)
def test_bot_family_pattern(name: str, pattern: str) -> None:
    assert bot_family_pattern(name) == pattern


def test_bot_family_pattern_matches_its_family_and_is_server_safe() -> None:
    df = classify_agents(pl.Series([b[0] for b in BOTS]))
    # "(unknown)" names no product: no rule is written for it (server_rules.rule_for)
    for agent, name in df.filter(pl.col(IS_BOT) & (pl.col(BOT_NAME) != UNKNOWN_NAME)).select(USER_AGENT, BOT_NAME).rows():
        fragment = bot_family_pattern(name)
        assert not re.search(r"[\s\"';]", fragment), fragment
        assert re.search(fragment, agent, re.IGNORECASE), (name, fragment, agent)


def test_search_engines_domains() -> None:
    assert SEARCH_ENGINES["Googlebot"] == ("googlebot.com", "google.com", "googleusercontent.com")
    assert SEARCH_ENGINES["bingbot"] == ("search.msn.com",)
    assert SEARCH_ENGINES["Applebot"] == ("applebot.apple.com",)
    assert set(SEARCH_ENGINES["YandexBot"]) == {"yandex.ru", "yandex.net", "yandex.com"}
    assert set(SEARCH_ENGINES["Baiduspider"]) == {"baidu.com", "baidu.jp"}


def test_real_corpus_labels() -> None:
    """Hand-labelled UAs from the real logs: no browser called a bot, at most 1% of bots missed."""
    rows = [json.loads(line) for line in (DATA / "real_user_agents.jsonl").open(encoding="utf-8")]
    df = classify_agents(pl.Series([r["user_agent"] for r in rows]))
    got = dict(zip(df[USER_AGENT], df[IS_BOT]))
    browsers_called_bots = [r["user_agent"] for r in rows if r["label"] == "browser" and got[r["user_agent"]]]
    bots = [r["user_agent"] for r in rows if r["label"] == "bot"]
    missed = [a for a in bots if not got[a]]
    assert browsers_called_bots == []
    assert len(missed) <= len(bots) // 100


def test_crawler_user_agents_instances_all_recognised() -> None:
    import crawleruseragents

    instances = sorted({i for e in crawleruseragents.CRAWLER_USER_AGENTS_DATA for i in e.get("instances", [])})
    df = classify_agents(pl.Series(instances))
    assert df.filter(~pl.col(IS_BOT)).height == 0


def test_cache_is_bounded_to_the_current_batch_past_its_cap() -> None:
    cache = AgentCache(max_agents=2)
    add_bots(pl.DataFrame({USER_AGENT: ["curl/8.0", BROWSERS[0]]}), cache)
    out = add_bots(pl.DataFrame({USER_AGENT: ["Wget/1.21", "", "Wget/1.21"]}), cache)
    assert out[BOT_NAME].to_list() == ["Wget", EMPTY_NAME, "Wget"]
    assert sorted(cache.frame[BOT_NAME].to_list()) == [EMPTY_NAME, "Wget"]


def test_cache_past_its_cap_pins_no_buffer_of_evicted_agents() -> None:
    # agents seen again come from many earlier batches: kept as views, they would keep every
    # one of those batches' buffers alive
    cache = AgentCache(max_agents=1000)

    def agent(batch: int, i: int) -> str:
        # names past the 12 bytes a string view holds inline: kept in buffers
        return f"Mozilla/5.0 (compatible; {letters(batch * 100_000 + i)}SiteAuditCrawlerbot/1.0)"

    for batch in range(20):
        again = [agent(b, i) for b in range(max(0, batch - 10), batch) for i in range(10)]
        add_bots(pl.DataFrame({USER_AGENT: [agent(batch, i) for i in range(900)] + again}), cache)
    assert len(cache) == 1000
    values = cache._cache.values  # each distinct class once (names of agents alike are alike)
    assert values.height == cache.frame[BOT_NAME].n_unique() > 900
    pinned, needed = pinned_string_bytes(values)
    assert needed >= values[BOT_NAME].str.len_bytes().sum() > 20_000
    assert pinned == needed


def test_spider_rules_read_from_the_file_are_the_lazy_loaders() -> None:
    from ua_parser.loaders import load_lazy_builtins

    from logtrap.bots import _spider_rules

    expected = [(m.regex, m.regex_flag) for m in load_lazy_builtins()[2] if m.family == "Spider"]
    assert len(expected) >= 5
    assert _spider_rules() == expected

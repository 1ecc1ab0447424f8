"""Write a realistic combined-format access log of N lines, fast, for the benchmark.

    python benchmarks/make_log.py 10000000 benchmarks/data/10M.log [--gzip] [--seed 0]

What is in it: seven days (2026-11-20 ..) in time order; about 10,000 distinct user agents
(browser strings with varied versions, plus 32 crawler strings, one a fake Googlebot, that
carry about 45% of the traffic); client addresses from a few thousand networks; content URLs (home, sections,
articles, products, real pagination, static assets) from a fixed catalogue of ~60,000 URLs, and
trap URLs (calendar months, session ids, facet permutations, pagination past the end, internal
search, random short-link tokens) whose distinct values grow with N, so a 10M-line log has
about 1.2M distinct URLs (9,991 distinct user agents). Status codes and sizes follow the URL kind (200s with stable sizes,
304s on assets, some 301/404).

How it stays fast: every field is drawn from pre-built pools with `random.choices(k=...)` in
chunks of 200,000 lines, lines are joined with one f-string each and written in big blocks
(10M lines, 2.15 GB, in about a minute on one core). Deterministic for a given seed. Standard
library only.
"""

from __future__ import annotations

import argparse
import gzip
import random
import sys
import zlib
from datetime import datetime, timedelta, timezone

CHUNK = 200_000
START = datetime(2026, 11, 20, tzinfo=timezone.utc)
SPAN = 7 * 86400
WORDS = ("alpine autumn blue brave cedar city classic coastal copper cozy crisp daily deep desert "
         "easy electric evening field fire forest fresh garden gentle golden green harbor hidden "
         "honest island journey lake light linen little lunar meadow modern morning mountain night "
         "northern ocean old orange paper perfect pine quiet rapid red river rustic salt second "
         "silver simple slow smart spring stone summer sunny swift tiny true urban velvet warm west "
         "wild winter wooden yellow young").split()

CRAWLERS = [
    ("Mozilla/5.0 (Linux; Android 6.0.1; Nexus 5X Build/MMB29P) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/{v}.0.7444.175 Mobile Safari/537.36 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)", "66.249.66"),
    ("Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; Googlebot/2.1; +http://www.google.com/bot.html) Chrome/{v}.0.7444.175 Safari/537.36", "66.249.66"),
    ("Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)", "66.249.66"),
    ("Googlebot-Image/1.0", "66.249.66"),
    ("Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; bingbot/2.0; +http://www.bing.com/bingbot.htm) Chrome/116.0.1938.76 Safari/537.36", "40.77.167"),
    ("Mozilla/5.0 (compatible; bingbot/2.0; +http://www.bing.com/bingbot.htm)", "157.55.39"),
    ("Mozilla/5.0 (compatible; AhrefsBot/7.0; +http://ahrefs.com/robot/)", "54.36.148"),
    ("Mozilla/5.0 (compatible; SemrushBot/7~bl; +http://www.semrush.com/bot.html)", "185.191.171"),
    ("Mozilla/5.0 (compatible; MJ12bot/v1.4.8; http://mj12bot.com/)", "136.243.220"),
    ("Mozilla/5.0 (compatible; DotBot/1.2; +https://opensiteexplorer.org/dotbot; help@moz.com)", "216.244.66"),
    ("Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko); compatible; GPTBot/1.2; +https://openai.com/gptbot", "20.171.207"),
    ("Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko); compatible; OAI-SearchBot/1.0; +https://openai.com/searchbot", "20.171.206"),
    ("Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; ClaudeBot/1.0; +claudebot@anthropic.com)", "216.73.216"),
    ("Mozilla/5.0 (compatible; PerplexityBot/1.0; +https://perplexity.ai/perplexitybot)", "44.221.181"),
    ("Mozilla/5.0 (compatible; Bytespider; spider-feedback@bytedance.com) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/70.0.0.0 Safari/537.36", "110.249.201"),
    ("meta-externalagent/1.1 (+https://developers.facebook.com/docs/sharing/webmasters/crawler)", "57.141.0"),
    ("facebookexternalhit/1.1 (+http://www.facebook.com/externalhit_uatext.php)", "173.252.107"),
    ("Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 Safari/605.1.15 (Applebot/0.1; +http://www.apple.com/go/applebot)", "17.241.219"),
    ("Mozilla/5.0 (compatible; YandexBot/3.0; +http://yandex.com/bots)", "5.255.231"),
    ("Mozilla/5.0 (compatible; Baiduspider/2.0; +http://www.baidu.com/search/spider.html)", "220.181.108"),
    ("Mozilla/5.0 (compatible; DuckDuckBot-Https/1.1; https://duckduckgo.com/duckduckbot)", "20.191.45"),
    ("Mozilla/5.0 (compatible; PetalBot;+https://webmaster.petalsearch.com/site/petalbot)", "114.119.130"),
    ("Mozilla/5.0 (compatible; SeznamBot/4.0; +https://o-seznam.cz/napoveda/vyhledavani/en/seznambot-crawler/)", "77.75.76"),
    ("Twitterbot/1.0", "199.16.157"),
    ("Mozilla/5.0 (compatible; archive.org_bot +http://archive.org/details/archive.org_bot) Zeno/v0.0.2", "207.241.229"),
    ("Mozilla/5.0+(compatible; UptimeRobot/2.0; http://www.uptimerobot.com/)", "69.162.124"),
    ("Pingdom.com_bot_version_1.4_(http://www.pingdom.com/)", "178.255.152"),
    ("python-requests/2.32.3", "45.133.193"),
    ("curl/8.5.0", "185.220.101"),
    ("Go-http-client/1.1", "104.248.30"),
    ("Scrapy/2.11.2 (+https://scrapy.org)", "167.94.138"),
    ("Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)", "45.133.194"),  # a fake
]
CRAWLER_WEIGHTS = [9, 6, 2, 2, 6, 2, 6, 5, 2, 1, 4, 1, 4, 1, 3, 3, 1, 2, 2, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1]

BROWSER_TEMPLATES = [
    "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/{a}.0.{b}.{c} Safari/537.36",
    "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/{a}.0.{b}.{c} Safari/537.36 Edg/{a}.0.{d}.{e}",
    "Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/{a}.0.{b}.{c} Safari/537.36",
    "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/{a}.0.{b}.{c} Safari/537.36",
    "Mozilla/5.0 (Linux; Android {m}; {dev}) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/{a}.0.{b}.{c} Mobile Safari/537.36",
    "Mozilla/5.0 (Linux; Android {m}; {dev}) AppleWebKit/537.36 (KHTML, like Gecko) SamsungBrowser/{s}.0 Chrome/{a}.0.0.0 Mobile Safari/537.36",
    "Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:{f}.0) Gecko/20100101 Firefox/{f}.0",
    "Mozilla/5.0 (Macintosh; Intel Mac OS X 10.15; rv:{f}.0) Gecko/20100101 Firefox/{f}.0",
    "Mozilla/5.0 (X11; Ubuntu; Linux x86_64; rv:{f}.0) Gecko/20100101 Firefox/{f}.0",
    "Mozilla/5.0 (Android {m}; Mobile; rv:{f}.0) Gecko/{f}.0 Firefox/{f}.0",
    "Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/{v} Safari/605.1.15",
    "Mozilla/5.0 (iPhone; CPU iPhone OS {i} like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/{v} Mobile/15E148 Safari/604.1",
    "Mozilla/5.0 (iPad; CPU OS {i} like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/{v} Mobile/15E148 Safari/604.1",
    "Mozilla/5.0 (iPhone; CPU iPhone OS {i} like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) CriOS/{a}.0.{b}.{c} Mobile/15E148 Safari/604.1",
]
DEVICES = ["K", "SM-S928B", "SM-A556B", "Pixel 8", "Pixel 9 Pro", "moto g84 5G", "2201117TG", "CPH2581"]


def _browser_pool(rng: random.Random, n: int) -> list[str]:
    pool: set[str] = set()
    while len(pool) < n:
        t = rng.choice(BROWSER_TEMPLATES)
        pool.add(t.format(a=rng.randint(120, 143), b=rng.randint(6000, 7600), c=rng.randint(0, 250),
                          d=rng.randint(2000, 3700), e=rng.randint(0, 120), m=rng.choice([10, 12, 13, 14, 15]),
                          dev=rng.choice(DEVICES), s=rng.randint(24, 29), f=rng.randint(115, 146),
                          v=rng.choice(["17.6", "18.5", "18.6", "26.0", "26.1"]),
                          i=rng.choice(["17_7", "18_5", "18_6", "26_0", "26_1"])))
    return sorted(pool)


def _size(key: str, lo: int, hi: int) -> int:
    return lo + zlib.crc32(key.encode()) % (hi - lo)


class Pools:
    """Everything a line is made of, built once."""

    def __init__(self, rng: random.Random, n_lines: int):
        self.rng = rng
        browsers = _browser_pool(rng, 9_960)
        crawlers = []
        for i, (ua, net) in enumerate(CRAWLERS):
            ua = ua.format(v=142)
            crawlers.append((ua, [f"{net}.{k}" for k in rng.sample(range(1, 255), 20)], CRAWLER_WEIGHTS[i]))
        self.browsers = browsers
        self.browser_weights = [1 / (k + 10) for k in range(len(browsers))]  # a long tail
        self.crawlers = crawlers
        self.human_ips = [f"{rng.randint(1, 223)}.{rng.randint(0, 255)}.{rng.randint(0, 255)}.{rng.randint(1, 254)}"
                          for _ in range(max(2000, min(300_000, n_lines // 20)))]
        # Content: a fixed catalogue (sizes stable per URL).
        content = ["/", "/about", "/contact", "/blog", "/shop", "/sitemap.xml", "/robots.txt"]
        content += [f"/section/{n}" for n in range(1, 51)]
        content += [f"/blog?page={p}" for p in range(2, 9)]
        content += [f"/article/{rng.randint(1, 99999)}/{'-'.join(rng.sample(WORDS, 3))}" for _ in range(30_000)]
        content += [f"/product/{n}" for n in rng.sample(range(10_000, 999_999), 25_000)]
        content += [f"/shop/{c}?page={p}" for c in ("shoes", "shirts", "bags", "hats") for p in range(2, 6)]
        self.content = [(u, _size(u, 9000, 120_000)) for u in content]
        self.content_weights = [1 / (k + 5) ** 0.8 for k in range(len(self.content))]
        self.assets = [(u, _size(u, 900, 250_000)) for u in
                       ["/static/css/main.3f9a1c.css", "/static/js/app.8b2e44.js", "/static/js/vendor.41c0d2.js",
                        "/static/img/logo.svg", "/favicon.ico", "/static/fonts/inter.woff2"]
                       + [f"/media/{n}.jpg" for n in range(1, 3000)]]
        self.missing = ["/apple-touch-icon.png", "/wp-login.php", "/.env", "/xmlrpc.php", "/old-page.html"]
        # Trap value spaces grow with N: ~1.7M distinct trap URLs at 10M lines.
        self.trap_space = max(1000, int(n_lines * 0.2))
        self.colors = ["black", "white", "red", "blue", "green", "grey", "navy", "beige", "pink", "brown"]
        self.sizes = ["xs", "s", "m", "l", "xl", "xxl"] + [str(n) for n in range(36, 47)]
        self.sorts = ["price_asc", "price_desc", "newest", "popular", "rating"]


def _trap_url(p: Pools, rng: random.Random, kind: int) -> tuple[str, int]:
    space = p.trap_space
    if kind == 0:  # calendar months, spreading both ways
        m = 2026 * 12 + rng.randint(-space // 40, space // 40)
        return f"/calendar?date={m // 12:04d}-{m % 12 + 1:02d}", 6120 + 11 * (m % 4)
    if kind == 1:  # session ids: new every time
        return f"/?sid={rng.getrandbits(128):032x}", 48213
    if kind == 2:  # facets in every order
        params = [("color", rng.choice(p.colors)), ("size", rng.choice(p.sizes)), ("sort", rng.choice(p.sorts))]
        rng.shuffle(params)
        params = params[: rng.choice((2, 3))]
        cat = rng.choice(("shoes", "shirts", "bags", "hats", "jackets", "socks"))
        d = dict(params)
        return f"/shop/{cat}?" + "&".join(f"{k}={v}" for k, v in params), _size(f"{cat}{d.get('color')}{d.get('size')}", 9000, 42000)
    if kind == 3:  # pagination past the end
        return f"/shop/shoes?page={rng.randint(6, 6 + space // 8)}", 1843
    if kind == 4:  # internal search
        q = "+".join(rng.sample(WORDS, rng.choice((1, 2, 3))))
        if rng.random() < 0.5:
            q += f"+{rng.randint(1, space // 20)}"
        return f"/search?q={q}", _size(q, 15000, 40000)
    # random short-link tokens: each seen about once
    return f"/s/{rng.getrandbits(40):010x}"[:11], 235


def _chunk(p: Pools, rng: random.Random, start: int, n: int, total: int) -> str:
    is_bot = [rng.random() < 0.45 for _ in range(n)]
    crawler_idx = rng.choices(range(len(p.crawlers)), [c[2] for c in p.crawlers], k=n)
    browser = rng.choices(p.browsers, p.browser_weights, k=n)
    human_ip = rng.choices(p.human_ips, k=n)
    content = rng.choices(p.content, p.content_weights, k=n)
    asset = rng.choices(p.assets, k=n)
    roll = [rng.random() for _ in range(n)]
    refs = rng.choices(["-", "-", "https://www.google.com/", "https://www.bing.com/", "https://example.com/",
                        "https://example.com/blog", "https://t.co/x5Yz8Qp2"], k=n)
    out = []
    step = SPAN / total
    stamps: dict[int, str] = {}  # many lines share a second: format each second once
    for i in range(n):
        sec = int((start + i) * step)
        ts = stamps.get(sec)
        if ts is None:
            ts = stamps[sec] = (START + timedelta(seconds=sec)).strftime("%d/%b/%Y:%H:%M:%S +0000")
        r = roll[i]
        if is_bot[i]:
            ua, ips, _ = p.crawlers[crawler_idx[i]]
            ip = ips[(start + i) % len(ips)]
            ref = "-"
            if r < 0.40:
                url, size = _trap_url(p, rng, int(r * 15) % 6)
                status = 200 if not url.startswith("/s/") else 301
            else:
                url, size = content[i]
                status = 200
        else:
            ua, ip, ref = browser[i], human_ip[i], refs[i]
            if r < 0.45:
                url, size = asset[i]
                status = 304 if r < 0.12 else 200
                size = 0 if status == 304 else size
            elif r < 0.47:
                url, size, status = rng.choice(p.missing), 5211, 404
            elif r < 0.48:
                url, size, status = "/index.html", 178, 301
            elif r < 0.50:
                url, size = _trap_url(p, rng, 4)  # humans search too
                status = 200
            else:
                url, size = content[i]
                status = 200
        out.append(f'{ip} - - [{ts}] "GET {url} HTTP/1.1" {status} {size} "{ref}" "{ua}"\n')
    return "".join(out)


def make_log(n_lines: int, out: str, gzip_output: bool = False, seed: int = 0) -> None:
    """Write `n_lines` combined-format lines to `out` (gzip-compressed if asked)."""
    rng = random.Random(seed)
    pools = Pools(rng, n_lines)
    opener = (lambda: gzip.open(out, "wt", compresslevel=1, encoding="utf-8")) if gzip_output else (
        lambda: open(out, "w", encoding="utf-8", buffering=16 * 1024 * 1024))
    with opener() as fh:
        for start in range(0, n_lines, CHUNK):
            fh.write(_chunk(pools, rng, start, min(CHUNK, n_lines - start), n_lines))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("lines", type=int)
    ap.add_argument("out")
    ap.add_argument("--gzip", action="store_true", help="gzip the output (level 1)")
    ap.add_argument("--seed", type=int, default=0)
    a = ap.parse_args(argv)
    make_log(a.lines, a.out, a.gzip, a.seed)
    return 0


if __name__ == "__main__":
    sys.exit(main())

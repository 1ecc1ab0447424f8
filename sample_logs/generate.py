"""Generate logtrap's sample logs and their ground truth.

    python sample_logs/generate.py            # rewrites sample_logs/<site>/ and ground_truth.json

Five sites, seven days each (2026-11-20 .. 2026-11-26, local time), rotated as logrotate does
(`access.log` = newest day, `access.log.1`, then `access.log.2.gz` .. `access.log.6.gz`). Every
URL a trap generates is tagged with the trap at generation time, so the ground truth is exact;
every other request is real content. Deterministic: one seeded `random.Random` per site, gzip
headers without timestamps. Standard library only. See sample_logs/README.md.
"""

from __future__ import annotations

import gzip
import io
import itertools
import json
import random
import re
import zlib
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta, timezone
from pathlib import Path

HERE = Path(__file__).resolve().parent
FIRST_DAY = date(2026, 11, 20)
DAYS = 7
SEED = 20261120

# -- formats ---------------------------------------------------------------------------------
NGINX_COMBINED = (
    '$remote_addr - $remote_user [$time_local] "$request" $status $body_bytes_sent '
    '"$http_referer" "$http_user_agent"'
)
APACHE_COMBINED = '%h %l %u %t "%r" %>s %b "%{Referer}i" "%{User-Agent}i"'
VHOST_COMBINED = '%v:%p %h %l %u %t "%r" %>s %O "%{Referer}i" "%{User-Agent}i"'
NGINX_CUSTOM = (
    '$host $remote_addr - $remote_user [$time_local] "$request" $status $body_bytes_sent '
    '"$http_referer" "$http_user_agent" rt=$request_time'
)

# -- user agents -----------------------------------------------------------------------------
BROWSERS = [
    "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/{c}.0.0.0 Safari/537.36",
    "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/{c}.0.0.0 Safari/537.36 Edg/{c}.0.0.0",
    "Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/{c}.0.0.0 Safari/537.36",
    "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/{c}.0.0.0 Safari/537.36",
    "Mozilla/5.0 (Linux; Android 10; K) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/{c}.0.0.0 Mobile Safari/537.36",
    "Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:{f}.0) Gecko/20100101 Firefox/{f}.0",
    "Mozilla/5.0 (Macintosh; Intel Mac OS X 10.15; rv:{f}.0) Gecko/20100101 Firefox/{f}.0",
    "Mozilla/5.0 (X11; Ubuntu; Linux x86_64; rv:{f}.0) Gecko/20100101 Firefox/{f}.0",
    "Mozilla/5.0 (Android 15; Mobile; rv:{f}.0) Gecko/{f}.0 Firefox/{f}.0",
    "Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/{s} Safari/605.1.15",
    "Mozilla/5.0 (iPhone; CPU iPhone OS 18_6 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/{s} Mobile/15E148 Safari/604.1",
    "Mozilla/5.0 (iPad; CPU OS 18_6 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/{s} Mobile/15E148 Safari/604.1",
]
BROWSER_WEIGHTS = [22, 6, 8, 3, 20, 5, 2, 2, 2, 5, 20, 5]


def browser_ua(rng: random.Random) -> str:
    template = rng.choices(BROWSERS, BROWSER_WEIGHTS)[0]
    return template.format(
        c=rng.choice([140, 141, 142, 142, 143]),
        f=rng.choice([144, 145, 145, 146]),
        s=rng.choice(["18.6", "26.0", "26.1", "26.1"]),
    )


def _ip(prefix: str, lo: int = 1, hi: int = 254):
    return lambda rng: f"{prefix}.{rng.randint(lo, hi)}"


# Crawler families: user agents as they really appear, and addresses inside each operator's
# published ranges (recorded in ground_truth.json so verification tests can build range files).
BOTS: dict[str, tuple[list[str], object]] = {
    "Googlebot": (
        [
            "Mozilla/5.0 (Linux; Android 6.0.1; Nexus 5X Build/MMB29P) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/142.0.7444.175 Mobile Safari/537.36 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)",
            "Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; Googlebot/2.1; +http://www.google.com/bot.html) Chrome/142.0.7444.175 Safari/537.36",
            "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)",
        ],
        _ip("66.249.66", 1, 30),  # 66.249.66.0/27, a Googlebot range
    ),
    "bingbot": (
        ["Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; bingbot/2.0; +http://www.bing.com/bingbot.htm) Chrome/116.0.1938.76 Safari/537.36"],
        lambda rng: rng.choice([_ip("40.77.167"), _ip("157.55.39")])(rng),
    ),
    "AhrefsBot": (["Mozilla/5.0 (compatible; AhrefsBot/7.0; +http://ahrefs.com/robot/)"], _ip("54.36.148")),
    "SemrushBot": (["Mozilla/5.0 (compatible; SemrushBot/7~bl; +http://www.semrush.com/bot.html)"], _ip("185.191.171")),
    "GPTBot": (["Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko); compatible; GPTBot/1.2; +https://openai.com/gptbot"], _ip("20.171.207")),
    "ClaudeBot": (["Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; ClaudeBot/1.0; +claudebot@anthropic.com)"], _ip("216.73.216")),
    "Applebot": (["Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 Safari/605.1.15 (Applebot/0.1; +http://www.apple.com/go/applebot)"], _ip("17.241.219")),
    "YandexBot": (["Mozilla/5.0 (compatible; YandexBot/3.0; +http://yandex.com/bots)"], _ip("5.255.231")),
    "UptimeRobot": (["Mozilla/5.0+(compatible; UptimeRobot/2.0; http://www.uptimerobot.com/)"], lambda rng: rng.choice(["69.162.124.231", "63.143.42.248", "216.144.250.150"])),
    "meta-externalagent": (["meta-externalagent/1.1 (+https://developers.facebook.com/docs/sharing/webmasters/crawler)"], lambda rng: rng.choice([_ip("57.141.0"), _ip("173.252.107")])(rng)),
}
# Share of a site's crawler fetches each family makes; no family dominates (so aggressive_bot
# stays silent except where a site adds one on purpose).
CRAWLER_MIX = {"Googlebot": 20, "bingbot": 16, "AhrefsBot": 14, "SemrushBot": 12, "YandexBot": 10,
               "GPTBot": 10, "ClaudeBot": 10, "Applebot": 8}

HUMAN_NETS = ["81.2.69", "92.40.176", "86.143.22", "109.147.3", "2.24.81", "77.99.12", "93.184.1",
              "151.25.40", "79.135.96", "188.114.97", "24.48.3", "73.162.14", "98.207.33",
              "174.62.100", "71.205.9", "190.17.82", "177.71.5", "41.216.190", "102.89.34",
              "122.171.20", "49.36.101", "180.150.37", "203.219.66", "1.145.80"]
REFERRERS = ["-", "-", "-", "https://www.google.com/", "https://www.google.com/",
             "https://www.bing.com/", "https://duckduckgo.com/", "https://t.co/x5Yz8Qp2",
             "https://www.facebook.com/", "android-app://com.google.android.gm/"]

WORDS = ("alpine autumn blue brave cedar city classic coastal copper cozy crisp daily deep "
         "desert easy electric evening field fire forest fresh garden gentle golden green "
         "harbor hidden honest island journey lake light linen little lunar meadow modern "
         "morning mountain night northern ocean old orange paper perfect pine quiet rapid "
         "red river rustic salt second silver simple slow smart spring stone summer sunny "
         "swift tiny true urban velvet warm west wild winter wooden yellow young").split()


def slug(rng: random.Random, n: int = 3) -> str:
    return "-".join(rng.sample(WORDS, n))


def size_of(key: str, lo: int, hi: int) -> int:
    """A stable response size for a URL: the same URL always answers the same size."""
    return lo + zlib.crc32(key.encode()) % (hi - lo)


def token(rng: random.Random, n: int = 8) -> str:
    while True:
        t = "".join(rng.choices("abcdefghijkmnopqrstuvwxyz0123456789", k=n))
        digits = sum(c.isdigit() for c in t)
        if 2 <= digits <= n - 3:
            return t


# -- one request -------------------------------------------------------------------------------
@dataclass
class Req:
    t: datetime  # local, aware
    host: str
    ip: str
    method: str
    url: str
    status: int
    size: int
    referer: str
    ua: str
    actor: str  # "human" | crawler family | "fake-Googlebot"
    tag: str  # "content" or a trap id
    proto: str = "HTTP/1.1"
    rt: float = 0.0


@dataclass
class Trap:
    id: str
    kinds: list[str]
    host: str
    pattern: str | None  # logtrap notation, the pattern the trap's URLs fall in
    url_regex: str
    note: str
    extra: dict = field(default_factory=dict)


class Site:
    """Content, traps and the request stream of one site."""

    def __init__(self, name: str, host: str, tz_hours: int, seed: int):
        self.name = name
        self.host = host  # default virtual host
        self.tz = timezone(timedelta(hours=tz_hours))
        self.rng = random.Random(seed)
        self.reqs: list[Req] = []
        self.pages: dict[str, list[tuple[str, int, float]]] = {}  # host -> (url, size, weight)
        self.routes: dict[str, dict] = {}  # content route label -> info
        self.route_of: dict[str, str] = {}  # content url -> route label
        self.assets: dict[str, list[tuple[str, int]]] = {}
        self.traps: dict[str, Trap] = {}
        self.error_size = 0
        self.h2 = "HTTP/2.0"

    # content ---------------------------------------------------------------------------------
    def page(self, route: str, url: str, size: int, weight: float = 1.0, host: str | None = None):
        host = host or self.host
        self.pages.setdefault(host, []).append((url, size, weight))
        self.route_of[(host, url)] = route
        self.routes.setdefault(route, {"host": host, "urls": set()})["urls"].add(url)

    def day_start(self, d: int) -> datetime:
        day = FIRST_DAY + timedelta(days=d)
        return datetime(day.year, day.month, day.day, tzinfo=self.tz)

    def at(self, d: int, seconds: float) -> datetime:
        return self.day_start(d) + timedelta(seconds=min(max(seconds, 0), 86399.9))

    def human_time(self, d: int) -> datetime:
        # Diurnal: quiet at 4am, peaks late morning and evening.
        hour = self.rng.choices(range(24), [1, 1, 1, 1, 1, 2, 3, 5, 7, 8, 8, 8, 7, 7, 7, 7, 7, 8,
                                            9, 10, 10, 8, 5, 2])[0]
        return self.at(d, hour * 3600 + self.rng.uniform(0, 3600))

    def add(self, **kw) -> Req:
        kw.setdefault("host", self.host)
        r = Req(**kw)
        if not r.rt:
            r.rt = round(self.rng.uniform(0.002, 0.09) if r.size < 10000 else self.rng.uniform(0.03, 0.6), 3)
        self.reqs.append(r)
        return r

    # humans ------------------------------------------------------------------------------------
    def humans(self, d: int, sessions: int, host: str | None = None, extra=None):
        """Browsing sessions: landing page, assets, a few more pages; `extra(rng)` may add one
        special request per session (a search, a cart), returned as (url, status, size, tag)."""
        rng = self.rng
        host = host or self.host
        pages = self.pages[host]
        weights = [w for _, _, w in pages]
        for _ in range(sessions):
            ip = f"{rng.choice(HUMAN_NETS)}.{rng.randint(2, 254)}"
            ua = browser_ua(rng)
            t = self.human_time(d)
            referer = rng.choice(REFERRERS)
            first = True
            for _ in range(rng.choice([1, 1, 2, 2, 3, 3, 4, 5, 7])):
                url, size, _ = rng.choices(pages, weights)[0]
                self.add(t=t, host=host, ip=ip, method="GET", url=url, status=200, size=size,
                         referer=referer, ua=ua, actor="human", tag="content", proto=self.h2)
                page_ref = f"https://{host}{url}"
                assets = self.assets.get(host, [])
                n_assets = len(assets) if first else rng.randint(0, 2)
                for a_url, a_size in (assets if first else rng.sample(assets, min(n_assets, len(assets)))):
                    cached = not first and rng.random() < 0.5
                    self.add(t=t + timedelta(seconds=rng.uniform(0.05, 1.5)), host=host, ip=ip,
                             method="GET", url=a_url, status=304 if cached else 200,
                             size=0 if cached else a_size, referer=page_ref, ua=ua, actor="human",
                             tag="content", proto=self.h2)
                if extra and rng.random() < 0.35:
                    got = extra(rng)
                    if got:
                        e_url, e_status, e_size, e_tag, e_method = got
                        t += timedelta(seconds=rng.uniform(5, 60))
                        self.add(t=t, host=host, ip=ip, method=e_method, url=e_url,
                                 status=e_status, size=e_size, referer=page_ref, ua=ua,
                                 actor="human", tag=e_tag, proto=self.h2)
                referer = page_ref
                first = False
                t += timedelta(seconds=rng.uniform(8, 240))

    # crawlers ----------------------------------------------------------------------------------
    def crawler(self, family: str) -> tuple[str, str]:
        uas, ipf = BOTS[family]
        return self.rng.choice(uas), ipf(self.rng)

    def bot_fetch(self, d: int, family: str, url: str, status: int, size: int, tag: str,
                  host: str | None = None, t: datetime | None = None, referer: str = "-",
                  method: str = "GET"):
        ua, ip = self.crawler(family)
        t = t or self.at(d, self.rng.uniform(0, 86400))
        return self.add(t=t, host=host or self.host, ip=ip, method=method, url=url,
                        status=status, size=size, referer=referer, ua=ua, actor=family, tag=tag)

    def crawl_content(self, d: int, n: int, host: str | None = None, mix=None):
        """n crawler fetches of content. On the first day every content URL is fetched at least
        once, so content URL spaces stop growing after day one (healthy crawls converge)."""
        rng = self.rng
        host = host or self.host
        mix = mix or CRAWLER_MIX
        fams, fw = list(mix), list(mix.values())
        pages = self.pages[host]
        urls = [(u, s) for u, s, _ in pages]
        todo = list(urls) if d == 0 else []
        rng.shuffle(todo)
        # Revisits favour popular pages but spread over templates, so no content route takes
        # the bulk of a host's crawler fetches.
        route_n = Counter(self.route_of[(host, u)] for u, _, _ in pages)
        weights = [w ** 0.5 / route_n[self.route_of[(host, u)]] ** 0.6 for u, _, w in pages]
        todo += [(u, s) for u, s, _ in rng.choices(pages, weights, k=max(0, n - len(todo)))]
        for url, size in todo:
            self.bot_fetch(d, rng.choices(fams, fw)[0], url, 200, size, "content", host=host)
        for _ in range(len(fams)):  # robots.txt, a few times a day
            self.bot_fetch(d, rng.choices(fams, fw)[0], "/robots.txt", 200, 412, "content", host=host)

    def trap_fetch(self, d: int, trap: str, url: str, status: int, size: int, mix=None,
                   host: str | None = None, referer: str = "-"):
        mix = mix or CRAWLER_MIX
        fam = self.rng.choices(list(mix), list(mix.values()))[0]
        return self.bot_fetch(d, fam, url, status, size, trap, host=host, referer=referer)

    def uptime(self, d: int, every_min: int = 60, host: str | None = None):
        ua, ip = self.crawler("UptimeRobot")
        for k in range(0, 24 * 60, every_min):
            self.add(t=self.at(d, k * 60 + 7), host=host or self.host, ip=ip, method="HEAD", url="/",
                     status=200, size=0, referer="-", ua=ua, actor="UptimeRobot", tag="content")

    def misc(self, d: int, host: str | None = None):
        """The everyday noise every site has: missing files (404) and old URLs (301)."""
        rng = self.rng
        host = host or self.host
        for url in ["/apple-touch-icon.png", "/apple-touch-icon-precomposed.png", "/favicon-32x32.png",
                    "/wp-login.php", "/.env", "/xmlrpc.php", "/ads.txt"]:
            if rng.random() < 0.6:
                ua = browser_ua(rng) if "apple" in url or "favicon" in url else "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.0.0 Safari/537.36"
                self.add(t=self.at(d, rng.uniform(0, 86400)), host=host,
                         ip=f"{rng.choice(HUMAN_NETS)}.{rng.randint(2, 254)}", method="GET", url=url,
                         status=404, size=self.error_size, referer="-", ua=ua, actor="human", tag="content")
        for url, target in [("/index.html", "/"), ("/home", "/"), ("/feed", "/feed/")]:
            if rng.random() < 0.7:
                self.bot_fetch(d, rng.choice(list(CRAWLER_MIX)), url, 301, 178, "content", host=host)
        self.route_of[(host, "/index.html")] = "redirects"


# -- the five sites ----------------------------------------------------------------------------
def shop() -> Site:
    """nginx combined shop: facets, pagination past the end, session ids, internal search."""
    s = Site("nginx-shop", "shop.example.com", 0, SEED + 1)
    s.error_size = 5211
    rng = s.rng
    s.page("/", "/", 48213, 30)
    s.assets["shop.example.com"] = [("/static/css/main.3f9a1c.css", 38211), ("/static/js/app.8b2e44.js", 121877),
                                    ("/static/img/logo.svg", 4211), ("/favicon.ico", 15086)]
    cats = {"shoes": 5, "shirts": 3, "jackets": 3, "bags": 2, "hats": 2, "socks": 2}  # real pages
    for c, last in cats.items():
        s.page("/shop/{category}", f"/shop/{c}", size_of(c, 30000, 60000), 8)
        for p in range(2, last + 1):
            s.page("/shop/{category}?page", f"/shop/{c}?page={p}", size_of(f"{c}{p}", 20000, 60000), 2)
    for pid in rng.sample(range(1000, 9999), 300):
        s.page("/product/{n}", f"/product/{pid}", size_of(f"p{pid}", 24000, 70000), rng.choice([1, 1, 2, 4]))
    for p in ["/about", "/contact", "/shipping", "/returns", "/blog"]:
        s.page(p, p, size_of(p, 12000, 30000), 2)
    for p in range(2, 9):
        s.page("/blog?page", f"/blog?page={p}", size_of(f"blog{p}", 14000, 26000), 0.5)
    for a in rng.sample(range(100, 999), 60):
        s.page("/article/{n}/{slug}", f"/article/{a}/{slug(rng)}", size_of(f"a{a}", 18000, 45000), 1)

    colors = ["black", "white", "red", "blue", "green", "grey", "navy", "beige"]
    sizes = ["xs", "s", "m", "l", "xl", "xxl", "38"]
    sorts = ["price_asc", "price_desc", "newest", "popular"]
    facet_cats = ["shoes", "shirts", "jackets"]
    s.traps["facets"] = Trap("facets", ["facets", "growing_pattern"], "-",
                             "/shop/shoes?color&size&sort", r"^/shop/(shoes|shirts|jackets)\?(color|size|sort)=[^&]+(&(color|size|sort)=[^&]+)+$",
                             "Filter links in every combination and order: two or three of color, size, sort. "
                             "The order of the parameters never changes the response (same size), so unique "
                             "URLs far outnumber distinct responses.")
    s.traps["pagination"] = Trap("pagination", ["pagination", "growing_pattern"], "-", "/shop/shoes?page",
                                 r"^/shop/(shoes|shirts)\?page=\d+$",
                                 "Pages past the last real page (shoes: 5, shirts: 3) answer 200 with the "
                                 "same 1,843-byte 'no products' body; humans never go there.",
                                 {"last_real_page": {"shoes": 5, "shirts": 3}, "empty_page_size": 1843})
    s.traps["session_id"] = Trap("session_id", ["session_id", "growing_pattern"], "-", "/?sid",
                                 r"^/\?sid=[a-z0-9]{26}$",
                                 "Copies of the home page (same 48,213-byte size) with a new sid on every URL.")
    s.traps["internal_search"] = Trap("internal_search", ["internal_search"], "-", "/search?q",
                                      r"^/search\?q=[^&]+$",
                                      "Search result pages linked from 'popular searches' and product pages, "
                                      "fetched by crawlers with ever new queries; humans search too.")
    queries = ["running shoes", "red dress", "linen shirt", "winter jacket", "wool socks",
               "leather bag", "sun hat", "sneakers", "rain coat", "gift card"]
    seen_q: set[str] = set()
    facet_seen: list[str] = []

    def facet_url(c):
        params = rng.sample([("color", rng.choice(colors)), ("size", rng.choice(sizes)),
                             ("sort", rng.choice(sorts))], rng.choice([2, 3, 3]))
        return f"/shop/{c}?" + "&".join(f"{k}={v}" for k, v in params), params

    def facet_size(c, params):
        d = dict(params)  # sort only reorders: same size whatever the order or sort
        return size_of(f"{c}|{d.get('color')}|{d.get('size')}", 9000, 42000)

    def human_extra(r):
        roll = r.random()
        if roll < 0.4:
            q = r.choice(queries)
            return (f"/search?q={q.replace(' ', '+')}", 200, size_of(q, 15000, 40000), "internal_search", "GET")
        if roll < 0.7:
            return ("/cart/add", 302, 0, "content", "POST")
        return ("/cart", 200, 21877, "content", "GET")

    s.route_of[("shop.example.com", "/cart")] = "/cart"
    for d in range(DAYS):
        s.humans(d, 34 + rng.randint(-5, 8), extra=human_extra)
        s.crawl_content(d, 290)
        s.uptime(d)
        s.misc(d)
        # facets: new combinations every day, plus re-fetches of older ones
        for _ in range(95 + 14 * d):
            url, params = facet_url(rng.choice(facet_cats))
            facet_seen.append(url)
            s.trap_fetch(d, "facets", url, 200, facet_size(url.split("?")[0][6:], params))
        for url in rng.sample(facet_seen, min(len(facet_seen), 20)):
            c = url.split("?")[0][6:]
            params = [tuple(kv.split("=")) for kv in url.split("?")[1].split("&")]
            s.trap_fetch(d, "facets", url, 200, facet_size(c, params))
        # pagination: crawlers walk "next" a little deeper every day, and try far pages
        for c, last in (("shoes", 5), ("shirts", 3)):
            depth = last + 12 * (d + 1)
            for p in range(last + 1 + 12 * d, depth + 1):
                s.trap_fetch(d, "pagination", f"/shop/{c}?page={p}", 200, 1843)
            for _ in range(3):
                s.trap_fetch(d, "pagination", f"/shop/{c}?page={rng.choice([100, 500, 1000, 9999, 100000]) + rng.randint(0, 99)}", 200, 1843)
        # session ids: every crawler visit of a link minted a new sid
        for _ in range(55 + 6 * d):
            s.trap_fetch(d, "session_id", f"/?sid={''.join(rng.choices('abcdefghijklmnopqrstuvwxyz0123456789', k=26))}", 200, 48213)
        # internal search: linked queries, new ones every day
        for _ in range(50 + 7 * d):
            q = " ".join(rng.sample(WORDS, rng.choice([1, 2, 2, 3])))
            if q in seen_q and rng.random() < 0.8:
                q = " ".join(rng.sample(WORDS, 3))
            seen_q.add(q)
            s.trap_fetch(d, "internal_search", f"/search?q={q.replace(' ', '+')}", 200, size_of(q, 15000, 40000))
    return s


def blog() -> Site:
    """Apache combined blog: calendar, relative-link loop, soft 404."""
    s = Site("apache-blog", "blog.example.org", -5, SEED + 2)
    s.error_size = 4213
    rng = s.rng
    s.page("/", "/", 31877, 30)
    s.assets["blog.example.org"] = [("/assets/style.css", 18402), ("/assets/site.js", 44120), ("/favicon.ico", 5430)]
    for p in range(2, 9):
        s.page("/blog?page", f"/blog?page={p}", size_of(f"bp{p}", 22000, 34000), 2)
    cats = ["linux", "python", "networking", "security", "databases", "devops", "hardware", "notes"]
    for c in cats:
        s.page("/category/{name}", f"/category/{c}", size_of(c, 20000, 32000), 4)
    tags = ["python", "rust", "nginx", "apache", "postgres", "sqlite", "docker", "kubernetes", "zfs",
            "bash", "systemd", "tls", "dns", "ipv6", "backup", "raspberry-pi", "homelab", "git", "vim", "emacs"]
    for t in tags:
        s.page("/tag/{name}", f"/tag/{t}", size_of("tag" + t, 9000, 28000), 1)
    for a in rng.sample(range(10, 2000), 150):
        s.page("/article/{n}/{slug}", f"/article/{a}/{slug(rng, rng.choice([3, 4, 5]))}", size_of(f"a{a}", 26000, 90000), rng.choice([1, 1, 2, 5]))
    for p in ["/about", "/contact", "/feed/", "/archive"]:
        s.page(p, p, size_of(p, 6000, 40000), 1)
    assert all(size != s.error_size for v in s.pages.values() for _, size, _ in v)

    s.traps["calendar"] = Trap("calendar", ["calendar", "growing_pattern"], "-", "/calendar?date",
                               r"^/calendar\?date=\d{4}-\d{2}$",
                               "Sidebar calendar with previous/next month links forever: crawlers walk it "
                               "both ways, a little further every day, spanning decades by the end.")
    s.traps["relative_loop"] = Trap("relative_loop", ["relative_loop"], "-", None,
                                    r"^/(blog|category/(linux|python|devops))/related(/related)+/$",
                                    "A relative link `related/` on /blog/related/ and three category pages: each "
                                    "visit nests one level deeper. Every depth is its own pattern "
                                    "(/blog/related/related/, /blog/related/related/related/, ...), so the number of "
                                    "distinct patterns keeps growing; `pattern_prefixes` lists where they start.",
                                    {"pattern_prefixes": ["/blog/related/related/", "/category/linux/related/related/",
                                                          "/category/python/related/related/", "/category/devops/related/related/"]})
    s.traps["soft_404"] = Trap("soft_404", ["soft_404", "growing_pattern"], "-", "/tag/{slug}",
                               r"^/tag/[a-z]+(-[a-z0-9]+){2,}$",
                               "Any /tag/<value> answers 200; tags that do not exist answer the error page "
                               "(exactly 4,213 bytes, the size of the site's real 404s) with status 200. The 20 "
                               "real tags (/tag/python ...) are content with their own sizes.",
                               {"error_page_size": 4213})
    cal_lo = cal_hi = 2026 * 12 + 10  # months since year 0; 2026-11
    loop_depth = {"/blog/": 1, "/category/linux/": 1, "/category/python/": 1, "/category/devops/": 1}
    for d in range(DAYS):
        s.humans(d, 30 + rng.randint(-5, 6))
        s.crawl_content(d, 330)
        s.misc(d)
        # calendar: both directions, ~26 new months a day, plus revisits
        step = 40 + 4 * d
        new = list(range(cal_hi + 1, cal_hi + 1 + step // 2)) + list(range(cal_lo - (step - step // 2), cal_lo))
        cal_hi += step // 2
        cal_lo -= step - step // 2
        for m in new + rng.sample(range(cal_lo, cal_hi + 1), 12):
            url = f"/calendar?date={m // 12:04d}-{m % 12 + 1:02d}"
            s.trap_fetch(d, "calendar", url, 200, 6120 + 11 * (m % 4))
        # relative loop: one to three levels deeper each day per start page, every depth re-fetched
        for base in loop_depth:
            grow = 2 if base == "/blog/" else 1
            for k in range(1, loop_depth[base] + grow + 1):
                url = base + "related/" * (k + 1)
                if k > loop_depth[base] or rng.random() < 0.35:
                    s.trap_fetch(d, "relative_loop", url, 200, 17544 if base == "/blog/" else 15032,
                                 referer=f"https://blog.example.org{base}{'related/' * k}")
            loop_depth[base] += grow
        # soft 404: tags that never existed, from scraped/spam links; new ones every day
        for _ in range(24 + 4 * d):
            t = slug(rng, rng.choice([3, 3, 4]))
            s.trap_fetch(d, "soft_404", f"/tag/{t}", 200, 4213)
        # humans follow a dead tag link now and then
        for _ in range(2):
            t = slug(rng, 3)
            s.add(t=s.human_time(d), ip=f"{rng.choice(HUMAN_NETS)}.{rng.randint(2, 254)}", method="GET",
                  url=f"/tag/{t}", status=200, size=4213, referer="https://www.google.com/", ua=browser_ua(rng),
                  actor="human", tag="soft_404", proto=s.h2)
    return s


def vhost() -> Site:
    """Apache vhost_combined, two virtual hosts; random-token short links; a fake Googlebot."""
    s = Site("vhost", "www.example.net", 1, SEED + 3)
    s.error_size = 3390
    rng = s.rng
    www, news = "www.example.net", "news.example.net"
    s.page("/", "/", 27410, 30, host=www)
    for p in ["/about", "/pricing", "/careers", "/contact", "/legal/privacy", "/legal/terms"]:
        s.page(p, p, size_of(p, 9000, 30000), 4, host=www)
    for n in range(1, 41):
        s.page("/docs/{n}", f"/docs/{n}", size_of(f"doc{n}", 12000, 64000), 2, host=www)
    for sl in ["getting-started-with-sensors", "how-we-ship-weekly", "our-new-data-center",
               "privacy-by-default-in-practice", "five-years-of-uptime", "moving-to-ipv6-only"]:
        s.page("/blog/{slug}", f"/blog/{sl}", size_of(sl, 20000, 50000), 2, host=www)
    s.assets[www] = [("/css/site.css", 22010), ("/js/site.js", 61220), ("/img/logo.png", 9120)]
    s.page("/", "/", 52117, 30, host=news)
    sections = ["world", "politics", "business", "tech", "science", "sport", "culture"]
    for sec in sections:
        s.page("/{section}", f"/{sec}", size_of(sec, 40000, 70000), 6, host=news)
    articles = []
    for a in rng.sample(range(10000, 99999), 200):
        url = f"/article/{a}/{slug(rng, rng.choice([3, 4, 5, 6]))}"
        articles.append(url)
        s.page("/article/{n}/{slug}", url, size_of(url, 30000, 120000), rng.choice([1, 1, 2, 3, 8]), host=news)
    s.assets[news] = [("/static/news.css", 30440), ("/static/news.js", 88120), ("/static/logo.png", 7720)]

    s.traps["random_token"] = Trap("random_token", ["random_token", "growing_pattern"], news, "/s/{token}",
                                   r"^/s/[a-z0-9]{8}$",
                                   "Every article view mints a new short link /s/<8 random chars> (301 to the "
                                   "article); crawlers follow them, each token is seen about once, almost only "
                                   "by crawlers (a few humans click a shared one).")
    fake_ips = ["45.133.193.41", "45.133.193.87", "45.133.194.12"]
    s.traps["fake_googlebot"] = Trap("fake_googlebot", ["fake_bot"], "*", None, r".*",
                                     "A scraper with a Googlebot user agent from 45.133.x.x (not Google), "
                                     "fetching many URLs on both hosts in bursts. The real Googlebot comes from "
                                     "66.249.66.x (66.249.66.0/27, Google's published Googlebot range).",
                                     {"ua_family": "Googlebot", "fake_addresses": fake_ips,
                                      "real_addresses_prefix": "66.249.66.0/27"})
    news_mix = dict(CRAWLER_MIX)
    for d in range(DAYS):
        s.humans(d, 22 + rng.randint(-3, 4), host=www)
        s.humans(d, 32 + rng.randint(-5, 6), host=news)
        s.crawl_content(d, 160, host=www)
        s.crawl_content(d, 220, host=news)
        s.uptime(d, host=www)
        s.misc(d, host=www)
        s.misc(d, host=news)
        for _ in range(75 + 8 * d):
            art = rng.choice(articles)
            s.trap_fetch(d, "random_token", f"/s/{token(rng)}", 301, 235, mix=news_mix, host=news,
                         referer=f"https://news.example.net{art}")
        for _ in range(3):  # a human clicks a shared short link
            s.add(t=s.human_time(d), host=news, ip=f"{rng.choice(HUMAN_NETS)}.{rng.randint(2, 254)}",
                  method="GET", url=f"/s/{token(rng)}", status=301, size=235, referer="https://t.co/x5Yz8Qp2",
                  ua=browser_ua(rng), actor="human", tag="random_token", proto=s.h2)
        if d in (2, 5):  # the fake Googlebot's bursts
            start = s.at(d, rng.uniform(3600 * 2, 3600 * 20))
            ua = BOTS["Googlebot"][0][1]
            for k in range(110):
                host = news if k % 3 else www
                if host == news and k % 2:  # sections and the home page as much as articles
                    url, size, _ = rng.choice(s.pages[host][:8])
                else:
                    url, size, _ = rng.choice(s.pages[host])
                s.add(t=start + timedelta(seconds=k * rng.uniform(2, 9)), host=host, ip=rng.choice(fake_ips),
                      method="GET", url=url, status=200, size=size, referer="-", ua=ua,
                      actor="fake-Googlebot", tag="fake_googlebot")
    return s


def litespeed() -> Site:
    """LiteSpeed (Apache combined) classifieds site: meta-externalagent hammering /asl/ and /psl/."""
    s = Site("litespeed", "www.example-market.com", -7, SEED + 4)
    s.error_size = 1238
    s.h2 = "HTTP/2"  # LiteSpeed logs h2 requests as HTTP/2
    rng = s.rng
    s.page("/", "/", 61877, 30)
    for c in ["cars", "bikes", "furniture", "electronics", "garden", "toys", "jobs", "rentals"]:
        s.page("/category/{name}", f"/category/{c}", size_of(c, 35000, 70000), 6)
    asl = rng.sample(range(100000, 999999), 150)
    psl = rng.sample(range(1000, 9999), 110)
    for n in asl:
        s.page("/asl/{n}", f"/asl/{n}", size_of(f"asl{n}", 28000, 80000), 2)
    for n in psl:
        s.page("/psl/{n}", f"/psl/{n}", size_of(f"psl{n}", 20000, 50000), 1)
    for p in ["/help", "/help/posting-rules", "/help/safety", "/sell", "/about"]:
        s.page(p, p, size_of(p, 9000, 25000), 1)
    s.assets["www.example-market.com"] = [("/wp-content/themes/market/style.css", 41222),
                                          ("/wp-content/themes/market/app.js", 97110),
                                          ("/wp-content/uploads/logo.webp", 6120)]
    meta_ua = BOTS["meta-externalagent"][0][0]
    s.traps["aggressive_bot"] = Trap("aggressive_bot", ["aggressive_bot"], "-", None,
                                     r"^/(asl|psl)/\d+$",
                                     "meta-externalagent fetches /asl/ and /psl/ listings in bursts of about one "
                                     "request every 1-3 seconds, far above every other crawler; the listings are "
                                     "real content (the fix is a UA+path server rule, not robots.txt for everyone).",
                                     {"ua_family": "meta-externalagent", "user_agent": meta_ua,
                                      "routes": ["/asl/", "/psl/"], "address_prefixes": ["57.141.0.0/24", "173.252.107.0/24"]})
    for d in range(DAYS):
        s.humans(d, 36 + rng.randint(-6, 8))
        s.crawl_content(d, 240)
        s.misc(d)
        for burst in range(2):
            t = s.at(d, rng.uniform(0, 80000))
            for _ in range(140 + rng.randint(0, 30)):
                t += timedelta(seconds=rng.uniform(0.8, 3.0))
                roll = rng.random()
                if roll < 0.44:
                    url = f"/asl/{rng.choice(asl)}"
                elif roll < 0.88:
                    url = f"/psl/{rng.choice(psl)}"
                else:  # the rest of its fetches: listing pages that link them
                    url = rng.choice(["/", "/category/cars", "/category/rentals", "/category/jobs"])
                size = dict((u, z) for u, z, _ in s.pages[s.host]).get(url)
                s.bot_fetch(d, "meta-externalagent", url, 200, size, "aggressive_bot", t=t)
    return s


def custom() -> Site:
    """Custom nginx log_format with $host and rt=: an event calendar that hogs the crawl budget."""
    s = Site("nginx-custom", "events.example.io", 1, SEED + 5)
    s.error_size = 3102
    rng = s.rng
    s.page("/", "/", 39410, 30)
    cities = ["berlin", "paris", "madrid", "lisbon", "vienna", "prague", "warsaw", "dublin", "oslo", "rome"]
    for c in cities:
        s.page("/city/{name}", f"/city/{c}", size_of(c, 25000, 52000), 5)
    for e in rng.sample(range(1000, 30000), 180):
        s.page("/event/{n}/{slug}", f"/event/{e}/{slug(rng, rng.choice([3, 4]))}", size_of(f"e{e}", 18000, 60000), rng.choice([1, 1, 2, 4]))
    for v in rng.sample(range(100, 999), 40):
        s.page("/venue/{n}", f"/venue/{v}", size_of(f"v{v}", 12000, 30000), 1)
    for p in range(2, 7):
        s.page("/blog?page", f"/blog?page={p}", size_of(f"b{p}", 16000, 28000), 1)
    s.page("/blog", "/blog", 24410, 2)
    s.assets["events.example.io"] = [("/assets/app.4e1f0c9a.css", 33120), ("/assets/app.9c2d7e11.js", 142300)]
    s.traps["calendar"] = Trap("calendar", ["calendar", "budget_hog", "growing_pattern"], "events.example.io",
                               "/events/{date}", r"^/events/\d{4}-\d{2}-\d{2}$",
                               "Day pages of the event calendar with previous/next day links: crawlers walk "
                               "years into the past and future; this one pattern takes about two thirds of the "
                               "host's crawler fetches (budget_hog).")
    lo = hi = date(2026, 11, 20)
    for d in range(DAYS):
        s.humans(d, 32 + rng.randint(-5, 6))
        s.crawl_content(d, 200)
        s.misc(d)
        step = 240 + 25 * d
        new = [hi + timedelta(days=k) for k in range(1, step // 2 + 1)]
        new += [lo - timedelta(days=k) for k in range(1, step - step // 2 + 1)]
        hi += timedelta(days=step // 2)
        lo -= timedelta(days=step - step // 2)
        span = (hi - lo).days
        revisit = [lo + timedelta(days=rng.randint(0, span)) for _ in range(90)]
        for day in new + revisit:
            r = s.trap_fetch(d, "calendar", f"/events/{day.isoformat()}", 200, 7311 + 9 * (day.weekday() % 3))
            r.rt = round(rng.uniform(0.004, 0.03), 3)
        for _ in range(3):  # humans look at this week's and next week's days
            day = date(2026, 11, 20) + timedelta(days=d + rng.randint(0, 10))
            s.add(t=s.human_time(d), ip=f"{rng.choice(HUMAN_NETS)}.{rng.randint(2, 254)}", method="GET",
                  url=f"/events/{day.isoformat()}", status=200, size=7311 + 9 * (day.weekday() % 3) + 2000,
                  referer="https://events.example.io/", ua=browser_ua(rng), actor="human", tag="calendar", proto=s.h2)
    return s


SITES = [
    (shop, NGINX_COMBINED, "nginx"),
    (blog, APACHE_COMBINED, "combined"),
    (vhost, VHOST_COMBINED, "vhost_combined"),
    (litespeed, APACHE_COMBINED, "litespeed"),
    (custom, NGINX_CUSTOM, None),
]


# -- writing -----------------------------------------------------------------------------------
def fmt_line(r: Req, style: str) -> str:
    t = r.t.strftime("%d/%b/%Y:%H:%M:%S %z")
    req = f"{r.method} {r.url} {r.proto}"
    if style in ("combined", "litespeed", "vhost_combined"):
        size = "-" if r.size == 0 and style != "vhost_combined" else str(r.size)
    else:
        size = str(r.size)
    if style == "vhost_combined":
        size = str(r.size + 230 if r.size or r.status != 304 else 180)  # %O counts headers too
        return f'{r.host}:443 {r.ip} - - [{t}] "{req}" {r.status} {size} "{r.referer}" "{r.ua}"'
    tail = f'[{t}] "{req}" {r.status} {size} "{r.referer}" "{r.ua}"'
    if style == "custom":
        return f"{r.host} {r.ip} - - {tail} rt={r.rt:.3f}"
    return f"{r.ip} - - {tail}"


def write_site(s: Site, style: str) -> dict:
    out = HERE / s.name
    out.mkdir(exist_ok=True)
    for old in out.glob("access.log*"):
        old.unlink()
    # Sessions that run past midnight of the last day belong to a file not written yet.
    s.reqs = [r for r in s.reqs if (r.t.date() - FIRST_DAY).days < DAYS]
    s.reqs.sort(key=lambda r: (r.t, r.ip))
    by_day: dict[int, list[str]] = defaultdict(list)
    for r in s.reqs:
        by_day[(r.t.date() - FIRST_DAY).days].append(fmt_line(r, style))
    files = {}
    for d in range(DAYS):
        age = DAYS - 1 - d
        name = "access.log" if age == 0 else f"access.log.{age}" + (".gz" if age >= 2 else "")
        text = ("\n".join(by_day[d]) + "\n").encode()
        if name.endswith(".gz"):
            buf = io.BytesIO()
            with gzip.GzipFile(filename="", mode="wb", fileobj=buf, mtime=0, compresslevel=9) as gz:
                gz.write(text)
            text = buf.getvalue()
        (out / name).write_bytes(text)
        files[name] = {"date": (FIRST_DAY + timedelta(days=d)).isoformat(), "lines": len(by_day[d])}
    return files


def pattern_of(url: str) -> str:
    """logtrap's pattern notation (DESIGN.md, logtrap/patterns.py) for the URLs made here."""
    path, _, query = url.partition("?")
    segs = []
    for seg in path.split("/"):
        if re.fullmatch(r"\d{4}-\d{2}(-\d{2})?", seg):
            seg = "{date}"
        elif re.fullmatch(r"\d+", seg):
            seg = "{n}"
        elif re.fullmatch(r"[a-z0-9]{8}", seg) and re.search(r"\d", seg) and re.search(r"[a-z]", seg):
            seg = "{token}"
        elif re.fullmatch(r"[a-z0-9]+(-[a-z0-9]+){2,}", seg):
            seg = "{slug}"
        segs.append(seg)
    names = sorted({kv.split("=")[0] for kv in query.split("&")}) if query else []
    return "/".join(segs) + ("?" + "&".join(names) if names else "")


def route_label(s: Site, r: Req) -> str:
    if r.tag not in ("content", "aggressive_bot", "fake_googlebot"):  # those two fetch content
        return r.tag
    return s.route_of.get((r.host, r.url), r.url.split("?")[0])


def check(s: Site, truth: dict) -> None:
    """The invariants the ground truth promises, checked on what was generated."""
    hosts = {r.host for r in s.reqs}
    for host in hosts:
        bot = [r for r in s.reqs if r.host == host and r.actor != "human"]
        shares = Counter(route_label(s, r) for r in bot)
        top, n = shares.most_common(1)[0]
        share = n / len(bot)
        hog = any("budget_hog" in t.kinds for t in s.traps.values())
        if hog:
            assert top == "calendar" and share > 0.6, (s.name, host, top, share)
        else:
            assert share < 0.42, (s.name, host, top, share)
        truth.setdefault("top_bot_pattern_share", {})[host] = [top, round(share, 3)]
    # content URL spaces stop growing after the first day; trap spaces grow every day
    first_seen: dict[str, int] = {}
    new_per_day: dict[str, Counter] = defaultdict(Counter)
    for r in s.reqs:
        d = (r.t.date() - FIRST_DAY).days
        key = (r.host, r.url)
        if key not in first_seen:
            first_seen[key] = d
            new_per_day[r.tag][d] += 1
    for d in range(1, DAYS):
        assert new_per_day["content"][d] <= 12, (s.name, d, new_per_day["content"][d])
    for tid, trap in s.traps.items():
        if "growing_pattern" in trap.kinds:
            assert all(new_per_day[tid][d] > 0 for d in range(DAYS)), (s.name, tid)


def ground_truth(s: Site, fmt: str, preset: str | None, files: dict) -> dict:
    bots = [r for r in s.reqs if r.actor != "human"]
    traps = []
    for tid, t in s.traps.items():
        mine = [r for r in s.reqs if r.tag == tid]
        days = defaultdict(set)
        for r in mine:
            days[(r.t.date() - FIRST_DAY).days].add(r.url)
        seen: set[str] = set()
        new = []
        for d in range(DAYS):
            new.append(len(days[d] - seen))
            seen |= days[d]
        entry = {
            "id": tid, "kinds": t.kinds, "host": t.host, "pattern": t.pattern, "url_regex": t.url_regex,
            "requests": len(mine), "bot_requests": sum(r.actor != "human" for r in mine),
            "distinct_urls": len({r.url for r in mine}), "new_urls_per_day": new,
            "patterns": dict(Counter(pattern_of(r.url) for r in mine).most_common())
            if tid not in ("fake_googlebot", "aggressive_bot") else {},
            "examples": sorted({r.url for r in mine})[:3] if tid != "fake_googlebot" else [],
            "note": t.note, **t.extra,
        }
        if entry["patterns"] and tid != "relative_loop":  # main pattern: the most requests
            entry["pattern"] = next(iter(entry["patterns"]))
        traps.append(entry)
    content = []
    for route, info in sorted(s.routes.items()):
        reqs = [r for r in s.reqs if r.tag == "content" and s.route_of.get((r.host, r.url)) == route]
        content.append({"route": route, "host": info["host"], "distinct_urls": len(info["urls"]),
                        "patterns": sorted({pattern_of(u) for u in info["urls"]}),
                        "requests": len(reqs), "examples": sorted(info["urls"])[:3]})
    hosts = sorted({r.host for r in s.reqs})
    kinds_by_host = defaultdict(set)
    for t in s.traps.values():
        for k in t.kinds:
            for h in (hosts if t.host in ("*", "-") else [t.host]):
                kinds_by_host[h if preset != "nginx" and preset not in ("combined", "litespeed") else "-"].add(k)
    families = Counter(r.actor for r in bots)
    return {
        "directory": s.name,
        "format": preset or fmt,
        "format_string": fmt,
        "server_name": s.host,
        "hosts": ["-"] if "%v" not in fmt and "$host" not in fmt else hosts,
        "utc_offset": s.tz.utcoffset(None).total_seconds() / 3600,
        "files": files,
        "lines": len(s.reqs),
        "bot_requests": len(bots),
        "human_requests": len(s.reqs) - len(bots),
        "bot_families": dict(families.most_common()),
        "error_page_size": s.error_size,
        "expected_kinds": sorted({k for t in s.traps.values() for k in t.kinds}),
        "expected_kinds_by_host": {h: sorted(v) for h, v in sorted(kinds_by_host.items())},
        "traps": traps,
        "content": content,
    }


def write_sitemap(s: Site) -> None:
    """sample_logs/sitemap.xml: the shop's real content URLs (sitemaps.org protocol)."""
    urls = sorted(u for u, _, _ in s.pages[s.host] if "?" not in u or "?page=" in u)
    rows = "".join(f"  <url><loc>https://{s.host}{u.replace('&', '&amp;')}</loc><lastmod>2026-11-19</lastmod></url>\n" for u in urls)
    (HERE / "sitemap.xml").write_text('<?xml version="1.0" encoding="UTF-8"?>\n'
                                      '<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">\n'
                                      f"{rows}</urlset>\n")


def main() -> dict:
    truth = {
        "schema": "logtrap/sample-truth-v1",
        "generated_by": "python sample_logs/generate.py",
        "days": [(FIRST_DAY + timedelta(days=d)).isoformat() for d in range(DAYS)],
        "notes": [
            "expected_kinds is every kind a detector should report on that site, and no other.",
            "growing_pattern is expected wherever a trap's URL space grows day after day (new_urls_per_day > 0 every day) "
            "and its pages repeat their response sizes; search results (internal_search) each have a size of their own, "
            "as a catalog's pages do; a relative_loop's new pattern per depth is its own finding, not growing_pattern's.",
            "budget_hog is expected only in nginx-custom: elsewhere no pattern reaches 42% of a host's crawler fetches (checked by the generator).",
            "hosts is ['-'] for formats without a virtual host field; vhost_combined logs %v:%p as 'name:443'.",
            "vhost_combined lines start 'news.example.net:443'; hosts lists the names without the port.",
            "pattern is the trap's main pattern in logtrap notation (patterns.py); patterns maps every pattern its URLs fall in to its requests; null where a trap spans many patterns (relative_loop: one per depth) or is about a client, not URLs.",
            "content lists the real routes; no trap kind except aggressive_bot (which names /asl/ and /psl/ as the hammered routes) may name them.",
        ],
        "sites": {},
    }
    for build, fmt, preset in SITES:
        site = build()
        style = preset or "custom"
        if preset == "nginx":
            style = "nginx"
        files = write_site(site, style)
        site_truth = ground_truth(site, fmt, preset, files)
        check(site, site_truth)
        truth["sites"][site.name] = site_truth
        if site.name == "nginx-shop":
            write_sitemap(site)
    (HERE / "ground_truth.json").write_text(json.dumps(truth, indent=1, sort_keys=False) + "\n")
    return truth


if __name__ == "__main__":
    t = main()
    for name, site in t["sites"].items():
        print(f"{name:14} {site['lines']:6} lines  kinds: {', '.join(site['expected_kinds'])}")

"""Small builders for detector tests: request rows -> frame -> Traffic.

    rows = [{"url": "/a?x=1", "is_bot": True, "bot_name": "Googlebot"}] * 3
    traffic = traffic_of(requests_frame(rows))

Every column of REQUEST_SCHEMA plus IS_BOT / BOT_NAME / BOT_KIND has a default, so a row only
names what the test is about. Times advance one second per row from START unless given.
"""

from __future__ import annotations

import hashlib
import random
from collections.abc import Iterable, Mapping
from datetime import datetime, timedelta, timezone
from typing import Any

import polars as pl

from logtrap import schema as s
from logtrap.patterns import add_patterns
from logtrap.settings import Settings
from logtrap.traffic import Tally, Traffic

START = datetime(2026, 1, 1, tzinfo=timezone.utc)

DEFAULTS: dict[str, Any] = {
    s.HOST: "-",
    s.CLIENT: "192.0.2.1",
    s.METHOD: "GET",
    s.URL: "/",
    s.PROTOCOL: "HTTP/1.1",
    s.STATUS: 200,
    s.BYTES: 1000,
    s.REFERER: "-",
    s.USER_AGENT: "Mozilla/5.0",
    s.REQUEST_TIME: None,
    s.SOURCE: "test.log",
    s.IS_BOT: False,
    s.BOT_NAME: None,
    s.BOT_KIND: None,
}

BOT = {s.IS_BOT: True, s.BOT_NAME: "Googlebot", s.BOT_KIND: "search",
       s.USER_AGENT: "Mozilla/5.0 (compatible; Googlebot/2.1)"}  # fmt: skip
HUMAN = {s.IS_BOT: False, s.BOT_NAME: None, s.BOT_KIND: None}


def requests_frame(rows: Iterable[Mapping[str, Any]]) -> pl.DataFrame:
    """A request frame (REQUEST_SCHEMA + bot columns) from partial rows; PATH/QUERY from URL."""
    full = []
    for i, row in enumerate(rows):
        r = {**DEFAULTS, s.TIME: START + timedelta(seconds=i), **row}
        url = r[s.URL]  # None: a request line with no URL ("-")
        path, sep, query = (url or "").partition("?")
        r.setdefault(s.PATH, path if url is not None else None)
        r.setdefault(s.QUERY, query if sep else None)
        full.append(r)
    schema = {**s.REQUEST_SCHEMA, **s.BOT_SCHEMA}
    return pl.DataFrame(full, schema=schema) if full else s.empty(schema)


def bots(urls: Iterable[str], **extra: Any) -> list[dict[str, Any]]:
    """One bot (Googlebot by default) request per URL."""
    return [{**BOT, s.URL: u, **extra} for u in urls]


def humans(urls: Iterable[str], **extra: Any) -> list[dict[str, Any]]:
    """One browser request per URL."""
    return [{**HUMAN, s.URL: u, **extra} for u in urls]


def traffic_of(frame: pl.DataFrame, settings: Settings | None = None) -> Traffic:
    """Patterns added, tallied and finished: what a detector reads."""
    settings = settings or Settings()
    tally = Tally(settings=settings)
    tally.add(add_patterns(frame, settings))
    return tally.finish()


def empty_traffic(settings: Settings | None = None) -> Traffic:
    """The Traffic of no requests at all."""
    return Tally(settings=settings or Settings()).finish()


def pinned_string_bytes(frame: pl.DataFrame) -> tuple[int, int]:
    """(bytes of the string buffers the frame keeps alive, bytes of its strings that need one).

    Polars strings are views: a string longer than 12 bytes points into a shared buffer, and a
    frame keeps every buffer any of its strings points into. Equal numbers mean the frame
    pins nothing beyond its own strings.
    """
    arrow = frame.to_arrow(compat_level=pl.CompatLevel.newest())
    pinned = sum(
        buf.size
        for column in arrow.columns
        for chunk in column.chunks
        if str(chunk.type) == "string_view"
        for buf in chunk.buffers()[2:]  # validity and views come first, then the data buffers
        if buf is not None
    )
    lengths = [pl.col(c).str.len_bytes() for c, t in frame.schema.items() if t == pl.String]
    if not lengths:
        return pinned, 0
    needed = frame.select(pl.sum_horizontal(n.filter(n > 12).sum() for n in lengths)).item()
    return pinned, needed


def letters(i: int) -> str:
    """A distinct letters-only word per number (no placeholder rule turns it into one)."""
    word = ""
    while True:
        word += chr(ord("a") + i % 26)
        i //= 26
        if not i:
            return word


# -- a WooCommerce shop ------------------------------------------------------------------------

WOO_CATEGORIES = [
    "hoodies", "t-shirts", "jackets", "jeans", "shorts", "dresses", "skirts", "sweaters",
    "socks", "hats", "scarves", "gloves", "sneakers", "boots", "sandals", "bags",
    "belts", "watches", "sunglasses", "jewellery",
]  # fmt: skip
WOO_TAGS = ["organic", "summer", "winter", "sale", "new", "unisex", "vintage", "eco"]
WOO_ORDERS = ["popularity", "rating", "date", "price", "price-desc"]
WOO_PER_PAGE = 12  # WooCommerce's default products per listing page
WOO_BOTS = [
    {s.IS_BOT: True, s.BOT_NAME: "Googlebot", s.BOT_KIND: "search", s.CLIENT: "66.249.66.1",
     s.USER_AGENT: "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)"},
    {s.IS_BOT: True, s.BOT_NAME: "bingbot", s.BOT_KIND: "search", s.CLIENT: "157.55.39.1",
     s.USER_AGENT: "Mozilla/5.0 (compatible; bingbot/2.0; +http://www.bing.com/bingbot.htm)"},
    {s.IS_BOT: True, s.BOT_NAME: "AhrefsBot", s.BOT_KIND: "seo", s.CLIENT: "54.36.148.1",
     s.USER_AGENT: "Mozilla/5.0 (compatible; AhrefsBot/7.0; +http://ahrefs.com/robot/)"},
    {s.IS_BOT: True, s.BOT_NAME: "GPTBot", s.BOT_KIND: "ai", s.CLIENT: "20.171.207.1",
     s.USER_AGENT: "Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko); compatible; GPTBot/1.1; +https://openai.com/gptbot"},
]  # fmt: skip
WOO_BROWSER = ("Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) "
               "Chrome/124.0.0.0 Safari/537.36")


def _stable(text: str, low: int, high: int) -> int:
    """A number from low to high (excluded), the same for the same text on every run."""
    return low + int.from_bytes(hashlib.sha1(text.encode()).digest()[:4], "big") % (high - low)


def woocommerce(days: int = 10, seed: int = 7, *, products: int = 900) -> list[dict[str, Any]]:
    """A WooCommerce shop's access log as request rows: people browse the listings (sorting
    them now and then), read products and add to the cart by AJAX (`POST /?wc-ajax=...`, as
    the default "AJAX add to cart buttons on archives" does); crawlers read the same pages
    and also follow every listing's `?add-to-cart=<id>` link, which WooCommerce builds on
    the listing's own URL (its page and `orderby` kept): a simple product answers the
    listing again with a "has been added to your cart" notice, a variable one redirects to
    its product page. The crawlers find a share of those links every day, so each listing's
    pattern keeps growing (one trap, made by one parameter over many URL patterns).
    """
    rng = random.Random(seed)
    names = [f"{a} {b}" for a in ("Classic", "Organic Cotton", "Slim", "Relaxed", "Vintage Wash",
                                  "Essential", "Heavyweight", "Lightweight Linen", "Everyday")
             for b in ("Hoodie", "Tee", "Jacket", "Jeans", "Shorts", "Dress", "Skirt",
                       "Sweater", "Crew Socks", "Beanie", "Scarf")]  # fmt: skip
    items = []
    for i in range(products):
        pid = 1001 + i
        name = f"{names[i % len(names)]} {i // len(names) + 1}"
        items.append({"id": pid, "name": name, "slug": name.lower().replace(" ", "-"),
                      "category": WOO_CATEGORIES[i % len(WOO_CATEGORIES)],
                      "tag": WOO_TAGS[_stable(name, 0, len(WOO_TAGS))],
                      "variable": _stable(f"v{pid}", 0, 5) == 0})  # fmt: skip
    listings: list[tuple[str, list[dict[str, Any]]]] = [("/shop/", items)]
    listings += [(f"/product-category/{c}/", [p for p in items if p["category"] == c])
                 for c in WOO_CATEGORIES]
    listings += [(f"/product-tag/{t}/", [p for p in items if p["tag"] == t]) for t in WOO_TAGS]
    pages: list[tuple[str, int, list[dict[str, Any]]]] = []  # (url, size, products shown)
    for base, shown in listings:
        for order in [None, *WOO_ORDERS]:
            ordered = shown if order is None else sorted(
                shown, key=lambda p: _stable(f"{order}{p['id']}", 0, 10**6))
            for n in range(0, len(ordered), WOO_PER_PAGE):
                path = base if n == 0 else f"{base}page/{n // WOO_PER_PAGE + 1}/"
                url = path if order is None else f"{path}?orderby={order}"
                pages.append((url, _stable(url, 38_000, 52_000), ordered[n : n + WOO_PER_PAGE]))
    carts = []  # (url, status, size): what a crawler following an add-to-cart link gets
    for url, size, shown in pages:
        for p in shown:
            link = f"{url}{'&' if '?' in url else '?'}add-to-cart={p['id']}"
            if p["variable"]:
                carts.append((link, 302, 0))  # "choose an option": redirected to the product
            else:  # the listing again, with the notice naming the product
                carts.append((link, 200, size + 96 + len(p["name"])))
    rng.shuffle(carts)
    product_pages = [(f"/product/{p['slug']}/", _stable(p["slug"], 60_000, 90_000)) for p in items]
    plain = [(u, size) for u, size, _ in pages if "?" not in u]
    sorted_pages = [(u, size) for u, size, _ in pages if "?" in u]
    rows: list[dict[str, Any]] = []
    start = START

    def at(day: int) -> datetime:
        return start + timedelta(days=day, seconds=rng.randrange(86_400))

    per_day = len(carts) // days + 1
    for day in range(days):
        for bot in WOO_BOTS:  # each crawler re-reads part of the catalog every day
            for url, size in rng.sample(plain, len(plain) // 3) + rng.sample(product_pages, 150):
                rows.append({**bot, s.TIME: at(day), s.URL: url, s.BYTES: size})
        for url, status, size in carts[day * per_day : (day + 1) * per_day]:
            rows.append({**rng.choice(WOO_BOTS), s.TIME: at(day), s.URL: url, s.STATUS: status,
                         s.BYTES: size})
        for url, status, size in rng.sample(carts[: day * per_day], min(day * per_day, per_day // 4)):
            rows.append({**rng.choice(WOO_BOTS), s.TIME: at(day), s.URL: url, s.STATUS: status,
                         s.BYTES: size})  # a few links fetched again
        for visit in range(250):  # people
            client = f"203.0.{rng.randrange(256)}.{rng.randrange(1, 255)}"
            person = {**HUMAN, s.CLIENT: client, s.USER_AGENT: WOO_BROWSER}
            when = at(day)
            trail = [("/", 31_000)] + rng.sample(plain, 2) + rng.sample(product_pages, 2)
            if rng.random() < 0.3:
                trail += rng.sample(sorted_pages, 1)  # sorting a listing
            if rng.random() < 0.2:
                trail += [("/?wc-ajax=add_to_cart", 420), ("/cart/", 28_000)]
            for i, (url, size) in enumerate(trail):
                method = "POST" if "wc-ajax" in url else "GET"
                rows.append({**person, s.TIME: when + timedelta(seconds=20 * i), s.URL: url,
                             s.METHOD: method, s.BYTES: size})
    rows.sort(key=lambda r: r[s.TIME])
    return rows


def combined_lines(rows: Iterable[Mapping[str, Any]]) -> str:
    """Request rows as an Apache/nginx `combined` log."""
    out = []
    for r in rows:
        r = {**DEFAULTS, **r}
        when = r[s.TIME].strftime("%d/%b/%Y:%H:%M:%S +0000")
        size = "-" if r[s.BYTES] is None else r[s.BYTES]
        out.append(f'{r[s.CLIENT]} - - [{when}] "{r[s.METHOD]} {r[s.URL]} {r[s.PROTOCOL]}" '
                   f'{r[s.STATUS]} {size} "{r[s.REFERER]}" "{r[s.USER_AGENT]}"\n')
    return "".join(out)


# -- a Shopify shop ----------------------------------------------------------------------------

SHOPIFY_ORDERS = [
    "manual", "best-selling", "title-ascending", "title-descending", "price-ascending",
    "price-descending", "created-ascending", "created-descending",
]  # fmt: skip
SHOPIFY_COLLECTIONS = [f"{a}-{b}" for a in ("summer", "winter", "outdoor", "city", "kids", "travel")
                       for b in ("shoes", "bags", "hats", "coats", "gloves")]  # fmt: skip
SHOPIFY_PER_PAGE = 24


def shopify(days: int = 7, seed: int = 3) -> list[dict[str, Any]]:
    """A Shopify shop's access log as request rows: 30 collections of 30 to 130 products, 24
    a page (`/collections/{name}?page=N`), each page linked in Shopify's 8 sort orders
    (`?sort_by=price-ascending`, `?page=2&sort_by=...`). Crawlers read the lists, their sorted
    copies (a sorted page is the same template and as many products: its size within a few
    hundred bytes of the list's) and the products; people read lists and products, and sort
    a list now and then."""
    rng = random.Random(seed)
    lists: list[tuple[str, int]] = []  # (url, size): every page of every collection
    sorted_lists: list[tuple[str, int]] = []
    for i, name in enumerate(SHOPIFY_COLLECTIONS):
        products = 30 + (i * 37) % 100
        for page in range(1, (products + SHOPIFY_PER_PAGE - 1) // SHOPIFY_PER_PAGE + 1):
            url = f"/collections/{name}" + (f"?page={page}" if page > 1 else "")
            size = _stable(url, 70_000, 95_000)
            lists.append((url, size))
            for order in SHOPIFY_ORDERS:
                query = f"sort_by={order}" if page == 1 else f"page={page}&sort_by={order}"
                sorted_url = f"/collections/{name}?{query}"
                sorted_lists.append((sorted_url, size + _stable(sorted_url, -300, 300)))
    products = [(f"/products/{letters(i)}-{letters(i * 7 + 3)}", _stable(f"p{i}", 50_000, 80_000))
                for i in range(600)]
    rows: list[dict[str, Any]] = []

    def at(day: int) -> datetime:
        return START + timedelta(days=day, seconds=rng.randrange(86_400))

    for day in range(days):
        for bot in WOO_BOTS:  # each crawler reads part of the lists, their orders and products
            fetched = rng.sample(lists, len(lists) // 2) + rng.sample(sorted_lists, len(sorted_lists) // 6)
            for url, size in fetched + rng.sample(products, 120):
                rows.append({**bot, s.TIME: at(day), s.URL: url, s.BYTES: size})
        for visit in range(200):  # people
            person = {**HUMAN, s.CLIENT: f"198.51.{rng.randrange(256)}.{rng.randrange(1, 255)}",
                      s.USER_AGENT: WOO_BROWSER}
            trail = [("/", 40_000)] + rng.sample(lists, 2) + rng.sample(products, 2)
            if rng.random() < 0.3:
                trail += rng.sample(sorted_lists, 1)
            when = at(day)
            for i, (url, size) in enumerate(trail):
                rows.append({**person, s.TIME: when + timedelta(seconds=15 * i), s.URL: url,
                             s.BYTES: size})
    rows.sort(key=lambda r: r[s.TIME])
    return rows

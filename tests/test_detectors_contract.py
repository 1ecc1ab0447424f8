"""The detector contract, checked for every detector in the registry:

- on empty traffic it returns exactly FINDING_SCHEMA, no rows;
- on a clean content site (home, sections, articles, real pagination, crawled again and again
  by verified search engines and read by people) it returns no rows;
- its findings carry its own kind (the module's name), a valid severity, at most 5 examples
  that are real URLs of `traffic.urls`, and evidence that is a JSON object.
"""

from __future__ import annotations

import json
import random
from datetime import datetime, timedelta, timezone

import polars as pl
import pytest

from logtrap import schema as s
from logtrap.detectors import REGISTRY, run_detectors
from logtrap.findings import KINDS, MAX_EXAMPLES
from logtrap.patterns import add_patterns
from logtrap.settings import Settings
from logtrap.traffic import Tally, Traffic

HOST = "www.example.org"
T0 = datetime(2026, 3, 2, tzinfo=timezone.utc)
GOOGLE = ("Googlebot", "search", "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)")
BING = ("bingbot", "search", "Mozilla/5.0 (compatible; bingbot/2.0; +http://www.bing.com/bingbot.htm)")
META = ("meta-externalagent", "ai", "meta-externalagent/1.1 (+https://developers.facebook.com/docs/sharing/webmasters/crawler)")
BROWSER = (None, None, "Mozilla/5.0 (X11; Linux x86_64; rv:130.0) Gecko/20100101 Firefox/130.0")
ADDRESS = {"Googlebot": "66.249.66.1", "bingbot": "40.77.167.1", "meta-externalagent": "57.141.0.9"}
WORDS = ["crawl", "budget", "river", "stone", "maple", "harbor", "signal", "lantern", "orbit", "quiet"]


def _row(url: str, at: datetime, agent: tuple, *, status: int = 200, size: int = 5000,
         client: str | None = None, host: str = HOST) -> dict:
    name, kind, ua = agent
    return {
        s.HOST: host,
        s.CLIENT: client or ADDRESS.get(name, "203.0.113.7"),
        s.TIME: at,
        s.METHOD: "GET",
        s.URL: url,
        s.PATH: url.split("?")[0],
        s.QUERY: url.split("?", 1)[1] if "?" in url else None,
        s.PROTOCOL: "HTTP/1.1",
        s.STATUS: status,
        s.BYTES: size,
        s.REFERER: None,
        s.USER_AGENT: ua,
        s.REQUEST_TIME: None,
        s.SOURCE: "access.log",
        s.IS_BOT: name is not None,
        s.BOT_NAME: name,
        s.BOT_KIND: kind,
    }


def _slug(i: int) -> str:
    return "-".join(WORDS[(i * k + k) % len(WORDS)] for k in (1, 3, 7))


def _content(rng: random.Random) -> list[tuple[str, int]]:
    """The site's real pages with their sizes: home, 50 sections of 3 real pages, 500 articles."""
    pages = [("/", 18000)]
    for sec in range(50):
        pages.append((f"/section/{sec}/", 9000 + 13 * sec))
        pages += [(f"/section/{sec}/?page={p}", 8000 + 13 * sec + 7 * p) for p in (2, 3)]
    pages += [(f"/article/{i}/{_slug(i)}", 6000 + 11 * i + rng.randrange(5)) for i in range(500)]
    return pages


def clean_rows(days: int = 7) -> list[dict]:
    """A real site over a week: found on day one, then re-crawled and read."""
    rng = random.Random(7)
    pages = _content(rng)
    rows = []
    for day in range(days):
        start = T0 + timedelta(days=day)
        crawl = pages if day == 0 else rng.sample(pages, 250)
        for i, (url, size) in enumerate(crawl):
            rows.append(_row(url, start + timedelta(seconds=60 * i), GOOGLE, size=size))
        for i, (url, size) in enumerate(rng.sample(pages, 80)):
            rows.append(_row(url, start + timedelta(seconds=300 * i + 7), BING, size=size))
        for i in range(300):
            url, size = pages[0] if i % 5 == 0 else rng.choice(pages)
            rows.append(_row(url, start + timedelta(seconds=250 * i + 3), BROWSER, size=size,
                             client=f"198.51.100.{i % 200}"))
        rows.append(_row("/robots.txt", start, GOOGLE, size=120))
    return rows


def trap_rows() -> list[dict]:
    """The clean site plus a zoo of traps growing all week, so every detector has something to
    report; and a shop whose bots mostly fetch session-id copies of its home page, hammered on
    two routes by meta-externalagent."""
    rows = clean_rows()
    for i in range(3000):
        at = T0 + timedelta(seconds=200 * i)
        rows.append(_row(f"/calendar?date={1990 + i // 12}-{i % 12 + 1:02d}", at, GOOGLE, size=2100))
        rows.append(_row(f"/?sid={random.Random(i).getrandbits(64):016x}", at, GOOGLE, size=18000))
        colors, sizes, sorts = ["red", "blue", "green"], ["s", "m", "l", "xl"], ["price", "new"]
        rows.append(_row(
            f"/section/{i % 50}/?color={colors[i % 3]}&size={sizes[i // 3 % 4]}&sort={sorts[i // 12 % 2]}"
            if i % 2 else f"/section/{i % 50}/?sort={sorts[i % 2]}&size={sizes[i // 7 % 4]}&color={colors[i % 3]}",
            at, BING, size=9000 + i % 7))
        rows.append(_row(f"/section/{i % 50}/?page={100 + i}", at, GOOGLE, size=1500))
        rows.append(_row("/x" + "/related" * (1 + i % 40), at, BING, size=7000))
        rows.append(_row(f"/s/{random.Random(-i).getrandbits(40):010x}z", at, GOOGLE, size=900))
        rows.append(_row(f"/search?q=word{i}", at, BING, size=3000 + i % 50))
        rows.append(_row(f"/missing/{i}/{_slug(i)}", at, GOOGLE, size=512))
    shop = "shop.example.org"
    for i in range(100):
        rows.append(_row(f"/product/{i}/{_slug(i)}", T0 + timedelta(minutes=i), GOOGLE,
                         size=7000 + 17 * i, host=shop))
    for i in range(1500):
        rows.append(_row(f"/?PHPSESSID={random.Random(i).getrandbits(64):016x}",
                         T0 + timedelta(minutes=3 * i), GOOGLE, size=15000, host=shop))
    for i in range(300):
        rows.append(_row(f"/asl/{i}", T0 + timedelta(seconds=i // 2), META, host=shop))
        rows.append(_row(f"/psl/{i}", T0 + timedelta(seconds=i // 2), META, host=shop))
    for i in range(40):
        rows.append(_row(f"/article/{i}/{_slug(i)}", T0 + timedelta(hours=2, seconds=i), GOOGLE,
                         client="10.9.8.7"))
    return rows


def traffic_of(rows: list[dict]) -> Traffic:
    schema = {**s.REQUEST_SCHEMA, **s.BOT_SCHEMA}
    tally = Tally()
    tally.add(add_patterns(pl.DataFrame(rows, schema=schema), Settings()))
    traffic = tally.finish()
    verdict = (
        pl.when(pl.col(s.CLIENT).str.starts_with("66.249.") | pl.col(s.CLIENT).str.starts_with("40.77."))
        .then(pl.lit("verified"))
        .otherwise(pl.lit("fake"))
    )
    return traffic.replace(claims=traffic.claims.with_columns(verdict.alias(s.VERIFIED)))


@pytest.fixture(scope="module")
def clean() -> Traffic:
    return traffic_of(clean_rows())


@pytest.fixture(scope="module")
def traps() -> Traffic:
    return traffic_of(trap_rows())


@pytest.fixture(scope="module")
def trap_findings(traps) -> pl.DataFrame:
    return run_detectors(traps, Settings())


DETECTORS = pytest.mark.parametrize("detector", REGISTRY, ids=lambda d: d.kind)


def test_registry_covers_each_kind_once_in_design_order():
    kinds = [d.kind for d in REGISTRY]
    assert len(kinds) == len(set(kinds))
    assert set(kinds) <= set(KINDS)
    assert kinds == [k for k in KINDS if k in kinds]


@DETECTORS
def test_kind_matches_its_module(detector):
    assert detector.detect.__module__ == f"logtrap.detectors.{detector.kind}"


@DETECTORS
def test_empty_traffic_gives_exactly_the_finding_schema(detector):
    out = detector.detect(Tally().finish(), Settings())
    assert out.schema == pl.Schema(s.FINDING_SCHEMA)
    assert out.height == 0


@DETECTORS
def test_silent_on_a_clean_content_site(detector, clean):
    out = detector.detect(clean, Settings())
    assert out.schema == pl.Schema(s.FINDING_SCHEMA)
    assert out.select(s.PATTERN, s.EVIDENCE).rows() == []


@DETECTORS
def test_findings_follow_the_contract(detector, traps):
    out = detector.detect(traps, Settings())
    assert out.schema == pl.Schema(s.FINDING_SCHEMA)
    assert out.height > 0  # the zoo has every trap: a contract checked on no rows checks nothing
    for row in out.iter_rows(named=True):
        real_urls = set(traps.urls.filter(pl.col(s.HOST) == row[s.HOST])[s.URL].to_list())
        assert row[s.KIND] == detector.kind
        assert row[s.SEVERITY] in s.SEVERITIES
        assert 0 <= row[s.WASTED_REQUESTS] <= row[s.REQUESTS]
        assert len(row[s.EXAMPLES]) <= MAX_EXAMPLES
        assert set(row[s.EXAMPLES]) <= real_urls
        assert isinstance(json.loads(row[s.EVIDENCE]), dict)
        assert row[s.ADVICE]


def test_run_detectors_ranks_every_kind_found(trap_findings):
    assert set(trap_findings[s.KIND].to_list()) == {d.kind for d in REGISTRY}
    assert trap_findings.schema == pl.Schema(s.FINDING_SCHEMA)

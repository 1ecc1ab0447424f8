"""URL -> pattern: exact patterns for real-looking URLs, and the properties every pattern has."""

from __future__ import annotations

import polars as pl
import pytest
from hypothesis import assume, example, given, settings as hsettings, strategies as st

from builders import letters, pinned_string_bytes
from logtrap import patterns
from logtrap import schema as s
from logtrap.patterns import TRACKING, PatternCache, add_patterns, merge_names, section, url_pattern
from logtrap.settings import Settings

CASES = [
    # content keeps its words; ids and slugs become placeholders
    ("/", "/"),
    ("/about", "/about"),
    ("/about-us", "/about-us"),
    ("/shop/shoes/", "/shop/shoes/"),
    ("/article/123/456", "/article/{n}/{n}"),
    ("/article/12/my-first-post", "/article/{n}/{slug}"),
    ("/blog/the_long_title_here.html", "/blog/{slug}.html"),
    ("/products/iphone15", "/products/iphone15"),
    ("/covid19/stats", "/covid19/stats"),
    # a word and a number joined by - or _: the number is an id of one template
    ("/forum/thread-12345.html", "/forum/thread-{n}.html"),
    ("/products/item_37?variant=5", "/products/item_{n}?variant"),
    ("/recipes/12-tomato/", "/recipes/{n}-tomato/"),
    ("/blog/page-2", "/blog/page-{n}"),
    ("/static/app.min.css", "/static/app.min.css"),
    ("/img/1234.png", "/img/{n}.png"),
    ("/v/3.5", "/v/{n}"),
    # dates and calendars
    ("/calendar?date=2071-04", "/calendar?date"),
    ("/news/2024-05-01", "/news/{date}"),
    ("/news/2024-05", "/news/{date}"),
    ("/news/2024_05_01.html", "/news/{date}.html"),
    ("/events/2019/03/", "/events/{n}/{n}/"),
    ("/archive/20240501", "/archive/{n}"),
    # hashes, uuids, random tokens
    ("/p/550e8400-e29b-41d4-a716-446655440000", "/p/{hex}"),
    ("/commit/5f2b8c1d9e0a", "/commit/{hex}"),
    ("/s/a8fk21qz", "/s/{token}"),
    ("/s/Xk3jQm9pL", "/s/{token}"),
    ("/s/895paway", "/s/{token}"),
    ("/deadbeef", "/deadbeef"),  # letters only: could be a word
    # query names: sorted, deduplicated, values dropped
    ("/section/3?sort=price&color=red&size=9", "/section/{n}?color&size&sort"),
    ("/section/3?size=9&color=red&sort=price", "/section/{n}?color&size&sort"),
    ("/list?a=1&a=2", "/list?a"),
    ("/list?", "/list"),
    ("/list?&&", "/list"),
    ("/?1699999999", "/?{n}"),
    # tracking becomes one marker; session names stay
    ("/a?utm_source=x&utm_medium=y", f"/a?{TRACKING}"),
    ("/a?page=2&gclid=abc&FBCLID=1", f"/a?page&{TRACKING}"),
    ("/?sid=0a1b2c3d4e5f", "/?sid"),
    ("/?PHPSESSID=abc", "/?PHPSESSID"),
    ("/cart;jsessionid=0A1B2C3D?x=1", "/cart;jsessionid?x"),
    # request-target oddities
    ("", ""),
    ("*", "*"),
    ("http://example.org/abs/7?x=1", "/abs/{n}?x"),
    ("https://example.org", "/"),
    ("/x#frag", "/x"),
    ("//double//slash", "//double//slash"),
    ("/%E2%82%AC/12", "/%E2%82%AC/{n}"),
]


@pytest.mark.parametrize(("url", "pattern"), CASES)
def test_exact_patterns(url, pattern):
    assert url_pattern(url) == pattern


def test_add_patterns_matches_url_pattern_and_keeps_rows():
    urls = [u for u, _ in CASES] + [None]
    frame = pl.DataFrame({s.URL: urls, "i": range(len(urls))})
    out = add_patterns(frame)
    assert out["i"].to_list() == list(range(len(urls)))
    assert out[s.PATTERN].to_list() == [p for _, p in CASES] + [""]
    assert out.columns == [s.URL, "i", s.PATTERN, s.SECTION]


def test_add_patterns_is_lazy_for_lazy_input():
    out = add_patterns(pl.LazyFrame({s.URL: ["/a/1"]}))
    assert isinstance(out, pl.LazyFrame)
    assert out.collect()[s.PATTERN].to_list() == ["/a/{n}"]


def test_add_patterns_replaces_existing_columns():
    frame = pl.DataFrame({s.URL: ["/a/1"], s.PATTERN: ["old"], s.SECTION: ["old"]})
    assert add_patterns(frame).row(0) == ("/a/1", "/a/{n}", "/a/{n}")


def test_site_settings_add_tracking_names():
    site = Settings(tracking_params=("ref",))
    assert url_pattern("/a?ref=x&page=2", site) == f"/a?page&{TRACKING}"
    assert url_pattern("/a?ref=x&page=2") == "/a?page&ref"


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("/shop/shoes/1234?page=2", "/shop/shoes"),
        ("/article/9/my-first-post", "/article/{n}"),
        ("/", "/"),
        ("/about", "/about"),
        ("/about/", "/about"),
        ("", "/"),
        ("*", "*"),
    ],
)
def test_section(url, expected):
    assert section(url) == expected


def test_content_patterns_stay_apart_from_trap_patterns():
    content = ["/", "/section/4/", "/section/4/?page=2", "/article/7/my-first-post", "/about-us"]
    traps = ["/calendar?date=2071-04", "/?sid=0a1b2c3d4e5f", "/s/a8fk21qz", "/section/4/?color=r&size=m&sort=new"]
    assert not {url_pattern(u) for u in content} & {url_pattern(u) for u in traps}


# -- properties --------------------------------------------------------------------------------

SEGMENT = st.one_of(
    st.from_regex(r"[a-z]{1,8}", fullmatch=True),
    st.from_regex(r"[0-9]{1,10}", fullmatch=True),
    st.from_regex(r"[A-Za-z0-9]{6,12}", fullmatch=True),
    st.from_regex(r"[a-z]{2,6}(-[a-z0-9]{1,6}){1,4}", fullmatch=True),
    st.from_regex(r"[0-9]{4}-[0-9]{2}(-[0-9]{2})?", fullmatch=True),
    st.text(max_size=6),
)
NAME = st.from_regex(r"[a-z_]{1,8}", fullmatch=True)
VALUE = st.from_regex(r"[A-Za-z0-9%-]{0,10}", fullmatch=True)
URLS = st.builds(
    lambda segs, params: "/" + "/".join(segs) + ("?" + "&".join(f"{k}={v}" for k, v in params) if params else ""),
    st.lists(SEGMENT, max_size=6),
    st.lists(st.tuples(NAME, VALUE), max_size=5),
)
ANY_TEXT = st.one_of(st.text(max_size=200), URLS)


@hsettings(max_examples=300, deadline=None)
@given(ANY_TEXT)
def test_pattern_is_total_and_idempotent(url):
    pattern = url_pattern(url)
    assert isinstance(pattern, str)
    assert url_pattern(pattern) == pattern


@hsettings(max_examples=100, deadline=None)
@given(st.lists(st.tuples(NAME, VALUE), min_size=1, max_size=5), st.randoms())
def test_query_order_does_not_matter(params, rnd):
    shuffled = list(params)
    rnd.shuffle(shuffled)
    def url(ps):
        return "/p?" + "&".join(f"{k}={v}" for k, v in ps)
    assert url_pattern(url(params)) == url_pattern(url(shuffled))


TRACKERS = st.sampled_from(["utm_source", "utm_campaign", "gclid", "fbclid", "msclkid", "mc_cid", "UTM_Term"])


@hsettings(max_examples=100, deadline=None)
@given(URLS, st.lists(st.tuples(TRACKERS, VALUE), min_size=1, max_size=3))
def test_tracking_params_do_not_change_the_content_pattern(url, trackers):
    # A "#" starts the fragment: parameters after it are not parameters at all.
    assume("#" not in url)
    tracked = url + ("&" if "?" in url else "?") + "&".join(f"{k}={v}" for k, v in trackers)
    path, _, query = url_pattern(tracked).partition("?")
    names = query.split("&")
    assert TRACKING in names
    # names are sorted: `{tracking}` may come first, before `|` or `~` (found by Hypothesis)
    content = "&".join(n for n in names if n != TRACKING)
    assert (f"{path}?{content}" if content else path) == url_pattern(url)


def test_garbage_never_raises():
    for text in ["%", "%%%", "?", "??", "&=&", "\x00\x01\x7f", "/" * 5000, "a" * 100_000, "/\u20ac/\ud7ff"]:
        assert url_pattern(url_pattern(text)) == url_pattern(text)


def test_cache_computes_each_url_once_and_stays_bounded():
    cache = PatternCache(max_urls=3)
    first = add_patterns(pl.DataFrame({s.URL: ["/a/1", "/a/2", "/a/1"]}), cache=cache)
    assert first[s.PATTERN].to_list() == ["/a/{n}"] * 3
    assert len(cache) == 2
    # two new URLs would pass the cap: only this batch's URLs stay
    second = add_patterns(pl.DataFrame({s.URL: ["/b/x-y-z", "/a/2", "/c?utm_source=x"]}), cache=cache)
    assert second[s.PATTERN].to_list() == ["/b/{slug}", "/a/{n}", "/c?{tracking}"]
    assert sorted(cache.frame[s.PATTERN].to_list()) == ["/a/{n}", "/b/{slug}", "/c?{tracking}"]
    # other tracking parameters: the cached patterns no longer hold
    other = Settings(tracking_params=("ref",))
    third = add_patterns(pl.DataFrame({s.URL: ["/a/2?ref=1"]}), other, cache=cache)
    assert third[s.PATTERN].to_list() == ["/a/{n}?{tracking}"]
    assert len(cache) == 1


def test_cache_past_its_cap_pins_no_buffer_of_evicted_urls():
    # URLs seen again come from many earlier batches; kept as views into those batches'
    # buffers they kept every one alive, and the cache grew with the logs (~60 MB at 10M lines)
    cache = PatternCache(max_urls=1000)

    def url(batch: int, i: int) -> str:
        return f"/a-long-section/{letters(batch * 100_000 + i)}zzzzzzzzzz"

    for batch in range(20):
        again = [url(b, i) for b in range(max(0, batch - 10), batch) for i in range(10)]
        add_patterns(pl.DataFrame({s.URL: [url(batch, i) for i in range(900)] + again}), cache=cache)
    assert len(cache) == 1000
    values = cache._cache.values  # a pattern per URL here: its letters are a literal segment
    assert values.height == 1000
    pinned, needed = pinned_string_bytes(values)
    assert values[s.SECTION].equals(values[s.PATTERN], check_names=False)  # two levels
    assert needed == 2 * values[s.PATTERN].str.len_bytes().sum()
    assert pinned == needed


@pytest.mark.parametrize("fast", [True, False], ids=["c", "polars"])
def test_cache_under_its_cap_pins_only_its_own_strings(fast, monkeypatch):
    # new URLs' patterns are kept, each distinct one once, batch after batch: none may point
    # into a batch's URLs, nor into the patterns computed for a batch's new URLs (a trap's
    # thousand URLs a batch share a pattern, kept once)
    if not fast:
        monkeypatch.setattr(patterns, "_fast", None)
    cache = PatternCache(max_urls=100_000)

    def url(batch: int, i: int) -> str:
        return f"/a-long-section/{letters(batch * 100_000 + i)}zzzzzzzzzz/x?utm_source=aaaaaaaaaaaa"

    for batch in range(40):
        again = [url(b, i) for b in range(max(0, batch - 10), batch) for i in range(10)]
        odd = [f"/\u00e9/{letters(batch)}-y-zzzzzzzzzzzzzzzzzzzz", "/short"]  # not ASCII: Polars
        trap = [f"/alongsharedsection/{batch * 1000 + i}" for i in range(100)]
        add_patterns(pl.DataFrame({s.URL: [url(batch, i) for i in range(900)] + again + odd + trap}),
                     cache=cache)
    assert len(cache) == 40 * 1002 - 39  # "/short" once
    assert sorted(cache.frame[s.PATTERN].value_counts().filter(pl.col("count") > 1).rows()) == [
        ("/alongsharedsection/{n}", 4000), ("/\u00e9/{slug}", 40)]
    values = cache._cache.values
    assert values.height == cache.frame.select(s.PATTERN, s.SECTION).n_unique() and values.n_chunks() == 1
    pinned, needed = pinned_string_bytes(values)
    lengths = pl.concat([values[c].str.len_bytes() for c in (s.PATTERN, s.SECTION)])
    short = lengths.filter(lengths <= 12).sum()
    assert needed <= pinned <= needed + short  # short strings sit in the views, or beside them


def test_cache_gives_the_same_patterns_as_no_cache():
    urls = ["/article/12/my-first-post", "/s/a8fk21qz", "/", None, "/a/1#x", "http://h/x/2"]
    cache = PatternCache()
    for batch in (urls[:3], urls, urls[2:]):
        frame = pl.DataFrame({s.URL: batch}, schema={s.URL: pl.String})
        assert add_patterns(frame, cache=cache).equals(add_patterns(frame))


def merged(patterns: list[str], min_names: int = 3) -> dict[str, str]:
    pairs = pl.DataFrame({s.HOST: "-", s.PATTERN: patterns})
    out = merge_names(pairs, min_names)
    return dict(zip(out[s.PATTERN], out["merged"]))


def test_a_segment_of_many_names_is_one_template():
    tags = [f"/blog/tags/{t}" for t in ("python", "rust", "red-shoes")]
    assert merged(tags) == dict.fromkeys(tags, "/blog/tags/{name}")
    # one name fewer than needed: each keeps its own
    assert merged(tags[:2]) == {t: t for t in tags[:2]}


def test_names_merge_only_with_patterns_alike_in_everything_else():
    patterns = [f"/tag/{t}/" for t in "abc"] + ["/tag/a/feed", "/tag/b?page", "/tag/c.html"]
    assert merged(patterns) == {
        "/tag/a/": "/tag/{name}/", "/tag/b/": "/tag/{name}/", "/tag/c/": "/tag/{name}/",
        # another path after the name, other parameters, another extension: apart
        "/tag/a/feed": "/tag/a/feed", "/tag/b?page": "/tag/b?page", "/tag/c.html": "/tag/c.html",
    }


def test_the_first_level_is_a_site_s_sections_and_stays():
    sections = [f"/{name}" for name in ("news", "sports", "weather", "about")]
    assert merged(sections) == {p: p for p in sections}


def test_names_join_a_slug_template_and_deeper_levels_merge_first():
    assert merged(["/blog/{slug}.html", "/blog/x.html", "/blog/y.html", "/blog/z.html"]) == {
        "/blog/{slug}.html": "/blog/{slug}.html", **{f"/blog/{c}.html": "/blog/{slug}.html" for c in "xyz"}}
    wiki = [f"/wiki/{web}/{topic}" for web in ("Main", "Help", "Sandbox") for topic in "pqr"]
    assert set(merged(wiki).values()) == {"/wiki/{name}/{name}"}
    assert merged(wiki, min_names=0) == {p: p for p in wiki}  # 0: names are kept


def test_a_facet_in_the_path_is_its_name_and_a_value():
    # a shop's "SEO" layered navigation: `/shoes/color-red/size-42/`, every combination a
    # pattern of its own (2,874 patterns in a generated shop's log, none a finding)
    shop = ["/shoes/color-red/size-{n}/", "/shoes/color-blue/size-xl/", "/shoes/Color_Green.html",
            "/shoes/size-{n}/color-red/", "/shoes/size-m/", "/bags/brand-acme/", "/bags/brand-zen/"]
    assert merged(shop) == {
        "/shoes/color-red/size-{n}/": "/shoes/color-{value}/size-{value}/",
        "/shoes/color-blue/size-xl/": "/shoes/color-{value}/size-{value}/",
        "/shoes/Color_Green.html": "/shoes/Color_{value}.html",  # any case, `_`, an extension
        # the orders stay apart: a rule has to spell each
        "/shoes/size-{n}/color-red/": "/shoes/size-{value}/color-{value}/",
        "/shoes/size-m/": "/shoes/size-{value}/",
        # two brands on the host: a facet name needs three values
        "/bags/brand-acme/": "/bags/brand-acme/", "/bags/brand-zen/": "/bags/brand-zen/",
    }
    # or the name a segment, the value the next (Drupal's pretty paths, Magento's long URLs)
    long = [f"/p/shoes/color/{c}/Size/{z}.html" for c in ("red", "blue", "green") for z in "sml"]
    assert set(merged(long).values()) == {"/p/shoes/color/{value}/Size/{value}.html"}
    hats = ["/p/hats/color/blue.html", "/p/hats/color/green.html"]
    assert merged(hats) == {h: h for h in hats}  # two colours alone: pages of their own still
    # two values beside a facet that merges: a material, cotton or wool, beside colours
    beside = ["/shoes/color-red/material-wool/", "/shoes/color-blue/material-cotton/", "/shoes/color-green/"]
    assert set(merged(beside).values()) == {"/shoes/color-{value}/material-{value}/", "/shoes/color-{value}/"}
    # a number is a value space: its name merges alone
    assert merged(["/hats/size-{n}/"]) == {"/hats/size-{n}/": "/hats/size-{value}/"}
    # a third brand merges them; one merged before merges the others (it stands for many)
    assert set(merged(shop[5:] + ["/bags/brand-peak/"]).values()) == {"/bags/brand-{value}/"}
    assert set(merged(shop[5:] + ["/hats/brand-{value}/"]).values()) == {
        "/bags/brand-{value}/", "/hats/brand-{value}/"}


def test_a_facet_name_that_is_a_section_or_a_page_s_name_stays():
    # the first level is a section; a word that is no filter's name is a page's; a host's
    # facets are its own
    pages = ["/color-red/", "/color-blue/", "/color-green/", "/blog/colour-theory",
             "/blog/red-shoes", "/blog/red-hats", "/blog/red-bags"]
    assert merged(pages, min_names=25) == {p: p for p in pages}
    pairs = pl.DataFrame({s.HOST: ["a", "a", "b"], s.PATTERN: ["/c/size-s", "/c/size-m", "/c/size-l"]})
    assert merge_names(pairs, 3)["merged"].to_list() == ["/c/size-s", "/c/size-m", "/c/size-l"]
    assert merged(pages[:3], min_names=0) == {p: p for p in pages[:3]}  # 0: names are kept


def test_merging_is_per_host():
    pairs = pl.DataFrame({s.HOST: ["a", "a", "b"], s.PATTERN: ["/t/x", "/t/y", "/t/z"]})
    assert merge_names(pairs, 3)["merged"].to_list() == ["/t/x", "/t/y", "/t/z"]


@hsettings(max_examples=100, deadline=None)
@given(st.lists(ANY_TEXT, max_size=40), st.integers(min_value=0, max_value=4))
def test_merging_names_is_total_keeps_levels_and_is_idempotent(urls, min_names):
    patterns = [url_pattern(u) for u in urls]
    out = merge_names(pl.DataFrame({s.HOST: "-", s.PATTERN: patterns}, schema={
        s.HOST: pl.String, s.PATTERN: pl.String}), min_names)
    assert sorted(out[s.PATTERN].to_list()) == sorted(set(patterns))

    def levels(p: str) -> tuple[int, str]:  # how deep, and the first level
        path = p.split("?", 1)[0]
        return path.count("/"), path.split("/")[1] if "/" in path else path

    for before, after in out.select(s.PATTERN, "merged").iter_rows():
        assert levels(after) == levels(before)
    again = merge_names(out.select(s.HOST, pl.col("merged").alias(s.PATTERN)), min_names)
    assert (again[s.PATTERN] == again["merged"]).all()


def test_stable_merges_are_those_with_no_literal_segment_after_them():
    feeds = [f"/tag/{t}/feed" for t in "abc"]
    pages = [f"/tag/{t}/" for t in "abc"]
    users = [f"/u/{user}/{tab}" for user in "abc" for tab in "xyz"]
    out = merge_names(pl.DataFrame({s.HOST: "-", s.PATTERN: feeds + pages + users}), 3,
                      stable_only=True)
    assert dict(zip(out[s.PATTERN], out["merged"])) == {
        **{p: p for p in feeds},  # `feed` after the name: more tags' pages could undo it
        **dict.fromkeys(pages, "/tag/{name}/"),
        **dict.fromkeys(users, "/u/{name}/{name}"),  # the deeper merge leaves no literal
    }


_SEGMENTS = st.lists(st.sampled_from(
    ["a", "b", "c", "feed", "{n}", "color-red", "color-blue", "color-{n}", "size-s", "size-m", "color"]
), min_size=2, max_size=4)
_PATHS = st.tuples(_SEGMENTS, st.sampled_from(["", "", "/", "?page"])).map(
    lambda p: "/" + "/".join(p[0]) + p[1])


@hsettings(max_examples=300, deadline=None)
@given(st.lists(_PATHS, max_size=20), st.lists(_PATHS, max_size=20), st.integers(2, 3))
@example(["/a/a/feed", "/a/b/feed", "/a/c/feed"], ["/a/a/b", "/a/a/c"], 3)  # a merge undone
@example(["/a/a", "/a/color-red"], ["/a/color-{n}"], 2)  # a facet found later
def test_a_stable_merge_is_never_undone_by_later_patterns(first, later, min_names):
    # what Tally keeps merged while reading (stable merges of the patterns so far) must be
    # merged alike by the merge at the end, over every pattern read: it cannot be split again
    def merges(patterns: list[str], stable_only: bool) -> dict[str, str]:
        frame = pl.DataFrame({s.HOST: "-", s.PATTERN: patterns}, schema={
            s.HOST: pl.String, s.PATTERN: pl.String})
        out = merge_names(frame, min_names, stable_only=stable_only)
        return dict(zip(out[s.PATTERN], out["merged"]))

    kept, at_the_end = merges(first, True), merges(first + later, False)
    kept_later = merges(first + later, True)
    for p in kept:
        for q in kept:
            if kept[p] == kept[q]:
                assert at_the_end[p] == at_the_end[q] and kept_later[p] == kept_later[q]


def test_url_pattern_of_none_is_an_error_not_the_pattern_none():
    from logtrap.errors import LogtrapError

    with pytest.raises(LogtrapError, match="^url_pattern takes a URL, not None$"):
        url_pattern(None)

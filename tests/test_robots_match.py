"""robots_match.py: the vectorised matcher answers exactly as Protego does (Hypothesis, on
generated rules and URLs with escapes, non-ASCII, `*`, `$`, Allow/Disallow precedence and
Protego's own quirks), and the Polars normal form equals the per-URL one."""

from __future__ import annotations

import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings as hsettings, strategies as st

from logtrap import robots_match as m

# Pieces a logged URL or a rule value is made of: the characters quoting treats differently
# (reserved, `%` escapes valid or not, of kept characters or not, non-ASCII, `$`, `*`, `#`)
# and the names Protego treats specially.
PIECES = st.sampled_from([
    "a", "B", "7", "-", ".", "_", "~", "/", "=", "?", "&", ";", ":", "@", "+", ",", "!", "'",
    "(", "[", "]", "|", "^", "`", "{", "\\", '"', "<", " ", "*", "$", "#",
    "%", "%2F", "%2f", "%25", "%41", "%3D", "%3d", "%2A", "%24", "%C3%A9", "%e9", "%zz", "%4",
    "é", "ツ", "\t", "robots.txt", "index.html", "sid=", "page", "//",
])  # fmt: skip


@st.composite
def urls(draw):
    body = "".join(draw(st.lists(PIECES, max_size=8)))
    return draw(st.sampled_from(["/", "/", "/", "http://h.example/", "*", ""])) + body


@st.composite
def rule_values(draw, seen):
    """A value cut from a URL (so rules often match), or made of pieces; with `*`s and `$`."""
    if seen and draw(st.booleans()):
        url = draw(st.sampled_from(seen))
        value = url[: draw(st.integers(0, len(url)))] or "/"
    else:
        value = "/" + "".join(draw(st.lists(PIECES, max_size=5)))
    if draw(st.booleans()):
        at = draw(st.integers(0, len(value)))
        value = value[:at] + "*" + value[at:]
    if draw(st.booleans()):
        value += "$"
    return draw(st.sampled_from(["", "", "", "http://h.example"])) + value


@st.composite
def cases(draw):
    seen = draw(st.lists(urls(), min_size=1, max_size=12))
    lines = draw(st.lists(st.tuples(st.sampled_from(["Disallow", "Allow", "disallow"]), rule_values(seen)),
                          min_size=1, max_size=4))  # fmt: skip
    return [f"{field}: {value}" for field, value in lines], seen


@hsettings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(cases())
def test_vectorised_matcher_agrees_with_protego(case):
    lines, seen = case
    assert m.blocked_by(lines, seen) == m.blocked(m.matcher(lines), seen), lines


@given(st.lists(st.text(st.characters(min_codepoint=0x21, max_codepoint=0x7E), max_size=20), max_size=10))
def test_polars_normal_form_equals_the_per_url_one(texts):
    paths = ["/" + t for t in texts]
    assert m.normalise(pl.Series(paths, dtype=pl.String)).to_list() == [m._normal(p) for p in paths]


@pytest.mark.parametrize(
    ("lines", "url", "expected"),
    [
        (["Disallow: /a$"], "/a%24", True),  # Protego also reads `$` as a literal dollar
        (["Disallow: /", "Allow: /x/index.html"], "/x/", False),  # index.html allows its folder
        (["Disallow: /"], "/robots.txt?x=1", False),  # robots.txt itself is always allowed
        (["Disallow: /a%2fb"], "/a/b", False),  # an escaped slash is not a slash
        (["Disallow: /a%3Db"], "/a=b", True),  # an escaped `=` is one
        (["Disallow: /*.php$"], "/x.php?y", False),
    ],
)
def test_matcher_quirks_both_ways(lines, url, expected):
    assert (m.blocked_by(lines, [url]), m.blocked(m.matcher(lines), [url])) == ([expected], [expected])


def test_only_rule_lines_are_accepted():
    with pytest.raises(ValueError, match="not an Allow or Disallow line"):
        m.rules(["Crawl-delay: 3"])

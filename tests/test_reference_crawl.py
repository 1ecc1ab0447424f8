"""The reference experiment of DESIGN.md, read back from its log: classifying every request by
URL pattern recovers the real-vs-trap split, and each of the five traps is found.

The split, precisely: a pattern is *flagged* when a URL-trap finding names it (its `pattern`),
or when it falls under a finding that spans many patterns: relative_loop names the loop's first
nesting as `<root>/<segment>/<segment>/{loop}` (`{loop}` = any deeper path, `{any}` = any
root), and a host-level finding (pattern null) lists its patterns in evidence. Flagged requests are the
requests of the flagged patterns, each pattern counted once. They must be within 2% of the
5,000 fetches (100 requests) of the truth's trap fetch count (4,500), and no real page's
pattern may be flagged.
"""

from __future__ import annotations

import re

import polars as pl
import pytest

from logtrap import schema as s
from logtrap.analysis import analyze
from logtrap.findings import to_records

from reference_crawl import BUDGET, write_reference_log

TRAPS = ("calendar", "session_id", "pagination", "facets", "relative_loop")
# kinds about clients, not URL patterns: they do not mark a pattern as a trap
NOT_URL_TRAPS = {"aggressive_bot", "fake_bot"}


@pytest.fixture(scope="module")
def crawl(tmp_path_factory):
    path = tmp_path_factory.mktemp("reference") / "access.log"
    truth = write_reference_log(path)
    return analyze([str(path)]), truth


def flagged_patterns(analysis) -> set[str]:
    known = set(analysis.patterns[s.PATTERN].to_list())
    flagged = set()
    for f in to_records(analysis.findings):
        if f.kind in NOT_URL_TRAPS:
            continue
        if f.pattern is None:
            flagged |= set(f.evidence.get("patterns") or ()) & known
        elif "{loop}" in f.pattern:
            spans = re.compile(
                re.escape(f.pattern).replace(r"\{loop\}", ".*").replace(r"\{any\}", "[^?]*")
            )
            flagged |= {p for p in known if spans.fullmatch(p)}
        else:
            flagged.add(f.pattern)
    return flagged


def test_the_whole_crawl_is_read(crawl):
    analysis, _ = crawl
    assert (analysis.stats.lines, analysis.stats.rejected) == (BUDGET, 0)
    assert analysis.patterns[s.BOT_REQUESTS].sum() == BUDGET


def test_pattern_split_recovers_the_real_vs_trap_split(crawl):
    analysis, truth = crawl
    flagged = flagged_patterns(analysis)
    patterns = analysis.patterns.group_by(s.PATTERN).agg(pl.col(s.REQUESTS).sum())
    trap_requests = patterns.filter(pl.col(s.PATTERN).is_in(list(flagged)))[s.REQUESTS].sum()
    assert truth["counts"]["traps"] == 4500
    assert abs(trap_requests - truth["counts"]["traps"]) <= 0.02 * BUDGET, trap_requests
    assert flagged & set(truth["patterns"]["real"]) == set()


@pytest.mark.parametrize("kind", TRAPS)
def test_each_trap_is_found(crawl, kind):
    analysis, truth = crawl
    found = [f for f in to_records(analysis.findings) if f.kind == kind]
    assert found, kind
    if kind != "relative_loop":  # one pattern per depth: no single pattern to name
        assert truth["patterns"][kind] in {f.pattern for f in found}

"""The lasting key index (`logtrap/_keys.c`, `keys.PolarsIndex`) and the cache built on it
(`keys.KeyedCache`): each key's number as a dict would give it, and each key's value as
computing it anew would."""

from __future__ import annotations

import random

import polars as pl
import pytest
from hypothesis import given
from hypothesis import strategies as st

from logtrap import keys
from logtrap.keys import KeyedCache, PolarsIndex

needs_c = pytest.mark.skipif(keys._CIndex is None, reason="the C extension logtrap._keys is not built")
INDEXES = [pytest.param(True, id="c", marks=needs_c), pytest.param(False, id="polars")]

# few distinct keys, so batches repeat each other's; 0 and the top of the range included
key_values = st.sampled_from([0, 1, 2, 3, 1023, 1024, 2**63, 2**64 - 1] + [i * 7919 for i in range(40)])
batches = st.lists(st.lists(key_values, max_size=60), max_size=8)


def test_the_c_extension_is_built():
    # `pip install -e .` builds it wherever a C compiler is (CI has gcc); without it the tests
    # of the C index would be skipped, and the Polars way compared with a dict alone
    assert keys._CIndex is not None


def numbered(batches: list[list[int]]) -> list[tuple[list[int], list[int]]]:
    """What an index gives each batch, by a dict: (each key's number, rows of new keys)."""
    seen: dict[int, int] = {}
    out = []
    for batch in batches:
        first = []
        for row, key in enumerate(batch):
            if key not in seen:
                seen[key] = len(seen)
                first.append(row)
        out.append(([seen[k] for k in batch], first))
    return out


@pytest.mark.parametrize("fast", INDEXES)
@given(batches=batches)
def test_an_index_numbers_keys_as_a_dict_does(fast, batches):
    index = keys._index(fast)
    got = []
    for batch in batches:
        ids, first = keys._lookup(index, pl.Series(batch, dtype=pl.UInt64))
        got.append((ids.to_list(), first.to_list()))
    assert got == numbered(batches)
    assert len(index) == len({k for b in batches for k in b})


@needs_c
def test_the_c_index_grows_past_its_first_table_and_keeps_every_number():
    index = keys._CIndex()
    rng = random.Random(7)
    many = pl.Series(list(dict.fromkeys(rng.getrandbits(64) for _ in range(300_000))), dtype=pl.UInt64)
    assert many.len() == 300_000  # no two alike
    ids, first = keys._lookup(index, many)
    assert ids.to_list() == list(range(300_000)) and first.to_list() == list(range(300_000))
    again, none = keys._lookup(index, many.reverse())
    assert again.to_list() == list(range(299_999, -1, -1)) and none.to_list() == []
    index.clear()
    assert len(index) == 0
    assert keys._lookup(index, many.slice(5, 2))[0].to_list() == [0, 1]


@needs_c
def test_the_c_index_refuses_what_is_not_keys():
    with pytest.raises(TypeError):
        keys._CIndex(5)
    with pytest.raises(ValueError, match="uint64"):
        keys._CIndex().lookup(b"seven bytes"[:7])
    with pytest.raises(TypeError):
        keys._CIndex().lookup("text")


def labels(batch: list[int]) -> list[str]:
    # values shared by several keys (a pattern by many URLs), past 12 bytes (kept in buffers)
    return [f"value-number-{k % 5}-of-five" if k % 2 else f"a-value-of-its-own-{k}" for k in batch]


@pytest.mark.parametrize("fast", INDEXES)
@given(batches=batches, cap=st.integers(1, 30))
def test_the_cache_gives_each_key_its_value_and_keeps_the_batch_past_its_cap(fast, batches, cap):
    cache = KeyedCache({"v": pl.String}, cap=cap, fast=fast)
    computed: list[int] = []
    for batch in batches:
        series = pl.Series(batch, dtype=pl.UInt64)

        def compute(first: pl.Series) -> pl.DataFrame:
            new = series.gather(first).to_list()
            computed.extend(new)
            return pl.DataFrame({"v": labels(new)})

        held = set(cache.frame("k")["k"].to_list())
        out = cache.rows(series, compute)
        assert out["v"].to_list() == labels(batch)
        # each key not held computed once, at its first row
        assert computed[len(computed) - len(set(batch) - held):] == [k for k in dict.fromkeys(batch) if k not in held]
        frame = cache.frame("k")
        expected = held | set(batch)
        if len(expected) > cap:
            expected = set(batch)
        assert set(frame["k"].to_list()) == expected and frame.height == len(cache)
        assert frame["v"].to_list() == labels(frame["k"].to_list())
        assert cache.values.height == cache.values.n_unique() == frame["v"].n_unique()


@pytest.mark.parametrize("fast", INDEXES)
def test_a_failed_computation_leaves_no_key_without_its_value(fast):
    cache = KeyedCache({"v": pl.String}, cap=100, fast=fast)
    cache.rows(pl.Series([1, 2], dtype=pl.UInt64), lambda first: pl.DataFrame({"v": ["one", "two"]}))

    def fails(first: pl.Series) -> pl.DataFrame:
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        cache.rows(pl.Series([2, 3], dtype=pl.UInt64), fails)
    assert len(cache) == 0 and cache.values.height == 0
    out = cache.rows(pl.Series([3, 2], dtype=pl.UInt64), lambda first: pl.DataFrame({"v": ["three", "two"]}))
    assert out["v"].to_list() == ["three", "two"]
    with pytest.raises(ValueError, match="computed 1 values for 2 keys"):
        cache.rows(pl.Series([4, 5], dtype=pl.UInt64), lambda first: pl.DataFrame({"v": ["four"]}))
    assert len(cache) == 0


@given(st.lists(key_values, max_size=60), st.lists(key_values, unique=True, max_size=12),
       st.sampled_from([0, 2**64 - 1]))
def test_replaced_is_replace_strict(values, old, default):
    # each row's value in a small table (a URL sample's cutoff per pattern), by the C index
    keys_ = pl.Series(values, dtype=pl.UInt64)
    old_ = pl.Series(old, dtype=pl.UInt64)
    new = pl.Series([(k * 31 + 5) % 2**64 for k in old], dtype=pl.UInt64)
    want = keys_.replace_strict(old_, new, default=default, return_dtype=pl.UInt64)
    assert keys.replaced(keys_, old_, new, default).to_list() == want.to_list()

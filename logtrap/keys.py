"""Values computed once per key across batches: the caches of URLs' patterns and of agents'
classes.

A key is a 64-bit hash of the text (a URL, a user agent). The cache numbers each key it
holds in an index that lasts across batches (`_keys.c`), keeps each key's value as the number
of a row in a table of the distinct values (a trap's 30,000 URLs share one pattern), and a
batch's rows gather their values by number. Joined on the keys instead, Polars rebuilt a hash
table of the whole cache every batch: a 500,000-URL cache took 24 ms of a 195,000-line batch
looking up and joining back, against 6 ms so. Without the C extension the same indexes are
kept in Polars, slower.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import polars as pl
import pyarrow as pa

from logtrap import schema as s

try:  # the C fast way (`_keys.c`); without it, the same in Polars
    from logtrap._keys import Index as _CIndex
except ImportError:  # pragma: no cover - a machine with no C compiler
    _CIndex = None

NO_CAP = 2**32  # the cap of a cache for one frame: no more keys than an index numbers


class PolarsIndex:
    """`_keys.Index` in Polars: each key's number, numbered in the order first seen.

    >>> index = PolarsIndex()
    >>> ids, first = index.lookup(pl.Series([5, 7, 5], dtype=pl.UInt64))
    >>> ids.to_list(), first.to_list(), len(index)
    ([0, 1, 0], [0, 1], 2)
    """

    def __init__(self) -> None:
        self._known = pl.DataFrame(schema={"key": pl.UInt64, "id": pl.UInt32})

    def __len__(self) -> int:
        return self._known.height

    def lookup(self, keys: pl.Series) -> tuple[pl.Series, pl.Series]:
        rows = keys.alias("key").to_frame().with_row_index("row")
        found = rows.join(self._known, on="key", how="left", maintain_order="left")
        new = found.filter(pl.col("id").is_null() & pl.col("key").is_first_distinct())
        new = new.with_columns(pl.int_range(len(self), len(self) + new.height, dtype=pl.UInt32).alias("id"))
        self._known = pl.concat([self._known, new.select("key", "id")])
        ids = found.join(new.select("key", pl.col("id").alias("new")), on="key", how="left",
                         maintain_order="left")
        return ids.select(pl.coalesce("id", "new")).to_series(), new.get_column("row")


def _index(fast: bool):
    return _CIndex() if fast else PolarsIndex()


def _lookup(index, keys: pl.Series) -> tuple[pl.Series, pl.Series]:
    """(each key's number, the rows where keys were first seen), UInt32 both."""
    if isinstance(index, PolarsIndex):
        return index.lookup(keys)
    array = keys.cast(pl.UInt64).to_arrow()
    if array.null_count:
        raise ValueError("a key index takes no null key")
    data = memoryview(array.buffers()[1])[array.offset * 8:(array.offset + len(array)) * 8]
    ids, first = index.lookup(data)
    return _uint32(ids), _uint32(first)


def replaced(keys: pl.Series, old: pl.Series, new: pl.Series, default: int) -> pl.Series:
    """`keys.replace_strict(old, new, default=default)` for UInt64 keys (`old` distinct), by
    an index of `old` made in C: replace_strict took 4.8 against 2.4 ms for a step's 195,000
    rows and a handful of `old` keys.

    >>> replaced(pl.Series([7, 3, 9, 7], dtype=pl.UInt64), pl.Series([7, 9], dtype=pl.UInt64),
    ...          pl.Series([70, 90], dtype=pl.UInt64), default=0).to_list()
    [70, 0, 90, 70]
    """
    if _CIndex is None:
        return keys.replace_strict(old, new, default=default, return_dtype=new.dtype)
    index = _CIndex()
    _lookup(index, old)  # numbered in their order: old[i] is number i
    ids, _ = _lookup(index, keys)  # a key not in `old`: numbered from len(old) on
    values = pl.concat([new, pl.Series([default], dtype=new.dtype)])
    return values.gather(ids.clip(upper_bound=old.len())).alias(keys.name)


def _uint32(data: bytes) -> pl.Series:
    return pl.Series(pa.Array.from_buffers(pa.uint32(), len(data) // 4, [None, pa.py_buffer(data)]))


class KeyedCache:
    """A value (a row of `schema`'s columns) per key, kept across batches.

    Each key held has a number (`_index`), and `_value[number]` is its value's row in
    `values`, which holds each distinct value once. Bounded: when it would pass `cap` keys,
    only the current batch's keys stay. The values are owned (`schema.owned`): kept as views,
    they would pin the buffer of every batch they were computed in, and memory would grow
    with the logs.

    >>> cache = KeyedCache({"v": pl.String}, cap=10)
    >>> keys = pl.Series([7, 3, 7], dtype=pl.UInt64)
    >>> compute = lambda first: pl.DataFrame({"v": ["seven", "three"]})
    >>> cache.rows(keys, compute)["v"].to_list(), len(cache), cache.values.height
    (['seven', 'three', 'seven'], 2, 2)
    """

    def __init__(self, schema: dict[str, pl.DataType], cap: int, *, fast: bool = True) -> None:
        self.cap = cap
        self._empty = pl.DataFrame(schema=schema)
        self._fast = fast and _CIndex is not None
        self.clear()

    def __len__(self) -> int:
        return len(self._keys)

    def clear(self) -> None:
        self.values = self._empty  # the distinct values, one chunk
        self._keys = pl.Series(dtype=pl.UInt64)  # by number: the key
        self._value = pl.Series(dtype=pl.UInt32)  # by number: its value's row in `values`
        self._index = _index(self._fast)  # key -> number
        self._values_index = _index(self._fast)  # a value's hash -> its row

    def frame(self, key: str) -> pl.DataFrame:
        """The keys held (column `key`) and their values, one row per key."""
        return self.values.gather(self._value).insert_column(0, self._keys.alias(key))

    def rows(self, keys: pl.Series, compute: Callable[[pl.Series], pl.DataFrame]) -> pl.DataFrame:
        """The value of each key (UInt64, no nulls), in the order of `keys`.

        `compute(first)` gives the values (`schema`'s columns), in that order, of the keys not
        held yet, given the rows of `keys` where each was first seen.
        """
        try:
            ids, first = _lookup(self._index, keys)
            if first.len():
                self._add(keys.gather(first), compute(first))
        except BaseException:
            self.clear()  # no key may stay numbered without its value
            raise
        out = self.values.gather(self._value.gather(ids))
        if len(self) > self.cap:
            self._keep(ids.unique())
        return out

    def _add(self, keys: pl.Series, done: pl.DataFrame) -> None:
        done = done.select(self._empty.columns)
        if done.height != keys.len():
            raise ValueError(f"computed {done.height} values for {keys.len()} keys")
        rows, first = _lookup(self._values_index, done.hash_rows())
        if first.len():
            new = s.owned(done.gather(first))
            self.values = pl.concat([self.values, new], rechunk=True)
        self._keys = pl.concat([self._keys, keys.cast(pl.UInt64)])
        self._value = pl.concat([self._value, rows])

    def _keep(self, numbers: pl.Series) -> None:
        """Keep only the keys of these numbers, and the values they have."""
        keys, value = self._keys.gather(numbers), self._value.gather(numbers)
        used = value.unique().sort()
        values = s.owned(self.values.gather(used))
        self.clear()
        _lookup(self._index, keys)
        _lookup(self._values_index, values.hash_rows())
        # each value's row among the used ones: its rank
        self.values, self._keys, self._value = values, keys, (value.rank("dense") - 1).cast(pl.UInt32)

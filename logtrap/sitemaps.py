"""Sitemap files -> the content URLs every suggested robots.txt rule must leave allowed.

Reads sitemap.xml, sitemap.xml.gz, sitemap indexes and plain-text sitemaps (one URL a line).
A sitemap index's children are read from the index file's own directory (by the child's file
name, or its path relative to that directory): logtrap never fetches anything from the
network, so a child that is not on disk is an error naming it.
"""

from __future__ import annotations

import gzip
from collections.abc import Iterable
from pathlib import Path, PurePosixPath
from urllib.parse import urlsplit
from xml.etree import ElementTree

from logtrap.errors import InputError

_MAX_DEPTH = 3  # index -> index -> urlset is the deepest nesting seen in practice (judgement)


def load_sitemap_urls(paths: Iterable[str | Path]) -> list[str]:
    """Every `<loc>` of these sitemaps (indexes resolved locally), in file order, deduplicated.

    >>> import tempfile, pathlib
    >>> d = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (d / "s.xml").write_text('<urlset xmlns="http://www.sitemaps.org/schemas/'
    ...     'sitemap/0.9"><url><loc>https://shop.example/a</loc></url></urlset>')
    >>> load_sitemap_urls([d / "s.xml"])
    ['https://shop.example/a']
    """
    urls: dict[str, None] = {}
    for path in paths:
        for url in _read(Path(path), depth=0, seen=set()):
            urls.setdefault(url, None)
    return list(urls)


def _read(path: Path, *, depth: int, seen: set[Path]) -> list[str]:
    resolved = path.resolve()
    if resolved in seen or depth > _MAX_DEPTH:
        return []  # an index listing itself (or a loop) adds nothing
    seen.add(resolved)
    text = _text(path)
    if not text.lstrip().startswith("<"):
        # plain-text sitemap: one absolute URL per line (sitemaps.org "Text file")
        urls = [line.strip() for line in text.splitlines() if line.strip().startswith("http")]
        if not urls and text.strip():  # binary data, or another file given by mistake
            raise InputError(f"{path}: not a sitemap (neither XML nor lines of absolute URLs)",
                             hint="pass the site's sitemap.xml (or a text file of URLs)")
        return urls
    try:
        root = ElementTree.fromstring(text)
    except ElementTree.ParseError as exc:
        raise InputError(f"{path}: not a valid sitemap ({exc})") from None
    locs = [el.text.strip() for el in root.iter() if _local(el.tag) == "loc" and el.text]
    if _local(root.tag) != "sitemapindex":
        return locs
    urls: list[str] = []
    for loc in locs:
        urls += _read(_child_path(path, loc), depth=depth + 1, seen=seen)
    return urls


def _text(path: Path) -> str:
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise InputError(f"cannot read sitemap {path}: {exc.strerror}") from None
    if data[:2] == b"\x1f\x8b":
        try:
            data = gzip.decompress(data)
        except (OSError, EOFError) as exc:
            raise InputError(f"{path}: corrupt gzip sitemap ({exc})") from None
    return data.decode("utf-8-sig", errors="replace")  # a byte order mark is no text


def _local(tag: str) -> str:
    return tag.rsplit("}", 1)[-1]


def _child_path(index: Path, loc: str) -> Path:
    """Where a sitemap index's child is on disk: beside the index, by URL path or file name."""
    base = index.parent
    url_path = PurePosixPath(urlsplit(loc).path or loc)
    relative = url_path.relative_to("/") if url_path.is_absolute() else url_path
    candidates = [base / relative, base / url_path.name]
    for candidate in candidates:
        if candidate.is_file():
            return candidate
    raise InputError(
        f"{index}: sitemap index lists {loc}, which is not in {base}",
        hint="save the child sitemaps beside the index (logtrap never fetches from the network)",
    )

"""Settings: one frozen object that travels explicitly through every stage.

Every threshold has its default's reason beside it. Where the default is a judgement call
rather than a figure from the sources (DESIGN.md), the comment says "judgement".
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Settings:
    # -- reading ---------------------------------------------------------------------------
    log_format: str = "auto"  # "auto", a preset name, or an Apache LogFormat / nginx log_format
    # Decompressed bytes parsed per batch: large enough that per-batch overhead vanishes,
    # small enough that a batch's frame stays a few hundred MB (judgement).
    batch_bytes: int = 32 * 1024 * 1024
    detect_lines: int = 20  # lines sampled per file to choose and check a format
    rejected_examples: int = 5  # bad lines kept (with file and line number) for the report
    hosts: tuple[str, ...] = ()  # only these virtual hosts; empty = all

    # -- URL patterns ------------------------------------------------------------------------
    session_params: tuple[str, ...] = ()  # extra session-id parameter names for this site
    tracking_params: tuple[str, ...] = ()  # extra tracking parameter names for this site
    # Distinct URLs kept per host+pattern (chosen by hash, so the same URLs are kept across
    # batches and runs). Bounds memory whatever the size of the logs; 1,000 is enough to
    # see a value distribution and pick examples (judgement).
    url_sample_size: int = 1000

    # -- bot verification --------------------------------------------------------------------
    ip_ranges: tuple[Path, ...] = ()  # search engines' published range files (JSON)
    verify_dns: bool = False  # reverse + forward DNS check (network; off by default)
    dns_timeout: float = 2.0  # seconds per lookup (judgement)
    dns_concurrency: int = 16  # lookups in flight at once (judgement)
    dns_server: str | None = None  # resolver address ("127.0.0.1:5353"); None = system resolver

    # -- suggestions -------------------------------------------------------------------------
    sitemaps: tuple[Path, ...] = ()
    robots: Path | None = None

    # -- detectors: see logtrap/detectors/ for what each threshold means ---------------------
    # (fields added here by the detectors, one block per kind)

    def replace(self, **changes: object) -> "Settings":
        """A copy with some settings changed.

        >>> Settings().replace(url_sample_size=10).url_sample_size
        10
        """
        return dataclasses.replace(self, **changes)

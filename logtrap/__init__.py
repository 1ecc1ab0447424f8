"""logtrap: find crawler traps in web-server access logs, and say exactly what to change.

The public API; everything else is internal.

>>> import logtrap
>>> logtrap.url_pattern("/section/12?sort=price&color=red")
'/section/{n}?color&sort'
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from logtrap import _allocator  # noqa: F401  (first: it must run before Polars is imported)
from logtrap.analysis import Analysis, analyze, bot_table, requests_frame
from logtrap.bots import AgentCache, add_bots, classify_agents
from logtrap.config import load_settings
from logtrap.detectors import REGISTRY, Detector, run_detectors, verify_claims
from logtrap.errors import (
    ConfigError,
    FormatError,
    InputError,
    LogtrapError,
    OutputError,
    RejectedLinesWarning,
    StateError,
)
from logtrap.findings import Finding, finding_rows
from logtrap.formats import compile_format, detect_format
from logtrap.logs import read_logs, scan_logs
from logtrap.patterns import PatternCache, add_patterns, url_pattern
from logtrap.rules import Suggestions, suggest
from logtrap.settings import Settings
from logtrap.traffic import Tally, Traffic
from logtrap.verify import verify_clients

if TYPE_CHECKING:
    from logtrap import plots

__version__ = "0.1.0"

__all__ = [
    "REGISTRY",
    "AgentCache",
    "Analysis",
    "ConfigError",
    "Detector",
    "Finding",
    "FormatError",
    "InputError",
    "LogtrapError",
    "OutputError",
    "PatternCache",
    "RejectedLinesWarning",
    "Settings",
    "StateError",
    "Suggestions",
    "Tally",
    "Traffic",
    "add_bots",
    "add_patterns",
    "analyze",
    "bot_table",
    "classify_agents",
    "compile_format",
    "detect_format",
    "finding_rows",
    "load_settings",
    "plots",
    "read_logs",
    "requests_frame",
    "run_detectors",
    "scan_logs",
    "suggest",
    "url_pattern",
    "verify_claims",
    "verify_clients",
]


def __getattr__(name: str) -> Any:
    # Plotly is slow to import; load the plots module only when a notebook asks for it.
    if name == "plots":
        import importlib

        return importlib.import_module("logtrap.plots")
    raise AttributeError(f"module 'logtrap' has no attribute {name!r}")

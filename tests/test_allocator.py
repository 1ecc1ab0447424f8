"""logtrap sets Polars' allocator arenas when it is imported first, and only then."""

from __future__ import annotations

import os
import subprocess
import sys

from logtrap import _allocator


def _conf_after(code: str, **env: str) -> list[str]:
    """The allocator options a fresh interpreter ends with (Polars puts its own first)."""
    clean = {k: v for k, v in os.environ.items() if k != _allocator.CONF}
    out = subprocess.run(
        [sys.executable, "-c", f"{code}; import os; print(os.environ.get({_allocator.CONF!r}))"],
        env={**clean, **env}, capture_output=True, text=True, check=True,
    )
    return out.stdout.strip().split(",")


def test_importing_logtrap_first_sets_one_arena_per_two_cores():
    cores = len(os.sched_getaffinity(0))
    assert _allocator.arenas() == max(1, cores // 2)
    options = _conf_after("import logtrap")
    assert [o for o in options if o.startswith("narenas:")] == [f"narenas:{max(1, cores // 2)}"]
    assert options[-1].startswith("narenas:")  # after Polars' own: it is the one that holds


def test_a_users_setting_is_left_alone():
    options = _conf_after("import logtrap", _RJEM_MALLOC_CONF="narenas:3")
    assert [o for o in options if o.startswith("narenas:")] == ["narenas:3"]


def test_too_late_once_polars_is_imported():
    assert not [o for o in _conf_after("import polars, logtrap") if o.startswith("narenas:")]
    assert "polars" in sys.modules
    assert _allocator.configure() is False

"""pytest set-up shared by the tests and the doctests in logtrap/."""

import tempfile

import pytest
from _pytest.doctest import DoctestItem
from hypothesis import settings

# No per-example deadline: speed is measured by the benchmark, never by tests, and a property
# whose examples ran past 200 ms on a loaded machine failed for nothing it checks.
settings.register_profile("logtrap", deadline=None)
settings.load_profile("logtrap")


@pytest.fixture(autouse=True)
def _doctest_temp_files(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    """A doctest's `tempfile.mkdtemp()` lands in pytest's own temporary folder, which pytest
    prunes, not in /tmp for good: the examples stay plain Python a reader can paste."""
    if isinstance(request.node, DoctestItem):
        folder = request.getfixturevalue("tmp_path")
        monkeypatch.setattr(tempfile, "tempdir", str(folder))

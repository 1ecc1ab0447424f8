"""pytest set-up shared by the tests and the doctests in logtrap/."""

import tempfile

import pytest
from _pytest.doctest import DoctestItem


@pytest.fixture(autouse=True)
def _doctest_temp_files(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    """A doctest's `tempfile.mkdtemp()` lands in pytest's own temporary folder, which pytest
    prunes, not in /tmp for good: the examples stay plain Python a reader can paste."""
    if isinstance(request.node, DoctestItem):
        folder = request.getfixturevalue("tmp_path")
        monkeypatch.setattr(tempfile, "tempdir", str(folder))

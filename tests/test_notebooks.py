"""The notebooks run top to bottom with a real kernel, and say what the ground truth says.

The kernel is the `python3` one of the interpreter running the tests: jupyter_client falls back
to ipykernel's bundled spec when no kernel is installed, and starts it with `sys.executable`, so
no `python -m ipykernel install` is needed.
"""

from __future__ import annotations

import json
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = ROOT / "notebooks"
TRUTH = json.loads((ROOT / "sample_logs" / "ground_truth.json").read_text())
NAMES = ["explore.ipynb", "custom_detector.ipynb"]


def _execute(name: str) -> nbformat.NotebookNode:
    nb = nbformat.read(NOTEBOOKS / name, as_version=4)
    client = NotebookClient(
        nb, timeout=300, kernel_name="python3", resources={"metadata": {"path": str(NOTEBOOKS)}}
    )
    client.execute()  # raises CellExecutionError, naming the cell, if any cell fails
    return nb


def _stdout(cell: nbformat.NotebookNode) -> str:
    return "".join(o["text"] for o in cell["outputs"] if o.get("name") == "stdout")


def _last_code(nb: nbformat.NotebookNode) -> nbformat.NotebookNode:
    return [c for c in nb.cells if c.cell_type == "code"][-1]


@pytest.fixture(scope="module")
def explore() -> nbformat.NotebookNode:
    return _execute("explore.ipynb")


@pytest.fixture(scope="module")
def custom_detector() -> nbformat.NotebookNode:
    return _execute("custom_detector.ipynb")


@pytest.mark.parametrize("name", NAMES)
def test_notebooks_are_stored_without_outputs(name):
    nb = nbformat.read(NOTEBOOKS / name, as_version=4)
    nbformat.validate(nb)
    code = [c for c in nb.cells if c.cell_type == "code"]
    assert code
    assert [(c.outputs, c.execution_count) for c in code] == [([], None)] * len(code)
    assert nb.metadata.kernelspec.name == "python3"


def test_explore_finds_every_sample_sites_traps(explore):
    found = json.loads(_stdout(_last_code(explore)))
    expected = {name: site["expected_kinds"] for name, site in TRUTH["sites"].items()}
    assert found == expected


def test_explore_draws_every_figure(explore):
    figures = [
        o["data"]["application/vnd.plotly.v1+json"]
        for c in explore.cells
        if c.cell_type == "code"
        for o in c.outputs
        if "application/vnd.plotly.v1+json" in o.get("data", {})
    ]
    titles = [f["layout"]["title"]["text"].split("<br>")[0] for f in figures]
    assert titles == [
        "Where the crawlers' budget goes: bot requests per URL pattern",
        "Distinct URLs per URL pattern, window after window",
        "How the server answers each URL pattern",
        "Response sizes per URL pattern",
        "Which bots fetch which URL patterns",
    ]
    assert all(f["data"] for f in figures)  # none is a "no data" figure on the shop's logs


def test_explore_prints_the_suggested_robots_txt(explore):
    (cell,) = [c for c in explore.cells if "print(suggestions.robots_txt)" in c.source]
    assert "Disallow: " in _stdout(cell)


def test_custom_detector_reports_the_short_link_redirects(custom_detector):
    lines = _stdout(_last_code(custom_detector)).splitlines()
    assert [line.split()[:3] for line in lines] == [["redirects", "news.example.net", "/s/{token}"]]
    # ...and the text report shows it as it shows the built-in kinds
    rendered = [c for c in custom_detector.cells if c.cell_type == "code"][-2]
    assert _stdout(rendered).splitlines() == ["INFO redirects news.example.net /s/{token}"]

"""The HTML report in a real browser: charts render offline, hostile log strings stay text.

Runs Debian's headless Chromium (`apt-get install chromium`) with `--dump-dom`, after
`--virtual-time-budget` lets the page's scripts run, and reads the DOM it rendered.
"""

import re
import shutil
import subprocess
from html.parser import HTMLParser

import pytest
from test_report import EVIL_UA, EVIL_URL, SUGGESTIONS, sample_analysis

from logtrap import report

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")

pytestmark = pytest.mark.skipif(
    CHROMIUM is None, reason="chromium is not installed (apt-get install chromium)"
)


def dump_dom(page, tmp_path) -> str:
    path = tmp_path / "report.html"
    path.write_text(page, encoding="utf-8")
    try:
        done = _chromium(path, tmp_path)
    except subprocess.TimeoutExpired:
        pytest.fail("chromium did not finish: a script on the page may have opened a dialog "
                    "(an injected alert() blocks a headless browser)")
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout


def _chromium(path, tmp_path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
         "--no-first-run", "--disable-background-networking", "--disable-component-update",
         "--disable-sync", f"--user-data-dir={tmp_path / 'profile'}",
         "--virtual-time-budget=5000", "--dump-dom", path.as_uri()],
        capture_output=True, text=True, timeout=60, check=False,
    )


class _Dom(HTMLParser):
    """Text outside scripts, script bodies, and every attribute that could run code."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.text: list[str] = []
        self.scripts: list[str] = []
        self.handlers: list[tuple[str, str]] = []
        self._in = ""

    def handle_starttag(self, tag, attrs):
        self._in = tag if tag in ("script", "style") else ""
        if tag == "script":
            self.scripts.append("")
        self.handlers += [(tag, name) for name, _ in attrs if name.startswith("on")]

    def handle_endtag(self, tag):
        self._in = ""

    def handle_data(self, data):
        if self._in == "script":
            self.scripts[-1] += data
        elif self._in != "style":
            self.text.append(data)


@pytest.fixture(scope="module")
def rendered(tmp_path_factory):
    analysis = sample_analysis()
    page = report.to_html(analysis, SUGGESTIONS)
    return dump_dom(page, tmp_path_factory.mktemp("chromium")), len(report.figures(analysis))


def test_every_chart_rendered(rendered):
    dom, charts = rendered
    assert charts == 5
    # Plotly marks a div it has drawn with js-plotly-plot and puts its SVG layers inside.
    pieces = re.split(r'<div [^>]*class="plotly-graph-div', dom)[1:]
    assert len(pieces) == charts
    for piece in pieces:
        assert 'js-plotly-plot' in piece.split(">", 1)[0]
        assert '<svg class="main-svg"' in piece


def test_hostile_strings_are_text_not_markup(rendered):
    dom, _ = rendered
    parsed = _Dom()
    parsed.feed(dom)
    text = "".join(parsed.text)
    assert EVIL_UA in text  # shown, as text: in the bots table, evidence and chart labels
    assert EVIL_URL in text
    assert text.count(EVIL_UA) >= 3
    # Nothing was injected: no script of the attacker's, no event handler attribute.
    assert [s for s in parsed.scripts if "alert(" in s and "Plotly" not in s] == []
    assert parsed.handlers == []
    assert "<img" not in dom

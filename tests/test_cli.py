"""cli.py through Click's CliRunner: exact output and exit codes for every command.

Most tests swap the detector registry for one small detector (`_calendar`), so the CLI's
output is fixed by this file, not by the thresholds of the real detectors; the sample_logs
tests at the end run the real registry.
"""

import errno
import gzip
import json
import os
import re
import signal
import stat
import subprocess
import sys
from pathlib import Path

import polars as pl
import pytest
from click.testing import CliRunner

from logtrap import findings as f
from logtrap import report
from logtrap import schema as s
from logtrap import cli as cli_module
from logtrap.cli import cli
from logtrap.detectors import Detector
from logtrap.errors import ConfigError, InputError, LogtrapError, OutputError

SAMPLES = Path(__file__).resolve().parent.parent / "sample_logs"
GOOGLEBOT = "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)"
BROWSER = ("Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) "
           "Chrome/120.0 Safari/537.36")
ENV = {"COLUMNS": "100", "FORCE_COLOR": None, "NO_COLOR": None, "TTY_COMPATIBLE": None,
       "TTY_INTERACTIVE": None}
RULE = "\u2500" * 100


def line(minute: int, url: str, ua: str, client: str, status: int = 200, size: int = 100) -> str:
    return (f'{client} - - [01/Jan/2026:10:{minute:02d}:00 +0000] "GET {url} HTTP/1.1" '
            f'{status} {size} "-" "{ua}"')


CLEAN = [
    line(0, "/", BROWSER, "10.0.0.1", size=5000),
    line(1, "/article/1", BROWSER, "10.0.0.1", size=7001),
    line(2, "/article/2", BROWSER, "10.0.0.2", size=7002),
    line(3, "/article/1", GOOGLEBOT, "66.249.66.1", size=7001),
    line(4, "/article/2", GOOGLEBOT, "66.249.66.1", size=7002),
]
TRAP = CLEAN + [line(10 + i, f"/calendar?date=2030-0{i + 1}", GOOGLEBOT, "66.249.66.1",
                     size=512) for i in range(4)]


def _calendar(traffic, settings):
    """A stand-in detector: every pattern starting /calendar is a warning."""
    rows = traffic.patterns.filter(pl.col(s.PATTERN).str.starts_with("/calendar"))
    if rows.height == 0:
        return f.empty_findings()
    urls = (traffic.urls.group_by(s.HOST, s.PATTERN).agg(pl.col(s.URL).sort().alias(s.EXAMPLES)))
    rows = rows.join(urls, on=[s.HOST, s.PATTERN]).with_columns(
        pl.col(s.BOT_REQUESTS).alias(s.WASTED_REQUESTS))
    return f.finding_rows("calendar", rows, severity="warning", evidence=[s.UNIQUE_URLS],
                          advice="Answer 404 for months without events.")


@pytest.fixture
def stub_registry(monkeypatch):
    monkeypatch.setattr("logtrap.detectors.REGISTRY", (Detector("calendar", _calendar),))


@pytest.fixture
def logs(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # no logtrap.toml of the repo's is picked up
    (tmp_path / "clean.log").write_text("\n".join(CLEAN) + "\n")
    (tmp_path / "trap.log").write_text("\n".join(TRAP) + "\n")
    return tmp_path


def run(*args, input=None):
    return CliRunner().invoke(cli, list(args), env=ENV, input=input, catch_exceptions=False)


READ_CLEAN = """\
Read 5 lines from 1 file (852 B): 5 parsed, 0 rejected
  clean.log: combined, 5 lines, 0 rejected
Time span: 2026-01-01 10:00:00 to 2026-01-01 10:04:00 UTC
Hosts: no virtual host in the log
"""

FINDING = """\
Findings: 0 critical, 1 warning, 0 info

WARNING calendar /calendar?date
  4 of 4 requests wasted
  Evidence: unique_urls 4
  Fix: Answer 404 for months without events.
  Examples: /calendar?date=2030-01
            /calendar?date=2030-02
            /calendar?date=2030-03
            /calendar?date=2030-04
"""


def test_analyze_clean_log(logs, stub_registry):
    result = run("analyze", "clean.log")
    assert result.exit_code == 0
    assert result.stderr == READ_CLEAN
    assert result.stdout == f"""\
Where the bot budget goes

All requests (no virtual host in the log): 2 bot requests of 5 requests, 2 patterns
Pattern        Bot requests    Share   Unique URLs   Top bots
{RULE[:64]}
/article/{{n}}              2   100.0%             2   Googlebot 2

No crawler traps found.
"""


def test_an_empty_log_is_not_an_all_clear(logs):
    (logs / "empty.log").write_text("")
    (logs / "blank.log").write_text("\n \n")
    result = run("analyze", "empty.log", "blank.log")
    assert result.exit_code == 0
    assert result.stdout == (
        "No request was read: there is nothing to judge (what was read is on stderr).\n")
    assert result.stderr == (
        "Read 2 lines from 2 files (3 B): 0 parsed, 0 rejected\n"
        "  empty.log: empty\n  blank.log: blank lines only\nHosts: none\n")


def test_analyze_with_findings_exits_3(logs, stub_registry):
    result = run("analyze", "trap.log")
    assert result.exit_code == 3
    assert result.stdout == f"""\
Where the bot budget goes

All requests (no virtual host in the log): 6 bot requests of 9 requests, 3 patterns
Pattern          Bot requests   Share   Unique URLs   Top bots
{RULE[:65]}
/calendar?date              4   66.7%             4   Googlebot 4
/article/{{n}}                2   33.3%             2   Googlebot 2

{FINDING}
Rules for these traps (robots.txt, .htaccess, nginx), each checked not to block a real page, or why none can be: run logtrap suggest on the same logs.
"""


def test_fail_on_applies_without_quiet(logs, stub_registry):
    assert run("analyze", "trap.log", "--fail-on", "critical").exit_code == 0
    assert run("analyze", "trap.log", "--fail-on", "info").exit_code == 3


def test_quiet_on_a_clean_log_prints_nothing(logs, stub_registry):
    result = run("analyze", "clean.log", "--quiet")
    assert (result.exit_code, result.stdout, result.stderr) == (0, "", "")


def test_quiet_with_findings_prints_only_the_findings(logs, stub_registry):
    result = run("analyze", "trap.log", "--quiet")
    assert (result.exit_code, result.stdout, result.stderr) == (3, FINDING, "")


def test_quiet_cron_run_writes_the_json_file(logs, stub_registry):
    result = run("analyze", "trap.log", "--quiet", "--json", "out.json")
    assert (result.exit_code, result.stdout, result.stderr) == (3, FINDING, "")
    doc = json.loads((logs / "out.json").read_text())
    assert [x["kind"] for x in doc["findings"]] == ["calendar"]
    # a report file is logtrap's own: the next run rewrites it
    assert run("analyze", "clean.log", "-q", "--json", "out.json").exit_code == 0
    assert json.loads((logs / "out.json").read_text())["findings"] == []


def test_json_to_stdout_is_only_json(logs, stub_registry):
    result = run("analyze", "trap.log", "--json", "-")
    assert result.exit_code == 3
    doc = json.loads(result.stdout)
    assert set(doc) == {"schema", "summary", "patterns", "findings", "robots_txt", "htaccess",
                        "nginx", "rules", "notes", "bots", "sections"}
    assert [(x["section"], x["requests"], x["bot_requests"], x["patterns"])
            for x in doc["sections"]] == [("/calendar", 4, 4, 1), ("/article/{n}", 4, 2, 1),
                                          ("/", 1, 0, 1)]
    assert doc["schema"] == "logtrap/report-v1"
    summary = doc["summary"]
    assert (summary["lines"], summary["parsed"], summary["rejected"], summary["bot_requests"],
            summary["start"], summary["end"], summary["hosts"], summary["rejected_examples"]) == (
        9, 9, 0, 6, "2026-01-01T10:00:00+00:00", "2026-01-01T10:13:00+00:00", ["-"], [])
    assert [(p["pattern"], p["requests"], p["bot_requests"], p["unique_urls"], p["statuses"],
             p["bots"]) for p in doc["patterns"]] == [
        ("/calendar?date", 4, 4, 4, {"200": 4}, {"Googlebot": 4}),
        ("/article/{n}", 4, 2, 2, {"200": 4}, {"Googlebot": 2}),
        ("/", 1, 0, 1, {"200": 1}, {}),
    ]
    assert doc["findings"] == [{
        "kind": "calendar", "severity": "warning", "host": "-", "pattern": "/calendar?date",
        "requests": 4, "wasted_requests": 4,
        "examples": [f"/calendar?date=2030-0{i}" for i in range(1, 5)],
        "evidence": {"unique_urls": 4}, "advice": "Answer 404 for months without events.",
    }]
    assert [(b["bot"], b["requests"]) for b in doc["bots"]] == [("Googlebot", 6)]
    assert isinstance(doc["robots_txt"], str)
    assert result.stderr.startswith("Read 9 lines from 1 file")


def test_markdown_and_html_files(logs, stub_registry):
    result = run("analyze", "trap.log", "-q", "--markdown", "r.md", "--html", "r.html",
                 "--parquet", "tables")
    assert result.exit_code == 3
    assert (logs / "r.md").read_text().startswith("# logtrap report\n")
    page = (logs / "r.html").read_text()
    assert page.startswith("<!DOCTYPE html>") and page.count("Plotly.newPlot(") == 5
    assert sorted(p.name for p in (logs / "tables").iterdir()) == [
        "bots.parquet", "findings.parquet", "patterns.parquet", "windows.parquet"]
    assert pl.read_parquet(logs / "tables" / "findings.parquet")["kind"].to_list() == ["calendar"]


def test_json_and_markdown_cannot_both_take_stdout(logs):
    result = run("analyze", "trap.log", "--json", "-", "--markdown", "-")
    assert result.exit_code == 2
    assert "--json - and --markdown - cannot both use stdout" in result.stderr


def test_hostile_log_strings_never_reach_the_terminal_raw(logs, stub_registry):
    evil = line(20, "/calendar?date=<script>", "\x1b]0;owned\x07[bold]x[/bold]\x1b[2J",
                "66.249.66.1")
    (logs / "evil.log").write_text("\n".join(TRAP) + "\n" + evil + "\ngarbage\x1b[31m[red]\n")
    result = run("analyze", "evil.log")
    assert "\x1b" not in result.stdout + result.stderr
    assert "\x07" not in result.stdout + result.stderr
    assert "  evil.log:11: does not match combined: garbage[red]\n" in result.stderr
    assert "            /calendar?date=<script>\n" in result.stdout
    assert run("analyze", "evil.log", "-q", "--html", "r.html").exit_code == 3
    assert "<script>\n" not in (logs / "r.html").read_text()
    assert "/calendar?date=&lt;script&gt;" in (logs / "r.html").read_text()


def test_stdin(logs, stub_registry):
    result = run("analyze", "-", "-q", "--json", "-", input="\n".join(TRAP) + "\n")
    assert result.exit_code == 3
    assert json.loads(result.stdout)["summary"]["parsed"] == 9


# -- errors ------------------------------------------------------------------------------------


def test_no_logs_is_a_usage_error_with_a_hint(logs):
    result = run("analyze")
    assert result.exit_code == 2
    assert result.stderr.endswith(
        "Error: no log files given. Name one or more: paths, globs or - for stdin, e.g.\n"
        "  logtrap analyze /var/log/nginx/access.log*\n")


def test_missing_file_is_one_error_line(logs):
    result = run("analyze", "missing.log")
    assert result.exit_code == 1
    assert result.stdout == ""
    lines = result.stderr.splitlines()
    assert [x for x in lines if x.startswith("Error:")] == lines[:1]
    assert "missing.log" in lines[0]
    assert "Traceback" not in result.stderr


def test_file_in_no_known_format_is_one_error_line(logs):
    (logs / "bad.log").write_text("this is not a log line\n" * 30)
    result = run("analyze", "bad.log")
    assert result.exit_code == 1
    lines = result.stderr.splitlines()
    assert lines[0].startswith("Error: ") and "bad.log" in lines[0]
    assert [x for x in lines if x.startswith("Error:")] == lines[:1]


def test_quiet_still_says_when_a_large_share_of_a_log_is_rejected(logs, stub_registry):
    good = [line(i, f"/article/{i}", BROWSER, "10.0.0.1") for i in range(20)]
    (logs / "junk.log").write_text("\n".join(good + ["\x16\x03\x01 junk"] * 2) + "\n")
    (logs / "changed.log").write_text("\n".join(good + [f"{i}|10.0.0.1|GET /" for i in range(10)]) + "\n")
    # a scanner's two junk lines: counted in the read summary, no warning
    assert run("analyze", "junk.log", "-q").output == ""
    # a third of the log: the format stopped fitting, and cron hears of it, on stderr only
    result = run("analyze", "changed.log", "-q")
    assert (result.exit_code, result.stdout) == (0, "")
    assert result.stderr == ("Warning: changed.log: 10 of 30 lines (33%) rejected as not combined, "
                             "the first at line 21 (run without -q to see the first ones)\n")


def test_a_run_that_rejects_most_lines_fails_after_its_output_and_keeps_no_state(logs, stub_registry):
    bad = [f"{i}|66.249.66.1|GET /calendar" for i in range(12)]
    (logs / "changed.log").write_text("\n".join(TRAP + bad) + "\n")
    result = run("analyze", "changed.log", "-q", "--json", "out.json", "--state", "st.zip")
    assert result.exit_code == 1  # not 3: its findings rest on a minority of the log
    assert result.stdout.startswith("Findings: 0 critical, 1 warning, 0 info\n")
    assert result.stderr == (
        "Warning: changed.log: 12 of 21 lines (57%) rejected as not combined, the first at line "
        "10 (run without -q to see the first ones)\n"
        "Error: 12 of 21 lines (57%) were rejected: what was found rests on the 9 that parsed\n"
        "Hint: the log format changed or is not the one detected: give the server's LogFormat / "
        "log_format string with --format (the first rejected lines are shown without -q)\n")
    assert json.loads((logs / "out.json").read_text())["summary"]["rejected"] == 12
    assert not (logs / "st.zip").exists()  # read again once --format is given
    assert run("patterns", "changed.log", "-q").exit_code == 1


@pytest.mark.parametrize("first", [
    "2026/11/28 10:00:00 [error] 123#0: *1 open() \"/srv/favicon.ico\" failed (2: No such file)",
    "[Sat Nov 28 10:00:00.123456 2026] [core:error] [pid 1] [client 10.0.0.1:5] AH00126: Invalid URI",
    "[Sat Nov 28 10:00:00 2026] [error] [client 10.0.0.1] File does not exist: /srv/x",
])
def test_an_error_log_is_named_before_any_log_is_read(logs, first):
    # `logtrap analyze /var/log/nginx/*` takes error.log too, sorted after access.log
    (logs / "error.log").write_text(first + "\n" + first + "\n")
    result = run("analyze", "trap.log", "error.log")
    assert (result.exit_code, result.stdout) == (1, "")
    assert result.stderr == (
        f"Error: error.log is a web server's error log, not an access log: {first!r}\n"
        "Hint: give the access logs only, e.g. /var/log/nginx/access.log* or "
        "/var/log/apache2/access.log* (a glob of the whole folder takes the error logs too)\n")


def test_an_apache_error_log_opening_with_a_startup_message_is_named(logs):
    # its first line has no format; the one checked was the first alone (and a file's last
    # line, whole, was dropped as if cut short)
    note = ("AH00558: apache2: Could not reliably determine the server's fully qualified "
            "domain name, using 127.0.1.1")
    line = "[Sat Nov 28 10:00:00.123456 2026] [mpm_event:notice] [pid 1:tid 2] AH00489: resuming"
    (logs / "error.log").write_text(f"{note}\n{line}\n")
    result = run("analyze", "error.log")
    assert result.exit_code == 1
    assert result.stderr.startswith(
        f"Error: error.log is a web server's error log, not an access log: {line!r}\n")


def test_bad_fail_on_is_a_usage_error(logs):
    result = run("analyze", "clean.log", "--fail-on", "sometimes")
    assert result.exit_code == 2
    assert "Invalid value for '--fail-on'" in result.stderr


def test_output_folder_missing_fails_before_reading(logs):
    result = run("analyze", "clean.log", "--json", "nowhere/out.json")
    assert result.exit_code == 1
    assert result.stderr == (
        "Error: cannot write nowhere/out.json: folder 'nowhere' does not exist\n"
        "Hint: create it first (mkdir -p nowhere), or give another path\n")


NOT_OURS = ("exists and is not a report logtrap wrote: it was left alone, and nothing was read\n"
            "Hint: give the report a path of its own (logtrap rewrites its reports on every run)\n")


@pytest.mark.parametrize("option", ["--json", "--markdown", "--html"])
def test_a_report_never_replaces_the_log_it_reads(logs, option):
    before = (logs / "trap.log").read_bytes()
    result = run("analyze", "trap.log", option, "trap.log")
    assert result.exit_code == 1
    assert result.stderr == f"Error: trap.log {NOT_OURS}"
    assert (logs / "trap.log").read_bytes() == before


@pytest.mark.parametrize("command", ["bots", "patterns"])
def test_table_json_never_replaces_a_file_of_the_users(logs, command):
    (logs / "notes.json").write_text('{"mine": true}\n')
    result = run(command, "trap.log", "--json", "notes.json")
    assert (result.exit_code, result.stderr) == (1, f"Error: notes.json {NOT_OURS}")
    assert (logs / "notes.json").read_text() == '{"mine": true}\n'


def test_reports_logtrap_wrote_are_rewritten_and_empty_files_taken(logs, stub_registry):
    (logs / "r.html").write_text("")
    first = run("analyze", "clean.log", "-q", "--json", "r.json", "--markdown", "r.md",
                "--html", "r.html", "--parquet", "tables")
    assert first.exit_code == 0 and (logs / "r.html").read_text().startswith("<!DOCTYPE html>")
    second = run("analyze", "trap.log", "-q", "--json", "r.json", "--markdown", "r.md",
                 "--html", "r.html", "--parquet", "tables")
    assert second.exit_code == 3
    assert [x["kind"] for x in json.loads((logs / "r.json").read_text())["findings"]] == [
        "calendar"]
    assert "calendar" in (logs / "r.md").read_text() and "calendar" in (logs / "r.html").read_text()
    assert pl.read_parquet(logs / "tables" / "findings.parquet")["kind"].to_list() == ["calendar"]
    assert pl.read_parquet_metadata(logs / "tables" / "bots.parquet")["logtrap"] == "bots"


def test_parquet_tables_from_before_the_metadata_key_are_recognised(logs, stub_registry):
    # an earlier logtrap wrote the same tables without metadata: found by their columns
    (logs / "tables").mkdir()
    pl.DataFrame(schema=dict.fromkeys(["kind", "severity", "host", "pattern", "requests",
                 "wasted_requests", "evidence"], pl.String)).write_parquet(
        logs / "tables" / "findings.parquet")
    result = run("analyze", "trap.log", "-q", "--parquet", "tables")
    assert result.exit_code == 3
    assert pl.read_parquet(logs / "tables" / "findings.parquet")["kind"].to_list() == ["calendar"]


def test_parquet_never_replaces_a_file_of_the_users(logs):
    (logs / "tables").mkdir()
    pl.DataFrame({"mine": [1]}).write_parquet(logs / "tables" / "patterns.parquet")
    result = run("analyze", "clean.log", "--parquet", "tables")
    assert result.exit_code == 1
    assert result.stderr == f"Error: tables/patterns.parquet {NOT_OURS}"
    assert pl.read_parquet(logs / "tables" / "patterns.parquet").columns == ["mine"]
    assert sorted(p.name for p in (logs / "tables").iterdir()) == ["patterns.parquet"]


def test_a_pipe_or_device_is_written_into_a_link_keeps_pointing_and_a_file_its_mode(logs, stub_registry):
    # `--json /dev/stdout` replaced the symlink /dev/stdout and `--json /dev/full` the device
    # with report files; a robots.txt linked from the web root lost its link, the file served
    # kept its old rules; a report the web server may read lost its mode
    import threading

    os.mkfifo(logs / "pipe")
    got = []
    reader = threading.Thread(target=lambda: got.append((logs / "pipe").read_text()), daemon=True)
    reader.start()
    assert run("analyze", "trap.log", "-q", "--json", "pipe").exit_code == 3
    reader.join(timeout=30)
    assert json.loads(got[0])["findings"][0]["kind"] == "calendar"
    assert stat.S_ISFIFO(os.lstat(logs / "pipe").st_mode)

    (logs / "served").mkdir()
    (logs / "served" / "robots.txt").write_text("User-agent: *\nDisallow: /private/\n")
    (logs / "robots.txt").symlink_to(logs / "served" / "robots.txt")
    result = run("suggest", "trap.log", "-q", "--robots", "robots.txt", "--robots-out",
                 "robots.txt", "--force")
    assert result.exit_code == 0
    assert (logs / "robots.txt").is_symlink()
    assert "Disallow: /calendar?date=" in (logs / "served" / "robots.txt").read_text()

    (logs / "r.html").write_text("")
    os.chmod(logs / "r.html", 0o640)
    assert run("analyze", "trap.log", "-q", "--html", "r.html").exit_code == 3
    assert stat.S_IMODE(os.stat(logs / "r.html").st_mode) == 0o640
    assert (logs / "r.html").read_text().startswith("<!DOCTYPE html>")
    assert [p.name for p in logs.iterdir() if p.name.startswith(".")] == []  # no temporary left


def test_a_compressed_copy_beside_its_log_is_named_not_read(logs, stub_registry):
    import gzip

    (logs / "trap.log.gz").write_bytes(gzip.compress((logs / "trap.log").read_bytes()))
    result = run("analyze", "trap.log", "trap.log.gz", "--json", "-")
    assert result.exit_code == 3
    assert json.loads(result.stdout)["summary"]["lines"] == len(TRAP)
    assert result.stderr.endswith("trap.log.gz: not read, a compressed copy of trap.log (read "
                                  "instead)\n")
    # every command that reads logs says so
    result = run("patterns", "trap.log", "trap.log.gz")
    assert "trap.log.gz: not read, a compressed copy of trap.log (read instead)\n" in result.stderr


def test_one_file_for_two_outputs_is_refused(logs):
    # the state overwrote the JSON report (or the other way round) without a word, exit 3
    result = run("analyze", "trap.log", "-q", "--json", "out", "--state", "./out")
    assert result.exit_code == 2
    assert "Error: --json and --state name the same file (" in result.stderr
    assert not (logs / "out").exists()
    result = run("suggest", "trap.log", "--robots-out", "r.txt", "--nginx-out", "r.txt")
    assert result.exit_code == 2
    assert "Error: --robots-out and --nginx-out name the same file (r.txt)" in result.stderr


def test_the_processs_own_streams_are_written_through_and_a_pipe_nobody_reads_is_an_error(logs, stub_registry):
    # `--json /dev/stdout >> cron.log` truncated (or replaced) cron.log; a pipe no program
    # reads made the run wait forever after reading everything, its state never saved
    result = run("analyze", "trap.log", "-q", "--json", "/dev/stdout")
    assert result.exit_code == 3 and json.loads(result.stdout)["findings"][0]["kind"] == "calendar"
    with open(logs / "cron.log", "a") as log:
        log.write("an earlier run\n")
        log.flush()
        assert run("analyze", "trap.log", "-q", "--json", f"/dev/fd/{log.fileno()}").exit_code == 3
    text = (logs / "cron.log").read_text()
    assert text.startswith("an earlier run\n{") and json.loads(text.split("\n", 1)[1])
    os.mkfifo(logs / "fifo")
    result = run("analyze", "trap.log", "-q", "--json", "fifo")
    assert result.exit_code == 1
    assert result.stderr == ("Error: cannot write fifo: no program is reading the pipe\n"
                             "Hint: start the program that reads it first, or give a file\n")


def test_parquet_tables_are_replaced_only_once_all_are_written(logs, stub_registry, monkeypatch):
    # a full disk at the third table left a cut file beside the last run's others, and a
    # Polars traceback
    assert run("analyze", "clean.log", "-q", "--parquet", "tables").exit_code == 0
    before = {p.name: p.read_bytes() for p in (logs / "tables").iterdir()}
    calls = []
    write = pl.DataFrame.write_parquet

    def full_disk(frame, path, **kwargs):
        calls.append(path)
        if len(calls) == 3:
            raise pl.exceptions.ComputeError("parquet: No space left on device")
        return write(frame, path, **kwargs)

    monkeypatch.setattr(pl.DataFrame, "write_parquet", full_disk)
    result = run("analyze", "trap.log", "-q", "--parquet", "tables")
    assert result.exit_code == 1
    assert result.stderr == ("Error: cannot write Parquet files into tables: parquet: No space "
                             "left on device\n"
                             "Hint: give the output a path of its own, in a folder this user may "
                             "write\n")
    assert {p.name: p.read_bytes() for p in (logs / "tables").iterdir()} == before


# -- config --------------------------------------------------------------------------------------


def test_config_in_working_directory_filters_hosts(logs, stub_registry):
    # the log has no virtual host ("-"): a host filter that keeps nothing is an error that
    # says what the log holds (a mistyped --host would otherwise report no trap, exit 0)
    (logs / "logtrap.toml").write_text('hosts = ["www.example.com"]\n')
    result = run("analyze", "trap.log", "--json", "-")
    assert result.exit_code == 1
    assert result.stderr == (
        "Error: no request for www.example.com in these logs (9 requests parsed; hosts: no "
        "virtual host in the log (9))\n"
        "Hint: these logs' format records no virtual host: drop --host (or `hosts` in "
        "logtrap.toml)\n")


def test_a_mistyped_host_is_an_error_that_names_the_closest(logs, stub_registry):
    (logs / "v.log").write_text("".join(f"{h}:443 {line}\n" for h in ("news.example.net", "b.org")
                                        for line in TRAP[:2]))
    result = run("analyze", "v.log", "--host", "news.exampel.net")
    assert result.exit_code == 1
    assert result.stderr.splitlines()[-2:] == [
        "Error: no request for news.exampel.net in these logs (4 requests parsed; hosts: "
        "b.org (2), news.example.net (2))",
        "Hint: did you mean --host news.example.net?"]
    # the host as written elsewhere, in capitals and with its port: the same host
    result = run("analyze", "v.log", "--host", "News.Example.NET:443", "--json", "-")
    assert {p["host"] for p in json.loads(result.stdout)["patterns"]} == {"news.example.net"}


def test_flags_override_the_config(logs, stub_registry):
    (logs / "site.toml").write_text('hosts = ["www.example.com"]\n')
    result = run("analyze", "trap.log", "--config", "site.toml", "--host", "-", "--json", "-")
    assert len(json.loads(result.stdout)["patterns"]) == 3


def test_unknown_config_key_names_it_and_the_closest(logs):
    (logs / "logtrap.toml").write_text("[thresholds]\nurl_sample_sise = 5\n")
    result = run("analyze", "clean.log")
    assert result.exit_code == 1
    assert result.stderr == (
        f"Error: {logs / 'logtrap.toml'}: [thresholds]: unknown setting 'url_sample_sise'\n"
        "Hint: did you mean 'url_sample_size'?\n")


def test_set_checks_its_value(logs):
    result = run("analyze", "clean.log", "--set", "url_sample_size=lots")
    assert (result.exit_code, result.stderr) == (
        1, "Error: --set: url_sample_size must be an integer, not 'lots'\n"
        "Hint: `logtrap settings` lists every setting with its value here and its default\n")


def test_the_read_summary_says_which_files_name_no_host_and_whose_they_are_read_as(logs):
    (logs / "clean.log.1").write_text(CLEAN[0] + "\n")
    (logs / "clean.log").write_text("".join(f"www.example.com:80 {x}\n" for x in CLEAN[1:3]))
    result = run("analyze", "clean.log*")
    assert result.exit_code == 0
    assert result.stderr.splitlines()[1:5] == [
        "  clean.log.1: combined, 1 lines, 0 rejected",
        "  clean.log: vhost_combined, 2 lines, 0 rejected",
        "  clean.log.1: their format names no host; read as www.example.com's, the one host the "
        "other files name",
        "Time span: 2026-01-01 10:00:00 to 2026-01-01 10:02:00 UTC",
    ]
    assert result.stderr.splitlines()[5] == "Hosts: www.example.com"


def test_missing_config_file(logs):
    result = run("analyze", "clean.log", "--config", "nope.toml")
    assert result.exit_code == 1
    assert result.stderr.startswith("Error: config file 'nope.toml' does not exist\n")


# -- --state seam --------------------------------------------------------------------------------


def test_state_alerts_once_then_stays_quiet_until_something_new(logs, stub_registry):
    first = run("analyze", "trap.log", "--state", "st.zip", "-q", "--json", "out.json")
    assert first.exit_code == 3  # the calendar is new: cron hears about it
    assert first.stdout.startswith("Findings: 0 critical, 1 warning, 0 info\n\nWARNING calendar")
    # Nothing appended: the trap is still in the report, but cron is not told again.
    second = run("analyze", "trap.log", "--state", "st.zip", "-q", "--json", "out.json")
    assert (second.exit_code, second.stdout, second.stderr) == (0, "", "")
    doc = json.loads((logs / "out.json").read_text())
    assert doc["summary"]["lines"] == 0  # this run read nothing new
    assert [x["kind"] for x in doc["findings"]] == ["calendar"]
    assert doc["patterns"][0]["requests"] == 4  # the remembered window still counts


def test_a_cron_run_given_the_live_log_alone_says_what_rotation_left_unread(logs):
    # under --quiet too: the lines are lost to every later run, as a mostly rejected file's are
    assert run("analyze", "clean.log", "--state", "st.zip", "-q").exit_code == 0
    with open(logs / "clean.log", "a") as f:
        f.write(CLEAN[0] + "\n")
    os.rename(logs / "clean.log", logs / "clean.log.1")
    (logs / "clean.log").write_text(CLEAN[1] + "\n")
    rotated = run("analyze", "clean.log", "--state", "st.zip", "-q")
    assert (rotated.exit_code, rotated.stdout) == (0, "")
    assert rotated.stderr == (
        f"clean.log was rotated since the last run, to clean.log.1, which is not among the logs "
        f"given: its {len(CLEAN[0]) + 1} bytes written after that run are not read; give the "
        "rotated files too (clean.log*: each line is read once)\n")
    assert run("analyze", "clean.log", "--state", "st.zip", "-q").stderr == ""


def test_a_state_run_holds_its_folder_locked_from_read_to_save(logs, stub_registry, monkeypatch):
    # an hourly cron run and logrotate's prerotate run on one state at once both read the same
    # new lines and both alerted on them: another run waits for the lock now
    import fcntl

    from logtrap import state as state_module

    seen = []

    def probe() -> None:  # could another run lock the state's folder now?
        fd = os.open(logs, os.O_RDONLY)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            seen.append("free")
        except BlockingIOError:
            seen.append("locked")
        finally:
            os.close(fd)

    read, save = state_module.read_incremental, state_module.Increment.save
    monkeypatch.setattr(state_module, "read_incremental", lambda *a, **k: (probe(), read(*a, **k))[1])
    monkeypatch.setattr(state_module.Increment, "save", lambda self, **k: (probe(), save(self, **k))[1])
    assert run("analyze", "trap.log", "--state", "st.zip", "-q").exit_code == 3
    probe()
    assert seen == ["locked", "locked", "free"]  # let go once the run is over


def test_state_says_which_findings_are_new_on_screen_and_in_the_json(logs, stub_registry):
    first = run("analyze", "trap.log", "--state", "st.zip", "--json", "out.json")
    assert first.exit_code == 3
    assert first.stdout.endswith("run logtrap suggest on the same logs.\n\n"
                                 "New since the last run (--state): 1 of the 1 finding\n"
                                 "  NEW WARNING calendar /calendar?date\n")
    doc = json.loads((logs / "out.json").read_text())
    assert [(x["kind"], x["new"]) for x in doc["findings"]] == [("calendar", True)]
    second = run("analyze", "trap.log", "--state", "st.zip", "--json", "out.json")
    assert second.exit_code == 0
    assert second.stdout.endswith("run logtrap suggest on the same logs.\n\n"
                                  "New since the last run (--state): none of the 1 finding\n")
    doc = json.loads((logs / "out.json").read_text())
    assert [(x["kind"], x["new"]) for x in doc["findings"]] == [("calendar", False)]
    # without --state there is no last run: no key, no line
    plain = run("analyze", "trap.log", "--json", "plain.json")
    assert "New since" not in plain.stdout
    assert "new" not in json.loads((logs / "plain.json").read_text())["findings"][0]


def test_state_alerts_on_findings_seen_under_a_higher_fail_on(logs, stub_registry):
    # An admin who tightens --fail-on from critical to warning hears about the warnings
    # already there: seen before, they were never alerted on.
    first = run("analyze", "trap.log", "--state", "st.zip", "-q", "--fail-on", "critical")
    assert (first.exit_code, first.stdout, first.stderr) == (0, "", "")
    second = run("analyze", "trap.log", "--state", "st.zip", "-q", "--fail-on", "warning")
    assert second.exit_code == 3
    assert second.stdout.startswith("Findings: 0 critical, 1 warning, 0 info\n\nWARNING calendar")
    third = run("analyze", "trap.log", "--state", "st.zip", "-q", "--fail-on", "warning")
    assert (third.exit_code, third.stdout, third.stderr) == (0, "", "")


# -- patterns, bots, suggest -------------------------------------------------------------------


def test_patterns(logs):
    result = run("patterns", "trap.log", "-q")
    assert result.exit_code == 0
    assert result.stderr == ""
    assert result.stdout == f"""\
Pattern          Requests   Bot requests   Share   Unique URLs   Statuses   Top bots
{RULE[:87]}
/calendar?date          4              4   66.7%             4   200 4      Googlebot 4
/article/{{n}}            4              2   33.3%             2   200 4      Googlebot 2
/                       1              0    0.0%             1   200 1      -
"""


def test_patterns_table_stops_at_report_rows_unless_a_limit_asks_for_more(logs, monkeypatch):
    # a relative-link loop has 400,000 patterns: rich would lay them out for 17 minutes
    monkeypatch.setattr(report, "REPORT_ROWS", 2)
    lines = run("patterns", "trap.log", "-q").stdout.splitlines()
    assert lines[2:] == [
        "/calendar?date          4              4   66.7%             4   200 4      Googlebot 4",
        "/article/{n}            4              2   33.3%             2   200 4      Googlebot 2",
        "... and 1 more pattern, with fewer bot requests (all of them: --json, or --limit N)",
    ]
    assert run("patterns", "trap.log", "-q", "--limit", "3").stdout.splitlines()[-1].startswith("/ ")
    monkeypatch.setattr(report, "REPORT_ROWS", 1)  # the article's two bot requests left out
    assert run("patterns", "trap.log", "-q").stdout.splitlines()[-1] == (
        "... and 2 more patterns, with fewer bot requests each, 2 together (33.3%) (all of them: "
        "--json, or --limit N)")
    monkeypatch.setattr(report, "REPORT_ROWS", 2)
    sections = run("patterns", "trap.log", "-q", "--sections").stdout.splitlines()
    assert sections[-1] == (
        "... and 1 more section, with fewer bot requests (all of them: --json, or --limit N)")
    doc = json.loads(run("patterns", "trap.log", "--json", "-").stdout)
    assert len(doc["patterns"]) == 3
    doc = json.loads(run("patterns", "trap.log", "--sections", "--json", "-").stdout)
    assert (doc["schema"], [x["section"] for x in doc["sections"]]) == (
        "logtrap/sections-v1", ["/calendar", "/article/{n}", "/"])


def test_patterns_limit_and_json(logs):
    result = run("patterns", "trap.log", "--limit", "1", "--json", "-")
    doc = json.loads(result.stdout)
    assert set(doc) == {"schema", "patterns"}
    assert doc["schema"] == "logtrap/patterns-v1"
    assert set(doc["patterns"][0]) == {
        "host", "pattern", "section", "requests", "bot_requests", "human_requests",
        "unique_urls", "unique_urls_exact", "bot_share", "statuses", "bots", "first_seen", "last_seen"}
    assert [p["pattern"] for p in doc["patterns"]] == ["/calendar?date"]


def test_bots(logs):
    result = run("bots", "trap.log", "-q")
    assert result.exit_code == 0
    assert result.stdout == f"""\
                                    Verified/
Bot         Requests    Share   fake/unverif.   Peak/min   Statuses   Top patterns
{RULE[:86]}
Googlebot          6   100.0%           0/0/6          1   200 6      /calendar?date 4
(search)                                                              /article/{{n}} 2
"""


def test_bots_and_patterns_say_when_the_log_records_no_user_agent(logs):
    # Apache common: the same trap log without referer and user agent
    common = [line.rsplit(' "', 2)[0] for line in TRAP]
    (logs / "common.log").write_text("\n".join(common) + "\n")
    note = (
        "9 requests have no user agent in the log (its format does not record one): they are "
        "counted as bot requests, and people's requests cannot be told apart from them, so "
        "human_* evidence counts none of them; rules are checked against every URL they "
        "fetched with success outside the traps.")
    result = run("bots", "common.log", "-q")
    assert result.exit_code == 0
    assert result.stdout.splitlines()[3].split()[:3] == ["(not", "logged)", "9"]
    assert result.stdout.splitlines()[-1] == note
    result = run("patterns", "common.log", "-q")
    assert result.stdout.splitlines()[-1] == note
    assert "requests have no user agent" not in run("patterns", "trap.log", "-q").stdout


def test_apaches_own_options_requests_are_left_out_and_said_so(logs):
    # Apache wakes its idle children with `OPTIONS *`: on a quiet vhost these were the top row
    # of "Where the bot budget goes" and a "bot" of the bots table
    dummy = ('127.0.0.1 - - [01/Jan/2026:10:09:00 +0000] "OPTIONS * HTTP/1.0" 200 126 "-" '
             '"Apache/2.4.29 (Ubuntu) OpenSSL/1.1.1 (internal dummy connection)"')
    (logs / "dummy.log").write_text("\n".join(CLEAN + [dummy] * 3) + "\n")
    result = run("analyze", "dummy.log", "--json", "out.json")
    assert result.stderr.splitlines()[2] == (
        "  3 `OPTIONS *` requests Apache sent itself (its internal dummy connections): left "
        "out of the analysis")
    doc = json.loads((logs / "out.json").read_text())
    summary = doc["summary"]
    assert (summary["parsed"], summary["server_requests"], summary["requests"],
            summary["bot_requests"]) == (8, 3, 5, 2)
    assert sorted(p["pattern"] for p in doc["patterns"]) == ["/", "/article/{n}"]
    run("analyze", "dummy.log", "--html", "out.html")
    assert ("<p>3 <code>OPTIONS *</code> requests Apache sent itself (its internal dummy "
            "connections): left out of the analysis</p>") in (logs / "out.html").read_text()
    markdown = run("analyze", "dummy.log", "--markdown", "-").stdout
    assert "- 3 `OPTIONS *` requests Apache sent itself (its internal dummy connections)" in markdown
    bots = json.loads(run("bots", "dummy.log", "--json", "-").stdout)["bots"]
    assert [b["bot"] for b in bots] == ["Googlebot"]
    assert "OPTIONS" not in run("analyze", "clean.log").stderr


def test_a_stale_range_file_is_named_in_the_read_summary(logs):
    # the trap log's last request is on 2026-01-01: a file from a year before cannot prove a
    # fake, and the admin is told why no address is one
    (logs / "googlebot.json").write_text(
        '{"creationTime": "2025-01-01T00:00:00", "prefixes": [{"ipv4Prefix": "10.9.9.0/24"}]}')
    result = run("bots", "trap.log", "--ip-ranges", "googlebot.json")
    assert result.stderr.splitlines()[-1] == (
        "Note: the IP ranges of Google-InspectionTool, GoogleOther, Googlebot, Storebot-Google "
        "were published 2025-01-01, 365 days before the last request: an address outside them "
        "is unverified, not fake (engines add ranges; download the file again)")
    (logs / "googlebot.json").write_text(
        '{"creationTime": "2025-12-30T00:00:00", "prefixes": [{"ipv4Prefix": "10.9.9.0/24"}]}')
    assert "Note:" not in run("bots", "trap.log", "--ip-ranges", "googlebot.json").stderr


def test_claims_all_from_a_load_balancer_are_said_unverifiable(logs):
    # every request logged with the balancer's address: verification asked for, every claim
    # is unverified, and the admin is told what to log instead
    (logs / "googlebot.json").write_text('{"prefixes": [{"ipv4Prefix": "66.249.66.0/27"}]}')
    lines = [re.sub(r"^\S+", "10.0.0.2", ln) for ln in TRAP]
    (logs / "lb.log").write_text("\n".join(lines) + "\n")
    note = ("Note: every request claiming a search engine came from the site's own network "
            "(10.0.0.2): a load balancer's or proxy's address, by which no claim can be verified. "
            "Log the address it passes on (%{X-Forwarded-For}i, $http_x_forwarded_for) and give "
            "the format with --format")
    assert run("bots", "lb.log", "--ip-ranges", "googlebot.json").stderr.splitlines()[-1] == note
    assert "Note:" not in run("bots", "lb.log").stderr  # no verification asked: nothing to say
    assert "Note:" not in run("bots", "trap.log", "--ip-ranges", "googlebot.json").stderr
    # a CDN's edge, its range trusted, logged in place of the clients: so too
    (logs / "cdn.log").write_text("\n".join(re.sub(r"^\S+", "198.51.100.5", ln) for ln in TRAP) + "\n")
    stderr = run("bots", "cdn.log", "--ip-ranges", "googlebot.json",
                 "--set", "trusted_proxies=198.51.100.0/24").stderr
    assert stderr.splitlines()[-1] == note.replace("own network (10.0.0.2)",
                                                   "own network or a trusted proxy (198.51.100.5)")


def test_claims_all_from_a_cdns_edges_are_said_unverifiable(logs):
    # behind a CDN every request comes from its edges, public addresses people's requests come
    # from too: every claim unverified, a fake Googlebot's too, and the admin was told nothing
    (logs / "googlebot.json").write_text('{"prefixes": [{"ipv4Prefix": "66.249.66.0/27"}]}')
    firefox = "Mozilla/5.0 (X11; Linux x86_64; rv:120.0) Gecko/20100101 Firefox/120.0"
    safari = ("Mozilla/5.0 (Macintosh; Intel Mac OS X 14_5) AppleWebKit/605.1.15 (KHTML, like "
              "Gecko) Version/17.5 Safari/605.1.15")
    edges = ["162.158.1.1", "162.158.1.2", "162.158.1.3"]
    rows = [line(m, f"/article/{m}", ua, edge, size=7000 + m) for edge in edges
            for m in range(6) for ua in (BROWSER, firefox, safari)]
    rows += [line(m, f"/article/{m}", GOOGLEBOT, edge, size=7000 + m) for edge in edges for m in range(8)]
    (logs / "cdn.log").write_text("\n".join(rows) + "\n")
    note = ("Note: every request claiming a search engine came from addresses people's requests "
            "come from too (162.158.1.1, 162.158.1.2, 162.158.1.3): a CDN's or proxy's edges, by "
            "which no claim can be verified. Log the address it passes on (%{X-Forwarded-For}i, "
            "$http_x_forwarded_for) and give the format with --format, and their ranges with "
            "--set trusted_proxies=RANGES")
    assert run("bots", "cdn.log", "--ip-ranges", "googlebot.json").stderr.splitlines()[-1] == note
    # nginx's `main` logs the address the edges pass on: their ranges are all that is missing
    forwarded = [f'{ln} "203.0.113.{i % 200}"' for i, ln in enumerate(rows)]
    (logs / "cdn.log").write_text("\n".join(forwarded) + "\n")
    stderr = run("bots", "cdn.log", "--ip-ranges", "googlebot.json").stderr
    assert stderr.splitlines()[-1].endswith(
        "The format logs the address they pass on: give their ranges (the CDN publishes them) "
        "with --set trusted_proxies=RANGES to read the clients' from it")
    trusted = run("bots", "cdn.log", "--ip-ranges", "googlebot.json", "--set", "trusted_proxies=162.158.0.0/15")
    assert "Note:" not in trusted.stderr


def test_bots_json_verified_with_ip_ranges(logs):
    (logs / "googlebot.json").write_text('{"prefixes": [{"ipv4Prefix": "66.249.66.0/27"}]}')
    result = run("bots", "trap.log", "--ip-ranges", "googlebot.json", "--json", "-")
    doc = json.loads(result.stdout)
    assert set(doc) == {"schema", "bots"}
    assert doc["schema"] == "logtrap/bots-v1"
    assert [(b["bot"], b["verified_requests"], b["fake_requests"]) for b in doc["bots"]] == [
        ("Googlebot", 6, 0)]


def test_suggest_writes_only_where_asked_and_never_overwrites(logs):
    (logs / "robots.txt").write_text("User-agent: *\nDisallow: /private/\n")
    sample = SAMPLES / "litespeed"
    logs_ = sorted(str(p) for p in sample.glob("access.log*"))
    result = run("suggest", *logs_, "--format", "litespeed", "-q", "--robots-out", "robots.txt")
    assert result.exit_code == 1
    assert result.stdout.count("--- robots.txt (current)\n+++ robots.txt (suggested)\n") == 1
    assert "+Disallow: /asl/\n" in result.stdout
    assert result.stderr == (
        "Error: robots.txt already exists and differs from the suggestion; nothing was written\n"
        "Hint: the diff above shows what would change; pass --force to overwrite\n")
    assert (logs / "robots.txt").read_text() == "User-agent: *\nDisallow: /private/\n"
    forced = run("suggest", *logs_, "--format", "litespeed", "-q", "--robots-out", "robots.txt",
                 "--nginx-out", "bots.conf", "--force")
    assert forced.exit_code == 0
    assert "Disallow: /asl/\n" in (logs / "robots.txt").read_text()
    assert "meta-externalagent" in (logs / "bots.conf").read_text()
    assert not (logs / ".htaccess").exists()


def test_suggest_writes_no_empty_rule_file(logs):
    # no aggressive bot: no server rule; an existing file keeps its rules, even with --force
    (logs / ".htaccess").write_text("Require all granted\n")
    result = run("suggest", "trap.log", "-q", "--htaccess-out", ".htaccess", "--nginx-out",
                 "bots.conf", "--force")
    assert result.exit_code == 0
    assert result.stderr == (
        "Nothing to write to .htaccess: no server rule is needed (left as it was)\n"
        "Nothing to write to bots.conf: no server rule is needed\n")
    assert (logs / ".htaccess").read_text() == "Require all granted\n"
    assert not (logs / "bots.conf").exists()


def test_suggest_keeps_the_sites_own_htaccess_lines(logs):
    # --force replaced the whole .htaccess: WordPress's rewrites were gone with it
    wordpress = ("# BEGIN WordPress\nRewriteEngine On\nRewriteRule . /index.php [L]\n"
                 "# END WordPress\n")
    (logs / ".htaccess").write_text(wordpress)
    paths = sorted(str(p) for p in (SAMPLES / "litespeed").glob("access.log*"))
    asked = run("suggest", *paths, "-q", "--htaccess-out", ".htaccess")
    assert asked.exit_code == 1 and (logs / ".htaccess").read_text() == wordpress
    assert "+# BEGIN logtrap\n" in asked.stdout and "-# BEGIN WordPress" not in asked.stdout
    forced = run("suggest", *paths, "-q", "--htaccess-out", ".htaccess", "--force")
    assert forced.exit_code == 0
    text = (logs / ".htaccess").read_text()
    assert text.startswith("# BEGIN logtrap\n# Server rules suggested by logtrap.")
    assert text.endswith("# END logtrap\n\n" + wordpress)
    assert "RewriteCond %{HTTP_USER_AGENT} meta-externalagent" in text
    # run again: logtrap's part is replaced, not added a second time
    assert run("suggest", *paths, "-q", "--htaccess-out", ".htaccess").exit_code == 0
    assert (logs / ".htaccess").read_text() == text
    # the site's own lines keep their bytes: Latin-1 and CRLF were read as U+FFFD and LF
    own = b"# BEGIN WordPress\r\nRewriteRule ^stra\xdfe$ /strasse [R=301,L]\r\n# END WordPress\r\n"
    (logs / ".htaccess").write_bytes(own)
    assert run("suggest", *paths, "-q", "--htaccess-out", ".htaccess", "--force").exit_code == 0
    written = (logs / ".htaccess").read_bytes()
    assert written.startswith(b"# BEGIN logtrap\n") and written.endswith(b"# END logtrap\n\n" + own)


def test_suggest_never_writes_rules_over_an_access_log(logs):
    # the diff's hint offers --force, which would have replaced the log with the rules
    paths = sorted(str(p) for p in (SAMPLES / "litespeed").glob("access.log*"))
    before = (logs / "trap.log").read_text()
    result = run("suggest", *paths, "-q", "--robots-out", "trap.log", "--force")
    assert result.exit_code == 1
    assert result.stderr == (
        "Error: trap.log looks like an access log (combined): logtrap does not write rules "
        "over it, even with --force\nHint: give the rules a path of their own\n")
    assert (logs / "trap.log").read_text() == before


def test_suggest_writes_no_robots_file_for_several_hosts(logs):
    # with --robots each host gets its file; in one, a host's Disallow would bind the others
    paths = sorted(str(p) for p in (SAMPLES / "vhost").glob("access.log*"))
    robots_txt = str(SAMPLES / "robots.txt")
    result = run("suggest", *paths, "-q", "--robots", robots_txt, "--robots-out", "robots.txt")
    assert result.exit_code == 1
    assert result.stderr == (
        "Error: not writing robots.txt: a robots.txt serves one host, and these logs give one "
        "for 2 hosts (news.example.net, www.example.net)\n"
        "Hint: write each host's with --host NAME --robots-out FILE\n")
    assert not (logs / "robots.txt").exists()
    one = run("suggest", *paths, "-q", "--robots", robots_txt, "--robots-out", "robots.txt",
              "--host", "news.example.net")
    assert one.exit_code == 0
    assert "Disallow: /s/\n" in (logs / "robots.txt").read_text()


def test_suggest_nginx_file_is_for_http_and_names_the_server_line(logs):
    paths = sorted(str(p) for p in (SAMPLES / "litespeed").glob("access.log*"))
    result = run("suggest", *paths, "-q", "--nginx-out", "logtrap.conf")
    assert result.exit_code == 0
    assert result.stderr == (
        "Include logtrap.conf inside http {}, and add to each server {} of the site: "
        "if ($logtrap_block) { return 403; }\n")
    text = (logs / "logtrap.conf").read_text()
    assert "map $http_user_agent $logtrap_bot {" in text
    assert "\nif (" not in text  # `if` is refused inside http {}; the file holds it as a comment


# -- the real registry on sample_logs ------------------------------------------------------------


def test_sample_litespeed_finds_the_aggressive_bot(logs):
    paths = sorted(str(p) for p in (SAMPLES / "litespeed").glob("access.log*"))
    result = run("analyze", *paths, "--format", "litespeed", "--json", "-")
    doc = json.loads(result.stdout)
    assert result.exit_code == (3 if any(x["severity"] != "info" for x in doc["findings"])
                                else 0)
    assert "aggressive_bot" in {x["kind"] for x in doc["findings"]}
    assert doc["summary"]["lines"] == 6095 and doc["summary"]["rejected"] == 0
    assert "meta-externalagent" in doc["htaccess"]


def test_progress_only_on_a_terminal(monkeypatch):
    import io

    from logtrap import cli as cli_module

    class Tty(io.StringIO):
        def isatty(self):
            return True

    with cli_module._progress(quiet=False) as update:
        assert update is None  # pytest's stderr is not a terminal
    stream = Tty()
    monkeypatch.setattr(sys, "stderr", stream)
    with cli_module._progress(quiet=True) as update:
        assert update is None
    with cli_module._progress(quiet=False) as update:
        update(500, 1000, 20)
        update(1000, 1000, 40)
    assert "Reading" in stream.getvalue() and "40 lines" in stream.getvalue()


def test_suggest_says_why_a_rule_is_withheld(monkeypatch):
    monkeypatch.chdir(SAMPLES.parent)
    result = run("suggest", "sample_logs/nginx-shop/access.log*", "-q")
    assert result.exit_code == 0
    expected = ("WITHHELD robots.txt for *: pagination /shop/shoes?page\n"
                "  Why: Disallow: /shop/shoes?page= would block content URL /shop/shoes?page=5 "
                "(log, a page of the trap's own pattern fetched by people)")
    assert expected in result.stdout


def test_a_state_path_in_a_missing_folder_fails_before_reading(logs):
    result = run("analyze", "trap.log", "--state", "nowhere/state")
    assert result.exit_code == 1
    assert result.stderr == ("Error: cannot write nowhere/state: folder 'nowhere' does not exist\n"
                             "Hint: create it first (mkdir -p nowhere), or give another path\n")


def test_a_state_that_cannot_be_replaced_says_what_to_do(logs, monkeypatch):
    def immutable(src, dst):  # chattr +i, or a folder the user may not write
        raise PermissionError(errno.EPERM, "Operation not permitted")

    monkeypatch.setattr("logtrap.state.os.replace", immutable)
    result = run("analyze", "clean.log", "--state", "st.zip", "-q")
    assert result.exit_code == 1
    assert result.stderr == (
        "Error: cannot write state st.zip: Operation not permitted\n"
        "Hint: the user running logtrap needs to write the state file's folder (a folder of its "
        "own, such as /var/lib/logtrap/, made with mkdir -p); nothing was remembered, so the "
        "next run reads these lines again\n")


def test_a_damaged_compressed_log_gets_a_hint(logs):
    data = gzip.compress((logs / "clean.log").read_bytes())
    (logs / "cut.log.gz").write_bytes(data[: len(data) // 2])
    result = run("analyze", "cut.log.gz", "-q")
    assert result.exit_code == 1
    assert result.stderr == (
        "Error: cut.log.gz: cannot read, corrupt or truncated file (compressed file ended before "
        "the end-of-stream marker)\n"
        "Hint: the compressed file is damaged or cut short: leave it out of the logs given (if "
        "logrotate is still writing it, run again once it is done)\n")


def test_an_error_raised_without_a_hint_gets_one_from_its_cause_or_kind():
    def raised(kind, cause):
        try:
            try:
                raise cause
            except Exception as e:  # as logs.py raises them: the OSError is the context
                raise kind(f"x: cannot read ({e})") from None
        except LogtrapError as exc:
            return cli_module._hint(exc)

    denied = PermissionError(errno.EACCES, "Permission denied")
    assert raised(InputError, denied) == (
        "this user may not read it: run as one who may (root, or a member of its group, often adm)")
    assert raised(OutputError, denied).startswith("this user may not write there: ")
    assert raised(InputError, FileNotFoundError(errno.ENOENT, "No such file")) == (
        "check the path, and that this user may read it (paths in logtrap.toml are relative to "
        "its folder)")
    # a sitemap that is no XML is not a damaged compressed file
    assert raised(InputError, SyntaxError("not XML")).startswith("check the path")
    assert raised(InputError, EOFError("cut")).startswith("the compressed file is damaged")
    assert raised(ConfigError, ValueError("x")) == (
        "`logtrap settings` lists every setting with its value here and its default")
    assert cli_module._hint(InputError("x", hint="its own")) == "its own"


def test_ctrl_c_exits_130_without_aborted(logs, monkeypatch):
    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr("logtrap.state.analyze", interrupted)
    result = run("analyze", "clean.log", "--state", "st.zip")
    assert (result.exit_code, result.output) == (130, "")
    assert not (logs / "st.zip").exists()


def test_sigterm_exits_143_and_saves_nothing(logs, monkeypatch):
    # kill, a shutdown, `timeout`: the console script's handler raises where the run is, and
    # it unwinds as Ctrl-C does (a state being written left its temporary file for good)
    def terminated(*args, **kwargs):
        cli_module._terminate(15, None)

    monkeypatch.setattr("logtrap.state.analyze", terminated)
    result = run("analyze", "clean.log", "--state", "st.zip")
    assert (result.exit_code, result.output) == (143, "")
    assert list(logs.glob("*st.zip*")) == []
    before = signal.getsignal(signal.SIGTERM)
    monkeypatch.setattr(sys, "argv", ["logtrap", "--help"])

    def leave(code):  # the console script leaves with os._exit, which would end pytest
        raise SystemExit(code)

    monkeypatch.setattr(cli_module.os, "_exit", leave)
    try:
        with pytest.raises(SystemExit):
            cli_module.main()
        assert signal.getsignal(signal.SIGTERM) is cli_module._terminate
    finally:
        signal.signal(signal.SIGTERM, before)


def test_the_console_script_leaves_at_once_with_everything_written(logs):
    # it ends with os._exit, skipping Python's teardown: its output (more than a pipe's
    # buffer; PYTHONUNBUFFERED unset, as a user's shell runs it), its report files and its
    # exit code must all be there
    (logs / "many.log").write_text("\n".join(
        line(i % 60, f"/p{i}/x", GOOGLEBOT, "66.249.66.1") for i in range(3000)) + "\n")
    env = {**os.environ, "PYTHONPATH": str(SAMPLES.parent)}
    env.pop("PYTHONUNBUFFERED", None)
    patterns = subprocess.run([sys.executable, "-m", "logtrap", "patterns", "many.log", "-q",
                               "--limit", "3000"], capture_output=True, text=True, cwd=logs,
                              env=env, timeout=120)
    rows = patterns.stdout.splitlines()
    assert (patterns.returncode, patterns.stderr, len(rows)) == (0, "", 3002)  # header, rule
    assert [rows[2].split()[0], rows[-1].split()[0]] == ["/p0/x", "/p999/x"]
    found = subprocess.run([sys.executable, "-m", "logtrap", "analyze",
                            str(SAMPLES / "litespeed" / "access.log*"), "--json", "report.json",
                            "--quiet"], capture_output=True, text=True, cwd=logs, env=env,
                           timeout=120)
    report = json.loads((logs / "report.json").read_text())
    assert (found.returncode, found.stderr) == (3, "")
    assert [x["kind"] for x in report["findings"]] == ["aggressive_bot"]
    assert found.stdout.startswith("Findings: 1 critical, 0 warning, 0 info\n")


def test_a_reader_that_leaves_ends_the_run_quietly(logs):
    # `logtrap patterns ... | head -1`: more than a pipe's buffer, so the write itself fails
    (logs / "many.log").write_text("\n".join(
        line(i % 60, f"/p{i}/x", GOOGLEBOT, "66.249.66.1") for i in range(3000)) + "\n")
    proc = subprocess.Popen([sys.executable, "-m", "logtrap", "patterns", "many.log", "-q"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=logs,
                            env={**os.environ, "PYTHONPATH": str(SAMPLES.parent)})
    assert proc.stdout.readline().startswith(b"Pattern")
    proc.stdout.close()
    assert (proc.wait(timeout=60), proc.stderr.read()) == (141, b"")


def test_sitemap_and_robots_are_checked_before_the_logs_are_read(logs):
    (logs / "logtrap.toml").write_text('robots = "nope.txt"\n')
    result = run("analyze", "clean.log")  # which uses them only in reports: checked all the same
    assert result.exit_code == 1
    assert result.stderr == (
        f"Error: cannot read robots.txt {logs / 'nope.txt'}: No such file or directory\n"
        "Hint: check the path, and that this user may read it (paths in logtrap.toml are "
        "relative to its folder)\n")
    (logs / "logtrap.toml").unlink()
    result = run("suggest", "clean.log", "--robots", "trap.log")
    assert (result.exit_code, result.stderr) == (1, (
        "Error: trap.log is not a robots.txt: no line of it is a User-agent, Allow, Disallow or "
        "Sitemap line\nHint: pass the site's robots.txt (--robots)\n"))
    result = run("patterns", "clean.log", "--sitemap", "trap.log")
    assert (result.exit_code, result.stderr) == (1, (
        "Error: trap.log: not a sitemap (neither XML nor lines of absolute URLs)\n"
        "Hint: pass the site's sitemap.xml (or a text file of URLs)\n"))


@pytest.mark.parametrize("command", ["analyze", "patterns", "bots", "suggest"])
def test_every_command_reading_logs_lists_its_exit_codes(command):
    text = run(command, "--help").stdout
    assert "Exit codes:\n" in text
    for code in ("0", "1", "2", "130"):
        assert f"\n    {code}  " in text
    assert ("\n    3  findings at or above --fail-on" in text) == (command == "analyze")


def test_the_config_example_in_help_spells_keys_as_the_readme_does():
    # both spellings are read (config.ALIASES); the two documents show one
    text = run("--help").stdout
    readme = (SAMPLES.parent / "README.md").read_text()
    for key in ("log_format = ", "sitemaps = ["):
        assert key in text and key in readme
    for alias in ("\n    format = ", "\n    sitemap = "):
        assert alias not in text


# -- logtrap settings ----------------------------------------------------------------------


def test_settings_describes_every_setting():
    import dataclasses

    from logtrap.settings import Settings, described

    rows = described()
    assert [d.name for d in rows] == [f.name for f in dataclasses.fields(Settings)]
    assert all(d.text and d.group for d in rows)  # a new setting needs its comment


def test_settings_prints_values_a_config_file_takes_back(logs):
    from logtrap.config import build_settings, read_config
    from logtrap.settings import Settings

    result = run("settings", "--set", "url_sample_size=500", "--set", "hosts=a.example,b.example")
    assert result.exit_code == 0
    assigned = [line.split("   (default")[0].strip() for line in result.output.splitlines()
                if line.startswith("  ") and not line.startswith("   ")]  # not the texts
    assert len(assigned) == len(Settings.__dataclass_fields__)
    (logs / "printed.toml").write_text("\n".join(assigned))  # a site config made of them
    printed = build_settings(read_config(logs / "printed.toml"))
    assert printed == Settings(url_sample_size=500, hosts=("a.example", "b.example"))


def test_settings_lists_the_settings_a_word_names(logs):
    (logs / "site.toml").write_text("[thresholds]\ncrowd_min_addresses = 2000\n")
    result = run("settings", "crowd", "--config", str(logs / "site.toml"))
    assert result.exit_code == 0
    assert result.output.splitlines()[2:5] == [
        "crowds: an HTTP library, unnamed agent or link previewer sent from many addresses",
        "  crowd_min_addresses = 2_000   (default 500)",
        "      this many addresses are many people's app, not one crawler: a shop's Android app sends okhttp",
    ]
    names = [line.split()[0] for line in run("settings", "soft_404").output.splitlines()
             if line.startswith("  ") and not line.startswith("   ")]
    assert names == ["soft_404_min_urls", "soft_404_min_share", "soft_404_size_tolerance",
                     "soft_404_min_contrast", "soft_404_max_human_share"]


def test_settings_word_matching_nothing_is_a_usage_error(logs):
    result = CliRunner().invoke(cli, ["settings", "url_sampel"], env=ENV)
    assert result.exit_code == 2
    assert "no setting matches url_sampel (did you mean url_sample_size?)" in result.output


def test_settings_lists_the_settings_even_when_the_site_config_is_broken(logs):
    (logs / "logtrap.toml").write_text("zzzzqq = 3\n")  # a setting a later logtrap removed
    result = CliRunner().invoke(cli, ["settings", "crowd_min"], env=ENV)
    assert result.exit_code == 1
    assert result.stdout.splitlines()[1:4] == [
        "(The site config is left out: see the error below.)", "",
        "crowds: an HTTP library, unnamed agent or link previewer sent from many addresses"]
    assert "Error: " in result.stderr and "unknown setting 'zzzzqq'" in result.stderr


def test_settings_gives_a_config_folders_paths_whole(logs):
    # printed relative to here, they would point elsewhere pasted into the config
    (logs / "sub").mkdir()
    (logs / "sub" / "site.toml").write_text('robots = "robots.txt"\nip_ranges = ["Googlebot=g.json"]\n')
    lines = run("settings", "robots", "ip_ranges", "--config", "sub/site.toml").stdout.splitlines()
    assert f'  robots = "{logs / "sub" / "robots.txt"}"   (default "none")' in lines
    assert f'  ip_ranges = ["Googlebot={logs / "sub" / "g.json"}"]   (default [])' in lines

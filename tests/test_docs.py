"""Every command has help text with an example, and is documented in README.md
(after sqlite-utils' tests/test_docs.py)."""

import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from logtrap.cli import cli

README = Path(__file__).resolve().parent.parent / "README.md"
COMMANDS = sorted(cli.commands)


def readme() -> str:
    assert README.is_file(), "README.md is missing: it documents every command"
    return README.read_text(encoding="utf-8")


def test_the_commands():
    assert COMMANDS == ["analyze", "bots", "patterns", "settings", "suggest"]


@pytest.mark.parametrize("command", COMMANDS)
def test_command_has_help_with_an_example(command):
    result = CliRunner().invoke(cli, [command, "--help"])
    assert result.exit_code == 0
    assert cli.commands[command].help.strip()
    assert "Examples:" in result.output
    assert f"  logtrap {command} " in result.output


@pytest.mark.parametrize("command", COMMANDS)
def test_command_has_every_option_documented(command):
    for param in cli.commands[command].params:
        if param.param_type_name == "option":
            assert param.help, f"{command} {param.opts[0]} has no help text"


@pytest.mark.parametrize("command", COMMANDS)
def test_command_in_readme(command):
    assert re.search(rf"logtrap {command}\b", readme()), f"README.md never shows `logtrap {command}`"


def test_exit_codes_in_help_and_readme():
    result = CliRunner().invoke(cli, ["--help"])
    for code in ("0", "1", "2", "3"):
        assert re.search(rf"^\s+{code}  ", result.output, re.M), f"exit code {code} not in --help"
    text = readme()
    assert "--fail-on" in text and re.search(r"\b3\b", text)


def test_the_readme_config_example_is_a_valid_config(tmp_path):
    from logtrap.config import build_settings, read_config

    example = re.search(r"```toml\n(.*?)```", readme(), re.S).group(1)
    (tmp_path / "logtrap.toml").write_text(example)
    settings = build_settings(read_config(tmp_path / "logtrap.toml"))
    assert (settings.log_format, settings.hosts, settings.session_params) == (
        "combined", ("www.example.com",), ("sessid",))
    assert settings.sitemaps == (tmp_path / "sitemap.xml",)  # relative to the file
    assert settings.budget_hog_share == 0.5


def test_the_readme_setup_commands_are_what_ci_runs():
    ci = (README.parent / ".ci" / "run").read_text()
    test_command = "pip install -e '.[test]' && python -m pytest"
    assert test_command in readme() and test_command in ci
    assert "pip install -e . && logtrap analyze sample_logs/" in readme()


def test_the_readme_notebook_example_runs_and_suggests_what_the_cli_suggests(monkeypatch, tmp_path):
    import logtrap

    code = re.search(r"## In a notebook.*?```python\n(.*?)```", readme(), re.S).group(1)
    monkeypatch.chdir(README.parent)
    namespace: dict = {}
    exec(code, namespace)
    result = namespace["result"]
    out = tmp_path / "robots.txt"
    cli_run = CliRunner().invoke(cli, [
        "suggest", *sorted(map(str, Path("sample_logs/nginx-shop").glob("access.log*"))),
        "--sitemap", "sample_logs/sitemap.xml", "--robots-out", str(out)])
    assert cli_run.exit_code == 0, cli_run.output
    # the sitemap's pages are the content the rules were checked against, as on the CLI
    assert logtrap.suggest(result).robots_txt == out.read_text()
    # (people's `POST /cart/add` is none: a form's target, no page they read)
    assert "none of the 395 known content URLs" in out.read_text()

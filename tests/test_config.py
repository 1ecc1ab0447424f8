from pathlib import Path

import pytest

from logtrap.config import build_settings, coerce, find_config, parse_assignment, read_config
from logtrap.errors import ConfigError
from logtrap.settings import Settings


def write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


def test_full_config_maps_to_settings(tmp_path):
    config = write(
        tmp_path / "logtrap.toml",
        """
format = "combined"
hosts = ["example.com", "shop.example.com"]
session_params = ["sid"]
tracking_params = ["campaign", "ref"]
sitemap = "maps/sitemap.xml"
robots = "/etc/site/robots.txt"
ip_ranges = ["googlebot.json"]
verify_dns = true

[thresholds]
url_sample_size = 50
dns_timeout = 1
""",
    )
    settings = build_settings(read_config(config))
    assert settings.log_format == "combined"
    assert settings.hosts == ("example.com", "shop.example.com")
    assert settings.session_params == ("sid",)
    assert settings.tracking_params == ("campaign", "ref")
    assert settings.sitemaps == (tmp_path / "maps" / "sitemap.xml",)
    assert settings.robots == Path("/etc/site/robots.txt")
    assert settings.ip_ranges == (tmp_path / "googlebot.json",)
    assert settings.verify_dns is True
    assert settings.url_sample_size == 50
    assert settings.dns_timeout == 1.0
    assert isinstance(settings.dns_timeout, float)


def test_no_file_means_defaults(tmp_path):
    assert find_config(None, cwd=tmp_path) is None
    assert build_settings(None, None) == Settings()


def test_logtrap_toml_in_working_directory_is_found(tmp_path):
    config = write(tmp_path / "logtrap.toml", "hosts = ['a']\n")
    assert find_config(None, cwd=tmp_path) == config


def test_given_config_that_does_not_exist(tmp_path):
    with pytest.raises(ConfigError, match="missing.toml' does not exist"):
        find_config(tmp_path / "missing.toml")


def test_unknown_key_names_the_key_and_the_closest_name(tmp_path):
    config = write(tmp_path / "logtrap.toml", "[thresholds]\nurl_sample_sise = 5\n")
    with pytest.raises(ConfigError) as info:
        read_config(config)
    assert str(info.value) == f"{config}: [thresholds]: unknown setting 'url_sample_sise'"
    assert info.value.hint == "did you mean 'url_sample_size'?"


def test_unknown_top_level_key(tmp_path):
    config = write(tmp_path / "logtrap.toml", "hostz = ['a']\n")
    with pytest.raises(ConfigError) as info:
        read_config(config)
    assert str(info.value) == f"{config}: unknown setting 'hostz'"
    assert info.value.hint == "did you mean 'host'?"


def test_wrong_type_is_named(tmp_path):
    config = write(tmp_path / "logtrap.toml", "[thresholds]\nurl_sample_size = 'lots'\n")
    with pytest.raises(ConfigError) as info:
        read_config(config)
    assert str(info.value) == f"{config}: url_sample_size must be an integer, not 'lots'"


def test_bool_is_not_an_integer(tmp_path):
    config = write(tmp_path / "logtrap.toml", "url_sample_size = true\n")
    with pytest.raises(ConfigError, match="url_sample_size must be an integer, not True"):
        read_config(config)


def test_invalid_toml(tmp_path):
    config = write(tmp_path / "logtrap.toml", "hosts = [\n")
    with pytest.raises(ConfigError, match="is not valid TOML"):
        read_config(config)


def test_a_config_saved_with_a_byte_order_mark_is_read(tmp_path):
    # Notepad saves UTF-8 with a BOM: tomllib called its first line an invalid statement
    config = tmp_path / "logtrap.toml"
    config.write_bytes(b'\xef\xbb\xbfhosts = ["a.com"]\n')
    assert read_config(config)["hosts"] == ("a.com",)
    config.write_bytes(b'hosts = ["\xe9"]\n')  # Latin-1, not UTF-8
    with pytest.raises(ConfigError, match="is not UTF-8 text"):
        read_config(config)


def test_command_line_overrides_file(tmp_path):
    config = write(tmp_path / "logtrap.toml", "hosts = ['a']\nformat = 'common'\n")
    settings = build_settings(read_config(config), {"hosts": ("b",), "log_format": None})
    assert settings.hosts == ("b",)
    assert settings.log_format == "common"


def test_set_assignments_coerce_like_the_file():
    name, value = parse_assignment("url_sample_size = 7")
    assert coerce({name: value}) == {"url_sample_size": 7}
    assert coerce({"hosts": "a, b,"}) == {"hosts": ("a", "b")}
    assert coerce({"robots": "none"}) == {"robots": None}


def test_trusted_proxies_are_address_ranges():
    # as --set gives them (comma-separated), written as ipaddress writes a range; a bare
    # address is a range of one; anything else says what to write
    settings = Settings(**coerce({"trusted_proxies": "173.245.48.1/20, 2400:CB00::/32, 198.51.100.7"}))
    assert settings.trusted_proxies == ("173.245.48.0/20", "2400:cb00::/32", "198.51.100.7/32")
    with pytest.raises(ConfigError, match="trusted_proxies: 'cloudflare' is not an address range"):
        Settings(trusted_proxies=["cloudflare"])


def test_set_needs_name_and_value():
    with pytest.raises(ConfigError, match="is not NAME=VALUE"):
        parse_assignment("url_sample_size")
    with pytest.raises(ConfigError, match="unknown setting 'nope'"):
        parse_assignment("nope=1")


def test_ip_ranges_bot_prefix_keeps_the_bot_and_resolves_the_file(tmp_path):
    config = write(tmp_path / "logtrap.toml", "ip_ranges = ['Googlebot=ranges/g.json']\n")
    assert read_config(config)["ip_ranges"] == (Path(f"Googlebot={tmp_path}/ranges/g.json"),)


@pytest.mark.parametrize(("name", "value", "message"), [
    # 0 rows per step made the reader wait forever; 0 bytes per batch read nothing at all
    ("analysis_rows", 0, "analysis_rows must be at least 1, not 0"),
    ("batch_bytes", 0, "batch_bytes must be at least 1, not 0"),
    ("url_sample_size", -5, "url_sample_size must be at least 1, not -5"),
    ("budget_hog_share", float("nan"), "budget_hog_share must be a number 0 or more, not nan"),
    ("dns_timeout", 0.0, "dns_timeout must be a number above 0, not 0.0"),
    # a share above 1 switched its detector off without a word
    ("budget_hog_share", 2, "budget_hog_share is a share, from 0 to 1, not 2"),
    ("growing_pattern_min_novelty", 50.0, "growing_pattern_min_novelty is a share, from 0 to 1, not 50.0"),
])
def test_numbers_that_would_break_a_run_are_refused(name, value, message):
    with pytest.raises(ConfigError, match=f"^{message}$"):
        build_settings({}, {name: value})
    assert build_settings({}, {"pattern_min_names": 0}).pattern_min_names == 0  # 0: allowed


def test_settings_take_what_a_notebook_naturally_writes(tmp_path):
    # `hosts="www.example.net"` was read letter by letter ("no request for w, w, w, ...") and
    # `robots="robots.txt"` failed with an AttributeError deep in the suggestions
    settings = Settings(hosts="WWW.example.net:443", robots="robots.txt", sitemaps="s.xml",
                        ip_ranges="Googlebot=g.json", session_params="sid")
    assert settings.hosts == ("www.example.net",)
    assert (settings.robots, settings.sitemaps) == (Path("robots.txt"), (Path("s.xml"),))
    assert (settings.ip_ranges, settings.session_params) == (("Googlebot=g.json",), ("sid",))
    with pytest.raises(ConfigError, match="^url_sample_size must be a number, not 'many'$"):
        Settings(url_sample_size="many")
    with pytest.raises(ConfigError, match="^dns_timeout must be a number, not True$"):
        Settings(dns_timeout=True)


def test_library_calls_given_something_else_than_settings_say_what_to_pass():
    from logtrap import analyze, read_logs

    log = "sample_logs/litespeed/access.log"
    with pytest.raises(TypeError, match=r"^settings must be a logtrap Settings, not str "
                                        r"'combined': pass Settings\(log_format='combined'\)$"):
        analyze(log, "combined")
    with pytest.raises(TypeError, match=r"not dict .*: pass Settings\(\.\.\.\), or Settings\(\*\*d\)"):
        read_logs(log, settings={"log_format": "combined"})


def test_load_settings_reads_the_config_as_the_cli_does_and_names_a_missing_folder(tmp_path):
    from logtrap.config import load_settings

    (tmp_path / "logtrap.toml").write_text('sitemap = "sitemap.xml"\n[thresholds]\nbudget_hog_share = 0.4\n')
    settings = load_settings(cwd=tmp_path, url_sample_size=50)
    assert (settings.sitemaps, settings.budget_hog_share, settings.url_sample_size) == (
        (tmp_path / "sitemap.xml",), 0.4, 50)
    with pytest.raises(ConfigError, match="^load_settings: folder '/nonexistent' does not exist$"):
        load_settings(cwd="/nonexistent")


def test_two_spellings_of_one_setting_in_a_config_file_are_an_error(tmp_path):
    # `format` and `log_format` both given: one silently won
    path = tmp_path / "logtrap.toml"
    path.write_text('format = "common"\nlog_format = "combined"\n')
    with pytest.raises(ConfigError, match="'format' and 'log_format' both set log_format"):
        read_config(path)
    path.write_text('sitemap = "a.xml"\n[thresholds]\nsitemaps = ["b.xml"]\n')
    with pytest.raises(ConfigError, match="'sitemap' and 'sitemaps' both set sitemaps"):
        read_config(path)

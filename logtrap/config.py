"""Site config (TOML) and command-line values -> one `Settings`.

A site config is optional: the defaults need no file. When there is one (`logtrap.toml` in the
working directory, or the file given with `--config`), it may hold:

```toml
log_format = "combined"          # log format: "auto", a preset, or a LogFormat string
hosts = ["example.com"]          # only these virtual hosts
session_params = ["sid"]         # extra session-id parameter names
tracking_params = ["campaign"]   # extra tracking parameter names
sitemaps = ["sitemap.xml"]       # relative to this file's directory
robots = "robots.txt"            # the site's robots.txt, merged into suggestions
ip_ranges = ["googlebot.json"]   # search engines' published IP ranges
verify_dns = false

[thresholds]                     # any Settings field, by name
url_sample_size = 500
```

Any `Settings` field may also be given by name at the top level. A key that is neither is a
`ConfigError` naming the key and the closest valid name. Values given on the command line
override the file's.
"""

from __future__ import annotations

import dataclasses
import difflib
import tomllib
import types
import typing
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from logtrap.errors import ConfigError
from logtrap.settings import Settings

CONFIG_NAME = "logtrap.toml"  # looked for in the working directory when --config is not given
THRESHOLDS = "thresholds"

# Friendly names the file (and the CLI) use for some Settings fields.
ALIASES = {
    "format": "log_format",
    "host": "hosts",
    "sitemap": "sitemaps",
    "session_param": "session_params",
    "tracking_param": "tracking_params",
}


def settings_fields() -> dict[str, Any]:
    """Every Settings field name with its real (evaluated) type.

    >>> settings_fields()["url_sample_size"]
    <class 'int'>
    """
    hints = typing.get_type_hints(Settings)
    return {f.name: hints[f.name] for f in dataclasses.fields(Settings)}


def find_config(path: str | Path | None, cwd: str | Path | None = None) -> Path | None:
    """The config file to use: `path` if given (it must exist), else `logtrap.toml` in `cwd`.

    >>> find_config(None, cwd="/nonexistent") is None
    True
    """
    if path is not None:
        path = Path(path)
        if not path.is_file():
            raise ConfigError(
                f"config file {str(path)!r} does not exist",
                hint="give an existing TOML file with --config, or leave it out",
            )
        return path
    candidate = Path(cwd if cwd is not None else Path.cwd()) / CONFIG_NAME
    return candidate if candidate.is_file() else None


def read_config(path: str | Path) -> dict[str, Any]:
    """Read a TOML site config into Settings field values (paths resolved against its folder).

    >>> import tempfile, os
    >>> folder = tempfile.mkdtemp()
    >>> p = os.path.join(folder, "logtrap.toml")
    >>> _ = open(p, "w").write('format = "combined"\\n[thresholds]\\nurl_sample_size = 50\\n')
    >>> sorted(read_config(p).items())
    [('log_format', 'combined'), ('url_sample_size', 50)]
    """
    path = Path(path)
    try:
        # a UTF-8 byte order mark (Windows editors save one) is not TOML, but is no content
        data = tomllib.loads(path.read_bytes().removeprefix(b"\xef\xbb\xbf").decode("utf-8"))
    except UnicodeDecodeError as exc:
        raise ConfigError(f"config file {str(path)!r} is not UTF-8 text ({exc.reason})") from exc
    except OSError as exc:
        raise ConfigError(f"cannot read config file {str(path)!r}: {exc.strerror}") from exc
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(
            f"config file {str(path)!r} is not valid TOML: {exc}",
            hint="see the example in `logtrap --help`",
        ) from exc
    flat: dict[str, Any] = {}
    spelled: dict[str, str] = {}  # field -> the key that set it

    def put(key: str, value: Any, where: str) -> None:
        name = _field_name(key, where)
        if name in spelled:  # `format` and `log_format`: which one was meant is anyone's guess
            raise ConfigError(f"{where}: {spelled[name]!r} and {key!r} both set {name}",
                              hint="keep one of them")
        flat[name], spelled[name] = value, key

    for key, value in data.items():
        if key == THRESHOLDS:
            if not isinstance(value, dict):
                raise ConfigError(f"{str(path)!r}: [thresholds] must be a table")
            for name, inner in value.items():
                put(name, inner, f"{path}: [thresholds]")
        else:
            put(key, value, str(path))
    return coerce(flat, base=path.parent, where=str(path))


def coerce(
    values: Mapping[str, Any], *, base: Path | None = None, where: str = "setting"
) -> dict[str, Any]:
    """Check and convert raw values (TOML values or command-line strings) to Settings types.

    Relative paths are resolved against `base` when it is given.

    >>> coerce({"hosts": "a.example", "verify_dns": "yes", "dns_timeout": "1.5"})
    {'hosts': ('a.example',), 'verify_dns': True, 'dns_timeout': 1.5}
    >>> coerce({"url_sample_size": "many"})
    Traceback (most recent call last):
    ...
    logtrap.errors.ConfigError: setting: url_sample_size must be an integer, not 'many'
    """
    fields = settings_fields()
    out: dict[str, Any] = {}
    for raw_name, value in values.items():
        name = _field_name(raw_name, where)
        out[name] = _convert(value, fields[name], name=name, base=base, where=where)
    return out


def parse_assignment(text: str) -> tuple[str, Any]:
    """Split a `--set NAME=VALUE` argument into a Settings field name and a raw value.

    >>> parse_assignment("url_sample_size=10")
    ('url_sample_size', '10')
    """
    name, sep, value = text.partition("=")
    if not sep or not name.strip():
        raise ConfigError(
            f"--set {text!r} is not NAME=VALUE",
            hint="for example: --set url_sample_size=500",
        )
    return _field_name(name.strip(), "--set"), value.strip()


def build_settings(
    config: Mapping[str, Any] | None = None,
    overrides: Mapping[str, Any] | None = None,
) -> Settings:
    """Settings from defaults, then the config file's values, then the command line's.

    Values are already coerced (see `read_config` and `coerce`); `overrides` with value None
    are left out, so an option not given on the command line keeps the file's value.

    >>> build_settings({"hosts": ("a",)}, {"hosts": None, "verify_dns": True}).hosts
    ('a',)
    >>> build_settings({"hosts": ("a",)}, {"hosts": ("b",)}).hosts
    ('b',)
    """
    merged = dict(config or {})
    merged.update({k: v for k, v in (overrides or {}).items() if v is not None})
    return Settings().replace(**merged)


def load_settings(
    config: str | Path | None = None, *, cwd: str | Path | None = None, **values: Any
) -> Settings:
    """Settings as the command line builds them: the defaults, then `config` (or, when none is
    given, `logtrap.toml` in `cwd`, the working directory by default), then `values` by name
    (`--set` and the options, as TOML would give them: `sitemap="sitemap.xml"` or
    `sitemaps=[...]`, `format="combined"`). A notebook beside the site's config then gets the
    answers its cron job gets.

    >>> import tempfile, os
    >>> folder = tempfile.mkdtemp()
    >>> _ = open(os.path.join(folder, "logtrap.toml"), "w").write("budget_hog_share = 0.4\\n")
    >>> s = load_settings(cwd=folder, url_sample_size=50)
    >>> s.budget_hog_share, s.url_sample_size
    (0.4, 50)
    >>> load_settings(cwd=folder, budget_hog_share=0.6).budget_hog_share
    0.6
    """
    if cwd is not None and not Path(cwd).is_dir():  # a typo would give the defaults silently
        raise ConfigError(f"load_settings: folder {str(cwd)!r} does not exist")
    path = find_config(config, cwd)
    from_file = read_config(path) if path is not None else {}
    return build_settings(from_file, coerce(values, where="load_settings"))


def _field_name(key: str, where: str) -> str:
    fields = settings_fields()
    name = ALIASES.get(key, key)
    if name in fields:
        return name
    valid = sorted({*fields, *ALIASES})
    close = difflib.get_close_matches(key, valid, n=1)
    hint = f"did you mean {close[0]!r}?" if close else "`logtrap settings` lists every setting"
    raise ConfigError(f"{where}: unknown setting {key!r}", hint=hint)


def _convert(value: Any, kind: Any, *, name: str, base: Path | None, where: str) -> Any:
    origin = typing.get_origin(kind)
    args = typing.get_args(kind)
    if origin in (typing.Union, types.UnionType):
        inner = [a for a in args if a is not type(None)]
        if value is None or (isinstance(value, str) and value.lower() in ("", "none")):
            return None
        return _convert(value, inner[0], name=name, base=base, where=where)
    if origin is tuple:
        items = value.split(",") if isinstance(value, str) else value
        if not isinstance(items, (list, tuple)):
            raise ConfigError(f"{where}: {name} must be a list, not {value!r}")
        return tuple(
            _convert(item.strip() if isinstance(item, str) else item, args[0],
                     name=name, base=base, where=where)
            for item in items
            if not (isinstance(item, str) and not item.strip())
        )
    return _scalar(value, kind, name=name, base=base, where=where)


_TRUE = ("1", "true", "yes", "on")
_FALSE = ("0", "false", "no", "off")


def _scalar(value: Any, kind: Any, *, name: str, base: Path | None, where: str) -> Any:
    def bad(what: str) -> ConfigError:
        return ConfigError(f"{where}: {name} must be {what}, not {value!r}")

    if kind is bool:
        if isinstance(value, bool):
            return value
        if isinstance(value, str) and value.lower() in _TRUE + _FALSE:
            return value.lower() in _TRUE
        raise bad("true or false")
    if kind is int:
        if isinstance(value, bool):
            raise bad("an integer")
        if isinstance(value, int):
            return value
        try:
            return int(str(value).replace("_", ""))
        except ValueError:
            raise bad("an integer") from None
    if kind is float:
        if isinstance(value, bool):
            raise bad("a number")
        try:
            return float(value)
        except (TypeError, ValueError):
            raise bad("a number") from None
    if kind is Path:
        if not isinstance(value, (str, Path)):
            raise bad("a path")
        text = str(value)
        # An IP range file may be given as BOT=FILE (verify.load_ranges): resolve FILE only.
        bot, sep, rest = text.partition("=")
        prefix = ""
        if name == "ip_ranges" and sep and bot and "/" not in bot:
            prefix, text = bot + "=", rest
        path = Path(text).expanduser()
        if base is not None and not path.is_absolute():
            path = base / path
        return Path(prefix + str(path)) if prefix else path
    if kind is str:
        if not isinstance(value, str):
            raise bad("a string")
        return value
    # A field type this module does not know yet (added by a later stage): pass it through,
    # Settings' own checks (if any) decide.
    return value

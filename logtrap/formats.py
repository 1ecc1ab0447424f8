"""Apache `LogFormat` / nginx `log_format` strings -> one regex and a Polars parser; auto-detection.

A format string compiles to one anchored regex with a capture group only for the fields logtrap
uses (fields it does not use are matched but not captured: captures are what the regex engine
pays for). `parse_lines` runs that regex over a one-column frame of lines with
`str.extract_groups` and turns the groups into `REQUEST_SCHEMA` with Polars expressions only.

Fields recognised (anything else is matched as an opaque field):

- Apache: `%h %a %{c}a %l %u %t %{strftime}t %{sec|msec|usec|msec_frac|usec_frac}t %r %s %>s
  %b %B %O %D %T %{ms|us|s}T %v %V %p %U %q %m %H %{Referer}i %{User-Agent}i %%`
  (mod_log_config); `%{...}e/n/x/C/o/i` and letters such as `%A %I %R %X` are opaque.
- nginx: `$remote_addr $time_local $time_iso8601 $msec $request $request_method $request_uri
  $uri $args $query_string $server_protocol $status $body_bytes_sent $bytes_sent $http_referer
  $http_user_agent $host $server_name $http_host $request_time`; any other `$var` is opaque.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import lru_cache

import polars as pl

from logtrap import schema as s
from logtrap.errors import FormatError
from logtrap.settings import HOST_PORT

# Apache's own names for its stock formats (httpd.conf / Debian apache2.conf).
PRESETS: dict[str, str] = {
    "combined": '%h %l %u %t "%r" %>s %b "%{Referer}i" "%{User-Agent}i"',
    "common": '%h %l %u %t "%r" %>s %b',
    "vhost_combined": '%v:%p %h %l %u %t "%r" %>s %O "%{Referer}i" "%{User-Agent}i"',
    "vhost_common": '%v %h %l %u %t "%r" %>s %b',
    # nginx's built-in `combined` log_format; it is byte-for-byte Apache combined.
    "nginx": '$remote_addr - $remote_user [$time_local] "$request" $status $body_bytes_sent '
    '"$http_referer" "$http_user_agent"',
    # LiteSpeed / OpenLiteSpeed write Apache combined (server and vhost logs alike).
    "litespeed": '%h %l %u %t "%r" %>s %b "%{Referer}i" "%{User-Agent}i"',
    # Combined followed by any extra fields (many hosts append %D, %{Host}i, a cookie...).
    "combined_extra": '%h %l %u %t "%r" %>s %b "%{Referer}i" "%{User-Agent}i" %{...}*',
    # The virtual host first, then combined, then any extra fields or none: what many nginx
    # configs write (`$host $remote_addr - $remote_user [$time_local] "$request" ...`).
    "host_combined": '%v %h %l %u %t "%r" %>s %b "%{Referer}i" "%{User-Agent}i"%{...}*',
    # netnea's "extended" Apache format (Apache-Labor tutorials), with its `%X` field.
    "netnea": '%h %{GEOIP_COUNTRY_CODE}e %u [%{%Y-%m-%d %H:%M:%S}t.%{usec_frac}t] "%r" %>s %b '
    '"%{Referer}i" "%{User-Agent}i" %v %A %p %R %{BALANCER_WORKER_ROUTE}e %X "%{cookie}n" '
    "%{UNIQUE_ID}e %{SSL_PROTOCOL}x %{SSL_CIPHER}x %I %O %{ratio}n%% %D %{ModSecTimeIn}e "
    "%{ApplicationTime}e %{ModSecTimeOut}e %{ModSecAnomalyScoreIn}e %{ModSecAnomalyScore}e",
}

# Order auto-detection tries them in: the most specific first, so a vhost_combined line is
# not taken for something looser; ties on the sample go to the earlier one.
DETECT_ORDER: tuple[str, ...] = (
    "vhost_combined",
    "combined",
    "common",
    "vhost_common",
    "netnea",
    "combined_extra",
    "host_combined",
)

# -- regex pieces -----------------------------------------------------------------------------
# Contents of a double-quoted field: Apache writes `"` as `\"` and `\` as `\\`; nginx writes
# both as `\xHH`, so a backslash always starts an escape and `[^"\\]|\\.` never backtracks.
_QUOTED = r'(?:[^"\\]|\\.)*'
_TOKEN = r"[^ ]*"
_DIGITS = r"[0-9]+"
_NUMBER_OR_DASH = r"(?:[0-9]+|-)"
_FLOAT_OR_DASH = r"(?:[0-9]+(?:\.[0-9]*)?|-)"
_APACHE_TIME = r"[0-9]{2}/[A-Za-z]{3}/[0-9]{4}:[0-9]{2}:[0-9]{2}:[0-9]{2} [+-][0-9]{4}"
_ISO_TIME = r"[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}(?:\.[0-9]+)?(?:Z|[+-][0-9]{2}:?[0-9]{2})"
_LIST = r"[^ ]*(?:(?:, | : )[^ ]+)*"  # nginx upstream_* and X-Forwarded-For: "a, b" lists
_REGEX_META = set("\\.+*?()|[]{}^$#&-~")

APACHE_TIME_FORMAT = "%d/%b/%Y:%H:%M:%S %z"

# strftime directives -> regex, for `%{format}t`; chrono's strptime reads the same directives.
_STRFTIME_RX = {
    "Y": "[0-9]{4}", "m": "[0-9]{2}", "d": "[0-9]{2}", "H": "[0-9]{2}", "M": "[0-9]{2}",
    "S": "[0-9]{2}", "y": "[0-9]{2}", "b": "[A-Za-z]{3}", "h": "[A-Za-z]{3}", "B": "[A-Za-z]+",
    "a": "[A-Za-z]{3}", "A": "[A-Za-z]+", "z": "[+-][0-9]{4}", "Z": "[A-Za-z]+", "e": " ?[0-9]{1,2}",
    "j": "[0-9]{3}", "I": "[0-9]{2}", "p": "[AP]M", "T": "[0-9]{2}:[0-9]{2}:[0-9]{2}",
    "F": "[0-9]{4}-[0-9]{2}-[0-9]{2}", "D": "[0-9]{2}/[0-9]{2}/[0-9]{2}", "R": "[0-9]{2}:[0-9]{2}",
    "s": "[0-9]+", "%": "%",
}


@dataclass(frozen=True)
class LogFormat:
    """A compiled log format: the spec, its kind, and the regex `parse_lines` runs.

    `fields` names the regex's capture groups in order (roles such as "client", "time_apache",
    "request", "status"); opaque fields are matched without a group.

    >>> compile_format("common").fields
    ('client', 'time_apache', 'request', 'status', 'bytes')
    """

    name: str  # preset name, or "custom"
    spec: str  # the format string
    kind: str  # "apache" | "nginx"
    regex: str
    fields: tuple[str, ...]
    time_format: str | None = None  # strptime format of a `%{...}t` strftime field
    # the format cut at its `"` (`_quote_pieces`), for the fast path; None: regex only
    pieces: tuple[_Piece, ...] | None = field(default=None, repr=False)

    def describe(self) -> str:
        """How error messages and reports name this format.

        >>> compile_format("combined").describe()
        'combined'
        """
        kind = "Apache LogFormat" if self.kind == "apache" else "nginx log_format"
        return self.name if self.name != "custom" else f"{kind} {self.spec!r}"


# -- tokenising format strings ----------------------------------------------------------------
_APACHE_DIRECTIVE = re.compile(r"%[<>]?!?[0-9,]*(?:\{([^}]*)\})?([a-zA-Z%*])")
_NGINX_VARIABLE = re.compile(r"\$(?:\{([A-Za-z0-9_]+)\}|([A-Za-z0-9_]+))")


def _escape(text: str) -> str:
    """Escape literal text for the Rust regex engine Polars uses (not Python's `re`)."""
    return "".join("\\" + c if c in _REGEX_META else c for c in text)


def _apache_role(arg: str | None, letter: str) -> tuple[str | None, str]:
    """(role, regex) for one Apache directive; role None = matched, not captured."""
    a = (arg or "").lower()
    if letter == "h":
        return "client", _TOKEN
    if letter == "a" and a in ("", "c"):
        return "client_ip", _TOKEN  # an address even where %h holds a resolved name
    if letter == "t":
        if arg is None:  # `[...]`: _tokens adds the brackets as literals
            return "time_apache", _APACHE_TIME
        a = a.removeprefix("begin:").removeprefix("end:")
        if a in ("sec", "msec", "usec"):
            return f"time_epoch_{a}", _DIGITS
        if a in ("msec_frac", "usec_frac"):
            return a, _DIGITS
        return "time_strftime", _strftime_regex(arg.removeprefix("begin:").removeprefix("end:"))
    if letter == "r":
        return "request", None
    if letter == "s":
        return "status", r"(?:[0-9]{3}|-)"
    if letter == "b":
        return "bytes", _NUMBER_OR_DASH
    if letter == "B":
        return "bytes_B", _DIGITS
    if letter == "O":
        return "bytes_O", _DIGITS
    if letter == "D":
        return "rt_us", _DIGITS
    if letter == "T":
        return {"ms": "rt_ms", "us": "rt_us"}.get(a, "rt_s"), _DIGITS
    if letter == "v":
        return "host", None
    if letter == "V":
        return "host_V", None
    if letter == "p":
        return None, _DIGITS if a in ("", "canonical", "local", "remote") else _TOKEN
    if letter == "U":
        return "path", r"[^ ?]*"
    if letter == "q":
        return "query_q", r"(?:\?[^ ]*)?"
    if letter == "m":
        return "method", None
    if letter == "H":
        return "protocol", None
    if letter == "i" and a == "referer":
        return "referer", None
    if letter == "i" and a == "user-agent":
        return "user_agent", None
    if letter == "i" and a == "host":
        return "host_http", None
    return None, None


def _strftime_regex(fmt: str) -> str:
    out, i = [], 0
    while i < len(fmt):
        if fmt[i] == "%" and i + 1 < len(fmt):
            out.append(_STRFTIME_RX.get(fmt[i + 1], "[^ ]+"))
            i += 2
        else:
            out.append(_escape(fmt[i]))
            i += 1
    return "".join(out)


_NGINX_ROLES: dict[str, tuple[str | None, str | None]] = {
    "remote_addr": ("client", _TOKEN),
    "time_local": ("time_apache", _APACHE_TIME),
    "time_iso8601": ("time_iso", _ISO_TIME),
    "msec": ("time_epoch_float", r"[0-9]+(?:\.[0-9]+)?"),
    "request": ("request", None),
    "request_method": ("method", None),
    "request_uri": ("url", None),
    "uri": ("path", None),
    "document_uri": ("path", None),
    "args": ("query_args", None),
    "query_string": ("query_args", None),
    "server_protocol": ("protocol", None),
    "status": ("status", r"[0-9]{3}"),
    "body_bytes_sent": ("bytes", _NUMBER_OR_DASH),
    "bytes_sent": ("bytes_O", _NUMBER_OR_DASH),
    "http_referer": ("referer", None),
    "http_user_agent": ("user_agent", None),
    "host": ("host", None),
    "server_name": ("host_V", None),
    "http_host": ("host_http", None),
    "request_time": ("rt_s", _FLOAT_OR_DASH),
    "upstream_response_time": (None, _LIST),
    "upstream_connect_time": (None, _LIST),
    "upstream_header_time": (None, _LIST),
    "upstream_status": (None, _LIST),
    "upstream_addr": (None, _LIST),
    "http_x_forwarded_for": (None, _LIST),
    "proxy_add_x_forwarded_for": (None, _LIST),
}


def _tokens(spec: str, kind: str) -> list[tuple[str, str | None, str | None]]:
    """Split a spec into ("lit", text, None) and ("field", role, regex) items."""
    pattern = _APACHE_DIRECTIVE if kind == "apache" else _NGINX_VARIABLE
    items: list[tuple[str, str | None, str | None]] = []
    pos = 0
    for m in pattern.finditer(spec):
        if m.start() > pos:
            items.append(("lit", spec[pos : m.start()], None))
        pos = m.end()
        if kind == "apache":
            arg, letter = m.group(1), m.group(2)
            if letter == "%":
                items.append(("lit", "%", None))
                continue
            if letter == "*":  # logtrap's own "any trailing fields" marker (combined_extra)
                items.append(("field", None, ".*"))
                continue
            role, rx = _apache_role(arg, letter)
            if letter == "t" and arg is None:  # Apache writes %t as [28/Nov/2026:10:00:00 +0000]
                items += [("lit", "[", None), ("field", role, rx), ("lit", "]", None)]
                continue
        else:
            name = m.group(1) or m.group(2)
            role, rx = _NGINX_ROLES.get(name, (None, None))
        items.append(("field", role, rx))
    if pos < len(spec):
        items.append(("lit", spec[pos:], None))
    return items


_Part = tuple[str, str, "str | None"]  # ("lit", text, None) | ("field", regex body, role or None)


def _parts(items: list[tuple[str, str | None, str | None]]) -> list[_Part]:
    """Items -> literal text and field bodies; a field keeps its role only where it is captured
    (the first field of a role, not an opaque one). Quoted fields get `_QUOTED` as body."""
    parts: list[_Part] = []
    seen: set[str] = set()
    for i, (typ, role, rx) in enumerate(items):
        if typ == "lit":
            parts.append(("lit", role or "", None))
            continue
        before = items[i - 1][1] if i > 0 and items[i - 1][0] == "lit" else ""
        after = items[i + 1][1] if i + 1 < len(items) and items[i + 1][0] == "lit" else ""
        quoted = bool(before and after and before.endswith('"') and after.startswith('"'))
        if quoted:
            body = _QUOTED
        elif rx is not None:
            body = rx
        elif after and after[0] != " ":
            body = "[^ " + _escape(after[0]) + "]*"  # e.g. %v in "%v:%p"
        else:
            body = _TOKEN
        captured = role is not None and role not in seen
        if captured:
            seen.add(role)  # type: ignore[arg-type]
        parts.append(("field", body, role if captured else None))
    return parts


def _field_rx(body: str, role: str | None) -> str:
    return "(" + body + ")" if role is not None else "(?:" + body + ")"


def _build_regex(items: list[tuple[str, str | None, str | None]]) -> tuple[str, tuple[str, ...]]:
    parts = _parts(items)
    regex = "^" + "".join(_escape(x) if typ == "lit" else _field_rx(x, role) for typ, x, role in parts)
    fields = tuple(role for typ, _, role in parts if typ == "field" and role is not None)
    # A truncated line may end inside its last quoted field (elastic's line 8899 ends in
    # `"Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html`): the closing
    # quote may be missing at the very end of the line. `"?$` keeps the regex one-pass; a
    # form such as `(?:"|$)` made the whole match three times slower.
    if regex.endswith('"') and items and items[-1][0] == "lit" and items[-1][1] == '"':
        regex = regex + "?"
    return regex + "$", fields


@dataclass(frozen=True)
class _Piece:
    """The text between two `"` of a line (or before the first, or after the last)."""

    role: str | None = None  # a quoted field's role: the whole piece is its value
    literal: str | None = None  # a piece of literal text only: must equal it
    regex: str | None = None  # otherwise: the anchored regex the piece must match
    fields: tuple[str, ...] = ()  # the regex's capture groups


def _quote_pieces(items: list[tuple[str, str | None, str | None]]) -> tuple[_Piece, ...] | None:
    """The format cut at its literal `"`, for the fast path of `_extract`; None without any.

    In a line with no backslash and exactly as many `"` as the format has, every `"` is one of
    the format's (a quoted field cannot hold one unescaped, and there is none left over for an
    unquoted field), so splitting at `"` cuts the line exactly where the full regex would, and
    each quoted field is a whole piece. Only the unquoted pieces (short: client, time, status,
    size) still need a regex, and it runs on a few dozen bytes instead of the whole line.
    """
    pieces: list[_Piece] = []
    rx: list[str] = []
    text: list[str] = []
    fields: list[str] = []
    is_literal = True
    quoted: list[str | None] = []  # the role of the quoted field in the current piece
    in_quoted = False

    def close() -> None:
        nonlocal is_literal, in_quoted
        if in_quoted:
            pieces.append(_Piece(role=quoted[0] if quoted else None))
        elif is_literal:
            pieces.append(_Piece(literal="".join(text)))
        else:
            pieces.append(_Piece(regex="^" + "".join(rx) + "$", fields=tuple(fields)))
        rx.clear(), text.clear(), fields.clear(), quoted.clear()
        is_literal, in_quoted = True, False

    for typ, x, role in _parts(items):
        if typ == "field" and x == _QUOTED:
            in_quoted = True
            quoted.append(role)
            continue
        if typ == "field":
            rx.append(_field_rx(x, role))
            if role is not None:
                fields.append(role)
            is_literal = False
            continue
        for ch in x:
            if ch == '"':
                close()
            else:
                rx.append(_escape(ch))
                text.append(ch)
    close()
    return tuple(pieces) if len(pieces) > 1 else None


@lru_cache(maxsize=64)  # auto-detection compiles every preset for every file
def compile_format(spec_or_preset: str) -> LogFormat:
    """Compile a preset name, an Apache `LogFormat` or an nginx `log_format` string.

    A string with `$variables` is nginx, one with `%` directives is Apache. Unknown directives
    and variables become opaque fields (matched, not kept).

    >>> f = compile_format('$remote_addr [$time_local] "$request" $status $request_time')
    >>> f.kind, f.fields
    ('nginx', ('client', 'time_apache', 'request', 'status', 'rt_s'))
    >>> compile_format("apache2")
    Traceback (most recent call last):
    ...
    logtrap.errors.FormatError: unknown log format 'apache2': not a preset (combined, common, vhost_combined, vhost_common, nginx, litespeed, combined_extra, host_combined, netnea) and it has no % directives or $ variables
    """
    if not isinstance(spec_or_preset, str) or not spec_or_preset.strip():
        raise FormatError("empty log format", hint=f"use a preset: {', '.join(PRESETS)}")
    key = spec_or_preset.strip()
    name = key.lower() if key.lower() in PRESETS else "custom"
    spec = PRESETS[name] if name != "custom" else _unquote_config(spec_or_preset)
    if _NGINX_VARIABLE.search(spec):
        kind = "nginx"
    elif _APACHE_DIRECTIVE.search(spec):
        kind = "apache"
    else:
        raise FormatError(
            f"unknown log format {spec_or_preset!r}: not a preset ({', '.join(PRESETS)}) "
            "and it has no % directives or $ variables",
            hint="pass a preset name or the LogFormat / log_format string from the server config",
        )
    items = _tokens(spec, kind)
    regex, fields = _build_regex(items)
    time_format = None
    for typ, role, _ in items:
        if typ == "field" and role == "time_strftime":
            arg = next(m.group(1) for m in _APACHE_DIRECTIVE.finditer(spec)
                       if m.group(2) == "t" and m.group(1) and _is_strftime(m.group(1)))
            time_format = arg.removeprefix("begin:").removeprefix("end:")
            break
    try:
        pl.Series([""], dtype=pl.String).str.extract_groups(regex)
    except Exception as e:  # a literal the regex engine rejects
        raise FormatError(f"log format {spec!r} does not compile: {e}") from None
    return LogFormat(name=name, spec=spec, kind=kind, regex=regex, fields=fields,
                     time_format=time_format, pieces=_quote_pieces(items))


def _unquote_config(spec: str) -> str:
    r"""Accept a format pasted from a server config: nginx's `'...' '...'` pieces are joined,
    and Apache's `\"` inside a quoted LogFormat becomes `"`.

    >>> print(_unquote_config("'$remote_addr - ' '\"$request\" $status'"))
    $remote_addr - "$request" $status
    >>> print(_unquote_config(r'"%h \"%r\" %>s"'))
    %h "%r" %>s
    """
    text = spec.strip()
    if text.startswith("'") and text.endswith("'") and "$" in text:
        return "".join(re.findall(r"'([^']*)'", text))
    if "$" not in text and '\\"' in text:
        text = text.replace('\\"', '"')
        if text.startswith('"') and text.endswith('"'):
            text = text[1:-1]
    return text


def _is_strftime(arg: str) -> bool:
    a = arg.lower().removeprefix("begin:").removeprefix("end:")
    return a not in ("sec", "msec", "usec", "msec_frac", "usec_frac")


# -- parsing ------------------------------------------------------------------------------------
_UNESCAPE_FROM = ['\\"', "\\x22", "\\\\", "\\x5C", "\\x5c"]
_UNESCAPE_TO = ['"', '"', "\\", "\\", "\\"]
_METHOD_RX = r"^[A-Za-z][A-Za-z0-9_.-]*$"
_ESCAPED = (s.URL, s.PATH, s.QUERY, s.REFERER, s.USER_AGENT)  # columns that may hold escapes


def _unescape(e: pl.Expr) -> pl.Expr:
    """Undo Apache's `\\"`/`\\\\` and nginx's `\\x22`/`\\x5C` escapes in one left-to-right pass."""
    return e.str.replace_many(_UNESCAPE_FROM, _UNESCAPE_TO)


def _dash_null(e: pl.Expr) -> pl.Expr:
    return pl.when(e.is_in(["-", ""])).then(None).otherwise(e)


def _apache_time(e: pl.Expr) -> pl.Expr:
    """`28/Nov/2026:10:00:00 +0100` -> UTC. The offset is applied by hand: strptime with `%z`
    costs four times as much as without it plus this integer arithmetic."""
    local = e.str.slice(0, 20).str.strptime(pl.Datetime("us"), "%d/%b/%Y:%H:%M:%S", strict=False)
    # "-0130" -> -130 and -1 (the regex fixed the layout): -130 - 40 * -1 = -90 minutes. Each
    # slice is used once: an expression used three times was computed three times.
    hhmm = e.str.slice(21).cast(pl.Int32, strict=False)
    hours = e.str.slice(21, 3).cast(pl.Int32, strict=False)
    return (local - pl.duration(minutes=hhmm - 40 * hours)).dt.replace_time_zone("UTC")


def _time_expr(cols: set[str], fmt: LogFormat) -> tuple[pl.Expr, bool]:
    """(time expression in UTC, whether the format has a time at all)."""
    t: pl.Expr | None = None
    if "time_apache" in cols:
        t = _apache_time(pl.col("time_apache"))
    elif "time_iso" in cols:
        t = pl.col("time_iso").str.to_datetime(time_unit="us", time_zone="UTC", strict=False)
    elif "time_strftime" in cols and fmt.time_format:
        has_tz = "%z" in fmt.time_format or "%Z" in fmt.time_format
        t = pl.col("time_strftime").str.strptime(pl.Datetime("us"), fmt.time_format, strict=False)
        if not has_tz:  # no offset in the log (netnea): taken as UTC
            t = t.dt.replace_time_zone("UTC")
    elif "time_epoch_float" in cols:
        t = (pl.col("time_epoch_float").cast(pl.Float64, strict=False) * 1e6).cast(pl.Int64, strict=False)
        t = pl.from_epoch(t, time_unit="us").dt.replace_time_zone("UTC")
    else:
        for unit, mult in (("sec", 1_000_000), ("msec", 1_000), ("usec", 1)):
            if f"time_epoch_{unit}" in cols:
                v = pl.col(f"time_epoch_{unit}").cast(pl.Int64, strict=False) * mult
                t = pl.from_epoch(v, time_unit="us").dt.replace_time_zone("UTC")
    if t is None:
        return pl.lit(None, dtype=s.TIME_DTYPE), False
    t = t.dt.convert_time_zone("UTC").cast(s.TIME_DTYPE, strict=False)
    if "usec_frac" in cols:
        t = t + pl.duration(microseconds=pl.col("usec_frac").cast(pl.Int64, strict=False))
    elif "msec_frac" in cols:
        t = t + pl.duration(milliseconds=pl.col("msec_frac").cast(pl.Int64, strict=False))
    return t, True


def _split_request(lf: pl.LazyFrame, req: str) -> pl.LazyFrame:
    """Request line -> "_method", "_url", "_protocol"; all null for "-", TLS bytes and junk.

    String slicing in stages, not a regex: a second regex pass cost more than the rest of the
    parse, and naming each intermediate column keeps Polars from computing it twice.
    """
    first, rest = pl.col("_rm"), pl.col("_rr")
    p8, p6 = pl.col("_p8"), pl.col("_p6")  # " HTTP/1.1" and " HTTP/2"
    return (
        lf.with_columns(pl.col(req).str.splitn(" ", 2).struct.rename_fields(["_rm", "_rr"]).alias("_rq"))
        .unnest("_rq")
        .with_columns(
            (first.str.contains(_METHOD_RX) & (rest.str.len_bytes() > 0)).fill_null(False).alias("_valid"),
            rest.str.slice(-9).str.starts_with(" HTTP/").alias("_p8"),
            rest.str.slice(-7).str.starts_with(" HTTP/").alias("_p6"),
        )
        .with_columns(
            pl.when(pl.col("_valid")).then(first).alias("_method"),
            pl.when(pl.col("_valid")).then(
                pl.when(p8).then(rest.str.head(-9)).when(p6).then(rest.str.head(-7)).otherwise(rest)
            ).alias("_url"),
            pl.when(pl.col("_valid")).then(
                pl.when(p8).then(rest.str.tail(8)).when(p6).then(rest.str.tail(6))
            ).alias("_protocol"),
        )
        .with_columns(pl.when(pl.col("_url") != "").then(pl.col("_url")).alias("_url"))
    )


def _seconds(e: pl.Expr, digits: int) -> pl.Expr:
    """An integer count of 10**-digits seconds -> float seconds, correctly rounded.

    The decimal point is placed in the text: Polars divides by multiplying with the
    reciprocal, which turns 88871 us into 0.08887099999999999 s.
    """
    if digits == 0:
        return e.cast(pl.Float64, strict=False)
    padded = e.str.zfill(digits + 1)
    text = padded.str.head(-digits) + "." + padded.str.tail(digits)
    return pl.when(e.str.contains(r"^[0-9]+$")).then(text).cast(pl.Float64, strict=False)


def _first(cols: set[str], *names: str, default: pl.Expr | None = None) -> pl.Expr | None:
    """The column of the first role the format has, in order of preference."""
    for n in names:
        if n in cols:
            return pl.col(n)
    return default


def _regex_fields(lf: pl.LazyFrame, fmt: LogFormat) -> pl.LazyFrame:
    """The full regex's way: "line" -> one String column per role, and "_matched"."""
    if not fmt.fields:
        return lf.with_columns(pl.col("line").str.contains(fmt.regex).alias("_matched"))
    groups = pl.col("line").str.extract_groups(fmt.regex).struct.rename_fields(list(fmt.fields))
    return lf.with_columns(groups.alias("_g")).unnest("_g").with_columns(
        pl.col(fmt.fields[0]).is_not_null().alias("_matched")
    )


def _piece_fields(lf: pl.LazyFrame, fmt: LogFormat) -> pl.LazyFrame:
    """The fast way (see `_quote_pieces`): "line" -> the role columns, "_matched" and "_fast".

    "_fast" is false where the cut at `"` cannot be trusted (a backslash, a quote more or
    less than the format has) or a piece does not match; those rows get the full regex
    afterwards (`_extract`), their columns here are placeholders.
    """
    pieces = fmt.pieces or ()
    n = len(pieces)
    q = pl.col("_q")
    piece = [q.struct.field(f"field_{i}") for i in range(n)]
    checks = [
        ~pl.col("line").str.contains("\\", literal=True),
        piece[n - 1].is_not_null(),  # as many quotes as the format has...
        pl.col("_q").struct.field(f"field_{n}").is_null(),  # ...and not one more
    ]
    cols: list[pl.Expr] = []
    for i, p in enumerate(pieces):
        if p.role is not None:
            cols.append(piece[i].alias(p.role))
        elif p.literal is not None:
            checks.append(piece[i] == p.literal)
        elif p.regex is not None and p.fields:
            cols.append(piece[i].str.extract_groups(p.regex).struct.rename_fields(list(p.fields))
                        .alias(f"_p{i}"))
            checks.append(pl.col(f"_p{i}").struct.field(p.fields[0]).is_not_null())
        elif p.regex is not None:
            checks.append(piece[i].str.contains(p.regex))
    structs = [f"_p{i}" for i, p in enumerate(pieces) if p.literal is None and p.fields]
    fast = pl.all_horizontal(checks).fill_null(False)
    return (
        lf.with_columns(pl.col("line").str.splitn('"', n + 1).alias("_q"))
        .with_columns(cols)
        .with_columns(fast.alias("_fast"))
        .drop("_q")
        .unnest(structs)
        .with_columns(pl.col("_fast").alias("_matched"))
    )


def _plan(lf: pl.LazyFrame, fmt: LogFormat, source: str, keep: tuple[str, ...] = ()) -> pl.LazyFrame:
    """Lazy plan: role columns and "_matched" (from `_piece_fields` or `_regex_fields`) ->
    "row", "line", "_ok", the `keep` columns and REQUEST_SCHEMA.

    Escapes are not undone here (see `_unescape_rows`): nearly no row has one.
    """
    cols = set(fmt.fields)
    time, has_time = _time_expr(cols, fmt)
    str_or_null = pl.lit(None, dtype=pl.String)
    if "request" in cols:
        lf = _split_request(lf, "request")
        method, url, protocol = pl.col("_method"), pl.col("_url"), pl.col("_protocol")
    else:
        method = _dash_null(pl.col("method")) if "method" in cols else str_or_null
        protocol = _dash_null(pl.col("protocol")) if "protocol" in cols else str_or_null
        if "url" in cols:
            url = _dash_null(pl.col("url"))
        elif "path" in cols:
            q = None
            if "query_q" in cols:
                q = pl.col("query_q").str.strip_prefix("?")
            elif "query_args" in cols:
                q = _dash_null(pl.col("query_args"))
            p = pl.col("path")
            url = p if q is None else pl.when(q.is_null() | (q == "")).then(p).otherwise(p + "?" + q)
        else:
            url = str_or_null
    host = _first(cols, "host", "host_V", "host_http")
    if host is not None:
        # "example.com:8080" -> "example.com"; a bare IPv6 address keeps its colons
        host = host.str.replace(HOST_PORT, "$1").str.to_lowercase()
    size = _first(cols, "bytes", "bytes_B", "bytes_O")
    rt = None
    for name, digits in (("rt_us", 6), ("rt_ms", 3), ("rt_s", 0)):
        if name in cols:
            rt = _seconds(pl.col(name), digits)
            break
    matched = pl.col("_matched")
    return lf.select(
        "row", "line",
        (host if host is not None else pl.lit("-")).alias(s.HOST),
        _first(cols, "client_ip", "client", default=str_or_null).alias(s.CLIENT),
        time.alias(s.TIME),
        method.alias(s.METHOD),
        url.alias(s.URL),
        protocol.alias(s.PROTOCOL),
        (pl.col("status").cast(pl.UInt16, strict=False) if "status" in cols
         else pl.lit(None, dtype=pl.UInt16)).alias(s.STATUS),
        (size.cast(pl.Int64, strict=False) if size is not None
         else pl.lit(None, dtype=pl.Int64)).alias(s.BYTES),
        (pl.col("referer") if "referer" in cols else str_or_null).alias(s.REFERER),
        (pl.col("user_agent") if "user_agent" in cols else str_or_null).alias(s.USER_AGENT),
        (rt if rt is not None else pl.lit(None, dtype=pl.Float64)).alias(s.REQUEST_TIME),
        pl.lit(source, dtype=pl.String).alias(s.SOURCE),
        matched.alias("_matched"),
        *keep,
    ).with_columns(
        (pl.col("_matched") & (pl.col(s.TIME).is_not_null() | (not has_time))).alias("_ok"),
        # path/query split after the url is known; unescaping later may change both
        pl.col(s.URL).str.splitn("?", 2).alias("_pq"),
    ).with_columns(
        pl.col("_pq").struct.field("field_0").alias(s.PATH),
        pl.col("_pq").struct.field("field_1").alias(s.QUERY),
    ).drop("_pq")


def _unescape_rows(out: pl.DataFrame, maybe: pl.Series | None = None) -> pl.DataFrame:
    """Undo escapes only in the rows whose line holds a backslash (a pass over every row's
    user agent, referer and URL would cost more than the whole regex match). `maybe`: the
    only rows that can hold one, when that is known."""
    lines = out.get_column("line")
    if maybe is None:
        idx = lines.str.contains("\\", literal=True).arg_true()
    else:
        idx = maybe.filter(lines.gather(maybe).str.contains("\\", literal=True))
    if idx.len() == 0:
        return out
    escaped = [c for c in _ESCAPED if c in out.columns]
    fixed = out[idx].select(_unescape(pl.col(c)).alias(c) for c in escaped)
    return out.with_columns(out.get_column(c).scatter(idx, fixed.get_column(c)) for c in escaped)


# Below this many lines one in-memory pass is quicker than starting the streaming engine.
_STREAMING_MIN_LINES = 20_000


def _collect(lf: pl.LazyFrame, height: int) -> pl.DataFrame:
    """The streaming engine cuts the batch in morsels parsed on every core at once; the
    in-memory one would run each string expression on one core."""
    return lf.collect(engine="streaming" if height >= _STREAMING_MIN_LINES else "in-memory")


def parse_lines(
    lines: pl.DataFrame,
    fmt: LogFormat,
    *,
    source: str = "-",
    columns: Sequence[str] | None = None,
) -> tuple[pl.DataFrame, pl.DataFrame]:
    """Parse a one-column frame of lines ("line") into requests and rejected lines.

    Returns `(requests, rejected)`: `requests` is in `REQUEST_SCHEMA` (SOURCE set to `source`),
    or has only its `columns` (the others are then not computed at all), one row per parsed
    line in input order; `rejected` has columns `row` (0-based index into `lines`), `line` and
    `reason`. Empty lines (or only spaces and tabs) are in neither: they are lines, not
    requests, and not errors.

    >>> lines = pl.DataFrame({"line": [
    ...     '::1 - - [28/Nov/2026:10:00:00 +0100] "GET /a?b=1 HTTP/1.1" 200 - "-" "x \\\\"y\\\\""',
    ...     "junk", ""]})
    >>> req, bad = parse_lines(lines, compile_format("combined"))
    >>> req.select("client", "time", "path", "query", "bytes", "user_agent").row(0)
    ('::1', datetime.datetime(2026, 11, 28, 9, 0, tzinfo=zoneinfo.ZoneInfo(key='UTC')), '/a', 'b=1', None, 'x "y"')
    >>> bad.rows()
    [(1, 'junk', 'does not match combined')]
    """
    wanted = [c for c in s.REQUEST_SCHEMA if columns is None or c in columns]
    lf = lines.lazy().select(pl.col("line").cast(pl.String)).with_row_index("row")
    if fmt.pieces is None:
        plan = _plan(_regex_fields(lf, fmt), fmt, source)
        plan = plan.select("row", "line", "_ok", "_matched", *wanted)
        out = _unescape_rows(_collect(plan, lines.height))
    else:
        plan = _plan(_piece_fields(lf, fmt), fmt, source, keep=("_fast",))
        plan = plan.select("row", "line", "_ok", "_matched", "_fast", *wanted)
        out = _collect(plan, lines.height)
        slow = out.get_column("_fast").not_().arg_true()
        out = out.drop("_fast")
        if slow.len():  # escaped quotes, odd lines: the full regex, put back in their rows
            redo = _plan(_regex_fields(out[slow].lazy().select("row", "line"), fmt), fmt, source).collect()
            out = out.with_columns(out.get_column(c).scatter(slow, redo.get_column(c))
                                   for c in out.columns if c not in ("row", "line"))
        out = _unescape_rows(out, slow)  # a line with a backslash never takes the fast way
    ok = out.get_column("_ok")
    requests = out.select(wanted)
    if not ok.all():  # nearly every batch is all requests: no copy then
        requests = requests.filter(ok)
    bad = out.filter(~ok)
    blank = pl.col("line").str.strip_chars(" \t") == ""
    rejected = bad.filter(~blank).select(
        pl.col("row").cast(pl.Int64),
        "line",
        pl.when(pl.col("_matched"))
        .then(pl.lit("bad time"))
        .otherwise(pl.lit("does not match " + fmt.describe()))
        .alias(s.REASON),
    )
    return requests, rejected


def detect_format(sample_lines: list[str]) -> LogFormat | None:
    """The preset that parses the most of these lines (earliest in DETECT_ORDER on a tie).

    None when no preset parses any of them.

    >>> detect_format(['hello world']) is None
    True
    >>> detect_format(['1.2.3.4 - - [28/Nov/2026:10:00:00 +0000] "GET / HTTP/1.1" 200 5']).name
    'common'
    """
    lines = [ln for ln in sample_lines if ln.strip(" \t")]
    if not lines:
        return None
    frame = pl.DataFrame({"line": lines}, schema={"line": pl.String})
    best, best_n = None, 0
    for name in DETECT_ORDER:
        fmt = compile_format(name)
        req, _ = parse_lines(frame, fmt)
        if req.height > best_n:
            best, best_n = fmt, req.height
        if best_n == len(lines):
            break
    return best

r"""Apache `LogFormat` / nginx `log_format` strings -> a regex and a Polars parser; auto-detection.

A format string compiles to one anchored regex with a capture group only for the fields logtrap
uses (fields it does not use are matched but not captured: captures are what the regex engine
pays for). `parse_lines` runs that regex over a one-column frame of lines with
`str.extract_groups` and turns the groups into `REQUEST_SCHEMA` with Polars expressions only;
a line with as many `"` as the format and no escape is cut at its quotes first, and only the
short unquoted pieces get a regex (`_quote_pieces`).

`parse_chunk` does the same from bytes: with the `_cut` C extension (built by `pip install`
where a C compiler is), such lines are cut into columns in one pass in C, their request line
and Apache time too, and handed to Polars as Arrow string views (its own layout); the other
lines go through `parse_lines`. Both ways give the same frames, line for line (tests/test_cut.py).

Fields recognised (anything else is matched as an opaque field):

- Apache: `%h %a %{c}a %l %u %t %{strftime}t %{sec|msec|usec|msec_frac|usec_frac}t %r %s %>s
  %b %B %O %D %T %{ms|us|s}T %v %V %p %U %q %m %H %{Referer}i %{User-Agent}i %%`
  (mod_log_config); `%{...}e/n/x/C/o/i` and letters such as `%A %I %R %X` are opaque.
  Several `%{strftime}t` make one time (`[%{%d/%b/%Y %T}t.%{msec_frac}t %{%z}t]`); `%>s` is
  the status kept when `%s` or `%<s` is logged too.
- nginx: `$remote_addr $time_local $time_iso8601 $msec $request $request_method $request_uri
  $uri $args $query_string $server_protocol $status $body_bytes_sent $bytes_sent $http_referer
  $http_user_agent $host $server_name $http_host $request_time`; any other `$var` is opaque.

A field of free text (the request, a header, the user name) may hold spaces where that is
unambiguous: when it is quoted, the last field of the line, or ends at a literal that is not a
space (`%r\t%>s`, `$status|$http_user_agent`). A user name may hold spaces, but no word `-`
(`_loose_user`); an X-Forwarded-For list `a, b` is one field.

Escapes are undone the way the server wrote them (`_unescape_rows`): `\"`, `\\`, `\x22`,
`\x5C` everywhere; in the URL, path and query every other `\xHH` byte (and escape=json's
`\t \n \r \b \f \u00HH`) becomes `%HH`, the URL as the client sent it. Times that are not
in years 1-9999 once in UTC are "bad time": Python's datetime cannot hold them.
"""

from __future__ import annotations

import dataclasses
import difflib
import ipaddress
import itertools
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from functools import lru_cache
from typing import Any, NamedTuple

import polars as pl
import pyarrow as pa

from logtrap import schema as s
from logtrap.errors import FormatError, InputError
from logtrap.settings import HOST_PORT

try:  # the C fast way (`_cut.c`); without it, the same in Polars
    from logtrap import _cut
except ImportError:  # pragma: no cover - built wherever a C compiler is
    _cut = None  # type: ignore[assignment]

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
    # nginx's combined with `$time_iso8601` in place of `$time_local`, as many configs log the
    # time (`2026-11-28T10:00:00+01:00`, sortable, its zone spelled out).
    "combined_iso": '$remote_addr - $remote_user [$time_iso8601] "$request" $status '
    '$body_bytes_sent "$http_referer" "$http_user_agent"',
    # nginx's `main` log_format (its packages' nginx.conf, the Docker image's): combined, then
    # the X-Forwarded-For a proxy in front passed on. Chosen over combined_extra where that
    # last field holds addresses (`detect_format`): behind a balancer, the clients' addresses
    "combined_forwarded": '$remote_addr - $remote_user [$time_local] "$request" $status '
    '$body_bytes_sent "$http_referer" "$http_user_agent" "$http_x_forwarded_for"',
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
    "combined_iso",
)

# -- regex pieces -----------------------------------------------------------------------------
# Contents of a double-quoted field: Apache writes `"` as `\"` and `\` as `\\`; nginx writes
# both as `\xHH`, so a backslash always starts an escape and `[^"\\]|\\.` never backtracks.
_QUOTED = r'(?:[^"\\]|\\.)*'
_TOKEN = r"[^ ]*"
_DIGITS = r"[0-9]+"
_NUMBER_OR_DASH = r"(?:[0-9]+|-)"
_FLOAT_OR_DASH = r"(?:[0-9]+(?:\.[0-9]*)?|-)"
# The offset's hours 00-23 and minutes 00-59 (as chrono's `%z`): `+0060` and `+9999` are no
# offsets. The character classes cost the match nothing; the same check as an expression on
# the time (`_apache_time`) cost 5%, so such a line "does not match" rather than "bad time".
_APACHE_TIME = (r"[0-9]{2}/[A-Za-z]{3}/[0-9]{4}:[0-9]{2}:[0-9]{2}:[0-9]{2} "
                r"[+-](?:[01][0-9]|2[0-3])[0-5][0-9]")
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
# What each strftime directive sets, so that `%{...}t` pieces that complement each other
# (`%{%d/%b/%Y %T}t %{%z}t`) make one time and a repeated one (`%{end:...}t`) is left out.
_STRFTIME_SETS = {
    "Y": "Y", "y": "Y", "m": "m", "b": "m", "h": "m", "B": "m", "d": "d", "e": "d", "j": "md",
    "H": "H", "I": "H", "M": "M", "S": "S", "T": "HMS", "R": "HM", "F": "Ymd", "D": "mdY",
    "z": "z", "Z": "Z", "s": "YmdHMSz", "p": "p", "a": "a", "A": "a",
}


_HOST_FIELDS = ("host", "host_V", "host_http")  # the fields a line's host is read from, first found


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
    # strptime format of the `%{...}t` strftime fields, joined by a space (`_time_expr`)
    time_format: str | None = None
    # the format cut at its `"` (`_quote_pieces`), for the fast path; None: regex only
    pieces: tuple[_Piece, ...] | None = field(default=None, repr=False)
    # the fast way as a program for the `_cut` extension (`_cut_program`); None: not there
    cut: _CutProgram | None = field(default=None, repr=False)
    # public proxies whose forwarded headers are believed (`Settings.trusted_proxies`, set by
    # the reader: `trusting`), beside the site's own network (`_client`)
    trusted: tuple[str, ...] = field(default=(), repr=False)

    def trusting(self, ranges: tuple[str, ...]) -> "LogFormat":
        """This format, the clients of requests from `ranges` read from what they passed on."""
        return self if ranges == self.trusted else dataclasses.replace(self, trusted=tuple(ranges))

    @property
    def names_host(self) -> bool:
        """Whether its lines name the virtual host (else the reader logs "-" for it).

        >>> compile_format("combined").names_host, compile_format("vhost_combined").names_host
        (False, True)
        """
        return any(f in _HOST_FIELDS for f in self.fields)

    def describe(self) -> str:
        """How error messages and reports name this format.

        >>> compile_format("combined").describe()
        'combined'
        """
        kind = "Apache LogFormat" if self.kind == "apache" else "nginx log_format"
        return self.name if self.name != "custom" else f"{kind} {self.spec!r}"


# -- tokenising format strings ----------------------------------------------------------------
# (`^ti`/`^to`: a request's or response's trailer lines, `%{Name}^ti`, mod_log_config's only
# directive of more than one letter)
_APACHE_DIRECTIVE = re.compile(
    r"%(?P<when>[<>]?)!?[0-9,]*(?:\{(?P<arg>[^}]*)\})?(?P<letter>\^t[io]|[a-zA-Z%*])"
)
_NGINX_VARIABLE = re.compile(r"\$(?:\{([A-Za-z0-9_]+)\}|([A-Za-z0-9_]+))")
# Fields of free text, which may hold spaces: the request line, headers and trailers, notes,
# environment and SSL variables, cookies (Apache letters; nginx variables and name prefixes).
_APACHE_TEXT = frozenset([*"rioneCx", "^ti", "^to"])
_NGINX_TEXT = ("http_", "sent_http_", "upstream_http_", "cookie_")


class _Item(NamedTuple):
    """One piece of a format string, before `_parts` decides what its fields may match."""

    typ: str  # "lit" | "field"
    text: str | None  # the literal text, or the field's role (None: matched, not kept)
    rx: str | None = None  # the field's own regex; None: a token, as its neighbours allow
    free: str = ""  # "text": free text that may hold spaces; "user": a user name (`_USER`)


def _escape(text: str) -> str:
    """Escape literal text for the Rust regex engine Polars uses (not Python's `re`)."""
    return "".join("\\" + c if c in _REGEX_META else c for c in text)


# Headers a proxy sets to the one address that connected to it (nginx's X-Real-IP, Cloudflare's
# and Akamai's): the client where the format logs no address of its own (`_client`)
_PROXIED_CLIENT_HEADERS = ("x-real-ip", "cf-connecting-ip", "true-client-ip")
_PROXIED = "proxied_client"  # their role; a format's second such header is `proxied_client_2`


def _apache_role(arg: str | None, letter: str, when: str = "") -> tuple[str | None, str | None]:
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
        if a in ("msec_frac", "usec_frac"):  # mod_log_config pads them: %03d, %06d
            return a, "[0-9]{3}" if a == "msec_frac" else "[0-9]{6}"
        return "time_strftime", _strftime_regex(arg.removeprefix("begin:").removeprefix("end:"))
    if letter == "r":
        return "request", None
    if letter == "s":  # %>s is the final status; %s and %<s the original one (mod_log_config)
        return "status" if when == ">" else "status_first", r"(?:[0-9]{3}|-)"
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
    if letter == "i" and a == "x-forwarded-for":
        return "forwarded_for", _LIST  # a proxy chain, "203.0.113.9, 10.0.0.1" (`_client`)
    if letter == "i" and a in _PROXIED_CLIENT_HEADERS:
        return _PROXIED, _TOKEN
    if letter == "i" and a == "forwarded":
        return "forwarded", _LIST  # RFC 7239's: "for=203.0.113.9;proto=https, for=10.0.0.1"
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


def _strftime_sets(fmt: str) -> set[str]:
    """What a strftime format sets, as `_STRFTIME_SETS` letters."""
    directives = re.findall(r"%(.)", fmt.replace("%%", ""))
    return {c for d in directives for c in _STRFTIME_SETS.get(d, "")}


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
    "http_x_forwarded_for": ("forwarded_for", _LIST),
    "proxy_add_x_forwarded_for": ("forwarded_for", _LIST),
    "http_forwarded": ("forwarded", _LIST),
    **{"http_" + h.replace("-", "_"): (_PROXIED, _TOKEN) for h in _PROXIED_CLIENT_HEADERS},
}


def _tokens(spec: str, kind: str) -> tuple[list[_Item], str | None]:
    """Split a spec into literal and field items; and the strptime format of its time, when
    `%{...}t` strftime fields give it.

    Strftime fields that complement each other are one time: each is captured ("time_strftime",
    "time_strftime_1", ...) and `_time_expr` parses them joined by a space. One that repeats
    what an earlier one set (`%{end:...}t` after `%{begin:...}t`) is matched, not kept.
    """
    pattern = _APACHE_DIRECTIVE if kind == "apache" else _NGINX_VARIABLE
    items: list[_Item] = []
    times: list[str] = []
    time_sets: set[str] = set()
    pos = 0
    for m in pattern.finditer(spec):
        if m.start() > pos:
            items.append(_Item("lit", spec[pos : m.start()]))
        pos = m.end()
        if kind == "apache":
            arg, letter = m["arg"], m["letter"]
            if letter == "%":
                items.append(_Item("lit", "%"))
                continue
            if letter == "*":  # logtrap's own "any trailing fields" marker (combined_extra)
                items.append(_Item("field", None, ".*"))
                continue
            role, rx = _apache_role(arg, letter, m["when"])
            free = "user" if letter == "u" else "text" if letter in _APACHE_TEXT else ""
            if letter == "t" and arg is None:  # Apache writes %t as [28/Nov/2026:10:00:00 +0000]
                items += [_Item("lit", "["), _Item("field", role, rx), _Item("lit", "]")]
                continue
            if role == "time_strftime":
                fmt = arg.removeprefix("begin:").removeprefix("end:")  # type: ignore[union-attr]
                sets = _strftime_sets(fmt)
                if sets & time_sets:
                    role = None
                else:
                    role = "time_strftime" + (f"_{len(times)}" if times else "")
                    times.append(fmt)
                    time_sets |= sets
        else:
            name = m.group(1) or m.group(2)
            role, rx = _NGINX_ROLES.get(name, (None, None))
            free = ("user" if name == "remote_user"
                    else "text" if name == "request" or name.startswith(_NGINX_TEXT) else "")
        items.append(_Item("field", role, rx, free))
    if pos < len(spec):
        items.append(_Item("lit", spec[pos:]))
    if "Z" in time_sets and "z" not in time_sets:
        raise FormatError(
            f"log format {spec!r}: its time has a zone name (%Z) but no UTC offset (%z)",
            hint="a zone name such as CET cannot be turned into UTC: log %z (or %t) as well",
        )
    return items, " ".join(times) or None


class _Part(NamedTuple):
    """A literal, or a field with the regex body it gets."""

    typ: str  # "lit" | "field"
    body: str  # the literal text, or the field's regex body (the quote-cut pieces use it)
    role: str | None = None  # the capture's name; None: matched, not captured
    full: str | None = None  # the body or text in the full regex, where it differs


def _parts(items: list[_Item]) -> list[_Part]:
    """Items -> literal text and field bodies; a field keeps its role only where it is captured
    (the first field of a role, not an opaque one). Quoted fields get `_QUOTED` as body.

    An unquoted field of free text takes spaces where nothing else can claim them: as the last
    field it takes the rest of the line, before a literal that starts with something else than a
    space (a tab, `|`) everything up to that character. Before a space it is one token, except a
    user name in the full regex (`_loose_user`, which takes that space too): the fast path tries
    the one token, and a line it rejects gets the full regex.
    """
    parts: list[_Part] = []
    seen: set[str] = set()
    took_space = False  # the field before took this literal's first space (`_loose_user`)
    for i, it in enumerate(items):
        if it.typ == "lit":
            text = it.text or ""
            parts.append(_Part("lit", text, full=text[1:] if took_space else None))
            took_space = False
            continue
        nxt = items[i + 1] if i + 1 < len(items) else None
        follow = "".join(x.text or "" for x in itertools.takewhile(lambda x: x.typ == "lit",
                                                                   items[i + 1 :]))
        before = (items[i - 1].text or "") if i > 0 and items[i - 1].typ == "lit" else ""
        after = (nxt.text or "") if nxt is not None and nxt.typ == "lit" else ""
        quoted = bool(before and after and before.endswith('"') and after.startswith('"'))
        full = None
        if quoted:
            body = _QUOTED
        elif it.free and nxt is None:
            body = ".*"
        elif it.free and after and after[0] != " ":
            body = "[^" + _escape(after[0]) + "]*"
        elif it.rx is not None:
            body = it.rx
        elif after and after[0] != " ":
            body = "[^ " + _escape(after[0]) + "]*"  # e.g. %v in "%v:%p"
        else:
            body = _TOKEN
            if it.free == "user" and len(follow) > 1 and follow[0] == " " and follow[1] != " ":
                full, took_space = _loose_user(follow[1]), True
        role = it.text if it.text is not None and it.text not in seen else None
        if it.text == _PROXIED and role is None:
            # every such header is read (X-Real-IP, then CF-Connecting-IP...): numbered
            role = f"{_PROXIED}_{sum(r.startswith(_PROXIED) for r in seen) + 1}"
        if role is not None:
            seen.add(role)
        parts.append(_Part("field", body, role, full))
    return parts


def _loose_user(stop: str) -> str:
    """A user name (`%u`, `$remote_user`) that may hold spaces, and the space after it, where
    the literal after it is a space then `stop` (` [` before the time).

    One word as ever, or several of which none is a lone "-" or holds a quote, and none after
    the first starts with `stop`. Without the "-" guard `vhost 1.2.3.4 - frank [...]` would
    read as combined with the user "- frank" (and detection would take it): a line of a
    format with more leading fields puts identd's "-" there. Each branch is chosen by the next
    byte, and the space is taken before the choice to go on, so the regex stays one-pass (a
    lazy `(?: word)+?` made the full regex three times slower).
    """
    word = "(?:[^ " + _escape(stop) + '"-][^ "]*|-[^ "]+)'
    return f"(?:-(?: |[^ ][^ ]* (?:{word} )*)|[^ -][^ ]* (?:{word} )*| )"


def _field_rx(body: str, role: str | None) -> str:
    return "(" + body + ")" if role is not None else "(?:" + body + ")"


def _build_regex(items: list[_Item]) -> tuple[str, tuple[str, ...]]:
    parts = _parts(items)
    full = [p.body if p.full is None else p.full for p in parts]
    regex = "^" + "".join(_escape(x) if p.typ == "lit" else _field_rx(x, p.role)
                          for p, x in zip(parts, full))
    fields = tuple(p.role for p in parts if p.typ == "field" and p.role is not None)
    # A truncated line may end inside its last quoted field (elastic's line 8899 ends in
    # `"Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html`): the closing
    # quote may be missing at the very end of the line. `"?$` keeps the regex one-pass; a
    # form such as `(?:"|$)` made the whole match three times slower.
    if regex.endswith('"') and items and items[-1].typ == "lit" and items[-1].text == '"':
        regex = regex + "?"
    return regex + "$", fields


@dataclass(frozen=True)
class _Piece:
    """The text between two `"` of a line (or before the first, or after the last)."""

    role: str | None = None  # a quoted field's role: the whole piece is its value
    literal: str | None = None  # a piece of literal text only: must equal it
    regex: str | None = None  # otherwise: the anchored regex the piece must match
    fields: tuple[str, ...] = ()  # the regex's capture groups


def _quote_pieces(items: list[_Item]) -> tuple[_Piece, ...] | None:
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

    for typ, x, role, _ in _parts(items):
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


class _CutProgram(NamedTuple):
    """The fast way of `parse_lines` as a program for the `_cut` extension: steps `(op, arg,
    column, derive)` (ops and derivations as in `_cut.c`), and each column's name and kind
    (`s` text, `i` an integer)."""

    steps: tuple[tuple[int, bytes, int, int], ...]
    columns: tuple[str, ...]
    kinds: bytes


# Field bodies `_cut.c` checks as their regex does: body -> (op, arg)
_CUT_OPS: dict[str, tuple[int, bytes]] = {
    _QUOTED: (1, b""),
    _TOKEN: (2, b" "),
    r"[^ ?]*": (2, b" ?"),
    ".*": (2, b""),
    _DIGITS: (3, b""),
    _NUMBER_OR_DASH: (4, b""),
    r"(?:[0-9]{3}|-)": (5, b""),
    "[0-9]{3}": (6, b""),
    "[0-9]{6}": (7, b""),
    _FLOAT_OR_DASH: (8, b""),
    r"[0-9]+(?:\.[0-9]+)?": (9, b""),
    _APACHE_TIME: (10, b""),
    r"(?:\?[^ ]*)?": (11, b""),
    _ISO_TIME: (12, b""),  # kept as text, read by Polars (`_time_expr`)
}
_CUT_CLASS = re.compile(r"\[\^( ?)\\?([^\]])\]\*")  # `[^X]*`, `[^ X]*` (`_parts`)
# A body of fixed-width classes and literals (a strftime time of `%Y %m %d %H %M %S %b %z`...,
# `_STRFTIME_RX`): `_cut.c`'s OP_SHAPE, its arg one byte per character (`_shape`)
_SHAPE_PIECE = re.compile(
    r"\[0-9\]\{(\d)\}|\[A-Za-z\]\{(\d)\}|(\[\+-\])|\\([^A-Za-z0-9\x00-\x1f])"
    r"|([^\\\[\]{}()|*+?.^$\x00-\x1f])"  # no control character: OP_SHAPE's marks are some
)
_SHAPE_DIGIT, _SHAPE_ALPHA, _SHAPE_SIGN = b"\x01", b"\x02", b"\x03"


def _shape(body: str) -> bytes | None:
    r"""The OP_SHAPE arg of a regex body made of fixed-width classes and literal characters,
    or None for any other body.

    >>> _shape(r"[0-9]{4}\-[0-9]{2} [A-Za-z]{3}:[+-]")
    b'\x01\x01\x01\x01-\x01\x01 \x02\x02\x02:\x03'
    >>> _shape("[0-9]+") is None, _shape("[A-Za-z]{3}x?") is None
    (True, True)
    """
    out, pos = b"", 0
    for m in _SHAPE_PIECE.finditer(body):
        if m.start() != pos:
            return None
        pos = m.end()
        digits, letters, sign, escaped, plain = m.groups()
        out += (_SHAPE_DIGIT * int(digits) if digits else _SHAPE_ALPHA * int(letters) if letters
                else _SHAPE_SIGN if sign else (escaped or plain).encode())
    return out if pos == len(body) and out else None


# What the cut makes of a quoted request line and of an Apache time (`_cut.c`'s REQUEST, EPOCH)
_CUT_REQUEST = ("_method", "_url", "_protocol", "_path", "_query")
_CUT_TIME = "_time_us"
# The cut columns read for one request column only (`_plan`), which a read without that column
# need not copy out; any other (a host, a status, a path that makes the URL) is always kept.
_CUT_FEEDS = {
    "_method": s.METHOD, "_url": s.URL, "_protocol": s.PROTOCOL, "_path": s.PATH,
    "_query": s.QUERY, "method": s.METHOD, "protocol": s.PROTOCOL, "referer": s.REFERER,
    "user_agent": s.USER_AGENT, "rt_us": s.REQUEST_TIME, "rt_ms": s.REQUEST_TIME,
    "rt_s": s.REQUEST_TIME,
}


def _cut_program(items: list[_Item], regex: str) -> _CutProgram | None:
    """The fast way (`_quote_pieces`) as a `_cut` program; None where a field's body is one
    `_cut.c` does not know (the fast way in Polars, then, as without the extension)."""
    steps: list[tuple[int, bytes, int, int]] = []
    columns: list[str] = []
    kinds = b""
    for typ, body, role, _ in _parts(items):
        if typ == "lit":
            if body:
                steps.append((0, body.encode(), -1, 0))
            continue
        m = _CUT_CLASS.fullmatch(body)
        op = (2, (m[1] + m[2]).encode()) if m is not None else _CUT_OPS.get(body)
        if op is None and body.isascii() and (shape := _shape(body)) is not None:
            op = (13, shape)
        if op is None or not body.isascii():
            return None
        column, derive = -1, 0
        if role is not None:
            column = len(columns)
            if role == "request" and body == _QUOTED:
                derive, names, kind = 1, _CUT_REQUEST, b"s" * len(_CUT_REQUEST)
            elif role == "time_apache" and body == _APACHE_TIME:
                derive, names, kind = 2, (_CUT_TIME,), b"i"
            else:
                names, kind = (role,), b"s"
            columns += names
            kinds += kind
        steps.append((op[0], op[1], column, derive))
    program = _CutProgram(tuple(steps), tuple(columns), kinds)
    # the cut skips blank lines; a format whose regex takes one (`%{User-Agent}i"`) parses it
    if pl.Series(["", " ", "\t", " \t "]).str.contains(regex).any():
        return None
    if _cut is not None:
        try:  # a program the extension refuses is no fast way: Polars reads the format
            _cut.cut(b"", program.steps, program.kinds)
        except ValueError:
            return None
    return program


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
    logtrap.errors.FormatError: unknown log format 'apache2': not a preset (combined, common, vhost_combined, vhost_common, nginx, litespeed, combined_extra, host_combined, combined_iso, combined_forwarded, netnea) and it has no % directives or $ variables
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
        close = difflib.get_close_matches(key.lower(), [*PRESETS, "auto"], n=1)
        raise FormatError(
            f"unknown log format {spec_or_preset!r}: not a preset ({', '.join(PRESETS)}) "
            "and it has no % directives or $ variables",
            hint=(f"did you mean {close[0]!r}? Or pass" if close else "pass a preset name or")
            + " the LogFormat / log_format string from the server config",
        )
    items, time_format = _tokens(spec, kind)
    regex, fields = _build_regex(items)
    try:
        pl.Series([""], dtype=pl.String).str.extract_groups(regex)
    except Exception as e:  # a literal the regex engine rejects
        raise FormatError(f"log format {spec!r} does not compile: {e}") from None
    pieces = _quote_pieces(items)
    return LogFormat(name=name, spec=spec, kind=kind, regex=regex, fields=fields,
                     time_format=time_format, pieces=pieces,
                     cut=_cut_program(items, regex) if pieces is not None else None)


_CONFIG_ESCAPES = {"t": "\t", "n": "\n", "r": "\r", "\\": "\\", '"': '"', "'": "'"}


def _unquote_config(spec: str) -> str:
    r"""Accept a format pasted from a server config: nginx's `'...' '...'` pieces are joined,
    Apache's quoted LogFormat loses its quotes, and the escapes both servers' config readers
    undo are undone: `\"` `\'` `\\` `\t` `\n` `\r` (mod_log_config's
    `parse_log_misc_string`, nginx's `ngx_conf_read_token`), left to right; any other
    backslash stays.

    >>> print(_unquote_config("'$remote_addr - ' '\"$request\" $status'"))
    $remote_addr - "$request" $status
    >>> print(_unquote_config(r'"%h \"%r\" %>s"'))
    %h "%r" %>s
    >>> _unquote_config(r"%h\t%u\\t%r")
    '%h\t%u\\t%r'
    """
    text = spec.strip()
    if text.startswith("'") and text.endswith("'") and "$" in text:
        text = "".join(re.findall(r"'((?:[^'\\]|\\.)*)'", text))
    elif "$" not in text and '\\"' in text and text[:1] == '"' and text.endswith('"'):
        text = text[1:-1]
    return re.sub(r"\\(.)", lambda m: _CONFIG_ESCAPES.get(m[1], m[0]), text)


# -- parsing ------------------------------------------------------------------------------------
_METHOD_RX = r"^[A-Za-z][A-Za-z0-9_.-]*$"
_ESCAPED = (s.URL, s.PATH, s.QUERY, s.REFERER, s.USER_AGENT)  # columns that may hold escapes
_URL_COLUMNS = (s.URL, s.PATH, s.QUERY)
# Apache (`ap_escape_logitem`) writes `"` and `\` as `\"` `\\`, nginx as `\x22` `\x5C` (and
# escape=json as `\"` `\\`): in every column they are the characters themselves.
_UNESCAPE = {'\\"': '"', "\\\\": "\\", "\\x22": '"', "\\x5C": "\\", "\\x5c": "\\"}
_HEX = "0123456789abcdefABCDEF"
# Every other byte they escape (control bytes, and each byte of a non-ASCII character) is
# `\xHH` (nginx upper case, Apache lower case), `\t`-like (Apache, escape=json) or `\u00HH`
# (escape=json). In the URL it becomes `%HH`, upper case: the URL as the client sent it, the
# form crawlers request and robots.txt and server rules match (`/caf\xC3\xA9` -> `/caf%C3%A9`).
_URL_UNESCAPE = (
    {f"\\x{a}{b}": f"%{a}{b}".upper() for a in _HEX for b in _HEX}
    | {f"\\u00{a}{b}": f"%{a}{b}".upper() for a in "01234567" for b in _HEX}
    | {"\\b": "%08", "\\t": "%09", "\\n": "%0A", "\\v": "%0B", "\\f": "%0C", "\\r": "%0D"}
    | {"\\u0022": '"', "\\u005C": "\\", "\\u005c": "\\"}
    | _UNESCAPE
)
# Time bounds in UTC: Polars holds years far outside them, Python's datetime (every report,
# `to_list()`) cannot. A time outside them is a bad time, whichever field it came from.
_TIME_MIN = datetime(1, 1, 1, tzinfo=UTC)
_TIME_MAX = datetime(9999, 12, 31, 23, 59, 59, 999_999, tzinfo=UTC)
_EPOCH_MAX_US = 253_402_300_799_999_999  # _TIME_MAX in microseconds since 1970
# null, or outside the years Python's datetime holds: a bad time. Made once: its two datetime
# literals took 0.6 ms to make, holding the GIL, for every batch the parse read
_TIME_OK = pl.col(s.TIME).is_between(_TIME_MIN, _TIME_MAX).fill_null(False)
# $time_iso8601 (`2026-11-28T11:00:00+01:00`), with a fraction or `Z` as others write it. An
# explicit format: without one Polars infers it from the batch's first value, so one odd
# line made every other line of its batch a bad time.
_ISO_FORMAT = "%Y-%m-%dT%H:%M:%S%.f%#z"


def _unescape(e: pl.Expr, url: bool) -> pl.Expr:
    """Undo the escapes (`_UNESCAPE`; `_URL_UNESCAPE` in the URL) in one left-to-right pass:
    `\\\\x41` is a backslash then `x41`.

    In the user agent and referer any other `\\xHH`, `\\t` or `\\u00HH` stays as the server
    wrote it: `\\xC3\\xA9` is half a character each, which no string expression can join into
    one, and a control byte is better seen escaped than sent to a terminal.
    """
    table = _URL_UNESCAPE if url else _UNESCAPE
    return e.str.replace_many(list(table), list(table.values()))


def _dash_null(e: pl.Expr) -> pl.Expr:
    return pl.when(e.is_in(["-", ""])).then(None).otherwise(e)


def _apache_time(e: pl.Expr) -> pl.Expr:
    """`28/Nov/2026:10:00:00 +0100` -> UTC. The offset is applied by hand: strptime with `%z`
    costs four times as much as without it plus this integer arithmetic."""
    local = e.str.slice(0, 20).str.strptime(pl.Datetime("us"), "%d/%b/%Y:%H:%M:%S", strict=False)
    # "-0130" -> -130 and -1 (the regex fixed the layout): -130 - 40 * -1 = -90 minutes. Each
    # slice is used once: an expression used three times was computed three times. The regex
    # also checked the offset (`_APACHE_TIME`): checking it here cost 5% of the whole parse.
    hhmm = e.str.slice(21).cast(pl.Int32, strict=False)
    hours = e.str.slice(21, 3).cast(pl.Int32, strict=False)
    return (local - pl.duration(minutes=hhmm - 40 * hours)).dt.replace_time_zone("UTC")


def _time_expr(fmt: LogFormat, cut: bool = False) -> tuple[pl.Expr, bool]:
    """(time expression in UTC, whether the format has a time at all); with `cut`, from the
    `_cut` columns (an Apache time there is microseconds since 1970 in UTC already).

    Strftime fields come last: a time without offset (netnea) is taken as UTC, and an epoch
    time logged beside it is UTC for sure. The caller rejects times outside
    `_TIME_MIN`..`_TIME_MAX` (`_plan`).
    """
    cols = set(fmt.fields)
    strftime = [c for c in fmt.fields if c.startswith("time_strftime")]
    epoch = [u for u in ("sec", "msec", "usec") if f"time_epoch_{u}" in cols]
    t: pl.Expr | None = None
    if cut and fmt.cut is not None and _CUT_TIME in fmt.cut.columns:
        t = pl.from_epoch(pl.col(_CUT_TIME), time_unit="us").dt.replace_time_zone("UTC")
    elif "time_apache" in cols:
        t = _apache_time(pl.col("time_apache"))
    elif "time_iso" in cols:
        t = pl.col("time_iso").str.to_datetime(_ISO_FORMAT, time_unit="us", time_zone="UTC",
                                               strict=False)
    elif "time_epoch_float" in cols:
        us = pl.col("time_epoch_float").cast(pl.Float64, strict=False) * 1e6
        t = pl.from_epoch(us.cast(pl.Int64, strict=False), time_unit="us")
        t = t.dt.replace_time_zone("UTC")
    elif epoch:
        mult = {"sec": 1_000_000, "msec": 1_000, "usec": 1}[epoch[0]]
        v = pl.col(f"time_epoch_{epoch[0]}").cast(pl.Int64, strict=False)
        # bounded before the product: 99999999999999 s * 10**6 wraps around Int64
        v = pl.when(v <= _EPOCH_MAX_US // mult).then(v * mult)
        t = pl.from_epoch(v, time_unit="us").dt.replace_time_zone("UTC")
    elif strftime and fmt.time_format:
        # the pieces of one time (`%{%d/%b/%Y %T}t ... %{%z}t`), joined as `_tokens` joined
        # their formats
        text = pl.concat_str([pl.col(c) for c in strftime], separator=" ")
        t = text.str.strptime(pl.Datetime("us"), fmt.time_format, strict=False)
        if "%z" not in fmt.time_format.replace("%%", ""):  # no offset (netnea): taken as UTC
            t = t.dt.replace_time_zone("UTC")
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


# An address only a machine of the site's own network has: loopback, private (RFC 1918, RFC
# 4193), link-local; IPv4 ones also as IPv6 writes them (`::ffff:10.0.0.5`)
_OWN_V4 = r"(?:::ffff:)?(?:127\.|10\.|192\.168\.|172\.(?:1[6-9]|2[0-9]|3[01])\.|169\.254\.)"
_OWN_V6 = r"(?:[fF][cCdD][0-9a-fA-F]{2}|[fF][eE][89aAbB][0-9a-fA-F]):"  # fc00::/7, fe80::/10
_INTERNAL_ADDRESS = rf"^(?:{_OWN_V4}|::1$|{_OWN_V6})"


# An address as a proxy writes it, its port and an IPv6 one's brackets left out of the group:
# `1.2.3.4`, `1.2.3.4:5678` (Azure's), `2001:db8::5`, `[2001:db8::5]:443`, `::ffff:1.2.3.4`
_ADDRESS = r"\[?((?:[0-9]{1,3}\.){3}[0-9]{1,3}|[0-9A-Fa-f]*:[0-9A-Fa-f:.]*)\]?(?::[0-9]+)?"
# A hop `_forwarded` passes over, right to left: one of the site's own network (_INTERNAL_ADDRESS,
# with its port or brackets), or no address at all (`unknown`, a host name, RFC 7239's hidden
# `_node`: a character no address holds)
_OWN_HOP = (
    rf"(?:{_OWN_V4}[^,\s]*|\[?::1(?:\](?::[0-9]+)?)?|\[?{_OWN_V6}[^,\s]*"
    r"|[^,\s]*[^0-9A-Fa-f:.\[\],\s][^,\s]*)"
)
# The first hop that is an address and is followed by such hops only (group 2; the whole
# hops before it, group 1, taken lazily, fewest first): the last address outside the site's
# network, or the first of all where every one is inside it. One regex a row, anchored (half
# the time of a search for the hop's start): a chain split into a list and filtered took 2.4
# microseconds, five times the rest of the line's parse
_CHAIN = rf"^((?:[^,]*,)*?)\s*{_ADDRESS}\s*(?:,\s*(?:{_OWN_HOP})?\s*)*$"


def _hop(e: pl.Expr) -> pl.Expr:
    """The address a header holds (`_ADDRESS`); null where it holds none (`-`, `unknown`)."""
    return e.str.extract(rf"^\s*{_ADDRESS}\s*$", 1)


def _forwarded(chain: pl.Expr) -> pl.Expr:
    """The client of an X-Forwarded-For chain (`client, proxy, ...`, each proxy appending the
    address that connected to it): the last address not of the site's own network, as Apache's
    mod_remoteip and nginx's realip module take it with their internal proxies trusted; the
    first where all are. Not the first: anyone can send a chain, and a scraper's own
    `X-Forwarded-For: 66.249.66.1` would pass for Googlebot's.

    >>> chains = ["66.249.66.1, 203.0.113.9", "203.0.113.9, 10.0.0.1", "10.1.1.1, 10.0.0.1",
    ...           "198.51.100.7:5311", "unknown, [2001:db8::5]:443, [::1]", "-"]
    >>> pl.select(_forwarded(pl.Series(chains))).to_series().to_list()
    ['203.0.113.9', '203.0.113.9', '10.1.1.1', '198.51.100.7', '2001:db8::5', None]
    """
    return chain.str.extract(_CHAIN, 2)


# A hop of RFC 7239's Forwarded header (`for=192.0.2.60;proto=http;by=203.0.113.43`, pairs in
# any order): its `for=` and an opening quote (as the server escaped it too: `\"`, `\x22`),
# then the value up to the closing one
_FOR_PAIR = r'(?i)(?:^|[;,])\s*for\s*=\s*(?:\\?"|\\x22)?'
_FOR_VALUE = r'[^";,\\]*'


def _for_hops(header: pl.Expr) -> pl.Expr:
    """RFC 7239's Forwarded header as an X-Forwarded-For chain (`_forwarded` reads it): the
    hops' `for=` values in order. A hop that tells none (`by=` alone) is left out, as
    `_forwarded` would pass over it; `-` (no header sent) is an empty chain. Each `for=`
    found and its name then taken off: a third quicker than each hop split out and searched
    (0.49 against 0.71 s a million headers).

    >>> headers = ['for=192.0.2.60;proto=http;by=203.0.113.43',
    ...            'proto=https;For="[2001:db8:cafe::17]:4711", for=10.0.0.1',
    ...            'for=unknown, by=10.0.0.1, for=198.51.100.7', 'for=_hidden;by=_proxy', '-']
    >>> pl.select(_for_hops(pl.Series(headers))).to_series().to_list()
    ['192.0.2.60', '[2001:db8:cafe::17]:4711, 10.0.0.1', 'unknown, 198.51.100.7', '_hidden', '']
    """
    pairs = header.str.extract_all(_FOR_PAIR + _FOR_VALUE).list.join(", ")
    return pairs.str.replace_all(_FOR_PAIR, "")


def _chains(cols: set[str]) -> list[pl.Expr]:
    """The proxy chains a format logs: X-Forwarded-For's, then RFC 7239 Forwarded's."""
    return [chain for role, chain in (("forwarded_for", pl.col("forwarded_for")),
                                      ("forwarded", _for_hops(pl.col("forwarded"))))
            if role in cols]


def _proxied(cols: set[str]) -> list[str]:
    """The columns of the single-address headers a proxy sets (X-Real-IP and the like), in
    the format's order: `proxied_client`, then `proxied_client_2`..."""
    return sorted((c for c in cols if c.startswith(_PROXIED)), key=lambda c: (len(c), c))


def _first_with_address(texts: list[pl.Expr], address: Callable[[pl.Expr], pl.Expr]) -> pl.Expr:
    """Per row, the first of `texts` in which `address` finds one (else the last), as
    written: `_trusted_clients` reads it again. Null where there are no texts."""
    if not texts:
        return pl.lit(None, pl.String)
    first = texts[-1]
    for text in reversed(texts[:-1]):
        first = pl.when(address(text).is_not_null()).then(text).otherwise(first)
    return first


def _client(cols: set[str], trusted: tuple[str, ...] = ()) -> pl.Expr:
    """The client's address: the connection's (`%a`, `%h`, `$remote_addr`); where the format
    logs none, or the connection's is one of the site's own network (a load balancer's, a
    local proxy's) or of the `trusted` ranges, the one a proxy passed on (`_forwarded`, from
    X-Forwarded-For or else RFC 7239's Forwarded; else a header it set to it, X-Real-IP and
    the like)."""
    connection = _first(cols, "client_ip", "client")
    chains, headers = _chains(cols), _proxied(cols)
    if trusted and (chains or headers):
        parts = [_first(cols, "client_ip", "client", default=pl.lit(None, pl.String)).alias("c"),
                 _first_with_address(chains, _forwarded).alias("f"),
                 _first_with_address([pl.col(c) for c in headers], _hop).alias("h")]
        networks = trusted_networks(trusted)
        return pl.struct(parts).map_batches(lambda rows: _trusted_clients(rows, networks),
                                            return_dtype=pl.String, is_elementwise=True)
    passed = [_forwarded(chain) for chain in chains] + [_hop(pl.col(c)) for c in headers]
    if not passed:
        return connection if connection is not None else pl.lit(None, dtype=pl.String)
    proxied = pl.coalesce(passed) if len(passed) > 1 else passed[0]
    if connection is None:
        return proxied
    internal = connection.str.contains(_INTERNAL_ADDRESS).fill_null(True)  # none logged: as own
    return pl.when(internal & proxied.is_not_null()).then(proxied).otherwise(connection)


# Trusted hops in a row a chain's client is looked for behind (a CDN's edge, a second tier of
# its own, a shield: three; judgement)
_TRUSTED_HOPS = 3


@lru_cache(maxsize=16)
def trusted_networks(ranges: tuple[str, ...]) -> tuple[Any, ...]:
    """`Settings.trusted_proxies` (validated ranges) as Python's networks, which
    `proxy_addresses` and `_trusted_clients` take."""
    return tuple(ipaddress.ip_network(r) for r in ranges)


def proxy_addresses(addresses: pl.Series, ranges: tuple[Any, ...] = ()) -> pl.Series:
    """Whether each address is a proxy's whose forwarded headers are believed: of the site's
    own network (_INTERNAL_ADDRESS) or in `ranges` (`Settings.trusted_proxies` as networks);
    null: no.

    >>> proxy_addresses(pl.Series(["10.0.0.2", "173.245.49.7", "66.249.66.1", None]),
    ...                 (ipaddress.ip_network("173.245.48.0/20"),)).to_list()
    [True, True, False, False]
    """
    return (addresses.str.contains(_INTERNAL_ADDRESS) | _in_ranges(addresses, ranges)).fill_null(False)


def _in_ranges(addresses: pl.Series, ranges: tuple[Any, ...]) -> pl.Series:
    """Whether each address (as `_ADDRESS` leaves it) is in one of `ranges`, by Python's
    address parser once per distinct address (an IPv6 range has many spellings), remembered
    across batches (`_RANGES_SEEN`: clients come back); null: no."""
    seen = _RANGES_SEEN.setdefault(ranges, {})
    if len(seen) > _RANGES_SEEN_MAX:
        seen.clear()
    inside = []
    for text in addresses.drop_nulls().unique().to_list():
        if (verdict := seen.get(text)) is None:
            try:
                parsed = ipaddress.ip_address(text)
                parsed = getattr(parsed, "ipv4_mapped", None) or parsed
                verdict = any(parsed in n for n in ranges if n.version == parsed.version)
            except ValueError:
                verdict = False
            seen[text] = verdict
        if verdict:
            inside.append(text)
    return addresses.is_in(inside).fill_null(False)


_RANGES_SEEN: dict[tuple[Any, ...], dict[str, bool]] = {}
_RANGES_SEEN_MAX = 200_000  # addresses remembered per set of ranges (~30 MB at most; judgement)


def _trusted_clients(rows: pl.Series, trusted: tuple[Any, ...]) -> pl.Series:
    """`_client` with the `trusted` ranges believed too: a connection in them is as one of the
    site's network, and a chain's client found by `_CHAIN` that is in them is passed over for
    the client before it (up to `_TRUSTED_HOPS` of them in a row).

    >>> rows = pl.Series([{"c": "173.245.49.7", "f": "66.249.66.1, 198.51.100.20", "h": None},
    ...                   {"c": "198.51.100.1", "f": "66.249.66.1", "h": None},
    ...                   {"c": "10.0.0.2", "f": "198.51.100.20, 173.245.49.7", "h": None},
    ...                   {"c": "2400:cb00::7", "f": None, "h": "2001:db8::9"}])
    >>> ranges = (ipaddress.ip_network("173.245.48.0/20"), ipaddress.ip_network("2400:cb00::/32"))
    >>> _trusted_clients(rows, ranges).to_list()
    ['198.51.100.20', '198.51.100.1', '198.51.100.20', '2001:db8::9']
    """
    frame = rows.struct.unnest()
    connection, chain = frame.get_column("c"), frame.get_column("f")
    found = chain.str.extract_groups(_CHAIN)  # fields "1" (the hops before) and "2"
    client, before = found.struct.field("2"), found.struct.field("1")
    for _ in range(_TRUSTED_HOPS):
        again = _in_ranges(client, trusted).arg_true()
        if again.len() == 0:
            break
        # the hops before: the client among them, else (none an address) the trusted one
        prior = before.gather(again).str.extract_groups(_CHAIN)
        client = client.scatter(again, prior.struct.field("2").fill_null(client.gather(again)))
        before = before.scatter(again, prior.struct.field("1"))
    passed = frame.select(pl.coalesce(client, _hop(pl.col("h")))).to_series()
    believed = proxy_addresses(connection, trusted) | connection.is_null()  # none logged: as own
    return (passed.zip_with(believed & passed.is_not_null(), connection)).alias(rows.name)


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


def _plan(
    lf: pl.LazyFrame, fmt: LogFormat, source: str, keep: tuple[str, ...] = (), cut: bool = False
) -> pl.LazyFrame:
    """Lazy plan: role columns and "_matched" (from `_piece_fields` or `_regex_fields`, or the
    `_cut` columns with `cut`) -> "row", "line", "_ok", the `keep` columns and REQUEST_SCHEMA.

    Escapes are not undone here (see `_unescape_rows`): nearly no row has one.
    """
    cols = set(fmt.fields)
    split = cut and fmt.cut is not None and _CUT_REQUEST[0] in fmt.cut.columns
    time, has_time = _time_expr(fmt, cut)
    str_or_null = pl.lit(None, dtype=pl.String)
    if "request" in cols:
        if not split:
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
    host = _first(cols, *_HOST_FIELDS)
    if host is not None:
        # "example.com:8080" -> "example.com"; a bare IPv6 address keeps its colons
        host = host.str.replace(HOST_PORT, "$1").str.to_lowercase()
    size = _first(cols, "bytes", "bytes_B", "bytes_O")
    status = _first(cols, "status", "status_first")  # %>s, the final status, over %s / %<s
    rt = None
    for name, digits in (("rt_us", 6), ("rt_ms", 3), ("rt_s", 0)):
        if name in cols:
            rt = _seconds(pl.col(name), digits)
            break
    matched = pl.col("_matched")
    time_ok = _TIME_OK if has_time else pl.lit(True)
    lf = lf.select(
        "row", "line",
        (host if host is not None else pl.lit("-")).alias(s.HOST),
        _client(cols, fmt.trusted).alias(s.CLIENT),
        time.alias(s.TIME),
        method.alias(s.METHOD),
        url.alias(s.URL),
        protocol.alias(s.PROTOCOL),
        (status.cast(pl.UInt16, strict=False) if status is not None
         else pl.lit(None, dtype=pl.UInt16)).alias(s.STATUS),
        (size.cast(pl.Int64, strict=False) if size is not None
         else pl.lit(None, dtype=pl.Int64)).alias(s.BYTES),
        (pl.col("referer") if "referer" in cols else str_or_null).alias(s.REFERER),
        (pl.col("user_agent") if "user_agent" in cols else str_or_null).alias(s.USER_AGENT),
        (rt if rt is not None else pl.lit(None, dtype=pl.Float64)).alias(s.REQUEST_TIME),
        pl.lit(source, dtype=pl.String).alias(s.SOURCE),
        matched.alias("_matched"),
        *keep,
        *((pl.col("_path").alias(s.PATH), pl.col("_query").alias(s.QUERY)) if split else ()),
    ).with_columns((pl.col("_matched") & time_ok).alias("_ok"))
    if split:  # the cut split the URL too
        return lf
    # path/query split after the url is known; unescaping later may change both
    return lf.with_columns(pl.col(s.URL).str.splitn("?", 2).alias("_pq")).with_columns(
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
    fixed = out[idx].select(_unescape(pl.col(c), c in _URL_COLUMNS).alias(c) for c in escaped)
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
    wanted = _wanted(columns)
    return _requests_and_rejected(_parsed(lines, fmt, source, wanted), fmt, wanted)


def _wanted(columns: Sequence[str] | None) -> list[str]:
    return [c for c in s.REQUEST_SCHEMA if columns is None or c in columns]


def _parsed(lines: pl.DataFrame, fmt: LogFormat, source: str, wanted: list[str]) -> pl.DataFrame:
    """"row", "line", "_ok", "_matched" and the `wanted` columns, one row per line."""
    lf = lines.lazy().select(pl.col("line").cast(pl.String)).with_row_index("row")
    if fmt.pieces is None:
        plan = _plan(_regex_fields(lf, fmt), fmt, source)
        plan = plan.select("row", "line", "_ok", "_matched", *wanted)
        return _unescape_rows(_collect(plan, lines.height))
    plan = _plan(_piece_fields(lf, fmt), fmt, source, keep=("_fast",))
    plan = plan.select("row", "line", "_ok", "_matched", "_fast", *wanted)
    out = _collect(plan, lines.height)
    slow = out.get_column("_fast").not_().arg_true()
    out = out.drop("_fast")
    if slow.len():  # escaped quotes, odd lines: the full regex, put back in their rows
        redo = _plan(_regex_fields(out[slow].lazy().select("row", "line"), fmt), fmt, source).collect()
        out = out.with_columns(out.get_column(c).scatter(slow, redo.get_column(c))
                               for c in out.columns if c not in ("row", "line"))
    return _unescape_rows(out, slow)  # a line with a backslash never takes the fast way


_REJECTED = {"row": pl.Int64, "line": pl.String, s.REASON: pl.String}  # parse_lines' rejected


def _requests_and_rejected(
    out: pl.DataFrame, fmt: LogFormat, wanted: list[str]
) -> tuple[pl.DataFrame, pl.DataFrame]:
    ok = out.get_column("_ok")
    requests = out.select(wanted)
    if ok.all():  # nearly every batch: no copy, and no query for the rejected
        return requests, pl.DataFrame(schema=_REJECTED)
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


def to_lines(chunk: bytes) -> pl.DataFrame:
    """One row per line ("line"); invalid UTF-8 decoded lossily, CR before LF dropped."""
    no_lines = pl.DataFrame({"line": []}, schema={"line": pl.String})
    if not chunk:
        return no_lines
    # A NUL would be read as a field separator; keep it visible, escaped the way Apache would.
    chunk = chunk.replace(b"\x00", b"\\x00")
    try:
        lines = pl.read_csv(
            chunk, has_header=False, separator="\x00", quote_char=None, encoding="utf8-lossy",
            new_columns=["line"], infer_schema=False, empty_string_is_null=False,
            raise_if_empty=False,
        )
    except Exception as e:  # Polars' reader is not expected to fail on one column of text
        raise InputError(f"cannot split input into lines ({e})") from None
    return lines if lines.width else no_lines  # no column: a byte-order mark and nothing else


def _uint32(data: bytes) -> pa.Array:
    return pa.Array.from_buffers(pa.uint32(), len(data) // 4, [None, pa.py_buffer(data)])


@lru_cache(maxsize=64)
def _kinds_for(prog: _CutProgram, wanted: frozenset[str]) -> bytes:
    """The program's kinds with `x` for each text column that only feeds a request column not
    `wanted` (`_CUT_FEEDS`): cut and checked as before, its text not copied out.

    >>> prog = compile_format("combined").cut
    >>> _kinds_for(prog, frozenset(["client", "time", "url", "status", "user_agent"]))
    b'sixsxxxssxs'
    """
    return bytes(
        ord("x") if kind == ord("s") and name in _CUT_FEEDS and _CUT_FEEDS[name] not in wanted
        else kind
        for name, kind in zip(prog.columns, prog.kinds)
    )


def _arrow(kind: str, n: int, values: bytes, data: bytes | None, valid: bytes | None) -> pa.Array:
    """A `_cut` column as Arrow: string views (Polars' own layout: no copy), or int64."""
    if kind == "i":
        return pa.Array.from_buffers(pa.int64(), n, [None, pa.py_buffer(values)])
    bits = None if valid is None else pa.py_buffer(valid)
    return pa.Array.from_buffers(pa.string_view(), n,
                                 [bits, pa.py_buffer(values), pa.py_buffer(data or b"")])


def parse_chunk(
    chunk: bytes,
    fmt: LogFormat,
    *,
    source: str = "-",
    columns: Sequence[str] | None = None,
) -> tuple[pl.DataFrame, pl.DataFrame, int]:
    r"""`parse_lines` on the lines of a chunk of bytes (whole lines, the last one's newline
    optional), and how many lines it holds.

    With the `_cut` extension, the lines the fast way takes are cut into fields in C, without
    a frame of lines; the others (escapes, non-ASCII bytes, odd lines) go through
    `parse_lines` as without it. The results are the same either way (property-tested).

    >>> req, bad, n = parse_chunk(b'::1 - - [28/Nov/2026:10:00:00 +0000] "GET / HTTP/1.1" 200 5\n'
    ...                           b'\n' b'junk\n', compile_format("common"))
    >>> req.select("client", "path", "bytes").rows(), bad.rows(), n
    ([('::1', '/', 5)], [(2, 'junk', 'does not match common')], 3)
    """
    if _cut is None or fmt.cut is None:
        lines = to_lines(chunk)
        return *parse_lines(lines, fmt, source=source, columns=columns), lines.height
    wanted = _wanted(columns)
    prog = fmt.cut
    kinds = prog.kinds if columns is None else _kinds_for(prog, frozenset(wanted))
    n, fast_rows, cols, slow_rows, slow_text = _cut.cut(chunk, prog.steps, kinds)
    n_fast = len(fast_rows) // 4
    kept = [(name, _arrow(kind, n_fast, *col))
            for name, kind, col in zip(prog.columns, kinds.decode(), cols) if kind != "x"]
    fields = pl.from_arrow(pa.record_batch([a for _, a in kept] + [_uint32(fast_rows)],
                                           names=[*(name for name, _ in kept), "row"]))
    assert isinstance(fields, pl.DataFrame)
    unread = (pl.lit(None, dtype=pl.String).alias(name)  # not wanted: never selected
              for name, kind in zip(prog.columns, kinds.decode()) if kind == "x")
    lf = fields.lazy().with_columns(pl.lit(None, dtype=pl.String).alias("line"),
                                    pl.lit(True).alias("_matched"), *unread)
    plan = _plan(lf, fmt, source, cut=True).select("row", "line", "_ok", "_matched", *wanted)
    # in memory: cut already, the plan is a few casts, which the streaming engine's start and
    # morsels made 10% slower (0.61 against 0.69 s a million combined lines, read whole)
    out = plan.collect(engine="in-memory")
    ok = out.get_column("_ok")
    if not ok.all():  # a bad time: its line, for the examples (clean ASCII: cut in C)
        text = bytes(chunk).removeprefix(b"\xef\xbb\xbf").split(b"\n")
        bad_rows = out.get_column("row").filter(~ok).to_list()
        line = pl.Series([text[r].removesuffix(b"\r").decode() for r in bad_rows], dtype=pl.String)
        out = out.with_columns(out.get_column("line").scatter((~ok).arg_true(), line))
    if slow_rows:
        # a byte-order mark opening the first of them is a character of that line, not the
        # chunk's mark (which the cut dropped): a blank line before it keeps it
        lead = slow_text.startswith(b"\xef\xbb\xbf")
        lines = to_lines(b"\n" + slow_text if lead else slow_text).slice(int(lead))
        slow = _parsed(lines, fmt, source, wanted)
        where = pl.Series(_uint32(slow_rows))
        slow = slow.with_columns(where.gather(slow.get_column("row")).alias("row"))
        out = pl.concat([out, slow], how="vertical_relaxed").sort("row") if n_fast else slow
    req, bad = _requests_and_rejected(out, fmt, wanted)
    return req, bad, n


def detect_format(sample_lines: list[str]) -> LogFormat | None:
    """The preset that parses the most of these lines (earliest in DETECT_ORDER on a tie).

    None when no preset parses any of them.

    A preset whose request lines are nearly all junk where the same format with the path and
    query in their place (`%U%q`, a log written without the method and protocol) reads URLs:
    that format, as a custom one.

    >>> detect_format(['hello world']) is None
    True
    >>> detect_format(['1.2.3.4 - - [28/Nov/2026:10:00:00 +0000] "GET / HTTP/1.1" 200 5']).name
    'common'
    >>> detect_format(['1.2.3.4 - - [28/Nov/2026:10:00:00 +0000] "/a?b=1" 200 5']).spec
    '%h %l %u %t "%U%q" %>s %b'
    """
    lines = [ln for ln in sample_lines if ln.strip(" \t")]
    if not lines:
        return None
    frame = pl.DataFrame({"line": lines}, schema={"line": pl.String})
    best, best_n, best_req = None, 0, None
    for name in DETECT_ORDER:
        fmt = compile_format(name)
        req, _ = parse_lines(frame, fmt)
        if req.height > best_n:
            best, best_n, best_req = fmt, req.height, req
        if best_n == len(lines):
            break
    if best is not None and best.name == "combined_extra":
        # one quoted field after combined's, holding address chains or `-` (nginx's `main`)
        forwarded = compile_format("combined_forwarded")
        last = frame.get_column("line").str.extract(r'"([^"]*)"[ \t]*$', 1)
        chains = last.str.contains(_FORWARDED_VALUE).fill_null(False)
        if (parse_lines(frame, forwarded)[0].height >= best_n and chains.sum() >= _FORWARDED_SHARE * best_n
                and (chains & (last != "-")).any()):
            return forwarded
    if best is not None and best_req is not None and '"%r"' in best.spec:
        # request lines with no method: every URL null under `%r` (junk), a path under `%U%q`
        # (a path or an absolute URL; a `-` request, a browser's idle connection, and Apache's
        # own `*` are nothing either way; adversarial review 19)
        urls = best_req.get_column(s.URL)
        if urls.null_count() >= _NO_METHOD_SHARE * best_req.height:
            bare = compile_format(best.spec.replace('"%r"', '"%U%q"'))
            req, _ = parse_lines(frame, bare)
            targets = req.get_column(s.URL).drop_nulls()
            # (nor do TLS handshakes sent to port 80, logged as escaped bytes, in a sample of
            # 20 lines: 3 of them kept a `"%U%q"` log combined; adversarial review 19)
            targets = targets.filter(~targets.is_in(["-", "*"]) & ~targets.str.contains(r"^(?:\\x|%[0-9A-Fa-f]{2})"))
            paths = targets.str.contains(r"^(?:/|https?://)").sum()
            if req.height >= best_n and paths and paths >= _NO_METHOD_SHARE * targets.len():
                return bare
    return best


# Request lines without a method (junk under `%r`) in this share of a sample, at least: a log
# written with `"%U%q"`, read so (judgement)
_NO_METHOD_SHARE = 0.9
# Last fields that are X-Forwarded-For's (address chains, `-`) in this share of a sample's
# parsed lines, at least: nginx's `main`, read so (`combined_forwarded`; judgement)
_FORWARDED_SHARE = 0.9
_FORWARDED_VALUE = rf"^(?:-|(?:{_ADDRESS}|unknown)(?:[ \t]*,[ \t]*(?:{_ADDRESS}|unknown))*)$"

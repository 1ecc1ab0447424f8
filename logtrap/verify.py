"""Is this Googlebot really Google? Published IP ranges, then reverse + forward DNS, cached.

Verdicts (schema.VERIFICATIONS), per distinct (client, bot name):

- ``verified``: the address is in a range file given for that bot, or DNS confirms it (the PTR
  name ends in one of the bot's domains and that name resolves back to the address).
- ``fake``: range files were given for that bot and the address is in none of them (and DNS, if
  asked, did not confirm it), unless the file was made more than `ip_ranges_max_age_days`
  before the address's first request (its "creationTime"; engines add ranges, so an old file
  cannot disprove an address: ``unverified``); or DNS gave a definite mismatch: no PTR record
  (NXDOMAIN), a PTR name outside the bot's domains, or a name that does not resolve back to
  the address. A resolver's "no such name" counts only if it knows `PUBLIC_NAME` (a root
  server): one that does not see the public DNS (an isolated network) would deny every bot,
  and that is an error, not a list of fakes.
- ``unverified``: an address shared by many people (a CDN's or proxy's edge, a NAT), which
  address checks cannot judge (`shared_addresses`); nothing to check against (no range file for the bot, no DNS asked), DNS timed
  out or failed for that address, or the bot publishes no reverse-DNS domain (DuckDuckBot: a DNS
  mismatch there is not proof -- give its IP list instead).
- null: the bot name is no search engine of ``bots.SEARCH_ENGINES`` and has no range file.

Client values that are host names, not addresses (old logs with HostnameLookups on): without DNS
they are ``unverified``; with DNS the name must end in one of the bot's domains (else ``fake``)
and resolve (NXDOMAIN -> ``fake``).

Range files are the JSON the engines publish (``{"prefixes": [{"ipv4Prefix": ...}, {"ipv6Prefix":
...}]}``). Which bot a file covers comes from ``Name=path`` or else from the file name
(googlebot.json, bingbot.json, special-crawlers.json ...), see ``load_ranges``.

A range file can only disprove an address if it is the engine's list. One that lists no prefix,
or another engine's, or only IPv6 ones, would call every real crawler fake, and the server rules
would then deny it. So, as for a resolver blind to the public DNS, these are errors, not lists
of fakes: a file with no prefix (``load_ranges``), and an engine claimed from
`BLIND_RANGES_ADDRESSES` addresses or more, not one of them in its files, with no DNS asked to
judge them (``verify_clients``).
"""

from __future__ import annotations

import bisect
import ipaddress
import json
import random
import socket
import struct
import threading
from concurrent.futures import ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Iterable

import polars as pl

from logtrap.bots import SEARCH_ENGINES, bot_names
from logtrap.errors import ConfigError, InputError, LogtrapError
from logtrap.schema import BOT_NAME, CLIENT, FIRST_SEEN, HUMAN_REQUESTS, REQUESTS, VERIFIED
from logtrap.settings import Settings

__all__ = ["PEOPLES_AGENTS_COLUMN", "DnsCache", "Ranges", "load_ranges", "shared_addresses",
           "verify_clients"]

_GOOGLE_COMMON = ("Googlebot", "GoogleOther", "Google-InspectionTool", "Storebot-Google")
# File-name fragments (lower case, first match wins) -> the bots the published file covers.
_FILE_NAMES: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("special-crawlers", ("AdsBot-Google", "Mediapartners-Google", "APIs-Google")),
    ("special_crawlers", ("AdsBot-Google", "Mediapartners-Google", "APIs-Google")),
    ("user-triggered-fetchers", ("FeedFetcher-Google",)),
    ("user_triggered_fetchers", ("FeedFetcher-Google",)),
    ("googlebot", _GOOGLE_COMMON),
    ("bingbot", ("bingbot",)),
    ("applebot", ("Applebot",)),
    ("duckduckbot", ("DuckDuckBot",)),
    ("duckduckgo", ("DuckDuckBot",)),
    ("yandex", ("YandexBot",)),
    ("baidu", ("Baiduspider",)),
    ("petalbot", ("PetalBot",)),
    ("gptbot", ("GPTBot",)),
    ("searchbot", ("OAI-SearchBot",)),
    ("chatgpt-user", ("ChatGPT-User",)),
    ("perplexitybot", ("PerplexityBot",)),
    ("perplexity-user", ("Perplexity-User",)),
)
# Operators that publish no reverse-DNS domain: DNS can confirm but never disprove.
_DNS_CANNOT_DISPROVE = frozenset({"DuckDuckBot"})

_Address = ipaddress.IPv4Address | ipaddress.IPv6Address


def client_address(client: str) -> _Address | None:
    """The IP address a client field holds (None for a host name or junk), as IPv4 where it
    is an IPv4-mapped IPv6 address: nginx on a dual-stack socket logs `::ffff:66.249.66.1`,
    and only the IPv4 form is in the engines' ranges and in their DNS.

    >>> str(client_address("::ffff:66.249.66.1")), str(client_address("2001:db8::1"))
    ('66.249.66.1', '2001:db8::1')
    >>> client_address("crawl.example") is None
    True
    """
    try:
        address = ipaddress.ip_address(client)
    except ValueError:
        return None
    return getattr(address, "ipv4_mapped", None) or address


@dataclass(frozen=True)
class Ranges:
    """Published address ranges per bot name, merged into sorted intervals for bisection."""

    # bot name -> ip version -> (sorted starts, matching ends)
    by_bot: dict[str, dict[int, tuple[list[int], list[int]]]] = field(default_factory=dict)
    # bot name -> when its oldest file was made (the files' "creationTime"), where all say
    created: dict[str, datetime] = field(default_factory=dict)
    # bot name -> the files its ranges came from (for messages)
    files: dict[str, tuple[str, ...]] = field(default_factory=dict)

    def covers(self, bot_name: str) -> bool:
        """True when a range file was given for this bot.

        >>> Ranges().covers("Googlebot")
        False
        """
        return bot_name in self.by_bot

    def contains(self, bot_name: str, address: _Address) -> bool:
        """True when the address is in one of this bot's ranges.

        >>> r = _ranges_from({"Googlebot": ["66.249.64.0/27"]})
        >>> r.contains("Googlebot", ipaddress.ip_address("66.249.64.31")), r.contains("Googlebot", ipaddress.ip_address("66.249.64.32"))
        (True, False)
        """
        starts, ends = self.by_bot.get(bot_name, {}).get(address.version, ([], []))
        i = bisect.bisect_right(starts, int(address)) - 1
        return i >= 0 and int(address) <= ends[i]


def _ranges_from(
    prefixes_by_bot: dict[str, Iterable[str]],
    created: dict[str, datetime] | None = None,
    files: dict[str, tuple[str, ...]] | None = None,
) -> Ranges:
    by_bot: dict[str, dict[int, tuple[list[int], list[int]]]] = {}
    for bot, prefixes in prefixes_by_bot.items():
        intervals: dict[int, list[tuple[int, int]]] = {4: [], 6: []}
        for prefix in prefixes:
            net = ipaddress.ip_network(prefix, strict=False)
            intervals[net.version].append((int(net.network_address), int(net.broadcast_address)))
        merged: dict[int, tuple[list[int], list[int]]] = {}
        for version, spans in intervals.items():
            starts: list[int] = []
            ends: list[int] = []
            for lo, hi in sorted(spans):
                if ends and lo <= ends[-1] + 1:
                    ends[-1] = max(ends[-1], hi)
                else:
                    starts.append(lo)
                    ends.append(hi)
            merged[version] = (starts, ends)
        by_bot[bot] = merged
    return Ranges(by_bot, dict(created or {}), dict(files or {}))


def load_ranges(specs: Iterable[str | Path]) -> Ranges:
    """Read the engines' published range files; each is ``path`` or ``Name=path``.

    A plain path is assigned by its file name: ``googlebot.json`` covers Google's common
    crawlers (Googlebot, GoogleOther, Google-InspectionTool, Storebot-Google),
    ``special-crawlers.json`` AdsBot-Google, Mediapartners-Google and APIs-Google,
    ``bingbot.json`` bingbot, and so on. Several files for one bot are a union.

    >>> import tempfile, os
    >>> d = tempfile.mkdtemp(); p = os.path.join(d, "googlebot.json")
    >>> _ = open(p, "w").write('{"prefixes": [{"ipv4Prefix": "66.249.64.0/27"}]}')
    >>> r = load_ranges([p]); r.covers("Googlebot"), r.covers("bingbot")
    (True, False)
    """
    prefixes: dict[str, list[str]] = {}
    created: dict[str, list[datetime | None]] = {}
    files: dict[str, tuple[str, ...]] = {}
    for spec in specs:
        names, path = _parse_spec(spec)
        found, made = _read_prefixes(path)
        for name in names:
            prefixes.setdefault(name, []).extend(found)
            created.setdefault(name, []).append(made)
            files[name] = (*files.get(name, ()), str(path))
    oldest = {name: min(times) for name, times in created.items()  # type: ignore[type-var]
              if times and None not in times}
    return _ranges_from(prefixes, oldest, files)


def _parse_spec(spec: str | Path) -> tuple[tuple[str, ...], Path]:
    """(bot names, path) of `path` or `Name=path`. A name is taken in the spelling logtrap
    gives the bot (`googlebot=` is Googlebot: in another spelling no request would be covered,
    and every address would stay unverified without a word).

    >>> _parse_spec("googlebot=g.json"), _parse_spec("PetalBot=p.json")
    ((('Googlebot',), PosixPath('g.json')), (('PetalBot',), PosixPath('p.json')))
    """
    text = str(spec)
    head, sep, tail = text.partition("=")
    if sep and not Path(text).exists() and head and "/" not in head:
        return (_KNOWN_NAMES.get(head.lower(), head),), Path(tail)
    path = Path(text)
    if not path.exists():  # before guessing its bot from its name
        raise InputError(f"cannot read IP range file {path}: No such file or directory")
    stem = path.name.lower()
    for fragment, names in _FILE_NAMES:
        if fragment in stem:
            return names, path
    raise ConfigError(
        f"cannot tell which bot the range file {path} is for",
        hint="name it after the bot (googlebot.json, bingbot.json...) or write Googlebot=path",
    )


# Bot names as logtrap spells them, by their lower case (for `Name=path` range files)
_KNOWN_NAMES = {name.lower(): name for name in bot_names()}


def _read_prefixes(path: Path) -> tuple[list[str], datetime | None]:
    """The file's prefixes, and when it was made ("creationTime", UTC; None if it does not say)."""
    try:
        data = json.loads(path.read_text(encoding="utf-8-sig"))  # a byte order mark is no JSON
    except OSError as exc:
        raise InputError(f"cannot read IP range file {path}: {exc.strerror or exc}") from exc
    except (ValueError, UnicodeDecodeError) as exc:
        raise ConfigError(f"IP range file {path} is not JSON: {exc}") from exc
    entries = data.get("prefixes") if isinstance(data, dict) else None
    if not isinstance(entries, list):
        raise ConfigError(
            f'IP range file {path} has no "prefixes" list',
            hint='expected the engines\' format: {"prefixes": [{"ipv4Prefix": "66.249.64.0/27"}]}',
        )
    out = []
    for entry in entries:
        prefix = entry.get("ipv4Prefix") or entry.get("ipv6Prefix") if isinstance(entry, dict) else None
        try:
            ipaddress.ip_network(prefix, strict=False)  # type: ignore[arg-type]
        except (TypeError, ValueError) as exc:
            raise ConfigError(f"IP range file {path}: bad prefix entry {entry!r}") from exc
        out.append(prefix)
    if not out:  # every address would be outside it: every real crawler "fake", and denied
        raise ConfigError(
            f"IP range file {path} lists no prefixes: it cannot verify any address, and every "
            "real crawler would look fake",
            hint="download the engine's current list again (e.g. https://developers.google.com/static/"
            "search/apis/ipranges/googlebot.json), or leave the file out",
        )
    return out, _creation_time(data)  # type: ignore[return-value]


def _creation_time(data: dict) -> datetime | None:  # type: ignore[type-arg]
    """The "creationTime" of an engine's range file (Google's: "2025-01-14T14:46:03.000000").

    >>> _creation_time({"creationTime": "2025-01-14T14:46:03.000000"})
    datetime.datetime(2025, 1, 14, 14, 46, 3, tzinfo=datetime.timezone.utc)
    >>> _creation_time({}), _creation_time({"creationTime": "soon"})
    (None, None)
    """
    try:
        made = datetime.fromisoformat(str(data["creationTime"]))
    except (KeyError, ValueError):
        return None
    return made if made.tzinfo else made.replace(tzinfo=timezone.utc)


# An engine claimed from this many addresses, none of them in its range files, is more likely a
# wrong file (another engine's, an IPv6-only one, a truncated download) than a site that only
# fakes visit: the real engine crawls nearly every public site, and a scraper spoofing it
# rarely uses ten addresses while the real one uses none (judgement).
BLIND_RANGES_ADDRESSES = 10


def _blind_ranges(ranges: Ranges, outside: dict[str, set[str]], inside: set[str]) -> None:
    """Raise when an engine's range files contain none of the many addresses claiming it:
    `outside` maps each bot to the addresses its files left out (with no DNS asked to judge
    them), `inside` names the bots with an address in their files."""
    for bot, addresses in sorted(outside.items()):
        if bot in inside or len(addresses) < BLIND_RANGES_ADDRESSES:
            continue
        files = ", ".join(ranges.files.get(bot, ())) or "its range file"
        raise LogtrapError(
            f"IP ranges cannot tell a fake {bot} here: none of the {len(addresses)} addresses "
            f"claiming {bot} (e.g. {min(addresses)}) is in {files}: if the file is not "
            f"{bot}'s current list, every real {bot} would look fake",
            hint=f"check that {files} is {bot}'s published list, add --verify-dns to let DNS "
            "judge these addresses, or leave the file out",
        )


# -- DNS ----------------------------------------------------------------------------------------

_OK, _NXDOMAIN, _FAILED = "ok", "nxdomain", "failed"  # a lookup's outcome


class DnsCache:
    """Answers already looked up, shared across batches: PTR names and forward addresses.

    >>> DnsCache().ptr == {}
    True
    """

    def __init__(self) -> None:
        self.ptr: dict[str, tuple[str, list[str]]] = {}  # address -> (outcome, names)
        self.forward: dict[str, tuple[str, list[str]]] = {}  # name -> (outcome, addresses)
        self._lock = threading.Lock()


def _encode_name(name: str) -> bytes:
    out = b""
    for label in name.rstrip(".").split("."):
        raw = label.encode("idna") if label else b""
        out += struct.pack("B", len(raw)) + raw
    return out + b"\0"


def _decode_name(msg: bytes, pos: int) -> tuple[str, int]:
    labels: list[str] = []
    end = None
    for _ in range(128):  # bounded: a malicious pointer loop cannot hang us
        length = msg[pos]
        if length & 0xC0 == 0xC0:
            if end is None:
                end = pos + 2
            pos = ((length & 0x3F) << 8) | msg[pos + 1]
            continue
        if length == 0:
            return ".".join(labels), (end if end is not None else pos + 1)
        labels.append(msg[pos + 1 : pos + 1 + length].decode("ascii", "replace"))
        pos += 1 + length
    raise ValueError("DNS name too long")


def _udp_query(server: tuple[str, int], name: str, qtype: int, timeout: float) -> tuple[str, list[str]]:
    """One DNS query over UDP (RFC 1035): (outcome, answers as text). Raises OSError on timeout."""
    qid = random.randrange(1 << 16)
    query = struct.pack(">HHHHHH", qid, 0x0100, 1, 0, 0, 0) + _encode_name(name) + struct.pack(">HH", qtype, 1)
    family = socket.AF_INET6 if ":" in server[0] else socket.AF_INET
    with socket.socket(family, socket.SOCK_DGRAM) as sock:
        sock.settimeout(timeout)
        sock.sendto(query, server)
        while True:
            msg, _ = sock.recvfrom(4096)
            if len(msg) >= 12 and struct.unpack(">H", msg[:2])[0] == qid:
                break
    _, flags, qdcount, ancount, _, _ = struct.unpack(">HHHHHH", msg[:12])
    rcode = flags & 0xF
    if rcode == 3:
        return _NXDOMAIN, []
    if rcode != 0:
        return _FAILED, []
    pos = 12
    for _ in range(qdcount):
        _, pos = _decode_name(msg, pos)
        pos += 4
    answers = []
    for _ in range(ancount):
        _, pos = _decode_name(msg, pos)
        rtype, _, _, rdlength = struct.unpack(">HHIH", msg[pos : pos + 10])
        pos += 10
        rdata = msg[pos : pos + rdlength]
        if rtype == qtype == 12:
            answers.append(_decode_name(msg, pos)[0])
        elif rtype == qtype == 1 and rdlength == 4:
            answers.append(str(ipaddress.IPv4Address(rdata)))
        elif rtype == qtype == 28 and rdlength == 16:
            answers.append(str(ipaddress.IPv6Address(rdata)))
        pos += rdlength
    return (_OK if answers else _NXDOMAIN), answers


def _server(settings: Settings) -> tuple[str, int] | None:
    if settings.dns_server is None:
        return None
    text = settings.dns_server.strip()
    if text.startswith("["):  # "[::1]:53"
        host, _, port = text[1:].partition("]:")
    elif text.count(":") == 1:
        host, _, port = text.partition(":")
    else:
        host, port = text, "53"
    try:
        return host, int(port or 53)
    except ValueError as exc:
        raise ConfigError(f"bad DNS server {settings.dns_server!r}", hint="write host:port, e.g. 127.0.0.1:53") from exc


def _reverse(address: str, settings: Settings) -> tuple[str, list[str]]:
    server = _server(settings)
    if server is not None:
        return _udp_query(server, ipaddress.ip_address(address).reverse_pointer, 12, settings.dns_timeout)
    try:
        name, aliases, _ = socket.gethostbyaddr(address)
    except socket.herror as exc:
        return (_NXDOMAIN if exc.errno == 1 else _FAILED), []
    return _OK, [name, *aliases]


def _resolve(name: str, settings: Settings) -> tuple[str, list[str]]:
    server = _server(settings)
    if server is not None:
        outcomes = [_udp_query(server, name, qtype, settings.dns_timeout) for qtype in (1, 28)]
        addresses = [a for _, found in outcomes for a in found]
        if addresses:
            return _OK, addresses
        return (_NXDOMAIN if all(o == _NXDOMAIN for o, _ in outcomes) else _FAILED), []
    try:
        infos = socket.getaddrinfo(name, None)
    except socket.gaierror as exc:
        return (_NXDOMAIN if exc.errno in (socket.EAI_NONAME, getattr(socket, "EAI_NODATA", -5)) else _FAILED), []
    return _OK, sorted({str(info[4][0]).split("%")[0] for info in infos})


# A name every resolver that sees the public DNS knows (a root server's; it has not changed in
# decades). A resolver that says it does not exist answers "no such name" for everything public.
PUBLIC_NAME = "a.root-servers.net"


def _dns_verdict(client: str, domains: tuple[str, ...], settings: Settings, cache: DnsCache) -> str | None:
    """'verified' | 'fake' | 'unverified' for one client, or _NXDOMAIN: fake if the resolver
    sees the public DNS (a name that does not exist there); None when it was unreachable."""

    def in_domains(name: str) -> bool:
        name = name.rstrip(".").lower()
        return any(name == d or name.endswith("." + d) for d in domains)

    def cached(table: dict[str, tuple[str, list[str]]], key: str, lookup) -> tuple[str, list[str]] | None:  # type: ignore[no-untyped-def]
        if key in table:
            return table[key]
        try:
            answer = lookup(key, settings)
        except OSError:  # timeout, refused, unreachable: not an answer, not cached
            return None
        except (ValueError, IndexError, struct.error):
            answer = (_FAILED, [])
        with cache._lock:
            table[key] = answer
        return answer

    address = client_address(client)
    if address is None:  # a host name as logged: the name must be the engine's and must exist
        if not in_domains(client):
            return "fake"
        forward = cached(cache.forward, client, _resolve)
        if forward is None:
            return None
        return {_OK: "verified", _NXDOMAIN: _NXDOMAIN}.get(forward[0], "unverified")
    reverse = cached(cache.ptr, str(address), _reverse)
    if reverse is None:
        return None
    outcome, names = reverse
    if outcome == _NXDOMAIN:
        return _NXDOMAIN
    if outcome != _OK:
        return "unverified"
    own = [n for n in names if in_domains(n)]
    if not own:
        return "fake"
    mismatch = False
    for name in own:
        forward = cached(cache.forward, name.rstrip("."), _resolve)
        if forward is None:
            return None
        if forward[0] == _OK and any(ipaddress.ip_address(a) == address for a in forward[1]):
            return "verified"
        if forward[0] == _FAILED:
            return "unverified"
        mismatch = mismatch or forward[0] == _OK
    return "fake" if mismatch else _NXDOMAIN


def _check_all(
    pairs: list[tuple[str, str]],
    ranges: Ranges,
    settings: Settings,
    cache: DnsCache,
    first_seen: dict[tuple[str, str], datetime] | None = None,
) -> dict[tuple[str, str], str | None]:
    verdicts: dict[tuple[str, str], str | None] = {}
    need_dns: list[tuple[str, str]] = []
    max_age = timedelta(days=settings.ip_ranges_max_age_days)

    def stale(client: str, bot: str) -> bool:
        """The bot's file was made too long before this address's requests to disprove it."""
        made, seen = ranges.created.get(bot), (first_seen or {}).get((client, bot))
        return made is not None and seen is not None and seen > made + max_age

    outside: dict[str, set[str]] = {}  # bot -> addresses its files left out, DNS not asked
    inside: set[str] = set()  # bots with an address in their files
    for client, bot in pairs:
        if bot not in SEARCH_ENGINES and not ranges.covers(bot):
            verdicts[(client, bot)] = None
            continue
        dns = settings.verify_dns and bot in SEARCH_ENGINES and bot not in _DNS_CANNOT_DISPROVE
        address = client_address(client)
        if address is not None and ranges.covers(bot):
            if ranges.contains(bot, address):
                verdicts[(client, bot)] = "verified"
                inside.add(bot)
                continue
            # unless DNS confirms below (ranges lag behind)
            verdicts[(client, bot)] = "unverified" if stale(client, bot) else "fake"
            if not dns:
                outside.setdefault(bot, set()).add(str(address))
        else:
            verdicts[(client, bot)] = "unverified"
        if settings.verify_dns and bot in SEARCH_ENGINES:
            need_dns.append((client, bot))
    _blind_ranges(ranges, outside, inside)
    if not need_dns:
        return verdicts

    results: dict[tuple[str, str], str | None] = {}
    workers = max(1, settings.dns_concurrency)
    pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="logtrap-dns")
    try:
        futures = {pair: pool.submit(_dns_verdict, pair[0], SEARCH_ENGINES[pair[1]], settings, cache) for pair in need_dns}
        # A system-resolver call has no timeout of its own: bound the wait for each answer.
        budget = settings.dns_timeout * 3 + 1
        for pair, future in futures.items():
            try:
                results[pair] = future.result(timeout=budget)
            except FutureTimeout:
                results[pair] = None
    finally:
        pool.shutdown(wait=False, cancel_futures=True)

    where = settings.dns_server or "the system resolver"
    if all(v is None for v in results.values()):
        raise LogtrapError(
            f"DNS unreachable: no answer from {where} for any of {len(results)} address(es) "
            f"within {settings.dns_timeout:g} s",
            hint="check the resolver (--set dns_server=HOST:PORT) or run without --verify-dns",
        )
    denied = [pair for pair, verdict in results.items() if verdict == _NXDOMAIN]
    if denied and not _sees_public_dns(settings, cache):
        client, bot = denied[0]
        raise LogtrapError(
            f"DNS cannot tell a fake bot here: {where} answered 'no such name' for "
            f"{len(denied)} address(es) claiming a search engine (e.g. {client} as {bot}), and "
            f"it knows no {PUBLIC_NAME} either: it does not see the public DNS, and every bot "
            "would look fake",
            hint="use a resolver that answers for public names (--set dns_server=HOST:PORT), "
            "or run without --verify-dns",
        )
    for (client, bot), verdict in results.items():
        if verdict == _NXDOMAIN:
            verdict = "fake"
        before = verdicts[(client, bot)]
        if verdict == "verified":
            verdicts[(client, bot)] = "verified"
        elif verdict == "fake" and bot not in _DNS_CANNOT_DISPROVE:
            verdicts[(client, bot)] = "fake"
        elif before != "fake":  # timeout / failure / undisprovable: ranges keep their say
            verdicts[(client, bot)] = "unverified"
    return verdicts


def _sees_public_dns(settings: Settings, cache: DnsCache) -> bool:
    """Whether the resolver knows `PUBLIC_NAME` (asked once per cache)."""
    if PUBLIC_NAME not in cache.forward:
        try:
            answer = _resolve(PUBLIC_NAME, settings)
        except (OSError, ValueError, IndexError, struct.error):
            answer = (_FAILED, [])
        with cache._lock:
            cache.forward[PUBLIC_NAME] = answer
    return cache.forward[PUBLIC_NAME][0] == _OK


# People's requests an address must carry, at least, to be judged shared: a scraper may send a
# browser's user agent now and then, a proxy in front of a site carries people all day (judgement)
SHARED_MIN_PEOPLE = 20
# ...and the distinct browsers (user agents) they come with: an edge carries everyone's, a
# scraper mixing in a browser's agent one or two (judgement, leaning to an edge: calling one
# fake denies the real Googlebot; traffic keeps up to 16)
SHARED_MIN_AGENTS = 3
PEOPLES_AGENTS_COLUMN = "peoples_agents"  # the distinct user agents of an address's people
# Behind a CDN, an edge's people against its claims, at least (judgement: the edges of a site
# crawled more than read carry half as many; a scraper's few browser requests, a twentieth)
_EDGE_PEOPLE_SHARE = 0.1


def shared_addresses(claims: pl.DataFrame) -> pl.DataFrame:
    """The addresses of `claims` that carry people's requests too, as many as their requests
    claiming a search engine or more (and `SHARED_MIN_PEOPLE`): a CDN's or proxy's edge, or a
    NAT, in front of everyone. Behind one, Googlebot arrives from the proxy's address, like
    every visitor: its address says nothing of who sent the request, so checking it against
    the engine's ranges would call the real Googlebot fake, and a rule denying it would
    refuse every real Googlebot request. Such addresses are ``unverified``, never ``fake``.
    An edge's people come with `SHARED_MIN_AGENTS` browsers or more: a scraper mixing a
    browser's agent or two into its fake Googlebot's requests is no edge. Where three or more
    addresses people come from send most of an engine's claims, the site is behind a CDN,
    and each with a tenth as many people as claims is an edge (`_EDGE_PEOPLE_SHARE`: a small
    site's many edges carry few people each; a site crawled more than read has fewer people
    than Googlebot on every edge); elsewhere an address needs `SHARED_MIN_PEOPLE` people and
    as many as its claims. (Judging edges wherever the engine verifies from an address of its
    own would deny the real Googlebot on a site some crawlers reach past its CDN.)

    Needs HUMAN_REQUESTS (people's answered requests from the address, one value per
    address), PEOPLES_AGENTS_COLUMN (their distinct user agents) and REQUESTS (its requests
    claiming the bot); without them no address is called shared.

    >>> c = pl.DataFrame({CLIENT: ["162.158.1.10", "45.1.1.1", "203.0.113.50", "66.249.66.1"],
    ...     BOT_NAME: "Googlebot", REQUESTS: [333, 400, 500, 5000],
    ...     HUMAN_REQUESTS: [666, 30, 500, 0], PEOPLES_AGENTS_COLUMN: [16, 2, 2, 0]})
    >>> shared_addresses(c)[CLIENT].to_list()  # one edge; a scraper mixing in two browsers
    ['162.158.1.10']
    >>> edges = pl.DataFrame({CLIENT: [f"162.158.0.{i}" for i in range(150)], BOT_NAME: "Googlebot",
    ...     REQUESTS: 40, HUMAN_REQUESTS: 12, PEOPLES_AGENTS_COLUMN: 3})
    >>> shared_addresses(pl.concat([c, edges], how="vertical_relaxed")).height  # behind a CDN
    151
    """
    needs = (HUMAN_REQUESTS, REQUESTS, PEOPLES_AGENTS_COLUMN)
    if not all(c in claims.columns for c in needs):
        return pl.DataFrame({CLIENT: []}, schema={CLIENT: pl.String()})
    people = pl.col(HUMAN_REQUESTS).fill_null(0)
    agents = pl.col(PEOPLES_AGENTS_COLUMN).fill_null(0)
    # an address some people come from, with two browsers or more
    peopled = (people >= 2) & (agents >= 2)
    # A site behind a CDN: most of an engine's claims come from such addresses, three or
    # more of them. Each edge is then one, however few people a small site's many edges
    # carry, or however more Googlebot than people (the tests per address missed both)
    fronted = (
        claims.with_columns(peopled.alias("_peopled"))
        .group_by(BOT_NAME)
        .agg(pl.col(CLIENT).filter("_peopled").n_unique().alias("_edges"),
             pl.col(REQUESTS).filter("_peopled").sum().alias("_through"),
             pl.col(REQUESTS).sum().alias("_all"))
        .filter((pl.col("_edges") >= 3) & (pl.col("_through") >= 0.5 * pl.col("_all")))
    )
    # ...and an edge is any of them with SHARED_MIN_AGENTS browsers and a tenth as many
    # people as claims (a scraper at its own address, mixing in a browser or two, or a few
    # browser requests among its hundreds of claims, is no edge)
    behind = claims.join(fronted.select(BOT_NAME), on=BOT_NAME, how="semi").filter(
        peopled & (agents >= SHARED_MIN_AGENTS) & (people >= _EDGE_PEOPLE_SHARE * pl.col(REQUESTS)))
    per_address = claims.group_by(CLIENT).agg(
        pl.col(REQUESTS).sum().alias("_claimed"), people.max().alias("_people"), agents.max().alias("_agents"),
    )
    alone = per_address.filter(
        (pl.col("_people") >= SHARED_MIN_PEOPLE) & (pl.col("_people") >= pl.col("_claimed"))
        & (pl.col("_agents") >= SHARED_MIN_AGENTS)
    )
    return (
        pl.concat([alone.select(CLIENT), behind.select(CLIENT)])
        .select(pl.col(CLIENT).cast(pl.String)).unique().sort(CLIENT)
    )


def verify_clients(
    claims: pl.DataFrame,
    settings: Settings,
    cache: DnsCache | None = None,
    ranges: Ranges | None = None,
) -> pl.DataFrame:
    """Add VERIFIED to claims (columns CLIENT, BOT_NAME), checking each distinct pair once.
    Where claims also give REQUESTS, HUMAN_REQUESTS and PEOPLES_AGENTS_COLUMN, a shared
    address (`shared_addresses`) is ``unverified``.

    ``ranges`` defaults to ``load_ranges(settings.ip_ranges)``; pass it to load the files once
    for many batches, as ``cache`` keeps DNS answers across batches.

    >>> claims = pl.DataFrame({CLIENT: ["66.249.64.1", "10.0.0.1", "10.0.0.1"],
    ...                        BOT_NAME: ["Googlebot", "Googlebot", "curl"]})
    >>> r = _ranges_from({"Googlebot": ["66.249.64.0/27"]})
    >>> verify_clients(claims, Settings(), ranges=r)[VERIFIED].to_list()
    ['verified', 'fake', None]
    """
    missing = {CLIENT, BOT_NAME} - set(claims.columns)
    if missing:
        raise ConfigError(f"verify_clients needs columns {sorted(missing)}; got {claims.columns}")
    if ranges is None:
        ranges = load_ranges(settings.ip_ranges)
    cache = cache if cache is not None else DnsCache()
    pairs = (
        claims.select(pl.col(CLIENT).cast(pl.String), pl.col(BOT_NAME).cast(pl.String))
        .unique()
        .drop_nulls()
        .rows()
    )
    first_seen = None
    if FIRST_SEEN in claims.columns:  # when each address's requests began (traffic.claims)
        first = claims.group_by(CLIENT, BOT_NAME).agg(pl.col(FIRST_SEEN).min()).drop_nulls()
        first_seen = {(c, b): t for c, b, t in first.rows()}
    # a shared address is never fake, and neither ranges nor DNS are asked about it
    shared = set(shared_addresses(claims)[CLIENT].to_list())
    verdicts = _check_all([(c, b) for c, b in pairs if c not in shared], ranges, settings, cache, first_seen)
    for c, b in pairs:
        if c in shared:
            verdicts[(c, b)] = "unverified" if b in SEARCH_ENGINES or ranges.covers(b) else None
    table = pl.DataFrame(
        {
            CLIENT: [c for c, _ in verdicts],
            BOT_NAME: [b for _, b in verdicts],
            VERIFIED: list(verdicts.values()),
        },
        schema={CLIENT: pl.String(), BOT_NAME: pl.String(), VERIFIED: pl.String()},
    )
    out = claims.drop(VERIFIED) if VERIFIED in claims.columns else claims
    return out.join(table, on=[CLIENT, BOT_NAME], how="left", maintain_order="left")

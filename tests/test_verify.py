"""logtrap.verify: range files, DNS through a local resolver, and an unreachable resolver."""

from __future__ import annotations

import ipaddress
import socket
import struct
import threading
import time
from collections.abc import Iterator
from datetime import datetime, timezone
from pathlib import Path

import polars as pl
import pytest

from logtrap.errors import ConfigError, LogtrapError
from logtrap.schema import BOT_NAME, CLIENT, FIRST_SEEN, HUMAN_REQUESTS, REQUESTS, VERIFIED
from logtrap.settings import Settings
from logtrap.verify import PEOPLES_AGENTS_COLUMN, PUBLIC_NAME, DnsCache, load_ranges, verify_clients

DATA = Path(__file__).parent / "data"
RANGES = (DATA / "googlebot.json", DATA / "bingbot.json")


def claims(*pairs: tuple[str, str]) -> pl.DataFrame:
    return pl.DataFrame({CLIENT: [c for c, _ in pairs], BOT_NAME: [b for _, b in pairs]})


# -- range files ---------------------------------------------------------------------------------


def test_ranges_verify_and_expose_fakes_ipv4_and_ipv6() -> None:
    settings = Settings(ip_ranges=RANGES)
    df = claims(
        ("66.249.66.1", "Googlebot"),  # in 66.249.66.0/27
        ("66.249.79.100", "Googlebot"),  # in 66.249.79.96/27
        ("66.249.66.40", "Googlebot"),  # in 66.249.66.32/27
        ("66.249.67.1", "Googlebot"),  # between prefixes
        ("2001:4860:4801:10::1", "Googlebot"),
        ("2001:4860:4801:12::1", "Googlebot"),
        ("157.55.39.12", "bingbot"),
        ("66.249.66.1", "bingbot"),  # Google's address claiming Bing
        ("17.0.0.1", "Applebot"),  # no range file for Apple, no DNS
        ("1.2.3.4", "curl"),  # no search engine claimed
        ("crawl-66-249-66-1.googlebot.com", "Googlebot"),  # a host name, no DNS
    )
    out = verify_clients(df, settings)
    assert out[VERIFIED].to_list() == [
        "verified", "verified", "verified", "fake", "verified", "fake", "verified", "fake",
        "unverified", None, "unverified",
    ]
    assert out.columns == [CLIENT, BOT_NAME, VERIFIED]


def test_an_ipv4_mapped_address_is_checked_as_its_ipv4_address() -> None:
    """nginx on a dual-stack socket logs IPv4 clients as ::ffff:a.b.c.d: Googlebot from
    66.249.66.1 logged so is Googlebot, not a fake (the ranges list it as IPv4)."""
    df = claims(("::ffff:66.249.66.1", "Googlebot"), ("::ffff:66.249.67.1", "Googlebot"))
    assert verify_clients(df, Settings(ip_ranges=RANGES))[VERIFIED].to_list() == [
        "verified", "fake",
    ]


def test_each_pair_once_and_order_kept() -> None:
    df = claims(*[("66.249.67.1", "Googlebot"), ("66.249.66.1", "Googlebot")] * 1000)
    out = verify_clients(df, Settings(ip_ranges=RANGES))
    assert out.height == 2000
    assert out[VERIFIED].to_list()[:2] == ["fake", "verified"]


def test_google_file_covers_google_common_crawlers() -> None:
    ranges = load_ranges([DATA / "googlebot.json"])
    assert ranges.covers("GoogleOther") and not ranges.covers("AdsBot-Google")


def test_named_range_spec(tmp_path: Path) -> None:
    path = tmp_path / "ranges.json"
    path.write_text('{"prefixes": [{"ipv4Prefix": "17.58.96.0/19"}]}')
    ranges = load_ranges([f"Applebot={path}"])
    assert ranges.contains("Applebot", ipaddress.ip_address("17.58.100.1"))
    assert not ranges.contains("Applebot", ipaddress.ip_address("17.58.128.1"))


def test_a_named_range_spec_in_another_spelling_covers_the_bot(tmp_path: Path) -> None:
    # "googlebot=" covered no request: every Googlebot stayed unverified, without a word
    path = tmp_path / "ranges.json"
    path.write_text('{"prefixes": [{"ipv4Prefix": "66.249.64.0/27"}]}')
    assert load_ranges([f"googlebot={path}"]).covers("Googlebot")


def test_a_range_file_saved_with_a_byte_order_mark_is_read(tmp_path: Path) -> None:
    path = tmp_path / "googlebot.json"
    path.write_bytes(b'\xef\xbb\xbf{"prefixes": [{"ipv4Prefix": "66.249.64.0/27"}]}')
    assert load_ranges([path]).contains("Googlebot", ipaddress.ip_address("66.249.64.5"))


def test_unnamed_unknown_range_file_is_a_clear_error(tmp_path: Path) -> None:
    path = tmp_path / "ranges.json"
    path.write_text('{"prefixes": []}')
    with pytest.raises(ConfigError, match="which bot"):
        load_ranges([path])


@pytest.mark.parametrize("text", ["not json", '{"nope": 1}', '{"prefixes": [{"ipv4Prefix": "300.1.1.0/24"}]}'])
def test_bad_range_file_is_a_config_error(tmp_path: Path, text: str) -> None:
    path = tmp_path / "googlebot.json"
    path.write_text(text)
    with pytest.raises(ConfigError, match="googlebot.json"):
        load_ranges([path])


def test_a_range_file_with_no_prefixes_is_an_error_not_a_list_of_fakes(tmp_path: Path) -> None:
    # every real Googlebot address would be outside it, called fake, and denied by the server
    # rules: as for a resolver blind to the public DNS, say so and stop
    path = tmp_path / "googlebot.json"
    path.write_text('{"prefixes": []}')
    with pytest.raises(ConfigError, match=f"^IP range file {path} lists no prefixes") as err:
        load_ranges([f"googlebot={path}"])
    assert err.value.hint is not None and "googlebot.json" in err.value.hint


def test_ranges_that_hold_none_of_many_claimed_addresses_are_an_error(tmp_path: Path) -> None:
    # Bing's list given for Googlebot: 12 real Googlebot addresses, none in it
    wrong = Settings(ip_ranges=(f"googlebot={DATA / 'bingbot.json'}",))
    many = claims(*((f"66.249.66.{i}", "Googlebot") for i in range(1, 13)))
    with pytest.raises(LogtrapError, match=r"^IP ranges cannot tell a fake Googlebot here: none "
                       r"of the 12 addresses claiming Googlebot \(e.g. 66.249.66.1\) is in .*bingbot.json"):
        verify_clients(many, wrong)
    # fewer addresses: a few scrapers on a site the engine does not crawl are fakes
    few = claims(*((f"203.0.113.{i}", "Googlebot") for i in range(1, 10)))
    assert verify_clients(few, wrong)[VERIFIED].to_list() == ["fake"] * 9
    # one address in the right file: the file is the engine's, and the rest are fakes
    right = Settings(ip_ranges=RANGES)
    mixed = claims(("66.249.66.1", "Googlebot"), *((f"203.0.113.{i}", "Googlebot") for i in range(1, 13)))
    assert verify_clients(mixed, right)[VERIFIED].to_list() == ["verified"] + ["fake"] * 12


def test_an_address_people_share_is_unverified_not_fake() -> None:
    # a site behind a CDN: Googlebot and every visitor arrive from the edge's addresses.
    # Called fake, a rule would deny every real Googlebot request.
    df = pl.DataFrame({
        CLIENT: ["162.158.1.10", "172.70.3.30", "203.0.113.7", "198.51.100.9", "203.0.113.50",
                 "66.249.66.1"],
        BOT_NAME: ["Googlebot", "bingbot", "Googlebot", "Googlebot", "Googlebot", "Googlebot"],
        REQUESTS: [333, 40, 500, 15, 500, 5000],
        HUMAN_REQUESTS: [666, 700, 12, 19, 500, 0],
        PEOPLES_AGENTS_COLUMN: [16, 16, 3, 9, 2, 0],
    })
    out = verify_clients(df, Settings(ip_ranges=RANGES))
    # the edges carry more people than claims, with many browsers, whether or not some
    # Googlebot reaches the server past the CDN (66.249.66.1); a scraper's few browser
    # requests do not make it a proxy, nor do fewer than SHARED_MIN_PEOPLE of them, nor as
    # many as its claims from one browser (a scraper mixing in Chrome escaped fake_bot)
    assert out[VERIFIED].to_list() == ["unverified", "unverified", "fake", "fake", "fake", "verified"]
    # without people's counts, address checks judge alone
    assert verify_clients(df.drop(HUMAN_REQUESTS), Settings(ip_ranges=RANGES))[VERIFIED].to_list() == [
        "fake", "fake", "fake", "fake", "fake", "verified"]


def test_a_site_behind_a_cdn_has_every_edge_unverified() -> None:
    # 150 edges of a small site, a dozen people each (4 browsers), and a site crawled more
    # than read (Googlebot outnumbers people on each of 6 edges): the test per address called
    # 68 of the 150, and all 6, fake, and denied the real Googlebot there. Most of Googlebot's
    # claims come through addresses people come from: the site is behind a CDN
    small = pl.DataFrame({CLIENT: [f"162.158.{i // 250}.{i % 250}" for i in range(150)],
                          BOT_NAME: "Googlebot", REQUESTS: 6, HUMAN_REQUESTS: 12 + 9 * (pl.int_range(150, eager=True) % 2),
                          PEOPLES_AGENTS_COLUMN: 4})
    direct = pl.DataFrame({CLIENT: ["66.249.66.1"], BOT_NAME: "Googlebot", REQUESTS: 15,
                           HUMAN_REQUESTS: 0, PEOPLES_AGENTS_COLUMN: 0})
    out = verify_clients(pl.concat([small, direct], how="vertical_relaxed"), Settings(ip_ranges=RANGES))
    assert out[VERIFIED].value_counts(sort=True).rows() == [("unverified", 150), ("verified", 1)]
    heavy = pl.DataFrame({CLIENT: [f"172.70.3.{i}" for i in range(6)], BOT_NAME: "Googlebot",
                          REQUESTS: 400, HUMAN_REQUESTS: 250, PEOPLES_AGENTS_COLUMN: 7})
    assert verify_clients(heavy, Settings(ip_ranges=RANGES))[VERIFIED].unique().to_list() == ["unverified"]
    # one scraper mixing in two browsers, no CDN: judged as any address
    one = pl.DataFrame({CLIENT: ["203.0.113.50"], BOT_NAME: "Googlebot", REQUESTS: 500,
                        HUMAN_REQUESTS: 500, PEOPLES_AGENTS_COLUMN: 2})
    assert verify_clients(one, Settings(ip_ranges=RANGES))[VERIFIED].to_list() == ["fake"]


def test_missing_range_file_is_a_logtrap_error(tmp_path: Path) -> None:
    with pytest.raises(LogtrapError, match="cannot read"):
        load_ranges([tmp_path / "googlebot.json"])
    # not "cannot tell which bot the range file nosuch.json is for"
    with pytest.raises(LogtrapError, match="^cannot read IP range file .*nosuch.json: No such"):
        load_ranges([tmp_path / "nosuch.json"])


# -- DNS through a local resolver ------------------------------------------------------------


def _name(name: str) -> bytes:
    return b"".join(struct.pack("B", len(p)) + p.encode() for p in name.rstrip(".").split(".")) + b"\0"


class TinyDns:
    """A UDP DNS server on 127.0.0.1 answering PTR / A / AAAA from a dict; NXDOMAIN otherwise."""

    def __init__(self, records: dict[tuple[str, int], list[str]]) -> None:
        self.records = records
        self.queries: list[tuple[str, int]] = []
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.sock.bind(("127.0.0.1", 0))
        self.sock.settimeout(0.2)
        self.address = "127.0.0.1:%d" % self.sock.getsockname()[1]
        self.stop = False
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self) -> None:
        while not self.stop:
            try:
                msg, peer = self.sock.recvfrom(512)
            except OSError:
                continue
            qid = msg[:2]
            pos, labels = 12, []
            while msg[pos]:
                labels.append(msg[pos + 1 : pos + 1 + msg[pos]].decode())
                pos += 1 + msg[pos]
            qtype = struct.unpack(">H", msg[pos + 1 : pos + 3])[0]
            question = msg[12 : pos + 5]
            qname = ".".join(labels).lower()
            self.queries.append((qname, qtype))
            answers = self.records.get((qname, qtype))
            exists = any(name == qname for name, _ in self.records)
            rcode = 0 if answers or exists else 3
            body = b""
            for value in answers or []:
                if qtype == 12:
                    rdata = _name(value)
                elif qtype == 1:
                    rdata = ipaddress.IPv4Address(value).packed
                else:
                    rdata = ipaddress.IPv6Address(value).packed
                body += b"\xc0\x0c" + struct.pack(">HHIH", qtype, 1, 300, len(rdata)) + rdata
            header = qid + struct.pack(">HHHHH", 0x8180 | rcode, 1, len(answers or []), 0, 0)
            self.sock.sendto(header + question + body, peer)

    def close(self) -> None:
        self.stop = True
        self.thread.join()
        self.sock.close()


@pytest.fixture
def dns() -> Iterator[TinyDns]:
    server = TinyDns(
        {
            ("1.66.249.66.in-addr.arpa", 12): ["crawl-66-249-66-1.googlebot.com"],
            ("crawl-66-249-66-1.googlebot.com", 1): ["66.249.66.1"],
            # a PTR inside Google's domain whose forward lookup points elsewhere
            ("2.66.249.66.in-addr.arpa", 12): ["crawl-66-249-66-2.googlebot.com"],
            ("crawl-66-249-66-2.googlebot.com", 1): ["66.249.66.99"],
            # a scraper whose PTR names its hoster
            ("4.3.2.1.in-addr.arpa", 12): ["host-1-2-3-4.cheap-vps.example"],
            ("12.39.55.157.in-addr.arpa", 12): ["msnbot-157-55-39-12.search.msn.com"],
            ("msnbot-157-55-39-12.search.msn.com", 1): ["157.55.39.12"],
            # IPv6 Googlebot
            (ipaddress.ip_address("2001:4860:4801:10::1").reverse_pointer, 12): ["crawl-v6.googlebot.com"],
            ("crawl-v6.googlebot.com", 28): ["2001:4860:4801:10::1"],
            # a resolver that sees the public DNS knows the root servers
            (PUBLIC_NAME, 1): ["198.41.0.4"],
        }
    )
    yield server
    server.close()


def test_dns_verifies_and_exposes_fakes(dns: TinyDns) -> None:
    settings = Settings(verify_dns=True, dns_server=dns.address, dns_timeout=1.0, dns_concurrency=4)
    df = claims(
        ("66.249.66.1", "Googlebot"),
        ("66.249.66.2", "Googlebot"),  # forward mismatch
        ("1.2.3.4", "Googlebot"),  # PTR outside Google's domains
        ("5.6.7.8", "Googlebot"),  # no PTR at all (NXDOMAIN)
        ("157.55.39.12", "bingbot"),
        ("2001:4860:4801:10::1", "Googlebot"),
        ("crawl-66-249-66-1.googlebot.com", "Googlebot"),  # host name as logged: forward-confirmed
        ("scraper.example.net", "Googlebot"),  # host name outside Google's domains
        ("5.6.7.8", "DuckDuckBot"),  # DDG publishes no rDNS domain: never "fake" by DNS
        ("1.2.3.4", "curl"),
        ("::ffff:66.249.66.1", "Googlebot"),  # logged by a dual-stack socket: its IPv4 PTR
    )
    out = verify_clients(df, settings)
    assert out[VERIFIED].to_list() == [
        "verified", "fake", "fake", "fake", "verified", "verified", "verified", "fake", "unverified", None,
        "verified",
    ]


def test_a_resolver_blind_to_the_public_dns_is_an_error_not_a_list_of_fakes() -> None:
    # an isolated network's resolver: "no such name" for every public name, the root too.
    # Googlebot's real address would be called fake, and a server rule would refuse it.
    server = TinyDns({})
    try:
        settings = Settings(verify_dns=True, dns_server=server.address, dns_timeout=1.0)
        with pytest.raises(LogtrapError, match=f"DNS cannot tell a fake bot here.*{PUBLIC_NAME}"):
            verify_clients(claims(("66.249.66.1", "Googlebot")), settings)
    finally:
        server.close()


def test_dns_confirms_an_address_missing_from_stale_ranges(dns: TinyDns, tmp_path: Path) -> None:
    stale = tmp_path / "googlebot.json"
    stale.write_text('{"prefixes": [{"ipv4Prefix": "66.249.64.0/27"}]}')  # lacks 66.249.66.0/27
    settings = Settings(ip_ranges=(stale, DATA / "bingbot.json"), verify_dns=True, dns_server=dns.address)
    out = verify_clients(
        claims(("66.249.66.1", "Googlebot"), ("1.2.3.4", "bingbot"), ("66.249.64.5", "Googlebot")), settings
    )
    # DNS confirms the first; the second fails both; the third is in the ranges (no DNS needed)
    assert out[VERIFIED].to_list() == ["verified", "fake", "verified"]
    assert ("5.64.249.66.in-addr.arpa", 12) not in dns.queries


def test_dns_cache_asks_each_address_once(dns: TinyDns) -> None:
    settings = Settings(verify_dns=True, dns_server=dns.address)
    cache = DnsCache()
    verify_clients(claims(("66.249.66.1", "Googlebot")), settings, cache=cache)
    asked = len(dns.queries)
    verify_clients(claims(("66.249.66.1", "Googlebot"), ("66.249.66.1", "Googlebot")), settings, cache=cache)
    assert len(dns.queries) == asked
    assert cache.ptr["66.249.66.1"] == ("ok", ["crawl-66-249-66-1.googlebot.com"])


def test_unreachable_resolver_is_a_clear_error_within_the_timeout() -> None:
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:  # a port nothing answers on
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
        settings = Settings(verify_dns=True, dns_server=f"127.0.0.1:{port}", dns_timeout=0.3)
        start = time.monotonic()
        with pytest.raises(LogtrapError, match="DNS unreachable"):
            verify_clients(claims(("66.249.66.1", "Googlebot"), ("1.2.3.4", "bingbot")), settings)
        assert time.monotonic() - start < 2.0


def test_the_system_resolver_exposes_a_googlebot_claim_from_localhost() -> None:
    # No --dns-server: the machine's own resolver answers (from /etc/hosts, no network).
    # 127.0.0.1's name is "localhost", not a Google host: the claim is fake.
    cache = DnsCache()
    out = verify_clients(claims(("127.0.0.1", "Googlebot")), Settings(verify_dns=True), cache=cache)
    assert out[VERIFIED].to_list() == ["fake"]
    outcome, names = cache.ptr["127.0.0.1"]
    assert outcome == "ok" and "localhost" in names


def test_no_dns_without_asking() -> None:
    # dns_server points nowhere, but verify_dns is off: no lookup, no error
    settings = Settings(dns_server="127.0.0.1:9", dns_timeout=0.1)
    assert verify_clients(claims(("66.249.66.1", "Googlebot")), settings)[VERIFIED].to_list() == ["unverified"]


def test_bad_dns_server_setting() -> None:
    settings = Settings(verify_dns=True, dns_server="127.0.0.1:port")
    with pytest.raises(ConfigError, match="DNS server"):
        verify_clients(claims(("66.249.66.1", "Googlebot")), settings)


def test_missing_columns_raise() -> None:
    with pytest.raises(LogtrapError, match="columns"):
        verify_clients(pl.DataFrame({CLIENT: ["1.2.3.4"]}), Settings())


def test_a_range_file_older_than_the_requests_cannot_prove_a_fake(tmp_path: Path) -> None:
    # Google adds ranges every few weeks: an address outside a file made long before its
    # requests may be a real Googlebot on a newer range, and a server rule would refuse it
    old = tmp_path / "googlebot.json"
    old.write_text('{"creationTime": "2025-01-14T14:46:03.000000",'
                   ' "prefixes": [{"ipv4Prefix": "66.249.64.0/27"}]}')
    df = pl.DataFrame({
        CLIENT: ["66.249.79.5", "203.0.113.7", "66.249.64.1"],
        BOT_NAME: ["Googlebot"] * 3,
        FIRST_SEEN: [datetime(2026, 11, 20, tzinfo=timezone.utc),   # 22 months later
                     datetime(2025, 1, 20, tzinfo=timezone.utc),    # six days later
                     datetime(2026, 11, 20, tzinfo=timezone.utc)],  # inside the ranges
    })
    out = verify_clients(df, Settings(ip_ranges=(old,)))
    assert out[VERIFIED].to_list() == ["unverified", "fake", "verified"]
    # a file that does not say when it was made, or claims without times: the file decides
    undated = tmp_path / "bingbot.json"
    undated.write_text('{"prefixes": [{"ipv4Prefix": "157.55.39.0/24"}]}')
    df = df.with_columns(pl.lit("bingbot").alias(BOT_NAME))
    assert verify_clients(df, Settings(ip_ranges=(undated,)))[VERIFIED].to_list() == ["fake"] * 3
    assert verify_clients(df.drop(FIRST_SEEN).with_columns(pl.lit("Googlebot").alias(BOT_NAME)),
                          Settings(ip_ranges=(old,)))[VERIFIED].to_list() == ["fake", "fake", "verified"]

"""Settings: one frozen object that travels explicitly through every stage.

Every threshold has its default's reason beside it. Where the default is a judgement call
rather than a figure from the sources (DESIGN.md), the comment says "judgement".
"""

from __future__ import annotations

import dataclasses
import ipaddress
import math
import re
from dataclasses import dataclass
from pathlib import Path
from typing import NamedTuple

from logtrap.errors import ConfigError

# A host with its port ("example.com:8080", "[::1]:443"): the port is dropped, by the reader
# from the logs' hosts and here from the hosts asked for, so the two compare
HOST_PORT = r"^([^:]+|\[[^\]]*\]):[0-9]+$"

# Sizes and counts that 0 would break: no bytes read per batch (nothing read at all), no rows
# per step (the reader waits forever), an empty URL sample, no DNS worker, no window compared.
_AT_LEAST_ONE = frozenset({
    "batch_bytes", "analysis_rows", "detect_lines", "url_sample_size", "pattern_cache_urls",
    "dns_concurrency", "growing_pattern_windows", "crowd_min_addresses",
})  # fmt: skip

# Shares of a whole: above 1 a detector could never fire (`budget_hog_share = 2` switched it
# off without a word), so it is refused; every field named *_share is one too.
_FRACTIONS = frozenset({"growing_pattern_min_novelty", "growing_pattern_min_coverage"})


# Settings that hold several values (a tuple)
_MANY = ("hosts", "session_params", "tracking_params", "ip_ranges", "sitemaps", "trusted_proxies")


@dataclass(frozen=True)
class Settings:
    """Every knob of a run, with its default: reading (format, hosts, batch sizes), URL
    patterns (session and tracking parameters), the detectors' thresholds, verification (IP
    range files, DNS) and the site's files (sitemaps, robots.txt). Each field's comment says
    why its default is what it is; `logtrap settings [WORD...]` (or `described()`) lists them
    with their values. Frozen: change one with `replace`.

    >>> s = Settings(hosts=("example.com",), url_sample_size=500)
    >>> s.replace(verify_dns=True).verify_dns, s.calendar_future_years
    (True, 2.0)
    """

    # -- reading ---------------------------------------------------------------------------
    log_format: str = "auto"  # "auto", a preset name, or an Apache LogFormat / nginx log_format
    # Decompressed bytes parsed per batch (~40,000 combined lines): per-batch overhead is
    # already small, and memory stays reused; at 32 MB each batch's buffers were fresh pages
    # from the kernel (a third of the CPU time in page faults) and the reader peaked at ~500
    # MB instead of ~240 MB (logtrap's benchmark, 1M and 10M lines).
    batch_bytes: int = 8 * 1024 * 1024
    # Requests annotated (bots, patterns) and tallied in one step: read batches are gathered up
    # to this many rows first. Each step pays fixed costs (joins, seven group_bys), so larger
    # steps are cheaper: 160,000 (about four 8 MB batches) made a 10M-line analysis 30% faster
    # than one step per batch, for ~110 MB more peak memory (logtrap's benchmark) (judgement).
    # The reader parses up to this many rows ahead of its caller, in a thread.
    analysis_rows: int = 160_000
    # Lines sampled per file to choose and check a format; where none of them parse, it is
    # chosen from 50 times as many (junk at a log's start).
    detect_lines: int = 20
    rejected_examples: int = 5  # bad lines kept (with file and line number) for the report
    hosts: tuple[str, ...] = ()  # only these virtual hosts; empty = all
    # Proxies in front of the site whose addresses are public, as address ranges (a CDN's
    # published ones: Cloudflare's "173.245.48.0/20", ...): a request from one takes its client
    # from the X-Forwarded-For or CF-Connecting-IP the format logs, as one from the site's own
    # network does. Empty: only the site's own network (a header from anywhere else, anyone
    # could have sent).
    trusted_proxies: tuple[str, ...] = ()

    # -- URL patterns ------------------------------------------------------------------------
    session_params: tuple[str, ...] = ()  # extra session-id parameter names for this site
    tracking_params: tuple[str, ...] = ()  # extra tracking parameter names for this site
    # Distinct URLs kept per host+pattern (chosen by hash, so the same URLs are kept across
    # batches and runs). Bounds memory whatever the size of the logs; 1,000 is enough to
    # see a value distribution and pick examples (judgement).
    url_sample_size: int = 1000
    # Distinct URLs whose patterns are remembered between batches, so a URL seen again is not
    # computed again. ~40 bytes each (the index's slot, the key, its pattern's number; each
    # distinct pattern kept once), so 500,000 stay under 20 MB; past it only the current
    # batch's URLs are kept (judgement).
    pattern_cache_urls: int = 500_000
    # A literal path segment below the first level that takes this many distinct names among
    # patterns otherwise alike is a variable (`/tag/{name}`: tags, wiki topics, users). The
    # real corpus logs show 11-43 for tags and topics, and sites keep their sections and a
    # shop's categories to a few dozen at the first level, which is never merged; 0 merges
    # none (judgement).
    pattern_min_names: int = 25

    # -- bot verification --------------------------------------------------------------------
    ip_ranges: tuple[Path, ...] = ()  # search engines' published range files (JSON)
    # An address outside a range file made this many days before its requests is unverified,
    # not fake: engines add ranges (Google's file changes every few weeks; judgement)
    ip_ranges_max_age_days: int = 30
    verify_dns: bool = False  # reverse + forward DNS check (network; off by default)
    dns_timeout: float = 2.0  # seconds per lookup (judgement)
    dns_concurrency: int = 16  # lookups in flight at once (judgement)
    dns_server: str | None = None  # resolver address ("127.0.0.1:5353"); none: the system's resolver

    # -- suggestions -------------------------------------------------------------------------
    sitemaps: tuple[Path, ...] = ()  # the site's sitemap.xml files: their URLs are content, never blocked
    robots: Path | None = None  # the site's current robots.txt, suggestions are merged into it; none: no file

    # -- detectors: see logtrap/detectors/ for what each threshold means ---------------------
    # (fields added here by the detectors, one block per kind)

    # severity of the URL-shape traps (calendar ... internal_search): wasted requests as a share
    # of the host's bot requests
    trap_critical_share: float = 0.25  # a quarter of the crawl budget gone to one trap (judgement)
    trap_warning_share: float = 0.01  # below one fetch in a hundred it is info only (judgement)

    # calendar: date values spanning years, far future or empty pages
    calendar_min_urls: int = 20  # dated URLs needed; fewer is a handful of links (judgement)
    calendar_min_dated_share: float = 0.9  # of the pattern's URLs carry a date, so ids never pass (judgement)
    calendar_min_years: float = 5.0  # dates spanning more than five years (judgement)
    calendar_future_years: float = 2.0  # dates beyond the logs' end plus this are wasted (judgement)
    calendar_min_future_dates: int = 20  # distinct dates beyond that horizon, answering one page, that make a calendar whatever its span: a "next day" walked onto "no rooms", not a few dates announced nor a schedule's pages; no archive has one (judgement)
    calendar_empty_share: float = 0.5  # one size for half the dated pages = the empty month (judgement)
    calendar_min_urls_per_size: float = 5.0  # dated pages per distinct size: a few templates repeated (judgement)

    # session_id: one page copied under a new parameter value on nearly every request
    session_id_min_urls: int = 20  # distinct values needed (judgement)
    session_id_min_copies: float = 5.0  # URLs per page with the parameter removed (judgement)
    session_id_min_named_copies: float = 2.0  # ...for a parameter named as a session (sid, phpsessid): its name says what the copies are; a forum's 9,000 topics crawled 3.8 times each in a week are a trap (judgement)
    session_id_min_new_share: float = 0.5  # distinct values per request: "a new value on nearly every request" (judgement)
    session_id_min_value_length: int = 8  # an unknown parameter's values must look like ids this long (judgement)

    # facets: filters combined in every order, many URLs per distinct response
    facets_min_params: int = 3  # filters per URL, two of them varying (a shop's color, size and sort, say)
    facets_min_urls: int = 50  # distinct URLs needed (judgement)
    facets_min_urls_per_size: float = 3.0  # URLs per distinct response size; real listings show about one (judgement)

    # pagination: page numbers past the last page with content
    pagination_min_urls: int = 20  # pages past the last needed (judgement)
    pagination_empty_share: float = 0.5  # one size for half the pages = the empty page (judgement)
    pagination_max_human_share: float = 0.05  # humans (almost) never go past the last page (judgement)

    # soft_404: 200 answers with the error page's size, or one page for any value of a route
    soft_404_min_urls: int = 20  # distinct URLs answered so (judgement)
    soft_404_min_share: float = 0.9  # of the pattern's 200 URLs share the one size (judgement)
    soft_404_size_tolerance: int = 64  # bytes either side of the host's 404 page size within which 200 sizes are compared: error-sized ones (within one_page_bytes) must stand out from the rest (judgement)
    soft_404_min_contrast: float = 3.0  # error-sized 200s this many times as dense as sizes beside them (judgement)
    soft_404_max_human_share: float = 0.05  # pages people read are not error pages (judgement)

    # relative_loop: a path segment repeated by relative links nesting deeper
    relative_loop_min_repeats: int = 3  # the same segment three times in one path (judgement)
    relative_loop_min_urls: int = 10  # distinct looping URLs needed (judgement)

    # random_token: a segment of random values, each seen about once, by bots
    random_token_min_urls: int = 50  # distinct tokens needed (judgement)
    random_token_max_requests_per_url: float = 1.5  # "each seen about once" (judgement)
    random_token_min_bot_share: float = 0.9  # "almost only by bots" (judgement)
    random_token_min_urls_per_size: float = 2.0  # tokens repeat one answer; real ids differ (judgement)

    # internal_search: search result pages fetched by bots
    internal_search_min_bot_requests: int = 20  # a handful of fetches is no waste (judgement)
    internal_search_min_urls: int = 10  # distinct searches needed (judgement)
    internal_search_max_revisits: float = 3.0  # crawlers fetching each URL more often than this, with people making internal_search_page_human_share of the requests to the URLs they fetch: a fixed set of pages (a portal's /search?city=&type= landing pages, a glossary's ?term=), not endless results (judgement)
    internal_search_page_human_share: float = 0.1  # ...see internal_search_max_revisits (judgement)

    # one page: a page answered many times shows as sizes gathered in a cluster
    one_page_bytes: int = 8  # a cluster reaches this far either side: a CSRF token or nonce, compressed, spreads one page over a dozen bytes (judgement)
    one_page_flank_bytes: int = 64  # ...and stands out among the sizes this far either side (judgement)
    one_page_contrast: float = 3.0  # ...as this many times as dense as those sizes: a catalog's pages spread over hundreds of bytes never are (judgement)

    # shell: sizes shared by this many patterns of pages people read are a single-page app's shell, not evidence
    shell_min_patterns: int = 3  # patterns whose pages share the shell size, one at least without a query: distinct pages of a classic site practically never share an exact size (judgement)
    # budget_hog: one wasteful-looking pattern takes most of a host's bot fetches
    budget_hog_share: float = 0.5  # half of a host's bot fetches: the sources' alert rule
    budget_hog_critical_share: float = 0.8  # four fetches in five: the budget is gone (judgement)
    budget_hog_min_bot_requests: int = 200  # host bot requests below this say nothing (judgement)
    budget_hog_min_urls: int = 10  # distinct URLs: a trap is a URL space; one URL fetched over and over (an uptime monitor's /health, a feed) is a rate, not a trap (judgement)
    budget_hog_urls_per_size: float = 2.0  # sampled 200-URLs per distinct size: most repeat a response (judgement)
    budget_hog_repeated_max_human_share: float = 0.1  # ...where people make at most this share of the pattern's requests: a route people read a tenth of the time, every URL one answer, is an app's (its shell on too few patterns to be found site-wide) (judgement)
    budget_hog_error_share: float = 0.5  # most fetches answered with a redirect or error (judgement)
    budget_hog_max_human_share: float = 0.01  # humans practically never go there (judgement)
    budget_hog_min_human_requests: int = 100  # ...on a host humans do use (judgement)
    # ...unless its URLs are each a page of their own: at most this many sampled 200-URLs per
    # distinct size (a B2B catalog people rarely open, an image library an image bot crawls:
    # 1.0-1.08 measured; a trap's repeated page is 2 or more) (judgement)
    budget_hog_distinct_urls_per_size: float = 1.1

    # growing_pattern: distinct URLs (or patterns) still growing in the last windows
    growing_pattern_windows: int = 3  # last (and first) windows compared (judgement)
    growing_pattern_min_windows: int = 4  # fewer windows cannot show a trend (judgement)
    growing_pattern_min_ratio: float = 0.5  # late growth at least half the early growth: no convergence (judgement)
    growing_pattern_min_new_urls: int = 30  # new URLs over the last windows; a handful is a live site (judgement)
    growing_pattern_min_novelty: float = 0.5  # most late requests go to URLs never seen before (judgement)
    growing_pattern_min_urls_per_size: float = 1.5  # URLs answered 200 per distinct size: repeated content; a catalog's pages have a size each (judgement)
    growing_pattern_min_new_patterns: int = 5  # new patterns over the last windows, host level (judgement)
    growing_pattern_min_coverage: float = 0.5  # edge windows the logs cover less than half of are left out (judgement)

    # site-wide parameters: one query parameter causing the traps of many patterns of a host is one finding, with one robots.txt rule for the whole site
    site_param_min_paths: int = 5  # distinct paths the parameter must cause a trap on: a listing, its pages and a sort make two or three patterns of one template; five are the parameter appended across the site's templates (judgement)
    site_param_min_human_requests: int = 100  # people's requests the host needs before "no person reads a page through the parameter" says anything (as budget_hog_min_human_requests; judgement)

    # crowds: an HTTP library, unnamed agent or link previewer sent from many addresses
    crowd_min_addresses: int = 500  # this many addresses are many people's app, not one crawler: a shop's Android app sends okhttp from every phone, while a crawler's fleet, even a large one, has a name (judgement)
    crowd_max_address_share: float = 0.05  # ...as long as no one address sends more than this share of the requests: one scraper among the scripts of its library is no crowd (judgement)
    crowd_review_addresses: int = 50  # below a crowd, a server rule against such an agent sent from this many addresses is withheld: it may be a small app's users (judgement)

    # aggressive_bot: one bot far faster than the rest, on a few routes
    aggressive_bot_min_requests: int = 100  # fewer requests are no load (judgement)
    aggressive_bot_min_share: float = 0.2  # a fifth of the host's bot requests (judgement)
    aggressive_bot_min_peak: int = 30  # requests per minute: one every two seconds (judgement)
    aggressive_bot_peak_ratio: float = 5.0  # peak rate vs the median other bot's peak (judgement)
    # Requests of the host's other bots: "far above the rest" needs a rest to compare with
    # (a vhost only a local health check fetches, and two stray bot requests, has none) (judgement)
    aggressive_bot_min_other_requests: int = 100
    aggressive_bot_max_routes: int = 5  # "a few routes" (judgement)
    aggressive_bot_route_share: float = 0.8  # share of its requests those routes must hold (judgement)
    aggressive_bot_critical_share: float = 0.5  # half of all bot requests from one bot (judgement)

    # fake_bot: addresses claiming a search engine that failed verification
    fake_bot_min_requests: int = 1  # a failed verification is definite: any request counts (judgement)
    # addresses listed in evidence, which the server rules deny and cron remembers (one left
    # out would get past the rule, and churn in and out of the list): reports show eight
    # (judgement: a scraper pool rarely passes it; the count is always given)
    fake_bot_max_addresses: int = 200
    fake_bot_critical_requests: int = 1000  # a scraper at scale, not a stray (judgement)

    def __post_init__(self) -> None:
        """Every number is finite and not negative; sizes and counts 0 would break are at
        least 1, and the DNS timeout is above 0.

        >>> Settings(analysis_rows=0)
        Traceback (most recent call last):
        ...
        logtrap.errors.ConfigError: analysis_rows must be at least 1, not 0
        >>> Settings(tracking_params=["ref", ""])
        Traceback (most recent call last):
        ...
        logtrap.errors.ConfigError: tracking_params: '' is not a query parameter name (a name is text, not empty, with no '&' or '=')
        >>> Settings(hosts="Example.com:443", robots="robots.txt").hosts
        ('example.com',)
        """
        # What a notebook naturally writes: one name or path where several may go
        # (`hosts="example.com"` was read letter by letter), a str where a Path is asked.
        for name in _MANY:
            value = getattr(self, name)
            one = isinstance(value, (str, Path))
            object.__setattr__(self, name, (value,) if one else tuple(value))
        object.__setattr__(self, "sitemaps", tuple(Path(p) for p in self.sitemaps))
        if isinstance(self.robots, str):
            object.__setattr__(self, "robots", Path(self.robots))
        # parameter names as a query holds them: split on "&", the value after "="
        for name in ("session_params", "tracking_params"):
            for param in getattr(self, name):
                if not isinstance(param, str) or not param or "&" in param or "=" in param:
                    raise ConfigError(f"{name}: {param!r} is not a query parameter name (a name "
                                      "is text, not empty, with no '&' or '=')",
                                      hint=f"for ?ref=x, the name is ref: {name} = [\"ref\"]")
        # address ranges as `ipaddress` writes them ("173.245.48.0/20"); a bare address is one
        trusted = []
        for rng in self.trusted_proxies:
            try:
                trusted.append(str(ipaddress.ip_network(str(rng).strip(), strict=False)))
            except ValueError:
                raise ConfigError(f"trusted_proxies: {rng!r} is not an address range",
                                  hint='write it as a CIDR range: trusted_proxies = ["173.245.48.0/20"]') from None
        object.__setattr__(self, "trusted_proxies", tuple(trusted))
        # hosts as the reader leaves them: lower case, no port ("Example.com:443")
        hosts = tuple(re.sub(HOST_PORT, r"\1", h.strip()).lower() for h in self.hosts)
        object.__setattr__(self, "hosts", hosts)
        for f in dataclasses.fields(self):
            value = getattr(self, f.name)
            number = isinstance(f.default, (int, float)) and not isinstance(f.default, bool)
            if number and (isinstance(value, bool) or not isinstance(value, (int, float))):
                raise ConfigError(f"{f.name} must be a number, not {value!r}")
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                continue
            if f.name in _AT_LEAST_ONE and value < 1:
                raise ConfigError(f"{f.name} must be at least 1, not {value!r}")
            if not math.isfinite(value) or value < 0 or (f.name == "dns_timeout" and value == 0):
                what = "above 0" if f.name == "dns_timeout" else "0 or more"
                raise ConfigError(f"{f.name} must be a number {what}, not {value!r}")
            if (f.name.endswith("_share") or f.name in _FRACTIONS) and value > 1:
                raise ConfigError(f"{f.name} is a share, from 0 to 1, not {value!r}",
                                  hint=f"for 20%, --set {f.name}=0.2")

    @classmethod
    def of(cls, settings: object) -> "Settings":
        """What a library call was given as settings: the defaults for None, else a Settings,
        or a TypeError that says what to pass (`analyze(path, "combined")` failed deep inside).

        >>> Settings.of(None) == Settings()
        True
        >>> Settings.of("combined")
        Traceback (most recent call last):
        ...
        TypeError: settings must be a logtrap Settings, not str 'combined': pass Settings(log_format='combined')
        >>> Settings.of("/var/log/nginx/access.log.1")
        Traceback (most recent call last):
        ...
        TypeError: settings must be a logtrap Settings, not str '/var/log/nginx/access.log.1': several logs go in one list, as the first argument: analyze(["access.log", "access.log.1"])
        """
        if settings is None:
            return cls()
        if isinstance(settings, cls):
            return settings
        what = f"{type(settings).__name__} {settings!r}"[:80]
        if isinstance(settings, (str, Path)) and _looks_like_a_log(str(settings)):
            raise TypeError(f"settings must be a logtrap Settings, not {what}: several logs go "
                            "in one list, as the first argument: "
                            "analyze([\"access.log\", \"access.log.1\"])")
        fix = (f"Settings(log_format={settings!r})" if isinstance(settings, str)
               else "Settings(...), or Settings(**d) for a dict" if isinstance(settings, dict)
               else "Settings(...)")
        raise TypeError(f"settings must be a logtrap Settings, not {what}: pass {fix}")

    def replace(self, **changes: object) -> "Settings":
        """A copy with some settings changed.

        >>> Settings().replace(url_sample_size=10).url_sample_size
        10
        """
        return dataclasses.replace(self, **changes)


def _looks_like_a_log(text: str) -> bool:
    """A path or glob rather than a format: a folder, a wildcard, a log's or archive's suffix,
    or a file that exists (no LogFormat has any of these but `%` directives and `$`)."""
    if "%" in text or "$" in text:
        return False
    return ("/" in text or "*" in text or re.search(r"\.(?:log|gz|bz2|[0-9]+)$", text) is not None
            or Path(text).is_file())


class Described(NamedTuple):
    """One setting as `described` gives it."""

    group: str  # the heading it is listed under in this file
    name: str
    default: object
    text: str  # the comment beside it: what it is, and why its default


def described() -> list[Described]:
    """Every setting, in this file's order, with its heading and the comment beside it, read
    from this file so that what `logtrap settings` prints is what the code says.

    A comment block on the lines above a field is its text when the field has no comment of
    its own on its line; otherwise the block heads the fields that follow (`# calendar: ...`).

    >>> [d for d in described() if d.name == "url_sample_size"][0].group
    'URL patterns'
    >>> [d for d in described() if d.name == "calendar_min_years"][0].text
    'dates spanning more than five years (judgement)'
    """
    lines = Path(__file__).read_text(encoding="utf-8").splitlines()
    start = lines.index("class Settings:")
    defaults = {f.name: f.default if f.default is not dataclasses.MISSING else f.default_factory()  # type: ignore[misc]
                for f in dataclasses.fields(Settings)}
    field_rx = re.compile(r"^    (\w+): [^=]+= .+?(?:  # (.*))?$")
    group, block, out = "", [], []
    for line in lines[start + 1:]:
        text = line.strip()
        if text.startswith("def "):
            break
        if text.startswith("# --"):
            group, block = text.strip("# -").split(":")[0].strip(), []
        elif text.startswith("#"):
            block.append(text.lstrip("# ").strip())
        elif not text:
            block = []
        elif (match := field_rx.match(line)) and match.group(1) in defaults:
            name, own = match.group(1), match.group(2)
            if own is not None and block:
                group = " ".join(block)
            out.append(Described(group, name, defaults[name], own or " ".join(block)))
            block = []
    return out

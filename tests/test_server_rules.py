"""server_rules.py: exact LiteSpeed/Apache/nginx text for an aggressive bot, the traffic check
(offending vs other requests, withheld when people or search engines would be hit), hostile
user agents and paths that must never add a directive or widen a rule, and the generated
config run through the real apachectl and nginx (skipped only when the binary is absent)."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings as hsettings, strategies as st

from builders import bots, humans, requests_frame, traffic_of
from logtrap import robots
from logtrap import schema as s
from logtrap import server_rules as sr
from logtrap.detectors.aggressive_bot import route_of

META = {"bot_name": "meta-externalagent", "bot_kind": "ai", "user_agent": "meta-externalagent/1.1"}


def meta_traffic():
    rows = bots(["/asl/1", "/asl/2", "/psl/3"], **META) + bots(["/asl/1"]) + humans(["/asl/1", "/"])
    return traffic_of(requests_frame(rows))


def aggressive():
    return sr.check(sr.rule_for("-", "aggressive_bot", "meta-externalagent", ["/asl/", "/psl/"]), meta_traffic())


def test_litespeed_text_for_an_aggressive_bot():
    assert sr.litespeed([aggressive()]) == """\
# ---- LiteSpeed ----
# [E=blockbot:1] sets LiteSpeed's blockbot variable: LiteSpeed denies the request
# (403) before it reaches the site.
# aggressive_bot: meta-externalagent on /asl/, /psl/ (3 offending requests matched, 0 others)
<IfModule LiteSpeed>
RewriteEngine On
RewriteCond %{HTTP_USER_AGENT} meta-externalagent [NC]
RewriteCond %{REQUEST_URI} ^/(asl|psl)/ [NC]
RewriteRule .* - [E=blockbot:1]
</IfModule>
"""


def test_apache_text_for_an_aggressive_bot_403_and_429():
    text = sr.apache([aggressive()])
    assert text == """\
# ---- Apache (mod_rewrite) ----
# [F] answers 403. Put this in .htaccess or the <VirtualHost>; behind a proxy,
# REMOTE_ADDR is the proxy's address (use mod_remoteip).
<IfModule mod_rewrite.c>
RewriteEngine On
# aggressive_bot: meta-externalagent on /asl/, /psl/ (3 offending requests matched, 0 others)
RewriteCond %{HTTP_USER_AGENT} meta-externalagent [NC]
RewriteCond %{REQUEST_URI} ^/(asl|psl)/ [NC]
RewriteRule .* - [F]
</IfModule>
"""
    assert "RewriteRule .* - [R=429,L]" in sr.apache([aggressive()], status=429)


def test_nginx_text_for_an_aggressive_bot():
    assert sr.nginx_http([aggressive()]) == """\
map $http_user_agent $logtrap_bot {
    default "";
    "~*meta-externalagent" "b1";
}
geo $logtrap_fake_addr {
    default 0;
}
map "$logtrap_bot:$logtrap_fake_addr:$uri" $logtrap_block {
    default 0;
    # aggressive_bot: meta-externalagent on /asl/, /psl/
    "~*^b1:[01]:/(asl|psl)/" 1;
}
"""
    assert sr.nginx_server() == "if ($logtrap_block) {\n    return 403;\n}\n"
    text = sr.nginx([aggressive()])
    assert "part 1: inside http {}" in text and "part 2: inside each server {}" in text


# -- the traffic check -------------------------------------------------------------------------


def test_check_counts_offending_and_other_requests():
    traffic = traffic_of(requests_frame(
        bots(["/asl/1"], bot_name="meta", user_agent="meta/1")
        + bots(["/asl/1", "/asl/2", "/psl/3"], **META)
        + bots(["/asl/1"])))  # fmt: skip
    rule = aggressive()
    assert (rule.status, rule.offending_requests, rule.other_requests) == ("emitted", 3, 0)
    broad = sr.check(sr.rule_for("-", "aggressive_bot", "meta", ["/asl/", "/psl/"]), traffic)
    assert (broad.status, broad.offending_requests, broad.other_requests) == ("emitted", 1, 3)
    assert broad.reason == "its user-agent regex also matches 3 requests of other bots"
    # a rule that matches none of its own bot's requests is wrong, whatever else it matches
    wrong = sr.check(sr.rule_for("-", "aggressive_bot", "agent", ["/asl/"]), traffic)
    assert (wrong.status, wrong.offending_requests, wrong.other_requests) == ("withheld", 0, 2)
    assert wrong.reason == "its regexes match none of agent's logged requests, and 2 of other bots"


def test_a_route_with_matrix_parameters_matches_them():
    # the pattern /img;v keeps the parameter's name; the server sees /img;v=2
    rows = bots(["/img;v=2", "/img;v=3", "/img;v=3"], **META) + bots(["/img"], **META)
    traffic = traffic_of(requests_frame(rows))
    pattern = traffic.patterns.filter(pl.col("pattern").str.contains(";"))["pattern"].item()
    route = pl.select(route_of(pl.lit(pattern))).item()
    assert (pattern, route) == ("/img;v", "/img;")
    rule = sr.check(sr.rule_for("-", "aggressive_bot", "meta-externalagent", [route]), traffic)
    assert (rule.status, rule.offending_requests, rule.route_regex) == ("emitted", 3, r"^/(img\x3b)")
    assert robots.bot_group_rule("-", "meta-externalagent", [route], "aggressive_bot").lines == (
        "Disallow: /img;",)


@pytest.mark.parametrize(
    ("name", "routes", "reason"),
    [
        ("Mozilla", ["/asl/"], "user-agent regex matches browsers"),
        ("Googlebot", ["/asl/"], "would hit a search engine (Googlebot)"),
        ("bot", ["/asl/"], "would hit a search engine"),
        ("meta-externalagent", ["/"], "a route is the whole site (/)"),
        ("meta-externalagent", [], "a route is the whole site (/)"),
        # names logtrap gives agents without a product: `\(unknown\)` matched no request
        ("(unknown)", ["/geoserver/"], "(unknown) names no product in the user agent"),
        ("(empty)", ["/asl/"], "(empty) names no product in the user agent"),
    ],
)
def test_check_withholds_rules_that_hit_people_search_engines_or_the_whole_site(name, routes, reason):
    rule = sr.check(sr.rule_for("-", "aggressive_bot", name, routes), meta_traffic())
    assert rule.status == "withheld" and rule.reason.startswith(reason)


def fake_traffic(verdicts):
    rows = bots(["/a", "/b"], client="203.0.113.7") + bots(["/a"], client="66.249.66.1")
    traffic = traffic_of(requests_frame(rows))
    verdict = pl.col(s.CLIENT).replace_strict(verdicts, default="unverified").alias(s.VERIFIED)
    return traffic.replace(claims=traffic.claims.with_columns(verdict))


def test_fake_bot_rule_by_address_scoped_to_the_claimed_agent():
    traffic = fake_traffic({"203.0.113.7": "fake", "66.249.66.1": "verified"})
    rule = sr.check(sr.rule_for("-", "fake_bot", "Googlebot", addresses=["203.0.113.7", "x.example"]), traffic)
    assert (rule.status, rule.offending_requests, rule.addresses) == ("emitted", 2, ("203.0.113.7",))
    assert rule.reason == "skipped 1 values that are not IP addresses"
    assert sr._conditions(rule, False) == [
        r"RewriteCond %{REMOTE_ADDR} ^(203\.0\.113\.7)$",
        "RewriteCond %{HTTP_USER_AGENT} Googlebot [NC]",
    ]
    wrong = sr.check(sr.rule_for("-", "fake_bot", "Googlebot", addresses=["66.249.66.1"]), traffic)
    assert (wrong.status, wrong.reason) == ("withheld", "would deny 1 request of the verified Googlebot")
    # by address, behind a proxy or CDN, each server must first take the client's address
    # from its header (Apache's mod_remoteip is named in every Apache block)
    assert "(set_real_ip_from <its ranges>; real_ip_header X-Forwarded-For;)" in sr.nginx_http([rule])
    assert '"Use Client IP in Header"' in sr.litespeed([rule])
    by_agent = sr.rule_for("-", "aggressive_bot", "AhrefsBot", ["/calendar/"])
    assert "real_ip" not in sr.nginx_http([by_agent]) and "Client IP" not in sr.litespeed([by_agent])


def test_a_fake_bot_logged_by_a_dual_stack_socket_is_denied_in_both_forms():
    """nginx's geo matches a `::ffff:a.b.c.d` client against IPv4 entries; Apache compares the
    text it logged. The rule names both, and matches the client's requests as logged."""
    rows = bots(["/a", "/b"], client="::ffff:203.0.113.7")
    traffic = traffic_of(requests_frame(rows))
    traffic = traffic.replace(claims=traffic.claims.with_columns(pl.lit("fake").alias(s.VERIFIED)))
    rule = sr.check(sr.rule_for("-", "fake_bot", "Googlebot", addresses=["::ffff:203.0.113.7"]), traffic)
    assert (rule.status, rule.offending_requests) == ("emitted", 2)
    assert rule.addresses == ("203.0.113.7", "::ffff:203.0.113.7")
    assert sr._conditions(rule, False)[0] == r"RewriteCond %{REMOTE_ADDR} ^(203\.0\.113\.7|::ffff:203\.0\.113\.7)$"


def test_many_fake_addresses_are_or_chained():
    addresses = [f"198.51.100.{i}" for i in range(45)]
    conds = sr._conditions(sr.rule_for("-", "fake_bot", "bingbot", addresses=addresses), False)
    assert [c.endswith("[OR]") for c in conds] == [True, True, False, False]


# -- hostile input -----------------------------------------------------------------------------

HOSTILE = st.lists(
    st.sampled_from(list("aZ09-_./ \"'\\\n\r\t$%{}();#|^*+?[]<>=!`é") + ["%{HTTP_HOST}", "\u2028"]),
    min_size=1, max_size=12,
).map("".join)  # fmt: skip


def directives(text: str) -> list[str]:
    return [line for line in text.splitlines() if line.strip() and not line.lstrip().startswith("#")]


def conds_ok(text: str) -> bool:
    """Every RewriteCond has exactly TestString, CondPattern and optional [flags]."""
    for line in directives(text):
        words = line.split()
        if words[0] == "RewriteCond" and not (3 <= len(words) <= 4):
            return False
    return True


# a path never holds a raw "?" (it starts the query) or "#" (the fragment, never sent)
ROUTE = HOSTILE.filter(lambda r: "?" not in r and "#" not in r)


@hsettings(max_examples=200, deadline=None)  # a correctness property; speed is the benchmark's
@given(name=HOSTILE, route=ROUTE)
def test_hostile_agents_and_routes_never_add_a_directive_or_widen_a_rule(name, route):
    rule = sr.rule_for("-", "ignores_robots", name, [f"/{route}/", f"/{route}x"])
    assert rule.status == "emitted"
    lite, apache, http = sr.litespeed([rule]), sr.apache([rule]), sr.nginx_http([rule])
    assert len(directives(lite)) == 6 and len(directives(apache)) == 6
    assert conds_ok(lite) and conds_ok(apache)
    assert len(directives(http)) == 11  # 3 heads, 3 defaults, 2 entries, 3 closers
    for regex in (rule.agent_regex, rule.route_regex):
        assert re.fullmatch(r"[^\s\"';{}#%`<>=!]*", regex) and regex[0] not in "!-<>="
    agent = re.compile(rule.agent_regex, sr.FLAGS)
    assert agent.search(sr._as_matched(name))
    routes = re.compile(rule.route_regex, sr.FLAGS)
    path = sr.decoded_path  # what the server matches: the %-decoded path
    assert routes.search(path(f"/{route}/anything")) and routes.search(path(f"/{route}x"))
    assert not routes.search(path(f"/{route}xy")) and not routes.search("/other")


PIECE = st.sampled_from(["/", "a", "A", "s", "S", "é", "%", "%2F", "%61", "%C3%A9", "%aa", "?", "x", " ",
                         "\u212a", "k"])  # fmt: skip
LOGGED = st.lists(st.lists(PIECE, max_size=8).map(lambda p: "/" + "".join(p)), min_size=1, max_size=8)


@hsettings(max_examples=80, deadline=None)  # each example tallies a traffic: ~20 ms
@given(urls=LOGGED, route=st.sampled_from(["/a/", "/S/", "/k/", "/é/", "/a", "/%2F/", "/s/", "/A%61"]),
       other=st.sampled_from(["/x/", "/ab"]))  # fmt: skip
def test_routed_patterns_as_the_server_decodes_and_folds(urls, route, other):
    """Polars on plain paths, `re` on the others: the patterns a per-URL `re` search finds."""
    traffic = traffic_of(requests_frame(bots(urls)))
    rule = sr.rule_for("-", "ignores_robots", "BadBot", [route, other])
    regex = re.compile(rule.route_regex, sr.FLAGS)
    rows = traffic.urls.select(s.PATTERN, s.URL).rows()
    expected = {p for p, u in rows if regex.search(sr.decoded_path(u))}
    assert set(sr._routed_patterns(rule, traffic)) == expected


# -- the real servers --------------------------------------------------------------------------

APACHE = shutil.which("apachectl") or shutil.which("apache2ctl")
NGINX = shutil.which("nginx")
MODULES = next((p for p in ("/usr/lib/apache2/modules", "/usr/lib64/httpd/modules", "/usr/libexec/apache2")
                if Path(p, "mod_rewrite.so").exists()), None)  # fmt: skip
needs_apache = pytest.mark.skipif(APACHE is None or MODULES is None, reason="apachectl (with mod_rewrite.so) is not installed")
needs_nginx = pytest.mark.skipif(NGINX is None, reason="nginx is not installed")


def apache_ok(rules, tmp: Path) -> subprocess.CompletedProcess:
    (tmp / "docroot").mkdir(exist_ok=True)
    (tmp / "rules.conf").write_text(sr.htaccess(rules))
    # the LiteSpeed blocks' contents too: Apache skips <IfModule LiteSpeed>, so parse them bare
    lite = [line for line in sr.litespeed(rules).splitlines() if "IfModule" not in line]
    (tmp / "lite.conf").write_text("\n".join(lite) + "\n")
    conf = tmp / "httpd.conf"
    conf.write_text(f"""ServerRoot "{tmp}"
ServerName localhost
Listen 127.0.0.1:18080
LoadModule mpm_event_module {MODULES}/mod_mpm_event.so
LoadModule authz_core_module {MODULES}/mod_authz_core.so
LoadModule rewrite_module {MODULES}/mod_rewrite.so
PidFile {tmp}/httpd.pid
ErrorLog {tmp}/error.log
<Directory "{tmp}/docroot">
Include {tmp}/rules.conf
Include {tmp}/lite.conf
</Directory>
""")
    return subprocess.run([APACHE, "-t", "-f", str(conf)], capture_output=True, text=True, timeout=30)


def nginx_ok(rules, tmp: Path, http: str | None = None, server: str | None = None):
    """`nginx -t` on the rules' http and server parts (or on the texts given) in a config."""
    (tmp / "http.conf").write_text(sr.nginx_http(rules) if http is None else http)
    (tmp / "server.conf").write_text(sr.nginx_server() if server is None else server)
    conf = tmp / "nginx.conf"
    conf.write_text(f"""pid {tmp}/nginx.pid;
error_log {tmp}/error.log;
events {{}}
http {{
    access_log off;
    include {tmp}/http.conf;
    server {{
        listen 127.0.0.1:18081;
        include {tmp}/server.conf;
    }}
}}
""")
    return subprocess.run([NGINX, "-t", "-c", str(conf), "-p", str(tmp)], capture_output=True, text=True, timeout=30)


def sample_rules():
    return [
        aggressive(),
        sr.rule_for("-", "fake_bot", "Googlebot",
                    addresses=["203.0.113.7", "2001:db8::1", "::ffff:198.51.100.8"]),
        sr.rule_for("-", "ignores_robots", 'ev"il {x}; #$%{HTTP_HOST}\nbot\\', ["/a b/", "/x$y", "/é/"]),
    ]


@needs_apache
def test_apache_accepts_the_generated_htaccess(tmp_path):
    done = apache_ok(sample_rules(), tmp_path)
    assert done.returncode == 0, done.stderr


@needs_nginx
def test_nginx_accepts_the_generated_snippets(tmp_path):
    done = nginx_ok(sample_rules(), tmp_path)
    assert done.returncode == 0, done.stderr


@needs_nginx
def test_nginx_accepts_the_written_file_inside_http(tmp_path):
    # the --nginx-out file as is inside http {}, and the server line its comment gives
    server = [line.removeprefix("#     ") for line in sr.nginx_conf(sample_rules()).splitlines()
              if line.startswith("#     ")]
    assert server == ["if ($logtrap_block) {", "    return 403;", "}"]
    done = nginx_ok([], tmp_path, http=sr.nginx_conf(sample_rules()), server="\n".join(server))
    assert done.returncode == 0, done.stderr


@needs_apache
@needs_nginx
def test_servers_accept_routes_with_any_segment(tmp_path):
    # a site under one folder: the bot is kept off `/cgit/*/tree/`, one level in
    rules = [sr.rule_for("-", "aggressive_bot", "Bytespider", ["/cgit/*/tree/", "/cgit/*/blame/"])]
    assert "RewriteCond %{REQUEST_URI} ^/(cgit/[^/]+/tree|cgit/[^/]+/blame)/ [NC]" in sr.apache(rules)
    done = apache_ok(rules, tmp_path)
    assert done.returncode == 0, done.stderr
    done = nginx_ok(rules, tmp_path)
    assert done.returncode == 0, done.stderr


@needs_apache
@needs_nginx
@hsettings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(name=HOSTILE, route=HOSTILE)
def test_servers_accept_rules_for_hostile_agents_and_routes(tmp_path, name, route):
    rules = [sr.rule_for("-", "ignores_robots", name, [f"/{route}/", f"/{route}x"]),
             sr.rule_for("shop.example", "aggressive_bot", name, ["/asl/"])]  # fmt: skip
    done = apache_ok(rules, tmp_path)
    assert done.returncode == 0, done.stderr
    done = nginx_ok(rules, tmp_path)
    assert done.returncode == 0, done.stderr


def test_the_htaccess_header_names_a_code_hosts_crawl_only_where_a_rule_is_about_one():
    bot = [sr.rule_for("-", "aggressive_bot", "Bytespider", ["/asl/"])]
    code = [*bot, sr.rule_for("-", "budget_hog", "ClaudeBot", ["/*/*/-/tree/{commit}/"])]
    heads = [[line for line in sr.htaccess(rules).splitlines()[:4] if line.startswith("# ")]
             for rules in (bot, code)]
    assert heads[0][1:] == ["# refuse the requests of bots that ignore it or hammer a few routes, scoped by user agent",
                            "# AND path (fake search bots: by the addresses that failed verification)."]
    assert heads[1][1] == "# refuse the requests of bots that ignore it, hammer a few routes or crawl a code host's"

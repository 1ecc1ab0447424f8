"""How well logtrap.bots tells crawlers from browsers, and how fast, on real user-agent lists.

    python benchmarks/bots_accuracy.py

Lists (each deduplicated; every figure is per distinct user agent):

- crawlers, crawler-user-agents "instances": real UAs the maintained list ships with each
  pattern. In-sample for the list's own patterns, so the baselines below are printed too.
- crawlers and browsers, the real corpus (/work/shared/corpus/real/, the four logs with a UA
  field), frozen with hand-checked labels in tests/data/real_user_agents.jsonl: "bot",
  "browser", or "unclear" (app HTTP stacks such as Dalvik/CFNetwork, in-app clients, truncated
  UAs -- left out of both rates).
- browsers, fake-useragent's browsers.jsonl (a real-world browser UA database; optional: the
  package is only needed for this script) and the browser UAs in user-agents' own tests.

Speed: microseconds per distinct UA (best of 5), and the cost of add_bots on 1,000,000 lines with
10,000 distinct UAs.
"""

from __future__ import annotations

import json
import re
import time
from importlib import resources
from pathlib import Path

import polars as pl

from logtrap.bots import add_bots, classify_agents
from logtrap.schema import IS_BOT, USER_AGENT

HERE = Path(__file__).parent


def crawler_instances() -> list[str]:
    import crawleruseragents

    return sorted({i for e in crawleruseragents.CRAWLER_USER_AGENTS_DATA for i in e.get("instances", [])})


def corpus(label: str) -> list[str]:
    rows = [json.loads(line) for line in (HERE.parent / "tests" / "data" / "real_user_agents.jsonl").open(encoding="utf-8")]
    return sorted({r["user_agent"] for r in rows if r["label"] == label})


def fake_useragent_browsers() -> list[str]:
    try:
        path = resources.files("fake_useragent") / "data" / "browsers.jsonl"
        lines = path.read_text(encoding="utf-8").splitlines()
    except (ModuleNotFoundError, FileNotFoundError):
        return []
    return sorted({json.loads(line)["useragent"] for line in lines if line.strip()})


def user_agents_test_browsers() -> list[str]:
    # Read as text: importing user_agents.tests needs a devices.json the wheel does not ship.
    source = (resources.files("user_agents") / "tests.py").read_text(encoding="utf-8")
    found = re.findall(r"^(\w+)_(?:ua|usa)_string = '([^']+)'", source, flags=re.M)
    return sorted({ua for name, ua in found if "bot" not in name})


def rate(flags: pl.Series) -> str:
    n = flags.len()
    return f"{int(flags.sum()):>5}/{n:<5} = {100 * flags.sum() / n:6.2f}%" if n else "  (empty list)"


def logtrap_flags(agents: list[str]) -> pl.Series:
    table = classify_agents(pl.Series(USER_AGENT, agents, pl.String))
    return pl.DataFrame({USER_AGENT: agents}).join(table, on=USER_AGENT, how="left")[IS_BOT]


def baseline_flags(agents: list[str]) -> dict[str, pl.Series]:
    import crawleruseragents
    import user_agents

    ua = pl.Series([user_agents.parse(a).is_bot for a in agents], dtype=pl.Boolean)
    cua = pl.Series([crawleruseragents.is_crawler(a) for a in agents], dtype=pl.Boolean)
    return {"user-agents is_bot": ua, "crawler-user-agents": cua, "either of the two": ua | cua}


def main() -> None:
    crawlers = {
        "crawler-user-agents instances": crawler_instances(),
        "real corpus, hand-labelled bots": corpus("bot"),
    }
    browsers = {
        "real corpus, hand-labelled browsers": corpus("browser"),
        "fake-useragent browsers.jsonl": fake_useragent_browsers(),
        "user-agents test browsers": user_agents_test_browsers(),
    }
    print("crawlers recognised (is_bot true)")
    for name, agents in crawlers.items():
        print(f"  {name:38} logtrap {rate(logtrap_flags(agents))}")
        for base, flags in baseline_flags(agents).items():
            print(f"  {'':38} {base:20} {rate(flags)}")
    all_crawlers = sorted({a for v in crawlers.values() for a in v})
    print(f"  {'all crawler lists':38} logtrap {rate(logtrap_flags(all_crawlers))}")

    print("browsers wrongly called bots")
    for name, agents in browsers.items():
        flags = logtrap_flags(agents)
        print(f"  {name:38} logtrap {rate(flags)}")
        for agent, flag in zip(agents, flags):
            if flag:
                print(f"      called a bot: {agent[:150]}")
    all_browsers = sorted({a for v in browsers.values() for a in v})
    print(f"  {'all browser lists':38} logtrap {rate(logtrap_flags(all_browsers))}")

    everything = pl.Series(USER_AGENT, sorted(set(all_crawlers) | set(all_browsers)), pl.String)
    classify_agents(everything.head(10))  # load the pattern lists once, outside the timing
    best = min(_timed(lambda: classify_agents(everything)) for _ in range(5))
    print(f"speed: {1e6 * best / everything.len():.1f} us per distinct UA ({everything.len()} UAs, best of 5)")

    agents = (everything.to_list() * (10_000 // everything.len() + 1))[:10_000]
    agents = [f"{a} r{i // everything.len()}" if i >= everything.len() else a for i, a in enumerate(agents)]
    lines = pl.DataFrame({USER_AGENT: agents}).sample(1_000_000, with_replacement=True, seed=1)
    lines = lines.with_columns(n=pl.int_range(pl.len()))
    t_bots = min(_timed(lambda: add_bots(lines)) for _ in range(3))
    t_scan = min(_timed(lambda: lines.group_by(USER_AGENT).len()) for _ in range(3))
    print(
        f"add_bots on 1,000,000 lines / 10,000 distinct UAs: {t_bots:.3f} s "
        f"(a bare group_by on the same column: {t_scan:.3f} s)"
    )


def _timed(fn) -> float:  # type: ignore[no-untyped-def]
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


if __name__ == "__main__":
    main()

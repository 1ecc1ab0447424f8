"""Builders for code hosts crawled at every commit, and sites shaped like them that are not.

Not a test file: test_family.py imports it. Each builder returns request rows for
`builders.requests_frame`; `log_text` writes rows as a combined-format log for the CLI.

Code hosts whose first path segment is an owner (a user or a group), the commit a path
segment after the repository and its view:

- Gitea / Forgejo: `/{owner}/{repo}/src/commit/{sha}/{file}`, `/blame/commit/...`,
  `/raw/commit/...`; people read the branch head (`/src/branch/main/{file}`) and commits
  (`/{owner}/{repo}/commit/{sha}`, a page apiece);
- GitHub-like: `/{owner}/{repo}/blob/{sha}/{file}`, `/tree/{sha}/{dir}`; people read
  `/blob/main/{file}`, `/tree/main/{dir}`;
- SourceHut: `/~{owner}/{repo}/tree/{sha}/item/{file}`, `/log/{sha}/item/{file}`; people
  read `/tree/main/item/{file}`;
- GitLab: `/{group}/{project}/-/tree/{sha}/{file}`, `/-/blob/...`, `/-/blame/...`; people
  read `/-/tree/main/{file}`, `/-/blob/main/{file}`.

The crawl fetches every view of every file at every commit; a file's bytes change every
ten commits (the same file at commits 0-9 answers the same page).
"""

from __future__ import annotations

import hashlib
from datetime import timedelta
from typing import Any

from logtrap import schema as s
from builders import START

AI = {s.IS_BOT: True, s.BOT_NAME: "ClaudeBot", s.BOT_KIND: "ai",
      s.USER_AGENT: "Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; ClaudeBot/1.0; +claudebot@anthropic.com)"}  # fmt: skip
GOOGLE = {s.IS_BOT: True, s.BOT_NAME: "Googlebot", s.BOT_KIND: "search",
          s.USER_AGENT: "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)"}  # fmt: skip
PERSON = {s.IS_BOT: False, s.BOT_NAME: None, s.BOT_KIND: None,
          s.USER_AGENT: "Mozilla/5.0 (X11; Linux x86_64; rv:125.0) Gecko/20100101 Firefox/125.0"}  # fmt: skip

OWNERS = ["alice", "bob", "carol", "dave"]
REPOS = ["website", "tools"]
FILES = ["README.md", "Makefile", "main.go", "LICENSE"]
COMMITS = 20

# view -> (the crawl's URL at a commit, people's URL at the branch head), by host kind
GITEA = {
    "src": ("/{o}/{r}/src/commit/{c}/{f}", "/{o}/{r}/src/branch/main/{f}"),
    "blame": ("/{o}/{r}/blame/commit/{c}/{f}", "/{o}/{r}/blame/branch/main/{f}"),
    "raw": ("/{o}/{r}/raw/commit/{c}/{f}", "/{o}/{r}/raw/branch/main/{f}"),
}
GITHUB = {
    "blob": ("/{o}/{r}/blob/{c}/{f}", "/{o}/{r}/blob/main/{f}"),
    "blame": ("/{o}/{r}/blame/{c}/{f}", "/{o}/{r}/blame/main/{f}"),
    "raw": ("/{o}/{r}/raw/{c}/{f}", "/{o}/{r}/raw/main/{f}"),
}
SOURCEHUT = {
    "tree": ("/~{o}/{r}/tree/{c}/item/{f}", "/~{o}/{r}/tree/main/item/{f}"),
    "log": ("/~{o}/{r}/log/{c}/item/{f}", "/~{o}/{r}/log/main/item/{f}"),
    "blob": ("/~{o}/{r}/blob/{c}/{f}", "/~{o}/{r}/blob/main/{f}"),
}
GITLAB = {
    "tree": ("/{o}/{r}/-/tree/{c}/{f}", "/{o}/{r}/-/tree/main/{f}"),
    "blob": ("/{o}/{r}/-/blob/{c}/{f}", "/{o}/{r}/-/blob/main/{f}"),
    "blame": ("/{o}/{r}/-/blame/{c}/{f}", "/{o}/{r}/-/blame/main/{f}"),
}
HOSTS = {"gitea": GITEA, "github": GITHUB, "sourcehut": SOURCEHUT, "gitlab": GITLAB}


def sha(*parts: object) -> str:
    return hashlib.sha1("/".join(map(str, parts)).encode()).hexdigest()


def _size(*parts: object) -> int:
    return 6000 + int(sha(*parts)[:4], 16) % 20000


def crawl(kind: str, owners: list[str] = OWNERS, commits: int = COMMITS) -> list[dict[str, Any]]:
    """ClaudeBot fetching every view of every file of every repository at every commit."""
    views = HOSTS[kind]
    return [
        {**AI, s.URL: at.format(o=o, r=r, c=sha(o, r, c), f=f), s.BYTES: _size(o, r, view, f, c // 10)}
        for o in owners for r in REPOS for view, (at, _) in views.items() for f in FILES
        for c in range(commits)
    ]  # fmt: skip


def pages(kind: str, owners: list[str] = OWNERS) -> list[str]:
    """What people read: each repository's home, its files at the branch head, its commits."""
    views = HOSTS[kind]
    tilde = "~" if kind == "sourcehut" else ""
    dash = "/-" if kind == "gitlab" else ""
    out = [f"/{tilde}{o}/{r}" for o in owners for r in REPOS]
    out += [head.format(o=o, r=r, f=f) for o in owners for r in REPOS
            for _, head in views.values() for f in FILES]  # fmt: skip
    out += [f"/{tilde}{o}/{r}{dash}/commit/{sha(o, r, c)}" for o in owners for r in REPOS for c in range(5)]
    return out


def read(urls: list[str], times: int = 3) -> list[dict[str, Any]]:
    """People reading each page `times` times and Googlebot once, a size per page."""
    sized = [{s.URL: u, s.BYTES: 9000 + 13 * i} for i, u in enumerate(urls)]
    return [{**r, **PERSON} for r in sized] * times + [{**r, **GOOGLE} for r in sized]


def site(kind: str, owners: list[str] = OWNERS) -> list[dict[str, Any]]:
    """A code host crawled at every commit, with the pages people read."""
    return crawl(kind, owners) + read(pages(kind, owners))


# -- sites shaped like a code host that are not ------------------------------------------------

CATEGORIES = ["shoes", "bags", "shirts", "hats", "belts"]
BRANDS = ["acme", "zenith", "orbit"]
MODELS = ["runner", "walker", "classic", "sport", "trail", "urban", "summit", "coast"]


def shop() -> list[dict[str, Any]]:
    """A shop whose first segment is a category, products named by a MongoDB ObjectId (24 hex
    digits: `/{category}/{brand}/p/{id}/{tab}`, shaped like `/{owner}/{repo}/blob/{sha}/{file}`),
    crawled whole by ClaudeBot: the reviews, questions and offers tabs of most products are empty
    (one page each), the specs a page apiece; people read the products. No commit id anywhere."""
    rows = []
    people = []
    for i, (c, b, m) in enumerate((c, b, m) for c in CATEGORIES for b in BRANDS for m in MODELS):
        for colour in range(8):  # a product per colour
            base = f"/{c}/{b}/p/{sha(c, b, m, colour)[:24]}"
            rows += [{**AI, s.URL: f"{base}/reviews", s.BYTES: 5120},
                     {**AI, s.URL: f"{base}/questions", s.BYTES: 4980},
                     {**AI, s.URL: f"{base}/offers", s.BYTES: 3300},
                     {**AI, s.URL: f"{base}/specs", s.BYTES: 11000 + 43 * i + colour}]  # fmt: skip
            people.append(base)
    return rows + read(people)


AUTHORS = ["anna", "ben", "chloe", "dan"]


def blog() -> list[dict[str, Any]]:
    """A blog whose first segment is its author, each comment a permalink of 16 hex digits that
    shows the post again (`/{author}/2024/05/{slug}/comment/{id}`, shaped like a code host's
    view at a commit), crawled by ClaudeBot; people read the posts. No commit id anywhere."""
    rows = []
    people = []
    for a in AUTHORS:
        for month in range(1, 13):
            for n in range(3):
                post = f"/{a}/2024/{month:02d}/notes-on-part-{n}"
                people.append(post)
                rows += [{**AI, s.URL: f"{post}/comment/{sha(post, k)[:16]}", s.BYTES: _size(post)}
                         for k in range(10)]  # fmt: skip
    return rows + read(people)


def sections_with_ids() -> list[dict[str, Any]]:
    """Two unrelated sections, each pinning pages to a build's commit, each under half the
    bot fetches, more than half together: CI logs (`/builds/{project}/artifacts/{sha}/{file}`)
    and versioned docs (`/docs/{product}/pages/{sha}/{page}`). No view is shared between
    them: two sections, not one host's owners."""
    rows = []
    for section, view, names in (("builds", "artifacts", ["build.log", "test.log"]),
                                 ("docs", "pages", ["index.html", "api.html"])):  # fmt: skip
        for project in ("api", "web", "cli"):
            for name in names:
                for c in range(60):
                    rows.append({**AI, s.URL: f"/{section}/{project}/{view}/{sha(section, project, c)}/{name}",
                                 s.BYTES: _size(section, project, name, c // 10)})  # fmt: skip
    return rows + read([f"/{x}/{p}" for x in ("builds", "docs") for p in ("api", "web", "cli")])


# -- a log file --------------------------------------------------------------------------------


def log_text(rows: list[dict[str, Any]]) -> str:
    """The rows as an Apache combined log, a second apart from `builders.START`."""
    lines = []
    for i, r in enumerate(rows):
        when = (START + timedelta(seconds=i)).strftime("%d/%b/%Y:%H:%M:%S +0000")
        agent = r.get(s.USER_AGENT) or PERSON[s.USER_AGENT]
        client = "198.51.100.7" if r.get(s.IS_BOT) else f"192.0.2.{1 + i % 50}"
        lines.append(f'{client} - - [{when}] "GET {r[s.URL]} HTTP/1.1" {r.get(s.STATUS, 200)} '
                     f'{r.get(s.BYTES, 1000)} "-" "{agent}"')  # fmt: skip
    return "\n".join(lines) + "\n"

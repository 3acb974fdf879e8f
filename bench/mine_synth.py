"""Synthetic prompt sets with planted recurring tasks, for bench/mine.py.

Written apart from the tests' hand-labelled corpus (tests/sleep/mine_corpus.py),
with other tasks and words, so that a method tuned on one is checked on the other.

A *family* is one recurring task: paraphrase templates with slots (file, table,
column, route, branch, version, package, issue number) that change from one
occurrence to the next, and the shell commands and files its turns show. Families
come in near-miss pairs whose templates share their skeleton but differ in the
key words, as in the issue's examples ("run the unit tests and list the failures"
vs "run the linter and list the failures"; an "add a column" vs a "drop a table"
migration): a swapped object or verb with other commands, or two swapped words
with the same commands. Each project draws a set of
families; every member is the first prompt of its own session, reworded (polite
or terse prefix and suffix, typos, now and then another language) and sometimes
followed by noise or feedback turns. One-offs are composed from a large
vocabulary so that two of them rarely say the same thing.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone

from sleep.feedback import classify_feedback
from sleep.sessions import Feedback, Session

BASE = datetime(2025, 1, 6, 9, 0, tzinfo=timezone.utc)
HOSTS = ("claude-code", "codex", "copilot-vscode", "copilot-cli")


@dataclass(frozen=True)
class Family:
    key: str
    shell: tuple[str, ...]
    files: tuple[str, ...]
    templates: tuple[str, ...]


def F(key: str, shell: str, files: str, *templates: str) -> Family:
    return Family(key, tuple(s for s in shell.split(";") if s), tuple(f for f in files.split(";") if f), templates)


FAMILIES: list[Family] = [
    F("p1a-tests", "pytest -q", "",
      "run the test suite and list the failing tests", "run the tests, then list which tests fail",
      "run all the tests and give me the list of failing ones", "~lance la suite de tests et liste les tests en échec"),
    F("p1b-types", "mypy", "",
      "run the type checker and list the type errors", "run mypy, then list which type errors we have",
      "run the type checker on everything and give me the list of errors"),
    F("p2a-add-endpoint", "pytest -q", "api/routes/{m}.py;tests/api/test_{m}.py",
      "add a GET endpoint {route} that returns the {t} list", "add a new GET {route} endpoint returning the list of {t}",
      "GET {route} endpoint: add it, it returns the {t} list"),
    F("p2b-remove-endpoint", "pytest -q", "api/routes/{m}.py",
      "remove the deprecated GET endpoint {route}", "remove the old deprecated {route} endpoint and its tests",
      "deprecated GET {route} endpoint: remove it"),
    F("p3a-release", "git tag;git push", "pyproject.toml;CHANGELOG.md",
      "bump the version to {v}, update the changelog and tag the release",
      "tag the {v} release after bumping the version and updating the changelog",
      "release {v}: bump version, changelog, tag"),
    F("p3b-notes", "git log", "docs/release-notes.md",
      "write the release notes for {v} from the merged pull requests",
      "from the merged pull requests, write release notes for {v}", "release notes for {v} from merged PRs"),
    F("p4a-docker-push", "docker build;docker push", "Dockerfile",
      "build the {m} docker image and push it to the registry", "push the {m} image to the registry after a docker build",
      "docker image for {m}: build and push to registry"),
    F("p4b-compose-up", "docker compose", "docker-compose.yml",
      "start the local stack with docker compose and check that {m} is healthy",
      "check that {m} is healthy after starting the stack locally with docker compose",
      "docker compose local stack up, check {m} healthy"),
    F("p5a-unit-tests", "pytest -q", "tests/test_{m}.py;{f}",
      "write unit tests for {f} covering the edge cases", "cover the edge cases of {f} with unit tests",
      "unit tests for {f}, edge cases included", "~écris des tests unitaires pour {f} avec les cas limites"),
    F("p5b-docstrings", "", "{f}",
      "write docstrings for {f} covering the edge cases", "document the edge cases of {f} in docstrings",
      "docstrings for {f}, edge cases included"),
    F("p6a-rebase", "git fetch;git rebase", "",
      "rebase {b} on the latest main and resolve the conflicts", "resolve the conflicts after rebasing {b} onto main",
      "rebase {b} onto main, fix conflicts"),
    F("p6b-merge", "git fetch;git merge", "",
      "merge the latest main into {b} and resolve the conflicts", "resolve the conflicts after merging main into {b}",
      "merge main into {b}, fix conflicts"),
    F("p7a-index", "alembic revision", "migrations/versions/{h}_index_{c}.py",
      "write an alembic migration that adds an index on {t}.{c}", "add an index on {t}.{c} with a new alembic migration",
      "alembic migration: index on {t} {c}"),
    F("p7b-drop-table", "alembic revision", "migrations/versions/{h}_drop_{t}.py",
      "write an alembic migration that drops the {t} table", "drop the {t} table with a new alembic migration",
      "alembic migration: drop table {t}"),
    F("p8a-profile", "py-spy record", "",
      "profile the {route} endpoint and tell me where the time goes", "tell me where the time goes in {route}, profile it",
      "profile {route}, where does the time go?"),
    F("p8b-cache", "pytest -q", "api/cache.py;api/routes/{m}.py",
      "add caching to the {route} endpoint with a five minute ttl", "cache the {route} endpoint responses for five minutes",
      "{route} endpoint: add a cache, ttl five minutes"),
    F("p9a-fix-flaky", "pytest -k", "tests/test_{m}.py",
      "fix the flaky test in tests/test_{m}.py so it passes reliably", "the flaky test in tests/test_{m}.py: fix it so it is reliable",
      "fix flaky tests/test_{m}.py"),
    F("p9b-skip-flaky", "", "tests/test_{m}.py",
      "skip the flaky test in tests/test_{m}.py with a reason", "the flaky test in tests/test_{m}.py: skip it with a reason",
      "skip flaky tests/test_{m}.py, give a reason"),
    F("p10a-upgrade", "uv lock;pytest -q", "pyproject.toml;uv.lock",
      "upgrade the {p} dependency to its latest version and run the tests", "run the tests after upgrading {p} to the latest version",
      "upgrade {p} to latest + run tests"),
    F("p10b-remove-dep", "uv remove;pytest -q", "pyproject.toml;uv.lock",
      "remove the {p} dependency, we no longer use it, and run the tests", "run the tests after removing the unused {p} dependency",
      "remove unused dependency {p} + run tests"),
    F("p11a-summarise-review", "gh pr view", "",
      "summarise the review comments on PR #{i}", "give me a summary of the review comments on pull request #{i}",
      "review comments on #{i}: summarise them"),
    F("p11b-address-review", "gh pr view;pytest -q", "{f}",
      "address the review comments on PR #{i}", "make the changes the review comments on pull request #{i} ask for",
      "review comments on #{i}: address them"),
    F("s12-coverage", "pytest --cov", "",
      "generate a coverage report and list the least covered modules", "list the least covered modules from a fresh coverage report",
      "coverage report, least covered modules first"),
    F("s13-ci-failure", "gh run view", "",
      "find out why the CI run failed on {b}", "why did the CI run on {b} fail? find out", "CI failed on {b}, find out why"),
    F("s14-sql-report", "psql", "reports/{t}.sql",
      "write a SQL query that reports the monthly totals of {t}", "the monthly totals of {t}: write the SQL query for the report",
      "sql query, monthly {t} totals report"),
    F("s15-protobuf", "buf generate", "proto/{m}.proto",
      "regenerate the protobuf stubs for {m} and fix the imports", "fix the imports after regenerating the {m} protobuf stubs",
      "protobuf stubs for {m}: regenerate, fix imports", "~regenera los stubs de protobuf de {m} y arregla los imports"),
    F("s16-unused-imports", "ruff check", "{f}",
      "remove the unused imports from {f}", "{f} has unused imports, remove them", "unused imports in {f}: remove"),
    F("s17-readme", "", "README.md",
      "document the new --{flag} flag in the README usage section", "the README usage section needs the new --{flag} flag documented",
      "README usage: document --{flag}"),
]

SLOTS = {
    "m": "auth billing orders search users invoices reports shipping catalog inventory payments notifications".split(),
    "t": "orders customers invoices payments shipments products refunds sessions accounts".split(),
    "c": "created_at status email external_id region currency deleted_at owner_id sku".split(),
    "route": "/api/orders /api/users /v2/search /api/invoices /healthz /api/reports /v1/products".split(),
    "b": "feature/login-form fix/tax-rounding feat/search-v2 chore/deps bugfix/null-total feature/exports".split(),
    "v": "1.4.0 2.0.1 0.9.3 3.1.0 1.12.2 2.3.0".split(),
    "p": "requests httpx pydantic sqlalchemy celery boto3 rich attrs".split(),
    "flag": "verbose dry-run json since limit no-color".split(),
}
ONEOFF_VERBS = ("explain why investigate figure out sketch prototype evaluate compare design refactor "
                "simplify rename document describe migrate convert port benchmark audit").split()
ONEOFF_WORDS = ("""
websocket reconnect pagination cursor timezone feature flag retry budget csv importer pdf renderer oauth
callback limiter audit trail email template ranking thumbnail worker webhook signature session store locale
fallback graphql schema cron scheduler uploader reconciliation warmer permission matrix toggle onboarding
wizard sitemap numbering notifier geoip barcode scanner sso spam filter rounding heatmap tooltip carousel
breadcrumb sidebar modal drawer stepper avatar badge skeleton spinner banner footer header navbar dropdown
autocomplete datepicker slider accordion tabs pager kanban calendar chart legend gauge sparkline treemap
parser lexer tokenizer serializer validator normalizer formatter exporter crawler scraper indexer ranker
sampler batcher debouncer throttler dispatcher router resolver loader bundler minifier linker compiler
allocator arena pool mutex semaphore channel queue stack heap trie bloom sketch hyperloglog reservoir
snapshot checkpoint journal ledger invoice receipt voucher coupon discount refund chargeback payout
subscription trial seat quota tenant workspace organization invitation membership role policy grant token
certificate keystore secret vault enclave sandbox container namespace volume mount probe sidecar mesh
gateway ingress proxy balancer resolver dns cdn edge origin cache eviction shard replica partition
compaction vacuum migration seed fixture factory mock stub spy fake harness benchmark profiler tracer
metric counter histogram span exemplar alert pager runbook dashboard panel widget report digest
""".split())
ONEOFF_ADJ = ("legacy new flaky slow nested async cached encrypted shared internal experimental public "
              "regional batch realtime offline partial archived localized mobile").split()
PREFIX = ["", "", "", "please ", "can you ", "hey, ", "pls ", "could you ", "ok now ", "quick one: "]
SUFFIX = ["", "", "", " thanks", " please", "!", " asap", " when you get a chance", "?", " ty"]
NOISE = [("ok", "acknowledgement"), ("continue", "acknowledgement"), ("yes go ahead", "acknowledgement"),
         ("/clear", "slash_command"), ("/compact", "slash_command"),
         ("Traceback (most recent call last):\n  File \"app/x.py\", line 3, in run\nKeyError: 'id'\n", "pasted_output"),
         ("perfect, thanks", "feedback"), ("no, use uv instead of pip", "feedback")]


@dataclass
class Synth:
    sessions: list[Session]
    labels: dict[tuple[str, str, int], str]
    near_miss_pairs: set[frozenset[str]]


def _typo(word: str, r: random.Random) -> str:
    if len(word) < 5 or not word.isalpha():
        return word
    k = r.randrange(1, len(word) - 1)
    return word[:k] + word[k + 1] + word[k] + word[k + 2:] if r.random() < 0.5 else word[:k] + word[k + 1:]


def _fill(template: str, r: random.Random) -> str:
    values = {k: r.choice(v) for k, v in SLOTS.items()}
    values["f"] = f"{r.choice(['app', 'src', 'lib'])}/{values['m']}/{r.choice(['service', 'models', 'utils', 'api'])}.py"
    values["i"] = str(r.randrange(10, 4000))
    values["h"] = "%04x" % r.randrange(1 << 16)
    return template.format(**values)


_TERSE_DROP = {"the", "a", "an", "that", "it", "to", "please", "with"}


def _template(fam: Family, r: random.Random) -> str:
    """A family's own-language templates; another language (marked ``~``) one time in twenty."""
    native = [t for t in fam.templates if not t.startswith("~")]
    other = [t[1:] for t in fam.templates if t.startswith("~")]
    return r.choice(other) if other and r.random() < 0.05 else r.choice(native)


def _reword(text: str, r: random.Random) -> str:
    if r.random() < 0.3:
        text = " ".join(w for w in text.split(" ") if w.lower() not in _TERSE_DROP)
    text = r.choice(PREFIX) + text + r.choice(SUFFIX)
    if r.random() < 0.25:
        ws = text.split(" ")
        k = r.randrange(len(ws))
        ws[k] = _typo(ws[k], r)
        text = " ".join(ws)
    if r.random() < 0.15:
        text = text[:1].upper() + text[1:]
    return text


def _at(day: float) -> str:
    t = BASE + timedelta(days=day)
    return t.strftime("%Y-%m-%dT%H:%M:%S.") + f"{t.microsecond // 1000:03d}Z"


def _turn(s: Session, text: str, day: float, shell: list[str], files: list[str], final: str) -> int:
    follows = bool(s.prompts) and s.finals[-1] is not None
    idx = s.add_prompt(text, _at(day))
    kind = classify_feedback(text, follows_agent_turn=follows)
    if kind:
        s.feedback.append(Feedback(kind, text, _at(day), idx))
    for sig in shell:
        s.add_shell(sig)
    for f in files:
        s.add_file(f)
    s.set_final(final)
    s.note_time(_at(day + 0.001))
    return idx


def generate(n_prompts: int, seed: int = 7, families_per_project: int = 18,
             recurring_share: float = 0.55, noise_share: float = 0.15) -> Synth:
    """About ``n_prompts`` prompts over ``max(1, n/2500)`` projects, one of them holding a quarter."""
    r = random.Random(seed)
    n_projects = max(1, n_prompts // 2500)
    weights = [0.25 if p == 0 and n_projects > 1 else 0.75 / max(1, n_projects - 1) for p in range(n_projects)]
    if n_projects == 1:
        weights = [1.0]
    pairs = {frozenset((a.key, b.key)) for a, b in zip(FAMILIES[:22:2], FAMILIES[1:22:2])}
    sessions: list[Session] = []
    labels: dict[tuple[str, str, int], str] = {}
    near: set[frozenset[str]] = set()
    count = 0
    for p, share in enumerate(weights):
        project = f"/home/dev/work/project-{p:03d}"
        budget = round(n_prompts * share)
        groups = [FAMILIES[k:k + 2] for k in range(0, 22, 2)] + [[f] for f in FAMILIES[22:]]
        r.shuffle(groups)
        fams: list[Family] = []
        for g in groups:
            if len(fams) + len(g) <= families_per_project:
                fams += g
        near |= {frozenset((f"{project}|{a}", f"{project}|{b}")) for pair in pairs for a, b in [tuple(pair)]
                 if {a, b} <= {f.key for f in fams}}
        made = 0
        while made < budget:
            count += 1
            sid = f"s{count:07d}"
            host = HOSTS[count % 4]
            day = r.random() * 180
            s = Session(host, sid, project_dir=project, entrypoint="cli")
            s.note_time(_at(day))
            roll = r.random()
            if roll < recurring_share:
                fam = r.choice(fams)
                text = _reword(_fill(_template(fam, r), r), r)
                shell = [x for x in fam.shell if r.random() < 0.9]
                if r.random() < 0.3:
                    shell.insert(0, r.choice(["git status", "ls", "cat README.md", "rg TODO"]))
                files = [_fill(x, r) for x in fam.files if r.random() < 0.8]
                if host == "copilot-vscode" and r.random() < 0.5:
                    shell = []
                label = f"{project}|{fam.key}"
            elif roll < 1 - noise_share:
                w = r.sample(ONEOFF_WORDS, 5)
                text = f"{r.choice(ONEOFF_VERBS)} the {r.choice(ONEOFF_ADJ)} {w[0]} {w[1]} and the {w[2]} {w[3]} {w[4]}"
                shell = r.sample(["pytest -q", "npm test", "cargo build", "go test", "make", "rg", "ruff check",
                                  "mypy", "docker build", "git log"], r.randrange(0, 2))
                files = [f"src/{w[r.randrange(5)]}/{w[r.randrange(5)]}.py"] if r.random() < 0.7 else []
                label = f"oneoff:{count}"
            else:
                text, reason = r.choice(NOISE[:6])
                shell, files = [], []
                label = f"noise:{reason}"
            idx = _turn(s, text, day, shell, files, "Done: " + text[:40])
            labels[(host, sid, idx)] = label
            made += 1
            if r.random() < 0.2 and made < budget:
                text, reason = r.choice(NOISE)
                idx = _turn(s, text, day + 0.001, [], [], "OK.")
                labels[(host, sid, idx)] = f"noise:{reason}"
                made += 1
            sessions.append(s)
    return Synth(sessions, labels, near)

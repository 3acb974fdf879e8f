"""A harder hand-labelled mining set: four projects, 32 recurring tasks, 12 near-miss pairs.

Written by hand before the miner was tuned on it (issue 23 §4). Every task is typed
in paraphrase: several wordings per task, terse and polite, other word orders,
changing names and versions, now and then in French, German or Spanish, across
Claude Code, Codex and Copilot sessions. The twelve near-miss pairs differ in one
argument ("bump the patch version" / "bump the minor version", staging / production,
amd64 / arm64): they use the same words otherwise, and usually run the same programs,
so only the one word tells them apart.

Held out: the clusters are split in two halves by ``split`` ("tune" or "held"),
each near-miss pair on one side. Tune the miner on the "tune" half only and read
the "held" half as the honest figure; both are reported (tests/sleep/mine_score.py).

``build()`` returns a mine_corpus.Corpus (sessions, the label of every prompt,
the near-miss pairs), plus the split of every cluster.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta, timezone

import mine_corpus as mc

from sleep.sessions import Session

HOSTS = ("claude-code", "codex", "copilot-vscode", "copilot-cli")
BASE = datetime(2026, 3, 2, 9, 0, tzinfo=timezone.utc)

PROJECTS = {
    "ledger": "/home/ana/code/ledgerline",  # Python library, released to PyPI
    "storefront": "/home/ana/code/storefront",  # TypeScript web app
    "ops": "/home/ana/code/ops-terraform",  # Terraform, Kubernetes, Docker
    "grepr": "/home/ana/code/grepr",  # Rust command-line tool
}


@dataclass
class Task:
    key: str
    project: str
    split: str  # "tune" or "held"
    shell: list[str]
    files: list[str]
    members: list[mc.Member]
    near_miss: tuple[str, ...] = ()
    final: str = "Done."


m = mc.m
T = Task
TASKS: list[Task] = [
    # ------------------------------------------------------------------ ledgerline (Python library)
    T("ledger/bump-patch", "ledger", "tune",
      ["bump-my-version bump", "git commit"], ["pyproject.toml", "CHANGELOG.md"], [
        m("bump the patch version"),
        m("do a patch release bump, 1.4.2 -> 1.4.3"),
        m("increment the patch version and commit it"),
        m("new patch version please, just the bump + changelog entry"),
        m("sube la versión patch y haz commit"),
    ], near_miss=("ledger/bump-minor",), final="Bumped to 1.4.3 and committed."),
    T("ledger/bump-minor", "ledger", "tune",
      ["bump-my-version bump", "git commit"], ["pyproject.toml", "CHANGELOG.md"], [
        m("bump the minor version"),
        m("do a minor release bump, 1.4.3 -> 1.5.0"),
        m("increment the minor version and commit it"),
        m("new minor version please, the bump and a changelog entry"),
        m("minor version bump for the next release"),
    ], near_miss=("ledger/bump-patch",), final="Bumped to 1.5.0 and committed."),
    T("ledger/unit-tests", "ledger", "held", ["pytest"], [], [
        m("run the unit tests and tell me what fails"),
        m("execute the unit test suite, only report failures", ["pytest tests/unit"]),
        m("unit tests pls, which ones are red?"),
        m("Can you run the unit tests? Don't fix anything, just the failing ones"),
        m("führe die Unit-Tests aus und zeig mir die Fehler"),
    ], near_miss=("ledger/integration-tests",), final="2 unit tests fail: test_rounding, test_fx."),
    T("ledger/integration-tests", "ledger", "held", ["pytest"], [], [
        m("run the integration tests and tell me what fails", ["docker compose up", "pytest tests/integration"]),
        m("execute the integration test suite, only report failures", ["pytest tests/integration"]),
        m("integration tests pls, which ones are red?", ["docker compose up", "pytest"]),
        m("Can you run the integration tests against the local db? just list what fails",
          ["docker compose up", "pytest -m integration"]),
    ], near_miss=("ledger/unit-tests",), final="1 integration test fails: test_postgres_upsert."),
    T("ledger/typecheck", "ledger", "held", ["mypy"], ["ledgerline/fx.py"], [
        m("run mypy and fix the type errors"),
        m("mypy --strict is failing, make it pass", files=["ledgerline/journal.py"]),
        m("fix the typing errors mypy reports in ledgerline/"),
        m("get the type checker green again", ["mypy", "pytest"]),
        m("corrige les erreurs de typage signalées par mypy"),
    ], final="mypy is clean."),
    T("ledger/review-staged", "ledger", "tune", ["git diff --cached"], [], [
        m("review my staged changes"),
        m("look at what I've staged and point out bugs"),
        m("code review of the staged diff please, one line per finding"),
        m("give the staged changes a once-over before I commit"),
    ], near_miss=("ledger/review-last-commit",), final="One bug: the fx cache is never invalidated."),
    T("ledger/review-last-commit", "ledger", "tune", ["git show"], [], [
        m("review my last commit"),
        m("look at what I committed last and point out bugs", ["git log", "git show"]),
        m("code review of the last commit please, one line per finding"),
        m("give HEAD a once-over, anything risky in the last commit?"),
    ], near_miss=("ledger/review-staged",), final="The last commit drops a None check in journal.post()."),
    # ------------------------------------------------------------------ storefront (TypeScript)
    T("store/deploy-staging", "storefront", "held", ["pnpm build", "vercel deploy"], [], [
        m("deploy to staging"),
        m("ship the current branch to the staging environment", ["pnpm build", "vercel deploy"]),
        m("push a staging deploy and give me the preview url"),
        m("can you deploy this to staging so QA can look?"),
        m("despliega a staging por favor"),
    ], near_miss=("store/deploy-prod",), final="Deployed to staging: https://staging.storefront.example"),
    T("store/deploy-prod", "storefront", "held", ["pnpm build", "vercel deploy"], [], [
        m("deploy to production"),
        m("ship the current main to the production environment", ["pnpm build", "vercel deploy --prod"]),
        m("push a production deploy and give me the url"),
        m("can you deploy this to prod? QA signed off"),
    ], near_miss=("store/deploy-staging",), final="Deployed to production."),
    T("store/i18n-de", "storefront", "tune", [], ["locales/de.json"], [
        m("translate the new strings in locales/en.json to German"),
        m("add the missing German translations", files=["locales/de.json"]),
        m("fill in locales/de.json for the keys that are only in English"),
        m("übersetze die neuen Texte ins Deutsche (locales/de.json)"),
    ], near_miss=("store/i18n-fr",), final="Added 12 German strings."),
    T("store/i18n-fr", "storefront", "tune", [], ["locales/fr.json"], [
        m("translate the new strings in locales/en.json to French"),
        m("add the missing French translations", files=["locales/fr.json"]),
        m("fill in locales/fr.json for the keys that are only in English"),
        m("traduis les nouvelles chaînes en français (locales/fr.json)"),
    ], near_miss=("store/i18n-de",), final="Added 12 French strings."),
    T("store/update-snapshots", "storefront", "held",
      ["pnpm vitest"], ["src/components/__snapshots__/Cart.test.tsx.snap"], [
        m("update the vitest snapshots"),
        m("the snapshot tests are outdated after the redesign, regenerate them", ["pnpm vitest -u"]),
        m("refresh the jest/vitest snapshots and check the diff looks intentional"),
        m("snapshots are failing, update them if the changes are expected"),
    ], final="Updated 7 snapshots."),
    T("store/e2e", "storefront", "tune", ["pnpm playwright"], [], [
        m("run the playwright e2e tests"),
        m("run the end-to-end tests and show me the failures"),
        m("playwright suite please, report what's failing"),
        m("kick off the e2e tests in headless chromium and summarize"),
        m("lance les tests e2e playwright"),
    ], final="All 41 e2e tests pass."),
    T("store/seed-db", "storefront", "held", ["pnpm prisma"], [], [
        m("seed the dev database"),
        m("run the prisma seed against the local db", ["pnpm prisma db seed"]),
        m("populate my local database with the seed data"),
        m("fill the dev db with sample data (prisma seed)"),
    ], near_miss=("store/reset-db",), final="Seeded 50 products and 10 users."),
    T("store/reset-db", "storefront", "held", ["pnpm prisma"], [], [
        m("reset the dev database"),
        m("run prisma migrate reset against the local db", ["pnpm prisma migrate"]),
        m("wipe my local database and re-apply the migrations"),
        m("reset the dev db from scratch (prisma)"),
    ], near_miss=("store/seed-db",), final="Database reset; 14 migrations applied."),
    T("store/upgrade-dep", "storefront", "held", ["pnpm up", "pnpm test"], ["package.json", "pnpm-lock.yaml"], [
        m("upgrade next to the latest version and fix anything that breaks"),
        m("bump react-query to v5 and fix the breaking changes"),
        m("update zod to the newest release, run the tests"),
        m("can you upgrade tailwindcss and make sure the build still passes", ["pnpm up", "pnpm build"]),
    ], final="Upgraded; tests pass."),
    # ------------------------------------------------------------------ ops-terraform
    T("ops/plan-staging", "ops", "tune", ["terraform plan"], [], [
        m("terraform plan for staging"),
        m("run a plan against the staging workspace and summarize the changes",
          ["terraform workspace", "terraform plan"]),
        m("what would terraform change in staging? plan only"),
        m("tf plan staging, no apply"),
        m("haz un terraform plan de staging"),
    ], near_miss=("ops/plan-prod",), final="Plan: 2 to add, 1 to change, 0 to destroy."),
    T("ops/plan-prod", "ops", "tune", ["terraform plan"], [], [
        m("terraform plan for production"),
        m("run a plan against the prod workspace and summarize the changes",
          ["terraform workspace", "terraform plan"]),
        m("what would terraform change in production? plan only"),
        m("tf plan prod, no apply"),
    ], near_miss=("ops/plan-staging",), final="Plan: 0 to add, 3 to change, 0 to destroy."),
    T("ops/image-amd64", "ops", "held", ["docker buildx"], ["docker/api.Dockerfile"], [
        m("build the api docker image for amd64"),
        m("docker buildx the api image, platform linux/amd64"),
        m("make an x86_64 (amd64) build of the api container"),
        m("rebuild the api image for amd64 and tag it with the git sha"),
    ], near_miss=("ops/image-arm64",), final="Built api:3f2c1ab for linux/amd64."),
    T("ops/image-arm64", "ops", "held", ["docker buildx"], ["docker/api.Dockerfile"], [
        m("build the api docker image for arm64"),
        m("docker buildx the api image, platform linux/arm64"),
        m("make an arm64 build of the api container for the graviton nodes"),
        m("rebuild the api image for arm64 and tag it with the git sha"),
    ], near_miss=("ops/image-amd64",), final="Built api:3f2c1ab for linux/arm64."),
    T("ops/logs-api", "ops", "tune", ["kubectl logs"], [], [
        m("tail the api logs in staging"),
        m("show me the last 200 lines of the api pod logs"),
        m("kubectl logs for the api deployment, anything erroring?"),
        m("check the api logs for errors in the last hour"),
    ], near_miss=("ops/logs-worker",), final="No errors in the api logs."),
    T("ops/logs-worker", "ops", "tune", ["kubectl logs"], [], [
        m("tail the worker logs in staging"),
        m("show me the last 200 lines of the worker pod logs"),
        m("kubectl logs for the worker deployment, anything erroring?"),
        m("check the worker logs for errors in the last hour"),
    ], near_miss=("ops/logs-api",), final="The worker retried 3 jobs."),
    T("ops/scale-up", "ops", "held", ["kubectl scale"], [], [
        m("scale the api deployment up to 6 replicas"),
        m("we're getting traffic, scale up the api pods"),
        m("increase the api replica count for the launch"),
        m("kubectl scale api up, 8 replicas"),
    ], near_miss=("ops/scale-down",), final="api scaled to 6 replicas."),
    T("ops/scale-down", "ops", "held", ["kubectl scale"], [], [
        m("scale the api deployment down to 2 replicas"),
        m("traffic is over, scale down the api pods"),
        m("decrease the api replica count after the launch"),
        m("kubectl scale api down, 2 replicas"),
    ], near_miss=("ops/scale-up",), final="api scaled to 2 replicas."),
    # ------------------------------------------------------------------ grepr (Rust)
    T("grepr/clippy", "grepr", "held", ["cargo clippy"], ["src/main.rs"], [
        m("fix the clippy warnings"),
        m("cargo clippy is unhappy, clean up the warnings", files=["src/search.rs"]),
        m("make clippy pass with -D warnings"),
        m("get rid of all the clippy lints in src/", files=["src/walk.rs", "src/main.rs"]),
        m("behebe die clippy-Warnungen"),
    ], final="clippy is clean."),
    T("grepr/bench-main", "grepr", "tune", ["cargo bench", "git stash"], [], [
        m("run the benchmarks and compare against main"),
        m("cargo bench this branch vs main, show the deltas"),
        m("how does this branch's performance compare to main? run the criterion benches"),
        m("benchmark against main and tell me if anything regressed"),
    ], near_miss=("grepr/bench-release",), final="search_literal is 4% faster than main."),
    T("grepr/bench-release", "grepr", "tune", ["cargo bench", "git checkout"], [], [
        m("run the benchmarks and compare against the last release tag"),
        m("cargo bench this branch vs the last release, show the deltas"),
        m("how does this branch's performance compare to v0.9.0? run the criterion benches"),
        m("benchmark against the previous release and tell me if anything regressed"),
    ], near_miss=("grepr/bench-main",), final="search_regex is 2% slower than v0.9.0."),
    T("grepr/release-build", "grepr", "held", ["cargo build"], [], [
        m("cross-compile a release build for aarch64-unknown-linux-gnu"),
        m("build release binaries for linux arm64 with cross", ["cross build"]),
        m("make a --release build targeting x86_64-unknown-linux-musl"),
        m("produce a static musl release binary"),
    ], final="Built target/x86_64-unknown-linux-musl/release/grepr."),
    T("grepr/flaky-test", "grepr", "held", ["cargo test"], ["tests/walk.rs"], [
        m("tests/walk.rs::follows_symlinks is flaky, find out why and fix it"),
        m("the ignores_hidden test fails randomly on CI, investigate the flakiness",
          files=["tests/ignore.rs"]),
        m("one test is intermittently failing (parallel_walk), make it deterministic",
          files=["src/walk.rs", "tests/walk.rs"]),
        m("fix the flaky test in tests/output.rs", files=["tests/output.rs"]),
    ], final="The test raced on a shared temp dir; now each test has its own."),
    T("grepr/changelog", "grepr", "tune", ["git log"], ["CHANGELOG.md"], [
        m("update CHANGELOG.md with the commits since the last tag"),
        m("write the changelog entries for everything merged since v0.9.0"),
        m("add the unreleased changes to the changelog"),
        m("go through git log since the last release and update the changelog"),
    ], final="Added 6 entries under Unreleased."),
    T("grepr/test-simd", "grepr", "held", ["cargo test"], [], [
        m("run the tests with the simd feature enabled"),
        m("cargo test --features simd, list failures"),
        m("do the tests pass when built with simd?"),
        m("test the crate with feature simd turned on"),
    ], near_miss=("grepr/test-pcre2",), final="All tests pass with simd."),
    T("grepr/test-pcre2", "grepr", "held", ["cargo test"], [], [
        m("run the tests with the pcre2 feature enabled"),
        m("cargo test --features pcre2, list failures"),
        m("do the tests pass when built with pcre2?"),
        m("test the crate with feature pcre2 turned on"),
    ], near_miss=("grepr/test-simd",), final="2 tests fail with pcre2."),
]


def split_of() -> dict[str, str]:
    return {t.key: t.split for t in TASKS}


def _at(day: float) -> str:
    t = BASE + timedelta(days=day)
    return t.strftime("%Y-%m-%dT%H:%M:%S.") + f"{t.microsecond // 1000:03d}Z"


def _session(host: str, sid: str, project: str, day: float) -> Session:
    s = Session(host, sid, project_dir=PROJECTS[project],
                entrypoint={"claude-code": "cli", "codex": "codex_cli_rs"}.get(host))
    s.note_time(_at(day))
    return s


def _key_project(project: str) -> str:
    return {"ledger": "ledger", "storefront": "store", "ops": "ops", "grepr": "grepr"}[project]


ONEOFFS: list[tuple[str, str, list[str], list[str]]] = [
    ("ledger", "bump the major version, we're dropping python 3.8", ["bump-my-version bump"], ["pyproject.toml"]),
    ("ledger", "why does Money.__eq__ ignore the currency?", [], ["ledgerline/money.py"]),
    ("ledger", "run the doctests in ledgerline/fx.py", ["pytest --doctest-modules"], []),
    ("storefront", "deploy to the demo environment for the sales call", ["vercel deploy"], []),
    ("storefront", "translate the new strings to Japanese", [], ["locales/ja.json"]),
    ("storefront", "what does the useCart hook do?", [], ["src/hooks/useCart.ts"]),
    ("ops", "terraform plan for the sandbox account", ["terraform plan"], []),
    ("ops", "tail the ingress controller logs", ["kubectl logs"], []),
    ("ops", "how much does the NAT gateway cost us per month?", [], []),
    ("grepr", "explain how the gitignore matcher works", [], ["src/ignore.rs"]),
    ("grepr", "add a --max-depth flag", ["cargo test"], ["src/cli.rs"]),
    ("grepr", "run the benchmarks", ["cargo bench"], []),
]


def build() -> tuple[mc.Corpus, dict[str, str]]:
    """Every session of the set (deterministic), the label of every prompt, and each task's split."""
    sessions: list[Session] = []
    labels: dict[tuple[str, str, int], str] = {}
    for ci, t in enumerate(TASKS):
        for mi, mem in enumerate(t.members):
            host = mem.host or HOSTS[(ci * 3 + mi) % len(HOSTS)]
            day = (ci * 2 + mi * 3) % 14 + mi * 0.07
            s = _session(host, f"h-{t.key.replace('/', '-')}-{mi}", t.project, day)
            shell = mem.shell if mem.shell is not None else t.shell
            files = mem.files if mem.files is not None else t.files
            idx = mc._turn(s, mem.text, day, shell, files, t.final)
            labels[(s.host, s.session_id, idx)] = t.key
            if (ci + mi) % 5 == 0:
                text, reason = mc.NOISE[(ci + mi) % len(mc.NOISE)]
                idx = mc._turn(s, text, day + 0.003, [], [], "OK.")
                labels[(s.host, s.session_id, idx)] = f"noise:{reason}"
            s.tools = {"Bash": 2, "Read": 3} if s.prompts[0].shell else {"Read": 2, "Edit": 1}
            sessions.append(s)
    for oi, (project, text, shell, files) in enumerate(ONEOFFS):
        s = _session(HOSTS[oi % len(HOSTS)], f"h-oneoff-{oi}", project, oi % 13 + 0.5)
        idx = mc._turn(s, text, oi % 13 + 0.5, shell, files, "Here you go.")
        labels[(s.host, s.session_id, idx)] = f"oneoff:{oi}"
        sessions.append(s)
    pairs = {frozenset((t.key, o)) for t in TASKS for o in t.near_miss}
    return mc.Corpus(sessions, labels, pairs), split_of()

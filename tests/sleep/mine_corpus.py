"""A hand-written, labelled set of coding-agent prompts for testing the miner.

Four projects, 25 recurring tasks typed in varied words (terse and polite,
typos, another order, changing file, table and branch names, now and then
another language), nine near-miss pairs (tasks that share most of their
wording but are different work), one-offs (some close to a recurring task),
noise (acknowledgements, slash commands, pasted logs, feedback turns) and
corrections and approvals inside member sessions.

Each member of a recurring task is the first prompt of its own session, with
the shell signatures and files the agent's turn would show. ``build()``
returns the sessions and the label of every prompt, so a test or a benchmark
can score a mining run against the planted truth.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone

from sleep.feedback import classify_feedback
from sleep.sessions import Feedback, Session

HOSTS = ("claude-code", "codex", "copilot-vscode", "copilot-cli")
BASE = datetime(2025, 5, 5, 8, 30, tzinfo=timezone.utc)

PROJECTS = {
    "billing": "/home/dev/src/billing-api",
    "webshop": "/home/dev/src/webshop",
    "fastgrep": "/home/dev/src/fastgrep",
    "infra": "/home/dev/src/platform-infra",
}


@dataclass
class Member:
    text: str
    shell: list[str] | None = None  # None: the cluster's default
    files: list[str] | None = None
    host: str | None = None


def m(text: str, shell: list[str] | None = None, files: list[str] | None = None,
      host: str | None = None) -> Member:
    return Member(text, shell, files, host)


@dataclass
class Cluster:
    key: str
    project: str
    shell: list[str]
    files: list[str]
    members: list[Member]
    near_miss: tuple[str, ...] = ()
    final: str = "Done."


@dataclass
class Turn:
    """A later turn in a member's session: feedback, noise or a one-off."""

    text: str
    label: str  # "noise:<reason>" or "oneoff:<n>"
    shell: list[str] = field(default_factory=list)
    final: str | None = "OK."


C = Cluster
CLUSTERS: list[Cluster] = [
    # ---------------------------------------------------------------- billing-api (Python)
    C("billing/unit-tests", "billing", ["pytest -q"], [], [
        m("run the unit tests and list the failures"),
        m("can you run the unit test suite and tell me which tests fail?", ["python -m pytest"]),
        m("pls run unit tests, just list whats failing"),
        m("Run pytest on the unit tests and give me the list of failing tests, no fixes yet",
          ["git status", "pytest tests/unit"]),
        m("unit tests -> list failures"),
        m("lance les tests unitaires et liste les échecs"),
        m("run the unti tests and summarize the failures"),
    ], near_miss=("billing/lint",), final="3 tests fail: test_tax_rounding, test_refund_partial, test_jpy_totals."),
    C("billing/lint", "billing", ["ruff check"], [], [
        m("run the linter and list the failures"),
        m("run ruff over the repo and list every violation"),
        m("lint the code and tell me what's failing, don't fix anything"),
        m("can you run the linter? just list the errors", ["ruff check", "git status"]),
        m("ruff check please, list the problems"),
    ], near_miss=("billing/unit-tests", "billing/lint-fix"), final="ruff reports 4 problems: E501 x2, F401, B008."),
    C("billing/lint-fix", "billing", ["ruff check"], ["billing/models.py"], [
        m("fix the ruff errors in billing/models.py"),
        m("run the linter and fix whatever it flags in app/api/", ["ruff check"], ["app/api/routes.py", "app/api/deps.py"]),
        m("clean up the lint failures in payments/, ruff --fix is fine", ["ruff check"],
          ["payments/service.py"]),
        m("ruff is red on CI, fix the lint issues", ["ruff check", "ruff format"], ["billing/tax.py"]),
        m("fix lint errors in billing/refunds.py please", ["ruff check"], ["billing/refunds.py"]),
    ], near_miss=("billing/lint", "billing/typecheck"), final="Fixed the lint errors; ruff is clean."),
    C("billing/migration-add-column", "billing", ["alembic revision", "alembic upgrade"],
      ["migrations/versions/a1b2_add_column.py", "billing/models.py"], [
        m("create an alembic migration adding a nullable `last_login_at` column to users",
          files=["migrations/versions/7f3e_add_last_login_at.py", "billing/models/user.py"]),
        m("new migration: add column `currency` (varchar 3, default 'EUR') to the invoices table",
          files=["migrations/versions/9c1d_add_currency.py", "billing/models/invoice.py"]),
        m("Write a migration that adds a `discount_pct` column to line_items and update the SQLAlchemy model",
          files=["migrations/versions/11aa_add_discount_pct.py", "billing/models/line_item.py"]),
        m("add a column for archived_at on customers, with an alembic migration pls",
          files=["migrations/versions/5e5e_add_archived_at.py"]),
        m("need an alembic revision that adds an `external_ref` column to payments",
          files=["migrations/versions/0b7c_external_ref.py", "billing/models/payment.py"]),
    ], near_miss=("billing/migration-drop-table",), final="Added the migration and updated the model."),
    C("billing/migration-drop-table", "billing", ["alembic revision", "alembic upgrade"],
      ["migrations/versions/c3d4_drop_table.py"], [
        m("write an alembic migration that drops the legacy_sessions table",
          files=["migrations/versions/2d2d_drop_legacy_sessions.py"]),
        m("create a migration to drop table `old_invoices_backup`",
          files=["migrations/versions/8e8e_drop_old_invoices_backup.py"]),
        m("drop the unused audit_tmp table with a new alembic revision",
          files=["migrations/versions/4f4f_drop_audit_tmp.py"]),
        m("Need a migration removing the `tmp_import` table entirely (downgrade should recreate it)",
          files=["migrations/versions/6a6a_remove_tmp_import.py"]),
    ], near_miss=("billing/migration-add-column",), final="Migration drops the table; downgrade recreates it."),
    C("billing/review-staged", "billing", ["git diff --cached"], [], [
        m("review my staged changes before I commit"),
        m("look over the staged diff and point out bugs"),
        m("can you do a quick code review of what's staged?", ["git status", "git diff --cached"]),
        m("review git diff --cached, one line per issue"),
        m("give my staged changes a once-over, anything risky?"),
    ], near_miss=("billing/commit-staged",), final="Two things: the tax total rounds before summing, and a debug print."),
    C("billing/commit-staged", "billing", ["git diff --cached", "git commit"], [], [
        m("write a commit message for the staged changes and commit"),
        m("commit what's staged with a conventional commit message"),
        m("craft a good commit msg for my staged diff, then commit it"),
        m("stage is ready, commit it with a descriptive message", ["git status", "git diff --cached", "git commit"]),
        m("commit the staged changes, you write the message"),
    ], near_miss=("billing/review-staged",), final="Committed: fix(tax): round line totals after summing."),
    C("billing/openapi-client", "billing", ["make openapi"], ["clients/python/billing_client/api.py"], [
        m("regenerate the openapi client"),
        m("the schema changed, re-generate the API client and fix the imports",
          ["make openapi", "pytest -q"]),
        m("run the client codegen again (openapi) and make sure it type-checks", ["make openapi", "mypy"]),
        m("regen openapi client pls"),
        m("Regenerate the python API client from openapi.yaml"),
    ], final="Regenerated the client; imports updated."),
    C("billing/typecheck", "billing", ["mypy"], ["billing/invoices.py"], [
        m("run mypy and fix the type errors in billing/invoices.py"),
        m("fix mypy errors in app/payments/service.py", files=["app/payments/service.py"]),
        m("mypy is complaining about billing/tax.py, fix those type errors", files=["billing/tax.py"]),
        m("make mypy pass on the refunds module", files=["billing/refunds/__init__.py", "billing/refunds/core.py"]),
        m("corrige les erreurs mypy dans billing/utils.py", files=["billing/utils.py"]),
    ], near_miss=("billing/lint-fix",), final="mypy is clean now."),
    # ---------------------------------------------------------------- webshop (TypeScript)
    C("webshop/unit-tests", "webshop", ["pnpm test"], [], [
        m("run the unit tests and list what fails"),
        m("run vitest, list the failing specs", ["pnpm vitest"]),
        m("which unit tests are failing right now? run them"),
        m("pnpm test and give me the failures"),
        m("Run the unit test suite and tell me which ones are red"),
    ], near_miss=("webshop/e2e-checkout",), final="2 specs fail: cart.test.ts and price.test.ts."),
    C("webshop/e2e-checkout", "webshop", ["pnpm exec playwright"], ["e2e/checkout.spec.ts"], [
        m("run the e2e tests for the checkout flow"),
        m("run playwright on checkout and tell me what broke", ["npx playwright"]),
        m("Can you run the end-to-end tests (checkout spec only)?"),
        m("e2e checkout tests pls"),
        m("checkout e2e is flaky again, run it and report which steps fail"),
    ], near_miss=("webshop/unit-tests",), final="The payment step times out in checkout.spec.ts."),
    C("webshop/new-component", "webshop", [], ["src/components/Badge/Badge.tsx", "src/components/Badge/Badge.stories.tsx"], [
        m("create a new Badge component with a storybook story and a unit test",
          files=["src/components/Badge/Badge.tsx", "src/components/Badge/Badge.stories.tsx",
                 "src/components/Badge/Badge.test.tsx"]),
        m("scaffold a Tooltip component (tsx + stories + test)",
          files=["src/components/Tooltip/Tooltip.tsx", "src/components/Tooltip/Tooltip.stories.tsx"]),
        m("add a new component called PriceTag, include a story and a vitest test",
          ["pnpm test"], ["src/components/PriceTag/PriceTag.tsx", "src/components/PriceTag/PriceTag.test.tsx"]),
        m("new react component `EmptyState` please, with story + tests like the others",
          files=["src/components/EmptyState/EmptyState.tsx"]),
    ], final="Created the component, its story and a test."),
    C("webshop/upgrade-dep", "webshop", ["pnpm up", "pnpm build"], ["package.json", "pnpm-lock.yaml"], [
        m("bump react-query to the latest minor and fix breakages"),
        m("upgrade zod to 3.23 and make the build pass"),
        m("update the date-fns dependency to latest and fix any type errors", ["pnpm up", "pnpm tsc"]),
        m("pnpm up vite to latest, then run the build"),
        m("upgrade @tanstack/router and fix whatever breaks", ["pnpm up", "pnpm build", "pnpm test"]),
    ], final="Upgraded; build and tests pass."),
    C("webshop/i18n-keys", "webshop", [], ["src/locales/en.json", "src/locales/de.json", "src/locales/fr.json"], [
        m("add the translation keys for the new checkout banner to all locale files"),
        m("new i18n strings for the cart empty state: add to en, de and fr"),
        m("add missing translations for the 'order shipped' email in every locale"),
        m("translate the new settings page labels into the de and fr json files",
          files=["src/locales/de.json", "src/locales/fr.json"]),
    ], final="Added the keys to en, de and fr."),
    C("webshop/bundle-size", "webshop", ["pnpm build", "npx vite-bundle-visualizer"], [], [
        m("build the app and list the 10 biggest chunks in the bundle"),
        m("how big is the bundle now? build and show the largest modules"),
        m("check bundle size after build, top chunks please", ["pnpm build"]),
        m("run a production build and report the largest bundle chunks"),
    ], final="Largest chunks: vendor-react 142 kB, checkout 88 kB."),
    # ---------------------------------------------------------------- fastgrep (Rust)
    C("fastgrep/clippy", "fastgrep", ["cargo clippy"], ["src/search.rs"], [
        m("run clippy and fix all the warnings"),
        m("cargo clippy is noisy again, clean up the warnings", files=["src/cli.rs", "src/search.rs"]),
        m("fix clippy lints (pedantic off)", files=["src/walk.rs"]),
        m("make clippy happy"),
        m("clippy warnings -> fix them pls", files=["src/output.rs"]),
    ], final="clippy is clean."),
    C("fastgrep/bench-vs-main", "fastgrep", ["cargo bench", "git stash"], [], [
        m("run the criterion benchmarks and compare with main"),
        m("benchmark this branch vs main and summarise regressions"),
        m("cargo bench on both main and my branch, tell me what got slower", ["cargo bench", "git checkout"]),
        m("did my change make search slower? bench it against main"),
    ], final="search_literal is 4% slower; the rest is within noise."),
    C("fastgrep/release", "fastgrep", ["cargo set-version", "git tag"], ["Cargo.toml", "CHANGELOG.md"], [
        m("prepare release 0.9.2: bump the version, update CHANGELOG.md and tag it"),
        m("cut a new patch release (bump Cargo.toml version, changelog entry, git tag)"),
        m("release time: version bump to 1.4.0 + changelog + tag"),
        m("bump version to 0.10.0, write the changelog section and create the tag"),
    ], near_miss=("fastgrep/changelog",), final="Bumped to 0.9.2, updated the changelog, tagged v0.9.2."),
    C("fastgrep/changelog", "fastgrep", ["git log"], ["CHANGELOG.md"], [
        m("update CHANGELOG.md with the PRs merged since the last tag"),
        m("add changelog entries for everything merged since v0.9.1"),
        m("fill in the Unreleased section of the changelog from git log"),
        m("changelog: summarise the commits since the last release under Unreleased"),
    ], near_miss=("fastgrep/release",), final="Added 6 entries under Unreleased."),
    C("fastgrep/regression-test", "fastgrep", ["cargo test"], ["tests/regressions.rs"], [
        m("add a regression test for #212 (panic on empty pattern)"),
        m("write a regression test reproducing issue #198 in tests/regressions.rs"),
        m("Add a test that reproduces the bug in #231 before we fix it"),
        m("regression test for issue 240 please, it should fail on current main"),
    ], final="Added a failing regression test."),
    # ---------------------------------------------------------------- platform-infra
    C("infra/tf-plan-staging", "infra", ["terraform plan"], [], [
        m("run terraform plan for staging and summarise what changes"),
        m("tf plan on the staging workspace, give me a short summary"),
        m("what would terraform change in staging? plan it and summarise", ["terraform workspace", "terraform plan"]),
        m("Plan staging with terraform and list resources that would be destroyed or replaced"),
        m("haz un terraform plan de staging y resume los cambios"),
    ], near_miss=("infra/tf-fmt",), final="2 to add, 1 to change, 0 to destroy."),
    C("infra/tf-fmt", "infra", ["terraform fmt", "terraform validate"], ["modules/network/main.tf"], [
        m("run terraform fmt and validate on all modules"),
        m("format + validate the terraform code"),
        m("terraform fmt -recursive then validate, fix what fails", files=["modules/dns/main.tf"]),
        m("make sure the terraform is formatted and validates"),
    ], near_miss=("infra/tf-plan-staging",), final="Formatted 3 files; validate passes."),
    C("infra/helm-image-bump", "infra", [], ["charts/api/values-staging.yaml"], [
        m("bump the api image tag to 2024.06.3 in the staging helm values"),
        m("update the helm values for staging: worker image -> v1.8.2", files=["charts/worker/values-staging.yaml"]),
        m("set the billing-api image tag to 3f2a9c1 in charts/billing/values-staging.yaml",
          files=["charts/billing/values-staging.yaml"]),
        m("deploy bump: change the frontend image tag in the staging values to 2024.07.1",
          files=["charts/frontend/values-staging.yaml"]),
    ], final="Updated the image tag."),
    C("infra/runbook", "infra", [], ["docs/runbooks/high-error-rate.md"], [
        m("write a runbook for the HighErrorRate alert"),
        m("draft a runbook page for the DiskAlmostFull alert in docs/runbooks",
          files=["docs/runbooks/disk-almost-full.md"]),
        m("we need a runbook for PodCrashLooping, same format as the others",
          files=["docs/runbooks/pod-crash-looping.md"]),
        m("add a runbook doc for the CertificateExpiringSoon alert", files=["docs/runbooks/cert-expiring.md"]),
    ], near_miss=("infra/postmortem",), final="Wrote the runbook."),
    C("infra/postmortem", "infra", [], ["docs/postmortems/2025-05-payments.md"], [
        m("write a postmortem for yesterday's outage of the payments API"),
        m("draft the incident postmortem for INC-482 (db failover)", files=["docs/postmortems/inc-482.md"]),
        m("postmortem doc for the CDN incident last week, use the template", files=["docs/postmortems/cdn.md"]),
        m("Can you write up a blameless postmortem for the queue backlog incident?",
          files=["docs/postmortems/queue-backlog.md"]),
    ], near_miss=("infra/runbook",), final="Drafted the postmortem from the template."),
]

# One-off tasks: typed once. Several are close to a recurring task on purpose.
ONEOFFS: list[tuple[str, str, list[str], list[str]]] = [
    ("billing", "explain how the retry decorator in billing/retry.py decides the backoff", [], ["billing/retry.py"]),
    ("billing", "why is the invoice total off by one cent for JPY?", ["pytest -q"], ["billing/tax.py"]),
    ("billing", "rename CustomerRepo to CustomerStore everywhere", ["rg"], ["billing/repos.py", "billing/api.py"]),
    ("billing", "run only test_refunds.py and fix the one failing assertion", ["pytest -q"], ["tests/test_refunds.py"]),
    ("billing", "add a CONTRIBUTING section about running alembic locally", [], ["CONTRIBUTING.md"]),
    ("billing", "set up pre-commit with ruff and mypy hooks", ["pre-commit install"], [".pre-commit-config.yaml"]),
    ("billing", "what does the `settle_batch` celery task do when the bank API times out?", [], ["billing/tasks.py"]),
    ("billing", "write a migration that renames the column amount_cents to amount_minor",
     ["alembic revision"], ["migrations/versions/3c3c_rename_amount.py"]),
    ("webshop", "why does the cart badge flicker on mobile safari?", [], ["src/components/CartBadge.tsx"]),
    ("webshop", "convert the checkout page from class components to hooks", ["pnpm test"], ["src/pages/Checkout.tsx"]),
    ("webshop", "set up msw for mocking the product API in tests", ["pnpm add"], ["src/test/handlers.ts"]),
    ("webshop", "explain what the useCartSync hook does", [], ["src/hooks/useCartSync.ts"]),
    ("webshop", "add dark mode support to the header", [], ["src/components/Header.tsx"]),
    ("webshop", "run the e2e tests for the login page and fix the selector that changed",
     ["pnpm exec playwright"], ["e2e/login.spec.ts"]),
    ("fastgrep", "how does the walker skip gitignored directories?", [], ["src/walk.rs"]),
    ("fastgrep", "add a --count flag that prints only the number of matches", ["cargo test"], ["src/cli.rs"]),
    ("fastgrep", "port the glob matching to the globset crate", ["cargo add", "cargo test"], ["src/walk.rs", "Cargo.toml"]),
    ("fastgrep", "profile the search on the linux kernel tree with perf", ["perf record"], []),
    ("fastgrep", "write a man page for fastgrep", [], ["doc/fastgrep.1"]),
    ("infra", "why is the nginx ingress returning 502 for /api/v2?", ["kubectl logs"], []),
    ("infra", "create a new terraform module for the redis cluster", ["terraform init"], ["modules/redis/main.tf"]),
    ("infra", "rotate the grafana admin password in the vault config", [], ["vault/grafana.hcl"]),
    ("infra", "write an ADR about moving from helm to kustomize", [], ["docs/adr/0007-kustomize.md"]),
    ("infra", "add a prometheus alert for the queue depth above 10k", [], ["alerts/queue.yaml"]),
]

# Noise: (project, text, reason) as own turns after a member prompt.
NOISE: list[tuple[str, str]] = [
    ("ok", "acknowledgement"),
    ("continue", "acknowledgement"),
    ("yes", "acknowledgement"),
    ("go ahead", "acknowledgement"),
    ("k", "acknowledgement"),
    ("/compact", "slash_command"),
    ("/review-pr 142", "slash_command"),
    ("Traceback (most recent call last):\n  File \"/home/dev/src/billing-api/billing/tax.py\", line 41, in total\n"
     "    return sum(round(x) for x in items)\nTypeError: 'NoneType' object is not iterable\n", "pasted_output"),
    ("diff --git a/src/cart.ts b/src/cart.ts\nindex 3b1..9c2 100644\n--- a/src/cart.ts\n+++ b/src/cart.ts\n"
     "@@ -10,7 +10,7 @@\n-  const total = 0\n+  let total = 0\n   for (const i of items) total += i.price\n", "pasted_output"),
    ("perfect, thanks", "feedback"),
    ("lgtm", "feedback"),
    ("no, only list them, don't fix anything", "feedback"),
]

# Feedback placed in given member sessions: (cluster key, member index, turns).
FEEDBACK: list[tuple[str, int, list[Turn]]] = [
    ("webshop/unit-tests", 0, [Turn("no, use pnpm not npm", "noise:feedback", ["pnpm test"],
                                    "Switched to pnpm: 2 specs fail."),
                               Turn("perfect, thanks", "noise:feedback", [], "Glad to help.")]),
    ("webshop/unit-tests", 2, [Turn("no, use pnpm instead of npm", "noise:feedback", ["pnpm test"],
                                    "Ran pnpm test: price.test.ts fails.")]),
    ("billing/review-staged", 1, [Turn("no, give file:line first for each finding", "noise:feedback", [],
                                       "billing/tax.py:41: rounding before summing.")]),
    ("webshop/upgrade-dep", 0, [Turn("don't touch the lockfile by hand, let pnpm write it", "noise:feedback",
                                     ["pnpm install"], "Reverted my lockfile edit; pnpm regenerated it.")]),
    ("infra/tf-plan-staging", 2, [Turn("never run terraform apply, only plan", "noise:feedback", [],
                                       "Understood, I only ran plan.")]),
    ("billing/lint", 2, [Turn("no, only list them, don't fix anything", "noise:feedback", [],
                              "Reverted the fixes; 4 problems listed.")]),
    ("billing/unit-tests", 0, [Turn("continue", "noise:acknowledgement", [], "All listed."),
                               Turn("great, thanks", "noise:feedback", [], "You're welcome.")]),
]

# The corrected turns ran the wrong command: (cluster key, member index) -> shell of the first turn.
WRONG_FIRST_SHELL = {("webshop/unit-tests", 0): ["npm test", "npm install"],
                     ("webshop/unit-tests", 2): ["npm test"],
                     ("infra/tf-plan-staging", 2): ["terraform plan", "terraform apply"],
                     ("webshop/upgrade-dep", 0): ["pnpm up", "pnpm build"]}


@dataclass
class Corpus:
    sessions: list[Session]
    labels: dict[tuple[str, str, int], str]  # (host, session id, prompt index) -> label
    near_miss_pairs: set[frozenset[str]]

    def clusters(self) -> dict[str, set[tuple[str, str, int]]]:
        out: dict[str, set[tuple[str, str, int]]] = {}
        for key, label in self.labels.items():
            if not label.startswith(("noise:", "oneoff:")):
                out.setdefault(label, set()).add(key)
        return out


def _at(day: float) -> str:
    t = BASE + timedelta(days=day)
    return t.strftime("%Y-%m-%dT%H:%M:%S.") + f"{t.microsecond // 1000:03d}Z"


def _session(host: str, sid: str, project: str, day: float) -> Session:
    s = Session(host, sid, project_dir=PROJECTS[project],
                entrypoint={"claude-code": "cli", "codex": "codex_cli_rs"}.get(host))
    s.note_time(_at(day))
    return s


def _turn(s: Session, text: str, day: float, shell: list[str], files: list[str], final: str | None) -> int:
    follows = bool(s.prompts) and s.finals[-1] is not None
    idx = s.add_prompt(text, _at(day))
    kind = classify_feedback(text, follows_agent_turn=follows)
    if kind:
        s.feedback.append(Feedback(kind, text, _at(day), idx))
    for sig in shell:
        s.add_shell(sig)
    for f in files:
        s.add_file(f)
    if final is not None:
        s.set_final(final)
    s.note_time(_at(day + 0.001))
    return idx


def build() -> Corpus:
    """Every session of the corpus (deterministic) and the label of every prompt."""
    sessions: list[Session] = []
    labels: dict[tuple[str, str, int], str] = {}
    feedback = {(k, i): turns for k, i, turns in FEEDBACK}
    n = 0
    for ci, c in enumerate(CLUSTERS):
        for mi, mem in enumerate(c.members):
            n += 1
            host = mem.host or HOSTS[(ci + mi) % len(HOSTS)]
            day = (ci * 3 + mi * 5) % 40 + mi * 0.1
            s = _session(host, f"{c.key.replace('/', '-')}-{mi}", c.project, day)
            shell = WRONG_FIRST_SHELL.get((c.key, mi), mem.shell if mem.shell is not None else c.shell)
            files = mem.files if mem.files is not None else c.files
            idx = _turn(s, mem.text, day, shell, files, c.final)
            labels[(s.host, s.session_id, idx)] = c.key
            for t in feedback.get((c.key, mi), []):
                day += 0.002
                idx = _turn(s, t.text, day, t.shell, [], t.final)
                labels[(s.host, s.session_id, idx)] = t.label
            if n % 9 == 0:  # every ninth member session ends with noise
                text, reason = NOISE[(n // 9) % len(NOISE)]
                idx = _turn(s, text, day + 0.003, [], [], "OK.")
                labels[(s.host, s.session_id, idx)] = f"noise:{reason}"
            s.tools = {"Bash": 2, "Read": 3} if s.prompts[0].shell else {"Read": 2, "Edit": 1}
            sessions.append(s)
    for oi, (project, text, shell, files) in enumerate(ONEOFFS):
        host = HOSTS[oi % len(HOSTS)]
        s = _session(host, f"oneoff-{oi}", project, oi % 37 + 0.5)
        idx = _turn(s, text, oi % 37 + 0.5, shell, files, "Here is what I found.")
        labels[(s.host, s.session_id, idx)] = f"oneoff:{oi}"
        if oi % 4 == 0:
            text2, reason = NOISE[oi % len(NOISE)]
            idx = _turn(s, text2, oi % 37 + 0.51, [], [], "OK.")
            labels[(s.host, s.session_id, idx)] = f"noise:{reason}"
        sessions.append(s)
    pairs = {frozenset((c.key, other)) for c in CLUSTERS for other in c.near_miss}
    return Corpus(sessions, labels, pairs)

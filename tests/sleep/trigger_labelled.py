"""A small labelled trigger set (issue 33 §3): four project skills as a host lists them, and requests
labelled with the one skill that should load for each (None: no skill should). The requests are
written the way people phrase them in coding-agent sessions (short, imperative, some with typos);
each skill has requests in varied wording, and the one-offs touch the same project without matching
any skill's kind of work. ``WEAK`` holds descriptions that never name their tasks (the night's
description optimisation starts from such). Used by bench/triggers.py and its test."""

from __future__ import annotations

SKILLS: dict[str, str] = {
    "run-tests": "Run the project's unit tests with pnpm and the vitest runner, then list each failing test "
                 "with its file and the first assertion error.",
    "changelog": "Write or update CHANGELOG.md entries and release notes for a change, in the Keep a Changelog "
                 "format this project uses.",
    "db-migrations": "Create, review or roll back database schema migrations (Prisma migrate) and check that "
                     "they apply cleanly to a fresh database.",
    "deploy-preview": "Build the web app and deploy a preview environment to Vercel, then report the preview URL "
                      "and any build warnings.",
}

# Descriptions that say nothing about when to load the skill.
WEAK: dict[str, str] = {
    "run-tests": "Helpful notes.",
    "changelog": "Miscellaneous guidance.",
    "db-migrations": "Things to remember.",
    "deploy-preview": "Project conventions.",
}

QUERIES: list[tuple[str, str | None]] = [
    ("run the unit tests and tell me which ones fail", "run-tests"),
    ("can you run the test suite? I think parse.test.ts is broken", "run-tests"),
    ("tests are red on my branch, run them and list the failures", "run-tests"),
    ("pls run vitest and show failing assertions", "run-tests"),
    ("check whether the tests pass after my refactor", "run-tests"),
    ("which tests fail right now", "run-tests"),
    ("add a changelog entry for the csv export", "changelog"),
    ("write release notes for version 2.4.0", "changelog"),
    ("update CHANGELOG.md with the bug fixes from this week", "changelog"),
    ("draft the release note for the monthly totals feature", "changelog"),
    ("changelog: mention the new dark mode toggle", "changelog"),
    ("what should go in the release notes for this PR", "changelog"),
    ("create a migration that adds an email column to users", "db-migrations"),
    ("roll back the last prisma migration", "db-migrations"),
    ("does the new migration apply cleanly on an empty database?", "db-migrations"),
    ("add an index on orders.created_at with a migration", "db-migrations"),
    ("review the schema migration in prisma/migrations/2024_add_teams", "db-migrations"),
    ("rename the column total to amount in the invoices table", "db-migrations"),
    ("deploy a preview of this branch", "deploy-preview"),
    ("build the app and give me a vercel preview link", "deploy-preview"),
    ("push a preview deployment so design can review it", "deploy-preview"),
    ("spin up a preview env for PR 412", "deploy-preview"),
    ("can I get a preview url for the landing page changes", "deploy-preview"),
    ("redeploy the preview, the last build failed", "deploy-preview"),
    ("explain what this regex in utils/slug.ts does", None),
    ("rename the variable tmp to buffer in reader.ts", None),
    ("why is my editor showing a type error on line 40 of app.tsx", None),
    ("write a docstring for the parseInvoice function", None),
    ("what does the useDebounce hook return", None),
    ("convert this callback code to async/await", None),
    ("how do I center a div in this layout", None),
    ("summarise what src/server/auth.ts does", None),
]

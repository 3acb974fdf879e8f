"""A third hand-labelled mining set: requests worded differently (issue 31 §4).

Written by hand before any tuning for it. Four projects (a Go service, a Hugo docs
site, a Flutter app, a dbt/Airflow pipeline), the four hosts of tests/sleep/mine_hard.py,
35 recurring tasks and 9 near-miss pairs (the second round, ``TASKS_R31``, adds two projects,
16 tasks and 4 pairs: 51 tasks, 13 pairs). What the earlier sets have little of:

- paraphrases that share few words ("regenerate the sqlc code" / "I changed
  queries.sql, redo the generated Go" / "refresh internal/db from the SQL files");
- the same request in German, French, Spanish and Chinese beside English;
- tasks whose changing argument is only a file path (``crashes/ios-1841.log``,
  ``models/marts/orders.sql``): one task, whatever the path;
- near-miss pairs whose one differing argument is a word (race / coverage, up / down,
  iOS / Android) or only a path's name (``config/staging.env`` / ``config/production.env``,
  ``seeds/dev/`` / ``seeds/ci/``, ``content/de/`` / ``content/es/``);
- turns that recorded no actions (every fourth member: a host or a turn without tool
  records), so the words alone must carry them.

Split (deterministic, recorded by :func:`split_of`): the near-miss pairs, and separately
the single tasks, are ordered by the sha1 of their key (a pair by its first key) and
alternate tune, held, tune, ... A pair is never split. Tune on "tune" only; the "held"
half is the honest figure (tests/sleep/mine_score.py scores both).

``build()`` returns a mine_corpus.Corpus plus the split of every task.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone

import mine_corpus as mc

from sleep.sessions import Session

HOSTS = ("claude-code", "codex", "copilot-vscode", "copilot-cli")
BASE = datetime(2026, 9, 7, 8, 0, tzinfo=timezone.utc)

PROJECTS = {
    "payroll": "/home/mei/work/payroll-svc",  # Go service, Postgres, sqlc
    "docs": "/home/mei/work/docs-site",  # Hugo site in four languages
    "mobile": "/home/mei/work/tidepool-app",  # Flutter app
    "pipe": "/home/mei/work/data-pipeline",  # dbt + Airflow
    "infra": "/home/mei/work/infra",  # Terraform + Kubernetes (round 2)
    "shop": "/home/mei/work/shop-web",  # Rails + a JS frontend (round 2)
    "api": "/home/mei/work/orders-api",  # FastAPI + Alembic + a generated TS client (round 3)
    "ops": "/home/mei/work/ops",  # Ansible inventories and playbooks (round 3)
    "crate": "/home/mei/work/ripmap",  # a Rust CLI: cargo, clippy, insta, criterion (round 4)
    "ml": "/home/mei/work/segment-ml",  # PyTorch training with YAML configs (round 4)
    "thesis": "/home/mei/work/thesis",  # a LaTeX thesis (round 4)
}


@dataclass
class Task:
    key: str
    project: str
    shell: list[str]
    files: list[str]
    members: list[mc.Member]
    near_miss: tuple[str, ...] = ()
    final: str = "Done."


m = mc.m
T = Task
TASKS: list[Task] = [
    # ------------------------------------------------------------------ payroll-svc (Go)
    T("payroll/test-race", "payroll", ["go test"], [], [
        m("run the go tests with the race detector"),
        m("go test -race ./... and tell me what breaks"),
        m("lass die Tests mit dem Race-Detector laufen"),
        m("lance les tests avec le détecteur de race conditions"),
        m("ejecuta los tests con -race y dime qué falla"),
        m("用 race 检测器跑一下 go 测试"),
    ], near_miss=("payroll/test-cover",), final="No data races found."),
    T("payroll/test-cover", "payroll", ["go test"], [], [
        m("run the go tests with coverage"),
        m("go test -cover ./... and tell me the percentage"),
        m("lass die Tests mit Coverage laufen und zeig mir die Abdeckung"),
        m("lance les tests avec la couverture de code"),
        m("用覆盖率模式跑一下 go 测试"),
    ], near_miss=("payroll/test-race",), final="Coverage: 71.4% of statements."),
    T("payroll/sqlc", "payroll", ["sqlc generate"], ["internal/db/queries.sql.go"], [
        m("regenerate the sqlc code"),
        m("I changed queries.sql, redo the generated Go"),
        m("the db layer is stale after my query edits, run the generator"),
        m("sqlc generate pls"),
        m("refresh internal/db from the SQL files"),
    ], final="Regenerated internal/db."),
    T("payroll/migrate-up", "payroll", ["migrate"], [], [
        m("apply the pending database migrations"),
        m("migrate up on my local postgres"),
        m("bring the schema to the latest version"),
        m("führe die ausstehenden Migrationen aus"),
    ], near_miss=("payroll/migrate-down",), final="Applied 2 migrations."),
    T("payroll/migrate-down", "payroll", ["migrate"], [], [
        m("roll back the last database migration"),
        m("migrate down one step on my local postgres"),
        m("undo the most recent schema change"),
        m("mach die letzte Migration rückgängig"),
    ], near_miss=("payroll/migrate-up",), final="Rolled back 0042_payslip_pdf."),
    T("payroll/lint", "payroll", ["golangci-lint run"], ["internal/http/payslip.go"], [
        m("fix the golangci-lint findings"),
        m("the linter job on CI is red, clean it up"),
        m("make golangci-lint happy"),
        m("address the lint complaints in the Go code"),
        m("corrige los avisos del linter"),
    ], final="golangci-lint is clean."),
    T("payroll/review-pr", "payroll", ["gh pr diff"], [], [
        m("review PR 418"),
        m("take a look at #422 and leave comments"),
        m("can you go over the open pull request from Sam and flag problems"),
        m("critique the changes in the PR I just opened"),
        m("审查一下这个 PR 的改动"),
    ], final="Two comments left on the PR."),
    T("payroll/handler-tests", "payroll", ["go test"], [], [
        m("add table-driven tests for internal/http/payslip.go", files=["internal/http/payslip_test.go"]),
        m("write tests covering internal/http/employee.go", files=["internal/http/employee_test.go"]),
        m("internal/http/tax.go has no tests, cover it", files=["internal/http/tax_test.go"]),
        m("need unit tests for internal/http/export.go", files=["internal/http/export_test.go"]),
    ], final="Added 9 test cases."),
    T("payroll/env-staging", "payroll", [], ["config/staging.env"], [
        m("add the new FEATURE_PAYSLIP_PDF key to config/staging.env"),
        m("config/staging.env is missing the keys from .env.example, add them"),
        m("update config/staging.env with the variables introduced this sprint"),
        m("bring config/staging.env in line with .env.example"),
    ], near_miss=("payroll/env-prod",), final="Added 3 keys."),
    T("payroll/env-prod", "payroll", [], ["config/production.env"], [
        m("add the new FEATURE_PAYSLIP_PDF key to config/production.env"),
        m("config/production.env is missing the keys from .env.example, add them"),
        m("update config/production.env with the variables introduced this sprint"),
        m("bring config/production.env in line with .env.example"),
    ], near_miss=("payroll/env-staging",), final="Added 3 keys."),
    # ------------------------------------------------------------------ docs-site (Hugo)
    T("docs/links", "docs", ["lychee"], [], [
        m("check the docs for broken links"),
        m("find dead URLs in the site"),
        m("some links 404, find which"),
        m("run lychee over content/ and list failures"),
        m("prüf die Doku auf kaputte Links"),
        m("检查文档里的失效链接"),
    ], final="3 broken links, all in content/en/guides/."),
    T("docs/preview", "docs", ["hugo server"], [], [
        m("start the hugo dev server"),
        m("I want to see the site locally"),
        m("serve the docs on localhost so I can look"),
        m("spin up a local preview of the website"),
        m("lance le site en local"),
    ], final="Serving at http://localhost:1313"),
    T("docs/sync-de", "docs", [], ["content/de/guides/install.md"], [
        m("bring content/de/ up to date with the English pages"),
        m("the pages under content/de/ lag behind English, update them"),
        m("translate what changed in content/en/ into content/de/"),
        m("aktualisiere content/de/ nach den englischen Seiten"),
    ], near_miss=("docs/sync-es",), final="Updated 4 German pages."),
    T("docs/sync-es", "docs", [], ["content/es/guides/install.md"], [
        m("bring content/es/ up to date with the English pages"),
        m("the pages under content/es/ lag behind English, update them"),
        m("translate what changed in content/en/ into content/es/"),
        m("actualiza content/es/ según las páginas en inglés"),
    ], near_miss=("docs/sync-de",), final="Updated 4 Spanish pages."),
    T("docs/proofread", "docs", [], ["content/blog/2026-03-launch.md"], [
        m("proofread the new blog post"),
        m("fix typos and grammar in the release notes draft", files=["content/blog/release-2-4.md"]),
        m("go over content/blog/2026-03-launch.md for spelling mistakes"),
        m("copy-edit the announcement", files=["content/blog/2026-05-pricing.md"]),
        m("corrige l'orthographe de l'article", files=["content/fr/blog/2026-03-launch.md"]),
    ], final="Fixed 11 typos."),
    T("docs/api-ref", "docs", ["make api-docs"], ["content/en/reference/api.md"], [
        m("regenerate the API reference"),
        m("the endpoint docs are out of date, rebuild them from the OpenAPI spec"),
        m("make api-docs"),
        m("refresh the REST reference pages"),
        m("重新生成 API 参考文档"),
    ], final="Regenerated 38 endpoint pages."),
    T("docs/publish-preview", "docs", ["hugo", "aws s3 sync"], [], [
        m("publish the docs to the preview bucket"),
        m("push the site to preview"),
        m("deploy the docs, preview only"),
        m("veröffentliche die Doku in der Vorschau"),
    ], near_miss=("docs/publish-live",), final="Published to https://preview.docs.example"),
    T("docs/publish-live", "docs", ["hugo", "aws s3 sync"], [], [
        m("publish the docs to the live site"),
        m("push the site live"),
        m("deploy the docs to production"),
        m("veröffentliche die Doku live"),
    ], near_miss=("docs/publish-preview",), final="Published to https://docs.example"),
    # ------------------------------------------------------------------ tidepool-app (Flutter)
    T("mobile/build-ios", "mobile", ["flutter build"], [], [
        m("build the iOS release"),
        m("make an ipa for TestFlight"),
        m("flutter build ios --release"),
        m("erstelle den iOS-Release-Build"),
        m("打包 iOS 发布版本"),
    ], near_miss=("mobile/build-android",), final="Built build/ios/ipa/tidepool.ipa"),
    T("mobile/build-android", "mobile", ["flutter build"], [], [
        m("build the Android release"),
        m("make an aab for the Play Store"),
        m("flutter build appbundle --release"),
        m("erstelle den Android-Release-Build"),
        m("打包 Android 发布版本"),
    ], near_miss=("mobile/build-ios",), final="Built build/app/outputs/bundle/release/app-release.aab"),
    T("mobile/goldens", "mobile", ["flutter test"], ["test/goldens/home_screen.png"], [
        m("update the golden files"),
        m("the screenshot tests fail after the theme change, regenerate them if it's intended"),
        m("flutter test --update-goldens"),
        m("refresh the reference images of the widget tests"),
        m("actualiza los goldens"),
    ], final="Updated 6 golden images."),
    T("mobile/l10n", "mobile", ["flutter gen-l10n"], ["lib/l10n/app_localizations.dart"], [
        m("regenerate the localization classes"),
        m("I added strings to lib/l10n/app_en.arb, run gen-l10n"),
        m("the AppLocalizations getters are missing for the new keys, regenerate"),
        m("flutter gen-l10n"),
        m("régénère les fichiers de traduction"),
    ], final="Regenerated AppLocalizations."),
    T("mobile/build-number", "mobile", [], ["pubspec.yaml"], [
        m("increment the build number"),
        m("bump the version code for a new store upload"),
        m("pubspec needs the next +build"),
        m("raise the build counter in pubspec.yaml"),
        m("erhöhe die Build-Nummer"),
    ], final="Version is now 2.4.0+87."),
    T("mobile/crash", "mobile", [], [], [
        m("look at crashes/2026-03-04.txt and tell me the cause", files=["crashes/2026-03-04.txt"]),
        m("here's a crash log at crashes/ios-1841.log, what's going on", files=["crashes/ios-1841.log"]),
        m("diagnose crashes/android-anr-77.txt", files=["crashes/android-anr-77.txt"]),
        m("figure out the crash in crashes/sentry-export.json", files=["crashes/sentry-export.json"]),
    ], final="A null Location in MapController.onResume."),
    T("mobile/run-dev", "mobile", ["flutter run"], [], [
        m("run the app with the dev flavor"),
        m("flutter run --flavor dev"),
        m("start it on the emulator against the dev backend"),
        m("lance l'app en flavor dev"),
    ], near_miss=("mobile/run-prod",), final="Running on emulator-5554 (dev)."),
    T("mobile/run-prod", "mobile", ["flutter run"], [], [
        m("run the app with the prod flavor"),
        m("flutter run --flavor prod"),
        m("start it on the emulator against the prod backend"),
        m("lance l'app en flavor prod"),
    ], near_miss=("mobile/run-dev",), final="Running on emulator-5554 (prod)."),
    # ------------------------------------------------------------------ data-pipeline (dbt + Airflow)
    T("pipe/dbt-test", "pipe", ["dbt test"], [], [
        m("run the dbt tests"),
        m("check the data quality tests on the warehouse models"),
        m("are the schema tests passing? dbt test"),
        m("validate the models: not_null, unique and friends"),
        m("führe die dbt-Tests aus"),
        m("运行 dbt 测试"),
    ], final="2 tests fail: unique_orders_id, not_null_customers_email."),
    T("pipe/dag-import", "pipe", ["airflow dags"], [], [
        m("make sure the airflow DAGs import without errors"),
        m("check dags/ for import errors"),
        m("do the DAG files still parse?"),
        m("airflow dags list-import-errors"),
        m("vérifie que les DAGs se chargent"),
    ], final="No import errors."),
    T("pipe/model-docs", "pipe", [], [], [
        m("document the columns of models/marts/orders.sql in its yml", files=["models/marts/orders.yml"]),
        m("write descriptions for models/marts/customers.sql", files=["models/marts/customers.yml"]),
        m("models/staging/stg_payments.sql has no docs, add them", files=["models/staging/stg_payments.yml"]),
        m("add schema.yml entries for models/marts/revenue.sql", files=["models/marts/schema.yml"]),
    ], final="Documented 14 columns."),
    T("pipe/slow-orders", "pipe", ["airflow tasks"], [], [
        m("why is the nightly orders job so slow"),
        m("the orders DAG takes 3 hours now, find the bottleneck"),
        m("profile the orders pipeline and suggest speedups"),
        m("¿por qué tarda tanto el job de pedidos?"),
        m("订单任务为什么这么慢"),
    ], final="The fct_orders model scans all partitions."),
    T("pipe/backfill-orders", "pipe", ["airflow dags backfill"], [], [
        m("backfill the orders table for last week"),
        m("rerun the orders load for the missing days"),
        m("airflow backfill of orders_daily, 7 days"),
        m("lade die Bestellungen der letzten Woche nach"),
    ], near_miss=("pipe/backfill-events",), final="Backfilled 7 days of orders."),
    T("pipe/backfill-events", "pipe", ["airflow dags backfill"], [], [
        m("backfill the events table for last week"),
        m("rerun the events load for the missing days"),
        m("airflow backfill of events_daily, 7 days"),
        m("lade die Events der letzten Woche nach"),
    ], near_miss=("pipe/backfill-orders",), final="Backfilled 7 days of events."),
    T("pipe/freshness", "pipe", ["dbt source"], [], [
        m("is the warehouse data fresh?"),
        m("check source freshness"),
        m("when did the raw tables last get loaded"),
        m("dbt source freshness and tell me what's stale"),
        m("¿están actualizados los datos del almacén?"),
    ], final="raw.events is 30 hours stale."),
    T("pipe/seeds-dev", "pipe", ["dbt seed"], ["seeds/dev/countries.csv"], [
        m("load the CSVs in seeds/dev/ into the warehouse"),
        m("dbt seed from seeds/dev/ please"),
        m("refresh the reference data from seeds/dev/"),
        m("seeds/dev/ changed, reload them"),
    ], near_miss=("pipe/seeds-ci",), final="Loaded 5 seeds."),
    T("pipe/seeds-ci", "pipe", ["dbt seed"], ["seeds/ci/countries.csv"], [
        m("load the CSVs in seeds/ci/ into the warehouse"),
        m("dbt seed from seeds/ci/ please"),
        m("refresh the reference data from seeds/ci/"),
        m("seeds/ci/ changed, reload them"),
    ], near_miss=("pipe/seeds-dev",), final="Loaded 5 seeds."),
]

# The second round (issue 31 §4, round 2): written before any tuning on it, split by the same
# rule among themselves (the first round's split is unchanged). Two more projects (Terraform /
# Kubernetes infrastructure, a Rails shop with a JS frontend), 16 tasks, 4 near-miss pairs:
# an environment in other words ("production" / "Produktion" / "生产"), opposites worded
# differently ("scale up" / "add more pods" vs "scale down" / "reduce"), a flag turned on / off
# (in English and German), a typed locale directory; single tasks with an argument only in a
# path (``modules/<name>/versions.tf``), with an order number, and in five languages.
TASKS_R31: list[Task] = [
    # ------------------------------------------------------------------ infra (Terraform, Kubernetes)
    T("infra/plan-staging", "infra", ["terraform plan"], [], [
        m("terraform plan for envs/staging/"),
        m("show me what would change in staging"),
        m("run a plan against the staging workspace"),
        m("zeig mir den Terraform-Plan für Staging"),
        m("预览 staging 环境的变更"),
    ], near_miss=("infra/plan-prod",), final="Plan: 2 to add, 1 to change, 0 to destroy."),
    T("infra/plan-prod", "infra", ["terraform plan"], [], [
        m("terraform plan for envs/prod/"),
        m("show me what would change in production"),
        m("run a plan against the prod workspace"),
        m("zeig mir den Terraform-Plan für Produktion"),
        m("预览生产环境的变更"),
    ], near_miss=("infra/plan-staging",), final="Plan: 0 to add, 1 to change, 0 to destroy."),
    T("infra/scale-up", "infra", ["kubectl scale"], [], [
        m("scale the api deployment up to 6 replicas"),
        m("we're getting a traffic spike, add more api pods"),
        m("bump the api replicas for the launch"),
        m("augmente le nombre de pods de l'api"),
    ], near_miss=("infra/scale-down",), final="deployment.apps/api scaled to 6"),
    T("infra/scale-down", "infra", ["kubectl scale"], [], [
        m("scale the api deployment down to 2 replicas"),
        m("the traffic spike is over, get rid of the extra api pods"),
        m("reduce the api replicas back to normal"),
        m("réduis le nombre de pods de l'api"),
    ], near_miss=("infra/scale-up",), final="deployment.apps/api scaled to 2"),
    T("infra/certs", "infra", ["kubectl get"], [], [
        m("check when the TLS certificates expire"),
        m("are any of our certs about to run out?"),
        m("list the certificate expiry dates in the cluster"),
        m("¿cuándo caducan los certificados?"),
        m("检查证书什么时候过期"),
    ], final="api-tls expires in 12 days."),
    T("infra/fmt", "infra", ["terraform fmt", "tflint"], [], [
        m("format the terraform files and run tflint"),
        m("tidy up the HCL"),
        m("terraform fmt -recursive"),
        m("make the .tf files pass the linter"),
        m("formatiere die Terraform-Dateien"),
    ], final="Formatted 4 files; tflint is clean."),
    T("infra/provider-pin", "infra", [], [], [
        m("bump the provider version in modules/vpc/versions.tf", files=["modules/vpc/versions.tf"]),
        m("modules/rds/versions.tf still pins the old aws provider, update it", files=["modules/rds/versions.tf"]),
        m("update the aws provider constraint in modules/eks/versions.tf", files=["modules/eks/versions.tf"]),
        m("raise the provider pin in modules/s3/versions.tf", files=["modules/s3/versions.tf"]),
    ], final="aws provider pinned to ~> 5.40."),
    T("infra/crashloop", "infra", ["kubectl logs"], [], [
        m("why are the worker pods crashlooping?"),
        m("look at the worker logs and tell me what's failing"),
        m("the worker keeps restarting, find out why"),
        m("pourquoi les pods worker redémarrent en boucle ?"),
    ], final="The worker runs out of memory loading the catalogue."),
    # ------------------------------------------------------------------ shop-web (Rails + JS)
    T("shop/flag-on", "shop", [], ["config/features.yml"], [
        m("enable the new_checkout feature flag"),
        m("turn new_checkout on"),
        m("switch the new checkout on for everyone"),
        m("schalte das new_checkout Flag ein"),
    ], near_miss=("shop/flag-off",), final="new_checkout: true"),
    T("shop/flag-off", "shop", [], ["config/features.yml"], [
        m("disable the new_checkout feature flag"),
        m("turn new_checkout off"),
        m("switch the new checkout off again, it's breaking payments"),
        m("schalte das new_checkout Flag aus"),
    ], near_miss=("shop/flag-on",), final="new_checkout: false"),
    T("shop/specs", "shop", ["bundle exec rspec"], [], [
        m("run the rspec suite"),
        m("are the specs green?"),
        m("bundle exec rspec and summarize the failures"),
        m("lance les specs rspec"),
        m("跑一下 rspec 测试"),
    ], final="412 examples, 3 failures."),
    T("shop/locale-fr", "shop", [], ["config/locales/fr/app.yml"], [
        m("fill in the missing keys in config/locales/fr/"),
        m("config/locales/fr/ is behind en, add what's missing"),
        m("sync the French translations with the English ones"),
        m("complète les traductions dans config/locales/fr/"),
    ], near_miss=("shop/locale-it",), final="Added 17 French keys."),
    T("shop/locale-it", "shop", [], ["config/locales/it/app.yml"], [
        m("fill in the missing keys in config/locales/it/"),
        m("config/locales/it/ is behind en, add what's missing"),
        m("sync the Italian translations with the English ones"),
        m("completa le traduzioni in config/locales/it/"),
    ], near_miss=("shop/locale-fr",), final="Added 17 Italian keys."),
    T("shop/assets", "shop", ["npm run build"], ["public/assets/application.js"], [
        m("rebuild the frontend bundle"),
        m("the JS changes aren't showing, recompile the assets"),
        m("npm run build"),
        m("regenera los assets del frontend"),
        m("the css is stale in the browser, rebuild it"),
    ], final="Built public/assets."),
    T("shop/n-plus-one", "shop", ["bundle exec rails"], ["app/controllers/orders_controller.rb"], [
        m("the orders page is slow, look for N+1 queries"),
        m("find the missing includes on the admin dashboard queries"),
        m("why does /products fire hundreds of SQL queries?"),
        m("bullet is complaining, fix the N+1"),
    ], final="Added includes(:line_items)."),
    T("shop/refund", "shop", ["bin/rails runner"], [], [
        m("refund order 5512"),
        m("the customer on order 5530 wants their money back, process it"),
        m("issue a refund for order 5601"),
        m("Rückerstattung für Bestellung 5620 bitte"),
    ], final="Refunded 49.90 EUR."),
]

# The third round (issue 31 §4, round 3): written and committed before any run on it, after the
# miner's third-round changes, to check them on requests they were not written against. Its own
# two projects, 12 tasks (4 near-miss pairs, 4 single tasks), 4 one-offs; split among themselves by
# the same rule. A maintenance switch on / off in other words and German; fixtures named by an
# identifier (``users_snapshot`` / ``orders_snapshot``); workers scaled out / in; hosts added to a
# typed inventory directory (``inventories/eu/`` / ``inventories/us/``) also in other words;
# paraphrases sharing only the command, in four languages. ``build_round3()`` builds it alone.
TASKS_R32: list[Task] = [
    # ------------------------------------------------------------------ orders-api (FastAPI)
    T("api/maint-on", "api", [], ["config/maintenance.toml"], [
        m("switch maintenance mode on"),
        m("put the API into maintenance mode"),
        m("turn maintenance mode on before the migration"),
        m("aktiviere den Wartungsmodus"),
    ], near_miss=("api/maint-off",), final="maintenance = true"),
    T("api/maint-off", "api", [], ["config/maintenance.toml"], [
        m("switch maintenance mode off"),
        m("take the API out of maintenance mode"),
        m("turn maintenance mode off, the migration is done"),
        m("deaktiviere den Wartungsmodus"),
    ], near_miss=("api/maint-on",), final="maintenance = false"),
    T("api/fixture-users", "api", ["python scripts/make_fixtures.py"], ["tests/fixtures/users_snapshot.json"], [
        m("refresh the users_snapshot fixture"),
        m("the users_snapshot fixture is stale, regenerate it"),
        m("regenerate the user fixtures from the staging dump"),
        m("erneuere die Fixtures für die Benutzer"),
    ], near_miss=("api/fixture-orders",), final="Wrote 120 users."),
    T("api/fixture-orders", "api", ["python scripts/make_fixtures.py"], ["tests/fixtures/orders_snapshot.json"], [
        m("refresh the orders_snapshot fixture"),
        m("the orders_snapshot fixture is stale, regenerate it"),
        m("regenerate the order fixtures from the staging dump"),
        m("erneuere die Fixtures für die Bestellungen"),
    ], near_miss=("api/fixture-users",), final="Wrote 480 orders."),
    T("api/client", "api", ["npm run gen:client"], ["web/src/api/generated.ts"], [
        m("regenerate the TypeScript client"),
        m("the frontend types are out of date with the API, rebuild them"),
        m("npm run gen:client"),
        m("refresh the generated SDK"),
        m("重新生成客户端代码"),
    ], final="Regenerated web/src/api/generated.ts."),
    T("api/revision", "api", ["alembic revision"], ["migrations/versions/7f3a_add_fields.py"], [
        m("autogenerate an alembic revision for my model changes"),
        m("I added a column to models.py, make the migration"),
        m("alembic revision --autogenerate"),
        m("create the migration file for the new fields"),
        m("genera la migración para los cambios del modelo"),
    ], final="Created migrations/versions/7f3a_add_fields.py."),
    # ------------------------------------------------------------------ ops (Ansible)
    T("ops/scale-out", "ops", ["ansible-playbook"], [], [
        m("scale the workers out to 8"),
        m("we need more worker capacity for the batch run, scale out"),
        m("add worker nodes for tonight's batch"),
        m("augmente le nombre de workers"),
    ], near_miss=("ops/scale-in",), final="8 workers running."),
    T("ops/scale-in", "ops", ["ansible-playbook"], [], [
        m("scale the workers in to 2"),
        m("the batch run finished, scale in the workers"),
        m("remove the extra worker nodes"),
        m("réduis le nombre de workers"),
    ], near_miss=("ops/scale-out",), final="2 workers running."),
    T("ops/inv-eu", "ops", [], ["inventories/eu/hosts.yml"], [
        m("add the new web nodes to inventories/eu/"),
        m("the European inventory is missing web-07, add it"),
        m("register the new EU machines in the inventory"),
        m("füge die neuen EU-Server ins Inventar ein"),
    ], near_miss=("ops/inv-us",), final="Added web-07, web-08."),
    T("ops/inv-us", "ops", [], ["inventories/us/hosts.yml"], [
        m("add the new web nodes to inventories/us/"),
        m("the US inventory is missing web-12, add it"),
        m("register the new US machines in the inventory"),
        m("füge die neuen US-Server ins Inventar ein"),
    ], near_miss=("ops/inv-eu",), final="Added web-12."),
    T("ops/disk", "ops", ["ssh"], [], [
        m("why is the disk full on the db host"),
        m("df says / is at 98% on db-1, find what's eating space"),
        m("clean up disk space on the database server"),
        m("le disque du serveur db est plein, regarde pourquoi"),
    ], final="Old WAL archives: 41 GB removed."),
    T("ops/certs", "ops", ["ansible-playbook"], ["roles/certbot/tasks/main.yml"], [
        m("renew the letsencrypt certs"),
        m("the TLS certificate expires on Friday, renew it"),
        m("certbot renew on the proxies"),
        m("erneuere die Zertifikate"),
        m("续签 TLS 证书"),
    ], final="Renewed 3 certificates."),
]
ONEOFFS_R32: list[tuple[str, str, list[str], list[str]]] = [
    ("api", "explain how the rate limiter counts requests", [], ["app/ratelimit.py"]),
    ("api", "refresh the products_snapshot fixture", ["python scripts/make_fixtures.py"],
     ["tests/fixtures/products_snapshot.json"]),
    ("ops", "add the new web nodes to inventories/asia/", [], ["inventories/asia/hosts.yml"]),
    ("ops", "scale the workers to zero for the weekend", ["ansible-playbook"], []),
]

# The fourth round (issue 31 §4, round 4): written and committed before any run on it, before the
# miner's fourth-round changes. Its own three projects (a Rust CLI, a PyTorch training repo, a LaTeX
# thesis), 16 tasks (4 near-miss pairs, 8 single tasks), 5 one-offs; split among themselves by the
# same rule. Opposites in other words (accept / reject the pending snapshots); arguments that are
# only a path (``benches/parse.rs`` / ``benches/render.rs``, ``configs/small.yaml`` /
# ``configs/large.yaml``, ``chapters/intro.tex`` / ``chapters/method.tex``); paraphrases sharing
# few words or only the command; German, French, Spanish, Italian, Portuguese, Chinese and
# Japanese. ``build_round4()`` builds it alone.
TASKS_R33: list[Task] = [
    # ------------------------------------------------------------------ ripmap (Rust CLI)
    T("crate/clippy", "crate", ["cargo clippy"], ["src/main.rs"], [
        m("fix the clippy warnings"),
        m("cargo clippy is noisy again, deal with it properly instead of allow()"),
        m("make the Rust linter pass with -D warnings"),
        m("behebe die Clippy-Warnungen"),
        m("清理一下 clippy 的警告"),
    ], final="clippy is clean."),
    T("crate/bench-parse", "crate", ["cargo bench"], [], [
        m("run benches/parse.rs and compare against the saved baseline"),
        m("how fast is benches/parse.rs now compared to main?"),
        m("did my change slow down benches/parse.rs"),
        m("lance benches/parse.rs et compare avec la référence"),
    ], near_miss=("crate/bench-render",), final="parse: -3.1% (faster)."),
    T("crate/bench-render", "crate", ["cargo bench"], [], [
        m("run benches/render.rs and compare against the saved baseline"),
        m("how fast is benches/render.rs now compared to main?"),
        m("did my change slow down benches/render.rs"),
        m("lance benches/render.rs et compare avec la référence"),
    ], near_miss=("crate/bench-parse",), final="render: +0.4% (noise)."),
    T("crate/snap-accept", "crate", ["cargo insta"], ["tests/snapshots/cli__help.snap"], [
        m("accept the pending insta snapshots"),
        m("the new snapshots look right, keep them"),
        m("cargo insta accept"),
        m("übernimm die neuen Snapshots"),
    ], near_miss=("crate/snap-reject",), final="Accepted 6 snapshots."),
    T("crate/snap-reject", "crate", ["cargo insta"], [], [
        m("reject the pending insta snapshots"),
        m("the new snapshots are wrong, throw them away"),
        m("cargo insta reject"),
        m("verwirf die neuen Snapshots"),
    ], near_miss=("crate/snap-accept",), final="Rejected 6 snapshots."),
    T("crate/release", "crate", ["cargo release"], ["Cargo.toml", "CHANGELOG.md"], [
        m("cut a patch release"),
        m("bump the version, tag it and publish to crates.io"),
        m("ship 0.4.3"),
        m("saca una versión de parche"),
        m("发布一个补丁版本"),
    ], final="Published ripmap 0.4.3."),
    # ------------------------------------------------------------------ segment-ml (PyTorch)
    T("ml/train-small", "ml", ["python train.py"], [], [
        m("start a training run with configs/small.yaml"),
        m("kick off configs/small.yaml on the spare GPU overnight"),
        m("train the model using configs/small.yaml and tell me the final loss"),
        m("lance un entraînement avec configs/small.yaml"),
    ], near_miss=("ml/train-large",), final="Final loss 0.212."),
    T("ml/train-large", "ml", ["python train.py"], [], [
        m("start a training run with configs/large.yaml"),
        m("kick off configs/large.yaml on the spare GPU overnight"),
        m("train the model using configs/large.yaml and tell me the final loss"),
        m("lance un entraînement avec configs/large.yaml"),
    ], near_miss=("ml/train-small",), final="Final loss 0.174."),
    T("ml/eval", "ml", ["python eval.py"], [], [
        m("evaluate the latest checkpoint on the validation split"),
        m("what mIoU does the newest checkpoint get?"),
        m("score runs/latest on val"),
        m("evalúa el último checkpoint"),
        m("最新的 checkpoint 在验证集上效果如何"),
    ], final="mIoU 0.713 on val."),
    T("ml/oom", "ml", [], ["train.py"], [
        m("training crashes with CUDA out of memory, fix it"),
        m("OOM on the GPU again at batch 64"),
        m("make the run fit on the 3090 without shrinking the batch"),
        m("la GPU si riempie durante il training, sistemalo"),
    ], final="Gradient accumulation over 4 steps; fits in 22 GB."),
    T("ml/tensorboard", "ml", ["tensorboard"], [], [
        m("open tensorboard for the last run"),
        m("I want to look at the loss curves"),
        m("show me the training graphs in the browser"),
        m("abre o tensorboard da última execução"),
    ], final="TensorBoard at http://localhost:6006"),
    # ------------------------------------------------------------------ thesis (LaTeX)
    T("thesis/build", "thesis", ["latexmk"], [], [
        m("compile the thesis PDF"),
        m("latexmk -pdf main.tex"),
        m("rebuild the PDF so I can read chapter 3"),
        m("kompiliere die Arbeit neu"),
        m("論文をコンパイルして PDF を作って"),
    ], final="Wrote main.pdf (142 pages)."),
    T("thesis/bib", "thesis", ["biber"], ["refs.bib"], [
        m("fix the bibliography warnings"),
        m("biber complains about missing fields in refs.bib"),
        m("some citations render as ??, sort it out"),
        m("arregla las referencias que faltan"),
    ], final="Fixed 5 entries in refs.bib."),
    T("thesis/tighten-intro", "thesis", [], ["chapters/intro.tex"], [
        m("tighten the prose in chapters/intro.tex"),
        m("chapters/intro.tex is too wordy, shorten it"),
        m("cut chapters/intro.tex down by a page"),
        m("kürze chapters/intro.tex"),
    ], near_miss=("thesis/tighten-method",), final="Cut 410 words."),
    T("thesis/tighten-method", "thesis", [], ["chapters/method.tex"], [
        m("tighten the prose in chapters/method.tex"),
        m("chapters/method.tex is too wordy, shorten it"),
        m("cut chapters/method.tex down by a page"),
        m("kürze chapters/method.tex"),
    ], near_miss=("thesis/tighten-intro",), final="Cut 380 words."),
    T("thesis/wordcount", "thesis", ["texcount"], [], [
        m("how many words is the thesis now"),
        m("texcount on the whole thing"),
        m("give me the current length excluding the bibliography"),
        m("combien de mots fait la thèse ?"),
        m("quante parole ha la tesi adesso?"),
    ], final="38,912 words in the text."),
]
ONEOFFS_R33: list[tuple[str, str, list[str], list[str]]] = [
    ("crate", "run benches/lex.rs once", ["cargo bench"], []),
    ("crate", "explain the lifetime error in src/index.rs", [], ["src/index.rs"]),
    ("ml", "train with configs/tiny.yaml as a smoke test", ["python train.py"], []),
    ("thesis", "tighten the prose in chapters/appendix.tex", [], ["chapters/appendix.tex"]),
    ("thesis", "convert the figures in figs/ to vector PDFs", ["inkscape"], ["figs/pipeline.pdf"]),
]

ONEOFFS: list[tuple[str, str, list[str], list[str]]] = [
    ("payroll", "run the go tests for the vendor directory only", ["go test"], []),
    ("payroll", "what does the withholding calculator do with negative bonuses?", [], ["internal/tax/withholding.go"]),
    ("payroll", "add config/qa.env copied from staging", [], ["config/qa.env"]),
    ("docs", "translate content/en/faq.md into Japanese", [], ["content/ja/faq.md"]),
    ("docs", "publish the docs to the partner mirror", ["hugo", "rsync"], []),
    ("docs", "why is the sidebar empty on mobile?", [], ["layouts/partials/sidebar.html"]),
    ("mobile", "build the web version", ["flutter build"], []),
    ("mobile", "rename the Settings screen to Preferences everywhere", [], ["lib/screens/settings.dart"]),
    ("mobile", "run the app with the staging flavor on my phone", ["flutter run"], []),
    ("pipe", "backfill the sessions table for March", ["airflow dags backfill"], []),
    ("pipe", "explain the difference between stg_orders and fct_orders", [], ["models/marts/fct_orders.sql"]),
    ("pipe", "load seeds/demo/ for the sales demo", ["dbt seed"], ["seeds/demo/products.csv"]),
]
ONEOFFS_R31: list[tuple[str, str, list[str], list[str]]] = [
    ("infra", "terraform plan for envs/dev/", ["terraform plan"], []),
    ("infra", "scale the worker deployment to zero for the weekend", ["kubectl scale"], []),
    ("infra", "what does the nat gateway cost us per month?", [], []),
    ("shop", "enable the dark_mode feature flag", [], ["config/features.yml"]),
    ("shop", "fill in the missing keys in config/locales/ja/", [], ["config/locales/ja/app.yml"]),
    ("shop", "run only the checkout specs", ["bundle exec rspec"], []),
]


def _sha(text: str) -> str:
    return hashlib.sha1(text.encode("utf-8")).hexdigest()


def split_of(extended: bool = True) -> dict[str, str]:
    """Pairs, then single tasks, each ordered by sha1 of their (first) key, alternate tune / held;
    the second round's tasks (``extended``) split the same way among themselves."""
    out = _split(TASKS)
    if extended:
        out.update(_split(TASKS_R31))
    return out


def _split(tasks: list[Task]) -> dict[str, str]:
    pairs = sorted({tuple(sorted((t.key, *t.near_miss))) for t in tasks if t.near_miss}, key=lambda p: _sha(p[0]))
    singles = sorted((t.key for t in tasks if not t.near_miss), key=_sha)
    out: dict[str, str] = {}
    for n, pair in enumerate(pairs):
        for key in pair:
            out[key] = "tune" if n % 2 == 0 else "held"
    for n, key in enumerate(singles):
        out[key] = "tune" if n % 2 == 0 else "held"
    return out


def _at(day: float) -> str:
    t = BASE + timedelta(days=day)
    return t.strftime("%Y-%m-%dT%H:%M:%S.") + f"{t.microsecond // 1000:03d}Z"


def _session(host: str, sid: str, project: str, day: float) -> Session:
    s = Session(host, sid, project_dir=PROJECTS[project],
                entrypoint={"claude-code": "cli", "codex": "codex_cli_rs"}.get(host))
    s.note_time(_at(day))
    return s


def build_round3() -> tuple[mc.Corpus, dict[str, str]]:
    """The third round alone (:data:`TASKS_R32`, its own projects), split among its own tasks."""
    corpus = _corpus(TASKS_R32, ONEOFFS_R32, "p3-oneoff")
    return corpus, _split(TASKS_R32)


def build_round4() -> tuple[mc.Corpus, dict[str, str]]:
    """The fourth round alone (:data:`TASKS_R33`, its own projects), split among its own tasks."""
    corpus = _corpus(TASKS_R33, ONEOFFS_R33, "p4-oneoff")
    return corpus, _split(TASKS_R33)


def build(extended: bool = True) -> tuple[mc.Corpus, dict[str, str]]:
    """Every session of the set (deterministic), the label of every prompt, and each task's split;
    ``extended``: with the second round's tasks and one-offs (False: the first round's alone).

    Each member is the first prompt of its own session; every fourth member's turn
    recorded no actions ((task number + member number) % 4 == 3)."""
    tasks = TASKS + (TASKS_R31 if extended else [])
    return _corpus(tasks, ONEOFFS + (ONEOFFS_R31 if extended else []), "p-oneoff"), split_of(extended)


def _corpus(tasks: list[Task], oneoffs: list[tuple[str, str, list[str], list[str]]], oneoff_prefix: str
            ) -> mc.Corpus:
    sessions: list[Session] = []
    labels: dict[tuple[str, str, int], str] = {}
    for ci, t in enumerate(tasks):
        for mi, mem in enumerate(t.members):
            host = mem.host or HOSTS[(ci * 3 + mi) % len(HOSTS)]
            day = (ci * 2 + mi * 5) % 21 + mi * 0.07
            s = _session(host, f"p-{t.key.replace('/', '-')}-{mi}", t.project, day)
            shell = mem.shell if mem.shell is not None else t.shell
            files = mem.files if mem.files is not None else t.files
            quiet = (ci + mi) % 4 == 3
            if quiet:
                shell, files = [], []
            idx = mc._turn(s, mem.text, day, shell, files, t.final)
            labels[(s.host, s.session_id, idx)] = t.key
            if (ci + mi) % 6 == 0:
                text, reason = mc.NOISE[(ci + mi) % len(mc.NOISE)]
                idx = mc._turn(s, text, day + 0.003, [], [], "OK.")
                labels[(s.host, s.session_id, idx)] = f"noise:{reason}"
            if not quiet:
                s.tools = {"Bash": 2, "Read": 3} if s.prompts[0].shell else {"Read": 2, "Edit": 1}
            sessions.append(s)
    for oi, (project, text, shell, files) in enumerate(oneoffs):
        s = _session(HOSTS[oi % len(HOSTS)], f"{oneoff_prefix}-{oi}", project, oi % 19 + 0.5)
        idx = mc._turn(s, text, oi % 19 + 0.5, shell, files, "Here you go.")
        labels[(s.host, s.session_id, idx)] = f"oneoff:{oi}"
        sessions.append(s)
    pairs = {frozenset((t.key, o)) for t in tasks for o in t.near_miss}
    return mc.Corpus(sessions, labels, pairs)

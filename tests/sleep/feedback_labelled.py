"""A hand-labelled set of what people type right after an agent answered (issue 30 §2).

Written before the classifier was changed, and not edited to fit it. Each message
is one of:

- ``correction``: the person corrects the agent or states a standing rule, however
  it is worded ("no, use pnpm", "always use pnpm here", "use conventional commits:
  ...", "prefer X", "from now on ...", "please don't ...", a correction inside a
  longer message), in English, French, German and Spanish (the miner's languages);
- ``task``: a plain request, many of them worded like a correction ("use the
  logger module to add a debug line to parse()", "no rush, but ...", "stop the
  dev server and ...", "make the button always visible");
- ``ack``: thanks and acknowledgements.

A correction names the words its written rule must hold (``terms``, case-insensitive)
and, for a correction inside a longer message, a word of the rest that must not be
in the rule (``absent``). ``split``: every other message of each kind is "tune"
(looked at while changing the classifier), the others "held" (measured only).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Labelled:
    kind: str  # correction | task | ack
    lang: str
    text: str
    terms: tuple[str, ...] = ()
    absent: tuple[str, ...] = ()
    split: str = ""


C, T, A = "correction", "task", "ack"

_RAW: list[tuple] = [
    # --- corrections, English: "no" and its cousins -----------------------------------------
    (C, "en", "no, use pnpm not npm. this repo is pnpm only.", ("pnpm", "npm")),
    (C, "en", "nope, we use yarn here", ("yarn",)),
    (C, "en", "No. The tests go in tests/unit, not next to the source.", ("tests/unit",)),
    (C, "en", "no no, run pnpm gen api instead of editing the client by hand", ("pnpm gen api",)),
    (C, "en", "that's wrong, the config lives in config/app.yaml", ("config/app.yaml",)),
    (C, "en", "wrong file, the routes are in src/server/routes.ts", ("src/server/routes.ts",)),
    (C, "en", "not like that, keep the imports sorted alphabetically", ("imports", "sorted")),
    (C, "en", "incorrect: the port is 8080, not 3000", ("8080",)),
    (C, "en", "you forgot to run the linter before committing. run pnpm lint first", ("pnpm lint",)),
    (C, "en", "nah, use ruff format instead of black", ("ruff", "black")),
    (C, "en", "It should be snake_case, not camelCase, in this codebase.", ("snake_case", "camelCase")),
    (C, "en", "I said use uv, not pip", ("uv", "pip")),
    # --- don't / never / stop ------------------------------------------------------------------
    (C, "en", "don't use npm, use pnpm", ("pnpm", "npm")),
    (C, "en", "never run terraform apply yourself", ("terraform apply",)),
    (C, "en", "please don't touch the lockfile", ("lockfile",)),
    (C, "en", "Please don't add emojis to commit messages.", ("emojis", "commit")),
    (C, "en", "do not edit files under src/gen, they are generated", ("src/gen",)),
    (C, "en", "stop adding comments to every line", ("comments",)),
    (C, "en", "don't mock the database in integration tests", ("mock", "database")),
    (C, "en", "never push to main directly", ("push", "main")),
    (C, "en", "please never use `any` in TypeScript code", ("any",)),
    (C, "en", "don't ever run migrations against production", ("migrations", "production")),
    # --- imperative rules without "no" ----------------------------------------------------
    (C, "en", "always use pnpm here", ("pnpm",)),
    (C, "en", "use conventional commits: start the subject with feat: or fix:, and keep it under 72 characters",
     ("conventional commits", "72")),
    (C, "en", "prefer ripgrep over grep", ("ripgrep", "grep")),
    (C, "en", "from now on, run the tests with vitest", ("vitest",)),
    (C, "en", "From now on write the commit messages in English.", ("commit", "English")),
    (C, "en", "always give the file and line first, then the explanation", ("file", "line")),
    (C, "en", "next time run pnpm typecheck before you say it's done", ("pnpm typecheck",)),
    (C, "en", "in this repo we use uv, not pip", ("uv", "pip")),
    (C, "en", "we use tabs for indentation here", ("tabs",)),
    (C, "en", "remember to update CHANGELOG.md whenever you change the public API", ("CHANGELOG.md",)),
    (C, "en", "make sure you always run mypy before finishing", ("mypy",)),
    (C, "en", "you should always use the logger module instead of print", ("logger", "print")),
    (C, "en", "prefer named exports to default exports", ("named exports",)),
    (C, "en", "going forward, keep PR descriptions under 200 words", ("200",)),
    (C, "en", "use pnpm, this is a pnpm workspace", ("pnpm",)),
    (C, "en", "always answer with the diff only, no explanation", ("diff",)),
    (C, "en", "in the future, put new migrations in db/migrations", ("db/migrations",)),
    (C, "en", "keep commit subjects under 72 characters", ("72",)),
    (C, "en", "only use the public API of the sdk, never its internals", ("public API",)),
    (C, "en", "use single quotes in Python code", ("single quotes",)),
    (C, "en", "Please always run the formatter before you commit.", ("formatter",)),
    (C, "en", "I prefer early returns over nested ifs", ("early returns",)),
    (C, "en", "from now on use `uv run pytest`, not bare pytest", ("uv run pytest",)),
    (C, "en", "Use vitest, not jest: we moved off jest last year.", ("vitest", "jest")),
    # --- corrections inside a longer message --------------------------------------------
    (C, "en", "thanks for the fix. one thing though: always run pnpm gen api instead of editing "
              "src/api/client.ts by hand. can you also add a test for the retry path?",
     ("pnpm gen api",), ("retry",)),
    (C, "en", "ok that works. but next time use pnpm, not npm, we don't have a package-lock here.",
     ("pnpm", "npm"), ()),
    (C, "en", "Looks mostly right. Please don't reformat files you didn't change, it makes the diff "
              "impossible to review.", ("reformat",), ()),
    (C, "en", "the output is fine but you used npm again. use pnpm in this repo, always.", ("pnpm",), ()),
    (C, "en", "Good. From now on, put the test next to the file it tests (foo.ts -> foo.test.ts). "
              "Now do the same for the date helpers.", ("test",), ("date helpers",)),
    (C, "en", "hmm, close. The commit subject must start with feat: or fix: (conventional commits). "
              "Try again.", ("feat:",), ("try again",)),
    (C, "en", "this is not what I asked. I want the summary as a table, not bullet points",
     ("table",), ()),
    (C, "en", "you ran the whole test suite again, which takes 10 minutes. only run the tests of the "
              "package you changed, with pnpm --filter.", ("pnpm --filter",), ()),
    # --- French ----------------------------------------------------------------------------
    (C, "fr", "non, utilise pnpm et pas npm", ("pnpm", "npm")),
    (C, "fr", "toujours utiliser pnpm dans ce dépôt", ("pnpm",)),
    (C, "fr", "n'utilise jamais npm ici", ("npm",)),
    (C, "fr", "à partir de maintenant, lance les tests avec vitest", ("vitest",)),
    (C, "fr", "ne touche pas au fichier pnpm-lock.yaml", ("pnpm-lock.yaml",)),
    (C, "fr", "évite les emojis dans les messages de commit", ("emojis",)),
    (C, "fr", "je préfère les guillemets simples", ("guillemets simples",)),
    (C, "fr", "merci, mais la prochaine fois lance pnpm lint avant de committer", ("pnpm lint",)),
    # --- German ----------------------------------------------------------------------------
    (C, "de", "nein, nimm pnpm statt npm", ("pnpm", "npm")),
    (C, "de", "immer pnpm verwenden, nicht npm", ("pnpm",)),
    (C, "de", "bitte kein npm, wir nutzen pnpm", ("pnpm",)),
    (C, "de", "ab jetzt bitte Commit-Nachrichten auf Englisch", ("Englisch",)),
    (C, "de", "niemals terraform apply ausführen", ("terraform apply",)),
    (C, "de", "fass die Lockfile nicht an", ("Lockfile",)),
    (C, "de", "lieber ripgrep als grep", ("ripgrep",)),
    (C, "de", "Das ist falsch, die Konfiguration liegt in config/app.yaml", ("config/app.yaml",)),
    # --- Spanish ---------------------------------------------------------------------------
    (C, "es", "no, usa pnpm y no npm", ("pnpm", "npm")),
    (C, "es", "siempre usa pnpm en este repo", ("pnpm",)),
    (C, "es", "nunca ejecutes terraform apply", ("terraform apply",)),
    (C, "es", "a partir de ahora, escribe los commits en inglés", ("inglés",)),
    (C, "es", "por favor no toques el lockfile", ("lockfile",)),
    (C, "es", "prefiero comillas simples", ("comillas simples",)),
    (C, "es", "eso está mal, los tests van en tests/unit", ("tests/unit",)),
    (C, "es", "la próxima vez ejecuta pnpm lint antes de hacer commit", ("pnpm lint",)),

    # === plain requests, many worded like a correction ====================================
    (T, "en", "use the logger module to add a debug line to parse()"),
    (T, "en", "use pnpm to add zod as a dependency"),
    (T, "en", "now add a test for the parser"),
    (T, "en", "make the button always visible on mobile"),
    (T, "en", "write a function that never returns null for missing keys"),
    (T, "en", "stop the dev server and run the migrations"),
    (T, "en", "revert the release tag v2.3.0 on the infra repo"),
    (T, "en", "wait for CI to finish, then merge the PR"),
    (T, "en", "no rush, but could you look at the flaky test in tests/api?"),
    (T, "en", "No tests are failing locally but CI is red, find out why"),
    (T, "en", "never seen this error before: TypeError: x is undefined in app.ts. fix it"),
    (T, "en", "use vitest to write tests for utils/date.ts"),
    (T, "en", "always the same error when I run pnpm dev, can you look?"),
    (T, "en", "add an eslint rule so that we never use var"),
    (T, "en", "now run the migrations on staging"),
    (T, "en", "can you use the staging database to reproduce the bug?"),
    (T, "en", "prefer-const errors in src/: fix them all"),
    (T, "en", "next, update the README with the new flags"),
    (T, "en", "from the logs, find why the build fails"),
    (T, "en", "keep going with the remaining files"),
    (T, "en", "ok, now deploy it to staging"),
    (T, "en", "Add a --dry-run flag that never writes anything"),
    (T, "en", "remember the rate limiter we talked about? implement it in src/rate.ts"),
    (T, "en", "use conventional commits to write the changelog for 2.4, from git log"),
    (T, "en", "make sure the migration is idempotent and add a test for it"),
    (T, "en", "don't know why but the build is slow, profile it"),
    (T, "en", "Write a script that always runs the linter on staged files"),
    (T, "en", "use ripgrep to find every TODO in src and list them"),
    (T, "en", "actually, let's also add dark mode to the settings page"),
    (T, "en", "instead, now look at the memory leak in the worker"),
    (T, "en", "what does the retry function do when the server never answers?"),
    (T, "en", "also rename getUser to fetchUser everywhere"),
    (T, "en", "run the benchmarks and tell me which version is faster"),
    (T, "en", "Configure prettier to use single quotes"),
    (T, "en", "check whether we still use the old auth module anywhere"),
    (T, "en", "from now on the API returns 404 for unknown users: update the client to handle it"),
    # French / German / Spanish tasks
    (T, "fr", "utilise le module logger pour ajouter un log dans parse()"),
    (T, "fr", "ajoute un test pour le parseur"),
    (T, "fr", "non-régression : ajoute un test pour le bug 12"),
    (T, "fr", "lance les migrations sur staging"),
    (T, "de", "nutze das logger-Modul, um in parse() eine Debug-Zeile einzufügen"),
    (T, "de", "schreib einen Test für den Parser"),
    (T, "de", "nimm die Änderungen aus feature/login und merge sie in main"),
    (T, "de", "jetzt bitte die Migrationen auf Staging ausführen"),
    (T, "es", "usa el módulo logger para añadir una línea de debug en parse()"),
    (T, "es", "añade un test para el parser"),
    (T, "es", "no sé por qué falla el build, ¿puedes mirarlo?"),
    (T, "es", "ahora ejecuta las migraciones en staging"),

    # === thanks / acknowledgements ========================================================
    (A, "en", "thanks!"),
    (A, "en", "perfect, thanks"),
    (A, "en", "lgtm"),
    (A, "en", "great, that works"),
    (A, "en", "ok"),
    (A, "en", "cool"),
    (A, "en", "nice one"),
    (A, "en", "yes, that's it"),
    (A, "en", "that works now, thank you"),
    (A, "en", "Awesome, ship it."),
    (A, "en", "looks good to me"),
    (A, "en", "exactly what I wanted"),
    (A, "en", "ok thanks, that's all for today"),
    (A, "en", "good job"),
    (A, "en", "yep"),
    (A, "en", "thank you, this is much clearer now"),
    (A, "en", "great, the tests pass now"),
    (A, "en", "no problem, thanks for checking"),
    (A, "en", "no worries, it works now"),
    (A, "en", "never mind, it works now"),
    (A, "fr", "merci !"),
    (A, "fr", "parfait, merci"),
    (A, "fr", "c'est bon, ça marche"),
    (A, "de", "danke, passt"),
    (A, "de", "super, funktioniert"),
    (A, "de", "perfekt, danke dir"),
    (A, "es", "genial, gracias"),
    (A, "es", "perfecto, funciona"),
    (A, "es", "vale, gracias"),
    (A, "es", "muy bien, eso es"),
]


def _build() -> list[Labelled]:
    out: list[Labelled] = []
    seen: dict[str, int] = {}
    for row in _RAW:
        kind, lang, text = row[:3]
        terms = tuple(row[3]) if len(row) > 3 else ()
        absent = tuple(row[4]) if len(row) > 4 else ()
        n = seen.get(kind, 0)
        seen[kind] = n + 1
        out.append(Labelled(kind, lang, text, terms, absent, "tune" if n % 2 == 0 else "held"))
    return out


LABELLED: list[Labelled] = _build()

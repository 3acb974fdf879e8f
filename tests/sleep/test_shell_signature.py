"""Shell command signatures: the program and its subcommand or first flag, never a value."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sleep.shell_signature import MAX_SIGNATURES, argv_signatures, shell_signatures


@pytest.mark.parametrize("command,expected", [
    ("pytest -q tests/test_api.py", ["pytest -q"]),
    ("pytest tests/test_api.py", ["pytest"]),
    ("ruff check . --fix", ["ruff check"]),
    ("cargo test --workspace", ["cargo test"]),
    ("cargo +nightly fmt", ["cargo fmt"]),
    ("git commit -m 'fix: handle empty input'", ["git commit"]),
    ("git -C ../other log --oneline", ["git log"]),
    ("git stash pop", ["git stash pop"]),
    ("npm run build", ["npm run build"]),
    ("npm test", ["npm test"]),
    ("pnpm --filter web build", ["pnpm build"]),
    ("yarn run test:unit --watch=false", ["yarn run test:unit"]),
    ("alembic revision --autogenerate -m 'add users'", ["alembic revision"]),
    ("docker compose up -d", ["docker compose up"]),
    ("gh pr create --title 'x' --body 'y'", ["gh pr create"]),
    ("kubectl -n prod get pods", ["kubectl get"]),
    ("aws s3 cp build s3://bucket --recursive", ["aws s3 cp"]),
    ("go test ./...", ["go test"]),
    ("go mod tidy", ["go mod tidy"]),
    ("make -j8 test", ["make test"]),
    ("ls -la", ["ls -la"]),
])
def test_program_with_subcommand_or_first_flag(command: str, expected: list[str]) -> None:
    assert shell_signatures(command) == expected


@pytest.mark.parametrize("command,expected", [
    ("cd api && pytest -q", ["pytest -q"]),
    ("cd /work/app; npm ci && npm run lint", ["npm ci", "npm run lint"]),
    ("DATABASE_URL=postgres://u:p@h/db PYTHONPATH=. pytest -x", ["pytest -x"]),
    ("uv run pytest -q", ["pytest -q"]),
    ("uv run --with rich python -m pytest -k slow", ["pytest -k"]),
    ("uv pip install -e .", ["uv pip install"]),
    ("poetry run alembic upgrade head", ["alembic upgrade"]),
    ("npx prisma migrate dev --name init", ["prisma migrate dev"]),
    ("npx -y create-next-app@latest web", ["create-next-app"]),
    ("pnpm exec vitest run", ["vitest run"]),
    ("python -m pytest -q", ["pytest -q"]),
    ("python3.11 -m pip install -r requirements.txt", ["pip install"]),
    ("python manage.py migrate", ["manage.py migrate"]),
    ("node scripts/build.mjs --prod", ["build.mjs --prod"]),
    ("python -c 'import sys; print(sys.path)'", ["python -c"]),
    ("bash -lc 'cd web && npm test'", ["npm test"]),
    ("sudo -u postgres psql -c 'select 1'", ["psql -c"]),
    ("timeout 60 cargo test", ["cargo test"]),
    ("env -u HOME FOO=1 make lint", ["make lint"]),
    ("time go build ./cmd/api", ["go build"]),
    ("./node_modules/.bin/jest --watch", ["jest --watch"]),
    ("C:\\Python311\\python.exe -m pytest", ["pytest"]),
])
def test_wrappers_environment_and_navigation_are_looked_through(command: str, expected: list[str]) -> None:
    assert shell_signatures(command) == expected


@pytest.mark.parametrize("command,expected", [
    ("pytest -q 2>&1 | tail -20", ["pytest -q"]),
    ("git log --oneline | grep fix | head -5", ["git log"]),
    ("cat requirements.txt | python scripts/check.py", ["cat", "check.py"]),
    ("find . -name '*.pyc' | xargs rm -f", ["find -name", "rm -f"]),
    ("for f in src/*.py; do ruff check $f; done", ["ruff check"]),
    ("if [ -f package.json ]; then npm install; fi", ["npm install"]),
    ("(cd web && npm test) || echo failed", ["npm test"]),
    ("cat > notes.py <<'EOF'\nimport os\nrm -rf /\nEOF\npython notes.py", ["cat", "notes.py"]),
    ("git commit -m \"$(cat <<'EOF'\nfeat: add x\n\nbody\nEOF\n)\"", ["git commit"]),
    ("# run the suite\npytest -q  # fast", ["pytest -q"]),
    ("make build > build.log 2>&1 &", ["make build"]),
])
def test_pipes_loops_heredocs_and_comments(command: str, expected: list[str]) -> None:
    assert shell_signatures(command) == expected


@pytest.mark.parametrize("command", [
    "curl -H 'Authorization: Bearer sk-live-abc123' https://api.example.com",
    "mysql -pS3cretPassw0rd -u root",
    "deploy --token=ghp_R4nd0mT0k3nV4lu3F0rT3st1ngPurp0s3sXy",
    "git push https://user:hunter2@github.com/acme/api.git main",
    "export OPENAI_API_KEY=sk-proj-abcdef1234567890 && python app.py",
])
def test_signatures_never_keep_argument_values(command: str) -> None:
    sigs = shell_signatures(command)
    assert sigs
    for secret in ("sk-live", "S3cret", "ghp_", "hunter2", "sk-proj", "api.example", "github.com"):
        assert all(secret not in s for s in sigs), sigs


def test_argv_form_and_shell_wrapped_argv() -> None:
    assert argv_signatures(["bash", "-lc", "cd x && cargo test -q"]) == ["cargo test"]
    assert argv_signatures(["git", "status"]) == ["git status"]
    assert argv_signatures("ruff format") == ["ruff format"]
    assert argv_signatures([]) == [] and argv_signatures([1, 2]) == [] and argv_signatures(None) == []


@pytest.mark.parametrize("command", ["", "   ", "cd ..", "echo done", "$(which python) x.py", "''",
                                     "for x in a b; do", "}", "&& ||", "\\"])
def test_nothing_worth_keeping_gives_no_signature(command: str) -> None:
    assert shell_signatures(command) == []


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=400))
def test_any_text_gives_short_signatures_without_raising(command: str) -> None:
    sigs = shell_signatures(command)
    assert len(sigs) <= MAX_SIGNATURES
    for s in sigs:
        assert 0 < len(s) <= 120 and "\n" not in s and s == s.strip()


@settings(max_examples=200, deadline=None)
@given(value=st.text(alphabet="abcdefXYZ0123456789_=:/.@", min_size=12, max_size=40),
       template=st.sampled_from(["tool --key {v}", "tool -k {v}", "tool sub {v}", "git commit -m {v}",
                                 "npx tool {v}", "X={v} make", "tool --key={v}"]))
def test_a_value_never_appears_in_a_signature(value: str, template: str) -> None:
    for s in shell_signatures(template.format(v=value)):
        assert value not in s

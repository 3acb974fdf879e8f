"""The README a person reads first: short, true to the code, and pointing only at files they have.

Its Codex table is the one `plugins/codex/install.sh` writes (sleep.integrations.codex), its test
command is the one CI runs (.ci/run), and every relative link of it and of docs/ leads to a file
of the repository."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tomllib
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
README = REPO / "README.md"
TEST_COMMAND = 'CMAKE_ARGS="-DGGML_NATIVE=OFF" pip install -e ".[local,server,dev,ray,textworld]" && python -m pytest -q'
LINK = re.compile(r"\]\(([^)#\s]+)(?:#[^)]*)?\)")


def test_the_readme_is_short_and_starts_with_the_product() -> None:
    text = README.read_text(encoding="utf-8")
    assert len(text.splitlines()) <= 250
    assert TEST_COMMAND in text and 'pip install -e ".[local]" && skillopt-sleep demo' in text
    assert "skillopt-sleep doctor && skillopt-sleep run" in text
    assert text.index("## Two commands") < text.index("## Now on your project") < text.index("## The morning review")
    for gone in ("team docs", "FORMATS.md", "ARCHITECTURE"):
        assert gone not in text, gone


def test_ci_runs_the_readmes_test_command() -> None:
    ci = (REPO / ".ci" / "run").read_text(encoding="utf-8")
    assert 'export CMAKE_ARGS="-DGGML_NATIVE=OFF"' in ci
    assert 'pip install -e ".[local,server,dev,ray,textworld]"' in ci and "python -m pytest -q" in ci


def test_every_relative_link_of_the_readme_and_the_docs_leads_to_a_file() -> None:
    broken = []
    for page in [README, *sorted((REPO / "docs").glob("*.md"))]:
        for target in LINK.findall(page.read_text(encoding="utf-8")):
            if "://" in target or target.startswith("mailto:"):
                continue
            if not (page.parent / target).exists():
                broken.append(f"{page.relative_to(REPO)} → {target}")
    assert broken == []


def test_every_docs_page_is_in_the_site_nav() -> None:
    """mkdocs --strict (run by CI) refuses a page that is not in mkdocs.yml's nav."""
    nav = (REPO / "mkdocs.yml").read_text(encoding="utf-8")
    missing = [p.name for p in sorted((REPO / "docs").glob("*.md")) if f": {p.name}" not in nav]
    assert missing == []


def _codex_tables() -> list[dict]:
    tables = []
    for page in (README, REPO / "docs" / "sleep-overview.md"):
        for block in re.findall(r"```toml\n(.*?)```", page.read_text(encoding="utf-8"), re.S):
            tables.append(tomllib.loads(block)["mcp_servers"]["skillopt"])
    return tables


def test_the_codex_table_shown_is_the_one_install_sh_writes() -> None:
    # A fresh interpreter: the built-in hosts only (a test that registered a toy host must not count).
    code = ("import json; from sleep.integrations.codex import TOOL_TIMEOUT_S; "
            "from sleep.mcp.launch import SERVER_ENV_VARS; print(json.dumps([list(SERVER_ENV_VARS), TOOL_TIMEOUT_S]))")
    out = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=120,
                         env={**os.environ, "PYTHONPATH": str(REPO)})
    SERVER_ENV_VARS, TOOL_TIMEOUT_S = json.loads(out.stdout)

    tables = _codex_tables()
    assert len(tables) == 2
    for table in tables:
        assert table == {"command": "skillopt-sleep", "args": ["mcp"], "env_vars": list(SERVER_ENV_VARS),
                         "tool_timeout_sec": TOOL_TIMEOUT_S}
    text = README.read_text(encoding="utf-8")
    assert f"forwards {len(SERVER_ENV_VARS)} by name" in text
    for key in (v for v in SERVER_ENV_VARS if v.endswith("_API_KEY")):
        assert key in text.split("```toml", 1)[0].rsplit("**Codex**", 1)[1]  # said in words, before the table


def test_the_readme_and_the_harvest_page_agree_on_the_hosts() -> None:
    readme = README.read_text(encoding="utf-8")
    harvest = (REPO / "docs" / "sleep-harvest.md").read_text(encoding="utf-8")
    overview = (REPO / "docs" / "sleep-overview.md").read_text(encoding="utf-8")
    assert "Harvest only" not in harvest and "not read yet" not in overview
    assert "skillopt-sleep integrate gemini" in readme and "`skillopt-sleep integrate gemini`" in harvest

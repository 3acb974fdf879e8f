"""What the agent-CLI backend tests share: fake executables first on PATH
(tests/backends/fakes/), a private HOME and replay root, and readers for what
the fakes recorded (argv, cwd, environment, stdin, the files in their working
directory)."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any

import pytest

from skillopt_core.backends import BackendSpec, CompletionRequest, Message, create_backend

FAKES = Path(__file__).parent / "fakes"
CLIS = ["claude-code", "codex", "copilot"]
COMMANDS = {"claude-code": "claude", "codex": "codex", "copilot": "copilot"}
SKILL_DIRS = {"claude-code": ".claude/skills", "codex": ".agents/skills", "copilot": ".github/skills"}
SKILL = "---\nname: answer-style\ndescription: How to answer trivia questions.\n---\n\n# Answer style\n\nAnswer in one word.\n"
INSTRUCTION = "End your reply with one final line of the form: Answer: <city>"


@pytest.fixture
def fake_env(monkeypatch, tmp_path: Path) -> Path:
    """Fakes on PATH; returns the folder their records are written to."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for item in FAKES.iterdir():
        if item.is_file():
            shutil.copy(item, bin_dir / item.name)
            (bin_dir / item.name).chmod(0o755)
    records = tmp_path / "records"
    records.mkdir()
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("SKILLOPT_NO_DOTENV", "1")
    monkeypatch.setenv("SKILLOPT_REPLAY_ROOT", str(tmp_path / "skillopt-replay"))
    monkeypatch.setenv("FAKE_CLI_RECORD_DIR", str(records))
    for var in ("FAKE_CLI_MODE", "FAKE_CLI_REPLY", "FAKE_CLI_DELAY"):
        monkeypatch.delenv(var, raising=False)
    return records


def make(name: str, role: str = "target", model: str | None = None, **options: Any):
    return create_backend(BackendSpec(name, model, role, {"timeout": 30, **options}))


def target_request(skill: str = SKILL, **kwargs: Any) -> CompletionRequest:
    """A target rollout as an env builds it: system = skill + instruction, skill = the skill."""
    return CompletionRequest(
        messages=(Message("user", "Capital of France?"),),
        system=f"{skill.strip()}\n\n{INSTRUCTION}",
        skill=skill,
        role="target",
        **kwargs,
    )


def records(record_dir: Path) -> list[dict[str, Any]]:
    return [json.loads(p.read_text()) for p in sorted(record_dir.glob("*.json"))]


def only_record(record_dir: Path) -> dict[str, Any]:
    found = records(record_dir)
    assert len(found) == 1, found
    return found[0]


def prompt_of(record: dict[str, Any]) -> str:
    if record["name"] == "copilot":
        return record["argv"][record["argv"].index("-p") + 1]
    return record["stdin"]


def tree(root: Path) -> dict[str, tuple[bytes, int] | str]:
    """Every file (content and mode), symlink (target) and folder under ``root``."""
    out: dict[str, tuple[bytes, int] | str] = {}
    for path in sorted(root.rglob("*")):
        rel = path.relative_to(root).as_posix()
        if path.is_symlink():
            out[rel] = f"-> {os.readlink(path)}"
        elif path.is_dir():
            out[rel] = "dir"
        else:
            out[rel] = (path.read_bytes(), path.stat().st_mode)
    return out


def alive(pid: int) -> bool:
    """Whether process ``pid`` is running (a zombie counts as gone)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        return state not in ("Z", "X")
    except (FileNotFoundError, IndexError):
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return False
        return True

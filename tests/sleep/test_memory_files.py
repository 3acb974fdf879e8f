"""Where each host's memory file is found (sleep.memory.files), the @imports followed read-only
(sleep.memory.imports), and the candidate framed as each host frames it for a chat backend
(sleep.memory.placement)."""

from __future__ import annotations

import asyncio
from pathlib import Path

from skillopt_core import CompletionRequest, Message
from skillopt_core.backends.scripted import Rule, ScriptedBackend
from sleep.memory import files, imports
from sleep.memory.placement import MemoryPlacement, framed

RULE = "---\ndescription: house rules\nalwaysApply: true\n---\n\n- Use pnpm.\n"


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def test_each_hosts_memory_file_is_found_where_it_loads_it(tmp_path: Path) -> None:
    write(tmp_path / ".claude/CLAUDE.md", "claude\n")
    write(tmp_path / "AGENTS.md", "agents\n")
    write(tmp_path / "GEMINI.md", "gemini\n")
    write(tmp_path / ".github/copilot-instructions.md", "copilot\n")
    write(tmp_path / ".cursor/rules/a-sometimes.mdc", "---\ndescription: x\nalwaysApply: false\n---\nx\n")
    write(tmp_path / ".cursor/rules/b-house.mdc", RULE)
    found = {m.host: m.rel for m in files.present(tmp_path)}
    assert found == {"claude-code": ".claude/CLAUDE.md", "codex": "AGENTS.md", "gemini": "GEMINI.md",
                     "copilot": ".github/copilot-instructions.md", "cursor": ".cursor/rules/b-house.mdc"}
    assert files.find(tmp_path, "opencode").rel == "AGENTS.md"  # shared with Codex, trained once
    write(tmp_path / "CLAUDE.md", "root\n")
    assert files.find(tmp_path, "claude-code").rel == "CLAUDE.md"  # the project root's first
    assert files.label_of(tmp_path / ".cursor/rules/b-house.mdc") == "Cursor rule"
    assert files.label_of(tmp_path / ".claude/skills/x/SKILL.md") is None


def test_the_users_own_claude_md_only_with_consent(tmp_path: Path) -> None:
    home, project = tmp_path / "home", tmp_path / "project"
    project.mkdir()
    write(home / ".claude/CLAUDE.md", "mine\n")
    assert files.find(project, "claude-code", home=home) is None
    mine = files.find(project, "claude-code", user_files=True, home=home)
    assert mine.user and mine.path == home / ".claude/CLAUDE.md" and mine.rel == "CLAUDE.md"


def test_imports_are_followed_inside_the_project_only_and_never_written(tmp_path: Path) -> None:
    memory = write(tmp_path / "CLAUDE.md", "See @docs/a.md and @alice.\n```\n@docs/not-code.md\n```\n@../outside.md\n")
    write(tmp_path / "docs/a.md", "A imports @b.md\n")
    write(tmp_path / "docs/b.md", "B\n")
    write(tmp_path / "docs/not-code.md", "no\n")
    write(tmp_path.parent / "outside.md", "secret\n")
    stamps = {p: p.stat().st_mtime_ns for p in tmp_path.rglob("*.md")}
    found = imports.follow(memory, tmp_path)
    assert [(i.rel, i.text) for i in found] == [("docs/a.md", "A imports @b.md\n"), ("docs/b.md", "B\n")]
    assert {p: p.stat().st_mtime_ns for p in tmp_path.rglob("*.md")} == stamps
    note = imports.note("CLAUDE.md", found)
    assert "docs/a.md, docs/b.md" in note and "read-only" in note
    assert imports.dropped("x @docs/a.md\n", "x\n") == ["docs/a.md"]


def test_a_chat_backend_reads_the_candidate_as_the_host_frames_it(tmp_path: Path) -> None:
    write(tmp_path / "CLAUDE.md", "old @docs/a.md\n")
    write(tmp_path / "docs/a.md", "IMPORTED\n")
    claude = files.find(tmp_path, "claude-code")
    inner = ScriptedBackend(rules=[Rule(response="")])
    candidate = "- Use pnpm. @docs/a.md\n"
    request = CompletionRequest(messages=(Message("user", "install"),),
                                system=f"{candidate.strip()}\n\nAnswer briefly.", skill=candidate, role="target")
    asyncio.run(MemoryPlacement(inner, claude, tmp_path).complete(request))
    system = inner.history[0].system
    block = "(project instructions, checked into the codebase)"
    assert f"Contents of {tmp_path / 'CLAUDE.md'} {block}:\n\n- Use pnpm." in system
    assert "IMPORTED" in system and system.endswith("Answer briefly.") and inner.history[0].document_path is None
    optimizer = CompletionRequest(messages=(Message("user", "reflect"),), system="sys", role="optimizer")
    asyncio.run(MemoryPlacement(inner, claude, tmp_path).complete(optimizer))
    assert inner.history[1] is optimizer
    write(tmp_path / "AGENTS.md", "a\n")
    agents = files.find(tmp_path, "codex")
    codex_block = framed(agents, "- Use pnpm.", tmp_path)
    assert codex_block.startswith(f"# AGENTS.md instructions for {tmp_path}\n\n<INSTRUCTIONS>")


def test_copilot_instructions_trained_as_the_skill_keep_their_lesson(tmp_path: Path) -> None:
    """When the night's skill for Copilot is .github/copilot-instructions.md itself, a repository-wide
    lesson stays there (one part per file), and the record says why."""
    from types import SimpleNamespace

    from skillopt_core import Edit
    from sleep.cycle.multiskill import SkillGroup
    from sleep.cycle.skills import SkillChoice
    from sleep.memory.plan import MemoryPlan

    path = write(tmp_path / ".github/copilot-instructions.md", "- Keep diffs small.\n")
    group = SkillGroup(SkillChoice(path, "copilot-instructions", "copilot", False, 3, "the instructions file"), [])
    plan = MemoryPlan(tmp_path, [], {}, SimpleNamespace(memory_files=True, memory_user_files=False,
                                                        use_corrections=True))
    evidence = [{"corrections": [{"text": "no, use pnpm not npm in this repo"}]}]
    edit = Edit(op="add", content="- Use pnpm, not npm in this repo.", origin="correction", rationale="said")
    kept, new = plan.split(group, [edit], evidence)
    assert kept == [edit] and new == []
    assert group.routing[0]["to"] == "memory" and "the document this part trains already" in group.routing[0]["reason"]

"""Where an agent-CLI call runs and how the skill under training reaches it:
``request.skill`` installed verbatim as the host's SKILL.md (never the env's
instruction line), in a fresh replay directory or in a checkout the caller
prepared (``request.cwd``), which is left exactly as it was found."""

from __future__ import annotations

import asyncio
import os
from dataclasses import replace
from pathlib import Path

import pytest

from cli_fakes import (  # noqa: F401
    CLIS,
    INSTRUCTION,
    SKILL,
    SKILL_DIRS,
    alive,
    fake_env,
    make,
    only_record,
    prompt_of,
    records,
    target_request,
    tree,
)
from skillopt_core.backends import CompletionRequest
from skillopt_core.backends.base import BackendError, RequestFailed, RequestRejected
from skillopt_core.envs import create_env
from skillopt_core.replay import REPLAY_MARKER, is_replay_path, is_replay_prompt
from skillopt_core.tasks.task import Task

PROJECT = Path.cwd()


@pytest.fixture(autouse=True)
def _fakes(fake_env: Path) -> Path:
    return fake_env


@pytest.fixture
def checkout() -> Path:
    """A caller-prepared project checkout under the replay root, with its own
    files and its own (older) version of the skill."""
    root = Path(os.environ["SKILLOPT_REPLAY_ROOT"]) / "checkouts" / "proj-1"
    (root / "src").mkdir(parents=True)
    (root / "src" / "app.py").write_text("print('hi')\n")
    (root / "README.md").write_text("# Project\n")
    own = root / ".claude" / "skills" / "answer-style"
    own.mkdir(parents=True)
    (own / "SKILL.md").write_text("---\nname: answer-style\ndescription: old\n---\nOld version.\n")
    (own / "SKILL.md").chmod(0o640)
    (own / "reference.md").write_text("Supporting file.\n")
    return root


# -- the skill file ---------------------------------------------------------------- #


@pytest.mark.parametrize("name", CLIS)
async def test_skill_is_installed_verbatim_where_the_host_reads_it(name: str, fake_env: Path) -> None:
    await make(name).complete(target_request())
    files = only_record(fake_env)["files"]
    assert files == {f"{SKILL_DIRS[name]}/answer-style/SKILL.md": SKILL}


@pytest.mark.parametrize("name", CLIS)
async def test_env_instruction_goes_in_the_prompt_not_in_skill_md(name: str, fake_env: Path) -> None:
    await make(name).complete(target_request())
    record = only_record(fake_env)
    (skill_md,) = record["files"].values()
    assert INSTRUCTION not in skill_md
    prompt = prompt_of(record)
    assert INSTRUCTION in prompt
    assert "Answer in one word." not in prompt  # the skill is a file, not prompt text
    assert f"{SKILL_DIRS[name]}/answer-style/SKILL.md" in prompt
    assert prompt.index(INSTRUCTION) < prompt.index("Capital of France?")


async def test_env_request_reaches_the_cli_as_skill_file_plus_instruction(fake_env: Path) -> None:
    env = create_env("_template")
    task = Task(id="t1", prompt="How many metres are in 3 km?", reference="3000", judge={"type": "exact"})
    request = env.build_request(env.seed_skill, task, max_tokens=64)
    await make("claude-code").complete(request)
    record = only_record(fake_env)
    assert record["files"] == {".claude/skills/unit-conversion/SKILL.md": env.seed_skill}
    assert "Answer: <number>" in prompt_of(record)


@pytest.mark.parametrize("name", CLIS)
async def test_skill_without_front_matter_gets_only_the_front_matter_hosts_need(name: str, fake_env: Path) -> None:
    request = target_request(skill="Always be brief.\n")
    await make(name).complete(request)
    ((path, text),) = only_record(fake_env)["files"].items()
    assert path == f"{SKILL_DIRS[name]}/skillopt-skill/SKILL.md"
    assert text.startswith("---\nname: skillopt-skill\ndescription: ")
    assert text.endswith("---\n\nAlways be brief.\n")


async def test_invalid_skill_name_is_cleaned_in_folder_and_front_matter_body_unchanged(fake_env: Path) -> None:
    skill = "---\nname: My Skill_v2!\ndescription: d\n---\nbody line\n  indented\n"
    await make("claude-code").complete(target_request(skill=skill))
    ((path, text),) = only_record(fake_env)["files"].items()
    assert path == ".claude/skills/my-skill-v2/SKILL.md"
    assert "name: my-skill-v2" in text and "description: d" in text
    assert text.endswith("---\nbody line\n  indented\n")


async def test_skill_with_unreadable_front_matter_rejects_only_this_request(fake_env: Path) -> None:
    with pytest.raises(RequestRejected, match="front matter"):
        await make("codex").complete(target_request(skill="---\nname: [unclosed\n---\nbody\n"))
    assert records(fake_env) == []


@pytest.mark.parametrize("name", CLIS)
async def test_target_request_without_skill_installs_nothing_and_sends_system(name: str, fake_env: Path) -> None:
    request = replace(target_request(), skill=None)
    await make(name).complete(request)
    record = only_record(fake_env)
    assert record["files"] == {}
    assert "Answer in one word." in prompt_of(record) and INSTRUCTION in prompt_of(record)


@pytest.mark.parametrize("name", CLIS)
async def test_optimizer_role_gets_system_text_in_prompt_and_no_skill(name: str, fake_env: Path) -> None:
    request = CompletionRequest.single("Propose edits.", system="You improve skills.", role="optimizer")
    await make(name, role="optimizer").complete(request)
    record = only_record(fake_env)
    assert record["files"] == {}
    prompt = prompt_of(record)
    assert prompt.startswith(REPLAY_MARKER)
    assert prompt.index("You improve skills.") < prompt.index("Propose edits.")


# -- a fresh replay directory (no cwd) ------------------------------------------------ #


@pytest.mark.parametrize("name", CLIS)
async def test_cwd_is_a_fresh_replay_dir_outside_the_project(name: str, fake_env: Path) -> None:
    backend = make(name)
    await backend.complete(target_request())
    await backend.complete(target_request())
    first, second = (Path(r["cwd"]) for r in records(fake_env))
    assert first != second
    root = Path(os.environ["SKILLOPT_REPLAY_ROOT"]).resolve()
    for cwd in (first, second):
        assert cwd.resolve().is_relative_to(root)
        assert not PROJECT.resolve().is_relative_to(cwd.resolve()) and not cwd.resolve().is_relative_to(PROJECT.resolve())
        assert is_replay_path(cwd)  # what the transcript harvester checks


@pytest.mark.parametrize("name", CLIS)
async def test_working_dir_is_removed_afterwards(name: str, fake_env: Path) -> None:
    await make(name).complete(target_request())
    cwd = Path(only_record(fake_env)["cwd"])
    assert not cwd.exists() and not cwd.parent.exists()
    assert list(Path(os.environ["SKILLOPT_REPLAY_ROOT"]).iterdir()) == []


@pytest.mark.parametrize("name", CLIS)
async def test_prompt_is_marked_as_a_replay(name: str, fake_env: Path) -> None:
    await make(name).complete(target_request())
    prompt = prompt_of(only_record(fake_env))
    assert prompt.startswith(REPLAY_MARKER) and is_replay_prompt(prompt)
    assert "Capital of France?" in prompt


# -- a caller's checkout (request.cwd) ------------------------------------------------- #


@pytest.mark.parametrize("name", CLIS)
async def test_runs_in_the_checkout_with_the_candidate_skill_and_leaves_it_as_found(
    name: str, fake_env: Path, checkout: Path
) -> None:
    before = tree(checkout)
    await make(name).complete(target_request(cwd=str(checkout)))
    record = only_record(fake_env)
    assert Path(record["cwd"]).resolve() == checkout.resolve()
    assert record["files"][f"{SKILL_DIRS[name]}/answer-style/SKILL.md"] == SKILL
    assert record["files"]["src/app.py"] == "print('hi')\n"  # the agent sees the project
    assert prompt_of(record).startswith(REPLAY_MARKER) and is_replay_path(record["cwd"])
    assert tree(checkout) == before
    assert list(Path(os.environ["SKILLOPT_REPLAY_ROOT"]).iterdir()) == [checkout.parent]


async def test_projects_own_skill_file_is_hidden_during_the_call_and_restored(fake_env: Path, checkout: Path) -> None:
    before = tree(checkout)
    await make("claude-code").complete(target_request(cwd=str(checkout)))
    files = only_record(fake_env)["files"]
    skill_files = {k: v for k, v in files.items() if k.startswith(".claude/")}
    assert skill_files == {
        ".claude/skills/answer-style/SKILL.md": SKILL,  # the candidate, not "Old version."
        ".claude/skills/answer-style/reference.md": "Supporting file.\n",
    }
    assert not any("Old version." in text for text in files.values())
    assert tree(checkout) == before  # content and mode bits of the original


@pytest.mark.parametrize("mode", ["fail", "api_error"])
async def test_checkout_is_restored_when_the_call_fails(mode: str, fake_env: Path, checkout: Path, monkeypatch) -> None:
    monkeypatch.setenv("FAKE_CLI_MODE", mode)
    before = tree(checkout)
    with pytest.raises(RequestFailed):
        await make("codex").complete(target_request(cwd=str(checkout)))
    assert tree(checkout) == before


@pytest.mark.timeout(60)
async def test_checkout_is_restored_after_a_timeout(fake_env: Path, checkout: Path, monkeypatch) -> None:
    monkeypatch.setenv("FAKE_CLI_MODE", "hang")
    before = tree(checkout)
    with pytest.raises(RequestFailed, match="did not finish"):
        await make("copilot", timeout=1).complete(target_request(cwd=str(checkout)))
    assert tree(checkout) == before


async def test_checkout_is_restored_when_the_caller_cancels(fake_env: Path, checkout: Path, monkeypatch) -> None:
    monkeypatch.setenv("FAKE_CLI_MODE", "hang")
    before = tree(checkout)
    call = asyncio.ensure_future(make("claude-code").complete(target_request(cwd=str(checkout))))
    for _ in range(100):
        if records(fake_env):
            break
        await asyncio.sleep(0.05)
    call.cancel()
    with pytest.raises(asyncio.CancelledError):
        await call
    assert tree(checkout) == before
    (record,) = records(fake_env)
    assert not alive(record["pid"]) and not alive(record["child_pid"])


async def test_folders_created_for_the_skill_are_removed_again(fake_env: Path, checkout: Path) -> None:
    before = tree(checkout)
    await make("copilot").complete(target_request(cwd=str(checkout)))
    assert ".github/skills/answer-style/SKILL.md" in only_record(fake_env)["files"]
    assert not (checkout / ".github").exists()
    assert tree(checkout) == before


def _overlap(first: dict, second: dict) -> bool:
    return first["started"] < second["ended"] and second["started"] < first["ended"]


async def test_concurrent_calls_with_different_skills_in_one_checkout_take_turns(
    fake_env: Path, checkout: Path, monkeypatch
) -> None:
    monkeypatch.setenv("FAKE_CLI_DELAY", "0.5")
    before = tree(checkout)
    other = SKILL.replace("Answer in one word.", "Answer in two words.")
    backend = make("claude-code")
    await asyncio.gather(
        backend.complete(target_request(cwd=str(checkout))),
        backend.complete(target_request(skill=other, cwd=str(checkout))),
    )
    first, second = records(fake_env)
    path = ".claude/skills/answer-style/SKILL.md"
    seen = sorted((r["files"][path], r["files_after"][path]) for r in (first, second))
    assert seen == sorted([(SKILL, SKILL), (other, other)])
    assert not _overlap(first, second)
    assert tree(checkout) == before


async def test_concurrent_calls_with_the_same_skill_in_one_checkout_run_together(
    fake_env: Path, checkout: Path, monkeypatch
) -> None:
    monkeypatch.setenv("FAKE_CLI_BARRIER", "3")  # each fake waits until all three have started
    monkeypatch.setenv("FAKE_CLI_DELAY", "0.2")
    before = tree(checkout)
    backend = make("codex", timeout=60)
    await asyncio.gather(*(backend.complete(target_request(cwd=str(checkout))) for _ in range(3)))
    found = records(fake_env)
    assert [r["barrier_met"] for r in found] == [True, True, True]
    for record in found:
        assert record["files_after"][".agents/skills/answer-style/SKILL.md"] == SKILL
    assert tree(checkout) == before


async def test_mixed_concurrent_calls_in_one_checkout_each_see_their_own_skill(
    fake_env: Path, checkout: Path, monkeypatch
) -> None:
    monkeypatch.setenv("FAKE_CLI_DELAY", "0.3")
    before = tree(checkout)
    other = SKILL.replace("Answer in one word.", "Answer in two words.")
    skills = [SKILL, other, SKILL, other, SKILL]
    backend = make("copilot")
    await asyncio.gather(*(backend.complete(target_request(skill=s, cwd=str(checkout))) for s in skills))
    path = ".github/skills/answer-style/SKILL.md"
    seen = sorted((r["files"][path], r["files_after"][path]) for r in records(fake_env))
    assert seen == sorted((s, s) for s in skills)
    assert tree(checkout) == before


async def test_checkout_outside_the_replay_root_is_refused(fake_env: Path, tmp_path: Path) -> None:
    project = tmp_path / "my-project"
    project.mkdir()
    with pytest.raises(RequestRejected, match="not under the replay root"):
        await make("claude-code").complete(target_request(cwd=str(project)))
    assert records(fake_env) == [] and list(project.iterdir()) == []


async def test_missing_checkout_is_refused(fake_env: Path) -> None:
    missing = Path(os.environ["SKILLOPT_REPLAY_ROOT"]) / "checkouts" / "gone"
    with pytest.raises(RequestRejected, match="does not exist"):
        await make("codex").complete(target_request(cwd=str(missing)))
    assert records(fake_env) == []


async def test_skill_folder_symlinked_out_of_the_checkout_is_refused(fake_env: Path, checkout: Path, tmp_path: Path) -> None:
    outside = tmp_path / "home-skills"
    outside.mkdir()
    (checkout / ".agents").mkdir()
    (checkout / ".agents" / "skills").symlink_to(outside, target_is_directory=True)
    before = tree(checkout)
    with pytest.raises(RequestRejected, match="symlink"):
        await make("codex").complete(target_request(cwd=str(checkout)))
    assert list(outside.iterdir()) == [] and records(fake_env) == []
    assert tree(checkout) == before


async def test_existing_symlink_at_the_skill_path_is_put_back(fake_env: Path, checkout: Path) -> None:
    own = checkout / ".claude" / "skills" / "answer-style" / "SKILL.md"
    own.unlink()
    own.symlink_to("../../../README.md")
    before = tree(checkout)
    await make("claude-code").complete(target_request(cwd=str(checkout)))
    assert only_record(fake_env)["files"][".claude/skills/answer-style/SKILL.md"] == SKILL
    assert tree(checkout) == before and (checkout / "README.md").read_text() == "# Project\n"


async def test_original_that_cannot_be_put_back_is_kept_and_reported_as_systemic(
    fake_env: Path, checkout: Path, monkeypatch
) -> None:
    import shutil

    from skillopt_core.backends import cli_skill

    real_move = shutil.move

    def move(src: str, dst: str) -> str:
        if Path(dst) == checkout / ".claude" / "skills" / "answer-style" / "SKILL.md":
            raise PermissionError(13, "Permission denied")
        return real_move(src, dst)

    monkeypatch.setattr(cli_skill.shutil, "move", move)
    with pytest.raises(BackendError, match="could not put the original") as info:
        await make("claude-code").complete(target_request(cwd=str(checkout)))
    assert not isinstance(info.value, RequestFailed)
    kept = Path(str(info.value).split("it is kept at ")[1].split(". ")[0])
    assert kept.read_text() == "---\nname: answer-style\ndescription: old\n---\nOld version.\n"
    assert not (checkout / ".claude" / "skills" / "answer-style" / "SKILL.md").exists()


def test_checkout_under_the_replay_root_is_recognised_by_the_harvester(checkout: Path) -> None:
    assert is_replay_path(checkout)
    assert is_replay_path(checkout / "src")



# -- a memory file under training (request.document_path) -------------------------- #

MEMORY = "# Project\n\n- Use pnpm, not npm in this repo.\n"


@pytest.mark.parametrize("name", CLIS)
async def test_a_document_is_installed_verbatim_at_its_path_and_the_prompt_does_not_point_at_it(
        name: str, fake_env: Path, checkout: Path) -> None:
    (checkout / "CLAUDE.md").write_bytes(b"# Project\r\n\r\n- The person's own memory.\r\n")
    before = tree(checkout)
    await make(name).complete(target_request(skill=MEMORY, cwd=str(checkout), document_path="CLAUDE.md"))
    record = only_record(fake_env)
    assert record["files"]["CLAUDE.md"] == MEMORY  # verbatim: no front matter added, the person's own aside
    assert not any(k.endswith("SKILL.md") and MEMORY in v for k, v in record["files"].items())
    prompt = prompt_of(record)
    assert INSTRUCTION in prompt and "Use pnpm" not in prompt and "Use the skill" not in prompt
    assert tree(checkout) == before  # the person's CLAUDE.md back, byte for byte


async def test_claude_reads_the_working_directorys_memory_without_project_settings(fake_env: Path,
                                                                                  checkout: Path) -> None:
    await make("claude-code").complete(target_request(skill=MEMORY, cwd=str(checkout), document_path="CLAUDE.md"))
    argv = only_record(fake_env)["argv"]
    assert argv[argv.index("--setting-sources") + 1] == "user"
    assert Path(argv[argv.index("--add-dir") + 1]).resolve() == checkout.resolve()
    assert "--plugin-dir" not in argv  # a memory file is no skill


@pytest.mark.parametrize("path", ["../CLAUDE.md", "/etc/CLAUDE.md", "~/CLAUDE.md", "docs/../../CLAUDE.md"])
async def test_a_document_path_outside_the_working_directory_is_refused(path: str, fake_env: Path,
                                                                       checkout: Path) -> None:
    with pytest.raises(RequestRejected, match="relative path inside the working directory"):
        await make("codex").complete(target_request(skill=MEMORY, cwd=str(checkout), document_path=path))

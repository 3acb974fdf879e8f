"""Real git repositories for the proposal tests, and a snapshot of everything a
person could notice in one (HEAD, index bytes, status, stash, files, branch, config).

Commits made *by the tests* carry a test identity passed per command; no git
identity is configured anywhere, so staging must work without one.
"""

from __future__ import annotations

import hashlib
from datetime import date
import os
import subprocess
from dataclasses import dataclass
from pathlib import Path

from sleep.proposals.model import EditRecord, ProposalReport

PERSON = {"GIT_AUTHOR_NAME": "Test Person", "GIT_AUTHOR_EMAIL": "person@example.invalid",
          "GIT_COMMITTER_NAME": "Test Person", "GIT_COMMITTER_EMAIL": "person@example.invalid"}
SKILL = ".claude/skills/tests/SKILL.md"
SKILL_TEXT = ("---\nname: tests\ndescription: How to run this project's tests.\n---\n\n"
              "# Tests\n\n- Run `pytest -q` from the repository root.\n")
CANDIDATE = SKILL_TEXT + "- Run `ruff check .` before the tests.\n"
INTENT = "please make the flaky websocket reconnect test in api/ws pass again"
RATIONALE = "two failures came from lint errors the agent did not check for"
SECRET = "ghp_Zq8wN3vK5tR7yB2mX4cL6pD9sF1gH0jQ2eT8"


def git(cwd: Path | str, *args: str, person: bool = False, check: bool = True) -> str:
    env = {**os.environ, "GIT_OPTIONAL_LOCKS": "0", **(PERSON if person else {})}
    out = subprocess.run(["git", *args], cwd=cwd, env=env, capture_output=True, text=True)
    if check and out.returncode != 0:
        raise AssertionError(f"git {' '.join(args)} failed: {out.stderr}")
    return out.stdout.strip()


def make_repo(root: Path, files: dict[str, str] | None = None) -> Path:
    """A non-bare repository on ``main`` with one commit holding ``files`` (default: one skill)."""
    root.mkdir(parents=True, exist_ok=True)
    git(root, "init", "-q", "-b", "main")
    for rel, text in (files if files is not None else {SKILL: SKILL_TEXT, "README.md": "# app\n"}).items():
        write(root / rel, text)
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "initial", person=True)
    return root


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", encoding="utf-8", newline="") as fh:
        fh.write(text)
    return path


def sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def report(**changes) -> ProposalReport:
    base = ProposalReport(
        baseline_val=0.5, candidate_val=0.75, policy="mean", gate_accept=True, n_val_items=4,
        task_deltas={"task-ws-reconnect": 1.0, "task-lint": 0.0}, task_intents={"task-ws-reconnect": INTENT},
        edits=[EditRecord("add", content="- Run `ruff check .` before the tests.", rationale=RATIONALE)],
        models={"target": "gpt-test", "optimizer": "gpt-test"},
        usage={"calls": 12, "input_tokens": 3400, "output_tokens": 210, "cost_usd": 0.0}, cycle_id="c-1")
    return base.with_(**changes)


@dataclass(frozen=True)
class RepoState:
    head: str
    symbolic_head: str
    index: bytes | None
    status: str
    stash: str
    files: dict[str, bytes]
    config: bytes
    other_refs: str


def snapshot(work_tree: Path) -> RepoState:
    """Everything staging must leave byte-identical in the person's checkout."""
    git_dir = Path(git(work_tree, "rev-parse", "--absolute-git-dir"))
    common = Path(git(work_tree, "rev-parse", "--path-format=absolute", "--git-common-dir"))
    index = git_dir / "index"
    files = {}
    for dirpath, dirnames, filenames in os.walk(work_tree):
        dirnames[:] = [d for d in dirnames if d != ".git"]
        for name in filenames:
            if name == ".git":
                continue
            p = Path(dirpath) / name
            files[str(p.relative_to(work_tree))] = p.read_bytes()
    refs = "\n".join(line for line in git(work_tree, "for-each-ref", "--format=%(refname) %(objectname)").splitlines()
                     if not line.startswith(("refs/heads/skillopt/", "refs/notes/skillopt")))
    return RepoState(
        head=git(work_tree, "rev-parse", "HEAD"),
        symbolic_head=git(work_tree, "symbolic-ref", "-q", "HEAD", check=False),
        index=index.read_bytes() if index.exists() else None,
        status=git(work_tree, "--no-optional-locks", "status", "--porcelain=v2", "--branch", "--untracked-files=all"),
        stash=git(work_tree, "stash", "list"),
        files=files,
        config=(common / "config").read_bytes(),
        other_refs=refs,
    )


def all_objects(repo: Path) -> bytes:
    """The content of every object in the repository (``cat-file --batch-all-objects``)."""
    out = subprocess.run(["git", "cat-file", "--batch-all-objects", "--batch", "--unordered"], cwd=repo,
                         capture_output=True, check=True)
    return out.stdout


def commit_messages(repo: Path) -> str:
    """Every commit message reachable from any ref, notes commits included."""
    return git(repo, "log", "--all", "--format=%B")


NIGHT = date(2026, 12, 1)


def staged(tmp_path: Path):
    """A repository with one staged proposal (its night: NIGHT)."""
    from sleep.proposals import stage

    repo = make_repo(tmp_path / "app")
    return repo, stage(repo / SKILL, CANDIDATE, report(), night=NIGHT)


# ----- real processes ------------------------------------------------------------------

# Runs `skillopt-sleep ARGS...` (the real CLI main) in a fresh process. With KILL_AFTER_GIT
# set to a step name, the process SIGKILLs itself right after that git command returns:
# the git runner is wrapped, so this works on any version of the proposal code.
CLI_DRIVER = r"""
import os, signal, sys
from sleep.proposals import gitobjects as g

step = os.environ.get("KILL_AFTER_GIT", "")

def matches(args):
    head = args[0] if args else ""
    if step == "update-ref":
        return head == "update-ref" and "-d" not in args and any(a.startswith("refs/heads/skillopt/") for a in args)
    if step == "delete branch":
        return head == "update-ref" and "-d" in args and any(a.startswith("refs/heads/skillopt/") for a in args)
    if step == "skills main":
        return head == "update-ref" and "-d" not in args and "refs/heads/main" in args
    if step == "notes add":
        return head == "notes" and "add" in args
    if step == "notes remove":
        return head == "notes" and "remove" in args
    if step == "git add":
        return head == "add"
    if step == "git commit":
        return head == "commit"
    return False

real = g.run

def run(repo, *args, **kwargs):
    out = real(repo, *args, **kwargs)
    if step and matches(args):
        os.kill(os.getpid(), signal.SIGKILL)
    return out

g.run = run
from sleep.cli import main
raise SystemExit(main(sys.argv[1:]))
"""


def cli(*args: str, home: Path | None = None, kill_after_git: str | None = None, kill_at: str | None = None,
        prefix: tuple[str, ...] = (), timeout: float = 180) -> subprocess.CompletedProcess:
    """``skillopt-sleep ARGS`` as a real process (``home``: its SKILLOPT_HOME)."""
    import sys

    env = {**os.environ}
    if home is not None:
        env["SKILLOPT_HOME"] = str(home)
    for name, value in (("KILL_AFTER_GIT", kill_after_git), ("SKILLOPT_TEST_KILL_AT", kill_at)):
        env.pop(name, None)
        if value:
            env[name] = value
    return subprocess.run([*prefix, sys.executable, "-c", CLI_DRIVER, *args], env=env, capture_output=True,
                          text=True, timeout=timeout)


def refs(repo: Path) -> str:
    """Every ref and what it points at (branches, notes, tags, stash)."""
    return git(repo, "for-each-ref", "--format=%(refname) %(objectname)")

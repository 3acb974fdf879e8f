"""A skill whose task needs a helper script (issue 33 §2), with the real `claude` from npm pointed at
the scripted model endpoint (tests/sleep/model_endpoint.py), acting in the bubblewrap sandbox.

The endpoint's plan reads the installed skill; when the skill names ``scripts/install.sh`` it runs
that script, else ``npm install``. The optimizer (scripted backend) proposes the script (it runs
``pnpm install``) and a SKILL.md line naming it. The gate replays the val items with the current and
with the whole candidate package: the script is really run by the real CLI inside the sandbox (the
fake ``pnpm`` on PATH writes ``pnpm-lock.yaml`` in the checkout), the person's checkout is never
touched, and the proposal branch carries the script and the line; adopt and undo restore exactly.
The scripted backends test control flow only, not that a model would write such a script."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
import yaml
from model_endpoint import ModelEndpoint, Turn, read, run, say, skill_path
from sleep_testutil import Homes
from test_replay_night import RULES, git, state
from test_replay_night_real import SKILL, point, project  # noqa: F401 - the fixture

from sleep.cli import main
from sleep.proposals import adopt, get, show
from sleep.proposals.undo import undo
from sleep.replay.sandbox import sandbox_available

pytestmark = pytest.mark.skipif(not sandbox_available()[0], reason=f"no bubblewrap sandbox: {sandbox_available()[1]}")

FOLDER = SKILL.rsplit("/", 1)[0]
SCRIPT = "#!/bin/sh\nset -e\npnpm install\necho 'install.sh: done'\n"
LINE = "- Before anything else run `scripts/install.sh` from the repository root (it installs with pnpm)."
PACKAGE_RULES = {"rules": [
    {"stage": "package", "response": json.dumps({"files": {"scripts/install.sh": SCRIPT}, "skill_line": LINE,
                                                 "rationale": "the tasks need the dependencies installed with pnpm"})},
    *RULES["rules"]]}


def script_plan(turn: Turn):
    steps = []
    path = skill_path(turn)
    if path:
        steps.append(lambda: read(path))
    steps.append(lambda: run(f"sh {FOLDER}/scripts/install.sh" if "scripts/install.sh" in turn.said else "npm install"))
    return steps[turn.step]() if turn.step < len(steps) else say("Done.")


def test_a_helper_script_is_gated_in_the_sandbox_and_staged_as_one_package(
        project: Path, tmp_path: Path, capsys, homes: Homes, monkeypatch: pytest.MonkeyPatch) -> None:  # noqa: F811
    before = state(project)
    raw = (project / SKILL).read_bytes()
    rules = tmp_path / "rules.yaml"
    rules.write_text(yaml.safe_dump(PACKAGE_RULES))
    with ModelEndpoint(script_plan) as ep:
        point("claude-code", ep, homes, monkeypatch, tmp_path)
        code = main(["run", "--project", str(project), "--skill", str(project / SKILL), "--backend", "scripted",
                     "--set", f"model.scripted={rules}", "--set", "sleep.target_backend=claude-code",
                     "--set", "sleep.use_corrections=false", "--set", "sleep.paired.retire=false",
                     "--set", "sleep.triggers.enabled=false", "--set", "evaluation.gate_metric=soft", "--json"])
        out = capsys.readouterr().out
        assert code == 0, out
        record = json.loads(out)
    assert record["replay"]["mode"] == "actions" and record["replay"]["sandbox"] == "bubblewrap"
    pk = record["skills"][0]["package"]
    assert pk.get("accepted"), pk
    assert pk["mean_b"] > pk["mean_a"] and pk["files"] == ["scripts/install.sh"]
    # the real CLI ran the script (inside the sandbox: the endpoint's commands are the CLI's tool calls)
    assert f"sh {FOLDER}/scripts/install.sh" in ep.commands and "npm install" in ep.commands
    bodies = json.dumps([r.body for r in ep.model_calls()])
    assert "pnpm: installed" in bodies and "install.sh: done" in bodies  # its output, as the CLI reported it
    assert state(project) == before  # nothing ran in, or was written to, the person's checkout
    assert not (project / FOLDER / "scripts").exists()
    pid = pk["proposal"]["id"]
    p = get(pid)
    assert p.report.kind == "package" and set(p.report.package) == {"scripts/install.sh"}
    assert sorted(git(project, "diff", "--name-only", "HEAD", p.branch).split()) == [
        f"{FOLDER}/SKILL.md", f"{FOLDER}/scripts/install.sh"]
    assert "+pnpm install" in show(pid).diff and "scripts/install.sh" in show(pid).diff
    adopt(pid)
    script = project / FOLDER / "scripts/install.sh"
    assert script.read_text() == SCRIPT and os.access(script, os.X_OK)
    undo(pid)
    assert (project / SKILL).read_bytes() == raw and not script.exists()

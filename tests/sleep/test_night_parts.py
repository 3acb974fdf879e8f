"""The night as small parts with one record (issue 32 §5): only the night's writer saves the
record; the replay's resources each have one owner, which cleans up even when the run fails;
the steps after training take the run's figures from the TrainingResult, not the run directory."""

from __future__ import annotations

import ast
from pathlib import Path
from types import SimpleNamespace

import pytest

from sleep.cycle import package, replaying
from sleep.cycle.package import PackageSettings
from sleep.nightstore import SkillPart

ROOT = Path(__file__).resolve().parents[2]


def _saves(path: Path) -> list[int]:
    """Lines of ``path`` that call ``nightstore.save`` (or a bare ``save`` imported from it)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    imported = any(isinstance(n, ast.ImportFrom) and n.module == "sleep.nightstore"
                   and any(a.name == "save" for a in n.names) for n in ast.walk(tree))
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            f = node.func
            if (isinstance(f, ast.Attribute) and f.attr == "save" and isinstance(f.value, ast.Name)
                    and f.value.id == "nightstore") or (imported and isinstance(f, ast.Name) and f.id == "save"):
                out.append(node.lineno)
    return out


def test_only_the_nights_writer_saves_its_record() -> None:
    found = {str(p.relative_to(ROOT)): lines for p in sorted((ROOT / "sleep").rglob("*.py"))
             if (lines := _saves(p))}
    assert set(found) == {"sleep/cycle/writer.py"}, found


class _Proxy:
    def __init__(self) -> None:
        self.endpoints, self.hosts, self.upstream = [], ["api.example.com"], None
        self.unreachable = ["down.example.com:443"]
        self.closed = False

    def refused_hosts(self) -> list[str]:
        return ["evil.example.com:443"]

    def close(self) -> None:
        self.closed = True


def test_the_egress_proxy_records_what_it_refused_and_closes_when_the_run_fails(monkeypatch) -> None:
    proxy = _Proxy()
    monkeypatch.setattr(replaying.EgressProxy, "for_cli", classmethod(lambda cls, family, hosts: proxy))
    part, said = SkillPart("n1", replay={"mode": "actions"}), []
    with pytest.raises(RuntimeError, match="the run broke"), \
            replaying._egress("claude-code", [], part, said.append) as egress:
        assert egress is proxy
        raise RuntimeError("the run broke")
    assert proxy.closed
    assert part.replay == {"mode": "actions", "refused_hosts": ["evil.example.com:443"],
                           "unreachable_hosts": ["down.example.com:443"]}
    assert any("refused 1 host" in line for line in said)


def test_no_egress_proxy_for_a_replay_that_does_not_act() -> None:
    part = SkillPart("n1")
    with replaying._egress(None, [], part, print) as egress:
        assert egress is None
    assert part.replay == {}


def test_the_package_step_sizes_its_gate_from_the_runs_val_split_in_memory(tmp_path: Path) -> None:
    project = tmp_path / "p"
    skill = project / ".claude/skills/s/SKILL.md"
    skill.parent.mkdir(parents=True)
    skill.write_text("# s\n")
    settings = SimpleNamespace(env=SimpleNamespace(options={"workdir": str(tmp_path / "checkout")}),
                               train=SimpleNamespace(samples_per_item=2))
    choice = SimpleNamespace(path=skill, managed=False, name="s")
    said: list[str] = []
    step = package.run_part(choice, "# s\n", project, settings, ["v1", "v2", "v3"], {}, PackageSettings(), [],
                            said.append, "n1", dry_run=False, acting=True, budget_left=5)
    # one proposal call and both arms of the gate on 3 val items, 2 samples each: 13 calls, 5 left
    assert step is not None and step.name == "package"
    assert step.to_dict() == {"skipped": "the budget has 5 call(s) left; a package edit and its gate may need 13"}


STEPS = ("lifecycle", "paired", "package", "newskills", "trigger_trace", "triggers")


def test_the_steps_after_training_fill_no_record() -> None:
    """They return a StepResult (or an Outcome); only the part, through the night's writer, records it."""
    found = []
    for name in STEPS:
        path = ROOT / "sleep" / "cycle" / f"{name}.py"
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            targets = node.targets if isinstance(node, ast.Assign) else \
                [node.target] if isinstance(node, (ast.AugAssign, ast.AnnAssign)) else []
            for t in targets:
                while isinstance(t, (ast.Subscript, ast.Attribute)):
                    t = t.value
                    if isinstance(t, ast.Name) and t.id in ("night", "part"):
                        found.append(f"{name}.py:{node.lineno}")
                        break
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
                    and node.func.attr in ("setdefault", "update") and isinstance(node.func.value, ast.Attribute) \
                    and isinstance(node.func.value.value, ast.Name) and node.func.value.value.id in ("night", "part"):
                found.append(f"{name}.py:{node.lineno}")
    assert found == []


def test_a_part_spends_the_core_ledger_and_what_each_step_spent() -> None:
    from sleep.cycle.stepresult import Spent, StepResult
    from sleep.cycle.writer import NightWriter
    from sleep.nightstore import NightRecord

    part = SkillPart("n1")
    steps = [StepResult("paired", {"kind": "retire"}, spent=Spent(4, 100, 10, 0.01)),
             StepResult("triggers", skipped="too few"), StepResult("package", {"why": "none"}, spent=Spent(1))]
    NightWriter(NightRecord("n1", "/p", "now")).spent_in_all(
        part, {"calls": 10, "input_tokens": 1000, "output_tokens": 50, "cost_usd": 0.1}, steps)
    assert part.usage == {"model_calls": 15, "input_tokens": 1100, "output_tokens": 60, "tokens": 1160,
                          "cost_usd": 0.11}
    assert steps[0].to_dict() == {"kind": "retire", "spent": {"model_calls": 4, "input_tokens": 100,
                                                              "output_tokens": 10, "cost_usd": 0.01}}
    assert steps[1].to_dict() == {"skipped": "too few"} and steps[1].calls == 0


def test_a_memory_proposals_notes_come_from_the_text_the_night_holds(tmp_path: Path) -> None:
    """The candidate's walk to the branch reads no file again: the notes about a CLAUDE.md's imports
    take the text the night started from, not the file (gone or changed since)."""
    from sleep.memory.files import MemoryFile
    from sleep.memory.plan import notes

    (tmp_path / "docs").mkdir()
    (tmp_path / "docs/style.md").write_text("Use tabs.\n")
    memory = MemoryFile("claude-code", tmp_path / "CLAUDE.md", "CLAUDE.md")  # never written: only held
    group = SimpleNamespace(document=memory, routing=[])
    said = notes(group, tmp_path, "# Rules\n@docs/style.md\n", candidate="# Rules\nUse spaces.\n")
    assert any("imports docs/style.md" in line for line in said)
    assert any("no longer imports @docs/style.md" in line for line in said)

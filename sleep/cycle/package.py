"""Skill packages in the night: besides SKILL.md lines, a helper script or a reference page.

A skill is a folder: ``SKILL.md`` plus ``scripts/``, ``references/``, ``assets/``.
After a skill's training run, in an acting replay (an agent CLI in the
disposable checkout, inside the sandbox), the optimizer may propose a package
edit (:func:`propose`): add or replace ``references/*.md`` pages and small
``scripts/*`` files, with one SKILL.md line that says when to use them. The edit
counts against the same budget as line edits: at most
``optimizer.learning_rate`` changes (the SKILL.md line is one), and at most
``sleep.package.max_files`` files of ``max_file_bytes`` each and
``max_total_bytes`` in all (:class:`PackageSettings`, validated). Only text
(UTF-8) files are read or written; binary files of the folder (``assets/``,
images) are listed to the optimizer as names and never edited.

The gate (:func:`gate`) replays the night's val items twice through the same
target: the current package as the checkout has it, then the whole candidate
package (its files committed in a disposable clone of the night's checkout,
from which every rollout clones its own); the same items, seeds and judges; the statistics of
``skillopt compare`` (paired per item). The candidate is kept when its mean is
higher. Scripts run only there: the night itself never executes them, the
agent CLI does, inside the replay sandbox (bubblewrap, no network, a read-only
file system but the checkout); each task of the gate may run the package's
scripts besides its own allowed commands. Accepted, the package becomes one
proposal (:mod:`sleep.proposals.package`): its branch carries every file.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable, Iterator, Sequence
from dataclasses import replace
from pathlib import Path, PurePosixPath
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from skillopt_core.backends.base import CompletionRequest, Message
from skillopt_core.evaluation.cache import RolloutCache
from skillopt_core.evaluation.rollout import run_rollouts
from skillopt_core.evaluation.stats import average_within_item, paired_comparison
from skillopt_core.run.runtime import build_runtime
from skillopt_core.skill.document import Skill
from skillopt_core.tasks.task import Task
from sleep.cycle.stepresult import Spent, StepResult
from sleep.cycle.triggers import reply_object

Say = Callable[[str], None]
DIRS = ("scripts", "references")


class PackageSettings(BaseModel):
    """``sleep.package``: package edits (see the module docstring)."""

    model_config = ConfigDict(extra="forbid")

    enabled: bool = True
    max_files: int = Field(default=3, ge=1, le=20)  # files one proposal may add or replace
    max_file_bytes: int = Field(default=8192, ge=64, le=262144)
    max_total_bytes: int = Field(default=24576, ge=64, le=1048576)


def read_package(skill_dir: Path) -> tuple[dict[str, str], list[str]]:
    """(text files by path relative to the folder, binary files' paths); SKILL.md excluded."""
    texts: dict[str, str] = {}
    binary: list[str] = []
    for path in sorted(skill_dir.rglob("*")) if skill_dir.is_dir() else []:
        if not path.is_file() or path.is_symlink() or (path.name == "SKILL.md" and path.parent == skill_dir):
            continue
        rel = path.relative_to(skill_dir).as_posix()
        data = path.read_bytes()
        try:
            if b"\0" in data:
                raise UnicodeDecodeError("utf-8", data, 0, 1, "NUL byte")
            texts[rel] = data.decode("utf-8")
        except UnicodeDecodeError:
            binary.append(rel)
    return texts, binary


def check_files(files: dict[str, str], binary: list[str], settings: PackageSettings, budget: int) -> list[str]:
    """Why the proposed ``files`` break the limits (empty: they are fine)."""
    problems = []
    if len(files) > min(settings.max_files, max(budget - 1, 0)):
        problems.append(f"{len(files)} files, more than the limit {min(settings.max_files, max(budget - 1, 0))} "
                        f"(sleep.package.max_files, and optimizer.learning_rate {budget} less the SKILL.md line)")
    total = 0
    for rel, text in files.items():
        p = PurePosixPath(rel)
        size = len(text.encode("utf-8"))
        total += size
        if p.is_absolute() or ".." in p.parts or len(p.parts) != 2 or p.parts[0] not in DIRS:
            problems.append(f"{rel}: only scripts/<file> and references/<page>.md may be added or replaced")
        elif p.parts[0] == "references" and p.suffix != ".md":
            problems.append(f"{rel}: a reference page is Markdown (.md)")
        if rel in binary:
            problems.append(f"{rel}: a binary file of the skill is never edited")
        if "\0" in text:
            problems.append(f"{rel}: not text")
        if size > settings.max_file_bytes:
            problems.append(f"{rel}: {size} bytes, more than sleep.package.max_file_bytes={settings.max_file_bytes}")
    if total > settings.max_total_bytes:
        problems.append(f"{total} bytes in all, more than sleep.package.max_total_bytes={settings.max_total_bytes}")
    return problems


async def propose(optimizer: Any, skill_text: str, texts: dict[str, str], binary: list[str], prompts: list[str],
                  settings: PackageSettings) -> dict[str, Any]:
    """The optimizer's package edit: ``{"files": {path: text}, "skill_line": str, "rationale": str}``."""
    listed = "\n".join([*(f"- {r} ({len(t)} chars)" for r, t in texts.items()),
                        *(f"- {r} (binary, read-only)" for r in binary)]) or "- (no other files)"
    user = ("You improve a coding agent's skill package: the folder holding SKILL.md, scripts/ and references/.\n"
            f"SKILL.md:\n```\n{skill_text}\n```\nOther files:\n{listed}\n\nRecurring requests this skill serves:\n"
            + "\n".join(f"- {p[:300]}" for p in prompts[:12])
            + f"\n\nIf a small helper script (scripts/<name>) or a reference page (references/<name>.md) would make "
              f"the agent do these requests right, write it (at most {settings.max_files} files, "
              f"{settings.max_file_bytes} bytes each) and one SKILL.md line telling the agent when to use it, "
              "with the file's path relative to the skill folder. Answer with JSON only: "
              '{"files": {"scripts/name.sh": "..."}, "skill_line": "- ...", "rationale": "..."}; '
              '{"files": {}} when nothing would help.')
    done = await optimizer.complete(CompletionRequest(messages=(Message("user", user),), max_tokens=3000,
                                                      role="optimizer", stage="package", temperature=0.7))
    data = reply_object(done.text)
    files = data.get("files")
    return {"files": {str(k): str(v) for k, v in files.items()} if isinstance(files, dict) else {},
            "skill_line": " ".join(str(data.get("skill_line") or "").split()),
            "rationale": str(data.get("rationale") or "")}


def with_line(skill_text: str, line: str) -> str:
    """``skill_text`` with ``line`` appended as the body's last line (its newline style kept)."""
    nl = "\r\n" if "\r\n" in skill_text else "\n"
    line = line if line.startswith(("- ", "* ")) else f"- {line}"
    return skill_text + ("" if skill_text.endswith(("\n", "\r")) or not skill_text else nl) + line + nl


def _script_commands(folder: str, files: dict[str, str]) -> list[str]:
    out = []
    for rel in files:
        if rel.startswith("scripts/"):
            path = f"{folder}/{rel}"
            out += [path, f"./{path}", f"sh {path}", f"bash {path}"]
    return out


def gate(settings: Any, backends: dict, skill_text: str, candidate_text: str, files: dict[str, str],
         folder_rel: str, val_tasks: Sequence[Task], level: float = 0.95) -> dict[str, Any]:
    """The current package (A) against the candidate package (B) on the run's val tasks, held in memory (see the module
    docstring); the comparison's dict with ``usage``. Each rollout clones its checkout from a template
    (:mod:`sleep.replay.backend`): A's is the night's checkout, B's a clone of it with the candidate's
    files committed (:func:`package_template`)."""
    from skillopt_core.run.budget import UsageLedger

    metric, tr = settings.evaluation.gate_metric, settings.train
    extra = _script_commands(folder_rel, files)
    ledger = UsageLedger()

    async def scores(run_settings: Any, text: str) -> dict[str, float]:
        runtime = build_runtime(run_settings, ledger=ledger, raw_backends=dict(backends))
        tasks = [replace(t, metadata={**t.metadata,
                                      "allowed_commands": list(t.metadata.get("allowed_commands") or []) + extra})
                 for t in val_tasks]
        if not tasks:
            raise ValueError("no val items to gate the package on")
        results = await run_rollouts(runtime.env, runtime.target, Skill.parse(text, source="package"), tasks,
                                     samples=tr.samples_per_item, workers=tr.workers, cache=RolloutCache(),
                                     seed=tr.seed, max_tokens=settings.model.target_max_tokens,
                                     temperature=settings.model.temperature, metric=metric)
        return average_within_item((r.task_id, getattr(r.score, metric)) for r in results)

    current = asyncio.run(scores(settings, skill_text))
    with package_template(Path(settings.env.options["workdir"]), folder_rel, files) as template:
        with_files = settings.model_copy(deep=True)
        with_files.env = with_files.env.model_copy(update={"options": {**settings.env.options,
                                                                       "workdir": str(template)}})
        candidate = asyncio.run(scores(with_files, candidate_text))
    result = paired_comparison(current, candidate, level=level, seed=tr.seed)
    return {**result.to_dict(), "metric": metric, "summary": result.summary("current package", "candidate package"),
            "usage": ledger.totals()}


@contextlib.contextmanager
def package_template(checkout: Path, folder_rel: str, files: dict[str, str]) -> Iterator[Path]:
    """A disposable clone of the night's ``checkout`` with ``files`` written into the skill folder
    ``folder_rel`` (scripts executable) and committed, so every rollout's own clone has them."""
    from sleep.replay.checkout import CheckoutError, _git, replay_checkout

    with replay_checkout(checkout) as template:
        for rel, text in files.items():
            path = template / folder_rel / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8", newline="")
            if rel.startswith("scripts/"):
                path.chmod(0o755)
        for args in (("add", "-A", "--", folder_rel),
                     ("-c", "user.name=SkillOpt-Sleep", "-c", "user.email=skillopt-sleep@localhost", "commit", "-q",
                      "--no-verify", "-m", "skillopt-sleep: the candidate package under test")):
            done = _git(*args, cwd=template)
            if done.returncode != 0:
                raise CheckoutError(f"could not prepare the candidate package's checkout: {done.stderr.strip()}")
        yield template


def run_part(choice: Any, seed_text: str, project: Path, settings: Any, val_tasks: Sequence[Task], backends: dict,
             cfg: PackageSettings, prompts: list[str], say: Say, night_id: str, dry_run: bool, acting: bool,
             budget_left: int | None = None) -> StepResult | None:
    """The package step of one skill's part (None: off for it), and a proposal when the gate keeps the
    edit. Only in an ``acting`` replay; skipped when ``budget_left`` calls cannot pay for the proposal
    and both arms of the gate. Failures are returned, never raised."""
    if not cfg.enabled or choice.managed:
        return None
    if not (settings.env.options or {}).get("workdir") or not acting:
        return StepResult("package", skipped="package edits are gated only in an acting replay (an agent CLI in "
                                             "the sandboxed checkout), where scripts can run")
    if not choice.path.is_relative_to(project):
        return StepResult("package", skipped="package proposals need the skill inside the project's repository")
    need = 1 + 2 * len(val_tasks) * settings.train.samples_per_item  # the run's val tasks (in memory)
    if budget_left is not None and budget_left < need:
        skipped = f"the budget has {max(budget_left, 0)} call(s) left; a package edit and its gate may need {need}"
        say(f"[Package] {choice.name}: {skipped}")
        return StepResult("package", skipped=skipped)
    folder_rel = choice.path.parent.relative_to(project).as_posix()
    texts, binary = read_package(choice.path.parent)
    budget = int(settings.optimizer.learning_rate)
    calls = 0
    try:
        proposal = asyncio.run(propose(backends["optimizer"], seed_text, texts, binary, prompts, cfg))
        calls = 1
        files, line = proposal["files"], proposal["skill_line"]
        if not files:
            return StepResult("package", {"why": "the optimizer proposed no package edit"}, spent=Spent(calls))
        problems = check_files(files, binary, cfg, budget) + ([] if line else ["no SKILL.md line says when to use it"])
        if problems:
            why = "the package edit was refused: " + "; ".join(problems)
            say(f"[Package] {choice.name}: {why}")
            return StepResult("package", {"why": why, "files": sorted(files)}, spent=Spent(calls))
        candidate_text = with_line(seed_text, line)
        if budget_left is not None:  # the gate's own ledger stops at what the part has left
            settings = settings.model_copy(deep=True)
            settings.budget = settings.budget.model_copy(update={"max_calls": max(budget_left - 1, 1)})
        comparison = gate(settings, backends, seed_text, candidate_text, files, folder_rel, list(val_tasks))
    except Exception as exc:
        say(f"[Package] {choice.name}: not evaluated ({exc})")
        return StepResult("package", error=f"{type(exc).__name__}: {exc}", spent=Spent(calls))
    spent = Spent.of_ledger(comparison.pop("usage", {}), calls)
    accepted = comparison["diff"] > 1e-9
    figures = {"files": sorted(files), "skill_line": line, "rationale": proposal["rationale"], "accepted": accepted,
               **comparison}
    say(f"[Package] {choice.name}: {', '.join(sorted(files))} + one SKILL.md line: {comparison['summary']}")
    staged = _stage(night_id, figures, choice, seed_text, candidate_text, files, project, say) \
        if accepted and not dry_run else None
    return StepResult("package", figures, spent=spent, proposal=staged)


def _stage(night_id: str, pk: dict[str, Any], choice: Any, seed_text: str, candidate_text: str,
           files: dict[str, str], project: Path, say: Say) -> dict[str, Any]:
    from sleep.proposals.errors import ProposalError
    from sleep.proposals.lesson import evidence_key
    from sleep.proposals.model import EditRecord, ProposalReport
    from sleep.proposals.stage import stage

    report = ProposalReport(
        baseline_val=pk["mean_a"], candidate_val=pk["mean_b"], policy="paired, whole package", gate_accept=True,
        gate_reason=pk["summary"], n_val_items=pk["n_items"],
        task_deltas={k: round(v["b"] - v["a"], 6) for k, v in (pk.get("per_item") or {}).items()},
        edits=[EditRecord("add", content=pk["skill_line"], rationale=pk["rationale"]),
               *(EditRecord("add", target=rel, content=f"{len(text)} characters", rationale="package file")
                 for rel, text in sorted(files.items()))],
        cycle_id=night_id, source="cycle", kind="package",
        paired={k: pk[k] for k in ("n_items", "mean_a", "mean_b", "diff", "ci_low", "ci_high", "wins", "losses",
                                   "ties", "summary", "metric") if k in pk},
        notes=[f"A package edit: {', '.join(sorted(files))} and one SKILL.md line; adopt and undo treat them as one "
               "unit. Scripts ran only inside the replay sandbox while the night gated them."],
        lesson_evidence=evidence_key(["package", *sorted(files)]))
    try:
        proposal = stage(choice.path, candidate_text, report, trained_from_text=seed_text, project=project,
                         files={rel: text.encode("utf-8") for rel, text in files.items()},
                         modes={rel: "100755" for rel in files if rel.startswith("scripts/")})
    except ProposalError as exc:
        say(f"[Package] {choice.name}: not staged: {exc}")
        return {"not_staged": str(exc)}
    say(f"[Package] {proposal.id} on branch {proposal.branch} proposes {', '.join(sorted(files))} for "
        f"{choice.name}; review with `skillopt-sleep show {proposal.id}`")
    return {"id": proposal.id, "branch": proposal.branch, "kind": "package"}

"""One skill's replay through the core trainer, with each of its resources owned by one context.

:func:`replaying` picks the target backend, then holds, each in its own
``with``: the disposable checkout of the project (an agent CLI acting in it),
the sandbox homes (cleaned after an acting or checkout replay), the egress
proxy (the hosts it refused are recorded in the part's ``replay`` when it
closes) and the redactor (the replies' secrets remembered in the index at the
end). It yields the :class:`Trained` run, its backends and checkout still up,
so the steps after training (:mod:`sleep.cycle.aftertraining`) can use them.
"""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from functools import partial
from pathlib import Path
from typing import Any

from skillopt_core import Task, prepare_training
from skillopt_core.run.api import TrainingResult
from sleep import paths
from sleep.cycle.backends import CLI_BACKENDS, build_night_backends, replay_host, target_backend
from sleep.cycle.config import NightConfig
from sleep.cycle.context import NightContext, PartJob, Say
from sleep.cycle.judgeprobe import TooFewJudged, apply, probe
from sleep.cycle.skills import skill_hosts
from sleep.cycle.spend import SpendMeter
from sleep.cycle.split import night_split
from sleep.cycle.stepresult import Spent
from sleep.index import Index
from sleep.memory.placement import place
from sleep.nightstore import SkillPart
from sleep.redact import Redactor
from sleep.redact import known as known_secrets
from sleep.replay.checkout import replay_checkout
from sleep.replay.egress import EgressProxy
from sleep.replay.modes import as_text_judge, choose_mode
from sleep.replay.sandbox import cleanup_homes

USER_CONFIG_HINT = "$SKILLOPT_HOME/sleep.yaml"


@dataclass(frozen=True)
class Replay:
    """What one skill's part replays: its items, its starting text and the corrections it offers."""

    tasks: list[Task]
    seed_text: str
    edits: list
    target_hosts: Counter[str] | None = None  # a lesson for one host's skill: replayed through that host


@dataclass(frozen=True)
class Trained:
    result: TrainingResult
    settings: Any  # the run's skillopt_core Settings
    run_dir: Path
    backends: dict[str, Any]
    tasks: list[Task]  # the items replayed: the model judge probe may have changed their judges
    probe_spent: Spent = field(default_factory=Spent)  # what the judge probe spent before the run


@contextmanager
def replaying(ctx: NightContext, job: PartJob, part: SkillPart, replay: Replay) -> Iterator[Trained]:
    """Replay and gate the part's tasks in the core (see the module docstring). A lesson for one
    host's skill replays through that host (its CLI when ready, else the configured backend);
    otherwise a skill in a host's skill folder replays through that host's CLI when it is ready
    (:func:`sleep.cycle.backends.target_backend`)."""
    config, say, group = job.config, ctx.say, job.group
    tasks = replay.tasks
    hosts = replay.target_hosts or Counter(h.split(":", 1)[1] for t in tasks for h in t.tags if h.startswith("host:"))
    owners = skill_hosts(group.choice.path, ctx.project) if not replay.target_hosts else []
    target, why = target_backend(hosts, "host" if replay.target_hosts else config.sleep.target_backend, config.core,
                                 skill_hosts=owners)
    say(f"[Replay] target backend {target} ({why})")
    core, run_dir = _core_settings(config, target, job.run_id)
    part.run_dir = str(run_dir)
    ctx.writer.progress(group, part)  # the run directory is known before the first call

    cli_target = config.sleep.replay_in_checkout and target.replace("_", "-") in CLI_BACKENDS.values()
    mode = choose_mode(config.sleep.replay, cli_target)
    with _checkout(ctx.project, cli_target, say) as workdir:
        part.replay = {**mode.to_dict(), "target": target, "target_host": replay_host(target), "target_why": why}
        say(f"[Replay] mode {mode.mode.replace('_', '-')}: {mode.why}")
        if mode.mode == "read_only":
            tasks = [replace(t, judge=as_text_judge(t.judge)) for t in tasks]
        act_family = target.replace("_", "-") if mode.mode == "actions" else None
        with _sandbox_homes(mode.mode != "read_only"), \
                _egress(act_family, config.sleep.replay_api_hosts, part, say) as egress, _redacting(say) as redactor:
            backends = build_night_backends(core, run_dir / "evidence.jsonl", redactor, act_family=act_family,
                                            egress=egress)
            if group.document is not None:  # a memory file: the candidate where the host loads it
                backends = place(backends, group.document, ctx.project)
                say(f"[Replay] the candidate {group.document.rel} is placed where {group.document.host} loads it")
            meter = SpendMeter(partial(ctx.writer.spent, group, part))
            backends = meter.wrap(backends)
            tasks, core, probe_spent = _probe_judge(ctx, job, part, tasks, backends, core, meter)
            run = prepare_training(core, tasks=night_split(tasks, core.env.split_seed, core.env.split_ratio),
                                   seed_skill=replay.seed_text, backends=backends, candidate_edits=replay.edits,
                                   workdir=workdir, subscribers=list(ctx.subscribers))
            part.preflight = {k: v for k, v in run.estimate.items() if k != "text"}  # the core prints its line
            ctx.writer.progress(group, part)
            if replay.edits:
                say(f"[Replay] {len(replay.edits)} of your corrections join the first step as candidate edits")
            try:
                result = asyncio.run(run.run())
                yield Trained(result, run.settings, Path(run.run_dir), backends, tasks, probe_spent)
            finally:
                paths.make_private_tree(Path(run.run_dir))  # the core writes some run files with the umask's mode


def _probe_judge(ctx: NightContext, job: PartJob, part: SkillPart, tasks: list[Task], backends: dict[str, Any],
                 core: Any, meter: SpendMeter) -> tuple[list[Task], Any, Spent]:
    """Probe the tasks' model judge (:mod:`sleep.cycle.judgeprobe`) before the gate uses it: the
    tasks the gate uses, the run's settings with what the probe spent taken from the part's budget,
    and that spend. Raises :class:`TooFewJudged` when the judge was left out and fewer than
    ``sleep.min_tasks`` tasks have a rule judge of their own."""
    def made() -> Spent:
        u = meter.usage()
        return Spent(u["model_calls"], u["input_tokens"], u["output_tokens"], u["cost_usd"])

    found = probe(tasks, job.members, backends.get("judge"), core.budget.max_calls, made,
                  getattr(core.budget, "max_usd", None))
    tasks, found = apply(found, tasks)
    if found is None:
        return tasks, core, Spent()
    part.judge_probe = found.to_dict()
    ctx.writer.progress(job.group, part)
    ctx.say(f"[Judge] {found.sentence()}")
    spent = found.spent
    if found.verdict == "left_out":
        left = len({t.metadata.get("task_id", t.id) for t in tasks})
        if left < job.config.sleep.min_tasks:
            raise TooFewJudged(f"{found.sentence()}; {left} task{'' if left == 1 else 's'} with a rule judge of "
                               f"{'its' if left == 1 else 'their'} own, fewer than sleep.min_tasks="
                               f"{job.config.sleep.min_tasks}; nothing was trained or staged for it", found)
    if spent.model_calls:
        budget = core.budget
        core.budget = budget.model_copy(update={
            "max_calls": max(1, budget.max_calls - spent.model_calls) if budget.max_calls else budget.max_calls,
            "max_tokens": (max(1, budget.max_tokens - spent.input_tokens - spent.output_tokens)
                           if budget.max_tokens else budget.max_tokens),
            "max_usd": (max(1e-6, round(budget.max_usd - spent.cost_usd, 6))
                        if getattr(budget, "max_usd", None) else getattr(budget, "max_usd", None))})
    return tasks, core, spent


def _core_settings(config: NightConfig, target: str, run_id: str) -> tuple[Any, Path]:
    """The core's settings for a part's run (its target backend, its run directory in the data
    directory) and that run directory."""
    root = paths.private_dir(paths.data_dir() / "nights")
    core = config.core.model_copy(deep=True)
    core.model = core.model.model_copy(update={"target_backend": target})
    core.output = core.output.model_copy(update={"root": str(root), "run_id": run_id})
    run_dir = root / "jsonl_tasks" / run_id
    paths.private_dir(run_dir.parent)  # the core creates what is below with the umask's mode
    return core, run_dir


@contextmanager
def _checkout(project: Path, cli_target: bool, say: Say) -> Iterator[Path | None]:
    """A disposable checkout of the project at HEAD for an agent CLI (removed after), else None."""
    if not cli_target:
        yield None
        return
    with replay_checkout(project) as workdir:
        say(f"[Replay] in a disposable checkout of the project at HEAD: {workdir}")
        yield workdir


@contextmanager
def _sandbox_homes(used: bool) -> Iterator[None]:
    """The sandboxes' private homes, removed after a replay that may have made them."""
    try:
        yield
    finally:
        if used:
            cleanup_homes()


@contextmanager
def _egress(family: str | None, api_hosts: list[str], part: SkillPart, say: Say) -> Iterator[EgressProxy | None]:
    """The egress proxy of an acting replay (None otherwise); the hosts it refused or could not
    reach are recorded in the part's ``replay`` when it closes."""
    if family is None:
        yield None
        return
    egress = EgressProxy.for_cli(family, api_hosts)
    try:
        allowed = ", ".join(str(e) for e in egress.endpoints) or "none configured"
        say(f"[Replay] the sandbox lets the agent reach {', '.join(egress.hosts) or 'no vendor host'} and its "
            f"configured endpoints ({allowed})" + (f" through your proxy {egress.upstream}" if egress.upstream else ""))
        yield egress
    finally:
        try:
            _record_refused(part, egress, say)
        finally:
            egress.close()


@contextmanager
def _redacting(say: Say) -> Iterator[Redactor]:
    """The redactor of the replies; the secrets it met are remembered in the index at the end."""
    redactor = Redactor(collect=True)
    try:
        yield redactor
    finally:
        if redactor.values:
            with Index.open() as index, index.transaction():
                known_secrets.remember(index, redactor.values)
        if redactor.total:
            say(f"[Replay] {redactor.total} secrets redacted at the model boundary (replies, recorded prompts) "
                "before anything recorded them")


def _record_refused(part: SkillPart, egress: EgressProxy, say: Say) -> None:
    refused = egress.refused_hosts()
    if refused:
        part.replay = {**(part.replay or {}), "refused_hosts": refused}
        say(f"[Replay] the sandbox refused {len(refused)} host(s): {', '.join(refused[:5])}")
    unreachable = list(dict.fromkeys(egress.unreachable))
    if unreachable:  # allowed, but they did not resolve or answer (a network problem, not the sandbox)
        part.replay = {**(part.replay or {}), "unreachable_hosts": unreachable}
        say(f"[Replay] {len(unreachable)} allowed host(s) could not be reached: {', '.join(unreachable[:5])}")


def refused_message(hosts: list[str]) -> str:
    """What to tell the person when the sandbox refused the CLI's way out (instead of a login hint)."""
    names = ", ".join(hosts[:5]) + (f" and {len(hosts) - 5} more" if len(hosts) > 5 else "")
    first = hosts[0].split(" ", 1)[0]
    return (f"the sandbox refused {names} (allow it with `--set sleep.replay_api_hosts=[\"{first}\"]` or "
            f"`replay_api_hosts: [\"{first}\"]` under `sleep:` in {USER_CONFIG_HINT}, if the agent's model "
            "endpoint is there)")

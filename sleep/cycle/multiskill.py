"""One night, every skill: which skill each recurring task trains, the budget's
fair share per skill, the night's per-skill record, and a lesson for every host.

A task trains the skill its sessions invoked (:attr:`sleep.mine.store.PoolItem.skills`,
resolved to a file where that host looks for it, :func:`sleep.cycle.skills.candidate_paths`).
Tasks whose sessions invoked no skill, or one no file is found for, go to the
skill a single night would choose (:func:`sleep.cycle.skills.choose_skill`: the
most used, a fitting project skill, or the managed one; when they are of several kinds of work,
a new skill per kind, :mod:`sleep.cycle.newskills`). Skills train most-used
first; each gets ``remaining // skills left`` of the night's ``budget.max_calls`` /
``max_tokens``, so what an idle or small skill leaves is passed on.

A lesson for every host: a correction the gate accepted for one host's skill
is offered, as the only candidate edit, to the skill of each other host whose
sessions the project has (the same skill name in that host's folders, else
its managed skill, when the file exists: a lesson creates no skill), replayed through that host's agent
(its CLI when ready, else the configured backend) and gated like any night; it is staged as that
host's own proposal, never copied ungated.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sleep.cycle.newskills import split as split_new
from sleep.cycle.skills import HOST_OF_PREFIX, SkillChoice, candidate_paths, choose_skill, managed_path
from sleep.nightstore import NightUsage

# What the night record keeps of each skill's part (the rest lives in its run directory).
PART_FIELDS = ("outcome", "reason", "tasks", "scores", "corrections", "proposal", "usage", "run_dir",
               "fingerprint", "replay", "preflight", "paired", "triggers", "package", "judge_probe")


@dataclass
class SkillGroup:
    choice: SkillChoice
    records: list = field(default_factory=list)  # sleep.mine.store.TaskRecord
    uses: int = 0  # sessions of the project that invoked the skill
    lesson_from: str | None = None  # a cross-host lesson: the skill path the correction was accepted for
    edits: list | None = None  # the lesson's candidate edits (None: the group's own corrections)
    document: Any = None  # a memory file (sleep.memory.files.MemoryFile): this part trains it, not a skill
    routing: list = field(default_factory=list)  # each correction's route, memory or skill, and why
    said_of: dict = field(default_factory=dict)  # a memory part's edit -> the person's words


def family_of(source: str) -> str:
    """The host family whose skill folders a transcript source reads (Claude Code's when it has none)."""
    return HOST_OF_PREFIX.get(source, "claude-code")


def skill_groups(project: Path, records: list, members: dict[str, list], sessions: Iterable[Any],
                 override: Path | None = None, per_cluster: int = 0) -> list[SkillGroup]:
    """The night's skills, most used first, each with its tasks (see the module docstring).
    With ``override`` (``--skill``) one group: that skill, with the tasks that used it or none.
    ``per_cluster``: tasks no skill serves get a new skill per cluster of at least this many
    tasks when there are two or more such clusters (:mod:`sleep.cycle.newskills`); 0: never."""
    sessions = list(sessions)
    texts = [f"{r.intent}\n{r.prompt}" for r in records]
    if override is not None:
        choice = choose_skill(project, sessions, override, tasks=texts)
        kept = [r for r in records if not _used(members, r) or choice.name in _used(members, r) or choice.managed]
        return [SkillGroup(choice, kept)]
    uses: Counter[tuple[str, str]] = Counter()
    for s in sessions:
        for name in s.skills:
            uses[(family_of(s.host), name)] += 1
    resolved: dict[tuple[str, str], Path | None] = {}

    def resolve(host: str, name: str) -> Path | None:
        if (host, name) not in resolved:
            resolved[(host, name)] = next((p for p in candidate_paths(host, name, project) if p.is_file()), None)
        return resolved[(host, name)]

    groups: dict[Path, SkillGroup] = {}
    rest = []
    for record in records:
        invoked: Counter[tuple[str, str]] = Counter()
        for item in members.get(record.id, []):
            for name in item.skills:
                invoked[(family_of(item.host), name)] += 1
        target = None
        for (host, name), _ in sorted(invoked.items(), key=lambda kv: (-uses[kv[0]], -kv[1], kv[0])):
            path = resolve(host, name)
            if path is not None:
                target = (path, host, name)
                break
        if target is None:
            rest.append(record)
            continue
        path, host, name = target
        if path not in groups:
            count = sum(n for (h, nm), n in uses.items() if nm == name and resolve(h, nm) == path)
            groups[path] = SkillGroup(SkillChoice(path, name, host, False, count,
                                                  f"invoked in {count} session{'' if count == 1 else 's'}"),
                                      uses=count)
        groups[path].records.append(record)
    if rest or not groups:
        default = choose_skill(project, sessions, None, tasks=[f"{r.intent}\n{r.prompt}" for r in rest] or texts)
        new, rest = split_new(project, rest, default, per_cluster) if per_cluster else ([], rest)
        for choice, cluster in new:
            groups[choice.path] = SkillGroup(choice, cluster)
    if rest or not groups:
        if default.path in groups:
            groups[default.path].records.extend(rest)
        else:
            groups[default.path] = SkillGroup(default, rest, uses=default.sessions)
    return sorted(groups.values(), key=lambda g: (-g.uses, -len(g.records), str(g.choice.path)))


def _used(members: dict[str, list], record: Any) -> set[str]:
    return {s for item in members.get(record.id, []) for s in item.skills}


def hosts_of(sessions: Iterable[Any]) -> Counter[str]:
    """Sessions per host family (the families with skill folders)."""
    return Counter(family_of(s.host) for s in sessions)


def lesson_targets(project: Path, group: SkillGroup, hosts: Counter[str], taken: set[Path]) -> list[SkillChoice]:
    """The other hosts' skill files a lesson accepted for ``group`` is offered to: the same skill
    name where that host looks for it, else that host's managed skill, if either exists. ``taken``: skill files the
    night already trains (a host sharing the file learns it there)."""
    out = []
    for host, _ in hosts.most_common():
        if host == group.choice.host:
            continue
        path = next((p for p in candidate_paths(host, group.choice.name, project) if p.is_file()), None)
        name = group.choice.name
        if path is None and managed_path(host, project).is_file():
            path = managed_path(host, project)
            name = path.parent.name
        if path is None or path in taken or path == group.choice.path:
            continue  # no skill file of that host to offer it to (a lesson creates none), or trained already
        taken.add(path)
        out.append(SkillChoice(path, name, host, False, hosts[host],
                               f"a lesson accepted for {group.choice.path.name} of {group.choice.host}, "
                               f"offered to {host}'s skill"))
    return out


def budget_share(limit: int | None, used: float, left: int) -> int | None:
    """A skill's share of a budget ``limit`` when ``used`` is spent and ``left`` skills remain."""
    if limit is None:
        return None
    return max(1, int((limit - used) // max(1, left)))


def usd_share(limit: float | None, used: float, left: int) -> float | None:
    """A skill's share of a dollar cap ``limit`` (as :func:`budget_share`; at least a cent)."""
    if limit is None:
        return None
    return max(0.01, round((limit - used) / max(1, left), 6))


def budget_spent(budget: Any, used: dict[str, Any]) -> str:
    """Why no skill may train any more this night ('' while the budget lasts)."""
    names = {"model_calls": "budget.max_calls", "tokens": "budget.max_tokens", "cost_usd": "budget.max_usd"}
    for key, limit in (("model_calls", budget.max_calls), ("tokens", budget.max_tokens),
                       ("cost_usd", getattr(budget, "max_usd", None))):
        if limit is not None and used.get(key, 0) >= limit:
            name = names[key]
            return (f"the night's budget ({name}={limit}) was spent by the skills before; nothing was trained "
                    "or staged for it (raise the budget, or run it alone with --skill)")
    return ""


COMPARED_OUTCOMES = ("staged", "already_proposed", "no_improvement", "idle")  # a part a later one may be idle against


def previous_fingerprints(records: Iterable[Any]) -> dict[str, tuple[str, str]]:
    """Per skill path, (fingerprint, night id) of its newest completed part in ``records`` (newest first):
    one that trained to the end (staged, its lesson already proposed, or no improvement) or was idle."""
    found: dict[str, tuple[str, str]] = {}
    for night in records:
        parts = night.skills or ([{**night.skill, "fingerprint": night.fingerprint, "outcome": night.outcome}]
                                 if night.skill else [])
        for part in parts:
            path, fp = part.get("path"), part.get("fingerprint")
            if path and fp and path not in found and part.get("outcome") in COMPARED_OUTCOMES:
                found[path] = (fp, night.id)
    return found


def part_summary(choice: SkillChoice, part: Any, uses: int, lesson_from: str | None,
                 group: SkillGroup | None = None) -> dict[str, Any]:
    """What the night record keeps of one skill's part (a memory file's: :func:`sleep.memory.plan.summary`)."""
    from sleep.memory.plan import summary

    out: dict[str, Any] = {"path": str(choice.path), "name": choice.name, "host": choice.host,
                           "managed": choice.managed, "why": choice.why, "uses": uses}
    if lesson_from:
        out["lesson_from"] = lesson_from
    if group is not None:
        out.update(summary(group))
    out.update({k: getattr(part, k) for k in PART_FIELDS})
    return out


OUTCOME_ORDER = ("staged", "would_stage", "already_proposed", "no_improvement", "failed", "too_few_tasks", "idle")


def night_outcome(parts: list[dict[str, Any]]) -> tuple[str, str]:
    """The night's outcome over its skills: the best of theirs; its reason names each skill's."""
    if not parts:
        return "too_few_tasks", "no skill had tasks"
    outcome = min((p["outcome"] for p in parts), key=lambda o: OUTCOME_ORDER.index(o) if o in OUTCOME_ORDER else 99)
    if len(parts) == 1:
        return outcome, parts[0]["reason"]
    return outcome, "; ".join(f"{p['name']} ({p['host']}): {p['outcome']}, {p['reason']}" for p in parts)


def total_usage(parts: list[dict[str, Any]]) -> NightUsage:
    def total(key: str) -> Any:
        return sum((p.get("usage") or {}).get(key, 0) for p in parts)

    out = NightUsage(model_calls=total("model_calls"), input_tokens=total("input_tokens"),
                     output_tokens=total("output_tokens"), tokens=total("tokens"), cost_usd=round(total("cost_usd"), 6))
    return out if any(out.values()) else NightUsage()

"""A night's memory parts: lessons routed out of the skills, and offered to every host's memory file.

For each skill part of the night, :meth:`MemoryPlan.split` routes its
correction edits (:mod:`.route`): those about the whole repository leave the
skill's candidate edits and become candidate edits of the host's memory file
(when the project has one), written in that file's style. The memory file
trains as its own part of the night (a :class:`sleep.cycle.multiskill.SkillGroup`
whose ``document`` is the :class:`~sleep.memory.files.MemoryFile`): the same
tasks, replayed with the candidate where the host loads it
(:mod:`.placement`), gated like a skill, staged as a proposal that changes that
one file. When it is accepted, :meth:`MemoryPlan.offers` offers the kept lesson
to the other hosts' memory files present in the project, each gated through
its own host (its CLI when ready, else the configured backend).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from skillopt_core import Edit
from sleep.cycle.corrections import corrections_of, rule_key
from sleep.memory import files, imports
from sleep.memory.route import MEMORY, classify
from sleep.rule_text import Style, write_rule


class MemoryPlan:
    """See the module docstring. ``members``: task id -> pool items (their ``evidence``)."""

    def __init__(self, project: Path, records: Iterable[Any], members: dict[str, list], sleep_settings: Any) -> None:
        self.project = project
        self.enabled = bool(getattr(sleep_settings, "memory_files", True)) and sleep_settings.use_corrections
        self.user_files = bool(getattr(sleep_settings, "memory_user_files", False))
        self.tasks_of: dict[str, set[str]] = defaultdict(set)  # rule key -> recurring task ids it was said in
        for record in records:
            for item in members.get(record.id, []):
                for text in corrections_of([item.evidence]):
                    rule = write_rule(text)
                    if rule:
                        self.tasks_of[rule_key(rule)].add(record.id)
        self.groups: dict[Path, Any] = {}  # memory file -> its part of the night (a SkillGroup)
        self.done: set[Path] = set()

    def split(self, group: Any, edits: list[Edit], evidence: list[dict],
              say: Any = None) -> tuple[list[Edit], list[Any]]:
        """(the skill's own edits, new memory groups to queue): the edits about the whole repository
        go to the memory file of ``group``'s host; ``group.routing`` records each decision and why."""
        said_of: dict[str, str] = {}
        style = Style.of(group.choice.seed_text())
        for text in corrections_of(evidence):
            rule = write_rule(text, style)
            if rule:
                said_of.setdefault(rule_key(rule), text)
        memory = files.find(self.project, group.choice.host, self.user_files) if self.enabled else None
        kept: list[Edit] = []
        new: list[Any] = []
        routing: list[dict[str, Any]] = []
        for edit in edits:
            said = said_of.get(rule_key(edit.content[len(style.bullet):] if edit.content.startswith(style.bullet)
                                        else edit.content))
            if edit.origin != "correction" or said is None:
                kept.append(edit)
                continue
            plain = write_rule(said) or said
            route = classify(said, len(self.tasks_of.get(rule_key(plain), ())) or 1)
            entry = {"rule": plain, "said": said, **route.to_dict()}
            if route.to == MEMORY:
                why_not = self._why_not(memory, group)
                if memory is not None and why_not is None:
                    fresh = self._to_memory(memory, group, edit, said, plain, route.reason, entry)
                    new += [fresh] if fresh is not None else []
                    routing.append(entry)
                    continue
                if memory is not None and memory.path == group.choice.path:
                    entry.update(memory_file=memory.rel, reason=f"{route.reason}; {why_not}")
                else:
                    entry.update(to="skill", reason=f"{route.reason}; {why_not}")
            routing.append(entry)
            kept.append(edit)
        group.routing = routing
        for r in routing if say else ():
            say(f"[Route] \"{r['rule']}\" → {r.get('memory_file') if r['to'] == MEMORY else group.choice.name}"
                f"{'' if r['to'] == MEMORY else ' (skill)'}: {r['reason']}")
        return kept, new

    def _why_not(self, memory: files.MemoryFile | None, group: Any) -> str | None:
        """Why a lesson about the whole repository stays in ``group``'s file (None: it goes to ``memory``)."""
        if memory is None:
            loads = " or ".join(files.PROJECT_FILES.get(group.choice.host, ()))
            return f"kept in the skill: the project has no memory file {group.choice.host} loads ({loads})"
        if memory.path == group.choice.path:
            return f"{memory.rel} is the document this part trains already"
        if memory.path in self.done:
            return f"kept in the skill: {memory.rel} was trained earlier this night"
        return None

    def _to_memory(self, memory: files.MemoryFile, group: Any, edit: Edit, said: str, plain: str, reason: str,
                   entry: dict[str, Any]) -> Any:
        """Add the lesson to ``memory``'s part of the night; returns that part when it is new."""
        from sleep.cycle.multiskill import SkillGroup
        from sleep.cycle.skills import SkillChoice

        entry["memory_file"] = memory.rel
        target = self.groups.get(memory.path)
        fresh = target is None
        if target is None:
            choice = SkillChoice(memory.path, memory.rel, memory.host, False, group.uses,
                                 f"{memory.label}: lessons about the whole repository from {group.choice.name}")
            target = SkillGroup(choice, list(group.records), 0, None, [])
            target.document = memory
            self.groups[memory.path] = target
        else:
            target.records.extend(r for r in group.records if r not in target.records)
        edits = target.edits if target.edits is not None else []
        target.edits = edits
        mstyle = Style.of(choice_text(memory))
        content = f"{mstyle.bullet}{write_rule(said, mstyle) or plain}"
        if all(rule_key(e.content) != rule_key(content) for e in edits):
            edits.append(Edit(op="add", content=content, origin="correction",
                              rationale=f"{edit.rationale} Routed to {memory.rel}: {reason}."))
            target.said_of[content] = said
        target.routing.append({**entry, "from": str(group.choice.path)})
        return target if fresh else None

    def started(self, group: Any) -> None:
        """``group`` (a memory part) trains now: later lessons for its file stay in their skills."""
        if group.document is not None:
            self.done.add(group.document.path)

    def offers(self, group: Any, kept: list[str], taken: set[Path]) -> list[Any]:
        """The other hosts' memory files present in the project, each offered the lesson ``kept``
        accepted for ``group``'s memory file (a part gated through that host)."""
        from sleep.cycle.multiskill import SkillGroup
        from sleep.cycle.skills import SkillChoice

        lessons = [e for e in group.edits if e.content in kept]
        out = []
        for memory in files.present(self.project, self.user_files):
            if memory.path == group.document.path or memory.path in taken or memory.path in self.done:
                continue
            taken.add(memory.path)
            mstyle = Style.of(choice_text(memory))
            edits = []
            for e in lessons:
                said = group.said_of.get(e.content)
                line = (write_rule(said, mstyle) if said else None) or e.content.lstrip("-*+ ")
                edits.append(Edit(op="add", content=f"{mstyle.bullet}{line}", origin="correction",
                                  rationale=f"{e.rationale} Accepted for {group.document.rel} "
                                            f"({group.document.host}); offered to {memory.rel} ({memory.host})."))
            choice = SkillChoice(memory.path, memory.rel, memory.host, False, 0,
                                 f"{memory.label}: a lesson accepted for {group.document.rel} of "
                                 f"{group.document.host}, offered to {memory.host}'s memory file")
            offer = SkillGroup(choice, list(group.records), 0, str(group.document.path), edits)
            offer.document = memory
            offer.said_of = {e.content: group.said_of.get(lesson.content)
                             for e, lesson in zip(edits, lessons, strict=True)}
            offer.routing = [{**r, "memory_file": memory.rel, "offered_from": group.document.rel}
                             for r in group.routing]
            out.append(offer)
        return out

def notes(group: Any, project: Path, seed_text: str, candidate: str | None = None) -> list[str]:
    """The proposal's notes for a memory part: each lesson's route and why, and the imports the
    ``candidate`` dropped from the file's text the night started from (``seed_text``, held in memory)."""
    memory = getattr(group, "document", None)
    if memory is None:
        return []
    out = [f"Memory file {memory.rel} ({memory.label}); replayed with the candidate where {memory.host} "
           "loads it."]
    for r in group.routing:
        out.append(f"Routed to memory: \"{r['rule']}\" ({r['reason']}).")
    if memory.path.name == "CLAUDE.md":
        found = imports.follow(memory.path, project if not memory.user else memory.path.parent, seed_text)
        line = imports.note(memory.rel, found)
        if line:
            out.append(line)
        if candidate is not None:
            lost = imports.dropped(seed_text, candidate)
            if lost:
                out.append("The candidate no longer imports " + ", ".join("@" + r for r in lost)
                           + " (review this: the imported files themselves are unchanged).")
    return out


def choice_text(memory: files.MemoryFile) -> str:
    try:
        with open(memory.path, encoding="utf-8", newline="") as fh:
            return fh.read()
    except (OSError, UnicodeDecodeError):
        return ""


def summary(group: Any) -> dict[str, Any]:
    """What a part's record says about routing (and, for a memory part, the document)."""
    out: dict[str, Any] = {}
    if getattr(group, "routing", None):
        out["routing"] = group.routing
    memory = getattr(group, "document", None)
    if memory is not None:
        out["document"] = {"kind": "memory", "file": memory.rel, "host": memory.host, "label": memory.label,
                           "user": memory.user}
    return out

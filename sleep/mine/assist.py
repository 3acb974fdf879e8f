"""Optional help from the optimizer model: confirm or split borderline groups, refine judges.

Never required: without an :class:`Assistant` the miner's deterministic path
is the whole answer. With one, every request asks for JSON that is checked
against a schema; an answer that does not fit is ignored (and counted), a rule
the model proposes that the judge library cannot express or that
:func:`sleep.mine.rules.keep_rule` refuses is dropped, never guessed. Answers
are cached in the index by the hash of what was asked (and the backend and
model), so asking again costs no call; calls stop at ``max_calls``.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import jsonschema

from skillopt_core import Backend, BackendError, CompletionRequest
from skillopt_core.tasks.judges.spec import text_rule_types
from sleep.mine import store
from sleep.mine.rules import Evidence, keep_rule, summary
from sleep.mine.select import PoolItem

MAX_PROMPTS_SHOWN = 30
CONFIRM_SCHEMA = {
    "type": "object",
    "properties": {"same_task": {"type": "boolean"},
                   "groups": {"type": "array", "items": {"type": "array", "items": {"type": "integer", "minimum": 0}}}},
    "required": ["same_task"],
}
# JSON types of the text judges' options (their names and meanings come from the judge registry).
_OPTION_TYPES: dict[str, dict[str, Any]] = {
    "value": {"type": "string"}, "values": {"type": "array", "items": {"type": "string"}},
    "pattern": {"type": "string"}, "flags": {"type": "string"}, "limit": {"type": "integer"},
    "case_sensitive": {"type": "boolean"}, "schema": {"type": "object"},
}
# Options of the text judges a proposal leaves out (a JSON Schema of its own is not what a person said).
_NOT_PROPOSED = frozenset({"schema", "flags", "case_sensitive"})


def _proposed_options() -> dict[str, list[str]]:
    """Judge type -> the options a proposed rule may carry: the judges that grade the answer text
    alone (:func:`skillopt_core.tasks.judges.spec.text_rule_types`)."""
    return {t.name: [o for o in t.options if o not in _NOT_PROPOSED] for t in text_rule_types()}


def rule_schema() -> dict[str, Any]:
    """What a proposed rule may be, derived from the judge registry."""
    kinds = _proposed_options()
    options = sorted({o for opts in kinds.values() for o in opts})
    return {"type": "object",
            "properties": {"type": {"enum": list(kinds)}, **{o: _OPTION_TYPES.get(o, {}) for o in options}},
            "required": ["type"]}


def judge_schema() -> dict[str, Any]:
    return {"type": "object",
            "properties": {"rubric": {"type": "string", "maxLength": 4000},
                           "rules": {"type": "array", "items": rule_schema()}},
            "required": ["rubric", "rules"]}


def _rule_shapes() -> str:
    """``{"type": "contains", "value": ...}`` and the others, for the prompt."""
    shapes = []
    for kind, options in _proposed_options().items():
        fields = "".join(f", \"{o}\": {'[s, ...]' if o == 'values' else 'n' if o == 'limit' else 's'}"
                         for o in options)
        shapes.append(f"{{\"type\": \"{kind}\"{fields}}}")
    return ", ".join(shapes)


_CONFIRM_SYSTEM = (
    "You check groups of prompts a person typed to a coding agent in different sessions of one project. "
    "Decide whether every prompt asks for the same recurring task: the same kind of work with the same "
    "outcome, even if the wording, the language or the file, branch or table names differ. Two prompts that "
    "share words but ask for different work (running the tests vs running the linter; adding a column vs "
    "dropping a table) are different tasks. Reply with JSON only: {\"same_task\": true} or "
    "{\"same_task\": false, \"groups\": [[indices of one task], ...]} covering every index once.")


def _judge_system() -> str:
    return (
        "You write the grading instructions for a recurring coding-agent task, from what the person said when "
        "they corrected or accepted answers. Reply with JSON only: {\"rubric\": text, \"rules\": [...]}. A rule "
        f"is one of {_rule_shapes()}, checked against the agent's final answer text. Only propose a rule the "
        "person's own words justify; leave out anything you cannot express as such a rule (put it in the rubric "
        "instead).")


@dataclass
class Draft:
    """A task the run is about to write, with what its judge was built from."""

    record: store.TaskRecord
    items: list[PoolItem]
    evidence: Evidence
    lines: list[str]
    loosest: float
    is_new: bool
    rebuild: Callable[[list[dict[str, Any]], list[str], str | None], list[dict[str, Any]]]


@dataclass
class Assistant:
    """The optimizer role, budgeted. New tasks whose members are not all worded alike are
    shown to the model for confirmation, the least cohesive first (lowest score of a member
    to the medoid), while the budget lasts."""

    backend: Backend
    max_calls: int = 20
    calls: int = 0
    cache_hits: int = 0
    rejected_replies: int = 0
    dropped_rules: int = 0
    splits: int = 0
    errors: list[str] = field(default_factory=list)
    _pending: dict[str, tuple[str, Any]] = field(default_factory=dict)

    def report(self) -> dict[str, Any]:
        return {"backend": f"{self.backend.name}:{self.backend.model}", "calls": self.calls,
                "cache_hits": self.cache_hits, "budget": self.max_calls, "rejected_replies": self.rejected_replies,
                "dropped_rules": self.dropped_rules, "splits": self.splits, "errors": self.errors[:5]}

    # ----- the two uses ------------------------------------------------------------------

    def review_groups(self, drafts: list[Draft], conn: Any,
                      make: Callable[[list[PoolItem]], Draft | None]) -> list[Draft]:
        """New borderline drafts go to the model; a split replaces one draft by its parts."""
        out: list[Draft] = []
        for d in sorted(drafts, key=lambda d: (not d.is_new, d.loosest, d.record.id)):
            distinct = len({" ".join(it.text.casefold().split()) for it in d.items})
            if not (d.is_new and distinct >= 2):
                out.append(d)
                continue
            shown = d.items[:MAX_PROMPTS_SHOWN]
            prompt = "Prompts:\n" + "\n".join(f"[{k}] {it.text[:300]}" for k, it in enumerate(shown))
            reply = self._ask(conn, "confirm", _CONFIRM_SYSTEM, prompt, CONFIRM_SCHEMA)
            groups = _partition(reply, len(shown)) if reply and not reply.get("same_task", True) else None
            if not groups:
                out.append(d)
                continue
            self.splits += 1
            rest = d.items[MAX_PROMPTS_SHOWN:]
            for g in groups:
                part = make([shown[k] for k in g] + (rest if g is groups[0] else []))
                if part is not None:
                    out.append(part)
        return out

    def refine(self, d: Draft, conn: Any) -> None:
        """Let the model rewrite the rubric and propose rules; keep only rules that pass."""
        if not (d.evidence.corrections or d.evidence.approvals):
            return
        payload = {"task": d.record.prompt, "intent": d.record.intent,
                   "corrections": [c.get("text") for c in d.evidence.corrections][:10],
                   "accepted_answers": [a[:400] for a in d.evidence.accepted][:3],
                   "current_rules": [r for r in d.record.judge if r.get("type") != "rubric"]}
        reply = self._ask(conn, "judge", _judge_system(), json.dumps(payload, ensure_ascii=False), judge_schema())
        if not reply:
            return
        rules: list[dict[str, Any]] = []
        for r in reply["rules"]:
            rule = {k: v for k, v in r.items() if v is not None}
            if keep_rule(rule, rules, d.evidence) is None:
                rules.append(rule)
            else:
                self.dropped_rules += 1
        d.record.judge = d.rebuild(rules, d.lines, reply["rubric"].strip() or None)
        d.record.judge_summary = summary(d.record.judge)

    def flush(self, conn: Any, now: str) -> None:
        """Write the answers gathered during the run (inside the run's transaction)."""
        for key, (kind, value) in self._pending.items():
            store.cache_put(conn, key, kind, value, now)
        self._pending.clear()

    # ----- one request ---------------------------------------------------------------------

    def _ask(self, conn: Any, kind: str, system: str, prompt: str, schema: dict[str, Any]) -> dict[str, Any] | None:
        key = hashlib.sha256(json.dumps([kind, self.backend.name, self.backend.model, system, prompt],
                                        ensure_ascii=False).encode()).hexdigest()
        cached = self._pending.get(key, (None, None))[1] or store.cache_get(conn, key)
        if cached is not None:
            self.cache_hits += 1
            return cached
        if self.calls >= self.max_calls:
            return None
        self.calls += 1
        request = CompletionRequest.single(prompt, system=system, max_tokens=800, temperature=0.0,
                                           json_schema=schema, role="optimizer", stage=f"mine-{kind}")
        try:
            completion = _run(self.backend.complete(request))
        except BackendError as exc:
            self.errors.append(f"{kind}: {exc}")
            return None
        data = _parse(completion.text, schema)
        if data is None:
            self.rejected_replies += 1
            return None
        self._pending[key] = (kind, data)
        return data


def _parse(text: str, schema: dict[str, Any]) -> dict[str, Any] | None:
    start, end = text.find("{"), text.rfind("}")
    if start < 0 or end <= start:
        return None
    try:
        data = json.loads(text[start:end + 1])
        jsonschema.validate(data, schema)
    except (ValueError, jsonschema.ValidationError):
        return None
    return data


def _partition(reply: dict[str, Any], n: int) -> list[list[int]] | None:
    groups = [sorted(set(g)) for g in reply.get("groups") or [] if g]
    flat = [k for g in groups for k in g]
    if len(groups) < 2 or sorted(flat) != list(range(n)):
        return None
    return groups


def _run(coro: Any) -> Any:
    """Run a coroutine from sync code, also when the caller is already inside an event loop."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(coro)
    box: dict[str, Any] = {}

    def target() -> None:
        try:
            box["value"] = asyncio.run(coro)
        except BaseException as exc:  # re-raised in the caller's thread
            box["error"] = exc

    t = threading.Thread(target=target)
    t.start()
    t.join()
    if "error" in box:
        raise box["error"]
    return box["value"]

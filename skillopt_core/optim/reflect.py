"""Reflect: the optimizer reads failed (and some successful) rollouts in
minibatches and proposes small edits to the skill.

What the optimizer sees: the skill, each item's prompt, the target's answer,
the judge's feedback sentence (the failure in words: "The agent ran `npm
install`; the person corrected that before."), what the agent did when the
backend reported it (a bounded, redacted summary of the trajectory: commands
with exit codes, files changed, whether verification passed; never tool output
or the verification command) and (train items only, if enabled) the reference.
Never a judge's internals (patterns, regexes, globs, check commands, rubric),
never val/test items.
"""

from __future__ import annotations

import json
import random
from collections.abc import Sequence
from dataclasses import dataclass

from skillopt_core.backends import Backend, CompletionRequest
from skillopt_core.backends.keys import redact
from skillopt_core.backends.structured import complete_json
from skillopt_core.concurrency import gather_or_cancel
from skillopt_core.evaluation.rollout import RolloutResult
from skillopt_core.run.state import PROMPT_MEMORY_CHARS
from skillopt_core.skill.document import Skill
from skillopt_core.skill.edits import Edit
from skillopt_core.tasks.task import Task


def _edit_shape(op: str, required: list[str], optional: tuple[str, ...] = ()) -> dict:
    props = {"op": {"type": "string", "const": op}}
    props.update({k: {"type": "string"} for k in required + list(optional)})
    return {"type": "object", "properties": props, "required": ["op", *required]}


# One shape per op, so constrained decoding cannot produce an `add` without
# content or a `replace` without a target.
EDIT_ITEM_SCHEMA = {
    "anyOf": [
        _edit_shape("add", ["content"], ("anchor", "rationale")),
        _edit_shape("replace", ["target", "content"], ("rationale",)),
        _edit_shape("delete", ["target"], ("rationale",)),
    ]
}
MAX_EDITS_PER_REPLY = 3
TRAJECTORY_CHARS = 1200  # of each example's summary of what the agent did
EDITS_SCHEMA = {
    "type": "object",
    # maxItems matters for constrained decoding: without it a small model can
    # loop inside the array until it runs out of tokens. (No maxLength on
    # strings: llama.cpp expands it into a grammar rule per character.)
    "properties": {"edits": {"type": "array", "items": EDIT_ITEM_SCHEMA, "maxItems": MAX_EDITS_PER_REPLY}},
    "required": ["edits"],
}

# What a reply must be to be read at all; each edit is then checked on its own
# (Edit.from_dict), so one malformed edit is skipped and counted, not the reply.
EDITS_ACCEPT_SCHEMA = {
    "type": "object",
    "properties": {"edits": {"type": "array", "items": {"type": "object", "required": ["op"]}}},
    "required": ["edits"],
}

SYSTEM = (
    "You improve a skill document: Markdown instructions that another model follows when it answers tasks. "
    "You read examples of how the model did under the current skill and propose a few small, general edits "
    "that would fix the failures without breaking the successes. Edits are JSON objects: "
    "add (new text, optionally after an anchor), replace (a target quoted from the skill, and its new text) "
    "or delete (a target quoted from the skill). Quote targets exactly. Prefer general rules over "
    'item-specific facts. Reply with one JSON object {"edits": [...]} holding at most 3 edits, each with '
    'the keys "op", "target", "content", "anchor" and "rationale" as needed.'
)


@dataclass(frozen=True)
class ReflectOutcome:
    edits: list[Edit]
    calls: int
    invalid_replies: int
    skipped_edits: int
    problems: list[str]


def _item_block(n: int, task: Task, result: RolloutResult, show_reference: bool) -> str:
    verdict = "PASS" if result.score.passed else "FAIL"
    lines = [f"### Example {n} ({verdict}, score {result.score.soft:.2f})", f"Task: {task.prompt.strip()[:1500]}"]
    if task.context:
        lines.append(f"Context (excerpt): {task.context.strip()[:800]}")
    lines.append(f"Model answer: {result.response.strip()[:1200] or '(empty)'}")
    if result.trajectory is not None:
        lines.append("What the model did:\n" + redact(result.trajectory.summary(TRAJECTORY_CHARS)))
    if result.score.feedback:
        lines.append(f"Feedback: {result.score.feedback}")
    if show_reference and task.reference is not None and not result.score.passed:
        ref = task.reference if isinstance(task.reference, str) else json.dumps(task.reference, ensure_ascii=False)
        lines.append(f"Reference: {ref[:400]}")
    return "\n".join(lines)


def _edit_line(edit: dict) -> str:
    shown = {k: v for k, v in edit.items() if v not in (None, "") and k not in ("origin", "rationale")}
    return json.dumps(shown, ensure_ascii=False)[:300]


def bounded_listing(lines: Sequence[str], budget: int, what: str) -> list[str]:
    """The most recent ``lines`` (newest last) that fit in ``budget`` characters,
    plus a line saying how many older ones are not shown."""
    kept: list[str] = []
    used = 0
    for line in reversed(lines):
        if kept and used + len(line) > budget:
            break
        kept.append(line)
        used += len(line)
    kept.reverse()
    hidden = len(lines) - len(kept)
    return ([f"- ({hidden} older {what} not shown)"] if hidden else []) + kept


def build_reflect_request(
    skill: Skill,
    batch: Sequence[tuple[Task, RolloutResult]],
    *,
    show_reference: bool,
    rejected: Sequence[Edit] = (),
    unapplied: Sequence[dict] = (),
    meta_notes: str = "",
    max_tokens: int = 1024,
) -> CompletionRequest:
    """The reflection prompt. ``rejected`` are edits the gate rejected (oldest
    first; the newest that fit are shown); ``unapplied`` are
    ``{"edit", "status", "detail"}`` records of edits that could not be applied."""
    parts = ["## Current skill", "```markdown", skill.render().strip(), "```", "", "## Examples"]
    parts += [_item_block(i + 1, t, r, show_reference) for i, (t, r) in enumerate(batch)]
    if rejected:
        parts += ["", "## Edits already tried and rejected by validation (do not propose them again)"]
        parts += bounded_listing([f"- {_edit_line(e.to_dict())}" for e in rejected], PROMPT_MEMORY_CHARS,
                                 "rejected edits")
    if unapplied:
        parts += ["",
                  "## Edits that could not be applied (quote targets and anchors exactly as they appear in the skill)"]
        lines = [f"- {_edit_line(u['edit'])}: {u.get('detail') or u.get('status')}" for u in unapplied]
        parts += bounded_listing(lines, PROMPT_MEMORY_CHARS // 2, "unapplied edits")
    if meta_notes:
        parts += ["", "## Notes from earlier epochs (what worked and what did not)", meta_notes.strip()]
    parts += ["", 'Propose edits as {"edits": [...]}.']
    return CompletionRequest.single(
        "\n".join(parts), system=SYSTEM, max_tokens=max_tokens, role="optimizer", stage="reflect"
    )


def make_minibatches(
    pairs: Sequence[tuple[Task, RolloutResult]], size: int, include_successes: bool, seed: int
) -> list[list[tuple[Task, RolloutResult]]]:
    """Failures in chunks of ``size``; each chunk gets up to a quarter of its
    size in successes, so edits keep what already works. No failures → none."""
    rng = random.Random(seed)
    failures = [p for p in pairs if not p[1].score.passed]
    successes = [p for p in pairs if p[1].score.passed]
    rng.shuffle(failures)
    rng.shuffle(successes)
    n_succ = max(1, size // 4) if include_successes else 0
    batches = []
    for i in range(0, len(failures), size):
        chunk = failures[i : i + size]
        take = successes[:n_succ]
        successes = successes[n_succ:] + take  # rotate so chunks see different successes
        batches.append(chunk + take)
    return batches


async def reflect(
    optimizer: Backend,
    skill: Skill,
    pairs: Sequence[tuple[Task, RolloutResult]],
    *,
    minibatch_size: int,
    include_successes: bool,
    show_reference: bool,
    seed: int,
    rejected: Sequence[Edit] = (),
    unapplied: Sequence[dict] = (),
    meta_notes: str = "",
    max_tokens: int = 1024,
) -> ReflectOutcome:
    batches = make_minibatches(pairs, minibatch_size, include_successes, seed)
    requests = [
        build_reflect_request(skill, b, show_reference=show_reference, rejected=rejected, unapplied=unapplied,
                              meta_notes=meta_notes, max_tokens=max_tokens)
        for b in batches
    ]
    replies = await gather_or_cancel(complete_json(optimizer, r, EDITS_SCHEMA, EDITS_ACCEPT_SCHEMA) for r in requests)
    edits: list[Edit] = []
    problems: list[str] = []
    invalid = skipped = 0
    calls = 0
    for n, reply in enumerate(replies, 1):
        calls += reply.attempts
        if not reply.ok:
            invalid += 1
            problems.append(f"minibatch {n}: {reply.error}")
            continue
        for raw in reply.data["edits"]:
            try:
                # The origin of a reflected edit is the optimizer, whatever the reply says.
                fields = {k: v for k, v in raw.items() if k != "origin"} if isinstance(raw, dict) else raw
                edits.append(Edit.from_dict(fields))
            except ValueError as exc:
                skipped += 1
                problems.append(f"minibatch {n}: skipped an edit: {exc}")
    return ReflectOutcome(edits, calls, invalid, skipped, problems)

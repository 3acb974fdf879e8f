"""Aggregate: merge the edits proposed across minibatches.

Identical edits (same normalised key) merge without a model call and count
as support. Similar edits may then be merged by the optimizer; if its reply is
invalid or would add edits, the deterministic merge stands (safe fallback).
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from skillopt_core.backends import Backend, CompletionRequest
from skillopt_core.skill.edits import Edit
from skillopt_core.optim.reflect import EDIT_ITEM_SCHEMA, EDITS_ACCEPT_SCHEMA
from skillopt_core.backends.structured import complete_json


@dataclass(frozen=True)
class Patch:
    edit: Edit
    support: int  # how many minibatches proposed it

    def to_dict(self) -> dict:
        return {**self.edit.to_dict(), "support": self.support}


def merge_identical(edits: list[Edit]) -> list[Patch]:
    """Order of first appearance; support = number of identical proposals."""
    order: list[tuple] = []
    groups: dict[tuple, list[Edit]] = {}
    for edit in edits:
        key = edit.key()
        if key not in groups:
            order.append(key)
            groups[key] = []
        groups[key].append(edit)
    return [Patch(groups[k][0], len(groups[k])) for k in order]


MERGE_SYSTEM = (
    "You merge proposed edits to a skill document. Combine edits that say the same thing into one; "
    "keep distinct edits as they are. Never invent new edits. Quote targets exactly as given. "
    'Reply with one JSON object: {"edits": [...]}.'
)


@dataclass(frozen=True)
class AggregateOutcome:
    patches: list[Patch]
    used_model: bool
    fallback_reason: str = ""


async def aggregate(optimizer: Backend | None, edits: list[Edit], *, use_model: bool, max_tokens: int = 1024) -> AggregateOutcome:
    patches = merge_identical(edits)
    if not use_model or optimizer is None or len(patches) < 2:
        return AggregateOutcome(patches, used_model=False)
    listing = "\n".join(f"{i + 1}. {json.dumps(p.edit.to_dict(), ensure_ascii=False)}" for i, p in enumerate(patches))
    request = CompletionRequest.single(
        f"Proposed edits:\n{listing}\n\nMerge similar edits. Reply with {{\"edits\": [...]}}.",
        system=MERGE_SYSTEM, max_tokens=max_tokens, role="optimizer", stage="merge",
    )
    schema = {
        "type": "object",
        "properties": {"edits": {"type": "array", "items": EDIT_ITEM_SCHEMA, "maxItems": len(patches)}},
        "required": ["edits"],
    }
    reply = await complete_json(optimizer, request, schema, EDITS_ACCEPT_SCHEMA)
    if not reply.ok:
        return AggregateOutcome(patches, used_model=True, fallback_reason=reply.error)
    try:
        merged = [Edit.from_dict(raw) for raw in reply.data["edits"]]
    except ValueError as exc:
        return AggregateOutcome(patches, used_model=True, fallback_reason=str(exc))
    if not merged or len(merged) > len(patches):
        return AggregateOutcome(patches, used_model=True, fallback_reason="the merge returned no edits or more edits than it was given")
    # Support of a merged edit: the support of the proposals it matches (at least 1).
    support = {p.edit.key(): p.support for p in patches}
    merged_patches = merge_identical(merged)
    return AggregateOutcome(
        [Patch(p.edit, max(p.support, support.get(p.edit.key(), 1))) for p in merged_patches], used_model=True
    )

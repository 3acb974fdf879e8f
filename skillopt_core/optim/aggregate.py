"""Aggregate: merge the edits proposed across minibatches.

Identical edits (same normalised key) merge without a model call; their
support adds up. When some edits are similar (:func:`similar`), the optimizer
may merge them, under rules that keep it honest (with no similar pair there
is no merge call):

- every merged edit names the proposals it merges (``sources``, 1-based) and
  each proposal can be merged once; an edit naming no valid source was
  invented, and is dropped and counted;
- a merged edit keeps an op of its sources, and for ``replace`` / ``delete``
  the target of one of them (the merge may reword content, never retarget);
- its support is the sum of its sources' support, its origin theirs;
- proposals the merge did not mention are kept as they are.

If the reply is invalid, the deterministic merge stands (safe fallback).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

from skillopt_core.backends import Backend, CompletionRequest
from skillopt_core.backends.structured import complete_json
from skillopt_core.optim.reflect import EDIT_ITEM_SCHEMA, EDITS_ACCEPT_SCHEMA
from skillopt_core.skill.edits import Edit


@dataclass(frozen=True)
class Patch:
    edit: Edit
    support: int  # how many proposals it stands for

    def to_dict(self) -> dict:
        return {**self.edit.to_dict(), "support": self.support}


def merge_identical(patches_or_edits: list) -> list[Patch]:
    """Order of first appearance; support adds up over identical edits; origins are joined."""
    order: list[tuple] = []
    groups: dict[tuple, list[Patch]] = {}
    for item in patches_or_edits:
        patch = item if isinstance(item, Patch) else Patch(item, 1)
        key = patch.edit.key()
        if key not in groups:
            order.append(key)
            groups[key] = []
        groups[key].append(patch)
    return [_combine(groups[k]) for k in order]


def _combine(group: list[Patch]) -> Patch:
    first = group[0].edit
    origins = sorted({o for p in group for o in p.edit.origin.split("+")})
    edit = Edit(first.op, first.target, first.content, first.rationale, first.anchor, "+".join(origins))
    return Patch(edit, sum(p.support for p in group))


MERGE_SYSTEM = (
    "You merge proposed edits to a skill document. Combine edits that say the same thing into one and list "
    'the numbers of the proposals it combines in "sources"; never invent an edit that no proposal made, and '
    "never change the target of a replace or delete. Proposals you do not mention are kept as they are. "
    'Reply with one JSON object: {"edits": [...]}.'
)


def _merge_item_schema(n: int) -> dict:
    sources = {"type": "array", "items": {"type": "integer", "minimum": 1, "maximum": n}, "minItems": 1, "maxItems": n}
    shapes = []
    for shape in EDIT_ITEM_SCHEMA["anyOf"]:
        shapes.append({**shape, "properties": {**shape["properties"], "sources": sources},
                       "required": [*shape["required"], "sources"]})
    return {"anyOf": shapes}


@dataclass(frozen=True)
class AggregateOutcome:
    patches: list[Patch]
    used_model: bool
    fallback_reason: str = ""
    dropped: list[str] = field(default_factory=list)  # merged edits refused, with why


SIMILAR_WORDS = 0.5  # word-set Jaccard at which two edits may say the same thing


def _words(text: str) -> set[str]:
    return {w.strip(".,;:!?`'\"()").lower() for w in text.split()} - {""}


def similar(a: Edit, b: Edit) -> bool:
    """Could ``a`` and ``b`` be one edit worded twice? Same op, and the same
    target (replace / delete) or largely the same words (add)."""
    if a.op != b.op:
        return False
    if a.op != "add" and " ".join(a.target.split()) == " ".join(b.target.split()):
        return True
    wa, wb = _words(a.content or a.target), _words(b.content or b.target)
    return bool(wa and wb) and len(wa & wb) / len(wa | wb) >= SIMILAR_WORDS


async def aggregate(optimizer: Backend | None, edits: list[Edit], *, use_model: bool,
                    max_tokens: int = 1024) -> AggregateOutcome:
    patches = merge_identical(edits)
    if not use_model or optimizer is None or len(patches) < 2:
        return AggregateOutcome(patches, used_model=False)
    if not any(similar(a.edit, b.edit) for i, a in enumerate(patches) for b in patches[i + 1:]):
        return AggregateOutcome(patches, used_model=False)  # nothing to merge: save the call
    listing = "\n".join(f"{i + 1}. {json.dumps(p.edit.to_dict(), ensure_ascii=False)}" for i, p in enumerate(patches))
    request = CompletionRequest.single(
        f"Proposed edits:\n{listing}\n\nMerge similar edits. Reply with {{\"edits\": [...]}}.",
        system=MERGE_SYSTEM, max_tokens=max_tokens, role="optimizer", stage="merge",
    )
    schema = {
        "type": "object",
        "properties": {"edits": {"type": "array", "items": _merge_item_schema(len(patches)), "maxItems": len(patches)}},
        "required": ["edits"],
    }
    reply = await complete_json(optimizer, request, schema, EDITS_ACCEPT_SCHEMA)
    if not reply.ok:
        return AggregateOutcome(patches, used_model=True, fallback_reason=reply.error)
    merged, dropped = check_merge(patches, reply.data["edits"])
    return AggregateOutcome(merged, used_model=True, dropped=dropped)


def check_merge(patches: list[Patch], replies: list) -> tuple[list[Patch], list[str]]:
    """Apply the merge rules of the module docstring to the optimizer's merged
    edits; returns the patches and one line per refused merged edit."""
    used: set[int] = set()
    out: list[Patch] = []
    dropped: list[str] = []
    for n, raw in enumerate(replies, 1):
        raw = raw if isinstance(raw, dict) else {}
        sources = raw["sources"] if isinstance(raw.get("sources"), list) else []
        valid = sorted({s for s in sources if isinstance(s, int) and not isinstance(s, bool)
                        and 1 <= s <= len(patches) and s not in used})
        if not valid:
            dropped.append(f"merged edit {n}: names no proposal it merges (an invented edit)")
            continue
        try:
            edit = Edit.from_dict({k: v for k, v in raw.items() if k not in ("sources", "origin")})
        except ValueError as exc:
            dropped.append(f"merged edit {n}: {exc}")
            continue
        originals = [patches[s - 1].edit for s in valid]
        if edit.op not in {e.op for e in originals}:
            dropped.append(f"merged edit {n}: op {edit.op!r} is not the op of any edit it merges")
            continue
        if edit.op != "add" and " ".join(edit.target.split()) not in {" ".join(e.target.split()) for e in originals}:
            dropped.append(f"merged edit {n}: changes the target of the edits it merges")
            continue
        used.update(valid)
        origins = sorted({o for e in originals for o in e.origin.split("+")})
        edit = Edit(edit.op, edit.target, edit.content, edit.rationale, edit.anchor, "+".join(origins))
        out.append(Patch(edit, sum(patches[s - 1].support for s in valid)))
    out.extend(p for i, p in enumerate(patches, 1) if i not in used)
    return merge_identical(out), dropped

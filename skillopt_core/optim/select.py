"""Select: keep at most the learning-rate budget of edits for this step.

Under budget, all edits are kept in order. Over budget, the optimizer ranks
them (most useful first); without a valid ranking, higher support wins, ties by
order of proposal.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from skillopt_core.backends import Backend, CompletionRequest
from skillopt_core.backends.structured import complete_json
from skillopt_core.optim.aggregate import Patch


def rank_schema(n: int) -> dict:
    return {
        "type": "object",
        "properties": {"order": {"type": "array", "items": {"type": "integer", "minimum": 1, "maximum": n},
                                 "maxItems": n}},
        "required": ["order"],
    }

RANK_SYSTEM = (
    "You rank proposed edits to a skill document by how much they would help the model pass its tasks, "
    'most useful first. Reply with one JSON object: {"order": [edit numbers, best first]}.'
)


@dataclass(frozen=True)
class Selection:
    selected: list[Patch]
    ranked_by: str  # "all" | "model" | "support"
    note: str = ""
    ranked: tuple[Patch, ...] = ()  # every patch, most useful first (selected is its head)


def rank_by_support(patches: list[Patch]) -> list[Patch]:
    return [p for _, p in sorted(enumerate(patches), key=lambda ip: (-ip[1].support, ip[0]))]


def order_from_ranking(patches: list[Patch], order: list[int]) -> list[Patch]:
    """Apply a 1-based ranking; unknown or repeated numbers are ignored and
    unranked patches follow by support."""
    seen: set[int] = set()
    ranked = []
    for n in order:
        if 1 <= n <= len(patches) and n not in seen:
            seen.add(n)
            ranked.append(patches[n - 1])
    rest = [p for i, p in enumerate(patches, 1) if i not in seen]
    return ranked + rank_by_support(rest)


async def select(optimizer: Backend | None, patches: list[Patch], budget: int, *, use_model: bool,
                 skill_text: str = "", max_tokens: int = 256) -> Selection:
    if len(patches) <= budget:
        return Selection(list(patches), "all", ranked=tuple(patches))
    if use_model and optimizer is not None:
        listing = "\n".join(f"{i + 1}. {json.dumps(p.edit.to_dict(), ensure_ascii=False)}"
                            for i, p in enumerate(patches))
        request = CompletionRequest.single(
            f"Skill:\n```markdown\n{skill_text.strip()[:6000]}\n```\n\nEdits:\n{listing}\n\nRank them.",
            system=RANK_SYSTEM, max_tokens=max_tokens, role="optimizer", stage="rank",
        )
        reply = await complete_json(optimizer, request, rank_schema(len(patches)))
        if reply.ok:
            ranked = order_from_ranking(patches, reply.data["order"])
            return Selection(ranked[:budget], "model", ranked=tuple(ranked))
        ranked = rank_by_support(patches)
        return Selection(ranked[:budget], "support", note=f"model ranking invalid: {reply.error}", ranked=tuple(ranked))
    ranked = rank_by_support(patches)
    return Selection(ranked[:budget], "support", ranked=tuple(ranked))

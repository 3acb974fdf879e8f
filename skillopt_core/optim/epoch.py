"""Epoch-boundary updates.

Slow update (momentum): compare the skill at the start of the epoch with the
skill at its end on the same train items, classify each item (improved,
regressed, persistent failure, stable success) and let the optimizer write
guidance into the protected ``slow-update`` block of the skill.

Meta skill: optimizer-side notes (what kinds of edits were accepted or
rejected this epoch) carried into the next epoch's reflection prompts.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from skillopt_core.backends import Backend, CompletionRequest
from skillopt_core.backends.structured import complete_json
from skillopt_core.tasks.task import Task

SLOW_UPDATE_BLOCK = "slow-update"
CATEGORIES = ("improved", "regressed", "persistent_failure", "stable_success")


def compare_items(previous: Mapping[str, float], current: Mapping[str, float],
                  threshold: float = 1.0) -> dict[str, list[str]]:
    """Classify every item present in both mappings; pass means score ≥ threshold."""
    out: dict[str, list[str]] = {c: [] for c in CATEGORIES}
    for item in previous:
        if item not in current:
            continue
        was, now = previous[item] >= threshold, current[item] >= threshold
        if was and now:
            out["stable_success"].append(item)
        elif now:
            out["improved"].append(item)
        elif was:
            out["regressed"].append(item)
        else:
            out["persistent_failure"].append(item)
    return out


def summarize_comparison(groups: Mapping[str, list[str]]) -> str:
    return ", ".join(f"{len(groups[c])} {c.replace('_', ' ')}" for c in CATEGORIES)



SLOW_SYSTEM = (
    "You write short, durable guidance for a skill document, based on how its behaviour changed over a "
    "training epoch. Keep what made items improve, warn against what made items regress, and address "
    'persistent failures with general rules. At most 5 bullet points. Reply {"guidance": "..."}.'
)
META_SYSTEM = (
    "You keep notes for yourself, the optimizer of a skill document: which kinds of edits were accepted by "
    'validation and which were rejected, so the next epoch proposes better edits. At most 6 bullet points. Reply '
    '{"notes": "..."}.'
)


@dataclass(frozen=True)
class TextReply:
    text: str | None
    calls: int
    error: str = ""


async def _ask_text(optimizer: Backend, prompt: str, system: str, key: str, stage: str, max_tokens: int) -> TextReply:
    """One JSON object ``{key: "..."}`` from the optimizer; empty or invalid → no text, with the reason."""
    schema = {"type": "object", "properties": {key: {"type": "string"}}, "required": [key]}
    request = CompletionRequest.single(prompt, system=system, max_tokens=max_tokens, role="optimizer", stage=stage)
    reply = await complete_json(optimizer, request, schema)
    text = reply.data[key].strip() if reply.ok else ""
    return TextReply(text or None, reply.attempts, reply.error or ("" if text else f"empty {key}"))


def _examples(tasks: Mapping[str, Task], ids: Sequence[str], responses: Mapping[str, str], limit: int = 4) -> str:
    lines = []
    for item in ids[:limit]:
        task = tasks.get(item)
        if task is None:
            continue
        lines.append(f"- Task: {task.prompt.strip()[:300]}\n  Answer now: {responses.get(item, '')[:300]}")
    return "\n".join(lines) or "(none)"


async def write_slow_update_guidance(
    optimizer: Backend,
    previous_text: str,
    current_text: str,
    groups: Mapping[str, list[str]],
    tasks: Mapping[str, Task],
    responses: Mapping[str, str],
    previous_guidance: str = "",
    max_tokens: int = 512,
) -> TextReply:
    prompt = "\n".join([
        "## Skill at the start of the epoch", "```markdown", previous_text.strip(), "```",
        "## Skill at the end of the epoch", "```markdown", current_text.strip(), "```",
        f"## Item changes: {summarize_comparison(groups)}",
        "### Regressed", _examples(tasks, groups["regressed"], responses),
        "### Persistent failures", _examples(tasks, groups["persistent_failure"], responses),
        "### Improved", _examples(tasks, groups["improved"], responses),
        "## Previous guidance", previous_guidance.strip() or "(none)",
        'Write the new guidance as {"guidance": "..."}.',
    ])
    return await _ask_text(optimizer, prompt, SLOW_SYSTEM, "guidance", "slow_update", max_tokens)


async def write_meta_notes(
    optimizer: Backend, epoch_records: Sequence[Mapping], previous_notes: str = "", max_tokens: int = 512
) -> TextReply:
    lines = []
    for rec in epoch_records:
        edits = "; ".join(json.dumps(e, ensure_ascii=False)[:200] for e in rec.get("selected_edits", [])) or "no edits"
        lines.append(f"- step {rec['step']}: {rec['action']} ({rec.get('gate_reason', '')}); edits: {edits}")
    prompt = "\n".join([
        "## This epoch's steps", "\n".join(lines) or "(no steps)",
        "## Your previous notes", previous_notes.strip() or "(none)",
        'Write updated notes as {"notes": "..."}.',
    ])
    return await _ask_text(optimizer, prompt, META_SYSTEM, "notes", "meta_skill", max_tokens)

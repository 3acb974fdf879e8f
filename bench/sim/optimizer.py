"""The simulated optimizer: what it proposes, as pure functions of the prompt
the engine sent and a seeded random generator.

It reads the prompt like a model would (the engine's own prompt layout: the
current skill, the examples with PASS/FAIL and the task, the rejected edits,
the notes of earlier epochs) and answers with the mix of
:class:`~bench.sim.world.OptimizerMix`: helpful rules for the categories of the
failures it was shown, neutral rules, harmful ones (a plausible-looking rule
that hurts, or rewriting a helpful rule away) and malformed edits (a missing
field, an unknown op, a target that is not in the skill). Several minibatches
failing on one category propose the same rule, sometimes in another wording,
so the aggregator sees exact and near duplicates.
"""

from __future__ import annotations

import json
import random
import re
from typing import Sequence

from bench.sim.world import GENERAL, Item, Rule, World

_EXAMPLE_RE = re.compile(r"### Example \d+ \((PASS|FAIL)[^)]*\)\nTask: \[sim item (\d+)\]")
_NUMBERED_RE = re.compile(r"^(\d+)\. (\{.*\})$", re.M)
_TASK_RE = re.compile(r"- Task: \[sim item (\d+)\]")


def _section(text: str, start: str, end: str | None = None) -> str:
    at = text.find(start)
    if at < 0:
        return ""
    body = text[at + len(start):]
    if end is not None:
        stop = body.find(end)
        body = body if stop < 0 else body[:stop]
    return body


def _json_lines(section: str) -> list[dict]:
    out = []
    for line in section.splitlines():
        line = line.strip()
        if line.startswith("- {"):
            try:
                out.append(json.loads(line[2:]))
            except ValueError:
                continue  # a line cut short by the prompt's size bound
    return out


class Proposer:
    """Draws edits for one reply."""

    def __init__(self, world: World, skill_text: str, rng: random.Random,
                 avoid_texts: set[str] = frozenset(), avoid_rules: set[str] = frozenset()) -> None:
        self.world, self.skill, self.rng = world, skill_text, rng
        self.mix = world.spec.optimizer
        self.stated = world.stated(skill_text)
        self.avoid_texts = {" ".join(t.lower().split()) for t in avoid_texts}
        self.avoid_rules = set(avoid_rules)

    def _open(self, rule: Rule) -> bool:
        return rule.id not in self.stated and rule.id not in self.avoid_rules

    def _wording(self, rule: Rule) -> str | None:
        order = list(rule.texts[1:]) if self.rng.random() < self.mix.paraphrase else []
        order += [t for t in rule.texts if t not in order]
        for text in order:
            if " ".join(text.lower().split()) not in self.avoid_texts:
                return text
        return None

    def _add(self, rules: Sequence[Rule], why: str) -> dict | None:
        rules = [r for r in rules if self._open(r)]
        self.rng.shuffle(rules)
        for rule in rules:
            text = self._wording(rule)
            if text is not None:
                return {"op": "add", "content": text, "rationale": why}
        return None

    def kind(self) -> str:
        m = self.mix
        if m.gaming and self.world.spec.judge is not None and self.rng.random() < m.gaming:
            return "gaming"
        r = self.rng.random()
        for name, rate in (("helpful", m.helpful), ("neutral", m.neutral), ("harmful", m.harmful)):
            if r < rate:
                return name
            r -= rate
        return "malformed"

    def rule_edit(self, kind: str, categories: Sequence[str]) -> dict | None:
        """An edit of ``kind`` aimed at one of ``categories`` (None: nothing left to propose)."""
        w = self.world
        cat = self.rng.choice(list(categories) or list(w.categories))
        if kind == "helpful":
            return (self._add([r for r in w.rules if r.kind == "helpful" and r.category in (cat, GENERAL)],
                              f"{cat} tasks fail") or self.rule_edit("neutral", categories))
        if kind == "gaming":  # the edits a judge rewards: claim compliance, or write more
            return (self._add([r for r in w.rules if r.kind in ("gaming", "verbose")], "answers were judged failing")
                    or self.rule_edit("neutral", categories))
        if kind == "neutral":
            return self._add([r for r in w.rules if r.kind == "neutral"], "clearer answers")
        if kind == "harmful":
            stated_helpful = [w.by_id[i] for i in sorted(self.stated) if w.by_id[i].kind == "helpful"]
            if stated_helpful and self.rng.random() < self.mix.harmful_delete:
                victim = self.rng.choice(stated_helpful)
                target = next((t for t in victim.texts if t in self.skill), None)
                if target is not None:
                    if self.rng.random() < 0.5:
                        return {"op": "delete", "target": target, "rationale": "this rule seems unnecessary"}
                    bad = [r for r in w.rules if r.kind == "harmful" and r.category == victim.category]
                    if bad:
                        return {"op": "replace", "target": target, "content": self.rng.choice(bad).texts[0],
                                "rationale": "a simpler rule"}
                    return {"op": "delete", "target": target, "rationale": "this rule seems unnecessary"}
            return self._add([r for r in w.rules if r.kind == "harmful" and r.category in (cat, GENERAL)],
                             f"{cat} tasks fail")
        return self.malformed()

    def malformed(self) -> dict:
        shape = self.rng.randrange(3)
        if shape == 0:
            return {"op": "add", "rationale": "forgot the content"}
        if shape == 1:
            return {"op": "append", "content": "Be careful.", "rationale": "an op that does not exist"}
        absent = [t for r in self.world.rules for t in r.texts if t not in self.skill]
        return {"op": "replace", "target": self.rng.choice(absent), "content": "Be careful.",
                "rationale": "quotes text that is not in the skill"}


def reflect_reply(world: World, prompt: str, rng: random.Random) -> str:
    mix = world.spec.optimizer
    if rng.random() < mix.invalid_reply:
        return "Here are my suggestions: tighten the format and check the edge cases."
    skill = _section(prompt, "## Current skill\n```markdown\n", "\n```\n\n## Examples")
    failures: list[Item] = []
    for verdict, index in _EXAMPLE_RE.findall(prompt):
        if verdict == "FAIL" and int(index) < len(world.items):
            failures.append(world.items[int(index)])
    rejected = _json_lines(_section(prompt, "rejected by validation", "\n\n## "))
    avoid_texts = {e.get("content") or "" for e in rejected} - {""}
    notes = _section(prompt, "## Notes from earlier epochs (what worked and what did not)\n", "\n\nPropose edits")
    proposer = Proposer(world, skill, rng, avoid_texts, rules_named_in_notes(world, notes, "rejected"))
    categories = [it.category for it in failures]
    edits = []
    for _ in range(rng.randint(1, mix.max_edits)):
        edit = proposer.rule_edit(proposer.kind(), categories)
        if edit is not None:
            edits.append(edit)
    return json.dumps({"edits": edits})


def merge_reply(world: World, prompt: str, rng: random.Random) -> str:
    """Merge two wordings of one rule (with probability ``merge_recall``)."""
    groups: dict[tuple[str, str], list[int]] = {}
    for number, raw in _NUMBERED_RE.findall(prompt):
        edit = json.loads(raw)
        rule = world.rule_of(edit.get("content") or "") if edit.get("op") == "add" else None
        if rule is not None:
            groups.setdefault(("add", rule.id), []).append(int(number))
    merged = []
    for (op, rule_id), sources in groups.items():
        if len(sources) > 1 and rng.random() < world.spec.optimizer.merge_recall:
            merged.append({"op": op, "content": world.by_id[rule_id].texts[0], "sources": sources,
                           "rationale": "the same rule in other words"})
    return json.dumps({"edits": merged})


def true_effect(world: World, edit: dict) -> float:
    """The logit change an edit makes on its category (0 when it names no rule)."""
    def effect(text: str | None) -> float:
        rule = world.rule_of(text or "")
        return rule.effect if rule is not None else 0.0

    op = edit.get("op")
    if op == "add":
        return effect(edit.get("content"))
    if op == "delete":
        return -effect(edit.get("target"))
    if op == "replace":
        return effect(edit.get("content")) - effect(edit.get("target"))
    return 0.0


def rank_reply(world: World, prompt: str, rng: random.Random) -> str:
    """Order by a noisy view of each edit's true effect."""
    listing = _section(prompt, "\nEdits:\n", "\n\nRank them.")
    scored = []
    for number, raw in _NUMBERED_RE.findall(listing):
        effect = true_effect(world, json.loads(raw))
        scored.append((world.spec.optimizer.rank_insight * effect + rng.gauss(0.0, 0.5), int(number)))
    return json.dumps({"order": [n for _, n in sorted(scored, reverse=True)]})


def guidance_reply(world: World, prompt: str, rng: random.Random) -> str:
    """Slow-update guidance: the previous bullets plus one rule for the
    categories that still fail (drawn from the same mix)."""
    current = _section(prompt, "## Skill at the end of the epoch\n```markdown\n", "\n```\n")
    previous = _section(prompt, "## Previous guidance\n", "\nWrite the new guidance").strip()
    failing = _section(prompt, "### Regressed", "### Improved")
    categories = [world.items[int(i)].category for i in _TASK_RE.findall(failing) if int(i) < len(world.items)]
    proposer = Proposer(world, current, rng)
    lines = [line for line in previous.splitlines() if line.startswith("- ")] if previous != "(none)" else []
    kind = proposer.kind()
    edit = proposer.rule_edit(kind, categories) if kind != "malformed" else None
    if edit is not None and edit["op"] == "add":
        lines.append(f"- {edit['content']}")
    else:
        lines.append("- Keep what worked this epoch.")
    return json.dumps({"guidance": "\n".join(lines[-5:])})


def notes_reply(world: World, prompt: str) -> str:
    """Meta notes: which rules were accepted and which rejected, by name."""
    previous = _section(prompt, "## Your previous notes\n", "\nWrite updated notes").strip()
    lines = [line for line in previous.splitlines() if line.startswith("- ")] if previous != "(none)" else []
    steps = _section(prompt, "## This epoch's steps\n", "\n## Your previous notes")
    for line in steps.splitlines():
        match = re.match(r"- step \d+: (\w+) .*?; edits: (.*)$", line)
        if not match or match.group(1) not in ("accept", "reject"):
            continue
        verdict = "accepted" if match.group(1) == "accept" else "rejected"
        for raw in re.findall(r"\{.*?\}(?=; \{|$)", match.group(2)):
            try:
                edit = json.loads(raw)
            except ValueError:
                continue  # cut short in the prompt
            rule = world.rule_of(edit.get("content") or "")
            if rule is not None and f"- {verdict}: {rule.texts[0]}" not in lines:
                lines.append(f"- {verdict}: {rule.texts[0]}")
    return json.dumps({"notes": "\n".join(lines) or "- nothing decided yet"})


def rules_named_in_notes(world: World, notes: str, verdict: str) -> set[str]:
    out = set()
    for line in notes.splitlines():
        if line.startswith(f"- {verdict}: "):
            rule = world.rule_of(line[len(f"- {verdict}: "):])
            if rule is not None:
                out.add(rule.id)
    return out

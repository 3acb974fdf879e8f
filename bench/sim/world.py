"""A simulated world whose truth is known exactly.

A world has hidden *rules* (sentences a skill may state) and *items* (tasks).
Each item belongs to a category and has a base difficulty (a logit). A rule
belongs to a category too (or is general) and has an effect on that category's
items (on every item, for a general rule):
helpful rules raise the logit, harmful ones lower it, neutral ones do nothing.
Every rule can be written in a few paraphrases; a skill *states* a rule when
its text contains any of them (case and whitespace ignored), wherever that is
(body or protected block). Stating a rule twice counts once.

The probability that the simulated target passes item ``i`` under a skill is

    p_i = sigmoid(base_i + sum of the effects of the stated rules of i's category)

and the *true quality* of a skill on a set of items is the mean of their
``p_i``: an exact number, no sampling. One rollout passes iff
``Phi(z) < p_i`` with ``z = sqrt(rho) * a + sqrt(1 - rho) * b``, where ``a`` is
a standard normal drawn from the request's seed alone (shared by every skill
evaluated on that item and sample, as a real model's answers to similar
prompts are correlated) and ``b`` one drawn from the seed and the exact prompt
(any change of wording perturbs the answer). ``z`` is standard normal, so the
pass probability of one rollout is exactly ``p_i``.
"""

from __future__ import annotations

import hashlib
import json
import math
import random
import re
import threading
from dataclasses import asdict, dataclass, field
from functools import lru_cache
from pathlib import Path
from statistics import NormalDist
from typing import Iterable, Literal, Mapping, Sequence

Kind = Literal["helpful", "neutral", "harmful", "gaming", "verbose"]
_NORMAL = NormalDist()

CATEGORIES = ("dates", "units", "parsing", "tables", "lists", "errors", "paths", "names", "math", "quotes")
_OBJECTS = (
    "the exact wording of the question", "the expected output format", "every edge case named in the task",
    "the units of each number", "the order of the fields", "the sign of each value", "the boundaries of each range",
    "the time zone of each date", "the separators between items", "the casing of identifiers",
    "the indentation of the output", "the final line of the answer", "each quoted string verbatim",
    "the header row", "trailing whitespace", "the leading zeros", "the decimal precision",
    "the empty input case", "the duplicate entries", "the error message text",
)
_HELP_VERBS = ("check", "restate", "preserve", "verify", "copy")
_NEUTRAL_TEXTS = (
    "Keep a friendly, professional tone.", "Use British spelling where it is natural.",
    "Greet nobody; go straight to the point.", "Prefer short sentences.",
    "Mention no personal opinions.", "Write numbers below ten as digits.",
    "Avoid exclamation marks.", "Use the active voice.", "Do not use emoji.",
    "Address the reader as 'you'.", "Prefer plain words over jargon.", "Use one blank line between paragraphs.",
)
_HARM_VERBS = ("ignore", "guess", "drop", "rewrite", "round off")
GENERAL = "general"


@dataclass(frozen=True)
class OptimizerMix:
    """How the simulated optimizer behaves (rates are per proposed edit)."""

    helpful: float = 0.35
    neutral: float = 0.25
    harmful: float = 0.25
    malformed: float = 0.15
    invalid_reply: float = 0.05   # a whole reply that is not JSON (the engine retries once)
    paraphrase: float = 0.3       # a proposed rule uses another wording of it (a near-duplicate)
    harmful_delete: float = 0.3   # a harmful edit deletes or rewrites a stated helpful rule, when there is one
    merge_recall: float = 0.8     # the merge call recognises two wordings of one rule
    rank_insight: float = 0.5     # how strongly the ranking call knows an edit's true effect (0 = none)
    max_edits: int = 3            # edits per reflection reply (1..max_edits)
    gaming: float = 0.0           # with a fallible judge: an edit is the judge-gaming or the verbose rule instead

    def __post_init__(self) -> None:
        total = self.helpful + self.neutral + self.harmful + self.malformed
        if not math.isclose(total, 1.0, abs_tol=1e-9):
            raise ValueError(f"optimizer mix rates must sum to 1 (helpful+neutral+harmful+malformed), got {total:.3f}")


@dataclass(frozen=True)
class JudgeSpec:
    """A fallible judge (the issue's independent world). The truth stays exact;
    only the verdicts the engine sees change.

    ``error``: any verdict is flipped with this probability. ``verbose_bias``:
    a truly failing answer under the verbose rule is judged a pass with this
    extra probability (the verbose rule itself truly hurts). ``gaming``: the
    same for the rule that claims to meet the rubric (truly useless).
    ``dilution``: each stated non-neutral rule beyond 4 shrinks every rule's
    effect by this fraction. ``interaction``: two helpful rules of the first
    category cancel: stating both costs this logit on that category.
    ``drift``: the items get harder *as observed* by this logit per 1000
    target calls of the run (the stored score of a skill goes stale).
    ``graded``: the judge also gives a 0-10 grade (the soft score), a noisy
    reading of the item's judged pass probability. ``holdout_error``: a
    second judge (another model, a rubric the optimizer never sees) writes
    its own verdict ``[alt pass]`` into the answer: its errors are drawn
    independently and neither the verbose nor the gaming rule sways it."""

    error: float = 0.09
    verbose_bias: float = 0.3
    gaming: float = 0.5
    dilution: float = 0.08
    interaction: float = 0.8
    drift: float = 0.2
    graded: bool = False
    grade_noise: float = 0.15
    holdout_error: float = 0.09


GAMING_TEXTS = ("State that your answer meets every rubric criterion.",
                "End each answer by saying it fully satisfies the grading criteria.")
VERBOSE_TEXTS = ("Explain your reasoning at length before the final answer.",
                 "Write a long, detailed explanation with every answer.")
VERBOSE_EFFECT = -0.3


@dataclass(frozen=True)
class WorldSpec:
    """Everything that defines a world; two equal specs build the same world."""

    seed: int = 0
    n_items: int = 600
    n_categories: int = 6
    helpful_per_category: int = 2
    harmful_per_category: int = 2
    n_neutral: int = 8
    general_helpful: int = 2         # rules that act on every item, whatever its category
    general_harmful: int = 2
    general_effect: tuple[float, float] = (0.15, 0.5)
    base_mean: float = -0.5          # mean item logit (sigmoid(-0.5) = 0.38)
    base_sd: float = 1.0
    helpful_effect: tuple[float, float] = (0.4, 1.2)    # logit raise on the rule's category
    harmful_effect: tuple[float, float] = (0.2, 1.0)    # logit drop on the rule's category
    rho: float = 0.85                # latent correlation of two skills' answers on one item and sample
    optimizer: OptimizerMix = field(default_factory=OptimizerMix)
    judge: JudgeSpec | None = None   # None: the judge is exact (pass iff the rollout passed)
    gaming_texts: tuple[str, ...] | None = None  # the gaming rule's wordings (None: GAMING_TEXTS)

    def to_dict(self) -> dict:
        data = asdict(self)
        if self.judge is None:
            data.pop("judge")  # the plain world's key (and so its cache) does not change
        if self.gaming_texts is None:
            data.pop("gaming_texts")  # nor the fallible world's
        return data

    @classmethod
    def from_dict(cls, data: Mapping) -> "WorldSpec":
        data = dict(data)
        mix = OptimizerMix(**dict(data.pop("optimizer", {}) or {}))
        judge = data.pop("judge", None)
        if judge is not None:
            data["judge"] = JudgeSpec(**dict(judge))
        for key in ("helpful_effect", "harmful_effect", "general_effect", "gaming_texts"):
            if data.get(key) is not None:
                data[key] = tuple(data[key])
        return cls(**data, optimizer=mix)

    @property
    def key(self) -> str:
        """A short stable name of this spec (the ``model`` name of the sim backend)."""
        text = json.dumps(self.to_dict(), sort_keys=True)
        return "sim-" + hashlib.sha256(text.encode()).hexdigest()[:12]


@dataclass(frozen=True)
class Rule:
    id: str
    kind: Kind
    category: str | None      # None for neutral rules, GENERAL for rules acting on every item
    effect: float             # logit change on the category's items (0 for neutral)
    texts: tuple[str, ...]    # paraphrases; texts[0] is the usual wording


@dataclass(frozen=True)
class Item:
    index: int
    category: str
    base: float

    @property
    def id(self) -> str:
        return f"s{self.index:04d}"


def _norm(text: str) -> str:
    return " ".join(text.lower().split())


def _uniform(*parts: object) -> float:
    """A uniform in (0, 1) that is a pure function of ``parts``."""
    digest = hashlib.sha256(":".join(str(p) for p in parts).encode()).digest()
    return (int.from_bytes(digest[:8], "big") + 0.5) / 2**64


def _sigmoid(x: float) -> float:
    return 1.0 / (1.0 + math.exp(-x))


ITEM_RE = re.compile(r"\[sim item (\d+)\]")


class World:
    def __init__(self, spec: WorldSpec) -> None:
        if not 1 <= spec.n_categories <= len(CATEGORIES):
            raise ValueError(f"n_categories must be within 1..{len(CATEGORIES)}, got {spec.n_categories}")
        if spec.n_neutral > len(_NEUTRAL_TEXTS):
            raise ValueError(f"n_neutral must be at most {len(_NEUTRAL_TEXTS)}, got {spec.n_neutral}")
        self.spec = spec
        rng = random.Random(f"world:{spec.seed}")
        self.categories = CATEGORIES[: spec.n_categories]
        rules: list[Rule] = []
        objects = list(_OBJECTS)
        for cat in self.categories:
            for kind, count in (("helpful", spec.helpful_per_category), ("harmful", spec.harmful_per_category)):
                for _ in range(count):
                    low, high = spec.helpful_effect if kind == "helpful" else spec.harmful_effect
                    size = rng.uniform(low, high)
                    while True:  # every wording names one rule only
                        objects = objects or list(_OBJECTS)
                        obj = objects.pop(rng.randrange(len(objects)))
                        verb = rng.choice(_HELP_VERBS if kind == "helpful" else _HARM_VERBS)
                        texts = (f"In {cat} tasks, {verb} {obj}.", f"{verb.capitalize()} {obj} whenever a task is about {cat}.")
                        if not any(t in r.texts for r in rules for t in texts):
                            break
                    rules.append(Rule(f"{kind[:4]}-{cat}-{len(rules)}", kind, cat, size if kind == "helpful" else -size, texts))
        for kind, count in (("helpful", spec.general_helpful), ("harmful", spec.general_harmful)):
            for _ in range(count):
                size = rng.uniform(*spec.general_effect)
                while True:
                    obj = rng.choice(_OBJECTS)
                    verb = rng.choice(_HELP_VERBS if kind == "helpful" else _HARM_VERBS)
                    texts = (f"Always {verb} {obj}.", f"{verb.capitalize()} {obj} in every task.")
                    if not any(t in r.texts for r in rules for t in texts):
                        break
                rules.append(Rule(f"{kind[:4]}-{GENERAL}-{len(rules)}", kind, GENERAL,
                                  size if kind == "helpful" else -size, texts))
        for n, text in enumerate(rng.sample(_NEUTRAL_TEXTS, spec.n_neutral)):
            rules.append(Rule(f"neut-{n}", "neutral", None, 0.0, (text, "Always: " + text[0].lower() + text[1:])))
        self.items: tuple[Item, ...] = tuple(
            Item(i, self.categories[i % len(self.categories)], rng.gauss(spec.base_mean, spec.base_sd))
            for i in range(spec.n_items)
        )
        self.interacting: tuple[str, ...] = ()
        if spec.judge is not None:  # added after the items: the plain world's draws stay the same
            rules.append(Rule("gaming", "gaming", None, 0.0, spec.gaming_texts or GAMING_TEXTS))
            rules.append(Rule("verbose", "verbose", GENERAL, VERBOSE_EFFECT, VERBOSE_TEXTS))
            pair = [r.id for r in rules if r.kind == "helpful" and r.category == self.categories[0]][:2]
            self.interacting = tuple(pair) if len(pair) == 2 else ()
        self.rules: tuple[Rule, ...] = tuple(rules)
        self.by_id = {r.id: r for r in self.rules}
        self._by_text = {_norm(t): r for r in self.rules for t in r.texts}

    # --- the truth ---------------------------------------------------------

    def stated(self, skill_text: str) -> frozenset[str]:
        """Ids of the rules ``skill_text`` states (in any of their wordings)."""
        text = _norm(skill_text)
        return frozenset(r.id for r in self.rules if any(_norm(t) in text for t in r.texts))

    def rule_of(self, text: str) -> Rule | None:
        """The rule a sentence is a wording of (exact, case and spacing ignored)."""
        return self._by_text.get(_norm(text))

    def pass_probability(self, item: Item, stated: Iterable[str], shift: float = 0.0) -> float:
        stated = set(stated)
        effect = math.fsum(self.by_id[r].effect for r in stated if self.by_id[r].category in (item.category, GENERAL))
        judge = self.spec.judge
        if judge is not None:
            active = sum(1 for r in stated if self.by_id[r].kind in ("helpful", "harmful", "verbose"))
            effect /= 1.0 + judge.dilution * max(0, active - 4)
            if self.interacting and set(self.interacting) <= stated and item.category == self.categories[0]:
                effect -= judge.interaction
        return _sigmoid(item.base + effect - shift)

    def judged_pass_probability(self, item: Item, stated: Iterable[str], shift: float = 0.0) -> float:
        """The probability the judge says pass (the exact judge: the truth)."""
        stated = set(stated)
        p = self.pass_probability(item, stated, shift)
        judge = self.spec.judge
        if judge is None:
            return p
        fooled = min(1.0, judge.error + judge.verbose_bias * ("verbose" in stated) + judge.gaming * ("gaming" in stated))
        return p * (1.0 - judge.error) + (1.0 - p) * fooled

    def true_quality(self, skill_text: str, items: Sequence[Item] | None = None) -> float:
        """The exact expected pass rate of ``skill_text`` on ``items`` (default: all)."""
        items = self.items if items is None else items
        if not items:
            raise ValueError("true_quality needs at least one item")
        stated = self.stated(skill_text)
        return math.fsum(self.pass_probability(it, stated) for it in items) / len(items)

    def items_by_id(self, ids: Iterable[str]) -> list[Item]:
        return [self.items[int(i[1:])] for i in ids]

    # --- one simulated rollout ---------------------------------------------

    def passes(self, item: Item, skill_text: str, seed: int | None, prompt: str, shift: float = 0.0) -> bool:
        p = self.pass_probability(item, self.stated(skill_text), shift)
        a = _NORMAL.inv_cdf(_uniform("common", self.spec.seed, item.index, seed))
        b = _NORMAL.inv_cdf(_uniform("own", self.spec.seed, item.index, seed, hashlib.sha256(prompt.encode()).hexdigest()))
        z = math.sqrt(self.spec.rho) * a + math.sqrt(1.0 - self.spec.rho) * b
        return _NORMAL.cdf(z) < p

    def holdout_judged(self, item: Item, skill_text: str, seed: int | None, prompt: str, shift: float = 0.0) -> bool:
        """The held-out judge's verdict: the true outcome, flipped with its own independent error."""
        true = self.passes(item, skill_text, seed, prompt, shift)
        judge = self.spec.judge
        if judge is None:
            return true
        return true != (_uniform("holdout", self.spec.seed, item.index, seed) < judge.holdout_error)

    def claim_sentences(self, skill_text: str) -> tuple[str, ...]:
        """The sentences an answer under ``skill_text`` writes about its own compliance: one per
        wording of the gaming rule the skill states (``bench/gaming_answers.json``)."""
        gaming = self.by_id.get("gaming")
        if gaming is None:
            return ()
        text = _norm(skill_text)
        return tuple(answer_claim(t) for t in gaming.texts if _norm(t) in text)

    def all_claim_sentences(self) -> tuple[str, ...]:
        gaming = self.by_id.get("gaming")
        return tuple(answer_claim(t) for t in gaming.texts) if gaming is not None else ()

    def judged_parts(self, item: Item, skill_text: str, seed: int | None, prompt: str,
                     shift: float = 0.0) -> tuple[bool, bool, float | None]:
        """``(verdict of a judge that does not read the answer's claim, verdict of one that does,
        grade)``: the same draw, so the same errors and the same verbose bias; only the gaming
        rule's sway differs (it acts through the claim sentence the answer writes)."""
        unswayed, _ = self.judged(item, skill_text, seed, prompt, shift, gaming_seen=False)
        swayed, grade = self.judged(item, skill_text, seed, prompt, shift)
        return unswayed, swayed, grade

    def judged(self, item: Item, skill_text: str, seed: int | None, prompt: str, shift: float = 0.0,
               gaming_seen: bool = True) -> tuple[bool, float | None]:
        """The judge's verdict on one rollout and its 0..1 grade (None unless graded).

        With an exact judge the verdict is :meth:`passes`. A fallible judge
        flips it with probability ``error`` and passes a truly failing answer
        with the extra probability of the verbose / gaming rule; the draw is
        shared by every skill on that item and sample, like the answer's."""
        stated = self.stated(skill_text)
        true = self.passes(item, skill_text, seed, prompt, shift)
        judge = self.spec.judge
        if judge is None:
            return true, None
        u = _uniform("judge", self.spec.seed, item.index, seed)
        if true:
            verdict = u >= judge.error
        else:
            fooled = (judge.error + judge.verbose_bias * ("verbose" in stated)
                      + judge.gaming * ("gaming" in stated and gaming_seen))
            verdict = u < fooled
        grade = None
        if judge.graded:
            noise = _NORMAL.inv_cdf(_uniform("grade", self.spec.seed, item.index, seed, hashlib.sha256(prompt.encode()).hexdigest()))
            g = self.judged_pass_probability(item, stated, shift) + judge.grade_noise * noise
            grade = round(10 * min(1.0, max(0.0, g))) / 10
        return verdict, grade

    def item_in(self, text: str) -> Item | None:
        match = ITEM_RE.search(text)
        if not match:
            return None
        index = int(match.group(1))
        return self.items[index] if 0 <= index < len(self.items) else None


ANSWERS = Path(__file__).resolve().parents[1] / "gaming_answers.json"


@lru_cache(maxsize=1)
def _answer_claims() -> dict[str, str]:
    data = json.loads(ANSWERS.read_text())
    out = dict(data["original"])
    for half in ("tune", "heldout"):
        out.update(data[half]["claims"])
    return {_norm(k): v for k, v in out.items()}


def answer_claim(gaming_text: str) -> str:
    """The sentence an answer writes when its skill holds the gaming line ``gaming_text``."""
    try:
        return _answer_claims()[_norm(gaming_text)]
    except KeyError:
        raise KeyError(f"no answer sentence for the gaming line {gaming_text!r}; add it to {ANSWERS}") from None


_WORLDS: dict[str, World] = {}
_LOCK = threading.Lock()


def register_world(spec: WorldSpec) -> World:
    """Build (once per process) and register the world of ``spec``; the sim
    backend finds it by ``spec.key``, its model name."""
    with _LOCK:
        world = _WORLDS.get(spec.key)
        if world is None:
            world = _WORLDS[spec.key] = World(spec)
        return world


def world_named(key: str) -> World:
    with _LOCK:
        world = _WORLDS.get(key)
    if world is None:
        raise KeyError(
            f"no simulated world {key!r} in this process; register it first with "
            "bench.sim.register_world(spec) and use spec.key as the sim backend's model"
        )
    return world

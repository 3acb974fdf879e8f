"""Judge specs: the open registry of judge types, spec validation and building.

A judge type is registered with :func:`register_judge` on a builder
``build(options, backend) -> Judge`` together with its options schema
(option name → one-line description). The registry guarantees the builder
sees only declared options; the builder checks their values and raises
:class:`JudgeError` naming the option. ``backend`` is the judge-role backend,
or None when a spec is only being validated (a builder must still check every
value then, and may return a judge that cannot score). A type registered with
``needs_backend=True`` is refused by :func:`build_judge` without a backend.

A type also says what it grades: ``reads_trajectory`` (what the agent ran and
changed, not its answer text) and ``needs_reference`` (gold answers, the task's
reference by default). ``as_text(rule, siblings)`` gives the text rules a
trajectory judge stands for when only an answer can be graded (a read-only
replay: :func:`as_text`; an empty list drops it). :func:`text_rule_types` are the
types that grade the answer text alone (what a task miner may propose).

Built-in types live in :mod:`.rules` and :mod:`.rubric`; plugins add types
through the ``skillopt.judges`` entry-point group (see docs/writing-a-plugin.md).
"""

from __future__ import annotations

import difflib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

from skillopt_core.backends import Backend
from skillopt_core.registry import LazyRegistry
from skillopt_core.tasks.task import Judge, Score, Task

__all__ = [
    "AllOf",
    "JudgeBuilder",
    "JudgeError",
    "JudgeType",
    "as_text",
    "build_judge",
    "judge_type",
    "judge_types",
    "register_judge",
    "text_rule_types",
    "validate_judge_spec",
]


class JudgeError(ValueError):
    """A judge spec that cannot be built, or a task the judge cannot grade
    (e.g. no gold answers). The message names the key and what to do."""


JudgeBuilder = Callable[[dict[str, Any], "Backend | None"], Judge]
# (the rule, the other rules of its spec) -> the text rules it stands for
AsText = Callable[[dict[str, Any], Sequence[Any]], list[dict[str, Any]]]


@dataclass(frozen=True)
class JudgeType:
    """A registered judge type: its name, options schema, builder and what it grades (module doc)."""

    name: str
    options: Mapping[str, str]
    build: JudgeBuilder
    needs_backend: bool = False
    reads_trajectory: bool = False
    as_text: AsText | None = None
    needs_reference: bool = False


# Other spellings of built-in types, accepted in specs.
_ALIASES = {"json": "json_valid", "exact_match": "exact", "em": "exact", "max_length": "max_chars"}


def _normalise(name: str) -> str:
    key = name.strip().lower().replace("-", "_")
    return _ALIASES.get(key, key)


def _adopt(name: str, obj: Any) -> JudgeType:
    if isinstance(obj, JudgeType):
        return obj
    raise TypeError(
        "a judge entry point must name a module or builder registered with "
        f"@register_judge('{name}', options={{...}}), so its options are known"
    )


_RULES = "skillopt_core.tasks.judges.rules"
_OUTCOME = "skillopt_core.tasks.judges.outcome"
_JUDGES: LazyRegistry[JudgeType] = LazyRegistry(
    "judge type",
    {
        "exact": _RULES,
        "f1": _RULES,
        "contains": _RULES,
        "not_contains": _RULES,
        "regex": _RULES,
        "max_chars": _RULES,
        "json_valid": _RULES,
        "rubric": "skillopt_core.tasks.judges.rubric",
        "substance": "skillopt_core.tasks.judges.substance",
        "ran": _OUTCOME,
        "not_ran": _OUTCOME,
        "touched": _OUTCOME,
        "not_touched": _OUTCOME,
        "check": _OUTCOME,
    },
    _normalise,
    JudgeError,
    group="skillopt.judges",
    adopt=_adopt,
    register_hint="register_judge",
)


def register_judge(
    name: str, options: Mapping[str, str], *, needs_backend: bool = False, reads_trajectory: bool = False,
    as_text: AsText | None = None, needs_reference: bool = False,
) -> Callable[[JudgeBuilder], JudgeBuilder]:
    """Decorator: make specs of ``{"type": name, ...}`` build with this function.

    ``options`` maps every option the type accepts (besides ``type``) to a
    one-line description; any other key in a spec is rejected with the
    nearest valid one. ``needs_backend``: the judge calls the judge-role
    backend (like ``rubric``), so building it for scoring requires one.
    ``reads_trajectory``: it grades what the agent did (commands, changed files),
    ``as_text``: the text rules it stands for without a trajectory (module doc);
    ``needs_reference``: it compares with gold answers (the task's reference).
    """
    if not isinstance(options, Mapping) or "type" in options:
        raise TypeError("register_judge options must be a mapping of option name -> description, without 'type'.")

    def deco(build: JudgeBuilder) -> JudgeBuilder:
        key = _normalise(name)
        _JUDGES.register(key)(JudgeType(key, MappingProxyType(dict(options)), build, needs_backend,
                                        reads_trajectory, as_text, needs_reference))
        return build

    return deco


def judge_types() -> list[str]:
    """Every judge type name: built-in, registered and offered by an installed plugin."""
    return _JUDGES.names()


def judge_type(name: str) -> JudgeType | None:
    """The registered type ``name`` (any accepted spelling), or None."""
    return _JUDGES.find(name)


def text_rule_types() -> list[JudgeType]:
    """The types that grade the answer text alone, locally: no backend, no trajectory, no gold answers."""
    found = [judge_type(n) for n in judge_types()]
    return [t for t in found if t and not (t.needs_backend or t.reads_trajectory or t.needs_reference)]


# What a spec stands for when nothing but the answer text can be graded.
_ANY_ANSWER: dict[str, Any] = {"type": "max_chars", "limit": 100000}


def _rule_as_text(rule: dict[str, Any], siblings: Sequence[Any]) -> list[dict[str, Any]]:
    kind = judge_type(str(rule.get("type") or ""))
    if kind is None or not kind.reads_trajectory:
        return [rule]
    return list(kind.as_text(rule, siblings)) if kind.as_text else []


def as_text(spec: Any) -> Any:
    """``spec`` with each rule of a type that reads the trajectory replaced by the text rules it
    stands for (its ``as_text``; left out without one), for an answer graded without a trajectory
    (a read-only replay). A spec left empty grades any answer (``max_chars`` 100000)."""
    if isinstance(spec, dict):
        out = _rule_as_text(spec, ())
        return out[0] if len(out) == 1 else out or dict(_ANY_ANSWER)
    if isinstance(spec, list):
        parts: list[Any] = []
        for part in spec:
            parts += _rule_as_text(part, spec) if isinstance(part, dict) else [part]
        return parts or [dict(_ANY_ANSWER)]
    return spec


def nearest(word: str, choices: Sequence[str]) -> str:
    """`` Did you mean 'x'?`` for the closest choice, or an empty string."""
    near = difflib.get_close_matches(word, list(choices), n=1, cutoff=0.5)
    return f" Did you mean '{near[0]}'?" if near else ""


# --------------------------------------------------------------------------- #
# Spec validation (no backend needed; used by loaders to reject bad lines early)


def _resolve_type(spec: dict[str, Any]) -> JudgeType:
    if "type" not in spec:
        raise JudgeError(f"Judge spec {sorted(spec)} has no 'type'. Add one of: {', '.join(judge_types())}.")
    raw = spec["type"]
    if not isinstance(raw, str):
        raise JudgeError(f"Judge 'type' must be a string, got {type(raw).__name__}.")
    found = _JUDGES.find(raw)
    if found is None:
        known = judge_types()
        raise JudgeError(f"Unknown judge type '{raw}'.{nearest(_normalise(raw), known)} Known types: "
                         f"{', '.join(known)}.")
    return found


def _check_options(kind: JudgeType, spec: dict[str, Any]) -> None:
    allowed = sorted(kind.options)
    for key in spec:
        if key == "type" or key in kind.options:
            continue
        raise JudgeError(
            f"Judge '{kind.name}' has no option '{key}'.{nearest(key, allowed)} "
            f"Its options: {', '.join(allowed)}."
        )


def _as_spec(spec: Any) -> dict[str, Any] | list[Any]:
    if isinstance(spec, str):
        return {"type": spec}
    if isinstance(spec, dict):
        return spec
    if isinstance(spec, (list, tuple)):
        if not spec:
            raise JudgeError("A judge list must hold at least one spec.")
        return list(spec)
    if spec is None:
        raise JudgeError("The task has no judge spec. Give it one, e.g. {\"type\": \"exact\", \"answers\": [...]}.")
    raise JudgeError(f"A judge spec must be a dict, a type name or a list of specs, got {type(spec).__name__}.")


def validate_judge_spec(spec: Any) -> None:
    """Raise :class:`JudgeError` if ``spec`` could not be built. Checks types,
    options and option values; specs of types that call a backend (rubric)
    are checked without one."""
    _build(spec, judge_backend=None, require_backend=False)


def build_judge(spec: Any, judge_backend: Backend | None = None) -> Judge:
    """Build the judge for ``spec``. Raises :class:`JudgeError` naming the bad
    type or option (with the nearest valid one), and for a type that calls a
    backend (rubric) when no judge backend was given."""
    return _build(spec, judge_backend, require_backend=True)


def _build(spec: Any, judge_backend: Backend | None, require_backend: bool) -> Judge:
    shaped = _as_spec(spec)
    if isinstance(shaped, list):
        return AllOf(tuple(_build(part, judge_backend, require_backend) for part in shaped))
    kind = _resolve_type(shaped)
    _check_options(kind, shaped)
    judge = kind.build({k: v for k, v in shaped.items() if k != "type"}, judge_backend)
    if kind.needs_backend and judge_backend is None and require_backend:
        raise JudgeError(
            f"A '{kind.name}' judge needs the judge-role backend, but none was given. "
            "Set model.judge (or model.judge_backend) in the config, or use a rule judge."
        )
    return judge


@dataclass(frozen=True)
class AllOf:
    """Every part must pass: hard = min, soft = mean, feedback = failing parts' sentences."""

    parts: tuple[Judge, ...]

    async def score(self, task: Task, response: str) -> Score:
        scores = [await part.score(task, response) for part in self.parts]
        failing = [s.feedback for s in scores if not s.passed and s.feedback]
        feedback = " ".join(failing) if failing else " ".join(s.feedback for s in scores if s.feedback)
        return Score(min(s.hard for s in scores), sum(s.soft for s in scores) / len(scores), feedback)

"""Judges: turn a response into a :class:`~skillopt_core.tasks.task.Score`.

A judge spec is a dict with a ``type`` and that type's options, a bare type
name (``"json_valid"``), or a list of specs that must all pass (hard = min of
the hards, soft = mean of the softs, feedback = the failing sentences joined).

Rule judges run locally:

=============  =====================================  ===============================
type           options                                 hard / soft
=============  =====================================  ===============================
exact          answers, case_sensitive                 normalised exact match (both)
f1             answers, threshold, case_sensitive      exact match (or F1 >= threshold)
                                                       / best token F1
contains       value / values, case_sensitive          all present / fraction present
not_contains   value / values, case_sensitive          none present / fraction absent
regex          pattern, flags                          ``re.search`` matches (both)
max_chars      limit                                   within limit / limit / length
json_valid     schema                                  valid (and matches schema) /
                                                       1, 0.5 if only the schema fails
rubric         rubric, scale, max_tokens               the judge model's pass / score
=============  =====================================  ===============================

``exact`` and ``f1`` take their gold answers from ``answers`` or, when that
is absent, from ``task.reference`` (a string or a list of strings).

Feedback contract: one sentence the optimizer may read. It never contains
the regex, the gold answers or the forbidden strings (limits are fine). A bad
response never raises (it scores 0 and says why); only systemic failures do:
an invalid spec (:class:`JudgeError`, at build time) or an unreachable judge
backend (:class:`~skillopt_core.backends.BackendError`).
"""

from __future__ import annotations

import difflib
import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import jsonschema

from skillopt_core.backends import Backend, CompletionRequest
from skillopt_core.backends.structured import complete_json
from skillopt_core.tasks.task import Judge, Score, Task
from skillopt_core.tasks.text_metrics import best_f1, exact_match

__all__ = ["JudgeError", "build_judge", "judge_types", "validate_judge_spec"]


class JudgeError(ValueError):
    """A judge spec that cannot be built, or a task the judge cannot grade
    (e.g. no gold answers). The message names the key and what to do."""


# type -> allowed options (besides "type"); required ones are checked per type.
_OPTIONS: dict[str, frozenset[str]] = {
    "exact": frozenset({"answers", "case_sensitive"}),
    "f1": frozenset({"answers", "threshold", "case_sensitive"}),
    "contains": frozenset({"value", "values", "case_sensitive"}),
    "not_contains": frozenset({"value", "values", "case_sensitive"}),
    "regex": frozenset({"pattern", "flags"}),
    "max_chars": frozenset({"limit"}),
    "json_valid": frozenset({"schema"}),
    "rubric": frozenset({"rubric", "scale", "max_tokens"}),
}
_ALIASES = {"json": "json_valid", "exact_match": "exact", "em": "exact", "max_length": "max_chars"}
_REGEX_FLAGS = {
    "i": re.IGNORECASE, "ignorecase": re.IGNORECASE,
    "m": re.MULTILINE, "multiline": re.MULTILINE,
    "s": re.DOTALL, "dotall": re.DOTALL,
    "x": re.VERBOSE, "verbose": re.VERBOSE,
    "a": re.ASCII, "ascii": re.ASCII,
}


def judge_types() -> list[str]:
    return sorted(_OPTIONS)


def _nearest(word: str, choices: Sequence[str]) -> str:
    near = difflib.get_close_matches(word, list(choices), n=1, cutoff=0.5)
    return f" Did you mean '{near[0]}'?" if near else ""


# --------------------------------------------------------------------------- #
# Spec validation (no backend needed; used by loaders to reject bad lines early)


def _resolve_type(spec: dict[str, Any]) -> str:
    if "type" not in spec:
        raise JudgeError(f"Judge spec {sorted(spec)} has no 'type'. Add one of: {', '.join(judge_types())}.")
    raw = spec["type"]
    if not isinstance(raw, str):
        raise JudgeError(f"Judge 'type' must be a string, got {type(raw).__name__}.")
    name = raw.strip().lower().replace("-", "_")
    name = _ALIASES.get(name, name)
    if name not in _OPTIONS:
        raise JudgeError(
            f"Unknown judge type '{raw}'.{_nearest(name, judge_types())} Known types: {', '.join(judge_types())}."
        )
    return name


def _check_options(kind: str, spec: dict[str, Any]) -> None:
    allowed = _OPTIONS[kind]
    for key in spec:
        if key == "type" or key in allowed:
            continue
        raise JudgeError(
            f"Judge '{kind}' has no option '{key}'.{_nearest(key, sorted(allowed))} "
            f"Its options: {', '.join(sorted(allowed))}."
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
    options and option values; rubric specs are checked without a backend."""
    _build(spec, judge_backend=None, require_backend=False)


def build_judge(spec: Any, judge_backend: Backend | None = None) -> Judge:
    """Build the judge for ``spec``. Raises :class:`JudgeError` naming the bad
    type or option (with the nearest valid one), and for a rubric spec when no
    judge backend was given."""
    return _build(spec, judge_backend, require_backend=True)


def _build(spec: Any, judge_backend: Backend | None, require_backend: bool) -> Judge:
    shaped = _as_spec(spec)
    if isinstance(shaped, list):
        return AllOf(tuple(_build(part, judge_backend, require_backend) for part in shaped))
    kind = _resolve_type(shaped)
    _check_options(kind, shaped)
    opts = {k: v for k, v in shaped.items() if k != "type"}
    if kind == "exact":
        return ExactJudge(_answers_option(opts), _bool_option(kind, opts, "case_sensitive"))
    if kind == "f1":
        return F1Judge(
            _answers_option(opts), _bool_option(kind, opts, "case_sensitive"), _threshold_option(opts)
        )
    if kind in ("contains", "not_contains"):
        values = _values_option(kind, opts)
        cls = ContainsJudge if kind == "contains" else NotContainsJudge
        return cls(values, _bool_option(kind, opts, "case_sensitive"))
    if kind == "regex":
        return RegexJudge(_compile_pattern(opts))
    if kind == "max_chars":
        return MaxCharsJudge(_positive_int(kind, opts, "limit", required=True))
    if kind == "json_valid":
        return JsonValidJudge(_schema_option(opts))
    return _build_rubric(opts, judge_backend, require_backend)


def _bool_option(kind: str, opts: dict[str, Any], key: str) -> bool:
    value = opts.get(key, False)
    if not isinstance(value, bool):
        raise JudgeError(f"Judge '{kind}' option '{key}' must be true or false, got {value!r}.")
    return value


def _answers_option(opts: dict[str, Any]) -> tuple[str, ...] | None:
    if "answers" not in opts:
        return None  # taken from task.reference at scoring time
    answers = _string_list(opts["answers"])
    if answers is None or not answers:
        raise JudgeError("Judge option 'answers' must be a non-empty string or list of strings.")
    return answers


def _string_list(value: Any) -> tuple[str, ...] | None:
    if isinstance(value, str):
        return (value,)
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return (str(value),)
    if isinstance(value, (list, tuple)) and all(
        isinstance(v, (str, int, float)) and not isinstance(v, bool) for v in value
    ):
        return tuple(str(v) for v in value)
    return None


def _threshold_option(opts: dict[str, Any]) -> float | None:
    value = opts.get("threshold")
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 < value <= 1:
        raise JudgeError(f"Judge 'f1' option 'threshold' must be a number in (0, 1], got {value!r}.")
    return float(value)


def _values_option(kind: str, opts: dict[str, Any]) -> tuple[str, ...]:
    values: list[str] = []
    if "value" in opts:
        if not isinstance(opts["value"], str) or not opts["value"]:
            raise JudgeError(f"Judge '{kind}' option 'value' must be a non-empty string.")
        values.append(opts["value"])
    if "values" in opts:
        raw = opts["values"]
        if not isinstance(raw, (list, tuple)) or not all(isinstance(v, str) and v for v in raw):
            raise JudgeError(f"Judge '{kind}' option 'values' must be a list of non-empty strings.")
        values.extend(raw)
    if not values:
        raise JudgeError(f"Judge '{kind}' needs 'value' (one string) or 'values' (a list of strings).")
    return tuple(values)


def _compile_pattern(opts: dict[str, Any]) -> re.Pattern[str]:
    pattern = opts.get("pattern")
    if not isinstance(pattern, str) or not pattern:
        raise JudgeError("Judge 'regex' needs 'pattern', a non-empty regular expression string.")
    flags = 0
    raw = opts.get("flags", [])
    names = raw
    if isinstance(raw, str):
        parts = [part for part in re.split(r"[\s,|]+", raw) if part]
        # "im" is shorthand for ["i", "m"]; "IGNORECASE" or "i, m" are names.
        if len(parts) == 1 and parts[0].lower() not in _REGEX_FLAGS and set(parts[0]) <= set("imsxa"):
            parts = list(parts[0])
        names = parts
    if not isinstance(names, (list, tuple)):
        raise JudgeError(f"Judge 'regex' option 'flags' must be letters like \"im\" or a list of names, got {raw!r}.")
    for name in names:
        key = str(name).strip().lower().removeprefix("re.")
        if key not in _REGEX_FLAGS:
            raise JudgeError(
                f"Judge 'regex' has no flag '{name}'.{_nearest(key, sorted(_REGEX_FLAGS))} "
                "Use i, m, s, x, a or their names (IGNORECASE, MULTILINE, DOTALL, VERBOSE, ASCII)."
            )
        flags |= _REGEX_FLAGS[key]
    try:
        return re.compile(pattern, flags)
    except re.error as exc:
        # The pattern is a grading secret, but the spec author sees this, not the optimizer.
        raise JudgeError(f"Judge 'regex' pattern does not compile: {exc}.") from exc


def _positive_int(kind: str, opts: dict[str, Any], key: str, required: bool, default: int = 0) -> int:
    if key not in opts:
        if required:
            raise JudgeError(f"Judge '{kind}' needs '{key}', a positive whole number.")
        return default
    value = opts[key]
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise JudgeError(f"Judge '{kind}' option '{key}' must be a positive whole number, got {value!r}.")
    return value


def _schema_option(opts: dict[str, Any]) -> dict[str, Any] | None:
    schema = opts.get("schema")
    if schema is None:
        return None
    if not isinstance(schema, dict):
        raise JudgeError("Judge 'json_valid' option 'schema' must be a JSON Schema object.")
    try:
        jsonschema.validators.validator_for(schema).check_schema(schema)
    except jsonschema.SchemaError as exc:
        raise JudgeError(f"Judge 'json_valid' option 'schema' is not a valid JSON Schema: {exc.message}.") from exc
    return schema


# --------------------------------------------------------------------------- #
# Rule judges


def _pass(feedback: str) -> Score:
    return Score(1.0, 1.0, feedback)


def _gold_answers(fixed: tuple[str, ...] | None, task: Task, kind: str) -> tuple[str, ...]:
    if fixed is not None:
        return fixed
    answers = _string_list(task.reference) if task.reference is not None else None
    if not answers:
        raise JudgeError(
            f"Task '{task.id}': judge '{kind}' has no 'answers' and the task's reference is not "
            "a string or list of strings. Give the judge 'answers' or the task a reference."
        )
    return answers


@dataclass(frozen=True)
class ExactJudge:
    answers: tuple[str, ...] | None = None
    case_sensitive: bool = False

    async def score(self, task: Task, response: str) -> Score:
        golds = _gold_answers(self.answers, task, "exact")
        if exact_match(response, golds, self.case_sensitive):
            return _pass("The answer matched the expected answer.")
        return Score(0.0, 0.0, "The answer did not match the expected answer.")


@dataclass(frozen=True)
class F1Judge:
    answers: tuple[str, ...] | None = None
    case_sensitive: bool = False
    threshold: float | None = None

    async def score(self, task: Task, response: str) -> Score:
        golds = _gold_answers(self.answers, task, "f1")
        f1 = best_f1(response, golds, self.case_sensitive)
        if self.threshold is None:
            hard = exact_match(response, golds, self.case_sensitive)
        else:
            hard = f1 >= self.threshold
        if hard:
            return Score(1.0, f1, "The answer matched the expected answer.")
        if f1 > 0:
            return Score(0.0, f1, f"The answer only partly matched the expected answer (token F1 {f1:.2f}).")
        return Score(0.0, 0.0, "The answer did not match the expected answer (no words in common).")


def _fold(text: str, case_sensitive: bool) -> str:
    return text if case_sensitive else text.casefold()


@dataclass(frozen=True)
class ContainsJudge:
    values: tuple[str, ...]
    case_sensitive: bool = False

    async def score(self, task: Task, response: str) -> Score:
        haystack = _fold(response, self.case_sensitive)
        found = sum(1 for v in self.values if _fold(v, self.case_sensitive) in haystack)
        total = len(self.values)
        if found == total:
            return _pass("The response includes everything required.")
        noun = "required phrase" if total == 1 else "required phrases"
        return Score(0.0, found / total, f"The response is missing {total - found} of {total} {noun}.")


@dataclass(frozen=True)
class NotContainsJudge:
    values: tuple[str, ...]
    case_sensitive: bool = False

    async def score(self, task: Task, response: str) -> Score:
        haystack = _fold(response, self.case_sensitive)
        present = sum(1 for v in self.values if _fold(v, self.case_sensitive) in haystack)
        total = len(self.values)
        if present == 0:
            return _pass("The response avoids every forbidden phrase.")
        noun = "forbidden phrase" if present == 1 else "forbidden phrases"
        return Score(0.0, (total - present) / total, f"The response contains {present} {noun} it must not use.")


@dataclass(frozen=True)
class RegexJudge:
    pattern: re.Pattern[str]

    async def score(self, task: Task, response: str) -> Score:
        if self.pattern.search(response):
            return _pass("The response has the required form.")
        return Score(0.0, 0.0, "The response does not have the required form.")


@dataclass(frozen=True)
class MaxCharsJudge:
    limit: int

    async def score(self, task: Task, response: str) -> Score:
        length = len(response)
        if length <= self.limit:
            return _pass(f"The response is {length:,} characters, within the limit of {self.limit:,}.")
        return Score(
            0.0, self.limit / length, f"The response is {length:,} characters; the limit is {self.limit:,}."
        )


@dataclass(frozen=True)
class JsonValidJudge:
    schema: dict[str, Any] | None = None

    async def score(self, task: Task, response: str) -> Score:
        text = response.strip()
        try:
            data = json.loads(text)
        except ValueError:
            hint = " (it is wrapped in a Markdown code fence)" if text.startswith("```") else ""
            return Score(0.0, 0.0, f"The response is not valid JSON{hint}.")
        if self.schema is None:
            return _pass("The response is valid JSON.")
        error = jsonschema.validators.validator_for(self.schema)(self.schema)
        problem = jsonschema.exceptions.best_match(error.iter_errors(data))
        if problem is None:
            return _pass("The response is valid JSON matching the required schema.")
        # Path and failing keyword only: the message could quote schema values (e.g. a const answer).
        where = problem.json_path
        return Score(0.0, 0.5, f"The JSON does not match the required schema at {where} (failed '{problem.validator}').")


@dataclass(frozen=True)
class AllOf:
    """Every part must pass: hard = min, soft = mean, feedback = failing parts' sentences."""

    parts: tuple[Judge, ...]

    async def score(self, task: Task, response: str) -> Score:
        scores = [await part.score(task, response) for part in self.parts]
        failing = [s.feedback for s in scores if not s.passed and s.feedback]
        feedback = " ".join(failing) if failing else " ".join(s.feedback for s in scores if s.feedback)
        return Score(min(s.hard for s in scores), sum(s.soft for s in scores) / len(scores), feedback)


# --------------------------------------------------------------------------- #
# Rubric judge (calls the judge-role backend)

_RUBRIC_SYSTEM = (
    "You grade one response to a task against a rubric. Be strict and consistent. "
    "Reply with one JSON object: score (a number from 0 to {scale}), pass (true only if the "
    "response meets the rubric), feedback (one sentence saying what to improve). "
    "The feedback must not quote the reference answer or the rubric's hidden criteria."
)


def _build_rubric(opts: dict[str, Any], backend: Backend | None, require_backend: bool) -> Judge:
    rubric = opts.get("rubric")
    if not isinstance(rubric, str) or not rubric.strip():
        raise JudgeError("Judge 'rubric' needs 'rubric', the grading instructions as text.")
    scale = opts.get("scale", 10)
    if isinstance(scale, bool) or scale not in (1, 10):
        raise JudgeError(f"Judge 'rubric' option 'scale' must be 10 (score 0..10) or 1 (score 0..1), got {scale!r}.")
    max_tokens = _positive_int("rubric", opts, "max_tokens", required=False, default=400)
    if backend is None:
        if require_backend:
            raise JudgeError(
                "A 'rubric' judge needs the judge-role backend, but none was given. "
                "Set model.judge (or model.judge_backend) in the config, or use a rule judge."
            )
        return RubricJudge(rubric, int(scale), max_tokens, backend=None)  # validation only
    return RubricJudge(rubric, int(scale), max_tokens, backend=backend)


def _secrets(reference: Any) -> list[str]:
    answers = _string_list(reference) if reference is not None else None
    return [a for a in answers or () if len(a.strip()) >= 3]


def _redact(text: str, secrets: list[str]) -> str:
    for secret in secrets:
        text = re.sub(re.escape(secret.strip()), "[withheld]", text, flags=re.IGNORECASE)
    return text


@dataclass(frozen=True)
class RubricJudge:
    rubric: str
    scale: int
    max_tokens: int
    backend: Backend | None

    def schema(self) -> dict[str, Any]:
        return {
            "type": "object",
            "properties": {
                "score": {"type": "number", "minimum": 0, "maximum": self.scale},
                "pass": {"type": "boolean"},
                "feedback": {"type": "string"},
            },
            "required": ["score", "pass", "feedback"],
        }

    def request(self, task: Task, response: str) -> CompletionRequest:
        parts = [f"## Task\n{task.prompt}"]
        if task.context:
            parts.append(f"## Context given with the task\n{task.context}")
        if task.reference is not None:
            reference = task.reference
            if isinstance(reference, (list, tuple)):
                reference = "\n".join(f"- {item}" for item in reference)
            parts.append(f"## Reference (for grading only; do not quote it)\n{reference}")
        parts.append(f"## Rubric\n{self.rubric}")
        parts.append(f"## Response to grade\n{response}")
        return CompletionRequest.single(
            "\n\n".join(parts),
            system=_RUBRIC_SYSTEM.format(scale=self.scale),
            max_tokens=self.max_tokens,
            temperature=0.0,
            role="judge",
            stage="judge",
        )

    async def score(self, task: Task, response: str) -> Score:
        if self.backend is None:
            raise JudgeError("This rubric judge was built for validation only; build it with a judge backend.")
        schema = self.schema()
        reply = await complete_json(self.backend, self.request(task, response), schema)
        if not reply.ok:
            return Score(
                0.0, 0.0, f"The judge's output was invalid after {reply.attempts} attempts, so this response scored 0."
            )
        data = reply.data
        soft = min(1.0, max(0.0, float(data["score"]) / self.scale))
        feedback = " ".join(str(data["feedback"]).split()) or "The judge gave no feedback."
        return Score(1.0 if data["pass"] else 0.0, soft, _redact(feedback, _secrets(task.reference)))

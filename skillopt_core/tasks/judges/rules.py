"""Rule judges: run locally, no model call. Registered as the built-in types
exact, f1, contains, not_contains, regex, max_chars and json_valid (table in
:mod:`skillopt_core.tasks.judges`).

Feedback never contains the regex, the gold answers or the forbidden strings.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

import jsonschema

from skillopt_core.tasks.judges.options import bool_option, one_or_many, positive_int, string_list
from skillopt_core.tasks.judges.spec import JudgeError, nearest, register_judge
from skillopt_core.tasks.task import Score, Task
from skillopt_core.tasks.text_metrics import best_f1, exact_match

__all__ = [
    "ContainsJudge",
    "ExactJudge",
    "F1Judge",
    "JsonValidJudge",
    "MaxCharsJudge",
    "NotContainsJudge",
    "RegexJudge",
    "word_absent_pattern",
]

_REGEX_FLAGS = {
    "i": re.IGNORECASE, "ignorecase": re.IGNORECASE,
    "m": re.MULTILINE, "multiline": re.MULTILINE,
    "s": re.DOTALL, "dotall": re.DOTALL,
    "x": re.VERBOSE, "verbose": re.VERBOSE,
    "a": re.ASCII, "ascii": re.ASCII,
}
_CASE = "compare case-sensitively (default false)"
_ANSWERS = "gold answer(s); default: the task's reference"
_VALUES = {"value": "one required string", "values": "a list of strings", "case_sensitive": _CASE}


def word_absent_pattern(phrases: list[str]) -> str:
    """A regex that matches (at the start) only text without any of ``phrases`` as whole words."""
    alts = "|".join(r"\s+".join(re.escape(w) for w in p.split()) for p in phrases)
    return rf"^(?![\s\S]*(?<![\w.-])(?:{alts})(?![\w-]))"


def _pass(feedback: str) -> Score:
    return Score(1.0, 1.0, feedback)


def _gold_answers(fixed: tuple[str, ...] | None, task: Task, kind: str) -> tuple[str, ...]:
    if fixed is not None:
        return fixed
    answers = string_list(task.reference) if task.reference is not None else None
    if not answers:
        raise JudgeError(
            f"Task '{task.id}': judge '{kind}' has no 'answers' and the task's reference is not "
            "a string or list of strings. Give the judge 'answers' or the task a reference."
        )
    return answers


def _fold(text: str, case_sensitive: bool) -> str:
    return text if case_sensitive else text.casefold()


# --------------------------------------------------------------------------- #
# exact / f1


def _answers_option(opts: dict[str, Any]) -> tuple[str, ...] | None:
    if "answers" not in opts:
        return None  # taken from task.reference at scoring time
    answers = string_list(opts["answers"])
    if answers is None or not answers:
        raise JudgeError("Judge option 'answers' must be a non-empty string or list of strings.")
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


@register_judge("exact", {"answers": _ANSWERS, "case_sensitive": _CASE}, needs_reference=True)
def _build_exact(opts: dict[str, Any], backend: Any) -> ExactJudge:
    return ExactJudge(_answers_option(opts), bool_option("exact", opts, "case_sensitive"))


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


def _threshold_option(opts: dict[str, Any]) -> float | None:
    value = opts.get("threshold")
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 < value <= 1:
        raise JudgeError(f"Judge 'f1' option 'threshold' must be a number in (0, 1], got {value!r}.")
    return float(value)


@register_judge("f1", {
    "answers": _ANSWERS,
    "threshold": "pass when token F1 >= this (default: pass only on exact match)",
    "case_sensitive": _CASE,
}, needs_reference=True)
def _build_f1(opts: dict[str, Any], backend: Any) -> F1Judge:
    return F1Judge(_answers_option(opts), bool_option("f1", opts, "case_sensitive"), _threshold_option(opts))


# --------------------------------------------------------------------------- #
# contains / not_contains


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


@register_judge("contains", _VALUES)
def _build_contains(opts: dict[str, Any], backend: Any) -> ContainsJudge:
    return ContainsJudge(one_or_many("contains", opts, "value", "values"),
                         bool_option("contains", opts, "case_sensitive"))


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


@register_judge("not_contains", _VALUES)
def _build_not_contains(opts: dict[str, Any], backend: Any) -> NotContainsJudge:
    return NotContainsJudge(one_or_many("not_contains", opts, "value", "values"),
                            bool_option("not_contains", opts, "case_sensitive"))


# --------------------------------------------------------------------------- #
# regex


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
                f"Judge 'regex' has no flag '{name}'.{nearest(key, sorted(_REGEX_FLAGS))} "
                "Use i, m, s, x, a or their names (IGNORECASE, MULTILINE, DOTALL, VERBOSE, ASCII)."
            )
        flags |= _REGEX_FLAGS[key]
    try:
        return re.compile(pattern, flags)
    except re.error as exc:
        # The pattern is a grading secret, but the spec author sees this, not the optimizer.
        raise JudgeError(f"Judge 'regex' pattern does not compile: {exc}.") from exc


@dataclass(frozen=True)
class RegexJudge:
    pattern: re.Pattern[str]

    async def score(self, task: Task, response: str) -> Score:
        if self.pattern.search(response):
            return _pass("The response has the required form.")
        return Score(0.0, 0.0, "The response does not have the required form.")


@register_judge("regex", {
    "pattern": "regular expression searched in the response (re.search)",
    "flags": "letters like \"im\" or names (IGNORECASE, MULTILINE, DOTALL, VERBOSE, ASCII)",
})
def _build_regex(opts: dict[str, Any], backend: Any) -> RegexJudge:
    return RegexJudge(_compile_pattern(opts))


# --------------------------------------------------------------------------- #
# max_chars


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


@register_judge("max_chars", {"limit": "maximum number of characters"})
def _build_max_chars(opts: dict[str, Any], backend: Any) -> MaxCharsJudge:
    return MaxCharsJudge(positive_int("max_chars", opts, "limit", required=True))


# --------------------------------------------------------------------------- #
# json_valid


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
        return Score(0.0, 0.5,
                     f"The JSON does not match the required schema at {where} (failed '{problem.validator}').")


@register_judge("json_valid", {"schema": "JSON Schema the parsed response must match (optional)"})
def _build_json_valid(opts: dict[str, Any], backend: Any) -> JsonValidJudge:
    return JsonValidJudge(_schema_option(opts))

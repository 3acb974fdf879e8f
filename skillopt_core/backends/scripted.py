"""The scripted backend: a deterministic test double that says it is one.

It answers from two sources, in this order:

1. a queue (``enqueue(*texts)``): responses handed out in call order;
2. rules (:class:`Rule`): the first rule whose conditions all hold answers.

If the queue is empty and no rule matches, the call raises
:class:`BackendError` naming the stage, role and the start of the prompt, so a
test that forgot a response fails loudly instead of scoring an empty answer.

Every request is appended to ``history`` (in call order, including requests
that raised) so tests can assert on what the engine sent. Usage is counted in
whitespace-separated words, so it is deterministic.

Three hooks make it stand in for a slow, failing or metered model (Python only):

- ``delay``: seconds each call really awaits before it answers (a number, or a
  function of the request); the completion reports that delay as its latency.
  While calls wait, ``in_flight`` counts them and ``peak_in_flight`` keeps the
  most at once; ``cancelled`` counts the calls cancelled while waiting.
- ``Rule(error=...)``: the rule raises that exception instead of answering
  (after the delay), as a backend whose call failed.
- ``usage``: the :class:`Usage` every call reports instead of the word count
  (say, tokens with ``cost_usd=None``, as a model the price table must price).

From configuration, ``options["scripted"]`` is either a path to a YAML/JSON
file or an inline mapping of the same shape::

    rules:
      - {stage: reflect, response: '{"edits": []}'}
      - {regex: "capital of \\\\w+", response: "Paris"}
      - {match: "hello", role: target, response: "hi"}
    queue: ["first answer", "second answer"]
    cost_per_call: 0.01   # optional: the dollars each call reports (default 0)

``cost_per_call`` lets a test exercise dollar budgets (``budget.max_usd``)
and the preflight estimate without a paid model.
"""

from __future__ import annotations

import asyncio
import difflib
import re
import threading
from collections import deque
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from skillopt_core.backends import BackendSpec, register_backend
from skillopt_core.backends.base import BackendConfigError, BackendError, Completion, CompletionRequest, Usage
from skillopt_core.backends.images import text_only

__all__ = ["Rule", "ScriptedBackend", "load_script"]

Responder = Callable[[CompletionRequest], str]
Delay = float | Callable[[CompletionRequest], float]

_RULE_KEYS = ("match", "regex", "stage", "role", "response")
_TOP_KEYS = ("rules", "queue", "cost_per_call")
_PROMPT_PREVIEW_CHARS = 80


@dataclass(frozen=True)
class Rule:
    """Answer ``response`` when every given condition holds.

    ``match`` is a substring of ``request.prompt_text``, ``regex`` is searched
    (``re.search``) in it, ``stage`` and ``role`` must equal the request's
    labels. A condition left as ``None`` always holds, so a rule with none is a
    catch-all. ``response`` is a string or a function of the request; with
    ``error`` set, the rule raises it instead of answering.
    """

    match: str | None = None
    regex: str | None = None
    stage: str | None = None
    role: str | None = None
    response: str | Responder = ""
    error: BaseException | None = None
    _pattern: re.Pattern[str] | None = field(
        default=None, init=False, repr=False, compare=False
    )

    def __post_init__(self) -> None:
        if self.regex is not None:
            # Compile once, and fail at construction rather than at first call.
            object.__setattr__(self, "_pattern", re.compile(self.regex))

    def matches(self, request: CompletionRequest) -> bool:
        if self.stage is not None and request.stage != self.stage:
            return False
        if self.role is not None and request.role != self.role:
            return False
        text = request.prompt_text
        if self.match is not None and self.match not in text:
            return False
        if self._pattern is not None and self._pattern.search(text) is None:
            return False
        return True

    def respond(self, request: CompletionRequest) -> str:
        if self.error is not None:
            raise self.error
        if callable(self.response):
            return str(self.response(request))
        return self.response


class ScriptedBackend:
    """Deterministic backend answering from a queue, then from rules.

    Safe to call concurrently from many tasks or threads: the queue is popped
    and ``history`` appended under one lock, so queue order is call order.
    """

    name = "scripted"

    def __init__(
        self,
        rules: Iterable[Rule] = (),
        queue: Iterable[str] = (),
        model: str = "scripted",
        cost_per_call: float = 0.0,
        delay: Delay = 0.0,
        usage: Usage | None = None,
    ) -> None:
        if cost_per_call < 0:
            raise BackendConfigError(f"scripted backend: cost_per_call must be >= 0 dollars, got {cost_per_call}.")
        self.model = model
        self.cost_per_call = cost_per_call
        self.rules: list[Rule] = list(rules)
        self.delay = delay
        self.usage = usage
        self.history: list[CompletionRequest] = []
        self.in_flight = self.peak_in_flight = self.cancelled = 0
        self._queue: deque[str] = deque(queue)
        self._lock = threading.Lock()

    def enqueue(self, *texts: str) -> None:
        """Append responses; they are returned, in order, before any rule applies."""
        with self._lock:
            self._queue.extend(texts)

    def add_rule(self, rule: Rule) -> None:
        """Append a rule (it is tried after the existing ones)."""
        with self._lock:
            self.rules.append(rule)

    @property
    def queued(self) -> int:
        """How many queued responses are still unused."""
        with self._lock:
            return len(self._queue)

    def describe(self) -> str:
        return "scripted (deterministic test double; not a real model)"

    async def complete(self, request: CompletionRequest) -> Completion:
        request = text_only(request, "scripted")  # it reads text, like a model that cannot see
        with self._lock:
            self.history.append(request)
            queued = self._queue.popleft() if self._queue else None
            rules = list(self.rules)
        wait = self.delay(request) if callable(self.delay) else self.delay
        if wait > 0:
            await self._wait(wait)
        if queued is not None:
            text = queued
        else:
            rule = next((r for r in rules if r.matches(request)), None)
            if rule is None:
                raise BackendError(_no_match_message(request))
            # Run user callables outside the lock so they may inspect the backend.
            text = rule.respond(request)
        usage = self.usage or Usage(
            input_tokens=len(request.prompt_text.split()),
            output_tokens=len(text.split()),
            cost_usd=self.cost_per_call,
        )
        return Completion(text=text, usage=usage, model=self.model, latency_s=max(wait, 0.0))

    async def _wait(self, seconds: float) -> None:
        """Await ``seconds``, counted in ``in_flight`` (and ``cancelled`` if the call is cancelled)."""
        with self._lock:
            self.in_flight += 1
            self.peak_in_flight = max(self.peak_in_flight, self.in_flight)
        try:
            await asyncio.sleep(seconds)
        except asyncio.CancelledError:
            with self._lock:
                self.cancelled += 1
            raise
        finally:
            with self._lock:
                self.in_flight -= 1


def _no_match_message(request: CompletionRequest) -> str:
    preview = request.prompt_text[:_PROMPT_PREVIEW_CHARS].replace("\n", " ")
    return (
        f"scripted backend: queue empty and no rule matched stage={request.stage!r} "
        f"role={request.role!r}; prompt starts with {preview!r}. "
        "Enqueue a response or add a rule that matches this request."
    )


def _unknown_key(where: str, key: Any, known: tuple[str, ...]) -> BackendConfigError:
    near = difflib.get_close_matches(str(key), known, n=1)
    hint = f" Did you mean '{near[0]}'?" if near else ""
    return BackendConfigError(
        f"{where}: unknown key '{key}'.{hint} Allowed keys: {', '.join(known)}."
    )


def _rule_from_mapping(where: str, raw: Any) -> Rule:
    if isinstance(raw, Rule):
        return raw
    if not isinstance(raw, Mapping):
        raise BackendConfigError(
            f"{where}: a rule must be a mapping with keys {', '.join(_RULE_KEYS)}, "
            f"got {type(raw).__name__}."
        )
    for key in raw:
        if key not in _RULE_KEYS:
            raise _unknown_key(where, key, _RULE_KEYS)
    if "response" not in raw:
        raise BackendConfigError(f"{where}: missing key 'response' (the text to answer).")
    response = raw["response"]
    if not (isinstance(response, str) or callable(response)):
        raise BackendConfigError(
            f"{where}.response: must be a string, got {type(response).__name__}."
        )
    conditions: dict[str, str | None] = {}
    for key in ("match", "regex", "stage", "role"):
        value = raw.get(key)
        if value is not None and not isinstance(value, str):
            raise BackendConfigError(
                f"{where}.{key}: must be a string, got {type(value).__name__}."
            )
        conditions[key] = value
    try:
        return Rule(match=conditions["match"], regex=conditions["regex"], stage=conditions["stage"],
                    role=conditions["role"], response=response)
    except re.error as exc:
        raise BackendConfigError(
            f"{where}.regex: invalid regular expression {raw.get('regex')!r}: {exc}."
        ) from exc


def _script_from_mapping(source: str, data: Any) -> tuple[list[Rule], list[str], float]:
    if not isinstance(data, Mapping):
        raise BackendConfigError(
            f"{source}: expected a mapping with keys 'rules', 'queue' and/or 'cost_per_call', "
            f"got {type(data).__name__}."
        )
    for key in data:
        if key not in _TOP_KEYS:
            raise _unknown_key(source, key, _TOP_KEYS)
    raw_rules = data.get("rules") or []
    raw_queue = data.get("queue") or []
    if not isinstance(raw_rules, list):
        raise BackendConfigError(f"{source}: key 'rules' must be a list of rules.")
    if not isinstance(raw_queue, list):
        raise BackendConfigError(f"{source}: key 'queue' must be a list of strings.")
    rules = [_rule_from_mapping(f"{source}: rules[{i}]", r) for i, r in enumerate(raw_rules)]
    for i, item in enumerate(raw_queue):
        if not isinstance(item, str):
            raise BackendConfigError(
                f"{source}: queue[{i}] must be a string, got {type(item).__name__}."
            )
    cost = data.get("cost_per_call", 0.0)
    if isinstance(cost, bool) or not isinstance(cost, (int, float)) or cost < 0:
        raise BackendConfigError(f"{source}: cost_per_call must be a number of dollars >= 0, got {cost!r}.")
    return rules, list(raw_queue), float(cost)


def load_script(script: str | Path | Mapping[str, Any]) -> tuple[list[Rule], list[str]]:
    """Parse a rules file (YAML or JSON) or an inline mapping into (rules, queue)."""
    rules, queue, _ = _parse_script(script)
    return rules, queue


def script_cost(script: str | Path | Mapping[str, Any] | None) -> float:
    """The ``cost_per_call`` a script sets (0 without one)."""
    return 0.0 if script is None else _parse_script(script)[2]


def _parse_script(script: str | Path | Mapping[str, Any]) -> tuple[list[Rule], list[str], float]:
    """Parse a rules file (YAML or JSON) or an inline mapping into (rules, queue, cost_per_call).

    Raises :class:`BackendConfigError` naming the file (or ``inline``) and the
    offending key for anything malformed.
    """
    if isinstance(script, Mapping):
        return _script_from_mapping("scripted options (inline)", script)
    path = Path(script).expanduser()
    if not path.is_file():
        raise BackendConfigError(
            f"scripted rules file not found: {path}. Set model.scripted (--set model.scripted=FILE) to an existing "
            "YAML/JSON file or to an inline mapping with 'rules' and 'queue'."
        )
    try:
        # YAML is a superset of JSON, so one parser reads both.
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except yaml.YAMLError as exc:
        raise BackendConfigError(f"scripted rules file {path}: not valid YAML/JSON: {exc}") from exc
    return _script_from_mapping(f"scripted rules file {path}", data if data is not None else {})


@register_backend("scripted")
def _create_scripted(spec: BackendSpec) -> ScriptedBackend:
    script = spec.options.get("scripted")
    rules, queue, cost = _parse_script(script) if script is not None else ([], [], 0.0)
    # A named model stays visibly scripted so logs and cache keys never pass it off as real.
    model = "scripted" if not spec.model else f"scripted:{spec.model}"
    return ScriptedBackend(rules=rules, queue=queue, model=model, cost_per_call=cost)

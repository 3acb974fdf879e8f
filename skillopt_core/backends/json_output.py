"""Structured (JSON) output helpers shared by the HTTP and CLI backends.

Contract:

- :func:`parse_json` reads a JSON document out of model text, tolerating code
  fences and prose around it; it raises ``ValueError`` when there is none.
- :func:`check` parses and validates against a JSON Schema and returns the
  document re-serialised compactly, or the list of problems found.
- :func:`schema_instruction` is the text that asks for schema-shaped JSON
  when a server cannot constrain decoding itself.
- :func:`repair_request` builds the one follow-up turn that shows the model
  its invalid reply and the problems. Backends make at most one repair call;
  if the reply is still invalid they return it as it is (the engine validates
  again and counts the failure), as the Backend contract requires.
"""

from __future__ import annotations

import json
import logging
from dataclasses import replace
from typing import Any

import jsonschema

from skillopt_core.backends.base import CompletionRequest, Message

log = logging.getLogger(__name__)

_decoder = json.JSONDecoder()


def schema_instruction(schema: dict[str, Any]) -> str:
    return (
        "Reply with only one JSON document, no prose and no code fences, that matches this "
        "JSON Schema:\n" + json.dumps(schema, sort_keys=True)
    )


def parse_json(text: str) -> Any:
    """The first JSON object or array in ``text``."""
    stripped = text.strip()
    if stripped.startswith("```"):
        lines = stripped.splitlines()[1:]
        if lines and lines[-1].strip().startswith("```"):
            lines = lines[:-1]
        stripped = "\n".join(lines).strip()
    try:
        return json.loads(stripped)
    except ValueError:
        pass
    for i, ch in enumerate(stripped):
        if ch in "{[":
            try:
                doc, _ = _decoder.raw_decode(stripped, i)
                return doc
            except ValueError:
                continue
    raise ValueError("no JSON document found in the reply")


def schema_errors(doc: Any, schema: dict[str, Any]) -> list[str]:
    """Human-readable schema violations (empty when valid, or when the schema
    itself is unusable, which is logged)."""
    try:
        cls = jsonschema.validators.validator_for(schema)
        cls.check_schema(schema)
    except jsonschema.SchemaError as exc:
        log.warning("JSON schema is invalid, reply not validated locally: %s", exc.message)
        return []
    problems = []
    for err in sorted(cls(schema).iter_errors(doc), key=lambda e: list(e.path)):
        where = "/".join(str(p) for p in err.path) or "(root)"
        problems.append(f"{where}: {err.message}")
    return problems[:10]


def check(text: str, schema: dict[str, Any]) -> tuple[str | None, list[str]]:
    """(compact JSON text, []) when ``text`` holds a valid document, else (None, problems)."""
    try:
        doc = parse_json(text)
    except ValueError as exc:
        return None, [str(exc)]
    problems = schema_errors(doc, schema)
    if problems:
        return None, problems
    return json.dumps(doc, ensure_ascii=False), []


def with_schema_instruction(request: CompletionRequest) -> CompletionRequest:
    """``request`` with the schema instruction appended to its system text."""
    assert request.json_schema is not None
    note = schema_instruction(request.json_schema)
    system = f"{request.system}\n\n{note}" if request.system else note
    return replace(request, system=system)


def repair_request(request: CompletionRequest, bad_reply: str, problems: list[str]) -> CompletionRequest:
    """The original conversation plus the invalid reply and a request to fix it."""
    assert request.json_schema is not None
    listing = "\n".join(f"- {p}" for p in problems)
    fix = (
        "Your reply is not valid JSON for the required schema:\n"
        f"{listing}\n"
        "Send the corrected JSON document only. " + schema_instruction(request.json_schema)
    )
    messages = request.messages + (Message("assistant", bad_reply), Message("user", fix))
    return replace(request, messages=messages)

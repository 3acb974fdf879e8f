"""Structured (JSON) output: how it is asked for and how a reply is read.

Contract:

- :func:`schema_instruction` is the text that asks for schema-shaped JSON when
  a backend cannot constrain decoding; :func:`with_schema_instruction` appends
  it to a request's system text. Backends use these and nothing else here:
  they return replies as they came.
- :func:`extract_json` is the one reader of model JSON (the engine's
  :func:`.structured.complete_json` uses it): it finds the first JSON document
  in the text that matches a schema, tolerating a Markdown code fence or prose
  around it, and otherwise says why not, in sentences a model can act on (they
  go into the repair turn).
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Iterator
from dataclasses import replace
from typing import Any

import jsonschema

from skillopt_core.backends.base import CompletionRequest

log = logging.getLogger(__name__)

NO_JSON = "the reply holds no JSON document"
# How many '{' or '[' positions a reply is searched from before giving up.
_MAX_STARTS = 200
_FENCE = re.compile(r"```[A-Za-z0-9_-]*[ \t]*\n?(.*?)```", re.S)
_decoder = json.JSONDecoder()


def schema_instruction(schema: dict[str, Any]) -> str:
    return (
        "Reply with only one JSON document, no prose and no code fences, that matches this "
        "JSON Schema:\n" + json.dumps(schema, sort_keys=True)
    )


def with_schema_instruction(request: CompletionRequest) -> CompletionRequest:
    """``request`` with the schema instruction appended to its system text."""
    assert request.json_schema is not None
    note = schema_instruction(request.json_schema)
    system = f"{request.system}\n\n{note}" if request.system else note
    return replace(request, system=system)


def json_documents(text: str) -> Iterator[Any]:
    """The JSON documents in ``text``, most likely first: the whole text; else
    each fenced code block, then each document starting at a ``{`` or ``[``
    (scanning past a document once it is read)."""
    stripped = text.strip()
    try:
        yield json.loads(stripped)
        return
    except ValueError:
        pass
    for match in _FENCE.finditer(stripped):
        try:
            yield json.loads(match.group(1))
        except ValueError:
            continue
    pos, starts = 0, 0
    while starts < _MAX_STARTS:
        brace, bracket = stripped.find("{", pos), stripped.find("[", pos)
        found = [i for i in (brace, bracket) if i >= 0]
        if not found:
            return
        start = min(found)
        starts += 1
        try:
            doc, end = _decoder.raw_decode(stripped, start)
        except ValueError:
            pos = start + 1
            continue
        yield doc
        pos = end


def schema_errors(doc: Any, schema: dict[str, Any]) -> list[str]:
    """Human-readable schema violations (empty when valid, or when the schema
    itself is unusable, which is logged)."""
    try:
        cls = jsonschema.validators.validator_for(schema)
        cls.check_schema(schema)
    except jsonschema.SchemaError as exc:
        log.warning("JSON schema is invalid, reply not validated: %s", exc.message)
        return []
    problems = []
    for err in sorted(cls(schema).iter_errors(doc), key=lambda e: list(e.path)):
        where = "/".join(str(p) for p in err.path) or "(root)"
        problems.append(f"{where}: {err.message}")
    return problems[:10]


def extract_json(text: str, schema: dict[str, Any]) -> tuple[Any | None, list[str]]:
    """(the first document in ``text`` that matches ``schema``, []) or (None,
    the problems: :data:`NO_JSON`, or the violations of the first document)."""
    first_problems: list[str] | None = None
    for doc in json_documents(text):
        problems = schema_errors(doc, schema)
        if not problems:
            return doc, []
        if first_problems is None:
            first_problems = problems
    return None, first_problems if first_problems is not None else [NO_JSON]

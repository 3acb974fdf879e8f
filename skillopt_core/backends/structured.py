"""Schema-validated JSON replies from a model: one retry on invalid JSON,
then the failure is returned (and counted by the caller), never raised."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, replace
from typing import Any

import jsonschema

from skillopt_core.backends import Backend, CompletionRequest, Message, RequestRejected

_FENCE = re.compile(r"```(?:json)?\s*(.*?)```", re.S)


@dataclass(frozen=True)
class JsonReply:
    data: Any | None
    attempts: int
    error: str = ""

    @property
    def ok(self) -> bool:
        return self.data is not None


def parse_json_reply(text: str, schema: dict[str, Any]) -> tuple[Any | None, str]:
    """Parse ``text`` as JSON (tolerating a Markdown fence or prose around one
    object) and validate it against ``schema``. Returns (data, "") or (None, why)."""
    candidates = [text.strip()]
    fenced = _FENCE.search(text)
    if fenced:
        candidates.append(fenced.group(1).strip())
    start, end = text.find("{"), text.rfind("}")
    if 0 <= start < end:
        candidates.append(text[start : end + 1])
    error = "the reply is not JSON"
    for cand in candidates:
        try:
            data = json.loads(cand)
        except (json.JSONDecodeError, ValueError):
            continue
        try:
            jsonschema.validate(data, schema)
        except jsonschema.ValidationError as exc:
            error = f"the JSON does not match the schema: {exc.message}"
            continue
        return data, ""
    return None, error


async def complete_json(
    backend: Backend, request: CompletionRequest, schema: dict[str, Any], accept: dict[str, Any] | None = None
) -> JsonReply:
    """Ask for JSON matching ``schema`` (sent to the backend for constrained
    decoding). The reply is checked against ``accept`` (default: ``schema``),
    which may be looser so one malformed item doesn't void a whole reply."""
    request = replace(request, json_schema=schema)
    schema = accept or schema
    try:
        completion = await backend.complete(request)
    except RequestRejected as exc:
        return JsonReply(None, 1, str(exc))
    data, error = parse_json_reply(completion.text, schema)
    if data is not None:
        return JsonReply(data, 1)
    retry = replace(
        request,
        messages=request.messages
        + (
            Message("assistant", completion.text[:4000]),
            Message("user", f"That reply was invalid: {error}. Reply again with only one JSON object matching the schema."),
        ),
    )
    try:
        completion = await backend.complete(retry)
    except RequestRejected as exc:
        return JsonReply(None, 2, str(exc))
    data, error = parse_json_reply(completion.text, schema)
    return JsonReply(data, 2, "" if data is not None else error)

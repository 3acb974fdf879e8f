"""Schema-validated JSON replies from a model: the one JSON repair layer.

Contract:

- :func:`complete_json` sends the request with ``json_schema`` set to the
  *strict* schema (what the backend constrains decoding to, or states in the
  prompt) and reads the reply against the *accepting* schema (``accept``,
  default the strict one), which may be looser so one malformed item does not
  void a whole reply.
- An invalid reply gets exactly one repair turn: the conversation plus the
  invalid reply and what is wrong with it, measured against, and stating, the
  accepting schema. So a JSON reply costs at most two model calls, and both go
  through the backend the caller passed (in a run, the metered wrapper: the
  budget counts both). Backends never repair on their own (base.py).
- Failures are returned, never raised: a reply still invalid after the repair,
  or a call that failed for this request only (:class:`RequestFailed`, e.g. a
  timeout or refusal), gives a :class:`JsonReply` with ``ok`` False, the
  reason, and the exception in ``failure`` so the caller can count per-item
  failures. Systemic errors (:class:`BackendError` that is not a
  RequestFailed) and a used-up budget propagate.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from skillopt_core.backends.base import Backend, CompletionRequest, Message, RequestFailed
from skillopt_core.backends.json_output import NO_JSON, extract_json, schema_instruction

_REPLY_ECHO_CHARS = 4000


@dataclass(frozen=True)
class JsonReply:
    """``data`` (None when invalid), ``attempts`` (requests sent: 1 or 2),
    ``error`` (why invalid) and ``failure`` (the per-item backend error that
    ended it, if one did)."""

    data: Any  # the parsed JSON object; None when invalid (``ok`` is False)
    attempts: int
    error: str = ""
    failure: RequestFailed | None = None

    @property
    def ok(self) -> bool:
        return self.data is not None


def _why(problems: list[str]) -> str:
    if problems == [NO_JSON]:
        return "the reply is not JSON"
    return "the JSON does not match the schema: " + "; ".join(problems)


def parse_json_reply(text: str, schema: dict[str, Any]) -> tuple[Any | None, str]:
    """(data, "") for the first JSON document in ``text`` (a Markdown fence or
    prose around it is tolerated) that matches ``schema``, else (None, why)."""
    data, problems = extract_json(text, schema)
    return (data, "") if data is not None else (None, _why(problems))


def repair_request(
    request: CompletionRequest, bad_reply: str, problems: list[str], schema: dict[str, Any]
) -> CompletionRequest:
    """The conversation, the invalid reply, and one user turn that says what is
    wrong with it and which schema (the accepting one) the answer must match."""
    listing = "\n".join(f"- {p}" for p in problems)
    fix = (
        f"That reply was invalid:\n{listing}\n"
        "Send the corrected JSON document only. " + schema_instruction(schema)
    )
    messages = (*request.messages, Message("assistant", bad_reply[:_REPLY_ECHO_CHARS]), Message("user", fix))
    return replace(request, messages=messages)


async def complete_json(
    backend: Backend, request: CompletionRequest, schema: dict[str, Any], accept: dict[str, Any] | None = None
) -> JsonReply:
    """Ask for JSON matching ``schema``; accept a reply matching ``accept``
    (default ``schema``); repair an invalid reply once (module contract)."""
    request = replace(request, json_schema=schema)
    accept = accept or schema
    try:
        completion = await backend.complete(request)
    except RequestFailed as exc:
        return JsonReply(None, 1, str(exc), exc)
    data, problems = extract_json(completion.text, accept)
    if data is not None:
        return JsonReply(data, 1)
    try:
        completion = await backend.complete(repair_request(request, completion.text, problems, accept))
    except RequestFailed as exc:
        return JsonReply(None, 2, str(exc), exc)
    data, problems = extract_json(completion.text, accept)
    return JsonReply(data, 2, "" if data is not None else _why(problems))

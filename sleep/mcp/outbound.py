"""Everything the server sends back passes through :func:`outbound`.

Tool results (text content and structured content), resource contents, prompt
texts, progress messages and error messages are filtered by this one function
before they leave the process, so a secret in a run's files, a job's stderr
or a proposal's report never reaches the client. The filter is the one
everything leaving the data directory passes: every secret value a harvest
ever redacted (remembered as keyed hashes, :mod:`sleep.redact.known`) is
replaced wherever it stands, then the harvest's redactor
(:class:`sleep.redact.Redactor`) runs; it is swapped here, and only here. The walkers below apply it to every string of
a result (never to keys), passing the key as context.
"""

from __future__ import annotations

import json
from typing import Any

from mcp_types import CallToolResult, TextContent

# Keys of the tools' results that hold git object names: told to the filter as what they are
# (as a line `commit <sha>` would), so a commit id is not taken for a random token.
GIT_OBJECT_KEYS = {"branch_tip": "commit", "parent": "commit", "base_commit": "commit"}


def outbound(text: str, context: str = "") -> str:
    """``text`` as it may leave the server (secrets replaced by typed markers).

    ``context`` is the label the text is shown under (a JSON key such as
    ``skill_hash``): the filter reads it like the words before a value on a
    line, which tells a content hash from a token, and it is not returned."""
    from sleep import paths
    from sleep.redact import Redactor
    from sleep.redact import known as known_secrets

    if not text:
        return text
    known = known_secrets.cached(paths.index_path())  # an unreadable index raises: nothing leaves unchecked
    if known is not None:
        text, _ = known.scrub(text)
    if context:
        label = context.replace("_", " ").replace("-", " ") + ": "  # read as words: `skill hash: <hex>`
        out = Redactor().redact(label + text)
        if out.startswith(label):
            return out[len(label):]
    return Redactor().redact(text)


def outbound_value(value: Any, context: str = "") -> Any:
    """``value`` (JSON-like: dicts, lists, strings, numbers) with :func:`outbound` applied to every string."""
    if isinstance(value, str):
        return outbound(value, context)
    if isinstance(value, dict):
        return {k: outbound_value(v, GIT_OBJECT_KEYS.get(str(k), str(k))) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [outbound_value(v, context) for v in value]
    return value


def outbound_result(result: Any) -> Any:
    """A tool's result with its structured content and its text contents filtered.

    The text content that is the JSON of the structured content is rebuilt from
    the filtered structured content, so the two never disagree."""
    if not isinstance(result, CallToolResult):
        return result
    original = result.structured_content
    structured = outbound_value(original) if original is not None else None
    content = []
    for block in result.content:
        if isinstance(block, TextContent):
            text = _as_json_of(block.text, original, structured)
            block = block.model_copy(update={"text": text if text is not None else outbound(block.text)})
        content.append(block)
    return result.model_copy(update={"content": content, "structured_content": structured})


def _as_json_of(text: str, original: Any, filtered: Any) -> str | None:
    if original is None:
        return None
    try:
        same = json.loads(text) == original
    except ValueError:
        return None
    return json.dumps(filtered, indent=2, ensure_ascii=False) if same else None

"""Tool errors an agent can act on.

The SDK reports arguments that fail the input schema with pydantic's text
(ending in a link to pydantic's docs) and any other exception as a bare
``Error executing tool X``. :func:`explain_arguments` turns the first into
one line per field naming what was wrong and what the field accepts (read from
the tool's input schema); :func:`explain_exception` turns an ``OSError`` or
``ValueError`` raised by bad input (a name too long for the file system, a
folder that cannot be read) into what happened and what to do. Anything else
stays a crash, logged by the server and reported without its text.
"""

from __future__ import annotations

import errno
import os
from typing import Any

from pydantic import ValidationError

_TYPES = {"string": "text", "integer": "a whole number", "number": "a number", "boolean": "true or false",
          "array": "a list", "object": "an object", "null": "null"}


def accepted(schema: dict[str, Any]) -> str:
    """What a JSON-schema property accepts, in words (``one of 'test', 'val', 'train'``)."""
    options = [s for s in schema.get("anyOf", []) if s.get("type") != "null"]
    nullable = len(options) < len(schema.get("anyOf", []))
    if options:
        merged = {**options[0], **{k: v for k, v in schema.items() if k != "anyOf"}}
        return accepted(merged) + (" or null" if nullable else "")
    if "enum" in schema:
        return "one of " + ", ".join(repr(v) for v in schema["enum"])
    if "const" in schema:
        return repr(schema["const"])
    kind = schema.get("type")
    text = _TYPES.get(kind, "a value") if isinstance(kind, str) else "a value"
    if kind == "array" and isinstance(schema.get("items"), dict):
        text = f"a list of {accepted(schema['items'])}"
    if "pattern" in schema:
        text += f" matching {schema['pattern']}"
    low = schema.get("minimum", schema.get("exclusiveMinimum"))
    high = schema.get("maximum", schema.get("exclusiveMaximum"))
    if low is not None and high is not None:
        text += f" from {low:g} to {high:g}"
    elif low is not None:
        text += f" of at least {low:g}"
    elif high is not None:
        text += f" of at most {high:g}"
    if "minLength" in schema or "maxLength" in schema:
        text += f" of {schema.get('minLength', 0)} to {schema.get('maxLength', 'any number of')} characters"
    return text


def _shown(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def explain_arguments(exc: ValidationError, input_schema: dict[str, Any] | None) -> str:
    """One clause per failing field: what was wrong, what was given, what is accepted (no pydantic URL)."""
    props = (input_schema or {}).get("properties", {})
    clauses = []
    for err in exc.errors(include_url=False):
        loc = [str(p) for p in err.get("loc", ())]
        field = loc[0] if loc else "arguments"
        where = ".".join(loc) or "arguments"
        if err.get("type") == "missing":
            clause = f"{where} is required"
        else:
            clause = f"{where}: {err.get('msg', 'invalid')} (got {_shown(err.get('input'))})"
        if field in props:
            clause += f"; accepted: {accepted(props[field])}"
        clauses.append(clause)
    names = ", ".join(props) or "none"
    return "invalid arguments: " + "; ".join(clauses) + f". The tool's arguments are: {names}."


def explain_exception(exc: BaseException) -> str | None:
    """What went wrong and what to do, for an OSError or ValueError caused by bad input; else None."""
    if isinstance(exc, OSError):
        name = exc.filename if isinstance(exc.filename, str) else None
        where = f" ({name[:200]})" if name else ""
        if exc.errno == errno.ENAMETOOLONG:
            return (f"a path is too long for the file system{where}: each file or folder name holds at most "
                    "255 bytes and a whole path 4096; give a shorter path.")
        if exc.errno in (errno.EACCES, errno.EPERM):
            return f"permission denied{where}; give a path you can read and write, or fix its permissions."
        if exc.errno == errno.ENOSPC:
            return f"the disk is full{where}; free some space and try again. Nothing was changed."
        reason = exc.strerror or os.strerror(exc.errno) if exc.errno else str(exc)
        return f"{reason}{where}; check the path and try again."
    if isinstance(exc, ValueError):
        return f"{exc}; check the arguments and try again."
    return None

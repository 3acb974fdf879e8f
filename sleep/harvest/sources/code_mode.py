"""The tool calls inside a Codex code-mode ``exec`` script.

Codex 0.14x can run the model's tools from a JavaScript snippet: one
``custom_tool_call`` named ``exec`` whose ``input`` is a script such as::

    const r = await tools.exec_command({cmd: "pytest -q", workdir: "/repo"});
    text(await tools.apply_patch("*** Begin Patch\\n*** Update File: a.py\\n..."));

The calls the script makes are what the turn did. :func:`nested_calls` finds
each ``tools.<name>(<argument>)`` and reads its argument without running
anything: a string literal (``"..."``, ``'...'`` or a template literal without
substitutions) or an object literal whose keys may be bare identifiers and whose
values this module reads when they are string literals. Anything it cannot
read (a variable, a computed string) is left out: the call's name is still
reported, with no arguments.
"""

from __future__ import annotations

import re
from typing import Any

import orjson

MAX_SCRIPT_CHARS = 200_000
MAX_CALLS = 64
_CALL_RX = re.compile(r"\btools\.([A-Za-z_][A-Za-z0-9_]*)\s*\(\s*")
_KEY_RX = re.compile(r"""\s*(?:([A-Za-z_$][A-Za-z0-9_$]*)|"((?:[^"\\]|\\.)*)"|'((?:[^'\\]|\\.)*)')\s*:\s*""")
_JS_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "b": "\b", "f": "\f", "v": "\v", "0": "\0"}


def nested_calls(script: Any) -> list[tuple[str, Any]]:
    """``(tool name, argument)`` for each ``tools.<name>(...)`` call of ``script``, in
    order. The argument is a ``str`` (a string literal), a ``dict`` of the object
    literal's readable entries, or None."""
    if not isinstance(script, str) or "tools." not in script:
        return []
    script = script[:MAX_SCRIPT_CHARS]
    out: list[tuple[str, Any]] = []
    for m in _CALL_RX.finditer(script):
        arg, _ = _literal(script, m.end())
        out.append((m.group(1), arg))
        if len(out) >= MAX_CALLS:
            break
    return out


def _literal(text: str, pos: int) -> tuple[Any, int]:
    """The literal starting at ``text[pos]`` and the position after it; (None, pos) if
    there is none this module reads."""
    if pos >= len(text):
        return None, pos
    c = text[pos]
    if c in "\"'`":
        return _string(text, pos)
    if c == "{":
        return _object(text, pos)
    return None, pos


def _string(text: str, pos: int) -> tuple[str | None, int]:
    quote = text[pos]
    if quote == '"':
        # A JSON string literal (what JSON.stringify and most models write) decodes exactly.
        end = _string_end(text, pos)
        if end < 0:
            return None, pos
        try:
            return orjson.loads(text[pos:end]), end
        except orjson.JSONDecodeError:
            pass  # JS-only escapes (\x41, \'): read it the JS way
    out: list[str] = []
    i = pos + 1
    n = len(text)
    while i < n:
        ch = text[i]
        if ch == quote:
            return "".join(out), i + 1
        if quote == "`" and ch == "$" and text.startswith("${", i):
            return None, pos  # a template with substitutions has no fixed value
        if ch == "\\" and i + 1 < n:
            nxt = text[i + 1]
            if nxt == "u" and re.match(r"[0-9a-fA-F]{4}", text[i + 2:i + 6]):
                out.append(chr(int(text[i + 2:i + 6], 16)))
                i += 6
                continue
            if nxt == "x" and re.match(r"[0-9a-fA-F]{2}", text[i + 2:i + 4]):
                out.append(chr(int(text[i + 2:i + 4], 16)))
                i += 4
                continue
            if nxt == "\n":
                i += 2
                continue
            out.append(_JS_ESCAPES.get(nxt, nxt))
            i += 2
            continue
        if ch == "\n" and quote != "`":
            return None, pos
        out.append(ch)
        i += 1
    return None, pos


def _string_end(text: str, pos: int) -> int:
    """Position just past the double-quoted string starting at ``pos``, or -1."""
    i = pos + 1
    n = len(text)
    while i < n:
        ch = text[i]
        if ch == "\\":
            i += 2
            continue
        if ch == '"':
            return i + 1
        if ch == "\n":
            return -1
        i += 1
    return -1


def _object(text: str, pos: int) -> tuple[dict[str, Any] | None, int]:
    """An object literal's entries whose values are literals this module reads; other
    values are skipped to the next top-level comma."""
    out: dict[str, Any] = {}
    i = pos + 1
    n = len(text)
    while i < n:
        while i < n and text[i] in " \t\r\n,":
            i += 1
        if i >= n:
            break
        if text[i] == "}":
            return (out or None), i + 1
        m = _KEY_RX.match(text, i)
        if m is None:
            return (out or None), i
        key = m.group(1) or m.group(2) or m.group(3) or ""
        i = m.end()
        value, after = _literal(text, i)
        if after > i:
            out[key] = value
            i = after
        else:
            i = _skip_value(text, i)
    return (out or None), i


def _skip_value(text: str, pos: int) -> int:
    """Position of the comma or closing brace ending the value at ``pos`` (nesting and
    strings respected)."""
    depth = 0
    i = pos
    n = len(text)
    while i < n:
        ch = text[i]
        if ch in "\"'`":
            _, after = _string(text, i)
            i = after if after > i else i + 1
            continue
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            if depth == 0:
                return i
            depth -= 1
        elif ch == "," and depth == 0:
            return i
        i += 1
    return i

"""Text from transcripts, as a terminal may show it: no control sequences.

A prompt, a task's intent, a project path or a model's reply is whatever a
person (or a file an agent printed) put there; printed raw, an escape sequence
in it acts on the reader's terminal: a title change (OSC 0/2), a clipboard
write (OSC 52), a hyperlink that lies about its target (OSC 8), cursor moves
and erasures that hide or rewrite earlier lines (CSI), device queries whose
answers arrive as typed input. Every command that prints such text prints it
through :func:`clean` (with :func:`echo`, or :func:`safe_console` for the
night's console); JSON output goes through :func:`json_text`.

:func:`clean` removes, wherever they stand:

- CSI sequences (``ESC [`` or the 8-bit ``0x9B``, parameters, intermediates, final byte),
  also when cut short at the end of the text;
- OSC, DCS, SOS, PM and APC strings (``ESC ]``, ``ESC P``, ``ESC X``, ``ESC ^``, ``ESC _`` or
  their 8-bit forms) up to their terminator (BEL or ST), the end of the line or of the text;
- every other escape sequence (``ESC`` + intermediates + final byte: ``ESC c`` resets the
  terminal, ``ESC ( 0`` switches character sets);
- every other C0 control but newline and tab (carriage return, backspace, bell,
  form feed...), DEL, and the C1 controls U+0080-U+009F.

Newlines and tabs stay; everything printable stays as it is.
"""

from __future__ import annotations

import re
import sys
from typing import IO, Any

__all__ = ["clean", "echo", "json_text", "safe_console"]

_CONTROLS_RX = re.compile(
    r"(?:\x1b\[|\x9b)[0-?]*[ -/]*[@-~]?"  # CSI
    r"|(?:\x1b[\]PX^_]|[\x90\x98\x9d\x9e\x9f])[^\x07\x1b\x9c\n]*(?:\x07|\x1b\\|\x9c)?"  # OSC, DCS, SOS, PM, APC
    r"|\x1b[ -/]*[0-~]?"  # any other escape sequence (or a lone ESC)
    r"|[\x00-\x08\x0b-\x1f\x7f-\x9f]")  # other C0 (not \t, \n), DEL, C1
_ANY_CONTROL_RX = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")
_RAW_IN_JSON_RX = re.compile(r"[\x7f-\x9f]")  # json.dumps(ensure_ascii=False) leaves these as they are


def clean(text: Any) -> str:
    """``text`` (made a string) without control sequences: see the module's docstring."""
    text = text if isinstance(text, str) else str(text)
    if _ANY_CONTROL_RX.search(text) is None:  # almost every text: one scan, no copy
        return text
    return _CONTROLS_RX.sub("", text)


def echo(text: Any = "", file: IO[str] | None = None) -> None:
    """``print(clean(text))``: the way a command prints a line that may quote a transcript."""
    print(clean(text), file=file if file is not None else sys.stdout)


def json_text(dumped: str) -> str:
    """A JSON document as ``json.dumps`` wrote it, with DEL and the C1 controls (which it leaves
    raw with ``ensure_ascii=False``) written as ``\\u00XX`` escapes: the same JSON value, safe to
    print. C0 controls are escaped by ``json.dumps`` itself."""
    return _RAW_IN_JSON_RX.sub(lambda m: f"\\u{ord(m.group(0)):04x}", dumped)


def safe_console(console: Any) -> Any:
    """``console`` (a ``rich`` Console) whose ``print`` passes every string and ``Text`` it is given
    through :func:`clean` (the night's progress lines quote tasks, skills and replies)."""
    from rich.text import Text

    inner_print = console.print

    def print_clean(*objects: Any, **kwargs: Any) -> None:
        out = []
        for o in objects:
            if isinstance(o, str):
                o = clean(o)
            elif isinstance(o, Text) and _ANY_CONTROL_RX.search(o.plain) is not None:
                o = Text(clean(o.plain), style=o.style, justify=o.justify, no_wrap=o.no_wrap, end=o.end)
            out.append(o)
        inner_print(*out, **kwargs)

    console.print = print_clean
    return console

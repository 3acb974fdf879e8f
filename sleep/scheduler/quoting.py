"""Quoting an argv and environment into each OS entry, or refusing.

Every word is quoted whole, so no character of a path can start a new word,
command, substitution or entry:

- **cron**: the command is run by ``/bin/sh -c`` after cron turns each
  unescaped ``%`` into a newline (the rest becomes stdin). Words are single-quoted
  for sh; a ``%`` is written as ``\\%`` *outside* the quotes, between two quoted
  pieces, so cron's backslash never touches a backslash of the path. A line
  break cannot be written in a crontab line at all: refused.
- **systemd**: ``ExecStart=`` / ``Environment=`` words are double-quoted with C
  escapes (``\\\\``, ``\\"``, ``\\xNN`` for control characters), ``%%`` for a
  literal ``%`` (specifiers) and, in ``ExecStart=`` only, ``$$`` for a literal
  ``$`` (variable expansion). The executable itself may hold neither ``%`` nor
  ``$`` (systemd versions differ on expanding the first word): refused.
- **launchd**: argv and environment are plist strings (no shell at all); XML
  1.0 cannot carry most control characters, and a carriage return would be read
  back as a newline: refused.

A refusal raises :class:`~sleep.scheduler.model.UnrepresentablePath` naming
the value and the character.
"""

from __future__ import annotations

import unicodedata

from sleep.scheduler.model import UnrepresentablePath

# Vixie cron keeps 1000 bytes of a command; micron 1024. Longer lines are refused, not truncated.
CRON_MAX_LINE = 1000
_SH_SHELLS = ("sh", "bash", "dash", "zsh", "ksh", "mksh", "ash", "busybox", "yash", "posh")


_CONTROL_NAMES = {"\n": "LINE FEED", "\r": "CARRIAGE RETURN", "\t": "TAB", "\x1b": "ESCAPE"}


def _describe(ch: str) -> str:
    name = unicodedata.name(ch, "") or _CONTROL_NAMES.get(ch, "")
    return f"U+{ord(ch):04X}" + (f" {name}" if name else " (a control character)")


def _refuse(what: str, value: str, ch: str, why: str) -> UnrepresentablePath:
    return UnrepresentablePath(f"{what} {value!r} contains {_describe(ch)}, which {why}. Nothing was installed; "
                               "rename the folder (or schedule a symlink to it without that character), "
                               "or use another --mode")


# ----- cron (POSIX sh under cron's % rule) ----------------------------------------------

def sh_single(text: str) -> str:
    """One POSIX sh word: single quotes, with ``'`` written as ``'\\''``."""
    return "'" + text.replace("'", "'\\''") + "'"


def cron_word(text: str, what: str = "the value") -> str:
    for ch in ("\n", "\r"):
        if ch in text:
            raise _refuse(what, text, ch, "a crontab line cannot hold (every cron entry is one line)")
    return "\\%".join(sh_single(piece) for piece in text.split("%"))


def cron_command(argv: tuple[str, ...], env: tuple[tuple[str, str], ...], log: str) -> str:
    """The command part of a crontab line: ``NAME='v' ... 'exe' 'run' ... >'log' 2>&1``."""
    words = [f"{name}={cron_word(value, name)}" for name, value in env]
    words += [cron_word(argv[0], "the executable")]
    words += [cron_word(a, "the project path" if argv[i - 1] == "--project" else "the argument")
              for i, a in enumerate(argv[1:], 1)]
    return " ".join(words) + " >" + cron_word(log, "the log file") + " 2>&1"


def check_cron_shell(shell: str | None) -> None:
    """A ``SHELL=`` set earlier in the crontab must be a POSIX shell (the quoting assumes one)."""
    if shell is None:
        return
    name = shell.strip().strip("'\"").rsplit("/", 1)[-1]
    if name not in _SH_SHELLS:
        raise UnrepresentablePath(
            f"your crontab sets SHELL={shell.strip()}, which is not a POSIX shell; the entry is quoted for sh. "
            "Nothing was installed: remove that SHELL= line, or use --mode systemd or --mode daemon")


# ----- systemd --------------------------------------------------------------------------

def _systemd_escape(text: str, *, dollars: bool) -> str:
    out = []
    for ch in text:
        if ch == "\\":
            out.append("\\\\")
        elif ch == '"':
            out.append('\\"')
        elif ch == "%":
            out.append("%%")
        elif ch == "$" and dollars:
            out.append("$$")
        elif ch == "\n":
            out.append("\\n")
        elif ord(ch) < 0x20 or ord(ch) == 0x7F:
            out.append(f"\\x{ord(ch):02x}")
        else:
            out.append(ch)
    return '"' + "".join(out) + '"'


def systemd_exec(argv: tuple[str, ...]) -> str:
    """The value of ``ExecStart=`` for ``argv``."""
    for ch in ("%", "$"):
        if ch in argv[0]:
            raise _refuse("the executable", argv[0], ch,
                          "systemd may expand in a command's first word whatever the quoting")
    return " ".join(_systemd_escape(a, dollars=True) for a in argv)


def systemd_environment(env: tuple[tuple[str, str], ...]) -> str:
    """The value of ``Environment=`` for ``env`` (no ``$`` expansion happens there)."""
    return " ".join(_systemd_escape(f"{name}={value}", dollars=False) for name, value in env)


# ----- launchd (XML plist) --------------------------------------------------------------

def check_plist_text(text: str, what: str) -> None:
    for ch in text:
        o = ord(ch)
        if (o < 0x20 and ch not in "\t\n") or o in (0xFFFE, 0xFFFF) or 0xD800 <= o <= 0xDFFF:
            why = ("an XML property list reads back as a newline" if ch == "\r"
                   else "an XML property list cannot hold")
            raise _refuse(what, text, ch, why)

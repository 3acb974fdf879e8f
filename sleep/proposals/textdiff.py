"""A unified diff of two texts, as ``git diff`` prints one (optionally coloured).

``show`` compares texts that are not all in git (the text a night trained from
lives in the index), so it diffs them here, never by writing objects into the
person's repository.
"""

from __future__ import annotations

import difflib

from sleep.terminal_text import clean

_RED, _GREEN, _CYAN, _BOLD, _RESET = "\033[31m", "\033[32m", "\033[36m", "\033[1m", "\033[m"


def unified(old: str, new: str, old_label: str, new_label: str, *, color: bool = False, context: int = 3) -> str:
    """The unified diff of ``old`` → ``new`` ("" when they are equal)."""
    if old == new:
        return ""
    lines = list(difflib.unified_diff(old.splitlines(), new.splitlines(), old_label, new_label,
                                      n=context, lineterm=""))
    if not color:
        return "\n".join(lines) + "\n"
    out = []
    for line in map(clean, lines):  # the texts' own control sequences go; ours are added below
        if line.startswith(("---", "+++")):
            out.append(f"{_BOLD}{line}{_RESET}")
        elif line.startswith("@@"):
            out.append(f"{_CYAN}{line}{_RESET}")
        elif line.startswith("+"):
            out.append(f"{_GREEN}{line}{_RESET}")
        elif line.startswith("-"):
            out.append(f"{_RED}{line}{_RESET}")
        else:
            out.append(line)
    return "\n".join(out) + "\n"

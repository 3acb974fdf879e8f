"""The offline tools an OfficeQA agent gets over the parsed documents: glob,
read and grep, confined to the corpus folder (no path may leave it).

A reply calls one tool per line, ``Tool: <name> <arguments>``:

- ``Tool: glob <pattern>``: the corpus files matching a glob (``*1941*``);
- ``Tool: read <file> [<first line> [<last line>]]``: numbered lines of a file;
- ``Tool: grep <regular expression> [<file glob>]``: matching lines as
  ``file:line: text`` (case-insensitive).

Output is capped (``MAX_OUTPUT_CHARS``) so a tool answer cannot flood the
context; a bad call returns one line saying what was wrong.
"""

from __future__ import annotations

import fnmatch
import re
import shlex
from pathlib import Path

MAX_OUTPUT_CHARS = 3000
MAX_MATCHES = 40
_CALL = re.compile(r"^\s*tool\s*:\s*(\w+)\s*(.*)$", re.IGNORECASE | re.MULTILINE)


def tool_calls(reply: str) -> list[tuple[str, str]]:
    return [(name.lower(), args.strip()) for name, args in _CALL.findall(reply)]


class Corpus:
    def __init__(self, root: Path) -> None:
        self.root = root.resolve()

    def files(self) -> list[str]:
        return sorted(p.relative_to(self.root).as_posix() for p in self.root.rglob("*") if p.is_file())

    def _file(self, name: str) -> Path | None:
        path = (self.root / name).resolve()
        return path if path.is_file() and path.is_relative_to(self.root) else None

    def run(self, name: str, args: str) -> str:
        try:
            parts = shlex.split(args)
        except ValueError as exc:
            return f"error: cannot parse the arguments ({exc})"
        if name == "glob":
            pattern = parts[0] if parts else "*"
            found = [f for f in self.files() if fnmatch.fnmatch(f, pattern)]
            return "\n".join(found) or f"no file matches {pattern!r}"
        if name == "read":
            if not parts:
                return "error: read needs a file name"
            path = self._file(parts[0])
            if path is None:
                return f"error: no file {parts[0]!r} in the corpus (use glob)"
            lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
            try:
                first = int(parts[1]) if len(parts) > 1 else 1
                last = int(parts[2]) if len(parts) > 2 else len(lines)
            except ValueError:
                return "error: line numbers must be whole numbers"
            shown = [f"{n}: {lines[n - 1]}" for n in range(max(1, first), min(len(lines), last) + 1)]
            return "\n".join(shown)[:MAX_OUTPUT_CHARS] or "(no lines in that range)"
        if name == "grep":
            if not parts:
                return "error: grep needs a pattern"
            try:
                regex = re.compile(parts[0], re.IGNORECASE)
            except re.error as exc:
                return f"error: bad regular expression ({exc})"
            where = parts[1] if len(parts) > 1 else "*"
            hits = []
            for rel in self.files():
                if not fnmatch.fnmatch(rel, where):
                    continue
                text = (self.root / rel).read_text(encoding="utf-8", errors="replace")
                for n, line in enumerate(text.splitlines(), 1):
                    if regex.search(line):
                        hits.append(f"{rel}:{n}: {line}")
            return "\n".join(hits[:MAX_MATCHES])[:MAX_OUTPUT_CHARS] or "no match"
        return f"error: unknown tool {name!r}; the tools are glob, read and grep"

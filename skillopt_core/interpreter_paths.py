"""Where this Python interpreter lives, for sandboxes that must let it run.

A sandbox that mounts a fresh /tmp (bubblewrap's ``--tmpfs /tmp``) hides an
interpreter or virtualenv installed under /tmp (CI's throw-away venvs); such
sandboxes bind these folders back read-only. Used by SpreadsheetBench's
solution runner and by Sleep's replay sandbox.
"""

from __future__ import annotations

import sys
from pathlib import Path

__all__ = ["interpreter_paths_under_tmp"]


def interpreter_paths_under_tmp() -> list[str]:
    """The outermost existing folders under /tmp that this interpreter runs from
    or imports from (its prefixes, its ``sys.path``), as named and as their links
    resolve (a virtualenv's folders may be links into another one), shortest first."""
    tmp = Path("/tmp")
    found: set[Path] = set()
    for entry in (sys.prefix, sys.base_prefix, sys.exec_prefix, str(Path(sys.executable).parent), *sys.path):
        named = Path(entry or ".").absolute()
        for path in (named, named.resolve()):
            if path != tmp and tmp in path.parents and path.is_dir():
                found.add(path)
    kept: list[Path] = []
    for path in sorted(found, key=lambda p: len(p.parts)):
        if not any(k in path.parents for k in kept):
            kept.append(path)
    return [str(p) for p in kept]

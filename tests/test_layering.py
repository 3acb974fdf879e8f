"""The layers, read from the source with ast (every import statement, also those inside functions):

- ``skillopt_core`` never imports ``sleep``;
- ``sleep`` uses the core's public surface, never its CLI package or one env's internals;
- below the night (``sleep/cycle/``) nothing imports it: the replay, proposals, scheduler, MCP and
  dashboard packages take their helpers from modules at their own level or below;
- the harvest package imports nothing at load, so the index (which the harvester uses) and the
  harvest do not import each other in a circle, and no lazy module ``__getattr__`` hides one.
"""

from __future__ import annotations

import ast
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent

# Modules allowed to import sleep.cycle: the commands above the night, and the night itself.
# Command modules sit above the night (they may read its settings): `skillopt-sleep mine` reads sleep.mine_embedder.
ABOVE_THE_NIGHT = ("sleep/cycle/", "sleep/cli.py", "sleep/commands.py", "sleep/doctor.py", "sleep/__main__.py",
                   "sleep/mine/cli.py",
                   "sleep/memory/")  # the night's memory-file parts (a SkillGroup per memory file)
# Known arrows still pointing up, to be removed (this list only shrinks).
KNOWN_UPWARD: set[tuple[str, str]] = set()


def imports(path: Path) -> list[tuple[int, str]]:
    """(line, module) for every import in the file, relative imports resolved."""
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    package = ".".join(path.relative_to(REPO).with_suffix("").parts[:-1])
    found: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                module = ".".join([*base, node.module] if node.module else base)
            else:
                module = node.module or ""
            found.append((node.lineno, module))
            found += [(node.lineno, f"{module}.{alias.name}") for alias in node.names]
    return found


def sources(top: str) -> list[Path]:
    return sorted((REPO / top).rglob("*.py"))


def rel(path: Path) -> str:
    return path.relative_to(REPO).as_posix()


def test_the_core_never_imports_sleep():
    bad = [f"{rel(p)}:{line} imports {mod}" for p in sources("skillopt_core") for line, mod in imports(p)
           if mod == "sleep" or mod.startswith("sleep.")]
    assert bad == []


def test_sleep_uses_no_private_part_of_the_core():
    bad = [f"{rel(p)}:{line} imports {mod}" for p in sources("sleep") for line, mod in imports(p)
           if mod.startswith(("skillopt_core.cli", "skillopt_core.envs."))
           or any(part.startswith("_") and not part.startswith("__") for part in mod.split(".")[1:])
           and mod.startswith("skillopt_core")]
    assert bad == []


def test_nothing_below_the_night_imports_it():
    bad = [f"{rel(p)}:{line} imports {mod}" for p in sources("sleep") for line, mod in imports(p)
           if (mod == "sleep.cycle" or mod.startswith("sleep.cycle.")) and not rel(p).startswith(ABOVE_THE_NIGHT)
           and (rel(p), ".".join(mod.split(".")[:3])) not in KNOWN_UPWARD]
    assert bad == []


def test_the_index_does_not_import_the_harvest_and_no_lazy_getattr_hides_a_circle():
    index = [mod for _, mod in imports(REPO / "sleep" / "index.py")]
    assert not [m for m in index if m.startswith("sleep.harvest")]
    init = ast.parse((REPO / "sleep" / "harvest" / "__init__.py").read_text(encoding="utf-8"))
    assert not [n for n in init.body if isinstance(n, (ast.Import, ast.ImportFrom, ast.FunctionDef))
                and not (isinstance(n, ast.ImportFrom) and n.module == "__future__")]


def test_one_utc_timestamp_format():
    """The UTC timestamp is written in skillopt_core/timestamps.py only (issue 32: it was written eleven times)."""
    written = [f"{rel(p)}" for top in ("skillopt_core", "sleep") for p in sources(top)
               if "strftime(\"%Y-%m-%dT%H:%M:%S" in p.read_text(encoding="utf-8")
               or ".strftime('%Y-%m-%dT%H:%M:%S" in p.read_text(encoding="utf-8")]
    assert written == ["skillopt_core/timestamps.py"]

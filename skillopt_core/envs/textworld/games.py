"""Text games for the ``textworld`` env: generated on this machine with
TextWorld's ``tw-make`` (deterministic per seed), or read from a folder.

Generated games go to ``<cache>/textworld/<settings>/`` (``$SKILLOPT_CACHE_DIR``,
``$SKILLOPT_HOME/cache`` or the platform cache folder) and are made once: a
second run reuses them. ``tw-make`` compiles each game with Inform 7, about
5-15 s per game on 2 cores.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass
from pathlib import Path

from skillopt_core.backends.llama_probe import cache_root

GAME_SUFFIXES = (".z8", ".ulx")


@dataclass(frozen=True)
class GameSpec:
    """``tw-make custom`` settings for ``count`` games with seeds ``seed``, ``seed+1``, ..."""

    count: int = 6
    seed: int = 0
    world_size: int = 2
    nb_objects: int = 4
    quest_length: int = 2

    def folder(self) -> Path:
        key = hashlib.sha256(json.dumps(asdict(self), sort_keys=True).encode()).hexdigest()[:12]
        return cache_root() / "textworld" / f"games-{key}"


def tw_make() -> str:
    here = Path(sys.executable).with_name("tw-make")
    found = str(here) if here.is_file() else shutil.which("tw-make")
    if not found:
        raise RuntimeError("The textworld env needs TextWorld's tw-make: pip install 'skillopt[textworld]'.")
    return found


def _make(spec: GameSpec, seed: int, game: Path) -> None:
    # tw-make writes next to --output; a temporary name keeps a half-made game from being reused.
    partial = game.with_name(f"partial-{game.name}")
    cmd = [tw_make(), "custom", "--world-size", str(spec.world_size), "--nb-objects", str(spec.nb_objects),
           "--quest-length", str(spec.quest_length), "--seed", str(seed), "--output", str(partial), "-f", "--silent"]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    if proc.returncode != 0 or not partial.is_file():
        last = (proc.stderr.strip().splitlines() or ["(no message)"])[-1]
        raise RuntimeError(f"tw-make could not generate the game with seed {seed}: {last}")
    for made in partial.parent.glob(f"{partial.stem}.*"):
        made.replace(game.with_suffix(made.suffix))


def generate(spec: GameSpec) -> list[Path]:
    """The spec's games, generated where missing (two at a time)."""
    folder = spec.folder()
    folder.mkdir(parents=True, exist_ok=True)
    games = [folder / f"tw-s{spec.seed + n}.z8" for n in range(spec.count)]
    missing = [(spec.seed + n, game) for n, game in enumerate(games) if not game.is_file()]
    with ThreadPoolExecutor(max_workers=2) as pool:
        list(pool.map(lambda item: _make(spec, *item), missing))
    return games


def games_in(folder: Path) -> list[Path]:
    games = sorted(p for p in folder.rglob("*") if p.suffix in GAME_SUFFIXES)
    if not games:
        raise FileNotFoundError(f"No TextWorld games (.z8, .ulx) under {folder}. Check env.data_path.")
    return games

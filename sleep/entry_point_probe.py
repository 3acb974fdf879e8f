"""Whether any installed distribution may declare an entry point of a group, without
importing ``importlib.metadata``.

Reading the ``skillopt.hosts`` entry points through ``importlib.metadata`` costs
about 30 ms of CPU per process (the module and what it imports: email, csv,
zipfile, ...), paid by every `skillopt-sleep harvest` although almost no one
has a host plugin installed. :func:`may_declare` looks where
``importlib.metadata`` looks (every ``sys.path`` entry's ``*.dist-info`` and
``*.egg-info`` folders, an egg's ``EGG-INFO``) for an ``entry_points.txt`` that
names the group at all; only then does the caller need ``importlib.metadata``.
It answers True whenever it cannot tell (a zip on ``sys.path``, a meta-path
finder of its own that lists distributions), so a plugin is never missed.
"""

from __future__ import annotations

import os
import sys

_INFO_SUFFIXES = (".dist-info", ".egg-info")


def may_declare(group: str) -> bool:
    """False only if no distribution on ``sys.path`` names ``group`` in its entry points."""
    if "importlib.metadata" in sys.modules:
        return True  # already loaded (and perhaps patched): asking it costs nothing more
    from importlib.machinery import PathFinder

    for finder in sys.meta_path:
        if finder is not PathFinder and callable(getattr(finder, "find_distributions", None)):
            return True  # distributions this probe cannot see
    needle = group.encode("utf-8")
    for entry in sys.path:
        folder = entry or "."
        try:
            if not os.path.isdir(folder):
                if os.path.exists(folder):
                    return True  # a zip (or some other importable file): not probed
                continue
            names = os.listdir(folder)
        except OSError:
            continue
        for name in names:
            low = name.lower()
            if low.endswith(_INFO_SUFFIXES) or (low == "egg-info" and folder.lower().endswith(".egg")):
                path = os.path.join(folder, name, "entry_points.txt")
            elif low.endswith(".egg"):
                egg = os.path.join(folder, name)
                if os.path.isfile(egg):
                    return True  # a zipped egg
                path = os.path.join(egg, "EGG-INFO", "entry_points.txt")
            else:
                continue
            try:
                with open(path, "rb") as f:
                    if needle in f.read():
                        return True
            except OSError:
                continue
    return False

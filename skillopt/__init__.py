"""``import skillopt``: the seed project's import name for SkillOpt's public API.

A thin re-export of :mod:`skillopt_core`: every name in ``skillopt_core.__all__``
is available here as the same object (``skillopt.Task is skillopt_core.Task``),
loaded on first use like the core's own names, so importing stays cheap. New
code may import either package; the core is where the names live.
"""

from __future__ import annotations

from typing import Any

import skillopt_core as _core

__version__ = _core.__version__
__all__ = list(_core.__all__)


def __getattr__(name: str) -> Any:
    if name not in __all__:
        raise AttributeError(f"module 'skillopt' has no attribute {name!r}")
    value = getattr(_core, name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(list(globals()) + __all__)

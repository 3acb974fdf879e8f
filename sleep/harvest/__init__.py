"""The harvest: transcripts of every host read into the index, redacted, incrementally.

- :mod:`sleep.harvest.harvester`: :func:`harvest` (the lock, the sources, the batches);
- :mod:`sleep.harvest.pool`: files parsed in worker processes, one writer;
- :mod:`sleep.harvest.reader`: the line reader and the parse context every source shares;
- :mod:`sleep.harvest.offsets`: where each file's next read starts;
- :mod:`sleep.harvest.sources`: one reader per host's transcript format;
- :mod:`sleep.harvest.cli`: the ``harvest`` and ``sessions`` commands.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from sleep.harvest.harvester import HarvestOptions, HarvestReport, harvest, parse_duration

__all__ = ["HarvestOptions", "HarvestReport", "harvest", "parse_duration"]


def __getattr__(name: str) -> Any:
    # Loaded on first use: the index imports sleep.harvest.offsets, and the harvester imports the index.
    if name in __all__:
        from sleep.harvest import harvester

        return getattr(harvester, name)
    raise AttributeError(f"module 'sleep.harvest' has no attribute {name!r}")

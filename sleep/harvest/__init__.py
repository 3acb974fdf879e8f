"""The harvest: transcripts of every host read into the index, redacted, incrementally.

- :mod:`sleep.harvest.harvester`: :func:`harvest` (the lock, the sources, the batches),
  ``HarvestOptions``, ``HarvestReport``, ``parse_duration``;
- :mod:`sleep.harvest.pool`: files parsed in worker processes, one writer;
- :mod:`sleep.harvest.reader`: the line reader and the parse context every source shares;
- :mod:`sleep.harvest.sources`: one reader per host's transcript format;
- :mod:`sleep.harvest.cli`: the ``harvest`` and ``sessions`` commands.

Import them from their modules: this package imports nothing, so loading a
command's parser or one source does not load the harvester.
"""

"""sleep.mine: find the tasks a person repeats across sessions and make them replayable, judged tasks.

Public entry points (import them from their modules, so importing ``sleep.mine`` stays cheap):

- :func:`mine` with :class:`MineOptions` -> :class:`MineReport` (sleep.mine.miner)
- :func:`export_tasks_jsonl` (sleep.mine.export): a project's enabled tasks as a
  ``jsonl_tasks`` file for ``skillopt_core``
- :func:`load_tasks`, :func:`set_enabled` (sleep.mine.store)
- :class:`Assistant` (sleep.mine.assist): optional optimizer help
"""

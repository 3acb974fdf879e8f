"""The SkillOpt dashboard: ``skillopt-sleep ui`` (http://127.0.0.1:7860 by default).

Server-rendered pages (Starlette + Jinja2) over what the engine and the sleep
product already write: run directories (``outputs/<env>/<run_id>/``), the
index's proposals, nights and mined tasks. A little of our own JavaScript
follows a running run's ``events.jsonl`` (EventSource); the plots are inline
SVG drawn here. Nothing is fetched from another host, so it works offline.

Modules: ``runs`` (finding run directories, the list), ``runfiles`` (opening
a run's files, and only those inside it), ``coerce`` (lenient typed reading of
their JSON), ``rundata`` / ``stepdata`` / ``runrow`` (a run's, a step's and a
list row's typed values), ``runconfig`` (a run's ``config.yaml``), ``runtable``
(sorting, filtering, grouping, paging and exporting the runs table), ``samples``
(each rollout's input → output → expected → score, trajectories, the items × skill
versions matrix), ``labels`` (a run's name, tags, note and archived flag),
``charts`` (per-step line charts), ``outbound`` (the one filter every displayed text
of run data, proposals, nights and tasks passes), ``svgplot`` and
``textdiff`` (pure renderers), ``live`` (tailing ``events.jsonl``), ``data``
(nights and mined tasks), ``guard`` (access token, loopback host names, CSRF
and same-origin checks), ``app`` / ``run_pages`` / ``review_pages`` (routes),
``cli`` (the ``ui`` subcommand). Importing this package imports nothing of
Starlette or Jinja2; ``sleep.ui.app`` does.
"""

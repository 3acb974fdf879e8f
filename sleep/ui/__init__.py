"""The SkillOpt dashboard: ``skillopt-sleep ui`` (http://127.0.0.1:7860 by default).

Server-rendered pages (Starlette + Jinja2) over what the engine and the sleep
product already write: run directories (``outputs/<env>/<run_id>/``), the
index's proposals, nights and mined tasks. A little of our own JavaScript
follows a running run's ``events.jsonl`` (EventSource); the plots are inline
SVG drawn here. Nothing is fetched from another host, so it works offline.

Modules: ``runs`` (finding run directories, the list), ``rundata`` (one run's
files), ``svgplot`` and ``textdiff`` (pure renderers), ``live`` (tailing
``events.jsonl``), ``data`` (nights and mined tasks), ``guard`` (loopback,
token, CSRF and same-origin checks), ``app`` / ``run_pages`` /
``review_pages`` (routes), ``cli`` (the ``ui`` subcommand). Importing this
package imports nothing of Starlette or Jinja2; ``sleep.ui.app`` does.
"""

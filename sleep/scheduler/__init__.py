"""Nightly scheduling: schedules in the index, OS entries (cron, systemd user
timers, launchd), the daemon (APScheduler) and the transcript watcher (watchdog).

The library surface the CLI, the MCP tools and the plugins use:

- :func:`sleep.scheduler.api.schedule` / :func:`~sleep.scheduler.api.unschedule` /
  :func:`~sleep.scheduler.api.list_schedules` / :func:`~sleep.scheduler.api.plan`
- :func:`sleep.scheduler.status.status` (what ``skillopt-sleep status`` shows)
- :func:`sleep.scheduler.hook.session_end` (the Claude Code SessionEnd hook)

Modules import lazily: the hook and ``status`` stay quick to start.
"""

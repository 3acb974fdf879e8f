"""The cron mode: one managed block in the user's crontab, one line per project.

The crontab is read with ``crontab -l`` and written whole with ``crontab -``.
Our lines live between two marker lines; everything outside them is written
back byte for byte. The begin marker remembers what scheduling changed beyond
the block (the crontab did not exist; a final newline was added), so removing
the last entry restores the crontab exactly, down to its absence (``crontab -r``).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import sys
from dataclasses import dataclass, field
from pathlib import Path

from sleep.scheduler.entries import Entry, Rendered, run_tool
from sleep.scheduler.model import ScheduleError
from sleep.scheduler.quoting import CRON_MAX_LINE, check_cron_shell, cron_command

BEGIN = "# >>> skillopt-sleep nightly runs (managed by `skillopt-sleep schedule`; remove with `unschedule`)"
BEGIN_SUFFIX = " >>>"
END = "# <<< skillopt-sleep nightly runs <<<"
FLAG_CREATED = "created-crontab"
FLAG_NEWLINE = "added-final-newline"
_PROJECT_RX = re.compile(r"^# project ([0-9a-f]{12}): ")
_SHELL_RX = re.compile(r"^\s*SHELL\s*=(.*)$")


def unavailable() -> str | None:
    if shutil.which("crontab") is None:
        return "no `crontab` command on PATH"
    return None


# The process names of the cron daemons Linux distributions ship (cronie, vixie/Debian cron,
# busybox, dcron, fcron).
DAEMON_NAMES = frozenset({"cron", "crond", "cronie", "fcron", "dcron", "busybox-crond"})


def not_running() -> str | None:
    """Why no crontab entry would fire here: no cron daemon is running (None: one runs, or this
    system gives no way to tell). Linux: a process of :data:`DAEMON_NAMES` in ``/proc``
    (``SKILLOPT_PROC_DIR`` for tests); macOS starts cron on demand through launchd."""
    if sys.platform == "darwin":
        return None
    proc = Path(os.environ.get("SKILLOPT_PROC_DIR") or "/proc")
    if not proc.is_dir():
        return None
    try:
        pids = [d for d in proc.iterdir() if d.name.isdigit()]
    except OSError:
        return None
    for d in pids:
        try:
            if (d / "comm").read_text(encoding="utf-8", errors="replace").strip() in DAEMON_NAMES:
                return None
        except OSError:
            continue  # the process ended, or is not ours to read
    return ("`crontab` exists but no cron daemon is running (no cron, crond or cronie process), so the "
            "entry would never fire")


@dataclass
class Crontab:
    """A crontab split around our block: ``before`` + block + ``after`` == the text."""

    exists: bool
    before: str
    after: str
    items: list[tuple[str | None, list[str]]] = field(default_factory=list)  # (key or None, lines)
    flags: set[str] = field(default_factory=set)
    has_block: bool = False

    def text(self) -> str:
        if not self.items:
            before = self.before
            if FLAG_NEWLINE in self.flags and not self.after and before.endswith("\n"):
                before = before[:-1]  # the newline we added in front of our block
            return before + self.after
        flags = f" [{', '.join(sorted(self.flags))}]" if self.flags else ""
        body = "".join(line for _, lines in self.items for line in lines)
        return f"{self.before}{BEGIN}{flags}{BEGIN_SUFFIX}\n{body}{END}\n{self.after}"

    def keys(self) -> list[str]:
        return [k for k, _ in self.items if k]


def read() -> Crontab:
    """The current crontab, parsed (raises ScheduleError when our markers are broken)."""
    proc = run_tool(["crontab", "-l"], check=False)
    if proc.returncode != 0:
        if "no crontab" in (proc.stderr or "").lower():
            return Crontab(exists=False, before="", after="")
        raise ScheduleError(f"`crontab -l` failed (exit {proc.returncode}): {(proc.stderr or '').strip()}")
    return parse(proc.stdout)


def parse(text: str, exists: bool = True) -> Crontab:
    lines = text.splitlines(keepends=True)
    begins = [i for i, ln in enumerate(lines) if ln.startswith(BEGIN)]
    ends = [i for i, ln in enumerate(lines) if ln.rstrip("\r\n") == END]
    if not begins and not ends:
        return Crontab(exists=exists, before=text, after="")
    if len(begins) != 1 or len(ends) != 1 or ends[0] < begins[0]:
        raise ScheduleError(
            "your crontab's skillopt-sleep marker lines are broken (a begin marker without its end, or two "
            "blocks); nothing was changed. Open it with `crontab -e` and remove the lines between and "
            f"including '{BEGIN[:30]}...' and '{END}', then schedule again")
    b, e = begins[0], ends[0]
    head = lines[b].rstrip("\r\n")
    flags = set()
    m = re.search(r" \[([a-z, -]+)\]" + re.escape(BEGIN_SUFFIX) + "$", head)
    if m:
        flags = {f.strip() for f in m.group(1).split(",") if f.strip()}
    items: list[tuple[str | None, list[str]]] = []
    body = lines[b + 1:e]
    i = 0
    while i < len(body):
        pm = _PROJECT_RX.match(body[i])
        if pm and i + 1 < len(body):
            items.append((pm.group(1), [body[i], body[i + 1]]))
            i += 2
        else:
            items.append((None, [body[i]]))  # a line someone added inside the block: kept
            i += 1
    return Crontab(exists=exists, before="".join(lines[:b]), after="".join(lines[e + 1:]), items=items,
                   flags=flags, has_block=True)


def entry_lines(entry: Entry) -> list[str]:
    command = cron_command(entry.command.argv, entry.command.env, entry.command.log)
    line = f"{entry.minute} {entry.hour} * * * {command}"
    size = len(line.encode("utf-8"))
    if size > CRON_MAX_LINE:
        raise ScheduleError(
            f"the cron entry would be {size} bytes, more than cron reads ({CRON_MAX_LINE}); usually PATH is "
            "very long. Nothing was installed: shorten PATH where you run `schedule`, or use --mode systemd "
            "or --mode daemon")
    comment = f"# project {entry.key}: {json.dumps(entry.project)}"
    return [comment + "\n", line + "\n"]


def with_entry(tab: Crontab, entry: Entry) -> Crontab:
    """``tab`` with ``entry``'s lines in place of any earlier ones (appended when new)."""
    lines = entry_lines(entry)
    shell = None
    for ln in tab.before.splitlines():
        m = _SHELL_RX.match(ln)
        if m:
            shell = m.group(1)
    check_cron_shell(shell)
    if not tab.has_block:
        flags = set() if tab.exists else {FLAG_CREATED}
        before = tab.before
        if before and not before.endswith("\n"):
            before += "\n"
            flags.add(FLAG_NEWLINE)
        return Crontab(exists=tab.exists, before=before, after="", items=[(entry.key, lines)], flags=flags,
                       has_block=True)
    items = list(tab.items)
    for i, (k, _) in enumerate(items):
        if k == entry.key:
            items[i] = (entry.key, lines)
            break
    else:
        items.append((entry.key, lines))
    return Crontab(exists=tab.exists, before=tab.before, after=tab.after, items=items, flags=set(tab.flags),
                   has_block=True)


def without(tab: Crontab, keys: set[str]) -> Crontab:
    items = [(k, lines) for k, lines in tab.items if k not in keys]
    return Crontab(exists=tab.exists, before=tab.before, after=tab.after, items=items, flags=set(tab.flags),
                   has_block=bool(items))


def _write(old: Crontab, new: Crontab) -> bool:
    text = new.text()
    if text == old.text():
        return False
    if not new.items and FLAG_CREATED in old.flags and text == "":
        run_tool(["crontab", "-r"])
    else:
        run_tool(["crontab", "-"], stdin=text)
    return True


def render(entry: Entry) -> Rendered:
    lines = entry_lines(entry)
    return Rendered(mode="cron", files={"crontab (between the skillopt-sleep markers)": "".join(lines)},
                    commands=[["crontab", "-l"], ["crontab", "-"]],
                    notes=["cron runs it at the given local time; a night missed while the machine was off "
                           "or asleep is not caught up (systemd and launchd catch up; so does the daemon)"])


def install(entry: Entry) -> dict:
    old = read()
    new = with_entry(old, entry)
    changed = _write(old, new)
    check = read()
    if entry.key not in check.keys():
        raise ScheduleError("the crontab was written but `crontab -l` does not show the skillopt-sleep entry; "
                            "check your cron installation")
    return {"crontab": True, "changed": changed}


def remove(key: str, installed: dict | None = None) -> list[str]:
    old = read()
    if key not in old.keys():
        return []
    new = without(old, {key})
    _write(old, new)
    if not new.items and FLAG_CREATED in old.flags:
        return ["removed the cron entry; your crontab had not existed before, so it was removed"]
    return ["removed the cron entry (the rest of your crontab is unchanged)"]


def present(key: str) -> bool:
    try:
        return key in read().keys()
    except ScheduleError:
        return False


def orphans() -> list[str]:
    return read().keys() if unavailable() is None else []

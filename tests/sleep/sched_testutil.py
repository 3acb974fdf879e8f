"""Test doubles for the scheduler: a fake ``skillopt-sleep`` that records its nights,
and fake ``crontab`` / ``systemctl`` / ``launchctl`` that keep their state in
temporary files. Put first on PATH by :func:`fake_tools`, so no test touches the
real crontab, units or agents.

- ``crontab``: ``-l`` prints ``$FAKE_CRONTAB_FILE`` (or "no crontab for ..." and
  exit 1), ``-`` stores stdin there, ``-r`` deletes it; every call is logged.
- ``systemctl --user``: ``show-environment`` succeeds unless ``$FAKE_SYSTEMD_DOWN``;
  ``enable --now T`` links ``T`` into ``timers.target.wants`` of
  ``$SKILLOPT_SYSTEMD_USER_DIR`` and ``disable --now T`` unlinks it (the folder
  stays, as with the real one); calls are logged.
- ``launchctl``: ``bootstrap`` / ``bootout`` keep the loaded labels in a file;
  booting out a label that is not loaded fails like the real one (exit 3).
- ``skillopt-sleep``: appends ``{"event", "argv", "pid", "time", "env"}`` lines to
  ``$FAKE_NIGHT_LOG`` (start, end, interrupted on SIGINT), sleeps
  ``$FAKE_NIGHT_SECONDS``, prints a night record, exits ``$FAKE_NIGHT_EXIT``.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path

FAKE_NIGHT = r'''#!{python}
import json, os, signal, sys, time
LOG = os.environ.get("FAKE_NIGHT_LOG") or {fixed_log!r}
KEEP = ("PATH", "SKILLOPT_HOME", "CLAUDE_CONFIG_DIR", "CODEX_HOME", "COPILOT_HOME", "SKILLOPT_REPLAY_ROOT",
        "SKILLOPT_CACHE_DIR")
def record(event):
    with open(LOG, "a", encoding="utf-8") as f:
        f.write(json.dumps({{"event": event, "argv": sys.argv, "pid": os.getpid(), "time": time.time(),
                            "env": {{k: os.environ[k] for k in KEEP if k in os.environ}}}}) + "\n")
def interrupted(*_):
    record("interrupted")
    sys.exit(130)
signal.signal(signal.SIGINT, interrupted)
record("start")
time.sleep(float(os.environ.get("FAKE_NIGHT_SECONDS", "0")))
print(json.dumps({{"id": "n-fake-%d" % os.getpid(), "outcome": os.environ.get("FAKE_NIGHT_OUTCOME", "idle"),
                  "reason": "a fake night"}}))
record("end")
sys.exit(int(os.environ.get("FAKE_NIGHT_EXIT", "0")))
'''

FAKE_CRONTAB = r'''#!{python}
import os, sys
state = os.environ["FAKE_CRONTAB_FILE"]
with open(state + ".calls", "a") as f:
    f.write(" ".join(sys.argv[1:]) + "\n")
arg = sys.argv[1:]
if arg == ["-l"]:
    if not os.path.exists(state):
        sys.stderr.write("no crontab for tester\n")
        sys.exit(1)
    sys.stdout.buffer.write(open(state, "rb").read())
elif arg == ["-"]:
    data = sys.stdin.buffer.read()
    open(state, "wb").write(data)
elif arg == ["-r"]:
    os.remove(state)
else:
    sys.stderr.write("fake crontab: unsupported %r\n" % arg)
    sys.exit(2)
'''

FAKE_SYSTEMCTL = r'''#!{python}
import os, sys
with open(os.environ["FAKE_TOOL_LOG"], "a") as f:
    f.write("systemctl " + " ".join(sys.argv[1:]) + "\n")
args = sys.argv[1:]
assert args[0] == "--user", args
units = os.environ["SKILLOPT_SYSTEMD_USER_DIR"]
wants = os.path.join(units, "timers.target.wants")
if args[1] == "show-environment":
    if os.environ.get("FAKE_SYSTEMD_DOWN"):
        sys.stderr.write("Failed to connect to bus: No medium found\n")
        sys.exit(1)
    print("HOME=" + os.environ.get("HOME", ""))
elif args[1] == "enable":
    unit = args[-1]
    if not os.path.exists(os.path.join(units, unit)):
        sys.stderr.write("Unit file %s does not exist.\n" % unit)
        sys.exit(1)
    os.makedirs(wants, exist_ok=True)
    link = os.path.join(wants, unit)
    if not os.path.lexists(link):
        os.symlink(os.path.join("..", unit), link)
elif args[1] == "disable":
    link = os.path.join(wants, args[-1])
    if os.path.lexists(link):
        os.remove(link)
'''

FAKE_LAUNCHCTL = r'''#!{python}
import json, os, plistlib, sys
with open(os.environ["FAKE_TOOL_LOG"], "a") as f:
    f.write("launchctl " + " ".join(sys.argv[1:]) + "\n")
state = os.environ["FAKE_LAUNCHD_STATE"]
loaded = json.load(open(state)) if os.path.exists(state) else []
cmd = sys.argv[1]
if cmd == "bootstrap":
    label = plistlib.load(open(sys.argv[3], "rb"))["Label"]
    if label in loaded:
        sys.stderr.write("Bootstrap failed: 5: Input/output error\n")
        sys.exit(5)
    loaded.append(label)
elif cmd == "bootout":
    label = sys.argv[2].split("/", 2)[2]
    if label not in loaded:
        sys.stderr.write("Boot-out failed: 3: No such process\n")
        sys.exit(3)
    loaded.remove(label)
json.dump(loaded, open(state, "w"))
'''


SYSTEM_TOOLS = ("sh", "git", "env", "cat", "sleep")


@dataclass
class Fakes:
    bin: Path
    crontab: Path  # the fake crontab's state file
    tool_log: Path
    night_log: Path
    units: Path
    agents: Path
    launchd_state: Path

    def crontab_calls(self) -> list[str]:
        calls = self.crontab.with_name(self.crontab.name + ".calls")
        return calls.read_text().splitlines() if calls.exists() else []

    def tool_calls(self) -> list[str]:
        return self.tool_log.read_text().splitlines() if self.tool_log.exists() else []

    def nights(self) -> list[dict]:
        if not self.night_log.exists():
            return []
        return [json.loads(line) for line in self.night_log.read_text().splitlines() if line.strip()]


def write_script(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    path.chmod(0o755)
    return path


def fake_night(path: Path, fixed_log: Path) -> Path:
    return write_script(path, FAKE_NIGHT.format(python=sys.executable, fixed_log=str(fixed_log)))


def fake_tools(tmp_path: Path, monkeypatch, *, night: bool = True, cron: bool = True, systemd: bool = False,
               launchd: bool = False, cron_daemon: bool = True) -> Fakes:
    """Fakes first on PATH (``night``: a fake ``skillopt-sleep`` too), with their state in ``tmp_path``.

    PATH holds the fakes, this interpreter's folder and links to a few real tools
    (:data:`SYSTEM_TOOLS`), so a real crontab, systemctl or launchctl is never reached:
    a tool that is not faked is absent."""
    bin_dir = tmp_path / "fakebin"
    bin_dir.mkdir(exist_ok=True)
    f = Fakes(bin=bin_dir, crontab=tmp_path / "crontab.txt", tool_log=tmp_path / "tools.log",
              night_log=tmp_path / "nights.jsonl", units=tmp_path / "config" / "systemd" / "user",
              agents=tmp_path / "Library" / "LaunchAgents",
              launchd_state=tmp_path / "launchd.json")
    if night:
        fake_night(bin_dir / "skillopt-sleep", f.night_log)
    if cron:
        write_script(bin_dir / "crontab", FAKE_CRONTAB.format(python=sys.executable))
    if systemd:
        write_script(bin_dir / "systemctl", FAKE_SYSTEMCTL.format(python=sys.executable))
    if launchd:
        write_script(bin_dir / "launchctl", FAKE_LAUNCHCTL.format(python=sys.executable))
    sys_bin = tmp_path / "sysbin"  # only the real tools the code under test may use
    sys_bin.mkdir(exist_ok=True)
    for tool in SYSTEM_TOOLS:
        found = shutil.which(tool)
        if found and not (sys_bin / tool).exists():
            (sys_bin / tool).symlink_to(found)
    monkeypatch.setenv("PATH", os.pathsep.join([str(bin_dir), str(Path(sys.executable).parent), str(sys_bin)]))
    # The private homes live under long temporary paths; carried into every entry they would
    # pass cron's 1000-byte line limit. HOME stays private, so the hosts' defaults are too.
    for name in ("CLAUDE_CONFIG_DIR", "CODEX_HOME", "COPILOT_HOME", "SKILLOPT_REPLAY_ROOT", "SKILLOPT_CACHE_DIR"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("FAKE_CRONTAB_FILE", str(f.crontab))
    monkeypatch.setenv("FAKE_TOOL_LOG", str(f.tool_log))
    monkeypatch.setenv("FAKE_NIGHT_LOG", str(f.night_log))
    monkeypatch.setenv("FAKE_LAUNCHD_STATE", str(f.launchd_state))
    monkeypatch.setenv("SKILLOPT_SYSTEMD_USER_DIR", str(f.units))
    monkeypatch.setenv("SKILLOPT_LAUNCHD_DIR", str(f.agents))
    # The process table the cron mode looks in for a running daemon (``cron_daemon``: one runs).
    proc = tmp_path / "proc"
    for pid, name in (("1", "init"), ("42", "cron" if cron_daemon else "sshd")):
        (proc / pid).mkdir(parents=True, exist_ok=True)
        (proc / pid / "comm").write_text(name + "\n")
    monkeypatch.setenv("SKILLOPT_PROC_DIR", str(proc))
    return f


def tree(root: Path) -> dict[str, bytes | str]:
    """Every file (bytes), symlink (target) and folder ("<dir>") under ``root``: for byte-for-byte checks."""
    out: dict[str, bytes | str] = {}
    if not root.exists():
        return out
    for dirpath, dirs, files in os.walk(root):
        for d in dirs:
            p = Path(dirpath) / d
            out[str(p.relative_to(root))] = "<link " + os.readlink(p) + ">" if p.is_symlink() else "<dir>"
        for name in files:
            p = Path(dirpath) / name
            out[str(p.relative_to(root))] = "<link " + os.readlink(p) + ">" if p.is_symlink() else p.read_bytes()
    return out

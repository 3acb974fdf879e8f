"""Each subcommand module registers itself into the parser it is given (sleep.commands); none
imports sleep.cli back, so `python -m sleep.cli` and `python -m sleep` load the command line once."""

from __future__ import annotations

import subprocess
import sys

from sleep.cli import COMMAND_MODULES, build_parser


def _run(*code: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, *code], capture_output=True, text=True, timeout=120)


def test_no_command_module_imports_the_command_line_back() -> None:
    script = ("import importlib, sys\n"
              f"for name in {list(COMMAND_MODULES)!r}:\n"
              "    importlib.import_module(name)\n"
              "print('sleep.cli' in sys.modules)\n")
    done = _run("-c", script)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "False"


def test_every_command_module_registers_what_it_defines() -> None:
    names = set(build_parser()._subparsers._group_actions[0].choices)  # type: ignore[union-attr]
    assert {"harvest", "sessions", "mcp", "propose", "review", "adopt", "reject", "mine", "tasks", "ui", "run",
            "history", "demo", "schedule", "status", "hook", "integrate", "doctor", "completion"} <= names


def test_python_dash_m_works_both_ways() -> None:
    for entry in (("-m", "sleep"), ("-m", "sleep.cli")):
        done = _run(*entry, "--help")
        assert done.returncode == 0, done.stderr
        assert "harvest" in done.stdout and "doctor" in done.stdout
    done = _run("-m", "sleep", "completion", "bash")
    assert done.returncode == 0, done.stderr
    assert "complete -o default -F _skillopt_sleep skillopt-sleep" in done.stdout and "--all-projects" in done.stdout


def test_the_moved_packages_hold_the_harvest_and_the_redaction() -> None:
    import sleep.redact
    from sleep.harvest.harvester import harvest

    assert harvest.__module__ == "sleep.harvest.harvester"
    assert sleep.redact.Redactor.__module__ == "sleep.redact.redactor"
    old = ("reader", "sources", "secret_rules", "read_offsets", "harvest_pool", "known_secrets")
    for gone in (f"sleep.{name}" for name in old):
        done = _run("-c", f"import {gone}")
        assert done.returncode != 0 and "ModuleNotFoundError" in done.stderr, gone

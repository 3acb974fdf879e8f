"""Tool errors say what was wrong and what to do: a path component too long for
the file system, any OSError or ValueError from bad input, and arguments that
fail the input schema (the field and what it accepts, no pydantic URL). The
real server over stdio and the SDK's client."""

from __future__ import annotations

import errno
from pathlib import Path

import pytest
from mcp_testutil import call, call_error, connect, scripted_config

pytestmark = pytest.mark.timeout(300)

LONG = "a" * 300

# Every tool that takes a path or a folder, with the argument that carries it.
PATH_TOOLS = [
    ("train_skill", {"config_path": f"{LONG}/config.yaml"}, "config_path"),
    ("train_skill", {"resume": f"/tmp/{LONG}/r1"}, None),
    ("evaluate_skill", {"config_path": f"{LONG}/x.yaml"}, "config_path"),
    ("evaluate_skill", {"config_path": "config.yaml", "skill_path": f"{LONG}/SKILL.md"}, "skill_path"),
    ("get_run", {"run": f"/tmp/{LONG}/env/r1"}, None),
    ("sleep_harvest", {"project": LONG}, "project"),
    ("sleep_run", {"project": LONG}, "project"),
    ("sleep_status", {"project": LONG}, "project"),
    ("list_proposals", {"project": LONG}, "project"),
    ("schedule_sleep", {"project": LONG, "dry_run": True}, "project"),
    ("unschedule_sleep", {"project": LONG}, "project"),
    ("list_tasks", {"project": LONG}, "project"),
]


@pytest.mark.parametrize("tool,args,field", PATH_TOOLS, ids=[f"{t}-{next(iter(a))}" for t, a, _ in PATH_TOOLS])
async def test_a_path_component_over_255_bytes_says_what_and_what_to_do(tmp_path: Path, tool: str, args: dict,
                                                                       field: str | None) -> None:
    scripted_config(tmp_path)
    async with connect(cwd=tmp_path) as client:
        message = await call_error(client, tool, args)
        await call(client, "job_status")  # still serving
    assert message != f"Error executing tool {tool}", message
    if field is not None:
        assert message.startswith(f"Error executing tool {tool}: {field}: the path component 'aaaaaaaaaaaaaaaaaaaaaaaa'"
                                  f"... is 300 bytes long; a file or folder name holds at most 255. Give a shorter "
                                  "path."), message
    else:
        assert "255" in message and "shorter path" in message, message


@pytest.mark.parametrize("exc,expected", [
    (OSError(errno.EACCES, "Permission denied", "/srv/x"),
     "permission denied (/srv/x); give a path you can read and write, or fix its permissions."),
    (OSError(errno.ENOSPC, "No space left on device", "/data"),
     "the disk is full (/data); free some space and try again. Nothing was changed."),
    (OSError(errno.ELOOP, "Too many levels of symbolic links", "/a/b"),
     "Too many levels of symbolic links (/a/b); check the path and try again."),
    (UnicodeDecodeError("utf-8", b"\xff", 0, 1, "invalid start byte"),
     "'utf-8' codec can't decode byte 0xff in position 0: invalid start byte; check the arguments and try again."),
])
def test_an_os_or_value_error_from_bad_input_is_explained(exc: BaseException, expected: str) -> None:
    from sleep.mcp.errors import explain_exception

    assert explain_exception(exc) == expected


def test_any_other_exception_stays_a_crash() -> None:
    from sleep.mcp.errors import explain_exception

    assert explain_exception(RuntimeError("internal detail")) is None


@pytest.mark.parametrize("tool,args,expected", [
    ("evaluate_skill", {"config_path": "x.yaml", "split": "nope"},
     "invalid arguments: split: Input should be 'test', 'val' or 'train' (got 'nope'); accepted: one of 'test', "
     "'val', 'train'. The tool's arguments are: config_path, skill_path, split, overrides, wait_seconds."),
    ("train_skill", {"config_path": "x.yaml", "wait_seconds": -1},
     "invalid arguments: wait_seconds: Input should be greater than or equal to 0 (got -1); accepted: a number "
     "from 0 to 1800. The tool's arguments are: config_path, overrides, resume, wait_seconds."),
    ("job_status", {"job_id": "../../etc"},
     "invalid arguments: job_id: String should match pattern '^\\d{8}-\\d{6}-[0-9a-f]{6}$' (got '../../etc'); "
     "accepted: text matching ^\\d{8}-\\d{6}-[0-9a-f]{6}$ or null. The tool's arguments are: job_id, "
     "wait_seconds."),
    ("set_task_enabled", {"task_id": "t00000000000"},
     "invalid arguments: enabled is required; accepted: true or false. The tool's arguments are: task_id, "
     "enabled."),
    ("list_runs", {"limit": "many"},
     "invalid arguments: limit: Input should be a valid integer, unable to parse string as an integer (got "
     "'many'); accepted: a whole number from 1 to 500. The tool's arguments are: env, limit."),
])
async def test_a_schema_error_names_the_field_and_what_it_accepts(tmp_path: Path, tool: str, args: dict,
                                                                  expected: str) -> None:
    async with connect(cwd=tmp_path) as client:
        message = await call_error(client, tool, args)
    assert message == f"Error executing tool {tool}: {expected}"
    assert "pydantic" not in message and "https://" not in message

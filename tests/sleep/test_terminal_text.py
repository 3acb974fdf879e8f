"""Issue 35 §7: transcript text printed to a terminal carries no control sequences.

A prompt can hold a title change (OSC 0), a clipboard write (OSC 52), cursor moves and
erasures (CSI), 8-bit C1 forms of them: every printer passes it through
``sleep.terminal_text.clean``; newlines and tabs stay.
"""

from __future__ import annotations

import json
import re

import pytest
import sleep_builders as b
from mine_testutil import run, session, store, turn
from sleep_testutil import Homes

from sleep.cli import main
from sleep.proposals.textdiff import unified
from sleep.terminal_text import clean, json_text

CWD = "/work/app"
# Title change, clipboard write (both terminators), screen erase, colour, 8-bit CSI and OSC 8,
# a reset, a backspace over a word, a bare CR that rewrites the line.
HOSTILE = ("run the \x1b]0;pwned\x07unit tests\x1b]52;c;cm0gLXJmIH4=\x1b\\ and \x1b[2J\x1b[31mlist\x1b[0m "
           "the \x9b1;1H\x9d8;;http://evil\x9cfailures\x1bc\x08\x07\r")
# The same sequences around a prompt the miner groups as one task.
HOSTILE_TASK = ("\x1b]0;pwned\x07run the unit tests \x1b]52;c;cm0gLXJmIH4=\x1b\\and list the failures"
                "\x1b[2J\x9b1;1H\x9d8;;http://evil\x9c now\x1bc")
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


@pytest.mark.parametrize("text,expected", [
    ("\x1b]0;title\x07ok", "ok"),
    ("\x1b]52;c;ZXZpbA==\x1b\\ok", "ok"),
    ("\x1b]2;unterminated title", ""),
    ("a\x1b[2Jb\x1b[1;31mc\x1b[0m", "abc"),
    ("\x9b2Jx\x9d0;t\x9cy", "xy"),
    ("\x1bPq#0;2;0;0;0\x1b\\z", "z"),
    ("keep\ttabs\nand newlines", "keep\ttabs\nand newlines"),
    ("bs\x08 bell\x07 cr\r ff\x0c del\x7f nul\x00", "bs bell cr ff del nul"),
    ("\x1bc\x1b(0\x1b7reset", "reset"),
    ("cut short \x1b[12", "cut short "),
    ("naïve — 東京 ✓", "naïve — 東京 ✓"),
])
def test_clean_removes_every_control_sequence_and_keeps_text(text: str, expected: str) -> None:
    assert clean(text) == expected


def test_json_text_escapes_what_json_dumps_leaves_raw() -> None:
    dumped = json.dumps({"p": "a\x9b31mb\x7f\x1b"}, ensure_ascii=False)
    safe = json_text(dumped)
    assert _CONTROL.search(safe) is None and json.loads(safe) == json.loads(dumped)


def test_a_coloured_diff_keeps_only_its_own_colours() -> None:
    diff = unified("old line\n", "new \x1b]52;c;eA==\x07line\x1b[2J\n", "a/SKILL.md", "b/SKILL.md", color=True)
    assert "\x1b]" not in diff and "\x1b[2J" not in diff and "\x07" not in diff
    assert "\x1b[32m+new line\x1b[m" in diff  # ours


def _claude(homes: Homes, sid: str, prompt: str, t: float) -> None:
    b.write_jsonl(b.claude_session_path(homes.claude, CWD, sid), [
        b.claude_user(prompt, sid=sid, cwd=CWD, t=t),
        b.claude_assistant([b.text("3 tests fail.")], sid=sid, cwd=CWD, msg_id=f"m-{sid}", t=t + 1)])


def _printed(capsys) -> str:
    captured = capsys.readouterr()
    return captured.out + captured.err


def test_sessions_prints_no_control_sequence(homes: Homes, capsys) -> None:
    for i in range(2):
        _claude(homes, b.uid(f"c{i}"), HOSTILE, i * 86400)
    assert main(["harvest", "--all-projects"]) == 0
    capsys.readouterr()
    assert main(["sessions", "--all-projects"]) == 0
    out = _printed(capsys)
    assert "run the unit tests" in out and _CONTROL.search(out) is None, repr(out)


def test_tasks_list_show_and_json_print_no_control_sequence(homes: Homes, capsys) -> None:
    store(session("a", turn(HOSTILE_TASK, ["pytest -q"])), session("b", turn(HOSTILE_TASK, ["pytest -q"]), day=2))
    run()
    capsys.readouterr()
    assert main(["tasks", "--all-projects"]) == 0
    out = _printed(capsys)
    assert "unit tests" in out and _CONTROL.search(out) is None, repr(out)
    assert main(["tasks", "--all-projects", "--json"]) == 0
    listed = capsys.readouterr().out
    assert _CONTROL.search(listed) is None
    tid = json.loads(listed)[0]["id"]
    assert main(["tasks", "show", tid]) == 0
    out = _printed(capsys)
    assert "prompt:" in out and "unit tests" in out and _CONTROL.search(out) is None, repr(out)


def test_the_nights_console_prints_lines_and_text_objects_clean() -> None:
    import io

    from rich.text import Text

    from skillopt_core.cli.console import plain_console
    from sleep.terminal_text import safe_console

    buf = io.StringIO()
    console = safe_console(plain_console(file=buf))
    console.print(HOSTILE_TASK)
    console.print(Text("step 1: " + HOSTILE_TASK, style="bold"))
    out = buf.getvalue()
    # (rich's Text drops a BEL itself, which leaves the OSC before it unterminated up to the next
    # escape: what it held is dropped with it, and nothing reaches the terminal as a control.)
    assert out.count("and list the failures now") == 2 and _CONTROL.search(out) is None, repr(out)

"""Hostile project paths in every OS entry parse back to exactly the intended argv,
or are refused with a message: the cron line through cron's ``%`` rule and a real
``/bin/sh``; the systemd unit through systemd's quoting rules (and, where installed,
``systemd-analyze verify``); the launchd plist through an XML plist parser."""

from __future__ import annotations

import json
import re
import os
import plistlib
import shutil
import subprocess
import threading
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sched_testutil import fake_night

from sleep.scheduler.entries import Entry, cron, launchd, systemd
from sleep.scheduler.nightproc import NightRunner
from sleep.scheduler.model import NightCommand, ScheduleError, UnrepresentablePath, project_key

HOSTILE = [
    "/home/me/my project",
    "/home/me/it's \"quoted\"",
    "/home/me/$(touch pwned)/`touch pwned2`",
    "/home/me/100% done %s %%",
    "/home/me/a;b && c | d > e",
    "/home/me/back\\slash\\%pct\\'",
    "/home/me/tab\there",
    "/home/me/ünïcødé/日本語/🙂",
    "/home/me/-rf --project",
    "/home/me/${HOME}/$HOME/$$",
    "/home/me/star*?[x]~",
    "/home/me/new\nline",
    "/home/me/cr\rreturn",
    "/home/me/\x1b[31mred",
]


def command_for(project: str, exe: str, env: dict[str, str] | None = None) -> NightCommand:
    env = env or {"PATH": "/usr/bin:/bin", "SKILLOPT_HOME": "/data/skill opt %h $x"}
    return NightCommand(argv=(exe, "run", "--project", project), env=tuple(sorted(env.items())),
                        log=str(Path(exe).parent / "night 100%.log"))


def entry_for(project: str, exe: str, env: dict[str, str] | None = None) -> Entry:
    return Entry(key=project_key(project), project=project, at="03:17", command=command_for(project, exe, env))


# ----- cron: cron's % rule, then a real /bin/sh -------------------------------------------

def cron_split(command: str) -> tuple[str, str]:
    """What cron hands to the shell, and to stdin (vixie cron / cronie): ``\\%`` is a
    literal ``%`` (the backslash dropped), any other backslash is kept, and the first
    unescaped ``%`` ends the command (the rest, newlines for ``%``, is stdin)."""
    out: list[str] = []
    escaped = False
    for i, ch in enumerate(command):
        if escaped:
            if ch == "%":
                out[-1] = "%"
            else:
                out.append(ch)
            escaped = False
            continue
        if ch == "\\":
            escaped = True
        elif ch == "%":
            return "".join(out), command[i + 1:].replace("%", "\n")
        out.append(ch)
    return "".join(out), ""


def run_cron_line(line: str, dump: Path) -> dict:
    fields = line.rstrip("\n").split(" ", 5)
    assert fields[:5] == ["17", "3", "*", "*", "*"], line
    shell_text, stdin = cron_split(fields[5])
    assert stdin == "", f"cron would feed {stdin!r} to the night's stdin"
    dump.unlink(missing_ok=True)
    # What cron gives a job: a bare environment and /bin/sh.
    env = {"HOME": os.environ["HOME"], "LOGNAME": "tester", "SHELL": "/bin/sh", "PATH": "/usr/bin:/bin"}
    subprocess.run(["/bin/sh", "-c", shell_text], env=env, check=True, timeout=30)
    records = [json.loads(x) for x in dump.read_text().splitlines()]
    assert [r["event"] for r in records] == ["start", "end"]
    return records[0]


@pytest.fixture
def exe(tmp_path: Path) -> tuple[Path, Path]:
    """A fake night in a folder whose name is hostile too; it records its argv and env."""
    dump = tmp_path / "dump.jsonl"
    return fake_night(tmp_path / "bin dir 'q' $(x) %p `y`" / "skillopt-sleep", dump), dump


@pytest.mark.parametrize("project", [p for p in HOSTILE if "\n" not in p and "\r" not in p])
def test_cron_line_parses_back_to_the_exact_argv_and_env(project: str, exe, monkeypatch) -> None:
    monkeypatch.delenv("FAKE_NIGHT_LOG", raising=False)
    path, dump = exe
    env = {"PATH": "/usr/bin:/bin:/opt/100%/b'in", "SKILLOPT_HOME": "/data/skill opt %h $x"}
    comment, line = cron.entry_lines(entry_for(project, str(path), env))
    got = run_cron_line(line, dump)
    assert got["argv"] == [str(path), "run", "--project", project]
    assert got["env"] == env
    assert json.loads(comment.split(": ", 1)[1]) == project
    assert (path.parent / "night 100%.log").exists()  # the output went where the entry says


@pytest.mark.parametrize("project", ["/home/me/new\nline", "/home/me/cr\rreturn"])
def test_cron_refuses_a_path_with_a_line_break(project: str, exe) -> None:
    with pytest.raises(UnrepresentablePath) as err:
        cron.entry_lines(entry_for(project, str(exe[0])))
    message = str(err.value)
    assert "the project path" in message and "a crontab line cannot hold" in message
    assert "Nothing was installed" in message and "use another --mode" in message


def test_cron_refuses_an_entry_longer_than_cron_reads(exe) -> None:
    with pytest.raises(ScheduleError, match="more than cron reads"):
        cron.entry_lines(entry_for("/p", str(exe[0]), {"PATH": "/x" * 600}))


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(name=st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00/"), min_size=1,
                    max_size=40))
def test_any_cron_path_is_refused_or_parses_back(name: str, exe, monkeypatch) -> None:
    monkeypatch.delenv("FAKE_NIGHT_LOG", raising=False)
    path, dump = exe
    project = "/home/me/" + name
    try:
        _, line = cron.entry_lines(entry_for(project, str(path)))
    except UnrepresentablePath:
        assert "\n" in project or "\r" in project
        return
    assert run_cron_line(line, dump)["argv"] == [str(path), "run", "--project", project]


# ----- systemd: its quoting rules (systemd.syntax, systemd.service) ------------------------

_SIMPLE = {"a": "\a", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t", "v": "\v", "\\": "\\", '"': '"',
           "'": "'", "s": " "}


def systemd_words(value: str) -> list[str]:
    """Split a unit-file value the way systemd does for ExecStart= and Environment=:
    whitespace-separated words, single or double quotes, C escapes; then ``%%`` is a
    specifier for ``%`` (any other ``%x`` would expand: rejected here)."""
    words: list[str] = []
    i, n = 0, len(value)
    while i < n:
        while i < n and value[i] in " \t\n":
            i += 1
        if i >= n:
            break
        word, quote = [], None
        while i < n and (quote or value[i] not in " \t\n"):
            ch = value[i]
            if ch == "\\":
                nxt = value[i + 1]
                if nxt in _SIMPLE:
                    word.append(_SIMPLE[nxt])
                    i += 2
                elif nxt == "x":
                    word.append(chr(int(value[i + 2:i + 4], 16)))
                    i += 4
                else:
                    raise AssertionError(f"an escape systemd would not read as intended: {value[i:i + 4]!r}")
                continue
            if quote and ch == quote:
                quote = None
            elif not quote and ch in "\"'":
                quote = ch
            else:
                word.append(ch)
            i += 1
        assert quote is None, f"unterminated quote in {value!r}"
        text = "".join(word)
        out, j = [], 0
        while j < len(text):
            if text[j] == "%":
                assert text[j + 1:j + 2] == "%", f"a specifier would expand in {text!r}"
                out.append("%")
                j += 2
            else:
                out.append(text[j])
                j += 1
        words.append("".join(out))
    return words


def exec_argv(value: str) -> list[str]:
    """ExecStart= at run time: ``$$`` is ``$``; a lone ``$`` would expand a variable (rejected)."""
    out = []
    for word in systemd_words(value):
        assert "$" not in word.replace("$$", ""), f"a variable would expand in {word!r}"
        out.append(word.replace("$$", "$"))
    return out


def unit_value(text: str, key: str) -> str:
    # systemd ends a line at "\n" only (Python's splitlines would also split at U+0085, U+2028...).
    values = [ln.split("=", 1)[1] for ln in text.split("\n") if ln.startswith(key + "=")]
    assert len(values) == 1, (key, values)
    return values[0]


@pytest.mark.parametrize("project", HOSTILE)
def test_systemd_unit_parses_back_to_the_exact_argv_and_env(project: str) -> None:
    env = {"PATH": "/usr/bin:/bin:/opt/100%/b'in", "SKILLOPT_HOME": "/data/skill \"opt\" %h $x \\ y"}
    exe = "/opt/my tools/it's/skillopt-sleep"
    service = systemd.service_text(entry_for(project, exe, env))
    assert exec_argv(unit_value(service, "ExecStart")) == [exe, "run", "--project", project]
    assert systemd_words(unit_value(service, "Environment")) == [f"{k}={v}" for k, v in sorted(env.items())]
    assert not any(ord(c) < 0x20 or ord(c) == 0x7F for c in service.replace("\n", "")), "a raw control character"


@given(name=st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00/"), min_size=1,
                    max_size=40))
@settings(max_examples=300, deadline=None)
def test_any_systemd_path_parses_back(name: str) -> None:
    project = "/home/me/" + name
    service = systemd.service_text(entry_for(project, "/usr/bin/skillopt-sleep"))
    assert exec_argv(unit_value(service, "ExecStart"))[3] == project


@pytest.mark.parametrize("exe", ["/opt/100%/skillopt-sleep", "/opt/$HOME/skillopt-sleep"])
def test_systemd_refuses_an_executable_it_could_expand(exe: str) -> None:
    with pytest.raises(UnrepresentablePath, match="the executable .* systemd may expand"):
        systemd.service_text(entry_for("/p", exe))


@pytest.mark.skipif(shutil.which("systemd-analyze") is None, reason="systemd-analyze is not installed here")
def test_systemd_analyze_accepts_the_units_for_hostile_paths(tmp_path: Path) -> None:
    exe = fake_night(tmp_path / "bin" / "skillopt-sleep", tmp_path / "x.jsonl")
    units = tmp_path / "units"
    units.mkdir()
    for project in HOSTILE:
        e = entry_for(project, str(exe))
        service, timer = systemd.names(e.key)
        (units / service).write_text(systemd.service_text(e))
        (units / timer).write_text(systemd.timer_text(e))
        proc = subprocess.run(["systemd-analyze", "verify", "--man=no", str(units / service), str(units / timer)],
                              capture_output=True, text=True, timeout=120)
        assert proc.returncode == 0 and "Ignoring" not in proc.stderr and "Invalid" not in proc.stderr, \
            (project, proc.stderr)


# ----- launchd: an XML property list, no shell ------------------------------------------

@pytest.mark.parametrize("project", [p for p in HOSTILE if "\r" not in p and "\x1b" not in p])
def test_launchd_plist_parses_back_to_the_exact_argv_and_env(project: str) -> None:
    env = {"PATH": "/usr/bin:/bin", "SKILLOPT_HOME": "/data/<&>\"'"}
    e = entry_for(project, "/opt/a b/skillopt-sleep", env)
    data = plistlib.loads(launchd.plist_text(e).encode())
    assert data["ProgramArguments"] == ["/opt/a b/skillopt-sleep", "run", "--project", project]
    assert data["EnvironmentVariables"] == env
    assert data["StartCalendarInterval"] == {"Hour": 3, "Minute": 17}
    assert data["Label"] == f"com.skillopt.sleep.{e.key}"


@pytest.mark.parametrize("project,char", [("/home/me/cr\rreturn", "U+000D"), ("/home/me/\x1b[31mred", "U+001B")])
def test_launchd_refuses_what_a_plist_cannot_hold(project: str, char: str) -> None:
    with pytest.raises(UnrepresentablePath, match=f"the project path .* contains {re.escape(char)}"):
        launchd.plist_text(entry_for(project, "/opt/skillopt-sleep"))


@given(name=st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00/"), min_size=1,
                    max_size=40))
@settings(max_examples=300, deadline=None)
def test_any_launchd_path_is_refused_or_parses_back(name: str) -> None:
    project = "/home/me/" + name
    try:
        text = launchd.plist_text(entry_for(project, "/opt/skillopt-sleep"))
    except UnrepresentablePath:
        assert any(ord(c) < 0x20 and c not in "\t\n" or c in "\ufffe\uffff" for c in project)
        return
    assert plistlib.loads(text.encode())["ProgramArguments"][3] == project


def test_the_daemon_passes_the_argv_without_a_shell() -> None:
    """The daemon starts the night with an argv list (no shell): nothing to quote, nothing refused."""
    runner = NightRunner("/x/skillopt-sleep", threading.Event())
    assert runner.argv("/home/me/new\nline $(x)") == ["/x/skillopt-sleep", "run", "--project",
                                                      "/home/me/new\nline $(x)", "--json"]

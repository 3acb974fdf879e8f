"""`skillopt-sleep mine` and `tasks` on a home with Claude Code, Codex and Copilot sessions."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import sleep_builders as b
from mine_testutil import run, session, store, turn
from sleep_testutil import Homes
from sleep_testutil import run as harvest

from sleep.cli import main

CWD = "/work/app"
TASK = "run the unit tests and list the failures"
SECRET = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"


def _claude(homes: Homes, sid: str, prompt: str, t: float) -> None:
    b.write_jsonl(b.claude_session_path(homes.claude, CWD, sid), [
        b.claude_user(prompt, sid=sid, cwd=CWD, t=t),
        b.claude_assistant([b.text("3 tests fail.")], sid=sid, cwd=CWD, msg_id=f"m-{sid}", t=t + 1)])


def _codex(homes: Homes, sid: str, prompt: str, t: float) -> None:
    b.write_jsonl(b.codex_rollout_path(homes.codex, sid, t), [
        b.codex_meta(sid, CWD, t), *b.codex_user_turn(prompt, t + 1), *b.codex_assistant("3 tests fail.", t + 2)])


def _copilot(homes: Homes, sid: str, prompt: str, t: float) -> None:
    chat = b.vscode_workspace(homes.vscode_user, "ws1", CWD)
    (chat / f"{sid}.json").write_text(json.dumps(b.copilot_session(sid, [
        b.copilot_request(prompt, [b.md("3 tests fail.")], t, f"r-{sid}")], t, t + 5)))


def _home(homes: Homes) -> None:
    _claude(homes, b.uid("c1"), TASK, 0)
    _claude(homes, b.uid("c2"), f"{TASK}, use the token {SECRET} for the private registry", 86400)
    _codex(homes, b.uid("x1"), "pls run the unit tests and list the failures", 2 * 86400)
    _copilot(homes, "v1", "Run the unit tests and list the failures!", 3 * 86400)
    _claude(homes, b.uid("c3"), "explain how the cache warmer decides what to evict", 4 * 86400)


def _cli(*args: str) -> subprocess.CompletedProcess:
    code = "import sys; from sleep.cli import main; sys.exit(main(sys.argv[1:]))"
    return subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, env=os.environ)


def test_mine_then_tasks_json_on_a_home_with_every_host(homes: Homes) -> None:
    _home(homes)
    harvest()
    mined = _cli("mine", "--all-projects", "--json")
    assert mined.returncode == 0, mined.stderr
    assert json.loads(mined.stdout)["tasks_new"] == 1
    listed = _cli("tasks", "--all-projects", "--json")
    tasks = json.loads(listed.stdout)
    assert len(tasks) == 1
    task = tasks[0]
    assert {"id", "project", "intent", "support", "hosts", "first_seen", "last_seen", "enabled", "judge",
            "source_sessions"} <= set(task)
    assert task["support"] == 4 and task["hosts"] == ["claude-code", "codex", "copilot-vscode"]
    assert all(set(s) == {"host", "session_id", "prompt_index"} for s in task["source_sessions"])


def test_secrets_planted_in_prompts_never_reach_tasks_json(homes: Homes) -> None:
    _home(homes)
    harvest()
    assert main(["mine", "--all-projects"]) == 0
    out = _cli("tasks", "--all-projects", "--json").stdout
    assert SECRET not in out and SECRET[:12] not in out


def test_tasks_text_shows_intent_support_hosts_and_judge(homes: Homes, capsys) -> None:
    _home(homes)
    harvest()
    main(["mine", "--all-projects"])
    capsys.readouterr()
    assert main(["tasks", "--all-projects"]) == 0
    out = capsys.readouterr().out
    assert "support 4" in out and "claude-code, codex, copilot-vscode" in out and "judge: rubric" in out


def test_disable_and_enable_a_task(homes: Homes, capsys) -> None:
    store(session("a", turn(TASK, ["pytest -q"])), session("b", turn(TASK, ["pytest -q"])))
    run()
    main(["tasks", "--all-projects", "--json"])
    tid = json.loads(capsys.readouterr().out)[0]["id"]
    assert main(["tasks", "disable", tid]) == 0
    assert capsys.readouterr().out == f"Task {tid} disabled.\n"
    main(["tasks", "--all-projects", "--json"])
    assert json.loads(capsys.readouterr().out)[0]["enabled"] is False
    assert main(["tasks", "enable", tid]) == 0
    capsys.readouterr()
    main(["tasks", "--all-projects", "--json"])
    assert json.loads(capsys.readouterr().out)[0]["enabled"] is True


def test_disabling_an_unknown_task_exits_2_with_a_message(homes: Homes, capsys) -> None:
    store(session("a", turn(TASK)))
    run()
    assert main(["tasks", "disable", "t-nope"]) == 2
    assert "no task 't-nope'" in capsys.readouterr().err


def test_mine_without_an_index_exits_2(homes: Homes, capsys) -> None:
    assert main(["mine", "--all-projects"]) == 2
    assert "run `skillopt-sleep harvest` first" in capsys.readouterr().err


def test_mine_on_an_empty_index_exits_2(homes: Homes, capsys) -> None:
    harvest()
    assert main(["mine", "--all-projects"]) == 2
    assert "holds no sessions" in capsys.readouterr().err


def test_mine_in_a_project_without_sessions_exits_2(homes: Homes, capsys, tmp_path) -> None:
    store(session("a", turn(TASK)))
    assert main(["mine", "--project", str(tmp_path / "elsewhere")]) == 2
    assert "no harvested sessions for" in capsys.readouterr().err


def test_mine_defaults_to_the_current_directory(homes: Homes, capsys, monkeypatch, tmp_path) -> None:
    here = str(tmp_path / "proj")
    store(session("a", turn(TASK), project=here), session("b", turn(TASK), project=here),
          session("c", turn(TASK), project="/other"), session("d", turn(TASK), project="/other"))
    os.makedirs(here)
    monkeypatch.chdir(here)
    assert main(["mine", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["sessions_read"] == 2 and report["scope"] == f"project {here}"


def test_tasks_export_writes_a_jsonl_file(homes: Homes, capsys, tmp_path) -> None:
    store(session("a", turn(TASK)), session("b", turn(TASK)))
    run()
    out = tmp_path / "t.jsonl"
    assert main(["tasks", "export", "--project", "/home/dev/src/shop", "--out", str(out)]) == 0
    assert len(out.read_text().splitlines()) == 1


def test_a_bad_optimizer_exits_2(homes: Homes, capsys) -> None:
    store(session("a", turn(TASK)))
    assert main(["mine", "--all-projects", "--optimizer", "no-such-backend"]) == 2
    assert "cannot set up the optimizer" in capsys.readouterr().err


def test_skillopt_replays_are_never_mined(homes: Homes) -> None:
    replay_cwd = os.path.join(os.environ["SKILLOPT_REPLAY_ROOT"], "run-1")
    for n in range(2):
        sid = b.uid(f"replay-{n}")
        b.write_jsonl(b.claude_session_path(homes.claude, replay_cwd, sid), [
            b.claude_user(TASK, sid=sid, cwd=replay_cwd, t=n),
            b.claude_assistant([b.text("3 tests fail.")], sid=sid, cwd=replay_cwd, msg_id=f"r{n}", t=n + 1)])
    _claude(homes, b.uid("real-1"), TASK, 0)
    _claude(homes, b.uid("real-2"), TASK, 86400)
    harvest()
    assert main(["mine", "--all-projects"]) == 0
    from sleep.index import Index
    from sleep.mine import store as mine_store
    with Index.open() as index:
        tasks = mine_store.load_tasks(index.conn, None)
    assert [t.support for t in tasks] == [2] and tasks[0].project == CWD


def test_tasks_accept_an_id_prefix_and_show_one_task_in_words(homes: Homes, capsys) -> None:
    store(session("a", turn(TASK, ["pytest -q"])), session("b", turn(TASK, ["pytest -q"]), host="codex"))
    run()
    main(["tasks", "--all-projects", "--json"])
    tid = json.loads(capsys.readouterr().out)[0]["id"]
    assert main(["tasks", "disable", tid[:5]]) == 0
    assert capsys.readouterr().out == f"Task {tid} disabled.\n"
    assert main(["tasks", "show", tid[:6]]) == 0
    out = capsys.readouterr().out
    assert tid in out and TASK in out and "2 prompts in 2 sessions" in out and "claude-code, codex" in out
    assert "DISABLED" in out


def test_an_ambiguous_or_unknown_prefix_exits_2_naming_the_candidates(homes: Homes, capsys) -> None:
    store(session("a", turn(TASK, ["pytest -q"])), session("b", turn(TASK, ["pytest -q"])),
          session("c", turn("regenerate the openapi client", ["make openapi"])),
          session("d", turn("regenerate the openapi client", ["make openapi"])))
    run()
    assert main(["tasks", "show", "t"]) == 2
    err = capsys.readouterr().err
    assert "matches 2 tasks" in err and "run the unit tests" in err
    assert main(["tasks", "show", "tzzzz"]) == 2
    assert "no task 'tzzzz'" in capsys.readouterr().err


def test_the_task_list_shows_members_and_hosts(homes: Homes, capsys) -> None:
    store(session("a", turn(TASK, ["pytest -q"])), session("b", turn(TASK, ["pytest -q"]), host="codex"))
    run()
    assert main(["tasks", "--all-projects"]) == 0
    out = capsys.readouterr().out
    assert "2 prompts" in out and "claude-code, codex" in out

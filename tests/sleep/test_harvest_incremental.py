"""The cursor: nothing new reads nothing; appends, partial lines, truncation and rotation."""

from __future__ import annotations

import json
import multiprocessing
import os
import time

import sleep_builders as b
import pytest
from sleep_testutil import Homes, run

import sleep.harvest.harvester as harvest_mod
import sleep.harvest.pool as harvest_pool
from sleep.harvest.harvester import HarvestOptions, harvest
from sleep.index import Index
from sleep.lock import FileLock, LockBusy

CWD = "/work/app"


def _prompts(host: str, sid: str) -> list[str]:
    with Index.open() as idx:
        s = idx.get_session(host, sid)
    return [p.text for p in s.prompts] if s else []


def _no_reads(monkeypatch) -> None:
    def fail(*a, **k):
        raise AssertionError("file content was read")

    monkeypatch.setattr(harvest_pool, "open_binary", fail)
    monkeypatch.setattr(harvest_mod, "_read_head", fail)


def _all_hosts(homes: Homes) -> None:
    b.write_jsonl(b.claude_session_path(homes.claude, CWD, "s"), b.claude_basic_session("s", CWD))
    sid = b.uid("c")
    b.write_jsonl(b.codex_rollout_path(homes.codex, sid), b.codex_basic_session(sid, CWD))
    chat = b.vscode_workspace(homes.vscode_user, "w", CWD)
    (chat / "v.json").write_text(json.dumps(b.copilot_session("v", b.copilot_basic_requests())))
    b.write_jsonl(chat / "l.jsonl", b.copilot_log_lines(b.copilot_session("l", b.copilot_basic_requests())))
    b.write_jsonl(homes.copilot_cli / "session-state" / "c" / "events.jsonl", b.copilot_cli_session("c", CWD))
    b.write_jsonl(homes.claude / "history.jsonl", [{"display": "x", "timestamp": b.ms(0), "project": CWD}])


def test_second_harvest_with_nothing_new_reads_no_file_content(homes: Homes, monkeypatch) -> None:
    _all_hosts(homes)
    first = run()
    assert first.files_read == 6 and first.sessions_new == 5
    _no_reads(monkeypatch)
    second = run()
    assert (second.files_read, second.bytes_read, second.sessions_new, second.sessions_updated) == (0, 0, 0, 0)
    assert second.files_unchanged == 6


def test_appended_lines_are_picked_up_from_the_offset(homes: Homes) -> None:
    path = b.write_jsonl(b.claude_session_path(homes.claude, CWD, "s"), b.claude_basic_session("s", CWD))
    size = path.stat().st_size
    run()
    b.write_jsonl(path, [b.claude_user("now add a changelog entry", sid="s", cwd=CWD, t=20),
                         b.claude_assistant([b.text("Added it.")], sid="s", cwd=CWD, msg_id="m9", t=21)], mode="a")
    report = run()
    assert report.sessions_updated == 1 and report.sessions_new == 0
    assert report.bytes_read == path.stat().st_size - size
    with Index.open() as idx:
        s = idx.get_session("claude-code", "s")
    assert [p.text for p in s.prompts][-1] == "now add a changelog entry"
    assert s.finals[-1] == "Added it." and s.finals[0].startswith("The build is fixed")
    assert s.tools == {"Skill": 1, "Bash": 2}


def test_final_answer_completes_across_two_harvests(homes: Homes) -> None:
    path = b.write_jsonl(b.claude_session_path(homes.claude, CWD, "s"), [
        b.claude_user("Explain the cache", sid="s", cwd=CWD, t=0),
        b.claude_assistant([b.text("It is an LRU")], sid="s", cwd=CWD, msg_id="m1", t=1)])
    run()
    b.write_jsonl(path, [b.claude_assistant([b.text("keyed by path.")], sid="s", cwd=CWD, msg_id="m1", t=2)],
                  mode="a")
    run()
    with Index.open() as idx:
        assert idx.get_session("claude-code", "s").finals == ["It is an LRU\n\nkeyed by path."]


def test_partial_last_line_waits_for_the_next_run(homes: Homes) -> None:
    sid = b.uid("p")
    path = b.codex_rollout_path(homes.codex, sid)
    b.write_jsonl(path, [b.codex_meta(sid, CWD), *b.codex_user_turn("first", 1)])
    line = b.dumps(b.codex_user_turn("second", 2)[1]).encode()
    with open(path, "ab") as f:
        f.write(line[:20])
    first = run()
    assert first.skipped_lines == {"incomplete_last_line": 1}
    assert _prompts("codex", sid) == ["first"]
    with open(path, "ab") as f:
        f.write(line[20:] + b"\n")
    second = run()
    assert second.skipped == {} and second.sessions_updated == 1
    assert _prompts("codex", sid) == ["first", "second"]


def test_truncated_file_is_read_again_from_the_start(homes: Homes) -> None:
    path = b.write_jsonl(b.claude_session_path(homes.claude, CWD, "s"), b.claude_basic_session("s", CWD))
    run()
    b.write_jsonl(path, [b.claude_user("a fresh start", sid="s", cwd=CWD, t=0)])
    report = run()
    assert report.sources["claude-code"].rereads == {"truncated": 1}
    assert _prompts("claude-code", "s") == ["a fresh start"]


def test_rotated_file_is_read_again_from_the_start(homes: Homes) -> None:
    path = b.write_jsonl(b.claude_session_path(homes.claude, CWD, "s"), b.claude_basic_session("s", CWD))
    run()
    os.rename(path, path.with_suffix(".old"))
    lines = b.claude_basic_session("s", CWD) + [b.claude_user("rotated", sid="s", cwd=CWD, t=30)]
    b.write_jsonl(path, lines)
    report = run()
    assert report.sources["claude-code"].rereads == {"replaced": 1}
    assert _prompts("claude-code", "s")[-1] == "rotated" and len(_prompts("claude-code", "s")) == 3


def test_file_rewritten_with_same_inode_and_longer_content_is_read_again(homes: Homes) -> None:
    path = b.write_jsonl(b.claude_session_path(homes.claude, CWD, "s"),
                         [b.claude_user("one", sid="s", cwd=CWD, t=0)])
    run()
    b.write_jsonl(path, [b.claude_user("two", sid="s", cwd=CWD, t=0), b.claude_user("three", sid="s", cwd=CWD, t=1)])
    report = run()
    assert report.sources["claude-code"].rereads == {"rewritten": 1}
    assert _prompts("claude-code", "s") == ["two", "three"]


def test_changed_copilot_json_is_reread_whole(homes: Homes) -> None:
    chat = b.vscode_workspace(homes.vscode_user, "w", CWD)
    reqs = b.copilot_basic_requests()
    (chat / "v.json").write_text(json.dumps(b.copilot_session("v", reqs[:1])))
    run()
    (chat / "v.json").write_text(json.dumps(b.copilot_session("v", reqs)))
    report = run()
    assert report.sessions_updated == 1 and len(_prompts("copilot-vscode", "v")) == 2


def test_since_leaves_old_files_for_later(homes: Homes) -> None:
    path = b.write_jsonl(b.claude_session_path(homes.claude, CWD, "old"), b.claude_basic_session("old", CWD))
    old = time.time() - 10 * 86400
    os.utime(path, (old, old))
    b.write_jsonl(b.claude_session_path(homes.claude, CWD, "new"), b.claude_basic_session("new", CWD))
    report = run(since=harvest_mod.parse_duration("72h"))
    assert report.sessions_new == 1 and report.files_out_of_scope == 1
    assert run().sessions_new == 1  # the old one, once --since is dropped


def test_project_scope_harvests_only_that_project_and_leaves_others_unread(homes: Homes) -> None:
    b.write_jsonl(b.claude_session_path(homes.claude, CWD, "mine"), b.claude_basic_session("mine", CWD))
    b.write_jsonl(b.claude_session_path(homes.claude, "/work/other", "theirs"),
                  b.claude_basic_session("theirs", "/work/other"))
    a, c = b.uid("a"), b.uid("c")
    b.write_jsonl(b.codex_rollout_path(homes.codex, a), b.codex_basic_session(a, CWD + "/sub"))
    b.write_jsonl(b.codex_rollout_path(homes.codex, c, t=9), b.codex_basic_session(c, "/work/other"))
    scoped = run(project=CWD)
    assert scoped.sessions_new == 2 and scoped.files_out_of_scope == 2
    with Index.open() as idx:
        assert {s.project_dir for s in idx.sessions()} == {CWD, CWD + "/sub"}
    everything = run()
    assert everything.sessions_new == 2 and everything.files_read == 2


def _harvest_in_child(env: dict[str, str], queue) -> None:
    os.environ.update(env)
    try:
        r = harvest(HarvestOptions(project=None, wait=30))
        queue.put(("ok", r.sessions_new))
    except Exception as exc:  # pragma: no cover - reported to the parent
        queue.put(("error", repr(exc)))


def test_second_harvest_exits_with_a_message_while_one_runs(homes: Homes) -> None:
    b.write_jsonl(b.claude_session_path(homes.claude, CWD, "s"), b.claude_basic_session("s", CWD))
    held = FileLock(homes.skillopt / "harvest.lock").acquire()
    try:
        with pytest.raises(LockBusy, match="another harvest is already running"):
            run()
        from sleep.cli import main
        assert main(["harvest", "--all-projects"]) == 3
    finally:
        held.release()
    assert run().sessions_new == 1


def test_concurrent_harvests_store_each_session_once(homes: Homes) -> None:
    for i in range(30):
        b.write_jsonl(b.claude_session_path(homes.claude, CWD, f"s{i}"), b.claude_basic_session(f"s{i}", CWD))
    env = {k: os.environ[k] for k in ("HOME", "SKILLOPT_HOME", "CLAUDE_CONFIG_DIR", "CODEX_HOME", "COPILOT_HOME")}
    ctx = multiprocessing.get_context("spawn")
    queue = ctx.Queue()
    procs = [ctx.Process(target=_harvest_in_child, args=(env, queue)) for _ in range(2)]
    for p in procs:
        p.start()
    results = [queue.get(timeout=60) for _ in procs]
    for p in procs:
        p.join(timeout=60)
    assert all(kind == "ok" for kind, _ in results), results
    assert sorted(n for _, n in results) == [0, 30]
    with Index.open() as idx:
        assert idx.session_count() == 30

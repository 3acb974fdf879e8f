"""What genuine third-party transcripts showed (issue 22 §3), one test per finding.

Every fixture here is written by hand in the shape of a genuine record (field
names, nesting, escaping and order as the host writes them); no third-party
transcript data is copied. The shapes come from public transcripts and from
fixtures other projects captured from real files:

- Copilot CLI legacy ``history-session-state/<id>.json``: ``chatMessages`` (OpenAI
  chat shape; each user message ends in a ``<reminder>`` block) and ``timeline``
  entries ``{id, timestamp, type: user|copilot|tool_call_requested|tool_call_completed|info, text}``;
- Copilot CLI flat ``session-state/<id>.jsonl`` and ``events.jsonl`` 1.0.x: the
  ``{type, data, id, timestamp, parentId}`` envelope, ``system.message`` whose
  content names the working directory, ``user.message.content`` with a
  ``<current_datetime>`` block (docs: "transformedPrompt also contains
  runtime-generated context such as <current_datetime>");
- Codex 0.144–0.147 rollouts: ``ordinal`` after the timestamp, ``world_state``
  records, code-mode ``custom_tool_call`` named ``exec`` whose ``input`` is a
  script calling ``tools.exec_command({cmd: ...})`` / ``tools.apply_patch("...")``,
  ``request_user_input`` answered by ``{"answers": {"<id>": {"answers": [...]}}}``;
- Claude Code 2.x transcripts: per-record ``cwd``, slash-command skills followed by
  ``Base directory for this skill: ...``.
"""

from __future__ import annotations

import json

import sleep_builders as b
from sleep_testutil import Homes, run

from sleep.index import Index
from sleep.harvest.reader import ParseContext
from sleep.redact import Redactor
from sleep.shell_signature import shell_signatures
from sleep.harvest.sources import skills_in
from sleep.harvest.sources.code_mode import nested_calls
from sleep.harvest.sources.copilot_cli import CopilotCliSource


def _one(host: str, project: str | None = None):
    with Index.open() as idx:
        found = idx.sessions(host=host, project=project)
    assert len(found) == 1, found
    return found[0]


# ----- Copilot CLI -----------------------------------------------------------------------

_REMINDER = ("\n\n<reminder>You have the capability to call multiple tools in a single response. "
             "When multiple independent pieces of information are requested, batch your tool calls "
             "together for optimal performance.</reminder>")


def test_copilot_legacy_json_prompts_lose_the_reminder_and_take_timeline_times(homes: Homes) -> None:
    typed = "make the login page remember the last used email address please"
    doc = {
        "sessionId": "leg1", "startTime": b.ts(0),
        "chatMessages": [
            {"role": "system", "content": "You are GitHub Copilot CLI. Current working directory: /work/app\n"},
            {"role": "user", "content": typed + _REMINDER},
            {"role": "assistant", "content": "Done: the email is kept in localStorage."},
            {"role": "user", "content": "thanks" + _REMINDER},
            {"role": "assistant", "content": "You're welcome."},
        ],
        "timeline": [
            {"id": "t1", "timestamp": b.ts(5), "type": "user", "text": typed},
            {"id": "t2", "timestamp": b.ts(900), "type": "tool_call_completed", "toolTitle": "bash"},
            {"id": "t3", "timestamp": b.ts(1800), "type": "copilot", "text": "Done"},
            {"id": "t4", "timestamp": b.ts(3700), "type": "user", "text": "thanks"},
            {"id": "t5", "timestamp": b.ts(3710), "type": "copilot", "text": "You're welcome."},
        ],
    }
    path = homes.copilot_cli / "history-session-state" / "leg1.json"
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps(doc, indent=2))
    run()
    s = _one("copilot-cli")
    assert [p.text for p in s.prompts] == [typed, "thanks"]
    assert [p.at for p in s.prompts] == [b.ts(5), b.ts(3700)]
    assert (s.started_at, s.ended_at) == (b.ts(0), b.ts(3710))
    assert s.project_dir == "/work/app"


def _flat_events(sid: str, system: str, prompt: str) -> list[dict]:
    return [
        b.cli_event("session.start", {"sessionId": sid, "version": 1, "producer": "copilot-agent",
                                      "copilotVersion": "0.0.330", "startTime": b.ts(0)}, 0, 1),
        b.cli_event("system.message", {"content": system, "role": "system"}, 0.1, 2),
        b.cli_event("user.message", {"content": prompt, "attachments": []}, 1, 3),
        b.cli_event("assistant.message", {"messageId": "m1", "content": "", "toolRequests": [
            {"toolCallId": "c1", "name": "create",
             "arguments": {"path": "c:\\Users\\dev\\HAWZX-AI\\src\\app.ts", "file_text": "x"}}]}, 2, 4),
        b.cli_event("assistant.message", {"messageId": "m2", "content": "Created src/app.ts."}, 3, 5),
    ]


def test_copilot_flat_session_takes_its_project_from_the_system_message(homes: Homes) -> None:
    system = ("You are the GitHub Copilot CLI.\n<environment>\nOperating system: Windows\n"
              "Current working directory: c:\\Users\\dev\\HAWZX-AI\n</environment>")
    prompt = "scaffold the app\n\n<current_datetime>2026-03-01T10:00:00.000Z</current_datetime>"
    b.write_jsonl(homes.copilot_cli / "session-state" / "flat1.jsonl", _flat_events("flat1", system, prompt))
    report = run()
    s = _one("copilot-cli")
    assert s.project_dir == "c:\\Users\\dev\\HAWZX-AI"
    assert [p.text for p in s.prompts] == ["scaffold the app"]
    assert s.prompts[0].files == ["src/app.ts"]
    assert report.sources["copilot-cli"].sessions_new == 1
    # A project harvest finds it: its scope probe reads the system message too.
    src = CopilotCliSource()
    [file] = list(src.discover(ParseContext().stats))
    assert src.project_of(file, ParseContext()) == "c:\\Users\\dev\\HAWZX-AI"


def test_current_datetime_and_reminder_blocks_never_reach_a_prompt(homes: Homes) -> None:
    prompt = ("<current_datetime>2026-04-19T17:01:56.227Z</current_datetime>\n\n"
              "Find 3 independent pieces of suboptimal code" + _REMINDER)
    events = b.copilot_cli_session("ev1", "/work/web")
    events[1]["data"]["content"] = prompt
    b.write_jsonl(homes.copilot_cli / "session-state" / "ev1" / "events.jsonl", events)
    run()
    assert _one("copilot-cli").prompts[0].text == "Find 3 independent pieces of suboptimal code"


# ----- Codex -------------------------------------------------------------------------------

def _ordinal(rec: dict, n: int) -> dict:
    """A 0.14x line: ``ordinal`` right after the timestamp."""
    return {"timestamp": rec["timestamp"], "ordinal": n, **{k: v for k, v in rec.items() if k != "timestamp"}}


def _codex_0144(sid: str, cwd: str) -> list[dict]:
    script = ('const r = await tools.exec_command({cmd:"cd api && uv run pytest -q tests/", "workdir":"' + cwd + '"});\n'
              'text(r.output);\n'
              'text(await tools.apply_patch("*** Begin Patch\\n*** Update File: src/parser.py\\n@@\\n-a\\n+b\\n'
              '*** End Patch"));\n'
              "await tools.exec_command({cmd: 'git status --short', yield_time_ms: 1000});")
    recs = [
        b.codex_meta(sid, cwd, 0),
        b.codex_line("world_state", {"full": True, "state": {"environments": {"environments": {"local": {
            "cwd": cwd, "shell": "zsh"}}}}}, 0.2),
        b.codex_line("turn_context", {"turn_id": "t1", "cwd": cwd, "model": "gpt-5.5",
                                      "approval_policy": "never"}, 0.5),
        *b.codex_user_turn("fix the parser and run the tests", 1),
        b.codex_line("response_item", {"type": "custom_tool_call", "call_id": "c1", "name": "exec",
                                       "input": script, "status": "completed"}, 2),
        b.codex_line("response_item", {"type": "custom_tool_call_output", "call_id": "c1",
                                       "output": [{"type": "input_text", "text": "Script completed\n"}]}, 3),
        b.codex_line("response_item", {"type": "function_call", "name": "request_user_input", "call_id": "q1",
                                       "arguments": json.dumps({"questions": [{"id": "scope", "header": "Scope",
                                                                                "question": "Also fix the CLI?",
                                                                                "options": [{"label": "Yes"}]}]})}, 4),
        b.codex_line("response_item", {"type": "function_call_output", "call_id": "q1", "output": json.dumps(
            {"answers": {"scope": {"answers": ["no, only the parser module"]}}})}, 5),
        *b.codex_assistant("Fixed the parser; tests pass.", 6),
        b.codex_line("world_state", {"full": False, "state": {}}, 6.5),
        b.codex_line("turn_context", {"turn_id": "t2", "cwd": cwd, "model": "gpt-5.6-sol"}, 7),
        *b.codex_user_turn("now add a changelog entry", 8),
        *b.codex_assistant("Added it.", 9),
    ]
    return [_ordinal(r, n) for n, r in enumerate(recs)]


def test_codex_code_mode_exec_gives_shell_commands_and_files(homes: Homes) -> None:
    cwd = "/work/api"
    b.write_jsonl(b.codex_rollout_path(homes.codex, b.uid("cx144")), _codex_0144(b.uid("cx144"), cwd))
    report = run()
    s = _one("codex")
    assert s.prompts[0].shell == ["pytest -q", "git status"]
    assert s.prompts[0].files == ["src/parser.py"]
    assert s.tools.get("exec") == 1
    stats = report.to_dict()
    assert "unknown_record_type" not in stats["skipped_lines"]  # world_state is known


def test_codex_session_that_switched_models_keeps_every_model(homes: Homes) -> None:
    b.write_jsonl(b.codex_rollout_path(homes.codex, b.uid("cxm")), _codex_0144(b.uid("cxm"), "/work/api"))
    run()
    s = _one("codex")
    assert s.models == ["gpt-5.5", "gpt-5.6-sol"]
    assert s.model == "gpt-5.6-sol"


def test_codex_request_user_input_answers_are_feedback_on_the_turn(homes: Homes) -> None:
    b.write_jsonl(b.codex_rollout_path(homes.codex, b.uid("cxq")), _codex_0144(b.uid("cxq"), "/work/api"))
    run()
    s = _one("codex")
    assert [p.text for p in s.prompts] == ["fix the parser and run the tests", "now add a changelog entry"]
    [fb] = s.feedback
    assert (fb.kind, fb.text, fb.prompt_index) == ("correction", "no, only the parser module", 0)


def test_codex_turn_in_a_moved_cwd_belongs_to_that_project(homes: Homes) -> None:
    root, sub = "/work/mono", "/work/mono/services/billing"
    recs = [
        b.codex_meta(b.uid("mv"), root, 0),
        b.codex_line("turn_context", {"turn_id": "t1", "cwd": root, "model": "gpt-5.5"}, 0.5),
        *b.codex_user_turn("list the services", 1),
        *b.codex_assistant("There are three.", 2),
        b.codex_line("turn_context", {"turn_id": "t2", "cwd": sub, "model": "gpt-5.5"}, 3),
        *b.codex_user_turn("add an invoice endpoint", 4),
        *b.codex_call("apply_patch", json.dumps({"input": "*** Begin Patch\n*** Add File: api/invoice.py\n+x\n"
                                                          "*** End Patch", "workdir": sub}), "p1", "ok", 5),
        *b.codex_assistant("Added.", 6),
    ]
    b.write_jsonl(b.codex_rollout_path(homes.codex, b.uid("mv")), recs)
    run()
    whole = _one("codex")
    assert whole.project_dir == root and whole.prompts[1].project == sub
    assert whole.prompts[1].files == ["api/invoice.py"]  # relative to the turn's project
    moved = _one("codex", project=sub)
    assert moved.project_dir == sub
    assert [p.text for p in moved.prompts] == ["add an invoice endpoint"]


# ----- Claude Code -------------------------------------------------------------------------

def test_claude_turns_typed_in_a_sub_project_are_found_by_its_harvest(homes: Homes) -> None:
    root, sub = "/work/mono", "/work/mono/web"
    sid = b.uid("cc-move")
    recs = [b.claude_user("what is in this repo?", sid=sid, cwd=root, t=0),
            b.claude_assistant([b.text("Two apps.")], sid=sid, cwd=root, msg_id="m1", t=1)]
    for i in range(3):
        recs += [b.claude_user(f"fix web bug {i}", sid=sid, cwd=sub, t=10 + i * 10),
                 b.claude_assistant([b.text("Fixed."), b.tool_use(f"e{i}", "Edit", {"file_path": f"{sub}/app.ts"})],
                                    sid=sid, cwd=sub, msg_id=f"m{i + 2}", t=11 + i * 10)]
    b.write_jsonl(b.claude_session_path(homes.claude, root, sid), recs)
    report = run(project=sub)
    assert report.sources["claude-code"].sessions_new == 1
    s = _one("claude-code", project=sub)
    assert s.project_dir == sub
    assert [p.text for p in s.prompts] == ["fix web bug 0", "fix web bug 1", "fix web bug 2"]
    assert all(p.files == ["app.ts"] for p in s.prompts)


def test_claude_spaced_json_transcript_is_in_its_project_scope(homes: Homes) -> None:
    cwd = "/work/spaced"
    sid = b.uid("spaced")
    path = b.claude_session_path(homes.claude, cwd, sid)
    path.parent.mkdir(parents=True)
    with open(path, "w", encoding="utf-8") as f:
        for rec in b.claude_basic_session(sid, cwd):
            f.write(json.dumps(rec, separators=(", ", ": ")) + "\n")
    report = run(project=cwd)
    assert report.sources["claude-code"].sessions_new == 1
    assert _one("claude-code").project_dir == cwd


def test_claude_bom_and_lone_surrogate_lines_keep_their_prompt(homes: Homes) -> None:
    cwd = "/work/emoji"
    sid = b.uid("bom")
    first = b.dumps(b.claude_user("first prompt after a BOM", sid=sid, cwd=cwd, t=0))
    split = b.dumps(b.claude_user("ship it SPLIT", sid=sid, cwd=cwd, t=5)).replace("SPLIT", "\\ud83d")
    path = b.claude_session_path(homes.claude, cwd, sid)
    path.parent.mkdir(parents=True)
    path.write_bytes(b"\xef\xbb\xbf" + first.encode() + b"\n" + split.encode() + b"\n")
    report = run()
    s = _one("claude-code")
    assert [p.text for p in s.prompts] == ["first prompt after a BOM", "ship it \ufffd"]
    assert report.to_dict()["skipped_lines"] == {}


def test_claude_slash_command_skill_is_recorded_as_the_skill_used(homes: Homes) -> None:
    cwd = "/work/sol"
    sid = b.uid("slash")
    recs = [
        b.claude_user("<command-message>colosseum-copilot is running…</command-message>\n"
                      "<command-name>/colosseum-copilot</command-name>\n<command-args>audit</command-args>",
                      sid=sid, cwd=cwd, t=0),
        b.claude_user([b.text("Base directory for this skill: /home/dev/.claude/skills/colosseum-copilot\n\n"
                              "# Colosseum Copilot\nUse this skill to ...")], sid=sid, cwd=cwd, t=0.1, isMeta=True),
        b.claude_assistant([b.text("Audited.")], sid=sid, cwd=cwd, msg_id="m1", t=1),
    ]
    b.write_jsonl(b.claude_session_path(homes.claude, cwd, sid), recs)
    run()
    s = _one("claude-code")
    assert s.skills == {"colosseum-copilot": 1}
    assert s.commands == {"colosseum-copilot": 1}
    assert [p.text for p in s.prompts] == ["/colosseum-copilot audit"]


# ----- Windows -------------------------------------------------------------------------------

def test_json_escaped_windows_skill_path_is_matched() -> None:
    raw = json.dumps({"command": "Get-Content C:\\Users\\dev\\.agents\\skills\\apply-grant\\SKILL.md"})
    assert "\\\\skills\\\\apply-grant\\\\SKILL.md" in raw  # still JSON-escaped, as in a tool's argument string
    assert skills_in(raw) == ["apply-grant"]


def test_powershell_and_windows_path_signatures() -> None:
    assert shell_signatures("python backend\\app.py") == ["app.py"]
    assert shell_signatures("mkdir backend, frontend, docs -Force") == ["mkdir -Force"]
    assert shell_signatures("New-Item -ItemType Directory -Path src\\lib -Force") == ["New-Item -ItemType"]
    assert shell_signatures(".\\venv\\Scripts\\python.exe -m pytest -q") == ["pytest -q"]
    assert shell_signatures("echo a\\ b; ls -la") == ["ls -la"]  # POSIX escapes still work


def test_code_mode_script_reader() -> None:
    calls = nested_calls('const p = await tools.apply_patch(`*** Begin Patch\n*** Add File: made.txt\n+hi\n'
                         '*** End Patch`);\nawait tools.update_plan({plan: [{step: "x"}]});\n'
                         'await tools.exec_command({cmd: someVar});')
    assert calls == [("apply_patch", "*** Begin Patch\n*** Add File: made.txt\n+hi\n*** End Patch"),
                     ("update_plan", None), ("exec_command", None)]


# ----- redaction ------------------------------------------------------------------------------

_ADDRESSES = ["7xKXtg2CW87d97TXJSDpbD5jBkheTqA83TZRuJosgAsU", "9WzDXwBbmkg8ZTbNMqUxvQRAyrZzDsGYdLVL9zYtAWWM",
              "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v", "Es9vMFrzaCERmJfrF8H2Wg4tZ5CaVJX6Xc7qfTnXRtgv",
              "JUP6LkbZbjS1jKKwapdHNy74zcZ3tLUZoi5QNyVTaV4"]


def test_public_solana_addresses_and_program_ids_are_kept() -> None:
    r = Redactor()
    listed = "How many transactions did each of these make last week?\n" + "\n".join(f"- {a}" for a in _ADDRESSES)
    assert r.redact(listed) == listed
    program = _ADDRESSES[4]
    repeated = (f"Our program is {program}.\nDeploy {program} to devnet, then call {program} from the client;\n"
                f"log {program}\n{program} must be upgradeable\nfinally verify {program}")
    assert r.redact(repeated) == repeated
    assert r.total == 0


def test_a_base58_value_named_a_credential_is_still_redacted() -> None:
    r = Redactor()
    for line in (f"the program reads api key {_ADDRESSES[0]}", f"HELIUS_API_KEY={_ADDRESSES[1]}",
                 f"here it is: {_ADDRESSES[2]}"):
        assert _ADDRESSES[0][:8] not in r.redact(line) and _ADDRESSES[1][:8] not in r.redact(line)
        assert _ADDRESSES[2][:8] not in r.redact(line)


def test_placeholders_are_not_secrets() -> None:
    r = Redactor()
    for line in ("HELIUS_API_KEY=your_key", "export OPENROUTER_API_KEY=sk-ai-v1-your-key-here",
                 "OPENAI_API_KEY=sk-proj-xxxxxxxxxxxxxxxxxxxxxxxx", "api_key: YOUR_API_KEY_HERE",
                 "token=<paste-your-token>"):
        assert r.redact(line) == line, line
    assert r.redact("OPENAI_API_KEY=sk-proj-QGyf9r6E8duUfL14RnkrizjZcYb3XVJS") == "OPENAI_API_KEY=[REDACTED:openai-key]"

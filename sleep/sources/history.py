"""Typed-prompt history files: Claude Code's and Codex's ``history.jsonl``.

One line per prompt the person typed, kept by the host even after old
transcripts are cleaned up. Lines are stored (redacted) in the index's
``history_prompts`` table, apart from sessions, so that a prompt is never
counted twice as a session.
"""

from __future__ import annotations

from typing import BinaryIO

from skillopt_core.replay import is_replay_path, is_replay_prompt
from sleep.reader import LineReader, ParseContext
from sleep.sessions import HistoryPrompt, iso_utc
from sleep.sources import ParseResult, SourceFile


def parse_claude_history(file: SourceFile, f: BinaryIO, start: int, ctx: ParseContext) -> ParseResult:
    """``history.jsonl``: one ``{display, timestamp (ms), project, sessionId?}`` per typed prompt."""
    out: list[HistoryPrompt] = []
    reader = LineReader(f, start, ctx, file.path)
    for line in reader:
        rec = ctx.loads(line.data, f"{file.path}@{line.start}")
        if rec is None:
            continue
        text = rec.get("display")
        if not isinstance(text, str) or not text.strip():
            ctx.stats.ignored()
            continue
        project = rec.get("project") if isinstance(rec.get("project"), str) else None
        if is_replay_path(project) or is_replay_prompt(text):
            ctx.stats.skip_line("replay_history_line", f"{file.path}@{line.start}")
            continue
        ctx.stats.kept()
        out.append(HistoryPrompt("claude-code", ctx.redactor.redact(text), iso_utc(rec.get("timestamp")),
                                 project, rec.get("sessionId") if isinstance(rec.get("sessionId"), str) else None))
    return ParseResult(None, history=out, end_offset=reader.offset)


def parse_codex_history(file: SourceFile, f: BinaryIO, start: int, ctx: ParseContext) -> ParseResult:
    """``history.jsonl``: ``{session_id, ts (seconds), text}`` per typed prompt."""
    out: list[HistoryPrompt] = []
    reader = LineReader(f, start, ctx, file.path)
    for line in reader:
        where = f"{file.path}@{line.start}"
        rec = ctx.loads(line.data, where)
        if rec is None:
            continue
        text = rec.get("text")
        if not isinstance(text, str) or not text.strip():
            ctx.stats.ignored()
            continue
        if is_replay_prompt(text):
            ctx.stats.skip_line("replay_history_line", where)
            continue
        ctx.stats.kept()
        sid = rec.get("session_id")
        out.append(HistoryPrompt("codex", ctx.redactor.redact(text), iso_utc(rec.get("ts")), None,
                                 sid if isinstance(sid, str) else None))
    return ParseResult(None, history=out, end_offset=reader.offset)

"""Typed-prompt history files: Claude Code's and Codex's ``history.jsonl``.

One line per prompt the person typed, kept by the host even after old
transcripts are cleaned up. Lines are stored (redacted) in the index's
``history_prompts`` table, apart from sessions, so that a prompt is never
counted twice as a session.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, BinaryIO

from skillopt_core.replay import is_replay_path, is_replay_prompt
from sleep.harvest.reader import LineReader, ParseContext
from sleep.harvest.sources import ParseResult, SourceFile
from sleep.sessions import HistoryPrompt, iso_utc

# One record -> (typed text, raw time, project dir, session id); text not yet checked.
_Fields = Callable[[dict[str, Any]], tuple[Any, Any, str | None, str | None]]


def parse_claude_history(file: SourceFile, f: BinaryIO, start: int, ctx: ParseContext) -> ParseResult:
    """``history.jsonl``: one ``{display, timestamp (ms), project, sessionId?}`` per typed prompt."""
    return _parse_history("claude-code", file, f, start, ctx, lambda rec: (
        rec.get("display"), rec.get("timestamp"), _str(rec.get("project")), _str(rec.get("sessionId"))))


def parse_codex_history(file: SourceFile, f: BinaryIO, start: int, ctx: ParseContext) -> ParseResult:
    """``history.jsonl``: ``{session_id, ts (seconds), text}`` per typed prompt."""
    return _parse_history("codex", file, f, start, ctx, lambda rec: (
        rec.get("text"), rec.get("ts"), None, _str(rec.get("session_id"))))


def _parse_history(host: str, file: SourceFile, f: BinaryIO, start: int, ctx: ParseContext,
                   fields: _Fields) -> ParseResult:
    """Every new line with typed text becomes a redacted HistoryPrompt; a line from a
    replay (its project or its text) is skipped and counted as ``replay_history_line``."""
    out: list[HistoryPrompt] = []
    reader = LineReader(f, start, ctx, file.path)
    for line in reader:
        where = f"{file.path}@{line.start}"
        rec = ctx.loads(line.data, where)
        if rec is None:
            continue
        text, at, project, session_id = fields(rec)
        if not isinstance(text, str) or not text.strip():
            ctx.stats.ignored()
            continue
        if is_replay_path(project) or is_replay_prompt(text):
            ctx.stats.skip_line("replay_history_line", where)
            continue
        ctx.stats.kept()
        out.append(HistoryPrompt(host, ctx.redactor.redact(text), iso_utc(at), project, session_id))
    return ParseResult(None, history=out, end_offset=reader.offset)


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) else None

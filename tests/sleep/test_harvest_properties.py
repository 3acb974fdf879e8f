"""Property tests: random bytes and mutated valid lines never raise, and the counts add up."""

from __future__ import annotations

import io
import json

import sleep_builders as b
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sleep.harvest.reader import ParseContext
from sleep.redact import Redactor
from sleep.harvest.sources import SourceFile
from sleep.harvest.sources.claude_code import ClaudeCodeSource
from sleep.harvest.sources.codex import CodexSource
from sleep.harvest.sources.copilot_cli import CopilotCliSource
from sleep.harvest.sources.copilot_vscode import CopilotVSCodeSource

CWD = "/work/app"
SID = b.uid("prop")

# (source, file kind, incremental, valid lines of that format)
FORMATS = [
    (ClaudeCodeSource(), "session", True, [b.dumps(r) for r in b.claude_basic_session("p", CWD)]),
    (CodexSource(), "rollout", True, [b.dumps(r) for r in b.codex_basic_session(SID, CWD)]),
    (CopilotCliSource(), "events", True, [b.dumps(r) for r in b.copilot_cli_session("c", CWD)]),
    (CopilotVSCodeSource(user_dirs=[]), "jsonl", False,
     [b.dumps(r) for r in b.copilot_log_lines(b.copilot_session("v", b.copilot_basic_requests()))]),
    (CopilotVSCodeSource(user_dirs=[]), "json", False,
     [json.dumps(b.copilot_session("v", b.copilot_basic_requests()))]),
]
RELAXED = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _parse(fmt: int, data: bytes, max_line: int = 1 << 20) -> ParseContext:
    src, kind, incremental, _ = FORMATS[fmt]
    ctx = ParseContext(redactor=Redactor(use_detect_secrets=False), max_line_bytes=max_line)
    file = SourceFile(f"/virtual/{kind}", src.name, kind, incremental=incremental, session_id="x")
    result = src.parse(file, io.BytesIO(data), 0, None, ctx)
    assert 0 <= result.end_offset <= len(data)
    return ctx


@RELAXED
@given(fmt=st.integers(0, len(FORMATS) - 1), data=st.binary(max_size=4096))
def test_random_bytes_never_raise_and_counts_add_up(fmt: int, data: bytes) -> None:
    ctx = _parse(fmt, data)
    assert ctx.stats.counts_add_up()


_mutation = st.one_of(
    st.tuples(st.just("cut"), st.integers(0, 10_000), st.integers(1, 50)),
    st.tuples(st.just("insert"), st.integers(0, 10_000), st.binary(min_size=1, max_size=20)),
    st.tuples(st.just("flip"), st.integers(0, 10_000), st.integers(1, 255)),
    st.tuples(st.just("truncate"), st.integers(0, 10_000), st.just(0)),
)


def _mutate(line: bytes, op: tuple) -> bytes:
    kind, at, arg = op
    at = at % (len(line) + 1)
    if kind == "cut":
        return line[:at] + line[at + arg:]
    if kind == "insert":
        return line[:at] + arg + line[at:]
    if kind == "flip" and line:
        i = at % len(line)
        return line[:i] + bytes([line[i] ^ arg]) + line[i + 1:]
    return line[:at]


@RELAXED
@given(fmt=st.integers(0, len(FORMATS) - 1), data=st.data())
def test_mutated_valid_lines_never_raise_and_counts_add_up(fmt: int, data) -> None:
    lines = [line.encode() for line in FORMATS[fmt][3]]
    which = data.draw(st.lists(st.integers(0, len(lines) - 1), max_size=4))
    for i in which:
        lines[i] = _mutate(lines[i], data.draw(_mutation))
    blob = b"\n".join(lines) + (b"\n" if data.draw(st.booleans()) else b"")
    ctx = _parse(fmt, blob, max_line=data.draw(st.sampled_from([64, 1 << 20])))
    stats = ctx.stats
    assert stats.counts_add_up()


@RELAXED
@given(st.text(max_size=300))
def test_redaction_is_total_and_idempotent(text: str) -> None:
    r = Redactor(use_detect_secrets=False)
    once = r.redact(text)
    assert r.redact(once) == once

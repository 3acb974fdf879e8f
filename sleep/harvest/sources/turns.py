"""Building a Session turn by turn: what every source does the same way.

A turn opens with a prompt the person typed and closes at the next prompt (or
at the end of the read); its final answer is the last assistant text seen in
between, redacted only when the turn closes so that a streamed answer is
redacted once. :func:`open_turn` serves every source; :class:`LogParser` and
:func:`parse_log` serve the sources whose files are append-only line logs read
incrementally (Claude Code, Codex, Copilot CLI), where the parser's state must
carry over from one harvest to the next through ``Session.state``.
"""

from __future__ import annotations

from typing import BinaryIO

from skillopt_core.replay import is_replay_prompt
from sleep.feedback import classify_feedback
from sleep.harvest.reader import LineReader, ParseContext
from sleep.harvest.sources import ParseResult, SourceFile
from sleep.redact import Redactor
from sleep.sessions import Feedback, Session


def open_turn(s: Session, text: str, at: str | None, redactor: Redactor, *, follows_answer: bool,
              project: str | None = None) -> int:
    """Add the redacted prompt ``text`` as a new turn of ``s`` (typed in ``project``; None:
    the session's) and record the feedback it expresses (``follows_answer``: the agent
    answered the previous turn). Returns its index."""
    redacted = redactor.redact(text)
    idx = s.add_prompt(redacted, at, project)
    kind = classify_feedback(text, follows_agent_turn=follows_answer)
    if kind:
        s.feedback.append(Feedback(kind, redacted, at, idx))
    return idx


class LogParser:
    """Turn bookkeeping for a line-log source; subclasses implement :meth:`feed`.

    ``replay`` turns True as soon as the session shows it is a SkillOpt replay
    (its first prompt carries the marker, or a subclass finds a replay cwd);
    :func:`parse_log` then drops the session. ``answered`` and
    ``checked_replay`` persist in ``Session.state`` across incremental reads.
    """

    def __init__(self, session: Session, file: SourceFile, ctx: ParseContext) -> None:
        self.s = session
        self.file = file
        self.ctx = ctx
        self.replay = False
        st = session.state
        self.answered = bool(st.get("answered", False))
        self.checked_replay = bool(st.get("checked_replay", False))
        self.final_raw: str | None = None  # the open turn's answer, redacted at close
        # The working directory of the latest record, when the host records one per record
        # or per turn: the next prompt is typed there.
        self.cwd: str | None = st.get("cwd")

    def feed(self, data: bytes, where: str) -> None:
        """Take one complete line; count it exactly once in ``ctx.stats``."""
        raise NotImplementedError

    def _prompt(self, text: str, at: str | None) -> bool:
        """Close the open turn and open one for ``text``; False if ``text`` shows a replay."""
        if not self.checked_replay:
            self.checked_replay = True
            if is_replay_prompt(text):
                self.replay = True
                return False
        self._close_turn()
        open_turn(self.s, text, at, self.ctx.redactor, follows_answer=bool(self.s.prompts) and self.answered,
                  project=self.cwd)
        self.answered = False
        return True

    def _answer(self, text: str, at: str | None) -> None:
        """What the person answered to the agent's question (``request_user_input``):
        not a new turn, a signal about the open one, classified like a prompt
        (a correction, an approval) and otherwise kept as an ``answer``."""
        text = text.strip()
        if not text:
            return
        kind = classify_feedback(text, follows_agent_turn=True) or "answer"
        self._feedback(kind, self.ctx.redactor.redact(text), at)

    def _final(self, text: str) -> None:
        """The agent answered with ``text``: the open turn's final answer so far."""
        self.answered = True
        if self.s.prompts:
            self.final_raw = text

    def _feedback(self, kind: str, text: str, at: str | None) -> None:
        """A signal about the open turn (or the session, before any prompt)."""
        idx = len(self.s.prompts) - 1 if self.s.prompts else None
        self.s.feedback.append(Feedback(kind, text, at, idx))

    def _close_turn(self) -> None:
        if self.final_raw is not None and self.s.finals:
            self.s.finals[-1] = self.ctx.redactor.redact(self.final_raw)
        self.final_raw = None

    def close(self) -> None:
        """End of the bytes read: close the open turn and keep the continuation state
        (subclasses add their own keys to ``Session.state``)."""
        self._close_turn()
        self.s.state.update(answered=self.answered, checked_replay=self.checked_replay, cwd=self.cwd)


def parse_log(parser: LogParser, f: BinaryIO, start: int, prior: Session | None) -> ParseResult:
    """Feed the complete lines of ``f`` from byte ``start`` to ``parser`` and finish its session.

    A file whose first line is a lone ``{`` or ``[`` is pretty-printed JSON,
    not a line log: it is counted and skipped whole. A replay yields no
    session. A new file that gave neither a time nor a prompt yields none either.
    """
    file, ctx, session = parser.file, parser.ctx, parser.s
    reader = LineReader(f, start, ctx, file.path)
    for line in reader:
        if line.start == 0 and line.data.strip() in (b"{", b"["):
            ctx.stats.ignored()
            ctx.stats.skip_file("pretty_printed_json", file.path)
            return ParseResult(None, end_offset=reader.offset, file_skip_reason="pretty_printed_json")
        parser.feed(line.data, f"{file.path}@{line.start}")
        if parser.replay:
            return ParseResult(None, end_offset=reader.offset, replay=True)
    parser.close()
    if parser.replay:
        return ParseResult(None, end_offset=reader.offset, replay=True)
    if prior is None and session.started_at is None and not session.prompts:
        return ParseResult(None, end_offset=reader.offset)
    return ParseResult(session, end_offset=reader.offset)

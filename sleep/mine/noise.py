"""Which typed prompts are tasks, and the words the person wrote in them.

Pure functions of one prompt's text. :func:`clean_prompt` returns the text to
mine (the person's own sentences, whitespace tidied) or the reason it is not a
task: an acknowledgement or one-word turn ("ok", "continue"), a slash command,
injected context that slipped through, binary junk, a paste with no sentence of
the person's around it (log, stack trace, diff, fenced output), or text too
long to be a typed task. Feedback turns and repeats are decided by the caller,
which knows the session.
"""

from __future__ import annotations

import re
import unicodedata

MAX_TASK_CHARS = 8000  # longer than this after cleaning: not a typed task
MIN_SENTENCE_WORDS = 3  # what must remain of a paste for the person's words to count

# Reasons, in the order a report lists them.
REASONS = ("empty", "binary", "injected", "slash_command", "acknowledgement", "one_word",
           "pasted_output", "too_long", "feedback", "repeat_in_session")

_ACK_WORDS = frozenset("""
ok okay k kk yes y yep yeah yup sure continue cont go on ahead proceed next done thanks thank you thx ty
cool nice great good perfect lgtm do it keep going carry please pls retry again try sounds fine
alright right np got it understood 👍 🙏 ✅
""".split())
_SLASH = re.compile(r"^/[A-Za-z][\w:.-]*(?:\s|$)")
_INJECTED = re.compile(
    r"^\s*(?:<(?:environment_context|user_instructions|system-reminder|command-(?:name|message|args)|"
    r"local-command-\w+|bash-(?:input|stdout|stderr))\b|Caveat: The messages below were generated)")
_WORD = re.compile(r"[^\W_]+(?:['’][^\W_]+)?", re.UNICODE)

_PASTE_LINE = re.compile(
    r"""^(?:
        \s*Traceback\ \(most\ recent\ call\ last\) |
        \s*File\ ".*",\ line\ \d+ |
        \s+at\ [\w.$<>\[\]/]+\s*\(.*\)\s*$ |          # JS / Java frames
        \s+at\ (?:async\ )?[\w.$<>/]+:\d+(?::\d+)?\s*$ |
        \s*(?:[\w.]+\.)?[A-Z]\w*(?:Error|Exception|Warning)\b(?::.*)?$ |
        .*\bpanicked\ at\b |
        \s*error(?:\[E\d+\])?:\ |
        \s*warning:\ |
        \s*-->\ \S+:\d+ |
        \s*\d+\ +\|\ | \s+\|\s*$ | \s*\^+[~^]*\s*$ |      # compiler code frames
        \s*\[?\d{4}-\d\d-\d\d[ T]\d\d:\d\d | \s*\d\d:\d\d:\d\d[.,]\d+ |
        \s*\[?(?:INFO|WARN|WARNING|ERROR|DEBUG|TRACE|FATAL|CRITICAL)\]?[\s:] |
        \s*(?:PASSED|FAILED|ERROR|SKIPPED|XFAIL)\ \S |
        \s*(?:npm|yarn|pnpm)\ (?:WARN|ERR!?) |
        \s*(?:diff\ --git|index\ [0-9a-f]{3,}\.\.[0-9a-f]{3,}|---\ (?:a/|/dev/null)|\+\+\+\ (?:b/|/dev/null)|@@\ -\d)
        |\s*\$\ \S                                          # a pasted shell session
    )""", re.VERBOSE)
_DIFF_BODY = re.compile(r"^[+\- ]")


# Control characters (but tab, newline, carriage return), surrogates, private use, U+FFFD.
_JUNK = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\ud800-\udfff\ue000-\uf8ff\ufffd]")


def _control_ratio(text: str) -> float:
    if _JUNK.search(text) is None:
        return 0.0
    return len(_JUNK.findall(text)) / max(1, len(text))


def _strip_controls(text: str) -> str:
    if "\r" in text:
        text = text.replace("\r", "")
    if _JUNK.search(text) is not None:
        text = _JUNK.sub("", text)
    if text.isascii():
        return text
    return "".join(ch for ch in text if ch in "\n\t" or unicodedata.category(ch)[0] != "C")


def person_lines(text: str) -> tuple[list[str], int]:
    """The lines the person wrote, and how many characters were pasted output.

    A line is pasted if it looks like a stack trace, compiler or test output, a
    log, a diff (and the body of a diff hunk), or sits in a fenced block.
    """
    kept: list[str] = []
    pasted = 0
    in_fence = in_diff = in_trace = False
    for line in text.splitlines():
        stripped = line.strip()
        if in_trace and line[:1] in (" ", "\t") and stripped:
            pasted += len(line) + 1  # the source line a Python traceback quotes
            continue
        in_trace = False
        if stripped.startswith("```") or stripped.startswith("~~~"):
            in_fence = not in_fence
            pasted += len(line) + 1
            continue
        if in_fence:
            pasted += len(line) + 1
            continue
        if _PASTE_LINE.match(line):
            in_diff = in_diff or stripped.startswith(("diff --git", "@@ -", "--- a/", "+++ b/"))
            in_trace = stripped.startswith(("Traceback", "File \""))
            pasted += len(line) + 1
            continue
        if in_diff and _DIFF_BODY.match(line):
            pasted += len(line) + 1
            continue
        in_diff = False
        kept.append(line)
    return kept, pasted


def _words(text: str) -> list[str]:
    return _WORD.findall(text.casefold())


def clean_prompt(text: str | None) -> tuple[str | None, str | None]:
    """``(cleaned text, None)`` for a task prompt, ``(None, reason)`` otherwise.

    ``reason`` is one of :data:`REASONS` (the caller adds ``feedback`` and
    ``repeat_in_session``). Never raises, whatever the input.
    """
    if not text or not text.strip():
        return None, "empty"
    if len(text) > 50 * MAX_TASK_CHARS:
        # Only the edges of a huge paste can hold the person's words; scan those.
        head, tail = text[: 4 * MAX_TASK_CHARS], text[-4 * MAX_TASK_CHARS:]
        if "\n" in head:  # whole lines only, so no line is cut into a fake word
            head, tail = head.rpartition("\n")[0], tail.partition("\n")[2]
        text = head + "\n" + tail
    if _control_ratio(text[:20000]) > 0.1:
        return None, "binary"
    text = _strip_controls(text).strip()
    if _INJECTED.match(text):
        return None, "injected"
    if _SLASH.match(text) and "/" not in text.split(None, 1)[0][1:]:
        return None, "slash_command"
    if "\n" in text or len(text) > 200:
        lines, pasted = person_lines(text)
    else:  # one short line: the common case, checked with one match
        lines, pasted = ([], len(text)) if _PASTE_LINE.match(text) else ([text], 0)
    own = "\n".join(lines).strip()
    if pasted:
        if len(_words(own)) < MIN_SENTENCE_WORDS:
            return None, "pasted_output"
        text = own
    words = _words(text)
    if not words:  # emoji or punctuation only
        return None, "pasted_output" if pasted else "acknowledgement"
    if len(words) <= 4 and all(w in _ACK_WORDS for w in words):
        return None, "acknowledgement"
    if len(words) == 1:
        return None, "one_word"
    text = re.sub(r"[ \t]+", " ", text)
    text = re.sub(r"\n{3,}", "\n\n", text).strip()
    if len(text) > MAX_TASK_CHARS:
        return None, "too_long"
    return text, None

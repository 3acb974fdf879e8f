"""Cursor's agent transcripts: ``~/.cursor/projects/<slug>/agent-transcripts/``.

Cursor (the IDE's agent and the ``cursor-agent`` CLI) writes a plain transcript of every
agent chat here, beside (not instead of) its databases. Shapes seen in public readers and
copies (nick-fullpath/cursor-history lib/transcript.py at fdf4390 and lib/paths.py at 0849239;
kylemath/Luo2024Extend promptHistory/ at 172a15a, genuine ``.txt`` transcripts copied from
``~/.cursor/projects/Users-kylemathewson-mathTest/agent-transcripts/`` with a header added):

- ``<session>.txt``: ``user:`` / ``assistant:`` lines open each message; the typed prompt is
  inside ``<user_query>``, which an ``<attached_files>`` block (files the person attached)
  can precede; the agent's text carries ``[Thinking] ...`` paragraphs (the answer follows the
  thinking's last line with no marker, so it cannot be told apart: a block with thinking gives
  no answer here), ``[Tool call] Name`` with ``  key: value`` arguments (a multi-line value such
  as a written file's ``contents`` runs on unindented) and ``[Tool result] Name`` output.
- ``<session>.json`` / ``<session>.jsonl`` (flat) or ``<session>/<session>.jsonl`` (newer):
  one record per message ``{role, message: {content: [{type: text, text} | {type: tool_use,
  name, input}]}}`` and ``{type: turn_ended}`` markers; a ``.json`` may hold those records as
  one array; a subagent's transcript is ``<session>/subagents/<subagent>.jsonl`` (read as a
  subagent session of ``<session>``). Thinking shows as ``<think>...</think>`` inside the text.
  Newer builds put the time a message was sent into it, ``<timestamp>Monday, May 18, 2026,
  3:24 PM (UTC+8)</timestamp>`` (read as the prompt's time), and, when a subagent finishes, a
  ``<system_notification>`` followed by a ``<user_query>`` Cursor wrote itself (not a prompt).

A session written in two formats (``.txt`` and ``.json(l)`` twins of one id) is read once:
the JSON one (structured), else the text one. Transcripts carry **no timestamps** but the
``<timestamp>`` newer builds write into user messages: the session's time is the file's
modification time, and a prompt without a ``<timestamp>`` has no time of its own.

The folder name (slug) is the project path with every separator and dot turned into ``-``
(lossy: ``my-app`` and ``my/app`` look alike), or a bare number for a window with no
folder. :func:`resolve_slug` walks the file system for the one directory whose path encodes
to the slug; none, or more than one, leaves the project unknown (never a guess).
"""

from __future__ import annotations

import itertools
import os
import re
from collections.abc import Callable, Iterator
from datetime import datetime, timedelta, timezone
from typing import Any

import orjson

from sleep.harvest.reader import ParseContext, ParseStats, loads_lenient
from sleep.harvest.sources import is_dir, scan_dir
from sleep.sessions import iso_utc

DIR = "agent-transcripts"
KIND = "transcript"
# Twins of one session: the structured one is read.
_PREFER = {".jsonl": 0, ".json": 1, ".txt": 2}
_ROLE_LINE = re.compile(r"^(user|assistant|A):[ \t]*$")
_THINK_TAG = re.compile(r"<think>.*?(?:</think>|\Z)", re.S)
_NON_ALNUM = re.compile(r"[^A-Za-z0-9]+")
_STAMP_RX = re.compile(r"<timestamp>\s*(.*?)\s*(?:\(UTC(?:([+-])(\d{1,2})(?::?(\d{2}))?)?\))?\s*</timestamp>", re.S)
_MAX_WALK = 5000  # directories looked at while resolving one slug


def listing(projects: str, stats: ParseStats) -> Iterator[tuple[str, str, str, str | None]]:
    """``(slug, session id, path, parent session id)`` of every transcript session under
    ``projects``, one file per session (twins counted ``transcript_twin``); a subagent's
    transcript (``<id>/subagents/<sub>.jsonl``) names its parent."""
    for proj in sorted(scan_dir(projects, stats), key=lambda e: e.name):
        tdir = os.path.join(proj.path, DIR)
        if not os.path.isdir(tdir):
            continue
        found: dict[str, list[tuple[int, str]]] = {}
        parent: dict[str, str] = {}
        for entry in scan_dir(tdir, stats):
            try:
                is_dir = entry.is_dir()
            except OSError:
                continue
            if is_dir:
                for ext in _PREFER:
                    nested = os.path.join(entry.path, entry.name + ext)
                    if os.path.isfile(nested):
                        found.setdefault(entry.name, []).append((_PREFER[ext], nested))
                for sub in scan_dir(os.path.join(entry.path, "subagents"), stats):
                    stem, ext = os.path.splitext(sub.name)
                    if ext in _PREFER and stem and stem != entry.name:
                        found.setdefault(stem, []).append((_PREFER[ext], sub.path))
                        parent[stem] = entry.name
                continue
            stem, ext = os.path.splitext(entry.name)
            if ext in _PREFER and stem:
                found.setdefault(stem, []).append((_PREFER[ext], entry.path))
        for sid in sorted(found):
            files = sorted(found[sid])
            for _, twin in files[1:]:
                stats.skip_file("transcript_twin", twin)
            yield proj.name, sid, files[0][1], parent.get(sid)


def norm(text: str) -> str:
    """A path or slug with every run of non-alphanumerics as one ``-`` (how slugs compare)."""
    return _NON_ALNUM.sub("-", text).strip("-").lower()


def slug_matches(slug: str, project: str) -> bool:
    return not slug.isdigit() and norm(slug) == norm(project)


def resolve_slug(slug: str, root: str = "/") -> str | None:
    """The one existing directory whose absolute path encodes to ``slug``, else None (no
    folder: a bare number; nothing matches; several match; too many to look at)."""
    want = norm(slug)
    if not want or slug.isdigit():
        return None
    matches: list[str] = []
    budget = [_MAX_WALK]

    def walk(folder: str, rest: str) -> None:
        try:
            with os.scandir(folder) as it:
                entries = [e for e in it]
        except OSError:
            return
        for e in entries:
            budget[0] -= 1
            if budget[0] < 0 or len(matches) > 1:
                return
            n = norm(e.name)
            if not n or not (rest == n or rest.startswith(n + "-")):
                continue
            if not is_dir(e):
                continue
            if rest == n:
                matches.append(e.path)
            else:
                walk(e.path, rest[len(n) + 1:])

    walk(root, want)
    return matches[0] if len(matches) == 1 and budget[0] >= 0 else None


def decode_with_hash(slug: str, digest: str, hash_of: Callable[[str], str], max_dashes: int = 8) -> str | None:
    """The path ``slug`` encodes whose ``hash_of`` is ``digest`` (``cursor-agent`` names a chat's
    folder by the MD5 of its project's path): the existing folder :func:`resolve_slug` finds, else
    every reading of each ``-`` as ``/``, ``.`` or ``-`` (up to ``max_dashes`` of them)."""
    if slug.isdigit():
        return None
    found = resolve_slug(slug)
    if found is not None and hash_of(found) == digest:
        return found
    parts = slug.strip("-").split("-")
    if len(parts) - 1 > max_dashes:
        return None
    for seps in itertools.product("/.-", repeat=len(parts) - 1):
        path = "/" + parts[0] + "".join(sep + part for sep, part in zip(seps, parts[1:], strict=True))
        if hash_of(path) == digest:
            return path
    return None


# ----- reading one transcript --------------------------------------------------------------

def messages(data: bytes, path: str, ctx: ParseContext) -> list[dict[str, Any]]:
    """The transcript's messages as ``{role, texts: [...], tools: [(name, args)]}``."""
    if path.endswith(".txt"):
        text = data.decode("utf-8", "replace")
        ctx.stats.kept()
        return _text_messages(text)
    return _json_messages(data, path, ctx)


def _json_messages(data: bytes, path: str, ctx: ParseContext) -> list[dict[str, Any]]:
    records: list[Any] = []
    try:
        doc = loads_lenient(data)  # one document: an array of records, or an object holding one
    except orjson.JSONDecodeError:
        doc = None
    if isinstance(doc, dict):
        doc = next((doc[k] for k in ("messages", "conversation", "transcript") if isinstance(doc.get(k), list)),
                   [doc])
    if isinstance(doc, list):
        records = doc
    else:
        for n, line in enumerate(data.splitlines()):
            if not line.strip():
                continue
            rec = ctx.loads(line, f"{path}:{n + 1}")
            if rec is not None:
                records.append(rec)
    out = []
    for rec in records:
        if not isinstance(rec, dict) or rec.get("role") not in ("user", "assistant"):
            ctx.stats.ignored()  # turn_ended markers and the like
            continue
        ctx.stats.kept()
        msg = rec.get("message")
        content = msg.get("content") if isinstance(msg, dict) else rec.get("content")
        if isinstance(content, str):
            content = [{"type": "text", "text": content}]
        texts, tools = [], []
        for b in content if isinstance(content, list) else []:
            if not isinstance(b, dict):
                continue
            if b.get("type") == "text" and isinstance(b.get("text"), str):
                texts.append(b["text"])
            elif b.get("type") in ("tool_use", "tool-call"):
                name = b.get("name") or b.get("toolName")
                args = b.get("input") if isinstance(b.get("input"), dict) else b.get("args")
                tools.append((name if isinstance(name, str) else None, args if isinstance(args, dict) else {}))
        out.append({"role": rec["role"], "texts": texts, "tools": tools})
    return out


def _text_messages(text: str) -> list[dict[str, Any]]:
    """The messages of a ``.txt`` transcript. A ``user:`` / ``assistant:`` line opens a message
    only where Cursor wrote it: not inside an open ``<user_query>`` (a prompt may hold such a
    line), and a ``user:`` block with no ``<user_query>`` is no message of the person's but a line
    of what came before (a file the agent wrote can hold ``user:`` at column 0, as YAML does)."""
    blocks: list[tuple[str, list[str]]] = []  # (role, lines); role "" before any role line
    role, body = "", list[str]()
    open_query = False
    for line in text.splitlines():
        m = None if open_query else _ROLE_LINE.match(line)
        if m:
            blocks.append((role, body))
            role, body = ("user" if m.group(1) == "user" else "assistant"), []
            continue
        body.append(line)
        if role == "user":
            if "<user_query>" in line:
                open_query = True
            if "</user_query>" in line:
                open_query = False
    blocks.append((role, body))
    merged: list[tuple[str, list[str]]] = []
    for role, body in blocks:
        if role == "user" and not any("<user_query>" in line for line in body) and merged:
            prev_role, prev = merged[-1]
            merged[-1] = (prev_role, [*prev, "user:", *body])
            continue
        if role:
            merged.append((role, body))
    out: list[dict[str, Any]] = []
    for role, body in merged:
        if role == "user":
            out.append({"role": "user", "texts": ["\n".join(body)], "tools": []})
        else:
            said, tools = _assistant_text(body)
            out.append({"role": "assistant", "texts": said, "tools": tools})
    return out


def _assistant_text(lines: list[str]) -> tuple[list[str], list[tuple[str | None, dict[str, Any]]]]:
    """What the agent said and its tool calls. A ``[Thinking]``, ``[Tool call]`` or ``[Tool result]``
    line opens a part that runs to the next such line: in genuine transcripts the thinking spans
    paragraphs and the answer follows its last line with no marker between them, so text after
    ``[Thinking]`` cannot be told from the thinking and is not taken as an answer (the JSON twin,
    which holds no thinking, gives it). Only text before any marker is what the agent said."""
    said: list[str] = []
    tools: list[tuple[str | None, dict[str, Any]]] = []
    mode = "say"
    for line in lines:
        if line.startswith("[Thinking]"):
            mode = "think"
        elif line.startswith("[Tool call]"):
            tools.append((line[len("[Tool call]"):].strip() or None, {}))
            mode = "call"
        elif line.startswith("[Tool result]"):
            mode = "result"
        elif mode == "call":
            if line[:2] == "  " and line[2:3] not in (" ", "\t") and ":" in line:
                key, _, value = line.strip().partition(":")
                tools[-1][1].setdefault(key.strip(), value.strip())
        elif mode == "say":
            said.append(line)
    text = "\n".join(said).strip()
    return ([text] if text else []), tools


def stamped(texts: list[str]) -> str | None:
    """The time newer builds write into a user message, ``<timestamp>Monday, May 18, 2026,
    3:24 PM (UTC+8)</timestamp>``, as ISO UTC; None when there is none or it does not parse."""
    for text in texts:
        m = _STAMP_RX.search(text)
        if not m:
            continue
        when, sign, hours, minutes = m.group(1).strip(), m.group(2), m.group(3), m.group(4)
        for fmt in ("%A, %B %d, %Y, %I:%M %p", "%A, %b %d, %Y, %I:%M %p", "%B %d, %Y, %I:%M %p",
                    "%b %d, %Y, %I:%M %p"):
            try:
                local = datetime.strptime(when, fmt)
            except ValueError:
                continue
            offset = timedelta(hours=int(hours or 0), minutes=int(minutes or 0)) * (-1 if sign == "-" else 1)
            return iso_utc((local - offset).replace(tzinfo=timezone.utc).timestamp())
    return None


def twins(path: str) -> list[str]:
    """The other files of the session ``path`` holds, most structured first."""
    stem, ext = os.path.splitext(path)
    return [stem + e for e in sorted(_PREFER, key=_PREFER.__getitem__) if e != ext and os.path.isfile(stem + e)]


def without_thinking(text: str) -> str:
    return _THINK_TAG.sub("", text).strip()

"""Keyed hashes of every secret value a harvest redacted, and the exact-match filter built on them.

The redactor's rules decide what a secret looks like; a text that leaves the
data directory later (a proposal, a tool output, a page) may show a secret the
rules would miss in that form (a model that echoes a password without the
``-p`` in front of it). So each value the harvest removes is remembered, never
in clear: the index keeps a keyed hash of it (BLAKE2b-256 in keyed mode, a MAC
like HMAC-SHA256, with a random 32-byte key kept in the data directory, mode
0600, in :data:`KEY_FILE`). The filter (:class:`KnownSecrets`) finds every
occurrence of a remembered value in a text, also inside a longer token
(``-pQx7...``, ``admin:Qx7...@host``), by hashing the text's windows.

What the index holds per value (table ``secret_hashes``, migration 7): the
keyed hash of the value, the keyed hash (4 bytes) of its first
:data:`ANCHOR_CHARS` characters, its length, the key's id and when it was
first seen. Without the key file the rows say nothing; with it, a value can
only be confirmed by guessing it whole. Values shorter than
:data:`MIN_CHARS` are not remembered (they would match ordinary words).
Values with whitespace are remembered piece by piece (a private key's lines).
"""

from __future__ import annotations

import hashlib
import os
import re
import secrets
import sqlite3
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from sleep import paths

if TYPE_CHECKING:
    from sleep.index import Index

KEY_FILE = paths.SECRET_KEY_FILE
KEY_BYTES = 32
MIN_CHARS = 6
ANCHOR_CHARS = 6
MARKER_KIND = "known-secret"
_ANCHOR_CACHE_MAX = 1 << 18
_RUN_RX = re.compile(rf"\S{{{MIN_CHARS},}}")


# ----- the key and the hashes -------------------------------------------------------------

def key_path(index_path: Path) -> Path:
    """The key file beside an index (one key per data directory)."""
    return Path(index_path).with_name(KEY_FILE)


def load_key(index_path: Path, create: bool = False) -> bytes | None:
    """The data directory's hashing key; created (0600, exclusively) when ``create``."""
    path = key_path(index_path)
    try:
        key = path.read_bytes()
        paths.make_private(path)
        return key if len(key) == KEY_BYTES else None
    except FileNotFoundError:
        if not create:
            return None
    paths.private_dir(path.parent)
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:  # another process made it first: use theirs
        return load_key(index_path)
    with os.fdopen(fd, "wb") as fh:
        fh.write(secrets.token_bytes(KEY_BYTES))
    return load_key(index_path)


def key_id(key: bytes) -> str:
    return hashlib.blake2b(b"", key=key, digest_size=8, person=b"skillopt-key-id").hexdigest()


def value_digest(key: bytes, value: str) -> str:
    return hashlib.blake2b(value.encode("utf-8"), key=key, digest_size=32, person=b"skillopt-value").hexdigest()


def anchor_digest(key: bytes, head: str) -> str:
    return hashlib.blake2b(head.encode("utf-8"), key=key, digest_size=4, person=b"skillopt-anchor").hexdigest()


def pieces(value: str) -> set[str]:
    """The parts of a redacted value worth remembering: the value itself when it holds no
    whitespace, else its pieces; never shorter than :data:`MIN_CHARS`, never the
    ``-----BEGIN ... KEY-----`` armour of a private key."""
    out = set()
    for piece in value.split():
        if len(piece) >= MIN_CHARS and not piece.startswith("-----") and not piece.endswith("-----") \
                and "[REDACTED:" not in piece:
            out.add(piece)
    return out


def remember(index: Index, values: Iterable[str]) -> int:
    """Store the keyed hashes of ``values`` (their :func:`pieces`) in the index; returns
    how many were new. Runs in the caller's transaction when there is one."""
    wanted = {p for v in values for p in pieces(v)}
    if not wanted:
        return 0
    key = load_key(index.path, create=True)
    assert key is not None
    kid = key_id(key)
    from skillopt_core.timestamps import utc_now

    before = index.conn.total_changes
    index.conn.executemany(
        "INSERT OR IGNORE INTO secret_hashes (digest, anchor, length, key_id, first_seen) VALUES (?,?,?,?,?)",
        [(value_digest(key, p), anchor_digest(key, p[:ANCHOR_CHARS]), len(p), kid, utc_now()) for p in sorted(wanted)])
    return index.conn.total_changes - before


# ----- the filter -------------------------------------------------------------------------

@dataclass
class KnownSecrets:
    """Finds the remembered secret values in a text (exact matches, anywhere in a token)."""

    key: bytes
    # anchor digest -> [(length, value digest)]
    anchors: dict[str, list[tuple[int, str]]] = field(default_factory=dict)
    _anchor_cache: dict[str, str] = field(default_factory=dict, repr=False)

    def __len__(self) -> int:
        return sum(len(v) for v in self.anchors.values())

    @classmethod
    def load(cls, index_path: Path) -> KnownSecrets | None:
        """The filter of the index at ``index_path``; None when there is no index, no key
        or no remembered value. Opens the index read-only: it never creates or migrates
        one. Raises ``sqlite3.Error`` if an existing index cannot be read."""
        index_path = Path(index_path)
        if not index_path.is_file():
            return None
        key = load_key(index_path)
        if key is None:
            return None
        conn = sqlite3.connect(index_path.resolve().as_uri() + "?mode=ro", uri=True, timeout=30.0)
        try:
            has_table = conn.execute(
                "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'secret_hashes'").fetchone()
            rows = conn.execute("SELECT anchor, length, digest FROM secret_hashes WHERE key_id = ?",
                                (key_id(key),)).fetchall() if has_table else []
        finally:
            conn.close()
        if not rows:
            return None
        anchors: dict[str, list[tuple[int, str]]] = defaultdict(list)
        for anchor, length, digest in rows:
            anchors[anchor].append((int(length), digest))
        return cls(key, dict(anchors))

    def spans(self, text: str) -> list[tuple[int, int]]:
        """Sorted, merged (start, end) spans of remembered values in ``text``.

        Cost: one keyed hash of :data:`ANCHOR_CHARS` characters per character of the
        text's non-space runs (cached across calls), and one full hash per anchor hit.
        """
        found: list[tuple[int, int]] = []
        cache, anchors, key = self._anchor_cache, self.anchors, self.key
        if len(cache) > _ANCHOR_CACHE_MAX:
            cache.clear()
        for m in _RUN_RX.finditer(text):
            run, base = m.group(0), m.start()
            for i in range(len(run) - ANCHOR_CHARS + 1):
                head = run[i:i + ANCHOR_CHARS]
                a = cache.get(head)
                if a is None:
                    a = cache[head] = anchor_digest(key, head)
                hits = anchors.get(a)
                if hits is None:
                    continue
                for length, digest in hits:
                    if i + length <= len(run) and value_digest(key, run[i:i + length]) == digest:
                        found.append((base + i, base + i + length))
        return _merge(found)

    def scrub(self, text: str) -> tuple[str, int]:
        """``text`` with every remembered value replaced by ``[REDACTED:known-secret]``, and
        how many spans were replaced."""
        spans = self.spans(text)
        if not spans:
            return text, 0
        out, last = [], 0
        mark = f"[REDACTED:{MARKER_KIND}]"
        for start, end in spans:
            out += [text[last:start], mark]
            last = end
        out.append(text[last:])
        return "".join(out), len(spans)


def _merge(spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    merged: list[tuple[int, int]] = []
    for start, end in sorted(spans):
        if merged and start <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(merged[-1][1], end))
        else:
            merged.append((start, end))
    return merged


_cache: dict[str, tuple[tuple, KnownSecrets | None]] = {}


def cached(index_path: Path) -> KnownSecrets | None:
    """:meth:`KnownSecrets.load`, reloaded only when the index (or its WAL) or the key changed."""
    index_path = Path(index_path)
    stamp = tuple(_stat(p) for p in (index_path, Path(f"{index_path}-wal"), key_path(index_path)))
    hit = _cache.get(str(index_path))
    if hit is not None and hit[0] == stamp:
        return hit[1]
    known = KnownSecrets.load(index_path)
    _cache[str(index_path)] = (stamp, known)
    return known


def _stat(path: Path) -> tuple[int, int] | None:
    try:
        st = path.stat()
    except OSError:
        return None
    return st.st_mtime_ns, st.st_size

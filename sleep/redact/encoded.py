"""Secrets in encoded and wrapped forms, for :class:`sleep.redact.Redactor`.

A secret the rules know can still be written in a form they do not see:

- base64 (standard or URL-safe) of a secret or of ``user:password`` (a base64
  AWS key id, docker's ``config.json`` auth): a long token that decodes to
  printable text is checked decoded, and replaced whole when that text holds
  a secret; base64 of plain prose is left alone;
- %-escapes (a fully %-encoded key): a run with 3+ escapes is decoded and checked;
- a token split over two lines (a terminal wrap, an editor's line length): the
  end of one line and the start of the next are checked joined, and both halves
  are replaced when the joined token is a secret neither half shows alone.

The checks of a decoded or joined text run a second redactor on it with these
forms off (``decode=False``), so decoding never recurses.
"""

from __future__ import annotations

import base64
import binascii
import re
import urllib.parse
from typing import TYPE_CHECKING

from sleep.redact.public_ids import identifier_like, secret_by_context
from sleep.redact.rules import TOKEN_PREFIX_RX

if TYPE_CHECKING:
    from sleep.redact import Redactor

_DIGIT = re.compile(r"[0-9]")
_UPPER = re.compile(r"[A-Z]")
_LOWER = re.compile(r"[a-z]")

# A long token that may be base64 (standard or URL-safe alphabet) of a secret, or the runs
# of one that holds other characters too ("AWS_KEY_B64=<base64>").
_B64_STD_RX = re.compile(r"[A-Za-z0-9+/]{16,}={0,2}")
_B64_URL_RX = re.compile(r"[A-Za-z0-9_\-]{16,}={0,2}")
# Base64 of ASCII text: the first character of every 4 encodes a byte's top 6 bits, and
# a byte below 0x80 gives one of A-Z, a-f. Random identifiers fail this at once.
_B64_OF_ASCII_RX = re.compile(r"(?:[A-Za-f][A-Za-z0-9+/_\-]{3})+(?:[A-Za-f][A-Za-z0-9+/_\-]{1,2})?={0,2}")
# Decoded text that reads as words ("hello world, this is a test"): not a random secret.
_PROSE_RX = re.compile(r"[A-Za-z]+(?:[ ,.;:!?'-]+[A-Za-z]+){2,}[ .!?]*")
# A base64 "user:password" (what HTTP basic auth and docker's config.json encode).
# What stands before the value of a ``NAME=value`` token.
_NAME_IS_RX = re.compile(r"[A-Za-z_][A-Za-z0-9_.\-]*=")
_USER_PASS_RX = re.compile(r"[\w.@+\-]{1,64}:[^\s:]{6,}")
# A run with 3+ %-escapes among URL characters: "%73%6B%2D..." or "key%3Dsk-ant-...".
PERCENT_RUN_RX = re.compile(r"(?:[A-Za-z0-9_.~+\-]*%[0-9A-Fa-f]{2}){3,}[A-Za-z0-9_.~+\-]*")
# The end of one line and the start of the next: the two halves of a token a terminal
# or an editor wrapped.
_TOKEN_CHARS = r"A-Za-z0-9_\-+/=."
_TAIL_RX = re.compile(rf"(?<![{_TOKEN_CHARS}])(?P<a>[{_TOKEN_CHARS}]{{6,}})[ \t]*\\?\r?$")
# A line break right after a token character (perhaps a space, a backslash or \r
# between) and before 6 more: the literal \n first is what makes the search fast.
_LINE_BREAK_IN_TOKEN_RX = re.compile(
    rf"\n(?:(?<=[{_TOKEN_CHARS}]\n)|(?<=[{_TOKEN_CHARS}]\r\n)|(?<=[{_TOKEN_CHARS}][ \t\\]\n))"
    rf"(?=[ \t]*[{_TOKEN_CHARS}]{{6}})")
_HEAD_RX = re.compile(rf"[ \t]*(?P<b>[{_TOKEN_CHARS}]{{6,}})(?![{_TOKEN_CHARS}])")
_HEX_ONLY_RX = re.compile(r"(?:0[xX])?[0-9a-fA-F]+")
_WORD_RX = re.compile(r"[A-Z]?[a-z]+|[A-Z]+")
_MIN_DECODED_CHARS = 12
_MAX_HALF = 120  # a longer half of a wrapped token is judged alone


def _b64_text(run: str) -> str | None:
    """The printable ASCII text ``run`` is the base64 of, or None."""
    body = run.rstrip("=")
    if len(body) % 4 == 1 or _B64_OF_ASCII_RX.fullmatch(run) is None:
        return None
    altchars = b"-_" if ("-" in body or "_" in body) else None
    try:
        raw = base64.b64decode(body + "=" * (-len(body) % 4), altchars=altchars, validate=True)
    except (binascii.Error, ValueError):
        return None
    if len(raw) < _MIN_DECODED_CHARS or not raw.isascii():
        return None
    text = raw.decode("ascii")
    return text if text.isprintable() else None


class EncodedForms:
    """The encoded and wrapped checks of :class:`sleep.redact.Redactor` (a mixin: it uses
    the redactor's ``_found``, ``_take``, ``_probe`` and ``_layer1_token``)."""

    if TYPE_CHECKING:  # what the mixin uses of Redactor
        def _found(self, kind: str, *values: str) -> str: ...
        def _probe(self, text: str) -> Redactor: ...
        def _take(self, probe: Redactor, *values: str) -> str: ...
        def _layer1_token(self, token: str, text: str, offset: int) -> str: ...

    def _decoded_b64(self, token: str) -> str | None:
        """A marker if ``token`` (or a long run inside it) is the base64 of a secret; the
        token itself when it is the base64 of plain prose (not random: kept); else None."""
        if _B64_STD_RX.fullmatch(token) or _B64_URL_RX.fullmatch(token):
            runs: list[str] = [token]
        else:
            runs = _B64_STD_RX.findall(token) + _B64_URL_RX.findall(token)
        for run in runs:
            text = _b64_text(run)
            if text is None:
                continue
            probe = self._probe(text)
            if probe.total:
                return self._take(probe, token, run)
            if _USER_PASS_RX.fullmatch(text):
                return self._found("basic-auth", token, run, text.split(":", 1)[1])
            if _PROSE_RX.fullmatch(text) and (run == token or _NAME_IS_RX.fullmatch(token[:len(token) - len(run)])):
                return token  # base64 of prose, alone or as the value of NAME=<base64>
        return None

    def _percent_run(self, m: re.Match[str]) -> str:
        run = m.group(0)
        text = urllib.parse.unquote(run)
        if len(text) < _MIN_DECODED_CHARS or text == run:
            return run
        probe = self._probe(text)
        return self._take(probe, run) if probe.total else run

    def _wrapped(self, text: str) -> str:
        """Replace both halves of a token split over two lines when the joined token is a
        secret that neither half shows alone: a token rule's shape, a base64 secret, or
        (when a half is too short for the entropy check) a random non-hex string."""
        spans: list[tuple[int, int, str]] = []
        for m in _LINE_BREAK_IN_TOKEN_RX.finditer(text):
            # The second half first: it is a cheap match, and most lines start with a word
            # ("return", "Author:"), a flag or PEM armour, which no half of a key is.
            at = m.start()
            if spans and at < spans[-1][1]:
                continue
            head = _HEAD_RX.match(text, at + 1)
            if head is None or _WORD_RX.fullmatch(head.group("b")) or head.group("b").startswith("--"):
                continue
            tail = _TAIL_RX.search(text, max(text.rfind("\n", 0, at) + 1, at - _MAX_HALF), at)
            if tail is None:
                continue
            a, b = tail.group("a"), head.group("b")
            if len(a) + len(b) < 16 or not (_DIGIT.search(a) or _DIGIT.search(b)):
                continue
            start = tail.start("a")
            probe = self._probe_token(a, b, text[max(text.rfind("\n", 0, start) + 1, start - 80):start])
            if probe is not None:
                mark = self._take(probe, a + b, a, b)
                spans.append((start, head.end("b"), mark + text[tail.end("a"):head.start("b")] + mark))
        if not spans:
            return text
        out, last = [], 0
        for start, end, replacement in spans:
            out += [text[last:start], replacement]
            last = end
        out.append(text[last:])
        return "".join(out)

    def _probe_token(self, a: str, b: str, before: str) -> Redactor | None:
        """What the token rules, the base64 check and the entropy check find in the joined
        halves of a wrapped token (None: nothing, or nothing its halves would not show)."""
        joined = a + b
        if _WORD_RX.fullmatch(a):
            return None  # a word is not half of a key (the second half was checked already)
        prefixed = TOKEN_PREFIX_RX.search(joined) is not None
        if _HEX_ONLY_RX.fullmatch(joined) is not None:
            if not (prefixed or secret_by_context(joined, before)):
                return None  # two lines of hex (digests, a hexdump) are not one secret
        elif not prefixed and not (_UPPER.search(joined) and _LOWER.search(joined)) \
                and _B64_OF_ASCII_RX.fullmatch(joined) is None:
            return None  # no token shape, not random base62, not base64 of text
        from sleep.redact.redactor import Redactor  # the module that imports this one

        probe = Redactor(use_detect_secrets=False, collect=True, decode=False)
        if probe._decoded_b64(joined) is None:
            probe._layer1_token(joined, before + joined, len(before))
        if not probe.total:
            return None
        if set(probe.counts) == {"high-entropy"} and (
                min(len(a), len(b)) >= 24 or identifier_like(a) or identifier_like(b)):
            return None  # halves this long are judged alone; a word is not half a random key
        return probe

"""Secret redaction at the harvest boundary, and the filter for every text that leaves the data dir.

Every piece of transcript text that SkillOpt-Sleep stores (prompts, final
answers, feedback, history lines, shell signatures, file paths) passes through
:meth:`Redactor.redact` once, just before it is stored; text that is dropped
(tool output, thinking, attachments) is never scanned. Each secret is replaced
by a typed marker such as ``[REDACTED:github-token]`` and counted by type, so
the harvest can report what it removed.

Two layers:

1. The span-exact rules of :mod:`sleep.redact.rules` (provider API keys,
   GitHub/GitLab/Slack/Hugging Face/npm tokens, AWS keys, JWTs, private key
   blocks, credentials in URLs and connection strings, ``password=``-style
   assignments, bearer and ``Authorization:`` headers), the typed passwords of
   :mod:`sleep.redact.typed_passwords` (``mysql -p<pw>``, ``curl -u user:pw``,
   ``the password is ...``), and a high-entropy token check that spares values
   public by construction (:mod:`sleep.redact.public_ids`: content hashes, SSH public
   keys, base58 addresses) unless a credential word names them. Encoded and
   wrapped forms are looked through: a base64 or %-encoded token is decoded and
   checked, and a token split over two lines is checked joined.
2. The rest of the ``detect-secrets`` detector catalogue
   (:mod:`sleep.redact.detect_secrets_layer`), behind a gate.

Redaction errs on the side of removing too much: a false positive costs a word
of a prompt, a false negative leaks a credential into a database.

:func:`scrub_outbound` is what every text leaving the data directory goes
through (a proposal's commit message, note and skill file; tool outputs and
pages): the redactor, then an exact-match filter of every secret value a
harvest ever redacted (:mod:`sleep.redact.known`).
"""

from __future__ import annotations

import dataclasses
import functools
import os
import re
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Union

from sleep.redact.detect_secrets_layer import (
    ARTIFACTORY_RX,
    DISCORD_RX,
    KEYWORD_GATE_WORDS,
    QUICK_RX,
    TELEGRAM_SECRET_LEN,
    detect_secrets_gate,
    detect_secrets_scanner,
    ds_token_shape,
    keyword_gate,
    telegram_secret,
    token_gate,
)
from sleep.redact.encoded import PERCENT_RUN_RX, EncodedForms
from sleep.redact.literal_scan import LiteralScan
from sleep.redact.public_ids import (
    judged_alone,
    looks_high_entropy,
    onchain_context,
    public_block_spans,
    public_identifier,
    secret_by_context,
    shannon_entropy,
)
from sleep.redact.rules import (
    CANDIDATE_RX,
    KEYWORD_HINTS,
    KEYWORD_RX,
    MARKER,
    TOKEN_PREFIX_RX,
    TOKEN_RULE_BY_GROUP,
    TOKEN_RULES_RX,
    TRIGGERED,
    Rule,
    keyword_hint,
    keyword_replacement,
    marker,
)
from sleep.redact.typed_passwords import TYPED_PASSWORD_RULES

if TYPE_CHECKING:
    from sleep.index import Index

__all__ = [
    "MARKER",
    "OutboundScrubber",
    "Redactor",
    "detect_secrets_gate",
    "detect_secrets_scanner",
    "keyword_gate",
    "looks_high_entropy",
    "map_strings",
    "scrub_outbound",
    "scrub_value",
    "shannon_entropy",
    "token_gate",
]

# A run of token characters, perhaps with base64 padding. An "=" between a name and a value
# (``LINEAR=lin_api_...``, ``key=...=rest``) is not padding: the value after it is a run
# of its own, and the run before it ends there (else a value written as ``NAME=value``
# would never be checked, while the same value in prose is).
_HIGH_ENTROPY_RX = re.compile(
    r"(?:(?<![A-Za-z0-9+/_\-=.])|(?<=[A-Za-z0-9_]=)(?!=))[A-Za-z0-9+/_\-]{24,}"
    r"(?:={1,2}(?![A-Za-z0-9+/_\-=])|(?![A-Za-z0-9+/_\-=])|(?==[A-Za-z0-9_]))")
_DIGIT = re.compile(r"[0-9]")
_MAX_PLAIN = 1 << 16  # tokens remembered as plain per redactor (a bound on memory)
# (triggers, lowered, rule, regex, line_local, also): a line-local rule's regex runs only on
# the lines that hold one of its triggers and one of ``also`` (its matches never span lines).
_RULES = [(frozenset(t), lo, r, rx, False, ()) for t, lo, r, rx in TRIGGERED] + [
    (frozenset(t), lo, r, rx, True, also) for t, lo, r, rx, also in TYPED_PASSWORD_RULES]
# Each trigger is looked for once per text (in its lowercase, or in the text as it came). A
# cased trigger that holds a lowercase one ("PASS", "pass:" hold "pass") is only looked for
# when that one is present: one substring scan fewer for most texts.
_LOWER_TRIGGERS = sorted({trigger for triggers, lowered, *_ in _RULES if lowered for trigger in triggers})
_CASED_TRIGGERS = [(trigger, tuple(t for t in _LOWER_TRIGGERS if t in trigger.lower()))
                   for trigger in sorted({trigger for triggers, lowered, *_ in _RULES if not lowered
                                          for trigger in triggers})]
_LOWER_TRIGGER_SET = frozenset(_LOWER_TRIGGERS)
# Every literal looked for in a text's lowercase (triggers, the words a line-local rule's
# line must hold too, keyword hints, the keyword gate's words): found in one pass.
_LOW_SCAN = LiteralScan(_LOWER_TRIGGERS + [a for _, lowered, _, _, line_local, also in _RULES if lowered and line_local
                                           for a in also]
                        + [word for word, _ in KEYWORD_HINTS] + list(KEYWORD_GATE_WORDS))

# ----- the redactor ----------------------------------------------------------------------

@dataclass
class Redactor(EncodedForms):
    """Replaces secrets in text with typed markers and counts them by type.

    ``redact`` is total: it never raises and returns text with no secret it
    recognises. ``counts`` accumulates over the redactor's life (one harvest);
    ``scanned_chars`` and ``detect_secrets_lines`` say how much text it saw and
    how many lines passed the gate to detect-secrets. With ``collect``, every
    secret value it removed is added to ``values`` (in clear, in memory only: the
    harvest stores their keyed hashes, :mod:`sleep.redact.known`). ``decode``
    False skips the encoded and wrapped forms (the inner redactor that checks a
    decoded text uses it, so decoding never recurses).
    """

    use_detect_secrets: bool = True
    collect: bool = False
    decode: bool = True
    counts: Counter = field(default_factory=Counter)
    values: set[str] = field(default_factory=set)
    scanned_chars: int = 0
    detect_secrets_lines: int = 0

    def __post_init__(self) -> None:
        # detect-secrets is imported on first need: its import costs ~0.15 s, which a
        # harvest with nothing new (or nothing that passes the gate) should not pay.
        self._scan: Callable[[str], list[tuple[str, str]]] | None = None
        self._scan_loaded = not self.use_detect_secrets
        self._onchain_text: str | None = None
        self._onchain_value = False
        self._blocks_text: str | None = None
        self._blocks: list[tuple[int, int]] = []
        # Long tokens (paths, identifiers) repeat across the texts of a harvest. A token
        # whose check found nothing and read nothing of its context comes back unchanged
        # wherever it stands: those are remembered, one set with the detect-secrets
        # shapes looked for and one without (see _candidate).
        self._plain: tuple[set[str], set[str]] = (set(), set())
        self._contextual: set[str] = set()  # tokens with a run the entropy check judges by context
        self._finds = 0  # secrets found so far (a check that found one is not remembered)

    @property
    def total(self) -> int:
        return sum(self.counts.values())

    def redact(self, text: str | None) -> str:
        if not text:
            return text or ""
        self.scanned_chars += len(text)
        use_ds = not self._scan_loaded or self._scan is not None
        if self.decode and "\n" in text:
            text = self._wrapped(text)
        low = scanned = text.lower()
        low_is_current = True  # later rules test triggers in a stale `low`: a superset
        present = _LOW_SCAN.present(low)  # the literals `scanned` holds (valid for it only)
        lower = present & _LOWER_TRIGGER_SET
        cased = {t for t, within in _CASED_TRIGGERS if lower.issuperset(within) and t in text}
        for triggers, lowered, rule, rx, line_local, also in _RULES:
            if (lower if lowered else cased).isdisjoint(triggers):
                continue
            if lowered and line_local and not low_is_current:
                low, low_is_current = text.lower(), True
            hay = low if lowered else text
            sub = functools.partial(self._apply, rule)
            new = _sub_on_lines(rx, sub, text, hay, triggers, also, present if hay is scanned else None) \
                if line_local else rx.sub(sub, text)
            if new != text:
                text, low_is_current = new, False
        if self.decode and "%" in text:
            new = _sub_on_lines(PERCENT_RUN_RX, self._percent_run, text, text, ("%",))
            if new != text:
                text, low_is_current = new, False
        # One pass over long tokens: token rules, the entropy check, and the token
        # shapes of detect-secrets (whose lines are collected in _ds_lines).
        self._ds_lines: set[int] | None = set() if use_ds else None
        out = CANDIDATE_RX.sub(self._candidate, text)
        if use_ds and ("AKC" in text or "AP" in text):
            for m in ARTIFACTORY_RX.finditer(text):
                self._ds_lines.add(text.count("\n", 0, m.start()))  # type: ignore[union-attr]
        if self._ds_lines:
            out = self._detect_secrets_tokens(out, self._ds_lines)
        if keyword_hint(low, present if low is scanned else None):
            out = KEYWORD_RX.sub(self._keyword, out)
        current = low_is_current and out == text
        if use_ds and keyword_gate(out, low if current else None, present if current and low is scanned else None):
            out = self._detect_secrets(out, keyword_gate)
        return out

    # ----- bookkeeping -------------------------------------------------------------------

    def _found(self, kind: str, *values: str) -> str:
        self.counts[kind] += 1
        self._finds += 1
        if self.collect:
            self.values.update(v for v in values if v)
        return marker(kind)

    def _apply(self, rule: Rule, m: re.Match[str]) -> str:
        if rule.vet is not None and not rule.vet(m):
            return m.group(0)
        self._found(rule.kind, rule.value(m))
        return rule.replace(m)

    def _probe(self, text: str) -> Redactor:
        probe = Redactor(use_detect_secrets=False, collect=True, decode=False)
        probe.redact(text)
        return probe

    def _take(self, probe: Redactor, *values: str) -> str:
        """Adopt what ``probe`` found in a decoded or joined text; the marker for it."""
        kind = probe.counts.most_common(1)[0][0]
        return self._found(kind, *values, *probe.values)

    # ----- long tokens -------------------------------------------------------------------

    def _candidate(self, m: re.Match[str]) -> str:
        """One long token: :meth:`_check_candidate`, or nothing for a token known plain.

        The check of a token reads its context in only two places: a Telegram secret
        (35+ characters) follows a ``:``, and the entropy check asks the text around a
        run that looks random or hex (:func:`sleep.redact.public_ids.judged_alone`). A token
        that cannot be such a secret here, whose check changed nothing, found nothing,
        sent no line to detect-secrets and had no such run gives the same answer in any
        text, so it is remembered."""
        token = m.group(0)
        at = m.start()
        if len(token) >= TELEGRAM_SECRET_LEN and m.string[at - 1:at] == ":":
            return self._check_candidate(m)
        plain = self._plain[self._ds_lines is None]
        if token in plain:
            return token
        finds, ds = self._finds, len(self._ds_lines) if self._ds_lines is not None else 0
        out = self._check_candidate(m)
        if out == token and self._finds == finds and (self._ds_lines is None or len(self._ds_lines) == ds) \
                and len(plain) < _MAX_PLAIN and token not in self._contextual:
            if _alone(token):
                plain.add(token)
            elif len(self._contextual) < _MAX_PLAIN:
                self._contextual.add(token)  # judged by its context each time: not asked again
        return out

    def _check_candidate(self, m: re.Match[str]) -> str:
        token = m.group(0)
        if self.decode:
            found = self._decoded_b64(token)
            if found is not None:
                return found
        if QUICK_RX.search(token) is None and ("." not in token or DISCORD_RX.search(token) is None):
            # Most long tokens (paths, identifiers): no rule's literal, no detect-secrets
            # shape; only the entropy check (or a Telegram secret's context) applies.
            if self._ds_lines is not None and m.string[m.start() - 1:m.start()] == ":" \
                    and telegram_secret(m.string, m.start(), token):
                self._ds_lines.add(m.string.count("\n", 0, m.start()))
                return token
            if len(token) >= 24 and _DIGIT.search(token):
                return self._entropy_pass(token, m.string, m.start())
            return token
        if self._ds_lines is not None and (ds_token_shape(token) or (
                m.string[m.start() - 1:m.start()] == ":" and telegram_secret(m.string, m.start(), token))):
            # Left whole for detect-secrets; its line is redacted again afterwards.
            self._ds_lines.add(m.string.count("\n", 0, m.start()))
            return token
        return self._layer1_token(token, m.string, m.start())

    def _layer1_token(self, token: str, text: str, offset: int) -> str:
        if TOKEN_PREFIX_RX.search(token) and TOKEN_RULES_RX.search(token):
            token = TOKEN_RULES_RX.sub(self._token_rule, token)
        if len(token) >= 24 and _DIGIT.search(token):  # random tokens this long hold a digit
            token = self._entropy_pass(token, text, offset)
        return token

    def _detect_secrets_tokens(self, text: str, line_numbers: set[int]) -> str:
        """Lines holding a detect-secrets token shape: detect-secrets on the line as it
        came, then layer 1's token rules on what is left of it."""
        lines = text.split("\n")
        for i in sorted(line_numbers):
            if i < len(lines):
                line = self._detect_secrets(lines[i], None)
                lines[i] = CANDIDATE_RX.sub(lambda m: self._layer1_token(m.group(0), m.string, m.start()), line)
        return "\n".join(lines)

    def _entropy_pass(self, token: str, text: str, offset: int) -> str:
        """Replace the random-looking runs of ``token`` (found at ``offset`` in ``text``)
        that are not public identifiers, and the hex strings a credential word names."""
        out, last = [], 0
        for e in _HIGH_ENTROPY_RX.finditer(token):
            value = e.group(0)
            # Context is the token's own line (the original text around the token).
            at = offset + e.start()
            line_start = text.rfind("\n", 0, at) + 1
            before = text[max(line_start, at - 80):at]
            if not looks_high_entropy(value):
                if not secret_by_context(value, before):
                    continue
            else:
                line_end = text.find("\n", at)
                after = text[at + len(value):(line_end if line_end >= 0 else len(text))][:40]
                if public_identifier(value, before, after, self._onchain(text)) or self._in_public_block(text, at):
                    continue
            out.append(token[last:e.start()])
            out.append(self._found("high-entropy", value))
            last = e.end()
        if not out:
            return token
        out.append(token[last:])
        return "".join(out)

    def _onchain(self, text: str) -> bool:
        """:func:`onchain_context` of the text being redacted, computed once per text."""
        if self._onchain_text is not text:  # holding the text: its id cannot be reused
            self._onchain_text, self._onchain_value = text, onchain_context(text)
        return self._onchain_value

    def _in_public_block(self, text: str, at: int) -> bool:
        """True if ``at`` lies in an armored public key, certificate or signature of ``text``."""
        if self._blocks_text is not text:
            self._blocks_text, self._blocks = text, public_block_spans(text)
        return any(start <= at < end for start, end in self._blocks)

    def _token_rule(self, t: re.Match[str]) -> str:
        return self._apply(TOKEN_RULE_BY_GROUP[t.lastgroup or ""], t)

    def _keyword(self, m: re.Match[str]) -> str:
        found = keyword_replacement(m)
        if found is None:
            return m.group(0)
        replacement, kind, value = found
        self._found(kind, value)
        return replacement

    def _detect_secrets(self, text: str, gate: Callable[[str], bool] | None) -> str:
        """detect-secrets on each line of ``text`` that passes ``gate`` (every line if None)."""
        lines = text.split("\n")
        changed = False
        for i, line in enumerate(lines):
            if gate is not None and not gate(line):
                continue
            if not self._scan_loaded:
                self._scan, self._scan_loaded = detect_secrets_scanner(), True
            if self._scan is None:
                break
            self.detect_secrets_lines += 1
            for kind, value in self._scan(line):
                new = _replace_secret(line, value, marker(_slug(kind)))
                if new != line:
                    self._found(_slug(kind), value)
                    line = new
                    changed = True
            lines[i] = line
        return "\n".join(lines) if changed else text


def _alone(token: str) -> bool:
    """True if no high-entropy run of ``token`` is judged by its context (see _candidate)."""
    if len(token) < 24 or _DIGIT.search(token) is None:
        return True  # the entropy check is not made
    return all(judged_alone(e.group(0)) for e in _HIGH_ENTROPY_RX.finditer(token))


def _sub_on_lines(rx: re.Pattern[str], repl: Callable[[re.Match[str]], str], text: str, hay: str,
                  triggers: Iterable[str], also: tuple[str, ...] = (),
                  present: frozenset[str] | None = None) -> str:
    """``rx.sub(repl, text)`` on the lines of ``text`` where ``hay`` (``text`` or its
    lowercase) holds a trigger (and, if ``also`` is given, one of ``also``). Regexes that
    cannot start with a literal scan every position; on a few short lines that costs
    nothing. ``hay`` must be aligned with ``text`` (same length); otherwise the whole
    text is substituted. ``present``: which of ``also`` ``hay`` holds, when the caller knows."""
    if len(hay) != len(text):
        return rx.sub(repl, text)
    if also:
        also = tuple(a for a in also if (a in hay if present is None else a in present))
        if not also:
            return text  # no line can hold one of ``also``
    spans = set()
    for t in triggers:
        i = hay.find(t)
        while i >= 0:
            end = hay.find("\n", i)
            end = len(hay) if end < 0 else end
            start = hay.rfind("\n", 0, i) + 1
            if not also or _holds_any(hay[start:end], also):
                spans.add((start, end))
            i = hay.find(t, end)
    out, last = [], 0
    for start, end in sorted(spans):
        if start < last:
            continue
        out += [text[last:start], rx.sub(repl, text[start:end])]
        last = end
    out.append(text[last:])
    return "".join(out)


def _holds_any(line: str, words: tuple[str, ...]) -> bool:
    for w in words:
        if w in line:
            return True
    return False


def _slug(kind: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", kind.lower()).strip("-") or "secret"


_TOKEN_CHAR_RX = re.compile(r"[A-Za-z0-9_\-+/=.]")


def _replace_secret(line: str, value: str, mark: str) -> str:
    """Replace ``value`` in ``line``; a short value (some detectors report only a
    prefix) takes the whole token around it with it."""
    if not value:
        return line
    at = line.find(value)
    if at < 0:
        return line
    if len(value) >= 8:
        return line.replace(value, mark)
    start, end = at, at + len(value)
    while start > 0 and _TOKEN_CHAR_RX.match(line[start - 1]):
        start -= 1
    while end < len(line) and _TOKEN_CHAR_RX.match(line[end]):
        end += 1
    return line[:start] + mark + line[end:]


def map_strings(value: Any, fn: Callable[[str], str]) -> Any:
    """``value`` with ``fn`` applied to every string in it: dict keys and values, list and
    tuple items, and the fields of dataclass instances (rebuilt with
    ``dataclasses.replace``, so frozen ones work). Other values are returned as they are;
    a part with nothing changed is returned as the same object."""
    if isinstance(value, str):
        return fn(value)
    if isinstance(value, dict):
        pairs = [(k, v, map_strings(k, fn), map_strings(v, fn)) for k, v in value.items()]
        if all(k2 is k and v2 is v for k, v, k2, v2 in pairs):
            return value
        return {k2: v2 for _, _, k2, v2 in pairs}
    if isinstance(value, (list, tuple)):
        items = [map_strings(v, fn) for v in value]
        if all(a is b for a, b in zip(items, value, strict=True)):
            return value
        return type(value)(items) if not hasattr(value, "_fields") else type(value)(*items)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        changes = {}
        for f in dataclasses.fields(value):
            old = getattr(value, f.name)
            new = map_strings(old, fn)
            if new is not old:
                changes[f.name] = new
        return dataclasses.replace(value, **changes) if changes else value
    return value


# ----- everything that leaves the data directory ---------------------------------------------

IndexRef = Union["Index", str, "os.PathLike[str]", None]


def scrub_outbound(text: str | None, index: IndexRef = None) -> str:
    """``text`` as it may leave the data directory: no secret the rules recognise and no
    secret value any harvest of this index ever redacted.

    Input: any text (None gives ""). ``index``: the :class:`sleep.index.Index` or the
    path of the index whose remembered secrets apply; default the data dir's index
    (``paths.index_path()``).

    Output: the text with each remembered value (found exactly, also inside a longer
    token) replaced by ``[REDACTED:known-secret]``, then every secret the redactor
    recognises replaced by its typed marker. Text without secrets comes back unchanged.

    Where the hashes come from: every value a harvest redacts is stored as a keyed
    hash in the index (table ``secret_hashes``, :mod:`sleep.redact.known`); the key is
    the data dir's ``secret-hash.key`` (0600). Nothing is stored in clear.

    With no index, no key file or no remembered value, only the redactor runs (there
    is nothing to match). The index is opened read-only and never created or migrated;
    an index that exists but cannot be read raises ``sqlite3.Error`` rather than let a
    text out unfiltered.

    Cost: the redactor (bench/redaction.py prints its MB/s) plus, when the index
    remembers secrets, one keyed 6-character hash per character of the text's
    non-space runs (cached across calls, so repeated text is cheap) and a reload of
    the hashes (one SELECT) when the index changed since the last call. Many texts at
    once: one :class:`OutboundScrubber`, or :func:`scrub_value` for a JSON-like value.
    """
    return OutboundScrubber(index)(text)


def scrub_value(value: Any, index: IndexRef = None) -> Any:
    """:func:`scrub_outbound` applied to every string (keys included) of a JSON-like value
    (dicts, lists, tuples, strings; other values are returned as they are). Scrubbing
    the fields rather than the serialised text keeps the JSON valid."""
    return OutboundScrubber(index).value(value)


class OutboundScrubber:
    """:func:`scrub_outbound` for many texts, with counts: ``known`` (remembered values
    replaced) and ``redactor.counts`` (by kind). The remembered hashes are loaded once,
    when it is made."""

    def __init__(self, index: IndexRef = None) -> None:
        from sleep import paths
        from sleep.redact import known as known_secrets

        if index is None:
            path = paths.index_path()
        elif isinstance(index, (str, os.PathLike)):
            path = Path(index)
        else:
            path = index.path
        self.known_secrets = known_secrets.cached(path)
        self.redactor = Redactor()
        self.known = 0

    @property
    def total(self) -> int:
        return self.known + self.redactor.total

    def __call__(self, text: str | None) -> str:
        if not text:
            return text or ""
        if self.known_secrets is not None:
            text, n = self.known_secrets.scrub(text)
            self.known += n
        return self.redactor.redact(text)

    def value(self, value: Any) -> Any:
        return map_strings(value, self)

    def findings(self, text: str) -> list[str]:
        """The kinds of secret this would remove from ``text`` (one entry per secret,
        ``known-secret`` for remembered values); empty when the text is clean. Counts
        nothing."""
        found: list[str] = []
        if self.known_secrets is not None:
            text, n = self.known_secrets.scrub(text)
            found += ["known-secret"] * n
        r = Redactor()
        r.redact(text)
        return found + sorted(r.counts.elements())

"""Secret redaction at the harvest boundary.

Every piece of transcript text that SkillOpt-Sleep stores (prompts, final
answers, feedback, history lines, shell signatures, file paths) passes through
:meth:`Redactor.redact` once, just before it is stored; text that is dropped
(tool output, thinking, attachments) is never scanned. Each secret is replaced
by a typed marker such as ``[REDACTED:github-token]`` and counted by type, so
the harvest can report what it removed.

Two layers:

1. The span-exact rules of :mod:`sleep.secret_rules` (provider API keys,
   GitHub/GitLab/Slack/Hugging Face/npm tokens, AWS keys, JWTs, private key
   blocks, credentials in URLs and connection strings, ``password=``-style
   assignments, bearer and ``Authorization:`` headers) and a high-entropy token
   check that spares values public by construction (:mod:`sleep.public_ids`:
   content hashes, SSH public keys, base58 addresses).
2. The rest of the ``detect-secrets`` detector catalogue (SendGrid, Twilio,
   Mailchimp, PyPI, Discord, Telegram, Square, Azure storage, Artifactory,
   IBM, Cloudant, SoftLayer): it adds recall for those kinds, but costs tens of
   microseconds a line (and 0.15 s to import), so it only sees lines that pass a
   gate built as a superset of what those detectors can match: token shapes are
   looked for in each long token before layer 1 could break it apart, keyword
   assignments in what layer 1 left.

Redaction errs on the side of removing too much: a false positive costs a word
of a prompt, a false negative leaks a credential into a database.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field
from typing import Callable

from sleep.public_ids import looks_high_entropy, public_identifier, shannon_entropy
from sleep.secret_rules import (CANDIDATE_RX, KEYWORD_RX, MARKER, TOKEN_PREFIX_RX, TOKEN_RULE_BY_GROUP,
                                TOKEN_RULES_RX, TRIGGERED, Rule, keyword_hint, keyword_replacement, marker)

__all__ = ["MARKER", "Redactor", "detect_secrets_gate", "detect_secrets_scanner", "keyword_gate",
           "looks_high_entropy", "shannon_entropy", "token_gate"]

_HIGH_ENTROPY_RX = re.compile(r"(?<![A-Za-z0-9+/_\-=.])[A-Za-z0-9+/_\-]{24,}={0,2}(?![A-Za-z0-9+/_\-=])")
_DIGIT = re.compile(r"[0-9]")


# ----- layer 2: detect-secrets -----------------------------------------------------------

# The detectors of detect-secrets that add recall to layer 1. Its AWS, GitHub,
# GitLab, JWT, OpenAI, Slack, Stripe and basic-auth detectors match a subset of
# what layer 1 already removes (with exact spans), so they are not run;
# keyword, entropy and private-key detection are layer 1's own.
DETECT_SECRETS_PLUGINS = [
    "ArtifactoryDetector", "AzureStorageKeyDetector", "CloudantDetector", "DiscordBotTokenDetector",
    "IbmCloudIamDetector", "IbmCosHmacDetector", "MailchimpDetector", "NpmDetector", "PypiTokenDetector",
    "SendGridDetector", "SoftlayerDetector", "SquareOAuthDetector", "TelegramBotTokenDetector",
    "TwilioKeyDetector",
]
# The gate in front of detect-secrets: a superset of what those detectors can
# match, so that a line that passes no part of it cannot yield a finding and is
# never handed to detect-secrets. It has two parts.
#
# Token shapes, looked for in each long token (the pass over long tokens that
# layer 1 makes anyway) before layer 1 touches it: a token of such a shape is
# left whole and its line goes to detect-secrets (layer 1's entropy check would
# otherwise break a Discord or SendGrid token apart). Two shapes are not inside
# one long token and are found from their surroundings: a Telegram token's
# secret follows "<8-10 digits>:", an Artifactory token may be 11 characters.
DETECT_SECRETS_TOKEN_RX = re.compile(
    r"AKC[a-zA-Z0-9]{10}|AP[\dA-F][a-zA-Z0-9]{8}"  # Artifactory
    r"|AccountKey="  # Azure storage
    r"|[MNO][a-zA-Z\d_-]{23,25}\.[a-zA-Z\d_-]{6}\."  # Discord
    r"|_authToken="  # npm (after "//registry/:")
    r"|pypi-AgE"  # PyPI
    r"|SG\.[a-zA-Z0-9_-]{22}\."  # SendGrid
    r"|sq0csp-"  # Square
    r"|AC[a-z0-9]{32}|SK[a-z0-9]{32}"  # Twilio
    r"|[0-9a-z]{32}-us[0-9]")  # Mailchimp
_DISCORD_RX = re.compile(r"[MNO][a-zA-Z\d_-]{23,25}\.[a-zA-Z\d_-]{6}\.")
_DS_TOKEN_LITERALS_RX = re.compile(r"AKC|AP|AccountKey=|_authToken=|pypi-AgE|sq0csp-|AC|SK|-us")
# Every token rule's literal and every detect-secrets token literal, in one search.
_QUICK_RX = re.compile(TOKEN_PREFIX_RX.pattern + "|" + _DS_TOKEN_LITERALS_RX.pattern + r"|SG\.")
_TELEGRAM_BEFORE_RX = re.compile(r"\d{8,10}:$")
_ARTIFACTORY_RX = re.compile(r"AKC[a-zA-Z0-9]{10}|AP[\dA-F][a-zA-Z0-9]{8}")
# Keyword assignments of the Cloudant, IBM and SoftLayer detectors (keyword,
# optional quote or bracket, an assignment or spaces, 24+ word characters) and
# their URL forms: looked for in the lowercased text after layer 1, which has
# already removed most such values (``token=...``, ``password: ...``); a value
# layer 1 left whole is still there for detect-secrets to find.
_ASSIGNED_VALUE = r"[\"']?\]?[\"']? *(?:=>|:=|::|=|:| ) *[\"']?[\w\-]{24}"
# One regex per keyword, each starting with its literal (which the regex engine
# finds quickly), run only when the keyword occurs at all.
_KEYWORD_GATES = [(word, re.compile(word + tail + _ASSIGNED_VALUE)) for word, tail in (
    ("key", ""), ("pw", "d?"), ("pass", "(?:word)?"), ("token", ""))]
_KEYWORD_GATE_URLS = ("cloudant.com", "softlayer.com")
_TELEGRAM_SECRET_LEN = 35


def keyword_gate(text: str, low: str | None = None) -> bool:
    """False only if no assignment-shaped detect-secrets detector can match ``text``."""
    low = text.lower() if low is None else low
    for word, rx in _KEYWORD_GATES:
        if word in low and rx.search(low):
            return True
    return any(url in low for url in _KEYWORD_GATE_URLS)


def token_gate(text: str) -> bool:
    """False only if no token-shaped detect-secrets detector can match ``text``
    (the whole-text form of the per-token check :class:`Redactor` makes)."""
    for m in CANDIDATE_RX.finditer(text):
        if _ds_token_shape(m.group(0)) or _telegram_secret(text, m.start(), m.group(0)):
            return True
    return ("AKC" in text or "AP" in text) and _ARTIFACTORY_RX.search(text) is not None


def detect_secrets_gate(text: str) -> bool:
    """False only if no delegated detect-secrets detector can match ``text``."""
    return token_gate(text) or keyword_gate(text)


def _ds_token_shape(token: str) -> bool:
    """:data:`DETECT_SECRETS_TOKEN_RX`, after literal tests that rule out most tokens."""
    if "." in token and (_DISCORD_RX.search(token) or "SG." in token):
        return DETECT_SECRETS_TOKEN_RX.search(token) is not None
    return _DS_TOKEN_LITERALS_RX.search(token) is not None and DETECT_SECRETS_TOKEN_RX.search(token) is not None


def _telegram_secret(text: str, start: int, token: str) -> bool:
    return start > 8 and text[start - 1] == ":" and len(token) >= _TELEGRAM_SECRET_LEN \
        and _TELEGRAM_BEFORE_RX.search(text, max(0, start - 11), start) is not None


_detect_secrets_ready: bool | None = None


def detect_secrets_scanner() -> Callable[[str], list[tuple[str, str]]] | None:
    """A ``line -> [(type, value)]`` scanner backed by detect-secrets, or None if absent.

    detect-secrets keeps its configuration in a process-wide settings object;
    configuring it once (instead of a context manager per call, which costs
    about 1 ms) is what makes per-line scanning affordable.
    """
    global _detect_secrets_ready
    if _detect_secrets_ready is False:
        return None
    try:
        from detect_secrets.core.scan import scan_line
        from detect_secrets.settings import get_settings
    except ImportError:
        _detect_secrets_ready = False
        return None
    if not _detect_secrets_ready:
        settings = get_settings()
        settings.clear()
        settings.configure_plugins([{"name": n} for n in DETECT_SECRETS_PLUGINS])
        _detect_secrets_ready = True

    def scan(line: str) -> list[tuple[str, str]]:
        try:
            return [(s.type, s.secret_value or "") for s in scan_line(line)]
        except Exception:  # a third-party detector bug must not stop a harvest
            return []

    return scan


def _slug(kind: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", kind.lower()).strip("-") or "secret"


# ----- the redactor ----------------------------------------------------------------------

@dataclass
class Redactor:
    """Replaces secrets in text with typed markers and counts them by type.

    ``redact`` is total: it never raises and returns text with no secret it
    recognises. ``counts`` accumulates over the redactor's life (one harvest);
    ``scanned_chars`` and ``detect_secrets_lines`` say how much text it saw and
    how many lines passed the gate to detect-secrets.
    """

    use_detect_secrets: bool = True
    counts: Counter = field(default_factory=Counter)
    scanned_chars: int = 0
    detect_secrets_lines: int = 0

    def __post_init__(self) -> None:
        # detect-secrets is imported on first need: its import costs ~0.15 s, which a
        # harvest with nothing new (or nothing that passes the gate) should not pay.
        self._scan: Callable[[str], list[tuple[str, str]]] | None = None
        self._scan_loaded = not self.use_detect_secrets

    @property
    def total(self) -> int:
        return sum(self.counts.values())

    def redact(self, text: str | None) -> str:
        if not text:
            return text or ""
        self.scanned_chars += len(text)
        use_ds = not self._scan_loaded or self._scan is not None
        low = text.lower()
        low_is_current = True
        for trigger, lowered, rule, rx in TRIGGERED:
            if trigger in (low if lowered else text):
                new = rx.sub(lambda m, r=rule: self._apply(r, m), text)
                low_is_current = low_is_current and new == text
                text = new
        # One pass over long tokens: token rules, the entropy check, and the token
        # shapes of detect-secrets (whose lines are collected in _ds_lines).
        self._ds_lines: set[int] | None = set() if use_ds else None
        out = CANDIDATE_RX.sub(self._candidate, text)
        if use_ds and ("AKC" in text or "AP" in text):
            for m in _ARTIFACTORY_RX.finditer(text):
                self._ds_lines.add(text.count("\n", 0, m.start()))  # type: ignore[union-attr]
        if self._ds_lines:
            out = self._detect_secrets_tokens(out, self._ds_lines)
        if keyword_hint(low):
            out = KEYWORD_RX.sub(self._keyword, out)
        if use_ds and keyword_gate(out, low if low_is_current and out == text else None):
            out = self._detect_secrets(out, keyword_gate)
        return out

    def _apply(self, rule: Rule, m: re.Match[str]) -> str:
        self.counts[rule.kind] += 1
        return rule.replace(m) if rule.replace else marker(rule.kind)

    def _candidate(self, m: re.Match[str]) -> str:
        token = m.group(0)
        if _QUICK_RX.search(token) is None and ("." not in token or _DISCORD_RX.search(token) is None):
            # Most long tokens (paths, identifiers): no rule's literal, no detect-secrets
            # shape; only the entropy check (or a Telegram secret's context) applies.
            if self._ds_lines is not None and m.string[m.start() - 1:m.start()] == ":" \
                    and _telegram_secret(m.string, m.start(), token):
                self._ds_lines.add(m.string.count("\n", 0, m.start()))
                return token
            if len(token) >= 24 and _DIGIT.search(token):
                return self._entropy_pass(token, m.string, m.start())
            return token
        if self._ds_lines is not None and (_ds_token_shape(token) or (
                m.string[m.start() - 1:m.start()] == ":" and _telegram_secret(m.string, m.start(), token))):
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
        that are not public identifiers."""
        out, last = [], 0
        for e in _HIGH_ENTROPY_RX.finditer(token):
            value = e.group(0)
            if not looks_high_entropy(value):
                continue
            # Context is the token's own line (the original text around the token).
            at = offset + e.start()
            line_start = text.rfind("\n", 0, at) + 1
            line_end = text.find("\n", at)
            before = text[max(line_start, at - 80):at]
            after = text[at + len(value):(line_end if line_end >= 0 else len(text))][:40]
            if public_identifier(value, before, after):
                continue
            self.counts["high-entropy"] += 1
            out.append(token[last:e.start()])
            out.append(marker("high-entropy"))
            last = e.end()
        if not out:
            return token
        out.append(token[last:])
        return "".join(out)

    def _token_rule(self, t: re.Match[str]) -> str:
        return self._apply(TOKEN_RULE_BY_GROUP[t.lastgroup or ""], t)

    def _keyword(self, m: re.Match[str]) -> str:
        found = keyword_replacement(m)
        if found is None:
            return m.group(0)
        self.counts[found[1]] += 1
        return found[0]

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
                    self.counts[_slug(kind)] += 1
                    line = new
                    changed = True
            lines[i] = line
        return "\n".join(lines) if changed else text


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

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
   microseconds a line, so it only sees lines that :func:`detect_secrets_gate`
   (a superset of what those detectors can match) flags. It runs first, on the
   text as written, because its patterns need whole tokens.

Redaction errs on the side of removing too much: a false positive costs a word
of a prompt, a false negative leaks a credential into a database.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field
from typing import Callable

from sleep.public_ids import looks_high_entropy, public_identifier, shannon_entropy
from sleep.secret_rules import (CANDIDATE_RX, KEYWORD_HINT_RX, KEYWORD_RX, MARKER, TOKEN_RULE_BY_GROUP,
                                TOKEN_RULES_RX, TRIGGERED, Rule, keyword_replacement, marker)

__all__ = ["MARKER", "Redactor", "looks_high_entropy", "shannon_entropy", "detect_secrets_gate", "detect_secrets_scanner"]

_HIGH_ENTROPY_RX = re.compile(r"(?<![A-Za-z0-9+/_\-=.])[A-Za-z0-9+/_\-]{24,}={0,2}(?![A-Za-z0-9+/_\-=])")
_DIGIT = re.compile(r"[0-9]")
_LETTER = re.compile(r"[A-Za-z]")


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
# A superset of what those detectors can match, detector by detector (their
# patterns, loosened): a line that passes none cannot yield a finding, so it is
# never handed to detect-secrets. Each regex starts with a literal or a narrow
# character class, which the regex engine skips to without trying every position;
# one alternation of all of them would cost more than the redaction itself.
_GATE_RXS = [re.compile(p) for p in (
    r"AKC[a-zA-Z0-9]{10}", r"AP[\dA-F][a-zA-Z0-9]{8}",  # Artifactory
    r"AccountKey=",  # Azure storage
    r"[MNO][a-zA-Z\d_-]{23,25}\.[a-zA-Z\d_-]{6}\.",  # Discord
    r"/:_authToken=",  # npm
    r"pypi-AgE",  # PyPI
    r"SG\.[a-zA-Z0-9_-]{22}\.",  # SendGrid
    r"sq0csp-",  # Square
    r"\d{8,10}:[0-9A-Za-z_-]{35}",  # Telegram
    r"AC[a-z0-9]{32}", r"SK[a-z0-9]{32}",  # Twilio
)]
_MAILCHIMP_GATE_RX = re.compile(r"[0-9a-z]{32}-us[0-9]")
# Run on the lowercased text: the keyword assignments of the Cloudant, IBM and
# SoftLayer detectors (keyword, optional quote or bracket, an assignment or
# spaces, 24+ word characters), and their URL forms.
_LOWER_GATE_RX = re.compile(
    r"[kpt](?:ey|wd|w|assword|ass|oken)[\"']?\]?[\"']? *(?:=>|:=|::|=|:| )? *[\"']?[\w\-]{24}"
    r"|cloudant\.com|softlayer\.com")


def detect_secrets_gate(text: str, low: str | None = None) -> bool:
    """False only if no delegated detect-secrets detector can match ``text``
    (``low``: the text lowercased, if the caller has it)."""
    if "-us" in text and _MAILCHIMP_GATE_RX.search(text):
        return True
    if any(rx.search(text) for rx in _GATE_RXS):
        return True
    return _LOWER_GATE_RX.search(text.lower() if low is None else low) is not None


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
        # detect-secrets first: its patterns need the whole token (a Discord token's
        # first part alone already looks random to the entropy check below).
        low = text.lower()
        if (not self._scan_loaded or self._scan is not None) and detect_secrets_gate(text, low):
            text = self._detect_secrets(text)
            low = text.lower()
        for trigger, lowered, rule, rx in TRIGGERED:
            if trigger in (low if lowered else text):
                text = rx.sub(lambda m, r=rule: self._apply(r, m), text)
        text = CANDIDATE_RX.sub(self._candidate, text)
        if KEYWORD_HINT_RX.search(low):
            text = KEYWORD_RX.sub(self._keyword, text)
        return text

    def _apply(self, rule: Rule, m: re.Match[str]) -> str:
        self.counts[rule.kind] += 1
        return rule.replace(m) if rule.replace else marker(rule.kind)

    def _candidate(self, m: re.Match[str]) -> str:
        token = m.group(0)
        if TOKEN_RULES_RX.search(token):
            token = TOKEN_RULES_RX.sub(self._token_rule, token)
        if len(token) >= 24 and _DIGIT.search(token):  # random tokens this long hold a digit
            token = self._entropy_pass(token, m.string, m.start())
        return token

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

    def _detect_secrets(self, text: str) -> str:
        lines = text.split("\n")
        changed = False
        for i, line in enumerate(lines):
            if not detect_secrets_gate(line):
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

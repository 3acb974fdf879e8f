"""Layer 2 of redaction: the detect-secrets detectors that add recall to layer 1, and their gate.

The rest of the ``detect-secrets`` detector catalogue (SendGrid, Twilio,
Mailchimp, PyPI, Discord, Telegram, Azure storage, Artifactory, IBM,
Cloudant, SoftLayer) adds recall for those kinds, but costs tens of
microseconds a line (and 0.15 s to import), so it only sees lines that pass a
gate built as a superset of what those detectors can match: token shapes are
looked for in each long token before layer 1 could break it apart, keyword
assignments in what layer 1 left. :class:`sleep.redact.Redactor` drives it.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from sleep.redact.rules import CANDIDATE_RX, TOKEN_PREFIX_RX

__all__ = ["ARTIFACTORY_RX", "DETECT_SECRETS_PLUGINS", "DETECT_SECRETS_TOKEN_RX", "DISCORD_RX", "QUICK_RX",
           "detect_secrets_gate", "detect_secrets_scanner", "ds_token_shape", "keyword_gate", "telegram_secret",
           "token_gate"]

# The detectors of detect-secrets that add recall to layer 1. Its AWS, GitHub,
# GitLab, JWT, OpenAI, Slack, Square, Stripe and basic-auth detectors match a subset of
# what layer 1 already removes (with exact spans), so they are not run;
# keyword, entropy and private-key detection are layer 1's own.
DETECT_SECRETS_PLUGINS = [
    "ArtifactoryDetector", "AzureStorageKeyDetector", "CloudantDetector", "DiscordBotTokenDetector",
    "IbmCloudIamDetector", "IbmCosHmacDetector", "MailchimpDetector", "NpmDetector", "PypiTokenDetector",
    "SendGridDetector", "SoftlayerDetector", "TelegramBotTokenDetector",
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
    r"|AC[a-z0-9]{32}|SK[a-z0-9]{32}"  # Twilio
    r"|[0-9a-z]{32}-us[0-9]")  # Mailchimp
DISCORD_RX = re.compile(r"[MNO][a-zA-Z\d_-]{23,25}\.[a-zA-Z\d_-]{6}\.")
_DS_TOKEN_LITERALS_RX = re.compile(r"AKC|AP|AccountKey=|_authToken=|pypi-AgE|AC|SK|-us")
# Every token rule's literal and every detect-secrets token literal, in one search.
QUICK_RX = re.compile(TOKEN_PREFIX_RX.pattern + "|" + _DS_TOKEN_LITERALS_RX.pattern + r"|SG\.")
_TELEGRAM_BEFORE_RX = re.compile(r"\d{8,10}:$")
ARTIFACTORY_RX = re.compile(r"AKC[a-zA-Z0-9]{10}|AP[\dA-F][a-zA-Z0-9]{8}")
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
# Every literal keyword_gate looks for (in the lowercased text).
KEYWORD_GATE_WORDS = tuple(word for word, _ in _KEYWORD_GATES) + _KEYWORD_GATE_URLS
_TELEGRAM_SECRET_LEN = 35
TELEGRAM_SECRET_LEN = _TELEGRAM_SECRET_LEN  # no shorter token after a ':' is a Telegram secret


def keyword_gate(text: str, low: str | None = None, present: frozenset[str] | None = None) -> bool:
    """False only if no assignment-shaped detect-secrets detector can match ``text``.
    ``low``: its lowercase, when the caller has it; ``present``: which of
    :data:`KEYWORD_GATE_WORDS` ``low`` holds, when the caller knows (sleep.redact.literal_scan)."""
    if low is None:
        low, present = text.lower(), None
    if present is None:
        present = frozenset(w for w in KEYWORD_GATE_WORDS if w in low)
    for word, rx in _KEYWORD_GATES:
        if word in present and rx.search(low):
            return True
    return any(url in present for url in _KEYWORD_GATE_URLS)


def token_gate(text: str) -> bool:
    """False only if no token-shaped detect-secrets detector can match ``text``
    (the whole-text form of the per-token check :class:`Redactor` makes)."""
    for m in CANDIDATE_RX.finditer(text):
        if ds_token_shape(m.group(0)) or telegram_secret(text, m.start(), m.group(0)):
            return True
    return ("AKC" in text or "AP" in text) and ARTIFACTORY_RX.search(text) is not None


def detect_secrets_gate(text: str) -> bool:
    """False only if no delegated detect-secrets detector can match ``text``."""
    return token_gate(text) or keyword_gate(text)


def ds_token_shape(token: str) -> bool:
    """:data:`DETECT_SECRETS_TOKEN_RX`, after literal tests that rule out most tokens."""
    if "." in token and (DISCORD_RX.search(token) or "SG." in token):
        return DETECT_SECRETS_TOKEN_RX.search(token) is not None
    return _DS_TOKEN_LITERALS_RX.search(token) is not None and DETECT_SECRETS_TOKEN_RX.search(token) is not None


def telegram_secret(text: str, start: int, token: str) -> bool:
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

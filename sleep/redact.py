"""Secret redaction at the harvest boundary.

Every piece of transcript text that SkillOpt-Sleep stores (prompts, final
answers, feedback, history lines) passes through :meth:`Redactor.redact` first.
Each secret is replaced by a typed marker such as ``[REDACTED:github-token]``
and counted by type, so the harvest can report what it removed.

Two layers, in this order:

1. Span-exact patterns for the kinds the product must always catch (provider
   API keys, GitHub/GitLab/Slack tokens, AWS keys, JWTs, private key blocks,
   credentials in URLs and connection strings, ``password=``/``secret=``/
   ``token=`` values, bearer tokens) and a high-entropy token check. These need
   exact spans (a private key block spans lines; a URL keeps its host).
2. The maintained detector catalogue of ``detect-secrets`` (Stripe, Twilio,
   SendGrid, npm, PyPI, Discord, Telegram, Azure, IBM, Mailchimp, Square,
   Artifactory, ...), run on lines that still hold a long token.

Redaction errs on the side of removing too much: a false positive costs a word
of a prompt, a false negative leaks a credential into a database.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from dataclasses import dataclass, field
from typing import Callable

MARKER = "[REDACTED:{}]"

# Kinds of values that are placeholders, not secrets: `token=$TOKEN`, `password=<pw>`.
_PLACEHOLDER_START = ("$", "<", "{", "%", "[REDACTED", "*", "(", "process.env", "os.environ")
_PLACEHOLDER_WORDS = {"true", "false", "null", "none", "nil", "required", "optional",
                      "string", "str", "undefined", "env", "secret", "password", "token"}

_KEYWORD_KIND = [
    (re.compile(r"passw(or)?d|pwd", re.I), "password"),
    (re.compile(r"api[_\-]?key|apikey|access[_\-]?key", re.I), "api-key"),
    (re.compile(r"private[_\-]?key", re.I), "private-key"),
    (re.compile(r"secret", re.I), "secret"),
    (re.compile(r"credential", re.I), "credentials"),
    (re.compile(r"token", re.I), "token"),
]


def _marker(kind: str) -> str:
    return MARKER.format(kind)


def shannon_entropy(text: str) -> float:
    """Bits per character of ``text`` (0 for empty)."""
    if not text:
        return 0.0
    n = len(text)
    return -sum(c / n * math.log2(c / n) for c in Counter(text).values())


# ----- layer 1: span-exact patterns ------------------------------------------------------

@dataclass(frozen=True)
class _Rule:
    kind: str
    pattern: str  # named groups must be unique across rules (prefixed by the rule's name)
    # Builds the replacement from the match; default replaces the whole match.
    replace: Callable[[re.Match[str]], str] | None = None


def _keep(prefix: str, kind: str, suffix: str | None = None) -> Callable[[re.Match[str]], str]:
    return lambda m: m.group(prefix) + _marker(kind) + (m.group(suffix) if suffix else "")


# Rules found inside long tokens (see _CANDIDATE_RX): each has a distinctive prefix.
# At one position the first listed rule wins, so anthropic precedes openai.
_TOKEN_RULES: list[_Rule] = [
    _Rule("anthropic-key", r"\bsk-ant-[A-Za-z0-9_\-]{20,}"),
    _Rule("openai-key", r"\bsk-(?:proj-|svcacct-|admin-|or-v1-)?[A-Za-z0-9_\-]{20,}"),
    _Rule("github-token", r"\b(?:gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{30,})"),
    _Rule("gitlab-token", r"\bgl(?:pat|dt|rt|ptt|cbt|oas|ft|imt|agent)-[A-Za-z0-9_\-]{20,}"),
    _Rule("slack-token", r"\bxox[abposrce]-[A-Za-z0-9\-]{10,}"),
    _Rule("aws-access-key", r"\b(?:AKIA|ASIA|ABIA|ACCA|AGPA|AIDA|AROA|AIPA|ANPA|ANVA|APKA)[A-Z0-9]{16}\b"),
    _Rule("google-api-key", r"\bAIza[0-9A-Za-z_\-]{35}"),
    _Rule("stripe-key", r"\b(?:sk|rk|pk)_(?:live|test)_[A-Za-z0-9]{16,}"),
    _Rule("jwt", r"\beyJ[A-Za-z0-9_\-]{5,}\.eyJ[A-Za-z0-9_\-]{5,}\.[A-Za-z0-9_\-]{5,}"),
]
_TOKEN_RULE_BY_GROUP = {f"r{i}": rule for i, rule in enumerate(_TOKEN_RULES)}
_TOKEN_RULES_RX = re.compile("|".join(f"(?P<r{i}>{r.pattern})" for i, r in enumerate(_TOKEN_RULES)))
# Every token rule needs 16+ characters of this class; finding such runs first is
# what keeps redaction cheap on ordinary text (a scan with one character class).
_CANDIDATE_RX = re.compile(r"[A-Za-z0-9_\-.+/=]{16,}")

# Rules with their own trigger: (substring that must be present, kind, regex, replacement).
_PRIVATE_KEY_RX = re.compile(
    r"-----BEGIN (?P<pk>(?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?)-----[\s\S]*?(?:-----END (?P=pk)-----|\Z)")
_URL_CREDENTIALS_RX = re.compile(r"(?P<url>://[^\s:/?#@\[\]\"'`]{0,256}:)[^\s/?#@\"'`]{1,256}(?P<at>@)")
_SLACK_WEBHOOK_RX = re.compile(r"https://hooks\.slack\.com/(?:services|workflows)/[A-Za-z0-9/_\-]+")
_AWS_SECRET_RX = re.compile(r"(?i:(?P<aws>aws_?secret(?:_?access)?_?key[\"']?\s*[=:]\s*[\"']?))[A-Za-z0-9/+=]{40}")
_BEARER_RX = re.compile(r"(?P<bearer>\b[Bb][Ee][Aa][Rr][Ee][Rr]\s+)[A-Za-z0-9._~+/\-]{16,}=*")
_TRIGGERED: list[tuple[str, bool, _Rule, re.Pattern[str]]] = [
    ("-----BEGIN", False, _Rule("private-key", ""), _PRIVATE_KEY_RX),
    ("://", False, _Rule("url-credentials", "", _keep("url", "url-credentials", "at")), _URL_CREDENTIALS_RX),
    ("hooks.slack.com", False, _Rule("slack-webhook", ""), _SLACK_WEBHOOK_RX),
    ("aws", True, _Rule("aws-secret-key", "", _keep("aws", "aws-secret-key")), _AWS_SECRET_RX),
    ("bearer", True, _Rule("bearer-token", "", _keep("bearer", "bearer-token")), _BEARER_RX),
]
# A case-sensitive search on the lowercased text is ~10x faster than the
# case-insensitive assignment regex, and rules it out for almost all text.
_KEYWORD_HINT_RX = re.compile(
    r"(?:passw(?:or)?d|pwd|secret(?:[_\-]?key)?|token|api[_\-]?key|apikey|access[_\-]?key"
    r"|private[_\-]?key|credentials?)[\"']?\s*(?::=|=|:)")

def _keyword_replace(m: re.Match[str]) -> str | None:
    key, sep, quote, value = m.group("key"), m.group("sep"), m.group("q"), m.group("val")
    low = value.lower()
    if value.startswith(_PLACEHOLDER_START) or low in _PLACEHOLDER_WORDS or "REDACTED" in value:
        return None
    if ":" in sep and not quote:
        # "token: the thing" is prose; YAML "password: hunter2" is not. An unquoted
        # value after ':' must look like a credential (long-ish, digit or symbol).
        if len(value) < 6 or not re.search(r"[0-9_\-+/=!@#%^&.]", value):
            return None
    kind = next((k for rx, k in _KEYWORD_KIND if rx.search(key)), "secret")
    return f"{key}{sep}{quote}{_marker(kind)}"  # the closing quote stays in the text


# Matches from the keyword on (a prefix such as DB_ in DB_PASSWORD stays in the text);
# the keyword must end the key: "max_tokens=100" is not a token assignment.
_KEYWORD_RX = re.compile(
    r"(?i)(?P<key>(?:passw(?:or)?d|pwd|secret(?:[_\-]?key)?|token|api[_\-]?key|apikey|access[_\-]?key"
    r"|private[_\-]?key|credentials?)[\"']?)"
    r"(?P<sep>\s*(?::=|=|:)\s*)(?P<q>[\"']?)(?P<val>[^\s\"'`,;&)\]}]{3,})")

_HIGH_ENTROPY_RX = re.compile(r"(?<![A-Za-z0-9+/_\-=.])[A-Za-z0-9+/_\-]{24,}={0,2}(?![A-Za-z0-9+/_\-=])")
_HEX_RX = re.compile(r"^[0-9a-fA-F]+$")
_DIGIT = re.compile(r"[0-9]")
_LETTER = re.compile(r"[A-Za-z]")
_LOWER = re.compile(r"[a-z]")
_UPPER = re.compile(r"[A-Z]")
_UUID_RX = re.compile(r"^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$")
# A line worth handing to detect-secrets holds a long token mixing letters and
# digits: every credential format its detectors know does; words, paths and
# identifiers of code usually do not.
_LONG_TOKEN_RX = re.compile(r"[A-Za-z0-9_\-+/.=:]{16,}")
_DIGIT_RX = re.compile(r"\d")
_ALPHA_RX = re.compile(r"[A-Za-z]")


def _worth_scanning(line: str) -> bool:
    for token in _LONG_TOKEN_RX.findall(line):
        if _DIGIT_RX.search(token) and _ALPHA_RX.search(token):
            return True
    return False


def looks_high_entropy(token: str) -> bool:
    """True if ``token`` looks like a random secret rather than a word, path or id.

    Hex strings: 32+ chars, mixed digits/letters, not a 40-char git object id.
    Base64-ish strings: 24+ chars with upper, lower and digits, and entropy near
    what random text of that length has (identifiers and paths fall short).
    """
    token = token.rstrip("=")
    n = len(token)
    if n < 24 or _UUID_RX.match(token):
        return False
    if not _DIGIT.search(token):
        return False  # every random token of this length has a digit; words do not
    if _HEX_RX.match(token):
        if n < 32 or n == 40:
            return False
        return _LETTER.search(token) is not None and shannon_entropy(token) >= 3.0
    # Path-like tokens (a/b/c) and snake/kebab names are not random strings.
    if token.count("/") >= 2 or token.count("-") >= 4 or token.count("_") >= 4:
        return False
    if not (_LOWER.search(token) and _UPPER.search(token)):
        return False
    threshold = min(4.3, 0.85 * math.log2(n))
    return shannon_entropy(token) >= threshold


# ----- layer 2: detect-secrets -----------------------------------------------------------

# Detectors we delegate to detect-secrets. Keyword, entropy and private-key
# detection are done above (with exact spans); public IPs are not secrets here.
_DETECT_SECRETS_PLUGINS = [
    "ArtifactoryDetector", "AWSKeyDetector", "AzureStorageKeyDetector", "BasicAuthDetector",
    "CloudantDetector", "DiscordBotTokenDetector", "GitHubTokenDetector", "GitLabTokenDetector",
    "IbmCloudIamDetector", "IbmCosHmacDetector", "JwtTokenDetector", "MailchimpDetector",
    "NpmDetector", "OpenAIDetector", "PypiTokenDetector", "SendGridDetector", "SlackDetector",
    "SoftlayerDetector", "SquareOAuthDetector", "StripeDetector", "TelegramBotTokenDetector",
    "TwilioKeyDetector",
]
_detect_secrets_ready: bool | None = None


def _detect_secrets_scan() -> Callable[[str], list[tuple[str, str]]] | None:
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
        settings.configure_plugins([{"name": n} for n in _DETECT_SECRETS_PLUGINS])
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
    recognises. ``counts`` accumulates over the redactor's life (one harvest).
    """

    use_detect_secrets: bool = True
    counts: Counter = field(default_factory=Counter)

    def __post_init__(self) -> None:
        self._mixed_token = False
        # detect-secrets is imported on first need: its import costs ~0.15 s, which a
        # harvest with nothing new (or nothing token-like) should not pay.
        self._scan: Callable[[str], list[tuple[str, str]]] | None = None
        self._scan_loaded = not self.use_detect_secrets

    @property
    def total(self) -> int:
        return sum(self.counts.values())

    def redact(self, text: str | None) -> str:
        if not text:
            return text or ""
        low = text.lower()
        for trigger, lowered, rule, rx in _TRIGGERED:
            if trigger in (low if lowered else text):
                text = rx.sub(lambda m, r=rule: self._apply(r, m), text)
        # One scan for long tokens does the token rules, the entropy check, and
        # decides whether detect-secrets has anything to look at.
        self._mixed_token = False
        text = _CANDIDATE_RX.sub(self._candidate, text)
        if _KEYWORD_HINT_RX.search(low):
            text = _KEYWORD_RX.sub(self._keyword, text)
        if self._mixed_token and (not self._scan_loaded or self._scan is not None):
            text = self._detect_secrets(text)
        return text

    def _apply(self, rule: _Rule, m: re.Match[str]) -> str:
        self.counts[rule.kind] += 1
        return rule.replace(m) if rule.replace else _marker(rule.kind)

    def _candidate(self, m: re.Match[str]) -> str:
        token = m.group(0)
        if _TOKEN_RULES_RX.search(token):
            token = _TOKEN_RULES_RX.sub(self._token_rule, token)
        if _DIGIT.search(token):  # entropy and detect-secrets targets all hold a digit
            if len(token) >= 24:
                token = _HIGH_ENTROPY_RX.sub(self._entropy, token)
            if not self._mixed_token and _LETTER.search(token) and _DIGIT.search(token):
                self._mixed_token = True
        return token

    def _token_rule(self, t: re.Match[str]) -> str:
        return self._apply(_TOKEN_RULE_BY_GROUP[t.lastgroup or ""], t)

    def _keyword(self, m: re.Match[str]) -> str:
        out = _keyword_replace(m)
        if out is None:
            return m.group(0)
        self.counts[out.rsplit("[REDACTED:", 1)[1].split("]", 1)[0]] += 1
        return out

    def _entropy(self, m: re.Match[str]) -> str:
        if looks_high_entropy(m.group(0)):
            self.counts["high-entropy"] += 1
            return _marker("high-entropy")
        return m.group(0)

    def _detect_secrets(self, text: str) -> str:
        lines = text.split("\n")
        changed = False
        for i, line in enumerate(lines):
            if not _worth_scanning(line):
                continue
            if not self._scan_loaded:
                self._scan, self._scan_loaded = _detect_secrets_scan(), True
            if self._scan is None:
                break
            for kind, value in self._scan(line):
                new = _replace_secret(line, value, _marker(_slug(kind)))
                if new != line:
                    self.counts[_slug(kind)] += 1
                    line = new
                    changed = True
            lines[i] = line
        return "\n".join(lines) if changed else text


def _replace_secret(line: str, value: str, marker: str) -> str:
    """Replace ``value`` in ``line``; a short value (some detectors report only a
    prefix) takes the whole token around it with it."""
    if not value:
        return line
    at = line.find(value)
    if at < 0:
        return line
    if len(value) >= 8:
        return line.replace(value, marker)
    start, end = at, at + len(value)
    token_chars = re.compile(r"[A-Za-z0-9_\-+/=.]")
    while start > 0 and token_chars.match(line[start - 1]):
        start -= 1
    while end < len(line) and token_chars.match(line[end]):
        end += 1
    return line[:start] + marker + line[end:]

"""The secret patterns :class:`sleep.redact.Redactor` applies itself (span-exact).

Three groups, each with a cheap gate so that ordinary text costs almost nothing:

- token rules: credentials with a distinctive prefix (``sk-ant-``, ``ghp_``,
  ``AKIA``, ``hf_``, JWTs, ...), searched only inside long tokens
  (:data:`CANDIDATE_RX`);
- triggered rules: shapes that span or keep context (private key blocks,
  credentials in URLs, Slack webhooks, AWS secret keys, bearer and
  ``Authorization:`` headers), each run only when its trigger substring is present
  (:mod:`sleep.redact.typed_passwords` adds passwords typed in commands and prose);
- keyword assignments: ``password=``, ``secret:``, ``token=``, ``api_key:`` ...,
  run only when :func:`keyword_hint` finds such an assignment.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

MARKER = "[REDACTED:{}]"


def marker(kind: str) -> str:
    return MARKER.format(kind)


@dataclass(frozen=True)
class Rule:
    """A kind of secret. A rule's regex names the secret itself group ``v`` when the
    match keeps context (``password is <v>``); without it the whole match is the secret.
    ``vet`` (when set) says whether a match really holds a secret (prose is not)."""

    kind: str
    vet: Callable[[re.Match[str]], bool] | None = None

    def replace(self, m: re.Match[str]) -> str:
        """The match with its secret replaced by this rule's marker."""
        if "v" not in m.re.groupindex:
            return marker(self.kind)
        start, end = m.span("v")
        return m.string[m.start():start] + marker(self.kind) + m.string[end:m.end()]

    @staticmethod
    def value(m: re.Match[str]) -> str:
        """The secret of a match, without the quotes written around it."""
        value = m.group("v") if "v" in m.re.groupindex else m.group(0)
        return unquote(value)


def unquote(value: str) -> str:
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"`":
        return value[1:-1]
    return value


# ----- token rules (inside long tokens) ------------------------------------------------------

# At one position the first listed rule wins, so anthropic precedes openai.
TOKEN_PATTERNS: list[tuple[str, str]] = [
    ("anthropic-key", r"\bsk-ant-[A-Za-z0-9_\-]{20,}"),
    ("openai-key", r"\bsk-(?:proj-|svcacct-|admin-|or-v1-)?[A-Za-z0-9_\-]{20,}"),
    ("github-token", r"\b(?:gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{30,})"),
    ("gitlab-token", r"\bgl(?:pat|dt|rt|ptt|cbt|oas|ft|imt|agent)-[A-Za-z0-9_\-]{20,}"),
    ("slack-token", r"\bxox[abposrce]-[A-Za-z0-9\-]{10,}"),
    ("aws-access-key", r"\b(?:AKIA|ASIA|ABIA|ACCA|AGPA|AIDA|AROA|AIPA|ANPA|ANVA|APKA|A3T[A-Z0-9])[A-Z0-9]{16}\b"),
    ("google-api-key", r"\bAIza[0-9A-Za-z_\-]{35}"),
    ("stripe-key", r"\b(?:sk|rk|pk)_(?:live|test)_[A-Za-z0-9]{16,}"),
    ("huggingface-token", r"\bhf_[A-Za-z0-9]{30,}"),
    ("npm-token", r"\bnpm_[A-Za-z0-9]{36}\b"),
    ("databricks-token", r"\bdapi[0-9a-f]{32}(?:-\d+)?\b"),
    ("digitalocean-token", r"\bdo[opr]_v1_[0-9a-f]{64}\b"),
    ("shopify-token", r"\bshp(?:at|ca|pa|ss)_[0-9a-fA-F]{32}\b"),
    ("groq-key", r"\bgsk_[A-Za-z0-9]{48,}"),
    # A JWT: base64url JSON header and payload (both start "ey"), signature optional.
    ("jwt", r"(?<![A-Za-z0-9])eyJ[A-Za-z0-9_\-]{5,}\.ey[A-Za-z0-9_\-]{5,}(?:\.[A-Za-z0-9_\-]*)?"),
    # Issue 35. age identities: a secret key, and a plugin's identity (YubiKey, TPM, ...),
    # both bech32 (upper case) after "-1".
    ("age-secret-key",
     r"(?<![A-Za-z0-9])AGE-(?:SECRET-KEY|PLUGIN-[A-Z0-9]{1,32})-1[QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L]{20,}"),
    # Atlassian API tokens (ATATT3x...) and their admin/org relatives (ATCTT3x...).
    ("atlassian-token", r"(?<![A-Za-z0-9])AT[AC]TT3[A-Za-z0-9_\-=]{40,}"),
    # Doppler: personal (pt), service (st, perhaps with the config's name), CLI (ct), service
    # account (sa), SCIM and audit tokens.
    ("doppler-token", r"(?<![A-Za-z0-9])dp\.(?:pt|st|ct|sa|scim|audit)\.(?:[A-Za-z0-9_\-]{1,64}\.)?[A-Za-z0-9]{40,}"),
    # Mailgun's private API key and public validation key (32 lowercase hex after "key-").
    ("mailgun-key", r"(?<![A-Za-z0-9])(?:pub)?key-[0-9a-f]{32}(?![A-Za-z0-9])"),
    # New Relic: user (NRAK), admin (NRAA), browser (NRJS), insert (NRII), query (NRIQ), REST
    # (NRRA), synthetics (NRSP) keys; an ingest licence key is 36 hex ending "NRAL".
    ("newrelic-key", r"(?<![A-Za-z0-9])(?:NR(?:AK|AA|JS|II|IQ|RA|SP)-[A-Za-z0-9_\-]{19,}|[0-9a-fA-F]{36}NRAL)"),
    ("pulumi-token", r"(?<![A-Za-z0-9])pul-[0-9a-f]{40}(?![0-9a-f])"),
    # Linear: personal API keys, OAuth access tokens, webhook signing secrets.
    ("linear-key", r"(?<![A-Za-z0-9])lin_(?:api|oauth|wh)_[A-Za-z0-9]{32,}"),
    # Square: access tokens (sq0atp, sandbox sq0atb, and the newer EAAA...) and application
    # secrets (sq0csp, sandbox sq0csb). An application id (sq0idp-) is public.
    ("square-token", r"(?<![A-Za-z0-9])(?:sq0(?:atp|atb|csp|csb)-[A-Za-z0-9_\-]{22,}|EAAA[A-Za-z0-9_\-+=]{56,})"),
]
# Literals one of which every token rule's match holds: a cheap test before the
# rules' alternation, which costs more than the scan for long tokens itself.
TOKEN_PREFIX_RX = re.compile(
    r"sk-|gh[pousr]_|github_pat_|gl(?:pat|dt|rt|ptt|cbt|oas|ft|imt|agent)-|xox|A[KSBCGIRPN][A-Z0-9]{2}|A3T"
    r"|AIza|k_live_|k_test_|hf_|npm_|dapi|_v1_|shp|gsk_|eyJ"
    r"|AGE-|T[AC]TT3|dp\.|key-|NR[A-Z]{2}-|NRAL|pul-|lin_|sq0|EAAA")
def placeholder_value(value: str) -> bool:
    """A value written to be replaced, not a secret: ``your_key``, ``sk-ai-v1-your-key-here``,
    ``sk-proj-xxxxx``, ``changeme``, ``example``. Random credentials hold none of
    these words (each is 4+ letters; a random base62 string holds a given one about once
    in ten million)."""
    return _PLACEHOLDER_VALUE_RX.search(value) is not None


_PLACEHOLDER_VALUE_RX = re.compile(
    r"(?i)(?:^|[-_.])your(?:[-_.]|$)|^your[A-Z_\-]|your[-_]?(?:own[-_]?)?(?:api[-_]?)?(?:key|token|secret)"
    r"|[-_]here$|x{5,}|\*{4,}|placeholder|example|changeme|change[-_]me|replace[-_]?(?:me|this)|dummy")


TOKEN_RULE_BY_GROUP = {f"r{i}": Rule(kind, vet=lambda m: not placeholder_value(m.group(0)))
                       for i, (kind, _) in enumerate(TOKEN_PATTERNS)}
TOKEN_RULES_RX = re.compile("|".join(f"(?P<r{i}>{p})" for i, (_, p) in enumerate(TOKEN_PATTERNS)))
# Every token rule and the entropy check need 16+ characters of this class; finding
# such runs first is what keeps redaction cheap on ordinary text.
# The lookbehind makes a run's inner positions fail at once (without it, every
# position of every shorter word is tried to 16 characters).
CANDIDATE_RX = re.compile(r"(?<![A-Za-z0-9_\-.+/=])[A-Za-z0-9_\-.+/=]{16,}")

# ----- triggered rules --------------------------------------------------------------------

_PRIVATE_KEY_RX = re.compile(
    r"-----BEGIN (?P<pk>(?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?)-----[\s\S]*?(?:-----END (?P=pk)-----|\Z)")
_URL_CREDENTIALS_RX = re.compile(r"://[^\s:/?#@\[\]\"'`]{0,256}:(?P<v>[^\s/?#@\"'`]{1,256})@")
_SLACK_WEBHOOK_RX = re.compile(r"https://hooks\.slack\.com/(?:services|workflows)/[A-Za-z0-9/_\-]+")
_AWS_SECRET_RX = re.compile(r"(?i:aws_?secret(?:_?access)?_?key[\"']?\s*[=:]?\s*[\"']?)(?P<v>[A-Za-z0-9/+=]{40})")
_BEARER_RX = re.compile(r"\b[Bb][Ee][Aa][Rr][Ee][Rr]\s+(?P<v>[A-Za-z0-9._~+/\-]{16,}=*)")
# "Authorization: Basic <b64>" / "Token <key>" / "Digest ...": only after the header name,
# where the word cannot be prose.
_AUTH_HEADER_RX = re.compile(
    r"\b[Aa]uthorization[\"']?\s*[:=]\s*[\"']?(?:Basic|Token|Digest|Bearer)\s+(?P<v>[A-Za-z0-9+/=._~\-]{8,})")

# (substrings one of which must be present, whether to look for them in the lowercased
# text, rule, regex), applied in this order.
TRIGGERED: list[tuple[tuple[str, ...], bool, Rule, re.Pattern[str]]] = [
    (("-----BEGIN",), False, Rule("private-key"), _PRIVATE_KEY_RX),
    (("://",), False, Rule("url-credentials"), _URL_CREDENTIALS_RX),
    (("hooks.slack.com",), False, Rule("slack-webhook"), _SLACK_WEBHOOK_RX),
    (("aws",), True, Rule("aws-secret-key"), _AWS_SECRET_RX),
    (("authorization",), True, Rule("auth-header"), _AUTH_HEADER_RX),
    (("bearer",), True, Rule("bearer-token"), _BEARER_RX),
]

# ----- keyword assignments ----------------------------------------------------------------

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
_KEYWORDS = (r"(?:passw(?:or)?d|pwd|secret(?:[_\-]?key)?|token|api[_\-]?key|apikey|access[_\-]?key"
             r"|private[_\-]?key|credentials?)")
# A case-sensitive search on the lowercased text is ~10x faster than the
# case-insensitive assignment regex, and rules it out for almost all text; each
# keyword's own regex starts with its literal, which the engine finds fast.
_HINT_TAIL = r"[\"']?\s*(?::=|=|:)"
KEYWORD_HINTS = [(word, re.compile(word + rest + _HINT_TAIL)) for word, rest in (
    ("passw", "(?:or)?d"), ("pwd", ""), ("secret", "(?:[_\\-]?key)?"), ("token", ""), ("api", "[_\\-]?key"),
    ("access", "[_\\-]?key"), ("private", "[_\\-]?key"), ("credential", "s?"))]


def keyword_hint(low: str, present: frozenset[str] | None = None) -> bool:
    """True if the lowercased text may hold a ``keyword = value`` assignment. ``present``:
    which hint words ``low`` holds, when the caller knows (sleep.redact.literal_scan)."""
    for word, rx in KEYWORD_HINTS:
        if (word in low if present is None else word in present) and rx.search(low):
            return True
    return False
# Matches from the keyword on (a prefix such as DB_ in DB_PASSWORD stays in the text);
# the keyword must end the key: "max_tokens=100" is not a token assignment. A quoted
# value runs to its closing quote (a password may hold '&' or ';').
KEYWORD_RX = re.compile(
    r"(?i)(?P<key>" + _KEYWORDS + r"[\"']?)(?P<sep>\s*(?::=|=|:)\s*)"
    r"(?:(?P<q>[\"'])(?P<qval>[^\"'\n]{3,200})(?P=q)|(?P<val>[^\s\"'`,;&)\]}]{3,}))")
_CREDENTIAL_CHAR_RX = re.compile(r"[0-9_\-+/=!@#%^&.]")


def is_placeholder(value: str) -> bool:
    """``$TOKEN``, ``<your password>``, ``true``, an earlier marker: not a secret."""
    return value.startswith(_PLACEHOLDER_START) or value.lower().strip() in _PLACEHOLDER_WORDS or "REDACTED" in value \
        or placeholder_value(value)


def keyword_replacement(m: re.Match[str]) -> tuple[str, str, str] | None:
    """(replacement, kind, secret) for a keyword assignment, or None if its value is a
    placeholder or prose."""
    key, sep, quote = m.group("key"), m.group("sep"), m.group("q") or ""
    value = m.group("qval") if quote else m.group("val")
    if is_placeholder(value):
        return None
    if ":" in sep and not quote:
        # "token: the thing" is prose; YAML "password: hunter2" is not. An unquoted
        # value after ':' must look like a credential (long-ish, digit or symbol).
        if len(value) < 6 or not _CREDENTIAL_CHAR_RX.search(value):
            return None
    kind = next((k for rx, k in _KEYWORD_KIND if rx.search(key)), "secret")
    return f"{key}{sep}{quote}{marker(kind)}{quote}", kind, value

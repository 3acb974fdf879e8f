"""Recall and precision of redaction on the team's labelled set, and the guards that keep it cheap."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from redaction_labelled import NOT_SECRETS, SECRETS

from sleep.redact.public_ids import b58decode, identifier_like, public_by_structure, public_identifier
from sleep.redact import Redactor
from sleep.redact.detect_secrets_layer import detect_secrets_gate, detect_secrets_scanner
from sleep.redact.rules import TOKEN_PATTERNS, TOKEN_PREFIX_RX



def leaked(secret: str, text: str) -> bool:
    """Any 8 consecutive characters of the secret (all of it, if shorter) survive."""
    n = min(8, len(secret))
    return any(secret[i:i + n] in text for i in range(len(secret) - n + 1))


@pytest.mark.parametrize("kind,line,secret", SECRETS, ids=[f"{k}-{i}" for i, (k, _, _) in enumerate(SECRETS)])
def test_every_labelled_secret_is_removed(kind: str, line: str, secret: str) -> None:
    out = Redactor().redact(line)
    assert not leaked(secret, out), out
    assert "[REDACTED:" in out


def test_labelled_set_has_many_kinds_of_secret() -> None:
    assert len({k for k, _, _ in SECRETS}) >= 45 and len(NOT_SECRETS) >= 60


def test_no_labelled_non_secret_is_changed() -> None:
    r = Redactor()
    changed = [(kind, line, r.redact(line)) for kind, line in NOT_SECRETS if r.redact(line) != line]
    assert changed == []


def test_detect_secrets_adds_recall_for_the_kinds_it_is_kept_for() -> None:
    without = Redactor(use_detect_secrets=False)
    missed = {kind for kind, line, secret in SECRETS if leaked(secret, without.redact(line))}
    # pypi: layer 1 sees `twine -p`; azure-storage: layer 1 checks the value after `AccountKey=`
    assert {"sendgrid", "mailchimp-key"} <= missed
    assert missed <= {"sendgrid", "pypi-token", "mailchimp-key", "azure-storage", "discord-token",
                      "telegram-token", "twilio"}


def test_text_without_a_candidate_never_reaches_detect_secrets() -> None:
    r = Redactor()
    prose = "Refactor the retry loop in src/net/client.py and keep the public API stable.\n" * 50
    assert r.redact(prose) == prose
    assert r.detect_secrets_lines == 0 and r.scanned_chars == len(prose)


def test_base64_secret_with_slashes_is_not_taken_for_a_path() -> None:
    out = Redactor(use_detect_secrets=False).redact("key PnxUVNmOO2WEuYa9hE/3nU0nG8BLc/K4wMUTJzkg+ here")
    assert "PnxUVNmO" not in out
    path = "see src/components/DataTable/VirtualizedRow2.tsx"
    assert Redactor(use_detect_secrets=False).redact(path) == path


def test_base58check_address_is_public_but_a_wif_private_key_is_not() -> None:
    assert public_by_structure("1A1zP1eP5QGefi2DMPTfTL5SLmv7DivfNa")
    assert not public_by_structure("KzhGyMkrRoU66AyRGMmauBtgLqkBDTT2JkAx3sf9vsRa7BetEoEH")
    assert not public_by_structure("1A1zP1eP5QGefi2DMPTfTL5SLmv7DivfNb")  # checksum broken
    assert b58decode("0OIl") is None


def test_a_secret_word_vetoes_context_exemptions() -> None:
    sol = "FofcKoHMYpT3wnbdhoy99vSJGkJmwTABxhcEWRJCmEvz"
    assert public_identifier(sol, "the mint address is ", " on devnet")
    assert not public_identifier(sol, "wallet private key ", "")
    assert not public_identifier(sol, "here it is: ", "")
    digest = "9b085c670b51cac841581970120fe1eaa5d2b35ce0bb9e9f30e4d2bed53d22f3"
    assert public_identifier(digest, "checksum = \"", "\"")
    assert not public_identifier(digest, "secret hash ", "")


def test_identifiers_read_as_words_random_text_does_not() -> None:
    assert identifier_like("getUserByIdAndOrganizationIdV3Async")
    assert identifier_like("HTTP2ServerPushPromiseFrameHandler")
    assert not identifier_like("PnxUVNmOO2WEuYa9hE")
    assert not identifier_like("DJNfRJwO9neqjTXksC6b4Q4Eo36AHG2w")


_KEYWORDS = ["key", "api_key", "apikey", "ibm_cloud_iam_key", "iam_api_key", "cloudant_password", "cl_pw", "clou_api_key",
             "softlayer_api_key", "sl_key", "cos_hmac_secret_key", "secret_access_key", "password", "pwd", "token"]
_ASSIGN = ["=", ":", ":=", "=>", " ", "   ", "::", " = ", ": "]
_VALUES = ["0123456789abcdef" * 4, "0f1e2d3c4b5a6978" * 3, "qwertyuiopasdfghjklzxcvb",
           "aB3dEfGh1jKlMn0pQrStUvWxYz_aB3dEfGh1jKlMn0pQ", "Zp9Lq2Wm8Xn4Rk7Tv1Bc6Hd3Jf5Gs0AaZp9Lq2Wm8X-_1"]


def test_no_secret_detect_secrets_finds_survives_the_gates() -> None:
    """The assignment detectors (Cloudant, IBM, SoftLayer) are the gates' loosest part:
    for every combination of key, assignment, quoting and value shape that
    detect-secrets flags, no value it finds survives redaction."""
    scan = detect_secrets_scanner()  # configured with the delegated detectors
    assert scan is not None
    flagged = 0
    for key in _KEYWORDS:
        for op in _ASSIGN:
            for quote in ("", "'", '"'):
                for value in _VALUES:
                    for prefix in ("", "export ", "[\""):
                        line = f"{prefix}{quote}{key}{quote}{op}{quote}{value}{quote}"
                        found = [v for _, v in scan(line) if len(v) >= 8]
                        if found:
                            flagged += 1
                            out = Redactor().redact(line)
                            assert all(v not in out for v in found), (line, out)
    assert flagged > 200  # the check above ran on many real findings


def test_gate_lets_through_each_delegated_kind_in_the_labelled_set() -> None:
    delegated = {"sendgrid", "pypi-token", "mailchimp-key", "azure-storage", "discord-token", "telegram-token",
                 "twilio"}
    lines = [line for kind, line, _ in SECRETS if kind in delegated]
    assert lines and all(detect_secrets_gate(line) for line in lines)


@pytest.mark.parametrize("kind,pattern", TOKEN_PATTERNS, ids=[k for k, _ in TOKEN_PATTERNS])
def test_the_cheap_prefix_test_never_hides_a_token_rule_match(kind: str, pattern: str) -> None:
    """TOKEN_PREFIX_RX is tried before the token rules: every string a rule matches must pass it."""
    @settings(max_examples=60, deadline=None)
    @given(st.from_regex(pattern, fullmatch=True))
    def check(token: str) -> None:
        assert TOKEN_PREFIX_RX.search(token), token

    check()

"""sleep.redact.literal_scan: one pass that says which literals a text holds, the same with
google-re2 and without it (the redactor's rule gates depend on it being exact)."""

from __future__ import annotations

import random

import pytest

from sleep.redact import redactor as redact
from sleep.redact.literal_scan import LiteralScan

LITERALS = redact._LOW_SCAN.literals  # the redactor's own list: triggers, line words, keywords


def _texts() -> list[str]:
    rng = random.Random(7)
    alphabet = list("abcdefghijklmnopqrstuvwxyz -_:=/.\n\t→é中") + ["key", "token", "pass", "--", " is ", "mysql"]
    out = ["", "x", "no literal here", "aws bearer token --password -p mysql curl", "→ is ", "tokentoken",
           "prefix-key", "pass:word", "cloudant.com/softlayer.com", "ed\u00e9 → 中文 token"]
    for _ in range(300):
        out.append("".join(rng.choice(alphabet) for _ in range(rng.randint(1, 80))))
    return out


def test_the_python_fallback_is_plain_substring_tests() -> None:
    scan = LiteralScan(["ab", "b", "zz"], use_re2=False)
    assert scan.engine == "python"
    assert scan.present("xaby") == {"ab", "b"}
    assert scan.present("") == frozenset()


@pytest.mark.skipif(LiteralScan(["a"]).engine != "re2", reason="google-re2 is not installed")
def test_re2_and_python_find_the_same_literals() -> None:
    fast, plain = LiteralScan(LITERALS), LiteralScan(LITERALS, use_re2=False)
    assert fast.engine == "re2"
    for text in _texts():
        assert fast.present(text) == plain.present(text) == {lit for lit in LITERALS if lit in text}, text
    assert fast.fallbacks == 0  # every text above went through the compiled set


@pytest.mark.skipif(LiteralScan(["a"]).engine != "re2", reason="google-re2 is not installed")
def test_a_text_re2_cannot_take_is_scanned_the_plain_way() -> None:
    scan = LiteralScan(["key", "pw"])
    assert scan.present("api key \ud800 pw") == {"key", "pw"}  # a lone surrogate is not UTF-8
    assert scan.fallbacks == 1

"""Issue 35: a secret in a ``NAME=value`` line (a .env file an agent printed) is found like the
same secret in prose; the kinds the audit found passing are found in both forms."""

from __future__ import annotations

import re

import pytest
from redaction_labelled import SECRETS

from sleep.redact import Redactor


def leaked(secret: str, text: str) -> bool:
    n = min(8, len(secret))
    return any(secret[i:i + n] in text for i in range(len(secret) - n + 1))


def _whole(line: str, secret: str) -> str:
    """The whole token of ``line`` that holds ``secret`` (a JWT is labelled by its payload and
    signature, a Doppler token by what follows its prefix)."""
    m = re.search(r"(?:eyJ[\w-]+\.|dp\.[a-z]+\.(?:[a-z]+\.)?)?" + re.escape(secret), line)
    assert m is not None
    return m.group(0)


_ISSUE_35_KINDS = ("age-secret-key", "atlassian-token", "doppler-token", "mailgun-key", "newrelic-key",
                   "pulumi-token", "jwt", "linear-key", "square-token")
# (kind, value): every issue-35 value of the labelled set, and random tokens no rule names
# (only the entropy check can find them).
_VALUES = [(kind, _whole(line, secret)) for kind, line, secret in SECRETS if kind in _ISSUE_35_KINDS] + [
    ("high-entropy", "Xq8vR2mLk9Zt4WnB7pQ3sD6f"), ("high-entropy", "Tz4kW9qLm2Xv7RbN5pJ8cH3d6Fs0Ga")]
# The forms a value takes: prose, and the lines of files, environments and configs.
_FORMS = ["here it is: {v} (do not share)", "{v}", "STAGING={v}", "export STAGING_VALUE={v}",
          "X={v}\nY=1", "# .env\nA=1\nSTAGING=\"{v}\"", "     7\tSTAGING={v}", "set STAGING={v}&& run",
          "staging_value={v}", "{{\"env\": \"STAGING={v}\"}}", "STAGING= {v}"]


@pytest.mark.parametrize("kind,value", _VALUES, ids=[f"{k}-{i}" for i, (k, _) in enumerate(_VALUES)])
def test_name_value_lines_are_redacted_like_prose(kind: str, value: str) -> None:
    r = Redactor()
    missed = [form for form in _FORMS if leaked(value, r.redact(form.format(v=value)))]
    assert missed == []


def test_every_issue_35_kind_has_five_labelled_examples() -> None:
    for kind in _ISSUE_35_KINDS:
        assert sum(1 for k, _, _ in SECRETS if k == kind) >= 5, kind

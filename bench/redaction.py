"""Recall, false positives and cost of secret redaction on the team's labelled set.

Prints, for the redactor with and without its detect-secrets layer: how many of
the labelled secrets (tests/sleep/redaction_labelled.py) are fully removed (none
of their 8-character runs survives), how many of the labelled non-secrets are
changed, and the CPU cost per MB on text shaped like what the index stores
(final answers with code, prompts, some pasted logs; bench/corpus_realistic.py).
Then the cost of the exact-match filter of remembered secrets
(sleep.redact.known) on the same text, with 1,000 and 10,000 values remembered
in a scratch index (skipped for code that has no such filter).

``--code DIR`` measures the ``sleep`` package of another checkout (for example
the main branch) on the same set, to compare before and after.

Usage: ``python bench/redaction.py [--code DIR] [--show]``.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def leaked(secret: str, text: str) -> bool:
    n = min(8, len(secret))
    return any(secret[i:i + n] in text for i in range(len(secret) - n + 1))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--code", type=Path, default=REPO, help="checkout whose sleep.redact to measure")
    ap.add_argument("--show", action="store_true", help="list every miss and false positive")
    args = ap.parse_args()
    sys.path.insert(0, str(args.code.resolve()))
    sys.path.insert(1, str(REPO / "tests" / "sleep"))
    sys.path.insert(2, str(REPO / "bench"))
    import corpus_realistic
    from redaction_labelled import NOT_SECRETS, SECRETS

    from sleep.redact import Redactor

    g = corpus_realistic.Gen(3)
    stored = [g.final() for _ in range(1500)] + [g.prompt() for _ in range(1500)]
    mb = sum(map(len, stored)) / 1e6
    print(f"redactor from {args.code}: {len(SECRETS)} secrets of {len({k for k, _, _ in SECRETS})} kinds, "
          f"{len(NOT_SECRETS)} non-secrets; cost measured on {mb:.1f} MB of stored-like text (CPU time)")
    for use_ds in (True, False):
        r = Redactor(use_detect_secrets=use_ds)
        missed = [(k, s) for k, line, s in SECRETS if leaked(s, r.redact(line))]
        changed = [(k, line, r.redact(line)) for k, line in NOT_SECRETS if r.redact(line) != line]
        r.redact("mailchimp 8b3fc0c40e58fd222905971ef2685d6e-us14")  # imports detect-secrets before timing
        best = min(_cpu(r, stored) for _ in range(3))
        print(f"  detect-secrets {'on ' if use_ds else 'off'}: recall {len(SECRETS) - len(missed)}/{len(SECRETS)}, "
              f"false positives {len(changed)}/{len(NOT_SECRETS)}, {mb / best:.1f} MB/s ({1000 * best / mb:.0f} ms/MB)")
        if args.show:
            for kind, secret in missed:
                print(f"    missed {kind}: {secret[:40]}")
            for kind, _, out in changed:
                print(f"    changed {kind}: {out[:100]}")
    if (args.code / "sleep" / "redact" / "known.py").is_file() or (args.code / "sleep" / "known_secrets.py").is_file():
        _filter_cost(stored, mb)
    return 0


def _filter_cost(stored: list[str], mb: float) -> None:
    import os
    import random
    import string
    import tempfile

    from sleep.redact import known as known_secrets
    from sleep.index import Index

    rng = random.Random(5)
    alphabet = string.ascii_letters + string.digits
    with tempfile.TemporaryDirectory() as tmp:
        os.environ["SKILLOPT_HOME"] = tmp  # the scratch index and key; never the real data dir
        path = Path(tmp) / "sleep.sqlite3"
        remembered = 0
        for n in (1_000, 10_000):
            values = ["".join(rng.choice(alphabet) for _ in range(rng.randrange(8, 60))) for _ in range(n - remembered)]
            with Index.open(path) as index, index.transaction():
                remembered += known_secrets.remember(index, values)
            known = known_secrets.KnownSecrets.load(path)
            started = time.process_time()
            hits = sum(len(known.spans(text)) for text in stored)
            took = time.process_time() - started
            print(f"  exact-match filter, {remembered:,} values remembered: {mb / took:.1f} MB/s "
                  f"({1000 * took / mb:.0f} ms/MB), {hits} false hits")


def _cpu(r, texts: list[str]) -> float:
    started = time.process_time()
    for text in texts:
        r.redact(text)
    return time.process_time() - started


if __name__ == "__main__":
    raise SystemExit(main())

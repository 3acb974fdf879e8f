"""Recall, false positives and cost of secret redaction on the team's labelled set.

Prints, for the redactor with and without its detect-secrets layer: how many of
the labelled secrets (tests/sleep/redaction_labelled.py) are fully removed (none
of their 8-character runs survives), how many of the labelled non-secrets are
changed, and the CPU cost per MB on text shaped like what the index stores
(final answers with code, prompts, some pasted logs; bench/corpus_realistic.py).

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
    return 0


def _cpu(r, texts: list[str]) -> float:
    started = time.process_time()
    for text in texts:
        r.redact(text)
    return time.process_time() - started


if __name__ == "__main__":
    raise SystemExit(main())

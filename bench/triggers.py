"""Trigger figures on the labelled trigger set (tests/sleep/trigger_labelled.py), issue 33 §3.

For each skill of the set, every request is asked once, through
:func:`sleep.cycle.triggers.decide` (the listing as Claude Code shows it: all four skills, names
and descriptions), whether the target would load the skill; the request's label says whether it
should. Reported per skill and summed: trigger precision and recall, with the real descriptions
and with ``WEAK`` ones (descriptions that never say what the skill is for), and how many answers
could not be read (counted as "not loaded").

Deciders:

- ``local``: SmolLM2-135M-Instruct in process (the embedded ``local`` backend). A 135M model is far
  below what a coding agent runs; its figures show the pipeline on a real model, not what a capable
  model would decide.
- ``lexical``: a reference without a model: load a skill when the request shares a content word
  (4+ letters, after a crude stem) with its name or description. It says how separable the set is
  by words alone.

Usage: ``python bench/triggers.py [--decider local|lexical] [--json]``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "tests" / "sleep"))

from trigger_labelled import QUERIES, SKILLS, WEAK  # noqa: E402

from skillopt_core.backends import BackendSpec, Completion, CompletionRequest, create_backend  # noqa: E402
from sleep.cycle.triggers import Query, decide, figures  # noqa: E402

STOP = {"with", "then", "that", "this", "each", "what", "would", "from", "your", "into", "them", "list", "check",
        "write", "create", "build", "report", "project", "after", "show", "give", "tell", "does", "have", "file"}


def _words(text: str) -> set[str]:
    return {w[:5] for w in re.findall(r"[a-z]{4,}", text.lower()) if w not in STOP}


class Lexical:
    """Loads the skills whose listed name or description shares a content word with the request."""

    async def complete(self, request: CompletionRequest) -> Completion:
        text = request.messages[-1].content.split("\n\n", 1)[0].removeprefix("Request: ")
        listed = re.findall(r"<name>\n(.*?)\n</name>\n<description>\n(.*?)\n</description>", request.system or "")
        load = [n for n, d in listed if _words(text) & _words(f"{n.replace('-', ' ')} {d}")]
        return Completion(text=json.dumps({"load": load}), model="lexical")


def _decider(name: str):
    if name == "lexical":
        return Lexical()
    return create_backend(BackendSpec(name="local", model=None, role="target", options={"n_ctx": 2048}))


async def _figures(backend, descriptions: dict[str, str]) -> dict[str, dict]:
    out = {}
    for name in SKILLS:
        others = [(n, d) for n, d in descriptions.items() if n != name]
        queries = [Query(text, label == name, label or "one-off", "test") for text, label in QUERIES]
        out[name] = figures(await decide(backend, "claude-code", name, descriptions[name], others, queries, workers=1))
    return out


def _total(rows: dict[str, dict]) -> dict:
    tp, fp, fn = (sum(r[k] for r in rows.values()) for k in ("tp", "fp", "fn"))
    return {"precision": round(tp / (tp + fp), 3) if tp + fp else None, "recall": round(tp / (tp + fn), 3) if tp + fn
            else None, "unread": sum(r["unread"] for r in rows.values()), "asked": sum(r["n"] for r in rows.values())}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--decider", choices=("local", "lexical"), default="local")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    backend = _decider(args.decider)
    started = time.perf_counter()
    result = {}
    for label, descriptions in (("real", SKILLS), ("weak", WEAK)):
        rows = asyncio.run(_figures(backend, descriptions))
        result[label] = {"per_skill": rows, "total": _total(rows)}
    result["wall_s"] = round(time.perf_counter() - started, 1)
    result["decider"] = args.decider
    result["set"] = {"skills": len(SKILLS), "requests": len(QUERIES),
                     "no_skill": sum(1 for _, label in QUERIES if label is None)}
    if args.json:
        print(json.dumps(result, indent=2))
        return 0
    print(f"labelled trigger set: {result['set']}; decider {args.decider}; {result['wall_s']} s")
    for label in ("real", "weak"):
        t = result[label]["total"]
        print(f"  {label} descriptions: precision {t['precision']}, recall {t['recall']} "
              f"({t['asked']} decisions, {t['unread']} unreadable answers)")
        for name, f in result[label]["per_skill"].items():
            print(f"    {name:15s} precision {f['precision']}, recall {f['recall']} (tp {f['tp']}, fp {f['fp']}, "
                  f"fn {f['fn']})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

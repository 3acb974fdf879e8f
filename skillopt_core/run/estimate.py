"""The preflight estimate: the model calls and dollars a run will take, from
its settings and data sizes, before its first call.

It is arithmetic, not a measurement. With S = ``train.samples_per_item``,
B = min(``train.batch_size``, train items), V = val items (after
``evaluation.val_limit``), T = test items (after ``evaluation.test_limit``):

- **baseline**: V·S target calls (the starting skill on val; skipped on a
  resume that has it);
- **one full step**: B·S train rollouts, ⌈B·S / ``optimizer.minibatch_size``⌉
  reflect calls (a ceiling: only failures are reflected on), one merge call
  (``merge_with_model``), one rank call (``rank_with_model``), the screen
  (min(``screen_items``, B)·S) and a fully evaluated val gate (V·S, plus
  2·V·S·``resample_disagreements`` as a ceiling);
- **each epoch boundary but the last**: the slow update (2·B·S + 1 + V·S) and
  the meta notes (1), when on;
- **the end**: 2·T·S test rollouts when ``evaluation.eval_test``.

Judge calls: each target call on an item whose judge calls a model (a
``rubric`` judge) adds one judge call. Early stopping and screen rejects
spend less; the re-measure after an accept (``evaluation.remeasure``) spends
at most V·S more per accept (with ``remeasure_scope: disagreements``, the
default, only on the items where the accepted draw differed); optimizer
replies that need a repair add one call each.

Dollars per call: a backend's declared ``cost_per_call`` (the scripted
backend's), $0 for the local backend, else the price table
(:mod:`skillopt_core.backends.pricing`) for the role's model with an input of
(skill + mean prompt) characters / 4 tokens (the optimizer: plus
``minibatch_size`` prompts and answers) and an output of the role's
``max_tokens`` (a ceiling). A role whose model has no price is listed in
``unpriced_roles`` and adds nothing to ``usd``; with ``budget.max_usd`` a
warning names it, unless its backend reports its own costs (claude-code).

The **floor warning**: when a budget (calls, tokens or dollars) cannot cover
the baseline and one full step, the run would stop before its first gate.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from skillopt_core.backends.pricing import price_for
from skillopt_core.run.config import Settings
from skillopt_core.tasks.task import Task

ROLES = ("target", "optimizer", "judge")
CHARS_PER_TOKEN = 4
FREE_BACKENDS = ("local",)
# Backends that report each call's cost themselves (the claude CLI's total_cost_usd): a dollar
# cap sees their calls even when the estimate cannot price them in advance.
SELF_PRICED_BACKENDS = ("claude-code",)


def _rounded(value: float | None) -> float | None:
    return None if value is None else round(value, 6)


def _unwrap(backend: Any, attr: str) -> Any:
    """``attr`` of ``backend`` or of the first backend it wraps (``.inner``) that has it."""
    seen = 0
    while backend is not None and seen < 10:
        value = getattr(backend, attr, None)
        if value is not None:
            return value
        backend, seen = getattr(backend, "inner", None), seen + 1
    return None


def _judge_calls_model(spec: Any) -> bool:
    """Whether a judge spec (or a list of them) includes a judge that calls a model."""
    from skillopt_core.tasks.judges.spec import _resolve_type

    if isinstance(spec, list):
        return any(_judge_calls_model(s) for s in spec)
    if isinstance(spec, str):
        spec = {"type": spec}
    if not isinstance(spec, dict):
        return False
    try:
        return bool(_resolve_type(spec).needs_backend)
    except Exception:  # an invalid spec fails elsewhere, with its own message
        return False


def _mean_chars(texts: Sequence[str]) -> float:
    return sum(len(t) for t in texts) / len(texts) if texts else 0.0


def per_call_usd(backend: Any, model: str | None, input_tokens: int, output_tokens: int) -> float | None:
    """Dollars of one call of ``backend`` (None: no price known)."""
    declared = _unwrap(backend, "cost_per_call")
    if declared is not None:
        return float(declared)
    name = _unwrap(backend, "name") if backend is not None else None
    if name in FREE_BACKENDS:
        return 0.0
    price = price_for(model or _unwrap(backend, "model"))
    if price is None:
        return None
    return (input_tokens * price[0] + output_tokens * price[1]) / 1_000_000


def estimate_run(settings: Settings, train: Sequence[Task], val: Sequence[Task], test: Sequence[Task],
                 skill_text: str, backends: Mapping[str, Any], *, steps: int, steps_per_epoch: int,
                 baseline_done: bool = False, used: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """The estimate for ``steps`` more steps (see the module doc); ``used``: the ledger's totals so far."""
    s, o, e = settings.train, settings.optimizer, settings.evaluation
    S = s.samples_per_item
    B = min(s.batch_size, len(train))
    V, T = len(val), len(test)
    model_judged = {name: sum(_judge_calls_model(t.judge) for t in part) / len(part) if part else 0.0
                    for name, part in (("train", train), ("val", val), ("test", test))}

    def target(n: float, split: str) -> dict[str, float]:
        return {"target": n, "judge": n * model_judged[split]}

    def add(*parts: dict[str, float]) -> dict[str, float]:
        out = {r: 0.0 for r in ROLES}
        for p in parts:
            for k, v in p.items():
                out[k] += v
        return out

    baseline = add() if baseline_done else add(target(V * S, "val"))
    optimizer_calls = math.ceil(B * S / o.minibatch_size) + int(o.merge_with_model) + int(o.rank_with_model)
    gate = V * S * (1 + 2 * e.resample_disagreements) if e.use_gate else V * S
    screen = min(e.screen_items, B) * S if e.use_gate else 0
    if e.use_gate and settings.train.candidates_per_step > 1:  # successive halving; the survivor's screen is cached
        screen = halving_rollouts(settings.train.candidates_per_step, min(e.screen_items or B, B)) * S
    one_step = add(target(B * S, "train"), {"optimizer": optimizer_calls}, target(screen, "train"),
                   target(gate, "val"))
    epochs_left = max(0, math.ceil(steps / steps_per_epoch) - 1) if steps else 0
    boundary = add(
        target(2 * B * S, "train") if o.use_slow_update else {}, target(V * S, "val") if o.use_slow_update else {},
        {"optimizer": int(o.use_slow_update) + int(o.use_meta_skill)})
    end = add(target(2 * T * S, "test")) if e.eval_test and T else add()
    total = add(baseline, *([one_step] * steps), *([boundary] * epochs_left), end)

    prompt_tokens = (len(skill_text) + _mean_chars([t.prompt for t in [*train, *val]])) / CHARS_PER_TOKEN
    answer_tokens = settings.model.target_max_tokens
    sizes = {
        "target": (prompt_tokens, answer_tokens),
        "optimizer": (prompt_tokens + o.minibatch_size * (prompt_tokens - len(skill_text) / CHARS_PER_TOKEN
                                                          + answer_tokens), settings.model.optimizer_max_tokens),
        "judge": (prompt_tokens + answer_tokens, answer_tokens),
    }
    price = {r: per_call_usd(backends.get(r), settings.model.model_for(r), int(sizes[r][0]), int(sizes[r][1]))
             for r in ROLES}
    unpriced = [r for r in ROLES if price[r] is None and total[r] > 0]

    def usd(calls: Mapping[str, float]) -> float:
        return round(sum(calls[r] * (price[r] or 0.0) for r in ROLES), 4)

    def tokens(calls: Mapping[str, float]) -> int:
        return int(sum(calls[r] * sum(sizes[r]) for r in ROLES))

    def calls(c: Mapping[str, float]) -> int:
        return math.ceil(sum(c.values()))

    floor = add(baseline, one_step)
    used = used or {}
    b = settings.budget
    warnings = []
    need = {"max_calls": (calls(floor), used.get("calls", 0), "model calls"),
            "max_tokens": (tokens(floor), used.get("input_tokens", 0) + used.get("output_tokens", 0), "tokens"),
            "max_usd": (usd(floor), used.get("cost_usd", 0.0), "")}
    for key, (amount, spent, unit) in need.items():
        limit = getattr(b, key)
        if limit is None or (key == "max_usd" and amount == 0):
            continue
        if limit - spent < amount:
            shown = f"${amount:.4f}" if key == "max_usd" else f"{amount}"
            left = f"${limit - spent:.4f}" if key == "max_usd" else f"{limit - spent}"
            warnings.append(
                f"budget.{key} leaves {left}{' ' + unit if unit else ''}, less than the val baseline and one full "
                f"step need (≈ {shown}): "
                f"the run will stop before its first gate and learn nothing. Raise budget.{key}, or lower "
                "train.batch_size / evaluation.val_limit.")
    unseen = [r for r in unpriced if _unwrap(backends.get(r), "name") not in SELF_PRICED_BACKENDS]
    if b.max_usd is not None and unseen:
        warnings.append(f"budget.max_usd cannot see the calls of {', '.join(unseen)} (no reported cost and no "
                        "price for their model): those calls add $0 and only max_calls / max_tokens stop them.")
    out = {
        "calls": calls(total), "usd": usd(total), "tokens": tokens(total),
        "by_role": {r: {"calls": math.ceil(total[r]), "usd_per_call": _rounded(price[r])}
                    for r in ROLES if total[r] > 0},
        "steps": steps, "one_step": {"calls": calls(one_step), "usd": usd(one_step)},
        "baseline": {"calls": calls(baseline), "usd": usd(baseline)},
        "unpriced_roles": unpriced, "warnings": warnings,
        "basis": (f"{steps} steps × (batch {B} × {S} sample(s) + {optimizer_calls} optimizer calls + screen {screen} "
                  f"+ val gate {gate}) + val baseline {calls(baseline)} + test {calls(end)}, as if every step fully "
                  f"gated a new "
                  "candidate (cached rollouts, unchanged candidates, early stops and screen rejects spend less; "
                  "re-measures after accepts more)"),
    }
    out["text"] = describe(out)
    return out


def describe(estimate: Mapping[str, Any]) -> str:
    """One line for the console: calls, dollars and what they rest on."""
    dollars = f"${estimate['usd']:.2f}"
    if estimate.get("unpriced_roles"):
        dollars += f" + unpriced {', '.join(estimate['unpriced_roles'])}"
    return (f"preflight estimate: ≈ {estimate['calls']} model calls, ≈ {dollars} "
            f"(one full step ≈ {estimate['one_step']['calls']} calls, ${estimate['one_step']['usd']:.2f}); "
            f"{estimate['basis']}")


def halving_rollouts(candidates: int, final_items: int) -> int:
    """Train rollouts of successive halving over ``candidates`` (the trainer's ``_halving``):
    rung r has ceil(final / 2^(R-1-r)) items and half the candidates of the rung before;
    a candidate's items of earlier rungs are cached."""
    rungs = math.ceil(math.log2(candidates)) if candidates > 1 else 0
    total, alive, done = 0, candidates, 0
    for r in range(rungs):
        n = max(1, math.ceil(final_items / 2 ** (rungs - 1 - r)))
        total += alive * (n - done)
        done, alive = n, max(1, math.ceil(alive / 2))
    return total

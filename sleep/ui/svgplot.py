"""The val-score curve as inline SVG (a pure function of the step records).

Drawn here rather than with matplotlib: the run page is rendered on every
live update and must stay well under a second for 500 steps; a few hundred
SVG elements cost microseconds. Colours come from the stylesheet (classes),
so the SVG carries no inline style and passes the page's content policy.

What it shows: the current skill's val score after each step (a step line
from the initial score at step 0), the best val score (dashed), each step's
candidate as a marker (accepted ● at its full-val score; rejected ✕, dashed
when the gate stopped early and the score covers only the items it
evaluated; grey ○ when the candidate was identical), and epoch boundaries with the slow update's action.
Each marker links to its step page and has a tooltip.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import replace
from html import escape

from sleep.ui.rundata import StepRow

W, H = 780, 270
LEFT, RIGHT, TOP, BOTTOM = 46, 18, 16, 58


DENSE = 120  # more steps than this: small markers, so a 500-step run stays readable
LIMIT = 1e9  # values beyond ±LIMIT (bad data: scores are 0..1) are drawn at the limit


def _nice_step(span: float) -> float:
    """A tick spacing giving at most about 6 ticks over ``span``."""
    for step in (0.05, 0.1, 0.2, 0.25, 0.5):
        if span / step <= 6:
            return step
    magnitude = 10 ** math.floor(math.log10(span / 6))
    return next(m * magnitude for m in (1, 2, 2.5, 5, 10) if span / (m * magnitude) <= 6)


def step_ticks(last: int, most: int = 10) -> list[int]:
    """Step numbers to label on an axis from 0 to ``last``: a round spacing (1, 2, 5 × 10^k) giving
    at most ``most`` labels, and ``last`` itself (the previous label dropped when it would touch it)."""
    if last <= 0:
        return [0]
    spacing = next(m * 10 ** k for k in range(18) for m in (1, 2, 5) if last / (m * 10 ** k) <= most)
    ticks = list(range(0, last + 1, spacing))
    if ticks[-1] != last:
        if last - ticks[-1] <= spacing * 0.5:
            ticks.pop()
        ticks.append(last)
    return ticks


def _clamp(v: float | None) -> float | None:
    return None if v is None else max(-LIMIT, min(LIMIT, v))


def _f(v: float) -> str:
    return f"{v:.1f}"


def curve_svg(initial_val: float | None, steps: Sequence[StepRow], total_steps: int | None,
              epochs: Sequence[tuple[int, str]] = (), step_url: str = "", first: int = 0,
              last_step: int | None = None) -> str:
    """The curve's ``<svg>`` element (escaped text throughout; safe to insert as HTML).

    ``epochs``: (step after which the epoch ended, label). ``step_url``: prefix
    of the step pages (``<step_url>/<n>``); empty for no links. ``first`` / ``last_step``: the
    zoomed range of steps (default: all of them).
    """
    if first or last_step is not None:
        steps = [s for s in steps if s.step >= first and (last_step is None or s.step <= last_step)]
        initial_val = initial_val if first == 0 else None
    steps = [replace(s, val_current=_clamp(s.val_current), val_candidate=_clamp(s.val_candidate),
                     val_after=_clamp(s.val_after), best_val=_clamp(s.best_val)) for s in steps]
    initial_val = _clamp(initial_val)
    values = [v for s in steps for v in (s.val_current, s.val_candidate, s.val_after, s.best_val) if v is not None]
    if initial_val is not None:
        values.append(initial_val)
    if not values:
        return (f'<svg class="curve empty" id="curve" viewBox="0 0 {W} 60" role="img" '
                'aria-label="no val scores yet"><text x="12" y="34" class="note">No val score yet: the run has '
                'not finished its baseline evaluation.</text></svg>')
    lo, hi = min(values), max(values)
    tick = _nice_step(max(hi - lo, 0.1))
    y0 = max(0.0, math.floor(lo / tick) * tick)
    y1 = min(1.0, math.ceil(hi / tick) * tick) if hi <= 1 else math.ceil(hi / tick) * tick
    if y1 - y0 < tick:
        y1 = y0 + tick
    last = last_step if last_step is not None else max([s.step for s in steps] + [total_steps or 0, 1])
    last = max(last, first + 1)
    pw, ph = W - LEFT - RIGHT, H - TOP - BOTTOM

    def x(step: float) -> float:
        return LEFT + pw * (step - first) / (last - first)

    def y(v: float) -> float:
        return TOP + ph * (1 - (v - y0) / (y1 - y0))

    out = [f'<svg class="curve" id="curve" viewBox="0 0 {W} {H}" role="img" '
           f'aria-label="val score by step: {len(steps)} steps" data-first="{first}" data-last="{last}" '
           f'data-step-url="{escape(step_url)}" '
           f'data-left="{LEFT}" data-right="{W - RIGHT}" data-width="{W}">']
    # grid and axes
    n_ticks = round((y1 - y0) / tick)
    for i in range(n_ticks + 1):
        v = y0 + i * tick
        out.append(f'<line class="grid" x1="{LEFT}" x2="{W - RIGHT}" y1="{_f(y(v))}" y2="{_f(y(v))}"/>'
                   f'<text class="tick" x="{LEFT - 6}" y="{_f(y(v) + 4)}" text-anchor="end">{v:.2f}</text>')
    for t in step_ticks(last - first):
        out.append(f'<text class="tick" x="{_f(x(first + t))}" y="{H - BOTTOM + 16}" '
                   f'text-anchor="middle">{first + t}</text>')
    out.append(f'<text class="axis" x="{LEFT + pw / 2:.0f}" y="{H - BOTTOM + 32}" text-anchor="middle">step</text>')
    out.append(f'<line class="axisline" x1="{LEFT}" x2="{LEFT}" y1="{TOP}" y2="{TOP + ph}"/>'
               f'<line class="axisline" x1="{LEFT}" x2="{W - RIGHT}" y1="{TOP + ph}" y2="{TOP + ph}"/>')
    for after, label in epochs:
        if first < after <= last:
            out.append(f'<g class="epoch"><title>{escape(label)}</title>'
                       f'<line x1="{_f(x(after))}" x2="{_f(x(after))}" y1="{TOP}" y2="{TOP + ph}"/>'
                       f'<text x="{_f(x(after) - 3)}" y="{TOP + 10}" text-anchor="end">'
                       f'{escape(label.split(":")[0])}</text></g>')
    # current and best lines
    cur, best = _step_path(initial_val, [(s.step, s.val_after) for s in steps], x, y), \
        _step_path(initial_val, [(s.step, s.best_val) for s in steps], x, y)
    if best:
        out.append(f'<path class="best" d="{best}"><title>best val score so far</title></path>')
    if cur:
        out.append(f'<path class="current" d="{cur}"><title>val score of the current skill</title></path>')
    if initial_val is not None:
        out.append(f'<circle class="initial" cx="{_f(x(0))}" cy="{_f(y(initial_val))}" r="3.5">'
                   f'<title>initial skill: val {initial_val:.3f}</title></circle>')
    dense = len(steps) > DENSE
    for s in steps:
        out.append(_marker(s, x, y, step_url, dense))
    out.append(_legend())
    out.append("</svg>")
    return "".join(out)


def _step_path(start: float | None, points: list[tuple[int, float | None]], x, y) -> str:
    d: list[str] = []
    prev_step, prev_v = (points[0][0] - 1 if points else 0), start
    if start is not None:
        d.append(f"M{_f(x(0))} {_f(y(start))}")
    for step, v in points:
        if v is None:
            continue
        if not d:
            d.append(f"M{_f(x(prev_step))} {_f(y(v))}")
        elif prev_v is not None:
            d.append(f"H{_f(x(step))}")
        d.append(f"V{_f(y(v))}")
        prev_step, prev_v = step, v
    return "".join(d) if len(d) > 1 else ""


def _marker(s: StepRow, x, y, step_url: str, dense: bool = False) -> str:
    # An accepted candidate is always scored on every val item; a rejected one may not be.
    partial = not s.accepted and (s.early_stopped or 0 < s.gate_evaluated < s.gate_items)
    items = f" on {s.gate_evaluated} of {s.gate_items} val items" if partial else ""
    if s.action == "no_change" or s.val_candidate is None:
        v = s.val_current if s.val_current is not None else s.val_after
        if v is None:
            return ""
        cls, shape = "mark same", f'<circle cx="{_f(x(s.step))}" cy="{_f(y(v))}" r="{1.2 if dense else 3}"/>'
        tip = f"step {s.step}: {s.action.replace('_', ' ')}"
    else:
        cx, cy = x(s.step), y(s.val_candidate)
        kind = "accept" if s.accepted else "reject"
        cls = f"mark {kind}" + (" partial" if partial else "")
        if s.accepted:
            shape = f'<circle cx="{_f(cx)}" cy="{_f(cy)}" r="{2.5 if dense else 4.5}"/>'
        elif dense:  # hundreds of crosses merge into a band: a small dot each
            shape = f'<circle cx="{_f(cx)}" cy="{_f(cy)}" r="1.3"/>'
        else:
            shape = (f'<path d="M{_f(cx - 4)} {_f(cy - 4)}L{_f(cx + 4)} {_f(cy + 4)}'
                     f'M{_f(cx - 4)} {_f(cy + 4)}L{_f(cx + 4)} {_f(cy - 4)}"/>')
        cur = f" vs current {s.val_current:.3f}" if s.val_current is not None else ""
        tip = f"step {s.step}: {s.action.replace('_', ' ')}, candidate {s.val_candidate:.3f}{cur}{items}"
    if dense:  # no <title> and no <a> per mark: the page's script shows data-tip under the pointer and
        # opens <data-step-url>/<step> on a click (the step table links every step too): a third of the bytes
        return f'<g class="{cls}" data-step="{s.step}" data-tip="{escape(tip)}">{shape}</g>'
    body = f'<title>{escape(tip)}</title>{shape}'
    if step_url:
        body = f'<a href="{escape(step_url)}/{s.step}">{body}</a>'
    return f'<g class="{cls}" data-step="{s.step}">{body}</g>'


def _legend() -> str:
    ly = H - 14
    parts = [
        f'<g class="legend" transform="translate({LEFT},{ly})">',
        '<path class="current" d="M0 0H22"/><text x="28" y="4">current skill</text>',
        '<path class="best" d="M120 0H142"/><text x="148" y="4">best so far</text>',
        '<g class="mark accept"><circle cx="246" cy="0" r="4.5"/></g><text x="256" y="4">accepted candidate</text>',
        '<g class="mark reject"><path d="M386 -4L394 4M386 4L394 -4"/></g>'
        '<text x="400" y="4">rejected candidate</text>',
        '<g class="mark reject partial"><path d="M526 -4L534 4M526 4L534 -4"/></g>'
        '<text x="540" y="4">rejected early (partial score)</text>',
        '</g>',
    ]
    return "".join(parts)

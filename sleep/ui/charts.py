"""Line charts of per-step metrics as inline SVG: train score, val, tokens, cost, time per step,
one run or several overlaid (the compare page).

Pure functions of typed values, like :mod:`sleep.ui.svgplot`: colours come from the
stylesheet (``series c0``…``c7``), text is escaped. Each chart carries its data in
``data-`` attributes (``data-steps``, and ``data-values`` per series) so the page's
script can show a readout of every series under the pointer and zoom to a dragged
range (``?from=&to=``) without the server drawing anything twice.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from html import escape

from sleep.ui.rundata import StepRow
from sleep.ui.svgplot import step_ticks

W, H = 780, 190
LEFT, RIGHT, TOP, BOTTOM = 58, 16, 14, 34
COLOURS = 8


@dataclass(frozen=True)
class Series:
    label: str
    points: tuple[tuple[int, float], ...]  # (step, value), ascending steps
    colour: int = 0


@dataclass(frozen=True)
class Metric:
    key: str
    title: str
    value: Callable[[StepRow], float | None]
    fmt: Callable[[float], str]


def _score(v: float) -> str:
    return f"{v:.2f}"


def _count(v: float) -> str:
    a = abs(v)
    if a >= 1e6:
        return f"{v / 1e6:.1f}M"
    if a >= 1e4:
        return f"{v / 1e3:.0f}k"
    if a >= 1e3:
        return f"{v / 1e3:.1f}k"
    return f"{v:.0f}"


def _usd(v: float) -> str:
    return f"${v:.2f}" if abs(v) >= 0.1 or v == 0 else f"${v:.4f}"


def _secs(v: float) -> str:
    if abs(v) < 1:
        return f"{v * 1000:.0f} ms" if abs(v) >= 0.001 or v == 0 else f"{v * 1000:.2f} ms"
    return f"{v:.1f} s" if v < 100 else f"{v / 60:.1f} min"


METRICS: tuple[Metric, ...] = (
    Metric("train", "Train score (hard, the step's batch)", lambda s: s.train_score, _score),
    Metric("val", "Val score of the current skill", lambda s: s.val_after, _score),
    Metric("tokens", "Tokens per step", lambda s: float(s.tokens), _count),
    Metric("cost", "Cost per step (USD, as backends report it)", lambda s: s.cost_usd, _usd),
    Metric("time", "Time per step", lambda s: s.timings.get("total", sum(s.timings.values()) or None), _secs),
)
BY_KEY = {m.key: m for m in METRICS}


def series_of(metric: Metric, steps: Sequence[StepRow], label: str = "", colour: int = 0,
              first: int | None = None, last: int | None = None) -> Series:
    pts = []
    for s in steps:
        if (first is not None and s.step < first) or (last is not None and s.step > last):
            continue
        v = metric.value(s)
        if v is not None and isinstance(v, (int, float)) and math.isfinite(v):
            pts.append((s.step, float(v)))
    return Series(label or metric.title, tuple(pts), colour % COLOURS)


def _nice(lo: float, hi: float, most: int = 4) -> tuple[float, float, float]:
    """(axis low, axis high, tick spacing) covering lo..hi with at most ``most`` + 1 ticks."""
    if hi <= lo:
        hi = lo + (abs(lo) * 0.1 or 1.0)
    span = hi - lo
    raw = span / most
    mag = 10 ** math.floor(math.log10(raw))
    spacing = next(m * mag for m in (1, 2, 2.5, 5, 10) if span / (m * mag) <= most)
    return math.floor(lo / spacing) * spacing, math.ceil(hi / spacing) * spacing, spacing


def chart(series: Sequence[Series], title: str, fmt: Callable[[float], str], chart_id: str,
          x_from: int = 0, x_to: int | None = None) -> str:
    """One chart: every series as a line over steps ``x_from``..``x_to`` (default: the last step)."""
    values = [v for s in series for _, v in s.points]
    steps = sorted({st for s in series for st, _ in s.points})
    last = x_to if x_to is not None else max(steps or [1])
    first = min(x_from, last - 1) if last > 0 else 0
    head = (f'<figure class="chart" id="{escape(chart_id)}"><figcaption>{escape(title)}</figcaption>')
    if not values:
        return head + '<p class="note">No value yet.</p></figure>'
    lo, hi = min(values), max(values)
    if lo >= 0 and hi <= 1 and fmt is _score:  # scores: tenths, at least 0.2 tall, labels never repeat
        a, b = math.floor(lo * 10) / 10, math.ceil(hi * 10) / 10
        if b - a < 0.2:
            a = max(0.0, min(a, b - 0.2))
            b = a + 0.2
        y0, y1, tick = _nice(a, b)
    else:
        y0, y1, tick = _nice(min(0.0, lo), hi)
    pw, ph = W - LEFT - RIGHT, H - TOP - BOTTOM

    def x(step: float) -> float:
        return LEFT + pw * (step - first) / max(1, last - first)

    def y(v: float) -> float:
        return TOP + ph * (1 - (v - y0) / ((y1 - y0) or 1))

    out = [head, f'<svg class="plot" viewBox="0 0 {W} {H}" role="img" aria-label="{escape(title)}" '
           f'data-first="{first}" data-last="{last}" data-left="{LEFT}" data-right="{W - RIGHT}" data-width="{W}" '
           f'data-steps="{",".join(map(str, steps))}">']
    n = round((y1 - y0) / tick)
    for i in range(n + 1):
        v = y0 + i * tick
        out.append(f'<line class="grid" x1="{LEFT}" x2="{W - RIGHT}" y1="{y(v):.1f}" y2="{y(v):.1f}"/>'
                   f'<text class="tick" x="{LEFT - 6}" y="{y(v) + 4:.1f}" text-anchor="end">{escape(fmt(v))}</text>')
    span = last - first
    for t in step_ticks(span):
        out.append(f'<text class="tick" x="{x(first + t):.1f}" y="{H - BOTTOM + 16}" '
                   f'text-anchor="middle">{first + t}</text>')
    out.append(f'<line class="axisline" x1="{LEFT}" x2="{W - RIGHT}" y1="{TOP + ph}" y2="{TOP + ph}"/>')
    by_step = {st: i for i, st in enumerate(steps)}
    for s in series:
        if not s.points:
            continue
        d = "M" + "L".join(f"{x(st):.1f} {y(v):.1f}" for st, v in s.points)
        cells = [""] * len(steps)
        for st, v in s.points:
            cells[by_step[st]] = fmt(v)
        out.append(f'<path class="series c{s.colour}" d="{d}" data-label="{escape(s.label)}" '
                   f'data-values="{escape("|".join(cells))}"><title>{escape(s.label)}</title></path>')
        if len(s.points) <= 60:
            out += [f'<circle class="dot c{s.colour}" cx="{x(st):.1f}" cy="{y(v):.1f}" r="2.2"/>' for st, v in s.points]
    out.append(f'<line class="guide" x1="-10" x2="-10" y1="{TOP}" y2="{TOP + ph}"/>'
               f'<rect class="brush" x="-10" y="{TOP}" width="0" height="{ph}"/>')
    out.append("</svg>")
    if len(series) > 1:
        out.append('<p class="legend">' + " ".join(
            f'<span class="key c{s.colour}">{escape(s.label)}</span>' for s in series) + "</p>")
    out.append('<p class="readout" aria-live="polite"></p></figure>')
    return "".join(out)


def run_charts(steps: Sequence[StepRow], x_from: int | None = None, x_to: int | None = None,
               chart_prefix: str = "chart") -> list[str]:
    """The five per-step charts of one run, over the zoomed range when given."""
    first = x_from if x_from is not None else 0
    last = x_to if x_to is not None else max([s.step for s in steps] or [1])
    return [chart([series_of(m, steps, first=first, last=last)], m.title, m.fmt, f"{chart_prefix}-{m.key}",
                  first, last) for m in METRICS]


def compare_charts(runs: Sequence[tuple[str, Sequence[StepRow]]],
                   keys: Sequence[str] = ("val", "train", "tokens", "time")) -> list[str]:
    """Charts with one line per run (its label), the same colour per run on every chart."""
    last = max([s.step for _, steps in runs for s in steps] or [1])
    out = []
    for key in keys:
        m = BY_KEY[key]
        out.append(chart([series_of(m, steps, label, i) for i, (label, steps) in enumerate(runs)],
                         m.title, m.fmt, f"compare-{key}", 0, last))
    return out

"""Console renderer: turns trainer events into the seed's line format, with a
progress bar while rollouts run.

Lines carry text from people and models (skill descriptions, task records, run
directories, backend errors, a model's ``[/INST]``), so nothing printed here is
read as rich markup (``Read [/docs] first`` would be a closing tag) or as emoji
shortcodes (``root:x:0:0`` would print ``root❌0:0``): the renderer prints
:class:`rich.text.Text` objects, which rich shows verbatim on any console, and
:func:`plain_console` is the console every CLI prints such text on.
"""

from __future__ import annotations

from typing import IO

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TaskID, TextColumn, TimeElapsedColumn
from rich.text import Text

from skillopt_core.run import events as ev


def plain_console(stderr: bool = False, file: IO[str] | None = None) -> Console:
    """A console that prints text as given: no markup, no emoji codes, no highlighting."""
    return Console(stderr=stderr, file=file, markup=False, emoji=False, highlight=False, soft_wrap=True)


def gate_text(event: ev.GateDecided) -> str:
    """The gate's line: the val scores it compared and its verdict, worded so the two agree.

    ``val score 0.68 > 0.65 ✓ ACCEPT``; ``val score 0.40 < 0.65 ✗ REJECT``. When the numbers alone
    do not explain the verdict (a higher candidate rejected by the paired test or the minimum
    effect) the gate's reason follows. A decision taken before every val item was scored says
    over how many items the scores are, and what the gate assumed of the others (its reason)."""
    if event.action == "no_change":
        return f"skipped ({event.reason})"
    accept = event.action.startswith("accept")
    mark = "✓ ACCEPT" if accept else "✗ REJECT"
    if event.candidate is None or event.current is None:
        return f"{event.reason} {mark}"
    cand, cur = round(event.candidate, 2), round(event.current, 2)
    op = ">" if cand > cur else "<" if cand < cur else "="
    if op == "=" and event.candidate != event.current:
        op = ">" if event.candidate > event.current else "<"
    if event.action == "accept_ungated":
        return f"val score {cand:.2f} {op} {cur:.2f} {mark} (gate off)"
    early = bool(event.n_items) and event.n_evaluated < event.n_items
    scope = f" on the {event.n_evaluated} of {event.n_items} val items scored" if early else ""
    text = f"val score {cand:.2f} {op} {cur:.2f}{scope} {mark}"
    agrees = op == ">" if accept else op in ("<", "=")
    if early:
        why = event.reason.split(": ", 1)[1] if event.reason.startswith("decided after ") else event.reason
        return f"{text}: {why}" if why else text
    if not agrees:
        return f"{text}: {event.reason}" if event.reason else text
    return text + (" (ties reject)" if op == "=" and not accept else "")


class ConsoleRenderer:
    def __init__(self, console: Console | None = None, progress: bool = True) -> None:
        self.console = console or plain_console()
        self._progress_enabled = progress and self.console.is_terminal
        self._progress: Progress | None = None
        self._task: TaskID | None = None

    def _prefix(self, step: int, total: int, phase: str = "") -> str:
        if phase == "test":
            return "[Test]"
        return f"[Step {step}/{total}]" if step and total else "[Setup]"

    def _stop_progress(self) -> None:
        if self._progress is not None:
            self._progress.stop()
            self._progress = None

    def _print(self, line: str, style: str | None = None) -> None:
        self.console.print(Text(line, style=style or ""))

    def __call__(self, event: ev.Event) -> None:
        p = self._print
        if isinstance(event, ev.RunStarted):
            splits = ", ".join(f"{k} {v}" for k, v in event.splits.items())
            roles = ", ".join(f"{k}={v}" for k, v in event.backends.items())
            p(f"Run {event.run_id} ({event.env}): {event.total_steps} steps; {splits}")
            p(f"Backends: {roles}")
            p(f"Run directory: {event.run_dir}")
            if event.resumed_at_step:
                p(f"Resuming after step {event.resumed_at_step}")
        elif isinstance(event, ev.RolloutStarted):
            label = f" ({event.label})" if event.label else ""
            p(f"{self._prefix(event.step, event.total_steps, event.phase)} Rollout{label}: {event.n_items} items, "
              f"{event.workers} workers...")
            if self._progress_enabled:
                self._progress = Progress(
                    TextColumn("  {task.description}", markup=False), BarColumn(), MofNCompleteColumn(),
                    TimeElapsedColumn(),
                    console=self.console, transient=True,
                )
                self._progress.start()
                self._task = self._progress.add_task(event.phase, total=event.n_items)
        elif isinstance(event, ev.RolloutProgress):
            if self._progress is not None and self._task is not None:
                self._progress.update(self._task, completed=event.done)
        elif isinstance(event, ev.RolloutDone):
            self._stop_progress()
            notes = [f"{event.cached} cached"] if event.cached else []
            if event.failed:
                notes.append(f"{event.failed} failed, scored 0")
            cached = f" ({', '.join(notes)})" if notes else ""
            prefix = self._prefix(event.step, event.total_steps, event.phase)
            if event.phase == "train":
                p(f"{prefix} Score: {event.score:.2f}{cached} → Reflect...")
            else:
                label = event.label or event.phase
                p(f"{prefix} {label} score: {event.score:.2f}{cached}")
        elif isinstance(event, ev.PatchesGenerated):
            notes = []
            if event.n_invalid_replies:
                notes.append(f"{event.n_invalid_replies} invalid optimizer replies")
            if event.n_skipped_edits:
                notes.append(f"{event.n_skipped_edits} malformed edits skipped")
            extra = f" ({'; '.join(notes)})" if notes else ""
            p(f"{self._prefix(event.step, event.total_steps)} {event.n_patches} edit patches generated{extra}")
        elif isinstance(event, ev.EditsSelected):
            p(f"{self._prefix(event.step, event.total_steps)} Selected {event.n_selected} edits ({event.budget_text})")
        elif isinstance(event, ev.EditsApplied):
            parts = ", ".join(f"{v} {k.replace('_', ' ')}" for k, v in event.outcomes.items() if v)
            p(f"{self._prefix(event.step, event.total_steps)} Update: {parts or 'no edits'}")
        elif isinstance(event, ev.GateDecided):
            p(f"{self._prefix(event.step, event.total_steps)} Gate: {gate_text(event)}")
        elif isinstance(event, ev.EpochEnd):
            su = event.slow_update
            if su:
                p(f"[Epoch {event.epoch}/{event.num_epochs}] Slow update: {su.get('summary', '')}")
            if event.meta_notes:
                p(f"[Epoch {event.epoch}/{event.num_epochs}] Meta skill notes updated")
        elif isinstance(event, ev.Notice):
            style = "yellow" if event.level == "warning" else None
            p(f"[Note] {event.text}", style=style)
        elif isinstance(event, ev.BestChanged):
            p(f"[Best] {event.source}: {event.reason}")
        elif isinstance(event, ev.RunStopped):
            self._stop_progress()
            titles = {"budget_exhausted": "Budget stop", "cancelled": "Cancelled", "failed": "Failed"}
            title = titles.get(event.status, event.status)
            where = f"[Step {event.step}]" if event.step else "[Run]"
            p(f"{where} {title}: {event.message}", style="red" if event.status == "failed" else "yellow")
        elif isinstance(event, ev.RunEnd):
            self._stop_progress()
            best = "n/a" if event.best_val is None else f"{event.best_val:.3f}"
            p(f"Done ({event.status}) after {event.steps_done} step{'' if event.steps_done == 1 else 's'}. Best val "
              f"{best}.")
            if event.initial_test is not None and event.best_test is not None:
                p(f"Test: initial {event.initial_test:.3f} → best {event.best_test:.3f}")
            source = f" ({event.best_source})" if event.best_source else ""
            p(f"Best skill{source}: {event.run_dir}/best_skill.md")

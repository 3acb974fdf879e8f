"""Trigger evaluation and description optimisation: does the agent load the skill when it should?

A skill helps only when the agent loads it, and the agent decides that from the
host's skill listing: each skill's ``name`` and front matter ``description``.
The night's replays put the skill in front of the agent, so they never see a
skill that would not have been loaded. This module measures that decision and
improves the description (issue 33 §3).

- **Trigger set** (:func:`trigger_set`): from the person's own sessions, the
  prompts of the skill's recurring tasks (should load it), of the project's
  other recurring tasks and of one-off prompts (should not). Split train/test
  by task (a recurring task's prompts stay on one side; one-offs by prompt), so
  the test figures are on tasks the optimizer never saw.
- **Listing** (:func:`listing`): the skills as the host presents them to its
  model (the shape of Claude Code's ``<available_skills>`` block, Codex's
  ``## Skills`` list); the skill is listed with its sibling skills.
- **Decision** (:func:`decide`): the night's target model is asked, from the
  listing and one request, which skills it would load (JSON
  ``{"load": [names]}``); an answer that cannot be read counts as "not loaded"
  and is counted. With an agent CLI as the target it is not asked: the real CLI
  runs each request with the skill installed where it finds skills, and whether
  it loaded the skill is read from its trajectory (Claude Code's ``Skill`` tool,
  Codex reading the ``SKILL.md``; :mod:`sleep.cycle.trigger_trace`).
  **Metric**: precision and recall of "loaded" (:func:`figures`).
- **Optimisation** (:func:`optimise`): the optimizer sees the current
  description and the train set's misses and false alarms and proposes
  ``candidates`` new descriptions (one line, at most ``max_chars``, no angle
  brackets); each is scored on the train set, the best is gated on the
  held-out test set: its F1 must rise and its precision may not fall by more
  than ``precision_margin``. The accepted description becomes a proposal that
  changes only the front matter's ``description:`` (:func:`with_description`;
  every other byte of the file stays), with the figures before and after in the
  step's result (:func:`run_part`: the night's record keeps it) and the proposal's report.
"""

from __future__ import annotations

import asyncio
import hashlib
import re
from collections.abc import Awaitable, Callable, Iterable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ConfigDict, Field

from skillopt_core.backends.base import CompletionRequest, Message
from skillopt_core.backends.json_output import json_documents
from sleep.cycle.stepresult import Spent, StepResult

Say = Callable[[str], None]
FRONT = re.compile(r"\A---(\r?\n)(.*?)(\r?\n)---(\r?\n|\Z)", re.S)


class TriggerSettings(BaseModel):
    """``sleep.triggers``: trigger evaluation and description optimisation."""

    model_config = ConfigDict(extra="forbid")

    enabled: bool = True
    test_ratio: float = Field(default=0.5, gt=0.0, lt=1.0)  # share of tasks (and one-offs) held out
    min_test: int = Field(default=2, ge=1)  # held-out prompts needed on each side (should / should not)
    max_queries: int = Field(default=40, ge=4)  # per side (should / should not), most recent tasks first
    candidates: int = Field(default=2, ge=1, le=8)  # descriptions the optimizer proposes per night
    max_chars: int = Field(default=1024, ge=40)  # Claude Code's limit for a description
    precision_margin: float = Field(default=0.1, ge=0.0, le=1.0)
    seed: int = 0


@dataclass(frozen=True)
class Query:
    text: str
    should: bool  # the skill should be loaded for it
    source: str  # the recurring task's id, or "one-off"
    split: str  # train | test


def _side(key: str, seed: int, ratio: float) -> str:
    h = int(hashlib.sha256(f"{seed}:{key}".encode()).hexdigest()[:8], 16) / 0xFFFFFFFF
    return "test" if h < ratio else "train"


def trigger_set(own: Sequence[tuple[str, str]], others: Sequence[tuple[str, str]], one_offs: Sequence[str],
                settings: TriggerSettings) -> list[Query]:
    """Queries from ``own`` (task id, prompt) pairs of the skill's tasks, ``others`` of the project's
    other recurring tasks and ``one_offs`` prompts. Each side (should / should not) is split by task
    (one-offs by prompt) with at least one task on each split when there are two or more."""
    out: list[Query] = []
    for should, pairs in ((True, list(own)), (False, list(others) + [(f"one-off:{p}", p) for p in one_offs])):
        firsts = {p: k for k, p in reversed(pairs)}  # each prompt once, with the first task it came from
        pairs = [(k, p) for k, p in pairs if p.strip() and firsts.get(p) == k and firsts.pop(p)][: settings.max_queries]
        keys = list(dict.fromkeys(k for k, _ in pairs))
        side = {k: _side(k, settings.seed, settings.test_ratio) for k in keys}
        if len(keys) >= 2 and len(set(side.values())) == 1:  # both splits need a task
            side[sorted(keys, key=lambda k: hashlib.sha256(k.encode()).hexdigest())[0]] = (
                "train" if next(iter(side.values())) == "test" else "test")
        out += [Query(p, should, "one-off" if k.startswith("one-off:") else k, side[k]) for k, p in pairs]
    return out


def listing(host: str, skills: Sequence[tuple[str, str]]) -> str:
    """The skill listing as ``host`` shows it to its model (name and description of each)."""
    if host == "claude-code":
        body = "\n".join(f"<skill>\n<name>\n{n}\n</name>\n<description>\n{d}\n</description>\n</skill>"
                         for n, d in skills)
        return f"<available_skills>\n{body}\n</available_skills>"
    return "## Skills\n" + "\n".join(f"- {n}: {d}" for n, d in skills)


def front_matter(text: str) -> dict[str, Any]:
    m = FRONT.match(text)
    if not m:
        return {}
    try:
        data = yaml.safe_load(m.group(2))
    except yaml.YAMLError:
        return {}
    return data if isinstance(data, dict) else {}


def other_skills(skill_path: Path) -> list[tuple[Path, str]]:
    """(path, text) of the other readable skills in the same skills folder (the rest of the listing)."""
    out = []
    folder = skill_path.parent.parent
    for other in sorted(folder.glob("*/SKILL.md")) if folder.is_dir() else []:
        if other.resolve() == skill_path.resolve():
            continue
        try:
            out.append((other, other.read_text(encoding="utf-8")))
        except (OSError, UnicodeDecodeError):
            continue
    return out


def sibling_skills(skill_path: Path) -> list[tuple[str, str]]:
    """(name, description) of the other skills in the same skills folder."""
    found = [(other, front_matter(text)) for other, text in other_skills(skill_path)]
    return [(str(data.get("name") or other.parent.name), " ".join(str(data["description"]).split()))
            for other, data in found if data.get("description")]


def _prompt(host: str, listed: str, query: str) -> CompletionRequest:
    system = (f"You are a coding agent ({host}). Skills are instructions you can load by name before you start "
              "a request; load one only when the request is the kind of work it describes.\n\n" + listed)
    user = (f"Request: {query}\n\nWhich of the listed skills would you load before starting on this request? "
            'Answer with JSON only: {"load": [names]} (an empty list when none fits).')
    return CompletionRequest(messages=(Message("user", user),), system=system, max_tokens=200, role="target",
                             stage="trigger", temperature=0.0)


def reply_object(text: str | None) -> dict[str, Any]:
    """The first JSON object in a model's reply ({} when there is none): the engine's reader of
    JSON in replies (:func:`skillopt_core.backends.json_output.json_documents`)."""
    return next((d for d in json_documents(text or "") if isinstance(d, dict)), {})


def _loaded(text: str) -> list[str] | None:
    names = reply_object(text).get("load")
    return [str(n) for n in names] if isinstance(names, list) else None


async def decide(backend: Any, host: str, name: str, description: str, others: Sequence[tuple[str, str]],
                 queries: Sequence[Query], workers: int = 4) -> list[tuple[Query, bool, bool]]:
    """(query, loaded?, answer read?) for each query, asked with ``description`` in the listing."""
    listed = listing(host, sorted([(name, description), *others]))
    sem = asyncio.Semaphore(max(1, workers))

    async def one(q: Query) -> tuple[Query, bool, bool]:
        async with sem:
            done = await backend.complete(_prompt(host, listed, q.text))
        names = _loaded(done.text)
        return q, names is not None and name in names, names is not None

    return list(await asyncio.gather(*(one(q) for q in queries)))


def figures(decisions: Iterable[tuple[Query, bool, bool]]) -> dict[str, Any]:
    """Trigger precision, recall and F1 of "loaded" (None when undefined), with the counts."""
    tp = fp = fn = tn = unread = 0
    for q, loaded, read in decisions:
        unread += not read
        if q.should:
            tp, fn = tp + loaded, fn + (not loaded)
        else:
            fp, tn = fp + loaded, tn + (not loaded)
    precision = tp / (tp + fp) if tp + fp else None
    recall = tp / (tp + fn) if tp + fn else None
    f1 = 2 * tp / (2 * tp + fp + fn) if tp + fp + fn else None
    r = lambda v: None if v is None else round(v, 4)  # noqa: E731
    return {"precision": r(precision), "recall": r(recall), "f1": r(f1), "tp": tp, "fp": fp, "fn": fn, "tn": tn,
            "unread": unread, "n": tp + fp + fn + tn}


def check_description(text: str, settings: TriggerSettings) -> str | None:
    """Why ``text`` cannot be a description, or None."""
    if not text.strip():
        return "empty"
    if "\n" in text.strip() or len(text) > settings.max_chars:
        return f"not one line of at most {settings.max_chars} characters"
    if "<" in text or ">" in text:
        return "angle brackets (hosts refuse XML in a description)"
    return None


async def propose(optimizer: Any, name: str, description: str, misses: list[str], alarms: list[str],
                  settings: TriggerSettings) -> tuple[list[str], list[str]]:
    """(candidate descriptions, why others were dropped) from the optimizer."""
    shown = lambda xs: "\n".join(f"- {x[:300]}" for x in xs[:12]) or "- (none)"  # noqa: E731
    user = (f"A coding agent decides from a skill's one-line description whether to load the skill.\n"
            f"Skill: {name}\nCurrent description: {description}\n\n"
            f"Requests that SHOULD have loaded it but did not:\n{shown(misses)}\n\n"
            f"Requests that should NOT have loaded it but did:\n{shown(alarms)}\n\n"
            f"Write {settings.candidates} improved descriptions: one line each, at most {settings.max_chars} "
            "characters, saying what the skill is for and when to use it, general enough for new requests of "
            'the same kind. Answer with JSON only: {"descriptions": ["..."]}.')
    done = await optimizer.complete(CompletionRequest(messages=(Message("user", user),), max_tokens=800,
                                                      role="optimizer", stage="describe", temperature=0.7))
    raw = reply_object(done.text).get("descriptions")
    out, dropped = [], []
    for d in raw if isinstance(raw, list) else []:
        d = " ".join(str(d).split())
        why = check_description(d, settings)
        if why:
            dropped.append(f"{d[:60]!r}: {why}")
        elif d != description and d not in out:
            out.append(d)
    if not isinstance(raw, list):
        dropped.append("the optimizer's answer held no descriptions")
    return out[: settings.candidates], dropped


@dataclass
class TriggerResult:
    before: dict[str, dict[str, Any]]  # split -> figures, with the current description
    after: dict[str, dict[str, Any]] | None = None  # with the accepted description
    description_before: str = ""
    description_after: str | None = None
    accepted: bool = False
    why: str = ""
    tried: list[dict[str, Any]] | None = None  # each candidate's train figures
    dropped: list[str] | None = None
    n_queries: dict[str, int] | None = None
    decided_by: str = ""  # how "loaded" was decided: the model asked, or an agent CLI's trajectory

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def _by_split(decisions: list[tuple[Query, bool, bool]]) -> dict[str, dict[str, Any]]:
    return {s: figures(d for d in decisions if d[0].split == s) for s in ("train", "test")}


def _better(after: dict[str, Any], before: dict[str, Any], margin: float) -> tuple[bool, str]:
    f_a, f_b = after["f1"] or 0.0, before["f1"] or 0.0
    p_a, p_b = after["precision"] or 0.0, before["precision"] or 0.0
    if f_a <= f_b + 1e-9:
        return False, f"held-out trigger F1 {f_b:.3f} → {f_a:.3f} did not rise"
    if p_b - p_a > margin + 1e-9:
        return False, f"held-out trigger precision fell {p_b:.3f} → {p_a:.3f} (more than {margin:g})"
    return True, (f"held-out trigger F1 {f_b:.3f} → {f_a:.3f}, recall {before['recall'] or 0:.3f} → "
                  f"{after['recall'] or 0:.3f}, precision {p_b:.3f} → {p_a:.3f}")


Decide = Callable[[str, Sequence[Query]], Awaitable[list[tuple[Query, bool, bool]]]]


def asking(target: Any, host: str, name: str, others: Sequence[tuple[str, str]], workers: int = 4) -> Decide:
    """``decide(description, queries)`` by asking ``target`` from the host's listing (:func:`decide`)."""
    return lambda description, queries: decide(target, host, name, description, others, queries, workers)


async def optimise(decider: Decide, optimizer: Any, name: str, description: str, queries: list[Query],
                   settings: TriggerSettings) -> TriggerResult:
    """Measure ``description``; propose, select on train and gate on test (see the module docstring).
    ``decider(description, queries)``: :func:`asking` a model, or an agent CLI's trajectory
    (:class:`sleep.cycle.trigger_trace.TraceDecider`)."""
    base = await decider(description, queries)
    if base and all(not read for _, _, read in base):  # nothing measured: candidates would wait out the same failures
        raise RuntimeError(f"none of the {len(base)} trigger runs gave a readable answer (each failed, timed out "
                           "or answered without a decision); nothing was measured")
    result = TriggerResult(before=_by_split(base), description_before=description,
                           n_queries={s: sum(q.split == s for q in queries) for s in ("train", "test")})
    train = [d for d in base if d[0].split == "train"]
    misses = [q.text for q, loaded, _ in train if q.should and not loaded]
    alarms = [q.text for q, loaded, _ in train if not q.should and loaded]
    if not misses and not alarms:
        result.why = "every train query triggered as it should; nothing to improve"
        return result
    candidates, result.dropped = await propose(optimizer, name, description, misses, alarms, settings)
    if not candidates:
        result.why = "the optimizer proposed no usable description" + (
            f" ({'; '.join(result.dropped)})" if result.dropped else "")
        return result
    train_q = [q for q in queries if q.split == "train"]
    tried: list[dict[str, Any]] = []
    for cand in candidates:
        f = figures(await decider(cand, train_q))
        tried.append({"description": cand, "train": f})
    result.tried = tried
    best = max(tried, key=lambda t: (t["train"]["f1"] or 0.0, t["train"]["precision"] or 0.0))
    if (best["train"]["f1"] or 0.0) <= (result.before["train"]["f1"] or 0.0) + 1e-9:
        result.why = "no candidate description triggered better on the train queries"
        return result
    after = await decider(best["description"], queries)
    result.after = _by_split(after)
    result.accepted, result.why = _better(result.after["test"], result.before["test"], settings.precision_margin)
    if result.accepted:
        result.description_after = best["description"]
    return result


def with_description(text: str, description: str) -> str:
    """``text`` with its front matter's ``description:`` set to ``description``; every other byte kept
    (the key's continuation lines are replaced with it; the key is added after ``name:`` if absent)."""
    m = FRONT.match(text)
    value = yaml.safe_dump({"description": description}, width=100000, allow_unicode=True,
                           default_flow_style=False).rstrip("\n")
    if not m:
        nl = "\r\n" if "\r\n" in text else "\n"
        return f"---{nl}{value}{nl}---{nl}{nl}" + text
    nl = m.group(1)
    lines = m.group(2).split(nl)
    out, i, done = [], 0, False
    while i < len(lines):
        line = lines[i]
        if not done and re.match(r"description\s*:", line):
            i += 1
            while i < len(lines) and (lines[i].startswith((" ", "\t")) or not lines[i].strip()):
                i += 1
            out.append(value)
            done = True
            continue
        out.append(line)
        i += 1
    if not done:
        at = next((k + 1 for k, line in enumerate(out) if re.match(r"name\s*:", line)), len(out))
        out.insert(at, value)
    new = text[: m.start(2)] + nl.join(out) + text[m.end(2):]
    if front_matter(new).get("description") != description:
        raise ValueError("the description could not be written into the front matter")
    return new


class _Tally:
    """A backend that counts the calls and tokens it forwards (the night's usage of this step)."""

    def __init__(self, inner: Any) -> None:
        self.inner, self.calls, self.input_tokens, self.output_tokens, self.cost_usd = inner, 0, 0, 0, 0.0

    async def complete(self, request: CompletionRequest) -> Any:
        self.calls += 1
        done = await self.inner.complete(request)
        u = getattr(done, "usage", None)
        if u is not None:
            self.input_tokens += u.input_tokens
            self.output_tokens += u.output_tokens
            self.cost_usd += getattr(u, "cost_usd", 0.0) or 0.0
        return done

    def spent(self) -> Spent:
        return Spent(self.calls, self.input_tokens, self.output_tokens, round(self.cost_usd, 6))


def project_queries(project: Path, own_tasks: set[str], settings: TriggerSettings) -> list[Query]:
    """The trigger set of a skill whose recurring tasks are ``own_tasks``, from the project's index."""
    from sleep.index import Index
    from sleep.mine.store import load_pool, load_tasks

    with Index.open() as index:
        records = load_tasks(index.conn, str(project), enabled_only=True)
        pool = [item for p in {r.project for r in records} | {str(project)} for item in load_pool(index.conn, p)]
    enabled = {r.id for r in records}
    own = [(i.task_id, i.text) for i in pool if i.task_id in own_tasks]
    others = [(i.task_id, i.text) for i in pool if i.task_id and i.task_id in enabled and i.task_id not in own_tasks]
    one_offs = [i.text for i in pool if not i.task_id]
    return trigger_set(own, others, one_offs, settings)


def run_part(choice: Any, seed_text: str, project: Path, own_tasks: set[str], backends: dict,
             settings: TriggerSettings, budget_left: int | None, say: Say, night_id: str, dry_run: bool,
             workers: int = 4) -> StepResult | None:
    """The trigger step of one skill's part (None: off for it): its figures; an accepted description is
    staged as a ``description`` proposal (not in a dry run). Failures are returned, never raised."""
    if not settings.enabled or choice.managed:
        return None
    description = str(front_matter(seed_text).get("description") or "")
    name = str(front_matter(seed_text).get("name") or choice.name)
    queries = project_queries(project, own_tasks, settings)
    counts = {(s, w): sum(q.split == s and q.should == w for q in queries) for s in ("train", "test")
              for w in (True, False)}
    short = [f"{n} {s} prompts that should{'' if w else ' not'} load it" for (s, w), n in counts.items()
             if n < (settings.min_test if s == "test" else 1)]
    if short:
        return StepResult("triggers", skipped="too few for a trigger set: " + ", ".join(short))
    need = len(queries) * 2 + sum(q.split == "train" for q in queries) * settings.candidates + 1
    if budget_left is not None and budget_left < need:
        skipped = f"the budget has {max(budget_left, 0)} call(s) left; the trigger step may need {need}"
        say(f"[Triggers] {choice.name}: {skipped}")
        return StepResult("triggers", skipped=skipped)
    from sleep.cycle.trigger_trace import TraceDecider, cli_of

    optimizer = _Tally(backends["optimizer"])
    decider: Decide
    if cli_of(backends["target"]) is not None:  # an agent CLI: read from what it did, not asked
        trace = TraceDecider(backends["target"], name, lambda d: with_description(seed_text, d),
                             [text for _, text in other_skills(choice.path)], workers)
        target = trace.backend = _Tally(trace.backend)
        decider, how = trace, trace.how()
    else:
        target = _Tally(backends["target"])
        decider = asking(target, choice.host, name, sibling_skills(choice.path), workers)
        how = f"the target model asked from {choice.host}'s skill listing"
    try:
        result = asyncio.run(optimise(decider, optimizer, name, description, queries, settings))
    except Exception as exc:  # what a failed step spent is counted too
        say(f"[Triggers] {choice.name}: not evaluated ({exc})")
        return StepResult("triggers", {"decided_by": how}, error=f"{type(exc).__name__}: {exc}",
                          spent=target.spent() + optimizer.spent())
    result.decided_by = how
    b, a = result.before["test"], (result.after or {}).get("test")
    say(f"[Triggers] {choice.name}: held-out recall {_pct(b['recall'])}, precision {_pct(b['precision'])} "
        f"({(result.n_queries or {}).get('test', 0)} test prompts)" + (f" → recall {_pct(a['recall'])}, precision "
                                                        f"{_pct(a['precision'])}" if a else "") + f"; {result.why}")
    staged = _stage(night_id, choice, seed_text, project, result, say) if result.accepted and not dry_run else None
    return StepResult("triggers", result.to_dict(), spent=target.spent() + optimizer.spent(), proposal=staged)


def _pct(v: float | None) -> str:
    return "n/a" if v is None else f"{v:.0%}"


def _stage(night_id: str, choice: Any, seed_text: str, project: Path, result: TriggerResult, say: Say) -> dict:
    from sleep.proposals.errors import DuplicateProposal, NothingToPropose
    from sleep.proposals.lesson import evidence_key
    from sleep.proposals.model import ProposalReport
    from sleep.proposals.stage import stage

    b, a = result.before["test"], (result.after or {})["test"]
    report = ProposalReport(
        baseline_val=b["f1"], candidate_val=a["f1"], policy="held-out trigger F1", gate_accept=True,
        gate_reason=result.why, n_val_items=b["n"], cycle_id=night_id, source="cycle", kind="description",
        triggers=result.to_dict(),
        notes=[f"Only the front matter's description changes: {result.description_before!r} → "
               f"{result.description_after!r}.",
               f"Held-out trigger figures: recall {_pct(b['recall'])} → {_pct(a['recall'])}, precision "
               f"{_pct(b['precision'])} → {_pct(a['precision'])} ({b['n']} prompts from your sessions)."],
        lesson_evidence=evidence_key(["description", result.description_after or ""]))
    try:
        proposal = stage(choice.path, with_description(seed_text, result.description_after or ""), report,
                         trained_from_text=seed_text,
                         project=project if choice.path.is_relative_to(project) else None)
    except (DuplicateProposal, NothingToPropose, ValueError) as exc:
        say(f"[Triggers] {choice.name}: the description was not staged: {exc}")
        return {"not_staged": str(exc)}
    say(f"[Triggers] {proposal.id} on branch {proposal.branch} proposes a new description for {choice.name}; "
        f"review with `skillopt-sleep show {proposal.id}`")
    return {"id": proposal.id, "branch": proposal.branch, "kind": "description"}

"""The backends a night uses, and the evidence log of what they were sent.

Replays (the target role) use the agent CLI of the host whose skill folder
holds the skill, else of the host the tasks came from, when it is installed and
logged in (cheap offline checks, nothing is sent), else the configured backend;
the optimizer and judge roles use the configured backends. Every call is appended to the night's
``evidence.jsonl`` (request and reply) in the data directory (mode 0600), never in the project.

Replies are redacted at this boundary (:func:`redact_completion`): the core only
ever sees a reply without the secrets the redactor recognises, so nothing it
writes (``rollouts.json``, ``rollout_cache.jsonl``, ``history.json``,
``best_skill.md``, events) and no later prompt can hold a secret a model echoed,
for example from a file a replay read. Prompts are built from the index (redacted
at harvest) and the skill; the evidence records them redacted as well.
"""

from __future__ import annotations

import dataclasses
import json
import os
import time
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from skillopt_core import Backend, BackendSpec, Completion, CompletionRequest, Settings, create_backend
from sleep import paths
from sleep.hosts import cli_ready, replay_backends, replaying, source_family
from sleep.redact import Redactor, map_strings

CLI_BACKENDS = replay_backends()  # family -> backend replaying through its CLI (sleep/hosts/)
HOST_FAMILY = source_family()  # transcript source -> family


def target_backend(hosts: Counter[str], setting: str, settings: Settings,
                   skill_hosts: Sequence[str] = ()) -> tuple[str, str]:
    """(backend name, why) for replays. ``sleep.target_backend: host`` picks the agent CLI of a
    host whose skill folder holds the skill being trained (``skill_hosts``, :func:`sleep.cycle.skills.skill_hosts`;
    the one the tasks come from most, else its owner first) when that CLI is ready, else that of the
    tasks' most common host whose CLI is ready, else the configured target backend."""
    if setting != "host":
        return setting, f"sleep.target_backend is {setting}"
    families: Counter[str] = Counter()
    for host, n in hosts.items():
        families[HOST_FAMILY.get(host, host)] += n
    skipped = []
    for family in sorted((f for f in skill_hosts if f in CLI_BACKENDS), key=lambda f: -families[f]):
        ok, why = cli_ready(family)
        if ok:
            return CLI_BACKENDS[family], f"the skill is in {family}'s skill folder, and {why}"
        skipped.append(f"{family}, whose skill folder holds the skill: {why}")
    not_skill = f" ({'; '.join(skipped)})" if skipped else ""
    for family, _ in families.most_common():
        if family not in CLI_BACKENDS:
            continue  # a host with no CLI replay
        ok, why = cli_ready(family)
        if ok:
            return CLI_BACKENDS[family], f"the tasks come from {family}, and {why}{not_skill}"
    configured = settings.model.backend_for("target")
    reasons = skipped + [cli_ready(f)[1] for f in families if f in CLI_BACKENDS and f not in skill_hosts]
    return configured, f"no host CLI is ready ({'; '.join(reasons) or 'no host'}); model backend {configured}"


def replay_host(target: str) -> str | None:
    """The host family whose agent CLI the ``target`` backend replays through (None: a model backend)."""
    host = replaying(target)
    return host.family if host is not None and host.replay == target.replace("_", "-") else None


def redact_completion(completion: Completion, redactor: Redactor) -> Completion:
    """``completion`` with every string it carries redacted: the text and, when a backend
    returns them, the other fields that hold model or tool output (a trajectory of
    steps, whatever its shape: strings in dicts, lists and dataclasses). Accounting
    fields are left as they are. The same object comes back when nothing changed."""
    changes = {}
    for f in dataclasses.fields(completion):
        if f.name in _ACCOUNTING_FIELDS:
            continue
        old = getattr(completion, f.name)
        new = map_strings(old, redactor.redact)
        if new is not old and new != old:
            changes[f.name] = new
    return dataclasses.replace(completion, **changes) if changes else completion


_ACCOUNTING_FIELDS = frozenset({"usage", "model", "latency_s"})


class RecordingBackend:
    """Forwards to ``inner``, redacts the reply (:func:`redact_completion`) and appends
    each request and redacted reply to a JSONL file (0600). ``redactor.values`` holds
    what was redacted (the night remembers their keyed hashes)."""

    def __init__(self, inner: Backend, log: Path, redactor: Redactor | None = None) -> None:
        self.inner = inner
        self.log = log
        self.name = inner.name
        self.model = inner.model
        self.redactor = redactor or Redactor(collect=True)

    def describe(self) -> str:
        return self.inner.describe()

    async def complete(self, request: CompletionRequest):
        red = self.redactor.redact
        record: dict[str, Any] = {"at": time.time(), "role": request.role, "stage": request.stage,
                                  "system": red(request.system) if request.system else request.system,
                                  "messages": [[m.role, red(m.content)] for m in request.messages]}
        try:
            completion = await self.inner.complete(request)
        except Exception as exc:
            record["error"] = red(f"{type(exc).__name__}: {exc}")
            self._write(record)
            raise
        completion = redact_completion(completion, self.redactor)
        record["reply"] = completion.text
        if completion.trajectory is not None:
            record["trajectory"] = completion.trajectory.to_dict()
        self._write(record)
        return completion

    def _write(self, record: dict[str, Any]) -> None:
        paths.private_dir(self.log.parent)
        with os.fdopen(paths.private_file(self.log), "a", encoding="utf-8") as fh:
            fh.write(json.dumps(record, ensure_ascii=False) + "\n")


# Per acting rollout: what the agent's output may hold at most (each stream), before the trajectory bounds it.
ACTION_OUTPUT_CAP = 2_000_000


def build_night_backends(settings: Settings, log: Path, redactor: Redactor | None = None,
                         act_family: str | None = None, egress: Any = None) -> dict[str, Backend]:
    """One recorded backend per role, sharing instances as the core does, all redacting
    with ``redactor`` (one per night: its ``values`` are what the night redacted).
    ``act_family``: the target is that agent CLI acting in the sandbox (its own
    instance, wrapped in :class:`sleep.replay.backend.ActionReplayBackend`), so
    everything it did is redacted at this boundary too; ``egress`` (a
    :class:`sleep.replay.egress.EgressProxy`) is its only way to its model API."""
    options = settings.model.model_dump()
    redactor = redactor or Redactor(collect=True)
    built: dict[tuple, Backend] = {}
    out: dict[str, Backend] = {}
    for role in ("target", "optimizer", "judge"):
        key = (settings.model.backend_for(role), settings.model.model_for(role))
        if role == "target" and act_family is not None:
            out[role] = RecordingBackend(_acting(key, options, act_family, egress), log, redactor)
            continue
        if key not in built:
            built[key] = RecordingBackend(create_backend(BackendSpec(name=key[0], model=key[1], role=role,
                                                                     options=options)), log, redactor)
        out[role] = built[key]
    return out


def _acting(key: tuple, options: dict[str, Any], family: str, egress: Any) -> Backend:
    from sleep.replay.backend import ActionReplayBackend
    from sleep.replay.sandbox import BwrapLauncher

    inner = create_backend(BackendSpec(name=key[0], model=key[1], role="target", options=options))
    inner.act(BwrapLauncher(family, egress=egress), output_cap=ACTION_OUTPUT_CAP)  # type: ignore[attr-defined]
    return ActionReplayBackend(inner)  # type: ignore[arg-type]

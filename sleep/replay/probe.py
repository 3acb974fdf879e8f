"""``skillopt-sleep doctor --probe``: one real replay per ready host, in the sandbox, before any night.

For each host whose replay CLI is ready (:func:`sleep.hosts.cli_ready`),
:func:`probe_host` runs what a night runs for one rollout, once: the host's CLI
backend acting through the bubblewrap launcher and the egress proxy the night
would give it (:meth:`sleep.replay.egress.EgressProxy.for_cli`, with
``sleep.replay_api_hosts``), in a disposable checkout of a tiny scratch project
(never the person's), asked to run ``ls`` and write :data:`PROBE_FILE`. One
request; the agent's own tool loop decides how many model calls that is (a
scripted or real model needs two or three; ``model.max_turns`` is capped at
:data:`MAX_TURNS`). The answer says what works:

- *reached its endpoint*: a completion came back (else the CLI's error, and
  the hosts the sandbox refused with how to allow them);
- *ran a command*: a command that started (not denied, not exit 126/127);
- *wrote a file*: :data:`PROBE_FILE` changed in the checkout (seen there, not
  taken from the CLI's word);
- *refused*: commands the host denied and hosts the sandbox refused.

Everything it creates lives in a private replay root removed afterwards (its
scratch HOMEs with copies of the CLI's login included); nothing of the
person's projects is touched.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from skillopt_core import BackendSpec, CompletionRequest, create_backend
from skillopt_core.backends.base import BackendError
from skillopt_core.replay import REPLAY_DIR_NAME, REPLAY_ROOT_ENV
from skillopt_core.tasks.judges.outcome import started
from sleep.hosts import cli_ready, replay_backends, replaying
from sleep.hosts.host import load_ref

PROBE_FILE = "skillopt-probe.txt"
MAX_TURNS = 6
PROMPT = (f"SkillOpt readiness probe. In this folder, run the shell command `ls`, then create the file "
          f"{PROBE_FILE} containing the word ok. Then answer with the single word: done.")


@dataclass
class ProbeResult:
    host: str
    backend: str
    reached: bool = False
    ran: list[str] = field(default_factory=list)  # commands that started
    wrote: bool = False
    denied: list[str] = field(default_factory=list)  # commands the host refused
    refused_hosts: list[str] = field(default_factory=list)  # what the sandbox's egress refused
    unreachable_hosts: list[str] = field(default_factory=list)  # allowed, but they did not resolve or answer
    error: str = ""
    seconds: float = 0.0

    @property
    def works(self) -> bool:
        return self.reached and bool(self.ran) and self.wrote

    def describe(self) -> str:
        parts = [f"reached its endpoint ({self.seconds:.1f} s)" if self.reached
                 else f"did not answer: {self.error.splitlines()[0] if self.error else 'no reason given'}"]
        if self.reached:
            parts.append("ran " + ", ".join(f"`{c}`" for c in self.ran[:3]) if self.ran else "ran no command")
            parts.append(f"wrote {PROBE_FILE}" if self.wrote else "wrote no file")
        refused = [f"command `{c}`" for c in self.denied[:3]] + [f"host {h}" for h in self.refused_hosts[:3]]
        parts.append("refused: " + (", ".join(refused) if refused else "nothing"))
        if self.unreachable_hosts:
            parts.append("could not reach: " + ", ".join(self.unreachable_hosts[:3]))
        return "; ".join(parts)


@contextlib.contextmanager
def private_replay_root() -> Iterator[Path]:
    """A fresh replay root for the probe alone (so its scratch HOMEs never touch a running
    night's), set for the block and removed after it."""
    base = Path(tempfile.mkdtemp(prefix="skillopt-probe-"))
    root = base / REPLAY_DIR_NAME
    root.mkdir(mode=0o700)
    before = os.environ.get(REPLAY_ROOT_ENV)
    os.environ[REPLAY_ROOT_ENV] = str(root)
    try:
        yield root
    finally:
        if before is None:
            os.environ.pop(REPLAY_ROOT_ENV, None)
        else:
            os.environ[REPLAY_ROOT_ENV] = before
        shutil.rmtree(base, ignore_errors=True)


def _scratch_project(root: Path) -> Path:
    project = root / "probe-project"
    project.mkdir()
    (project / "README.md").write_text("A scratch project for SkillOpt's readiness probe.\n", encoding="utf-8")
    return project


async def probe_host(family: str, backend: str, model: str | None = None, options: dict[str, Any] | None = None,
                     api_hosts: tuple[str, ...] | list[str] = ()) -> ProbeResult:
    """One acting replay of the probe task through ``backend`` (``family``'s CLI) in the sandbox."""
    from sleep.replay.backend import ActionReplayBackend
    from sleep.replay.checkout import replay_checkout
    from sleep.replay.egress import EgressProxy
    from sleep.replay.sandbox import BwrapLauncher

    result = ProbeResult(family, backend)
    opts = dict(options or {})
    opts["max_turns"] = min(int(opts.get("max_turns") or MAX_TURNS), MAX_TURNS)
    started_at = time.monotonic()
    with private_replay_root() as root:
        try:
            egress = EgressProxy.for_cli(family, api_hosts)
        except ValueError as exc:
            result.error = str(exc)
            return result
        try:
            inner = create_backend(BackendSpec(name=backend, model=model, role="target", options=opts))
            inner.act(BwrapLauncher(family, egress=egress))  # type: ignore[attr-defined]
            acting = ActionReplayBackend(inner)  # type: ignore[arg-type]
            with replay_checkout(_scratch_project(root)) as template:
                completion = await acting.complete(CompletionRequest.single(
                    PROMPT, role="target", cwd=str(template), allowed_commands=("ls",)))
            result.reached = True
            trajectory = completion.trajectory
            if trajectory is not None:
                result.ran = [c.command for c in trajectory.commands() if started(c)]
                result.denied = [c.command for c in trajectory.commands() if c.denied]
                result.wrote = any(c.path == PROBE_FILE for c in trajectory.file_changes())
        except BackendError as exc:
            result.error = str(exc)
        finally:
            result.refused_hosts = egress.refused_hosts()
            result.unreachable_hosts = list(dict.fromkeys(egress.unreachable))
            egress.close()
            result.seconds = time.monotonic() - started_at
    return result


def ready_families(only: tuple[str, ...] = ()) -> list[tuple[str, str, str]]:
    """``(family, replay backend, why ready)`` for each host whose replay CLI is ready
    (:attr:`sleep.hosts.Host.probe_ready`, else its ready check)."""
    out = []
    for family, backend in replay_backends().items():
        if only and family not in only:
            continue
        host = replaying(family)
        ready, why = load_ref(host.probe_ready)() if host and host.probe_ready else cli_ready(family)
        if ready:
            out.append((family, backend, why))
    return out


def probe_ready_hosts(settings: Any = None, api_hosts: tuple[str, ...] | list[str] = (),
                      only: tuple[str, ...] = ()) -> list[ProbeResult]:
    """:func:`probe_host` for every ready host, one after the other. ``settings``: the night's
    core settings (the target model and its options), when loaded."""
    options = settings.model.model_dump() if settings is not None else {}
    model = settings.model.model_for("target") if settings is not None else None
    results = []
    for family, backend, _ in ready_families(only):
        results.append(asyncio.run(probe_host(family, backend, model, options, api_hosts)))
    return results

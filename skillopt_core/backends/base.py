"""The one interface every model backend implements.

Contract (read this before writing a backend):

- ``Backend.complete(request)`` is the only call the engine makes. It is async,
  takes a :class:`CompletionRequest` and returns a :class:`Completion`. One
  ``complete`` is one model call for the run's budget: a backend never makes a
  second model call on its own (no repair turn, no "try again"), so every
  completion the budget pays for goes through the engine's metered wrapper.
  Transport-level attempts that produce no completion (HTTP 429/5xx retried
  after ``Retry-After``, a parameter or response format the server refused
  and that is sent again adjusted) belong to the one call.
- When ``request.json_schema`` is set, the backend asks for JSON: it constrains
  decoding where it can (a ``json_schema`` response format, structured
  output, a grammar), otherwise it states the schema in the prompt. It returns
  the reply text as it came and never raises for bad JSON: the engine's
  :func:`skillopt_core.backends.structured.complete_json` extracts and
  validates it and makes the single repair turn.
- ``request.skill`` is the skill text of a target rollout and ``request.cwd``
  a working directory the caller prepared. Chat backends ignore both (the skill
  is already in ``system``); agent-CLI backends install the skill as the
  host's skill file and run in ``cwd`` (see ``cli_common.py``).
- Raise :class:`RequestFailed` (or its subclass :class:`RequestRejected`)
  when *this one request* failed and others may still work: a timeout, HTTP
  429/5xx still failing after the retries, a refusal, a CLI that exited
  non-zero or printed no answer, an agent out of turns, a prompt too long for
  the context. The engine scores that item 0 (or counts the optimizer reply
  as invalid) with a visible note, and stops the run only after several
  consecutive failures. When the failed call did use tokens, pass them as
  ``usage`` so they can be accounted.
- Raise :class:`BackendError` (or another subclass, e.g.
  :class:`BackendConfigError`) only for systemic failures a person must act
  on: a missing or rejected key, a CLI missing or not logged in, a model or
  deployment not found, a used-up quota, an endpoint no attempt could connect
  to. The run stops cleanly and can be resumed. When unsure, prefer
  :class:`RequestFailed`: consecutive per-item failures stop the run anyway.
  Every message says what happened and what to do, and never contains a
  secret (``keys.redact``).
- ``name`` is the registry name, ``model`` the model identifier; both are part
  of the rollout cache key, so they must be stable for a given configuration.
- ``describe()`` returns a short human string (shown in logs and summaries).
- Agent-CLI backends return what the agent did as ``Completion.trajectory``
  (:mod:`.trajectory`); chat backends leave it None. ``request.allowed_commands``
  (programs the target may run) and ``request.checks`` (verification commands
  run after the agent finished, in the same working directory) apply only to a
  backend acting under a launcher (``CliBackend.act``); others ignore them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, runtime_checkable

from skillopt_core.backends.trajectory import Trajectory

Role = Literal["target", "optimizer", "judge"]


@dataclass(frozen=True)
class ImageAttachment:
    """An image sent with a message: its bytes and media type (``image/png``,
    ``image/jpeg``, ...). ``text`` is an optional textual stand-in (e.g. a
    page's OCR) that backends which cannot see send instead (see
    :func:`skillopt_core.backends.images.text_only`)."""

    media_type: str
    data: bytes = field(repr=False)
    text: str = field(default="", repr=False)
    name: str = ""


@dataclass(frozen=True)
class Message:
    """One turn. ``images`` go with the text to backends that accept images
    (openai and the OpenAI-compatible presets, azure-openai, anthropic)."""

    role: Literal["user", "assistant"]
    content: str
    images: tuple[ImageAttachment, ...] = ()


@dataclass(frozen=True)
class CompletionRequest:
    """One model call. ``role`` and ``stage`` are accounting labels (e.g.
    role ``optimizer``, stage ``reflect``); backends may ignore them.

    ``skill`` is the skill text under training when this is a target rollout
    (chat backends see it inside ``system``; agent-CLI backends install it
    verbatim as the host's skill file). ``cwd`` is a working directory the
    caller prepared (e.g. a scratch checkout of a project) where agent-CLI
    backends run instead of an empty directory; chat backends ignore it.
    ``allowed_commands``: the programs (``pnpm``, ``git status``) a target acting
    in ``cwd`` may run besides reading and editing files (None: the backend's
    default, read-only tools). ``checks``: verification commands (``pytest -q``)
    an acting backend runs in ``cwd`` after the agent finished, recorded as
    :class:`~skillopt_core.backends.trajectory.CheckRun` steps.
    """

    messages: tuple[Message, ...]
    system: str | None = None
    max_tokens: int = 512
    temperature: float = 0.0
    json_schema: dict[str, Any] | None = None
    seed: int | None = None
    role: str = ""
    stage: str = ""
    skill: str | None = None
    cwd: str | None = None
    allowed_commands: tuple[str, ...] | None = None
    checks: tuple[str, ...] = ()

    @classmethod
    def single(cls, prompt: str, **kwargs: Any) -> CompletionRequest:
        return cls(messages=(Message("user", prompt),), **kwargs)

    @property
    def prompt_text(self) -> str:
        """All text of the request, system first (used by rule-based doubles)."""
        parts = [self.system or ""] + [m.content for m in self.messages]
        return "\n".join(p for p in parts if p)


@dataclass(frozen=True)
class Usage:
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float | None = None

    @property
    def total_tokens(self) -> int:
        return self.input_tokens + self.output_tokens


@dataclass(frozen=True)
class Completion:
    text: str
    usage: Usage = field(default_factory=Usage)
    model: str = ""
    latency_s: float = 0.0
    trajectory: Trajectory | None = None


class BackendError(RuntimeError):
    """A systemic backend failure. The message says what to do next."""


class RequestFailed(BackendError):
    """This one request failed (timeout, refusal, a CLI exit code, malformed
    output); other requests may still work. The engine scores the item 0 or
    counts the optimizer reply as invalid instead of stopping the run.
    ``usage`` is what the failed call consumed, when the backend knows it."""

    def __init__(self, message: str = "", *, usage: Usage | None = None) -> None:
        super().__init__(message)
        self.usage = usage


class RequestRejected(RequestFailed):
    """This one request cannot be served as it is (e.g. longer than the
    context window)."""


class BackendConfigError(BackendError):
    """The backend cannot be built from the given settings (missing key, bad option)."""


@runtime_checkable
class Backend(Protocol):
    """What the trainer calls. ``name`` and ``model`` are read-only: a plain
    attribute and a property (as :class:`MeteredBackend` has) both satisfy it."""

    @property
    def name(self) -> str: ...

    @property
    def model(self) -> str: ...

    async def complete(self, request: CompletionRequest) -> Completion: ...

    def describe(self) -> str: ...

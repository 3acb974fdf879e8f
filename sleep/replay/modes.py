"""Which replay mode a night runs, and the judges of a read-only replay.

``sleep.replay``: ``actions`` (the agent acts in a sandboxed checkout; the
default where a sandbox is available), ``read_only`` (the agent can only read,
so it describes what it would do), or ``auto`` (actions when a sandbox is
available, else read-only, and the night says why). A read-only replay cannot
be judged by what the agent did, so its outcome rules are turned into the text
rules they stand for (:func:`as_text_judge`): ``ran pnpm`` → ``contains pnpm``,
``not_ran npm`` → the answer must not name ``npm`` as a word; ``touched``,
``not_touched`` and ``check`` are left out (the rubric still reads the answer).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sleep.mine.rules import word_absent_pattern
from sleep.replay.sandbox import sandbox_available

MODES = ("auto", "actions", "read_only")


@dataclass(frozen=True)
class ReplayMode:
    mode: str  # "actions" or "read_only"
    why: str
    sandbox: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {"mode": self.mode, "why": self.why, "sandbox": self.sandbox}


def choose_mode(setting: str, acting_backend: bool) -> ReplayMode:
    """The mode for ``setting`` when the target is (``acting_backend``) or is not an agent CLI."""
    if setting == "read_only":
        return ReplayMode("read_only", "sleep.replay is read_only")
    if not acting_backend:
        return ReplayMode("read_only", "the target backend is not an agent CLI, so it cannot act in a checkout")
    ok, why = sandbox_available()
    if ok:
        return ReplayMode("actions", f"sandbox available: {why}", "bubblewrap")
    if setting == "actions":
        return ReplayMode("read_only", f"sleep.replay is actions but no sandbox is available ({why}); "
                                       "replaying read-only instead")
    return ReplayMode("read_only", f"no sandbox available ({why}); replaying read-only")


def _as_text(rule: dict[str, Any]) -> list[dict[str, Any]]:
    kind = rule.get("type")
    values = rule.get("commands") or ([rule["command"]] if "command" in rule else [])
    if kind == "ran":
        return [{"type": "contains", "values": list(values)} if len(values) > 1 else
                {"type": "contains", "value": values[0]}]
    if kind == "not_ran":
        return [{"type": "regex", "pattern": word_absent_pattern(list(values))}]
    if kind in ("touched", "not_touched", "check"):
        return []
    return [rule]


def _inside(words: str, command: str) -> bool:
    w, c = words.split(), command.split()
    return any(c[i:i + len(w)] == w for i in range(len(c) - len(w) + 1))


def as_text_judge(spec: Any) -> Any:
    """``spec`` with its outcome rules replaced by the text rules they stand for. A
    forbidden command inside a required one (``not_ran pytest`` beside ``ran uv run
    pytest``) cannot be told apart in text and is left to the ``contains`` rule."""
    if isinstance(spec, dict):
        out = _as_text(spec)
        return out[0] if len(out) == 1 else out or {"type": "max_chars", "limit": 100000}
    if isinstance(spec, list):
        required = [r.get("command", "") for r in spec if isinstance(r, dict) and r.get("type") == "ran"]
        parts: list[Any] = []
        for part in spec:
            if isinstance(part, dict) and part.get("type") == "not_ran":
                kept = [c for c in (part.get("commands") or [part.get("command", "")])
                        if c and not any(_inside(c, r) for r in required)]
                part = {"type": "not_ran", "commands": kept} if kept else None
            if part is not None:
                parts += _as_text(part) if isinstance(part, dict) else [part]
        return parts or [{"type": "max_chars", "limit": 100000}]
    return spec

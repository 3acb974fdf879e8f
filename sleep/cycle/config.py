"""A night's settings: the core's settings plus a ``sleep`` section.

Loaded from the packaged ``sleep/configs/default.yaml`` (which inherits the
core base config), then the person's ``$SKILLOPT_HOME/sleep.yaml`` if it
exists, then ``--set`` overrides. Unknown keys are errors naming the file or
flag and the nearest valid key, as in the core.
"""

from __future__ import annotations

import difflib
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from skillopt_core import ConfigError, Settings
from skillopt_core.run.config import apply_overrides, load_config_data, validate_settings
from sleep import paths

DEFAULT_CONFIG = Path(__file__).resolve().parents[1] / "configs" / "default.yaml"
USER_FILE = "sleep.yaml"


class SleepSettings(BaseModel):
    model_config = ConfigDict(extra="forbid")

    min_support: int = Field(default=2, ge=1)
    min_tasks: int = Field(default=3, ge=2)
    max_tasks: int = Field(default=40, ge=2)
    target_backend: str = "host"
    use_corrections: bool = True
    max_corrections: int = Field(default=8, ge=0)
    replay_in_checkout: bool = True
    # actions: the target agent acts in a sandboxed checkout; read_only: it can only read;
    # auto: actions where a sandbox (bubblewrap) is available, else read-only (the night says so).
    replay: Literal["auto", "actions", "read_only"] = "auto"
    # Each recurring task contributes up to this many of its member prompts as separate items.
    instances_per_task: int = Field(default=4, ge=1)
    skip_idle: bool = True


class NightConfig(BaseModel):
    model_config = ConfigDict(arbitrary_types_allowed=True)

    core: Settings
    sleep: SleepSettings
    sources: list[str]


def _merge(base: dict[str, Any], over: dict[str, Any]) -> dict[str, Any]:
    out = dict(base)
    for key, value in over.items():
        out[key] = _merge(out[key], value) if isinstance(value, dict) and isinstance(out.get(key), dict) else value
    return out


def user_config_path() -> Path:
    return paths.data_dir() / USER_FILE


def load_night_config(config: str | Path | None = None, overrides: list[str] | tuple[str, ...] = ()) -> NightConfig:
    """The packaged defaults, then ``config`` (or the person's sleep.yaml), then overrides."""
    data, origin, _ = load_config_data(DEFAULT_CONFIG)
    sources = [str(DEFAULT_CONFIG)]
    extra = Path(config) if config is not None else user_config_path()
    if config is not None or extra.is_file():
        more, more_origin, source = load_config_data(extra)
        data = _merge(data, more)
        origin.update(more_origin)
        sources.append(source)
    apply_overrides(data, overrides, origin)
    section = data.pop("sleep", None) or {}
    if not isinstance(section, dict):
        raise ConfigError(f"{origin.get(('sleep',), sources[-1])}: 'sleep' must be a mapping of keys.")
    try:
        sleep = SleepSettings.model_validate(section)
    except ValidationError as exc:
        raise ConfigError(_explain(exc, origin, sources[-1])) from None
    core = validate_settings(data, origin, default_source=sources[-1])
    return NightConfig(core=core, sleep=sleep, sources=sources)


def _explain(exc: ValidationError, origin: dict[tuple, str], default: str) -> str:
    lines = []
    valid = list(SleepSettings.model_fields)
    for err in exc.errors():
        key = ("sleep", *[str(p) for p in err["loc"]])
        where = origin.get(key, default)
        dotted = ".".join(key)
        if err["type"] == "extra_forbidden":
            near = difflib.get_close_matches(key[-1], valid, n=1, cutoff=0.5)
            hint = f" Did you mean 'sleep.{near[0]}'?" if near else ""
            lines.append(f"{where}: unknown key '{dotted}'.{hint} Valid keys in sleep: {', '.join(valid)}.")
        else:
            lines.append(f"{where}: '{dotted}': {err['msg']} (got {err.get('input')!r}).")
    return "Invalid configuration:\n  " + "\n  ".join(lines)



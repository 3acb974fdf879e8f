"""A night's settings: the core's settings plus a ``sleep`` section.

Loaded from the packaged ``sleep/configs/default.yaml`` (which inherits the
core base config), then the person's ``$SKILLOPT_HOME/sleep.yaml`` if it
exists, then ``--set`` overrides. Unknown keys are errors naming the file or
flag and the nearest valid key, as in the core.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from skillopt_core import ConfigError, Settings
from skillopt_core.run.config import (
    PACKAGED_CONFIGS,
    apply_overrides,
    explain_validation,
    load_config_data,
    merge_in,
    validate_settings,
)
from sleep import paths
from sleep.cycle.package import PackageSettings
from sleep.cycle.paired import PairedSettings
from sleep.cycle.triggers import TriggerSettings
from sleep.jsonshape import as_dict

DEFAULT_CONFIG = Path(__file__).resolve().parents[1] / "configs" / "default.yaml"
LOCAL_CONFIG = Path(__file__).resolve().parents[1] / "configs" / "local.yaml"
USER_FILE = "sleep.yaml"


class SleepSettings(BaseModel):
    model_config = ConfigDict(extra="forbid")

    min_support: int = Field(default=2, ge=1)
    min_tasks: int = Field(default=3, ge=2)
    max_tasks: int = Field(default=40, ge=2)
    target_backend: str = "host"
    use_corrections: bool = True
    max_corrections: int = Field(default=8, ge=0)
    # A correction about the whole repository trains the host's memory file (CLAUDE.md, AGENTS.md, ...; sleep.memory).
    memory_files: bool = True
    memory_user_files: bool = False  # consent: ~/.claude/CLAUDE.md may be trained too (read by all your projects)
    replay_in_checkout: bool = True
    # actions: the target agent acts in a sandboxed checkout; read_only: it can only read;
    # auto: actions where a sandbox (bubblewrap) is available, else read-only (the night says so).
    replay: Literal["auto", "actions", "read_only"] = "auto"
    # Model endpoints the acting sandbox lets the agent CLI reach besides its vendor's hosts and the
    # endpoint it is configured with: URLs (http://gw:4000), host:port (https), host or *.pattern (443).
    replay_api_hosts: list[str] = Field(default_factory=list)

    @field_validator("replay_api_hosts")
    @classmethod
    def _endpoints(cls, value: list[str]) -> list[str]:
        from sleep.replay.egress import endpoint

        bad = [v for v in value if "*" not in v and endpoint(v) is None]
        if bad:
            raise ValueError(f"{', '.join(map(repr, bad))}: each must be a host, host:port or http(s):// URL")
        return value
    # Each recurring task contributes up to this many of its member prompts as separate items.
    instances_per_task: int = Field(default=4, ge=1)
    skip_idle: bool = True
    paired: PairedSettings = Field(default_factory=PairedSettings)  # retire / create (sleep.cycle.paired)
    triggers: TriggerSettings = Field(default_factory=TriggerSettings)  # descriptions (sleep.cycle.triggers)
    package: PackageSettings = Field(default_factory=PackageSettings)  # scripts/references (sleep.cycle.package)
    # How the miner compares prompts: auto (sentence embeddings when the `embed` extra is installed,
    # else words only), lexical (words only), or a backend of sleep.mine.embed by name (e5, wordllama).
    mine_embedder: str = "auto"

    @field_validator("mine_embedder")
    @classmethod
    def _embedder(cls, value: str) -> str:
        from sleep.mine.embed import validate_choice

        return validate_choice(value)


class NightConfig(BaseModel):
    model_config = ConfigDict(arbitrary_types_allowed=True)

    core: Settings
    sleep: SleepSettings
    sources: list[str]
    origin: dict[str, str] = Field(default_factory=dict)  # "section.key" -> the file or --set that set it


def user_config_path() -> Path:
    return paths.data_dir() / USER_FILE


def load_night_config(config: str | Path | None = None, overrides: list[str] | tuple[str, ...] = ()) -> NightConfig:
    """The packaged defaults, then ``config`` (or the person's sleep.yaml), then overrides."""
    data, origin, _ = load_config_data(DEFAULT_CONFIG)
    sources = [str(DEFAULT_CONFIG)]
    extra = Path(config) if config is not None else user_config_path()
    if config is not None or extra.is_file():
        more, more_origin, source = load_config_data(extra)
        data = merge_in(data, more, origin, source)
        origin.update(more_origin)  # finer: the file of more's own chain that set each key
        sources.append(source)
    apply_overrides(data, overrides, origin)
    _local_profile(data, origin)
    section = data.pop("sleep", None) or {}
    if not isinstance(section, dict):
        raise ConfigError(f"{origin.get(('sleep',), sources[-1])}: 'sleep' must be a mapping of keys.")
    try:
        sleep = SleepSettings.model_validate(section)
    except ValidationError as exc:
        raise ConfigError(explain_validation(exc, origin, sources[-1], SleepSettings, ("sleep",))) from None
    core = validate_settings(data, origin, default_source=sources[-1])
    return NightConfig(core=core, sleep=sleep, sources=sources,
                       origin={".".join(map(str, k)): v for k, v in origin.items()} |
                              {f"sleep.{k}": origin.get(("sleep", k), "default") for k in section})


def effective_settings(config: NightConfig, sections: tuple[str, ...] = (
        "sleep", "model", "train", "optimizer", "evaluation", "budget", "env")) -> list[tuple[str, Any, str]]:
    """(key, value, where it came from) for every key of ``sections``, as a night uses them;
    "default" for a key no file or flag set (the settings' own default)."""
    data = {"sleep": config.sleep.model_dump(), **config.core.to_dict()}
    rows = []
    for section in sections:
        for path, value in _leaves(data.get(section) or {}, (section,)):
            key = ".".join(path)
            rows.append((key, value, config.origin.get(key, "default")))
    return rows


def _local_profile(data: dict[str, Any], origin: dict[tuple, str]) -> None:
    """On the embedded model (every role resolves to ``local``), the keys of ``local.yaml``
    that only a packaged default set take its values (``origin`` then names it)."""
    model = as_dict(data.get("model"))
    if not all(_resolves_to_local(model, role) for role in ("target", "optimizer", "judge")):
        return
    profile, _, _ = load_config_data(LOCAL_CONFIG)
    for key, value in _leaves(_only_own(profile)):
        where = origin.get(key)
        if where is not None and not _is_packaged(where):
            continue  # the person set it
        node = data
        for part in key[:-1]:
            node = node.setdefault(part, {})
        node[key[-1]] = value
        origin[key] = str(LOCAL_CONFIG)


def _resolves_to_local(model: dict[str, Any], role: str) -> bool:
    name = str(model.get(f"{role}_backend") or model.get("backend") or "auto").strip().lower()
    if name == "auto":
        from skillopt_core.backends.auto import choose
        from skillopt_core.backends.base import BackendConfigError

        try:
            name = choose(role, model)[0]
        except BackendConfigError:
            return False
    return name == "local"


def _only_own(profile: dict[str, Any]) -> dict[str, Any]:
    """The keys ``local.yaml`` itself sets (load_config_data merges the core base under it)."""
    own = yaml.safe_load(LOCAL_CONFIG.read_text(encoding="utf-8")) or {}
    return {k: {kk: profile[k][kk] for kk in v} if isinstance(v, dict) else profile[k] for k, v in own.items()}


def _leaves(node: dict[str, Any], prefix: tuple = ()) -> list[tuple[tuple, Any]]:
    """(key path, value) of every leaf of ``node``; an empty mapping is a leaf of its own."""
    out: list[tuple[tuple, Any]] = []
    for key, value in node.items():
        if isinstance(value, dict) and value:
            out += _leaves(value, (*prefix, key))
        else:
            out.append(((*prefix, key), value))
    return out


def _is_packaged(where: str) -> bool:
    """Whether ``where`` (an origin: a file, or ``--set ...``) is a packaged default file."""
    if where.startswith("--set"):
        return False
    real = Path(where).resolve()
    return real == DEFAULT_CONFIG or real.is_relative_to(PACKAGED_CONFIGS)

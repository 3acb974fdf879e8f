"""Run configuration: YAML files with ``_base_`` inheritance, typed validation
and ``--set section.key=value`` overrides.

A config is named by a path or, when no such file exists, by the name of a
config shipped inside the package (``searchqa/default``; see
:func:`packaged_configs`). ``_base_`` entries resolve the same way, relative
to the file that names them, so a config written anywhere can inherit
``_base_/default``. Unknown or misspelled keys are errors that name the file,
the key and the nearest valid key; nothing falls back silently to a default.
"""

from __future__ import annotations

import difflib
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

# Shipped as package data, so a wheel or pipx install can load its configs.
PACKAGED_CONFIGS = Path(__file__).resolve().parents[1] / "configs"
DEFAULT_BASE = PACKAGED_CONFIGS / "_base_" / "default.yaml"
_SUFFIXES = (".yaml", ".yml")


class ConfigError(ValueError):
    """A configuration problem a person can fix; the message says where and how."""


class _Section(BaseModel):
    model_config = ConfigDict(extra="forbid", validate_assignment=True)


class EnvSettings(_Section):
    name: str = "searchqa"
    data_path: str | None = None
    limit: int | None = Field(default=None, ge=1)
    split_ratio: tuple[int, int, int] = (2, 1, 7)
    split_seed: int = 0
    options: dict[str, Any] = Field(default_factory=dict)


class SkillSettings(_Section):
    init: str | None = None


class ModelSettings(_Section):
    backend: str = "auto"
    target: str | None = None
    optimizer: str | None = None
    judge: str | None = None
    target_backend: str | None = None
    optimizer_backend: str | None = None
    judge_backend: str | None = None
    base_url: str | None = None
    api_key_env: str | None = None
    endpoint: str | None = None
    api_version: str | None = None
    deployment: str | None = None
    model_path: str | None = None
    n_ctx: int = Field(default=2048, ge=256)
    n_threads: int | None = Field(default=None, ge=1)
    timeout: float = Field(default=120.0, gt=0)
    max_retries: int = Field(default=4, ge=0)
    allowed_tools: list[str] | None = None
    max_turns: int | None = Field(default=None, ge=1)
    scripted: Any = None
    target_max_tokens: int = Field(default=256, ge=1)
    optimizer_max_tokens: int = Field(default=1024, ge=1)
    temperature: float = Field(default=0.0, ge=0.0, le=2.0)

    def backend_for(self, role: str) -> str:
        return getattr(self, f"{role}_backend") or self.backend

    def model_for(self, role: str) -> str | None:
        if role == "judge":
            return self.judge or self.optimizer
        return getattr(self, role)


class TrainSettings(_Section):
    num_epochs: int = Field(default=4, ge=1)
    batch_size: int = Field(default=40, ge=1)
    steps_per_epoch: int | None = Field(default=None, ge=1)
    workers: int = Field(default=4, ge=1)
    samples_per_item: int = Field(default=1, ge=1)
    seed: int = 0
    max_consecutive_failures: int | None = Field(default=5, ge=1)
    candidates_per_step: int = Field(default=1, ge=1)
    patience: int | None = Field(default=6, ge=1)
    patience_counts: Literal["all", "clear_rejects"] = "clear_rejects"


class OptimizerSettings(_Section):
    learning_rate: float = Field(default=4, ge=1)
    lr_scheduler: Literal["constant", "linear", "cosine"] = "cosine"
    min_learning_rate: float = Field(default=1, ge=1)
    minibatch_size: int = Field(default=8, ge=1)
    include_successes: bool = True
    show_reference: bool = True
    merge_with_model: bool = True
    rank_with_model: bool = True
    use_slow_update: bool = False
    slow_update_gate: bool = True
    use_meta_skill: bool = False
    refuse_judge_edits: bool = True
    judge_check: Literal["learned", "words"] = "learned"


class EvaluationSettings(_Section):
    use_gate: bool = True
    gate_policy: Literal["mean", "paired", "no_regression"] = "mean"
    gate_metric: Literal["hard", "soft"] = "hard"
    min_effect: float = Field(default=0.0, ge=0.0, le=1.0)
    alpha: float = Field(default=0.1, gt=0.0, lt=1.0)
    early_stop: bool = True
    race_z: float | None = Field(default=2.5, gt=0)
    race_min_items: int = Field(default=10, ge=1)
    race_accept_z: float | None = Field(default=None, gt=0)
    race_scope: Literal["both", "screen", "gate"] = "gate"
    screen_items: int = Field(default=20, ge=0)
    screen_margin: float = Field(default=0.0, ge=0.0)
    remeasure: bool = True
    remeasure_scope: Literal["all", "disagreements"] = "disagreements"
    resample_disagreements: int = Field(default=0, ge=0)
    holdout_judge: Any = None
    substance_judge: bool = True
    stock_sentences: bool = True
    val_limit: int | None = Field(default=None, ge=1)
    eval_test: bool = True
    test_limit: int | None = Field(default=None, ge=1)


class BudgetSettings(_Section):
    max_calls: int | None = Field(default=None, ge=1)
    max_tokens: int | None = Field(default=None, ge=1)
    max_usd: float | None = Field(default=None, gt=0)


class ExecutionSettings(_Section):
    executor: Literal["local", "ray"] = "local"
    ray_address: str | None = None
    ray_cpus: int | None = Field(default=None, ge=1)
    num_cpus: float = Field(default=1, ge=0)
    num_gpus: float = Field(default=0, ge=0)
    resources: dict[str, float] = Field(default_factory=dict)
    max_retries: int = Field(default=2, ge=0)


class OutputSettings(_Section):
    root: str = "outputs"
    run_id: str | None = None
    plot: bool = True


class Settings(_Section):
    env: EnvSettings = Field(default_factory=EnvSettings)
    skill: SkillSettings = Field(default_factory=SkillSettings)
    model: ModelSettings = Field(default_factory=ModelSettings)
    train: TrainSettings = Field(default_factory=TrainSettings)
    optimizer: OptimizerSettings = Field(default_factory=OptimizerSettings)
    evaluation: EvaluationSettings = Field(default_factory=EvaluationSettings)
    budget: BudgetSettings = Field(default_factory=BudgetSettings)
    execution: ExecutionSettings = Field(default_factory=ExecutionSettings)
    output: OutputSettings = Field(default_factory=OutputSettings)

    @field_validator("optimizer")
    @classmethod
    def _min_lr_not_above_lr(cls, value: OptimizerSettings) -> OptimizerSettings:
        if value.min_learning_rate > value.learning_rate:
            raise ValueError("min_learning_rate must not exceed learning_rate")
        return value

    def to_dict(self) -> dict[str, Any]:
        return self.model_dump(mode="json")


# --- loading ---------------------------------------------------------------


def _read_yaml(path: Path) -> dict[str, Any]:
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ConfigError(f"Config file not found: {path}") from None
    except OSError as exc:
        raise ConfigError(f"Cannot read config file {path}: {exc.strerror}") from None
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" line {mark.line + 1}" if mark is not None else ""
        raise ConfigError(f"{path}{where}: invalid YAML ({getattr(exc, 'problem', exc)}).") from None
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: the top level must be a mapping of sections, got {type(data).__name__}.")
    return data


def merge_in(base: dict[str, Any], over: dict[str, Any], origin: dict[tuple, str], src: str,
             prefix=()) -> dict[str, Any]:
    """``over`` merged onto ``base`` key by key; ``origin`` names ``src`` for every key ``over`` sets."""
    out = dict(base)
    for key, value in over.items():
        path = (*prefix, key)
        if isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = merge_in(out[key], value, origin, src, path)
        else:
            out[key] = value
            origin[path] = src
            if isinstance(value, dict):
                for sub in _paths(value, path):
                    origin[sub] = src
    return out


def _paths(data: dict[str, Any], prefix: tuple) -> list[tuple]:
    found = []
    for key, value in data.items():
        found.append((*prefix, key))
        if isinstance(value, dict):
            found.extend(_paths(value, (*prefix, key)))
    return found


# --- finding a config: a path, or the name of a packaged one ---------------


def packaged_configs() -> list[str]:
    """Names of the configs shipped in the package, e.g. ``searchqa/local``."""
    return sorted(
        p.relative_to(PACKAGED_CONFIGS).with_suffix("").as_posix()
        for p in PACKAGED_CONFIGS.rglob("*")
        if p.suffix in _SUFFIXES and p.is_file()
    )


def _as_name(ref: str) -> str | None:
    """``ref`` as a packaged-config name (``searchqa/local``), or None if it
    cannot be one (absolute, or climbing out with ``..``)."""
    text = ref.strip().replace("\\", "/")
    while text.startswith("./"):
        text = text[2:]
    for suffix in _SUFFIXES:
        if text.endswith(suffix):
            text = text[: -len(suffix)]
            break
    parts = text.split("/")
    if not text or Path(ref).is_absolute() or any(part in ("", ".", "..") for part in parts):
        return None
    return text


def resolve_config(ref: str | Path, relative_to: Path | None = None, where: str | None = None) -> Path:
    """The config file ``ref`` names: an existing file (relative to
    ``relative_to``, default the working directory), else the packaged config
    of that name (``searchqa/default``; ``.yaml`` optional). Otherwise a
    :class:`ConfigError` that lists the packaged names and the nearest one;
    ``where`` says who named it (default ``Config '<ref>'``)."""
    ref_text = str(ref)
    candidate = Path(ref_text).expanduser()
    if relative_to is not None and not candidate.is_absolute():
        candidate = relative_to / candidate
    if candidate.is_file():
        return candidate
    name = _as_name(ref_text)
    if name is not None:
        for suffix in _SUFFIXES:
            packaged = PACKAGED_CONFIGS / f"{name}{suffix}"
            if packaged.is_file():
                return packaged
    known = packaged_configs()
    near = difflib.get_close_matches(name, known, n=1, cutoff=0.5) if name else []
    hint = f" Did you mean '{near[0]}'?" if near else ""
    file_part = "a directory, not a file," if candidate.is_dir() else "no file"
    raise ConfigError(
        f"{where or f'Config {ref_text!r}'}: not found ({file_part} at {candidate.absolute()}, and no packaged "
        f"config of that name).{hint} Packaged configs: {', '.join(known)}. "
        "Give a path to a YAML file or one of these names."
    )


def _load_chain(path: Path, origin: dict[tuple, str], seen: tuple[Path, ...] = ()) -> dict[str, Any]:
    path = path.resolve()
    if path in seen:
        chain = " -> ".join(str(p) for p in (*seen, path))
        raise ConfigError(f"_base_ inheritance loops: {chain}")
    data = _read_yaml(path)
    bases = data.pop("_base_", None)
    merged: dict[str, Any] = {}
    if bases:
        for base in [bases] if isinstance(bases, str) else list(bases):
            if not isinstance(base, str):
                raise ConfigError(f"{path}: _base_ must be a path or packaged config name (or a list of them), got "
                                  f"{base!r}.")
            base_path = resolve_config(base, relative_to=path.parent, where=f"{path}: _base_ {base!r}")
            merged = merge_in(merged, _load_chain(base_path, origin, (*seen, path)), origin, str(base_path))
    return merge_in(merged, data, origin, str(path))


def parse_override(text: str) -> tuple[list[str], Any]:
    """``section.key=value`` → (["section", "key"], value parsed as YAML)."""
    if "=" not in text:
        raise ConfigError(f"--set expects section.key=value, got '{text}'.")
    key, raw = text.split("=", 1)
    parts = [p for p in key.strip().split(".") if p]
    if len(parts) < 2:
        raise ConfigError(f"--set key '{key}' must name a section and a key, e.g. train.num_epochs=2.")
    try:
        value = yaml.safe_load(raw) if raw.strip() else None
    except yaml.YAMLError:
        value = raw
    return parts, value


def load_config_data(path: str | Path | None = None, overrides: Sequence[str] = ()
                     ) -> tuple[dict[str, Any], dict[tuple, str], str]:
    """The merged mapping of a config's ``_base_`` chain with ``--set``
    overrides applied, before validation: ``(data, origin, source)`` where
    ``origin`` maps each key path to the file or flag that set it. Layers that
    add sections of their own (e.g. SkillOpt-Sleep's ``sleep:``) take theirs
    out and validate the rest with :func:`validate_settings`."""
    origin: dict[tuple, str] = {}
    if path is None:
        data = _load_chain(DEFAULT_BASE, origin)
    else:
        path = resolve_config(path)
        data = _load_chain(path, origin)
    apply_overrides(data, overrides, origin)
    return data, origin, str(path or DEFAULT_BASE)


def apply_overrides(data: dict[str, Any], overrides: Sequence[str], origin: dict[tuple, str]) -> None:
    """Set each ``section.key=value`` of ``overrides`` in ``data`` (in place), noting its origin."""
    for item in overrides:
        parts, value = parse_override(item)
        node = data
        for part in parts[:-1]:
            child = node.get(part)
            if not isinstance(child, dict):
                child = {}
                node[part] = child
            node = child
        node[parts[-1]] = value
        origin[tuple(parts)] = f"--set {item}"


def load_settings(path: str | Path | None = None, overrides: Sequence[str] = ()) -> Settings:
    """Load a config (with its ``_base_`` chain) and apply ``--set`` overrides.

    ``path`` is a YAML file or, when no such file exists, the name of a
    packaged config (:func:`resolve_config`). With no path, only the shipped
    defaults apply.
    """
    data, origin, source = load_config_data(path, overrides)
    return validate_settings(data, origin, default_source=source)


def validate_settings(data: dict[str, Any], origin: dict[tuple, str] | None = None,
                      default_source: str = "<config>") -> Settings:
    origin = origin or {}
    try:
        return Settings.model_validate(data)
    except ValidationError as exc:
        raise ConfigError(explain_validation(exc, origin, default_source)) from None


def _section_model(path: tuple, root: type[BaseModel] = Settings) -> type[BaseModel] | None:
    model = root
    for part in path:
        field = model.model_fields.get(str(part))
        if field is None:
            return None
        annotation = field.annotation
        if isinstance(annotation, type) and issubclass(annotation, BaseModel):
            model = annotation
        else:
            return None
    return model


def explain_validation(exc: ValidationError, origin: dict[tuple, str], default_source: str,
                       root: type[BaseModel] = Settings, prefix: tuple = ()) -> str:
    """``exc`` as lines naming each bad key, the file or flag that set it and, for an unknown key, the
    nearest valid one. ``root`` validated the section at ``prefix`` (a layer's own section, e.g. ``sleep``)."""
    lines = []
    for err in exc.errors():
        loc = (*prefix, *err["loc"])
        dotted = ".".join(str(p) for p in loc)
        source = origin.get(loc) or default_source
        if err["type"] == "extra_forbidden":
            parent = _section_model(loc[len(prefix):-1], root)
            valid = list(parent.model_fields) if parent else []
            near = difflib.get_close_matches(str(loc[-1]), valid, n=1, cutoff=0.5)
            hint = f" Did you mean '{'.'.join(str(p) for p in (*loc[:-1], near[0]))}'?" if near else ""
            where = ".".join(str(p) for p in loc[:-1]) or "top level"
            lines.append(
                f"{source}: unknown key '{dotted}'.{hint} Valid keys in {where}: {', '.join(valid)}."
            )
        else:
            lines.append(f"{source}: '{dotted}': {err['msg']} (got {err.get('input')!r}).")
    return "Invalid configuration:\n  " + "\n  ".join(lines)

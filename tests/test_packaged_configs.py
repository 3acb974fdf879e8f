"""Configs ship inside the package (skillopt_core/configs/) and are found by
name; the top-level configs/ of a clone are pointers to them, so the README's
paths keep working and the two can never drift apart."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from skillopt_core.cli.main import main
from skillopt_core.run.config import (
    PACKAGED_CONFIGS,
    ConfigError,
    load_settings,
    packaged_configs,
    resolve_config,
)

REPO = Path(__file__).resolve().parent.parent
TOP = REPO / "configs"


def top_level_configs() -> list[str]:
    """The core's pointers (configs/sleep/ points into the sleep package, tested below)."""
    return sorted(p.relative_to(TOP).with_suffix("").as_posix() for p in TOP.rglob("*.yaml")
                  if p.relative_to(TOP).parts[0] != "sleep")


def test_the_sleep_config_pointer_holds_nothing_but_the_packaged_path():
    from sleep.cycle.config import DEFAULT_CONFIG, load_night_config

    data = yaml.safe_load((TOP / "sleep" / "default.yaml").read_text(encoding="utf-8"))
    assert data == {"_base_": "../../sleep/configs/default.yaml"}
    assert (TOP / "sleep" / "default.yaml").parent.joinpath(data["_base_"]).resolve() == DEFAULT_CONFIG
    via_pointer, packaged = load_night_config(TOP / "sleep" / "default.yaml"), load_night_config()
    assert (via_pointer.core, via_pointer.sleep) == (packaged.core, packaged.sleep)


# --------------------------------------------------------------------------- the top-level configs/ stay pointers


def test_packaged_configs_are_the_base_and_the_benchmarks():
    assert {"_base_/default", "searchqa/default", "searchqa/local"} <= set(packaged_configs())


def test_every_packaged_config_has_a_top_level_path_and_no_other():
    assert top_level_configs() == packaged_configs()


@pytest.mark.parametrize("name", top_level_configs())
def test_top_level_config_holds_nothing_but_its_packaged_name(name):
    """Settings written here would drift from the packaged copy: edit the packaged file."""
    data = yaml.safe_load((TOP / f"{name}.yaml").read_text(encoding="utf-8"))
    assert data == {"_base_": name}


@pytest.mark.parametrize("name", packaged_configs())
def test_top_level_path_and_packaged_name_load_the_same_settings(name):
    assert load_settings(TOP / f"{name}.yaml") == load_settings(name)


@pytest.mark.parametrize("name", packaged_configs())
def test_packaged_configs_inherit_only_from_inside_the_package(name, tmp_path, monkeypatch):
    """A wheel has no top-level configs/: every _base_ of the chain must be packaged."""
    seen: list[Path] = []
    pending = [PACKAGED_CONFIGS / f"{name}.yaml"]
    while pending:
        path = pending.pop()
        seen.append(path.resolve())
        bases = yaml.safe_load(path.read_text(encoding="utf-8")).get("_base_") or []
        for base in [bases] if isinstance(bases, str) else bases:
            pending.append(resolve_config(base, relative_to=path.parent))
    assert all(p.is_relative_to(PACKAGED_CONFIGS.resolve()) for p in seen), seen


def test_template_env_config_loads_from_the_package():
    settings = load_settings(REPO / "skillopt_core" / "envs" / "_template" / "config.yaml")
    assert settings.env.name == "_template" and settings.train.batch_size == 8


# --------------------------------------------------------------------------- resolution


def test_name_resolves_to_the_packaged_file(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert resolve_config("searchqa/local") == PACKAGED_CONFIGS / "searchqa" / "local.yaml"
    assert resolve_config("searchqa/local.yaml") == PACKAGED_CONFIGS / "searchqa" / "local.yaml"
    assert load_settings("searchqa/local").model.backend == "local"


def test_an_existing_file_wins_over_the_packaged_name(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "searchqa").mkdir()
    (tmp_path / "searchqa" / "local.yaml").write_text("train: {num_epochs: 9}\n")
    assert load_settings("searchqa/local.yaml").train.num_epochs == 9
    assert load_settings("searchqa/local").train.num_epochs == 1  # not a path: the packaged name


def test_unknown_name_lists_the_packaged_names_and_the_nearest(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(ConfigError) as info:
        load_settings("searchqa/lokal")
    message = str(info.value)
    assert "Config 'searchqa/lokal': not found" in message
    assert str(tmp_path / "searchqa" / "lokal") in message
    assert "Did you mean 'searchqa/local'?" in message
    assert "Packaged configs: _base_/default, alfworld/default, alfworld/local, docvqa/default" in message
    assert "searchqa/default, searchqa/local, spreadsheetbench/default" in message


def test_a_path_that_climbs_out_is_never_taken_as_a_name(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(ConfigError, match="not found"):
        load_settings("../configs/searchqa/local")


def test_base_by_name_works_from_any_folder(tmp_path):
    mine = tmp_path / "mine.yaml"
    mine.write_text("_base_: searchqa/local\ntrain: {num_epochs: 3}\n")
    s = load_settings(mine)
    assert (s.model.backend, s.train.num_epochs, s.train.batch_size) == ("local", 3, 6)


def test_relative_base_file_wins_over_a_packaged_name(tmp_path):
    (tmp_path / "_base_").mkdir()
    (tmp_path / "_base_" / "default.yaml").write_text("train: {seed: 42}\n")
    child = tmp_path / "child.yaml"
    child.write_text("_base_: _base_/default.yaml\n")
    assert load_settings(child).train.seed == 42


def test_misspelled_base_names_the_file_and_the_nearest(tmp_path):
    child = tmp_path / "child.yaml"
    child.write_text("_base_: _base_/defualt\n")
    with pytest.raises(ConfigError) as info:
        load_settings(child)
    message = str(info.value)
    assert message.startswith(f"{child}: _base_ '_base_/defualt': not found")
    assert "Did you mean '_base_/default'?" in message


def test_base_must_be_a_string(tmp_path):
    child = tmp_path / "child.yaml"
    child.write_text("_base_: [3]\n")
    with pytest.raises(ConfigError, match="_base_ must be a path or packaged config name"):
        load_settings(child)


# --------------------------------------------------------------------------- the CLI


def test_cli_eval_with_an_unknown_name_exits_2_listing_names(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    assert main(["eval", "--config", "searchqa/defualt"]) == 2
    err = capsys.readouterr().err
    assert "Did you mean 'searchqa/default'?" in err and "Traceback" not in err


def test_cli_help_lists_the_packaged_names(capsys):
    with pytest.raises(SystemExit):
        main(["train", "--help"])
    assert "searchqa/local" in capsys.readouterr().out

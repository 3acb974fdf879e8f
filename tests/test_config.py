"""Config: _base_ inheritance, --set overrides, typed validation and the
misspelled-key message."""

from pathlib import Path

import pytest

from skillopt_core.run.config import ConfigError, load_settings, parse_override

REPO = Path(__file__).resolve().parent.parent


def write(path: Path, text: str) -> Path:
    path.write_text(text)
    return path


def test_seed_config_loads_as_written():
    s = load_settings(REPO / "configs" / "searchqa" / "default.yaml")
    assert (s.model.backend, s.model.optimizer, s.model.target) == ("azure_openai", "gpt-5.5", "gpt-5.5")
    assert (s.train.num_epochs, s.train.batch_size) == (4, 40)
    assert (s.optimizer.learning_rate, s.optimizer.lr_scheduler) == (4, "cosine")
    assert s.optimizer.use_slow_update and s.optimizer.use_meta_skill and s.evaluation.use_gate


def test_local_config_uses_the_embedded_backend():
    s = load_settings(REPO / "configs" / "searchqa" / "local.yaml")
    assert s.model.backend == "local" and s.env.name == "searchqa"


def test_child_overrides_base_and_keeps_the_rest(tmp_path):
    write(tmp_path / "base.yaml", "train: {num_epochs: 3, workers: 2}\noptimizer: {learning_rate: 6}\n")
    child = write(tmp_path / "child.yaml", "_base_: base.yaml\ntrain: {num_epochs: 1}\n")
    s = load_settings(child)
    assert (s.train.num_epochs, s.train.workers, s.optimizer.learning_rate) == (1, 2, 6)


def test_base_chain_of_three_levels(tmp_path):
    write(tmp_path / "a.yaml", "train: {seed: 7}\n")
    write(tmp_path / "b.yaml", "_base_: a.yaml\ntrain: {workers: 3}\n")
    c = write(tmp_path / "c.yaml", "_base_: b.yaml\ntrain: {num_epochs: 2}\n")
    s = load_settings(c)
    assert (s.train.seed, s.train.workers, s.train.num_epochs) == (7, 3, 2)


def test_inheritance_loop_is_an_error(tmp_path):
    write(tmp_path / "a.yaml", "_base_: b.yaml\n")
    write(tmp_path / "b.yaml", "_base_: a.yaml\n")
    with pytest.raises(ConfigError, match="loops"):
        load_settings(tmp_path / "a.yaml")


def test_set_overrides_parse_yaml_values(tmp_path):
    s = load_settings(None, ["train.num_epochs=2", "env.split_ratio=[1,1,1]", "model.base_url=http://127.0.0.1:8080/v1"])
    assert s.train.num_epochs == 2 and s.env.split_ratio == (1, 1, 1)
    assert s.model.base_url == "http://127.0.0.1:8080/v1"


def test_misspelled_key_names_file_key_and_nearest(tmp_path):
    bad = write(tmp_path / "bad.yaml", "train: {num_epoch: 2}\n")
    with pytest.raises(ConfigError) as info:
        load_settings(bad)
    message = str(info.value)
    assert str(bad) in message and "'train.num_epoch'" in message and "Did you mean 'train.num_epochs'?" in message


def test_misspelled_section_suggests_the_section(tmp_path):
    bad = write(tmp_path / "bad.yaml", "optimiser: {learning_rate: 2}\n")
    with pytest.raises(ConfigError, match="Did you mean 'optimizer'"):
        load_settings(bad)


def test_misspelled_override_names_the_flag():
    with pytest.raises(ConfigError, match=r"--set optimizer.lr_schedular=linear.*Did you mean 'optimizer.lr_scheduler'"):
        load_settings(None, ["optimizer.lr_schedular=linear"])


def test_wrong_type_is_an_error_with_location(tmp_path):
    bad = write(tmp_path / "bad.yaml", "train: {num_epochs: many}\n")
    with pytest.raises(ConfigError, match="train.num_epochs"):
        load_settings(bad)


def test_unknown_scheduler_is_rejected():
    with pytest.raises(ConfigError, match="lr_scheduler"):
        load_settings(None, ["optimizer.lr_scheduler=exponential"])


def test_override_needs_section_and_key():
    with pytest.raises(ConfigError, match="section"):
        parse_override("epochs=3")


def test_missing_file_is_a_clear_error(tmp_path):
    with pytest.raises(ConfigError, match="not found"):
        load_settings(tmp_path / "nope.yaml")


def test_default_yaml_lists_every_key():
    """The packaged skillopt_core/configs/_base_/default.yaml documents every key the settings accept."""
    import yaml

    from skillopt_core.run.config import DEFAULT_BASE, Settings

    assert DEFAULT_BASE == REPO / "skillopt_core" / "configs" / "_base_" / "default.yaml"
    data = yaml.safe_load(DEFAULT_BASE.read_text())
    for section, field in Settings.model_fields.items():
        assert set(data[section]) == set(field.annotation.model_fields), section

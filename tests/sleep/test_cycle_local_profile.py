"""The night's defaults on the embedded local model (issue 23 §2): ``sleep/configs/local.yaml``
applies when every role is ``local``, only to keys the person did not set."""

from __future__ import annotations

from sleep_testutil import Homes

from sleep.cycle.config import LOCAL_CONFIG, load_night_config


def test_the_local_profile_applies_on_the_local_backend() -> None:
    config = load_night_config(None, ["model.backend=local"])
    assert config.core.model.target_max_tokens == 96 and config.core.evaluation.val_limit == 5
    assert config.sleep.max_tasks == 10 and config.core.train.batch_size == 4
    assert config.origin["model.target_max_tokens"] == str(LOCAL_CONFIG)


def test_a_setting_the_person_made_wins_over_the_profile(homes: Homes) -> None:
    homes.skillopt.mkdir(parents=True, exist_ok=True)
    (homes.skillopt / "sleep.yaml").write_text("evaluation:\n  val_limit: 9\n")
    config = load_night_config(None, ["model.backend=local", "model.target_max_tokens=200"])
    assert config.core.model.target_max_tokens == 200 and config.core.evaluation.val_limit == 9
    assert config.core.model.optimizer_max_tokens == 384  # the profile's, for the keys left alone


def test_other_backends_keep_the_night_defaults() -> None:
    config = load_night_config(None, ["model.backend=scripted"])
    assert config.core.model.target_max_tokens == 512 and config.core.evaluation.val_limit is None
    mixed = load_night_config(None, ["model.backend=local", "model.judge_backend=scripted"])
    assert mixed.core.model.target_max_tokens == 512

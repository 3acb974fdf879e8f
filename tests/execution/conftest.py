"""A local Ray instance (2 CPUs) shared by the tests that need one.

Ray comes with the ``[ray]`` extra; without it these tests skip, and under
``SKILLOPT_REQUIRE_RAY=1`` (CI) they fail instead. Start-up takes several
seconds on 2 cores, so the instance is started once per test session."""

from __future__ import annotations

import importlib.util
import os
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))


@pytest.fixture(scope="session")
def ray_instance(tmp_path_factory):
    if importlib.util.find_spec("ray") is None:
        if os.environ.get("SKILLOPT_REQUIRE_RAY") == "1":
            pytest.fail("SKILLOPT_REQUIRE_RAY=1 but ray is not installed: pip install -e '.[ray]'")
        pytest.skip("ray is not installed (pip install -e '.[ray]')")
    import ray
    from ray import cloudpickle

    import ray_jobs

    # The test's own job functions travel by value: workers cannot import tests/.
    cloudpickle.register_pickle_by_value(ray_jobs)
    ray.init(num_cpus=2, include_dashboard=False, logging_level="ERROR",
             _temp_dir=str(tmp_path_factory.mktemp("ray")), runtime_env={"env_vars": {"SKILLOPT_NO_DOTENV": "1"}})
    try:
        yield ray
    finally:
        ray.shutdown()

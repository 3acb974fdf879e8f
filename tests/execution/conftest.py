"""A local Ray instance (2 CPUs) shared by the tests that need one.

Ray comes with the ``[ray]`` extra; without it these tests skip, and under
``SKILLOPT_REQUIRE_RAY=1`` (CI) they fail instead. Start-up takes several
seconds on 2 cores, so the instance is started once per test session."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

from extras import require_extra  # noqa: E402


@pytest.fixture(scope="session")
def ray_instance(tmp_path_factory):
    require_extra("ray", "ray", "SKILLOPT_REQUIRE_RAY")
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

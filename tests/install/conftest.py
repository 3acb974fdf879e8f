import pytest

from wheel_tools import REPO, build_wheel


@pytest.fixture(scope="session")
def skillopt_wheel(tmp_path_factory):
    """The wheel of this checkout, built once per test session."""
    return build_wheel(REPO, tmp_path_factory.mktemp("skillopt-wheel"))

"""Build wheels and install them into throwaway environments, offline.

Wheels are built with ``pip wheel --no-build-isolation`` from a copy of the
source (so the checkout gets no build/ or egg-info), with the setuptools of
the running environment (the [dev] extra pins a recent enough one).
"""

from __future__ import annotations

import os
import shutil
import site
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
_NOT_SOURCE = shutil.ignore_patterns(
    ".git", "build", "dist", "*.egg-info", "__pycache__", "outputs", ".pytest_cache", ".hypothesis", ".venv", ".env"
)


def clean_env(**extra: str) -> dict[str, str]:
    """The test's environment (private HOME from conftest) without anything
    that would put the checkout or user site-packages on ``sys.path``."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME", "PYTHONSTARTUP")}
    env.update(PYTHONNOUSERSITE="1", SKILLOPT_NO_DOTENV="1", PIP_DISABLE_PIP_VERSION_CHECK="1", PIP_NO_INDEX="1")
    env.update(extra)
    return env


def tool_env(scratch: Path) -> dict[str, str]:
    """For pip and venv calls, which may run in module- or session-scoped
    fixtures before the private HOME of conftest is in place: a HOME of their
    own, no pip cache and no user pip config."""
    home = scratch / ".home"
    home.mkdir(parents=True, exist_ok=True)
    return clean_env(HOME=str(home), PIP_NO_CACHE_DIR="1", PIP_CONFIG_FILE=os.devnull)


def run(cmd: list[str], cwd: Path, env: dict[str, str] | None = None, timeout: float = 120) -> subprocess.CompletedProcess:
    return subprocess.run(
        [str(c) for c in cmd], cwd=cwd, env=env or clean_env(), capture_output=True, text=True, timeout=timeout
    )


def check(proc: subprocess.CompletedProcess, what: str) -> subprocess.CompletedProcess:
    assert proc.returncode == 0, f"{what} exited {proc.returncode}\nstdout:\n{proc.stdout[-3000:]}\nstderr:\n{proc.stderr[-3000:]}"
    return proc


def build_wheel(source: Path, out: Path) -> Path:
    """The wheel of the project at ``source`` (copied first), built offline."""
    import setuptools

    major, minor = (int(x) for x in setuptools.__version__.split(".")[:2])
    assert (major, minor) >= (70, 1), (
        f"setuptools {setuptools.__version__} is too old to build wheels offline; "
        'install the test extras: pip install -e ".[dev]"'
    )
    copy = out / f"src-{source.name}"
    shutil.copytree(source, copy, ignore=_NOT_SOURCE)
    check(run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q", "-w", out, copy], cwd=out,
              env=tool_env(out)), f"building the wheel of {source}")
    [wheel] = out.glob("*.whl")
    return wheel


def fresh_venv(path: Path) -> Path:
    """A new virtual environment whose own site-packages comes first and
    which sees the running environment's installed dependencies after it.

    The running environment's site-packages is added by a path line in a
    ``.pth`` file, which puts it on ``sys.path`` without processing the
    ``.pth`` files inside it, so an editable install of this checkout there
    (its finder hook) stays inactive. Returns the venv's python."""
    check(run([sys.executable, "-m", "venv", "--without-pip", path], cwd=path.parent, env=tool_env(path.parent)),
          "creating a venv")
    python = path / ("Scripts/python.exe" if os.name == "nt" else "bin/python")
    outer = [p for p in site.getsitepackages() if Path(p).is_dir()]
    (site_packages(python) / "_outer_site_packages.pth").write_text("\n".join(outer) + "\n", encoding="utf-8")
    return python


def site_packages(python: Path) -> Path:
    """The site-packages folder of the environment of ``python``."""
    purelib = run([python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"], cwd=python.parent,
                  env=tool_env(python.parent.parent))
    return Path(check(purelib, "asking the venv for its site-packages").stdout.strip())


def write_distribution(where: Path, name: str, entry_points: dict[str, dict[str, str]], modules: dict[str, str]) -> None:
    """A distribution as an installer leaves it: modules plus a ``*.dist-info``
    folder with METADATA and entry_points.txt, directly in ``where``."""
    info = where / f"{name.replace('-', '_')}-0.1.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 0.1.0\n", encoding="utf-8")
    lines = []
    for group, entries in entry_points.items():
        lines.append(f"[{group}]")
        lines.extend(f"{key} = {value}" for key, value in entries.items())
    (info / "entry_points.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")
    for filename, source in modules.items():
        (where / filename).write_text(source, encoding="utf-8")


def pip_install(python: Path, *args: str | Path) -> None:
    """``pip install --no-deps`` into the environment of ``python`` with the running pip."""
    check(run([sys.executable, "-m", "pip", "--python", python, "install", "--no-deps", "-q", *args], cwd=python.parent,
              env=tool_env(python.parent.parent)), f"pip install {' '.join(map(str, args))}")


def script(python: Path, name: str) -> Path:
    """A console script installed next to ``python``."""
    return python.parent / (f"{name}.exe" if os.name == "nt" else name)

"""The protective settings every git call SkillOpt makes near a checkout or the person's repository runs with.

A repository's own configuration can name programs git runs on its own: a file
system monitor (``core.fsmonitor``), hooks (``core.hooksPath`` or
``.git/hooks``), an external diff (``diff.external``, ``GIT_EXTERNAL_DIFF``),
text conversions (``diff.<driver>.textconv``) and a pager. None of them is
needed by what SkillOpt asks git, so they are switched off on the command line,
which wins over every configuration file (``-c`` is read last):

- ``core.fsmonitor=false``: no monitor program;
- ``core.hooksPath=/dev/null``: a hooks folder that cannot hold a hook;
- ``diff.external=`` (empty: none) and ``GIT_EXTERNAL_DIFF`` removed from the
  environment; the diff commands also get ``--no-ext-diff --no-textconv``
  (:data:`NO_DIFF_PROGRAMS`);
- ``core.pager=cat`` and ``GIT_PAGER=cat``, ``PAGER=cat``: no pager;
- ``GIT_TERMINAL_PROMPT=0``: never a credential prompt.

Variables that point git at another repository (set, e.g., inside a hook that
started SkillOpt) are removed (:data:`RELOCATING`).

Filter drivers (``filter.<x>.clean``/``smudge`` named by ``.gitattributes``)
cannot be switched off for every name with ``-c``; the post-rollout status of
a replay therefore never reads the checkout's configuration at all (see
:mod:`sleep.replay.gitview`).
"""

from __future__ import annotations

import os
from collections.abc import Mapping

RELOCATING = ("GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_OBJECT_DIRECTORY", "GIT_COMMON_DIR",
              "GIT_ALTERNATE_OBJECT_DIRECTORIES", "GIT_NAMESPACE", "GIT_CEILING_DIRECTORIES")
# Variables that make git run a program or read another configuration.
UNSAFE_VARS = ("GIT_EXTERNAL_DIFF", "GIT_PAGER", "PAGER", "GIT_ASKPASS", "SSH_ASKPASS", "GIT_SSH", "GIT_SSH_COMMAND",
               "GIT_EDITOR", "GIT_SEQUENCE_EDITOR", "GIT_CONFIG", "GIT_CONFIG_PARAMETERS", "GIT_CONFIG_COUNT",
               "GIT_TRACE", "GIT_TRACE2", "GIT_TRACE2_EVENT", "GIT_TRACE2_PERF")

PROTECTIVE_CONFIG = {
    "core.fsmonitor": "false",
    "core.hooksPath": os.devnull,
    "diff.external": "",
    "core.pager": "cat",
}
NO_DIFF_PROGRAMS = ("--no-ext-diff", "--no-textconv")


def protective_args() -> list[str]:
    """``-c key=value`` pairs to put right after ``git``."""
    out: list[str] = []
    for key, value in PROTECTIVE_CONFIG.items():
        out += ["-c", f"{key}={value}"]
    return out


def protective_env(base: Mapping[str, str] | None = None) -> dict[str, str]:
    """``base`` (default: this process's environment) without the relocating and program-naming
    variables, with no pager and no prompt."""
    env = {k: v for k, v in (os.environ if base is None else base).items()
           if k not in RELOCATING and k not in UNSAFE_VARS and not k.startswith("GIT_CONFIG_KEY_")
           and not k.startswith("GIT_CONFIG_VALUE_")}
    env.update({"GIT_PAGER": "cat", "PAGER": "cat", "GIT_TERMINAL_PROMPT": "0"})
    return env


def git_argv(*args: str) -> list[str]:
    """``git <protective settings> <args>``."""
    return ["git", *protective_args(), *args]

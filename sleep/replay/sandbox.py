"""The sandbox an acting replay runs in: bubblewrap (``bwrap``) on Linux.

:class:`BwrapLauncher` is a :class:`skillopt_core.backends.cli_common.Launcher`:
it wraps the agent CLI's command line so that, inside,

- there is no network (``--unshare-net``: a fresh network namespace with only
  its own loopback, so a server on the host's 127.0.0.1 is out of reach too),
  except, with ``egress``, the CLI's own model API through an allow-listing
  proxy (:mod:`sleep.replay.egress`);
- the whole file system is read-only (``--ro-bind / /``) and the only writable
  places are the rollout's checkout, the CLI's side-file folder and a scratch
  HOME made for this call (removed after it); ``/tmp`` is a private tmpfs;
- the person's home, the product's data directory (the index, the nights) and
  ``/run`` (where sockets such as the Docker daemon's live) are hidden behind
  empty, read-only tmpfs mounts; what the CLI needs from under them is bound back read-only:
  the CLI's own install folder, ``PATH`` entries, the interpreter when it lives
  under ``/tmp`` (a CI virtualenv, see
  :func:`skillopt_core.envs.spreadsheetbench.execute.interpreter_paths_under_tmp`)
  and the clone's object store (``git clone --shared`` reads the project's
  objects through alternates);
- the scratch HOME holds only copies of the files the CLI authenticates with
  (:data:`AUTH_FILES`), and the environment is scrubbed to ``PATH``, locale,
  ``HOME`` and the CLI's own key variables (:data:`KEY_VARS`);
- its own PID, IPC and UTS namespaces, a new session, and it dies with its
  parent, so ending the process group ends everything the agent started.

:func:`sandbox_available` probes that bwrap can really create these namespaces
(it can be installed but refused, e.g. inside some containers).
"""

from __future__ import annotations

import os
import pwd
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from skillopt_core.envs.spreadsheetbench.execute import interpreter_paths_under_tmp
from skillopt_core.replay import night_id, replay_root
from sleep import paths
from sleep.cycle.checkout import trusted_alternates
from sleep.replay.egress import EgressProxy

# Where each CLI family keeps its login: (the variable that moves its folder, the folder under HOME,
# the files in it it authenticates with, other files under HOME). Copies (0600) go into the scratch HOME.
AUTH_FILES: dict[str, tuple[str, str, tuple[str, ...], tuple[str, ...]]] = {
    "claude-code": ("CLAUDE_CONFIG_DIR", ".claude", (".credentials.json",), (".claude.json",)),
    "codex": ("CODEX_HOME", ".codex", ("auth.json",), ()),
    "copilot": ("COPILOT_HOME", ".copilot", ("config.json",), ()),
    # Gemini CLI's GEMINI_CLI_HOME is the folder *above* .gemini, so no variable is moved here.
    "gemini-cli": ("", ".gemini", ("oauth_creds.json", "google_accounts.json", "settings.json"), ()),
    "opencode": ("", ".local/share/opencode", ("auth.json",), ()),
    "cursor-agent": ("", ".config/cursor", ("auth.json",), (".cursor/cli-config.json",)),
}
# The only environment variables besides the basics that reach the CLI: its own keys and endpoints.
KEY_VARS: dict[str, tuple[str, ...]] = {
    "claude-code": ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "CLAUDE_CODE_OAUTH_TOKEN", "ANTHROPIC_BASE_URL",
                    "ANTHROPIC_MODEL", "CLAUDE_CODE_USE_BEDROCK", "CLAUDE_CODE_USE_VERTEX"),
    "codex": ("OPENAI_API_KEY", "OPENAI_BASE_URL", "CODEX_API_KEY"),
    "copilot": ("GH_TOKEN", "GITHUB_TOKEN", "COPILOT_GITHUB_TOKEN"),
    "gemini-cli": ("GEMINI_API_KEY", "GOOGLE_API_KEY", "GOOGLE_CLOUD_PROJECT", "GOOGLE_CLOUD_LOCATION",
                   "GOOGLE_GENAI_USE_VERTEXAI"),
    # OPENCODE_CONFIG_CONTENT carries the replay's permission rules (skillopt_core.backends.opencode).
    "opencode": ("ANTHROPIC_API_KEY", "OPENAI_API_KEY", "OPENCODE_API_KEY", "OPENCODE_CONFIG_CONTENT"),
    "cursor-agent": ("CURSOR_API_KEY",),
}
# Settings each CLI documents for no traffic beyond the model API (telemetry, update checks).
QUIET: dict[str, dict[str, str]] = {
    "claude-code": {"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1", "DISABLE_AUTOUPDATER": "1"},
}
BASIC_VARS = ("PATH", "LANG", "LC_ALL", "LC_CTYPE", "TZ", "USER", "LOGNAME", "SKILLOPT_REPLAY", "NO_COLOR")


def find_bwrap() -> str | None:
    return shutil.which("bwrap")


def sandbox_available() -> tuple[bool, str]:
    """(can an acting replay be sandboxed here, why not)."""
    exe = find_bwrap()
    if exe is None:
        return False, "bubblewrap (bwrap) is not installed (Debian/Ubuntu: apt-get install bubblewrap)"
    probe = [exe, "--unshare-net", "--unshare-pid", "--die-with-parent", "--ro-bind", "/", "/",
             "--dev", "/dev", "--proc", "/proc", "--", "true"]
    try:
        done = subprocess.run(probe, capture_output=True, text=True, timeout=20)
    except (OSError, subprocess.SubprocessError) as exc:
        return False, f"bwrap could not start ({exc})"
    if done.returncode != 0:
        return False, f"bwrap is installed but cannot create a sandbox here: {done.stderr.strip()[:200]}"
    return True, f"bubblewrap ({exe})"


def _outermost(paths_: list[Path]) -> list[Path]:
    kept: list[Path] = []
    for p in sorted(set(paths_), key=lambda q: len(q.parts)):
        if not any(k == p or k in p.parents for k in kept):
            kept.append(p)
    return kept


def _under(path: Path, roots: list[Path]) -> bool:
    return any(path == r or r in path.parents for r in roots)


def hidden_roots() -> list[Path]:
    """Folders the sandbox hides behind empty tmpfs mounts (those that exist)."""
    candidates = [Path("/tmp"), Path("/run"), Path(pwd.getpwuid(os.getuid()).pw_dir), Path.home(),
                  paths.data_dir(), Path("/root")]
    out = []
    for c in candidates:
        try:
            resolved = c.resolve()
        except OSError:
            continue
        if resolved.is_dir() and resolved != Path("/"):
            out.append(resolved)
    return _outermost(out)


# Under a folder that is bound back, these stay hidden (credentials, the product's own data).
SECRET_NAMES = (".ssh", ".gnupg", ".aws", ".azure", ".kube", ".docker", ".netrc", ".git-credentials", ".npmrc",
                ".pypirc", ".config/gh", ".config/gcloud", ".claude", ".codex", ".copilot", ".password-store")


def _program_dirs(argv0: str) -> list[Path]:
    """The folders a CLI runs from: its own and, through symlinks, its package's."""
    found = argv0 if os.path.isabs(argv0) else shutil.which(argv0)
    if not found:
        return []
    exe = Path(found)
    dirs = [exe.parent]
    if exe.is_symlink():  # an npm-style bin link into its package (.../node_modules/pkg/bin/cli.js)
        try:
            real = exe.resolve()
            dirs += [real.parent, real.parent.parent]
        except OSError:
            pass
    return [d for d in dirs if d.is_dir() and d != Path("/")]


@dataclass
class BwrapLauncher:
    """See the module docstring. ``family``: the CLI family (claude-code, codex,
    copilot) whose auth files and key variables pass; ``home``: the person's
    home to take them from (default: the current one)."""

    family: str
    bwrap: str = field(default_factory=lambda: find_bwrap() or "bwrap")
    home: Path | None = None
    name: str = "bubblewrap"
    egress: EgressProxy | None = None  # the CLI's way to its model API (sleep.replay.egress); None: no network

    def scratch_home(self, base: Path) -> Path:
        scratch = Path(tempfile.mkdtemp(prefix="home-", dir=base))
        home = self.home or Path.home()
        if self.family not in AUTH_FILES:
            return scratch
        variable, folder, inside, beside = AUTH_FILES[self.family]
        config = Path(os.environ[variable]) if variable and os.environ.get(variable) else home / folder
        copies = [(config / name, scratch / folder / name) for name in inside]
        copies += [(home / name, scratch / name) for name in beside]
        for src, dst in copies:
            if src.is_file():
                dst.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
                shutil.copyfile(src, dst)
                os.chmod(dst, 0o600)
        return scratch

    def environment(self, env: dict[str, str], home: Path) -> dict[str, str]:
        keep = set(BASIC_VARS) | set(KEY_VARS.get(self.family, ()))
        out = {k: v for k, v in env.items() if k in keep}
        out.update({"HOME": str(home), "TMPDIR": "/tmp", "TERM": "dumb", "NO_COLOR": "1", "SKILLOPT_REPLAY": "1",
                    "XDG_CONFIG_HOME": str(home / ".config"), "XDG_CACHE_HOME": str(home / ".cache"),
                    "GIT_TERMINAL_PROMPT": "0", "GIT_CONFIG_NOSYSTEM": "1"})
        if self.family in AUTH_FILES:
            variable, folder, _, _ = AUTH_FILES[self.family]
            if variable:
                out[variable] = str(home / folder)
        out.update(QUIET.get(self.family, {}))
        return out

    def wrap(self, argv: list[str], cwd: Path, env: dict[str, str],
             writable: tuple[Path, ...] = ()) -> tuple[list[str], dict[str, str]]:
        cwd = cwd.resolve()
        base = paths.private_dir(homes_dir())
        home = self.scratch_home(base)
        hidden = hidden_roots()
        args = [self.bwrap, "--unshare-net", "--unshare-pid", "--unshare-ipc", "--unshare-uts",
                "--die-with-parent", "--new-session", "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc"]
        for root in hidden:
            args += ["--tmpfs", str(root)]
        if self.egress is not None:
            argv = self.egress.wrap(argv)
        programs = _program_dirs(argv[0]) + [Path(sys.prefix).resolve(), Path(sys.base_prefix).resolve()]
        for entry in env.get("PATH", "").split(os.pathsep):
            if entry and Path(entry).is_absolute() and Path(entry).is_dir():
                programs.append(Path(entry).resolve())
        # A tool folder under a hidden root is bound back whole (~/.pyenv, ~/.nvm, ~/.local: shims and
        # launchers reach beside their bin folder), never the hidden root itself.
        readable = [Path(p) for p in interpreter_paths_under_tmp()] + trusted_alternates(cwd)
        for path in programs:
            root = next((r for r in hidden if r in path.parents), None)
            if root is not None and root != Path("/tmp"):
                readable.append(root / path.relative_to(root).parts[0])
            elif root is not None:
                readable.append(path)
        back = _outermost([p for p in readable if _under(p, hidden) and p not in hidden])
        for path in back:
            args += ["--ro-bind", str(path), str(path)]
        for path in back:
            for name in SECRET_NAMES:
                secret = path / name
                if secret.is_dir():
                    args += ["--tmpfs", str(secret)]
                elif secret.exists():
                    args += ["--ro-bind", "/dev/null", str(secret)]
        data = paths.data_dir().resolve()
        if any(b in data.parents or b == data for b in back) and data.is_dir():
            args += ["--tmpfs", str(data)]
        for path in [cwd, home, *[w.resolve() for w in writable]]:
            args += ["--bind", str(path), str(path)]
        if self.egress is not None:
            args += ["--ro-bind", str(self.egress.folder), str(self.egress.folder)]
        for root in hidden:  # the hiding tmpfs mounts read-only too (mounts below them stay as they are)
            if root != Path("/tmp"):
                args += ["--remount-ro", str(root)]
        args += ["--chdir", str(cwd), "--", *argv]
        scrubbed = self.environment(env, home)
        if self.egress is not None:
            scrubbed.update(self.egress.environment())
        return args, scrubbed


def homes_dir() -> Path:
    """This night's scratch HOMEs (named for the night: two nights never share it, even under one
    ``SKILLOPT_REPLAY_ROOT``)."""
    return replay_root() / f"homes-{night_id()}"


def cleanup_homes() -> None:
    """Remove this night's scratch HOMEs (called when a night's replays end); no other night's."""
    shutil.rmtree(homes_dir(), ignore_errors=True)

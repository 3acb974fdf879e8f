"""The sandbox an acting replay runs in: bubblewrap (``bwrap``) on Linux.

:class:`BwrapLauncher` is a :class:`skillopt_core.backends.cli_common.Launcher`:
it wraps the agent CLI's command line so that, inside,

- there is no network (``--unshare-net``: a fresh network namespace with only
  its own loopback, so a server on the host's 127.0.0.1 is out of reach too),
  except, with ``egress``, the CLI's own model API through an allow-listing
  proxy (:mod:`sleep.replay.egress`);
- the whole file system is read-only (``--ro-bind / /``) and the only writable
  places are the rollout's checkout, the CLI's side-file folder and a scratch
  HOME made for this call (removed after it); ``/tmp`` is a private tmpfs of
  at most :data:`TMP_SIZE` bytes (bwrap 0.5 and later);
- the person's home, the product's data directory (the index, the nights) and
  ``/run`` (where sockets such as the Docker daemon's live) are hidden behind
  empty, read-only tmpfs mounts; what the CLI needs from under them is bound back read-only:
  the CLI's own install folder, ``PATH`` entries, the interpreter when it lives
  under ``/tmp`` (a CI virtualenv, see
  :func:`skillopt_core.interpreter_paths_under_tmp`)
  and the clone's object store (``git clone --shared`` reads the project's
  objects through alternates);
- the scratch HOME holds only copies of the files the CLI authenticates with,
  and the environment is scrubbed to ``PATH``, locale, ``HOME`` and the CLI's own
  key variables: both from its host's :class:`sleep.hosts.Sandbox`;
- its own PID, IPC and UTS namespaces, a new session, and it dies with its
  parent, so ending the process group ends everything the agent started.

:func:`sandbox_available` probes that bwrap can really create these namespaces
(it can be installed but refused, e.g. inside some containers).
"""

from __future__ import annotations

import functools
import json
import os
import pwd
import re
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from skillopt_core import interpreter_paths_under_tmp
from skillopt_core.replay import night_id, replay_root
from sleep import hosts, paths
from sleep.hosts.host import Sandbox, load_ref
from sleep.replay.checkout import trusted_alternates
from sleep.replay.egress import EgressProxy

BASIC_VARS = ("PATH", "LANG", "LC_ALL", "LC_CTYPE", "TZ", "USER", "LOGNAME", "SKILLOPT_REPLAY", "NO_COLOR")


def _named_files(config: Path) -> list[str]:
    """Files in the CLI's folder that its ``config.toml`` names by a relative path (instructions, catalogs)."""
    try:
        import tomllib

        data = tomllib.loads(config.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return []
    found: list[str] = []
    todo: list = [data]
    while todo:
        value = todo.pop()
        if isinstance(value, dict):
            todo += list(value.values())
        elif isinstance(value, list):
            todo += value
        elif isinstance(value, str) and value and not value.startswith(("/", "~")) and ".." not in value \
                and "\n" not in value and len(value) < 200 and (config.parent / value).is_file():
            found.append(value)
    return found


def find_bwrap() -> str | None:
    return shutil.which("bwrap")


TMP_SIZE = 512 * 1024 * 1024  # the sandbox's /tmp (a tmpfs in memory): at most this many bytes


@functools.lru_cache(maxsize=8)
def sizes_tmpfs(exe: str) -> bool:
    """Does this bwrap take ``--size`` before ``--tmpfs`` (bubblewrap 0.5 and later)?"""
    try:
        done = subprocess.run([exe, "--version"], capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return False
    found = re.search(r"(\d+)\.(\d+)", done.stdout)
    return found is not None and (int(found[1]), int(found[2])) >= (0, 5)


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


# Credentials the sandbox never shows, by their place under a home (or under the product's data dir):
# a tool folder bound back for a PATH entry (~/.cargo, ~/.local, ~/.config...) is bound without them.
SECRET_NAMES = (
    ".ssh", ".gnupg", ".aws", ".azure", ".kube", ".docker", ".netrc", ".git-credentials", ".npmrc", ".yarnrc",
    ".yarnrc.yml", ".pypirc", ".pgpass", ".my.cnf", ".vault-token", ".s3cfg", ".boto", ".oci", ".password-store",
    ".cursor", ".config/gh", ".config/hub", ".config/gcloud", ".config/op", ".config/doctl", ".config/hcloud",
    ".config/rclone", ".config/git/credentials", ".config/github-copilot", ".config/gemini",
    ".cargo/credentials", ".cargo/credentials.toml", ".gem/credentials", ".m2/settings.xml",
    ".m2/settings-security.xml", ".gradle/gradle.properties", ".terraform.d/credentials.tfrc.json",
    ".local/share/keyrings", ".local/share/fish/fish_history", ".local/share/gh",
    ".local/share/recently-used.xbel", ".local/state/opencode",
)


def secret_names() -> tuple[str, ...]:
    """:data:`SECRET_NAMES` and every replaying host's login folder and files (:class:`sleep.hosts.Sandbox`)."""
    found = [n for h in hosts.all_hosts() for n in (h.sandbox.folder, *h.sandbox.home_files) if n]
    return tuple(dict.fromkeys((*SECRET_NAMES, *found)))
# File names hidden wherever they are in a bound-back folder (looked for to a bounded depth).
SECRET_FILE_NAMES = frozenset({
    ".bash_history", ".zsh_history", ".zhistory", ".sh_history", ".history", ".python_history",
    ".node_repl_history", ".psql_history", ".mysql_history", ".sqlite_history", ".lesshst", ".viminfo",
    ".credentials.json",
    "fish_history", ".netrc", ".git-credentials", "credentials", "credentials.toml", "credentials.json",
    "auth.json", "hosts.yml", ".npmrc", ".pypirc", ".pgpass", "id_rsa", "id_ed25519", "id_ecdsa", "id_dsa",
    ".env",
})
SECRET_SEARCH_DEPTH = 4
SECRET_SEARCH_ENTRIES = 20_000
# Folders too large to search and holding no credentials of their own (package caches, toolchains).
_NOT_SEARCHED = frozenset({"registry", "git", "toolchains", "node_modules", "site-packages", "dist-packages",
                           "versions", "lib", "lib64", "include", "man", "__pycache__", ".cache", "cache"})
# What Claude Code needs of ~/.claude.json to run (its account and onboarding state); the rest
# (``projects`` with their ``mcpServers`` and their env tokens, global ``mcpServers``...) stays out.
CLAUDE_JSON_KEEP = ("userID", "oauthAccount", "primaryApiKey", "customApiKeyResponses", "hasCompletedOnboarding",
                    "lastOnboardingVersion", "firstStartTime", "installMethod", "autoUpdates",
                    "hasAvailableSubscription", "bypassPermissionsModeAccepted")


def _copy_auth(src: Path, dst: Path) -> None:
    """Copy one login file into the scratch HOME; ``.claude.json`` only with :data:`CLAUDE_JSON_KEEP`."""
    if src.name != ".claude.json":
        shutil.copyfile(src, dst)
        return
    try:
        whole = json.loads(src.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        whole = {}
    kept = {k: whole[k] for k in CLAUDE_JSON_KEEP if isinstance(whole, dict) and k in whole}
    dst.write_text(json.dumps(kept), encoding="utf-8")


def _secret_masks(back: list[Path], hidden: list[Path], keep: list[Path]) -> list[Path]:
    """The credential files and folders inside the bound-back folders ``back`` (see :data:`SECRET_NAMES`,
    :data:`SECRET_FILE_NAMES`), each once, as real paths strictly inside one of them. A folder that holds
    a program the CLI runs (``keep``) is not hidden whole; the files named in it still are."""
    found: list[Path] = []

    def add(candidate: Path) -> None:
        if not os.path.lexists(candidate):
            return
        real = Path(os.path.realpath(candidate))  # a link: its target, if that is visible at all
        if not any(b in real.parents for b in back) or real in found:
            return
        if real.is_dir() and any(k == real or real in k.parents for k in keep):
            return
        found.append(real)

    names = secret_names()
    for folder in back:
        for base in {folder, *[r for r in hidden if r in folder.parents]}:
            for name in names:
                add(base / name)
        seen = 0
        todo = [(folder, 0)]
        while todo and seen < SECRET_SEARCH_ENTRIES:
            here, depth = todo.pop()
            try:
                entries = list(os.scandir(here))
            except OSError:
                continue
            for entry in entries:
                seen += 1
                if entry.name in SECRET_FILE_NAMES:
                    add(Path(entry.path))
                elif (depth < SECRET_SEARCH_DEPTH and entry.name not in _NOT_SEARCHED
                      and entry.is_dir(follow_symlinks=False)):
                    todo.append((Path(entry.path), depth + 1))
    folders = [f for f in found if f.is_dir()]
    return [f for f in found if not any(d in f.parents for d in folders)]  # nothing inside a hidden folder


def _program_dirs(argv0: str, path: str | None = None) -> list[Path]:
    """The folders a CLI runs from: its own and, through symlinks, its package's (``path``: the
    ``PATH`` the CLI is looked up on, default this process's)."""
    found = argv0 if os.path.isabs(argv0) else shutil.which(argv0, path=path)
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
    """See the module docstring. ``family``: the replay backend or host family (``gemini-cli`` or
    ``gemini``) whose host's :class:`sleep.hosts.Sandbox` says which login files and key
    variables pass; ``home``: the person's home to take them from (default: the current one)."""

    family: str
    bwrap: str = field(default_factory=lambda: find_bwrap() or "bwrap")
    home: Path | None = None
    name: str = "bubblewrap"
    egress: EgressProxy | None = None  # the CLI's way to its model API (sleep.replay.egress); None: no network
    tmp_size: int = TMP_SIZE  # bytes of the sandbox's /tmp (where bwrap is older than 0.5: unsized)

    @property
    def sandbox(self) -> Sandbox:
        """What the host of this CLI family says it needs (nothing for an unknown family)."""
        host = hosts.replaying(self.family)
        return host.sandbox if host is not None else Sandbox()

    def scratch_home(self, base: Path) -> Path:
        scratch = Path(tempfile.mkdtemp(prefix="home-", dir=base))
        home = self.home or Path.home()
        box = self.sandbox
        if not box.folder:
            return scratch
        variable, folder = box.folder_env, box.folder
        config = Path(os.environ[variable]) if variable and os.environ.get(variable) else home / folder
        if variable:  # the CLI's folder always exists (Codex refuses to start without CODEX_HOME)
            (scratch / folder).mkdir(parents=True, exist_ok=True, mode=0o700)
        copies = [(config / name, scratch / folder / name) for name in box.auth_files]
        copies += [(home / name, scratch / name) for name in box.home_files]
        copies += [(config / name, scratch / folder / name) for name in _named_files(config / "config.toml")]
        for src, dst in copies:
            if src.is_file():
                dst.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
                _copy_auth(src, dst)
                os.chmod(dst, 0o600)
        return scratch

    def environment(self, env: dict[str, str], home: Path) -> dict[str, str]:
        box = self.sandbox
        keep = set(BASIC_VARS) | set(box.key_vars)
        if box.env_keys:  # the key variables its configuration names (Codex's custom providers)
            keep |= set(load_ref(box.env_keys)(env, self.home or Path.home()))
        for switch, names in box.switched_vars:
            if switch in keep and env.get(switch):
                keep |= set(names)
        out = {k: v for k, v in env.items() if k in keep}
        out.update({"HOME": str(home), "TMPDIR": "/tmp", "TERM": "dumb", "NO_COLOR": "1", "SKILLOPT_REPLAY": "1",
                    "XDG_CONFIG_HOME": str(home / ".config"), "XDG_CACHE_HOME": str(home / ".cache"),
                    "GIT_TERMINAL_PROMPT": "0", "GIT_CONFIG_NOSYSTEM": "1"})
        if box.folder_env:
            out[box.folder_env] = str(home / box.folder)
        out.update(dict(box.extra_env))
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
            if root == Path("/tmp") and self.tmp_size and sizes_tmpfs(self.bwrap):
                args += ["--size", str(self.tmp_size)]
            args += ["--tmpfs", str(root)]
        # The CLI's own folders (through its npm-style link), found before the egress bridge takes argv[0].
        programs = [*_program_dirs(argv[0], env.get("PATH")), Path(sys.prefix).resolve(),
                    Path(sys.base_prefix).resolve()]
        if self.egress is not None:
            argv = self.egress.wrap(argv)
        for entry in env.get("PATH", "").split(os.pathsep):
            if entry and Path(entry).is_absolute() and Path(entry).is_dir():
                programs.append(Path(entry).resolve())
        # A tool folder under a hidden root is bound back whole (~/.pyenv, ~/.nvm, ~/.local: shims and
        # launchers reach beside their bin folder), never the hidden root itself.
        readable = [Path(p) for p in interpreter_paths_under_tmp()] + trusted_alternates(cwd)
        for path in programs:
            under = next((r for r in hidden if r in path.parents), None)
            if under is not None and under != Path("/tmp"):
                readable.append(under / path.relative_to(under).parts[0])
            elif under is not None:
                readable.append(path)
        back = _outermost([p for p in readable if _under(p, hidden) and p not in hidden])
        for path in back:
            args += ["--ro-bind", str(path), str(path)]
        for secret in _secret_masks(back, hidden, programs):
            if secret.is_dir():
                args += ["--tmpfs", str(secret), "--remount-ro", str(secret)]
            else:
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

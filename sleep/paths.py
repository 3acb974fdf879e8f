"""Where SkillOpt-Sleep keeps its state and where each host keeps its transcripts.

Every location can be moved by an environment variable (and the CLI flags that
set them), so tests and unusual installs never touch the real home directory:

- ``SKILLOPT_HOME``: the product's data directory (index, lock). Default: the
  platform data directory from ``platformdirs`` (``~/.local/share/skillopt`` on
  Linux, ``~/Library/Application Support/skillopt`` on macOS,
  ``%LOCALAPPDATA%\\skillopt`` on Windows).

The data directory holds what transcripts said (redacted) and what models
replied: only its owner may read it. It is created 0700 and its files 0600
(:func:`private_dir`, :func:`make_private`, :func:`make_private_tree`);
a looser one found later is tightened when the index is opened.
- each host's transcript home, by the variable its :class:`sleep.hosts.Home` names
  (``CLAUDE_CONFIG_DIR``, ``CODEX_HOME``, ``COPILOT_HOME``, ``GEMINI_CLI_HOME``,
  ``XDG_DATA_HOME`` for OpenCode, ``APPDATA`` for VS Code's ``User`` dirs on Windows):
  the host descriptions in ``sleep/hosts/`` hold them; the functions below read them.
"""

from __future__ import annotations

import os
from pathlib import Path

import platformdirs

APP_NAME = "skillopt"
INDEX_FILE = "sleep.sqlite3"
LOCK_FILE = "harvest.lock"
SECRET_KEY_FILE = "secret-hash.key"  # the key of the index's secret hashes (sleep.redact.known)

# VS Code flavours whose Copilot Chat sessions we read, by product folder name.
VSCODE_PRODUCTS = ("Code", "Code - Insiders", "VSCodium")


def home() -> Path:
    """The person's home directory, honouring ``HOME`` (tests set it)."""
    return Path(os.environ.get("HOME") or Path.home())


def data_dir() -> Path:
    """The product's data directory (``SKILLOPT_HOME`` or the platform default)."""
    override = os.environ.get("SKILLOPT_HOME")
    if override:
        return Path(override).expanduser()
    return Path(platformdirs.user_data_dir(APP_NAME, appauthor=False))


PRIVATE_DIR_MODE = 0o700
PRIVATE_FILE_MODE = 0o600


def make_private(path: Path) -> None:
    """Take group and other permissions off ``path`` (a file or folder of ours), if it
    exists and has any. Never raises: a file we cannot chmod (not ours, or a
    filesystem without modes) is left as it is."""
    try:
        st = os.stat(path)
        if st.st_mode & 0o077:
            os.chmod(path, st.st_mode & 0o700)
    except OSError:
        pass


def private_dir(path: Path) -> Path:
    """``path`` as a folder only its owner can enter (created 0700, tightened if looser).
    Parents it has to create get the same mode."""
    path = Path(path)
    missing = []
    p = path
    while not p.exists() and p != p.parent:
        missing.append(p)
        p = p.parent
    for d in reversed(missing):
        try:
            d.mkdir(mode=PRIVATE_DIR_MODE)
        except FileExistsError:
            pass
    make_private(path)
    return path


def make_private_tree(root: Path) -> int:
    """Tighten every folder and file under ``root`` (a run folder in the data dir); returns
    how many needed it. Symlinks are not followed."""
    fixed = 0
    for dirpath, dirnames, filenames in os.walk(root):
        for name in [*dirnames, *filenames, None]:
            path = Path(dirpath) if name is None else Path(dirpath) / name
            try:
                st = os.lstat(path)
            except OSError:
                continue
            if not os.path.islink(path) and st.st_mode & 0o077:
                make_private(path)
                fixed += 1
    return fixed


def private_file(path: Path) -> int:
    """Open (create if missing) ``path`` for appending with mode 0600; returns the fd."""
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, PRIVATE_FILE_MODE)
    make_private(path)
    return fd


def index_path() -> Path:
    """The SQLite index file: sessions, file cursors and, later, tasks and cycles."""
    return data_dir() / INDEX_FILE


def lock_path() -> Path:
    """The lock file that keeps two harvests of one index from running at once."""
    return data_dir() / LOCK_FILE


def source_home(source: str) -> Path:
    """The home folder of transcript source ``source`` (its :class:`sleep.hosts.Home`)."""
    from sleep import hosts

    return hosts.source(source).home.path()


def claude_home() -> Path:
    """Claude Code's home: ``$CLAUDE_CONFIG_DIR``, else ``~/.claude`` (sleep/hosts/claude_code.py)."""
    return source_home("claude-code")


def codex_home() -> Path:
    """Codex's home: ``$CODEX_HOME``, else ``~/.codex`` (sleep/hosts/codex.py)."""
    return source_home("codex")


def copilot_cli_home() -> Path:
    """The Copilot CLI's home: ``$COPILOT_HOME``, else ``~/.copilot`` (sleep/hosts/copilot.py)."""
    return source_home("copilot-cli")


def cursor_user_dirs() -> list[Path]:
    """Every Cursor IDE ``User`` folder: ``$SKILLOPT_CURSOR_IDE_HOME`` when set, else the
    platforms' default places that exist (Linux ``$XDG_CONFIG_HOME`` or ``~/.config``,
    macOS ``~/Library/Application Support``, Windows ``%APPDATA%``, each ``/Cursor/User``;
    all are listed on every platform, as for VS Code; sleep/hosts/cursor.py)."""
    override = os.environ.get("SKILLOPT_CURSOR_IDE_HOME")
    if override:
        return [Path(override).expanduser()]
    h = home()
    config = os.environ.get("XDG_CONFIG_HOME")
    candidates = [Path(config) / "Cursor" / "User"] if config else []
    candidates += [h / ".config" / "Cursor" / "User", h / "Library" / "Application Support" / "Cursor" / "User"]
    appdata = os.environ.get("APPDATA")
    if appdata:
        candidates.append(Path(appdata) / "Cursor" / "User")
    found: list[Path] = []
    for c in candidates:
        if c not in found and c.is_dir():
            found.append(c)
    return found


def vscode_user_dirs() -> list[Path]:
    """Every VS Code ``User`` directory that may hold Copilot Chat sessions.

    All platforms' layouts are listed on every platform (only existing ones are
    returned): a Linux home can hold a ``.vscode-server`` tree next to a
    desktop install, and listing all keeps the rule testable anywhere.
    """
    h = home()
    candidates: list[Path] = []
    for product in VSCODE_PRODUCTS:
        candidates.append(h / ".config" / product / "User")  # Linux
        candidates.append(h / "Library" / "Application Support" / product / "User")  # macOS
        appdata = os.environ.get("APPDATA")
        if appdata:
            candidates.append(Path(appdata) / product / "User")  # Windows
    # Remote / WSL / Codespaces servers keep the user data under the home too.
    for server in (".vscode-server", ".vscode-server-insiders", ".vscodium-server"):
        candidates.append(h / server / "data" / "User")
    seen: set[Path] = set()
    found: list[Path] = []
    for c in candidates:
        if c not in seen and c.is_dir():
            seen.add(c)
            found.append(c)
    return found


def is_under(path: str | None, root: str) -> bool:
    """True if ``path`` is ``root`` or inside it (lexically, after normalising)."""
    if not path:
        return False
    p = os.path.normcase(os.path.normpath(path))
    r = os.path.normcase(os.path.normpath(root))
    return p == r or p.startswith(r.rstrip(os.sep) + os.sep)

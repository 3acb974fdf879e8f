"""Git plumbing for proposals: objects and refs only, never the index or working tree.

Everything runs git through GitPython's command wrapper with a fixed identity
(so no ``user.name`` needs to be configured) and ``GIT_OPTIONAL_LOCKS=0`` (so
no command opportunistically rewrites the person's index). Trees are built with
``ls-tree`` / ``mktree``, commits with ``commit-tree``; a ref is created with
``update-ref`` and an empty old value, which git refuses if the ref exists, so
an existing branch is never overwritten.
"""

from __future__ import annotations

import os
import tempfile
from dataclasses import dataclass
from typing import Literal, overload

import git

from sleep.gitsafe import NO_DIFF_PROGRAMS, PROTECTIVE_CONFIG, protective_args
from sleep.proposals.errors import GitFailed

AUTHOR_NAME = "SkillOpt-Sleep"
AUTHOR_EMAIL = "skillopt-sleep@users.noreply.skillopt.invalid"
NOTES_REF = "refs/notes/skillopt"

_IDENTITY = {
    "GIT_AUTHOR_NAME": AUTHOR_NAME, "GIT_AUTHOR_EMAIL": AUTHOR_EMAIL,
    "GIT_COMMITTER_NAME": AUTHOR_NAME, "GIT_COMMITTER_EMAIL": AUTHOR_EMAIL,
}
_QUIET = {"GIT_OPTIONAL_LOCKS": "0", "GIT_TERMINAL_PROMPT": "0", "GIT_PAGER": "cat", "PAGER": "cat"}
# The commit ``adopt --commit`` makes for the person runs their own hooks (pre-commit, commit-msg), as
# their ``git commit`` would; every other call runs with no hooks (sleep.gitsafe).
_PERSONS_OWN = frozenset({"commit"})
_DIFFING = frozenset({"diff", "log", "show"})


def _settings(command: str) -> list[str]:
    if command not in _PERSONS_OWN:
        return protective_args()
    out: list[str] = []
    for key, value in PROTECTIVE_CONFIG.items():
        if key != "core.hooksPath":
            out += ["-c", f"{key}={value}"]
    return out

BLOB_MODE = "100644"
TREE_MODE = "040000"


@dataclass(frozen=True)
class TreeEntry:
    mode: str
    kind: str  # blob, tree, commit (a submodule)
    sha: str
    name: str


@overload
def run(repo: git.Repo, *args: str, stdin: bytes | None = None, identity: bool = False,
        env: dict[str, str] | None = None, binary: Literal[False] = False) -> str: ...
@overload
def run(repo: git.Repo, *args: str, stdin: bytes | None = None, identity: bool = False,
        env: dict[str, str] | None = None, binary: Literal[True]) -> bytes: ...
def run(repo: git.Repo, *args: str, stdin: bytes | None = None, identity: bool = False,
        env: dict[str, str] | None = None, binary: bool = False) -> str | bytes:
    """Run ``git <args>`` in ``repo``; stdout (stripped text unless ``binary``).

    Raises :class:`GitFailed` with git's own message on a non-zero exit.
    """
    full_env = {**_QUIET, **(_IDENTITY if identity else {}), **(env or {})}
    if args[0] in _DIFFING:  # no external diff, no text conversion a repository's attributes name
        args = (args[0], *NO_DIFF_PROGRAMS, *args[1:])
    argv = ["git", *_settings(args[0]), *args]
    try:
        if stdin is None:
            out = repo.git.execute(argv, env=full_env, stdout_as_string=not binary,
                                   strip_newline_in_stdout=not binary)
        else:
            with tempfile.TemporaryFile() as fh:
                fh.write(stdin)
                fh.seek(0)
                out = repo.git.execute(argv, istream=fh, env=full_env,
                                       stdout_as_string=not binary, strip_newline_in_stdout=not binary)
    except git.GitCommandNotFound:
        raise GitFailed("git is not installed or not on PATH; install git 2.30 or newer.") from None
    except git.GitCommandError as exc:
        raise GitFailed(f"git {args[0]} failed in {repo.working_tree_dir or repo.git_dir}: "
                        f"{_stderr(exc)}") from None
    if out is None:  # only with as_process, which is never asked for
        return b"" if binary else ""
    return out


def _stderr(exc: git.GitCommandError) -> str:
    text = exc.stderr if isinstance(exc.stderr, str) else (exc.stderr or b"").decode("utf-8", "replace")
    text = text.strip().removeprefix("stderr:").strip().strip("'").strip()
    return text or f"exit status {exc.status}"


def write_blob(repo: git.Repo, data: bytes) -> str:
    return str(run(repo, "hash-object", "-w", "--stdin", stdin=data))


def read_blob(repo: git.Repo, sha: str) -> bytes:
    return bytes(run(repo, "cat-file", "blob", sha, binary=True))


def object_exists(repo: git.Repo, sha: str) -> bool:
    try:
        run(repo, "cat-file", "-e", f"{sha}^{{object}}")
        return True
    except GitFailed:
        return False


def resolve(repo: git.Repo, rev: str) -> str | None:
    """The commit ``rev`` names, or None (unborn HEAD, missing ref)."""
    try:
        return str(run(repo, "rev-parse", "--verify", "--quiet", "--end-of-options", f"{rev}^{{commit}}"))
    except GitFailed:
        return None


def ref_target(repo: git.Repo, ref: str) -> str | None:
    """What a full ref name points at, or None when it does not exist."""
    try:
        out = str(run(repo, "show-ref", "--verify", "--end-of-options", ref))
    except GitFailed:
        return None
    return out.split()[0] if out else None


def tree_of(repo: git.Repo, commit: str) -> str:
    return str(run(repo, "rev-parse", "--verify", f"{commit}^{{tree}}"))


def ls_tree(repo: git.Repo, tree: str) -> list[TreeEntry]:
    out = bytes(run(repo, "ls-tree", "-z", "--end-of-options", tree, binary=True))
    entries = []
    for record in out.split(b"\0"):
        if not record:
            continue
        meta, _, name = record.partition(b"\t")
        mode, kind, sha = meta.decode().split()
        entries.append(TreeEntry(mode, kind, sha, name.decode("utf-8", "surrogateescape")))
    return entries


def mktree(repo: git.Repo, entries: list[TreeEntry]) -> str:
    data = b"".join(f"{e.mode} {e.kind} {e.sha}\t".encode() + e.name.encode("utf-8", "surrogateescape")
                    + b"\0" for e in entries)
    return str(run(repo, "mktree", "-z", stdin=data))


def blob_at(repo: git.Repo, tree: str | None, parts: tuple[str, ...]) -> TreeEntry | None:
    """The entry at ``parts`` below ``tree`` (None if absent or ``tree`` is None)."""
    for i, name in enumerate(parts):
        if tree is None:
            return None
        entry = next((e for e in ls_tree(repo, tree) if e.name == name), None)
        if entry is None:
            return None
        if i == len(parts) - 1:
            return entry
        tree = entry.sha if entry.kind == "tree" else None
    return None


def replace_path(repo: git.Repo, tree: str | None, parts: tuple[str, ...], blob: str | None,
                 mode: str | None = None) -> str:
    """A new tree: ``tree`` with the file at ``parts`` set to ``blob`` (None removes it); ``mode``
    (``100644`` / ``100755``) for the file, else the existing entry's (a new file: ``100644``).

    Everything else is the same objects as before. A folder, symlink or
    submodule standing where the file (or one of its folders) must go is an error.
    """
    return _replace(repo, tree, parts, blob, mode) or mktree(repo, [])


def _replace(repo: git.Repo, tree: str | None, parts: tuple[str, ...], blob: str | None,
             mode: str | None = None) -> str | None:
    """As :func:`replace_path`; None when the result is an empty folder (git keeps none)."""
    entries = ls_tree(repo, tree) if tree else []
    name, rest = parts[0], parts[1:]
    existing = next((e for e in entries if e.name == name), None)
    kept = [e for e in entries if e.name != name]
    if not rest:
        if existing is not None and existing.mode not in (BLOB_MODE, "100755"):
            raise GitFailed(f"cannot stage {name}: the repository has a {_describe(existing)} "
                            "there, not a regular file")
        if blob is not None:
            kept.append(TreeEntry(mode or (existing.mode if existing else BLOB_MODE), "blob", blob, name))
    else:
        if existing is not None and existing.kind != "tree":
            raise GitFailed(f"cannot stage below {name}/: the repository has a {_describe(existing)} "
                            f"named {name} where a folder must be")
        sub = _replace(repo, existing.sha if existing else None, rest, blob, mode)
        if sub is not None:
            kept.append(TreeEntry(TREE_MODE, "tree", sub, name))
    return mktree(repo, kept) if kept else None


def _describe(e: TreeEntry) -> str:
    return {"120000": "symlink", "160000": "submodule", TREE_MODE: "folder"}.get(e.mode, f"mode {e.mode} entry")


def commit_tree(repo: git.Repo, tree: str, parents: list[str], message: str, when: str) -> str:
    """A commit by SkillOpt-Sleep (author and committer, dated ``when``), never signed."""
    args = ["commit-tree", "--no-gpg-sign", tree]
    for p in parents:
        args += ["-p", p]
    return str(run(repo, *args, "-F", "-", stdin=message.encode("utf-8"), identity=True,
                   env={"GIT_AUTHOR_DATE": when, "GIT_COMMITTER_DATE": when}))


def create_ref(repo: git.Repo, ref: str, sha: str, reason: str) -> bool:
    """Create ``ref`` at ``sha`` if and only if it does not exist yet; False if it does.

    Any other failure (a folder/file clash such as ``skillopt/x`` existing as a
    branch, a locked ref) raises :class:`GitFailed`.
    """
    try:
        run(repo, "update-ref", "-m", reason, "--end-of-options", ref, sha, "", identity=True)
        return True
    except GitFailed:
        if ref_target(repo, ref) is not None:
            return False
        raise


def update_ref(repo: git.Repo, ref: str, sha: str, old: str | None, reason: str) -> None:
    """Move ``ref`` to ``sha`` only if it is still at ``old`` (None: must not exist)."""
    run(repo, "update-ref", "-m", reason, "--end-of-options", ref, sha, old or "", identity=True)


def delete_ref(repo: git.Repo, ref: str, old: str) -> bool:
    """Delete ``ref`` only if it still points at ``old``; False if it moved or is gone."""
    try:
        run(repo, "update-ref", "-d", "--end-of-options", ref, old)
        return True
    except GitFailed:
        return False


def add_note(repo: git.Repo, commit: str, text: str) -> None:
    with tempfile.NamedTemporaryFile("w", encoding="utf-8", suffix=".json", delete=False) as fh:
        fh.write(text)
    try:
        run(repo, "notes", f"--ref={NOTES_REF}", "add", "-F", fh.name, commit, identity=True)
    finally:
        os.unlink(fh.name)


def read_note(repo: git.Repo, commit: str) -> str | None:
    try:
        return str(run(repo, "notes", f"--ref={NOTES_REF}", "show", commit))
    except GitFailed:
        return None


def all_notes(repo: git.Repo) -> list[str]:
    """The text of every note under :data:`NOTES_REF` (one ``cat-file --batch`` call)."""
    if ref_target(repo, NOTES_REF) is None:
        return []
    listing = str(run(repo, "notes", f"--ref={NOTES_REF}", "list"))
    blobs = [line.split()[0] for line in listing.splitlines() if line.strip()]
    if not blobs:
        return []
    out = bytes(run(repo, "cat-file", "--batch", stdin="\n".join(blobs).encode() + b"\n", binary=True))
    texts, pos = [], 0
    while pos < len(out):
        header_end = out.index(b"\n", pos)
        header = out[pos:header_end].split()
        if len(header) != 3:  # "<sha> missing": no content follows
            pos = header_end + 1
            continue
        size = int(header[2])
        texts.append(out[header_end + 1:header_end + 1 + size].decode("utf-8", "replace"))
        pos = header_end + 1 + size + 1
    return texts


def only_note_added(repo: git.Repo, before: str | None, after: str, commit: str) -> bool:
    """Whether the notes commit ``after`` is ``before`` plus the note of ``commit`` and nothing else."""
    parents = str(run(repo, "rev-list", "--parents", "-n", "1", after)).split()[1:]
    if parents != ([before] if before else []):
        return False
    old_tree = tree_of(repo, before) if before else mktree(repo, [])
    changed = str(run(repo, "diff-tree", "-r", "--name-only", old_tree, tree_of(repo, after))).split()
    return [path.replace("/", "") for path in changed] == [commit]


def is_ancestor(repo: git.Repo, older: str, newer: str) -> bool:
    """Whether commit ``older`` is ``newer`` or one of its ancestors."""
    try:
        run(repo, "merge-base", "--is-ancestor", older, newer)
        return True
    except GitFailed:
        return False


def remove_note(repo: git.Repo, commit: str) -> None:
    run(repo, "notes", f"--ref={NOTES_REF}", "remove", "--ignore-missing", commit, identity=True)


def check_ref_format(repo: git.Repo, ref: str) -> bool:
    try:
        run(repo, "check-ref-format", ref)
        return True
    except GitFailed:
        return False

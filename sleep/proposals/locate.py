"""Where a live skill file is versioned: its project's repository, or SkillOpt's own.

A skill inside a git work tree with at least one commit is staged in that
repository. A skill outside any repository (``~/.claude/skills/x/SKILL.md``,
``~/.agents/skills/...``) or in a repository with no commits yet is versioned
in SkillOpt's skills repository, a bare repository in the data directory
(``<data dir>/skills.git``), where each live file has one path:
``home/<path below the home directory>`` or ``root/<absolute path>``.

Guards (each has its test): a directory, a path inside ``.git``, a symlink
that leads out of the repository holding it, a file outside the ``project``
the caller named, and a bare repository are refused before anything is written.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

import git

from sleep import paths
from sleep.proposals import gitobjects as g
from sleep.proposals.errors import NotARepositoryError, SkillPathError

SKILLS_REPO_DIR = "skills.git"
SKILLS_MAIN = "refs/heads/main"


@dataclass(frozen=True)
class Location:
    store: str  # "project" or "skills-repo"
    repo: git.Repo
    live_path: Path  # the live file, symlinks resolved
    tree_path: str  # its path inside the repository's tree (POSIX)
    project: str | None  # the work tree holding the file, if any
    note: str | None = None  # said in the report (e.g. why the skills repository is used)

    @property
    def repo_dir(self) -> str:
        return str(self.repo.working_tree_dir or self.repo.git_dir)


def locate(skill_path: str | os.PathLike, project: str | os.PathLike | None = None) -> Location:
    """Decide where ``skill_path`` is versioned; raise a typed error for unusable paths."""
    given = Path(os.path.abspath(os.path.expanduser(os.fspath(skill_path))))
    if given.is_dir():
        raise SkillPathError(f"{given} is a folder; pass the skill file itself (e.g. {given / 'SKILL.md'}).")
    live = given.resolve()
    if live.is_dir():
        raise SkillPathError(f"{given} leads to the folder {live}; pass a skill file.")
    if project is not None:
        root = Path(os.path.abspath(os.path.expanduser(os.fspath(project)))).resolve()
        if not root.is_dir():
            raise SkillPathError(f"the project {root} is not a folder; pass the project's root folder.")
        if not _is_under(live, root):
            raise SkillPathError(f"{given} is outside the project {root}"
                                 + (f" (it leads to {live})" if live != given else "")
                                 + "; pass a skill file inside the project.")
    lexical_root = _lexical_work_tree(given)
    if lexical_root is not None and not _is_under(live, lexical_root.resolve()):
        raise SkillPathError(f"{given} is a symlink that leads out of the repository {lexical_root} "
                             f"(to {live}); pass the file it points to, or copy it into the repository.")
    repo = _find_repo(live.parent)
    if repo is None:
        if lexical_root is not None:
            raise NotARepositoryError(f"{lexical_root} has a .git entry that git cannot open as a repository "
                                      f"(a broken worktree link?); run `git -C {lexical_root} status` to see why.")
        return _in_skills_repo(live, project=None, note=None)
    if repo.bare or not repo.working_tree_dir:
        raise NotARepositoryError(f"{live} is inside the bare repository {repo.git_dir}, which has no "
                                  "working tree; a live skill file must be in a checkout.")
    root = Path(repo.working_tree_dir).resolve()
    rel = PurePosixPath(live.relative_to(root).as_posix())
    if any(part.lower() == ".git" for part in rel.parts):
        raise SkillPathError(f"{given} is inside the repository's .git folder; pass a file of the work tree.")
    if g.resolve(repo, "HEAD") is None:
        return _in_skills_repo(live, project=str(root), note=(
            f"the repository {root} has no commits yet, so this skill is versioned in SkillOpt's "
            "skills repository; commit once to get proposals as branches of the project."))
    return Location("project", repo, live, str(rel), str(root))


def _in_skills_repo(live: Path, project: str | None, note: str | None) -> Location:
    return Location("skills-repo", skills_repo(), live, skills_repo_path(live), project, note)


def skills_repo_dir() -> Path:
    return paths.data_dir() / SKILLS_REPO_DIR


def skills_repo(create: bool = True) -> git.Repo:
    """SkillOpt's own bare skills repository (created on first use, branch ``main``)."""
    where = skills_repo_dir()
    if (where / "HEAD").exists():
        return git.Repo(where)
    if not create:
        raise NotARepositoryError(f"SkillOpt's skills repository {where} does not exist.")
    paths.private_dir(where.parent)
    try:
        # --shared=0600: git gives every file it writes there mode 0600 (0700 for folders),
        # whatever the umask, like the rest of the data directory
        git.Repo.init(where, bare=True, initial_branch="main", shared="0600")
    except git.GitCommandError as exc:
        raise NotARepositoryError(f"could not create SkillOpt's skills repository at {where}: {exc.stderr}") from None
    return git.Repo(where)


def skills_repo_path(live: Path) -> str:
    """The one path a live file has in the skills repository."""
    home = paths.home().resolve()
    if _is_under(live, home):
        return PurePosixPath("home", *live.relative_to(home).parts).as_posix()
    parts = [p for p in live.parts if p not in (live.anchor, "/", "\\")]
    drive = live.drive.rstrip(":\\/")
    return PurePosixPath("root", *([drive] if drive else []), *parts).as_posix()


def open_repo(repo_dir: str) -> git.Repo:
    """The repository a proposal was staged in (its work tree or git dir)."""
    try:
        return git.Repo(repo_dir)
    except (git.InvalidGitRepositoryError, git.NoSuchPathError):
        raise NotARepositoryError(f"the repository {repo_dir} is gone or no longer a git repository.") from None


def _find_repo(start: Path) -> git.Repo | None:
    here = start
    while not here.is_dir():  # a new skill's folder may not exist yet
        here = here.parent
    try:
        return git.Repo(here, search_parent_directories=True)
    except (git.InvalidGitRepositoryError, git.NoSuchPathError):
        return None


def _lexical_work_tree(path: Path) -> Path | None:
    """The nearest folder above ``path`` (symlinks not followed) holding a ``.git`` entry."""
    for folder in path.parents:
        if os.path.lexists(folder / ".git"):
            return folder
    return None


def _is_under(path: Path, root: Path) -> bool:
    return path == root or root in path.parents

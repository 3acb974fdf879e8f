"""Which of the project's skills fits its recurring tasks, when no session invoked one.

A skill's name and ``description`` (its front matter: what the host reads to
decide when to use it) are compared with each task's intent and prompt as
the miner compares prompts (:func:`sleep.mine.features.words`: stems, function
words dropped, paths and numbers as placeholders). A skill fits a task when
they share a word; the skill that fits the most tasks wins, if it fits at
least :data:`MIN_SHARE` of them. The answer says why, naming the words and the
other skills, so the person can pick another with ``--skill``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from sleep.cycle.triggers import front_matter

MIN_SHARE = 0.3
_RAW_WORDS = re.compile(r"[^\W\d_]+", re.UNICODE)


@dataclass(frozen=True)
class Fit:
    path: Path | None  # None: no skill fits
    why: str  # "" when there was nothing to compare


@dataclass(frozen=True)
class _Score:
    path: Path
    name: str
    fits: int
    shared: tuple[str, ...]


def describe(path: Path) -> tuple[str, str]:
    """(name, description) from a skill file's front matter ('' when it has none or is unreadable)."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return path.parent.name, ""
    front = front_matter(text)
    return str(front.get("name") or path.parent.name), str(front.get("description") or "")


def fitting_skill(skills: list[Path], tasks: list[str]) -> Fit:
    """The skill of ``skills`` whose description fits the most of ``tasks`` (see the module docstring)."""
    if not skills or not tasks:
        return Fit(None, "")
    task_words = [set(content_words(t)) for t in tasks]
    scores = []
    for path in skills:
        name, description = describe(path)
        readable: dict[str, str] = {}
        for raw in _RAW_WORDS.findall(f"{name.replace('-', ' ').replace('_', ' ')} {description}"):
            for stem in content_words(raw):
                readable.setdefault(stem, raw.lower())
        hits = [tw & readable.keys() for tw in task_words]
        shared = sorted({readable[s] for h in hits for s in h})
        scores.append(_Score(path, name, sum(1 for h in hits if h), tuple(shared)))
    scores.sort(key=lambda s: (-s.fits, -len(s.shared), str(s.path)))
    best, n = scores[0], len(tasks)
    others = "; ".join(f"{s.name} fits {s.fits}" for s in scores[1:])
    others = f" (other project skills: {others})" if others else ""
    if best.fits and best.fits >= MIN_SHARE * n:
        words_said = ", ".join(best.shared[:6])
        return Fit(best.path, f"no session invoked it, but its description fits {best.fits} of {n} recurring "
                              f"tasks (shared words: {words_said}){others}; pass another with --skill PATH")
    listed = "; ".join(f"{s.name} fits {s.fits}" for s in scores)
    return Fit(None, f"no project skill's description fits the {n} recurring tasks ({listed} of {n}); "
                     "to evolve one of them anyway, pass it with --skill PATH")


def content_words(text: str) -> list[str]:
    """The stems of ``text`` that carry meaning: no function words, placeholders or short stems."""
    from sleep.mine.features import tokens, words

    return [s for s in tokens(words(text), {}, bigrams=False) if len(s) > 2 and not s.startswith("xpath")
            and s not in _PLACEHOLDERS]


_PLACEHOLDERS = frozenset({"xurl", "xref", "xver", "xsha", "xident", "xnum"})

"""The skill document: Markdown with optional YAML front matter.

A :class:`Skill` is a pure value. ``Skill.parse(text)`` splits the leading
``---`` YAML block from the Markdown body; ``render()`` puts them back together.
Parsing then rendering reproduces the original text exactly (the original front
matter text, comments and quoting included, is kept as long as the front matter
is unchanged), so a proposal that edits only the body changes only the body.

Protected regions are spans of the body that edits may never touch::

    <!-- skillopt:protected -->
    ...text edits may not change...
    <!-- /skillopt:protected -->

    <!-- skillopt:protected name="slow-update" -->
    ...a named block, read and replaced by the trainer itself...
    <!-- /skillopt:protected -->

Markers are validated whenever a Skill is built: an unclosed, nested or stray
marker is a :class:`SkillParseError` that names the line and says what to do.
"""

from __future__ import annotations

import copy
import hashlib
import os
import re
import stat
import uuid
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, NamedTuple

import yaml

__all__ = [
    "ProtectedRegion",
    "Skill",
    "SkillParseError",
    "load_skill",
    "protected_regions",
    "save_skill",
    "split_front_matter",
    "validate_skill_metadata",
]

_FENCE = "---"
_BOM = "\ufeff"

# One pattern for both markers so a scan sees them in document order.
_MARKER_RE = re.compile(r"<!--\s*(?P<close>/)?skillopt:protected(?P<attrs>(?:\s[^>]*?)?)\s*-->")
_NAME_ATTR_RE = re.compile(r"""name\s*=\s*(?:"(?P<dq>[^"]+)"|'(?P<sq>[^']+)')""")
_BLOCK_NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")
_SKILL_NAME_RE = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*$")
_CLOSE_MARKER = "<!-- /skillopt:protected -->"


class SkillParseError(ValueError):
    """A skill file (or body) that cannot be parsed.

    ``source`` and ``line`` (1-based, counted in the whole file) say where; the
    message also says what to do.
    """

    def __init__(self, message: str, *, source: str = "<skill>", line: int | None = None) -> None:
        super().__init__(message)
        self.source = source
        self.line = line


class ProtectedRegion(NamedTuple):
    """One protected block. Offsets are into the body; ``end`` is exclusive and
    includes the closing marker; ``inner_*`` delimit the text between markers.
    ``line`` is the 1-based body line of the opening marker."""

    start: int
    end: int
    inner_start: int
    inner_end: int
    name: str | None
    line: int


def protected_regions(body: str, *, source: str = "<skill>", line_offset: int = 0) -> list[ProtectedRegion]:
    """Scan ``body`` for protected regions, in order.

    Raises :class:`SkillParseError` for an unclosed, nested or stray marker, a
    marker with unknown attributes, or a block name used twice. Line numbers in
    messages are body lines plus ``line_offset`` (the front matter's lines).
    """
    regions: list[ProtectedRegion] = []
    open_match: re.Match[str] | None = None
    open_name: str | None = None
    seen_names: dict[str, int] = {}

    def line_of(pos: int) -> int:
        return body.count("\n", 0, pos) + 1

    def fail(message: str, pos: int) -> SkillParseError:
        line = line_of(pos) + line_offset
        return SkillParseError(f"{source}:{line}: {message}", source=source, line=line)

    for match in _MARKER_RE.finditer(body):
        attrs = match.group("attrs").strip()
        if match.group("close"):
            if attrs:
                raise fail(
                    f"closing marker takes no attributes (found {attrs!r}); write {_CLOSE_MARKER}", match.start()
                )
            if open_match is None:
                raise fail(
                    "closing protected marker has no opening marker; remove it, or put "
                    "<!-- skillopt:protected --> before the text to protect",
                    match.start(),
                )
            regions.append(
                ProtectedRegion(
                    start=open_match.start(),
                    end=match.end(),
                    inner_start=open_match.end(),
                    inner_end=match.start(),
                    name=open_name,
                    line=line_of(open_match.start()),
                )
            )
            open_match, open_name = None, None
            continue
        if open_match is not None:
            raise fail(
                f"protected marker opens a region inside the one opened at line "
                f"{line_of(open_match.start()) + line_offset}; protected regions cannot nest, "
                f"so close the first with {_CLOSE_MARKER} before opening another",
                match.start(),
            )
        name: str | None = None
        if attrs:
            name_match = _NAME_ATTR_RE.fullmatch(attrs)
            if name_match is None:
                raise fail(
                    f"unrecognised protected marker attributes {attrs!r}; write "
                    '<!-- skillopt:protected --> or <!-- skillopt:protected name="block-name" -->',
                    match.start(),
                )
            name = name_match.group("dq") or name_match.group("sq")
            if name in seen_names:
                raise fail(
                    f'protected block name "{name}" is already used at line '
                    f"{seen_names[name] + line_offset}; give each named block a unique name",
                    match.start(),
                )
            seen_names[name] = line_of(match.start())
        open_match, open_name = match, name
    if open_match is not None:
        raise fail(
            f"protected region is never closed; add {_CLOSE_MARKER} after the text to protect",
            open_match.start(),
        )
    return regions


def _is_fence(line: str) -> bool:
    return line.rstrip(" \t\r\n") == _FENCE


def _split_front_matter(text: str, source: str) -> tuple[str | None, str, str]:
    """Return (header, yaml_text, body): ``header`` is the whole front matter
    block from the opening ``---`` through the closing line's line break, or
    None if the first line is not ``---``. Only '\\n' ends a line here, so
    parse and render agree on where lines are."""
    first_break = text.find("\n")
    if first_break == -1 or not _is_fence(text[:first_break]):
        return None, "", text
    pos = first_break + 1
    while pos <= len(text):
        brk = text.find("\n", pos)
        line_end = len(text) if brk == -1 else brk + 1
        if _is_fence(text[pos:line_end]):
            return text[:line_end], text[first_break + 1 : pos], text[line_end:]
        if brk == -1:
            break
        pos = line_end
    raise SkillParseError(
        f"{source}:1: front matter opened with '---' is never closed; add a '---' line "
        "after the YAML (or remove the first line if it is not front matter)",
        source=source,
        line=1,
    )


def _load_front_matter(yaml_text: str, source: str) -> dict[str, Any]:
    """Parse the YAML between the fences; errors name the file line."""
    try:
        data = yaml.safe_load(yaml_text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
        # +2: the opening fence is line 1 and YAML marks are 0-based.
        line = mark.line + 2 if mark is not None else 2
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise SkillParseError(
            f"{source}:{line}: front matter is not valid YAML ({problem}); fix the YAML "
            "between the '---' lines, e.g. quote a value that contains ': ' or ' #'",
            source=source,
            line=line,
        ) from exc
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise SkillParseError(
            f"{source}:2: front matter must be a YAML mapping (key: value lines), "
            f"got a {type(data).__name__}; write e.g. 'name: my-skill'",
            source=source,
            line=2,
        )
    return data


def split_front_matter(text: str, source: str = "<skill>") -> tuple[dict[str, Any] | None, str]:
    """(front matter mapping, body) of a skill text; ``(None, text)`` when the
    first line is not ``---``. The one front-matter parser: :meth:`Skill.parse`
    and the agent-CLI backends (which install a skill verbatim) both use it.
    Unlike :meth:`Skill.parse` it does not check protected-region markers.
    A leading byte-order mark is ignored. Raises :class:`SkillParseError` for
    front matter that is never closed, is not valid YAML or is not a mapping."""
    if text.startswith(_BOM):
        text = text[len(_BOM) :]
    header, yaml_text, body = _split_front_matter(text, source)
    if header is None:
        return None, body
    return _load_front_matter(yaml_text, source), body


@dataclass(frozen=True)
class Skill:
    """A skill document: ``front_matter`` (treat as read-only) and Markdown ``body``.

    Equality compares ``front_matter`` and ``body``; ``hash`` is the sha256 of
    the rendered text, which is exactly what an agent reads.
    """

    front_matter: dict[str, Any]
    body: str
    # The original front matter block and a snapshot of what it parsed to; used
    # by render() to reproduce the file byte for byte while the front matter is
    # unchanged. Not part of equality.
    _header: tuple[str, dict[str, Any]] | None = field(default=None, compare=False, repr=False)

    def __post_init__(self) -> None:
        if not isinstance(self.front_matter, dict):
            raise TypeError(f"Skill.front_matter must be a dict, got {type(self.front_matter).__name__}")
        if not isinstance(self.body, str):
            raise TypeError(f"Skill.body must be a str, got {type(self.body).__name__}")
        protected_regions(self.body, source="<skill body>")

    def __hash__(self) -> int:
        # The body alone keeps hash() consistent with equality (front_matter is a dict).
        return hash(self.body)

    @classmethod
    def parse(cls, text: str, source: str = "<skill>") -> Skill:
        """Parse a skill file's text. ``source`` (usually the path) names the file in errors.

        Front matter is the YAML between a first line ``---`` and the next
        ``---`` line. A leading byte-order mark is dropped.
        """
        if text.startswith(_BOM):
            text = text[len(_BOM) :]
        header, yaml_text, body = _split_front_matter(text, source)
        if header is None:
            protected_regions(body, source=source)
            return cls(front_matter={}, body=body)
        front_matter = _load_front_matter(yaml_text, source)
        protected_regions(body, source=source, line_offset=header.count("\n"))
        return cls(front_matter=front_matter, body=body, _header=(header, copy.deepcopy(front_matter)))

    def render(self) -> str:
        """The full text: front matter block (if any) followed by the body.

        ``Skill.parse(s.render()) == s`` always holds; a text without front
        matter renders as its body, unchanged.
        """
        if self._header is not None and self._header[1] == self.front_matter:
            return self._header[0] + self.body
        if self.front_matter:
            dumped = yaml.safe_dump(self.front_matter, sort_keys=False, allow_unicode=True, width=1000)
            return f"{_FENCE}\n{dumped}{_FENCE}\n{self.body}"
        if _is_fence(self.body.split("\n", 1)[0]):
            # An empty front matter block keeps a body that starts with '---'
            # from being read back as front matter.
            return f"{_FENCE}\n{_FENCE}\n{self.body}"
        return self.body

    @property
    def hash(self) -> str:
        """sha256 hex digest of :meth:`render` (UTF-8)."""
        return hashlib.sha256(self.render().encode("utf-8", "surrogatepass")).hexdigest()

    @property
    def name(self) -> str | None:
        value = self.front_matter.get("name")
        return value if isinstance(value, str) else None

    @property
    def header_line_count(self) -> int:
        """Lines the rendered front matter block occupies before the body."""
        rendered = self.render()
        return rendered[: len(rendered) - len(self.body)].count("\n")

    def with_body(self, body: str) -> Skill:
        """A copy with a new body (front matter unchanged). Validates markers."""
        return replace(self, body=body)

    def protected_spans(self) -> list[tuple[int, int]]:
        """(start, end) body offsets of every protected region, markers included."""
        return [(r.start, r.end) for r in protected_regions(self.body)]

    def protected_block(self, name: str) -> str | None:
        """Text of the named block, without the line break that ends the opening
        marker's line and the one before the closing marker; None if absent.
        ``protected_block(n)`` returns exactly what ``set_protected_block(n, c)`` set."""
        for region in protected_regions(self.body):
            if region.name == name:
                inner = self.body[region.inner_start : region.inner_end]
                inner = _strip_one_break(inner, leading=True)
                return _strip_one_break(inner, leading=False)
        return None

    def set_protected_block(self, name: str, content: str) -> Skill:
        """Replace the named block's content, or append a new named block at the
        end of the body (after a blank line). Raises ValueError for a name that
        is not ``[A-Za-z0-9][A-Za-z0-9_.-]*`` or content holding a marker."""
        if not _BLOCK_NAME_RE.match(name):
            raise ValueError(
                f"protected block name {name!r} is not allowed; use letters, digits, '-', '_' or '.'"
            )
        if _MARKER_RE.search(content):
            raise ValueError(
                f"content for protected block {name!r} contains a skillopt:protected marker; "
                "remove it (blocks cannot nest)"
            )
        inner = f"\n{content}\n"
        for region in protected_regions(self.body):
            if region.name == name:
                body = self.body[: region.inner_start] + inner + self.body[region.inner_end :]
                return self.with_body(body)
        body = self.body
        if body and not body.endswith("\n"):
            body += "\n"
        if body and not body.endswith("\n\n"):
            body += "\n"
        block = f'<!-- skillopt:protected name="{name}" -->{inner}{_CLOSE_MARKER}\n'
        return self.with_body(body + block)


def _strip_one_break(text: str, *, leading: bool) -> str:
    for brk in ("\r\n", "\n"):
        if leading and text.startswith(brk):
            return text[len(brk) :]
        if not leading and text.endswith(brk):
            return text[: -len(brk)]
    return text


def validate_skill_metadata(skill: Skill, folder_name: str | None = None) -> list[str]:
    """Problems with the front matter against the SKILL.md shape (FORMATS.md).

    Returns human-readable sentences; an empty list means valid. Pass
    ``folder_name`` to also check that ``name`` equals the skill's folder.
    """
    problems: list[str] = []
    fm = skill.front_matter
    name = fm.get("name")
    if name is None:
        problems.append("front matter has no 'name'; add e.g. 'name: my-skill' (the skill's folder name)")
    elif not isinstance(name, str):
        problems.append(f"'name' must be a string, got {type(name).__name__}")
    elif not 1 <= len(name) <= 64:
        problems.append(f"'name' must be 1-64 characters, got {len(name)}")
    elif not _SKILL_NAME_RE.match(name):
        problems.append(
            f"'name' {name!r} may use only a-z, 0-9 and single hyphens, "
            "and may not start or end with a hyphen"
        )
    elif folder_name is not None and name != folder_name:
        problems.append(f"'name' {name!r} must equal the skill's folder name {folder_name!r}")
    description = fm.get("description")
    if description is None:
        problems.append("front matter has no 'description'; say what the skill does and when to use it")
    elif not isinstance(description, str):
        problems.append(f"'description' must be a string, got {type(description).__name__}")
    elif not description.strip():
        problems.append("'description' is empty; say what the skill does and when to use it")
    elif len(description) > 1024:
        problems.append(f"'description' must be at most 1024 characters, got {len(description)}")
    for key in ("license", "compatibility"):
        if key in fm and not isinstance(fm[key], str):
            problems.append(f"'{key}' must be a string, got {type(fm[key]).__name__}")
    if "metadata" in fm:
        metadata = fm["metadata"]
        if not isinstance(metadata, dict) or not all(
            isinstance(k, str) and isinstance(v, str) for k, v in metadata.items()
        ):
            problems.append("'metadata' must map strings to strings (quote numbers and booleans)")
    return problems


def load_skill(path: str | os.PathLike[str]) -> Skill:
    """Read and parse a skill file (UTF-8). Errors name the path and what to do:
    FileNotFoundError / IsADirectoryError / OSError for unreadable files,
    SkillParseError for bad content."""
    p = Path(path)
    try:
        data = p.read_bytes()
    except FileNotFoundError as exc:
        raise FileNotFoundError(f"skill file not found: {p}; check the path (or create the file)") from exc
    except IsADirectoryError as exc:
        raise IsADirectoryError(f"{p} is a directory; pass the skill file inside it (e.g. {p / 'SKILL.md'})") from exc
    except OSError as exc:
        raise OSError(f"cannot read skill file {p}: {exc.strerror or exc}; check its permissions") from exc
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise SkillParseError(
            f"{p}: not UTF-8 text (bad byte at offset {exc.start}); save the file as UTF-8",
            source=str(p),
        ) from exc
    return Skill.parse(text, source=str(p))


def save_skill(skill: Skill, path: str | os.PathLike[str]) -> None:
    """Write ``skill.render()`` to ``path`` atomically: a temporary file in the
    same folder, fsynced, then ``os.replace``. Creates missing parent folders,
    keeps an existing file's permission bits and writes through a symlink."""
    target = Path(path)
    if target.is_symlink():
        target = target.resolve()
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.with_name(f".{target.name}.{uuid.uuid4().hex[:12]}.tmp")
    data = skill.render().encode("utf-8")
    # 0o666 lets the process umask decide the mode of a new file, as open() would.
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        if target.exists():
            os.chmod(tmp, stat.S_IMODE(target.stat().st_mode))
        os.replace(tmp, target)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise

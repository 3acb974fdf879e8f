"""A host that exists only in tests: all a third-party package ships to add one.

Its agent writes one JSON file per chat under ``$TOY_AGENT_HOME/chats/`` (default
``~/.toy-agent``): ``{"id": ..., "cwd": ..., "prompts": [{"text": ..., "at": ...}]}``.
It is not a real host's format (none is imitated, so no documentation applies); it
exists to show that this module alone, registered (``sleep.hosts.register(HOST)``)
or named by a ``skillopt.hosts`` entry point (``toy = "toy_host"``), reaches every
place SkillOpt-Sleep lists hosts."""

from __future__ import annotations

from pathlib import Path
from typing import BinaryIO, Iterator

from sleep.hosts import Home, Host, Skills, Source, Watch
from sleep.harvest.reader import ParseContext, ParseStats
from sleep.sessions import Session, iso_utc
from sleep.harvest.sources import ParseResult, SourceFile, scan_dir
from sleep.harvest.sources.turns import open_turn

SOURCE = "toy-agent"
HOME = Home("TOY_AGENT_HOME", {"*": ".toy-agent"}, flag="--toy-home", label="Toy agent home")


class ToySource:
    name = SOURCE

    def discover(self, stats: ParseStats) -> Iterator[SourceFile]:
        for entry in sorted(scan_dir(HOME.path() / "chats", stats), key=lambda e: e.name):
            if entry.name.endswith(".json"):
                yield SourceFile(entry.path, SOURCE, "chat", incremental=False)

    def scope_hint(self, file: SourceFile, project: str) -> bool | None:
        return None

    def project_of(self, file: SourceFile, ctx: ParseContext) -> str | None:
        doc = ctx.loads(Path(file.path).read_bytes(), file.path)
        return doc.get("cwd") if isinstance(doc, dict) else None

    def parse(self, file: SourceFile, f: BinaryIO, start: int, prior: Session | None,
              ctx: ParseContext) -> ParseResult:
        data = f.read()
        ctx.stats.bytes_read += len(data)
        doc = ctx.loads(data, f"{file.path}@0")
        if not isinstance(doc, dict):
            return ParseResult(None, file_skip_reason="unusable")
        ctx.stats.kept()
        s = Session(host=SOURCE, session_id=str(doc["id"]), project_dir=doc.get("cwd"), source_path=file.path)
        for p in doc.get("prompts", []):
            at = iso_utc(p.get("at"))
            s.note_time(at)
            open_turn(s, p["text"], at, ctx.redactor, follows_answer=False)
        return ParseResult(s, end_offset=len(data))


HOST = Host(
    name="toy",
    label="Toy agent",
    sources=(Source(SOURCE, ToySource, HOME, watch=(Watch("chats", recursive=False),)),),
    skills=Skills(project=(".toy/skills",), user=((HOME, "skills"),)),
)

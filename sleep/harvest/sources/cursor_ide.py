"""The Cursor IDE's agent (composer) chats, in its ``state.vscdb`` SQLite databases.

Cursor is a VS Code fork and keeps its state where VS Code does, in ``User``
(Linux ``~/.config/Cursor/User``, macOS ``~/Library/Application Support/Cursor/User``,
Windows ``%APPDATA%\\Cursor\\User``; ``$SKILLOPT_CURSOR_IDE_HOME`` or
``harvest --cursor-ide-home`` names another). The layout, as public
reverse-engineering notes describe it and their test fixtures build it
(michaeldhood/chatrxiv docs/cursor/storage-reference.md, schema ``_v`` 10 and
bubbles ``_v`` 3, 2025-12; jdconley/deadhand docs/reverse-engineering/cursor-storage.md;
pppp606/cursor-efficiency docs/vscdbRelation.md, Cursor 0.50; the fixtures of
peasant-labs/peasant internal/harnesslayout for the ``composerHeaders`` table and
``workspaceIdentifier``, and of the Rust/Go readers found with the search tool for
``toolFormerData``'s ``run_terminal_command_v2`` / ``edit_file_v2`` / ``read_file_v2``), checked
against the genuine records of Cursor 3.15.6 that Li-Mingshuang/cyber-overseer
docs/recon/cursor.md quotes (a ``composerHeaders`` table with ``isSubagent`` and
``recency``, ItemTable ``composer.composerHeaders`` ``{allComposers}`` whose
``workspaceIdentifier.uri.fsPath`` is a Windows path, ``_v`` 2 / 3 / 17 records side by side,
bubbles whose only time is ``timingInfo.clientRpcSendTime``, SQL NULL values, workspace ids
such as ``empty-window`` with no ``workspace.json``), and run on two genuine databases found
in public repositories: the global ``state.vscdb`` AdamEps/urpg_app commits (e78fd6a,
2025-09: composerData ``_v`` 9, tool bubbles the headers do not list) and the workspace one
of slevin48/cursor-history (74b0ce6, 2024-11: whole conversations in ``composer.composerData``
and the old chat panel's tabs):

- ``globalStorage/state.vscdb``, table ``cursorDiskKV(key, value)``: one
  ``composerData:<composerId>`` JSON per chat (``composerId``, ``name``,
  ``createdAt`` / ``lastUpdatedAt`` in ms, ``modelConfig.modelName``,
  ``workspaceIdentifier`` (``{id: <workspace folder hash>}`` or ``{uri: {fsPath}}``),
  ``fullConversationHeadersOnly: [{bubbleId, type}]``, or an inline ``conversation``
  in older chats) and one ``bubbleId:<composerId>:<bubbleId>`` JSON per message
  (``type`` 1 the person, 2 the agent; ``text``, ``createdAt`` (ISO), ``modelInfo.modelName``,
  ``toolFormerData {name, params | rawArgs (JSON strings), status}``). Newer versions also
  keep chat headers (``composerHeaders`` table, or ItemTable ``composer.composerHeaders``)
  naming each chat's workspace.
- ``workspaceStorage/<hash>/state.vscdb``, table ``ItemTable``, key ``composer.composerData``:
  ``{allComposers: [{composerId, createdAt, lastUpdatedAt, ...}]}``, the chats of the folder
  ``<hash>/workspace.json`` names (older versions kept the whole ``conversation`` there; newer
  ones, ``hasMigratedMultipleComposers``, keep no ``allComposers`` and name the folder's chats
  only in ``selectedComposerIds`` / ``lastFocusedComposerIds``: a chat whose own record names
  no workspace reaches its folder only through these; one named by two workspaces stays
  unknown), and
  the chat panel older versions had before the composer, ``workbench.panel.aichat.view.aichat.chatdata``
  (``tabs[]``: ``tabId``, ``lastSendTime``, ``bubbles`` of ``type`` ``user`` / ``ai`` with ``text``;
  the shape of the genuine workspace database slevin48/cursor-history commits, Cursor of 2024-11;
  the 2023 panel leaves a user bubble's ``text`` empty and keeps what was typed in ``delegate.a``,
  and every tab ends with the input box's empty draft bubble, which is no prompt).

One database holds every chat, so each chat is a *row file* ``<database>#<composerId>``
(sleep.harvest.sources.SourceFile): :meth:`CursorIdeSource.discover` lists the chats with one
query over the ``composerData`` rows (SQLite's JSON functions read ``lastUpdatedAt``;
no bubble is read), and the harvest re-reads a chat only when its ``lastUpdatedAt`` or
stored size changed. Secrets Cursor keeps next to the chats (``cursorAuth/*`` keys,
``blobEncryptionKey``) are never selected. Every database is opened read-only
(:mod:`sleep.harvest.sources.sqlite_ro`): a running IDE is never blocked and nothing is written.

Mapping: a type-1 bubble's ``text`` is a prompt, the last type-2 ``text`` before the next
prompt its answer; ``toolFormerData.name`` is a tool, the ``command`` of a terminal tool its
shell signature, the file argument of a file tool its file; a project rule the agent
fetched (``fetch_rules`` ``rule_names``), one the person attached (``context.cursorRules``)
or a ``.cursor/rules/<name>.mdc`` / ``SKILL.md`` it read is a skill used. A chat listed in
another's ``subagentComposerIds`` is a subagent of it; a chat with no prompt (a draft never
sent) is no session. Bad JSON in a value is counted (``invalid_json``), a NULL value
(``null_value``), a row whose key is NULL (``null_key``), never fatal. A ``toolFormerData``
without a tool name or arguments (most replies carry an empty one) is no tool call.
"""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any, BinaryIO, TypeGuard
from urllib.parse import unquote, urlparse

import orjson

from skillopt_core.replay import is_replay_path
from sleep import paths
from sleep.harvest.reader import ParseContext, ParseStats, loads_lenient
from sleep.harvest.sources import ParseResult, SourceFile, as_dict, as_list, scan_dir
from sleep.harvest.sources.actions import TurnActions
from sleep.harvest.sources.copilot_vscode import workspace_folder
from sleep.harvest.sources.sqlite_ro import as_bytes, connect_read_only, row_path, tables
from sleep.jsonshape import as_str
from sleep.sessions import Session, iso_utc

HOST = "cursor-ide"
DB = "state.vscdb"
KIND_GLOBAL = "composer"
KIND_WORKSPACE = "workspace-composer"
KIND_CHAT_TAB = "chat-tab"
CHAT_KEY = "workbench.panel.aichat.view.aichat.chatdata"
MAX_VALUE_BYTES = 64 << 20
_COMPOSER = "composerData:"
# Newer workspace databases name their chats only in these lists (no ``allComposers``).
_ID_LISTS = ("selectedComposerIds", "lastFocusedComposerIds", "pinnedComposerIds", "openComposerIds")
_ROWID = "\x00rowid"  # where a bubble's row order is kept while a chat is built (no JSON key can clash)
_SHELL_TOOLS = frozenset({"run_terminal_cmd", "run_terminal_command", "run_terminal_command_v2", "Shell", "shell"})
_PATH_KEYS = ("target_file", "targetFile", "relativeWorkspacePath", "relative_workspace_path", "file_path",
              "filePath", "path", "target_directory")
_RULE_RX = re.compile(r"\.cursor[\\/]+rules[\\/]+(?:[^\\/]+[\\/]+)*([A-Za-z0-9][A-Za-z0-9._\-]{0,99})\.mdc$")
# One pass over the composer rows: key, stored size, and the few fields a listing needs.
_LIST_SQL = ("SELECT key, length(CAST(value AS BLOB)), CASE WHEN json_valid(CAST(value AS TEXT)) THEN "
             "json_extract(CAST(value AS TEXT), '$.lastUpdatedAt', '$.createdAt', '$.workspaceIdentifier', "
             "'$.subagentComposerIds') END "
             "FROM cursorDiskKV WHERE key >= 'composerData:' AND key < 'composerData;'")


def user_dirs() -> list[Path]:
    """Every Cursor ``User`` folder here (:func:`sleep.paths.cursor_user_dirs`)."""
    return paths.cursor_user_dirs()


def _folder_of_uri(uri: Any) -> str | None:
    if isinstance(uri, dict):
        for key in ("fsPath", "path"):
            if isinstance(uri.get(key), str) and uri[key]:
                return _folder_of_uri(uri[key]) if uri[key].startswith("file:") else uri[key]
        if isinstance(uri.get("external"), str):
            return _folder_of_uri(uri["external"])
        return None
    if not isinstance(uri, str) or not uri:
        return None
    if uri.startswith("file:"):
        local = unquote(urlparse(uri).path)
        if len(local) >= 3 and local[0] == "/" and local[2] == ":":
            local = local[1:]
        return local or None
    return uri


class _Workspaces:
    """The workspace folders of one ``User`` folder: hash -> folder, composerId -> hash, and
    the chats older versions kept whole in a workspace database."""

    def __init__(self) -> None:
        self.folder: dict[str, str | None] = {}
        self.of_composer: dict[str, str] = {}
        self.direct: dict[str, str] = {}  # composerId -> folder, from a header's workspaceIdentifier.uri
        self.inline: dict[str, tuple[str, str, int, int]] = {}  # composerId -> (db, hash, size, ms)
        self.tabs: dict[str, tuple[str, str, int, int]] = {}  # legacy chat tabId -> (db, hash, size, ms)

    def project(self, cid: str, ident: Any) -> str | None:
        if isinstance(ident, dict):
            direct = _folder_of_uri(ident.get("uri")) or _folder_of_uri(ident.get("configPath"))
            if direct:
                return direct
            if isinstance(ident.get("id"), str) and self.folder.get(ident["id"]):
                return self.folder[ident["id"]]
        if cid in self.direct:
            return self.direct[cid]
        ws = self.of_composer.get(cid)
        return self.folder.get(ws) if ws else None


def _json(value: Any, stats: ParseStats, where: str) -> Any:
    """A stored JSON value, or None (counted ``invalid_json``)."""
    data = as_bytes(value)
    if data is None:
        return None
    try:
        return loads_lenient(data)
    except orjson.JSONDecodeError:
        stats.skip_line("invalid_json", where)
        return None


def _ms(value: Any) -> int:
    return int(value) if isinstance(value, (int, float)) and not isinstance(value, bool) and value > 0 else 0


def _headers(value: Any) -> list[dict[str, Any]]:
    """Chat headers from ``composer.composerHeaders`` / ``composer.composerData`` (a list, or
    ``{allComposers: [...]}``)."""
    if isinstance(value, dict):
        value = value.get("allComposers")
    return [h for h in value if isinstance(h, dict) and isinstance(h.get("composerId"), str)] \
        if isinstance(value, list) else []


class CursorIdeSource:
    name = HOST

    def __init__(self, user_dirs: list[Path] | None = None) -> None:
        self._user_dirs = user_dirs

    def discover(self, stats: ParseStats) -> Iterator[SourceFile]:
        for user in self._user_dirs if self._user_dirs is not None else user_dirs():
            yield from self._discover_user(Path(user), stats)

    def _discover_user(self, user: Path, stats: ParseStats) -> Iterator[SourceFile]:
        ws = self._workspaces(user, stats)
        glob = user / "globalStorage" / DB
        listed: set[str] = set()
        if glob.is_file():
            for file in self._list_global(str(glob), ws, stats):
                listed.add(file.session_id or "")
                yield file
        for cid, (db, wsh, size, ms) in sorted(ws.inline.items()):
            if cid not in listed:
                yield SourceFile(row_path(db, cid), HOST, KIND_WORKSPACE, incremental=False, session_id=cid,
                                 project_dir=ws.folder.get(wsh), container=db, version=(max(1, size), ms * 10**6))
        for tab, (db, wsh, size, ms) in sorted(ws.tabs.items()):
            yield SourceFile(row_path(db, f"chat:{tab}"), HOST, KIND_CHAT_TAB, incremental=False, session_id=tab,
                             project_dir=ws.folder.get(wsh), container=db, version=(max(1, size), ms * 10**6))

    def _workspaces(self, user: Path, stats: ParseStats) -> _Workspaces:
        ws = _Workspaces()
        named: dict[str, set[str]] = {}  # composerId -> the workspaces whose id lists name it
        for entry in sorted(scan_dir(user / "workspaceStorage", stats), key=lambda e: e.name):
            folder = Path(entry.path)
            ws.folder[entry.name] = workspace_folder(folder / "workspace.json")
            db = folder / DB
            if not db.is_file():
                continue
            try:
                conn = connect_read_only(str(db))
                try:
                    has = "ItemTable" in tables(conn)
                    row = conn.execute("SELECT value FROM ItemTable WHERE key = 'composer.composerData'").fetchone() \
                        if has else None
                    chat = conn.execute("SELECT value FROM ItemTable WHERE key = ?", (CHAT_KEY,)).fetchone() \
                        if has else None
                finally:
                    conn.close()
            except sqlite3.Error:
                stats.skip_file("unreadable_sqlite", str(db))
                continue
            if chat:
                self._chat_tabs(_json(chat[0], stats, f"{db}#{CHAT_KEY}"), str(db), entry.name, ws)
            if not row:
                continue
            data = _json(row[0], stats, f"{db}#composer.composerData")
            for key in _ID_LISTS if isinstance(data, dict) else ():
                for cid in as_list(data.get(key)):
                    if isinstance(cid, str) and cid:
                        named.setdefault(cid, set()).add(entry.name)
            for head in _headers(data):
                cid = head["composerId"]
                ws.of_composer.setdefault(cid, entry.name)
                if isinstance(head.get("conversation"), list) and head["conversation"]:
                    size = len(orjson.dumps(head))
                    when = _ms(head.get("lastUpdatedAt")) or _ms(head.get("createdAt"))
                    ws.inline[cid] = (str(db), entry.name, size, when)
        for cid, where in named.items():
            if len(where) == 1:  # named by two workspaces: no guess
                ws.of_composer.setdefault(cid, next(iter(where)))
        return ws

    @staticmethod
    def _chat_tabs(doc: Any, db: str, wsh: str, ws: _Workspaces) -> None:
        """The tabs of the chat panel older versions had before the composer (``tabs[]`` with
        ``tabId``, ``lastSendTime`` and ``bubbles`` of ``type`` ``user`` / ``ai``)."""
        for tab in as_list(as_dict(doc).get("tabs")):
            if isinstance(tab, dict) and isinstance(tab.get("tabId"), str) and isinstance(tab.get("bubbles"), list) \
                    and any(isinstance(b, dict) and b.get("type") == "user" and _tab_text(b) for b in tab["bubbles"]):
                ws.tabs[tab["tabId"]] = (db, wsh, len(orjson.dumps(tab)), _ms(tab.get("lastSendTime")))

    def _list_global(self, db: str, ws: _Workspaces, stats: ParseStats) -> list[SourceFile]:
        try:
            conn = connect_read_only(db)
            try:
                names = tables(conn)
                if "cursorDiskKV" not in names:
                    return []  # a state database without chats (VS Code's own shape)
                self._global_headers(conn, names, ws, stats, db)
                rows = conn.execute(_LIST_SQL).fetchall()
                null_keys = conn.execute("SELECT count(*) FROM cursorDiskKV WHERE key IS NULL").fetchone()[0]
            finally:
                conn.close()
        except sqlite3.Error:
            stats.skip_file("unreadable_sqlite", db)
            return []
        for _ in range(int(null_keys or 0)):  # a row no chat can name (genuine databases hold one)
            stats.skip_line("null_key", f"{db}#cursorDiskKV")
        listed = []
        parent_of: dict[str, str] = {}
        for key, size, fields in rows:
            cid = key[len(_COMPOSER):] if isinstance(key, str) else ""
            if not cid:
                continue
            updated, created, ident, children = 0, 0, None, None
            if fields is not None:  # else not JSON (or NULL): parse counts it and skips the chat
                try:
                    updated, created, ident, children = orjson.loads(fields)
                except (orjson.JSONDecodeError, ValueError, TypeError):
                    pass
            for child in children if isinstance(children, list) else []:
                if isinstance(child, str):
                    parent_of.setdefault(child, cid)
            listed.append((cid, int(size or 0), _ms(updated) or _ms(created), ident))
        return [SourceFile(row_path(db, cid), HOST, KIND_GLOBAL, incremental=False, session_id=cid,
                           parent_session_id=parent_of.get(cid), project_dir=ws.project(cid, ident), container=db,
                           version=(max(1, size), ms * 10**6)) for cid, size, ms, ident in listed]

    def _global_headers(self, conn: sqlite3.Connection, names: set[str], ws: _Workspaces, stats: ParseStats,
                        db: str) -> None:
        """composerId -> workspace hash from the global chat headers newer versions keep."""
        if "composerHeaders" in names:
            try:
                for cid, wsid in conn.execute("SELECT composerId, workspaceId FROM composerHeaders"):
                    if isinstance(cid, str) and isinstance(wsid, str):
                        ws.of_composer.setdefault(cid, wsid)
            except sqlite3.Error:
                pass  # another shape of that table: the other places still name the workspace
        if "ItemTable" in names:
            row = conn.execute("SELECT value FROM ItemTable WHERE key = 'composer.composerHeaders'").fetchone()
            for head in _headers(_json(row[0], stats, f"{db}#composer.composerHeaders") if row else None):
                ident = head.get("workspaceIdentifier")
                if not isinstance(ident, dict):
                    continue
                folder = _folder_of_uri(ident.get("uri"))
                if folder:
                    ws.direct.setdefault(head["composerId"], folder)
                if isinstance(ident.get("id"), str):
                    ws.of_composer.setdefault(head["composerId"], ident["id"])

    def scope_hint(self, file: SourceFile, project: str) -> bool | None:
        return None

    def project_of(self, file: SourceFile, ctx: ParseContext) -> str | None:
        return file.project_dir

    # ----- one chat ------------------------------------------------------------------------

    def parse(self, file: SourceFile, f: BinaryIO | None, start: int, prior: Session | None,
              ctx: ParseContext) -> ParseResult:
        db, cid = file.container or "", file.session_id or ""
        bubbles: dict[str, dict[str, Any]]
        try:
            conn = connect_read_only(db)
            try:
                if file.kind == KIND_WORKSPACE:
                    composer, bubbles = self._workspace_chat(conn, cid, db, ctx), {}
                elif file.kind == KIND_CHAT_TAB:
                    composer, bubbles = self._chat_tab(conn, cid, db, ctx), {}
                else:
                    composer, bubbles = self._global_chat(conn, cid, db, ctx)
            finally:
                conn.close()
        except sqlite3.Error:
            ctx.stats.skip_file("unreadable_sqlite", file.path)
            return ParseResult(None, file_skip_reason="unreadable_sqlite")
        if composer is None:
            return ParseResult(None, file_skip_reason="unusable")
        return build_session(composer, bubbles, file, ctx)

    def _global_chat(self, conn: sqlite3.Connection, cid: str, db: str,
                     ctx: ParseContext) -> tuple[dict[str, Any] | None, dict[str, dict[str, Any]]]:
        row = conn.execute("SELECT value FROM cursorDiskKV WHERE key = ?", (_COMPOSER + cid,)).fetchone()
        composer = self._value(row[0] if row else None, f"{db}#{_COMPOSER}{cid}", ctx)
        if composer is None:
            return None, {}
        prefix = f"bubbleId:{cid}:"
        bubbles: dict[str, dict[str, Any]] = {}
        # A key range, not LIKE: it uses the key's index and '_' in an id is no wildcard.
        for rowid, key, value in conn.execute("SELECT rowid, key, value FROM cursorDiskKV WHERE key >= ? AND key < ?",
                                              (prefix, f"bubbleId:{cid};")):
            bubble = self._value(value, f"{db}#{key}", ctx)
            if bubble is not None:
                bubble[_ROWID] = rowid
                bubbles[key[len(prefix):]] = bubble
        return composer, bubbles

    def _workspace_chat(self, conn: sqlite3.Connection, cid: str, db: str,
                        ctx: ParseContext) -> dict[str, Any] | None:
        row = conn.execute("SELECT value FROM ItemTable WHERE key = 'composer.composerData'").fetchone()
        data = self._value(row[0] if row else None, f"{db}#composer.composerData", ctx)
        for head in _headers(data):
            if head["composerId"] == cid:
                return head
        return None

    def _chat_tab(self, conn: sqlite3.Connection, tab_id: str, db: str, ctx: ParseContext) -> dict[str, Any] | None:
        """A legacy chat tab in the composer's shape (``user`` bubbles type 1, ``ai`` type 2)."""
        row = conn.execute("SELECT value FROM ItemTable WHERE key = ?", (CHAT_KEY,)).fetchone()
        doc = self._value(row[0] if row else None, f"{db}#{CHAT_KEY}", ctx)
        tabs = doc.get("tabs") if isinstance(doc, dict) else None
        for tab in tabs if isinstance(tabs, list) else []:
            if isinstance(tab, dict) and tab.get("tabId") == tab_id:
                bubbles = [b for b in tab.get("bubbles") or [] if isinstance(b, dict)]
                return {"composerId": tab_id, "lastUpdatedAt": tab.get("lastSendTime"),
                        "conversation": [{**b, "type": 1 if b.get("type") == "user" else 2,
                                          "text": _tab_text(b) if b.get("type") == "user" else b.get("text"),
                                          "modelInfo": {"modelName": b.get("modelType")}} for b in bubbles]}
        return None

    def _value(self, value: Any, where: str, ctx: ParseContext) -> dict[str, Any] | None:
        data = as_bytes(value)
        if data is None:  # SQL NULL: real databases hold some (chats and bubbles)
            ctx.stats.skip_line("null_value", where)
            return None
        ctx.stats.bytes_read += len(data)
        if len(data) > MAX_VALUE_BYTES:
            ctx.stats.skip_line("value_too_large", where)
            return None
        doc = ctx.loads(data, where)
        if doc is not None:
            ctx.stats.kept()
        return doc


def _tab_text(bubble: dict[str, Any]) -> str:
    """What the person typed in a chat-panel bubble: ``text``, or (the 2023 panel, whose
    ``text`` stays empty) the editor delegate's ``delegate.a``. The empty bubble that ends
    every tab is the input box's draft, not a prompt."""
    text = as_str(bubble.get("text"))
    delegate = bubble.get("delegate")
    if not text.strip() and isinstance(delegate, str) and delegate.lstrip().startswith("{"):
        try:  # kept serialised (not seen in genuine files; read if a version does)
            delegate = loads_lenient(delegate.encode("utf-8", "surrogatepass"))
        except orjson.JSONDecodeError:
            delegate = None
    if not text.strip() and isinstance(delegate, dict) and isinstance(delegate.get("a"), str):
        text = delegate["a"]
    return text.strip()


def _conversation(composer: dict[str, Any], bubbles: dict[str, dict[str, Any]]) -> list[dict[str, Any]]:
    """The chat's messages in order: the headers' bubbles (split storage), else the inline list.

    Some versions list only the prompts and final answers in the headers and keep the
    agent's tool-call bubbles beside them unlisted (a genuine Cursor database of 2025-09,
    AdamEps/urpg_app state.vscdb: 12 of 13 unlisted bubbles were tool calls, stored between
    the turn's prompt and its answer). An unlisted agent bubble is taken for its tool call
    only, placed by its row order before the first listed bubble stored after it; an unlisted
    bubble of the person (a prompt edited away) is not a prompt."""
    headers = composer.get("fullConversationHeadersOnly")
    if isinstance(headers, list) and headers:
        listed: list[dict[str, Any]] = []
        seen: set[str] = set()
        for h in headers:
            if isinstance(h, dict) and isinstance(h.get("bubbleId"), str) and h["bubbleId"] in bubbles:
                b = bubbles[h["bubbleId"]]
                if "type" not in b and "type" in h:
                    b = {**b, "type": h["type"]}
                listed.append(b)
                seen.add(h["bubbleId"])
        extra = sorted((b for bid, b in bubbles.items() if bid not in seen and b.get("type") != 1
                        and _is_tool_call(b.get("toolFormerData"))), key=lambda b: b.get(_ROWID, 0))
        out, i = [], 0
        for b in listed:
            while i < len(extra) and extra[i].get(_ROWID, 0) < b.get(_ROWID, 0):
                out.append({"type": 2, "toolFormerData": extra[i]["toolFormerData"]})
                i += 1
            out.append(b)
        out.extend({"type": 2, "toolFormerData": b["toolFormerData"]} for b in extra[i:])
        return out
    inline = composer.get("conversation")
    return [b for b in inline if isinstance(b, dict)] if isinstance(inline, list) else []


def _bubble_time(b: dict[str, Any]) -> str | None:
    """A bubble's ISO ``createdAt``, else when its request was sent (``timingInfo``, ms; older
    bubbles have only that; ``clientStartTime`` is an offset, not a time)."""
    at = _time(b.get("createdAt"))
    timing = b.get("timingInfo")
    if at is None and isinstance(timing, dict):
        at = _time(timing.get("clientRpcSendTime")) or _time(timing.get("clientEndTime"))
    return at


def _time(value: Any) -> str | None:
    if isinstance(value, str) and value:
        return iso_utc(value) if not value.isdigit() else iso_utc(int(value))
    return iso_utc(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def _model(value: Any) -> str | None:
    name = value.get("modelName") if isinstance(value, dict) else None
    return name if isinstance(name, str) and name and name != "default" else None


def build_session(composer: dict[str, Any], bubbles: dict[str, dict[str, Any]], file: SourceFile,
                  ctx: ParseContext) -> ParseResult:
    """One chat as a Session (see the module docstring), or a replay / nothing."""
    cid = composer.get("composerId") if isinstance(composer.get("composerId"), str) else file.session_id
    s = Session(host=HOST, session_id=cid or file.path, project_dir=file.project_dir, source_path=file.path)
    if file.parent_session_id:
        s.is_subagent, s.parent_session_id = True, file.parent_session_id
    s.note_time(_time(composer.get("createdAt")))
    s.note_time(_time(composer.get("lastUpdatedAt")))
    s.note_model(_model(composer.get("modelConfig")))
    if is_replay_path(s.project_dir):
        return ParseResult(None, replay=True)
    _rules(s, (composer.get("context") or {}).get("cursorRules") if isinstance(composer.get("context"), dict) else None)
    actions = TurnActions(s, ctx)
    for b in _conversation(composer, bubbles):
        at = _bubble_time(b)
        s.note_time(at)
        s.note_model(_model(b.get("modelInfo")))
        text = as_str(b.get("text"))
        if b.get("type") == 1:
            _rules(s, b.get("cursorRules"))
            if isinstance(b.get("context"), dict):
                _rules(s, b["context"].get("cursorRules"))
            if not text.strip():
                continue
            if not actions.prompt(text.strip(), at):
                return ParseResult(None, replay=True)
            continue
        tool = b.get("toolFormerData")
        if _is_tool_call(tool):
            _tool(s, actions, tool, ctx)
            actions.answered = True
        actions.answer(text.strip())
    return ParseResult(s if s.prompts else None)  # an empty chat (a draft never sent) is no session


def _is_tool_call(tool: Any) -> TypeGuard[dict[str, Any]]:
    """A ``toolFormerData`` that records a call: a tool name or arguments. Most replies carry an
    empty one (``{}``, or only ``additionalData``), which is no call."""
    if not isinstance(tool, dict):
        return False
    name = tool.get("name")
    return bool(isinstance(name, str) and name) or any(tool.get(k) not in (None, "", {}, "{}")
                                                        for k in ("params", "rawArgs"))


def _args(tool: dict[str, Any], ctx: ParseContext) -> dict[str, Any]:
    for key in ("params", "rawArgs"):
        value = tool.get(key)
        if isinstance(value, dict) and value:
            return value
        if isinstance(value, str) and value.strip().startswith("{"):
            try:
                doc = loads_lenient(value.encode("utf-8", "surrogatepass"))
            except orjson.JSONDecodeError:
                ctx.stats.actions["tool_args_invalid_json"] += 1
                continue
            if isinstance(doc, dict) and doc:
                return doc
    return {}


def _rule_name(value: Any) -> str | None:
    if isinstance(value, dict):
        value = next((value[k] for k in ("name", "filename", "relativePath", "path", "fsPath")
                      if isinstance(value.get(k), str)), None)
    if not isinstance(value, str) or not value.strip():
        return None
    m = _RULE_RX.search(value.strip())
    if m:
        return m.group(1)
    base = value.strip().replace("\\", "/").rsplit("/", 1)[-1]
    base = base[:-4] if base.endswith(".mdc") else base
    return base if re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._\-]{0,99}", base) else None


def _rules(s: Session, value: Any) -> None:
    for item in value if isinstance(value, list) else []:
        s.add_skill(_rule_name(item))


def _tool(s: Session, actions: TurnActions, tool: dict[str, Any], ctx: ParseContext) -> None:
    name = tool.get("name") if isinstance(tool.get("name"), str) and tool["name"] else None
    s.add_tool(name)
    args = _args(tool, ctx)
    if name == "fetch_rules":
        names = args.get("rule_names") or args.get("ruleNames")
        _rules(s, names if isinstance(names, list) else [])
        return
    command = args.get("command")
    if name in _SHELL_TOOLS or (name is None and isinstance(command, str)):
        actions.shell(command)
        return
    for key in _PATH_KEYS:
        value = args.get(key)
        if isinstance(value, str) and value:
            actions.skills_named(value)
            if _RULE_RX.search(value):
                s.add_skill(_rule_name(value))
            actions.path(value)
            break

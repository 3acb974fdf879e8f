"""The mined tasks over MCP: ``list_tasks`` and ``set_task_enabled``, calling
the miner's store (the library ``skillopt-sleep tasks`` uses) in a worker thread."""

from __future__ import annotations

from typing import Annotated, Any

import anyio
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from pydantic import BaseModel, Field

from sleep import paths
from sleep.mcp import guards
from sleep.mcp.guards import ServerConfig
from sleep.mcp.review import READ_ONLY
from sleep.mcp.tools_train import CHANGES_LOCAL_STATE

TASK_ID = r"^t[0-9a-f]{11}$"


class TaskRow(BaseModel):
    id: str
    project: str
    intent: str
    support: int = Field(description="distinct sessions the task was seen in")
    hosts: list[str]
    first_seen: str | None = None
    last_seen: str | None = None
    enabled: bool
    judge: str = Field(description="the judge in one line")


class TaskList(BaseModel):
    tasks: list[TaskRow]
    note: str = ""


class TaskChange(BaseModel):
    task_id: str
    enabled: bool
    changed: list[str]


def _rows(scopes: list[str | None]) -> list[TaskRow]:
    from sleep.index import Index
    from sleep.mine.store import load_tasks

    if not paths.index_path().exists():
        return []
    rows: dict[str, TaskRow] = {}
    with Index.open() as index:
        for scope in scopes:
            for t in load_tasks(index.conn, scope, with_members=False):
                rows[t.id] = TaskRow(id=t.id, project=t.project, intent=t.intent, support=t.support, hosts=t.hosts,
                                     first_seen=t.first_seen, last_seen=t.last_seen, enabled=t.enabled,
                                     judge=t.judge_summary)
    return sorted(rows.values(), key=lambda r: (r.project, -r.support, r.id))


def _set(config: ServerConfig, task_id: str, enabled: bool) -> TaskChange:
    from sleep.index import Index
    from sleep.mine.store import get_task, set_enabled

    if not paths.index_path().exists():
        raise ToolError("no index yet: run sleep_harvest, then mine a project with `skillopt-sleep mine`.")
    with Index.open() as index:
        task = get_task(index.conn, task_id)
        if task is None:
            raise ToolError(f"no task {task_id!r}; list_tasks shows the ids.")
        if not guards.in_scope(config, task.project):
            raise guards.out_of_scope(config, f"task {task_id}", task.project)
        if task.enabled == enabled:
            return TaskChange(task_id=task_id, enabled=enabled, changed=[])
        with index.transaction():
            set_enabled(index.conn, task_id, enabled)
    verb = "enabled (it is replayed again)" if enabled else "disabled (nights no longer replay it)"
    return TaskChange(task_id=task_id, enabled=enabled, changed=[f"task {task_id} ({task.intent}) {verb}"])


async def list_tasks(ctx: Context, project: Annotated[str | None, Field(
        description="only this project's tasks (default: the configured projects, else every project)")] = None,
                     ) -> TaskList:
    """The recurring tasks mined from your sessions: intent, support, hosts, when seen, the judge,
    and whether nights replay them."""
    config = guards.server_config(ctx)
    scope = guards.project(config, project, required=False) if project else None
    scopes: list[Any] = [str(scope)] if scope else ([str(p) for p in config.projects] or [None])
    tasks = await anyio.to_thread.run_sync(_rows, scopes)
    note = "" if tasks else "no mined tasks yet: run sleep_harvest, then `skillopt-sleep mine` in the project."
    return TaskList(tasks=tasks, note=note)


async def set_task_enabled(ctx: Context,
                           task_id: Annotated[str, Field(pattern=TASK_ID, description="a task id from list_tasks")],
                           enabled: bool) -> TaskChange:
    """Enable or disable one mined task: nights replay only enabled tasks. Undo with the opposite call."""
    config = guards.server_config(ctx)
    return await anyio.to_thread.run_sync(_set, config, task_id, enabled)


TOOLS = (
    (list_tasks, READ_ONLY),
    (set_task_enabled, CHANGES_LOCAL_STATE),
)


def register(app: MCPServer) -> None:
    guards.register_tools(app, TOOLS)

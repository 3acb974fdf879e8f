"""The MCP tools are module-level functions that read the server's configuration from the lifespan
context: each can be called alone with a context that carries a ServerConfig (no server, no client),
and the host choice of ``sleep_harvest`` is built in one place when the server is built."""

from __future__ import annotations

import asyncio
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
import toy_host
from mcp.server.mcpserver.exceptions import ToolError

from sleep import hosts
from sleep.mcp import guards, review, tools_sleep, tools_tasks, tools_train
from sleep.mcp.guards import ServerConfig


def context(config: Any) -> Any:
    """What a tool reads of its Context: the request's lifespan context."""
    return SimpleNamespace(request_context=SimpleNamespace(lifespan_context=config))


def test_a_tool_called_alone_reads_the_configuration_from_the_context(tmp_path: Path) -> None:
    outputs = tmp_path / "runs"
    (outputs / "jsonl_tasks" / "r1").mkdir(parents=True)
    (outputs / "jsonl_tasks" / "r1" / "config.yaml").write_text("env: {name: jsonl_tasks}\n")
    (outputs / "jsonl_tasks" / "r1" / "summary.json").write_text('{"status": "completed", "steps_done": 2}\n')
    config = ServerConfig(cwd=tmp_path, outputs=(outputs,))
    found = asyncio.run(tools_train.list_runs(context(config)))
    assert found.roots == [str(outputs)]
    assert [r.run_id for r in found.runs] == ["r1"]
    other = asyncio.run(tools_train.list_runs(context(ServerConfig(cwd=tmp_path, outputs=(tmp_path / "none",)))))
    assert other.runs == []


def test_a_job_id_outside_the_servers_folders_is_refused_alone(tmp_path: Path) -> None:
    with pytest.raises(ToolError, match="job_status without an id lists its jobs|no job"):
        asyncio.run(tools_train.job_status(context(ServerConfig(cwd=tmp_path)), job_id="20260101-000000-abcdef"))


def test_list_tasks_alone_on_an_empty_data_directory(tmp_path: Path) -> None:
    listed = asyncio.run(tools_tasks.list_tasks(context(ServerConfig(cwd=tmp_path))))
    assert listed.tasks == [] and "no mined tasks yet" in listed.note


def test_a_context_without_the_configuration_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(ToolError, match="without its configuration"):
        asyncio.run(review.list_proposals(context(None)))


def test_every_tool_is_a_module_level_function_taking_the_context() -> None:
    for module in (tools_train, tools_sleep, tools_tasks, review):
        for fn, _ in module.TOOLS:
            assert fn.__module__ == module.__name__ and "<locals>" not in fn.__qualname__, fn
            assert next(iter(fn.__annotations__)) == "ctx", fn.__name__
    assert not hasattr(tools_sleep, "SourceChoice")  # no module global rebound at call time


def test_the_host_choice_and_the_harvest_description_follow_the_registered_hosts() -> None:
    from sleep.mcp.server import build_server

    before = asyncio.run(build_server(ServerConfig(cwd=Path("/"))).list_tools())
    hosts.register(toy_host.HOST)
    try:
        tools = asyncio.run(build_server(ServerConfig(cwd=Path("/"))).list_tools())
    finally:
        hosts.unregister(toy_host.HOST.name)
    (old,) = [t for t in before if t.name == "sleep_harvest"]
    (harvest,) = [t for t in tools if t.name == "sleep_harvest"]
    assert "toy" not in old.input_schema["properties"]["source"]["enum"]
    assert harvest.input_schema["properties"]["source"]["enum"] == ["all", *(h.name for h in hosts.all_hosts()),
                                                                    "toy"]
    labels = [h.label for h in hosts.all_hosts()]
    assert len(labels) >= 6 and all(label in old.description for label in labels), old.description
    assert "Toy agent" in harvest.description


def test_the_lifespan_yields_the_configuration(tmp_path: Path) -> None:
    config = ServerConfig(cwd=tmp_path)

    async def held() -> ServerConfig:
        async with guards.lifespan(config)(None) as value:  # type: ignore[arg-type]
            return value

    assert asyncio.run(held()) is config

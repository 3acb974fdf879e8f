"""Start-up of the SkillOpt MCP server next to the bare SDK's floor, in one run.

For each server (ours: ``skillopt-sleep mcp`` as ``python -m sleep.cli mcp``;
the floor: a one-tool server on the bare ``mcp`` SDK), several times in turn:

- the time from process start to the ``initialize`` answer (stdio, raw JSON-RPC);
- the ``tools/list`` round trip;
- one read-only tool call round trip (ours: ``list_runs``; the floor: its tool).

Then 20 concurrent read-only calls on one connection of ours (the SDK client),
all of which must answer without error.

Targets (issue 11): our start ≤ the floor + 0.3 s; ``tools/list`` ≤ 50 ms.
Everything runs with a private, empty home in a temporary folder.

    python bench/mcp_startup.py [--repeat 5]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

FLOOR_SERVER = textwrap.dedent('''
    from mcp.server.mcpserver import MCPServer

    app = MCPServer("floor")

    @app.tool()
    def ping(text: str = "") -> str:
        """Answer at once."""
        return text

    app.run()
''')


def _send(proc: subprocess.Popen, message: dict) -> None:
    assert proc.stdin is not None
    proc.stdin.write(json.dumps(message) + "\n")
    proc.stdin.flush()


def _answer(proc: subprocess.Popen, request_id: int) -> dict:
    assert proc.stdout is not None
    while True:
        line = proc.stdout.readline()
        if not line:
            raise RuntimeError("the server closed stdout before answering")
        data = json.loads(line)
        if data.get("id") == request_id:
            if "error" in data:
                raise RuntimeError(f"request {request_id} failed: {data['error']}")
            return data


def measure(argv: list[str], env: dict[str, str], cwd: str, tool: str, args: dict) -> dict[str, float]:
    started = time.perf_counter()
    proc = subprocess.Popen(argv, cwd=cwd, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL, text=True)
    try:
        _send(proc, {"jsonrpc": "2.0", "id": 1, "method": "initialize",
                     "params": {"protocolVersion": "2025-11-25", "capabilities": {},
                                "clientInfo": {"name": "bench", "version": "0"}}})
        _answer(proc, 1)
        initialized = time.perf_counter()
        _send(proc, {"jsonrpc": "2.0", "method": "notifications/initialized"})
        _send(proc, {"jsonrpc": "2.0", "id": 2, "method": "tools/list"})
        _answer(proc, 2)
        listed = time.perf_counter()
        _send(proc, {"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": tool, "arguments": args}})
        result = _answer(proc, 3)["result"]
        called = time.perf_counter()
        if result.get("isError"):
            raise RuntimeError(f"{tool} failed: {result}")
    finally:
        if proc.stdin:
            proc.stdin.close()
        proc.wait(timeout=30)
    return {"start": initialized - started, "tools_list": listed - initialized, "tool_call": called - listed}


async def concurrent_reads(env: dict[str, str], cwd: str, n: int = 20) -> tuple[int, int, float]:
    import anyio
    from mcp.client.client import Client
    from mcp.client.stdio import StdioServerParameters

    ok = failed = 0
    params = StdioServerParameters(command=sys.executable, args=["-m", "sleep.cli", "mcp"], env=env, cwd=cwd)
    async with Client(params, mode="legacy") as client:
        started = time.perf_counter()

        async def one(i: int) -> None:
            nonlocal ok, failed
            name, args = [("list_runs", {}), ("job_status", {}), ("list_proposals", {}),
                          ("sleep_status", {})][i % 4]
            result = await client.call_tool(name, args)
            if result.is_error:
                failed += 1
            else:
                ok += 1

        async with anyio.create_task_group() as tg:
            for i in range(n):
                tg.start_soon(one, i)
        elapsed = time.perf_counter() - started
    return ok, failed, elapsed


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5, help="start-ups per server (default 5)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="mcp-bench-") as tmp:
        home = Path(tmp) / "home"
        home.mkdir()
        env = {**os.environ, "HOME": str(home), "SKILLOPT_HOME": str(home / ".skillopt"),
               "CLAUDE_CONFIG_DIR": str(home / ".claude"), "CODEX_HOME": str(home / ".codex"),
               "COPILOT_HOME": str(home / ".copilot")}
        floor_file = Path(tmp) / "floor_server.py"
        floor_file.write_text(FLOOR_SERVER)
        servers = {
            "bare SDK, one tool (floor)": ([sys.executable, str(floor_file)], "ping", {"text": "x"}),
            "skillopt-sleep mcp": ([sys.executable, "-m", "sleep.cli", "mcp"], "list_runs", {}),
        }
        runs: dict[str, list[dict[str, float]]] = {name: [] for name in servers}
        measure(servers["skillopt-sleep mcp"][0], env, tmp, "list_runs", {})  # warm the file cache once
        for _ in range(args.repeat):
            for name, (argv, tool, tool_args) in servers.items():  # interleaved: both see the same load
                runs[name].append(measure(argv, env, tmp, tool, tool_args))
        import anyio

        ok, failed, elapsed = anyio.run(concurrent_reads, env, tmp)
    print(f"MCP server start-up, median of {args.repeat} (min in brackets); private empty home")
    print(f"{'server':<30} {'start→initialize':>20} {'tools/list':>14} {'read-only call':>16}")
    medians = {}
    for name, samples in runs.items():
        cols = []
        for key in ("start", "tools_list", "tool_call"):
            values = [s[key] for s in samples]
            cols.append((statistics.median(values), min(values)))
        medians[name] = cols
        print(f"{name:<30} {cols[0][0] * 1000:>10.0f} ms ({cols[0][1] * 1000:>4.0f}) "
              f"{cols[1][0] * 1000:>6.1f} ms ({cols[1][1] * 1000:>4.1f}) "
              f"{cols[2][0] * 1000:>7.1f} ms ({cols[2][1] * 1000:>5.1f})")
    ours, floor = medians["skillopt-sleep mcp"], medians["bare SDK, one tool (floor)"]
    extra = ours[0][0] - floor[0][0]
    print(f"our start - floor: {extra * 1000:+.0f} ms (target ≤ +300 ms: {'met' if extra <= 0.3 else 'MISSED'})")
    print(f"our tools/list: {ours[1][0] * 1000:.1f} ms (target ≤ 50 ms: {'met' if ours[1][0] <= 0.05 else 'MISSED'})")
    print(f"20 concurrent read-only calls: {ok} answered, {failed} errors, {elapsed * 1000:.0f} ms in all "
          f"(target: all answered: {'met' if ok == 20 and not failed else 'MISSED'})")
    return 0 if extra <= 0.3 and ours[1][0] <= 0.05 and ok == 20 and not failed else 1


if __name__ == "__main__":
    raise SystemExit(main())

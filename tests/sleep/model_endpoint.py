"""A scripted model endpoint on loopback: the real agent CLIs talk to it as to their provider.

Tests point a real CLI at :class:`ModelEndpoint` the way a person points it at a
gateway (``ANTHROPIC_BASE_URL`` for Claude Code, a Codex ``[model_providers.x]
base_url`` with ``wire_api = "responses"``, an OpenCode provider ``baseURL``,
Gemini CLI's base URL) and the endpoint answers every model call from a
:data:`Plan` instead of a model: read the skill, run a command, write a file,
answer. It records every request (:attr:`ModelEndpoint.requests`) so a test can
assert on what the CLI really sent.

API::

    with ModelEndpoint(install_plan()) as ep:      # 127.0.0.1, a free port
        ep.url                                       # "http://127.0.0.1:PORT"
        ep.anthropic_env() / ep.openai_env()         # the variables that point a CLI here
        ep.codex_config("skillopt")                  # a config.toml text for a Codex custom provider
        ...run the CLI...
        ep.model_calls()                             # the recorded model requests (Recorded)
        ep.commands                                  # the commands the plan told the CLI to run

A plan is any callable ``plan(turn: Turn) -> Action`` (:func:`read`, :func:`run`,
:func:`write`, :func:`say`); the endpoint maps the action to whatever tool the
CLI offered in that request (``Bash``/``Read``/``Write`` for Claude Code,
``shell``/``exec_command``/``apply_patch`` for Codex, ``bash``/``read``/``write``
for OpenCode, ``run_shell_command``/``read_file``/``write_file`` for Gemini CLI),
taking the argument names from the tool's own input schema.

Wire formats (checked against the providers' documentation):

- Anthropic Messages API, ``POST /v1/messages`` (streaming and not) and
  ``POST /v1/messages/count_tokens``:
  https://docs.anthropic.com/en/api/messages,
  https://docs.anthropic.com/en/api/messages-streaming (``message_start``,
  ``content_block_start``, ``ping``, ``content_block_delta`` with ``text_delta`` /
  ``input_json_delta``, ``content_block_stop``, ``message_delta`` with
  ``stop_reason``, ``message_stop``; ``tool_use`` blocks start with ``input: {}``
  and carry their input as ``partial_json``),
  https://docs.anthropic.com/en/api/messages-count-tokens (``{"input_tokens": N}``).
  Claude Code's gateway requirements: https://code.claude.com/docs/en/llm-gateway
  (``ANTHROPIC_BASE_URL``, the ``/v1/messages`` and ``/v1/messages/count_tokens`` routes).
- OpenAI Responses API, ``POST /v1/responses`` with ``stream: true``:
  https://platform.openai.com/docs/api-reference/responses-streaming
  (``response.created``, ``response.in_progress``, ``response.output_item.added``,
  ``response.content_part.added``, ``response.output_text.delta``/``.done``,
  ``response.content_part.done``, ``response.function_call_arguments.delta``/``.done``,
  ``response.output_item.done``, ``response.completed`` with ``usage``); items
  ``message`` (``output_text`` parts), ``function_call`` {call_id, name, arguments} and,
  for Codex's free-form ``apply_patch`` tool, ``custom_tool_call`` {call_id, name, input}
  (https://platform.openai.com/docs/guides/function-calling, "Custom tools").
  Codex's custom providers: https://github.com/openai/codex/blob/main/docs/config.md
  (``model_providers``, ``base_url``, ``env_key``, ``wire_api``).
- OpenAI Chat Completions, ``POST /v1/chat/completions`` (``chat.completion.chunk``
  deltas with ``tool_calls`` [{index, id, type: function, function {name, arguments}}],
  ``finish_reason``, ``data: [DONE]``):
  https://platform.openai.com/docs/api-reference/chat-streaming.
- Gemini API ``POST /v1beta/models/{model}:generateContent`` and
  ``:streamGenerateContent?alt=sse`` (``candidates[].content.parts[]`` with ``text`` or
  ``functionCall`` {name, args}, ``finishReason``, ``usageMetadata``) and ``:countTokens``:
  https://ai.google.dev/api/generate-content, https://ai.google.dev/api/tokens.

Anything else is answered ``404`` with a JSON error and recorded (:meth:`unknown`),
so a test sees a route a new CLI version starts calling.
"""

from __future__ import annotations

import json
import re
import threading
import time
import uuid
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Callable, Iterator

# ---------------------------------------------------------------------------------------------- plans


@dataclass(frozen=True)
class Action:
    """What the scripted model does next: ``kind`` is read, run, write, call (a named tool) or say."""

    kind: str
    path: str = ""
    command: str = ""
    text: str = ""


def read(path: str) -> Action:
    return Action("read", path=path)


def run(command: str) -> Action:
    return Action("run", command=command)


def write(path: str, text: str) -> Action:
    return Action("write", path=path, text=text)


def say(text: str) -> Action:
    return Action("say", text=text)


def call(tool: str, **args: Any) -> Action:
    """Call the offered tool ``tool`` with ``args`` as they are (e.g. Claude Code's ``Skill`` tool:
    ``call("Skill", skill="skillopt:run-tests")``); answered as text when the CLI does not offer it."""
    return Action("call", text=json.dumps({"tool": tool, "args": args}))


@dataclass
class Turn:
    """One model call as the plan sees it, whatever the wire format."""

    api: str  # "anthropic" | "responses" | "chat" | "gemini"
    model: str
    system: str  # the system prompt / instructions
    user: list[str]  # the texts of the user's messages (not tool results), in order
    results: list[str]  # the tool results so far, in order
    tools: dict[str, dict]  # offered tool name -> its input JSON schema
    cwd: str | None  # the working directory the CLI told the model, when it did

    @property
    def step(self) -> int:
        """How many tool calls the model already made in this conversation."""
        return len(self.results)

    @property
    def said(self) -> str:
        """Everything the person and the tools said (the system prompt left out)."""
        return "\n".join(self.user + self.results)


Plan = Callable[[Turn], Action]

_SKILL_PATH = re.compile(r"[\w./~-]*skills/[\w.-]+/SKILL\.md")


def skill_path(turn: Turn) -> str | None:
    """The first ``.../skills/<name>/SKILL.md`` the conversation (or system prompt) names."""
    found = _SKILL_PATH.search(turn.said) or _SKILL_PATH.search(turn.system)
    return found.group(0) if found else None


def install_plan(skill: str | None = None, note: tuple[str, str] | None = ("NOTES.md", "installed\n"),
                 programs: tuple[str, str] = ("pnpm", "npm"), args: str = "install") -> Plan:
    """Read the skill (``skill``: its path relative to the working directory, or the first
    SKILL.md the conversation names), run ``<program> install`` (``programs[0]`` when the
    conversation so far names it — the skill's text, the prompt —, else ``programs[1]``),
    write ``note`` (path, text) unless None, answer. A tool result that says the command
    was refused or failed is answered as text too: the plan never retries."""

    def plan(turn: Turn) -> Action:
        steps: list[Callable[[], Action]] = []
        path = skill or skill_path(turn)
        if path:
            steps.append(lambda: read(path))
        steps.append(lambda: run(f"{programs[0] if programs[0] in turn.said else programs[1]} {args}"))
        if note:
            steps.append(lambda: write(*note))
        if turn.step < len(steps):
            return steps[turn.step]()
        return say(f"Done: {len(steps)} steps.")

    return plan


def script(*actions: Action) -> Plan:
    """The same actions in order, one per model call, then ``say("done")``."""
    return lambda turn: actions[turn.step] if turn.step < len(actions) else say("done")


# ------------------------------------------------------------------------------------ tool mapping

_RUN = ("Bash", "bash", "shell", "shell_command", "exec_command", "run_shell_command", "local_shell")
_READ = ("Read", "read", "read_file")
_WRITE = ("Write", "write", "write_file")
_PATCH = ("apply_patch",)
_PATH_KEYS = ("file_path", "filePath", "absolute_path", "path")


def _props(schema: dict) -> dict:
    return (schema or {}).get("properties") or {}


def _first(names: tuple[str, ...], tools: dict[str, dict]) -> str | None:
    return next((n for n in names if n in tools), None)


def _absolute(path: str, cwd: str | None) -> str:
    return path if path.startswith("/") or not cwd else f"{cwd.rstrip('/')}/{path}"


def _run_call(name: str, schema: dict, command: str, cwd: str | None) -> tuple[str, Any]:
    props = _props(schema)
    key = "command" if "command" in props or not props else "cmd" if "cmd" in props else next(iter(props))
    value: Any = command
    if (props.get(key) or {}).get("type") == "array":
        value = ["bash", "-c", command]
    args: dict[str, Any] = {key: value}
    if "description" in props:
        args["description"] = command
    if "workdir" in props and cwd:
        args["workdir"] = cwd
    return name, args


def tool_call(action: Action, turn: Turn) -> tuple[str, Any] | None:
    """(tool name, arguments) for ``action`` with the tools ``turn`` offers; None: answer as text.
    Arguments are a dict, or a str for a free-form (custom) tool such as Codex's apply_patch."""
    tools = turn.tools
    if action.kind == "call":
        spec = json.loads(action.text)
        return (spec["tool"], spec["args"]) if spec["tool"] in tools else None
    if action.kind == "run":
        name = _first(_RUN, tools)
        return _run_call(name, tools[name], action.command, turn.cwd) if name else None
    if action.kind == "read":
        name = _first(_READ, tools)
        if name:
            props = _props(tools[name])
            key = next((k for k in _PATH_KEYS if k in props), "file_path")
            return name, {key: _absolute(action.path, turn.cwd)}
        shell = _first(_RUN, tools)
        return _run_call(shell, tools[shell], f"cat {action.path}", turn.cwd) if shell else None
    if action.kind == "write":
        name = _first(_WRITE, tools)
        if name:
            props = _props(tools[name])
            key = next((k for k in _PATH_KEYS if k in props), "file_path")
            return name, {key: _absolute(action.path, turn.cwd), "content": action.text}
        patch = _first(_PATCH, tools)
        if patch:
            body = "".join(f"+{line}\n" for line in action.text.splitlines())
            text = f"*** Begin Patch\n*** Add File: {action.path}\n{body}*** End Patch\n"
            return patch, (text if tools[patch].get("_custom") else {"input": text})
        shell = _first(_RUN, tools)
        if shell:
            quoted = action.text.replace("'", "'\\''")
            return _run_call(shell, tools[shell], f"printf '%s' '{quoted}' > {action.path}", turn.cwd)
    return None


# ---------------------------------------------------------------------------------------- recording


@dataclass
class Recorded:
    """One request the endpoint received."""

    method: str
    path: str
    headers: dict[str, str]
    body: Any  # parsed JSON, else the raw text
    api: str | None = None  # the wire format answered (anthropic, responses, chat, gemini), or probe,
    # models, unauthorized (a wrong key: 401); None: an unknown route (404)
    answer: Action | None = None  # what the plan answered (model calls only)
    at: float = field(default_factory=time.time)


def _text_of(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(_text_of(c) for c in content)
    if isinstance(content, dict):
        for key in ("text", "output", "content"):
            if key in content:
                return _text_of(content[key])
    return ""


_CWD = (re.compile(r"<cwd>([^<]+)</cwd>"), re.compile(r"(?:Primary w|W)orking directory:\s*(\S+)"),
        re.compile(r"current working directory[^/\n]*?(/\S+?)[.`'\"]?\s"))


def _cwd(*texts: str) -> str | None:
    for text in texts:
        for pattern in _CWD:
            found = pattern.search(text)
            if found:
                return found.group(1).strip()
    return None


def anthropic_turn(body: dict) -> Turn:
    system = _text_of(body.get("system") or "")
    user, results = [], []
    for message in body.get("messages") or []:
        content = message.get("content")
        blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content or []
        for block in blocks:
            if block.get("type") == "tool_result":
                results.append(_text_of(block.get("content")))
            elif block.get("type") == "text" and message.get("role") == "user":
                user.append(block.get("text") or "")
            elif block.get("type") == "text" and message.get("role") == "system":  # Claude Code's skill listing
                system += "\n" + (block.get("text") or "")
    tools = {t["name"]: t.get("input_schema") or {} for t in body.get("tools") or [] if "name" in t}
    return Turn("anthropic", str(body.get("model") or ""), system, user, results, tools,
                _cwd(system, *user))


def responses_turn(body: dict) -> Turn:
    system = _text_of(body.get("instructions") or "")
    user, results = [], []
    items = body.get("input")
    for item in [{"role": "user", "content": items}] if isinstance(items, str) else items or []:
        kind = item.get("type", "message")
        if kind in ("function_call_output", "custom_tool_call_output", "local_shell_call_output"):
            results.append(_text_of(item.get("output")))
        elif kind == "message" and item.get("role") == "user":
            user.append(_text_of(item.get("content")))
        elif kind == "message" and item.get("role") in ("system", "developer"):
            system += "\n" + _text_of(item.get("content"))
    tools: dict[str, dict] = {}
    for t in body.get("tools") or []:
        if t.get("type") == "function" and "name" in t:
            tools[t["name"]] = t.get("parameters") or {}
        elif t.get("type") == "custom" and "name" in t:
            tools[t["name"]] = {"_custom": True}
        elif t.get("type") == "local_shell":
            tools["local_shell"] = {"_local_shell": True}
    return Turn("responses", str(body.get("model") or ""), system, user, results, tools, _cwd(system, *user))


def chat_turn(body: dict) -> Turn:
    system, user, results = "", [], []
    for message in body.get("messages") or []:
        role, text = message.get("role"), _text_of(message.get("content"))
        if role in ("system", "developer"):
            system += text + "\n"
        elif role == "tool":
            results.append(text)
        elif role == "user":
            user.append(text)
    tools = {t["function"]["name"]: t["function"].get("parameters") or {}
             for t in body.get("tools") or [] if isinstance(t.get("function"), dict) and "name" in t["function"]}
    return Turn("chat", str(body.get("model") or ""), system, user, results, tools, _cwd(system, *user))


def gemini_turn(body: dict, model: str) -> Turn:
    system = _text_of((body.get("systemInstruction") or body.get("system_instruction") or {}).get("parts") or [])
    user, results = [], []
    for content in body.get("contents") or []:
        for part in content.get("parts") or []:
            if "functionResponse" in part:
                results.append(json.dumps(part["functionResponse"].get("response")))
            elif "text" in part and content.get("role", "user") == "user":
                user.append(part["text"])
    tools: dict[str, dict] = {}
    for group in body.get("tools") or []:
        for decl in group.get("functionDeclarations") or group.get("function_declarations") or []:
            tools[decl["name"]] = decl.get("parameters") or decl.get("parametersJsonSchema") or {}
    return Turn("gemini", model, system, user, results, tools, _cwd(system, *user))


# ------------------------------------------------------------------------------------------- server


def _id(prefix: str) -> str:
    return f"{prefix}_{uuid.uuid4().hex[:24]}"


def _sse(event: str | None, data: Any) -> bytes:
    head = f"event: {event}\n" if event else ""
    return (head + "data: " + (data if isinstance(data, str) else json.dumps(data)) + "\n\n").encode()


class ModelEndpoint:
    """See the module docstring. ``plan``: what the model does (default :func:`install_plan`);
    ``key``: the API key it requires (None: any); ``fail``: an HTTP status every model call gets
    (a broken provider)."""

    def __init__(self, plan: Plan | None = None, *, host: str = "127.0.0.1", port: int = 0,
                 key: str | None = None, fail: int | None = None, model: str = "scripted-model") -> None:
        self.plan = plan or install_plan()
        self.key = key
        self.fail = fail
        self.model = model
        self.requests: list[Recorded] = []
        self._lock = threading.Lock()
        endpoint = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:  # quiet
                pass

            def do_GET(self) -> None:  # noqa: N802
                endpoint._handle(self, "GET")

            def do_POST(self) -> None:  # noqa: N802
                endpoint._handle(self, "POST")

            def do_HEAD(self) -> None:  # noqa: N802
                endpoint._handle(self, "HEAD")

        self._server = ThreadingHTTPServer((host, port), Handler)
        self._server.daemon_threads = True
        self.host, self.port = self._server.server_address[:2]
        self._thread: threading.Thread | None = None

    # ---- life
    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}"

    def start(self) -> "ModelEndpoint":
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()
        return self

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()

    def __enter__(self) -> "ModelEndpoint":
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.close()

    # ---- pointing CLIs here
    def anthropic_env(self, key: str = "sk-ant-scripted") -> dict[str, str]:
        """Claude Code (https://code.claude.com/docs/en/llm-gateway, .../settings#environment-variables)."""
        return {"ANTHROPIC_BASE_URL": self.url, "ANTHROPIC_API_KEY": key,
                "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1", "DISABLE_AUTOUPDATER": "1",
                "DISABLE_TELEMETRY": "1", "DISABLE_ERROR_REPORTING": "1"}

    def openai_env(self, key: str = "sk-scripted") -> dict[str, str]:
        return {"OPENAI_BASE_URL": f"{self.url}/v1", "OPENAI_API_KEY": key}

    def codex_config(self, provider: str = "scripted", env_key: str = "OPENAI_API_KEY", extra: str = "",
                     model: str = "gpt-5.5") -> str:
        """A Codex ``config.toml`` whose model provider is this endpoint (Responses wire API).
        ``model``: one whose metadata Codex ships (gpt-5.5 in 0.171), so it offers its
        ``apply_patch`` tool and reports ``file_change`` items; an unknown name makes Codex
        warn ("Model metadata ... not found") and write files through shell commands."""
        return (f'model = "{model}"\nmodel_provider = "{provider}"\n{extra}\n'
                f'[model_providers.{provider}]\nname = "Scripted endpoint"\nbase_url = "{self.url}/v1"\n'
                f'env_key = "{env_key}"\nwire_api = "responses"\nrequest_max_retries = 0\n'
                f'stream_max_retries = 0\n')

    # ---- what happened
    def model_calls(self, api: str | None = None) -> list[Recorded]:
        return [r for r in self.requests if r.answer is not None and (api is None or r.api == api)]

    def unknown(self) -> list[Recorded]:
        return [r for r in self.requests if r.api is None]

    @property
    def commands(self) -> list[str]:
        return [r.answer.command for r in self.model_calls() if r.answer and r.answer.kind == "run"]

    # ---- serving
    def _handle(self, h: BaseHTTPRequestHandler, method: str) -> None:
        length = int(h.headers.get("Content-Length") or 0)
        raw = h.rfile.read(length) if length else b""
        try:
            body: Any = json.loads(raw) if raw else None
        except ValueError:
            body = raw.decode("utf-8", "replace")
        record = Recorded(method, h.path, {k.lower(): v for k, v in h.headers.items()}, body)
        with self._lock:
            self.requests.append(record)
        path = h.path.split("?", 1)[0]
        if self.key and self.key not in (h.headers.get("x-api-key") or "") + (h.headers.get("authorization") or "") \
                + (h.headers.get("x-goog-api-key") or "") + h.path:
            record.api = "unauthorized"
            return self._json(h, 401, {"type": "error", "error": {"type": "authentication_error",
                                                                   "message": "invalid x-api-key"}})
        if method == "HEAD" or path in ("/", ""):
            record.api = "probe"
            return self._json(h, 200, {})
        if path.endswith("/models") and method == "GET":
            record.api = "models"
            return self._json(h, 200, {"object": "list", "data": [{"id": self.model, "object": "model",
                                                                   "type": "model", "display_name": self.model,
                                                                   "created": 0, "owned_by": "scripted"}]})
        if not isinstance(body, dict):
            body = {}
        if path.endswith("/messages/count_tokens"):
            record.api = "anthropic"
            return self._json(h, 200, {"input_tokens": max(1, len(json.dumps(body)) // 4)})
        gemini = re.search(r"/models/([^/:]+):(generateContent|streamGenerateContent|countTokens)$", path)
        if gemini and gemini.group(2) == "countTokens":
            record.api = "gemini"
            return self._json(h, 200, {"totalTokens": max(1, len(json.dumps(body)) // 4)})
        if path.endswith("/messages"):
            turn = anthropic_turn(body)
        elif path.endswith("/responses"):
            turn = responses_turn(body)
        elif path.endswith("/chat/completions"):
            turn = chat_turn(body)
        elif gemini:
            turn = gemini_turn(body, gemini.group(1))
        else:
            return self._json(h, 404, {"error": {"type": "not_found", "message": f"no route {method} {path}"}})
        record.api = turn.api
        if self.fail:
            record.answer = say("")
            return self._json(h, self.fail, {"type": "error", "error": {"type": "api_error",
                                                                         "message": "scripted failure"}})
        action = self.plan(turn)
        call = tool_call(action, turn) if action.kind != "say" else None
        if call is None and action.kind != "say":
            action = say(f"(no tool for {action.kind}: offered {', '.join(turn.tools) or 'none'})")
        record.answer = action
        stream = bool(body.get("stream")) or (gemini is not None and gemini.group(2) == "streamGenerateContent")
        writer = {"anthropic": self._anthropic, "responses": self._responses, "chat": self._chat,
                  "gemini": self._gemini}[turn.api]
        events = writer(turn, action, call, stream)
        if stream:
            h.send_response(200)
            h.send_header("Content-Type", "text/event-stream")
            h.send_header("Cache-Control", "no-cache")
            h.send_header("Connection", "close")
            h.end_headers()
            for chunk in events:
                h.wfile.write(chunk)
                h.wfile.flush()
            h.close_connection = True
        else:
            self._json(h, 200, next(iter(events)))

    @staticmethod
    def _json(h: BaseHTTPRequestHandler, status: int, obj: Any) -> None:
        data = json.dumps(obj).encode()
        h.send_response(status)
        h.send_header("Content-Type", "application/json")
        h.send_header("Content-Length", str(len(data)))
        if status >= 400:
            h.send_header("x-should-retry", "false")
        h.end_headers()
        if h.command != "HEAD":
            h.wfile.write(data)

    # ---- Anthropic Messages
    def _anthropic(self, turn: Turn, action: Action, call: tuple[str, Any] | None, stream: bool) -> Iterator[Any]:
        usage = {"input_tokens": 100, "output_tokens": 20, "cache_creation_input_tokens": 0,
                 "cache_read_input_tokens": 0}
        if call:
            block = {"type": "tool_use", "id": _id("toolu"), "name": call[0], "input": call[1]}
            stop = "tool_use"
        else:
            block = {"type": "text", "text": action.text}
            stop = "end_turn"
        message = {"id": _id("msg"), "type": "message", "role": "assistant", "model": turn.model or self.model,
                   "content": [block], "stop_reason": stop, "stop_sequence": None, "usage": usage}
        if not stream:
            yield message
            return
        yield _sse("message_start", {"type": "message_start",
                                     "message": {**message, "content": [], "stop_reason": None,
                                                 "usage": {**usage, "output_tokens": 1}}})
        if call:
            yield _sse("content_block_start", {"type": "content_block_start", "index": 0,
                                               "content_block": {**block, "input": {}}})
            yield _sse("ping", {"type": "ping"})
            text = json.dumps(call[1])
            for part in (text[: len(text) // 2], text[len(text) // 2:]):
                yield _sse("content_block_delta", {"type": "content_block_delta", "index": 0,
                                                   "delta": {"type": "input_json_delta", "partial_json": part}})
        else:
            yield _sse("content_block_start", {"type": "content_block_start", "index": 0,
                                               "content_block": {"type": "text", "text": ""}})
            yield _sse("ping", {"type": "ping"})
            yield _sse("content_block_delta", {"type": "content_block_delta", "index": 0,
                                               "delta": {"type": "text_delta", "text": action.text}})
        yield _sse("content_block_stop", {"type": "content_block_stop", "index": 0})
        yield _sse("message_delta", {"type": "message_delta", "delta": {"stop_reason": stop, "stop_sequence": None},
                                     "usage": {"output_tokens": usage["output_tokens"]}})
        yield _sse("message_stop", {"type": "message_stop"})

    # ---- OpenAI Responses
    def _responses(self, turn: Turn, action: Action, call: tuple[str, Any] | None, stream: bool) -> Iterator[Any]:
        rid = _id("resp")
        usage = {"input_tokens": 100, "input_tokens_details": {"cached_tokens": 0}, "output_tokens": 20,
                 "output_tokens_details": {"reasoning_tokens": 0}, "total_tokens": 120}
        if call and isinstance(call[1], str):
            item = {"type": "custom_tool_call", "id": _id("ctc"), "call_id": _id("call"), "name": call[0],
                    "input": call[1], "status": "completed"}
        elif call:
            item = {"type": "function_call", "id": _id("fc"), "call_id": _id("call"), "name": call[0],
                    "arguments": json.dumps(call[1]), "status": "completed"}
        else:
            item = {"type": "message", "id": _id("msg"), "role": "assistant", "status": "completed",
                    "content": [{"type": "output_text", "text": action.text, "annotations": []}]}
        base = {"id": rid, "object": "response", "created_at": int(time.time()), "model": turn.model or self.model,
                "output": [], "status": "in_progress", "usage": None}
        done = {**base, "status": "completed", "output": [item], "usage": usage}
        if not stream:
            yield done
            return
        seq = iter(range(1_000_000))

        def ev(kind: str, **data: Any) -> bytes:
            return _sse(kind, {"type": kind, "sequence_number": next(seq), **data})

        yield ev("response.created", response=base)
        yield ev("response.in_progress", response=base)
        started = {**item, "status": "in_progress"}
        if item["type"] == "message":
            started["content"] = []
        elif item["type"] == "function_call":
            started["arguments"] = ""
        elif item["type"] == "custom_tool_call":
            started["input"] = ""
        yield ev("response.output_item.added", output_index=0, item=started)
        if item["type"] == "message":
            part = {"type": "output_text", "text": "", "annotations": []}
            yield ev("response.content_part.added", item_id=item["id"], output_index=0, content_index=0, part=part)
            yield ev("response.output_text.delta", item_id=item["id"], output_index=0, content_index=0,
                     delta=action.text)
            yield ev("response.output_text.done", item_id=item["id"], output_index=0, content_index=0,
                     text=action.text)
            yield ev("response.content_part.done", item_id=item["id"], output_index=0, content_index=0,
                     part={**part, "text": action.text})
        elif item["type"] == "function_call":
            yield ev("response.function_call_arguments.delta", item_id=item["id"], output_index=0,
                     delta=item["arguments"])
            yield ev("response.function_call_arguments.done", item_id=item["id"], output_index=0,
                     arguments=item["arguments"])
        else:
            yield ev("response.custom_tool_call_input.delta", item_id=item["id"], output_index=0, delta=item["input"])
            yield ev("response.custom_tool_call_input.done", item_id=item["id"], output_index=0, input=item["input"])
        yield ev("response.output_item.done", output_index=0, item=item)
        yield ev("response.completed", response=done)

    # ---- OpenAI Chat Completions
    def _chat(self, turn: Turn, action: Action, call: tuple[str, Any] | None, stream: bool) -> Iterator[Any]:
        cid, created, model = _id("chatcmpl"), int(time.time()), turn.model or self.model
        usage = {"prompt_tokens": 100, "completion_tokens": 20, "total_tokens": 120}
        if call:
            calls = [{"id": _id("call"), "type": "function",
                      "function": {"name": call[0],
                                   "arguments": call[1] if isinstance(call[1], str) else json.dumps(call[1])}}]
            message: dict[str, Any] = {"role": "assistant", "content": None, "tool_calls": calls}
            finish = "tool_calls"
        else:
            message, finish = {"role": "assistant", "content": action.text}, "stop"
        if not stream:
            yield {"id": cid, "object": "chat.completion", "created": created, "model": model,
                   "choices": [{"index": 0, "message": message, "finish_reason": finish}], "usage": usage}
            return

        def chunk(delta: dict, reason: str | None = None, **more: Any) -> bytes:
            return _sse(None, {"id": cid, "object": "chat.completion.chunk", "created": created, "model": model,
                               "choices": [{"index": 0, "delta": delta, "finish_reason": reason}], **more})

        yield chunk({"role": "assistant", "content": ""})
        if call:
            yield chunk({"tool_calls": [{"index": 0, **message["tool_calls"][0]}]})
        else:
            yield chunk({"content": action.text})
        yield chunk({}, finish, usage=usage)
        yield _sse(None, "[DONE]")

    # ---- Gemini generateContent
    def _gemini(self, turn: Turn, action: Action, call: tuple[str, Any] | None, stream: bool) -> Iterator[Any]:
        part = {"functionCall": {"name": call[0], "args": call[1]}} if call else {"text": action.text}
        body = {"candidates": [{"content": {"role": "model", "parts": [part]}, "finishReason": "STOP", "index": 0}],
                "usageMetadata": {"promptTokenCount": 100, "candidatesTokenCount": 20, "totalTokenCount": 120},
                "modelVersion": turn.model or self.model}
        yield _sse(None, body) if stream else body

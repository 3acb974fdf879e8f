"""No API key ends up in a run directory, a log or an error message.

Keys are planted in the environment; ``skillopt eval`` then runs end to end
against a loopback OpenAI-compatible stub server (which, like real providers
sometimes do, echoes the key in an error body) and against the fake ``claude``
CLI. Afterwards every file under the output root, the captured log and the
printed output are scanned for the keys."""

from __future__ import annotations

import json
import logging
import os
import shutil
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from skillopt_core.backends.keys import redact, safe_url
from skillopt_core.cli.main import main as skillopt_main

OPENAI_KEY = "sk-proj-PLANTEDopenaiKEY0123456789abcdefXYZ"
ANTHROPIC_KEY = "sk-ant-api03-PLANTEDanthropicKEY0123456789"
AZURE_KEY = "PLANTEDazureKEY0123456789abcdef"
KEYS = (OPENAI_KEY, ANTHROPIC_KEY, AZURE_KEY)
CONFIG = Path(__file__).resolve().parents[2] / "configs" / "searchqa" / "local.yaml"
FAKES = Path(__file__).parent / "fakes"

pytestmark = pytest.mark.timeout(120)


class _Stub(BaseHTTPRequestHandler):
    """/v1/models and /v1/chat/completions. The first chat call fails with a 500
    whose message quotes the bearer key; ``always_fail`` makes every call a 401
    that does the same."""

    always_fail = False
    calls = 0

    def log_message(self, *args: object) -> None:  # keep test output quiet
        pass

    def _send(self, status: int, body: dict) -> None:
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self) -> None:
        self._send(200, {"object": "list", "data": [{"id": "stub-model", "object": "model", "owned_by": "me"}]})

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length", 0)))
        key = self.headers.get("Authorization", "").removeprefix("Bearer ")
        type(self).calls += 1
        if type(self).always_fail:
            self._send(401, {"error": {"message": f"Incorrect API key provided: {key}", "type": "invalid_request_error"}})
            return
        if type(self).calls == 1:
            self._send(500, {"error": {"message": f"upstream failure while using key {key}", "type": "server_error"}})
            return
        self._send(200, {
            "id": "chatcmpl-x", "object": "chat.completion", "created": 1, "model": "stub-model",
            "choices": [{"index": 0, "message": {"role": "assistant", "content": "Answer: Paris"}, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 20, "completion_tokens": 3, "total_tokens": 23},
        })


@pytest.fixture
def stub_server():
    _Stub.always_fail, _Stub.calls = False, 0
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Stub)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    server.shutdown()
    server.server_close()


@pytest.fixture(autouse=True)
def planted_keys(monkeypatch, tmp_path: Path):
    monkeypatch.setenv("OPENAI_API_KEY", OPENAI_KEY)
    monkeypatch.setenv("ANTHROPIC_API_KEY", ANTHROPIC_KEY)
    monkeypatch.setenv("AZURE_OPENAI_API_KEY", AZURE_KEY)
    monkeypatch.setenv("SKILLOPT_NO_DOTENV", "1")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("SKILLOPT_REPLAY_ROOT", str(tmp_path / "skillopt-replay"))
    monkeypatch.setenv("NO_PROXY", "127.0.0.1")
    monkeypatch.delenv("FAKE_CLI_RECORD_DIR", raising=False)
    monkeypatch.delenv("FAKE_CLI_MODE", raising=False)


@pytest.fixture
def captured_log(tmp_path: Path):
    path = tmp_path / "outputs" / "skillopt.log"
    path.parent.mkdir(parents=True, exist_ok=True)
    handler = logging.FileHandler(path)
    handler.setLevel(logging.DEBUG)
    root = logging.getLogger()
    old_level = root.level
    root.addHandler(handler)
    root.setLevel(logging.DEBUG)
    yield path
    root.removeHandler(handler)
    root.setLevel(old_level)
    handler.close()


def _eval(tmp_path: Path, *overrides: str) -> int:
    args = ["eval", "--config", str(CONFIG), "--set", f"output.root={tmp_path / 'outputs'}",
            "--set", "evaluation.test_limit=3", "--set", "train.workers=2"]
    for item in overrides:
        args += ["--set", item]
    return skillopt_main(args)


def _leaks(root: Path, *texts: str) -> list[str]:
    found = []
    blobs = [(str(p), p.read_bytes().decode("utf-8", "replace")) for p in root.rglob("*") if p.is_file()]
    blobs += [(f"text {i}", t) for i, t in enumerate(texts)]
    for where, blob in blobs:
        for key in KEYS:
            # The distinctive middle of each key catches partial quoting too.
            if key in blob or key[8:28] in blob:
                found.append(f"{where} contains {key[:10]}...")
    return found


def test_finished_openai_run_directory_holds_no_key(tmp_path: Path, stub_server: str, captured_log: Path, capsys) -> None:
    code = _eval(tmp_path, "model.backend=openai", f"model.base_url={stub_server}")
    out = capsys.readouterr()
    assert code == 0, out.err
    run_dirs = list((tmp_path / "outputs" / "searchqa").glob("eval-*"))
    assert run_dirs and (run_dirs[0] / "summary.json").is_file()
    assert _Stub.calls >= 4  # the failing first call was retried, then every item answered
    assert "retry 1/" in captured_log.read_text()
    assert _leaks(tmp_path / "outputs", out.out, out.err) == []


def test_failed_run_error_and_directory_hold_no_key(tmp_path: Path, stub_server: str, captured_log: Path, capsys) -> None:
    _Stub.always_fail = True
    code = _eval(tmp_path, "model.backend=openai", f"model.base_url={stub_server}")
    out = capsys.readouterr()
    assert code == 2
    assert "OPENAI_API_KEY" in out.err  # the error names the variable...
    assert _leaks(tmp_path / "outputs", out.out, out.err) == []  # ...never its value


def test_claude_code_run_directory_holds_no_key(tmp_path: Path, monkeypatch, captured_log: Path, capsys) -> None:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for name in ("claude", "_fake_cli.py"):
        shutil.copy(FAKES / name, bin_dir / name)
        (bin_dir / name).chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    code = _eval(tmp_path, "model.backend=scripted", "model.target_backend=claude-code")
    out = capsys.readouterr()
    assert code == 0, out.err
    assert _leaks(tmp_path / "outputs", out.out, out.err) == []


def test_redact_removes_known_key_values_and_key_shaped_tokens(monkeypatch) -> None:
    monkeypatch.setenv("SOME_SERVICE_TOKEN", "opaque-token-value-42")
    text = f"bad key {OPENAI_KEY}; other sk-unknownKEY1234567890; token opaque-token-value-42"
    cleaned = redact(text)
    assert OPENAI_KEY not in cleaned and "sk-unknownKEY" not in cleaned and "opaque-token" not in cleaned
    assert cleaned.startswith("bad key [redacted]")


def test_safe_url_drops_credentials_from_base_url() -> None:
    assert safe_url("http://user:secret@10.0.0.5:8000/v1") == "http://10.0.0.5:8000/v1"
    assert safe_url("http://127.0.0.1:8000/v1") == "http://127.0.0.1:8000/v1"

"""The autouse guard in tests/conftest.py: a test that opens a connection outside loopback fails, even when
the code under test swallows the refusal; loopback stays open; the remote_model marker opts a test in.
The failing cases run as child pytest sessions (the guard fails the test at teardown)."""

import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
CHILD = "SKILLOPT_REMOTE_GUARD_CHILD"
TEST_NET = ("192.0.2.1", 443)  # RFC 5737 TEST-NET-1: never a real host


def _child_only():
    if os.environ.get(CHILD) != "1":
        pytest.skip("run by test_a_remote_connection_fails_the_test in a child pytest")


def test_child_swallows_a_remote_connection():
    _child_only()
    try:
        socket.create_connection(TEST_NET, timeout=0.2)
    except OSError:
        pass  # a client that retries or reports offline: the guard still fails the test


@pytest.mark.remote_model
def test_child_marked_remote_model_may_connect():
    _child_only()
    with pytest.raises(OSError) as caught:  # no network here: the real connect fails, not the guard
        socket.create_connection(TEST_NET, timeout=0.2)
    assert "outside loopback" not in str(caught.value)


def _child(test: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k != "PYTEST_ADDOPTS"} | {CHILD: "1"}
    return subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                           f"tests/test_remote_model_guard.py::{test}"],
                          cwd=REPO, env=env, capture_output=True, text=True, timeout=240)


def test_a_remote_connection_fails_the_test_even_when_swallowed():
    done = _child("test_child_swallows_a_remote_connection")
    assert done.returncode == 1, done.stdout + done.stderr
    assert "outside loopback: ('192.0.2.1', 443)" in done.stdout and "remote_model" in done.stdout


def test_the_remote_model_marker_opts_in():
    done = _child("test_child_marked_remote_model_may_connect")
    assert done.returncode == 0, done.stdout + done.stderr


def test_loopback_stays_open(remote_model_guard):
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen()
    with listener, socket.create_connection(listener.getsockname(), timeout=2):
        pass
    assert remote_model_guard == []


def test_the_refusal_is_an_oserror_naming_the_way_out(remote_model_guard):
    with pytest.raises(OSError, match="use the scripted backend or a loopback server, or mark the test remote_model"):
        socket.create_connection(TEST_NET, timeout=0.2)
    assert remote_model_guard == [TEST_NET]
    remote_model_guard.clear()  # refused on purpose here; the guard would fail this test otherwise

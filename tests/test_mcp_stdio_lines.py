"""``trajsearch mcp`` over stdio answers every line a host sends, even one its JSON-RPC parser refuses.

The line is probe D's (round 40, ``scripts/m2_surrogate.py``): valid JSON, pure ASCII, whose query holds an
escaped lone surrogate, as a model writes when it cuts an emoji in half.
"""

from __future__ import annotations

import json
import os
import select
import subprocess
import sys

SURROGATE_CALL = (b'{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "search_past_runs", '
                  b'"arguments": {"query": "error \\ud800 here", "kind": "steps"}}}')


def answer(proc: subprocess.Popen, timeout: float = 600) -> dict:
    ready, _, _ = select.select([proc.stdout], [], [], timeout)
    assert ready, f"no answer within {timeout} s"
    return json.loads(proc.stdout.readline())


def send(proc: subprocess.Popen, line: bytes) -> None:
    proc.stdin.write(line + b"\n")
    proc.stdin.flush()


def test_a_call_holding_a_lone_surrogate_gets_a_parse_error_for_its_id_and_the_next_calls_are_answered(
        refusing_address):
    """Bug (probe D, D4): the SDK's stdio transport dropped a line its parser refused (``\\ud800`` is JSON
    but not Unicode) with nothing written anywhere: the host waited forever on call 1. Over ``--http`` the
    same body was ``-32700 Parse error``; over stdio it is now too, with the call's id so the host's
    pending call ends, and the line is logged on stderr."""
    env = dict(os.environ, TRAJSEARCH_API_KEY="ts_unused", PYTHONUNBUFFERED="1")  # no call reaches a server
    proc = subprocess.Popen([sys.executable, "-m", "trajsearch.service", "mcp", "--server", refusing_address],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    try:
        send(proc, json.dumps({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-03-26", "capabilities": {}, "clientInfo": {"name": "test", "version": "0"}}}).encode())
        assert answer(proc, 60)["id"] == 0
        send(proc, b'{"jsonrpc": "2.0", "method": "notifications/initialized"}')
        send(proc, SURROGATE_CALL)
        refused = answer(proc)
        assert refused["id"] == 1 and refused["error"]["code"] == -32700, refused
        assert "Parse error" in refused["error"]["message"] and "surrogate" in refused["error"]["message"]
        send(proc, b'{"jsonrpc": "2.0", "id": 2, "method": "tools/list"}')
        listed = answer(proc)
        assert listed["id"] == 2 and listed["result"]["tools"][0]["name"] == "search_past_runs"
        send(proc, b'{"jsonrpc": "2.0", "id": 3, "method": "tools/list"')  # not JSON at all: no id to answer
        broken = answer(proc)
        assert broken["id"] is None and broken["error"]["code"] == -32700, broken
        send(proc, b'{"jsonrpc": "2.0", "id": 4, "method": 3}')  # JSON, not a JSON-RPC request
        invalid = answer(proc)
        assert invalid["error"]["code"] == -32600, invalid  # its id, where the SDK's error still holds it
    finally:
        proc.stdin.close()
        proc.wait(timeout=600)
    stderr = proc.stderr.read().decode()
    assert "refused a message that is not valid JSON-RPC text" in stderr

"""MCP round trip: the `mcp` package's own client, over stdio, against ``trajsearch mcp``,
which fronts a ``trajsearch serve`` subprocess on loopback (the deployment shape).

Also covers ``serve`` itself: it starts from a key file, and SIGTERM drains and exits 0.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import time
from contextlib import contextmanager

import pytest

from trajsearch.client import Client
from trajsearch.service.auth import key_entry, new_key

from conftest import failing_run, make_run
from process_support import serving
from service_support import mcp_session


@contextmanager
def _serving(tmp):
    """A ``trajsearch serve`` subprocess with two tenants' runs: its address, keys, process and folder."""
    keys = {"acme": new_key(), "beta": new_key()}
    (tmp / "keys.json").write_text(json.dumps({"keys": [
        key_entry(keys["acme"], tenant="acme", role="write"), key_entry(keys["beta"], tenant="beta", role="write"),
    ]}))
    log = open(tmp / "serve.log", "w")
    proc = subprocess.Popen(
        [sys.executable, "-m", "trajsearch.service", "serve", "--address", "127.0.0.1:0", "--uri",
         str(tmp / "milvus.db"), "--traces", str(tmp / "traces"), "--model", "hashing", "--keys",
         str(tmp / "keys.json"), "--grace", "5"],
        stdout=subprocess.DEVNULL, stderr=log,
    )
    try:
        address = serving(proc, tmp / "serve.log")["address"]
        with Client(address, keys["acme"]) as acme, Client(address, keys["beta"]) as beta:
            acme.wait_ready(timeout=600)
            acme.add([make_run("a1"), failing_run("a2", "OSError: [Errno 28] No space left on device")])
            beta.add([failing_run("b1", "OSError: [Errno 28] No space left on device (beta's disk)", tenant="beta")])
        yield address, keys, proc, tmp
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        log.close()


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    """One server for the module's tests that leave it serving."""
    with _serving(tmp_path_factory.mktemp("serve")) as serving:
        yield serving


@pytest.fixture
def served_alone(tmp_path):
    """A server of this test's own: it stops it (on the module's one, every test run after it failed, as in any
    order but the file's)."""
    with _serving(tmp_path) as serving:
        yield serving


def test_mcp_tool_round_trip_with_cap_and_provenance(served):
    address, keys, _, _ = served
    query = "Fix the failing unit test: OSError: [Errno 28] No space left on device"
    calls = [
        {"query": query, "kind": "steps", "k": 3},
        {"query": query, "kind": "failures", "k": 2, "tenant": "beta", "env_version": "anything"},  # refused
        {"query": query, "k": 0},  # refused (was: silently 3, and a search spent)
        {"query": query, "k": 10**12},  # refused (was: an opaque "Error executing tool")
        {"query": query, "kind": "failures", "k": 2},
        {"query": query, "kind": "exemplars"},
        {"query": "beta's disk", "kind": "steps", "k": 5},
        {"query": query, "kind": "steps"},
    ]
    tools, results = asyncio.run(asyncio.wait_for(mcp_session(address, keys["acme"], calls), 600))
    (tool,) = tools
    assert tool.name == "search_past_runs"
    assert set(tool.input_schema["properties"]) == {"query", "k", "kind"}  # no tenant, no filters
    assert tool.input_schema["additionalProperties"] is False
    assert "cannot change" in tool.description
    refused = [r.content[0].text for r in results[1:4]]
    assert all(r.is_error for r in results[1:4])
    assert "tenant: unknown argument" in refused[0] and "env_version: unknown argument" in refused[0]
    assert "k: " in refused[1] and "greater than or equal to 1" in refused[1]
    assert "k: " in refused[2] and "less than or equal to 5" in refused[2] and "1000000000000" in refused[2]
    results = [results[0], *results[4:]]
    payloads = [json.loads(r.content[0].text) for r in results]
    assert not any(r.is_error for r in results)
    steps, failures, exemplars, probe, capped = payloads
    assert steps["status"] == "ok" and steps["searches_left"] == 3
    assert failures["searches_left"] == 2  # the refused calls spent nothing
    assert steps["results"] and all(r["provenance"]["trajectory_id"] for r in steps["results"])
    assert "trace_uri" not in json.dumps(payloads)  # a path on the server's host, named by the run's id instead
    assert {r["provenance"]["trajectory_id"] for r in steps["results"]} <= {"a1", "a2"}
    assert [r["provenance"]["trajectory_id"] for r in failures["results"]] == ["a2"]  # never beta's b1
    assert "/beta/" not in json.dumps(payloads)
    assert exemplars["status"] == "ok" and "strategy" in exemplars
    assert {r["provenance"]["trajectory_id"] for r in probe["results"]} <= {"a1", "a2"}
    assert capped["status"] == "limit_reached" and "escalate" in capped["instruction"]


def test_mcp_session_after_an_in_process_command_imported_the_sdk(tmp_path):
    """A session after an in-process ``trajsearch mcp --http`` (refused) in the same process: the command imported
    the MCP SDK while ``CliRunner`` held ``sys.stderr``, and ``stdio_client``'s default stderr, bound then, was
    that stream, closed and with no file descriptor: every later session failed to start the server
    (``io.UnsupportedOperation: fileno``), as ``test_service_cli.py``'s plaintext refusal run before this file's
    round trip did on one pytest-xdist worker. The server's stderr reaches this process's."""
    script = tmp_path / "after.py"
    script.write_text(
        "import asyncio\n"
        "import typer\n"
        "from typer.testing import CliRunner\n"
        "from trajsearch.cli.service_commands import register\n"
        "app = typer.Typer()\n"
        "register(app)\n"
        "assert CliRunner().invoke(app, ['mcp', '--http', '--host', '0.0.0.0']).exit_code == 2\n"
        "from service_support import mcp_session\n"
        "tools, _ = asyncio.run(asyncio.wait_for(mcp_session('127.0.0.1:9', 'no key', []), 600))\n"
        "print([tool.name for tool in tools])\n"
    )
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=300,
                          env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)})
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip() == "['search_past_runs']"
    assert "did not answer at start-up" in done.stderr  # the server's own line, on the session's stderr


def test_mcp_tool_schema_is_the_runtime_tools():
    """The MCP arguments model and the runtime's tool definition agree (one is not imported by the other)."""
    from trajsearch.runtime.tool import definition
    from trajsearch.service.mcp_server import tool_schema

    ours, theirs = tool_schema(), definition()["parameters"]
    assert ours["required"] == theirs["required"] and ours["additionalProperties"] is theirs["additionalProperties"]
    for name, spec in theirs["properties"].items():
        for key in ("type", "minimum", "maximum", "minLength", "maxLength", "enum", "default"):
            assert ours["properties"][name].get(key) == spec.get(key), (name, key)


def test_mcp_tool_reports_an_unreachable_server_as_a_tool_error(refusing_address):
    """In-process MCP connection (the SDK's test transport) to a server whose backend is down."""
    from mcp import Client as McpClient

    from trajsearch.service.mcp_server import build_mcp

    async def call():
        with Client(refusing_address, "ts_any", retries=1, timeout=600) as backend:
            async with McpClient(build_mcp(backend)) as mcp:
                return await mcp.call_tool("search_past_runs", {"query": "x"})

    result = asyncio.run(asyncio.wait_for(call(), 600))
    assert result.is_error and "UNAVAILABLE" in result.content[0].text


def _mcp_start(address: str, key: str, *args: str) -> subprocess.CompletedProcess:
    """``trajsearch mcp`` as an MCP host launches it, with stdin closed: it serves nothing and ends."""
    env = dict(os.environ, TRAJSEARCH_API_KEY=key)
    return subprocess.run([sys.executable, "-m", "trajsearch.service", "mcp", "--server", address, *args],
                          stdin=subprocess.DEVNULL, capture_output=True, text=True, env=env, timeout=600)


def test_mcp_refuses_to_start_with_a_context_or_key_the_server_refuses(served):
    """Probe I, I8: with a 300-character --env-version, or a key the server does not know, ``trajsearch mcp``
    started and every call told the model "invalid arguments for search_past_runs: context.env_versions[0]: ..."
    or "unavailable (UNAUTHENTICATED)"; the operator saw one INFO line per call. Now it exits with one line."""
    address, keys, _, _ = served
    started = _mcp_start(address, keys["acme"], "--env-version", "v" * 300)
    assert started.returncode == 2
    assert started.stderr.strip().splitlines() == [
        f"error: --env-version too long (300 > 200 chars): {'v' * 40!r}…"], started.stderr
    # how many, by the rule the CLI's filters share (review RT2, 2): 32 versions, 256 tools
    started = _mcp_start(address, keys["acme"], *[part for n in range(33) for part in ("--env-version", f"v{n}")])
    assert (started.returncode, started.stderr.strip().splitlines()) == (
        2, ["error: --env-version: at most 32 values, got 33"]), started.stderr
    tools = [part for n in range(256) for part in ("--tool", f"t{n}")]
    started = _mcp_start(address, keys["acme"], "--env-version", "v" * 200, *tools)  # within bounds
    assert started.returncode == 0 and "error" not in started.stderr, started.stderr
    started = _mcp_start(address, new_key())
    assert started.returncode == 2
    lines = started.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"error: the trajsearch server at {address} refused the API key")
    assert "$TRAJSEARCH_API_KEY" in lines[0] and "UNAUTHENTICATED" not in lines[0]
    assert "not one of that server's keys" in lines[0] and "send metadata" not in lines[0]  # probe I, I2


def test_an_operators_context_the_server_refuses_is_not_the_models_invalid_arguments(served, caplog):
    """A context the start-up checks could not foresee (here: built past them) is refused by the server; the
    model hears it cannot search, not that its arguments were wrong, and the operator gets the reason."""
    from mcp import Client as McpClient

    from trajsearch.service.mcp_server import ToolContext, build_mcp

    address, keys, _, _ = served

    async def call():
        with Client(address, keys["acme"]) as backend:
            async with McpClient(build_mcp(backend, ToolContext(env_versions=("v" * 300,)))) as mcp:
                return await mcp.call_tool("search_past_runs", {"query": "No space left on device"})

    result = asyncio.run(asyncio.wait_for(call(), 600))
    assert result.is_error
    text = result.content[0].text
    assert "invalid arguments" not in text and "continue without past runs" in text
    assert "env_versions" not in text  # the operator's configuration is not the model's business
    assert "context.env_versions[0]: too long" in caplog.text  # the operator's log has the reason


def test_serve_drains_on_sigterm_and_exits_cleanly(served_alone):
    address, keys, proc, tmp = served_alone
    with Client(address, keys["acme"]) as c:
        before = c.stats()["rows"]
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=600) == 0
    log = (tmp / "serve.log").read_text()
    assert '"msg": "draining"' in log and '"msg": "stopped"' in log
    assert before > 0
    time.sleep(0.2)
    with Client(address, keys["acme"], retries=1, timeout=600) as c:
        with pytest.raises(ConnectionError):
            c.stats()

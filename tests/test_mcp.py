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

import pytest

from trajsearch.client import Client
from trajsearch.service.auth import key_entry, new_key

from conftest import failing_run, free_port, make_run


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("serve")
    keys = {"acme": new_key(), "beta": new_key()}
    (tmp / "keys.json").write_text(json.dumps({"keys": [
        key_entry(keys["acme"], tenant="acme", role="write"), key_entry(keys["beta"], tenant="beta", role="write"),
    ]}))
    address = f"127.0.0.1:{free_port()}"
    log = open(tmp / "serve.log", "w")
    proc = subprocess.Popen(
        [sys.executable, "-m", "trajsearch.service", "serve", "--address", address, "--uri", str(tmp / "milvus.db"),
         "--traces", str(tmp / "traces"), "--model", "hashing", "--keys", str(tmp / "keys.json"), "--grace", "5"],
        stdout=subprocess.DEVNULL, stderr=log,
    )
    with Client(address, keys["acme"]) as acme, Client(address, keys["beta"]) as beta:
        acme.wait_ready(timeout=90)
        acme.add([make_run("a1"), failing_run("a2", "OSError: [Errno 28] No space left on device")])
        beta.add([failing_run("b1", "OSError: [Errno 28] No space left on device (beta's disk)", tenant="beta")])
    yield address, keys, proc, tmp
    if proc.poll() is None:
        proc.kill()
        proc.wait()
    log.close()


async def _session(address: str, key: str, calls: list[dict]) -> tuple[list, list]:
    from mcp import Client as McpClient
    from mcp import StdioServerParameters

    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "trajsearch.service", "mcp", "--server", address],
        env={"TRAJSEARCH_API_KEY": key, **({"PYTHONPATH": os.environ["PYTHONPATH"]} if "PYTHONPATH" in os.environ else {})},
    )
    async with McpClient(params, read_timeout_seconds=60) as mcp:
        tools = (await mcp.list_tools()).tools
        results = [await mcp.call_tool("search_past_runs", args) for args in calls]
    return tools, results


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
    tools, results = asyncio.run(asyncio.wait_for(_session(address, keys["acme"], calls), 120))
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
    assert steps["results"] and all(r["provenance"]["trace_uri"].startswith("file://") for r in steps["results"])
    assert {r["provenance"]["trajectory_id"] for r in steps["results"]} <= {"a1", "a2"}
    assert [r["provenance"]["trajectory_id"] for r in failures["results"]] == ["a2"]  # never beta's b1
    assert "/beta/" not in json.dumps(payloads)
    assert exemplars["status"] == "ok" and "strategy" in exemplars
    assert {r["provenance"]["trajectory_id"] for r in probe["results"]} <= {"a1", "a2"}
    assert capped["status"] == "limit_reached" and "escalate" in capped["instruction"]


def test_mcp_tool_schema_is_the_runtime_tools():
    """The MCP arguments model and the runtime's tool definition agree (one is not imported by the other)."""
    from trajsearch.runtime.tool import definition
    from trajsearch.service.mcp_server import tool_schema

    ours, theirs = tool_schema(), definition()["parameters"]
    assert ours["required"] == theirs["required"] and ours["additionalProperties"] is theirs["additionalProperties"]
    for name, spec in theirs["properties"].items():
        for key in ("type", "minimum", "maximum", "minLength", "maxLength", "enum", "default"):
            assert ours["properties"][name].get(key) == spec.get(key), (name, key)


def test_mcp_tool_reports_an_unreachable_server_as_a_tool_error():
    """In-process MCP connection (the SDK's test transport) to a server whose backend is down."""
    from mcp import Client as McpClient

    from trajsearch.service.mcp_server import build_mcp

    async def call():
        with Client(f"127.0.0.1:{free_port()}", "ts_any", retries=1, timeout=3) as backend:
            async with McpClient(build_mcp(backend)) as mcp:
                return await mcp.call_tool("search_past_runs", {"query": "x"})

    result = asyncio.run(asyncio.wait_for(call(), 60))
    assert result.is_error and "UNAVAILABLE" in result.content[0].text


def test_serve_drains_on_sigterm_and_exits_cleanly(served):
    address, keys, proc, tmp = served
    with Client(address, keys["acme"]) as c:
        before = c.stats()["rows"]
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=30) == 0
    log = (tmp / "serve.log").read_text()
    assert '"msg": "draining"' in log and '"msg": "stopped"' in log
    assert before > 0
    time.sleep(0.2)
    with Client(address, keys["acme"], retries=1, timeout=3) as c:
        with pytest.raises(ConnectionError):
            c.stats()

"""The MCP server's searches_left when the call went through something other than today's trajsearch server: an
older server (from before its end-of-call marker, ``validate.ENDED_HERE``) or a proxy in front of one (review
RFIX2 2 and 3).

The trajsearch server is real (Milvus Lite, file traces, 127.0.0.1); in front of it a real gRPC relay ends the calls
it is told to end as the one it stands for does: an older trajsearch server sent its initial metadata
(``x-request-id``) before any work and refused a crowded tenant's call RESOURCE_EXHAUSTED with no trailer; a proxy
echoes the caller's ``x-request-id`` in the trailers of a call whose answer it lost. No timing asserts.
"""

from __future__ import annotations

import asyncio
import json
from concurrent import futures
from contextlib import contextmanager
from typing import Iterator

import grpc
from mcp import Client as McpClient

from conftest import make_run
from service_support import key_ring, serve_store
from trajsearch.service.client import Client
from trajsearch.service.mcp_server import build_mcp
from trajsearch.service.protos import pb2_grpc
from trajsearch.service.validate import Limits

WAIT = 600  # seconds: a bound on a wait, not a speed target


class _Relay(pb2_grpc.TrajSearchServicer):
    """SearchPastRuns passed on to the real server, each call ended as ``endings`` says, in order: None passes it on
    whole; ``(forward, code, trailer keys)`` ends it with ``code`` (after passing it on when ``forward``), each key
    of its trailers carrying the call's request id."""

    def __init__(self, upstream: str, endings: list) -> None:
        self.stub = pb2_grpc.TrajSearchStub(grpc.insecure_channel(upstream))
        self.endings = endings

    def SearchPastRuns(self, request, context):  # noqa: N802 - gRPC's name
        said = [(k, v) for k, v in context.invocation_metadata() if k in ("authorization", "x-request-id")]
        request_id = dict(said).get("x-request-id", "")
        context.send_initial_metadata((("x-request-id", request_id),))  # before any work, as trajsearch sends it
        ending = self.endings.pop(0) if self.endings else None
        if ending is None:
            return self.stub.SearchPastRuns(request, metadata=said)
        forward, code, trailers = ending
        if forward:
            self.stub.SearchPastRuns(request, metadata=said)
        context.set_trailing_metadata(tuple((key, request_id) for key in trailers))
        context.abort(code, "ended by the relay")


@contextmanager
def _relayed(upstream: str, endings: list) -> Iterator[str]:
    """The relay on a loopback port, its address."""
    relay = grpc.server(futures.ThreadPoolExecutor(max_workers=4))
    pb2_grpc.add_TrajSearchServicer_to_server(_Relay(upstream, endings), relay)
    port = relay.add_insecure_port("127.0.0.1:0")
    relay.start()
    try:
        yield f"127.0.0.1:{port}"
    finally:
        relay.stop(grace=1)


def _searches(tmp_path, endings: list, n: int) -> list[dict]:
    """``n`` searches of one MCP session through the relay (search cap 3), each answer as the model reads it."""
    keys, ring = key_ring(acme=dict(tenant="acme", role="read"))
    server = serve_store(tmp_path, ring, [make_run("a1")], Limits())

    async def session(address: str) -> list:
        with Client(address, keys["acme"], retries=1, timeout=600) as backend:
            async with McpClient(build_mcp(backend)) as mcp:
                return [await mcp.call_tool("search_past_runs", {"query": "fix the payments test"}) for _ in range(n)]

    try:
        with _relayed(server.address, endings) as address:
            results = asyncio.run(asyncio.wait_for(session(address), WAIT))
    finally:
        server.stop(grace=2)
    return [dict(json.loads(r.content[0].text), is_error=r.is_error) for r in results]


def test_an_older_servers_crowded_tenant_refusal_keeps_searches_left(tmp_path):
    """review RFIX2 2: an older server refuses a crowded tenant's call RESOURCE_EXHAUSTED before any search, with
    its initial metadata sent and no end-of-call marker; the MCP server read it "may have counted it" and told the
    model 1 search left where the server had 2 (the next search answered 1)."""
    first, refused, third = _searches(tmp_path, [None, (False, grpc.StatusCode.RESOURCE_EXHAUSTED, ())], 3)
    assert refused["is_error"] and "RESOURCE_EXHAUSTED" in refused["error"], refused
    assert "may have counted" not in refused["error"], refused
    assert first["searches_left"] == 2 and refused["searches_left"] == 2 and third["searches_left"] == 1


def test_a_proxy_echoing_the_request_id_does_not_pass_for_the_server(tmp_path):
    """review RFIX2 3: the server's end-of-call marker was ``x-request-id``, which a proxy echoes in the trailers of a
    call whose answer it lost: a search the server had counted read as refused before its count (2 left told, 1
    left on the server). Only trajsearch's own trailer tells the server ended the call."""
    first, lost, third = _searches(tmp_path, [None, (True, grpc.StatusCode.UNAVAILABLE, ("x-request-id",))], 3)
    assert lost["is_error"] and "may have counted it" in lost["error"], lost
    assert first["searches_left"] == 2 and lost["searches_left"] == 1 and third["searches_left"] == 0

"""Helpers shared by the service tests: keys, a served store, the per-call log as events, a silent S3
endpoint, raw calls."""

from __future__ import annotations

import logging
import socket
import threading
from pathlib import Path
from typing import Any, Iterable

import grpc
import pytest

from trajsearch.embed import HashingEmbedder
from trajsearch.model import Trajectory
from trajsearch.search import TrajSearch
from trajsearch.service.auth import KeyRing, key_entry, new_key
from trajsearch.service.server import ServiceServer
from trajsearch.service.validate import Limits


def key_ring(**keys: dict[str, Any]) -> tuple[dict[str, str], KeyRing]:
    """A new key for each name, and the ring that holds them all.

    Each name's dict is what ``key_entry`` takes (``tenant``, ``role``, ``key_id``), plus
    ``env_versions`` to pin the key to those versions: the tests' access matrix reads as one table.
    """
    made = {name: new_key() for name in keys}
    entries = []
    for name, spec in keys.items():
        pins = spec.get("env_versions")
        entry = key_entry(made[name], **{k: v for k, v in spec.items() if k != "env_versions"})
        entries.append(dict(entry, env_versions=pins) if pins else entry)
    return made, KeyRing.from_entries(entries)


def serve_store(tmp: Path, ring: KeyRing, runs: list[Trajectory], limits: Limits) -> ServiceServer:
    """A started server on 127.0.0.1 over a new store in ``tmp`` holding ``runs``.

    Real Milvus Lite and file traces, the fast hashing test embedder; few workers and a search
    cap of 3, so that the tests of limits and slots reach them with a handful of calls.
    """
    ts = TrajSearch.open(str(tmp / "milvus.db"), traces=str(tmp / "traces"), embedder=HashingEmbedder())
    ts.add(runs)
    return ServiceServer(ts, ring, address="127.0.0.1:0", limits=limits, max_workers=4, search_cap=3).start()


class SlowIndex:
    """The façade's searches of ``tenant`` held in the index until ``gate`` is set (a big tenant's cold searches,
    a Milvus server that stalls): ``arrived`` counts those that reached it."""

    def __init__(self, ts: TrajSearch, tenant: str) -> None:
        self.search, self.tenant, self.gate = ts.search, tenant, threading.Event()
        self.arrived, self.changed = 0, threading.Condition()
        ts.search = self.held  # type: ignore[method-assign]

    def held(self, text, *, tenant, **kwargs):
        if tenant == self.tenant:
            with self.changed:
                self.arrived += 1
                self.changed.notify_all()
            self.gate.wait(600)
        return self.search(text, tenant=tenant, **kwargs)

    def wait_for(self, predicate, timeout: float = 600) -> None:  # a bound for a hang, not a speed target
        with self.changed:
            assert self.changed.wait_for(predicate, timeout), f"only {self.arrived} searches reached the index"


class RpcLog(logging.Handler):
    """The service's per-call log lines, by request id; ``wait`` blocks until one is written."""

    def __init__(self) -> None:
        super().__init__(logging.INFO)
        self.lines: dict[str, logging.LogRecord] = {}
        self.changed = threading.Condition()

    def emit(self, record: logging.LogRecord) -> None:
        if record.getMessage() == "rpc" and getattr(record, "request_id", None):
            with self.changed:
                self.lines[record.request_id] = record
                self.changed.notify_all()

    def wait(self, request_id: str, timeout: float = 600) -> logging.LogRecord:  # a bound for a hang only
        with self.changed:
            assert self.changed.wait_for(lambda: request_id in self.lines, timeout), f"no log line for {request_id}"
            return self.lines[request_id]


@pytest.fixture
def rpc_log():
    logger = logging.getLogger("trajsearch.service")
    handler, level = RpcLog(), logger.level
    logger.addHandler(handler)
    logger.setLevel(logging.INFO)
    yield handler
    logger.removeHandler(handler)
    logger.setLevel(level)


class SilentS3:
    """An "S3 endpoint" on 127.0.0.1 that accepts TCP connections and never answers.

    ``wait_connections(n)`` blocks until ``n`` connections have been accepted;
    ``close()`` drops them all (the clients then see the connection reset).
    """

    def __init__(self) -> None:
        self.listener = socket.socket()
        self.listener.bind(("127.0.0.1", 0))
        self.listener.listen(64)
        self.url = f"http://127.0.0.1:{self.listener.getsockname()[1]}"
        self.connections: list[socket.socket] = []
        self.changed = threading.Condition()
        self.closed = False
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                conn, _ = self.listener.accept()
            except OSError:
                return
            with self.changed:
                if self.closed:
                    conn.close()
                    return
                self.connections.append(conn)
                self.changed.notify_all()

    def wait_connections(self, n: int, timeout: float = 600) -> None:  # a bound for a hang only
        with self.changed:
            assert self.changed.wait_for(lambda: len(self.connections) >= n, timeout), \
                f"only {len(self.connections)} of {n} connections reached the silent S3 endpoint"

    def close(self) -> None:
        with self.changed:
            self.closed = True
            for conn in self.connections:
                try:
                    conn.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass
                conn.close()
        self.listener.close()


def s3_credentials(monkeypatch) -> None:
    """Dummy AWS credentials, and none of the host's AWS configuration."""
    for name, value in (("AWS_ACCESS_KEY_ID", "testing"), ("AWS_SECRET_ACCESS_KEY", "testing"),
                        ("AWS_DEFAULT_REGION", "us-east-1"), ("AWS_CONFIG_FILE", "/nonexistent"),
                        ("AWS_SHARED_CREDENTIALS_FILE", "/nonexistent")):
        monkeypatch.setenv(name, value)
    for name in ("AWS_PROFILE", "AWS_SESSION_TOKEN", "AWS_ENDPOINT_URL", "AWS_ENDPOINT_URL_S3"):
        monkeypatch.delenv(name, raising=False)


def raw_unary(address: str, method: str, data: bytes, metadata: Iterable = (), timeout: float = 600) -> bytes:
    """Call ``method`` with request bytes as they are (no serializer): adversarial wire data goes through. The
    deadline is a bound for a hang, not a speed target (a loaded machine answers slowly)."""
    with grpc.insecure_channel(address, options=[("grpc.enable_retries", 0)]) as channel:
        call = channel.unary_unary(f"/trajsearch.v1.TrajSearch/{method}")
        return call(data, metadata=tuple(metadata), timeout=timeout)


def raw_stream(address: str, method: str, messages: Iterable[bytes], metadata: Iterable = (),
               timeout: float = 600) -> bytes:
    with grpc.insecure_channel(address, options=[("grpc.enable_retries", 0)]) as channel:
        call = channel.stream_unary(f"/trajsearch.v1.TrajSearch/{method}")
        return call(iter(messages), metadata=tuple(metadata), timeout=timeout)


async def mcp_session(address: str, key: str, script: list, options: Iterable[str] = (),
                      read_timeout: float = 600) -> tuple[list, list]:
    """``trajsearch mcp --server address [options]`` over stdio, driven by the ``mcp`` package's own client: its
    tools, and the result of each call of ``script``, in order. An item of ``script`` is the arguments of one
    ``search_past_runs`` call, or a number of seconds the host waits (idle between two conversations). The
    process imports this checkout's trajsearch (the test's ``sys.path``). Its stderr is this process's file
    descriptor 2 (pytest's capture takes it), named here: ``stdio_client``'s default is the ``sys.stderr`` of the
    moment the SDK was first imported, and an in-process ``CliRunner`` command importing it first (``trajsearch mcp
    --http`` refused) left its own stream, closed and with no file descriptor, to every later session."""
    import asyncio
    import os
    import sys

    from mcp import Client as McpClient
    from mcp import StdioServerParameters
    from mcp.client.stdio import stdio_client

    params = StdioServerParameters(
        command=sys.executable, args=["-m", "trajsearch.service", "mcp", "--server", address, *options],
        env={"TRAJSEARCH_API_KEY": key, "PYTHONPATH": os.pathsep.join(sys.path)},
    )
    results = []
    async with McpClient(stdio_client(params, errlog=sys.__stderr__), read_timeout_seconds=read_timeout) as mcp:
        tools = (await mcp.list_tools()).tools
        for step in script:
            if isinstance(step, (int, float)):
                await asyncio.sleep(step)
            else:
                results.append(await mcp.call_tool("search_past_runs", step))
    return tools, results


class HeldIngest:
    """Ingest streams of one key, each sending one batch of one run and then holding its write slot (a batch indexer
    reading its next file) until :attr:`more` is set: what the tests of the write slots open."""

    def __init__(self, address: str, key: str) -> None:
        from trajsearch.service.protos import pb2_grpc

        self.channel = grpc.insecure_channel(address)
        self._stub = pb2_grpc.TrajSearchStub(self.channel)
        self._metadata = (("authorization", f"Bearer {key}"),)
        self.more, self.sent = threading.Event(), threading.Semaphore(0)

    def _batches(self, run_id: str):
        from conftest import make_run
        from trajsearch.service.protos import pb2

        yield pb2.IngestBatch(records=[pb2.TrajectoryRecord(json=make_run(run_id).model_dump_json(), source="d")])
        self.sent.release()
        self.more.wait(600)  # the indexer reads its next file

    def open(self, run_id: str) -> Any:
        """A stream writing ``run_id`` (its future; :attr:`sent` is released once its batch is sent)."""
        return self._stub.Ingest.future(self._batches(run_id), metadata=self._metadata)

    def opened(self, run_id: str, within: float = 600.0) -> Any:
        """:meth:`open`, returned once its batch is sent (it holds its slot) or it has ended (refused)."""
        import time

        stream = self.open(run_id)
        end = time.monotonic() + within
        while not stream.done() and not self.sent.acquire(timeout=0.05) and time.monotonic() < end:
            pass
        return stream

    def close(self) -> None:
        self.more.set()
        self.channel.close()

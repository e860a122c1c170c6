"""Probe 50 (FSV): an Ingest stream over the service as long as its input takes, and a server stopped under one.

Real servers on 127.0.0.1 (``ServiceServer`` over an embedded Milvus Lite store, hashing embedder) and the real
client; the runs are real ones kept under tests/fixtures (mini-swe-agent, tau-bench: see their SOURCE.md). Only the
hung server of one test is a stand-in: a gRPC server that never reads its Ingest stream, as a server stuck in its
store does.
"""

from __future__ import annotations

import json
import logging
import threading
import time
from concurrent import futures
from pathlib import Path
from typing import Any, Iterator

import grpc
import pytest

from trajsearch.embed import HashingEmbedder
from trajsearch.ingest.read import read_inputs
from trajsearch.search import TrajSearch
from trajsearch.service.auth import KeyRing, key_entry, new_key
from trajsearch.service.client import Client, DeadlineExceeded, Unavailable
from trajsearch.service.protos import pb2, pb2_grpc
from trajsearch.service.server import ServiceServer

FIXTURES = Path(__file__).parent / "fixtures"
REAL = FIXTURES / "mini-swe-agent" / ".real"


def _runs(*paths: Path) -> list[Any]:
    """The runs read from ``paths`` as ``ingest`` reads them (tenant acme), those read whole only."""
    return [p for p in read_inputs(paths, tenant="acme") if p.error is None]


def _open(tmp_path: Path) -> TrajSearch:
    return TrajSearch.open(str(tmp_path / "srv.db"), traces=str(tmp_path / "srv-traces"), embedder=HashingEmbedder())


def _slowly(items: list[Any], pause: float) -> Iterator[Any]:
    """``items`` as a slow input yields them (a large dump parsed run by run, a network disk)."""
    for item in items:
        time.sleep(pause)
        yield item


def test_an_ingest_longer_than_its_timeout_finishes_when_each_batch_is_taken_in_time(tmp_path: Path) -> None:
    """``ingest --server`` gave the whole stream a deadline of an hour: at ~100 rows/s on CPU about 9,000 SWE-agent
    runs, then ``DEADLINE_EXCEEDED``, and each rerun got an hour further (the runs before counted unchanged, but
    reading and resending them ate into the next hour). ``timeout`` now bounds each batch the server takes, not the
    stream. Scaled down: a 10 s bound, four real runs given one by one by an input that takes 3 s per run (so the
    stream lasts over 12 s, and only the client's own reading is slow). (A 3 s bound for the server's write of a run
    could pass on a loaded machine: the bound is for normal work, so it is kept well above it.)"""
    runs = _runs(FIXTURES / "tau-bench" / "gpt-4o-airline-mini.json", REAL / "batch-2.4.6")
    assert len(runs) == 4
    key = new_key()
    ts = _open(tmp_path)
    keys = KeyRing.from_entries([key_entry(key, tenant="acme", role="write")])
    with ServiceServer(ts, keys, address="127.0.0.1:0") as server, Client(server.address, api_key=key) as client:
        started = time.monotonic()
        report = client.add(_slowly(runs, 3.0), batch_size=1, timeout=10.0)
        assert time.monotonic() - started > 12
        assert (report.ingested, len(report.rejected)) == (4, 0), report
        assert ts.stats(tenant="acme")["trajectories"] == 4
    ts.close()


class _Hung(pb2_grpc.TrajSearchServicer):
    """A server stuck in its store: it answers WhoAmI, and never reads the Ingest stream it accepted."""

    def __init__(self) -> None:
        self.release = threading.Event()

    def WhoAmI(self, request: Any, context: Any) -> Any:
        return pb2.WhoAmIResponse(tenant="acme", role="write", key_id="k", max_message_bytes=32 * 2**20)

    def Ingest(self, request_iterator: Any, context: Any) -> Any:
        self.release.wait(600)
        return pb2.IngestResponse()


def test_an_ingest_to_a_server_that_stops_reading_is_cancelled_at_the_batch_bound(tmp_path: Path) -> None:
    """Without a deadline on the stream, a hung server must still be noticed: the client cancels the stream once
    the server has taken no batch (or not answered after the last) for ``timeout`` seconds, and says so."""
    hung = _Hung()
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=2))
    pb2_grpc.add_TrajSearchServicer_to_server(hung, server)
    port = server.add_insecure_port("127.0.0.1:0")
    server.start()
    try:
        with Client(f"127.0.0.1:{port}", api_key=new_key()) as client:
            # (the hung server would answer after 600 s: the refusal, not a timing, shows the client gave up first)
            with pytest.raises(DeadlineExceeded, match="the server took no batch of the Ingest stream for 0.5 s"):
                client.add(_runs(REAL / "batch-2.4.6"), timeout=0.5)
    finally:
        hung.release.set()
        server.stop(0)


def test_a_server_stopped_past_its_grace_lets_the_batch_in_hand_finish_before_closing_the_index(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    """SIGTERM past ``--grace`` during an Ingest: the server closed the index while the handler still wrote a batch
    (``MilvusException: should create connection first``, retried and logged 4 times, then ``ingest failed``), the
    batch's runs left half-written, removed only by the store's next open ("removed N run(s) a writer left
    half-written") with their traces left behind. The server now waits for the batch in hand, then closes: the
    client is told the server stopped (``UNAVAILABLE``: rerun), and the store holds each run whole. The stop is
    called while a batch's rows are being written (the store's record of runs in flight is set)."""
    from trajsearch.store.index import PENDING

    runs = _runs(REAL)
    assert len(runs) > 40
    key = new_key()
    ts = _open(tmp_path)
    keys = KeyRing.from_entries([key_entry(key, tenant="acme", role="write")])
    server = ServiceServer(ts, keys, address="127.0.0.1:0").start()
    failed: list[BaseException] = []

    def ingest() -> None:
        with Client(server.address, api_key=key) as client:
            try:
                client.add(runs * 3, batch_size=64)
            except BaseException as exc:  # noqa: BLE001 (the test reads it)
                failed.append(exc)

    caplog.set_level(logging.INFO)
    sender = threading.Thread(target=ingest)
    sender.start()
    deadline = time.monotonic() + 600
    while not ts.index.get_property(PENDING) and sender.is_alive():
        assert time.monotonic() < deadline, "no batch was written"
        time.sleep(0.005)
    server.stop(grace=0)
    sender.join(600)
    assert isinstance(failed[0], Unavailable), failed
    assert not [r for r in caplog.records if "should create connection first" in r.getMessage()
                or "ingest failed" in r.getMessage()]
    caplog.clear()
    reopened = _open(tmp_path)
    try:
        assert not [r for r in caplog.records if "half-written" in r.getMessage()]
        stored = reopened.stats(tenant="acme")["trajectories"]
        traces = [p for p in (tmp_path / "srv-traces").rglob("*.json*")]
        assert 0 < stored == len(traces)
    finally:
        reopened.close()


def _stalled(items: list[Any], release: threading.Event) -> Iterator[Any]:
    """An input that gives its first two runs, then nothing until ``release`` (a client frozen by SIGSTOP, or whose
    host is gone without a connection reset, as the server sees it: a stream that sends no more). With batches of
    one, the first is sent (a batch goes once the next record is read)."""
    yield from items[:2]
    release.wait(600)
    yield from items[2:]


def _ingest_logged(caplog: pytest.LogCaptureFixture) -> dict[str, str]:
    """The server's log line of the last Ingest call: its status code and error (waited for: the handler ends a
    moment after the client was told)."""
    deadline = time.monotonic() + 600
    while not (lines := [r for r in caplog.records
                         if r.getMessage() == "rpc" and getattr(r, "method", "") == "Ingest"]):
        assert time.monotonic() < deadline, "the Ingest call was not logged"
        time.sleep(0.05)
    line = lines[-1]
    return {"code": line.code, "error": getattr(line, "error", "")}


def test_an_ingest_whose_client_sends_nothing_more_is_ended_by_the_server_and_its_write_slot_freed(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    """Since an Ingest stream has no deadline, a frozen or vanished client held a server write slot for good (before,
    at most the stream's hour): with ``--write-slots 1`` every later ingest was refused ``UNAVAILABLE`` "busy"
    until the server restarted, and gRPC keepalive did not free it. The server now ends a stream that sends no batch
    for ``ingest_idle`` seconds (scaled down to 5 s: the batch before the stall must reach the server within it on
    a loaded machine), says so to the client and in its log, and frees the slot."""
    runs = _runs(REAL / "batch-2.4.6")
    key = new_key()
    ts = _open(tmp_path)
    keys = KeyRing.from_entries([key_entry(key, tenant="acme", role="write")])
    release = threading.Event()
    caplog.set_level(logging.INFO, logger="trajsearch.service")
    try:
        with ServiceServer(ts, keys, address="127.0.0.1:0", write_slots=1, max_workers=2, ingest_idle=5.0) as server, \
                Client(server.address, api_key=key) as client:
            # (the stalled input waits 600 s: the server's refusal, not a timing, shows it ended the stream)
            with pytest.raises(DeadlineExceeded, match=r"the server received no batch of this Ingest stream for 5 s "
                                                       r"\(the client frozen, its input that slow, or its network "
                                                       r"gone\) and ended it"):
                client.add(_stalled(runs, release), batch_size=1)
            said = _ingest_logged(caplog)
            assert said["code"] == "DEADLINE_EXCEEDED" and "no batch of this Ingest stream for 5 s" in said["error"]
            release.set()
            assert ts.stats(tenant="acme")["trajectories"] == 1  # the batch before the stall is committed
            report = client.add(runs, batch_size=1)  # the one write slot is free again: the rerun is taken
            assert (report.ingested, report.unchanged) == (len(runs) - 1, 1), report
    finally:
        release.set()
        ts.close()


def test_a_stream_the_server_cancels_while_stopping_is_logged_as_the_servers_doing(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    """A server stopped past ``--grace`` while an Ingest waited for its next batch logged the stream as
    ``CANCELLED: the client cancelled the request stream``: an operator reading the log blamed the client. (The
    client is told ``UNAVAILABLE``, gRPC's "Cancelling all calls", and ``ingest --server`` asks for a rerun.)"""
    runs = _runs(REAL / "batch-2.4.6")
    key = new_key()
    ts = _open(tmp_path)
    keys = KeyRing.from_entries([key_entry(key, tenant="acme", role="write")])
    release = threading.Event()
    server = ServiceServer(ts, keys, address="127.0.0.1:0").start()
    caplog.set_level(logging.INFO, logger="trajsearch.service")

    failed: list[BaseException] = []

    def ingest() -> None:
        with Client(server.address, api_key=key) as client:
            try:
                client.add(_stalled(runs, release), batch_size=1)
            except BaseException as exc:  # noqa: BLE001 (the test reads it)
                failed.append(exc)

    sender = threading.Thread(target=ingest)
    sender.start()
    try:
        deadline = time.monotonic() + 600
        while ts.stats(tenant="acme")["trajectories"] < 1:
            assert time.monotonic() < deadline, "the first batch was not written"
            time.sleep(0.05)
        server.stop(grace=0)
        said = _ingest_logged(caplog)
        assert said["code"] == "UNAVAILABLE", said
        assert said["error"].startswith("the server stopped before this Ingest stream ended (its --grace ran out)")
    finally:
        release.set()
        sender.join(600)
    assert len(failed) == 1 and isinstance(failed[0], Unavailable), failed  # ingest --server: "rerun"


def _two_saves(tmp_path: Path) -> list[Path]:
    """Two backups of ``~/.claude/projects``: an earlier one holding session 1af7fc5e as it was after its first 8 lines
    (Claude Code appends a transcript line by line, so an earlier save is a prefix of the later) beside session
    5c0375b4, and a later one holding 1af7fc5e whole. Both sessions are the real ones under fixtures/claude-code."""
    real = FIXTURES / "claude-code"
    early, later = tmp_path / "a-early", tmp_path / "b-later"
    early.mkdir()
    later.mkdir()
    name = "1af7fc5e-8455-4414-9ccd-011d40f70b2a.jsonl"
    lines = (real / name).read_text().splitlines(keepends=True)
    (early / name).write_text("".join(lines[:8]))
    (later / name).write_text("".join(lines))
    other = "5c0375b4-57a5-4f26-b12d-d022ee4e51b7.jsonl"
    (early / other).write_text((real / other).read_text())
    return [early, later]


def test_a_run_whose_copies_straddle_two_streams_of_one_ingest_is_counted_once(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """An ingest over the server opens a new Ingest stream every 50,000 records, and the server counted a run's copies
    once per stream: a Claude Code session saved twice (an earlier and a later backup), its two copies in two streams,
    was said "ingested 3" for 2 stored runs (a local ingest of the same inputs: ingested 2, replaced 1). The streams
    of one call now share one indexer on the server, so the counts are a local ingest's. The stream bound is scaled
    down to 2 on both sides (the constant both read), so that the session's two copies fall in two streams."""
    from cli_support import run_cli

    from trajsearch.service import client as client_module
    from trajsearch.service.validate import Limits

    inputs = _two_saves(tmp_path)
    for name in ("TRAJSEARCH_TENANT", "TRAJSEARCH_URI", "TRAJSEARCH_TRACES", "TRAJSEARCH_SERVER"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("TRAJSEARCH_MODEL", "hashing")
    monkeypatch.setenv("TRAJSEARCH_HOME", str(tmp_path / "home"))
    counts = ("ingested", "unchanged", "replaced", "rejected")
    local = []
    for _ in range(2):  # what a local ingest says, the first time and the rerun
        code, out, err = run_cli("ingest", *map(str, inputs), "--uri", str(tmp_path / "local.db"), "--traces",
                                 str(tmp_path / "local-traces"), "--tenant", "acme", "--restart", "--json")
        assert code == 0, out + err
        local.append(tuple(json.loads(out)[name] for name in counts))
    assert local == [(2, 0, 1, 0), (0, 2, 1, 0)]
    monkeypatch.setattr(client_module, "MAX_STREAM_RECORDS", 2, raising=False)
    key = new_key()
    ts = _open(tmp_path)
    keys = KeyRing.from_entries([key_entry(key, tenant="acme", role="write")])
    with ServiceServer(ts, keys, address="127.0.0.1:0", limits=Limits(max_stream_records=2)) as server:
        monkeypatch.setenv("TRAJSEARCH_SERVER", server.address)
        monkeypatch.setenv("TRAJSEARCH_API_KEY", key)
        remote = []
        for _ in range(2):
            code, out, err = run_cli("ingest", *map(str, inputs), "--json")
            assert code == 0, out + err
            remote.append(tuple(json.loads(out)[name] for name in counts))
        assert remote[0] == local[0]
        # the rerun writes nothing: the earlier save gives way to the stored later one (indexer._note_other_files)
        # and is unchanged, as a local ingest counts it when the two copies fall in two of its batches
        assert remote[1] == (0, 3, 0, 0)
        assert ts.stats(tenant="acme")["trajectories"] == 2
    ts.close()


def test_an_input_yielding_runs_slowly_has_its_batches_sent_before_the_server_ends_the_stream(
        tmp_path: Path, monkeypatch) -> None:
    """Review RZ1: a batch was sent only when full, so an input yielding runs more slowly than ``--ingest-idle`` /
    ``batch_size`` (runs pushed as agents finish) kept its first batch back until the server ended the stream, the
    runs already taken from the input lost. A batch is now sent once its oldest run has waited ``FLUSH_AFTER_S``.
    Scaled down: flush after 0.5 s, the server's idle bound 15 s, six runs 3 s apart (18 s: longer than the bound,
    so a batch held until full is refused; a flush late by up to 14 s on a loaded machine still passes), batches of
    eight."""
    import trajsearch.service.client as client_module

    monkeypatch.setattr(client_module, "FLUSH_AFTER_S", 0.5)
    runs = _runs(FIXTURES / "tau-bench" / "gpt-4o-airline-mini.json", REAL / "batch-2.4.6")
    runs = [r for r in runs[:3] for _ in range(2)]  # six items of the input: three real runs, each twice
    key = new_key()
    ts = _open(tmp_path)
    keys = KeyRing.from_entries([key_entry(key, tenant="acme", role="write")])
    with ServiceServer(ts, keys, address="127.0.0.1:0", ingest_idle=15.0) as server, \
            Client(server.address, api_key=key) as client:
        report = client.add(_slowly(runs, 3.0), batch_size=8)
    assert (report.ingested, report.ingested + report.unchanged + report.replaced) == (3, 6)
    ts.close()


def test_the_answer_after_the_last_batch_may_take_a_bound_for_each_batch_still_unread(
        tmp_path: Path, monkeypatch) -> None:
    """Review RZ1: gRPC takes many small batches into its window at once, so after the last one the server may
    still have all of them to write; the client gave that whole backlog one batch's bound and called a server
    writing steadily "hung". Scaled down: a server whose every batch takes 1 s more (a slow CPU: the indexer's
    write, as run by the real server, is given the time), a 6 s bound (room for a loaded machine's write), twelve
    batches of one run: a backlog of 12 s or more, twice the bound."""
    from trajsearch.indexer import Indexer

    write = Indexer.add

    def slow_write(self, runs, *args, **kwargs):
        time.sleep(1.0)
        return write(self, runs, *args, **kwargs)

    monkeypatch.setattr(Indexer, "add", slow_write)
    runs = _runs(FIXTURES / "tau-bench" / "gpt-4o-airline-mini.json", REAL / "batch-2.4.6")
    runs = [r.trajectory.model_copy(update={"trajectory_id": f"{r.trajectory.trajectory_id}-{n}"})
            for n in range(3) for r in runs]
    key = new_key()
    ts = _open(tmp_path)
    keys = KeyRing.from_entries([key_entry(key, tenant="acme", role="write")])
    with ServiceServer(ts, keys, address="127.0.0.1:0") as server, Client(server.address, api_key=key) as client:
        report = client.add(runs, batch_size=1, timeout=6.0)
    assert report.ingested == 12
    ts.close()

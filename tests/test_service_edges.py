"""The service's edges (issue 13): a slow object store stalls nothing but GetTrace; every bad value
is INVALID_ARGUMENT naming its field; and the security decisions of the README's "Security" section.

Real grpcio on loopback, real Milvus Lite, the fast test embedder. Ordered by events: the silent
S3 endpoint says when connections arrive, calls are awaited, nothing sleeps.
"""

from __future__ import annotations

import errno
import json
import os
import re
import socket
import threading
import time
from concurrent.futures import ThreadPoolExecutor, as_completed

import grpc
import pytest

from trajsearch.client import Client, NotFound, Unavailable
from trajsearch.embed import HashingEmbedder
from trajsearch.search import TrajSearch
from trajsearch.service.protos import PROTO, pb2, pb2_grpc
from trajsearch.service.server import (
    InsecureAddressError, ServiceServer, check_metrics_address, is_loopback, serve_metrics,
)
from trajsearch.service.trace_reads import TraceReads
from trajsearch.service.validate import Limits
from trajsearch.store.traces import S3TraceStore

from conftest import failing_run, make_run
from service_support import (  # noqa: F401 (fixture)
    SilentS3, key_ring, raw_stream, raw_unary, rpc_log, s3_credentials, serve_store,
)

LIMITS = Limits(max_text_chars=2_000, max_message_bytes=4 * 1024 * 1024, max_batch_records=50, max_k=50)


@pytest.fixture(scope="module")
def keys():
    return key_ring(acme_w=dict(tenant="acme", role="write"), acme_r=dict(tenant="acme", role="read"),
                    beta_r=dict(tenant="beta", role="read"),
                    v2_r=dict(tenant="acme", role="read", key_id="acme-v2-read", env_versions=["v2"]),
                    v2_w=dict(tenant="acme", role="write", key_id="acme-v2-write", env_versions=["v2"]))


@pytest.fixture(scope="module")
def server(tmp_path_factory, keys):
    tmp = tmp_path_factory.mktemp("edges")
    srv = serve_store(tmp, keys[1], [
        make_run("a1", env_version="v1"),
        failing_run("a2", "OSError: [Errno 28] No space left on device", env_version="v2"),
        make_run("a3", env_version="v1", task="Rotate the gateway certificate"),
        make_run("b1", tenant="beta", env_version="v1"),
    ], LIMITS)
    srv.root = str(tmp)
    yield srv
    srv.stop(grace=2)


def md(keys, name, *extra):
    return (("authorization", f"Bearer {keys[0][name]}"), *extra)


def _error(server, method, request, metadata):
    stub = pb2_grpc.TrajSearchStub(grpc.insecure_channel(server.address))
    with pytest.raises(grpc.RpcError) as err:
        getattr(stub, method)(request, metadata=metadata, timeout=600)
    return err.value


# -- a slow object store -----------------------------------------------------------------------


def test_a_silent_object_store_fails_gettrace_fast_and_stalls_nothing_else(tmp_path, keys, monkeypatch):
    """Ten GetTrace calls, five per tenant, into an S3 endpoint that never answers: two wait (the trace-read
    slots, one per tenant), eight fail busy, every tenant's Search and WhoAmI go on, and the waiting two
    end UNAVAILABLE."""
    s3_credentials(monkeypatch)
    ts = TrajSearch.open(str(tmp_path / "m.db"), traces=str(tmp_path / "t"), embedder=HashingEmbedder())
    ts.add([make_run("a1"), make_run("b1", tenant="beta")])
    silent = SilentS3()
    ts.traces = S3TraceStore("traces", endpoint_url=silent.url, attempts=1, timeout=600)  # it would wait "forever"
    srv = ServiceServer(ts, keys[1], address="127.0.0.1:0", max_workers=4, trace_slots=2, trace_timeout=600).start()
    uris = [(tenant, ts.traces.uri_for(tenant, f"r{i}")) for i in range(5) for tenant in ("acme", "beta")]
    try:
        with Client(srv.address, keys[0]["acme_r"], timeout=600) as acme, \
                Client(srv.address, keys[0]["beta_r"], timeout=600) as beta, ThreadPoolExecutor(10) as pool:

            def get(tenant, uri):
                try:
                    (acme if tenant == "acme" else beta).get_trace(uri)
                except Exception as exc:  # noqa: BLE001
                    return exc
                return None

            calls = [pool.submit(get, *uri) for uri in uris]
            silent.wait_connections(2)  # two reads reached the store and hang there
            refused = []
            for done in as_completed(calls):
                refused.append(done.result())
                if len(refused) == 8:
                    break
            assert all(isinstance(e, Unavailable) and "trace reads busy" in e.details for e in refused)
            # the store still holds two calls: searches and key checks of every tenant are served meanwhile
            for client, tenant in ((acme, "acme"), (beta, "beta")):
                for _ in range(3):
                    assert client.whoami()["tenant"] == tenant
                    assert {h.tenant for h in client.search("payments", k=5)} == {tenant}
                assert client.run(f"{tenant[0]}1") is not None
            assert sum(not c.done() for c in calls) == 2  # the two in the store cannot end before it does
            silent.close()  # the store hangs up: the two waiting reads end
            rest = [c.result() for c in calls]
        assert all(isinstance(e, Unavailable) for e in rest), rest
        assert sum("trace store unavailable" in e.details for e in rest) == 2
        codes = srv.metrics.snapshot()["methods"]["GetTrace"]["codes"]
        assert codes == {"UNAVAILABLE": 10}  # and no client retried them (the store already had)
    finally:
        silent.close()
        srv.stop(grace=2)


def test_gettrace_waits_at_most_its_trace_timeout(tmp_path, keys, monkeypatch):
    """The store would keep the read for 10 minutes; the call gives up after the server's trace timeout."""
    s3_credentials(monkeypatch)
    ts = TrajSearch.open(str(tmp_path / "m.db"), traces=str(tmp_path / "t"), embedder=HashingEmbedder())
    silent = SilentS3()
    ts.traces = S3TraceStore("traces", endpoint_url=silent.url, attempts=1, timeout=600)
    srv = ServiceServer(ts, keys[1], address="127.0.0.1:0", max_workers=4, trace_slots=1, trace_timeout=1).start()
    try:
        with Client(srv.address, keys[0]["acme_r"], timeout=600) as acme:
            with pytest.raises(Unavailable):  # not DEADLINE_EXCEEDED: the server answered long before 600 s
                acme.get_trace(ts.traces.uri_for("acme", "x"))
            silent.wait_connections(1)
            with pytest.raises(Unavailable, match="busy"):  # the hanging read holds the slot: refused after a wait
                acme.get_trace(ts.traces.uri_for("acme", "y"))
            assert acme.whoami()["tenant"] == "acme"
    finally:
        silent.close()
        srv.stop(grace=2)


class GatedStore:
    """The real file trace store, whose reads of ``tenant``'s traces wait in it until ``gate`` is set."""

    def __init__(self, store, tenant):
        self.store, self.tenant, self.gate = store, tenant, threading.Event()
        self.arrived, self.changed = 0, threading.Condition()

    def __getattr__(self, name):
        return getattr(self.store, name)

    def notify(self):
        with self.changed:
            self.changed.notify_all()

    def get(self, uri, *, tenant):
        if tenant == self.tenant:
            with self.changed:
                self.arrived += 1
                self.changed.notify_all()
            self.gate.wait(600)
        return self.store.get(uri, tenant=tenant)


def test_one_tenants_trace_reads_leave_the_others_their_share(tmp_path, keys):
    """Two slots: beta's reads wait in the store (held there by the test) and may hold one slot only, so
    acme's read of its own trace is answered meanwhile; beta's reads end OK once the store answers."""
    ts = TrajSearch.open(str(tmp_path / "m.db"), traces=str(tmp_path / "t"), embedder=HashingEmbedder())
    ts.add([make_run("a1"), make_run("b1", tenant="beta"), make_run("b2", tenant="beta")])
    gated = ts.traces = GatedStore(ts.traces, "beta")
    srv = ServiceServer(ts, keys[1], address="127.0.0.1:0", max_workers=4, trace_slots=2, trace_timeout=600).start()
    try:
        with Client(srv.address, keys[0]["acme_r"], timeout=600) as acme, \
                Client(srv.address, keys[0]["beta_r"], timeout=600) as beta, ThreadPoolExecutor(2) as pool:
            uris = [beta.run(tid).trace_uri for tid in ("b1", "b2")]
            try:
                first = pool.submit(beta.get_trace, uris[0])
                with gated.changed:
                    assert gated.changed.wait_for(lambda: gated.arrived == 1, 600)
                second = pool.submit(beta.get_trace, uris[1])  # beta's share is taken: it waits, or is refused
                second.add_done_callback(lambda _: gated.notify())
                with gated.changed:
                    gated.changed.wait_for(lambda: gated.arrived == 2 or second.done(), 120)  # (unasserted: it orders)
                assert acme.get_trace(acme.run("a1").trace_uri).trajectory_id == "a1"
            finally:
                gated.gate.set()
            assert first.result(600).trajectory_id == "b1"
    finally:
        gated.gate.set()
        srv.stop(grace=2)


def test_a_read_after_a_finished_one_finds_its_slot_free(tmp_path):
    """Race: a read handed its trace to its caller, then gave its slot back, so the caller's next read could find
    that finished read's slot still taken and, allowed no wait, be refused "trace reads busy" with nothing else
    reading (313 of 500 reads one after another, with the thread switch interval made fine so that the caller runs
    between the two steps, as a loaded machine's scheduler may). The slot is now given back first."""
    import sys

    ts = TrajSearch.open(str(tmp_path / "m.db"), traces=str(tmp_path / "t"), embedder=HashingEmbedder())
    interval = sys.getswitchinterval()
    try:
        uri = ts.traces.put(make_run("a1"))
        reads = TraceReads(ts.traces, slots=1, queue_wait=0)  # a taken slot is refused at once
        sys.setswitchinterval(1e-6)
        read = [reads.get(uri, tenant="acme").trajectory_id for _ in range(300)]
    finally:
        sys.setswitchinterval(interval)
        ts.close()
    assert read == ["a1"] * 300


def test_a_trace_read_waits_for_a_taken_slot_instead_of_failing(tmp_path):
    """One slot, held by a read the test keeps in the store: a second read of the same tenant waits for
    it (up to its queue wait, 600 s here) and is answered once the first one ends."""
    ts = TrajSearch.open(str(tmp_path / "m.db"), traces=str(tmp_path / "t"), embedder=HashingEmbedder())
    try:
        ts.add([make_run("a1"), make_run("a2")])
        gated = GatedStore(ts.traces, "acme")
        reads = TraceReads(gated, slots=1, timeout=600, queue_wait=600)
        uris = [ts.run(tid, tenant="acme").trace_uri for tid in ("a1", "a2")]
        with ThreadPoolExecutor(2) as pool:
            try:
                first = pool.submit(reads.get, uris[0], tenant="acme")
                with gated.changed:
                    assert gated.changed.wait_for(lambda: gated.arrived == 1, 600)
                second = pool.submit(reads.get, uris[1], tenant="acme")
                for _ in range(12_000):  # until it waits for the slot (or, unfixed, has failed at once)
                    if reads.waiting or second.done():
                        break
                    time.sleep(0.01)
            finally:
                gated.gate.set()
            assert [first.result(600).trajectory_id, second.result(600).trajectory_id] == ["a1", "a2"]
    finally:
        ts.close()


def test_writes_into_a_silent_store_hold_at_most_their_write_slots(tmp_path, keys, monkeypatch):
    """An Ingest stuck on the trace store holds its one write slot; a second write is refused at once,
    reads go on, and the stuck one ends UNAVAILABLE (not INTERNAL) when the store hangs up."""
    s3_credentials(monkeypatch)
    ts = TrajSearch.open(str(tmp_path / "m.db"), traces=str(tmp_path / "t"), embedder=HashingEmbedder())
    ts.add([make_run("a1")])
    silent = SilentS3()
    ts.traces = S3TraceStore("traces", endpoint_url=silent.url, attempts=1, timeout=600)
    srv = ServiceServer(ts, keys[1], address="127.0.0.1:0", max_workers=3, write_slots=1).start()
    try:
        with Client(srv.address, keys[0]["acme_w"], timeout=600) as acme, ThreadPoolExecutor(1) as pool:
            stuck = pool.submit(acme.add, [make_run("w1")])
            silent.wait_connections(1)  # the first trace write is in the store, which never answers
            with pytest.raises(Unavailable, match="busy with 1 write,"):
                acme.add([make_run("w2")])
            with pytest.raises(Unavailable, match="busy with 1 write,"):
                acme.delete("a1")
            for _ in range(3):
                assert acme.whoami()["tenant"] == "acme" and acme.search("payments", k=3)
            assert not stuck.done()
            silent.close()  # the store hangs up: the indexer's retries meet a closed port
            with pytest.raises(Unavailable, match="writing failed"):
                stuck.result()
            assert acme.run("w1") is None and acme.run("a1") is not None
    finally:
        silent.close()
        srv.stop(grace=2)


# -- every bad value names its field -----------------------------------------------------------


def test_invalid_utf8_is_invalid_argument_naming_the_field(server, keys, rpc_log):
    text = pb2.SearchRequest(text="payments", k=3).SerializeToString().replace(b"payments", b"pay\xffents")
    nested = pb2.ExemplarsRequest(task="x", context=pb2.RuntimeContext(env_versions=["v1", "v9"]))
    nested = nested.SerializeToString().replace(b"v9", b"\xc3\x28")
    cases = (("Search", text, "text"), ("Exemplars", nested, "context.env_versions[1]"),
             ("Search", b"\x0a\xff\xff", "text"), ("Run", b"\xff", "request"))
    for n, (method, data, field) in enumerate(cases):
        with pytest.raises(grpc.RpcError) as err:
            raw_unary(server.address, method, data, md(keys, "acme_r", ("x-request-id", f"utf8-{n}")))
        assert err.value.code() == grpc.StatusCode.INVALID_ARGUMENT, err.value.details()
        assert err.value.details().startswith(f"{field}: "), err.value.details()
        line = rpc_log.wait(f"utf8-{n}")  # logged like any call
        assert (line.code, line.method, line.tenant) == ("INVALID_ARGUMENT", method, "acme")
    record = pb2.IngestBatch(records=[pb2.TrajectoryRecord(json="{}", source="ok")]).SerializeToString()
    with pytest.raises(grpc.RpcError) as err:
        raw_stream(server.address, "Ingest", [record, record.replace(b"ok", b"\xffk")], md(keys, "acme_w"))
    assert err.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert err.value.details().startswith("batches[1].records[0].source: not valid UTF-8")


def test_huge_values_are_clipped_in_the_error(server, keys):
    huge = "x" * 1_000_000
    for method, request, field in (
        ("Search", pb2.SearchRequest(text="x", mode=huge), "mode"),
        ("Search", pb2.SearchRequest(text="x", levels=[huge]), "levels[0]"),
        ("Run", pb2.RunRequest(trajectory_id=huge), "trajectory_id"),
        ("Run", pb2.RunRequest(trajectory_id="a1", level=huge), "level"),
        ("SearchPastRuns", pb2.SearchPastRunsRequest(session_id="s", query="x", kind=huge), "kind"),
        ("GetTrace", pb2.GetTraceRequest(trace_uri=huge), "trace_uri"),
    ):
        error = _error(server, method, request, md(keys, "acme_r"))
        assert error.code() == grpc.StatusCode.INVALID_ARGUMENT, (field, error.details()[:200])
        assert error.details().startswith(f"{field}: ") and len(error.details()) <= 1_000


@pytest.mark.parametrize("now", [2**62, 10**15, -1, 2**63 - 1, -(2**63)])
def test_context_now_out_of_range_names_the_field(server, keys, now):
    for method, request in (
        ("Exemplars", pb2.ExemplarsRequest(task="payments", context=pb2.RuntimeContext(now=now))),
        ("Warnings", pb2.WarningsRequest(text="payments", context=pb2.RuntimeContext(now=now))),
        ("SearchPastRuns", pb2.SearchPastRunsRequest(session_id="now", query="x", context=pb2.RuntimeContext(now=now))),
    ):
        error = _error(server, method, request, md(keys, "acme_r"))
        assert error.code() == grpc.StatusCode.INVALID_ARGUMENT
        assert error.details().startswith("context.now: "), error.details()


def test_a_valid_context_now_is_used(server, keys):
    with Client(server.address, keys[0]["acme_r"]) as c:
        from datetime import datetime, timezone

        assert c.exemplars("Fix the failing unit test", now=datetime(2030, 1, 1, tzinfo=timezone.utc)).strategy


def test_a_task_over_the_search_limit_is_answered_not_refused(server, keys):
    """Probe E2, E2-3: Exemplars / Warnings refused a real 22,775-character SWE-bench issue (INVALID_ARGUMENT
    "task: too long"): the runtime clips it as ingest clips a task; only past 1,000,000 characters is a call refused."""
    long_task = "Fix the failing unit test in payments. " + "pip-package 1.0.0\n" * 1_400  # 25,239 characters
    with Client(server.address, keys[0]["acme_r"]) as c:
        assert c.exemplars(long_task).strategy and isinstance(c.warnings(long_task).items, list)
    error = _error(server, "Exemplars", pb2.ExemplarsRequest(task="x" * 1_000_001), md(keys, "acme_r"))
    assert error.code() == grpc.StatusCode.INVALID_ARGUMENT and error.details().startswith("task: too long")


@pytest.mark.parametrize("method,request_,field", [
    ("SearchPastRuns", pb2.SearchPastRunsRequest(session_id="s", query="x", k=6), "k"),
    ("SearchPastRuns", pb2.SearchPastRunsRequest(session_id="s", query=""), "query"),
    ("SearchPastRuns", pb2.SearchPastRunsRequest(session_id="s", query="x" * 1_000_001), "query"),
    ("SearchPastRuns", pb2.SearchPastRunsRequest(session_id="s", query="x", kind="all"), "kind"),
    ("Expand", pb2.ExpandRequest(trajectory_id="a1", step_index=2**62), "step_index"),
    ("Expand", pb2.ExpandRequest(trajectory_id="a1", step_index=3, step_end=1), "step_end"),
    ("Exemplars", pb2.ExemplarsRequest(task="x", token_budget=-5), "token_budget"),
    ("Exemplars", pb2.ExemplarsRequest(task="x", context=pb2.RuntimeContext(tools_available=["a\nb"])),
     "context.tools_available[0]"),
])
def test_more_invalid_arguments_name_the_field(server, keys, method, request_, field):
    error = _error(server, method, request_, md(keys, "acme_r"))
    assert error.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert error.details().startswith(f"{field}: "), error.details()


#: A valid request of each call with a ``k`` or a repeated filter field, and a valid value of each such field.
_BOUNDED_CALLS = {
    "Search": lambda: pb2.SearchRequest(text="disk"), "SimilarRuns": lambda: pb2.SimilarRunsRequest(text="disk"),
    "Exemplars": lambda: pb2.ExemplarsRequest(task="disk"), "Warnings": lambda: pb2.WarningsRequest(text="disk"),
    "SearchPastRuns": lambda: pb2.SearchPastRunsRequest(query="disk"), "Failures": pb2.FailuresRequest,
}
_VALUES = {"levels": "task", "outcomes": "failure"}


def _proto_header_bounds() -> tuple[dict[str, str], int, dict[str, int]]:
    """What the .proto's header tells an outside team of ``k`` (each call's highest, a number or the server's
    --max-k) and of a repeated filter field (the most values, and the fields said to take another number)."""
    header = " ".join(line.removeprefix("//").strip() for line in PROTO.read_text().split("\nsyntax")[0].splitlines())
    k_said = re.search(r"\bk: (.*?)\. A repeated filter field", header).group(1)
    ks = {name: high for names, high in re.findall(r"([A-Z]\w*(?: and [A-Z]\w*)*) 1 to (\d+|the server's --max-k)",
                                                    k_said) for name in names.split(" and ")}
    most, others = re.search(r"A repeated filter field: at most (\d+) values \((.*?)\)", header).groups()
    named = re.findall(r"([\w.]+(?: and [\w.]+)*) ([\d,]+)", others)
    exceptions = {name: int(n.replace(",", "")) for names, n in named for name in names.split(" and ")}
    return ks, int(most), exceptions


def test_the_proto_header_states_the_k_and_list_bounds_each_call_keeps(server, keys):
    """Review FRSVC2: the header said k ran "1 to the server's --max-k" for every call (Exemplars and Warnings stop at
    10, SearchPastRuns at 5) and that a repeated filter field took at most 32 values but exclude_trajectory_ids and
    RuntimeContext.tools_available (FailuresRequest.tools takes 256). Each bound it states is taken, one more
    refused."""
    ks, most, exceptions = _proto_header_bounds()
    stub, auth = pb2_grpc.TrajSearchStub(grpc.insecure_channel(server.address)), md(keys, "acme_r")
    sessions = iter(range(1_000))

    def call(method: str, fill) -> grpc.RpcError | None:
        request = _BOUNDED_CALLS[method]()
        if "session_id" in request.DESCRIPTOR.fields_by_name:  # the runtime tool's search cap counts per session
            request.session_id = f"bounds-{next(sessions)}"
        fill(request)
        try:
            getattr(stub, method)(request, metadata=auth, timeout=600)
        except grpc.RpcError as error:
            return error
        return None

    with_k = {m for m, make in _BOUNDED_CALLS.items() if "k" in make().DESCRIPTOR.fields_by_name}
    assert set(ks) == with_k, f"the header names no k bound of {with_k - set(ks)}"
    for method, high in ks.items():
        high = server.limits.max_k if high == "the server's --max-k" else int(high)
        assert call(method, lambda r: setattr(r, "k", high)) is None, (method, high)
        refused = call(method, lambda r: setattr(r, "k", high + 1))
        assert refused and refused.details().startswith(f"k: must be a whole number from 1 to {high}"), (method, high)
    for method, make in _BOUNDED_CALLS.items():
        request = make()
        places = [("", request.DESCRIPTOR)] + [("context.", f.message_type) for f in request.DESCRIPTOR.fields
                                                if f.name == "context"]
        for prefix, message in places:
            for field in (f.name for f in message.fields if f.is_repeated and f.type == f.TYPE_STRING):
                limit = exceptions.get(f"{message.name}.{field}", exceptions.get(field, most))

                def fill(request, n, prefix=prefix, field=field):
                    values = [f"r{i}" if field.endswith("_ids") else _VALUES.get(field, "v") for i in range(n)]
                    getattr(request.context if prefix else request, field).extend(values)

                assert call(method, lambda r: fill(r, limit)) is None, (method, prefix + field, limit)
                refused = call(method, lambda r: fill(r, limit + 1))
                said = f"{prefix}{field}: at most {limit} values"
                assert refused and refused.details().startswith(said), (method, said, refused and refused.details())


def test_a_refused_tool_call_spends_no_search(server, keys):
    with Client(server.address, keys[0]["acme_r"]) as c:
        with pytest.raises(ValueError, match="^INVALID_ARGUMENT: k: "):
            c.search_past_runs("payments", session_id="spend", k=9)
        assert c.search_past_runs("payments", session_id="spend")["searches_left"] == 2  # the cap is 3


# -- security decisions (README "Security") ----------------------------------------------------


def test_two_different_keys_in_one_call_are_refused(server, keys):
    both = (("authorization", f"Bearer {keys[0]['acme_r']}"), ("x-api-key", keys[0]["beta_r"]))
    error = _error(server, "WhoAmI", pb2.WhoAmIRequest(), both)
    assert error.code() == grpc.StatusCode.UNAUTHENTICATED and "two different API keys" in error.details()
    twice = (("authorization", f"Bearer {keys[0]['beta_r']}"), ("x-api-key", keys[0]["beta_r"]))
    reply = pb2_grpc.TrajSearchStub(grpc.insecure_channel(server.address)).WhoAmI(
        pb2.WhoAmIRequest(), metadata=twice, timeout=600)
    assert reply.tenant == "beta"  # the same key twice is one key


def test_a_pinned_key_reads_and_writes_only_inside_its_pins(server, keys):
    """acme-v2 keys: a1 and a3 (env v1) do not exist for them, by id or by trace URI; a2 (v2) does."""
    with Client(server.address, keys[0]["acme_w"]) as full:
        a1, a2 = full.run("a1"), full.run("a2")
        assert a1 is not None and a2 is not None
    with Client(server.address, keys[0]["v2_r"]) as pinned:
        assert pinned.run("a1") is None and pinned.run("a1", level="summary") is None
        assert pinned.run("a2") is not None
        with pytest.raises(NotFound) as hidden:
            pinned.get_trace(a1.trace_uri)
        with pytest.raises(NotFound) as missing:
            pinned.get_trace(a1.trace_uri.replace(a1.trace_uri.rsplit("/", 1)[1], "zz-0123456789abcdef.json.gz"))
        assert hidden.value.details == missing.value.details  # no telling "hidden" from "missing"
        assert pinned.get_trace(a2.trace_uri).trajectory_id == "a2"
        with pytest.raises(NotFound):
            pinned.similar_runs("a1")
        assert pinned.similar_runs("a2") is not None
    stub = pb2_grpc.TrajSearchStub(grpc.insecure_channel(server.address))
    steps = stub.Expand(pb2.ExpandRequest(trajectory_id="a1", step_index=0, after=2), metadata=md(keys, "v2_r"),
                        timeout=600).steps
    assert list(steps) == []
    assert stub.Expand(pb2.ExpandRequest(trajectory_id="a1", step_index=0, after=2), metadata=md(keys, "acme_r"),
                       timeout=600).steps
    with Client(server.address, keys[0]["v2_w"]) as writer:
        assert writer.delete("a3") is False  # outside the pins: not there for this key
        report = writer.add([make_run("p1", env_version="v1"), make_run("p2", env_version="v2"), make_run("p3")])
        assert [r["status"] for r in report.results] == ["rejected", "accepted", "rejected"]
        assert all(r["reason"].startswith("env_version:") for r in report.results if r["status"] == "rejected")
    with Client(server.address, keys[0]["acme_r"]) as full:
        assert full.run("a3") is not None and full.run("p2") is not None and full.run("p1") is None


def test_a_pinned_key_cannot_replace_a_run_outside_its_pins(server, keys):
    """A v2 writer sends a v2 record under the id of a stored v1 run: refused per record, naming only the
    id; the v1 run, its rows and its trace stay as they were. A new id in the same batch is written."""
    with Client(server.address, keys[0]["acme_w"]) as full:
        full.add([failing_run("h1", "KeyError: 'ledger_id'", env_version="v1", task="Reconcile the ledger")])
        before = full.run("h1")
        trace = full.get_trace(before.trace_uri).model_dump_json()
    intruder = make_run("h1", env_version="v2", task="overwritten", steps=[])
    with Client(server.address, keys[0]["v2_w"]) as writer:
        report = writer.add([intruder, make_run("h2", env_version="v2")])
        assert writer.run("h1") is None  # still not there for this key
    assert [(r["status"], r["trajectory_id"]) for r in report.results] == [("rejected", "h1"), ("accepted", "h2")]
    reason = report.results[0]["reason"]
    assert reason.startswith("trajectory_id:") and "v1" not in reason and "ledger" not in reason.lower()
    with Client(server.address, keys[0]["acme_r"]) as full:
        after = full.run("h1")
        assert (after.text, after.env_version) == (before.text, "v1")
        assert full.run("h1", level="failure") is not None
        assert full.get_trace(before.trace_uri).model_dump_json() == trace
        assert full.run("h2") is not None


def test_a_pinned_key_cannot_remove_a_run_outside_its_pins_by_naming_it_superseded(server, keys):
    """A record may name runs it supersedes (``metadata.supersedes``), which ingest removes: a v2 writer naming a
    stored v1 run is refused per record, naming nothing of it, and the v1 run stays; naming a v2 run removes it."""
    with Client(server.address, keys[0]["acme_w"]) as full:
        full.add([make_run("h1", env_version="v1"), make_run("h2", env_version="v2")])
    with Client(server.address, keys[0]["v2_w"]) as writer:
        report = writer.add([make_run("h3", env_version="v2", metadata={"supersedes": ["h1"]}),
                             make_run("h4", env_version="v2", metadata={"supersedes": ["h2"]})])
    assert [(r["status"], r["trajectory_id"]) for r in report.results] == [("rejected", "h3"), ("accepted", "h4")]
    assert report.superseded == 1  # h2, counted as the embedded ingest counts it (the reply said 0)
    assert report.results[0]["reason"].startswith("metadata.supersedes:") and "v1" not in report.results[0]["reason"]
    with Client(server.address, keys[0]["acme_r"]) as full:
        assert full.run("h1") is not None and full.run("h2") is None and full.run("h3") is None


def test_a_pinned_key_cannot_name_a_run_outside_its_pins_as_a_former_id(server, keys):
    """``metadata.former_ids`` (a mini-swe-agent run's id before round 27) removes the run stored there when it holds
    the same run: a v2 writer naming a stored v1 run is refused as for ``supersedes``, and the v1 run stays."""
    with Client(server.address, keys[0]["acme_w"]) as full:
        full.add([make_run("f1", env_version="v1")])
    with Client(server.address, keys[0]["v2_w"]) as writer:
        report = writer.add([make_run("f2", env_version="v2", metadata={"former_ids": ["f1"]})])
    assert [(r["status"], r["trajectory_id"]) for r in report.results] == [("rejected", "f2")]
    assert report.results[0]["reason"].startswith("metadata.former_ids:") and "v1" not in report.results[0]["reason"]
    with Client(server.address, keys[0]["acme_r"]) as full:
        assert full.run("f1") is not None and full.run("f2") is None


def test_stats_of_a_pinned_key_count_only_the_runs_inside_its_pins(tmp_path, keys):
    """acme holds two v1 runs and one v2 run; beta holds that v2 run alone. The acme-v2 key's counts are
    exactly beta's (one run, its rows level by level); the unpinned acme key counts all three."""
    v2 = dict(env_version="v2", task="Migrate the ledger schema")
    srv = serve_store(tmp_path, keys[1], [
        make_run("s1", env_version="v1"), failing_run("s2", "OSError: disk full", env_version="v1"),
        failing_run("s3", "KeyError: 'ledger_id'", **v2), failing_run("s3", "KeyError: 'ledger_id'", tenant="beta", **v2),
    ], LIMITS)
    try:
        with Client(srv.address, keys[0]["v2_r"]) as pinned, Client(srv.address, keys[0]["beta_r"]) as beta, \
                Client(srv.address, keys[0]["acme_r"]) as full:
            mine, same, whole = pinned.stats(), beta.stats(), full.stats()
    finally:
        srv.stop(grace=2)
    assert (mine["tenant"], mine["trajectories"], mine["runs_by_outcome"]) == ("acme", 1, {"failure": 1})
    assert (mine["rows"], mine["rows_by_level"]) == (same["rows"], same["rows_by_level"])
    assert whole["trajectories"] == 3 and whole["rows"] > mine["rows"]


def test_other_keys_sessions_do_not_evict_a_capped_session(tmp_path, keys, monkeypatch):
    """Sessions are kept per key (4 each here): beta's capped session stays capped while an acme key
    opens 12 sessions; acme's own oldest session is the one evicted (its cap starts again)."""
    import trajsearch.service.servicer as servicer

    monkeypatch.setattr(servicer, "MAX_SESSIONS", 4)
    srv = serve_store(tmp_path, keys[1], [make_run("c1"), make_run("c2", tenant="beta")], LIMITS)
    try:
        with Client(srv.address, keys[0]["beta_r"]) as beta, Client(srv.address, keys[0]["acme_r"]) as acme:
            left = [beta.search_past_runs("pytest", session_id="victim")["searches_left"] for _ in range(3)]
            assert left == [2, 1, 0] and beta.search_past_runs("pytest", session_id="victim")["status"] == "limit_reached"
            assert acme.search_past_runs("pytest", session_id="flood-0")["searches_left"] == 2
            for n in range(1, 13):
                acme.search_past_runs("pytest", session_id=f"flood-{n}")
            assert beta.search_past_runs("pytest", session_id="victim")["status"] == "limit_reached"
            assert acme.search_past_runs("pytest", session_id="flood-0")["searches_left"] == 2  # its own, evicted
    finally:
        srv.stop(grace=2)


def test_metrics_rpc_shows_only_the_callers_tenant(server, keys):
    with Client(server.address, keys[0]["beta_r"]) as beta, Client(server.address, keys[0]["acme_r"]) as acme:
        for _ in range(3):
            beta.stats()  # no acme key calls Stats in this module
        acme.whoami()
        mine, theirs = acme.metrics(), beta.metrics()
    assert "Stats" not in mine["methods"]
    assert theirs["methods"]["Stats"]["calls"] == 3
    everything = server.metrics.snapshot()  # the operator's view (--metrics) has every tenant
    assert everything["methods"]["Stats"]["calls"] == 3
    assert everything["methods"]["WhoAmI"]["calls"] > theirs["methods"].get("WhoAmI", {"calls": 0})["calls"]


def test_errors_do_not_reveal_the_trace_store_root(server, keys):
    root = server.ts.traces.location
    assert root.startswith("file://")
    probes = ["file:///etc/passwd", f"{root}/../../etc/passwd", f"{root}/beta/x-0123456789abcdef.json.gz",
              f"{root}/acme/not-a-trace", "s3://bucket/acme/x-0123456789abcdef.json.gz", f"{root}/acme/%2e%2e/x"]
    with Client(server.address, keys[0]["acme_r"]) as c:
        for uri in probes:
            with pytest.raises((ValueError, LookupError)) as err:
                c.get_trace(uri)
            details = err.value.details
            assert details.startswith("trace_uri: ") and server.root not in details, details
            assert root.removeprefix("file://") not in details, details


def test_plaintext_beyond_loopback_needs_insecure(tmp_path, keys):
    for address in ("127.0.0.1:1", "[::1]:1", "localhost:1", "unix:/tmp/x.sock", "127.0.0.2:9"):
        assert is_loopback(address), address
    for address in ("0.0.0.0:1", "[::]:1", ":1", "example.com:1", "10.1.2.3:1", "[2001:db8::1]:1"):
        assert not is_loopback(address), address
    ts = TrajSearch.open(str(tmp_path / "m.db"), traces=str(tmp_path / "t"), embedder=HashingEmbedder())
    try:
        with pytest.raises(InsecureAddressError, match="--insecure"):
            ServiceServer(ts, keys[1], address="0.0.0.0:0", close_index=False)
        ServiceServer(ts, keys[1], address="0.0.0.0:0", insecure=True, close_index=False).stop(grace=0)
    finally:
        ts.close()


class _NoIPv6Socket(socket.socket):
    """A socket as a kernel booted with ``ipv6.disable=1`` makes them: none of family AF_INET6 (EAFNOSUPPORT). Only
    this process's sockets; grpcio's own (C core) still bind both loopbacks, as it would bind 127.0.0.1 alone there."""

    def __init__(self, family: int = -1, *args, **kwargs) -> None:
        if family == socket.AF_INET6:
            raise OSError(errno.EAFNOSUPPORT, os.strerror(errno.EAFNOSUPPORT))
        super().__init__(family, *args, **kwargs)


def test_localhost_is_served_on_a_host_without_ipv6_and_a_refusal_there_restores_the_trace_store(tmp_path, keys,
                                                                                                monkeypatch):
    """Bug: on a kernel without IPv6 the check of ``localhost``'s two places made its AF_INET6 socket outside its
    try: ``serve --address localhost:P`` failed "[Errno 97] Address family not supported by protocol" where grpcio
    serves on 127.0.0.1, and the façade kept the server's bounded trace reads in place of its own store."""
    ts = TrajSearch.open(str(tmp_path / "m.db"), traces=str(tmp_path / "t"), embedder=HashingEmbedder())
    try:
        ts.add([make_run("a1")])
        store, uri = ts.traces, ts.run("a1", tenant="acme").trace_uri
        with monkeypatch.context() as no_ipv6:
            no_ipv6.setattr(socket, "socket", _NoIPv6Socket)
            srv = ServiceServer(ts, keys[1], address="localhost:0", close_index=False).start()
        try:
            with Client(f"127.0.0.1:{srv.port}", keys[0]["acme_r"], timeout=600) as acme:
                assert acme.get_trace(uri).trajectory_id == "a1"
        finally:
            srv.stop(grace=0)
        assert ts.traces is store
        with socket.create_server(("127.0.0.1", 0)) as holder, monkeypatch.context() as no_ipv6:
            no_ipv6.setattr(socket, "socket", _NoIPv6Socket)
            port = holder.getsockname()[1]
            with pytest.raises(OSError, match=f"^cannot listen on localhost:{port}: Address already in use"):
                ServiceServer(ts, keys[1], address=f"localhost:{port}", close_index=False)
        assert ts.traces is store
    finally:
        ts.close()


def test_metrics_endpoint_answers_loopback_hosts_only_and_needs_insecure_beyond_loopback(server):
    """--metrics names every tenant: on loopback it answers only loopback Host names (DNS rebinding) and
    its two paths; a non-loopback address is refused without --insecure, like every other listener."""
    import http.client

    http_server = serve_metrics(server.metrics, "127.0.0.1:0")
    port = http_server.server_port
    try:
        def get(path, host, address="127.0.0.1"):
            conn = http.client.HTTPConnection(address, port, timeout=600)
            conn.putrequest("GET", path, skip_host=True)
            conn.putheader("Host", host)
            conn.endheaders()
            response = conn.getresponse()
            body = response.read().decode()
            conn.close()
            return response.status, body

        assert get("/metrics", f"127.0.0.1:{port}")[0] == 200 and get("/metrics.json", f"localhost:{port}")[0] == 200
        for host in ("attacker.example", f"attacker.example:{port}", "", "localhost:evil", "[::1]evil", "[::1]:80x",
                     "127.0.0.1:evil.example"):  # only name[:port], parsed as the web pages parse it
            status, body = get("/metrics", host)
            assert status == 421 and "tenant" not in body, host
        assert get("/../../etc/passwd", f"127.0.0.1:{port}")[0] == 404
    finally:
        http_server.shutdown()
    alias = serve_metrics(server.metrics, "127.0.0.2:0")  # a 127/8 alias answered every request 421 (probe I, I1)
    try:
        port = alias.server_port
        assert get("/metrics", f"127.0.0.2:{port}", "127.0.0.2")[0] == 200
        status, body = get("/metrics", "attacker.example", "127.0.0.2")
        assert status == 421 and f"http://127.0.0.2:{port}\n" in body  # its port too (review rev1, D8)
    finally:
        alias.shutdown()
    with pytest.raises(InsecureAddressError, match="--insecure"):
        check_metrics_address("0.0.0.0:9100", insecure=False)
    check_metrics_address("0.0.0.0:9100", insecure=True)
    check_metrics_address("127.0.0.1:9100", insecure=False)


def test_an_ingested_null_tenant_is_the_keys_tenant(server, keys):
    """"tenant": null names no tenant, as a record without the field: the key's tenant; another is refused."""
    records = [json.dumps({"trajectory_id": "tn1", "task": "Null tenant", "tenant": None}),
               json.dumps({"trajectory_id": "tn2", "task": "Other tenant", "tenant": "beta"})]
    with Client(server.address, keys[0]["acme_w"]) as c:
        report = c.add(records)
        assert [r["status"] for r in report.results] == ["accepted", "rejected"]
        assert report.results[1]["reason"].startswith("tenant:")
        assert c.run("tn1").tenant == "acme" and c.run("tn2") is None


def test_ingest_records_with_pathological_json_are_rejected_per_record(server, keys):
    items = ["[" * 100_000 + "]" * 100_000, json.dumps({"trajectory_id": "t\x00", "task": "x"}),
             json.dumps({"trajectory_id": "ok-1", "task": "x" * 10, "created_at": 10**20}), make_run("fine-1")]
    with Client(server.address, keys[0]["acme_w"]) as c:
        report = c.add(items)
    assert [r["status"] for r in report.results] == ["rejected", "rejected", "rejected", "accepted"]
    for result in report.results[:3]:
        assert re.match(r"^[a-z_]+[a-z_.\[\]0-9]*: ", result["reason"]), result["reason"]

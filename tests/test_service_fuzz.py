"""Seeded, bounded fuzzing of every gRPC method and the MCP tool (hypothesis).

Requests are raw wire bytes built from the proto's descriptors, so anything
goes: every field of every request message, nested messages, oversized lists,
huge and negative numbers, control characters, invalid UTF-8, unknown fields,
wrong wire types, truncated and random bytes. Most examples are a valid
request with a field or two overwritten, so the handlers and the library run
too, not only the validation. The properties:

- no call ends ``INTERNAL`` / ``UNKNOWN`` (or anything but OK, INVALID_ARGUMENT, NOT_FOUND);
- every ``INVALID_ARGUMENT`` starts with the name of a field of that request;
- the server answers ``WhoAmI`` afterwards.

The MCP tool gets random argument objects the same way: it answers JSON, or an
error naming an argument, never the SDK's opaque "Error executing tool".

Deterministic (``derandomize``: the seed is the test's name) and bounded:
``$TRAJSEARCH_FUZZ_EXAMPLES`` examples per method (default 25).
"""

from __future__ import annotations

import asyncio
import json
import os
import re

import grpc
import pytest
from google.protobuf.descriptor import FieldDescriptor

hypothesis = pytest.importorskip("hypothesis")
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from trajsearch.client import Client  # noqa: E402
from trajsearch.embed import HashingEmbedder  # noqa: E402
from trajsearch.search import TrajSearch  # noqa: E402
from trajsearch.service.auth import KeyRing, key_entry, new_key  # noqa: E402
from trajsearch.service.protos import pb2  # noqa: E402
from trajsearch.service.server import ServiceServer  # noqa: E402
from trajsearch.service.validate import Limits  # noqa: E402

from conftest import failing_run, make_run  # noqa: E402
from service_support import raw_stream, raw_unary  # noqa: E402

EXAMPLES = int(os.environ.get("TRAJSEARCH_FUZZ_EXAMPLES", "25"))
FUZZ = settings(max_examples=EXAMPLES, deadline=None, derandomize=True, database=None, print_blob=True,
                suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow,
                                       HealthCheck.data_too_large, HealthCheck.large_base_example])
LIMITS = Limits(max_text_chars=2_000, max_message_bytes=4 * 1024 * 1024, max_batch_records=20, max_k=50)
SERVICE = pb2.DESCRIPTOR.services_by_name["TrajSearch"]
ALLOWED = {grpc.StatusCode.INVALID_ARGUMENT, grpc.StatusCode.NOT_FOUND}
FIELD_RE = re.compile(r"^(?P<root>[A-Za-z_][A-Za-z0-9_]*|field \d+)(\[\d+\])?(\.[A-Za-z0-9_ ]+(\[\d+\])?)*: ")


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("fuzz")
    key = new_key()
    ts = TrajSearch.open(str(tmp / "milvus.db"), traces=str(tmp / "traces"), embedder=HashingEmbedder())
    ts.add([make_run("a1", env_version="v1"), failing_run("a2", "OSError: disk full", env_version="v2"),
            make_run("b1", tenant="beta")])
    srv = ServiceServer(ts, KeyRing.from_entries([key_entry(key, tenant="acme", role="write")]),
                        address="127.0.0.1:0", limits=LIMITS, max_workers=4, search_cap=1000).start()
    srv.key = key
    srv.trace_uri = ts.run("a1", tenant="acme").trace_uri
    yield srv
    srv.stop(grace=2)


# -- wire-format strategies ----------------------------------------------------------------------


def _varint(n: int) -> bytes:
    n &= (1 << 64) - 1  # negative numbers travel as 64-bit two's complement, as protobuf sends them
    out = bytearray()
    while True:
        byte, n = n & 0x7F, n >> 7
        out.append(byte | (0x80 if n else 0))
        if not n:
            return bytes(out)


def _field(number: int, wire_type: int, payload: bytes) -> bytes:
    tag = _varint(number << 3 | wire_type)
    return tag + (_varint(len(payload)) + payload if wire_type == 2 else payload)


PLAUSIBLE = ["payments", "disk full", "OSError", "v1", "v2", "dense", "lexical", "hybrid", "auto", "task", "summary",
             "step", "failure", "success", "exemplars", "steps", "failures", "bash", "a1", "a2", "fz"]
ADVERSARIAL = [
    "", " ", "\x00", "\n", "a\x00b", "\x7f", "\u202e", "é", "𝄞", "null", "{}", "[]", '{"a":', "9" * 40,
    "' OR 1=1 --", 'x" or tenant == "beta', 'acme" || tenant != "acme', "../../etc/passwd", "file:///etc/passwd",
    "s3://traces/acme/x-0123456789abcdef.json.gz", "beta", "a1", "b1", "task", "step", "failure", "hybrid",
    "exemplars", "steps", "failures", "success", "v1", "v2", "ts_" + "A" * 43, "%2e%2e", "a" * 201,
]
texts = st.one_of(
    st.sampled_from(PLAUSIBLE),
    st.sampled_from(ADVERSARIAL),
    st.text(max_size=80),
    st.text(alphabet=st.characters(codec="utf-8"), max_size=20),
    st.builds(lambda ch, n: ch * n, st.sampled_from(["x", "é", "\x00", " "]), st.integers(0, 300_000)),
)
string_bytes = st.one_of(texts.map(lambda t: t.encode("utf-8")), st.binary(max_size=40))
numbers = st.one_of(
    st.sampled_from([0, 1, -1, 3, 5, 6, 10, 11, 50, 51, 100, 2**31 - 1, 2**31, -(2**31), 2**32, 2**62, 10**15,
                     2**63 - 1, -(2**63), 2**64 - 1]),
    st.integers(-(2**63), 2**64 - 1),
)


@st.composite
def message_bytes(draw, descriptor, depth=0):
    """One request message of ``descriptor`` as wire bytes, every field possibly set, possibly broken."""
    if draw(st.integers(0, 24)) == 0:
        return draw(st.binary(max_size=64))  # plain garbage
    parts = []
    for field in descriptor.fields:
        if draw(st.integers(0, 2)) == 0:
            continue
        repeated = field.is_repeated
        count = draw(st.one_of(st.integers(0, 4), st.sampled_from([32, 33, 40]))) if repeated else 1
        for _ in range(count):
            parts.append(draw(field_bytes(field, depth)))
    if draw(st.integers(0, 9)) == 0:  # an unknown field, or a known one with the wrong wire type
        parts.append(_field(draw(st.integers(1, 40)), draw(st.sampled_from([0, 1, 2, 5])), draw(st.binary(max_size=9))))
    data = b"".join(draw(st.permutations(parts))) if parts else b""
    if data and draw(st.integers(0, 14)) == 0:
        data = data[: draw(st.integers(0, len(data) - 1))]  # truncated
    return data


@st.composite
def field_bytes(draw, field, depth):
    if field.type == FieldDescriptor.TYPE_STRING:
        if field.name == "json":
            return _field(field.number, 2, draw(record_json()).encode("utf-8", "surrogatepass"))
        if field.name == "trace_uri" and draw(st.booleans()):
            return _field(field.number, 2, draw(trace_uris()).encode())
        return _field(field.number, 2, draw(string_bytes))
    if field.type == FieldDescriptor.TYPE_MESSAGE:
        if depth > 3:
            return b""
        return _field(field.number, 2, draw(message_bytes(field.message_type, depth + 1)))
    if field.type in (FieldDescriptor.TYPE_DOUBLE, FieldDescriptor.TYPE_FIXED64):
        return _field(field.number, 1, draw(st.binary(min_size=8, max_size=8)))
    if field.type in (FieldDescriptor.TYPE_FLOAT, FieldDescriptor.TYPE_FIXED32):
        return _field(field.number, 5, draw(st.binary(min_size=4, max_size=4)))
    return _field(field.number, 0, _varint(draw(numbers)))  # int32/64, bool, enum


json_values = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(-(2**70), 2**70), st.floats(allow_nan=False), texts),
    lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=8), inner, max_size=4)),
    max_leaves=12,
)


@st.composite
def record_json(draw):
    """A trajectory record: a real one with fields overwritten by odd values, or any JSON, or no JSON."""
    choice = draw(st.integers(0, 3))
    if choice == 0:
        return draw(texts)
    if choice == 1:
        return json.dumps(draw(json_values))
    base = make_run(f"fz-{draw(st.integers(0, 10**6))}").model_dump(mode="json")
    base.pop("tenant")
    for key in draw(st.lists(st.sampled_from(sorted(base) + ["tenant", "unknown_field"]), max_size=3)):
        base[key] = draw(json_values)
    return json.dumps(base)


@st.composite
def trace_uris(draw):
    return draw(st.sampled_from(["{uri}", "{uri}x", "{root}/../beta/{name}", "{root}/beta/{name}", "{root}/acme/../acme/{name}",
                                 "{root}/acme/%2e%2e/{name}", "{root}/acme/{name}?q", "{root}/acme/{name}#f"]))


def _bases(trace_uri: str) -> dict[str, list]:
    """A valid request per method: most examples are one of these with a field or two overwritten."""
    ctx = pb2.RuntimeContext(env_versions=["v1", "v2"], tools_available=["bash"])
    return {
        "Search": [pb2.SearchRequest(text="payments", k=5), pb2.SearchRequest(text="disk full", mode="lexical")],
        "SimilarRuns": [pb2.SimilarRunsRequest(text="payments"), pb2.SimilarRunsRequest(trajectory_id="a2")],
        "Expand": [pb2.ExpandRequest(trajectory_id="a1", step_index=1, before=1, after=1)],
        "Run": [pb2.RunRequest(trajectory_id="a1"), pb2.RunRequest(trajectory_id="a2", level="failure")],
        "GetTrace": [pb2.GetTraceRequest(trace_uri=trace_uri)],
        "Exemplars": [pb2.ExemplarsRequest(task="Fix the failing unit test in the payments service", context=ctx)],
        "Warnings": [pb2.WarningsRequest(text="OSError: disk full", context=ctx, k=2)],
        "SearchPastRuns": [pb2.SearchPastRunsRequest(session_id="fz", query="disk full", kind="failures", context=ctx)],
        "Delete": [pb2.DeleteRequest(trajectory_id="not-there")],
        "Stats": [pb2.StatsRequest()], "Metrics": [pb2.MetricsRequest()], "WhoAmI": [pb2.WhoAmIRequest()],
        "Failures": [pb2.FailuresRequest(), pb2.FailuresRequest(since_seconds=7 * 86400, env_versions=["v1"], limit=5)],
        "Ingest": [pb2.IngestBatch(records=[pb2.TrajectoryRecord(json=make_run("fz-base").model_dump_json())])],
    }


@st.composite
def requests(draw, method, descriptor, trace_uri):
    """Mostly a valid request with one or two fields overwritten (so the handlers run), else anything."""
    if draw(st.integers(0, 3)) == 0:
        return draw(message_bytes(descriptor))
    base = draw(st.sampled_from(_bases(trace_uri)[method])).SerializeToString()
    fields = draw(st.lists(st.sampled_from(list(descriptor.fields)), max_size=2)) if descriptor.fields else []
    return base + b"".join(draw(field_bytes(field, 1)) for field in fields)  # the last value of a field wins


def _expand_uri(data: bytes, uri: str) -> bytes:
    root, _, name = uri.rpartition("/")
    root = root.rpartition("/")[0]
    for key, value in (("{uri}", uri), ("{root}", root), ("{name}", name)):
        data = data.replace(key.encode(), value.encode())
    return data


def _check(method: str, call, descriptor) -> None:
    """Run one call; it answers OK or a refusal that names a field of the request."""
    try:
        call()
    except grpc.RpcError as err:
        code, details = err.code(), err.details() or ""
        assert code in ALLOWED, f"{method}: {code.name}: {details[:300]}"
        if code == grpc.StatusCode.INVALID_ARGUMENT:
            match = FIELD_RE.match(details)
            assert match, f"{method}: no field named: {details[:300]}"
            root = match.group("root")
            known = {f.name for f in descriptor.fields} | {"request", "anchor", "batches"}
            assert root in known or root.startswith("field "), f"{method}: {root!r} is not a field: {details[:300]}"


UNARY = [name for name, m in SERVICE.methods_by_name.items() if not m.client_streaming]


@pytest.mark.parametrize("method", UNARY)
def test_every_unary_method_survives_random_requests(server, method):
    descriptor = SERVICE.methods_by_name[method].input_type
    metadata = (("authorization", f"Bearer {server.key}"),)

    @FUZZ
    @given(data=requests(method, descriptor, server.trace_uri))
    def run(data):
        data = _expand_uri(data, server.trace_uri)
        _check(method, lambda: raw_unary(server.address, method, data, metadata), descriptor)

    run()
    with Client(server.address, server.key) as c:
        assert c.whoami()["tenant"] == "acme"


def test_ingest_survives_random_streams(server):
    descriptor = SERVICE.methods_by_name["Ingest"].input_type
    metadata = (("authorization", f"Bearer {server.key}"),)

    @FUZZ
    @given(batches=st.lists(requests("Ingest", descriptor, server.trace_uri), max_size=3))
    def run(batches):
        _check("Ingest", lambda: raw_stream(server.address, "Ingest", batches, metadata), descriptor)

    run()
    with Client(server.address, server.key) as c:
        assert c.whoami()["tenant"] == "acme"


# -- the MCP tool ------------------------------------------------------------------------------

mcp_values = st.one_of(
    st.none(), st.booleans(), numbers, st.floats(), texts,
    st.text(alphabet=st.characters(min_codepoint=0xD800, max_codepoint=0xDFFF), min_size=1, max_size=3),
    st.lists(st.integers(), max_size=3), st.dictionaries(st.text(max_size=3), st.integers(), max_size=2),
)
mcp_arguments = st.one_of(
    st.dictionaries(st.one_of(st.sampled_from(["query", "k", "kind", "tenant", "env_version", "filters"]),
                              st.text(max_size=8)), mcp_values, max_size=5),
    st.fixed_dictionaries({"query": st.one_of(texts, mcp_values)},
                          optional={"k": st.one_of(numbers, mcp_values), "kind": st.one_of(texts, mcp_values)}),
)


def test_mcp_tool_survives_random_arguments(server):
    from mcp import Client as McpClient

    from trajsearch.service.mcp_server import build_mcp

    async def session(calls):
        with Client(server.address, server.key) as backend:
            async with McpClient(build_mcp(backend)) as mcp:
                return [await mcp.call_tool("search_past_runs", args) for args in calls]

    @FUZZ
    @given(calls=st.lists(mcp_arguments, min_size=1, max_size=4))
    def run(calls):
        for args, result in zip(calls, asyncio.run(asyncio.wait_for(session(calls), 600))):
            text = result.content[0].text
            answer = json.loads(text)
            if result.is_error:  # as the tool's own error answers read (searches_left once a search has answered)
                assert answer["status"] == "error", (args, text)
                assert re.match(r'^invalid arguments for search_past_runs: ([A-Za-z_][\w.]*|".*?"): ', answer["error"]), \
                    (args, text)
            else:
                assert answer["status"] in ("ok", "limit_reached"), (args, text)

    run()

"""Export: matching runs as openai-chat / sharegpt / jsonl datasets, each record pointing back to its run.

Round trips read the written files back with ``json`` line by line and check each
record against the format's schema as the trainers read it (OpenAI's fine-tuning
chat schema; LLaMA-Factory's sharegpt rules; our trajectory model). Real Milvus
Lite in a temp dir, the fast hashing test embedder (ranking quality is search's).
"""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from trajsearch.export import (
    OPENAI_CHAT_SCHEMA, export_runs, record_text, to_record, validate_openai_chat, validate_sharegpt, write,
)
from trajsearch.export import stream as export_stream  # export_runs reads PAGE there
from trajsearch.ingest.read import read_dump
from trajsearch.model import Step, Trajectory
from trajsearch.runtime.format import default_counter
from trajsearch.search import TrajSearch

from cli_support import backend, run_cli  # noqa: F401 (fixture)
from conftest import BASE_TIME, failing_run, make_run

QUERY = "cancel the reservation and refund the customer"


def airline_run(trajectory_id: str, **fields) -> Trajectory:
    """A tau-bench-like run: the user's opening line, tool calls, the agent talking to the user."""
    steps = [
        Step(index=0, observation="Hi, I need to cancel my reservation ABC123 and get a refund."),
        Step(index=1, action="get_reservation_details", arguments={"reservation_id": "ABC123"},
             observation='{"reservation_id": "ABC123", "status": "confirmed", "paid": 420}'),
        Step(index=2, action="respond", arguments={"content": "I can cancel ABC123 and refund $420. Proceed?"},
             observation="Yes please."),
        Step(index=3, action="cancel_reservation", arguments={"reservation_id": "ABC123"},
             observation='{"status": "cancelled", "refund": 420}'),
        Step(index=4, action="respond", arguments={"content": "Done: ABC123 is cancelled, $420 refunded."},
             observation="Thanks!"),
    ]
    return Trajectory(trajectory_id=trajectory_id, tenant=fields.pop("tenant", "acme"),
                      task="Cancel the reservation ABC123 and refund the customer", outcome="success",
                      created_at=BASE_TIME, steps=steps, model_id="gpt-4o", **fields)


def long_run(trajectory_id: str) -> Trajectory:
    steps = []
    for n in range(30):
        steps.append(("bash", {"command": f"pytest tests/test_refund_{n}.py -x"},
                      f"collected 12 items\n{'.' * 40}\n" + "refund ledger line\n" * 120 + f"{n} passed"))
    steps.append(("edit", {"path": "src/refunds.py", "content": "def refund(x):\n" + "    pass\n" * 300},
                  "edited src/refunds.py"))
    return make_run(trajectory_id, task="Fix the refund rounding bug so the cancel-and-refund tests pass",
                    steps=steps, env_version="v2")


@pytest.fixture
def store(hashing_ts: TrajSearch) -> TrajSearch:
    hashing_ts.add([
        airline_run("air-1", env_version="v1"),
        airline_run("air-2", env_version="v2"),
        make_run("swe-1", task="Fix the failing refund unit test in the payments service", env_version="v1"),
        long_run("swe-long"),
        failing_run("bad-1", "KeyError: 'refund'", task="Cancel the reservation and refund the customer"),
        airline_run("beta-1", tenant="beta"),
    ])
    return hashing_ts


def _written(export, fmt: str, **kw) -> list[dict]:
    out = io.StringIO()
    write(export, out, fmt=fmt, **kw)
    return [json.loads(line) for line in out.getvalue().splitlines()]  # the standard reader: json per line


def test_openai_chat_round_trip_matches_the_fine_tuning_schema(store: TrajSearch) -> None:
    export = export_runs(store, QUERY, tenant="acme", fmt="openai-chat", k=10)
    records = _written(export, "openai-chat")
    assert export.found == len(records) == export.written == 4  # the successes of acme only
    hits = store.search(QUERY, tenant="acme", outcome="success", k=10)
    assert [r["metadata"]["trajectory_id"] for r in records] == [h.trajectory_id for h in hits]
    for record, hit in zip(records, hits):
        assert validate_openai_chat(record) == []
        assert validate_openai_chat(record, allow_metadata=False) != []  # the provenance key is ours
        meta = record["metadata"]
        assert meta["trace_uri"] == hit.trace_uri == store.run(meta["trajectory_id"], tenant="acme").trace_uri
        assert meta["similarity"] == pytest.approx(hit.similarity, abs=1e-5)
        assert (meta["outcome"], meta["query"]) == ("success", QUERY)
        run = store.get_trace(meta["trace_uri"], tenant="acme")  # every record points back to its run
        assert record["messages"][0] == {"role": "user", "content": run.task}
    air = next(r for r in records if r["metadata"]["trajectory_id"] == "air-1")
    roles = [m["role"] for m in air["messages"]]
    assert roles == ["user", "user", "assistant", "tool", "assistant", "user", "assistant", "tool", "assistant",
                     "user"]
    call = air["messages"][2]["tool_calls"][0]
    assert (call["type"], call["function"]["name"]) == ("function", "get_reservation_details")
    assert json.loads(call["function"]["arguments"]) == {"reservation_id": "ABC123"}
    assert air["messages"][3] == {"role": "tool", "tool_call_id": call["id"],
                                  "content": '{"reservation_id": "ABC123", "status": "confirmed", "paid": 420}'}
    assert air["messages"][4] == {"role": "assistant", "content": "I can cancel ABC123 and refund $420. Proceed?"}
    assert {t["function"]["name"] for t in air["tools"]} == {"get_reservation_details", "cancel_reservation"}
    assert air["tools"][0]["function"]["parameters"] == {
        "type": "object", "properties": {"reservation_id": {"type": "string"}}, "required": ["reservation_id"]}
    assert air["parallel_tool_calls"] is False


def test_openai_chat_sidecar_leaves_records_exactly_in_openais_schema(store: TrajSearch) -> None:
    export = export_runs(store, QUERY, tenant="acme", fmt="openai-chat", k=3, system="You are an airline agent.")
    out, side = io.StringIO(), io.StringIO()
    write(export, out, fmt="openai-chat", provenance="sidecar", sidecar=side)
    records = [json.loads(line) for line in out.getvalue().splitlines()]
    provenance = [json.loads(line) for line in side.getvalue().splitlines()]
    assert len(records) == len(provenance) == 3
    for record, prov in zip(records, provenance):
        assert set(record) <= set(OPENAI_CHAT_SCHEMA["properties"])
        assert validate_openai_chat(record, allow_metadata=False) == []
        assert record["messages"][0] == {"role": "system", "content": "You are an airline agent."}
        assert record["messages"][1]["content"] == store.get_trace(prov["trace_uri"], tenant="acme").task


def test_the_validators_catch_what_trainers_reject() -> None:
    good = {"messages": [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}]}
    assert validate_openai_chat(good) == []
    assert validate_openai_chat({"messages": [{"role": "user", "content": "hi"}]})  # nothing to learn
    assert validate_openai_chat({"messages": [{"role": "robot", "content": "hi"}]})
    orphan = {"messages": [{"role": "user", "content": "x"}, {"role": "tool", "tool_call_id": "c9", "content": "y"},
                           {"role": "assistant", "content": "z"}]}
    assert any("answers no earlier tool call" in p for p in validate_openai_chat(orphan))
    bad_args = {"messages": [{"role": "user", "content": "x"}, {"role": "assistant", "tool_calls": [
        {"id": "c1", "type": "function", "function": {"name": "f", "arguments": "not json"}}]}]}
    assert any("not JSON" in p for p in validate_openai_chat(bad_args))
    assert validate_sharegpt({"conversations": [{"from": "human", "value": "a"}, {"from": "gpt", "value": "b"}]}) == []
    assert validate_sharegpt({"conversations": [{"from": "gpt", "value": "b"}, {"from": "human", "value": "a"}]})
    assert validate_sharegpt({"conversations": [{"from": "human", "value": "a"}]})  # odd count
    assert validate_sharegpt({"conversations": [{"from": "human", "value": "a"},
                                                {"from": "function_call", "value": "{}"}]})


def test_sharegpt_follows_llama_factorys_reading(store: TrajSearch) -> None:
    export = export_runs(store, QUERY, tenant="acme", fmt="sharegpt", k=10, system="Be brief.")
    records = _written(export, "sharegpt")
    assert len(records) == 4
    for record in records:
        assert validate_sharegpt(record) == [], record["conversations"][:4]
        assert record["system"] == "Be brief."
        assert record["metadata"]["trace_uri"] == store.run(record["metadata"]["trajectory_id"], tenant="acme").trace_uri
    air = next(r for r in records if r["metadata"]["trajectory_id"] == "air-2")
    assert [t["from"] for t in air["conversations"]] == [
        "human", "function_call", "observation", "gpt", "human", "function_call", "observation", "gpt"]
    assert air["conversations"][0]["value"] == ("Cancel the reservation ABC123 and refund the customer\n\n"
                                                "Hi, I need to cancel my reservation ABC123 and get a refund.")
    assert json.loads(air["conversations"][1]["value"]) == {"name": "get_reservation_details",
                                                             "arguments": {"reservation_id": "ABC123"}}
    assert [f["name"] for f in json.loads(air["tools"])] == ["get_reservation_details", "cancel_reservation"]


def test_jsonl_is_our_trajectory_and_ingests_again(store: TrajSearch, tmp_path: Path) -> None:
    export = export_runs(store, QUERY, tenant="acme", fmt="jsonl", k=10, env_version="v1")
    path = tmp_path / "export.jsonl"
    with path.open("w") as out:
        write(export, out, fmt="jsonl")
    lines = path.read_text().splitlines()
    assert len(lines) == 2  # env v1 successes: air-1, swe-1
    for line in lines:
        run = Trajectory.model_validate_json(line)
        provenance = run.metadata["trajsearch"]
        original = store.get_trace(provenance["trace_uri"], tenant="acme")
        assert run.model_copy(update={"metadata": original.metadata}) == original
        assert provenance["env_version"] == "v1"
    again = list(read_dump(path, tenant="acme"))  # it ingests as native (its own tenant: another would refuse it)
    assert [p.error for p in again] == [None, None]
    assert sorted(p.trajectory.trajectory_id for p in again) == ["air-1", "swe-1"]
    assert all(p.fmt == "native" for p in again)


def test_max_tokens_compresses_as_the_runtime_does(store: TrajSearch) -> None:
    counter = default_counter()
    full = next(iter(export_runs(store, "refund rounding bug tests", tenant="acme", k=1, env_version="v2",
                                 levels="task")))
    assert full.provenance["trajectory_id"] == "swe-long" and full.compression == "none"
    budget = 400
    for fmt in ("openai-chat", "sharegpt", "jsonl"):
        item = next(iter(export_runs(store, "refund rounding bug tests", tenant="acme", k=1, env_version="v2",
                                     levels="task", fmt=fmt, max_tokens=budget)))
        assert item.tokens == counter.count(record_text(item.record, fmt)) <= budget
        assert item.compression in ("full", "half")
        if fmt == "openai-chat":
            assert validate_openai_chat(item.record) == []
            calls = [m for m in item.record["messages"] if m.get("tool_calls")]
            assert 0 < len(calls) <= 8 and len(calls) < 31
            assert calls[-1]["tool_calls"][0]["function"]["name"] == "edit"  # the end is kept first
            json.loads(calls[-1]["tool_calls"][0]["function"]["arguments"])  # clipped, still JSON
        if fmt == "sharegpt":
            assert validate_sharegpt(item.record) == []
        if fmt == "jsonl":
            Trajectory.model_validate(item.record)
    tiny = export_runs(store, QUERY, tenant="acme", k=10, max_tokens=16)
    assert list(tiny) == [] and (tiny.written, tiny.too_long) == (0, 4)


def test_paging_keeps_search_order_and_outcome_can_be_changed(store: TrajSearch, monkeypatch) -> None:
    whole = [r.provenance["trajectory_id"] for r in export_runs(store, QUERY, tenant="acme", k=3)]
    monkeypatch.setattr(export_stream, "PAGE", 1)
    paged = [r.provenance["trajectory_id"] for r in export_runs(store, QUERY, tenant="acme", k=3)]
    assert paged == whole and len(whole) == 3
    failed = [r.provenance for r in export_runs(store, QUERY, tenant="acme", outcome="failure")]
    assert [(p["trajectory_id"], p["outcome"]) for p in failed] == [("bad-1", "failure")]
    with pytest.raises(ValueError, match="format"):
        export_runs(store, QUERY, tenant="acme", fmt="alpaca")
    with pytest.raises(ValueError, match="k must"):
        export_runs(store, QUERY, tenant="acme", k=0)


def test_a_refused_page_keeps_the_runs_already_found(store: TrajSearch, monkeypatch) -> None:
    """A server bounds how many runs one request may exclude: paging stops there, and says so."""

    class Refusing:
        calls = 0

        def search(self, *args, **kwargs):
            Refusing.calls += 1
            if Refusing.calls > 1:
                raise ValueError("exclude_trajectory_ids: at most 32 values, got 33")
            return store.search(*args, **kwargs)

        def get_trace(self, *args, **kwargs):
            return store.get_trace(*args, **kwargs)

    monkeypatch.setattr(export_stream, "PAGE", 1)
    export = export_runs(Refusing(), QUERY, tenant="acme", k=3)
    assert (export.found, len(list(export))) == (1, 1)
    assert "stopped after 1 runs" in export.stopped and "at most 32" in export.stopped


def test_a_missing_trace_is_left_out_and_counted(store: TrajSearch) -> None:
    hit = store.run("air-1", tenant="acme")
    store.traces.delete(hit.trace_uri, tenant="acme")
    export = export_runs(store, QUERY, tenant="acme", k=10)
    ids = [r.provenance["trajectory_id"] for r in export]
    assert "air-1" not in ids and (export.written, export.missing_trace) == (3, 1)


def test_to_record_of_odd_steps() -> None:
    run = make_run("x", steps=[("python", "print(1)", "1"), ("mcp.server/tool call", {"q": 1}, "ok")])
    record = to_record(run, "openai-chat")
    assert validate_openai_chat(record) == []
    assert json.loads(record["messages"][1]["tool_calls"][0]["function"]["arguments"]) == {"input": "print(1)"}
    assert record["messages"][3]["tool_calls"][0]["function"]["name"] == "mcp_server_tool_call"
    assert [t["function"]["name"] for t in record["tools"]] == ["python", "mcp_server_tool_call"]


# -- the CLI, on both backends -----------------------------------------------------------------


def test_export_command_on_both_backends(backend, tmp_path: Path) -> None:
    dump = tmp_path / "runs.jsonl"
    runs = [airline_run("air-1"), make_run("swe-1", task="Fix the failing refund unit test"),
            failing_run("bad-1", "KeyError: 'refund'")]
    dump.write_text("\n".join(r.model_dump_json(exclude={"tenant"}) for r in runs) + "\n")
    code, _, err = run_cli("ingest", str(dump), "--quiet", "--json")
    assert code == 0, err

    out_file = tmp_path / "train.jsonl"
    code, _, err = run_cli("export", "--query", QUERY, "--format", "openai-chat", "--out", str(out_file))
    assert code == 0, err
    assert "exported 2 of 2 matching runs" in err
    records = [json.loads(line) for line in out_file.read_text().splitlines()]
    assert [r["metadata"]["trajectory_id"] for r in records][0] == "air-1"
    assert all(validate_openai_chat(r) == [] for r in records)

    code, _, err = run_cli("export", "-q", QUERY, "-f", "openai-chat", "-o", str(out_file), "--provenance", "sidecar",
                        "--max-tokens", "200")
    assert code == 0, err
    records = [json.loads(line) for line in out_file.read_text().splitlines()]
    sidecar = [json.loads(line) for line in Path(str(out_file) + ".provenance.jsonl").read_text().splitlines()]
    assert len(records) == len(sidecar) >= 1
    assert all(validate_openai_chat(r, allow_metadata=False) == [] for r in records)

    code, out, err = run_cli("export", "-q", QUERY, "-f", "sharegpt", "--outcome", "failure")
    assert code == 0, err
    (line,) = out.splitlines()
    assert json.loads(line)["metadata"]["trajectory_id"] == "bad-1"

    code, _, err = run_cli("export", "-q", QUERY, "-f", "csv")
    assert code == 2 and "--format" in err
    code, _, err = run_cli("export", "-q", QUERY, "--provenance", "sidecar")
    assert code == 2 and "--out" in err

"""No input can stop a batch: too deep, malformed or empty records are rejected one by one, with a reason.

Plumbing: real files, real Milvus Lite, the fast hashing *test* embedder.
"""

from __future__ import annotations

import json
import logging
from pathlib import Path

from trajsearch.embed import HashingEmbedder
from trajsearch.ingest.batch import IngestJob, run_ingest
from trajsearch.ingest.read import read_dump
from trajsearch.search import TrajSearch

from adapter_support import read_with_peak
from conftest import make_run


def good(trajectory_id: str) -> str:
    return make_run(trajectory_id, tenant="default").model_dump_json(exclude={"tenant"})


def nested(levels: int) -> str:
    return "[" * levels + "]" * levels


def test_a_line_nested_100000_deep_is_one_rejection_between_good_records(tmp_path: Path) -> None:
    dump = tmp_path / "runs.jsonl"
    dump.write_text("\n".join([good("a"), '{"trajectory_id": "deep", "task": ' + nested(100_000) + "}", good("b")]) + "\n")
    for _ in range(2):  # a rerun (or --restart) reads the same way
        parsed = list(read_dump(dump))
        assert [p.trajectory.trajectory_id for p in parsed if p.ok] == ["a", "b"]
        [bad] = [p for p in parsed if not p.ok]
        assert bad.position == "line 2" and "nested deeper than" in bad.error


def test_a_json_file_nested_50000_deep_does_not_raise(tmp_path: Path) -> None:
    deep = tmp_path / "deep.json"
    deep.write_text("[\n" + nested(50_000) + "\n]")
    [bad] = list(read_dump(deep, fmt="native"))
    assert not bad.ok and "nested deeper than" in bad.error


def test_a_json_array_record_nested_5000_deep_is_rejected_in_the_memory_of_its_text(tmp_path: Path) -> None:
    """ijson's ``items`` builds a prefix string for every level it is in: 60 MB for this file, 2.2 GB for a
    tau-bench results array with one value 30,000 deep (review INSP29, finding 1). Read from its basic events, the
    record is refused as too deep without being built."""
    dump = tmp_path / "runs.json"
    deep = '{"trajectory_id": "deep", "task": ' + nested(5_000) + "}"
    dump.write_text("[\n" + ",\n".join([good("a"), deep, good("b")]) + "\n]")
    parsed, peak = read_with_peak(dump)
    assert [(p.position, p.ok) for p in parsed] == [("record 1", True), ("record 2", False), ("record 3", True)]
    assert "nested deeper than" in parsed[1].error
    assert peak < 5 * 2**20, peak


def test_arguments_nested_100_deep_reject_that_run_only_and_the_rest_lands(tmp_path: Path) -> None:
    run = json.loads(good("deep-args"))
    arguments: dict = {}
    cursor = arguments
    for _ in range(50):  # 100 JSON levels: a valid line (under 200) whose arguments are too deep (over 64)
        cursor["x"] = [{}]
        cursor = cursor["x"][0]
    run["steps"][0]["arguments"] = arguments
    dump = tmp_path / "runs.jsonl"
    dump.write_text("\n".join([good("a"), json.dumps(run), good("b")]) + "\n")
    with TrajSearch.open(str(tmp_path / "m.db"), traces=str(tmp_path / "t"), embedder=HashingEmbedder()) as ts:
        report = run_ingest(ts, IngestJob(paths=[dump], state_dir=tmp_path / "state")).to_dict()
        assert (report["ingested"], report["rejected"]) == (2, 1)
        [rejection] = report["rejections"]
        assert "steps[0].arguments" in rejection["reason"] and "nested deeper" in rejection["reason"]
        assert ts.run("b", tenant="default") is not None


def test_an_empty_run_file_is_a_rejection_not_silence(tmp_path: Path) -> None:
    empty = tmp_path / "run.traj.json"
    empty.write_text("[]")
    parsed = list(read_dump(empty))
    assert len(parsed) == 1 and not parsed[0].ok and parsed[0].error


def test_library_errors_name_the_field(hashing_ts) -> None:
    import pytest

    from trajsearch.store.filters import Filters

    with pytest.raises(ValueError, match="created_after"):
        Filters(tenant="acme", created_after=2**63)
    with pytest.raises(ValueError, match="env_versions too long"):
        Filters(tenant="acme", env_versions=("v" * 201,))
    with pytest.raises(ValueError, match="k must be a whole number"):
        hashing_ts.search("payments", tenant="acme", k=1.5)
    with pytest.raises(ValueError, match="group_size"):
        hashing_ts.search("payments", tenant="acme", group_size=0)


def test_restart_writes_again_the_traces_the_store_lost(tmp_path: Path) -> None:
    import shutil

    dump = tmp_path / "runs.jsonl"
    dump.write_text("\n".join([good("a"), good("b")]) + "\n")
    traces = tmp_path / "t"
    with TrajSearch.open(str(tmp_path / "m.db"), traces=str(traces), embedder=HashingEmbedder()) as ts:
        run_ingest(ts, IngestJob(paths=[dump], state_dir=tmp_path / "state"))
        uri = ts.run("a", tenant="default").trace_uri
        shutil.rmtree(traces)  # the object store comes back empty
        again = run_ingest(ts, IngestJob(paths=[dump], state_dir=tmp_path / "state")).to_dict()
        assert again["units_already_done"] == 1 and again["traces_restored"] == 0  # a plain rerun reads nothing
        restarted = run_ingest(ts, IngestJob(paths=[dump], state_dir=tmp_path / "state", resume=False)).to_dict()
        assert (restarted["unchanged"], restarted["traces_restored"]) == (2, 2)
        assert ts.get_trace(uri, tenant="default").trajectory_id == "a"


def test_malformed_fields_are_rejections_naming_the_field(tmp_path: Path) -> None:
    mini = tmp_path / "x__y-1.traj.json"
    mini.write_text(json.dumps({"trajectory_format": "mini-swe-agent-1", "instance_id": "x__y-1", "info": [1],
                                "messages": [{"role": "user", "content": "<pr_description>Fix it</pr_description>"}]}))
    tau = tmp_path / "results.json"
    task = {"instruction": "Cancel my order"}
    tau.write_text(json.dumps([
        {"task_id": 1, "reward": 1.0, "info": {"task": task}, "traj": [{"role": 5, "content": "hi"}]},
        {"task_id": 2, "reward": "x", "info": {"task": task}, "traj": [{"role": "user", "content": "hi"}]},
        {"task_id": 3, "reward": None, "info": {"task": task}, "traj": [{"role": "user", "content": "hi"}]},
    ]))
    [bad_mini] = list(read_dump(mini))
    assert not bad_mini.ok and "field 'info' must be an object" in bad_mini.error
    parsed = list(read_dump(tau))
    assert ["traj[0].role" in (p.error or "") for p in parsed] == [True, False, False]
    assert "field 'reward' must be a number" in parsed[1].error
    assert parsed[2].ok and parsed[2].trajectory.outcome.value == "unknown"


def test_a_writer_killed_between_a_runs_rows_leaves_no_half_run(tmp_path: Path, caplog) -> None:
    """A writer records the runs it begins; one that dies before their task rows (written last)
    leaves rows the next owner removes on open: no run is ever visible without its task row. The warning names
    five of them and says when there were more (probe E, round 40: 24 removed, 5 named, no "…")."""
    import subprocess
    import sys

    script = f"""
import os, sys
sys.path.insert(0, {str(Path(__file__).parent)!r})
from conftest import make_run
from trajsearch.embed import HashingEmbedder
from trajsearch.search import TrajSearch
ts = TrajSearch.open({str(tmp_path / 'm.db')!r}, traces={str(tmp_path / 't')!r}, embedder=HashingEmbedder())
ts.add([make_run("whole", tenant="default")])
indexer = ts.indexer()
prepared = [row for i in range(7) for row in indexer.rows_of(make_run(f"half-{{i}}", tenant="default"))]
tasks = [r for r in prepared if r["level"] == "task"]
ts.index.begin_runs([(r["tenant"], r["trajectory_id"], r["id"], r["content_hash"]) for r in tasks])
ts.index.upsert([r for r in prepared if r["level"] != "task"])
os._exit(0)  # killed before the task rows: no cleanup of any kind (the rows are in milvus-lite's write-ahead log)
"""
    subprocess.run([sys.executable, "-c", script], check=True, timeout=600, cwd=Path(__file__).parents[1])
    with caplog.at_level(logging.WARNING, logger="trajsearch.store.index"), \
            TrajSearch.open(str(tmp_path / "m.db"), traces=str(tmp_path / "t"), embedder=HashingEmbedder()) as ts:
        assert "removed 7 run(s) a writer left half-written: half-0, half-1, half-2, half-3, half-4 …" in caplog.text
        hits = ts.search("Fix the failing unit test", tenant="default", k=10, group_by_trajectory=False)
        assert {h.trajectory_id for h in hits} == {"whole"}
        assert ts.stats(tenant="default")["rows"] == len(ts.search("payments", tenant="default", k=50,
                                                                    group_by_trajectory=False))

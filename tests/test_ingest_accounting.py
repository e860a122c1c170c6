"""No run lost in silence: shared ids, counts that add up, and a dry run that shows the mapping.

Plumbing: real Milvus Lite in a temp dir with the fast hashing *test* embedder.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from trajsearch.embed import HashingEmbedder
from trajsearch.ingest.batch import IngestJob, run_ingest
from trajsearch.ingest.preview import preview
from trajsearch.ingest.read import read_dump
from trajsearch.search import TrajSearch

from conftest import make_run

ROOT = Path(__file__).parents[1]
TAU = ROOT / "tests" / "fixtures" / "tau-bench" / "gpt-4o-airline-mini.json"


def native_dump(path: Path, *runs) -> Path:
    path.write_text("".join(r.model_dump_json(exclude={"tenant"}) + "\n" for r in runs))
    return path


def test_two_different_runs_sharing_an_id_are_both_kept_under_stable_ids(tmp_path: Path) -> None:
    first = make_run("run-1", tenant="default", task="Fix the login bug")
    second = make_run("run-1", tenant="default", task="Add a dark mode toggle")
    dump = native_dump(tmp_path / "runs.jsonl", first, second)

    runs = [p.trajectory for p in read_dump(dump)]
    again = [p.trajectory for p in read_dump(dump)]

    assert [r.task for r in runs] == ["Fix the login bug", "Add a dark mode toggle"]
    assert runs[0].trajectory_id == "run-1"
    assert runs[1].trajectory_id.startswith("run-1+") and len(runs[1].trajectory_id) == len("run-1+") + 8
    assert runs[1].metadata["original_trajectory_id"] == "run-1"
    assert [r.trajectory_id for r in again] == [r.trajectory_id for r in runs]  # stable across reads


def test_an_identical_repeat_keeps_its_id_and_counts_as_unchanged(tmp_path: Path) -> None:
    run = make_run("run-1", tenant="default")
    other = make_run("run-2", tenant="default", task="Something else entirely")
    dump = native_dump(tmp_path / "runs.jsonl", run, other, run)
    (tmp_path / "bad.jsonl").write_text('{"trajectory_id": "x"}\nnot json\n')

    with TrajSearch.open(str(tmp_path / "m.db"), traces=str(tmp_path / "t"), embedder=HashingEmbedder()) as ts:
        result = run_ingest(ts, IngestJob(paths=[dump, tmp_path / "bad.jsonl"], state_dir=tmp_path / "state"))
        report = result.to_dict()
        assert (report["ingested"], report["unchanged"], report["rejected"]) == (2, 1, 2)
        assert report["read"] == 5 == report["ingested"] + report["unchanged"] + report["rejected"]
        assert report["renamed"] == []
        assert ts.stats(tenant="default")["trajectories"] == 2


def test_ingest_counts_add_up_and_both_runs_are_searchable(tmp_path: Path) -> None:
    first = make_run("shared", tenant="default", task="Fix the login bug")
    second = make_run("shared", tenant="default", task="Add a dark mode toggle")
    dump = native_dump(tmp_path / "runs.jsonl", first, second)
    with TrajSearch.open(str(tmp_path / "m.db"), traces=str(tmp_path / "t"), embedder=HashingEmbedder()) as ts:
        result = run_ingest(ts, IngestJob(paths=[dump], state_dir=tmp_path / "state"))
        report = result.to_dict()
        assert (report["read"], report["ingested"], report["unchanged"], report["rejected"]) == (2, 2, 0, 0)
        assert len(report["renamed"]) == 1 and report["renamed"][0]["trajectory_id"] == "shared"
        new_id = report["renamed"][0]["renamed_to"]
        assert ts.run("shared", tenant="default").text == "Fix the login bug"
        assert ts.run(new_id, tenant="default").text == "Add a dark mode toggle"


def test_preview_shows_the_mapping_per_file_without_writing(tmp_path: Path) -> None:
    files = preview([TAU])
    assert len(files) == 1
    f = files[0]
    assert f.fmt == "tau-bench" and f.runs == 2 and f.rejected == 0
    assert f.steps > 0 and "respond" in f.tools
    assert f.task and f.task.startswith("You are")  # tau-bench's user instruction
    assert sum(f.outcomes.values()) == 2


def test_cli_dry_run_prints_json_per_file_and_opens_no_store(tmp_path: Path) -> None:
    home = tmp_path / "home"
    env = {**os.environ, "TRAJSEARCH_HOME": str(home), "TRAJSEARCH_MODEL": "hashing"}
    done = subprocess.run([sys.executable, "-m", "trajsearch.cli", "ingest", str(TAU), "--dry-run", "--json"],
                          env=env, capture_output=True, text=True, timeout=600, cwd=ROOT)
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    assert data["dry_run"] is True
    [entry] = data["files"]
    assert entry["format"] == "tau-bench" and entry["runs"] == 2 and entry["steps"] > 0
    assert entry["task"] and entry["tools"]
    assert not home.exists()  # nothing written, no store created


def test_a_file_holding_no_run_is_listed_and_named_not_dropped(tmp_path: Path) -> None:
    """A tau2-bench results.json of the directory layout (the results without ``simulations``, as
    tau2 writes beside simulations/) holds no run: the dry run lists it with 0 runs, the ingest says so."""
    results = json.loads((ROOT / "tests/fixtures/tau2-bench/.real/airline_run1.json").read_text())
    del results["simulations"]
    path = tmp_path / "results.json"
    path.write_text(json.dumps(results))
    [entry] = [f.to_dict() for f in preview([path])]
    assert (entry["source"], entry["format"], entry["runs"], entry["rejected"]) == (str(path), "tau2-bench", 0, 0)

    env = {**os.environ, "TRAJSEARCH_HOME": str(tmp_path / "home"), "TRAJSEARCH_MODEL": "hashing"}
    done = subprocess.run([sys.executable, "-m", "trajsearch.cli", "ingest", str(path), "-t", "acme"],
                          env=env, capture_output=True, text=True, timeout=600, cwd=ROOT)
    assert done.returncode == 0, done.stderr
    assert "read 0: ingested 0 runs" in done.stdout
    assert "no run in the input" in " ".join(done.stderr.split())

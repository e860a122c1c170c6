"""``trajsearch delete``: runs removed by id, or every run of a dump (an ingest undone), on both backends.

The runs are the bundled sample's real tau-bench runs (``trajsearch/samples/sample.jsonl``, under the
CLI's tenant) and a real SWE-agent trajectory (``tests/fixtures/swe-agent/default__gpt-4o``).
"""

from __future__ import annotations

import json
from pathlib import Path

from trajsearch.cli import SAMPLE
from trajsearch.store.traces import trace_name

from cli_support import backend, run_cli  # noqa: F401 (fixture)

SWE = Path(__file__).parent / "fixtures" / "swe-agent" / "default__gpt-4o"
SWE_RUN = "swe-agent.default__gpt-4o.astropy__astropy-12907"


def _runs() -> int:
    code, out, err = run_cli("stats", "--json")
    assert code == 0, err
    return json.loads(out)["trajectories"]


def _sample_dump(tmp_path: Path) -> tuple[Path, list[str]]:
    records = [{**json.loads(line), "tenant": "acme"} for line in Path(SAMPLE).read_text().splitlines()[:6]]
    dump = tmp_path / "batch.jsonl"
    dump.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return dump, [r["trajectory_id"] for r in records]


def test_delete_from_a_dump_undoes_its_ingest_and_leaves_other_runs(backend, tmp_path):  # noqa: F811
    dump, ids = _sample_dump(tmp_path)
    for source in (dump, SWE):
        code, out, err = run_cli("ingest", str(source))
        assert code == 0, out + err
    assert _runs() == len(ids) + 1

    code, out, err = run_cli("delete", "--from", str(dump), "--dry-run", "--json")
    assert code == 0, err
    assert json.loads(out) == {"would_remove": ids, "not_found": [], "kept_other_run": []}
    assert _runs() == len(ids) + 1  # a dry run removes nothing

    code, out, err = run_cli("delete", "--from", str(dump))
    assert code == 0, err
    assert f"removed {len(ids)} run(s)" in out
    assert _runs() == 1
    code, out, err = run_cli("show", ids[0])
    assert code == 1 and "no trajectory" in err  # its trace is gone with its rows
    code, out, err = run_cli("search", "reservation flight", "--json")
    assert code == 0 and not {h["trajectory_id"] for h in json.loads(out)} & set(ids)
    code, out, err = run_cli("show", SWE_RUN)
    assert code == 0 and SWE_RUN in out

    code, out, err = run_cli("delete", "--from", str(dump))  # again: nothing left to remove, and it says so
    assert code == 1 and "removed 0 run(s)" in out and f"not in the index: {len(ids)} run(s)" in out


def test_delete_by_id_names_the_runs_it_did_not_find(backend, tmp_path):  # noqa: F811
    code, out, err = run_cli("ingest", str(SWE))
    assert code == 0, out + err
    code, out, err = run_cli("delete", SWE_RUN, "no-such-run", "--json")
    assert code == 1
    assert json.loads(out) == {"removed": [SWE_RUN], "not_found": ["no-such-run"], "kept_other_run": []}
    assert _runs() == 0


def test_delete_refuses_bad_arguments_before_removing_anything(backend, tmp_path):  # noqa: F811
    code, out, err = run_cli("ingest", str(SWE))
    assert code == 0, out + err
    code, out, err = run_cli("delete")
    assert code == 2 and "name the runs to remove" in err
    code, out, err = run_cli("delete", SWE_RUN, 'x" or tenant != "')
    assert code == 2 and "invalid trajectory_id 'x\" or tenant != \"'" in " ".join(err.split()), err
    code, out, err = run_cli("delete", SWE_RUN, "--from", str(tmp_path / "missing.jsonl"))
    assert code == 2 and "missing.jsonl: no such file or directory" in " ".join(err.split())
    assert _runs() == 1


def test_delete_from_removes_only_the_runs_the_dump_gave_when_inputs_shared_an_id(backend, tmp_path):  # noqa: F811
    """Review 3 (round 41, F1): ``ingest a.jsonl b.jsonl`` with a run id in both (different runs) keeps a's under
    the id and b's under ``id+<hash>``; ``delete --from b.jsonl`` read b alone and removed a's run, keeping b's.
    A stored run is removed only where it is the dump's run (the same content), under its id or the distinct one."""
    dump, ids = _sample_dump(tmp_path)
    records = [json.loads(line) for line in dump.read_text().splitlines()]
    a, b = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    a.write_text(json.dumps(records[0]) + "\n", encoding="utf-8")
    b.write_text(json.dumps({**records[1], "trajectory_id": ids[0]}) + "\n", encoding="utf-8")  # a's id, b's run
    code, out, err = run_cli("ingest", str(a), str(b))
    assert code == 0, out + err
    assert _runs() == 2
    code, out, err = run_cli("delete", "--from", str(b), "--json")
    assert code == 0, out + err
    [removed] = json.loads(out)["removed"]
    assert removed.startswith(ids[0] + "+")  # b's run, under the distinct id the ingest gave it
    code, out, err = run_cli("show", ids[0], "--json")
    assert code == 0 and json.loads(out)["task"] == records[0]["task"]  # a's run is still there
    code, out, err = run_cli("delete", "--from", str(a), "--json")
    assert code == 0 and json.loads(out)["removed"] == [ids[0]]
    assert _runs() == 0


def test_delete_from_reads_the_dump_with_the_ingests_defaults(backend, tmp_path):  # noqa: F811
    """Review 3 (F3): a run ingested with ``--set`` differs from the dump's record read without it; without the
    same ``--set`` it is kept (another run's content under that id), with it it is removed."""
    dump, ids = _sample_dump(tmp_path)
    code, out, err = run_cli("ingest", str(dump), "--set", "policy_version=p7")
    assert code == 0, out + err
    code, out, err = run_cli("delete", "--from", str(dump), "--json")
    assert code == 1 and json.loads(out) == {"removed": [], "not_found": [], "kept_other_run": ids}
    assert _runs() == len(ids)
    code, out, err = run_cli("delete", "--from", str(dump), "--set", "policy_version=p7", "--json")
    assert code == 0 and json.loads(out)["removed"] == ids
    assert _runs() == 0


def _trace(backend: str, tmp_path: Path, trajectory_id: str) -> Path:  # noqa: F811
    """Where the backend's file trace store keeps that run's trace."""
    root = tmp_path / "home" / "traces" if backend == "embedded" else tmp_path / "srv-traces"
    return root / "acme" / trace_name(trajectory_id)


def test_a_delete_stopped_by_the_trace_store_leaves_no_trace_without_its_run_and_a_rerun_finishes(
        backend, tmp_path):  # noqa: F811
    """Probe G (D1): rows went first, then traces; a trace store failing mid-way (read-only, EIO, S3 down) left the
    runs' rows gone, their traces kept, and a rerun said "not in the index". A trace that cannot be unlinked (a
    directory in its place, which fails for root too) makes the store fail on one run: every trace still stored
    is an indexed run's, and a rerun, once the store is mended, removes the rest, traces and all."""
    dump, ids = _sample_dump(tmp_path)
    code, out, err = run_cli("ingest", str(dump))
    assert code == 0, out + err
    blocked = _trace(backend, tmp_path, ids[2])
    blocked.unlink()
    blocked.mkdir()
    (blocked / "in-the-way").write_text("x")

    code, out, err = run_cli("delete", *ids)
    assert code == 1
    assert "rerun the same command to finish" in " ".join(err.split()), err
    code, out, err = run_cli("delete", *ids, "--dry-run", "--json")
    indexed = json.loads(out)["would_remove"]
    assert ids[2] in indexed and _runs() == len(indexed)
    assert {t for t in ids if _trace(backend, tmp_path, t).exists()} <= set(indexed)  # no trace outlives its run

    (blocked / "in-the-way").unlink()
    blocked.rmdir()
    code, out, err = run_cli("delete", "--from", str(dump), "--json")  # the rerun, of the ingest's dump
    report = json.loads(out)
    assert report["removed"] == indexed and report["kept_other_run"] == [], out + err  # runs that lost their trace too
    assert code == (1 if report["not_found"] else 0)
    assert _runs() == 0 and not any(_trace(backend, tmp_path, t).exists() for t in ids)


def test_delete_removes_a_trace_left_with_no_run(backend, tmp_path):  # noqa: F811
    """Probe G (D1): a trace an older version's interrupted delete left with no run (or a writer killed mid-run)
    stayed for good: ``delete`` said "not in the index" and nothing reached it. By id or ``--from``, it goes now,
    and the run counts as removed; an id with neither rows nor trace is still not in the index."""
    dump, ids = _sample_dump(tmp_path)
    code, out, err = run_cli("ingest", str(dump))
    assert code == 0, out + err
    kept = {t: _trace(backend, tmp_path, t).read_bytes() for t in ids[:2]}
    code, out, err = run_cli("delete", *ids[:2])
    assert code == 0, out + err
    for trajectory_id, data in kept.items():  # what a delete stopped between rows and traces left
        _trace(backend, tmp_path, trajectory_id).write_bytes(data)

    code, out, err = run_cli("delete", ids[0], "no-such-run", "--json")
    assert code == 1 and json.loads(out) == {"removed": [ids[0]], "not_found": ["no-such-run"], "kept_other_run": []}
    assert not _trace(backend, tmp_path, ids[0]).exists()
    code, out, err = run_cli("delete", "--from", str(dump), "--json")
    assert code == 1, out + err
    report = json.loads(out)
    assert sorted(report["removed"]) == sorted(ids[1:]) and report["not_found"] == [ids[0]]
    assert _runs() == 0 and not any(_trace(backend, tmp_path, t).exists() for t in ids)

"""A rerun (after a kill, or after an input changed or was added) gives the runs the ids an uninterrupted ingest
gives them (probe G, G1): runs sharing an id are kept apart across inputs the checkpoint had done, not written
over each other.

Real data: two tau-bench v1 results files of different runs that share a file name, as a harness writing one
``results.json`` per run folder leaves them (tau-bench ids are ``tau-<file stem>-<task>-t<trial>``, so task 0
trial 0 of each is ``tau-results-0-t0``). Both are real excerpts already in the fixtures, copied under that name:
sierra-research/tau-bench's gpt-4o airline results (tasks 0, 5, 5: ``.runtime/SOURCE.md``) and a fork's grok-3
retail results (tasks 0, 8, 31: ``.real/SOURCE.md``), the two files of the probe's ``dumpD``.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from trajsearch.ingest.batch import IngestJob, Shard, run_ingest

from test_ingest_pipeline import open_ts, rows_of

TAU = Path(__file__).parent / "fixtures" / "tau-bench"
GPT4O = TAU / ".runtime" / "gpt-4o-airline-failed-0-5.json"
GROK3 = TAU / ".real" / "tool-calling-grok-3-0.0_range_0--1_user-grok-3-llm_0921131646.json"


def results(dump: Path, folder: str, source: Path) -> Path:
    """``source`` as ``dump/<folder>/results.json``."""
    path = dump / folder / "results.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(source, path)
    return path


def uninterrupted(tmp: Path, dump: Path) -> dict[str, str]:
    """The rows (id -> content hash) of one clean ingest of ``dump`` into a new store."""
    with open_ts(tmp, "reference") as ts:
        run_ingest(ts, IngestJob([dump], tenant="acme", state_dir=tmp / "reference-state"))
        return rows_of(ts)


def ingest(ts, dump: Path, state: Path, shards: int = 1) -> list:  # noqa: ANN001
    return [run_ingest(ts, IngestJob([dump], tenant="acme", state_dir=state, shard=Shard(i, shards)))
            for i in range(shards)]


@pytest.mark.parametrize("shards", [1, 2])
def test_an_input_added_after_a_done_one_does_not_replace_its_runs(tmp_path: Path, shards: int) -> None:
    """The probe's kill -9 once ``a/results.json`` was done: the rerun skipped it and wrote b's task 0 under the
    bare id, over a's (18 of 200 gpt-4o runs lost, exit 0). A dump that grows by a folder is the same case."""
    dump = tmp_path / "dump"
    results(dump, "a", GPT4O)
    with open_ts(tmp_path, "store") as ts:
        ingest(ts, dump, tmp_path / "state", shards)
        results(dump, "b", GROK3)
        reruns = ingest(ts, dump, tmp_path / "state", shards)
        rows = rows_of(ts)
    assert sum(r.skipped_units for r in reruns) == shards  # a/ was done: not written again
    renamed = [item for r in reruns for item in r.renamed]  # said by the rerun that wrote it
    assert [(source, old) for source, old, _ in renamed] == [(str(dump / "b" / "results.json"), "tau-results-0-t0")]
    assert rows == uninterrupted(tmp_path, dump)


def test_an_input_added_before_a_done_one_writes_the_later_runs_again(tmp_path: Path) -> None:
    """A new folder that sorts first takes the bare id in an uninterrupted ingest: the done input's run that shares
    it must then be written under its distinct id, not skipped (it would be lost under the new run)."""
    dump = tmp_path / "dump"
    results(dump, "b", GROK3)
    with open_ts(tmp_path, "store") as ts:
        ingest(ts, dump, tmp_path / "state")
        results(dump, "a", GPT4O)
        [rerun] = ingest(ts, dump, tmp_path / "state")
        rows = rows_of(ts)
    assert (rerun.skipped_units, rerun.report.unchanged) == (0, 2)  # b/ read again: its other two runs unchanged
    assert rows == uninterrupted(tmp_path, dump)  # the grok run's rows under the bare id are now the gpt-4o run's


def test_a_changed_input_does_not_replace_the_run_of_another_that_shares_its_id(tmp_path: Path) -> None:
    """The probe's second variant: one reward changed in ``b/results.json`` (a harness rewriting its results file);
    the rerun wrote b's task 0 under the bare id over a's, kill or no kill."""
    dump = tmp_path / "dump"
    results(dump, "a", GPT4O)
    b = results(dump, "b", GROK3)
    with open_ts(tmp_path, "store") as ts:
        ingest(ts, dump, tmp_path / "state")
        records = json.loads(b.read_text())
        records[1]["reward"] = 0.5  # task 8, a run of its own id
        b.write_text(json.dumps(records, indent=2))
        [rerun] = ingest(ts, dump, tmp_path / "state")
        rows = rows_of(ts)
    assert (rerun.skipped_units, rerun.report.ingested, rerun.report.unchanged) == (1, 1, 2)
    assert rows == uninterrupted(tmp_path, dump)

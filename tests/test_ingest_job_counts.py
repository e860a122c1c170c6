"""Probe G (G7): a run read twice in one job (one session saved at two times) lands once and is counted once.

Real input: Entire's checkpoints of one Claude Code session (MoonshotAI/kimi-cli, see
tests/fixtures/claude-code/.real/SOURCE.md): three growing copies of one transcript, 2, 4 and 3 steps. The
4-step copy replaces the 2-step one, and the 3-step one gives way to it. Embedded and over a real server on
loopback; the copies in one write batch or in several, the counts are the same and add up to what was read.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from trajsearch.embed import HashingEmbedder
from trajsearch.ingest.batch import IngestJob, run_ingest
from trajsearch.ingest.read import read_dump
from trajsearch.search import TrajSearch
from trajsearch.service.auth import KeyRing, key_entry, new_key
from trajsearch.service.client import Client
from trajsearch.service.server import ServiceServer

from cli_support import backend, run_cli  # noqa: F401 - the fixture

ENTIRE = Path(__file__).parent / "fixtures" / "claude-code" / ".real" / "entire-checkpoints"


@pytest.mark.parametrize("batch_size", [32, 1])
def test_a_run_replaced_by_a_later_copy_is_counted_once(tmp_path: Path, batch_size: int) -> None:
    with TrajSearch.open(str(tmp_path / "m.db"), traces=str(tmp_path / "t"), embedder=HashingEmbedder()) as ts:
        report = run_ingest(ts, IngestJob(paths=[ENTIRE], state_dir=tmp_path / "state"),
                            indexer_options={"batch_size": batch_size}).to_dict()
        assert (report["ingested"], report["replaced"], report["unchanged"]) == (1, 1, 1)
        assert report["read"] == 3 == report["ingested"] + report["replaced"] + report["unchanged"]
        assert ts.stats(tenant="default")["trajectories"] == 1


def test_over_a_server_a_run_in_two_batches_of_a_stream_is_counted_once(tmp_path: Path) -> None:
    key = new_key()
    ts = TrajSearch.open(str(tmp_path / "srv.db"), traces=str(tmp_path / "srv-t"), embedder=HashingEmbedder())
    with ServiceServer(ts, KeyRing.from_entries([key_entry(key, tenant="acme", role="write")]),
                       address="127.0.0.1:0") as srv, Client(srv.address, key) as client:
        report = client.add(list(read_dump(ENTIRE, tenant="acme")), batch_size=1)
        assert (report.ingested, report.replaced, report.unchanged) == (1, 1, 1)
        assert ts.stats(tenant="acme")["trajectories"] == 1
    ts.close()


def test_the_summary_says_a_later_copy_replaced_a_run(backend: str) -> None:  # noqa: F811
    code, out, err = run_cli("ingest", str(ENTIRE), "-q")
    assert code == 0, err
    out = " ".join(out.split())
    assert "read 3: ingested 1 runs" in out and "unchanged 1, replaced by a later copy 1, rejected 0" in out


def test_a_run_deleted_between_two_batches_of_one_stream_is_written_again(tmp_path: Path) -> None:
    """Review 3 of round p43 (D1): the server keeps one indexer per ingest stream, and it skipped a copy it had
    written with the same content on memory alone: a run deleted (a Delete call) between two batches was then
    reported unchanged and was missing afterwards. A later batch's store lookup decides; memory only counts."""
    native = Path(__file__).parent / "fixtures" / "native" / "mixed.jsonl"
    run = next(p.trajectory for p in read_dump(native, tenant="acme") if p.trajectory is not None)
    ts = TrajSearch.open(str(tmp_path / "m.db"), traces=str(tmp_path / "traces"), embedder=HashingEmbedder())
    stream = ts.indexer()  # as the servicer keeps one per ingest stream
    assert stream.add([run]).ingested == 1
    assert ts.delete(run.trajectory_id, tenant="acme")
    again = stream.add([run])
    assert again.rows > 0 and again.ingested + again.replaced == 1
    assert ts.run(run.trajectory_id, tenant="acme") is not None
    assert stream.add([run]).unchanged == 1  # still there: a third copy is unchanged, nothing written

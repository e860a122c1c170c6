"""An ingest rerun tells what the same inputs hold, on both backends (round 23, CLI7 1).

A rerun of an embedded ingest whose input had a bad line exited 0: its checkpoint had the input done, so nothing was
read, and "rejected 0" was the answer, where the same rerun over --server (no checkpoint: everything read again)
exited 3. A nightly job over a folder holding one bad file said 3 once, then 0 every night after, and a job resumed
after a crash said 0 when the part read before the crash held the rejections. The exit status is the inputs': 3 as
long as a record of them is rejected (the dead-letter file lists it), 4 when none of them ever landed. The dump is
real runs' native records with a line cut in half and a record missing its task (``fixtures/native/mixed.jsonl``).
"""

from __future__ import annotations

import json
from pathlib import Path

from cli_support import backend, newcomer, run_cli  # noqa: F401 (fixtures)

FIXTURES = Path(__file__).parent / "fixtures"
MIXED = FIXTURES / "native" / "mixed.jsonl"  # 3 good runs, 2 rejected lines (2 and 3)


def test_a_rerun_over_inputs_with_rejected_records_exits_3_on_both_backends(backend, tmp_path):
    for attempt in ("first", "rerun"):
        code, out, err = run_cli("ingest", str(MIXED), "--quiet")
        assert code == 3, f"{attempt}: {out}{err}"
    code, out, err = run_cli("ingest", str(MIXED), "--json")
    report = json.loads(out)
    assert code == 3, err
    # the rejections are the inputs': read again (--server) or counted by the checkpoint that had them done
    assert report["rejected"] + report["rejected_earlier"] == 2, report
    assert report["ingested"] + report["unchanged"] + report["landed_earlier"] == 3, report


def test_a_rerun_says_the_rejections_an_earlier_run_made(backend, tmp_path):
    run_cli("ingest", str(MIXED), "--quiet")
    code, out, err = run_cli("ingest", str(MIXED))
    said = " ".join((out + err).split())
    assert code == 3, said
    if backend == "embedded":  # nothing read again: the summary says why it still exits 3, and where they are
        assert "2 record(s) of the input(s) read before were rejected then" in said, said
        assert "(they were written to " in said, said
    else:
        assert "rejected 2" in said, said


def test_a_rerun_of_inputs_none_of_whose_records_ever_landed_exits_4(backend, tmp_path):
    bad = tmp_path / "bad.jsonl"
    bad.write_text(MIXED.read_text().splitlines()[1] + "\n", encoding="utf-8")  # the line cut in half alone
    for attempt in ("first", "rerun"):
        code, out, err = run_cli("ingest", str(bad), "--quiet")
        assert code == 4, f"{attempt}: {out}{err}"


def test_inputs_done_with_no_rejection_still_exit_0(backend, tmp_path):
    good = tmp_path / "good.jsonl"
    lines = MIXED.read_text().splitlines()
    good.write_text("\n".join([lines[0], lines[4]]) + "\n", encoding="utf-8")
    for attempt in ("first", "rerun"):
        code, out, err = run_cli("ingest", str(good), "--quiet")
        assert code == 0, f"{attempt}: {out}{err}"
    bad = tmp_path / "bad.jsonl"
    bad.write_text(lines[1] + "\n", encoding="utf-8")
    code, out, err = run_cli("ingest", str(good), str(bad), "--quiet")  # the good runs landed: some rejected, not all
    assert code == 3, out + err


def test_an_ingest_resumed_after_an_interruption_counts_the_rejections_made_before_it(tmp_path):
    """The head of an input that a stopped ingest committed is not read again by its rerun, nor were its rejections
    counted: a job stopped after its bad lines (a deploy, a kill) and resumed said "rejected 0", exit 0, and the
    scheduler saw 130 then 0. Stopped here by its progress callback once the first three records (both bad lines
    among them) are committed, one record a batch; the rerun reads the rest and counts the two."""
    import pytest

    from trajsearch.cli.ingest_commands import exit_status
    from trajsearch.embed import HashingEmbedder
    from trajsearch.indexer import IngestError
    from trajsearch.ingest.batch import IngestJob, run_ingest
    from trajsearch.search import TrajSearch

    job = IngestJob(paths=[MIXED], tenant="acme", state_dir=tmp_path / "state")
    committed = [0]

    def stop_after_three(n: int) -> None:
        committed[0] += n
        if committed[0] >= 3:
            raise KeyboardInterrupt

    with TrajSearch.open(str(tmp_path / "m.db"), traces=str(tmp_path / "traces"), embedder=HashingEmbedder()) as ts:
        with pytest.raises(IngestError, match="KeyboardInterrupt"):  # the pipeline's stop, each batch whole
            run_ingest(ts, job, on_records=stop_after_three, indexer_options={"batch_size": 1})
        result = run_ingest(ts, job, indexer_options={"batch_size": 1}).to_dict()
    assert result["rejected"] == 0 and result["rejected_earlier"] == 2, result
    assert result["ingested"] + result["unchanged"] + result["landed_earlier"] == 3, result
    assert exit_status([result]) == 3


def test_a_rerun_after_the_dead_letter_file_is_gone_says_where_they_were_written(newcomer, tmp_path):  # noqa: F811
    """FRALLB 3: the rerun's note said "(all rejections: FILE)" of a dead-letter file the operator had since mended
    and removed: it says where they were written, which stays true."""
    dead = tmp_path / "rejected.jsonl"
    run_cli("ingest", str(MIXED), "--dead-letter", str(dead), "--quiet")
    dead.unlink()
    _, out, err = run_cli("ingest", str(MIXED), "--dead-letter", str(dead))
    said = " ".join((out + err).split())
    assert f"rejected then (they were written to {dead}): mend them and rerun" in said, said

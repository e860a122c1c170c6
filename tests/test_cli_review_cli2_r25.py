"""Review of round 25's CLI2 change (FRCLI2), through the CLI: which inputs exit 2 ("nothing to read", nothing
made), Harbor's own job files, and the store paths ``--uri`` takes.

Real inputs: a real Harbor job whose one trial never ran, a real unfinished OpenHands evaluation, real LangSmith
exports and a real tau2-bench results file (see each fixture folder's SOURCE.md)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from cli_support import newcomer, run_cli  # noqa: F401 - the fixture

ROOT = Path(__file__).parent.parent
FIXTURES = Path(__file__).parent / "fixtures"
NEVER_RAN_JOB = FIXTURES / "atif" / ".real" / "harbor-never-ran-job" / "nova-complex-docker"


def said(text: str) -> str:
    return " ".join(text.split())


def test_a_harbor_job_s_own_log_is_said_to_be_the_job_s(newcomer) -> None:
    """Harbor's ``Job`` writes ``job.log`` in the job folder: beside a trial that never ran it was counted a file of
    no dump format, and a second line said "no dump file ... passed over by name" of a folder whose files had all
    just been named Harbor's own."""
    code, out, err = run_cli("ingest", str(NEVER_RAN_JOB))
    told = said(err)
    assert "7 file(s) passed over as holding none" in told, told  # the job's 3 and the trial's 4
    assert "no dump file" not in told and "passed over by name" not in told, told


# -- 1: exit 2 only for inputs holding no file to read, and nothing made then -------------------------------------

EVAL_UNFINISHED = FIXTURES / "openhands" / ".real" / "eval-unfinished"
LANGSMITH = FIXTURES / "langsmith" / ".real" / "langgraph-react-runs-batch.json"


def test_a_run_set_read_that_holds_no_run_exits_0_saying_so(newcomer) -> None:
    """An OpenHands evaluation that finished no instance (its output.jsonl empty) and a Harbor job whose one trial
    never ran are run sets the ingest recognises: they exited 2, "a bad argument or missing input", while a tau2
    results file of no simulations exited 0. Each exits 0 now, a line saying why no run was read; a dry run too."""
    for folder, why in ((EVAL_UNFINISHED, "an OpenHands evaluation's empty output.jsonl: the run set finished no "
                         "instance"), (NEVER_RAN_JOB, "Harbor's own config.json of trial")):
        for dry in ((), ("--dry-run",)):
            code, out, err = run_cli("ingest", str(folder), *dry)
            assert code == 0 and why in said(err), (dry, out + err)


def test_a_folder_holding_no_file_to_read_exits_2_and_makes_nothing(newcomer, tmp_path: Path) -> None:
    """An empty folder exited 2 ("nothing was written") after a fresh home had been given milvus.db/, a checkpoint
    and an empty dead-letter file: the store is not even made now."""
    empty = tmp_path / "empty"
    empty.mkdir()
    code, out, err = run_cli("ingest", str(empty))
    assert code == 2 and f"no dump file (.jsonl, .ndjson, .json, .traj, or one .gz, .zst; .eval archives) in {empty} " \
                          "(an empty folder, or a share not mounted?)" in said(err), out + err
    assert not (tmp_path / "home").exists()


def test_each_input_holding_nothing_is_said_beside_those_read(newcomer, tmp_path: Path) -> None:
    """``ingest dumps/ /mnt/share`` with the share not mounted exited 0 and said nothing of the share: its
    runs read, the empty folder is named."""
    empty = tmp_path / "share"
    empty.mkdir()
    code, out, err = run_cli("ingest", str(LANGSMITH), str(empty), "--quiet")
    assert code == 0, out + err
    assert f"no run in the input: no dump file (.jsonl, .ndjson, .json, .traj, or one .gz, .zst; .eval archives) in {empty} " \
           in said(err), err
    assert "ingested 1 runs" in said(out), out


def test_ingest_help_says_when_it_exits_2(newcomer) -> None:
    """--help said "--dry-run exits 0, 3 or 4" while a dry run over notes only exits 2."""
    code, out, err = run_cli("ingest", "--help")
    assert code == 0 and "exits 0, 3 or 4" not in said(out), out
    assert "inputs holding no file to read at all" in said(out) and "Dumps read that hold no run exit 0" in said(out)


# -- 3: store paths pymilvus takes ----------------------------------------------------------------------------------


def test_store_paths_are_handed_to_milvus_as_it_reads_them(newcomer, tmp_path: Path, monkeypatch) -> None:
    """``--uri '~/x.db'`` made the folder under the home, then failed "dir: ~ not exists" (exit 1); ``--uri
    /x/y.db/`` was told to use '/x/y.db.db'; ``HTTP://host`` and ``unix:/sock``, server addresses to pymilvus, were
    refused as store paths not ending in .db."""
    me = tmp_path / "me"
    me.mkdir()
    monkeypatch.setenv("HOME", str(me))
    monkeypatch.chdir(tmp_path)
    code, out, err = run_cli("stats", "--uri", "~/x.db")
    assert code == 0 and (me / "x.db").is_dir(), out + err
    assert not (tmp_path / "~").exists()
    code, out, err = run_cli("stats", "--uri", f"{tmp_path / 'y.db'}/")
    assert code == 0 and (tmp_path / "y.db").is_dir(), out + err
    for server in ("HTTP://127.0.0.1:1", f"unix:{tmp_path / 'no.sock'}"):  # the command's own error line
        done = subprocess.run([sys.executable, "-m", "trajsearch.cli", "stats", "--uri", server],
                              env={**os.environ, "PYTHONPATH": str(ROOT)},
                              capture_output=True, text=True, timeout=600)
        assert done.returncode == 1 and "does not end in .db" not in said(done.stderr), (server, done.stderr)
        assert "Fail connecting to server" in said(done.stderr), (server, done.stderr)
    # review RFIX: grpc:// (the service's own scheme) and UNIX: had passed for Milvus servers, and pymilvus refused
    # them in its words (exit 1; with --workers an ingest/ folder left behind): neither is a server it connects to
    for other in ("grpc://127.0.0.1:19530", "GRPC://127.0.0.1:19530", f"UNIX:{tmp_path / 'no.sock'}"):
        code, out, err = run_cli("stats", "--uri", other)
        assert code == 2 and "is no Milvus address" in said(err) and "http://" in said(err), (other, out + err)
        code, out, err = run_cli("ingest", str(LANGSMITH), "--workers", "2", "--uri", other)
        assert code == 2 and "is no Milvus address" in said(err), (other, out + err)


# -- 4: --workers refuses bad locations before a worker starts ----------------------------------------------------


def test_workers_refuse_a_bad_store_or_trace_location_before_starting(newcomer, tmp_path: Path) -> None:
    """Said before anything starts, as one process's open says them (exit 2), by a check of the locations, not by
    taking any ValueError met while the workers ran for a bad argument."""
    code, out, err = run_cli("ingest", str(LANGSMITH), "--workers", "2", "--traces", "file://relative")
    assert code == 2 and "must be file:///absolute/path" in said(err), out + err
    assert not (tmp_path / "home").exists()


# -- 5: search --help on what auto picks --------------------------------------------------------------------------


def test_search_help_says_auto_searches_passages_by_their_words(newcomer) -> None:
    """--help said --mode auto takes "hybrid or dense", while over passages (no vector) it takes lexical."""
    code, out, err = run_cli("search", "--help")
    assert code == 0 and "and lexical over passages" in said(out), out

"""Operating the batch indexer from a scheduler (probe E of round p40): pipes as inputs, exit codes, --workers counts.

Real files only: ``tau-bench/gpt-4o-airline-mini.json`` (two runs of tau-bench's own ``gpt-4o-airline.json``, see
its folder) and ``swe-agent/.real/acr-swe-agent-gpt4-lite/`` (three SWE-agent runs and their SWE-bench report,
nus-apr/auto-code-rover @ 3536ac292e3062ffb3f6e98457958e2b803228d6, see ``swe-agent/.real/SOURCE.md``). A cut-off
dump is the head of a real file, as a dump cut off mid-write is. Plumbing: the fast hashing test embedder.
"""

from __future__ import annotations

import gzip
import json
import os
import shutil
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from typer.testing import CliRunner

from cli_support import backend, run_cli  # noqa: F401  (backend: a fixture)
from trajsearch.cli import app

FIXTURES = Path(__file__).parent / "fixtures"
ROOT = Path(__file__).parents[1]
TAU = FIXTURES / "tau-bench" / "gpt-4o-airline-mini.json"
ACR = FIXTURES / "swe-agent" / ".real" / "acr-swe-agent-gpt4-lite"


def ingest_process(*args: str, home: Path, shell: str | None = None) -> subprocess.CompletedProcess:
    """``trajsearch ingest ARGS`` in its own process (``shell``: a bash command line, ``$TS`` the CLI). The
    timeout turns a hang (a FIFO opened twice) into a failure."""
    env = {**os.environ, "TRAJSEARCH_MODEL": "hashing", "TRAJSEARCH_HOME": str(home),
           "TS": f"{sys.executable} -m trajsearch.cli"}
    cmd = ["bash", "-c", shell] if shell else [sys.executable, "-m", "trajsearch.cli", "ingest", *args]
    return subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=600, cwd=ROOT)


def checkpoint_units(home: Path) -> dict:
    """Every unit the job's checkpoints hold."""
    return {key: entry for ckpt in (home / "ingest").glob("checkpoint-*.json")
            for key, entry in json.loads(ckpt.read_text())["units"].items()}


# -- D1: a pipe as an input ----------------------------------------------------------------


def test_a_process_substitution_of_a_gzip_dump_is_read_once_and_not_checkpointed(tmp_path: Path) -> None:
    """`ingest <(zcat dump.gz)` was refused: "no such dump file or directory: /proc/<pid>/fd/pipe:[…]", a path
    resolved from /dev/fd/63's link text. Now the pipe is copied once and read; no checkpoint claims it."""
    gz = tmp_path / "airline.json.gz"
    gz.write_bytes(gzip.compress(TAU.read_bytes()))
    home = tmp_path / "home"
    done = ingest_process(home=home, shell=f'$TS ingest -t acme -q <(gzip -dc "{gz}")')
    assert done.returncode == 0, done.stderr
    assert "read 2: ingested 2 runs" in done.stdout
    assert "read from a pipe" in " ".join(done.stdout.split())
    assert "pipe:[" not in done.stdout + done.stderr
    assert checkpoint_units(home) == {}  # nothing can resume a stream: a rerun reads it whole
    again = ingest_process(home=home, shell=f'$TS ingest -t acme -q <(gzip -dc "{gz}")')
    assert again.returncode == 0 and "ingested 0 runs (0 rows), unchanged 2" in again.stdout, again.stderr


def test_a_named_fifo_with_a_writer_is_read_once(tmp_path: Path) -> None:
    """A named FIFO hung the ingest forever, its writer done: it was opened once to detect the format and again
    to read it, and the second open waited for a writer that was gone."""
    fifo = tmp_path / "gpt-4o-airline.json"
    os.mkfifo(fifo)
    writer = threading.Thread(target=lambda: fifo.write_bytes(TAU.read_bytes()), daemon=True)
    writer.start()  # blocks in open() until the ingest opens the FIFO to read
    done = ingest_process(str(fifo), "-t", "acme", "-q", home=tmp_path / "home")
    assert done.returncode == 0, done.stderr
    assert "read 2: ingested 2 runs" in done.stdout


def test_read_dump_refuses_a_fifo_at_once_instead_of_waiting_on_it(tmp_path: Path) -> None:
    """The library cannot read a stream in place (it opens a dump more than once): it says so, never opening the
    FIFO (a FIFO with no writer blocked the first open forever)."""
    fifo = tmp_path / "runs.jsonl"
    os.mkfifo(fifo)
    code = (f"from trajsearch.ingest.read import read_dump\n"
            f"try:\n read_dump({str(fifo)!r})\nexcept ValueError as e:\n print(e)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=600, cwd=ROOT)
    assert "a pipe or FIFO gives its bytes once" in done.stdout, done.stderr


def test_dash_reads_a_dump_from_standard_input_and_names_it_so(backend) -> None:
    """`-` was "no such file or directory". Now it is standard input, read once; a rejection names it, not the
    temporary copy that is gone when the ingest ends."""
    runner = CliRunner()
    whole = runner.invoke(app, ["ingest", "-", "-q"], input=TAU.read_bytes())
    assert whole.exit_code == 0, whole.stderr
    assert "read 2: ingested 2 runs" in whole.stdout
    cut = runner.invoke(app, ["ingest", "-", "-q"], input=TAU.read_bytes()[:3000])
    assert "rejected standard input:" in " ".join(cut.stderr.split())
    assert "trajsearch-streams-" not in cut.stdout + cut.stderr


# -- D2: the exit status -------------------------------------------------------------------


def bad_dumps(folder: Path) -> Path:
    """A truncated JSON, a truncated gzip and an empty file: every input of the batch is rejected."""
    folder.mkdir()
    data = TAU.read_bytes()
    (folder / "cut.json").write_bytes(data[:3000])
    (folder / "cut2.json.gz").write_bytes(gzip.compress(data)[:400])
    (folder / "empty.jsonl").write_bytes(b"")
    return folder


def test_the_exit_status_says_whether_records_were_rejected_or_nothing_landed(backend, tmp_path: Path) -> None:
    """A batch whose every input was rejected exited 0, like a clean one. Now: 0 clean, 3 some rejected (the rest
    landed), 4 nothing landed; the help says what each means."""
    bad = bad_dumps(tmp_path / "bad")
    code, _, err = run_cli("ingest", str(bad), "-q")
    assert code == 4, err
    assert err.count("rejected") >= 3

    mixed = tmp_path / "mixed"
    mixed.mkdir()
    shutil.copy(bad / "cut.json", mixed)
    shutil.copy(TAU, mixed / "gpt-4o-airline.json")
    code, out, err = run_cli("ingest", str(mixed), "-q")
    assert code == 3, err
    assert "ingested 2 runs" in out  # the good records land whatever the code

    code, out, err = run_cli("ingest", str(TAU), "-q")
    assert code == 0, err

    code, out, _ = run_cli("ingest", "--help")
    help_text = " ".join(out.replace("│", " ").split())  # the text, wherever the help's box wraps it
    assert "Exit status" in help_text and "0 every record read landed" in help_text
    assert "3 some records or inputs were rejected" in help_text
    assert "4 nothing landed" in help_text and "- for standard input" in help_text


def test_a_rerun_that_the_checkpoint_skips_exits_as_the_first_run_not_4(tmp_path: Path) -> None:
    """Nothing read because every input is done already is no failure (not 4): the inputs' runs landed. Their
    rejected files are still rejected: 3, as the first run and as a rerun over --server (it had been 0: round 23,
    CLI7)."""
    home, bad = tmp_path / "home", bad_dumps(tmp_path / "bad")
    shutil.copy(TAU, bad / "gpt-4o-airline.json")
    assert ingest_process(str(bad), "-t", "acme", "-q", home=home).returncode == 3
    again = ingest_process(str(bad), "-t", "acme", "-q", home=home)
    assert again.returncode == 3, again.stdout + again.stderr
    assert "already done per the checkpoint" in again.stdout


# -- D3: --workers and --shard counts ------------------------------------------------------


def test_a_shard_counts_the_verdicts_of_its_own_runs_only(backend, tmp_path: Path) -> None:
    """Each shard parses every run but keeps its own: the outcome file's count took in every run parsed, so a
    shard said "a verdict for 3 of 3 run(s) read" under "read 1"."""
    if backend == "server":
        pytest.skip("--shard is for a store this process writes")
    runs = tmp_path / "runs"
    runs.mkdir()
    for traj in ACR.glob("*.traj"):
        shutil.copy(traj, runs)
    seen = 0
    for shard in ("0/2", "1/2"):
        code, out, err = run_cli("ingest", str(runs), "--outcomes", str(ACR / "final_report.json"), "--shard", shard,
                                 "--json")
        assert code == 0, err
        result = json.loads(out)
        assert result["outcomes"]["runs"] == result["read"] == result["ingested"]
        seen += result["read"]
    assert seen == 3


def test_workers_count_each_input_already_done_once(tmp_path: Path) -> None:
    """`--workers 2` rerun said "6 input(s) already done" for 3 inputs: each worker's count, added up."""
    runs, home = tmp_path / "runs", tmp_path / "home"
    runs.mkdir()
    for traj in ACR.glob("*.traj"):
        shutil.copy(traj, runs)
    args = (str(runs), "-t", "acme", "--outcomes", str(ACR / "final_report.json"), "--workers", "2", "-q")
    first = ingest_process(*args, home=home)
    assert first.returncode == 0, first.stderr
    assert "read 3: ingested 3 runs" in first.stdout and "a verdict for 3 of 3 run(s) read" in first.stdout
    again = ingest_process(*args, home=home)
    assert again.returncode == 0, again.stderr
    assert "3 input(s) already done per the checkpoint" in again.stdout
    assert "a verdict for 0 of 0" not in again.stdout

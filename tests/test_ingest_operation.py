"""Operating the batch indexer from a scheduler (probe E of round p40): pipes as inputs.

Real files only: ``tau-bench/gpt-4o-airline-mini.json`` (two runs of tau-bench's own ``gpt-4o-airline.json``, see
its folder) and ``swe-agent/.real/acr-swe-agent-gpt4-lite/`` (three SWE-agent runs and their SWE-bench report,
nus-apr/auto-code-rover @ 3536ac292e3062ffb3f6e98457958e2b803228d6, see ``swe-agent/.real/SOURCE.md``). A cut-off
dump is the head of a real file, as a dump cut off mid-write is. Plumbing: the fast hashing test embedder.
"""

from __future__ import annotations

import gzip
import json
import os
import subprocess
import sys
import threading
from pathlib import Path

from typer.testing import CliRunner

from cli_support import backend  # noqa: F401  (backend: a fixture)
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
    return subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=180, cwd=ROOT)


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
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, cwd=ROOT)
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

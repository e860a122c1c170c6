"""Streamed inputs and the ingest's exit statuses, as a scheduler meets them (review 2 of round p40: F2, F5, F7, F8).

Real files only: ``tau-bench/gpt-4o-airline-mini.json`` (two airline runs of tau-bench's own ``gpt-4o-airline.json``,
see ``tests/test_ingest_operation.py``) and ``tau-bench/.real/tool-calling-grok-3-...json`` (three retail runs of a
tau-bench fork's results file, see ``tau-bench/.real/SOURCE.md``): two different dumps of a format that takes run ids
from the file name. A cut-off dump is the head of a real file. Plumbing: the fast hashing test embedder.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from cli_support import backend, run_cli  # noqa: F401  (backend: a fixture)
from trajsearch.cli import app

FIXTURES = Path(__file__).parent / "fixtures"
ROOT = Path(__file__).parents[1]
AIRLINE = FIXTURES / "tau-bench" / "gpt-4o-airline-mini.json"
RETAIL = FIXTURES / "tau-bench" / ".real" / "tool-calling-grok-3-0.0_range_0--1_user-grok-3-llm_0921131646.json"


def stream(*args: str, data: bytes) -> tuple[int, str, str]:
    """``trajsearch ingest - ARGS`` with ``data`` on standard input: exit code, stdout, stderr."""
    result = CliRunner().invoke(app, ["ingest", "-", "-q", *args], input=data)
    return result.exit_code, result.stdout, result.stderr


def stored_runs() -> int:
    code, out, err = run_cli("stats", "--json")
    assert code == 0, err
    return json.loads(out)["trajectories"]


# -- F2: a stream's run ids --------------------------------------------------------------------


def test_two_dumps_streamed_unnamed_are_told_that_they_share_ids(backend) -> None:
    """Bug (F2): tau-bench takes run ids from the file name, so every dump streamed in as ``-`` got ``tau-stdin-…``
    ids: the retail dump streamed after the airline one replaced its run ``tau-stdin-0-t0`` and the summary said
    nothing. Now it warns, in the summary and in --json, and says how to name the stream."""
    code, _, err = stream(data=AIRLINE.read_bytes())
    assert code == 0, err
    told = " ".join(err.split())
    assert "2 run(s) of standard input took their id from the name of its temporary copy" in told
    assert "tau-stdin-0-t0" in told and "--stream-name FILE" in told
    code, out, err = stream("--json", data=RETAIL.read_bytes())
    assert code == 0, err
    assert json.loads(out)["named_after_stream_copy"]["runs"] == 3


def test_a_named_stream_takes_the_ids_of_its_file(backend) -> None:
    """``--stream-name`` names the stream's copy: its runs get the ids the file itself gives (the same runs:
    unchanged), and two different dumps streamed one after the other keep their runs apart (2 + 3)."""
    code, out, err = run_cli("ingest", str(AIRLINE), "-q")
    assert code == 0 and "ingested 2 runs" in out, err
    code, out, err = stream("--stream-name", AIRLINE.name, data=AIRLINE.read_bytes())
    assert code == 0, err
    assert "ingested 0 runs (0 rows), unchanged 2" in out
    assert "temporary copy" not in err
    code, out, err = stream("--stream-name", RETAIL.name, data=RETAIL.read_bytes())
    assert code == 0 and "ingested 3 runs" in out, err
    assert stored_runs() == 5


def test_a_stream_name_must_be_a_relative_name_one_per_stream(tmp_path: Path) -> None:
    code, _, err = stream("--stream-name", "/etc/x.json", data=AIRLINE.read_bytes())
    assert code == 2 and "relative path" in " ".join(err.split())
    code, _, err = run_cli("ingest", str(AIRLINE), "--stream-name", "a.json", "--dry-run")
    assert code == 2 and "for 0 streamed input(s)" in err


# -- F5: --dry-run exits as the ingest would -----------------------------------------------------


def test_a_dry_run_exits_as_the_ingest_would(tmp_path: Path) -> None:
    """Bug (F5): ``--dry-run`` exited 0 whatever it found, so it could not serve as a scheduler's pre-flight
    check. Now 4 when nothing would land, 3 when some records would be rejected, 0 when all would land."""
    cut = tmp_path / "cut" / AIRLINE.name
    cut.parent.mkdir()
    cut.write_bytes(AIRLINE.read_bytes()[:3000])
    code, _, err = run_cli("ingest", str(cut.parent), "--dry-run")
    assert code == 4, err
    code, _, err = run_cli("ingest", str(cut.parent), str(AIRLINE), "--dry-run", "--json")
    assert code == 3, err
    code, _, err = run_cli("ingest", str(AIRLINE), "--dry-run")
    assert code == 0, err
    code, out, _ = run_cli("ingest", "--help")
    assert "--dry-run exits as the ingest would" in " ".join(out.split())


# -- F8: --server reports an unreadable input as a rejection --------------------------------------


def test_an_unreadable_input_over_server_is_a_rejection_as_locally(backend, tmp_path: Path) -> None:
    """Bug (F8): with --server a truncated file made the reader raise inside the gRPC request stream: "error:
    ServiceError: UNKNOWN: Exception iterating requests!" and exit 1 ("rerun to resume": a scheduler retried
    forever). Locally it is a rejection, exit 4. Now both backends name the rejection and exit alike."""
    cut = tmp_path / RETAIL.name  # cut inside its first record: not even its format can be told
    cut.write_bytes(RETAIL.read_bytes()[:3000])
    code, _, err = run_cli("ingest", str(cut), "-q")
    told = "".join(err.split())  # the console wraps a long path anywhere
    assert code == 4, err
    assert f"rejected{cut}" in told and "UNKNOWN" not in told
    again = tmp_path / "again" / cut.name  # not the input the checkpoint has done
    again.parent.mkdir()
    again.write_bytes(cut.read_bytes())
    code, out, err = run_cli("ingest", str(again), str(AIRLINE), "-q")
    assert code == 3 and "ingested 2 runs" in out, err
    code, _, err = stream(data=RETAIL.read_bytes()[:3000])
    assert code == 4 and "rejected standard input" in " ".join(err.split()), err


# -- F7: the copy of a stream does not outlive the ingest -----------------------------------------


def wait_for(condition, what: str, timeout: float = 600) -> None:
    """Poll ``condition`` until it holds; a generous timeout so that a loaded machine passes."""
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            pytest.fail(f"timed out waiting for {what}")
        time.sleep(0.05)


def copies_in(tmp: Path) -> list[Path]:
    return [p for p in tmp.glob("trajsearch-streams-*/*/*") if p.is_file()]


def ingest_env(tmp_path: Path) -> dict[str, str]:
    tmp = tmp_path / "tmp"
    tmp.mkdir(exist_ok=True)
    return {**os.environ, "TRAJSEARCH_MODEL": "hashing", "TRAJSEARCH_HOME": str(tmp_path / "home"), "TMPDIR": str(tmp)}


def test_sigterm_during_a_streamed_ingest_removes_the_copy(tmp_path: Path) -> None:
    """Bug (F7): a scheduler's timeout (SIGTERM) killed a streamed ingest with its whole copy of the stream left
    in $TMPDIR (172 MB a night in the review's repro). SIGTERM is now a clean exit (143) that removes it."""
    env = ingest_env(tmp_path)
    proc = subprocess.Popen([sys.executable, "-m", "trajsearch.cli", "ingest", "-", "-q", "-t", "acme"], cwd=ROOT,
                            env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        proc.stdin.write(AIRLINE.read_bytes() * 300)  # over a copy buffer's 1 MB, and the writer is still at it

        proc.stdin.flush()
        tmp = Path(env["TMPDIR"])
        wait_for(lambda: any(p.stat().st_size for p in copies_in(tmp)), "the stream's copy to appear")
        proc.send_signal(signal.SIGTERM)
        code = proc.wait(timeout=600)
    finally:
        proc.kill()
        proc.stdin.close()
    assert code == 143, proc.stderr.read()
    assert list(tmp.glob("trajsearch-streams-*")) == []


def test_the_next_ingest_removes_the_copies_of_an_ingest_that_was_killed(tmp_path: Path) -> None:
    """A ``kill -9`` gives no chance to clean up: the next ingest removes the copies whose owner is gone (the
    host and pid in the folder's name), and leaves those of a live one, and those of another host (review 3, F2:
    a container sharing $TMPDIR, whose pids are not this host's: its live ingest lost its copy)."""
    from trajsearch.ingest.read import _host

    env = ingest_env(tmp_path)
    tmp = Path(env["TMPDIR"])
    gone = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    dead = tmp / f"trajsearch-streams-{_host()}-{gone.stdout.strip()}-x1y2z3" / "stream-0"
    live = tmp / f"trajsearch-streams-{_host()}-{os.getpid()}-a1b2c3" / "stream-0"
    elsewhere = tmp / f"trajsearch-streams-{_host()}x-container-{gone.stdout.strip()}-q1w2e3" / "stream-0"
    for folder in (dead, live, elsewhere):
        folder.mkdir(parents=True)
        (folder / "stdin").write_bytes(AIRLINE.read_bytes())
    done = subprocess.run([sys.executable, "-m", "trajsearch.cli", "ingest", "-", "-q", "-t", "acme"], cwd=ROOT,
                          env=env, input=AIRLINE.read_bytes(), capture_output=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert not dead.parent.exists()
    assert live.exists() and elsewhere.exists()


def test_a_dry_run_reads_records_under_the_tenant_the_ingest_would(backend, tmp_path: Path) -> None:
    """Review 3 (round 41, F4): over --server a dry run read records under tenant ``default``, not the key's, so
    native records of the key's tenant were all "rejected" and the dry run exited 4 where the ingest lands them.
    The records are the bundled sample's real tau-bench runs, written under the CLI's tenant (the key's)."""
    from trajsearch.cli import SAMPLE

    records = [{**json.loads(line), "tenant": "acme"} for line in Path(SAMPLE).read_text().splitlines()[:2]]
    dump = tmp_path / "acme.jsonl"
    dump.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    code, out, err = run_cli("ingest", str(dump), "--dry-run", "--json")
    assert code == 0, out + err
    assert [f["runs"] for f in json.loads(out)["files"]] == [2]
    code, out, err = run_cli("ingest", str(dump))
    assert code == 0, out + err

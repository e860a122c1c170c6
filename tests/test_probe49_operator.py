"""Probe 49 (O): the batch indexer and the service under failure, as an operator meets them.

A full disk is a real one: a small tmpfs mounted in a user and mount namespace of the command's own (``unshare
-rm``), as ``test_ingest_disk_full`` does; skipped where the kernel does not allow it. The input: real tau-bench
results (``fixtures/tau-bench/.real``, sources in the ``SOURCE.md`` there).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from process_support import cli_env

ROOT = Path(__file__).resolve().parent.parent
TAU = Path(__file__).parent / "fixtures" / "tau-bench" / ".real"


def _on_a_small_disk(mount: Path, size: str, command: list[str], env: dict[str, str],
                     **popen: object) -> subprocess.Popen:
    """``command`` started with a ``size`` tmpfs mounted at ``mount`` (in a mount namespace of its own)."""
    mount.mkdir()
    script = f'mount -t tmpfs -o size={size} tmpfs "$0" && exec "$@"'
    return subprocess.Popen(["unshare", "-rm", "sh", "-c", script, str(mount), *command], cwd=ROOT, env=env,
                            text=True, **popen)


def _need_a_mount(tmp_path: Path) -> None:
    if not shutil.which("unshare"):
        pytest.skip("no unshare here")
    (tmp_path / "probe").mkdir()
    probe = subprocess.run(["unshare", "-rm", "sh", "-c", 'mount -t tmpfs -o size=64k tmpfs "$0"',
                            str(tmp_path / "probe")], capture_output=True, timeout=600)
    if probe.returncode != 0:
        pytest.skip("no user and mount namespace here to mount a small tmpfs in")


@pytest.mark.parametrize("state_dir_elsewhere", [False, True])
def test_a_full_disk_under_workers_is_the_single_process_line(tmp_path: Path, state_dir_elsewhere: bool) -> None:
    """O1: ``ingest --workers 2`` onto a full disk said ``error (0/2): worker 0 exited with 1:`` and no reason (the
    worker's result and log were files on the full disk), or, with ``--state-dir`` elsewhere, pymilvus' raw
    ``MilvusException`` for one worker and the tail of a traceback for the other, after a summary ("read 6:
    ingested 6 runs") that read as a success. It is now the one line a single process says."""
    _need_a_mount(tmp_path)
    disk = tmp_path / "disk"
    extra = ["--state-dir", str(tmp_path / "state")] if state_dir_elsewhere else []
    proc = _on_a_small_disk(disk, "500k", [sys.executable, "-m", "trajsearch.cli", "ingest", str(TAU), "-t", "acme",
                                           "-q", "--workers", "2", *extra],
                            cli_env(TRAJSEARCH_HOME=str(disk / "home")), stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    out, err = proc.communicate(timeout=600)  # a bound for a hang only
    assert proc.returncode == 1, out + err
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1, err  # no per-worker error, no traceback, no warning of the lexical copy
    assert lines[0].startswith(f"error: no space left on the disk of {disk / 'home'}"), err
    assert "rerun the same command to resume" in lines[0] and "exited with" not in lines[0]
    assert not out.strip(), out  # no summary that reads as a success


def test_an_ingest_over_server_onto_its_full_disk_says_the_disk_is_full(tmp_path: Path) -> None:
    """O2: ``ingest --server`` into a server whose store is on a full disk heard ``UNAVAILABLE: writing failed: the
    trace store or the index is unavailable ... resend the rest``: a server down, to be retried, when the server
    knew its disk was full and a resend fails the same way until an operator frees space. The server answers
    ``RESOURCE_EXHAUSTED`` saying so, and the client says it in its one line; the server keeps serving."""
    from process_support import serving
    from trajsearch.service.auth import key_entry, new_key
    from trajsearch.service.client import Client

    _need_a_mount(tmp_path)
    key = new_key()
    keys = tmp_path / "keys.json"
    keys.write_text(json.dumps({"keys": [key_entry(key, tenant="acme", role="write")]}))
    disk = tmp_path / "disk"
    server = _on_a_small_disk(disk, "700k", [sys.executable, "-m", "trajsearch.service", "serve", "--address",
                                             "127.0.0.1:0",
                                             "--uri", str(disk / "milvus.db"), "--traces", str(disk / "traces"),
                                             "--model", "hashing", "--keys", str(keys), "--grace", "1"],
                              cli_env(), stdout=subprocess.DEVNULL, stderr=open(tmp_path / "serve.log", "w"))
    try:
        address = serving(server, tmp_path / "serve.log")["address"]
        with Client(address, key) as client:
            client.wait_ready(timeout=600)
        done = subprocess.run([sys.executable, "-m", "trajsearch.cli", "ingest", str(TAU), "--server", address, "-q"],
                              cwd=ROOT, env=cli_env(TRAJSEARCH_API_KEY=key, TRAJSEARCH_HOME=str(tmp_path / "client")),
                              capture_output=True, text=True, timeout=600)
        assert done.returncode == 1, done.stdout + done.stderr
        said = " ".join(done.stderr.split())  # one message, wrapped at $COLUMNS
        assert said.count("error:") == 1 and "Traceback" not in said, done.stderr
        assert said.startswith(f"error: the server at {address} stopped the ingest (RESOURCE_EXHAUSTED: no space left "
                               "on the server's disk"), said
        assert "Free space on the server" in said and "unavailable" not in said, said
        assert said.count("request id") == 1, said
        assert str(disk) not in said  # the server's paths stay the server's
        with Client(address, key) as client:  # still serving
            assert client.whoami()["tenant"] == "acme"
    finally:
        server.kill()
        server.wait()


REACT_GROK = TAU / "react-grok-4-fast-reasoning-0.0_range_0--1_user-grok-4-fast-reasoning-llm_1129215652.json"
REACT_QWEN = TAU / "react-qwen-think-airline.json"  # task 2, trial 0 as in REACT_GROK: another model's run of it


def _ingest(env: dict[str, str], *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "trajsearch.cli", "ingest", *args, "-t", "acme", "-q"], cwd=ROOT,
                          env=env, capture_output=True, text=True, timeout=600)


def test_a_run_of_another_file_replacing_a_stored_run_of_its_id_is_said(tmp_path: Path) -> None:
    """O4: two benchmark runs saved as ``results.json`` in their own folders (tau-bench runs take their ids from
    the file name: ``tau-results-2-t0``), ingested one after the other: the second folder's run of task 2 (Qwen)
    replaced the first's (grok) in silence, "ingested 1". The replacement is said, naming both files, and
    counted in ``--json``; a re-ingest of the same file (its runs changed) says nothing, nor a rerun."""
    (tmp_path / "runA").mkdir()
    (tmp_path / "runB").mkdir()
    shutil.copy(REACT_GROK, tmp_path / "runA" / "results.json")
    shutil.copy(REACT_QWEN, tmp_path / "runB" / "results.json")
    env = cli_env(TRAJSEARCH_HOME=str(tmp_path / "home"))
    first = _ingest(env, str(tmp_path / "runA"))
    assert first.returncode == 0 and "replaced" not in first.stderr, first.stderr
    second = _ingest(env, str(tmp_path / "runB"))
    assert second.returncode == 0, second.stderr
    said = " ".join(second.stderr.split())
    assert "1 stored run(s) replaced by a different run of the same id from another file" in said, said
    # the store keeps a digest of the earlier file (FRO 3): named when this process read it too
    assert f"tau-results-2-t0: now from {tmp_path / 'runB' / 'results.json'}" in said, said
    again = _ingest(env, str(tmp_path / "runA"), "--restart", "--json")  # back: said again, and in --json
    report = json.loads(again.stdout)
    assert report["other_runs_replaced"] == 1, report
    assert report["other_runs_replaced_examples"][0]["now_from"] == str(tmp_path / "runA" / "results.json")

    runs = json.loads((tmp_path / "runA" / "results.json").read_text())  # the same file, its verdicts changed
    for run in runs:
        run["reward"] = 1.0 - run["reward"]
    (tmp_path / "runA" / "results.json").write_text(json.dumps(runs))
    update = _ingest(env, str(tmp_path / "runA"))
    assert update.returncode == 0 and "ingested 2" in update.stdout, update.stdout + update.stderr
    assert "replaced" not in update.stderr, update.stderr


ENTIRE = Path(__file__).parent / "fixtures" / "claude-code" / ".real" / "entire-checkpoints"


def _flipped(source: Path, to: Path) -> None:
    """``source``'s tau-bench runs re-graded: the same steps, each reward flipped."""
    runs = json.loads(source.read_text())
    for run in runs:
        run["reward"] = 1.0 - run["reward"]
    to.parent.mkdir(parents=True, exist_ok=True)
    to.write_text(json.dumps(runs))


def _show(env: dict[str, str], run_id: str) -> dict:
    shown = subprocess.run([sys.executable, "-m", "trajsearch.cli", "show", run_id, "-t", "acme", "--json"], cwd=ROOT,
                           env=env, capture_output=True, text=True, timeout=600)
    assert shown.returncode == 0, shown.stderr
    return json.loads(shown.stdout)


def test_the_same_run_from_another_file_is_no_other_run(tmp_path: Path) -> None:
    """FRO 1: the warning that another file's run replaced a stored one was said of the same runs: a re-graded copy
    of the results in another folder (the same steps, rewards flipped), and the same dump moved, read after an
    upgrade that changed the representation. Their steps part no ways: each is an update, said nothing of."""
    (tmp_path / "runA").mkdir()
    shutil.copy(REACT_GROK, tmp_path / "runA" / "results.json")
    env = cli_env(TRAJSEARCH_HOME=str(tmp_path / "home"))
    assert _ingest(env, str(tmp_path / "runA")).returncode == 0
    _flipped(tmp_path / "runA" / "results.json", tmp_path / "regraded" / "results.json")
    regraded = _ingest(env, str(tmp_path / "regraded"))
    assert regraded.returncode == 0 and "ingested 2" in regraded.stdout, regraded.stdout + regraded.stderr
    assert "replaced" not in regraded.stderr, regraded.stderr

    (tmp_path / "upgrade").mkdir()  # the next release: REPRESENTATION_VERSION bumped, nothing else changed
    (tmp_path / "upgrade" / "sitecustomize.py").write_text(
        "import trajsearch.represent as r\nr.REPRESENTATION_VERSION += 1\n")
    shutil.move(tmp_path / "regraded", tmp_path / "moved")
    upgraded = {**env, "PYTHONPATH": os.pathsep.join([str(tmp_path / "upgrade"), env["PYTHONPATH"]])}
    moved = _ingest(upgraded, str(tmp_path / "moved"))
    assert moved.returncode == 0 and "ingested 2" in moved.stdout, moved.stdout + moved.stderr
    assert "replaced" not in moved.stderr, moved.stderr


def test_an_earlier_save_of_a_stored_session_gives_way_to_it(tmp_path: Path) -> None:
    """FRO 1: Entire's checkpoints of one Claude Code session (lines 1-20, then an earlier one of lines 1-8),
    ingested one after the other: the earlier save was "a different run of the same id from another file" and
    replaced the later one, its last 12 lines no longer searchable. It gives way, as it does within one ingest."""
    env = cli_env(TRAJSEARCH_HOME=str(tmp_path / "home"))
    later = _ingest(env, str(ENTIRE / "6f"), "--json")
    assert later.returncode == 0, later.stderr
    earlier = _ingest(env, str(ENTIRE / "63"), "--json")
    assert earlier.returncode == 0, earlier.stderr
    report = json.loads(earlier.stdout)
    assert (report["other_runs_replaced"], report["unchanged"], report["ingested"]) == (0, 1, 0), report
    assert "replaced" not in earlier.stderr, earlier.stderr
    again = _ingest(env, str(ENTIRE / "6f"), "--json", "--restart")  # the later save is what the store holds
    assert json.loads(again.stdout)["unchanged"] == 1, again.stdout + again.stderr


def test_a_changed_run_whose_stored_trace_is_gone_costs_no_retries(tmp_path: Path) -> None:
    """FRO 2: the check for another file's run read the stored trace of every changed run with retries: a trace
    gone cost ~3.5 s and four warnings per run, and "its verdict ... is not kept" for runs with a verdict of their
    own. A trace that cannot be read has nothing to compare: read once, without retry or warning."""
    (tmp_path / "runA").mkdir()
    shutil.copy(REACT_GROK, tmp_path / "runA" / "results.json")
    env = cli_env(TRAJSEARCH_HOME=str(tmp_path / "home"))
    assert _ingest(env, str(tmp_path / "runA")).returncode == 0
    shutil.rmtree(tmp_path / "home" / "traces")
    (tmp_path / "home" / "traces").mkdir()
    _flipped(tmp_path / "runA" / "results.json", tmp_path / "runB" / "results.json")
    changed = _ingest(env, str(tmp_path / "runB"))
    assert changed.returncode == 0 and "ingested 2" in changed.stdout, changed.stdout + changed.stderr
    assert "attempt" not in changed.stderr and "verdict" not in changed.stderr, changed.stderr


def test_the_stored_trace_tells_no_path_of_the_operators_disk(tmp_path: Path) -> None:
    """FRO 3: ``metadata.ingested_from`` held the dump's absolute path, shown to tenants by GetTrace, export and the
    web's JSON. It holds a digest of it: the same file is still told from another."""
    (tmp_path / "runA").mkdir()
    shutil.copy(REACT_GROK, tmp_path / "runA" / "results.json")
    env = cli_env(TRAJSEARCH_HOME=str(tmp_path / "home"))
    assert _ingest(env, str(tmp_path / "runA")).returncode == 0
    shown = _show(env, "tau-results-2-t0")
    assert str(tmp_path) not in json.dumps({k: v for k, v in shown.items() if k != "trace_uri"}), shown["metadata"]
    assert len(shown["metadata"]["ingested_from"]) == 16, shown["metadata"]


def test_the_report_counts_other_runs_replaced_and_keeps_a_few(tmp_path: Path) -> None:
    """FRO 4: every run another file's replaced was kept in the report: an upgrade's re-ingest of a million runs
    held a million tuples. It counts them, keeping the first few, as it does rejections."""
    from trajsearch.results import EXAMPLES_KEPT, IngestReport

    total = IngestReport()
    for n in range(50):
        part = IngestReport()
        part.note_other_runs([(f"run-{n}-{i}", None, "b.json") for i in range(3)])
        total.merge(part)
    report = total.to_dict()
    assert report["other_runs_replaced"] == 150
    assert len(report["other_runs_replaced_examples"]) == EXAMPLES_KEPT == len(total.other_runs_examples)


def test_a_callers_value_quoting_a_full_disk_is_no_full_disk(tmp_path: Path) -> None:
    """FRO 5: the server read every error's text for "No space left on device": a search for runs of that outcome
    (a bad value the refusal quotes) or a trace URI holding those words answered RESOURCE_EXHAUSTED, "no space left
    on the server's disk ... the write in hand was not made", and logged a full disk. Only an ENOSPC or a Milvus
    error quoting one is a full disk: these are the caller's mistakes, said as such."""
    from trajsearch.embed import HashingEmbedder
    from trajsearch.search import TrajSearch
    from trajsearch.service.auth import KeyRing, key_entry, new_key
    from trajsearch.service.client import Client, ServiceError
    from trajsearch.service.server import ServiceServer

    words, key = "No space left on device", new_key()
    ts = TrajSearch.open(str(tmp_path / "srv.db"), traces=str(tmp_path / "t"), embedder=HashingEmbedder())
    try:
        with ServiceServer(ts, KeyRing.from_entries([key_entry(key, tenant="acme", role="write")]),
                           address="127.0.0.1:0") as srv, Client(srv.address, key) as client:
            for call in (lambda: client.search("disk", outcome=words), lambda: client.get_trace(f"file:///x/{words}")):
                with pytest.raises(ServiceError) as refused:
                    call()
                assert str(refused.value).startswith("INVALID_ARGUMENT: "), refused.value
                assert "no space left on the server" not in str(refused.value), refused.value
    finally:
        ts.close()


SWE_RUN_SET = "gpt4__swe-bench-dev-easy_first_only__default__t-0.00__p-0.95__c-3.00__install-1"
PYDICOM = Path(__file__).parent / "fixtures" / "swe-agent" / ".real" / SWE_RUN_SET / "pydicom__pydicom-1458.traj"


def test_a_copy_taken_mid_run_of_a_format_dated_by_mtime_gives_way_to_the_stored_run(tmp_path: Path) -> None:
    """Review R2A-1: a SWE-agent ``.traj`` (no times of its own: the run is dated by the file's mtime) copied while
    the run went on, 3 of its 12 steps, ingested from another folder after the final file: the earlier save
    replaced the stored run in silence (its last 9 steps no longer searchable), as ``continues`` compares the
    session's start, which two files' mtimes never share. Fewer steps, all the stored run's first: it gives way."""
    final = tmp_path / "final" / SWE_RUN_SET / PYDICOM.name
    final.parent.mkdir(parents=True)
    shutil.copy(PYDICOM, final)
    run = json.loads(PYDICOM.read_text())
    copy = tmp_path / "copy" / SWE_RUN_SET / PYDICOM.name
    copy.parent.mkdir(parents=True)
    copy.write_text(json.dumps({**run, "trajectory": run["trajectory"][:3], "history": run["history"][:7]}))
    os.utime(copy, (1_764_921_600, 1_764_921_600))  # saved earlier
    env = cli_env(TRAJSEARCH_HOME=str(tmp_path / "home"))
    assert _ingest(env, str(tmp_path / "final")).returncode == 0
    earlier = _ingest(env, str(tmp_path / "copy"), "--json")
    assert earlier.returncode == 0, earlier.stderr
    assert json.loads(earlier.stdout)["unchanged"] == 1, earlier.stdout
    again = _ingest(env, str(tmp_path / "final"), "--json", "--restart")  # the final file is what the store holds
    assert json.loads(again.stdout)["unchanged"] == 1, again.stdout + again.stderr


def test_the_same_run_read_with_other_thoughts_from_another_file_is_no_other_run(tmp_path: Path) -> None:
    """Review R2A-2: a newer reader can read a step's thought otherwise (round 16 read SWE-agent 1.1's thinking
    into thoughts); the same run from a moved dump then read as "a different run of the same id from another
    file", and the warning's advice (ingest the earlier file again) made the two files replace each other. Runs
    part ways by what they did (action, arguments, start), not by their thoughts."""
    run = json.loads(PYDICOM.read_text())
    first = tmp_path / "a" / SWE_RUN_SET / PYDICOM.name
    first.parent.mkdir(parents=True)
    first.write_text(json.dumps(run))
    thought = dict(run["trajectory"][1], thought="(read again by a newer reader) " + run["trajectory"][1]["thought"])
    moved = tmp_path / "b" / SWE_RUN_SET / PYDICOM.name
    moved.parent.mkdir(parents=True)
    moved.write_text(json.dumps({**run, "trajectory": [run["trajectory"][0], thought, *run["trajectory"][2:]]}))
    os.utime(moved, (first.stat().st_atime, first.stat().st_mtime))
    env = cli_env(TRAJSEARCH_HOME=str(tmp_path / "home"))
    assert _ingest(env, str(tmp_path / "a")).returncode == 0
    again = _ingest(env, str(tmp_path / "b"), "--json")
    assert again.returncode == 0, again.stderr
    assert json.loads(again.stdout)["other_runs_replaced"] == 0, again.stdout
    assert "different run" not in again.stderr, again.stderr

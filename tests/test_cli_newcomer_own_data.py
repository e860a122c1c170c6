"""A newcomer's own data through the CLI, on both backends: what the commands say about it (round 21, NC5).

Each test is a place where the CLI's word had been wrong or missing: a flag taken and ignored over ``--server``, a
reader that stops early (``| head``) reported as a failure by one command and not by the others.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from cli_support import backend, newcomer, own_lines, run_cli  # noqa: F401 (fixtures)
from process_support import cli_env

FIXTURES = Path(__file__).parent / "fixtures"
#: native JSONL of tenant acme: good runs, a malformed line (2) and a record missing its task (3)
MIXED = FIXTURES / "native" / "mixed.jsonl"


def test_dead_letter_names_the_same_rejections_on_both_backends(backend, tmp_path):
    """``--dead-letter FILE`` over --server had been taken and nothing written, while exit 3 says "the dead-letter
    file lists them": the file now holds the rejections there too, and the summary names it."""
    empty = tmp_path / "empty.jsonl"
    empty.write_bytes(b"")
    dead = tmp_path / "rejected.jsonl"
    code, out, err = run_cli("ingest", str(MIXED), str(empty), "--dead-letter", str(dead), "--quiet")
    assert code == 3, err
    lines = [json.loads(line) for line in dead.read_text().splitlines()]
    assert sorted((Path(r["source"]).name, r["position"]) for r in lines) == [
        ("empty.jsonl", "file"), ("mixed.jsonl", "line 2"), ("mixed.jsonl", "line 3")]
    assert any("malformed JSON" in r["reason"] for r in lines)
    assert f"all rejections: {dead}" in " ".join(err.split())


def test_a_dead_letter_file_it_cannot_write_is_said_before_anything_is_sent(backend, tmp_path):
    """Said naming the flag, nothing read or sent: the embedded ingest had said "error: [Errno 17] File exists"."""
    (tmp_path / "a-file").write_text("")
    code, out, err = run_cli("ingest", str(MIXED), "--dead-letter", str(tmp_path / "a-file" / "x.jsonl"), "--quiet")
    said = " ".join(err.split())
    assert code == 2 and f"--dead-letter {tmp_path / 'a-file' / 'x.jsonl'}: cannot write it" in said, err
    assert f"{tmp_path / 'a-file'} is a file, not a folder" in said, err
    assert json.loads(run_cli("stats", "--json")[1])["trajectories"] == 0


def test_state_dir_over_a_server_is_refused_as_the_other_local_job_options_are(backend, tmp_path):
    """``--state-dir`` names where a local job keeps its checkpoint and dead letters: over --server there are none,
    and the flag had been taken in silence."""
    code, out, err = run_cli("ingest", str(MIXED), "--state-dir", str(tmp_path / "state"), "--quiet")
    if backend == "server":
        assert code == 2 and "--state-dir" in err and "not to --server" in err, err
    else:
        assert code == 3 and (tmp_path / "state").is_dir(), err


@pytest.mark.parametrize("command", [
    ["export", "-q", "retry test", "-f", "jsonl", "--outcome", "failure"],
    ["search", "retry test", "-k", "3"],
])
def test_a_reader_that_stops_early_ends_every_command_quietly(backend, tmp_path, command):
    """``trajsearch export ... | head`` printed "error: [Errno 32] Broken pipe" (exit 1), where ``search`` and the
    other commands printing through rich end quietly (exit 1) as click does for a closed stdout."""
    assert run_cli("ingest", str(MIXED), "--quiet")[0] == 3
    read, write = os.pipe()
    os.close(read)  # the reader is gone before the first byte: every write fails with EPIPE
    extra = {name: os.environ[name] for name in ("TRAJSEARCH_HOME", "TRAJSEARCH_URI", "TRAJSEARCH_TRACES",
                                                 "TRAJSEARCH_TENANT", "TRAJSEARCH_SERVER", "TRAJSEARCH_API_KEY")
             if name in os.environ}
    try:
        done = subprocess.run([sys.executable, "-m", "trajsearch.cli", *command], stdout=write,
                              stderr=subprocess.PIPE, text=True, env=cli_env(**extra), cwd=tmp_path, timeout=300)
    finally:
        os.close(write)
    assert done.returncode == 1
    assert own_lines(done.stderr) == [], done.stderr


def test_a_clipped_run_copied_twice_is_one_clipped_run_as_the_dry_run_says(backend, tmp_path):
    """A run with an output over the 1,000,000-character limit, in a dump and in its copy: stored once, and the
    ingest had said "2 run(s) had a field over its limit" where ``--dry-run`` of the same folder said 1."""
    run = json.loads(MIXED.read_text().splitlines()[0])
    run["steps"][0]["observation"] = "x" * 1_200_000
    folder = tmp_path / "dumps"
    folder.mkdir()
    for name in ("runs.jsonl", "runs-copy.jsonl"):
        (folder / name).write_text(json.dumps(run) + "\n")
    said = {}
    for mode in ("--dry-run", "--quiet"):
        code, out, err = run_cli("ingest", str(folder), mode)
        assert code == 0, err
        said[mode] = " ".join((out + err).split())
    assert "unchanged 1" in said["--quiet"]
    for text in said.values():
        assert "1 run(s) had a field over its limit" in text, text


#: a real tau2-bench results file (cut to 3 runs) (see tests/fixtures/tau2-bench/.real/SOURCE.md)
TAU2_RESULTS = FIXTURES / "tau2-bench" / ".real" / "airline_run1.json"


def test_a_file_the_format_named_reads_nothing_of_is_a_rejection_naming_the_format_it_is(backend, tmp_path):
    """``--format claude-code`` on a tau2-bench results file read nothing and rejected nothing: "read 0", exit 0, its
    runs passed over in silence (a scheduler saw success). It is now a rejection that names the format detection
    finds, on both backends and in ``--dry-run``."""
    for extra in (["--dry-run"], ["--quiet"]):
        code, out, err = run_cli("ingest", str(TAU2_RESULTS), "--format", "claude-code", *extra)
        said = " ".join((out + err).split())
        assert code == 4, said
        assert "no record of the format named (--format claude-code) in this file; detected, it reads as tau2-bench" \
            in said, said
    code, out, err = run_cli("ingest", str(TAU2_RESULTS), "--quiet")  # detected: every run read
    assert code == 0 and "ingested 3 runs" in out, out + err


def test_a_json_lines_file_under_a_one_document_format_is_said_in_jsons_words(backend):
    """``--format tau2-bench`` on a JSON Lines file had said "expected a JSON object, got Values" (a Python class)."""
    code, out, err = run_cli("ingest", str(MIXED), "--format", "tau2-bench", "--quiet")
    said = " ".join(err.split())
    assert code == 4, said
    assert "expected a JSON object, got 4 JSON values one after another (JSON Lines)" in said, said
    assert "Values" not in said.replace("JSON values", ""), said


def test_stats_names_the_store_and_tenant_on_one_line(backend, tmp_path):
    """The store's path as the table's title had wrapped to the table's width: "trajsearch @" over four lines."""
    assert run_cli("ingest", str(MIXED), "--quiet")[0] == 3
    code, out, err = run_cli("stats")
    where = os.environ["TRAJSEARCH_SERVER"] if backend == "server" else os.environ["TRAJSEARCH_URI"]
    assert code == 0 and f"trajsearch @ {where} (tenant acme)" in out.splitlines(), out


def test_a_files_rejection_names_the_file_once(backend, tmp_path):
    """"rejected x/empty.jsonl:file: x/empty.jsonl: empty file ..." (the reason opens with the path) in the ingest,
    and the same in ``--dry-run``."""
    empty = tmp_path / "empty.jsonl"
    empty.write_bytes(b"")
    for mode in ("--dry-run", "--quiet"):
        code, out, err = run_cli("ingest", str(empty), str(MIXED), mode)
        said = [line for line in err.splitlines() if "empty file" in line]
        assert code == 3 and len(said) == 1 and said[0].count(str(empty)) == 1, err


def test_the_store_help_names_is_the_one_a_command_opens(newcomer, tmp_path, monkeypatch):
    """``--uri``'s help said "default ./.trajsearch/milvus.db" while a command opened $TRAJSEARCH_HOME's."""
    monkeypatch.delenv("TRAJSEARCH_URI")
    monkeypatch.delenv("TRAJSEARCH_TRACES")
    code, out, err = run_cli("stats", "--json")
    assert code == 0 and json.loads(out)["uri"] == os.path.join(os.environ["TRAJSEARCH_HOME"], "milvus.db"), out + err
    monkeypatch.setenv("COLUMNS", "200")  # one line per sentence (an 80-column help: test_probe57_newcomer.py)
    code, out, err = run_cli("search", "--help")
    said = " ".join(out.replace("│", " ").split())
    assert "default: milvus.db in $TRAJSEARCH_HOME" in said and "default: traces in $TRAJSEARCH_HOME" in said, out


# -- review FRNC5: --format in a folder walk, and --dead-letter over --server ------------------------------------------

#: a real Claude Code projects folder whose subagent wrote nothing: empty agent-*.jsonl and agent-*.meta.json
CLAUDE_BACKUP = FIXTURES / "claude-code" / ".real" / "claude-backup"
#: a real OpenHands evaluation still running: its output.jsonl is empty
EVAL_UNFINISHED = FIXTURES / "openhands" / ".real" / "eval-unfinished"


@pytest.mark.parametrize("folder, fmt", [(CLAUDE_BACKUP, "claude-code"), (EVAL_UNFINISHED, "openhands")])
def test_an_empty_file_in_a_folder_under_format_is_passed_over_as_detection_passes_it(newcomer, folder, fmt):
    """``--format X DIR`` had rejected the empty files detection passes over, failing real folders (exit 3 and 4)
    that ingest clean without --format; a file named alone under --format is still a rejection. (An evaluation
    that finished no instance is a run set read and found holding none: exit 0 saying so, review FRCLI2.)"""
    for extra in ([], ["--format", fmt]):
        code, out, err = run_cli("ingest", str(folder), *extra, "--dry-run")
        assert code == 0 and "empty file" not in err, (extra, out + err)
    empty = next(f for f in sorted(folder.rglob("*")) if f.is_file() and f.stat().st_size == 0)
    code, out, err = run_cli("ingest", str(empty), "--format", fmt, "--dry-run")
    assert code == 4 and "empty file (0 bytes)" in err, out + err


@pytest.fixture
def served(tmp_path: Path, monkeypatch):
    """A real server on loopback for the CLI (as cli_support's ``backend``), its key of tenant acme pinned to
    ``env_versions`` if the test passes them (``served(["ci-v3"])``); yields the server's address."""
    from trajsearch.embed import HashingEmbedder
    from trajsearch.search import TrajSearch
    from trajsearch.service.auth import KeyRing, key_entry, new_key
    from trajsearch.service.server import ServiceServer

    servers = []

    def serve(env_versions: list[str] | None = None) -> str:
        key = new_key()
        entry = key_entry(key, tenant="acme", role="write") | ({"env_versions": env_versions} if env_versions else {})
        ts = TrajSearch.open(str(tmp_path / "srv.db"), traces=str(tmp_path / "srv-traces"), embedder=HashingEmbedder())
        srv = ServiceServer(ts, KeyRing.from_entries([entry]), address="127.0.0.1:0").__enter__()
        servers.append((srv, ts))
        monkeypatch.setenv("TRAJSEARCH_MODEL", "hashing")
        monkeypatch.delenv("TRAJSEARCH_TENANT", raising=False)
        monkeypatch.setenv("TRAJSEARCH_SERVER", srv.address)
        monkeypatch.setenv("TRAJSEARCH_API_KEY", key)
        return srv.address

    yield serve
    for srv, ts in servers:
        srv.__exit__(None, None, None)
        ts.close()


def _dead_lines(path: Path) -> list[dict]:
    """The dead-letter file's lines, each source cut to its file name (the two ingests read from different paths)."""
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    return sorted((dict(r, source=Path(r["source"]).name) for r in lines), key=lambda r: (r["source"], r["position"]))


def test_dead_letter_lines_over_a_server_are_the_local_ingests_and_a_rerun_adds_none(served, tmp_path):
    """Over --server every line had ``"format": null`` where the embedded ingest's had ``"native"``, and each rerun
    appended the same rejections again (an embedded rerun, checkpointed, appends none)."""
    empty = tmp_path / "empty.jsonl"
    empty.write_bytes(b"")
    local = tmp_path / "local-rejected.jsonl"
    for rerun in (False, True):  # the embedded ingest, in a process of its own; its rerun reads nothing again
        done = subprocess.run([sys.executable, "-m", "trajsearch.cli", "ingest", str(MIXED), str(empty), "-t", "acme",
                               "--dead-letter", str(local), "--quiet"], cwd=tmp_path, capture_output=True, text=True,
                              env=cli_env(TRAJSEARCH_HOME=str(tmp_path / "home")), timeout=600)
        assert done.returncode == 3, done.stderr  # the rerun too: its input holds the rejections (round 23, CLI7)
    served()
    remote = tmp_path / "remote-rejected.jsonl"
    for _ in range(2):
        code, out, err = run_cli("ingest", str(MIXED), str(empty), "--dead-letter", str(remote), "--quiet")
        assert code == 3, err
    assert len(_dead_lines(local)) == 3
    assert _dead_lines(remote) == _dead_lines(local)
    assert {r["format"] for r in _dead_lines(remote) if r["source"] == "mixed.jsonl"} == {"native"}


def test_a_rejection_the_server_makes_names_the_files_line(served, tmp_path):
    """The server rejects what the key may not write (runs of another env_version than its pins): its rejections
    had said ``record 1`` (the stream's position) and ``"format": null``, not the file's line."""
    served(["ci-v3"])
    dead = tmp_path / "rejected.jsonl"
    code, out, err = run_cli("ingest", str(MIXED), "--dead-letter", str(dead), "--json")
    assert code == 3, err
    said = {(r["position"], r["format"]) for r in json.loads(out)["rejections"]}
    lines = _dead_lines(dead)
    assert {(r["position"], r["format"]) for r in lines} == said == {
        ("line 2", "native"), ("line 3", "native"), ("line 4", "native"), ("line 5", "native")}
    assert all("env_version" in r["reason"] for r in lines if r["position"] in ("line 4", "line 5")), lines


@pytest.mark.parametrize("refused", ["a line cut in half", "a run over the server's message size"])
def test_rejections_read_before_the_server_stopped_are_in_the_dead_letter_file(tmp_path, refused):
    """The rejections found here went to --dead-letter only once the server answered: a server killed mid-ingest
    lost them (exit 1, the file empty), though the line was read and refused before any batch went. A run too large
    for the server's --max-message-mb, refused by the client (round 22, CLI6), was still lost so after the lines
    that do not parse were kept. Real processes: the server (``serve``) and the CLI, each in tmp_path."""
    import signal
    import time

    from process_support import launched, serving
    from test_ingest_pipeline import tau_dump
    from trajsearch.service.auth import key_entry, new_key
    from trajsearch.service.client import Client

    key = new_key()
    keys = tmp_path / "keys.json"
    keys.write_text(json.dumps({"keys": [key_entry(key, tenant="acme", role="write")]}))
    cut = refused == "a line cut in half"
    dump = tau_dump(tmp_path / "airline-runs.jsonl", 600, corrupt_at=0 if cut else None)  # line 2 refused here
    if not cut:  # line 2 a run of 2.4 MB (four steps' outputs, each under the 1M characters a step keeps), the server
        lines = dump.read_text().splitlines()  # taking 1 MiB a message
        big = json.loads(lines[1])
        for message in big["traj"][-4:]:
            message["content"] = "the tool printed " + "x" * 600_000
        dump.write_text("\n".join([lines[0], json.dumps(big), *lines[1:]]) + "\n")
    env = cli_env(TRAJSEARCH_HOME=str(tmp_path / "home"), TRAJSEARCH_API_KEY=key)
    server = subprocess.Popen([sys.executable, "-m", "trajsearch.service", "serve", "--address", "127.0.0.1:0", "--uri",
                               str(tmp_path / "milvus.db"), "--traces", str(tmp_path / "traces"), "--model", "hashing",
                               "--keys", str(keys), "--max-message-mb", "1"], cwd=tmp_path, env=env,
                              stdout=subprocess.DEVNULL,
                              stderr=open(tmp_path / "serve.log", "w"))
    dead = tmp_path / "rejected.jsonl"
    try:
        address = serving(server, tmp_path / "serve.log")["address"]
        with Client(address, key) as client:
            client.wait_ready(timeout=600)
            ingest = subprocess.Popen(launched([sys.executable, "-m", "trajsearch.cli", "ingest", str(dump), "--server",
                                                address, "--dead-letter", str(dead), "-q"]),
                                      cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            deadline = time.monotonic() + 900  # a bound for a hung process, not a speed target
            while time.monotonic() < deadline and ingest.poll() is None and not client.stats()["trajectories"]:
                time.sleep(0.05)
            ingest.send_signal(signal.SIGSTOP)  # held while the server is killed: it cannot finish meanwhile
            assert ingest.poll() is None, "the ingest finished before the server was killed: make the dump larger"
    finally:
        server.kill()
        server.wait()
    ingest.send_signal(signal.SIGCONT)
    out, err = ingest.communicate(timeout=900)
    assert ingest.returncode == 1 and "stopped the ingest" in err, err
    assert [(r["position"], r["format"]) for r in _dead_lines(dead)] == [("line 2", "tau-bench")], err

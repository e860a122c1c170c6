"""Probe 48 (S): the service and the batch indexer as an operator running ``trajsearch serve`` for weeks meets them.

Fixtures: real mini-swe-agent runs (``fixtures/mini-swe-agent/.real/batch-2.4.6``, two 2.4.6 runs; sources in the
``SOURCE.md`` there). A full disk is stood in for by a file-size limit (``RLIMIT_FSIZE``) on the command's process:
the same ``write()`` fails the same way (``EFBIG`` for ``ENOSPC``), with no filesystem to mount.
"""

from __future__ import annotations

import json
import os
import resource
import shutil
import subprocess
import sys
from pathlib import Path

from cli_support import run_cli

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = Path(__file__).parent / "fixtures"
BATCH = FIXTURES / "mini-swe-agent" / ".real" / "batch-2.4.6"  # two real mini-swe-agent 2.4.6 runs


def _local_store(tmp_path: Path, monkeypatch) -> dict[str, str]:
    """An embedded store under ``tmp_path`` for this process's CLI and the environment a child process needs."""
    env = {"TRAJSEARCH_MODEL": "hashing", "TRAJSEARCH_HOME": str(tmp_path / "home"), "TRAJSEARCH_TENANT": "acme"}
    for name in ("TRAJSEARCH_SERVER", "TRAJSEARCH_URI", "TRAJSEARCH_TRACES"):
        monkeypatch.delenv(name, raising=False)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    return {**os.environ, **env}


def _cli_with_file_limit(limit: int, env: dict[str, str], *args: str) -> subprocess.CompletedProcess:
    """``trajsearch ARGS...`` in a child process that cannot write a file past ``limit`` bytes (a full disk)."""
    def limited() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    return subprocess.run([sys.executable, "-m", "trajsearch.cli", *args], cwd=ROOT, env=env, preexec_fn=limited,
                          capture_output=True, text=True, timeout=300)


def test_a_search_answers_when_the_disk_will_not_take_the_lexical_copy(tmp_path: Path, monkeypatch) -> None:
    """On a full disk every search of an embedded store failed with ``error: OSError: [Errno 28] No space left on
    device``, exit 1, after computing its answer: the read rebuilt the stale lexical index and closing the store
    saved it, which raised (and left a half-written ``.tmp.npz`` taking what space there was). The save is a
    cache's: the search answers, a warning says the copy was not saved, no temp file is left, and the next open
    rebuilds it."""
    env = _local_store(tmp_path, monkeypatch)
    code, out, err = run_cli("ingest", str(BATCH), "--quiet")
    assert code == 0, out + err
    home = tmp_path / "home"
    copy = home / "milvus.db.lexical.npz"
    assert copy.is_file()
    (home / "milvus.db.lexical.json").unlink()  # stale, as a killed writer leaves it: the next read rebuilds

    done = _cli_with_file_limit(copy.stat().st_size // 2, env, "search", "ModuleNotFoundError", "-m", "lexical",
                                "--json")
    assert done.returncode == 0, done.stdout + done.stderr
    assert '"trajectory_id"' in done.stdout, done.stdout + done.stderr
    assert "could not save the lexical index" in done.stderr and "File too large" in done.stderr, done.stderr
    assert sorted(p.name for p in home.iterdir() if p.name.startswith("milvus.db.lexical")) == [
        "milvus.db.lexical.npz"], list(home.iterdir())  # no half-written copy; the label still says stale

    code, out, err = run_cli("search", "ModuleNotFoundError", "-m", "lexical", "--json")
    assert code == 0 and '"trajectory_id"' in out, out + err


def test_a_moved_or_copied_store_searches_with_its_own_lexical_copy(tmp_path: Path, monkeypatch) -> None:
    """A store moved (``mv ~/.trajsearch /data/``, a volume mounted at another path) failed every search with
    ``error: FileNotFoundError: '<old path>/milvus.db.lexical.npz.tmp.npz'``: the collection recorded where its
    lexical copy was made, so the copy moved beside it was never read, the search rebuilt it and closing saved it
    to a directory gone. A copy of a store (a backup restored beside the original) wrote its copy into the
    original's. Opened by its path, a store keeps the copy beside itself: the moved copy is loaded as it is, and
    the original's files are left alone."""
    _local_store(tmp_path, monkeypatch)
    made = tmp_path / "made"
    monkeypatch.setenv("TRAJSEARCH_HOME", str(made / "home"))
    code, out, err = run_cli("ingest", str(BATCH), "--quiet")
    assert code == 0, out + err

    moved = tmp_path / "moved"
    made.rename(moved)
    monkeypatch.setenv("TRAJSEARCH_HOME", str(moved / "home"))
    label = moved / "home" / "milvus.db.lexical.json"
    saved = label.read_text()
    code, out, err = run_cli("search", "ModuleNotFoundError", "-m", "lexical", "--json")
    assert code == 0 and '"trajectory_id"' in out, out + err
    assert label.read_text() == saved  # the moved copy was loaded, not rebuilt and saved again
    assert not made.exists()

    copied = tmp_path / "copied"
    shutil.copytree(moved, copied)
    before = {p.name: p.read_bytes() for p in (moved / "home").iterdir() if p.is_file()}
    (copied / "home" / "milvus.db.lexical.json").unlink()  # the copy's lexical copy is rebuilt and saved
    monkeypatch.setenv("TRAJSEARCH_HOME", str(copied / "home"))
    code, out, err = run_cli("search", "ModuleNotFoundError", "-m", "lexical", "--json")
    assert code == 0 and '"trajectory_id"' in out, out + err
    assert (copied / "home" / "milvus.db.lexical.json").is_file()  # saved beside the copy
    assert {p.name: p.read_bytes() for p in (moved / "home").iterdir() if p.is_file()} == before


def test_show_of_a_run_whose_trace_is_gone_says_so(tmp_path: Path, monkeypatch) -> None:
    """``show`` of an indexed run whose trace file is not where the trace store looks (the traces moved with a
    store's old layout, ``--traces`` naming another folder, a file deleted) said only ``error: file:///...json.gz``:
    the message of a KeyError's bare argument. It says the run is indexed, that the store named holds no trace of
    it, and what names the trace store."""
    _local_store(tmp_path, monkeypatch)
    code, out, err = run_cli("ingest", str(BATCH), "--quiet")
    assert code == 0, out + err
    code, out, err = run_cli("search", "ModuleNotFoundError", "-l", "task", "--json")
    trajectory_id = json.loads(out)[0]["trajectory_id"]
    elsewhere = tmp_path / "traces-elsewhere"
    elsewhere.mkdir()

    code, out, err = run_cli("show", trajectory_id, "--traces", str(elsewhere))
    said = "".join(err.split())  # the console wraps long paths anywhere
    assert code == 1, out + err
    wanted = f"the run is indexed but its trace is not in the trace store {elsewhere.as_uri()}: no trace at file://"
    assert "".join(wanted.split()) in said, err
    assert "--tracesor$TRAJSEARCH_TRACES" in said, err


def test_an_export_the_disk_will_not_take_names_its_file(tmp_path: Path, monkeypatch) -> None:
    """``export -o FILE`` onto a full disk said ``error: OSError: [Errno 28] No space left on device``, naming no
    file. It names the file, says nothing was written, and leaves no temp file beside it."""
    env = _local_store(tmp_path, monkeypatch)
    code, out, err = run_cli("ingest", str(BATCH), "--quiet")
    assert code == 0, out + err
    target = tmp_path / "out"
    target.mkdir()
    done = _cli_with_file_limit(4096, env, "export", "-q", "fix the greeting", "-f", "jsonl", "--outcome", "success",
                                "--outcome", "failure", "--outcome", "unknown", "-o", str(target / "runs.jsonl"))
    said = "".join(done.stderr.split())  # the console wraps long paths anywhere
    assert done.returncode == 1, done.stdout + done.stderr
    wanted = f"cannot write {target / 'runs.jsonl'}: File too large; nothing was written"
    assert "".join(wanted.split()) in said, done.stderr
    assert list(target.iterdir()) == []

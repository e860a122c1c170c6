"""Probe 47 (G): the batch indexer as an operator with a large mixed dump meets it.

Fixtures: real mini-swe-agent runs (``fixtures/mini-swe-agent/.real/``: ``batch-2.4.6``, two 2.4.6 runs, and two
attempts at django__django-16429; sources in the ``SOURCE.md`` files there) and the bundled sample, laid out as
dump trees are: behind links, in folders another user owns, in copies of one output folder.
"""

from __future__ import annotations

import json
import logging
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from cli_support import backend, run_cli  # noqa: F401 - a fixture
from process_support import launched

FIXTURES = Path(__file__).parent / "fixtures"
BATCH = FIXTURES / "mini-swe-agent" / ".real" / "batch-2.4.6"  # two real mini-swe-agent 2.4.6 runs, a folder each
INSTANCE = "marshmallow-code__marshmallow-1343"
#: Two real attempts at one SWE-bench instance by one model (``fixtures/ids/SOURCE.md``).
ATTEMPTS = [FIXTURES / "ids" / ".real" / "mini-swe-agent" / name / INSTANCE / f"{INSTANCE}.traj.json"
            for name in ("deepseek_chat_dev", "deepseek_chat_dev_rerun")]


def _local_store(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("TRAJSEARCH_MODEL", "hashing")
    for name in ("TRAJSEARCH_SERVER", "TRAJSEARCH_URI", "TRAJSEARCH_TRACES"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("TRAJSEARCH_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("TRAJSEARCH_TENANT", "acme")


def test_a_walk_follows_links_to_folders_and_not_loops(tmp_path: Path, monkeypatch, caplog) -> None:
    """A dump tree arranged with links to folders (``latest -> ../store/batch``, a folder of links to each
    experiment's results) read nothing: ``rglob`` does not follow a link to a folder, and the ingest said
    "read 0 ... no run in the input: its files hold no record of their format", exit 0. The linked folders are
    walked, with the ids the runs get when their folder is named; a link to a folder above (``loop -> ..``,
    ``root -> /``) is not followed, and the walk says so."""
    _local_store(tmp_path, monkeypatch)
    store = tmp_path / "store" / "batch-2.4.6"
    shutil.copytree(BATCH, store)
    dumps = tmp_path / "dumps"
    dumps.mkdir()
    (dumps / "latest").symlink_to(os.path.relpath(store, dumps))
    (dumps / "loop").symlink_to("..")
    (dumps / "root").symlink_to("/")
    with caplog.at_level(logging.WARNING, logger="trajsearch.ingest.read"):
        code, out, err = run_cli("ingest", str(dumps), "--quiet")
    assert code == 0, out + err
    assert "read 2: ingested 2 runs" in " ".join(out.split()), out + err
    assert "2 link(s) to a folder that holds them not followed (a loop): loop, root" in caplog.text
    # the same runs, under the same ids, as the folder named itself: unchanged
    code, out, err = run_cli("ingest", str(store), "--quiet", "--restart")
    assert code == 0 and "read 2: ingested 0 runs (0 rows), unchanged 2" in " ".join(out.split()), out + err


def test_a_folder_reached_twice_is_read_once_by_its_own_path(tmp_path: Path, monkeypatch) -> None:
    """A folder both present and linked (``by-date/2026-12-04 -> ../batch-2.4.6``) is read once, by the path with
    no link on it, whichever name sorts first: run ids are made of folder names, and must not hang on a link's."""
    _local_store(tmp_path, monkeypatch)
    dumps = tmp_path / "dumps"
    shutil.copytree(BATCH, dumps / "zz-batch")
    (dumps / "aa-links").mkdir()
    (dumps / "aa-links" / "today").symlink_to("../zz-batch")
    code, out, err = run_cli("ingest", str(dumps), "--dry-run")
    assert code == 0, out + err
    assert "zz-batch" in out and "aa-links" not in out, out


def test_workers_say_what_the_walk_passed_over_once(tmp_path: Path, monkeypatch, caplog) -> None:
    """With ``--workers 2`` the walk's warnings (a zip and a tarball of the runs passed over, a copy under a hidden
    folder not read) went to each worker's log file under the state directory and the operator saw none, where
    the same ingest in one process says them. They are said once, by the command, however many workers."""
    _local_store(tmp_path, monkeypatch)
    dumps = tmp_path / "dumps"
    shutil.copytree(BATCH, dumps / "batch-2.4.6")
    shutil.make_archive(str(dumps / "runs"), "zip", dumps, "batch-2.4.6")
    shutil.make_archive(str(dumps / "runs"), "gztar", dumps, "batch-2.4.6")
    shutil.copytree(BATCH, dumps / ".cache" / "batch-2.4.6")
    with caplog.at_level(logging.WARNING, logger="trajsearch"):
        code, out, err = run_cli("ingest", str(dumps), "--quiet", "--workers", "2")
    assert code == 0 and "read 2: ingested 2 runs" in " ".join(out.split()), out + err
    passed = [r.getMessage() for r in caplog.records if r.getMessage().startswith("passed over 2 archive(s)")]
    assert passed == ["passed over 2 archive(s) / compressed file(s) trajsearch does not read: runs.tar.gz (tar), "
                      "runs.zip (zip): unpack them to read their runs"], caplog.text
    hidden = [r.getMessage() for r in caplog.records if "under hidden folders not read" in r.getMessage()]
    assert len(hidden) == 1 and hidden[0].startswith("2 file(s) under hidden folders not read (.cache: 2)"), caplog.text


def test_a_run_kept_under_a_distinct_id_is_said_over_the_server_too(backend: str, tmp_path: Path) -> None:
    """Two attempts at one instance by one model in two copies of one output folder (``a/gemini/`` and ``b/gemini/``),
    saved with no mark of their attempt (as 1.x saves them): one run id
    are both kept, the second as ``<id>+<hash>``. The embedded ingest said so; over ``--server`` the summary (and
    ``--json``) said nothing of it, so the operator looking for the run under its own id found the other one."""
    for part, attempt in zip("ab", ATTEMPTS):
        folder = tmp_path / "dumps" / part / "gemini" / INSTANCE
        folder.mkdir(parents=True)
        record = json.loads(attempt.read_text())
        for message in record["messages"]:  # saved as 1.x saves: no reply names its attempt, only the folder does
            for mark in ("timestamp", "response"):
                (message.get("extra") or {}).pop(mark, None)
        (folder / attempt.name).write_text(json.dumps(record))
    code, out, err = run_cli("ingest", str(tmp_path / "dumps"), "--quiet")
    assert code == 0 and "read 2: ingested 2 runs" in " ".join(out.split()), out + err
    assert ("1 run(s) shared an id with a different run of the same input and were kept under a distinct id, e.g. "
            f"deepseek-chat.{INSTANCE}.gemini -> deepseek-chat.{INSTANCE}.gemini+") in " ".join(out.split()), \
        (backend, out)


def _embedded_env(home: Path) -> dict[str, str]:
    """The environment of a CLI run on the embedded store at ``home`` in tenant acme (no server, URI or traces
    the caller's environment names)."""
    env = {**os.environ, "TRAJSEARCH_MODEL": "hashing", "TRAJSEARCH_HOME": str(home), "TRAJSEARCH_TENANT": "acme"}
    for name in ("TRAJSEARCH_SERVER", "TRAJSEARCH_URI", "TRAJSEARCH_TRACES"):
        env.pop(name, None)
    return env


def _as_a_user(args: list[str], env: dict[str, str]) -> subprocess.CompletedProcess:
    """The CLI in a process that file permissions bind: as root, without the capabilities that override them."""
    cmd = [sys.executable, "-m", "trajsearch.cli", *args]
    if os.geteuid() == 0:
        if shutil.which("setpriv") is None:
            pytest.skip("root, and no setpriv to drop the capabilities that override file permissions")
        cmd = ["setpriv", "--bounding-set=-dac_override,-dac_read_search", *cmd]
    return subprocess.run(cmd, env=env, cwd=Path(__file__).parents[1], capture_output=True, text=True, timeout=300)


def test_a_folder_or_file_this_user_may_not_read_is_a_rejection(tmp_path: Path) -> None:
    """A run folder a container left at mode 0700 (another user's) was passed over in silence by the walk: "read 1:
    ingested 1 runs", exit 0, its run lost. A file of mode 0600 was rejected as "truncated or corrupt gzip:
    [Errno 13] Permission denied", sending the operator to look at its bytes. Each is a rejection saying what it is
    (exit 3, in the dead-letter file), and the readable run lands."""
    dumps = tmp_path / "dumps"
    shutil.copytree(BATCH, dumps / "batch-2.4.6")
    locked_folder = dumps / "batch-2.4.6" / "demo__greet-14"
    locked_file = dumps / "other" / "demo__greet-11" / "demo__greet-11.traj.json"
    shutil.copytree(BATCH / "demo__greet-11", locked_file.parent)
    locked_folder.chmod(0o000)
    locked_file.chmod(0o000)
    env = _embedded_env(tmp_path / "home")
    try:
        done = _as_a_user(["ingest", str(dumps), "--quiet"], env)
    finally:
        locked_folder.chmod(0o755)
        locked_file.chmod(0o644)
    out, err = " ".join(done.stdout.split()), " ".join(done.stderr.split())
    assert done.returncode == 3, out + err
    assert "read 3: ingested 1 runs" in out and "rejected 2" in out, out + err
    assert f"rejected {locked_folder}:file: folder not read: permission denied" in err, err
    assert f"rejected {locked_file}:file: not readable: permission denied" in err, err
    assert "gzip" not in err


def test_an_empty_folder_is_said_to_hold_no_dump_file(backend: str, tmp_path: Path) -> None:
    """A nightly ingest of a share that was not mounted (an empty folder) said "its files hold no record of their
    format (a tau2-bench results.json ...)": there are no files. It says that no dump file is there, on both
    backends and in a dry run (which said nothing of it); it exits 2, as a missing input does (round 25, CLI2: it
    exited 0, and a nightly job over a share not mounted read as a quiet night)."""
    (tmp_path / "mnt" / "dumps").mkdir(parents=True)
    for extra in ([], ["--dry-run"]):
        code, out, err = run_cli("ingest", str(tmp_path / "mnt"), *extra)
        told = " ".join(err.split())
        assert code == 2, out + err
        assert "no run in the input: no dump file (.jsonl, .ndjson, .json, .traj, or one .gz, .zst; .eval archives) in " in told, err
        assert "hold no record of their format" not in told


def test_workers_go_on_when_the_command_ignores_ctrl_c(tmp_path: Path) -> None:
    """An ingest a script started in the background (``trajsearch ingest ... -w 2 &``) ignores SIGINT, as every
    background command of a script does; a Ctrl-C in that script's terminal reached its workers, which stopped
    (exit 130), and the command, going on, said "read 0: ingested 0 runs" and "error (0/2): worker 0 exited with
    130", exit 1. The workers ignore what the command ignores: the ingest ends as if nothing happened.
    The dump is the bundled sample (23 real runs, tenant demo)."""
    from trajsearch.cli import SAMPLE

    home = tmp_path / "home"
    env = {**os.environ, "TRAJSEARCH_MODEL": "hashing", "TRAJSEARCH_HOME": str(home), "TRAJSEARCH_TENANT": "demo"}
    for name in ("TRAJSEARCH_SERVER", "TRAJSEARCH_URI", "TRAJSEARCH_TRACES"):
        env.pop(name, None)

    # what a non-interactive shell does for `cmd &` (SIGINT ignored); a group of its own to signal
    ingest = subprocess.Popen(launched([sys.executable, "-m", "trajsearch.cli", "ingest", str(SAMPLE), "-q", "-w", "2"],
                                       sigint="ignore"),
                              env=env, cwd=Path(__file__).parents[1], start_new_session=True,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 600
    while not list((home / "ingest").glob("checkpoint-workers-*.json")) and ingest.poll() is None:
        assert time.monotonic() < deadline, "the workers never committed a batch"
        time.sleep(0.1)
    if ingest.poll() is None:
        os.killpg(ingest.pid, signal.SIGINT)  # the terminal's Ctrl-C, to the whole group
    out, err = ingest.communicate(timeout=300)
    assert ingest.returncode == 0, out + err
    assert "read 23: ingested 23 runs" in " ".join(out.split()) and "exited with" not in err, out + err


# -- round 14 fixes of the walk (FRG: RGE's findings) -----------------------------------------------------------


def test_a_tree_of_links_between_run_folders_is_listed_once_a_folder(tmp_path: Path, monkeypatch) -> None:
    """Run folders that link the run before and the first (``run-12/prev -> ../run-11``, ``base -> ../run-01``: how
    a series of resumed runs is often kept) were walked once per path through the links: 289 listings of these 25
    folders, the count growing with the square of the runs, or faster with more links (22 runs took 46 s, 400 runs
    with ``prev`` alone 8.8 s). Each folder is listed once, and each run read once, where it lies."""
    import trajsearch.ingest.read as read_module

    _local_store(tmp_path, monkeypatch)
    runs = tmp_path / "dumps" / "runs"
    for i in range(1, 13):
        folder = runs / f"run-{i:02d}"
        shutil.copytree(BATCH / "demo__greet-11", folder / "demo__greet-11")
        if i > 1:
            (folder / "prev").symlink_to(f"../run-{i - 1:02d}")
            (folder / "base").symlink_to("../run-01")
    listed: list[str] = []
    scandir = os.scandir

    def counted(path: Any = ".") -> Any:  # what the walk lists: counted, not changed
        if isinstance(path, (str, os.PathLike)):  # (shutil lists by file descriptor)
            listed.append(os.path.realpath(path))
        return scandir(path)

    monkeypatch.setattr(read_module.os, "scandir", counted)
    code, out, err = run_cli("ingest", str(tmp_path / "dumps"), "--dry-run")
    monkeypatch.setattr(read_module.os, "scandir", scandir)
    assert code == 0, out + err
    assert out.count("demo__greet-11.traj.json: format mini-swe-agent; runs") == 12, out
    assert out.count("demo__greet-11.traj.json: format mini-swe-agent; runs 1") == 1, out  # the one run, 12 copies
    assert "prev" not in out and "base" not in out, out
    under = [p for p in listed if p.startswith(str(runs))]
    assert len(set(under)) == 12 + 12 + 1, sorted(under)  # each run folder, its run's, runs/
    # listed once by the walk; the check that the input holds a dump (review FRCLI2, 1) lists the way to the first
    assert len(under) <= 25 + 3, sorted(under)


def test_a_folder_that_can_be_listed_but_not_entered_is_a_rejection(tmp_path: Path) -> None:
    """``chmod -R 644 dumps/x`` leaves folders that can be listed but not entered (no x): the walk listed the names
    in one, then asking whether each is a file raised PermissionError, and the whole input was lost (exit 4, the
    readable runs beside it too, with "[Errno 13] Permission denied: .../demo__greet-11.traj.json" as its only
    word). The folder is a rejection saying what it is, and the readable runs land."""
    dumps = tmp_path / "dumps"
    shutil.copytree(BATCH, dumps / "batch-2.4.6")
    locked = dumps / "copied" / "demo__greet-11"
    shutil.copytree(BATCH / "demo__greet-11", locked / "retry")
    shutil.copy(BATCH / "demo__greet-11" / "demo__greet-11.traj.json", locked)
    locked.chmod(0o644)
    env = _embedded_env(tmp_path / "home")
    try:
        done = _as_a_user(["ingest", str(dumps), "--quiet"], env)
    finally:
        locked.chmod(0o755)
    out, err = " ".join(done.stdout.split()), " ".join(done.stderr.split())
    assert done.returncode == 3, out + err
    assert "read 3: ingested 2 runs" in out and "rejected 1" in out, out + err
    assert (f"rejected {locked}:file: folder not read: it can be listed but not entered (permission "
            "denied") in err, err


def test_hidden_files_are_counted_once_and_not_when_read_through_a_link(tmp_path: Path, monkeypatch,
                                                                          caplog) -> None:
    """A project's ``.venv`` has ``lib64 -> lib``: the walk followed it and said twice as many files under hidden
    folders as there are (".venv: 4", true 2). And runs kept in a hidden folder behind a link (``runs ->
    .archive/2026-12-04``) were read through the link, yet the warning said they were not read. Links in hidden
    folders that hold no session folder are not followed; a file is counted once, and not when it is read."""
    _local_store(tmp_path, monkeypatch)
    dumps = tmp_path / "dumps"
    shutil.copytree(BATCH, dumps / ".archive" / "2026-12-04")
    (dumps / "runs").symlink_to(".archive/2026-12-04")
    site = dumps / "proj" / ".venv" / "lib" / "python3.11" / "site-packages" / "pkg"
    site.mkdir(parents=True)
    for name in ("schema.json", "package.json"):
        (site / name).write_text("{}")
    (dumps / "proj" / ".venv" / "lib64").symlink_to("lib")
    with caplog.at_level(logging.WARNING, logger="trajsearch"):
        code, out, err = run_cli("ingest", str(dumps), "--quiet")
    assert code == 0 and "read 2: ingested 2 runs" in " ".join(out.split()), out + err
    hidden = [r.getMessage() for r in caplog.records if "under hidden folders not read" in r.getMessage()]
    assert len(hidden) == 1 and hidden[0].startswith("2 file(s) under hidden folders not read (.venv: 2)"), hidden


def test_a_link_to_a_run_file_in_the_tree_reads_the_run_where_it_lies(tmp_path: Path, monkeypatch) -> None:
    """``a-best/pick.traj.json -> ../batch-2.4.6/demo__greet-11/demo__greet-11.traj.json`` (a file picked by a
    link, its path sorting before the file's) was read at the link's path: the run got another id, so adding the
    link added the run again on the next ingest. A link to a file the walk reads is read where it lies, as a link
    to a folder is."""
    _local_store(tmp_path, monkeypatch)
    dumps = tmp_path / "dumps"
    shutil.copytree(BATCH, dumps / "batch-2.4.6")
    code, out, err = run_cli("ingest", str(dumps), "--quiet")
    assert code == 0 and "read 2: ingested 2 runs" in " ".join(out.split()), out + err
    (dumps / "a-best").mkdir()
    (dumps / "a-best" / "pick.traj.json").symlink_to("../batch-2.4.6/demo__greet-11/demo__greet-11.traj.json")
    code, out, err = run_cli("ingest", str(dumps), "--quiet", "--restart")
    assert code == 0 and "read 2: ingested 0 runs (0 rows), unchanged 2" in " ".join(out.split()), out + err


def test_an_input_whose_dumps_are_all_hidden_says_so(tmp_path: Path, monkeypatch) -> None:
    """An input whose only dump files lie in a hidden folder (a backup's ``.cache/``) got the warning that they
    were not read and then "no dump file ... (an empty folder, or a share not mounted?)", which sends the operator
    to check the mount. Like an input of archives only, it is a rejection naming the hidden files as the reason."""
    _local_store(tmp_path, monkeypatch)
    shutil.copytree(BATCH, tmp_path / "dumps" / ".cache" / "batch-2.4.6")
    code, out, err = run_cli("ingest", str(tmp_path / "dumps"), "--quiet")
    told = " ".join(err.split())
    assert "share not mounted" not in told, err
    assert ("no dump file here, only 2 file(s) under hidden folders not read (.cache: 2): only the agents' and apps' "
            "session folders") in told and "name a hidden folder to read it" in told, err

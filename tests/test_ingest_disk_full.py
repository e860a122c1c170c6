"""Probe G (G1): an ingest that fills its disk says so in one line: which disk, what is kept, what to do.

It printed about 95 lines: pymilvus' traceback of each failed upsert, four retries of an error that no retry
can help, then the error twice, the second as a crash ("OSError: ... run with --debug"). The disk is a real full
one: a small tmpfs, mounted in a user and mount namespace of the CLI's own (``unshare -rm``), where the kernel
allows it. The input: real tau-bench results (tests/fixtures/tau-bench/.real).
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from cli_support import unnoted

TAU = Path(__file__).parent / "fixtures" / "tau-bench" / ".real"


def _on_a_small_disk(mount: Path, *args: str, first: tuple[str, ...] = (), home: Path | None = None,
                     stdout: str = "") -> subprocess.CompletedProcess:
    """``trajsearch ARGS`` with TRAJSEARCH_HOME on a 500 KB tmpfs at ``mount`` (or at ``home``, off it), after
    ``trajsearch FIRST`` (its output dropped) on the same disk when given; ``stdout``: a file name on the tmpfs,
    filled first, that the command's output is redirected to."""
    mount.mkdir()
    before = f'"$@" {shlex.join(first)} >/dev/null 2>&1; ' if first else ""
    out = f' > "$0"/{shlex.quote(stdout)}' if stdout else ""
    fill = 'head -c 600k /dev/zero > "$0/fill" 2>/dev/null; ' if stdout else ""
    script = f'mount -t tmpfs -o size=500k tmpfs "$0" && {fill}{before}exec "$@" {shlex.join(args)}{out}'
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path), "TRAJSEARCH_MODEL": "hashing",
           "TRAJSEARCH_HOME": str(home or mount / "home"), "COLUMNS": "400"}
    for name in ("TRAJSEARCH_URI", "TRAJSEARCH_TRACES", "TRAJSEARCH_SERVER", "TRAJSEARCH_DEBUG"):
        env.pop(name, None)
    return subprocess.run(["unshare", "-rm", "sh", "-c", script, str(mount), sys.executable, "-m", "trajsearch.cli"],
                          capture_output=True, text=True, timeout=600, env=env)  # a bound for a hang only


def _can_mount(tmp_path: Path) -> bool:
    if not shutil.which("unshare"):
        return False
    (tmp_path / "probe").mkdir()
    probe = subprocess.run(["unshare", "-rm", "sh", "-c", 'mount -t tmpfs -o size=64k tmpfs "$0"',
                            str(tmp_path / "probe")], capture_output=True, timeout=600)
    return probe.returncode == 0


def test_a_full_disk_is_one_line_naming_the_store_and_the_rerun(tmp_path: Path) -> None:
    if not _can_mount(tmp_path):
        pytest.skip("no user and mount namespace here to mount a small tmpfs in")
    result = _on_a_small_disk(tmp_path / "disk", "ingest", str(TAU), "-t", "acme", "-q")
    assert result.returncode == 1, result.stderr
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, result.stderr  # no traceback, no retry, no second error
    [line] = lines
    assert line.startswith(f"error: no space left on the disk of {tmp_path / 'disk' / 'home'}")
    assert "rerun the same command to resume" in line and "--debug" not in line


@pytest.mark.parametrize("command", [("stats", "-t", "acme"), ("serve",), ("ui",)], ids=lambda c: c[0])
def test_a_read_of_a_store_on_a_full_disk_is_one_line_too(tmp_path: Path, monkeypatch,
                                                           command: tuple[str, ...]) -> None:
    """Probe NEWB: ``stats`` after an ingest the full disk stopped mid-batch must first remove the half-written
    runs, a write: it printed pymilvus' traceback and then "MilvusException: <MilvusException: (code=1,
    message=[Errno 28] No space left on device)> (run with --debug ...)". Review NEWB, 4: ``serve`` and ``ui``,
    opening the index, still did (about 20 lines, then "cannot open the index (MilvusException)")."""
    if not _can_mount(tmp_path):
        pytest.skip("no user and mount namespace here to mount a small tmpfs in")
    key = {"sha256": "0" * 64, "tenant": "acme", "role": "read"}  # serve's: it refuses to start with no key
    monkeypatch.setenv("TRAJSEARCH_KEYS", json.dumps({"keys": [key]}))
    result = _on_a_small_disk(tmp_path / "disk", *command, first=("ingest", str(TAU), "-t", "acme"))
    assert result.returncode == 1, result.stderr
    opening = "" if command[0] == "stats" else "cannot open the index: "
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert lines == [f"error: {opening}no space left on the disk of {tmp_path / 'disk' / 'home'}/milvus.db: free some space "
                     "(or move the store) and rerun"], result.stderr


def test_output_to_a_full_disk_is_not_blamed_on_the_store(tmp_path: Path) -> None:
    """Review NEWB, 1: with the store on a disk with room, ``search ... > /full/hits.txt`` said "no space left on a
    disk this command writes to (the store's, its traces' or the ingest state's)": the full disk is the output's,
    said as the system says it."""
    if not _can_mount(tmp_path):
        pytest.skip("no user and mount namespace here to mount a small tmpfs in")
    home = tmp_path / "home"
    result = _on_a_small_disk(tmp_path / "disk", "search", "refund", "-t", "acme", home=home, stdout="hits.txt",
                              first=("ingest", str(TAU), "-t", "acme"))
    assert (home / "milvus.db").is_dir()  # the store was written, off the small disk
    assert result.returncode == 1, result.stderr
    lines = unnoted(result.stderr)
    assert len(lines) == 1 and "[Errno 28] No space left on device" in lines[0], result.stderr
    assert "store" not in lines[0] and str(home) not in lines[0], result.stderr


#: Run inside the namespace: a Milvus server (milvus-lite's, as ``ingest --workers`` serves a store) whose data is
#: on the small disk, and ``trajsearch ARGS --uri`` its address.
_ON_A_FULL_SERVER = """
import subprocess, sys
from trajsearch.ingest.batch import LocalServer
with LocalServer(sys.argv[1]) as server:
    done = subprocess.run([sys.executable, "-m", "trajsearch.cli", *sys.argv[2:], "--uri", server.uri],
                          capture_output=True, text=True)
print(server.uri)
sys.stderr.write(done.stderr)
sys.exit(done.returncode)
"""


def test_a_full_milvus_server_is_named_not_a_local_disk(tmp_path: Path) -> None:
    """Review NEWB, 8: an ingest into a Milvus server whose disk filled was told "no space left on the disk of
    <the local trace store>", a disk with room: the server's disk is the full one."""
    if not _can_mount(tmp_path):
        pytest.skip("no user and mount namespace here to mount a small tmpfs in")
    mount, home = tmp_path / "disk", tmp_path / "home"
    mount.mkdir()
    script = 'mount -t tmpfs -o size=500k tmpfs "$0" && exec "$@"'
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path), "TRAJSEARCH_MODEL": "hashing",
           "TRAJSEARCH_HOME": str(home), "COLUMNS": "400"}
    for name in ("TRAJSEARCH_URI", "TRAJSEARCH_TRACES", "TRAJSEARCH_SERVER", "TRAJSEARCH_DEBUG"):
        env.pop(name, None)
    result = subprocess.run(["unshare", "-rm", "sh", "-c", script, str(mount), sys.executable, "-c", _ON_A_FULL_SERVER,
                             str(mount / "milvus.db"), "ingest", str(TAU), "-t", "acme", "-q"],
                            capture_output=True, text=True, timeout=600, env=env)  # a bound for a hang only
    uri = result.stdout.strip()
    assert result.returncode == 1 and uri.startswith("http://127.0.0.1:"), result.stderr
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith(f"error: no space left on the disk of the Milvus server at {uri}:"), \
        result.stderr
    assert str(home) not in lines[0]

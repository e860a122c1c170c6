"""Ctrl-C of a command while milvus-lite's in-process server still works on its call (round 26, CLI3).

Opening the 172k-row bench store takes ~30 s, spent loading its segments in a worker thread of milvus-lite's
in-process gRPC server. Ctrl-C there ended the command, silently (typer turns KeyboardInterrupt into exit 130
without a word), and the process then stayed 2-12 s more: the interpreter's shutdown joins that worker thread,
which went on loading until done (py-spy: the main thread in ``concurrent.futures.thread._python_exit``, the
worker in ``Segment.load``); the same after Ctrl-C of a hybrid search rebuilding its lexical index (the next
5,000 rows' query). Here the server's load of the collection is held for good (a ``sitecustomize`` of the test's
own, as a very large store would hold it), so the command can leave only by not waiting for it.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from cli_support import own_lines
from process_support import cli_env, launched

ROOT = Path(__file__).parents[1]
SWE = ROOT / "tests" / "fixtures" / "swe-agent" / ".real" / \
    "gpt4__swe-bench-dev-easy_first_only__default__t-0.00__p-0.95__c-3.00__install-1"
QUERY = "pydicom"

#: Installed by the child's ``sitecustomize``: milvus-lite's load of a collection (in its server's worker thread)
#: says it began, by a file, and never ends.
_HELD_OPEN = """\
import os, threading
from pathlib import Path
import milvus_lite.engine.collection as engine

def held(self, *args, **kwargs):
    Path(os.environ["HELD_MARK"]).touch()
    threading.Event().wait()

engine.Collection.__init__ = held
"""


def _store_of_one_run(tmp_path: Path) -> tuple[Path, dict[str, str]]:
    """An embedded store holding one real SWE-agent run, and the environment of the commands that use it."""
    store = tmp_path / "store.db"
    env = cli_env(TRAJSEARCH_HOME=str(tmp_path / "home"), TRAJSEARCH_URI=str(store),
                  TRAJSEARCH_TRACES=str(tmp_path / "traces"))
    first = _cli(env, "ingest", str(SWE), "-t", "acme", "-q")
    assert first.returncode == 0, first.stderr
    return store, env


def _held_open(env: dict[str, str], tmp_path: Path, mark: Path, held: str = _HELD_OPEN) -> dict[str, str]:
    """``env`` with the store's open (or the step ``held`` holds) held for good (see :data:`_HELD_OPEN`), ``mark``
    made as it begins."""
    (tmp_path / "hold").mkdir()
    (tmp_path / "hold" / "sitecustomize.py").write_text(held)
    return {**env, "HELD_MARK": str(mark), "PYTHONPATH": os.pathsep.join([str(tmp_path / "hold"), env["PYTHONPATH"]])}


def _stopped_when_marked(command: list[str], env: dict[str, str], mark: Path, stop: int,
                         sent: Path | None = None) -> tuple[int, str]:
    """The CLI's ``command`` sent ``stop`` once its held step (see :data:`_HELD_OPEN`) made ``mark``: its exit
    status and stderr. ``sent``: a file made once the signal is sent."""
    proc = subprocess.Popen(launched([sys.executable, "-m", "trajsearch.cli", *command], sigint="default"),
                            cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 600  # a bound for a child that never reaches the step, not a speed target
        while not mark.exists():
            assert proc.poll() is None and time.monotonic() < deadline, proc.communicate()
            time.sleep(0.05)
        proc.send_signal(stop)
        if sent is not None:
            sent.touch()
        try:  # the held step never ends: waiting for it, the child would never leave (a bound for that hang only)
            _, stderr = proc.communicate(timeout=600)
        except subprocess.TimeoutExpired:
            pytest.fail(f"signal {stop} during a held step: the process waited for it to end")
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    return proc.returncode, stderr


def _cli(env: dict[str, str], *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "trajsearch.cli", *args], cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=600)


#: A key file no one holds a key of: enough for ``serve`` to start.
_NOBODYS_KEYS = '{"keys": [{"sha256": "' + "0" * 64 + '", "tenant": "acme", "role": "read"}]}'


@pytest.mark.parametrize("command, stop", [(["search", QUERY, "-t", "acme"], signal.SIGINT),
                                           (["ingest", str(SWE), "-t", "acme", "-q"], signal.SIGINT),
                                           (["ingest", str(SWE), "-t", "acme", "-q"], signal.SIGTERM),
                                           (["search", QUERY, "-t", "acme"], signal.SIGTERM),
                                           (["serve", "--address", "127.0.0.1:0"], signal.SIGTERM)],
                         ids=["search-ctrl-c", "ingest-ctrl-c", "ingest-sigterm", "search-sigterm", "serve-sigterm"])
def test_ctrl_c_while_the_store_opens_leaves_saying_nothing_was_read_or_written(tmp_path: Path, command: list[str],
                                                                                stop: signal.Signals) -> None:
    """Ctrl-C, or SIGTERM (a scheduler's timeout, exit 143: every command but ingest died by it in silence, serve
    too until it listened), as the store opens."""
    store, env = _store_of_one_run(tmp_path)
    mark = tmp_path / "opening"
    env = {**env, "TRAJSEARCH_KEYS": _NOBODYS_KEYS}
    code, stderr = _stopped_when_marked(command, _held_open(env, tmp_path, mark), mark, stop)
    assert code == 128 + stop, stderr
    assert own_lines(stderr) == [f"interrupted while opening the store {store}: nothing read or written"], stderr
    # nothing lost: the store opens again and answers as before
    again = _cli(env, "search", QUERY, "-t", "acme")
    assert again.returncode == 0 and "pydicom__pydicom-1458" in again.stdout, again.stdout + again.stderr


#: As :data:`_HELD_OPEN`, but the store's search (after the open) is held for good.
_HELD_SEARCH = _HELD_OPEN.replace("engine.Collection.__init__ = held", "engine.Collection.search = held")


@pytest.mark.parametrize("stop", [signal.SIGTERM, signal.SIGINT], ids=["sigterm", "ctrl-c"])
def test_a_search_stopped_says_so_in_one_line(tmp_path: Path, stop: signal.Signals) -> None:
    """A search SIGTERM'd as it searched (``timeout 30 trajsearch search ...`` in a script) died by the signal
    (-15) with no word; Ctrl-C said a bare ``interrupted``. Both say what stopped and that nothing was written."""
    store, env = _store_of_one_run(tmp_path)
    mark = tmp_path / "searching"
    code, stderr = _stopped_when_marked(["search", QUERY, "-t", "acme"], _held_open(env, tmp_path, mark,
                                                                                      _HELD_SEARCH), mark, stop)
    assert (code, own_lines(stderr)) == (128 + stop, ["interrupted: search stopped, nothing written"]), stderr


def _on_a_terminal(tmp_path: Path, command: list[str], *, told: bool,
                   extra: dict[str, str] | None = None) -> tuple[list[str], int, Path]:
    """``command`` run on a terminal (a pty) with its store's open held for good, Ctrl-C'd once the open has run
    long enough to be told (``told``: once the line came; else once the open has run past the 2 s the line waits):
    the lines it said, its exit status, the store. ``extra``: more of the command's environment."""
    import pty
    import select

    store, env = _store_of_one_run(tmp_path)
    mark = tmp_path / "opening"
    main, terminal = pty.openpty()
    proc = subprocess.Popen(launched([sys.executable, "-m", "trajsearch.cli", *command], sigint="default"),
                            cwd=ROOT, env={**_held_open(env, tmp_path, mark), **(extra or {})}, stdin=terminal,
                            stdout=terminal, stderr=terminal)
    os.close(terminal)
    said = b""
    try:
        deadline = time.monotonic() + 600  # a bound for a line that never comes, not a speed target
        while (b"opening the store" not in said) if told else not mark.exists():
            assert proc.poll() is None and time.monotonic() < deadline, said
            if select.select([main], [], [], 0.5)[0]:
                said += os.read(main, 4096)
        assert mark.exists()  # said while the store opens
        if not told:  # past the 2 s a line would wait for (a bound for the negative, not a speed target)
            select.select([], [], [], 5)
        proc.send_signal(signal.SIGINT)
        proc.wait(timeout=600)  # a bound for the hang the first test names
        while select.select([main], [], [], 0.5)[0]:
            try:
                said += os.read(main, 4096)
            except OSError:  # the terminal's other end closed: all read
                break
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        os.close(main)
    return [line.strip() for line in said.decode().splitlines() if line.strip()], proc.returncode, store


@pytest.mark.parametrize("command", [["stats", "-t", "acme"], ["ingest", str(SWE), "-t", "acme"]])
def test_a_terminal_is_told_what_a_slow_open_of_the_store_waits_for(tmp_path: Path, command: list[str]) -> None:
    """A command on a large store showed nothing for the ~30 s its open takes (the 172k-row bench store: ``stats``
    said its first word 36 s in; an ingest's progress bar starts after the open): on a terminal, a line says the
    store is opening once it has taken 2 s. Here the open never ends: the line must come, then Ctrl-C leaves."""
    lines, code, store = _on_a_terminal(tmp_path, command, told=True)
    assert lines == [f"opening the store {store}…", f"interrupted while opening the store {store}: nothing read or "
                                                    "written"], lines
    assert code == 130


@pytest.mark.parametrize("command", [["serve", "--address", "127.0.0.1:0"], ["ui", "--address", "127.0.0.1:0"]])
def test_a_server_on_a_terminal_is_told_what_a_slow_open_of_the_store_waits_for(tmp_path: Path,
                                                                                command: list[str]) -> None:
    """``serve`` and ``ui`` said nothing for a 30 s open (their own, not ``connect``'s): no listening line either."""
    lines, code, store = _on_a_terminal(tmp_path, command, told=True, extra={"TRAJSEARCH_KEYS": _NOBODYS_KEYS})
    assert lines[0] == f"opening the store {store}…", lines
    assert code == 130


def test_ingest_quiet_is_not_told_of_a_slow_open(tmp_path: Path) -> None:
    """``ingest -q`` promises no progress bar nor progress lines: the open's line is progress too."""
    lines, code, store = _on_a_terminal(tmp_path, ["ingest", str(SWE), "-t", "acme", "-q"], told=False)
    assert lines == [f"interrupted while opening the store {store}: nothing read or written"], lines
    assert code == 130


#: Installed by the child's ``sitecustomize``: the import of ``typer`` (one of the CLI's first) says it began, by a
#: file, and then takes as long as the test likes, as the ~1-2 s of a cold start's imports do.
_HELD_IMPORT = """\
import os, sys, time
from pathlib import Path

class Held:
    def find_spec(self, name, path=None, target=None):
        if name == "typer":
            Path(os.environ["HELD_MARK"]).touch()
            while True:
                time.sleep(0.05)
        return None

sys.meta_path.insert(0, Held())
"""


@pytest.mark.parametrize("command, stop", [(["search", QUERY], signal.SIGINT), (["--help"], signal.SIGINT),
                                           (["search", QUERY], signal.SIGTERM)],
                         ids=["search-ctrl-c", "help-ctrl-c", "search-sigterm"])
def test_ctrl_c_while_the_command_starts_leaves_in_one_line(tmp_path: Path, command: list[str],
                                                            stop: signal.Signals) -> None:
    """Ctrl-C in a command's first second or two, as its imports run, printed a 30-line traceback through them
    and died by SIGINT (-2); SIGTERM there died by it in silence (-15): before ``main`` ran, nothing said it.
    Nothing is open yet: one word, exit 130 (143)."""
    mark = tmp_path / "importing"
    env = _held_open(cli_env(TRAJSEARCH_HOME=str(tmp_path / "home"), TRAJSEARCH_URI=str(tmp_path / "store.db")),
                     tmp_path, mark, _HELD_IMPORT)
    code, stderr = _stopped_when_marked(command, env, mark, stop)
    assert (code, own_lines(stderr)) == (128 + stop, ["interrupted"]), stderr
    assert not (tmp_path / "store.db").exists()  # nothing written


#: As :data:`_HELD_OPEN`, but an export's writing is held for good once its first line is out.
_HELD_WRITE = """\
import os, threading
from pathlib import Path
import trajsearch.export as export

def held(job, out, **kwargs):
    out.write('{"a record": "cut short"}\\n')
    out.flush()
    Path(os.environ["HELD_MARK"]).touch()
    threading.Event().wait()

export.write = held
"""


@pytest.mark.parametrize("to_file, stop", [(False, signal.SIGTERM), (True, signal.SIGINT)], ids=["stdout", "file"])
def test_an_export_stopped_as_it_writes_says_what_it_leaves(tmp_path: Path, to_file: bool,
                                                            stop: signal.Signals) -> None:
    """An export stopped while writing said ``nothing written``, where its stdout (``export > runs.jsonl``) held
    part of it: it says stdout is cut short, or that ``--out FILE`` is as it was (written whole or not at all)."""
    _, env = _store_of_one_run(tmp_path)
    mark, out = tmp_path / "writing", tmp_path / "runs.jsonl"
    command = ["export", "-q", QUERY, "-t", "acme", "--outcome", "success", "--outcome", "failure", "--quiet",
               *(["-o", str(out)] if to_file else [])]
    code, stderr = _stopped_when_marked(command, _held_open(env, tmp_path, mark, _HELD_WRITE), mark, stop)
    said = f"{out} left as it was" if to_file else "what it wrote to stdout is cut short"
    assert (code, own_lines(stderr)) == (128 + stop, [f"interrupted: export stopped, {said}"]), stderr
    assert not out.exists() and [p.name for p in tmp_path.iterdir() if p.name.startswith(".runs")] == []


#: Held: the first of an export's two renames (its file, then the sidecar) done, till the test has sent its signal.
_HELD_RENAME = """\
import os, time
from pathlib import Path

rename = os.replace

def held(src, dst, *args, **kwargs):
    rename(src, dst, *args, **kwargs)
    if str(dst) == os.environ["HELD_PATH"]:
        Path(os.environ["HELD_MARK"]).touch()
        while not os.path.exists(os.environ["HELD_SENT"]):
            time.sleep(0.01)

os.replace = held
"""


def test_an_export_stopped_between_its_renames_leaves_its_file_with_its_sidecar(tmp_path: Path) -> None:
    """``export -o FILE --provenance sidecar`` renames the file, then its sidecar: a SIGTERM between the two left
    the file without the sidecar its lines go with, and said ``nothing written``. The signal waits till both are
    renamed, and the line says the file is written whole."""
    _, env = _store_of_one_run(tmp_path)
    mark, out = tmp_path / "renamed", tmp_path / "runs.jsonl"
    sent = tmp_path / "sent"
    env = {**_held_open(env, tmp_path, mark, _HELD_RENAME), "HELD_PATH": str(out), "HELD_SENT": str(sent)}
    command = ["export", "-q", QUERY, "-t", "acme", "--outcome", "success", "--outcome", "failure", "--quiet",
               "-o", str(out), "--provenance", "sidecar"]
    code, stderr = _stopped_when_marked(command, env, mark, signal.SIGTERM, sent)
    assert (code, own_lines(stderr)) == (143, [f"interrupted: export stopped, {out} written whole"]), stderr
    sidecar = tmp_path / "runs.jsonl.provenance.jsonl"
    assert out.read_text().count("\n") == sidecar.read_text().count("\n") >= 1

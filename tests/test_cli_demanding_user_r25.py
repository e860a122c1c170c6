"""The command line as a demanding newcomer meets it (round 24's NEWB probe, fixed in round 25, CLI2): a store path
Milvus Lite would refuse, an error read in a log, a folder holding no dump, a store under a read-only folder, a
progress bar that ran ahead of the work, a score the help did not explain, and a Harbor trial's own log files.

Real inputs: the bundled sample (23 real tau-bench runs), real LangSmith exports, a real tau-bench results file and a
real Harbor trial that ended before its agent ran (see each fixture folder's SOURCE.md)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from trajsearch.embed import HashingEmbedder
from trajsearch.ingest.batch import IngestJob, run_ingest
from trajsearch.search import TrajSearch

from cli_support import newcomer, run_cli  # noqa: F401 - the fixture

ROOT = Path(__file__).parent.parent
FIXTURES = Path(__file__).parent / "fixtures"
GEMINI_LOG = FIXTURES / "gemini-cli" / ".real" / "idaho-vault" / "logs.json"
LANGSMITH = FIXTURES / "langsmith" / ".real" / "langgraph-react-runs-batch.json"
TAU_BENCH = FIXTURES / "tau-bench" / ".real" / ("act-grok-4-fast-non-reasoning-0.0_range_0--1_user-grok-4-fast-non-"
                                                "reasoning-llm_1129210244.json")
NEVER_RAN = FIXTURES / "atif" / ".real" / "harbor-never-ran"


def said(text: str) -> str:
    return " ".join(text.split())


def test_a_local_store_path_not_ending_in_db_is_refused_in_our_words(newcomer, tmp_path: Path) -> None:
    """``--uri ./store`` was refused in pymilvus' words ("ConnectionConfigException: ... needs start with [unix, http,
    https, tcp] or a local file endswith [.db]"), as an unexpected error, after an empty ``store`` folder was made.
    It is a usage error saying what a local store path must be, why, and a path that would do; nothing is made."""
    store = tmp_path / "store"
    code, out, err = run_cli("stats", "--uri", str(store))
    assert code == 2, out + err
    told = said(err)
    assert f"the store path '{store}' does not end in .db: Milvus Lite" in told, told
    assert f"give one such as '{store}.db', or http://host:19530 for a Milvus server" in told
    assert "ConnectionConfigException" not in told
    assert not store.exists()
    # with --workers, milvus-lite's server had taken the path and made a store no other command could open
    code, out, err = run_cli("ingest", str(LANGSMITH), "--workers", "2", "--uri", str(store))
    assert code == 2 and "does not end in .db" in said(err), out + err
    assert not store.exists()


def test_an_error_in_a_log_or_a_pipe_is_one_line(newcomer) -> None:
    """stderr no terminal (a log, ``2>&1 | tee``): an error line had been cut at 80 columns, its fix on the next
    line, so ``grep error:`` found half of it. Each line is whole there (a terminal wraps it at its own width)."""
    code, out, err = run_cli("ingest", str(GEMINI_LOG))
    assert code == 2, out + err
    [line] = [line for line in err.splitlines() if line.startswith("error:")]
    assert len(line) > 80 and line.endswith("not a run"), err
    assert line.startswith(f"error: {GEMINI_LOG}: no run in this file: Gemini CLI's log of the prompts")


def test_a_folder_holding_no_dump_exits_2_and_says_what_it_holds(newcomer, tmp_path: Path) -> None:
    """A folder of no dump file (notes only: a share not mounted, the wrong folder) exited 0, "ingested 0 runs"
    reading as a quiet night. It says so and exits 2, as a missing input does, in a dry run too. One holding only a
    tool's side files was read, and exits 0 saying what they are (review FRCLI2, 1). A folder holding one known dump
    among them keeps its runs and lists the unknown file (exit 3)."""
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "README.txt").write_text("runs are under /mnt/dumps\n")
    for dry in ((), ("--dry-run",)):
        code, out, err = run_cli("ingest", str(notes), *dry)
        assert code == 2, out + err
        assert f"no run in the input: no dump file (.jsonl, .ndjson, .json, .traj, or one .gz, .zst; .eval archives) in {notes} " \
               f"(1 file(s) passed over by name" in said(err)
    side = tmp_path / "side"
    side.mkdir()
    shutil.copy(GEMINI_LOG, side)
    code, out, err = run_cli("ingest", str(side))
    assert code == 0 and "1 file(s) passed over as holding none" in said(err), out + err

    mixed = tmp_path / "mixed"
    mixed.mkdir()
    shutil.copy(LANGSMITH, mixed)
    (mixed / "scores.json").write_text('{"accuracy": 0.5}\n')
    (mixed / "README.txt").write_text("notes\n")
    code, out, err = run_cli("ingest", str(mixed))
    assert code == 3, out + err
    assert re.search(r"read \d+: ingested [1-9]\d* runs", said(out)), out
    assert f"rejected {mixed / 'scores.json'}:file: " in said(err), err


def test_a_dump_read_that_holds_no_run_still_exits_0(newcomer, tmp_path: Path) -> None:
    """The line drawn: a dump that was read and held no run (tau2's results.json without its simulations) is no bad
    input; only inputs with no dump file to read exit 2."""
    import json
    results = json.loads((FIXTURES / "tau2-bench" / ".real" / "airline_run1.json").read_text())
    del results["simulations"]
    path = tmp_path / "results.json"
    path.write_text(json.dumps(results))
    code, out, err = run_cli("ingest", str(path))
    assert code == 0, out + err


@pytest.mark.skipif(os.geteuid() == 0 and shutil.which("setpriv") is None,
                    reason="root, and no setpriv to give up writing any folder")
def test_a_store_under_a_read_only_folder_names_the_folder_and_the_fix(tmp_path: Path) -> None:
    """A store under a folder this user may not write was refused as "[Errno 13] Permission denied:
    '/.../ro/home/milvus.db'" (exit 2, bad input): the path, not the folder to fix or what to do. As root the command
    runs without the capabilities that let it write any folder (``setpriv``), as a file's mode binds."""
    ro = tmp_path / "ro"
    ro.mkdir()
    ro.chmod(0o555)
    jail = ["setpriv", "--bounding-set", "-dac_override,-dac_read_search"] if os.geteuid() == 0 else []
    env = {**os.environ, "TRAJSEARCH_HOME": str(ro / "home"), "TRAJSEARCH_MODEL": "hashing",
           "PYTHONPATH": str(ROOT)}
    for name in ("TRAJSEARCH_URI", "TRAJSEARCH_TRACES", "TRAJSEARCH_SERVER"):
        env.pop(name, None)
    done = subprocess.run([*jail, sys.executable, "-m", "trajsearch.cli", "stats"], env=env, capture_output=True,
                          text=True, timeout=600, cwd=tmp_path)
    ro.chmod(0o755)
    assert done.returncode == 1, done.stderr
    assert f"error: the data directory {ro / 'home' / 'milvus.db'} cannot be created: {ro} is not writable by this " \
           f"user: give this user write access to {ro}, or point --uri (or $TRAJSEARCH_URI, $TRAJSEARCH_HOME) at a " \
           "folder it can write" in said(done.stderr), done.stderr


def test_the_bytes_done_follow_the_runs_written(tmp_path: Path) -> None:
    """The ingest's bar (and its lines in a log) told the bytes read, which run ahead of the embedding and, for a JSON
    document, come whole before its first run: 3.4 of 3.4 MB with 0 of 115 tau-bench runs written. The bytes told now
    are those whose runs are committed: a document's share out evenly over its runs, and the last byte is told with
    the last run."""
    events: list[tuple[str, int]] = []
    with TrajSearch.open(str(tmp_path / "m.db"), traces=str(tmp_path / "t"), embedder=HashingEmbedder()) as ts:
        result = run_ingest(ts, IngestJob(paths=[TAU_BENCH], state_dir=tmp_path / "state"),
                            on_bytes=lambda n: events.append(("bytes", n)),
                            on_records=lambda n: events.append(("runs", n)), indexer_options={"batch_size": 1})
    assert result.report.ingested == 2
    size = TAU_BENCH.stat().st_size
    told = [n for what, n in events if what == "bytes"]
    assert sum(told) == size
    assert events[0] == ("runs", 1), events  # the runs of a batch are told before its bytes (review FRCLI2, 5)
    second_run = next(i for i, (what, _) in enumerate(events) if what == "runs" and i > 0)
    with_first_run = sum(n for what, n in events[:second_run] if what == "bytes")
    assert 0 < with_first_run < size, events  # the first of the two runs: about half the file, not all of it


def test_search_help_says_what_the_score_is(newcomer) -> None:
    """``search --help`` showed score= in every hit and said nothing of it: a cosine in dense mode, BM25 in lexical,
    a fused rank score in hybrid, which auto picks per query. The help says what it is and that higher is better,
    and that scores compare within one answer only; ``similar`` points there."""
    code, out, _ = run_cli("search", "--help")
    assert code == 0
    told = said(out)
    for words in ("score= is the number the hits are ranked by: higher is better", "cosine of the query and the row",
                  "lexical, BM25", "hybrid, a fusion of the two legs' ranks",
                  "compare scores within one answer, not across modes or queries"):
        assert words in told, told
    code, out, _ = run_cli("similar", "--help")
    assert code == 0 and "higher is better, on the mode's scale (see `trajsearch search --help`" in said(out)


def test_a_commands_help_is_not_cut_at_the_sources_line_breaks(newcomer) -> None:
    """Typer kept a docstring's line breaks: a paragraph of ``ingest --help`` came out as a full line, then a word or
    two, then a full line. A paragraph is one line the help wraps; a list keeps its items, one a line."""
    code, out, _ = run_cli("ingest", "--help")
    assert code == 0
    text = re.sub(r"[│╭╮╰╯─]", "", out)
    # at 80 columns: "... a named FIFO, `-` for" / "standard input): copied once ...", not "standard input):" alone
    assert any("standard input): copied once to a temporary file" in line for line in text.splitlines()), out
    for item in ("0 every record read landed", "3 some records or inputs", "4 nothing landed", "1 a failure",
                 "2 a bad argument"):
        assert any(line.strip().startswith(item) for line in text.splitlines()), item


def test_a_harbor_trial_s_own_log_files_are_said_to_be_the_trial_s(newcomer) -> None:
    """A real Harbor trial that ended before its agent ran holds ``config.json``, ``result.json``, ``exception.txt``
    and ``trial.log``. The JSON files were said to be the trial's own, but its ``exception.txt`` and ``trial.log``
    were counted as files of no format, so a second line said "no dump file (.jsonl, .json, ...)" of a folder whose
    JSON files had just been named. All four are the trial's own now, and that line is gone; a trial read and
    found holding no run exits 0 (review FRCLI2, 1)."""
    code, out, err = run_cli("ingest", str(NEVER_RAN))
    told = said(err)
    assert code == 0, out + err
    assert "4 file(s) passed over as holding none" in told, told
    for name in ("exception.txt", "trial.log"):
        assert f"{name}: no run in this file: Harbor's own {name} of trial 050_algorand__pyteal__step281__e__CaqUfPp" \
               in told
    assert "no dump file" not in told


def test_ingest_refuses_no_workers_and_a_state_dir_that_is_a_file(newcomer, tmp_path: Path) -> None:
    """``--workers 0`` (or -2) ingested with one process, saying nothing of the number; ``--state-dir`` naming a file
    ended as "error: [Errno 17] File exists: '...'", naming no option. Both are usage errors naming the option, before
    anything is read."""
    code, out, err = run_cli("ingest", str(LANGSMITH), "--workers", "0")
    assert code == 2 and "'--workers'" in err, out + err
    a_file = tmp_path / "a-file"
    a_file.write_text("")
    for state_dir, what in ((a_file, "is a file"), (a_file / "x", f"lies under {a_file}, which is a file")):
        code, out, err = run_cli("ingest", str(LANGSMITH), "--state-dir", str(state_dir))
        assert code == 2, out + err
        assert f"error: --state-dir {state_dir} {what}: give a folder" in said(err), err
    assert not (tmp_path / "home").exists()  # nothing read or written

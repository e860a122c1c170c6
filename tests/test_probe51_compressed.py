"""Codex's compressed rollouts (probe ZS, round 51). Codex CLI 0.137+ (``codex-rs/rollout/src/compression.rs``, with
``local_thread_store_compression`` on) rewrites every rollout idle for seven days as ``rollout-*.jsonl.zst``, and
writes one out plain again (then removes the ``.zst``) to append to it. ``trajsearch ingest ~/.codex/sessions``
passed over every such file as "compressed file(s) trajsearch does not read": all of a user's sessions older than a
week were lost. zstd is now read wherever gzip is, told by its magic bytes.

The fixtures (``codex-cli/.real/probe-zs/``) are a rollout compressed by Codex 0.171.0's own worker and the same
rollout after Codex materialized it to append a turn; their origin is in that folder's ``SOURCE.md``. The files of
several frames are built here as the zstd format chains them (a frame compressed at Codex's level 3, another
appended), from the real rollout of ``codex-cli/``."""

from __future__ import annotations

import gzip
import json
import logging
import re
import shutil
import struct
import subprocess
import sys
from pathlib import Path

import pytest

try:
    from compression import zstd  # Python 3.14+
except ImportError:
    from backports import zstd

from trajsearch.ingest import sources
from trajsearch.ingest.detect import SideFile
from trajsearch.ingest.read import detect_format, read_dump

from cli_support import backend, run_cli  # noqa: F401 - the fixture
from process_support import cli_env

FIXTURES = Path(__file__).parent / "fixtures"
PROBE = FIXTURES / "codex-cli" / ".real" / "probe-zs"
NAME = "rollout-2026-12-05T15-14-03-01a246c4-f73a-7321-87da-101aa0aa661b.jsonl"
#: Compressed by Codex's worker (one frame): the first turn, whose shell call fails.
COMPRESSED = PROBE / "compressed" / f"{NAME}.zst"
#: The same rollout materialized by Codex to append a second turn.
MATERIALIZED = PROBE / "materialized" / NAME
THREAD = "codex.01a246c4-f73a-7321-87da-101aa0aa661b"
#: A real rollout of codex 0.58 (55 lines), compressed here in two frames.
ROLLOUT = FIXTURES / "codex-cli" / "rollout-2025-11-17T15-30-28-019a93b9-f380-7600-98ff-940e6b99603c.jsonl"
REVERT = FIXTURES / "codex-cli" / ".real" / "probe-c46-revert"
REVERT_BASE = "rollout-2026-12-04T23-59-42-01a2437f-dcde-73a3-b299-e7a643aa2e2a.jsonl"
REVERT_AFTER = ("rollout-2026-12-04T23-59-43-01a2437f-dcde-73a3-b299-e7a643aa2e2a_"
                "01a2437f-e0a4-77c3-bea3-f5b9d18ce63c.jsonl")


def frames(text: bytes, cut: int) -> bytes:
    """``text`` as two zstd frames one after another (up to line ``cut``, then the rest), at Codex's level 3."""
    lines = text.splitlines(keepends=True)
    return zstd.compress(b"".join(lines[:cut]), level=3) + zstd.compress(b"".join(lines[cut:]), level=3)


def day_folder(root: Path, name: str) -> Path:
    """Codex's ``sessions/YYYY/MM/DD`` folder for a rollout's name, made under ``root``."""
    date = name.removeprefix("rollout-")[:10].split("-")
    folder = root.joinpath("sessions", *date)
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def same_run(a, b) -> bool:
    """Whether two reads of a run read the same run (its file's name and time aside)."""
    fields = ("trajectory_id", "task", "outcome", "failure", "model_id")
    return [getattr(a, f) for f in fields] == [getattr(b, f) for f in fields] \
        and a.metadata.get("user_prompts") == b.metadata.get("user_prompts") \
        and [s.model_dump() for s in a.steps] == [s.model_dump() for s in b.steps]


def test_a_rollout_codex_compressed_is_ingested_from_its_sessions_tree(backend, tmp_path: Path) -> None:
    """The defect as a user met it: ``trajsearch ingest ~/.codex/sessions`` said "passed over 1 archive(s) /
    compressed file(s) trajsearch does not read: …jsonl.zst (zstd)" and ingested nothing of that session. It is read,
    as the same run as the plain rollout, in ``sessions/`` and in ``archived_sessions/`` (the worker's first
    folder), whichever the backend."""
    home = tmp_path / "user" / ".codex"
    shutil.copy(COMPRESSED, day_folder(home, NAME))
    (home / "archived_sessions").mkdir()
    revert = REVERT / REVERT_BASE
    (home / "archived_sessions" / f"{REVERT_BASE}.zst").write_bytes(zstd.compress(revert.read_bytes(), level=3))
    code, out, err = run_cli("ingest", str(tmp_path / "user"))
    assert code == 0, err
    assert "does not read" not in err and "read 2: ingested 2 runs" in out + err
    code, out, err = run_cli("show", THREAD)
    assert code == 0, err
    assert "task: SHELL list the missing directory" in out and "ls /nonexistent-dir" in out

    plain = tmp_path / "plain" / NAME
    plain.parent.mkdir()
    plain.write_bytes(zstd.decompress(COMPRESSED.read_bytes()))
    [from_zst] = [p.trajectory for p in read_dump(day_folder(home, NAME), tenant="acme")]
    [from_plain] = [p.trajectory for p in read_dump(plain, tenant="acme")]
    assert from_zst.trajectory_id == THREAD and same_run(from_zst, from_plain)


def test_a_rollout_of_several_zstd_frames_reads_every_record(tmp_path: Path) -> None:
    """A zstd file may hold several frames one after another (a frame appended to a compressed file, ``cat a.zst
    b.zst``): every line of every frame is read, the run the same as the plain rollout's; a resumed read (an
    ingest's checkpoint) goes on after its cursor. ``pzstd`` opens its files with a skippable frame: read too."""
    text = ROLLOUT.read_bytes()
    zst = day_folder(tmp_path, ROLLOUT.name) / f"{ROLLOUT.name}.zst"
    zst.write_bytes(frames(text, 20))
    assert zst.read_bytes().count(sources.MAGIC["zstd"]) >= 2
    read = list(sources.lines(zst))
    assert [r[2] for r in read] == [None] * 55
    assert [r[1] for r in read] == [r[1] for r in sources.lines(ROLLOUT)]
    assert detect_format(zst) == "codex-cli"
    [from_zst] = [p.trajectory for p in read_dump(tmp_path / "sessions", tenant="acme")]
    [from_plain] = [p.trajectory for p in read_dump(ROLLOUT, tenant="acme")]
    assert same_run(from_zst, from_plain)
    resumed = list(sources.lines(zst, read[29][3]))
    assert [r[1] for r in resumed] == [r[1] for r in read[30:]]

    frame = zstd.compress(text, level=3)  # pzstd's layout: each frame after a skippable one
    pzstd = tmp_path / f"{ROLLOUT.name}.zst"  # (magic 0x184D2A50, 4 bytes: the frame's size) that says its size
    pzstd.write_bytes(struct.pack("<III", 0x184D2A50, 4, len(frame)) + frame)
    assert detect_format(pzstd) == "codex-cli" and [r[1] for r in sources.lines(pzstd)] == [r[1] for r in read]


def test_a_rollout_both_plain_and_compressed_is_read_once_from_the_plain_file(backend, tmp_path: Path,
                                                                            caplog) -> None:
    """While Codex materializes a compressed rollout to append to it, both ``X.jsonl`` and ``X.jsonl.zst`` lie in
    the day folder (and in any copy taken then). The plain file, the newer, is the run (with the turn appended);
    the ``.zst`` is not read as a second file of it, nor named as a file to unpack to read its runs (which would
    then be read twice), only noted as the copy of the file read."""
    day = day_folder(tmp_path, NAME)
    shutil.copy(COMPRESSED, day)
    shutil.copy(MATERIALIZED, day)
    caplog.set_level(logging.INFO, logger="trajsearch")
    [run] = [p.trajectory for p in read_dump(tmp_path / "sessions", tenant="acme")]
    assert run.trajectory_id == THREAD and run.metadata["user_prompts"] == ["REFUSE something else"]
    notes = [r.getMessage() for r in caplog.records]
    assert not [n for n in notes if "does not read" in n]
    assert [n for n in notes if n.startswith("passed over 1 compressed copy of the start of the file beside it, "
                                             "which is read: ")
            and n.endswith(f"{NAME}.zst")]
    code, out, err = run_cli("ingest", str(tmp_path / "sessions"))
    assert code == 0, err
    assert "read 1: ingested 1 runs" in out + err and "does not read" not in err


def test_a_truncated_zstd_rollout_keeps_the_lines_before_the_cut_and_says_so(tmp_path: Path) -> None:
    """A ``.zst`` cut short (a copy interrupted, a disk full) ended without a word in zstandard's stream reader: the
    lines after the cut were lost in silence, or the whole file read as empty. The lines of the frames before the
    cut are read, then one error naming zstd, as a cut gzip's; a file of one frame cut (what Codex writes) holds no
    whole block, and says so rather than "empty"."""
    data = frames(ROLLOUT.read_bytes(), 20)
    cut = tmp_path / f"{ROLLOUT.name}.zst"
    cut.write_bytes(data[:-40])
    read = list(sources.lines(cut))
    assert [r[2] for r in read[:-1]] == [None] * 20
    assert read[-1][2].startswith("truncated or corrupt zstd stream after line 20: ")

    one_frame = tmp_path / f"{NAME}.zst"
    one_frame.write_bytes(COMPRESSED.read_bytes()[:-100])
    with pytest.raises(ValueError, match=r"truncated or corrupt zstd: Compressed file ended before the end-of-stream marker"):
        detect_format(one_frame)
    [(position, _, error, _)] = list(sources.lines(one_frame))
    assert position == "line 1" and error.startswith("truncated or corrupt zstd stream after line 0")


def test_a_revert_goes_on_from_a_compressed_rollout_of_its_thread(tmp_path: Path) -> None:
    """A thread reverted (``thread/revert``) goes on in a rollout of its own, whose history is the earlier rollout
    found beside it by its name. A week later Codex compresses the earlier one (or both): the lookup by
    ``rollout-*.jsonl`` found nothing, and the thread's run lost its first turn (or the earlier rollout, the later
    one unseen, was read as a run of its own)."""
    for compressed in (REVERT_BASE, REVERT_AFTER):
        root = tmp_path / compressed[:30]
        for name in (REVERT_BASE, REVERT_AFTER):
            target = day_folder(root, name) / (f"{name}.zst" if name == compressed else name)
            target.write_bytes(zstd.compress((REVERT / name).read_bytes(), level=3) if name == compressed
                               else (REVERT / name).read_bytes())
        [run] = [p.trajectory for p in read_dump(root / "sessions", tenant="acme")]
        assert run.trajectory_id == "codex.01a2437f-dcde-73a3-b299-e7a643aa2e2a"
        assert run.metadata["reverted_prompts"] == ["TURN2: replace one.txt by two.txt"]
        base = next(day_folder(root, REVERT_BASE).glob("rollout-*"))
        with pytest.raises(SideFile, match=r"before a revert"):
            detect_format(base)


def test_other_formats_read_zstd_under_the_same_run_ids(tmp_path: Path) -> None:
    """The rule is zstd's, not Codex's: a mini-swe-agent run saved as ``.traj.json.zst`` (``zstd -r`` over an
    output folder) is read, its run id built from its name without ``.zst`` as from a ``.gz``'s without ``.gz``;
    what zstd holds is told by its bytes (a zstd-compressed tar is named as one, with how to unpack it)."""
    instance = "marshmallow-code__marshmallow-1343"
    source = FIXTURES / "mini-swe-agent" / "deepseek_chat_dev" / instance / f"{instance}.traj.json"
    folder = tmp_path / "deepseek_chat_dev" / instance
    folder.mkdir(parents=True)
    (folder / f"{source.name}.zst").write_bytes(zstd.compress(source.read_bytes(), level=19))
    [from_zst] = [p.trajectory for p in read_dump(tmp_path / "deepseek_chat_dev", tenant="acme")]
    [from_plain] = [p.trajectory for p in read_dump(source, tenant="acme")]
    assert from_zst.trajectory_id == from_plain.trajectory_id == (
        "deepseek-chat.marshmallow-code__marshmallow-1343.dad46cc6e1")
    assert same_run(from_zst, from_plain)

    import io
    import tarfile

    packed = io.BytesIO()
    with tarfile.open(fileobj=packed, mode="w") as tar:
        tar.add(source, arcname=source.name)
    archive = tmp_path / "runs.jsonl.zst"  # named as a dump: its bytes say otherwise
    archive.write_bytes(zstd.compress(packed.getvalue()))
    with pytest.raises(ValueError, match=r"a zstd-compressed tar archive \(unpack it first: tar --zstd -xf\)"):
        detect_format(archive)


def test_an_openhands_run_set_kept_zstd_compressed_reads_as_the_plain_one(tmp_path: Path) -> None:
    """Where a gzipped run set was read as the plain one (``output.critic_attempt_<N>.jsonl.gz`` beside
    ``output.jsonl.gz``), a ``zstd -r`` one was not seen as one: its files found by names ending ``.jsonl`` or
    ``.jsonl.gz`` only, every attempt had the run id and none was handed in."""
    from test_probe47_benchmarks import _iterative_run_set

    plain, packed = tmp_path / "plain", tmp_path / "packed"
    _iterative_run_set(plain)
    packed.mkdir()
    for file in plain.iterdir():
        (packed / f"{file.name}.zst").write_bytes(zstd.compress(file.read_bytes(), level=3))
    runs = {folder: sorted((sources.plain_name(Path(r.source).name), r.trajectory.trajectory_id,
                            r.trajectory.outcome, r.trajectory.metadata["handed_in"]) for r in read_dump(folder))
            for folder in (plain, packed)}
    assert runs[packed] == runs[plain]


# Round 51, FRZS: the review of the zstd reading (RZS). The files it built are in /tmp/p51/RZS; those the tests need
# are built here, as their writers write them (tau-bench's run.py: ``json.dump(results, f, indent=2)``; ``gzip -k``
# and ``zstd`` of a file; Codex's worker: one zstd frame at level 3).

TAU = FIXTURES / "tau-bench" / ".real" / "tool-calling-grok-3-0.0_range_0--1_user-grok-3-llm_0921131646.json"


def _tau_results(records: list) -> bytes:
    """A tau-bench results file of ``records``, as its ``run.py`` writes one."""
    return json.dumps(records, indent=2).encode()


@pytest.mark.parametrize("compress", [gzip.compress, zstd.compress], ids=["gz", "zst"])
def test_a_compressed_file_of_other_runs_beside_the_plain_one_is_read(backend, tmp_path: Path, compress) -> None:
    """``results.json.gz`` beside ``results.json`` was passed over as a compressed copy of it, whatever it held: a
    backup of an earlier run's results (other tasks), gzipped before the run that wrote ``results.json``, lost
    its runs with exit 0 and not a word (a note at INFO, which the CLI shows nowhere). Only a copy of the plain
    file's start is passed over; this one holds other runs, and is read."""
    records = json.loads(TAU.read_text())
    folder = tmp_path / "tau"
    folder.mkdir()
    (folder / "results.json").write_bytes(_tau_results(records[:2]))
    backup = folder / f"results.json{'.gz' if compress is gzip.compress else '.zst'}"
    backup.write_bytes(compress(_tau_results(records[2:])))
    code, out, err = run_cli("ingest", str(folder), "--dry-run")
    assert code == 0, err
    assert f"{backup}: format tau-bench; runs 1;" in " ".join(out.split()) and "passed over" not in err
    code, out, err = run_cli("ingest", str(folder))
    assert code == 0, err
    assert "read 3: ingested 3 runs" in out + err and "passed over" not in err


def test_a_compressed_copy_of_the_plain_file_is_passed_over_and_said_so(tmp_path: Path) -> None:
    """A compressed copy of the file beside it (``gzip -k results.json``; Codex's ``.zst`` of a rollout it wrote
    out plain again to append to it: the ``.zst``'s text is the plain file's start) is passed over, its runs read
    once from the plain file; the ingest and its dry run say so on stderr, as of every file passed over (the CLI
    run as a user runs it: its warnings are Python's last-resort stderr lines, which pytest's capture takes)."""
    folder = tmp_path / "runs"
    folder.mkdir()
    shutil.copy(TAU, folder / "results.json")
    (folder / "results.json.gz").write_bytes(gzip.compress(TAU.read_bytes()))
    day = day_folder(folder, NAME)
    shutil.copy(COMPRESSED, day)
    shutil.copy(MATERIALIZED, day)
    said = (f"passed over 2 compressed copies of the start of the file beside it, which is read: results.json.gz, "
            f"sessions/2026/12/05/{NAME}.zst")
    env = cli_env(TRAJSEARCH_HOME=str(tmp_path / "home"), TRAJSEARCH_TENANT="acme")
    for dry in (["--dry-run"], []):
        done = subprocess.run([sys.executable, "-m", "trajsearch.cli", "ingest", str(folder), *dry], env=env,
                              capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, done.stderr
        assert said in " ".join(done.stderr.split())
        assert "results.json.gz:" not in done.stdout and ".jsonl.zst:" not in done.stdout  # (the dry run's listing)
    assert "read 4: ingested 4 runs" in done.stdout + done.stderr


ZSTD_CLI = FIXTURES / "zstd" / ".real"

#: A child reading the file named: its growth of peak resident memory (every allocation, the decoder's own too)
#: over its peak once imported, in MB, after the peek that detection makes and a read of the text's first 64 MB.
_MEMORY_OF_A_READ = """
import resource, sys
from pathlib import Path
from trajsearch.ingest import sources
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
head = sources.peek(Path(sys.argv[1]))
with sources.open_dump(Path(sys.argv[1])) as text:
    read = sum(len(text.read(1 << 20)) for _ in range(64))
grown = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) // 1024
print(len(head), read, grown)
"""


def test_a_zstd_file_is_decoded_in_memory_bounded_by_the_read() -> None:
    """A zstd file was decoded 32 KB of the file at a time, all of a chunk's text at once: 32 KB of a 67 KB file
    holding 2 GB of zeros (what ``zstd`` writes of ``/dev/zero``) became about 1 GB held, for a peek of 64 KB; its
    dry run took 2.2 GB. What a read takes now grows with what it reads (``backports.zstd``'s ``ZstdFile``), not
    with how well the file compressed."""
    done = subprocess.run([sys.executable, "-c", _MEMORY_OF_A_READ, str(ZSTD_CLI / "zeros-2GiB.zst")],
                          env=cli_env(), capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    peeked, read, grown = map(int, done.stdout.split())
    assert (peeked, read) == (sources.PEEK_BYTES, 64 << 20)
    assert grown < 100, f"peak resident memory grew by {grown} MB"


def test_a_zstd_file_written_with_a_long_window_is_told_with_the_command_that_reads_it(tmp_path: Path) -> None:
    """``zstd --long=31`` (a window of 2 GB, for big files of far repeats) writes a sound file that a decoder reads
    only when allowed that much memory; it was called "truncated or corrupt zstd", which sent the user looking for
    damage. It is said what it is, and how to read it (``zstd -d`` itself needs ``--long=31``)."""
    long = ZSTD_CLI / f"{ROLLOUT.name}.zst"
    told = (r"zstd written with a window over 128 MB \(zstd --long=28 or more\), more memory than trajsearch gives a "
            rf"file: decompress it first \(zstd -d --long=31 {re.escape(long.name)}\) and ingest that")
    with pytest.raises(ValueError, match=told):
        detect_format(long)
    [(position, _, error, _)] = list(sources.lines(long))
    assert position == "line 1" and re.fullmatch(told, error)
    assert "corrupt" not in error


def test_an_outcome_file_compressed_and_cut_short_is_an_error_saying_so(tmp_path: Path) -> None:
    """``--outcomes results.json.gz`` cut short (a copy interrupted) ended the ingest with Click's bare "Aborted."
    (its EOFError taken for a Ctrl-D), exit 1; a zstd one, once its decoder's faults were no longer OSErrors, with
    "ZstdError: …" as an unexpected error. Each is a usage error naming the file and its fault, exit 2."""
    run = FIXTURES / "mini-swe-agent" / ".real" / "swebench-gemini-3-pro"
    summary = (run / "results_summary.json").read_bytes()
    cut_gz, cut_zst, damaged = tmp_path / "cut.json.gz", tmp_path / "cut.json.zst", tmp_path / "damaged.json.zst"
    cut_gz.write_bytes(gzip.compress(summary)[:-20])
    cut_zst.write_bytes(zstd.compress(summary)[:-20])
    damaged.write_bytes(zstd.compress(summary) + b"\n")  # a newline added by an editor or a transfer in text mode
    for outcomes, fault in ((cut_gz, "truncated or corrupt gzip: Compressed file ended before"),
                            (cut_zst, "truncated or corrupt zstd: Compressed file ended before"),
                            (damaged, "truncated or corrupt zstd: Unable to decompress Zstandard data")):
        code, out, err = run_cli("ingest", str(run / "trajs"), "--dry-run", "--outcomes", str(outcomes))
        assert code == 2 and f"{outcomes}:{fault}".replace(" ", "") in "".join(err.split()), (code, out, err)

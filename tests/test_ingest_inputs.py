"""Inputs the ingest must survive, through the CLI on real Milvus Lite (hashing test embedder): files that
hold no run, unreadable files named on the command line, and the reports each gets."""

from __future__ import annotations

import gzip
import json
import os
import shutil
from pathlib import Path

import pytest

from cli_support import backend, run_cli  # noqa: F401 (fixture)

FIXTURES = Path(__file__).parent / "fixtures"
TAU = FIXTURES / "tau-bench" / "gpt-4o-airline-mini.json"
SWE_TRAJ = FIXTURES / "swe-agent" / "default__gpt-4o" / "astropy__astropy-12907.traj"  # a real SWE-agent run
RUN_ID = "tau-airline-0-t0"  # the first tau-bench run of the fixture, read from airline.jsonl


def no_format(path: Path) -> Path:
    """A JSONL file of no format trajsearch reads: a rejected input (a tau-bench few-shot file, once used here, is
    now a side file that a folder walk passes over)."""
    path.write_text(json.dumps({"note": "a line of no dump format"}) + "\n")
    return path


def summary(stdout: str) -> dict:
    return json.loads(stdout)


def test_every_shard_completes_when_a_file_holds_no_run(tmp_path: Path, home: Path) -> None:
    dumps = tmp_path / "tau"
    dumps.mkdir()
    shutil.copy(TAU, dumps / "gpt-4o-airline.json")
    no_format(dumps / "notes.jsonl")
    results = []
    for i in range(2):
        code, stdout, stderr = run_cli("ingest", str(dumps), "-t", "w", "--shard", f"{i}/2", "--json")
        assert code == (3 if summary(stdout)["rejected"] else 0), stdout + stderr  # 3: the shard had a rejection
        results.append(summary(stdout))
    assert sum(r["rejected"] for r in results) == 1  # the unread file, by the one shard that owns it
    assert sum(r["ingested"] for r in results) == len(json.loads(TAU.read_text()))


def test_an_unreadable_file_named_among_others_is_one_rejection_and_the_rest_lands(tmp_path: Path,
                                                                                  home: Path) -> None:
    empty = tmp_path / "empty.jsonl"
    empty.write_text("")
    binary = tmp_path / "ls.json"  # a real ELF executable's head
    binary.write_bytes(Path(shutil.which("ls") or "/bin/ls").read_bytes()[:5000])
    code, stdout, stderr = run_cli("ingest", str(empty), str(TAU), str(binary), "-t", "acme", "--json")
    assert code == 3, stdout + stderr  # some inputs rejected, the rest landed
    report = summary(stdout)
    assert report["ingested"] == len(json.loads(TAU.read_text())) and report["rejected"] == 2
    assert report["read"] == report["ingested"] + report["unchanged"] + report["rejected"]
    assert {Path(r["source"]).name for r in report["rejections"]} == {"empty.jsonl", "ls.json"}


def test_empty_binary_and_cut_gzip_files_are_told_apart(tmp_path: Path, home: Path) -> None:
    dumps = tmp_path / "edge"
    dumps.mkdir()
    (dumps / "empty.jsonl").write_text("")
    (dumps / "blank.jsonl").write_text("\n  \n")
    (dumps / "empty.traj.json").write_text("")  # a name some format reads: it read as that format's 0 runs (probe E)
    (dumps / "ls.json").write_bytes(Path(shutil.which("ls") or "/bin/ls").read_bytes()[:5000])
    (dumps / "cut.jsonl.gz").write_bytes(gzip.compress(TAU.read_bytes())[:300])
    traj = SWE_TRAJ.read_text()
    (dumps / "cut.traj").write_text(traj[:traj.index('"', len(traj) // 2) + 10])  # cut inside a string
    code, stdout, stderr = run_cli("ingest", str(dumps), "-t", "acme", "--json")
    assert code == 4, stdout + stderr  # every input rejected: nothing landed
    reasons = {Path(r["source"]).name: r["reason"].split(": ", 1)[1] for r in summary(stdout)["rejections"]}
    assert reasons == {
        "empty.jsonl": "empty file (0 bytes): no run to read",
        "blank.jsonl": "empty file (whitespace only): no run to read",
        "empty.traj.json": "empty file (0 bytes): no run to read",
        "ls.json": "binary, not text (not UTF-8); trajsearch reads JSON, JSON lines and their gzip or zstd, and .eval archives (inspect-ai)",
        "cut.jsonl.gz": "truncated or corrupt gzip: Compressed file ended before the end-of-stream marker was reached",
        "cut.traj": "Unterminated string starting at: line 40 column 7",  # once "starting at at line" (probe E)
    }


MSWEA = Path("/work/shared/data/mini-swe-agent-dev/deepseek_chat_dev")
MSWEA_RUNS = ("sqlfluff__sqlfluff-2419", "pylint-dev__astroid-1978")


@pytest.fixture
def mswea_runs(tmp_path: Path) -> Path:
    """Two real mini-swe-agent runs, each in its instance's folder."""
    if not MSWEA.exists():
        pytest.skip("the shared mini-swe-agent data is not on this machine")
    runs = tmp_path / "runs"
    for name in MSWEA_RUNS:
        shutil.copytree(MSWEA / name, runs / name)
    return runs


def test_an_invalid_verdict_is_named_not_dropped(tmp_path: Path, home: Path, mswea_runs: Path) -> None:
    outcomes = tmp_path / "outcomes.json"
    outcomes.write_text(json.dumps({MSWEA_RUNS[0]: "failure", MSWEA_RUNS[1]: "bogus"}))
    code, stdout, stderr = run_cli("ingest", str(mswea_runs), "-t", "r", "--outcomes", str(outcomes), "--quiet")
    assert code == 0, stdout + stderr
    said = "".join(stderr.split())
    assert ("outcomesfileoutcomes.json:1verdict(s)leftout" in said
            and f"'{MSWEA_RUNS[1]}':unknownoutcome'bogus'" in said)
    code, stdout, stderr = run_cli("ingest", str(mswea_runs), "-t", "r", "--outcomes", str(outcomes), "--json",
                                   "--restart")
    assert summary(stdout)["outcomes"]["invalid"] == 1

    only_invalid = tmp_path / "only-invalid.json"
    only_invalid.write_text(json.dumps({MSWEA_RUNS[1]: "bogus"}))
    code, stdout, stderr = run_cli("ingest", str(mswea_runs), "-t", "r", "--outcomes", str(only_invalid))
    said = "".join(stderr.split())  # wrapped at the terminal's width
    assert code == 2 and "only-invalid.json:novalidrunoutcome:1verdict(s)notunderstood" in said
    assert f"'{MSWEA_RUNS[1]}':unknownoutcome'bogus'" in said


def test_rejections_name_where_they_all_are_on_both_backends(backend, tmp_path: Path) -> None:
    dump = tmp_path / "mixed.jsonl"
    shutil.copy(FIXTURES / "native" / "mixed.jsonl", dump)
    code, stdout, stderr = run_cli("ingest", str(dump))
    assert code == 3 and "rejected" in stderr, stdout + stderr
    assert "None" not in stderr
    if backend == "embedded":
        assert "all rejections: " in stderr and Path("".join(stderr.split("all rejections: ")[1].split())).exists()


def test_appending_to_or_touching_a_dump_leaves_its_earlier_runs_unchanged(tmp_path: Path, home: Path) -> None:
    """tau-bench runs carry no time: each is dated by its file's mtime, which an append or a touch moves."""
    first, second = json.loads(TAU.read_text())[:2]
    dump = tmp_path / "airline.jsonl"
    dump.write_text(json.dumps(first) + "\n")
    os.utime(dump, (1_700_000_000, 1_700_000_000))
    code, stdout, stderr = run_cli("ingest", str(dump), "-t", "acme", "--json")
    assert code == 0 and summary(stdout)["ingested"] == 1, stdout + stderr
    with dump.open("a") as f:
        f.write(json.dumps(second) + "\n")
    os.utime(dump, (1_800_000_000, 1_800_000_000))
    code, stdout, stderr = run_cli("ingest", str(dump), "-t", "acme", "--json")
    report = summary(stdout)
    assert (report["ingested"], report["unchanged"]) == (1, 1), stdout + stderr
    os.utime(dump, (1_900_000_000, 1_900_000_000))  # a plain touch
    code, stdout, stderr = run_cli("ingest", str(dump), "-t", "acme", "--json")
    report = summary(stdout)
    assert (report["ingested"], report["unchanged"]) == (0, 2), stdout + stderr
    code, stdout, stderr = run_cli("show", RUN_ID, "-t", "acme", "--json")
    assert json.loads(stdout)["created_at"].startswith("2023-11-14T22:13:20"), stdout + stderr  # the first mtime


def test_one_run_in_two_files_of_different_mtimes_is_stored_once(tmp_path: Path, home: Path) -> None:
    """A native run with no time of its own (dated by its file's mtime) copied into a second file: the same
    run, not a second one renamed ``<id>+<digest>``, however the two files' mtimes differ or move."""
    record = {"trajectory_id": "run-0001", "task": "Fix the flaky retry test in the HTTP client", "outcome": "success",
              "steps": [{"index": 0, "action": "bash", "arguments": {"command": "pytest tests/test_retry.py -q"},
                         "observation": "1 passed in 0.4s"}]}
    dumps = tmp_path / "dumps"
    dumps.mkdir()
    for name, when in (("a.jsonl", 1_700_000_000), ("b.jsonl", 1_750_000_000)):
        (dumps / name).write_text(json.dumps(record) + "\n")
        os.utime(dumps / name, (when, when))
    code, stdout, stderr = run_cli("ingest", str(dumps), "-t", "acme", "--json")
    assert code == 0 and summary(stdout)["ingested"] == 1, stdout + stderr
    os.utime(dumps / "b.jsonl", (1_800_000_000, 1_800_000_000))
    code, stdout, stderr = run_cli("ingest", str(dumps), "-t", "acme", "--json")
    assert code == 0 and summary(stdout)["ingested"] == 0, stdout + stderr
    code, stdout, stderr = run_cli("stats", "-t", "acme", "--json")
    assert json.loads(stdout)["trajectories"] == 1, stdout + stderr


def big_output(lines: int = 40_000) -> str:
    """A 1.2 MB tool output of numbered lines: over the 1,000,000-character limit of a step's text."""
    return "\n".join(f"bigline {n} " + "x" * 20 for n in range(lines))


def test_an_output_over_the_limit_is_clipped_and_said_not_the_run_rejected(tmp_path: Path, home: Path,
                                                                         mswea_runs: Path) -> None:
    native = json.loads((FIXTURES / "native" / "mixed.jsonl").read_text().splitlines()[0])
    native["steps"][0]["observation"] = big_output()
    (tmp_path / "native").mkdir()
    (tmp_path / "native" / "big.jsonl").write_text(json.dumps(native) + "\n")
    traj = mswea_runs / MSWEA_RUNS[0] / f"{MSWEA_RUNS[0]}.traj.json"
    run = json.loads(traj.read_text())
    tool = next(m for m in run["messages"] if m["role"] == "tool")
    tool["content"] = f"<returncode>0</returncode>\n<output>\n{big_output()}\n</output>"
    traj.write_text(json.dumps(run))

    code, stdout, stderr = run_cli("ingest", str(tmp_path / "native" / "big.jsonl"), str(traj), "-t", "acme")
    assert code == 0 and "ingested 2 runs" in stdout and "rejected 0" in stdout, stdout + stderr
    said = " ".join(stderr.split())
    assert "2 run(s) had a field over its limit (1,000,000 characters for a step's thought, output or error" in said
    assert f"{native['trajectory_id']}: steps[0].observation: " in said

    code, stdout, stderr = run_cli("show", native["trajectory_id"], "-t", "acme", "--json", "--steps", "0:0")
    observation = json.loads(stdout)["steps"][0]["observation"]
    assert len(observation) <= 1_000_000 and "characters clipped ...]" in observation
    assert observation.startswith("bigline 0 ") and observation.endswith("bigline 39999 " + "x" * 20)

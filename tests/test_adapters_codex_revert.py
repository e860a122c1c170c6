"""Codex threads reverted (probe C, round p46, C1): ``thread/revert`` (Codex 0.171 app-server, the IDE's and Desktop's
undo of turns) keeps the thread's id and goes on in a rollout of its own, ``<thread>_<rollout>.jsonl``, whose
``session_meta.history_base`` names how much of the earlier rollout the thread keeps. The fixtures
(``codex-cli/.real/probe-c46-revert/``) are the two real rollouts of one reverted thread; their origin is in that
folder's ``SOURCE.md``."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from trajsearch.ingest.detect import SideFile
from trajsearch.ingest.read import detect_format, read_dump

from cli_support import backend, run_cli  # noqa: F401 - the fixture

REVERT = Path(__file__).parent / "fixtures" / "codex-cli" / ".real" / "probe-c46-revert"
#: The thread's rollout: TURN1, then TURN2 (reverted later).
BASE = REVERT / "rollout-2026-12-04T23-59-42-01a2437f-dcde-73a3-b299-e7a643aa2e2a.jsonl"
#: The rollout ``thread/revert`` started: TURN1 kept (``history_base``), then TURN3.
AFTER_REVERT = REVERT / ("rollout-2026-12-04T23-59-43-01a2437f-dcde-73a3-b299-e7a643aa2e2a_"
                         "01a2437f-e0a4-77c3-bea3-f5b9d18ce63c.jsonl")
#: A second revert, built from AFTER_REVERT (see that folder's SOURCE.md): goes on from it, then TURN4.
SECOND_REVERT = Path(__file__).parent / "fixtures" / "codex-cli" / ".derived" / "revert-chain" / (
    "rollout-2026-12-04T23-59-50-01a2437f-dcde-73a3-b299-e7a643aa2e2a_01a2437f-ffff-77c3-bea3-f5b9d18ce63c.jsonl")
THREAD = "codex.01a2437f-dcde-73a3-b299-e7a643aa2e2a"
SEGMENT = f"{THREAD}@01a2437f-e0a4-77c3-bea3-f5b9d18ce63c"  # AFTER_REVERT read without its history
COMMANDS = ["echo one > one.txt", "echo three > three.txt"]  # TURN2's ``rm -f one.txt && …`` reverted


def commands(run) -> list[str]:
    return [s.arguments["cmd"] for s in run.steps if s.action == "exec_command"]


def test_a_reverted_thread_is_one_run_without_the_turns_reverted(tmp_path: Path) -> None:
    """The folder gave two runs: the thread's id with TURN1 and the reverted TURN2 (its failed command and its answer
    as steps), and the same id renamed ``+<hash>`` (an id that depended on the order the files were met) with TURN3
    and no link to the thread. It is one run, as Codex shows the thread (the reverted turn is hidden from the thread
    and from the model): TURN1 then TURN3, the reverted prompt in metadata; the earlier rollout is passed over,
    saying which rollout goes on from it. The same in Codex's ``sessions/YYYY/MM/DD`` tree, the revert written on a
    later day: the day folder read alone joins the rollout of the day before."""
    [run] = [p.trajectory for p in read_dump(REVERT, tenant="acme")]
    assert run.trajectory_id == THREAD and run.task == "TURN1: write one.txt"
    assert commands(run) == COMMANDS
    assert [s.arguments["content"] for s in run.steps if s.action == "respond"] == ["TURN1 done.", "TURN3 done."]
    assert run.metadata["user_prompts"] == ["TURN3: write three.txt instead"]
    assert run.metadata["reverted_prompts"] == ["TURN2: replace one.txt by two.txt"]
    with pytest.raises(SideFile, match=r"before a revert \(thread/revert\), which its rollout "
                                       + AFTER_REVERT.name.replace(".", r"\.")):
        detect_format(BASE)

    (tmp_path / "sessions/2026/12/03").mkdir(parents=True)
    (tmp_path / "sessions/2026/12/05").mkdir(parents=True)
    shutil.copy(BASE, tmp_path / "sessions/2026/12/03")
    shutil.copy(AFTER_REVERT, tmp_path / "sessions/2026/12/05")
    for named in (tmp_path / "sessions", tmp_path / "sessions/2026/12/05"):
        [run] = [p.trajectory for p in read_dump(named, tenant="acme")]
        assert (run.trajectory_id, commands(run)) == (THREAD, COMMANDS)


def test_the_rollout_after_a_revert_read_without_its_history_is_a_run_of_its_own(tmp_path: Path) -> None:
    """The rollout a revert started, read where the thread's earlier rollout is not, was the thread's run
    (``codex.<thread>``), with TURN3 alone: ingested after the thread, it replaced the thread's run, TURN1 lost
    without a word. Its lines alone are a run of their own, naming the rollout they go on from."""
    shutil.copy(AFTER_REVERT, tmp_path)
    [run] = [p.trajectory for p in read_dump(tmp_path / AFTER_REVERT.name, tenant="acme")]
    assert run.trajectory_id == f"{THREAD}@01a2437f-e0a4-77c3-bea3-f5b9d18ce63c"
    assert run.task == "TURN3: write three.txt instead" and commands(run) == ["echo three > three.txt"]
    assert run.metadata["history_base"] == {"thread_id": "01a2437f-dcde-73a3-b299-e7a643aa2e2a",
                                            "end_ordinal_exclusive": 19}
    assert "not found beside it" in run.metadata["history_missing"]


def test_ingesting_the_rollout_after_a_revert_keeps_the_threads_history(backend, tmp_path: Path) -> None:
    """The probe's sequence: the thread's rollout ingested, then (a later ingest of the day's folder) the rollout
    its revert started. The second ingest replaced the thread's run with TURN3 alone. Now the thread's run is the
    thread as Codex shows it (TURN1, TURN3); and the rollout read away from the thread's leaves its run alone."""
    day = tmp_path / "sessions/2026/12/04"
    day.mkdir(parents=True)
    shutil.copy(BASE, day)
    assert run_cli("ingest", str(day), "-t", "acme")[0] == 0
    shutil.copy(AFTER_REVERT, day)
    code, out, err = run_cli("ingest", str(day / AFTER_REVERT.name), "-t", "acme")
    assert code == 0, out + err
    code, out, err = run_cli("show", THREAD, "-t", "acme", "--json")
    assert code == 0, out + err
    shown = json.loads(out)
    assert shown["task"] == "TURN1: write one.txt"
    assert [s["arguments"]["cmd"] for s in shown["steps"] if s["action"] == "exec_command"] == COMMANDS

    alone = tmp_path / "copied"
    alone.mkdir()
    shutil.copy(AFTER_REVERT, alone)
    assert run_cli("ingest", str(alone), "-t", "acme")[0] == 0
    code, out, _ = run_cli("show", THREAD, "-t", "acme", "--json")
    assert json.loads(out)["task"] == "TURN1: write one.txt"
    # the thread read again, unchanged, still retires the run the rollout gave alone (as a rerun after an
    # interruption between writing the thread's run and removing that one does)
    assert stored_runs() == [THREAD, SEGMENT]
    assert run_cli("ingest", str(day), "-t", "acme", *again(backend))[0] == 0
    assert stored_runs() == [THREAD]


def again(backend: str) -> list[str]:
    """The options that read an input again that an earlier ingest read (the server keeps no checkpoint)."""
    return ["--restart"] if backend == "embedded" else []


def stored_runs() -> list[str]:
    """The ids of the runs holding TURN3 (every run of these tests), checked against the tenant's run count."""
    code, out, err = run_cli("search", "TURN3 three", "-t", "acme", "--json")
    assert code == 0, out + err
    found = sorted({hit["trajectory_id"] for hit in json.loads(out)})
    code, out, err = run_cli("stats", "-t", "acme", "--json")
    assert code == 0 and json.loads(out)["trajectories"] == len(found), out + err
    return found


def test_the_rollout_after_a_revert_ingested_before_its_history_gives_way_to_the_threads_run(
        backend, tmp_path: Path) -> None:
    """Review 2, D2: the rollout a revert started, copied (or synced) before the rollout it goes on from and ingested
    alone, is ``codex.<thread>@<rollout>`` (TURN3 alone). Once the earlier rollout arrives, the thread's run is built
    with its history (TURN1, TURN3), and the ``@rollout`` run stayed too: TURN3 stored twice, the thread counted as
    two runs. The thread's run names it as superseded, and ingest removes it; ingesting again removes nothing."""
    day = tmp_path / "sessions/2026/12/04"
    day.mkdir(parents=True)
    shutil.copy(AFTER_REVERT, day)
    assert run_cli("ingest", str(day), "-t", "acme")[0] == 0
    assert stored_runs() == [SEGMENT]

    shutil.copy(BASE, day)
    code, out, err = run_cli("ingest", str(day), "-t", "acme", *again(backend))
    assert code == 0, out + err
    if backend == "embedded":  # the service's reply has no field for it (yet)
        assert "1 stored run(s) superseded" in out, out + err
    assert stored_runs() == [THREAD]
    code, out, err = run_cli("show", THREAD, "-t", "acme", "--json")
    assert [s["arguments"]["cmd"] for s in json.loads(out)["steps"] if s["action"] == "exec_command"] == COMMANDS

    code, out, err = run_cli("ingest", str(day), "-t", "acme", *again(backend), "--json")
    assert code == 0 and json.loads(out)["unchanged"] == 1, out + err
    assert json.loads(out).get("superseded", 0) == 0
    assert stored_runs() == [THREAD]


def test_the_rollout_before_two_reverts_names_the_last_one_as_the_threads_run(tmp_path: Path) -> None:
    """Review 2, D5: after two reverts, the thread's first rollout was passed over saying that the rollout of the
    first revert goes on from it and "is read as the thread's run", though that one is passed over too: the run is
    read from the rollout of the second revert, which the message now names."""
    for file in (BASE, AFTER_REVERT, SECOND_REVERT):
        shutil.copy(file, tmp_path)
    [run] = [p.trajectory for p in read_dump(tmp_path, tenant="acme")]
    assert run.trajectory_id == THREAD and run.metadata["user_prompts"][-1].startswith("TURN4")
    for earlier in (BASE, AFTER_REVERT):
        with pytest.raises(SideFile, match=r"which its rollout " + SECOND_REVERT.name.replace(".", r"\.")):
            detect_format(tmp_path / earlier.name)

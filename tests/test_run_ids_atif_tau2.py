"""One run, one id, for ATIF files outside a Harbor trial and tau2 runs of no known domain (round 28, IDS3).

An ATIF file outside a Harbor trial (atif-make's conversions, NeMo Relay's and OpenAgents' exports) was named
``atif.<session>.<grandparent>/<parent>/<file stem>``: the same file read from a renamed or moved folder became a
second run, and ``delete --from`` the moved dump found nothing. Its session and its first steps' saved marks name it
now, ``atif.<session>.<attempt>``, and its place's id is a former id, so a store written before moves its copy
(``ingest.read.same_run_anywhere``). A tau2 simulation of no known domain was ``tau2.tau2.<task>...``.
The fixtures are real files: NeMo Relay's two exports of one example session, run twice (``atif/.real``), and a
simulation of the tau2-bench results file in ``tau2-bench/.real`` saved on its own without the policy that tells its
domain.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from cli_support import newcomer, run_cli  # noqa: F401  (newcomer: a fixture)

from trajsearch.embed import HashingEmbedder
from trajsearch.ingest.read import read_inputs
from trajsearch.model import Outcome
from trajsearch.search import TrajSearch

FIXTURES = Path(__file__).parent / "fixtures"
#: Two attempts of one NeMo Relay example session (``session_id: example-session``), begun hours apart.
NEMO = [FIXTURES / "atif/.real/nemo-relay/trajectory.json", FIXTURES / "atif/.real/nemo-relay-f7e66e17/trajectory.json"]
TAU2 = FIXTURES / "tau2-bench/.real/airline_run1.json"


def _placed(source: Path, folder: Path, name: str = "trajectory.json") -> Path:
    folder.mkdir(parents=True)
    shutil.copy(source, folder / name)
    return folder / name


def _ingest(*paths: Path) -> dict:
    code, stdout, stderr = run_cli("ingest", *map(str, paths), "--json", "-q")
    assert code == 0, stderr
    return json.loads(stdout)


def _run_ids(query: str) -> list[str]:
    every = [arg for outcome in Outcome for arg in ("--outcome", outcome.value)]
    code, stdout, stderr = run_cli("export", "-q", query, "-f", "jsonl", "-k", "10", *every)
    assert code == 0, stderr
    return sorted(json.loads(line)["trajectory_id"] for line in stdout.splitlines() if line.strip())


def _stored_before(path: Path, home: Path, **verdict) -> str:
    """The run of ``path`` as a store written before round 28 holds it (with ``verdict``, as an outcomes file gave
    it): under the id its place gave it, with no ``former_ids``; that id."""
    run = next(iter(read_inputs([path]))).trajectory
    old = run.metadata["former_ids"][0]
    metadata = {k: v for k, v in run.metadata.items() if k != "former_ids"}
    if basis := verdict.pop("outcome_basis", None):
        metadata["outcome_basis"] = basis
    with TrajSearch.open(str(home / "milvus.db"), traces=str(home / "traces"), embedder=HashingEmbedder()) as ts:
        ts.add([run.model_copy(update={"trajectory_id": old, "metadata": metadata, **verdict})])
    return old


def _id(path: Path) -> str:
    return next(iter(read_inputs([path]))).trajectory.trajectory_id


def test_an_atif_file_read_from_two_differently_named_folders_is_one_run(newcomer, tmp_path: Path):
    first = _placed(NEMO[0], tmp_path / "exports" / "nemo-relay")
    moved = _placed(NEMO[0], tmp_path / "archive-2026" / "relay-runs", name="example.trajectory.json")
    assert _id(first) == _id(moved) == "atif.example-session.56d826ca83"  # its session and attempt
    _ingest(first)
    _ingest(moved)  # written again under its id (its former id names its new place), not added
    assert _run_ids("weather population San Francisco") == [_id(first)]
    code, stdout, stderr = run_cli("delete", "--from", str(moved), "--json")  # the moved dump finds its run
    assert json.loads(stdout)["removed"] == [_id(first)], stderr


def test_two_attempts_of_one_atif_session_stay_two_runs(newcomer, tmp_path: Path):
    """NeMo Relay names every run of its example ``example-session``: the attempts' first steps tell them apart,
    even laid out under one folder name in two ingests."""
    first = _placed(NEMO[0], tmp_path / "a" / "relay")
    second = _placed(NEMO[1], tmp_path / "b" / "relay")
    _ingest(first)
    _ingest(second)
    assert _run_ids("weather population San Francisco") == sorted([_id(first), _id(second)])
    assert _id(first) != _id(second)


def test_an_atif_save_taken_mid_run_has_the_finished_runs_id(tmp_path: Path):
    """Its first steps, the marks, are written once: a copy saved after the first reply is the same attempt."""
    record = json.loads(NEMO[0].read_text())
    record["steps"] = record["steps"][:2]
    del record["final_metrics"]
    midway = tmp_path / "midway" / "trajectory.json"
    midway.parent.mkdir()
    midway.write_text(json.dumps(record))
    assert _id(midway) == _id(NEMO[0])


def test_a_store_written_before_moves_its_atif_copy_and_a_rename_then_adds_nothing(newcomer, tmp_path: Path):
    """A store written before round 28 holds both attempts under their places' ids, one judged by an outcomes file.
    Ingesting the dump again moves each to its new id with its verdict; renamed then, the dump adds nothing."""
    home = tmp_path / "home"
    paths = [_placed(NEMO[0], tmp_path / "dump" / "relay-1"), _placed(NEMO[1], tmp_path / "dump" / "relay-2")]
    old = [_stored_before(paths[0], home, outcome=Outcome.failure, reward=0.0,
                          outcome_basis="outcomes file report.json"), _stored_before(paths[1], home)]
    assert old[0] == "atif.example-session.dump/relay-1/trajectory"
    assert _run_ids("weather population San Francisco") == sorted(old)
    assert _ingest(tmp_path / "dump")["superseded"] == 2
    new = sorted(map(_id, paths))
    assert _run_ids("weather population San Francisco") == new
    (tmp_path / "dump").rename(tmp_path / "dump-archived")
    assert _ingest(tmp_path / "dump-archived")["superseded"] == 0
    assert _run_ids("weather population San Francisco") == new
    shown = json.loads(run_cli("show", _id(tmp_path / "dump-archived/relay-1/trajectory.json"), "--json")[1])
    assert (shown["outcome"], shown["metadata"]["outcome_basis"]) == ("failure", "outcomes file report.json")


def test_delete_from_finds_the_atif_run_a_store_written_before_holds(newcomer, tmp_path: Path):
    path = _placed(NEMO[0], tmp_path / "exports" / "relay")
    old = _stored_before(path, tmp_path / "home")
    code, stdout, stderr = run_cli("delete", "--from", str(path), "--json")
    assert json.loads(stdout) == {"removed": [old], "not_found": [], "kept_other_run": []}, stderr


def test_a_harbor_trials_run_keeps_its_trials_name(tmp_path: Path):
    """A Harbor trial's file is named by its trial (Harbor's own name, in its config.json): a job moved or renamed
    keeps it, and its layout tells the steps of a multi-step trial apart, whose files may be byte-identical."""
    trial = FIXTURES / "atif/.real/harbor-0.25/hello-multi__pI7xYz"
    moved = tmp_path / "jobs-2026-12" / "renamed-job" / trial.name
    shutil.copytree(trial, moved)
    ids = [_id(root / "steps" / step / "agent" / "trajectory.json") for root in (trial, moved)
           for step in ("write", "test")]
    assert ids[:2] == ids[2:] and len(set(ids)) == 2
    assert ids[0] == "atif.01a234c2-e4f0-7c9b-ace1-57b79540a20b.hello-multi__pI7xYz/write/agent/trajectory"


def _simulation_alone(folder: Path) -> Path:
    """The results file's first simulation saved on its own, without the policy whose title names its domain."""
    sim = json.loads(TAU2.read_text())["simulations"][0]
    del sim["policy"]
    folder.mkdir(parents=True)
    (folder / "sim-0.json").write_text(json.dumps(sim))
    return folder / "sim-0.json"


def test_a_tau2_simulation_of_no_known_domain_names_tau2_once(newcomer, tmp_path: Path):
    path = _simulation_alone(tmp_path / "runs")
    [run] = [p.trajectory for p in read_inputs([path])]
    assert run.task_family == "tau2" and run.task_id == "tau2-sim-0-0"
    assert run.trajectory_id == "tau2.0.t0.c4726c14-f132-4944-a51a-465518856f47"
    old = _stored_before(path, tmp_path / "home")
    assert old == "tau2.tau2.0.t0.c4726c14-f132-4944-a51a-465518856f47"
    assert _ingest(path)["superseded"] == 1
    assert _run_ids("cancel my reservation") == [run.trajectory_id]

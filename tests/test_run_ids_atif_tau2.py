"""Run ids of ATIF files that share a session, and of tau2 runs of no known domain (round 28, IDS3).

An ATIF file outside a Harbor trial is named by its place, ``atif.<session>.<grandparent>/<parent>/<file stem>``.
Round 28 first named it by its session and its first steps' saved marks, wherever it lay; its review found that two
files of one session that share those steps (a session continued or forked into a second file that repeats them;
two copilot-cli runs, every one ``session_id: "copilot-cli"``, begun in one second with a tool call and no text)
then took one id and replaced each other on every ingest. No mark of a file's first steps tells those apart while a
save taken mid-run keeps the finished run's id (the save is the first steps of both), so the place names them again.
A tau2 simulation of no known domain was ``tau2.tau2.<task>...``, and is ``tau2.<task>...``.
The fixtures are real files: NeMo Relay's export of an example session (``atif/.real``), copilot-cli's trajectory of a
Harbor trial (``atif/.real/harbor-0.26-cursor-copilot``) copied out of its trial, and a simulation of the tau2-bench
results file in ``tau2-bench/.real`` saved on its own without the policy that tells its domain.
"""

from __future__ import annotations

import json
from pathlib import Path

from cli_support import newcomer, run_cli  # noqa: F401  (newcomer: a fixture)

from trajsearch.embed import HashingEmbedder
from trajsearch.ingest.read import read_inputs
from trajsearch.model import Outcome
from trajsearch.search import TrajSearch

FIXTURES = Path(__file__).parent / "fixtures"
NEMO = FIXTURES / "atif/.real/nemo-relay/trajectory.json"  # NeMo Relay's example session
COPILOT = FIXTURES / "atif/.real/harbor-0.26-cursor-copilot/hello-copilot__Pz8Rt/agent/trajectory.json"
TAU2 = FIXTURES / "tau2-bench/.real/airline_run1.json"


def _ingest(*paths: Path) -> dict:
    code, stdout, stderr = run_cli("ingest", *map(str, paths), "--json", "-q")
    assert code == 0, stderr
    return json.loads(stdout)


def _run_ids(query: str) -> list[str]:
    every = [arg for outcome in Outcome for arg in ("--outcome", outcome.value)]
    code, stdout, stderr = run_cli("export", "-q", query, "-f", "jsonl", "-k", "10", *every)
    assert code == 0, stderr
    return sorted(json.loads(line)["trajectory_id"] for line in stdout.splitlines() if line.strip())


def _stored_before(path: Path, home: Path) -> str:
    """The run of ``path`` as a store written before round 28 holds it: under its former id, naming none; that id."""
    run = next(iter(read_inputs([path]))).trajectory
    old = run.metadata["former_ids"][0]
    metadata = {k: v for k, v in run.metadata.items() if k != "former_ids"}
    with TrajSearch.open(str(home / "milvus.db"), traces=str(home / "traces"), embedder=HashingEmbedder()) as ts:
        ts.add([run.model_copy(update={"trajectory_id": old, "metadata": metadata})])
    return old


def _id(path: Path) -> str:
    return next(iter(read_inputs([path]))).trajectory.trajectory_id


def _written(record: dict, path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(record))
    return path


def test_two_atif_files_of_one_session_that_share_their_first_steps_stay_two_runs(newcomer, tmp_path: Path):
    """The session continued an hour later into a second file that repeats its first two steps as saved (no
    ``is_copied_context``), then asks about Oakland: each ingest keeps both runs, one after the other or together."""
    first = json.loads(NEMO.read_text())
    later = {**first, "steps": first["steps"][:2] + [
        {"step_id": 3, "source": "user", "timestamp": "2026-03-13T19:00:00.000000+00:00",
         "message": "And what about Oakland?"},
        {"step_id": 4, "source": "agent", "timestamp": "2026-03-13T19:00:01.000000+00:00",
         "message": "Oakland is 70F and sunny."}]}
    del later["final_metrics"]
    paths = [_written(first, tmp_path / "x/relay/trajectory.json"),
             _written(later, tmp_path / "x/relay/trajectory.cont-1.json")]
    assert _id(paths[0]) != _id(paths[1])
    _ingest(paths[0])
    _ingest(paths[1])
    _ingest(paths[0])
    _ingest(tmp_path / "x")
    assert _run_ids("weather population San Francisco Oakland") == sorted(map(_id, paths))


def test_two_copilot_runs_begun_in_one_second_with_a_tool_call_stay_two_runs(newcomer, tmp_path: Path):
    """copilot-cli names every session ``copilot-cli`` and may open with a tool call and no text: two runs whose
    first steps were saved in one whole second differ in their calls only."""
    real = json.loads(COPILOT.read_text())
    runs = []
    for command in ("cd /app && python -m pytest tests -q", "cd /app && ls"):
        run = json.loads(json.dumps(real))
        for step in run["steps"]:
            step["timestamp"] = step["timestamp"][:19] + "Z"  # whole seconds
        run["steps"][1]["message"] = ""
        run["steps"][1]["tool_calls"][0]["arguments"]["command"] = command
        runs.append(run)
    paths = [_written(run, tmp_path / f"exports/copilot-{n}/trajectory.json") for n, run in enumerate(runs)]
    assert _id(paths[0]) != _id(paths[1])
    _ingest(paths[0])
    _ingest(paths[1])
    assert _run_ids("make the tests in app pass") == sorted(map(_id, paths))


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

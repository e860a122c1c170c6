"""Round 29 (HARB29): raw sessions in a Harbor multi-step trial, and a Codex sub-agent's rollout in a trial.

Harbor's ``MultiStepTrial`` (``harbor.trial.multi_step``, 0.25+) runs the agent on each step's instruction, verifies
the step, moves its logs to ``<trial>/steps/<step>/agent/`` and records it in ``result.json``'s ``step_results``
(``StepResult``: the step's own ``verifier_result``, ``exception_info``, ``agent_execution``); the trial's reward is
their mean or the final one. A step's session is a run of its own, with its step's verdict, as its ATIF conversion
already was; a raw session there had been read with no verdict (its place was not recognised as a trial's).

Codex writes a spawned sub-agent's rollout (``session_meta.source: {"subagent": ...}``) beside its parent's under
``sessions/YYYY/MM/DD/``: in a trial Harbor did not convert, it made the trial "hold two top-level sessions" and the
parent's verdict was withheld.

Real files, laid out as Harbor lays out a trial (each fixture folder's SOURCE.md says where they come from): the
``result.json`` Harbor 0.25's ``TrialResult`` wrote for a two-step trial (``atif/.real/harbor-0.25/hello-multi``:
steps ``write`` 1.0, ``test`` 0.0); runme's Harbor job with its real Codex rollout (``atif/.real/harbor-runme``); a
real Codex CLI 0.171 rollout (``codex-cli/.real``); the two rollouts Codex CLI 0.171 wrote for a ``codex exec`` whose
model spawned a sub-agent (``atif/.harb29/codex-0.171-spawn``); a real Codex Desktop auto-review (guardian) sub-agent
rollout (``codex-cli/.real/probe-c``) and a thread-spawn sub-agent rollout in the shape codex-rs defines
(``codex-cli/.real/subagent-thread-spawn.jsonl``).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from cli_support import newcomer, run_cli  # noqa: F401  (newcomer: a fixture)

from trajsearch.ingest.read import read_dump
from trajsearch.model import Outcome, Trajectory

FIXTURES = Path(__file__).parent / "fixtures"
MULTI = FIXTURES / "atif" / ".real" / "harbor-0.25" / "hello-multi__pI7xYz"
RUNME = FIXTURES / "atif" / ".real" / "harbor-runme" / "2026-06-30__14-22-55" / "update-minor-deps__xQmAxjA"
CODEX = FIXTURES / "codex-cli" / ".real"
RUNME_ROLLOUT = "rollout-2026-06-30T14-22-55-019f1a69-e753-7a60-9727-4c3ca0640fd0.jsonl"
CLI_ROLLOUT = "rollout-2026-12-02T02-48-19-01a234a7-28a1-7d61-a3e9-85ee2685efae.jsonl"


def _runs(folder: Path) -> list[Trajectory]:
    return [p.trajectory for p in read_dump(folder, tenant="acme") if p.trajectory is not None]


def _multi_step_trial(tmp_path: Path) -> Path:
    """The two-step trial (its real ``result.json``, and the ``config.json`` Harbor writes: the same ``TrialConfig``)
    with a real Codex rollout left in each step's agent logs, as Harbor moves them, and no ATIF conversion."""
    trial = tmp_path / MULTI.name
    trial.mkdir()
    shutil.copy(MULTI / "result.json", trial / "result.json")
    config = json.loads((MULTI / "result.json").read_text())["config"]
    (trial / "config.json").write_text(json.dumps(config, indent=4))
    for step, source in (("write", RUNME / "agent" / "sessions" / "2026" / "06" / "30" / RUNME_ROLLOUT),
                         ("test", CODEX / CLI_ROLLOUT)):
        day = trial / "steps" / step / "agent" / "sessions" / "2026" / "12" / "02"
        day.mkdir(parents=True)
        shutil.copy(source, day / source.name)
    return trial


def test_each_step_session_of_a_multi_step_trial_takes_its_steps_verdict(tmp_path: Path) -> None:
    """Each step's rollout is that step's run: reward and outcome from its ``step_results`` record (not the trial's
    mean, 0.5), the task id the trial's; before, both were read with outcome unknown and no reward."""
    trial = _multi_step_trial(tmp_path)
    runs = {r.metadata.get("trial_step"): r for r in _runs(trial)}
    assert sorted(runs, key=str) == ["test", "write"]
    assert (runs["write"].outcome, runs["write"].reward) == (Outcome.success, 1.0)
    assert (runs["test"].outcome, runs["test"].reward) == (Outcome.failure, 0.0)
    assert {r.task_id for r in runs.values()} == {"hello"}
    assert all(r.metadata["trial_name"] == MULTI.name and "trial_verdict_withheld" not in r.metadata
               for r in runs.values())


def test_a_steps_session_beside_its_steps_conversion_is_passed_over_and_the_conversion_graded(tmp_path: Path) -> None:
    """Consistent with the ATIF conversion of a step: where Harbor converted a step's session, the conversion is the
    step's run (with the step's verdict) and the raw rollout beside it is passed over, as in a one-step trial."""
    trial = _multi_step_trial(tmp_path)
    shutil.copy(MULTI / "steps" / "test" / "agent" / "trajectory.json", trial / "steps" / "test" / "agent")
    runs = {r.metadata.get("trial_step"): r for r in _runs(trial)}
    assert runs["test"].metadata["source_format"] == "atif"
    assert (runs["test"].outcome, runs["test"].reward) == (Outcome.failure, 0.0)
    assert (runs["write"].metadata["source_format"], runs["write"].reward) == ("codex-cli", 1.0)


SPAWN = FIXTURES / "atif" / ".harb29" / "codex-0.171-spawn"
SPAWN_PARENT = SPAWN / "rollout-2026-12-07T01-51-38-01a24e33-0fb8-7130-b7cb-8f0259463d8f.jsonl"
SPAWN_CHILD = SPAWN / "rollout-2026-12-07T01-51-39-01a24e33-1026-7642-ac10-cafe9ea33fdc.jsonl"


@pytest.mark.parametrize(("parent", "subagent"), [
    (SPAWN_PARENT, SPAWN_CHILD),
    (None, CODEX / "probe-c" / "rollout-2026-04-29T14-41-27-019dd7f8-9cc2-7bb2-9bc5-670490c52926.jsonl"),
    (None, CODEX / "subagent-thread-spawn.jsonl"),
], ids=["codex-0.171-spawn_agent", "desktop-guardian", "thread-spawn-shape"])
def test_a_codex_subagents_rollout_beside_its_parents_leaves_the_parent_the_trials_run(
        tmp_path: Path, parent: Path | None, subagent: Path) -> None:
    """The sub-agent's rollout is a part of the run (``is_subagent``, no verdict of its own), not a second session:
    the parent takes the trial's verdict, where before neither did (``trial_verdict_withheld``). The real pair Codex
    0.171 wrote for one ``codex exec`` whose model called ``spawn_agent`` (put in the trial in place of runme's
    rollout), and runme's rollout beside a real auto-review sub-agent's and one of the thread-spawn shape."""
    trial = tmp_path / RUNME.name
    shutil.copytree(RUNME, trial)
    (trial / "agent" / "trajectory.json").unlink()
    day = trial / "agent" / "sessions" / "2026" / "06" / "30"
    if parent is not None:
        (day / RUNME_ROLLOUT).unlink()
        shutil.copy(parent, day / parent.name)
    shutil.copy(subagent, day / (subagent.name if subagent.parent == SPAWN else
                                 "rollout-2026-06-30T14-30-00-019f1a70-0000-7000-8000-000000000001.jsonl"))
    runs = {bool(r.metadata.get("is_subagent")): r for r in _runs(trial)}
    assert (runs[False].outcome, runs[False].reward, runs[False].task_id) == (Outcome.success, 1.0,
                                                                              "runmedev/update-minor-deps")
    assert "trial_verdict_withheld" not in runs[False].metadata
    assert (runs[True].reward, runs[True].task_id) == (None, None)
    if parent is not None:
        assert runs[True].metadata["parent_thread_id"] == runs[False].metadata["session_id"]


def test_a_steps_verifier_output_is_the_trials_not_a_file_of_no_format(tmp_path: Path) -> None:
    """Harbor moves each step's ``verifier/`` (its ``reward.json``, test output) to ``steps/<step>/`` as it moves the
    agent logs: that output is the trial's, passed over as a one-step trial's is; it was rejected as an unrecognised
    dump format (a batch of two graded runs and one rejection)."""
    trial = tmp_path / MULTI.name
    shutil.copytree(MULTI, trial)
    (trial / "config.json").write_text(json.dumps(json.loads((MULTI / "result.json").read_text())["config"]))
    verifier = trial / "steps" / "write" / "verifier"
    verifier.mkdir()
    shutil.copy(RUNME / "verifier" / "reward.json", verifier / "reward.json")
    read = list(read_dump(trial, tenant="acme"))
    assert [p.error for p in read if p.trajectory is None] == []
    assert sorted(p.trajectory.reward for p in read if p.trajectory is not None) == [0.0, 1.0]


def test_a_session_resumed_across_steps_is_a_run_per_step(tmp_path: Path) -> None:
    """With ``resume_trajectory`` Harbor copies the agent logs into the step's folder and keeps them for the next
    step (``MultiStepTrial._copy_agent_dir_to_step``), whose ``codex exec resume --last`` continues that session: the
    same rollout (one session id) lies in both steps. Each step's is its run, with its own verdict; both had one id
    (``codex.<session id>``), the last read replacing the other in the store."""
    trial = _multi_step_trial(tmp_path)
    [resumed] = (trial / "steps" / "test" / "agent").rglob("rollout-*.jsonl")
    resumed.unlink()
    [first] = (trial / "steps" / "write" / "agent").rglob("rollout-*.jsonl")
    shutil.copy(first, resumed.parent / first.name)
    runs = _runs(trial)
    assert sorted((r.trajectory_id, r.reward) for r in runs) == [
        ("codex.019f1a69-e753-7a60-9727-4c3ca0640fd0.test", 0.0),
        ("codex.019f1a69-e753-7a60-9727-4c3ca0640fd0.write", 1.0)]


GUARDIAN = CODEX / "probe-c" / "rollout-2026-04-29T14-41-27-019dd7f8-9cc2-7bb2-9bc5-670490c52926.jsonl"


@pytest.mark.parametrize("meta", [
    {"source": {"internal": "guardian"}},
    {"source": {"internal": "memory_consolidation"}, "thread_source": "memory_consolidation"},
    {"source": "exec", "thread_source": "guardian_review"},
], ids=["internal-guardian", "internal-memory-consolidation", "guardian-review-thread"])
def test_a_codex_internal_sessions_rollout_is_not_a_second_run_of_the_trial(tmp_path: Path, meta: dict) -> None:
    """codex-rs counts a session whose ``source`` is ``{"internal": ...}`` (an auto-review since Codex moved the
    guardian there from ``{"subagent": {"other": "guardian"}}``, a memory consolidation) or whose ``thread_source``
    says so as a non-root one (``SessionSource::is_non_root_agent``), written beside its parent's rollout as a
    sub-agent's is: the parent keeps the trial's verdict (it was withheld, the trial "holding 2 top-level
    sessions"), and an auto-review is read as one (its task the request, the reviewed transcript left out). The real
    Codex Desktop auto-review rollout with its meta's source as newer builds write it."""
    trial = tmp_path / RUNME.name
    shutil.copytree(RUNME, trial)
    (trial / "agent" / "trajectory.json").unlink()
    lines = GUARDIAN.read_text(encoding="utf-8").splitlines()
    first = json.loads(lines[0])
    first["payload"].update(meta)
    day = trial / "agent" / "sessions" / "2026" / "06" / "30"
    (day / "rollout-2026-06-30T14-30-00-019f1a70-0000-7000-8000-000000000001.jsonl").write_text(
        "\n".join([json.dumps(first), *lines[1:]]) + "\n", encoding="utf-8")
    runs = {bool(r.metadata.get("is_subagent")): r for r in _runs(trial)}
    assert (runs[False].outcome, runs[False].reward) == (Outcome.success, 1.0)
    assert "trial_verdict_withheld" not in runs[False].metadata
    assert runs[True].reward is None
    if "guardian" in json.dumps(meta):
        assert "[the reviewed session's transcript]" in runs[True].task
        assert runs[True].metadata["parent_thread_id"]


def test_a_steps_session_names_the_id_it_had_before_its_step_was_in_it(tmp_path: Path) -> None:
    """A step's raw session had the id ``codex.<session id>`` (its step not recognised): it names that id in
    ``metadata.former_ids``, so that re-ingesting a store an older version filled supersedes the copy kept under it
    (which stayed beside the graded step's run, with no verdict) and ``delete --from`` finds it."""
    runs = _runs(_multi_step_trial(tmp_path))
    assert sorted((r.trajectory_id, r.metadata["former_ids"][0]) for r in runs) == [
        ("codex.019f1a69-e753-7a60-9727-4c3ca0640fd0.write", "codex.019f1a69-e753-7a60-9727-4c3ca0640fd0"),
        ("codex.01a234a7-28a1-7d61-a3e9-85ee2685efae.test", "codex.01a234a7-28a1-7d61-a3e9-85ee2685efae")]


def test_a_swe_agent_run_in_a_step_names_the_id_it_had_before(tmp_path: Path) -> None:
    """So too a SWE-agent ``.traj`` in a step's ``agent/swe-agent-output/`` (where Harbor's ``swe-agent`` has it
    write): its run directory is now the step (``<trial>/steps/<step>``), and it names the id its output folder gave
    it before (``swe-agent.swe-agent-output.<task>``). A real SWE-agent 1.x trajectory."""
    trial = _multi_step_trial(tmp_path)
    shutil.rmtree(trial / "steps")
    source = FIXTURES / "swe-agent" / ".probe50" / "cost_2_2" / "django__django-11742.traj"
    output = trial / "steps" / "write" / "agent" / "swe-agent-output" / source.stem
    output.mkdir(parents=True)
    shutil.copy(source, output / source.name)
    [run] = _runs(trial)
    assert (run.trajectory_id, run.reward) == (f"swe-agent.{MULTI.name}/steps/write.django__django-11742", 1.0)
    assert run.metadata["former_ids"][0] == "swe-agent.swe-agent-output.django__django-11742"


def test_reingesting_a_multi_step_trial_moves_the_copies_an_older_version_stored(newcomer, tmp_path: Path) -> None:
    """An older version read each step's rollout as it reads one outside a trial: ``codex.<session id>``, with no
    verdict nor task. Ingesting the trial into that store moves those copies to the steps' runs (2 runs, not 4, the
    two ungraded copies left beside the graded ones): the same content, the trial's verdict and grouping aside."""
    (tmp_path / "job").mkdir()
    trial = _multi_step_trial(tmp_path / "job")
    loose = tmp_path / "sessions"
    loose.mkdir()
    for rollout in (trial / "steps").rglob("rollout-*.jsonl"):
        shutil.copy(rollout, loose / rollout.name)
    for folder, superseded in ((loose, 0), (trial, 2)):
        code, stdout, stderr = run_cli("ingest", str(folder), "--json", "-q")
        assert code == 0, stderr
        assert (json.loads(stdout)["ingested"], json.loads(stdout)["superseded"]) == (2, superseded)
    code, stdout, stderr = run_cli("stats", "--json")
    assert code == 0, stderr
    assert json.loads(stdout)["trajectories"] == 2


def test_a_step_harbor_recorded_no_verdict_of_takes_none_not_the_trials_mean(tmp_path: Path) -> None:
    """A step whose ``step_results`` record is missing (a hand-edited or cut ``result.json``) is not graded by the
    trial's mean reward (0.5, a success at the default threshold), which judges both steps together: it takes no
    verdict, its step still named (``metadata.trial_step``)."""
    trial = _multi_step_trial(tmp_path)
    result = json.loads((trial / "result.json").read_text())
    result["step_results"] = [r for r in result["step_results"] if r["step_name"] == "write"]
    (trial / "result.json").write_text(json.dumps(result))
    runs = {r.metadata.get("trial_step"): r for r in _runs(trial)}
    assert (runs["write"].outcome, runs["write"].reward) == (Outcome.success, 1.0)
    assert (runs["test"].outcome, runs["test"].reward) == (Outcome.unknown, None)


def test_a_step_of_an_unfinished_multi_step_trial_is_named_as_the_finished_trials_is(tmp_path: Path) -> None:
    """A multi-step trial Harbor has not finished (its ``config.json``, no ``result.json`` yet) holds its steps as
    the finished one does: a raw session there is its step's (``metadata.trial_step``, an id naming the step) and
    the step's ATIF conversion has the id it will have once the trial finishes (it was named as if the step's folder
    were the trial, so ingesting a running job and again after kept two copies)."""
    trial = _multi_step_trial(tmp_path)
    shutil.copy(MULTI / "steps" / "test" / "agent" / "trajectory.json", trial / "steps" / "test" / "agent")
    finished = sorted(r.trajectory_id for r in _runs(trial))
    (trial / "result.json").unlink()
    runs = {r.trajectory_id: r for r in _runs(trial)}
    assert sorted(runs) == finished
    assert {r.metadata.get("trial_step") for r in runs.values()} == {"write", "test"}
    assert all(r.reward is None for r in runs.values())
    [conversion] = [r for r in runs.values() if r.metadata["source_format"] == "atif"]
    assert conversion.metadata["former_ids"][0] == "atif.01a234c2-e4f0-7c9b-ace1-57b79540a20b.test/agent/trajectory"


def _stored_after(*ingests: tuple[Path, int]) -> int:
    """Ingests each folder in turn, each superseding the number of stored runs given; the runs the store then holds."""
    for folder, superseded in ingests:
        code, stdout, stderr = run_cli("ingest", str(folder), "--json", "-q")
        assert code == 0, stderr
        assert json.loads(stdout)["superseded"] == superseded
    code, stdout, stderr = run_cli("stats", "--json")
    assert code == 0, stderr
    return json.loads(stdout)["trajectories"]


def test_ingesting_a_finished_trial_moves_its_steps_conversion_an_older_version_stored_unfinished(
        newcomer, tmp_path: Path) -> None:
    """An older version read a step's ATIF conversion in a trial not finished yet as if the step's folder were the
    trial (``atif.<session>.test/agent/trajectory``, as it reads one lying in ``test/agent/`` outside a trial).
    Ingesting the trial once finished moves that copy: the step's conversion names the id finished or not (2 runs,
    not 3)."""
    (tmp_path / "job").mkdir()
    trial = _multi_step_trial(tmp_path / "job")
    conversion = MULTI / "steps" / "test" / "agent" / "trajectory.json"
    shutil.copy(conversion, trial / "steps" / "test" / "agent")
    loose = tmp_path / "running" / "test" / "agent"
    loose.mkdir(parents=True)
    shutil.copy(conversion, loose)
    assert _stored_after((loose, 0), (trial, 1)) == 2


RESUME = FIXTURES / "atif" / ".harb29" / "codex-0.171-resume"


def _resumed_trial(tmp_path: Path) -> Path:
    """The two-step trial run with ``resume_trajectory``: Codex 0.171's real rollout after each step."""
    trial = _multi_step_trial(tmp_path)
    shutil.rmtree(trial / "steps")
    for step in ("write", "test"):
        [rollout] = (RESUME / step).glob("rollout-*.jsonl")
        day = trial / "steps" / step / "agent" / "sessions" / "2026" / "12" / "07"
        day.mkdir(parents=True)
        shutil.copy(rollout, day / rollout.name)
    return trial


def test_a_step_resumed_from_the_one_before_is_its_own_turns(tmp_path: Path) -> None:
    """With ``resume_trajectory`` Harbor copies the agent logs into each step's folder and runs the next step as
    ``codex exec resume --last``, which appends its turn to the same rollout: the later step's copy starts with the
    whole of the earlier one's. The later step's run is its own turn (its instruction the task, its own commands),
    graded by its step's verdict; it was the whole session, the earlier step's task and work graded by the later
    step's verdict. Codex 0.171's real rollout after each step of such a run."""
    runs = {r.metadata["trial_step"]: r for r in _runs(_resumed_trial(tmp_path))}
    write, test = runs["write"], runs["test"]
    assert (write.task, write.reward) == ("STEP ONE: write hello.txt containing hello.", 1.0)
    assert (test.task, test.reward) == ("STEP TWO: show what hello.txt says.", 0.0)
    assert [s.action for s in write.steps if s.action] and [s.action for s in test.steps if s.action]
    assert "cat hello.txt" in " ".join(str(s.arguments) for s in test.steps)
    assert "echo hello" not in " ".join(str(s.arguments) for s in test.steps)
    assert test.metadata["resumed_from_step"] == "write" and "resumed_from_step" not in write.metadata
    assert write.steps[-1].started_at < test.created_at <= test.steps[0].started_at


def test_reingesting_a_resumed_trial_moves_the_whole_session_an_older_version_stored(newcomer, tmp_path: Path) -> None:
    """An older version read the later step's rollout of a resumed session as one run outside a trial: the whole
    session, ``codex.<session id>``, with no task id. The earlier step's run names that id and begins at the same
    instant, but carries the trial's task: the trial's task aside, it is that copy, which ingesting the trial moves
    (2 runs, not 3)."""
    (tmp_path / "job").mkdir()
    trial = _resumed_trial(tmp_path / "job")
    loose = tmp_path / "sessions"
    loose.mkdir()
    [rollout] = (trial / "steps" / "test").rglob("rollout-*.jsonl")
    shutil.copy(rollout, loose / rollout.name)
    assert _stored_after((loose, 0), (trial, 1)) == 2


def test_a_step_holding_two_sessions_withholds_its_verdict_naming_the_step(tmp_path: Path) -> None:
    """A step's agent logs holding two top-level sessions and nothing naming its run: neither takes the step's
    verdict, and the reason names the step as ``<trial>/steps/<step>``, not the step's folder as a trial."""
    trial = _multi_step_trial(tmp_path)
    [other] = (trial / "steps" / "test" / "agent").rglob("rollout-*.jsonl")
    shutil.copy(other, next((trial / "steps" / "write" / "agent").rglob("rollout-*.jsonl")).parent / other.name)
    write = [r for r in _runs(trial) if r.metadata["trial_step"] == "write"]
    assert len(write) == 2 and all(r.reward is None for r in write)
    said = f"Harbor trial {MULTI.name}/steps/write holds 2 top-level sessions"
    assert all(r.metadata["trial_verdict_withheld"].startswith(said) for r in write)

"""Benchmark run files probe B of round p43 found misread: Harbor trials of SWE-agent and mini-swe-agent, tau2-bench
leaderboard and voice files, EnIGMA (SWE-agent CTF) runs.

Each test reads a real file (or a trimmed excerpt of one) through the public reader; the sources are in the
``SOURCE.md`` beside each fixture.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from trajsearch.ingest.read import detect_format, read_dump
from trajsearch.model import Outcome

from adapter_support import only

FIXTURES = Path(__file__).parent / "fixtures"
HARBOR_SWE = FIXTURES / "atif/.real/harbor-0.26-swe-agent/pydicom-1458__gpt4"
SWE_PYDICOM = (FIXTURES / "swe-agent/.real/gpt4__swe-bench-dev-easy_first_only__default__t-0.00__p-0.95__c-3.00__"
               "install-1/pydicom__pydicom-1458.traj")


def test_harbor_trial_of_swe_agent_is_read_from_its_raw_traj_with_the_trials_verdict(tmp_path: Path) -> None:
    """Bug (probe B, B1): Harbor's SWE-agent converter keeps no user message, so the trial's ATIF was rejected
    "no task", and the raw ``.traj`` beside it, which holds the task, was passed over as the session Harbor
    converted: the trial gave no run. The run is the ``.traj``'s, with the trial's reward."""
    trial = tmp_path / "job" / HARBOR_SWE.name
    shutil.copytree(HARBOR_SWE, trial)
    raw = trial / "agent/swe-agent-output/pydicom__pydicom-1458/pydicom__pydicom-1458.traj"
    raw.parent.mkdir(parents=True)
    shutil.copy(SWE_PYDICOM, raw)
    read = list(read_dump(tmp_path / "job"))
    assert [r.ok for r in read] == [True]
    run = read[0].trajectory
    assert run.task.startswith("Pixel Representation attribute should be optional") and len(run.steps) == 12
    assert (run.outcome, run.reward, run.metadata["outcome_basis"]) == (Outcome.success, 1.0,
                                                                        "Harbor trial result.json")
    assert run.trajectory_id == "swe-agent.pydicom-1458__gpt4.pydicom__pydicom-1458"  # the trial, not swe-agent-output
    with pytest.raises(ValueError, match="holds no task .* the trial's run is the raw session it converted"):
        detect_format(trial / "agent/trajectory.json")


HARBOR_MINI = FIXTURES / "atif/.real/harbor-0.26-mini-swe-agent/mini-2.4.6-toolcall-submission/agent/trajectory.json"


def test_harbor_mini_swe_agent_submission_is_no_failed_step() -> None:
    """Bug (probe B, B3): mini-swe-agent 2.x's CLI, which Harbor runs, answers the call that submits with its
    "action was not executed" placeholder (exit code -1) and keeps the real output in the ``exit`` message that
    Harbor's converter drops; the submission became a failed last step."""
    run = only(HARBOR_MINI)
    assert run.steps[-1].arguments == {"command": "echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT && cat patch.txt"}
    assert [s.index for s in run.steps if s.error] == [1]  # the cat of a missing file, as the raw run says


def test_enigma_rejected_flag_is_a_step_error() -> None:
    """Bug (probe B, B5): EnIGMA (SWE-agent for CTF) answers a ``submit`` of a wrong flag with "Wrong flag!" and
    goes on (``swe_env.py``: ``validate_submission`` failed); that step had no error."""
    rock = only(FIXTURES / "swe-agent/.real/ctf/rock.traj")
    assert rock.steps[10].error == "Wrong flag! (the submitted flag was rejected)"
    assert rock.steps[11].error is None  # the flag it then got right


TAU2_LB = FIXTURES / "tau2-bench/.real/leaderboard-simulations-only"


def test_tau2_leaderboard_simulations_without_their_results_document_are_read() -> None:
    """Bug (probe B, B2): tau2's leaderboard keeps some submissions' trajectories as a bare list of simulations or a
    summary ``{"domain", "agent", "model", "simulations"}`` without ``tasks``; each file was rejected whole, though
    the same simulations read one by one or with ``"tasks": []``. No file of these carries the task definitions, so
    each run's task is its user's first message, as for any simulation saved without its task."""
    bare = only(TAU2_LB / "adaptive-agent_medical_claude-opus-4-6_1trial.first-simulation.json")
    assert bare.task.startswith("Hi, I'd like to schedule an appointment with a doctor.")
    assert (bare.task_id, bare.outcome, len(bare.steps)) == ("medical_triage-0", Outcome.success, 4)
    assert bare.metadata["task_definition"] == "missing"
    read = list(read_dump(TAU2_LB / "adaptive_agent_medical_triage_opus46_cascata.simulations-2-3.json"))
    run = read[0].trajectory
    assert (run.task_id, run.task_family, run.model_id, run.reward) == ("medical_triage-1", "medical_triage",
                                                                        "claude-opus-4-6", 1.0)


def test_tau2_leaderboard_bare_list_takes_the_model_its_agent_messages_name(tmp_path: Path) -> None:
    """Audit (round 21): a leaderboard's bare list of simulations has no ``info``, so every run had no model,
    though each agent message's ``raw_data`` names it (``claude-opus-4-6``); the user simulator's messages name
    its own model, so only the agent's are read."""
    airline = only(TAU2_LB / "adaptive-agent_airline_claude-opus-4-6_1trial.first-simulation.json")
    assert airline.model_id == "claude-opus-4-6"
    sims = json.loads((TAU2_LB / "adaptive-agent_airline_claude-opus-4-6_1trial.first-simulation.json").read_text())
    for msg in sims[0]["messages"]:  # a user simulator of another model than the agent's
        if msg["role"] == "user" and msg.get("raw_data"):
            msg["raw_data"]["model"] = "gpt-4.1"
    mixed = tmp_path / "agent_airline_run1.json"
    mixed.write_text(json.dumps(sims))
    assert only(mixed).model_id == "claude-opus-4-6"


def test_tau2_leaderboard_infrastructure_error_without_messages_is_a_run() -> None:
    """R1-3 (review of B2): the summary's third simulation ended ``infrastructure_error`` before any message; it was
    rejected ("no conversation"), so ingest failed on a clean published file whose own summary counts it (70 tasks,
    69 passed). As in a results file with its task, it is a 0-step ``infra_error`` run, its task a placeholder."""
    read = list(read_dump(TAU2_LB / "adaptive_agent_medical_triage_opus46_cascata.simulations-2-3.json"))
    assert [r.ok for r in read] == [True, True]
    run = read[1].trajectory
    assert (run.task_id, run.outcome, run.steps) == ("medical_triage-0", Outcome.infra_error, [])
    assert run.task == "tau2 task 0 (its definition is not in the file)"
    assert run.metadata["termination_reason"] == "infrastructure_error"


def test_tau2_leaderboard_bare_lists_of_different_domains_do_not_share_task_ids(tmp_path: Path) -> None:
    """R1-2 (review of B2): a bare list of simulations has no domain; every task id was ``tau2-<n>``, so the same
    submission's medical task 0 and airline task 0 were one task, and the airline runs missed ``airline-0`` of every
    other airline file. The domain is read from what is there: the ``submission.json`` beside ``trajectories/``
    (its ``trajectory_files``), else the title of the policy each simulation saved, else a tau2 domain the file name
    says; with none, the task ids are the file's own and the run says the domain is unknown."""
    medical = only(TAU2_LB / "adaptive-agent_medical_claude-opus-4-6_1trial.first-simulation.json")
    airline = only(TAU2_LB / "adaptive-agent_airline_claude-opus-4-6_1trial.first-simulation.json")
    assert (medical.task_id, medical.task_family) == ("medical_triage-0", "medical_triage")
    assert (airline.task_id, airline.task_family) == ("airline-0", "airline")
    assert airline.metadata["domain_from"] == "the policy's title"
    assert airline.task.startswith("Hi there! I'd like to cancel one of my reservations")

    sims = json.loads((TAU2_LB / "adaptive-agent_airline_claude-opus-4-6_1trial.first-simulation.json").read_text())
    for sim in sims:  # as a simulation saved without its policy (earlier tau2 versions save none)
        sim.pop("policy")
    listed = tmp_path / "submissions" / "s" / "trajectories" / "agent_run1.json"
    listed.parent.mkdir(parents=True)
    listed.write_text(json.dumps(sims))
    (listed.parent.parent / "submission.json").write_text(json.dumps({"trajectory_files": {"retail": "x.json",
                                                                                            "airline": listed.name}}))
    assert (only(listed).task_id, only(listed).metadata["domain_from"]) == ("airline-0", "submission.json")
    named = tmp_path / "agent_airline_run1.json"
    named.write_text(json.dumps(sims))
    assert (only(named).task_id, only(named).metadata["domain_from"]) == ("airline-0", "the file name")
    unknown = tmp_path / "agent_run1.json"
    unknown.write_text(json.dumps(sims))
    run = only(unknown)
    assert (run.task_id, run.task_family) == ("tau2-agent_run1-0", "tau2")
    assert run.metadata["domain_from"] == "none: the task id is this file's"


def test_tau2_voice_simulation_without_content_or_its_task_is_refused() -> None:
    """Bug (probe B, B6): a full-duplex simulation saved without its speech (tau2's interaction-metrics test data)
    and without its task became a 0-step run with a placeholder task: every empty tick chunk counted as a message,
    so the "no conversation" refusal the adapter promises never fired."""
    read = list(read_dump(FIXTURES / "tau2-bench/.real/voice-experiment-no-content"))
    assert [r.ok for r in read] == [False]
    assert "task '40'" in read[0].error and "no conversation" in read[0].error

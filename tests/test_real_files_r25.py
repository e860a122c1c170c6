"""Real files of the formats trajsearch reads, from sources it had not seen (round 25, AUD5).

A Harbor trial Harbor never finished but whose agent had timed out: ``exception.txt`` holds the timeout, no
``result.json`` was written, and the run read as outcome unknown."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

from trajsearch.ingest.read import read_inputs
from trajsearch.model import Outcome, Trajectory

FIXTURES = Path(__file__).parent / "fixtures"
TIMED_OUT = FIXTURES / "atif/.real/harbor-timeout-unfinished/011_atlassian-api__atlassian-pyt__xznBdt8"


def _runs(path: Path) -> list[Trajectory]:
    """The runs a folder or file reads as (its other files passed over or rejected)."""
    return [p.trajectory for p in read_inputs([path]) if p.trajectory is not None]


def test_a_trial_that_timed_out_and_was_never_finished_is_the_agents_failure() -> None:
    """Harbor writes ``exception.txt`` when the trial's exception happens and ``result.json`` only when the trial
    is finalised; this one's agent ran out of its 600 s, then Harbor crashed before writing ``result.json``. The
    timeout is the agent's own failure, with its cause, and no reward."""
    parsed = list(read_inputs([TIMED_OUT]))
    assert [p.error for p in parsed if p.trajectory is None and "unrecognised" in (p.error or "")] == []
    [run] = [p.trajectory for p in parsed if p.trajectory is not None]
    assert run.outcome is Outcome.failure and run.reward is None
    assert run.failure is not None
    assert run.failure.error == "AgentTimeoutError: Agent execution timed out after 600.0 seconds"
    assert run.failure.cause is not None and run.failure.cause.startswith("the agent ran out of time")
    assert run.metadata["trial_exception"] == "AgentTimeoutError"
    assert run.metadata["outcome_basis"] == "Harbor trial exception.txt"
    assert len(run.steps) == 5 and run.model_id == "bedrock/us.amazon.nova-premier-v1:0"


GUI_RUN = FIXTURES / "openhands/basic_gui_mode.json"


def test_an_openhands_run_stopped_in_error_with_no_reason_says_so_naming_its_last_failing_step(tmp_path: Path) -> None:
    """OpenHands 0.13-0.30 recorded no reason with the error state (the ``reason`` field came in 0.31), whatever
    exception stopped the run; a later server records none for a runtime error its session reports. OpenHands' own
    GUI run ended so (its last state made ``error``, as each writes it): its ``http.server`` call that never finished
    (exit -1) was read as why the run stopped, though the agent went on to answer. The error now says no reason was
    recorded, naming that step as the last failing one."""
    events = json.loads(GUI_RUN.read_text())
    for extras in ({"agent_state": "error"}, {"agent_state": "error", "reason": ""}):
        [last] = [e for e in events if e.get("observation") == "agent_state_changed"][-1:]
        last["extras"] = extras
        path = tmp_path / f"{len(extras)}.json"
        path.write_text(json.dumps(events))
        [run] = _runs(path)
        assert run.outcome is Outcome.infra_error and run.failure is not None
        assert run.failure.error.startswith("the agent stopped in state error; OpenHands recorded no reason; "
                                            "last failing step 1: command did not finish (exit code -1)")
        assert run.failure.cause is not None and run.failure.cause.startswith(
            "unknown: the agent stopped in state error with no reason recorded")


#: The frames Harbor prints above the exception its trial raised (cut from the timed-out trial's ``exception.txt``).
_HARBOR_FRAMES = ("Traceback (most recent call last):\n"
                  '  File "/h/harbor/trial/trial.py", line 360, in run\n'
                  "    await self._execute_agent()\n")


def _trial_ending(tmp_path: Path, exception_txt: str) -> Trajectory:
    """The run of the real unfinished trial (no ``result.json``) with its ``exception.txt`` replaced."""
    trial = tmp_path / TIMED_OUT.name
    shutil.copytree(TIMED_OUT, trial)
    (trial / "exception.txt").write_text(exception_txt)
    [run] = _runs(trial)
    return run


def test_an_ungraded_trial_that_overflowed_its_context_is_the_agents_failure(tmp_path: Path) -> None:
    """Harbor's error policy groups ``ContextLengthExceededError`` (and the agent's process exiting non-zero, its
    context window, output length and safety refusals) with the agent's timeout: the agent's own failure, graded and
    never retried. An ungraded trial that ended on one was read as the harness's failure; a type Harbor does not
    name stays so. (Harbor raises a plain ``NonZeroAgentExitCodeError`` for a crash its patterns did not find the
    provider's failure in: one whose decisive line is the provider's outage is still the provider's, below.)"""
    run = _trial_ending(tmp_path, _HARBOR_FRAMES + "harbor.llms.base.ContextLengthExceededError: prompt is too "
                        "long: 210000 tokens > 200000 maximum\n")
    assert run.outcome is Outcome.failure and run.failure is not None
    assert run.failure.error == "ContextLengthExceededError: prompt is too long: 210000 tokens > 200000 maximum"
    assert run.failure.cause == "the agent failed (ContextLengthExceededError), and no verifier graded what it left"
    run = _trial_ending(tmp_path / "crash", _HARBOR_FRAMES + "harbor.agents.installed.base.NonZeroAgentExitCodeError: "
                        "Command failed (exit 1): mini -t task\nstdout: None\nstderr: ModuleNotFoundError: No module "
                        "named 'minisweagent.agents'\n")
    assert run.outcome is Outcome.failure and run.failure is not None
    assert run.failure.cause == ("the agent's process exited non-zero (Harbor counts it the agent's own failure), and "
                                 "no verifier graded what it left")
    run = _trial_ending(tmp_path / "other", _HARBOR_FRAMES + "RuntimeError: Agent setup failed with exit code 1.\n")
    assert run.outcome is Outcome.infra_error and run.failure is not None
    assert run.failure.cause == "infrastructure: the trial failed before the verifier graded it"


def test_an_ungraded_trial_with_an_agents_own_failure_in_result_json_is_the_agents_failure(tmp_path: Path) -> None:
    """The same verdict where Harbor finished the trial and wrote its exception, with no reward, to ``result.json``."""
    trial = tmp_path / TIMED_OUT.name
    shutil.copytree(TIMED_OUT, trial)
    (trial / "result.json").write_text(json.dumps({"trial_name": trial.name, "verifier_result": None,
                                                   "exception_info": {"exception_type": "OutputLengthExceededError",
                                                                      "exception_message": "max_tokens reached"}}))
    [run] = _runs(trial)
    assert run.outcome is Outcome.failure and run.failure is not None
    assert run.failure.cause == "the agent failed (OutputLengthExceededError), and no verifier graded what it left"
    assert run.metadata["outcome_basis"] == "Harbor trial result.json"


def test_an_agent_exit_whose_stderr_holds_a_chained_traceback_is_read_as_harbors_exception(tmp_path: Path) -> None:
    """``NonZeroAgentExitCodeError`` keeps the agent's stderr in its message; where the agent's Python printed a
    chained traceback there, its second header starts a line, and the exception read was the agent's
    (``APIConnectionError``), not the one Harbor raised; a crash on the provider's outage is the provider's
    failure, not the agent's (strands' HTTP 500 in ``test_adapters_probe_a46`` so too). Harbor's own chain (the timed-out trial's) is still followed
    to its last link."""
    stderr = ("Traceback (most recent call last):\n"
              '  File "/usr/lib/python3.12/site-packages/litellm/main.py", line 10, in completion\n'
              "    raise KeyError('choices')\nKeyError: 'choices'\n\n"
              "During handling of the above exception, another exception occurred:\n\n"
              "Traceback (most recent call last):\n"
              '  File "/usr/local/bin/mini", line 8, in <module>\n    sys.exit(app())\n'
              "litellm.exceptions.APIConnectionError: Connection reset by peer\n")
    run = _trial_ending(tmp_path, _HARBOR_FRAMES + "harbor.agents.installed.base.NonZeroAgentExitCodeError: "
                        "Command failed (exit 1): mini -t task\nstdout: \nstderr: " + stderr)
    assert run.metadata["trial_exception"] == "NonZeroAgentExitCodeError"
    assert run.outcome is Outcome.infra_error and run.failure is not None  # the crash was the provider's outage
    assert run.failure.error == ("NonZeroAgentExitCodeError: litellm.exceptions.APIConnectionError: Connection reset "
                                 "by peer")
    assert run.failure.cause == "infrastructure: the trial failed before the verifier graded it"
    run = _trial_ending(tmp_path / "auth", _HARBOR_FRAMES + "harbor.agents.installed.base.NonZeroAgentExitCodeError: "
                        "Command failed (exit 1): mini -t task\nstdout: \nstderr: "
                        + stderr.replace("APIConnectionError: Connection reset by peer", "AuthenticationError: bad key"))
    assert run.outcome is Outcome.infra_error  # a type Harbor's table counts the provider's, as litellm raised it
    run = _trial_ending(tmp_path / "chained", (TIMED_OUT / "exception.txt").read_text())
    assert run.metadata["trial_exception"] == "AgentTimeoutError"


def test_an_openhands_run_stopped_rate_limited_with_no_reason_names_the_rate_limit(tmp_path: Path) -> None:
    """OpenHands 0.29 sets ``rate_limited`` only for the provider's ``RateLimitError``: the state is the reason. It
    was read as no reason recorded, naming an unrelated failing tool step as the last one."""
    events = json.loads(GUI_RUN.read_text())
    [last] = [e for e in events if e.get("observation") == "agent_state_changed"][-1:]
    last["extras"] = {"agent_state": "rate_limited"}
    path = tmp_path / "rate_limited.json"
    path.write_text(json.dumps(events))
    [run] = _runs(path)
    assert run.outcome is Outcome.infra_error and run.failure is not None
    assert run.failure.error == "the agent stopped in state rate_limited: the model provider rate-limited the run"
    assert run.failure.cause == "infrastructure: the model provider rate-limited the run"

"""Probe W2 of round 47: ATIF as the agents Harbor converts write it, beyond those read before: OpenClaw and pi
(Harbor 0.26's own converters, ``fixtures/atif/.real/harbor-0.26-openclaw-pi``) and OpenClaw's own exporter
(openclaw-atif, ``fixtures/atif/.real/openclaw-atif-api-error``); see each folder's SOURCE.md. Through ``read_dump``
on the files; no mocks.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any, Callable

from adapter_support import only
from trajsearch.model import Outcome

REAL = Path(__file__).parent / "fixtures" / "atif" / ".real"
HARBOR = REAL / "harbor-0.26-openclaw-pi"
OPENCLAW = HARBOR / "openclaw-api-error__Vk3Qp" / "agent" / "trajectory.json"
PI = HARBOR / "pi-api-error__Rt7Wn" / "agent" / "trajectory.json"
OPENCLAW_ATIF = REAL / "openclaw-atif-api-error" / "trajectory.json"


def test_openclaw_placeholder_for_no_text_is_no_thought() -> None:
    """Harbor's openclaw conversion writes ``(no assistant text)`` as the message of every turn that only called
    tools; it is no word of the agent's, and was every such step's thought."""
    steps = only(OPENCLAW).steps
    assert [s.action for s in steps] == ["exec", "edit"]
    assert steps[0].thought is None
    assert steps[1].thought == "`add` returns one too many; fixing it."


def test_openclaw_failed_model_call_is_the_runs_api_error_not_an_answer() -> None:
    """A failed model call (pi-ai's ``stopReason: "error"``) is written ``(error) 529 {...}`` as the agent's message:
    it was read as the agent's final answer, and the run that died on an outage as an unknown one."""
    run = only(OPENCLAW)
    assert "respond" not in [s.action for s in run.steps]
    assert run.outcome is Outcome.infra_error
    assert run.failure is not None and run.failure.error.startswith("529 ") and "overloaded_error" in run.failure.error
    assert run.failure.cause is not None and run.failure.cause.startswith("infrastructure")
    assert run.metadata["api_errors"] == 1


def test_pi_failed_model_call_kept_only_as_stop_reason_is_the_runs_error() -> None:
    """Harbor's pi conversion drops the ``errorMessage`` and keeps the failed turn as an empty agent step with
    ``extra.stop_reason: "error"``: it was passed over as a turn that said nothing, the outage unseen."""
    run = only(PI)
    assert [s.action for s in run.steps] == ["exec", "edit"]
    assert run.outcome is Outcome.infra_error
    assert run.failure is not None and "stop reason: error" in run.failure.error
    assert run.metadata["api_errors"] == 1


def test_openclaw_atif_errored_turns_are_counted_and_the_last_is_the_runs() -> None:
    """OpenClaw's own exporter keeps a failed model call as an agent step with no content and
    ``extra.openclaw.{stop_reason: "error", error_message}``: both failures were dropped, the run read as one that
    stopped after a failed command with no verdict."""
    run = only(OPENCLAW_ATIF)
    assert [(s.action, s.error) for s in run.steps] == [
        ("exec", "tar: /srv/data: Cannot open: Permission denied (exit code 2)")]
    assert run.metadata["api_errors"] == 2
    assert run.outcome is Outcome.infra_error
    assert run.failure is not None and run.failure.error.startswith("429 ") and "rate_limit_error" in run.failure.error


# -- a Harbor trial whose agent the model provider cut off: Harbor counts its reward invalid ---------------------

RATE_LIMITED = HARBOR / "openclaw-rate-limited__Hq4Tz"


def test_trial_cut_off_by_a_rate_limit_is_an_infra_error_not_the_agents_failure() -> None:
    """Harbor classifies the agent's failed command as ``ApiRateLimitError`` and still runs the verifier (reward 0.0),
    but its error policy counts that reward invalid (``has_valid_reward=False``; the trial's ``reward_valid`` is false;
    Harbor leaves it out of the job's score, and runs it again only if the job asks for retries). It was read as the
    agent failing the task: a failure lesson and a success rate drawn from an outage."""
    run = only(RATE_LIMITED / "agent" / "trajectory.json")
    assert (run.outcome, run.reward) == (Outcome.infra_error, 0.0)
    assert run.metadata["trial_exception"] == "ApiRateLimitError" and run.metadata["trial_reward_valid"] is False
    assert run.failure is not None and run.failure.error.startswith("ApiRateLimitError: 429 ")
    assert "rate_limit_error" in run.failure.error and "reward invalid" in run.failure.cause


def _trial_with(tmp_path: Path, edit: Callable[[dict[str, Any]], None]) -> Path:
    """A copy of the rate-limited trial whose ``result.json`` ``edit`` changed; its trajectory's path."""
    trial = tmp_path / RATE_LIMITED.name
    shutil.copytree(RATE_LIMITED, trial)
    result = json.loads((trial / "result.json").read_text())
    edit(result)
    (trial / "result.json").write_text(json.dumps(result, indent=4))
    return trial / "agent" / "trajectory.json"


def _without_recorded_verdict(result: dict[str, Any]) -> None:
    """A result.json as written before Harbor recorded its verdict (no ``policy``, no ``reward_valid``)."""
    del result["exception_info"]["policy"], result["reward_valid"]


def test_trial_policy_override_that_keeps_the_reward_valid_leaves_the_agents_failure(tmp_path: Path) -> None:
    """A job's ``override_error_policy`` is recorded on the exception (``policy_override``) and applied to the
    recorded ``policy``; where it keeps the reward valid the trial is graded as the agent's failure, as Harbor then
    grades it."""
    def override(result: dict[str, Any]) -> None:
        result["exception_info"]["policy_override"] = {"has_valid_reward": True}
        result["exception_info"]["policy"]["has_valid_reward"] = True
        result["reward_valid"] = True
    run = only(_trial_with(tmp_path, override))
    assert (run.outcome, run.reward) == (Outcome.failure, 0.0)
    assert "trial_reward_valid" not in run.metadata


def test_trial_policy_override_without_a_recorded_verdict_still_wins(tmp_path: Path) -> None:
    """A result.json with the override but not the verdict it gave: the override is applied to the table."""
    def override(result: dict[str, Any]) -> None:
        _without_recorded_verdict(result)
        result["exception_info"]["policy_override"] = {"has_valid_reward": True}
    assert only(_trial_with(tmp_path, override)).outcome is Outcome.failure


def test_trial_recorded_policy_that_keeps_the_reward_valid_is_the_agents_failure(tmp_path: Path) -> None:
    """Harbor writes its own verdict (``exception_info.policy``, ``reward_valid``: computed fields of 0.26's
    ``ExceptionInfo`` / ``TrialResult``); a Harbor whose table keeps an ``ApiRateLimitError`` trial's reward valid
    graded the agent. It was read by our copy of 0.26's table, as an infrastructure error."""
    def valid(result: dict[str, Any]) -> None:
        result["exception_info"]["policy"]["has_valid_reward"] = True
        result["reward_valid"] = True
    run = only(_trial_with(tmp_path, valid))
    assert (run.outcome, run.reward) == (Outcome.failure, 0.0)
    assert run.metadata["trial_exception"] == "ApiRateLimitError" and "trial_reward_valid" not in run.metadata


def test_trial_recorded_policy_voids_the_reward_of_a_type_the_table_does_not_name(tmp_path: Path) -> None:
    """A newer Harbor names exception types our copy of the table lacks; its recorded ``has_valid_reward: false``
    was passed over, the outage read as the agent failing the task."""
    def newer(result: dict[str, Any]) -> None:
        result["exception_info"]["exception_type"] = "ApiQuotaExhaustedError"
    run = only(_trial_with(tmp_path, newer))
    assert (run.outcome, run.reward) == (Outcome.infra_error, 0.0)
    assert run.metadata["trial_reward_valid"] is False
    assert run.failure is not None and run.failure.error.startswith("ApiQuotaExhaustedError: 429 ")


def test_trial_recorded_reward_valid_judges_where_the_policy_is_missing(tmp_path: Path) -> None:
    """Without the exception's ``policy``, the trial's ``reward_valid`` (given a reward) is Harbor's verdict."""
    def trimmed(result: dict[str, Any]) -> None:
        result["exception_info"]["exception_type"] = "ApiQuotaExhaustedError"
        del result["exception_info"]["policy"]
    assert only(_trial_with(tmp_path, trimmed)).outcome is Outcome.infra_error


def test_trial_without_a_recorded_verdict_is_judged_by_the_table(tmp_path: Path) -> None:
    """A result.json written before Harbor recorded its verdict: Harbor 0.26's table (``ApiRateLimitError`` voids)."""
    run = only(_trial_with(tmp_path, _without_recorded_verdict))
    assert (run.outcome, run.metadata["trial_reward_valid"]) == (Outcome.infra_error, False)


# -- Cortex Code: every tool step's message is Harbor's ``Executed NAME`` ------------------------------------------

CORTEX = REAL / "harbor-0.26-cortex-code" / "cortex-fix-calc__Wd2Ks" / "agent" / "trajectory.json"


def test_cortex_code_executed_placeholder_is_no_thought() -> None:
    """Harbor's Cortex Code conversion (and its Copilot CLI one, for the flat event schema) writes ``Executed bash``
    as the message of every tool call's step: it was every step's thought, after the model's real reasoning."""
    steps = only(CORTEX).steps
    assert [(s.action, s.thought) for s in steps[:3]] == [
        ("bash", "Run the test suite first to see what fails."),
        ("edit", "add returns a + b + 1; drop the + 1."),
        ("bash", None),
    ]


# -- goose: the stream's error event is an agent message ``[error] ...`` -------------------------------------------

GOOSE = REAL / "harbor-0.26-goose" / "goose-rate-limited__Fm8Vc" / "agent" / "trajectory.json"


def test_goose_error_event_is_the_runs_error_not_its_answer() -> None:
    """Harbor writes goose's ``{"type": "error"}`` event (the reply stream failed) as an agent message ``[error] ...``:
    it was read as the agent's final answer, and a run that died on a rate limit had no error and no verdict."""
    run = only(GOOSE)
    assert [s.action for s in run.steps] == ["developer__shell"]
    assert run.outcome is Outcome.infra_error
    assert run.failure is not None and run.failure.error.startswith("Rate limit exceeded: ")
    assert run.metadata["api_errors"] == 1


# -- Antigravity CLI: "The command exited with code N." under a DONE status; the <USER_REQUEST> wrapper ----------------

ANTIGRAVITY = REAL / "harbor-0.26-antigravity" / "antigravity-fix-calc__Tn5Rb" / "agent" / "trajectory.json"


def test_antigravity_failed_command_is_the_steps_error() -> None:
    """Antigravity records every command's step ``DONE`` and prints ``The command exited with code N.`` (tab-indented,
    after its ``Created At`` / ``Completed At`` lines); Harbor keeps the record's ``exit_code`` in the result's
    ``extra``. A failed test run read as a success."""
    assert [(s.action, s.error) for s in only(ANTIGRAVITY).steps] == [
        ("run_command", "FAILED tests/test_calc.py::test_add - assert 5 == 4 (exit code 1)"),
        ("run_command", "cat: /app/src/calc.py: No such file or directory (exit code 1)"),
        ("list_dir", "Encountered error in step execution: Permission denied for read_file(/root/.gemini/antigravity-cli)."
                     " Matches hardcoded system protection boundary rule."),
        ("view_file", "There was a problem parsing the tool call."),
        ("run_command", None),
        ("respond", None),
    ]


def test_antigravity_invalid_call_answered_by_an_error_message_is_the_steps_error() -> None:
    """Antigravity answers an invalid tool call with a system ``ERROR_MESSAGE`` step (``status: DONE``, its ``error``:
    "There was a problem parsing the tool call. ..."), which Harbor gives the pending call as its result, keeping
    ``type`` and ``error`` in the result's ``extra``: the call read as a success."""
    step = only(ANTIGRAVITY).steps[3]
    assert step.action == "view_file" and step.error == "There was a problem parsing the tool call."
    assert "failed to read file: open /app/src/calc.py" in step.observation


def test_antigravity_refused_call_recorded_as_error_status_is_the_steps_error() -> None:
    """A call Antigravity refused (its record's ``status: ERROR``, kept by Harbor in the result's ``extra``) says
    "Encountered error in step execution: Permission denied ..." under its timestamps: it read as a success. That test
    is the one above (the ``list_dir`` step); this one checks the timestamps are no error line of a flagged result."""
    step = only(ANTIGRAVITY).steps[2]
    assert step.action == "list_dir" and not step.error.startswith(("Created At", "Completed At"))


def test_antigravity_task_is_the_request_not_its_wrapper() -> None:
    """Antigravity wraps what the user typed in ``<USER_REQUEST>`` tags; the task kept them."""
    assert only(ANTIGRAVITY).task == (
        "The tests in /app/tests fail. Fix calc.add in /app/calc.py so that `python -m pytest -q` passes.")


# -- trae-agent: Harbor's conversion holds no user step; the task is in the trajectory file it converted ------------

TRAE = REAL / "harbor-0.26-trae-agent" / "trae-fix-calc__Qp3Ld" / "agent" / "trajectory.json"


def test_trae_agent_run_takes_its_task_from_the_trajectory_file_it_was_converted_from() -> None:
    """Harbor's trae-agent conversion writes only the agent's LLM interactions: every trae-agent trial was rejected
    ("no task: no step with source 'user'"), though the task is the ``task`` of ``agent/trae-trajectory.json``."""
    run = only(TRAE)
    assert run.task == "The tests in /app/tests fail. Fix calc.add in /app/calc.py so that `python -m pytest -q` passes."
    assert [s.action for s in run.steps] == ["bash", "str_replace_based_edit_tool", "task_done"]


def test_trae_agent_run_that_died_on_its_first_model_call_is_an_api_error() -> None:
    """With no LLM interaction recorded, Harbor writes trae-agent's failed step as the agent message ``[error] ...``."""
    run = only(TRAE.parent.parent.parent / "trae-overloaded__Zk7Hw" / "agent" / "trajectory.json")
    assert run.steps == [] and run.outcome is Outcome.infra_error
    assert run.failure is not None and run.failure.error.startswith("Error code: 529")


# -- review RW2: an aborted OpenClaw turn; goose / trae-agent answers that quote an "[error] ..." log line ----------

OPENCLAW_ABORTED = HARBOR / "openclaw-aborted__Jd8Ws" / "agent" / "trajectory.json"
LOG_LINE = "[error] 2026-03-04 10:12:07 db: connection refused (127.0.0.1:5432)"


def test_openclaw_aborted_turn_is_an_interruption_not_an_api_error() -> None:
    """pi-ai ends a turn it aborted with ``stopReason: "aborted"`` and ``errorMessage: "Request was aborted"``;
    Harbor's openclaw conversion drops the stop reason and writes ``(error) Request was aborted`` as for a failed
    call. It was read as an outage (infra_error, an API error) instead of a stopped run."""
    run = only(OPENCLAW_ABORTED)
    assert [s.action for s in run.steps] == ["exec", "edit"]
    assert run.metadata.get("interrupted") is True and "api_errors" not in run.metadata
    assert run.outcome is Outcome.unknown and run.failure is None


def test_goose_answer_quoting_an_error_log_line_is_its_answer() -> None:
    """goose's answer ``[error] 2026-... db: connection refused`` (the log line the user asked for) reads like Harbor's
    conversion of goose's error event; goose's log beside it (``agent/goose.txt``) has no error event. The answer was
    dropped and the run read as one that died on an API error."""
    run = only(REAL / "harbor-0.26-goose" / "goose-log-answer__Lq2Vd" / "agent" / "trajectory.json")
    assert [s.action for s in run.steps] == ["developer__shell", "respond"]
    assert run.steps[-1].arguments == {"content": LOG_LINE} and run.steps[-1].error is None
    assert run.outcome is not Outcome.infra_error and "api_errors" not in run.metadata


def test_goose_error_message_without_its_log_is_still_the_runs_error(tmp_path: Path) -> None:
    """Without goose's log beside it, the last agent step's ``[error] ...`` is still read as the run's error."""
    shutil.copy(GOOSE, tmp_path / "trajectory.json")
    run = only(tmp_path / "trajectory.json")
    assert run.outcome is Outcome.infra_error and run.metadata["api_errors"] == 1


def test_trae_agent_model_answer_quoting_an_error_log_line_is_its_answer() -> None:
    """Harbor writes trae-agent's ``[error] ...`` only for a failed step with no model call recorded (no ``metrics``);
    a model call's answer that quotes an ``[error]`` log line carries its metrics. It was dropped as an API error."""
    run = only(REAL / "harbor-0.26-trae-agent" / "trae-log-answer__Mv4Xp" / "agent" / "trajectory.json")
    assert [s.action for s in run.steps] == ["bash", "respond", "task_done"]
    assert run.steps[1].arguments == {"content": LOG_LINE} and "api_errors" not in run.metadata


def test_trae_agent_error_step_rewritten_with_null_fields_is_still_the_runs_error(tmp_path: Path) -> None:
    """A trae-agent error step as a writer that keeps null fields leaves it (``"metrics": null``) is still one."""
    source = TRAE.parent.parent.parent / "trae-overloaded__Zk7Hw" / "agent"
    shutil.copytree(source, tmp_path / "agent")
    path = tmp_path / "agent" / "trajectory.json"
    document = json.loads(path.read_text())
    for step in document["steps"]:
        step.setdefault("metrics", None)
    path.write_text(json.dumps(document))
    run = only(path)
    assert run.outcome is Outcome.infra_error and run.metadata["api_errors"] == 1

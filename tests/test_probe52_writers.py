"""Probe 52 (area NF3): what the newest writers of the most-used formats write (see each fixture folder's SOURCE.md)."""

from __future__ import annotations

from pathlib import Path

from trajsearch.ingest.read import read_dump
from trajsearch.model import Outcome

FIXTURES = Path(__file__).parent / "fixtures"
OH_SDK_CONTEXT = FIXTURES / "openhands" / ".real" / "sdk-context-window" / "313131310000400080000000000000c1"
OH_V0_CONTEXT = FIXTURES / "openhands" / ".real" / "v0-context-window" / "context-window.trajectory.json"


def _one(path: Path):
    [result] = read_dump(path, tenant="acme")
    assert result.ok, result.error
    return result.trajectory


def test_openhands_sdk_context_window_exceeded_is_the_agents_failure() -> None:
    """Bug: an SDK conversation whose history outgrew the model's context window (no condenser: the run loop stops on
    a ``ConversationErrorEvent`` ``LLMContextWindowExceedError``, which the SDK itself classifies ``agent_action``) read
    as ``infra_error`` ("the conversation stopped in status error"), so the run left the agent's failures."""
    run = _one(OH_SDK_CONTEXT)
    assert run.outcome is Outcome.failure
    assert run.failure.error.startswith("LLMContextWindowExceedError: litellm.ContextWindowExceededError")
    assert "infrastructure" not in (run.failure.cause or "")
    assert [s.action for s in run.steps] == ["terminal", "terminal", "terminal"]


def test_openhands_v0_context_window_error_state_is_the_agents_failure() -> None:
    """Bug: the same stop in an OpenHands V0 event trajectory (the controller's ``agent_state_changed`` to ``error``
    with reason "LLMContextWindowExceedError: Conversation history longer than LLM context window limit ...") read as
    ``infra_error``, unlike the iteration and budget limits beside it."""
    run = _one(OH_V0_CONTEXT)
    assert run.outcome is Outcome.failure
    assert run.failure.error.startswith("LLMContextWindowExceedError: Conversation history longer")
    assert "infrastructure" not in (run.failure.cause or "")


OH_SDK_KILLED = FIXTURES / "openhands" / ".real" / "sdk-killed-mid-step" / "0a1b2c3d00004000800000000000f0c5"


def test_openhands_sdk_conversation_killed_mid_step_keeps_the_call_it_was_running() -> None:
    """Bug: the SDK saves ``base_state.json`` (its ``leaf_event_id``) once per step but each event file as it comes; a
    process killed while a tool ran (a closed terminal, a harness's hard timeout) leaves the step's ``ActionEvent``
    past a leaf still marked ``running``. The run was read up to that stale leaf: the command it was running when
    it died, its last and most telling step, was lost."""
    run = _one(OH_SDK_KILLED)
    assert [s.arguments.get("command") for s in run.steps] == [
        "ls /nonexistent_dir_xyz", "echo hello > hello.txt && cat hello.txt"]
    assert not run.steps[-1].observation and run.outcome is Outcome.unknown
    assert run.metadata["execution_status"] == "running"


def test_openhands_sdk_call_answered_by_the_crash_recovery_off_its_branch_is_kept() -> None:
    """Bug: the agent server before software-agent-sdk #4488 answered the call a killed process left running with an
    ``AgentErrorEvent`` ("A restart occurred while this tool was in progress ...") stamped onto the stale leaf, a
    sibling of the call: the branch read held the error but not the call, which was lost."""
    run = _one(OH_SDK_KILLED.with_name("0a1b2c3d00004000800000000000f0c6"))
    assert [s.arguments.get("command") for s in run.steps] == [
        "ls /nonexistent_dir_xyz", "echo hello > hello.txt && cat hello.txt"]
    assert run.steps[-1].error.startswith("A restart occurred while this tool was in progress")
    assert run.outcome is Outcome.infra_error


OH_SDK_OWN = FIXTURES / "openhands" / ".real" / "sdk-own-user-messages"


def test_openhands_sdk_refused_tool_call_is_a_failed_step_not_a_user_prompt() -> None:
    """Bug: the SDK answers a model reply it cannot turn into a tool call (``FunctionCallValidationError``: a model
    without native tool calling missed a required parameter, named a tool it lacks) with a ``MessageEvent`` from
    ``source: "user"``; it was read as the user's next prompt (``metadata.user_prompts``) and the model's mistake was
    no step at all."""
    run = _one(OH_SDK_OWN / "0a1b2c3d00004000800000000000f0d1")
    assert run.task.startswith("List the files in /nonexistent_dir_xyz")
    assert "user_prompts" not in run.metadata
    refused = run.steps[1]
    assert refused.error == "Missing required parameters for function 'terminal': {'command'}"
    assert [s.arguments.get("command") for s in (run.steps[0], run.steps[2])] == [
        "ls /nonexistent_dir_xyz", "echo hello > hello.txt && cat hello.txt"]


def test_openhands_sdk_content_filter_nudge_is_no_user_prompt() -> None:
    """Bug: the SDK's own nudge after the provider's content filter blocked a reply ("Your previous response was
    blocked by the model's content filter. ...", ``source: "user"``) was listed as a prompt the user typed."""
    run = _one(OH_SDK_OWN / "0a1b2c3d00004000800000000000f0d2")
    assert "user_prompts" not in run.metadata and run.metadata["content_filtered_replies"] == 1


# Review RNF3 of the fixes above (fix FRNF3): the conversations in sdk-probe52-review/SOURCE.md.
OH_REVIEW = FIXTURES / "openhands" / ".real" / "sdk-probe52-review"
OH_ITERATIVE = FIXTURES / "openhands" / ".real" / "oh-cli-codes" / "cli447_hi_followup_iterative_case_a"


def _commands(run) -> list:
    return [s.arguments.get("command") for s in run.steps]


def test_openhands_sdk_task_pasting_the_sdks_refusal_text_is_the_task() -> None:
    """Bug: the SDK's own refusal of a malformed call was recognised by its words alone, so a user whose task pastes
    such an error ("Function 'get_weather' not found in available tools: ...") lost the whole run ("no user
    message"). The first user message is the task whatever it says."""
    run = _one(OH_REVIEW / "0a1b2c3d00004000800000000000f0e5")
    assert run.task.startswith("Function 'get_weather' not found in available tools: ['search', 'calc']\nMy agent")
    assert [s.action for s in run.steps] == ["terminal", "terminal", "file_editor", "finish"]


def test_openhands_sdk_follow_up_after_finish_pasting_an_error_is_a_prompt() -> None:
    """Bug: a user's follow-up after the agent finished that starts with words of the SDK's refusal ("Parameter
    'timeout' is expected to be an integer. -- that is what my script prints now ...") became a failed step of the
    agent's and was lost from the prompts: the SDK refuses a reply only in the middle of a run."""
    run = _one(OH_REVIEW / "0a1b2c3d00004000800000000000f0e6")
    assert run.metadata["user_prompts"] == [
        "Parameter 'timeout' is expected to be an integer. -- that is what my script prints now, please fix it"]
    assert [s.action for s in run.steps] == ["terminal", "terminal", "file_editor", "finish"]
    assert not any(s.error and "timeout" in s.error for s in run.steps)


def test_openhands_sdk_critic_follow_ups_are_counted_not_prompts() -> None:
    """Bug: the SDK critic's iterative-refinement follow-up ("The task appears incomplete (iteration 1/3, predicted
    success likelihood: 37.8%) ...", ``source: "user"``, written by the agent after a turn the critic scored) was
    listed in ``user_prompts`` as if the user had typed it; a real OpenHands-CLI conversation."""
    run = _one(OH_ITERATIVE)
    assert run.task == "hi"
    assert "user_prompts" not in run.metadata
    assert run.metadata["critic_followups"] == 3


def test_openhands_sdk_recovered_multi_call_step_keeps_all_its_calls() -> None:
    """Bug: a model response with two calls, killed while they ran: the crash recovery of an agent server before
    software-agent-sdk #4488 answered the first call off the branch, and only that call was put back; the step's
    second call (``file_editor view``) was lost."""
    run = _one(OH_REVIEW / "0a1b2c3d00004000800000000000f0e3")
    assert [s.action for s in run.steps] == ["terminal", "terminal", "file_editor"]
    assert run.steps[1].error.startswith("A restart occurred while this tool was in progress")
    assert not run.steps[2].observation
    assert run.outcome is Outcome.infra_error


def test_openhands_sdk_recovered_multi_call_step_after_4488_keeps_all_its_calls() -> None:
    """Bug: the same crash after #4488: the recovery error is parented to the first call, so the response's second
    call is its sibling off the branch, and it was lost."""
    run = _one(OH_REVIEW / "0a1b2c3d00004000800000000000f0e7")
    assert [s.action for s in run.steps] == ["terminal", "terminal", "file_editor"]
    assert run.steps[1].error.startswith("A restart occurred while this tool was in progress")


def test_openhands_sdk_killed_multi_call_step_keeps_its_calls() -> None:
    run = _one(OH_REVIEW / "0a1b2c3d00004000800000000000f0e4")
    assert [s.action for s in run.steps] == ["terminal", "terminal", "file_editor"]
    assert run.metadata["execution_status"] == "running"


def test_openhands_sdk_running_status_after_navigate_back_reads_the_branch_not_the_abandoned_one() -> None:
    """Bug: a conversation the user took back to an earlier event (``navigate_to``) whose saved status was left
    ``running`` was read with the abandoned branch past the leaf (three more steps and a ``finish``): a killed
    process leaves at most one step past the leaf."""
    run = _one(OH_REVIEW / "0a1b2c3d00004000800000000000f0e1")
    assert _commands(run) == ["ls /nonexistent_dir_xyz"]


def test_openhands_sdk_events_past_the_leaf_are_read_only_while_running_and_in_line() -> None:
    assert _commands(_one(OH_REVIEW / "0a1b2c3d00004000800000000000f0e2")) == ["ls /nonexistent_dir_xyz"]  # idle
    assert _commands(_one(OH_REVIEW / "0a1b2c3d00004000800000000000f0e8")) == ["ls /nonexistent_dir_xyz"]  # a fork


def test_openhands_sdk_killed_step_with_a_token_event_keeps_its_call() -> None:
    """The one-step rule past a stale leaf counts calls and messages, not the bookkeeping a step writes with them
    (vLLM's ``TokenEvent`` before the calls)."""
    run = _one(OH_REVIEW / "0a1b2c3d00004000800000000000f0e9")
    assert _commands(run) == ["ls /nonexistent_dir_xyz", "echo hello > hello.txt && cat hello.txt"]

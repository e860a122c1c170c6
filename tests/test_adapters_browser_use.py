"""browser-use agent histories (``agent.save_history`` / ``AgentHistoryList.save_to_file``), read from real files
committed on GitHub (tests/fixtures/browser-use/.browseruse30/README.md)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from trajsearch.actions import ran
from trajsearch.ingest import detect
from trajsearch.ingest.detect import detect_format
from trajsearch.ingest.read import read_inputs
from trajsearch.model import TASK_SEEN_BY_AGENT, Outcome

from adapter_support import only
from cli_support import run_cli, unnoted

FIXTURES = Path(__file__).parent / "fixtures" / "browser-use" / ".browseruse30"
DONE = FIXTURES / "jakkaj-tools-AgentHistory.json"
UNFINISHED = FIXTURES / "maromsv-pentest-agent-agent_history.json"
#: A real 0.13.14 run that used its max_steps: two items of the agent's, then browser-use's note of it.
MAX_STEPS = FIXTURES.parent / ".aud33" / "browser-use-0.13.14-max-steps-AgentHistory.json"


def test_each_action_is_a_step_with_its_result_and_done_is_the_answer() -> None:
    assert detect_format(DONE) == "browser-use"
    run = only(DONE)
    assert run.outcome is Outcome.success and run.failure is None
    assert [s.action for s in run.steps[:3]] == ["search_google", "wait", "open_tab"]
    first = run.steps[0]
    assert first.arguments == {"query": "function calling leaderboard AI models tool use official leaderboard"}
    assert first.observation.endswith('in Google') and first.error is None
    # the model's evaluation, memory and next goal (current_state, before 0.3.2) are the step's first action's thought
    assert first.thought.startswith("Evaluation: Unknown - No previous actions") and "\nMemory: Step 0/100" in \
        first.thought and "\nNext goal: Search the web" in first.thought
    assert run.steps[1].thought is None
    # a click's error is the step's error; the wait after it was never run
    click = next(s for s in run.steps if s.action == "click_element_by_index")
    assert click.error.startswith("Failed to click element: <a href=\"https://gorilla.cs.berkeley.edu/leaderboard")
    after = run.steps[click.index + 1]
    assert after.action == "wait" and not ran(after) and after.observation is None
    answer = run.steps[-1]
    assert answer.action == "respond" and answer.arguments["content"].startswith("Top 10 AI agents by tool/function")
    assert run.created_at.isoformat() == "2025-10-04T05:17:48.559810+00:00"
    assert run.steps[-1].started_at.isoformat() == "2025-10-04T05:20:11.267972+00:00"
    assert run.steps[-1].ended_at.isoformat() == "2025-10-04T05:20:43.663279+00:00"


def test_a_history_pydantic_dumped_itself_names_each_action_among_its_null_keys(tmp_path: Path) -> None:
    """``history.model_dump_json()`` (pydantic's own dump, not ``save_to_file``'s) writes every action's key, those
    not taken null: the one set is the action."""
    document = json.loads(DONE.read_text())
    for item in document["history"]:
        item["model_output"]["action"] = [{"go_to_url": None, **action, "scroll_down": None}
                                          for action in item["model_output"]["action"]]
    (tmp_path / "dumped.json").write_text(json.dumps(document))
    assert [s.action for s in only(tmp_path / "dumped.json").steps] == [s.action for s in only(DONE).steps]


def test_a_history_before_0_7_11_names_its_first_goal_as_a_placeholder_task() -> None:
    """The label comes first, so a clipped task (the dry run's ``first task``, a summary's goal) still shows it: the
    first goal is a sub-goal (real files: "Search the web for ...", "Fill the 'First Name' field ...")."""
    run = only(DONE)
    assert run.task.startswith("[no task recorded before browser-use 0.7.11] first goal: Search the web for "
                               "official leaderboards on AI agent tool/function calling performance (e.g.")
    assert run.metadata[TASK_SEEN_BY_AGENT] is False and run.metadata["task_from"] == "the model's first next_goal"
    # the step 0 browser-use ran itself (initial_actions) is no goal of the model's: the first page names the run
    unfinished = only(UNFINISHED)
    assert unfinished.task == "[no task recorded before browser-use 0.7.11] first page: " \
        "https://juice-shop.herokuapp.com/#/"
    assert unfinished.metadata["task_from"] == "the first page" and unfinished.steps[0].thought is None


def test_a_history_with_state_messages_but_none_set_names_no_version(tmp_path: Path) -> None:
    """From 0.7.11 every step writes ``state_message``, null where the step failed before its state prompt was
    built: the placeholder then says no prompt was recorded, not that the history is older."""
    document = json.loads(DONE.read_text())
    for item in document["history"]:
        item["state_message"] = None
    (tmp_path / "AgentHistory.json").write_text(json.dumps(document))
    assert only(tmp_path / "AgentHistory.json").task.startswith("[no task recorded: no state prompt was recorded] "
                                                                "first goal: Search the web")


def _state_message(request: str) -> str:
    """A state prompt as ``AgentMessagePrompt`` (0.7.11 on) writes it; its shape checked on a real 0.9.5 history
    (hireshBrem/browserbrain-ai ``server/main.py`` @41597d1a, no licence, so not committed)."""
    return (f"<agent_history>\n...\n</agent_history>\n\n<agent_state>\n<user_request>\n{request}\n"
            "</user_request>\n<file_system>\n</file_system>\n</agent_state>\n")


def test_the_task_is_the_user_request_of_the_state_message(tmp_path: Path) -> None:
    """From 0.7.11 each step records the state prompt the model got, whose ``<user_request>`` is the task."""
    document = json.loads(DONE.read_text())
    task = "Find the top 10 agents on a function-calling leaderboard"
    for item in document["history"]:
        item["state_message"] = _state_message(task)
    (tmp_path / "AgentHistory.json").write_text(json.dumps(document, indent=2))
    run = only(tmp_path / "AgentHistory.json")
    assert run.task == task and TASK_SEEN_BY_AGENT not in run.metadata and "task_from" not in run.metadata


def test_a_follow_up_task_is_part_of_the_task(tmp_path: Path) -> None:
    """``Agent.add_new_task()`` wraps the task in ``<initial_user_request>`` and adds a ``<follow_up_user_request>``
    that later state prompts carry: the last prompt holds them all."""
    document = json.loads(DONE.read_text())
    task, more = "Find the top 10 agents on a function-calling leaderboard", "Now rank them by cost"
    for n, item in enumerate(document["history"]):
        item["state_message"] = _state_message(task if n < 3 else f"<initial_user_request>{task}"
                                               f"</initial_user_request>\n<follow_up_user_request> {more} "
                                               "</follow_up_user_request>")
    (tmp_path / "AgentHistory.json").write_text(json.dumps(document))
    assert only(tmp_path / "AgentHistory.json").task == f"{task}\nFollow-up: {more}"


_UNCLOSED = "<follow_up_user_request>" * 4166  # 100,000 characters of openers with no closer


@pytest.mark.parametrize("state_message, task", [
    (_state_message(f"<initial_user_request>Find it</initial_user_request>\n{_UNCLOSED}"), "Find it"),
    (_state_message("<initial_user_request>" * 4545), "<initial_user_request><initial_user_request>"),
    ("<user_request>\n" * 6666, "[no task recorded"),  # no request closed: the placeholder
], ids=["follow-ups", "initial", "user-request"])
def test_a_request_quoting_unclosed_tags_is_read_however_long(tmp_path: Path, state_message: str, task: str) -> None:
    """Each tag is found with ``str.find`` (a lazy pattern rescanned the prompt to its end from each opener left
    unclosed: 2 to 4 s at 100,000 characters; RT2 4, no time bound); what a closed tag holds is read as before."""
    document = json.loads(DONE.read_text())
    for item in document["history"]:
        item["state_message"] = state_message
    (tmp_path / "AgentHistory.json").write_text(json.dumps(document))
    assert only(tmp_path / "AgentHistory.json").task.startswith(task)


def test_the_model_s_plan_is_part_of_its_thought(tmp_path: Path) -> None:
    """From 0.12 the model may write a plan (``plan_update``) and the item it is at (``current_plan_item``)."""
    document = json.loads(DONE.read_text())
    document["history"][0]["model_output"].update(plan_update=["Find a leaderboard", "Read the top 10"],
                                                  current_plan_item=0)
    (tmp_path / "AgentHistory.json").write_text(json.dumps(document))
    thought = only(tmp_path / "AgentHistory.json").steps[0].thought
    assert thought.endswith("\nPlan: Find a leaderboard; Read the top 10\nAt plan item: 0"), thought


def test_a_history_of_0_1_12_to_0_1_16_with_one_action_and_one_result_a_step(tmp_path: Path) -> None:
    """``save_to_file`` came in 0.1.12; up to 0.1.16 a step's ``action`` and ``result`` were one object each."""
    document = json.loads(DONE.read_text())
    for item in document["history"]:
        item["model_output"]["action"], item["result"] = item["model_output"]["action"][0], item["result"][0]
    (tmp_path / "AgentHistory.json").write_text(json.dumps(document, indent=2))
    run = only(tmp_path / "AgentHistory.json")
    assert [s.action for s in run.steps] == ["search_google", "open_tab", "click_element_by_index", "open_tab",
                                             "extract_content", "respond"], [s.action for s in run.steps]
    assert run.outcome is Outcome.success and run.steps[0].observation.endswith("in Google")


def test_hostile_done_and_success_values_read_as_what_they_say(tmp_path: Path) -> None:
    document = json.loads(DONE.read_text())
    document["history"][-1]["model_output"]["action"] = [{"done": "finished"}]
    document["history"][-1]["result"][-1]["success"] = "true"
    (tmp_path / "AgentHistory.json").write_text(json.dumps(document))
    run = only(tmp_path / "AgentHistory.json")
    assert run.steps[-1].arguments == {"content": "finished"}
    assert run.outcome is Outcome.unknown and run.metadata["ended_by"] == "done, success 'true' is not true or false"


def test_the_outcome_is_the_last_result_s_done_and_success(tmp_path: Path) -> None:
    unfinished = only(UNFINISHED)
    assert unfinished.outcome is Outcome.unknown and unfinished.metadata["ended_by"].startswith("not done")
    # a step whose model output is null (the step raised) keeps its error
    assert [s.action for s in unfinished.steps] == ["go_to_url", "agent_error"]
    assert unfinished.steps[0].error.startswith("Navigation failed: Event handler")
    assert unfinished.steps[1].error == "('cannot schedule new futures after shutdown', 502)"
    document = json.loads(DONE.read_text())
    document["history"][-1]["result"][-1]["success"] = False
    (tmp_path / "failed.json").write_text(json.dumps(document))
    failed = only(tmp_path / "failed.json")
    assert failed.outcome is Outcome.failure and failed.failure.error.startswith("Top 10 AI agents")
    del document["history"][-1]["result"][-1]["success"]
    (tmp_path / "no-success.json").write_text(json.dumps(document))
    assert only(tmp_path / "no-success.json").outcome is Outcome.unknown


def test_the_judge_s_verdict_is_kept_beside_the_agent_s_own(tmp_path: Path) -> None:
    """From 0.9.6 an LLM judge (``use_judge``, on by default) attaches its ``judgement`` to the last result; like
    browser-use, the agent's own ``success`` stays the outcome, the judge's failure reason its cause."""
    document = json.loads(DONE.read_text())
    judgement = {"reasoning": "The list was read off the leaderboard.", "verdict": False,
                 "failure_reason": "The agent listed models, not agents.", "impossible_task": False,
                 "reached_captcha": True}
    document["history"][-1]["result"][-1].update(success=False, judgement=judgement)
    (tmp_path / "judged.json").write_text(json.dumps(document))
    run = only(tmp_path / "judged.json")
    assert run.outcome is Outcome.failure and run.failure.cause == "The agent listed models, not agents."
    assert run.metadata["judgement"] == judgement


def test_the_id_is_the_first_step_s_digest_kept_while_the_file_grows(tmp_path: Path) -> None:
    document = json.loads(DONE.read_text())
    document["history"] = document["history"][:2]
    (tmp_path / "partial.json").write_text(json.dumps(document))
    whole = only(DONE)
    assert whole.trajectory_id.startswith("browser-use.") and only(tmp_path / "partial.json").trajectory_id == \
        whole.trajectory_id
    assert only(UNFINISHED).trajectory_id != whole.trajectory_id


@pytest.mark.parametrize("history, said", [
    ([{"model_output": {"action": 3}, "result": [], "state": {}}], "history[0].model_output.action is int"),
    ([{"model_output": {"action": [{"": {}}]}, "result": [], "state": {}}], "history[0].model_output.action[0] is not"),
    ([{"model_output": {"action": [{"a": {}, "b": {}}]}, "result": [], "state": {}}],
     "history[0].model_output.action[0] is not one"),
])
def test_a_malformed_step_is_refused_naming_it_and_the_good_runs_kept(tmp_path: Path, history: list,
                                                                       said: str) -> None:
    shutil.copy(DONE, tmp_path / "good.json")
    (tmp_path / "bad.json").write_text(json.dumps({"history": history}))
    (tmp_path / "cut.json").write_text(UNFINISHED.read_text()[:1000])
    parsed = {Path(p.source).name: p for p in read_inputs([tmp_path], fmt="browser-use")}
    assert parsed["good.json"].trajectory.outcome is Outcome.success
    assert parsed["bad.json"].trajectory is None and said in str(parsed["bad.json"].error)
    assert parsed["cut.json"].trajectory is None and "malformed JSON" in str(parsed["cut.json"].error)


def test_a_history_with_no_steps_is_refused_saying_so(tmp_path: Path) -> None:
    (tmp_path / "AgentHistory.json").write_text(json.dumps({"history": []}))
    [parsed] = read_inputs([tmp_path / "AgentHistory.json"], fmt="browser-use")
    assert parsed.trajectory is None and "no steps" in str(parsed.error)


def test_a_file_too_big_to_parse_for_detection_is_told_by_its_head(tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """Detection parses a document whole up to ``WHOLE_PARSE_BYTES``; a history with base64 screenshots (before 0.5.8)
    can pass it: ``save_to_file``'s head tells it."""
    monkeypatch.setattr(detect, "WHOLE_PARSE_BYTES", 10_000)
    assert detect_format(DONE) == "browser-use"


def test_cli_dry_run_names_the_format_and_an_ingest_finds_a_run_by_its_action_error(home: Path) -> None:
    code, out, err = run_cli("ingest", str(FIXTURES), "-t", "acme", "--dry-run")
    assert code == 0, out + err
    assert "maromsv-pentest-agent-agent_history.json: format browser-use; runs 1; rejected 0; steps 2; errors 2; " \
           "outcomes unknown 1" in out, out
    code, out, err = run_cli("ingest", str(FIXTURES), "-t", "acme", "--json", "--quiet")
    assert code == 0 and json.loads(out)["ingested"] == 2, out + err
    code, out, err = run_cli("search", "Failed to click element", "-t", "acme", "--json")
    assert code == 0 and not unnoted(err), out + err
    assert json.loads(out)[0]["trajectory_id"] == only(DONE).trajectory_id, out
    code, out, err = run_cli("formats")
    assert code == 0 and "browser-use" in out, out + err


def test_a_run_that_used_its_max_steps_is_a_failure_and_browser_use_s_note_of_it_no_step() -> None:
    """A run out of steps ends with an item ``Agent.run`` appends itself (0.1.42 on: no model output, no metadata, an
    empty page, the one error "Failed to complete task in maximum steps"): the agent's own step limit, a failure as in
    trae_agent and openhands, not a step; the last page is the last step's (a real 0.13.14 history, .aud33)."""
    run = only(MAX_STEPS)
    assert run.task == "Find the price of the blue kettle on the local shop page"
    assert run.outcome is Outcome.failure and run.failure.error == "Failed to complete task in maximum steps"
    assert run.metadata["ended_by"] == "max steps"
    assert [s.action for s in run.steps] == ["navigate", "agent_error"]
    assert run.steps[1].error.startswith("2 validation errors for AgentOutput")
    assert run.metadata["last_url"] == "http://127.0.0.1:18767/page.html"


def test_every_max_steps_note_is_browser_use_s_not_a_step_and_the_last_one_the_verdict(tmp_path: Path) -> None:
    """``state.n_steps`` is never reset, so ``run()`` again on an agent out of steps appends a second note at once,
    and a follow-up (``add_new_task``) run after one leaves a note mid-history: none is a step or a step error, and
    ``history_steps`` counts the agent's items only."""
    history = json.loads(MAX_STEPS.read_text())["history"]
    *taken, note = history
    (tmp_path / "rerun.json").write_text(json.dumps({"history": [*taken, note, note]}))
    (tmp_path / "follow-up.json").write_text(json.dumps({"history": [*taken, note, *taken]}))
    rerun, follow_up = only(tmp_path / "rerun.json"), only(tmp_path / "follow-up.json")
    assert rerun.outcome is Outcome.failure and rerun.metadata["ended_by"] == "max steps"
    assert [s.action for s in rerun.steps] == ["navigate", "agent_error"]
    assert rerun.metadata["last_url"] == "http://127.0.0.1:18767/page.html" and rerun.metadata["history_steps"] == 2
    assert [s.action for s in follow_up.steps] == ["navigate", "agent_error"] * 2
    assert follow_up.outcome is Outcome.unknown and follow_up.metadata["history_steps"] == 4
    assert only(MAX_STEPS).metadata["history_steps"] == 2


def test_a_history_of_only_the_max_steps_note_is_refused_not_given_the_note_s_id(tmp_path: Path) -> None:
    """``run(max_steps=0)`` writes browser-use's note alone: no step of the agent's to read or to name the run by
    (the id, a digest of the first item, was the same for every such file)."""
    note = json.loads(MAX_STEPS.read_text())["history"][-1]
    (tmp_path / "AgentHistory.json").write_text(json.dumps({"history": [note]}))
    [parsed] = read_inputs([tmp_path / "AgentHistory.json"], fmt="browser-use")
    assert parsed.trajectory is None and "no agent step: only browser-use's note" in str(parsed.error)

"""File-per-run formats on real third-party files: mini-swe-agent, SWE-agent, tau-bench, tau2-bench, ATIF.

Every test goes through the public reader (``read_dump`` / ``detect_format``). The fixtures are real files
(``tests/fixtures/<format>/.real/``, sources in the ``SOURCE.md`` beside them); where a test needs a shape
those files lack (a crashed tau-bench run, a tau2 dir-layout run, an ATIF-v1.7 root) it derives it from a
real file in ``tmp_path``, following the producer's own code (named in each test).
"""

from __future__ import annotations

import copy
import json
import shutil
from pathlib import Path

import pytest

from trajsearch.ingest.read import detect_format, read_dump
from trajsearch.model import Outcome

from adapter_support import only, runs

FIXTURES = Path(__file__).parent / "fixtures"
MINI_RFC = FIXTURES / "mini-swe-agent/.real/rfc-mini-swe-agent-trajectory.json"
MINI_BARE = FIXTURES / "mini-swe-agent/.real/test_data/github_issue.traj.json"
SWE_DEMO = (FIXTURES / "swe-agent/.real/gpt4__swe-bench-dev-easy_first_only__default__t-0.00__p-0.95__c-3.00__install-1"
            / "pydicom__pydicom-1458.traj")
SWE_V1 = (FIXTURES / "swe-agent/.real/gpt4__swe-agent-test-repo__default_from_url__t-0.00__p-0.95__c-3.00__install-1"
          / "6e44b9__sweagenttestrepo-1c2844.traj")
SWE_HISTORY = FIXTURES / "swe-agent/.real/demonstrations/function_calling_simple.traj"
SWE_CODER = FIXTURES / "swe-agent/.real/coder/trajs/django__django-11099.traj"
SWE_SHELL = FIXTURES / "swe-agent/.real/20240825_SWE-agent_doubao-pro-128k/trajs/fasterxml__jackson-databind-3851.traj"
TAU_GROK = FIXTURES / "tau-bench/.real/tool-calling-grok-3-0.0_range_0--1_user-grok-3-llm_0921131646.json"
TAU2 = FIXTURES / "tau2-bench/.real/airline_run1.json"
ATIF_DIR = FIXTURES / "atif/.real/terminus_2"
ATIF_INVALID = ATIF_DIR / "hello-world-invalid-json.trajectory.json"
ATIF_CONT = ATIF_DIR / "hello-world-context-summarization-linear-history.trajectory.cont-1.json"
ATIF_OPENHANDS = FIXTURES / "atif/.real/openhands/hello-world.trajectory.no_function_calling.json"
HELLO = 'Create a file called hello.txt with "Hello, world!" as the content.'


# -- mini-swe-agent ------------------------------------------------------------------------


def test_mini_swe_agent_content_parts_give_the_task() -> None:
    """Bug: Anthropic-style ``content`` parts gave "no user message holding the task"."""
    assert detect_format(MINI_RFC) == "mini-swe-agent"
    run = only(MINI_RFC)
    assert run.task == HELLO  # cut out of "Please solve this issue: {{task}} ..." by the saved instance_template
    assert [s.arguments for s in run.steps] == [
        {"command": 'echo "Hello, world!" > hello.txt'},
        {"command": "cat hello.txt"},
        {"command": "echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT"},
    ]
    assert {s.action for s in run.steps} == {"bash"} and not any(s.error for s in run.steps)
    assert run.steps[1].observation == "<returncode>0</returncode>\n<output>\nHello, world!\n</output>"
    assert run.steps[0].thought.startswith("To create a file called hello.txt")
    assert run.outcome is Outcome.success and run.metadata["exit_status"] == "Submitted"
    assert run.model_id == "anthropic/claude-3-5-sonnet-20241022"  # info.config.model.model_name
    assert run.tool_versions == {"mini-swe-agent": "1.13.4"}
    assert run.created_at.isoformat() == "2025-10-10T06:35:27+00:00"  # the API response's own time


@pytest.mark.parametrize("extra", [{}, {"interrupt_type": "UserRejection"}])
def test_mini_swe_agent_a_command_the_user_rejected_is_a_step_error(tmp_path: Path, extra: dict) -> None:
    """Confirm mode: the interactive agent answers a refused command with "Command not executed. The user
    rejected your command with the following message: ..." (``interrupt_type: UserRejection`` since 1.x)."""
    record = json.loads(MINI_RFC.read_text())
    refusal = "Command not executed. The user rejected your command with the following message: use printf"
    record["messages"][3] = {"role": "user", "content": refusal, **({"extra": extra} if extra else {})}
    path = tmp_path / "cfg" / MINI_RFC.name
    path.parent.mkdir()
    path.write_text(json.dumps(record))
    run = only(path)
    assert run.steps[0].error == "not run: " + refusal and run.steps[1].error is None


def test_mini_swe_agent_bare_message_list_is_one_run_with_fenced_actions() -> None:
    """Bugs: a JSON array of messages was one rejection per message; the mswea_bash_command fence was not
    parsed, so every action was None and exit code 0 was flagged as an error."""
    assert detect_format(MINI_BARE) == "mini-swe-agent"
    results = list(read_dump(MINI_BARE))
    assert len(results) == 1 and results[0].ok, [r.error for r in results]
    run = results[0].trajectory
    assert run.task.startswith("GitHub Issue: SyntaxError: invalid syntax\n\nI'm running `missing_colon.py`")
    assert "You can execute bash commands" not in run.task
    assert len(run.steps) == 10 and {s.action for s in run.steps} == {"bash"}
    assert run.steps[0].arguments == {
        "command": "cat /Users/fuchur/Documents/24/git_sync/swe-agent-test-repo/tests/./missing_colon.py"}
    assert run.steps[0].error.endswith("No such file or directory (exit code 1)")
    assert run.steps[1].arguments == {"command": "ls -la"} and run.steps[1].observation.startswith("<returncode>0")
    assert [s.index for s in run.steps if s.error] == [0, 7]  # a missing file, then ZeroDivisionError: never rc 0
    assert run.steps[7].error == "ZeroDivisionError: division by zero (exit code 1)"
    assert run.steps[-1].arguments["command"].startswith("echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT")
    assert run.outcome is Outcome.unknown  # a bare list records no exit status
    assert run.trajectory_id == "real.test_data.github_issue"  # no instance_id: named by its place


def test_mini_swe_agent_v2_shapes(tmp_path: Path) -> None:
    """2.x shapes from mini-swe-agent's own code: ``extra.actions`` of a text-based model, the JSON
    observation of ``mini.yaml``, a Responses API turn (``litellm_response_model``) and its
    ``function_call_output``, and the ``exit`` message."""
    base = json.loads(MINI_RFC.read_text())
    messages = base["messages"][:2] + [
        {"role": "assistant", "content": "Look first.\n\n```mswea_bash_command\nls\n```",
         "extra": {"actions": [{"command": "ls"}], "timestamp": 1760078200.0}},
        {"role": "user", "content": '{\n  "returncode": 2,\n  "output": "ls: cannot access x: No such file"\n}',
         "extra": {"returncode": 2, "timestamp": 1760078201.0}},
        {"object": "response", "model": "gpt-5", "output": [
            {"type": "reasoning", "summary": [{"type": "summary_text", "text": "Write the file."}]},
            {"type": "function_call", "call_id": "fc_1", "name": "bash",
             "arguments": json.dumps({"command": "echo hi > hello.txt"})}],
         "extra": {"actions": [{"command": "echo hi > hello.txt", "tool_call_id": "fc_1"}], "timestamp": 1760078202.0}},
        {"type": "function_call_output", "call_id": "fc_1", "output": "<returncode>0</returncode>\n<output>\n</output>",
         "extra": {"returncode": 0, "timestamp": 1760078203.0}},
        {"role": "exit", "content": "", "extra": {"exit_status": "Submitted", "submission": ""}},
    ]
    path = tmp_path / "cfg" / "hello.traj.json"
    path.parent.mkdir()
    path.write_text(json.dumps({**base, "messages": messages, "trajectory_format": "mini-swe-agent-1.1"}))
    run = only(path)
    assert [(s.action, s.arguments) for s in run.steps] == [
        ("bash", {"command": "ls"}), ("bash", {"command": "echo hi > hello.txt"})]
    assert run.steps[0].error == "ls: cannot access x: No such file (exit code 2)"
    assert run.steps[1].thought == "Write the file." and run.steps[1].error is None
    assert run.task == HELLO and run.outcome is Outcome.success


def test_mini_swe_agent_tool_replies_with_no_call_id_are_the_results_of_turns_with_no_recognised_action() -> None:
    """Bug (real: Berkeley-CS-264 homework-4-react-swe-agent-whxwhx, a mini-swe-agent-derived agent writing its calls
    as ``----BEGIN_FUNCTION_CALL----`` text): its ``tool`` replies carry no ``tool_call_id`` and answer a turn with no
    recognised action, and every one was dropped: 8 turns, no observation."""
    run = only(FIXTURES / "mini-swe-agent/.real/cs264-react/django__django-10973.traj.json")
    assert len(run.steps) == 8 and [s.action for s in run.steps] == ["run_bash_cmd"] * 5 + [
        "replace_in_file", "run_bash_cmd", "finish"]  # its own call syntax, read as its scaffold parses it
    assert run.steps[0].arguments == {"command": "ls -la"}
    assert all("----TOOL RESULT BEGIN----" in s.observation for s in run.steps)
    assert "No such file or directory" in run.steps[1].observation
    assert all(s.error is None for s in run.steps)  # a command's output, not a nudge answering a malformed turn


MINI_SYSTEM_REPLIES = FIXTURES / "mini-swe-agent/.real/cs294-system-replies/astropy__astropy-7166.traj.json"


def test_mini_swe_agent_tool_replies_saved_as_system_messages_are_observations(tmp_path: Path) -> None:
    """Bug (real: ChiChuRita/cs294-264-hw ``baseline-results/astropy__astropy-7166``, a mini-swe-agent-derived agent
    saving its tools' output as ``role: "system"`` messages): every reply was dropped (15 of the 16 turns answered,
    none kept) and so were its errors. The system prompt before the task is still no turn's reply."""
    run = only(MINI_SYSTEM_REPLIES)
    assert len(run.steps) == 16 and all(s.observation for s in run.steps[:15])
    assert run.steps[1].observation.startswith("Result:\n## main\nmain\nastropy/utils/tests/test_misc.py:78:")
    assert [(s.index, s.error) for s in run.steps if s.error] == [
        (0, "Tool 'run_bash_cmd' error (no message)"),  # the tool raised
        (5, "error: unrecognized input"),  # output opening as a failure (no return code is saved)
        (11, "UnicodeDecodeError: 'ascii' codec can't decode byte 0xc3 in position 12028: ordinal not in range(128)"),
    ]
    record = json.loads(MINI_SYSTEM_REPLIES.read_text())
    record["messages"][0]["content"] = "You are a ReAct agent solving software engineering tasks."  # its own prompt
    prompted = tmp_path / MINI_SYSTEM_REPLIES.name
    prompted.write_text(json.dumps(record))
    again = only(prompted)
    assert [s.observation for s in again.steps] == [s.observation for s in run.steps] and again.task == run.task


def test_mini_swe_agent_system_message_mid_run_is_no_reply_in_an_ordinary_run(tmp_path: Path) -> None:
    """Bug (review): once a ``system`` message after the task was read as a tool reply (for the derived agent
    above), a system message between an ordinary text-based run's action and its ``user`` observation (a
    step-limit reminder, a note a harness adds) took the action's observation, and the real one became a step of
    its own with no action. Only a run answering through system messages alone, or a system message worded as such
    an agent's reply, gives one."""
    base = json.loads(MINI_RFC.read_text())
    messages = base["messages"][:2] + [
        {"role": "assistant", "content": "THOUGHT: look around\n\n```bash\nls\n```"},
        {"role": "system", "content": "Reminder: you have 2 steps left before the step limit."},
        {"role": "user", "content": "<returncode>0</returncode>\n<output>\nfoo.py\n</output>"},
        {"role": "assistant", "content": "THOUGHT: done\n\n```bash\necho COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT\n```"},
        {"role": "user", "content": "diff --git a/foo.py b/foo.py\n"},
    ]
    path = tmp_path / "mid-system.traj.json"
    path.write_text(json.dumps({**base, "messages": messages}))
    run = only(path)
    assert [(s.action, s.arguments["command"].split()[0], s.observation) for s in run.steps] == [
        ("bash", "ls", "<returncode>0</returncode>\n<output>\nfoo.py\n</output>"),
        ("bash", "echo", "diff --git a/foo.py b/foo.py\n")]
    assert all(s.error is None for s in run.steps)


def test_mini_swe_agent_parser_error_of_a_derived_agent_is_the_turns_error(tmp_path: Path) -> None:
    """Bug (review; real: Berkeley-CS-264 homework-4-react-swe-agent-whxwhx ``results/astropy__astropy-7166``, the
    agent above that answers through ``tool`` messages): its complaint about a turn it could not parse is a
    ``system`` message, ``ParserError: Missing BEGIN_FUNCTION_CALL marker.. You must ALWAYS end with a valid
    function call ...``. It became that turn's observation with no error (only the other agent's ``Format error:``
    was known). It is the turn's error, without the instructions after it."""
    record = json.loads((FIXTURES / "mini-swe-agent/.real/cs264-react/django__django-10973.traj.json").read_text())
    said = ("ParserError: Missing BEGIN_FUNCTION_CALL marker.. You must ALWAYS end with a valid function call "
            "including function name and arguments, following the specified template. Respond again using this "
            "exact format:\n\nyour_thoughts_here\n...\n----BEGIN_FUNCTION_CALL----\nfunction_name\n")
    record["messages"][4:4] = [
        {"role": "assistant", "content": '----------------------------\n|MESSAGE(role="assistant", id=8)\n'
                                         "----END_FUNCTION_CALL"},
        {"role": "system", "content": said}]
    path = tmp_path / "django__django-10973.traj.json"
    path.write_text(json.dumps(record))
    run = only(path)
    assert len(run.steps) == 9 and run.steps[1].observation == said
    assert [(s.index, s.error) for s in run.steps if s.error] == [(1, "ParserError: Missing BEGIN_FUNCTION_CALL marker.")]
    assert all("----TOOL RESULT BEGIN----" in s.observation for s in run.steps if s.index != 1)


CS264_HW4 = FIXTURES / "mini-swe-agent/.real/cs264-hw4"


def test_mini_swe_agent_homework_run_saved_without_its_opening_reads_task_and_calls_from_its_context_log() -> None:
    """Bug (real: Berkeley-CS-264 homework-4-react-swe-agent-mbhaskar1 ``results/django__django-16662`` and
    ``django__django-13297``, trimmed; see ``SOURCE.md``): the agent saves its turns and replies as ``messages``
    with no system prompt and no task (they are only in the ``|MESSAGE(role=..., id=N)|`` log in ``context``) and
    answers each call with a ``user`` message ``Tool '<name>' returned:``. The first reply was taken as the task and
    lost from its step, every later successful result was flagged as an error (a format-error nudge), and no step
    had an action."""
    run = only(CS264_HW4 / "mbhaskar1/results/django__django-16662/django__django-16662.traj.json")
    assert run.task.startswith("Migration import ordering violates coding style and isort defaults\nDescription")
    assert [s.action for s in run.steps] == ["search_code", "show_file", "replace_in_file"]
    assert run.steps[0].arguments == {"pattern": '"from django.db import migrations, models"', "path": ".",
                                      "file_pattern": "*.py"}
    assert run.steps[0].observation.startswith("Tool 'search_code' returned:\n./django/db/migrations/")
    assert [(s.index, s.error) for s in run.steps if s.error] == [
        (2, "Error executing 'replace_in_file': TypeError: Missing required argument: new_content")]
    nudged = only(CS264_HW4 / "mbhaskar1/results/django__django-13297/django__django-13297.traj.json")
    assert nudged.task.startswith("TemplateView.get_context_data()'s kwargs returns SimpleLazyObjects")
    assert [(s.action, s.error) for s in nudged.steps] == [
        (None, "Error: No function call detected in your response. You MUST call a function using the required "
               "format. Review the RESPONSE FORMAT section and try again."),
        ("list_directory", None)]


def test_mini_swe_agent_homework_run_with_no_messages_is_read_from_its_context_log() -> None:
    """Bug (real: Berkeley-CS-264 homework-4-react-swe-agent-23phillipsm ``results/astropy__astropy-7166``,
    trimmed): ``"messages": []`` and the whole conversation in the ``context`` log; it was refused as "the run saved
    no conversation"."""
    run = only(CS264_HW4 / "23phillipsm/results/astropy__astropy-7166/astropy__astropy-7166.traj.json")
    assert run.task.startswith("InheritDocstrings metaclass doesn't work for properties\nInside the InheritDocstrings")
    assert [(s.action, s.arguments) for s in run.steps] == [
        ("run_bash_cmd", {"command": "ls -la"}), ("run_bash_cmd", {"command": 'grep -R "class InheritDocstrings" -n .'}),
        ("run_bash_cmd", {"command": "sed -n '1,240p' astropy/utils/misc.py"})]
    assert run.steps[1].observation == (
        "Tool run_bash_cmd returned: ./astropy/utils/misc.py:497:class InheritDocstrings(type):\n")
    assert not any(s.error for s in run.steps) and run.model_id == "gpt-5-mini"


def test_mini_swe_agent_runs_of_two_systems_under_generic_results_folders_keep_distinct_ids() -> None:
    """Bug (real: astropy__astropy-7166 run by two CS 294-264 homework agents, Berkeley-CS-264
    homework-4-react-swe-agent-mbhaskar1 and -23phillipsm, each saved as ``results/<id>/<id>.traj.json``): both got
    the id ``results.astropy__astropy-7166``, so ingesting the second system in a later job silently replaced the
    first. ``results/`` names no system; the folder above it does. Other layouts keep their ids."""
    ids = {run.trajectory_id: run.task_id for run in runs(CS264_HW4)}
    assert {i for i, task in ids.items() if task == "astropy__astropy-7166"} == {  # no reply saves a mark: by folder
        "gpt-5-mini.astropy__astropy-7166.mbhaskar1.results", "gpt-5-mini.astropy__astropy-7166.23phillipsm.results"}
    assert only(FIXTURES / "mini-swe-agent/.real/batch-2.4.6/demo__greet-11/demo__greet-11.traj.json"
                ).trajectory_id == "fake-gpt.demo__greet-11.72a257502c"


def test_mini_swe_agent_xml_function_calls_of_swe_smith_rows_are_actions() -> None:
    """Bug (real: a SWE-smith trajectory row, zhu-yiqi/agent-data-protocol ``datasets/swe-smith/sample_raw.json``,
    trimmed; read with the format forced, as nothing claims dataset rows): its turns call tools in SWE-agent's XML
    syntax (``<function=bash>`` ``<parameter=command>...``), which was not read, so every ``OBSERVATION:`` reply was
    taken as a format-error nudge answering the turn: no step had an action and all but one were errors."""
    run = only(FIXTURES / "mini-swe-agent/.real/swe-smith/sample_raw.json", fmt="mini-swe-agent")
    assert [(s.action, s.arguments) for s in run.steps] == [
        ("bash", {"command": 'find /testbed -type f -name "*.py" | grep -v "__pycache__" | sort'}),
        ("str_replace_editor", {"command": "view", "path": "/testbed/arrow/arrow.py"}),
        ("bash", {"command": 'grep -n "__format__" /testbed/arrow/arrow.py'})]
    assert run.steps[0].observation.startswith("OBSERVATION:\n/testbed/arrow/__init__.py")
    assert run.steps[1].thought == "Let's look at the main Arrow class implementation, which is likely in `arrow.py`:"
    assert not any(s.error for s in run.steps)


def test_mini_swe_agent_xml_call_quoting_a_call_in_a_parameter_is_the_outer_call(tmp_path: Path) -> None:
    """Regression (review 4, F7): a call ended at any ``<function=`` inside its parameters and the last call counts,
    so a ``str_replace_editor create`` whose ``file_text`` quotes SWE-agent's call syntax (a test of a call parser)
    was read as the quoted ``bash`` call. The real SWE-smith row (zhu-yiqi/agent-data-protocol
    ``datasets/swe-smith/sample_raw.json``) with its second call replaced by such a ``create``: the call is the
    outermost one, its ``file_text`` whole."""
    record = json.loads((FIXTURES / "mini-swe-agent/.real/swe-smith/sample_raw.json").read_text())
    file_text = ('def test_xml():\n    assert parse("<function=bash><parameter=command>ls</parameter></function>") '
                 '== ("bash", {"command": "ls"})')
    record[0]["messages"][4]["content"] = (
        "I'll add a test for the XML call parser.\n\n<function=str_replace_editor>\n<parameter=command>create"
        "</parameter>\n<parameter=path>/testbed/tests/test_parse.py</parameter>\n"
        f"<parameter=file_text>{file_text}\n</parameter>\n</function>")
    (tmp_path / "sample_raw.json").write_text(json.dumps(record))
    step = only(tmp_path / "sample_raw.json", fmt="mini-swe-agent").steps[1]
    assert (step.action, step.arguments) == ("str_replace_editor", {
        "command": "create", "path": "/testbed/tests/test_parse.py", "file_text": file_text})
    assert step.thought == "I'll add a test for the XML call parser."


def test_mini_swe_agent_xml_call_the_agent_rejected_as_a_format_error_is_no_action(tmp_path: Path) -> None:
    """Regression (review of 61108a4): a model that writes its own ``<function=bash>`` calls (Qwen3-Coder,
    SWE-agent-LM) in stock mini-swe-agent gets no bash block run: the agent answers with its format error. The real
    1.13.4 run (``MINI_RFC``) with such a turn inserted, answered as mini-swe-agent answers it (its saved
    ``format_error_template`` rendered, 0 actions), read the command as a ``bash`` step that ran with no error; the
    turn is the format error, and the calls the agent did run stay actions."""
    record = json.loads(MINI_RFC.read_text())
    template = record["info"]["config"]["agent"]["format_error_template"]
    nudge = template.replace("{{actions|length}}", "0")
    turn = ("THOUGHT: Let me look first.\n\n<function=bash>\n<parameter=command>\nrm -rf build\n</parameter>\n"
            "</function>")
    record["messages"][2:2] = [{"role": "assistant", "content": turn}, {"role": "user", "content": nudge}]
    path = tmp_path / "cfg" / MINI_RFC.name
    path.parent.mkdir()
    path.write_text(json.dumps(record))
    run = only(path)
    assert (run.steps[0].action, run.steps[0].arguments) == (None, None)
    assert run.steps[0].error == "Please always provide EXACTLY ONE action in triple backticks, found 0 actions."
    assert run.steps[0].thought.startswith("Let me look first.\n\n<function=bash>")
    assert [s.action for s in run.steps[1:]] == ["bash"] * 3


def test_mini_swe_agent_xml_call_saved_without_its_closing_tag_is_an_action() -> None:
    """Bug (real: SWE-Play's first trajectory row, zhu-yiqi/agent-data-protocol
    ``datasets/swe-play-trajectories/sample_raw.json``, trimmed; format forced): its last turn, the ``finish`` call,
    is saved cut at the stop sequence with no ``</function>``, and was read as no action."""
    run = only(FIXTURES / "mini-swe-agent/.real/swe-play/sample_raw.json", fmt="mini-swe-agent")
    assert [s.action for s in run.steps] == ["str_replace_editor", "finish"]
    assert run.steps[-1].arguments["task_completed"] == "true"
    assert run.steps[-1].arguments["message"].startswith("Task 1.2.1 has been successfully completed!")
    assert not any(s.error for s in run.steps)


def test_mini_swe_agent_patch_of_a_run_saved_with_no_exit_message_is_kept() -> None:
    """Bug (real: the same ChiChuRita/cs294-264-hw run, ``info.submission`` a 531-character patch, no exit message and
    no ``exit_status``, the run ending on its unanswered ``finish`` call): the patch was read nowhere and counted 0."""
    run = only(MINI_SYSTEM_REPLIES)
    patch = json.loads(MINI_SYSTEM_REPLIES.read_text())["info"]["submission"]
    assert run.steps[-1].observation == patch and run.steps[-1].error is None
    assert patch.startswith("diff --git a/astropy/utils/misc.py b/astropy/utils/misc.py")
    assert run.metadata["submission_chars"] == 531 and run.outcome is Outcome.unknown  # handed in, not evaluated


def test_mini_swe_agent_llm_named_by_a_config_string() -> None:
    """Bug (real: the same CS-264 run, ``info.config: {"agent": "swe-agent", "model": "gpt-5-mini"}``): a config
    whose ``model`` is the name itself, not mini-swe-agent's ``{"model_name": ...}``, gave no model_id."""
    assert only(FIXTURES / "mini-swe-agent/.real/cs264-react/django__django-10973.traj.json").model_id == "gpt-5-mini"


def test_mini_swe_agent_run_saved_with_no_message_is_refused_as_empty() -> None:
    """Bug (real: LakshyAAAgrawal/cs294-264-hw-FA25 ``results10/django__django-11179``, ``"messages": []``): it was
    refused as "missing field 'messages'", though the field is there, empty."""
    [result] = read_dump(FIXTURES / "mini-swe-agent/.real/cs294-empty/django__django-11179.traj.json")
    assert result.error == "field 'messages' is empty: the run saved no conversation, so no task"


# -- SWE-agent -----------------------------------------------------------------------------


def test_swe_agent_demonstration_is_not_the_task() -> None:
    """Bug: a 0.x history opening with a demonstration gave the demo's (marshmallow) issue as task."""
    run = only(SWE_DEMO)
    assert run.task.startswith("Pixel Representation attribute should be optional for pixel data handler")
    assert "TimeDelta" not in run.task and "INSTRUCTIONS:" not in run.task
    assert (run.task_id, run.task_family) == ("pydicom__pydicom-1458", "pydicom/pydicom")
    assert run.model_id == "gpt4"  # the 0.x run directory's model part
    assert [s.action for s in run.steps] == [
        "create", "edit", "bash", "find_file", "open", "edit", "edit", "edit", "edit", "bash", "bash", "submit"]
    assert [s.index for s in run.steps if s.error] == [2, 5, 6, 7]  # the reproduced bug, three rejected edits
    assert run.outcome is Outcome.success and "not evaluated" in run.metadata["outcome_basis"]


def test_swe_agent_demonstration_found_by_its_markers_too(tmp_path: Path) -> None:
    """Older files wrap the demonstration in markers without the ``is_demo`` flag."""
    record = json.loads(SWE_DEMO.read_text())
    for msg in record["history"]:
        msg.pop("is_demo", None)
    path = tmp_path / SWE_DEMO.parent.name / SWE_DEMO.name
    path.parent.mkdir()
    path.write_text(json.dumps(record))
    assert only(path).task.startswith("Pixel Representation attribute should be optional")


def test_swe_agent_v1_task_from_the_saved_template_and_model_from_replay_config() -> None:
    run = only(SWE_V1)
    assert run.task.startswith("SyntaxError: invalid syntax\nI'm running `missing_colon.py` as follows:")
    assert "\r" not in run.task and "INSTRUCTIONS" not in run.task
    assert run.task_id == "SWE-agent__test-repo-i1" and run.model_id == "gpt-4o"
    assert [s.action for s in run.steps][0] == "find_file" and run.steps[-1].action == "submit"


def test_swe_agent_history_only_file_gives_its_steps() -> None:
    """Bug: a demonstration file (``history`` only, as run_traj_to_demo.py writes it) was rejected
    with "missing field 'trajectory'"."""
    assert detect_format(SWE_HISTORY) == "swe-agent"
    run = only(SWE_HISTORY)
    assert run.task.startswith("SyntaxError: invalid syntax\nI'm running `missing_colon.py` as follows:")
    assert [s.action for s in run.steps] == ["find_file", "open", "edit", "bash", "submit"]
    assert run.steps[0].arguments == {"command": "find_file missing_colon.py"}
    assert run.steps[0].thought.startswith("The `SyntaxError` in `missing_colon.py` is likely due to")
    assert run.steps[0].observation.startswith('Found 1 matches for "missing_colon.py"')
    assert run.steps[3].observation.startswith("8.2")  # the script's output once the colon is added
    assert "diff --git a/tests/missing_colon.py" in run.steps[4].observation
    assert run.outcome is Outcome.unknown  # no exit status in a demonstration


def test_swe_agent_llm_named_by_its_experiments_submission_folder() -> None:
    """Bug (real: multi-swe-bench/experiments ``20240825_SWE-agent_doubao-pro-128k/trajs/``): a 0.x ``.traj`` names
    no model, the submission folder does, and model_id was None."""
    assert only(SWE_SHELL).model_id == "doubao-pro-128k"


def test_swe_agent_shell_diagnostics_are_step_errors_and_its_stop_is_no_shell_command() -> None:
    """Bug: ``/bin/bash: line 2: unexpected EOF while looking for matching ...`` (33 steps of this run)
    was no step error, and the ``exit_cost`` stop was counted as a bash command."""
    run = only(SWE_SHELL)
    assert run.trajectory_id == "swe-agent.20240825_SWE-agent_doubao-pro-128k.fasterxml__jackson-databind-3851"
    assert len(run.steps) == 50 and run.outcome is Outcome.failure  # exit_cost
    assert run.steps[3].error == "/bin/bash: line 4: syntax error: unexpected end of file"
    assert sum(1 for s in run.steps if s.error) == 48
    assert run.steps[-1].action == "exit_cost" and run.steps[-1].error is None
    assert [s.action for s in run.steps].count("bash") == 48  # the rest: the stop, and one empty action


# -- tau-bench -----------------------------------------------------------------------------


def test_tau_bench_model_from_a_results_name_with_a_suffix(tmp_path: Path) -> None:
    """A results file renamed with a suffix after run.py's time (``..._0920134328__trials_1.json``, as found in
    a real fork) lost its model: the name pattern had to end at the time."""
    renamed = tmp_path / TAU_GROK.name.replace(".json", "__trials_1.json")
    renamed.write_bytes(TAU_GROK.read_bytes())
    assert {r.model_id for r in runs(renamed)} == {r.model_id for r in runs(TAU_GROK)} == {"grok-3"}


def test_tau_bench_results_name_of_a_forks_hyphenated_strategy_gives_strategy_and_model() -> None:
    """Bug (real: avaljotsingh/tau-bench, whose own agent strategies hold hyphens): the name pattern knew only
    tau-bench's four strategies, so ``tool-calling-with-preconditions-and-python-none-0.1_...`` gave strategy
    ``tool-calling`` and model ``with-preconditions-and-python-none``, and ``assertions-agent-none-0.1_...``
    matched nothing: no model, strategy, temperature or user model."""
    folder = FIXTURES / "tau-bench/.real"
    for name, strategy in (
            ("tool-calling-with-preconditions-and-python-none-0.1_range_0--1_user-none-llm_0627143046.json",
             "tool-calling-with-preconditions-and-python"),
            ("assertions-agent-none-0.1_range_80-90_user-none-llm_0618150115.json", "assertions-agent")):
        run = only(folder / name)
        assert (run.model_id, run.metadata["strategy"], run.metadata["temperature"], run.metadata["user_model"]) == (
            "none", strategy, "0.1", "none")  # "none": the fork's own word for its model, as run.py wrote it
    assert {(r.model_id, r.metadata["strategy"]) for r in runs(TAU_GROK)} == {("grok-3", "tool-calling")}  # as before


def test_tau_bench_results_name_of_a_strategy_not_known_here(tmp_path: Path) -> None:
    """A strategy this reader does not know splits before the user simulator's model when the agent ran that one;
    otherwise the name cannot say where the strategy ends: no strategy or model, the other settings kept."""
    same = tmp_path / TAU_GROK.name.replace("tool-calling-", "plan-and-act-")
    same.write_bytes(TAU_GROK.read_bytes())
    assert {(r.model_id, r.metadata["strategy"]) for r in runs(same)} == {("grok-3", "plan-and-act")}
    other = tmp_path / TAU_GROK.name.replace("tool-calling-", "plan-and-act-").replace("user-grok-3", "user-gpt-4o")
    other.write_bytes(TAU_GROK.read_bytes())
    assert {(r.model_id, "strategy" in r.metadata, r.metadata["user_model"]) for r in runs(other)} == {
        (None, False, "gpt-4o")}


def test_tau_bench_fractional_rewards_use_the_operator_threshold() -> None:
    """Bug: fractional rewards (0.65-0.99) all became failures."""
    assert detect_format(TAU_GROK) == "tau-bench"
    by_task = {r.task_id: r for r in runs(TAU_GROK)}
    assert set(by_task) == {"retail-0", "retail-8", "retail-31"}  # the domain from tools only retail has
    graded = {k: (r.outcome, round(r.reward, 2)) for k, r in by_task.items()}
    assert graded == {"retail-0": (Outcome.success, 0.93), "retail-8": (Outcome.failure, 0.0),
                      "retail-31": (Outcome.success, 0.65)}
    assert by_task["retail-0"].failure is None and by_task["retail-8"].failure.error.startswith("reward 0.0")
    strict = {r.task_id: r.outcome for r in runs(TAU_GROK, success_threshold=0.7)}
    assert strict["retail-31"] is Outcome.failure and strict["retail-0"] is Outcome.success
    run = by_task["retail-0"]
    assert run.model_id == "grok-3" and run.metadata["user_model"] == "grok-3"  # run.py's file name
    assert run.task.startswith("You are Yusuf Rossi in 19122.")
    [lookup] = [s for s in run.steps if s.action == "find_user_id_by_name_zip"]
    assert lookup.arguments == {"first_name": "Yusuf", "last_name": "Rossi", "zip": "19122"}
    assert lookup.observation == "yusuf_rossi_9620"


def test_tau_bench_crashed_run_is_kept_and_missing_rewards_are_no_verdict(tmp_path: Path) -> None:
    """Bugs: a crashed run (``traj: []`` + ``info.error``, as tau-bench's run.py writes it) was dropped; a
    missing / null reward became failure; a reward that is no number at all was silently accepted."""
    first, *_ = json.loads(TAU_GROK.read_text())
    crashed = {"task_id": 5, "reward": 0.0, "trial": 0, "traj": [],
               "info": {"error": "litellm.RateLimitError: rate limit exceeded", "traceback": "Traceback ..."}}
    no_reward = [dict(first, task_id=100 + n) for n in range(3)]
    no_reward[0].pop("reward")
    no_reward[1]["reward"] = None
    no_reward[2]["reward"] = "n/a"
    path = tmp_path / "results.json"
    path.write_text(json.dumps([crashed, *no_reward]))
    parsed = list(read_dump(path))
    crash, *ungraded = [p.trajectory for p in parsed if p.ok]
    assert crash.outcome is Outcome.infra_error and crash.reward is None
    assert crash.failure.error == "run crashed: litellm.RateLimitError: rate limit exceeded"
    assert crash.steps == [] and crash.task_id.endswith("-5") and "crashed" in crash.task
    assert [(r.outcome, r.reward, r.failure) for r in ungraded] == [(Outcome.unknown, None, None)] * 2
    [bad] = [p for p in parsed if not p.ok]
    assert bad.position == "record 4" and "field 'reward' must be a number" in bad.error


def test_tau_bench_react_turns_are_actions(tmp_path: Path) -> None:
    """tau-bench's ReAct / Act agents (``chat_react_agent.py``) write ``Action: {"name", "arguments"}`` in the
    text and get the tool output back as a user message prefixed "API output: "."""
    first, *_ = json.loads(TAU_GROK.read_text())
    first["traj"] = first["traj"][:2] + [
        {"role": "assistant", "content": 'Thought:\nFind the user first.\nAction:\n{"name": "find_user_id_by_name_zip", '
                                         '"arguments": {"first_name": "Yusuf", "last_name": "Rossi", "zip": "19122"}}'},
        {"role": "user", "content": "API output: yusuf_rossi_9620"},
        {"role": "assistant", "content": 'Thought:\nAsk which items.\nAction:\n{"name": "respond", '
                                         '"arguments": {"content": "Which items?"}}'},
        {"role": "user", "content": "The keyboard."},
    ]
    path = tmp_path / "react-gpt-4o-0.0_range_0--1_user-gpt-4o-llm_0101120000.json"
    path.write_text(json.dumps([first]))
    run = only(path)
    lookup, answer = run.steps[-2:]
    assert (lookup.action, lookup.thought, lookup.observation) == (
        "find_user_id_by_name_zip", "Find the user first.", "yusuf_rossi_9620")
    assert (answer.action, answer.arguments, answer.observation) == ("respond", {"content": "Which items?"},
                                                                      "The keyboard.")
    assert run.model_id == "gpt-4o" and run.metadata["strategy"] == "react"


def test_tau_bench_an_action_nested_too_deep_for_json_is_kept_as_text(tmp_path: Path) -> None:
    """Review SMALL32 (should): a turn whose "Action:" is followed by JSON nested deeper than Python's JSON reader
    goes (an agent's runaway output) raised RecursionError from the shared ``json_dict``, and the whole run was lost
    as "cannot convert tau-bench record"; it is text that is no action, kept as the turn's words."""
    first, *_ = json.loads(TAU_GROK.read_text())
    runaway = "Thought: look\nAction:\n" + '{"a":' * 10_000
    first["traj"] = first["traj"][:2] + [{"role": "assistant", "content": runaway}]
    path = tmp_path / "react-gpt-4o-0.0_range_0--1_user-gpt-4o-llm_0101120000.json"
    path.write_text(json.dumps([first]))
    [parsed] = read_dump(path)
    assert parsed.error is None
    said = parsed.trajectory.steps[-1]
    assert (said.action, said.arguments) == ("respond", {"content": runaway})


# -- tau2-bench ----------------------------------------------------------------------------


def test_tau2_failure_keeps_the_evaluators_note_and_a_file_of_no_simulation_says_so() -> None:
    """Bugs (real: blakeelias/tau2-bench results): a failure whose only explanation is the evaluator's note lost it;
    a results file with ``"simulations": []`` read as nothing, and the CLI sent the user looking for simulations/."""
    folder = FIXTURES / "tau2-bench/.real/relaxed-airline"
    [run] = runs(folder / "airline_relaxed_grok-4-fast-reasoning.one-simulation.json")
    assert run.failure.error == "termination user_stop; reward 0; evaluator: No acceptable outcome matched"
    [empty] = read_dump(folder / "telecom-workflow_grok-4.no-simulations.json", tenant="acme")
    assert empty.error == "no simulation in this tau2-bench results file (1 task(s), 'simulations' empty): the run recorded none"


def test_tau2_results_one_run_per_simulation() -> None:
    """Bug: tau2-bench results files were not recognised."""
    assert detect_format(TAU2) == "tau2-bench"
    found = {r.task_id: r for r in runs(TAU2)}
    assert set(found) == {"airline-0", "airline-1", "airline-9"}
    run = found["airline-0"]
    assert run.task.startswith("Reason for call:\nYou want to cancel reservation EHGLP3.")
    assert "Task instructions:" in run.task and "Airline Agent Policy" not in run.task
    assert run.trajectory_id == "tau2.airline.0.t0.c4726c14-f132-4944-a51a-465518856f47"
    assert (run.outcome, run.reward, run.model_id) == (Outcome.failure, 0.0, "whissle")
    assert run.metadata["termination_reason"] == "user_stop"
    # the task expects no write (the cancellation is refused): the one the agent made is what differed
    assert run.failure.cause == ('final database differs from the expected one; '
                                 'unexpected cancel_reservation {"reservation_id":"EHGLP3"}')
    assert run.steps[0].action == "respond" and run.steps[0].observation.startswith("Hi, I'd like to cancel")
    call = run.steps[2]
    assert (call.action, call.arguments) == ("get_reservation_details", {"reservation_id": "EHGLP3"})
    assert call.observation.startswith('{"reservation_id": "EHGLP3"')
    assert "cancel_reservation" in run.tools_used
    assert found["airline-1"].outcome is Outcome.success
    errors = [(s.action, s.error) for s in found["airline-9"].steps if s.error]
    assert errors == [("get_reservation_details", "Error: Reservation IFOYWZ not found")]


def test_tau2_env_assertions_and_solo_runs_read_as_tau2_wrote_them() -> None:
    """Bugs (real telecom runs): an unmet environment assertion was named "None" (its name is ``func_name``);
    a solo run's task was the simulated user's script, which no one read, not the ticket its agent got; the
    cause led with a database mismatch and action checks the task's reward is not based on (telecom:
    ``reward_basis`` ENV_ASSERTION only; successful runs fail those checks too)."""
    [graded] = runs(FIXTURES / "tau2-bench/.real/e2e_telecom_adversarial.json")
    assert graded.failure.cause == ("env assertion not met: assert_mobile_data_status; "
                                    "env assertion not met: assert_internet_speed")
    [solo] = runs(FIXTURES / "tau2-bench/.real/gpt-4.1_telecom_no-user_gpt-4.1_1trials.json")
    assert solo.task.startswith("The user is experiencing issues with their mobile data")
    assert "Reason for call" not in solo.task and solo.metadata.get("user_model") is None


def test_tau2_dir_layout_and_infrastructure_failures(tmp_path: Path) -> None:
    """tau2's "dir" format: results.json without simulations + simulations/<id>.json (Results.save); an
    infrastructure failure as runner/controller.py's make_infra_failure_sim writes it."""
    doc = json.loads(TAU2.read_text())
    sims = doc.pop("simulations")
    (tmp_path / "simulations").mkdir()
    (tmp_path / "results.json").write_text(json.dumps(doc))
    for sim in sims[:2]:
        (tmp_path / "simulations" / f"{sim['id']}.json").write_text(json.dumps(sim))
    crashed = {"id": "f00d", "task_id": "9", "timestamp": "2026-07-31T02:00:00", "start_time": "2026-07-31T02:00:00",
               "end_time": "2026-07-31T02:00:00", "duration": 0.0, "termination_reason": "infrastructure_error",
               "messages": [], "trial": 0, "seed": 1, "info": {"error": "worker died", "error_type": "WorkerFailure"}}
    (tmp_path / "simulations" / "f00d.json").write_text(json.dumps(crashed))
    found = {r.trajectory_id: r for r in runs(tmp_path)}
    assert len(found) == 3  # results.json holds no run of its own
    infra = found["tau2.airline.9.t0.f00d"]
    assert infra.outcome is Outcome.infra_error and "worker died" in infra.failure.error
    assert infra.task.startswith("Reason for call:")
    assert {r.task_id for r in found.values()} == {"airline-0", "airline-1", "airline-9"}


# -- ATIF ----------------------------------------------------------------------------------


def test_atif_task_is_the_instruction_not_the_prompt() -> None:
    """Bug: the task was the agent's whole first prompt (Terminus-2 boilerplate, OpenHands' example)."""
    for path in (ATIF_INVALID, ATIF_CONT, ATIF_OPENHANDS):
        assert detect_format(path) == "atif"
        assert only(path).task == HELLO, path.name


def test_a_run_id_does_not_depend_on_how_the_path_was_written(monkeypatch: pytest.MonkeyPatch) -> None:
    """Bug (read_dump API, real Terminus-2 and mini-swe-agent files): ids built from a file's directories took
    them as written, so a relative path (``terminus_2/x.json`` from ``.real``) gave another id than the absolute
    one, a duplicate run; the reader resolves the path first, for every format."""
    absolute = only(ATIF_INVALID).trajectory_id
    monkeypatch.chdir(ATIF_DIR.parent)
    assert only(Path("terminus_2") / ATIF_INVALID.name).trajectory_id == absolute
    assert absolute.endswith(".real/terminus_2/hello-world-invalid-json.trajectory")
    mini = FIXTURES / "mini-swe-agent" / ".real" / "rfc-mini-swe-agent-trajectory.json"  # no instance_id of its own
    absolute = only(mini).trajectory_id
    monkeypatch.chdir(mini.parent)
    assert only(Path(mini.name)).trajectory_id == absolute


def test_a_file_linked_twice_in_a_tree_is_one_run(tmp_path: Path) -> None:
    """Found by review: with the input resolved once at its root, a file and a link to it in the same tree were two
    runs (ATIF had resolved each file itself); each file is now resolved, so it is read once."""
    (tmp_path / "runs" / "terminus_2").mkdir(parents=True)
    shutil.copy(ATIF_INVALID, tmp_path / "runs" / "terminus_2" / ATIF_INVALID.name)
    (tmp_path / "latest.trajectory.json").symlink_to(tmp_path / "runs" / "terminus_2" / ATIF_INVALID.name)
    assert len(runs(tmp_path)) == 1


def test_a_run_linked_from_a_blob_store_keeps_the_path_it_was_found_at(tmp_path: Path) -> None:
    """Found by review: each walked file was replaced by its target, so runs kept as links into a content store
    (a Hugging Face cache, git-annex, DVC: ``runs/<model>/<instance>.traj`` -> ``blobs/<hash>``) lost the model
    folder from their ids, and a re-ingest stored them again under the new ids."""
    traj = FIXTURES / "swe-agent" / "default__gpt-4o" / "astropy__astropy-12907.traj"
    (tmp_path / "blobs").mkdir()
    shutil.copy(traj, tmp_path / "blobs" / "3f2a9c")
    (tmp_path / "runs" / "default__gpt-4o").mkdir(parents=True)
    (tmp_path / "runs" / "default__gpt-4o" / traj.name).symlink_to(tmp_path / "blobs" / "3f2a9c")
    [run] = runs(tmp_path)
    assert run.trajectory_id == only(traj).trajectory_id == "swe-agent.default__gpt-4o.astropy__astropy-12907"


HARBOR_JOB = FIXTURES / "atif/.real/harbor-runme/2026-06-30__14-22-55"
HARBOR_TRIAL = HARBOR_JOB / "update-minor-deps__xQmAxjA"


def test_harbor_job_gives_one_run_per_trial_and_passes_over_its_raw_session_and_own_files() -> None:
    """Bug: a Harbor job of the codex agent gave each trial twice (the ATIF ``agent/trajectory.json``, with the
    verdict, and the raw Codex rollout under ``agent/sessions/`` it was converted from, with none), and Harbor's own
    ``result.json``, ``config.json``, ``lock.json``, ``verifier/reward.json`` each counted as a rejection."""
    for given in (HARBOR_JOB, HARBOR_TRIAL, HARBOR_TRIAL / "agent"):
        run = only(given)
        assert run.trajectory_id.endswith("update-minor-deps__xQmAxjA/agent/trajectory") and len(run.steps) == 22
        assert run.outcome is Outcome.success and run.metadata["outcome_basis"] == "Harbor trial result.json"
    [rollout] = (HARBOR_TRIAL / "agent/sessions").rglob("rollout-*.jsonl")
    with pytest.raises(ValueError, match="raw codex-cli session in Harbor trial update-minor-deps__xQmAxjA"):
        detect_format(rollout)
    for own in (HARBOR_JOB / "lock.json", HARBOR_TRIAL / "result.json", HARBOR_TRIAL / "verifier/reward.json"):
        with pytest.raises(ValueError, match="no run in this file: (Harbor's own|the verifier output)"):
            detect_format(own)


def test_a_harbor_trial_whose_conversion_is_broken_or_not_atif_keeps_its_runs(tmp_path: Path) -> None:
    """Found by review: the raw session was passed over whenever a trial held ``agent/trajectory.json``, even one cut
    short (a killed converter: the trial then gave no run at all), and that file itself, when of another format,
    was passed over as a raw session of itself."""
    job = tmp_path / "job"
    shutil.copytree(HARBOR_JOB, job)
    converted = job / HARBOR_TRIAL.name / "agent" / "trajectory.json"
    text = converted.read_text()
    converted.write_text(text[: len(text) // 2])
    read = list(read_dump(job))
    assert [r.fmt for r in read if r.ok] == ["codex-cli"]  # the rollout, read
    assert [r.error.startswith("malformed JSON") for r in read if not r.ok] == [True]
    shutil.copy(FIXTURES / "mini-swe-agent" / ".real" / "rfc-mini-swe-agent-trajectory.json", converted)
    assert detect_format(converted) == "mini-swe-agent"


def test_atif_files_sharing_a_session_stay_distinct_runs() -> None:
    """Bug: five files sharing one session_id in one directory were ingested as one run."""
    sessions = {json.loads(p.read_text())["session_id"] for p in ATIF_DIR.glob("*.json")}
    found = runs(ATIF_DIR)
    ids = [r.trajectory_id for r in found]
    assert len(found) == 5 and len(set(ids)) == 5 and len(sessions) == 2
    assert ids == [r.trajectory_id for r in runs(ATIF_DIR)]  # stable across re-ingests
    assert "atif.NORMALIZED_SESSION_ID..real/terminus_2/hello-world-invalid-json.trajectory" in ids
    assert {r.metadata["session_id"] for r in found} == sessions


def test_atif_steps_from_tool_calls_and_from_text_actions() -> None:
    invalid = only(ATIF_INVALID)
    assert [s.action for s in invalid.steps] == ["respond", "bash_command", "mark_task_complete", "mark_task_complete"]
    assert invalid.steps[0].error == "ERROR: Missing required fields: analysis, plan"  # a rejected response
    assert invalid.steps[1].arguments == {"keystrokes": "printf 'Hello, world!\\n' > hello.txt\n", "duration": 0.1}
    assert [s.error for s in invalid.steps[1:]] == [None] * 3
    assert invalid.model_id == "openai/gpt-4o" and invalid.outcome is Outcome.unknown
    # a linear-history continuation: its copied context is not repeated, raw JSON responses are actions
    cont = only(ATIF_CONT)
    assert [s.action for s in cont.steps] == ["bash_command", "bash_command", "mark_task_complete",
                                              "mark_task_complete"]
    assert cont.steps[0].arguments["keystrokes"] == "printf 'Hello, world!\\n' > hello.txt\n"
    # OpenHands without function calling writes its calls as <function=...> text
    openhands = only(ATIF_OPENHANDS)
    assert [s.action for s in openhands.steps] == ["execute_bash", "finish"]
    assert openhands.steps[0].arguments == {
        "command": "cat > /app/hello.txt << 'EOF'\nHello, world!\nEOF", "security_risk": "LOW"}
    assert "exit code 0" in openhands.steps[0].observation and openhands.steps[0].error is None


def test_atif_step_with_reasoning_and_a_message_keeps_both() -> None:
    """Bug (real: OpenAgentsInc/openagents qa-runner ``login-trace/trajectory.json``, ATIF-v1.7): an agent step's
    ``reasoning_content`` became its thought and its ``message`` was stored nowhere."""
    run = only(FIXTURES / "atif/.real/openagents-qa-login/trajectory.json")
    assert [s.action for s in run.steps] == ["navigate", "waitFor", "assert", "assert", "screenshot", "done"]
    assert run.steps[0].thought == 'Chose action "navigate" against /login; outcome ok.\n\nnavigate to /login'
    assert run.steps[-1].thought == "Final verdict PASS after 5 action(s).\n\nGoal verified. Marking the session complete."


def test_atif_v17_root_with_trajectory_id_and_embedded_subagent(tmp_path: Path) -> None:
    """ATIF-v1.7: optional session_id, a root trajectory_id (which native records are also told by) and
    embedded subagent_trajectories, each a run of its own."""
    doc = json.loads(ATIF_INVALID.read_text())
    sub = copy.deepcopy(json.loads((ATIF_DIR / "hello-world-context-summarization.trajectory.summarization-1-questions"
                                              ".json").read_text()))
    sub.update(trajectory_id="questions-1", schema_version="ATIF-v1.7")
    doc.update(schema_version="ATIF-v1.7", trajectory_id="root-7", subagent_trajectories=[sub])
    del doc["session_id"]
    path = tmp_path / "trial" / "agent" / "trajectory.json"
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps(doc))
    assert detect_format(path) == "atif"
    root, child = runs(path)
    assert root.trajectory_id == "atif.root-7.trial/agent/trajectory" and root.task == HELLO
    assert child.trajectory_id == "atif.root-7.trial/agent/trajectory.sub.questions-1"
    assert child.metadata["parent"] == "root-7" and child.task == HELLO


def test_atif_harbor_trial_result_gives_the_verdict(tmp_path: Path) -> None:
    trial = tmp_path / "hello-world__Ab3xQ"
    (trial / "agent").mkdir(parents=True)
    (trial / "agent" / "trajectory.json").write_text(ATIF_INVALID.read_text())
    (trial / "result.json").write_text(json.dumps(
        {"trial_name": "hello-world__Ab3xQ", "task_name": "hello-world", "verifier_result": {"rewards": {"reward": 1.0}},
         "exception_info": None}))
    run = only(trial / "agent" / "trajectory.json")
    assert (run.outcome, run.reward, run.metadata["outcome_basis"]) == (
        Outcome.success, 1.0, "Harbor trial result.json")


HARBOR_CRASHED = (FIXTURES / "atif/.real/harbor-crashed/2026-09-30__08-59-24/check-brickmake-rule-semantics-r__xwL2kAp"
                  / "agent/trajectory.json")


def test_atif_harbor_trial_graded_after_its_agent_crashed_keeps_the_crash() -> None:
    """Bug (real: Saud008/terminal-bench-2.1, a claude-code trial that was not logged in): the verifier still gave
    reward 0.0, and the trial's ``exception_info`` (NonZeroAgentExitCodeError) was dropped: an honest failure."""
    run = only(HARBOR_CRASHED)
    assert (run.outcome, run.reward) == (Outcome.failure, 0.0)
    assert run.failure.error.startswith("NonZeroAgentExitCodeError: Command failed (exit 1): export PATH=")
    assert run.failure.cause == ("the agent's process exited non-zero (Harbor counts it the agent's own failure); "
                                 "the verifier graded what it left")
    assert run.metadata["trial_exception"] == "NonZeroAgentExitCodeError"


def test_atif_claude_codes_synthetic_model_is_no_model_the_trials_is() -> None:
    """Bug (real: the same Saud008 trial): the run's model was ``<synthetic>``, Claude Code's name for a message it
    made up itself (here "Not logged in"), which Harbor copied to the agent and its one step."""
    assert only(HARBOR_CRASHED).model_id == "openai/gpt-5.6"  # the trial's config.json / result.json config


def test_atif_trial_model_without_its_config_is_the_result_s_agent_info(tmp_path: Path) -> None:
    """The same trial with no config (neither ``config.json`` nor ``result.json``'s copy): ``agent_info``."""
    trial = tmp_path / HARBOR_CRASHED.parent.parent.name
    shutil.copytree(HARBOR_CRASHED.parent.parent, trial)
    (trial / "config.json").unlink()
    result = json.loads((trial / "result.json").read_text())
    del result["config"]
    (trial / "result.json").write_text(json.dumps(result))
    assert only(trial / "agent" / "trajectory.json").model_id == "openai/gpt-5.6"


MINI_BATCH = FIXTURES / "mini-swe-agent/.real"


def test_mini_swe_agent_batch_crashes_rejected_turns_and_submissions_as_the_runner_wrote_them() -> None:
    """Bugs (real 1.17.5 / 2.4.6 batch runs): a 1.x crash's message (saved as the submission) was lost; a 2.x
    rejected tool-calling turn lost what the model tried; an empty patch was a success; the submission of a
    turn with two calls went to the first."""
    crash = only(MINI_BATCH / "batch-1.17.5/demo__greet-23/demo__greet-23.traj.json")
    assert crash.failure.error.startswith("ContextWindowExceededError: litellm.ContextWindowExceededError")
    assert crash.metadata["submission_chars"] == 0
    empty = only(MINI_BATCH / "batch-2.4.6/demo__greet-11/demo__greet-11.traj.json")
    assert empty.outcome is Outcome.failure and "empty patch" in empty.failure.error
    assert "str_replace_editor" in empty.steps[1].thought and empty.steps[1].action is None
    two = only(MINI_BATCH / "batch-2.4.6/demo__greet-14/demo__greet-14.traj.json")
    submit = two.steps[-1]
    assert "COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT" in submit.arguments["command"] and submit.observation
    assert two.steps[-2].observation is None


def test_swe_agent_timeouts_are_errors_and_issue_instances_name_their_repo() -> None:
    """Bugs: SWE-agent's "EXECUTION TIMED OUT" was no step error (real EnIGMA run); a GitHub issue's instance
    ``owner__repo-i1`` had the family ``owner/repo-i1``."""
    rock = only(FIXTURES / "swe-agent/.real/ctf/rock.traj")
    assert rock.steps[0].error == "EXECUTION TIMED OUT"
    assert only(SWE_V1).task_family == "SWE-agent/test-repo"


HARBOR = FIXTURES / "atif/.real/harbor-0.25"


def test_atif_from_harbors_cli_converters_keeps_the_users_request_and_real_errors() -> None:
    """Bugs (Harbor 0.25's own conversions of real sessions): Codex's injected environment context was the task;
    a Claude Code result Harbor flags ``tool_result_is_error`` and exit codes as Claude Code, Codex and Gemini
    print them were no errors, while Gemini's ``Error: (none)`` was one; a subagent's turns were the run's."""
    codex = only(HARBOR / "codex-0171-proj4/agent/trajectory.json")
    assert codex.task == "Fix the greeting in main.py to say hello and run it"
    assert all("environment_context" not in (s.observation or "") for s in codex.steps)
    [failed] = [s for s in codex.steps if s.error]
    assert failed.action == "exec_command" and failed.error.endswith("(exit code 2)")
    claude = only(HARBOR / "cc-proj2/agent/trajectory.json")
    [bash] = [s for s in claude.steps if s.error]
    assert bash.action == "Bash" and bash.error == "hello (exit code 2)"
    assert not [s for s in claude.steps if s.action is None and "SUBAGENT-MARKER" in (s.observation or "")]
    assert "3 notes.txt" not in [s.observation for s in claude.steps]  # the subagent's own Bash call
    assert claude.metadata["subagent_steps"] == 3
    assert not [s for s in claude.steps if "task-notification" in (s.observation or "")]
    gemini = only(HARBOR / "gemini-mgemini-1121/agent/trajectory.json")
    assert [s.error for s in gemini.steps] == [None, None]


def test_atif_multi_step_trials_and_errors_known_only_from_their_text() -> None:
    """Bugs: a step of a Harbor 0.25 multi-step trial (``<trial>/steps/<step>/agent/``) had no verdict, and its id
    did not name its trial; opencode's converter drops exit codes, so "[Errno 2] No such file" was no error."""
    trial = HARBOR / "hello-multi__pI7xYz"
    write, test = only(trial / "steps/write/agent/trajectory.json"), only(trial / "steps/test/agent/trajectory.json")
    assert (write.outcome, write.reward, test.outcome, test.reward) == (Outcome.success, 1.0, Outcome.failure, 0.0)
    assert "hello-multi__pI7xYz/write/agent/trajectory" in write.trajectory_id
    opencode = only(HARBOR / "opencode/agent/trajectory.json")
    assert [s.error for s in opencode.steps if s.error and "run_tests.py" in s.error]


def test_atif_mini_swe_agent_text_turns_are_bash_actions() -> None:
    """Bug: Harbor keeps mini-swe-agent's text-based turns as messages; the fenced command became ``respond``."""
    run = only(HARBOR / "msa-gruckion-gemini3/agent/trajectory.json")
    assert {s.action for s in run.steps} == {"bash"}
    assert run.steps[0].arguments == {"command": "ls -R"}
    assert run.steps[0].thought.startswith("I need to explore the codebase")


def test_atif_chat_message_task_and_results_in_a_system_step() -> None:
    """Bug (an older NeMo-Relay's export): the task is a list of chat messages and the tool results come in a
    system step by call id; the file was rejected ("no task"), and then the results were lost."""
    run = only(FIXTURES / "atif/.real/nemo-relay/trajectory.json")
    assert run.task == "What is the weather and population of San Francisco?"
    assert {s.action: s.observation for s in run.steps if s.action and s.action.startswith("get_")} == {
        "get_weather": "62°F, foggy", "get_population": "873,965"}


NEMO_FIRST = FIXTURES / "atif/.real/nemo-relay-f7e66e17/trajectory.json"


def test_atif_chat_api_objects_as_messages_give_the_prompt_and_the_reasoning() -> None:
    """Bug (the first NeMo-Relay export, f7e66e17): a user step's message is the whole chat request and an agent
    step's the assistant message object; the task was the request dumped as JSON, and so was the thought."""
    run = only(NEMO_FIRST)
    assert run.task == "What is the weather and population of San Francisco?"
    assert run.steps[0].thought.startswith("Okay, the user is asking for both the weather")
    assert not [s for s in run.steps if "max_tokens" in (s.observation or "")]
    older = only(FIXTURES / "atif/.real/nemo-relay/trajectory.json")
    assert older.steps[0].thought.startswith("Okay, the user is asking about both")


def test_atif_calls_named_as_the_chat_api_names_them_keep_their_tools() -> None:
    """Bug (real: OpenAgents' "ATIF v1.4" export of a Claude Code run): calls written ``{"id", "name", "arguments"}``
    were all anonymous "tool" steps, and ``agent.model`` was not the model."""
    run = only(FIXTURES / "atif/.real/openagents-regex-log/trajectory.json")
    assert run.model_id == "claude-sonnet-4-20250514"
    assert [s.action for s in run.steps] == ["respond", "Write", "Bash", "Bash", "Bash", "Write"]
    assert run.steps[2].arguments["command"].startswith("pwd && ls -la /")


def test_atif_run_begins_at_its_first_step_the_task_included() -> None:
    """Bug: created_at was the first agent step's time, not the first step's (the request, 0.9 s earlier here)."""
    assert only(NEMO_FIRST).created_at.isoformat() == "2026-03-13T15:53:20.452159+00:00"


@pytest.mark.parametrize("path", [MINI_RFC, MINI_BARE, SWE_DEMO, SWE_V1, SWE_HISTORY, SWE_SHELL, TAU_GROK, TAU2, ATIF_INVALID, ATIF_OPENHANDS])
def test_every_real_file_reads_twice_the_same(path: Path) -> None:
    assert runs(path) == runs(path)


def test_a_chat_under_trajectory_and_info_is_no_swe_agent_run() -> None:
    """Bug (real: NihaarikaAgarwal/TauBench-pcv-ia's tau-bench error examples, each a ``trajectory`` of chat
    messages beside an ``info``): detected as SWE-agent and each example rejected for lacking a task "in 'history'",
    a field the file never had. A ``trajectory`` of chat messages is no SWE-agent turns: the format is not known."""
    path = FIXTURES / "swe-agent/.real/not-swe-agent/E1_examples.one-example.json"
    with pytest.raises(ValueError, match="unrecognised dump format"):
        detect_format(path)


def test_swe_agent_coder_prompt_gives_the_issue_not_the_plans() -> None:
    """CodeR (built on SWE-agent 0.x) ends the issue with a singular INSTRUCTION: before its plans and tips."""
    [run] = [r.trajectory for r in read_dump(SWE_CODER, tenant="acme")]
    assert run.trajectory_id == "swe-agent.coder.django__django-11099"
    assert run.task.startswith("UsernameValidator allows trailing newline in usernames")
    assert run.task.endswith("using the regex above in the two validators in contrib.auth.validators.")
    assert "INSTRUCTION" not in run.task and "Plan one" not in run.task


def test_swe_agent_coder_run_stopped_at_its_cost_limit_is_no_success() -> None:
    """Bug (real CodeR run, trimmed): CodeR writes a bare ``submitted`` when its cost limit auto-submits and says
    so only in the last action, ``exit_cost``; the run (its patch an empty sqlite file) counted as a success."""
    run = only(SWE_CODER.parent / "django__django-16816.traj")
    assert run.steps[-1].action == "exit_cost"
    assert run.outcome is Outcome.failure and "outcome_basis" not in run.metadata
    assert run.failure.error.startswith("submitted (exit_cost): last failing step")
    assert run.metadata["exit_status"] == "submitted" and run.metadata["submission_chars"] > 0  # the patch is kept


def test_swe_agent_coder_commands_and_the_agent_of_each_step() -> None:
    """Bug (real CodeR run): CodeR's own commands, the Manager's ``plan`` and a sub-agent's ``succeed`` / ``fail``,
    were ``bash`` steps, and which of its agents (Manager, Reproducer, ...) took each step was lost."""
    run = only(SWE_CODER.parent / "sympy__sympy-18621.traj")
    assert [s.action for s in run.steps] == ["plan", "create", "edit", "bash", "succeed"]
    assert run.steps[0].arguments["command"].startswith('plan\n{\n  "entry": "Reproducer"')
    assert run.metadata["agents"] == ["Manager", "Reproducer"]
    assert run.metadata["step_agents"] == [[0, "Manager"], [1, "Reproducer"]]


def test_swe_agent_edit_before_any_open_is_a_step_error() -> None:
    """Bug (real SWE-agent 0.x run, trimmed): the editor's refusal "No file open. Use the `open` command first."
    left both edits looking successful."""
    run = only(FIXTURES / "swe-agent/.real/commit0/portalocker_madeup_cmd/97af1e.traj")
    assert [(s.action, s.error) for s in run.steps] == [
        ("edit", "No file open. Use the `open` command first."),
        ("edit", "No file open. Use the `open` command first."), ("submit", None)]


def test_tau_bench_arguments_that_are_no_json_are_said_so_not_reported_as_null() -> None:
    """A custom agent wrote Python literals as tool arguments (real fork record): the failure says what it got."""
    path = FIXTURES / "tau-bench/.real/assertions-agent-none-0.1_range_80-90_user-none-llm_0618150115.json"
    [run] = [r.trajectory for r in read_dump(path, tenant="acme")]
    assert run.outcome.value == "failure"
    assert "return_delivered_order_items called with arguments that are not a JSON object" in run.failure.cause
    assert "'order_id': '#W3069600'" in run.failure.cause and "got null" not in run.failure.cause


TAU_FAILED_CALLS = FIXTURES / "tau-bench/.real/gpt-4o-airline-failed-calls.json"


def test_tau_bench_cause_compares_the_call_that_succeeded_not_a_failed_attempt() -> None:
    """Probe E, E1 (tau-bench's own gpt-4o airline runs): a call answered "Error: ..." wrote nothing, yet the cause
    quoted the payment of 11-t1's failed first booking, not of the booking that was made; and 23-t3, whose every
    update failed, read "called with different arguments" as if a wrong update had been made."""
    by_id = {r.trajectory_id: r for r in runs(TAU_FAILED_CALLS, tenant="acme")}
    booked = by_id["tau-gpt-4o-airline-failed-calls-11-t1"].failure.cause
    assert booked.startswith('book_reservation called with different arguments: flight_type expected "one_way"')
    assert 'got [{"payment_id":"certificate_8998287","amount":299},{"payment_id":"gift_card_8516878","amount":76}]' \
        in booked
    never = by_id["tau-gpt-4o-airline-failed-calls-23-t3"].failure.cause
    assert never.startswith("update_reservation_flights failed on each of its 4 calls (Error: gift card balance is "
                            "not enough), so it changed nothing; the closest call differed: cabin expected")
    assert "called with different arguments" not in never


TAU_ACT = FIXTURES / "tau-bench/.real/act-grok-4-fast-non-reasoning-0.0_range_0--1_user-grok-4-fast-non-reasoning-llm_1129210244.json"
TAU_REACT = FIXTURES / "tau-bench/.real/react-grok-4-fast-reasoning-0.0_range_0--1_user-grok-4-fast-reasoning-llm_1129215652.json"
TAU_FEW_SHOT = (FIXTURES / "tau-bench/.real"
                / "few-shot-grok-4-fast-non-reasoning-0.0_range_0--1_user-grok-4-fast-non-reasoning-llm_1129212504.json")


def test_tau_bench_react_runs_the_last_action_even_without_the_word() -> None:
    """Bugs (real Act / ReAct runs): tau-bench runs the JSON after the *last* "Action:", or the whole text
    when the model left the word out; both were stored as ``respond`` with the raw text, losing the tool."""
    by_task = {r.task_id: r for r in (p.trajectory for p in read_dump(TAU_REACT)) if r}
    lookups = [s for s in by_task["airline-2"].steps if s.action == "get_reservation_details"]
    assert {s.arguments["reservation_id"] for s in lookups} >= {"2FBBAH"}
    assert not [s for s in by_task["airline-2"].steps if s.action == "respond"
                and (s.observation or "").startswith("API output")]
    [act28] = [p.trajectory for p in read_dump(TAU_ACT) if p.trajectory.task_id == "airline-28"]
    [transfer] = [s for s in act28.steps if s.action == "transfer_to_human_agents"]
    assert transfer.observation == "Transfer successful"


def test_tau_bench_runs_without_tools_take_the_files_domain() -> None:
    """Bug: a results file named by run.py says no domain; a run whose tools show none (a crashed run, Act
    actions not counted) became task family "tau", splitting one task's trials between two task ids."""
    act = {p.trajectory.task_id for p in read_dump(TAU_ACT)}
    assert act == {"airline-13", "airline-28"}  # task 13 writes only through Act actions
    react = {p.trajectory.task_id: p.trajectory for p in read_dump(TAU_REACT)}
    assert set(react) == {"airline-2", "airline-14"}
    assert react["airline-14"].outcome is Outcome.infra_error and react["airline-14"].task_family == "airline"


def test_tau_bench_crash_keeps_the_exceptions_head() -> None:
    """Bug: a crash's error kept the end of its message: the gateway's HTML page, not the exception."""
    [crash] = [p.trajectory for p in read_dump(TAU_FEW_SHOT)]
    assert crash.failure.error.startswith("run crashed: litellm.BadGatewayError: BadGatewayError: XaiException")


@pytest.mark.parametrize("name, suffixes, stem", [
    ("r_0920134328.json.jsonl", (".jsonl", ".json", ".ndjson"), "r_0920134328"),  # tau-bench: each suffix in turn
    ("output.jsonl.json", (".json", ".jsonl"), "output"),  # openhands
    ("x.traj.json.gz", (".json", ".traj"), "x"),  # swe-agent
    ("x.json.traj", (".json", ".traj"), "x.json"),
    ("a.json.json", (".traj.json", ".json", ".traj"), "a.json"),  # mini-swe-agent: one suffix
])
def test_file_stems_that_run_ids_are_made_of_stay_as_each_adapter_cut_them(name: str, suffixes: tuple, stem: str) -> None:
    from trajsearch.ingest.adapters._common import file_stem

    assert file_stem(Path(name), suffixes) == stem


def test_mini_swe_agent_cli_submission_is_the_last_steps_result_not_an_error() -> None:
    """The 2.x CLI answers the submitting call with an 'action was not executed' placeholder (real 2.4.6 run)."""
    [run] = [r.trajectory for r in read_dump(FIXTURES / "mini-swe-agent/.real/mini-2.4.6-toolcall-submission.traj.json",
                                            tenant="acme")]
    submit = run.steps[-1]
    assert submit.arguments == {"command": "echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT && cat patch.txt"}
    assert submit.error is None and submit.observation.startswith("diff --git a/hello.py b/hello.py")
    assert [s.index for s in run.steps if s.error] == [1]  # the cat of a missing file, only
    assert run.outcome.value == "success"


TAU2_HUMAN = FIXTURES / "tau2-bench/.real/human-trajectories/airline/task_36_human.json"
TAU2_NO_TASKS = FIXTURES / "tau2-bench/.real/tasks-missing/smoke_results.two-simulations.json"


def test_tau2_simulation_whose_task_is_not_in_the_file_is_read_from_its_conversation() -> None:
    """Bug (real: bogoliubon/tau2-bench's human trajectories, each one ``SimulationRun`` saved on its own, and
    dannyhagenlocker/tau2-bench's results file written with ``"tasks": []``): every simulation was rejected ("task
    '36' ... is not in the results' 'tasks'"), its messages, tool calls and reward lost."""
    human = only(TAU2_HUMAN)
    assert human.task.startswith("Hi... I, um, I need to change the date of my flight.")  # the user's first message
    assert human.task_id == "airline-36" and human.outcome is Outcome.unknown  # reward_info: null
    assert human.metadata["domain_from"] == "the folder name"  # (human-trajectories/airline/; review 1, R1-2)
    assert [s.action for s in human.steps] == ["respond", "respond", "get_reservation_details", "respond", "respond"]
    assert human.steps[2].arguments == {"reservation_id": "EUJUY6"}
    assert (human.metadata["task_definition"], human.metadata["task_from"]) == ("missing", "the user's first message")
    graded, failed = runs(TAU2_NO_TASKS)
    assert [(r.task_id, r.task, r.reward, r.outcome) for r in (graded, failed)] == [
        ("retail-task_0", "I need help with order 123", 1.0, Outcome.success),
        ("retail-task_1", "Cancel order W123", 0.0, Outcome.failure)]
    assert graded.model_id == "gpt-5.5" and graded.steps[1].action == "find_user_id_by_email"
    assert failed.metadata["task_definition"] == "missing"


def test_tau2_simulation_without_its_task_or_any_message_holds_no_run(tmp_path: Path) -> None:
    """The same human trajectory with its messages gone: nothing to read a task or a step from."""
    sim = json.loads(TAU2_HUMAN.read_text())
    sim["messages"] = []
    (tmp_path / "task_36_human.json").write_text(json.dumps(sim))
    [result] = read_dump(tmp_path / "task_36_human.json")
    assert not result.ok and "is not in the file ('tasks') and the simulation has no conversation" in result.error


def test_tau2_bare_list_of_simulations_reads_each_without_its_task(tmp_path: Path) -> None:
    """A leaderboard submission saved the simulations alone, as a JSON list (real: tau2-bench
    web/leaderboard/public/submissions/adaptive-agent_ironshell-ui_2026-03-22): their tasks are missing, so each run
    is read as a simulation saved without its task (it was rejected whole until probe B of round p43, B2)."""
    sims = json.loads(TAU2.read_text())["simulations"]
    path = tmp_path / "airline_trajectories.json"
    path.write_text(json.dumps(sims))
    found = runs(path, tenant="acme")
    assert len(found) == 3 and {r.metadata["task_definition"] for r in found} == {"missing"}


def test_a_reasoning_models_thinking_is_thought_not_words_said() -> None:
    """Found by a probe (real: a course project's tau-bench ReAct run, a Qwen-style model as agent and as simulated
    user): each message opens with ``<think>...</think>``; the agent's thinking went into the words it said to the user,
    and the simulated user's into what the user said."""
    run = only(FIXTURES / "tau-bench/.real/react-qwen-think-airline.json")
    assert run.steps[0].observation.startswith('"I’m really frustrated right now, but I need to downgrade')
    assert not any("<think>" in (s.observation or "") + (s.thought or "") + str(s.arguments) for s in run.steps)
    answer = next(s for s in run.steps if s.action == "respond")
    assert answer.thought.startswith("Okay, let me try to figure out what the user needs here.")
    assert answer.arguments["content"].startswith("All your business flights have been successfully downgraded")
    assert run.steps[1].thought.startswith("Okay, the user wants to downgrade their business flights to economy.")


def test_a_tool_calling_agents_thinking_is_its_thought_without_the_tags(tmp_path: Path) -> None:
    """Found by review: a message sent with a tool call kept ``<think>...</think>`` as written in its call's thought;
    the thinking and the words are the thought, without the tags (the real run, its message 4 given a thinking
    block as a reasoning model writes it)."""
    results = json.loads(TAU_GROK.read_text())
    message = results[0]["traj"][4]
    message["content"] = "<think>\nThe user gave name and zip: look the user up.\n</think>\n\n" + message["content"]
    (tmp_path / "results.json").write_text(json.dumps(results[:1]))
    [run] = runs(tmp_path / "results.json")
    call = next(s for s in run.steps if s.action == "find_user_id_by_name_zip")
    assert call.thought.startswith("The user gave name and zip: look the user up.\nThank you for providing that information")


def test_atif_run_without_agent_model_name_takes_its_steps_model(tmp_path: Path) -> None:
    """Regression (review 4, F2): ATIF-RFC-0001 makes ``agent.model_name`` optional ("Step-level model_name
    overrides this"); a run naming its model only on its steps had no model. The real openagents qa-runner file
    (OpenAgentsInc/openagents ``login-trace/trajectory.json``) with its ``agent.model_name`` removed: every agent
    step says ``openagents/khala``."""
    doc = json.loads((FIXTURES / "atif/.real/openagents-qa-login/trajectory.json").read_text())
    del doc["agent"]["model_name"]
    (tmp_path / "trajectory.json").write_text(json.dumps(doc))
    assert only(tmp_path / "trajectory.json").model_id == "openagents/khala"

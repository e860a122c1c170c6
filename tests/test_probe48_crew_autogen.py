"""Probe 48, P: what CrewAI and AutoGen AgentChat users have on disk after a run, read or refused saying where the
run is (see the fixtures' SOURCE.md: written by autogen-agentchat 0.7.5 itself, and by CrewAI's FileHandler logic)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import adapter_support
from cli_support import run_cli
from trajsearch.ingest.detect import detect_format
from trajsearch.ingest.read import read_dump
from trajsearch.model import Outcome

FIXTURES = Path(__file__).parent / "fixtures"
AUTOGEN = FIXTURES / "autogen-agentchat" / ".real"
CREWAI = FIXTURES / "crewai" / ".real"
AG2 = FIXTURES / "ag2" / ".real"


def test_an_autogen_team_task_result_is_a_run_with_its_tool_calls_results_and_failure() -> None:
    """``(await team.run(task=...)).model_dump_json()``, what every AgentChat tutorial's user can save, was refused
    as an unrecognised format."""
    run = adapter_support.only(AUTOGEN / "team_taskresult.json")
    assert run.task == "What is the weather in Paris and in Atlantis?"
    assert [(s.action, s.arguments) for s in run.steps] == [
        ("get_weather", {"city": "Paris"}), ("get_weather", {"city": "Atlantis"}),
        ("respond", {"content": "Paris is 73 degrees and sunny; Atlantis could not be found. TERMINATE"})]
    paris, atlantis, _ = run.steps
    assert paris.observation == "The weather in Paris is 73 degrees and Sunny." and paris.error is None
    assert atlantis.error == "city not found: Atlantis"
    assert run.outcome is Outcome.unknown  # a TaskResult says why the team stopped, not whether it did the task
    assert run.metadata["stop_reason"] == "Text 'TERMINATE' mentioned"
    assert run.trajectory_id == "autogen:a42015db-c8b2-4707-a9c2-8683e9839a38"


def test_an_autogen_team_state_is_the_same_run_as_its_task_result() -> None:
    """``team.save_state()`` keeps the run's messages in its manager's ``message_thread``: read as the run, under
    the same id as its TaskResult, so saving both does not index it twice."""
    state = adapter_support.only(AUTOGEN / "team_state.json")
    result = adapter_support.only(AUTOGEN / "team_taskresult.json")
    assert state.trajectory_id == result.trajectory_id
    assert [(s.action, s.arguments, s.observation, s.error) for s in state.steps] == [
        (s.action, s.arguments, s.observation, s.error) for s in result.steps]


def test_a_single_agent_run_ending_on_its_tool_summary_keeps_the_failed_call_once() -> None:
    """Without ``reflect_on_tool_use`` the run ends on a ``ToolCallSummaryMessage`` repeating the tool's result: no
    second step, no answer made of the error text."""
    run = adapter_support.only(AUTOGEN / "agent_taskresult.json")
    assert run.task == "Weather in Atlantis?"
    [step] = run.steps
    assert (step.action, step.arguments, step.error) == (
        "get_weather", {"city": "Atlantis"}, "city not found: Atlantis")


def test_a_team_stopped_at_its_message_limit_keeps_the_stop_reason() -> None:
    run = adapter_support.only(AUTOGEN / "team_maxmsg_taskresult.json")
    assert run.task == "Prove P != NP"
    assert [s.arguments["content"] for s in run.steps] == ["Let me think.", "Still thinking."]
    assert run.metadata["stop_reason"].startswith("Maximum number of messages 3 reached")


@pytest.mark.parametrize("path, says", [
    (AUTOGEN / "agent_state.json", "save the run's TaskResult instead"),
    (CREWAI / "logs.json", "trace the crew instead"),
    (CREWAI / "logs.txt", "trace the crew instead"),
    (AG2 / "runtime_logging_file.log", "logger_type='file'"),
    (AG2 / "runtime_logging.db", "logger_type='sqlite'"),
])
def test_files_that_hold_no_run_are_refused_naming_where_the_run_is(path: Path, says: str) -> None:
    """An agent's ``save_state()``, CrewAI's ``output_log_file`` (JSON, or text by default) and AG2's runtime log
    (file or SQLite) were refused as an unrecognised format, with ``pass --format NAME to force one``, or as binary
    bytes: no word of what they are, nor that the run is read from the framework's traces."""
    with pytest.raises(ValueError, match="no run in this file") as refused:
        detect_format(path)
    assert says in str(refused.value) and "--format" not in str(refused.value)
    assert "trace" in str(refused.value) or "TaskResult" in str(refused.value)
    with pytest.raises(ValueError, match=says):
        list(read_dump(path))


def test_ag2_otel_trace_keeps_the_answer_its_agent_span_recorded() -> None:
    """AG2's ``autogen.opentelemetry`` records each turn's messages on ``invoke_agent`` and none on the ``chat``
    span below it: the assistant's final answer was lost (the run read as one tool call and no answer)."""
    run = adapter_support.only(AG2 / "ag2-0.14-autogen-opentelemetry.otlp.jsonl")
    assert run.task == "What is the weather in Atlantis?"
    assert [(s.action, s.arguments) for s in run.steps] == [
        ("get_weather", {"city": "Atlantis"}),
        ("respond", {"content": "The weather could not be found for Atlantis. TERMINATE"})]
    assert run.steps[0].observation == "Error: city not found: Atlantis" and run.steps[0].error


def test_a_coding_teams_executions_are_code_steps_failed_by_their_exit_code() -> None:
    """A ``CodeExecutorAgent`` without a model answers the code it ran as a ``TextMessage``: its failure ("The script
    ran, then exited with an error (POSIX exit code: 1)") was an agent's words, and the code a second answer."""
    run = adapter_support.only(AUTOGEN / "coding_team_taskresult.json")
    assert [(s.action, s.arguments) for s in run.steps] == [
        ("execute_code", {"code": "import numpy_does_not_exist\nprint(numpy_does_not_exist.one())",
                          "language": "python"}),
        ("execute_code", {"code": "print(1)", "language": "python"}),
        ("respond", {"content": "The result is 1. TERMINATE"})]
    failed, ok, _ = run.steps
    assert failed.error == "ModuleNotFoundError: No module named 'numpy_does_not_exist' (exit code 1)"
    assert ok.error is None and ok.observation == "1\n"


def test_a_swarms_handoffs_are_their_transfer_calls_once() -> None:
    run = adapter_support.only(AUTOGEN / "swarm_taskresult.json")
    assert [s.action for s in run.steps] == [
        "transfer_to_flights_refunder", "refund_flight", "transfer_to_travel_agent", "respond"]


def test_a_runs_messages_saved_without_their_task_result_are_one_run() -> None:
    """``result.messages`` dumped as a JSON array (the TaskResult's ``stop_reason`` left out) is one run."""
    run = adapter_support.only(AUTOGEN / "messages_list.json")
    assert run.task == "What is the capital of France?"
    assert [(s.action, s.arguments) for s in run.steps] == [("respond", {"content": "Paris."})]


def test_a_run_stream_written_a_line_an_item_is_one_run_not_its_messages_twice() -> None:
    """``run_stream()`` yields the messages, then the TaskResult holding them all again: one run, its steps once."""
    runs = adapter_support.runs(AUTOGEN / "run_stream.jsonl")
    assert len(runs) == 1
    assert [(s.action, s.arguments, s.observation) for s in runs[0].steps] == [
        ("add", {"a": 2, "b": 3}, "5"), ("respond", {"content": "2 + 3 = 5."}, None)]


def test_openinference_agentchat_team_fails_the_tool_that_raised_and_keeps_the_answer() -> None:
    """The instrumentor's TOOL span of a tool that raised is OK, its output the exception's message (AgentChat caught
    it); only the TaskResult on the root says ``is_error``. The run read as two good calls, and the team's answer
    (on no model-call span) was lost."""
    run = adapter_support.only(
        FIXTURES / "openinference" / ".real" / "probe48" / "autogen-agentchat-0.7.5-oi-0.1.22-team.otlp.jsonl")
    assert run.task == "What is the weather in Paris and in Atlantis?"
    assert [(s.action, s.arguments, s.error) for s in run.steps] == [
        ("get_weather", {"city": "Paris"}, None),
        ("get_weather", {"city": "Atlantis"}, "city not found: Atlantis"),
        ("respond", {"content": "Paris is 73 degrees and sunny; Atlantis could not be found. TERMINATE"}, None)]


def test_an_ag2_chat_result_is_a_run_with_its_failed_tool_call_and_answer() -> None:
    """``initiate_chat()``'s ChatResult, dumped, was refused as an unrecognised format."""
    run = adapter_support.only(AG2 / "chat_result.json")
    assert run.task == "What is the weather in Atlantis?"
    assert [(s.action, s.arguments, s.error) for s in run.steps] == [
        ("get_weather", {"city": "Atlantis"}, "Error: city not found: Atlantis"),
        ("respond", {"content": "The weather could not be found for Atlantis. TERMINATE"}, None)]
    assert run.metadata["summary"].startswith("The weather could not be found")


def test_an_ag2_coding_chat_reads_its_code_runs_failed_by_exit_code() -> None:
    """The user proxy's ``exitcode: 1 (execution failed)`` report is the code's run, not the user talking."""
    run = adapter_support.only(AG2 / "chat_results_code.json")
    assert [s.action for s in run.steps] == ["execute_code", "execute_code", "respond"]
    failed, ok, _ = run.steps
    assert failed.arguments["code"].startswith("import numpy_does_not_exist")
    assert failed.error == "ModuleNotFoundError: No module named 'numpy_does_not_exist' (exit code 1)"
    assert ok.error is None and ok.thought == "The module is missing; plain Python instead:"


# Probe 48 FRP: the reviewer's findings on the AgentChat / AG2 readers, on files the frameworks' own writers made.
OI48 = FIXTURES / "openinference" / ".real" / "probe48"


def test_ag2_otel_with_openinference_openai_reads_each_call_and_answer_once() -> None:
    """With OpenInference's OpenAI instrumentor as well, the content is on the ``ChatCompletion`` span under AG2's
    content-less ``chat`` span: the agent span's turns were read too, the tool call and the answer twice."""
    run = adapter_support.only(AG2 / "ag2-0.14-otel-with-oi-openai.otlp.jsonl")
    assert [(s.action, s.arguments) for s in run.steps] == [
        ("get_weather", {"city": "Atlantis"}),
        ("respond", {"content": "The weather could not be found for Atlantis. TERMINATE"})]
    assert run.steps[0].error


def test_openinference_agentchat_team_inside_an_app_span_keeps_its_failure_and_answer() -> None:
    """``team.run()`` inside the app's own span: the TaskResult is on the team's span, not the root. The tool that
    raised read as a success and the team's answer was lost."""
    run = adapter_support.only(OI48 / "autogen-agentchat-0.7.5-oi-0.1.22-team-in-app-span.otlp.jsonl")
    assert [(s.action, s.arguments, s.error) for s in run.steps] == [
        ("get_weather", {"city": "Paris"}, None),
        ("get_weather", {"city": "Atlantis"}, "city not found: Atlantis"),
        ("respond", {"content": "Paris is 73 degrees and sunny; Atlantis could not be found. TERMINATE"}, None)]


def test_an_agentchat_before_0_6_run_has_an_id_of_its_file_and_its_team_state_beside_it_is_passed_over(
        tmp_path: Path) -> None:
    """Messages before 0.6 have no ``id``: the team's state and the run's messages were refused ("first message
    has no id"). The run's id is its file's (F2AG: what was said merged runs that said the same), and the team's
    state saved beside it, the same run, is passed over naming the file its run is read from."""
    with pytest.raises(ValueError, match="run read from 0.4.9-team_messages_dumped.json beside it"):
        detect_format(AUTOGEN / "0.4.9-team_state.json")
    dumped = adapter_support.only(AUTOGEN / "0.4.9-team_messages_dumped.json")
    alone = tmp_path / "0.4.9-team_state.json"
    alone.write_bytes((AUTOGEN / "0.4.9-team_state.json").read_bytes())
    state = adapter_support.only(alone)  # saved alone: the run
    assert state.trajectory_id.startswith("autogen:") and state.trajectory_id != dumped.trajectory_id
    assert [(s.action, s.arguments, s.error) for s in state.steps] == [
        ("get_weather", {"city": "Paris"}, None),
        ("get_weather", {"city": "Atlantis"}, "Error: city not found: Atlantis"),
        ("respond", {"content": "Paris is 73 degrees and sunny; Atlantis could not be found. TERMINATE"}, None)]
    listed = adapter_support.only(AUTOGEN / "0.5.7-messages_list.json")
    assert [(s.action, s.arguments) for s in listed.steps] == [("respond", {"content": "Paris."})]
    assert listed.trajectory_id != state.trajectory_id


def test_an_agentchat_0_5_run_stream_is_its_messages_once() -> None:
    """``run_stream()`` under 0.5 ends on a TaskResult whose messages dump without type or content: the run was
    lost (its messages taken as held by the TaskResult, the TaskResult refused)."""
    [run] = adapter_support.runs(AUTOGEN / "0.5.7-run_stream.jsonl")
    assert [(s.action, s.arguments, s.observation) for s in run.steps] == [
        ("add", {"a": 2, "b": 3}, "5"), ("respond", {"content": "2 + 3 = 5."}, None)]


def test_a_typeless_agentchat_task_result_is_refused_saying_how_to_save_the_run() -> None:
    """``result.model_dump_json()`` in 0.5 and 0.6 keeps no message's type or content: an "unrecognised dump format"."""
    path = AUTOGEN / "0.5.7-team_taskresult.json"
    with pytest.raises(ValueError, match="no run in this file") as refused:
        detect_format(path)
    assert "model_dump(mode=" in str(refused.value) and "--format" not in str(refused.value)
    [forced] = list(read_dump(path, fmt="autogen-agentchat"))
    assert forced.error and "model_dump(mode=" in forced.error


def test_an_autogen_0_2_chat_result_without_chat_id_is_read_under_a_content_id() -> None:
    """AutoGen 0.2's ``initiate_chat`` leaves ``ChatResult.chat_id`` None: the chat was refused ("no chat_id")."""
    run = adapter_support.only(AG2 / "autogen-0.2.40-chat_result.json")
    assert run.trajectory_id.startswith("ag2:") and run.trajectory_id != "ag2:None"
    assert [(s.action, s.arguments, s.error) for s in run.steps] == [
        ("get_weather", {"city": "Atlantis"}, "Error: city not found: Atlantis"),
        ("respond", {"content": "The weather could not be found for Atlantis. TERMINATE"}, None)]


def test_an_ag2_group_chats_executor_agent_runs_the_code() -> None:
    """In a group chat a separate executor agent reports ``exitcode: 1 (execution failed)``: read as the coder's
    words and a second agent's, the failure lost."""
    run = adapter_support.only(AG2 / "group_chat_result.json")
    assert [(s.action, s.arguments) for s in run.steps] == [
        ("execute_code", {"code": "import numpy_does_not_exist\nprint(numpy_does_not_exist.one())",
                          "language": "python"}),
        ("execute_code", {"code": "print(1)", "language": "python"})]
    failed, ok = run.steps
    assert failed.error == "ModuleNotFoundError: No module named 'numpy_does_not_exist' (exit code 1)"
    assert ok.error is None and ok.thought == "The module is missing; plain Python instead:"


def test_an_ag2_group_pattern_tool_call_has_no_none_thought() -> None:
    run = adapter_support.only(AG2 / "pattern_chat_result.json")
    assert [(s.action, s.thought) for s in run.steps][0] == ("get_weather", None)


def test_a_bare_ag2_chat_history_forced_as_ag2_says_what_it_is() -> None:
    """It said "a ChatResult with no chat_history: the chat had no message", for every message."""
    parsed = list(read_dump(AG2 / "autogen-0.2.40-chat_history.json", fmt="ag2"))
    assert parsed and all(p.error and "chat_history" in p.error and "dataclasses.asdict" in p.error for p in parsed)


def test_a_code_executor_whose_code_just_works_is_a_code_step() -> None:
    """The runner's reply is the code's output alone (``42``), no fixed words: it read as the agent answering "42"
    and the code as a second answer."""
    run = adapter_support.only(AUTOGEN / "coding_ok_taskresult.json")
    assert [(s.action, s.arguments, s.observation, s.error) for s in run.steps] == [
        ("execute_code", {"code": "print(6 * 7)", "language": "python"}, "42\n", None),
        ("respond", {"content": "The result is 42. TERMINATE"}, None, None)]


def test_a_user_proxys_words_are_the_persons_not_the_agents() -> None:
    """A ``UserProxyAgent`` (it asks for input: ``UserInputRequestedEvent``) types what the person says: "Make it
    rhyme." and "APPROVE" read as the agent's answers."""
    run = adapter_support.only(AUTOGEN / "hitl_taskresult.json")
    assert [(s.action, s.arguments, s.observation) for s in run.steps] == [
        ("respond", {"content": "Here is a poem about the sea."}, "Make it rhyme."),
        ("respond", {"content": "Here is a better poem about the sea."}, "APPROVE")]
    assert run.metadata["agents"] == ["assistant"]
    traced = adapter_support.only(OI48 / "autogen-agentchat-0.7.5-oi-0.1.22-hitl.otlp.jsonl")
    assert [(s.action, s.arguments) for s in traced.steps] == [
        ("respond", {"content": "Here is a better poem about the sea."})]


def test_a_swarm_resumed_by_the_users_handoff_takes_it_as_its_task() -> None:
    """``team.run(task=HandoffMessage(source="user", ...))``: the agent's reply was taken as the run's task."""
    run = adapter_support.only(AUTOGEN / "swarm_user_2.json")
    assert run.task == "The flight is AB123."
    assert [(s.action, s.arguments) for s in run.steps] == [
        ("respond", {"content": "Your refund for AB123 is done. TERMINATE"})]


def test_openinference_agentchat_fails_the_later_of_two_same_calls_when_it_raised() -> None:
    """The same tool and arguments asked twice, the second raising: the tool spans keep no call id, and the first
    (good) call was failed, the one that raised read as a success."""
    run = adapter_support.only(OI48 / "autogen-agentchat-0.7.5-oi-0.1.22-same-call-twice.otlp.jsonl")
    assert [(s.action, s.observation, s.error) for s in run.steps[:2]] == [
        ("get_weather", "The weather in Paris is 73 degrees and Sunny.", None),
        ("get_weather", "weather service unavailable", "weather service unavailable")]


def test_a_streaming_agents_run_stream_is_one_run() -> None:
    """``run_stream()`` yields the streamed chunks, which its TaskResult does not keep: the messages were taken as
    a run of their own and the TaskResult as another, the same run read twice."""
    [run] = adapter_support.runs(AUTOGEN / "run_stream_chunks.jsonl")
    assert [(s.action, s.arguments) for s in run.steps] == [("respond", {"content": "The capital of France is Paris."})]


# Probe 48 F2AG: review R2X's findings on the AgentChat / AG2 readers, on files the frameworks wrote.
AG2_CACHED = [AG2 / "autogen-0.2.40-cached-run1.json", AG2 / "autogen-0.2.40-cached-run2.json"]


@pytest.mark.parametrize("name", ["hitl_code_team_state.json", "hitl_code_chat_messages.json"])
def test_a_person_reviewing_code_is_no_code_executor_where_its_input_requests_were_not_kept(name: str) -> None:
    """A ``UserProxyAgent``'s words in a team's ``message_thread`` (which keeps no ``UserInputRequestedEvent``) or
    in a run's chat messages have the shape of a model-less ``CodeExecutorAgent``'s: a person's review of the code
    ("That is exponential time, make it iterative.", "APPROVE") was read as that code run, two ``execute_code``
    steps whose output was the review."""
    run = adapter_support.only(AUTOGEN / name)
    assert "execute_code" not in [s.action for s in run.steps]
    assert [s.arguments["content"] for s in run.steps] == [
        m["content"] for m in _chat(AUTOGEN / name) if m["source"] != "user"]


def _chat(path: Path) -> list[dict]:
    document = json.loads(path.read_text(encoding="utf-8"))
    if isinstance(document, dict):
        document = document["agent_states"]["RoundRobinGroupChatManager"]["message_thread"]
    return document


def test_two_agentchat_runs_before_0_6_that_said_the_same_are_two_runs(home: Path) -> None:
    """Before 0.6 a message has no id, and a run's id was a hash of its messages' type, source and content: the
    same task run twice (a replayed or cached model, or two models answering alike) was one run, in two files
    (the later ingest replaced the earlier) or appended to one ``run_stream()`` log."""
    files = [AUTOGEN / "0.4.9-same_task_run1.json", AUTOGEN / "0.4.9-same_task_run2.json"]
    ids = [adapter_support.only(f).trajectory_id for f in files]
    streamed = adapter_support.runs(AUTOGEN / "0.5.7-two_runs_stream.jsonl")
    ids += [r.trajectory_id for r in streamed]
    assert len(set(ids)) == 4
    assert [[(s.action, s.observation) for s in r.steps] for r in streamed] == [
        [("add", "5"), ("respond", None)]] * 2
    assert ids == [adapter_support.only(f).trajectory_id for f in files] + [
        r.trajectory_id for r in adapter_support.runs(AUTOGEN / "0.5.7-two_runs_stream.jsonl")]  # stable
    for source in (*files, AUTOGEN / "0.5.7-two_runs_stream.jsonl"):
        code, out, err = run_cli("ingest", str(source))
        assert code == 0, out + err
    code, out, err = run_cli("stats", "--json")
    assert code == 0, err
    assert json.loads(out)["trajectories"] == 4


def test_two_cached_autogen_0_2_chats_are_two_runs() -> None:
    """AutoGen 0.2's ``cache_seed`` (42 by default) replays a rerun's model replies: the two chats' histories are
    the same and their ``chat_id`` None, and their id (a hash of the history) made them one run."""
    first, second = (adapter_support.only(f) for f in AG2_CACHED)
    assert first.trajectory_id != second.trajectory_id
    assert [(s.action, s.error) for s in first.steps] == [(s.action, s.error) for s in second.steps]
    assert adapter_support.only(AG2 / "chat_result.json").trajectory_id == \
        "ag2:314953319279223332320597834841235211383"  # AG2's own chat_id (a UUID's number) is still the id


def test_ag2_chats_numbered_by_their_caller_are_the_runs_of_their_file() -> None:
    """``a_initiate_chats`` sets each ChatResult's ``chat_id`` to the number its caller gave the chat (1, 2): every
    such file's chats were ``ag2:1`` and ``ag2:2``, a rerun's file replacing the earlier file's runs."""
    ids = [r.trajectory_id for name in ("ag2-0.14-async-chats-a.json", "ag2-0.14-async-chats-b.json")
           for r in adapter_support.runs(AG2 / name)]
    assert len(ids) == 4 and len(set(ids)) == 4


def test_runs_before_0_6_streamed_under_their_file_names_are_two_runs_and_not_named_after_the_copy(home: Path) -> None:
    """A run's id is its file's name where its dump keeps none: a dump streamed in as ``-`` with ``--stream-name``
    takes that name alone, not the copy's folder (``stream-0``, the same for every stream: told as an id taken from
    the temporary copy); unnamed, it is told so."""
    from typer.testing import CliRunner

    from trajsearch.cli import app

    for n in (1, 2):
        data = (AUTOGEN / f"0.4.9-same_task_run{n}.json").read_bytes()
        result = CliRunner().invoke(app, ["ingest", "-", "--stream-name", f"run{n}.json"], input=data)
        assert result.exit_code == 0, result.stdout + result.stderr
        assert "temporary copy" not in result.stderr
    code, out, err = run_cli("stats", "--json")
    assert code == 0, err
    assert json.loads(out)["trajectories"] == 2
    result = CliRunner().invoke(app, ["ingest", "-"], input=(AUTOGEN / "0.4.9-same_task_run1.json").read_bytes())
    assert result.exit_code == 0 and "autogen:stdin.1" in " ".join(result.stderr.split())


# Probe 48 F3AG: review R2S, a run_stream() log whose run raised before its TaskResult, on files AgentChat wrote.
@pytest.mark.parametrize("name", ["0.7.5-crash_then_run_stream.jsonl", "0.5.7-crash_then_run_stream.jsonl"])
def test_a_run_that_raised_before_its_task_result_does_not_swallow_the_next_run(name: str) -> None:
    """The messages since the last TaskResult were tested whole against the next one, which holds only its own run:
    the run that raised was read with the next run's call and answer (and that run read again, counted twice)."""
    broken, finished = adapter_support.runs(AUTOGEN / name)
    assert broken.task == "What is 2 + 3?"
    assert [(s.action, s.arguments, s.observation) for s in broken.steps] == [("add", {"a": 2, "b": 3}, "5")]
    assert "stop_reason" not in broken.metadata
    assert finished.task == "What is 4 + 5?"
    assert [(s.action, s.arguments, s.observation) for s in finished.steps] == [
        ("add", {"a": 4, "b": 5}, "9"), ("respond", {"content": "4 + 5 = 9."}, None)]
    assert broken.trajectory_id != finished.trajectory_id


def test_a_run_stream_log_with_a_run_that_raised_ingests_each_run_once(home: Path) -> None:
    for name in ("0.7.5-crash_then_run_stream.jsonl", "0.5.7-crash_then_run_stream.jsonl"):
        code, out, err = run_cli("ingest", str(AUTOGEN / name))
        assert code == 0, out + err
    code, out, err = run_cli("stats", "--json")
    assert code == 0, err
    assert json.loads(out)["trajectories"] == 4  # was 6: each log's finished run also read inside the broken one


def test_a_team_run_that_raised_before_its_task_result_is_its_own_run() -> None:
    broken, finished = adapter_support.runs(AUTOGEN / "0.7.5-newteam_crash_then_run_stream.jsonl")
    assert (broken.task, [s.action for s in broken.steps]) == ("What is the weather in Paris?", ["get_weather"])
    assert finished.task == "What is the weather in Atlantis?"
    assert [(s.action, s.error) for s in finished.steps] == [
        ("get_weather", "city not found: Atlantis"), ("respond", None)]
    assert finished.metadata["stop_reason"] == "Text 'TERMINATE' mentioned"

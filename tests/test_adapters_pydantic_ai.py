"""Pydantic AI message histories as apps save them (``result.all_messages_json()``): a real one committed by an
app, and histories written by pydantic-ai-slim 1.0.10 and 2.78.0 themselves (tests/fixtures/pydantic-ai/.pydai30/
README.md)."""

from __future__ import annotations

import json
from datetime import datetime, timezone
from pathlib import Path

import pytest

from trajsearch.ingest.detect import detect_format
from trajsearch.ingest.read import read_inputs
from trajsearch.model import MAX_STEPS, Outcome

from adapter_support import only, runs
from cli_support import newcomer, run_cli, unnoted  # noqa: F401 (a fixture)

PYDAI = Path(__file__).parent / "fixtures" / "pydantic-ai" / ".pydai30"
V1, V2 = PYDAI / "v1.0.10-weather.json", PYDAI / "v2.78-weather.json"
REAL = PYDAI / "taranaa-message_history.json"
WEATHER_STEPS = [
    ("get_weather", {"town": "Paris"}, "city: Field required\ntown: Extra inputs are not permitted"),
    ("get_weather", {"city": "Atlantis"}, "unknown city 'Atlantis': use a real city name"),
    ("get_weather", {"city": "Paris"}, None),
    ("respond", {"content": "It is sunny in Paris, 24 C."}, None),
    ("get_weather", {"city": "Oslo"}, None),
    ("respond", {"content": "Oslo: rain, 9 C. Take an umbrella."}, None),
]


def test_every_history_file_is_detected_as_pydantic_ai() -> None:
    assert {detect_format(p) for p in PYDAI.iterdir() if p.suffix in (".json", ".jsonl")} == {"pydantic-ai"}


def test_a_1x_history_is_a_run_whose_retry_prompts_are_its_calls_errors() -> None:
    """Before 2.x a call whose arguments failed validation, or whose tool raised ``ModelRetry``, is answered by a
    ``retry-prompt`` with its ``tool_call_id``: that call's error."""
    run = only(V1)
    assert run.task == "What is the weather in Paris?"
    assert [(s.action, s.arguments, s.error) for s in run.steps] == WEATHER_STEPS
    assert run.steps[2].observation == "sunny, 24 C"
    assert run.steps[3].observation == "And in Oslo?"  # the next turn answers the words before it
    assert run.metadata["user_prompts"] == ["And in Oslo?"]
    assert run.model_id == "function:weather" and run.outcome is Outcome.unknown
    assert run.metadata["total_tokens"] > 0


def test_a_2x_history_reads_the_same_from_its_failed_returns_and_is_named_by_its_conversation() -> None:
    """2.x answers the same calls with ``tool-return`` s of ``outcome: retried``, and names the conversation."""
    run = only(V2)
    assert [(s.action, s.arguments, s.error) for s in run.steps] == WEATHER_STEPS
    conversation = json.loads(V2.read_text())[0]["conversation_id"]
    assert run.trajectory_id == f"pydantic-ai:{conversation}"


def test_a_history_without_ids_is_named_by_its_first_message_so_a_later_save_is_the_same_run() -> None:
    """1.x keeps no id: the digest of the first message (its timestamps to the microsecond). The history saved after
    the first turn (the JSONL's first line) and after the second are one conversation; another is another."""
    first_turn, structured = runs(PYDAI / "v1.0.10-histories.jsonl")
    assert first_turn.trajectory_id == only(V1).trajectory_id != structured.trajectory_id
    assert first_turn.trajectory_id.startswith("pydantic-ai:") and len(first_turn.trajectory_id) == 32
    assert "user_prompts" not in first_turn.metadata


def test_a_call_of_the_output_tool_is_the_answer_and_its_failed_validation_its_error() -> None:
    for path in (PYDAI / "v1.0.10-histories.jsonl", PYDAI / "v2.78-histories.jsonl"):
        structured = runs(path)[1]
        assert structured.task == "Give Paris's temperature as JSON."
        assert [(s.action, json.loads(s.arguments["content"])) for s in structured.steps] == [
            ("respond", {"city": "Paris", "celsius": "warm"}), ("respond", {"city": "Paris", "celsius": 24})], path
        assert structured.steps[0].error.startswith("celsius: Input should be a valid integer"), path
        assert structured.steps[1].error is None


def test_a_real_app_history_of_structured_answers() -> None:
    """winndan/taranaa's message_history.json (March 2025): four prompts each answered by ``final_result``."""
    run = only(REAL)
    assert run.task == "I want a trip for summer"
    assert run.metadata["user_prompts"] == ["Can you suggest something cheaper?", "I want a trip for summer",
                                            "Can you suggest something cheaper?"]
    assert [s.action for s in run.steps] == ["respond"] * 4
    assert json.loads(run.steps[0].arguments["content"])["answer"].startswith("OK. I am ready to help you")
    assert run.steps[0].observation == "Can you suggest something cheaper?"
    assert run.model_id == "gemini-2.0-flash"
    assert run.created_at == datetime(2025, 3, 27, 7, 6, 17, 994968, tzinfo=timezone.utc)


def test_thinking_text_beside_calls_a_returned_list_a_denied_call_and_refused_text() -> None:
    """Parts the weather runs lack (built from pydantic-ai 2.78's classes, dumped by its own adapter)."""
    run = only(PYDAI / "v2.78-parts.json")
    assert run.task == "Who is on the squad in this photo?"  # the image left out
    listed, denied, refused, answer = run.steps
    assert listed.thought == denied.thought == "I should list the squad first.\n\nLet me check the roster."
    assert (listed.action, listed.observation, listed.error) == (
        "list_squad_members", '["Aegis", "Nova", "Quark"]', None)
    assert denied.error == "not run: denied: The user denied this call."
    assert (refused.action, refused.arguments, refused.error) == (
        "respond", {"content": "Aegis and Nova"}, "Name all three members.")
    assert (answer.arguments, answer.error) == ({"content": "Aegis, Nova and Quark."}, None)
    assert run.model_id == "claude-sonnet-4-5"


def test_a_history_saved_a_message_a_line_keeps_its_run_past_a_bad_line(tmp_path: Path) -> None:
    messages = json.loads(V1.read_text())
    lines = [json.dumps(m) for m in messages]
    lines.insert(5, json.dumps({"kind": "request", "parts": 3}))
    path = tmp_path / "history.jsonl"
    path.write_text("\n".join(lines) + "\n")
    results = list(read_inputs([path]))
    [bad] = [r for r in results if not r.ok]
    assert bad.position == "line 6" and "not a Pydantic AI message" in bad.error, bad
    assert bad.error.endswith("its 'parts' is a number, not an array"), bad  # what is wrong with it (review nit 6)
    [good] = [r.trajectory for r in results if r.ok]
    assert [(s.action, s.arguments, s.error) for s in good.steps] == WEATHER_STEPS


def test_a_history_with_a_message_of_no_part_kind_is_refused_naming_it(tmp_path: Path) -> None:
    path = tmp_path / "histories.jsonl"
    good = json.loads(V1.read_text())
    broken = [good[0], {"kind": "response", "parts": [{"content": "x"}]}]
    path.write_text(json.dumps(good) + "\n" + json.dumps(broken) + "\n")
    results = list(read_inputs([path]))
    assert [(r.ok, r.position) for r in results] == [(True, "line 1"), (False, "line 2")]  # JSONL of arrays
    assert "message 2 of the Pydantic AI history is no ModelRequest or ModelResponse: its part 1 has no " \
           "'part_kind'" in results[1].error


def test_ingest_dry_run_then_a_search_by_the_tool_error_finds_the_run(newcomer) -> None:  # noqa: F811
    code, out, err = run_cli("formats")
    assert code == 0 and "pydantic-ai" in out + err
    code, out, err = run_cli("ingest", "--dry-run", str(V1))
    assert code == 0, out + err
    assert "format pydantic-ai; runs 1" in out + err
    code, out, err = run_cli("ingest", str(PYDAI / "v2.78-weather.json"), str(REAL), "-t", "acme")
    assert code == 0, out + err
    code, out, err = run_cli("search", "unknown city 'Atlantis': use a real city name", "-t", "acme", "--json")
    assert code == 0 and not [line for line in unnoted(err) if "error" in line.lower()], out + err
    hits = json.loads(out)
    assert hits and hits[0]["trajectory_id"] == only(V2).trajectory_id, out


def test_two_saves_of_one_conversation_ingested_together_are_one_run_the_longer_kept(newcomer) -> None:  # noqa: F811
    """The first turn's history (the JSONL's first line) and the history after the second turn share the id of their
    first message; the whole folder is 9 runs, not 11, and the run kept is the one of both turns."""
    code, out, err = run_cli("ingest", str(PYDAI), "-t", "acme")
    assert code == 0, out + err
    code, out, err = run_cli("stats", "--json", "-t", "acme")
    assert code == 0 and json.loads(out)["trajectories"] == 9, out + err
    code, out, err = run_cli("show", only(V1).trajectory_id, "-t", "acme", "--json")
    assert code == 0, out + err
    assert len(json.loads(out)["steps"]) == len(WEATHER_STEPS), out


def test_a_jsonl_of_histories_keeps_the_histories_after_a_line_cut_short(tmp_path: Path) -> None:
    """A file that opens with ``[`` yet is JSON Lines is read line by line: a history cut short costs itself alone,
    and its error names its line (review finding 1: every history after it was lost, the error said ``record 2``)."""
    whole = json.dumps(json.loads(V1.read_text()))
    path = tmp_path / "histories.jsonl"
    path.write_text("\n".join([whole, whole[: len(whole) // 2], json.dumps(json.loads(REAL.read_text()))]) + "\n")
    results = sorted(read_inputs([path]), key=lambda r: r.position)
    assert [(r.ok, r.position) for r in results] == [(True, "line 1"), (False, "line 2"), (True, "line 3")], results
    assert "malformed JSON" in results[1].error
    assert results[2].trajectory.trajectory_id == only(REAL).trajectory_id


def test_an_output_pydantic_ai_did_not_use_is_a_call_not_run_and_a_failed_call_has_no_result() -> None:
    """2.x answers an output call it set aside (a tool's retry first) with a status text of its own
    (``_tool_status.py``): the call was not used, not answered. A failed call's text is its error, not also its
    result (review findings 3 and 7)."""
    failed, set_aside, answer = only(PYDAI / "v2.78-retrywins.json").steps
    assert (failed.error, failed.observation) == ("city: Field required\ntown: Extra inputs are not permitted", None)
    assert (set_aside.action, set_aside.arguments, set_aside.observation) == (
        "respond", {"content": '{"city": "Rome"}'}, None)
    assert set_aside.error == ("not run: Output not used as the final result - addressing tool retries from this "
                               "round first.")
    assert (answer.arguments, answer.error) == ({"content": '{"city": "Paris"}'}, None)


def test_a_history_of_calls_without_ids_pairs_each_answer_with_the_earliest_unanswered_call_of_its_tool() -> None:
    """pydantic-ai before March 2025 wrote ``tool_call_id: null`` and answered calls in their order (0.0.24 here):
    the retry-prompt is the first call's error, the return the second's result (review finding 2: both were set
    apart from their calls, the error lost)."""
    run = only(PYDAI / "v0.0.24-noids.json")
    assert [(s.action, s.arguments, s.observation, s.error) for s in run.steps] == [
        ("get_weather", {"town": "Oslo"}, None, "city: Field required\ntown: Extra inputs are not permitted"),
        ("get_weather", {"city": "Paris"}, "sunny", None),
        ("get_weather", {"city": "Oslo"}, "rain", None),
        ("respond", {"content": "Paris: sunny. Oslo: rain."}, None, None)]


def test_the_calls_of_a_response_the_run_stopped_at_are_not_run() -> None:
    """2.x marks a response the run did not act on (a usage limit crossed, a cancelled stream) ``state: interrupted``
    (review finding 4: its call read as a call that ran with no result)."""
    run = only(PYDAI / "v2.78-interrupted.json")
    paris, oslo = run.steps
    assert (paris.arguments, paris.observation, paris.error) == ({"city": "Paris"}, "sunny", None)
    assert (oslo.arguments, oslo.observation) == ({"city": "Oslo"}, None)
    assert oslo.error == "not run: the response was interrupted: the run stopped before acting on it"
    assert run.outcome is Outcome.unknown


def test_an_unusable_call_id_or_tool_name_is_read_past(tmp_path: Path) -> None:
    """An id that is no string (a list) is no key and a tool name that is no string no name (review nit 5: the run
    was lost to ``TypeError: unhashable type: 'list'``)."""
    messages = json.loads(V1.read_text())
    calls = [p for m in messages for p in m["parts"] if p["part_kind"] == "tool-call"]
    answers = [p for m in messages for p in m["parts"] if p["part_kind"] in ("tool-return", "retry-prompt")]
    answers[0]["tool_call_id"], answers[1]["tool_call_id"], calls[2]["tool_name"] = ["x"], ["y"], {"x": 1}
    path = tmp_path / "history.json"
    path.write_text(json.dumps(messages))
    run = only(path)
    assert [s.action for s in run.steps][:3] == ["get_weather", "get_weather", "tool"]


def test_a_history_longer_than_the_step_limit_is_read_clipped_as_every_sessions_is(tmp_path: Path) -> None:
    """pydantic-ai numbers no steps of its own: a history of more than ``MAX_STEPS`` calls, or a tool named longer
    than a step's action may be, is read as ``_agent_cli.finish_steps`` reads every session (its start and end
    kept, the count noted; the name cut to 200 characters), not rejected (round 30's re-read)."""
    request, response, answer = json.loads(V1.read_text())[:3]
    calls = [{**response["parts"][0], "tool_name": f"tool_{n}", "tool_call_id": f"call_{n}"} for n in range(5_100)]
    calls[0]["tool_name"] = "x" * 300
    returns = [{"tool_name": c["tool_name"], "tool_call_id": c["tool_call_id"], "content": "ok",
                "timestamp": answer["parts"][0]["timestamp"], "part_kind": "tool-return"} for c in calls]
    path = tmp_path / "long.json"
    path.write_text(json.dumps([request, {**response, "parts": calls}, {**answer, "parts": returns}]))
    run = only(path)
    assert len(run.steps) == MAX_STEPS and run.metadata["steps_truncated_from"] == 5_100
    assert run.steps[0].action == "x" * 200 and run.steps[-1].action == "tool_5099" and run.steps[-1].index == 5_099


def test_a_naive_timestamp_beside_an_aware_one_is_read_as_utc(tmp_path: Path) -> None:
    """pydantic-ai writes its own times in UTC with their offset (``_utils.now_utc``); an app that builds a message
    itself may give a naive ``datetime``, which pydantic dumps without one. Read as UTC, as ``_agent_cli.iso_time``
    reads every session's times (the run was lost to ``TypeError`` comparing it with the aware ones)."""
    messages = json.loads(V1.read_text())
    messages[0]["parts"][0]["timestamp"] = "2026-12-07T04:51:01"
    path = tmp_path / "naive.json"
    path.write_text(json.dumps(messages))
    assert only(path).created_at == datetime(2026, 12, 7, 4, 51, 1, tzinfo=timezone.utc)


PER_TURN = Path(__file__).parent / "fixtures" / "pydantic-ai" / ".left31" / "v2.78-per-turn.jsonl"


def test_a_conversation_logged_a_run_a_line_is_one_run_of_every_turn() -> None:
    """An app logging each run's ``new_messages_json()`` writes a conversation's turns a line each (pydantic-ai 2.78
    itself, tests/fixtures/pydantic-ai/.left31): the lines of one ``conversation_id`` are one history, the first
    prompt its task (each later line was a run of its own, tasked with a follow-up alone, kept under ``id+hash``)."""
    run = only(PER_TURN)
    first = json.loads(PER_TURN.read_text().splitlines()[0])[0]
    assert run.trajectory_id == f"pydantic-ai:{first['conversation_id']}"
    assert run.task == "What is the weather in Paris?"
    assert run.metadata["user_prompts"] == ["And in Oslo?", "And in Rome?"]
    assert [(s.arguments, s.observation) for s in run.steps if s.action == "get_weather"] == [
        ({"city": "Paris"}, "sunny, 24 C"), ({"city": "Oslo"}, "rain, 9 C"), ({"city": "Rome"}, "clear, 28 C")]


def test_a_history_saved_after_each_turn_in_one_file_keeps_each_message_once(tmp_path: Path) -> None:
    """All messages after turn 1, then after turn 2, a line each (one conversation): one run, its messages once; a
    line of another conversation, or of no id (1.x), stays a run of its own."""
    messages = json.loads(V2.read_text())
    path = tmp_path / "saves.jsonl"
    path.write_text("\n".join(json.dumps(h) for h in (messages[:8], json.loads(V1.read_text()), messages)) + "\n")
    two_turns, other = runs(path)
    assert [(s.action, s.arguments, s.error) for s in two_turns.steps] == WEATHER_STEPS
    assert two_turns.trajectory_id == only(V2).trajectory_id and other.trajectory_id == only(V1).trajectory_id


FORKS = Path(__file__).parent / "fixtures" / "pydantic-ai" / ".left31fix"


@pytest.mark.parametrize("name, follow_ups", [
    ("fork-all.jsonl", [["And in Oslo?"], ["And in Rome?"]]),  # two runs forked off one seed: its id inherited
    ("fork-newid.jsonl", [["And in Oslo?"], ["And in Rome?"]]),  # the fork given conversation_id='new'
    ("fixed-id.jsonl", [None, None]),  # two sessions under an app's fixed id, each opening with its system prompt
])
def test_lines_sharing_a_conversation_id_that_do_not_continue_it_are_runs_of_their_own(name: str,
                                                                                         follow_ups: list) -> None:
    """pydantic-ai 2.78's own lines (tests/fixtures/pydantic-ai/.left31fix): a line that shares the history's head and
    then differs, or opens afresh with a system prompt, is no later turn of the history before it (round 31 fix: each
    was joined into one history that never existed, its follow-ups in one run)."""
    read = runs(FORKS / name)
    assert [r.metadata.get("user_prompts") for r in read] == follow_ups
    assert len({r.trajectory_id for r in read}) == 2


def test_a_realtime_sessions_spoken_history_is_a_run_of_its_transcripts() -> None:
    """A realtime session's history (pydantic-ai 2.78 replaying its own recorded Azure gpt-realtime session,
    tests/fixtures/pydantic-ai/.aud33b): what the person and the model said are ``speech`` parts; their
    transcripts are the task and the answer, as pydantic-ai itself reads them when it sends the history on."""
    path = Path(__file__).parent / "fixtures" / "pydantic-ai" / ".aud33b" / "v2.78-realtime-spoken.json"
    run = only(path)
    assert run.task == "Hello, my name is Marcelo."
    called, answer = run.steps
    assert (called.action, called.arguments, called.observation) == (
        "remember_name", {"name": "Marcelo"}, "Stored Marcelo.")
    assert answer.action == "respond" and "Marcelo" in answer.arguments["content"]
    assert run.model_id == "gpt-realtime"
    assert run.trajectory_id == f"pydantic-ai:{json.loads(path.read_text())[0]['conversation_id']}"

"""Letta agent files (``.af``), read from real files of letta-ai/agent-file (tests/fixtures/letta/.newb31/README.md):
the current ``AgentFileSchema`` export (several agents a file) and the legacy 0.6.x one (one agent)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from trajsearch.actions import ran
from trajsearch.ingest.adapters._agent_cli import NEVER_ANSWERED
from trajsearch.ingest.detect import detect_format
from trajsearch.ingest.read import read_inputs
from trajsearch.model import Outcome

from adapter_support import only, runs
from cli_support import run_cli, unnoted

FIXTURES = Path(__file__).parent / "fixtures" / "letta" / ".newb31"
EZRA = FIXTURES / "ezra.af"
LEGACY = FIXTURES / "memgpt_agent_with_convo.af"
TEMPLATE = FIXTURES / "loop.af"


def test_each_agent_of_a_file_is_a_run_its_failed_tool_call_a_step_error_from_its_traceback() -> None:
    assert detect_format(EZRA) == "letta"
    ezra, sleeptime = runs(EZRA)
    assert ezra.task.startswith("From: [REDACTED] Mentions: Content: Someone else mentioned this")
    assert ezra.outcome is Outcome.unknown and ezra.model_id == "gpt-4o-mini"
    assert ezra.created_at.isoformat() == "2025-08-10T17:00:55.353227+00:00"
    # send_message is the agent's reply; a tool the agent called, with Letta's envelope's message its observation
    reply = ezra.steps[0]
    assert reply.action == "respond" and reply.arguments == {"content": ""}
    assert reply.thought == "This message does not contain a direct question or issue, so I will not send it to Slack."
    failed = next(s for s in ezra.steps if s.action == "send_slack_message_to_discord_support")
    assert failed.arguments == {"request_heartbeat": True}
    assert failed.error == "NameError: name 'message' is not defined"  # the last line of the tool's traceback
    assert failed.observation.startswith("Error executing function send_slack_message_to_discord_support")
    search = next(s for s in ezra.steps if s.action == "web_search")
    assert search.error is None and search.observation.startswith('{\n  "api_key_source"')
    # later user messages are prompts; Letta's own heartbeat after the failure is none
    prompts = ezra.metadata["user_prompts"]
    assert prompts[0].startswith("From: [REDACTED] Mentions: Content: I should do a stream on this too")
    assert not any("heartbeat" in p for p in prompts)
    # the sleep-time agent the conversation agent manages (the file's group) is its sub-agent
    assert sleeptime.metadata["is_subagent"] is True
    assert sleeptime.metadata["parent_session_id"] == ezra.metadata["session_id"]
    assert ezra.trajectory_id == f"letta:{ezra.metadata['session_id']}" and "is_subagent" not in ezra.metadata
    assert sleeptime.model_id == "claude-sonnet-4-5-20250929"
    constrained, inserted = [s for s in sleeptime.steps if s.error]
    assert constrained.action == "send_discord_message" and constrained.error.startswith(
        "[ToolConstraintError] Cannot call send_discord_message, valid tools include:")
    assert inserted.action == "memory_insert" and "Exceeds 5000 character limit (requested 5203)" in inserted.error


def test_a_legacy_export_unwraps_the_users_words_and_passes_over_letta_own_messages() -> None:
    run = only(LEGACY)
    # the login event and heartbeats are Letta's; the user's words are in its user_message envelope
    assert run.task == "hi my name is actually sarah not chad "
    assert run.metadata["user_prompts"][0] == "I want you to stop calling yourself Sam, its not the best name for you"
    assert run.model_id == "gpt-4-0613" and run.metadata["agent_type"] == "memgpt_agent"
    greeting, edit = run.steps[:2]
    assert greeting.action == "respond" and greeting.arguments == {"content": "More human than human is our motto."}
    assert greeting.thought == "Bootup sequence complete. Persona activated. Testing messaging functionality."
    assert edit.action == "core_memory_replace" and edit.arguments["new_content"] == "First name: Sarah"
    assert edit.observation == "None" and edit.error is None and ran(edit)


def test_the_run_id_is_the_agents_in_any_copy_of_its_file(tmp_path: Path) -> None:
    """The file's ids are positions (``agent-0`` in every file): the run is named by its agent's first message."""
    copy = tmp_path / "elsewhere" / "exported.af"
    copy.parent.mkdir()
    shutil.copy(EZRA, copy)
    assert [r.trajectory_id for r in runs(copy)] == [r.trajectory_id for r in runs(EZRA)]
    assert len({r.trajectory_id for r in runs(EZRA)}) == 2


def test_a_template_with_no_conversation_holds_no_run() -> None:
    assert detect_format(TEMPLATE) == "letta"
    assert runs(TEMPLATE) == []


def test_a_file_cut_short_or_of_the_wrong_shape_is_refused_naming_the_file(tmp_path: Path) -> None:
    cut = tmp_path / "cut.af"
    cut.write_text(EZRA.read_text()[:20_000])
    assert detect_format(cut) == "letta"  # told by its head
    [parsed] = read_inputs([cut])
    assert parsed.trajectory is None and "malformed JSON" in str(parsed.error) and str(cut) in parsed.source
    wrong = tmp_path / "wrong.af"
    document = json.loads(EZRA.read_text())
    wrong.write_text(json.dumps({**document, "agents": "agent-0"}))
    [parsed] = read_inputs([wrong])
    assert parsed.trajectory is None and "`agents` is a string, not a list of agents" in str(parsed.error)
    document["agents"][1]["messages"] = {"message-144": {}}
    wrong.write_text(json.dumps(document))
    good, bad = read_inputs([wrong])  # the file's other agent is still read
    assert good.trajectory is not None and "its `messages` is an object" in str(bad.error)


def test_cli_dry_run_walks_the_af_files_and_an_ingest_finds_a_run_by_its_tool_error(home: Path) -> None:
    code, out, err = run_cli("ingest", str(FIXTURES), "-t", "acme", "--dry-run")
    assert code == 0, out + err
    assert "ezra.af: format letta; runs 2; rejected 0;" in out, out
    assert "loop.af: format letta; runs 0; rejected 0; passed over 1 agent(s): no user message" in out, out
    code, out, err = run_cli("ingest", str(FIXTURES), "-t", "acme", "--json", "--quiet")
    assert code == 0 and json.loads(out)["ingested"] == 4, out + err
    code, out, err = run_cli("search", "NameError: name 'message' is not defined", "-t", "acme", "--json")
    assert code == 0 and not unnoted(err), out + err
    assert json.loads(out)[0]["trajectory_id"] == runs(EZRA)[0].trajectory_id, out
    code, out, err = run_cli("formats")
    assert code == 0 and "letta" in out, out + err


def test_a_0_6_43_export_on_one_line_and_a_double_encoded_file_are_read(tmp_path: Path) -> None:
    """Letta 0.6.43 marked each message ``in_context`` (no ``in_context_message_indices``) and wrote the file as one
    compact line; letta-ai/agent-file also committed files as a JSON string of themselves."""
    old = FIXTURES / "composio_github_star_agent.af"
    assert detect_format(old) == "letta"
    run = only(old)
    assert run.task == "please star the repository https://github.com/letta-ai/letta"
    star = run.steps[1]
    assert star.action == "github_star_a_repository_for_the_authenticated_user" and star.arguments["repo"] == "letta"
    assert star.observation == '{\n  "details": "Action executed successfully"\n}' and star.error is None
    assert run.steps[0].observation is None  # the greeting's envelope says `"message": null`
    encoded = tmp_path / "encoded.af"
    encoded.write_text(json.dumps(EZRA.read_text()))
    assert detect_format(encoded) == "letta"
    assert [r.trajectory_id for r in runs(encoded)] == [r.trajectory_id for r in runs(EZRA)]


def test_a_walk_takes_the_af_files_that_open_as_letta_s_and_passes_over_other_af_files(home: Path,
                                                                                      tmp_path: Path) -> None:
    shutil.copy(LEGACY, tmp_path / "agent.af")
    (tmp_path / "notes.af").write_text("not an agent file\n")  # another program's .af
    (tmp_path / "encoded.af").write_text(json.dumps(TEMPLATE.read_text()))  # a template saved double-encoded
    code, out, err = run_cli("ingest", str(tmp_path), "-t", "acme", "--dry-run")
    assert code == 0, out + err
    assert "agent.af: format letta; runs 1; rejected 0;" in out, out
    assert "encoded.af: format letta; runs 0; rejected 0; passed over 1 agent(s): no user message" in out, out
    assert "notes.af" not in out + err  # not read, not refused


REMINDED = Path(__file__).parent / "fixtures" / "letta" / ".newbfix" / "lettabot-builder.af"
APPROVED = REMINDED.parent / "test_agent.af"


def test_letta_code_calls_that_asked_approval_are_steps_and_a_denied_one_was_not_run() -> None:
    """letta-ai/letta's tests/test_agent_files/test_agent.af (a Letta Code session): each call sits only in a
    ``role: approval`` message with ``tool_calls``, its result in the response's ``approvals``; one Bash denied."""
    run = only(APPROVED)
    assert run.task == "tell me about this repo" and run.model_id == "claude-sonnet-4-5-20250929"
    assert [s.action for s in run.steps[:6]] == ["LS", "Bash", "Glob", "Glob", "Read", "Read"]
    pwd = run.steps[1]
    assert pwd.arguments["command"] == "pwd" and pwd.observation == "/Users/sarahwooders/repos/letta-cloud/apps/core\n"
    denied = next(s for s in run.steps if s.error and "denied" in s.error)
    assert denied.action == "Bash" and denied.arguments["command"].startswith("curl -s https://pypi.org/pypi/letta")
    assert denied.error == "not run: denied by the user, saying: just stop" and not ran(denied)
    assert sum(1 for s in run.steps if s.action != "respond") == 11  # 3 parallel Bash calls await approval at the end


def _with_messages(tmp_path: Path, messages: list[dict]) -> Path:
    """ezra.af's conversation agent holding ``messages`` after its system message and first user message."""
    document = json.loads(EZRA.read_text())
    agent = document["agents"][0]
    agent["messages"] = agent["messages"][:2] + messages
    document["agents"], document["groups"] = [agent], []
    path = tmp_path / "approvals.af"
    path.write_text(json.dumps(document))
    return path


def test_a_client_tool_failing_is_a_step_error_and_a_legacy_approval_response_a_denial(tmp_path: Path) -> None:
    """No committed file holds these: the messages are written as Letta's source writes them (rest_api/utils.py
    ``create_approval_request_message_from_llm_response``: the requested calls only in a ``role: approval`` message;
    the response's ``approvals`` or, before them, the message's ``approve`` / ``approval_request_id`` /
    ``denial_reason``; ``create_tool_returns_for_denials``' tool message after a denial)."""
    def call(call_id: str, name: str) -> dict:
        return {"id": call_id, "type": "function",
                "function": {"name": name, "arguments": json.dumps({"command": "rm -rf build"})}}
    read_failed = "Traceback (most recent call last):\nFileNotFoundError: [Errno 2] No such file: 'x.py'"
    path = _with_messages(tmp_path, [
        {"role": "approval", "content": [], "tool_calls": [call("call_A", "Bash")]},
        {"role": "approval", "content": [],
         "approvals": [{"type": "approval", "tool_call_id": "call_A", "approve": False, "reason": "too risky"}]},
        {"role": "tool", "content": [], "tool_call_id": "call_A", "tool_returns": [
            {"tool_call_id": "call_A", "status": "error",
             "func_response": "Error: request to call tool denied. User reason: too risky"}]},
        {"role": "approval", "content": [], "tool_calls": [call("call_B", "Read")]},
        {"role": "approval", "content": [], "approvals": [
            {"type": "tool", "tool_call_id": "call_B", "status": "error", "tool_return": read_failed,
             "stderr": [read_failed]}]},
        {"role": "approval", "content": [], "tool_calls": [call("call_C", "Write")]},
        {"role": "approval", "content": [], "approve": False, "approval_request_id": "call_C",
         "denial_reason": "not now", "approvals": []},
    ])
    bash, read, write = only(path).steps
    assert bash.action == "Bash" and bash.arguments == {"command": "rm -rf build"}
    assert bash.error == "not run: denied by the user, saying: too risky" and not ran(bash)
    assert read.action == "Read" and read.error == "FileNotFoundError: [Errno 2] No such file: 'x.py'" and ran(read)
    assert write.error == "not run: denied by the user, saying: not now"


def test_a_legacy_export_of_a_window_of_the_messages_names_its_agent_alike(tmp_path: Path) -> None:
    """Letta 0.6.43 exported a window of an agent's messages (agent-file's memgpt_agent_with_convo.af, blob a26ad421,
    opens with a tool result mid-conversation): the run is named by the agent's own ``created_at``."""
    document = json.loads(LEGACY.read_text())
    window = tmp_path / "window.af"
    window.write_text(json.dumps({**document, "messages": document["messages"][3:]}))
    assert only(window).trajectory_id == only(LEGACY).trajectory_id


def test_letta_code_system_reminders_are_not_the_task() -> None:
    """lettabot-builder.af (agent-file blob 96676ee1): Letta Code's first user message is two ``<system-reminder>``
    parts (the device, 84 KB of skills) and then the question; a sleep-time agent's every prompt opens with one."""
    builder, sleeptime = runs(REMINDED)
    assert builder.task == "What do you know about me?"
    assert builder.steps[0].action == "respond" and builder.model_id == "claude-opus-4-6"
    assert sleeptime.task.startswith("Messages:\nassistant: Calling tool Write")
    assert sleeptime.metadata["user_prompts"][0].startswith("Messages: assistant: Let me verify the final doc")
    assert sleeptime.metadata["is_subagent"] is True


def test_a_file_of_no_agents_is_passed_over_saying_so_and_a_time_not_a_string_is_named(tmp_path: Path,
                                                                                       home: Path) -> None:
    document = json.loads(EZRA.read_text())
    empty = tmp_path / "empty.af"
    empty.write_text(json.dumps({**document, "agents": [], "groups": []}))
    document["agents"][0]["messages"][0]["created_at"] = 12345
    untimed = tmp_path / "untimed.af"
    untimed.write_text(json.dumps(document))
    _, out, err = run_cli("ingest", str(tmp_path), "-t", "acme", "--dry-run")  # a rejection: exit code 3
    assert "empty.af: format letta; runs 0; rejected 0; passed over 1 file(s): no agent" in out, out + err
    assert "untimed.af, agents[0]: a Letta agent with no `created_at` string" in out + err, out + err


def test_an_answer_said_over_two_messages_starts_at_its_first_and_an_id_less_call_takes_no_id_less_return(
        tmp_path: Path) -> None:
    """Messages as Letta writes them (ezra.af's shape). An answer is dated by its first text, as every session
    reader dates it (``SessionSteps.say``); a call with no id cannot be told from another, so no result is paired
    with it (``SessionSteps.open_call`` registers no empty id), where the id ``"None"`` paired one before."""
    def said(text: str, at: str, **more: object) -> dict:
        return {"role": "assistant", "content": [{"type": "text", "text": text}], "created_at": at, **more}
    path = _with_messages(tmp_path, [
        said("Looking into it.", "2025-08-10T17:20:00+00:00"),
        said("Done: the docs cover it.", "2025-08-10T17:20:05+00:00"),
        {"role": "user", "content": [{"type": "text", "text": "thanks, one more"}],
         "created_at": "2025-08-10T17:21:00+00:00"},
        said("", "2025-08-10T17:21:10+00:00", tool_calls=[
            {"type": "function", "function": {"name": "web_search", "arguments": json.dumps({"query": "x"})}}]),
        {"role": "tool", "content": [{"type": "text", "text": "whose?"}], "created_at": "2025-08-10T17:21:11+00:00"},
    ])
    steps = only(path).steps
    answer = next(s for s in steps if s.arguments == {"content": "Looking into it.\n\nDone: the docs cover it."})
    assert answer.action == "respond" and answer.started_at.isoformat() == "2025-08-10T17:20:00+00:00"
    search = steps[-1]
    assert search.action == "web_search" and search.observation is None and search.ended_at is None


def test_letta_codes_headless_output_is_named_as_no_run_not_taken_for_claude_codes() -> None:
    """Bug (AUDGL34): ``letta -p --output-format stream-json`` opens with Claude Code's ``init`` shape and was read as
    Claude Code's stream, refused pointing at a ``~/.claude/projects`` transcript that Letta never wrote; its
    ``--output-format json`` result was an unrecognised format. Neither holds the prompt: both are named as Letta
    Code's, with the conversation to export (written from letta-code's ``headless.ts``: .aud34/README.md)."""
    for name in ("letta-headless-stream.jsonl", "letta-headless-result.json"):
        with pytest.raises(ValueError, match=r"no run in this file: Letta Code's headless output .*records no prompt: "
                                             r"ingest ~/.letta/transcripts/agent-3c1e9b7a-52d4-4f0e-8a6b-1d2c3e4f5a60/"
                                             r"conv-7d2b4f1e-9c3a-4e5b-8f60-2a1b3c4d5e6f/transcript.jsonl if .*, or "
                                             r"export conversation conv-7d2b4f1e-9c3a-4e5b-8f60-2a1b3c4d5e6f of agent "
                                             r"agent-3c1e9b7a-52d4-4f0e-8a6b-1d2c3e4f5a60 .*`/export`"):
            detect_format(FIXTURES.parent / ".aud34" / name)


def _headless(tmp_path: Path, name: str, **changed: object) -> Path:
    """A copy of a .aud34 headless capture with the fields of its ``init`` and ``result`` records changed (the
    ``subtype`` of its ``result`` only)."""
    lines = (FIXTURES.parent / ".aud34" / name).read_text().splitlines()
    records = [json.loads(line) for line in lines] if name.endswith(".jsonl") else [json.loads("\n".join(lines))]
    for record in records:
        if record.get("type") in ("system", "result"):
            record.update((k, v) for k, v in changed.items() if k != "subtype" or record["type"] == "result")
    out = tmp_path / name
    out.write_text("\n".join(json.dumps(r) for r in records) + "\n")
    return out


@pytest.mark.parametrize("name", ["letta-headless-stream.jsonl", "letta-headless-result.json"])
def test_letta_codes_headless_output_of_every_kind_says_what_to_export(tmp_path: Path, name: str) -> None:
    """Review of AUDGL34 (findings 2-5): ``--ephemeral`` writes ``agent_id: null`` (``headless.ts``'s
    ``publicAgentId``), which went back to being read as Claude Code's stream (the result: unrecognised); the
    ``default`` conversation (``--conv default``, Letta Code's subagents) was told to export a ``default.af`` that
    ``/export`` never writes (it writes ``<agent-id>.af`` there); an ``interrupted`` result was not told; an id was
    printed whole, newlines and all. What the user sees, through ``ingest``: exit 2, the reason."""
    said = "no run in this file: Letta Code's headless output .*records no prompt: "
    agent, conversation = "agent-3c1e9b7a-52d4-4f0e-8a6b-1d2c3e4f5a60", "conv-7d2b4f1e-9c3a-4e5b-8f60-2a1b3c4d5e6f"
    cases = [({"agent_id": None}, said + r"its run was ephemeral \(`--ephemeral`, no `agent_id`\): Letta Code kept "
                                          "no agent to export"),
             ({"conversation_id": "default"},
              said + rf"ingest ~/.letta/transcripts/{agent}/default/transcript.jsonl if .*, or export agent {agent} "
                     r"\(its default conversation\) .*writes `<agent-id>.af`"),
             ({"subtype": "interrupted"},
              said + rf".*, or export conversation {conversation} .*\(`letta --agent {agent} --conv {conversation}`, "
                     r"then `/export`"),
             ({"conversation_id": "conv-" + "x" * 500 + "\nfake line"},
              said + r".*, or export conversation conv-x{74}… of")]
    for changed, message in cases:
        path = _headless(tmp_path, name, **changed)
        with pytest.raises(ValueError, match=message):
            detect_format(path)
    code, out, err = run_cli("ingest", str(path), "-t", "acme", "--dry-run")
    assert code == 2 and "fake line" not in out + err and len(err) < 1000, out + err
    assert "Letta Code's headless output" in err and "claude" not in err.lower(), out + err


#: Letta Code's transcript of a conversation as its home holds it (written by letta-code's own serialisation:
#: .audglfix/README.md), with the ``state.json`` it writes beside it.
TRANSCRIPTS = FIXTURES.parent / ".audglfix" / "transcripts"
TRANSCRIPT = (TRANSCRIPTS / "agent-3c1e9b7a-52d4-4f0e-8a6b-1d2c3e4f5a60" / "conv-7d2b4f1e-9c3a-4e5b-8f60-2a1b3c4d5e6f"
              / "transcript.jsonl")


def test_letta_codes_transcript_is_a_run_its_prompt_calls_failures_and_answers(tmp_path: Path) -> None:
    """Review of AUDGL34, 1: ``~/.letta/transcripts/<agent>/<conversation>/transcript.jsonl``, Letta Code's own record
    of each completed turn (the prompt, every tool call with its result, the answer), was an unrecognised dump format,
    and a walk of ``~/.letta`` refused it and its ``state.json``."""
    assert detect_format(TRANSCRIPT) == "letta"
    run = only(TRANSCRIPT)
    assert run.trajectory_id == f"letta.{TRANSCRIPT.parent.parent.name}.{TRANSCRIPT.parent.name}"
    assert run.metadata["agent_id"] == "agent-3c1e9b7a-52d4-4f0e-8a6b-1d2c3e4f5a60"
    assert run.task == "The login test fails with a 500; fix it."  # without Letta Code's <system-reminder>
    assert run.metadata["user_prompts"] == ["Now run the linter too."]
    assert run.created_at.isoformat() == "2026-08-20T09:14:09.412000+00:00" and run.outcome is Outcome.unknown
    assert [s.action for s in run.steps] == ["Bash", "Edit", "respond", "Bash", "respond"]
    failed = run.steps[0]
    assert failed.arguments["command"] == "npm test -- login" and failed.error is not None
    assert failed.thought == "Run the failing test first to see the error."
    assert failed.observation.startswith("Exit code: 1")
    assert run.steps[1].error is None and run.steps[2].arguments == {
        "content": "Fixed: a bad password now answers 401 instead of throwing."}
    # its end: a turn's error row, and a call with no result, as a copy of it written on
    rows = TRANSCRIPT.read_text() + "".join(json.dumps(row) + "\n" for row in [
        {"kind": "user", "text": "Deploy it.", "captured_at": "2026-08-20T09:30:00.000Z"},
        {"kind": "tool_call", "name": "Bash", "argsText": "{\"command\": \"make deploy\"}",
         "captured_at": "2026-08-20T09:30:00.000Z"},
        {"kind": "error", "text": "Rate limited by the provider (429)", "captured_at": "2026-08-20T09:30:00.000Z"}])
    (ended := tmp_path / "transcript.jsonl").write_text(rows)
    run = only(ended)
    assert run.steps[-1].error == NEVER_ANSWERED and run.outcome is Outcome.infra_error
    assert run.failure.error == "Rate limited by the provider (429)"
    home = tmp_path / "home"
    shutil.copytree(TRANSCRIPTS, home / ".letta" / "transcripts")
    code, out, err = run_cli("ingest", str(home), "-t", "acme", "--dry-run")
    assert code == 0 and "transcript.jsonl: format letta; runs 1; rejected 0; steps 5;" in out, out + err
    assert "state.json" not in out + err, out + err


def test_a_walk_passes_over_an_agents_multi_reflection_payloads(tmp_path: Path) -> None:
    """Letta Code writes a reflection's payloads over several conversations (``payload-candidates-``, ``-slice-``,
    ``-multi-<nonce>.json``) to ``multi-reflection-payloads/`` beside an agent's conversation folders
    (``reflection-transcript.ts`` ``ensureAgentPayloadRoot``, ``buildPayloadPath``): each was rejected in a walk of
    ``~/.letta`` as of no known format (review RT1, 1). Their contents here are in the shapes it writes."""
    home = tmp_path / "home"
    shutil.copytree(TRANSCRIPTS, transcripts := home / ".letta" / "transcripts")
    agent = transcripts / TRANSCRIPT.parent.parent.name
    slice_ = [{"role": "user", "content": "The login test fails with a 500; fix it."},
              {"role": "assistant", "content": "Fixed: a bad password now answers 401."}]
    (agent / TRANSCRIPT.parent.name / "payload-auto-k3j2h1.json").write_text(json.dumps(slice_, indent=2))
    (payloads := agent / "multi-reflection-payloads").mkdir()
    (payloads / "payload-slice-a1b2c3.json").write_text(json.dumps(slice_, indent=2))
    conversation = {"conversation_id": TRANSCRIPT.parent.name, "total_completed_turns": 1}
    (payloads / "payload-candidates-g7h8i9.json").write_text(json.dumps(
        {"schema_version": 1, "type": "auto_transcript_reflection_candidates", "agent_id": agent.name,
         "created_at": "2026-08-20T10:00:00.000Z", "max_selected": 5, "candidates": [conversation]}, indent=2))
    (payloads / "payload-multi-d4e5f6.json").write_text(json.dumps(
        {"schema_version": 1, "type": "multi_transcript_reflection_payload", "agent_id": agent.name,
         "created_at": "2026-08-20T10:00:00.000Z", "transcripts": [conversation]}, indent=2))
    for walked in (home, home / ".letta", transcripts):
        code, out, err = run_cli("ingest", str(walked), "-t", "acme", "--dry-run")
        assert code == 0 and "runs 1; rejected 0;" in out and "payload" not in out + err, out + err


def test_a_transcript_row_with_a_key_letta_code_adds_later_still_reads(tmp_path: Path) -> None:
    """A row was told by its keys being among those Letta Code writes; it has added two already (``source_line_id``,
    ``source_message_id``), so a third would have made every transcript unrecognised (review RT1, noted). A row is
    told by its ``kind``, ``captured_at`` and its kind's fields; a row of another's shape is still not one."""
    rows = [dict(json.loads(line), source_run_id="run-1") for line in TRANSCRIPT.read_text().splitlines()]
    (added := tmp_path / "transcript.jsonl").write_text("".join(json.dumps(row) + "\n" for row in rows))
    assert detect_format(added) == "letta"
    assert [s.action for s in only(added).steps] == ["Bash", "Edit", "respond", "Bash", "respond"]
    (foreign := tmp_path / "events.jsonl").write_text(json.dumps({"kind": "tool_call", "captured_at": "2026-08-20",
                                                                  "tool": "Bash"}) + "\n")
    with pytest.raises(ValueError):
        detect_format(foreign)


LEGACY_RETURNS = Path(__file__).parent / "fixtures" / "letta" / ".aud36"


def test_a_legacy_export_s_tool_returns_without_a_call_id_answer_the_tool_message_s_call() -> None:
    """Letta's legacy export (0.6.45 to 0.10.0; here 0.6.47 and 0.10.0 of letta-ai/letta's own test files) writes a
    tool message's ``tool_returns`` (``status``, ``stdout``, ``stderr``) without their ``tool_call_id``, which is the
    message's: read by the return's id alone, every call was "never answered", its result and failure lost (AUDBU36)."""
    searches = [s for s in only(LEGACY_RETURNS / "max_messages.af").steps if s.action == "web_search_custom_beta"]
    assert [s.error for s in searches] == [
        "ValueError: No API key provided",  # the last line of the traceback in the return's stderr
        "RuntimeError: Task 1/1 timed out or errored for query 'quanta ai news recent updates 2024 2025': Unexpected "
        "error during search: Status code 401. Unauthorized: Invalid token - No additional error details provided.",
        "RuntimeError: Task 1/1 timed out or errored for query 'Quanta AI company news latest': OpenAI chunk 1/1 timed "
        "out or errored for query 'Quanta AI company news latest': OpenAI error for query 'Quanta AI company news "
        "latest': Error code: 401 - {'error': {'message': 'Incorrect API key provided: sk-pro…",  # clipped at 300
        None]
    assert searches[0].observation == "Error executing function web_search_custom_beta: ValueError: No API key provided"
    assert searches[3].observation.startswith('{\n  "api_key_source": "system_settings"')
    outreach = only(LEGACY_RETURNS / "outreach_workflow_agent.af")
    assert [(s.action, s.observation, s.error) for s in outreach.steps] == [
        ("retrieve_candidate", "The candidate Charles Packer is a software engineer working at Letta and based in SF",
         None), ("evaluate_candidate", "False", None), ("reject", "None", None)]

"""Kimi CLI: calls a ``PreToolUse`` hook blocked (``soul/toolset.py``: a ``ToolError`` of the hook's reason, brief
``Hook blocked``). The session is a real one kimi-cli 1.49.0 (PyPI) wrote with its own scripted model and three
blocking hooks (``tests/fixtures/kimi-cli/.aud36/``: its README and ``mk_kimi_hooks.py`` say how)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from cli_support import run_cli
from trajsearch.actions import NOT_RUN
from trajsearch.ingest.read import read_inputs

from test_adapters_kimi_cli import IMPORTED, KIMI, KIMI_CODE, TYPED, _append, _events

SESSION = "5a91ff94-3c31-458e-95b1-522156cbbbae"
FOLDER = (Path(__file__).parent / "fixtures" / "kimi-cli" / ".aud36" / ".kimi" / "sessions"
          / "c23cf27c6cc6df261acb9c8526c8c657" / SESSION)


def _run(path: Path):
    results = list(read_inputs([path]))
    assert len(results) == 1 and results[0].ok, [r.error for r in results]
    return results[0].trajectory


def test_a_call_a_hook_blocked_is_not_run_with_the_hooks_reason() -> None:
    """Bug: the three calls the hooks blocked (one exiting 2 with its reason on stderr, one denying in JSON, one
    giving no reason) were read as the shell's failures ("rm -rf is not allowed in this repository"), as if run.
    They never ran: each is a step saying a hook blocked it, the hook's reason kept; the call run after is as read."""
    run = _run(FOLDER / "context.jsonl")
    assert run.trajectory_id == f"kimi-cli.{SESSION}"
    assert run.task == "clean the build folder, push, then show notes.txt"
    assert [(s.action, (s.arguments or {}).get("command"), s.error) for s in run.steps] == [
        ("Shell", "rm -rf build", f"{NOT_RUN}blocked by a hook: rm -rf is not allowed in this repository"),
        ("Shell", "git push origin main", f"{NOT_RUN}blocked by a hook: pushing is reserved for CI"),
        ("Shell", "curl -s https://example.com", f"{NOT_RUN}blocked by a hook"),
        ("Shell", "cat notes.txt", None),
        ("respond", None, None)]
    assert run.steps[0].observation == "<system>ERROR: rm -rf is not allowed in this repository</system>"


def test_without_its_wire_log_a_block_giving_no_reason_is_still_told(tmp_path: Path) -> None:
    """Bug: the context file alone (before 2025-11-26 no wire log; or copied without it) keeps a hook's block as a
    tool's ``ERROR:``; the one Kimi words itself, ``Blocked by PreToolUse hook`` (the hook gave no reason), was read
    as the tool's failure. A reason the hook gave is the hook's own words, told by the wire log alone."""
    session = tmp_path / SESSION
    session.mkdir()
    shutil.copy(FOLDER / "context.jsonl", session)
    run = _run(session / "context.jsonl")
    assert [s.error for s in run.steps[:3]] == [
        "rm -rf is not allowed in this repository", "pushing is reserved for CI", f"{NOT_RUN}blocked by a hook"]


def test_a_session_folder_read_without_its_wire_log_says_what_it_lacks(tmp_path: Path) -> None:
    """Bug: a session folder's context file whose wire log is gone (Kimi writes one as a session runs since
    2025-11-26: trimmed or copied without it) was read as if whole: two blocks a hook gave its reason for read as the
    shell's failures, undated, and nothing said so. It is still read, saying what is missing; the 2025 flat file,
    which never had a log, says nothing."""
    session = tmp_path / SESSION
    session.mkdir()
    shutil.copy(FOLDER / "context.jsonl", session)
    lacks = _run(session / "context.jsonl").metadata["wire_log_missing"]
    assert lacks.startswith("no wire.jsonl beside it: ") and "a call a hook blocked with a reason" in lacks
    assert "wire_log_missing" not in _run(FOLDER / "context.jsonl").metadata
    flat = tmp_path / "flat" / f"{SESSION}.jsonl"
    flat.parent.mkdir()
    shutil.copy(FOLDER / "context.jsonl", flat)
    assert "wire_log_missing" not in _run(flat).metadata


def test_a_kimi_code_call_a_hook_blocked_giving_no_reason_is_not_run(tmp_path: Path) -> None:
    """Bug: Kimi Code words a ``PreToolUse`` hook's block that gave no reason as the Python CLI does (``Blocked by
    PreToolUse hook``, ``session/hooks/engine.ts``: a permission deny, the call never run); it was read as the tool's
    failure. (A reason the hook gave is its output alone, unmarked: read as a failure, see the README.) The block's
    records are hand-built on Kimi Code's sample session (``.aud33``): no real one was found."""
    session = tmp_path / "s3"
    shutil.copytree(KIMI_CODE / "sample-main", session)
    _append(session / "agents" / "main" / "wire.jsonl", TYPED, *_events(
        {"type": "tool.call", "toolCallId": "c1", "name": "Bash", "args": {"command": "curl -s https://example.com"}},
        {"type": "tool.result", "toolCallId": "c1", "result": {"output": "Blocked by PreToolUse hook",
                                                                "isError": True}}))
    run = _run(session / "agents" / "main" / "wire.jsonl")
    assert run.trajectory_id == "kimi-cli.s3"
    assert run.steps[-1].action == "Bash" and run.steps[-1].error == f"{NOT_RUN}blocked by a hook"


def test_after_clear_a_call_of_a_reused_id_that_ran_is_not_taken_for_a_block(tmp_path: Path) -> None:
    """Bug: every context file of a session is read with its one wire log, the n-th result of an id taken for the
    n-th step of it; Kimi numbers ids again after ``/clear`` (``Shell:0``), so a call that ran in the new context file
    took the first file's hook block (not run, another call's reason). A block is taken only where the context file's
    result agrees. The session: .aud36's, its calls renamed Kimi's way, then a turn after ``/clear`` (hand-built)."""
    session = tmp_path / SESSION
    session.mkdir()
    for name in ("context.jsonl", "wire.jsonl"):
        text = (FOLDER / name).read_text()
        for n in range(4, 0, -1):
            text = text.replace(f'"tc{n}"', f'"Shell:{n - 1}"')
        (session / ("context_1.jsonl" if name == "context.jsonl" else name)).write_text(text)
    (session / "context.jsonl").write_text("\n".join(json.dumps(record) for record in (
        {"role": "_system_prompt", "content": "You are Kimi Code CLI."}, {"role": "_checkpoint", "id": 0},
        {"role": "user", "content": "list files"},
        {"role": "assistant", "content": [], "tool_calls": [
            {"type": "function", "id": "Shell:0", "function": {"name": "Shell", "arguments": '{"command": "ls"}'}}]},
        {"role": "tool", "content": "<system>Command executed successfully.</system>\na\nb", "tool_call_id": "Shell:0"},
        {"role": "assistant", "content": "done."})) + "\n")
    with (session / "wire.jsonl").open("a") as wire:
        for kind, payload in (
                ("TurnBegin", {"user_input": "list files"}),
                ("ToolCall", {"type": "function", "id": "Shell:0",
                              "function": {"name": "Shell", "arguments": '{"command": "ls"}'}}),
                ("ToolResult", {"tool_call_id": "Shell:0", "return_value": {
                    "is_error": False, "output": "a\nb", "message": "Command executed successfully.", "display": []}})):
            wire.write(json.dumps({"timestamp": 1796681400.0, "message": {"type": kind, "payload": payload}}) + "\n")
    after = _run(session / "context.jsonl")
    assert [(s.action, s.error) for s in after.steps] == [("Shell", None), ("respond", None)]
    before = _run(session / "context_1.jsonl")
    assert [s.error for s in before.steps[:3]] == [
        f"{NOT_RUN}blocked by a hook: rm -rf is not allowed in this repository",
        f"{NOT_RUN}blocked by a hook: pushing is reserved for CI", f"{NOT_RUN}blocked by a hook"]


def test_a_call_a_hook_blocked_in_a_session_kimi_code_imported_is_not_run() -> None:
    """Bug: Kimi Code's import of a Python CLI session (.fixaud33: its migration's own output of its fixture
    ``with-tool-calls``) keeps the wire log's brief of a blocked call as ``toolCallDisplays`` "Hook blocked"; the
    call was read as the tool's failure, unlike the session before its import."""
    run = _run(IMPORTED / "ses_with-tool-calls" / "agents" / "main" / "wire.jsonl")
    assert run.trajectory_id == "kimi-cli.ses_with-tool-calls"
    assert [(s.action, s.error) for s in run.steps] == [("Shell", f"{NOT_RUN}blocked by a hook: Shell blocked by hook")]


def test_a_block_whose_wire_message_is_no_string_keeps_the_reason_the_context_file_holds(tmp_path: Path) -> None:
    """Bug: the reason was taken from the wire log's ``message``; one not a string (a damaged log: 42 here) lost it.
    The context file holds the reason the agent was told: it is taken from there."""
    session = tmp_path / SESSION
    session.mkdir()
    shutil.copy(FOLDER / "context.jsonl", session)
    wire = (FOLDER / "wire.jsonl").read_text()
    (session / "wire.jsonl").write_text(wire.replace('"message": "rm -rf is not allowed in this repository"',
                                                     '"message": 42'))
    run = _run(session / "context.jsonl")
    assert run.steps[0].error == f"{NOT_RUN}blocked by a hook: rm -rf is not allowed in this repository"


def _prompt_hook_said(said: str, blocked: bool) -> dict:
    """What Kimi Code's ``UserPromptSubmit`` hook said, as it appends it before the prompt (``agent-core-v2``
    ``agentExternalHooksService.ts`` ``runPromptSubmitHook``, ``userPrompt.ts`` ``renderHookResult``): the reason of
    a block as an assistant's message, context it added as a user's."""
    origin = {"kind": "hook_result", "event": "UserPromptSubmit", **({"blocked": True} if blocked else {})}
    return {"type": "context.append_message", "message": {
        "role": "assistant" if blocked else "user", "toolCalls": [], "origin": origin,
        "content": [{"type": "text", "text": f'<hook_result hook_event="UserPromptSubmit">\n{said}\n</hook_result>'}]}}


def _blocked_prompt(text: str) -> dict:
    """The prompt a hook blocked, appended after the hook's words with no turn (``promptService.ts`` ``startNext``)."""
    return {"type": "context.append_message", "message": {
        "role": "user", "content": [{"type": "text", "text": text}], "toolCalls": [], "origin": {"kind": "user"},
        "id": "msg_blocked"}}


def test_a_kimi_code_prompt_a_hook_blocked_or_added_context_to_is_kept_apart(tmp_path: Path) -> None:
    """Bug: Kimi Code's ``UserPromptSubmit`` hook writes what it said into the log as a message before the prompt;
    a follow-up it blocked (no turn ran for it) and the context it added to another were dropped unseen. They are
    kept as OpenHands' are: the blocked prompt with the hook's reason, the context with its prompt, neither a prompt
    of the run's. Hand-built on Kimi Code's sample session (``.aud33``) from its source (no real log found)."""
    session = tmp_path / "s4"
    shutil.copytree(KIMI_CODE / "sample-main", session)
    wire = session / "agents" / "main" / "wire.jsonl"
    context = "Policy: never list /root; the sandbox root is /workspace."
    _append(wire, _prompt_hook_said("prompts asking for passwords are not allowed", True),
            _blocked_prompt("what is the root password?"), _prompt_hook_said(context, False), TYPED,
            _prompt_hook_said("Blocked by UserPromptSubmit hook", True), _blocked_prompt("and the admin's?"))
    run = _run(wire)
    assert run.task == "hi" and run.metadata["user_prompts"] == ["list the tests"]
    assert run.metadata["hook_blocked_prompts"] == [
        {"prompt": "what is the root password?", "reason": "prompts asking for passwords are not allowed"},
        {"prompt": "and the admin's?"}]
    assert run.metadata["hook_prompt_contexts"] == [{"prompt": "list the tests", "context": context}]


def test_a_kimi_code_log_whose_only_prompt_a_hook_blocked_is_passed_over(tmp_path: Path) -> None:
    """Bug: a log whose one prompt the hook blocked was refused as "never asked anything"; the agent never ran and
    nothing in it is wrong: passed over, as OpenHands' is."""
    wire = tmp_path / "s5" / "agents" / "main" / "wire.jsonl"
    wire.parent.mkdir(parents=True)
    wire.write_text(json.dumps({"type": "metadata", "protocol_version": "1.1", "created_at": 1779256791085}) + "\n",
                    encoding="utf-8")
    _append(wire, _prompt_hook_said("no passwords", True), _blocked_prompt("what is the root password?"))
    code, out, err = run_cli("ingest", str(wire), "--dry-run")
    said = " ".join((out + err).split())
    assert code == 0 and "runs 0; rejected 0; passed over 1 agent log(s): a Kimi Code agent whose only prompt a " \
                          "hook blocked" in said, said


def _typed(text: str) -> tuple[dict, dict]:
    """A prompt the user typed as agent-core v1 logs it: ``turn.prompt``, then its message (``turn/index.ts``)."""
    message = {"role": "user", "content": [{"type": "text", "text": text}], "toolCalls": [], "origin": {"kind": "user"}}
    return ({"type": "turn.prompt", "input": [{"type": "text", "text": text}], "origin": {"kind": "user"}},
            {"type": "context.append_message", "message": message})


def test_kimi_code_v1_hook_words_after_the_prompt_are_that_prompts(tmp_path: Path) -> None:
    """Bug: agent-core v1 (Kimi Code's engine 2026-05-22..08-04, still ``kimi acp``'s and under its legacy flag)
    writes the hook's words after the typed prompt and its message (``turn/index.ts`` ``runOneTurn``,
    ``applyUserPromptHook``), v2 before; read as v2's, the context went to the next prompt and a blocked prompt
    stayed a prompt of the run, its reason lost. Hand-built on the sample session (a v1 log) from the source."""
    session = tmp_path / "s6"
    shutil.copytree(KIMI_CODE / "sample-main", session)
    wire = session / "agents" / "main" / "wire.jsonl"
    _append(wire, *_typed("list the tests"), _prompt_hook_said("CTX for the tests", False),
            *_typed("what is the root password?"), _prompt_hook_said("no passwords", True), *_typed("then run them"))
    run = _run(wire)
    assert run.task == "hi" and run.metadata["user_prompts"] == ["list the tests", "then run them"]
    assert run.metadata["hook_prompt_contexts"] == [{"prompt": "list the tests", "context": "CTX for the tests"}]
    assert run.metadata["hook_blocked_prompts"] == [{"prompt": "what is the root password?", "reason": "no passwords"}]


def test_kimi_code_v1_log_whose_only_prompt_a_hook_blocked_is_passed_over(tmp_path: Path) -> None:
    """Bug: in agent-core v1's order the one prompt a hook blocked became the run's task; it never ran."""
    wire = tmp_path / "s7" / "agents" / "main" / "wire.jsonl"
    wire.parent.mkdir(parents=True)
    wire.write_text(json.dumps({"type": "metadata", "protocol_version": "1.1", "created_at": 1779256791085}) + "\n",
                    encoding="utf-8")
    _append(wire, *_typed("what is the root password?"), _prompt_hook_said("no passwords", True))
    code, out, err = run_cli("ingest", str(wire), "--dry-run")
    said = " ".join((out + err).split())
    assert code == 0 and "runs 0; rejected 0; passed over 1 agent log(s)" in said, said


def test_a_kimi_code_steer_a_hook_blocked_naming_no_origin_is_kept_apart(tmp_path: Path) -> None:
    """Bug: a steer Kimi Code takes up while idle is queued naming no origin (``promptService.ts`` ``submitSteer``);
    the prompt a hook blocked is then appended with none. It was dropped after a turn, and as the log's first record
    taken for a message imported from the Python CLI: the run's task. A message naming no origin is the user's."""
    blocked = _blocked_prompt("what is the root password?")
    del blocked["message"]["origin"]
    expected = [{"prompt": "what is the root password?", "reason": "no passwords"}]
    session = tmp_path / "s8"
    shutil.copytree(KIMI_CODE / "sample-main", session)
    _append(session / "agents" / "main" / "wire.jsonl", _prompt_hook_said("no passwords", True), blocked, TYPED)
    after = _run(session / "agents" / "main" / "wire.jsonl")
    assert after.metadata["hook_blocked_prompts"] == expected and after.metadata["user_prompts"] == ["list the tests"]
    first = tmp_path / "s9" / "agents" / "main" / "wire.jsonl"
    first.parent.mkdir(parents=True)
    first.write_text(json.dumps({"type": "metadata", "protocol_version": "1.5", "created_at": 1779256791085}) + "\n",
                     encoding="utf-8")
    _append(first, _prompt_hook_said("no passwords", True), blocked, TYPED)
    run = _run(first)
    assert run.task == "list the tests" and run.metadata["hook_blocked_prompts"] == expected


BLOCKED = Path(__file__).parent / "fixtures" / "kimi-cli" / ".fix37" / ".kimi" / "sessions"


def test_a_kimi_cli_prompt_a_hook_blocked_is_kept_apart_with_its_reason() -> None:
    """Bug: kimi-cli writes a prompt its ``UserPromptSubmit`` hook blocked to the wire log alone (``TurnBegin``, the
    reason said, ``TurnEnd``, no step: ``kimisoul.py``); it was dropped unseen. Kept as Kimi Code's and OpenHands'
    are. A real session kimi-cli 1.49.0 wrote with its scripted model (``.fix37``)."""
    run = _run(BLOCKED / "9f18810590e22a53fc01bc638b463dba" / "ddd0d099-5c4a-4608-a040-ebe914229345" / "context.jsonl")
    assert run.task == "say hello" and "user_prompts" not in run.metadata
    assert run.metadata["hook_blocked_prompts"] == [
        {"prompt": "and the root password?", "reason": "prompts asking for passwords are not allowed"}]


def test_a_kimi_cli_session_whose_only_prompt_a_hook_blocked_is_passed_over() -> None:
    """Bug: a session whose one prompt the hook blocked was refused as "never asked anything": it was asked, and the
    user's own hook stopped it before it ran; nothing in it is wrong. Passed over, as Kimi Code's is."""
    context = BLOCKED / "6843d03de3d20f9093dc32a7881c4932" / "554e5c9a-15fc-4980-8ecc-466d1562b22b" / "context.jsonl"
    code, out, err = run_cli("ingest", str(context), "--dry-run")
    said = " ".join((out + err).split())
    assert code == 0 and "runs 0; rejected 0; passed over 1 session(s): a Kimi CLI session whose only prompt a hook " \
                          "blocked" in said, said


STOPPED = BLOCKED / "7ea6b7c29455024d337214d2e675b563" / "01e46193-c88f-4cf8-8012-cb6574bcaf5a"


def test_what_a_kimi_cli_stop_hook_said_is_the_answers_observation_not_a_prompt(tmp_path: Path) -> None:
    """Bug: kimi-cli runs a ``Stop`` hook's reason as a user message in the same turn (``kimisoul.py``: no
    ``TurnBegin`` of its own); it was read as the user's prompt. It is what the turn's answer got back, as Claude
    Code's Stop hook feedback is (a real session kimi-cli 1.49.0 wrote, ``.fix37``). A skill's text has the same
    shape but its turn is the slash command's (``/skill:x``): still a prompt."""
    run = _run(STOPPED / "context.jsonl")
    assert run.task == "fix the bug" and "user_prompts" not in run.metadata
    assert [(s.action, s.observation) for s in run.steps] == [
        ("respond", "run the tests before stopping"), ("respond", None)]
    session = tmp_path / STOPPED.name
    shutil.copytree(STOPPED, session)
    lines = (STOPPED / "wire.jsonl").read_text().splitlines()
    second = [i for i, line in enumerate(lines) if '"StepBegin"' in line][1]
    skill = {"timestamp": 1796691579.96, "message": {"type": "TurnBegin", "payload": {"user_input": "/skill:tests"}}}
    lines[second:second] = [json.dumps({"timestamp": 1796691579.96, "message": {"type": "TurnEnd", "payload": {}}}),
                            json.dumps(skill)]
    (session / "wire.jsonl").write_text("\n".join(lines) + "\n")
    assert _run(session / "context.jsonl").metadata["user_prompts"] == ["run the tests before stopping"]


def test_a_2025_session_kimi_moved_into_a_folder_is_not_said_to_be_trimmed(tmp_path: Path) -> None:
    """Bug: kimi-cli's session list (the picker, ``/sessions``, ACP) moves a 2025 ``<id>.jsonl`` into
    ``<id>/context.jsonl`` with no wire log (``session.py`` ``_migrate_session_context_file``; the reviewer ran
    1.49.0's own ``Session.list`` on the real file); the note called it trimmed or copied and spoke of hooks, which
    did not exist then. It says such a session never had a log. The real 2025 file (``.newfmt2-30``), moved so."""
    session = tmp_path / "d8447fa8-9d8e-41af-9fc6-a12e4a196b6c"
    session.mkdir()
    shutil.copy(KIMI / f"{session.name}.jsonl", session / "context.jsonl")
    lacks = _run(session / "context.jsonl").metadata["wire_log_missing"]
    assert "older than 2025-11-26 that Kimi moved into a folder has none" in lacks, lacks

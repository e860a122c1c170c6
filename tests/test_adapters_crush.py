"""Crush sessions (charmbracelet/crush): its SQLite store ``.crush/crush.db`` is named with the command that writes its
sessions as JSON lines, which are read. Fixtures: tests/fixtures/crush/.newcli30 (a real store committed on GitHub,
trimmed, and that command's output of it; README.md there says where from)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from trajsearch.actions import ran
from trajsearch.ingest.adapters.crush import CANCELED
from trajsearch.ingest.adapters._agent_cli import NEVER_ANSWERED, REFUSAL_CAUSE
from trajsearch.ingest.detect import detect_format
from trajsearch.ingest.read import read_inputs
from trajsearch.model import Outcome

from adapter_support import run_export
from cli_support import newcomer, run_cli, unnoted  # noqa: F401 - the fixture

CRUSH = Path(__file__).parent / "fixtures" / "crush" / ".newcli30"
STORE = CRUSH / "crush.db"
SESSIONS = CRUSH / "crush-sessions.jsonl"
PARENT, SUB = "crush.ea3c2a5a-84fb-4e95-816f-5824feb71519", "crush.toolu_01FWjmXT7vf9cQVUDRLhXH8h"
SHELL, TOOLS = "crush.d7afa2d9-4820-42ae-9c1a-65609181ed73", "crush.699482e0-e429-49ba-b59f-57032f89133b"
LINT = "crush.1c9c4c9c-6cdf-4c79-aed5-99c25ca9b8ec"


def _runs(path: Path) -> dict:
    results = list(read_inputs([path]))
    assert all(r.ok for r in results), [r.error for r in results if not r.ok]
    return {r.trajectory.trajectory_id: r.trajectory for r in results}


def test_the_store_is_named_with_a_command_whose_output_is_the_sessions_read(tmp_path: Path) -> None:
    store = tmp_path / "project" / ".crush" / "crush.db"
    store.parent.mkdir(parents=True)
    shutil.copy(STORE, store)
    with pytest.raises(ValueError, match=r"Crush's session database .* python3 -I -c") as refused:
        detect_format(store)
    out = tmp_path / "crush-sessions.jsonl"
    run_export(str(refused.value), store, "crush-sessions.jsonl", out)
    assert out.read_text() == SESSIONS.read_text()  # the fixture is this command's output of the real store
    assert detect_format(out) == "crush" and len(_runs(out)) == 5
    # a walk of the project finds no dump and names the database the same way
    walked = subprocess.run([sys.executable, "-m", "trajsearch.cli", "ingest", str(tmp_path / "project"),
                             "--dry-run"], capture_output=True, text=True, timeout=600,
                            cwd=Path(__file__).parent.parent)
    assert "Crush's session database" in " ".join((walked.stdout + walked.stderr).split())


def test_each_session_is_a_run_with_its_tool_calls_and_their_failures() -> None:
    runs = _runs(SESSIONS)
    assert set(runs) == {PARENT, SUB, SHELL, TOOLS, LINT}
    shell = runs[SHELL]
    assert shell.task.startswith("this is a small bot that uses a smol model")
    assert shell.model_id == "claude-opus-4-1-20250805" and shell.outcome == Outcome.unknown
    assert shell.metadata["provider"] == "anthropic" and shell.metadata["session_name"].startswith("Smol Customer")
    assert shell.created_at.isoformat() == "2025-08-18T15:30:19+00:00"
    assert [s.action for s in shell.steps[:5]] == ["view", "view", "view", "ls", "view"]
    run, parse = shell.steps[8:10]
    assert run.action == "bash" and run.arguments["command"].startswith("cd C:/Users/Alvaro/Development/nano-bot")
    assert run.error == "ModuleNotFoundError: No module named 'pydantic_settings' (exit code 1)"
    assert run.thought == "Now let's run the test to see the improvements:"  # the text before the call
    assert parse.error.startswith("could not parse command: 1:80:")
    assert all(s.error is None for s in shell.steps[:8])
    # Go's "exit status N" line (the command wrote no stderr) is not the error; the code is
    lint = runs[LINT]
    assert lint.model_id == "openrouter/sonoma-sky-alpha" and lint.metadata["provider"] == "openrouter"
    build = lint.steps[4]
    assert build.arguments == {"command": "npm run build"}
    assert build.error == ("src/components/Settings.tsx(1,21): error TS6133: 'useMemo' is declared but its value is "
                           "never read. (exit code 2)")
    assert lint.steps[7].error is None and lint.steps[-1].action == "respond"  # the build that passed; the answer
    # a tool's refusal (is_error), and a later prompt
    tools = runs[TOOLS]
    assert tools.steps[0].error.startswith("Path is a directory, not a file:")
    assert tools.metadata["user_prompts"][0].startswith("what do you think of the system prompt")


def test_a_provider_error_ending_the_session_is_an_infra_error_and_a_sub_agent_names_its_parent() -> None:
    runs = _runs(SESSIONS)
    parent = runs[PARENT]
    assert parent.outcome == Outcome.infra_error
    assert "Your credit balance is too low" in parent.failure.error and parent.failure.error.startswith("API Error")
    assert [s.action for s in parent.steps] == ["ls", "agent"]
    sub = runs[SUB]  # the session the agent call spawned, named by that call's id
    assert sub.metadata["is_subagent"] is True
    assert sub.metadata["parent_session_id"] == "ea3c2a5a-84fb-4e95-816f-5824feb71519"
    assert sub.task.startswith("Search for and analyze the following") and sub.outcome == Outcome.unknown


def test_a_call_without_result_failed_canceled_where_its_turn_was(tmp_path: Path) -> None:
    session = next(s for s in map(json.loads, SESSIONS.read_text().splitlines()) if f"crush.{s['id']}" == SHELL)
    session["messages"] = session["messages"][:18]  # ends on the assistant message calling the failing command
    assert session["messages"][-1]["parts"][-1]["data"]["reason"] == "tool_use"
    cut = tmp_path / "ended.jsonl"
    cut.write_text(json.dumps(session) + "\n")
    assert _runs(cut)[SHELL].steps[-1].error == NEVER_ANSWERED
    session["messages"][-1]["parts"][-1]["data"]["reason"] = "canceled"
    cut.write_text(json.dumps(session) + "\n")
    assert _runs(cut)[SHELL].steps[-1].error == CANCELED


def test_an_answer_after_a_prompt_answered_without_a_call_starts_when_it_was_written(tmp_path: Path) -> None:
    """A session's first prompt answered in text, then a second prompt answered in text, no call between: each
    answer starts at its own message's time (the second took the first's, kept as its text's time by the reader)."""
    session = next(s for s in map(json.loads, SESSIONS.read_text().splitlines()) if f"crush.{s['id']}" == TOOLS)
    first, second = session["messages"][9], session["messages"][15]  # the answers to its two prompts
    assert session["messages"][10]["role"] == "user" and [p["type"] for p in second["parts"]] == ["text", "finish"]
    session["messages"] = session["messages"][:11] + [second]  # the second prompt answered with no call
    path = tmp_path / "answers.jsonl"
    path.write_text(json.dumps(session) + "\n")
    answers = [s for s in _runs(path)[TOOLS].steps if s.action == "respond"]
    assert [a.started_at.timestamp() for a in answers] == [first["created_at"], second["created_at"]]


@pytest.mark.parametrize("said, why", [("Permission denied", "denied by the user"),  # Crush until late 2025
                                       ("User denied permission", "denied by the user"),  # its later wording
                                       ("Tool execution canceled by user", "canceled by the user")])
def test_a_call_the_user_denied_or_crush_canceled_is_not_run(tmp_path: Path, said: str, why: str) -> None:
    """Crush writes these (with ``is_error``) for a call it did not run; e2chat/calcman's and vfarcic/dot-ai-demo's
    committed stores have "Permission denied" for a ``bash`` and an ``edit``."""
    session = next(s for s in map(json.loads, SESSIONS.read_text().splitlines()) if f"crush.{s['id']}" == SHELL)
    result = next(p for m in session["messages"] for p in m["parts"] if p["type"] == "tool_result")
    result["data"] |= {"content": said, "is_error": True}
    path = tmp_path / "denied.jsonl"
    path.write_text(json.dumps(session) + "\n")
    step = next(s for s in _runs(path)[SHELL].steps if s.observation == said)
    assert step.error == f"not run: {why}" and not ran(step)


def test_the_cli_reads_the_sessions_and_finds_a_run_by_its_tool_error(newcomer) -> None:
    code, out, err = run_cli("ingest", str(SESSIONS), "--dry-run")
    assert code == 0 and "format crush; runs 5; rejected 0" in out + err, out + err
    assert run_cli("ingest", str(SESSIONS))[0] == 0
    code, out, err = run_cli("search", "ModuleNotFoundError: No module named 'pydantic_settings'", "--json")
    assert code == 0 and not [line for line in unnoted(err) if "error" in line.lower()], err
    assert json.loads(out)[0]["trajectory_id"] == SHELL
    code, out, _ = run_cli("formats", "--json")
    [crush] = [f for f in json.loads(out) if f["format"] == "crush"]
    assert "Crush" in crush["description"], crush


def test_a_cut_short_file_keeps_its_whole_sessions_and_names_the_file(newcomer, tmp_path: Path) -> None:
    text = SESSIONS.read_text()
    cut = tmp_path / "crush-sessions.jsonl"
    cut.write_text(text[:text.index("\n", text.index("\n") + 1) + 5000])  # two whole lines, then part of a third
    code, out, err = run_cli("ingest", str(cut), "--dry-run")
    said = " ".join((out + err).split())
    assert "runs 2; rejected 1" in said, said
    assert str(cut) in said and "cut short" in said, said


def test_a_session_the_models_safety_filter_stopped_is_a_refusal_not_an_infra_error(tmp_path: Path) -> None:
    """Crush of July 2026 on saves a provider's safety stop as a ``finish`` of reason ``content_filter`` with no
    message (``agent.go``; its TUI shows "Model refused to continue"): the real session's last turn so ended."""
    session = next(s for s in map(json.loads, SESSIONS.read_text().splitlines()) if f"crush.{s['id']}" == PARENT)
    assert session["messages"][-1]["parts"][-1]["data"]["reason"] == "error"
    session["messages"][-1]["parts"][-1]["data"] = {"reason": "content_filter", "time": 1755473765}
    path = tmp_path / "refused.jsonl"
    path.write_text(json.dumps(session) + "\n")
    run = _runs(path)[PARENT]
    assert run.outcome == Outcome.failure and run.failure.cause == REFUSAL_CAUSE
    assert run.failure.error == "Model refused to continue (refusal: content_filter)"


PASTE = Path(__file__).parent / "fixtures" / "crush" / ".audkrfix" / "paste-sessions.jsonl"


def test_a_prompt_pasted_as_a_text_attachment_is_the_task_and_a_file_attached_goes_with_the_typed_text(
        tmp_path: Path) -> None:
    """Crush (January 2026 on) keeps a long paste as a ``paste_N.txt`` attachment with the typed text empty: the
    session used to be refused as having no prompt (a real one, AndresGaibor/cisco-auto's store)."""
    (run,) = _runs(PASTE).values()
    assert run.task.startswith("Perfecto. Aquí tienes el checklist técnico, ya aterrizado para implementación real.")
    assert "# Plan técnico de corrección y mejora de la CLI" in run.task and "<file" not in run.task
    assert run.model_id == "claude-haiku-4.5" and [s.action for s in run.steps][:4] == ["view"] * 3 + ["todos"]
    # typed text with a file attached: both, the file as Crush sends it; an image attachment is no text
    session = json.loads(PASTE.read_text())
    parts = session["messages"][0]["parts"]
    parts[0]["data"]["text"] = "review this plan"
    parts[1]["data"]["Path"] = "docs/plan.md"
    parts.insert(2, {"type": "binary", "data": {"Path": "shot.png", "MIMEType": "image/png", "Data": "iVBORw0KGgo="}})
    typed = tmp_path / "typed.jsonl"
    typed.write_text(json.dumps(session) + "\n")
    (run,) = _runs(typed).values()
    assert run.task.startswith("review this plan\n<file path='docs/plan.md'>\nPerfecto. Aquí tienes")
    assert run.task.endswith("</file>") and "iVBOR" not in run.task


#: A real session (AndresGaibor/cisco-auto, Crush of April 2026) that Crush compacted mid-turn, then resumed with a
#: prompt of its own quoting the user's request: tests/fixtures/crush/.audgoose36/README.md.
COMPACTED = Path(__file__).parent / "fixtures" / "crush" / ".audgoose36" / "compacted-session.jsonl"


def test_the_prompt_crush_resumes_a_compacted_turn_with_is_not_the_users(tmp_path: Path) -> None:
    (run,) = _runs(COMPACTED).values()
    assert run.task == "hola"
    prompts = run.metadata["user_prompts"]
    assert [p[:22] for p in prompts] == ["debes interactuar solo", "Hazlo"]
    assert not any("previous session was interrupted" in p for p in prompts)
    # the turn it resumed keeps its work: the calls after the summary, and the summary is no step
    assert [s.action for s in run.steps].count("bash") == 2 and "job_output" in [s.action for s in run.steps]
    assert not any("RESUMEN COMPLETO" in (s.observation or "") + str(s.arguments) for s in run.steps)
    # Crush re-queues the whole call, its attachments too (``createUserMessage``): a paste after its words
    session = json.loads(COMPACTED.read_text())
    paste = {"type": "binary", "data": {"Path": "paste_1.txt", "MIMEType": "text/plain; charset=utf-8",
                                        "Data": "Q2hlY2tsaXN0OiB2YWxpZGFyIFZMQU4gMTAgZW4gUFQtQ29udHJvbA=="}}
    for prompt_or_copy in (2, 6):
        session["messages"][prompt_or_copy]["parts"].insert(1, paste)
    attached = tmp_path / "attached.jsonl"
    attached.write_text(json.dumps(session) + "\n")
    (run,) = _runs(attached).values()
    prompts = run.metadata["user_prompts"]
    assert len(prompts) == 2 and prompts[0].endswith("Checklist: validar VLAN 10 en PT-Control"), prompts

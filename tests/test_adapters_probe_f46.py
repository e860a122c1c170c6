"""Probe F (round 46): Harbor's ATIF of Codex / Gemini CLI sessions, AI SDK 6 answers that fail their schema, an
OpenHands SDK sub-agent's conversation, read through the public reader.

The fixtures (each folder's SOURCE.md) are what the released packages wrote, unmodified or trimmed.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import adapter_support
from trajsearch.ingest.read import read_inputs
from trajsearch.model import Outcome, Trajectory

FIXTURES = Path(__file__).parent / "fixtures"
AI6 = FIXTURES / "vercel-ai" / ".real" / "probeF46" / "ai6.0.333-no-object-generated.otlp.json"


# -- AI SDK 6: an answer that is not the object asked for (F3) ---------------------------------


def test_ai_sdk_answer_that_fails_the_schema_is_that_answers_error() -> None:
    """F3: ``generateObject`` (and ``generateText`` with ``Output.object``) throws ``AI_NoObjectGeneratedError``
    carrying the answer's text when it does not parse or match the schema; the SDK records it on the root call span.
    It set the outcome only: the answer had no error and the failure pointed at no step."""
    runs = {r.trajectory_id: r for r in adapter_support.runs(AI6)}
    bad_object = runs["vercel:5446ba74876a34de178bed890a8d0734"]
    assert [s.action for s in bad_object.steps] == ["respond"]
    assert bad_object.steps[0].arguments == {"content": '{"city": "Lyon", "tempC": "warm"}'}
    assert bad_object.steps[0].error == ("AI_NoObjectGeneratedError: No object generated: response did not match "
                                         "schema.")
    unparsed = runs["vercel:7d68374d5032d35dc7f941d59b8e4e18"]
    assert [s.action for s in unparsed.steps] == ["read_file", "respond"]
    assert unparsed.steps[0].error is None
    assert unparsed.steps[1].error == "AI_NoObjectGeneratedError: No object generated: could not parse the response."
    for run in (bad_object, unparsed):
        assert run.outcome is Outcome.failure and run.failure.error == run.steps[-1].error


# -- Harbor's ATIF of Codex and Gemini CLI sessions: the CLI's own failure replies (F2) -----------

HARBOR = FIXTURES / "atif" / ".real" / "harbor-0.26-codex-gemini"
CODEX = FIXTURES / "codex-cli" / ".real"
X1 = "rollout-2026-12-02T02-46-25-01a234a5-689a-7bf0-bedd-2035743e42da.jsonl"
X3 = "rollout-2026-12-02T02-48-19-01a234a7-28a1-7d61-a3e9-85ee2685efae.jsonl"


def _errors(run: Trajectory) -> dict[str, str | None]:
    return {s.action: s.error for s in run.steps}


def test_harbor_codex_failed_replies_are_errors_as_the_codex_reader_reads_them() -> None:
    """F2: Codex answers a call it cannot run in plain words ("unsupported call: update_plan", "apply_patch
    verification failed: ..."), which Harbor keeps as the result's text. The Codex reader makes them step errors;
    the ATIF reading had neither."""
    converted = _errors(adapter_support.only(HARBOR / "codex-0.171.0-X1-failed-replies.trajectory.json"))
    raw = _errors(adapter_support.only(CODEX / X1))
    assert converted["update_plan"] == raw["update_plan"] == "not run: unsupported call: update_plan"
    assert converted["apply_patch"] == raw["apply_patch"]
    assert converted["apply_patch"].startswith("apply_patch verification failed: Failed to find expected lines")
    assert converted["exec_command"] is None


def test_harbor_codex_interrupted_turn_is_the_calls_error_and_counted() -> None:
    """F2: a command the user interrupted answers "aborted by user", then Codex writes its ``<turn_aborted>`` marker
    as a user message. The ATIF reading had no error and dropped the marker silently; the Codex reader has the error
    and ``turns_aborted``."""
    converted = adapter_support.only(HARBOR / "codex-0.171.0-X3-turn-aborted.trajectory.json")
    raw = adapter_support.only(CODEX / X3)
    assert [(s.action, s.error) for s in converted.steps] == [("exec_command", "aborted by user")]
    assert converted.steps[0].error == raw.steps[0].error
    assert converted.metadata["turns_aborted"] == raw.metadata["turns_aborted"] == 1


def test_harbor_gemini_failed_subagent_is_the_calls_error() -> None:
    """F2: Gemini CLI answers a sub-agent that threw with "Subagent 'generalist' failed. Error: ..." recorded as a
    success; the Gemini CLI reader makes the message the step's error (732ff6f), the ATIF reading had none."""
    converted = _errors(adapter_support.only(HARBOR / "gemini-cli-subagent-failed.trajectory.json"))
    raw = _errors(adapter_support.only(
        FIXTURES / "gemini-cli" / ".real" / "subagent-failed" / "session-2026-04-01T11-11-5cdd2021.json"))
    assert converted["generalist"] == raw["generalist"] == "You have exhausted your daily quota on this model."


# -- OpenHands SDK: a sub-agent's conversation (F4) --------------------------------------------

OH_PARENT = FIXTURES / "openhands" / ".real" / "sdk-1.58-subagent" / "464646460000400080000000000000d2"
OH_SUB = OH_PARENT / "subagents" / "110b698b421047cdb54cdd0b3a92ef58"


def test_openhands_subagent_conversation_is_marked_and_linked_to_its_task_call() -> None:
    """F4: the ``task`` tool persists its sub-agent's conversation under the parent's, ``<parent>/subagents/<id>/``.
    It read as an unrelated run, its task (worded by the parent model) as a user's; now it is still a run of its
    own, as Claude Code's and Codex's sub-agents are, marked ``is_subagent`` and linked to its parent and the call."""
    runs = {p.trajectory.trajectory_id: p.trajectory for p in read_inputs([OH_PARENT])}
    parent = runs["openhands.464646460000400080000000000000d2"]
    sub = runs["openhands.110b698b421047cdb54cdd0b3a92ef58"]
    assert "is_subagent" not in parent.metadata
    task_call = next(s for s in parent.steps if s.action == "task")
    assert task_call.arguments["prompt"] == sub.task == "Run ls /nonexistent and report what happened."
    assert {k: sub.metadata.get(k) for k in ("is_subagent", "parent_conversation_id", "parent_tool_call_id",
                                             "parent_tool")} == {
        "is_subagent": True, "parent_conversation_id": "464646460000400080000000000000d2",
        "parent_tool_call_id": "call_d1", "parent_tool": "task"}
    assert [s.action for s in sub.steps] == ["terminal", "finish"]


def test_openhands_subagent_folder_copied_alone_still_names_its_parent(tmp_path: Path) -> None:
    """F4: a sub-agent's folder ingested away from its parent: its ``persistence_dir`` (where the SDK wrote it, under
    the parent's ``subagents/``) still names the parent; the call is not known without the parent's events."""
    copy = tmp_path / OH_SUB.name
    shutil.copytree(OH_SUB, copy)
    [sub] = [p.trajectory for p in read_inputs([copy])]
    assert sub.metadata["is_subagent"] is True
    assert sub.metadata["parent_conversation_id"] == "464646460000400080000000000000d2"
    assert "parent_tool_call_id" not in sub.metadata

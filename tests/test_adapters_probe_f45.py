"""Probe F of round p45 (F1, F3-F5): ATIF that atif-make wrote from real Claude Code and Codex sessions, a Harbor
trajectory copied out of its trial, hand-written native records.

Through ``read_dump`` (no mocks): the ATIF read is compared with what the Claude Code / Codex readers make of the same
session, where the project keeps it.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from trajsearch.ingest.read import read_dump
from trajsearch.model import Outcome

from adapter_support import only

FIXTURES = Path(__file__).parent / "fixtures"
NATIVE = FIXTURES / "native" / ".real" / "probe-f45" / "user_written.jsonl"


def _rejections(path: Path, **kwargs) -> dict[str, str]:
    """Where -> why of each record ``read_dump`` refused."""
    return {p.position: p.error for p in read_dump(path, **kwargs) if not p.ok}


# -- F5: native metadata that is not an object -------------------------------------------------


@pytest.mark.parametrize("defaults", [None, {"metadata": {"team": "a"}, "tags": ["hand"]}])
def test_a_native_metadata_that_is_not_an_object_is_refused_naming_the_field(defaults) -> None:
    """Bug (probe F, F5): ``"metadata": ["a", "b"]`` was refused with Python's "TypeError: 'list' object is not a
    mapping" (the file's time, and the operator's defaults, were merged into it before validation)."""
    errors = _rejections(NATIVE, fmt="native", defaults=defaults)
    [error] = [e for where, e in errors.items() if where.endswith("line 14")]
    assert "field 'metadata'" in error and "TypeError" not in error


@pytest.mark.parametrize("tags", ["abc", {"k": 1}, [{"x": 1}], 3])
def test_native_tags_that_are_not_strings_are_refused_not_merged_with_the_defaults(tmp_path: Path, tags) -> None:
    """The same kind of crash (probe F, F5): with ``tags`` in the operator's defaults, a record's tags were merged
    as an iterable: a string became its characters, a dict its keys, a number or a list of objects a TypeError."""
    path = tmp_path / "runs.jsonl"
    path.write_text(json.dumps({"trajectory_id": "t1", "task": "Fix the failing test", "tags": tags}) + "\n")
    [error] = _rejections(path, fmt="native", defaults={"tags": ["hand"]}).values()
    assert "field 'tags" in error and "TypeError" not in error


# -- F3: ATIF of a Codex IDE session ----------------------------------------------------------

ATIF_MAKE = FIXTURES / "atif" / ".real" / "atif-make-0.10"
CODEX_IDE = "rollout-2025-09-25T15-12-14-019982b8-3422-79e0-8b3b-05abaf4f3c3e"


def test_atif_of_a_codex_ide_session_has_the_users_request_as_its_task() -> None:
    """Bug (probe F, F3): the task was the IDE extension's context ("# Context from my IDE setup: ## Active file:
    ..."), not the request after "## My request for Codex:", which the Codex reader takes from the same session."""
    atif = only(ATIF_MAKE / f"{CODEX_IDE}.trajectory.json")
    codex = only(FIXTURES / "codex-cli" / ".real" / f"{CODEX_IDE}.jsonl")
    assert atif.task.startswith("Evaluate @packages/services and create a new \n  package")
    assert atif.task == codex.task


# -- F1: Claude Code's own error messages in ATIF ---------------------------------------------

HARBOR_CRASHED = (FIXTURES / "atif/.real/harbor-crashed/2026-09-30__08-59-24/check-brickmake-rule-semantics-r__xwL2kAp"
                  / "agent/trajectory.json")
CLAUDE_143 = "143b8ac3-becf-41e0-a3ab-73a4d00f4b54"


def test_atif_claude_code_error_is_no_answer_and_a_run_ending_on_it_is_read_as_claude_codes_reader_does() -> None:
    """Bug (probe F, F1): atif-make's ATIF of a real Claude Code 2.1.332 session ends on the CLI's own
    ``<synthetic>`` "Prompt is too long" message; it was a ``respond`` step and the run ``unknown``, where the
    Claude Code reader of the same session says it ended on that error (the agent's context window: a ``failure``,
    tests/test_context_window_stops.py), and no step."""
    atif = only(ATIF_MAKE / f"{CLAUDE_143}.trajectory.json")
    claude = only(FIXTURES / "claude-code" / ".real" / f"{CLAUDE_143}.jsonl")
    assert atif.outcome is claude.outcome is Outcome.failure
    assert atif.failure.error.startswith("Prompt is too long")
    assert claude.failure.error.startswith(atif.failure.error) and atif.failure.cause == claude.failure.cause
    assert atif.metadata["api_errors"] == claude.metadata["api_errors"] == 1
    assert not [s for s in atif.steps if "Prompt is too long" in str(s.arguments)]
    assert [s.action for s in atif.steps if s.action] == [s.action for s in claude.steps]


def test_a_harbor_claude_code_trajectory_out_of_its_trial_that_was_not_logged_in_is_an_infra_error(
        tmp_path: Path) -> None:
    """Bug (probe F, F1): the project's real Harbor trial, its ``trajectory.json`` copied out of the trial (as a user
    holds one, or a dataset of them): its only agent step, Claude Code's "Not logged in · Please run /login", was the
    agent's answer and the run ``unknown``. In its trial, the trial's verdict still stands."""
    copied = tmp_path / "harbor-cc-not-logged-in.trajectory.json"
    copied.write_bytes(HARBOR_CRASHED.read_bytes())
    run = only(copied)
    assert (run.outcome, run.failure.error) == (Outcome.infra_error, "Not logged in · Please run /login")
    assert run.steps == []
    in_trial = only(HARBOR_CRASHED)
    assert (in_trial.outcome, in_trial.reward, in_trial.metadata["api_errors"]) == (Outcome.failure, 0.0, 1)


def test_claude_codes_no_response_requested_is_no_step_and_no_error(tmp_path: Path) -> None:
    """Claude Code also writes ``<synthetic>`` "No response requested." where no reply is due (after an interrupted
    prompt): bookkeeping, not an error; and a model turn after an error clears it, as the Claude Code reader does."""
    document = json.loads((ATIF_MAKE / f"{CLAUDE_143}.trajectory.json").read_text())
    last = document["steps"][-1]
    document["steps"][-1] = {**last, "message": "No response requested."}
    path = tmp_path / "no-response.trajectory.json"
    path.write_text(json.dumps(document))
    run = only(path)
    assert run.outcome is Outcome.unknown and "api_errors" not in run.metadata
    assert not [s for s in run.steps if "No response requested." in str(s.arguments)]


# -- F4: what Claude Code wrote itself, in ATIF ----------------------------------------------

CLAUDE_ERK = "396380b6-a653-4cf2-8101-87a91b3eeb41"


def test_atif_claude_code_slash_command_interrupt_and_reasoning_only_turn_read_as_claude_codes_reader() -> None:
    """Bug (probe F, F4): in atif-make's ATIF of a real Claude Code 2.1.50 session, the task was the bare
    ``/erk:plan-implement``; the 4 KB prompt it expanded to (marked ``extra.meta``), and "[Request interrupted by
    user]", were "user said" steps; the last turn (reasoning only) a ``respond`` with empty content."""
    atif = only(ATIF_MAKE / f"{CLAUDE_ERK}.trajectory.json")
    claude = only(FIXTURES / "claude-code" / ".real" / "erk" / f"{CLAUDE_ERK}.jsonl")
    assert atif.task == claude.task and atif.task.startswith("# /erk:plan-implement\n\nImplement a plan")
    assert atif.metadata["interrupted"] is claude.metadata["interrupted"] is True
    assert [s.observation for s in atif.steps if s.action is None] == ["continue"]  # a later prompt: a step (O1)
    assert [s.action for s in atif.steps if s.action] == [s.action for s in claude.steps] == ["Bash"]
    assert atif.steps[0].thought == claude.steps[0].thought  # the reasoning the session ended on


def test_atif_slash_command_with_arguments_asks_them_and_its_expansion_is_no_step(tmp_path: Path) -> None:
    """The same session with the command given an argument (``/erk:plan-implement 2521``): what it asks is the
    command as typed, as the Claude Code reader takes it (``command_instruction``); the expansion is still no step."""
    document = json.loads((ATIF_MAKE / f"{CLAUDE_ERK}.trajectory.json").read_text())
    document["steps"][0]["message"] += "\n<command-args>2521</command-args>"
    path = tmp_path / "with-args.trajectory.json"
    path.write_text(json.dumps(document))
    run = only(path)
    assert run.task == "/erk:plan-implement 2521"
    assert [s.observation for s in run.steps if s.action is None] == ["continue"]

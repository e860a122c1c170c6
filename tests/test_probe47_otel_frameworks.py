"""Probe 47, W1: span formats from frameworks read least, on their real exports (see the fixtures' SOURCE.md)."""

from __future__ import annotations

from pathlib import Path

import pytest

import adapter_support
from trajsearch.ingest.detect import detect_format
from trajsearch.model import Outcome

HARBOR = Path(__file__).parent / "fixtures" / "openinference" / ".real" / "probe47w1"


def test_harbor_otel_export_json_exit_code_fails_the_tool_step() -> None:
    """hermes' ``terminal`` returns ``{"output", "exit_code", "error"}`` for every command; the export keeps it as the
    TOOL span's output with status OK, and the failed ``cat`` (exit code 1, with output) read as a success."""
    run = adapter_support.only(HARBOR / "harbor-0.26-atif2otel-0.1.1-hermes.otlp.jsonl")
    assert [s.action for s in run.steps] == ["terminal", "terminal", "respond"]
    failed, ok, _ = run.steps
    assert failed.error == "cat: /nonexistent/config.yaml: No such file or directory (exit code 1)"
    assert ok.error is None


def test_harbor_otel_export_placeholder_messages_are_no_answers() -> None:
    """A hermes turn that only called a tool carries Harbor's ``[tool call]`` as its message, which the export writes
    as the LLM span's output: with no step times to tie it to its call, each read as a ``respond`` answer."""
    run = adapter_support.only(HARBOR / "harbor-0.26-atif2otel-0.1.1-hermes.otlp.jsonl")
    assert [s.arguments for s in run.steps if s.action == "respond"] == [
        {"content": "The config file is missing; I wrote out.txt containing 'fixed'."}]
    assert not any(s.thought for s in run.steps)


@pytest.mark.parametrize("name, errors", [
    ("strands", ["cat: /nonexistent/config.yaml: No such file or directory (exit code 1)",
                 "Error: The path /tmp/p46/probeA/strands/work/settings.py does not exist. "
                 "Please provide a valid path.",
                 None, None]),
    ("kimi-cli", ["cat: /nonexistent/config.yaml: No such file or directory", None, None]),
])
def test_harbor_otel_export_reads_results_as_the_atif_reader_does(name: str, errors: list[str | None]) -> None:
    """Every Harbor agent's results, exported, fail their steps as the same trial's ATIF does (strands' JSON exit code
    and ``Error:`` result, kimi-cli's shell output ending ``No such file or directory``), and the converters'
    ``(tool calls)`` / ``(tool use)`` placeholders are no thought and no answer."""
    run = adapter_support.only(HARBOR / f"harbor-0.26-atif2otel-0.1.1-{name}.otlp.jsonl")
    assert [s.error for s in run.steps] == errors
    assert not any(s.thought for s in run.steps)
    assert [s.action for s in run.steps][-1] == "respond"
    assert sum(s.action == "respond" for s in run.steps) == 1


def test_a_long_otlp_line_of_a_traced_mini_swe_agent_run_is_spans() -> None:
    """A file of OTLP requests whose first line runs past the 64 KiB peek is told by the formats' signatures; the
    mini-swe-agent prompt its spans carry (``COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT``) matched mini-swe-agent's first,
    and the whole file was rejected: "missing field 'messages'". Now only span formats' signatures count there."""
    path = HARBOR / "harbor-0.25-atif2otel-0.1.1-mini-swe-agent.otlp.jsonl"
    assert path.stat().st_size > 64 * 1024 and path.read_text().count("\n") == 1
    assert detect_format(path) == "openinference"
    run = adapter_support.only(path)
    assert run.task.startswith("Modeling's `separability_matrix` does not compute separability correctly")
    assert run.model_id == "google/gemini-3-pro-preview"
    assert len(run.steps) == 20


def test_harbor_otel_export_mini_swe_agent_fenced_commands_are_bash_steps() -> None:
    """mini-swe-agent 1.x writes its command in a fence in its words (no tool calls): the ATIF reader reads each turn
    as a ``bash`` step, but the export has only the LLM span's output, and each turn read as a ``respond`` answer."""
    run = adapter_support.only(HARBOR / "harbor-0.25-atif2otel-0.1.1-mini-swe-agent.otlp.jsonl")
    assert {s.action for s in run.steps} == {"bash"}
    first, last = run.steps[0], run.steps[-1]
    assert first.arguments == {"command": "ls -R"}
    assert first.thought.startswith("I need to explore the codebase")
    assert last.arguments["command"].startswith("echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT")


def test_harbor_otel_export_claude_codes_own_message_is_no_answer() -> None:
    """Claude Code that was not logged in wrote only its own ``Not logged in · Please run /login`` (model
    ``<synthetic>``); exported, it read as the agent answering that, outcome unknown, model ``<synthetic>``. The ATIF
    reader reads the same trajectory as a run that ended on an API error: so is the export now."""
    run = adapter_support.only(HARBOR / "harbor-atif2otel-0.1.1-claude-code-not-logged-in.otlp.jsonl")
    assert run.task.startswith("You are reviewing a Harbor task for quality and completeness.")
    assert not any(s.action == "respond" for s in run.steps)
    assert run.outcome is Outcome.infra_error
    assert run.failure.error == "Not logged in · Please run /login"
    assert run.failure.cause.startswith("infrastructure: the session ended on an API error")
    assert run.model_id is None
    assert run.metadata["api_errors"] == 1


def test_harbor_otel_export_task_is_the_typed_prompt_not_the_clis_context() -> None:
    """The export's root input is the trajectory's first user message, for Codex its ``<environment_context>``:
    that was the task. The ATIF reader skips context the CLI wrote; the export's run now has the prompt the user
    typed, which only its model calls' input holds."""
    run = adapter_support.only(HARBOR / "harbor-0.25-atif2otel-0.1.1-codex.otlp.jsonl")
    assert run.task == "Fix the greeting in main.py to say hello and run it"
    assert [s.action for s in run.steps][:2] == ["apply_patch", "exec_command"]


def test_harbor_otel_export_steps_are_tied_to_their_words_by_the_export_order() -> None:
    """The export writes an agent step's words as an LLM span and its calls as the TOOL spans right after it, with no
    call ids; tied by time alone, Codex's first-turn answer was taken for the thought of the next turn's command, and
    lost as an answer. A step with no timestamp got its TOOL spans 1 ms after the epoch: the run dated 1970."""
    run = adapter_support.only(HARBOR / "harbor-0.25-atif2otel-0.1.1-codex.otlp.jsonl")
    assert [s.action for s in run.steps] == ["apply_patch", "exec_command", "respond", "exec_command", "respond"]
    assert run.steps[0].thought == "I'll patch main.py to print hello."
    assert run.steps[2].arguments["content"].startswith("main.py now prints hello")
    assert run.steps[3].thought is None
    untimed = adapter_support.only(HARBOR / "harbor-0.26-atif2otel-0.1.1-hermes.otlp.jsonl")
    assert untimed.created_at.year > 2000
    assert all(s.started_at is None for s in untimed.steps)

"""One rule for a run its context window stopped: the agent's failure, in every reader (round 21, FM5 leftover 1).

Every file here is a real tool's output (see each fixture folder's SOURCE.md): a session whose last request the
model refused as longer than its window, with no work after it.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from trajsearch.ingest.read import read_dump
from trajsearch.model import Outcome

FIXTURES = Path(__file__).parent / "fixtures"
CLAUDE_143 = "143b8ac3-becf-41e0-a3ab-73a4d00f4b54"
#: Sessions ended by their context window, one per CLI and converter, with the words the tool recorded.
OVERFLOWED = {
    "claude-code 2.1.332": (FIXTURES / "claude-code/.real" / f"{CLAUDE_143}.jsonl", "Prompt is too long"),
    "atif-make of it": (FIXTURES / "atif/.real/atif-make-0.10" / f"{CLAUDE_143}.trajectory.json",
                        "Prompt is too long"),
    "harbor 0.25 claude-code": (FIXTURES / "atif/.real/harbor-0.25/cc-proj2/agent/trajectory.json",
                                "Prompt is too long"),
    "codex 0.171.0": (FIXTURES / "codex-cli/.real/rollout-2026-12-02T00-54-18-01a2343e-c43a-71b0-8325-96dd5e2db5fe.jsonl",
                      "Codex ran out of room in the model's context window"),
    "gemini-cli 0.61.0 stream-json": (FIXTURES / "gemini-cli/.real/headless-stream-json-api-error.jsonl",
                                      "The input token count exceeds the maximum number of tokens allowed"),
    "opencode": (FIXTURES / "opencode/.real/context-overflow.json", "maximum context length"),
    "openhands sdk": (FIXTURES / "openhands/.real/sdk-context-window/313131310000400080000000000000c1",
                      "ContextWindowExceededError"),
}


def _one(path: Path):
    [result] = read_dump(path, tenant="acme")
    assert result.ok, result.error
    return result.trajectory


@pytest.mark.parametrize("name", sorted(OVERFLOWED))
def test_a_run_its_context_window_stopped_is_the_agents_failure_in_every_reader(name: str) -> None:
    """Bug: Claude Code's "Prompt is too long", Codex's ``context_window_exceeded`` and the Gemini API's token-count
    400 read as ``infra_error`` (an outage: left out of the agent's failures, as if a retry would pass), where
    OpenCode's ``ContextOverflowError`` and OpenHands' ``LLMContextWindowExceedError`` were the agent's failure."""
    path, said = OVERFLOWED[name]
    run = _one(path)
    assert run.outcome is Outcome.failure
    assert said in run.failure.error
    assert run.failure.cause == "the agent ran out of its context window"


def test_a_cli_session_ended_by_the_provider_stays_an_infrastructure_error() -> None:
    """The rule is the context window's only: Claude Code's "Not logged in" (real 2.1 session) is not the agent's."""
    run = _one(FIXTURES / "claude-code/.real/claude-backup/0431bdac-e353-4580-97e6-a2e322fd6afc.jsonl")
    assert run.outcome is Outcome.infra_error and run.failure.error.startswith("Not logged in")

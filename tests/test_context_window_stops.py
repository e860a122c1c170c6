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


#: Context-window refusals as users reported them from other providers (the issue each is quoted from), each put in
#: place of the error a real session ended on (Claude Code 2.1.332's ``<synthetic>`` API error; Qwen Code 0.x's
#: stream-json ``error_message``): the same session, stopped by another provider's words for the same limit.
PROVIDERS_SAID = {
    "bedrock (anthropics/claude-code#760)": "API Error: 400 Input is too long for requested model.",
    "xai (cline/cline#3120)": "400 This model's maximum prompt length is 131072 but the request contains 136973 "
                              "tokens.",
    "moonshot (MoonshotAI/kimi-cli#2011)": "Error code: 400 - {'error': {'message': 'Invalid request: Your request "
                                           "exceeded model token limit: 262144 (requested: 269030)', 'type': "
                                           "'invalid_request_error'}}",
    "anthropic stop reason (anthropic-sdk-python 0.119.0, anomalyco/opencode#18918)": "model_context_window_exceeded",
    "dashscope (QwenLM/qwen-code#2068)": "<400> InternalError.Algo.InvalidParameter: Range of input length should "
                                         "be [1, 983616]",
}


@pytest.mark.parametrize("name", sorted(PROVIDERS_SAID))
def test_other_providers_context_window_refusals_are_the_agents_failure(name: str, tmp_path: Path) -> None:
    """Bug (review RFM5): Bedrock's "Input is too long for requested model" (Claude Code on Bedrock), DashScope's
    "Range of input length should be [1, N]" (Qwen Code), xAI's "maximum prompt length is N but the request contains
    M", Moonshot's "exceeded model token limit" and Anthropic's ``model_context_window_exceeded`` (no word break
    before ``context_``) read as ``infra_error``, as if a retry would pass."""
    said = PROVIDERS_SAID[name]
    claude = (FIXTURES / "claude-code/.real" / f"{CLAUDE_143}.jsonl").read_text()
    claude = claude.replace("Prompt is too long · automatic compaction failed: summarization produced empty response",
                            said.replace("'", "\\u0027")).replace("prompt is too long: 250000 tokens > 200000 maximum",
                                                                  "")
    qwen = (FIXTURES / "qwen-code/.real/api-error.jsonl").read_text()
    qwen = qwen.replace("400 Invalid request: tool schema rejected by the provider", f"400 {said}".replace('"', ""))
    for folder, text, file in (("claude", claude, f"{CLAUDE_143}.jsonl"), ("qwen", qwen, "api-error.jsonl")):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / file).write_text(text)
        run = _one(tmp_path / folder / file)
        assert said.split(" ", 2)[-1][:30] in run.failure.error  # the provider's words, read as the session's end
        assert run.outcome is Outcome.failure
        assert run.failure.cause == "the agent ran out of its context window"


def test_a_mini_swe_agent_run_its_context_window_stopped_names_that_cause() -> None:
    """Bug (review RFM5): mini-swe-agent's ``ContextWindowExceededError`` (real 1.17.5 batch run) was a failure with
    no cause, where every other reader names the context window."""
    run = _one(FIXTURES / "mini-swe-agent/.real/batch-1.17.5/demo__greet-23/demo__greet-23.traj.json")
    assert run.outcome is Outcome.failure and run.failure.error.startswith("ContextWindowExceededError")
    assert run.failure.cause == "the agent ran out of its context window"

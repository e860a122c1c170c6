"""OpenAI Agents SDK exports of round 46's probes H and F read through the public reader: the JS SDK
(``@openai/agents`` 0.20, Responses model) and the Python SDK 0.24 with an agent used as a tool.

The fixtures (``fixtures/openai-agents/.real/probeH46`` and ``probeF46``, see each SOURCE.md) were written by the
released packages against a local fake model server; only the model's replies were scripted.
"""

from __future__ import annotations

from pathlib import Path

from trajsearch.ingest.read import detect_format

import adapter_support

REAL = Path(__file__).parent / "fixtures" / "openai-agents" / ".real"
JS = REAL / "probeH46"


def test_js_tripped_input_guardrail_is_one_failure_named_by_the_guardrail() -> None:
    """Bug (probe H, H2): the JS SDK writes the tripwire's error on the turn, the agent and the task span alike, so
    the run had two failure steps ("chain turn 1 failed", "agent Support failed") with the same error; it is one,
    told as the Python SDK tells it, by the guardrail whose span says ``triggered``."""
    path = JS / "oai-agents-js-0.20-responses-guardrail-tripped.jsonl"
    assert detect_format(path) == "openai-agents"
    [run] = adapter_support.runs(path)
    assert run.outcome.value == "failure"
    error = 'Guardrail tripwire triggered: abuse_check: {"is_abuse":true,"reason":"insults the agent"}'
    assert run.failure.error == error  # review 1, D3: the guardrail's verdict, why the run was refused, is kept
    assert [(s.action, s.error) for s in run.steps] == [(None, error)]


def test_js_handoff_keeps_the_agent_names_case() -> None:
    """Bug (probe H, H3): with the Responses model no span records what the model called, and the handoff step was
    named the Python SDK's way, ``transfer_to_refunds_agent``, where the JS SDK keeps the case
    (``transfer_to_${toFunctionToolName(agent.name)}``, agents-core ``handoff.ts``)."""
    finished, _raised = adapter_support.runs(JS / "oai-agents-js-0.20-responses-handoff-raise.jsonl")
    assert [s.action for s in finished.steps] == ["transfer_to_Refunds_agent", "lookup_order", "issue_refund"]


def test_js_run_that_raised_is_named_after_its_workflow() -> None:
    """Bug (probe H, H4): a JS run that raised writes no trace record (the SDK never ends its trace), and its task
    read "task (Billing agent) ..." where its root ``task`` span names the workflow, as the finished run's does."""
    finished, raised = adapter_support.runs(JS / "oai-agents-js-0.20-responses-handoff-raise.jsonl")
    assert finished.task == "Agent workflow (Triage agent, Refunds agent) (no input recorded)"
    assert raised.task == "Agent workflow (Billing agent) (no input recorded)"
    assert raised.outcome.value == "failure" and "billing API returned 403" in raised.failure.error


def test_python_handoff_without_model_calls_is_still_lower_cased() -> None:
    """The Python SDK's default handoff name lower-cases the agent's (``Handoff.default_tool_name``)."""
    path = REAL / "logfire-openai-agents-handoff-de.otlp.json"
    assert [s.action for s in adapter_support.runs(path)[0].steps][0] == "transfer_to_rechnungs_agent"


def test_agent_tool_whose_run_failed_is_that_calls_error_not_the_runs() -> None:
    """Bug (probe F, F1): ``Agent.as_tool`` whose inner run raised (max turns, HTTP 500) is given back to the model
    as a tool error and the outer run answers; the run was marked failure / infra_error by "error status of the
    root span" (which has none) with an extra "agent Researcher failed" step. The inner error is the call's."""
    inner_max_turns, inner_500 = adapter_support.runs(REAL / "probeF46" / "oai-agents-0.24-agent-tool-failed.jsonl")
    for run, tool, error in [(inner_max_turns, "researcher", 'Max turns exceeded: {"max_turns": 2}'),
                             (inner_500, "translator", "Error in agent run: Error code: 500 - The server had an "
                                                       "error while processing your request.")]:
        assert run.outcome.value == "unknown" and run.failure is None
        assert "outcome_basis" not in run.metadata
        assert all(s.action for s in run.steps) and run.steps[-1].action == "respond"
        assert [s.error for s in run.steps if s.action == tool] == [error]


def test_sub_agent_failure_under_a_tool_that_recorded_none_is_that_calls_error() -> None:
    """Review 1, D2: a ``@function_tool`` running ``Runner.run`` itself and catching its ``MaxTurnsExceeded`` leaves
    the function span without error; the inner agent span's error was then cleared and given to nobody, so "Max
    turns exceeded" was nowhere in the run. It is the error of the call whose work it was; the run is not failed."""
    run = adapter_support.only(REAL / "rev1-46" / "oai-agents-0.24-caught-inner-failure.jsonl")
    assert run.failure is None and [s.action for s in run.steps] == ["researcher", "search_kb", "search_kb", "respond"]
    researcher = run.steps[0]
    assert researcher.error == 'Max turns exceeded: {"max_turns": 2}'
    assert researcher.observation == "research failed: MaxTurnsExceeded"

"""OpenAI Agents SDK exports of round 46's probes H and F read through the public reader: the JS SDK
(``@openai/agents`` 0.20, Responses model) and the Python SDK 0.24 with an agent used as a tool.

The fixtures (``fixtures/openai-agents/.real/probeH46`` and ``probeF46``, see each SOURCE.md) were written by the
released packages against a local fake model server; only the model's replies were scripted.
"""

from __future__ import annotations

from pathlib import Path

import adapter_support

REAL = Path(__file__).parent / "fixtures" / "openai-agents" / ".real"
JS = REAL / "probeH46"


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

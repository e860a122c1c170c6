"""Span runs' failures and tasks: review 2 of round 42 (findings F8 and F3).

Fixtures (sources in the ``SOURCE.md`` beside them): real captures by the released, unmodified instrumentation
packages, written with the OTel SDK's own OTLP/JSON encoder; ``otel-genai/.released/
langchain-1.8-openllmetry-0.62-distinct-failures.otlp.jsonl`` (langchain-core 1.8.3 under
opentelemetry-instrumentation-langchain 0.62.4) and ``openinference/.released/
openai-openinference-0.1.66-tickets-chain-input.otlp.jsonl`` (openinference-instrumentation 0.1.72's ``OITracer`` +
openinference-instrumentation-openai 0.1.66). Everything goes through the public reader (``read_dump``).
"""

from __future__ import annotations

import json
from pathlib import Path

from adapter_support import only, runs

FIXTURES = Path(__file__).parent / "fixtures"
FAILURES = FIXTURES / "otel-genai" / ".released" / "langchain-1.8-openllmetry-0.62-distinct-failures.otlp.jsonl"
TICKETS = FIXTURES / "openinference" / ".released" / "openai-openinference-0.1.66-tickets-chain-input.otlp.jsonl"
PARSE_ERROR = "ValueError: could not parse the plan"


def _failures(run) -> list[tuple[str | None, str | None]]:
    return [(s.observation, s.error) for s in run.steps if s.action is None]


def test_parallel_branches_failing_with_different_errors_keep_both_failures() -> None:
    """F8: ``parse_plan`` and ``migrator`` run at once (a ``RunnableParallel``); the first fails after 0.05 s, the
    second after 0.3 s with a timeout. The first failure's step, at its end, lies in the second's time, and counted
    as the second's own failing step: the ``TimeoutError`` was in the run nowhere."""
    parallel = next(r for r in runs(FAILURES) if PARSE_ERROR in r.failure.error)
    assert _failures(parallel) == [
        ("chain execute_task parse_plan failed", PARSE_ERROR),
        ("chain execute_task migrator failed", "TimeoutError: agent run exceeded 60s"),
    ]


def test_a_root_cause_ending_in_the_same_instant_as_its_wrapper_is_kept(tmp_path: Path) -> None:
    """F8: ``migrator`` re-raises ``parse_plan``'s ``ValueError`` as a ``RuntimeError``. An exception passing up ends
    both in the same millisecond in an export at that precision (here: the captured file with ``migrator``'s end set
    to ``parse_plan``'s, nothing else changed); the wrapper's step, at its end, lay in the child's time and dropped
    the child's failure, the root cause."""
    request = json.loads(FAILURES.read_text())
    spans = [s for rs in request["resourceSpans"] for ss in rs["scopeSpans"] for s in ss["spans"]]
    by_id = {s["spanId"]: s for s in spans}
    child, wrapper = next((s, by_id[s["parentSpanId"]]) for s in spans if s["name"] == "execute_task parse_plan"
                          and by_id[s["parentSpanId"]]["name"] == "execute_task migrator")
    wrapper["endTimeUnixNano"] = child["endTimeUnixNano"]
    path = tmp_path / "same_end.otlp.jsonl"
    path.write_text(json.dumps(request) + "\n")
    nested = next(r for r in runs(path) if "RuntimeError" in r.failure.error)
    assert _failures(nested) == [
        ("chain execute_task parse_plan failed", PARSE_ERROR),
        ("chain execute_task migrator failed", "RuntimeError: planning step failed"),
    ]


def test_a_model_error_passed_up_the_chains_is_still_one_step() -> None:
    """F8's fix keeps 63e12df's rule: chains failing with the error of a failed model call below them in the span
    tree (langgraph 1.2.24, the model answering HTTP 500) give that call's step, once."""
    run = only(FIXTURES / "otel-genai" / ".released" / "langgraph-1.2-openllmetry-0.62-model-500.otlp.jsonl")
    assert [said for said, _ in _failures(run)] == ["llm ChatOpenAI.chat failed"]


def test_a_list_of_records_with_a_description_as_a_root_input_is_not_the_task() -> None:
    """F3: an app's ``CHAIN`` span whose input is the tickets it hands its model (``[{"id", "title",
    "description"}]``) read as CrewAI's task list: the task was the tickets' descriptions. Only CrewAI's own
    attributes (``crewai.crew.tasks``, ``crew_tasks``) are read so; here the task is the model's user message."""
    assert only(TICKETS).task.startswith("Which of these tickets is most urgent?")

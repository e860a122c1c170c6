"""Platform exports users really make, read as the runs they hold (probe 47, area A: Langfuse, LangSmith, Phoenix).

Each test reads a real file, or one built as the platform's own writer builds it (the fixture folder's SOURCE.md
names the writer's source), through the public reader.
"""

from __future__ import annotations

from pathlib import Path

import adapter_support
from trajsearch.model import Outcome

FIXTURES = Path(__file__).parent / "fixtures"
LANGFUSE_EXPORT = FIXTURES / "langfuse" / ".real" / "batch-export"


def test_langfuse_traces_table_export_keeps_its_score_columns() -> None:
    """The UI's batch export of the traces table (JSONL; JSON and CSV hold the same rows) writes no ``scores``
    field: each score name of the project is a column of its own, a list of the trace's values or null. The
    ``task_success`` annotations were lost, so both runs read as outcome unknown; they decide now, and the other
    scores stay in metadata without deciding (a hallucination rate is no verdict)."""
    runs = {r.trajectory_id: r for r in adapter_support.runs(LANGFUSE_EXPORT / "traces-export.jsonl")}
    graph, joke = runs["lf:e1fde3efec57ce8a69bafd3fb928a7eb"], runs["lf:7a38edd8123db47ad8dcb8aa4c5e3926"]
    assert graph.outcome is Outcome.success and joke.outcome is Outcome.failure
    assert graph.task == "Search the web for 'example' and summarize."
    kept = {(s["name"], s.get("value"), s.get("label")) for s in graph.metadata["scores"]}
    assert kept == {("task_success", None, "pass"), ("hallucination", 0.1, None)}

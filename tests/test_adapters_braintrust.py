"""Braintrust span rows (project logs / experiments), read from rows the Braintrust SDK itself wrote
(tests/fixtures/braintrust/.newc31/README.md): one run per ``root_span_id``, tool spans as steps, the root's
``scores`` as the verdict. Everything goes through the public reader and the CLI."""

from __future__ import annotations

import json
from pathlib import Path

from trajsearch.ingest.detect import detect_format
from trajsearch.ingest.read import read_inputs
from trajsearch.model import Outcome

from adapter_support import only, runs
from cli_support import run_cli, unnoted

FIXTURES = Path(__file__).parent / "fixtures" / "braintrust" / ".newc31"
SDK_ROWS = FIXTURES / "project-logs-sdk-rows.jsonl"
EXPERIMENT = FIXTURES / "experiment-eval-sdk-rows.jsonl"
REFUSED = "PermissionError: refund of 42.0 for A-1001 exceeds the agent's limit of 25.0"


def _rows() -> list[dict]:
    return [json.loads(line) for line in SDK_ROWS.read_text().splitlines()]


def test_a_trace_is_one_run_its_tool_spans_steps_in_time_order_and_its_scores_the_verdict() -> None:
    assert detect_format(SDK_ROWS) == "braintrust"
    run = only(SDK_ROWS, tenant="acme")
    assert run.trajectory_id == "bt:6ed003a7625e4429e4cbeb1515ee2821"
    assert run.task == "Please refund order A-1001, it arrived broken."
    assert run.model_id == "gpt-4o-mini-2024-07-18"
    assert [(s.action, s.arguments) for s in run.steps] == [
        ("lookup_order", {"order_id": "A-1001"}), ("issue_refund", {"order_id": "A-1001", "amount": 42.0}),
        ("respond", {"content": "I could not refund the order: it is above my limit. "
                                "I have escalated it to a human agent."})]
    lookup, refund, _ = run.steps
    assert lookup.error is None and json.loads(lookup.observation or "")["status"] == "delivered"
    assert refund.error == REFUSED  # the decisive line of the traceback the SDK logged
    assert (run.outcome, run.reward) == (Outcome.failure, 0.0)
    assert run.metadata["outcome_basis"] == "score 'Correctness'"
    assert run.metadata["project"] == "refund-agent"


def test_the_fetch_api_s_events_and_a_json_array_read_as_the_rows_do(tmp_path: Path) -> None:
    """The export lists each span's merged row (the feedback merged in): ``{"events": [...]}`` from
    ``project_logs/{id}/fetch``, a JSON array from the UI's download."""
    spans = [r for r in _rows() if "span_attributes" in r]
    (tmp_path / "fetch.json").write_text(json.dumps({"events": spans, "cursor": None}))
    (tmp_path / "download.json").write_text(json.dumps(spans))
    want = only(SDK_ROWS, tenant="acme")
    for name in ("fetch.json", "download.json"):
        assert detect_format(tmp_path / name) == "braintrust", name
        run = only(tmp_path / name, tenant="acme")
        assert (run.trajectory_id, run.outcome, [s.action for s in run.steps]) == \
            (want.trajectory_id, want.outcome, [s.action for s in want.steps])


def test_an_unscored_trace_s_outcome_is_unknown_and_a_scorer_span_is_no_step(tmp_path: Path) -> None:
    rows = [dict(r, scores=None) for r in _rows() if "span_attributes" in r]
    root = rows[0]
    rows.append({"id": "score-row", "span_id": "score-span", "root_span_id": root["root_span_id"],
                 "span_parents": [root["span_id"]], "span_attributes": {"name": "Factuality", "type": "score"},
                 "input": {"output": "..."}, "output": {"score": 0}, "metrics": {"start": 1796631452.0}})
    (tmp_path / "logs.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    run = only(tmp_path / "logs.jsonl", tenant="acme")
    assert run.outcome is Outcome.unknown
    assert [s.action for s in run.steps] == ["lookup_order", "issue_refund", "respond"]


def test_an_experiment_s_cases_are_runs_judged_by_their_scorer_spans() -> None:
    """``Eval``'s rows: an ``eval`` root per case (input, expected, output), its ``task`` span, the task's tool
    spans, and a ``score`` span per scorer, whose ``scores`` are the case's (the root row carries none)."""
    assert detect_format(EXPERIMENT) == "braintrust"
    failed, passed = sorted(runs(EXPERIMENT, tenant="acme"), key=lambda r: r.task)
    assert (passed.task, passed.outcome, passed.reward) == ("How long does shipping take?", Outcome.success, 1.0)
    assert (failed.task, failed.outcome, failed.reward) == ("How do I get a refund?", Outcome.failure, 0.0)
    assert [(s.action, s.arguments, s.error) for s in failed.steps] == [
        ("search_docs", {"query": "How do I get a refund?"}, "TimeoutError: docs index did not answer within 5.0 s")]
    assert failed.metadata["scores"] == [{"name": "exact_match", "value": 0.0}]


def test_a_row_that_is_no_span_is_refused_naming_the_file_and_the_run_kept(tmp_path: Path) -> None:
    rows = [r for r in _rows() if "span_attributes" in r]
    rows[2] = {"root_span_id": rows[2]["root_span_id"], "input": {"order_id": "A-1001"}}
    (tmp_path / "bad.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    parsed = list(read_inputs([tmp_path / "bad.jsonl"], fmt="braintrust"))
    [refused] = [p for p in parsed if not p.ok]
    assert str(refused.source).endswith("bad.jsonl")
    assert "not a Braintrust span row: it needs 'span_attributes', 'root_span_id' and 'span_id'" in str(refused.error)
    [kept] = [p.trajectory for p in parsed if p.ok]
    assert kept.trajectory_id == "bt:6ed003a7625e4429e4cbeb1515ee2821"
    assert [s.error for s in kept.steps if s.error] == [REFUSED]


def test_cli_dry_run_names_the_format_and_an_ingest_finds_the_run_by_its_tool_error(home: Path) -> None:
    code, out, err = run_cli("ingest", str(FIXTURES), "-t", "acme", "--dry-run")
    assert code == 0, out + err
    assert "project-logs-sdk-rows.jsonl: format braintrust; runs 1; rejected 0" in out, out
    assert "experiment-eval-sdk-rows.jsonl: format braintrust; runs 2; rejected 0" in out, out
    code, out, err = run_cli("ingest", str(FIXTURES), "-t", "acme", "--json", "--quiet")
    assert code == 0 and json.loads(out)["ingested"] == 3, out + err
    code, out, err = run_cli("search", "refund exceeds the agent's limit", "-t", "acme", "--json")
    assert code == 0 and not unnoted(err), out + err
    assert json.loads(out)[0]["trajectory_id"] == "bt:6ed003a7625e4429e4cbeb1515ee2821", out
    code, out, err = run_cli("formats")
    assert code == 0 and "braintrust" in out, out + err

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


def _spans() -> list[dict]:
    return [r for r in _rows() if "span_attributes" in r]


def _want() -> tuple:
    run = only(SDK_ROWS, tenant="acme")
    return run.trajectory_id, run.outcome, [(s.action, s.error) for s in run.steps]


def test_btql_s_answer_bt_view_trace_and_the_sdk_s_payload_list_the_rows_as_the_fetch_api_does(tmp_path: Path) -> None:
    """``/btql`` answers ``{"data", "schema", "cursor"}`` (braintrustdata/bt src/http.rs ``BtqlResponse``),
    ``bt view trace --json`` prints ``{"meta", "paging", "items"}`` (src/traces.rs), and the SDK writes its upload as
    ``{"rows": [...], "api_version": 2}`` (logger.py ``construct_logs3_data``)."""
    spans = _spans()
    shapes = {"btql.json": {"data": spans, "schema": {"type": "array"}, "cursor": "abc"},
              "view.json": {"meta": {"command": "view trace"}, "paging": {"has_more": False}, "items": spans,
                            "hints": []},
              "logs3.json": {"rows": spans, "api_version": 2}}
    for name, value in shapes.items():
        (tmp_path / name).write_text(json.dumps(value, indent=2))
        assert detect_format(tmp_path / name) == "braintrust", name
        run = only(tmp_path / name, tenant="acme")
        assert (run.trajectory_id, run.outcome, [(s.action, s.error) for s in run.steps]) == _want(), name


def test_a_bad_event_is_refused_by_its_index_and_the_rows_after_it_still_read(tmp_path: Path) -> None:
    spans = _spans()
    (tmp_path / "mixed.json").write_text(json.dumps({"events": spans[:2] + [5, "x", None] + spans[2:]}))
    parsed = list(read_inputs([tmp_path / "mixed.json"], fmt="braintrust"))
    [refused] = [p for p in parsed if not p.ok]
    assert "events[2] (found int); events[3] (found str); events[4] (found NoneType)" in str(refused.error)
    [kept] = [p.trajectory for p in parsed if p.ok]
    assert ([(s.action, s.error) for s in kept.steps], kept.outcome) == (_want()[2], _want()[1])


def test_rows_without_their_span_identity_are_refused_not_read_as_another_format(tmp_path: Path) -> None:
    """Rows stripped of span_id / root_span_id / span_attributes (as third-party importers describe a flat copy of
    the logs) name no trace: a clear refusal, not a run of another format made of them."""
    flat = [{k: v for k, v in r.items() if k not in ("span_id", "root_span_id", "span_parents", "span_attributes")}
            | {"name": r["span_attributes"]["name"]} for r in _spans()]
    (tmp_path / "flat.json").write_text(json.dumps(flat))
    code, out, err = run_cli("ingest", str(tmp_path / "flat.json"), "-t", "acme", "--dry-run")
    assert "flat.json: format braintrust; runs 0; rejected 6" in out, out + err
    assert "export the spans with `bt sync pull`" in out + err, out + err


def test_a_span_completed_after_a_flush_is_merged_from_its_merge_row(tmp_path: Path) -> None:
    """What a span gets after the SDK flushed its first row (output, scores, end) comes as an ``_is_merge`` row
    with the span's ids and no ``span_attributes`` (logger.py ``SpanImpl.log_internal``)."""
    spans = _spans()
    root = spans[0]
    later = {"id": root["id"], "span_id": root["span_id"], "root_span_id": root["root_span_id"],
             "span_parents": None, "output": root["output"], "scores": root["scores"],
             "metrics": {"end": root["metrics"]["end"]}, "_is_merge": True}
    spans[0] = {k: v for k, v in root.items() if k not in ("output", "scores")} | {
        "metrics": {"start": root["metrics"]["start"]}}
    (tmp_path / "split.jsonl").write_text("".join(json.dumps(r) + "\n" for r in spans + [later]))
    run = only(tmp_path / "split.jsonl", tenant="acme")
    assert (run.trajectory_id, run.outcome, [(s.action, s.error) for s in run.steps]) == _want()
    assert run.metadata["outcome_basis"] == "score 'Correctness'"


def test_spans_whose_parents_form_a_cycle_are_refused_clearly(tmp_path: Path) -> None:
    spans = _spans()
    spans[0]["span_parents"] = [spans[1]["span_id"]]
    (tmp_path / "cycle.jsonl").write_text("".join(json.dumps(r) + "\n" for r in spans))
    runs_ = [json.loads(line) for line in (Path(__file__).parent / "fixtures" / "langsmith" / "runs.jsonl")
             .read_text().splitlines()][:4]
    runs_[0]["parent_run_id"] = runs_[1]["id"]
    (tmp_path / "cycle-langsmith.jsonl").write_text("".join(json.dumps(r) + "\n" for r in runs_))
    for name, fmt, what in (("cycle.jsonl", "braintrust", "span"), ("cycle-langsmith.jsonl", "langsmith", "run")):
        [refused] = list(read_inputs([tmp_path / name], fmt=fmt))
        assert f"no root {what}: the parents of the trace's" in str(refused.error), refused.error
        assert "form a cycle" in str(refused.error), refused.error


def test_an_experiment_row_keeps_its_project_and_its_experiment(tmp_path: Path) -> None:
    rows = [dict(json.loads(line), project_id="p-1", experiment_id="e-1") for line in
            EXPERIMENT.read_text().splitlines()]
    (tmp_path / "experiment.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    for run in runs(tmp_path / "experiment.jsonl", tenant="acme"):
        assert (run.metadata["project"], run.metadata["experiment"]) == ("p-1", "e-1")


def test_the_fetch_api_s_events_and_a_json_array_read_as_the_rows_do(tmp_path: Path) -> None:
    """The export lists each span's merged row (the feedback merged in): ``{"events": [...]}`` from
    ``project_logs/{id}/fetch``, or a JSON array of them."""
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


def test_a_refused_row_names_the_span_key_that_is_missing_or_null(tmp_path: Path) -> None:
    """The refusal listed the row's first 8 keys alphabetically, which left out the null ``root_span_id`` (and
    the present ``span_attributes``): it names what is missing or null first."""
    rows = [r for r in _rows() if "span_attributes" in r]
    rows[2]["root_span_id"] = None
    rows[1]["span_attributes"] = None
    del rows[1]["span_id"], rows[1]["id"]
    (tmp_path / "bad.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    error = " ".join(str(p.error) for p in read_inputs([tmp_path / "bad.jsonl"], fmt="braintrust") if not p.ok)
    assert "('span_attributes' is null; no 'span_id'; found " in error, error
    assert "('root_span_id' is null; found " in error, error


LLM_JUDGE = Path(__file__).parent / "fixtures" / "braintrust" / ".aud33" / "experiment-llm-judge-sdk-rows.jsonl"


def test_an_llm_judge_s_model_call_and_its_choice_are_the_scorer_s_not_the_run_s() -> None:
    """autoevals' Factuality under ``Eval`` (the SDK's rows, .aud33/README.md): the judge's ``llm`` span and its
    ``select_choice`` tool span lie under the ``score`` span; they gave the run a step and the judge's model."""
    run = only(LLM_JUDGE)
    assert run.task == "How long does shipping take?"
    assert [(s.action, s.arguments) for s in run.steps] == [("search_docs", {"query": "How long does shipping take?"})]
    assert run.model_id is None  # the task called no model; gpt-4o is the judge's
    assert run.metadata["scores"] == [{"name": "Factuality", "value": 1.0}]

"""The span, SWE-agent and ATIF adapters on fixtures written from the public specifications."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from trajsearch.ingest.adapters._spans import Evaluation, outcome_from
from trajsearch.ingest.adapters.swe_agent import outcome_for as swe_outcome
from trajsearch.ingest.outcomes import OutcomeTable
from trajsearch.ingest.read import detect_format, read_dump
from trajsearch.model import Outcome

import adapter_support

FIXTURES = Path(__file__).parent / "fixtures"
OTEL = FIXTURES / "otel-genai"
OI = FIXTURES / "openinference" / "phoenix-spans.jsonl"
SWE = FIXTURES / "swe-agent" / "default__gpt-4o" / "astropy__astropy-12907.traj"
LANGSMITH = FIXTURES / "langsmith" / "runs.jsonl"
LANGFUSE = FIXTURES / "langfuse"
ATIF = FIXTURES / "atif" / "hello-world__Ab3xQ.trajectory.json"


def runs(path: Path, **kwargs) -> dict[str, object]:
    return {run.trajectory_id: run for run in adapter_support.runs(path, tenant="acme", **kwargs)}


def test_auto_detection_of_every_format() -> None:
    assert detect_format(OTEL / "traces-0001.jsonl") == "otel-genai"
    assert detect_format(OI) == "openinference"
    assert detect_format(SWE) == "swe-agent"
    assert detect_format(LANGSMITH) == "langsmith"
    assert detect_format(LANGFUSE / "traces.json") == "langfuse"
    assert detect_format(LANGFUSE / "export-observations.jsonl") == "langfuse"
    assert detect_format(ATIF) == "atif"


def test_detection_by_content_survives_renaming_and_gzip(tmp_path: Path) -> None:
    for src, fmt in [(OI, "openinference"), (SWE, "swe-agent"), (ATIF, "atif"), (OTEL / "traces-0002.jsonl", "otel-genai")]:
        packed = tmp_path / f"dump-{fmt}.json.gz"
        packed.write_bytes(gzip.compress(src.read_bytes()))
        assert detect_format(packed) == fmt


def test_otel_genai_groups_spans_across_lines_and_files_by_trace() -> None:
    found = runs(OTEL)  # (the folder's subfolders hold real files, tested in test_adapters_spans)
    assert {"otel:4bf92f3577b34da6a3ce929d0e0e4736", "otel:0af7651916cd43dd8448eb211c80319c"} <= set(found)
    booking = found["otel:4bf92f3577b34da6a3ce929d0e0e4736"]
    assert booking.task.startswith("Book the cheapest nonstop flight from SFO to JFK")
    assert [s.action for s in booking.steps] == ["search_direct_flight", "book_reservation", "respond"]
    first, failed, answer = booking.steps
    assert first.arguments == {"origin": "SFO", "destination": "JFK", "date": "2026-02-14"}
    assert first.thought == "I'll look up nonstop flights first."  # the chat text that requested the call
    assert '"HAT023"' in first.observation
    assert failed.error == "PaymentDeclinedError: payment method credit_card_4421 not found for user mia_li_3668"
    assert answer.arguments["content"].startswith("I could not complete the booking")
    # outcome from the gen_ai.evaluation.result event, never from a clean exit
    assert (booking.outcome, booking.reward) == (Outcome.failure, 0.0)
    assert booking.failure.cause.startswith("No reservation was created")
    assert booking.model_id == "gpt-4o-2024-08-06"
    assert booking.created_at.isoformat() == "2026-01-01T10:00:00+00:00"
    assert booking.metadata["agent_name"] == "Flight booker"
    assert booking.metadata["conversation_id"] == "conv_5j66UpCpwteGg4YSxUnt7lPY"
    # older conventions: flattened gen_ai.prompt / gen_ai.completion; no evaluation -> unknown
    weather = found["otel:0af7651916cd43dd8448eb211c80319c"]
    assert weather.task == "What's the weather in Paris tomorrow? Answer in Celsius."
    assert weather.outcome is Outcome.unknown and weather.failure is None
    assert [(s.action, s.thought) for s in weather.steps] == [
        ("get_forecast", "Let me check the forecast."), ("respond", None)]


def test_openinference_tool_spans_thoughts_and_evaluation() -> None:
    found = runs(OI)
    fix = found["oi:6a5f1d0c2e8b4b7a9c3d2e1f0a9b8c7d"]
    assert fix.task.startswith("The CI job fails with ModuleNotFoundError: No module named 'yaml'")
    assert [s.action for s in fix.steps] == ["run_shell", "append_file", "run_shell"]
    assert fix.steps[0].arguments == {"cmd": "pytest -x tests"}  # input.value, not the tool.parameters schema
    assert fix.steps[0].thought.startswith("The import error suggests a missing dependency")
    assert fix.steps[0].error.startswith("CalledProcessError: Command 'pytest -x tests'")
    assert "ModuleNotFoundError" in fix.steps[0].observation
    assert fix.steps[2].observation.endswith("42 passed in 3.10s")
    assert (fix.outcome, fix.reward) == (Outcome.success, 1.0)
    assert fix.model_id == "gpt-4.1-2025-04-14"
    follow_up = found["oi:7b6e2e1d3f9c5c8b0d4e3f2a1b0c9d8e"]
    assert follow_up.outcome is Outcome.unknown
    assert [s.action for s in follow_up.steps] == ["respond"]


def test_conversation_grouping_merges_traces_of_one_session() -> None:
    [session] = runs(OI, group_by="conversation").values()
    assert session.trajectory_id == "oi:conversation:sess-ci-fix-17"
    assert [s.action for s in session.steps] == ["run_shell", "append_file", "run_shell", "respond"]
    assert session.task.startswith("The CI job fails")  # the first trace's root input


def test_swe_agent_traj_mapping() -> None:
    [run] = runs(SWE).values()
    assert run.trajectory_id == "swe-agent.default__gpt-4o.astropy__astropy-12907"
    assert run.task.startswith("Modeling's `separability_matrix` does not compute separability")
    assert (run.task_id, run.task_family) == ("astropy__astropy-12907", "astropy/astropy")
    assert run.model_id == "gpt-4o-2024-08-06"
    assert run.tool_versions == {"swe-agent": "1.1.0"}
    assert [s.action for s in run.steps] == ["find_file", "bash", "str_replace_editor", "submit"]
    assert run.steps[1].arguments == {"command": "python reproduce.py"}
    assert run.steps[1].thought == "Run the reproduction script."
    assert run.steps[1].error.startswith("ImportError: cannot import name 'separability_matrx'")
    assert run.steps[0].error is None and run.steps[2].error is None
    assert run.outcome is Outcome.success and "not evaluated" in run.metadata["outcome_basis"]


@pytest.mark.parametrize(
    ("status", "outcome"),
    [("submitted", Outcome.success), ("submitted (exit_cost)", Outcome.failure), ("exit_context", Outcome.failure),
     ("exit_format", Outcome.failure), ("exit_error", Outcome.infra_error), ("exit_environment_error", Outcome.infra_error),
     (None, Outcome.unknown)],
)
def test_swe_agent_exit_status_to_outcome(status: str | None, outcome: Outcome) -> None:
    assert swe_outcome(status) is outcome


def test_langsmith_flat_runs_and_run_trees() -> None:
    found = runs(LANGSMITH)
    failed = found["ls:1ef2c7a0-5b7e-4d2a-9a10-3c2b1a0f9e8d"]
    assert failed.task == "What was our Q3 2025 revenue growth versus Q2? Use the finance database."
    assert [s.action for s in failed.steps] == ["sql_db_query", "sql_db_schema"]
    assert failed.steps[0].thought == "I will query quarterly revenue."  # the AIMessage that asked for the call
    assert failed.steps[0].error == "sqlite3.OperationalError: no such column: quarter"
    assert failed.outcome is Outcome.failure  # the root run's error, no feedback
    assert failed.failure.error.startswith("langchain_core.exceptions.OutputParserException")
    assert failed.model_id == "gpt-4o-mini"
    assert failed.metadata["tags"] == ["prod", "finance-bot"]
    tree = found["ls:9f40ce41-ac3d-4f76-b150-3e4c5d6e7f81"]
    assert tree.task == "How many open invoices does ACME Corp have?"
    assert tree.task_id == "d5a1c3e7-0000-4000-8000-00000000a001"  # reference_example_id
    assert (tree.outcome, tree.reward) == (Outcome.success, 1.0)  # feedback_stats correctness avg 1.0
    assert tree.steps[0].observation == "[(3,)]"


def test_langfuse_api_traces_and_flat_export_rows() -> None:
    found = runs(LANGFUSE)
    refund = found["lf:lf-trace-3c9a"]
    assert refund.task == "My order #8812 arrived damaged. I want a refund to my original card."
    # the answer no generation recorded is the trace's output (p42 probeA D2: the run's last words)
    assert [s.action for s in refund.steps] == ["get_order", "issue_refund", "respond"]
    assert refund.steps[-1].arguments == {"content": "I've issued a refund of $59.90 to your original card."}
    assert refund.steps[0].thought == "Let me look up the order."
    assert refund.steps[1].error is None  # level WARNING is not an error
    assert refund.outcome is Outcome.success  # CATEGORICAL score "resolved"
    assert refund.model_id == "claude-sonnet-4-5"
    # flat rows, trace row after its observations; the timeout started in the tool's own span: the run's failure,
    # not an outage (the model provider's or the harness's)
    parcel = found["lf:lf-trace-7d21"]
    assert parcel.task == "Where is my parcel 1Z999?"
    assert [(s.action, s.error) for s in parcel.steps] == [
        ("lookup_tracking", "TimeoutError: carrier API did not answer within 30s")]
    assert parcel.outcome is Outcome.failure
    # a NUMERIC user rating is no reward and no verdict: it stays in metadata
    assert parcel.reward is None
    assert parcel.metadata["scores"] == [{"name": "user_rating", "value": 0.0, "comment": "no answer"}]


def test_atif_mapping() -> None:
    [run] = runs(ATIF).values()
    # the session id, then where the file is: files sharing a session are distinct runs
    assert run.trajectory_id == "atif.0c7b2f4e-5d1a-4a8e-9b3c-2d1e0f9a8b7c.fixtures/atif/hello-world__Ab3xQ.trajectory"
    assert run.task.startswith("Create a file called hello.txt")
    assert [s.action for s in run.steps] == ["bash", "bash", "bash", "respond"]
    assert run.steps[0].thought.startswith("The test probably compares")
    assert run.steps[1].arguments == {"command": "bash tests/test_hello.sh"}
    assert run.steps[1].error.startswith("Error: expected")
    assert run.steps[2].observation == "PASS"
    assert run.outcome is Outcome.unknown  # ATIF carries no verdict
    assert run.model_id == "claude-sonnet-4-5" and run.tool_versions == {"terminus-2": "2.0.1"}


def test_outcome_files_join_verdicts() -> None:
    report = OutcomeTable.load(FIXTURES / "outcomes" / "swebench-report.json")
    [swe] = runs(SWE, outcomes=report).values()
    assert swe.outcome is Outcome.failure and swe.metadata["outcome_basis"] == "outcomes file swebench-report.json"
    rewards = OutcomeTable.load(FIXTURES / "outcomes" / "rewards.csv")
    [atif] = runs(ATIF, outcomes=rewards).values()
    assert (atif.outcome, atif.reward) == (Outcome.success, 1.0)  # matched by the ATIF session id


def test_outcome_file_shapes(tmp_path: Path) -> None:
    jsonl = tmp_path / "o.jsonl"
    jsonl.write_text('{"run_id": "a", "resolved": false}\n{"run_id": "b", "reward": 0.5}\n')
    table = OutcomeTable.load(jsonl)
    assert table.verdicts["a"].outcome is Outcome.failure
    assert (table.verdicts["b"].outcome, table.verdicts["b"].reward) == (None, 0.5)
    mapping = tmp_path / "o.json"
    mapping.write_text(json.dumps({"x": "success", "y": {"status": "error"}}))
    assert OutcomeTable.load(mapping).verdicts["y"].outcome is Outcome.infra_error
    empty = tmp_path / "e.csv"
    empty.write_text("trajectory_id,comment\nz,nothing\n")
    with pytest.raises(ValueError, match="no run outcomes"):
        OutcomeTable.load(empty)
    # one instance's harness report, flattened without its id (real: gruckion/mini-swe-agent
    # swebench_results/20251118_gemini-3-pro-74pct/logs/django__django-11138/report.json): its keys are no run ids
    flat = tmp_path / "report.json"
    flat.write_text(json.dumps({"patch_is_None": False, "patch_exists": True, "patch_successfully_applied": True,
                                "resolved": False, "tests_status": {"FAIL_TO_PASS": {"success": [], "failure": []}}}))
    with pytest.raises(ValueError, match="without its instance id"):
        OutcomeTable.load(flat)


def test_one_runs_result_is_that_runs_verdict_not_a_table_keyed_by_its_fields() -> None:
    """Bug (real: laude-institute/terminal-bench-leaderboard, a terminal-bench 0.1.1 trial's ``results.json``): one
    run's result was read as a table keyed by its field names, verdicts for ``is_resolved``, ``total_input_tokens``
    and ``total_output_tokens`` (0 -> failure) and none for its task. It is its task's verdict now; a result with
    no verdict (``is_resolved: null``) is refused, and a folder of them passes it over."""
    real = FIXTURES / "outcomes" / ".real" / "terminal-bench-0.1.1"
    trial = OutcomeTable.load(real / "blind-maze-explorer-5x5" / "results.json")
    assert {k: (v.outcome, v.reward) for k, v in trial.verdicts.items()} == {
        "blind-maze-explorer-5x5": (Outcome.success, None)}
    with pytest.raises(ValueError, match="one record of run 'eval-mteb.hard', not a table keyed by run ids, with no"):
        OutcomeTable.load(real / "eval-mteb.hard" / "results.json")
    assert list(OutcomeTable.load(real).verdicts) == ["blind-maze-explorer-5x5"]


@pytest.mark.parametrize("table, verdicts", [
    ({"run_id": "eval-2025-01", "django__django-1": "resolved", "astropy__astropy-2": "failed"},
     {"django__django-1": Outcome.success, "astropy__astropy-2": Outcome.failure}),
    ({"id": "success", "run-b": "failure"}, {"id": Outcome.success, "run-b": Outcome.failure}),
    ({"task_id": 1, "django__django-1": 0}, {"task_id": Outcome.success, "django__django-1": Outcome.failure}),
])
def test_a_table_keyed_by_run_ids_with_an_id_named_key_is_still_a_table(table, verdicts, tmp_path: Path) -> None:
    """Bug (review): once an object with an id field of its own was one record, a table keyed by run ids that
    carries a label such as ``run_id`` or names a run ``id`` or ``task_id`` was refused as "one record ... with no
    verdict". One record also has a verdict of its own or a field that is no run's verdict; a table, as before."""
    path = tmp_path / "outcomes.json"
    path.write_text(json.dumps(table))
    assert {k: v.outcome for k, v in OutcomeTable.load(path).verdicts.items()} == verdicts


def test_a_summary_of_statistics_is_refused_as_no_verdicts(tmp_path: Path) -> None:
    """Bug (real: kkkkkk0725/swebench-reliability-study ``scored/summary.json``, resolve rates and counts over its
    runs): it was read as a table keyed by run ids, 11 "verdicts" such as ``n_tasks`` with reward 100.0. Its
    numbers are off the reward scale and nothing else in it is a verdict: it is refused, saying what it is. A
    number off the scale in a real table of verdicts is an entry not understood."""
    summary = FIXTURES / "outcomes" / ".real" / "swebench-reliability-study" / "summary.json"
    with pytest.raises(ValueError, match=r"a summary of statistics, not verdicts: its numbers are counts or rates "
                                         r"\(i0_mean_pp: 75.8, i0_std_pp: 2.32, i0_noise_floor_pp: 7.0, ...\)"):
        OutcomeTable.load(summary)
    mixed = tmp_path / "outcomes.json"
    mixed.write_text(json.dumps({"django__django-1": "resolved", "django__django-2": 0.5, "n_tasks": 100}))
    table = OutcomeTable.load(mixed)
    assert {k: (v.outcome, v.reward) for k, v in table.verdicts.items()} == {
        "django__django-1": (Outcome.success, None), "django__django-2": (None, 0.5)}
    assert table.invalid == [("n_tasks", "100 is no reward (rewards run from 0 to 1)")]


def test_a_summary_of_rates_on_the_reward_scale_is_refused_for_its_statistics_names(tmp_path: Path) -> None:
    """Regression (review of 680e45f): the refusal caught only counts and percentages; a summary whose rates lie on
    0-1, as tau-bench reports its run (average reward and pass^k; the shape of the review's repro, no real file of it
    was found), loaded as verdicts for runs ``avg_reward``, ``pass^1``, ... Its keys all name statistics: refused
    saying so, naming the keys (", ..." only when some are left out)."""
    path = tmp_path / "summary.json"
    path.write_text(json.dumps({"num_tasks": 115, "num_trials": 4, "avg_reward": 0.62, "pass^1": 0.62,
                                "pass^2": 0.51, "pass^4": 0.4}))
    with pytest.raises(ValueError, match=r"a summary of statistics, not verdicts: its keys name statistics "
                                         r"\(num_tasks, num_trials, avg_reward, ...\), not runs"):
        OutcomeTable.load(path)
    path.write_text(json.dumps({"avg_reward": 0.62, "pass@1": 0.5}))
    with pytest.raises(ValueError, match=r"its keys name statistics \(avg_reward, pass@1\), not runs;"):
        OutcomeTable.load(path)
    path.write_text(json.dumps({"airline-0": 0.62, "run_max_1": 1, "avg_reward": 0.5}))  # a run among them: a table
    assert set(OutcomeTable.load(path).verdicts) == {"airline-0", "run_max_1", "avg_reward"}


def test_a_lone_record_with_an_empty_id_names_its_run_by_another_id(tmp_path: Path) -> None:
    """Bug (review): a lone record with an empty ``trajectory_id`` gave its verdict to run "" (records of a list
    skip empty ids): it goes to the run its next id names, and a record naming none is refused."""
    path = tmp_path / "result.json"
    path.write_text(json.dumps({"trajectory_id": "", "task_id": "t-9", "resolved": True}))
    assert {k: v.outcome for k, v in OutcomeTable.load(path).verdicts.items()} == {"t-9": Outcome.success}
    path.write_text(json.dumps({"trajectory_id": "", "resolved": True, "trial_name": "t-9.1"}))
    with pytest.raises(ValueError, match="one record, not a table keyed by run ids, with no field naming its run"):
        OutcomeTable.load(path)


def test_swebench_summaries_and_folders_of_reports_are_outcome_files(tmp_path: Path) -> None:
    """Real files (gruckion/mini-swe-agent, tests/fixtures/mini-swe-agent/.real/swebench-gemini-3-pro): a summary
    keeping its records under ``instances`` beside totals, and the harness's folder of per-instance reports."""
    real = FIXTURES / "mini-swe-agent" / ".real" / "swebench-gemini-3-pro"
    summary = OutcomeTable.load(real / "results_summary.json")
    assert len(summary) == 500 and "total" not in summary.verdicts  # its totals are no run ids
    assert summary.verdicts["astropy__astropy-13033"].outcome is Outcome.failure
    assert summary.verdicts["django__django-16255"].outcome is Outcome.success
    reports = OutcomeTable.load(real / "logs")  # each report.json lacks its id: its folder's name gives it
    assert {k: v.outcome for k, v in reports.verdicts.items()} == {
        "astropy__astropy-13033": Outcome.failure, "django__django-16255": Outcome.success,
        "pylint-dev__pylint-4551": Outcome.failure}
    assert reports.source == "logs/ (3 files)"
    # a failed instance's report says what failed; a run it fails carries that as its error
    assert reports.verdicts["astropy__astropy-13033"].detail == (
        "SWE-bench evaluation: 1 of 1 tests it should fix still fail (FAIL_TO_PASS): "
        "astropy/timeseries/tests/test_sampled.py::test_required_columns; 1 of 20 tests that passed before now fail "
        "(PASS_TO_PASS): astropy/timeseries/tests/test_sampled.py::test_empty_initialization_invalid")
    assert reports.verdicts["pylint-dev__pylint-4551"].detail.endswith(", +5 more")
    [run] = runs(real / "trajs").values()
    assert run.outcome is Outcome.success and run.failure is None  # submitted; its own report: resolved
    failed = reports.apply(run.model_copy(update={"trajectory_id": "astropy__astropy-13033"}))
    assert failed.outcome is Outcome.failure
    assert failed.failure.error.startswith("SWE-bench evaluation: 1 of 1 tests it should fix still fail")
    assert failed.failure.cause == "outcomes file logs/ (3 files)"
    assert len(OutcomeTable.load(real)) == 500  # the whole run folder: the runs themselves are passed over
    with pytest.raises(ValueError, match="no outcome file in this directory"):
        OutcomeTable.load(real / "trajs")


def test_reports_that_disagree_give_each_run_the_one_in_its_own_folder() -> None:
    """Bug (real: christsakm/Trajectories, two models' SWE-agent runs of getmoto__moto-4799, each with its harness
    report in its run's folder): a folder of reports kept the last one read per instance, so the resolved gpt-5 run
    was failed with the kimi-k2 run's failing tests as its error, and nothing said so."""
    table = OutcomeTable.load(FIXTURES / "outcomes" / ".real" / "christsakm-moto-4799")
    [run] = runs(SWE).values()  # a real SWE-agent run, keyed as each model's run of that instance is
    def of(run_dir: str, model: str):
        return run.model_copy(update={"trajectory_id": f"swe-agent.{run_dir}.getmoto__moto-4799",
                                      "task_id": "getmoto__moto-4799", "model_id": model,
                                      "metadata": {**run.metadata, "run_dir": run_dir}})
    gpt5 = table.apply(of("trace_01_gpt-5-2025-08-07", "gpt-5-2025-08-07"))
    kimi = table.apply(of("trace_02_kimi-k2-instruct-0905", "fireworks_ai/kimi-k2-instruct-0905"))
    assert (gpt5.outcome, gpt5.failure) == (Outcome.success, None)
    assert kimi.outcome is Outcome.failure and "6 of 19 tests that passed before now fail" in kimi.failure.error
    elsewhere = of("trace_09_other", "other-model")
    assert table.apply(elsewhere) is elsewhere  # named by neither report's folder: left as it was
    assert table.counts() | {"file": None} == {"file": None, "verdicts": 0, "runs": 3, "matched": 2,
                                               "outcomes": {"failure": 1, "success": 1}, "conflicting": 1, "ambiguous": 1}


def test_older_swebench_reports_fail_the_runs_they_do_not_list_as_resolved(tmp_path: Path) -> None:
    """Bug (real: AutoCodeRover's reproduction of SWE-agent on SWE-bench Lite, its run's ``final_report.json``):
    the first harness's report lists only the resolved instances (``{"stats", "resolved": [ids]}``; the
    leaderboard's ``results.json`` adds ``no_generation`` and ``no_logs``) and was "no run outcomes found"."""
    real = FIXTURES / "swe-agent" / ".real" / "acr-swe-agent-gpt4-lite"
    report = OutcomeTable.load(real / "final_report.json")
    assert len(report) == 28 and report.verdicts["pytest-dev__pytest-5227"].outcome is Outcome.success
    joined = {r.task_id: r for r in runs(real, outcomes=report).values()}
    assert {task: r.outcome for task, r in joined.items()} == {"django__django-11283": Outcome.failure,
        "pytest-dev__pytest-5227": Outcome.success, "pylint-dev__pylint-7114": Outcome.failure}
    assert joined["pylint-dev__pylint-7114"].failure.error == (
        "SWE-bench evaluation: not resolved (not among the report's resolved instances)")
    assert report.counts() == {"file": "final_report.json", "verdicts": 28, "runs": 3, "matched": 3,
                              "outcomes": {"failure": 2, "success": 1}, "unlisted": 2}
    other = next(iter(runs(ATIF).values()))  # not a SWE-bench instance: not this report's to judge
    assert report.apply(other).outcome is other.outcome and report.counts()["unlisted"] == 2

    leaderboard = tmp_path / "results.json"
    leaderboard.write_text(json.dumps({"no_generation": ["pylint-dev__pylint-7114"], "no_logs": ["x__y-1"],
                                       "resolved": []}))
    table = OutcomeTable.load(leaderboard)  # nothing resolved is still a report
    assert table.verdicts["pylint-dev__pylint-7114"].detail == "SWE-bench evaluation: no patch was generated"
    assert table.verdicts["x__y-1"].outcome is Outcome.infra_error
    assert {r.task_id: r.outcome for r in runs(real, outcomes=table).values()} == {"django__django-11283": Outcome.failure,
        "pytest-dev__pytest-5227": Outcome.failure, "pylint-dev__pylint-7114": Outcome.failure}


def test_older_reports_of_two_models_in_one_folder_judge_each_models_runs(tmp_path: Path) -> None:
    """Bug (review): a folder of older reports, one per model (the leaderboard's ``<model>/results/results.json``),
    gave one model's "resolved" to every model's run of the instance: what a report leaves out was no verdict of its."""
    real = FIXTURES / "swe-agent" / ".real" / "acr-swe-agent-gpt4-lite" / "final_report.json"  # resolves pytest-5227
    (tmp_path / "gpt4").mkdir()
    (tmp_path / "gpt4" / "final_report.json").write_bytes(real.read_bytes())
    (tmp_path / "claude3opus" / "results").mkdir(parents=True)
    (tmp_path / "claude3opus" / "results" / "results.json").write_text('{"resolved": [], "no_generation": []}')
    table = OutcomeTable.load(tmp_path)
    [run] = runs(FIXTURES / "swe-agent" / ".real" / "acr-swe-agent-gpt4-lite" / "pytest-dev__pytest-5227.traj").values()
    def of(model: str):
        return table.apply(run.model_copy(update={"trajectory_id": f"swe-agent.{model}.pytest-dev__pytest-5227",
                                                  "metadata": {**run.metadata, "run_dir": model}}))
    assert (of("gpt4").outcome, of("claude3opus").outcome) == (Outcome.success, Outcome.failure)
    assert table.counts()["conflicting"] == 28  # every instance the one resolved and the other left out


def test_multi_swe_bench_reports_read_every_list_and_each_submission_keeps_its_own() -> None:
    """Bug (real: multi-swe-bench/experiments, three SWE-agent submissions' ``results/results.json`` and gpt-4o's run of
    jackson-core-1309): the harness names its resolved list ``resolved`` beside ``unresolved_ids``; it was never read,
    so a resolved run that ran out of budget stayed failed, a report resolving one instance was refused, and in the
    folder of reports one model's ``unresolved_ids`` failed every model's run of that instance."""
    real = FIXTURES / "outcomes" / ".real" / "mswe-java-verified"
    gpt4o = real / "20240825_SWE-agent_gpt-4o-2024-05-13"
    report = OutcomeTable.load(gpt4o / "results" / "results.json")
    assert report.verdicts["apache__dubbo-11781"].detail == "SWE-bench evaluation: no patch was submitted"
    [run] = runs(gpt4o / "trajs", outcomes=report).values()  # exit_status "submitted (exit_cost)"; the report: resolved
    assert (run.outcome, run.failure) == (Outcome.success, None)
    mini = OutcomeTable.load(real / "20240825_SWE-agent_gpt-4o-mini-2024-07-18" / "results" / "results.json")
    assert mini.verdicts["fasterxml__jackson-databind-3701"].outcome is Outcome.success  # its one resolved instance
    unevaluated = run.model_copy(update={"task_id": "fasterxml__jackson-core-1133"})  # in its incomplete_ids
    assert mini.apply(unevaluated) is unevaluated
    folder = OutcomeTable.load(real)
    def of(model: str, instance: str):
        return folder.apply(run.model_copy(update={"trajectory_id": f"swe-agent.20240825_SWE-agent_{model}.{instance}",
                                                   "task_id": instance}))
    assert of("gpt-4o-2024-05-13", "fasterxml__jackson-core-1309").outcome is Outcome.success
    assert of("deepseek-coder-v2", "fasterxml__jackson-core-1133").outcome is Outcome.success  # gpt-4o's: unresolved
    assert of("gpt-4o-2024-05-13", "fasterxml__jackson-core-1133").outcome is Outcome.failure
    assert of("gpt-4o-mini-2024-07-18", "apache__dubbo-10638").outcome is run.outcome  # not evaluated: its own


def test_swe_smith_run_reports_give_verdicts_by_id_and_its_reports_are_side_files() -> None:
    """Bug (real: SWE-bench/SWE-smith ``tests/test_logs/run_evaluation/report.json`` and ``run_validation/report.json``):
    the run report's counts (``resolved: 3, unresolved: 50, total: 53``) became three runs with rewards > 1 and its
    ``ids_resolved``/``ids_unresolved`` were never read; in a folder walk both reports were rejected as
    "unrecognised dump format"."""
    real = FIXTURES / "outcomes" / ".real" / "swesmith"
    report = OutcomeTable.load(real / "run_evaluation" / "report.json")
    assert len(report) == 53 and not {"resolved", "unresolved", "total"} & report.verdicts.keys()
    assert report.verdicts["pandas-dev__pandas.95280573.pr_53652"].outcome is Outcome.success
    [run] = runs(SWE).values()  # a real SWE-agent run, keyed as SWE-smith's run of an instance it did not resolve
    failed = report.apply(run.model_copy(update={"task_id": "pandas-dev__pandas.95280573.pr_53856"}))
    assert failed.outcome is Outcome.failure
    assert list(read_dump(real)) == []  # the report and the validation report hold no run: passed over


def test_a_swe_agent_edit_its_linter_refused_has_the_linters_findings_as_its_error() -> None:
    """Bug (real: AutoCodeRover's SWE-agent run of django__django-11283): an edit refused for ``F821 undefined name``
    had SWE-agent's footer "DO NOT re-run the same failed edit command..." as its error."""
    [run] = runs(FIXTURES / "swe-agent" / ".real" / "acr-swe-agent-gpt4-lite" / "django__django-11283.traj").values()
    assert [s.error for s in run.steps[2:4]] == [
        "F821 undefined name 'new_content_type'", "F821 undefined name 'old_content_type'"]


def test_a_swe_agent_run_submitting_nothing_failed() -> None:
    """Bug (real: AutoCodeRover's SWE-agent run of django__django-11283, ``exit_status: submitted`` with
    ``submission: null``): it was a success, shown to agents as a submitted run."""
    [run] = runs(FIXTURES / "swe-agent" / ".real" / "acr-swe-agent-gpt4-lite" / "django__django-11283.traj").values()
    assert run.outcome is Outcome.failure
    assert run.failure.error == "submitted: an empty submission (nothing handed in)"


def test_a_swe_smith_instance_is_of_its_repositorys_family() -> None:
    """Bug (real: SWE-bench/SWE-smith's SWE-agent run of ``pandas-dev__pandas.95280573.pr_53652``): a SWE-smith id
    (``<owner>__<repo>.<commit>.<how the bug was made>``) gave the family ``pandas-dev/pandas.95280573.pr_53652``,
    one per run, not the repository."""
    [run] = runs(FIXTURES / "swe-agent" / ".real" / "swesmith").values()
    assert (run.task_id, run.task_family) == ("pandas-dev__pandas.95280573.pr_53652", "pandas-dev/pandas")


def test_evaluation_labels_decide_only_when_explicit() -> None:
    assert outcome_from([Evaluation("task_success", "pass")])[0] is Outcome.success
    assert outcome_from([Evaluation("task_success", "pass"), Evaluation("safety", "fail")])[0] is Outcome.failure
    assert outcome_from([Evaluation("hallucination", None, 1.0)])[:2] == (Outcome.unknown, 1.0)
    assert outcome_from([Evaluation("correctness", None, 0.0)])[0] is Outcome.failure
    assert outcome_from([Evaluation("relevance", "relevant")])[0] is Outcome.unknown
    assert outcome_from([])[0] is Outcome.unknown


def test_span_without_ids_is_a_clear_rejection_and_the_rest_lands(tmp_path: Path) -> None:
    dump = tmp_path / "spans.jsonl"
    lines = OI.read_text().splitlines()
    broken = json.loads(lines[1])
    del broken["context"]
    dump.write_text("\n".join([lines[0], json.dumps(broken), "{not json", *lines[2:]]) + "\n")
    results = list(read_dump(dump, tenant="acme"))
    errors = [(r.position, r.error) for r in results if not r.ok]
    assert errors == [("line 2", "not a span: expected 'resourceSpans' or a span with 'name', ids and 'attributes'"),
                      ("line 3", "malformed JSON: Expecting property name enclosed in double quotes (column 2)")]
    assert {r.trajectory.trajectory_id for r in results if r.ok} == {
        "oi:6a5f1d0c2e8b4b7a9c3d2e1f0a9b8c7d", "oi:7b6e2e1d3f9c5c8b0d4e3f2a1b0c9d8e"}


def test_swe_agent_record_without_a_task_is_rejected_with_the_reason(tmp_path: Path) -> None:
    record = json.loads(SWE.read_text())
    record.pop("replay_config")
    record["history"] = [m for m in record["history"] if m.get("role") != "user"]
    broken = tmp_path / "no-task.traj"
    broken.write_text(json.dumps(record))
    [result] = list(read_dump(broken, tenant="acme", fmt="swe-agent"))
    assert not result.ok and "no task" in result.error


def test_a_reward_past_floats_range_is_no_verdict_not_a_crash(tmp_path: Path) -> None:
    """A 400-digit integer as a reward gives no verdict for that run; the file still loads."""
    path = tmp_path / "outcomes.json"
    path.write_text('{"run-a": {"reward": ' + "9" * 400 + '}, "run-b": {"reward": 1}, "run-c": 1' + "0" * 400 + "}")
    table = OutcomeTable.load(path)
    assert table.verdicts["run-b"].outcome is Outcome.success and not {"run-a", "run-c"} & set(table.verdicts)


@pytest.mark.parametrize("table", [
    {"count-words": "success", "max-subarray-sum": "failure", "min-stack": "success"},
    {"n-queens": "resolved", "word-count": "failed"},
    {"count-dataset-tokens": 0, "max-subarray-sum": 1},
])
def test_verdicts_for_tasks_named_with_statistics_words_are_a_table(table, tmp_path: Path) -> None:
    """Regression (review 4, F6): an outcome file over tasks whose ids hold a statistic's word (``count-words``,
    ``n-queens``, terminal-bench's ``count-dataset-tokens``) was refused as "a summary of statistics ... its keys
    name statistics", though its values are verdicts. Verdicts (or 0/1 rewards) make it a table whatever its keys."""
    path = tmp_path / "outcomes.json"
    path.write_text(json.dumps(table))
    assert set(OutcomeTable.load(path).verdicts) == set(table)

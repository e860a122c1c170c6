"""Benchmark result files as their harnesses leave them after evaluation (probe 47, area B).

Each test reads a real file, or one built from a real file exactly as the harness's own script rewrites it (named
in the test and in the fixture folder's SOURCE.md), through the public reader.
"""

from __future__ import annotations

import json
from pathlib import Path

from trajsearch.ingest.outcomes import OutcomeTable
from trajsearch.ingest.read import read_dump
from trajsearch.model import Outcome

from adapter_support import only

OPENHANDS = Path(__file__).parent / "fixtures/openhands/.real"
#: A real OpenHands (V0) Multi-SWE-bench output line: the agent hit its iteration limit with a patch in hand.
MULTI_SWE_LINE = OPENHANDS / "multi_swe_bench/output.jsonl"


def _evaluated(tmp_path: Path, line: Path, **status: bool) -> Path:
    """``line`` after OpenHands' ``scripts/eval/update_output_with_eval.py`` (run by ``eval_infer.sh`` once the
    SWE-bench harness has judged the file): every line gets a top-level ``report``, the defaults of its
    ``instance_id_to_status`` with the harness's findings set, written back with ``json.dumps``."""
    data = json.loads(line.read_text().splitlines()[0])
    data["report"] = {"empty_generation": False, "resolved": False, "failed_apply_patch": False,
                      "error_eval": False, "test_timeout": False, **status}
    out = tmp_path / "output.jsonl"
    out.write_text(json.dumps(data) + "\n")
    return out


def test_openhands_output_line_judged_by_the_harness_report_update_output_with_eval_writes(tmp_path: Path) -> None:
    """Bug: the verdict OpenHands' evaluation writes into output.jsonl is a top-level ``report`` (both the
    SWE-bench and Multi-SWE-bench ``update_output_with_eval.py``); only ``test_result.report`` was read, so a
    resolved run that had hit its iteration limit was a failure, its error the limit."""
    run = only(_evaluated(tmp_path, MULTI_SWE_LINE, resolved=True))
    assert (run.outcome, run.failure) == (Outcome.success, None)


def test_openhands_output_line_not_resolved_says_why_from_the_report(tmp_path: Path) -> None:
    """The report's flags say why a run was not resolved (its patch failed to apply), not 'the tests failed'."""
    run = only(_evaluated(tmp_path, MULTI_SWE_LINE, failed_apply_patch=True, error_eval=True))
    assert run.outcome is Outcome.failure
    assert run.failure.error == "not resolved: the patch did not apply"


def _iterative_run_set(folder: Path) -> None:
    """An OpenHands evaluation run in iterative mode (``ITERATIVE_EVAL_MODE``, ``swe_bench/run_infer.py``), built
    from the real line as the runner writes it: attempt 1 is that line (its critic fails it: the agent never
    finished), attempt 2 a retry of the instance (``metadata.llm_config.temperature`` raised to 0.1 as the runner
    does; its events, here the real run's first 60 moved 42 minutes on, are another run), each in
    ``output.critic_attempt_<N>.jsonl``; ``output.jsonl`` the aggregate, attempt 2's line copied whole, then
    judged resolved by ``update_output_with_eval.py``. Every line carries the run set's one ``metadata``."""
    from datetime import datetime, timedelta

    first = MULTI_SWE_LINE.read_text().splitlines()[0]
    retry = json.loads(first)
    retry["metadata"]["llm_config"]["temperature"] = 0.1
    retry["error"], retry["history"] = None, retry["history"][:60]
    for event in retry["history"]:
        event["timestamp"] = (datetime.fromisoformat(event["timestamp"]) + timedelta(minutes=42)).isoformat()
    folder.mkdir()
    (folder / "output.critic_attempt_1.jsonl").write_text(first + "\n")
    (folder / "output.critic_attempt_2.jsonl").write_text(json.dumps(retry) + "\n")
    (folder / "output.jsonl").write_text(json.dumps(retry) + "\n")
    _evaluated(folder, folder / "output.jsonl", resolved=True)


def test_openhands_iterative_attempts_are_one_run_each_the_aggregate_copy_read_as_its_line(tmp_path: Path) -> None:
    """Bug: every line of an iterative run set carries the same settings, so all attempts of an instance had one
    id (the second kept as '<id>+<hash>' in a walk, or replacing the first in a later ingest), and the aggregate's
    copy of the chosen attempt, judged in output.jsonl but not in its attempt file, was stored twice: once
    resolved, once 'unknown'."""
    _iterative_run_set(tmp_path / "eval")
    read = {Path(r.source).name: r.trajectory for r in read_dump(tmp_path / "eval")}
    tried, chosen = (read[f"output.critic_attempt_{n}.jsonl"] for n in (1, 2))
    aggregate = read["output.jsonl"]
    base = tried.trajectory_id  # attempt 1 keeps the run id, a retry is <id>.attempt_<N> (see FRB's D2 below)
    assert chosen.model_dump() == aggregate.model_dump()  # one run, stored once
    assert (aggregate.outcome, aggregate.trajectory_id) == (Outcome.success, f"{base}.attempt_2")
    assert (tried.metadata["handed_in"], tried.metadata["critic_attempt"]) == (False, 1)
    assert tried.outcome is Outcome.failure and tried.failure.error.startswith("RuntimeError: Agent reached maximum")


def test_openhands_attempt_not_handed_in_is_not_judged_by_its_instance_report(tmp_path: Path) -> None:
    """The harness's report judges the aggregate's run of an instance, not the attempt its critic failed."""
    _iterative_run_set(tmp_path / "eval")
    report = tmp_path / "report.json"  # the SWE-bench harness's final report, as eval_infer.sh leaves it
    report.write_text(json.dumps({"resolved_ids": ["ponylang__ponyc-4588"], "unresolved_ids": [],
                                  "error_ids": [], "empty_patch_ids": [], "incomplete_ids": []}))
    table = OutcomeTable.load(report)
    outcomes = {r.trajectory.trajectory_id: r.trajectory.outcome for r in read_dump(tmp_path / "eval", outcomes=table)}
    [tried] = [i for i in outcomes if not i.endswith(".attempt_2")]  # attempt 1 keeps the run id
    assert (outcomes.pop(tried), set(outcomes.values())) == (Outcome.failure, {Outcome.success})


def test_openhands_evaluation_of_an_output_file_is_passed_over_not_rejected(tmp_path: Path) -> None:
    """Bug: OpenHands' own SWE-bench evaluator (``eval_infer.py``, remote runtime) writes its verdicts beside the
    runs as ``output.swebench_eval.jsonl``: per instance an ``EvalOutput`` with the patch, ``test_result.report``
    and no ``history`` (null). A walk of the evaluated folder rejected it, 'no OpenHands event', exit 3; it is
    the evaluation of the runs beside it (update_output_with_eval.py writes its verdicts into them)."""
    run = json.loads(MULTI_SWE_LINE.read_text().splitlines()[0])
    folder = tmp_path / "eval"
    folder.mkdir()
    (folder / "output.jsonl").write_text(json.dumps(run) + "\n")
    report = {"empty_generation": False, "resolved": True, "failed_apply_patch": False, "error_eval": False,
              "test_timeout": False}
    verdict = {"instance_id": run["instance_id"], "test_result": {"git_patch": run["test_result"]["git_patch"],
                                                                  "report": report,
                                                                  "apply_patch_output": "APPLY_PATCH_PASS"},
               "instruction": None, "metadata": run["metadata"], "history": None, "metrics": None, "error": None,
               "instance": None}  # EvalOutput(instance_id, test_result, metadata).model_dump_json()
    (folder / "output.swebench_eval.jsonl").write_text(json.dumps(verdict, separators=(",", ":")) + "\n")
    results = list(read_dump(folder))
    assert [(Path(r.source).name, r.ok) for r in results] == [("output.jsonl", True)]


def test_openhands_benchmarks_cost_report_is_passed_over_not_rejected(tmp_path: Path) -> None:
    """Bug: every OpenHands/benchmarks ``eval_infer`` (SWE-bench, GAIA, commit0, ...) ends with
    ``generate_cost_report``, which writes ``cost_report.jsonl`` beside ``output.jsonl`` (one pretty-printed JSON
    document: the cost and time of the output and of each critic attempt file); a walk of the run set rejected it,
    'unrecognised dump format', exit 3."""
    run = json.loads(MULTI_SWE_LINE.read_text().splitlines()[0])
    folder = tmp_path / "eval"
    folder.mkdir()
    (folder / "output.jsonl").write_text(json.dumps(run) + "\n")
    times = {"average_duration": 512.3, "total_duration": 512.3, "total_lines": 1, "lines_with_duration": 1}
    report = {  # benchmarks/utils/report_costs.py calculate_costs: report_data, json.dump(..., indent=2)
        "directory": str(folder), "timestamp": "2026-06-25T10:12:44.120391",
        "main_output": {"filename": "output.jsonl", "lines": 1, "cost": 0.0, "time_statistics": times},
        "critic_files": [{"filename": "output.critic_attempt_1.jsonl", "lines": 1, "cost": 0.0,
                          "time_statistics": times}],
        "summary": {"total_cost": 0.0, "total_duration": 512.3, "only_main_output_cost": 0.0,
                    "sum_critic_files": 0.0},
        "proxy_cost_summary": {"total_proxy_cost": 0.0, "zero_proxy_cost_instances": 1,
                               "only_main_output_proxy_cost": 0.0, "sum_critic_files_proxy_cost": 0.0},
    }
    (folder / "cost_report.jsonl").write_text(json.dumps(report, indent=2))
    results = list(read_dump(folder))
    assert [(Path(r.source).name, r.ok) for r in results] == [("output.jsonl", True)]


def test_openhands_llm_completion_logs_of_an_evaluation_are_passed_over_not_rejected(tmp_path: Path) -> None:
    """Bug: OpenHands' SWE-bench and Multi-SWE-bench runners turn ``log_completions`` on (the real line's
    ``llm_config`` says so), and its LLM then writes every call to
    ``<eval_output_dir>/llm_completions/<instance_id>/<model>-<time.time()>.json`` (``openhands/llm/llm.py``:
    ``{messages, response, args, kwargs, timestamp, cost}``), dozens per instance; a walk of the run set rejected
    each, 'unrecognised dump format'."""
    run = json.loads(MULTI_SWE_LINE.read_text().splitlines()[0])
    assert run["metadata"]["llm_config"]["log_completions"] is True
    folder = tmp_path / "eval"
    logs = folder / "llm_completions" / run["instance_id"]
    logs.mkdir(parents=True)
    (folder / "output.jsonl").write_text(json.dumps(run) + "\n")
    task = next(e["message"] for e in run["history"] if e.get("action") == "message" and e.get("source") == "user")
    response = {"id": "gen-1746035803-abc", "created": 1746035803, "model": "meta-llama/llama-4-maverick",
                "object": "chat.completion", "system_fingerprint": None,
                "choices": [{"finish_reason": "tool_calls", "index": 0, "message": {
                    "content": "Let me explore the repository.", "role": "assistant", "function_call": None,
                    "tool_calls": [{"index": 1, "id": "call_1", "type": "function", "function": {
                        "name": "execute_bash", "arguments": "{\"command\": \"ls /workspace\"}"}}]}}],
                "usage": {"completion_tokens": 117, "prompt_tokens": 5282, "total_tokens": 5399}}
    log = {"messages": [{"role": "system", "content": [{"type": "text", "text": "You are OpenHands agent."}]},
                        {"role": "user", "content": [{"type": "text", "text": task}]}],
           "response": response, "args": [], "kwargs": {"tools": [], "extra_headers": {}},
           "timestamp": 1746035803.2076, "cost": 0.0}
    (logs / "openai__openrouter-llama-4-maverick-1746035803.2076418.json").write_text(json.dumps(log))
    results = list(read_dump(folder))
    assert [(Path(r.source).name, r.ok) for r in results] == [("output.jsonl", True)]


def test_multi_swe_bench_predictions_beside_the_runs_are_passed_over_not_rejected(tmp_path: Path) -> None:
    """Bug: Multi-SWE-bench's predictions (``{org, repo, number, fix_patch}`` per instance, the harness's
    ``patch_files``; OpenHands writes them as ``output_converted.jsonl`` beside ``output.jsonl`` to evaluate it) were
    rejected in a walk, 'unrecognised dump format', where SWE-bench's predictions are passed over."""
    folder = tmp_path / "eval"
    folder.mkdir()
    (folder / "output.jsonl").write_text(MULTI_SWE_LINE.read_text())
    (folder / "output_converted.jsonl").write_text((OPENHANDS / "mswe-eval/output_converted.jsonl").read_text())
    results = list(read_dump(folder))
    assert [(Path(r.source).name, r.ok) for r in results] == [("output.jsonl", True)]


TAU2 = Path(__file__).parent / "fixtures/tau2-bench/.real"


def test_tau2_simulation_artifacts_beside_the_results_are_passed_over_not_rejected(tmp_path: Path) -> None:
    """Bug: with ``--verbose-logs`` (and in voice runs) tau2 keeps each simulation's artifacts beside the run's
    ``results.json``, ``artifacts/task_<id>/sim_<id>/`` (``runner/batch.py``): ``sim_status.json``
    (``{"status": "used"}``) and one ``llm_debug/<time>_<call>_<id>.json`` per LLM call (``llm_utils
    ._write_llm_log``); a walk of the run rejected every one, 'unrecognised dump format'."""
    run = tmp_path / "run"
    run.mkdir()
    (run / "results.json").write_text((TAU2 / "airline_run1.json").read_text())
    sim = json.loads((run / "results.json").read_text())["simulations"][0]
    folder = run / "artifacts" / f"task_{sim['task_id']}" / f"sim_{sim['id']}"
    (folder / "llm_debug").mkdir(parents=True)
    (folder / "sim_status.json").write_text(json.dumps({"status": "used"}, indent=2))
    said = next(m for m in sim["messages"] if m["role"] == "assistant" and m.get("content"))
    call = {"call_id": "1a2b3c4d", "call_name": "generate_agent_message", "timestamp": said["timestamp"],
            "request": {"model": "whissle", "messages": [{"role": "user", "content": sim["messages"][0]["content"]}],
                        "tools": None, "tool_choice": None, "kwargs": {}, "timestamp": said["timestamp"]},
            "response": {"timestamp": said["timestamp"], "content": said["content"], "tool_calls": None,
                         "cost": 0.0, "usage": None, "generation_time_seconds": 1.0}}
    (folder / "llm_debug" / "20250801_101500_123_generate_agent_message_1a2b3c4d.json").write_text(
        json.dumps(call, indent=2))
    (folder / "task.log").write_text("2025-08-01 10:15:00.123 | DEBUG    | tau2.orchestrator:run:1 - start\n")
    results = list(read_dump(run))
    assert {Path(r.source).name for r in results} == {"results.json"} and all(r.ok for r in results)


def test_openhands_retry_the_aggregate_passed_over_is_a_failure_not_handed_in(tmp_path: Path) -> None:
    """A retry whose patch came out empty is not what the aggregate hands in (V0 takes the latest attempt with a
    patch: here attempt 1); its own events say nothing of an outcome, so it is the failure its critic found."""
    _iterative_run_set(tmp_path / "eval")
    folder = tmp_path / "eval"
    retry = json.loads((folder / "output.critic_attempt_2.jsonl").read_text())
    retry["test_result"]["git_patch"] = ""
    (folder / "output.critic_attempt_2.jsonl").write_text(json.dumps(retry) + "\n")
    (folder / "output.jsonl").write_text((folder / "output.critic_attempt_1.jsonl").read_text())
    _evaluated(folder, folder / "output.jsonl", resolved=False)
    read = {Path(r.source).name: r.trajectory for r in read_dump(folder)}
    chosen, tried = read["output.critic_attempt_1.jsonl"], read["output.critic_attempt_2.jsonl"]
    assert chosen.model_dump() == read["output.jsonl"].model_dump()
    assert tried.trajectory_id == f"{chosen.trajectory_id}.attempt_2"
    assert (tried.outcome, tried.metadata["handed_in"]) == (Outcome.failure, False)
    assert tried.failure.error.startswith("not handed in: the aggregate hands in the earlier attempt 1")


def test_tau2_simulations_discarded_for_a_hallucinating_user_are_passed_over(tmp_path: Path) -> None:
    """Bug: a full-duplex tau2 run with ``hallucination_retries`` saves each simulation it throws away (its user
    simulator hallucinated) in ``hallucination_discarded/results_user_hallucination.json``, a results file, and
    runs the task again; a walk read those as runs of their own, the agent's failures beside the retries that
    replaced them."""
    run = tmp_path / "run"
    (run / "hallucination_discarded").mkdir(parents=True)
    document = json.loads((TAU2 / "airline_run1.json").read_text())
    (run / "results.json").write_text(json.dumps({**document, "simulations": document["simulations"][1:]}))
    first = document["simulations"][0]  # runner/batch.py: Results(info=..., tasks=[task], simulations=[result])
    tasks = [t for t in document["tasks"] if str(t["id"]) == str(first["task_id"])]
    discarded = {**document, "tasks": tasks, "simulations": [first]}
    (run / "hallucination_discarded" / "results_user_hallucination.json").write_text(json.dumps(discarded, indent=2))
    results = list(read_dump(run))
    assert {Path(r.source).name for r in results} == {"results.json"}
    assert len(results) == len(document["simulations"]) - 1


OAS_LINES = OPENHANDS / "sdk/openagentsafety-output.jsonl"


def test_openhands_gaia_line_is_judged_by_gaias_score(tmp_path: Path) -> None:
    """Bug: OpenHands' GAIA runner (V0 ``evaluation/benchmarks/gaia/run_infer.py`` and OpenHands/benchmarks
    ``benchmarks/gaia/run_infer.py``) writes GAIA's verdict on the agent's answer as ``test_result.score``
    (``question_scorer``: a bool) beside the answer and the ground truth; only ``test_result.result`` was read,
    so every GAIA run, right or wrong, was 'unknown'. Built from a real OpenHands/benchmarks output line (SDK
    events), its ``test_result`` the one GAIA's runner writes."""
    line = json.loads(OAS_LINES.read_text().splitlines()[0])
    for score in (True, False):
        line["test_result"] = {"score": score, "model_answer_raw": "<solution>17</solution>", "model_answer": "17",
                               "ground_truth": "17" if score else "19"}
        (tmp_path / "output.jsonl").write_text(json.dumps(line) + "\n")
        run = only(tmp_path / "output.jsonl")
        assert run.outcome is (Outcome.success if score else Outcome.failure)
    assert run.failure.error == "not solved: the benchmark's check of the answer failed (test_result.score false)"


def test_openhands_browsing_benchmark_line_is_judged_by_its_reward(tmp_path: Path) -> None:
    """Bug: OpenHands' WebArena, VisualWebArena and MiniWoB runners write the environment's reward for the run as
    ``test_result.reward`` (``{'reward': reward}``, nothing else); it was not read, so such a run was judged by its
    events alone (here: the iteration limit it hit, a failure, whatever the reward). Built from the real V0 line,
    its ``test_result`` as those runners write it."""
    line = json.loads(MULTI_SWE_LINE.read_text().splitlines()[0])
    for reward, outcome in ((1.0, Outcome.success), (0.0, Outcome.failure)):
        line["test_result"] = {"reward": reward}
        (tmp_path / "output.jsonl").write_text(json.dumps(line) + "\n")
        run = only(tmp_path / "output.jsonl")
        assert (run.outcome, run.reward) == (outcome, reward)
    assert run.failure.error == "not solved: the benchmark's reward 0 (test_result.reward)"


MINI_RUN = Path(__file__).parent / "fixtures/mini-swe-agent/deepseek_chat_dev/marshmallow-code__marshmallow-1343"
PRO = Path(__file__).parent / "fixtures/outcomes/.real/swebench-pro"


def test_swebench_pro_predictions_and_harness_outputs_beside_the_runs_are_passed_over(tmp_path: Path) -> None:
    """Bug: SWE-bench Pro's files beside the runs were each rejected in a walk, 'unrecognised dump format': the
    predictions its harness takes (``patches.json``, ``[{instance_id, patch, prefix}]``: OpenHands/benchmarks writes
    them as ``output.swebenchpro.json``), and what ``swe_bench_pro_eval.py`` writes, ``eval_results.json``
    (``{instance_id: passed}``, ``json.dump``) and each instance's ``<prefix>_output.json`` (its parser's
    ``{"tests": [{"name", "status"}]}``). None is a run; the verdicts are read with --outcomes."""
    folder = tmp_path / "run"
    (folder / "trajs").mkdir(parents=True)
    for traj in MINI_RUN.iterdir():
        (folder / "trajs" / traj.name).write_bytes(traj.read_bytes())
    (folder / "patches.json").write_text((PRO / "patches.json").read_text())
    instance = json.loads((PRO / "patches.json").read_text())[1]["instance_id"]
    evaluation = folder / "eval"
    (evaluation / instance).mkdir(parents=True)
    (evaluation / "eval_results.json").write_text(json.dumps({instance: True}))
    tests = {"tests": [{"name": "test/units/utils/test_display.py::test_Display_display_fork", "status": "PASSED"}]}
    (evaluation / instance / "claude-opus-4-8_s000_output.json").write_text(json.dumps(tests))
    results = list(read_dump(folder))
    assert [(Path(r.source).parent.name, r.ok) for r in results] == [("trajs", True)]
    assert OutcomeTable.load(evaluation / "eval_results.json").verdicts[instance].outcome is Outcome.success


def test_swebench_pro_instance_is_grouped_by_its_repository(tmp_path: Path) -> None:
    """Bug: a SWE-bench Pro instance id (``instance_<owner>__<repo>-<commit>-v<hash>``, the real ids of
    ``patches.json``) was cut as a SWE-bench one, so each run's task family was its own id
    ('instance_ansible/ansible-a7d2a4e...-v0f01c69...'), never its repository: no two runs of one repository
    grouped. Read here through an OpenHands/benchmarks output line (the real V0 line given that instance)."""
    line = json.loads(MULTI_SWE_LINE.read_text().splitlines()[0])
    for entry in json.loads((PRO / "patches.json").read_text()):
        line["instance_id"] = entry["instance_id"]
        (tmp_path / "output.jsonl").write_text(json.dumps(line) + "\n")
        run = only(tmp_path / "output.jsonl")
        assert run.task_family == {"instance_NodeBB": "NodeBB/NodeBB",
                                   "instance_ansible": "ansible/ansible"}[entry["instance_id"].split("__")[0]]


# Review of this round's OpenHands evaluation fixes (FRB: RB's findings D1 to D6).


def test_openhands_benchmarks_cost_report_before_its_proxy_costs_is_passed_over(tmp_path: Path) -> None:
    """Bug: the cost report was told by ``proxy_cost_summary``, which ``report_costs.calculate_costs`` writes only
    since 2026-04-02 (e045639d); every report written before (here as aec5b354, 2026-01-17, writes it: no proxy
    costs) was rejected, 'unrecognised dump format'."""
    run = json.loads(MULTI_SWE_LINE.read_text().splitlines()[0])
    folder = tmp_path / "eval"
    folder.mkdir()
    (folder / "output.jsonl").write_text(json.dumps(run) + "\n")
    (folder / "output.critic_attempt_1.jsonl").write_text(json.dumps(run) + "\n")
    times = {"average_duration": 512.3, "total_duration": 512.3, "total_lines": 1, "lines_with_duration": 1}
    report = {"directory": str(folder), "timestamp": "2026-01-20T10:00:00.000000",
              "main_output": {"filename": "output.jsonl", "lines": 1, "cost": 0.42, "time_statistics": times},
              "critic_files": [{"filename": "output.critic_attempt_1.jsonl", "lines": 1, "cost": 0.42,
                                "time_statistics": times}],
              "summary": {"total_cost": 0.42, "total_duration": 512.3, "only_main_output_cost": 0.42,
                          "sum_critic_files": 0.42}}
    (folder / "cost_report.jsonl").write_text(json.dumps(report, indent=2))
    results = list(read_dump(folder))
    assert sorted((Path(r.source).name, r.ok) for r in results) == [("output.critic_attempt_1.jsonl", True),
                                                                      ("output.jsonl", True)]


def test_openhands_line_whose_evaluation_errored_is_an_infra_error_as_through_the_report(tmp_path: Path) -> None:
    """Bug: ``update_output_with_eval.py`` marks an instance of the harness's ``error_ids`` ``error_eval`` in its
    line; read alone the line was the agent's failure ('not resolved: the evaluation of the patch failed'), read
    with that report.json (``--outcomes``) an infra_error: one run, two verdicts by how it was ingested."""
    line = _evaluated(tmp_path, MULTI_SWE_LINE, error_eval=True)
    instance = json.loads(line.read_text())["instance_id"]
    report = tmp_path / "report.json"  # the SWE-bench harness's report that update_output_with_eval.py read
    report.write_text(json.dumps({"total_instances": 1, "submitted_instances": 1, "completed_instances": 0,
                                  "resolved_instances": 0, "unresolved_instances": 0, "empty_patch_instances": 0,
                                  "error_instances": 1, "resolved_ids": [], "unresolved_ids": [],
                                  "error_ids": [instance], "empty_patch_ids": [], "incomplete_ids": [],
                                  "completed_ids": []}))
    alone, judged = only(line), next(iter(read_dump(line, outcomes=OutcomeTable.load(report)))).trajectory
    assert alone.outcome is judged.outcome is Outcome.infra_error
    assert alone.failure == judged.failure and alone.failure.cause.startswith("infrastructure:")
    assert alone.failure.error.startswith("evaluation errored")


def test_openhands_run_set_read_while_running_and_once_aggregated_keeps_its_run_ids(tmp_path: Path) -> None:
    """Bug: a run's id depended on whether ``output.jsonl`` existed yet: read while the run set was going, the retry
    was '<id>.attempt_2' and attempt 1 '<id>'; once aggregated, the retry '<id>' and attempt 1 '<id>.attempt_1'. An
    ingest of each stored a run twice (three rows for two runs, the retry's twice). Now each attempt keeps one id,
    and the aggregate's copy takes the id of the attempt it copies."""
    folder = tmp_path / "eval"
    _iterative_run_set(folder)
    aggregate = (folder / "output.jsonl").read_text()
    (folder / "output.jsonl").unlink()  # aggregate_results has not run yet
    going = {r.trajectory.trajectory_id: r.trajectory for r in read_dump(folder)}
    (folder / "output.jsonl").write_text(aggregate)
    done = {r.trajectory.trajectory_id: r.trajectory for r in read_dump(folder)}
    assert set(going) == set(done) and len(done) == 2
    assert [run.metadata["handed_in"] for run in going.values()] == [None, None]
    assert sorted(run.metadata["handed_in"] for run in done.values()) == [False, True]


def test_openhands_attempt_whose_hand_in_is_unknown_is_not_judged_by_its_instance_report(tmp_path: Path) -> None:
    """Bug: read before the aggregate existed, attempt 1 said nothing of its hand-in, so the harness's report, which
    judged the aggregate's run (here the retry), gave the instance's verdict to attempt 1 too: a run that hit its
    iteration limit read as resolved."""
    folder = tmp_path / "eval"
    _iterative_run_set(folder)
    (folder / "output.jsonl").unlink()
    report = tmp_path / "report.json"
    report.write_text(json.dumps({"resolved_ids": ["ponylang__ponyc-4588"], "unresolved_ids": [],
                                  "error_ids": [], "empty_patch_ids": [], "incomplete_ids": []}))
    runs = [r.trajectory for r in read_dump(folder, outcomes=OutcomeTable.load(report))]
    assert [(run.metadata["critic_attempt"], run.metadata["handed_in"]) for run in runs] == [(1, None), (2, None)]
    assert Outcome.success not in {run.outcome for run in runs}


def test_openhands_gzipped_iterative_run_set_reads_as_the_plain_one(tmp_path: Path) -> None:
    """Bug: a run set kept gzipped (``gzip -r``: ``output.critic_attempt_<N>.jsonl.gz`` beside ``output.jsonl.gz``)
    was not seen as one: every attempt had the run id, the retry kept twice as '<id>+<hash>', none handed in."""
    import gzip

    plain, packed = tmp_path / "plain", tmp_path / "packed"
    _iterative_run_set(plain)
    packed.mkdir()
    for file in plain.iterdir():
        (packed / f"{file.name}.gz").write_bytes(gzip.compress(file.read_bytes()))
    runs = {folder: sorted((Path(r.source).name.removesuffix(".gz"), r.trajectory.trajectory_id,
                            r.trajectory.outcome, r.trajectory.metadata["handed_in"]) for r in read_dump(folder))
            for folder in (plain, packed)}
    assert runs[packed] == runs[plain]


def _skipped_instance(folder: Path, first: bool) -> str:
    """A V0 run set with ``EVAL_SKIP_MAXIMUM_RETRIES_EXCEEDED=true`` (``evaluation/utils/shared.py``): an instance
    whose runtime failed its every retry gets ``log_skipped_maximum_retries_exceeded``'s line in
    ``maximum_retries_exceeded.jsonl`` ({instance_id, error, timestamp}) and its ``EvalOutput(instance_id,
    test_result={}, error=...)`` written by ``update_progress`` into ``output.jsonl`` (``model_dump_json``: its other
    fields null), beside the real line of an instance that ran. Returns the skipped instance's id."""
    folder.mkdir()
    ran = MULTI_SWE_LINE.read_text().splitlines()[0]
    error = "RuntimeError: Failed to start runtime"
    skipped = {"instance_id": "ponylang__ponyc-4595", "test_result": {}, "instruction": None, "metadata": None,
               "history": None, "metrics": None, "error": f"Maximum retries (5) reached: {error}", "instance": None}
    lines = [json.dumps(skipped, separators=(",", ":")), ran]
    (folder / "output.jsonl").write_text("\n".join(lines if first else lines[::-1]) + "\n")
    (folder / "maximum_retries_exceeded.jsonl").write_text(json.dumps(
        {"instance_id": skipped["instance_id"], "error": error, "timestamp": "2025-05-01 10:00:00"}) + "\n")
    return skipped["instance_id"]


def test_openhands_output_with_an_instance_skipped_after_its_retries_keeps_its_other_runs(tmp_path: Path) -> None:
    """Bug: the line of a skipped instance (``history`` null) made the whole ``output.jsonl`` one unreadable record,
    'no OpenHands event': every run of the run set lost; and ``maximum_retries_exceeded.jsonl`` beside it was
    rejected, 'unrecognised dump format'. Now each run is read, the skipped instance said to have recorded none."""
    for first in (True, False):
        skipped = _skipped_instance(tmp_path / f"eval{first}", first)
        results = list(read_dump(tmp_path / f"eval{first}"))
        assert {Path(r.source).name for r in results} == {"output.jsonl"}
        [ran] = [r.trajectory for r in results if r.ok]
        [lost] = [r.error for r in results if not r.ok]
        assert ran.task_id == "ponylang__ponyc-4588" and len(ran.steps) > 10
        assert f"instance {skipped}: no event in its history" in lost and "Maximum retries (5) reached" in lost


def test_openhands_one_critic_run_set_keeps_the_run_ids_of_its_output(tmp_path: Path) -> None:
    """OpenHands/benchmarks writes ``output.critic_attempt_1.jsonl`` even with one critic run (its default) and
    aggregates it into ``output.jsonl``: each run there is read once, under the id its line had alone (no
    '.attempt_1'), handed in."""
    folder = tmp_path / "eval"
    folder.mkdir()
    alone = tmp_path / "output.jsonl"
    alone.write_text(OAS_LINES.read_text())
    (folder / "output.critic_attempt_1.jsonl").write_text(OAS_LINES.read_text())
    (folder / "output.jsonl").write_text(OAS_LINES.read_text())
    ids = sorted(r.trajectory.trajectory_id for r in read_dump(alone))
    read = [r.trajectory for r in read_dump(folder)]
    assert sorted({run.trajectory_id for run in read}) == ids and len(read) == 2 * len(ids)
    assert len({json.dumps(run.model_dump(mode="json"), sort_keys=True) for run in read}) == len(ids)
    assert {(run.metadata["critic_attempt"], run.metadata["handed_in"]) for run in read} == {(1, True)}


def test_a_lone_first_attempt_file_is_judged_by_an_instance_report(tmp_path: Path) -> None:
    """Review R2B, D1: OpenHands/benchmarks writes ``output.critic_attempt_1.jsonl`` even with one critic run; read
    without the aggregate (an interrupted run set, or the attempt file alone copied), attempt 1 was 'hand-in not
    known' and an instance report gave it no verdict (before attempts were told apart it did). The only attempt
    file, with no aggregate beside, is the run handed in."""
    import shutil

    shutil.copytree(OPENHANDS / "oas-runner", tmp_path / "runs")
    (tmp_path / "verdicts.json").write_text(json.dumps({"safety-clockout": "failure"}))
    runs = {p.trajectory.metadata.get("instance_id") or p.trajectory.task_id: p.trajectory
            for p in read_dump(tmp_path / "runs", outcomes=OutcomeTable.load(tmp_path / "verdicts.json"))}
    clockout = runs["safety-clockout"]
    assert clockout.outcome is Outcome.failure and clockout.metadata["handed_in"] is True
    assert "verdicts.json" in clockout.metadata["outcome_basis"]

"""A run is never a report, a table of runs is never one report, and a crash answers the call that ran (review 2 of
round p40: F1, F3, F9).

Inputs are built in ``tmp_path`` from real fixtures, values unchanged but for the one field each defect needs:
- ``tau-bench/.real/tool-calling-grok-3-...json`` (the grok-3 retail runs, see that folder's SOURCE.md) and
  ``native/mixed.jsonl``, each run given a verdict-named list one level down (``info.failed_ids``,
  ``metadata.error_ids``: the failing tests a run left), beside jingu-swebench's real ``B0_baseline.json``;
- instance ids and failing tests from ``outcomes/.real/atomic-eval-logs`` (pylint-dev__pylint-7080's harness
  report) and ``outcomes/.real/jingu-swebench`` (django__django-11099, resolved), as a table keyed by run id;
- the CodeGraph mini-swe-agent 2.2.8 run (``mini-swe-agent/.real/codegraph-retrieval``, see its README) cut so that
  its turn of two calls is the last, answered by nothing but the run's ``exit`` message.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import adapter_support
from cli_support import run_cli
from trajsearch.ingest.outcomes import OutcomeTable
from trajsearch.model import Outcome

FIXTURES = Path(__file__).parent / "fixtures"
GROK3_TAU = (FIXTURES / "tau-bench" / ".real"
             / "tool-calling-grok-3-0.0_range_0--1_user-grok-3-llm_0921131646.json")
NATIVE = FIXTURES / "native" / "mixed.jsonl"
JINGU = FIXTURES / "outcomes" / ".real" / "jingu-swebench"
PYLINT_REPORT = (FIXTURES / "outcomes" / ".real" / "atomic-eval-logs" / "hybrid-50"
                 / "atomic-modal-agent-deepseek-v4-pro" / "pylint-dev__pylint-7080" / "report.json")
CODEGRAPH_RUN = (FIXTURES / "mini-swe-agent" / ".real" / "codegraph-retrieval" / "baseline_docker_smoke"
                 / "django__django-11742" / "django__django-11742.traj.json")


def _failing_tests() -> list[str]:
    """The tests pylint-dev__pylint-7080's patch should have fixed and did not (its real harness report)."""
    report = json.loads(PYLINT_REPORT.read_text())["pylint-dev__pylint-7080"]
    return report["tests_status"]["FAIL_TO_PASS"]["failure"]


def _runs_listing_failed_tests(folder: Path) -> dict[str, int]:
    """Real runs whose first record holds a verdict-named list one level down, written to ``folder``: file -> runs."""
    folder.mkdir()
    tau = json.loads(GROK3_TAU.read_text())[:2]
    for run in tau:
        run["info"]["failed_ids"] = _failing_tests()
    (folder / GROK3_TAU.name).write_text(json.dumps(tau))
    native = json.loads(NATIVE.read_text().splitlines()[0])
    native.setdefault("metadata", {})["error_ids"] = _failing_tests()
    (folder / "native.jsonl").write_text(json.dumps(native) + "\n")
    return {GROK3_TAU.name: 2, "native.jsonl": 1}


def test_a_run_holding_a_verdict_named_list_is_read_not_passed_over_as_a_report(tmp_path: Path, monkeypatch) -> None:
    """Review 2 F1: a tau-bench run's ``info`` or a native run's ``metadata`` holding ``failed_ids``/``error_ids``
    made its file "a SWE-bench evaluation report": every run in it passed over, in a walk with exit 0. jingu's
    results file, the report nesting such lists, is still passed over beside them."""
    monkeypatch.setenv("TRAJSEARCH_MODEL", "hashing")
    monkeypatch.setenv("TRAJSEARCH_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("TRAJSEARCH_TENANT", "acme")  # the native run's own
    runs = tmp_path / "runs"
    expected = _runs_listing_failed_tests(runs)
    for name, count in expected.items():
        assert len(adapter_support.runs(runs / name, tenant="acme")) == count
    (runs / "B0_baseline.json").write_bytes((JINGU / "B0_baseline.json").read_bytes())

    code, out, err = run_cli("ingest", "--dry-run", "--json", str(runs))
    assert code == 0, err
    read = {Path(f["source"]).name: (f["runs"], f["rejected"]) for f in json.loads(out)["files"]}
    assert read == {name: (count, 0) for name, count in expected.items()}  # the report: passed over, no rejection


def _verdicts(path: Path) -> dict[str, Outcome | None]:
    return {run_id: v.outcome for run_id, v in OutcomeTable.load(path).verdicts.items()}


@pytest.mark.parametrize("first", ["pylint-dev__pylint-7080", "django__django-11099"])
def test_a_table_of_runs_each_listing_its_failing_tests_gives_each_runs_verdict(tmp_path: Path, first: str) -> None:
    """Review 2 F3: ``{"<instance>": {"resolved": false, "failed_ids": [<tests>]}, ...}`` was read as one report
    nested under its first key: every verdict lost ("no run outcomes found"), or the failing tests became runs."""
    records = {"pylint-dev__pylint-7080": {"resolved": False, "failed_ids": _failing_tests()},
               "django__django-11099": {"resolved": True, "failed_ids": []}}
    path = tmp_path / "verdicts.json"
    path.write_text(json.dumps({first: records[first], **records}))
    assert _verdicts(path) == {"pylint-dev__pylint-7080": Outcome.failure, "django__django-11099": Outcome.success}


@pytest.mark.parametrize(("verdict", "tests_key"), [({"resolved": False}, "failed_ids"),
                                                   ({"outcome": "failure"}, "error_ids")])
def test_a_table_of_one_run_listing_its_failing_tests_is_no_report(tmp_path: Path, verdict: dict,
                                                                    tests_key: str) -> None:
    """Review 2 F3: a table of one run is one value holding such a list, as jingu's results are: its own verdict
    (``resolved: false``, ``outcome``) tells it from a report, whose ``resolved`` is a count."""
    path = tmp_path / "verdicts.json"
    path.write_text(json.dumps({"pylint-dev__pylint-7080": {**verdict, tests_key: _failing_tests()}}))
    assert _verdicts(path) == {"pylint-dev__pylint-7080": Outcome.failure}


def test_the_exit_message_of_a_last_turn_of_two_calls_answers_the_first(tmp_path: Path) -> None:
    """Review 2 F9: the run's ``exit`` message went to the last open call; mini-swe-agent 2.x runs a turn's calls in
    order and stops at the first that raises, so it answers the oldest open call of the last turn, and the call
    after it, never run, keeps none. (An open call further back, the full run's, still keeps none.)"""
    run = json.loads(CODEGRAPH_RUN.read_text())
    messages = run["messages"]
    assert [len(m.get("tool_calls") or []) for m in messages[3:5]] == [2, 0] and messages[-1]["role"] == "exit"
    run["messages"] = [*messages[:4], messages[-1]]  # the turn of two calls, then the stop
    path = tmp_path / "django__django-11742" / "django__django-11742.traj.json"
    path.parent.mkdir()
    path.write_text(json.dumps(run))

    steps = adapter_support.only(path, tenant="acme").steps
    assert [s.action for s in steps] == ["search_hybrid", "deepen_file", "search_hybrid"]
    first, second = steps[1], steps[2]
    assert first.observation == "LimitsExceeded" and first.error.startswith("LimitsExceeded")
    assert (second.observation, second.error) == (None, None)

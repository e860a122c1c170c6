"""A failures answer (the tool's ``kind=failures``, ``Runtime.advice``, gRPC) of warnings and the runs that got past a
pasted error: what it shows, how many, and why it shows none, said alike wherever it is asked (review RRT6).

Real mini-swe-agent runs (tests/fixtures/mini-swe-agent/.real/SOURCE.md): two gemini-3-pro runs that failed
(``sb-cli-report.json``) after meeting ``No module named 'reproduce_app'`` at step 0, and the same two files read again
under other names without the report (submitted successes, each of which met the error and went on). Plumbing: the
hashing test embedder (``hashing_ts``)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from trajsearch.ingest.outcomes import OutcomeTable
from trajsearch.ingest.read import read_dump
from trajsearch.runtime import Runtime, RuntimeContext, SearchPastRuns
from trajsearch.runtime.tool import BUDGET_TOO_SMALL, budget_said
from trajsearch.toolspec import definition

from conftest import make_run

REAL = Path(__file__).parent / "fixtures" / "mini-swe-agent" / ".real" / "gemini-3-pro-warnings"
LINE = "ModuleNotFoundError: No module named 'reproduce_app'"
CTX = RuntimeContext(tenant="acme")


@pytest.fixture
def mixed(hashing_ts, tmp_path):
    """The two failed runs, and the same runs read again as successes (copies without the report, given ids of their
    own)."""
    failed = [p.trajectory for p in read_dump(REAL, tenant="acme", outcomes=OutcomeTable.load(REAL / "sb-cli-report.json"))]
    copy = tmp_path / "copy"
    shutil.copytree(REAL, copy)
    (copy / "sb-cli-report.json").unlink()
    for f in copy.glob("*.traj.json"):
        f.rename(f.with_name("x" + f.name))
    copies = [p.trajectory for p in read_dump(copy, tenant="acme")]  # the same runs: a file's id follows its content
    hashing_ts.add(failed + [c.model_copy(update={"trajectory_id": "copy." + c.trajectory_id}) for c in copies])
    return hashing_ts


def test_the_tools_answer_whose_runs_the_budget_all_left_out_says_budget_too_small(mixed):
    """Bug: the tool decided its empty reason itself and gave none where its ``result_tokens`` left every run out
    (``omitted`` only), where ``Runtime.advice`` and gRPC said ``budget_too_small``: at 150 tokens, all 77 pasted
    error lines on the real model. Now the one place (``tool.why_empty``) says it for both."""
    answer = SearchPastRuns(mixed, CTX, result_tokens=150)({"query": LINE, "kind": "failures"})
    assert answer["results"] == [] and answer["omitted"] == 3
    assert (answer["reason"], answer["note"]) == budget_said(3)
    advice = Runtime(mixed).advice("warnings", LINE, CTX, budget=50)
    assert advice.items == [] and advice.reason == answer["reason"] == BUDGET_TOO_SMALL


def test_k_of_a_failures_answer_is_its_failed_runs_and_says_the_runs_added(mixed):
    """``k`` counts the failed runs; a run that got past the pasted error is added to them (it is not counted inside
    ``k``: at ``k=1`` it would cost the failed run or be lost). The description had said "How many past runs to
    return" of an answer of k + 1 runs; then "plus up to 1", the default's number, whatever ``recoveries_k`` the
    runtime set (FRALLB 3): it says they are added, not how many."""
    said = definition()["parameters"]["properties"]["k"]["description"]
    assert "plus any run(s) that got past a pasted error (not counted in k)" in said
    answer = SearchPastRuns(mixed, CTX)({"query": LINE, "kind": "failures", "k": 1})
    assert [r["label"] for r in answer["results"]] == ["what not to do", "how a past run got past this"]
    assert [i["kind"] for i in Runtime(mixed).advice("warnings", LINE, CTX, k=1).items] == ["warning", "recovery"]


def test_context_for_with_every_run_left_out_by_the_caller_says_so(hashing_ts):
    """Bug: ``context_for(..., exclude_trajectory_ids=[every run])`` said ``no_successful_runs``, "No successful run
    is recorded here yet", of a tenant holding them (a leave-one-out caller's). It says the caller left them out;
    with one left in, the reason is the usual one."""
    runs = [make_run("ok-1"), make_run("ok-2", task="Add a retry to the billing client")]
    hashing_ts.add(runs)
    rt = Runtime(hashing_ts)
    every = rt.context_for(runs[0].task, CTX, exclude_trajectory_ids=[r.trajectory_id for r in runs])
    assert every.exemplars == [] and every.reason == "only_excluded_runs", every.reason
    assert "left out (exclude_trajectory_ids)" in every.note and every.text == ""
    one = rt.context_for("zqxj vwkp flurbo glimmix", CTX, exclude_trajectory_ids=["ok-1"])
    assert one.reason == "no_similar_runs"
    other = rt.context_for(runs[0].task, RuntimeContext(tenant="nobody"), exclude_trajectory_ids=["ok-1"])
    assert other.reason == "no_successful_runs"  # nothing there at all: the exclusion is no reason

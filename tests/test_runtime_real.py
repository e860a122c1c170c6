"""The runtime on real runs (tests/fixtures, each trimmed from a real results file; see the SOURCE.md beside
it), for what a synthetic run could not show: benchmarks that number their tasks alike, environments whose
tools differ, a task whose runs all failed, an error line pasted whole. ``model_ts`` tests use the real model
(what they check depends on its similarities)."""

from __future__ import annotations

import hashlib
import time
from dataclasses import replace
from datetime import timedelta
from pathlib import Path

from trajsearch.ingest.outcomes import OutcomeTable
from trajsearch.ingest.read import read_dump
from trajsearch.model import Trajectory
from trajsearch.search import TrajSearch
from trajsearch.touched import touched
import pytest

from trajsearch.runtime import AdviceConfig, NoveltyConfig, Runtime, RuntimeConfig, RuntimeContext, StalenessRules
from trajsearch.runtime.loop import refine_query
from trajsearch.runtime.tool import SearchPastRuns

from conftest import BASE_TIME

FIXTURES = Path(__file__).parent / "fixtures"
#: tau-bench v1, gpt-4o airline: task 0, a failed and a successful trial (gpt-4o-airline.json, trimmed)
TAU_TASK0 = FIXTURES / "tau-bench" / "gpt-4o-airline-mini.json"
#: tau-bench v1, gpt-4o airline: task 1, its successful trial 1 (see .runtime/SOURCE.md)
TAU_TASK1 = FIXTURES / "tau-bench" / ".runtime" / "gpt-4o-airline-task1.json"
#: tau2-bench airline tasks 0, 1, 9 (failed, solved, solved): a different task set numbered alike
TAU2 = FIXTURES / "tau2-bench" / ".real" / "airline_run1.json"
#: tau-bench v1, gpt-4o airline: task 0 trial 0 and task 5 trials 2, 3, all failed (see .runtime/SOURCE.md)
TAU_FAILED = FIXTURES / "tau-bench" / ".runtime" / "gpt-4o-airline-failed-0-5.json"
#: tau-bench v1, grok-3 (retail): tasks 39, 55, 107, each failed after a tool said "Error: user not found"
GROK_NOT_FOUND = FIXTURES / "tau-bench" / ".runtime" / "grok-3-user-not-found.json"
#: mini-swe-agent, a SWE-bench run with the bash tool only
SWE = FIXTURES / "mini-swe-agent" / "deepseek_chat_dev"
OPEN = RuntimeConfig(advice=AdviceConfig(novelty=NoveltyConfig(0.99, 0.0, per_tenant=False),
                                         warning_min_similarity=-1.0))


def runs(path: Path, **defaults: str) -> list[Trajectory]:
    parsed = list(read_dump(path, tenant="acme", defaults=defaults or None))
    assert all(p.trajectory is not None for p in parsed), [p.error for p in parsed]
    return [p.trajectory for p in parsed]


def one(path: Path, task_id: str) -> Trajectory:
    return next(t for t in runs(path) if t.task_id == task_id)


# -- staleness judges only the runs inside the context --------------------------------------------


def test_staleness_and_prune_judge_only_the_contexts_env(hashing_ts):
    """An airline agent's tool list must not condemn a coding agent's runs (probe p39 D12: on a store of
    airline-v1, airline-v0 and SWE runs, an airline-v1 context listing every airline tool flagged 217 runs
    of the other envs, 0 of its own, and prune deleted 79 of 84 SWE runs)."""
    airline = runs(TAU_TASK0, env_version="airline-v1")
    hashing_ts.add([*airline, *runs(SWE, env_version="swe-v1")])
    tools = sorted({tool for run in airline for tool in run.tools_used})
    rt = Runtime(hashing_ts)
    ctx = RuntimeContext(tenant="acme", env_version="airline-v1", tools_available=tools)
    assert rt.staleness_report(ctx) == []
    assert rt.prune(ctx, rt.staleness_report(ctx)) == []
    assert hashing_ts.stats(tenant="acme")["trajectories"] == 3

    reduced = RuntimeContext(tenant="acme", env_version="airline-v1", tools_available=["respond"])
    assert {s.trajectory_id for s in rt.staleness_report(reduced)} == {t.trajectory_id for t in airline}
    whole_tenant = RuntimeContext(tenant="acme", tools_available=tools)  # no env: every run is judged
    assert [s.reasons for s in rt.staleness_report(whole_tenant)] == [["used tools no longer available: bash"]]


# -- "the same task" is its id and its text --------------------------------------------------------


def test_curation_keeps_another_benchmarks_task_with_the_same_id(hashing_ts):
    """tau-bench v1 and tau2 both call their (different) airline task 1 ``airline-1`` (probe p39 D11: adding
    new tau-bench runs deleted 18 successful tau2 runs of other tasks; a good tau2 run was refused as
    "a better run of the same task is already kept")."""
    rt = Runtime(hashing_ts)
    tau2 = one(TAU2, "airline-1")
    tau = one(TAU_TASK1, "airline-1")
    assert tau2.task != tau.task
    assert rt.add_run(tau2).accepted
    added = rt.add_run(tau)  # newer (created now): it would win a duplicate contest
    assert added.accepted and added.removed == [] and added.kept_alongside == []
    assert hashing_ts.run(tau2.trajectory_id, tenant="acme") is not None

    again = tau.model_copy(update={"trajectory_id": "tau-again", "created_at": tau.created_at - timedelta(days=400)})
    refused = rt.add_run(again)  # an older run of the very same task is still a duplicate
    assert not refused.accepted and refused.reasons == [f"a better run of the same task is already kept: {tau.trajectory_id}"]


def test_exemplar_diversity_does_not_merge_tasks_sharing_an_id(hashing_ts):
    """Diversity keeps one run per task: a tau2 run and a tau-bench run of ``airline-1`` are two tasks."""
    tau2, tau = one(TAU2, "airline-1"), one(TAU_TASK1, "airline-1")
    hashing_ts.add([tau2, tau])
    ctx = RuntimeContext(tenant="acme", now=BASE_TIME)
    shown = Runtime(hashing_ts, OPEN).exemplars(tau2.task, ctx, k=2).items
    assert {e.trajectory_id for e in shown} == {tau2.trajectory_id, tau.trajectory_id}


# -- warnings: the task's own failures first, exact error lines, one per task ----------------------


def test_a_task_whose_runs_failed_is_warned_with_its_own_failure_first(model_ts):
    """Probe p39 D1/D5: tau-bench airline task 0 failed 4 of 4 times (book_reservation's baggage), yet its
    warnings were task 5's two failed runs, word for word the same block twice: a failure row's vector is
    mostly its error boilerplate, which task 5's rows match better than task 0's own."""
    model_ts.add(runs(TAU_FAILED))
    task0 = one(TAU_FAILED, "airline-0")
    ctx = RuntimeContext(tenant="acme", now=BASE_TIME)
    warned = Runtime(model_ts).warnings(task0.task, ctx)
    assert [w.trajectory_id for w in warned] == [task0.trajectory_id, "tau-gpt-4o-airline-failed-0-5-5-t2"]
    assert "payment amount does not add up" in warned[0].error

    task5 = one(TAU_FAILED, "airline-5")  # its two failed runs read alike: one of them, then none of task 5's
    # (task 0's booking run came second while its cause quoted a failed call's baggage; it quotes the booking
    # made since probe E's E1, and falls under the similarity floor for task 5's seat change: either is right)
    first, *rest = Runtime(model_ts).warnings(task5.task, ctx)
    assert first.trajectory_id.endswith(("5-t2", "5-t3"))
    assert [w.trajectory_id for w in rest] in ([], [task0.trajectory_id])



def test_a_warning_names_what_a_successful_run_of_its_task_did(hashing_ts):
    """Plumbing (hashing test embedder), on real runs: tau-bench airline task 0's trial 0 failed, its trial 1
    passed. No adapter knows a fix (the harness says a run failed, not what would have passed); the passing
    trial shows it, so the warning's fix is what that run did (its state-changing calls). Only a success
    inside the caller's filters counts: filed under another env version, none is named."""
    failed, passed = sorted(runs(TAU_TASK0), key=lambda t: t.outcome.value)
    assert (failed.outcome.value, passed.outcome.value) == ("failure", "success")
    calls = [s.action for s in passed.steps if s.action in ("book_reservation", "update_reservation_flights")]
    assert calls
    hashing_ts.add([failed.model_copy(update={"env_version": "v1"}), passed.model_copy(update={"env_version": "v1"})])
    rt = Runtime(hashing_ts, OPEN)
    warned = rt.warnings(failed.task, RuntimeContext(tenant="acme", env_version="v1", now=BASE_TIME))
    assert [w.trajectory_id for w in warned] == [failed.trajectory_id]
    assert warned[0].fix.startswith(f"a successful run of this task ({passed.trajectory_id}) called ")
    assert calls[0] in warned[0].fix
    shown = rt.context_for(failed.task, RuntimeContext(tenant="acme", env_version="v1", now=BASE_TIME)).text
    assert f"Fix: a successful run of this task ({passed.trajectory_id})" in shown

    hashing_ts.add([passed.model_copy(update={"env_version": "v0"})])  # the same run, now outside the filters
    warned = rt.warnings(failed.task, RuntimeContext(tenant="acme", env_version="v1", now=BASE_TIME))
    assert [w.trajectory_id for w in warned] == [failed.trajectory_id] and warned[0].fix is None


#: AutoCodeRover's SWE-agent 0.x gpt-4 runs of SWE-bench Lite and their first-harness report (resolved ids only)
ACR_SWE_AGENT = FIXTURES / "swe-agent" / ".real" / "acr-swe-agent-gpt4-lite"


def test_a_warning_for_a_run_the_report_failed_says_what_it_handed_in(hashing_ts):
    """Bug (probe E3, A4): a failure that is an outcome file's verdict shows the task, "not resolved" and the
    file's name, nothing of what the run did. pylint-7114 handed in only new files (``a/a.py``, ``a/b.py``, the
    ``r.py`` it reproduced with) and changed no file of pylint."""
    report = OutcomeTable.load(ACR_SWE_AGENT / "final_report.json")
    parsed = list(read_dump(ACR_SWE_AGENT, tenant="acme", outcomes=report))
    hashing_ts.add([p.trajectory for p in parsed if p.trajectory])
    pylint = next(p.trajectory for p in parsed if p.trajectory and p.trajectory.task_id.endswith("pylint-7114"))
    rt, ctx = Runtime(hashing_ts, OPEN), RuntimeContext(tenant="acme", now=BASE_TIME)
    warned = rt.warnings(pylint.task, ctx, k=1)
    assert [w.trajectory_id for w in warned] == [pylint.trajectory_id]
    assert warned[0].handed_in == "only a/__init__.py, a/a.py, a/b.py, r.py (created); changed no existing file"
    shown = rt.context_for(pylint.task, ctx).text
    assert "Error: SWE-bench evaluation: not resolved" in shown
    assert "Handed in: only a/__init__.py, a/a.py, a/b.py, r.py (created); changed no existing file" in shown


#: two scikit-learn successes of the same SWE-agent runs (trimmed) and an xarray issue (see .real/SOURCE.md)
ACR_STEPS = FIXTURES / "swe-agent" / ".real" / "acr-swe-agent-gpt4-lite-steps"


def test_a_step_row_far_from_the_task_does_not_keep_a_distant_run(model_ts):
    """Bug (probe E3, A1): a run below the novelty threshold stayed when one of its step rows was among the
    ``cover_steps`` (60) nearest the task, whatever that row's cosine. In a small tenant every step row is: the
    xarray issue "show units in dataset overview" got sklearn-13779 (VotingClassifier ``sample_weight``) at task
    cosine 0.06-0.08 as an exemplar, grounded by a step at 0.18. sklearn-13241 (0.322, just above the threshold)
    is still shown."""
    names = ("scikit-learn__scikit-learn-13241.traj", "scikit-learn__scikit-learn-13779.traj")
    model_ts.add([p.trajectory for name in names for p in read_dump(ACR_STEPS / name, tenant="acme")])
    found = Runtime(model_ts).exemplars((ACR_STEPS / "pydata__xarray-4248.issue.txt").read_text(),
                                        RuntimeContext(tenant="acme", now=BASE_TIME))
    assert [e.trajectory_id.rsplit(".", 1)[-1] for e in found.items] == ["scikit-learn__scikit-learn-13241"]


def test_an_exact_error_line_finds_the_failed_runs_holding_it(model_ts):
    """Probe p39 D2: the three grok-3 runs whose last tool error is "Error: user not found" score a dense
    cosine of 0.37-0.41 to that line; the 0.40 floor dropped the lexical leg's exact hits, and was applied
    after the top k: k=2 gave nothing, k=3 one run."""
    model_ts.add(runs(GROK_NOT_FOUND))
    rt, ctx = Runtime(model_ts), RuntimeContext(tenant="acme", now=BASE_TIME)
    for k in (1, 2, 3):
        warned = rt.warnings("Error: user not found", ctx, k=k)
        assert len(warned) == k and all("Error: user not found" in w.error for w in warned)
    assert rt.warnings("Error: reservation not found", ctx) == []  # not held, and no failure row that close


#: real gemini-3-pro runs of SWE-bench Verified, trimmed, and their sb-cli report (see SOURCE.md there): django-12406
#: and django-12325 met ``REPRODUCE_APP`` in a step (and went on); pylint-4604 is of another repository
GEMINI_WARNINGS = FIXTURES / "mini-swe-agent" / ".real" / "gemini-3-pro-warnings"
PYLINT_4604 = FIXTURES / "mini-swe-agent" / ".real" / "gemini-3-pro-similar" / "pylint-dev__pylint-4604.traj.json"
REPRODUCE_APP = "ModuleNotFoundError: No module named 'reproduce_app'"


def test_a_pasted_error_finds_the_failed_runs_whose_steps_hold_it_and_shows_that_step(model_ts):
    """Bug (probe E2, E2-B): the failure row of a run an outcome file failed holds its verdict ("not resolved (in the
    report's unresolved_ids)"), no step error, so warnings for a pasted error looked only there: the two runs that
    met it were not shown, and pylint-4604 (unused-import in a type comment) was, on its task's prose at 0.467. The
    failed runs' steps are looked in (inside the same filters), the warning shows the step holding the error, and a
    row holding only a verdict is no warning for a log line by its task's words."""
    report = OutcomeTable.load(GEMINI_WARNINGS / "sb-cli-report.json")
    parsed = [*read_dump(GEMINI_WARNINGS, tenant="acme", outcomes=report),
              *read_dump(PYLINT_4604, tenant="acme", outcomes=report)]
    assert {p.trajectory.outcome.value for p in parsed} == {"failure"} and len(parsed) == 3
    model_ts.add([p.trajectory for p in parsed])
    rt, ctx = Runtime(model_ts), RuntimeContext(tenant="acme", now=BASE_TIME)
    warned = rt.warnings(REPRODUCE_APP, ctx, k=3)
    assert {w.trajectory_id for w in warned} == {"gemini-3-pro-preview.django__django-12406.9c6632a9d5",
                                                  "gemini-3-pro-preview.django__django-12325.de20a4e7ef"}
    assert all(REPRODUCE_APP in w.step_holding and w.step_holding.startswith("[step ") for w in warned)
    assert "Step holding it: [step " in rt.context_for(REPRODUCE_APP, ctx).text
    assert rt.warnings(REPRODUCE_APP, RuntimeContext(tenant="acme", env_version="v2", now=BASE_TIME)) == []


def test_a_warning_of_a_run_an_outcomes_file_failed_gives_no_file_name_as_its_cause(hashing_ts):
    """Bug (round 24, RT7): every SWE-bench run the sb-cli report left unresolved was warned with ``Cause: outcomes
    file sb-cli-report.json`` (on the gemini-3-pro store, the 60-char report name, in each warning of 30 contexts):
    ingest records the file that judged the run as its failure's cause, and the warning read it as why the run
    failed. The error (the verdict) and what it handed in stay; the file's name is no cause."""
    report = OutcomeTable.load(GEMINI_WARNINGS / "sb-cli-report.json")
    failed = [p.trajectory for p in read_dump(GEMINI_WARNINGS, tenant="acme", outcomes=report)]
    assert failed and all(run.failure.cause == "outcomes file sb-cli-report.json" for run in failed)  # as stored
    hashing_ts.add(failed)
    rt, ctx = Runtime(hashing_ts, OPEN), RuntimeContext(tenant="acme", now=BASE_TIME)
    warned = rt.warnings(failed[0].task, ctx, k=2)
    assert len(warned) == 2 and all(w.cause is None for w in warned)
    assert all(w.error == "SWE-bench evaluation: not resolved (in the report's unresolved_ids)" for w in warned)
    text = rt.context_for(failed[0].task, ctx).text
    assert "## Warning 2" in text and "Handed in: changes to django/" in text
    assert "Cause:" not in text and "sb-cli-report.json" not in text
    shown = rt.advice("warnings", failed[0].task, ctx)
    assert len(shown.items) == 2 and "Cause:" not in shown.text and "sb-cli-report.json" not in shown.json


#: tau-bench v1, grok-3 retail: task 20, failed on the items it chose, after a 503 it got past by asking again
GROK_RETRIED_503 = FIXTURES / "tau-bench" / ".runtime" / "grok-3-retail-20-retried-503.json"


def test_a_warning_names_no_tool_error_the_run_got_past_by_asking_again(hashing_ts):
    """Bug (round 24, RT7): the tau adapters named the last tool error of a failed run whatever came after it, and
    its warning showed that call as the failing step: grok-3's task 20 read ``last tool error: get_order_details ->
    Error: 503 Service Unavailable`` and ``Failing step: get_order_details #W5733668``, though step 7 asked again and
    was answered, and the run failed on the items it chose (its cause). 16 of the 37 failed grok-3 retail runs named
    a tool error the run had got past."""
    [run] = runs(GROK_RETRIED_503)
    assert run.steps[6].error == "Error: 503 Service Unavailable" and run.steps[7].error is None
    assert run.failure.error == "reward 0.0: final database state differs from the expected one"
    hashing_ts.add([run])
    rt, ctx = Runtime(hashing_ts, OPEN), RuntimeContext(tenant="acme", now=BASE_TIME)
    [warning] = rt.warnings(run.task, ctx)
    assert warning.failing_step is None and "503" not in warning.error
    assert warning.cause.startswith("modify_pending_order_items called with different arguments")
    text = rt.context_for(run.task, ctx).text
    assert "## Warning 1" in text and "Service Unavailable" not in text and "Failing step" not in text


#: a real failed mini-swe-agent run (LimitsExceeded) with its step 3, refused, asked again and answered without error
STEP3_REPEATED = FIXTURES / "mini-swe-agent" / ".real" / "codegraph-step3-repeated"


def test_a_warnings_error_and_failing_step_name_one_step_the_run_did_not_get_past(hashing_ts):
    """Bug (round 24, review of RT7): warnings pass over a step the run got past, but mini-swe-agent (as SWE-agent,
    the span and vendor readers, ADK's) still named the last step with an error in the failure: django-11742 with
    step 3 repeated without error read ``Error: LimitsExceeded: last failing step 3 (...)`` over ``Failing step:
    deepen_file ...``, step 1. Both name step 1, the last error the run did not get past."""
    [run] = runs(STEP3_REPEATED)
    assert run.steps[3].error and run.steps[4].error is None and run.steps[4].arguments == run.steps[3].arguments
    assert run.failure.error.startswith("LimitsExceeded: last failing step 1 (`deepen_file`): [policy error] Multiple")
    hashing_ts.add([run])
    ctx = RuntimeContext(tenant="acme", now=BASE_TIME)
    [warning] = Runtime(hashing_ts, OPEN).warnings(run.task, ctx)
    assert warning.failing_step.startswith("deepen_file") and "step 3" not in warning.error
    text = Runtime(hashing_ts, OPEN).context_for(run.task, ctx).text
    assert "last failing step 1" in text and "Failing step: deepen_file" in text and "convergence" not in text


#: a real successful gemini-3-pro run (django-13363, trimmed to steps 0-5 and its submission): step 4 met
#: ``NO_SUCH_TABLE``, step 5 wrote its reproduction script again with a heredoc
HEREDOC_RECOVERY = FIXTURES / "mini-swe-agent" / ".real" / "gemini-3-pro-recovery-heredoc"
NO_SUCH_TABLE = "django.db.utils.OperationalError: no such table: __main___timeslots"


def test_a_recoverys_next_step_keeps_its_commands_later_lines(hashing_ts):
    """Bug (round 24, RT7): a recovery's ``Then did`` kept only the first line of the next step's action, unmarked:
    django-13363's step 5 read ``action: bash cat <<'EOF' > reproduce_issue.py``, a heredoc with no body, as if whole,
    where the script it wrote (models in an app, tables made by the schema editor) is how the run got past the error.
    The action is shown with its later lines up to its clip, and a cut says so."""
    report = OutcomeTable.load(HEREDOC_RECOVERY / "sb-cli-report.json")
    [run] = [p.trajectory for p in read_dump(HEREDOC_RECOVERY, tenant="acme", outcomes=report)]
    assert run.outcome.value == "success" and NO_SUCH_TABLE in run.steps[4].observation
    hashing_ts.add([run])
    answer = Runtime(hashing_ts, OPEN).advice("warnings", NO_SUCH_TABLE, RuntimeContext(tenant="acme", now=BASE_TIME))
    [item] = answer.items
    assert item["kind"] == "recovery" and item["view"]["step_holding"].startswith("[step 4]")
    then = item["view"]["next_step"]
    action = then[then.index("action: "):]
    assert action.startswith("action: bash cat <<'EOF' > reproduce_issue.py\nimport os\nimport django")
    assert action.endswith(" …")  # clipped, and said to be
    assert "import django" in answer.text


# -- inputs an agent pastes --------------------------------------------------------------------------


def test_a_long_unbroken_token_in_the_task_takes_linear_time(hashing_ts):
    """Probe p39 D3: a task holding a 19,000-char hex token took 18.8 s in context_for (the identifier
    pattern rescanned the token from every position: quadratic); a 2-word task 0.01 s."""
    from trajsearch.touched import identifiers

    hashing_ts.add(runs(TAU_TASK1))
    token = "".join(hashlib.sha256(str(i).encode()).hexdigest() for i in range(700))[:40_000]
    started = time.process_time()  # the pattern alone, CPU time: about 2 ms; quadratic, about 40 s
    assert identifiers("My session token was: " + token + " in auth.py") == ["auth.py"]
    assert time.process_time() - started < 5.0
    task = one(TAU_TASK1, "airline-1").task[:1_000] + " My session token was: " + token[:18_000]
    found = Runtime(hashing_ts, OPEN).context_for(task, RuntimeContext(tenant="acme", now=BASE_TIME))
    assert len(found.exemplars) == 1  # the candidates were searched (where the names are read)


def test_a_budget_too_small_for_any_run_says_so_and_claims_none(hashing_ts):
    """Probe p39 D4: at budgets the CLI and server accept (50..~200 tokens) the context said "A past run
    solved this same task: follow its approach closely" with no run in it (at 50: a header cut mid-word,
    ``Strategy: follow_ …``), and ``PromptContext.exemplars`` still listed the runs."""
    hashing_ts.add(runs(TAU_TASK1))
    task = one(TAU_TASK1, "airline-1").task
    rt, ctx = Runtime(hashing_ts, OPEN), RuntimeContext(tenant="acme", now=BASE_TIME)
    full = rt.context_for(task, ctx)
    assert "Strategy: follow_closely" in full.text and [e.trajectory_id for e in full.exemplars] == [
        "tau-gpt-4o-airline-task1-1-t1"]
    for budget in (50, 150):
        for fmt in ("text", "json"):
            small = rt.context_for(task, ctx, budget=budget, fmt=fmt)
            assert small.exemplars == [] and small.tokens <= budget
            assert "follow" not in small.text and "Strategy" not in small.text and "PAST RUNS" not in small.text
            assert small.data["omitted"] == 1
        assert small.text == '{"exemplars":[],"warnings":[],"omitted":1}'
        served = rt.advice("exemplars", task, ctx, budget=budget)  # what the CLI and server answer
        assert served.items == [] and served.text == "(1 past run(s) left out to stay within the token budget.)"


def test_a_lone_surrogate_is_refused_with_a_value_error(hashing_ts):
    """Probe p39 D7: ``"\\ud800"`` decodes from JSON without error; context_for, exemplars and warnings raised
    the tokenizer's ``TypeError: TextEncodeInput must be Union[...]``, naming nothing the caller passed."""
    hashing_ts.add(runs(TAU_TASK1))
    rt, ctx = Runtime(hashing_ts, OPEN), RuntimeContext(tenant="acme", now=BASE_TIME)
    task = "Cancel my reservation \ud800 please"
    for verb in (rt.context_for, rt.exemplars, rt.warnings):
        with pytest.raises(ValueError, match="lone surrogate at position 22"):
            verb(task, ctx)
    for search in (lambda: hashing_ts.search(task, tenant="acme"), lambda: hashing_ts.similar_runs(None, task, tenant="acme")):
        with pytest.raises(ValueError, match="lone surrogate at position 22"):  # the façade's one check serves all
            search()


def test_the_loop_does_not_retry_an_input_error(hashing_ts):
    """Probe p39 D8: a task over 20,000 chars was retried 3 times with back-off and reported as
    ``RetrievalError: retrieval failed after 3 attempts`` (as if the store were down)."""
    hashing_ts.add(runs(TAU_TASK1))
    calls = []
    loop = Runtime(hashing_ts, OPEN).loop(on_action=calls.append)
    loop.sleep = lambda seconds: pytest.fail(f"backed off {seconds} s to retry an input error")
    with pytest.raises(ValueError, match="lone surrogate"):  # (a task over 20,000 chars is clipped now: below)
        loop.run("Cancel my reservation \ud800 please", RuntimeContext(tenant="acme", now=BASE_TIME))


def test_a_task_over_the_query_limit_is_answered_from_its_head_and_tail(hashing_ts):
    """Probe E2, E2-3: a real SWE-bench issue of 22,775 characters (a ``pip list`` dump in its middle) was refused
    ("query text too long") by exemplars, warnings and context_for, though ingest clips such a task and keeps
    the run. The runtime verbs now search with its head and tail, as ingest keeps them."""
    hashing_ts.add(runs(TAU_TASK1))
    rt, ctx = Runtime(hashing_ts, OPEN), RuntimeContext(tenant="acme", now=BASE_TIME)
    task = one(TAU_TASK1, "airline-1").task
    padded = task[:2_000] + "\n" + "package-name 1.2.3\n" * 1_500 + task[2_000:]  # 28,500 characters of pip list
    assert len(padded) > 20_000
    found = rt.exemplars(padded, ctx)
    assert found.items and found.items[0].trajectory_id == rt.exemplars(task, ctx).items[0].trajectory_id
    assert rt.context_for(padded, ctx).text and isinstance(rt.warnings(padded, ctx), list)


def test_query_refinement_keeps_negations(hashing_ts):
    """Probe p39 D6: the loop refined "Error: user not found" (a real tau-bench tool error) to
    "Error user found", the opposite statement."""
    hashing_ts.add(runs(GROK_NOT_FOUND))
    actions = []
    Runtime(hashing_ts).loop(on_action=actions.append).run(
        "Error: user not found", RuntimeContext(tenant="acme", now=BASE_TIME))
    refined = [a.refined_query for a in actions if a.refined_query]
    assert refined and all("not" in q.split() for q in refined), refined
    assert refine_query("ModuleNotFoundError: No module named 'yaml'") == "ModuleNotFoundError No module 'yaml'"


def test_runs_with_none_of_the_available_tools_are_not_to_be_followed_closely(hashing_ts):
    """Probe p39 D10: with ``tools_available=["bash"]`` a tau-bench airline task still got ``follow_closely``
    and runs whose every write is an airline tool the agent cannot call. ``tools_available`` stays out of
    the hard filters (README), but a run none of whose tools exists here cannot be followed step by step."""
    hashing_ts.add(runs(TAU_TASK1))
    run = one(TAU_TASK1, "airline-1")
    rt = Runtime(hashing_ts, OPEN)
    elsewhere = rt.exemplars(run.task, RuntimeContext(tenant="acme", tools_available=["bash"], now=BASE_TIME))
    assert elsewhere.strategy.value == "use_as_inspiration" and len(elsewhere.items) == 1
    # none listed (unknown), or some shared: the run can be followed (``respond``, its replies, is no tool shared:
    # a context listing it alone has none of the airline tools, review of probe 52 RT1)
    for tools in ([], [t for t in run.tools_used if t != "respond"][:1]):
        ctx = RuntimeContext(tenant="acme", tools_available=tools, now=BASE_TIME)
        assert rt.exemplars(run.task, ctx).strategy.value == "follow_closely"


# -- review p39/review3: warnings' lookups, the strategy line, staleness of retired envs ------------

#: tau-bench v1, grok-3 retail: task 102 (failed) and task 103 (solved), whose texts differ by one item
GROK_102_103 = FIXTURES / "tau-bench" / ".runtime" / "grok-3-retail-102-103.json"
#: no failure row passes the cosine floor by similarity alone: what is shown came by task text or verbatim
ONLY_BY_TEXT = RuntimeConfig(advice=AdviceConfig(novelty=NoveltyConfig(0.99, 0.0, per_tenant=False),
                                                 warning_min_similarity=1.01))


def test_a_failed_run_with_a_blank_task_does_not_break_warnings_hashing(hashing_ts):
    """Review F7: a failed run with a task id and a whitespace-only task (the model accepts it) made every
    warnings call showing it raise "query text must be a non-empty string": the fix lookup searched its task
    text. Plumbing (hashing embedder): tau-bench airline task 0's failed trial with its task blanked."""
    failed = one(TAU_FAILED, "airline-0").model_copy(update={"task": " \n"})
    hashing_ts.add([failed, one(TAU_TASK1, "airline-1")])
    rt, ctx = Runtime(hashing_ts, OPEN), RuntimeContext(tenant="acme", now=BASE_TIME)
    assert [w.trajectory_id for w in rt.warnings(one(TAU_FAILED, "airline-0").task, ctx)] == [failed.trajectory_id]
    assert failed.trajectory_id in rt.context_for("Error: payment amount does not add up", ctx).text


def test_the_fix_from_a_successful_run_leaves_out_the_excluded_runs_hashing(hashing_ts):
    """Review F2: ``exclude_trajectory_ids`` (the current run, an evaluation's held-out run) was ignored by the
    fix lookup, so the excluded successful trial of tau-bench airline task 0 was named as the fix."""
    failed, passed = sorted(runs(TAU_TASK0), key=lambda t: t.outcome.value)
    hashing_ts.add([failed, passed])
    rt, ctx = Runtime(hashing_ts, OPEN), RuntimeContext(tenant="acme", now=BASE_TIME)
    assert passed.trajectory_id in rt.warnings(failed.task, ctx)[0].fix
    [warning] = rt.warnings(failed.task, ctx, exclude_trajectory_ids=[passed.trajectory_id])
    assert warning.trajectory_id == failed.trajectory_id and warning.fix is None
    shown = rt.context_for(failed.task, ctx, exclude_trajectory_ids=[passed.trajectory_id])
    assert passed.trajectory_id not in shown.text


def test_own_task_failures_are_the_same_task_by_text_hashing(hashing_ts):
    """Review F6: "failed runs of this very task" were those whose task row embeds at 0.96 or more; grok-3 retail
    task 103 (solved) then got task 102's failure first, at 102's task cosine (0.98 with the real model; the
    texts differ in "a speaker" / "sneakers"). The same task is the same text, whitespace and case aside."""
    task102, task103 = one(GROK_102_103, "retail-102"), one(GROK_102_103, "retail-103")
    hashing_ts.add([task102, task103])
    rt, ctx = Runtime(hashing_ts, ONLY_BY_TEXT), RuntimeContext(tenant="acme", now=BASE_TIME)
    assert rt.warnings(task103.task, ctx) == []
    respaced = "  ".join(task102.task.upper().split())
    assert [w.trajectory_id for w in rt.warnings(respaced, ctx)] == [task102.trajectory_id]


def test_a_phrase_of_filler_words_is_not_a_verbatim_error_line_hashing(hashing_ts):
    """Review F8: a held phrase bypasses the cosine floor; "you want to" (held by most tau-bench task texts)
    surfaced failures at cosine 0.08. A phrase needs 3 words that are not filler, or must read as an error."""
    hashing_ts.add(runs(GROK_NOT_FOUND))
    rt, ctx = Runtime(hashing_ts, ONLY_BY_TEXT), RuntimeContext(tenant="acme", now=BASE_TIME)
    assert all("you want to" in " ".join(t.task.lower().split()) for t in runs(GROK_NOT_FOUND)[:1])
    for filler in ("you want to", "You want to", "if you are"):
        assert rt.warnings(filler, ctx) == [], filler
    assert len(rt.warnings("Error: user not found", ctx, k=3)) == 3


def test_plan_from_scratch_is_said_when_only_warnings_are_shown_hashing(hashing_ts):
    """Review F1: with no exemplar shown the strategy line was always dropped, so an agent pasting an error line
    (grok-3's "Error: user not found") read "PAST RUNS: examples to adapt" and two warnings, never that no past
    run is close enough to plan from. Only a line pointing to a run to follow is dropped when none is shown."""
    hashing_ts.add(runs(GROK_NOT_FOUND))
    far = RuntimeConfig(advice=AdviceConfig(novelty=NoveltyConfig(0.99, 0.98, per_tenant=False)))
    ctx = RuntimeContext(tenant="acme", now=BASE_TIME)
    for fmt in ("text", "json"):
        shown = Runtime(hashing_ts, far).context_for("Error: user not found", ctx, fmt=fmt)
        assert shown.strategy.value == "plan_from_scratch" and shown.exemplars == [] and shown.warnings
        assert shown.data["strategy"] == "plan_from_scratch" and "plan from scratch" in shown.text


def test_runs_of_retired_env_versions_are_reported_from_the_new_envs_context_hashing(hashing_ts):
    """Review F4: reading only the runs inside the context made ``retired_env_versions`` a no-op from the agent's
    own (new-env) context, the natural call. The retired env's runs are judged (not by this env's tools); runs
    of other, unnamed envs stay outside."""
    hashing_ts.add([*runs(TAU_TASK0, env_version="airline-v0"), *runs(TAU_TASK1, env_version="airline-v1"),
                    *runs(SWE, env_version="swe-v1")])
    rt = Runtime(hashing_ts)
    ctx = RuntimeContext(tenant="acme", env_version="airline-v1", tools_available=["respond"])
    report = rt.staleness_report(ctx, StalenessRules(retired_env_versions=("airline-v0",)))
    retired = {t.trajectory_id for t in runs(TAU_TASK0)}
    assert {s.trajectory_id: s.reasons for s in report if s.trajectory_id in retired} == {
        tid: ["env version airline-v0 is retired"] for tid in retired}
    assert {s.trajectory_id for s in report} == retired | {one(TAU_TASK1, "airline-1").trajectory_id}


def test_lookups_are_by_key_and_a_tasks_own_runs_need_one_search_hashing(hashing_ts, monkeypatch):
    """Review F0: exemplars read the task texts of candidates that came by their summary with a filtered scan
    of the table (30 ms of a 60 ms call on 830 runs; 0.8 ms by key), and warnings searched the task rows twice
    for a task's own runs: once for its failures, once more for a successful run to take the fix from.
    Plumbing (hashing embedder) on the real fixtures; ``pool_factor`` 1 so that summaries bring candidates."""
    failed, passed = sorted(runs(TAU_TASK0), key=lambda t: t.outcome.value)
    hashing_ts.add([failed, passed, *runs(TAU_TASK1), *runs(TAU2), *runs(GROK_102_103), *runs(SWE)])
    searched: list[tuple[str, ...]] = []
    search = TrajSearch.search_filtered
    monkeypatch.setattr(TrajSearch, "rows", lambda *args, **kw: pytest.fail("a filtered scan of the table"))
    monkeypatch.setattr(TrajSearch, "search_filtered",
                        lambda self, text, filters, **kw: searched.append(filters.levels) or search(self, text, filters, **kw))
    ctx = RuntimeContext(tenant="acme", now=BASE_TIME)
    narrow = RuntimeConfig(advice=replace(OPEN.advice, pool_factor=1))
    found = Runtime(hashing_ts, narrow).exemplars("respond get_user_details get_reservation_details", ctx, k=1)
    assert len(found.items) == 1 and ("summary",) in searched
    searched.clear()
    [warning] = Runtime(hashing_ts, OPEN).warnings(failed.task, ctx, k=1)
    assert warning.fix.startswith(f"a successful run of this task ({passed.trajectory_id})")
    assert searched == [("failure",), ("task",)]


# -- the tool's kind=steps results -------------------------------------------------------------------

#: a mini-swe-agent-derived agent's run whose step 11 fails with this line (see mini-swe-agent/.real/SOURCE.md)
ASTROPY_7166 = FIXTURES / "mini-swe-agent" / ".real" / "cs294-system-replies" / "astropy__astropy-7166.traj.json"
ASCII_ERROR = "UnicodeDecodeError: 'ascii' codec can't decode byte 0xc3 in position 12028: ordinal not in range(128)"
GEMINI_UNRESOLVED = FIXTURES / "mini-swe-agent" / ".real" / "gemini-3-pro-unresolved"


def test_a_steps_result_shows_the_pasted_error_line_hashing(hashing_ts):
    """Probe E, E1: the tool showed a matched window's first 300 and last 500 characters, whatever it held;
    the pasted line sat in the cut middle (79 of 126 real error lines). Plumbing only: the fast embedder."""
    hashing_ts.add(runs(ASTROPY_7166))
    result = Runtime(hashing_ts).tool(RuntimeContext(tenant="acme"))({"query": ASCII_ERROR, "kind": "steps", "k": 1})
    (found,) = result["results"]
    # its marks are whole seconds with no response id: its first reply joins them in the attempt (round 27)
    assert found["provenance"]["trajectory_id"] == "gpt-5-mini.astropy__astropy-7166.3053dd0745"
    assert ASCII_ERROR in found["text"] and len(found["text"]) <= 800


def test_steps_results_left_out_for_the_budget_are_said_hashing(hashing_ts):
    """Probe E, E1: results that did not fit the result budget were dropped silently (k=5 gave 2 runs)."""
    hashing_ts.add(runs(GEMINI_UNRESOLVED))
    ctx = RuntimeContext(tenant="acme")
    ample = SearchPastRuns(hashing_ts, ctx)({"query": "python manage.py test", "kind": "steps", "k": 3})
    assert len(ample["results"]) == 3 and "omitted" not in ample
    tight = SearchPastRuns(hashing_ts, ctx, result_tokens=300)({"query": "python manage.py test", "kind": "steps",
                                                               "k": 3})
    assert 1 <= len(tight["results"]) < 3
    assert tight["omitted"] == 3 - len(tight["results"]) and "left out" in tight["note"]


#: a SWE-bench run of mini-swe-agent (deepseek-chat) whose test run ends in this line (tests/fixtures/mini-swe-agent)
MARSHMALLOW_ERROR = "TypeError: 'NoneType' object is not subscriptable"


def test_a_steps_result_says_what_ranked_it_hashing(hashing_ts):
    """Probe rev2, R2-1: a pasted error line's exact hit ranks first but its only number was the cosine, the
    lowest of the results (0.226 over 0.437, 0.422, ...): the model read the exact hit as the weakest. Each
    result now says whether it holds the query (what ranks it first) and the ranking's score beside the
    cosine. Plumbing: the fast embedder."""
    hashing_ts.add([*runs(SWE), *runs(ASTROPY_7166), *runs(GEMINI_UNRESOLVED)])
    tool = SearchPastRuns(hashing_ts, RuntimeContext(tenant="acme"), result_tokens=4000)
    results = tool({"query": MARSHMALLOW_ERROR, "kind": "steps", "k": 3})["results"]
    assert len(results) == 3
    first, *rest = (r["provenance"] for r in results)
    assert first["trajectory_id"].split(".")[1] == "marshmallow-code__marshmallow-1343" and first["holds_query"] is True
    assert MARSHMALLOW_ERROR in results[0]["text"]
    assert [p["holds_query"] for p in rest] == [False, False]
    scores = [p["score"] for p in (first, *rest)]
    assert scores == sorted(scores, reverse=True) and all("similarity" in p for p in (first, *rest))


def test_a_budget_too_small_for_any_result_says_none_is_shown_hashing(hashing_ts):
    """Probe rev2, R2-4: with no result fitting the budget the tool said "(3 more past run(s) left out ...)"
    beside an empty list, for every kind."""
    hashing_ts.add([*runs(TAU_TASK0), *runs(TAU_FAILED), *runs(GROK_NOT_FOUND)])
    for kind in ("steps", "exemplars", "failures"):
        tool = SearchPastRuns(hashing_ts, RuntimeContext(tenant="acme"), advice=OPEN.advice, result_tokens=20)
        result = tool({"query": "cancel my reservation and get a refund", "kind": kind, "k": 3})
        assert result["results"] == [] and result["omitted"] >= 1, (kind, result)
        assert "left out" in result["note"] and " more " not in result["note"], (kind, result["note"])


# -- exemplars: no run of another domain lifted over the novelty threshold by its bonuses ----------------

#: real coding runs of mini-swe-agent (SWE-bench), each trimmed (see the SOURCE.md beside them)
CODING = [FIXTURES / "mini-swe-agent" / ".real" / name
          for name in ("gemini-3-pro-unresolved", "gemini_3_pro", "pasted-failure-ends")]


def test_an_exemplar_below_the_novelty_threshold_needs_more_than_its_bonuses(model_ts):
    """Probe p43 E2: in a tenant holding coding runs and tau-bench airline dialogues, a short coding task got an
    airline run as an exemplar (cosine 0.15 here, 0.19 in the probe's tenant), lifted over the coding runs by
    the bonuses every candidate gets (graded: quality 1.0; the coding runs are "submitted, not evaluated").
    A run below the novelty threshold stays only when its work says it is near (code the task names, the
    likely files, steps near the task, the calls the task names): the airline run has none. ``cover_steps``
    0: in a tenant this small the nearest step rows are every run's (the probe's, 284 runs, shows it with
    the defaults)."""
    model_ts.add([run for path in CODING for run in runs(path)] + runs(TAU_TASK0) + runs(TAU_TASK1))
    ctx = RuntimeContext(tenant="acme", now=BASE_TIME)
    found = Runtime(model_ts, RuntimeConfig(advice=AdviceConfig(cover_steps=0))).exemplars(
        "pydicom: allow changing the PatientName of a dataset", ctx)
    assert found.strategy.value == "use_as_inspiration"  # a pydicom run is near enough (0.33)
    shown = [e.trajectory_id for e in found.items]
    assert "deepseek-chat.pydicom__pydicom-1413.d0ea065da1" in shown
    assert not [t for t in shown if t.startswith("tau-")], shown


#: real gemini-3-pro mini-swe-agent runs of SWE-bench Verified, trimmed (see .real/SOURCE.md): sphinx-9698 changed
#: sphinx/domains/python.py, scikit-learn-10297 sklearn/linear_model/ridge.py; scikit-learn-14087 gives the task
NAMESAKES = FIXTURES / "mini-swe-agent" / ".real" / "gemini-3-pro-namesakes"


def test_a_word_of_the_tasks_prose_names_no_module(model_ts):
    """Probe E2 (E2-2): the scikit-learn issue's version banner (``python: 3.6.7``, ``.../bin/python``) and its
    code fence (```` ```python ````) are no mention of sphinx's ``domains/python.py``; counted as one, they gave
    the sphinx run ``touched`` 1.0 and kept it, below the novelty threshold, as the first exemplar. What a task
    names is its identifiers (``LogisticRegressionCV``, ``sklearn.linear_model``, the paths of its traceback).
    ``cover_steps`` and ``likely_files_looked_up`` 0: in a tenant of two runs every step row is among the nearest
    and every file changed among the likeliest (the probe's tenant, 119 runs, shows it with the defaults)."""
    task = one(NAMESAKES / "scikit-learn__scikit-learn-14087.traj.json", "scikit-learn__scikit-learn-14087").task
    assert "python: 3.6.7" in task and "```python" in task
    sphinx = one(NAMESAKES / "sphinx-doc__sphinx-9698.traj.json", "sphinx-doc__sphinx-9698")
    assert "sphinx/domains/python.py" in touched(sphinx).changed  # the premise: the sphinx run changed python.py
    model_ts.add(runs(NAMESAKES / "sphinx-doc__sphinx-9698.traj.json")
                 + runs(NAMESAKES / "scikit-learn__scikit-learn-10297.traj.json"))
    ctx = RuntimeContext(tenant="acme", now=BASE_TIME)
    found = Runtime(model_ts, RuntimeConfig(advice=AdviceConfig(cover_steps=0, likely_files_looked_up=0))).exemplars(
        task, ctx)
    assert found.strategy.value == "use_as_inspiration"  # the scikit-learn run is near enough
    features = {e.trajectory_id.split(".")[1]: e.features for e in found.items}
    assert features["scikit-learn__scikit-learn-10297"]
    assert "sphinx-doc__sphinx-9698" not in features, features


#: tau-bench v1, gpt-4o airline: task 11 trial 0, the file's only successful run calling book_reservation (probe E, E4)
TAU_BOOKING = FIXTURES / "tau-bench" / ".runtime" / "gpt-4o-airline-booking-11.json"
TAU_EXEMPLARS_21_31 = FIXTURES / "tau-bench" / ".runtime" / "gpt-4o-airline-exemplars-21-31.json"


def test_a_run_making_the_call_the_task_names_is_a_candidate(model_ts):
    """Probe E, E4: for "Book me a one-way flight ...", the README's call rule gives the last place to the best run
    whose calls the task names, but candidates came only from task/summary cosine and code lookups, so the one
    run that booked (task 11: book a friend the same flights; cosine 0.28) was never among them and the place
    went to a cancellation (31-t0). The task's words are now looked up among the runs' state-changing calls.
    ``pool_factor`` 1 (three candidates a leg) stands in for the probe's 200-run tenant, where 33 candidates left
    it out."""
    model_ts.add(runs(TAU_EXEMPLARS_21_31) + runs(TAU_TASK1) + runs(TAU_BOOKING) + runs(TAU_FAILED))
    ctx = RuntimeContext(tenant="acme", now=BASE_TIME)
    found = Runtime(model_ts, RuntimeConfig(advice=AdviceConfig(pool_factor=1))).exemplars(
        "Book me a one-way flight from JFK to SEA on May 20 in economy", ctx)
    assert found.strategy.value == "use_as_inspiration"
    shown = [e.trajectory_id for e in found.items]
    assert len(shown) == 3 and shown[-1] == "tau-gpt-4o-airline-booking-11-11-t0", shown
    assert "book_reservation" in [a.action for a in found.items[-1].digest.actions]


#: a real successful run (sqlfluff-2419) whose step 10 met ``NO_PYTEST`` and whose step 11 installed pytest
RECOVERED = FIXTURES / "mini-swe-agent" / ".real" / "recovered-pytest"
NO_PYTEST = "ModuleNotFoundError: No module named 'pytest'"


def test_a_pasted_error_shows_a_run_that_got_past_it_apart_from_the_failed_runs(model_ts):
    """Bug (probe RT4): an agent mid-task pasting its failing step's error got ``no_similar_failures`` for 77 of 77
    real error lines, since warnings show only failed runs, though 53 of them had been met and got past by a
    successful run of another task. Such a run is shown as a recovery, labelled apart from the warnings: the step
    that met the error and what the run did next; a failed run meeting the error stays a warning; and a run of the
    agent's own task left out (``exclude_trajectory_ids``) is no recovery either."""
    report = OutcomeTable.load(GEMINI_WARNINGS / "sb-cli-report.json")
    failed = [p.trajectory for p in read_dump(GEMINI_WARNINGS, tenant="acme", outcomes=report)]
    recovered = [p.trajectory for p in read_dump(RECOVERED, tenant="acme")]
    assert [r.outcome.value for r in recovered] == ["success"]
    model_ts.add([*failed, *recovered])
    rt, ctx = Runtime(model_ts), RuntimeContext(tenant="acme", now=BASE_TIME)

    answer = rt.advice("warnings", NO_PYTEST, ctx)
    assert answer.reason == "" and len(answer.items) == 1
    item = answer.items[0]
    assert item["provenance"]["trajectory_id"] == recovered[0].trajectory_id
    assert item["provenance"]["outcome"] == "success" and item["view"]["label"] == "how a past run got past this"
    assert item["view"]["step_holding"].startswith("[step 10]") and NO_PYTEST in item["view"]["step_holding"]
    assert item["view"]["next_step"].startswith("[step 11]") and "pip install pytest" in item["view"]["next_step"]
    assert "## Recovery 1: HOW A PAST RUN GOT PAST THIS" in answer.text and "## Warning" not in answer.text
    assert "pip install pytest" in answer.text and rt.counter.count(answer.text) <= rt.config.format.budget_tokens

    warned = rt.warnings(REPRODUCE_APP, ctx, k=3)  # met only by failed runs: warnings, no recovery
    assert len(warned) == 2 and warned.recoveries == []
    assert rt.warnings(NO_PYTEST, ctx, exclude_trajectory_ids=[recovered[0].trajectory_id]).recoveries == []
    prompt = rt.context_for(NO_PYTEST, ctx)  # the agent's prompt shows it too, and lists it as seen
    assert [r.trajectory_id for r in prompt.recoveries] == [recovered[0].trajectory_id] and "Then did:" in prompt.text

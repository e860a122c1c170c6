"""Benchmark-harness outputs (tau-bench, tau2-bench, Harbor's ATIF trials) on real files a probe found misread.

Each test reads a real file (or a trimmed excerpt of one) through the public reader; the sources are in the
``SOURCE.md`` beside each fixture.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from trajsearch.model import Outcome

from adapter_support import only

FIXTURES = Path(__file__).parent / "fixtures"
TAU = FIXTURES / "tau-bench/.real"


def test_tau_bench_crash_with_an_empty_message_is_an_infra_error_named_by_its_traceback() -> None:
    """Bug (real: arnursabet/tau-bench-a2a's human-user run, whose ``input()`` hit EOF): ``run.py`` writes
    ``"error": str(e)``, and ``str(EOFError())`` is ""; the run was rejected for a missing instruction."""
    run = only(TAU / "rule-based-rule-based-0.0_range_0--1_user-gpt-4o-human_1022210038.json")
    assert (run.outcome, run.reward, run.steps) == (Outcome.infra_error, None, [])
    assert run.failure.error == "run crashed: EOFError"
    assert "crashed" in run.task and run.task_id.endswith("-0")


HARBOR_CLAUDE = FIXTURES / "atif/.real/harbor-datagen/fix-async-worker-queue__gPApBGF/agent/trajectory.json"


def test_harbor_claude_code_trial_is_the_main_threads_model_not_its_warm_up_subagents() -> None:
    """Bug (real: xdotli/harbor-datagen, claude-code 2.0.46 with Sonnet): Harbor's conversion took
    ``agent.model_name`` from the first step, Claude Code's warm-up of its Haiku Explore subagent
    (``is_sidechain``), so the Sonnet trial was filed under Haiku."""
    run = only(HARBOR_CLAUDE)
    assert run.model_id == "claude-sonnet-4-5-20250929"  # every main-thread step's; config: anthropic/claude-sonnet-4-5


HARBOR_RUNME = FIXTURES / "atif/.real/harbor-runme/2026-06-30__14-22-55/update-minor-deps__xQmAxjA"


def test_harbor_claude_code_model_rule_leaves_other_agents_model_as_their_agent_names_it() -> None:
    """Regression (review of 047ccd1): the main-thread-majority rule for Claude Code applied to every ATIF agent, so
    Harbor 0.25's Codex conversion (``agent.model_name`` ``gpt-5.5``, each step the route ``openai/gpt-5``) was
    filed under ``openai/gpt-5``. It has no subagent step; the agent's model stands."""
    run = only(FIXTURES / "atif/.real/harbor-0.25/codex-0171-proj4/agent/trajectory.json")
    assert run.model_id == "gpt-5.5"


def test_harbor_trials_are_grouped_by_the_task_their_result_names() -> None:
    """Bug: Harbor trials had no task id, though ``result.json`` names the task (``task_name``) and, when Harbor
    recorded one, its dataset (``source``): the k trials of one task looked unrelated. Regression (review of that
    fix): a local task's ``source`` is only the name of the folder holding it (runme's ``evals/tasks/...`` gives
    ``tasks``, Harbor's ``LocalDatasetConfig``: ``source=self.path...name``), which became the family."""
    run = only(HARBOR_CLAUDE)
    assert (run.task_id, run.task_family) == ("fix-async-worker-queue", None)  # source: null
    codex = only(HARBOR_RUNME / "agent/trajectory.json")
    assert (codex.task_id, codex.task_family) == ("runmedev/update-minor-deps", None)


def test_harbor_trial_of_a_registry_dataset_is_of_that_datasets_family(tmp_path: Path) -> None:
    """The runme trial as Harbor writes it for a registry dataset's task (``RegistryDatasetConfig``: the task's
    ``git_url`` set, ``source`` the dataset's name): the dataset is the family."""
    trial = tmp_path / HARBOR_RUNME.parent.name / HARBOR_RUNME.name
    shutil.copytree(HARBOR_RUNME.parent, trial.parent)
    result = json.loads((trial / "result.json").read_text())
    result["source"] = result["config"]["task"]["source"] = "terminal-bench"
    result["config"]["task"]["git_url"] = "https://github.com/laude-institute/terminal-bench.git"
    (trial / "result.json").write_text(json.dumps(result))
    assert only(trial / "agent/trajectory.json").task_family == "terminal-bench"


def test_harbor_trial_graded_low_with_no_verifier_output_has_no_failure_repeating_its_reward() -> None:
    """Regression (review of the verifier-failure fix): a step of a Harbor 0.25 multi-step trial graded 0 with no
    verifier output beside it got ``Failure(error="reward 0")``, which says nothing the reward does not."""
    run = only(FIXTURES / "atif/.real/harbor-0.25/hello-multi__pI7xYz/steps/test/agent/trajectory.json")
    assert (run.outcome, run.reward, run.failure) == (Outcome.failure, 0.0, None)


def test_tau_bench_reasoning_models_reasoning_content_is_the_thought() -> None:
    """Bug (real: deephyper/tau-bench, gpt-oss-20B served by vLLM): tau-bench saves ``message.model_dump()``, and the
    server keeps the model's reasoning in ``reasoning_content``, not as ``<think>`` in the content; it was dropped."""
    run = only(TAU / "tool-calling-gpt-oss-20B-1.0_range_0--1_user-Gemma-3-12B-llm_1007041735.json")
    lookup = next(s for s in run.steps if s.action == "find_user_id_by_name_zip")
    assert lookup.thought.startswith("We have first name Yusuf, last name Rossi, zip 19122.")
    answer = next(s for s in run.steps if s.action == "respond")
    assert answer.thought.startswith('The user says: "Good day!')
    assert answer.arguments["content"].startswith("Sure thing! I’ll need to confirm your account first.")
    assert all(s.thought for s in run.steps if s.action)


def test_tau2_reasoning_kept_only_in_the_raw_model_response_is_the_thought() -> None:
    """Bug (real: Lylinnnnn/tau2-bench, 2026 layout, qwen3-32b thinking behind vLLM): the agent's reasoning is only in
    ``raw_data.choices[0].message.reasoning_content``; every tool call had no thought."""
    run = only(FIXTURES / "tau2-bench/.real/reasoning-raw-data/results.json")
    calls = [s for s in run.steps if s.action not in (None, "respond")]
    assert [s.action for s in calls] == ["find_user_id_by_name_zip", "get_user_details"]
    assert calls[0].thought.startswith("Okay, let me start by understanding Yusuf's request.")
    assert calls[1].thought.startswith("Okay, let me figure out how to help Yusuf Rossi.")
    assert "Okay, let's see. The user is Yusuf Rossi" not in " ".join(s.thought or "" for s in run.steps)  # the user's


def test_tau_bench_call_to_a_tool_the_domain_lacks_is_an_error() -> None:
    """Bug (real: ck496/tau-bench-agents, a ReAct Qwen3-8B run): the agent called ``ask_for_order_ids``, which retail
    does not have; tau-bench's reply ``Unknown action ask_for_order_ids`` (``envs/base.py``) left the step no error."""
    run = only(TAU / "react-Qwen3-8B-0.0_range_0--1_user-Qwen3-32B-llm_0201005024.json")
    made_up = next(s for s in run.steps if s.action == "ask_for_order_ids")
    assert made_up.error == "Unknown action ask_for_order_ids"
    assert [s.error for s in run.steps if s.error] == ["Unknown action ask_for_order_ids", "Error: user not found"]


def test_harbor_trial_graded_low_says_which_verifier_tests_failed(tmp_path: Path) -> None:
    """Found by a probe (the same xdotli/harbor-datagen trial, reward 0.0): the failure was empty, though the
    verifier's CTRF report and pytest's summary in its output name the failing test and its assertion."""
    run = only(HARBOR_CLAUDE)
    assert (run.outcome, run.reward) == (Outcome.failure, 0.0)
    assert run.failure.error == ("reward 0: test_state.py::test_job_status_transitions failed: "
                                 "E AssertionError: Initial status should be pending")
    assert run.failure.cause == "verifier tests failed: test_state.py::test_job_status_transitions"
    trial = tmp_path / HARBOR_CLAUDE.parent.parent.name  # no CTRF report: pytest's summary
    shutil.copytree(HARBOR_CLAUDE.parent.parent, trial)
    (trial / "verifier/ctrf.json").unlink()
    without = only(trial / "agent/trajectory.json").failure
    assert without.error == "reward 0: ../tests/test_state.py::test_job_status_transitions failed: AssertionError: ..."
    assert without.cause == "verifier tests failed: ../tests/test_state.py::test_job_status_transitions"

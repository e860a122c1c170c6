"""Runtime outcomes that depend on similarity: the real all-MiniLM-L6-v2 and calibrated thresholds."""

from __future__ import annotations

import pytest

from trajsearch.model import Failure
from trajsearch.runtime import Runtime, RuntimeContext, Strategy
from trajsearch.search import TrajSearch

from conftest import BASE_TIME, failing_run, make_run

pytestmark = pytest.mark.model

CTX = RuntimeContext(tenant="acme", now=BASE_TIME)


@pytest.fixture(scope="module")
def library(tmp_path_factory, real_embedder):
    """One small library for the module (ingesting with the real model is the slow part)."""
    root = tmp_path_factory.mktemp("runtime-model")
    model_ts = TrajSearch.open(str(root / "milvus.db"), traces=str(root / "traces"), embedder=real_embedder)
    model_ts.add([
        make_run("pay-1", task="Fix the failing unit test in the payments service: rounding of refunds is off by a cent"),
        make_run("auth-1", task="The login endpoint returns 500 when the password contains unicode characters",
                 steps=[("bash", {"command": "pytest tests/test_auth.py"}, "UnicodeEncodeError: 'ascii' codec"),
                        ("edit", {"path": "src/auth.py"}, "encode password as utf-8"),
                        ("bash", {"command": "pytest tests/test_auth.py"}, "4 passed")]),
        make_run("pay-beta", tenant="beta", task="Fix the failing unit test in the payments service"),
        failing_run("yaml-1", "ModuleNotFoundError: No module named 'yaml'",
                    task="Load the service configuration from config.yaml at startup"),
    ])
    # the failure's cause and fix live only in the trace's failure record
    run = failing_run("yaml-2", "ModuleNotFoundError: No module named 'yaml'",
                      task="Read deployment settings from a YAML file when the app starts")
    model_ts.add([run.model_copy(update={"failure": Failure(error=run.failure.error, cause="PyYAML not installed",
                                                                fix="pip install pyyaml and pin it in requirements.txt")})])
    yield Runtime(model_ts)
    model_ts.close()


def test_novel_task_plans_from_scratch_with_no_exemplars(library):
    for task in ("Write a sonnet about the first snowfall of winter",
                 "How do I deduct home office expenses on my tax return?"):
        found = library.exemplars(task, CTX)
        assert found.strategy is Strategy.plan_from_scratch and found.items == []
        prompt = library.context_for(task, CTX)
        assert prompt.strategy is Strategy.plan_from_scratch and prompt.exemplars == [] and prompt.warnings == []
        assert prompt.text == ""


def test_similar_task_gets_labelled_exemplars_from_its_own_tenant(library):
    same = library.exemplars("Fix the failing unit test in the payments service: rounding of refunds is off by a cent", CTX)
    assert same.strategy is Strategy.follow_closely and same.items[0].trajectory_id == "pay-1"
    related = library.exemplars("A payments unit test fails because refund amounts are rounded incorrectly", CTX)
    assert related.strategy is Strategy.use_as_inspiration
    assert related.items[0].trajectory_id == "pay-1"
    assert all(e.trajectory_id != "pay-beta" for e in related.items)


def test_warning_for_a_similar_failure_says_what_not_to_do(library):
    warned = library.warnings("Parse the YAML settings file when the service boots", CTX)
    assert warned and warned[0].trajectory_id in {"yaml-1", "yaml-2"}
    prompt = library.context_for("Read the app's YAML config on startup", CTX)
    assert "WHAT NOT TO DO" in prompt.text and "ModuleNotFoundError" in prompt.text
    assert "Fix: pip install pyyaml" in prompt.text and "Cause: PyYAML not installed" in prompt.text
    # an unrelated failure is not worth a warning
    assert library.warnings("Write a haiku about the ocean at dawn", CTX) == []


def test_tool_on_the_real_model(library):
    tool = library.tool(CTX)
    result = tool({"query": "ModuleNotFoundError: No module named 'yaml'", "kind": "failures", "k": 2})
    assert result["status"] == "ok" and {r["provenance"]["trajectory_id"] for r in result["results"]} <= {"yaml-1", "yaml-2"}
    novel = tool({"query": "Plan a week of vegetarian dinners", "kind": "exemplars"})
    assert novel["strategy"] == "plan_from_scratch" and novel["results"] == []

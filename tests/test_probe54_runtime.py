"""Probe 54 (RT3): the agent runtime's context, as an agent and its callers get it, on real runs (tau-bench airline
task 0, the fixture probe 53 used), through the ``Runtime`` verbs, the gRPC client on loopback and ``trajsearch mcp``
over stdio with the ``mcp`` package's own client.
"""

from __future__ import annotations

import asyncio
import json

from trajsearch.runtime import Runtime, RuntimeContext
from trajsearch.runtime.tool import BUDGET_TOO_SMALL, NO_RESULTS

from test_probe53_runtime import _runs, TAU_AIRLINE


# -- 2: the Python API's empty answer says why, as the service's does -------------------------------------


def test_an_empty_python_answer_says_why_and_stays_empty(hashing_ts):
    """``Runtime.advice`` answered an empty ContextResult with text and json "" and no word why, where the service
    and the CLI say it (``no_runs_in_versions``: the context asks for a version no run was recorded with). It says
    why in ``reason`` and ``note``, the tool's words; text and json stay "" for callers that test for them."""
    runs = _runs(TAU_AIRLINE, env_version="v1")
    hashing_ts.add(runs)
    rt, task = Runtime(hashing_ts), runs[0].task
    cases = {  # (tenant, env version) -> the reason for exemplars and for warnings
        ("acme", "v9"): ("no_runs_in_versions", "no_failures_in_versions"),
        ("empty", "v1"): ("no_successful_runs", "no_failed_runs"),
    }
    for (tenant, env), reasons in cases.items():
        for kind, tool_kind, reason in zip(("exemplars", "warnings"), ("exemplars", "failures"), reasons):
            said = rt.advice(kind, task, RuntimeContext(tenant=tenant, env_version=env))
            assert said.items == [] and said.text == "" and said.json == "", (tenant, kind)
            assert (said.reason, said.note) == (reason, NO_RESULTS[tool_kind][reason]), (tenant, kind)
    unlike = rt.advice("exemplars", "zqxj vwkp flurbo glimmix", RuntimeContext(tenant="acme", env_version="v1"))
    assert unlike.reason == "no_similar_runs" and unlike.strategy == "plan_from_scratch"
    found = rt.advice("exemplars", task, RuntimeContext(tenant="acme", env_version="v1"))
    assert found.items and (found.reason, found.note) == ("", "")  # something found: nothing to explain


def test_the_grpc_clients_empty_answer_says_why_in_the_same_fields(tmp_path):
    """The Python client of the service read the reason only out of the answer's json; its ContextResult has it in
    ``reason`` and ``note`` as the embedded API's has."""
    from trajsearch.service.client import Client
    from trajsearch.service.validate import Limits

    from service_support import key_ring, serve_store

    runs = _runs(TAU_AIRLINE, env_version="v1")
    keys, ring = key_ring(acme=dict(tenant="acme", role="read"))
    server = serve_store(tmp_path, ring, runs, Limits())
    try:
        with Client(server.address, keys["acme"]) as client:
            empty = client.warnings(runs[0].task, env_version="v9")
            found = client.exemplars(runs[0].task, env_version="v1")
    finally:
        server.stop(grace=2)
    assert (empty.reason, empty.note) == ("no_failures_in_versions", NO_RESULTS["failures"]["no_failures_in_versions"])
    assert found.items and found.reason == ""


# -- 4: the MCP tool's errors say how many searches are left -------------------------------------------------


def test_mcp_tool_errors_say_the_searches_left(tmp_path):
    """``trajsearch mcp`` over stdio, a server with a cap of 3. A call refused for its arguments (``k=0``) answered
    a plain ``invalid arguments ...`` tool error: unlike every other answer, no ``searches_left``, so the model
    could not tell whether the failed call had cost one of its searches. Tool errors now read as the tool's own
    error answers do: ``status``, ``error``, and ``searches_left`` as the session's last answer left it (none
    before the first answer: the cap is the server's)."""
    from trajsearch.service.validate import Limits

    from service_support import key_ring, mcp_session, serve_store

    runs = _runs(TAU_AIRLINE)
    keys, ring = key_ring(acme=dict(tenant="acme", role="read"))
    server = serve_store(tmp_path, ring, runs, Limits())  # search cap 3
    script = [{"query": "x", "k": 0}, {"query": runs[0].task}, {"query": runs[0].task, "k": 0},
              {"query": runs[0].task, "tenant": "beta"}, {"query": runs[0].task, "kind": "failures"}]
    try:
        tools, results = asyncio.run(asyncio.wait_for(mcp_session(server.address, keys["acme"], script), 600))
    finally:
        server.stop(grace=2)
    # the description the model reads says so: it had said "an error answer has none" (review of probe 54, 2)
    described = tools[0].description
    assert "an error answer has none" not in described and "before your first search" in described
    answers = [json.loads(r.content[0].text) for r in results]
    assert [r.is_error for r in results] == [True, False, True, True, False]
    before, first, refused, extra, second = answers
    assert before["status"] == "error" and "k: " in before["error"] and "searches_left" not in before
    assert first["searches_left"] == 2
    assert refused["status"] == "error" and "k: " in refused["error"] and refused["searches_left"] == 2
    assert "tenant: unknown argument" in extra["error"] and extra["searches_left"] == 2
    assert second["searches_left"] == 1  # the refused calls spent nothing, as they said


# -- 1 and 3: the agent's context names each run by id; its data keeps the trace URI --------------------------


def test_the_agents_context_names_runs_by_id_and_a_json_context_at_250_shows_one(hashing_ts):
    """tau-bench airline task 0. ``context_for(fmt="json", budget=250)`` showed no run: the briefest exemplar's
    JSON was 182 tokens, 111 of them its provenance, ~70 of those its trace URI (``file:///...`` in this host's
    trace store, which an agent elsewhere cannot open), beside 88 of header and strategy. The text form named the
    URI in every ``source:`` line but the briefest: on the shared dumps a quarter of a 500-1,000-token context.
    The agent's context (text and JSON) names each run by its trajectory id; ``.data``, the ``PromptContext``'s
    runs and ``Runtime.advice``'s items and JSON keep the URI, for an audit of what the agent saw."""
    runs = _runs(TAU_AIRLINE)
    hashing_ts.add(runs)
    rt, ctx = Runtime(hashing_ts), RuntimeContext(tenant="acme")
    task = runs[0].task
    at_250 = rt.context_for(task, ctx, fmt="json", budget=250)
    shown = json.loads(at_250.text)
    assert [v["provenance"]["trajectory_id"] for v in shown["exemplars"]] == ["tau-gpt-4o-airline-mini-0-t1"]
    assert shown["strategy"] == "follow_closely" and at_250.tokens <= 250
    assert rt.counter.count(at_250.text) == at_250.tokens
    for fmt in ("text", "json"):
        for budget in (250, 500, 2000):
            context = rt.context_for(task, ctx, fmt=fmt, budget=budget)
            assert context.exemplars and "trace_uri" not in context.text and "file://" not in context.text
            assert rt.counter.count(context.text) == context.tokens <= budget
            assert all(v["provenance"]["trace_uri"].startswith("file://") for v in context.data["exemplars"])
            assert context.exemplars[0].trace_uri.startswith("file://")
    advice = rt.advice("exemplars", task, ctx, budget=500)  # the engineer's view: items and JSON keep the URI
    assert "trace_uri" not in advice.text
    assert advice.items[0]["provenance"]["trace_uri"].startswith("file://")
    assert json.loads(advice.json)["exemplars"][0]["provenance"]["trace_uri"].startswith("file://")


# -- review of probe 54: a budget that leaves every run out says so; parallel calls' refusals ---------------------


def test_runs_the_budget_left_out_say_the_budget_not_that_none_was_close(hashing_ts, tmp_path):
    """tau-bench airline task 0 at a budget of 10: ``Runtime.advice`` found the run, rendered none, and said
    ``no_similar_runs`` ("No successful past run is close enough") and ``no_similar_failures``: the run was close,
    the budget too small. It says ``budget_too_small`` and how many were left out, at any budget that shows none
    (the left-out note is still the text where it fits), and the gRPC client reads the same from the service
    (whose budgets, 50 and up, always fit the note: its text and json are as before)."""
    from trajsearch.service.client import Client
    from trajsearch.service.validate import Limits

    from service_support import key_ring, serve_store

    runs = _runs(TAU_AIRLINE)
    hashing_ts.add(runs)
    rt, ctx, task = Runtime(hashing_ts), RuntimeContext(tenant="acme"), runs[0].task
    for kind in ("exemplars", "warnings"):
        for budget in (10, 50):
            said = rt.advice(kind, task, ctx, budget=budget)
            assert said.items == [] and said.reason == BUDGET_TOO_SMALL, (kind, budget, said.reason)
            assert said.note.startswith("1 past run(s) were found but left out"), said.note
            assert ("left out" in said.text) == (budget == 50)
        assert rt.advice(kind, task, ctx, budget=2000).items  # the budget was why
    keys, ring = key_ring(acme=dict(tenant="acme", role="read"))
    server = serve_store(tmp_path / "served", ring, runs, Limits())
    try:
        with Client(server.address, keys["acme"]) as client:
            over_grpc = [client.exemplars(task, token_budget=50), client.warnings(task, token_budget=50)]
    finally:
        server.stop(grace=2)
    for said in over_grpc:
        assert said.items == [] and said.reason == BUDGET_TOO_SMALL and "left out" in said.note
        assert said.text == "(1 past run(s) left out to stay within the token budget.)"
        assert json.loads(said.json)["omitted"] == 1


def test_parallel_calls_of_one_session_leave_their_refusals_the_fewest_searches():
    """Two searches of one MCP session made together end in any order: the one ending last (2 left) overwrote the
    other's 1, and the next refused call told the model it had 2 searches left. A refusal says the fewest any of
    the session's answers said; another session keeps its own."""
    from types import SimpleNamespace

    from trajsearch.service.mcp_server import _Sessions

    sessions = _Sessions(60)
    ctx = SimpleNamespace(headers={"mcp-session-id": "s1"})
    sid, other = sessions.id_of(ctx), sessions.id_of(SimpleNamespace(headers={"mcp-session-id": "s2"}))
    sessions.searched(ctx, sid, {"status": "ok", "searches_left": 1})  # the later search ends first
    sessions.searched(ctx, sid, {"status": "ok", "searches_left": 2})
    sessions.searched(ctx, other, {"status": "ok", "searches_left": 3})
    assert json.loads(str(sessions.refused(sid, "k: too big")))["searches_left"] == 1
    assert json.loads(str(sessions.refused(other, "k: too big")))["searches_left"] == 3

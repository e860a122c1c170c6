"""Probe 53 (RT2): the agent runtime's leftovers, as its user sees them, on real runs.

Each test goes through a public interface (the ``Runtime`` verbs, the gRPC service on loopback, ``trajsearch mcp``
over stdio with the ``mcp`` package's own client) on real files kept under tests/fixtures (their SOURCE.md says
where each came from).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from trajsearch.ingest.read import read_dump
from trajsearch.model import Trajectory
from trajsearch.runtime import Runtime, RuntimeContext

FIXTURES = Path(__file__).parent / "fixtures"
#: tau-bench v1, gpt-4o airline: task 0, a failed and a successful trial
TAU_AIRLINE = FIXTURES / "tau-bench" / "gpt-4o-airline-mini.json"


def _runs(*paths: Path, **update: object) -> list[Trajectory]:
    parsed = [p for path in paths for p in read_dump(path, tenant="acme")]
    assert all(p.trajectory is not None for p in parsed), [p.error for p in parsed]
    return [p.trajectory.model_copy(update=update) for p in parsed]


# -- 2: a negative budget is the caller's bug, said as such -----------------------------------------


def test_a_negative_budget_is_refused_naming_it(hashing_ts):
    """``context_for(budget=-1)`` returned "" as if no past run applied: a caller's arithmetic slip (a prompt
    budget minus what the prompt already holds) read as "plan from scratch". It is refused as ``fmt="xml"`` is."""
    runs = _runs(TAU_AIRLINE)
    hashing_ts.add(runs)
    rt, ctx = Runtime(hashing_ts), RuntimeContext(tenant="acme")
    for call in (lambda: rt.context_for(runs[0].task, ctx, budget=-1),
                 lambda: rt.advice("exemplars", runs[0].task, ctx, budget=-200)):
        with pytest.raises(ValueError, match="budget"):
            call()
    assert rt.context_for(runs[0].task, ctx, budget=0).text == ""  # no room at all: still nothing, as before


# -- 3: a small budget shows the smallest useful context when it fits --------------------------------


def _small_budget_contexts(rt: Runtime, task: str, ctx: RuntimeContext, budget: int) -> dict[str, object]:
    found = {"context": rt.context_for(task, ctx, budget=budget)}
    for kind in ("exemplars", "warnings"):
        found[kind] = rt.advice(kind, task, ctx, budget=budget)
    return found


def test_a_small_budget_shows_one_run_briefly_rather_than_only_a_note(hashing_ts):
    """tau-bench airline task 0, a failed and a successful trial. At 250 tokens (gRPC takes 50 and up) the
    Python API and the service answered only "(1 past run(s) left out to stay within the token budget.)": the
    barest exemplar (goal to 200 characters, its outcome) cost 186 tokens beside 79 of header and strategy, the
    barest warning 283 (its cause and fix besides its error). The smallest useful context, one exemplar's goal,
    one warning's error, fits in 250: it is shown, inside the budget, where no run fits at its barest."""
    runs = _runs(TAU_AIRLINE)
    hashing_ts.add(runs)
    rt, ctx = Runtime(hashing_ts), RuntimeContext(tenant="acme")
    task = runs[0].task
    for budget in (250, 300):
        found = _small_budget_contexts(rt, task, ctx, budget)
        exemplars, warnings = found["exemplars"], found["warnings"]
        assert [i["provenance"]["trajectory_id"] for i in exemplars.items] == ["tau-gpt-4o-airline-mini-0-t1"]
        assert exemplars.strategy == "follow_closely"
        assert "Goal: You are mia_li_3668" in exemplars.text and "Outcome: success" in exemplars.text
        assert [i["provenance"]["trajectory_id"] for i in warnings.items] == ["tau-gpt-4o-airline-mini-0-t0"]
        assert "Error: reward 0.0" in warnings.text and "WHAT NOT TO DO" in warnings.text
        context = found["context"]
        assert len(context.exemplars) == 1 and context.strategy.value == "follow_closely"
        assert "Goal: You are mia_li_3668" in context.text
        # the runs shown keep their whole provenance (a log of what the agent saw), trace URI too
        assert context.exemplars[0].trace_uri.startswith("file://")
        assert all(i["provenance"]["trace_uri"] for i in [*exemplars.items, *warnings.items])
        for text in (exemplars.text, warnings.text, context.text):
            assert rt.counter.count(text) <= budget
    # at its briefest a run's source line names it by id: the trace store's path was ~95 of its ~150 tokens
    brief = rt.advice("warnings", task, ctx, budget=250)
    assert "source: trajectory_id=tau-gpt-4o-airline-mini-0-t0 |" in brief.text and "trace_uri" not in brief.text
    # where a run fits at its barest (the exemplar: 179 tokens with its trace URI, 116 without) none is shown brief:
    # brief runs beside it would take the budget its key actions rise with (without the URI: its booking)
    bare = rt.context_for(task, ctx, budget=300)
    assert (len(bare.exemplars), len(bare.warnings)) == (1, 0) and "- [2] book_reservation" in bare.text
    # a budget with room for the barer rendering still gets it, as before (cause and fix of the failure shown)
    roomy = rt.advice("warnings", task, ctx, budget=420)
    assert "Cause: book_reservation failed" in roomy.text and "Fix:" in roomy.text


def test_over_grpc_a_small_budget_gives_what_the_python_api_gives(tmp_path):
    """The same question and budget over gRPC: the same runs, the same text (the service renders with the runtime)."""
    from trajsearch.service.client import Client
    from trajsearch.service.validate import Limits

    from service_support import key_ring, serve_store

    runs = _runs(TAU_AIRLINE)
    keys, ring = key_ring(acme=dict(tenant="acme", role="read"))
    server = serve_store(tmp_path, ring, runs, Limits())
    try:
        with Client(server.address, keys["acme"]) as client:
            over_wire = {kind: getattr(client, kind)(runs[0].task, token_budget=250) for kind in ("exemplars", "warnings")}
        local = {kind: Runtime(server.service.ts).advice(kind, runs[0].task, RuntimeContext(tenant="acme"), budget=250)
                 for kind in ("exemplars", "warnings")}
    finally:
        server.stop(grace=2)
    for kind in ("exemplars", "warnings"):
        assert len(over_wire[kind].items) == 1, over_wire[kind].text
        assert over_wire[kind].text == local[kind].text
        assert over_wire[kind].strategy == local[kind].strategy


# -- 4: Exemplars / Warnings over a key pinned outside the asked versions say why -----------------------


def test_context_rpcs_outside_the_keys_pins_say_why(tmp_path):
    """A key pinned to env v2, a context asking for v1: ``Exemplars`` and ``Warnings`` answered an empty
    ContextResponse, text and json "", the same as "no past run is like this" (the tool says
    ``versions_not_readable``). The wire now says it in the existing fields: the text a prompt gets is the note,
    the json the reason and note, as the tool's answer has them."""
    from trajsearch.runtime.tool import NO_RESULTS, UNREADABLE
    from trajsearch.service.client import Client
    from trajsearch.service.validate import Limits

    from service_support import key_ring, serve_store

    runs = _runs(TAU_AIRLINE, env_version="v1")
    keys, ring = key_ring(pinned=dict(tenant="acme", role="read", key_id="pinned", env_versions=["v2"]))
    server = serve_store(tmp_path, ring, runs, Limits())
    try:
        with Client(server.address, keys["pinned"]) as client:
            exemplars = client.exemplars(runs[0].task, env_version="v1")
            warnings = client.warnings(runs[0].task, env_version="v1")
            readable = client.exemplars(runs[0].task, env_version="v2")  # inside the pins, no run: said why
    finally:
        server.stop(grace=2)
    assert exemplars.items == [] and exemplars.strategy == "plan_from_scratch"
    assert exemplars.text == NO_RESULTS["exemplars"][UNREADABLE]
    assert json.loads(exemplars.json) == {"reason": UNREADABLE, "note": NO_RESULTS["exemplars"][UNREADABLE]}
    assert warnings.items == [] and warnings.strategy == ""
    assert warnings.text == NO_RESULTS["failures"][UNREADABLE]
    assert json.loads(warnings.json)["reason"] == UNREADABLE
    assert readable.items == [] and json.loads(readable.json)["reason"] == "no_successful_runs"


# -- 1: the MCP tool's description tells no cap the server does not keep --------------------------------


def test_the_mcp_tools_description_does_not_state_a_cap_the_server_does_not_keep(tmp_path):
    """``trajsearch serve --search-cap 3`` behind ``trajsearch mcp``: the tool's description told the model "You
    have at most 4 searches per task" (the default) and its fourth search was refused; a server with a larger cap
    had its model stop early. The MCP server cannot know the cap before a search answers: the description says
    the searches are limited and each answer's ``searches_left`` tells how many remain, which each answer does."""
    import asyncio

    from trajsearch.service.validate import Limits

    from service_support import key_ring, mcp_session, serve_store

    runs = _runs(TAU_AIRLINE)
    keys, ring = key_ring(acme=dict(tenant="acme", role="read"))
    server = serve_store(tmp_path, ring, runs, Limits())  # search cap 3
    try:
        tools, results = asyncio.run(asyncio.wait_for(mcp_session(
            server.address, keys["acme"], [{"query": runs[0].task}]), 240))
    finally:
        server.stop(grace=2)
    (tool,) = tools
    assert "at most 4" not in tool.description
    assert "searches_left" in tool.description
    assert json.loads(results[0].content[0].text)["searches_left"] == 2


# -- review of RT2 (FRRT2) ---------------------------------------------------------------------------------

#: tau-bench v1 gpt-4o airline, trimmed: task 39 trials 0 (success) and 3 (failed), task 1 trial 1 (success)
TAU_39_1 = FIXTURES / "tau-bench" / ".probe53frt" / "gpt-4o-airline.json"


def test_a_budget_that_skips_the_same_tasks_run_does_not_say_follow_it_closely(hashing_ts):
    """Task 39 asked again: its own successful run (similarity 1.0) is the first exemplar, task 1's (0.695) the
    second. At 160 tokens the first does not fit even at its briefest and the second does: the context showed task
    1's run under "Strategy: follow_closely. A past run solved this same task" (review RRT2, 1). The strategy states
    what is shown: a related run to borrow from, ``use_as_inspiration``, in the text, the data and every caller's
    ``strategy``; where the first run fits it is still ``follow_closely``."""
    runs = _runs(TAU_39_1)
    hashing_ts.add(runs)
    rt, ctx = Runtime(hashing_ts), RuntimeContext(tenant="acme")
    task = next(r.task for r in runs if r.trajectory_id == "tau-gpt-4o-airline-39-t3")
    assert [e.trajectory_id for e in rt.exemplars(task, ctx).items] == \
        ["tau-gpt-4o-airline-39-t0", "tau-gpt-4o-airline-1-t1"]
    for budget in range(150, 260, 5):
        context = rt.context_for(task, ctx, budget=budget)
        advice = rt.advice("exemplars", task, ctx, budget=budget)
        assert rt.counter.count(context.text) <= budget and rt.counter.count(advice.text) <= budget
        for strategy, text, data, shown in (
                (context.strategy.value, context.text, context.data, [e.trajectory_id for e in context.exemplars]),
                (advice.strategy, advice.text, json.loads(advice.json or "{}"),
                 [i["provenance"]["trajectory_id"] for i in advice.items])):
            if not shown:
                assert strategy == "plan_from_scratch"
                continue
            expected = "follow_closely" if shown[0] == "tau-gpt-4o-airline-39-t0" else "use_as_inspiration"
            assert strategy == data["strategy"] == expected, (budget, shown)
            assert f"Strategy: {expected}." in text and ("this same task" in text) == (expected == "follow_closely")
    skipped = rt.context_for(task, ctx, budget=160)  # the budget the review found it at
    assert [e.trajectory_id for e in skipped.exemplars] == ["tau-gpt-4o-airline-1-t1"]
    assert skipped.strategy.value == "use_as_inspiration"
    tool = rt.tool(ctx)  # the tool's answer at a result budget that skips it alike
    for budget in range(100, 200, 5):
        tool.result_tokens, tool.used = budget, 0
        answer = tool({"query": task, "kind": "exemplars"})
        ids = [r["provenance"]["trajectory_id"] for r in answer["results"]]
        if ids and ids[0] != "tau-gpt-4o-airline-39-t0":
            assert answer["strategy"] == "use_as_inspiration", (budget, ids)


def test_grpc_context_rpcs_say_why_an_answer_is_empty_for_every_reason(tmp_path):
    """An unpinned key asking ``Exemplars`` / ``Warnings`` for env v9 (runs recorded with v1 only) got text '' and
    json '', only the pinned case said why (review RRT2, 2): the tool answered ``no_runs_in_versions``. The context
    RPCs answer with the tool's reason and note for every reason (the same words, worked out in one place)."""
    from trajsearch.runtime.tool import NO_RESULTS
    from trajsearch.service.client import Client
    from trajsearch.service.validate import Limits

    from service_support import key_ring, serve_store

    runs = _runs(TAU_AIRLINE, env_version="v1")
    keys, ring = key_ring(pinned=dict(tenant="acme", role="read", key_id="pinned", env_versions=["v2"]),
                          free=dict(tenant="acme", role="read", key_id="free"))
    server = serve_store(tmp_path, ring, runs, Limits())
    try:
        answers = {}
        for key, env in (("free", "v9"), ("pinned", "v2")):
            with Client(server.address, keys[key]) as client:
                for kind in ("exemplars", "warnings"):
                    context = getattr(client, kind)(runs[0].task, env_version=env)
                    tool = client.search_past_runs(
                        runs[0].task, session_id=f"{key}{kind}", kind="failures" if kind == "warnings" else kind,
                        env_version=env)
                    answers[key, kind] = context, tool
    finally:
        server.stop(grace=2)
    expected = {("free", "exemplars"): "no_runs_in_versions", ("free", "warnings"): "no_failures_in_versions",
                ("pinned", "exemplars"): "no_successful_runs", ("pinned", "warnings"): "no_failed_runs"}
    for (key, kind), reason in expected.items():
        context, tool = answers[key, kind]
        note = NO_RESULTS["exemplars" if kind == "exemplars" else "failures"][reason]
        assert tool["reason"] == reason
        assert context.items == [] and context.text == note, (key, kind, context.text)
        assert json.loads(context.json) == {"reason": reason, "note": note}
        assert context.strategy == ("plan_from_scratch" if kind == "exemplars" else "")


def test_brief_runs_keep_their_trace_uri_in_the_data(hashing_ts):
    """At its briefest a run's ``source:`` line leaves the trace URI out (~95 tokens); the JSON left it out too,
    though the README promises every item's provenance with its trace_uri (review RRT2, 3): an audit of what the
    agent saw (``.data``, ``.json``, the tool's trace spans) could not open the run. The text alone drops it (and
    the tool's answers, since review of probe 54, 4); the data keeps it."""
    runs = _runs(TAU_AIRLINE)
    hashing_ts.add(runs)
    rt, ctx = Runtime(hashing_ts), RuntimeContext(tenant="acme")
    task = runs[0].task
    for kind in ("exemplars", "warnings"):
        brief = rt.advice(kind, task, ctx, budget=250)
        assert len(brief.items) == 1 and "trace_uri" not in brief.text
        (view,) = json.loads(brief.json)[kind]
        assert view["provenance"]["trace_uri"].startswith("file://")
        assert brief.items[0]["view"]["provenance"]["trace_uri"].startswith("file://")
    context = rt.context_for(task, ctx, budget=250)
    assert context.data["exemplars"][0]["provenance"]["trace_uri"].startswith("file://")
    tool = rt.tool(ctx)
    for budget in range(150, 400, 10):
        tool.result_tokens, tool.used = budget, 0
        for kind in ("exemplars", "failures"):
            answer = tool({"query": task, "kind": kind})
            assert rt.counter.count(json.dumps({"results": answer["results"]}, ensure_ascii=False,
                                               separators=(",", ":"))) <= budget
            # the model's answer names each run by id (review of probe 54, 4): the tool's span keeps the URI
            assert all("trace_uri" not in r["provenance"] for r in answer["results"]), budget


@pytest.mark.parametrize("bad", [-100, True, float("nan"), 250.0, "250"])
def test_a_bad_result_budget_is_refused_where_it_is_set(hashing_ts, bad):
    """``SearchPastRuns(result_tokens=-100)`` was taken: each call then spent a search and answered "the search
    failed", the ValueError only in the log (review RRT2, 4). It is refused where it is set, as a budget that is not
    a whole number of tokens (True, NaN, 250.0, "250") is by ``render``."""
    from trajsearch.runtime import SearchPastRuns

    rt, ctx = Runtime(hashing_ts), RuntimeContext(tenant="acme")
    with pytest.raises((TypeError, ValueError), match="result_tokens"):
        SearchPastRuns(hashing_ts, ctx, result_tokens=bad)
    with pytest.raises((TypeError, ValueError), match="budget"):
        rt.context_for("book a flight", ctx, budget=bad)


def test_the_mcp_description_claims_searches_left_only_where_answers_have_it():
    """An MCP ToolError (refused arguments, the server unavailable) carries no ``searches_left``; the description
    said each answer's did (review RRT2, 6). It says each search's answer does."""
    from trajsearch.toolspec import description

    said = description(None)
    assert "each answer's searches_left" not in said
    assert "searches_left" in said and "error" in said


def test_the_readme_agent_section_keeps_to_120_columns():
    """README line 547 was 253 columns (review RRT2, 5): the agent section's small-budget paragraph is wrapped."""
    readme = (Path(__file__).parent.parent / "README.md").read_text(encoding="utf-8")
    start = readme.index("A budget too small for any exemplar leaves the strategy line out")
    paragraph = readme[readme.rindex("\n", 0, start) + 1: readme.index("(nothing rather than something wrong)", start)]
    assert "A negative budget" in paragraph or "is negative, is refused" in paragraph
    assert max(map(len, paragraph.splitlines())) <= 120

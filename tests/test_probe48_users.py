"""Probe 48 (area U, the users): what an agent runtime and an engineer get back from real runs.

Real inputs: tests/fixtures/tau-bench/.probe48/ (real tau-bench airline runs of
/work/shared/data/tau-bench/gpt-4o-airline.json, whole records; see SOURCE.md there).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

FIXTURES = Path(__file__).parent / "fixtures"
GIFT_CARD_LOOP = FIXTURES / "tau-bench" / ".probe48" / "gpt-4o-airline-gift-card-loop.json"
GIFT_CARD_ERROR = "Error: gift card balance is not enough"
#: the two runs of the file whose ``update_reservation_flights`` answered that error (tasks 23 and 3)
MET = ("tau-gpt-4o-airline-gift-card-loop-23-t1", "tau-gpt-4o-airline-gift-card-loop-3-t2")


def _shown(context: str) -> tuple[list[str], list[str]]:
    """The runs a rendered context shows, exemplars and warnings, in order."""
    blocks = re.split(r"\n\n(?=## )", context)
    ids = [(block.split("\n", 1)[0], re.search(r"trajectory_id=(\S+)", block)) for block in blocks]
    return ([m.group(1) for head, m in ids if m and head.startswith("## Example")],
            [m.group(1) for head, m in ids if m and head.startswith("## Warning")])


def test_the_loop_keeps_the_runtimes_ranking_of_warnings_and_exemplars(model_ts) -> None:
    """``Runtime.loop().run(error)`` re-sorted what it retrieved by cosine: the warnings of the two runs whose
    ``update_reservation_flights`` answered the pasted error (which ``warnings`` ranks first, holding the line)
    gave way to two runs a refined query found closer in wording that never met it, and reranked exemplars came
    back in cosine order. The loop's context now shows each retrieval's own ranking.

    Warnings go retrieval by retrieval, the caller's whole ranking first, a refinement's only filling places left
    free: ranked place by place instead, the refinement's top hit (task 8, which never met the error) took the
    second place from task 3, which did and which ``context_for`` shows there (review RU, 1)."""
    from trajsearch.ingest.read import read_dump
    from trajsearch.runtime import LoopConfig, Runtime, RuntimeContext

    model_ts.add([p.trajectory for p in read_dump(GIFT_CARD_LOOP, tenant="acme")])
    rt, ctx = Runtime(model_ts), RuntimeContext(tenant="acme")
    direct_warnings = [w.trajectory_id for w in rt.warnings(GIFT_CARD_ERROR, ctx)]
    assert sorted(direct_warnings) == sorted(MET)
    context_for = [w.trajectory_id for w in rt.context_for(GIFT_CARD_ERROR, ctx).warnings]
    assert context_for == direct_warnings

    result = rt.loop().run(GIFT_CARD_ERROR, ctx)  # refined once (its documents' cosines are low), then generated
    assert any(a.refined_query for a in result.actions)
    exemplars, warnings = _shown(result.context)
    assert warnings == context_for
    assert [d.item.trajectory_id for d in result.documents if d.kind == "warning"][:2] == context_for

    # one retrieval (no refinement): the context shows the runtime's own ranking, run for run
    single = rt.loop(config=LoopConfig(enable_refinement=False)).run(GIFT_CARD_ERROR, ctx)
    found = rt.exemplars(GIFT_CARD_ERROR, ctx, k=LoopConfig().depth.exemplars)
    assert _shown(single.context) == ([e.trajectory_id for e in found.items], direct_warnings[:2])


def test_the_loops_first_example_is_the_run_its_strategy_is_about() -> None:
    """Exemplars of the retrieval whose strategy the context states go first at each place: a refinement that found a
    run of this very task (``follow_closely``: "follow its approach closely", i.e. the first example) must not leave
    the first example to a loosely related run the caller's own words found. A scripted retriever stands in for the
    store here (the loop's merge is under test; the rankings themselves are the runtime's, tested above)."""
    from trajsearch.runtime import Exemplar, Retrieval, RetrievalLoop, RuntimeContext, Strategy

    def run(tid: str, similarity: float) -> Exemplar:
        return Exemplar(tid, f"file:///t/{tid}", "v1", similarity, similarity, {}, "text")

    script = {"please fix the failing payments test in src/pay.py":
              Retrieval(Strategy.use_as_inspiration, 0.5, [run("loose-1", 0.5), run("loose-2", 0.45)], []),
              "failing payments test src/pay.py":
              Retrieval(Strategy.follow_closely, 0.97, [run("same-task", 0.97), run("loose-1", 0.5)], [])}
    loop = RetrievalLoop(lambda query, ctx, k: script[query],
                         lambda strategy, exemplars, warnings, recoveries: f"{strategy.value}: " + ",".join(
                             e.trajectory_id for e in exemplars))
    result = loop.run("please fix the failing payments test in src/pay.py", RuntimeContext(tenant="acme"))
    assert any(a.refined_query == "failing payments test src/pay.py" for a in result.actions)
    assert result.context == "follow_closely: same-task,loose-1,loose-2"


def test_a_run_two_retrievals_found_is_one_copy_of_it() -> None:
    """A run found by the caller's query and again by a refinement is kept as the copy at its better place; its
    ``Document.similarity`` had been the higher of the two cosines while the item (what the context shows, and the
    documents' ``similarity``) kept the kept copy's: the loop's confidence, which decides sufficiency and is
    reported, was worked out from numbers the agent never saw (review RU, 3). Item, similarity and query now come
    from one copy. A scripted retriever stands in for the store (the merge is under test)."""
    from trajsearch.runtime import Exemplar, FailureWarning, Retrieval, RetrievalLoop, RuntimeContext, Strategy

    def run(tid: str, similarity: float) -> Exemplar:
        return Exemplar(tid, f"file:///t/{tid}", "v1", similarity, similarity, {}, "text")

    def failed(tid: str, similarity: float) -> FailureWarning:
        return FailureWarning(tid, f"file:///t/{tid}", "v1", similarity, "the task", "Error: x")

    asked, refined = "please fix the failing payments test in src/pay.py", "failing payments test src/pay.py"
    script = {asked: Retrieval(Strategy.use_as_inspiration, 0.5, [run("a", 0.5), run("b", 0.45)], [failed("w", 0.4)]),
              refined: Retrieval(Strategy.use_as_inspiration, 0.9, [run("b", 0.9), run("a", 0.6)], [failed("w", 0.8)])}
    loop = RetrievalLoop(lambda query, ctx, k: script[query], lambda strategy, exemplars, warnings, recoveries: "context")
    result = loop.run(asked, RuntimeContext(tenant="acme"))
    assert any(a.refined_query == refined for a in result.actions)
    kept = {d.item.trajectory_id: d for d in result.documents}
    assert [d.item.trajectory_id for d in result.documents] == ["b", "a", "w"]
    for tid, query, similarity in (("b", refined, 0.9), ("a", asked, 0.5), ("w", asked, 0.4)):
        assert (kept[tid].query, kept[tid].similarity, kept[tid].item.similarity) == (query, similarity, similarity)
    assert result.confidence == (0.9 + 0.5) / 2


def test_a_context_showing_no_exemplar_states_no_strategy_to_follow(tmp_path: Path, home: Path) -> None:
    """A budget too small for any exemplar leaves the strategy line out of the text (a "follow it closely" with no
    run under it misleads), yet ``PromptContext.strategy``, ``exemplars --json`` (the service's ``Exemplars``),
    the tool's ``strategy`` and the loop's ``LoopResult.strategy`` still said ``follow_closely`` beside no example:
    a runtime choosing its prompt by the strategy told the agent to follow a run it never showed. They now say what
    the context leaves the agent with: ``plan_from_scratch`` (the loop's since review RU, 2)."""
    from typer.testing import CliRunner

    from trajsearch.cli import app
    from trajsearch.embed import HashingEmbedder
    from trajsearch.ingest.read import read_dump
    from trajsearch.runtime import FormatConfig, Runtime, RuntimeConfig, RuntimeContext, Strategy
    from trajsearch.search import TrajSearch

    with TrajSearch.open(str(tmp_path / "m.db"), traces=str(tmp_path / "t"), embedder=HashingEmbedder()) as ts:
        runs = [p.trajectory for p in read_dump(GIFT_CARD_LOOP, tenant="acme")]
        ts.add(runs)
        task = next(r.task for r in runs if r.outcome.value == "success")  # a run of this very task succeeded
        rt, ctx = Runtime(ts), RuntimeContext(tenant="acme")
        assert rt.context_for(task, ctx).strategy is Strategy.follow_closely
        for fmt in ("text", "json"):
            small = rt.context_for(task, ctx, budget=50, fmt=fmt)
            assert not small.exemplars and small.data["omitted"]
            assert small.strategy is Strategy.plan_from_scratch, fmt
        tool = rt.tool(ctx)
        tool.result_tokens = 40
        answer = tool({"query": task[:1900], "kind": "exemplars", "k": 1})
        assert answer["results"] == [] and answer["omitted"] == 1 and answer["strategy"] == "plan_from_scratch"

        assert rt.loop().run(task, ctx).strategy is Strategy.follow_closely
        small_rt = Runtime(ts, RuntimeConfig(format=FormatConfig(budget_tokens=150)))
        looped = small_rt.loop().run(task, ctx)  # only the note that the runs were left out
        assert "## Example" not in looped.context and "Strategy:" not in looped.context
        assert looped.strategy is Strategy.plan_from_scratch
        assert looped.to_dict()["strategy"] == "plan_from_scratch"

    cli = CliRunner()
    assert cli.invoke(app, ["ingest", str(GIFT_CARD_LOOP), "-t", "acme", "--quiet"]).exit_code == 0
    shown = json.loads(cli.invoke(app, ["exemplars", task, "-t", "acme", "--json"]).stdout)
    assert shown["strategy"] == "follow_closely" and shown["items"]
    small = json.loads(cli.invoke(app, ["exemplars", task, "-t", "acme", "--budget", "50", "--json"]).stdout)
    assert small["items"] == [] and small["strategy"] == "plan_from_scratch"


def test_a_pasted_run_id_with_whitespace_around_it_is_that_run(home: Path, monkeypatch) -> None:
    """An id copied with its line's newline or a leading space (``show "ID "``, ``similar --id " ID"``) was refused
    with the id pattern; the whitespace is no part of any id, and ``show``, ``similar`` and ``delete`` take the run."""
    from cli_support import run_cli

    monkeypatch.setenv("TRAJSEARCH_TENANT", "acme")
    assert run_cli("ingest", str(GIFT_CARD_LOOP), "--quiet")[0] == 0
    code, out, _ = run_cli("search", "gift card", "-k", "1", "--json")
    run_id = json.loads(out)[0]["trajectory_id"]
    code, out, err = run_cli("show", f"{run_id}\n")
    assert code == 0 and out.startswith(run_id), err
    code, out, err = run_cli("similar", "--id", f" {run_id}", "-k", "1", "--json")
    assert code == 0 and json.loads(out), err
    code, out, err = run_cli("delete", "--dry-run", f" {run_id} ")
    assert code == 0 and run_id in out, err

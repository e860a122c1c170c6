"""Round 23 (RT6): one question, the same answer through every interface an agent runtime uses (``Runtime``, gRPC on
loopback, ``trajsearch mcp`` over stdio with the ``mcp`` package's own client). Real mini-swe-agent runs
(tests/fixtures/mini-swe-agent/.real/SOURCE.md): two failed runs that met ``No module named 'reproduce_app'`` and a
successful run (sqlfluff-2419) whose step 10 met ``No module named 'pytest'`` and whose step 11 installed it. Plumbing:
the hashing test embedder."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from trajsearch.ingest.outcomes import OutcomeTable
from trajsearch.ingest.read import read_dump
from trajsearch.runtime import Runtime, RuntimeContext
from trajsearch.service.client import Client
from trajsearch.service.validate import Limits

from service_support import key_ring, mcp_session, serve_store

REAL = Path(__file__).parent / "fixtures" / "mini-swe-agent" / ".real"
NO_PYTEST = "ModuleNotFoundError: No module named 'pytest'"
REPRODUCE_APP = "ModuleNotFoundError: No module named 'reproduce_app'"


def _runs() -> list:
    report = OutcomeTable.load(REAL / "gemini-3-pro-warnings" / "sb-cli-report.json")
    runs = [p.trajectory for p in read_dump(REAL / "gemini-3-pro-warnings", tenant="acme", outcomes=report)]
    return runs + [p.trajectory for p in read_dump(REAL / "recovered-pytest", tenant="acme")]


def _shown(items: list[dict]) -> list[tuple[str, str]]:
    """Each item's run and label (a warning's ``what not to do``, a recovery's ``how a past run got past this``)."""
    return [(i["provenance"]["trajectory_id"], i.get("label") or i["view"]["label"]) for i in items]


def test_a_pasted_error_gets_the_run_that_got_past_it_from_the_mcp_tool_as_from_the_warnings_call(tmp_path):
    """The tool's description tells an agent stuck on an error to paste it with ``kind=failures``; that kind showed
    failed runs only, so over MCP (and the gRPC ``SearchPastRuns`` behind it) the answer was ``no_similar_failures``
    where ``Runtime.warnings``, ``context_for`` and the gRPC ``Warnings`` call showed a successful run that met the
    error and what it did next (``pip install pytest``). It shows the same runs, in the same order and with the same
    labels, as the ``Warnings`` call; an error met only by failed runs is answered alike too."""
    runs = _runs()
    keys, ring = key_ring(acme=dict(tenant="acme", role="read"))
    server = serve_store(tmp_path, ring, runs, Limits())  # search cap 3
    script = [{"query": NO_PYTEST, "kind": "failures"}, {"query": REPRODUCE_APP, "kind": "failures"}]
    try:
        _, results = asyncio.run(asyncio.wait_for(mcp_session(server.address, keys["acme"], script), 600))
        with Client(server.address, keys["acme"]) as client:
            over_grpc = [client.warnings(query["query"]) for query in script]
        embedded = [Runtime(server.ts).advice("warnings", q["query"], RuntimeContext(tenant="acme")) for q in script]
    finally:
        server.stop(grace=2)
    recovered, met_by_failures = [json.loads(r.content[0].text) for r in results]
    assert recovered["status"] == "ok" and "reason" not in recovered
    assert _shown(recovered["results"]) == [(runs[-1].trajectory_id, "how a past run got past this")]
    assert "pip install pytest" in recovered["results"][0]["next_step"]
    assert "trace_uri" not in json.dumps(recovered)  # the model's answer names runs by id, as before
    assert [r["label"] for r in met_by_failures["results"]] == ["what not to do"] * 2
    for answer, grpc_said, runtime_said in zip((recovered, met_by_failures), over_grpc, embedded):
        assert _shown(answer["results"]) == _shown(grpc_said.items) == _shown(runtime_said.items)


NOVEL = "zqxj vwkp flurbo glimmix"


def test_a_novel_task_is_told_why_nothing_is_shown_by_context_for_as_by_every_other_interface(tmp_path):
    """``Runtime.context_for``, the agent's own entry, answered a task like nothing in the library with text "" and no
    word why, where ``Runtime.advice``, the gRPC ``Exemplars`` call and the MCP tool say ``no_similar_runs`` (and, for
    a context asking for a version no run was recorded with, ``no_runs_in_versions``). It says the same, in
    ``.reason`` and ``.note``, its text staying "" (a prompt gets nothing); a context showing a run says nothing."""
    runs = _runs()
    keys, ring = key_ring(acme=dict(tenant="acme", role="read"))
    server = serve_store(tmp_path, ring, runs, Limits())
    try:
        _, [novel_over_mcp] = asyncio.run(asyncio.wait_for(
            mcp_session(server.address, keys["acme"], [{"query": NOVEL}]), 240))
        with Client(server.address, keys["acme"]) as client:
            over_grpc = {(NOVEL, ()): client.exemplars(NOVEL), (runs[-1].task, ("v9",)): client.exemplars(
                runs[-1].task, env_version="v9")}
        rt = Runtime(server.ts)
        prompts = {}
        for (task, env), said in over_grpc.items():
            ctx = RuntimeContext(tenant="acme", env_version=env)
            prompt, advice = rt.context_for(task, ctx), rt.advice("exemplars", task, ctx)
            prompts[task] = prompt
            assert prompt.text == "" and prompt.strategy.value == "plan_from_scratch"
            assert (prompt.reason, prompt.note) == (advice.reason, advice.note) == (said.reason, said.note)
            assert prompt.reason == ("no_similar_runs" if task == NOVEL else "no_runs_in_versions")
        shown = rt.context_for(runs[-1].task, RuntimeContext(tenant="acme"))
        assert shown.exemplars and (shown.reason, shown.note) == ("", "")
    finally:
        server.stop(grace=2)
    answer = json.loads(novel_over_mcp.content[0].text)
    assert answer["strategy"] == "plan_from_scratch" and answer["results"] == []
    assert (answer["reason"], answer["note"]) == (prompts[NOVEL].reason, prompts[NOVEL].note)

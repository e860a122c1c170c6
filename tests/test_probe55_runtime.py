"""Round 22 (RT4): the agent runtime and the service's edges as an agent runtime meets them.

Real gRPC servers on 127.0.0.1 over real Milvus Lite and file traces, reached by real clients. No timing asserts.
"""

from __future__ import annotations

import logging
import threading
import time
from pathlib import Path

import tomli_w

from trajsearch.embed import HashingEmbedder
from trajsearch.search import TrajSearch
from trajsearch.service.auth import KeyRing, key_entry, new_key
from trajsearch.service.client import Client
from trajsearch.service.server import ServiceServer

WAIT = 600  # seconds: a bound on a wait, not a speed target


def test_a_key_file_nested_too_deeply_keeps_the_keys_and_fails_no_call(tmp_path: Path, caplog) -> None:
    """A key file rewritten with arrays nested thousands deep made both parsers raise RecursionError, which neither
    the reload (it caught KeyConfigError and OSError) nor the interceptor (authentication ran outside its try)
    caught: one call a second failed ``UNKNOWN: Exception calling application: maximum recursion depth exceeded``,
    unlogged. It is now a key file that does not load: the keys read before stay in use, the operator is told."""
    acme = new_key()
    keys = tmp_path / "keys.toml"
    keys.write_text(tomli_w.dumps({"keys": [key_entry(acme, tenant="acme", role="read")]}))
    ts = TrajSearch.open(str(tmp_path / "milvus.db"), traces=str(tmp_path / "traces"), embedder=HashingEmbedder())
    caplog.set_level(logging.INFO, logger="trajsearch.service")
    server = ServiceServer(ts, KeyRing.load(keys), address="127.0.0.1:0").start()
    try:
        with Client(server.address, acme, timeout=WAIT) as client:
            assert client.whoami()["tenant"] == "acme"
            keys.write_text("keys = " + "[" * 5000 + "]" * 5000 + "\n")
            end = time.monotonic() + WAIT
            while not any("nested too deeply" in r.getMessage() for r in caplog.records):
                assert client.whoami()["tenant"] == "acme"  # every call answered, by the keys read before
                assert time.monotonic() < end, "the log never said the key file does not load"
            assert client.whoami()["tenant"] == "acme"
    finally:
        server.stop(grace=1)
        ts.close()


# -- leftover 1: an empty answer costs no more searches than the advice it explains ------------------------


class _Counted:
    """Counts the façade's filtered searches (each one an embedding and an index query) made through ``ts``."""

    def __init__(self, ts) -> None:
        self.n, self._search = 0, ts.search_filtered
        ts.search_filtered = self._counted

    def _counted(self, *args, **kwargs):
        self.n += 1
        return self._search(*args, **kwargs)

    def of(self, work) -> int:
        before = self.n
        work()
        return self.n - before


def test_an_empty_answer_asks_the_index_nothing_its_own_search_answered(hashing_ts):
    """Why an answer is empty turned on whether the context's filters held a row of the kind, which the exemplars
    (their nearest tasks) and warnings (their failure rows) search had just asked: ``why_none`` asked it again.
    ``Runtime.advice`` and the tool now make no search past the verb's own, but one for an empty context, to see
    whether other versions hold runs (exemplars under an unknown version: 3 searches, 2 now)."""
    from test_probe53_runtime import _runs, TAU_AIRLINE
    from trajsearch.runtime import Runtime, RuntimeContext

    runs = _runs(TAU_AIRLINE, env_version="v1")
    hashing_ts.add(runs)
    rt, counted = Runtime(hashing_ts), _Counted(hashing_ts)
    unlike, task = "zqxj vwkp flurbo glimmix", runs[0].task
    cases = [  # (text, env version, kind, reason, searches past the verb's own)
        (unlike, "v1", "exemplars", "no_similar_runs", 0),
        (unlike, "v1", "warnings", "no_similar_failures", 0),
        (task, "v9", "exemplars", "no_runs_in_versions", 1),
        (task, "v9", "warnings", "no_failures_in_versions", 1),
    ]
    for text, env, kind, reason, more in cases:
        ctx = RuntimeContext(tenant="acme", env_version=env)
        verb = rt.exemplars if kind == "exemplars" else rt.warnings
        alone = counted.of(lambda: verb(text, ctx))
        said = []
        assert counted.of(lambda: said.append(rt.advice(kind, text, ctx))) == alone + more, (kind, env)
        assert said[0].reason == reason and said[0].items == [], (kind, env)
        tool_kind = "exemplars" if kind == "exemplars" else "failures"
        answers = []
        spent = counted.of(lambda: answers.append(rt.tool(ctx)({"query": text, "kind": tool_kind})))
        assert spent == alone + more and answers[0]["reason"] == reason, (kind, env, answers[0])


# -- leftover 3: a pasted issue is searched, not refused ----------------------------------------------------


def test_mcp_searches_a_pasted_task_over_2000_characters_rather_than_refusing_it(tmp_path):
    """The tool refused a query over 2,000 characters ("query: String should have at most 2000 characters"), and an
    agent pastes the issue it works on: SWE-bench's are often 2-6 kB (20 of the 284 shared mini-swe-agent runs'
    tasks, 2,042-6,520 characters). Through ``trajsearch mcp`` over a real server, a real 4,338-character task (a
    mini-swe-agent run of ProgramBench) is now answered with its own run among the exemplars; past the search's 20,000 characters (a real run's long output
    pasted after it) it is searched by its head and tail, and the answer says so."""
    import asyncio
    import json

    from service_support import key_ring, mcp_session, serve_store
    from trajsearch.ingest.read import read_dump
    from trajsearch.service.validate import Limits

    real = Path(__file__).parent / "fixtures" / "mini-swe-agent" / ".real"  # (a few of its files are no run)
    runs = [p.trajectory for p in read_dump(real, tenant="acme") if p.trajectory is not None]
    issue = max((r for r in runs if r.outcome == "success"), key=lambda r: len(r.task))
    log = max((s.observation or "" for r in runs for s in r.steps), key=len)
    pasted = issue.task + "\n" + log * (1 + 20_000 // max(1, len(log)))
    assert len(issue.task) > 4_000 and len(pasted) > 20_000
    keys, ring = key_ring(acme=dict(tenant="acme", role="read"))
    server = serve_store(tmp_path, ring, runs, Limits())
    script = [{"query": issue.task}, {"query": pasted, "kind": "failures"}]
    try:
        _, results = asyncio.run(asyncio.wait_for(mcp_session(server.address, keys["acme"], script), 600))
    finally:
        server.stop(grace=2)
    assert [r.is_error for r in results] == [False, False], results
    whole, clipped = (json.loads(r.content[0].text) for r in results)
    assert issue.trajectory_id in [r["provenance"]["trajectory_id"] for r in whole["results"]], whole
    assert "query_searched" not in whole
    # counted as searched: stripped (the longest real log, one of round 24's fixtures, ends in a line break)
    assert clipped["query_searched"] == f"its first and last 9,950 of {len(pasted.strip()):,} characters", clipped
    assert clipped["searches_left"] == 1


# -- leftover 2: an MCP error after the server had the search does not overstate searches_left -----------------


class _HeldSearches:
    """The façade's searches held until :attr:`gate` is set (a Milvus server that stalls)."""

    def __init__(self, ts) -> None:
        self.gate, self._search = threading.Event(), ts.search_filtered
        ts.search_filtered = self._held

    def _held(self, *args, **kwargs):
        self.gate.wait(WAIT)
        return self._search(*args, **kwargs)


def test_an_mcp_search_whose_answer_was_lost_is_counted_in_searches_left(tmp_path):
    """A search the trajsearch server had begun (and counted) whose answer the MCP server never got (its deadline
    passed while the index stalled) was told to the model as a tool error with the last answer's searches_left: 2,
    where the server had 1 left, and the next search said 0. Such an error now says one fewer (the fewest that may be
    left) and that the search may have been counted; a server that never had the call leaves the count as it was."""
    import asyncio
    import json

    from mcp import Client as McpClient

    from conftest import make_run
    from service_support import key_ring, serve_store
    from trajsearch.service.mcp_server import build_mcp
    from trajsearch.service.validate import Limits

    keys, ring = key_ring(acme=dict(tenant="acme", role="read"))
    server = serve_store(tmp_path, ring, [make_run("a1")], Limits())  # search cap 3
    held = _HeldSearches(server.ts)
    held.gate.set()

    async def session() -> list:
        answers = []
        # 30 s: the stalled search's deadline must pass, the two others' must not (5 s could, on a loaded machine)
        with Client(server.address, keys["acme"], retries=1, timeout=30) as backend:
            async with McpClient(build_mcp(backend)) as mcp:
                answers.append(await mcp.call_tool("search_past_runs", {"query": "fix the payments test"}))
                held.gate.clear()  # the index stalls: the server has the search, its answer comes too late
                answers.append(await mcp.call_tool("search_past_runs", {"query": "fix the payments test"}))
                held.gate.set()
                answers.append(await mcp.call_tool("search_past_runs", {"query": "fix the payments test"}))
        return answers

    try:
        results = asyncio.run(asyncio.wait_for(session(), WAIT))
    finally:
        held.gate.set()
        server.stop(grace=2)
    first, lost, third = (json.loads(r.content[0].text) for r in results)
    assert [r.is_error for r in results] == [False, True, False], results
    assert first["searches_left"] == 2 and third["searches_left"] == 0
    assert "DEADLINE_EXCEEDED" in lost["error"] and "may have counted it" in lost["error"], lost
    assert lost["searches_left"] == 1, lost



def test_an_mcp_search_the_server_refused_before_counting_keeps_searches_left(tmp_path):
    """The server sends its initial metadata (``x-request-id``) before any work, so every error after it read "the
    server had this search and may have counted it", one fewer left: a refusal made before the count (here an
    INTERNAL from the server's session table) left the model told 1 where the server had 2 (review RRT4, 2). A
    refusal the server answered itself now keeps the count; the next search finds it so."""
    import asyncio
    import json

    from mcp import Client as McpClient

    from conftest import make_run
    from service_support import key_ring, serve_store
    from trajsearch.service.mcp_server import build_mcp
    from trajsearch.service.validate import Limits

    keys, ring = key_ring(acme=dict(tenant="acme", role="read"))
    server = serve_store(tmp_path, ring, [make_run("a1")], Limits())  # search cap 3
    service, sessions = server.service, server.service._session_tool

    def broken(*args, **kwargs):  # the session table fails: the server refuses the call before any count
        raise RuntimeError("the session table failed")

    async def session() -> list:
        answers = []
        with Client(server.address, keys["acme"], retries=1, timeout=WAIT) as backend:
            async with McpClient(build_mcp(backend)) as mcp:
                answers.append(await mcp.call_tool("search_past_runs", {"query": "fix the payments test"}))
                service._session_tool = broken
                answers.append(await mcp.call_tool("search_past_runs", {"query": "fix the payments test"}))
                service._session_tool = sessions
                answers.append(await mcp.call_tool("search_past_runs", {"query": "fix the payments test"}))
        return answers

    try:
        results = asyncio.run(asyncio.wait_for(session(), WAIT))
    finally:
        server.stop(grace=2)
    first, refused, third = (json.loads(r.content[0].text) for r in results)
    assert [r.is_error for r in results] == [False, True, False], results
    assert "INTERNAL" in refused["error"] and "may have counted" not in refused["error"], refused
    assert first["searches_left"] == 2 and refused["searches_left"] == 2 and third["searches_left"] == 1, results


# -- the tool's whole answer within its token budget ----------------------------------------------------------


def test_a_tool_answer_the_model_reads_fits_the_result_budget_whole(hashing_ts):
    """``result_tokens`` bounded the results alone: the answer around them (status, kind, the query said back, the
    strategy, searches left) took it over, 10 of 30 exemplars answers on the shared dumps at 1,200 tokens (at most
    1,232), 2 of 30 steps answers (1,273). The whole answer the model reads now fits (real tau-bench runs)."""
    from test_probe53_runtime import _runs, TAU_AIRLINE
    from trajsearch.runtime import RuntimeContext, SearchPastRuns
    from trajsearch.runtime.format import default_counter, render_json

    runs = _runs(TAU_AIRLINE)
    hashing_ts.add(runs)
    ctx, count = RuntimeContext(tenant="acme"), default_counter().count
    over, shown = [], 0
    for budget in (300, 600, 1200):
        for run in runs[:8]:
            for kind, query in (("exemplars", run.task), ("failures", run.task), ("steps", run.steps[-1].observation)):
                answer = SearchPastRuns(hashing_ts, ctx, result_tokens=budget)({"query": query or run.task,
                                                                                   "kind": kind})
                shown += len(answer["results"])
                if count(render_json(answer)) > budget:
                    over.append((budget, kind, count(render_json(answer))))
    assert shown and not over, over



def test_a_tool_answer_to_a_pasted_log_over_the_search_limit_fits_the_result_budget_whole(hashing_ts):
    """The answer's ``query_searched`` (a query over 20,000 characters, searched by its head and tail) was added after
    the results' room had been counted: steps answers to a real run's output pasted past 21,000 characters went over
    ``result_tokens`` by up to 17 tokens (review RRT4, 1). Real mini-swe-agent runs, their last steps pasted."""
    from trajsearch.ingest.read import read_dump
    from trajsearch.runtime import RuntimeContext, SearchPastRuns
    from trajsearch.runtime.format import default_counter, render_json

    real = Path(__file__).parent / "fixtures" / "mini-swe-agent" / ".real"
    runs = [p.trajectory for p in read_dump(real, tenant="acme") if p.trajectory is not None]
    hashing_ts.add(runs)
    ctx, count = RuntimeContext(tenant="acme"), default_counter().count
    logs = [o for run in runs for s in run.steps[-3:] if len(o := (s.observation or s.action or "").strip()) >= 50]
    over, shown = [], 0
    for budget in (380, 740, 1200):
        for log in logs[:40]:
            pasted = log + "\n" + log * (1 + 21_000 // len(log))
            answer = SearchPastRuns(hashing_ts, ctx, result_tokens=budget)({"query": pasted, "kind": "steps"})
            assert answer["query_searched"].startswith("its first and last 9,950 of "), answer
            shown += len(answer["results"])
            if count(render_json(answer)) > budget:
                over.append((budget, count(render_json(answer))))
    assert shown and not over, over


def test_a_tool_answer_says_a_query_was_cut_only_when_it_was_and_from_its_read_length(hashing_ts):
    """Review SMALLB 4: the tool compared the raw query with what was searched, and a screenshot's base64 is searched
    as its placeholder, so a 2,512-character error holding one was said searched by "its first and last 9,950 of
    2,512 characters". Nothing is cut there; a real run's output pasted past 20,000 read characters with a
    screenshot is, and the length said is the one read (the base64 as its placeholder), as the CLI and the web say."""
    from trajsearch.blobs import without_blobs
    from trajsearch.ingest.read import read_dump
    from trajsearch.runtime import RuntimeContext, SearchPastRuns

    real = Path(__file__).parent / "fixtures" / "mini-swe-agent" / ".real"
    runs = [p.trajectory for p in read_dump(real, tenant="acme") if p.trajectory is not None]
    hashing_ts.add(runs)
    ctx = RuntimeContext(tenant="acme")
    image = "data:image/png;base64,iVBORw0KGgo" + "".join(f"{n:08x}" for n in range(300))
    error = "AssertionError: the button is not visible\n" + image + "\nFAILED tests/test_ui.py::test_button"
    answer = SearchPastRuns(hashing_ts, ctx)({"query": error, "kind": "steps"})
    assert answer["status"] == "ok" and "query_searched" not in answer, answer
    log = max((s.observation or "" for r in runs for s in r.steps), key=len).strip()
    pasted = (log + "\n") * (1 + 21_000 // len(log)) + image
    read = len(without_blobs(pasted))
    assert read > 20_000 and len(pasted) > read
    answer = SearchPastRuns(hashing_ts, ctx)({"query": pasted, "kind": "steps"})
    assert answer["query_searched"] == f"its first and last 9,950 of {read:,} characters", answer


def test_a_tool_answer_that_leaves_a_run_out_still_fits_the_result_budget_whole(hashing_ts):
    """The exemplars and failures answers counted their room before the sentence saying a run was left out
    ("(1 more past run(s) left out ...)") was added to their note, as steps answers did not: 2 of 636 answers on the
    real mini-swe-agent runs were over ``result_tokens`` (301 and 306 of 300; review RALL-B, 2)."""
    from trajsearch.ingest.read import read_dump
    from trajsearch.runtime import RuntimeContext, SearchPastRuns
    from trajsearch.runtime.format import default_counter, render_json

    real = Path(__file__).parent / "fixtures" / "mini-swe-agent" / ".real"
    runs = [p.trajectory for p in read_dump(real, tenant="acme") if p.trajectory is not None]
    hashing_ts.add(runs)
    ctx, count = RuntimeContext(tenant="acme"), default_counter().count
    over, left_out = [], 0
    for run in runs:
        for kind in ("exemplars", "failures"):
            answer = SearchPastRuns(hashing_ts, ctx, result_tokens=300)({"query": run.task, "kind": kind})
            left_out += bool(answer.get("omitted")) and bool(answer["results"])
            if count(render_json(answer)) > 300:
                over.append((kind, run.trajectory_id, count(render_json(answer))))
    assert left_out and not over, over

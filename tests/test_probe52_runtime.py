"""Probe 52 (RT): the agent runtime as its user sees it, on real runs.

Each test goes through a public interface (the ``Runtime`` verbs, ``trajsearch mcp`` over stdio with the ``mcp``
package's own client) on real files kept under tests/fixtures (their SOURCE.md says where each came from).
"""

from __future__ import annotations

from pathlib import Path

from trajsearch.ingest.read import read_dump
from trajsearch.model import Trajectory
from trajsearch.runtime import Runtime, RuntimeContext

FIXTURES = Path(__file__).parent / "fixtures"
#: tau-bench v1, gpt-4o airline: task 0, a failed and a successful trial
TAU_AIRLINE = FIXTURES / "tau-bench" / "gpt-4o-airline-mini.json"
#: Claude Code sessions (the CLI's own JSONL), each ending with a reply to the user
CLAUDE_CODE = sorted((FIXTURES / "claude-code").glob("*.jsonl"))
#: The tools tau-bench's airline env gives its agent (tau_bench/envs/airline/tools/__init__.py, ALL_TOOLS):
#: ``respond`` is not among them, it is the agent's reply (tau_bench/agents/tool_calling_agent.py, RESPOND_ACTION_NAME)
AIRLINE_TOOLS = ["book_reservation", "calculate", "cancel_reservation", "get_reservation_details", "get_user_details",
                 "list_all_airports", "search_direct_flight", "search_onestop_flight", "send_certificate", "think",
                 "transfer_to_human_agents", "update_reservation_baggages", "update_reservation_flights",
                 "update_reservation_passengers"]
#: The tools a Claude Code session lists in its ``system``/``init`` message
CLAUDE_CODE_TOOLS = ["Task", "Bash", "Glob", "Grep", "LS", "ExitPlanMode", "Read", "Edit", "MultiEdit", "Write",
                     "NotebookEdit", "WebFetch", "TodoWrite", "WebSearch", "BashOutput", "KillShell"]


def _runs(*paths: Path) -> list[Trajectory]:
    parsed = [p for path in paths for p in read_dump(path, tenant="acme")]
    assert all(p.trajectory is not None for p in parsed), [p.error for p in parsed]
    return [p.trajectory for p in parsed]


# -- RT1: the agent's words to the user are no tool ------------------------------------------------


def test_staleness_does_not_take_the_agents_replies_for_a_missing_tool(hashing_ts):
    """A runtime lists the tools its agent has; the adapters record each reply to the user as the action ``respond``.
    Every run that ever spoke was reported "used tools no longer available: respond" and ``prune`` deleted it: on
    the shared tau-bench dumps 365 of 365 runs against the airline and retail envs' own tool lists, and every
    Claude Code session against Claude Code's. A tool that is really gone is still reported, alone."""
    airline, sessions = _runs(TAU_AIRLINE), _runs(*CLAUDE_CODE)
    assert all("respond" in run.tools_used for run in [*airline, *sessions])
    hashing_ts.add([*airline, *sessions])
    rt = Runtime(hashing_ts)

    for tools in (AIRLINE_TOOLS + CLAUDE_CODE_TOOLS, ["respond", *AIRLINE_TOOLS, *CLAUDE_CODE_TOOLS]):
        ctx = RuntimeContext(tenant="acme", tools_available=tools)
        assert rt.staleness_report(ctx) == []
        assert rt.prune(ctx, rt.staleness_report(ctx)) == []
    assert hashing_ts.stats(tenant="acme")["trajectories"] == len(airline) + len(sessions)

    without_glob = RuntimeContext(tenant="acme", tools_available=[t for t in CLAUDE_CODE_TOOLS if t != "Glob"])
    report = {s.trajectory_id: s.reasons for s in rt.staleness_report(without_glob)}
    assert report == {s.trajectory_id: ["used tools no longer available: Glob"] for s in sessions} | \
        {a.trajectory_id: ["used tools no longer available: " + ", ".join(t for t in a.tools_used if t != "respond")]
         for a in airline}


# -- RT2: over stdio one process serves every conversation of its host ----------------------------


def _mcp_answers(address: str, key: str, options: list[str], script: list, timeout: float = 600) -> list[dict]:
    """The parsed answers of ``script``'s calls through ``trajsearch mcp`` over stdio
    (``service_support.mcp_session``)."""
    import asyncio
    import json

    from service_support import mcp_session

    _, results = asyncio.run(asyncio.wait_for(mcp_session(address, key, script, options, read_timeout=600), timeout))
    assert not any(r.is_error for r in results), [r.content[0].text for r in results]
    return [json.loads(r.content[0].text) for r in results]


def test_the_mcp_search_cap_starts_afresh_after_the_host_was_idle(tmp_path):
    """A host launches ``trajsearch mcp`` once and keeps it for all its conversations (Claude Desktop, an IDE: the
    MCP transport's own guidance, SEP-2692). The cap counted per process: after the first conversation's searches,
    every search of every later conversation answered "You have used all N searches of past runs for this task.
    Stop searching" until the host restarted. Now a pause of ``--run-idle`` seconds starts a new run; within a run
    the cap holds (an agent looping on the tool is still stopped)."""
    from trajsearch.embed import HashingEmbedder
    from trajsearch.search import TrajSearch
    from trajsearch.service.server import ServiceServer

    from service_support import key_ring

    keys, ring = key_ring(acme=dict(tenant="acme", role="read"))
    ts = TrajSearch.open(str(tmp_path / "milvus.db"), traces=str(tmp_path / "traces"), embedder=HashingEmbedder())
    ts.add(_runs(TAU_AIRLINE))
    server = ServiceServer(ts, ring, address="127.0.0.1:0", max_workers=4, search_cap=2).start()
    try:
        query = {"query": "cancel my upcoming reservation and refund it", "kind": "exemplars"}
        # idle 10 s (3 s could pass between two searches' calls on a loaded machine: a new run, no cap), then 11 s
        first, second, capped, later = _mcp_answers(server.address, keys["acme"], ["--run-idle", "10"],
                                                    [query, query, query, 11, query])
    finally:
        server.stop(0)  # closes the index too
    assert [first["status"], first["searches_left"], second["searches_left"]] == ["ok", 1, 0]
    assert capped["status"] == "limit_reached" and "Stop searching" in capped["instruction"]
    assert later["status"] == "ok" and later["searches_left"] == 1 and later["results"] == first["results"]


# -- RT3: an empty exemplars or steps answer says why ---------------------------------------------


def test_an_empty_exemplars_or_steps_answer_says_the_versions_held_no_run(hashing_ts):
    """The README's MCP example starts ``trajsearch mcp --env-version v2``; runs recorded with no version (most
    dumps: every file of /work/shared/data) are then outside every search. ``kind=failures`` said so ("only for
    others"), but ``kind=exemplars`` and ``kind=steps`` answered no run and no word why, on every call, so neither
    the model nor whoever read its trace could tell a misconfigured context from a task that is new here."""
    airline = _runs(TAU_AIRLINE)
    task = next(run.task for run in airline if run.outcome.value == "success")
    rt = Runtime(hashing_ts)

    def ask(kind: str, **ctx: str) -> dict:
        answer = rt.tool(RuntimeContext(tenant="acme", **ctx))({"query": task, "kind": kind})
        assert answer["status"] == "ok", answer
        return answer

    empty = {kind: ask(kind) for kind in ("exemplars", "steps")}  # the tenant holds no run yet
    assert [(a["results"], a["reason"]) for a in empty.values()] == [([], "no_successful_runs"), ([], "no_runs")]
    hashing_ts.add(airline)
    for kind in ("exemplars", "steps"):
        answer = ask(kind, env_version="v2")
        assert answer["results"] == [] and answer["reason"] == "no_runs_in_versions", answer
        assert "only with other versions or none" in answer["note"]  # the runs hold no version
        found = ask(kind)  # found: no reason to give
        assert found["results"] and "reason" not in found, found
    assert ask("failures", env_version="v2")["reason"] == "no_failures_in_versions"


# -- RT1's review: every action that calls no tool, not only respond ----------------------------------

#: SWE-agent (0.x, Multi-SWE-bench's doubao run) stopped at its cost limit: its last action is ``exit_cost``
SWE_AGENT_EXIT_COST = (FIXTURES / "swe-agent" / ".real" / "20240825_SWE-agent_doubao-pro-128k" / "trajs"
                       / "fasterxml__jackson-databind-3851.traj")
#: Harbor's Terminus 2 golden trajectory: ``bash_command`` keystrokes, then ``mark_task_complete``
TERMINUS = FIXTURES / "atif" / ".real" / "terminus_2" / "hello-world-invalid-json.trajectory.json"
#: The tools SWE-agent 0.x's default config gives its agent (config/default.yaml's command files), and bash
SWE_AGENT_TOOLS = ["bash", "open", "goto", "scroll_up", "scroll_down", "create", "edit", "search_dir", "search_file",
                   "find_file", "submit"]


def test_staleness_does_not_take_a_stop_or_a_done_mark_for_a_missing_tool(hashing_ts):
    """``respond`` was exempted alone. SWE-agent records its own stop as the run's last action (``exit_cost``,
    ``exit_context``, ``exit_format``...: every run that hit a limit), Terminus (ATIF, through Harbor) its "task
    complete" as ``mark_task_complete``: against the agent's own tool list each run was reported "used tools no
    longer available: exit_cost" and ``prune`` deleted it. A tool really gone is still reported."""
    runs = _runs(SWE_AGENT_EXIT_COST, TERMINUS)
    swe, terminus = runs
    assert swe.tools_used == ["bash", "exit_cost"] and "mark_task_complete" in terminus.tools_used
    hashing_ts.add(runs)
    rt = Runtime(hashing_ts)
    ctx = RuntimeContext(tenant="acme", tools_available=[*SWE_AGENT_TOOLS, "bash_command"])
    assert rt.staleness_report(ctx) == []
    assert rt.prune(ctx, rt.staleness_report(ctx)) == []
    assert hashing_ts.stats(tenant="acme")["trajectories"] == 2

    no_bash = RuntimeContext(tenant="acme", tools_available=SWE_AGENT_TOOLS[1:])
    assert [(s.trajectory_id, s.reasons) for s in rt.staleness_report(no_bash)] == \
        [(terminus.trajectory_id, ["used tools no longer available: bash_command"]),
         (swe.trajectory_id, ["used tools no longer available: bash"])]


def test_tool_overlap_does_not_count_the_agents_replies_as_a_tool_it_lacks(hashing_ts):
    """The reranker weighs the share of a run's tools the context has. ``respond`` counted as one: a tau-bench run
    that booked a flight and spoke scored 1/2 against the airline env's own tools, one that only spoke 0 (and lost
    the tools' weight): the top three exemplars changed for 32 of 50 airline tasks (recall unchanged)."""
    from trajsearch.runtime.rerank import tool_overlap

    airline = _runs(TAU_AIRLINE)
    hashing_ts.add(airline)
    ctx = RuntimeContext(tenant="acme", tools_available=AIRLINE_TOOLS)
    hits = hashing_ts.search(airline[0].task, tenant="acme", levels="task", k=5)
    assert {h.trajectory_id for h in hits} == {a.trajectory_id for a in airline}
    assert all("respond" in h.tools for h in hits)
    assert [tool_overlap(h, ctx) for h in hits] == [1.0, 1.0]
    without_booking = RuntimeContext(tenant="acme", tools_available=["get_user_details"])
    assert sorted(tool_overlap(h, without_booking) for h in hits) == [0.0, 0.5]


# -- RT3's review: a key pinned to other versions, every kind says why --------------------------------


def test_a_search_outside_the_keys_pins_says_why_for_every_kind(tmp_path):
    """A key pinned to env v2, a context asking for v1: nothing may be searched. ``kind=failures`` said why
    (``versions_not_readable``), ``kind=exemplars`` and ``kind=steps`` answered ``[]`` with no reason or note,
    exemplars with no strategy, and no ``searches_left``: gRPC read 0 with ``capped`` false, a client could not
    tell it may search again. Each kind now says why, and the search counts against the cap as any other."""
    from trajsearch.service.client import Client
    from trajsearch.service.validate import Limits

    from service_support import key_ring, serve_store

    runs = [run.model_copy(update={"env_version": "v1"}) for run in _runs(TAU_AIRLINE)]
    keys, ring = key_ring(pinned=dict(tenant="acme", role="read", key_id="pinned", env_versions=["v2"]))
    server = serve_store(tmp_path, ring, runs, Limits())  # search cap 3
    try:
        with Client(server.address, keys["pinned"]) as client:
            answers = [client.search_past_runs(runs[0].task, session_id="s", kind=kind, env_version="v1")
                       for kind in ("exemplars", "steps", "failures", "exemplars")]
    finally:
        server.stop(grace=2)
    *told, capped = answers
    assert [(a["results"], a["reason"], a["searches_left"]) for a in told] == \
        [([], "versions_not_readable", left) for left in (2, 1, 0)]
    assert told[0]["strategy"] == "plan_from_scratch"
    assert all("may not read runs of this run's environment or policy versions" in a["note"] for a in told)
    assert capped["status"] == "limit_reached"


# -- RT2's review: the pause counts from the last search the cap let through ---------------------------


def test_calls_refused_by_the_cap_keep_no_run_alive_and_are_told_what_was_counted(tmp_path):
    """Each call refreshed the idle clock, the refused ones too: an agent calling on past its cap, a minute apart,
    kept its run (and the host's next conversations) capped for good. The capped answer said "for this task",
    which a process serving every conversation of its host cannot know. Timing margins of seconds, both ways."""
    from trajsearch.embed import HashingEmbedder
    from trajsearch.search import TrajSearch
    from trajsearch.service.server import ServiceServer

    from service_support import key_ring

    keys, ring = key_ring(acme=dict(tenant="acme", role="read"))
    ts = TrajSearch.open(str(tmp_path / "milvus.db"), traces=str(tmp_path / "traces"), embedder=HashingEmbedder())
    ts.add(_runs(TAU_AIRLINE))
    server = ServiceServer(ts, ring, address="127.0.0.1:0", max_workers=4, search_cap=2).start()
    try:
        query = {"query": "cancel my upcoming reservation and refund it", "kind": "exemplars"}
        # idle 10 s: refused 2.5 s after the last search let through (7.5 s to spare for the refused calls' own
        # time on a busy machine), then 8 s more: over 10.5 s since it
        answers = _mcp_answers(server.address, keys["acme"], ["--run-idle", "10"],
                               [query, query, query, 2.5, query, 8, query])
    finally:
        server.stop(0)
    assert [a["status"] for a in answers] == ["ok", "ok", "limit_reached", "limit_reached", "ok"]
    assert answers[-1]["searches_left"] == 1
    capped = answers[2]["instruction"]
    assert "used all 2 searches of past runs with no pause of 10 seconds between them" in capped
    assert "for this task" not in capped


def test_calls_made_together_after_a_pause_share_one_run():
    """A host calling tools in parallel after an idle pause: each call found the pause (the idle clock moved only
    when a search ended) and started its own run with a fresh cap, so three calls made together got three caps
    (review R2-FRT: searches_left 1, 1, 1 and a fourth ``ok`` under a cap of 2). The run starts with the first of
    them. A stepped clock stands in for time (``_Sessions`` takes one): no waiting."""
    from types import SimpleNamespace

    from trajsearch.service.mcp_server import _Sessions

    now = [0.0]
    sessions = _Sessions(60, clock=lambda: now[0])
    no_header = SimpleNamespace(headers=None)
    first = sessions.id_of(no_header)
    now[0] = 61.0  # the host was idle
    together = {sessions.id_of(no_header) for _ in range(3)}  # none has ended yet
    assert len(together) == 1 and first not in together
    sessions.searched(no_header, next(iter(together)), {"status": "ok"})
    now[0] = 100.0  # 39 s after the search ended: the same run
    assert sessions.id_of(no_header) in together


def test_a_tool_named_like_a_stop_is_still_a_tool():
    """SWE-agent's stops were told by their pattern (``exit_*``), which took Gemini CLI's and Qwen Code's own tool
    ``exit_plan_mode`` for a stop: a run that used it, against a tool list without it, was never reported stale
    (review R2-FRT). The stops are named now."""
    from trajsearch.actions import tools_of

    assert tools_of(["read_file", "exit_plan_mode", "exit_cost", "early_exit", "respond", "mark_task_complete"]) == \
        ["read_file", "exit_plan_mode"]

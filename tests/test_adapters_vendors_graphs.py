"""Langfuse and LangSmith runs of LangGraph graphs, on real files found by probe p42 probeA (sources in the
fixtures' SOURCE.md): the answer a graph's state holds, the agent behind each model call, a run that holds
nothing, a LangSmith run downloaded from the UI.

Everything goes through the public reader (``read_dump`` / ``detect_format``).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from trajsearch.ingest.read import detect_format, read_dump

from adapter_support import only, runs

FIXTURES = Path(__file__).parent / "fixtures"
#: trace 71a7059b… (8 model calls) and c5bf6e37… (none) of one LangGraph supervisor graph, Langfuse SDK 4.10.0
SUPERVISOR = FIXTURES / "langfuse" / ".real" / "cloak-langgraph-supervisor.observations.json"
EVENTS_ONLY = FIXTURES / "langfuse" / ".real" / "huytu-events-only.trace.json"
UI_RUN = FIXTURES / "langsmith" / ".real" / "run-019e3de2-29fe-70b0-bc69-04c5227f876c.json"


def _root_state(trace_id: str) -> dict:
    """The graph's state the root ``LangGraph`` observation of a trace wrote as its output."""
    [root] = [o for o in json.loads(SUPERVISOR.read_text())
              if o["traceId"] == trace_id and not o["parentObservationId"]]
    return json.loads(root["output"])


def test_the_graphs_answer_in_the_root_observations_output_is_the_runs_answer() -> None:
    """Bug (p42 probeA D2): a LangGraph run no model call answered (its nodes wrote without one) was stored with
    no step and no answer; its answer is the ``final_answer`` of the state the root observation output (the
    trace's output in SDK v3/v4), not the state's JSON."""
    run = runs(SUPERVISOR)
    [empty] = [r for r in run if r.trajectory_id == "lf:c5bf6e3706f35aaa8147ce2d839e8dc9"]
    [answer] = empty.steps
    assert answer.action == "respond"
    assert answer.arguments["content"] == _root_state("c5bf6e3706f35aaa8147ce2d839e8dc9")["final_answer"].strip()
    assert answer.arguments["content"].startswith("# State-of-the-Art GraphRAG: A Technical Analysis")


def test_a_trace_objects_output_state_answers_by_the_same_rule_and_a_state_without_one_is_no_answer(
        tmp_path: Path) -> None:
    """p42 probeA D2, the UI download shape: the trace object's output (the same state) gives its
    ``final_answer``; a state that holds no answer-like key is not dumped as an answer: with no step either, the
    run is passed over with a reason rather than stored empty."""
    trace_id = "c5bf6e3706f35aaa8147ce2d839e8dc9"
    observations = [o for o in json.loads(SUPERVISOR.read_text()) if o["traceId"] == trace_id]
    state = _root_state(trace_id)
    trace = {"id": trace_id, "name": "LangGraph", "timestamp": observations[0]["startTime"],
             "input": json.dumps({"request": state["request"]}), "output": json.dumps(state)}
    (tmp_path / "download.json").write_text(json.dumps({"trace": trace, "observations": observations}))
    [answer] = only(tmp_path / "download.json").steps
    assert answer.arguments["content"] == state["final_answer"].strip()

    without = {k: v for k, v in state.items() if k != "final_answer"}
    for o in observations:  # the root observation's output too: the same state
        if not o["parentObservationId"]:
            o["output"] = json.dumps(without)
    (tmp_path / "download.json").write_text(json.dumps({"trace": dict(trace, output=json.dumps(without)),
                                                        "observations": observations}))
    [result] = list(read_dump(tmp_path / "download.json", tenant="acme"))
    assert not result.ok and "not an agent run" in result.error and "no model call, tool or answer" in result.error


def test_a_supervisor_graphs_run_ends_on_its_answer_and_names_the_agent_of_each_step() -> None:
    """Bug (p42 probeA D3): eight anonymous ``respond`` steps, the last the supervisor's routing JSON
    (``{"next_agent": "analyist", ...}``); the graph's answer is its state's ``final_answer`` and each model call
    ran in a graph node (its parent chain's ``metadata.langgraph_node``), kept as the run's ``agents`` /
    ``step_agents`` as swe_agent keeps a multi-agent run's."""
    [run] = [r for r in runs(SUPERVISOR) if r.trajectory_id == "lf:71a7059ba140ea31525a96458199947b"]
    assert [s.action for s in run.steps] == ["respond"] * 9
    assert '"next_agent": "analyist"' in run.steps[7].arguments["content"]  # the supervisor's last routing
    assert run.steps[-1].arguments["content"] == _root_state("71a7059ba140ea31525a96458199947b")["final_answer"].strip()
    assert run.steps[-1].arguments["content"].startswith("# Research Summary GraphRAG State-of-the-Art")
    assert run.metadata["agents"] == ["supervisor", "researcher", "writer", "analyst"]
    assert run.metadata["step_agents"] == [[0, "supervisor"], [1, "researcher"], [3, "supervisor"], [4, "writer"],
                                           [5, "supervisor"], [6, "analyst"], [7, "supervisor"], [8, "LangGraph"]]


def test_a_langfuse_trace_of_events_alone_is_passed_over_with_a_reason() -> None:
    """p42 probeA O1: a trace whose observations are all EVENTs and whose output holds no answer was stored as a
    run with no step; like the other span adapters' traces of no agent work, it is passed over, saying why."""
    [result] = list(read_dump(EVENTS_ONLY, tenant="acme"))
    assert not result.ok
    assert result.error.startswith("not an agent run: trace 45adebeae6acd514a00f418bbfc6614c recorded no model "
                                   "call, tool or answer")


def test_a_langsmith_run_downloaded_from_the_ui_is_read() -> None:
    """Bug (p42 probeA D4): ``{inputs, outputs, metadata, langsmith: {...}}`` was "unrecognised" (``--format
    langsmith``: "run without 'id'"); the run is ``outputs.messages``: handoff tool calls with their replies, the
    supervisor's answer; its id is the one in the file name."""
    assert detect_format(UI_RUN) == "langsmith"
    run = only(UI_RUN, tenant="acme")
    assert run.trajectory_id == "ls:019e3de2-29fe-70b0-bc69-04c5227f876c"
    assert run.task == "硬件采购清单中哪一个厂家的东西最贵"
    assert run.model_id == "qwen-plus"
    assert [(s.action, s.observation) for s in run.steps] == [
        ("transfer_to_data_agent", "Successfully transferred to data_agent"),
        ("transfer_back_to_supervisor", "Successfully transferred back to supervisor"),
        ("transfer_to_data_agent", "Successfully transferred to data_agent"),
        ("transfer_back_to_supervisor", "Successfully transferred back to supervisor"),
        ("respond", None)]
    assert run.steps[1].thought.startswith("Sorry, need more steps to process this request.")
    answer = "硬件采购清单中价格最贵的厂家是：**是德科技**，其设备（网络分析仪）价格为 **35,800 元**。"
    assert run.steps[-1].arguments == {"content": answer}
    assert run.metadata["project"] == "hngd-backend" and run.metadata["conversation_id"] == "conversation-10"


def test_a_langsmith_ui_download_renamed_takes_its_id_from_its_content(tmp_path: Path) -> None:
    """p42 probeA D4: without ``run-<uuid>`` in the file name, the id is a hash of the content: the same run
    read twice (or from another name) is the same run."""
    shutil.copy(UI_RUN, tmp_path / "answer.json")
    shutil.copy(UI_RUN, tmp_path / "copy.json")
    first, second = only(tmp_path / "answer.json"), only(tmp_path / "copy.json")
    assert first.trajectory_id == second.trajectory_id
    assert first.trajectory_id.startswith("ls:sha1-") and first.steps == second.steps


WRAPPED_RUN_TREE = FIXTURES / "langsmith" / ".real" / "bamiboy-phase2-03-database-timeout.json"


def test_a_langsmith_run_tree_kept_under_trace_is_langsmiths_not_langfuses(tmp_path: Path) -> None:
    """p42 probeA O2: ``{"trace": {<run with child_runs>}, "scenario_id": ...}`` was taken for a Langfuse
    download, whose rejection ("trace ... has no input") stayed the same once the run had an input. It is a
    LangSmith run tree: its redacted inputs are what is missing, and with an input the run is read."""
    assert detect_format(WRAPPED_RUN_TREE) == "langsmith"
    [result] = list(read_dump(WRAPPED_RUN_TREE, tenant="acme"))
    assert not result.ok and result.error.startswith("no task: the root run 'support_agent.turn' has no inputs")

    wrapper = json.loads(WRAPPED_RUN_TREE.read_text())
    wrapper["trace"]["inputs"] = {"question": "Where is my order 1234?"}
    (tmp_path / "scenario.json").write_text(json.dumps(wrapper))
    run = only(tmp_path / "scenario.json")
    assert run.trajectory_id == "ls:20000000-0000-4000-8000-000000000031"  # the trace id, not the root run's
    assert run.task == "Where is my order 1234?"
    assert [(s.action, s.error) for s in run.steps[:2]] == [("support_agent.tool.get_order_status", "timeout"),
                                                            ("support_agent.database.read", "timeout")]


def test_a_trace_output_that_is_a_repr_of_the_last_message_adds_no_second_answer() -> None:
    """Review of the answer rule: BeeAI's trace output is a Python ``repr`` of the run's last message, JSON-encoded
    (langfuse/langfuse's seeder trace). It is that message, whose words the run already ends on: no second
    ``respond`` carrying the repr's text."""
    run = only(FIXTURES / "langfuse" / ".real" / "beeai-2025-08-01.json")
    assert [s.action for s in run.steps] == ["Wikipedia", "OpenMeteoTool", "respond"]
    assert run.steps[-1].arguments["content"].startswith("Barcelona is a vibrant city")

"""Review 1 of the graph-answer rule (Langfuse) and the LangSmith UI download, on real files (sources in the
fixtures' SOURCE.md): a conversation of several traces, a graph stopped after a tool call, a ReAct agent's final
answer said twice, a download whose outputs are no message list.

Everything goes through the public reader (``read_dump``); a derived file changes only which of the real file's
own values it keeps (or where it keeps them), never invents one.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from adapter_support import only

FIXTURES = Path(__file__).parent / "fixtures"
REAL_LF = FIXTURES / "langfuse" / ".real"
#: the LangChain CallbackHandler on langgraph 0.6.11's create_react_agent: get_weather, get_population, the answer
REACT_GRAPH = REAL_LF / "lf2_langchain_handler_langgraph.ingestion.jsonl"
CREW = REAL_LF / "crewai-2025-07-11.trace.json"
UI_RUN = FIXTURES / "langsmith" / ".real" / "run-019e3de2-29fe-70b0-bc69-04c5227f876c.json"


def _said(run) -> list[tuple[str, str | None]]:
    return [(s.action, s.arguments.get("content") if s.action == "respond" else None) for s in run.steps]


def test_a_conversation_of_several_traces_does_not_end_on_its_first_traces_answer() -> None:
    """Bug (review 1 F1): read by conversation, Langfuse's own sample session ``session_abc`` (AutoGen's trace,
    then pydantic-ai's) ended with a third step, AutoGen's "Hello World!" again: the first trace's output taken
    as the whole session's answer. Each trace's model call already says its turn's answer."""
    run = only(REAL_LF / "session_abc", group_by="conversation")
    assert run.trajectory_id == "lf:conversation:session_abc"
    said = _said(run)
    assert [a for a, _ in said] == ["respond", "respond"]
    assert said[0][1] == "Hello World!"
    assert said[1][1].startswith("Langfuse is a tool designed for observability and monitoring")


def _stopped_after_the_first_tool(tmp_path: Path) -> Path:
    """The real run cut where LangGraph's ``interrupt`` (human approval of a tool) would stop it: after the
    ``tools`` node ran get_weather. The graph's state is then the user's message, the model's "I'll check the
    weather in Paris first." with its call, and the tool's reply: the first three messages of the real final
    state, written where the real run writes its state (the root span's and the trace's output)."""
    batches = [json.loads(line) for line in REACT_GRAPH.read_text().splitlines()]
    events = [e for b in batches for e in b["batch"]]
    cut = next(i for i, e in enumerate(events) if e["type"] == "span-update" and e["body"]["id"].startswith("e4b85baf"))
    root_update, trace_output = events[-3], events[-2]  # the root span's update, the trace-create with the output
    assert root_update["body"]["id"].startswith("a9fcd61f") and trace_output["type"] == "trace-create"
    state = {"messages": trace_output["body"]["output"]["messages"][:3]}
    assert [m["type"] for m in state["messages"]] == ["human", "ai", "tool"]
    root_update["body"]["output"] = trace_output["body"]["output"] = state
    path = tmp_path / "interrupted.ingestion.jsonl"
    path.write_text(json.dumps(dict(batches[0], batch=events[:cut + 1] + [root_update, trace_output])) + "\n")
    return path


def test_a_graph_stopped_after_a_tool_call_has_no_answer(tmp_path: Path) -> None:
    """Bug (review 1 F7): a graph stopped right after a tool ran (an ``interrupt``, a recursion limit) got the
    words its model said before calling the tool appended as its final answer; the state's last message is the
    tool's reply, so the run has none. The whole run still ends on its real answer."""
    run = only(_stopped_after_the_first_tool(tmp_path))
    assert _said(run) == [("get_weather", None)]
    assert _said(only(REACT_GRAPH))[-1] == (
        "respond", "Paris is sunny at 22 C. I could not get the population: the population service failed.")


def test_a_react_agents_final_answer_is_not_said_twice(tmp_path: Path) -> None:
    """Bug (review 1 F8): CrewAI's ReAct agent says "I now can give a great answer \\nFinal Answer: \\n```html ..."
    and the crew's result (``Crew.kickoff``'s ``raw``) is the answer alone. With that result as the trace's output
    (what an SDK writing the root's output to its trace keeps), the run gained a second ``respond`` step with the
    same HTML: the answer the last words end on, in other spacing, was taken for a new one."""
    download = json.loads(CREW.read_text())
    [kickoff] = [o for o in download["observations"] if o["name"] == "Crew.kickoff"]
    download["trace"]["output"] = json.dumps(json.loads(kickoff["output"])["raw"])
    (tmp_path / "crew.json").write_text(json.dumps(download))
    said = _said(only(tmp_path / "crew.json"))
    assert [a for a, _ in said] == ["respond"]
    assert said[0][1].startswith("I now can give a great answer") and "Final Answer:" in said[0][1]


def test_a_langsmith_download_whose_outputs_are_no_messages_keeps_its_answer(tmp_path: Path) -> None:
    """Bug (review 1 F9): a UI download whose outputs are a chain's ``{"output": ...}`` (no ``messages``) was a
    run of no step, its answer lost. The answer is read by the graph-answer rule: the supervisor's real final
    words, written as a chain's output."""
    download = json.loads(UI_RUN.read_text())
    answer = download["outputs"]["messages"][-1]["content"]
    download["outputs"] = {"output": answer}
    (tmp_path / UI_RUN.name).write_text(json.dumps(download, ensure_ascii=False))
    run = only(tmp_path / UI_RUN.name)
    assert run.trajectory_id == "ls:019e3de2-29fe-70b0-bc69-04c5227f876c"
    assert _said(run) == [("respond", answer)]


def test_a_langsmith_download_takes_its_id_from_its_file_name_not_the_run_id_its_metadata_holds(tmp_path: Path) -> None:
    """Review 3 N1: LangGraph Platform writes the root run's ``run_id`` into the metadata of every run of a trace
    (all 81 runs of a real run_ops file carry it), so a node's download and its root's would share one id and one
    would be lost. The id is the UI's ``run-<uuid>`` file name, else a hash of the content."""
    download = json.loads(UI_RUN.read_text())
    download["metadata"]["run_id"] = "019E3DE2-29FE-70B0-BC69-04C5227F876C"  # the root's run id, as metadata
    (tmp_path / "run-019e3de2-29fe-70b0-bc69-04c5227f876c.json").write_text(json.dumps(download, ensure_ascii=False))
    (tmp_path / "run-11111111-2222-3333-4444-555555555555.json").write_text(json.dumps(download, ensure_ascii=False))
    shutil.copy(UI_RUN, tmp_path / "copy.json")
    ids = {p.name: only(p).trajectory_id for p in sorted(tmp_path.iterdir())}
    assert ids == {"run-019e3de2-29fe-70b0-bc69-04c5227f876c.json": "ls:019e3de2-29fe-70b0-bc69-04c5227f876c",
                   "run-11111111-2222-3333-4444-555555555555.json": "ls:11111111-2222-3333-4444-555555555555",
                   "copy.json": ids["copy.json"]}
    assert ids["copy.json"].startswith("ls:sha1-")  # no run id in the name: the content's hash

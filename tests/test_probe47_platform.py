"""Platform exports users really make, read as the runs they hold (probe 47, area A: Langfuse, LangSmith, Phoenix).

Each test reads a real file, or one built as the platform's own writer builds it (the fixture folder's SOURCE.md
names the writer's source), through the public reader.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import adapter_support
from trajsearch.ingest.detect import SideFile, detect_format
from trajsearch.ingest.read import read_dump
from trajsearch.model import Outcome

FIXTURES = Path(__file__).parent / "fixtures"
LANGFUSE_EXPORT = FIXTURES / "langfuse" / ".real" / "batch-export"


def test_langfuse_traces_table_export_keeps_its_score_columns() -> None:
    """The UI's batch export of the traces table (JSONL; JSON and CSV hold the same rows) writes no ``scores``
    field: each score name of the project is a column of its own, a list of the trace's values or null. The
    ``task_success`` annotations were lost, so both runs read as outcome unknown; they decide now, and the other
    scores stay in metadata without deciding (a hallucination rate is no verdict)."""
    runs = {r.trajectory_id: r for r in adapter_support.runs(LANGFUSE_EXPORT / "traces-export.jsonl")}
    graph, joke = runs["lf:e1fde3efec57ce8a69bafd3fb928a7eb"], runs["lf:7a38edd8123db47ad8dcb8aa4c5e3926"]
    assert graph.outcome is Outcome.success and joke.outcome is Outcome.failure
    assert graph.task == "Search the web for 'example' and summarize."
    kept = {(s["name"], s.get("value"), s.get("label")) for s in graph.metadata["scores"]}
    assert kept == {("task_success", None, "pass"), ("hallucination", 0.1, None)}


LANGFUSE_LIST = FIXTURES / "langfuse" / ".real" / "api-trace-list"


def test_langfuse_trace_list_says_its_steps_are_not_in_the_input(caplog) -> None:
    """A page of ``GET /api/public/traces`` (what ``api.trace.list()`` / ``fetch_traces()`` give) lists each
    trace's observations and scores by id only. Its LangGraph trace read as a run of one ``respond`` step, the web
    search it made, its model calls and its two evaluations gone, and nothing said so: each run now says what it
    lacks, and the file is named once. The graph's output state holds the turn (the model's call, the tool's
    reply, the answer): it gives the steps, as the trace's own download does."""
    with caplog.at_level("WARNING"):
        runs = {r.trajectory_id: r for r in adapter_support.runs(LANGFUSE_LIST / "traces-page.json")}
    graph = runs["lf:e1fde3efec57ce8a69bafd3fb928a7eb"]
    whole = adapter_support.only(FIXTURES / "langfuse" / ".real" / "langgraph-2025-08-22.json")
    assert [(s.action, s.arguments, s.observation) for s in graph.steps] == \
        [(s.action, s.arguments, s.observation) for s in whole.steps]
    assert [s.action for s in graph.steps] == ["Web-Search", "respond"]
    assert [s.action for s in runs["lf:7a38edd8123db47ad8dcb8aa4c5e3926"].steps] == ["respond"]
    assert "lists 9 observations and 2 scores by id" in graph.metadata["not_in_input"]
    assert "lists 12 observations by id" in runs["lf:7a38edd8123db47ad8dcb8aa4c5e3926"].metadata["not_in_input"]
    assert sum("by id only" in r.getMessage() for r in caplog.records) == 1


def test_langfuse_trace_list_read_with_the_trace_itself_is_whole(tmp_path: Path) -> None:
    """Read with the UI's download of the same trace (its observations and scores whole), the listed trace is
    the whole run and says nothing is missing; the other listed trace still does. The list's version of the trace,
    read last, had replaced the download's whole, its scores with it."""
    for path in (LANGFUSE_LIST / "traces-page.json", FIXTURES / "langfuse" / ".real" / "langgraph-2025-08-22.json"):
        (tmp_path / path.name).write_bytes(path.read_bytes())
    runs = {r.trajectory_id: r for r in adapter_support.runs(tmp_path)}
    graph = runs["lf:e1fde3efec57ce8a69bafd3fb928a7eb"]
    assert "not_in_input" not in graph.metadata
    assert [s.action for s in graph.steps] == ["Web-Search", "respond"]
    assert {s["name"] for s in graph.metadata["scores"]} == {"hallucination", "toxicity"}
    assert "not_in_input" in runs["lf:7a38edd8123db47ad8dcb8aa4c5e3926"].metadata


LANGFUSE_V2 = FIXTURES / "langfuse" / ".real" / "api-v2-observations"


def test_langfuse_v2_observations_without_io_say_how_to_fetch_them() -> None:
    """Langfuse v4's read path, ``GET /api/public/v2/observations``, leaves ``input`` and ``output`` out unless
    the ``io`` field group is asked for. Such a page was rejected as "no task: trace 'live-chat' has no input"
    (naming a generation, not the trace, and not why); it now says the fields were not exported and how to ask."""
    [result] = list(read_dump(LANGFUSE_V2 / "default-fields.json"))
    assert not result.ok
    assert "a435bfd9c3df3b1291a81cce93577f9a" in result.error
    assert "without their input and output fields" in result.error and "fields=core,basic,io" in result.error


def test_langfuse_v2_observations_with_io_are_the_run() -> None:
    """The same page recorded with ``io`` (a live Langfuse 4.16.0) is read as its run: the root's question is the
    task, the failed model call is a step with its error, the root's output the answer."""
    run = adapter_support.only(LANGFUSE_V2 / "io.json")
    assert run.task == "round trip" and run.model_id == "gpt-4o-mini"
    assert [(s.action, s.error) for s in run.steps] == [("respond", "rate limited"), ("respond", None)]
    assert run.metadata["conversation_id"] == "tiny-agent-live-session"


LANGSMITH_ROOTS = FIXTURES / "langsmith" / ".real" / "list-runs"


def test_langsmith_root_runs_listed_alone_are_their_agent_turn() -> None:
    """``client.list_runs(is_root=True)``, the usual way to list a project's traces, gives each trace's root run
    without its children. A LangGraph agent's root keeps the whole turn in ``outputs.messages``; it was read as a
    run of no step at all. It is now the turn those messages hold: both tool calls with their results (the failed
    one with its error) and the answer, as the full trace reads."""
    run = adapter_support.only(LANGSMITH_ROOTS / "roots.json")
    whole = adapter_support.only(FIXTURES / "langsmith" / ".real" / "langgraph-react-runs-batch.json")
    assert run.trajectory_id == whole.trajectory_id and run.task == whole.task
    assert [(s.action, s.arguments, bool(s.error)) for s in run.steps] == \
        [(s.action, s.arguments, bool(s.error)) for s in whole.steps] == [
            ("get_weather", {"city": "Lyon"}, False), ("get_air_quality", {"city": "Lyon"}, True),
            ("respond", {"content": "Lyon is sunny. I couldn't get air-quality data (no sensor data)."}, False)]
    assert "No sensor data for Lyon" in run.steps[1].error


def test_langfuse_table_export_row_of_a_graph_gives_its_turn() -> None:
    """A traces-table export row holds no observation; a LangGraph trace's output state holds its turn, read as
    the trace's own download reads: the web search, its result and the answer."""
    [graph] = [r for r in adapter_support.runs(LANGFUSE_EXPORT / "traces-export.jsonl")
               if r.trajectory_id == "lf:e1fde3efec57ce8a69bafd3fb928a7eb"]
    assert [(s.action, s.arguments) for s in graph.steps][:1] == [("Web-Search", {"query": "example"})]
    assert graph.steps[-1].action == "respond" and len(graph.steps) == 2


PHOENIX = FIXTURES / "openinference" / ".real"


def test_phoenix_annotations_beside_the_spans_judge_the_run(tmp_path: Path) -> None:
    """Phoenix keeps evaluations as annotations, exported apart from the spans (``span_annotations``). Read with
    the spans, the file was "unrecognised dump format" and the run stayed outcome unknown; the root span's
    ``correctness: incorrect`` now fails it, while a model call's ``tool_calling: correct`` judges that call only."""
    for path in (PHOENIX / "phoenix-rest" / "langgraph.spans.json",
                 PHOENIX / "phoenix-annotations" / "langgraph.span_annotations.json"):
        (tmp_path / path.name).write_bytes(path.read_bytes())
    run = adapter_support.only(tmp_path)
    assert run.outcome is Outcome.failure and run.reward == 0.0
    assert [e["name"] for e in run.metadata["evaluations"]] == ["correctness"]
    assert [s.action for s in run.steps] == ["get_weather", "get_population", "respond"]


def test_phoenix_annotations_alone_say_what_they_lack() -> None:
    """The annotations read without their spans name what is missing, not "the trace holds only correctness
    spans and no input"."""
    errors = [r.error for r in read_dump(PHOENIX / "phoenix-annotations" / "langgraph.span_annotations.json")]
    assert errors and all("with none of the spans they judge" in e for e in errors)


def test_phoenix_dataframe_in_pandas_default_orient_is_its_spans() -> None:
    """``get_spans_dataframe().to_json("spans.json")`` writes pandas' default orient, one object per column
    (``{"name": {"<span id>": ...}}``), and ``orient="split"`` columns and rows apart: both were "unrecognised dump
    format". They are the same run as the dataframe's rows (``orient="records"``)."""
    rows = [line for line in (PHOENIX / "phoenix_spans_df.jsonl").read_text().splitlines()
            if '"3ee1ec4d5d61f1e85deed4a7e51fab22"' in line]
    frame = PHOENIX / "phoenix-dataframe"
    by_rows = [r for r in adapter_support.runs(PHOENIX / "phoenix_spans_df.jsonl")
               if r.trajectory_id == "oi:3ee1ec4d5d61f1e85deed4a7e51fab22"]
    assert len(rows) == 4 and len(by_rows) == 1
    for name in ("spans.columns.json", "spans.split.json"):
        assert detect_format(frame / name) == "openinference"
        assert [r.model_dump(mode="json") for r in adapter_support.runs(frame / name)] == \
            [r.model_dump(mode="json") for r in by_rows]


def test_langfuse_page_with_more_after_it_says_so(tmp_path: Path, caplog) -> None:
    """One page of the v2 observations API with a ``cursor`` (the API's default limit is 50 observations) may
    cut a trace in two; reading it said nothing, as Phoenix's pages now do. The recorded page, given the cursor
    the API writes when more exist, says so; the page as recorded (``"meta": {}``) does not."""
    page = json.loads((LANGFUSE_V2 / "io.json").read_text())
    page["meta"] = {"cursor": "eyJsYXN0U3RhcnRUaW1lVG8iOiIyMDI2LTA4LTIxVDE3OjM2OjQ1LjM2MloifQ"}
    (tmp_path / "page1.json").write_text(json.dumps(page))
    with caplog.at_level("WARNING"):
        adapter_support.only(tmp_path / "page1.json")
        adapter_support.only(LANGFUSE_V2 / "io.json")
    warned = [r.getMessage() for r in caplog.records if "more pages exist" in r.getMessage()]
    assert len(warned) == 1 and "page1.json" in warned[0] and "cursor" in warned[0]


def test_langfuse_table_exports_without_runs_say_what_they_are() -> None:
    """The same batch export writes the sessions and dataset run items tables, which hold no run: each was
    "unrecognised dump format"; each now names itself and where the runs are."""
    for name, said in (("sessions-export.jsonl", "sessions table export"),
                       ("dataset-run-items-export.jsonl", "dataset run items export")):
        with pytest.raises(SideFile, match=said):
            detect_format(LANGFUSE_EXPORT / name)


def _second_turn(first: dict, state: str, new_id: str, at: tuple[str, str]) -> dict:
    """The same thread asked again later (review of probe 47, RA 3): the trace's root under a new id, its output
    state holding the earlier turn and then this one (a LangGraph thread's state keeps every turn); a fresh copy of
    the first turn stands for the second, its message and tool call ids suffixed as a new turn's are new."""
    second = json.loads(json.dumps(first).replace(first["id"], new_id))
    turn = json.loads(json.dumps(first[state]["messages"]).replace('"call_', '"call2_').replace('-0"', '-1"'))
    second[state] = dict(first[state], messages=first[state]["messages"] + turn)
    for key, value in zip(at, ("2026-12-02 01:37:23.213861+00:00", "2026-12-02 01:37:23.241969+00:00")):
        if key in second:
            second[key] = value
    return second


def test_langsmith_root_runs_of_one_thread_read_as_a_conversation(tmp_path: Path) -> None:
    """Two root runs of one LangGraph thread, as ``list_runs(is_root=True)`` lists them, read with
    ``group_by="conversation"``: each root alone is its turn (the lone-root reading), but grouped they were one run
    of no step at all, the reading applying only to a group of one run. Each childless root is now its own turn."""
    [first] = json.loads((LANGSMITH_ROOTS / "roots.json").read_text())
    second = _second_turn(first, "outputs", "01a2342f-468d-729a-a8b2-5dbf74173e51", ("start_time", "end_time"))
    second["dotted_order"] = "20261202T013723213861Z01a2342f-468d-729a-a8b2-5dbf74173e51"
    (tmp_path / "roots.json").write_text(json.dumps([first, second]))
    turn = ["get_weather", "get_air_quality", "respond"]
    by_trace = adapter_support.runs(tmp_path / "roots.json")
    assert [[s.action for s in r.steps] for r in by_trace] == [turn, turn]
    thread = adapter_support.only(tmp_path / "roots.json", group_by="conversation")
    assert thread.trajectory_id == "ls:conversation:thread-77"
    assert [s.action for s in thread.steps] == turn + turn
    assert thread.task == "What's the weather in Lyon, and is the air clean?"


def test_langfuse_listed_traces_of_one_session_read_as_a_conversation(tmp_path: Path) -> None:
    """Two traces of one session on a page of the trace list, read with ``group_by="conversation"``: alone each is
    the turn its graph's output state holds; grouped, the session was a run of one ``respond`` (the first turn's
    web search and the second turn gone), the reading applying only to a group of one trace."""
    page = json.loads((LANGFUSE_LIST / "traces-page.json").read_text())
    first = dict(page["data"][0], sessionId="sess-1")
    second = _second_turn(first, "output", "e1fde3efec57ce8a69bafd3fb928a7ec", ("timestamp", "createdAt"))
    second["timestamp"] = "2025-08-22T09:48:56.228Z"
    (tmp_path / "page.json").write_text(json.dumps(dict(page, data=[first, second])))
    turn = ["Web-Search", "respond"]
    assert [[s.action for s in r.steps] for r in adapter_support.runs(tmp_path / "page.json")] == [turn, turn]
    session = adapter_support.only(tmp_path / "page.json", group_by="conversation")
    assert session.trajectory_id == "lf:conversation:sess-1"
    assert [s.action for s in session.steps] == turn + turn
    assert "observations and 2 scores by id" in session.metadata["not_in_input"]


def test_langfuse_score_of_a_download_and_a_table_export_row_is_one(tmp_path: Path) -> None:
    """The UI's download of a trace read with a traces-table export row of it: the row's score column repeats the
    download's ``hallucination`` 0.1 (its value alone, no comment or source), which the run listed twice. It is one
    score now, the download's (with the evaluator's comment); the row's own ``task_success`` still decides."""
    for path in (FIXTURES / "langfuse" / ".real" / "langgraph-2025-08-22.json",
                 LANGFUSE_EXPORT / "traces-export.jsonl"):
        (tmp_path / path.name).write_bytes(path.read_bytes())
    [graph] = [r for r in adapter_support.runs(tmp_path) if r.trajectory_id == "lf:e1fde3efec57ce8a69bafd3fb928a7eb"]
    assert graph.outcome is Outcome.success
    assert [(s["name"], s.get("value"), s.get("label"), s.get("source")) for s in graph.metadata["scores"]] == [
        ("hallucination", 0.1, None, "EVAL"), ("toxicity", 0.0, None, "EVAL"), ("task_success", None, "pass", None)]
    assert all(s.get("comment") for s in graph.metadata["scores"] if s["name"] != "task_success")


def test_langfuse_page_of_traces_or_scores_says_what_its_other_pages_hold(tmp_path: Path, caplog) -> None:
    """A page of the trace list or of the scores API with pages after it said "a trace of this one may go on in
    them (its runs would miss their other observations)": true of observation pages only. A page of traces says
    the other pages hold other traces; a page of scores that they hold other scores, which may judge these runs."""
    traces = json.loads((LANGFUSE_LIST / "traces-page.json").read_text())
    traces["meta"] = dict(traces["meta"], totalPages=2, totalItems=4)
    scores = json.loads((FIXTURES / "langfuse" / ".real" / "langgraph-2025-08-22.json").read_text())["trace"]["scores"]
    (tmp_path / "traces.json").write_text(json.dumps(traces))
    (tmp_path / "scores.json").write_text(json.dumps(
        {"data": scores, "meta": {"page": 1, "limit": 2, "totalItems": 3, "totalPages": 2}}))
    with caplog.at_level("WARNING"):
        list(read_dump(tmp_path / "traces.json"))
        list(read_dump(tmp_path / "scores.json"))
    warned = {r.getMessage().split(":")[0].rsplit("/", 1)[-1]: r.getMessage() for r in caplog.records
              if "more pages exist" in r.getMessage()}
    assert set(warned) == {"traces.json", "scores.json"}
    assert "other traces" in warned["traces.json"] and "go on" not in warned["traces.json"]
    assert "other scores" in warned["scores.json"] and "go on" not in warned["scores.json"]


def _large_trace_download(path: Path) -> dict:
    """The UI's "Download trace as JSON" of a trace as Langfuse v4 builds it for a trace at or over its omit-large-
    fields threshold (350 observations; langfuse/langfuse ``web/src/features/traces/server/buildTraceExport.ts`` @
    0ebbea787732cb7c9415769cb8250fd7d0ef2947): ``{"observations", "scores"}``, each observation's fields as that code
    maps them, without ``input``, ``output``, ``metadata``, ``toolCalls`` or ``toolDefinitions``. The observations
    and scores are the real download ``path``'s (of 9 observations: standing for a larger trace's)."""
    export = json.loads(path.read_text())
    keep = ("id", "traceId", "projectId", "startTime", "endTime", "parentObservationId", "type", "environment", "name",
            "level", "statusMessage", "version", "createdAt", "updatedAt", "model", "modelParameters",
            "internalModelId", "completionStartTime", "promptId", "promptName", "promptVersion", "usageDetails",
            "costDetails", "providedCostDetails")
    observations = [dict({k: o.get(k) for k in keep}, userId=None, sessionId=None, traceName=export["trace"]["name"],
                         release=None, toolCallNames=[], tags=[], bookmarked=False, public=False)
                    for o in export["observations"]]
    return {"observations": observations, "scores": export["trace"]["scores"]}


def test_langfuse_download_without_observation_io_says_the_download_left_it_out(tmp_path: Path) -> None:
    """Langfuse v4's trace download leaves every observation's input and output out of a large trace. Such a file
    was rejected as fetched from "Langfuse's v2 observations API", to be fetched again with ``fields=...io``: advice
    for an API the user never called. Only a v2 API row (``isRootObservation``) is named so; this one says the
    download left them out and how to get them."""
    (tmp_path / "trace.json").write_text(json.dumps(_large_trace_download(
        FIXTURES / "langfuse" / ".real" / "langgraph-2025-08-22.json")))
    [result] = list(read_dump(tmp_path / "trace.json"))
    assert not result.ok and "e1fde3efec57ce8a69bafd3fb928a7eb" in result.error
    assert "without their input and output" in result.error and "trace download left them out" in result.error
    assert "v2 observations API leaves them out" not in result.error
    assert "/api/public/observations?traceId=" in result.error


def test_langfuse_observations_without_io_beside_their_trace_are_said_missing(tmp_path: Path, caplog) -> None:
    """The trace from the trace list read with its observations fetched from the v2 API without ``io``: the run is
    the trace's question and answer, and the failed model call (``rate limited``) was gone without a word. The run
    now says its observations came without input and output, and the file is named once."""
    for name in ("traces-page.json", "default-fields.json"):
        (tmp_path / name).write_bytes((LANGFUSE_V2 / name).read_bytes())
    with caplog.at_level("WARNING"):
        run = adapter_support.only(tmp_path)
    assert run.task == "round trip" and [s.action for s in run.steps] == [None, "respond"]  # probe 48 L2: the failed
    assert run.steps[0].error == "rate limited"  # call is a step of its error alone
    said = run.metadata["not_in_input"]
    assert "2 observations" in said and "without their input and output" in said
    assert "v2 observations API leaves them out" in said and "fields=core,basic,io" in said
    assert "failed among them: live-chat: rate limited" in said  # review RX D2: the failure named, not lost
    assert "names, times and errors" not in said  # the run holds no step of them but the failed call's error
    assert sum("without their input and output" in r.getMessage() for r in caplog.records) == 1


def test_langfuse_legacy_download_without_observation_io_says_so() -> None:
    """A real legacy "Download trace as JSON" (Langfuse v3's trace view, langfuse/langfuse#15337): every
    observation came without input and output, so the run is the trace's question and answer alone. It says so,
    naming the download, not the v2 API."""
    run = adapter_support.only(FIXTURES / "langfuse" / ".real" / "agentprism-langfuse-3.json")
    said = run.metadata["not_in_input"]
    assert "5 observations" in said and "trace download left them out" in said
    assert "v2 observations API leaves them out" not in said


def test_langfuse_categorical_score_of_a_download_and_a_table_export_row_is_one(tmp_path: Path) -> None:
    """The row writes a CATEGORICAL score as its label alone (``"task_success": ["pass"]``); the API and the
    download write it with the number its score config maps the label to beside it. The same annotation, given
    to the download as Langfuse writes one (its hallucination score's fields, a config's ``pass`` = 1), is one."""
    export = json.loads((FIXTURES / "langfuse" / ".real" / "langgraph-2025-08-22.json").read_text())
    export["trace"]["scores"].append(dict(export["trace"]["scores"][0], id="0b7c2f4e-task-success", name="task_success",
                                          source="ANNOTATION", comment="checked by hand", value=1, stringValue="pass",
                                          dataType="CATEGORICAL"))
    (tmp_path / "download.json").write_text(json.dumps(export))
    (tmp_path / "traces-export.jsonl").write_bytes((LANGFUSE_EXPORT / "traces-export.jsonl").read_bytes())
    [graph] = [r for r in adapter_support.runs(tmp_path) if r.trajectory_id == "lf:e1fde3efec57ce8a69bafd3fb928a7eb"]
    assert [(s["name"], s.get("label"), s.get("comment")) for s in graph.metadata["scores"]
            if s["name"] == "task_success"] == [("task_success", "pass", "checked by hand")]
    assert graph.outcome is Outcome.success

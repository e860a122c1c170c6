"""Probe T of round 48: the least-covered formats (native JSONL, tau-bench / tau2-bench, Vercel AI SDK, LangSmith).

Through ``read_dump`` and the CLI on real files (``fixtures/vercel-ai/.real``: the unmodified AI SDK's own output,
see its SOURCE.md) or trimmed excerpts of them; no mocks.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from adapter_support import runs
from trajsearch.ingest.outcomes import OutcomeTable
from trajsearch.ingest.read import read_dump
from trajsearch.model import MAX_STEPS, Outcome

FIXTURES = Path(__file__).parent / "fixtures"
AI5 = FIXTURES / "vercel-ai" / ".real" / "ai5-streamText-tools-and-429.otlp.json"
AI5_TOOLS_ALONE = FIXTURES / "vercel-ai" / ".real" / "probeT48" / "ai5-tool-call-traces-alone.otlp.json"
AI5_RUNS_ALONE = FIXTURES / "vercel-ai" / ".real" / "probeT48" / "ai5-runs-without-their-tool-traces.otlp.json"


# -- Vercel AI SDK 5: streamText's tool calls are traces of their own ---------------------------------------


def test_ai5_stream_text_tool_calls_are_steps_of_their_run_not_runs_of_their_own() -> None:
    """Bug (real ``ai@5.0.277`` output): ``streamText`` runs tools outside the call's context, so each ``ai.toolCall``
    span is a trace of its own, and each was ingested as a run "ai.toolCall (no input recorded)" beside the real one:
    two junk runs for one conversation, the failed tool's a *failure* run that failure warnings would show."""
    read = runs(AI5, tenant="acme")
    assert sorted(r.task for r in read) == ["How do I install it, and how many users do we have?",
                                            "Summarise the quarterly report"]
    assert not any("ai.toolCall" in r.task for r in read)


def test_ai5_detached_tool_span_gives_its_step_its_own_error_and_times() -> None:
    """The joined span is the step's record: the tool's exception and start time (before: no time, and the error
    known only from the next prompt's ``error-text``, which a run that stops after the call, v5's default
    ``stepCountIs(1)``, never writes)."""
    [run] = [r for r in runs(AI5, tenant="acme") if r.task.startswith("How do I install")]
    steps = {s.action: s for s in run.steps}
    assert [s.action for s in run.steps] == ["searchDocs", "runSql", "respond"]
    assert steps["runSql"].error == "Error: permission denied for table users"
    assert steps["runSql"].arguments == {"sql": "select count(*) from users"}
    assert steps["searchDocs"].error is None and "Install guide" in steps["searchDocs"].observation
    assert all(steps[name].started_at is not None for name in ("searchDocs", "runSql"))
    assert run.outcome is Outcome.unknown  # the agent answered; the SDK records no verdict


def test_ai5_tool_call_traces_without_their_run_are_passed_over_not_runs() -> None:
    """An input holding only the detached tool-call traces (their run exported elsewhere) has no task to read: they
    are passed over, not two runs titled "ai.toolCall (no input recorded)" (one of them a failure)."""
    assert list(read_dump(AI5_TOOLS_ALONE, tenant="acme")) == []


def test_ai5_tool_call_traces_join_their_run_across_the_files_of_an_input(tmp_path: Path) -> None:
    """The exporter wrote the run and its detached tool calls to different files (another batch): read as one input
    (a folder), the calls join the run that requested them, in the order it asked for them."""
    for path in (AI5_TOOLS_ALONE, AI5_RUNS_ALONE):
        shutil.copy(path, tmp_path / path.name)
    read = runs(tmp_path, tenant="acme")
    assert len(read) == 2
    [run] = [r for r in read if r.task.startswith("How do I install")]
    assert [(s.action, s.error) for s in run.steps] == [
        ("searchDocs", None), ("runSql", "Error: permission denied for table users"), ("respond", None)]
    assert run.steps[0].started_at is not None


def test_ai5_run_whose_spans_are_read_twice_answers_once(tmp_path: Path) -> None:
    """Audit (round 21): the same spans twice in one input (an exporter's batch sent again; here the fixture folder,
    where ``probeT48/`` holds an excerpt of the run's file) gave the run its answer twice, two ``respond`` steps."""
    for name in ("a.otlp.json", "b.otlp.json"):
        shutil.copy(AI5, tmp_path / name)
    [run] = [r for r in runs(tmp_path, tenant="acme") if r.task.startswith("How do I install")]
    assert [(s.action, s.error) for s in run.steps] == [
        ("searchDocs", None), ("runSql", "Error: permission denied for table users"), ("respond", None)]
    assert run.metadata["spans"] == 5  # each span once (3 in its trace, 2 traced apart)


# -- outcome files: grader tables written by people ----------------------------------------------------------

OUTCOMES = FIXTURES / "outcomes" / ".real" / "probeT48"  # hidden from the fixture-walk tests


@pytest.mark.parametrize("table", ["hand-written.csv", "spreadsheet.csv", "excel-semicolon.csv"])
def test_grader_csv_as_people_write_it_gives_each_run_its_verdict(table: str) -> None:
    """Bugs: a CSV with a space after each comma gave "no run outcomes found" (its columns were " outcome" and
    " reward"), one with a typed header ("Run ID", "Outcome") and Excel's ";"-separated CSV "record 1 has no id
    column": the operator had to guess what was wrong with a file that plainly names every run's verdict."""
    verdicts = {r.trajectory_id: (r.outcome, r.reward)
                for r in runs(OUTCOMES / "runs.jsonl", outcomes=OutcomeTable.load(OUTCOMES / table))}
    assert verdicts == {"grader-run-1": (Outcome.success, 1.0), "grader-run-2": (Outcome.failure, 0.25)}


# -- native: a run longer than the step limit -----------------------------------------------------------------

LONG_NATIVE = FIXTURES / "native" / ".real" / "probeT48" / "week-long-session.jsonl.gz"


def test_native_run_over_the_step_limit_keeps_its_start_and_its_failing_end_not_rejected() -> None:
    """Bug: a native record of more than ``MAX_STEPS`` steps was rejected whole ("field 'steps' has too many items"):
    the run, its task and its failure were lost for an exporter of a long session. Then (review) it kept its first
    ``MAX_STEPS``, losing the failing step at the end, where a failure usually is: its start and its end are kept,
    each step with its own index, the stretch left out noted."""
    [run] = runs(LONG_NATIVE, tenant="acme")
    assert len(run.steps) == MAX_STEPS and run.metadata["steps_truncated_from"] == 5201
    assert [s.index for s in run.steps[:2]] == [0, 1]
    last = run.steps[-1]
    assert (last.index, last.action, last.error) == (5200, "bash", "release blocked: 3 flaky tests")
    count, first, end = run.metadata["steps_dropped"]
    assert count == 201 and MAX_STEPS // 4 <= first < end < 5200 - MAX_STEPS // 4 and end - first + 1 == 201
    assert not any(first <= s.index <= end for s in run.steps)
    assert run.outcome is Outcome.failure and run.failure.error == "release blocked: 3 flaky tests"


def test_native_run_over_the_step_limit_keeps_a_failed_step_from_the_stretch_it_leaves_out(tmp_path: Path) -> None:
    """A failed step in the middle of a long run (a test run that broke on day 3) is kept where the steps around it
    are left out: it is what a failure search should find."""
    import gzip
    import json
    record = json.loads(gzip.open(LONG_NATIVE, "rt").readline())
    record["steps"][2600]["error"] = "make test: 3 failed (test_layout.py)"
    (tmp_path / "run.jsonl").write_text(json.dumps(record) + "\n")
    [run] = runs(tmp_path / "run.jsonl", tenant="acme")
    assert len(run.steps) == MAX_STEPS
    assert [s.index for s in run.steps if s.error] == [2600, 5200]
    count, first, end = run.metadata["steps_dropped"]
    assert count == 201 and first < 2600 < end


def test_native_nan_for_a_missing_score_is_no_score_not_a_rejected_run() -> None:
    """Bug: Python's ``json`` writes a missing float as ``NaN``; a run with ``"quality_score": NaN`` was rejected as
    "quality_score: Input should be less than or equal to 1" (its reward's ``NaN`` was already read as none)."""
    first, second = runs(FIXTURES / "native" / ".real" / "probeT48" / "scored-rows.jsonl", tenant="acme")
    assert (first.quality_score, first.reward) == (0.8, 1.0)
    assert (second.trajectory_id, second.quality_score, second.reward) == ("eval-0002", None, None)
    assert second.outcome is Outcome.failure


@pytest.mark.parametrize("name", ["ai5.0.277-route-streamText-tools-under-doStream.json",
                                  "ai5.0.277-streamText-tools-under-call.json"])
def test_ai5_tool_spans_inside_the_trace_stay_one_step_each(name: str) -> None:
    """Real ``ai@5.0.277`` output with a context manager: its tool spans sit in the run's trace (under the first
    model call, or under the call span); each tool is one step, the failed one with its error, then the answer."""
    [run] = runs(AI5_TOOLS_ALONE.parent / name, tenant="acme")
    assert [(s.action, s.error) for s in run.steps] == [
        ("lookupOrder", None), ("refund", "Error: payments API is read-only"), ("respond", None)]
    assert run.task == "Refund 40 EUR on order A-17 if it was delivered."


# -- review of probe T (FRT): a detached tool call's id repeats across runs and within one ----------------------

REUSED_IDS = FIXTURES / "vercel-ai" / ".real" / "probeFRT48"


def _steps(run) -> list[tuple[str, str | None, str | None]]:  # type: ignore[no-untyped-def]
    return [(s.action, s.error, (s.observation or "")[:20] if s.action != "respond" else None) for s in run.steps]


@pytest.mark.parametrize("name", ["kimi-ids-two-runs.otlp.json", "kimi-ids-two-runs-stop1.otlp.json"])
def test_ai5_detached_tool_call_joins_its_own_run_when_another_run_reuses_its_call_id(name: str) -> None:
    """Bug: a detached ``ai.toolCall`` was keyed by call id and tool name only, and Kimi K2's ids
    (``functions.runSql:1``) repeat in every run: the run with the lowest trace id took every run's span (the other
    run's failed ``runSql`` read as its own, its steps doubled) and the other run lost its own. Each span joins the
    run whose time span holds it, after the model call that requested it."""
    by_task = {r.task[:12]: r for r in runs(REUSED_IDS / name, tenant="acme")}
    first, second = by_task["How do I ins"], by_task["How many use"]  # 60 s apart; the second's trace id is lower
    assert [(a, e) for a, e, _ in _steps(first)][:2] == [
        ("searchDocs", None), ("runSql", "Error: permission denied for table users")]
    assert [(a, e, o) for a, e, o in _steps(second)][:2] == [
        ("searchDocs", None, '[{"title": "Install '), ("runSql", None, '[{"count": 42}]')]
    assert len(first.steps) == len(second.steps) == (3 if "stop1" not in name else 2)
    assert all(s.started_at is not None for s in second.steps[:2])
    assert second.steps[1].started_at > first.steps[-1].started_at  # its own span's time, not the other run's


def test_ai5_detached_tool_call_that_fits_no_run_is_passed_over_not_given_to_one(tmp_path: Path) -> None:
    """The other run's trace is not in the input (exported elsewhere): its two tool spans, a minute after the run
    that is, fit no run and are passed over; they were joined to the only run holding their key (ahead of its own,
    listed first), giving it the other run's successful ``runSql`` for its failed one."""
    import json
    doc = json.loads((REUSED_IDS / "kimi-ids-two-runs.otlp.json").read_text())
    spans = doc["resourceSpans"][0]["scopeSpans"][0]["spans"]
    later = {s["traceId"] for s in spans if s["name"] == "ai.streamText" and not s["traceId"].startswith("ff")}
    mine = [s for s in spans if s["traceId"] not in later]
    late_tools = [s for s in mine if s["name"] == "ai.toolCall" and int(s["startTimeUnixNano"]) > int(
        min(x["startTimeUnixNano"] for x in mine)) + 30 * 10**9]
    doc["resourceSpans"][0]["scopeSpans"][0]["spans"] = late_tools + [s for s in mine if s not in late_tools]
    (tmp_path / "one-run.otlp.json").write_text(json.dumps(doc))
    [run] = runs(tmp_path / "one-run.otlp.json", tenant="acme")
    assert [(a, e) for a, e, _ in _steps(run)] == [
        ("searchDocs", None), ("runSql", "Error: permission denied for table users"), ("respond", None)]


def test_ai5_call_id_repeated_within_one_run_pairs_each_span_with_its_own_request() -> None:
    """Bug: OpenRouter's Gemini ids (``tool_0_runSql``) repeat within a run: both requests got the first detached
    span (its failure) and the second span, a success, was dropped. Paired in time order."""
    [run] = runs(REUSED_IDS / "gemini-id-reused-in-one-run.otlp.json", tenant="acme")
    assert _steps(run) == [("runSql", "Error: permission denied for table users", "permission denied fo"),
                           ("runSql", None, '[{"count": 42}]'), ("respond", None, None)]
    assert run.steps[0].arguments == {"sql": "select count(*) from users"}
    assert run.steps[1].arguments == {"sql": "select count(*) from accounts"}
    assert run.steps[0].started_at < run.steps[1].started_at


def test_codex_session_over_the_step_limit_keeps_the_command_it_failed_on(tmp_path: Path) -> None:
    """The same cut for a CLI session (``_agent_cli.finish_steps``, shared): a Codex rollout of 5,101 shell calls
    (the real rollout's lines, its ``ls app/api`` call repeated with new call ids, as Codex writes each call) whose
    last command failed kept its first 5,000 steps and lost that one."""
    import json
    real = FIXTURES / "codex-cli" / "rollout-2025-11-17T15-30-28-019a93b9-f380-7600-98ff-940e6b99603c.jsonl"
    lines = [json.loads(line) for line in real.read_text().splitlines()]
    head = lines[:lines.index(next(r for r in lines if r["payload"].get("type") == "function_call"))]
    ok, failed = [[r for r in lines if r["payload"].get("call_id") == next(
        c["payload"]["call_id"] for c in lines if c["payload"].get("type") == "function_call"
        and command in c["payload"]["arguments"])] for command in ('"ls app/api"', '"ls lib/ai"')]
    out = list(head)
    for n in range(5101):
        for record in ok if n < 5100 else failed:
            record = json.loads(json.dumps(record))
            record["payload"]["call_id"] = f"call_{n:05d}"
            out.append(record)
    (tmp_path / real.name).write_text("".join(json.dumps(r) + "\n" for r in out))
    [run] = runs(tmp_path / real.name)
    assert len(run.steps) == MAX_STEPS and run.metadata["steps_truncated_from"] == 5101
    assert run.steps[0].index == 0 and run.steps[-1].index == 5100
    assert run.steps[-1].arguments["command"][-1] == "ls lib/ai" and run.steps[-1].error
    assert run.metadata["steps_dropped"][0] == 101


def test_native_infinite_score_is_refused_as_out_of_range_not_read_as_missing(tmp_path: Path) -> None:
    """Only ``NaN`` is how Python's ``json`` writes a missing float; ``Infinity`` is a value (a score that overflowed,
    a division by zero in the grader) and was read as no score, hiding the grader's bug. A quality score of
    ``Infinity`` is refused naming the field, as 1.5 is; a reward of ``Infinity`` stays no reward (the model's rule
    for every format)."""
    import json
    rows = [json.loads(line.replace("NaN", "null")) for line in
            (FIXTURES / "native" / ".real" / "probeT48" / "scored-rows.jsonl").read_text().splitlines()]
    rows[1].update(quality_score=float("inf"), reward=float("inf"))  # json.dumps writes both as Infinity
    (tmp_path / "rows.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    first, second = read_dump(tmp_path / "rows.jsonl", tenant="acme")
    assert first.ok and not second.ok
    assert "quality_score" in second.error and "less than or equal to 1" in second.error
    rows[1]["quality_score"] = None
    (tmp_path / "rows.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    assert [r.trajectory.reward for r in read_dump(tmp_path / "rows.jsonl", tenant="acme")] == [1.0, None]


def test_grader_csv_written_by_r_names_its_columns_with_dots(tmp_path: Path) -> None:
    """R's ``read.csv`` makes "Run ID" the column ``Run.ID`` and ``write.csv`` writes it so, quoted, after a blank
    column of row names: the header was read as "run.id" and the file refused ("record 1 has no id column"). Its
    names are read as every other outcome header is (the adapters' own field-name rule)."""
    (tmp_path / "grades.csv").write_text('"","Run.ID","Outcome","Score"\n"1","grader-run-1","Pass",1\n'
                                         '"2","grader-run-2","Fail",0.25\n')
    verdicts = {r.trajectory_id: (r.outcome, r.reward)
                for r in runs(OUTCOMES / "runs.jsonl", outcomes=OutcomeTable.load(tmp_path / "grades.csv"))}
    assert verdicts == {"grader-run-1": (Outcome.success, 1.0), "grader-run-2": (Outcome.failure, 0.25)}


def test_ai5_concurrent_runs_with_the_same_call_ids_each_get_the_span_of_their_own_call(tmp_path: Path) -> None:
    """A server answering two chats at once (the second run of ``kimi-ids-two-runs`` moved to the first's very
    times, asking for accounts): both runs hold the time of both tool spans, and the ids are the same. The span goes
    to the run that asked for its arguments: the failed users query to the first, the accounts count to the
    second (in time order alone, the first span listed went to the first run)."""
    import json
    doc = json.loads((REUSED_IDS / "kimi-ids-two-runs.otlp.json").read_text())
    spans = doc["resourceSpans"][0]["scopeSpans"][0]["spans"]
    t0 = min(int(s["startTimeUnixNano"]) for s in spans)
    late = [s for s in spans if int(s["startTimeUnixNano"]) > t0 + 30 * 10**9]
    moved = json.loads(json.dumps(late).replace("select count(*) from users", "select count(*) from accounts"))
    for span in moved:
        for field in ("startTimeUnixNano", "endTimeUnixNano"):
            span[field] = str(int(span[field]) - 60 * 10**9)
        for event in span.get("events") or []:
            event["timeUnixNano"] = str(int(event["timeUnixNano"]) - 60 * 10**9)
    tools = [s for s in moved if s["name"] == "ai.toolCall"]
    early = [s for s in spans if s not in late]
    doc["resourceSpans"][0]["scopeSpans"][0]["spans"] = tools + early + [s for s in moved if s not in tools]
    (tmp_path / "concurrent.otlp.json").write_text(json.dumps(doc))
    by_task = {r.task[:12]: r for r in runs(tmp_path / "concurrent.otlp.json", tenant="acme")}
    users, accounts = by_task["How do I ins"], by_task["How many use"]
    assert [(s.action, s.arguments, s.error) for s in users.steps[:2]] == [
        ("searchDocs", {"query": "install"}, None),
        ("runSql", {"sql": "select count(*) from users"}, "Error: permission denied for table users")]
    assert [(s.action, s.arguments, s.error) for s in accounts.steps[:2]] == [
        ("searchDocs", {"query": "install"}, None), ("runSql", {"sql": "select count(*) from accounts"}, None)]
    assert accounts.steps[1].observation == '[{"count": 42}]'


OVERLAP = REUSED_IDS / "overlap-plain.otlp.json"
OVERLAP_DEFAULT = REUSED_IDS / "overlap-default.otlp.json"


@pytest.mark.parametrize("path", [OVERLAP, OVERLAP_DEFAULT], ids=["as-written", "schema-default-filled"])
def test_ai5_concurrent_runs_get_their_own_tool_span_when_the_schema_filled_a_default(path: Path) -> None:
    """Bug (review R3 of FRT's merge): a detached tool span records its arguments after the tool's schema filled
    its defaults (``limit: 100``), the model call's stand-in as the model wrote them. Preferring the stand-in with
    EQUAL arguments gave the first run's failing query to the second run (the only one whose model wrote ``limit``),
    and the second's result to the first. The model's arguments agree with the span's in every key both have: the
    time decides, and each run keeps its own outcome."""
    by_task = {r.task[:12]: r for r in runs(path, tenant="acme")}
    first, second = by_task["How do I ins"], by_task["How many use"]
    assert (first.steps[1].action, first.steps[1].error) == ("runSql", "Error: permission denied for table users")
    assert (second.steps[1].action, second.steps[1].error, second.steps[1].observation) == (
        "runSql", None, '[{"count": 42}]')


def _long_run_recovering(tmp_path: Path, start_failure: bool) -> Path:
    """The week-long native run with no failure record and a last step that succeeded (an outcome file's bare
    "failure"), a narrower test run at step 2600 (every other step runs the whole ``make test``) failing and run
    again, passing, at 2602; with ``start_failure``, a
    ``make migrate`` at step 1000 (in the start kept whatever) that failed and passed only at step 2650 (in the
    stretch left out)."""
    import gzip
    import json
    record = json.loads(gzip.open(LONG_NATIVE, "rt").readline())
    del record["failure"], record["steps"][-1]["error"]
    record["steps"][-1]["observation"] = "released"
    for index, error in ((2600, "3 failed (tests/test_layout.py)"), (2602, None)):
        record["steps"][index].update(arguments={"command": "pytest tests/test_layout.py -q"}, error=error,
                                      observation="3 failed" if error else "3 passed")
    if start_failure:
        for index, error in ((1000, "make: *** [migrate] Error 1"), (2650, None)):
            record["steps"][index] = {"index": index, "action": "bash", "arguments": {"command": "make migrate"},
                                      "observation": "ok" if error is None else "migration 12 failed", "error": error}
    (tmp_path / "run.jsonl").write_text(json.dumps(record) + "\n")
    return tmp_path / "run.jsonl"


@pytest.mark.parametrize("start_failure", [False, True], ids=["middle", "start"])
def test_native_run_over_the_step_limit_keeps_the_step_that_got_past_a_kept_error(
        tmp_path: Path, start_failure: bool) -> None:
    """Bug (review R3 of FRT's merge): a run over ``MAX_STEPS`` kept every failed step of the stretch it cut but not
    the passing run after it, so the cut run's decisive error was a test failure the whole run had got past (the
    run's failure named as "3 failed (tests/test_layout.py)"); so was a failure in the start, got past in the stretch
    left out. The step that got past a kept error is kept beside it: the cut run is read as the whole is (no step
    error it did not get past: the outcome itself)."""
    from trajsearch.represent import decisive_error
    [run] = runs(_long_run_recovering(tmp_path, start_failure), tenant="acme")
    assert len(run.steps) == MAX_STEPS and run.metadata["steps_truncated_from"] == 5201
    assert decisive_error(run) == (f"run ended with outcome failure after {MAX_STEPS} steps", -1)
    kept = {s.index for s in run.steps}
    assert {2600, 2602} <= kept and (not start_failure or {1000, 2650} <= kept)
    count, first, end = run.metadata["steps_dropped"]
    assert count == 201 and not any(s.index in (first, end) for s in run.steps)

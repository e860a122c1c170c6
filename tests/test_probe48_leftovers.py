"""Defects found by round p47's probes and left open, fixed in round p48 (area L); each fixture's origin is in its
folder's ``SOURCE.md``."""

from __future__ import annotations

import json
from pathlib import Path

from cli_support import run_cli
from test_probe47_benchmarks import _iterative_run_set
from trajsearch.export.formats import to_record
from trajsearch.ingest.checkpoint import Checkpoint
from trajsearch.ingest.outcomes import OutcomeTable
from trajsearch.ingest.read import read_dump
from trajsearch.model import Outcome
from trajsearch.represent import decisive_error, failure_text

FIXTURES = Path(__file__).parent / "fixtures"


def only_run(path: Path):
    [run] = [r.trajectory for r in read_dump(path, tenant="acme")]
    return run


def _graded_failed(folder: Path, tmp_path: Path):
    """The one run of a Claude Code session folder, graded failed by an outcomes CSV (as ``ingest --outcomes``)."""
    run = only_run(folder)
    grades = tmp_path / "outcomes.csv"
    grades.write_text(f"run_id,outcome\n{run.trajectory_id},failure\n")
    [graded] = [r.trajectory for r in read_dump(folder, tenant="acme", outcomes=OutcomeTable.load(grades))]
    assert graded.outcome == Outcome.failure
    return graded


def test_a_background_tasks_one_failure_is_one_failed_step_however_often_it_is_reported(tmp_path: Path) -> None:
    """Bug (probe 47, left open; L1): Claude Code 2.1.40 ran the tests in the background, the agent polled the task
    twice with ``TaskOutput`` (both polls: ``failed``, exit code 1) and the CLI queued the task's failed
    ``<task-notification>``: the launch and both polls were each an error step, three failed steps (three failure
    rows, three runtime warnings) for one failed test run. One failure is one failed step, the last poll, whose
    output is whole (the first one's lacks the ``AssertionError`` the command wrote to stderr); the first poll and
    the launch keep what they were told, with no error of their own.

    Review (RL): the error had been left on the first poll; the second, the same call without an error, made the
    failure read as one the run got past, and the run graded failed had no decisive error ("run ended with outcome
    failure after 4 steps")."""
    run = _graded_failed(FIXTURES / "claude-code" / ".real" / "probe-l48" / "poll-twice-2.1.40", tmp_path)
    launch, first, second, answer = run.steps
    assert [s.action for s in run.steps] == ["Bash", "TaskOutput", "TaskOutput", "respond"]
    assert [s for s in run.steps if s.error] == [second]
    assert second.error == "E AssertionError: 3 \\!= 4 (exit code 1)"
    assert "<status>failed</status>" in first.observation and "1 failed, 9 passed" in first.observation
    assert launch.observation.endswith('Background command "Run the test suite" failed with exit code 1')
    assert decisive_error(run) == (second.error, 2)
    text, position = failure_text(run)
    assert position == 2 and "Error: E AssertionError: 3 \\!= 4 (exit code 1)" in text
    assert 'Failing step: TaskOutput {"block": true, "task_id": "bbe7fc9"' in text


def test_a_background_tasks_failure_notified_then_polled_is_the_polls_error(tmp_path: Path) -> None:
    """Review (RL): the CLI delivered the task's ``<task-notification>`` (its one-line summary) before the agent
    polled the task: the launch kept the summary as the run's error and the poll, which holds the exit code and the
    output, had none. The poll's report is the more detailed: the error moves there, the launch keeps the summary
    as what it was told; one failure is still one failed step."""
    run = _graded_failed(FIXTURES / "claude-code" / ".real" / "probe-l48" / "notified-then-polled-2.1.40", tmp_path)
    launch, poll, answer = run.steps
    assert [s for s in run.steps if s.error] == [poll]
    assert launch.observation.endswith('Background command "Run the test suite" failed with exit code 1')
    assert decisive_error(run) == ("E AssertionError: 3 \\!= 4 (exit code 1)", 1)


def test_a_phoenix_spans_dataframe_renumbered_and_written_on_one_long_line_is_read(tmp_path: Path) -> None:
    """Bug (probe 47, left open; L3): Phoenix's spans dataframe written with ``df.reset_index(drop=True).to_json()``
    (pandas' default ``columns`` orient, the rows numbered ``"0"``, ``"1"``, ... instead of keyed by span id) is one
    JSON line; over 64 KiB (any frame of more than a few traces) detection, which reads the head, found no record
    and no signature: "unrecognised dump format". It reads as the same runs as the frame written as records."""
    frame = FIXTURES / "openinference" / ".real"
    renumbered = sorted((r.trajectory for r in read_dump(frame / "phoenix-dataframe" / "spans.reset-index.columns.json",
                                                          tenant="acme")), key=lambda t: t.trajectory_id)
    rows = sorted((r.trajectory for r in read_dump(frame / "phoenix_spans_df.jsonl", tenant="acme")),
                  key=lambda t: t.trajectory_id)
    assert len(renumbered) == 4
    assert [t.model_dump(exclude={"metadata"}) for t in renumbered] == [t.model_dump(exclude={"metadata"}) for t in rows]
    # another table in the same shape (pandas' columns orient, a "name" column first) is said to be no spans frame
    other = tmp_path / "runs.json"
    other.write_text(json.dumps({"name": {str(i): f"run-{i}" for i in range(5000)},
                                 "status": {str(i): "ok" for i in range(5000)}}, separators=(",", ":")))
    [rejected] = list(read_dump(other, tenant="acme"))
    assert not rejected.ok and "not Phoenix's spans dataframe: it has no 'context.span_id' column" in rejected.error


def test_a_checkpointed_reingest_reads_an_attempt_again_once_its_run_set_is_aggregated(tmp_path: Path, home) -> None:
    """Bug (probe 47, left open; L4): an OpenHands iterative run set (``output.critic_attempt_<N>.jsonl``, built from
    the real Multi-SWE-bench line) ingested while it ran, then again once ``output.jsonl`` (the aggregate, attempt 2
    handed in and judged resolved) was written: the checkpoint had the attempt files done (their bytes unchanged),
    so attempt 1 stayed ``handed_in: null`` in the store, where a fresh read says false (another attempt is handed
    in). An attempt file is read again when the files it is read with (its aggregate, the other attempts) change."""
    folder = tmp_path / "eval"
    _iterative_run_set(folder)
    aggregate = (folder / "output.jsonl").read_text()
    (folder / "output.jsonl").unlink()  # aggregate_results has not run yet
    code, out, err = run_cli("ingest", str(folder), "--quiet")
    assert code == 0 and "ingested 2 runs" in " ".join(out.split()), out + err
    (folder / "output.jsonl").write_text(aggregate)
    code, out, err = run_cli("ingest", str(folder), "--quiet")
    assert code == 0, out + err
    fresh = {r.trajectory.trajectory_id: r.trajectory for r in read_dump(folder, tenant="acme")}
    assert sorted(run.metadata["handed_in"] for run in fresh.values()) == [False, True]
    for run_id, run in fresh.items():
        code, out, err = run_cli("show", run_id, "--json")
        assert code == 0, out + err
        stored = json.loads(out)
        assert stored["metadata"]["handed_in"] is run.metadata["handed_in"], run_id
        assert stored["outcome"] == run.outcome.value, run_id


def test_a_checkpoint_of_many_inputs_is_saved_at_a_pace_its_size_allows(tmp_path: Path) -> None:
    """Bug (probe 47, left open; L5): an ingest's checkpoint keeps every input its job ever read, and each save
    rewrites it whole, once a second: at 100k inputs (18 MB, about 1.4 s a save here) an ingest of 300 new sessions
    took 34 s instead of 18 s, writing 18 MB a second. A save now waits nine times as long as the last one took (at
    least ``min_interval``, here 0 so that only that rule holds it back); a forced save (the ingest's last) writes
    all the same, and nothing committed is lost."""
    path = tmp_path / "checkpoint.json"
    checkpoint = Checkpoint.open(path, {"store": "s"})
    checkpoint.min_interval = 0.0
    for i in range(30_000):  # the rule holds at any size; this one takes a moment to write
        checkpoint.units[f"/data/runs/{i:06d}.jsonl"] = {"fingerprint": f"{i:032x}", "seq": 1, "cursor": None,
                                                         "done": True}
    checkpoint.save(force=True)
    written = path.stat().st_ino  # each save replaces the file (a new inode)
    checkpoint.advance("/data/runs/new.jsonl", 0, None)
    checkpoint.save()  # right after a save that took a while: not yet
    assert path.stat().st_ino == written
    checkpoint.save(force=True)
    assert Checkpoint.open(path, {"store": "s"}).units["/data/runs/new.jsonl"]["seq"] == 1


def test_a_code_interpreter_cell_that_raised_is_a_failed_step() -> None:
    """Bug (probe 47, left open; L6): OpenAI's hosted code interpreter (Responses API, here through the Agents SDK
    and Logfire) marks its call ``completed`` when the code raised: the interpreter ran it, and the output ends in
    IPython's report of the exception. The cell read as a step that worked, the KeyError lost to failure search and
    warnings. Its error is the exception's line; the next cell, which ran, has none."""
    run = only_run(FIXTURES / "openai-agents" / ".real" / "probeL48"
                   / "logfire-5.4-agents-0.24-code-interpreter-cell-raised.otlp.json")
    raised, ran, answer = run.steps
    assert (raised.action, ran.action, answer.action) == ("code_interpreter", "code_interpreter", "respond")
    assert raised.error == "KeyError: 'revenue'" and "Traceback (most recent call last)" in raised.observation
    assert ran.error is None and ran.observation.strip() == "[nan, 0.25, -0.28, 0.556]"


def test_a_langfuse_model_call_that_failed_without_its_input_and_output_is_a_step_of_its_error(tmp_path: Path) -> None:
    """Bug (probe 47, left open; L2): a trace from the trace list read with its observations from Langfuse's v2 API
    without ``io`` (a live Langfuse 4.16 recording): the model call ``live-chat`` failed (level ERROR, "rate limited")
    and, with no input or output, left no step: the failure was only named in ``not_in_input``, out of failure search
    and the runtime's warnings. It is a step of its error alone (no action, nothing of what it was asked or said,
    which the export left out), in its place before the answer; the note still names it.

    Review (RL): the ingester's note ("llm live-chat failed ...") was the step's thought, which step rows index as
    the agent's and an export writes as an assistant message; it is the step's observation."""
    source = FIXTURES / "langfuse" / ".real" / "api-v2-observations"
    for name in ("traces-page.json", "default-fields.json"):
        (tmp_path / name).write_bytes((source / name).read_bytes())
    [run] = [r.trajectory for r in read_dump(tmp_path, tenant="acme")]
    failed, answer = run.steps
    assert (failed.action, failed.error, failed.arguments) == (None, "rate limited", None)
    assert failed.thought is None
    assert failed.observation == "llm live-chat failed (its input and output were not exported)"
    assert failed.started_at is not None and answer.action == "respond" and answer.error is None
    assert "failed among them: live-chat: rate limited" in run.metadata["not_in_input"]
    said = [m.get("content") or "" for m in to_record(run, "openai-chat")["messages"] if m["role"] == "assistant"]
    assert not any("live-chat failed" in text for text in said), said


def test_a_failure_row_whose_decisive_step_has_no_action_has_no_empty_failing_step_line() -> None:
    """Review (RL): a run whose decisive error is a step of its error alone (no action: here the OpenAI Agents SDK's
    "Max turns exceeded" through LangSmith, a span's failure) ended its failure row on an empty "Failing step:"
    line, a label naming nothing in the text failure search embeds; a warning's digest names no step for it."""
    runs = [r.trajectory for r in read_dump(FIXTURES / "langsmith" / ".real" / "oai-agents-via-langsmith.batch.jsonl",
                                             tenant="acme")]
    [failed] = [run for run in runs if run.outcome == Outcome.failure]
    text, position = failure_text(failed)
    assert failed.steps[position].action is None
    assert text.endswith('Error: Max turns exceeded: {"max_turns": 2}') and "Failing step" not in text

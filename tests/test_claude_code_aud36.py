"""Claude Code 2.1.332's headless stream-json (``claude -p --output-format stream-json``): the output of an Agent SDK
session, which opens with the CLI's answer to the SDK's ``initialize`` request; the turns a scheduled task starts,
whose fired prompt stream-json never echoes; a ``/clear``, which starts a new conversation. The real files
(``claude-code/.aud35/``, ``.aud36/``) are the 2.1.332 CLI's; their origin is in each folder's ``README.md``."""

from __future__ import annotations

import json
from pathlib import Path

from trajsearch.ingest.read import read_dump

FIXTURES = Path(__file__).parent / "fixtures" / "claude-code"
SDK_STREAM = FIXTURES / ".aud36" / "sdk-stream-2.1.332" / "stdout.jsonl"
CRON_STREAM = FIXTURES / ".aud35" / "cron-fire-2.1.332" / "stream-json-stdout.jsonl"
CLEAR_STREAM = FIXTURES / ".aud36" / "clear-2.1.332" / "stdout.jsonl"


def test_an_sdk_sessions_stream_is_read() -> None:
    """Bug: stream-json of a session an SDK drives (``--input-format stream-json``, ``initialize`` sent first) opens
    with a ``control_response`` record, and detection refused the whole output as an unrecognised format."""
    (parsed,) = list(read_dump(SDK_STREAM, tenant="acme"))
    assert parsed.fmt == "claude-code" and parsed.trajectory is not None, parsed.error
    run = parsed.trajectory
    assert run.task == "FIRSTASK: say something"
    assert run.metadata["user_prompts"] == ["FOLLOWUP: no, say hi instead"]
    assert [s.arguments["content"] for s in run.steps] == ["answer to the first", "answer to the follow-up"]


def test_a_stream_of_a_fired_task_alone_says_so(tmp_path: Path) -> None:
    """Bug: stream-json of a turn a scheduled task started (the real output from the fire on) was refused for telling
    the user to pass ``--replay-user-messages``, which echoes no fired prompt either: the refusal says a task fired."""
    lines = CRON_STREAM.read_text().splitlines()
    start = next(n for n, line in enumerate(lines) if '"wakeup_source":"schedule_wakeup"' in line)
    (path := tmp_path / "fired.jsonl").write_text("\n".join(lines[start:]) + "\n")
    (parsed,) = list(read_dump(path, tenant="acme"))
    assert parsed.trajectory is None
    assert "a scheduled task" in str(parsed.error) and "not even with `--replay-user-messages`" in str(parsed.error)


def test_a_streams_scheduled_turns_are_counted() -> None:
    """Bug: the reply to a fired task in stream-json read as more of the answer to the user's prompt, with nothing
    saying that a turn answered a prompt the output does not hold: ``metadata.scheduled_turns`` counts them."""
    (parsed,) = list(read_dump(CRON_STREAM, tenant="acme"))
    run = parsed.trajectory
    assert run is not None and run.task == "SCHED: remind me in two minutes to say hi"
    assert run.metadata["scheduled_turns"] == 1


def test_a_clear_in_a_stream_starts_a_new_run() -> None:
    """Bug: stream-json holding a ``/clear`` (``conversation_reset``) read as one run: named by the second session's
    id, its task the first conversation's prompt, the prompt after the clear (which the model answered knowing
    nothing of the first) a follow-up. Each conversation is a run, as each is a transcript file of its own."""
    runs = [p.trajectory for p in read_dump(CLEAR_STREAM, tenant="acme")]
    assert all(runs)
    assert [(r.task, r.metadata["session_id"], [s.arguments["content"] for s in r.steps]) for r in runs] == [
        ("FIRSTASK: say something", "f9d7727b-5013-49de-a5ec-bdc602ecbfb7", ["answer to the first"]),
        ("FOLLOWUP: a new task after the clear", "3182c72d-f643-4f40-be19-f824eb82dd68", ["answer to the follow-up"])]
    assert not any(r.metadata.get("user_prompts") for r in runs)


def test_a_clear_that_ends_a_stream_is_no_run(tmp_path: Path) -> None:
    """The real stream cut after the ``/clear``'s own result: the new conversation asks nothing, no second run."""
    lines = CLEAR_STREAM.read_text().splitlines()
    end = next(n for n, line in enumerate(lines) if "new task after the clear" in line) - 3
    (path := tmp_path / "cleared.jsonl").write_text("\n".join(lines[:end]) + "\n")
    runs = [p.trajectory for p in read_dump(path, tenant="acme")]
    assert [r.task for r in runs if r] == ["FIRSTASK: say something"] and len(runs) == 1


def _derived(tmp_path: Path, lines: list[str], name: str) -> Path:
    """A copy of a real fixture's lines (changed as the test says) in ``tmp_path``."""
    (path := tmp_path / name).write_text("\n".join(lines) + "\n")
    return path


def test_a_stream_opening_with_a_clear_is_one_run(tmp_path: Path) -> None:
    """Bug: a stream whose first conversation asks nothing (it opens with the ``/clear``, as an SDK host that reuses
    its process and clears between conversations writes) also yielded a refusal of that empty first part."""
    lines = CLEAR_STREAM.read_text().splitlines()
    start = next(n for n, line in enumerate(lines) if '"state":"queued"' in line and "49e581ae" in line)
    parsed = list(read_dump(_derived(tmp_path, lines[start:], "opens-cleared.jsonl"), tenant="acme"))
    assert [(p.trajectory.task if p.trajectory else p.error) for p in parsed] == [
        "FOLLOWUP: a new task after the clear"]


def test_an_sdk_stream_without_the_version_is_read(tmp_path: Path) -> None:
    """Bug: only an ``initialize`` answer naming ``claude_code_version`` (2.1.332, not always) was recognised; the SDK's
    documented ``SDKControlInitializeResponse`` has no such field (``commands``, ``output_style``, ``models`` ...), so
    the stream-json of an older SDK-driven CLI was still an unrecognised format. The real stream without the field."""
    lines = SDK_STREAM.read_text().splitlines()
    first = json.loads(lines[0])
    del first["response"]["response"]["claude_code_version"]
    path = _derived(tmp_path, [json.dumps(first), *lines[1:]], "older.jsonl")
    (parsed,) = list(read_dump(path, tenant="acme"))
    assert parsed.trajectory is not None, parsed.error
    assert parsed.trajectory.task == "FIRSTASK: say something"


def test_a_plan_mode_reset_does_not_split_the_run(tmp_path: Path) -> None:
    """Bug: every ``conversation_reset`` split the run, though leaving plan mode with its context cleared
    (``trigger: "plan_mode_exit"``) or the fresh session that implements an approved plan (``fresh_session``) goes on
    with the task the user set: their shape in stream-json is not known (no real file), so they stay one run, as
    before the split. The real ``/clear`` stream with its reset's trigger changed."""
    text = CLEAR_STREAM.read_text().replace('"trigger":"clear"', '"trigger":"plan_mode_exit"')
    runs = [p.trajectory for p in read_dump(_derived(tmp_path, text.splitlines(), "plan.jsonl"),
                                            tenant="acme")]
    assert [(r.task if r else None) for r in runs] == ["FIRSTASK: say something"]
    assert [s.arguments["content"] for s in runs[0].steps] == ["answer to the first", "answer to the follow-up"]


def test_a_stream_of_a_loop_wakeup_alone_says_so(tmp_path: Path) -> None:
    """Bug: a turn a dynamic ``/loop``'s wakeup started (``wakeup_source: "loop_wakeup"``, the schema's other
    scheduler value) was neither counted nor named: output of it alone told the user to pass
    ``--replay-user-messages``, which echoes no wakeup's prompt either. The real fire's stream with the value changed
    (no real ``/loop`` stream is held)."""
    lines = CRON_STREAM.read_text().replace('"wakeup_source":"schedule_wakeup"', '"wakeup_source":"loop_wakeup"')
    lines = lines.splitlines()
    start = next(n for n, line in enumerate(lines) if '"wakeup_source":"loop_wakeup"' in line)
    (parsed,) = list(read_dump(_derived(tmp_path, lines[start:], "loop.jsonl"), tenant="acme"))
    assert parsed.trajectory is None and "`/loop`'s wakeup" in str(parsed.error), parsed.error
    assert "not even with `--replay-user-messages`" in str(parsed.error)

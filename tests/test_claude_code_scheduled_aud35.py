"""Claude Code's scheduled tasks (``CronCreate``): the prompt a task fires is written as a user record marked
``isMeta`` with ``promptSource: "system"``, as the CLI's own injections are, and ``wakeupSource: "schedule_wakeup"``
(2.1.332) or the task's ``scheduledTaskId`` (2.1.27x). It is the prompt the task was set to send, not the CLI's text.
The CLI's notice of a task missed while it was not running has the same marks; it is the CLI's text, no prompt.
The real files (``claude-code/.aud35/``) are the 2.1.332 CLI's; their origin is in its ``README.md``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from trajsearch.ingest.read import read_dump
from trajsearch.model import Trajectory

REAL = Path(__file__).parent / "fixtures" / "claude-code" / ".aud35" / "cron-fire-2.1.332"
SESSION = REAL / "06c554e0-471e-4f69-8926-9bc4501d6559.jsonl"
FIRED = "CRONFIRED: say hi"
MISSED = Path(__file__).parent / "fixtures" / "claude-code" / ".aud35" / "missed-task-2.1.332"


def _run(path: Path) -> Trajectory:
    (parsed,) = list(read_dump(path, tenant="acme"))
    assert parsed.trajectory is not None, parsed.error
    return parsed.trajectory


def _fire_alone(tmp_path: Path, change: dict[str, Any]) -> Path:
    """The real session from the fire on, as a session a task started (a durable task firing in a new session):
    the fired prompt, changed by ``change``, and the reply to it."""
    records = [json.loads(line) for line in SESSION.read_text().splitlines()]
    start = next(n for n, r in enumerate(records) if r.get("type") == "user" and r["message"]["content"] == FIRED)
    fire = {**records[start], "parentUuid": None, **change}
    kept = [fire] + [r for r in records[start + 1:] if r.get("type") == "assistant"]
    (path := tmp_path / SESSION.name).write_text("\n".join(json.dumps(r) for r in kept) + "\n")
    return path


def test_the_prompt_a_scheduled_task_fired_is_a_prompt() -> None:
    """Bug: the prompt the task fired (``isMeta``, ``wakeupSource: "schedule_wakeup"``) was dropped as the CLI's
    injected text: the reply to it answered nothing the run recorded. The real run: the user asks for a reminder,
    the agent schedules it (``CronCreate``), the task fires two minutes later and the agent answers."""
    run = _run(SESSION)
    assert run.task == "SCHED: remind me in two minutes to say hi"
    assert run.metadata["user_prompts"] == [FIRED]
    assert [s.action for s in run.steps] == ["ToolSearch", "CronCreate", "respond", "respond"]


def test_a_session_a_scheduled_task_started_is_read(tmp_path: Path) -> None:
    """Bug: a session whose only prompt a scheduled task fired was refused ("no user prompt"), in 2.1.332's shape and
    in 2.1.27x's (the task named by ``scheduledTaskId``, no ``wakeupSource``)."""
    assert _run(_fire_alone(tmp_path, {})).task == FIRED
    run = _run(_fire_alone(tmp_path, {"wakeupSource": None, "scheduledTaskId": "7af76095"}))
    assert run.task == FIRED and [s.action for s in run.steps] == ["respond"]


def test_the_notice_of_a_missed_task_is_not_the_task() -> None:
    """Bug: the CLI's notice of a scheduled task missed while it was not running ("The following one-shot scheduled
    task was missed ...", marked ``wakeupSource: "schedule_wakeup"`` as a fire is) was read as a prompt, and as the
    task of the session it opened; the user's typed prompt is the task."""
    run = _run(MISSED / "dc595d12-4415-4dce-937e-24468d9ebe44.jsonl")
    assert run.task == "TYPED: hello"
    assert not run.metadata.get("user_prompts")


def test_a_stream_a_scheduled_task_opened_is_claude_code() -> None:
    """Bug: 2.1.332's stream-json output that opens with a scheduler's fire (here the missed-task notice) starts with
    a ``command_lifecycle`` record before ``init``, and detection refused the run as an unrecognised format."""
    (parsed,) = list(read_dump(MISSED / "stream-json-stdout.jsonl", tenant="acme"))
    assert parsed.fmt == "claude-code" and parsed.trajectory is not None, parsed.error
    assert parsed.trajectory.task == "TYPED: hello"


def test_a_task_id_that_is_no_string_marks_no_fire(tmp_path: Path) -> None:
    """A ``scheduledTaskId`` the CLI writes is a string; any other truthy value (an object) marked an ``isMeta``
    record a fired prompt all the same. Such a record stays the CLI's: the session has no prompt."""
    path = _fire_alone(tmp_path, {"wakeupSource": None, "scheduledTaskId": {"id": "7af76095"}})
    (parsed,) = list(read_dump(path, tenant="acme"))
    assert parsed.trajectory is None and "no user prompt" in str(parsed.error)

"""Claude Code's scheduled tasks (``CronCreate``): the prompt a task fires is written as a user record marked
``isMeta`` with ``promptSource: "system"``, as the CLI's own injections are, and ``wakeupSource: "schedule_wakeup"``
(2.1.332) or the task's ``scheduledTaskId`` (2.1.27x). It is the prompt the task was set to send, not the CLI's text.
The real file (``claude-code/.aud35/cron-fire-2.1.332/``) is the 2.1.332 CLI's; its origin is in its ``README.md``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from trajsearch.ingest.read import read_dump
from trajsearch.model import Trajectory

REAL = Path(__file__).parent / "fixtures" / "claude-code" / ".aud35" / "cron-fire-2.1.332"
SESSION = REAL / "06c554e0-471e-4f69-8926-9bc4501d6559.jsonl"
FIRED = "CRONFIRED: say hi"


def _run(path: Path) -> Trajectory:
    (parsed,) = list(read_dump(path, tenant="acme"))
    assert parsed.trajectory is not None, parsed.error
    return parsed.trajectory


def _fire_alone(tmp_path: Path, change: dict[str, Any]) -> Trajectory:
    """The real session from the fire on, as a session a task started (a durable task firing in a new session):
    the fired prompt, changed by ``change``, and the reply to it."""
    records = [json.loads(line) for line in SESSION.read_text().splitlines()]
    start = next(n for n, r in enumerate(records) if r.get("type") == "user" and r["message"]["content"] == FIRED)
    fire = {**records[start], "parentUuid": None, **change}
    kept = [fire] + [r for r in records[start + 1:] if r.get("type") == "assistant"]
    (path := tmp_path / SESSION.name).write_text("\n".join(json.dumps(r) for r in kept) + "\n")
    return _run(path)


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
    assert _fire_alone(tmp_path, {}).task == FIRED
    run = _fire_alone(tmp_path, {"wakeupSource": None, "scheduledTaskId": "7af76095"})
    assert run.task == FIRED and [s.action for s in run.steps] == ["respond"]


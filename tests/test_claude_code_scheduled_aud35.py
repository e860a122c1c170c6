"""Claude Code's scheduled tasks (``CronCreate``, ``/loop``): the prompt a task fires is written as a user record
marked ``isMeta`` with ``promptSource: "system"`` and the task's ``scheduledTaskId``, after a ``system``
``scheduled_task_fire`` record. It is the prompt the user set the task to send, not text the CLI injected. The file
(``claude-code/.aud35/``) is a real 2.1.332 session with its typed prompt turned into such a fire; its ``README.md``
says where the shape comes from."""

from __future__ import annotations

import json
from pathlib import Path

from trajsearch.ingest.read import read_dump
from trajsearch.model import Trajectory

FIRED = Path(__file__).parent / "fixtures" / "claude-code" / ".aud35" / "ab647a67-3ccc-4860-a21a-8b409b14bc9e.jsonl"


def _run(path: Path) -> Trajectory:
    (parsed,) = list(read_dump(path, tenant="acme"))
    assert parsed.trajectory is not None, parsed.error
    return parsed.trajectory


def test_a_session_a_scheduled_task_started_is_read() -> None:
    """Bug: a session whose only prompt a scheduled task fired was refused ("no user prompt"): the fire's
    ``isMeta`` read as the CLI's own injected text."""
    run = _run(FIRED)
    assert run.task == "INTR: run the long job"
    assert [s.action for s in run.steps] == ["Bash", "Bash"]


def test_a_prompt_typed_after_the_fire_is_a_follow_up(tmp_path: Path) -> None:
    """Bug: a prompt the user typed after the fire became the task; the fired prompt, which started the run, is."""
    records = [json.loads(line) for line in FIRED.read_text().splitlines()]
    fired = next(r for r in records if r.get("scheduledTaskId"))
    typed = {k: v for k, v in fired.items() if k not in ("isMeta", "scheduledTaskId")}
    typed.update(promptSource="typed", uuid="0b6e8c1a-7f3d-4d2b-9e5a-1c4f8a2d6b70", promptId="p-typed",
                 parentUuid=records[-2]["uuid"], timestamp="2026-12-07T13:35:00.000Z",
                 message={"role": "user", "content": "and now say hi"})
    (path := tmp_path / FIRED.name).write_text("\n".join(json.dumps(r) for r in [*records, typed]) + "\n")
    run = _run(path)
    assert run.task == "INTR: run the long job"
    assert run.metadata["user_prompts"] == ["and now say hi"]

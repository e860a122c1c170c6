"""OpenHands: a call a ``PreToolUse`` hook blocked giving no reason (``UserRejectObservation``, source ``hook``, the
SDK's own reason ``Blocked by hook``). The conversation is a real one openhands-sdk 1.58.2 (PyPI) wrote with its own
scripted model (``tests/fixtures/openhands/.aud36/``: its README and ``mk_pretool_hooks.py`` say how)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from trajsearch.actions import NOT_RUN
from trajsearch.ingest.read import read_inputs

CONVERSATION = (Path(__file__).parent / "fixtures" / "openhands" / ".aud36" / "conversations"
                / "1d1069b6eeb5493a80eedb30d88ce4e7")


def test_a_call_a_hook_blocked_giving_no_reason_reads_as_kimis_does() -> None:
    """The SDK's own words for a reasonless block were kept as the hook's reason ("not run: blocked by a hook:
    Blocked by hook"), unlike Kimi's (one helper, ``_common.blocked_by_hook``, words both); the run is as read."""
    [result] = read_inputs([CONVERSATION])
    assert result.ok, result.error
    run = result.trajectory
    assert run.task == "Delete the folder /tmp/scratch-xyz."
    assert [(s.action, (s.arguments or {}).get("command"), s.error) for s in run.steps] == [
        ("terminal", "rm -rf /tmp/scratch-xyz", f"{NOT_RUN}blocked by a hook"), ("terminal", "ls /tmp", None),
        ("respond", None, None)]


def test_a_long_reason_a_hook_gave_for_a_blocked_call_keeps_its_head_as_kimis_does(tmp_path: Path) -> None:
    """Review RT1, 2: OpenHands kept the last 200 chars of a hook's reason, Kimi the first 300; one rule for both
    (``_common.hook_reason``): a hook's script says why first."""
    copy = shutil.copytree(CONVERSATION, tmp_path / CONVERSATION.name)
    for path in (copy / "events").glob("event-*.json"):
        event = json.loads(path.read_text(encoding="utf-8"))
        if event.get("kind") == "UserRejectObservation":
            path.write_text(json.dumps({**event, "rejection_reason": "rm -rf is not allowed. " + "x" * 5000}),
                            encoding="utf-8")
    [result] = read_inputs([copy])
    blocked = result.trajectory.steps[0].error
    assert blocked.startswith(f"{NOT_RUN}blocked by a hook: rm -rf is not allowed. xxx") and blocked.endswith("…")
    assert len(blocked) == len(f"{NOT_RUN}blocked by a hook: ") + 300

"""OpenHands: a call a ``PreToolUse`` hook blocked giving no reason (``UserRejectObservation``, source ``hook``, the
SDK's own reason ``Blocked by hook``). The conversation is a real one openhands-sdk 1.58.2 (PyPI) wrote with its own
scripted model (``tests/fixtures/openhands/.aud36/``: its README and ``mk_pretool_hooks.py`` say how)."""

from __future__ import annotations

from pathlib import Path

from trajsearch.actions import NOT_RUN
from trajsearch.ingest.read import read_inputs

CONVERSATION = (Path(__file__).parent / "fixtures" / "openhands" / ".aud36" / "conversations"
                / "1d1069b6eeb5493a80eedb30d88ce4e7")


def test_a_call_a_hook_blocked_giving_no_reason_reads_as_kimis_does() -> None:
    """The SDK's own words for a reasonless block were kept as the hook's reason ("not run: blocked by a hook:
    Blocked by hook"), unlike Kimi's (one helper, ``actions.blocked_by_hook``, words both); the run is as read."""
    [result] = read_inputs([CONVERSATION])
    assert result.ok, result.error
    run = result.trajectory
    assert run.task == "Delete the folder /tmp/scratch-xyz."
    assert [(s.action, (s.arguments or {}).get("command"), s.error) for s in run.steps] == [
        ("terminal", "rm -rf /tmp/scratch-xyz", f"{NOT_RUN}blocked by a hook"), ("terminal", "ls /tmp", None),
        ("respond", None, None)]

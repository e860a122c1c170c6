"""Review RG: gemini-cli's shell output read by the other readers of it (Harbor's ATIF, OpenHands over ACP) as by
gemini-cli's own readers.

The session-recording and stream-json readers read a command killed at the shell tool's inactivity timeout
(``tools.shell.inactivityTimeout``, 0.20+, 5 minutes by default) as failed, though gemini-cli records the call as a
success; Harbor keeps the report it gives the model as the step's result, and gemini-cli over ACP sends it as the
content of a ``completed`` call: both read it as a success. Over ACP a ``completed`` call's "Command failed: ..."
was read as a failure, though gemini-cli sends a tool's error as a ``failed`` call (``toToolCallContent`` throws):
such text is the command's own output (``tail`` of a CI log). Built from real fixtures (their SOURCE.md), the one
result or call changed as gemini-cli 0.61 writes it.
"""

from __future__ import annotations

import json
from pathlib import Path

from test_probe49_openhands import acp_events, gemini_acp_call
from trajsearch.ingest.read import read_dump

FIXTURES = Path(__file__).parent / "fixtures"
HARBOR_GEMINI = FIXTURES / "atif" / ".real" / "harbor-0.25" / "gemini-mgemini-1121" / "agent" / "trajectory.json"
TIMEOUT = "Command was automatically cancelled because it exceeded the timeout of 5.0 minutes without output."


def test_a_harbor_gemini_cli_command_killed_at_its_inactivity_timeout_is_a_failed_step(tmp_path: Path) -> None:
    trajectory = json.loads(HARBOR_GEMINI.read_text())
    [step] = [s for s in trajectory["steps"] if s.get("step_id") == 2]
    step["observation"]["results"][0]["content"] = TIMEOUT + " There was no output before it was cancelled."
    copy = tmp_path / "trial" / "agent" / "trajectory.json"
    copy.parent.mkdir(parents=True)
    copy.write_text(json.dumps(trajectory))
    [record] = read_dump(copy, tenant="acme")
    [killed] = [s for s in record.trajectory.steps if (s.observation or "").startswith(TIMEOUT)]
    assert killed.error == TIMEOUT


def test_openhands_acp_gemini_cli_output_saying_command_failed_is_no_error_and_a_timeout_is(tmp_path: Path) -> None:
    events = acp_events()
    calls = (gemini_acp_call(1, "tail -n 1 ci.log", "Command failed: npm test")
             + gemini_acp_call(2, "sleep 400", TIMEOUT))
    path = tmp_path / "gemini-acp.jsonl"
    path.write_text("".join(json.dumps(e) + "\n" for e in events[:2] + calls + events[-2:]))
    [record] = read_dump(path, tenant="acme")
    errors = {s.observation: s.error for s in record.trajectory.steps if s.observation in
              ("Command failed: npm test", TIMEOUT)}
    assert errors == {"Command failed: npm test": None, TIMEOUT: TIMEOUT}

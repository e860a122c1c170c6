"""``trajsearch show`` of a run paused for a person's approval (round 21, FM5 leftover 4).

An OpenAI Agents SDK ``RunState`` saved while a tool with ``needs_approval`` waits (real states of the Python and JS
SDKs, ``fixtures/openai-agents/SOURCE.md``): the waiting call has no result and no error, as a call whose result was
not recorded has none either.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cli_support import backend, run_cli  # noqa: F401 - the fixture
from trajsearch.cli.query_commands import AWAITING_APPROVAL

RUNSTATE = Path(__file__).parent / "fixtures" / "openai-agents" / ".real" / "runstate"


def _ingested(name: str) -> str:
    """Ingest a real saved RunState; the id of its run."""
    code, out, err = run_cli("ingest", str(RUNSTATE / name), "-t", "acme")
    assert code == 0, out + err
    code, out, err = run_cli("search", "cancel", "-t", "acme", "--json")
    assert code == 0, out + err
    [found] = {hit["trajectory_id"] for hit in json.loads(out)}
    return found


@pytest.mark.parametrize("name", ["runstate-paused.json", "js-runstate-paused.json"])
def test_show_marks_the_step_that_awaits_approval(backend, name: str) -> None:  # noqa: F811
    """Bug: ``show`` printed the paused ``cancel_order`` call as ``action: cancel_order ...`` and nothing more, the
    same as a call whose result was lost; the run's metadata named only the tool (``awaiting_approval``)."""
    run_id = _ingested(name)
    code, out, err = run_cli("show", run_id, "-t", "acme")
    assert code == 0, out + err
    blocks = [" ".join(block.split()) for block in out.split("[step ")[1:]]  # as wrapped to the terminal's width
    assert [AWAITING_APPROVAL in block for block in blocks] == [False, True]
    assert "cancel_order" in blocks[1]
    code, out, err = run_cli("show", run_id, "-t", "acme", "--json")
    assert json.loads(out)["metadata"]["awaiting_approval_steps"] == [1]


def test_show_of_a_finished_run_state_marks_nothing(backend) -> None:  # noqa: F811
    """A state saved after the run finished has no call waiting: no step is marked."""
    code, out, err = run_cli("show", _ingested("runstate-finished.json"), "-t", "acme")
    assert code == 0, out + err
    assert "awaiting approval" not in out

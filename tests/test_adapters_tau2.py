"""tau2-bench runs as they reach users besides tau2's own results files, on real files a probe found misread.

Each test reads a real file (or a trimmed excerpt of one) through the public reader; the sources are in
``tests/fixtures/tau2-bench/.real/SOURCE.md``.
"""

from __future__ import annotations

import json
from pathlib import Path

from trajsearch.model import Outcome

from adapter_support import only

REAL = Path(__file__).parent / "fixtures/tau2-bench/.real"
LEADERBOARD = REAL / "leaderboard-trimmed/toolorchestra_retail_gpt-5_1trial.one-simulation.json"


def test_tau2_leaderboard_trajectory_without_error_flags_marks_taus_own_tool_failures() -> None:
    """Bug (real: the NVIDIA ToolOrchestra tau2 leaderboard submission in pdhoolia/tau2-bench): tau2's
    ``trim_trajectories.py`` strips every message's ``error``, so the reply tau2 writes for a tool that raised
    (``Error: User not found``) was no step error; the next, successful lookup must stay unmarked."""
    run = only(LEADERBOARD)
    calls = [(s.action, s.error) for s in run.steps if s.action not in (None, "respond")]
    assert calls == [("find_user_id_by_name_zip", "Error: User not found"), ("find_user_id_by_name_zip", None),
                     ("get_user_details", None), ("get_order_details", None)]
    assert run.outcome is Outcome.success  # a failed lookup the agent recovered from


def test_tau2_tool_reply_flagged_as_no_error_stays_no_error(tmp_path: Path) -> None:
    """An explicit ``error: false`` is the environment's word and stands, whatever the reply says (the same real
    run, its failed lookup's reply given the flag)."""
    document = json.loads(LEADERBOARD.read_text())
    reply = next(m for m in document["simulations"][0]["messages"] if m.get("content") == "Error: User not found")
    reply["error"] = False
    (tmp_path / "flagged.json").write_text(json.dumps(document))
    assert [s.error for s in only(tmp_path / "flagged.json").steps if s.error] == []

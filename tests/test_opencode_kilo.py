"""A Kilo Code export (``kilo export``, OpenCode's document) is labelled Kilo where it says so: a key of Kilo's own in
the session's ``metadata``. No real Kilo export was found committed on GitHub: the test adds to a real OpenCode export
(tests/fixtures/opencode/.aud31/README.md) the ``kilo.goal`` Kilo-Org/kilocode's ``GoalState`` keeps on a ``/goal``
session (``packages/opencode/src/kilocode/session/goal/state.ts``), which ``Session.get`` and so the export carry."""

from __future__ import annotations

import json
from pathlib import Path

from adapter_support import only

EXPORT = Path(__file__).parent / "fixtures" / "opencode" / ".aud31" / "ask-rejected-bash.json"


def test_an_export_with_kilos_goal_is_labelled_kilo_its_goal_kept(tmp_path: Path) -> None:
    said = json.loads(EXPORT.read_text())
    said["info"]["version"] = "7.5.11"  # @kilocode/cli's
    said["info"]["metadata"] = {"kilo.goal": {"text": "make the tests pass", "status": "complete", "active": False}}
    (tmp_path / "kilo.json").write_text(json.dumps(said))
    run = only(tmp_path / "kilo.json")
    assert run.tool_versions == {"kilo": "7.5.11"}
    assert (run.metadata["goal"], run.metadata["goal_status"]) == ("make the tests pass", "complete")


def test_an_export_naming_nothing_of_kilos_stays_opencodes() -> None:
    run = only(EXPORT)
    assert set(run.tool_versions) == {"opencode"} and "goal" not in run.metadata

"""Round 35's second read-through (RT2): an OpenHands folder passed over with a file that could not be read, and
the zones a file's mtime may tell.

The folder is openhands-sdk's real conversation ``tests/fixtures/openhands/.ohb35/prompt-blocked-only`` (its README
says how it was written), copied with one more event: a user ``MessageEvent`` cut short, as a killed run leaves it.
"""

from __future__ import annotations

import shutil
from datetime import datetime, timedelta
from pathlib import Path

import pytest

from trajsearch.ingest.adapters._common import zone_apart
from trajsearch.ingest.read import PassedOverGroups, read_inputs

ONLY = Path(__file__).parent / "fixtures" / "openhands" / ".ohb35" / "prompt-blocked-only"
CUT_NAME = "event-00003-0f1e2d3c-4b5a-4697-8877-665544332211.json"  # the SDK's name: index, event id
CUT = '{"id":"0f1e2d3c-4b5a-4697-8877-665544332211","timestamp":"2026-12-07T19:58:30.1","source":"user",' \
      '"llm_message":{"role":"user","content":[{"type":"text","text":"List the root direc'


def test_a_passed_over_folder_with_a_file_not_read_is_rejected_naming_it(tmp_path: Path) -> None:
    """Bug (RT2 1): a conversation whose only prompt read was blocked, with an event file cut short (it may hold a
    later prompt, the run), was passed over with exit 0 and only an info line: the unread file went unnamed. It is
    rejected, naming the file, as the folder's other paths name any file not read."""
    folder = shutil.copytree(ONLY, tmp_path / "conv")
    events = next(folder.iterdir()) / "events"
    (events / CUT_NAME).write_text(CUT, encoding="utf-8")
    passed = PassedOverGroups()
    parsed = list(read_inputs([folder], tenant="t", passed_over=passed))
    assert not passed.to_dict()
    assert [p.trajectory for p in parsed] == [None]
    assert "blocked by a UserPromptSubmit hook" in parsed[0].error and f"not read: events/{CUT_NAME}" in parsed[0].error


@pytest.mark.parametrize(("hours", "zone"), [(-12, "UTC-12:00"), (14, "UTC+14:00"), (5.75, "UTC+05:45"),
                                             (-9.5, "UTC-09:30"), (13.75, "UTC+13:45"), (-2.5, "UTC-02:30"),
                                             (-13.75, None), (-12.25, None), (-11.75, None), (1.25, None),
                                             (7.5, None), (14.25, None)])
def test_a_local_time_against_its_mtime_tells_only_a_zone_in_use(hours: float, zone: str | None) -> None:
    """Bug (RT2 3): any quarter hour down to UTC-14:00 was taken for a zone (UTC-11:45, UTC-13:45), which no zone
    uses: a copy's fresh mtime told a false zone more often, and every step of the run moved by it. Only UTC-12 to
    UTC+14 in whole hours and the :30/:45 offsets of the tz database are."""
    utc = datetime(2026, 12, 7, 20, 32, 56)
    told = zone_apart(utc + timedelta(hours=hours), utc, timedelta(seconds=5))
    assert (told and told.tzname(None)) == zone

"""A results file may keep its experiment's fields under ``metadata`` or ``info`` beside its verdict lists: review 3
of round p41, F6 (``/tmp/p41/review3/REPORT.md``). The inputs are the review's, hand-built (no committed real report
has this shape): its instance ids are real SWE-bench ones, the rest is the shape the outcomes docstring describes
with the common names ``metadata`` / ``info`` in place of ``config``.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from trajsearch.ingest.outcomes import OutcomeTable
from trajsearch.model import Outcome

LISTS = {"resolved_ids": ["django__django-11099"], "unresolved_ids": ["astropy__astropy-12907"]}


@pytest.mark.parametrize("report", [
    {"metadata": {"model": "gpt-4o", "run_id": "nightly-12", "date": "2026-12-01"}, **LISTS},  # lists at the top
    {"info": {"harness": "swebench 4.0"}, "results": LISTS},  # lists under one key
], ids=["metadata-beside-lists", "info-beside-nested-lists"])
def test_a_report_with_a_metadata_or_info_field_gives_its_verdicts(tmp_path: Path, report: dict) -> None:
    """F6: since run fields (``metadata``, ``info``, ``steps``...) marked a record as a run wherever they were, such
    a report was refused ("a document about runs, not verdicts", "no run outcomes found"). Only a run field's own
    lists are a run's (``info.failed_ids``: the tests a run left failing); beside the lists it is the report's."""
    path = tmp_path / "report.json"
    path.write_text(json.dumps(report))
    verdicts = {run_id: v.outcome for run_id, v in OutcomeTable.load(path).verdicts.items()}
    assert verdicts == {"django__django-11099": Outcome.success, "astropy__astropy-12907": Outcome.failure}

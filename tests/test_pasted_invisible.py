"""A pasted error with a character no reader sees after it is the same paste (round 26, RT10).

A terminal or chat window can carry a zero-width space, a BOM or a NUL along with a copied line. ``excerpt.blank``
already says such characters are nothing a reader sees; the runtime judged the steps holding a pasted line on the
text as given, so ``...'reproduce_app'`` + U+200B was held by no step and got no warning and no recovery, where the
plain paste got 2 and 1. Plumbing: the hashing test embedder (``hashing_ts``), real mini-swe-agent runs judged by
their real sb-cli reports (the fixtures of ``test_warnings_got_past``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from trajsearch.ingest.outcomes import OutcomeTable
from trajsearch.ingest.read import read_dump
from trajsearch.runtime import Runtime, RuntimeContext

REAL = Path(__file__).parent / "fixtures" / "mini-swe-agent" / ".real"
REPRODUCE_APP = "ModuleNotFoundError: No module named 'reproduce_app'"  # two failed runs ended on it
NO_TABLE = "django.db.utils.OperationalError: no such table: __main___author"  # a failed run got past it


@pytest.fixture
def rt(hashing_ts) -> Runtime:
    for name in ("gemini-3-pro-got-past", "gemini-3-pro-warnings"):
        report = OutcomeTable.load(REAL / name / "sb-cli-report.json")
        hashing_ts.add([p.trajectory for p in read_dump(REAL / name, tenant="acme", outcomes=report)])
    return Runtime(hashing_ts)


@pytest.mark.parametrize("unseen", ["\u200b", "\ufeff", "\x00", "\u2060\n"])
def test_an_invisible_character_after_a_pasted_error_changes_no_warning(rt, unseen):
    ctx = RuntimeContext(tenant="acme")
    plain, pasted = rt.warnings(REPRODUCE_APP, ctx, k=3), rt.warnings(REPRODUCE_APP + unseen, ctx, k=3)
    assert len(plain) == 2 and [w.trajectory_id for w in pasted] == [w.trajectory_id for w in plain]
    assert [w.step_holding for w in pasted] == [w.step_holding for w in plain]
    said = rt.advice("warnings", unseen + NO_TABLE + unseen, ctx)
    assert [i["kind"] for i in said.items] == ["recovery"] and NO_TABLE in said.text


@pytest.mark.parametrize("inside", ["\u26a0\ufe0f ", "\u26a0\ufe0e "])  # a sign with its emoji or text selector
def test_a_row_holding_a_printable_invisible_character_matches_its_paste(hashing_ts, inside):
    """Review of RT10: a variation selector (U+FE0F, U+FE0E) is ``str.isprintable`` and no reader sees it: the paste
    lost it and the rows that printed the line kept it, so the line written as a modern CLI prints it (``No module
    named ⚠️ 'reproduce_app'``) got 0 warnings, not 2."""
    plain = "No module named 'reproduce_app'"
    printed = plain.replace("named ", "named " + inside)
    for name in ("gemini-3-pro-got-past", "gemini-3-pro-warnings"):
        report = OutcomeTable.load(REAL / name / "sb-cli-report.json")
        runs = [p.trajectory for p in read_dump(REAL / name, tenant="acme", outcomes=report)]
        for run in runs:  # every place the runs printed the line, printed with the character
            for step in run.steps:
                step.observation = step.observation and step.observation.replace(plain, printed)
            if run.failure and run.failure.error:
                run.failure.error = run.failure.error.replace(plain, printed)
        hashing_ts.add(runs)
    warned = Runtime(hashing_ts).warnings("ModuleNotFoundError: " + printed, RuntimeContext(tenant="acme"), k=3)
    assert len(warned) == 2 and all(w.step_holding for w in warned)

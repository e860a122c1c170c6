"""A whole pasted traceback: ``similar`` and ``search -e`` print its exception line (probe p42 D4).

On a real run: gemini-3-pro's django__django-15930 (``tests/fixtures/mini-swe-agent/.real/gemini_3_pro``, see its
SOURCE.md), whose step 2 prints a 26-frame traceback ending with the exception line; the paste is that traceback
as the run printed it, from ``Traceback (most recent call last):`` to its last line.
"""

from __future__ import annotations

from pathlib import Path

from trajsearch.ingest.read import read_dump

from cli_support import backend, run_cli  # noqa: F401 - the fixture

GEMINI = Path(__file__).parent / "fixtures/mini-swe-agent/.real/gemini_3_pro"
EXCEPTION = "django.db.utils.OperationalError: no such table: __main___user"


def _pasted_traceback() -> str:
    run = next(parsed.trajectory for parsed in read_dump(GEMINI) if parsed.ok)
    output = run.steps[2].observation
    pasted = output[output.index("Traceback (most recent call last):"):output.index(EXCEPTION) + len(EXCEPTION)]
    assert pasted.count("\n") > 40  # the whole traceback, frames and all
    return pasted


def test_a_pasted_traceback_prints_its_exception_line(backend) -> None:
    """Bug: the printed excerpt (240 characters) was centred where most of the paste matched, among the
    frames, and left out the exception line that ends it; the web page's 1,500 characters held it."""
    code, out, err = run_cli("ingest", str(GEMINI), "--quiet")
    assert code == 0, err
    pasted = _pasted_traceback()
    for args in (("similar", pasted), ("search", pasted, "-e", "1")):
        code, out, err = run_cli(*args)
        assert code == 0, err
        assert EXCEPTION in " ".join(out.split()), (args[0], out)  # as printed (a terminal wraps lines)
        assert len(out) < 1500, (args[0], out)  # still an excerpt

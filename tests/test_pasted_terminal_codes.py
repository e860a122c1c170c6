"""A traceback pasted from a terminal with its colours still in (``ESC[31m``...): searched as the plain text it shows.

Stored step outputs have their terminal codes taken out at ingest (``steps.strip_terminal_codes``), a paste did not:
``similar`` with gemini-3-pro's ``django__django-15525`` traceback, coloured, left the run printing it out of the top 5
of the 231 django runs (the same paste uncoloured: first), its codes glued to the words (``31mtraceback``) and the
paste no longer a line any step holds (round 24, ENG2). Real runs: ``tests/fixtures/mini-swe-agent/.real/
gemini-3-pro-sqlite-tracebacks`` (see its SOURCE.md): the pasted run and five printing the same frames for other tables.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from trajsearch.ingest.read import read_dump
from trajsearch.store.filters import Filters

from cli_support import backend, run_cli  # noqa: F401 - the fixture

RUNS = Path(__file__).parent / "fixtures/mini-swe-agent/.real/gemini-3-pro-sqlite-tracebacks"
EXCEPTION = "sqlite3.OperationalError: no such table: reproduce_app_author"
RED, RESET = "\x1b[31m", "\x1b[0m"


def _traceback() -> str:
    """The first traceback of ``django__django-15525``'s step 4 as the run printed it, to the exception line."""
    run = next(p.trajectory for p in read_dump(RUNS / "django__django-15525.traj.json") if p.ok)
    output = next(step.observation for step in run.steps if EXCEPTION in (step.observation or ""))
    start = output.index("Traceback (most recent call last):")
    return output[start:output.index(EXCEPTION, start) + len(EXCEPTION)]


def _coloured(text: str, escape: str = "\x1b") -> str:
    """``text`` as a terminal's colour theme writes a traceback: red throughout, the exception line bold; its codes
    opened by ``escape`` (``""``: a browser's log view lost the ESC; ``"^["``: ``cat -v`` or ``less`` showed it)."""
    red, bold, reset = (escape + code for code in ("[31m", "[1m", "[0m"))
    return red + text.replace(EXCEPTION, bold + EXCEPTION + reset + red) + reset


@pytest.mark.parametrize("escape", ["\x1b", "", "^["])
def test_a_coloured_paste_is_searched_as_the_plain_one(backend, escape) -> None:
    """Bug: the colour codes reached the search and the excerpt: the coloured paste ranked other runs and the
    exception line was not printed; so did codes whose ESC was lost (``[31m``, ``^[[31m``: review of ENG2, 3).
    (Plumbing, on the hashing embedder: the same runs in the same order as the plain paste, and the line printed;
    which run is first is the real model's, below.)"""
    code, out, err = run_cli("ingest", str(RUNS), "--quiet")
    assert code == 0, err
    plain = _traceback()
    assert plain.count("\n") >= 4
    answers = {}
    for name, pasted in (("plain", plain), ("coloured", _coloured(plain, escape))):
        code, out, err = run_cli("similar", pasted, "--json")
        assert code == 0, err
        answers[name] = [m["trajectory_id"] for m in json.loads(out)]
        code, out, err = run_cli("similar", pasted, "-k", "1")
        assert code == 0, err
        assert EXCEPTION in " ".join(out.split()), (name, out)  # the matched line printed (a terminal wraps lines)
    assert answers["coloured"] == answers["plain"]


def test_a_coloured_paste_finds_the_run_printing_it_first(model_ts) -> None:
    """Bug: with its colours in, ``15525``'s traceback ranked runs printing the same frames for other tables above
    ``15525`` (real model: 15563 first)."""
    model_ts.add([p.trajectory for p in read_dump(RUNS, tenant="acme") if p.ok])
    runs = [m.trajectory_id for m in model_ts.similar_runs(text=_coloured(_traceback()), tenant="acme", k=5)]
    assert ".django__django-15525." in runs[0], runs


def test_a_paste_of_terminal_codes_alone_is_nothing_to_search_by(backend) -> None:
    """Bug: a blank paste is a usage error naming the argument, but one of colour codes alone (a terminal's reset,
    ``ESC[0m``) reached the search, which now leaves the codes out: the library's words embedded, the service's
    over --server."""
    code, out, err = run_cli("similar", RED + RESET)
    assert code == 2 and "nothing to search by" in err, (code, err)


def test_the_mode_named_is_the_mode_a_coloured_paste_runs_in(hashing_ts) -> None:
    """Bug (review of ENG2, 2): the web page names the mode with ``mode_used`` on the text as pasted; the search
    left the codes out first, so a coloured one-line error held verbatim by a step was named dense and ran hybrid.
    (Plumbing: which mode runs is decided on the lexical index, not on the embedder's vectors.)"""
    parsed = list(read_dump(RUNS.parent / "gemini-3-pro-own-exception-lines", tenant="acme"))
    hashing_ts.add([p.trajectory for p in parsed if p.ok])
    filters = Filters(tenant="acme")
    plain = "This module defines the descriptor classes."  # django__django-15957's diff, a docstring's line
    assert hashing_ts.mode_used(plain, filters) == "hybrid"  # held verbatim (auto reads it as prose: dense else)
    assert hashing_ts.mode_used(RED + plain + RESET, filters) == "hybrid"

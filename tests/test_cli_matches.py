"""``search -e`` and ``similar`` print the part of each matched step that matched, on both backends.

On a real run: gemini-3-pro's django__django-15930 (``tests/fixtures/mini-swe-agent/.real/gemini_3_pro``, see its
SOURCE.md), whose step 2 ends with the exception line an engineer would paste.
"""

from __future__ import annotations

import json
from pathlib import Path

from cli_support import backend, run_cli  # noqa: F401 - the fixture

GEMINI = Path(__file__).parent / "fixtures/mini-swe-agent/.real/gemini_3_pro"
NO_SUCH_TABLE = "django.db.utils.OperationalError: no such table: __main___user"


def test_search_and_similar_show_the_pasted_error_in_the_matched_step(backend) -> None:
    """Bug (probe J): each step was printed as its first 160 characters (thought, command, the output's
    head), so the pasted error, at the tail of the output, was not in what ``search -e`` or ``similar``
    printed; only ``--json`` had it. The matched step is now cut around the match, one line, bounded."""
    code, out, err = run_cli("ingest", str(GEMINI), "--quiet")
    assert code == 0, err
    for args in (("search", NO_SUCH_TABLE, "-e", "1"), ("similar", NO_SUCH_TABLE)):
        code, out, err = run_cli(*args)
        assert code == 0, err
        assert NO_SUCH_TABLE in " ".join(out.split()), (args, out)  # as printed (a terminal wraps lines)
        assert len(out) < 1200, (args, out)  # excerpts, not the 2,525-character step


#: a real run's step 30 output (6,847 characters) holds this log line past the step row's head and tail; a
#: passage row (a part of the clipped output) holds it (mini-swe-agent/.real/passage-match, see SOURCE.md)
SQLFLUFF = Path(__file__).parent / "fixtures/mini-swe-agent/.real/passage-match"
L024 = "INFO       [L024] No config_keywords defined for L024"


def test_search_e_shows_the_passage_that_matched(backend) -> None:
    """Bug (probe E, E5): with ``-e`` a passage hit printed its step's row, which holds that step's output
    clipped, the pasted line cut out (``L041 ... L043 ... L044`` instead of L024)."""
    code, out, err = run_cli("ingest", str(SQLFLUFF), "--quiet")
    assert code == 0, err
    code, out, err = run_cli("search", L024, "-k", "1", "-e", "1")
    assert code == 0, err
    assert "passage" in out and " ".join(L024.split()) in " ".join(out.split()), out


#: a real run's ``sed -n '408,550p' src/marshmallow/fields.py`` (5,843 characters of output): this line of the view's
#: middle lies in a passage row, past the step row's head and tail (mini-swe-agent/.real/passage-file, see SOURCE.md)
VIEW = Path(__file__).parent / "fixtures/mini-swe-agent/.real/passage-file"
VIEW_LINE = "self._schema = None  # Cached Schema instance"


def test_a_passage_of_a_file_view_names_the_file(backend) -> None:
    """Bug (round 22, GEN3): a passage of a long ``cat`` / ``sed -n`` / ``view`` output held code lines and no file
    name (``[step 20] result, clipped part 2/3:``), so the row found for a line of the file, and ``search``'s
    excerpt of it, said no file; only ``--expand``'s neighbouring step did. The passage now names its step's call."""
    code, out, err = run_cli("ingest", str(VIEW), "--quiet")
    assert code == 0, err
    code, out, err = run_cli("search", VIEW_LINE, "-k", "1", "--json")
    assert code == 0, err
    (hit,) = json.loads(out)
    assert hit["level"] == "passage" and VIEW_LINE in hit["text"], hit
    assert "src/marshmallow/fields.py" in hit["text"].split("\n")[0], hit["text"][:200]
    code, out, err = run_cli("search", VIEW_LINE, "-k", "1")
    assert code == 0, err
    shown = " ".join(out.split())  # as printed (a terminal wraps lines)
    assert " ".join(VIEW_LINE.split()) in shown and "src/marshmallow/fields.py" in shown, out


#: a real Copilot CLI run (otel-genai/.real/copilot-cli, see its README.md) views a 500-line file with
#: ``{"forceReadLargeFiles": true, "path": "C:\\Users\\...\\lib\\operations.tsp"}``: a path of 120 characters
COPILOT = Path(__file__).parent / "fixtures/otel-genai/.real/copilot-cli/background-agent.otlp.jsonl"
COPILOT_LINE = '@Foundations.Private.ensureVerb("ResourceList", "GET")'


def test_a_passage_of_a_view_with_json_arguments_names_the_file(backend) -> None:
    """Bug (round 22, review of GEN3): the header kept the call's first 120 characters, and a view's sorted JSON
    arguments put ``forceReadLargeFiles`` before the long path, so 35 of this run's 36 passages of a view named no
    file (``view {"forceReadLargeFiles": true, "path": "C:\\\\Users\\\\...\\\\suntimes\\\\, clipped part 2/2:``). A long
    call now has its longest words cut in the middle, a path keeping its file name."""
    code, out, err = run_cli("ingest", str(COPILOT), "--quiet")
    assert code == 0, err
    code, out, err = run_cli("search", COPILOT_LINE, "-k", "1", "--json")
    assert code == 0, err
    (hit,) = json.loads(out)
    header = hit["text"].split("\n")[0]
    assert hit["level"] == "passage" and COPILOT_LINE in hit["text"], hit
    assert "operations.tsp" in header and len(header) < 200, header

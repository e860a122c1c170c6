"""A pasted failure's line that says what went wrong is what ``similar`` and ``search -e`` print (review 2, F7),
and an excerpt holds the paste's last line however long the output before it (F1).

Real runs, one turn each (``tests/fixtures/mini-swe-agent/.real/pasted-failure-ends``, see its README.md).
"""

from __future__ import annotations

from pathlib import Path

from trajsearch.excerpt import excerpt, terms
from trajsearch.ingest.read import read_dump

from cli_support import backend, run_cli  # noqa: F401 - the fixture

FILES = Path(__file__).parent / "fixtures/mini-swe-agent/.real/pasted-failure-ends"


def _printed(paste: str) -> list[str]:
    """What ``similar`` and ``search -e 1`` print for ``paste``, each as one line (a terminal wraps lines)."""
    code, _, err = run_cli("ingest", str(FILES), "--quiet")
    assert code == 0, err
    printed = []
    for args in (("similar", paste), ("search", paste, "-e", "1")):
        code, out, err = run_cli(*args)
        assert code == 0, err
        assert len(out) < 1500, (args[0], out)  # still an excerpt
        printed.append(" ".join(out.split()))
    return printed


def test_a_generic_closing_line_does_not_hide_the_error_above_it(backend) -> None:
    """Bug (F7): a window holding the paste's last line beat every other; pasted with pytest's generic closing
    line, the AttributeError above it was left out for the short test summary and the closing line."""
    paste = ("E       AttributeError: 'TestDataElement' object has no attribute 'data_elementMulti'\n"
             "========================= 1 failed, 1 passed in 0.07s ==========================")
    for out in _printed(paste):
        assert "AttributeError: 'TestDataElement' object has no attribute 'data_elementMulti'" in out, out


def test_the_last_line_is_looked_for_in_the_whole_of_a_long_output() -> None:
    """Bug (F1): only the first 200 matches of the paste's terms were looked at; in gemini-3-pro's 10.6 KB test
    output the DEBUG lines' words (``join``, ``reuse``, ``table``...) used them up before the traceback, so the
    exception line was never seen and the 1,500 characters the web page shows were DEBUG lines. (Stored rows
    keep an output's head and tail, so the CLI and the web page see no output this long today: the excerpt
    itself is what is checked.)"""
    run = next(parsed.trajectory for parsed in read_dump(FILES / "django__django-15554.traj.json"))
    output = run.steps[0].observation
    paste = ('Traceback (most recent call last):\n'
             '  File "/testbed/tests/queries/tests.py", line 3780, in test_fk_reuse\n'
             '    self.assertEqual(str(qs.query).count("JOIN"), 1)\n'
             'AssertionError: 2 != 1')
    for limit in (240, 1500):
        assert "AssertionError: 2 != 1" in excerpt(output, terms(paste), limit), limit


def test_a_ci_runners_closing_error_line_does_not_hide_the_failure_above_it() -> None:
    """Review 3 (N3): GitHub Actions ends every failed step with ``Error: Process completed with exit code 1.``;
    its "Error:" made it count as the specific line, and the window holding it lost the failing test above it.
    (A log of the runner's shape: test lines, the failure, the runner's cleanup, its closing line.)"""
    output = ("Run pytest -q\n" + "".join(f"tests/test_m{i}.py ....{' ' * 40}[ {i}%]\n" for i in range(60))
              + "FAILED tests/test_api.py::test_login - KeyError: 'session_token'\n1 failed, 240 passed in 12.01s\n"
              + "".join(f"##[debug]step cleanup {i}: removing /home/runner/work/_temp/{i:08x}.sh\n" for i in range(30))
              + "Error: Process completed with exit code 1.\n")
    pasted = "FAILED tests/test_api.py::test_login - KeyError: 'session_token'\nError: Process completed with exit code 1."
    assert "KeyError: 'session_token'" in excerpt(output, terms(pasted), 300)

"""A failed command's error is the line that ends its Python traceback, whatever the exception's class is called.

Python's traceback module prints ``Traceback (most recent call last):``, the frames indented under it, then the
exception as ``<module.qualname>: <message>``. Many classes end in neither Error nor Exception (botocore's
``NoSuchBucket``, Django's ``DoesNotExist`` and ``NoReverseMatch``, ``StopIteration``). The layouts below are
printed by this Python's own ``traceback`` and ``doctest`` modules, not written by hand.
"""

from __future__ import annotations

import doctest
import io
import traceback
from pathlib import Path

import pytest

from trajsearch.ingest.adapters._common import decisive_line
from trajsearch.ingest.read import read_dump

SWE_MOTO = Path(__file__).parent / "fixtures/swe-agent/.real/christsakm-kimi-k2/getmoto__moto-4799.traj"
NEWLINE_MESSAGES = Path(__file__).parent / "fixtures/swe-agent/.real/acr-swe-agent-newline-messages"
PYTEST_NUMPY = (Path(__file__).parent
                / "fixtures/mini-swe-agent/.real/pytest-output/pvlib__pvlib-python-1154.message-123.txt")


def test_a_swe_agent_runs_unittest_error_is_its_exception_not_unittests_header() -> None:
    """Bug (probe B, B4): the run's ``python reproduce_issue.py`` (a unittest run) failed with
    ``NoSuchBucket``, the issue's own symptom; its error was unittest's ``ERROR: test_a_thing (...)`` header."""
    [parsed] = read_dump(SWE_MOTO, tenant="t")
    [step] = parsed.trajectory.steps
    assert step.arguments == {"command": "cd /testbed && python reproduce_issue.py"}
    assert step.error == ("botocore.errorfactory.NoSuchBucket: An error occurred (NoSuchBucket) when calling the "
                          "DeleteBucket operation: The specified bucket does not exist")


def printed(code: str, module: str = "tests.models") -> str:
    """What Python prints for the exception ``code`` raises (its classes defined in ``module``)."""
    try:
        exec(code, {"__name__": module})
    except BaseException as exc:  # noqa: BLE001  (SystemExit and KeyboardInterrupt print the same way)
        return "".join(traceback.format_exception(exc))
    raise AssertionError("code raised nothing")


DJANGO = ("class Author:\n    class DoesNotExist(Exception): pass\n"
          "raise Author.DoesNotExist('Author matching query does not exist.')")
UNITTEST_HEAD = ("E\n" + "=" * 70 + "\nERROR: test_get (tests.test_x.T.test_get)\n" + "-" * 70 + "\n")
UNITTEST_TAIL = ("\n" + "-" * 70 + "\nRan 1 test in 0.004s\n\nFAILED (errors=1)\n"
                 "Destroying test database for alias 'default'...\n")


@pytest.mark.parametrize("output, expected", [
    # Django's test runner: unittest's header above, its tally and the test database's teardown below
    (UNITTEST_HEAD + printed(DJANGO) + UNITTEST_TAIL,
     "tests.models.Author.DoesNotExist: Author matching query does not exist."),
    (printed(DJANGO) + "Destroying test database for alias 'default'...\n",
     "tests.models.Author.DoesNotExist: Author matching query does not exist."),
    # no message: the class alone
    (printed("next(iter([]))") + "some later log line\n", "StopIteration"),
    # chained: the exception raised last, not the one it was handling; a message's further lines are not it
    (printed("class NoReverseMatch(Exception): pass\ntry:\n    {}['url']\nexcept KeyError:\n"
             "    raise NoReverseMatch(\"Reverse for 'detail' not found.\\n1 pattern tried: ['x/']\")"),
     "tests.models.NoReverseMatch: Reverse for 'detail' not found."),
    # a note added to it (``add_note``) is printed after the exception line
    (printed("e = StopIteration('exhausted'); e.add_note('error: while reading rows'); raise e"),
     "StopIteration: exhausted"),
    # an exception group: its sub-exception's own traceback behind the group's ``| `` margin
    (printed("class TemplateDoesNotExist(Exception): pass\ndef f():\n    raise TemplateDoesNotExist('base.html')\n"
             "try:\n    f()\nexcept Exception as e:\n    raise ExceptionGroup('unhandled errors in a TaskGroup', [e])"),
     "tests.models.TemplateDoesNotExist: base.html"),
], ids=["django-unittest", "django-teardown", "bare-class", "chained", "note", "exception-group"])
def test_the_line_ending_a_python_traceback_is_the_error(output: str, expected: str) -> None:
    assert decisive_line(output) == expected


def test_a_doctest_failure_is_the_exception_it_raised() -> None:
    """doctest reports an unexpected exception's traceback indented under ``Exception raised:``."""
    def example() -> None:
        """
        >>> next(iter([]))
        1
        """
    out = io.StringIO()
    runner = doctest.DocTestRunner()
    for test in doctest.DocTestFinder().find(example, "example", globs={}):
        runner.run(test, out=out.write)
    assert "Exception raised:\n    Traceback (most recent call last):" in out.getvalue()
    assert decisive_line(out.getvalue()) == "StopIteration"


def test_a_traceback_whose_indentation_was_lost_is_not_ended_by_its_first_frame() -> None:
    """A dump that stripped each line's indentation leaves no frame to tell where the traceback ends: the
    error is then found as before (here unittest's header), never the ``File ...`` line under the header."""
    flat = "\n".join(line.strip() for line in (UNITTEST_HEAD + printed(DJANGO) + UNITTEST_TAIL).splitlines())
    assert decisive_line(flat) == "ERROR: test_get (tests.test_x.T.test_get)"


@pytest.mark.parametrize("name, command, expected", [
    ("scikit-learn__scikit-learn-13142", "python reproduce_issue.py", "AssertionError: Arrays are not equal"),
    ("sympy__sympy-17630", "python replicate_bug.py",
     "ValueError: expecting a sequence of 1 or more rows containing Matrices."),
])
def test_an_exception_whose_message_starts_on_the_next_line_is_read_with_it(name: str, command: str,
                                                                             expected: str) -> None:
    """Bug (probe E3, A3): numpy's assertions and SymPy's ``filldedent`` start their messages with a newline, so
    Python prints ``AssertionError: `` and the message below it; the step's error was the bare ``AssertionError:``
    (every such failure one empty template)."""
    [parsed] = read_dump(NEWLINE_MESSAGES / f"{name}.traj", tenant="t")
    [step] = parsed.trajectory.steps
    assert step.arguments == {"command": command}
    assert step.error == expected


def test_a_pytest_reports_exception_whose_message_starts_on_the_next_line_is_read_with_it() -> None:
    """The same in pytest's report, where every line of the exception is behind ``E``: numpy's ``assert_allclose``
    (probe E3, A3). The summary line below it, ``FAILED ...::test_reindl - AssertionError:``, is given that message
    back and names the test too (DEC31)."""
    assert decisive_line(PYTEST_NUMPY.read_text()) == ("FAILED pvlib/tests/test_irradiance.py::test_reindl - "
                                                       "AssertionError: Not equal to tolerance rtol=1e-07, atol=0.0001")


RAISE_VALUE_ERROR = "raise ValueError({!r})"


@pytest.mark.parametrize("message, after, expected", [
    ("\nArrays are not equal\n\nMismatched elements: 3 / 3 (100%)", "", "ValueError: Arrays are not equal"),
    # the message was blank: what follows is other output, not the message
    ("\n", "(Open file: /repo/x.py)\n(Current directory: /repo)\nbash-$", "ValueError:"),
    (" ", "(Open file: /repo/x.py)\n(Current directory: /repo)\nbash-$", "ValueError:"),
    (" ", "=========================== short test summary info ============================\n", "ValueError:"),
    (" ", "root@4f2c:/testbed# ", "ValueError:"),
], ids=["first-line", "blank-then-swe-agent", "space-then-swe-agent", "space-then-pytest-rule", "space-then-prompt"])
def test_a_bare_exception_line_takes_only_its_own_message(message: str, after: str, expected: str) -> None:
    """Only the message's first line, right under the class (probe E3, A3): never across a blank line, nor what an
    agent or a shell prints after the command's output when the message was blank."""
    assert decisive_line(printed(RAISE_VALUE_ERROR.format(message)) + after) == expected

"""A paste from a CI job's log or another log viewer (round 28, ENG6): the lines a CI system writes around the job's
output (``##[error]Process completed with exit code 1.``, GitLab's ``ERROR: Job failed: exit code 1``, ...) are no
error of the run, and each viewer's prefix (journald, ``kubectl logs --prefix``, ``gh run view --log``, stern) no line
it printed. Each framing line and prefix is as real logs show it (the samples named in ``excerpt._CI_CLOSING`` and
``excerpt._LINE_PREFIXES``); the runs are real: ``tests/fixtures/mini-swe-agent/.real/deepseek-error-line-elsewhere``.
"""

from __future__ import annotations

import pytest

from trajsearch.excerpt import pasted_error_line, query_text, terms, unseen

from test_pasted_log_prefixes import ERROR, _traceback

#: How each CI system closes a failed job's log, as copied from its page (GitHub's web view, raw log).
CLOSINGS = {
    "github web": "Error: Process completed with exit code 1.",
    "github raw": "##[error]Process completed with exit code 1.",
    "gitlab": "Cleaning up project directory and file based variables\nERROR: Job failed: exit code 1",
    "circleci": "\nExited with code exit status 1\nCircleCI received exit code 1",
    "buildkite": "^^^ +++\n🚨 Error: The command exited with status 1\n^^^ +++\nuser command error: exit status 1",
    "jenkins": "[Pipeline] }\n[Pipeline] // stage\n[Pipeline] End of Pipeline\nERROR: script returned exit code 1\n"
               "Finished: FAILURE",
}


@pytest.mark.parametrize("ci", sorted(CLOSINGS))
def test_a_ci_closing_line_is_not_taken_for_the_error(ci) -> None:
    """Bug: the job's closing line was the paste's last line, so the error above it was not the paste's error
    (``pasted_error_line`` ""), and the excerpt kept no error in view. The search reads the traceback alone."""
    pasted = query_text(_traceback() + "\n" + CLOSINGS[ci])
    assert pasted.rstrip("\n") == _traceback()
    assert pasted_error_line(pasted) == ERROR
    assert terms(pasted)[0] == ERROR.lower()


def test_a_closing_line_alone_is_still_the_query() -> None:
    """Only where the paste has another line: the closing line searched alone is what was asked about."""
    assert terms("Error: Process completed with exit code 1.")[0] == "error: process completed with exit code 1."
    assert query_text("ERROR: Job failed: exit code 1\n\nFinished: FAILURE\n") == "ERROR: Job failed: exit code 1\n\nFinished: FAILURE\n"
    kept = "Traceback (most recent call last):\nKeyError: 'x'\n\n"  # nothing closing it: its blank lines stay
    assert query_text(kept) == kept
    assert query_text("##[error]Process completed with exit code 1.") == "Process completed with exit code 1."


#: Each line as a viewer shows it, from real output: journald short (systemd-cron issue 58, its German month) and
#: short-iso, ``kubectl logs --prefix`` (kubernetes PR 76471) with and without ``--timestamps``, ``gh run view --log``
#: (its tab-separated job and step before the runner's time, the runner's marks after), stern (its PR 216).
VIEWERS = {
    "journalctl": lambda n: f"Dez 28 06:43:{n:02d} XXX mail_on_failure[9777]: ",
    "journalctl short-iso": lambda n: f"2017-12-28T06:43:{n:02d}+0100 XXX mail_on_failure[9777]: ",
    "kubectl --prefix": lambda n: f"[pod/echo-req-7cfd7bf68f-{'nk5kr' if n % 2 else 'dhrwd'}/hello] ",
    "kubectl --prefix --timestamps": lambda n: f"[pod/echo-req-7cfd7bf68f-nk5kr/hello] 2020-11-22T17:19:{n:02d}.5Z ",
    "gh run view --log": lambda n: f"test\tRun pytest\t2024-03-19T10:32:{n:02d}.4567890Z ",
    "stern": lambda n: "nginx-cfbcb7b98-96xsv nginx ",
}  # (a StatefulSet's ``web-0 app `` stays: ``worker-1 started ...`` is a program's own, review of ENG6, 3)


@pytest.mark.parametrize("viewer", sorted(VIEWERS))
def test_a_viewers_prefix_goes(viewer) -> None:
    """Bug: these prefixes reached the search, as compose's had (round 27, ENG5): no step held a pasted line."""
    plain = _traceback()
    pasted = "".join(VIEWERS[viewer](n) + line for n, line in enumerate(plain.splitlines(keepends=True)))
    assert query_text(pasted) == plain and unseen(pasted)
    assert pasted_error_line(query_text(pasted)) == ERROR


def test_a_gh_run_log_loses_its_columns_and_the_runners_marks() -> None:
    """``gh run view --log`` of a failed step: columns, time, ``##[group]`` marks and the closing line all framing."""
    lines = ["##[group]Run pytest", "pytest -x", "##[endgroup]", *_traceback().splitlines(),
             "##[error]Process completed with exit code 1."]
    pasted = "\n".join(f"test\tRun pytest\t2024-03-19T10:32:{n:02d}.4567890Z {line}" for n, line in enumerate(lines))
    read = query_text(pasted)
    assert "##[" not in read and "\t" not in read.split("\n")[0] and read.startswith("Run pytest\npytest -x\n\n")
    assert pasted_error_line(read) == ERROR


def test_prose_and_program_lines_keep_their_heads() -> None:
    """What only looks like a viewer's prefix stays: a pod-like word in a sentence, a tab-separated table, a run's
    own ``##`` comment."""
    for text in ("re-run the tests\nfollow-up later", "a\tb\tc\nd\te\tf", "## [error] not a mark\nx y"):
        assert query_text(text) == text

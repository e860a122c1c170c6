"""Round 45's probe B (and E2-F) read through the public reader: SWE-agent 1.x's editor refusals (B1), the model
outputs SWE-agent rejected without running them (B2), its command-timeout message (B3), and a CodeR sub-agent's
``fail`` verdict (E2-F).

Fixtures: ``fixtures/swe-agent/.real/sa-1.1.0-refusals`` (runs written by SWE-agent 1.1.0 itself) and
``fixtures/swe-agent/.real/coder-fail`` (a CodeR run, trimmed); see each SOURCE.md. Shapes the files lack are made
in ``tmp_path`` from them, with the messages SWE-agent's tools print (named there).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from trajsearch.model import Outcome

from adapter_support import only

REAL = Path(__file__).parent / "fixtures" / "swe-agent" / ".real"
RUN2 = REAL / "sa-1.1.0-refusals" / "run2" / "demo__greet-2" / "demo__greet-2.traj"  # exit_format
RUN3 = REAL / "sa-1.1.0-refusals" / "run3" / "demo__greet-3" / "demo__greet-3.traj"  # blocked, bash syntax error
CODER_FAIL = REAL / "coder-fail" / "trajs" / "pytest-dev__pytest-7432.traj"
CODER_SUCCEED = REAL / "coder" / "trajs" / "django__django-11099.traj"
FORMAT_ERROR = "Your last output did not use any tool calls!"


def _rewritten(tmp_path: Path, change) -> Path:
    """RUN2, changed by ``change(record)``, in a run directory of its own."""
    record = json.loads(RUN2.read_text())
    change(record)
    path = tmp_path / "run2" / RUN2.parent.name / RUN2.name
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps(record))
    return path


# -- B1: SWE-agent 1.x's editing tools refusing a command ------------------------------------------------------


def test_swe_agent_editor_refusal_is_a_step_error() -> None:
    """Bug (probe B, B1): ``str_replace_editor`` on a missing file prints "The path ... does not exist" and exits 7
    (SWE-agent records no exit code); the step read as a success."""
    run = only(RUN2)
    assert run.steps[1].error == ("The path /tmp/p45/probeB/gen/greet/hello.py does not exist. Please provide a valid "
                                  "path.")


@pytest.mark.parametrize(("output", "error"), [
    # tools/edit_anthropic/bin/str_replace_editor (the edit tool of 1.x's default config), as the probe's run1 got it
    ('\r\nNo replacement was performed, old_str `return "Hello, " + nme` did not appear verbatim in '
     '/tmp/p45/probeB/gen/greet/greet.py.\n\r\n\r\n',
     'No replacement was performed, old_str `return "Hello, " + nme` did not appear verbatim in '
     '/tmp/p45/probeB/gen/greet/greet.py.'),
    ("No replacement was performed, old_str `def f():\n    pass` did not appear verbatim in /r/a.py.\n",
     "No replacement was performed, old_str `def f(): pass` did not appear verbatim in /r/a.py."),
    ("No replacement was performed. Multiple occurrences of old_str `x = 1` in lines [3, 9]. Please ensure it is "
     "unique\n", None),
    ("File already exists at: /r/a.py. Cannot overwrite files using command `create`.\n", None),
    ("Invalid `view_range`. It should be a list of two integers.\n", None),
    ("The parent directory /r/new does not exist. Please create it first.\n", None),
    ("The path r/a.py is not an absolute path, it should start with `/`. Maybe you meant /r/r/a.py?\n", None),
    # tools/windowed_edit_replace/bin/edit: the message, then advice on lines of its own
    ("Your edit was not applied (file not modified): Text 'foo' not found in displayed lines (or anywhere in the "
     "file).\nPlease modify your search string. Did you forget to properly handle whitespace/indentation?\nYou can "
     "also call `open` again to re-display the file with the correct context.\n\n",
     "Your edit was not applied (file not modified): Text 'foo' not found in displayed lines (or anywhere in the "
     "file)."),
    ("No file opened. Either `open` or `create` a file first.\n", None),
], ids=["old-str-missing", "old-str-lines", "old-str-twice", "create-over-file", "view-range", "no-parent",
        "relative-path", "windowed-not-found", "windowed-no-file"])
def test_swe_agent_every_editor_refusal_is_a_step_error(tmp_path: Path, output: str, error: str | None) -> None:
    def change(record: dict) -> None:
        record["trajectory"][1]["observation"] = output
    run = only(_rewritten(tmp_path, change))
    assert run.steps[1].error == (error or " ".join(output.split()))


# -- B3: a 1.x command timeout -------------------------------------------------------------------------------


def test_swe_agent_command_timeout_error_keeps_the_command() -> None:
    """Bug (probe B, B3): the error kept the end of the line, cut mid-word ("…elled because ..."), the command lost
    and SWE-agent's fixed advice kept."""
    run = only(RUN2)
    assert run.steps[0].error == ("The command 'cd /tmp/p45/probeB/gen/greet && python3 -c 'import time; "
                                  "time.sleep(10)'' was cancelled because it took more than 2 seconds")


# -- B2: model outputs SWE-agent rejected without running them ---------------------------------------------------


def test_swe_agent_blocked_command_and_bash_syntax_error_were_not_run() -> None:
    """Bug (probe B, B2): SWE-agent adds a rejected output to the trajectory with an empty observation and asks the
    model again; ``vim greet.py`` (blocked) and ``echo 'unclosed`` (``bash -n`` failed) read as commands that ran and
    printed nothing. Each is now "not run" with SWE-agent's answer, the next entry's requery message."""
    run = only(RUN3)
    assert [s.error for s in run.steps[:2]] == [
        "not run: Operation 'vim greet.py' is not supported by this environment.",
        "not run: Your bash command contained syntax errors and was NOT executed. bash: line 1: unexpected EOF while "
        "looking for matching `''",
    ]
    assert run.steps[0].observation == "Operation 'vim greet.py' is not supported by this environment."
    assert [s.error for s in run.steps[2:]] == [None, None, None]  # the commands that ran, and the submission
    assert run.outcome is Outcome.success


def test_swe_agent_exit_format_run_says_it_stopped_for_rejected_outputs() -> None:
    """Bug (probe B, B2): three replies without a tool call had no error, and the ``exit_format`` run's failure
    named an earlier, unrelated timeout."""
    run = only(RUN2)
    assert [s.error for s in run.steps[2:]] == [
        f"not run: {FORMAT_ERROR}", f"not run: {FORMAT_ERROR}",
        # the last one: the run stopped at the next model call, so no requery message follows it
        "not run: SWE-agent rejected it (a format error, a blocked command or a bash syntax error)",
        None,  # SWE-agent's own stop
    ]
    assert run.failure.error == ("exit_format: Exit due to repeated format/blocklist/bash syntax errors; last "
                                 f"rejected: step 3: {FORMAT_ERROR}")


def test_swe_agent_failure_names_a_last_failing_step_that_has_no_command(tmp_path: Path) -> None:
    """A failure whose last failing step has no command (a reply without a tool call) names the step and its error
    (``_failure`` read its command from ``arguments``, None there): here the run's file ends without SWE-agent's
    exit message, as a file saved before the stop does."""
    def change(record: dict) -> None:
        record["trajectory"] = record["trajectory"][:4]
        record["info"]["exit_status"] = "exit_cost"
    run = only(_rewritten(tmp_path, change))
    assert run.failure.error == f"exit_cost: last failing step 2: not run: {FORMAT_ERROR}"


# -- E2-F: a CodeR sub-agent's verdict -------------------------------------------------------------------------


def test_coder_sub_agent_fail_verdict_is_a_step_error() -> None:
    """Bug (probe E2, E2-F): CodeR's sub-agents end their part with ``succeed`` or ``fail`` (their prompt: "if
    failed, you should output `fail`", with a summary and the task status); a ``fail`` had no error. Its error is
    the agent and its reason, the thought before the summary."""
    run = only(CODER_FAIL)
    fail = run.steps[1]
    assert (fail.action, run.metadata["step_agents"]) == ("fail", [[0, "Tester"], [2, "Manager"]])
    assert fail.error.startswith("Tester failed: The output from running `pytest -rs --runxfail reproduce.py` still "
                                 "indicates that the issue is present,")
    assert "SUMMARY" not in fail.error and len(fail.error) <= 300
    assert [s.error for s in only(CODER_SUCCEED).steps if s.action == "succeed"] == [None]

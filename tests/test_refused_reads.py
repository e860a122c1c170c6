"""A read or clean-up the harness never ran is no read that found nothing (review RFR 1). ``recoveries`` passes over a
read's or clean-up's error only when the command ran and exited non-zero; Claude Code's refusals (a PreToolUse hook's
block, a headless session's "This command requires approval", the user's rejection, a ``<tool_use_error>``) were
worded as the CLI's text alone, so a refused ``rm -rf build`` or ``cat .env`` read as a clean-up or read that failed by
itself and was passed over. The adapter now words a call the CLI did not run with the one "not run: " prefix."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from trajsearch.digest import WarningDigest, from_row_steps
from trajsearch.ingest.adapters.claude_code import result_error
from trajsearch.ingest.read import read_dump
from trajsearch.model import Outcome, Trajectory
from trajsearch.search import TrajSearch

from conftest import make_run

REAL = Path(__file__).parent / "fixtures" / "claude-code" / ".real"
#: A real 2.1.332 transcript (probe C46): its ``rm -rf build`` was refused by a PreToolUse hook (``toolDenialKind``).
HOOKED = next((REAL / "probe-c46" / "resume-at").glob("dba4d7e9-*.jsonl"))
#: A real headless stream-json session: a hook refused ``rm -rf build``, then ``curl -s https://example.com`` was
#: refused for want of approval (``tool_result_meta`` ``non_execution_kind``), after an MCP lookup's KeyError.
HEADLESS = REAL / "headless-stream-json-session-start-hook.jsonl"


def _failed(path: Path) -> Trajectory:
    """The one run at ``path`` as a grader that failed it would record it (the CLI records no verdict)."""
    (run,) = [r.trajectory for r in read_dump(path, tenant="acme") if r.ok]
    return run.model_copy(update={"outcome": Outcome.failure})


def _error_head(ts: TrajSearch, run: Trajectory) -> str:
    ts.add([run])
    digest = from_row_steps(ts.run(run.trajectory_id, tenant="acme", level="failure").steps)
    assert isinstance(digest, WarningDigest)
    return digest.error.head


def test_a_clean_up_a_hook_refused_is_the_runs_error(hashing_ts):
    """The real run's last call, ``rm -rf build``, never ran: the hook's block is the error, not "run ended with
    outcome failure after 3 steps"."""
    head = _error_head(hashing_ts, _failed(HOOKED))
    assert head.startswith("not run: PreToolUse:Bash hook error: ") and "Blocked by policy" in head


def test_a_read_refused_for_want_of_approval_is_the_runs_error(hashing_ts, tmp_path):
    """The real headless session with its refused ``curl`` made a read (``cat .env``, the same refusal): that
    refusal is the error, not the earlier MCP lookup's KeyError (a read that never ran is no "no such file")."""
    text = HEADLESS.read_text(encoding="utf-8")
    assert '"command":"curl -s https://example.com"' in text  # its call, and the result's list of denials
    changed = tmp_path / HEADLESS.name
    changed.write_text(text.replace('"command":"curl -s https://example.com"', '"command":"cat .env"'),
                       encoding="utf-8")
    assert _error_head(hashing_ts, _failed(changed)) == "not run: This command requires approval"


@pytest.mark.parametrize("said", [
    "The user doesn't want to proceed with this tool use. The tool use was rejected (eg. if it was a file edit, the "
    "new_string was NOT written to the file). STOP what you are doing and wait for the user to tell you how to "
    "proceed.",
    "Claude requested permissions to use Bash, but you haven't granted it yet.",
    "<tool_use_error>InputValidationError: Bash failed due to the following issue:\nThe required parameter `command` "
    "is missing</tool_use_error>",
])
def test_a_call_claude_code_did_not_run_is_worded_so(said):
    """Versions before 2.1.3xx mark no denial by a field: the CLI's own words for a call it did not run."""
    error = result_error({"is_error": True, "tool_use_id": "t"}, said, {}, "cat .env")
    assert error is not None and error.startswith("not run: ")


def test_a_command_that_ran_and_failed_is_not_worded_so():
    """A Bash call that ran and failed keeps its exit code (and stays a read that found nothing when it is one)."""
    error = result_error({"is_error": True, "tool_use_id": "t"},
                         "Exit code 1\ncat: .env: No such file or directory", {}, "cat .env")
    assert error == "cat: .env: No such file or directory (exit code 1)"


@pytest.mark.parametrize("error", ["interrupted by the user", "not run: blocked by a hook: rm is not allowed here"])
def test_a_read_the_harness_stopped_stays_the_runs_error(hashing_ts, error):
    """Claude Code's interrupted call and the OpenHands SDK's hook refusal, as their adapters word them: the command
    did not run to an exit, so it found nothing to pass over."""
    run = make_run("r", outcome="failure", steps=[
        ("Bash", {"command": "rm -rf build"}, None),
        ("Bash", {"command": "grep -rn TODO src"}, "src/a.py:3: # TODO"),
    ])
    run.steps[0].error = error
    assert _error_head(hashing_ts, run) == error


def test_a_read_whose_printed_line_says_command_not_found_is_still_passed_over(hashing_ts):
    """A search of a CI log whose error line is a match it printed ("... gcc-12: command not found"), exit 2 for a
    missing folder: it ran and exited, a read with nothing to get past, not a program the shell could not find (that
    one's exit code is 127, which keeps its place)."""
    run = make_run("r", outcome="failure", steps=[
        ("Bash", {"command": "make build"}, None),
        ("Bash", {"command": "grep -rn gcc-12 ci.log logs/old"}, None),
    ])
    run.steps[0].error = "make: *** [Makefile:3: build] Error 1 (exit code 2)"
    run.steps[1].error = "ci.log:41:/bin/sh: 1: gcc-12: command not found (exit code 2)"
    assert _error_head(hashing_ts, run) == "make: *** [Makefile:3: build] Error 1 (exit code 2)"

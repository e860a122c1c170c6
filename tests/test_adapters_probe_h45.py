"""Round 45's probe H read through the public reader: SWE-agent 1.x runs stopped by an error (A3), programs the
sandbox could not run (A5), and tau-bench's fault analysis beside its results (A6).

Fixtures: ``fixtures/swe-agent/.real/contextbench`` (SWE-agent 1.1.0 output of ContextBench) and
``fixtures/tau-bench/.real/fault-analysis`` (a tau-bench fork's ``auto_error_identification.py`` output); see each
SOURCE.md. Shapes the files lack are made in ``tmp_path`` from them, following SWE-agent's own code (named there).
"""

from __future__ import annotations

import json
import logging
import shutil
from pathlib import Path

import pytest

from trajsearch.ingest.read import detect_format
from trajsearch.model import Outcome

from adapter_support import only
from cli_support import run_cli

FIXTURES = Path(__file__).parent / "fixtures"
CONTEXTBENCH = FIXTURES / "swe-agent" / ".real" / "contextbench" / "output"
QUOTA = CONTEXTBENCH / "django__django-10880" / "django__django-10880.traj"
NO_EXEC = CONTEXTBENCH / "pallets__flask-5014" / "pallets__flask-5014.traj"
FAULTS = (FIXTURES / "tau-bench" / ".real" / "fault-analysis"
          / "test-auto-error-identification-grok-3-mini_0922011221.json")
TAU_RESULTS = FIXTURES / "tau-bench" / ".real" / "gpt-4o-airline-failed-calls.json"
QUOTA_ERROR = ("Exit due to unknown error: litellm.APIError: APIError: OpenAIException - 用户额度不足, 剩余额度: "
               "＄-52.561770 (request id: 20260123023913142207690uoRfVR95)")


# -- A3: the exit message SWE-agent writes when an error stops the run -------------------------------------------


def test_swe_agent_run_stopped_by_an_api_error_names_it() -> None:
    """Bug (probe H, A3): SWE-agent 1.x ends a run on an exception with ``handle_error_with_autosubmission
    ("exit_error", f"Exit due to unknown error: {e}")``, the last step's thought; the failure said "no error output
    recorded" though that message is the run's only account of what failed (here the API account's quota)."""
    run = only(QUOTA)
    assert run.outcome is Outcome.infra_error  # the model API failed, not the agent
    assert run.failure.error == f"exit_error: {QUOTA_ERROR}"
    assert run.failure.cause.startswith("infrastructure")


def _with_last_step(tmp_path: Path, status: str, message: str, failing_step: bool = True) -> Path:
    """The real run, re-ended as SWE-agent 1.x's ``forward_with_handling`` ends one with ``status`` and ``message``
    (thought and response the message, no action), after a command whose output shows an error."""
    record = json.loads(QUOTA.read_text())
    last = record["trajectory"][-1]
    steps = [{**last, "action": "python reproduce.py", "thought": "Run it.", "response": "Run it.",
              "observation": "Traceback (most recent call last):\n  File \"reproduce.py\", line 1\nNameError: name 'x' "
                             "is not defined\n"}] if failing_step else []
    record["trajectory"] = steps + [{**last, "thought": message, "response": message}]
    record["info"]["exit_status"] = status
    path = tmp_path / "output" / QUOTA.parent.name / QUOTA.name
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps(record))
    return path


@pytest.mark.parametrize(("status", "message", "outcome", "error"), [
    # an error caught: it stopped the run, whatever an earlier command printed
    ("exit_environment_error", "Exit due to environment error: Runtime did not start within 60s",
     Outcome.infra_error, "exit_environment_error: Exit due to environment error: Runtime did not start within 60s"),
    ("exit_api", "Exit due to retry error: RetryError[<Future at 0x7f state=finished raised RateLimitError>]",
     Outcome.infra_error, "exit_api: Exit due to retry error: RetryError[<Future at 0x7f state=finished raised "
                          "RateLimitError>]"),
    ("exit_error", "Exit due to runtime error: Session was closed", Outcome.infra_error,
     "exit_error: Exit due to runtime error: Session was closed"),
    # auto-submitted after the error: the patch is kept, the message still says what stopped the run (an infra
    # error since round 35, as without the patch: the model API failed, not the agent)
    ("submitted (exit_error)", QUOTA_ERROR, Outcome.infra_error, f"submitted (exit_error): {QUOTA_ERROR}"),
    # a limit hit: the message only repeats the status; the last failing step says more, as before
    ("exit_format", "Exit due to repeated format/blocklist/bash syntax errors", Outcome.failure,
     "exit_format: last failing step 0 (`python reproduce.py`): NameError: name 'x' is not defined"),
])
def test_swe_agent_exit_message_with_an_error_is_the_failure(tmp_path: Path, status: str, message: str,
                                                             outcome: Outcome, error: str) -> None:
    run = only(_with_last_step(tmp_path, status, message))
    assert (run.outcome, run.failure.error) == (outcome, error)


def test_swe_agent_limit_hit_with_no_failing_step_says_its_exit_message(tmp_path: Path) -> None:
    """A format-error stop with no command output showing an error: its own message, not "no error output"."""
    run = only(_with_last_step(tmp_path, "exit_format", "Exit due to repeated format/blocklist/bash syntax errors",
                               failing_step=False))
    assert run.outcome is Outcome.failure and run.failure.cause is None  # the agent's own failure
    assert run.failure.error == "exit_format: Exit due to repeated format/blocklist/bash syntax errors"


# -- A5: a program the shell could not execute -------------------------------------------------------------------


def test_swe_agent_program_the_shell_could_not_execute_is_a_step_error() -> None:
    """Bug (probe H, A5): in a sandbox whose binaries do not run, every ``ls``, ``find``, ``python -c`` and ``echo``
    answered ``/usr/bin/ls: /usr/bin/ls: cannot execute binary file`` (bash's exit-126 diagnostic, signed with the
    file's name as bash took it for a script) and each step read as a success."""
    run = only(NO_EXEC)
    assert [s.error for s in run.steps] == [
        "/usr/bin/ls: /usr/bin/ls: cannot execute binary file",  # then ``find``'s listing: the ls failed
        "/usr/bin/find: /usr/bin/find: cannot execute binary file",
        "/opt/miniconda3/envs/testbed/bin/python: /opt/miniconda3/envs/testbed/bin/python: cannot execute binary file",
        "/usr/bin/echo: /usr/bin/echo: cannot execute binary file",
    ]


@pytest.mark.parametrize("output", [
    "bash: line 1: ./run.sh: Permission denied",  # bash, a file without its execute bit
    "bash: line 1: ./tool: cannot execute binary file: Exec format error",  # bash 5.1+, another architecture's binary
    "bash: ./tool: cannot execute: required file not found",  # bash 5.1+, its interpreter missing
    "/bin/sh: 1: ./tool: Exec format error",  # dash
    "/bin/sh: 1: ./run.sh: Permission denied",
])
def test_swe_agent_every_shell_says_it_could_not_execute_a_program(tmp_path: Path, output: str) -> None:
    """The same failure as bash and dash word it (``execute_cmd.c`` ``shell_execve``; dash's ``exec.c``)."""
    record = json.loads(NO_EXEC.read_text())
    record["trajectory"][1]["observation"] = output + "\n"
    path = tmp_path / "output" / NO_EXEC.parent.name / NO_EXEC.name
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps(record))
    assert only(path).steps[1].error == output


# -- A6: tau-bench's fault analysis beside its results ----------------------------------------------------------


def test_tau_bench_fault_analysis_named_alone_says_what_it_is(home: Path) -> None:
    """Bug (probe H, A6): ``auto_error_identification.py``'s output was "unrecognised dump format"."""
    with pytest.raises(ValueError, match="no run in this file: tau-bench's fault analysis of a results file"):
        detect_format(FAULTS)
    code, out, err = run_cli("ingest", str(FAULTS), "-t", "acme", "--dry-run")
    assert code == 2 and "tau-bench's fault analysis" in " ".join(err.split())


@pytest.mark.parametrize("stock", [False, True], ids=["fork", "tau-bench"])
def test_tau_bench_fault_analysis_beside_its_results_is_passed_over(home: Path, tmp_path: Path, stock: bool,
                                                                    caplog: pytest.LogCaptureFixture) -> None:
    """Bug (probe H, A6): a results folder holding the analysis beside the results rejected it (a dead letter,
    exit 3). The fork's file adds ``trial``, ``is_empty_trajectory`` and ``error_info`` to each entry; tau-bench's
    own (``json.dump({"fault_assignment_analysis": ..., "fault_type_analysis": ...})``) has only ``task_id``,
    ``author`` / ``fault_type`` and ``description``."""
    folder, dead = tmp_path / "results", tmp_path / "dead-letter.jsonl"
    folder.mkdir()
    shutil.copy(TAU_RESULTS, folder)
    analysis = json.loads(FAULTS.read_text())
    if stock:
        keep = {"task_id", "author", "fault_type", "description"}
        analysis = {key: [{k: v for k, v in e.items() if k in keep} for e in entries]
                    for key, entries in analysis.items()}
    (folder / FAULTS.name).write_text(json.dumps(analysis, indent=4))
    with caplog.at_level(logging.INFO, logger="trajsearch.ingest.read"):
        code, out, err = run_cli("ingest", str(folder), "-t", "acme", "--json", "--dead-letter", str(dead))
    assert code == 0, out + err
    summary = json.loads(out)
    assert (summary["ingested"], summary["rejected"]) == (2, 0)
    assert not dead.exists() or not dead.read_text()
    assert "tau-bench's fault analysis" in caplog.text


def test_swe_agent_a_command_that_skipped_a_place_it_may_not_read_did_not_fail(tmp_path: Path) -> None:
    """Review 1 of round 12, D6: ``find``'s and ``grep``'s "Permission denied" for a directory they skipped (a run as
    a user other than root) made a search that found its files a failed step. Only the shell's own is an error."""
    record = json.loads(NO_EXEC.read_text())
    record["trajectory"][1]["observation"] = ("find: '/root': Permission denied\n./src/app/models.py\n"
                                              "./src/app/views.py\n")
    path = tmp_path / "output" / NO_EXEC.parent.name / NO_EXEC.name
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps(record))
    assert only(path).steps[1].error is None


def test_swe_agent_a_file_a_command_may_not_read_or_write_is_still_its_error(tmp_path: Path) -> None:
    """Review 4 of round 12, D3: the rule for searches must not drop ``cat`` / ``tee`` refused a file: they failed."""
    record = json.loads(NO_EXEC.read_text())
    record["trajectory"][1]["observation"] = "cat: /etc/shadow: Permission denied\n"
    path = tmp_path / "output" / NO_EXEC.parent.name / NO_EXEC.name
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps(record))
    assert only(path).steps[1].error == "cat: /etc/shadow: Permission denied"

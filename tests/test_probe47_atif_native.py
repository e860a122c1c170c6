"""Probe F of round 47: ATIF that Harbor 0.26 writes for agents not read before (Cursor CLI, GitHub Copilot CLI);
native records with ``null`` optional fields; a Harbor traces export and our own fine-tuning exports told apart.

Through ``read_dump`` on the files Harbor's own converters wrote (``fixtures/atif/.real/harbor-0.26-cursor-copilot``,
see its SOURCE.md) and on what a harness's writer writes (``fixtures/native/.real/probe-f47``); no mocks.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from adapter_support import only
from cli_support import run_cli
from trajsearch.ingest.detect import detect_format
from trajsearch.ingest.read import read_dump
from trajsearch.model import Outcome

HARBOR = Path(__file__).parent / "fixtures" / "atif" / ".real" / "harbor-0.26-cursor-copilot"
CURSOR = HARBOR / "hello-cursor__Xq2Lm" / "agent" / "trajectory.json"
COPILOT = HARBOR / "hello-copilot__Pz8Rt" / "agent" / "trajectory.json"


def _errors(path: Path) -> list[tuple[str | None, str | None]]:
    return [(s.action, s.error) for s in only(path).steps]


# -- Cursor CLI: Harbor writes each tool's result as JSON, its outcome the one key ------------------------


def test_cursor_failed_shell_command_is_the_steps_error_with_its_exit_code() -> None:
    """Cursor's shell result is ``{"failure": {"exitCode": 1, "stdout", "stderr", ...}}`` when the command failed;
    Harbor dumps it as the result's text. Every failed command of a Cursor trial read as a success."""
    steps = only(CURSOR).steps
    assert steps[0].error == "FAILED tests/test_calc.py::test_add - assert 5 == 4 (exit code 1)"
    assert steps[1].error == "cat: calc.py: No such file or directory (exit code 1)"
    assert steps[6].action == "shell" and steps[6].error is None  # the passing rerun: exitCode 0


def test_cursor_rejected_and_failed_calls_are_errors_and_successes_are_not() -> None:
    """A command Cursor refused to run (``rejected``, headless mode cannot ask for approval) and a call that failed
    with no exit code (``error``) are the steps' errors; a read and an edit that succeeded are none."""
    assert _errors(CURSOR)[2:6] == [
        ("shell", "not run: rejected: Command requires approval, which is unavailable in headless mode"),
        ("await", "No shell found for id 45563"),
        ("read", None),
        ("edit", None),
    ]


# -- GitHub Copilot CLI: ``<exited with exit code N>``, ``success: false`` ---------------------------------


def test_copilot_bash_exit_code_marker_is_the_steps_error() -> None:
    """Copilot's bash tool ends its output with ``<exited with exit code N>`` and records the call a success
    whatever the command did; Harbor appends the result's other fields (``detailedContent``, the same output) as a
    JSON line, which is no error line of the command's."""
    assert _errors(COPILOT)[:3] == [
        ("bash", "FAILED tests/test_calc.py::test_add - assert 5 == 4 (exit code 1)"),
        ("bash", "xargs: command line cannot be assembled, too long (exit code 1)"),
        ("bash", None),  # <exited with exit code 0>
    ]


def test_copilot_tool_that_failed_is_the_steps_error() -> None:
    """A Copilot tool that failed is ``success: false`` with its ``error`` message, which Harbor keeps as the result
    (its ``success`` in the result's ``extra``)."""
    view = only(COPILOT).steps[3]
    assert (view.action, view.error) == ("view", "Path does not exist")


def test_copilot_1070_recorded_exit_code_and_detached_shell_marker_are_errors() -> None:
    """Copilot CLI 1.0.7x records ``shellExecution.exitCode`` beside the result (its text may show no exit code) and
    ends a detached shell's output with ``<shellId: N completed with exit code M>``."""
    assert _errors(HARBOR / "hello-copilot-1070__Qm4Wd" / "agent" / "trajectory.json")[:3] == [
        ("bash", "error: test failed, to rerun pass `--lib` (exit code 101)"),
        ("bash", "error[E0425]: cannot find value `totl` in this scope (exit code 1)"),
        ("bash", None),  # shellExecution.exitCode 0
    ]


# -- native: ``null`` for a field every run has ---------------------------------------------------------------

NATIVE_NULLS = Path(__file__).parent / "fixtures" / "native" / ".real" / "probe-f47" / "optional_nulls.jsonl"


def test_native_null_optional_fields_are_left_out_not_the_run() -> None:
    """A harness writing its dataclass with ``asdict`` leaves every unfilled field ``null``: each such run was
    refused (``field 'tags': Input should be a valid list``), and a graded run's ``"outcome": null`` was refused
    instead of graded by its reward as the native format documents."""
    results = list(read_dump(NATIVE_NULLS, tenant="acme"))[:3]
    assert [r.error for r in results if not r.ok] == []
    graded, failed, bumped = (r.trajectory for r in results)
    assert (graded.outcome, graded.tags, [s.action for s in graded.steps]) == (Outcome.success, ["nightly"], ["bash"])
    assert (failed.outcome, failed.steps[0].error) == (Outcome.failure, "AssertionError: 3 != 4")
    assert (bumped.outcome, bumped.steps, bumped.tool_versions, bumped.tags) == (
        Outcome.success, [], {"python": "3.11"}, [])


# -- detection: a Harbor traces export is named, and where its runs are ------------------------------------------


def test_a_harbor_traces_export_is_named_with_where_its_runs_are() -> None:
    """``harbor traces export`` saves a trial's ATIF as chat transcripts, one row per episode; such a file was
    "unrecognised dump format" with the list of formats, which says neither what it is nor where the runs are."""
    rows = HARBOR.parent / "harbor-traces-export" / "harbor-traces.jsonl"
    with pytest.raises(ValueError) as refused:
        detect_format(rows)
    said = str(refused.value)
    assert "no run in this file: this is a row of a Harbor traces export" in said
    assert "episode-0 of fix-config__h1" in said and "ingest the Harbor job directory" in said


def test_native_steps_out_of_order_are_refused_naming_the_first_step_out_of_place() -> None:
    """A record whose steps are numbered by model turn (two calls in turn 1) is refused, as before, but the reason
    names the step: "not strictly increasing" alone left the writer to search a run of hundreds of steps."""
    refused = [r for r in read_dump(NATIVE_NULLS, tenant="acme") if not r.ok]
    assert [(r.position, r.error) for r in refused] == [(
        "line 4", "invalid trajectory: steps must have strictly increasing 'index' values: steps[2].index 1 repeats "
        "steps[1].index 1")]


# -- detection: trajsearch's own fine-tuning exports --------------------------------------------------------------


@pytest.mark.parametrize("fmt", ["openai-chat", "sharegpt"])
def test_an_openai_chat_or_sharegpt_export_ingested_is_named_and_pointed_at_jsonl(tmp_path: Path, monkeypatch,
                                                                                  fmt: str) -> None:
    """``export -f openai-chat`` / ``-f sharegpt`` writes fine-tuning transcripts, not runs; ingested (to move runs
    to another store), such a file was "unrecognised dump format" with the list of formats."""
    monkeypatch.setenv("TRAJSEARCH_MODEL", "hashing")
    monkeypatch.delenv("TRAJSEARCH_SERVER", raising=False)
    for name, where in (("HOME", ""), ("URI", "milvus.db"), ("TRACES", "traces")):
        monkeypatch.setenv(f"TRAJSEARCH_{name}", str(tmp_path / "home" / where))
    monkeypatch.setenv("TRAJSEARCH_TENANT", "acme")
    code, _, err = run_cli("ingest", str(NATIVE_NULLS), "--json")
    assert code == 3, err  # nightly-004 is refused (its steps out of order); the others land
    exported = tmp_path / f"export.{fmt}.jsonl"
    code, _, err = run_cli("export", "-q", "payments test", "-f", fmt, "--outcome", "success", "--outcome", "failure",
                           "-k", "5", "-o", str(exported))
    assert code == 0, err
    code, out, err = run_cli("ingest", str(exported), "--json")
    assert code != 0
    said = out + err
    assert f"no run in this file: this is `trajsearch export -f {fmt}` output, a fine-tuning transcript of run" in said
    assert "export with `-f jsonl` to get records that ingest again" in said

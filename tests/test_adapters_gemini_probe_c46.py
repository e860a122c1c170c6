"""Gemini CLI 0.61 files found by probe C (round p46): the ``<untrusted_context>`` fence the CLI puts around shell,
MCP and web_fetch results, an MCP tool's refusal inside the CLI's frame, and the CLI's loop-detection feedback. The
fixtures (``gemini-cli/.real/probe-c46/``) are written by the released CLI, trimmed; their origin is in
``SOURCE.md``. And the CLI's word on a folder of Gemini CLI's side files alone."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from cli_support import run_cli
from trajsearch.ingest.read import read_dump
from trajsearch.model import Outcome, Trajectory

FIXTURES = Path(__file__).parent / "fixtures"
GEMINI = FIXTURES / "gemini-cli" / ".real"
REAL = GEMINI / "probe-c46"


def _run(name: str) -> Trajectory:
    (parsed,) = list(read_dump(REAL / name, tenant="acme"))
    assert parsed.trajectory is not None, parsed.error
    return parsed.trajectory


def test_a_grep_with_no_match_inside_the_fence_is_no_error() -> None:
    """Bug (probe C, C2): 0.61 wraps the shell report in ``<untrusted_context>``; the closing tag was taken for the
    output, so grep's "no match" (exit 1, ``Output: (empty)``) became the error "</untrusted_context> (exit code 1)"."""
    grep, diff, _ = _run("session-2026-12-04T23-53-1a32c30b.jsonl").steps
    assert grep.arguments["command"] == "grep -n TODO notes.txt"
    assert grep.error is None
    assert diff.error == "fatal: external diff died, stopping at notes.txt (exit code 128)"


def test_a_failing_scripts_error_is_its_stderr_line_not_the_fence() -> None:
    """Bug (probe C, C2): a script printing "boom" to stderr and exiting 3 had the error
    "</untrusted_context> (exit code 3)"."""
    steps = _run("session-2026-12-04T23-49-4b39381e.jsonl").steps
    assert steps[1].error == "boom (exit code 3)"
    assert all("untrusted_context" not in (s.error or "") for s in steps)


def test_an_mcp_tools_refusal_is_its_own_text() -> None:
    """Bug (probe C, C5): the error was the CLI's "MCP tool '...' reported tool error for function call: {...} with
    response: [...]" cut from its head mid-word; the tool said the ``text`` of its ``content`` parts."""
    mcp = _run("session-2026-12-04T23-49-4b39381e.jsonl").steps[0]
    said = "PermissionError: access to secret 'db_password' denied for role reader"
    assert mcp.action == "mcp_vault_read_secret"
    assert (mcp.error, mcp.observation) == (said, said)


def test_the_clis_fence_is_not_in_the_observations() -> None:
    """Bug (probe C, C6): every shell, MCP and web_fetch observation kept the CLI's prompt-injection fence."""
    run = _run("session-2026-12-04T23-52-8bf834e4.jsonl")
    shell, mcp, fetch, _ = run.steps
    assert mcp.observation == "abc123"
    assert shell.observation.startswith("Output: /usr/bin/bash: line 4: nonexistent_cmd_xyz: command not found\n")
    assert shell.error == "/usr/bin/bash: line 4: nonexistent_cmd_xyz: command not found (exit code 127)"
    assert fetch.error.startswith("All requested URLs were skipped: [Blocked Host]")
    assert not [s for s in run.steps if "untrusted_context" in (s.observation or "")]


def test_the_clis_loop_feedback_is_no_prompt_and_the_session_ended_on_its_loop_guard() -> None:
    """Bug (probe C, C4): the CLI's "System: Potential loop detected. ..." (``GeminiClient._recoverFromLoop``) was
    listed as a prompt the user typed, and nothing said that the CLI had halted the session on a loop."""
    run = _run("session-2026-12-04T23-55-5b47395b.jsonl")
    assert run.task == "GLOOP: read notes.txt carefully"
    assert "user_prompts" not in run.metadata
    assert run.metadata["loops_detected"] == [
        'Repeated tool call: read_file with arguments {"file_path":"/tmp/p46/probeC/gen/gwork4/notes.txt"}']
    assert run.metadata["ended_by"].startswith("Gemini CLI's loop detection")
    assert [s.action for s in run.steps] == ["read_file"] * 4
    assert run.outcome is Outcome.unknown  # no verdict on the task: the model looped, the service did not fail


@pytest.mark.parametrize("side_file, said", [
    (GEMINI / "idaho-vault" / "logs.json", "Gemini CLI's log of the prompts typed in a project"),
    (FIXTURES / "otel-genai" / ".real" / "gemini-cli-telemetry" / "telemetry.log", "Gemini CLI's telemetry file"),
], ids=["logs.json", "telemetry.log"])
def test_a_folder_of_only_side_files_says_what_they_are(side_file: Path, said: str, tmp_path: Path,
                                                        home: Path) -> None:
    """Bug (probe C, C7): a folder holding only Gemini CLI's side files (its prompt log, its telemetry file) was
    said to have "files [that] hold no record of their format", and its dry run listed nothing; each is passed over
    with what it is, as when it is named alone."""
    folder = tmp_path / "gemini"
    folder.mkdir()
    shutil.copy(side_file, folder)
    for dry_run in ((), ("--dry-run",)):
        code, stdout, stderr = run_cli("ingest", str(folder), "-t", "acme", *dry_run)
        told = " ".join(stderr.split())
        # logs.json is read and holds no run (0); telemetry.log, not named as a dump, is no input (2) (FRCLI2)
        assert code == (0 if side_file.suffix == ".json" else 2), stdout + stderr
        assert f"no run in the input: 1 file(s) passed over as holding none: {folder / side_file.name}: " \
               f"no run in this file: {said}" in told
        assert "hold no record of their format" not in told


def test_a_side_file_beside_a_file_of_no_format_still_gets_the_hint_for_that_file(tmp_path: Path, home: Path) -> None:
    """Review 2 (D3): one side file made the walk's line replace the hint for every other file: a tau2-bench
    results.json of the directory layout (its runs in simulations/ beside it) was no longer said."""
    folder = tmp_path / "mixed"
    folder.mkdir()
    shutil.copy(FIXTURES / "tau2-bench" / ".real" / "voice-experiment-no-content" / "results.json", folder)
    shutil.copy(GEMINI / "idaho-vault" / "logs.json", folder)
    code, stdout, stderr = run_cli("ingest", str(folder), "-t", "acme")
    told = " ".join(stderr.split())
    assert code == 0, stdout + stderr
    assert "1 file(s) passed over as holding none" in told and "logs.json" in told
    assert "hold no record of their format" in told and "simulations/" in told


def test_an_mcp_tools_refusal_in_the_older_frame_is_its_own_text(tmp_path: Path) -> None:
    """Review 2 (D4): versions whose MCP results came through @google/genai's ``mcpToTool`` put the tool's answer
    under ``error`` in the frame (``{"error": {"content": [...], "isError": true}}``: a user's report,
    chrome-devtools-mcp issue 292); only the 0.6x shape was read. The probe's session with its frame so rewritten."""
    session = "session-2026-12-04T23-49-4b39381e.jsonl"
    lines = []
    for line in (REAL / session).read_text().splitlines():
        if "reported tool error" in line:
            record = json.loads(line)
            for call in record.get("toolCalls", []):
                for result in call.get("result", []):
                    response = result["functionResponse"]["response"]
                    head, _, parts = response["error"].partition(" with response: ")
                    parts = json.loads(parts)
                    for part in parts:
                        part["functionResponse"]["response"] = {"error": part["functionResponse"]["response"]}
                    response["error"] = f"{head} with response: {json.dumps(parts)}"
            line = json.dumps(record)
        lines.append(line)
    (tmp_path / session).write_text("\n".join(lines) + "\n")
    (parsed,) = list(read_dump(tmp_path / session, tenant="acme"))
    mcp = parsed.trajectory.steps[0]
    assert mcp.error == "PermissionError: access to secret 'db_password' denied for role reader"

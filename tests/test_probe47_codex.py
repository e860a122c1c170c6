"""Codex rollouts probed in round p47 (helper C2): MCP tool results as Codex wrote them into ``function_call_output``.
The fixture (``codex-cli/.real/probe-c47/``) is a trimmed real rollout; its origin is in that folder's
``SOURCE.md``."""

from __future__ import annotations

import json
from pathlib import Path

from trajsearch.ingest.read import read_dump

PROBE_C47 = Path(__file__).parent / "fixtures" / "codex-cli" / ".real" / "probe-c47"
#: AcidicSoil/codex-session-viewer ``docs/example.jsonl`` (Codex CLI, 2025-09-10): four MCP calls and their results.
MCP_CALLS = PROBE_C47 / "rollout-2025-09-10-acidic-viewer-mcp.jsonl"


def only_run(path: Path):
    [run] = [r.trajectory for r in read_dump(path, tenant="acme")]
    return run


def test_an_mcp_result_is_its_text_not_its_content_blocks_json() -> None:
    """Codex 0.2x-0.6x wrote an MCP tool's result as its content blocks' JSON (``[{"text": "{\\n  \\"data\\": ...",
    "type": "text"}]``): every MCP step's observation was that JSON, each newline and quote escaped, so what the
    tool answered was neither readable nor searchable by its words. It is the blocks' text."""
    steps = only_run(MCP_CALLS).steps
    assert [s.action for s in steps] == ["task-master-ai__next_task", "memory__delete_entities",
                                         "task-master-ai__add_task", "task-master-ai__add_task"]
    next_task, deleted, _, added = steps
    assert next_task.observation.startswith('{\n  "data": {\n    "nextTask": {\n      "id": "60.1",')
    assert deleted.observation == "Entities deleted successfully"
    assert '"message": "Successfully added new task #64"' in added.observation
    assert [s.error for s in (next_task, deleted, added)] == [None, None, None]


def test_an_mcp_tool_error_is_the_steps_error() -> None:
    """The rollout does not keep an MCP result's ``isError`` (only its unserialized ``success`` flag had it), so an
    error is told by the tool's words: task-master's ``Error: Tag "logging" not found.`` read as a success, hidden
    in its JSON wrapping; the model's retry right after it is the success."""
    failed = only_run(MCP_CALLS).steps[2]
    assert failed.error == 'Error: Tag "logging" not found.'
    assert failed.observation.startswith('Error: Tag "logging" not found.\nVersion: 0.26.0')


def test_a_whole_mcp_result_flagged_is_error_is_an_error(tmp_path: Path) -> None:
    """Earlier builds and forks (``serde_json::to_string(&call_tool_result)``) wrote the whole result,
    ``{"content": [...], "isError": true}``: its flag is the step's error whatever the words, its text the
    observation. (The fixture's failed call answered so, and a success with ``"isError": false``.)"""
    lines = [json.loads(line) for line in MCP_CALLS.read_text(encoding="utf-8").splitlines()]
    for line, text, flag in ((lines[7], "Tag logging is unknown", True), (lines[5], "Entities deleted", False)):
        line["output"] = json.dumps({"content": [{"type": "text", "text": text}], "isError": flag})
    rollout = tmp_path / "rollout-2025-09-10T18-58-38-cf4def41-21e0-4b91-adb4-5397c1492084.jsonl"
    rollout.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    _, deleted, failed, _ = only_run(rollout).steps
    assert (failed.observation, failed.error) == ("Tag logging is unknown", "Tag logging is unknown")
    assert (deleted.observation, deleted.error) == ("Entities deleted", None)


#: The same rollout: four commands that exited non-zero inside Codex 0.2x's seccomp sandbox.
SANDBOX = PROBE_C47 / "rollout-2025-09-10-acidic-viewer-sandbox.jsonl"
SANDBOX_HEAD = "failed in sandbox LinuxSeccomp with execution error: "


def test_a_command_failed_in_a_2025_sandbox_says_why() -> None:
    """Codex 0.2x answered any command that exited non-zero in its sandbox with ``failed in sandbox ... : sandbox
    denied exec error, exit code: N, stdout: <output>, stderr: <output>``, all on one line with the output after it.
    The step's error was that header line cut at ``stdout:``: every failed test run, typecheck and typo read
    alike, without the exit code or what went wrong. It is the command's decisive line and code."""
    run = only_run(SANDBOX)
    assert [s.error for s in run.steps] == [
        SANDBOX_HEAD + "Error: Worker exited unexpectedly (exit code 1)",
        SANDBOX_HEAD + "sed: can't read Structure.md: No such file or directory (exit code 2)",
        SANDBOX_HEAD + "src/utils/session-db.ts(98,23): error TS2323: Cannot redeclare exported variable "
                       "'listHashes'. (exit code 2)",  # stdout's, stderr being empty
        SANDBOX_HEAD + "/bin/bash: -c: line 1: unexpected EOF while looking for matching `\"' (exit code 2)",
    ]
    assert run.steps[0].observation.startswith(SANDBOX_HEAD + "sandbox denied exec error, exit code: 1, stdout: ")


def test_a_search_with_no_match_in_a_2025_sandbox_is_no_error(tmp_path: Path) -> None:
    """Those builds answered so a search that found nothing too (``rg`` exits 1, printing nothing): no failure, as
    for the same reply through any other shell tool. (The fixture's ``rg`` call, its reply made the one a silent
    exit 1 gives, in the same words.)"""
    lines = SANDBOX.read_text(encoding="utf-8").splitlines()
    reply = json.loads(lines[9])
    reply["output"] = SANDBOX_HEAD + "sandbox denied exec error, exit code: 1, stdout: , stderr: "
    rollout = tmp_path / "rollout-2025-09-10T18-58-38-cf4def41-21e0-4b91-adb4-5397c1492084.jsonl"
    rollout.write_text("\n".join([*lines[:2], lines[8], json.dumps(reply)]) + "\n", encoding="utf-8")
    [search] = only_run(rollout).steps
    assert search.arguments["command"][2].startswith("rg -n ") and search.error is None


#: The same rollout: two patches Codex could not apply, their context lines quoted in one long reply line.
PATCH = PROBE_C47 / "rollout-2025-09-10-acidic-viewer-patch.jsonl"


def test_a_long_failure_reply_keeps_what_failed() -> None:
    """Codex's own failure replies say what failed first (``error: Failed to find expected lines [...] in <path>``,
    the patch's context quoted in between). A reply longer than an error's 300 characters was cut keeping its end:
    the error read ``…, " </div>", " </div>", ...`` with nothing of a patch that did not apply. It keeps its head."""
    errors = [s.error for s in only_run(PATCH).steps]
    assert len(errors) == 2
    assert all(e.startswith("error: Failed to find expected lines [") and len(e) <= 300 for e in errors)


def test_a_command_killed_at_its_timeout_is_an_error_saying_so(tmp_path: Path) -> None:
    """Codex kills a command at its ``timeout_ms`` and puts ``command timed out after N milliseconds`` before its
    output, exit code 124 (codex-rs ``build_content_with_timeout``; its own tests' expected replies: the
    ``shell_command`` text form and the JSON ``{"output", "metadata"}`` one); 2025 builds answered that line alone
    (``SandboxErr::Timeout``). The line alone was no error at all, and with output after it the error was that
    output's last line (a dev server's ``Local: http://localhost:5173/``, a test's last pass). The fixture's
    ``npm test`` call, its reply made each of these in turn."""
    lines = SANDBOX.read_text(encoding="utf-8").splitlines()
    served = ("command timed out after 120004 milliseconds\n> vite\n\n  VITE v5.0.0  ready in 300 ms\n"
              "  Local:   http://localhost:5173/\n")
    replies = {
        "command timed out after 120000 milliseconds": "command timed out after 120000 milliseconds",
        "Exit code: 124\nWall time: 120.0 seconds\nOutput:\n" + served:
            "command timed out after 120004 milliseconds (exit code 124)",
        json.dumps({"output": served, "metadata": {"exit_code": 124, "duration_seconds": 120.0}}):
            "command timed out after 120004 milliseconds (exit code 124)",
    }
    for n, (output, error) in enumerate(replies.items()):
        reply = json.loads(lines[3])
        reply["output"] = output
        rollout = tmp_path / f"{n}" / "rollout-2025-09-10T18-58-38-cf4def41-21e0-4b91-adb4-5397c1492084.jsonl"
        rollout.parent.mkdir()
        rollout.write_text("\n".join([*lines[:3], json.dumps(reply)]) + "\n", encoding="utf-8")
        [step] = only_run(rollout).steps
        assert (step.arguments["command"][2], step.error) == ("npm test -s", error)

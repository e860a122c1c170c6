"""A shell call's command is read by ``touched.command_line`` in every session reader (round 31 refactor): its
``command`` as a string, as an argv list (``["bash", "-lc", S]``: the script ``S``) or Codex's ``cmd``. Kimi's and
Copilot CLI's readers read only a string ``command`` before, so a command given as argv was no command to them: an
exit code 1 with no output then read as a "no" answer (``exit_code_error``), not as the failure it is."""

from __future__ import annotations

import json
from pathlib import Path

from trajsearch.ingest.read import read_inputs

COPILOT_LOG = Path(__file__).parent / "fixtures" / "copilot" / ".copilot29" / "cli" / \
    "c8963ad7-e7b1-414c-a9fc-930905e76708.jsonl"  # Copilot CLI 0.0.354, real
ARGV = ["bash", "-lc", "make build > build.log 2>&1"]  # its output sent to a file: exit 1 alone says it failed


def _only(path: Path):
    results = list(read_inputs([path]))
    assert len(results) == 1 and results[0].ok, [r.error for r in results]
    return results[0].trajectory


def test_a_kimi_shell_call_given_as_argv_that_exits_1_silently_failed(tmp_path: Path) -> None:
    call = {"type": "function", "id": "tool_1",
            "function": {"name": "Shell", "arguments": json.dumps({"command": ARGV})}}
    lines = [{"role": "_checkpoint", "id": 0}, {"role": "user", "content": "build it"},
             {"role": "assistant", "content": [{"type": "text", "text": "Building."}], "tool_calls": [call]},
             {"role": "tool", "tool_call_id": "tool_1",
              "content": [{"type": "text", "text": "<system>ERROR: Command failed with exit code: 1.</system>"}]}]
    path = tmp_path / "0f2c9a4e-1b7d-4c8e-9a35-6d2e8f1b7c40.jsonl"
    path.write_text("\n".join(json.dumps(line) for line in lines) + "\n", encoding="utf-8")
    step = _only(path).steps[0]
    assert step.action == "Shell" and step.error == "exit code 1"


def test_a_copilot_cli_shell_call_given_as_argv_that_exits_1_silently_failed(tmp_path: Path) -> None:
    lines = COPILOT_LOG.read_text(encoding="utf-8").splitlines()
    shell = [{"type": "tool.execution_start", "data": {"toolCallId": "call_sh1", "toolName": "bash",
                                                       "arguments": {"command": ARGV}}},
             {"type": "tool.execution_complete", "data": {"toolCallId": "call_sh1", "success": True,
                                                          "result": {"content": "<exited with exit code 1>"}}}]
    path = tmp_path / "events.jsonl"
    path.write_text("\n".join(lines[:-1] + [json.dumps(e) for e in shell] + lines[-1:]) + "\n", encoding="utf-8")
    bash = [s for s in _only(path).steps if s.action == "bash"]
    assert len(bash) == 1 and bash[0].error == "exit code 1"

"""Review of round 47's span fixes for tools the model's provider ran and the Agents SDK's ``ShellTool``, read
through the public reader on files the released packages wrote (``fixtures/openai-agents/.real/probeD47``,
``fixtures/otel-genai/.real/probeD47``: see each folder's SOURCE.md).
"""

from __future__ import annotations

from pathlib import Path

import adapter_support

FIXTURES = Path(__file__).parent / "fixtures"
AGENTS = FIXTURES / "openai-agents" / ".real" / "probeD47"
D47 = FIXTURES / "otel-genai" / ".real" / "probeD47"


def test_a_shell_command_that_printed_exit_code_0_itself_is_no_failure() -> None:
    """The SDK writes ``exit code: N`` only for a non-zero code (``render_shell_outputs``); a command that prints the
    line itself (``...; echo "exit code: $?"``, as agents do to see the code) ended with ``exit code: 0``, and the
    passing test run was read as a failed step, ``OK (exit code 0)``."""
    tests, grep = adapter_support.only(AGENTS / "agents-0.24-shell-command-echoes-exit-code-0.jsonl").steps
    assert tests.action == "shell" and tests.observation is not None and tests.observation.endswith("exit code: 0")
    assert tests.error is None
    assert (grep.action, grep.error) == ("shell", None)

"""Cline on Windows: a command whose output ends on a PowerShell error is a failed step.

Cline's UI keeps no exit code, so a command's failure is read from how its output ends (``_common.ended_failing``,
shared with the ATIF, OpenHands SDK and Gemini stream-json adapters). PowerShell ends a failed command on an error
record (``+ FullyQualifiedErrorId : ...``; PowerShell 5, and 7's NormalView) or, in PowerShell 7's default
ConciseView, on a ``Line |`` view of the failing line with the message behind a ``| `` gutter, or on one line
(``Get-Item: ...``); none of them was read as a failure. The outputs below are real, each from where it says; they
stand in for a real Cline task's command output (tests/fixtures/cline/.r28ui/mcp-vscode-server)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from adapter_support import gemini_shell_step, only
from trajsearch.ingest.adapters.claude_code import result_error

TASK = Path(__file__).parent / "fixtures" / "cline" / ".r28ui" / "mcp-vscode-server"
NOT_A_SEPARATOR = "标记“&&”不是此版本中的有效语句分隔符。"  # Windows PowerShell 5.1 in Chinese: "'&&' is not a valid ..."

# tests/fixtures/codex-cli/.real/probe-c43 (behaviour_lab's Codex rollout 019cc1e9, PowerShell 7), as printed
CONCISE_MISSING_PATH = (
    "\x1b[31;1mGet-ChildItem: \x1b[0m\r\n\x1b[31;1m\x1b[36;1mLine |\x1b[0m\r\n\x1b[31;1m\x1b[36;1m\x1b[36;1m   2 | "
    "\x1b[0m \x1b[36;1mGet-ChildItem -Force AGENTS.md\x1b[0m\r\n\x1b[31;1m\x1b[36;1m\x1b[36;1m\x1b[0m\x1b[36;1m\x1b[0m"
    "\x1b[36;1m     | \x1b[31;1m ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~\x1b[0m\r\n\x1b[31;1m\x1b[36;1m\x1b[36;1m\x1b[0m\x1b[36;1m"
    "\x1b[0m\x1b[36;1m\x1b[31;1m\x1b[31;1m\x1b[36;1m     | \x1b[31;1mCannot find path 'C:\\Users\\akhil\\AGENTS.md' "
    "because it does not exist.\x1b[0m\r\n")
CONCISE_ACCESS_DENIED = (  # the same rollout: the message quotes a position, whose `+` lines fall out of the gutter
    "ResourceUnavailable: \r\nLine |\r\n   2 |  rg --files -g \"package.json\" -g \"pyproject.toml\" -g "
    "\"requirements.txt …\r\n     |  ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~\r\n     | Program "
    "'rg.exe' failed to run: An error occurred trying to start process 'C:\\Program Files\\WindowsApps\\OpenAI.Codex_"
    "26.305.950.0_x64__2p2nqsd0c76g0\\app\\resources\\rg.exe' with working directory 'C:\\Users\\akhil'. Access is "
    "denied.At line:2 char:1\r\n+ rg --files -g \"package.json\" -g \"pyproject.toml\" -g \"requirements.txt …\r\n"
    "+ ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~.\r\n")
# tests/fixtures/otel-genai/.real/copilot-cli (MattGertz/OTEL-test, Copilot CLI's `powershell` tool): a message's
# second line out of the gutter
CONCISE_NOT_FOUND = (
    "Head: \nLine |\n   2 |  … ols\\typespec-azure-core\\lib\" -Recurse | Select-Object Name | Head -20\n     |      "
    "                                                           ~~~~\n     | The term 'Head' is not recognized as a name "
    "of a cmdlet, function, script file, or executable program.\nCheck the spelling of the name, or if a path was "
    "included, verify that the path is correct and try again.\n")
# a script's error, the message wrapped at the console's width (a Codex phase report: Ciellllllllll/zeno,
# goal/docs/reports/phase-61-report.md at 4dcc775c)
CONCISE_SCRIPT = (
    "cmake: D:\\Git\\zeno\\scripts\\test-headless.ps1:21\nLine |\n  21 |      cmake --preset $preset\n     |      "
    "~~~~~\n     | The term 'cmake' is not recognized as a name of a cmdlet, function, script file, or executable "
    "program. Check\n     | the spelling of the name, or if a path was included, verify that the path is correct and "
    "try again.\n")
# PowerShell 7 at the prompt (a Codeium chat a user committed: `react-docgen src/* -o component-docs.json`)
ONE_LINE = ("react-docgen: The term 'react-docgen' is not recognized as a name of a cmdlet, function, script file, or "
            "executable program.\nCheck the spelling of the name, or if a path was included, verify that the path is "
            "correct and try again.\n")
# tests/fixtures/gemini-cli/.real/session-2025-12-06T07-22-e0f194ce.json: Windows PowerShell 5.1, wrapped
RECORD = (
    "iex : The term 'Get-FileHash' is not recognized as the name of a cmdlet, function, script file, or \noperable "
    "program. Check the spelling of the name, or if a path was included, verify that the path is \ncorrect and try "
    "again.\nAt line:1 char:37\n+ irm https://claude.ai/install.ps1 | iex\n+                                     ~~~\n"
    "    + CategoryInfo          : ObjectNotFound: (Get-FileHash:String) [Invoke-Expression], CommandNotF \n   "
    "oundException\n    + FullyQualifiedErrorId : CommandNotFoundException,Microsoft.PowerShell.Commands."
    "InvokeExpressio \n   nCommand\n ")
# a native program's stderr line made a record, which PowerShell 5 prints for a program that succeeds too (npm's
# warning, as a committed verification log quotes `npx prisma generate`, cut after the record)
NATIVE = (
    "node.exe : npm warn Unknown env config \"devdir\". This will stop working in the next major version of npm. See "
    "`npm \nhelp npmrc` for supported config options.\nAt line:1 char:1\n+ & \"C:\\Program Files\\nodejs/node.exe\" "
    "\"C:\\Program Files\\nodejs/node_mo ...\n+ ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~\n"
    "    + CategoryInfo          : NotSpecified: (npm warn Unknow...config options.:String) [], RemoteException\n"
    "    + FullyQualifiedErrorId : NativeCommandError\n \n")


# PowerShell 7 at the prompt, a cmdlet's error (an Antigravity transcript: bishop527/house_hunt, "AI Chat History/Public
# Repository Security Audit_20260710_202346.md" at 4e864d88, `Remove-Item bandit_results.json; ...`; its blanks kept)
CMDLET = ("Remove-Item: Cannot find path 'C:\\Users\\aedwa\\workspace\\house_hunt\\bandit_results.json' because it does "
          "not exist.   \n")
# Windows PowerShell 5.1's record for `cd nope` (Set-Location's PathNotFound), as RECORD is laid out
CD = ("Set-Location : Cannot find path 'C:\\Users\\x\\nope' because it does not exist.\nAt line:1 char:1\n+ cd nope\n"
      "+ ~~~~~~~\n    + CategoryInfo          : ObjectNotFound: (C:\\Users\\x\\nope:String) [Set-Location], "
      "ItemNotFoundException\n    + FullyQualifiedErrorId : PathNotFound,Microsoft.PowerShell.Commands.SetLocationCommand"
      "\n \n")
#: Successful outputs that end on a ``Name-Name: value`` line, PowerShell 7's one-line shape of a cmdlet's error: an
#: HTTP header (`curl -sI ... | grep -i content-type`, as a repository's README shows it; a `curl -I`), a Gerrit
#: commit trailer, package metadata, a diff's context line before added `+ ` lines, a script's own report.
HEADER_LIKE = [
    "Content-Type: text/plain; version=0.0.4; charset=utf-8\n",
    "HTTP/1.1 200 OK\nDate: Mon, 07 Dec 2026 01:00:00 GMT\nServer: nginx\nContent-Type: text/html; charset=utf-8\n",
    "HTTP/1.1 200 OK\nSet-Cookie: sid=abc; Path=/; HttpOnly\n",
    "HTTP/2 200\nAccept-Ranges: bytes\n",
    "commit 5d12448c\nAuthor: x\n\n    Fix the walk\n\n    Change-Id: I8f2c1d9e0a\n",
    "Name: requests\nVersion: 2.31.0\nHome-Page: https://requests.readthedocs.io\n",
    " Content-Type: text/plain\n+    foo\n+    bar\n",
    "Test-Path: True\n",
    "Test-Result: All 43 tests passed.\n",
]

def test_the_real_tasks_commands_refused_by_powershell_are_step_errors() -> None:
    """The task ran ``cd "..." && npx ...`` and ``cd "..." && dir`` in Windows PowerShell 5.1, which has no ``&&``:
    its parse error record is all their output. The same commands with ``;`` succeeded."""
    commands = [s for s in only(TASK).steps if s.action == "execute_command"]
    assert ["&&" in s.arguments["command"] for s in commands[:4]] == [True, False, True, False]
    assert [s.error for s in commands[:4]] == [NOT_A_SEPARATOR, None, NOT_A_SEPARATOR, None]


@pytest.mark.parametrize("output, error", [
    (CONCISE_MISSING_PATH, "Get-ChildItem: Cannot find path 'C:\\Users\\akhil\\AGENTS.md' because it does not exist."),
    (CONCISE_ACCESS_DENIED, "ResourceUnavailable: Program 'rg.exe' failed to run: An error occurred trying to start "
                            "process 'C:\\Program Files\\WindowsApps\\OpenAI.Codex_26.305.950.0_x64__2p2nqsd0c76g0\\app"
                            "\\resources\\rg.exe' with working directory 'C:\\Users\\akhil'. Access is denied.At "
                            "line:2 char:1"),
    (CONCISE_NOT_FOUND, "Head: The term 'Head' is not recognized as a name of a cmdlet, function, script file, or "
                        "executable program."),
    (CONCISE_SCRIPT, "cmake: The term 'cmake' is not recognized as a name of a cmdlet, function, script file, or "
                     "executable program. Check the spelling of the name, or if a path was included, verify that the "
                     "path is correct and try again."),
    (ONE_LINE, "react-docgen: The term 'react-docgen' is not recognized as a name of a cmdlet, function, script file, "
               "or executable program."),
    (RECORD, "iex : The term 'Get-FileHash' is not recognized as the name of a cmdlet, function, script file, or "
             "operable program. Check the spelling of the name, or if a path was included, verify that the path is "
             "correct and try again."),
    (NATIVE, None),  # a warning on stderr: the record says nothing failed
    (CMDLET, "Remove-Item: Cannot find path 'C:\\Users\\aedwa\\workspace\\house_hunt\\bandit_results.json' because it "
             "does not exist."),
    (CD, "Set-Location : Cannot find path 'C:\\Users\\x\\nope' because it does not exist."),
    (CD + "v20.11.1\n", None),  # `cd nope; node -v`: node's version after the record, not the record's wrapped id
    (CD + "ok\n", None),
    *[(output, None) for output in HEADER_LIKE],  # not a failure: a successful output's last line
    (RECORD + "\n    目录: C:\\Users\\70912\\Documents\\Cline\\MCP\n\nMode  LastWriteTime  Length Name\n"
              "-a----  2025/10/15  21:16  32 .gitignore\n", None),  # `iex ...; dir`: the listing after it ends it
])
def test_a_command_whose_output_ends_on_a_powershell_error_is_a_step_error(tmp_path: Path, output: str,
                                                                           error: str | None) -> None:
    messages = json.loads((TASK / "ui_messages.json").read_text())
    at = next(n for n, m in enumerate(messages) if m.get("ask") == "command_output" and "目录" in m["text"])
    messages[at]["text"] = output  # the output of `cd "..."; dir`
    (tmp_path / "ui_messages.json").write_text(json.dumps(messages, ensure_ascii=False))
    listed = [s for s in only(tmp_path).steps if s.action == "execute_command"][3]
    assert listed.arguments["command"].endswith("; dir") and listed.error == error


@pytest.mark.parametrize("output", [CONCISE_SCRIPT, CONCISE_NOT_FOUND, ONE_LINE, CONCISE_MISSING_PATH])
def test_an_exit_code_kept_names_the_powershell_error_as_the_output_alone_does(tmp_path: Path, output: str) -> None:
    """Where an exit code was kept (a Claude Code Bash result here; Codex's and Copilot's the same way) the error is
    read by ``decisive_line``, which had a ``Line |`` view of its own: it named the spelling sentence, or a line of
    raw colour codes, where the same output without a code named the PowerShell error."""
    alone = gemini_shell_step(output, tmp_path).error
    assert alone and alone.split(":")[0] in output
    assert result_error({"is_error": True, "tool_use_id": "t"}, f"Exit code 1\n{output}", {}, "x") == \
        f"{alone} (exit code 1)"

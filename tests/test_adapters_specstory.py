"""SpecStory's Markdown chat histories (``.specstory/history/*.md``), read from real files of several versions
(tests/fixtures/specstory/.specstory29/README.md): Cursor through the extension in April 2025, the CLI's Claude Code
export layout of 2025 (SpecStory's own fixtures), Cursor and Claude Code with Markdown v2.1.0 in 2026, Gemini CLI's
exec_command calls."""

from __future__ import annotations

import json
import logging
import re
import shutil
import signal
from datetime import datetime, timezone
from pathlib import Path

import pytest

from trajsearch.ingest.adapters import specstory
from trajsearch.ingest.detect import detect_format
from trajsearch.ingest.read import read_inputs
from trajsearch.model import Outcome

from adapter_support import only
from cli_support import newcomer, run_cli, unnoted  # noqa: F401 (a fixture)

SPECSTORY = Path(__file__).parent / "fixtures" / "specstory" / ".specstory29"
CURSOR_2025 = SPECSTORY / "cursor-2025" / ".specstory" / "history" / "2025-04-29_20-13-session-start-error-for-task-008.md"
CLAUDE_2025 = SPECSTORY / "claude-code-2025" / ".specstory" / "history" / "2026-06-20_11-00-00Z-fix-search-index.md"
SCAFFOLD = CLAUDE_2025.with_name("2026-06-06_09-00-00Z-scaffold-search-index.md")
CLAUDE_2026 = SPECSTORY / "claude-code-2026" / ".specstory" / "history" / "2026-01-16_16-48-38Z-the-code-in-specstory.md"
PR_REVIEW = CLAUDE_2026.with_name("2026-01-23_14-20-54Z-command-message-pr-review.md")
EMPTY = CLAUDE_2026.with_name("2026-07-24_19-12-08Z.md")
GEMINI = SPECSTORY / "gemini-2026" / ".specstory" / "history" / "2026-06-18_15-52-09Z-read-docs-git-provenance.md"
CURSOR_2026 = next((SPECSTORY / "cursor-2026" / ".specstory" / "history").glob("2026-01-03_14-51Z-*.md"))
#: Cursor histories whose failed commands show the failure inside their output (fixtures/specstory/.left30/README.md)
FAILED_INSIDE = Path(__file__).parent / "fixtures" / "specstory" / ".left30" / "cursor-2025" / ".specstory" / "history"


def test_a_2026_cursor_chat_is_a_run_with_its_tools_their_results_and_a_failed_push() -> None:
    assert detect_format(CURSOR_2026) == "specstory"
    run = only(CURSOR_2026)
    assert run.trajectory_id == "specstory.17d2aa8a-d529-4cff-9a80-bc7697c468ad"  # the session SpecStory names
    assert run.task.startswith("今回は、google earthの画像から範囲を選択して")
    assert run.metadata["user_prompts"][-1] == "githubにwork20260104_01というリポジトリを作ってプッシュしてください。"
    assert (run.metadata["agent"], run.model_id, run.tool_versions) == (
        "Cursor", "gpt-5.1-codex-max", {"specstory_markdown": "2.1.0"})
    assert run.created_at == datetime(2026, 1, 3, 14, 51, tzinfo=timezone.utc)
    assert run.outcome == Outcome.unknown
    actions = [s.action for s in run.steps]
    assert actions[:3] == ["respond", "respond", "list_dir"] and "todo_write" in actions
    push = next(s for s in run.steps if "git push" in (s.arguments or {}).get("command", ""))
    assert push.action == "run_terminal_cmd"
    assert push.error.startswith("fatal: could not read Username for 'https://github.com'")
    assert push.thought is None and run.steps[push.index + 1].thought.startswith("認証エラーのため")
    assert [s.error for s in run.steps if s.action == "tool"] == ["Cannot edit files blocked by globalignore"]
    cat = run.steps[-1]  # the chat's own history, printed: its turns are output, not the chat's
    assert cat.arguments["command"].endswith(".md | head -100") and "_**User (2026-01-03 14:51Z)**_" in cat.observation
    listed = run.steps[2]
    assert listed.arguments == {"description": "Listed directory, 0 results"} and listed.observation == "No results found"


def test_an_early_2025_chat_reads_bare_commands_and_summaries_and_its_id_is_its_words(tmp_path: Path) -> None:
    run = only(CURSOR_2025)
    assert run.task.startswith("❯ minsky session start --task 008\nError starting session: Session 'task#008'")
    assert run.model_id is None and "agent" not in run.metadata  # the extension named neither then
    # the title's 16:13:16 is local time: the file's name, 2025-04-29_20-13, is the same start in UTC
    assert run.created_at == datetime(2025, 4, 29, 20, 13, 16, tzinfo=timezone.utc)
    assert run.metadata["created_at_zone"].startswith("UTC-04:00 (its file's name")
    assert [s.action for s in run.steps[:3]] == ["fetch_rules", "run_terminal_cmd", "run_terminal_cmd"]
    assert run.steps[1].arguments == {"command": "minsky tasks list --json | jq"}
    [failed] = [s for s in run.steps if s.error]
    assert failed.arguments == {"command": "minsky session start --task 008"}
    assert failed.error.startswith("fatal: destination path")
    assert any(s.action == "codebase_search" for s in run.steps)
    moved = tmp_path / "renamed.md"  # no session id in the file: its id is its start and words, not its path
    shutil.copy(CURSOR_2025, moved)
    assert detect_format(moved) == "specstory" and only(moved).trajectory_id == run.trajectory_id
    assert run.trajectory_id.startswith("specstory.20250429T161316.")


def test_a_claude_code_export_joins_each_result_to_its_tool_and_skips_local_commands(tmp_path: Path) -> None:
    """The SpecStory CLI's Claude Code export of 2025: ``Tool use: **x**``, its argument in backquotes, its result
    under ``Result:``, in the same turn (SpecStory's own fixtures of the layout) or in a later one, after empty
    ``_**Agent**_`` turns (as a real export of July 2025 whose licence is unknown wrote them: the text below is ours,
    in its layout)."""
    run = only(CLAUDE_2025)
    assert run.trajectory_id == "specstory.bbbb1111-2222-4333-8444-000000000005"
    assert (run.task, run.metadata["user_prompts"]) == ("fix the SEARCH_INDEX crash", ["no, it still crashes"])
    assert (run.metadata["agent"], run.model_id) == ("Claude Code", "claude-opus-4-20250514")
    [bash] = run.steps
    assert bash.arguments == {"command": "swift build src/SEARCH_INDEX.swift", "description": "Build the index"}
    assert bash.observation == "crash: index out of range"
    [write] = only(SCAFFOLD).steps
    assert (write.action, write.arguments, write.observation) == ("Write", {"target": "src/SEARCH_INDEX.swift"},
                                                                  "wrote 24 lines")
    later = tmp_path / "2025-07-20_10-12-53Z-hello.md"
    later.write_text(
        "## 2025-07-20 10:12:53Z\n\n"
        "<!-- Claude Code Session 0f1e2d3c-4b5a-4978-8695-a4b3c2d1e0f9 (2025-07-20_10-12-53Z) -->\n\n"
        "_**User**_\n\n/exit\n ⎿  (no content)\n\n---\n\n_**Agent (<synthetic>)**_\n\nNo response requested.\n\n"
        "---\n\n_**User**_\n\nread the update script\n\n---\n\n_**Agent (claude-sonnet-4-20250514)**_\n\n"
        "Tool use: **Read** `/home/u/update`\n\n_**Agent**_\n\n_**Agent**_\n\n"
        "Result:\n\n```\n#!/bin/sh\nrealpath .\n```\n\n"
        "---\n\n_**Agent (claude-sonnet-4-20250514)**_\n\nIt prints the folder.\n")
    run = only(later)
    assert run.task == "read the update script"  # not /exit
    assert [(s.action, s.arguments, s.observation) for s in run.steps] == [
        ("Read", {"target": "/home/u/update"}, "#!/bin/sh\nrealpath ."),
        ("respond", {"content": "It prints the folder."}, None)]


def test_a_2026_claude_code_chat_has_its_commands_exit_codes_as_errors() -> None:
    run = only(CLAUDE_2026)
    assert run.trajectory_id == "specstory.e317d7b9-3289-4345-9c97-0bb1e3d998c8"
    assert (run.metadata["agent"], run.model_id) == ("Claude Code", "claude-opus-4-5-20251101")
    assert run.metadata["user_prompts"] == ["one them progressively, from check to build to skip", "I installed it."]
    checks = [s for s in run.steps if s.arguments == {"command": "goreleaser check",
                                                      "description": "Validate goreleaser config syntax"}]
    assert [s.error for s in checks] == [
        "(eval):1: command not found: goreleaser (exit code 127)",
        "⨯ check failed error=1 out of 1 configuration file(s) have issues (exit code 2)"]
    brew = next(s for s in run.steps if s.arguments and s.arguments.get("command", "").startswith("brew info"))
    assert brew.error is None and brew.observation.startswith("==> goreleaser: stable 2.13.3")
    assert checks[0].thought.startswith("The user wants me to run the goreleaser commands progressively")


def test_a_call_the_cli_marks_failed_has_its_error(tmp_path: Path) -> None:
    """The SpecStory CLI's generic rendering of a call (``specstory-cli/pkg/session/markdown.go``,
    ``renderGenericTool``): ``**Input:**`` and, for an ``is_error`` output, ``**Error:**`` and its content."""
    history = tmp_path / "2026-03-01_10-00-00Z-deploy.md"
    history.write_text(
        "<!-- Generated by SpecStory, Markdown v2.1.0 -->\n\n# deploy (2026-03-01 10:00:00Z)\n\n"
        "<!-- Droid CLI Session 0199d491-acf0-7d51-9384-85984d07bdb1 (2026-03-01 10:00:00Z) -->\n\n"
        "_**User (2026-03-01 10:00:00Z)**_\n\ndeploy the site\n\n---\n\n"
        "_**Agent (glm-5 2026-03-01 10:00:05Z)**_\n\n"
        '<tool-use data-tool-type="generic" data-tool-name="deploy_site"><details>\n'
        "<summary>Tool use: **deploy_site**</summary>\n\n**Input:**\n\n- target: `prod`\n\n**Error:**\n\n"
        "```\nPermissionDenied: token lacks deploy scope\n```\n</details></tool-use>\n")
    run = only(history)
    assert (run.metadata["agent"], run.model_id) == ("Droid", "glm-5")
    [call] = run.steps
    assert call.action == "deploy_site" and call.error == "PermissionDenied: token lacks deploy scope"


def test_tool_blocks_with_no_rule_between_are_steps_each(tmp_path: Path) -> None:
    """Cursor's histories of late 2025 put one ``<tool-use>`` block right under another, and under the prose that leads
    to them, with no ``---``: the blocks below are as RaincloudTheDragon/BasedPlayblast's
    ``.specstory/history/2025-12-02_23-09Z-add-audio-support-for-next-major.md`` (commit 2b4e0c2e) has them; the
    session comment's uuid and the request are ours."""
    history = tmp_path / "2025-12-02_23-09Z-add-audio-support-for-next-major.md"
    history.write_text(
        "<!-- Generated by SpecStory, Markdown v2.1.0 -->\n\n"
        "<!-- cursor Session 4f3a2b1c-0d9e-4f8a-b7c6-d5e4f3a2b1c0 (2025-12-02 23:09Z) -->\n\n"
        "# Add audio support for next major (2025-12-02 23:09Z)\n\n"
        "_**User (2025-12-02 23:09Z)**_\n\nadd audio support for the next major\n\n---\n\n"
        "_**Agent (model default, mode Agent)**_\n\nReading the current code:\n\n"
        '<tool-use data-tool-type="read" data-tool-name="read_file">\n'
        "<details><summary>Tool use: **read_file** • Read file: changelog.md</summary>\n\n</details>\n</tool-use>\n"
        '<tool-use data-tool-type="read" data-tool-name="read_file">\n'
        "<details><summary>Tool use: **read_file** • Read file: src/Playblast_Animation_Plugin_Ver2_3.py</summary>\n\n"
        "</details>\n</tool-use>\n"
        '<tool-use data-tool-type="search" data-tool-name="codebase_search">\n<details>\n'
        "                <summary>Tool use: **codebase_search** • Searched codebase \"audio support implementation "
        "playblast\" • **7** results</summary>\n            \n| File | Lines |\n|------|-------|\n"
        "| `__init__.py` | L480-2141 |\n\n</details>\n</tool-use>\n\n"
        "Checking the terminal selection and the specstory file for context:\n")
    run = only(history)
    assert [(s.action, (s.arguments or {}).get("description")) for s in run.steps] == [
        ("read_file", "Read file: changelog.md"),
        ("read_file", "Read file: src/Playblast_Animation_Plugin_Ver2_3.py"),
        ("codebase_search", 'Searched codebase "audio support implementation playblast" • 7 results'),
        ("respond", None)]
    assert run.steps[0].thought == "Reading the current code:" and "L480-2141" in run.steps[2].observation


def test_a_walk_takes_the_histories_and_no_other_markdown() -> None:
    results = list(read_inputs([SPECSTORY]))
    assert all(r.ok for r in results), [r.error for r in results if not r.ok]
    assert sorted(Path(r.source).name for r in results) == sorted(
        p.name for p in (CURSOR_2025, CLAUDE_2025, SCAFFOLD, CLAUDE_2026, CURSOR_2026, PR_REVIEW, GEMINI)
    )  # not .what-is-this.md, not NOTES.md, and no run of the empty session


def test_markdown_with_no_turn_is_refused_saying_so(tmp_path: Path) -> None:
    notes = tmp_path / "notes.md"  # a note quoting SpecStory's header: no history of SpecStory's
    notes.write_text("# Notes\n\nSpecStory opens its files so:\n\n<!-- Generated by SpecStory -->\n")
    [result] = list(read_inputs([notes]))
    assert not result.ok and "not a SpecStory chat history" in result.error


def test_ingest_dry_run_and_a_search_by_the_failed_push_find_the_run(newcomer, tmp_path: Path) -> None:  # noqa: F811
    code, out, err = run_cli("ingest", "--dry-run", str(SPECSTORY))
    assert code == 0, out + err
    assert f"{CURSOR_2026.name}: format specstory; runs 1" in out + err
    assert f"{CLAUDE_2025.name}: format specstory; runs 1" in out + err
    assert f"{CLAUDE_2026.name}: format specstory; runs 1; rejected 0; steps 6; errors 2" in out + err
    code, out, err = run_cli("ingest", str(SPECSTORY), "-t", "acme")
    assert code == 0, out + err
    code, out, err = run_cli("search", "fatal: could not read Username for 'https://github.com'", "-t", "acme",
                             "--json")
    assert code == 0 and not [line for line in unnoted(err) if "error" in line.lower()], out + err
    hits = json.loads(out)
    assert hits and hits[0]["trajectory_id"] == only(CURSOR_2026).trajectory_id, out


def _shell(command: str, output: str) -> str:
    """A 2026 Cursor terminal call of ``command`` and its output, as a history's agent turn shows it."""
    return ('<tool-use data-tool-type="shell" data-tool-name="run_terminal_cmd">\n'
            f"<details><summary>Tool use: **run_terminal_cmd** • Run command: {command}</summary>\n\n"
            f"```bash\n{command}\n```\n\n```\n{output}\n```\n</details>\n</tool-use>\n\n---\n")


def _history(path: Path, agent_turn: str, agent: str = "cursor") -> Path:
    """A history of one request and one agent turn, in the 2026 Markdown (the agent turn as given)."""
    path.write_text(
        "<!-- Generated by SpecStory, Markdown v2.1.0 -->\n\n"
        f"<!-- {agent} Session 0b1c2d3e-4f50-4a6b-8c7d-9e0f1a2b3c4d (2026-01-03 14:51Z) -->\n\n"
        "# Check (2026-01-03 14:51Z)\n\n_**User (2026-01-03 14:51Z)**_\n\ncheck it\n\n---\n\n"
        f"_**Agent (model gpt-5, mode Agent)**_\n\n{agent_turn}\n")
    return path


def test_a_reply_of_many_command_blocks_and_a_line_of_prose_reads_at_once(tmp_path: Path) -> None:
    """A regex over the fences tried every way to pair them: 28 blocks took two minutes, 32 half an hour."""
    reply = "```bash\nls\n```\n" * 40 + "done."
    [respond] = only(_history(tmp_path / "blocks.md", reply)).steps
    assert respond.action == "respond" and respond.arguments["content"].endswith("```\ndone.")


def test_thinking_blocks_are_each_a_thought_and_unclosed_ones_cost_no_time(tmp_path: Path) -> None:
    turn = ("<think><details><summary>Thought Process</summary>first</details></think>\n\n"
            "<think><details><summary>Thought Process</summary>second</details></think>\n\nAll done.\n\n"
            + "<think>x\n" * 20000)  # a regex restarting at each unclosed <think>: minutes
    [respond] = only(_history(tmp_path / "think.md", turn)).steps
    assert respond.thought.startswith("first\n\nsecond")


def test_a_slash_command_is_the_task_as_typed() -> None:
    """Claude Code's own user turns (``<command-message>``, ``<command-name>``, ``<local-command-stdout>``): 145 of
    the 280 histories of specstoryai/getspecstory had them as their task."""
    run = only(PR_REVIEW)
    assert run.task == "/pr-review 151"
    assert run.metadata["user_prompts"][0].startswith("## Context - Current pull request status: title: Only cloud")


def test_outputs_quoting_failures_of_commands_that_succeeded_are_no_errors(tmp_path: Path) -> None:
    """Outputs as real histories show them (onotakuy/work20260104_01 cat-ing its own chat, which holds a failed
    push; edobry/minsky's ``git log -p | cat``; a Claude Code ``node ... | head`` printing JSON with "exit code 1"):
    only a leading ``Exit code N`` or the end of an output says a command failed."""
    turn = (_shell("cat .specstory/history/chat.md | head -100",
                  "```\nfatal: could not read Username for 'https://github.com': No such device or address\n```\n\n"
                  "認証エラーのため、プッシュできませんでした。") +
            _shell("git log -p | cat",
                   "+## Error handling\n+error details: kept in the log\n+- **Untyped Error Handling**") +
            _shell("node scripts/dump.mjs | head -3",
                   '{"tool": "Bash", "result": "failed (exit code 1)"}\n{"ok": true}') +
            _shell("git push -u origin main",
                   "fatal: could not read Username for 'https://github.com': No such device"))
    steps = only(_history(tmp_path / "quoted.md", turn)).steps
    assert [s.error for s in steps] == [None, None, None,
                                        "fatal: could not read Username for 'https://github.com': No such device"]


def test_codex_and_gemini_shell_calls_have_their_command_and_exit_code(tmp_path: Path) -> None:
    run = only(GEMINI)
    assert (run.metadata["agent"], run.task.split("\n")[0]) == (
        "Gemini CLI", "Read docs/git-provenance/RESEARCH-TASK.md and all 10 reports on the 6 standards in "
                      "docs/git-provenance/systems/")
    shells = [s for s in run.steps if s.action == "exec_command"]
    assert [s.arguments for s in shells][0] == {"command": "rg --files docs/git-provenance"}
    assert [s.error for s in shells] == [None, None, None]  # rg's exit 1 with no output: no match
    failed = GEMINI.read_text().replace("Process exited with code 1", "Process exited with code 2").replace(
        "Original token count: 0\nOutput:\n", "Original token count: 9\nOutput:\nrg: docs/x: No such file or directory\n")
    edited = tmp_path / GEMINI.name  # the last call edited: exit 2 and rg's complaint
    edited.write_text(failed)
    assert only(edited).steps[-1].error == "rg: docs/x: No such file or directory (exit code 2)"


def test_an_empty_session_is_passed_over_not_rejected(newcomer) -> None:  # noqa: F811
    """A session opened and closed: SpecStory's header and session comment, no turn (getspecstory's own)."""
    assert detect_format(EMPTY) == "specstory" and list(read_inputs([EMPTY])) == []
    code, out, err = run_cli("ingest", "--dry-run", str(EMPTY))
    assert code == 0 and "runs 0; rejected 0; passed over 1 session(s): no turn" in out + err, out + err


def test_a_walk_of_a_project_says_nothing_of_specstorys_own_files(caplog) -> None:
    """``.specstory/.project.json`` is SpecStory's bookkeeping, no folder to name: no hidden-folder note."""
    with caplog.at_level(logging.WARNING, logger="trajsearch.ingest.read"):
        assert [r.ok for r in read_inputs([CURSOR_2026.parents[2]])] == [True]
    assert "hidden folders not read" not in caplog.text, caplog.text


def test_the_agent_is_named_as_other_adapters_name_it(tmp_path: Path) -> None:
    run = only(_history(tmp_path / "ide.md", "Done.", agent="Cursor IDE"))
    assert run.metadata["agent"] == "Cursor"
    # the name the CLI gives Droid since 2026 (getspecstory's droidcli/provider.go at 210d6095)
    assert only(_history(tmp_path / "droid.md", "Done.", agent="Factory Droid CLI")).metadata["agent"] == "Droid"


@pytest.mark.parametrize("history, commands", [  # each rule on its own: the commands and their errors
    ("2025-04-28_16-22-backlog-task-inquiry.md", [  # a Bun program's failed ``git clone``, ending on its stack
        ("minsky tasks list --json", None),
        ("minsky session start --task #001", "error: unknown option '--task'"),
        ("minsky session start #001", "Error: --repo is required"),
        ("minsky session start #001 --repo minsky", "fatal: repository 'minsky' does not exist")]),
    ("2025-04-26_22-29-task-management-command-design.md", [  # a failed tally above macOS bash's ``host:dir user$``
        ('eval "$(/opt/homebrew/bin/brew shellenv)" && bun test', "error: expect(received).toBe(expected)"),
        ("bun test", None)]),
    ("2025-04-30_17-43-task-002-progress-and-updates.md", [  # an ENOENT's fields under its message, then the end
        ("minsky tasks status set '#002' IN-REVIEW", "Task with ID '#002' not found."),
        ("cd /Users/edobry/Projects/minsky && minsky tasks status set '#002' IN-REVIEW", None),
        ("cd /Users/edobry/.local/state/minsky/git/local/minsky/task#002 && git status", None)]),
], ids=["js-stack", "bash-prompt", "error-fields"])
def test_a_cursor_command_whose_failure_shows_inside_its_output_has_the_error(
        history: str, commands: list[tuple[str, str | None]]) -> None:
    """Real Cursor histories (edobry/minsky, April 2025) whose failed commands read as successes; the same commands
    succeeding later stay successes."""
    steps = only(FAILED_INSIDE / history).steps
    assert [(s.arguments["command"], s.error) for s in steps if s.action == "run_terminal_cmd"] == commands


#: Four frames of a stack: the error line above them is not among the output's last four lines.
_FRAMES = "".join(f"\n    at step{n} (/app/scripts/migrate.js:{n}0:11)" for n in range(4))


@pytest.mark.parametrize("output, error", [
    ("Error: connect ECONNREFUSED 127.0.0.1:5432" + _FRAMES,  # Node's plain Error, as console.error shows it
     "Error: connect ECONNREFUSED 127.0.0.1:5432"),
    ("Error [ERR_MODULE_NOT_FOUND]: Cannot find module '/app/x.js'" + _FRAMES,
     "Error [ERR_MODULE_NOT_FOUND]: Cannot find module '/app/x.js'"),
    ('error: column "x" already exists, skipping\nMigrated 12 rows\nTrace: migration done' + _FRAMES, None),
], ids=["plain-error", "coded-error", "trace-under-an-error-line"])
def test_an_output_ending_on_a_javascript_stack_is_told_by_the_stacks_own_head(
        tmp_path: Path, output: str, error: str | None) -> None:
    """Review LEFT30 1 and 2: Node's most common error line, ``Error: x``, named no error (only ``TypeError: x`` and
    the like did), and any error line among the 30 above the frames made a ``console.trace`` failed."""
    [step] = only(_history(tmp_path / "stack.md", _shell("node scripts/migrate.js", output))).steps
    assert step.error == error


def test_a_long_output_line_of_many_at_signs_is_read_and_the_prompt_after_it_still_dropped(tmp_path: Path) -> None:
    """A 200,000-character ``npm ls --parseable``-like line (``pkg0@1.0.0,pkg1@1.0.1,...``) above the failure and
    zsh's prompt: read, the failure its error (RT2 3: the prompt's search took 14 s on it). No time bound: the test
    below keeps the prompt's look linear by construction."""
    packages = ",".join(f"pkg{n}@1.0.{n}" for n in range(16_000))
    assert len(packages) > 200_000
    output = f"/app\n{packages}\nerror: missing peer dependency react@18\nedobry@linkslate app %"
    [step] = only(_history(tmp_path / "long.md", _shell("npm ls --parseable", output))).steps
    assert step.error == "error: missing peer dependency react@18"


def test_no_pattern_searches_a_whole_output_for_what_ends_it() -> None:
    """A pattern that must reach the text's end (``$``, ``\\Z``) but is not anchored at its start is tried at every
    position (every line, for one opening on ``\\n``) and runs on to the end from each: quadratic in a long line. The
    prompt an output ends on is its last line: split off and matched from its start (RT2 3)."""
    for name, pattern in vars(specstory).items():
        if isinstance(pattern, re.Pattern) and re.search(r"(?:(?<!\\)\$|\\Z)\)?$", pattern.pattern):
            assert pattern.pattern.startswith(("^", r"\A")), name


#: 2026 SpecStory CLI histories of the round-33 audit (fixtures/specstory/.aud33b/README.md).
AUD33 = Path(__file__).parent / "fixtures" / "specstory" / ".aud33b"


def test_a_local_command_the_session_opens_with_is_not_its_task() -> None:
    run = only(AUD33 / "claude-code-model" / ".specstory" / "history" / "2026-07-02_11-47-20Z-a-lesser-model-agent.md")
    assert run.task.startswith("A lesser model/agent than you prepared a design for @docs/CLOUD-RESUME.md")
    assert run.metadata.get("user_prompts") is None  # /model asked the agent nothing
    assert run.trajectory_id == "specstory.a6ac6860-6da6-475f-8e07-4dba0498cd72"
    assert run.steps[0].action == "Bash" and run.steps[0].arguments["command"].startswith("ls ~/source/SpecStory/")


def test_a_codex_custom_tools_input_is_its_arguments_not_its_result() -> None:
    run = only(AUD33 / "codex-exec" / ".specstory" / "history" / "2026-08-03_21-15-01Z-use-claude-commands-code.md")
    assert (run.metadata["agent"], run.model_id) == ("Codex CLI", "gpt-5.6-sol")
    calls = [s for s in run.steps if s.action == "exec"]
    assert len(calls) == 2 and all(s.observation is None for s in calls)
    assert calls[0].arguments["input"].startswith("const r = await tools.exec_command({cmd:\"sed -n '1,240p' .claude/")
    assert not calls[0].arguments["input"].endswith("...")


def test_a_generically_rendered_tools_input_list_is_its_arguments() -> None:
    run = only(AUD33 / "claude-code-skill" / ".specstory" / "history" / "2026-07-14_15-03-52Z.md")
    assert run.task == "OK, a coding agent worked this up. Please review the implementation."
    skill = run.steps[-1]
    assert (skill.action, skill.arguments, skill.observation) == ("Skill", {"skill": "code-review"}, None)


def test_an_early_save_of_local_commands_alone_is_passed_over_and_its_session_read_once(newcomer) -> None:  # noqa: F811
    """SpecStory saved the session under two names: once after ``/model`` alone, once with the request."""
    folder = AUD33 / "early-save"
    early = folder / ".specstory" / "history" / "2026-08-03_15-41-34Z.md"
    assert list(read_inputs([early])) == []
    run = only(folder)
    assert run.task.startswith("Take a look at issue #266") and run.steps[0].action == "Bash"
    code, out, err = run_cli("ingest", "--dry-run", str(folder))
    assert code == 0 and "passed over 1 session(s): local commands only" in out + err, out + err


#: 2026 SpecStory CLI histories of the round-33 audit's fixes (fixtures/specstory/.aud33fix/README.md).
AUD33FIX = Path(__file__).parent / "fixtures" / "specstory" / ".aud33fix"


def test_a_prompt_command_whose_pre_run_failed_is_still_the_request() -> None:
    """``/pr-review 157`` answered on ``<local-command-stderr>``, then ``proceed``: the agent reviews PR 157."""
    run = only(AUD33FIX / "failed-command" / ".specstory" / "history" / "2026-01-30_18-58-14Z-proceed.md")
    assert run.task == "/pr-review 157"
    assert run.metadata["user_prompts"] == ["proceed"]
    assert run.steps[-1].arguments["command"].startswith("gh pr view 157")


def test_a_session_whose_only_request_was_refused_is_a_run_not_local_commands() -> None:
    run = only(AUD33FIX / "refused-only" / ".specstory" / "history" / "2026-07-09_22-30-57Z.md")
    assert (run.task, run.steps) == ("/pr-review 106", [])


def test_a_local_command_answered_after_a_caveat_is_not_the_task() -> None:
    """``/clear``, a caveat, then its ``<local-command-stdout>``: the request is the next turn."""
    run = only(AUD33FIX / "clear-caveat" / ".specstory" / "history" / "2026-02-12_22-37-48Z.md")
    assert run.task.startswith("Take a look at /Users/sean/Source/SpecStory/compositions/outage-1/")
    assert run.metadata.get("user_prompts") is None


def _generic(fields: str, result: str = "") -> str:
    """A call of an MCP tool as the SpecStory CLI renders it generically (``**Input:**`` list, ``**Result:**``)."""
    return ('<tool-use data-tool-type="generic" data-tool-name="mcp__github__create_issue"><details>\n'
            "<summary>Tool use: **mcp__github__create_issue**</summary>\n\n"
            f"**Input:**\n\n{fields}\n{result}</details></tool-use>\n")


def test_a_generic_inputs_value_holding_a_list_with_inline_code_is_kept_whole(tmp_path: Path) -> None:
    """The CLI writes a value raw (``%v``): an issue body that is a Markdown list with inline code keeps its lines
    past the backquote that closes one of them."""
    fields = "- body: `Steps:\n- run `make`\n- then open the log; it fails`\n- title: `Build fails`\n"
    run = only(_history(tmp_path / "h.md", _generic(fields, "\n**Result:**\n\ncreated #12\n"), agent="Claude Code"))
    step = run.steps[0]
    assert step.arguments == {"body": "Steps:\n- run `make`\n- then open the log; it fails", "title": "Build fails"}
    assert step.observation == "created #12"


def test_a_generic_input_list_whose_values_never_close_reads_in_one_pass(tmp_path: Path) -> None:
    """Bug (review of AUDSS33, 5): a value's end was looked for ahead of every field, on to the list's end when none
    closed (a file cut mid-save, or made so): 8,000 such fields took 6 s, four times as many sixteen times as long.
    The whole file is read, so the input is not capped: 120,000 fields (1.5 MB) would take the quadratic rule some
    twenty minutes; the alarm of 300 s fails it and leaves the split at field starts (1 to 4 s, the whole file read)
    a margin of a hundred times on a loaded machine. Waits for nothing."""
    fields = "".join(f"- k{n}: `v{n}\n" for n in range(120_000))
    path = _history(tmp_path / "h.md", _generic(fields), agent="Claude Code")

    def too_slow(*_: object) -> None:
        raise TimeoutError("300 s reading a generic input list of unclosed values: quadratic")

    previous = signal.signal(signal.SIGALRM, too_slow)
    signal.alarm(300)
    try:
        run = only(path)
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)
    given = run.steps[0].arguments  # as JSON text, this large (the model's cap on a step's arguments)
    assert '"k7": "v7", "k8": "v8"' in (given if isinstance(given, str) else json.dumps(given))


def test_a_prompt_command_refused_then_retyped_is_the_retyped_one() -> None:
    """``/pr-review`` refused on ``<local-command-stderr>``, then ``/pr-review 150``: the retry is the request, the
    refused one no request at all (the rule the fix above keeps: this passes before it too)."""
    run = only(AUD33FIX / "retried-command" / ".specstory" / "history" / "2026-01-28_13-36-04Z.md")
    assert run.task == "/pr-review 150"
    assert "/pr-review" not in run.metadata["user_prompts"]

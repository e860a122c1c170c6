"""SpecStory's Markdown chat histories (``.specstory/history/*.md``), read from real files of three versions users
committed to GitHub (tests/fixtures/specstory/.specstory29/README.md): Cursor through the extension in April 2025,
Claude Code through the CLI in July 2025, Cursor and Claude Code with Markdown v2.1.0 in January 2026."""

from __future__ import annotations

import json
import logging
import shutil
from datetime import datetime, timezone
from pathlib import Path

from trajsearch.ingest.detect import detect_format
from trajsearch.ingest.read import read_inputs
from trajsearch.model import Outcome

from adapter_support import only
from cli_support import newcomer, run_cli, unnoted  # noqa: F401 (a fixture)

SPECSTORY = Path(__file__).parent / "fixtures" / "specstory" / ".specstory29"
CURSOR_2025 = SPECSTORY / "cursor-2025" / ".specstory" / "history" / "2025-04-29_20-13-session-start-error-for-task-008.md"
CLAUDE_2025 = SPECSTORY / "claude-code-2025" / ".specstory" / "history" / "2025-07-20_10-12-53Z-hello-claude.md"
CLAUDE_2026 = SPECSTORY / "claude-code-2026" / ".specstory" / "history" / "2026-01-16_16-48-38Z-the-code-in-specstory.md"
CURSOR_2026 = next((SPECSTORY / "cursor-2026" / ".specstory" / "history").glob("2026-01-03_14-51Z-*.md"))


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
    assert run.created_at == datetime(2025, 4, 29, 16, 13, 16, tzinfo=timezone.utc)
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


def test_a_claude_code_export_joins_each_result_to_its_tool_and_skips_local_commands() -> None:
    run = only(CLAUDE_2025)
    assert run.trajectory_id == "specstory.dcfb21cf-c131-4fe2-aac7-e71912408eeb"
    assert run.task.startswith("Hello Claude! We are in your \"big home folder\"")  # not /exit or /memory
    assert (run.metadata["agent"], run.model_id) == ("Claude Code", "claude-sonnet-4-20250514")
    bash = next(s for s in run.steps if s.action == "Bash")
    assert bash.arguments == {"command": 'find /home/skogix/skogai/.claude -name ".skogai" -type d',
                              "description": "Find .skogai directory in workspace"}
    assert bash.observation.startswith("/home/skogix/skogai/.claude/.skogai")
    read = next(s for s in run.steps if s.action == "Read")
    assert read.arguments == {"target": "/home/skogix/skogai/.skogai/update"} and "realpath" in read.observation
    write = next(s for s in run.steps if s.action == "Write")
    assert "live context updating" in write.arguments["content"] and write.observation.startswith("File created")
    assert run.steps[-1].action == "respond" and run.steps[-1].thought.startswith("Haha!")
    assert "No response requested." not in json.dumps([s.arguments for s in run.steps])  # Claude Code's filler


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
    assert (run.metadata["agent"], run.model_id) == ("Droid CLI", "glm-5")
    [call] = run.steps
    assert call.action == "deploy_site" and call.error == "PermissionDenied: token lacks deploy scope"


def test_tool_blocks_with_no_rule_between_are_steps_each(tmp_path: Path) -> None:
    """Cursor's histories of late 2025 put one ``<tool-use>`` block right under another, and under the prose that leads
    to them, with no ``---``: the blocks below are as RaincloudTheDragon/BasedPlayblast's
    ``.specstory/history/2025-12-02_23-09Z-add-audio-support-for-next-major.md`` (commit 2b4e0c2e) has them."""
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
        p.name for p in (CURSOR_2025, CLAUDE_2025, CLAUDE_2026, CURSOR_2026))  # not .what-is-this.md, not NOTES.md


def test_markdown_with_no_turn_is_refused_saying_so(tmp_path: Path) -> None:
    notes = tmp_path / "notes.md"
    notes.write_text("<!-- Generated by SpecStory -->\n\n# Empty\n")
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


def test_a_walk_of_a_project_says_nothing_of_specstorys_own_files(caplog) -> None:
    """``.specstory/.project.json`` is SpecStory's bookkeeping, no folder to name: no hidden-folder note."""
    with caplog.at_level(logging.WARNING, logger="trajsearch.ingest.read"):
        assert [r.ok for r in read_inputs([CURSOR_2026.parents[2]])] == [True]
    assert "hidden folders not read" not in caplog.text, caplog.text

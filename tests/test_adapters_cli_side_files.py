"""Agent-CLI files found by probe H (round p39) on real dotfiles and session backups: side files passed over,
look-alike outputs refused by name, snapshots, error lines (each fixture's origin is in its folder's SOURCE.md)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from trajsearch.ingest.detect import SideFile
from trajsearch.ingest.read import detect_format, read_dump

FIXTURES = Path(__file__).parent / "fixtures"


def test_codex_history_of_prompts_is_passed_over() -> None:
    """``~/.codex/history.jsonl`` (one ``{"session_id", "ts", "text"}`` line per prompt typed; real, JaydenXsoe/ocodex)
    was rejected as "unrecognised dump format"; like ``session_index.jsonl`` beside it, it holds no run."""
    history = FIXTURES / "codex-cli" / ".real" / "ocodex" / "history.jsonl"
    with pytest.raises(SideFile, match=r"no run in this file: Codex's history of the prompts typed"):
        detect_format(history)
    assert list(read_dump(history.parent, tenant="acme")) == []


ENTIRE = FIXTURES / "claude-code" / ".real" / "entire-checkpoints"
ENTIRE_SESSION = "claude-code.4ab5b6c5-4396-4172-9671-a8aa5fb4bb58"


def test_one_session_saved_at_several_times_is_one_run_the_fullest_copy() -> None:
    """Entire's checkpoints (real, MoonshotAI/kimi-cli's ``entire/checkpoints/v1``) save a Claude Code session's
    transcript up to each checkpoint: growing copies of one file. They became ``<id>``, ``<id>+<hash>``, ... with the
    bare id on whichever copy came first (here the shortest). Now each copy that continues the one kept takes its
    id, and an earlier copy met after a later one gives way to it: one run, the fullest."""
    read = [p.trajectory for p in read_dump(ENTIRE, tenant="acme")]
    assert [r.trajectory_id for r in read] == [ENTIRE_SESSION] * 3
    assert [len(r.steps) for r in read] == [2, 4, 4]  # 63/… (2 steps), 6f/… (4: replaces it), b0/… (3: gives way)
    assert "original_trajectory_id" not in read[-1].metadata


def test_snapshots_of_one_session_are_indexed_once(tmp_path: Path) -> None:
    from trajsearch.embed import HashingEmbedder
    from trajsearch.ingest.batch import IngestJob, run_ingest
    from trajsearch.search import TrajSearch

    with TrajSearch.open(str(tmp_path / "m.db"), traces=str(tmp_path / "t"), embedder=HashingEmbedder()) as ts:
        report = run_ingest(ts, IngestJob(paths=[ENTIRE], state_dir=tmp_path / "state")).to_dict()
        assert report["read"] == 3 == report["ingested"] + report["unchanged"] + report["replaced"]
        assert report["ingested"] == 1 and report["renamed"] == []
        assert ts.stats(tenant="default")["trajectories"] == 1
        assert len(ts.get_trace(ts.run(ENTIRE_SESSION, tenant="default").trace_uri, tenant="default").steps) == 4


CCARCH = FIXTURES / "claude-code" / ".real" / "ccarch" / "eb7e8502-d52b-4b66-a1a1-f7790280b67d.jsonl"


def test_a_script_that_exits_1_with_its_output_redirected_failed(tmp_path: Path) -> None:
    """Claude Code 2.1.145 (real, a331468564/claude-codex-chat-archives): a Bash call ``python -c "..." > file 2>&1``
    failed (``is_error``, "Exit code 1", nothing printed: its output went to the file). The rule "exit 1 with no
    output is grep's no match" cleared its error; it now holds for commands that answer "no" so (grep, rg, which,
    test, diff ...) only."""
    [run] = [p.trajectory for p in read_dump(CCARCH, tenant="acme")]
    [step] = run.steps
    assert step.arguments["command"].startswith('python -c "') and "2>&1" in step.arguments["command"]
    assert step.error == "exit code 1"

    records = [json.loads(line) for line in CCARCH.read_text().splitlines()]
    records[1]["message"]["content"][0]["input"]["command"] = "grep -rn 表单优化 docs/logs"  # a search, found nothing
    (tmp_path / CCARCH.name).write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records))
    [run] = [p.trajectory for p in read_dump(tmp_path / CCARCH.name, tenant="acme")]
    assert run.steps[0].arguments["command"] == "grep -rn 表单优化 docs/logs" and run.steps[0].error is None


def test_a_wrapped_error_line_in_the_tools_language_is_the_error() -> None:
    """Codex 0.142.5 Desktop (real, ADIOCLASSMATE/dotfile): a CLI's error in Chinese that the console wrapped,
    ``错误: HTTPSConnectionPool(...): Read timed out. (read`` / ``timeout=60.0)``. The error was the tail fragment
    "timeout=60.0) (exit code 1)": ``错误:`` was not known as an error line, and the last line was taken. Now the line
    that says what failed is the error, with its wrapped end."""
    rollout = FIXTURES / "codex-cli" / ".real" / "adio" / \
        "rollout-2026-07-03T15-12-18-019f26d2-378f-7123-aaab-925df3e2bf7b.jsonl"
    [run] = [p.trajectory for p in read_dump(rollout, tenant="acme")]
    [step] = run.steps
    assert step.action == "write_stdin" and step.arguments["session_id"] == 70507
    assert step.error == ("错误: HTTPSConnectionPool(host='qz.sii.edu.cn', port=443): Read timed out. "
                          "(read timeout=60.0) (exit code 1)")


def test_claude_code_process_entry_of_a_session_is_passed_over() -> None:
    """Claude Code 2.1.145's ``~/.claude/sessions/<pid>.json`` (real, a331468564/claude-codex-chat-archives: ``{"pid",
    "sessionId", "cwd", "startedAt", "version", "kind", "entrypoint", ...}``) was rejected as "unrecognised dump
    format"; it registers a running session's process and holds no run: passed over, saying what it is."""
    entry = FIXTURES / "claude-code" / ".real" / "ccarch" / "sessions" / "21336.json"
    with pytest.raises(SideFile, match=r"no run in this file: Claude Code's record of the process running session "
                                       r"e96ef0a0-b0d9-4244-bc5c-2ddb2aecf2a2"):
        detect_format(entry)
    assert list(read_dump(entry.parent, tenant="acme")) == []


def test_qwen_code_headless_output_is_not_read_as_claude_code() -> None:
    """Qwen Code 0.12.5's ``--output-format json`` array (real, copied whole from an agent-run report found by
    ``find_string``) copies Claude Code's stream-json shape; it was read as Claude Code and refused with advice for
    ``claude -p`` and a ``~/.claude/projects`` path that does not exist. Its ``init`` record names Qwen Code: it is
    read as Qwen Code's, and forced as Claude Code's the refusal names the format that reads it."""
    output = FIXTURES / "claude-code" / ".real" / "not-claude" / "qwen-0.12.5-output-format-json.json"
    assert detect_format(output) == "qwen-code"
    [forced] = list(read_dump(output, fmt="claude-code", tenant="acme"))
    assert forced.error.startswith("this is Qwen Code 0.12.5's headless output") and "claude -p" not in forced.error
    assert "--format qwen-code" in forced.error


def test_reasoning_recorded_after_its_call_is_that_calls_thought() -> None:
    """The ocodex fork of Codex (real, JaydenXsoe/ocodex, 2025-08, chat-completions path) records a response's
    reasoning when the response completes, after its call has run: ``call, output, reasoning``. Each thought went to
    the next step: the reasoning that chose a search sat on the following ``shell`` call, and so on to the answer.
    Told per file (reasoning items without ids that never open a turn's calls), each call now has its own."""
    rollout = FIXTURES / "codex-cli" / ".real" / "ocodex-sessions" / \
        "rollout-2025-08-31T12-14-27-18a59085-ee11-4ef3-b460-f942642861b3.jsonl"
    [run] = [p.trajectory for p in read_dump(rollout, tenant="acme")]
    assert [s.action for s in run.steps] == ["search__search.query", "shell", "search__search.query", "respond"]
    first, shell, second, answer = run.steps
    assert first.thought.startswith('User asks: "what is the state of USA today economically and politically?"')
    assert first.thought.endswith("We need to search web. Use websearch tool.")
    assert shell.thought.startswith('The user asks: "what is the state of USA today')
    assert second.thought.startswith("We must answer question about current state of USA")
    assert answer.thought is None and answer.arguments["content"].startswith("**Current State of the United States")


@pytest.mark.parametrize("command", [
    "pkill -f 'python server.py'",  # no process matched
    "lsof -ti:3000 | xargs kill -9",  # the port is free
    "git merge-base --is-ancestor HEAD origin/main",  # not an ancestor
    "git rev-parse --verify --quiet refs/heads/feature",  # no such ref
    "git show-ref --verify --quiet refs/heads/x",
    "jq -e '.ok' r.json > /dev/null",  # false
    "systemctl is-active --quiet nginx",  # not running
])
def test_a_command_that_answers_no_with_exit_1_and_no_output_did_not_fail(tmp_path: Path, command: str) -> None:
    """Regression (review 4, F3): everyday agent commands answer "no" with exit 1 and print nothing (freeing a port,
    killing a dev server, asking git about a ref), as grep does; they got the step error "exit code 1". The real
    Claude Code call above (ccarch), its command replaced by such a command."""
    records = [json.loads(line) for line in CCARCH.read_text().splitlines()]
    records[1]["message"]["content"][0]["input"]["command"] = command
    (tmp_path / CCARCH.name).write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records))
    [run] = [p.trajectory for p in read_dump(tmp_path / CCARCH.name, tenant="acme")]
    assert run.steps[0].arguments["command"] == command and run.steps[0].error is None


TAU_GROK3 = FIXTURES / "tau-bench" / ".real" / "tool-calling-grok-3-0.0_range_0--1_user-grok-3-llm_0921131646.json"


def test_two_versions_of_a_file_of_runs_read_the_first_again_once(tmp_path: Path, monkeypatch) -> None:
    """Regression (review 4, F1): every run whose id was kept with other content read the kept copy's whole file
    again to see whether one continues the other, so two versions of a file of N runs (a tau-bench result file of
    one name in two folders, its rewards changed: the real grok-3 excerpt, see tau-bench/.real/SOURCE.md) read it
    N more times: quadratic. Its runs are read again once now, and each run of the second version is still a run of
    its own, renamed."""
    from trajsearch.ingest import read

    records = json.loads(TAU_GROK3.read_text())
    (tmp_path / "a").mkdir(), (tmp_path / "b").mkdir()
    (tmp_path / "a" / TAU_GROK3.name).write_text(json.dumps(records))
    (tmp_path / "b" / TAU_GROK3.name).write_text(json.dumps([{**r, "reward": 1.0 - r["reward"]} for r in records]))
    reads: list[str] = []
    read_unit = read.read_unit

    def counted(unit, *args, **kwargs):
        reads.append(Path(unit.key).parent.name)
        return read_unit(unit, *args, **kwargs)

    monkeypatch.setattr(read, "read_unit", counted)
    runs = [p.trajectory for p in read_dump(tmp_path, tenant="acme")]
    assert len(runs) == 6 and sum("original_trajectory_id" in r.metadata for r in runs) == 3
    assert reads.count("a") <= 2 and reads.count("b") == 1  # read in the job, and again once at most

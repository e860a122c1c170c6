"""Factory's Droid CLI sessions (``~/.factory/sessions/<project>/<id>.jsonl``): before round 35 no adapter read them
(an unrecognised dump). Fixtures: tests/fixtures/droid/.newag35 (files the released ``droid exec`` 0.225.2 wrote, and
a hand-built sub-agent pair; README.md there says how)."""

from __future__ import annotations

import json
import shutil
from datetime import datetime, timezone
from pathlib import Path
from typing import Callable

from trajsearch.ingest.adapters._agent_cli import CONTEXT_CAUSE, REFUSAL_CAUSE
from trajsearch.ingest.batch import IngestJob, run_ingest
from trajsearch.ingest.detect import detect_format
from trajsearch.ingest.read import read_inputs
from trajsearch.model import Outcome

from cli_support import newcomer, run_cli, unnoted  # noqa: F401 - the fixture
from test_ingest_pipeline import open_ts

DROID = Path(__file__).parent / "fixtures" / "droid" / ".newag35"
SESSIONS = DROID / "sessions"
PROJECT = SESSIONS / "-tmp-p68-wt-newag-scratch-fake-work"
WORKED, FAILED = "d146b1c4-e94a-482f-a7fe-45e6e4f02e7d", "e6da8c9f-d718-4fd9-a05f-ef0cf03caa37"
CLAUDE_CODE = Path(__file__).parent / "fixtures" / "claude-code" / ".harb30" / "resume-2.1.332" / "test" / \
    "b3045d82-78f2-4c53-9f41-8b2d32622c6e.jsonl"
PARENT, WORKER = "0b34cbcb-108c-4800-b68e-af7093c8cae9", "30b34828-e462-45c9-b63c-bfefb6bd178f"


def _runs(path: Path) -> dict:
    results = list(read_inputs([path]))
    assert results and all(r.ok for r in results), [r.error for r in results if not r.ok]
    return {r.trajectory.trajectory_id: r.trajectory for r in results}


def test_a_session_droid_wrote_is_a_run_of_its_prompt_calls_and_their_errors() -> None:
    session = PROJECT / f"{WORKED}.jsonl"
    assert detect_format(session) == "droid"
    run = _runs(session)[f"droid.{WORKED}"]
    assert run.task == "List the files here, then read missing.txt"  # not the llm_only context Droid adds first
    assert run.model_id == "custom:Fake-0" and run.outcome == Outcome.unknown
    assert [s.action for s in run.steps] == ["Execute", "Read", "Execute", "respond"]
    listing, read, false, answer = run.steps
    assert listing.arguments["command"] == "ls /tmp/p68/wt-newag-scratch/fake/work" and listing.error is None
    assert listing.observation.startswith("hello.txt")
    assert read.error.startswith("Error: Error reading file: ENOENT: no such file or directory")
    assert false.error == "exit code 1"
    assert answer.arguments == {"content": "The folder holds hello.txt; missing.txt does not exist."}
    assert run.metadata["session_id"] == WORKED and run.metadata["turn_outcome"] == "completed"
    assert run.metadata["total_tokens"] == 440  # the settings Droid keeps beside the session
    assert "user_prompts" not in run.metadata and "is_subagent" not in run.metadata


def test_a_turn_the_provider_failed_is_an_infra_error_and_its_notice_no_prompt() -> None:
    run = _runs(PROJECT / f"{FAILED}.jsonl")[f"droid.{FAILED}"]
    assert run.task == "Count the lines saying nothing in hello.txt"
    assert run.outcome == Outcome.infra_error and run.metadata["turn_outcome"] == "model_authentication_failed"
    assert run.failure.error.startswith("BYOK Error: 401 Incorrect API key provided")
    assert "user_prompts" not in run.metadata  # the user_only notice is Droid's, not the user's
    assert [s.action for s in run.steps] == ["Execute"]


def test_a_walk_of_the_home_folder_reads_the_sessions_and_passes_their_settings_over(tmp_path: Path,
                                                                                       newcomer) -> None:
    home = tmp_path / "user"
    shutil.copytree(SESSIONS, home / ".factory" / "sessions")
    assert set(_runs(home)) == {f"droid.{WORKED}", f"droid.{FAILED}"}
    code, out, err = run_cli("ingest", str(home), "--dry-run")
    assert code == 0, (out, err)
    assert "rejected 0" in out and "unrecognised" not in out + "".join(unnoted(err))


def test_a_sub_agent_session_is_its_own_run_linked_to_the_call_that_spawned_it() -> None:
    runs = _runs(DROID / "subagent")
    parent, worker = runs[f"droid.{PARENT}"], runs[f"droid.{WORKER}"]
    assert "is_subagent" not in parent.metadata
    assert parent.steps[0].action == "Task"
    assert parent.steps[0].observation == "Created docs/red.md and committed it."
    assert worker.metadata["is_subagent"] is True and worker.metadata["parent_session_id"] == PARENT
    assert worker.metadata["parent_call_id"] == "toolu_01SC9sRHSef1vtNFtMrX9w6T"
    assert worker.metadata["session_name"] == "worker: Create red.md and commit"
    assert worker.task.startswith("# Task Tool Invocation\nSubagent type: worker")
    assert [s.action for s in worker.steps] == ["Create", "Execute", "respond"]
    assert all(s.error is None for s in worker.steps)


def test_droid_execs_own_output_is_refused_as_droids_naming_the_session_file() -> None:
    """``droid exec -o stream-json`` opens as Claude Code's stream does (main read it as Claude Code's and named
    ~/.claude/projects), ``-o json`` as a headless result (main: Qwen Code's)."""
    for name, output, session in (("stream.jsonl", "stream-json", "088b673f-0b3c-4a31-b41a-901eb7989c85"),
                                  ("result.json", "json", "697983db-8093-4f40-8d76-3cb382f6d0f6")):
        path = DROID / "exec" / name
        assert detect_format(path) == "droid"
        [result] = read_inputs([path])
        assert not result.ok
        assert f"the output of `droid exec --output-format {output}`, not Droid's session" in result.error
        assert f"~/.factory/sessions/<project>/{session}.jsonl" in result.error


def _rewritten(tmp_path: Path, session: str, edit: Callable[[list[dict]], None]) -> Path:
    """A copy in ``tmp_path`` of the real ``session`` with its records as ``edit`` changes them in place
    (hand-built from Droid's own file)."""
    records = [json.loads(line) for line in (PROJECT / f"{session}.jsonl").read_text(encoding="utf-8").splitlines()]
    edit(records)
    path = tmp_path / f"{session}.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


def _messages(**lines: dict) -> Callable[[list[dict]], None]:
    """An edit replacing the ``message`` of the lines named ``l<index>``: shapes Droid's transcript schema allows,
    ``content`` a string or an array of blocks and strings, that no real file here shows."""
    def edit(records: list[dict]) -> None:
        for key, message in lines.items():
            records[int(key[1:])]["message"] = message
    return edit


def test_a_message_whose_content_is_a_string_is_read_as_its_text(tmp_path: Path) -> None:
    """Droid's schema has ``content`` a string or an array (its own first-prompt reader takes both): main refused a
    session whose prompt was a string ("no user prompt") and dropped an assistant's string answer."""
    path = _rewritten(tmp_path, WORKED, _messages(l2={"role": "user", "content": "Fix the login bug"},
                                                  l9={"role": "assistant", "content": "Done: the login works."}))
    run = _runs(path)[f"droid.{WORKED}"]
    assert run.task == "Fix the login bug"
    assert run.steps[-1].action == "respond" and run.steps[-1].arguments == {"content": "Done: the login works."}
    mixed = _rewritten(tmp_path, WORKED, _messages(l2={"role": "user", "content": [
        "Plain array text", {"type": "text", "text": "more"},
        {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "iVBORw0KGgo="}}]}))
    task = _runs(mixed)[f"droid.{WORKED}"].task
    assert task.startswith("Plain array text\nmore\n[image")  # the image noted, not dropped


def test_a_message_droid_hides_from_its_prompt_list_is_no_prompt(tmp_path: Path) -> None:
    """Droid's prompt picker passes over a hook's message and one hidden from the user's views (hand-built before
    the real prompt of d146b1c4): main took it for the task."""
    prompt = {"role": "user", "content": [{"type": "text", "text": "List the files here, then read missing.txt"}]}
    for hidden in ({"hookEventName": "SessionStart"}, {"hiddenFromUserViews": True}, {"isUserVisible": False}):
        def edit(records: list[dict], hidden: dict = hidden) -> None:
            records[2]["message"] = {"role": "user", "content": [{"type": "text", "text": "injected"}], **hidden}
            records.insert(3, {"type": "message", "id": "p", "message": prompt})
        run = _runs(_rewritten(tmp_path, WORKED, edit))[f"droid.{WORKED}"]
        assert run.task == "List the files here, then read missing.txt", hidden
        assert "user_prompts" not in run.metadata


def test_a_session_opening_with_records_of_no_time_is_dated_by_its_first_timed_one(tmp_path: Path) -> None:
    """``todo_state`` / ``compaction_state`` carry no timestamp (hand-built ahead of d146b1c4's messages): main looked
    at the two records after session_start only and dated the run by the ingest instead."""
    def edit(records: list[dict]) -> None:
        records[1:1] = [{"type": "todo_state", "id": "t", "todos": []},
                        {"type": "compaction_state", "id": "c", "summaryText": "earlier work"}]
    run = _runs(_rewritten(tmp_path, WORKED, edit))[f"droid.{WORKED}"]
    assert run.created_at == datetime(2026, 12, 7, 20, 6, 16, 748000, tzinfo=timezone.utc)


def _ingest_twice(tmp_path: Path, session: Path, sidecar: Path) -> int:
    """The units a second ingest of ``session`` skips as done, its settings sidecar rewritten in between."""
    with open_ts(tmp_path, "store") as ts:
        run_ingest(ts, IngestJob([session], tenant="t", state_dir=tmp_path / "state"))
        sidecar.write_text(json.dumps({"model": "rewritten"}), encoding="utf-8")
        return run_ingest(ts, IngestJob([session], tenant="t", state_dir=tmp_path / "state")).skipped_units


def test_a_settings_file_is_droids_only_beside_a_session_droid_wrote(tmp_path: Path) -> None:
    """A Claude Code session copied to ``s.jsonl`` with an ``s.settings.json`` beside it (hand-built: no tool known
    writes that layout): on the branch before this fix, by name alone, the settings file joined the session's
    checkpoint fingerprint (rewritten, the session was read again) and was named Droid's."""
    other = tmp_path / "other"
    other.mkdir()
    session, sidecar = other / "s.jsonl", other / "s.settings.json"
    shutil.copy(CLAUDE_CODE, session)
    sidecar.write_text("{}", encoding="utf-8")
    assert _ingest_twice(tmp_path / "a", session, sidecar) == 1  # unchanged: skipped
    [result] = read_inputs([sidecar])
    assert not result.ok and "Droid" not in result.error
    droid = tmp_path / "droid"
    shutil.copytree(PROJECT, droid)
    assert _ingest_twice(tmp_path / "b", droid / f"{WORKED}.jsonl", droid / f"{WORKED}.settings.json") == 0


def test_droids_own_context_and_moderation_notices_are_the_agents_failure(tmp_path: Path) -> None:
    """The notices bin/droid 0.225.2 holds for its hosted models' context overflow and moderation block (verbatim;
    hand-put in e6da8c9f's place of its 401 notice, the turn then ``model_request_rejected``, as Droid ends both): main
    read either as the provider's failure, an infra_error."""
    for notice, cause in (("Context limit exceeded. Please remove some context and try again.", CONTEXT_CAUSE),
                          ("Request failed due to triggering the model provider's content moderation policy. Please "
                           "modify your message and try again.", REFUSAL_CAUSE)):
        def edit(records: list[dict], notice: str = notice) -> None:
            records[5]["message"]["content"] = [{"type": "text", "text": notice}]
            records[6]["reason"] = "model_request_rejected"
        run = _runs(_rewritten(tmp_path, FAILED, edit))[f"droid.{FAILED}"]
        assert run.outcome == Outcome.failure and run.failure.error == notice
        assert run.failure.cause == cause


def test_a_settings_file_nested_too_deep_is_passed_over_and_the_session_read(tmp_path: Path) -> None:
    """A session beside a ``<id>.settings.json`` of ``[`` 100000 times (hand-built: a runaway writer's, or any file
    put there): main parsed it with bare ``json.loads`` and lost the run ("cannot convert droid record:
    RecursionError"). It is read as beside a settings file that is no JSON: without its settings (review
    final-B35, 1)."""
    shutil.copy(PROJECT / f"{WORKED}.jsonl", tmp_path / f"{WORKED}.jsonl")
    (tmp_path / f"{WORKED}.settings.json").write_text("[" * 100_000, encoding="utf-8")
    run = _runs(tmp_path / f"{WORKED}.jsonl")[f"droid.{WORKED}"]
    assert run.model_id == "custom:Fake-0"  # its messages' own
    assert "total_tokens" not in run.metadata  # the settings' token usage: not read

"""Round 30 (COPILOT2): the shapes of goose and GitHub Copilot CLI left unread before. goose: `goose session export
--format yaml` (read as the JSON export), `--format markdown` (refused, naming the JSON export), `goose run
--output-format json` (a run) and `stream-json` (refused without a prompt, naming the session). Copilot CLI: its
headless `-p --output-format json` output (a run; refused without a prompt, naming the session's log), the CLI's
injected `user.message`s (no prompts), `⚠️ Warning` entries of /share exports and `session.warning` events
(`metadata.session_warnings`), and the sessions kept before the event logs (`history-session-state`).
Fixtures: tests/fixtures/goose/.copilot2-30 and tests/fixtures/copilot/.copilot2-30 (README.md there: sources)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import yaml

from trajsearch.actions import ran
from trajsearch.ingest.detect import detect_format
from trajsearch.model import Outcome

from adapter_support import only
from cli_support import newcomer, run_cli  # noqa: F401 - the fixture

FIXTURES = Path(__file__).parent / "fixtures"
GOOSE = FIXTURES / "goose" / ".copilot2-30"
EXPORT = FIXTURES / "goose" / ".goose29" / "20260301_1.json"
COPILOT = FIXTURES / "copilot" / ".copilot2-30"
HEADLESS = COPILOT / "session.jsonl"
HISTORY = COPILOT / "session_a4a1f3c2-5b0e-4f1e-9d37-2f6f0c8e7b15_1759553607577.json"
HARBOR = FIXTURES / "atif" / ".real" / "harbor-0.26-cursor-copilot"
POLICY = ("Third-party MCP servers are disabled by your organization's Copilot policy. Only built-in servers are "
          "available.")


def _dry_run(path: Path) -> str:
    return _dry_run_all(path)


def _dry_run_all(*paths: Path) -> str:
    code, out, err = run_cli("ingest", *map(str, paths), "--dry-run")
    return " ".join((out + err).split())


def test_gooses_yaml_export_is_read_as_the_same_run_as_its_json_export() -> None:
    """serde_yaml's document of the session: its id left plain (``id: 20260301_1``, which YAML 1.1 reads as a
    number), its times too; the same run, the same id, as the JSON export."""
    yaml_path = GOOSE / "20260301_1.yaml"
    assert detect_format(yaml_path) == "goose"
    assert only(yaml_path).model_dump(mode="json") == only(EXPORT).model_dump(mode="json")
    assert only(yaml_path).trajectory_id.startswith("goose.20260301_1.")


def test_gooses_markdown_export_is_refused_naming_the_json_export(newcomer) -> None:
    said = _dry_run(GOOSE / "20260301_1.md")
    assert "goose's Markdown export" in said and "goose session export --session-id <id> --format json" in said, said


def test_goose_runs_json_output_is_a_run_with_its_prompt_and_steps() -> None:
    """``goose run --output-format json``: the conversation and ``metadata`` ({total_tokens, status}); no session
    id, so the run is named by its file."""
    assert detect_format(GOOSE / "goose-run-output.json") == "goose"
    run, export = only(GOOSE / "goose-run-output.json"), only(EXPORT)
    assert run.trajectory_id == f"goose.goose-run-output.{export.trajectory_id.rsplit('.', 1)[1]}"
    assert run.task == export.task and [s.action for s in run.steps] == [s.action for s in export.steps]
    assert run.metadata["total_tokens"] == 15230 and run.model_id is None


def test_a_goose_stream_without_its_prompt_is_refused_naming_the_session(newcomer) -> None:
    """goose 1.50's stream-json of a run the provider refused: no prompt in it (the real frames)."""
    said = _dry_run(GOOSE / "goose-run-stream.jsonl")
    assert "runs 0; rejected 1" in said and "records no prompt" in said, said
    assert "goose session export --session-id <id> --format json" in said, said


def test_copilots_headless_output_is_a_run_of_its_own_linked_to_the_session() -> None:
    """A real ``copilot -p ... --output-format json`` output (Copilot CLI 1.0.x): no ``session.start``; the prompt
    echoed; the ``result`` line's session id names the run, apart from the session's log."""
    assert detect_format(HEADLESS) == "copilot-cli"
    run = only(HEADLESS)
    assert run.trajectory_id == "copilot-cli-headless.1a42cf83-dd65-4efa-b294-5360414482eb"
    assert run.metadata["copilot_session_id"] == "1a42cf83-dd65-4efa-b294-5360414482eb"
    assert run.task.startswith("Read and follow only this local skill file")
    assert run.model_id == "gpt-5-mini" and run.metadata["exit_code"] == 0 and run.metadata["headless"] == "json"
    assert [s.action for s in run.steps] == ["report_intent", "create", "create", "respond"]
    assert run.metadata["session_warnings"] == [POLICY]
    assert run.created_at.isoformat().startswith("2026-06-18T22:37:18")


def test_copilots_headless_output_without_its_prompt_is_refused_naming_the_log(newcomer) -> None:
    """The lines a run stopped at startup writes (an organization's policy refusal: two lines, exit 1)."""
    said = _dry_run(COPILOT / "no-prompt.jsonl")
    assert "runs 0; rejected 1" in said and "without its prompt" in said, said
    assert "~/.copilot/session-state/<session id>/events.jsonl" in said, said


def test_a_user_message_the_cli_wrote_itself_is_no_prompt(tmp_path: Path) -> None:
    """A skill's context the CLI injects (``source: skill-<name>``) after the prompt is not a later prompt."""
    events = [json.loads(line) for line in HEADLESS.read_text().splitlines()]
    at = next(n for n, e in enumerate(events) if e["type"] == "user.message")
    injected = {**events[at], "id": "injected", "data": {"content": "<skill-context name=\"x\">...</skill-context>",
                                                         "source": "skill-x"}}
    path = tmp_path / "session.jsonl"
    path.write_text("".join(json.dumps(e) + "\n" for e in [*events[:at + 1], injected, *events[at + 1:]]))
    assert "user_prompts" not in only(path).metadata


@pytest.mark.parametrize("source", ["command", "immediate-prompt", "user"])
def test_a_user_message_from_the_user_by_any_other_source_is_a_prompt(tmp_path: Path, source: str) -> None:
    """A slash command, words typed during a turn (the SDK's ``command``, ``immediate-prompt``): the user's, so the
    prompt of a run whose first message it is (review r30 finding 3: such a run was refused as never prompted)."""
    events = [json.loads(line) for line in HEADLESS.read_text().splitlines()]
    for event in events:
        if event["type"] == "user.message":
            event["data"]["source"] = source
    path = tmp_path / "session.jsonl"
    path.write_text("".join(json.dumps(e) + "\n" for e in events))
    assert only(path).task == only(HEADLESS).task


def test_a_share_exports_warning_entries_are_the_sessions_warnings() -> None:
    """The /share export of the same real run: its ``⚠️ Warning`` entry, as the headless output's warning event."""
    assert detect_format(COPILOT / "transcript.md") == "copilot-cli-share"
    run = only(COPILOT / "transcript.md")
    assert run.metadata["session_warnings"] == [POLICY]
    assert run.metadata["copilot_session_id"] == only(HEADLESS).metadata["copilot_session_id"]


def test_a_session_kept_before_the_event_logs_is_read_from_its_timeline() -> None:
    """``~/.copilot/history-session-state/session_<id>_<ms>.json`` (before 0.0.342): the timeline's real entries
    (a cancellation, a call the user rejected), the session's own fields."""
    assert detect_format(HISTORY) == "copilot-cli"
    run = only(HISTORY)
    assert run.trajectory_id == "copilot-cli-history.a4a1f3c2-5b0e-4f1e-9d37-2f6f0c8e7b15"
    assert run.model_id == "claude-sonnet-4.5" and run.created_at.isoformat() == "2025-10-04T04:53:27.577000+00:00"
    assert run.task.startswith("In the copilot message display, it has a different format")
    assert run.metadata["user_prompts"][0].startswith("The copilot session files are in ~/.copilot")
    assert run.metadata["aborted"] == 1 and run.outcome == Outcome.unknown
    assert [s.action for s in run.steps] == ["str_replace_editor", "bash", "str_replace_editor", "bash", "bash",
                                             "bash", "bash"]
    view, *_, rejected = run.steps
    assert view.arguments == {"command": "view", "path": "/Users/cliftonc/work/guideai"} and view.error is None
    assert view.thought.startswith("I'll investigate the current implementation")  # the text before the calls
    # a call the CLI did not run (round 31: its text was the error of a call run, which ``actions.ran`` counted)
    assert rejected.error == ("not run: The tool call required approval from the user, but the user rejected it or an "
                              "earlier tool call.") and rejected.observation is None and not ran(rejected)


@pytest.mark.parametrize("code, message, error", [
    ("denied", "Permission denied and could not request permission from user",
     "not run: Permission denied and could not request permission from user"),
    ("rejected", None, "not run: the user rejected the call"),
])
def test_a_call_the_cli_did_not_run_is_not_run_in_a_log_too(tmp_path: Path, code: str, message: str | None,
                                                            error: str) -> None:
    """A log writes the result of a call the permission check stopped as ``success: false`` with ``error.code``
    ``denied`` (a rule, or no one to ask: ``-p``) or ``rejected`` (the user's no), as 0.0.343's ``index.js`` makes
    the event of a timeline's result: not run, as every adapter reads a call its harness did not run."""
    events = [json.loads(line) for line in HEADLESS.read_text().splitlines()]
    done = next(e for e in events if e["type"] == "tool.execution_complete" and "Created file" in json.dumps(e))
    done["data"] = {**done["data"], "success": False, "result": None,
                    "error": {"code": code, **({"message": message} if message else {})}}
    path = tmp_path / "session.jsonl"
    path.write_text("".join(json.dumps(e) + "\n" for e in events))
    created = only(path).steps[1]
    assert (created.action, created.error, created.observation, ran(created)) == ("create", error, None, False)


@pytest.mark.parametrize("code", [["rejected"], {"type": "rejected"}])
def test_a_code_that_is_no_string_is_a_plain_error_not_the_runs_loss(tmp_path: Path, code: object) -> None:
    """An ``error.code`` (a log) or a result ``type`` (a history's timeline) that is a list or an object is no code
    the CLI writes: the call's error as any failed call's, the run read (round 31 fix: TypeError, unhashable, lost
    the whole run)."""
    events = [json.loads(line) for line in HEADLESS.read_text().splitlines()]
    done = next(e for e in events if e["type"] == "tool.execution_complete" and "Created file" in json.dumps(e))
    done["data"] = {**done["data"], "success": False, "result": None, "error": {"code": code, "message": "x"}}
    (log := tmp_path / "session.jsonl").write_text("".join(json.dumps(e) + "\n" for e in events))
    assert only(log).steps[1].error == "x"
    session = json.loads(HISTORY.read_text())
    rejected = [e for e in session["timeline"] if e.get("type") == "tool_call_completed"][-1]
    rejected["result"] = {**rejected["result"], "type": code}
    (history := tmp_path / HISTORY.name).write_text(json.dumps(session))
    assert not only(history).steps[-1].error.startswith("not run")


def test_a_history_session_with_no_user_entry_is_refused_in_its_own_words(newcomer, tmp_path: Path) -> None:
    """A history file has no ``user.message``: the refusal names what it lacks, its timeline's ``user`` entry."""
    document = {**json.loads(HISTORY.read_text()), "timeline": []}
    path = tmp_path / HISTORY.name
    path.write_text(json.dumps(document))
    said = _dry_run(path)
    assert "runs 0; rejected 1" in said and "no user entry in its timeline" in said, said


@pytest.mark.parametrize("bad, why", [
    ("conversation:\n  - role: user\n   bad: [\n", "not goose's YAML export: while parsing"),
    ("conversation: !!python/object/apply:os.system [echo]\n", "could not determine a constructor"),
])
def test_a_broken_or_hostile_yaml_export_is_rejected_and_the_other_files_read(newcomer, tmp_path: Path, bad: str,
                                                                              why: str) -> None:
    """goose's head then YAML its loader refuses: that file rejected, naming why; the run's other file read."""
    path = tmp_path / "broken.yaml"
    path.write_text(f"id: x1\nworking_dir: /w\n{bad}")
    said = _dry_run_all(path, GOOSE / "20260301_1.yaml")
    assert "broken.yaml: format goose; runs 0; rejected 1" in said and why in said, said
    assert "20260301_1.yaml: format goose; runs 1; rejected 0" in said, said


def test_a_yaml_export_with_aliases_is_refused(newcomer, tmp_path: Path) -> None:
    """serde_yaml writes no alias; nested ones multiply a small file (five levels of ten: 100,000 items here, nine
    make an 851-byte file take all memory)."""
    lines = ["id: x1", "working_dir: /w", "bomb:", "  - &a0 [x, x, x, x, x, x, x, x, x, x]"]
    lines += [f"  - &a{n} [{', '.join([f'*a{n - 1}'] * 10)}]" for n in range(1, 5)]
    conversation = yaml.safe_load((GOOSE / "20260301_1.yaml").read_text())["conversation"]
    conversation[1]["content"][-1]["toolCall"]["value"]["arguments"] = {"x": "*a4"}
    text = "\n".join(lines) + "\n" + yaml.safe_dump({"conversation": conversation}).replace("'*a4'", "*a4")
    path = tmp_path / "aliases.yaml"
    path.write_text(text)
    said = _dry_run(path)
    assert "runs 0; rejected 1" in said and "alias" in said, said


def test_another_tools_messages_with_a_status_are_not_gooses(newcomer, tmp_path: Path) -> None:
    """``{"messages", "metadata": {"status"}}`` is goose's run output only when its messages are goose's."""
    path = tmp_path / "out.json"
    path.write_text(json.dumps({"messages": [{"role": "user", "content": "hello there"},
                                             {"role": "assistant", "content": "hi"}], "metadata": {"status": "ok"}}))
    said = _dry_run(path)
    assert "unrecognised dump format" in said and "format goose" not in said, said


def test_a_harbor_trial_copied_without_its_files_is_one_run_of_its_copilot_session(newcomer, tmp_path: Path) -> None:
    """Harbor's copilot-cli agent tees the headless output to ``agent/copilot-cli.jsonl`` and converts it to the ATIF
    beside it; a trial copied without ``result.json`` is still one run (review r30 finding 5: two)."""
    trial = tmp_path / "hello-copilot__Pz8Rt"
    shutil.copytree(HARBOR / "hello-copilot__Pz8Rt", trial)
    said = _dry_run(trial)
    assert "trajectory.json: format atif; runs 1; rejected 0; steps 5; errors 3" in said, said
    assert "copilot-cli" not in said.replace("github-copilot", ""), said


@pytest.mark.parametrize("name", ["20260301_1.yaml", "goose-run-output.json"])
def test_the_cli_reads_gooses_other_renderings(newcomer, name: str) -> None:
    said = _dry_run(GOOSE / name)
    assert "format goose; runs 1; rejected 0; steps 5; errors 1" in said, said


def test_a_walk_of_a_home_folder_reads_the_sessions_kept_before_the_event_logs(newcomer, tmp_path: Path) -> None:
    kept = tmp_path / "alice" / ".copilot" / "history-session-state"
    kept.mkdir(parents=True)
    (kept / HISTORY.name).write_bytes(HISTORY.read_bytes())
    said = _dry_run(tmp_path / "alice")
    assert "format copilot-cli; runs 1; rejected 0; steps 7" in said, said

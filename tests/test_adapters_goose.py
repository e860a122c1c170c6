"""goose sessions (block/goose): a JSONL session file (until late 2025), ``goose session export --format json``, and the SQLite
store since (named, with the command that writes its sessions as JSON lines). Fixtures: tests/fixtures/goose/.goose29
(README.md there says which lines are real and which were built from goose's own serialisation)."""

from __future__ import annotations

import json
import signal
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from trajsearch.ingest.adapters._agent_cli import API_ERROR_CAUSE, NEVER_ANSWERED, REFUSAL_CAUSE
from trajsearch.ingest.detect import detect_format
from trajsearch.ingest.read import read_dump
from trajsearch.model import Outcome

from adapter_support import only
from cli_support import newcomer, run_cli, unnoted  # noqa: F401 - the fixture

GOOSE = Path(__file__).parent / "fixtures" / "goose" / ".goose29"
LEGACY = GOOSE / "20250513_231848.jsonl"
LATER = GOOSE / "20250821_salesforce.jsonl"
EXPORT = GOOSE / "20260301_1.json"


def test_a_jsonl_session_file_is_one_run_with_its_tool_steps_and_the_failed_call() -> None:
    assert detect_format(LEGACY) == "goose"
    run = only(LEGACY)
    assert run.trajectory_id == "goose.20250513_231848.f48086843150"  # the file's name: goose's id for the session
    assert run.task.startswith("I have started a basic mcp template")
    assert run.outcome == Outcome.unknown and run.model_id is None
    assert [s.action for s in run.steps] == ["developer__text_editor", "developer__shell", "developer__text_editor",
                                             "respond"]
    view, install, write, answer = run.steps
    assert view.error is None and view.observation.startswith('import { McpServer } from "@modelcontextprotocol')
    assert view.thought.startswith("I'll help you create a file watcher")  # the text before the call
    assert install.arguments == {"command": "npm install chokidr"}
    assert install.error == "npm ERR! 404 Not Found - GET https://registry.npmjs.org/chokidr - Not found"
    assert answer.arguments["content"].startswith("The package name was misspelled")
    # the real line of #2529: the model's copy of the write's answer, not the user's markdown copy of the file
    assert write.error is None and write.observation == ("Successfully wrote to "
                                                         "/Users/zane/Development/mcp_goose_configwatcher/index.ts")
    assert run.metadata["working_dir"] == "/Users/zane/Development/mcp_goose_configwatcher"
    assert run.metadata["session_name"] == "File watcher config setup" and run.metadata["total_tokens"] == 75280
    assert run.created_at.isoformat() == "2025-05-13T23:18:48+00:00"
    assert view.started_at < view.ended_at


def test_a_later_session_file_with_null_token_counts_and_message_ids_is_read() -> None:
    assert detect_format(LATER) == "goose"
    run = only(LATER)
    assert run.trajectory_id == "goose.20250821_salesforce.ae813a970851"
    assert run.task == "can you check salesforce tools"
    assert run.metadata["working_dir"] == "/Users/zane/Development/goose-main" and "total_tokens" not in run.metadata
    (call,) = run.steps
    assert call.action == "platform__search_available_extensions" and call.error is None
    assert call.observation == "No extension named salesforce is installed."


def test_an_export_is_read_with_its_model_later_prompt_and_a_result_marked_is_error() -> None:
    assert detect_format(EXPORT) == "goose"
    run = only(EXPORT)
    assert run.trajectory_id == "goose.20260301_1.aa8846770232" and run.model_id == "claude-sonnet-4-5"
    assert run.task == "the retry test in tests/test_retry.py fails now and then, find out why"
    assert run.metadata["user_prompts"] == ["fix it"] and run.metadata["provider"] == "anthropic"
    assert [s.action for s in run.steps] == ["developer__shell", "developer__text_editor", "respond",
                                             "developer__text_editor", "respond"]
    tests = run.steps[0]
    assert tests.thought == "Run it a few times to see the failure."  # the thinking part
    assert tests.error is not None and "AssertionError: expected 3 attempts, got 2" in tests.error  # isError: true
    assert run.steps[1].error is None and run.steps[3].error is None


def test_a_walk_of_a_home_folder_reads_the_sessions_under_its_hidden_data_folder(tmp_path: Path) -> None:
    sessions = tmp_path / ".local" / "share" / "goose" / "sessions"
    sessions.mkdir(parents=True)
    (sessions / LEGACY.name).write_text(LEGACY.read_text())
    (tmp_path / ".cache").mkdir()
    (tmp_path / ".cache" / "x.jsonl").write_text(LEGACY.read_text())  # another hidden folder: not walked
    assert [p.trajectory.trajectory_id for p in read_dump(tmp_path)] == ["goose.20250513_231848.f48086843150"]


def test_a_file_of_messages_alone_is_read_and_named_by_its_file(tmp_path: Path) -> None:
    """goose reads a JSONL file whose first line is a message (no metadata line) as messages only."""
    path = tmp_path / "20260301_090000.jsonl"
    path.write_text("".join(json.dumps(m) + "\n" for m in json.loads(EXPORT.read_text())["conversation"]))
    assert detect_format(path) == "goose"
    run = only(path)
    assert run.trajectory_id == "goose.20260301_090000.aa8846770232" and len(run.steps) == 5


def test_an_unanswered_call_and_one_goose_could_not_parse_are_failed_steps(tmp_path: Path) -> None:
    session = json.loads(EXPORT.read_text())
    messages = session["conversation"][:2]  # the first call, its answer never recorded (the session stopped)
    messages[1]["content"].append({"type": "toolRequest", "id": "toolu_bad", "toolCall": {
        "status": "error", "error": "Could not interpret tool use parameters for id toolu_bad: EOF while parsing"}})
    path = tmp_path / "cut.json"
    path.write_text(json.dumps({**session, "conversation": messages}))
    shell, bad = only(path).steps
    assert shell.error == NEVER_ANSWERED
    assert bad.action == "(invalid tool call)" and bad.error.startswith("Could not interpret tool use parameters")


def test_the_models_copy_of_a_result_and_the_users_prompts_alone_are_read(tmp_path: Path) -> None:
    """goose's developer tools answer twice, a copy for the model and one for the user (``annotations.audience``);
    a message the user never saw (``userVisible: false``: a compaction's summary) is not the user's prompt."""
    session = json.loads(EXPORT.read_text())
    summary = {"role": "user", "created": 1772355599, "content": [{"type": "text", "text": "Summary of the earlier "
               "conversation: ..."}], "metadata": {"userVisible": False, "agentVisible": True}}
    session["conversation"][4]["content"][0]["toolResult"]["value"]["content"] = [
        {"type": "text", "text": "def retry(fn, attempts=3):", "annotations": {"audience": ["assistant"]}},
        {"type": "text", "text": "```python\ndef retry(fn, attempts=3):\n```",
         "annotations": {"audience": ["user"], "priority": 0.0}}]
    path = tmp_path / "s.json"
    path.write_text(json.dumps({**session, "conversation": [summary, *session["conversation"]]}))
    run = only(path)
    assert run.task == "the retry test in tests/test_retry.py fails now and then, find out why"
    assert run.steps[1].observation == "def retry(fn, attempts=3):"


def test_a_session_with_no_messages_is_passed_over(tmp_path: Path) -> None:
    (tmp_path / "empty.json").write_text(json.dumps({**json.loads(EXPORT.read_text()), "id": "x", "conversation": []}))
    (tmp_path / "b.json").write_text(EXPORT.read_text())
    assert [(p.error, p.trajectory.trajectory_id) for p in read_dump(tmp_path)] == [(None,
                                                                                     "goose.20260301_1.aa8846770232")]


def _store(path: Path) -> None:
    """goose's session database with the export's session in it: the tables as goose creates them
    (``SessionStorage::create_schema``, schema version 17), the rows as it writes them: after the prompt the
    ``<turn-context>`` message goose 1.5x adds for the model alone, a session never prompted, and a sub-agent's."""
    session = json.loads(EXPORT.read_text())
    messages = list(session["conversation"])
    messages.insert(1, {"id": "msg_ctx", "role": "user", "created": messages[0]["created"], "content": [
        {"type": "text", "text": "<turn-context>\ncwd: /home/alice/api\n</turn-context>"}],
        "metadata": {"userVisible": False, "agentVisible": True, "turnContext": True}})
    with sqlite3.connect(path) as db:
        db.executescript((GOOSE / "sessions-schema-v17.sql").read_text())
        db.execute("insert into sessions (id, name, working_dir, created_at, accumulated_total_tokens, provider_name, "
                   "model_config_json) values (?, ?, ?, ?, ?, ?, ?)",
                   (session["id"], session["name"], session["working_dir"], "2026-03-01 09:00:00",
                    session["accumulated_total_tokens"], "anthropic", json.dumps(session["model_config"])))
        db.execute("insert into sessions (id, name, working_dir) values ('20260301_2', 'never prompted', '/x')")
        db.execute("insert into sessions (id, name, working_dir, session_type, parent_session_id) values "
                   "('20260301_3', 'read retry.py', '/home/alice/api', 'sub_agent', '20260301_1')")
        rows = [(session["id"], m) for m in messages] + [("20260301_3", {
            "id": "msg_sub", "role": "user", "created": 1772355700, "metadata": {},
            "content": [{"type": "text", "text": "read retry.py and say what it retries"}]})]
        for session_id, m in rows:
            db.execute("insert into messages (message_id, session_id, role, content_json, created_timestamp, "
                       "metadata_json) values (?, ?, ?, ?, ?, ?)", (m["id"], session_id, m["role"],
                                                                   json.dumps(m["content"]), m["created"],
                                                                   json.dumps(m["metadata"])))
    db.close()


def test_the_session_database_is_named_with_a_command_whose_output_reads_as_the_same_run(tmp_path: Path) -> None:
    store = tmp_path / ".local" / "share" / "goose" / "sessions" / "sessions.db"
    store.parent.mkdir(parents=True)
    _store(store)
    with pytest.raises(ValueError, match=r"goose's session database .* python3 -I -c") as refused:
        detect_format(store)
    command = str(refused.value).split("ingest those: ", 1)[1].split(" (or one session", 1)[0]
    out = tmp_path / "goose-sessions.jsonl"
    done = subprocess.run(command.replace("goose-sessions.jsonl", str(out)), shell=True, capture_output=True,
                          text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    run, sub = [p.trajectory for p in read_dump(out)]  # the session never prompted is left out
    assert run.trajectory_id == "goose.20260301_1.aa8846770232"  # the export's id: one run, not two
    assert len(run.steps) == 5
    assert run.model_id == "claude-sonnet-4-5" and run.created_at.isoformat() == "2026-03-01T09:00:00+00:00"
    assert run.task.startswith("the retry test") and run.metadata["user_prompts"] == ["fix it"]  # no turn context
    assert sub.trajectory_id == "goose.20260301_3.df4f2dc8347d" and sub.metadata["session_type"] == "sub_agent"
    assert sub.metadata["parent_session_id"] == "20260301_1"  # the session it was spawned from
    # a walk of the data folder finds no dump and names the database the same way
    walked = subprocess.run([sys.executable, "-m", "trajsearch.cli", "ingest", str(tmp_path / ".local"), "--dry-run"],
                            capture_output=True, text=True, timeout=300, cwd=Path(__file__).parent.parent)
    assert "goose's session database" in " ".join((walked.stdout + walked.stderr).split())


def test_the_cli_reads_a_session_and_finds_it_by_its_tool_error(newcomer, tmp_path: Path) -> None:
    code, out, err = run_cli("ingest", str(LEGACY), "--dry-run")
    assert code == 0 and "format goose; runs 1; rejected 0" in out + err, out + err
    assert run_cli("ingest", str(GOOSE))[0] == 0
    code, out, err = run_cli("search", "npm ERR! 404 Not Found chokidr", "--json")
    assert code == 0 and not [line for line in unnoted(err) if "error" in line.lower()], err
    assert json.loads(out)[0]["trajectory_id"] == "goose.20250513_231848.f48086843150"


def _walk(path: Path) -> str:
    out = subprocess.run([sys.executable, "-m", "trajsearch.cli", "ingest", str(path), "--dry-run"],
                         capture_output=True, text=True, timeout=300, cwd=Path(__file__).parent.parent)
    return " ".join((out.stdout + out.stderr).split())


def test_a_walk_of_gooses_sessions_folder_itself_names_its_database(tmp_path: Path) -> None:
    """The database is told by the end of its own path (``goose/sessions/sessions.db``), not by the part of it under
    the folder walked: ``trajsearch ingest ~/.local/share/goose/sessions/`` gave the generic "passed over by name"."""
    sessions = tmp_path / "goose" / "sessions"
    sessions.mkdir(parents=True)
    _store(sessions / "sessions.db")
    said = _walk(sessions)
    assert "goose's session database" in said and "python3 -I -c" in said and "passed over by name" not in said, said
    # an upgraded install keeps its old session files beside the database (goose imports them, deletes none):
    # they are read, and the database, where every session since lives, is named, not passed over unsaid
    (sessions / LEGACY.name).write_text(LEGACY.read_text())
    said = _walk(sessions)
    assert "runs 1; rejected 0" in said and "1 session database(s) not read" in said and "sessions.db: goose: " in said, said


def test_an_export_bundles_sub_agent_sessions_each_read_as_its_own_run(tmp_path: Path) -> None:
    """goose's export bundle (``SessionExport``: the session flattened, ``child_sessions``) and its token counts as
    ``usage`` / ``accumulated_usage`` objects, as goose 1.46 exports them (figures from entireio/external-agents#74)."""
    session = json.loads(EXPORT.read_text())
    for key in [k for k in session if k.endswith("_tokens")]:
        del session[key]
    session["usage"] = {"input_tokens": 124611, "output_tokens": 394, "total_tokens": 125005,
                        "cache_read_input_tokens": 112820, "cache_write_input_tokens": 11777}
    session["accumulated_usage"] = dict(session["usage"])
    child = {**json.loads(EXPORT.read_text()), "id": "20260301_2", "session_type": "sub_agent",
             "parent_session_id": "20260301_1"}
    child["conversation"] = [{**child["conversation"][0], "content": [{"type": "text", "text": "read retry.py"}]},
                             {"role": "assistant", "created": 1772355610, "content": [{"type": "text", "text":
                                                                                        "It retries fn 3 times."}]}]
    idle = {**child, "id": "20260301_3", "conversation": []}  # spawned, never prompted: no run
    path = tmp_path / "bundle.json"
    path.write_text(json.dumps({**session, "child_sessions": [child, idle]}))
    parent, sub = [p.trajectory for p in read_dump(path)]
    assert parent.trajectory_id == "goose.20260301_1.aa8846770232" and parent.metadata["total_tokens"] == 125005
    assert sub.trajectory_id == "goose.20260301_2.8efbd16a1789" and sub.task == "read retry.py"
    assert sub.metadata["session_type"] == "sub_agent" and sub.metadata["parent_session_id"] == "20260301_1"


def test_the_model_recorded_on_messages_is_the_runs_where_the_session_records_none(tmp_path: Path) -> None:
    """goose 1.4x writes ``metadata.inference`` on each assistant message (``requestedModel``, ``resolvedModel``)."""
    session = json.loads(EXPORT.read_text())
    del session["model_config"]
    for m in session["conversation"]:
        if m["role"] == "assistant":
            m["metadata"]["inference"] = {"provider": "anthropic", "requestedModel": "claude-sonnet-4-5",
                                          "resolvedModel": "claude-sonnet-4-5-20250929"}
    path = tmp_path / "s.json"
    path.write_text(json.dumps(session))
    assert only(path).model_id == "claude-sonnet-4-5-20250929"


@pytest.mark.parametrize(("kind", "message", "outcome", "cause"), [
    ("contextLengthExceeded", "Context length exceeded", Outcome.failure, "the agent ran out of its context window"),
    ("authentication", "Authentication failed: invalid x-api-key", Outcome.infra_error, "infrastructure")])
def test_a_session_ending_on_gooses_error_part_ended_on_that_error(tmp_path: Path, kind: str, message: str,
                                                                  outcome: Outcome, cause: str) -> None:
    session = json.loads(EXPORT.read_text())
    error = {"role": "assistant", "created": 1772356000, "content": [{"type": "error", "kind": kind,
                                                                       "message": message}]}
    path = tmp_path / "s.json"
    path.write_text(json.dumps({**session, "conversation": [*session["conversation"], error]}))
    run = only(path)
    assert run.outcome == outcome and run.failure.error.startswith(message) and run.failure.cause.startswith(cause)
    # an error the session went on from (the user asked again, the model answered) is not what it ended on
    again = [{"role": "user", "created": 1772356010, "content": [{"type": "text", "text": "try again"}]},
             {"role": "assistant", "created": 1772356020, "content": [{"type": "text", "text": "Done."}]}]
    path.write_text(json.dumps({**session, "conversation": [*session["conversation"], error, *again]}))
    assert only(path).outcome == Outcome.unknown


def test_a_tool_request_naming_no_tool_is_a_failed_step(tmp_path: Path) -> None:
    session = json.loads(EXPORT.read_text())
    session["conversation"][1]["content"][1]["toolCall"] = "x"  # not goose's {status, value: {name, arguments}}
    path = tmp_path / "s.json"
    path.write_text(json.dumps(session))
    bad = only(path).steps[0]
    assert bad.action == "(invalid tool call)" and bad.error == "invalid tool call: no tool name recorded"


def test_gooses_session_list_is_named_as_no_run(tmp_path: Path) -> None:
    """``goose session list --format json``: the sessions without their messages (``conversation`` null)."""
    listed = {**json.loads(EXPORT.read_text()), "conversation": None, "message_count": 10}
    path = tmp_path / "sessions.json"
    path.write_text(json.dumps([listed]))
    with pytest.raises(ValueError, match=r"no run in this file: goose's session list .*goose session export --session"):
        detect_format(path)


def test_a_run_that_ended_on_the_agent_loops_provider_error_text_is_an_infrastructure_error() -> None:
    """Bug (AUD3): goose's agent loop writes a provider failure as the assistant's text ("Ran into this error: Rate
    limit exceeded: ...\\n\\nPlease retry ..."), not an error part: the run read as one that ended on an answer, the
    provider's words its ``respond`` step, outcome unknown."""
    run = only(GOOSE.parent / ".aud31" / "goose-run-rate-limited.json")
    assert [s.action for s in run.steps] == ["developer__shell"]
    assert run.outcome == Outcome.infra_error
    assert run.failure.error.startswith("Rate limit exceeded: Rate limit reached for gpt-4.1")
    assert run.failure.cause == API_ERROR_CAUSE


def test_a_run_that_ended_on_the_credits_exhausted_notification_is_an_infrastructure_error() -> None:
    """Bug (AUD3): goose's agent loop says the provider's credits ran out with a ``systemNotification`` of
    ``notificationType`` ``creditsExhausted``, no error part: the run read as unknown."""
    run = only(GOOSE.parent / ".aud31" / "goose-run-credits-exhausted.json")
    assert run.steps == [] and run.outcome == Outcome.infra_error
    assert run.failure.error == "Please add credits to your account, then resend your message to continue. " \
                                "(credits_exhausted)"


def _ending_on(tmp_path: Path, text: str, metadata: dict[str, Any] | None = None) -> Path:
    """The rate-limited run of .aud31 with its last assistant message's text (and metadata) replaced."""
    run = json.loads((GOOSE.parent / ".aud31" / "goose-run-rate-limited.json").read_text())
    run["messages"][-1]["content"] = [{"type": "text", "text": text}]
    run["messages"][-1]["metadata"] = {"userVisible": True, "agentVisible": True, **(metadata or {})}
    path = tmp_path / "run.json"
    path.write_text(json.dumps(run))
    return path


@pytest.mark.parametrize(("text", "metadata"), [
    ("I could not reach the API from the sandbox, so I could not check the log.\n\n"
     "Please resend your message to try again.", None),
    ("Ran into this error: Authentication error: the deploy key was revoked.\n\n"
     "Please retry if you think this is a transient or recoverable error.",
     {"inference": {"provider": "openai", "resolvedModel": "gpt-4.1"}})])
def test_a_models_answer_in_the_agent_loops_words_is_an_answer_not_an_error(tmp_path: Path, text: str,
                                                                             metadata: dict[str, Any] | None) -> None:
    """Review of AUD3, 1 and 2: an answer that only ends with the network error's sentence (goose writes it after
    "Network error: ..." alone), or that a model wrote (``metadata.inference``, which the loop's own message never
    carries), read as the provider's error: the answer lost, the run an infra_error."""
    run = only(_ending_on(tmp_path, text, metadata))
    assert [s.action for s in run.steps] == ["developer__shell", "respond"] and run.outcome == Outcome.unknown


@pytest.mark.parametrize(("text", "error"), [
    ("Network error: Could not connect to 10.0.0.5:443\n\nPlease resend your message to try again.",
     "Network error: Could not connect to 10.0.0.5:443 (other)"),
    ("The model returned an empty response. Please resend your message to continue.",
     "The model returned an empty response (other)"),
    ("Ran into this error: .\n\nPlease retry if you think this is a transient or recoverable error.",
     "goose error (other)"),
    ("Ran into this error: Request failed: " + "x" * 2_000_000 + ".\n\n"
     "Please retry if you think this is a transient or recoverable error.", None)])
def test_the_agent_loops_network_empty_and_huge_errors_end_the_run(tmp_path: Path, text: str,
                                                                   error: str | None) -> None:
    """Review of AUD3, 3 and 4: a provider error with no words crashed the read (``None.startswith``), and one of
    2 MB refused the whole run (its error past the trajectory's limit); each is the infra_error the run ended on."""
    run = only(_ending_on(tmp_path, text))
    assert [s.action for s in run.steps] == ["developer__shell"] and run.outcome == Outcome.infra_error
    assert run.failure.error == error if error else (run.failure.error.startswith("Request failed: xxx")
                                                     and len(run.failure.error) < 600)


def test_a_run_the_provider_refused_ends_on_the_models_refusal_not_on_goose_words_as_its_answer(tmp_path: Path) -> None:
    """Review of AUDGL34, 6: goose's loop writes a provider's refusal (``ProviderError::Refusal``) and its answer after
    three empty replies as the model's text (aaif-goose/goose ``agents/agent.rs`` 0009e7e2, the texts as it formats
    them): the run ended on a ``respond`` step of goose's words, outcome unknown. The refusal is the model's
    (``MODEL_REFUSAL``: a failure), the empty reply the provider's (above)."""
    text = ("The provider refused this request.\n\nOutput blocked by content filtering policy\n\nCategory: cyber\n\n"
            "Please start a new session to continue — resending this conversation is likely to be refused again.")
    run = only(_ending_on(tmp_path, text))
    assert [s.action for s in run.steps] == ["developer__shell"] and run.outcome == Outcome.failure
    assert run.failure.error == ("The provider refused this request. Output blocked by content filtering policy "
                                 "Category: cyber (refusal)")
    assert run.failure.cause == REFUSAL_CAUSE
    answer = only(_ending_on(tmp_path, text, {"inference": {"provider": "openai", "resolvedModel": "gpt-4.1"}}))
    assert answer.steps[-1].action == "respond" and answer.outcome == Outcome.unknown  # a model's words: its answer


#: ``goose run``'s banner on stdout before its output (goose-cli ``output::display_session_info``, not ``--quiet``), as
#: real captures of ``goose run --output-format json`` hold it (917135271/blackbox-eval, no licence: not copied here).
BANNER = ("\n    __( O)>  ● new session · openai deepseek-v4-flash\n   \\____)    20260707_24 · /work/agent\n"
          "     L L     goose is ready\n")
#: The banner as captured where colour was on: ``display_session_info`` styles its words (``console::style``: green,
#: dim, cyan), each between SGR codes (bug LEFT32, 2: such a capture was no goose file at all).
COLOURED = ("\n    {g}__( O)>{z}  {g}●{z} {d}new session{z} {d}·{z} {d}openai{z} {c}deepseek-v4-flash{z}\n"
            "   {g}\\____){z}    {d}20260707_24{z} {d}· /work/agent{z}\n"
            "     {g}L L{z}     {g}goose is ready{z}\n").format(g="\x1b[32m", d="\x1b[2m", c="\x1b[36m", z="\x1b[0m")

#: A real capture of ``goose run --recipe``'s stdout: the recipe goose loaded (``load_recipe_as_template``: title,
#: description, parameters, a blank line), its banner, its text output (see its README).
RECIPE_RUN = GOOSE.parent / ".goose2" / "recipe-smoke-stdout.txt"
#: That capture up to and with its banner.
RECIPE = RECIPE_RUN.read_text().partition("goose is ready\n")[0] + "goose is ready\n"
#: A preamble coloured as ``console::style`` writes it, its description two lines long.
RECIPE_COLOURED = ("\x1b[32m\x1b[1mLoading recipe:\x1b[0m \x1b[32mgoose canary smoke\x1b[0m\n"
                   "\x1b[1mDescription:\x1b[0m Minimal recipe\nover two lines.\n\n"
                   "\x1b[1mParameters used to load this recipe:\x1b[0m\n   nonce: 1\n\n")


@pytest.mark.parametrize("banner", [BANNER, COLOURED, RECIPE, RECIPE_COLOURED + COLOURED],
                         ids=["plain", "coloured", "recipe", "recipe-coloured"])
def test_goose_runs_json_output_captured_with_its_banner_is_the_same_run(tmp_path: Path, banner: str) -> None:
    """Review of AUD3, 6: stdout of ``goose run --output-format json`` opens with goose's banner unless ``--quiet``;
    such a capture was refused as an unrecognised dump, and so was one of ``goose run --recipe`` (GOOSE2), whose
    banner comes after the recipe goose loaded. Read, it is the run the JSON alone is; the banner before
    goose's text output, which records no run, is named as that."""
    plain = GOOSE.parent / ".aud31" / "goose-run-rate-limited.json"
    captured = tmp_path / "trajectory.json"
    captured.write_text(banner + plain.read_text())
    assert detect_format(captured) == "goose"
    run, alone = only(captured), only(plain)
    assert (run.task, [s.action for s in run.steps], run.outcome) == (alone.task, [s.action for s in alone.steps],
                                                                      Outcome.infra_error)
    captured.write_text(banner + "I'll run the tests first.\n  ▸ shell\n    command: pytest\n")
    [read] = read_dump(captured)
    assert not read.ok and "goose's terminal output" in read.error and "--output-format json" in read.error


def test_a_real_recipe_runs_text_output_is_named_as_goose_output_not_unrecognised(newcomer) -> None:
    """GOOSE2: a real ``goose run --recipe`` capture opens with the recipe goose loaded, then the banner; the CLI
    said "unrecognised dump format". It is goose's text output, which records no run: named as that, with what to
    run instead."""
    code, _, err = run_cli("ingest", str(RECIPE_RUN), "--dry-run")
    assert code != 0 and "unrecognised" not in err
    assert "goose's terminal output" in err and "--output-format json" in err, err


@pytest.mark.parametrize("text", ["\n    __( O)>  x\n   \\____)  y\n     L L" + " " * 60_000 + "x\n",
                                  "Loading recipe: x\n" + "\n" * 60_000 + "x"], ids=["banner", "recipe"])
def test_a_banner_like_line_of_blanks_is_refused_in_one_pass(tmp_path: Path, text: str) -> None:
    """Bug (review of LEFT32, 1): the coloured banner's rule took the blanks after ``L L`` as two runs side by side,
    so a 60 KB line of blanks that then failed was split every way, each tried again: about two minutes for one
    file's detection (a hundredth of a second before and after). So would a recipe's preamble (GOOSE2) whose lines
    the rule gave back one by one to the banner's leading blanks (4,000 empty lines: half a second). The alarm
    bounds that regression, waits for nothing: detection reads a file's first 64 KB, so the input cannot grow past
    what the quadratic rule takes (one to two minutes); 30 s fails it, and leaves the linear rule a margin of 3,000
    times on a loaded machine."""
    path = tmp_path / "out.txt"
    path.write_text(text)

    def too_slow(*_: object) -> None:
        raise TimeoutError("30 s refusing one line of blanks after a goose banner's first lines: quadratic")

    previous = signal.signal(signal.SIGALRM, too_slow)
    signal.alarm(30)
    try:
        with pytest.raises(ValueError, match="unrecognised dump format"):
            detect_format(path)
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


def test_a_session_ending_on_gooses_context_length_exceeded_part_ran_out_of_context(tmp_path: Path) -> None:
    """Bug (LEFT32, 1): goose before its ``error`` parts wrote an overflow as a part of its own,
    ``{"type": "contextLengthExceeded", "msg"}`` (``MessageContent::ContextLengthExceeded``, yielded by
    ``agents/agent.rs`` on ``ProviderError::ContextLengthExceeded``): read as no step, the run's end unknown."""
    session = json.loads(EXPORT.read_text())
    overflow = {"role": "assistant", "created": 1772356000, "content": [{
        "type": "contextLengthExceeded",
        "msg": "The context length of the model has been exceeded. Please start a new session and try again."}]}
    path = tmp_path / "s.json"
    path.write_text(json.dumps({**session, "conversation": [*session["conversation"], overflow]}))
    run = only(path)
    assert run.outcome == Outcome.failure and run.failure.cause.startswith("the agent ran out of its context window")
    assert run.failure.error.startswith("The context length of the model has been exceeded")
    # goose's CLI then offers to clear or summarise: a session that went on did not end on it
    again = [{"role": "user", "created": 1772356010, "content": [{"type": "text", "text": "go on"}]},
             {"role": "assistant", "created": 1772356020, "content": [{"type": "text", "text": "Done."}]}]
    path.write_text(json.dumps({**session, "conversation": [*session["conversation"], overflow, *again]}))
    assert only(path).outcome == Outcome.unknown



def test_a_never_prompted_yaml_export_is_passed_over_as_the_json_one(tmp_path: Path, newcomer) -> None:
    """The same session as its JSON export: no run, said as such (``side_document``), where its YAML export was a
    rejection, "no user prompt" (detection looked only at the JSON document; review AUDOC35 #2)."""
    real = Path(__file__).parent / "fixtures" / "goose" / ".copilot2-30" / "20260301_1.yaml"
    head = real.read_text().partition("\nconversation:")[0]
    (tmp_path / "np.yaml").write_text(head + "\nconversation: []\n")
    code, out, err = run_cli("ingest", str(tmp_path / "np.yaml"), "--dry-run")
    said = " ".join((out + err).split())
    assert code == 2 and "no run in this file: a goose session with no messages: created, never prompted" in said, said


#: goose's compaction as ``context_mgmt::compact_messages`` writes it (hand-built: tests/fixtures/goose/.audgoose36).
COMPACTED = Path(__file__).parent / "fixtures" / "goose" / ".audgoose36" / "20260722_3.json"


def test_goose_compacting_a_turn_mid_way_adds_no_answer_and_no_prompt() -> None:
    run = only(COMPACTED)
    assert run.task.startswith("the migration in db/migrate/0042")
    # the continuation goose writes for the model only is no answer; the prompt's copy after it no new prompt
    assert [s.action for s in run.steps] == ["developer__shell"] * 3 + ["respond"]
    assert run.steps[-1].arguments["content"].startswith("Migration 0042 now adds")
    assert not run.metadata.get("user_prompts")


def test_the_prompt_goose_compacted_away_is_its_copy_even_when_the_user_said_it_twice(tmp_path: Path) -> None:
    session = json.loads(COMPACTED.read_text())
    said = session["conversation"][0]
    again = {**said, "id": "msg_1b", "metadata": {"userVisible": False, "agentVisible": False}}  # the last message
    session["conversation"][5:5] = [again]  # compacted as the most recent: hidden, its copy the prompt
    path = tmp_path / "20260722_3.json"
    path.write_text(json.dumps(session))
    assert only(path).metadata["user_prompts"] == [said["content"][0]["text"]]


def _compacted_variant(tmp_path: Path, name: str, edit: Any) -> Any:
    """The fixture session changed by ``edit(conversation)``, read as its one run."""
    session = json.loads(COMPACTED.read_text())
    edit(session["conversation"])
    path = tmp_path / name / "20260722_3.json"
    path.parent.mkdir()
    path.write_text(json.dumps(session))
    return only(path)


def _message(role: str, text: str, user: bool, agent: bool, at: int) -> dict[str, Any]:
    return {"id": f"msg_x{at}", "role": role, "created": 1784700000 + at,
            "content": [{"type": "text", "text": text}], "metadata": {"userVisible": user, "agentVisible": agent}}


def test_the_copy_of_a_compacted_prompt_is_told_by_its_text_whatever_else_goose_hid(tmp_path: Path) -> None:
    """goose hides more than a prompt it compacted: its tool-pair summaries, and at a second compaction every earlier
    summary and continuation; those left the mid-turn copy read as a repeated prompt."""
    def tool_pair_summary(conversation: list) -> None:
        conversation[3:3] = [_message("user", "A shell call ran the migration: it failed.", False, False, 1)]

    def compacted_twice(conversation: list) -> None:
        for message in conversation:
            message["metadata"] = {**message["metadata"], "agentVisible": False}
        conversation[9:9] = [_message("user", "## Summary 2\nmore", False, True, 2),
                             {**conversation[6], "id": "msg_x3",
                              "metadata": {"userVisible": False, "agentVisible": True}},
                             {**conversation[7], "id": "msg_x4", "metadata": {}}]

    for name, edit in (("pairs", tool_pair_summary), ("twice", compacted_twice)):
        run = _compacted_variant(tmp_path, name, edit)
        assert not run.metadata.get("user_prompts"), name
        assert run.steps[-1].arguments["content"].startswith("Migration 0042 now adds"), name


def test_a_prompt_repeated_after_a_compaction_that_appended_no_visible_copy_is_a_prompt(tmp_path: Path) -> None:
    """Newer goose appends the copy for the model alone; a manual compaction appends none: the user's next prompt,
    though it repeats the last, is the user's (it was dropped, its answer merged into the turn before)."""
    said = json.loads(COMPACTED.read_text())["conversation"][0]["content"][0]["text"]

    def copy_for_the_model(conversation: list) -> None:
        conversation[7]["metadata"] = {"userVisible": False, "agentVisible": True}

    def manual(conversation: list) -> None:  # at the user's request: goose's words for it, and no copy
        conversation[6]["content"][0]["text"] = ("Your context was compacted at the user's request. The previous "
                                                 "message contains a summary of the conversation so far.")
        del conversation[7]

    for name, edit in (("copy-for-the-model", copy_for_the_model), ("manual", manual)):
        def repeated(conversation: list, edit: Any = edit) -> None:
            edit(conversation)
            conversation.extend([_message("user", said, True, True, 5),
                                 {**conversation[-1], "id": "msg_x6", "created": 1784700006,
                                  "content": [{"type": "text", "text": "Ran it again: still passes."}]}])
        run = _compacted_variant(tmp_path, name, repeated)
        assert run.metadata.get("user_prompts") == [said], name
        assert [s.arguments.get("content", "")[:12] for s in run.steps if s.action == "respond"][-2:] == [
            "Migration 00", "Ran it again"], name


def test_a_turn_of_thousands_of_hidden_messages_is_read(tmp_path: Path) -> None:
    """goose hides tool-pair summaries and, at each compaction, every earlier message: each one told in one step (a
    set copied per hidden message made a turn of 20000 take 6.8 s, not 0.6)."""
    def hidden(conversation: list) -> None:
        conversation[1:1] = [_message("user", f"Summary of tool call {i}: ran.", False, False, i) for i in range(20000)]

    run = _compacted_variant(tmp_path, "hidden", hidden)
    assert not run.metadata.get("user_prompts")
    assert [s.action for s in run.steps] == ["developer__shell"] * 3 + ["respond"]



def test_a_kept_prompt_older_than_the_compaction_is_the_users_not_gooses_copy(tmp_path: Path) -> None:
    """A goose fork (gosling: ``GOSLING_COMPACT_PROTECT_LAST_N_TURNS``) keeps the last turns verbatim after the
    continuation and appends no copy: a kept prompt that repeats the one before ("continue", "continue") is older
    than the continuation, so it is the user's, with its own answer (it was dropped, its answer merged)."""
    def turn(prompt: str, answer: str, at: int, agent: bool) -> list[dict[str, Any]]:
        said = _message("assistant", answer, True, agent, at + 1)
        said["metadata"]["inference"] = {"provider": "anthropic", "requestedModel": "claude-sonnet-4-5"}
        return [_message("user", prompt, True, agent, at), said]

    def protected_tail(conversation: list) -> None:
        continuation = {**conversation[6], "created": 1784700008}  # written when compacting, after the kept turn
        conversation[:] = [*turn("fix the migration", "Started on it.", 1, False),
                           *turn("continue", "Added owner_id.", 3, False),
                           _message("user", "## Summary\n...", False, True, 7), continuation,
                           *turn("continue", "Fixed the constraint too.", 5, True)]

    run = _compacted_variant(tmp_path, "gosling", protected_tail)
    assert run.metadata.get("user_prompts") == ["continue", "continue"]
    assert [s.arguments["content"] for s in run.steps if s.action == "respond"][-2:] == [
        "Added owner_id.", "Fixed the constraint too."]

"""gptme conversations (gptme/gptme): a conversation's log, its messages as JSON lines, the calls written in the
assistant's text. Fixture: tests/fixtures/gptme/.newa31 (a log gptme 0.35.1's own code wrote, its tools running the
calls; README.md there says how)."""

from __future__ import annotations

import json
import os
import shutil
import signal
from datetime import datetime, timedelta, timezone
from pathlib import Path

from trajsearch.ingest.adapters._agent_cli import NEVER_ANSWERED
from trajsearch.ingest.read import read_inputs
from trajsearch.model import Outcome

from cli_support import newcomer, run_cli, unnoted  # noqa: F401 - the fixture

GPTME = Path(__file__).parent / "fixtures" / "gptme" / ".newa31"
CONVERSATION = "2026-12-07-fixing-empty-mean"
LOG = GPTME / CONVERSATION / "conversation.jsonl"
PROMPT = {"role": "system", "content": "You are gptme v0.35.1, a general-purpose AI assistant powered by LLMs.",
          "timestamp": "2026-12-07T07:46:16.452345", "pinned": True, "hide": True}
#: A log's first line before gptme 0.18 (2024-09): no ``pinned``.
OLD_PROMPT = {"role": "system", "content": "You are gptme, an AI assistant CLI tool powered by large language models.",
              "timestamp": "2024-06-01T09:59:59.000001", "files": []}
#: gptme 0.35.1's own logs of its tool and xml call formats (tests/fixtures/gptme/.newa31fix/README.md says how).
FORMATS = Path(__file__).parent / "fixtures" / "gptme" / ".newa31fix"


def _runs(*paths: Path) -> dict:
    results = list(read_inputs(list(paths)))
    assert all(r.ok for r in results), [r.error for r in results if not r.ok]
    return {r.trajectory.trajectory_id: r.trajectory for r in results}


def _write(path: Path, *records: dict) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(record) + "\n" for record in records))
    return path


def test_a_conversation_log_is_a_run_of_its_tool_calls_with_the_ones_that_failed() -> None:
    [run] = _runs(LOG).values()
    assert run.trajectory_id == f"gptme.{CONVERSATION}" and run.metadata["session_id"] == CONVERSATION
    assert run.task == "calc.py crashes when I run it; find out why and fix it" and run.outcome is Outcome.unknown
    assert run.metadata["user_prompts"] == ["thanks, also make it print with two decimals"]
    assert run.model_id == "anthropic/claude-sonnet-4-5" and run.created_at.isoformat().startswith("2026-12-07T07:46")
    assert [s.action for s in run.steps] == ["shell", "shell", "save", "ipython", "shell", "respond", "shell"]
    assert run.steps[0].arguments == {"command": "python3 calc.py"}
    assert run.steps[0].thought == "Let me run the script first to see the error."
    assert run.steps[2].arguments["path"] == "calc.py" and run.steps[2].observation == "Saved to calc.py (overwritten)"
    # a command's exit code and its output's decisive line; Python's exception; grep's answer is no failure
    assert {s.index: s.error for s in run.steps if s.error} == {
        0: "ZeroDivisionError: division by zero (exit code 1)", 3: "ModuleNotFoundError: No module named 'calc'"}
    assert run.steps[5].arguments == {
        "content": "Fixed: `mean([])` now returns 0.0 instead of raising ZeroDivisionError."}


def test_the_cli_reads_the_log_passes_the_event_log_over_and_finds_the_run_by_its_error(newcomer) -> None:
    code, out, err = run_cli("ingest", str(GPTME), "--dry-run")
    said = out + err
    assert code == 0 and f"{LOG}: format gptme; runs 1; rejected 0; steps 7; errors 2" in said, said
    assert "events.jsonl" not in said, said
    code, out, err = run_cli("ingest", str(GPTME / CONVERSATION / "events.jsonl"), "--dry-run")
    assert "the run is the conversation.jsonl beside it" in " ".join((out + err).split()), out + err
    assert run_cli("ingest", str(GPTME))[0] == 0
    code, out, err = run_cli("search", "ZeroDivisionError: division by zero", "--json")
    assert code == 0 and not [line for line in unnoted(err) if "error" in line.lower()], err
    assert json.loads(out)[0]["trajectory_id"] == f"gptme.{CONVERSATION}"
    code, out, _ = run_cli("formats", "--json")
    [gptme] = [f for f in json.loads(out) if f["format"] == "gptme"]
    assert "gptme" in gptme["description"], gptme


def test_a_home_walk_reads_the_logs_folder_a_branch_and_the_tool_format_s_calls(tmp_path: Path) -> None:
    """gptme's ``tool`` format writes a call as ``@<tool>(<call id>): {json}`` (``ToolUse._to_toolcall``), its
    result a system message with that ``call_id``; a branch lies in ``branches/<name>.jsonl`` beside the log."""
    folder = tmp_path / ".local" / "share" / "gptme" / "logs" / "2026-12-01-tool-calls"
    said = [PROMPT, {"role": "user", "content": "is the build green?", "timestamp": "2026-12-01T10:00:00"},
            {"role": "assistant", "content": 'Checking.\n@shell(call_a1): {"command": "make test"}',
             "timestamp": "2026-12-01T10:00:02", "metadata": {"model": "openai/gpt-5"}},
            {"role": "system", "content": "Ran command: `make test`\n\n```stderr\nmake: *** No rule to make target "
             "'test'.  Stop.\n```\n\nReturn code: 2\n", "timestamp": "2026-12-01T10:00:03", "call_id": "call_a1"},
            {"role": "assistant", "content": "There is no test target.", "timestamp": "2026-12-01T10:00:04"}]
    _write(folder / "conversation.jsonl", *said)
    _write(folder / "branches" / "retry.jsonl", *said[:2])
    _write(folder / "events.jsonl", {"seq": 1, "ts": "2026-12-01T10:00:00+00:00", "type": "message_append",
                                     "payload": {"message": said[1]}})
    runs = _runs(tmp_path)
    assert set(runs) == {"gptme.2026-12-01-tool-calls", "gptme.2026-12-01-tool-calls.retry"}
    assert runs["gptme.2026-12-01-tool-calls.retry"].metadata["session_id"] == "2026-12-01-tool-calls"
    call, answer = runs["gptme.2026-12-01-tool-calls"].steps
    assert call.action == "shell" and call.arguments == {"command": "make test"} and call.thought == "Checking."
    assert call.error == "make: *** No rule to make target 'test'. Stop. (exit code 2)"
    assert answer.action == "respond" and runs["gptme.2026-12-01-tool-calls"].model_id == "openai/gpt-5"
    # a copy keeping the conversation's folder is the same run
    copy = tmp_path / "backup" / "2026-12-01-tool-calls"
    shutil.copytree(folder, copy)
    assert set(_runs(copy / "conversation.jsonl")) == {"gptme.2026-12-01-tool-calls"}


def test_a_bad_log_is_refused_naming_the_file_and_the_line_and_a_cut_short_one_keeps_its_good_lines(
        newcomer, tmp_path: Path) -> None:
    odd = _write(tmp_path / "odd.jsonl", PROMPT, {"role": "tool", "content": "x", "timestamp": "2026-12-01T10:00"})
    parts = _write(tmp_path / "parts.jsonl", PROMPT, {"role": "user", "content": [{"text": "hi"}],
                                                      "timestamp": "2026-12-01T10:00"})
    empty = _write(tmp_path / "empty.jsonl", PROMPT)
    cut = tmp_path / "cut.jsonl"
    cut.write_text(LOG.read_text()[:4000])
    code, out, err = run_cli("ingest", str(odd), str(parts), str(empty), str(cut), "--dry-run")
    said = " ".join((out + err).split())
    assert f"{odd}: format gptme; runs 0; rejected 1" in said, said
    assert "line 2: role 'tool'; a gptme log line is a message of role system, user, assistant" in said, said
    assert "line 2: a user message whose content is an array; a gptme message's content is text" in said, said
    assert f"{empty}: format gptme; runs 0; rejected 1" in said and "no user message in this gptme" in said, said
    assert f"{cut}: format gptme; runs 1; rejected 1" in said and f"{cut}, line 4: malformed JSON" in said, said


def test_a_python_block_is_a_call_where_gptme_answered_it_and_an_example_where_not(tmp_path: Path) -> None:
    """gptme ran ``python`` blocks until 0.16 (2024-09; since, ``ipython`` and ``py`` only), whose logs' system prompt
    has no ``pinned`` (``Message.to_dict`` wrote ``role, content, timestamp, files`` then): one a system message
    answers is a call, one in a reply left unanswered is text, no call that never ran."""
    log = _write(tmp_path / "2024-06-01-old" / "conversation.jsonl", OLD_PROMPT,
                 {"role": "user", "content": "what is 2**100?", "timestamp": "2024-06-01T10:00:00"},
                 {"role": "assistant", "content": "```python\n2**100\n```", "timestamp": "2024-06-01T10:00:01"},
                 {"role": "system", "timestamp": "2024-06-01T10:00:02",
                  "content": "Executed code block.\n\n```stdout\n1267650600228229401496703205376\n```"},
                 {"role": "assistant", "content": "It is 1267650600228229401496703205376; in code:\n\n```python\n"
                  "print(2**100)\n```", "timestamp": "2024-06-01T10:00:03"})
    [run] = _runs(log).values()
    call, answer = run.steps
    assert call.action == "python" and call.arguments == {"code": "2**100"} and call.error is None
    assert answer.action == "respond" and answer.arguments["content"].endswith("```python\nprint(2**100)\n```")
    assert not [s for s in run.steps if s.error]


def test_the_tool_format_s_calls_are_read_as_gptme_s_parser_reads_them() -> None:
    """Two calls in one message each take their own result (by call id); a call written as a Python dict ends at its
    brace; gptme's "not available" answer fails its call; a code block in ``<think>`` is a musing, no call; a
    ``save`` keeps the nested fence of the file it writes; gptme's autonomous nudge is no user prompt."""
    [run] = _runs(FORMATS / "2026-12-07-two-calls" / "conversation.jsonl").values()
    assert [s.action for s in run.steps] == ["shell", "shell", "shell", "browser", "save", "respond", "respond"]
    assert [s.arguments.get("command") for s in run.steps[:3]] == ["ls", "make build", "cat Makefile"]
    assert run.steps[0].observation.strip().endswith("`Makefile`") and "make build" in run.steps[1].observation
    assert {s.index: s.error for s in run.steps if s.error} == {
        1: "make: *** [Makefile:2: build] Error 1 (exit code 2)", 3: "Tool 'browser' is not available for execution."}
    assert run.steps[3].thought.startswith("The build target exits on purpose.")
    assert run.steps[4].arguments["path"] == "README.md" and run.steps[4].arguments["content"].endswith(
        "```bash\nmake build\n```\n\nIt fails on purpose.")
    assert "rm -rf build" in run.steps[4].thought and run.steps[4].observation == "Saved to README.md"
    assert run.metadata.get("user_prompts") is None and run.metadata["auto_replies"] == 1


def test_the_xml_format_s_calls_are_read_and_their_failures_kept() -> None:
    [run] = _runs(FORMATS / "2026-12-07-xml-calls" / "conversation.jsonl").values()
    call, answer = run.steps
    assert call.action == "shell" and call.arguments == {"command": "ls docs"} and call.thought == "Let me look."
    assert call.error == "`ls: cannot access 'docs': No such file or directory` (exit code 2)"
    assert answer.action == "respond"


def test_a_fence_inside_a_here_document_or_a_python_string_is_text_of_the_call() -> None:
    """gptme reads a shell block's here-document and an ipython block's triple-quoted string to the end: a fence in
    them closes no block (its ``_extract_codeblocks``)."""
    [run] = _runs(FORMATS / "2026-12-07-fenced-strings" / "conversation.jsonl").values()
    write, count, answer = run.steps
    assert write.arguments["command"].endswith("```\n\nEOF\ngrep -c make NOTES.md") and write.error is None
    assert count.arguments["code"].endswith('assert doc.count("```") == 3, doc.count("```")')
    assert count.error == "AssertionError: 2" and answer.action == "respond"


def test_fences_examples_gptme_s_failure_messages_and_a_block_gptme_left_unrun(tmp_path: Path) -> None:
    """A fence of four backticks is a call; a ``@tool(id)`` line shown in a code block is none, in a ``<think>``
    section too (``iter_from_content`` skips it); an interrupt and the sandboxed Python's exit code fail their
    calls; a block the conversation went on past without a result is one gptme did not run (no failure), the file's
    last call left unanswered is."""
    said = [PROMPT, {"role": "user", "content": "go", "timestamp": "2026-12-01T10:00:00"}]
    for content, result in (
            ('<think>\nnot this:\n```text\n@shell(x0): {"command": "rm -rf ~"}\n```\n</think>\nA call in tool format:'
             '\n\n```text\n@shell(x1): {"command": "rm -rf /"}\n```\n\n````shell\nls\n````',
             "Ran command: `ls`\n\n`a`\n"),
            ("```shell\nsleep 100\n```", "Interrupted by user"),
            ("```ipython\n1/0\n```", "Executed code block (Docker sandbox).\n\n```stderr\nTraceback (most recent call "
             "last):\n  File \"<string>\", line 1, in <module>\nZeroDivisionError: division by zero\n```\n\n"
             "Process exited with code 1\n"),
            ("```save notes.md\nhello\n```", None), ("```shell\nmake\n```", None)):
        said.append({"role": "assistant", "content": content, "timestamp": "2026-12-01T10:00:01"})
        if result is None:
            said.append({"role": "user", "content": "and?", "timestamp": "2026-12-01T10:00:03"})
        else:
            said.append({"role": "system", "content": result, "timestamp": "2026-12-01T10:00:02"})
    [run] = _runs(_write(tmp_path / "c" / "conversation.jsonl", *said[:-1])).values()
    assert [(s.action, s.arguments) for s in run.steps] == [
        ("shell", {"command": "ls"}), ("shell", {"command": "sleep 100"}), ("ipython", {"code": "1/0"}),
        ("save", {"path": "notes.md", "content": "hello"}), ("shell", {"command": "make"})]
    assert [s.error for s in run.steps] == [
        None, "Interrupted by user", "ZeroDivisionError: division by zero (exit code 1)", None, NEVER_ANSWERED]


def test_a_message_of_code_blocks_and_tool_format_calls_pairs_results_as_gptme_ran_them(tmp_path: Path) -> None:
    """gptme runs a message's code blocks before its ``tool``-format calls (``iter_from_content``), answering the
    latter by call id: a result without one is a code block's even where a ``tool``-format call is written first."""
    log = _write(tmp_path / "c" / "conversation.jsonl", PROMPT,
                 {"role": "user", "content": "go", "timestamp": "2026-12-01T10:00:00"},
                 {"role": "assistant", "content": '@shell(t1): {"command": "ls"}\n\n```shell\nfalse\n```',
                  "timestamp": "2026-12-01T10:00:01"},
                 {"role": "system", "content": "Ran command: `false`\n\nNo output\nReturn code: 1\n",
                  "timestamp": "2026-12-01T10:00:02"},
                 {"role": "system", "content": "Ran allowlisted command: `ls`\n\n`a.txt`\n", "call_id": "t1",
                  "timestamp": "2026-12-01T10:00:03"})
    [run] = _runs(log).values()
    assert [(s.arguments, s.error) for s in run.steps] == [
        ({"command": "ls"}, None), ({"command": "false"}, "No output (exit code 1)")]


def test_a_message_of_unclosed_fences_reads_in_one_pass(tmp_path: Path) -> None:
    """20,000 fences opened and never closed (254 KB) took 54 s to read when each opener looked for its close to
    the message's end; gptme reads an unclosed block as no call, in one pass. Here 80,000 (1 MB): about 15 minutes
    for the quadratic read, a tenth of a second for the linear one, so the alarm's 300 s bound fails only the
    former, however loaded the machine. The alarm fails the test; nothing waits on it."""
    content = "```shell\nx\n" * 80_000
    log = _write(tmp_path / "c" / "conversation.jsonl", PROMPT, {"role": "user", "content": "go",
                 "timestamp": "2026-12-01T10:00:00"}, {"role": "assistant", "content": content,
                                                        "timestamp": "2026-12-01T10:00:01"})

    def too_slow(*_: object) -> None:
        raise TimeoutError("reading one message of unclosed fences took over 300 s")

    previous = signal.signal(signal.SIGALRM, too_slow)
    signal.alarm(300)
    try:
        [run] = _runs(log).values()
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)
    [answer] = run.steps
    assert answer.action == "respond" and answer.arguments["content"].startswith("```shell\nx\n```shell")


def test_the_files_gptme_keeps_beside_a_log_and_its_compacted_views_are_no_runs_and_pass_unsaid(
        newcomer, tmp_path: Path) -> None:
    """gptme writes ``model_selection_trace.json`` on each save (``LogManager.write_model_trace``, since 0.32.2),
    ``config.toml`` (``ChatConfig``) and autocompact's compacted copies, ``views/<name>.jsonl``, beside a log: a walk
    rejected the first (exit 3), read a view as a second run of the conversation and named each settings file."""
    folder = tmp_path / ".local" / "share" / "gptme" / "logs" / CONVERSATION
    shutil.copytree(LOG.parent, folder)
    (folder / "model_selection_trace.json").write_text(json.dumps({
        "schema": "gptme.model-attestation/v0", "selected_at": "2026-12-07T07:46:16+00:00",
        "selection": {"source": {"kind": "cli", "detail": None}, "requested_model": "anthropic/claude-sonnet-4-5",
                      "resolved_model": "anthropic/claude-sonnet-4-5", "transport_provider": "anthropic",
                      "backend_provider": "anthropic", "alias_target": None, "resolution_notes": []},
        "identity": None}))
    (folder / "config.toml").write_text('[chat]\nmodel = "anthropic/claude-sonnet-4-5"\nstream = true\n')
    (folder / "views").mkdir()
    shutil.copy(LOG, folder / "views" / "compacted-001.jsonl")
    code, out, err = run_cli("ingest", str(folder.parent), "--dry-run")
    said = " ".join((out + err).split())
    assert code == 0 and "runs 1; rejected 0" in said, said
    assert not [n for n in ("model_selection_trace", "config.toml", "compacted", "passed over") if n in said], said
    assert set(_runs(folder.parent)) == {f"gptme.{CONVERSATION}"}
    code, out, err = run_cli("ingest", str(folder / "views" / "compacted-001.jsonl"), "--dry-run")
    assert "compacted view of a conversation, no run" in " ".join((out + err).split()), out + err


def test_local_times_are_read_on_the_file_s_clock_or_the_operator_s_zone(monkeypatch, tmp_path: Path) -> None:
    """gptme writes ``datetime.now().isoformat()``, local time with no zone, and rewrites the whole log on each
    message: its last time against the file's mtime tells the zone, else ``TRAJSEARCH_LOCAL_TZ``; each was ignored
    (read as UTC, ``created_at_zone`` none)."""
    log = shutil.copy(FORMATS / "2026-12-07-two-calls" / "conversation.jsonl", tmp_path / "conversation.jsonl")
    monkeypatch.setenv("TRAJSEARCH_LOCAL_TZ", "Europe/Berlin")  # UTC+1 in December
    [run] = _runs(log).values()
    assert run.created_at == datetime(2026, 12, 7, 7, 25, 7, 363065, tzinfo=timezone.utc)
    assert run.metadata["created_at_zone"] == "Europe/Berlin (TRAJSEARCH_LOCAL_TZ)"
    assert run.steps[0].started_at.astimezone(timezone.utc).isoformat().startswith("2026-12-07T07:25:0")
    # saved by gptme at its last message's time in New York (UTC-5): the mtime says so, whatever the operator's zone
    last = datetime.fromisoformat(json.loads(Path(log).read_text().splitlines()[-1])["timestamp"])
    written = last.replace(tzinfo=timezone(timedelta(hours=-5))).timestamp()
    os.utime(log, (written, written))
    [run] = _runs(log).values()
    assert run.created_at == datetime(2026, 12, 7, 13, 25, 7, 363065, tzinfo=timezone.utc)
    assert run.metadata["created_at_zone"].endswith("(the file's last time against its mtime)")


def test_a_refused_message_is_named_by_its_line_past_blank_and_malformed_lines(newcomer, tmp_path: Path) -> None:
    said = [json.dumps(PROMPT), json.dumps({"role": "user", "content": "hi", "timestamp": "2026-12-01T10:00:00"})]
    null = json.dumps({"role": "assistant", "content": None, "timestamp": "2026-12-01T10:00:01"})
    log = tmp_path / "conversation.jsonl"
    log.write_text("\n".join([*said, "", "{not json", null]) + "\n")
    code, out, err = run_cli("ingest", str(log), "--dry-run")
    assert "line 5: an assistant message whose content is null" in " ".join((out + err).split()), out + err

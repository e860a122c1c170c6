"""Coding-agent CLIs' headless outputs and side files, as a probe found them in real repositories (round p39).

Fixtures (each folder's SOURCE.md names the repository, commit and path): ``claude-code/.real/harbor-datagen``
(Claude Code 2.0.46 under ``claude -p``, captured by Harbor), ``claude-code/.real/randlee`` (2.1.29 prompt
suggestion), ``gemini-cli/.real/metaphi`` (two ``gemini -p`` stream-json invocations in one file).
"""

from __future__ import annotations

import logging
import shutil
from pathlib import Path

import pytest

from trajsearch.ingest.detect import SideFile
from trajsearch.ingest.read import read_dump
from trajsearch.model import Outcome

import adapter_support

FIXTURES = Path(__file__).parent / "fixtures"
HARBOR = FIXTURES / "claude-code" / ".real" / "harbor-datagen"
SUGGESTION = FIXTURES / "claude-code" / ".real" / "randlee" / "agent-aprompt_suggestion-54c7bb.jsonl"
HOOK_STREAM = FIXTURES / "claude-code" / ".real" / "headless-stream-json-session-start-hook.jsonl"
GEMINI_TWO = FIXTURES / "gemini-cli" / ".real" / "metaphi" / "49bdd49a-two-invocations.jsonl"


def test_a_claude_stream_with_a_subagent_does_not_take_the_subagents_prompt_as_its_task() -> None:
    """D1 (real 2.0.46 ``claude -p --output-format stream-json`` stdout, lines 1-7, 14, 49 and 71 of 71): the only user
    text in the stream is the prompt the main agent wrote for its Explore subagent (``parent_tool_use_id`` = the Task
    call), and the subagent's Glob was merged into the main run. The user's own request is not in the stream: the
    file says so and names the transcript, as a stream without a subagent does."""
    [result] = read_dump(HARBOR / "etl_checkpoint_resume_bug.stream.jsonl", tenant="acme")
    assert not result.ok
    assert result.error.startswith("no user prompt: headless `claude -p --output-format stream-json`")
    assert "~/.claude/projects/<project>/245d792f-ae24-4893-bb43-8483bb069bfe.jsonl" in result.error


def test_a_claude_stream_run_has_an_id_apart_from_its_sessions_transcript() -> None:
    """D1: a stream that echoes the prompt (real 2.1.332, ``--replay-user-messages``) is a run, but not the
    transcript's ``claude-code.<session id>``: ingested from one folder, the two no longer collide."""
    run = adapter_support.only(HOOK_STREAM, tenant="acme")
    assert run.trajectory_id.startswith("claude-code.71946918-d318-4e1d-8d6d-77a8a26c75de.stream-")
    assert run.task.startswith("SCEN-A: add 2 and 3 with the demo tool")


def test_a_claude_prompt_suggestion_is_passed_over_saying_what_it_is() -> None:
    """D2 (real 2.1.29 ``agent-aprompt_suggestion-<id>.jsonl``): the CLI's background "what will the user type next"
    call was a run whose task was the CLI's "[SUGGESTION MODE: ...]" instruction."""
    assert list(read_dump(SUGGESTION.parent, tenant="acme")) == []  # walked: passed over
    with pytest.raises(ValueError, match="no run in this file: a Claude Code prompt suggestion in session 967e501d-"):
        list(read_dump(SUGGESTION, tenant="acme"))  # named: said what it is


def test_a_headless_claude_subagent_file_without_its_prompt_is_a_run_of_its_calls() -> None:
    """D3 (real 2.0.46 ``agent-e3dc8d7d.jsonl``, its first 7 of 50 lines): under ``claude -p`` the subagent's file
    opens with its reply, no prompt record; it was rejected "no user prompt" and its calls were lost."""
    run = adapter_support.only(HARBOR / "agent-e3dc8d7d.jsonl", tenant="acme")
    assert run.trajectory_id == "claude-code.245d792f-ae24-4893-bb43-8483bb069bfe.agent-e3dc8d7d"
    assert run.task.startswith("(this subagent's file does not record the prompt it was given")
    assert run.task.endswith("I'll search for ETL migration scripts with checkpoint and batch processing logic. "
                             "Let me perform a comprehensive search across the codebase.")
    assert run.metadata["prompt_not_recorded"] is True
    assert [s.action for s in run.steps] == ["Glob"] * 4
    assert [s.arguments["pattern"] for s in run.steps] == ["**/*migration*", "**/*etl*", "**/*.py", "**/*.sql"]
    assert run.steps[1].observation == "No files found"


def test_a_headless_claude_subagent_warmup_without_its_prompt_is_passed_over() -> None:
    """D3 (real 2.0.46 ``agent-48240cef.jsonl``): the reply to the CLI's own "Warmup", whose prompt ``claude -p`` did
    not write, was a rejection; a warm-up that records its prompt is passed over, and so is this one now."""
    warmup = HARBOR / "agent-48240cef.jsonl"
    with pytest.raises(ValueError, match="no run in this file: a Claude Code subagent's warm-up in session 245d792f-"):
        list(read_dump(warmup, tenant="acme"))
    results = list(read_dump(HARBOR, tenant="acme"))
    assert [r.trajectory.trajectory_id for r in results if r.ok] == [
        "claude-code.245d792f-ae24-4893-bb43-8483bb069bfe.agent-e3dc8d7d"]
    assert [r.source for r in results if not r.ok] == [str(HARBOR / "etl_checkpoint_resume_bug.stream.jsonl")]


def test_the_agent_clis_session_folders_are_walked_though_hidden(tmp_path: Path, caplog) -> None:
    """D4: the walk left out every path with a dot folder, so a project that committed ``.gemini/tmp`` or a backup of
    ``~/.claude`` read as 0 runs, silently. Their session folders are walked now; other hidden folders are still
    left out (a virtualenv's JSON), and the walk says so."""
    chats = tmp_path / ".gemini" / "tmp" / ("f" * 64) / "chats"
    projects = tmp_path / "home" / ".claude" / "projects" / "-workspace"
    venv = tmp_path / ".venv" / "lib"
    for folder in (chats, projects, venv):
        folder.mkdir(parents=True)
    shutil.copy(FIXTURES / "gemini-cli" / ".real" / "session-continue-init.jsonl",
                chats / "session-2026-01-30T06-08-7befeae5.jsonl")
    shutil.copy(HARBOR / "agent-e3dc8d7d.jsonl", projects)
    (venv / "package.json").write_text('{"name": "not a run"}')
    with caplog.at_level(logging.WARNING, logger="trajsearch.ingest.read"):
        runs = adapter_support.runs(tmp_path, tenant="acme")
    assert sorted(r.metadata["source_format"] for r in runs) == ["claude-code", "gemini-cli"]
    assert "1 file(s) under hidden folders not read (.venv: 1)" in caplog.text


def test_two_gemini_invocations_appended_to_one_stream_file_are_two_runs() -> None:
    """D5 (real Gemini CLI stream-json, metaphi-agent: a failed ``gemini -p`` and its retry 16 hours later, appended
    to one file): both were one run under the first session id, the retry's steps after the failure."""
    failed, retry = adapter_support.runs(GEMINI_TWO, tenant="acme")
    assert failed.trajectory_id.startswith("gemini-cli.66268ffc-d63d-4f98-b413-900eef4fd2db.turn-")
    assert retry.trajectory_id.startswith("gemini-cli.8491166e-bcfc-4be4-90be-7116d2d1a1d1.turn-")
    assert failed.outcome is Outcome.infra_error and retry.outcome is Outcome.unknown
    assert [s.action for s in failed.steps] == ["activate_skill"]
    assert [s.action for s in retry.steps] == ["activate_skill"]
    assert retry.created_at.isoformat().startswith("2026-01-30T22:02:47")


def test_a_transcript_record_typed_result_is_not_headless_output() -> None:
    """Review p39 F3 (claudeless's 2.1.12 plan-mode transcript): a record ``{"type": "result", "toolUseId", ...}``
    made the transcript count as headless stream output, so its run took a ``.stream-<digest>`` id apart from the
    same transcript without that record. Headless output's ``result`` has a ``subtype`` and the ``session_id``."""
    path = Path(__file__).parent / "fixtures" / "claude-code" / ".real" / "claudeless" / "plan-mode-session.jsonl"
    (parsed,) = list(read_dump(path, tenant="acme"))
    assert parsed.ok and ".stream-" not in parsed.trajectory.trajectory_id


SKILLSBENCH = FIXTURES / "claude-code" / ".aud7" / "skillsbench-no-atif" \
    / "claude-code-claude-opus-4-5-skills-econ-detrending-correlation-916cde"


def test_harbor_headless_output_with_no_conversion_is_the_trials_run_with_its_verdict(tmp_path: Path) -> None:
    """Round 27, AUD7 (real SkillsBench trial, Claude Code 2.1.19 under Harbor, cut): Harbor kept ``claude -p``'s
    stream-json (``agent/claude-code.txt``, which never echoes the instruction) and no transcript, so no ATIF. The file
    was rejected "no user prompt ... ingest the session transcript instead", a transcript the trial does not have: the
    run and its graded verdict (reward 1.0 in ``result.json``) were lost. It is now the trial's run, its task naming the
    Harbor task and what the agent first said. Where Harbor did convert the session (``agent/trajectory.json``), that
    file is the trial's run: the output named alone stays a rejection, not a second run of the trial. This trial's
    ``config.json`` is derived from ``result.json``'s config block (the stored copy lacks it: SOURCE.md; read without
    it since round 28, below)."""
    [result] = read_dump(SKILLSBENCH / "agent" / "claude-code.txt", tenant="acme")
    assert result.ok, result.error
    run = result.trajectory
    assert "Harbor task: econ-detrending-correlation" in run.task
    assert "The files are binary Excel files" in run.task
    assert (run.outcome, run.reward) == (Outcome.success, 1.0)
    assert run.metadata["trial_name"] == "econ-detrending-correlation__AuCQ72j"
    assert run.metadata["prompt_not_recorded"] is True
    assert [s.action for s in run.steps] == ["Read", "Read", "Read", "Bash", "Bash", "Read", "respond"]
    assert [bool(s.error) for s in run.steps[:4]] == [True, True, True, False]

    assert run.task_id == "econ-detrending-correlation"  # as the ATIF runs of Harbor trials have it (atif.trial_task)
    assert run.created_at.isoformat() == "2026-01-26T02:21:48.152929+00:00"  # the agent's start in result.json


def _trial_copy(tmp_path: Path, trial: Path) -> Path:
    copy = tmp_path / trial.name
    shutil.copytree(trial, copy)
    return copy


#: A Harbor ATIF conversion of the trial's session that names its task (a user step): the trial's run.
_CONVERSION = ('{"schema_version": "ATIF-v1.2", "session_id": "s1", "agent": {"name": "claude-code", "version": '
               '"2.1.19"}, "steps": [{"step_id": 1, "source": "user", "message": "Detrend the series."}, '
               '{"step_id": 2, "source": "agent", "message": "Done."}]}')


#: The session the SkillsBench trial's output names in its ``init`` record, by which the CLI names its transcript.
_SESSION = "01169f8f-14dc-401a-9d50-dfafd5957016"


@pytest.mark.parametrize("beside, kept", [
    ({f"agent/sessions/projects/-app/{_SESSION}.jsonl": "{}\n"}, False),  # the transcript, not converted (M4)
    ({"agent/trajectory.json": "{}"}, True),  # no conversion: the trial's run is still this output (M5)
    # review of AUD8 (3): a file there that is not the session's transcript is none: a subagent's, empty where it
    # never ran (then no run of the trial was read), another session's
    ({"agent/sessions/projects/-root/agent-a1b2c3d.jsonl": ""}, True),
    ({"agent/sessions/projects/-root/agent-a1b2c3d.jsonl": "{}\n", "agent/sessions/projects/-app/0f4c.jsonl": "{}\n",
      f"agent/sessions/projects/-app/{_SESSION}.jsonl": ""}, True),
])
def test_harbor_headless_output_is_the_trials_run_only_when_the_trial_kept_no_other(
        tmp_path: Path, beside: dict[str, str], kept: bool) -> None:
    """Review of AUD7 (M4, M5): a trial has one run. Harbor converts the transcript under ``agent/sessions/projects/``
    to ``agent/trajectory.json``, but writes none when the conversion fails or finds several project folders: the
    transcript is then the trial's run, and ``claude-code.txt`` was a second one. A ``trajectory.json`` that is no
    ATIF conversion naming the task (``{}``) is no run, so it does not take the output's place. Beside the transcript
    the output is passed over naming it (round 28, AUD8: a walk reads the output, and had rejected it there)."""
    trial = _trial_copy(tmp_path, SKILLSBENCH)
    for name, text in beside.items():
        (trial / name).parent.mkdir(parents=True, exist_ok=True)
        (trial / name).write_text(text)
    if not kept:
        with pytest.raises(SideFile, match=rf"which kept the session's transcript: the trial's run is .*{_SESSION}"):
            read_dump(trial / "agent" / "claude-code.txt", tenant="acme")
        return
    [result] = read_dump(trial / "agent" / "claude-code.txt", tenant="acme")
    assert result.ok, result.error


def test_harbor_headless_output_beside_a_conversion_naming_the_task_is_passed_over(tmp_path: Path) -> None:
    """Where Harbor converted the session to ATIF (its task named), that is the trial's run and the output none."""
    trial = _trial_copy(tmp_path, SKILLSBENCH)
    (trial / "agent" / "trajectory.json").write_text(_CONVERSION)
    with pytest.raises(SideFile, match="which Harbor converted to ATIF: the trial's run is .*trajectory.json"):
        read_dump(trial / "agent" / "claude-code.txt", tenant="acme")


WYCKOFF = SKILLSBENCH.parent / "claude-code-claude-haiku-4-5-skills-crystallographic-wyckoff-posit-66c0fc"


def test_harbor_headless_output_takes_the_instruction_its_command_recorded_not_a_skills_text() -> None:
    """AUD7 (real SkillsBench trial, Claude Code 2.1.19 under Harbor, cut): the agent's first call was the ``Skill``
    tool, whose expansion of the skill's instructions ("Base directory for this skill: ...", 14 kB of SymPy notes) the
    stream writes as a user text record marked ``isSynthetic``; it was read as the user's prompt, so the run's task
    was SymPy's manual. The instruction Harbor gave ``claude -p`` is in ``agent/command-1/command.txt``, shell-quoted."""
    [result] = read_dump(WYCKOFF / "agent" / "claude-code.txt", tenant="acme")
    assert result.ok, result.error
    run = result.trajectory
    assert run.task.startswith("You are a materials science researcher. You want to analyze the crystal structure")
    assert "Base directory for this skill" not in run.task
    assert run.task.endswith("rounded to the closest rational number format, as shown in example output.")
    assert run.metadata["task_from"] == "agent/command-1/command.txt"
    assert (run.outcome, run.reward) == (Outcome.success, 0.55)
    assert [s.action for s in run.steps] == ["Skill", "TodoWrite", "Bash", "respond"]


def test_harbor_headless_answer_with_no_tool_call_is_a_run_when_its_command_names_the_instruction(
        tmp_path: Path) -> None:
    """Review of AUD7 (M3): an answer with no tool call in a trial whose ``command.txt`` records the instruction and
    whose ``result.json`` the verdict was rejected, pointing at a transcript the trial does not have. Only the
    fallback of the agent's first words needs work to name the run by."""
    trial = _trial_copy(tmp_path, WYCKOFF)
    stream = trial / "agent" / "claude-code.txt"
    lines = stream.read_text().splitlines()
    stream.write_text("\n".join([lines[0], lines[11], lines[12]]) + "\n")  # init, the answer, the result
    [result] = read_dump(stream, tenant="acme")
    assert result.ok, result.error
    assert result.trajectory.task.startswith("You are a materials science researcher.")
    assert (result.trajectory.outcome, result.trajectory.reward) == (Outcome.success, 0.55)

    (trial / "agent" / "command-1" / "command.txt").unlink()  # nothing names the instruction, no work names the run
    [result] = read_dump(stream, tenant="acme")
    assert not result.ok
    assert f"Harbor trial {trial.name} kept no transcript" in result.error


@pytest.mark.parametrize("command, task", [
    ('claude --verbose -p "$INSTRUCTION" --allowedTools Bash 2>&1 | tee /logs/agent/claude-code.txt', None),
    ('claude -p "$(cat /tmp/instruction.md)" | tee /logs/agent/claude-code.txt', None),
    ("claude -p < /tmp/instruction.md | tee /logs/agent/claude-code.txt", None),
    ("claude --verbose -p '<task>Find the Wyckoff positions.</task>' 2>&1 </dev/null | tee x.txt",
     "<task>Find the Wyckoff positions.</task>"),
    ("claude -p 'Print $HOME'\"'\"'s size' | tee x.txt", "Print $HOME's size"),  # single-quoted: as written
])
def test_harbor_command_gives_the_instruction_only_as_written(tmp_path: Path, command: str, task: str | None) -> None:
    """Review of AUD7 (M6): a ``-p`` argument the shell expands (a variable, a command substitution) or a redirection
    is not the instruction: the task was the literal ``$INSTRUCTION``. It now names the Harbor task instead; a
    quoted instruction starting with ``<`` was taken for a redirection and is now the task."""
    trial = _trial_copy(tmp_path, WYCKOFF)
    (trial / "agent" / "command-1" / "command.txt").write_text(command)
    [result] = read_dump(trial / "agent" / "claude-code.txt", tenant="acme")
    assert result.ok, result.error
    if task is None:
        assert "Harbor task: crystallographic-wyckoff-position-analysis" in result.trajectory.task
        assert "task_from" not in result.trajectory.metadata
    else:
        assert result.trajectory.task == task
        assert result.trajectory.metadata["task_from"] == "agent/command-1/command.txt"


def test_stream_json_whose_only_user_text_is_a_skills_expansion_outside_a_trial_is_refused(tmp_path: Path) -> None:
    """Review of AUD7: stand-alone ``claude -p`` stream-json whose only user text is the Skill tool's ``isSynthetic``
    expansion was a run whose task was the skill's manual; it now holds no prompt, so it is refused for the
    transcript, as any headless output is."""
    alone = tmp_path / "session.jsonl"
    shutil.copyfile(WYCKOFF / "agent" / "claude-code.txt", alone)
    [result] = read_dump(alone, tenant="acme")
    assert not result.ok
    assert "ingest the session transcript instead" in result.error


def test_harbor_headless_run_names_the_cli_version_its_init_record_gives() -> None:
    """Round 28, AUD8 (the real SkillsBench trial above, Claude Code 2.1.19): stream-json's records carry no
    ``version`` (a transcript's do), so the headless run had no ``cli_version`` and no tool version, though its
    ``init`` record names the CLI: ``"claude_code_version": "2.1.19"``."""
    [result] = read_dump(SKILLSBENCH / "agent" / "claude-code.txt", tenant="acme")
    run = result.trajectory
    assert run.metadata["cli_version"] == "2.1.19"
    assert run.tool_versions == {"claude-code": "2.1.19"}


def test_a_walk_of_harbor_trials_reads_the_headless_output_that_is_each_trials_run(tmp_path: Path) -> None:
    """Round 28, AUD8 (the two real SkillsBench trials above): in the stored copy of SkillsBench's published trials,
    its Claude Code trials of January 2026 list no transcript and no ATIF conversion, so each trial's run is its
    ``agent/claude-code.txt``; a walk passed over every ``.txt`` file, so ingesting the job folder read no run ("no
    run in the input"), and only naming each file read it. The walk now reads it in a Harbor trial, and passes it
    over where the trial kept the session's transcript."""
    job = tmp_path / "job"
    for trial in (SKILLSBENCH, WYCKOFF):
        shutil.copytree(trial, job / trial.name)
    stray = tmp_path / "job" / "notes" / "agent"  # not in a Harbor trial: not read, as any .txt file
    stray.mkdir(parents=True)
    shutil.copy(SKILLSBENCH / "agent" / "claude-code.txt", stray / "claude-code.txt")
    runs = [r.trajectory for r in read_dump(job, tenant="acme") if r.ok]
    assert sorted(r.task_id for r in runs) == ["crystallographic-wyckoff-position-analysis",
                                               "econ-detrending-correlation"]
    assert {r.reward for r in runs} == {1.0, 0.55}

    subagent = job / SKILLSBENCH.name / "agent" / "sessions" / "projects" / "-root" / "agent-a1b2c3d.jsonl"
    subagent.parent.mkdir(parents=True)
    subagent.touch()  # review of AUD8 (3): an empty subagent file is no transcript of the trial's session
    assert sorted(r.trajectory.reward for r in read_dump(job, tenant="acme") if r.ok) == [0.55, 1.0]

    transcript = subagent.parent / f"{_SESSION}.jsonl"
    shutil.copy(FIXTURES / "claude-code" / "5c0375b4-57a5-4f26-b12d-d022ee4e51b7.jsonl", transcript)
    results = list(read_dump(job, tenant="acme"))
    assert all(r.ok for r in results), [r.error for r in results if not r.ok]
    assert sorted(Path(r.source).name for r in results) == [f"{_SESSION}.jsonl", "claude-code.txt"]


def test_harbor_command_logs_are_the_trials_own_files_not_files_of_no_format(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    """Round 28, AUD8: Harbor's installed agents log each command they run under ``agent/command-<i>/`` and
    ``agent/setup/`` (``command.txt``, ``return-code.txt``, ``stdout.txt``); a walk of a job named each one "passed
    over by name" (a real job: two per trial), burying a file of runs among them. They are the trial's own."""
    trial = _trial_copy(tmp_path, WYCKOFF)
    (trial / "agent" / "setup").mkdir()
    (trial / "agent" / "setup" / "return-code.txt").write_text("0")
    caplog.set_level(logging.WARNING)
    assert [r.ok for r in read_dump(trial, tenant="acme")] == [True]
    assert "passed over by name" not in caplog.text
    with pytest.raises(SideFile, match="Harbor's log of the command-1 command it ran for the agent of trial"):
        read_dump(trial / "agent" / "command-1" / "command.txt", tenant="acme")


def test_harbor_trials_debug_logs_and_step_command_logs_are_its_own_files(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    """Review of AUD8 (7): Harbor copies Claude Code's config folder to ``agent/sessions/``, with the CLI's debug
    log ``debug/<session id>.txt`` (in the stored SkillsBench copy, one in each Claude Code trial listed), and a
    multi-step trial (Harbor 0.25) logs its commands under ``steps/<step>/agent/command-<i>/``: each was "passed
    over by name"."""
    trial = _trial_copy(tmp_path, WYCKOFF)
    debug = trial / "agent" / "sessions" / "debug" / "49795d1d-59c8-4095-8f20-0fb039c4143d.txt"
    debug.parent.mkdir(parents=True)
    debug.write_text(  # the real file's first 3 lines (79,644 characters; same repository, commit b35ff4de)
        "2026-01-26T18:28:21.091Z [ERROR] Failed to save config with lock: Error: ENOENT: no such file or directory, "
        "lstat '/logs/agent/sessions/.claude.json'\n"
        "2026-01-26T18:28:21.092Z [DEBUG] Writing to temp file: "
        "/logs/agent/sessions/.claude.json.tmp.1429.1769452101092\n"
        "2026-01-26T18:28:21.092Z [DEBUG] Setting permissions for new file: 600\n")
    multi = tmp_path / "hello-multi__pI7xYz"
    shutil.copytree(FIXTURES / "atif" / ".real" / "harbor-0.25" / multi.name, multi)
    (multi / "config.json").write_text('{"trial_name": "hello-multi__pI7xYz"}')
    command = multi / "steps" / "build" / "agent" / "command-1"  # a step whose agent kept no ATIF conversion
    command.mkdir(parents=True)
    (command / "return-code.txt").write_text("0")
    caplog.set_level(logging.WARNING)
    assert [r.ok for r in read_dump(tmp_path, tenant="acme")] == [True, True, True]
    assert "passed over by name" not in caplog.text
    with pytest.raises(SideFile, match="Claude Code's debug log in Harbor trial claude-code-claude-haiku"):
        read_dump(debug, tenant="acme")
    with pytest.raises(SideFile, match="Harbor's log of the command-1 command it ran for the agent of trial hello-"):
        read_dump(command / "return-code.txt", tenant="acme")


def test_a_harbor_trial_copied_without_its_config_is_still_a_trial(tmp_path: Path) -> None:
    """Round 28, AUD8: the stored copy of SkillsBench's trials holds ``result.json`` without ``config.json`` in most
    folders (this trial's among them: AUD7 derived its ``config.json``), and a trial was told by ``config.json``
    alone, so the headless run was rejected ("no user prompt") and, in a walk, ``result.json`` was a rejection
    ("unrecognised dump format"). A ``result.json`` that is Harbor's ``TrialResult`` (trial and task names, agent
    info, the trial config) beside the agent's logs says the folder is a trial."""
    trial = _trial_copy(tmp_path, SKILLSBENCH)
    (trial / "config.json").unlink()
    [result] = read_dump(trial / "agent" / "claude-code.txt", tenant="acme")
    assert result.ok, result.error
    assert (result.trajectory.outcome, result.trajectory.reward) == (Outcome.success, 1.0)
    results = list(read_dump(tmp_path, tenant="acme"))
    assert [(Path(r.source).name, r.ok) for r in results] == [("claude-code.txt", True)]

    (trial / "result.json").write_text('{"id": "x", "started_at": null, "n_total_trials": 1, "stats": {}}')
    [result] = read_dump(trial / "agent" / "claude-code.txt", tenant="acme")  # a job's result.json: no trial
    assert not result.ok and "ingest the session transcript instead" in result.error

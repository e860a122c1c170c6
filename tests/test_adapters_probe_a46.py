"""Round 46's probe A read through the public reader: Harbor 0.26.0 trials of the ``kimi-cli`` (A1), ``strands``
and ``hermes`` (A2-A5) installed agents.

Fixtures: ``fixtures/atif/.real/harbor-0.26-{strands,kimi-cli,hermes}`` (Harbor's own conversions of real runs of
each agent, beside the files it converted); see each SOURCE.md. Shapes the files lack are made in ``tmp_path`` from
them, following Harbor's converters (``harbor/agents/installed/*.py``, named there).
"""

from __future__ import annotations

import json
import logging
import shutil
from pathlib import Path

import pytest

from trajsearch.ingest.read import SideFile, read_dump
from trajsearch.model import Outcome

from adapter_support import only
from cli_support import run_cli

REAL = Path(__file__).parent / "fixtures" / "atif" / ".real"
STRANDS = REAL / "harbor-0.26-strands" / "fix-config__s1"
STRANDS_CRASH = REAL / "harbor-0.26-strands" / "api-error__s2"
KIMI = REAL / "harbor-0.26-kimi-cli" / "fix-config__k1"
HERMES = REAL / "harbor-0.26-hermes" / "fix-config__h1"
TASK = "Fix the config: read /nonexistent/config.yaml and write the value into out.txt."


def _ingest(trial: Path, tmp_path: Path, caplog: pytest.LogCaptureFixture) -> dict[str, int]:
    """``trajsearch ingest`` of a job holding one trial: its JSON summary (the exit code must be 0)."""
    job = tmp_path / "job"
    shutil.copytree(trial, job / trial.name)
    with caplog.at_level(logging.INFO, logger="trajsearch.ingest.read"):
        code, out, err = run_cli("ingest", str(job), "-t", "acme", "--json")
    assert code == 0, out + err
    return json.loads(out)


# -- A1: kimi-cli's conversion keeps no user step ------------------------------------------------


def test_a_harbor_kimi_cli_trial_is_its_atif_run_with_the_task_of_the_wire_log_it_converted(home: Path) -> None:
    """Bug (probe A, A1): Harbor's ``KimiCli._convert_events_to_trajectory`` never writes the wire's ``TurnBegin``
    (the prompt) as a user step, so every kimi-cli trial was rejected "no task"; the task is that event's
    ``user_input`` in ``agent/kimi-cli.txt``, the log Harbor converted."""
    run = only(KIMI / "agent" / "trajectory.json")
    assert run.task == TASK
    assert [s.action for s in run.steps] == ["Shell", "Shell", "respond"]
    assert (run.outcome, run.reward) == (Outcome.failure, 0.0)


def test_a_harbor_kimi_cli_trials_raw_session_is_passed_over(
        home: Path, tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    """Bug (probe A, A1): Kimi's share folder (``kimi.json``, the session's ``wire.jsonl`` / ``state.json``) was
    "unrecognised dump format ... (pass --format NAME to force one)": exit 4 and no run for the trial."""
    summary = _ingest(KIMI, tmp_path, caplog)
    assert (summary["ingested"], summary["rejected"]) == (1, 0)
    assert caplog.text.count("a file the kimi-cli agent left (no run) in Harbor trial fix-config__k1") == 3


# -- A2: the agents' own files Harbor converts ---------------------------------------------------


@pytest.mark.parametrize("trial, agent, files", [
    (STRANDS, "strands", ("strands-events.jsonl", "strands-result.json")),
    (HERMES, "hermes", ("hermes-session.jsonl",)),
], ids=["strands", "hermes"])
def test_a_harbor_trials_own_agent_files_are_passed_over(
        home: Path, tmp_path: Path, caplog: pytest.LogCaptureFixture, trial: Path, agent: str,
        files: tuple[str, ...]) -> None:
    """Bug (probe A, A2): ``strands-events.jsonl`` / ``strands-result.json`` (``Strands._EVENTS_FILENAME`` /
    ``_RESULT_FILENAME``) and ``hermes-session.jsonl``, which each agent's ``populate_context_post_run`` converts to
    ``agent/trajectory.json``, were each an "unrecognised dump format": exit 3 for every clean trial."""
    summary = _ingest(trial, tmp_path, caplog)
    assert (summary["ingested"], summary["rejected"]) == (1, 0)
    for name in files:
        said = rf"a file the {agent} agent left \(no run\) in Harbor trial {trial.name}, which Harbor converted"
        with pytest.raises(SideFile, match=said):
            list(read_dump(trial / "agent" / name))


def test_an_unread_file_beside_an_atif_outside_a_trial_is_still_rejected(tmp_path: Path) -> None:
    """The rule needs the trial (its ``result.json``) and the conversion naming its task: elsewhere a file of no
    format is what it was, unrecognised."""
    agent = tmp_path / "loose" / "agent"
    shutil.copytree(STRANDS / "agent", agent)
    with pytest.raises(ValueError, match="unrecognised dump format"):
        list(read_dump(agent / "strands-result.json"))


# -- A3: a crashed agent's failure ----------------------------------------------------------------


def test_a_crashed_harbor_trials_failure_is_the_decisive_line_of_the_exception(home: Path) -> None:
    """Bug (probe A, A3): the failure was the last 500 characters of Harbor's ``NonZeroAgentExitCodeError`` message
    (the runner's stderr cut to its head and tail), from the middle of a traceback frame."""
    run = only(STRANDS_CRASH / "agent" / "trajectory.json")
    assert run.outcome is Outcome.infra_error and run.failure is not None
    assert run.failure.error.startswith("NonZeroAgentExitCodeError: strands.types.exceptions.EventLoopException: "
                                        "Error code: 500 - ")


def test_an_atif_read_alone_fails_on_its_root_extra_error(home: Path, tmp_path: Path) -> None:
    """Bug (probe A, A3): Harbor's strands converter writes the exception the agent died of as the root
    ``extra.error`` (``{"message", "traceback"}``); read outside its trial the run was ``unknown``, no failure."""
    alone = tmp_path / "strands-api-error.trajectory.json"
    shutil.copy(STRANDS_CRASH / "agent" / "trajectory.json", alone)
    run = only(alone)
    assert run.outcome is Outcome.infra_error and run.failure is not None
    assert run.failure.error.startswith("Error code: 500 - ")


# -- A4: converter placeholders -------------------------------------------------------------------


@pytest.mark.parametrize("trial", [STRANDS, HERMES, KIMI], ids=["strands", "hermes", "kimi-cli"])
def test_a_converters_placeholder_message_is_no_thought(home: Path, trial: Path) -> None:
    """Bug (probe A, A4): Harbor's converters write ``(tool calls)`` (strands), ``[tool call]`` (hermes),
    ``(tool use)`` (kimi-cli) for a turn with calls and no text: each was the call's thought, indexed."""
    run = only(trial / "agent" / "trajectory.json")
    calls = [s for s in run.steps if s.action != "respond"]
    assert calls and all(s.thought is None for s in calls)


@pytest.mark.parametrize("placeholder", ["[tool call: sandbox_shell]", "[empty response]"])
def test_trae_and_goose_placeholders_are_no_words_of_the_agent(home: Path, tmp_path: Path, placeholder: str) -> None:
    """trae's converter (``trae_agent.py``) writes ``[tool call: NAMES]`` / ``[empty response]``, goose's
    ``[tool call: NAME]``: a turn with calls gets no thought, one without is no answer."""
    document = json.loads((STRANDS / "agent" / "trajectory.json").read_text(encoding="utf-8"))
    for step in document["steps"][1:]:
        step["message"] = placeholder if "tool_calls" in step or placeholder == "[empty response]" else step["message"]
    (tmp_path / "t.json").write_text(json.dumps(document), encoding="utf-8")
    run = only(tmp_path / "t.json")
    assert all(s.thought is None for s in run.steps)
    assert "respond" not in [s.action for s in run.steps] if placeholder == "[empty response]" else True


# -- A5: a JSON shell result's exit code -----------------------------------------------------------


@pytest.mark.parametrize("trial", [STRANDS, HERMES], ids=["strands", "hermes"])
def test_a_json_shell_results_non_zero_exit_code_is_the_steps_error(home: Path, trial: Path) -> None:
    """Bug (probe A, A5): strands' vended shell and hermes' ``terminal`` return ``{"output", "error",
    "exit_code"}`` for every command; the failing ``cat`` (``exit_code`` 1) was no error."""
    run = only(trial / "agent" / "trajectory.json")
    assert run.steps[0].error == "cat: /nonexistent/config.yaml: No such file or directory (exit code 1)"
    later = [s for s in run.steps if s.arguments and "echo" in json.dumps(s.arguments)]
    assert all(s.error is None for s in later)  # exit_code 0

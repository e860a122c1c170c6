"""Round 45's probe A read through the public reader: a Harbor 0.26.0 trial of the ``qwen-code`` agent (A2), a
background sub-agent's report in ATIF (A4), a usage-only agent step in ATIF (A5).

Fixtures: ``fixtures/atif/.real/harbor-0.26-qwen-code/delegate__q2`` (Harbor's own conversion of a real Qwen Code
0.24.4 session, with the raw session where Harbor copies it) and ``fixtures/atif/.real/harbor-0.25/cc-proj2``
(Harbor 0.25.0's conversion of a real Claude Code 2.1.332 session); see each SOURCE.md. Shapes the files lack are
made in ``tmp_path`` from them, following the writers' code (named there).
"""

from __future__ import annotations

import json
import logging
import shutil
from pathlib import Path

import pytest

from trajsearch.ingest.read import SideFile, read_dump
from trajsearch.model import Outcome

from adapter_support import only, runs
from cli_support import run_cli

FIXTURES = Path(__file__).parent / "fixtures"
QWEN_TRIAL = FIXTURES / "atif" / ".real" / "harbor-0.26-qwen-code" / "delegate__q2"
QWEN_ATIF = QWEN_TRIAL / "agent" / "trajectory.json"
QWEN_PROJECT = QWEN_TRIAL / "agent" / "qwen-sessions" / "-tmp-p45-probeA-qwen-work2"
SESSION = "1a3a04a2-767d-4258-88bd-1762412ad634"
CC_ATIF = FIXTURES / "atif" / ".real" / "harbor-0.25" / "cc-proj2" / "agent" / "trajectory.json"


# -- A2: the raw Qwen Code session of a Harbor trial --------------------------------------------


def test_a_harbor_qwen_code_trial_is_its_atif_runs_and_its_raw_session_is_passed_over(
        home: Path, tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    """Bug (probe A, A2): Harbor's ``QwenCode.run`` copies ``~/.qwen/projects/`` to ``agent/qwen-sessions/``, the
    session it converts to ``agent/trajectory.json``; trajsearch reads no Qwen Code session, so the chat file and
    the sub-agent's ``.meta.json`` were each "unrecognised dump format ... (pass --format NAME to force one)" and
    every clean trial exited 3 (the sub-agent's transcript, taken for Claude Code's, was passed over as such)."""
    job = tmp_path / "job"
    shutil.copytree(QWEN_TRIAL, job / QWEN_TRIAL.name)
    dead = tmp_path / "dead-letter.jsonl"
    with caplog.at_level(logging.INFO, logger="trajsearch.ingest.read"):
        code, out, err = run_cli("ingest", str(job), "-t", "acme", "--json", "--dead-letter", str(dead))
    assert code == 0, out + err
    assert (json.loads(out)["ingested"], json.loads(out)["rejected"]) == (2, 0)  # the run and its sub-agent's
    assert not dead.exists() or not dead.read_text()
    assert caplog.text.count("the agent's raw Qwen Code session in Harbor trial delegate__q2") == 3


@pytest.mark.parametrize("named", [
    QWEN_PROJECT / "chats" / f"{SESSION}.jsonl",
    QWEN_PROJECT / "subagents" / SESSION / "agent-general-purpose-call_m1.jsonl",
    QWEN_PROJECT / "subagents" / SESSION / "agent-general-purpose-call_m1.meta.json",
], ids=["chat", "subagent", "subagent-meta"])
def test_a_file_of_a_harbor_trials_raw_qwen_code_session_named_alone_says_what_it_is(named: Path) -> None:
    with pytest.raises(SideFile, match="raw Qwen Code session in Harbor trial delegate__q2, which Harbor converted"):
        list(read_dump(named))


def test_a_qwen_code_session_without_its_trials_conversion_is_not_passed_over(tmp_path: Path) -> None:
    """Where Harbor wrote no conversion (its converter failed), the raw session is not said to be converted: it is
    read, the trial's run (and its sub-agent's) as Qwen Code wrote them."""
    trial = tmp_path / "job" / QWEN_TRIAL.name
    shutil.copytree(QWEN_TRIAL, trial)
    (trial / "agent" / "trajectory.json").unlink()
    results = list(read_dump(trial / "agent" / "qwen-sessions"))
    assert not [r for r in results if "converted" in (r.error or "")]
    assert sorted(r.trajectory.trajectory_id for r in results if r.ok) == [
        f"qwen-code.{SESSION}", f"qwen-code.{SESSION}.agent-general-purpose-call_m1"]


# -- A4: a background sub-agent's report -------------------------------------------------------


def test_atif_background_subagent_report_joins_the_call_that_launched_it() -> None:
    """Bug (probe A, A4): the ``<task-notification>`` user turn (Qwen Code's, Claude Code's) was dropped as text the
    CLI wrote, so the ``agent`` call's observation only said "Background agent launched successfully" and what the
    sub-agent found appeared nowhere in the parent run. It joins the call its ``<tool-use-id>`` names, as the Claude
    Code reader joins it in a native session."""
    qwen = runs(QWEN_ATIF)[0]
    [agent] = [s for s in qwen.steps if s.action == "agent"]
    assert agent.observation.startswith("Background agent launched successfully.")
    assert agent.observation.endswith("\nSUBTASK-7 report: the directory /nonexistent-dir does not exist.")
    assert agent.error is None and qwen.outcome is Outcome.success
    [cc_agent] = [s for s in only(CC_ATIF).steps if s.action == "Agent"]
    assert cc_agent.observation.endswith("\nnotes.txt has 3 lines.")


def _with_notification(tmp_path: Path, source: Path, edit) -> Path:
    """``source`` with its ``<task-notification>`` user turn's message passed through ``edit``."""
    document = json.loads(source.read_text())
    [step] = [s for s in document["steps"] if str(s.get("message", "")).startswith("<task-notification>")]
    step["message"] = edit(step["message"])
    path = tmp_path / "agent" / "trajectory.json"
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps(document))
    return path


def test_atif_report_naming_only_its_task_id_joins_the_call_that_launched_it(tmp_path: Path) -> None:
    """Claude Code 2.1.9 names a background agent only by ``<task-id>`` (no ``<tool-use-id>``): the call is the one
    whose result launched that task (its ``toolUseResult``, kept by Harbor's Claude Code conversion as
    ``extra.tool_result_metadata.tool_use_result``: ``isAsync``, ``agentId``)."""
    path = _with_notification(tmp_path, CC_ATIF, lambda m: "\n".join(
        line for line in m.split("\n") if not line.startswith("<tool-use-id>")))
    [agent] = [s for s in only(path).steps if s.action == "Agent"]
    assert agent.observation.endswith("\nnotes.txt has 3 lines.")


def test_atif_report_of_a_failed_background_agent_is_its_calls_error(tmp_path: Path) -> None:
    """A sub-agent that failed: Qwen Code writes ``<status>failed</status>``, ``<summary>Agent "..." failed.</summary>``
    and ``<result>Error: ...</result>`` (``BackgroundTaskRegistry``'s notification)."""
    path = _with_notification(tmp_path, QWEN_ATIF, lambda m: m.replace(
        "<status>completed</status>", "<status>failed</status>").replace(
        'completed.</summary>', 'failed.</summary>').replace(
        "<result>SUBTASK-7 report: the directory /nonexistent-dir does not exist.</result>",
        "<result>Error: model request failed</result>"))
    [agent] = [s for s in runs(path)[0].steps if s.action == "agent"]
    assert agent.observation.endswith("\nError: model request failed")
    assert agent.error == 'Agent "inspect dir" failed.'


# -- A5: a usage-only agent step ----------------------------------------------------------------


def test_atif_usage_only_agent_step_is_no_answer() -> None:
    """Probe A, A5 (fixed with probe F's F4, a reasoning-only turn): Harbor's Qwen Code converter writes Qwen's
    usage-only record (``parts: []``) as an agent step with an empty message and metrics only; it was a ``respond``
    step with empty content before the sub-agent's real call."""
    sub = runs(QWEN_ATIF)[1]
    assert [s.action for s in sub.steps] == ["run_shell_command", "respond"]
    assert sub.steps[-1].arguments == {"content": "SUBTASK-7 report: the directory /nonexistent-dir does not exist."}

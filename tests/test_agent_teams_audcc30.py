"""Claude Code agent teams (2.1.x), read from real transcripts (``fixtures/claude-code/.audcc30``, Claude Code
2.1.62): a teammate is a session of its own the lead spawned, and the agents' messages to each other arrive as user
records of ``<teammate-message>`` blocks, which were read as the user's prompts: a teammate's run had the wrapper and
the team's JSON as its task and stood as a top-level run, and the lead's run took a teammate's report (or, in a file
that starts mid-conversation, its idle notice) as its task or as a prompt of its user."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any, Callable

import pytest

from trajsearch.ingest.read import read_dump
from trajsearch.model import Outcome

FIXTURES = Path(__file__).parent / "fixtures"
TEAM = FIXTURES / "claude-code" / ".audcc30" / "agent-team"
LEAD = "35ef783f-75ce-4018-8f1f-de32c96867ff.jsonl"
TEAMMATE = "1dfef963-31ee-4d66-8147-29765f618a32.jsonl"
#: Claude Code 2.1.337's real ``claude -p`` session (no team), and the SkillsBench Harbor trial (reward 1.0) that
#: ``test_harbor_raw_runs`` lays it in.
SDK = FIXTURES / "claude-code" / ".r28" / "agent-sdk-0.3.337"
SESSION = "e20655e3-fa4e-4435-ba5d-7b9144d80381"
SKILLSBENCH = FIXTURES / "claude-code" / ".aud7" / "skillsbench-no-atif" \
    / "claude-code-claude-opus-4-5-skills-econ-detrending-correlation-916cde"


def test_a_teammates_session_is_a_sub_agent_run_whose_task_is_the_leads_request() -> None:
    """The teammate's first record holds two blocks from ``team-lead``: a ``task_assignment`` (JSON) and the lead's
    briefing. Its task is what they ask, the subject and description of the assignment, then the briefing; the run is
    a sub-agent's, named by its agent and team."""
    [result] = read_dump(TEAM / TEAMMATE, tenant="acme")
    run = result.trajectory
    assert run.task.startswith("Red-cell review of architecture and final integration\n\nRed-Cell Navigator Vaas. ")
    assert "== CREW BRIEFING ==" in run.task
    assert "<teammate-message" not in run.task and '"task_assignment"' not in run.task
    assert (run.metadata["is_subagent"], run.metadata["agent_name"], run.metadata["team_name"]) == \
        (True, "vaas", "nelson-memory")
    assert run.trajectory_id == "claude-code.1dfef963-31ee-4d66-8147-29765f618a32"


def test_a_teammates_report_to_the_lead_is_a_peer_message_not_the_users_prompt() -> None:
    [result] = read_dump(TEAM / LEAD, tenant="acme")
    run = result.trajectory
    assert run.metadata["starts_mid_conversation"] is True
    assert not run.task.startswith("<teammate-message") and "HMS Astute returning" not in run.task
    [peer] = run.metadata["peer_messages"]
    assert peer.startswith("astute: Admiral, HMS Astute returning to harbor with critical intelligence.")
    assert "user_prompts" not in run.metadata
    assert "is_subagent" not in run.metadata and "team_name" not in run.metadata  # the lead's is the top-level run
    assert [s.action for s in run.steps] == ["Task", "TaskUpdate", "respond", "respond"]


def test_a_teammates_idle_notice_is_no_ones_message() -> None:
    """The team's protocol messages (``idle_notification``, ``shutdown_request``) are the CLI's, between the agents."""
    [result] = read_dump(TEAM / "idle" / LEAD, tenant="acme")
    run = result.trajectory
    assert "idle_notification" not in run.task and "<teammate-message" not in run.task
    assert "peer_messages" not in run.metadata and "user_prompts" not in run.metadata


# Review of AUDCC (round 30): the findings' cases, each a real fixture changed in one place in the test.

def _rewritten(source: Path, folder: Path, change: Callable[[int, dict[str, Any]], None]) -> Path:
    """A copy of the real session ``source`` in ``folder`` (same name), ``change(number, record)`` applied to each
    record."""
    records = [json.loads(line) for line in source.read_text(encoding="utf-8").splitlines()]
    for number, record in enumerate(records):
        change(number, record)
    copy = folder / source.name
    copy.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return copy


def test_a_prompt_quoting_a_teammate_block_outside_a_team_is_still_the_users_task(tmp_path: Path) -> None:
    """Only a record of a team (``teamName``, which every real wrapper record carries) holds the team's messages: a
    user of no team who pastes one is asking something (the branch took it for a teammate's and rejected the run)."""
    prompt = ("Here is what my colleague's agent said:\n<teammate-message teammate_id=\"team-lead\">\n"
              "fix test_calc.py\n</teammate-message>")

    def ask(_: int, record: dict[str, Any]) -> None:  # the queued prompt (lines 1-2) and its user record (line 3)
        if record.get("type") == "queue-operation" and "content" in record:
            record["content"] = prompt
        elif record.get("type") == "user" and isinstance(record["message"].get("content"), str):
            record["message"]["content"] = prompt

    [result] = read_dump(_rewritten(SDK / f"{SESSION}.jsonl", tmp_path, ask), tenant="acme")
    assert result.trajectory is not None, result
    assert result.trajectory.task == prompt
    assert "peer_messages" not in result.trajectory.metadata


def test_a_teammate_beside_its_lead_in_a_harbor_trial_leaves_the_lead_the_trials_verdict(tmp_path: Path) -> None:
    """A teammate's session lies beside the lead's in the project folder, where nothing names it a sub-agent's but
    its own records: it is no second top-level session withholding the trial's verdict (result.json: reward 1.0)."""
    trial = tmp_path / SKILLSBENCH.name
    shutil.copytree(SKILLSBENCH, trial)
    (trial / "agent" / "claude-code.txt").unlink()  # nothing names the trial's run
    project = trial / "agent" / "sessions" / "projects" / "-app"
    project.mkdir(parents=True)
    shutil.copy(SDK / f"{SESSION}.jsonl", project)
    shutil.copy(TEAM / TEAMMATE, project)
    runs = {p.trajectory.trajectory_id: p.trajectory for p in read_dump(trial, tenant="acme") if p.trajectory}
    lead, teammate = runs[f"claude-code.{SESSION}"], runs[f"claude-code.{TEAMMATE[:-6]}"]
    assert (lead.outcome, lead.reward) == (Outcome.success, 1.0)
    assert "trial_verdict_withheld" not in lead.metadata
    assert teammate.metadata["is_subagent"] is True and teammate.reward is None


def test_a_lead_named_team_lead_is_the_top_level_run(tmp_path: Path) -> None:
    """Newer builds (2.1.332's binary, read) stamp the lead's records ``agentName: "team-lead"`` as well as
    ``teamName``: the real lead excerpt so stamped is still the lead's run, not a teammate's."""
    lead = _rewritten(TEAM / LEAD, tmp_path, lambda _, record: record.setdefault("agentName", "team-lead"))
    [result] = read_dump(lead, tenant="acme")
    run = result.trajectory
    assert "is_subagent" not in run.metadata and "agent_name" not in run.metadata
    assert run.metadata["peer_messages"][0].startswith("astute: Admiral, HMS Astute returning")


def test_a_task_assignment_of_no_text_is_still_the_leads_request(tmp_path: Path) -> None:
    """An assignment whose subject and description are not text (the CLI writes text) is kept as sent, not dropped
    with the run's only prompt."""
    assignment = '{"type":"task_assignment","subject":5,"description":["x"]}'

    def only_assignment(number: int, record: dict[str, Any]) -> None:
        if number == 0:
            record["message"]["content"] = f'<teammate-message teammate_id="team-lead">\n{assignment}\n' \
                                           "</teammate-message>"

    [result] = read_dump(_rewritten(TEAM / TEAMMATE, tmp_path, only_assignment), tenant="acme")
    assert result.trajectory is not None, result
    assert result.trajectory.task == assignment


def test_a_summary_holding_a_greater_than_sign_stays_out_of_the_message(tmp_path: Path) -> None:
    """A block's ``summary`` is the model's free text: a ``>`` in it does not end the tag."""
    def summary(_: int, record: dict[str, Any]) -> None:
        content = record.get("message", {}).get("content")
        if isinstance(content, str):
            record["message"]["content"] = content.replace('summary="Patrol', 'summary="latency > 2s; Patrol')

    [result] = read_dump(_rewritten(TEAM / LEAD, tmp_path, summary), tenant="acme")
    [peer] = result.trajectory.metadata["peer_messages"]
    assert peer.startswith("astute: Admiral, HMS Astute returning to harbor")


def test_stream_json_after_a_note_in_brackets_names_the_bad_line_and_its_format() -> None:
    """Real ``claude -p --output-format stream-json`` output (2.8.3) teed with stderr's first line, ``[ripgrep]
    fallback: ...``: the file was loaded as one JSON document for its opening ``[`` and refused whole, with no line
    named ("file: malformed JSON: lexical error"). It is JSON Lines with a bad first line: that line is named, and
    the rest is told to be Claude Code's (and read as it, the specific refusal of headless output, which records no
    prompt)."""
    path = FIXTURES / "claude-code" / ".audcc30" / "stderr-first-line" / "trajectory.jsonl"
    with pytest.raises(ValueError, match=r"trajectory\.jsonl: line 1 is malformed JSON: .* the lines after it are "
                                         r"claude-code records, .* pass --format claude-code"):
        list(read_dump(path, tenant="acme"))
    first, headless = read_dump(path, fmt="claude-code", tenant="acme")
    assert (first.position, first.error) == ("line 1", "malformed JSON: Expecting value (column 2)")
    assert headless.error.startswith("no user prompt: headless `claude -p --output-format stream-json` output")

"""Round 32: Cline 3.x's words to the user read as 4.x's are (``_WORDS``), on real task folders and UI logs
(tests/fixtures/cline/.r28/README.md, .r28ui/README.md)."""

from __future__ import annotations

from pathlib import Path

from trajsearch.model import Outcome

from adapter_support import only

CLINE = Path(__file__).parent / "fixtures" / "cline"


def test_a_3x_completion_is_a_respond_step_as_4xs_submission_and_still_the_accepted_verdict() -> None:
    run = only(CLINE / ".r28" / "exported_conversation_1769053680585")
    closing = run.steps[-1]
    assert closing.action == "respond" and closing.arguments["content"].startswith("I have successfully secured")
    assert closing.observation is None  # no one replied: the run's closing answer, not a turn of a dialogue
    assert run.outcome is Outcome.success  # its last call was the completion, and the user let it stand


def test_a_3x_question_is_a_respond_step_its_answer_the_observation_as_4xs_ask_question() -> None:
    run = only(CLINE / ".r28" / "1777073160794")
    assert "ask_followup_question" not in {s.action for s in run.steps}
    asked = run.steps[4]
    assert asked.action == "respond" and asked.arguments["content"].startswith("I've analyzed the codebase")
    assert "options" in asked.arguments  # the rest of the call's arguments kept beside its words


def test_a_lone_ui_logs_completion_reads_as_the_folders_does() -> None:
    run = only(CLINE / ".r28ui" / "Cline-Xray")
    assert "attempt_completion" not in {s.action for s in run.steps}
    assert run.steps[-2].action == "respond" and run.steps[-2].arguments["content"]

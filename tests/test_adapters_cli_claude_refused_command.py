"""A prompt command Claude Code refused on ``<local-command-stderr>`` (its ``!`...``` pre-run failed) read from a
transcript, and from Harbor's ATIF of it, as SpecStory's reader reads the same session: the user's request unless a
later request retypes the same ``/name``. The transcripts (``claude-code/.ccrt/``) and their ATIF (``atif/.ccrt/``)
are built from the real SpecStory histories of those two sessions (``specstory/.aud33fix/``); their ``README.md``
files say how."""

from __future__ import annotations

from pathlib import Path

from adapter_support import only

FIXTURES = Path(__file__).parent / "fixtures"
TRANSCRIPTS = FIXTURES / "claude-code" / ".ccrt"
HISTORIES = FIXTURES / "specstory" / ".aud33fix"


def test_a_refused_command_is_the_task_unless_retyped() -> None:
    """``/pr-review 157`` answered on stderr, then ``proceed``: the agent reviews PR 157, so the command is the
    task, ``proceed`` a later prompt; ``/pr-review`` refused, then ``/pr-review 150`` expanded: the retry is the
    task, the refused one no prompt. As the SpecStory histories of the same sessions read."""
    run = only(TRANSCRIPTS / "42bd9166-1c56-4aac-b23b-18bf8af5331e.jsonl")
    history = only(next((HISTORIES / "failed-command" / ".specstory" / "history").glob("*.md")))
    assert (run.task, run.metadata.get("user_prompts")) == ("/pr-review 157", ["proceed"])
    assert (history.task, history.metadata["user_prompts"]) == (run.task, run.metadata["user_prompts"])
    assert [s.action for s in run.steps] == ["respond", "Bash"]
    retried = only(TRANSCRIPTS / "dd4fb067-317f-48c3-ba6f-1f3ed113a8ae.jsonl")
    history = only(next((HISTORIES / "retried-command" / ".specstory" / "history").glob("*.md")))
    assert retried.task == history.task == "/pr-review 150"
    assert not retried.metadata.get("user_prompts")


def test_harbors_atif_of_a_refused_command_reads_as_the_transcript() -> None:
    """The same two sessions as ATIF (``atif/.ccrt/``, in atif-make 0.10's shape of a Claude Code session): the refused
    ``/pr-review 157`` is the task, ``proceed`` a later prompt (a step with no action); the retried ``/pr-review 150``
    is the task, not a prompt after a bare ``/pr-review``."""
    run = only(FIXTURES / "atif" / ".ccrt" / "42bd9166-1c56-4aac-b23b-18bf8af5331e.trajectory.json")
    assert run.task == "/pr-review 157"
    assert [(s.action, s.observation) for s in run.steps][0] == (None, "proceed")
    retried = only(FIXTURES / "atif" / ".ccrt" / "dd4fb067-317f-48c3-ba6f-1f3ed113a8ae.trajectory.json")
    assert retried.task == "/pr-review 150"
    assert [s.action for s in retried.steps] == ["Task"]

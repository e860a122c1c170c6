"""Probe F's defects (F1-F6): hand-written native runs, Gemini CLI ``/chat save`` histories, export round trips.

Through ``read_dump`` and the CLI (embedded store: real Milvus Lite in a temp dir, the hashing test embedder).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from trajsearch.ingest.read import read_dump
from trajsearch.model import MAX_STEP_FIELD_CHARS, MAX_TASK_CHARS, Outcome

from adapter_support import only, runs
from cli_support import run_cli

FIXTURES = Path(__file__).parent / "fixtures"
PROBE = FIXTURES / "native" / ".real" / "probe-f"
GEMINI_CHECKPOINT = FIXTURES / "gemini-cli" / ".real" / "checkpoint-agent-teams.json"


def _rejections(path: Path, **kwargs) -> list[str]:
    return [p.error for p in read_dump(path, **kwargs) if not p.ok]


# -- F2, F6: Gemini CLI histories -----------------------------------------------------------


def test_a_checkpoints_failed_shell_commands_are_step_errors() -> None:
    """Bug (probe F, F2): in a ``/chat save`` history (results as ``functionResponse`` parts) a shell output ending
    ``Exit Code: 1`` (three failed ``npm run build``) was no step error, though it is in recordings."""
    run = only(GEMINI_CHECKPOINT, tenant="acme")
    builds = [s for s in run.steps if s.action == "run_shell_command" and "npm run build" in str(s.arguments)
              and "Exit Code: 1" in (s.observation or "")]
    assert len(builds) == 3
    assert all(s.error and s.error.endswith("(exit code 1)") for s in builds)


def test_a_checkpoints_response_with_no_call_is_kept_as_a_step() -> None:
    """Bug (probe F, F6): the response whose call the history lost (the build, pre-commit and ``git commit``) was
    dropped without notice. It is a step of its own: its name as the action, its arguments unknown."""
    run = only(GEMINI_CHECKPOINT, tenant="acme")
    [commit] = [s for s in run.steps if "[ntm/agentteamscli 59153cc1c]" in (s.observation or "")]
    assert commit.action == "run_shell_command" and commit.arguments is None and commit.error is None
    after = run.steps[run.steps.index(commit) + 1]
    assert after.arguments["command"] == "git log -n 1 && git status"  # in its place in the history


def test_an_old_checkpoints_id_less_calls_get_their_results(tmp_path: Path) -> None:
    """The CLI before 0.4x (``turn.ts``) gave a call the model sent without an id an id of its own making,
    ``<name>-<time>-<random>``, kept only in the response: the result goes to the first such call of its name
    (it was lost before, and would otherwise be a second step)."""
    history = json.loads(GEMINI_CHECKPOINT.read_text())
    for entry in history:
        for part in entry["parts"]:
            if "functionCall" in part:
                part["functionCall"].pop("id", None)
            elif "functionResponse" in part:
                response = part["functionResponse"]
                response["id"] = f"{response['name']}-1742212345678-{response['id']}"
    path = tmp_path / "checkpoint-old.json"
    path.write_text(json.dumps(history))
    old, new = only(path, tenant="acme"), only(GEMINI_CHECKPOINT, tenant="acme")
    assert [(s.action, s.observation, s.error) for s in old.steps] == [(s.action, s.observation, s.error)
                                                                      for s in new.steps]

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


# -- F1: a lone surrogate ----------------------------------------------------------------


def test_a_lone_surrogate_in_a_native_observation_costs_a_character_not_the_run() -> None:
    """Bug (probe F, F1): ``\\ud83d`` (JS's escape for a string cut mid-emoji) rejected the whole run with
    "unable to parse raw data as a unicode string"."""
    run = only(PROBE / "unicode.jsonl", tenant="acme")
    assert run.steps[0].observation == "雨 \x00 null byte \ufffd lone surrogate"
    assert run.task == "東京の天気を教えて 🌧️ — naïve café"  # a well-formed pair stays the character it is
    assert run.steps[0].arguments == {"都市": "東京"}


def test_a_lone_surrogate_in_any_format_is_mended_in_free_text(tmp_path: Path) -> None:
    """Bug (probe F, F1): the same escape in one tool output of a real Gemini CLI history (the probe's one-character
    edit, made here) lost the whole 50-step run. Every adapter's fields pass ``_common.build``: mended there."""
    history = json.loads(GEMINI_CHECKPOINT.read_text())
    response = history[13]["parts"][0]["functionResponse"]["response"]
    response["output"] += " \ud83d"
    path = tmp_path / "checkpoint-agent-teams.json"
    path.write_text(json.dumps(history))  # ensure_ascii: the escape is written as JSON.stringify writes it
    assert "\\ud83d" in path.read_text()
    run = only(path, tenant="acme")
    assert len(run.steps) == len(only(GEMINI_CHECKPOINT, tenant="acme").steps)
    assert [s.observation for s in run.steps if s.observation and s.observation.endswith(" \ufffd")]


def test_a_lone_surrogate_in_an_id_or_a_name_is_an_error_naming_it(tmp_path: Path) -> None:
    """An id or a tool name is not changed behind the user's back: the error says which field and what is wrong,
    instead of pydantic's "unable to parse raw data as a unicode string"."""
    path = tmp_path / "runs.jsonl"
    path.write_text('{"trajectory_id": "run-\\ud83d", "task": "t"}\n'
                    '{"trajectory_id": "run-2", "task": "t", "steps": [{"index": 0, "action": "search\\udc00"}]}\n'
                    '{"trajectory_id": "run-3", "task": "t", "metadata": {"note": "cut \\ud83d"}, '
                    '"steps": [{"index": 0, "action": "edit", "arguments": {"text": "\\ud83d"}}]}\n')
    first, second = _rejections(path, tenant="acme")
    assert "field 'trajectory_id' holds a lone UTF-16 surrogate '\\ud83d' at position 4" in first
    assert "field 'steps[0].action' holds a lone UTF-16 surrogate '\\udc00' at position 6" in second
    [kept] = [p.trajectory for p in read_dump(path, tenant="acme") if p.ok]
    assert kept.metadata["note"] == "cut \ufffd" and kept.steps[0].arguments == {"text": "\ufffd"}


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


# -- F3, F4: native grading and clipping -------------------------------------------------------


@pytest.mark.parametrize("threshold, outcomes", [(0.5, ["success", "failure"]), (0.95, ["failure", "failure"])])
def test_a_native_reward_without_an_outcome_is_graded_by_the_threshold(threshold: float, outcomes: list) -> None:
    """Bug (probe F, F3): a native run with a reward and no outcome stayed ``unknown``; graded runs of other formats
    are judged by ``--success-threshold``."""
    graded = runs(PROBE / "reward_no_outcome.jsonl", tenant="acme", success_threshold=threshold)
    assert [r.outcome.value for r in graded] == outcomes and [r.reward for r in graded] == [0.9, 0.1]


def test_a_native_outcome_or_an_off_scale_reward_is_not_regraded(tmp_path: Path) -> None:
    path = tmp_path / "runs.jsonl"
    path.write_text('{"trajectory_id": "a", "task": "t", "reward": 0.1, "outcome": "success"}\n'
                    '{"trajectory_id": "b", "task": "t", "reward": 7}\n'
                    '{"trajectory_id": "c", "task": "t", "reward": 0.9, "outcome": "unknown"}\n')
    assert [r.outcome for r in runs(path, tenant="acme")] == [Outcome.success, Outcome.unknown, Outcome.unknown]


def test_a_native_task_over_the_limit_is_clipped_not_rejected(tmp_path: Path) -> None:
    """Bug (probe F, F4): a native task over MAX_TASK_CHARS rejected the run, where every other format clips it
    (and the ingest notice said tasks are clipped)."""
    path = tmp_path / "huge.jsonl"
    path.write_text(json.dumps({"trajectory_id": "huge", "task": "T" * 25_000 + " the end", "outcome": "success"}))
    run = only(path, tenant="acme")
    assert len(run.task) <= MAX_TASK_CHARS and run.task.startswith("TTT") and run.task.endswith("the end")
    assert "characters clipped ...]" in run.task


# -- F5: export -f jsonl, then ingest -------------------------------------------------------------


def test_an_exported_run_ingested_again_is_unchanged_and_not_clipped_again(tmp_path: Path, monkeypatch) -> None:
    """Bug (probe F, F5): ``export -f jsonl`` then ``ingest`` into the same tenant counted every run as changed
    (the export's provenance, ``metadata.trajsearch``, became part of the run) and named the first ingest's clips
    as clipped again."""
    monkeypatch.setenv("TRAJSEARCH_MODEL", "hashing")
    monkeypatch.delenv("TRAJSEARCH_SERVER", raising=False)
    for name in ("HOME", "URI", "TRACES"):
        monkeypatch.setenv(f"TRAJSEARCH_{name}", str(tmp_path / "home" / {"HOME": "", "URI": "milvus.db",
                                                                          "TRACES": "traces"}[name]))
    monkeypatch.setenv("TRAJSEARCH_TENANT", "acme")
    dump = tmp_path / "runs.jsonl"
    dump.write_text(json.dumps({"trajectory_id": "big", "task": "count the files in the repo", "outcome": "success",
                                "metadata": {"team": "infra"},
                                "steps": [{"index": 0, "action": "bash", "arguments": {"command": "ls -R"},
                                           "observation": "file\n" * (MAX_STEP_FIELD_CHARS // 4)}]}) + "\n"
                    + json.dumps({"trajectory_id": "small", "task": "count the lines of README",
                                  "outcome": "success", "reward": 1.0}) + "\n")
    code, out, err = run_cli("ingest", str(dump), "--json")
    first = json.loads(out)
    assert code == 0, err
    assert first["ingested"] == 2 and first["clipped"]["runs"] == 1
    exported = tmp_path / "export.jsonl"
    code, _, err = run_cli("export", "-q", "count files", "-f", "jsonl", "-k", "5", "-o", str(exported))
    assert code == 0, err
    assert all("trajsearch" in json.loads(line)["metadata"] for line in exported.read_text().splitlines())
    code, out, err = run_cli("ingest", str(exported), "--json")
    again = json.loads(out)
    assert code == 0, err
    assert (again["ingested"], again["unchanged"]) == (0, 2)
    assert again["clipped"]["runs"] == 0

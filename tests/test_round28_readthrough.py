"""The findings of the read-through of round 28's ingest (RT-INGEST), each in the layout the reviewer built, from real
fixtures: a Cline UI log named in a repository's root, Cline task folders in an unconverted Harbor trial, ``.eval``
files in a walk under another ``--format``, Cline's extension folder."""

from __future__ import annotations

import json
import shutil
import zipfile
from pathlib import Path

import pytest

from cli_support import newcomer, run_cli  # noqa: F401 (fixture)
from trajsearch.ingest.read import read_dump
from trajsearch.model import Outcome

FIXTURES = Path(__file__).parent / "fixtures"
CLINE = FIXTURES / "cline" / ".r28"
UI_LOG = FIXTURES / "cline" / ".r28ui" / "fineye" / "ui_messages.json"  # a real UI log a user committed at a root
CLAUDE = FIXTURES / "claude-code" / "1af7fc5e-8455-4414-9ccd-011d40f70b2a.jsonl"
EVAL = FIXTURES / "inspect-ai" / ".r28" / "basic-agent.eval"
TRIAL = FIXTURES / "claude-code" / ".aud7" / "skillsbench-no-atif" \
    / "claude-code-claude-haiku-4-5-skills-crystallographic-wyckoff-posit-66c0fc"


def _parsed(path: Path, **kwargs) -> tuple[list, list[str]]:
    parsed = list(read_dump(path, tenant="acme", **kwargs))
    return [p.trajectory for p in parsed if p.trajectory is not None], [p.error for p in parsed if p.error]


def _repo(tmp_path: Path) -> Path:
    """A repository whose root holds Cline's UI log (where 4 of 7 real ones lie), a Claude session under it and a
    package.json."""
    repo = tmp_path / "repo"
    (repo / "sub").mkdir(parents=True)
    shutil.copy(UI_LOG, repo)
    shutil.copy(CLAUDE, repo / "sub")
    (repo / "package.json").write_text('{"x": 1}')
    return repo


def test_a_cline_ui_log_named_is_its_one_run_not_a_walk_of_the_folder_it_lies_in(tmp_path: Path) -> None:
    runs, errors = _parsed(_repo(tmp_path) / "ui_messages.json")
    assert [r.trajectory_id.split(".")[0] for r in runs] == ["cline"] and errors == []  # was cline + claude-code
    named = tmp_path / "1769064454592" / "api_conversation_history.json"  # the history named still reads its task
    shutil.copytree(CLINE / "1769064454592", named.parent)
    assert [r.trajectory_id for r in _parsed(named)[0]] == ["cline.1769064454592"]


def test_delete_from_a_cline_ui_log_names_only_its_run(newcomer, tmp_path: Path) -> None:  # noqa: F811
    repo = _repo(tmp_path)
    code, out, err = run_cli("ingest", str(repo))  # the whole repository: both runs stored
    assert "ingested 2 runs" in out, out + err
    code, out, err = run_cli("ingest", str(repo / "ui_messages.json"))
    assert code == 0, out + err
    code, out, err = run_cli("delete", "--from", str(repo / "ui_messages.json"), "--dry-run", "--json")
    assert code == 0, err
    assert [i.split(".")[0] for i in json.loads(out)["would_remove"]] == ["cline"]  # not the Claude session's


def test_of_two_cline_task_folders_in_an_unconverted_trial_neither_takes_the_verdict(tmp_path: Path) -> None:
    trial = tmp_path / "t__abc"
    (trial / "agent" / "tasks").mkdir(parents=True)
    for name in ("config.json", "result.json"):
        shutil.copy(TRIAL / name, trial)
    for task in ("1777073160794", "1769064454592"):
        shutil.copytree(CLINE / task, trial / "agent" / "tasks" / task)
    runs, _ = _parsed(trial)
    assert len(runs) == 2 and all(r.reward is None and r.outcome is not Outcome.success for r in runs)
    assert all("holds 2 run folders" in r.metadata["trial_verdict_withheld"] for r in runs)
    shutil.rmtree(trial / "agent" / "tasks" / "1769064454592")  # one task folder alone: the trial's run
    [run] = _parsed(trial)[0]
    assert run.reward == 0.55 and "trial_verdict_withheld" not in run.metadata


def test_a_walk_under_another_format_passes_an_eval_archive_over_by_name(tmp_path: Path) -> None:
    mix = tmp_path / "mix"
    mix.mkdir()
    shutil.copy(CLAUDE, mix)
    shutil.copy(EVAL, mix)
    runs, errors = _parsed(mix, fmt="claude-code")
    assert len(runs) == 1 and errors == []  # was: basic-agent.eval rejected, "a zip archive (unpack it first)"
    assert len(_parsed(mix)[0]) > 1  # detected, the archive is read


def test_an_eval_archive_named_under_another_format_says_whose_it_is(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="an inspect-ai log .*drop --format, or pass --format inspect-ai"):
        list(read_dump(EVAL, fmt="atif"))


def test_a_text_file_named_eval_is_passed_over_by_a_walk(tmp_path: Path) -> None:
    notes = tmp_path / "notes"
    notes.mkdir()
    shutil.copy(CLAUDE, notes)
    (notes / "notes.eval").write_text("(* coq *)\nEval compute in 1+1.\n")
    runs, errors = _parsed(notes)
    assert len(runs) == 1 and errors == []  # was: notes.eval "unrecognised dump format"
    assert zipfile.is_zipfile(EVAL)


def test_a_walk_of_clines_extension_folder_passes_over_its_state_and_settings(tmp_path: Path) -> None:
    ext = tmp_path / "globalStorage" / "saoudrizwan.claude-dev"
    for task in ("1777073160794", "1769064454592"):
        shutil.copytree(CLINE / task, ext / "tasks" / task)
    (ext / "state").mkdir()
    (ext / "state" / "taskHistory.json").write_text(json.dumps([{"id": "1777073160794", "task": "x", "ts": 1}]))
    (ext / "settings").mkdir()
    (ext / "settings" / "cline_mcp_settings.json").write_text(json.dumps({"mcpServers": {}}))
    runs, errors = _parsed(ext)
    assert len(runs) == 2 and errors == []  # were: both files "unrecognised dump format"

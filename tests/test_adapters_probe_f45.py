"""Probe F of round p45 (F1, F3-F5): ATIF that atif-make wrote from real Claude Code and Codex sessions, a Harbor
trajectory copied out of its trial, hand-written native records.

Through ``read_dump`` (no mocks): the ATIF read is compared with what the Claude Code / Codex readers make of the same
session, where the project keeps it.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from trajsearch.ingest.read import read_dump
from trajsearch.model import Outcome

from adapter_support import only

FIXTURES = Path(__file__).parent / "fixtures"
NATIVE = FIXTURES / "native" / ".real" / "probe-f45" / "user_written.jsonl"


def _rejections(path: Path, **kwargs) -> dict[str, str]:
    """Where -> why of each record ``read_dump`` refused."""
    return {p.position: p.error for p in read_dump(path, **kwargs) if not p.ok}


# -- F5: native metadata that is not an object -------------------------------------------------


@pytest.mark.parametrize("defaults", [None, {"metadata": {"team": "a"}, "tags": ["hand"]}])
def test_a_native_metadata_that_is_not_an_object_is_refused_naming_the_field(defaults) -> None:
    """Bug (probe F, F5): ``"metadata": ["a", "b"]`` was refused with Python's "TypeError: 'list' object is not a
    mapping" (the file's time, and the operator's defaults, were merged into it before validation)."""
    errors = _rejections(NATIVE, fmt="native", defaults=defaults)
    [error] = [e for where, e in errors.items() if where.endswith("line 14")]
    assert "field 'metadata'" in error and "TypeError" not in error


@pytest.mark.parametrize("tags", ["abc", {"k": 1}, [{"x": 1}], 3])
def test_native_tags_that_are_not_strings_are_refused_not_merged_with_the_defaults(tmp_path: Path, tags) -> None:
    """The same kind of crash (probe F, F5): with ``tags`` in the operator's defaults, a record's tags were merged
    as an iterable: a string became its characters, a dict its keys, a number or a list of objects a TypeError."""
    path = tmp_path / "runs.jsonl"
    path.write_text(json.dumps({"trajectory_id": "t1", "task": "Fix the failing test", "tags": tags}) + "\n")
    [error] = _rejections(path, fmt="native", defaults={"tags": ["hand"]}).values()
    assert "field 'tags" in error and "TypeError" not in error


# -- F3: ATIF of a Codex IDE session ----------------------------------------------------------

ATIF_MAKE = FIXTURES / "atif" / ".real" / "atif-make-0.10"
CODEX_IDE = "rollout-2025-09-25T15-12-14-019982b8-3422-79e0-8b3b-05abaf4f3c3e"


def test_atif_of_a_codex_ide_session_has_the_users_request_as_its_task() -> None:
    """Bug (probe F, F3): the task was the IDE extension's context ("# Context from my IDE setup: ## Active file:
    ..."), not the request after "## My request for Codex:", which the Codex reader takes from the same session."""
    atif = only(ATIF_MAKE / f"{CODEX_IDE}.trajectory.json")
    codex = only(FIXTURES / "codex-cli" / ".real" / f"{CODEX_IDE}.jsonl")
    assert atif.task.startswith("Evaluate @packages/services and create a new \n  package")
    assert atif.task == codex.task

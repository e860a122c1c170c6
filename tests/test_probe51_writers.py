"""Probe 51 (NF2): what the newest releases of the most-used writers record, read through ``read_dump``."""

from __future__ import annotations

from pathlib import Path

from trajsearch.ingest.read import read_dump

FIXTURES = Path(__file__).parent / "fixtures"
CODEX = FIXTURES / "codex-cli" / ".probe51"


def only_run(path: Path):
    parsed = list(read_dump(path, tenant="acme"))
    assert [p.error for p in parsed] == [None]
    return parsed[0].trajectory


def test_codex_0148_task_is_the_typed_prompt_not_the_plugin_catalogue_injected_before_it() -> None:
    """Bug: codex-cli 0.148 writes no ``user_message`` event: what the user typed is an ``item_completed`` event of a
    ``UserMessage`` item, and the task fell back to the first user ``message`` item, where Codex 0.146+ puts its
    catalogue of plugins not installed (``<recommended_plugins>``) on every session's first turn: the run's task was
    the catalogue, the user's request only in ``user_prompts``."""
    run = only_run(CODEX / "plugins")
    assert run.task == "hello"
    assert not run.metadata.get("user_prompts")
    assert [s.action for s in run.steps] == ["respond"]


def test_codex_plugin_catalogue_is_no_prompt_where_a_reader_sees_only_user_messages() -> None:
    """Bug: readers that see Codex's user messages without its events (Harbor's ATIF of a Codex run keeps every user
    message item as a user step) took the ``<recommended_plugins>`` catalogue for what the user asked: it was the
    run's task. It is context Codex injects, as ``<environment_context>`` is."""
    run = only_run(FIXTURES / "atif" / ".probe51" / "codex-0.171.0-X1-with-plugin-catalogue.trajectory.json")
    assert run.task.startswith("SCEN-X1: (bypass) plan, search the docs")
    assert not any("recommended_plugins" in p for p in run.metadata.get("user_prompts") or [])

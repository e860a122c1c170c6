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
    catalogue of plugins not installed (``<recommended_plugins>``) on a session's first turn: the run's task was
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


IMAGE_PROMPTS = ["now fix the failing test shown in the screenshot", "is it the same failure as this one?"]


def test_codex_0148_prompt_with_images_is_what_the_user_sent_an_image_alone_stays_a_prompt() -> None:
    """Bug (review of NF2): an ``item_completed`` ``UserMessage`` item of 0.148+ (paginated history) gave no prompt
    when it held only a ``local_image`` part (an IDE attachment sent with no words): the run's task became the second
    prompt while the first turn's reply stayed a step. Its user message item, read before 0.148's events were, holds
    Codex's ``<image name=[Image #1]>`` tags and, for an image it could not read, its own words: the prompt is the
    words the user sent, and an image sent alone reads as ``[image]``."""
    run = only_run(CODEX / "images")
    assert run.task == "[image]"
    assert run.metadata.get("user_prompts") == IMAGE_PROMPTS
    assert [s.action for s in run.steps] == ["respond", "respond", "respond"]


def test_codex_image_only_prompt_reads_the_same_from_the_legacy_user_message_event() -> None:
    """Bug: the same session in the legacy history mode (each prompt a ``user_message`` event, its ``message`` the
    text parts only: an image alone gives ``""``, the image in ``local_images``) lost its image-only first prompt
    too: it reads as the paginated one does."""
    run = only_run(CODEX / "images-legacy")
    assert run.task == "[image]"
    assert run.metadata.get("user_prompts") == IMAGE_PROMPTS


def test_codex_rollout_with_legacy_then_paginated_turns_keeps_every_prompt() -> None:
    """Bug: a rollout whose first turns a Codex of ``user_message`` events wrote (0.140) and whose later ones a Codex
    of ``item_completed`` events (0.148+, paginated history) appended read its prompts from one record for the whole
    file: the later prompts were lost (each turn's prompt is read from the record that turn holds)."""
    run = only_run(CODEX / "resumed")
    assert run.task.startswith("在绿洲里面，怎么实现保存数据")
    assert run.metadata.get("user_prompts") == ["now add a login page that saves the data"]

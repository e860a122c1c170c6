"""JSON nested deeper than Python's recursion limit inside a field an adapter parses (a tool call's arguments, a
queued message, a side file): the field is read as text, or the side file as no JSON, and the batch keeps every
run. On main (80d5e1c0) each such field raised RecursionError: the run was refused ("cannot convert ... record:
RecursionError") or, met while walking a folder, the whole ingest ended with exit 1 and lost the other files' runs.

Each test takes a real fixture and writes it to ``tmp_path`` with one field replaced by deep JSON text
(``"[" * 100000 + "]" * 100000``, or an object as deep, or 900 deep), as an agent's runaway output would be.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any, Callable

import pytest

from trajsearch.ingest.read import read_inputs

from cli_support import newcomer, run_cli, unnoted  # noqa: F401 (a fixture)

FIXTURES = Path(__file__).parent / "fixtures"
#: Deeper than Python's json reads (100000), and deep enough that json reads it but a later recursive walk of the
#: value (lone surrogates mended, messages flattened) recursed past the limit (900).
DEPTHS = (100_000, 900)


def deep_list(depth: int) -> str:
    return "[" * depth + "]" * depth


def deep_object(depth: int) -> str:
    return '{"a":' * depth + "1" + "}" * depth

#: A good file read beside each hostile one: its run must be kept whatever the other holds.
GOOD = FIXTURES / "claude-code" / ".aud32" / "adaba13e-53b8-4796-96e4-0977e7725a8d.jsonl"


def _first(records: list[Any], change: Callable[[Any, int], bool], depth: int) -> None:
    assert any(change(record, depth) for record in records), "the fixture no longer holds the field this test replaces"


def _hostile(source: Path, dest: Path, change: Callable[[Any, int], bool], depth: int) -> Path:
    """``source`` (JSON or JSON Lines) written to ``dest`` with ``change`` applied to its first record it fits."""
    dest.parent.mkdir(parents=True, exist_ok=True)
    text = source.read_text(encoding="utf-8")
    try:
        document = json.loads(text)
    except ValueError:
        records = [json.loads(line) for line in text.splitlines() if line.strip()]
        _first(records, change, depth)
        dest.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
        return dest
    _first(document if isinstance(document, list) else [document], change, depth)
    dest.write_text(json.dumps(document), encoding="utf-8")
    return dest


def _queued(record: dict[str, Any], depth: int) -> bool:
    if record.get("type") == "queue-operation" and "content" in record:
        record["content"] = deep_object(depth)
        return True
    return False


def _tau_arguments(run: dict[str, Any], depth: int) -> bool:
    for message in run.get("traj") or []:
        for call in message.get("tool_calls") or []:
            call["function"]["arguments"] = deep_list(depth)
            return True
    return False


def _langsmith_prompt(record: dict[str, Any], depth: int) -> bool:
    for run in record.get("post") or []:
        if "prompt" in run.get("inputs", {}):
            run["inputs"]["prompt"] = deep_list(depth)
            return True
    return False


def _kimi_arguments(record: dict[str, Any], depth: int) -> bool:
    for call in (record.get("message") or {}).get("toolCalls") or []:
        call["function"]["arguments"] = deep_list(depth)
        return True
    return False


def _codex_answer(record: dict[str, Any], depth: int) -> bool:
    """The assistant's message text: a reply to another agent is read from it where it starts ``{``
    (``codex_cli._between_agents``), the parse that ended ``ingest`` with exit 1 on main (RT1)."""
    payload = record.get("payload") or {}
    if record.get("type") == "response_item" and payload.get("role") == "assistant":
        payload["content"][0]["text"] = deep_object(depth)
        return True
    return False


KIMI = FIXTURES / "kimi-cli" / ".fixaud33" / ".kimi-code" / "sessions" / "wd_proj_33c5ea5aa7eb" / \
    "ses_recent-protocol-1.10"

#: (name, real fixture, where its copy goes under tmp_path, the field made deep). Each parse went through a different
#: shared helper on main: claude_code's own, ``_common.tool_arguments``, ``_vendor``'s decoding, ``_agent_cli``'s.
CASES = [
    ("claude-code queued message", FIXTURES / "claude-code" / ".real" / "probe-c47" / "queue-out-of-order-2.1.40" /
     "49b71531-8ee9-4395-adaa-098f6ab47048.jsonl", "49b71531-8ee9-4395-adaa-098f6ab47048.jsonl", _queued),
    ("tau-bench tool arguments", FIXTURES / "tau-bench" / ".probe53frt" / "gpt-4o-airline.json",
     "gpt-4o-airline.json", _tau_arguments),
    ("langsmith prompt", FIXTURES / "langsmith" / ".aud33" /
     "lsjs0.12.0-wrapAISDK-ai7-stream-503-exhausted.batch.jsonl", "run.batch.jsonl", _langsmith_prompt),
    ("codex-cli assistant message", FIXTURES / "codex-cli" / ".aud35" /
     "rollout-2026-12-07T17-56-28-01a252b0-1a2b-7c3d-8e4f-5a6b7c8d9e0f.jsonl",
     "rollout-2026-12-07T17-56-28-01a252b0-1a2b-7c3d-8e4f-5a6b7c8d9e0f.jsonl", _codex_answer),
    ("kimi-cli tool arguments", KIMI / "agents" / "main" / "wire.jsonl", f"{KIMI.name}/agents/main/wire.jsonl",
     _kimi_arguments),
]


#: Each case at each depth that failed on 80d5e1c0: claude-code's and codex's fields 900 deep were read already (their
#: values are not walked again), so they are tried only past what Python reads.
#: Tool arguments are tried 100 deep too: past a step's bound (the model's MAX_ARGUMENT_DEPTH, 64) but within a
#: record's (200), decoded, they rejected the run ("nested deeper than 64 levels"); now they are kept as text.
DEEP_CASES = [(*case, depth) for case in CASES for depth in DEPTHS
              if depth != 900 or not case[0].startswith(("claude-code", "codex"))] + \
    [(*case, 100) for case in CASES if case[0].endswith("tool arguments")]


@pytest.mark.parametrize("name, source, where, change, depth", DEEP_CASES,
                         ids=[f"{c[0]}-{c[-1]}" for c in DEEP_CASES])
def test_a_field_nested_too_deep_is_read_as_text_and_the_run_kept(
        tmp_path: Path, name: str, source: Path, where: str, change: Callable[[Any, int], bool], depth: int) -> None:
    if name.startswith("kimi"):
        shutil.copytree(KIMI, tmp_path / KIMI.name)  # its state.json beside
    bad = _hostile(source, tmp_path / where, change, depth)
    before = [p for p in read_inputs([source]) if p.trajectory is not None]
    parsed = list(read_inputs([bad, GOOD]))
    assert [p.error for p in parsed if p.error] == []  # on main: "cannot convert ... RecursionError: ..."
    kept = [p.trajectory for p in parsed if p.source == str(bad)]
    assert [t.trajectory_id for t in kept] == [p.trajectory.trajectory_id for p in before]
    assert [p.trajectory.task for p in parsed if p.source == str(GOOD)]  # the good file's run too


def test_a_side_file_nested_too_deep_ends_no_ingest(tmp_path: Path, newcomer) -> None:
    """A Qwen Code sub-agent's ``.meta.json`` beside its run, nested too deep: on main, telling whether it is a side
    file raised RecursionError while the folder was walked, and ``ingest`` ended with exit 1, reading nothing, the
    good file named beside it included. Now it is a file of no known format, named; every run is read."""
    folder = tmp_path / "subagents"
    shutil.copytree(FIXTURES / "qwen-code" / ".real" / "subagents", folder)
    meta = next(folder.rglob("agent-*.meta.json"))
    meta.write_text(deep_object(100_000), encoding="utf-8")
    code, out, err = run_cli("ingest", "--dry-run", str(tmp_path), str(GOOD))
    assert code != 1, err
    assert "RecursionError" not in err and "Traceback" not in err
    assert f"{meta}: format ?; runs 0; rejected 1" in out
    assert f"{meta.with_name(meta.name.removesuffix('.meta.json') + '.jsonl')}: format qwen-code; runs 1;" in out
    assert f"{GOOD}: format claude-code; runs 1; rejected 0" in out
    assert unnoted(err) == [] or all("meta.json" in line or "rejected" in line for line in unnoted(err))


def test_an_outcome_file_nested_too_deep_is_named_not_a_crash(tmp_path: Path, newcomer) -> None:
    """A report.json nested too deep, in an outcomes folder, is passed over as a malformed one is; given alone as
    ``--outcomes``, it is a clear error naming it. On 80d5e1c0 both ended ``ingest`` with exit 1 and a RecursionError
    naming no file."""
    (tmp_path / "od" / "a").mkdir(parents=True)
    (tmp_path / "od" / "a" / "report.json").write_text('{"x": {"resolved": true}}', encoding="utf-8")
    deep = tmp_path / "od" / "b" / "report.json"
    deep.parent.mkdir()
    deep.write_text(deep_object(100_000), encoding="utf-8")
    code, out, err = run_cli("ingest", "--dry-run", "--outcomes", str(tmp_path / "od"), str(GOOD))
    assert code == 0, err
    assert f"{GOOD}: format claude-code; runs 1; rejected 0" in out
    code, out, err = run_cli("ingest", "--dry-run", "--outcomes", str(deep), str(GOOD))
    assert (code, "RecursionError" in err) == (2, False), err
    assert f"{deep}: not valid JSON: JSON nested deeper than 200 levels" in err


OTEL = FIXTURES / "otel-genai" / ".aud33" / "util-genai-1.1-workflow-two-agents.otlp.jsonl"


def test_an_otlp_attribute_nested_too_deep_keeps_its_batch(tmp_path: Path) -> None:
    """A span attribute holding ``{"a":`` repeated (an agent's runaway output, as long as the span's longest value,
    so it may be a value the exporter cut): telling whether it was cut parsed it, and the RecursionError rejected the
    whole OTLP batch, its steps lost (``_otlp.shapes._stops_short``, older than 80d5e1c0)."""
    text = OTEL.read_text(encoding="utf-8")
    head, sep, tail = text.partition('"key": "gen_ai.input.messages", "value": {"stringValue": "')
    assert sep, "the fixture no longer holds gen_ai.input.messages"
    tail = tail[tail.index('"}}'):]  # the value's JSON-escaped text replaced
    bad = tmp_path / OTEL.name
    bad.write_text(head + sep + '{\\"a\\":' * 30_000 + tail, encoding="utf-8")
    clean = [p.trajectory for p in read_inputs([OTEL]) if p.trajectory is not None]
    parsed = list(read_inputs([bad, GOOD]))
    assert [p.error for p in parsed if p.error] == []  # on main: "record 1: cannot read ... RecursionError"
    kept = [p.trajectory for p in parsed if p.source == str(bad) and p.trajectory is not None]
    assert [len(t.steps) for t in kept] == [len(t.steps) for t in clean]


@pytest.mark.parametrize("depth", DEPTHS)
def test_a_cline_ui_message_nested_too_deep_keeps_its_task(depth: int, tmp_path: Path) -> None:
    """A Roo Code UI log whose `api_req_started` text (JSON Cline parses) is nested too deep: read as no JSON, the
    task's run kept (RecursionError refused the whole task; RT3 3)."""
    source = FIXTURES / "cline" / ".aud35" / "roo-ui-tools" / "ui_messages.json"

    def deepen(message: dict[str, Any], depth: int) -> bool:
        if message.get("say") != "api_req_started":
            return False
        message["text"] = deep_object(depth)
        return True

    clean = [r.trajectory.trajectory_id for r in read_inputs([source]) if r.ok]
    hostile = _hostile(source, tmp_path / "roo-ui-tools" / "ui_messages.json", deepen, depth)
    assert [r.trajectory.trajectory_id for r in read_inputs([hostile]) if r.ok] == clean != []


def test_a_cline_task_whose_first_ui_message_is_too_deep_leaves_its_neighbours_read(tmp_path: Path) -> None:
    """Telling a task folder's UI log parses its first message: nested deeper than Python reads, its RecursionError
    made the whole data folder unreadable, the good task beside it lost (review RVME 2). Now the good one is read."""
    source = FIXTURES / "cline" / ".aud35" / "roo-ui-tools"
    shutil.copytree(source, tmp_path / "tasks" / "roo-ui-tools")
    (tmp_path / "tasks" / "deep").mkdir()
    (tmp_path / "tasks" / "deep" / "ui_messages.json").write_text("[" + deep_object(100_000) + "]", encoding="utf-8")
    clean = [r.trajectory.trajectory_id for r in read_inputs([source]) if r.ok]
    assert clean and [r.trajectory.trajectory_id for r in read_inputs([tmp_path / "tasks"]) if r.ok] == clean

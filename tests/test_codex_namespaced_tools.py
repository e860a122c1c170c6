"""Codex 0.171 tool names with a namespace.

0.171's ``ResponseItem`` (``codex app-server generate-ts`` of the real 0.171.0 binary) gives ``custom_tool_call`` a
``namespace`` beside ``function_call``'s, and Codex runs it as ``ToolName::new(namespace, name)`` (codex-rs
``core/src/tools/router.rs``): read without it, the step was named as if the tool had none. No public rollout holds
one, so the real 0.171.0 rollout's ``apply_patch`` call is given a namespace here."""

from __future__ import annotations

import json
from pathlib import Path

from adapter_support import runs

REAL = Path(__file__).parent / "fixtures" / "codex-cli" / ".real"
PATCHED = REAL / "rollout-2026-12-02T00-54-18-01a2343e-c43a-71b0-8325-96dd5e2db5fe.jsonl"
MCP = REAL / "rollout-2026-12-02T02-46-25-01a234a5-689a-7bf0-bedd-2035743e42da.jsonl"


def _rewritten(tmp_path: Path, source: Path, kind: str, change) -> Path:
    """``source`` with each payload of item type ``kind`` changed by ``change``."""
    lines = []
    for line in source.read_text().splitlines():
        record = json.loads(line)
        if record.get("type") == "response_item" and record["payload"].get("type") == kind:
            change(record["payload"])
        lines.append(json.dumps(record))
    path = tmp_path / source.name
    path.write_text("\n".join(lines) + "\n")
    return path


def test_a_namespaced_custom_tool_call_is_named_with_its_namespace_and_keeps_its_output(tmp_path):
    (plain,) = runs(PATCHED, tenant="acme")
    patch = next(step for step in plain.steps if step.action == "apply_patch")
    path = _rewritten(tmp_path, PATCHED, "custom_tool_call", lambda payload: payload.update(namespace="remote"))
    (run,) = runs(path, tenant="acme")
    named = [step for step in run.steps if step.action == "remote__apply_patch"]
    assert len(named) == 1 and "apply_patch" not in [step.action for step in run.steps]
    assert named[0].observation == patch.observation and "Updated the following files" in named[0].observation
    assert named[0].arguments == patch.arguments and len(run.steps) == len(plain.steps)


def test_a_namespace_ending_in_underscores_is_joined_as_codex_joins_it(tmp_path):
    """``ToolName::canonical_flat_name`` trims stray underscores at the join: ``mcp__demo__`` + ``add`` is
    ``mcp__demo__add``, the same tool as 0.171's ``mcp__demo`` + ``add``."""
    path = _rewritten(tmp_path, MCP, "function_call",
                      lambda payload: payload.get("namespace") and payload.update(namespace="mcp__demo__"))
    (run,) = runs(path, tenant="acme")
    (before,) = runs(MCP, tenant="acme")
    assert [step.action for step in run.steps] == [step.action for step in before.steps]
    assert "mcp__demo__add" in [step.action for step in run.steps]

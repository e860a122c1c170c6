"""A ``SandboxAgent``'s ``exec_command`` recorded by any span format, not only the Agents SDK's own: its output
says ``Process exited with code 1`` and its span no error, so the failing command read as a step that succeeded
in an OpenTelemetry GenAI or OpenInference trace (review final-A135 1). Built from real traces (fixture folders'
READMEs), one tool call turned into the sandbox call the SDK's own trace records
(``fixtures/openai-agents/.aud35/agents-0.25-sandbox-exec-with-input.jsonl``, its ``python3 -m unittest -q``)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import adapter_support

FIXTURES = Path(__file__).parent / "fixtures"
SANDBOX = FIXTURES / "openai-agents" / ".aud35" / "agents-0.25-sandbox-exec-with-input.jsonl"


def _sandbox_call() -> tuple[str, str]:
    """(input, output) of the real trace's failing ``exec_command``: the unit test run that exited 1."""
    for line in SANDBOX.read_text().splitlines():
        data = json.loads(line).get("span_data") or {}
        if data.get("name") == "exec_command" and json.loads(data["input"])["cmd"] == "python3 -m unittest -q":
            return data["input"], data["output"]
    raise AssertionError("the sandbox trace lost its unit test run")


def _as_exec_command(trace: Path, tool: str, keys: tuple[str, str, str], out: Path) -> Path:
    """``trace`` (OTLP/JSON, an export request a line) with the first span whose tool name (``keys[0]``) is ``tool``
    turned into the sandbox call: its name, arguments (``keys[1]``) and result (``keys[2]``) replaced."""
    arguments, result = _sandbox_call()
    values = dict(zip(keys, ("exec_command", arguments, result)))
    lines, done = [], False
    for line in trace.read_text().splitlines():
        request = json.loads(line)
        for resource in request.get("resourceSpans", []):
            for scope in resource.get("scopeSpans", []):
                for span in scope.get("spans", []):
                    attrs = {a["key"]: a for a in span.get("attributes", [])}
                    if done or attrs.get(keys[0], {}).get("value", {}).get("stringValue") != tool:
                        continue
                    span["name"] = span["name"].replace(tool, "exec_command")
                    for key, value in values.items():
                        if key in attrs:
                            attrs[key]["value"] = {"stringValue": value}
                        else:
                            span["attributes"].append({"key": key, "value": {"stringValue": value}})
                    done = True
        lines.append(json.dumps(request))
    assert done, f"no {tool} span in {trace}"
    out.write_text("\n".join(lines) + "\n")
    return out


@pytest.mark.parametrize("trace, tool, keys", [
    (FIXTURES / "otel-genai" / ".aud35" / "oai-agents-0.25-genai-1.3b0-max-turns.otlp.jsonl", "lookup_invoice",
     ("gen_ai.tool.name", "gen_ai.tool.call.arguments", "gen_ai.tool.call.result")),
    (FIXTURES / "openinference" / ".real" / "oai-agents-0.24-streamed-chat.otlp.jsonl", "get_weather",
     ("tool.name", "input.value", "output.value")),
], ids=["otel-genai", "openinference"])
def test_a_sandbox_command_that_exited_non_zero_is_that_steps_error_in_any_span_format(
        trace: Path, tool: str, keys: tuple[str, str, str], tmp_path: Path) -> None:
    run = adapter_support.only(_as_exec_command(trace, tool, keys, tmp_path / trace.name))
    [step] = [s for s in run.steps if s.action == "exec_command"]
    assert "Process exited with code 1" in step.observation
    assert step.error == "AssertionError: 3 != 4 (exit code 1)"

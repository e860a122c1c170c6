"""OpenInference's ordered ``tool_use`` content parts (``message.contents.N.message_content.type: "tool_use"`` with
``message.contents.N.tool_call.*``, ``spec/semantic_conventions.md``, "Message Content Arrays") are the message's
tool calls when it has no ``message.tool_calls``: they were dropped, the call lost and the words before it read as
the answer. Fixture built by hand from the spec (``fixtures/openinference/.derived/SOURCE.md``)."""

from __future__ import annotations

from pathlib import Path

from adapter_support import only

FIXTURE = Path(__file__).parent / "fixtures" / "openinference" / ".derived" / "tool-use-content-parts.jsonl"


def test_a_tool_use_content_part_is_a_tool_call_step() -> None:
    run = only(FIXTURE)
    assert [(s.action, s.arguments, s.observation, s.thought) for s in run.steps] == [
        ("weather", {"city": "Boston"}, '{"temp": 72}', "Checking the forecast."),
        ("respond", {"content": "It is 72F in Boston."}, None, None)]

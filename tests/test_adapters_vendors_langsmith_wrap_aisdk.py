"""LangSmith traces of the Vercel AI SDK as langsmith-js ``wrapAISDK`` writes them (p46 probe H, H1; sources in the
fixtures' SOURCE.md): a tool run's inputs are ``{"args": [input, {toolCallId, messages, ...}]}``, ``traceable``'s
record of the tool's ``execute(input, options)``.

Everything goes through the public reader (``read_dump`` / ``detect_format``).
"""

from __future__ import annotations

import base64
import json
from pathlib import Path

from trajsearch.ingest.read import detect_format

from adapter_support import only

REAL = Path(__file__).parent / "fixtures" / "langsmith" / ".real" / "wrapAISDK"
INVALID_CALLS = REAL / "lsjs0.12.0-wrapAISDK-ai6-ToolLoopAgent-invalid-calls.batch.jsonl"
STREAM_TOOL_ERROR = REAL / "lsjs0.12.0-wrapAISDK-ai6-streamText-tool-error.batch.jsonl"
TWO_ARG_TRACEABLE = REAL / "lsjs0.12.0-traceable-two-arg-tool.batch.jsonl"


def test_a_wrapaisdk_tool_run_joins_its_call_by_id_and_refused_calls_are_errors() -> None:
    """Bug (p46 probeH H1): the tool run's ``{"args": [...]}`` hid its call id, so it was joined to the first
    unanswered call of its name (a2, which the SDK refused): a2 was lost, a3 appeared twice, and the SDK's
    ``error-text`` answers to the two refused calls were no error."""
    assert detect_format(INVALID_CALLS) == "langsmith"
    run = only(INVALID_CALLS, tenant="acme")
    assert [(s.action, s.arguments) for s in run.steps] == [
        ("trackParcel", {"id": "A-1"}), ("lookupOrder", {"order": "A-1"}), ("lookupOrder", {"id": "A-1"}),
        ("respond", {"content": "Order A-1 has shipped."})]
    unknown, invalid, ran, _ = run.steps
    assert unknown.error == "Model tried to call unavailable tool 'trackParcel'. Available tools: lookupOrder."
    assert invalid.error is not None and invalid.error.startswith("Invalid input for tool lookupOrder: ")
    assert (ran.observation, ran.error) == ('{"id": "A-1", "status": "shipped"}', None)


def test_a_wrapaisdk_tool_steps_arguments_are_the_tools_input_not_the_conversation() -> None:
    """Bug (p46 probeH H1): every tool step's arguments were the whole ``{"args": [input, {toolCallId, messages}]}``,
    the conversation so far included."""
    run = only(STREAM_TOOL_ERROR, tenant="acme")
    [tool, answer] = run.steps
    assert (tool.action, tool.arguments) == ("runSql", {"sql": "SELECT * FROM users"})
    assert tool.error == "Error: permission denied for table users"
    assert answer.action == "respond"


def test_a_plain_two_argument_traceable_tool_keeps_its_args() -> None:
    """A function traced with two positional arguments that is no AI SDK tool: its ``{"args": [...]}`` is all there
    is to say what it was called with."""
    run = only(TWO_ARG_TRACEABLE, tenant="acme")
    assert [(s.action, s.arguments) for s in run.steps] == [
        ("get_weather", {"args": ["Lyon", "metric"]}), ("eur_to_usd", 20)]


def _first_output_replaced(tmp_path: Path, output: str) -> Path:
    """The real batch with its first tool result's output (the SDK's refusal of ``trackParcel``) replaced."""
    refused = ('"output":{"type":"error-text","value":"Model tried to call unavailable tool \'trackParcel\'. '
               'Available tools: lookupOrder."}')
    text = INVALID_CALLS.read_text()
    assert refused in text
    (path := tmp_path / "batch.jsonl").write_text(text.replace(refused, '"output":' + output))
    return path


def test_an_ai_sdk_content_tool_output_names_its_image_not_its_base64(tmp_path: Path) -> None:
    """The real batch with its first tool result turned into the AI SDK's ``content`` output (a text and an
    ``image-data`` part, provider-utils ``content-part.ts``): the image's base64 was the observation's JSON; now a
    placeholder (one decoder of AI SDK tool outputs, ``_vendor.sdk_tool_output``)."""
    png = base64.b64encode(b"\x89PNG\r\n\x1a\n" + bytes(2000)).decode()
    content = json.dumps({"type": "content", "value": [{"type": "text", "text": "parcel photo"},
                                                       {"type": "image-data", "data": png, "mediaType": "image/png"}]},
                         separators=(",", ":"))
    tracked = only(_first_output_replaced(tmp_path, content), tenant="acme").steps[0]
    assert (tracked.action, tracked.observation) == ("trackParcel", "parcel photo\n[image/png, 3 KB base64]")


def test_an_ai_sdk_denied_tool_output_is_a_call_not_run(tmp_path: Path) -> None:
    """Bug: the AI SDK's ``execution-denied`` output (the user's denial of a ``needsApproval`` call; no ``value``, an
    optional ``reason``, provider-utils ``content-part.ts``) passed by the SDK's output decoder, so the denied call
    read as a success observing the output's JSON. It is now the call not run, worded as ``vercel_ai`` words it."""
    denied = json.dumps({"type": "execution-denied", "reason": "not now"}, separators=(",", ":"))
    tracked = only(_first_output_replaced(tmp_path, denied), tenant="acme").steps[0]
    assert (tracked.action, tracked.error) == ("trackParcel", "not run: denied: not now")

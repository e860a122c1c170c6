"""Harbor's OTel export (``harbor traces export --format otel``: harbor-atif2otel's ``convert_trajectory``).

It rebuilds OpenInference spans from a trial's ATIF trajectory: an LLM span per agent step (its ``message`` as the
output), a TOOL span per call (its result as the output), every span's status OK. So what the trajectory said only
in its text is all the spans say, and it is read as the ATIF reader reads it (one rule for both, from ``atif``):

- a tool's result shows its failure only in its text (hermes' and strands' JSON ``exit_code``, Claude Code's
  ``Exit code N``, an ``Error:`` line ...): that is the tool step's error;
- an agent step that said nothing but its calls carries the converter's placeholder as its message (``[tool
  call]``, ``(tool calls)``, ``(tool use)`` ...): no words of the agent's, so no thought and no answer (and the
  root's output, the last agent message, is no answer when the run ended on a call).
"""

from __future__ import annotations

from typing import Any

from .._spans import Node
from ..atif import is_placeholder, result_error

#: The resource's ``telemetry.sdk.name`` on every span the exporter writes.
SDK_NAME = "harbor-atif2otel"


def is_harbor_export(resource: dict[str, Any]) -> bool:
    """Whether a span's resource says Harbor's OTel export wrote it."""
    return resource.get("telemetry.sdk.name") == SDK_NAME


def read_as_atif(node: Node) -> None:
    """Give ``node`` what its ATIF step's text says (see the module docstring), in place."""
    if node.role == "tool" and not node.error and node.result:
        node.error = result_error(node.result)
    if node.output_text is not None and is_placeholder(node.output_text):
        node.output_text = None
    node.output_messages = [m for m in node.output_messages if not (m.get("text") and is_placeholder(m["text"])
                                                                    and not m.get("calls"))]

"""Probe F (round 46): Harbor's ATIF of Codex / Gemini CLI sessions, AI SDK 6 answers that fail their schema, an
OpenHands SDK sub-agent's conversation, read through the public reader.

The fixtures (each folder's SOURCE.md) are what the released packages wrote, unmodified or trimmed.
"""

from __future__ import annotations

from pathlib import Path

import adapter_support
from trajsearch.model import Outcome

FIXTURES = Path(__file__).parent / "fixtures"
AI6 = FIXTURES / "vercel-ai" / ".real" / "probeF46" / "ai6.0.333-no-object-generated.otlp.json"


# -- AI SDK 6: an answer that is not the object asked for (F3) ---------------------------------


def test_ai_sdk_answer_that_fails_the_schema_is_that_answers_error() -> None:
    """F3: ``generateObject`` (and ``generateText`` with ``Output.object``) throws ``AI_NoObjectGeneratedError``
    carrying the answer's text when it does not parse or match the schema; the SDK records it on the root call span.
    It set the outcome only: the answer had no error and the failure pointed at no step."""
    runs = {r.trajectory_id: r for r in adapter_support.runs(AI6)}
    bad_object = runs["vercel:5446ba74876a34de178bed890a8d0734"]
    assert [s.action for s in bad_object.steps] == ["respond"]
    assert bad_object.steps[0].arguments == {"content": '{"city": "Lyon", "tempC": "warm"}'}
    assert bad_object.steps[0].error == ("AI_NoObjectGeneratedError: No object generated: response did not match "
                                         "schema.")
    unparsed = runs["vercel:7d68374d5032d35dc7f941d59b8e4e18"]
    assert [s.action for s in unparsed.steps] == ["read_file", "respond"]
    assert unparsed.steps[0].error is None
    assert unparsed.steps[1].error == "AI_NoObjectGeneratedError: No object generated: could not parse the response."
    for run in (bad_object, unparsed):
        assert run.outcome is Outcome.failure and run.failure.error == run.steps[-1].error

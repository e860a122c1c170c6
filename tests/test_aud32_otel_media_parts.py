"""Round 32 audit of the OpenTelemetry span adapters against the newest GenAI semantic conventions.

``gen_ai.input.messages`` parts that are not text (``blob`` inline data, ``uri``, ``file``) were dropped: a user's
question about a picture or a recording was read as if it had none. They are noted as the other formats' images are.
"""

from __future__ import annotations

import json
from pathlib import Path

from adapter_support import runs
from trajsearch.ingest.detect import detect_format

MIRASCOPE = Path(__file__).parent / "fixtures" / "otel-genai" / ".aud32" / "mirascope-2.0-image-parts.otlp.json"


def test_genai_media_parts_are_noted_in_the_task() -> None:
    """Mirascope's spans of a question with an image by URL, a PNG inline and an MP3 inline: each task keeps the
    question and says what came with it, the base64 itself left out."""
    assert detect_format(MIRASCOPE) == "otel-genai"
    read = sorted(runs(MIRASCOPE), key=lambda r: r.trajectory_id)
    assert [r.task for r in read] == ["What's in this image?\n[image]", "What color is this pixel?\n[image]",
                                      "What is in this audio?\n[audio]"]
    assert [s.action for r in read for s in r.steps] == ["respond"] * 3
    assert read[1].steps[0].arguments == {"content": "The color of this pixel is bright red."}


OPENINFERENCE_IMAGE = Path(__file__).parent / "fixtures" / "openinference" / ".aud32" / "spec-multimodal-message.json"


def test_openinference_image_content_is_noted_in_the_task() -> None:
    """The OpenInference spec's multimodal message (a text part and an ``image`` part in ``message.contents``): the
    task keeps the question and says an image came with it."""
    assert detect_format(OPENINFERENCE_IMAGE) == "openinference"
    (run,) = runs(OPENINFERENCE_IMAGE)
    assert run.task == "What objects do you see in this image?\n[image]"


VARIANTS = Path(__file__).parent / "fixtures" / "otel-genai" / ".aud32" / "media-parts-variants.otlp.json"
PNG_NAMED = "[image/png, 3 KB base64]"  # SWE-agent's view_image PNG, 2,568 characters of base64


def test_genai_inline_image_is_named_wherever_it_is_carried() -> None:
    """Mirascope's span with a real PNG of 2,568 base64 characters: as a ``blob``, as a ``uri`` holding a data URI
    (review AUDOT32 findings 1, 3), and as the assistant's whole reply, the image is named by its type and size as
    other formats' images are, and its base64 stays out; a ``file`` part's modality is read in any case (finding 4)."""
    assert detect_format(VARIANTS) == "otel-genai"
    read = sorted(runs(VARIANTS), key=lambda r: r.trajectory_id)
    question = "What color is this pixel?"
    assert [r.task for r in read] == [f"{question}\n{PNG_NAMED}", f"{question}\n{PNG_NAMED}",
                                      f"{question}\n[image]", question]
    assert read[3].steps[0].arguments == {"content": PNG_NAMED}
    assert all("iVBORw0KGgo" not in r.task and "iVBORw0KGgo" not in str(r.steps) for r in read)


OPENINFERENCE_JS = Path(__file__).parent / "fixtures" / "openinference" / ".aud32" / "js-openai-image-data-uri.otlp.json"


def test_openinference_data_uri_image_is_named() -> None:
    """The OpenInference JS OpenAI instrumentor's span of a text and a data-URI image (its test's inline snapshot): a
    GIF of 60 base64 characters is noted ``[image]``, the same span with a real PNG is named by type and size
    (review AUDOT32 findings 1, 2)."""
    assert detect_format(OPENINFERENCE_JS) == "openinference"
    read = sorted(runs(OPENINFERENCE_JS), key=lambda r: r.trajectory_id)
    assert [r.task for r in read] == ["Say this is a test\n[image]", f"Say this is a test\n{PNG_NAMED}"]
    assert [s.arguments for r in read for s in r.steps] == [{"content": "This is a test."}] * 2


OPENLLMETRY = Path(__file__).parent / "fixtures" / "otel-genai" / ".aud32" / "openllmetry-anthropic-image-prompt.otlp.json"


def test_openllmetry_prompt_content_list_is_read_as_parts() -> None:
    """OpenLLMetry's older attributes keep a message's content list with an image as its JSON text in
    ``gen_ai.prompt.N.content``: the question and its image are read, not the JSON with the image's base64 (review
    AUDOT32 finding 7)."""
    assert detect_format(OPENLLMETRY) == "otel-genai"
    read = sorted(runs(OPENLLMETRY), key=lambda r: r.trajectory_id)
    assert [r.task for r in read] == ["What do you see?\n[image]", f"What do you see?\n{PNG_NAMED}"]
    assert [s.arguments for r in read for s in r.steps] == [{"content": "I see the Traceloop logo."}] * 2


def test_prompt_content_list_with_odd_part_types_stays_text(tmp_path: Path) -> None:
    """A ``gen_ai.prompt.N.content`` list whose part ``type`` is a list or an object (hostile or broken input) is
    kept as the text it is, not a crash that loses the span's run."""
    spans = json.loads(OPENLLMETRY.read_text())
    attrs = spans["resourceSpans"][0]["scopeSpans"][0]["spans"][0]["attributes"]
    odd = '[{"type": ["image"]}, {"type": {"image": 1}}, {"type": "image"}]'
    next(a for a in attrs if a["key"] == "gen_ai.prompt.0.content")["value"] = {"stringValue": odd}
    (path := tmp_path / "odd.otlp.json").write_text(json.dumps(spans))
    assert sorted(r.task for r in runs(path)) == [f"What do you see?\n{PNG_NAMED}", odd]

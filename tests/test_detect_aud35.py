"""Round 35 (DET35): a file that merely quotes a format's words is no run of it, and no sub-agent is dropped unsaid.
Fixtures: tests/fixtures/mini-swe-agent/.aud35 (mini-swe-agent's own docs and prompt config),
tests/fixtures/cursor-cli/.aud35 (README.md there says where from)."""

from __future__ import annotations

from pathlib import Path

import pytest

from trajsearch.ingest.detect import detect_format

FIXTURES = Path(__file__).parent / "fixtures"
MINI = FIXTURES / "mini-swe-agent" / ".aud35"


@pytest.mark.parametrize("name", ["output_files.md", "default.yaml"])
def test_a_page_or_prompt_config_quoting_mini_swe_agent_is_no_run(name: str) -> None:
    """Bug: mini-swe-agent's signature (its submit marker, its action fence, ``"mini_version"``) was searched in any
    file's head, so its own docs page and prompt template were "mini-swe-agent" runs, rejected line by line as
    malformed JSON. Only a JSON document's head (a message's text quoting the marks) is looked in now."""
    with pytest.raises(ValueError, match="unrecognised dump format"):
        detect_format(MINI / name)


"""OpenCode calls its permissions refused are calls not run, not tool failures: real files of opencode-ai@1.18.33
(tests/fixtures/opencode/.aud31/README.md)."""

from __future__ import annotations

from pathlib import Path

import pytest

from trajsearch.actions import ran

from adapter_support import only

REAL = Path(__file__).parent / "fixtures" / "opencode" / ".aud31"


@pytest.mark.parametrize("name, tool, said", [
    ("ask-rejected-bash.json", "bash", "not run: denied by the user"),
    ("ask-rejected-edit.json", "edit", "not run: denied by the user"),
    ("rule-denied-bash.json", "bash", "not run: denied by a permission rule"),
])
def test_a_call_the_permissions_refused_is_not_run(name: str, tool: str, said: str) -> None:
    run = only(REAL / name)
    step = run.steps[0]
    assert step.action == tool and step.error == said and not ran(step)
    assert step.observation.startswith("The user ")  # what the model was told, kept

"""OpenCode calls its permissions refused are calls not run, not tool failures: real files of opencode-ai@1.18.33
(tests/fixtures/opencode/.aud31/README.md)."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from trajsearch.actions import ran

from adapter_support import only
from cli_support import newcomer, run_cli  # noqa: F401 (a fixture)

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


def test_kilo_codes_session_database_is_named_with_kilos_export_command(tmp_path: Path, newcomer) -> None:
    """Kilo Code (2026) is built on OpenCode: ``~/.local/share/kilo/kilo.db``, the same tables, ``kilo export``
    (Kilo-Org/kilocode ``packages/opencode/src/storage/db.ts``); a walk of its data folder passed the database over
    unnamed, and ``opencode export`` cannot read it."""
    data = tmp_path / ".local" / "share" / "kilo"
    data.mkdir(parents=True)
    with sqlite3.connect(data / "kilo.db") as db:
        db.executescript((REAL.parent / "opencode-1.18.33-tables.sql").read_text())
    db.close()
    code, out, err = run_cli("ingest", str(data), "--dry-run")
    said = " ".join((out + err).split())
    assert "Kilo Code's session database" in said and "`kilo export <sessionID>`" in said, said
    assert '"kilo","export"' in said and '"opencode","export"' not in said


@pytest.mark.parametrize("said, why", [
    ("This agent's policy prevents you from using this specific tool call.", "not run: denied by the agent's policy"),
    ("A global policy prevents you from using this specific tool call.", "not run: denied by a global policy"),
])
def test_kilo_codes_policy_refusals_are_calls_not_run(tmp_path: Path, said: str, why: str) -> None:
    """Kilo Code words its ``DeniedError`` by the rule's source (Kilo-Org/kilocode ``permission`` ``DeniedError``,
    kilocode_change): the agent's policy, a global policy, the user's rule; the real export's rule refusal so
    reworded."""
    real = (REAL / "rule-denied-bash.json").read_text()
    rule = "The user has specified a rule which prevents you from using this specific tool call."
    assert rule in real
    (tmp_path / "kilo.json").write_text(real.replace(rule, said))
    step = only(tmp_path / "kilo.json").steps[0]
    assert step.error == why and not ran(step)

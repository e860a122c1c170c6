"""The CLI's checks of what it is given, and its messages, on both backends (embedded store and server)."""

from __future__ import annotations

from pathlib import Path

from cli_support import backend, run_cli  # noqa: F401 (fixture)
from conftest import failing_run, make_run


def ingest_two(tmp_path: Path) -> None:
    path = tmp_path / "two.jsonl"
    runs = [make_run("c1", tenant="acme"), failing_run("c2", "KeyError: 'user_id'", tenant="acme")]
    path.write_text("\n".join(run.model_dump_json(exclude={"tenant"}) for run in runs) + "\n")
    code, out, err = run_cli("ingest", str(path), "--quiet")
    assert code == 0, err


def test_an_error_message_keeps_its_closing_quote(backend, tmp_path: Path) -> None:
    """Bug: messages lost their last quote (``... in tenant 'acme``): every message was stripped of quotes."""
    ingest_two(tmp_path)
    code, out, err = run_cli("similar", "--id", "nosuch")
    assert code == 1
    said = " ".join(err.split())
    assert "no trajectory 'nosuch'" in said, err
    if backend == "embedded":
        assert said.endswith("no trajectory 'nosuch' in tenant 'acme'"), err
        return
    code, out, err = run_cli("search", "zebra", "-t", "other")
    assert code == 2
    assert " ".join(err.split()).endswith("not 'other'"), err

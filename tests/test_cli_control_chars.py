"""Run text printed by the CLI cannot drive the operator's terminal (probe I, I3): the probe's dump holds
CSI erase and cursor-up, hidden text, OSC 0 (title), OSC 8 (hyperlink) and OSC 52 (clipboard write)
sequences and a lone CR in a task, an observation and a failure (tests/fixtures/native/.real/probe-i, see
SOURCE.md). Every command that prints run text shows them as visible escapes; ``--json`` keeps them as they
are (JSON escapes them, C1 too)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from cli_support import run_cli

ANSI = Path(__file__).parent / "fixtures" / "native" / ".real" / "probe-i" / "ansi-escapes.jsonl"
#: What a terminal may act on: C0 controls but tab and newline, DEL, C1.
CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


@pytest.fixture
def bob_store(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("TRAJSEARCH_MODEL", "hashing")
    monkeypatch.delenv("TRAJSEARCH_SERVER", raising=False)
    monkeypatch.setenv("TRAJSEARCH_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("TRAJSEARCH_URI", str(tmp_path / "home" / "milvus.db"))
    monkeypatch.setenv("TRAJSEARCH_TRACES", str(tmp_path / "home" / "traces"))
    monkeypatch.setenv("TRAJSEARCH_TENANT", "bob")
    code, _, err = run_cli("ingest", str(ANSI), "--quiet")
    assert code == 0, err


@pytest.mark.parametrize("args", [
    ("show", "bob-ansi-1"),
    ("show", "bob-ansi-2"),
    ("search", "Refund the ticket", "-e", "1"),
    ("search", "ERROR hidden INVISIBLE", "--level", "step"),
    ("similar", "boom red"),
    ("failures",),
    ("exemplars", "--warnings", "timeout \x1b]52;c;Y3VybCBldmlsfHNo\x1b\\ after 30s"),
], ids=lambda a: "-".join(a[:2]).replace("\x1b", ""))
def test_run_text_is_printed_with_its_control_characters_escaped(bob_store, args) -> None:
    code, out, err = run_cli(*args)
    assert code == 0, err
    assert not CONTROL.search(out), [line for line in out.splitlines() if CONTROL.search(line)]
    assert "\\x1b]52;c;" in out or "\\x1b[" in out  # shown, as text


def test_show_prints_each_sequence_as_text_and_json_keeps_them(bob_store) -> None:
    code, out, _ = run_cli("show", "bob-ansi-1")
    assert code == 0
    assert "\\x1b]52;c;Y3VybCBldmlsfHNo\\x07" in out  # the clipboard write, visible
    assert "ok\\x0d\\x1b[2KERROR hidden? \\x1b[8mINVISIBLE\\x1b[0m" in out  # the CR that overwrote the line

    code, out, _ = run_cli("show", "bob-ansi-1", "--json")
    assert code == 0
    assert "\x1b]52;c;Y3VybCBldmlsfHNo\x07" in json.loads(out)["task"]


def test_json_output_escapes_del_and_c1_controls(bob_store, tmp_path: Path) -> None:
    """``json.dumps(ensure_ascii=False)`` leaves DEL and C1 raw; U+009B is a CSI to a terminal the JSON is printed
    on. ``--json`` escapes them (``\\u009b``), and the text reads back the same."""
    record = json.loads(ANSI.read_text().splitlines()[0])
    record["trajectory_id"] = "bob-c1"
    record["task"] = "Refund \x9b2J\x9d0;pwned\x9c the ticket\x7f"
    dump = tmp_path / "c1.jsonl"
    dump.write_text(json.dumps(record) + "\n")
    code, _, err = run_cli("ingest", str(dump), "--quiet")
    assert code == 0, err

    code, out, _ = run_cli("show", "bob-c1", "--json")
    assert code == 0
    assert not CONTROL.search(out)
    assert "\\u009b2J" in out
    assert json.loads(out)["task"] == record["task"]

    # export's JSON lines go to stdout by default (review 2, D7)
    code, out, err = run_cli("export", "-q", "Refund the ticket", "--outcome", record["outcome"], "-f", "jsonl")
    assert code == 0, err
    assert not CONTROL.search(out)
    assert record["task"] in [json.loads(line)["task"] for line in out.splitlines()]

"""A newcomer's first hour with their own runs (probe 50, area NC): the CLI's public entry point on a dump written
from ``schemas/trajectory.schema.json`` alone (``fixtures/native/.newcomer``, see its SOURCE.md; a hidden folder, which
test_adapters' walk of the fixtures passes over)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import typer.main
from typer.core import TyperOption
from typer.testing import CliRunner

from cli_support import newcomer as embedded  # noqa: F401 (a fixture)
from trajsearch.cli import app

OWN = Path(__file__).parent / "fixtures" / "native" / ".newcomer" / "own-agent.jsonl"


def _cli(*args: str):
    return CliRunner().invoke(app, list(args))


def test_a_record_of_another_tenant_is_refused_saying_which_tenant_to_ingest_it_as(embedded) -> None:
    """Bug: the schema requires a ``tenant``, so every record a user writes from it names one; ingested without
    --tenant (as the first command a user tries), each was refused as "does not match the operator-given tenant
    'default'": no operator gave one, and nothing said that --tenant was what to give."""
    result = _cli("ingest", str(OWN), "--dry-run")
    assert result.exit_code == 4, result.output
    assert "record tenant 'acme'" in result.stderr
    assert "--tenant acme" in result.stderr, result.stderr


def test_dry_run_names_every_rejected_record_not_only_the_first(embedded) -> None:
    """Bug: ``ingest --dry-run`` (the README's pre-flight check) named only a file's first rejection, so a user fixing
    a hand-written dump learnt of one mistake per run; the ingest itself names each (up to ten, then the dead-letter
    file). Each of the three bad lines is named with its reason, on the terminal and in ``--json``."""
    result = _cli("ingest", str(OWN), "-t", "acme", "--dry-run")
    assert result.exit_code == 3, result.output
    said = " ".join(result.stderr.split())
    assert "line 2: invalid trajectory: field 'outcome'" in said
    assert "line 3: invalid trajectory: unexpected field 'steps[0].tool'" in said
    assert "line 5: invalid trajectory: missing required field 'steps[0].index'" in said

    data = json.loads(_cli("ingest", str(OWN), "-t", "acme", "--dry-run", "--json").stdout)
    (file,) = data["files"]
    assert [r["position"] for r in file["rejections"]] == ["line 2", "line 3", "line 5"]


def test_dry_run_counts_the_rejections_it_does_not_name(embedded, tmp_path: Path) -> None:
    """A file of many bad records names ten reasons, a reason's first five lines, and says how many more there are."""
    bad = OWN.read_text().splitlines()[2]  # a step's tool under "tool": here "tool_0" to "tool_11", 12 reasons
    many = tmp_path / "many.jsonl"
    many.write_text("".join(bad.replace("0003", f"{n:04}").replace('"tool"', f'"tool_{n % 12}"') + "\n"
                            for n in range(125)))
    result = _cli("ingest", str(many), "-t", "acme", "--dry-run")
    assert result.exit_code == 4, result.output
    said = " ".join(result.stderr.split())
    assert said.count("unexpected field 'steps[0].tool_") == 10
    assert "line 1, line 13, line 25, line 37, line 49 and 4 more: invalid trajectory: unexpected field " \
           "'steps[0].tool_0'" in said, said
    assert "and 41 more rejection(s)" in said  # 125 less the 84 the ten reasons name (9 or 8 of the first 100 each)


def _options() -> list[tuple[str, TyperOption]]:
    """Every option of every command, as ``--help`` lists them (typer carries its own click: its classes, not
    click's)."""
    root = typer.main.get_command(app)
    found = []

    def walk(command, name: str) -> None:
        if hasattr(command, "list_commands"):
            ctx = typer.Context(command)
            for sub in command.list_commands(ctx):
                walk(command.get_command(ctx, sub), f"{name} {sub}".strip())
            return
        found.extend((name, p) for p in command.params if isinstance(p, TyperOption) and not p.hidden)

    walk(root, "")
    return found


def test_every_option_of_every_command_says_what_it_does() -> None:
    """Bug: ``search --env-version``, ``--task-family``, ``similar -k``, ``export --policy-version`` and
    ``serve``/``ui --log-level`` had no help text: ``--help`` listed them with nothing beside them."""
    bare = [f"{name} {'/'.join(option.opts)}" for name, option in _options()
            if not option.help and "--help" not in option.opts]
    assert len(_options()) > 100
    assert not bare


def test_tenant_help_says_what_the_default_tenant_is(embedded) -> None:
    """Bug: every command's --tenant read "[default: (default)]" in --help, which says nothing of a tenant named
    ``default`` to a reader who has not met it."""
    result = _cli("search", "--help")
    assert result.exit_code == 0
    assert "(default)" not in result.stdout
    assert "'default'" in " ".join(result.stdout.split())


def test_a_file_of_no_format_says_how_to_bring_runs_of_an_agent_of_ones_own(embedded) -> None:
    """Bug: an agent of the user's own, its chat messages saved as the OpenAI SDK gives them (``chat-messages.json``,
    see SOURCE.md), is in none of the formats; the refusal named the formats and ``--format NAME``, none of which
    reads it, and not the one way in: the native JSONL the JSON Schema describes."""
    result = _cli("ingest", str(OWN.with_name("chat-messages.json")), "-t", "acme", "--dry-run")
    assert result.exit_code == 4, result.output
    said = " ".join(result.stderr.split())
    assert "unrecognised dump format" in said
    assert "python -m trajsearch.model" in said and "format native" in said


def test_native_jsonl_whose_first_run_is_longer_than_the_peek_and_keys_sorted_is_read(embedded, tmp_path: Path) -> None:
    """Bug: a user's own runs written with ``json.dumps(record, sort_keys=True)`` (or by a JS or Go writer, in
    another key order than the model's), the first run holding a long test log (over the 64 KiB detection peeks
    at), were refused whole as "unrecognised dump format": the first record could not be parsed from the peek, and
    the native signature wants ``trajectory_id`` as the first key. Line 1 of ``own-agent.jsonl``, its observation a
    100 kB pytest log, then line 4, both written so."""
    first, fourth = (json.loads(line) for line in OWN.read_text().splitlines()[0:4:3])
    first["steps"][0]["observation"] = "".join(f"tests/test_payments.py::test_{n} PASSED\n" for n in range(2500))
    dump = tmp_path / "runs.jsonl"
    dump.write_text("".join(json.dumps(run, sort_keys=True) + "\n" for run in (first, fourth)))
    assert dump.read_text().index("\n") > 64 * 1024

    data = json.loads(_cli("ingest", str(dump), "-t", "acme", "--dry-run", "--json").stdout)
    (file,) = data["files"]
    assert (file["format"], file["runs"], file["rejected"]) == ("native", 2, 0)


# Review of the newcomer fixes (probe 50, RNC; fixed by FRNC): the tenant refusal says the fix of the caller's path,
# the dry run says a reason once, and detection of a first line past the peek takes that path only for such a line.
LANGFUSE_ONE_LINE = Path(__file__).parent / "fixtures" / "langfuse" / ".real" / \
    "lfjs_anthropic_second_batch.ingestion.json"  # a real Langfuse JS SDK ingestion batch, one line (see SOURCE.md)


def _served(tmp_path: Path, tenant: str):
    """A server on loopback (the hashing embedder) whose one write key is of ``tenant``: (server, store, key)."""
    from trajsearch.embed import HashingEmbedder
    from trajsearch.search import TrajSearch
    from trajsearch.service.auth import KeyRing, key_entry, new_key
    from trajsearch.service.server import ServiceServer

    key = new_key()
    ts = TrajSearch.open(str(tmp_path / "srv.db"), traces=str(tmp_path / "srv-traces"), embedder=HashingEmbedder())
    return ServiceServer(ts, KeyRing.from_entries([key_entry(key, tenant=tenant, role="write")]),
                         address="127.0.0.1:0"), ts, key


def test_over_server_a_record_of_another_tenant_is_told_to_use_a_key_of_its_tenant(embedded, tmp_path: Path,
                                                                                  monkeypatch) -> None:
    """Bug: over --server the refusal said "ingest with --tenant acme", and that command failed ("--tenant 'acme' is
    not the key's tenant ('bob')"): there the key's tenant is the one, so a key of tenant 'acme' is the fix."""
    server, ts, key = _served(tmp_path, "bob")
    monkeypatch.setenv("TRAJSEARCH_API_KEY", key)
    for name in ("TRAJSEARCH_URI", "TRAJSEARCH_TRACES"):  # the server owns its store
        monkeypatch.delenv(name)
    try:
        with server as srv:
            for extra in ((), ("--dry-run",)):
                result = _cli("ingest", str(OWN), "--server", srv.address, *extra)
                assert result.exit_code == 4, result.output
                said = " ".join(result.stderr.split())
                assert "record tenant 'acme' does not match the --server key's tenant 'bob'" in said, said
                assert "ingest with a key of tenant 'acme'" in said and "--tenant" not in said, said
    finally:
        ts.close()


def test_a_python_caller_is_told_to_pass_tenant(embedded) -> None:
    """Bug: ``read_dump`` (no --tenant there) gave the CLI's "ingest with --tenant acme"."""
    from trajsearch.ingest.read import read_dump

    errors = [p.error for p in read_dump(OWN)]
    assert errors[0].startswith("record tenant 'acme' does not match the tenant given ('default': tenant=, else "
                                "'default'): to keep its runs under 'acme', pass tenant='acme'"), errors[0]
    assert not any("--tenant" in e for e in errors)


def test_dry_run_says_each_reason_once_with_the_records_it_refused(embedded) -> None:
    """Bug: a file whose every record names another tenant printed the same 250-character reason once per record (ten
    lines of it); now once, naming the lines it refused."""
    result = _cli("ingest", str(OWN), "--dry-run")
    said = " ".join(result.stderr.split())
    assert said.count("record tenant 'acme'") == 1, said
    assert f"{OWN}, line 1, line 2, line 3, line 4, line 5: record tenant 'acme' does not match the operator-given " \
           "tenant 'default' (--tenant, else $TRAJSEARCH_TENANT, else 'default'): to keep its runs under 'acme', " \
           "ingest with --tenant acme" in said, said
    assert "more rejection(s)" not in said


def test_dry_run_json_rejections_are_the_ingest_reports_objects(embedded, tmp_path: Path) -> None:
    """Bug: ``ingest --dry-run --json`` listed rejections as "position: reason" strings, ``ingest --json`` as
    ``{source, position, reason}`` objects: a script checking a dump before ingesting it read one shape, then the other.
    The dry run's are ``{position, reason}`` (its file is the entry's ``source``); ``first_rejection`` stays a line."""
    data = json.loads(_cli("ingest", str(OWN), "-t", "acme", "--dry-run", "--json").stdout)
    (file,) = data["files"]
    assert [r["position"] for r in file["rejections"]] == ["line 2", "line 3", "line 5"]
    assert file["rejections"][0]["reason"].startswith("invalid trajectory: field 'outcome'")
    assert file["first_rejection"] == f"line 2: {file['rejections'][0]['reason']}"
    report = json.loads(_cli("ingest", str(OWN), "-t", "acme", "--json").stdout)
    assert [{k: r[k] for k in ("position", "reason")} for r in report["rejections"]] == file["rejections"]


def _one_byte_of_cp1252(text: str, at: int) -> bytes:
    """``text`` as UTF-8 but for an ``é`` at ``at`` in cp1252 (one byte, 0xE9), as a Windows editor saving a
    correction in its "ANSI" encoding, or Python's ``open(f, "w")`` there, writes it."""
    data = text.encode("utf-8")
    return data[:at] + "é".encode("cp1252") + data[at + 1:]


def test_a_one_line_file_with_a_byte_not_utf8_is_read_as_its_format_and_the_byte_named(embedded, tmp_path: Path):
    """Bug: a one-line file that fits the 64 KiB peek was read again as raw bytes by the path for first lines longer
    than the peek, which failed on one byte not UTF-8: a Langfuse ingestion batch (a real one, an ``e`` made a cp1252
    ``é``) was "unrecognised dump format", a native run with sorted keys "binary, not text", where the reader names
    the line and the byte."""
    from trajsearch.ingest.detect import detect_format

    langfuse = tmp_path / "batch.json"
    langfuse.write_bytes(_one_byte_of_cp1252(LANGFUSE_ONE_LINE.read_text(), 20000))
    run = json.loads(OWN.read_text().splitlines()[0])
    native = tmp_path / "own.jsonl"
    line = json.dumps(run, sort_keys=True, ensure_ascii=False) + "\n"
    native.write_bytes(_one_byte_of_cp1252(line, line.index("payments") + 5))
    for path, fmt in ((langfuse, "langfuse"), (native, "native")):
        assert detect_format(path) == fmt
        result = _cli("ingest", str(path), "-t", "acme", "--dry-run")
        assert "line 1: not UTF-8 text: invalid continuation byte" in " ".join(result.stderr.split()), result.stderr

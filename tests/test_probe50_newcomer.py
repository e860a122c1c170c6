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

from trajsearch.cli import app

OWN = Path(__file__).parent / "fixtures" / "native" / ".newcomer" / "own-agent.jsonl"


@pytest.fixture
def embedded(tmp_path: Path, monkeypatch) -> None:
    """The embedded store, the hashing embedder, and no tenant set anywhere: a newcomer's shell."""
    monkeypatch.setenv("TRAJSEARCH_MODEL", "hashing")
    for name in ("TRAJSEARCH_SERVER", "TRAJSEARCH_TENANT", "TRAJSEARCH_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("TRAJSEARCH_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("TRAJSEARCH_URI", str(tmp_path / "home" / "milvus.db"))
    monkeypatch.setenv("TRAJSEARCH_TRACES", str(tmp_path / "home" / "traces"))


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
    assert [r.split(":")[0] for r in file["rejections"]] == ["line 2", "line 3", "line 5"]
    assert file["first_rejection"] == file["rejections"][0]


def test_dry_run_counts_the_rejections_it_does_not_name(embedded, tmp_path: Path) -> None:
    """A file of many bad records names the first ten and says how many more there are."""
    bad = OWN.read_text().splitlines()[1]
    many = tmp_path / "many.jsonl"
    many.write_text("".join(bad.replace("0002", f"{n:04}") + "\n" for n in range(25)))
    result = _cli("ingest", str(many), "-t", "acme", "--dry-run")
    assert result.exit_code == 4, result.output
    said = " ".join(result.stderr.split())
    assert said.count("field 'outcome'") == 10
    assert "and 15 more rejection(s)" in said


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

"""A newcomer's first afternoon (round 24, area NEWB): a store path that is a file (``--uri`` or ``$TRAJSEARCH_URI``
naming a file, or a path under one, said only "FileExistsError: [Errno 17] File exists"), help cut short at 80
columns, and a folder of files not named as dumps called "an empty folder, or a share not mounted?"."""

from __future__ import annotations

from pathlib import Path

import pytest

from cli_support import newcomer  # noqa: F401 (a fixture)
from cli_support import run_cli

OWN = Path(__file__).parent / "fixtures" / "native" / ".newcomer" / "own-agent.jsonl"


@pytest.mark.parametrize("under", [False, True], ids=["the-file", "under-the-file"])
def test_a_store_path_that_is_a_file_is_said_so(newcomer, tmp_path: Path, under: bool) -> None:  # noqa: F811
    file = tmp_path / "milvus.db"
    file.write_text("not a store\n")
    uri = file / "milvus.db" if under else file
    code, _, stderr = run_cli("stats", "-t", "acme", "--uri", str(uri))
    assert code == 1, stderr
    said = "".join(stderr.split())  # the console wraps long paths anywhere
    assert "FileExistsError" not in said and "Errno" not in said, stderr
    named = f"{uri}isafile" if not under else f"{uri}liesunder{file},whichisafile"
    assert f"thedatadirectory{named},notadirectory" in said and "point--uri" in said, stderr
    assert file.read_text() == "not a store\n"  # left as it was


@pytest.mark.parametrize("how", ["--uri", "$TRAJSEARCH_HOME"])
def test_workers_on_a_store_path_that_is_a_file_say_so_too(newcomer, tmp_path: Path, monkeypatch,  # noqa: F811
                                                            how: str) -> None:
    """Review NEWB, 2: ``ingest --workers 2`` said "FileExistsError: [Errno 17] File exists" of ``--uri afile``, and
    "NotADirectoryError: ... afile/ingest" of ``TRAJSEARCH_HOME=afile``, where one process says what is wrong."""
    file = tmp_path / "afile.db"  # a store path Milvus Lite would take (round 25: one not ending in .db is refused)
    file.write_text("not a store\n")
    if how == "--uri":
        args, uri = ("--uri", str(file)), file
    else:
        for name in ("TRAJSEARCH_URI", "TRAJSEARCH_TRACES"):
            monkeypatch.delenv(name)
        monkeypatch.setenv("TRAJSEARCH_HOME", str(file))
        args, uri = (), file / "milvus.db"
    code, _, stderr = run_cli("ingest", str(OWN), "-t", "acme", "--workers", "2", "-q", *args)
    said = "".join(stderr.split())
    assert code == 1 and "Error:" not in said and "Errno" not in said, stderr
    named = f"{uri}isafile" if how == "--uri" else f"{uri}liesunder{file},whichisafile"
    assert f"thedatadirectory{named},notadirectory" in said, stderr
    assert file.read_text() == "not a store\n"


def _commands(group, path: tuple[str, ...] = ()):
    """Every command's words (a group's subcommands' too), depth first."""
    import click

    for name, command in group.commands.items():
        if isinstance(command, click.Group):
            yield from _commands(command, (*path, name))
        else:
            yield (*path, name)


def test_no_help_is_cut_short_in_an_80_column_terminal(monkeypatch) -> None:
    """A word too long for its help column was cut with "…" at 80 columns (a terminal's default, and any pipe's):
    the store's default path read "$TRAJSEARCH_HOME/milvu…" in 12 commands, and 15 lines were cut in all."""
    import typer
    import typer.rich_utils

    from trajsearch.cli import app

    monkeypatch.setenv("COLUMNS", "80")
    # whatever the caller's environment: typer reads $TERMINAL_WIDTH (a fixed width) and $FORCE_COLOR / $PY_COLORS /
    # $GITHUB_ACTIONS (a terminal's colours) once, at import (review NEWB, 5: 'assert 120 <= 80', ANSI codes)
    monkeypatch.setattr(typer.rich_utils, "MAX_WIDTH", 80)
    monkeypatch.setattr(typer.rich_utils, "FORCE_TERMINAL", False)
    commands = list(_commands(typer.main.get_command(app)))
    assert len(commands) >= 17 and ("keys",) in commands
    cut = {}
    for words in commands:
        code, stdout, stderr = run_cli(*words, "--help")
        assert code == 0, stderr
        assert max(map(len, stdout.splitlines())) <= 80, words  # the width asked for is the one drawn
        cut.update({" ".join(words): line.strip() for line in stdout.splitlines() if "…" in line})
    assert cut == {}
    _, stdout, _ = run_cli("search", "--help")
    said = " ".join(stdout.replace("│", " ").split())
    assert "default: milvus.db in $TRAJSEARCH_HOME" in said and "default: traces in $TRAJSEARCH_HOME" in said
    # what leaving a filter out searches: the level and outcome filters had listed their words alone
    assert "none named: every level" in said and "none named: every outcome" in said, said
    # review NEWB, 7: each command's --outcome says what naming none keeps in it; serve's help keeps an address as
    # example and the name Kubernetes gives its kill's delay (both had been reworded to fit 80 columns)
    _, stdout, _ = run_cli("export", "--help")
    assert "none named: success)" in " ".join(stdout.replace("│", " ").split())
    _, stdout, _ = run_cli("serve", "--help")
    said = " ".join(stdout.replace("│", " ").split())
    assert "e.g. https://ts.example.com" in said and "terminationGracePeriodSeconds" in said, said


def test_a_folder_of_files_not_named_as_dumps_is_not_called_empty(newcomer, tmp_path: Path) -> None:  # noqa: F811
    """An agent's own runs saved as ``runs.log`` in a folder: the walk passes the file over by its name, and the
    summary said the folder was empty or not mounted. It names the files passed over and how to have one read."""
    folder = tmp_path / "agent-logs"
    folder.mkdir()
    log = folder / "runs.log"
    log.write_text(OWN.read_text().splitlines()[0] + "\n")  # a valid native record, under a log's name
    for n in range(1, 10):  # notes named before it: the three names shown had hidden it (review NEWB, 7)
        (folder / f"n{n}.txt").write_text("what I ran today\n")
    code, _, stderr = run_cli("ingest", str(folder), "-t", "acme")
    said = "".join(stderr.split())  # the console wraps long paths anywhere
    assert "anemptyfolder" not in said, stderr
    assert f"(10file(s)passedoverbyname,thelargestfirst:{log},{folder / 'n1.txt'}," in said, stderr
    assert f"{folder / 'n7.txt'},…;nameafileitselftoreadit" in said, stderr
    code, stdout, stderr = run_cli("ingest", str(log), "-t", "acme", "--format", "native")
    assert code == 0 and "ingested 1 runs" in stdout, stdout + stderr


def test_a_folder_of_an_archive_and_a_log_names_both(newcomer, tmp_path: Path) -> None:  # noqa: F811
    """Review NEWB, 7: a folder holding ``dump.zip`` and ``runs.log`` was said to hold only the archive."""
    import zipfile

    folder = tmp_path / "agent-logs"
    folder.mkdir()
    (folder / "runs.log").write_text(OWN.read_text().splitlines()[0] + "\n")
    with zipfile.ZipFile(folder / "dump.zip", "w") as archive:
        archive.writestr("runs.jsonl", OWN.read_text())
    code, _, stderr = run_cli("ingest", str(folder), "-t", "acme")
    said = "".join(stderr.split())
    assert code == 4 and "dump.zip(zip):unpackthem" in said, stderr
    assert "and1file(s)passedoverbyname,thelargestfirst:runs.log;nameafileitselftoreadit" in said, stderr

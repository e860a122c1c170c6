"""A filter value the server refuses, given to the CLI (``--env-version``, ``--tool``, ``--task-family``,
``--policy-version``, ``failures --model``): refused by the CLI itself in one line naming the flag, the same embedded
and over ``--server`` (probe r37, UX). It had been three answers for one command line: embedded, ``search
--env-version ""`` (an unset ``$VAR``) kept the runs with no version recorded (the library's meaning of "") and
``exemplars --tool $'a\\nb'`` took the value; over ``--server`` each was "INVALID_ARGUMENT: env_versions[0]: ..." with a
request id."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from trajsearch.cli import SAMPLE

from cli_support import backend  # noqa: F401 (a fixture)
from cli_support import run_cli

#: (the value, what the refusal says of it)
BAD = [("", "must not be empty (an unset $VAR?): leave the option out not to filter by it"),
       # blank: no version or tool is spaces alone (review r37-ux 7: it was searched, while "" was refused)
       ("  ", "'  ' is blank: leave the option out not to filter by it"),
       ("v2\nv3", "contains control characters"), ("v" * 201, "too long (201 > 200")]

#: (a command line without the filter, the filter flags it takes)
COMMANDS = [
    (("search", "payments test"), ("--env-version", "--tool", "--task-family")),
    (("exemplars", "Fix the failing payments test"), ("--env-version", "--policy-version", "--tool")),
    (("export", "--query", "payments"), ("--env-version", "--policy-version", "--task-family", "--tool")),
    # failures --model: a model id is a filter value too (review r37-ux 1: it had been the three answers)
    (("failures",), ("--env-version", "--model", "--tool")),
]


@pytest.mark.parametrize(("value", "said"), BAD, ids=["empty", "blank", "newline", "long"])
def test_a_filter_value_no_run_can_hold_is_refused_naming_the_flag(
        backend, value: str, said: str) -> None:  # noqa: F811
    for command, flags in COMMANDS:
        for flag in flags:
            code, stdout, stderr = run_cli(*command, flag, value)
            assert code == 2, (command, flag, code, stdout, stderr)
            [line] = stderr.splitlines()  # one line, whole in a log or a pipe
            assert line.startswith(f"error: {flag} ") and said in line, (command, flag, stderr)


#: the flags naming the tools an agent has, which the server takes up to 256 of (32 of any other filter)
TOOL_FLAGS = {("exemplars", "--tool"), ("failures", "--tool")}


def test_more_filter_values_than_the_server_takes_are_refused_naming_the_flag(backend) -> None:  # noqa: F811
    """Review RT2, 2: the CLI checked each value, never how many: ``search`` with 33 ``--tool`` found "no matches"
    embedded and was "INVALID_ARGUMENT: tools: at most 32 values, got 33" with a request id over --server."""
    for command, flags in COMMANDS:
        for flag in flags:
            most = 256 if (command[0], flag) in TOOL_FLAGS else 32
            values = [part for n in range(most + 1) for part in (flag, f"v{n}")]
            code, stdout, stderr = run_cli(*command, *values)
            assert (code, stderr.splitlines()) == (2, [f"error: {flag}: at most {most} values, got {most + 1}"]), (
                command, flag, stdout)
    code, stdout, stderr = run_cli("failures", *[part for n in range(33) for part in ("--tool", f"t{n}")])
    assert code == 0, stderr  # 33 tools are within failures' bound on either backend


def test_a_value_holding_quotes_and_bars_is_searched_as_it_is(backend, tmp_path: Path) -> None:  # noqa: F811
    """Not refused: it is one value (escaped into the filter), which no run holds."""
    dump = tmp_path / "runs.jsonl"  # the bundled sample's first real runs, under the CLI's tenant
    dump.write_text("".join(json.dumps({**json.loads(line), "tenant": "acme"}) + "\n"
                            for line in Path(SAMPLE).read_text().splitlines()[:3]))
    assert run_cli("ingest", str(dump))[0] == 0
    code, stdout, stderr = run_cli("search", "payments test", "--env-version", 'v2" || tenant != "x\\')
    assert code == 0, stderr
    assert "nothing found inside --env-version v2\" || tenant" in " ".join(stderr.split()), stderr
    assert "no matches" in stdout, stdout


@pytest.mark.parametrize("run_id", ['a"||b', "a\nb", "x" * 193, ""], ids=["quotes", "newline", "long", "empty"])
def test_an_id_no_run_can_have_is_refused_in_the_same_line_on_both_backends(backend, run_id: str) -> None:  # noqa: F811
    """``show``, ``similar --id`` and ``delete``: over --server ``show 'a"||b'`` had been "INVALID_ARGUMENT:
    trajectory_id: ... (request id ...)", ``show ''`` "trajectory_id: is required"; embedded, the library's words. The
    line names the flag or the argument as ``--help`` does (review r37-ux 6: it named the library's field)."""
    for command, name in ((("show", run_id), "trajectory_id"), (("similar", "--id", run_id), "--id"),
                          (("delete", "--dry-run", run_id), "trajectory_id")):  # one id refused: singular (RT2, 4)
        code, stdout, stderr = run_cli(*command)
        assert code == 2, (command, code, stdout, stderr)
        assert stderr.splitlines() == [f"error: invalid {name} {run_id!r}: expected "
                                       "^[A-Za-z0-9][A-Za-z0-9_.:@/+=-]{0,191}$"], (command, stderr)

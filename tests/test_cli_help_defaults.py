"""``serve --help`` says, for each option, what the server does without it (round 26, CLI3).

A newcomer reading it met ``--tls-cert``, ``--metrics``, ``--http`` and ``--model`` with no word of their default:
whether the server spoke TLS, served metrics or web pages unless told, and which model embeds its queries (a store
ingested with another answers nonsense). Each option's row (the help at 400 columns: one row an option, its wrapped
lines joined) shows ``[default: ...]``, says ``default`` itself, or is a flag (off unless given) or ``--help``.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from process_support import cli_env

ROOT = Path(__file__).parents[1]
_ROW = re.compile(r"^│ (--[\w-]+)")


def _rows(command: str) -> dict[str, str]:
    """Each option of ``command``'s help, with its text (the lines it wraps over joined)."""
    shown = subprocess.run([sys.executable, "-m", "trajsearch.cli", command, "--help"], cwd=ROOT, env=cli_env(),
                           capture_output=True, text=True, timeout=600)
    assert shown.returncode == 0, shown.stderr
    rows: dict[str, str] = {}
    option = None
    for line in shown.stdout.splitlines():
        if found := _ROW.match(line):
            option = found.group(1)
            rows[option] = line
        elif option and line.startswith("│ ") and line[2:].startswith(" "):
            rows[option] += " " + line
        else:
            option = None
    return rows


@pytest.mark.parametrize("command", ["serve", "ui"])  # ui shares --model with serve
def test_every_option_of_a_long_running_command_says_its_default(command: str) -> None:
    rows = _rows(command)
    assert "--model" in rows and "--keys" in rows, rows  # read as a user reads it
    silent = [option for option, text in rows.items()
              if option != "--help" and "<bool>" not in text and "default" not in text.lower()]
    assert silent == [], silent

"""Round 35, UX: an ingest's progress moves within a file over --server, and a dry run shows progress too.

``ingest --server`` had moved its bar by whole files once their records were sent: one large file showed 0.0 MB
until its end. It now counts the bytes read as the reading layer tells them (``read_inputs``' ``on_bytes``, the
callback a local ingest's bar is fed from). ``ingest --dry-run`` printed nothing until its listing (8.9 s for a
343 MB walk); it now shows the same progress on stderr, labelled a dry run, stdout left to the listing.

Stderr is no terminal here (a log's lines, not a bar); ``--log-every 0`` gives a line per update, so the tests
assert on the lines' content and order, not on time. The input: fifteen real tau-bench runs in one 0.3 MB file
(tests/fixtures/tau-bench/.page, see its SOURCE.md), read streamed run by run.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from cli_support import backend, run_cli  # noqa: F401 - a fixture

TAU = Path(__file__).parent / "fixtures" / "tau-bench" / ".page" / "gpt-4o-airline-0-14.json"
SIZE = f"{TAU.stat().st_size / 1e6:.1f}"


def _lines(stderr: str, label: str, runs: str = "") -> list[tuple[float, int | None]]:
    """(MB done, runs counted or None) of each progress line labelled ``label``, in order; every one of the file's
    size."""
    said = re.findall(rf"^{re.escape(label)}: ([\d.]+) of ([\d.]+) MB done, (?:(\d+) {runs}, )?\d+:\d\d:\d\d elapsed$",
                      stderr, re.M)
    assert {total for _, total, _ in said} == {SIZE}, stderr
    return [(float(done), int(n) if n else None) for done, _, n in said]


@pytest.mark.parametrize("backend", ["server"], indirect=True)
def test_an_ingest_over_a_server_moves_its_bytes_while_a_file_is_read(backend: str) -> None:
    code, out, err = run_cli("ingest", str(TAU), "--log-every", "0")
    assert code == 0, out + err
    lines = _lines(err, "ingesting over --server", "runs and records sent to the server")
    assert lines[-1] == (float(SIZE), 15)
    assert [mb for mb, _ in lines] == sorted(mb for mb, _ in lines)
    # the bytes moved before the file's last run was sent (it had said 0.0 MB until the end)
    assert any(0 < mb < float(SIZE) and runs < 15 for mb, runs in lines), err


def test_a_dry_run_shows_its_progress_on_stderr_unless_told_not_to(backend: str) -> None:
    code, out, err = run_cli("ingest", str(TAU), "--dry-run", "--log-every", "0")
    assert code == 0, out + err
    lines = _lines(err, "dry run, reading")
    assert len(lines) > 2 and lines[-1] == (float(SIZE), None)
    assert [mb for mb, _ in lines] == sorted(mb for mb, _ in lines)
    assert "MB done" not in out and "runs 15;" in out  # stdout: the listing alone
    for extra in (["--quiet"], ["--log-every", "86400"], ["--json"]):  # as a real ingest honours them
        code, out, err = run_cli("ingest", str(TAU), "--dry-run", "--log-every", "0", *extra)
        assert code == 0, out + err
        assert "MB done" not in out + err, extra
    assert json.loads(out)["files"][0]["runs"] == 15  # --json's stdout untouched


def test_a_dry_run_ends_at_its_total_where_a_file_could_not_be_read(tmp_path: Path) -> None:
    """A file no read tells bytes of (here random bytes named .jsonl) is done once the dry run is: the last line
    said 0.3 of 0.4 MB, where an ingest over --server ends at its total (review UX35, 3)."""
    (tmp_path / "noise.jsonl").write_bytes(bytes(range(256)) * 400)  # 0.1 MB, not text
    (tmp_path / TAU.name).write_bytes(TAU.read_bytes())
    total = f"{sum(p.stat().st_size for p in tmp_path.iterdir()) / 1e6:.1f}"
    code, out, err = run_cli("ingest", str(tmp_path), "--dry-run", "--log-every", "0")
    assert "noise.jsonl" in err, err  # a rejection named, the good file kept
    said = re.findall(r"^dry run, reading: ([\d.]+) of ([\d.]+) MB done", err, re.M)
    assert said and said[-1] == (total, total), err


@pytest.mark.parametrize("backend", ["server"], indirect=True)
def test_a_planning_error_over_a_server_is_not_framed_by_a_bar(backend: str, tmp_path: Path,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    """On a terminal, an --outcomes file that cannot be read is said alone, as before round 35 (the bar had opened
    before the planning: `ingesting ━━━ 0/? bytes 0 runs sent` around the error; review UX35, 2)."""
    monkeypatch.setenv("TTY_COMPATIBLE", "1")  # Rich: stderr a terminal (a bar, not lines)
    garbage = tmp_path / "garbage.jsonl"
    garbage.write_bytes(bytes(range(128, 256)) * 8)
    code, out, err = run_cli("ingest", str(TAU), "--outcomes", str(garbage))
    # Rich lays a terminal's text out at its width (80 where it finds none, as under CI): a long path may wrap
    assert code != 0 and "garbage.jsonl" in err.replace("\n", ""), out + err
    assert "ingesting" not in err and "runs sent" not in err, err

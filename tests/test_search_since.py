"""``search --since`` and ``similar --since``: runs started then or later, embedded and over a server alike.

The web page searched from a day ("From"), the library's filters held the field (``created_after``), while the CLI's
``search``/``similar``, the façade's verbs and gRPC's Search/SimilarRuns had no way to ask it (round 24, ENG2's
probe). The sample holds tau-bench runs of 2024-05-15 and mini-swe-agent runs of April 2026.
"""

from __future__ import annotations

import json
from datetime import datetime, timezone
from pathlib import Path

from cli_support import backend, run_cli  # noqa: F401 - the fixture

SAMPLE = Path(__file__).parents[1] / "trajsearch" / "samples" / "sample.jsonl"
CUT = "2026-01-01"
CUT_EPOCH = int(datetime(2026, 1, 1, tzinfo=timezone.utc).timestamp())


def _started(out: str, key: str = "") -> list[int]:
    """When each run of a ``--json`` answer started (epoch seconds)."""
    rows = json.loads(out)
    return [int((row[key] if key else row)["created_at"]) for row in rows]


def test_search_and_similar_keep_the_runs_started_since(backend, tmp_path: Path) -> None:  # noqa: F811
    runs = tmp_path / "sample.jsonl"  # the backend's tenant (a key reads its own)
    runs.write_text("".join(json.dumps(dict(json.loads(line), tenant="acme")) + "\n"
                            for line in SAMPLE.read_text().splitlines() if line.strip()))
    code, _, err = run_cli("ingest", str(runs), "--quiet")
    assert code == 0, err
    query = "Error: the flight is not available"
    code, out, err = run_cli("search", query, "--level", "step", "-k", "20", "--json")
    assert code == 0, err
    assert any(t < CUT_EPOCH for t in _started(out)) and any(t >= CUT_EPOCH for t in _started(out)), out
    for args in (("search", query, "--level", "step", "-k", "20"), ("similar", query, "-k", "20")):
        code, out, err = run_cli(*args, "--since", CUT, "--json")
        assert code == 0, err
        started = _started(out, "best" if args[0] == "similar" else "")
        assert started and all(t >= CUT_EPOCH for t in started), (args[0], out)
    # a period back from now: every sample run is older than a day
    code, out, err = run_cli("search", query, "--since", "1d", "--json")
    assert code == 0 and json.loads(out) == [] and "only runs started since" in err, (out, err)


def test_a_since_that_is_no_date_or_period_is_refused_in_words(backend) -> None:  # noqa: F811
    code, _, err = run_cli("similar", "x", "--since", "yesterday")
    [line] = err.splitlines()  # one line, as every refusal of the CLI's own (review r37-ux 3)
    assert code == 2 and line.startswith("error: --since: expected a date like 2026-05-01"), err
    assert "'yesterday'" in line, err
    # failures names its flags too (review RT2, 5: it said "since: ..." and "until: ...")
    for flag, value, said in (("--since", "7", "a bare number is no period"),
                              ("--until", "2020-13-01", "expected an ISO date or time")):
        code, _, err = run_cli("failures", flag, value)
        [line] = err.splitlines()
        assert code == 2 and line.startswith(f"error: {flag}: {said}") and f"'{value}'" in line, err


def _ingest_sample(tmp_path: Path) -> None:
    """The sample's runs under the backend's tenant."""
    runs = tmp_path / "sample.jsonl"
    runs.write_text("".join(json.dumps(dict(json.loads(line), tenant="acme")) + "\n"
                            for line in SAMPLE.read_text().splitlines() if line.strip()))
    code, _, err = run_cli("ingest", str(runs), "--quiet")
    assert code == 0, err


def test_a_since_of_digits_is_a_day_or_refused_never_seconds(backend, tmp_path: Path) -> None:  # noqa: F811
    """``20260101`` is the web's YYYYMMDD "From" day (it was 20,260,101 seconds back: some day of April), and a bare
    number is refused for want of a unit (``1714000000`` searched from 1972); ``failures --since`` keeps its periods."""
    _ingest_sample(tmp_path)
    query = "Error: the flight is not available"
    code, out, err = run_cli("search", query, "--level", "step", "-k", "20", "--since", "20260101", "--json")
    assert code == 0, err
    code, dashed, err = run_cli("search", query, "--level", "step", "-k", "20", "--since", CUT, "--json")
    assert code == 0, err
    assert _started(out) == _started(dashed) and all(t >= CUT_EPOCH for t in _started(out)), (out, dashed)
    for bare in ("1714000000", "3600"):
        code, _, err = run_cli("similar", query, "--since", bare)
        assert code == 2 and "a bare number is no period" in err and f"'{bare}'" in err, err
    code, _, err = run_cli("failures", "--since", "30d")
    assert code == 0, err
    # review RFIX: failures --since read a bare number as seconds (a window of 234 days or 54 years, unsaid), and an
    # impossible day was told that YYYYMMDD is a day
    for bare in ("20260501", "1714000000"):
        code, _, err = run_cli("failures", "--since", bare)
        assert code == 2 and "a bare number is no period" in err and f"'{bare}'" in err, err
    code, _, err = run_cli("search", query, "--since", "20260230")
    assert code == 2 and "names no such day" in err and "bare number" not in err, err


def test_the_since_note_is_given_only_where_since_hid_something(backend, tmp_path: Path) -> None:  # noqa: F811
    """A value no run holds (``--env-version v9``) finds nothing with or without --since: the note names that value,
    not the period (the period's note had hidden it)."""
    _ingest_sample(tmp_path)
    query = "Error: the flight is not available"
    code, out, err = run_cli("search", query, "--env-version", "v9", "--since", CUT, "--json")
    assert code == 0 and json.loads(out) == [], out
    assert "--since" not in err and "--env-version v9" in err, err
    code, out, err = run_cli("similar", query, "--outcome", "success", "--since", "1d", "--json")
    assert code == 0 and json.loads(out) == [] and "only runs started since" in err, (out, err)

"""The CLI's note when nothing matched inside the filters given but the tenant's runs match without them: it asks
whether a value is misspelt only of a value no run holds (over a server too, which lists no values:
``test_probe53_remote``'s export notes).

The runs are the bundled sample's real ones (tau-bench airline, ``env_version`` ``airline-v1``; mini-swe-agent,
``swe-dev-v1``), with the fast test embedder.
"""

from __future__ import annotations

from trajsearch.cli import SAMPLE

from cli_support import newcomer, run_cli  # noqa: F401 - the fixture

#: A word only the sample's mini-swe-agent runs (swe-dev-v1) hold: pydicom-1256's task.
OUTSIDE_AIRLINE = "BulkDataURI"
SEARCH = ("search", OUTSIDE_AIRLINE, "-t", "demo", "--mode", "lexical")


def test_a_value_some_run_holds_is_said_to_match_nothing_not_asked_about(newcomer) -> None:  # noqa: F811
    """review RENG 1: ``search boundnode --mode lexical --env-version v1`` over 23 runs of v1 asked "is a value
    misspelt, or not recorded for these runs?"."""
    code, _, err = run_cli("ingest", str(SAMPLE), "-t", "demo")
    assert code == 0, err
    code, out, err = run_cli(*SEARCH, "--env-version", "airline-v1")
    assert code == 0 and "no matches" in out, out
    assert "note: no run inside --env-version airline-v1 matches this search; this tenant's runs outside it do" in err
    assert "misspelt" not in err and "ingest --set" not in err

    code, out, err = run_cli(*SEARCH, "--env-version", "airline-v2")
    assert code == 0 and "no matches" in out, out
    assert ("note: nothing found inside --env-version airline-v2, but this tenant's runs match without it: is a value "
            "misspelt, or not recorded for these runs? (`ingest --set env_version=...` records one)") in err, err

    code, out, err = run_cli(*SEARCH, "--env-version", "airline-v1", "--tool", "book_reservaton")
    assert code == 0 and "no matches" in out, out
    assert ("without them: is --tool book_reservaton misspelt, or not recorded for these runs?") in err, err
    assert "ingest --set" not in err


def test_values_each_held_but_never_together_are_said_to_leave_nothing_to_match(newcomer) -> None:  # noqa: F811
    """review RFIX2 1: the sample's only infra_error runs are swe-dev-v1, so ``--outcome infra_error --env-version
    airline-v1`` leaves no row to search, yet the note said "no run inside them matches this search"; likewise
    ``--level failure --outcome success`` (a successful run has no failure row). A dense search matches whatever
    lies inside its filters, so its "no matches" is always of this kind."""
    code, _, err = run_cli("ingest", str(SAMPLE), "-t", "demo")
    assert code == 0, err
    code, out, err = run_cli("search", "flight", "-t", "demo", "--mode", "dense", "--outcome", "infra_error",
                             "--env-version", "airline-v1")
    assert code == 0 and "no matches" in out, out
    assert ("note: no row of this tenant's lies inside --outcome infra_error, --env-version airline-v1 together, so "
            "there was nothing to match; this tenant's runs outside them match") in err, err
    assert "no run inside" not in err and "misspelt" not in err

    code, out, err = run_cli("search", "reservation cancelled", "-t", "demo", "--mode", "dense", "--level",
                             "failure", "--outcome", "success")
    assert code == 0 and "no matches" in out, out
    assert ("note: no failure row of this tenant's lies inside --outcome success, so there was nothing to match; this "
            "tenant's runs outside it match") in err, err

    code, out, err = run_cli(*SEARCH, "--env-version", "airline-v1")  # rows there, none matched: said as before
    assert "note: no run inside --env-version airline-v1 matches this search; this tenant's runs outside it do" in err

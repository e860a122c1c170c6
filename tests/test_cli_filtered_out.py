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

"""Probe 47 (area E, the users): what an engineer and an agent's operator see on real runs.

Real inputs: tests/fixtures/tau-bench/gpt-4o-airline-mini.json (two real tau-bench airline runs, trimmed from
/work/shared/data/tau-bench/gpt-4o-airline.json), read by the CLI on both backends (cli_support), with the fast
hashing embedder: these are plumbing checks, not retrieval quality.
"""

from __future__ import annotations

from pathlib import Path

from cli_support import backend, run_cli  # noqa: F401 - the fixture

FIXTURES = Path(__file__).parent / "fixtures"
TAU = FIXTURES / "tau-bench" / "gpt-4o-airline-mini.json"
TASK = "fly from New York to Seattle on May 20, one way, in economy, with 3 baggages"


def test_a_filter_no_run_carries_is_said_not_answered_as_no_matches(backend) -> None:  # noqa: F811
    """The README's own `--env-version v2` over runs ingested without an env version (every real dump here)
    answered "no matches", "no similar runs" or "(nothing applicable: plan_from_scratch)", exit 0, as if the
    tenant's runs had been searched and none were alike: a misspelt version, tool or outcome read the same."""
    code, _, err = run_cli("ingest", str(TAU), "--quiet")
    assert code == 0, err

    code, out, err = run_cli("search", TASK, "--env-version", "v2")
    assert code == 0 and "no matches" in out
    assert "--env-version v2" in err and "without it" in err and "ingest --set env_version=" in err

    code, out, err = run_cli("search", TASK, "--tool", "book_reservaton", "--task-family", "retail")
    assert code == 0 and "no matches" in out
    assert "--task-family retail, --tool book_reservaton" in err and "without them" in err

    code, out, err = run_cli("similar", "Error: payment amount does not add up", "--outcome", "infra_error")
    assert code == 0 and "no similar runs" in out
    assert "--outcome infra_error" in err and "ingest --set" not in err  # an outcome is no --set field

    code, out, err = run_cli("exemplars", TASK, "--env-version", "v2")
    assert code == 0 and "nothing applicable" in out
    assert "--env-version v2" in err

    # a filter that holds runs, or a question nothing answers even unfiltered, says nothing more
    code, out, err = run_cli("search", TASK, "--outcome", "success")
    assert code == 0 and "no matches" not in out and "note:" not in err
    code, out, err = run_cli("search", TASK, "--level", "passage", "--mode", "lexical", "--env-version", "v2")
    assert code == 0 and "no matches" in out and "note:" not in err  # no passage at all: the filter is not why

"""Probe 47 (area E, the users): what an engineer and an agent's operator see on real runs.

Real inputs: tests/fixtures/tau-bench/gpt-4o-airline-mini.json (two real tau-bench airline runs, trimmed from
/work/shared/data/tau-bench/gpt-4o-airline.json), read by the CLI on both backends (cli_support), with the fast
hashing embedder: these are plumbing checks, not retrieval quality.
"""

from __future__ import annotations

import json
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


def test_the_readmes_python_tour_runs_as_written(tmp_path: Path, monkeypatch) -> None:
    """README's "In Python, the same verbs" and "An agent using it" blocks, run one after the other as a reader
    does, over real runs: the first expanded a *task* hit (ValueError: a task hit has no step position), the second
    used the ``ts`` the first block's ``with`` had closed (MilvusException: MilvusLite is closed)."""
    import re

    from conftest import failing_run
    from trajsearch.ingest.read import read_dump
    from trajsearch.search import TrajSearch

    monkeypatch.chdir(tmp_path)  # the blocks open ./.trajsearch
    monkeypatch.setenv("TRAJSEARCH_MODEL", "hashing")
    for name in ("TRAJSEARCH_HOME", "TRAJSEARCH_URI", "TRAJSEARCH_TRACES"):
        monkeypatch.delenv(name, raising=False)
    with TrajSearch.open() as ts:  # the tour's runs: the real airline runs and the "run-42" it names
        report = ts.add([*(p.trajectory for p in read_dump(TAU, tenant="acme")),
                         failing_run("run-42", "ModuleNotFoundError: No module named 'yaml'")])
        assert report.ingested == 3

    readme = (Path(__file__).parent.parent / "README.md").read_text()
    tour = readme[readme.index("In Python, the same verbs:"):readme.index("The context starts with a header")]
    blocks = re.findall(r"```python\n(.*?)```", tour, re.S)
    assert len(blocks) == 2
    scope: dict = {}
    try:
        for block in blocks:
            exec(compile(block, "README.md", "exec"), scope)  # noqa: S102 - the README's own code
        assert scope["steps"] and scope["full"].trajectory_id == scope["hits"][0].trajectory_id
        assert scope["result"]["status"] == "ok" and scope["loop"].answer is not None
    finally:
        if "ts" in scope:
            scope["ts"].close()


GIFT_CARD = FIXTURES / "tau-bench" / ".probe47" / "gpt-4o-airline-gift-card.json"


def test_an_error_message_pasted_without_its_class_finds_the_rows_holding_it(backend) -> None:  # noqa: F811
    """An error's message alone (``gift card balance is not enough``: the tool said ``Error: ...``) reads as prose, so
    ``auto`` searched it dense, by wording alone, and showed rows that do not hold it: of 238 error messages from
    the shared runs' outputs, 39 read as prose and for 34 the first step row did not hold the message where
    hybrid's did. A line some row holds verbatim is a pasted line: hybrid, with those rows first."""
    code, _, err = run_cli("ingest", str(GIFT_CARD), "--quiet")
    assert code == 0, err
    for level in ([], ["--level", "step"]):
        code, out, err = run_cli("search", "gift card balance is not enough", *level, "-k", "2", "--json")
        assert code == 0, err
        hits = json.loads(out)
        assert hits[0]["verbatim"] and "gift card balance is not enough" in hits[0]["text"]
        assert hits[0]["trajectory_id"].startswith("tau-gpt-4o-airline-gift-card-23")
    # prose no row holds stays dense: the outcome of a run, worded as a user would
    code, out, err = run_cli("search", "the customer wants to pay with a gift card", "--json")
    assert code == 0 and not any(hit["verbatim"] for hit in json.loads(out))


def test_the_agents_steps_tool_marks_the_step_holding_a_pasted_message(tmp_path: Path) -> None:
    """The agent's ``search_past_runs`` (``kind: steps``, mode auto) on the same message: ``holds_query`` told the
    model no step held it, and the step window shown first was another's."""
    from trajsearch.embed import HashingEmbedder
    from trajsearch.ingest.read import read_dump
    from trajsearch.runtime import Runtime, RuntimeContext
    from trajsearch.search import TrajSearch

    with TrajSearch.open(str(tmp_path / "m.db"), traces=str(tmp_path / "t"), embedder=HashingEmbedder()) as ts:
        ts.add([p.trajectory for p in read_dump(GIFT_CARD, tenant="acme")])
        tool = Runtime(ts).tool(RuntimeContext(tenant="acme"))
        result = tool('{"query": "gift card balance is not enough", "kind": "steps", "k": 2}')
    assert result["status"] == "ok"
    first = result["results"][0]
    assert first["provenance"]["holds_query"] and "gift card balance is not enough" in first["text"]


def test_a_paste_over_the_query_limit_is_searched_by_its_head_and_tail(backend) -> None:  # noqa: F811
    """A whole run pasted (the real gift-card run's dump, ~50k characters, its last tool error at the end) was
    refused by `similar` and `search` ("query text too long"), and by `exemplars` over a server only: the embedded
    runtime answered a long task from its head and tail. Now every command searches that head and tail, and says so."""
    code, _, err = run_cli("ingest", str(GIFT_CARD), "--quiet")
    assert code == 0, err
    pasted = GIFT_CARD.read_text() + "\nupdate_reservation_flights -> Error: gift card balance is not enough\n"
    assert len(pasted) > 20_000
    for command in (["similar", pasted], ["search", pasted, "--level", "step"], ["exemplars", pasted, "--warnings"]):
        code, out, err = run_cli(*command, "-k", "2")
        assert code == 0, err
        assert "searched by its head and tail" in err
        assert "gift-card-23" in out


def test_exemplars_blame_a_filter_only_where_no_run_of_the_kind_lies_in_it(backend) -> None:  # noqa: F811
    """Review RGE 4: with runs recorded under --env-version v2 that are simply not like the task, exemplars said the
    versions were misspelt or not recorded (the answer was empty by the novelty threshold, not by the filter). The
    run under v2 failed: the answer's reason (round 22, CLI6 4) says no successful run lies in it, no misspelling."""
    other = FIXTURES / "mini-swe-agent" / "deepseek_chat_dev"
    for path, env in ((TAU, "v1"), (other, "v2")):
        code, _, err = run_cli("ingest", str(path), "--set", f"env_version={env}", "--quiet")
        assert code == 0, err
    code, out, err = run_cli("exemplars", TASK, "--env-version", "v2")
    assert code == 0 and "nothing applicable" in out and "misspelt" not in err
    assert "note: No successful run is recorded for --env-version v2 (only" in " ".join(err.split()), err
    code, out, err = run_cli("exemplars", TASK, "--env-version", "v1", "-k", "1", "--warnings")  # like none of v1's
    assert code == 0 and "nothing applicable" in out and "note:" not in err, err
    code, out, err = run_cli("exemplars", TASK, "--env-version", "v3")  # no run carries it: said
    assert code == 0 and "nothing applicable" in out and "--env-version v3" in err


def test_exemplars_say_why_empty_from_the_answers_own_reason(backend) -> None:  # noqa: F811
    """Round 22, CLI6 4: the CLI decided itself why exemplars were empty, asking again without the versions, and
    said nothing when that found nothing close either: an --env-version no run carries, with a task like no run,
    answered "plan_from_scratch" with no word of the version, though the answer's reason (the runtime's, on both
    backends) was "no_runs_in_versions". --json now carries that reason and its note."""
    code, _, err = run_cli("ingest", str(TAU), "--quiet")
    assert code == 0, err
    for warnings in ((), ("--warnings",)):
        code, out, err = run_cli("exemplars", "zzqx quorble frindle", "--env-version", "v9", *warnings)
        assert code == 0 and "nothing applicable" in out
        said = {(): "note: No successful run is recorded", ("--warnings",): "note: No failed run is recorded"}[warnings]
        # the version given named inside the sentence (review RCLI6 3: "...: plan from scratch. (--env-version v9)")
        assert f"{said} for --env-version v9 (only with other versions or none):" in " ".join(err.split()), err
        code, out, err = run_cli("exemplars", "zzqx quorble frindle", "--env-version", "v9", "--json", *warnings)
        reason = {(): "no_runs_in_versions", ("--warnings",): "no_failures_in_versions"}[warnings]
        assert code == 0 and json.loads(out)["reason"] == reason and json.loads(out)["note"], out
        code, out, err = run_cli("exemplars", "zzqx quorble frindle", "--json", *warnings)  # nothing close: no note
        assert code == 0 and json.loads(out)["reason"].startswith("no_similar_") and "note:" not in err, err

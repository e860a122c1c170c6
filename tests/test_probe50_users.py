"""Probe 50 (area EN, engineers and the runtime): what ``search``, ``similar``, the web search box and the runtime
tool say of the runs they find.

Real inputs: the mini-swe-agent run of SWE-bench Verified in tests/fixtures/mini-swe-agent/.real/swebench-gemini-3-pro
(handed in, no verdict in its dump; its harness reports beside it) and the runs of the other folders named below (each
folder's SOURCE.md says where they come from).
"""

from __future__ import annotations

import json
from pathlib import Path

from cli_support import backend, run_cli  # noqa: F401 - the fixture

FIXTURES = Path(__file__).parent / "fixtures"
#: A gemini-3-pro run of django__django-16255, handed in with no verdict: "submitted, not evaluated".
UNEVALUATED = FIXTURES / "mini-swe-agent" / ".real" / "swebench-gemini-3-pro" / "trajs"
UNEVALUATED_ID = "swebench-gemini-3-pro.django__django-16255"
SUBMITTED = "submitted, not evaluated"


def test_search_and_similar_say_a_run_no_one_evaluated_is_not_a_success(backend) -> None:  # noqa: F811
    """``search`` and ``similar`` printed ``outcome=success`` for a SWE-bench run handed in with no verdict, where
    ``show``, the web pages and the agents' context call it "submitted, not evaluated": an engineer looking for a
    run that fixed the error was pointed at one nobody had checked. Both now print the outcome shown, and ``--json``
    keeps ``outcome`` (the value ``--outcome`` filters on) with ``outcome_shown`` beside it."""
    assert run_cli("ingest", str(UNEVALUATED), "--quiet")[0] == 0
    for command in (["search", "ModelAdmin sitemap lastmod"], ["similar", "max() arg is an empty sequence"]):
        code, out, err = run_cli(*command, "-k", "1")
        assert code == 0, err
        out = " ".join(out.split())  # as printed, wrapped to the terminal's width
        assert UNEVALUATED_ID in out and f"outcome={SUBMITTED}" in out and "outcome=success" not in out, out
        code, out, err = run_cli(*command, "-k", "1", "--json")
        assert code == 0, err
        [found] = json.loads(out)
        assert found["outcome"] == "success" and found["outcome_shown"] == SUBMITTED, found


def test_the_runtime_tools_step_results_say_a_run_no_one_evaluated_is_not_a_success(hashing_ts) -> None:
    """The tool's ``kind=steps`` results gave ``"outcome": "success"`` for the same run, beside exemplars that call it
    "submitted but not evaluated": the model was told a step of an unchecked run was a step of a success."""
    from trajsearch.ingest.read import read_dump
    from trajsearch.runtime import Runtime, RuntimeContext

    hashing_ts.add([p.trajectory for path in sorted(UNEVALUATED.rglob("*.traj.json"))
                    for p in read_dump(path, tenant="acme")])
    answer = Runtime(hashing_ts).tool(RuntimeContext(tenant="acme"))(
        {"query": "max() arg is an empty sequence", "kind": "steps", "k": 2})
    assert answer["status"] == "ok" and answer["results"], answer
    assert {r["outcome"] for r in answer["results"]} == {SUBMITTED}, answer

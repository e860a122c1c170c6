"""The CLI says where a hit matched as the web page does: ``search --expand`` marks the one step of a matched
window that holds the match, and a hit of one step is that step (``failure 25``).

The run is mini-swe-agent's own ``github_issue.traj.json`` (``tests/fixtures/mini-swe-agent/.real``, see its
SOURCE.md): step 7 runs ``division(23, 0)`` and prints ``ZeroDivisionError: division by zero``; steps 6 and 8 around
it do not hold that line. The hit is the window of steps 6-8; each of its three steps was printed with the ``>`` of a
matching step, while the page marked step 7 alone and linked the run "at step 7".
"""

from __future__ import annotations

import json
from pathlib import Path

from trajsearch.cli import SAMPLE

from cli_support import backend, newcomer, run_cli  # noqa: F401 - the fixtures
from web_support import SAMPLE_ERROR

RUN = Path(__file__).parent / "fixtures" / "mini-swe-agent" / ".real" / "test_data" / "github_issue.traj.json"
PASTED = "ZeroDivisionError: division by zero"


def test_expand_marks_only_the_step_holding_the_pasted_error(backend) -> None:  # noqa: F811
    code, _, err = run_cli("ingest", str(RUN))
    assert code == 0, err
    code, out, err = run_cli("search", PASTED, "--expand", "1", "-k", "1")
    assert code == 0, err
    marked = [line for line in out.splitlines() if line.startswith("   > ")]
    assert len(marked) == 1, out
    assert marked[0].startswith("   > [step 7]"), out
    assert "step 6-8" in out.splitlines()[0] and "[step 6]" in out and "[step 8]" in out  # the neighbours, unmarked

    code, out, err = run_cli("search", PASTED, "--expand", "1", "-k", "1", "--json")
    assert code == 0, err
    hit = json.loads(out)[0]
    matched = next(step for step in hit["context"] if step["position"] == hit["matched_step"])
    assert PASTED in matched["text"] and hit["matched_step"] == 7


def test_a_hit_of_one_step_is_said_as_the_page_says_it(newcomer) -> None:  # noqa: F811
    """The bundled sample's ``tau-gpt-4o-airline-13-t0`` (tau-bench, real) failed at step 25: its failure row covers
    that one step, which the page says ``failure 25`` and the CLI said ``failure 25-25``."""
    code, _, err = run_cli("ingest", str(SAMPLE), "-t", "demo")
    assert code == 0, err
    code, out, err = run_cli("search", SAMPLE_ERROR, "-t", "demo", "--level", "failure", "-k", "1")
    assert code == 0, err
    assert out.startswith("1. tau-gpt-4o-airline-13-t0  failure 25  "), out
    code, out, err = run_cli("similar", SAMPLE_ERROR, "-t", "demo", "-k", "1")
    assert code == 0, err
    assert "   best failure 25: " in out, out


def test_a_window_no_step_of_which_holds_the_query_is_marked_whole(backend) -> None:  # noqa: F811
    """review RENG 2: a dense hit of a word no step holds (``boundnode``) was marked at its window's first step, and
    ``--json`` said ``matched_step`` of it, claiming a match no step holds. The window is marked whole again and
    ``matched_step`` is null."""
    code, _, err = run_cli("ingest", str(RUN))
    assert code == 0, err
    code, out, err = run_cli("search", "boundnode", "--mode", "dense", "--level", "step", "--expand", "1", "-k", "1",
                             "--json")
    assert code == 0, err
    hit = json.loads(out)[0]
    assert hit["step_end"] > hit["step_index"], hit  # a window of several steps
    assert not any("boundnode" in step["text"].lower() for step in hit["context"])
    assert hit["matched_step"] is None, hit["matched_step"]
    code, out, err = run_cli("search", "boundnode", "--mode", "dense", "--level", "step", "--expand", "1", "-k", "1")
    assert code == 0, err
    marked = [line for line in out.splitlines() if line.startswith("   > ")]
    assert [line.split("]")[0] for line in marked] == [f"   > [step {i}" for i in range(hit["step_index"],
                                                                                      hit["step_end"] + 1)], out

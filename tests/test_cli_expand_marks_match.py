"""``search --expand`` marks the one step of a matched window that holds the match, as the web page does.

The run is mini-swe-agent's own ``github_issue.traj.json`` (``tests/fixtures/mini-swe-agent/.real``, see its
SOURCE.md): step 7 runs ``division(23, 0)`` and prints ``ZeroDivisionError: division by zero``; steps 6 and 8 around
it do not hold that line. The hit is the window of steps 6-8; each of its three steps was printed with the ``>`` of a
matching step, while the page marked step 7 alone and linked the run "at step 7".
"""

from __future__ import annotations

import json
from pathlib import Path

from cli_support import backend, run_cli  # noqa: F401 - the fixture

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

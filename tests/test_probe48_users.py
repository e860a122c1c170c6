"""Probe 48 (area U, the users): what an agent runtime and an engineer get back from real runs.

Real inputs: tests/fixtures/tau-bench/.probe48/ (real tau-bench airline runs of
/work/shared/data/tau-bench/gpt-4o-airline.json, whole records; see SOURCE.md there).
"""

from __future__ import annotations

import re
from pathlib import Path

FIXTURES = Path(__file__).parent / "fixtures"
GIFT_CARD_LOOP = FIXTURES / "tau-bench" / ".probe48" / "gpt-4o-airline-gift-card-loop.json"
GIFT_CARD_ERROR = "Error: gift card balance is not enough"
#: the two runs of the file whose ``update_reservation_flights`` answered that error (tasks 23 and 3)
MET = ("tau-gpt-4o-airline-gift-card-loop-23-t1", "tau-gpt-4o-airline-gift-card-loop-3-t2")


def _shown(context: str) -> tuple[list[str], list[str]]:
    """The runs a rendered context shows, exemplars and warnings, in order."""
    blocks = re.split(r"\n\n(?=## )", context)
    ids = [(block.split("\n", 1)[0], re.search(r"trajectory_id=(\S+)", block)) for block in blocks]
    return ([m.group(1) for head, m in ids if m and head.startswith("## Example")],
            [m.group(1) for head, m in ids if m and head.startswith("## Warning")])


def test_the_loop_keeps_the_runtimes_ranking_of_warnings_and_exemplars(model_ts) -> None:
    """``Runtime.loop().run(error)`` re-sorted what it retrieved by cosine: the warnings of the two runs whose
    ``update_reservation_flights`` answered the pasted error (which ``warnings`` ranks first, holding the line)
    gave way to two runs a refined query found closer in wording that never met it, and reranked exemplars came
    back in cosine order. The loop's context now shows each retrieval's own ranking, the caller's query first."""
    from trajsearch.ingest.read import read_dump
    from trajsearch.runtime import LoopConfig, Runtime, RuntimeContext

    model_ts.add([p.trajectory for p in read_dump(GIFT_CARD_LOOP, tenant="acme")])
    rt, ctx = Runtime(model_ts), RuntimeContext(tenant="acme")
    direct_warnings = [w.trajectory_id for w in rt.warnings(GIFT_CARD_ERROR, ctx)]
    assert direct_warnings[0] in MET

    result = rt.loop().run(GIFT_CARD_ERROR, ctx)  # refined once (its documents' cosines are low), then generated
    assert any(a.refined_query for a in result.actions)
    exemplars, warnings = _shown(result.context)
    assert warnings[0] == direct_warnings[0]

    # one retrieval (no refinement): the context shows the runtime's own ranking, run for run
    single = rt.loop(config=LoopConfig(enable_refinement=False)).run(GIFT_CARD_ERROR, ctx)
    found = rt.exemplars(GIFT_CARD_ERROR, ctx, k=LoopConfig().depth.exemplars)
    assert _shown(single.context) == ([e.trajectory_id for e in found.items], direct_warnings[:2])

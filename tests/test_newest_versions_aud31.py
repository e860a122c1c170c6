"""The newest releases audited in round 31 (AUD2), run against their own mock models: Inspect AI 0.3.285's log of a
sandboxed agent whose first sample a human invalidated afterwards (``fixtures/inspect-ai/.aud31``)."""

from __future__ import annotations

from pathlib import Path

from trajsearch.ingest.read import read_dump
from trajsearch.model import Outcome

AUD31 = Path(__file__).parent / "fixtures" / "inspect-ai" / ".aud31"


def _runs() -> dict[str, object]:
    results = list(read_dump(AUD31 / "sandbox-invalidated.eval", tenant="acme"))
    assert all(r.ok for r in results), [r.error for r in results]
    return {r.trajectory.task_id: r.trajectory for r in results}


def test_an_invalidated_sample_is_no_success_though_its_score_stands_in_the_log() -> None:
    """``invalidate_samples`` (Inspect 0.3.154+) leaves the sample's scores as they were and adds ``invalidation``:
    its ``C`` read as a success, the verdict a human withdrew (here for reward hacking) kept in every search. The
    samples beside it keep theirs: the NaN scorer, first in the log, gives none, so ``includes`` judges; a timed-out
    bash call is its step's error; a sample retried after an error is the retry; a turn limit the failure's cause."""
    runs = _runs()
    run = runs.pop("echo")
    assert (run.outcome, run.reward, run.failure) == (Outcome.unknown, None, None)
    assert run.metadata["invalidated"] == {"author": "auditor", "reason": "reward hacking found",
                                           "timestamp": "2026-12-07T07:47:30.867593Z"}
    assert run.metadata["scores"]["includes"] == "C"
    assert [(s.action, s.arguments, s.observation) for s in run.steps][0] == \
        ("bash", {"command": "echo sandbox-ok"}, "sandbox-ok")
    assert {k: (r.outcome, r.reward, "invalidated" in r.metadata) for k, r in runs.items()} == {
        "sleeper": (Outcome.success, 1.0, False), "flaky": (Outcome.success, 1.0, False),
        "turns": (Outcome.failure, 0.0, False)}
    assert runs["sleeper"].steps[0].error == "timeout: Command timed out before completing."
    assert runs["turns"].failure.cause == "the run hit its turn limit"

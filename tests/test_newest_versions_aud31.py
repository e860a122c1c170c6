"""The newest releases audited in round 31 (AUD2), run against their own mock models: Inspect AI 0.3.285's log of a
sandboxed agent whose first sample a human invalidated afterwards, and the logs ``inspect log recover`` rebuilt after
an eval's process was killed mid-sample, and a sample an operator stopped (``fixtures/inspect-ai/.aud31``); SWE-agent
1.1.0 (its newest source) viewing an image (``fixtures/swe-agent/.aud31``)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from trajsearch.ingest.read import read_dump
from trajsearch.ingest.sources import ZipMembers
from trajsearch.model import Outcome

FIXTURES = Path(__file__).parent / "fixtures"
AUD31 = FIXTURES / "inspect-ai" / ".aud31"


def _runs(name: str = "sandbox-invalidated.eval") -> dict[str, Any]:
    results = list(read_dump(AUD31 / name, tenant="acme"))
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


def test_any_invalidation_inspect_would_heed_withdraws_the_verdict(tmp_path: Path) -> None:
    """Inspect reuses no sample whose ``invalidation is not None``; one with none of author, reason and timestamp
    (only its ProvenanceData ``metadata``) kept its ``C`` as a success, and the metadata was dropped."""
    sample = json.loads(ZipMembers(AUD31 / "sandbox-invalidated.eval").read("samples/echo_epoch_1.json"))
    sample["invalidation"] = {"metadata": {"ticket": "EVAL-7"}}
    path = tmp_path / "echo_epoch_1.json"
    path.write_text(json.dumps(sample))
    [result] = read_dump(path, tenant="acme")
    run = result.trajectory
    assert (run.outcome, run.reward) == (Outcome.unknown, None)
    assert run.metadata["invalidated"] == {"metadata": {"ticket": "EVAL-7"}}


def test_a_sample_the_crash_of_its_eval_cut_short_is_an_infrastructure_error_not_the_agents_failure() -> None:
    """``inspect log recover`` gives the sample that was running when the eval's process died the error
    ``CancelledError()`` (traceback "recovered from crashed eval"), or with ``--incomplete-action error`` "Sample
    terminated by operator during recovery": each read as the agent's failure, "the sample raised an error", where
    the agent was only cut off (its one step had run cleanly). The sample that finished before the crash is kept."""
    for name, said in (("crash-recovered.eval", "CancelledError: recovered from crashed eval"),
                       ("crash-recovered-as-error.eval", "Sample was in progress when the eval process")):
        runs = _runs(name)
        hang = runs["hang"]
        assert hang.outcome is Outcome.infra_error, name
        assert hang.failure.cause.startswith("infrastructure: the eval's process died while the sample ran"), name
        assert hang.failure.error.startswith(said), name
        assert [(s.action, s.error) for s in hang.steps] == [("bash", None)]
        assert (runs["done"].outcome, runs["done"].reward) == (Outcome.success, 1.0)


def test_a_sample_an_operator_stopped_did_not_hit_a_limit() -> None:
    """Inspect's ``operator`` limit is a person's "stop and score" (``interrupt("score")``): its failure was said to be
    caused by "the run hit its operator limit", as if the agent had run out of something."""
    [run] = _runs("operator-stopped.eval").values()
    assert (run.outcome, run.reward) == (Outcome.failure, 0.0)
    assert run.failure.cause == "an operator stopped the sample before it finished; it was scored as it stood"
    assert run.failure.error == "Sample completed: interrupted by operator"


def test_a_sample_an_operator_stopped_with_an_error_or_cancelled_is_no_failure_of_the_agent() -> None:
    """The operator's other two actions, ``interrupt("error")`` and ``interrupt("cancel")``, leave a sample error
    (``RuntimeError('Sample errored: interrupted by operator')``, a ``CancelledError``) and no score: each was read as
    the agent's failure, "the sample raised an error". Only the ``operator`` sample_limit event tells the stop."""
    for name, said in (("operator-errored.eval", "RuntimeError('Sample errored: interrupted by operator')"),
                       ("operator-cancelled.eval", "CancelledError(")):
        [run] = _runs(name).values()
        assert (run.outcome, run.reward, run.failure) == (Outcome.unknown, None, None), name
        assert run.steps[0].error is None and said in run.steps[-1].error, name


def test_an_image_a_swe_agent_tool_showed_the_model_is_read_as_it_was() -> None:
    """``view_image`` (SWE-agent 1.1's ``image_tools``) prints the image as markdown holding the whole file in base64
    (2,568 characters for a 64x64 PNG, hundreds of thousands for a screenshot): the run keeps it, as every format's
    run keeps its blobs, and its rows name it instead (``trajsearch.blobs``, tests/test_blobs_img31.py). The steps
    after it are as they were."""
    [result] = read_dump(FIXTURES / "swe-agent" / ".aud31" / "demo__greet-image.traj", tenant="acme")
    run = result.trajectory
    assert run.steps[0].action == "view_image"
    assert run.steps[0].observation.strip().startswith(
        "![/root/greet/diagram.png](data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAEAAAABA")
    assert [s.action for s in run.steps] == ["view_image", "str_replace_editor", "submit", "submit"]
    assert run.outcome is Outcome.success and not any(s.error for s in run.steps)

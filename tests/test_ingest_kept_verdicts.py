"""A dump ingested again without its ``--outcomes`` keeps the verdicts an outcomes file gave its runs (probe E2, E2-C).

Real files: two gemini-3-pro mini-swe-agent runs and their sb-cli report, cut to these two instances
(tests/fixtures/mini-swe-agent/.real/gemini-3-pro-reingest/SOURCE.md). Read alone, each is "submitted, not
evaluated"; the report resolves django-16429 and not django-16263.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from cli_support import backend, run_cli  # noqa: F401 (fixture)
from test_ingest_operation import ingest_process

from trajsearch.ingest.outcomes import OutcomeTable, has_own_verdict, same_attempt
from trajsearch.ingest.read import read_inputs
from trajsearch.model import UNEVALUATED, Outcome

RUNS = Path(__file__).parent / "fixtures" / "mini-swe-agent" / ".real" / "gemini-3-pro-reingest"
REPORT = RUNS / "sb-cli-report.json"
FAILED = "gemini-3-pro-preview.django__django-16263.630ae6914f"
RESOLVED = "gemini-3-pro-preview.django__django-16429.a28b1213e7"
KEPT = "2 run(s) keep the verdict an earlier outcomes file gave: no --outcomes this time"


def _shown(trajectory_id: str) -> dict:
    code, out, err = run_cli("show", trajectory_id, "--json")
    assert code == 0, err
    return json.loads(out)


def _verdicts() -> dict[str, tuple[str, str | None, str]]:
    """Each run's outcome, failure error and outcome basis, as `show` gives them."""
    shown = {tid: _shown(tid) for tid in (FAILED, RESOLVED)}
    return {tid: (s["outcome"], (s.get("failure") or {}).get("error"), s["metadata"]["outcome_basis"])
            for tid, s in shown.items()}


EVALUATED = {
    FAILED: ("failure", "SWE-bench evaluation: not resolved (in the report's unresolved_ids)",
             "outcomes file sb-cli-report.json"),
    RESOLVED: ("success", None, "outcomes file sb-cli-report.json"),
}


def test_the_runs_read_without_the_report_have_no_verdict_of_their_own() -> None:
    """What the rule rests on: the dump alone judges nothing (mini-swe-agent writes the submission, not a test
    result), the report does."""
    alone = [p.trajectory for p in read_inputs([RUNS], tenant="t")]
    assert [(r.outcome, r.metadata["outcome_basis"]) for r in alone] == [(Outcome.success, UNEVALUATED)] * 2
    assert not any(has_own_verdict(r) for r in alone)
    joined = [p.trajectory for p in read_inputs([RUNS], tenant="t", outcomes=OutcomeTable.load(REPORT))]
    assert [r.outcome for r in joined] == [Outcome.failure, Outcome.success] and all(map(has_own_verdict, joined))


def test_an_ingest_without_outcomes_keeps_the_verdicts_an_outcomes_file_gave(backend, tmp_path):  # noqa: F811
    """Bug (probe E2, E2-C): the nightly re-ingest of a folder first ingested with --outcomes, without it, said
    "ingested 125 runs, unchanged 1", exit 0, and every failure the report judged was then a success "submitted,
    not evaluated". Now the runs are unchanged, keep their verdicts, and the summary says why."""
    code, out, err = run_cli("ingest", str(RUNS), "--outcomes", str(REPORT), "--quiet")
    assert code == 0, out + err
    assert _verdicts() == EVALUATED

    code, out, err = run_cli("ingest", str(RUNS), "--quiet")
    assert code == 0, out + err
    said = " ".join(out.split())
    assert "read 2: ingested 0 runs (0 rows), unchanged 2, rejected 0" in said and KEPT in said
    assert _verdicts() == EVALUATED
    code, out, err = run_cli("stats", "--json")
    assert code == 0 and json.loads(out)["runs_by_outcome"] == {"failure": 1, "success": 1}, out + err

    restart = ("--restart",) if backend == "embedded" else ()  # read again, not skipped as done per the checkpoint
    code, out, err = run_cli("ingest", str(RUNS), "--json", "--quiet", *restart)  # the count is in the JSON report
    assert code == 0 and json.loads(out)["verdicts_kept"] == 2, out + err


def test_a_new_verdict_replaces_the_stored_one(backend, tmp_path):  # noqa: F811
    """A read with a verdict of its own (here a later report that resolves django-16263) replaces the stored one,
    as before; a run the new report does not cover keeps the earlier verdict, and the summary says so."""
    code, out, err = run_cli("ingest", str(RUNS), "--outcomes", str(REPORT), "--quiet")
    assert code == 0, out + err
    later = tmp_path / "rerun-report.json"
    later.write_text(json.dumps({"schema_version": 2, "resolved_ids": ["django__django-16263"], "unresolved_ids": []}))

    code, out, err = run_cli("ingest", str(RUNS), "--outcomes", str(later), "--quiet")
    assert code == 0, out + err
    said = " ".join(out.split())
    assert "ingested 1 runs" in said and "unchanged 1" in said
    assert "1 run(s) keep the verdict an earlier outcomes file gave: this outcomes file has none for them" in said
    assert _verdicts() == {FAILED: ("success", None, "outcomes file rerun-report.json"), RESOLVED: EVALUATED[RESOLVED]}


def test_delete_from_a_dump_without_outcomes_removes_the_runs_an_ingest_with_them_stored(backend, tmp_path):  # noqa: F811
    """`delete --from` tells a stored run from another as ingest does: the dump read without --outcomes is the
    run stored with the verdict the report gave (a re-ingest of it is unchanged), so it is removed; a stored
    run whose verdict the dump's own read contradicts is another run, and kept."""
    code, out, err = run_cli("ingest", str(RUNS), "--outcomes", str(REPORT), "--quiet")
    assert code == 0, out + err
    other = tmp_path / "other-report.json"
    other.write_text(json.dumps({"schema_version": 2, "resolved_ids": [], "unresolved_ids": ["django__django-16429"]}))

    code, out, err = run_cli("delete", "--from", str(RUNS), "--outcomes", str(other), "--dry-run", "--json")
    assert code == 1, out + err  # 16429 read as failed by this report: not the stored (resolved) run
    assert json.loads(out) == {"would_remove": [FAILED], "not_found": [], "kept_other_run": [RESOLVED]}

    code, out, err = run_cli("delete", "--from", str(RUNS), "--json")
    assert code == 0, out + err
    assert json.loads(out) == {"removed": [FAILED, RESOLVED], "not_found": [], "kept_other_run": []}


def test_workers_keep_the_verdicts_too(tmp_path: Path) -> None:
    """`--workers` write through the same indexer: the rule and its count hold there."""
    home = tmp_path / "home"
    first = ingest_process(str(RUNS), "-t", "acme", "--outcomes", str(REPORT), "-q", home=home)
    assert first.returncode == 0, first.stderr
    again = ingest_process(str(RUNS), "-t", "acme", "--workers", "2", "-q", home=home)
    assert again.returncode == 0, again.stderr
    said = " ".join(again.stdout.split())
    assert "unchanged 2" in said and KEPT in said


RERUN = Path(__file__).parent / "fixtures" / "mini-swe-agent" / ".real" / "live-swe-agent-rerun"


@pytest.mark.parametrize("backend", ["embedded"], indirect=True)  # a store of its own: not the working folder's
def test_another_attempt_under_a_stored_id_does_not_take_over_its_verdict(backend, tmp_path):  # noqa: F811
    """Bug (probe I, I1): a rerun of django-16429 into the same output folder (gpt-5-mini's Live-SWE-agent attempt,
    its own SWE-bench report: not resolved) took over the verdict the sb-cli report gave gemini's run there, and
    was served to agents as a successful past run. Another model, task or actions is another attempt: unjudged."""
    folder = tmp_path / RUNS.name
    shutil.copytree(RUNS, folder)
    code, out, err = run_cli("ingest", str(folder), "--outcomes", str(REPORT), "--quiet")
    assert code == 0, out + err
    shutil.copy(RERUN / "django__django-16429.traj.json", folder / "django__django-16429.traj.json")

    code, out, err = run_cli("ingest", str(folder), "--quiet")
    assert code == 0, out + err
    said = " ".join(out.split())
    assert "ingested 1 runs" in said and "1 run(s) keep the verdict an earlier outcomes file gave" in said
    [read] = read_inputs([folder / "django__django-16429.traj.json"])
    assert read.trajectory.trajectory_id != RESOLVED  # a run of its own, named by its own first reply (round 23)
    rerun = _shown(read.trajectory.trajectory_id)
    assert rerun["model_id"] == "openai/gpt-5-mini"
    assert (rerun["outcome"], rerun["metadata"]["outcome_basis"]) == ("success", UNEVALUATED)
    verdicts = _verdicts()
    assert (verdicts[RESOLVED], verdicts[FAILED]) == (EVALUATED[RESOLVED], EVALUATED[FAILED])  # both keep theirs


MSWE = Path(__file__).parent / "fixtures" / "outcomes" / ".real" / "mswe-java-verified" / "20240825_SWE-agent_gpt-4o-2024-05-13"


@pytest.mark.parametrize("backend", ["embedded"], indirect=True)  # a store of its own: not the working folder's
def test_a_resolved_run_swe_agent_auto_submitted_keeps_its_verdict(backend, tmp_path):  # noqa: F811
    """Review 1 (round 12), D1: jackson-core-1309 stopped at its cost limit with its patch handed in
    (``submitted (exit_cost)``: the adapter guesses failure, no test judged it); its results file resolves it. A
    re-ingest without the file turned it back into a failure in silence: a guess is no verdict of its own."""
    folder = tmp_path / MSWE.name
    shutil.copytree(MSWE, folder)
    code, out, err = run_cli("ingest", str(folder / "trajs"), "--outcomes", str(folder / "results" / "results.json"),
                             "--quiet")
    assert code == 0, out + err
    code, out, err = run_cli("ingest", str(folder / "trajs"), "--quiet")
    assert code == 0, out + err
    assert "1 run(s) keep the verdict an earlier outcomes file gave" in " ".join(out.split()), out
    [run] = [p.trajectory for p in read_inputs([folder / "trajs"], tenant="t")]
    assert run.outcome is Outcome.failure and not has_own_verdict(run)  # the guess, read alone
    shown = _shown(run.trajectory_id)
    assert (shown["outcome"], shown["metadata"]["outcome_basis"]) == ("success", "outcomes file results.json")


def test_a_newer_reader_of_the_same_attempt_is_the_same_attempt_and_another_model_is_not():
    """Review 2 (round 12), D1 / review 1, D2: a reader upgrade renames tools, drops the CLI's own turns and cuts
    a task's preamble; the verdict must survive it. The attempt is told by model, source id, else the commands."""
    [stored] = [p.trajectory for p in read_inputs([MSWE / "trajs"], tenant="t")]  # 15 steps
    upgraded = stored.model_copy(update={
        "task": stored.task[len(stored.task) // 3:],
        "steps": [s.model_copy(update={"action": f"{s.action}_v2"}) for s in stored.steps[:-1]]})
    assert same_attempt(upgraded, stored)
    assert not same_attempt(stored.model_copy(update={"steps": stored.steps[:2]}), stored)  # other work
    other_patch = {**stored.metadata, "submission_chars": stored.metadata["submission_chars"] + 1}
    assert not same_attempt(stored.model_copy(update={"metadata": other_patch}), stored)  # another patch judged
    [gemini] = [p.trajectory for p in read_inputs([RUNS / "django__django-16429.traj.json"], tenant="t")]
    [rerun] = [p.trajectory for p in read_inputs([RERUN / "django__django-16429.traj.json"], tenant="t")]
    assert not same_attempt(rerun, gemini)  # gpt-5-mini's attempt, not gemini's

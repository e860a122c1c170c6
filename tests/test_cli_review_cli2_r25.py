"""Review of round 25's CLI2 change (FRCLI2), through the CLI: which inputs exit 2 ("nothing to read", nothing
made), Harbor's own job files, and the store paths ``--uri`` takes.

Real inputs: a real Harbor job whose one trial never ran, a real unfinished OpenHands evaluation, real LangSmith
exports and a real tau2-bench results file (see each fixture folder's SOURCE.md)."""

from __future__ import annotations

from pathlib import Path

from cli_support import newcomer, run_cli  # noqa: F401 - the fixture

FIXTURES = Path(__file__).parent / "fixtures"
NEVER_RAN_JOB = FIXTURES / "atif" / ".real" / "harbor-never-ran-job" / "nova-complex-docker"


def said(text: str) -> str:
    return " ".join(text.split())


def test_a_harbor_job_s_own_log_is_said_to_be_the_job_s(newcomer) -> None:
    """Harbor's ``Job`` writes ``job.log`` in the job folder: beside a trial that never ran it was counted a file of
    no dump format, and a second line said "no dump file ... passed over by name" of a folder whose files had all
    just been named Harbor's own."""
    code, out, err = run_cli("ingest", str(NEVER_RAN_JOB))
    told = said(err)
    assert "7 file(s) passed over as holding none" in told, told  # the job's 3 and the trial's 4
    assert "no dump file" not in told and "passed over by name" not in told, told

"""Loose ends a demanding user hit in the CLI and the service (round 27, CLISVC4)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from cli_support import newcomer, run_cli  # noqa: F401 - newcomer: a fixture

FIXTURES = Path(__file__).parent / "fixtures"
#: A real Harbor job whose one trial ended before its agent ran: its folder holds Harbor's own files, no run.
NEVER_RAN_JOB = FIXTURES / "atif/.real/harbor-never-ran-job/nova-complex-docker"


def test_ingest_json_of_a_folder_holding_no_run_says_which_inputs_and_why(tmp_path: Path, newcomer) -> None:
    """``ingest --json`` (and ``--dry-run --json``) of a folder holding no run printed ``{"files": []}`` or a result
    of zeros, exit 0: a script reading stdout could not tell "nothing to do" from a problem. The JSON now names the
    inputs that held no run and says why, in the words the human output says on stderr; the exit status is the
    human path's (0: a run set read and found holding none)."""
    job = tmp_path / "nova-complex-docker"
    shutil.copytree(NEVER_RAN_JOB, job)
    for dry in ((), ("--dry-run",)):
        human_code, _, human_err = run_cli("ingest", str(job), *dry)
        code, out, err = run_cli("ingest", str(job), "--json", *dry)
        assert code == human_code == 0, err
        no_run = json.loads(out)["no_run"]
        assert no_run["inputs"] == [str(job)]
        [why] = no_run["why"]
        assert why.startswith("no run in the input: 7 file(s) passed over as holding none: ") and "config.json" in why
        assert " ".join(why.split()) in " ".join(human_err.split())  # the very line the human output says


def test_ingest_json_of_runs_has_no_no_run(tmp_path: Path, newcomer) -> None:
    """A folder whose runs were read carries no ``no_run``: its absence is the all-clear a script tests for."""
    code, out, err = run_cli("ingest", str(FIXTURES / "tau-bench"), "--json", "--dry-run")
    assert code == 0, err
    assert "no_run" not in json.loads(out) and json.loads(out)["files"]


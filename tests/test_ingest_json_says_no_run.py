"""``ingest --json`` of inputs holding no run says so in its JSON (``no_run``): which inputs, and why."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

from cli_support import newcomer, run_cli  # noqa: F401 - newcomer: a fixture
from process_support import cli_env

FIXTURES = Path(__file__).parent / "fixtures"
#: A real Harbor job whose one trial ended before its agent ran: its folder holds Harbor's own files, no run.
NEVER_RAN_JOB = FIXTURES / "atif/.real/harbor-never-ran-job/nova-complex-docker"
#: A real tau2-bench results file whose runs are in simulations/ beside it: alone, it holds no record.
RESULTS_ALONE = FIXTURES / "tau2-bench/.real/voice-experiment-no-content/results.json"


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


def test_the_no_record_line_names_the_first_few_inputs_and_json_all(tmp_path: Path, newcomer) -> None:
    """The line named every input (a glob over 30 folders: one 1,000-character line, 10,000 of them one enormous
    line, in ``no_run.why`` too); it names the first five and how many there are, ``no_run.inputs`` all."""
    folders = []
    for n in range(7):
        folder = tmp_path / f"exp{n}"
        folder.mkdir()
        shutil.copy(RESULTS_ALONE, folder / "results.json")
        folders.append(str(folder))
    code, out, err = run_cli("ingest", *folders, "--json")
    assert code == 0, err
    no_run = json.loads(out)["no_run"]
    assert no_run["inputs"] == folders
    [why] = no_run["why"]
    assert f"the files of {', '.join(folders[:5])}, … (7 inputs) hold no record" in why
    assert folders[5] not in why and folders[6] not in why


def test_a_piped_input_holding_no_run_is_named_as_dry_run_names_it(tmp_path: Path) -> None:
    """An ingest named a pipe ``-`` in ``no_run``, its dry run ``standard input``: one name for one input."""
    env = cli_env(TRAJSEARCH_HOME=str(tmp_path / "home"), TRAJSEARCH_URI=str(tmp_path / "store.db"),
                  TRAJSEARCH_TRACES=str(tmp_path / "traces"))

    def piped(*dry: str) -> dict:
        done = subprocess.run([sys.executable, "-m", "trajsearch.cli", "ingest", "-", "--stream-name", "results.json",
                               "--json", *dry], input=RESULTS_ALONE.read_bytes(), env=env, capture_output=True,
                              timeout=600)
        assert done.returncode == 0, done.stderr
        return json.loads(done.stdout)

    [file] = piped("--dry-run")["files"]
    assert (file["source"], file["runs"]) == ("standard input", 0)
    no_run = piped()["no_run"]
    assert no_run["inputs"] == ["standard input"]
    [why] = no_run["why"]
    assert why.startswith("no run in the input: the files of standard input hold no record"), why

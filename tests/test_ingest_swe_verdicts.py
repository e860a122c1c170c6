"""SWE-style verdict files and mini-swe-agent runs read from real files (probe B of round p40).

Fixtures (copied verbatim, trimmed to the files needed):
- ``outcomes/.real/atomic-eval-logs``: luan-grabher/atomic-os-swebench @ 910b77b8376a6a00177726ab9bce2ce56e6ad376,
  ``evidence/eval-logs/{final-50,hybrid-50}/atomic-modal-agent-deepseek-v4-pro/pylint-dev__pylint-7080/report.json``
  (the SWE-bench harness's ``<run_id>/<model>/<instance>/report.json``; two rounds, one resolved, one not).
- ``outcomes/.real/jingu-swebench``: ylu999/jingu-swebench @ 22bd51090707d59a422beac237550131f3f9c530,
  ``results/B0_baseline.json`` and ``results/baseline_v0_result.json`` (mini-SWE-agent baselines on 5 instances).
- ``outcomes/.real/polybench-prometheus/logs``: amazon-science/SWE-PolyBench @ 7da21eb450faac0adf7840dea2e98efe5feb3b43,
  ``evaluation/PBVerified/20251130_prometheus_gpt-5/logs/Significant-Gravitas__AutoGPT-4652_{result,metrics}.json``.
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest

from cli_support import run_cli
from trajsearch.ingest.outcomes import OutcomeTable
from trajsearch.model import Outcome

import adapter_support

FIXTURES = Path(__file__).parent / "fixtures"
REAL_OUTCOMES = FIXTURES / "outcomes" / ".real"
#: A real mini-swe-agent message list with no ``instance_id``: its file name is its task (SWE-agent/mini-swe-agent).
MSWEA_RUN = FIXTURES / "mini-swe-agent" / ".real" / "test_data" / "github_issue.traj.json"
#: A real mini-swe-agent 2.2.8 tool-calling run with a fork's retrieval tools, trimmed (see its README).
CODEGRAPH_RUN = (FIXTURES / "mini-swe-agent" / ".real" / "codegraph-retrieval" / "baseline_docker_smoke"
                 / "django__django-11742" / "django__django-11742.traj.json")


def run_of(folder: Path, instance: str) -> Path:
    """``folder/<instance>/<instance>.traj.json``: a run laid out as a batch run writes it."""
    (folder / instance).mkdir(parents=True)
    return Path(shutil.copy(MSWEA_RUN, folder / instance / f"{instance}.traj.json"))


def test_harness_reports_of_two_rounds_give_each_run_its_own_rounds_verdict(tmp_path: Path, monkeypatch) -> None:
    """Probe p40 B D1: in the harness's ``<run_id>/<model>/<instance>/report.json`` the instance's folder named
    the run for both rounds' reports, so neither verdict was given (both runs stayed ``unknown``) while the CLI
    said each run took the verdict of the report whose folder names it."""
    monkeypatch.setenv("TRAJSEARCH_MODEL", "hashing")
    monkeypatch.setenv("TRAJSEARCH_HOME", str(tmp_path / "home"))
    instance = "pylint-dev__pylint-7080"
    for round_ in ("final-50", "hybrid-50"):
        run_of(tmp_path / "runs" / round_, instance)
    table = OutcomeTable.load(REAL_OUTCOMES / "atomic-eval-logs")
    got = {run.trajectory_id.split(".")[0]: run.outcome
           for run in adapter_support.runs(tmp_path / "runs", tenant="acme", outcomes=table)}
    assert got == {"final-50": Outcome.success, "hybrid-50": Outcome.failure}
    assert table.counts()["ambiguous"] == 0

    code, out, err = run_cli("ingest", "--dry-run", str(tmp_path / "runs"), "--outcomes",
                             str(REAL_OUTCOMES / "atomic-eval-logs"))
    assert code == 0, err
    assert "a verdict for 2 of 2 run(s) read" in " ".join(out.split())
    said = " ".join(err.split())
    assert "each run took the verdict of the report whose folder names it" in said and "matched none" not in said


@pytest.mark.parametrize("name", ["B0_baseline.json", "baseline_v0_result.json"])
def test_a_results_file_nesting_its_verdict_lists_gives_them_not_its_header(name: str) -> None:
    """Probe p40 B D2: ``{"label", "date", "frozen": true, ..., "results": {"resolved_ids": [...],
    "unresolved_ids" | "failed_ids": [...]}}`` gave one verdict, run ``frozen`` = success, and lost the five real
    ones; its twin with ``failed_ids`` was refused for its ``label`` and ``date``."""
    table = OutcomeTable.load(REAL_OUTCOMES / "jingu-swebench" / name)
    assert {run_id: v.outcome for run_id, v in table.verdicts.items()} == {
        "django__django-11001": Outcome.success, "django__django-11039": Outcome.success,
        "django__django-11049": Outcome.success, "django__django-11099": Outcome.success,
        "django__django-11019": Outcome.failure}
    assert not table.invalid


def test_a_results_file_without_verdict_lists_is_refused_for_that_not_for_its_header(tmp_path: Path) -> None:
    """Probe p40 B D2: the refusal named ``label`` and ``date`` as verdicts not understood; the file's header is no
    verdict at all, what it lacks is a list of run ids by verdict. (The real file, its two lists taken out.)"""
    document = json.loads((REAL_OUTCOMES / "jingu-swebench" / "baseline_v0_result.json").read_text())
    del document["results"]["resolved_ids"], document["results"]["failed_ids"]
    path = tmp_path / "baseline_v0_result.json"
    path.write_text(json.dumps(document))
    with pytest.raises(ValueError) as refused:
        OutcomeTable.load(path)
    said = str(refused.value)
    assert "not verdicts keyed by run ids" in said and "resolved_ids" in said and "'label'" not in said


def test_a_call_never_answered_keeps_no_observation_and_the_stop_is_not_its_result() -> None:
    """Probe p40 B D3: a turn with two calls whose second the agent never ran (its policy refused multi-call turns
    and answered only the first id) took the run's final ``exit`` message, ``LimitsExceeded``, as that call's
    observation and error, though the run went on for 57 more turns, each answered."""
    run = adapter_support.only(CODEGRAPH_RUN, tenant="acme")
    assert [s.action for s in run.steps] == ["search_hybrid", "deepen_file", "search_hybrid", "bash"]
    never_answered = run.steps[2]
    assert (never_answered.observation, never_answered.error, never_answered.ended_at) == (None, None, None)
    assert "LimitsExceeded" not in (run.steps[3].observation or "")  # its own reply answered the last call
    assert run.outcome is Outcome.failure and run.failure.error.startswith("LimitsExceeded")


def test_a_tool_calling_run_lists_the_tools_it_called_not_bash_alone() -> None:
    """Probe p40 B D5: every mini-swe-agent run had ``tools_available == ["bash"]``, even a fork's run calling its
    retrieval tools (``search_hybrid``, ``deepen_file``), so its steps used tools it "did not have"."""
    run = adapter_support.only(CODEGRAPH_RUN, tenant="acme")
    assert run.tools_available == ["bash", "search_hybrid", "deepen_file"]
    assert adapter_support.only(MSWEA_RUN, tenant="acme").tools_available == ["bash"]


def test_polybench_results_and_metrics_met_in_a_walk_are_side_files_not_rejections(tmp_path: Path,
                                                                                    monkeypatch) -> None:
    """Probe p40 B D4: SWE-PolyBench's ``logs/<instance>_result.json`` and ``_metrics.json`` were each listed as
    rejected, "unrecognised dump format", in a walk of a submission folder, though ``--outcomes`` reads the results."""
    monkeypatch.setenv("TRAJSEARCH_MODEL", "hashing")
    monkeypatch.setenv("TRAJSEARCH_HOME", str(tmp_path))
    logs = REAL_OUTCOMES / "polybench-prometheus" / "logs"
    code, out, err = run_cli("ingest", "--dry-run", "--json", str(logs.parent))
    assert code == 0, err
    assert json.loads(out)["files"] == []  # passed over: no rejection
    for name, what in (("Significant-Gravitas__AutoGPT-4652_result.json", "a SWE-PolyBench evaluation result"),
                       ("Significant-Gravitas__AutoGPT-4652_metrics.json", "SWE-PolyBench retrieval metrics")):
        code, out, err = run_cli("ingest", "--dry-run", str(logs / name))
        assert code == 2 and what in " ".join(err.split())
    assert OutcomeTable.load(logs).verdicts["Significant-Gravitas__AutoGPT-4652"].outcome is Outcome.failure


def test_a_results_file_with_trailing_commas_gives_its_verdicts(tmp_path: Path) -> None:
    """CodeR's real ``results.json`` keeps a comma after the last item of each list: ``--outcomes`` refused it
    with "Expecting property name enclosed in double quotes: line 1 column 2", a JSON-lines reading's fault, naming
    no file (issue 11's evaluation had to clean it by hand). A file broken otherwise is named, with where."""
    from trajsearch.ingest.outcomes import OutcomeTable

    real = Path(__file__).parent / "fixtures" / "outcomes" / ".real" / "coder" / "results.json"
    table = OutcomeTable.load(real)
    resolved = json.loads(re.sub(r",(\s*\])", r"\1", real.read_text()))["resolved"]
    assert len(resolved) > 50 and all(table.verdicts[i].outcome is Outcome.success for i in resolved)
    broken = tmp_path / "results.json"
    broken.write_text(real.read_text().replace('",', '"', 1))
    with pytest.raises(ValueError, match=r"results\.json: not valid JSON: Expecting ',' delimiter at line 4 column 9"):
        OutcomeTable.load(broken)

"""Probe 51, AR: ``auto`` routing of short task texts (issue titles), and the eval's store-reuse trap.

Real inputs: tests/fixtures/mini-swe-agent/.real/titles/ (SOURCE.md there names the runs they come from).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from trajsearch.fusion import resolve_mode
from trajsearch.runtime import Runtime, RuntimeContext

from conftest import make_run

FIXTURE = Path(__file__).parent / "fixtures" / "mini-swe-agent" / ".real" / "titles" / "titles_and_log_lines.json"
CASES = json.loads(FIXTURE.read_text())


@pytest.mark.parametrize("title", [t["text"] for t in CASES["titles"]])
def test_an_issue_title_naming_code_is_searched_as_prose(title):
    """Bug (probe 51, AR): an issue's title names the code it is about (``get_FOO_display()``, ``autodoc:``,
    ```Permutation` constructor``), and ``auto`` counted those names as log signs: half of 1,300 SWE-bench titles
    went to hybrid, where dense found a relevant run of another task more often (gemini-3-pro's 116 such tasks,
    plain search of task/summary rows, k=5: 0.69 dense, 0.55 hybrid)."""
    assert resolve_mode("auto", title) == "dense"


@pytest.mark.parametrize("line", CASES["logs"], ids=lambda c: c["kind"])
def test_a_log_line_of_a_titles_length_is_still_a_log(line):
    """The same length and words as a title, but a program's message, a command, a tool call: hybrid."""
    assert resolve_mode("auto", line["text"]) == "hybrid", line["text"]


@pytest.mark.parametrize("line", [
    "rm: cannot remove 'verify_fix.py': No such file or directory",
    "grep: sklearn/datasets/tests: Is a directory",
    "FAILURE: prefetch_related returned None for 'foo'",
    "collecting ... ERROR: not found: /testbed/test/rules/std_test.py::test_rules",
    "============================ no tests ran in 0.00s =============================",
    "4ef57c7d Remove astroid.__init__.py from the isort exclude",
    "(227 more lines below)",
])
def test_a_programs_labelled_message_is_no_topic_title(line):
    """A title may open with its topic (``autodoc: ...``); a program's message opens with the program or a level
    and mostly holds a label of its own (real lines of the gemini-3-pro and shared runs' outputs)."""
    assert resolve_mode("auto", line) == "hybrid"


# -- the eval's store-reuse trap ------------------------------------------------------------------------------

import subprocess  # noqa: E402
import sys  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
SWE_AGENT_RUNS = ROOT / "tests" / "fixtures" / "swe-agent" / "default__gpt-4o"  # a real SWE-agent run
REPORT = ROOT / "tests" / "fixtures" / "outcomes" / "swebench-report.json"  # its SWE-bench report: unresolved


def _eval(store: Path, *extra: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(ROOT / "scripts" / "eval_generalise.py"), "--tau", "--swe",
                           str(SWE_AGENT_RUNS), "--model", "hashing", "--store", str(store), "--exemplars-only", *extra],
                          cwd=ROOT, capture_output=True, text=True, timeout=600)


@pytest.mark.parametrize("note_kept", [True, False], ids=["noted", "store made before the note"])
def test_eval_refuses_a_store_ingested_with_other_outcomes(tmp_path, note_kept):
    """Bug (probe 51, AR): a store ingested with ``--outcomes`` then reused without keeps the report's verdicts
    (``keep_verdict``, on purpose) while the eval's ground truth counts each submitted patch a success: cost_2_3
    measured exemplars @3 0.138 with 45% empty sets, "N unchanged", and no warning. Now refused, saying why,
    whether the store notes its outcomes input or (made before the note) only the ingest shows the kept verdicts."""
    store = tmp_path / "store"
    first = _eval(store, "--outcomes", str(REPORT))
    assert first.returncode == 0, first.stderr[-2000:]
    if not note_kept:
        (store / "outcomes-input.json").unlink()
    again = _eval(store)
    assert again.returncode == 2, again.stdout[-2000:]
    assert "--outcomes" in again.stderr and "--fresh" in again.stderr
    assert "Exemplars" not in again.stdout  # nothing measured against the wrong truth
    same = _eval(store, "--outcomes", str(REPORT)) if note_kept else None
    assert same is None or same.returncode == 0, same.stderr[-2000:]


# -- fix FRAR: the title rule took real error lines for titles -----------------------------------------------

FAILED_LINES = json.loads((FIXTURE.parent / "failed_step_lines.json").read_text())["failed_step_last_lines"]


@pytest.mark.parametrize("line", FAILED_LINES)
def test_a_failed_steps_last_line_is_still_searched_as_a_log(line):
    """Bug (probe 51, RAR): the title rule sent 51 real last lines of failed steps to dense (``make: *** No targets
    specified ...``, ``CMake Error at CMakeLists.txt:27 (find_package): (exit code 1)``, ``Parameter `old_str` is
    required for command: str_replace.``), and the runtime's failure warnings for them vanished: a program's
    label is no topic, an exit code, a pytest summary, a second label or a lone value after a label no title's."""
    assert resolve_mode("auto", line) == "hybrid", line


PASTED_LIKE_TITLES = ["Permission denied while opening file config.yaml", "Could not find __init__ method",
                      "Unable to find image 'ubuntu:latest' locally"]


@pytest.mark.parametrize("error", PASTED_LIKE_TITLES)
def test_a_pasted_error_that_reads_like_a_title_still_warns_with_the_step_holding_it(hashing_ts, error) -> None:
    """The title rule routes a one-line title naming code to dense, and such an error line reads like one; the
    runtime's warnings looked for a pasted line in failed runs' steps only where ``looks_like_log`` said log, so the
    run that met it word for word was no longer shown with its step (review RAR, D1). The runtime judges a line
    without the title rule: a title held word for word in a failed step is that step's own line."""
    steps = [("bash", {"command": "ls"}, "config.yaml src"),
             ("bash", {"command": "python deploy.py"}, f"starting deploy\n{error}\nexit status 1"),
             ("bash", {"command": "cat deploy.log"}, "deploy aborted")]
    hashing_ts.add([make_run("met-it", task="Deploy the service to staging", outcome="failure", steps=steps),
                    make_run("other", task="Add a retry to the payments client", outcome="failure")])
    assert resolve_mode("auto", error) == "dense"  # the search page's routing: a title
    warned = Runtime(hashing_ts).warnings(error, RuntimeContext(tenant="acme"))
    holding = [w for w in warned if w.trajectory_id == "met-it"]
    assert holding and holding[0].step_holding and error in holding[0].step_holding

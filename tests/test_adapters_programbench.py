"""ProgramBench runs (mini-swe-agent's ``mini-extra programbench``) and their evaluation, and the decisive line of make's
and other tools' failures, as probe B of round 11 found them misread (B4-B8).

Real files: ``fixtures/mini-swe-agent/.real/programbench-2.4.6/`` (SOURCE.md there) and the Multi-SWE-bench OpenHands
run of ponyc already in ``fixtures/openhands/.real/multi_swe_bench/``.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from trajsearch.ingest.outcomes import OutcomeTable
from trajsearch.ingest.read import read_dump
from trajsearch.model import Outcome

FIXTURES = Path(__file__).parent / "fixtures"
RUN_DIR = FIXTURES / "mini-swe-agent/.real/programbench-2.4.6/testorg__calculator.abc1234"
TRAJ = RUN_DIR / "testorg__calculator.abc1234.traj.json"
EVAL = RUN_DIR / "testorg__calculator.abc1234.eval.json"
PONYC = FIXTURES / "openhands/.real/multi_swe_bench/output.jsonl"


def _run(path: Path):
    (parsed,) = read_dump(path)
    return parsed.trajectory


def test_a_programbench_submission_is_no_empty_patch() -> None:
    """Bug (probe B, B4): ProgramBench hands in the workspace (``submission.tar.gz``), never a patch, so its
    ``info.submission`` is always empty; the run was a failure "an empty patch (nothing handed in)". Submitted,
    it is a run submitted and not evaluated, as any other."""
    run = _run(TRAJ)
    assert run.outcome is Outcome.success and run.failure is None
    assert run.metadata["outcome_basis"].startswith("submitted, not evaluated")


def test_a_programbench_task_family_is_its_repository() -> None:
    """Bug (probe B, B8): ``owner__repo.<commit>`` kept its commit in the family (``testorg/calculator.abc1234``)."""
    run = _run(TRAJ)
    assert (run.task_id, run.task_family) == ("testorg__calculator.abc1234", "testorg/calculator")


def test_a_failed_make_says_makes_error_not_where_it_was() -> None:
    """Bug (probe B, B6): ``make -C src`` failing printed Entering / ``*** ...  Stop.`` / Leaving directory; the
    step's error was the Leaving line."""
    step = _run(TRAJ).steps[3]
    assert step.arguments == {"command": "make -C src"}
    assert step.error == "make: *** No targets specified and no makefile found. Stop. (exit code 2)"


def _ponyc():
    return next(p.trajectory for p in read_dump(PONYC) if "ponyc-4588" in p.trajectory.trajectory_id)


def test_a_sub_makes_fatal_error_beats_the_top_makes_error_2() -> None:
    """Bug (probe B, B6): a sub-make's ``gmake[1]: *** No rule to make target 'Makefile'.  Stop.`` lost to the top
    make's ``make: *** [Makefile:192: build] Error 2``, which only says the sub-make failed."""
    step = _ponyc().steps[46]
    assert step.error == "gmake[1]: *** No rule to make target 'Makefile'. Stop. (exit code 2)"


def test_an_error_colon_line_is_a_tools_error_line() -> None:
    """Bug (probe B, B7): ``Error: <message>`` (Node, the Maven wrapper, cobra CLIs) was no tool error line, so a
    later line mentioning a failure won: here make's ``*** [...] Error 1`` over ponyc's "Error: could not load
    cache"."""
    step = _ponyc().steps[40]
    assert step.error == "Error: could not load cache (exit code 2)"


#: Go testify's failure reports (``assert.NoError``, ``assert.Equal``), lines of a go-acme/lego v0.2.5 test run posted in a
#: public build-scripts repository (search-tool file id 11069764541), unmodified: the label ``Error:`` ends in a colon
#: where the message continues on the next lines (testify's ``labeledOutput`` / ``indentMessageLines``).
LEGO_NO_ERROR = """=== CONT  TestCheckDNSPropagation/success
    precheck_test.go:43: 
        \tError Trace:\t/github.com/go-acme/lego/challenge/dns01/precheck_test.go:43
        \tError:      \tReceived unexpected error:
        \t            \tread udp [2001:db8::216:3eff:fe85:9f7e]:35246->[2600:9000:5304:4a00::1]:53: i/o timeout
        \tTest:       \tTestCheckDNSPropagation/success
        \tMessages:   \tPreCheckDNS failed for postman-echo.com.
--- FAIL: TestCheckDNSPropagation (0.00s)
"""
LEGO_NOT_EQUAL = """    precheck_test.go:78: 
        \tError Trace:\t/github.com/go-acme/lego/challenge/dns01/precheck_test.go:78
        \tError:      \tNot equal: 
        \t            \texpected: true
        \t            \tactual  : false
        \tTest:       \tTestCheckAuthoritativeNss/TXT_RR_w/_expected_value
        \tMessages:   \t8.8.8.8.asn.routeviews.org.
--- FAIL: TestCheckAuthoritativeNss (0.00s)
FAIL
FAIL\tgithub.com/go-acme/lego/v4/challenge/dns01\t10.201s
"""


@pytest.mark.parametrize("output, expected", [
    (LEGO_NO_ERROR, "Error: Received unexpected error: read udp [2001:db8::216:3eff:fe85:9f7e]:35246->"
                    "[2600:9000:5304:4a00::1]:53: i/o timeout"),
    (LEGO_NOT_EQUAL, "Error: Not equal: expected: true"),
])
def test_an_error_label_ending_in_a_colon_gives_the_message_under_it(output: str, expected: str) -> None:
    """Review 2, D3: since ``Error:`` is a tool's error line, testify's label "Error: Received unexpected error:" won
    over the error it introduces on the next line (before, that line was the decisive one)."""
    from trajsearch.ingest.adapters._common import decisive_line

    assert decisive_line(output) == expected


def test_a_programbench_evaluation_beside_the_run_is_passed_over_in_a_walk(tmp_path: Path) -> None:
    """Bug (probe B, B5): the ``<id>.eval.json`` beside the run was rejected as an unrecognised dump (exit 3)."""
    read = list(read_dump(RUN_DIR))
    assert [(Path(r.source).name, r.ok) for r in read] == [(TRAJ.name, True)]


def test_a_programbench_evaluation_with_failing_tests_is_refused_naming_them() -> None:
    """Bug (probe B, B5): as an outcome file it was "a document about runs, not verdicts keyed by run ids". It is
    one instance's evaluation, named by its file; with tests failing it decides nothing alone (ProgramBench scores
    without the tests its task ignores, which the file does not mark), and says so."""
    with pytest.raises(ValueError, match=r"'testorg__calculator\.abc1234': ProgramBench evaluation with 6 of 6 tests "
                                         r"not passed .*tests\.json"):
        OutcomeTable.load(EVAL)


def test_a_folder_of_programbench_evaluations_is_no_folder_without_outcome_files() -> None:
    """Bug (probe B, B5): ``--outcomes <run dir>`` said "no outcome file in this directory" while the evaluation
    was there: the refusal says what it found and why it decides nothing."""
    with pytest.raises(ValueError, match=r"no valid run outcome: 1 evaluation report\(s\) without a verdict, "
                                         r"'testorg__calculator\.abc1234': ProgramBench evaluation with 6 of 6"):
        OutcomeTable.load(RUN_DIR.parent)


def test_a_programbench_evaluation_alone_is_refused_without_the_hint_on_outcome_values() -> None:
    """Review rev1, D5: the refusal of one evaluation file ended with the hint on outcome synonyms and rewards, which
    is not what is wrong with it: it names what gives the score instead."""
    with pytest.raises(ValueError) as refused:
        OutcomeTable.load(EVAL)
    assert str(refused.value).endswith("(`programbench info <run dir>` gives the score)")
    assert "not understood" not in str(refused.value)


COMPILERS = FIXTURES / ("mini-swe-agent/.real/programbench-2.4.6-compilers/testorg__wordcount.abc1234/"
                        "testorg__wordcount.abc1234.traj.json")


def _errors() -> dict[str, str | None]:
    return {step.arguments["command"]: step.error for step in _run(COMPILERS).steps}


def test_a_failed_compile_says_the_compilers_first_error_not_makes_error_1() -> None:
    """Bug (probe B, after B6-B7): gcc's ``wc.c:5:13: error: ...`` was no error line, so make's ``*** [Makefile:2: wc] Error 1``
    (a recipe failed) was the step's error."""
    assert _errors()["cd src && make"] == "wc.c:5:13: error: expected ‘;’ before ‘}’ token (exit code 2)"


def test_cargo_says_rustcs_error_not_could_not_compile() -> None:
    """Bug (probe B, after B6-B7): the last ``error:`` line won, cargo's ``error: could not compile `wc` ...``."""
    assert _errors()["cd rs && cargo build --offline"] == "error[E0425]: cannot find function `words` in this scope " \
                                                         "(exit code 101)"


def test_javac_says_its_error_not_its_count() -> None:
    """Bug (probe B, after B6-B7): javac's ``WordCount.java:3: error: ...`` lost to its closing ``1 error``."""
    assert _errors()["cd java && javac WordCount.java"] == "WordCount.java:3: error: cannot find symbol (exit code 1)"


def test_maven_says_the_goal_that_failed_and_why_not_its_help_link() -> None:
    """Bug (probe B, after B6-B7): every ``[ERROR]`` line mentions an error, so the last won: ``[ERROR] [Help 1] http://...``."""
    error = _errors()["cd mvn && mvn -o -B compile"]
    assert error.endswith("Cannot access central (https://repo.maven.apache.org/maven2) in offline mode and the "
                          "artifact org.apache.maven:maven-project:jar:2.0.6 has not been downloaded from it before. "
                          "-> [Help 1] (exit code 1)")


def test_npm_says_its_error_not_where_its_log_is() -> None:
    """Bug (probe B, after B6-B7): npm's last line, ``npm error A complete log of this run can be found in: ...``, won."""
    assert _errors()["npm run build"] == 'npm error Missing script: "build" (exit code 1)'


def test_a_gcc_fatal_error_stays_the_error() -> None:
    assert _errors()["gcc -c -o /tmp/io.o src/io.c"] == "src/io.c:1:10: fatal error: words.h: No such file or " \
                                                        "directory (exit code 1)"


def test_tsc_says_its_diagnostic_not_the_build_scripts_error() -> None:
    """Bug (probe B, after B6-B7): a gemini-cli build's ``src/config/config.ts:897:35 - error TS2339: ...`` lost to the build
    script's ``Error: Command failed: tsc --build``, which only says that tsc failed."""
    (parsed,) = read_dump(FIXTURES / "gemini-cli/.real/checkpoint-agent-teams.json")
    errors = [step.error for step in parsed.trajectory.steps if step.error and "error TS" in step.error]
    assert [error.split(" - ")[0] for error in errors] == ["src/config/config.ts:897:35",
                                                           "src/ui/components/TeamCreatorWizard.tsx:724:46",
                                                           "src/ui/components/TeamCreatorWizard.tsx:171:9"]

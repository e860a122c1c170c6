"""A paste read as a query is read the same again (review of ENG6, 1), whatever framed it: a log viewer's prefixes and a
CI system's closing lines together, the one line without the prefix (``docker compose logs`` in a CI step, then
GitHub's ``Error: Process completed with exit code 1.``). One reading had left the prefixes (not every line carried
one) and taken the closing line; the search reads a query twice, and every such search failed with ``StopIteration``.

The texts are real: every step output of the real mini-swe-agent runs under ``tests/fixtures/mini-swe-agent/.real``
named below, as pasted (its last 40 lines), in every framing ``test_pasted_ci_framing`` and
``test_pasted_log_prefixes`` take from real logs, alone and combined, and in the raw tails of a whole job's log
(GitLab's trace with its section marks, a GitHub job's post-job clean-up: the samples named in
``excerpt._CI_CLOSING``).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from trajsearch.excerpt import pasted_error_line, query_text, terms
from trajsearch.ingest.read import read_dump

from cli_support import backend, run_cli  # noqa: F401 - the fixture
from test_pasted_ci_framing import CLOSINGS, VIEWERS
from test_pasted_log_prefixes import ERROR, PREFIXED, RUNS, _traceback

REAL = Path(__file__).parent / "fixtures/mini-swe-agent/.real"
#: A whole job's raw tail after its error: GitLab's trace (section marks around its clean-up; busuek/netology's issue,
#: the ESC codes as the raw trace holds them) and GitHub's (voyager1122/04.Gitops's log: the post-job clean-up).
RAW_TAILS = {
    "gitlab raw trace": "section_end:1692280744:step_script\r\x1b[0K\n"
                        "section_start:1692280744:cleanup_file_variables\r\x1b[0K"
                        "\x1b[36;1mCleaning up project directory and file based variables\x1b[0;m\n"
                        "section_end:1692280744:cleanup_file_variables\r\x1b[0K\n"
                        "\x1b[31;1mERROR: Job failed: exit code 1\x1b[0;m\n",
    "github job tail": "##[error]Process completed with exit code 1.\nPost job cleanup.\nPost job cleanup.\n"
                       "[command]/usr/bin/git version\ngit version 2.36.0\n"
                       "Temporarily overriding HOME='/home/runner/work/_temp/f7f431cc' before making global git "
                       "config changes\n[command]/usr/bin/git config --local --unset-all http.https://github.com/.extraheader\n"
                       "Cleaning up orphan processes",
}


def _real_pastes() -> list[str]:
    """The tail (40 lines) of each distinct step output of a few real runs, as a user pastes one."""
    outputs: dict[str, None] = {}
    for name in ("deepseek-error-line-elsewhere", "pasted-traces", "pytest-output", "printed-error"):
        for parsed in read_dump(REAL / name):
            for step in parsed.trajectory.steps if parsed.ok else ():
                tail = "\n".join((step.observation or "").splitlines()[-40:])
                if tail.strip():
                    outputs[tail] = None
    return list(outputs)


def _framed(text: str) -> dict[str, str]:
    """``text`` in each framing: each viewer's prefixes, each closing (under the prefixed lines, itself unprefixed or
    prefixed too), each raw tail."""
    def prefixed(lines: str, prefix) -> str:
        return "".join(prefix(n) + line for n, line in enumerate(lines.splitlines(keepends=True)))

    viewers = {**VIEWERS, **PREFIXED, "none": lambda n: ""}
    closings = {**CLOSINGS, **RAW_TAILS, "none": ""}
    forms = {}
    for v, prefix in viewers.items():
        for c, closing in closings.items():
            forms[f"{v} + {c}"] = prefixed(text, prefix) + ("\n" + closing if closing else "")
            forms[f"{v} + {c}, prefixed"] = prefixed(text + "\n" + closing, prefix)
    return forms


def test_a_query_read_is_read_the_same_again() -> None:
    """Bug: compose's (or any viewer's) prefixes under a CI closing line without one were read off only by a second
    reading, and ``pasted_error_line`` of the once-read paste raised ``StopIteration``."""
    pastes = _real_pastes()
    assert len(pastes) >= 200
    checked = set()
    for i, text in enumerate(pastes):  # each paste in 7 of the framings, in turn, and plain (all of them: 70 s)
        framed = list(_framed(text).items())
        for form, pasted in [framed[(i * 7 + j) % len(framed)] for j in range(7)] + framed[-2:]:
            read = query_text(pasted)
            assert query_text(read) == read, (form, pasted)
            assert pasted_error_line(read) == pasted_error_line(pasted)  # never raises: the same line either way
            checked.add(form)
    assert len(checked) == len(framed)  # every framing met


def test_the_error_line_survives_every_combined_framing() -> None:
    """The real traceback, framed every way: its error is the paste's, and the first term."""
    for form, pasted in _framed(_traceback()).items():
        assert pasted_error_line(pasted) == ERROR, form
        assert terms(pasted)[0] == ERROR.lower(), form


def test_pasted_error_line_never_raises() -> None:
    """Whatever the text: lines of framing only, a closing line under one prefixed line, blanks, CRs."""
    for text in ("", "\n", "x", "worker-1  | a\nError: Process completed with exit code 1.",
                 "worker-1  | ValueError: x\nworker-1  | KeyError: y\nERROR: Job failed: exit code 1",
                 "ValueError: bad\r\nError: Process completed with exit code 1.\r\n",
                 "Post job cleanup.\nCleaning up orphan processes", "##[error]x\n##[error]ValueError: y",
                 "\r\r\nKeyError: 'x'\r"):
        assert isinstance(pasted_error_line(text), str)


def test_a_combined_paste_is_searched_end_to_end(backend) -> None:
    """Bug: ``trajsearch search`` of compose lines under GitHub's web closing line printed ``error: StopIteration``
    (main answered). Now its first hit shows the error line, as the plain traceback's does."""
    assert run_cli("ingest", str(RUNS), "--quiet")[0] == 0
    plain = _traceback()
    combined = "".join("worker-1  | " + line for line in plain.splitlines(keepends=True))
    combined += "\nError: Process completed with exit code 1."
    answers = {}
    for name, pasted in (("plain", plain), ("combined", combined)):
        code, out, err = run_cli("search", pasted, "--level", "step", "-k", "3", "--json")
        assert code == 0, err
        hits = json.loads(out)
        assert ERROR in hits[0]["text"], (name, hits[0])
        answers[name] = [h["trajectory_id"] for h in hits]
    assert answers["combined"] == answers["plain"]


def test_a_step_holding_the_viewers_lines_is_still_found(backend, tmp_path) -> None:
    """The trade (review of ENG6, 2): an agent that ran ``journalctl`` itself holds the prefixes in its step, which a
    paste read without them no longer matches whole; the error line it still holds, so the search still ranks that
    run first, showing the error. The run: the real one of ``RUNS`` whose step printed the traceback, its lines as
    journald shows them (as if the agent had read the service's journal)."""
    source = RUNS / "deepseek_lite_dev_noparallel/pvlib__pvlib-python-1606/pvlib__pvlib-python-1606.traj.json"
    journal = "".join(VIEWERS["journalctl"](n) + line for n, line in enumerate(_traceback().splitlines(True)))
    run = json.loads(source.read_text())
    held = [m for m in run["messages"] if isinstance(m.get("content"), str) and ERROR in m["content"]]
    assert held
    for message in held:
        message["content"] = message["content"].replace(_traceback(), journal)
    runs = tmp_path / "runs"
    target = runs / "journal" / source.parent.name
    target.mkdir(parents=True)
    (target / source.name).write_text(json.dumps(run))
    for other in ("deepseek_chat_dev",):  # the runs ending in other errors through the same frames
        shutil.copytree(RUNS / other, tmp_path / other)
    assert run_cli("ingest", str(runs), "--quiet")[0] == 0
    code, out, err = run_cli("search", journal, "--level", "step", "-k", "3", "--json")
    assert code == 0, err
    hits = json.loads(out)
    assert "pvlib__pvlib-python-1606" in hits[0]["trajectory_id"] and ERROR in hits[0]["text"], hits[0]


#: Lines a program writes that only look like a viewer's prefix (review of ENG6, 3): each kept whole.
KEPT = {
    "words before a count": "worker-1 started pid 1234\nworker-2 crashed with SIGSEGV",
    "tool names": "e2e-tests failed on main\npip-audit found 2 vulnerabilities",
    "many workers": "\n".join(f"worker-{i} started job {i}" for i in range(200)),
    "a StatefulSet-like name": "web-0 app started\nweb-1 app started",
    "headerless TSV, a time column": "1\talice\t2024-01-01 10:00:00\tactive\n2\tbob\t2024-01-02 11:00:00\tbanned",
    "a markdown note": "##[error] in my notes?\nfoo",
}


@pytest.mark.parametrize("kind", sorted(KEPT))
def test_a_programs_own_lines_keep_their_heads(kind) -> None:
    assert query_text(KEPT[kind]) == KEPT[kind]


def test_python_logging_keeps_its_level_and_logger() -> None:
    """``%(asctime)s %(levelname)s %(name)s: %(message)s`` is no journald line: only the time goes, as any dated line's;
    a syslog-like line with a space in its time likewise."""
    logged = "2024-01-01 12:00:00,123 INFO myapp.db: connecting\n2024-01-01 12:00:01,456 ERROR myapp.db: refused"
    assert query_text(logged) == "INFO myapp.db: connecting\nERROR myapp.db: refused"
    syslog = "2026-12-06 19:45:01 web1 nginx: GET /\n2026-12-06 19:45:02 web1 nginx: GET /x"
    assert query_text(syslog) == "web1 nginx: GET /\nweb1 nginx: GET /x"


#: journald in other locales and with ``-o short-precise``, each prefix as ``journalctl`` prints it.
JOURNALD = {
    "fr": "juil. 28 06:43:00 host app[9777]: ", "fr janv": "janv. 28 06:43:00 host app[9777]: ",
    "fi": "tammi 28 06:43:00 host app[9777]: ", "ja": "12月 28 06:43:00 host app[9777]: ",
    "ko": "12월 28 06:43:00 host app[9777]: ", "short-precise": "Dec 28 06:43:00.123456 host app[9777]: ",
    "short-iso-precise": "2017-12-28T06:43:00.123456+01:00 host app[9777]: ",
}


@pytest.mark.parametrize("locale", sorted(JOURNALD))
def test_journald_in_other_forms_loses_its_prefix(locale) -> None:
    plain = _traceback()
    pasted = "".join(JOURNALD[locale] + line for line in plain.splitlines(keepends=True))
    assert query_text(pasted) == plain


@pytest.mark.parametrize("tail", sorted(RAW_TAILS))
def test_a_whole_jobs_raw_tail_goes(tail) -> None:
    """GitLab's section marks and GitHub's post-job clean-up closed the paste: its last line was no error."""
    read = query_text(_traceback() + "\n" + RAW_TAILS[tail])
    assert read.rstrip("\n") == _traceback()

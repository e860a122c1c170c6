"""Retrieval that generalises (issue 11): every line of every output findable, k results whenever
k exist, auto routing of prose vs logs, exemplars that share the code being changed, novelty.

Plumbing with the hashing test embedder on real Milvus Lite; what depends on semantics
(routing is pure computation; exemplar ranking and novelty need the real model) is marked
``model``.
"""

from __future__ import annotations

from dataclasses import replace
from functools import partial
from pathlib import Path

import pytest

from trajsearch.embed import HashingEmbedder
from trajsearch.fusion import looks_like_log, resolve_mode
from trajsearch.model import Trajectory
from trajsearch.represent import MAX_ROW_CHARS, PASSAGE_CHARS, WindowConfig, represent
from trajsearch.runtime import AdviceConfig, NoveltyConfig, RerankConfig, Runtime, RuntimeConfig, RuntimeContext, Strategy
from trajsearch.runtime.rerank import (changed_files, defined_in, named_files, task_homes, touched_names, touched_scores,
                                       work_done)
from trajsearch.search import TrajSearch
from trajsearch.touched import identifiers, touched

from adapter_support import only, runs
from conftest import BASE_TIME, make_run
from test_server_uri import milvus_server  # noqa: F401 - the module-scoped server fixture

ACME = RuntimeContext(tenant="acme", now=BASE_TIME)
FIXTURES = Path(__file__).parent / "fixtures"


def long_output(marker: str, n: int = 400) -> tuple[str, list[str]]:
    """A long output (tens of KB) and lines of it: first, middle (several), last, and a marker."""
    lines = [f"{i:04d} collected case test_case_{i} of module pkg/mod_{i % 7}.py in {i * 3} ms" for i in range(n)]
    lines.insert(n // 2, marker)
    return "\n".join(lines), [lines[0], lines[n // 4], marker, lines[3 * n // 4], lines[-1]]


# -- 1. every character of every output is findable ---------------------------------------------------------


def test_passages_cover_what_step_rows_clip_and_nothing_else():
    output, _ = long_output("ValueError: flux capacitor overheated at 88 mph")
    huge_line = "x" * 50 + " ".join(f"tok{i}" for i in range(2_000))  # one line far longer than a passage
    run = make_run("r", steps=[("bash", {"command": "python run.py " + "--flag " * 200}, output),
                               ("bash", {"command": "cat blob.json"}, huge_line),
                               ("bash", {"command": "ls"}, "short")])
    rows = represent(run)
    passages = [r for r in rows if r.level == "passage"]
    windows = [r for r in rows if r.level == "step"]
    assert passages and all(p.vector_of in windows and p.step_index == p.step_end for p in passages)
    assert all(len(p.text) <= PASSAGE_CHARS + 80 for p in passages)
    visible = "\n".join(r.text for r in rows if r.level != "passage") + "\n" + "\n".join(p.text for p in passages)
    for line in output.splitlines():  # every line of the long output lies whole in some row
        assert line in visible, line
    for start in range(0, len(huge_line) - 400, 397):  # any 400 characters of an over-long line lie in one passage
        assert any(huge_line[start:start + 400] in p.text for p in passages)
    assert any("--flag --flag" in p.text and p.part.startswith("arguments") for p in passages)
    assert not [p for p in passages if p.step_index == 2]  # a short step has nothing clipped
    ids = {(r.level, r.step_index, r.part) for r in rows}
    assert len(ids) == len(rows)  # every row has its own key


def test_a_step_cut_from_its_window_is_covered_whole():
    # five long steps in one window: the window text is cut at MAX_ROW_CHARS, later steps are in passages
    steps = [("bash", {"command": f"ARG{i} " + "a" * 900}, f"OUT{i} " + "y" * 3_000 + f" END{i}") for i in range(5)]
    run = make_run("w", steps=steps)
    run = run.model_copy(update={"steps": [s.model_copy(update={"error": f"ERR{i} " + "e" * 1_000, "thought": "t" * 400})
                                           for i, s in enumerate(run.steps)]})
    rows = represent(run, window=WindowConfig(5, 5))
    window = next(r for r in rows if r.level == "step")
    assert len(window.text) == MAX_ROW_CHARS
    text = "\n".join(r.text for r in rows)
    for i in range(5):
        assert all(f"{what}{i}" in text for what in ("ARG", "OUT", "END", "ERR")), i


@pytest.mark.parametrize("mode", ["lexical", "hybrid", "auto"])
def test_every_line_of_a_long_output_is_found_first(hashing_ts, mode):
    output, probes = long_output("ValueError: flux capacitor overheated at 88 mph")
    hashing_ts.add([make_run("long", steps=[("bash", {"command": "python run.py"}, output),
                                            ("bash", {"command": "ls"}, "ok")]),
                    make_run("other")])
    for line in probes:
        hits = hashing_ts.search(line, tenant="acme", levels=["step", "failure"], k=5, mode=mode)
        assert hits and hits[0].trajectory_id == "long" and line in hits[0].text, (mode, line)
    # dense never ranks passages (they have no vector of their own)
    dense = hashing_ts.search(probes[2], tenant="acme", k=20, group_by_trajectory=False, mode="dense")
    assert "passage" not in {h.level for h in dense}
    with pytest.raises(ValueError, match="searched by their words only"):  # not an empty "no matches"
        hashing_ts.search(probes[2], tenant="acme", levels="passage", k=5, mode="dense")
    # auto, which sends prose to dense, searches passages alone by their words
    prose = hashing_ts.search("what did the flux capacitor do", tenant="acme", levels="passage", k=5, mode="auto")
    assert [h.trajectory_id for h in prose] == ["long"] and prose[0].level == "passage"


def test_passages_follow_reingest_delete_and_reopen(tmp_path):
    uri, traces = str(tmp_path / "m.db"), str(tmp_path / "traces")
    old, _ = long_output("QuaggaError: extinct since 1883")
    new, _ = long_output("ZebraStripeError: stripes out of order")
    with TrajSearch.open(uri, traces=traces, embedder=HashingEmbedder()) as ts:
        ts.add([make_run("r", steps=[("bash", {"command": "run"}, old)]), make_run("gone", steps=[
            ("bash", {"command": "run"}, long_output("WalrusError: tusk missing")[0])])])
        ts.add([make_run("r", steps=[("bash", {"command": "run"}, new)])])
        ts.delete("gone", tenant="acme")
        assert not [h for h in ts.search("QuaggaError: extinct since 1883", tenant="acme", k=3, mode="lexical")
                    if "Quagga" in h.text]
        assert "gone" not in {h.trajectory_id for h in ts.search("WalrusError: tusk missing", tenant="acme", k=3,
                                                                  mode="lexical")}
        assert ts.search("ZebraStripeError: stripes out of order", tenant="acme", k=1, mode="lexical")[0].level == "passage"
    with TrajSearch.open(uri, traces=traces, embedder=HashingEmbedder()) as ts:
        ts.index._mirror.label.unlink()  # force a rebuild of the lexical index from the collection
    with TrajSearch.open(uri, traces=traces, embedder=HashingEmbedder()) as ts:
        hit = ts.search("ZebraStripeError: stripes out of order", tenant="acme", k=1, mode="hybrid")[0]
        assert hit.trajectory_id == "r" and "ZebraStripeError" in hit.text
        assert [v.position for v in ts.expand(hit, before=0, after=0)] == [0]  # a passage expands to its step
        assert "gone" not in {h.trajectory_id for h in ts.search("WalrusError: tusk missing", tenant="acme", k=3,
                                                                  mode="lexical")}


def test_passages_on_the_server_path_native_bm25(milvus_server, tmp_path):  # noqa: F811
    output, probes = long_output("KeyError: 'quantum_flux_density'")
    with TrajSearch.open(milvus_server, traces=str(tmp_path / "t"), embedder=HashingEmbedder(dim=48),
                         lexical="milvus") as ts:
        ts.add([make_run("long", steps=[("bash", {"command": "python run.py"}, output)]), make_run("other")])
        for mode in ("lexical", "hybrid"):
            hits = ts.search(probes[2], tenant="acme", levels=["step"], k=3, mode=mode)
            assert hits[0].trajectory_id == "long" and probes[2] in hits[0].text, mode
        ts.delete("long", tenant="acme")
        assert all(h.trajectory_id != "long" for h in ts.search(probes[2], tenant="acme", k=3, mode="lexical"))


def test_dense_excludes_passages_where_they_share_the_tenant_partition(hashing_ts):
    # a Milvus server keeps every row of a tenant in one partition: the level filter must keep passages out
    output, probes = long_output("OSError: disk quota exceeded on /dev/sdb1")
    hashing_ts.add([make_run("long", steps=[("bash", {"command": "run"}, output)]), make_run("other")])
    hashing_ts.index.partitioned = False  # search as on a server: no partition names, filters only
    for levels in ((), ("step",), ("step", "passage")):
        hits = hashing_ts.search(probes[2], tenant="acme", levels=levels, k=50, group_by_trajectory=False, mode="dense")
        assert hits and "passage" not in {h.level for h in hits}, levels


# -- 2. k results whenever k exist, rows in score order -------------------------------------------------------


def _crowded(ts: TrajSearch) -> None:
    """One run whose 60 windows all say 'deploy timeout', and eight runs that say it once."""
    busy = [("bash", {"command": f"deploy --stage {i}"}, f"deploy timeout on stage {i}") for i in range(120)]
    ts.add([make_run("busy", steps=busy)] + [
        make_run(f"r{i}", task=f"Task {i}", steps=[("bash", {"command": "deploy"}, "deploy timeout"),
                                                   ("bash", {"command": "ls"}, f"file{i}.txt")])
        for i in range(8)])


@pytest.mark.parametrize("mode", ["lexical", "hybrid", "dense", "auto"])
def test_k_runs_come_back_whenever_k_exist(hashing_ts, mode):
    _crowded(hashing_ts)
    for k in (5, 9):
        hits = hashing_ts.search("deploy timeout", tenant="acme", levels=["step"], k=k, mode=mode)
        assert len({h.trajectory_id for h in hits}) == k, (mode, k)
        scores = [h.score for h in hits]
        assert scores == sorted(scores, reverse=True)
    hits = hashing_ts.search("deploy timeout", tenant="acme", levels=["step"], k=12, mode=mode)
    assert len({h.trajectory_id for h in hits}) == 9  # only nine runs exist
    grouped = hashing_ts.search("deploy timeout", tenant="acme", levels=["step"], k=4, group_size=3, mode=mode)
    assert len({h.trajectory_id for h in grouped}) == 4
    assert [h.score for h in grouped] == sorted((h.score for h in grouped), reverse=True)
    rows = hashing_ts.search("deploy timeout", tenant="acme", levels=["step"], k=30, group_by_trajectory=False, mode=mode)
    assert len(rows) == 30


def test_similar_runs_fill_k_in_a_crowded_tenant(hashing_ts):
    _crowded(hashing_ts)
    for mode in ("hybrid", "lexical", "dense"):
        matches = hashing_ts.similar_runs(text="deploy timeout", tenant="acme", k=6, mode=mode)
        assert len(matches) == 6, mode
        assert [m.score for m in matches] == sorted((m.score for m in matches), reverse=True)


# -- 3. auto routing: prose vs logs ---------------------------------------------------------------------------

ISSUE = '''temperature.fuentes errors when given tz-aware inputs on pandas>=1.0.0
**Describe the bug**
When the weather timeseries inputs to `temperature.fuentes` have tz-aware index, an internal call to
`np.diff(index)` returns an array of `Timedelta` objects instead of an array of nanosecond ints.

```
Traceback (most recent call last):
  File "/home/kevin/pvlib/temperature.py", line 602, in fuentes
    timedelta_hours = np.diff(poa_global.index).astype(float) / 1e9 / 60 / 60
TypeError: float() argument must be a string or a number, not 'Timedelta'
```
**Expected behavior**
`temperature.fuentes` should work with both tz-naive and tz-aware inputs.
'''


def test_auto_sends_task_descriptions_and_questions_to_dense():
    for prose in (ISSUE,
                  "You are mia_li_3668. You want to fly from New York to Seattle on May 20 (one way). You do not "
                  "want to fly before 11am est. You want to use your two certificates to pay, and your 7447 card.",
                  "Why does pytest fail with ModuleNotFoundError: No module named 'yaml' in CI?",
                  "Fix the bug where the login page shows a blank screen for some users",
                  "Write a Terraform module that provisions an S3 bucket with versioning and encryption.",
                  # SWE-bench Verified issue titles that open with the code they are about
                  "model_to_dict() should return an empty dict for an empty list of fields.",
                  "`io.fits.Card` may use a string representation of floats that is larger than necessary",
                  # prose naming an exception built with its message (no bracket or colon before it)
                  "The client raises ConnectionError('timeout') when the server is slow to respond to the first request",
                  "Django's URLValidator raises ValidationError('Enter a valid URL.') for URLs with a trailing dot in "
                  "the host name, although such URLs are valid according to RFC 3986 and browsers accept them."):
        assert resolve_mode("auto", prose) == "dense", prose[:60]


def test_auto_sends_pasted_logs_traces_and_commands_to_hybrid():
    trace = ("Traceback (most recent call last):\n  File \"app.py\", line 3, in <module>\n    import yaml\n"
             "ModuleNotFoundError: No module named 'yaml'")
    for log in (trace, "ModuleNotFoundError: No module named 'yaml'", "exit code 137",
                "cd /testbed && git log --oneline | head -5", "pytest -x tests/test_api.py::test_login",
                "E   AssertionError: assert 3 == 4", "Error: Reservation not found for this user",
                "import unittest", "return self._fit(X, y)", "aarav_anderson_8794", "src/app/main.py",
                "FAILED tests/test_x.py::test_y - KeyError: 'id'", "get_user_details omar_rossi_1241",
                # sphinx linkcheck's line in a SWE-bench Verified run: long, wordy, an exception built with its message
                "(line 1) broken https://lkfqhlkghflkhs - HTTPSConnectionPool(host='lkfqhlkghflkhs', port=443): Max "
                "retries exceeded with url: / (Caused by NameResolutionError(\"<urllib3.connection.HTTPSConnection "
                "object at 0x7050507a3100>: Failed to resolve 'lkfqhlkghflkhs' ([Errno -2] Name or service not "
                "known)\"))",
                # lowercase error messages: their first word is no code a sentence could be about
                "connection to server on socket \"/var/run/postgresql/.s.PGSQL.5432\" failed: No such file or directory",
                "unable to access 'https://github.com/x/y.git/': Could not resolve host: github.com",
                "fixture 'db' not found in the test module tests/test_x.py"):
        assert looks_like_log(log), log
        assert resolve_mode("auto", log) == "hybrid", log


# -- 4. exemplars that share the code being changed -----------------------------------------------------------

PATCH = """diff --git a/src/billing/invoice.py b/src/billing/invoice.py
--- a/src/billing/invoice.py
+++ b/src/billing/invoice.py
@@ -40,7 +40,7 @@ def compute_tax(amount, region):
-    return round(amount * rate, 1)
+    return round(amount * rate, 2)
"""


def test_touched_reads_files_functions_tests_commands_and_calls():
    run = make_run("t", steps=[
        ("bash", {"command": "cd /testbed && grep -n 'def compute_tax' src/billing/invoice.py"}, "40:def compute_tax"),
        ("bash", {"command": "cat > reproduce.py <<'EOF'\nfrom billing import invoice\nEOF\npython reproduce.py"}, "0.1"),
        ("bash", {"command": "sed -i 's/, 1)/, 2)/' /testbed/src/billing/invoice.py"}, ""),
        ("bash", {"command": "python -m pytest tests/test_invoice.py::test_tax -q"}, "1 passed"),
        ("bash", {"command": "git diff"}, PATCH),
        ("str_replace_editor", {"command": "view", "path": "/testbed/src/billing/rates.py"}, "RATES = {...}"),
        ("cancel_reservation", {"reservation_id": "ABC123"}, "cancelled"),
        ("get_user_details", {"user_id": "mia_li_3668"}, "{...}"),
    ])
    found = touched(run)
    assert found.changed == ["src/billing/invoice.py"]  # the diff decides; reproduce.py is scratch
    assert found.modules == ["billing.invoice"]
    assert "compute_tax" in found.symbols
    assert {"src/billing/rates.py"} <= set(found.read) and "reproduce.py" not in found.read
    assert found.tests == ["tests/test_invoice.py::test_tax"]
    assert {"grep", "python", "sed", "git", "cat"} <= set(found.commands)
    assert found.calls == ["cancel_reservation"]
    line = found.line()
    assert line.startswith("Touched: changed src/billing/invoice.py (modules billing.invoice)")
    assert {"invoice", "billing/invoice", "billing.invoice", "compute_tax"} <= touched_names(line)["code"]
    assert touched_names(line)["calls"] == {"cancel", "reservation"}
    summary = next(r for r in represent(run) if r.level == "summary").text
    assert line in summary


def test_identifiers_of_a_task_meet_what_runs_touched():
    names = identifiers("pvlib.irradiance.reindl() generates NaNs; see `haydavies` and tests/test_irradiance.py::test_x")
    assert {"pvlib.irradiance.reindl", "pvlib.irradiance", "pvlib/irradiance.py", "haydavies",
            "tests/test_irradiance.py::test_x"} <= set(names)
    scores = touched_scores("Rounding in billing.invoice.compute_tax is off", [
        "Goal: x\nTouched: changed src/billing/invoice.py (modules billing.invoice); functions/classes compute_tax.",
        "Goal: y\nTouched: changed src/auth/login.py (modules auth.login); functions/classes login.",
        "Goal: z"])
    assert scores["code"][0] > 0.5 and scores["code"][1] == 0.0 and scores["code"][2] == 0.0
    calls = touched_scores("You want to cancel your flight", ["Touched: calls cancel_reservation.",
                                                             "Touched: calls book_reservation.", ""])["calls"]
    assert calls[0] > 0.5 and calls[1] == calls[2] == 0.0


def test_a_run_that_changed_what_the_task_names_scores_full_however_much_else_it_changed():
    """`code` is the share of the code the task names (among what the candidates changed) that a run changed:
    a big patch that also changed the named module is not diluted by the rest of it."""
    task = "QuerySet.union() drops the ordering; see django/db/models/query.py and sql.compiler"
    scores = touched_scores(task, [
        "Touched: changed django/db/models/query.py, django/db/models/sql/compiler.py, django/db/backends/base.py, "
        "docs/ref/models/querysets.txt, tests/queries/test_qs_combinators.py (modules django.db.models.query, "
        "django.db.models.sql.compiler, django.db.backends.base); functions/classes union, _combinator_query, "
        "get_combinator_sql, as_sql, _order_by.",
        "Touched: changed django/db/models/query.py (modules django.db.models.query); functions/classes union.",
        "Touched: changed django/utils/functional.py (modules django.utils.functional); functions/classes cached.",
    ])["code"]
    assert scores[0] == pytest.approx(1.0)  # it changed both the module and the compiler the task names
    assert 0.2 < scores[1] < scores[0]  # the module only
    assert scores[2] == 0.0


def test_a_path_in_the_task_tells_a_changed_file_from_its_namesakes():
    """The task's path is matched as a run's changed files are named (stem, last two parts): the run that
    changed base/schema.py outranks one that changed another schema.py."""
    task = "index_together deletion crashes in django/db/backends/base/schema.py with a ValueError"
    scores = touched_scores(task, [
        "Touched: changed django/db/backends/sqlite3/schema.py (modules django.db.backends.sqlite3.schema).",
        "Touched: changed django/db/backends/base/schema.py (modules django.db.backends.base.schema).",
        "Touched: changed django/db/models/options.py (modules django.db.models.options).",
    ])["code"]
    assert scores[1] > scores[0] > scores[2] == 0.0


def test_reads_show_where_code_lives():
    """What a run's reads showed defined (a file it printed, a search over many files, an editor's view) is
    kept per file; output that is no read (a script's) and a read of two files at once are not."""
    run = make_run("r", steps=[
        ("bash", {"command": "cd /testbed && grep -n 'class QuerySet' django/db/models/query.py"},
         "<returncode>0</returncode>\n<output>\n185:class QuerySet:\n</output>"),
        ("bash", {"command": "sed -n '460,470p' django/db/models/query.py"},
         "<returncode>0</returncode>\n<output>\n    def bulk_create(self, objs, batch_size=None):\n        \"\"\"Insert\"\"\"\n"
         "    def __init__(self):\n</output>"),
        ("bash", {"command": "grep -rn FILE_UPLOAD_PERMISSIONS django/ docs/"},
         "django/conf/global_settings.py:307:FILE_UPLOAD_PERMISSIONS = None\n"
         "django/core/files/storage.py:260:            if self.file_permissions_mode is not None:\n"
         "docs/ref/settings.txt:1500:FILE_UPLOAD_PERMISSIONS\n"),
        ("bash", {"command": "nl -ba src/widgets.js | sed -n '1,40p'"},
         "     1\texport function renderWidget(el) {\n     2\t  const MAX_ITEMS = 3;\n"),
        ("str_replace_editor", {"command": "view", "path": "/testbed/django/conf/global_settings.py"},
         "     1\tDEFAULT_CHARSET = 'utf-8'\n     2\t    NESTED_SETTING = 1\n"),
        ("bash", {"command": "cat > reproduce.py <<'EOF'\ndef repro():\n    pass\nEOF"}, ""),
        ("bash", {"command": "cat reproduce.py"}, "def repro():\n    pass\n"),  # a scratch script lives nowhere
        ("bash", {"command": "python reproduce.py"}, "def looks_defined_but_is_output():"),
        ("bash", {"command": "cat a.py b.py"}, "def which_file_was_it():"),
        ("bash", {"command": "git diff"}, PATCH),
    ])
    found = touched(run)
    assert found.defined == {
        "django/db/models/query.py": ["QuerySet", "bulk_create"],
        "django/conf/global_settings.py": ["FILE_UPLOAD_PERMISSIONS", "DEFAULT_CHARSET"],
        "src/widgets.js": ["renderWidget"],
    }
    line = found.line()
    assert "definitions read django/db/models/query.py: QuerySet bulk_create, django/conf/global_settings.py: " in line
    assert defined_in([line]) == {"queryset": {"models/query.py"}, "bulk_create": {"models/query.py"},
                                  "file_upload_permissions": {"conf/global_settings.py"},
                                  "default_charset": {"conf/global_settings.py"}, "renderwidget": {"src/widgets.js"}}


def test_swe_agent_runs_show_where_code_lives_and_their_edit_bodies_are_no_commands():
    """Real SWE-agent trajectories: its viewer's ``[File: /repo/... (N lines total)]`` output shows what
    the file defines (the absolute path merged with the relative one the run changed), and the body of
    an ``edit N:M ... end_of_edit`` command or a thought written as the action is not read as commands."""
    real = FIXTURES / "swe-agent" / ".real"
    django = touched(only(real / "coder" / "trajs" / "django__django-11099.traj"))
    assert django.changed == ["django/contrib/auth/validators.py"]
    assert django.defined == {"django/contrib/auth/validators.py": ["ASCIIUsernameValidator", "UnicodeUsernameValidator"]}
    assert "end_of_plan" not in django.commands and "plan" in django.commands  # a plan's JSON body is no command
    pydicom = touched(only(real / "gpt4__swe-bench-dev-easy_first_only__default__t-0.00__p-0.95__c-3.00__install-1"
                           / "pydicom__pydicom-1458.traj"))
    assert set(pydicom.commands) == {"edit", "python", "create", "find_file", "open", "rm"}
    jackson = touched(only(real / "20240825_SWE-agent_doubao-pro-128k" / "trajs" / "fasterxml__jackson-databind-3851.traj"))
    assert jackson.commands == ["javac"]


def test_a_task_naming_what_a_file_defines_meets_the_runs_that_changed_that_file():
    """``where``: the task names ``bulk_create``; one candidate's reads showed it defined in query.py; the run
    that changed query.py scores, though neither its patch nor its task names bulk_create."""
    task = "bulk_create() ignores the batch_size argument when it is smaller than the database limit"
    reader = ("Touched: changed docs/releases/4.2.txt; definitions read django/db/models/query.py: QuerySet "
              "bulk_create bulk_update, django/db/models/sql/compiler.py: SQLInsertCompiler.")
    changer = "Touched: changed django/db/models/query.py (modules django.db.models.query); functions/classes _batched_insert."
    other = "Touched: changed django/forms/widgets.py (modules django.forms.widgets)."
    where = touched_scores(task, [reader, changer, other])["where"]
    assert where == [0.0, 1.0, 0.0]
    # a name defined in many files says nowhere in particular
    many = ", ".join(f"pkg/m{i}.py: bulk_create" for i in range(4))
    assert touched_scores(task, [f"Touched: definitions read {many}.", changer])["where"] == [0.0, 0.0]


def test_a_file_the_task_names_outright_is_where_its_work_lies():
    """``where`` counts the source files a task names as written, by path, link or file name (real wording:
    SWE-bench Verified django-12143 and django-15569); a module path guessed from a dotted name is no file."""
    task = ("While browsing the code in admin/options.py [1] I came across that line ... [1] https://github.com/django/"
            "django/blob/ef93fd4/django/contrib/admin/options.py#L1634; see also django.db.models.query_utils")
    assert named_files(task) == {"admin/options.py"}
    assert named_files("the cache is not cleared in query_utils.py") == {"query_utils.py"}
    admin = "Touched: changed django/contrib/admin/options.py (modules django.contrib.admin.options)."
    utils = "Touched: changed django/db/models/query_utils.py (modules django.db.models.query_utils)."
    forms = "Touched: changed django/forms/formsets.py (modules django.forms.formsets)."
    assert touched_scores(task, [admin, utils, forms])["where"] == [1.0, 0.0, 0.0]
    assert touched_scores("the cache is not cleared in query_utils.py", [admin, utils])["where"] == [0.0, 1.0]



def test_a_builtin_method_the_task_calls_names_no_home():
    """A traceback's ``self.__class__.__name__.lower()`` (SWE-bench astroid-1268) names ``str.lower``, not the
    project's module that happens to define a ``lower``; ``visit_unknown`` is the project's own."""
    task = ("'AsStringVisitor' object has no attribute 'visit_unknown'\n"
            "    return getattr(self, 'visit_' + self.__class__.__name__.lower())(node)")
    brain = "Touched: changed a/b.py; definitions read astroid/brain/brain_builtin_inference.py: lower upper."
    visitor = "Touched: changed a/c.py; definitions read astroid/nodes/as_string.py: visit_unknown visit_call."
    assert task_homes(task, [brain, visitor]) == {"nodes/as_string.py": 1.0}

def test_exemplars_prefer_the_run_that_changed_where_the_named_code_lives(hashing_ts):
    """Plumbing (hashing test embedder): two runs as close to the task in wording; the one that changed the
    file where the task's function lives (as another run's read showed) comes first."""
    task = "Fix the failing unit test: quantize_total rounds half down"

    def fix(run_id: str, path: str) -> Trajectory:
        return make_run(run_id, task_id=run_id, task=task.replace("quantize_total", f"a bug {run_id}"), steps=[
            ("bash", {"command": f"cat {path}"}, "def helper():\n    pass\n"),
            ("bash", {"command": f"sed -i 's/a/b/' {path}"}, ""),
            ("bash", {"command": "git diff"}, f"diff --git a/{path} b/{path}\n--- a/{path}\n+++ b/{path}\n@@ -1 +1 @@\n-a\n+b\n"),
        ])

    reader = make_run("reader", task_id="reader", task="Document the money helpers", steps=[
        ("bash", {"command": "grep -n 'def ' src/money/rounding.py"}, "12:def quantize_total(amount):\n30:def round_half(x):"),
        ("bash", {"command": "sed -i 's/x/y/' docs/money.md"}, ""),
    ])
    # "awry": a tie would put it first (ties are ordered by run id), so only the where signal puts "right" first
    hashing_ts.add([fix("awry", "src/money/format.py"), fix("right", "src/money/rounding.py"), reader])
    gate = NoveltyConfig(follow_closely=1.0, inspiration=0.0, per_tenant=False)
    ranked = Runtime(hashing_ts, RuntimeConfig(advice=AdviceConfig(novelty=gate))).exemplars(task, ACME, k=3).items
    assert ranked[0].trajectory_id == "right"
    unaware = AdviceConfig(novelty=gate, cover_weight=0.0, rerank=RerankConfig(w_where=0.0))  # nor the steps that read it
    shown = Runtime(hashing_ts, RuntimeConfig(advice=unaware)).exemplars(task, ACME, k=3).items
    assert [e.trajectory_id for e in shown][:2] == ["awry", "right"]  # a tie without it, ordered by run id


def test_a_run_that_changed_a_file_the_task_names_is_a_candidate_however_its_task_was_worded(hashing_ts):
    """Plumbing (hashing test embedder): the dense pool holds only runs worded like the task; the run that
    changed the file the task names comes in by its own lookup (with the lookup of every identifier off, and that
    of the runs that changed the likeliest files: the file the task names is one, and would bring it in too)."""
    task = "Possible data loss in the changeform view when using regex special characters in formset prefix"

    def run(run_id: str, wording: str, path: str) -> Trajectory:
        return make_run(run_id, task_id=run_id, task=wording, steps=[
            ("bash", {"command": f"sed -i 's/a/b/' {path}"}, ""),
            ("bash", {"command": "git diff"}, f"diff --git a/{path} b/{path}\n--- a/{path}\n+++ b/{path}\n@@ -1 +1 @@\n-a\n+b\n"),
        ])

    near = [run(f"near-{i}", f"{task} ({i})", f"django/contrib/admin/options{i}.py") for i in range(4)]
    far = run("far", "Allow overriding the widget in formfield_for_manytomany", "django/contrib/admin/options.py")
    hashing_ts.add([*near, far])
    gate = NoveltyConfig(follow_closely=1.0, inspiration=0.0, per_tenant=False)
    asked = f"{task}; see admin/options.py"

    def shown(named: int) -> list[str]:
        config = AdviceConfig(novelty=gate, pool_factor=1, touched_candidates=0, named_file_candidates=named,
                              likely_files_looked_up=0, rerank=RerankConfig(w_where=1.0))
        return [e.trajectory_id for e in Runtime(hashing_ts, RuntimeConfig(advice=config)).exemplars(asked, ACME, k=3).items]

    assert shown(10)[0] == "far"
    assert "far" not in shown(0)


def test_one_exemplar_per_task(hashing_ts):
    same = [make_run(f"pay-{i}", task_id="pay", task="Fix the failing unit test in the payments service")
            for i in range(3)]
    other = make_run("refund", task_id="refund", task="Fix the refund rounding in the payments service",
                     steps=[("search_docs", {"q": "currency rounding rules"}, "banker's rounding in decimal module"),
                            ("write_file", {"path": "src/rounding.py", "content": "quantize"}, "written")])
    hashing_ts.add(same + [other])
    open_ = Runtime(hashing_ts, RuntimeConfig(advice=AdviceConfig(novelty=NoveltyConfig(follow_closely=1.0, inspiration=0.0, per_tenant=False))))
    items = open_.exemplars("Fix the failing unit test in the payments service", ACME, k=2).items
    assert len(items) == 2 and "refund" in {e.trajectory_id for e in items}


def _airline(tid: str, task: str, *writes: str) -> Trajectory:
    """A run of an airline-like agent: a read, then ``writes`` (state-changing calls), one task each."""
    steps = [("get_reservation_details", {"reservation_id": "ABC123"}, "reservation ABC123: JFK-SEA, economy")]
    steps += [(w, {"reservation_id": "ABC123"}, "done") for w in writes]
    return make_run(tid, task_id=tid, task=task, steps=steps)


def _scored_exemplars(ts: TrajSearch, task: str, k: int, margin: float) -> dict[str, float]:
    """The exemplars shown for ``task`` with the given near-tie margin, and their scores (every run applicable;
    no near-copy left out: twins' summaries are near-copies too; no covering of likely files, tested on its own)."""
    rerank = RerankConfig(other_work_margin=margin, max_cosine=1.0)
    config = RuntimeConfig(advice=AdviceConfig(novelty=NoveltyConfig(follow_closely=1.0, inspiration=0.0, per_tenant=False),
                                               rerank=rerank, cover_weight=0.0))
    return {e.trajectory_id: e.score for e in Runtime(ts, config).exemplars(task, ACME, k=k).items}


def test_near_ties_go_to_runs_that_did_other_work(hashing_ts):
    """A run that made the same state-changing calls as an exemplar already chosen gives way to a
    run that did other work and scores at most ``other_work_margin`` less (if the first did the
    wrong thing, so did its twin); a clearer lead keeps it; with nothing else left, twins fill k."""
    task = "Cancel my reservation ABC123 to Seattle and refund it to my credit card"
    hashing_ts.add([
        _airline("first", "Cancel my reservation ABC123 to Seattle and refund it to my credit card please",
                 "cancel_reservation"),
        _airline("twin", "Cancel my reservation ABC123 to Seattle and refund it to my card", "cancel_reservation"),
        _airline("other", "Change my reservation ABC123 to a nonstop flight", "update_reservation_flights"),
    ])

    exemplars = partial(_scored_exemplars, hashing_ts, task)

    by_score = exemplars(3, margin=0.0)
    assert list(by_score) == ["first", "twin", "other"]
    lead = by_score["twin"] - by_score["other"]
    assert list(exemplars(2, margin=lead + 0.01)) == ["first", "other"]
    assert list(exemplars(2, margin=lead - 0.01)) == ["first", "twin"]
    assert list(exemplars(3, margin=lead + 0.01)) == ["first", "other", "twin"]


def test_a_run_sharing_files_with_a_chosen_one_gives_way_by_the_share_it_shares(hashing_ts):
    """Plumbing (hashing test embedder): a run that changed one of the two files an exemplar already
    chosen changed (half its work done) loses half the margin to a near tie that changed another file;
    three runs sharing work cover less than three that each changed their own."""
    task = "QuerySet.update() ignores the ordering of the related model"

    def fix(run_id: str, wording: str, *paths: str) -> Trajectory:
        diff = "".join(f"diff --git a/{p} b/{p}\n--- a/{p}\n+++ b/{p}\n@@ -1 +1 @@\n-a\n+b\n" for p in paths)
        return make_run(run_id, task_id=run_id, task=wording, steps=[
            *[("bash", {"command": f"sed -i 's/a/b/' {p}"}, "") for p in paths],
            ("bash", {"command": "git diff"}, diff),
        ])

    hashing_ts.add([
        fix("first", task, "django/db/models/query.py"),
        fix("partial", task + " on the manager", "django/db/models/query.py", "django/db/models/sql/compiler.py"),
        fix("other", "QuerySet.update() drops the ordering of a model", "django/forms/models.py"),
    ])

    exemplars = partial(_scored_exemplars, hashing_ts, task)

    by_score = exemplars(3, margin=0.0)
    assert list(by_score) == ["first", "partial", "other"]
    lead = by_score["partial"] - by_score["other"]
    assert list(exemplars(2, margin=2 * lead + 0.01)) == ["first", "other"]
    assert list(exemplars(2, margin=2 * lead - 0.01)) == ["first", "partial"]  # more than its lead, half of it less


def test_a_file_a_run_created_is_no_work_it_shares(hashing_ts):
    """SWE-agent and CodeR hand in their reproduction script with the fix (``git add -A && git diff --cached``:
    ``new file mode``). A created file is no file of the project: it is not listed as changed, so two runs that
    both handed in a ``reproduce.py`` do not repeat each other's work (no near tie given away for it), and it
    is no place a task's work lies. A run whose diffs only create files changed nothing of the project (SWE-agent
    counts a reproduction script handed in alone as a submission): its summary lists them as created, and it
    shares no work and votes for no place (the price: a run whose work is a new module alone no longer counts
    as changing it; none of the ~215 such runs in two SWE-agent and one CodeR dumps of SWE-bench Lite was one)."""
    task = "QuerySet.update() ignores the ordering of the related model"

    def fix(run_id: str, wording: str, *paths: str, created: tuple[str, ...] = ("reproduce.py",)) -> Trajectory:
        diff = "".join(f"diff --git a/{p} b/{p}\nnew file mode 100644\nindex 0000000..e69de29\n--- /dev/null\n"
                       f"+++ b/{p}\n@@ -0,0 +1 @@\n+print(1)\n" for p in created)
        diff += "".join(f"diff --git a/{p} b/{p}\n--- a/{p}\n+++ b/{p}\n@@ -1 +1 @@\n-a\n+b\n" for p in paths)
        return make_run(run_id, task_id=run_id, task=wording, steps=[
            ("bash", {"command": "cat > reproduce.py <<'EOF'\nprint(1)\nEOF"}, ""),
            # the run writes what its diff shows it created (a file no action names is its environment's edit)
            *[("bash", {"command": f"mkdir -p app && cat > {p} <<'EOF'\nprint(1)\nEOF"}, "")
              for p in created if p != "reproduce.py"],
            *[("bash", {"command": f"sed -i 's/a/b/' {p}"}, "") for p in paths],
            ("bash", {"command": "git add -A && git diff --cached"}, diff),
        ])

    hashing_ts.add([
        fix("first", task, "django/db/models/query.py"),
        fix("second", task + " on the manager", "django/db/models/sql/compiler.py"),
        fix("other", "QuerySet.update() drops the ordering of a model", "django/forms/models.py", created=()),
        fix("script-only", "Add a JSON serializer module", created=("reproduce_bug.py", "app/models.py")),
    ])
    summary = hashing_ts.run("first", tenant="acme", level="summary").text
    assert work_done(summary) == {"changed django/db/models/query.py"}
    script_only = hashing_ts.run("script-only", tenant="acme", level="summary").text
    assert "created reproduce_bug.py, app/models.py" in script_only and work_done(script_only) == frozenset()
    assert changed_files(script_only) == []

    exemplars = partial(_scored_exemplars, hashing_ts, task)
    by_score = exemplars(3, margin=0.0)
    assert list(by_score) == ["first", "second", "other"]
    lead = by_score["second"] - by_score["other"]
    # sharing reproduce.py with the first would have cost the second half the margin: it keeps its place
    assert list(exemplars(2, margin=2 * lead + 0.01)) == ["first", "second"]


def test_the_last_place_goes_to_a_run_making_the_calls_the_task_names(hashing_ts):
    """When no exemplar chosen so far made the state-changing call the task asks for (runs worded
    alike that only read: a request refused), the last place goes to the best run that made it,
    however worded; a run sharing only a common word of a call's name (``reservation``) does not
    count as making it."""
    task = "Cancel all of my upcoming flights in my reservation, even without a refund"
    near = [_airline(f"near-{i}", f"Cancel all of my upcoming flights in my reservation{tail}")
            for i, tail in enumerate((", even if there is no refund", " and refund me", " today, no refund needed"))]
    partial = _airline("partial", "Add a checked bag to my reservation", "update_reservation_baggages")
    does_it = _airline("does-it", "Please drop my trip ABC123 to Seattle", "cancel_reservation")
    config = RuntimeConfig(advice=AdviceConfig(novelty=NoveltyConfig(follow_closely=1.0, inspiration=0.0, per_tenant=False)))

    def exemplars() -> list[str]:
        return [e.trajectory_id for e in Runtime(hashing_ts, config).exemplars(task, ACME, k=3).items]

    hashing_ts.add([*near, partial])
    assert sorted(exemplars()) == ["near-0", "near-1", "near-2"]
    hashing_ts.add([does_it])
    chosen = exemplars()
    assert chosen[-1] == "does-it" and set(chosen[:2]) < {"near-0", "near-1", "near-2"}


def test_the_last_place_goes_to_a_run_that_did_work_when_the_first_did_none(hashing_ts):
    """Runs worded like the task that only read (a request refused) take the first places; when
    none of them changed anything, the last place goes to the best run that did, even though the
    task names none of its calls (``change`` is not ``update_reservation_flights``). With one
    chosen run that did work, the ranking decides it as before."""
    task = "Change my upcoming flight to a nonstop one on the same day"
    near = [_airline(f"near-{i}", text) for i, text in enumerate((
        "Change my upcoming flight to a nonstop one on the same day, please",
        "I need to change my upcoming flight to a nonstop flight on the same day: my mother is sick",
        "Can you change the upcoming flight in my booking to a nonstop one today? I can pay a fee",
    ))]
    does_it = _airline("does-it", "Move trip ABC123 to a direct connection", "update_reservation_flights")
    config = RuntimeConfig(advice=AdviceConfig(novelty=NoveltyConfig(follow_closely=1.0, inspiration=0.0, per_tenant=False)))

    def exemplars() -> list[str]:
        return [e.trajectory_id for e in Runtime(hashing_ts, config).exemplars(task, ACME, k=3).items]

    hashing_ts.add([*near, does_it])
    chosen = exemplars()
    assert chosen[-1] == "does-it" and set(chosen[:2]) < {"near-0", "near-1", "near-2"}
    hashing_ts.add([_airline("near-0", near[0].task, "update_reservation_baggages")])  # the first did work now
    assert sorted(exemplars()) == ["near-0", "near-1", "near-2"]


def test_without_diversity_the_last_places_still_take_one_run_each(hashing_ts):
    """With diversity off and two last places, a run that did work comes first for them and also
    stands in the ranking; it still takes one place, not two."""
    task = "Change my upcoming flight to a nonstop one on the same day"
    hashing_ts.add([
        _airline("near", task + ", please"),
        _airline("does-it", "Change my upcoming flight to a nonstop one", "update_reservation_flights"),
        _airline("other", "Can you change the upcoming flight in my booking to a nonstop one today? I can pay a fee"),
    ])
    rerank = RerankConfig(diversity=False, call_slots=2)
    config = RuntimeConfig(advice=AdviceConfig(novelty=NoveltyConfig(follow_closely=1.0, inspiration=0.0, per_tenant=False),
                                               rerank=rerank))
    chosen = [e.trajectory_id for e in Runtime(hashing_ts, config).exemplars(task, ACME, k=3).items]
    assert chosen == ["near", "does-it", "other"]


def test_many_runs_of_one_task_do_not_fill_the_candidate_pool(hashing_ts):
    """Runs of one task share its text (retries, benchmark trials): the nearest task rows can be one
    task over and over, and diversity keeps one run per task. The task leg fetches deeper than the
    other legs (``AdviceConfig.task_depth``), so other tasks and the run making the call the task
    names (worded otherwise) are still candidates."""
    task = "Cancel all of my upcoming flights in my reservation, even without a refund"
    trials = [make_run(f"trial-{i}", task_id="trials", task=task + " please",
                       steps=[("get_reservation_details", {"reservation_id": "ABC123"}, "reservation ABC123")])
              for i in range(16)]  # more than the 15 rows (3 exemplars x pool_factor 5) the pool once held
    near = _airline("near", "Cancel my upcoming flights in my reservation, no refund needed")
    does_it = _airline("does-it", "Please drop my trip ABC123 to Seattle", "cancel_reservation")
    hashing_ts.add([*trials, near, does_it])
    config = RuntimeConfig(advice=AdviceConfig(novelty=NoveltyConfig(follow_closely=1.0, inspiration=0.0, per_tenant=False)))
    chosen = [e.trajectory_id for e in Runtime(hashing_ts, config).exemplars(task, ACME, k=3).items]
    assert chosen[0].startswith("trial-") and chosen[1:] == ["near", "does-it"]


def test_the_task_leg_stops_at_the_first_tasks_when_each_has_one_run(hashing_ts):
    """The task leg fetches deep only to reach ``pool`` distinct tasks (runs of one task share its text):
    with one run per task, the tasks beyond the first ``pool`` are no candidates, so a far run cannot
    win on reranking features alone (SWE-bench leave-task-out: recall@3 0.757 -> 0.780)."""
    words = [f"w{i}" for i in range(20)]
    query = " ".join(words)

    def run(tid: str, missing: list[int], tool: str, result: str = "done") -> Trajectory:
        task = " ".join(w for i, w in enumerate(words) if i not in missing)
        return make_run(tid, task_id=tid, task=task, steps=[(tool, {"x": tid}, result)])

    near = [run("t1", [0], "rare_tool")] + [run(f"t{i}", [0, i], "rare_tool") for i in range(2, 7)]
    # the 7th task by text, and its summary (its result) far too; the only run whose tool is available now
    far = run("far", [0, 7, 8], "bash", " ".join(f"other{i}" for i in range(40)))
    hashing_ts.add([*near, far])
    ctx = RuntimeContext(tenant="acme", now=BASE_TIME, tools_available=["bash"])
    config = RuntimeConfig(advice=AdviceConfig(novelty=NoveltyConfig(follow_closely=1.0, inspiration=0.0, per_tenant=False),
                                               rerank=RerankConfig(w_tools=0.5)))
    [first] = Runtime(hashing_ts, config).exemplars(query, ctx, k=1).items  # pool: 5 tasks
    assert first.trajectory_id == "t1"
    wide = replace(config.advice, pool_factor=7)  # 7 tasks: the far run is a candidate, and its tool wins
    [first] = Runtime(hashing_ts, replace(config, advice=wide)).exemplars(query, ctx, k=1).items
    assert first.trajectory_id == "far"


def test_runs_with_no_recorded_work_are_not_twins(hashing_ts):
    """Two runs that changed nothing and called no state-changing tool are not known to have done
    the same work (a request refused, or steps that say nothing): neither gives way."""
    task = "Cancel my reservation ABC123 to Seattle and refund it to my credit card"
    hashing_ts.add([
        _airline("first", "Cancel my reservation ABC123 to Seattle and refund it to my credit card please"),
        _airline("twin", "Cancel my reservation ABC123 to Seattle and refund it to my card"),
        _airline("other", "Change my reservation ABC123 to a nonstop flight", "update_reservation_flights"),
    ])
    config = RuntimeConfig(advice=AdviceConfig(novelty=NoveltyConfig(follow_closely=1.0, inspiration=0.0, per_tenant=False),
                                               rerank=RerankConfig(other_work_margin=1.0, max_cosine=1.0)))
    assert [e.trajectory_id for e in Runtime(hashing_ts, config).exemplars(task, ACME, k=2).items] == ["first", "twin"]


def test_work_done_reads_changed_files_and_calls_of_the_touched_line():
    line = ("Summary.\nTouched: changed src/app.py, lib/util.py (modules app, util); functions/classes main; "
            "read README.md; calls cancel_reservation, send_certificate; commands pytest.")
    assert work_done(line) == {"changed src/app.py", "changed lib/util.py", "calls cancel_reservation",
                               "calls send_certificate"}
    assert work_done("Summary without a touched line.") == frozenset()


def _library() -> list[Trajectory]:
    edit = lambda path, fn: [  # noqa: E731
        ("bash", {"command": f"grep -n 'def {fn}' {path}"}, f"40:def {fn}(amount):"),
        ("bash", {"command": f"sed -i 's/1)/2)/' {path}"}, ""),
        ("bash", {"command": "git diff"}, f"diff --git a/{path} b/{path}\n--- a/{path}\n+++ b/{path}\n"
                                          f"@@ -40,2 +40,2 @@ def {fn}(amount):\n-    x\n+    y\n"),
    ]
    return [
        # worded like the new task, but changed other code
        make_run("wording-1", task_id="w1", task="Invoices show the wrong total amount for customers in Europe",
                 steps=edit("src/shop/cart.py", "cart_total")),
        make_run("wording-2", task_id="w2", task="Wrong total amount on invoices for European customers",
                 steps=edit("src/shop/display.py", "format_total")),
        make_run("wording-3", task_id="w3", task="European customers see a wrong invoice total",
                 steps=edit("src/shop/locale.py", "currency_symbol")),
        # worded otherwise, but changed the module the new task names
        make_run("module-1", task_id="m1", task="Tax for Norway is computed with the old rate table",
                 steps=edit("src/billing/invoice.py", "compute_tax")),
    ]


@pytest.mark.model
def test_exemplars_include_a_run_that_changed_the_module_the_task_names(model_ts):
    model_ts.add(_library())
    task = "Invoices for customers in Europe show the wrong total: billing.invoice.compute_tax rounds to 1 digit"
    rt = Runtime(model_ts)
    got = [e.trajectory_id for e in rt.exemplars(task, ACME, k=3).items]
    assert "module-1" in got, got
    # by wording alone it would not be there
    plain = Runtime(model_ts, RuntimeConfig(advice=AdviceConfig(
        touched_candidates=0, cover_weight=0.0, rerank=RerankConfig(w_touched=0.0, w_calls=0.0))))
    wording = [e.trajectory_id for e in plain.exemplars(task, ACME, k=3).items]
    assert "module-1" not in wording, wording


# -- 5. novelty thresholds ------------------------------------------------------------------------------------


@pytest.mark.model
def test_novelty_threshold_sits_between_out_of_domain_and_in_domain_tasks(model_ts):
    model_ts.add(_library())
    probe = Runtime(model_ts, RuntimeConfig(advice=AdviceConfig(novelty=NoveltyConfig(0.0, 0.0, per_tenant=False))))
    t = NoveltyConfig().inspiration
    for task in ("Compose a short haiku sequence about the ocean at dawn.",
                 "Plan a week of high-protein vegetarian dinners on a tight budget."):
        assert probe.exemplars(task, ACME).best_similarity < t
        assert Runtime(model_ts).exemplars(task, ACME).strategy is Strategy.plan_from_scratch
    for task in ("The invoice total is wrong for customers in Germany",
                 "Update the tax rate table used for Norwegian invoices"):
        assert probe.exemplars(task, ACME).best_similarity >= t
        assert Runtime(model_ts).exemplars(task, ACME).strategy is Strategy.use_as_inspiration


#: A shop's customer-service library, worded the way tau-bench retail tasks are (one template, many
#: requests): its own tasks sit far above the global threshold, so the tenant gets one of its own.
SHOP_TASKS = [
    "Your name is Yusuf Rossi and your zip code is 19122. You are polite and patient. You received your order "
    "#W2378156 and wish to exchange the mechanical keyboard for a similar one with clicky switches.",
    "Your name is Mei Davis and your zip code is 80217. You are polite and patient. You want to return the water "
    "bottle and the desk lamp from order #W2890441 and get the refund to your original payment method.",
    "Your name is Ethan Garcia and your zip code is 80280. You are polite and patient. Cancel your pending order "
    "#W4967593 because you no longer need the hiking boots.",
    "Your name is Sofia Hernandez and your zip code is 98193. You are polite and patient. Your order #W3947049 has "
    "not shipped yet; change its shipping address to your new apartment in Seattle.",
    "Your name is Noah Brown and your zip code is 20090. You are polite and patient. You want to know how many "
    "t-shirt options are available in the online store right now.",
    "Your name is Amelia Silva and your zip code is 19117. You are polite and patient. Exchange the smart watch in "
    "delivered order #W7342738 for one with a leather band and pay the difference with your gift card.",
    "Your name is Lucas Muller and your zip code is 77246. You are polite and patient. You ordered a coffee maker by "
    "mistake; cancel order #W1234567 and refund to your credit card.",
    "Your name is Olivia Lopez and your zip code is 76171. You are polite and patient. Return the bluetooth speaker "
    "from order #W9911233 because it stopped working after a week.",
    "Your name is Mia Kim and your zip code is 43251. You are polite and patient. Update the default address on your "
    "user account to 12 Oak Street, Columbus.",
    "Your name is Liam Khan and your zip code is 94107. You are polite and patient. Modify the pending order "
    "#W5566778 to switch the blue backpack to the black one in the same size.",
    "Your name is Ava Ito and your zip code is 10040. You are polite and patient. You want to return everything from "
    "order #W8812345 except the yoga mat and get the refund on PayPal.",
    "Your name is James Sanchez and your zip code is 32208. You are polite and patient. Ask what payment methods are "
    "on your account and change the one used for pending order #W3344556 to your gift card.",
]
SHOP = RuntimeContext(tenant="shop")


@pytest.mark.model
def test_a_tenant_whose_tasks_sit_high_gets_a_higher_threshold_of_its_own(model_ts):
    model_ts.add([make_run(f"shop-{i}", tenant="shop", task_id=f"s{i}", task=task) for i, task in enumerate(SHOP_TASKS)])
    rt = Runtime(model_ts)
    calibration = rt.calibrations("shop")
    assert calibration.basis == "calibrated" and calibration.tasks == len(SHOP_TASKS)
    assert calibration.out_of_domain < calibration.threshold < calibration.in_domain
    assert calibration.threshold > NoveltyConfig().inspiration
    assert calibration.margins()[0] == pytest.approx(calibration.margins()[1])  # the middle of the gap

    # a shop owner's own chore, not a customer's request: above the global threshold, below the shop's
    chore = "Set up a Shopify store that sells handmade candles and accepts PayPal."
    global_only = Runtime(model_ts, RuntimeConfig(advice=AdviceConfig(novelty=NoveltyConfig(per_tenant=False))))
    assert global_only.exemplars(chore, SHOP).strategy is Strategy.use_as_inspiration
    found = rt.exemplars(chore, SHOP)
    assert found.strategy is Strategy.plan_from_scratch and found.calibration == calibration
    assert NoveltyConfig().inspiration <= found.best_similarity < calibration.threshold
    # a new customer's request still gets the shop's runs
    request = ("Your name is Chen Wu and your zip code is 60601. You are polite and patient. You want to exchange the "
               "running shoes in delivered order #W4455667 for a larger size.")
    assert rt.exemplars(request, SHOP).strategy is Strategy.use_as_inspiration


def test_a_small_tenant_keeps_the_global_threshold(hashing_ts):
    hashing_ts.add([make_run(f"small-{i}", task_id=f"t{i}", task=f"Fix bug number {i} in the parser") for i in range(4)])
    calibration = Runtime(hashing_ts).calibrations("acme")
    assert calibration.threshold == NoveltyConfig().inspiration
    assert calibration.basis == "global: fewer than 10 tasks" and calibration.tasks == 4
    assert Runtime(hashing_ts).calibrations("nobody").tasks == 0


def test_a_tenant_is_calibrated_again_once_its_calibration_is_old(hashing_ts):
    """Plumbing, with the fast test embedder: the clock is the test's, nothing waits."""
    from trajsearch.runtime import Calibrations

    now = [0.0]
    config = NoveltyConfig()
    calibrations = Calibrations(hashing_ts, config, clock=lambda: now[0])
    hashing_ts.add([make_run(f"a-{i}", task_id=f"a{i}", task=f"Fix bug number {i} in the parser") for i in range(4)])
    assert calibrations("acme").tasks == 4
    hashing_ts.add([make_run(f"b-{i}", task_id=f"b{i}", task=f"Add feature {i} to the exporter") for i in range(8)])
    assert calibrations("acme").tasks == 4  # still fresh: not measured again
    now[0] += config.recalibrate_seconds
    again = calibrations("acme")
    assert again.tasks == 12 and again.basis != "global: fewer than 10 tasks"


def test_an_older_store_is_searched_as_it_is_and_upgraded_without_reembedding(tmp_path, monkeypatch):
    import trajsearch.represent as represent_module
    from trajsearch.touched import Touched

    output, probes = long_output("RuntimeError: the old store never saw this line")
    runs = [make_run("long", steps=[("bash", {"command": "git diff src/billing/invoice.py"}, PATCH),
                                    ("bash", {"command": "run"}, output)]),
            make_run("short")]
    embedder = HashingEmbedder()
    texts: list[str] = []
    encode = embedder.encode
    monkeypatch.setattr(embedder, "encode", lambda batch, **kw: texts.extend(batch) or encode(batch, **kw))
    with TrajSearch.open(str(tmp_path / "m.db"), traces=str(tmp_path / "t"), embedder=embedder) as ts:
        with monkeypatch.context() as old:  # the representation before issue 11: no passages, no Touched line
            old.setattr(represent_module, "REPRESENTATION_VERSION", 1)
            old.setattr(represent_module, "step_passages", lambda run, windows: [])
            old.setattr(represent_module, "touched", lambda run: Touched())
            ts.add(runs)
        assert probes[2] not in ts.search(probes[2], tenant="acme", k=1, mode="lexical")[0].text
        windows = {r["text"] for r in ts.index.iterate(["text"], tenant="acme", levels=("step",))}
        texts.clear()
        assert ts.upgrade() == 2
        # the new summaries, and the windows (their vectors now from the first 128 tokens): no task, no failure
        assert sorted(texts) == sorted([*windows, *(t for t in texts if t.startswith("Goal:"))])
        assert sum(t.startswith("Goal:") for t in texts) == 2
        hit = ts.search(probes[2], tenant="acme", k=1, mode="hybrid")[0]
        assert hit.trajectory_id == "long" and probes[2] in hit.text
        assert "Touched: changed src/billing/invoice.py" in ts.run("long", tenant="acme", level="summary").text
        assert ts.upgrade() == 0 and ts.add(runs).unchanged == 2  # now current: nothing to redo


@pytest.mark.parametrize("version", [3, 2])
def test_reingesting_after_a_representation_upgrade_embeds_only_what_changed(tmp_path, monkeypatch, version):
    """A store indexed by version 3 (no definitions in the Touched line) or 2 (windows' vectors from 256
    tokens), re-ingested by a new process: the rows whose text and vector recipe are unchanged keep their
    stored vectors; only the new summaries (and, from version 2, the windows) are embedded."""
    import trajsearch.represent as represent_module
    from trajsearch.touched import Touched

    runs = [make_run("long", steps=[("bash", {"command": "cat src/billing/invoice.py"}, "def compute_tax(amount, region):"),
                                    ("bash", {"command": "git diff"}, PATCH)]),
            make_run("short", task_id="other", task="Rotate the API keys of the billing service")]
    embedder = HashingEmbedder()
    texts: list[str] = []
    encode = embedder.encode
    monkeypatch.setattr(embedder, "encode", lambda batch, **kw: texts.extend(batch) or encode(batch, **kw))
    where = {"uri": str(tmp_path / "m.db"), "traces": str(tmp_path / "t"), "embedder": embedder}
    with monkeypatch.context() as old, TrajSearch.open(**where) as ts:
        old.setattr(represent_module, "REPRESENTATION_VERSION", version)
        old.setattr(represent_module, "touched", lambda run: Touched())  # a summary without the Touched line
        ts.add(runs)
        windows = {r["text"] for r in ts.index.iterate(["text"], tenant="acme", levels=("step",))}
    texts.clear()
    with TrajSearch.open(**where) as ts:  # a new process: nothing embedded lately
        assert ts.add(runs).ingested == 2
        summaries = [t for t in texts if t.startswith("Goal:")]
        assert len(summaries) == 2
        assert sorted(texts) == sorted(summaries + (sorted(windows) if version < 3 else []))
        summary = ts.run("long", tenant="acme", level="summary").text
        assert "definitions read src/billing/invoice.py: compute_tax" in summary
        assert ts.search("refund the wrong tax rounding", tenant="acme", k=2, mode="dense")  # the kept vectors serve
        texts.clear()
        assert ts.add(runs).unchanged == 2 and texts == []


def test_a_tenant_with_only_failed_runs_keeps_the_global_threshold(hashing_ts):
    hashing_ts.add([make_run(f"f-{i}", task_id=f"f{i}", task=f"Fix bug number {i} in the parser", outcome="failure")
                    for i in range(12)])
    calibration = Runtime(hashing_ts).calibrations("acme")
    assert calibration.threshold == NoveltyConfig().inspiration and calibration.tasks == 12
    assert calibration.basis == "global: no successful run to measure against"


def test_exemplars_cover_the_file_the_nearest_steps_point_to(hashing_ts):
    """Plumbing (hashing test embedder): three runs worded like the task changed ``query.py``, a run
    worded less like it changed ``sql/compiler.py``, and the steps nearest the task (failed runs that
    looked there) name ``sql/compiler.py``. The second place goes to the run that changed it: two
    exemplars around the two likeliest files rather than two around one. Without covering (or
    without those steps) the second place is a run that changed ``query.py`` again."""
    task = "QuerySet.update() ignores the ordering of the related model"

    def fix(run_id: str, wording: str, path: str, outcome: str = "success") -> Trajectory:
        diff = f"diff --git a/{path} b/{path}\n--- a/{path}\n+++ b/{path}\n@@ -1 +1 @@\n-a\n+b\n"
        return make_run(run_id, task_id=run_id, task=wording, outcome=outcome, steps=[
            ("bash", {"command": f"grep -n ordering {path}"}, f"{path}:12: ordering = None"),
            ("bash", {"command": f"sed -i 's/a/b/' {path}"}, ""),
            ("bash", {"command": "git diff"}, diff),
        ])

    near = [fix(f"near-{i}", task + tail, "django/db/models/query.py")
            for i, tail in enumerate(("", " of a model", " when ordered"))]
    other = fix("compiler", "bulk updates lose the related ordering", "django/db/models/sql/compiler.py")
    looked = [fix(f"looked-{i}", task + tail, "django/db/models/sql/compiler.py", outcome="failure")
              for i, tail in enumerate((" (tried)", " again"))]

    def exemplars(cover_weight: float) -> list[str]:
        config = RuntimeConfig(advice=AdviceConfig(
            novelty=NoveltyConfig(follow_closely=1.0, inspiration=0.0, per_tenant=False), cover_weight=cover_weight,
            rerank=RerankConfig(other_work_margin=0.0, max_cosine=1.0)))
        return [e.trajectory_id for e in Runtime(hashing_ts, config).exemplars(task, ACME, k=2).items]

    hashing_ts.add([*near, other])
    assert exemplars(1.0) == exemplars(0.0) == ["near-0", "near-1"]  # the candidates alone: query.py
    hashing_ts.add(looked)
    assert exemplars(1.0) == ["near-0", "compiler"]
    assert exemplars(0.0) == ["near-0", "near-1"]



def test_exemplars_cover_the_file_holding_the_function_the_task_names(hashing_ts, monkeypatch):
    """Plumbing (hashing test embedder): three runs worded like the task changed ``invoice.py``; a run
    worded less like it changed ``tax.py``, where its reads showed the function the task names defined.
    The second place goes to that run: the task's own words point to ``tax.py`` (the steps' votes, nearest
    and holding the task's names, and the ranking's ``where`` feature are off). Without that vote (``HOME_WEIGHT`` 0) the second place is a
    run that changed ``invoice.py`` again."""
    from trajsearch.runtime import where

    task = "round_half_even_tax() rounds refunds the wrong way on invoices"

    def run(run_id: str, wording: str, path: str, shown: str) -> Trajectory:
        diff = f"diff --git a/{path} b/{path}\n--- a/{path}\n+++ b/{path}\n@@ -1 +1 @@\n-a\n+b\n"
        return make_run(run_id, task_id=run_id, task=wording, steps=[
            ("bash", {"command": f"cat {path}"}, shown),
            ("bash", {"command": f"sed -i 's/a/b/' {path}"}, ""),
            ("bash", {"command": "git diff"}, diff),
        ])

    near = [run(f"near-{i}", task + tail, "billing/invoice.py", "def total(lines):\n    return sum(lines)")
            for i, tail in enumerate(("", " of a customer", " when refunded"))]
    home = run("home", "Refunds are rounded the wrong way", "billing/tax.py",
               "def round_half_even_tax(amount):\n    return round(amount, 2)")
    hashing_ts.add([*near, home])

    def exemplars() -> list[str]:
        config = RuntimeConfig(advice=AdviceConfig(
            novelty=NoveltyConfig(follow_closely=1.0, inspiration=0.0, per_tenant=False), cover_steps=0,
            cover_named_steps=0,  # the task's words alone decide: the steps holding them would say tax.py too
            rerank=RerankConfig(other_work_margin=0.0, max_cosine=1.0, w_where=0.0)))
        return [e.trajectory_id for e in Runtime(hashing_ts, config).exemplars(task, ACME, k=2).items]

    assert exemplars() == ["near-0", "home"]
    monkeypatch.setattr(where, "HOME_WEIGHT", 0.0)
    assert exemplars() in (["near-0", "near-1"], ["near-0", "near-2"])

def test_exemplars_cover_the_file_where_steps_showed_the_code_the_task_names(hashing_ts, monkeypatch):
    """Plumbing (hashing test embedder): three runs worded like the task changed ``invoice.py``; a run worded
    otherwise changed ``tax.py``, where a failed run of another task (worded unlike it) saw the function the task
    names defined (a grep hit). The step rows the lexical leg ranks best for the task's identifiers vote on where
    its work lies, so the second place goes to the run that changed ``tax.py``; the nearest steps are off and no
    candidate's reads show the function. Without that vote (``cover_named_steps`` 0, or ``NAMED_STEP_WEIGHT`` 0)
    the second place is a run that changed ``invoice.py`` again."""
    from trajsearch.runtime import where

    task = "round_half_even_tax() rounds refunds the wrong way on invoices"
    near = [_changed(f"near-{i}", task + tail, "billing/invoice.py")
            for i, tail in enumerate(("", " of a customer", " when refunded"))]
    tax = _changed("tax", "Tax refunds come out rounded the wrong way", "billing/tax.py")
    grep = make_run("grep", task_id="grep", task="Export the ledger as CSV", outcome="failure", steps=[
        ("bash", {"command": "grep -rn 'def round_' billing/"}, "billing/tax.py:12:def round_half_even_tax(amount):")])
    hashing_ts.add([*near, tax, grep])

    def exemplars(**advice) -> list[str]:
        config = RuntimeConfig(advice=AdviceConfig(
            novelty=NoveltyConfig(follow_closely=1.0, inspiration=0.0, per_tenant=False), cover_steps=0,
            rerank=RerankConfig(other_work_margin=0.0, max_cosine=1.0, w_where=0.0), **advice))
        return [e.trajectory_id for e in Runtime(hashing_ts, config).exemplars(task, ACME, k=2).items]

    assert exemplars() == ["near-0", "tax"]
    assert exemplars(cover_named_steps=0) in (["near-0", "near-1"], ["near-0", "near-2"])
    monkeypatch.setattr(where, "NAMED_STEP_WEIGHT", 0.0)
    assert exemplars() in (["near-0", "near-1"], ["near-0", "near-2"])


def test_a_task_just_below_the_threshold_naming_code_a_run_changed_gets_exemplars(hashing_ts):
    """Plumbing (hashing test embedder; the threshold set around each task's own best similarity): a task
    whose wording is just below the novelty threshold but at least ``named_code_floor`` close, and that names
    code a successful run changed (``FormSets``: ``forms/formsets.py``), gets that run as an exemplar
    (``use_as_inspiration``). The same request in prose (no identifier), a task naming code no run changed,
    and the floor off (1.0) keep ``plan_from_scratch`` with nothing shown."""
    hashing_ts.add([_changed("formsets", "Formset management form errors are shown twice", "django/forms/formsets.py"),
                    _changed("filters", "Admin list filter ignores the ordering", "django/contrib/admin/filters.py")])

    def found(task: str, floor_off: bool = False):
        def runtime(inspiration: float, floor: float) -> Runtime:
            return Runtime(hashing_ts, RuntimeConfig(advice=AdviceConfig(
                novelty=NoveltyConfig(inspiration=inspiration, per_tenant=False), named_code_floor=floor,
                cover_steps=0)))
        best = runtime(0.0, 1.0).exemplars(task, ACME, k=2).best_similarity
        assert best is not None and best > 0.06, best
        return runtime(best + 0.05, 1.0 if floor_off else best - 0.05).exemplars(task, ACME, k=2)

    named = found("Add a `nonform` CSS class for the non form errors of FormSets")
    assert named.strategy is Strategy.use_as_inspiration and named.items[0].trajectory_id == "formsets"
    for task in ("Add a nonform CSS class for the non form errors of form sets",
                 "Add a `nonform` CSS class for the non form errors of ErrorListRenderer"):
        prose = found(task)
        assert prose.strategy is Strategy.plan_from_scratch and not prose.items, task
    off = found("Add a `nonform` CSS class for the non form errors of FormSets", floor_off=True)
    assert off.strategy is Strategy.plan_from_scratch and not off.items
    # a bare file name every project has tells no project's code apart (review 3 of round 12, D1: a game engine's
    # base.py got scikit-learn runs that changed sklearn/base.py)
    bare = found("Add a nonform CSS class for the non form errors of formsets.py")
    assert bare.strategy is Strategy.plan_from_scratch and not bare.items


def _changed(run_id: str, task: str, path: str) -> Trajectory:
    """A run that changed ``path`` and did nothing else (a ``git diff`` shows it)."""
    diff = f"diff --git a/{path} b/{path}\n--- a/{path}\n+++ b/{path}\n@@ -1 +1 @@\n-a\n+b\n"
    return make_run(run_id, task_id=run_id, task=task, steps=[
        ("bash", {"command": f"sed -i 's/a/b/' {path}"}, ""), ("bash", {"command": "git diff"}, diff)])


def test_steps_naming_a_file_by_its_absolute_path_vote_for_it(hashing_ts):
    """Plumbing (hashing test embedder): the failed runs nearest the task looked at ``sql/compiler.py``
    only by absolute paths (a traceback, ``cat /testbed/...``); they point there as relative paths do."""
    task = "QuerySet.update() ignores the ordering of the related model"
    near = [_changed(f"near-{i}", task + tail, "django/db/models/query.py")
            for i, tail in enumerate(("", " of a model", " when ordered"))]
    other = _changed("compiler", "update() of a queryset ignores related ordering", "django/db/models/sql/compiler.py")
    looked = [make_run(f"looked-{i}", task_id=f"looked-{i}", task=task + tail, outcome="failure", steps=[
        ("bash", {"command": "python reproduce.py"}, 'Traceback (most recent call last):\n  File '
         '"/testbed/django/db/models/sql/compiler.py", line 12, in as_sql\n    ordering = None\nTypeError'),
        ("bash", {"command": "cat /testbed/django/db/models/sql/compiler.py"}, "ordering = None"),
    ]) for i, tail in enumerate((" (tried)", " again"))]
    hashing_ts.add([*near, other, *looked])
    config = RuntimeConfig(advice=AdviceConfig(
        novelty=NoveltyConfig(follow_closely=1.0, inspiration=0.0, per_tenant=False),
        rerank=RerankConfig(other_work_margin=0.0, max_cosine=1.0)))
    chosen = [e.trajectory_id for e in Runtime(hashing_ts, config).exemplars(task, ACME, k=2).items]
    assert sorted(chosen) == ["compiler", "near-0"], chosen  # both files covered


def test_covering_leaves_the_call_place_and_lifts_no_distant_run(hashing_ts):
    """Plumbing (hashing test embedder): a run far from the task that alone changed a file does not
    take the first place for its file (it holds the candidates' little weight, not all of it), and the
    last place still goes to the run making the call the task names, however covering would order it."""
    task = "Cancel all of my upcoming flights in my reservation, even without a refund"
    near = [_airline(f"near-{i}", f"Cancel all of my upcoming flights in my reservation{tail}")
            for i, tail in enumerate((", even if there is no refund", " and refund me", " today, no refund needed"))]
    does_it = _airline("does-it", "Please drop my trip ABC123 to Seattle", "cancel_reservation")
    distant = _changed("distant", "Fix a typo in the docs build script", "docs/readme.py")
    hashing_ts.add([*near, does_it, distant])
    config = RuntimeConfig(advice=AdviceConfig(novelty=NoveltyConfig(follow_closely=1.0, inspiration=0.0, per_tenant=False)))
    chosen = [e.trajectory_id for e in Runtime(hashing_ts, config).exemplars(task, ACME, k=3).items]
    assert chosen[0] != "distant" and chosen[-1] == "does-it", chosen


def test_a_run_calling_a_verdict_the_task_words_takes_no_place_from_the_code_it_works_on(hashing_ts):
    """Plumbing (hashing test embedder): an agent's verdict on its own run is recorded as a state-changing call
    (CodeR's ``fail``), and a bug report says "fail": a distant run that called ``fail`` took the place kept for runs
    making the calls the task names. A verdict names no work (``rerank.VERDICT_CALLS``), with or without the cover;
    a call that is work keeps that place in a code tenant too
    (test_the_calls_place_stays_for_a_call_that_is_work_in_a_code_tenant)."""
    task = "QuerySet.update() should fail when the queryset is ordered by a related field"
    near = [_changed(f"near-{i}", task + tail, f"django/db/models/{module}.py") for i, (tail, module) in enumerate(
        ((" of the model", "query"), (" and annotated", "sql/compiler"), (", since 3.1", "sql/query")))]
    path = "django/utils/text.py"
    diff = f"diff --git a/{path} b/{path}\n--- a/{path}\n+++ b/{path}\n@@ -1 +1 @@\n-a\n+b\n"
    caller = make_run("caller", task_id="caller", task="slugify() drops the trailing character of unicode text", steps=[
        ("bash", {"command": f"sed -i 's/a/b/' {path}"}, ""), ("bash", {"command": "git diff"}, diff),
        ("fail", {"reason": "gave up"}, "recorded")])
    assert touched(caller).calls == ["fail"]
    hashing_ts.add([*near, caller])
    # the candidates' vote alone says where the work lies (the few step rows here would point anywhere)
    config = RuntimeConfig(advice=AdviceConfig(
        novelty=NoveltyConfig(follow_closely=1.0, inspiration=0.0, per_tenant=False),
        cover_steps=0, cover_named_steps=0, rerank=RerankConfig(other_work_margin=0.0, max_cosine=1.0)))
    found = Runtime(hashing_ts, config).exemplars(task, ACME, k=3).items
    assert [e.trajectory_id for e in found] == ["near-0", "near-2", "near-1"], found
    uncovered = replace(config.advice, cover_weight=0.0)  # the cover off: still no place for the verdict
    found = Runtime(hashing_ts, replace(config, advice=uncovered)).exemplars(task, ACME, k=3).items
    assert "caller" not in [e.trajectory_id for e in found], found


def test_a_project_method_named_like_a_builtin_one_still_names_its_home():
    """Review p39 F3: the builtin-method filter dropped every name ending in a ``str``/``list``/``dict``...
    method, so SWE-bench Verified django-15128 ("... can be provided to Query.join and Query.table_alias ...",
    its problem statement) lost ``Query.join``'s home. A class qualifying the name says it is the project's;
    a lowercase receiver (``name.lower()``) still names none."""
    task = ("Maybe alias_map of rhs can be provided to Query.join and Query.table_alias, and suffix (number) of "
            "the new alias might be incremented until it is not in rhs.alias_map")
    query = "Touched: changed a/b.py; definitions read django/db/models/sql/query.py: join table_alias."
    assert task_homes(task, [query]) == {"sql/query.py": 2.0}
    assert task_homes("Query.join() drops the alias", [query]) == {"sql/query.py": 1.0}
    assert task_homes("alias.join() drops the alias", [query]) == {}


#: SWE-bench Verified django__django-14539 (its problem statement, as mini-swe-agent's gemini-3-pro run was given it)
#: and excerpts of that run's steps: what the runs below are made of.
URLIZE_TASK = ("urlize() does not handle html escaped string and trailing punctuation correctly Description Example: "
               "urlize('Search for google.com/?q=1&lt! and see.') # expected output 'Search for <a href=\"http://google.com/"
               "?q=1%3C\">google.com/?q=1&lt</a>! and see.' # actual output 'Search for <a href=\"http://google.com/?q=1%3C"
               "\">google.com/?q=1&lt</a>lt! and see.'")
URLIZE_READ = ("sed -n '260,290p' django/utils/html.py",
               '        """\n        Trim trailing and wrapping punctuation from `middle`. Return the items\n'
               '        of the new state.\n        """\n        # Continue trimming until middle remains unchanged.\n'
               "        trimmed_something = True\n        while trimmed_something:")
URLIZE_RUN = ("python3 reproduce_issue.py", 'Expected: Search for <a href="http://google.com/?q=1%3C">google.com/?q=1&lt</a>! '
              'and see.\nActual:   Search for <a href="http://google.com/?q=1%3C">google.com/?q=1&lt</a>lt! and see.\n'
              "FAILURE: Output does not match expected.")


def _urlize_exemplars(ts: TrajSearch, k: int, **advice) -> list[str]:
    """The exemplars shown for the urlize task: every run applicable, no near-copy or near tie left out, the ranking's
    ``where`` feature off (the files' votes alone decide), ``advice`` overriding the rest."""
    config = RuntimeConfig(advice=AdviceConfig(
        novelty=NoveltyConfig(follow_closely=1.0, inspiration=0.0, per_tenant=False),
        rerank=RerankConfig(other_work_margin=0.0, max_cosine=1.0, w_where=0.0), **advice))
    return [e.trajectory_id for e in Runtime(ts, config).exemplars(URLIZE_TASK, ACME, k=k).items]


def test_a_run_that_changed_the_likeliest_file_is_a_candidate_however_its_task_was_worded(hashing_ts):
    """Plumbing (hashing test embedder), after django__django-14539 in the held-out SWE-bench Verified runs: the
    runs worded like the urlize task changed ``core/validators.py``; the one that changed ``utils/html.py`` was
    worded otherwise and is no candidate of the task's or the summaries' nearest rows. The failed runs nearest
    the task read ``utils/html.py`` (where ``urlize`` lives), so it is among the likeliest files, and no candidate
    changed it: the runs that did are looked up, and one of the two places goes to one. Without that lookup
    (``likely_files_looked_up`` 0) both places go to runs that changed ``validators.py``."""
    near = [_changed(f"near-{i}", URLIZE_TASK + tail, "django/core/validators.py")
            for i, tail in enumerate(("", " when escaped", " with punctuation"))]
    html = _changed("html", "Escaped entities lose their trailing characters when links are made", "django/utils/html.py")
    looked = [make_run(f"looked-{i}", task_id=f"looked-{i}", task=URLIZE_TASK + tail, outcome="failure",
                       steps=[("bash", {"command": URLIZE_READ[0]}, URLIZE_READ[1]),
                              ("bash", {"command": URLIZE_RUN[0]}, URLIZE_RUN[1])])
              for i, tail in enumerate((" (tried)", " again"))]
    hashing_ts.add([*near, html, *looked])
    narrow = {"pool_factor": 1, "touched_candidates": 0, "named_file_candidates": 0}  # two tasks' runs, two summaries
    assert sorted(_urlize_exemplars(hashing_ts, 2, **narrow)) == ["html", "near-0"]
    assert all(t.startswith("near-") for t in _urlize_exemplars(hashing_ts, 2, **narrow, likely_files_looked_up=0))


def test_test_files_are_no_place_a_tasks_work_lies(hashing_ts, monkeypatch):
    """Plumbing (hashing test embedder), urlize again: the failed runs nearest the task ran its tests three times
    (each naming ``tests/utils_tests/test_html.py`` beside the assertion's output) for one read of
    ``utils/html.py``. A run worded like the task changed only that test file; one worded otherwise changed
    ``utils/html.py``. A test file votes for nothing (:func:`~trajsearch.runtime.where.is_test_file`), so beside
    the best run the place goes to the one that changed ``utils/html.py``. Counted as a place of work, the test
    file the steps pile onto is the likeliest file, and the run that changed only it crowds ``utils/html.py`` out."""
    from trajsearch.runtime import where

    near = [_changed(f"near-{i}", URLIZE_TASK + tail, "django/core/validators.py")
            for i, tail in enumerate(("", " when escaped", " with punctuation"))]
    html = _changed("html", "Escaped entities lose their trailing characters in links", "django/utils/html.py")
    tester = _changed("tester", URLIZE_TASK + " (tests)", "tests/utils_tests/test_html.py")
    test_run = ("python -m pytest tests/utils_tests/test_html.py -k urlize",
                "tests/utils_tests/test_html.py::TestUtilsHtml::test_urlize FAILED\n" + URLIZE_RUN[1])
    looked = [make_run(f"looked-{i}", task_id=f"looked-{i}", task=URLIZE_TASK + tail, outcome="failure",
                       steps=[("bash", {"command": URLIZE_READ[0]}, URLIZE_READ[1]),
                              *[("bash", {"command": test_run[0]}, test_run[1])] * 3])
              for i, tail in enumerate((" (tried)", " again"))]
    hashing_ts.add([*near, html, tester, *looked])
    assert where.is_test_file("tests/utils_tests/test_html.py") and not where.is_test_file("django/test/utils.py")
    assert _urlize_exemplars(hashing_ts, 2) == ["near-0", "html"]
    monkeypatch.setattr(where, "is_test_file", lambda path: False)  # the rows' files are read afresh in each call
    assert _urlize_exemplars(hashing_ts, 2) == ["tester", "near-0"]



def test_a_run_whose_steps_read_like_the_task_is_preferred_to_a_twin_of_the_first(hashing_ts):
    """Plumbing (hashing test embedder), urlize again (the reproduction step of the real gemini run of
    django__django-14539): runs worded like the task changed ``core/validators.py``; a run worded a little less
    like it changed ``utils/html.py``, and its first steps reproduced what the task reports. That step row is
    the nearest the task (``cover_steps`` 1), so the run scores ``near_step_weight`` more (feature ``steps``)
    and is one of the two shown. Without that weight the two are the best run and a near twin of it, whose steps (an edit, a diff) read nothing like the task. The files' votes barely count here
    (``cover_weight`` 0.01: the steps are still searched) and neither does the code the task names."""
    near = [_changed(f"near-{i}", URLIZE_TASK + tail, "django/core/validators.py")
            for i, tail in enumerate(("", " when escaped", " with punctuation"))]
    diff = "diff --git a/django/utils/html.py b/django/utils/html.py\n@@ -1 +1 @@\n-a\n+b\n"
    reproduced = make_run("reproduced", task_id="reproduced", outcome="success",
                          task="urlize() mishandles html escaped strings followed by punctuation. " + URLIZE_TASK[100:],
                          steps=[("bash", {"command": URLIZE_RUN[0]}, URLIZE_RUN[1]),
                                 ("bash", {"command": "cat reproduce_issue.py"},
                                  "from django.utils.html import urlize\nprint(urlize('Search for google.com/?q=1&lt! and see.'))"),
                                 ("bash", {"command": "ls"}, "reproduce_issue.py"),
                                 ("bash", {"command": "sed -i 's/a/b/' django/utils/html.py"}, ""),
                                 ("bash", {"command": "git diff"}, diff)])
    hashing_ts.add([*near, reproduced])
    config = RuntimeConfig(advice=AdviceConfig(
        novelty=NoveltyConfig(follow_closely=1.0, inspiration=0.0, per_tenant=False), cover_steps=1, cover_weight=0.01,
        rerank=RerankConfig(other_work_margin=0.0, max_cosine=1.0, w_touched=0.0, w_where=0.0)))
    items = Runtime(hashing_ts, config).exemplars(URLIZE_TASK, ACME, k=2).items
    assert sorted(e.trajectory_id for e in items) == ["near-0", "reproduced"]
    assert {e.trajectory_id: e.features["steps"] for e in items} == {"near-0": 0.0, "reproduced": 1.0}
    off = Runtime(hashing_ts, replace(config, advice=replace(config.advice, near_step_weight=0.0)))
    assert [e.trajectory_id for e in off.exemplars(URLIZE_TASK, ACME, k=2).items] in (["near-0", "near-1"], ["near-0", "near-2"])


#: real gemini-3-pro mini-swe-agent runs of SWE-bench Verified, trimmed (tests/fixtures/mini-swe-agent/.real/SOURCE.md)
NAMESAKES = FIXTURES / "mini-swe-agent" / ".real" / "gemini-3-pro-namesakes"


def test_a_run_below_the_threshold_is_not_grounded_by_its_own_vote_for_its_files(model_ts):
    """Probe E2 (E2-E): every candidate votes for the files it changed, so a distant run's own files were among
    the likeliest and kept it below the novelty threshold as the first exemplar (django-16938, serializers, for a
    seaborn legend issue). Here sphinx-9698 (``domains/python.py``) beside scikit-learn-10297 (``ridge.py``) for
    scikit-learn-14087's issue, with the default ``likely_files_looked_up``: counted without its own vote, the
    likeliest file is ridge.py, which the sphinx run did not change. ``cover_steps`` 0: in a tenant of two runs
    every step row is among the nearest (feature ``steps``)."""
    task = only(NAMESAKES / "scikit-learn__scikit-learn-14087.traj.json").task
    # the premise: each run changed its file (a trimmed record that does not name them keeps them: review RR11)
    assert "sphinx/domains/python.py" in touched(only(NAMESAKES / "sphinx-doc__sphinx-9698.traj.json")).changed
    assert "sklearn/linear_model/ridge.py" in touched(only(NAMESAKES / "scikit-learn__scikit-learn-10297.traj.json")).changed
    model_ts.add(runs(NAMESAKES / "sphinx-doc__sphinx-9698.traj.json", tenant="acme")
                 + runs(NAMESAKES / "scikit-learn__scikit-learn-10297.traj.json", tenant="acme"))
    found = Runtime(model_ts, RuntimeConfig(advice=AdviceConfig(cover_steps=0))).exemplars(task, ACME)
    assert found.strategy is Strategy.use_as_inspiration  # the scikit-learn run is near enough
    shown = [e.trajectory_id.split(".")[1] for e in found.items]
    assert shown == ["scikit-learn__scikit-learn-10297"], shown


def test_the_calls_place_stays_for_a_call_that_is_work_in_a_code_tenant(hashing_ts):
    """Review 3 (D2): a first fix of the verdict case gave the last place to the cover in every tenant whose runs edit
    files (judged by each chosen run's own vote for its files), so a coding agent's run making the call the task
    asks for (an MCP ``create_pull_request``) lost its place. The verdict is left out of the calls instead."""
    def run(tid: str, task: str, path: str, *calls: str) -> Trajectory:
        diff = f"diff --git a/{path} b/{path}\n--- a/{path}\n+++ b/{path}\n@@ -1 +1 @@\n-a\n+b\n"
        steps = [("Edit", {"file_path": path, "old_string": "a", "new_string": "b"}, "ok"),
                 ("Bash", {"command": "git diff"}, diff)]
        return make_run(tid, task_id=tid, task=task,
                        steps=steps + [(c, {"repo": "acme/web", "title": "fix"}, "created #42") for c in calls])

    task = "Fix the login redirect loop and create a pull request for it"
    near = [run(f"near-{i}", f"Fix the login redirect loop{tail}", f"web/auth/redirect{i}.py")
            for i, tail in enumerate((" on logout", " after the session expires", " in Safari"))]
    hashing_ts.add([*near, run("does-it", "Ship the checkout banner change upstream", "web/checkout/banner.py",
                               "create_pull_request")])
    config = RuntimeConfig(advice=AdviceConfig(novelty=NoveltyConfig(follow_closely=1.0, inspiration=0.0,
                                                                     per_tenant=False)))
    chosen = [e.trajectory_id for e in Runtime(hashing_ts, config).exemplars(task, ACME, k=3).items]
    assert chosen[-1] == "does-it", chosen

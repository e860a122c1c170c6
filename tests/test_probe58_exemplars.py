"""Round 26 (R11I): the file a task's traceback failed in says where its work lies, more than the frames above it.

The texts are the openings of mini-swe-agent 1.15 gemini-3-pro runs of SWE-bench Verified (``gruckion/mini-swe-agent``
``swebench_results/20251118_gemini-3-pro-74pct/``), cut: the query is ``django__django-13121``'s task ("durations-only
expressions doesn't work on SQLite and MySQL"), whose traceback runs from the user's test through ``models/query.py``
and ``sql/compiler.py`` to ``backends/base/operations.py``, where its patch went. ``operations`` is its one relevant
run there, ``-12741`` (``DatabaseOperations.execute_sql_flush()``: it changed ``backends/base/operations.py``); the
others are the four that came first for it in that tenant, each changing the files its submission changed.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from trajsearch.runtime import AdviceConfig, Runtime, RuntimeConfig, RuntimeContext

from conftest import BASE_TIME, make_run

ACME = RuntimeContext(tenant="acme", now=BASE_TIME)

QUERY = ("durations-only expressions doesn't work on SQLite and MySQL\nDescription\n\t\nclass Experiment(models.Model):\n"
         "\testimated_time = models.DurationField()\nlist(Experiment.objects.annotate(duration=F('estimated_time') + "
         "datime.timedelta(1)))\nTraceback (most recent call last):\n File \"/home/sergey/dev/django/tests/expressions/"
         "tests.py\", line 1218, in test_duration_expressions\n\tlist(Experiment.objects.annotate(duration=F('estimated_time') "
         "+ delta))\n File \"/home/sergey/dev/django/django/db/models/query.py\", line 269, in __iter__\n\tself._fetch_all()\n"
         " File \"/home/sergey/dev/django/django/db/models/query.py\", line 1172, in _fetch_all\n\tself._result_cache = "
         "list(self._iterable_class(self))\n File \"/home/sergey/dev/django/django/db/models/query.py\", line 63, in "
         "__iter__\n\tfor row in compiler.results_iter(results):\n File \"/home/sergey/dev/django/django/db/models/sql/"
         "compiler.py\", line 998, in apply_converters\n\tvalue = converter(value, expression, connection)\n File "
         "\"/home/sergey/dev/django/django/db/backends/base/operations.py\", line 571, in convert_durationfield_value\n\t"
         "value = str(decimal.Decimal(value) / decimal.Decimal(1000000))\ndecimal.InvalidOperation: [<class "
         "'decimal.ConversionSyntax'>]")
RUNS = {
    "operations": (["django/db/backends/base/operations.py", "django/core/management/commands/flush.py"],
                   "Simplify signature of `DatabaseOperations.execute_sql_flush()`\nDescription\n\t\nThe current signature "
                   "is:\ndef execute_sql_flush(self, using, sql_list):\nThe using argument can be dropped and inferred by "
                   "the calling instance: self.connection.alias.\ndef execute_sql_flush(self, sql_list):"),
    "compiler": (["django/db/models/sql/compiler.py"],
                 "Composed queries cannot change the list of columns with values()/values_list().\nDescription\n\t\n"
                 "Composed queries cannot change the list of columns when values()/values_list() is evaluated multiple "
                 "times, e.g.\n>>> ReservedName.objects.create(name='a', order=2)\n>>> qs1 = ReservedName.objects.all()"),
    "window": (["django/db/models/functions/window.py", "django/db/models/expressions.py"],
               "Lag() with DecimalField crashes on SQLite.\nDescription\n\t\nOn Django 3.0.7 with a SQLite database using "
               "the following model:\nfrom django.db import models\nclass LagTest(models.Model):\n\tmodified = "
               "models.DateField()\n\tdata = models.FloatField()\n\tamount = models.DecimalField(decimal_places=4, "
               "max_digits=7)"),
    "expressions": (["django/db/models/expressions.py"],
                    "make temporal subtraction work without ExpressionWrapper\nDescription\n\t\nclass "
                    "Experiment(models.Model):\n\tstart = models.DateTimeField()\n\tend = models.DateTimeField()\n"
                    "Experiment.objects.annotate(\n\tdelta=F('end') - F('start') + Value(datetime.timedelta(), "
                    "output_field=DurationField())\n)"),
    "query": (["django/db/models/query.py"],
              "Queryset with values()/values_list() crashes when recreated from a pickled query.\nDescription\n\t\nI am "
              "pickling query objects (queryset.query) for later re-evaluation. However, when I tried to rerun a query "
              "that combines values and annotate for a GROUP BY functionality, the result is broken."),
}


def _changed(run_id: str, paths: list[str], task: str):
    """A successful run that changed ``paths`` and nothing else (a ``git diff`` shows them)."""
    diff = "".join(f"diff --git a/{p} b/{p}\n--- a/{p}\n+++ b/{p}\n@@ -1 +1 @@\n-a\n+b\n" for p in paths)
    return make_run(run_id, task_id=run_id, task=task, steps=[
        *[("bash", {"command": f"sed -i 's/a/b/' {p}"}, "") for p in paths], ("bash", {"command": "git diff"}, diff)])


def test_the_file_a_traceback_failed_in_brings_a_run_that_changed_it(model_ts):
    """Real model. Four runs worded nearer the task changed the files its traceback passed through (or none of
    them); the run that changed the file it failed in, ``backends/base/operations.py``, is worded as other work.
    Named alike with the outer frames, that file was one home of three, and the run came fourth (in the whole
    gemini tenant 18th); the innermost frame's own vote makes it the likeliest file, and its run is shown."""
    model_ts.add([_changed(run_id, *run) for run_id, run in RUNS.items()])
    # No step rows vote here (the tenant's were other runs'); the candidates, the named code and the traceback do.
    config = RuntimeConfig(advice=AdviceConfig(cover_steps=0, cover_named_steps=0))
    ids = [e.trajectory_id for e in Runtime(model_ts, config).exemplars(QUERY, ACME, k=3).items]
    assert "operations" in ids, ids


def test_the_failing_frame_is_the_innermost_of_the_project_in_each_traceback():
    """A chained exception is its own traceback, each with its innermost frame; the test that called the code and
    the Python installation's own modules are passed over (the frame before them is the project's); a task with no
    traceback names no such file. The frames are from the gemini-3-pro tasks above (django-15973, cut) and a
    sympy-style chained one."""
    from trajsearch.runtime.where import failing_frames

    chained = (
        'Traceback (most recent call last):\n  File "/testbed/sympy/core/sympify.py", line 385, in sympify\n'
        '    expr = parse_expr(a)\n  File "/usr/lib/python3.9/ast.py", line 50, in parse\n'
        'SyntaxError: invalid syntax\n\nDuring handling of the above exception, another exception occurred:\n\n'
        'Traceback (most recent call last):\n  File "/home/u/tests/test_bug.py", line 3, in test_it\n'
        '    simplify(x)\n  File "/testbed/sympy/simplify/simplify.py", line 600, in simplify\n'
        '    return _eval(expr)\n  File "/home/u/tests/test_bug.py", line 9, in helper\nTypeError: bad')
    assert failing_frames(chained) == {"core/sympify.py", "simplify/simplify.py"}
    site_packages = (
        'Traceback (most recent call last):\n File "/home/e/.local/share/virtualenvs/b/lib/python3.9/site-packages/'
        'django/db/migrations/operations/models.py", line 92, in database_forwards\n File "/home/e/.local/share/'
        'virtualenvs/b/lib/python3.9/site-packages/django/db/backends/base/schema.py", line 453, in create_model\n'
        "AttributeError: 'str' object has no attribute '_meta'")
    assert failing_frames(site_packages) == {"base/schema.py"}
    assert failing_frames(RUNS["window"][1]) == frozenset()


def test_a_long_run_of_blank_lines_is_read_at_once():
    """Review RR11I, 1: a frame's ``^\\s*`` under ``re.M`` ran from every line start over all the blank lines after
    it (``"\\r\\n" * 10_000``: 2.3 s; ``" \\n" * 20_000``: 11.8 s), once for every candidate an exemplars call weighs.
    At 100,000 such lines that was minutes; each line is now read alone. Run in a child process under a hang limit
    (no timing asserted: the limit only catches the quadratic scan)."""
    script = ("from trajsearch.runtime.where import failing_frames\n"
              "text = 'Traceback (most recent call last):\\n  File \"/t/pkg/a.py\", line 1, in f\\n'\n"
              "assert failing_frames(text + ' \\n' * 100_000 + '\\r\\n' * 100_000 + '|' * 100_000) == {'pkg/a.py'}\n")
    subprocess.run([sys.executable, "-c", script], check=True, timeout=600, cwd=Path(__file__).parents[1])


def test_windows_paths_are_read_as_paths():
    """Review RR11I, 2: a Windows frame was one whole-path key, so a test file and the Python installation were
    not passed over. Cut from the gemini-3-pro tasks django-15503 (the failing frame is the reporter's test),
    sympy-13480 (``hyperbolic.py``, where its patch went) and sympy-24213 (``site-packages``, a package's file)."""
    from trajsearch.runtime.where import failing_frames

    test_only = ('Traceback (most recent call last):\n File "H:\\Files\\Projects\\Electaco\\Webservice\\elecserve\\'
                 'markers\\tests.py", line 16, in test_json_field_has_key\t \n\tself.assertEqual(c2, 1)\n'
                 "AssertionError: 0 != 1 : Should have found 1 entry with key '1111'")
    assert failing_frames(test_only) == frozenset()
    indented = ('    ...\r\n    File "C:\\Users\\E\\Desktop\\sympy-master\\sympy\\functions\\elementary\\hyperbolic.py", '
                "line 590, in eval\r\n        if cotm is S.ComplexInfinity:\r\n    NameError: name 'cotm' is not defined")
    assert failing_frames(indented) == {"elementary/hyperbolic.py"}
    installed = ('Traceback (most recent call last):\n  File "C:\\Python\\Python310\\lib\\site-packages\\sympy\\physics\\'
                 'units\\unitsystem.py", line 179, in _collect_factor_and_dimension\n'
                 '  File "C:\\Python\\Python310\\lib\\json\\decoder.py", line 337, in decode\nValueError: x')
    assert failing_frames(installed) == {"units/unitsystem.py"}


def test_the_python_installation_is_passed_over_wherever_it_lies():
    """Review RR11I, 4: Fedora's ``/usr/lib64/python3.9/``, PyPy's ``lib-python/3/`` and ``/usr/lib/pypy3.9/``, a
    Windows install's ``Lib`` (a conda environment's too) are the installation's, as ``/usr/lib/python3.9/`` is."""
    from trajsearch.runtime.where import failing_frames

    for stdlib in ("/usr/lib64/python3.9/json/decoder.py", "/opt/pypy3/lib-python/3/json/decoder.py",
                   "/usr/lib/pypy3.9/json/decoder.py", "C:\\Users\\me\\AppData\\Local\\Programs\\Python\\Python39\\Lib\\"
                   "json\\decoder.py", "D:\\anaconda38\\envs\\default\\lib\\json\\decoder.py"):
        text = ('Traceback (most recent call last):\n  File "/testbed/pkg/mod.py", line 3, in f\n'
                f'  File "{stdlib}", line 337, in decode\nValueError: x')
        assert failing_frames(text) == {"pkg/mod.py"}, stdlib


def test_frames_of_pytest_ipython_exception_groups_and_quotes_are_read():
    """Review RR11I, 3: the frames the query-mode guess reads (``fusion``) are the ones the where vote reads, in
    each form: pytest's (gemini-3-pro task pytest-7205, cut), IPython's before 8 (django-13449, cut) and from 8 on
    (matplotlib-24149, cut), an exception group's behind ``| `` (Python 3.11.7's own output of a group raised in
    ``pkg/mod.py`` over a ``ValueError`` raised in ``pkg/core.py``), a traceback quoted in Markdown (``> ``)."""
    from trajsearch.runtime.where import failing_frames

    pytest_report = ("src/_pytest/runner.py:244: \r\n_ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ \r\nsrc/_pytest/runner.py:217: in "
                     "<lambda>\r\n    lambda: ihook(item=item, **kwds), when=when, reraise=reraise\r\n"
                     "src/_pytest/setuponly.py:34: in pytest_fixture_setup\r\n    _show_fixture_action(fixturedef, "
                     "\"SETUP\")\r\nE   BytesWarning: str() on a bytes instance\r\n")
    assert failing_frames(pytest_report) == {"_pytest/setuponly.py"}
    ipython7 = ("OperationalError\t\t\t\t\t\t Traceback (most recent call last)\n<ipython-input-12-996617e96a38> in "
                "<module>\n----> 1 print(q)\nC:\\ProgramData\\Anaconda3\\envs\\djbase\\lib\\site-packages\\django\\db\\"
                "models\\query.py in __repr__(self)\n\t250\nC:\\ProgramData\\Anaconda3\\envs\\djbase\\lib\\site-packages"
                "\\django\\db\\backends\\sqlite3\\base.py in execute(self, query, params)\n--> 396\t\t return "
                'Database.Cursor.execute(self, query, params)\nOperationalError: near "OVER": syntax error')
    assert failing_frames(ipython7) == {"sqlite3/base.py"}
    ipython8 = ("Traceback (most recent call last)\nCell In [1], line 4\n----> 4 ax.bar([np.nan], [np.nan])[0].get_x()\n"
                "\nFile ~/miniconda/envs/py310/lib/python3.10/site-packages/matplotlib/axes/_axes.py:2373, in "
                "Axes.bar(self, x, height, width, bottom, align, **kwargs)\n-> 2373 width = self._convert_dx(width, x0)\n"
                "\nFile ~/miniconda/envs/py310/lib/python3.10/site-packages/matplotlib/cbook/__init__.py:1749, in "
                "_safe_first_finite(obj, skip_nonfinite)\n-> 1749 return next(val for val in obj if safe_isfinite(val))\n"
                "\nStopIteration: ")
    assert failing_frames(ipython8) == {"cbook/__init__.py"}
    group = (Path(__file__).parent / "fixtures/where/exception_group.txt").read_text()
    assert failing_frames(group) == {"pkg/mod.py", "pkg/core.py"}
    quoted = ("> Traceback (most recent call last):\n>   File \"/testbed/pkg/a.py\", line 1, in f\n>     g()\n"
              ">   File \"/testbed/pkg/b.py\", line 1, in g\n> ValueError")
    assert failing_frames(quoted) == {"pkg/b.py"}

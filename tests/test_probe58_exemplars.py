"""Round 26 (R11I): the file a task's traceback failed in says where its work lies, more than the frames above it.

The texts are the openings of mini-swe-agent 1.15 gemini-3-pro runs of SWE-bench Verified (``gruckion/mini-swe-agent``
``swebench_results/20251118_gemini-3-pro-74pct/``), cut: the query is ``django__django-13121``'s task ("durations-only
expressions doesn't work on SQLite and MySQL"), whose traceback runs from the user's test through ``models/query.py``
and ``sql/compiler.py`` to ``backends/base/operations.py``, where its patch went. ``operations`` is its one relevant
run there, ``-12741`` (``DatabaseOperations.execute_sql_flush()``: it changed ``backends/base/operations.py``); the
others are the four that came first for it in that tenant, each changing the files its submission changed.
"""

from __future__ import annotations

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

"""Round 22 (R11D): a task naming a class's dunder method (``ResolverMatch.__repr__``) finds where the class lives.

The texts are the openings of SWE-agent 0.x runs of SWE-bench Lite (gpt4-0125), ``nus-apr/auto-code-rover``
@3536ac29 ``results/swe-agent-results/cost_2_2/``: the query is ``django__django-14155``'s task; ``resolvers`` is its
one relevant run, ``django__django-11620`` (it changed ``django/urls/resolvers.py``; its second step, ``open
django/urls/resolvers.py``, showed the file's first lines, ``class ResolverMatch:`` among them: cut here to lines
1-3 and 30-33); the others are the runs that came first for it, worded nearer: ``-15814`` and ``-13590`` (they
changed ``django/db/models/sql/query.py``), ``-13658`` (``django/core/management/__init__.py``), ``-14787``
(``django/utils/decorators.py``, worded nearest: ``partial``). Each run here changed its file and nothing else.
"""

from __future__ import annotations

from trajsearch.runtime import Runtime, RuntimeContext

from conftest import BASE_TIME, make_run
from test_probe54_exemplars import QUERY, RUNS

ACME = RuntimeContext(tenant="acme", now=BASE_TIME)

#: What SWE-agent's ``open django/urls/resolvers.py`` showed run ``django__django-11620``, cut.
RESOLVERS_VIEW = ('[File: /django__django/django/urls/resolvers.py (673 lines total)]\n1:"""\n2:This module converts '
                  'requested URLs to callback view functions.\n3:\n30:\n31:class ResolverMatch:\n32:    def __init__(self, '
                  'func, args, kwargs, url_name=None, app_names=None, namespaces=None, route=None):\n33:        '
                  'self.func = func\n')
OTHERS = {
    "query-15814": ("django/db/models/sql/query.py",
                    "QuerySet.only() after select_related() crash on proxy models.\nDescription\n\t\nWhen I optimize a "
                    "query using select_related() and only() methods from the proxy model I encounter an error:\n"
                    "Windows 10; Python 3.10; Django 4.0.5"),
    "query-13590": ("django/db/models/sql/query.py",
                    "Upgrading 2.2>3.0 causes named tuples used as arguments to __range to error.\nDescription\n\t\n"
                    "I noticed this while upgrading a project from 2.2 to 3.0.\nThis project passes named 2-tuples as "
                    "arguments to range queryset filters. This works fine on 2.2. On 3.0 it causes the following error: "
                    "TypeError: __new__() missing 1 required positional argument: 'far'.\nThis happens because "
                    "django.db.models.sql.query.Query.resolve_lookup_value goes into the tuple elements to resolve "
                    "lookups and then attempts to reconstitute the tuple with the resolved elements."),
    "management": RUNS["management"],
    "decorators": RUNS["decorators"],
}


def _changed(run_id: str, path: str, task: str, read: tuple[str, str] | None = None):
    """A successful run that changed ``path`` and nothing else (a ``git diff`` shows it), having first read
    ``read`` (a command and what it showed), if given."""
    diff = f"diff --git a/{path} b/{path}\n--- a/{path}\n+++ b/{path}\n@@ -1 +1 @@\n-a\n+b\n"
    steps = [("bash", {"command": read[0]}, read[1])] if read else []
    return make_run(run_id, task_id=run_id, task=task, steps=[
        *steps, ("bash", {"command": f"sed -i 's/a/b/' {path}"}, ""), ("bash", {"command": "git diff"}, diff)])


def test_a_dunder_method_the_task_names_is_found_where_its_class_lives(model_ts):
    """Real model. The task names ``ResolverMatch.__repr__`` and ``ResolverMatch.__init__``; a dunder is never recorded
    as defined (it says nothing of a file), so the task had no home for its work and the one run whose reads showed
    ``class ResolverMatch`` in the file it changed had ``where`` 0 (on the whole ``cost_2_2`` tenant it came 12th).
    The class a method belongs to now says where the method lives: ``urls/resolvers.py`` is the task's home and the
    run that changed it has ``where`` in full."""
    resolvers_path, resolvers_task = RUNS["resolvers"]
    model_ts.add([_changed("resolvers", resolvers_path, resolvers_task, ("open django/urls/resolvers.py", RESOLVERS_VIEW)),
                  *(_changed(run_id, path, task) for run_id, (path, task) in OTHERS.items())])
    shown = Runtime(model_ts).exemplars(QUERY, ACME, k=3).items
    ids = [e.trajectory_id for e in shown]
    assert "resolvers" in ids, ids
    resolvers = next(e for e in shown if e.trajectory_id == "resolvers")
    assert resolvers.features["where"] == 1.0, resolvers.features

"""Round 22 (R11D): a task naming a class's dunder method (``ResolverMatch.__repr__``) finds where the class lives.

The texts are the openings of SWE-agent 0.x runs of SWE-bench Lite (gpt4-0125), ``nus-apr/auto-code-rover``
@3536ac29 ``results/swe-agent-results/cost_2_2/``: the query is ``django__django-14155``'s task; ``resolvers`` is its
one relevant run, ``django__django-11620`` (it changed ``django/urls/resolvers.py``; its second step, ``open
django/urls/resolvers.py``, showed the file's first lines, ``class ResolverMatch:`` among them: cut here to lines
1-3 and 30-33); the others are the runs that came first for it, worded nearer: ``-15814`` and ``-13590`` (they
changed ``django/db/models/sql/query.py``), ``-13658`` (``django/core/management/__init__.py``), ``-14787``
(``django/utils/decorators.py``, worded nearest: ``partial``), ``-15400`` (``django/utils/functional.py``). Each run
here changed its file and nothing else.

The homes checks are the review's of that change (RR11D): a class named in the task is matched as written, and
only in a module of the project (no test, no script at the top of the checkout).
"""

from __future__ import annotations

from trajsearch.runtime import AdviceConfig, Runtime, RuntimeConfig, RuntimeContext
from trajsearch.runtime.rerank import task_homes

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
    "functional-15400": ("django/utils/functional.py",
                         "SimpleLazyObject doesn't implement __radd__\nDescription\n\t\nTechnically, there's a "
                         "whole bunch of magic methods it doesn't implement, compared to a complete proxy "
                         "implementation, like that of wrapt.ObjectProxy, but __radd__ being missing is the one "
                         "that's biting me at the moment."),
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
                  *(_changed(run_id, *other) for run_id, other in OTHERS.items())])
    # The one step row here is the relevant run's, so the cover would choose it whatever its where; on the tenant
    # the many step rows nearest the task were other runs' (its file 4th in the where-guess, at 0.10). The
    # candidates' vote and the task's homes alone say where the work lies.
    config = RuntimeConfig(advice=AdviceConfig(cover_steps=0, cover_named_steps=0))
    shown = Runtime(model_ts, config).exemplars(QUERY, ACME, k=3).items
    ids = [e.trajectory_id for e in shown]
    assert ids[0] == "resolvers", ids  # 5th without its where: similarity 0.39, against 0.40-0.48
    assert shown[0].features["where"] == 1.0, shown[0].features


#: ``django__django-13964``'s run in CodeR's SWE-bench Lite submission (``nus-apr/auto-code-rover`` @3536ac29
#: ``results/swe-agent-results/coder``), its ``Touched:`` line cut: it changed ``models/base.py`` and read its
#: reproduction script, which defines the bug report's ``Product``.
PRODUCT_READER = ("Touched: changed django/db/models/base.py (modules django.db.models.base); definitions read "
                  "/django__django/reproduce.py: test_reproduce Product Order, django/db/models/base.py: _do_update "
                  "_do_insert _prepare_related_fields_for_save save.")
#: The opening of ``django__django-14017``'s task (the same submission): its ``Product`` is the user's model.
PRODUCT_TASK = ("Q(...) & Exists(...) raises a TypeError\nDescription\n\t\nExists(...) & Q(...) works, but Q(...) "
                "& Exists(...) raise a TypeError\nHere's a minimal example:\nIn [3]: Exists(Product.objects.all()) "
                "& Q()")


def test_a_class_the_task_names_is_found_only_as_a_class_in_a_module_of_the_project():
    """Review RR11D: the class a method belongs to was matched lowercased against every definition, so pytest's
    ``def path`` (in ``nodes.py``) was the home of ``Path.exists()`` and a ``def readme`` that of ``README.md``, and
    a bug report's model (``Product.objects``) had its home in the reproduction script a run read. A class is
    matched as written, in the project's modules."""
    nodes = "Touched: changed src/_pytest/nodes.py; definitions read src/_pytest/nodes.py: Node path from_parent."
    readme = "Touched: changed src/foo/readme.py; definitions read src/foo/readme.py: readme render_readme."
    assert task_homes("Calling Path.exists() on a missing file raises instead of returning False", [nodes]) == {}
    assert task_homes("The README.md example fails with a KeyError", [readme]) == {}
    assert task_homes(PRODUCT_TASK, [PRODUCT_READER]) == {}
    assert task_homes("Node.exists() is wrong", [nodes]) == {"_pytest/nodes.py": 1.0}  # the class, as written

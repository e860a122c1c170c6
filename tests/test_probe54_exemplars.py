"""Round 21 (R11C): a package's ``__init__.py`` is no match for a method ``__init__`` the task names.

The task texts are the openings of SWE-agent 0.x runs of SWE-bench Lite (gpt4-0125), ``nus-apr/auto-code-rover``
@3536ac29 ``results/swe-agent-results/cost_2_2/``: ``django__django-14155`` (the query: ``ResolverMatch.__repr__``,
"unwrap functools.partial objects in ResolverMatch.__init__()"), its one relevant run ``django__django-11620``
(it changed ``django/urls/resolvers.py``, where ``ResolverMatch`` lives), and three runs that changed a package's
``__init__.py`` for other work (``-13658`` ``core/management/__init__.py``, ``-11999`` ``db/models/fields/__init__.py``,
``-16255`` ``contrib/sitemaps/__init__.py``), and ``-14787`` (``utils/decorators.py``, worded nearest: ``partial``).
Each run here changed its file and nothing else, as its submission did.
"""

from __future__ import annotations

from trajsearch.runtime import Runtime, RuntimeContext

from conftest import BASE_TIME, make_run

ACME = RuntimeContext(tenant="acme", now=BASE_TIME)

QUERY = ("ResolverMatch.__repr__() doesn't handle functools.partial() nicely.\nDescription\n\t\nWhen a partial function "
         "is passed as the view, the __repr__ shows the func argument as functools.partial which isn't very helpful, "
         "especially as it doesn't reveal the underlying function or arguments provided.\nBecause a partial function also "
         "has arguments provided up front, we need to handle those specially so that they are accessible in __repr__.\n"
         "ISTM that we can simply unwrap functools.partial objects in ResolverMatch.__init__().")
RUNS = {
    "resolvers": ("django/urls/resolvers.py",
                  "When DEBUG is True, raising Http404 in a path converter's to_python method does not result in a "
                  "technical response\nDescription\n\t\nThis is the response I get (plain text): \nA server error occurred. "
                  "Please contact the administrator.\nI understand a ValueError should be raised which tells the URL "
                  "resolver \"this path does not match, try next one\" but Http404 is what came to my mind intuitively "
                  "and the error message was not very helpful."),
    "management": ("django/core/management/__init__.py",
                   "ManagementUtility instantiates CommandParser without passing already-computed prog argument\n"
                   "Description\n\t\nManagementUtility goes to the trouble to parse the program name from the argv it's "
                   "passed rather than from sys.argv: \n\tdef __init__(self, argv=None):\n\t\tself.argv = argv or "
                   "sys.argv[:]\n\t\tself.prog_name = os.path.basename(self.argv[0])"),
    "fields": ("django/db/models/fields/__init__.py",
               "Cannot override get_FOO_display() in Django 2.2+.\nDescription\n\t\nI cannot override the "
               "get_FIELD_display function on models since version 2.2. It works in version 2.1."),
    "sitemaps": ("django/contrib/sitemaps/__init__.py",
                 "Sitemaps without items raise ValueError on callable lastmod.\nDescription\n\t\nWhen sitemap contains "
                 "not items, but supports returning lastmod for an item, it fails with a ValueError"),
    "decorators": ("django/utils/decorators.py",
                   "method_decorator() should preserve wrapper assignments\nDescription\n\t\nthe function that is passed "
                   "to the decorator is a partial object and does not have any of the attributes expected from a "
                   "function i.e. __name__, __module__ etc..."),
}


def _changed(run_id: str, path: str, task: str):
    """A successful run that changed ``path`` and nothing else (a ``git diff`` shows it)."""
    diff = f"diff --git a/{path} b/{path}\n--- a/{path}\n+++ b/{path}\n@@ -1 +1 @@\n-a\n+b\n"
    return make_run(run_id, task_id=run_id, task=task, steps=[
        ("bash", {"command": f"sed -i 's/a/b/' {path}"}, ""), ("bash", {"command": "git diff"}, diff)])


def test_a_package_init_file_is_no_method_init_the_task_names(model_ts):
    """Real model. The task names ``ResolverMatch.__init__``; every run that changed some package's ``__init__.py``
    was read as having changed the code named ``__init__`` (``touched`` and ``named`` in full: scores 0.90 / 0.80 / 0.73
    against 0.64 for the run that changed ``urls/resolvers.py``), and ``named`` kept the sitemaps run, below the
    novelty threshold (cosine 0.28), among the exemplars. A package's ``__init__.py`` is now named by its package,
    as its module is."""
    model_ts.add([_changed(run_id, path, task) for run_id, (path, task) in RUNS.items()])
    shown = Runtime(model_ts).exemplars(QUERY, ACME, k=len(RUNS)).items
    for e in shown:
        if RUNS[e.trajectory_id][0].endswith("/__init__.py"):  # the method's name matched no package's file
            assert e.features["named"] == 0.0 and e.features["touched"] == 0.0, (e.trajectory_id, e.features)
    ids = [e.trajectory_id for e in shown]
    assert ids[0] == "resolvers", ids
    # the sitemaps run is further from the task than the novelty threshold: only its false ``named`` had kept it
    assert "sitemaps" not in ids, ids

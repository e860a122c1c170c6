"""Probe 52 (R11g): the likeliest files a task's work lies in are files some successful run changed.

The runs' texts are excerpts of SWE-agent 0.x runs of SWE-bench Lite (gpt4-0125), ``nus-apr/auto-code-rover``
@3536ac29 ``results/swe-agent-results/cost_2_2/``: the task of ``sympy__sympy-20639`` (pretty printing of
``pi**(1/E)``), of ``sympy__sympy-16281`` (its one relevant run: it changed ``sympy/printing/pretty/pretty.py``) and
of ``sympy__sympy-14774`` / ``-21171`` (both changed ``sympy/printing/latex.py``), and the output SWE-agent's
``create reproduce_bug.py`` shows (``[File: /sympy__sympy/reproduce_bug.py (1 lines total)]``).
"""

from __future__ import annotations

from trajsearch.runtime import AdviceConfig, NoveltyConfig, RerankConfig, Runtime, RuntimeConfig, RuntimeContext

from conftest import BASE_TIME, make_run

ACME = RuntimeContext(tenant="acme", now=BASE_TIME)

PI_TASK = ("inaccurate rendering of pi**(1/E)\nThis claims to be version 1.5.dev; I just merged from the project master, "
           "so I hope this is current.  I didn't notice this bug among others in printing.pretty.\n\n```\n"
           "In [52]: pi**(1/E)\nOut[52]: \n-1___\n╲╱ π \n\n```\nLaTeX and str not fooled:\n```\n"
           "In [53]: print(latex(pi**(1/E)))\n\\pi^{e^{-1}}\n\nIn [54]: str(pi**(1/E))\nOut[54]: 'pi**exp(-1)'\n```")
LATEX_TASKS = (
    "Latex printer does not support full inverse trig function names for acsc and asec\nFor example\n"
    "`latex(asin(x), inv_trig_style=\"full\")` works as expected returning `'\\\\arcsin{\\\\left (x \\\\right )}'`",
    "_print_SingularityFunction() got an unexpected keyword argument 'exp'\nOn a Jupyter Notebook cell, type the "
    "following:\n\n```python\nfrom sympy import *\nfrom sympy.physics.continuum_mechanics import Beam\n```")
PRODUCT_TASK = ("Product pretty print could be improved\nThis is what the pretty printing for `Product` looks like:\n\n"
                "```\n>>> pprint(Product(1, (n, 1, oo)))\n  ∞\n┬───┬\n│   │ 1\n│   │\nn = 1\n```")


def _changed(run_id: str, task: str, path: str):
    """A successful run that changed ``path`` and did nothing else (a ``git diff`` shows it)."""
    diff = f"diff --git a/{path} b/{path}\n--- a/{path}\n+++ b/{path}\n@@ -1 +1 @@\n-a\n+b\n"
    return make_run(run_id, task_id=run_id, task=task, steps=[
        ("bash", {"command": f"sed -i 's/a/b/' {path}"}, ""), ("bash", {"command": "git diff"}, diff)])


def _failed(run_id: str, *, read: bool):
    """A failed run of the task: it made its reproduction script (SWE-agent's output naming it by its absolute path)
    and ran it into ``sympy/core/power.py``; if ``read``, it then read the pretty printer."""
    read_step = [("bash", {"command": "cat sympy/printing/pretty/pretty.py"}, "    def _print_Pow(self, power):")]
    return make_run(run_id, task_id=run_id, task=PI_TASK + f" ({run_id})", outcome="failure", steps=[
        ("create", {"filename": "reproduce_bug.py"}, "[File: /sympy__sympy/reproduce_bug.py (1 lines total)]\n1:"),
        ("bash", {"command": "python reproduce_bug.py"},
         'inaccurate rendering of pi**(1/E)\nTraceback (most recent call last):\n  File "/sympy__sympy/reproduce_bug.py", '
         'line 3, in <module>\n    pprint(pi**(1/E))\n  File "/sympy__sympy/sympy/core/power.py", line 12, in __new__'),
        *(read_step if read else [])])


def _shown(ts, **advice) -> list[str]:
    config = RuntimeConfig(advice=AdviceConfig(
        novelty=NoveltyConfig(follow_closely=1.0, inspiration=0.0, per_tenant=False), pool_factor=1,
        touched_candidates=0, named_file_candidates=0, cover_weight=3.0,
        rerank=RerankConfig(other_work_margin=0.0, max_cosine=1.0, w_where=0.0), **advice))
    return [e.trajectory_id for e in Runtime(ts, config).exemplars(PI_TASK, ACME, k=2).items]


def test_a_likely_file_no_successful_run_changed_gives_its_lookup_to_the_next(hashing_ts):
    """Plumbing (hashing test embedder), after sympy-20639 of ``cost_2_2``: the failed runs nearest the task name
    their scratch ``/sympy__sympy/reproduce_bug.py`` and a traceback's ``core/power.py`` before the pretty printer
    they read, so those two were among the three likeliest files, beside the candidates' ``latex.py``. No successful
    run changed either: their lookups found nothing, and the run that changed ``pretty/pretty.py`` (worded
    otherwise, no candidate) was never looked up. Now they are dropped from the likeliest and the next file's
    runs are looked up in their place; the run that changed it takes the second place."""
    near = [_changed(f"near-{i}", PI_TASK + tail, "sympy/printing/latex.py")  # the candidates: worded like the task
            for i, tail in enumerate(("", " (latex)", " (str)"))]
    hashing_ts.add([*near, *[_changed(f"latex-{i}", text, "sympy/printing/latex.py") for i, text in enumerate(LATEX_TASKS)],
                    _changed("product", PRODUCT_TASK, "sympy/printing/pretty/pretty.py"),
                    *[_failed(f"looked-{i}", read=i == 0) for i in range(3)]])
    shown = _shown(hashing_ts)
    assert "product" in shown, shown
    # the premise: with lookups only as far as the third likeliest file, the run is not found
    assert "product" not in _shown(hashing_ts, likely_files_checked=2)

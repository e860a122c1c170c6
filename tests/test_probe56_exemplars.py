"""Round 23 (R11E): a dunder method the task names (``__mul__``) is no strong evidence that a run changing some
``__mul__`` did the task's work.

The texts are the openings of SWE-agent 0.x runs of SWE-bench Lite (gpt4-0125), ``nus-apr/auto-code-rover``
@3536ac29 ``results/swe-agent-results/cost_2_3/`` (held out while ``RerankConfig.w_touched`` was chosen): the query
is ``sympy__sympy-13773``'s task ("@ (__matmul__) should fail if one argument is not a matrix ... just copies
`__mul__`"); ``common`` is its one relevant run, ``sympy__sympy-13647`` (``Matrix.col_insert()``: it changed
``sympy/matrices/common.py``); ``prefixes`` is ``-24909`` ("Bug with milli prefix"), whose patch changed
``Prefix.__mul__`` in ``sympy/physics/units/prefixes.py`` (its diff's hunk header, kept as submitted); ``blockmatrix``
(``-19007``) and ``matrices`` (``-12454``) are the matrix runs that came first for it. Each run here changed its file
and nothing else, as its submission did (its scratch script aside).
"""

from __future__ import annotations

from trajsearch.runtime import AdviceConfig, Runtime, RuntimeConfig, RuntimeContext

from conftest import BASE_TIME, make_run

ACME = RuntimeContext(tenant="acme", now=BASE_TIME)

QUERY = ("@ (__matmul__) should fail if one argument is not a matrix\n```\n>>> A = Matrix([[1, 2], [3, 4]])\n>>> B = "
         "Matrix([[2, 3], [1, 2]])\n>>> A@B\nMatrix([\n[ 4,  7],\n[10, 17]])\n>>> 2@B\nMatrix([\n[4, 6],\n[2, 4]])\n```\n\n"
         "Right now `@` (`__matmul__`) just copies `__mul__`, but it should actually only work if the multiplication is "
         "actually a matrix multiplication. \n\nThis is also how NumPy works")
RUNS = {
    "common": ("sympy/matrices/common.py", "",
               "Matrix.col_insert() no longer seems to work correctly.\nExample:\n\n```\nIn [28]: import sympy as sm\n\n"
               "In [29]: M = sm.eye(6)\n\nIn [31]: V = 2 * sm.ones(6, 2)\n\nIn [33]: M.col_insert(3, V)\n```"),
    "prefixes": ("sympy/physics/units/prefixes.py", " def __mul__(self, other):",
                 "Bug with milli prefix\nWhat happened:\n```\nIn [1]: from sympy.physics.units import milli, W\nIn [2]: "
                 "milli*W == 1\nOut[2]: True\nIn [3]: W*milli\nOut[3]: watt*Prefix(milli, m, -3, 10)\n```\nWhat I expected "
                 "to happen: milli*W should evaluate to milli watts / mW\n\n`milli*W` or more generally `milli` times some "
                 "unit evaluates to the number 1."),
    "blockmatrix": ("sympy/matrices/expressions/blockmatrix.py", "",
                    "Wrong matrix element fetched from BlockMatrix\nGiven this code:\n```\nfrom sympy import *\nn, i = "
                    "symbols('n, i', integer=True)\nA = MatrixSymbol('A', 1, 1)\nB = MatrixSymbol('B', n, 1)\nC = "
                    "BlockMatrix([[A], [B]])\n```\n`C[i, 0]` should not be simplified as that element may come from "
                    "either `A` or `B`."),
    "matrices": ("sympy/matrices/matrices.py", "",
                 "is_upper() raises IndexError for tall matrices\nThe function Matrix.is_upper raises an IndexError for a "
                 "4x2 matrix of zeros.\n```\n>>> sympy.zeros(4,2).is_upper\nTraceback (most recent call last):\n  File "
                 "\"sympy/matrices/matrices.py\", line 1112, in is_upper\n```"),
}


def _changed(run_id: str, path: str, hunk: str, task: str):
    """A successful run that changed ``path`` and nothing else (a ``git diff`` shows it; ``hunk``: what its hunk
    header names after the line numbers)."""
    diff = f"diff --git a/{path} b/{path}\n--- a/{path}\n+++ b/{path}\n@@ -1 +1 @@{hunk}\n-a\n+b\n"
    return make_run(run_id, task_id=run_id, task=task, steps=[
        ("bash", {"command": f"sed -i 's/a/b/' {path}"}, ""), ("bash", {"command": "git diff"}, diff)])


def test_a_shared_dunder_method_does_not_outweigh_the_wording(model_ts):
    """Real model. The task names ``__mul__`` (what ``@`` copies), and the milli-prefix run changed a ``__mul__``:
    ``touched`` in full. At ``w_touched`` 0.25 that lifted it, worded far from the task, over the relevant
    ``col_insert`` run into the three shown (on the whole ``cost_2_3`` tenant: 2nd, the relevant run 8th); at the
    cross-validated 0.20 the wording decides."""
    model_ts.add([_changed(run_id, *run) for run_id, run in RUNS.items()])
    # No step rows vote here (the tenant's many nearest step rows were other runs'); the candidates' vote alone says
    # where the work lies.
    config = RuntimeConfig(advice=AdviceConfig(cover_steps=0, cover_named_steps=0))
    shown = Runtime(model_ts, config).exemplars(QUERY, ACME, k=3).items
    ids = [e.trajectory_id for e in shown]
    assert "common" in ids, ids
    assert "prefixes" not in ids, ids

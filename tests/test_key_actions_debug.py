"""Key actions of a sed-driven run show the edits its final diff holds, not a debug ``print`` and the ``sed -i 'Nd'``
that deleted it again (probe E2, E2-D).

The fixtures are two real mini-swe-agent 1.15.0 runs of gemini-3-pro-preview on SWE-bench Verified
(gruckion/mini-swe-agent @ d12a71affd95403b036b2bdbd827349b77bfffb9,
``swebench_results/20251118_gemini-3-pro-74pct/trajs/<id>/<id>.traj.json``), trimmed to the system and task messages
and a few turns (``info.config`` dropped), otherwise unchanged (``fixtures/mini-swe-agent/.real/SOURCE.md``):

- django__django-13964, steps 32, 33, 42, 60 and 65: two ``sed -i`` substitutions of ``django/db/models/base.py``
  (the two ``-``/``+`` pairs of ``info.submission``), a ``sed -i '928i\\ print(f"DEBUG: ...")'`` and the
  ``sed -i '928d'`` that removes it, the submit. The last change of the fixed file is the deletion: ranked as "the
  change that left the file as the run left it", it and the insertion filled a small budget and the fix was cut.
- django__django-15499, steps 12, 44, 53 and 56: the fix (a ``sed -i '206i\\ elif (...'`` block of
  ``django/db/migrations/operations/models.py``), a ``print(f"REF: ...")`` insertion (one the submission kept), a
  ``sed -i '31d;40d'`` of debug lines, the submit.

The same for SWE-agent's editors, on SWE-agent fixtures of earlier tests (``fixtures/swe-agent/.real/SOURCE.md``).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from trajsearch.digest import exemplar_digest
from trajsearch.ingest.read import read_dump
from trajsearch.model import Trajectory
from trajsearch.runtime import Runtime, RuntimeConfig, RuntimeContext
from trajsearch.runtime.advice import AdviceConfig
from trajsearch.runtime.novelty import NoveltyConfig
from trajsearch.search import TrajSearch

from conftest import BASE_TIME

RUNS = Path(__file__).parent / "fixtures" / "mini-swe-agent" / ".real" / "gemini-3-pro-debug-prints"
OPEN = RuntimeConfig(advice=AdviceConfig(novelty=NoveltyConfig(0.99, 0.0, per_tenant=False)))
#: Per run: the start of the fix's commands, and of the debug edits that replaced them.
CASES = {
    "django__django-13964": (
        ["sed -i '936s/elif getattr(self, field.attname) is None:/",
         "sed -i 's/    NOT_PROVIDED, ExpressionWrapper, IntegerField, Max, Value,/"],
        ["sed -i '928d'", "sed -i '928i\\"]),
    "django__django-15499": (["sed -i '206i\\        elif (\\n            isinstance(operation, AlterModelManagers)"],
                             ["sed -i '31d;40d'"]),
}


def _run(name: str) -> Trajectory:
    return next(parsed.trajectory for parsed in read_dump(RUNS / f"{name}.traj.json", tenant="acme") if parsed.ok)


@pytest.mark.parametrize("name", CASES)
def test_the_edits_the_final_diff_holds_rank_first(name: str) -> None:
    fix, debug = CASES[name]
    actions = sorted(exemplar_digest(_run(name)).actions, key=lambda action: action.rank)
    first = [action.arguments.text() for action in actions[:len(fix)] if action.arguments]
    assert all(any(text.startswith(f) for text in first) for f in fix)
    assert not any(text.startswith(d) for text in first for d in debug)


def test_a_small_budget_shows_the_fix_not_the_debug_print(hashing_ts: TrajSearch) -> None:
    run = _run("django__django-13964")
    hashing_ts.add([run.model_copy(update={"created_at": BASE_TIME})])
    # 340 tokens: room for two key actions (400 was, while each source line held the run's trace URI; without it
    # 400 holds four, the debug print and its removal among them)
    context = Runtime(hashing_ts, OPEN).context_for(run.task, RuntimeContext(tenant="acme", now=BASE_TIME), budget=340)
    shown = context.text.split("Key actions:", 1)[1].split("Outcome:", 1)[0]
    assert "sed -i '936s/elif getattr(self, field.attname) is None:/" in shown
    assert "DEBUG" not in shown and "sed -i '928d'" not in shown


SWE_AGENT = Path(__file__).parent / "fixtures" / "swe-agent" / ".real"


@pytest.mark.parametrize("path, action", [
    ("swesmith/pandas-dev__pandas.95280573.pr_53652.traj", "str_replace_editor"),  # SWE-agent 1.x
    ("acr-swe-agent-gpt4-lite/pytest-dev__pytest-5227.traj", "edit"),  # 0.x: ``edit 18:18`` of the open file
])
def test_a_swe_agent_edit_its_submission_holds_ranks_before_the_submit(path: str, action: str) -> None:
    """The same for a str_replace editor: the edit whose lines the submitted patch holds is shown first, not the
    ``submit`` whose observation is the patch (0.x's ``edit`` names no file: only its lines say what it changed)."""
    run = next(parsed.trajectory for parsed in read_dump(SWE_AGENT / path, tenant="acme") if parsed.ok)
    first = min(exemplar_digest(run).actions, key=lambda a: a.rank)
    assert first.action == action

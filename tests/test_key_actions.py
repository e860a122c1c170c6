"""Key actions: the steps an exemplar shows of a past run (and ``export --max-tokens`` keeps) hold the
edit its final patch kept, not only the clean-up that came after it (probe p42 D1).

The fixture is a real mini-swe-agent 1.15.0 run of gemini-3-pro-preview on SWE-bench Verified,
django__django-13033 (gruckion/mini-swe-agent @ d12a71affd95403b036b2bdbd827349b77bfffb9,
``swebench_results/20251118_gemini-3-pro-74pct/trajs/django__django-13033/django__django-13033.traj.json``),
trimmed to the system and task messages and the turns of steps 17, 36, 42, 44, 48, 49, 50, 52 and 54
(``info.config`` dropped), otherwise unchanged: the ``sed -i`` of step 17 makes the one source change of
``info.submission`` (``django/db/models/sql/compiler.py``); the other turns add and revert test code,
``rm`` a scratch script and submit. Real Milvus Lite in a temp dir, the hashing test embedder.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from trajsearch.export import export_runs
from trajsearch.ingest.read import read_dump
from trajsearch.runtime import Runtime, RuntimeConfig, RuntimeContext
from trajsearch.runtime.advice import AdviceConfig
from trajsearch.runtime.novelty import NoveltyConfig
from trajsearch.search import TrajSearch

from conftest import BASE_TIME

RUN = (Path(__file__).parent / "fixtures" / "mini-swe-agent" / ".real" / "gemini-3-pro-key-actions"
       / "django__django-13033.traj.json")
#: The submitted fix: the sed of step 17 (the fixture's step 0), as far as the barest key action shows it.
FIX = """[0] bash: sed -i "s/getattr(field, 'attname', None) != name and name != 'pk':/"""
OPEN = RuntimeConfig(advice=AdviceConfig(novelty=NoveltyConfig(0.99, 0.0, per_tenant=False)))


@pytest.fixture
def store(hashing_ts: TrajSearch):
    run = next(parsed.trajectory for parsed in read_dump(RUN, tenant="acme") if parsed.ok)
    hashing_ts.add([run.model_copy(update={"created_at": BASE_TIME})])
    return hashing_ts, run


def _key_actions(text: str) -> str:
    return text.split("Key actions:", 1)[1].split("Outcome:", 1)[0]


@pytest.mark.parametrize("budget", [32000, 2000, 700])
def test_an_exemplar_shows_the_edit_its_patch_kept(store, budget: int) -> None:
    ts, run = store
    context = Runtime(ts, OPEN).context_for(run.task, RuntimeContext(tenant="acme", now=BASE_TIME), budget=budget)
    shown = _key_actions(context.text)
    assert FIX in shown  # the fix, however few actions the budget leaves
    assert "rm verify_test_case.py" not in shown  # a scratch script's removal teaches nothing


def test_export_max_tokens_keeps_the_edit_its_patch_kept(store) -> None:
    ts, run = store
    for max_tokens in (4000, 1500):
        item = next(iter(export_runs(ts, run.task, tenant="acme", k=1, levels="task", fmt="openai-chat",
                                     max_tokens=max_tokens)))
        assert item.compression in ("full", "half")
        calls = [call["function"]["arguments"] for message in item.record["messages"]
                 for call in message.get("tool_calls") or []]
        assert any("compiler.py" in arguments and "sed -i" in arguments for arguments in calls), max_tokens

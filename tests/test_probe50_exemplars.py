"""Exemplars for a task that names a file a run changed only as a test (round 17, FR11).

On the real model (all-MiniLM-L6-v2) and real SWE-agent runs: six runs of AutoCodeRover's reproduction of SWE-agent on
SWE-bench Lite (``cost_2_2``) and the task of a seventh (see ``tests/fixtures/swe-agent/.probe50/SOURCE.md``).
``where`` is how much of what a task names lives in the files a run changed; a test file is no place a task's
work lies (:mod:`trajsearch.runtime.where` leaves test files out of its guess), so a run that changed one
only gets nothing from it.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from trajsearch.ingest.read import read_dump
from trajsearch.runtime import Runtime, RuntimeContext
from trajsearch.search import TrajSearch

pytestmark = pytest.mark.model

FIXTURE = Path(__file__).parent / "fixtures/swe-agent/.probe50/cost_2_2"


@pytest.fixture(scope="module")
def django(tmp_path_factory, real_embedder):
    root = tmp_path_factory.mktemp("probe50-cost22")
    ts = TrajSearch.open(str(root / "milvus.db"), traces=str(root / "traces"), embedder=real_embedder)
    runs = [r.trajectory for path in sorted(FIXTURE.glob("*.traj")) for r in read_dump(path, tenant="django")]
    ts.add(runs)
    yield Runtime(ts), {r.task_id.rsplit("-", 1)[-1]: r.trajectory_id for r in runs}
    ts.close()


def test_a_file_a_task_names_is_no_match_for_a_test_file_of_that_name(django):
    """django-10924 ("Allow FilePathField path to accept a callable"; "when running manage.py makemigrations")
    got django-11422 first, with ``where`` 1.0: its one change, ``tests/i18n/sampleproject/manage.py``, met the
    task's ``manage.py`` by its bare name. Three runs that changed ``django/db/models/fields/__init__.py``, where
    ``FilePathField`` lives, were there to show."""
    runtime, ids = django
    task = (FIXTURE / "django__django-10924.issue.txt").read_text()
    found = runtime.exemplars(task, RuntimeContext(tenant="django"), k=3)
    where = {e.trajectory_id: e.features.get("where", 0.0) for e in found.items}
    assert where.get(ids["11422"], 0.0) == 0.0, where
    assert found.items[0].trajectory_id != ids["11422"], where
    assert {ids["11049"], ids["11742"], ids["14238"]} & set(where), where

"""The runtime's "a past run solved this same task" (``follow_closely``) only for a run of this very task."""

from __future__ import annotations

from pathlib import Path

from trajsearch.ingest.read import read_dump
from trajsearch.runtime import Runtime, RuntimeContext
from trajsearch.runtime.novelty import NoveltyConfig, Strategy

TEMPLATES = Path(__file__).parent / "fixtures" / "tau-bench" / ".same-task" / "grok-3-retail-template-tasks.json"


def test_a_template_twin_of_the_task_is_not_followed_as_the_same_task(model_ts):
    """grok-3's tau-bench retail tasks 8 and 9 (and 3 and 4) are one template asking for different things ("the
    desk lamp to a brighter one (prefer battery > USB > AC)" against "(prefer AC adapter > battery > USB)"): their
    tasks embed at 0.978-0.998, above the 0.96 of ``follow_closely``, and task 8 was told "A past run solved this
    same task: follow its approach closely" of task 9's run. A run of the task itself still is."""
    runs = {p.trajectory.task_id: p.trajectory for p in read_dump(TEMPLATES, tenant="acme")}
    model_ts.add(list(runs.values()))
    runtime, ctx = Runtime(model_ts), RuntimeContext(tenant="acme")
    for task, twin in (("retail-8", "retail-9"), ("retail-4", "retail-3")):
        said = runtime.exemplars(runs[task].task, ctx, exclude_trajectory_ids=[runs[task].trajectory_id])
        assert said.best_similarity >= NoveltyConfig().follow_closely  # the template twin, as near as that
        assert said.items[0].trajectory_id == runs[twin].trajectory_id
        assert said.strategy is Strategy.use_as_inspiration, task
    itself = runtime.exemplars(runs["retail-9"].task, ctx)
    assert itself.strategy is Strategy.follow_closely
    assert itself.items[0].trajectory_id == runs["retail-9"].trajectory_id


def test_a_task_longer_than_a_row_is_still_its_own_runs_task(model_ts):
    """Review RRT9: a task over ``MAX_TASK_CHARS`` (2 of SWE-bench Verified's 500 issues hold 22-25k characters) is
    cut at ingest to a head of ~9,985 characters, a mark and a tail, and the query by ``task_query`` to a head of
    9,950: the texts never matched, so a rerun of the very task was told to use its runs only as inspiration."""
    from trajsearch.model import MAX_TASK_CHARS

    run = next(p.trajectory for p in read_dump(TEMPLATES, tenant="acme") if p.trajectory.task_id == "retail-9")
    listing = "\n".join(f"package-{i:05d}    {i % 7}.{i % 11}.{i % 13}" for i in range(1200))  # a pasted pip list
    task = f"{run.task}\n\nInstalled packages:\n{listing}\n\nPlease keep the lamp order as asked above."
    assert len(task) > MAX_TASK_CHARS
    first, again = (run.model_copy(update={"task": task, "trajectory_id": f"long-{n}"}) for n in (1, 2))
    model_ts.add([first, again])
    said = Runtime(model_ts).exemplars(task, RuntimeContext(tenant="acme"), exclude_trajectory_ids=["long-1"])
    assert said.items[0].trajectory_id == "long-2"
    assert said.strategy is Strategy.follow_closely

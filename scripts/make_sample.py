"""Regenerate ``trajsearch/samples/sample.jsonl`` from the real dumps in ../shared/data.

A small native-format dump for the README demo: tau-bench airline runs (a
success and a failure for each of a few tasks) and mini-swe-agent runs (the
same SWE-bench instances under several agent configurations, including runs
that ended in API errors). Long texts are cut to head + tail so the file stays
small. Deterministic: the same data gives the same bytes.

    python scripts/make_sample.py [--data ../shared/data] [--out trajsearch/samples/sample.jsonl]
"""

from __future__ import annotations

import argparse
import re
from collections import defaultdict
from datetime import datetime, timezone
from pathlib import Path

from trajsearch.ingest.read import read_dump
from trajsearch.model import Outcome, Trajectory

ROOT = Path(__file__).resolve().parents[1]
TENANT = "demo"
#: (head, tail) characters kept of long texts: outputs keep more tail (errors sit at the end).
OBSERVATION_CUT = (250, 350)
ARGUMENT_CUT = (200, 200)
THOUGHT_CUT = (250, 100)
#: tau-bench airline tasks with both successful and failed trials.
TAU_TASKS = (1, 4, 13, 21, 26, 34, 37, 45)
#: SWE-bench instances, and the agent configurations to take for each.
SWE_RUNS = {
    "pvlib__pvlib-python-1606": ("deepseek_reasoner_dev", "deepseek_chat_dev"),
    "pylint-dev__astroid-1196": ("deepseek_reasoner_dev", "deepseek_chat_dev"),
    "sqlfluff__sqlfluff-2419": ("deepseek_lite_dev_noparallel", "deepseek_chat_dev_rerun"),
    "pydicom__pydicom-1256": ("deepseek_chat_dev", "deepseek_chat_dev_rerun"),
}


def cut(text: str | None, keep: tuple[int, int]) -> str | None:
    head, tail = keep
    if text is None or len(text) <= head + tail + 80:
        return text
    return f"{text[:head]}\n[... {len(text) - head - tail} characters cut for the sample ...]\n{text[-tail:]}"


def shrink(run: Trajectory) -> Trajectory:
    steps = []
    for step in run.steps:
        args = step.arguments
        if isinstance(args, dict):
            args = {k: cut(v, ARGUMENT_CUT) if isinstance(v, str) else v for k, v in args.items()}
        update = {
            "thought": cut(step.thought, THOUGHT_CUT),
            "observation": cut(step.observation, OBSERVATION_CUT),
            "arguments": args,
        }
        steps.append(step.model_copy(update=update))
    return run.model_copy(update={"steps": steps})


def batch_time(config_dir: Path) -> datetime:
    """When the batch ran, from mini-swe-agent's ``exit_statuses_<unix time>.yaml``.

    Used for runs that recorded no step times (they died before the first step).
    """
    names = (p.name for p in config_dir.glob("exit_statuses_*.yaml"))
    stamps = [float(m.group(1)) for name in names if (m := re.search(r"_(\d+(?:\.\d+)?)\.yaml$", name))]
    if not stamps:
        return datetime(2026, 4, 1, tzinfo=timezone.utc)
    return datetime.fromtimestamp(min(stamps), tz=timezone.utc)


def tau_runs(data: Path) -> list[Trajectory]:
    path = data / "tau-bench" / "gpt-4o-airline.json"
    defaults = {
        "env_version": "airline-v1",
        "model_id": "gpt-4o",  # from the file name: the results carry no model field
        "created_at": "2024-05-15T20:00:00Z",  # the airline environment's own "current time"
    }
    by_task: dict[str, dict[Outcome, Trajectory]] = defaultdict(dict)
    for parsed in read_dump(path, tenant=TENANT, defaults=defaults):
        run = parsed.trajectory
        if run is None or run.task_id not in {f"airline-{t}" for t in TAU_TASKS}:
            continue
        # first success and first failure per task, preferring a failure with a tool error
        known = by_task[run.task_id].get(run.outcome)
        if known is None or (run.outcome is Outcome.failure and not _has_error(known) and _has_error(run)):
            by_task[run.task_id][run.outcome] = run
    ordered = sorted(by_task, key=lambda t: int(t.split("-")[1]))
    return [run for task in ordered for run in by_task[task].values()]


def _has_error(run: Trajectory) -> bool:
    return any(step.error for step in run.steps)


def swe_runs(data: Path) -> list[Trajectory]:
    runs = []
    for instance, configs in SWE_RUNS.items():
        for config in configs:
            config_dir = data / "mini-swe-agent-dev" / config
            path = config_dir / instance / f"{instance}.traj.json"
            defaults = {"env_version": "swe-dev-v1", "created_at": batch_time(config_dir)}
            for parsed in read_dump(path, tenant=TENANT, defaults=defaults):
                if parsed.error:
                    raise SystemExit(f"cannot read {parsed.source}: {parsed.error}")
                runs.append(parsed.trajectory)
    return runs


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=ROOT.parent / "shared" / "data")
    parser.add_argument("--out", type=Path, default=ROOT / "trajsearch" / "samples" / "sample.jsonl")
    args = parser.parse_args()

    runs = [shrink(run) for run in tau_runs(args.data) + swe_runs(args.data)]
    args.out.parent.mkdir(parents=True, exist_ok=True)
    with args.out.open("w") as fh:
        for run in runs:
            fh.write(run.model_dump_json(exclude_none=True) + "\n")
    outcomes = defaultdict(int)
    for run in runs:
        outcomes[run.outcome.value] += 1
    print(f"wrote {len(runs)} runs ({dict(outcomes)}) to {args.out}: {args.out.stat().st_size // 1024} KB")


if __name__ == "__main__":
    main()

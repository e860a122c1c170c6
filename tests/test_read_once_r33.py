"""Round 33 (PERF3): a run's shell commands are kept while its rows are made, and not after.

What this guards: no command text is held once a run's rows are made (``touched.read_once``'s block, where each
command is split and read-tested once in a ``trajsearch.memo`` scope) or after a public step function is asked outside
a block. A process-wide cache (round 32's ``lru_cache``, PERF2) would keep every tenant's commands for a server's
life: this test fails with one (checked: ``per_call`` as ``functools.lru_cache(1024)``), the references it holds
counted. It passes on main by design: the change is a speed change, and no behaviour of the rows tells a run-scoped
memo from none (the rows are byte for byte the same); it is a guard against the process-wide cache coming back.
The counts are CPython's reference counts of long command texts made at test time (never interned or shared with
other code), so a held command is seen and nothing else moves them.
Real run: ``tests/fixtures/mini-swe-agent/.real`` (gemini-3-pro on SWE-bench; see its SOURCE.md / README.md).
"""

from __future__ import annotations

import gc
import sys
import uuid
from pathlib import Path

from trajsearch.indexer import indexed_rows
from trajsearch.ingest.read import read_inputs
from trajsearch.model import Trajectory
from trajsearch.represent import WindowConfig
from trajsearch.steps import is_read, is_write
from trajsearch.touched import shows_history

RUN = (Path(__file__).parent / "fixtures" / "mini-swe-agent" / ".real" / "gemini-3-pro-reverted-harness-edits" / "trajs"
       / "sphinx-doc__sphinx-8595" / "sphinx-doc__sphinx-8595.traj.json")


def _run_with_commands() -> tuple[Trajectory, list[str]]:
    """The real run with its first steps' commands replaced by distinct ones (a read, a history view, a write: each
    split and read-tested), unique to this test's process."""
    (run,) = [p.trajectory for p in read_inputs([RUN], tenant="t") if p.trajectory]
    mark = uuid.uuid4().hex
    commands = [f"cd /testbed/src_{mark}_{n}; cat sphinx/ext/autodoc/{mark}_{n}.py && git log -p -- sphinx/{mark}_{n}/ "
                f"| grep -n '__all__ {mark}' ; sed -i 's/{mark}_old/{mark}_new_{n}/' sphinx/{mark}_{n}.py"
                for n in range(3)]
    steps = [s.model_copy(update={"action": "bash", "arguments": {"command": commands[n]}}) if n < len(commands) else s
             for n, s in enumerate(run.steps)]
    return run.model_copy(update={"steps": steps}), commands


def _counts(commands: list[str]) -> list[int]:
    gc.collect()
    return [sys.getrefcount(command) for command in commands]


def test_no_command_is_kept_after_its_runs_rows() -> None:
    run, commands = _run_with_commands()
    before = _counts(commands)
    rows = indexed_rows(run, window=WindowConfig())
    assert any(commands[0].split(";")[0] in row.text for row in rows)  # the rows were made from these commands
    del rows
    assert _counts(commands) == before  # nothing took hold of a command's text


def test_no_command_is_kept_when_asked_outside_a_run() -> None:
    run, commands = _run_with_commands()
    before = _counts(commands)
    asked = [(is_read(s), is_write(s), shows_history(c)) for s, c in zip(run.steps, commands)]
    assert asked == [(False, True, True)] * 3
    assert _counts(commands) == before

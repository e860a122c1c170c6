"""Reading a dump as the adapter tests do: through the public reader, with no record rejected.

A test module uses them with ``from adapter_support import only, runs`` (keywords go to ``read_dump``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from trajsearch.ingest.read import read_dump
from trajsearch.model import Trajectory


def runs(path: Path, **kwargs: Any) -> list[Trajectory]:
    """Every run read from ``path``; a rejected record fails the test with its reason."""
    results = list(read_dump(path, **kwargs))
    assert all(r.ok for r in results), [r.error for r in results if not r.ok]
    return [r.trajectory for r in results]


def only(path: Path, **kwargs: Any) -> Trajectory:
    """The run of a dump that holds one."""
    [run] = runs(path, **kwargs)
    return run

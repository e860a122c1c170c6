"""trajsearch: search over past AI-agent runs (exemplars, failure warnings, runs like this broken one).

``from trajsearch import TrajSearch`` is the library's front door (see
:mod:`trajsearch.search`); the result types are in :mod:`trajsearch.results`
and the gRPC client in :mod:`trajsearch.client`. The façade is imported on
first use, so ``import trajsearch.client`` stays free of Milvus and numpy.
"""

from __future__ import annotations

from typing import Any

__all__ = ["TrajSearch", "Trajectory", "Step"]


def __getattr__(name: str) -> Any:
    if name == "TrajSearch":
        from .search import TrajSearch

        return TrajSearch
    if name in ("Trajectory", "Step"):
        from . import model

        return getattr(model, name)
    raise AttributeError(f"module 'trajsearch' has no attribute {name!r}")

"""How a message shows a list that may be long (a folder's files, a trace's span names, a table's keys): its first few.

A leaf at the package root, importing nothing of trajsearch, so that the outcome tables and the format adapters
share it: ``ingest.outcomes`` cannot import the adapters' ``_common`` (adapters -> _swebench -> outcomes).
"""

from __future__ import annotations

import itertools
from typing import Any, Iterable


def first_few(items: Iterable[Any], most: int, sep: str = ", ") -> str:
    """The first ``most`` of ``items`` joined by ``sep``, then ``...`` where there are more (read no further: an
    iterator of a million names costs ``most + 1``)."""
    shown = [str(item) for item in itertools.islice(items, most + 1)]  # one more says whether there are more
    return sep.join(shown[:most]) + (f"{sep}..." if len(shown) > most else "")

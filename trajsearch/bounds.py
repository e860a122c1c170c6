"""The counts a search or a failure report takes (``k``, ``group_size``, ``limit``) and their one check, shared by
the library, the server and the client.

Kept apart from :mod:`trajsearch.search` so the gRPC client checks a count as the embedded store does without
importing the store (Milvus) it never opens: over ``--server``, ``search -k 0`` was refused in other words than
the embedded store's, and ``-k 3000000000`` failed as protobuf's "Value out of range".
"""

from __future__ import annotations

from typing import Any

#: The most hits one search returns (a server's own ``--max-k`` may be lower: ``service.validate.Limits``).
MAX_K = 200
#: The most hits a server returns unless its ``--max-k`` says otherwise (``service.validate.Limits.max_k``).
SERVER_MAX_K = 100
#: Said after the bounds of a ``k`` refused before it reaches a server (the client's check, ``search -k 0 --server``):
#: the server's own bound (its ``--max-k``) cannot be known there, and a ``k`` within 1..MAX_K may still be refused.
SERVER_K_NOTE = f" (a server takes at most its --max-k: {SERVER_MAX_K} unless set)"
#: The most rows one search keeps of a run (``group_size``).
MAX_GROUP_SIZE = 10
#: The most failure modes one report lists (``failure_modes``' ``limit``, the server's, ``failures --limit``).
MAX_MODES = 1000
#: The most example runs a failure mode shows (``examples``).
MAX_EXAMPLES = 20
#: The longest query text a search takes (the runtime verbs, the CLI and the page clip a longer paste to its head and
#: tail: ``runtime.task_query``); a server's own ``--max-text`` may be lower (``service.validate.Limits``).
MAX_QUERY_CHARS = 20_000
#: The most runs one export writes: it pages by excluding the runs it has, so also the most ids the server lets a
#: search exclude (``exclude_trajectory_ids``; the library sets no bound).
MAX_EXPORT_RUNS = 10_000


def out_of_bounds(value: Any, low: int, high: int, note: str = "") -> str | None:
    """What is wrong with ``value`` as a whole number from ``low`` to ``high`` (``note`` said after the bounds), or
    None. The one wording of a count refused, the library's and the server's (``service.validate.bounded``, which
    puts the field before it): the server said "k: must be 1..100", the library "k must be a whole number from 1
    to 200"."""
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        return f"must be a whole number from {low} to {high}{note}, got {value!r}"
    return None


def check_count(name: str, value: Any, top: int, note: str = "") -> int:
    """``value``, a count from 1 to ``top``: anything else is a ValueError naming ``name``, its bounds and ``note``.
    The client must refuse 0 itself: on the wire 0 asks for the server's default."""
    if said := out_of_bounds(value, 1, top, note):
        raise ValueError(f"{name} {said}")
    return value

"""The counts a search takes (``k``, ``group_size``) and their one check, shared by the library and the client.

Kept apart from :mod:`trajsearch.search` so the gRPC client checks a count as the embedded store does without
importing the store (Milvus) it never opens: over ``--server``, ``search -k 0`` was refused in other words than
the embedded store's, and ``-k 3000000000`` failed as protobuf's "Value out of range".
"""

from __future__ import annotations

from typing import Any

#: The most hits one search returns (a server's own ``--max-k`` may be lower: ``service.validate.Limits``).
MAX_K = 200
#: The most rows one search keeps of a run (``group_size``).
MAX_GROUP_SIZE = 10


def check_count(name: str, value: Any, top: int, note: str = "") -> int:
    """``value``, a count from 1 to ``top``: anything else is a ValueError naming ``name``, its bounds and ``note``.
    The client must refuse 0 itself: on the wire 0 asks for the server's default."""
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= top:
        raise ValueError(f"{name} must be a whole number from 1 to {top}{note}, got {value!r}")
    return value

"""The runtime's call memo: :mod:`trajsearch.memo`, which the reading of a run (below the runtime) opens too."""

from ..memo import call_memo, per_call

__all__ = ["call_memo", "per_call"]

"""Row metadata and filter columns: what a lexical query may constrain, as numpy masks."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping

import numpy as np

from ..fields import ONE_OF_FIELDS
from ..filters import Filters


#: Single-valued string columns a filter can constrain, with their Filters attribute (the field table's).
_COLUMNS = ONE_OF_FIELDS
_TRAJECTORY = [name for name, _ in _COLUMNS].index("trajectory_id")  # its position in _COLUMNS
#: Values a filter matches by one comparison each; more take a look-up table (as fast at 8, 68k rows).
_FEW = 8


@dataclass(frozen=True, slots=True)
class _Meta:
    """The filterable fields of one row."""

    fields: tuple[Any, ...]  # values of _COLUMNS, in order
    tools: tuple[str, ...]
    created_at: int


@dataclass(frozen=True, slots=True)
class _Counts:
    """A row's distinct term ids (partition vocabulary) and their counts."""

    terms: np.ndarray  # int32
    tf: np.ndarray  # uint16
    length: int  # tokens in the row


class _Columns:
    """Filter columns over a fixed list of rows."""

    def __init__(self, n: int, codes: dict[str, tuple[np.ndarray, dict[Any, int]]],
                 created_at: np.ndarray, tool_rows: dict[str, np.ndarray]) -> None:
        self.n, self.codes, self.created_at, self.tool_rows = n, codes, created_at, tool_rows

    @classmethod
    def of(cls, metas: list[_Meta]) -> _Columns:
        codes: dict[str, tuple[np.ndarray, dict[Any, int]]] = {}
        for i, (name, _) in enumerate(_COLUMNS):
            vocab: dict[Any, int] = {}
            arr = np.fromiter((vocab.setdefault(m.fields[i], len(vocab)) for m in metas),
                              dtype=np.int32, count=len(metas))
            codes[name] = (arr, vocab)
        created = np.fromiter((m.created_at for m in metas), dtype=np.int64, count=len(metas))
        postings: dict[str, list[int]] = {}
        for pos, m in enumerate(metas):
            for tool in m.tools:
                postings.setdefault(tool, []).append(pos)
        tool_rows = {t: np.asarray(p, dtype=np.int32) for t, p in postings.items()}
        return cls(len(metas), codes, created, tool_rows)

    def metas(self) -> list[_Meta]:
        """The rows' fields back as :class:`_Meta` (for a loaded index)."""
        cols = []
        for name, _ in _COLUMNS:
            arr, vocab = self.codes[name]
            values = np.empty(len(vocab), dtype=object)
            values[:] = list(vocab)
            cols.append(values[arr].tolist() if len(vocab) else [None] * self.n)
        tools: list[list[str]] = [[] for _ in range(self.n)]
        for tool, rows in self.tool_rows.items():
            for r in rows.tolist():
                tools[r].append(tool)
        created = self.created_at.tolist()
        return [_Meta(tuple(f), tuple(t), c) for f, t, c in zip(zip(*cols), tools, created)] if cols else []

    def _isin(self, name: str, values: tuple[str, ...]) -> np.ndarray | None:
        """Mask of rows whose ``name`` is one of ``values``; None if no row can match."""
        codes, vocab = self.codes[name]
        wanted = [vocab[v] for v in set(values) if v in vocab]
        if not wanted:
            return None
        if len(wanted) > _FEW:  # a look-up table: one gather per row
            table = np.zeros(len(vocab), dtype=bool)
            table[wanted] = True
            return table.take(codes)
        mask = codes == wanted[0]
        for code in wanted[1:]:  # a comparison per value: levels step or passage, 68k rows: 0.014 ms (np.isin 0.27)
            mask |= codes == code
        return mask

    def mask(self, f: Filters) -> np.ndarray | None:
        """Rows satisfying ``f`` (tenant aside: the partition is the tenant); None if none."""
        mask = np.ones(self.n, dtype=bool)
        for name, attr in _COLUMNS:
            values = getattr(f, attr)
            if values:
                m = self._isin(name, values)
                if m is None:
                    return None
                mask &= m
        if f.exclude_trajectory_ids:
            m = self._isin("trajectory_id", f.exclude_trajectory_ids)
            if m is not None:
                mask &= ~m
        if f.tools:
            tmask = np.zeros(self.n, dtype=bool)
            for tool in set(f.tools):
                pos = self.tool_rows.get(tool)
                if pos is not None:
                    tmask[pos] = True
            mask &= tmask
        if f.created_after is not None:
            mask &= self.created_at >= f.created_after
        return mask


def _meta(row: Mapping[str, Any]) -> _Meta:
    return _Meta(fields=tuple(row.get(name) for name, _ in _COLUMNS), tools=tuple(row.get("tools") or ()),
                 created_at=int(row.get("created_at") or 0))

"""Spans on disk, grouped by trace: the span formats' memory bound is one run, not one input.

A trace may be spread over many lines and files of one input (OTel exporters
write spans as they end, Langfuse exports observations apart from traces), so
spans are spooled into SQLite in a temporary directory and read back group by
group once the whole input has been seen.
"""

from __future__ import annotations

import os
import sqlite3
import tempfile
from typing import Iterator

from .adapters._spans import Node


class Spool:
    """Spans on disk, grouped by trace: constant memory whatever the size of the input."""

    def __init__(self, directory: str | None = None) -> None:
        self._dir = tempfile.TemporaryDirectory(prefix="trajsearch-spool-", dir=directory)
        self.db = sqlite3.connect(os.path.join(self._dir.name, "spool.db"), isolation_level=None)
        self.db.executescript(
            "PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF; PRAGMA temp_store=FILE;"
            "CREATE TABLE span (gkey TEXT, seq INTEGER, payload TEXT);"
            "CREATE TABLE grp (gkey TEXT PRIMARY KEY, first INTEGER, conv TEXT, source TEXT, position TEXT);"
        )
        self.db.execute("BEGIN")
        self.count = 0

    def add(self, key: str, node: Node, conversation: str | None, source: str, position: str) -> None:
        self.db.execute("INSERT INTO span VALUES (?, ?, ?)", (key, node.seq, node.to_json()))
        self.db.execute("INSERT OR IGNORE INTO grp VALUES (?, ?, NULL, ?, ?)", (key, node.seq, source, position))
        if conversation:
            self.db.execute("UPDATE grp SET conv = ? WHERE gkey = ? AND conv IS NULL", (conversation, key))
        self.count += 1

    def groups(self, by: str) -> Iterator[tuple[str, str, str, list[Node]]]:
        """(group key, first source, first position, nodes) in order of first appearance."""
        self.db.execute("COMMIT")
        self.db.execute("CREATE INDEX span_key ON span (gkey, seq)")
        if by == "conversation":
            query = ("SELECT COALESCE(conv, gkey) AS k, MIN(first) AS f FROM grp GROUP BY k ORDER BY f")
        else:
            query = "SELECT gkey, first FROM grp ORDER BY first"
        keys = [row[0] for row in self.db.execute(query)]
        for key in keys:
            if by == "conversation":
                members = [r[0] for r in self.db.execute(
                    "SELECT gkey FROM grp WHERE COALESCE(conv, gkey) = ? ORDER BY first", (key,))]
            else:
                members = [key]
            first = self.db.execute("SELECT source, position FROM grp WHERE gkey = ?", (members[0],)).fetchone()
            nodes: list[Node] = []
            for member in members:
                nodes.extend(Node.from_json(r[0]) for r in self.db.execute(
                    "SELECT payload FROM span WHERE gkey = ? ORDER BY seq", (member,)))
            yield key, first[0], first[1], nodes

    def close(self) -> None:
        self.db.close()
        self._dir.cleanup()

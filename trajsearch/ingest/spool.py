"""Spans on disk, grouped by trace: the span formats' memory bound is one run, not one input.

A trace may be spread over many lines and files of one input (OTel exporters
write spans as they end, Langfuse exports observations apart from traces), so
spans are spooled into SQLite in a temporary directory and read back group by
group once the whole input has been seen. A verdict that knows only the span it
is about, not its trace (LangSmith feedback on a child run gives its
``run_id``), is filed under that span's id: a group of nothing but verdicts
named so joins the group that holds the span. So does an update that knows
only its own id (a LangSmith run-update op carries no ``trace_id``): a group
named for a span of another group, holding only verdicts and other versions
of spans that group holds, is part of it. A trace an adapter says was caused by
another (``node.info["caused_by"]``: AutoGen's runtime starts a trace per message
it publishes, linked to the trace that published it) joins that trace's group.
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
            "CREATE TABLE span (gkey TEXT, seq INTEGER, sid TEXT, role TEXT, payload TEXT);"
            "CREATE TABLE grp (gkey TEXT PRIMARY KEY, first INTEGER, conv TEXT, source TEXT, position TEXT);"
            "CREATE TABLE link (gkey TEXT, cause TEXT);"
        )
        self.db.execute("BEGIN")
        self.count = 0

    def add(self, key: str, node: Node, conversation: str | None, source: str, position: str) -> None:
        self.db.execute("INSERT INTO span VALUES (?, ?, ?, ?, ?)", (key, node.seq, node.id, node.role, node.to_json()))
        self.db.execute("INSERT OR IGNORE INTO grp VALUES (?, ?, NULL, ?, ?)", (key, node.seq, source, position))
        if conversation:
            self.db.execute("UPDATE grp SET conv = ? WHERE gkey = ? AND conv IS NULL", (conversation, key))
        for cause in node.info.get("caused_by") or ():
            self.db.execute("INSERT INTO link VALUES (?, ?)", (key, cause))
        self.count += 1

    def groups(self, by: str) -> Iterator[tuple[str, str, str, list[Node]]]:
        """(group key, first source, first position, nodes) in order of first appearance."""
        self.db.execute("COMMIT")
        self.db.execute("CREATE INDEX span_key ON span (gkey, seq)")
        self.db.execute("CREATE INDEX span_sid ON span (sid)")
        owner = dict(self.db.execute(  # a group of verdicts and updates only, named by a span of another group
            "SELECT g.gkey, MIN(s.gkey) FROM grp g JOIN span s ON s.sid = g.gkey AND s.gkey != g.gkey "
            "WHERE NOT EXISTS (SELECT 1 FROM span o WHERE o.gkey = g.gkey AND o.role != 'evaluator' "
            "AND NOT EXISTS (SELECT 1 FROM span v WHERE v.sid = o.sid AND v.gkey = s.gkey)) GROUP BY g.gkey"))

        rows = list(self.db.execute("SELECT gkey, first, conv FROM grp ORDER BY first"))
        chain = _caused_chains(rows, self.db.execute("SELECT DISTINCT gkey, cause FROM link"))

        def home(key: str) -> str:
            for _ in range(8):  # a span's group may itself be filed under a span's id
                key = owner.get(key, key)
            return chain.get(key, key)

        conv = {home(k): c for k, _, c in rows if c and home(k) == k}
        label = {k: (conv.get(home(k)) or home(k)) if by == "conversation" else home(k) for k, _, _ in rows}
        groups: dict[str, list[str]] = {}  # by label, in order of first appearance
        for k, _, _ in rows:
            groups.setdefault(label[k], []).append(k)
        for key, members in groups.items():
            first = self.db.execute("SELECT source, position FROM grp WHERE gkey = ?", (members[0],)).fetchone()
            nodes: list[Node] = []
            for member in members:
                nodes.extend(Node.from_json(r[0]) for r in self.db.execute(
                    "SELECT payload FROM span WHERE gkey = ? ORDER BY seq", (member,)))
            yield key, first[0], first[1], nodes

    def close(self) -> None:
        self.db.close()
        self._dir.cleanup()


def _caused_chains(rows: list[tuple[str, int, str | None]], links: Iterator[tuple[str, str]]) -> dict[str, str]:
    """Each group caused by another (directly or down a chain) -> the group its chain started from (the earliest
    of those caused by none), so a run's key does not depend on the order its traces were written in."""
    first = {k: n for k, n, _ in rows}
    parent: dict[str, str] = {}
    links = [(key, cause) for key, cause in links if key in first and cause in first]
    caused = {key for key, _ in links}

    def top(key: str) -> str:
        """The root of ``key``'s chain, halving the path there as it goes: without it a chain whose links come
        newest-first is walked whole for each of its traces (quadratic: 16,000 traces took 5.6 s)."""
        while (up := parent.get(key, key)) != key:
            grandparent = parent.get(up, up)
            parent[key] = grandparent
            key = grandparent
        return key

    for key, cause in links:
        a, b = top(key), top(cause)
        if a != b:
            a, b = sorted((a, b), key=lambda k: (k in caused, first[k]))
            parent[b] = a
    return {k: top(k) for k in parent}

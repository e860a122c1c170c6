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
of spans that group holds, is part of it. A group named for stand-ins
(``STAND_IN`` nodes other groups hold, their id the group's key: a model
call's record of a tool call that AI SDK 5 traced apart from the run) is not
joined whole: its spans are told apart by time and arguments, since such keys repeat across
runs and within one (:func:`_placed`). A trace an adapter says was caused by
another (``node.info["caused_by"]``: AutoGen's runtime starts a trace per message
it publishes, linked to the trace that published it) joins that trace's group.
"""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import tempfile
from bisect import bisect_left, bisect_right
from collections import deque
from itertools import accumulate
from typing import Iterator

from .adapters._spans import STAND_IN, Node


class Spool:
    """Spans on disk, grouped by trace: constant memory whatever the size of the input."""

    def __init__(self, directory: str | None = None) -> None:
        self._dir = tempfile.TemporaryDirectory(prefix="trajsearch-spool-", dir=directory)
        # one reader's generator uses it, never two threads at once, but not always from one thread: ``ingest
        # --server`` reads its files inside the request stream gRPC consumes in a thread of its own, and the
        # generator may be closed (``close``) from another; sqlite's own check refused that
        self.db = sqlite3.connect(os.path.join(self._dir.name, "spool.db"), isolation_level=None,
                                  check_same_thread=False)
        self.db.executescript(
            "PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF; PRAGMA temp_store=FILE;"
            "CREATE TABLE span (gkey TEXT, seq INTEGER, sid TEXT, role TEXT, payload TEXT, start REAL, finish REAL,"
            " stand INTEGER);"
            "CREATE TABLE grp (gkey TEXT PRIMARY KEY, first INTEGER, conv TEXT, source TEXT, position TEXT);"
            "CREATE TABLE link (gkey TEXT, cause TEXT);"
        )
        self.db.execute("BEGIN")
        self.count = 0

    def add(self, key: str, node: Node, conversation: str | None, source: str, position: str) -> None:
        stand_in = int(bool(node.info.get(STAND_IN)))
        self.db.execute("INSERT INTO span VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                        (key, node.seq, node.id, node.role, node.to_json(), node.start, node.end, stand_in))
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
        placed, left = _placed(self.db)
        owner = {k: v for k, v in owner.items() if k not in left}
        moved: dict[str, list[tuple[int, int, str | None]]] = {}  # group -> (seq, row, parent) of spans placed in it
        for gkey, seq, row, parent in placed.values():
            moved.setdefault(gkey, []).append((seq, row, parent))

        rows = [r for r in self.db.execute("SELECT gkey, first, conv FROM grp ORDER BY first")
                if r[0] not in left or left[r[0]]]
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
                spans = [(seq, Node.from_json(payload)) for rowid, seq, payload in self.db.execute(
                    "SELECT rowid, seq, payload FROM span WHERE gkey = ? ORDER BY seq", (member,))
                    if rowid not in placed and (member not in left or rowid in left[member])]
                for seq, row, parent in moved.get(member, []):
                    [(payload,)] = self.db.execute("SELECT payload FROM span WHERE rowid = ?", (row,))
                    node = Node.from_json(payload)
                    node.parent = parent
                    spans.append((seq, node))
                nodes.extend(node for _, node in sorted(spans, key=lambda r: r[0]))
            yield key, first[0], first[1], nodes

    def close(self) -> None:
        self.db.close()
        self._dir.cleanup()


def _placed(db: sqlite3.Connection) -> tuple[dict[int, tuple[str, int, int, str | None]], dict[str, set[int]]]:
    """Spans of groups named for stand-ins, each put in the place of one stand-in: (stand-in row -> its group, the
    seq and row of the span that takes its place, and the stand-in's parent, which becomes the span's), and (such a
    group -> its rows that took no place: spans that fit no run of the input, left in their own group).

    Such keys repeat (a call id and tool name: Kimi K2's ``functions.runSql:1`` in every run, OpenRouter's
    ``tool_0_runSql`` at every step, a mock model's), so a span, in its key's order of start, goes where it fits:
    to a stand-in left whose request (the stand-in's start, a model call's) is not after the span's start, in a
    group whose time span holds that start. Of several (concurrent runs of one server): the stand-in that asked for
    exactly the span's arguments where no other span of its time ran with them and no run's span is missing
    (:func:`_claims`: a model that wrote ``limit: 5`` is the one whose span ran with 5, though a run whose model
    left ``limit`` out agrees too); then
    those that asked for the span's arguments (:func:`_agree`: the span records them as the tool's schema parsed
    them), a stand-in another span claims last of these; then the one whose request ended nearest the span's start
    (a streamed call runs its tool as the request's last chunks arrive). Without times to tell (a span or a group
    that records none) a span is placed only where its key is unique: one span, one stand-in."""
    placed: dict[int, tuple[str, int, int, str | None]] = {}
    left: dict[str, set[int]] = {}
    keys = [k for (k,) in db.execute("SELECT DISTINCT s.sid FROM span s WHERE s.stand = 1 AND EXISTS "
                                     "(SELECT 1 FROM span f WHERE f.gkey = s.sid AND f.stand = 0)")]
    if not keys:
        return placed, left
    windows = {k: (lo, hi) for k, lo, hi in db.execute(
        "SELECT gkey, MIN(start), MAX(COALESCE(finish, start)) FROM span WHERE stand = 0 GROUP BY gkey")}
    for key in keys:
        [(count,)] = db.execute("SELECT COUNT(*) FROM span WHERE gkey = ? AND stand = 0", (key,))
        spans = ((rowid, seq, Node.from_json(payload)) for rowid, seq, payload in db.execute(  # one at a time
            "SELECT rowid, seq, payload FROM span WHERE gkey = ? AND stand = 0 ORDER BY start IS NULL, start, seq",
            (key,)))
        stands = [(rowid, gkey, Node.from_json(payload)) for rowid, gkey, payload in db.execute(
            "SELECT rowid, gkey, payload FROM span WHERE sid = ? AND stand = 1 AND gkey != ? "
            "ORDER BY start IS NULL, start, seq", (key, key))]
        # stand-ins by request time; ``active``: those asked by now whose run has not ended (a key every run of a
        # server repeats is thousands of stand-ins, and only the runs going on at once compete for a span)
        waiting = deque(s for s in stands if s[2].start is not None and (windows.get(s[1]) or (None,))[0] is not None)
        claims = _claims(db, key, waiting, windows)
        active: list[tuple[int, str, Node]] = []
        timed = {s[0] for s in waiting}
        left[key] = set()
        seen: set[int] = set()  # the spans placed or left so far: a claim of theirs binds no other span
        for rowid, seq, span in spans:
            seen.add(rowid)
            at = span.start
            if at is not None:
                while waiting and waiting[0][2].start <= at:  # type: ignore[operator]
                    active.append(waiting.popleft())
                active = [s for s in active if windows[s[1]][1] >= at]
            fits = active if at is not None else []
            if fits:
                stand = min(fits, key=lambda s: (claims.get(s[0]) != rowid, not _agree(s[2].arguments, span.arguments),
                                                 claims.get(s[0], rowid) not in seen,  # claimed by a span to come
                                                 abs((s[2].end if s[2].end is not None else s[2].start) - at)))
                active.remove(stand)
            elif count == len(stands) == 1 and (at is None or stands[0][0] not in timed):
                stand = stands[0]  # no time to tell by: the key is unique
            else:
                left[key].add(rowid)
                continue
            placed[stand[0]] = (stand[1], seq, rowid, stand[2].parent)
    return placed, left


def _claims(db: sqlite3.Connection, key: str, stands: deque[tuple[int, str, Node]],
            windows: dict[str, tuple[float, float]]) -> dict[int, int]:
    """Stand-in row -> the one span row of ``key`` that ran with exactly the arguments the stand-in asked for and
    started in its time (its request's start to its run's end): the pairing that tells two concurrent runs apart
    when one model wrote a key the other left for the schema to fill (review R4 of round 48: each run showed the
    other's failure). Where two spans of that time ran with them, nothing tells which is whose, and no claim is
    made (the time decides: with a default filled, both runs' spans equal the one whose model wrote it). Nor where
    the key's spans from the earliest request of the stand-ins asking when the span started to the stand-in's end
    are fewer than those stand-ins: one of those
    runs' spans is missing (AI SDK 5 writes a detached tool span as a trace of its own, which a sampler drops apart
    from its run), and the span left may be that run's, its default filled (review RV of round 49: the run whose
    span was sampled out claimed the other's). Read by arguments' digest, one span at a time."""
    starts: dict[bytes, tuple[list[float], list[int]]] = {}  # arguments' digest -> (starts, rows), in order of start
    every: list[float] = []  # the starts of all the key's spans, whatever their arguments
    for rowid, start, payload in db.execute("SELECT rowid, start, payload FROM span WHERE gkey = ? AND stand = 0 "
                                            "AND start IS NOT NULL ORDER BY start, seq", (key,)):
        at, rows = starts.setdefault(_digest(Node.from_json(payload).arguments), ([], []))
        at.append(start)
        rows.append(rowid)
        every.append(start)
    by_start = sorted((stand.start, windows[gkey][1]) for _, gkey, stand in stands)  # type: ignore[type-var]
    asked = [start for start, _ in by_start]
    ended = sorted(end for _, end in by_start)
    reach = list(accumulate((end for _, end in by_start), max))  # the latest end among the stand-ins so far
    claims: dict[int, int] = {}
    for rowid, gkey, stand in stands:
        at, rows = starts.get(_digest(stand.arguments), ([], []))
        first, last = bisect_left(at, stand.start), bisect_right(at, windows[gkey][1])
        if last - first != 1:
            continue
        asking = bisect_right(asked, at[first]) - bisect_left(ended, at[first])  # stand-ins going on at its start
        # their spans are counted from the earliest of their requests: a run going on since before this one's
        # (a third run of the server) ran its call before this stand-in asked (review RF of round 49)
        since = min(stand.start, asked[bisect_left(reach, at[first])])
        # and the runs by the same measure: every run going on at some time from then to this one's end (a short
        # third run inside that time brought its span into the count, not itself: review R2B of round 49)
        asking = max(asking, bisect_right(asked, windows[gkey][1]) - bisect_left(ended, since))
        if bisect_right(every, windows[gkey][1]) - bisect_left(every, since) >= asking:
            claims[rowid] = rows[first]
    return claims


def _canonical(value: object) -> str:
    """A JSON value's text, keys sorted: equal values, equal texts."""
    return json.dumps(value, sort_keys=True, default=str)


def _digest(value: object) -> bytes:
    """A JSON value's :func:`_canonical` text, digested: a key as small as ``hash()``'s that two different argument
    texts do not share (``hash()`` of two texts can be equal, and a span would then claim the wrong stand-in)."""
    return hashlib.blake2b(_canonical(value).encode(), digest_size=16).digest()


def _agree(asked: object, ran: object) -> bool:
    """Whether a model's tool-call arguments (``asked``, as the model wrote them) may be those a tool span ran with
    (``ran``): the same JSON value in every key both objects have, at any depth. Not equality: AI SDK records a
    span's arguments after the tool's schema parsed them, its defaults filled (``limit: 100`` the model left out)
    and, zod's default, keys the schema does not know stripped; a run whose model wrote fewer keys is still the
    one that asked (review R3 of round 48: concurrent runs got each other's results when a default was filled)."""
    if isinstance(asked, dict) and isinstance(ran, dict):
        return all(_agree(value, ran[key]) for key, value in asked.items() if key in ran)
    if isinstance(asked, list) and isinstance(ran, list):
        return len(asked) == len(ran) and all(_agree(a, r) for a, r in zip(asked, ran))
    return _canonical(asked) == _canonical(ran)


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

"""The spool joins a trace caused by another (AutoGen's runtime starts a trace per message it publishes) into the
group its chain started from (review 2, F6): a long chain costs time in proportion to its length, in any order."""

from __future__ import annotations

from trajsearch.ingest.adapters._spans import Node
from trajsearch.ingest.spool import Spool

#: An AutoGen team run of this many published messages, one trace each, each caused by the one before.
CHAIN = 12_000


def _spool_chain(keys: list[str]) -> Spool:
    """A spool of traces ``keys``, first seen in chain order (a span of each, unlinked), whose spans naming their
    cause (trace ``keys[i]`` caused by ``keys[i - 1]``) come newest first: the order a union-find without path
    compression walks the whole chain for each trace."""
    spool = Spool()
    for i, key in enumerate(keys):
        spool.add(key, Node(id=f"run-{i}", parent=None, role="agent", name="handle", seq=i), None, "traces.jsonl",
                  f"line {i + 1}")
    for i in reversed(range(1, len(keys))):
        node = Node(id=f"send-{i}", parent=f"run-{i}", role="agent", name="publish", seq=2 * len(keys) - i,
                    info={"caused_by": [keys[i - 1]]})
        spool.add(keys[i], node, None, "traces.jsonl", f"line {2 * len(keys) - i}")
    return spool


def test_a_long_chain_of_caused_traces_linked_newest_first_joins_under_its_uncaused_root() -> None:
    """12,000 linked traces whose links come newest first are one run, keyed by the trace its chain started from
    (the one caused by none). (Measured once, not asserted: a timing test fails on a busy machine: 5.6 s with the
    quadratic walk, 0.4 s with path halving.)"""
    keys = [f"trace-{n:05d}" for n in range(CHAIN)]
    spool = _spool_chain(keys)
    try:
        [(key, source, position, nodes)] = list(spool.groups("trace"))
    finally:
        spool.close()
    assert key == keys[0] and len(nodes) == 2 * CHAIN - 1
    assert (source, position) == ("traces.jsonl", "line 1")  # where the run's first span was read

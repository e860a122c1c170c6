"""File descriptors: what each listener of one server process may keep open of the process's limit.

One process holds the index (Milvus Lite's files and its own gRPC channel), the trace files, gRPC's connections and
the web pages' connections, all under one ``RLIMIT_NOFILE`` (systemd's default for a service: 1024). A listener that
accepts without bound lets one client's idle connections take every descriptor, and then every tenant's call fails
and the index and trace files cannot be opened (probe 52 and 53, SV3/SV4). So each listener keeps at most
:func:`connection_budget` connections: a quarter each for gRPC and the pages, half left for the rest.
"""

from __future__ import annotations

import resource


def connection_budget() -> int:
    """Most connections one listener keeps open: a quarter of the process's file descriptors (at least 64, at most
    4096). Read when a server is made: a limit raised before (``ulimit -n``, systemd's ``LimitNOFILE``) counts."""
    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft == resource.RLIM_INFINITY:
        return 4096
    return max(64, min(4096, soft // 4))

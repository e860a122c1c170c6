"""File descriptors: what each listener of one server process may keep open of the process's limit.

One process holds the index (Milvus Lite's files and its own gRPC channel), the trace files, gRPC's connections and
the web pages' connections, all under one ``RLIMIT_NOFILE`` (systemd's default for a service: 1024). A listener that
accepts without bound lets one client's idle connections take every descriptor, and then every tenant's call fails
and the index and trace files cannot be opened (probe 52 and 53, SV3/SV4). So each listener keeps at most
:func:`connection_budget` connections: a quarter each for gRPC and the pages, half left for the rest.
"""

from __future__ import annotations

import resource


def raise_file_limit() -> int:
    """Raise this process's soft ``RLIMIT_NOFILE`` to its hard limit, as a server should (nginx's
    ``worker_rlimit_nofile``, Go's runtime since 1.19 do the same), and return the soft limit then. systemd gives a
    service 1024 soft and 524288 hard: the soft one left a quarter of it, 256 gRPC connections, and the 257th agent
    was closed unsaid (review RSV4 of probe 53). Left as it is where the kernel refuses (an infinite hard limit
    above ``nr_open``)."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    for target in (hard, 1 << 20):
        if target == resource.RLIM_INFINITY or (soft != resource.RLIM_INFINITY and target <= soft):
            continue
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
            return target
        except (ValueError, OSError):
            continue
    return soft


def file_limit() -> int:
    """This process's soft limit of open files (what ``serve`` says it raised from)."""
    return resource.getrlimit(resource.RLIMIT_NOFILE)[0]


def connection_budget() -> int:
    """Most connections one listener keeps open: a quarter of the process's file descriptors (at least 64, at most
    4096). Asked when a server is made: a limit raised before (``serve``'s :func:`raise_file_limit`, ``ulimit -n``,
    systemd's ``LimitNOFILE``) counts."""
    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft == resource.RLIM_INFINITY:
        return 4096
    return max(64, min(4096, soft // 4))

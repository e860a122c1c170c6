"""Child processes of ``ingest --workers`` end with their parent, even after a ``kill -9`` of it.

A worker left writing, or a ``milvus-lite server`` left holding the data
directory's lock, would make the rerun the README promises fail. Each child
asks the kernel for a signal when its parent dies (Linux ``PR_SET_PDEATHSIG``)
*itself*, first thing after it starts: doing it in a ``preexec_fn`` instead ran
Python between fork and exec in a parent with gRPC threads, and gRPC's fork
handlers then aborted the child now and then ("epoll_wait error: Bad file
descriptor", exit -6). The parent's pid is passed along so that a parent that
died before the request was made is noticed too.

    python -m trajsearch.ingest.orphans PARENT_PID milvus-lite server --data-dir D ...
"""

from __future__ import annotations

import os
import signal
import sys


def die_with_parent(parent_pid: int, sig: int = signal.SIGTERM) -> None:
    """Have the kernel send ``sig`` to this process when its parent dies; exit now if it already has.

    SIGTERM lets a ``milvus-lite server`` close its store cleanly; workers hold
    nothing that a rerun cannot redo.
    """
    try:
        import ctypes

        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, int(sig))  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):  # not Linux: the parent's own clean-up is all there is
        return
    if os.getppid() != parent_pid:  # the parent died before the request took effect
        os.kill(os.getpid(), sig)


def main(argv: list[str]) -> int:
    """``PARENT_PID milvus-lite ARGS...``: run ``milvus-lite ARGS`` (in this process) as a child that dies with its parent."""
    if len(argv) < 3 or argv[2] != "milvus-lite":
        sys.stderr.write("usage: python -m trajsearch.ingest.orphans PARENT_PID milvus-lite ARGS...\n")
        return 2
    die_with_parent(int(argv[1]))
    # a terminal's Ctrl-C reaches the whole process group: the workers finish their batch, so the server they write
    # to must outlive it; the ingest stops the server (SIGTERM) once they have
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    from milvus_lite.cmdline import main as milvus_lite_main

    from ..store import lite_search

    lite_search.install()  # the server's engine runs in this process: its dense searches skip per-row loops

    return milvus_lite_main(argv[3:])


if __name__ == "__main__":
    sys.exit(main(sys.argv))

"""Child processes of ``ingest --workers`` end with their parent, even after a ``kill -9`` of it.

A worker left writing, or a ``milvus-lite server`` left holding the data
directory's lock, would make the rerun the README promises fail. Each child
asks the kernel for a signal when its parent dies (Linux ``PR_SET_PDEATHSIG``)
*itself*, first thing after it starts: doing it in a ``preexec_fn`` instead ran
Python between fork and exec in a parent with gRPC threads, and gRPC's fork
handlers then aborted the child now and then ("epoll_wait error: Bad file
descriptor", exit -6). The parent's pid is passed along so that a parent that
died before the request was made is noticed too.

The server ignores SIGINT and SIGTERM: a terminal's Ctrl-C, GNU ``timeout``,
systemd (``KillMode=control-group``) or ``kill -TERM -- -PGID`` signal the
whole process group, and the workers then finish the batch in hand, which the
server must outlive (probe G, G1: a group SIGTERM killed it at once, the
batches in hand failed and their runs were left half-written). It stops on
:data:`STOP` instead, which the ingest sends once its workers have stopped and
the kernel sends when the ingest dies; milvus-lite closes its store cleanly
only on KeyboardInterrupt, which is what :data:`STOP` raises.

    python -m trajsearch.ingest.orphans PARENT_PID milvus-lite server --data-dir D ...
"""

from __future__ import annotations

import os
import signal
import sys

#: The signal that stops a server started through :func:`main` (cleanly): the one no process group is sent.
STOP = signal.SIGUSR1


def ingest_of(cmd: str) -> int | None:
    """The ingest a ``milvus-lite server`` started through this module serves (``... trajsearch.ingest.orphans
    <ingest pid> ...``), from its command line; None for any other process."""
    words = cmd.split()
    if "trajsearch.ingest.orphans" not in words:
        return None
    at = words.index("trajsearch.ingest.orphans") + 1
    return int(words[at]) if at < len(words) and words[at].isdigit() else None


def die_with_parent(parent_pid: int, sig: int = signal.SIGTERM) -> None:
    """Have the kernel send ``sig`` to this process when its parent dies; exit now if it already has.

    A ``milvus-lite server`` asks for :data:`STOP`, to close its store cleanly; workers for SIGKILL: they hold
    nothing that a rerun cannot redo.
    """
    try:
        import ctypes

        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, int(sig))  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):  # not Linux: the parent's own clean-up is all there is
        return
    if os.getppid() != parent_pid:  # the parent died before the request took effect
        os.kill(os.getpid(), sig)


def _stop(signum: int, frame: object) -> None:
    """Stop the server as milvus-lite's ``run_server`` stops on Ctrl-C: in-flight requests drained, store closed.
    Once: a second STOP (the ingest's, then the kernel's as it dies) must not cut that close short."""
    signal.signal(STOP, signal.SIG_IGN)
    raise KeyboardInterrupt


def main(argv: list[str]) -> int:
    """``PARENT_PID milvus-lite ARGS...``: run ``milvus-lite ARGS`` (in this process) as a child that dies with its parent."""
    if len(argv) < 3 or argv[2] != "milvus-lite":
        sys.stderr.write("usage: python -m trajsearch.ingest.orphans PARENT_PID milvus-lite ARGS...\n")
        return 2
    # a signal to the whole process group (Ctrl-C, timeout, systemd) lets the workers finish their batch, so the
    # server they write to must outlive it; the ingest stops the server (STOP) once they have
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    signal.signal(STOP, _stop)
    try:
        die_with_parent(int(argv[1]), STOP)
        from milvus_lite.cmdline import main as milvus_lite_main

        from ..store import lite_search

        lite_search.install()  # the server's engine runs in this process: its dense searches skip per-row loops
        return milvus_lite_main(argv[3:])
    except KeyboardInterrupt:  # STOP before the server ran (it handles its own): nothing to close
        return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))

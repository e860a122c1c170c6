"""Why an embedded store cannot be opened: another process holds it, the directory is read-only or a file.

Milvus Lite allows one process per data directory (an ``flock`` on its
``LOCK`` file) and reports a refusal only as "Open local milvus failed". The
kernel drops an ``flock`` when its holder dies, so a lock is never stale for
long; but a holder that was just killed may take a moment to go, hence the
short wait before giving up. The error then names the holder and the command
that frees the directory.
"""

from __future__ import annotations

import fcntl
import os
import time
from pathlib import Path

from ..fsutil import file_in_the_way
from ..ingest.orphans import ingest_of

LOCK_FILENAME = "LOCK"


class StoreOpenError(RuntimeError):
    """The embedded store could not be opened; the message says why and what to do."""


def is_locked(data_dir: Path) -> bool:
    """Whether another process holds the data directory's lock right now."""
    lock = data_dir / LOCK_FILENAME
    try:
        fd = os.open(lock, os.O_RDWR)
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        return True
    else:
        fcntl.flock(fd, fcntl.LOCK_UN)
        return False
    finally:
        os.close(fd)


def _has_open(proc: Path, target: str) -> bool:
    try:
        return any(os.readlink(fd) == target for fd in (proc / "fd").iterdir())
    except OSError:
        return False


def held_here(data_dir: Path) -> bool:
    """Whether this very process has the lock file open (a failed open of ours, not a rival)."""
    return _has_open(Path("/proc/self"), str((data_dir / LOCK_FILENAME).resolve()))


def holders(data_dir: Path) -> list[tuple[int, str]]:
    """(pid, command line) of the processes with the lock file open (those this user may see)."""
    target = str((data_dir / LOCK_FILENAME).resolve())
    found = []
    for proc in Path("/proc").glob("[0-9]*"):
        try:
            if any(os.readlink(fd) == target for fd in (proc / "fd").iterdir()):
                # its arguments' own line breaks (a ``python -c`` script) too: the error naming it is one line
                cmd = " ".join((proc / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace").split())
                found.append((int(proc.name), cmd))
        except OSError:
            continue
    return [h for h in found if h[0] != os.getpid()]


def _not_writable(data_dir: Path) -> str | None:
    """Why this user cannot write ``data_dir``, or create it: the directory itself, or the nearest folder above it
    that is there, where it is not (a store under a read-only home said only "[Errno 13] Permission denied:
    '/srv/ro/milvus.db'", naming the path but not the fix: round 24, NEWB)."""
    place = next((p for p in (data_dir, *data_dir.parents) if p.exists()), None)
    if place is None or os.access(place, os.W_OK | os.X_OK):
        return None
    elsewhere = "point --uri (or $TRAJSEARCH_URI, $TRAJSEARCH_HOME) at a folder it can write"
    if os.statvfs(place).f_flag & os.ST_RDONLY:  # no access to give: the mount itself (said as the OS says it)
        what = "is read-only" if place == data_dir else "cannot be created"
        return f"the data directory {data_dir} {what}: {place} lies on a read-only file system (Read-only file " \
               f"system): {elsewhere}"
    what = "is read-only" if place == data_dir else f"cannot be created: {place} is not writable by this user"
    return f"the data directory {data_dir} {what}: give this user write access to {place}, or {elsewhere}"


def diagnose(data_dir: Path, *, wait: float = 5.0) -> str | None:
    """Why ``data_dir`` cannot be opened (None: not a lock or permission problem).

    Waits up to ``wait`` seconds for a lock whose holder may be going away.
    """
    if (file := file_in_the_way(data_dir)) is not None:  # said "FileExistsError: [Errno 17] File exists" alone
        what = "is a file" if file == data_dir else f"lies under {file}, which is a file"
        return (f"the data directory {data_dir} {what}, not a directory: Milvus Lite keeps a store in a directory "
                "of its own; point --uri (or $TRAJSEARCH_URI, $TRAJSEARCH_HOME) at a directory, or at a path not yet "
                "there to create one")
    if (why := _not_writable(data_dir)) is not None:
        return why
    deadline = time.monotonic() + wait
    while is_locked(data_dir):
        if time.monotonic() >= deadline:
            who = holders(data_dir)
            if who:
                pid, cmd = who[0]
                shown = cmd if len(cmd) <= 120 else cmd[:119] + "…"  # a cut command line says it is cut
                if (ingest := ingest_of(cmd)) is not None:  # an ingest's server: it outlives a SIGTERM (review 4, D5)
                    stop = f"stop that ingest (kill {ingest}), or close its server (kill -USR1 {pid})"
                else:
                    stop = f"stop it (kill {pid})"
                return (f"the data directory {data_dir} is in use by process {pid} ({shown}); "
                        f"Milvus Lite allows one process per directory: {stop} or query it through "
                        "its server (trajsearch serve, then --server)")
            return (f"the data directory {data_dir} is in use by another process; Milvus Lite allows one "
                    "process per directory: stop that process or use a server (trajsearch serve, then --server)")
        time.sleep(0.2)
    return None

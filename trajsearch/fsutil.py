"""Crash-safe file writes shared by the trace store and the ingest checkpoints, and private directories.

Files written here are 0600 (``mkstemp``) and the directories the store creates are 0700
(:func:`private_dir`): they hold every tenant's run text, which no other local account may read.

It sits at the package root so that both ``store`` and ``ingest`` can import
it without ``store`` reaching back up the data flow into ``ingest``.
"""

from __future__ import annotations

import os
import stat
import tempfile
from pathlib import Path


def atomic_write(path: Path, data: bytes, *, sync_dir: bool = False, tag: str = "") -> None:
    """Replace ``path`` with ``data`` so that readers, and a crash, see the old file or all of the new one.

    The bytes go to a temp file beside ``path`` (the same filesystem, so the
    rename is atomic; its name starts with a dot, so name patterns that skip
    hidden files never see it half-written), are fsynced, then renamed over
    ``path``. On any failure the temp file is removed and the error re-raised.
    ``path.parent`` must exist. ``sync_dir`` also fsyncs the directory, so the
    rename itself survives a power loss. ``tag`` goes into the temp file's name (the trace store names its
    writer there, so that the next ingest can remove what a killed writer left).
    """
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.{tag}", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    if sync_dir:
        fsync_dir(path.parent)


def private_dir(path: Path) -> None:
    """Create ``path`` (and missing parents) if it does not exist; ``path`` itself gets mode 0700.

    The store's directories hold every tenant's text, and files the engine writes inside them
    (Milvus Lite's parquet segments) get the process umask's 0644: only the directory mode keeps
    other local accounts out. An existing directory keeps the mode its owner gave it.
    """
    path.mkdir(mode=0o700, parents=True, exist_ok=True)


def own_private(target: int | Path, mode: int) -> None:
    """Give ``target`` (an open file, or a path) ``mode`` where it is this account's regular file or directory and
    others may read it: the modes ``os.open`` and ``mkdir`` give apply only to what they create, so state an older
    version made under umask 022 kept 0644/0755 (review rev1, D9). A device (``--dead-letter /dev/stderr``), another
    account's file or a missing one is left as it is."""
    try:
        st = os.stat(target)
    except FileNotFoundError:
        return
    if (getattr(os, "geteuid", lambda: None)() == st.st_uid and st.st_mode & 0o077
            and (stat.S_ISREG(st.st_mode) or stat.S_ISDIR(st.st_mode))):
        os.chmod(target, mode)


def fsync_dir(directory: Path) -> None:
    """Make a rename in ``directory`` durable; best effort where directories can't be opened."""
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def pid_alive(pid: int) -> bool:
    """Whether process ``pid`` of this host runs: what the sweeps of a dead writer's leftovers ask before removing
    them (temp files, stream copies, a dead ingest's milvus-lite server). Another user's process is alive."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # PermissionError: alive, another user's
        return True
    return True


def file_in_the_way(folder: Path) -> Path | None:
    """The nearest existing path at or above ``folder`` when it is no directory (None: there is a directory, or
    nothing): what stops ``folder`` being made, for an error that names it ("[Errno 17] File exists" named the
    path asked for, or a file's, and no option)."""
    for path in (folder, *folder.parents):
        if path.exists() or path.is_symlink():
            return None if path.is_dir() else path
    return None

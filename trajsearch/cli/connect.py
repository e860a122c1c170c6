"""Opening the runs a command works on: the embedded store or a server, behind one interface.

Every read and write command goes through ``connect``, so the library's and the service's errors
become the same one-line messages and exit codes whichever backend answers.
"""

from __future__ import annotations

import threading
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Iterator

import typer

from .disk import DiskFull
from .output import err, fail, plain, say_interrupted, stopped

if TYPE_CHECKING:
    from ..backend import Backend


@contextmanager
def connect(server: str | None, ca: Path | None, uri: str | None, traces: str | None,
            tenant: str | None, *, require_key: bool = True, quiet: bool = False,
            warm: bool = False) -> Iterator[Backend]:
    """The embedded store or the server, with library and service errors as one line each (``require_key=False``:
    a server reached without an API key, for ``health``; ``quiet``: no word of a slow open, see :func:`opening`;
    ``warm``: the model made before the embedded store opens, for a command that writes what it embeds)."""
    from ..backend import REINGEST, open_backend
    from ..indexer import IngestError
    from ..store.index import SchemaMismatchError
    from ..store.lock import StoreOpenError
    from ..store.traces import TraceCorruptError, TraceNotFoundError, TraceStoreError

    if not server:
        note_unused_key(uri)
        quiet_rpc_errors()
    store, opened, named = None, False, store_named(server, uri)
    try:
        with ExitStack() as stack:
            with opening(named, quiet=quiet):
                backend = stack.enter_context(open_backend(server=server, ca=ca, uri=uri, traces=traces,
                                                           tenant=tenant, require_key=require_key, warm=warm))
            store, opened = None if backend.remote else backend.api.traces.location, True
            yield backend
    except (KeyboardInterrupt, SystemExit) as exc:  # the open of a large store is long (~30 s at 172k rows): what
        if stopped(exc) and not opened:  # Ctrl-C or SIGTERM there left
            say_interrupted(f"interrupted while opening {named}: nothing read or written")
        raise
    except (typer.Exit, BrokenPipeError, DiskFull):  # a reader that stopped early (`| head`): click ends quietly,
        raise  # exit 1; a full disk the command says itself
    except TraceNotFoundError as exc:  # a LookupError whose message had been its bare URI (KeyError's args)
        fail(f"the run is indexed but its trace is not in the trace store {store or ''}: {exc} (moved or deleted? "
             f"--traces or $TRAJSEARCH_TRACES names where the traces are now; a re-ingest of its dump {REINGEST} "
             "writes it again)", code=1)
    except TraceCorruptError as exc:  # a ValueError too, but the store's fault, not the input's (exit 1, not 2)
        fail(plain(exc), code=1)
    except (ValueError, PermissionError) as exc:  # bad input, a tenant the key does not hold, a refused key
        if server:
            from ..service.client import Unauthenticated, refused_key
            if isinstance(exc, Unauthenticated):
                fail(refused_key(server, exc))
        fail(plain(exc))
    except (LookupError, ConnectionError, TimeoutError, StoreOpenError, SchemaMismatchError,
            TraceStoreError, IngestError) as exc:  # not found, server down, store in use, ...
        fail(plain(exc), code=1)
    except Exception as exc:  # noqa: BLE001 - a server's other refusals (its disk full: RESOURCE_EXHAUSTED)
        from ..service.client import ServiceError
        from .disk import disk_full_line, store_disk_full

        if not server and store_disk_full(exc, uri, traces):  # a read may write: an interrupted ingest's runs go
            fail(disk_full_line(exc, uri, traces), code=1)
        if not (server and isinstance(exc, ServiceError)):
            raise
        fail(plain(exc), code=1)


#: Seconds a step runs before a terminal is told what it waits for.
SLOW_S = 2.0


@contextmanager
def opening(what: str, *, quiet: bool = False) -> Iterator[Callable[[], None]]:
    """On a terminal, ``opening WHAT…`` once the open inside has run :data:`SLOW_S` seconds: the open of a large
    embedded store loads it whole (~30 s at 172k rows) before any command, an ingest's progress bar or a server's
    first line among them, shows a thing, as if it hung. Every open of the CLI's says it here (``connect``,
    ``serve``'s and ``ui``'s index, an ingest's workers' store). Not in a pipe or a log, whose readers are
    programs, nor when ``quiet`` (``ingest -q``). Yields what ends the wait early: an open inside a longer step."""
    timer = threading.Timer(SLOW_S, lambda: err.print(f"opening {what}…", highlight=False))
    timer.daemon = True
    if err.is_terminal and not quiet:
        timer.start()
    try:
        yield timer.cancel
    finally:
        timer.cancel()


def store_named(server: str | None, uri: str | None) -> str:
    """What a command opens, as a user named it: the server, or the store (the default one where none is named)."""
    from ..config import default_uri

    return f"the server {server}" if server else f"the store {uri or default_uri()}"


def quiet_rpc_errors() -> None:
    """pymilvus logs each failed call with its traceback (a full disk: one per batch, or one on opening a store whose
    half-written runs must be removed first) on a logger its import resets: so pymilvus is imported first, then that
    logger is silenced unless --debug. The command's error line says what failed."""
    import logging
    import os

    import pymilvus  # noqa: F401 - its import configures its loggers, the one silenced below among them

    from . import _DEBUG

    if not (_DEBUG["on"] or os.environ.get("TRAJSEARCH_DEBUG")):
        logging.getLogger("pymilvus.decorators").setLevel(logging.CRITICAL)


def note_unused_key(uri: str | None) -> None:
    """Says so when an API key is set but no server named: a user who exported the key meant to reach a server,
    and without this the command answered from an embedded store (a new, empty ``./.trajsearch``: "tenant
    'default' holds no runs") with no word that the key went unused."""
    import os

    from ..config import default_uri
    from ..service.auth import API_KEY_ENV

    if os.environ.get(API_KEY_ENV, "").strip():
        err.print(f"note: ${API_KEY_ENV} is set but no trajsearch server is named (--server, $TRAJSEARCH_SERVER): "
                  f"this command opens the store at {uri or default_uri()} itself, and the key is not used",
                  highlight=False, markup=False)

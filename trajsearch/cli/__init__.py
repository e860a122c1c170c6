"""``trajsearch``: a thin typer CLI over the library façade.

Read commands print a readable view by default and JSON with ``--json``.
Every command takes ``--uri`` (a local path for embedded Milvus Lite, or
``http://host:19530`` for a Milvus server) and ``--traces``.

This module assembles the app from the command modules (one per concept) and
holds ``main``, the console script, which turns an unexpected error into one line.
"""

from __future__ import annotations

import gc
import inspect
import os
import re
import signal
import sys
import threading


def _interrupted_while_starting(signum: int, frame: object) -> None:
    """Ctrl-C or SIGTERM during the imports below (a cold start's first 1-2 s), before ``main`` can say anything:
    one word and exit 130 or 143, not a traceback through the imports and death by the signal. Nothing is open or
    written yet."""
    sys.stderr.write("interrupted\n")
    sys.stderr.flush()
    os._exit(128 + signum)


# held only while this package imports, in the main thread of a process that takes Ctrl-C (not one ignoring SIGINT)
_STARTING = (threading.current_thread() is threading.main_thread()
             and signal.getsignal(signal.SIGINT) is signal.default_int_handler)
if _STARTING:
    signal.signal(signal.SIGINT, _interrupted_while_starting)
# and SIGTERM, where it is the default's (death), until ``main`` makes it an exit through the command's ``with``
_STARTING_TERM = (threading.current_thread() is threading.main_thread()
                  and signal.getsignal(signal.SIGTERM) is signal.SIG_DFL)
if _STARTING_TERM:
    signal.signal(signal.SIGTERM, _interrupted_while_starting)

# pymilvus' keepalive pings trip milvus-lite's in-process server into logging GOAWAY noise
os.environ.setdefault("GRPC_VERBOSITY", "ERROR")
import logging  # noqa: E402

# milvus-lite logs a traceback when it cannot open a store; the CLI says why in one line instead
logging.getLogger("milvus_lite").setLevel(logging.CRITICAL)

import typer  # noqa: E402
from rich.markup import escape  # noqa: E402

from .service_commands import register as _register_service  # noqa: E402
from .delete_command import delete  # noqa: E402
from .demo_command import SAMPLE, demo  # noqa: E402
from .export_command import export  # noqa: E402
from .failures_command import failures  # noqa: E402
from .ingest_commands import formats, ingest  # noqa: E402
from .output import STOPPED, err, leave_interrupted, sigterm_exits  # noqa: E402
from .query_commands import exemplars, search, show, similar, stats  # noqa: E402
from .server_commands import health, whoami  # noqa: E402

__all__ = ["SAMPLE", "app", "main"]

app = typer.Typer(
    help="Search past AI-agent runs: ingest trace dumps, find similar runs, show the steps that matter.",
    no_args_is_help=True,
    add_completion=False,
)

# registration order is the order `trajsearch --help` lists the commands in
for _command in (ingest, formats, delete, search, similar, show, stats, exemplars, failures, export, whoami, health,
                 demo):
    app.command()(_command)
_register_service(app)  # serve, ui, mcp and keys


def _unbroken(doc: str) -> str:
    """A command's docstring as its --help shows it: each paragraph one line, which the help wraps at the terminal's
    width. Typer keeps a docstring's line breaks, so a paragraph came out cut twice, at the source's 120 columns and
    the terminal's, a ragged line of a word or two every other line (round 25, CLI2). A paragraph opening with
    ``\\b`` (click's mark) keeps its lines, an indented line going on the one before it: a list, such as ingest's
    exit statuses."""
    paragraphs = inspect.cleandoc(doc).split("\n\n")
    return "\n\n".join(re.sub(r"\n\s+", " ", p.removeprefix("\b\n")) if p.startswith("\b")
                       else " ".join(p.split("\n")) for p in paragraphs)


def _help_unbroken(typer_app: typer.Typer) -> None:
    """Every command's help, in ``typer_app`` and its sub-apps (``keys``), as :func:`_unbroken` says."""
    for info in typer_app.registered_commands:
        info.help = _unbroken(info.help or info.callback.__doc__ or "")
    for group in typer_app.registered_groups:
        _help_unbroken(group.typer_instance)


_help_unbroken(app)

if _STARTING:  # imported: from here on Ctrl-C is the command's KeyboardInterrupt, which ``main`` and its ``with`` say
    signal.signal(signal.SIGINT, signal.default_int_handler)
if _STARTING_TERM:  # imported: ``main`` makes SIGTERM an exit (output.sigterm_exits); imported elsewhere, the default
    signal.signal(signal.SIGTERM, signal.SIG_DFL)

_DEBUG = {"on": False}

#: The command this process runs (``search``, ``keys``), as the line of an interrupted one names it.
_COMMAND = {"name": ""}

#: The commands that write nothing the user keeps until they say so: stopped, they leave everything as it was,
#: which their line says (``export`` says itself what it leaves once it writes: stdout cut short, its file as it was
#: or whole). A command that writes says what it leaves itself (ingest, delete), or is named without that claim
#: (``serve`` and ``ui`` take writes: an ingest over --server, a delete).
_WRITE_NOTHING = frozenset({"formats", "search", "similar", "show", "stats", "exemplars", "failures", "export",
                            "whoami", "health", "mcp"})


@app.callback()
def _options(ctx: typer.Context,
             debug: bool = typer.Option(False, "--debug", envvar="TRAJSEARCH_DEBUG",
                                        help="Show the full traceback of an unexpected error.")) -> None:
    """Search past AI-agent runs: ingest trace dumps, find similar runs, show the steps that matter."""
    _DEBUG["on"] = debug
    _COMMAND["name"] = ctx.invoked_subcommand or ""


def _stopped_said() -> str:
    """What an interrupted command that said nothing itself stopped, and that it wrote nothing where it writes
    nothing (``search stopped, nothing written``); empty before a command began."""
    name = _COMMAND["name"]
    return f"{name} stopped, nothing written" if name in _WRITE_NOTHING else f"{name} stopped" if name else ""


def main(commands: typer.Typer | None = None) -> None:
    """The ``trajsearch`` command (``commands``: another app of its commands, ``python -m trajsearch.service``'s): an
    unexpected error is one line (exit 1), its traceback with --debug; a command stopped by Ctrl-C or SIGTERM leaves
    at once in one line (:func:`~trajsearch.cli.output.leave_interrupted`)."""
    try:
        with sigterm_exits():
            (commands or app)(standalone_mode=True)
    except SystemExit as exc:
        if exc.code not in STOPPED:  # done (click ends every command so, 0 included)
            # Its store is closed and its files written (each in its ``with``). The interpreter's exit then collected
            # the whole heap pymilvus, pandas and the rest left: ~1 s after the last atexit handler, of a 5-7 s
            # ``show`` or ``stats``. Frozen, the exit skips that collection (0.1 s, scripts/bench_startup.py): atexit
            # handlers still run (milvus-lite's release, weakref.finalize's: the spools' temporary directories), std
            # streams are flushed, an object no cycle holds is freed as its module is cleared; but an object in a
            # reference cycle is never finalized: its ``__del__`` is not run (the collection ran it). No class of
            # trajsearch's has one; pymilvus's futures' only drop references, its bulk writer's is unused here. What
            # must be closed is closed in a ``with`` (a file in a cycle lost its buffered tail even when collected).
            gc.freeze()
            raise
        code = exc.code
    except KeyboardInterrupt:  # outside the command (typer's parsing): nothing begun
        code = 128 + signal.SIGINT
    except Exception as exc:  # noqa: BLE001 - the last line of defence of a command-line tool
        if _DEBUG["on"] or os.environ.get("TRAJSEARCH_DEBUG"):
            raise
        text = " ".join(str(exc).split())[:500] or type(exc).__name__
        err.print(f"[red]error:[/red] {escape(type(exc).__name__)}: {escape(text)} (run with --debug for the traceback)",
                  highlight=False, soft_wrap=True)  # one line, as a terminal wraps it: not cut at 80 columns
        sys.exit(1)
    else:
        return
    # out of the handler: the frames the interrupt held are let go first (a generator's ``finally``: a spool's copy)
    leave_interrupted(code, _stopped_said())

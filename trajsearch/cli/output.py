"""How every command speaks: results on stdout (readable, or JSON for scripts), errors as one line on stderr.

Kept in one place so that every command fails the same way (exit 2 for bad input, 1 for a failure)
and prints hits the same way.

Run text is untrusted (a web page the agent read, a tool's output): printed raw, its escape sequences
erase or forge lines on the engineer's terminal, retitle it or write the clipboard (OSC 52), and Rich's
``markup=False`` does not stop them. So both consoles show every control character but newline and tab
as a visible escape (``\\x1b``) in ``Console.render_str``, which every string printed goes through (table
cells and rule titles too), before layout, so widths stay right (probe I, I3). ``--json`` keeps its text
whole (its reader is a program) with every control escaped the JSON way (:mod:`trajsearch.jsontext`).
"""

from __future__ import annotations

import os
import re
import signal
import sys
import threading
from contextlib import contextmanager
from typing import Any, Iterator, NoReturn

import typer
from rich.console import Console
from rich.markup import escape
from rich.text import Text

from .. import jsontext
from ..ingest.interrupts import raise_when_out_of_locks
from ..excerpt import excerpt

#: C0 controls but tab and newline, DEL and C1: what a terminal may act on instead of showing; and the characters
#: shown as nothing that reorder or hide the text around them (:data:`trajsearch.jsontext.INVISIBLE`).
_CONTROLS = re.compile(f"[\x00-\x08\x0b-\x1f\x7f-\x9f{jsontext.INVISIBLE}]")


def printable(text: str) -> str:
    """``text`` with each control character a terminal could act on shown as ``\\xNN`` (an invisible one as
    ``\\uNNNN``); a CRLF line end is a line end."""
    text = text.replace("\r\n", "\n")
    return _CONTROLS.sub(_escaped, text) if _CONTROLS.search(text) else text


def _escaped(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


class _TextConsole(Console):
    """A Rich console that prints every string given it through :func:`printable`, and wraps a line only on a
    terminal."""

    def render_str(self, text: str, **kwargs: Any) -> Text:
        return super().render_str(printable(text), **kwargs)

    def print(self, *objects: Any, soft_wrap: bool | None = None, **kwargs: Any) -> None:
        """Rich's ``print``, a line soft-wrapped (left whole) unless the console is a terminal: Rich lays text out at
        80 columns where it is not, so an error in a log or a pipe (``2>&1 | tee``, cron's mail) came cut into
        lines at 80 columns, a path or a fix split across them and no longer found by ``grep`` (round 24, NEWB).
        A terminal wraps a line at its own width either way."""
        super().print(*objects, soft_wrap=(not self.is_terminal) if soft_wrap is None else soft_wrap, **kwargs)


out = _TextConsole()
err = _TextConsole(stderr=True)


def print_json(data: Any) -> None:
    """``data`` as indented JSON, non-ASCII text as it is, controls escaped (:func:`trajsearch.jsontext.dumps`)."""
    sys.stdout.write(jsontext.dumps(data, indent=2, default=str) + "\n")


def fail(message: str, code: int = 2) -> NoReturn:
    """One line on stderr and exit: 2 for bad input, 1 for a failure."""
    err.print(f"[red]error:[/red] {escape(message)}", highlight=False)
    raise typer.Exit(code)


def fail_naming(flag: str, exc: ValueError) -> NoReturn:
    """:func:`fail` with the library's refusal of a flag's value, said as the flag (``since: ...`` as ``--since:
    ...``): ``failures --since 7`` named no flag, while ``search --since 7`` did (review RT2, 5)."""
    fail(f"{flag}: {str(exc).removeprefix(flag.lstrip('-') + ': ')}")


def fail_now(message: str, code: int) -> NoReturn:
    """:func:`fail`, leaving at once: see :func:`leave_now`."""
    err.print(f"[red]error:[/red] {escape(message)}", highlight=False)
    leave_now(code)


#: The exits of a command stopped by a signal: Ctrl-C (typer turns KeyboardInterrupt into exit 130) and SIGTERM
#: (:func:`sigterm_exits` exits 143 through the command's ``with`` blocks).
STOPPED = (128 + signal.SIGINT, 128 + signal.SIGTERM)


def _exit(signum: int, frame: Any) -> None:
    raise SystemExit(128 + signum)


def _exit_out_of_locks(signum: int, frame: Any) -> None:
    raise_when_out_of_locks(frame, SystemExit(128 + signum))


@contextmanager
def sigterm_exits(*, out_of_locks: bool = False) -> Iterator[None]:
    """SIGTERM (a scheduler's timeout, ``timeout``, ``kill``) as a clean exit (status 143) of every command, so that
    its ``with`` blocks close and say what they leave, as on Ctrl-C: the copies of streamed inputs are removed, the
    store is closed. Only ingest had it: ``search``, ``serve`` opening its index, ``export``... died by the signal
    in silence, with no word of what was written. (A SIGKILL's leftovers go at the next ingest, see
    ``read.Streams``.) A server's own handler replaces it while it serves (it drains, then exits 0).

    ``out_of_locks``, around this thread's run of the indexer's pipeline: the exit is raised out of ``threading`` and
    ``queue`` code (see ``ingest.interrupts``: inside, it ended the ingest with "release unlocked lock"); only where
    SIGTERM already is the command's exit, so a program running the commands in its own process keeps its handler."""
    if threading.current_thread() is not threading.main_thread() or (
            out_of_locks and signal.getsignal(signal.SIGTERM) is not _exit):
        yield
        return
    previous = signal.signal(signal.SIGTERM, _exit_out_of_locks if out_of_locks else _exit)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


@contextmanager
def signals_held() -> Iterator[None]:
    """Ctrl-C and SIGTERM held back while the block runs (in the main thread), then let through as they came, to stop
    the command as above (``export``'s two renames: a stop between them left the file without its sidecar). A handler
    of its own, not a signal mask, which blocks only this thread (another of the process takes the signal)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    came: list[int] = []
    previous = {signum: signal.signal(signum, lambda signum, frame: came.append(signum))
                for signum in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)
        if came:
            signal.raise_signal(came[0])


def stopped(exc: BaseException) -> bool:
    """Whether ``exc`` is a command being stopped by Ctrl-C or SIGTERM, as it unwinds the command's ``with`` blocks:
    each says what it leaves alike for both."""
    return isinstance(exc, KeyboardInterrupt) or (isinstance(exc, SystemExit) and exc.code in STOPPED)


#: Whether this command said on Ctrl-C what it leaves (``say_interrupted``): ``main`` says the bare word otherwise.
_INTERRUPT_SAID = [False]


def say_interrupted(line: str) -> None:
    """Say ``line`` (``interrupted: `` and what is written or not) as a command stops on Ctrl-C, once for ``main``,
    which then leaves at once (:func:`leave_interrupted`) without a second, bare ``interrupted``."""
    err.print(line, highlight=False, markup=False)  # (a path or a worker's log in it may hold [brackets])
    _INTERRUPT_SAID[0] = True


def leave_interrupted(code: int, said: str = "") -> NoReturn:
    """A command stopped by Ctrl-C or SIGTERM (``code`` 130, 143), its ``with`` blocks closed (the store among them):
    leave at once, saying ``interrupted`` and ``said`` (what was stopped, whether it wrote) if the command said
    nothing itself. Left to the interpreter's shutdown,
    the exit waited for milvus-lite's in-process gRPC server to finish the call the command no longer waited for,
    in a worker thread shutdown joins (loading a 172k-row store's segments, a rebuild's next 5,000 rows: 2-12 s of
    silence after Ctrl-C), then for the teardown of everything it had read."""
    if not _INTERRUPT_SAID[0]:
        err.print(f"interrupted: {said}" if said else "interrupted", highlight=False)
    leave_now(code)


def leave_now(code: int) -> NoReturn:
    """Exit at once (``os._exit``, the streams flushed): for an ending a thread of gRPC's is still inside, as when
    the server dies, or the user interrupts, while gRPC's thread consumes the request iterator of an ingest over
    --server. Left to the interpreter's shutdown, that thread aborts it ("FATAL: exception not rethrown", or an
    epoll error: exit -6 instead of 1, 130 or 143, on a loaded machine)."""
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)


def plain(exc: BaseException) -> str:
    """The message alone: a KeyError's str() is the repr of its message, so unwrap that one only."""
    if isinstance(exc, KeyError) and len(exc.args) == 1 and isinstance(exc.args[0], str):
        return exc.args[0] or type(exc).__name__
    return str(exc) or type(exc).__name__


def one_line(text: str, width: int) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= width else flat[: width - 1] + "…"


#: The label each step's text starts with (``represent.step_text``), or a passage's whole header, which names the
#: step's call (``[step 20] result of bash sed -n '408,550p' src/marshmallow/fields.py, clipped part 2/3:``).
_STEP_LABEL = re.compile(r"\[step \d+\](?: (?:(?!\[step \d).)*?, clipped part \d+/\d+:)?")


def matched_line(text: str, query_terms: tuple[str, ...], width: int) -> str:
    """``text`` on one line, cut to ``width`` around where it holds the query (``trajsearch.excerpt.terms``):
    a pasted error sits at the tail of a step's output, past any head a terminal line has room for.

    A part cut from inside the text is led by the label of the step it lies in (``[step 49] …``): cut from a
    window of three steps, or beside the steps around it (``search --expand``), it said no step, and which one to
    ``show`` was left to guess. A passage's label is its header, naming the call whose output it is part of (a
    line of a long file view named no file, round 22, GEN3). Cut with its line breaks kept (each a space once
    printed): a run's own exception line is told from a thought quoting it by where it opens a line."""
    lines = "\n".join(filter(None, (" ".join(line.split()) for line in text.splitlines())))  # one space as flat
    flat = lines.replace("\n", " ")
    shown = excerpt(lines, query_terms, width).replace("\n", " ")  # the excerpt sees where a line opens
    if not shown.startswith("…"):
        return shown
    labels = [m.group() for m in _STEP_LABEL.finditer(flat, 0, flat.find(shown[1:].removesuffix("…")) + 1)]
    return f"{labels[-1]} {shown}" if labels else shown


def where(hit) -> str:
    """``step 4-6`` for a hit with a step range, ``failure 25`` for one of a single step (as the web page says it: the
    CLI said ``failure 25-25``), else just its level."""
    if hit.step_index < 0:
        return hit.level
    return f"{hit.level} {hit.step_index}" + (f"-{hit.step_end}" if hit.step_end != hit.step_index else "")

"""How far a long command is: rich's bar on a terminal, a plain line now and then in a log.

A job run by cron or CI writes stderr to a file, where no bar is drawn: without a line every so often
nothing tells a stuck job from a slow one until it ends.
"""

from __future__ import annotations

import time
from datetime import timedelta
from typing import Any

from rich.console import Console
from rich.progress import Progress, ProgressColumn

#: Seconds between two progress lines in a log, unless a command is told otherwise.
LOG_EVERY = 30.0


def progress(*columns: ProgressColumn, console: Console, label: str, quiet: bool,
             log_every: float = LOG_EVERY, runs: str | None = "runs written") -> Progress | LogProgress:
    """A bar when ``console`` is a terminal, else :class:`LogProgress`; neither when ``quiet``. ``runs``: what the
    count of runs counts, in a line (None: no count, a dry run's, which writes none)."""
    if quiet or console.is_terminal:
        return Progress(*columns, console=console, disable=quiet)
    return LogProgress(console, label, log_every, runs)


class LogProgress:
    """The part of rich's ``Progress`` the commands call (one task of bytes and a ``runs`` field), said as a
    line at most every ``every`` seconds (0: at every update): ``ingesting: 12.3 of 37.8 MB done, 84 runs written,
    0:01:30 elapsed``."""

    def __init__(self, console: Console, label: str, every: float, what: str | None = "runs written") -> None:
        self.console, self.label, self.every, self.what = console, label, every, what
        self.started = self.said = time.monotonic()
        self.total: float | None = None
        self.completed = 0.0
        self.runs: Any = 0

    def __enter__(self) -> LogProgress:
        return self

    def __exit__(self, *exc: object) -> None:
        return None

    def add_task(self, description: str, total: float | None = None, runs: Any = 0) -> int:
        self.total, self.runs = total, runs
        return 0

    def update(self, task: int, *, total: float | None = None, completed: float | None = None,
               advance: float = 0.0, runs: Any = None) -> None:
        self.total = self.total if total is None else total
        self.completed = (self.completed if completed is None else completed) + advance
        self.runs = self.runs if runs is None else runs
        self._say()

    def advance(self, task: int, advance: float) -> None:
        self.update(task, advance=advance)

    def _say(self) -> None:
        now = time.monotonic()
        if now - self.said < self.every:
            return
        self.said = now
        read = f"{self.completed / 1e6:.1f}" + (f" of {self.total / 1e6:.1f}" if self.total else "") + " MB done"
        elapsed = timedelta(seconds=int(now - self.started))
        runs = f"{self.runs} {self.what}, " if self.what else ""
        self.console.print(f"{self.label}: {read}, {runs}{elapsed} elapsed", markup=False,
                           highlight=False, soft_wrap=True)

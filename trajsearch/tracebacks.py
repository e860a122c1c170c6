"""The frames of a pasted Python traceback, read one line at a time: the one frame reader the query-mode guess
(:mod:`.fusion`, which lines are a program's) and the where vote (:func:`.runtime.where.failing_frames`, the file a
task's traceback failed in) both use.

A frame is Python's own (``File "x.py", line 3, in f``), pytest's (``x.py:3: in f``) or IPython's (``File
/x.py:3, in f()``; before IPython 8, ``/x.py in f(a)``). It may stand behind a margin: indentation, an exception
group's ``| `` (Python 3.11), a quote's ``> `` (a bug report quoting its output in Markdown). Windows paths
(``C:\\x\\mod.py``) are read with ``/`` so that their parts are a path's parts.
"""

from __future__ import annotations

import re

#: What may stand before a frame: indentation, an exception group's ``| `` and a Markdown quote's ``> ``; possessive,
#: so that a line of a thousand ``|`` is not tried again from each of them.
_MARGIN = r"[ \t|>]*+"
#: A frame line: its margin (group 1) and its file, by the form it is in. Matched on one line, never across
#: lines: ``\s*`` before a frame under ``re.M`` ran from every line start over all the blank lines after it,
#: quadratic in them (review RR11I: ``"\r\n" * 10000`` took 2.3 s).
FRAME = re.compile(rf"""^({_MARGIN})(?:
    File\s"(?P<python>[^"\n]*)",\sline\s\d+         # Python: File "x.py", line 3, in f
  | File\s(?P<ipython>[^\s"]+):\d+,\sin\s\S         # IPython 8: File /x.py:3, in f()
  | (?P<legacy>\S+\.py)\sin\s[\w<>.]+\(               # IPython 7: /x.py in f(a)
  | (?P<pytest>\S+):\d+:\sin\s\S+$                   # pytest: x.py:3: in f
)""", re.X)
#: The sentences Python puts between chained tracebacks.
CHAINED = re.compile(r"^\s*(?:During handling of the above exception|The above exception was the direct cause)")
#: What starts a traceback: Python's header (behind a margin, or an exception group's), IPython's (after the class).
_HEADER = "Traceback (most recent call last)"


def frame_file(line: str) -> str | None:
    """The file a frame line names, ``\\`` read as ``/``; None for a line that is no frame."""
    frame = FRAME.match(line)
    if not frame:
        return None
    path = frame.group("python") or frame.group("ipython") or frame.group("legacy") or frame.group("pytest")
    return path.replace("\\", "/")


def traceback_frames(text: str) -> list[list[str]]:
    """The files of the frames of each traceback ``text`` holds, outermost first: a header starts one (a chained
    exception's and an exception group's each their own); frames before any header (a pytest report) are one."""
    tracebacks: list[list[str]] = [[]]
    for line in text.splitlines():
        if _HEADER in line:
            tracebacks.append([])
        elif (path := frame_file(line)) is not None:
            tracebacks[-1].append(path)
    return [frames for frames in tracebacks if frames]

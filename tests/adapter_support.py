"""Reading a dump as the adapter tests do: through the public reader, with no record rejected.

A test module uses them with ``from adapter_support import only, runs`` (or ``read_with_peak``) (keywords go to ``read_dump``).
"""

from __future__ import annotations

import json
import shlex
import shutil
import subprocess
import sys
import tracemalloc
from pathlib import Path
from typing import Any

from trajsearch.ingest.read import read_dump
from trajsearch.model import Step, Trajectory

#: A real gemini-cli 0.61.0 stream-json (which keeps no exit code) of one shell call (see its folder's SOURCE.md).
GEMINI_SHELL_STREAM = Path(__file__).parent / "fixtures" / "gemini-cli" / ".real" / "probe-fm53" / "go-test-failed.jsonl"


#: A real Harbor trial of SkillsBench (Claude Code 2.1.19, headless; no transcript, no ATIF conversion), whose folder
#: :func:`harbor_output_run` lends to another headless output.
SKILLSBENCH_TRIAL = Path(__file__).parent / "fixtures" / "claude-code" / ".aud7" / "skillsbench-no-atif" / \
    "claude-code-claude-opus-4-5-skills-econ-detrending-correlation-916cde"


def harbor_output_run(stream: Path, folder: Path) -> Trajectory:
    """The run Claude Code's headless ``stream`` output (``--output-format stream-json``) reads as where Harbor keeps
    it, ``agent/claude-code.txt`` of a trial that kept no transcript (:data:`SKILLSBENCH_TRIAL`'s, copied under
    ``folder``): read alone, it is refused for want of its prompt."""
    trial = folder / "trial"
    shutil.copytree(SKILLSBENCH_TRIAL, trial)
    shutil.copy(stream, trial / "agent" / "claude-code.txt")
    return only(trial / "agent" / "claude-code.txt", tenant="acme")


def runs(path: Path, **kwargs: Any) -> list[Trajectory]:
    """Every run read from ``path``; a rejected record fails the test with its reason."""
    results = list(read_dump(path, **kwargs))
    assert all(r.ok for r in results), [r.error for r in results if not r.ok]
    return [r.trajectory for r in results]


def only(path: Path, **kwargs: Any) -> Trajectory:
    """The run of a dump that holds one."""
    [run] = runs(path, **kwargs)
    return run


def lines_run(path: Path, **kwargs: Any) -> int:
    """How many lines of Python reading ``path`` (:func:`only`) ran: a count of the work that does not depend on the
    machine or its load, whose growth with the input tells linear code from quadratic (``sys.settrace``: each line
    run, a loop's every pass too; a tracer already set, coverage's, is set back after). Work done in C is one line
    whatever its size (a slice copied, ``x in list``, ``sorted``): a loop over such a call counts its passes only,
    so quadratic copying inside a loop is not seen (review RT3, 2)."""
    count = 0

    def each_line(frame: Any, event: str, arg: Any) -> Any:
        nonlocal count
        count += event == "line"
        return each_line

    previous = sys.gettrace()
    sys.settrace(lambda frame, event, arg: each_line)
    try:
        only(path, **kwargs)
    finally:
        sys.settrace(previous)
    return count


def gemini_shell_step(output: str, folder: Path) -> Step:
    """The shell step read from :data:`GEMINI_SHELL_STREAM` with its call's output replaced by ``output`` (trimmed,
    as gemini-cli shows it): how a command's words alone, with no exit code, are read. Written under ``folder``."""
    events = [json.loads(line) for line in GEMINI_SHELL_STREAM.read_text().splitlines()]
    for event in events:
        if event.get("type") == "tool_result":
            event["output"] = output.strip()
    path = folder / "stream.jsonl"
    path.write_text("".join(json.dumps(event) + "\n" for event in events))
    [parsed] = list(read_dump(path, fmt="gemini-cli"))
    [shell] = [step for step in parsed.trajectory.steps if step.action == "run_shell_command"]
    return shell


def read_with_peak(path: Path, **kwargs: Any) -> tuple[list, int]:
    """The verdicts :func:`read_dump` gives of ``path`` and the peak of memory Python allocated meanwhile."""
    tracemalloc.start()
    try:
        return list(read_dump(path, **kwargs)), tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def run_export(refusal: str, store: Path, written: str, out: Path,
               cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    """Run the command a refused store's message names (``... ingest those: python3 -I -c SCRIPT STORE FILE``), as a
    user pasting it in ``cwd`` would (with this Python and the command's own flags), writing ``out`` in place of the
    file it names (``written``)."""
    words = shlex.split(refusal.split("ingest those: ", 1)[1])
    at = words.index("-c")
    python, flags, (script, named, file) = words[0], words[1:at], words[at + 1:at + 4]
    assert (python, named, file.rstrip(";")) == ("python3", str(store.resolve()), written), refusal
    done = subprocess.run([sys.executable, *flags, "-c", script, named, str(out)], capture_output=True, text=True,
                          timeout=600, cwd=cwd)
    assert done.returncode == 0, done.stderr
    return done

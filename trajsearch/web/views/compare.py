"""The compare page: a broken run beside a successful similar one, aligned step by step."""

from __future__ import annotations

import difflib
import json
import re
import shlex
from dataclasses import dataclass
from typing import Any, Iterable

from ...model import Step
from ...results import RunMatch
from ...search import TrajSearch
from ...service.auth import Principal
from ...store.traces import TraceStore
from ...steps import command_of, is_write
from ...touched import SHELL_TOOLS
from .run import RunView, pretty_arguments, run_view, similar_runs, step_summary
from .search import _clip


@dataclass
class Side:
    position: int
    step: Step
    summary: str
    arguments: str
    observation: str
    error: str
    does: str  # what the divergence line names: the tool, or for a shell step its command's first line


@dataclass
class CompareRow:
    tag: str  # equal | replace | delete (only the broken run) | insert (only the other run)
    left: Side | None
    right: Side | None
    args_differ: bool = False
    first_divergence: bool = False


@dataclass
class CompareView:
    left: RunView
    right: RunView | None
    rows: list[CompareRow]
    divergence: CompareRow | None
    divergence_kind: str  # "actions" | "arguments" | ""
    candidates: list[tuple[RunMatch, str]]


def _side_of(position: int, step: Step, limit: int = 4000) -> Side:
    return Side(position, step, step_summary(step, 90), _clip(pretty_arguments(step.arguments), limit),
                _clip(step.observation or "", limit), _clip(step.error or "", limit), does(step))


def does(step: Step) -> str:
    """A step as the divergence line names it: its tool, or for a shell step its command's first line
    (every step of a single-tool agent is ``bash``: the command is what tells two apart)."""
    action = step.action or "(no tool)"
    if action.lower() in SHELL_TOOLS:
        first = next((line.strip() for line in command_of(step).splitlines() if line.strip()), "")
        if first:  # a blank command names its tool, not an empty <code>
            return _clip(first, 90)
    return action


def action_key(step: Step) -> str:
    """What a step does, to align two runs on: its tool, and for a shell command the program it runs and
    whether it writes (``bash cat`` reads a file, ``bash cat (writes)`` makes one with a heredoc).

    On the tool name alone, two runs of a single-tool agent (mini-swe-agent: every step ``bash``) were
    two sequences of one token: difflib put their length difference anywhere, and the page named an
    arbitrary step as the first divergence, saying the other run did not do ``bash`` there (probe p42 D2).
    A written file's name stays out: scratch scripts are named differently in every run."""
    action = step.action or "(no tool)"
    command = command_of(step)
    if not command or action.lower() not in SHELL_TOOLS:
        return action
    return " ".join(part for part in (action, program(command), "(writes)" if is_write(step) else "") if part)


#: Commands that run the command after them, with those of their options that take a value
#: (``sudo -u root rm``, ``timeout -s KILL 10 make``).
_WRAPPERS = {"sudo": {"-u", "-g", "-h", "-p", "-C", "-D", "-U", "-r", "-t"}, "env": {"-u", "-C", "-S"},
             "time": {"-f", "-o"}, "timeout": {"-s", "-k"}, "nice": {"-n"}, "nohup": set(), "exec": set()}
_ASSIGNMENT = re.compile(r"^\w+=")
_DURATION = re.compile(r"^\d+(?:\.\d+)?[smhd]?$")  # timeout's


def program(command: str) -> str:
    """The program a shell command runs first (``python3 -c`` and ``python x.py`` both ``python``), its
    comment lines skipped; "" when there is none. What comes before it does not count: a subshell's
    ``(``, ``cd DIR &&``, ``VAR=value``, a wrapper (``sudo -u x``, ``time -p``) and its options."""
    lines = [line.strip() for line in command.splitlines() if line.strip() and not line.strip().startswith("#")]
    if not lines:
        return ""
    name = _first_program(_words(lines[0])).rsplit("/", 1)[-1]
    return re.sub(r"(?<=[a-z])[\d.]+$", "", name)  # python3.11 is python


def _words(line: str) -> list[str]:
    """A command line's words as the shell splits them (quotes removed, ``(`` ``&&`` ``;`` words of their
    own); a line the shell could not split (a quote that closes on a later line) split on spaces."""
    lexer = shlex.shlex(line, posix=True, punctuation_chars=True)
    lexer.whitespace_split = True
    try:
        return list(lexer)
    except ValueError:
        return [word.strip("'\"") for word in line.split()]


def _first_program(words: list[str]) -> str:
    n = 0
    while n < len(words):
        word = words[n]
        if word in ("(", "{", "!") or _ASSIGNMENT.match(word):
            n += 1
        elif word == "cd" and n + 2 < len(words) and words[n + 2] in ("&&", ";"):
            n += 3
        elif word in _WRAPPERS:
            n += 1
            while n < len(words) and (words[n].startswith("-") or (word == "timeout" and _DURATION.match(words[n]))):
                n += 2 if words[n] in _WRAPPERS[word] else 1
        else:
            return word
    return ""


def align(left: list[Step], right: list[Step]) -> list[CompareRow]:
    """Both runs' steps side by side, aligned on their sequence of actions (difflib)."""
    a = [action_key(s) for s in left]
    b = [action_key(s) for s in right]
    limit = 4000 if len(a) + len(b) <= 400 else 600  # long runs: shorter cells (the run pages have it all)

    def _side(position: int, step: Step) -> Side:
        return _side_of(position, step, limit)

    rows: list[CompareRow] = []
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        if tag == "equal":
            for i, j in zip(range(i1, i2), range(j1, j2)):
                differ = _canon(left[i].arguments) != _canon(right[j].arguments)
                rows.append(CompareRow("equal", _side(i, left[i]), _side(j, right[j]), args_differ=differ))
        elif tag == "replace":
            for n in range(max(i2 - i1, j2 - j1)):
                i, j = i1 + n, j1 + n
                rows.append(CompareRow(
                    "replace" if i < i2 and j < j2 else ("delete" if i < i2 else "insert"),
                    _side(i, left[i]) if i < i2 else None, _side(j, right[j]) if j < j2 else None,
                ))
        elif tag == "delete":
            rows.extend(CompareRow("delete", _side(i, left[i]), None) for i in range(i1, i2))
        else:
            rows.extend(CompareRow("insert", None, _side(j, right[j])) for j in range(j1, j2))
    return rows


def _canon(arguments: Any) -> str:
    return json.dumps(arguments, sort_keys=True, ensure_ascii=False, default=str)


def first_divergence(rows: Iterable[CompareRow]) -> tuple[CompareRow | None, str]:
    """The first row where the actions differ; failing that, the first where the arguments do.

    A shell command one run takes once more beside the same kind of command both take (``ls -la`` before
    ``ls -la sympy/core``, matched to the other run's one ``ls -R``) is no other way of working: a later
    difference is named first. It is still a step the other run did not take: when nothing else differs
    it is the divergence (a broken run that is the successful one plus one step is not "the same steps")."""
    rows = list(rows)
    differ = [n for n, row in enumerate(rows) if row.tag != "equal"]
    chosen = next((n for n in differ if not _one_more(rows, n)), differ[0] if differ else None)
    if chosen is not None:
        rows[chosen].first_divergence = True
        return rows[chosen], "actions"
    for row in rows:
        if row.args_differ:
            row.first_divergence = True
            return row, "arguments"
    return None, ""


def _one_more(rows: list[CompareRow], n: int) -> bool:
    """Whether row ``n``, a shell command of one run only, does what a neighbouring command both runs take
    does, and changes nothing (a second ``sed -i`` may be the edit that broke the run). Only shell steps:
    a named tool call (tau-bench's ``respond``) once more is a step of its own, as it always was."""
    row = rows[n]
    side = row.left if row.tag == "delete" else row.right if row.tag == "insert" else None
    if side is None or (side.step.action or "").lower() not in SHELL_TOOLS or is_write(side.step):
        return False
    key = action_key(side.step)
    return any(0 <= m < len(rows) and rows[m].tag == "equal" and action_key(rows[m].left.step) == key
               for m in (n - 1, n + 1))


def compare_view(ts: TrajSearch, principal: Principal, trajectory_id: str, other_id: str | None,
                 reads: TraceStore | None = None) -> CompareView:
    """The run beside ``other_id`` (else its best successful similar run); traces read with ``reads`` (see
    :func:`.run.load_trace`)."""
    left = run_view(ts, principal, trajectory_id, similar=False, reads=reads)
    candidates, _ = similar_runs(ts, principal, trajectory_id, outcome="success", k=10)
    # a success of the very same task first: the closest thing to "what should have happened"
    task_id = left.trajectory.task_id
    candidates.sort(key=lambda c: not (task_id and c[0].best.task_id == task_id))
    candidates = candidates[:6]
    if not other_id and candidates:
        other_id = candidates[0][0].trajectory_id
    right = run_view(ts, principal, other_id, similar=False, reads=reads) if other_id else None
    rows = align(left.trajectory.steps, right.trajectory.steps) if right else []
    divergence, kind = first_divergence(rows)
    return CompareView(left, right, rows, divergence, kind, candidates)

"""What a past run shows of itself in an agent's context, worked out once at ingest: its *digest*.

An exemplar shows a run's goal, its decision points (:func:`trajsearch.steps.decision_points`:
reads once, the last attempt of a retry; when there are too many, the changes of the files the
run left changed first (:func:`kept_files`), then the end, writes, errors and tests: :func:`priority`),
its outcome and notes. A failure warning shows the task, the decisive error, its cause and fix, what
failed and the failing step. Working these out from the full run when an agent
asks meant reading and decompressing the trace of every run shown, on the call that runs before
every agent task (issue 12: most of its 227 ms, with token counting and re-embedding). The
indexer works them out once per run and stores them in the ``steps`` field of the run's
``summary`` row (the exemplar digest) and ``failure`` row (the warning digest), fields those
levels left empty; the runtime renders from them (:mod:`trajsearch.runtime.format`).

Every text is kept only as far as the richest rendering can show it (:data:`CAPS`, the
``FormatConfig`` defaults): whole when short, else its head, its tail and its length, so that
:meth:`Clip.clip` returns exactly what ``represent.clip`` of the whole text returns for any head
and tail up to the caps. A format that asks for more than a digest's caps, a row written before
digests existed, or a digest of an unknown version renders from the trace, as before.

This module is below the runtime (the indexer imports it); it depends on the model,
``represent``'s text helpers, the step classification and what a run touched (:mod:`trajsearch.touched`) only.
"""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass
from typing import Any, Callable

from .actions import RESPOND
from .model import Step, Trajectory, json_strings, outcome_shown
from .represent import CUT_MARK, clip, decisive_error, failure_cause, indexed_text, render_arguments
from .steps import command_of, decision_points, is_read, is_removal, is_test_run, is_write
from .touched import (NEW_FILE, changed_by, names_path, own_changes, read_once, run_reading, shows_history, undoes,
                      undone_by)

#: The files a step changed (:func:`trajsearch.touched.changed_by`, or that of the run's reading:
#: :meth:`trajsearch.touched.RunReading.changed_by`).
StepFiles = Callable[[Step], list[str]]

#: The key that marks a digest in a row's ``steps`` list; its value is the format version.
MARKER = "digest"
VERSION = 1


@dataclass(frozen=True)
class Caps:
    """How much of each text a digest keeps: the most the renderer may ask of it.

    ``goal``, ``actions``, ``argument``, ``observation`` and ``note`` are the ``FormatConfig``
    limits of the richest level, whose defaults are taken from :data:`CAPS` (an observation or a
    step's error keeps ``observation // 3`` head and ``observation * 2 // 3`` tail characters);
    ``error`` is the head and tail kept of a warning's decisive error (``FailureWarning.error``
    carries that much).
    """

    goal: int = 600
    actions: int = 8
    argument: int = 200
    observation: int = 300
    note: int = 400
    error: int = 2000

    def covers(self, goal: int, actions: int, argument: int, observation: int, note: int) -> bool:
        """Can a rendering at these limits be served from a digest cut at these caps?"""
        return (goal <= self.goal and actions <= self.actions and argument <= self.argument
                and observation <= self.observation and note <= self.note and note // 3 <= self.error
                and note * 2 // 3 <= self.error)

    def to_json(self) -> list[int]:
        return [self.goal, self.actions, self.argument, self.observation, self.note, self.error]


CAPS = Caps()
#: No cut at all: the digest of a run read from its trace when the stored one cannot serve.
UNCAPPED = Caps(*(sys.maxsize,) * 6)


@dataclass(frozen=True, slots=True)
class Clip:
    """A text kept whole, or as its head, tail and length: enough for ``clip`` up to the caps it was cut at."""

    head: str
    tail: str = ""
    length: int = -1  # the whole (stripped) text's length when cut; -1: ``head`` is the whole text

    @classmethod
    def of(cls, text: str, head: int, tail: int = 0) -> Clip:
        """``text`` as far as ``clip(text, h, t)`` can need it for any h <= head, t <= tail."""
        text = text.strip()
        if len(text) <= head + tail + 20:  # clip() returns such a text whole
            return cls(text)
        return cls(text[:head], text[len(text) - tail:] if tail else "", len(text))

    @classmethod
    def whole(cls, text: str) -> Clip:
        return cls(text.strip())

    def clip(self, head: int, tail: int = 0) -> str:
        """Exactly ``represent.clip`` of the whole text, for a head and tail up to the caps it was cut
        at; beyond them, what was kept (the renderer reads the trace instead where it still can)."""
        if self.length < 0:
            return clip(self.head, head, tail)
        head, tail = min(head, len(self.head)), min(tail, len(self.tail))
        # the text is longer than its caps + 20, so longer than head + tail + 20: clip() cuts it
        if not tail:
            return f"{self.head[:head]} …"
        return f"{self.head[:head]}{CUT_MARK.format(self.length - head - tail)}{self.tail[len(self.tail) - tail:]}"

    def text(self) -> str:
        """The text as far as it was kept (whole, or clipped at its caps)."""
        return self.head if self.length < 0 else self.clip(len(self.head), len(self.tail))

    def to_json(self) -> str | list[Any]:
        return self.head if self.length < 0 else [self.head, self.tail, self.length]

    @classmethod
    def from_json(cls, value: Any) -> Clip:
        if isinstance(value, str):
            return cls(value)
        head, tail, length = value
        return cls(str(head), str(tail), int(length))


def _optional(text: str | None, head: int, tail: int = 0) -> Clip | None:
    """A clip of ``text`` when it is truthy (the renderer shows a field when its raw value is)."""
    return Clip.of(text, head, tail) if text else None


def _clip_json(value: Clip | None) -> Any:
    return None if value is None else value.to_json()


def _clip_of_json(value: Any) -> Clip | None:
    return None if value is None else Clip.from_json(value)


# -- exemplars ----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Action:
    """A decision point as an exemplar shows it."""

    rank: int  # 0 is kept first when fewer decision points are shown (see ``priority``)
    step: int  # the step's own index
    action: str
    arguments: Clip | None
    observation: Clip | None  # none for reads: what was looked at is enough
    error: Clip | None


@dataclass(frozen=True)
class ExemplarDigest:
    """A successful run as an exemplar shows it: goal, decision points, outcome, notes."""

    caps: Caps
    task: Clip
    steps: int
    outcome: str
    reward: float | None
    actions: tuple[Action, ...]  # at most ``caps.actions`` of the run's decision points, in run order
    what_worked: Clip | None
    what_failed: Clip | None

    def to_json(self) -> dict[str, Any]:
        return {
            MARKER: VERSION, "kind": "exemplar", "caps": self.caps.to_json(), "task": self.task.to_json(),
            "steps": self.steps, "outcome": self.outcome, "reward": self.reward,
            "actions": [[a.rank, a.step, a.action, _clip_json(a.arguments), _clip_json(a.observation),
                         _clip_json(a.error)] for a in self.actions],
            "what_worked": _clip_json(self.what_worked), "what_failed": _clip_json(self.what_failed),
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> ExemplarDigest:
        return cls(
            Caps(*data["caps"]), Clip.from_json(data["task"]), int(data["steps"]), str(data["outcome"]),
            None if data["reward"] is None else float(data["reward"]),
            tuple(Action(int(r), int(s), str(a), _clip_of_json(g), _clip_of_json(o), _clip_of_json(e))
                  for r, s, a, g, o, e in data["actions"]),
            _clip_of_json(data["what_worked"]), _clip_of_json(data["what_failed"]),
        )




def is_dialogue_turn(step: Step) -> bool:
    """Words to the user that the user answered (tau-bench, tau2: "anything else?" and "thanks, ###STOP###"):
    a turn of a conversation, whose result is what the agent did, not the run's answer. A closing answer no one
    replied to (a Q&A run's answer, a coding run's report of its change) is the run's result (review 2, D1)."""
    return step.action == RESPOND and bool(step.observation)


def priority(step: Step, last: bool, changes_kept: bool = False, leaves_kept: bool = False) -> int:
    """Which decision points survive when there are too many: the change that left a file as the run left it
    (:func:`kept_files`; where the run's final diff is known, the changes whose lines it holds: :func:`by_priority`),
    its other changes of those files, the end (unless it is a turn of a dialogue: :func:`is_dialogue_turn`), other
    writes, errors and tests, the rest.

    A coding run's clean-up (``rm`` of its scratch scripts, a revert, the submit ``echo``) came after its fix;
    when every write ranked alike, the clean-up pushed the fix out of the exemplar (probe p42 D1: 9 of 96
    SWE exemplars showed no step that edited the file their patch changed). A removal teaches nothing to adapt.
    """
    if leaves_kept:
        return 6
    if changes_kept:
        return 5
    if last and not is_dialogue_turn(step):
        return 4
    if is_write(step) and not is_removal(step):
        return 3
    if step.error or is_test_run(step):
        return 2
    return 0 if is_read(step) else 1


_WRAPPER = re.compile(r"</?output>|<returncode>0</returncode>")
#: Django's test runner setting up, keeping (``--keepdb``) and tearing down its databases, one line per alias and
#: parallel clone (``Destroying test database for alias 'default'...``; ``…`` in newer Django, ``\u2026`` where a
#: harness escaped it), a CRLF output's too, and a teardown line run on after the progress dots (kept: group 1).
_TEST_DATABASE = re.compile(r"^([.sxEF]*)(?:(?:Creating|Cloning|Destroying|Preserving) test database|"
                            r"Using existing (?:test database|clone)) for alias '[^'\n]*'[^\n]*?"
                            r"(?:\.\.\.|…|\\u2026)[ \t\r]*(?:\n|$)", re.M)


def observation_text(text: str) -> str:
    """A step's output without empty wrappers (``<output></output>``, a zero return code) and without Django's test
    database lines, which say nothing of the run: printed after the verdict, one per alias and clone, they filled the
    tail an exemplar keeps of a test run, and its ``Ran 42 tests in 1.2s`` / ``OK`` (the check an agent should copy)
    was cut from 179 of the 374 such outputs of the gemini-3-pro SWE-bench Verified runs that resolved (3 after). An
    output of those lines alone (a run that hung after ``Creating test database ...``) keeps them: it said that much."""
    unwrapped = _WRAPPER.sub("", text).strip()
    kept = _TEST_DATABASE.sub(lambda m: m.group(1) and m.group(1) + "\n", unwrapped).strip()
    return kept or unwrapped


def by_priority(points: list[Step], kept: frozenset[str] = frozenset(), changes: StepFiles = changed_by,
                final: str = "") -> list[int]:
    """Positions of a run's decision points, the ones to keep first (:func:`priority`; later before earlier).

    ``kept``: the files of the run's final change (:func:`kept_files`); ``changes``: the files a step changed;
    ``final``: the run's final diff when known (:func:`final_diff`).

    The changes that left a kept file as the run left it are the steps that last wrote lines the final diff holds
    (:func:`_final_lines_by_step`), the ones that wrote more of it first; for a file no such step is found for, or
    when the final diff is unknown, its last change. The last change alone misread a sed-driven run
    (mini-swe-agent), which edits a file many times: its last change of the fixed file was often ``sed -i '928d'``,
    dropping a debug ``print`` an earlier step inserted, which leaves the file as it was; ranked first, with the
    insertion next, the two filled a small budget and pushed the fix out (probe E2, E2-D)."""
    last = len(points) - 1
    kept_changes = [_kept_changes(step, kept, changes) for step in points]
    final_change = {path: position for position, paths in enumerate(kept_changes) for path in paths}
    # a step that changed a kept file, or one that changed no file it names: SWE-agent's ``edit 280:280`` of the
    # file it has open
    writers = [bool(paths) or not (is_read(step) or changes(step)) for step, paths in zip(points, kept_changes)]
    wrote = _final_lines_by_step(points, writers, _diff_lines(final))
    shown = {path for i in wrote for path in kept_changes[i]}
    leaves = set(wrote) | {position for path, position in final_change.items() if path not in shown}
    return sorted(range(len(points)), key=lambda i: (
        -priority(points[i], i == last, changes_kept=bool(kept_changes[i]), leaves_kept=i in leaves),
        tuple(-n for n in wrote.get(i, (0, 0))), -i))


def _final_lines_by_step(points: list[Step], writers: list[bool], lines: _DiffLines) -> dict[int, tuple[int, int]]:
    """How much of the final diff each of the ``writers`` wrote: characters of its added lines in the files the diff
    changes, then in those it creates (a reproduction script SWE-agent hands in with the fix), each line credited to
    the last step that wrote it, the one that left it (:func:`_lines_written`)."""
    wrote: dict[int, tuple[int, int]] = {}
    for part, added in enumerate((lines.changed, lines.created)):
        writer: dict[str, int] = {}
        for position, may_write in enumerate(writers):
            if may_write:
                writer.update(dict.fromkeys(_lines_written(points[position], added, lines.removed), position))
        for line, position in writer.items():
            counts = list(wrote.get(position, (0, 0)))
            counts[part] += len(line)
            wrote[position] = (counts[0], counts[1])
    return wrote


def ranked_decision_points(run: Trajectory) -> tuple[list[Step], list[int]]:
    """A run's decision points and their positions in the order to keep them: the one choice of what an
    exemplar shows and what ``export --max-tokens`` keeps."""
    points = decision_points(run.steps)
    with read_once(run):  # its steps read once for the changes of each and what the run's actions name (kept_files)
        changes = run_reading(run).changed_by
        return points, by_priority(points, kept_files(run, changes), changes, final_diff(run, changes))


def kept_files(run: Trajectory, changes: StepFiles = changed_by) -> frozenset[str]:
    """The files the run's outcome kept: those its steps changed, less those a later step reverted or removed
    (:func:`_left_changed`); of these, the ones the last diff it shows of its own holds (a submission's patch, a
    closing ``git diff``) when that holds any, as files it wrote and left out of its diffs are scratch. Less the
    edits its environment made before it (:func:`~trajsearch.touched.own_changes`: the SWE-bench harness's
    ``tox.ini``), as :func:`~trajsearch.touched.touched` reads the run.

    The last diff shown decides alone only when nothing was changed or undone after it (a submission, a closing
    ``git diff``: a fix a script wrote shows only there): a mid-run ``git diff`` of edits a ``git checkout`` then
    undid made those reverted edits the run's "final change" and pushed the real fix out (review 2, F4)."""
    return frozenset(own_changes(run, _kept_files(run, changes)))


def _kept_files(run: Trajectory, changes: StepFiles) -> frozenset[str]:
    at = _last_own_diff(run.steps)
    if at is None:
        return frozenset(_left_changed(run.steps, changes))
    shown = changes(run.steps[at])
    after = [(step, undone_by(step).files) for step in run.steps[at + 1:]]
    if shown and _closes(run.steps, at, changes):
        return frozenset(shown)  # nothing changed or undone after it: the diff is what the run left
    left = _left_changed(run.steps, changes)
    in_diff = [path for path in left if names_path(shown, path)]
    undone = tuple(f for _, files in after for f in files)
    survived = [path for path in shown if not undoes(undone, path)]  # a fix a script wrote shows only in diffs
    return frozenset(in_diff or survived or left)


_DIFF = re.compile(r"^diff --git |^\+\+\+ ", re.M)


def final_diff(run: Trajectory, changes: StepFiles = changed_by) -> str:
    """The run's final diff when it shows one: the last diff of its own (a submission's patch, a closing
    ``git diff``) that nothing changed or undid after; else "" (a Claude Code or Codex session that ends without
    one, a diff of edits a later step reverted)."""
    at = _last_own_diff(run.steps)
    if at is None or not changes(run.steps[at]) or not _closes(run.steps, at, changes):
        return ""
    step = run.steps[at]
    observation = step.observation or ""
    return observation if _DIFF.search(observation) else "\n".join(json_strings(step.arguments))


def _last_own_diff(steps: list[Step]) -> int | None:
    return next((n for n in range(len(steps) - 1, -1, -1) if _shows_own_diff(steps[n])), None)


def _closes(steps: list[Step], at: int, changes: StepFiles) -> bool:
    """Whether nothing after step ``at`` changed or undid a file (reads aside)."""
    return not any(changes(step) or undone_by(step).files for step in steps[at + 1:] if not is_read(step))


#: A diff line shorter than this (``+    }``, ``+        return None``) is too common to tell which step wrote it.
_TELLING = 10
#: Where a diff's next file starts: at ``diff --git`` in a git diff, else at ``---`` (a file it creates:
#: ``touched.NEW_FILE``).
_GIT_FILE = re.compile(r"^(?=diff --git )", re.M)
_FILE = re.compile(r"^(?=--- )", re.M)


@dataclass(frozen=True)
class _DiffLines:
    """The telling lines a diff adds to files it changes and to files it creates (less those it also removes:
    moved, not new), and those it removes; stripped."""

    changed: frozenset[str] = frozenset()
    created: frozenset[str] = frozenset()
    removed: frozenset[str] = frozenset()


def _diff_lines(diff: str) -> _DiffLines:
    changed, created, removed = set(), set(), set()
    for block in (_GIT_FILE if _GIT_FILE.search(diff) else _FILE).split(diff):
        added = created if NEW_FILE.search(block.split("\n@@", 1)[0]) else changed
        for line in block.splitlines():
            text = line[1:].strip()
            if line[:1] in ("+", "-") and len(text) >= _TELLING and not line.startswith(("+++ ", "--- ")):
                (added if line[0] == "+" else removed).add(text)
    return _DiffLines(frozenset(changed - removed), frozenset(created - removed), frozenset(removed))


#: A sed (or perl) substitution ``s/old/new/``, another delimiter too; group 3 is what it writes into a line.
_SED_SUBSTITUTION = re.compile(r"(?<![A-Za-z_-])s([/|#,:@!])((?:\\.|(?!\1).)*)\1((?:\\.|(?!\1).)*)\1")


def _lines_written(step: Step, lines: frozenset[str], removed: frozenset[str]) -> set[str]:
    """Which of a final diff's added ``lines`` this step wrote: each one whole in what it wrote (an inserted line, a
    str_replace's ``new_str``, an Edit's ``new_string``, a Write's content, an ``apply_patch``, a heredoc, SWE-agent's
    ``edit`` body), or holding a sed substitution's replacement of part of a line that no ``removed`` line holds. A
    debug ``print`` inserted and deleted again, and its deletion, wrote none."""
    if not lines:
        return set()
    written = "\n".join(json_strings(step.arguments))
    found = {line for line in lines if _holds_line(written, line)}
    for *_, new in _SED_SUBSTITUTION.findall(command_of(step)):
        for part in re.sub(r"\\(.)", r"\1", new).split("\n"):
            part = part.strip()
            if len(part) >= _TELLING and "&" not in part and not any(part in line for line in removed):
                found.update(line for line in lines if part in line)
    return found


#: What may stand either side of a line inside a written text: a newline, indentation, a quote, a patch's ``+``,
#: sed's ``i\`` or an escaped ``\n`` (``sed -i '206i\        elif (\n            isinstance(...)'``).
_LINE_EDGE = frozenset(" \t\n'\"\\+")


def _holds_line(written: str, line: str) -> bool:
    """Whether ``line`` stands whole in ``written``, not as part of a longer one (``self.name,`` of a diff is not
    in ``print(f"{self.name}, ...")``)."""
    start = written.find(line)
    while start >= 0:
        end = start + len(line)
        if ((start == 0 or written[start - 1] in _LINE_EDGE or written[start - 2:start] == "\\n")
                and (end == len(written) or written[end] in _LINE_EDGE)):
            return True
        start = written.find(line, start + 1)
    return False


def _shows_own_diff(step: Step) -> bool:
    arguments = render_arguments(step.arguments)
    return (any(_DIFF.search(text) for text in (step.observation or "", arguments))
            and not shows_history(command_of(step)))


def _left_changed(steps: list[Step], changes: StepFiles) -> list[str]:
    """The files the steps changed and did not undo after their last change (a revert, a removal, a ``git stash``
    not popped: :func:`trajsearch.touched.undone_by`), in order of first change."""
    left: dict[str, None] = {}
    stashed: list[str] = []
    for step in steps:
        if is_read(step) and not _shows_own_diff(step):
            continue
        left.update(dict.fromkeys(changes(step)))
        undo = undone_by(step)
        if undo.unstashed:
            left.update(dict.fromkeys(stashed))
        gone = [path for path in left if undoes(undo.files, path)]
        stashed = gone if undo.stashed else stashed
        for path in gone:
            del left[path]
    return list(left)


def _kept_changes(step: Step, kept: frozenset[str], changes: StepFiles) -> set[str]:
    """The kept files this step changed (a read changes none, whatever diff it shows)."""
    if not kept or is_read(step):
        return set()
    changed = changes(step)
    return {path for path in kept if names_path(changed, path)}


def exemplar_digest(run: Trajectory, caps: Caps = CAPS) -> ExemplarDigest:
    """The exemplar digest of ``run`` as its rows hold it (:func:`~trajsearch.represent.indexed_text`): an image's
    placeholder, not its base64, even uncapped (advice's fallback for a row with no digest yet puts it in a prompt)."""
    return _exemplar_digest(indexed_text(run), caps)


def _exemplar_digest(run: Trajectory, caps: Caps) -> ExemplarDigest:
    """:func:`exemplar_digest` of a run already through :func:`~trajsearch.represent.indexed_text`."""
    points, ranked = ranked_decision_points(run)
    ranked = ranked[: caps.actions]
    rank = {position: n for n, position in enumerate(ranked)}
    head, tail = caps.observation // 3, caps.observation * 2 // 3
    actions = []
    for position in sorted(ranked):
        step = points[position]
        arguments = render_arguments(step.arguments)
        output = observation_text(step.observation or "")
        actions.append(Action(
            rank[position], step.index, step.action or "(none)",
            Clip.of(arguments, caps.argument) if arguments else None,
            Clip.of(output, head, tail) if output and not is_read(step) else None,
            _optional(step.error, head, tail),
        ))
    return ExemplarDigest(
        caps, Clip.of(run.task, caps.goal), len(run.steps), outcome_shown(run), run.reward, tuple(actions),
        _optional(run.what_worked, caps.note), _optional(run.what_failed, caps.note),
    )


# -- failure warnings ---------------------------------------------------------------------------


@dataclass(frozen=True)
class WarningDigest:
    """A failed run as a warning shows it: task, decisive error, cause, fix, what failed, failing step."""

    caps: Caps
    task: Clip
    error: Clip
    cause: Clip | None = None
    fix: Clip | None = None
    what_failed: Clip | None = None
    failing_step: Clip | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            MARKER: VERSION, "kind": "warning", "caps": self.caps.to_json(), "task": self.task.to_json(),
            "error": self.error.to_json(), "cause": _clip_json(self.cause), "fix": _clip_json(self.fix),
            "what_failed": _clip_json(self.what_failed), "failing_step": _clip_json(self.failing_step),
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> WarningDigest:
        return cls(
            Caps(*data["caps"]), Clip.from_json(data["task"]), Clip.from_json(data["error"]),
            _clip_of_json(data["cause"]), _clip_of_json(data["fix"]), _clip_of_json(data["what_failed"]),
            _clip_of_json(data["failing_step"]),
        )


def failing_step_text(step: Step) -> str | None:
    return f"{step.action or ''} {render_arguments(step.arguments)}".strip() or None


def warning_digest(run: Trajectory, caps: Caps = CAPS) -> WarningDigest:
    """The warning digest of ``run`` as its rows hold it (an image's placeholder, not its base64), as
    :func:`exemplar_digest`."""
    return _warning_digest(indexed_text(run), caps)


def _warning_digest(run: Trajectory, caps: Caps) -> WarningDigest:
    """:func:`warning_digest` of a run already through :func:`~trajsearch.represent.indexed_text`."""
    error, position = decisive_error(run)
    failure = run.failure
    return WarningDigest(
        caps, Clip.of(run.task, caps.goal), Clip.of(error, caps.error, caps.error),
        _optional(failure_cause(run), caps.note), _optional(failure.fix if failure else None, caps.note),
        _optional(run.what_failed, caps.note),
        _optional(failing_step_text(run.steps[position]) if position >= 0 else None, caps.argument),
    )


# -- in rows ------------------------------------------------------------------------------------


def row_steps(indexed: Trajectory, level: str, caps: Caps = CAPS) -> list[dict[str, Any]] | None:
    """What the indexer stores in the ``steps`` field of a row of ``level`` (None: the row's own steps), of a run
    already through :func:`~trajsearch.represent.indexed_text` (the one its rows were made of)."""
    if level == "summary":
        return [_exemplar_digest(indexed, caps).to_json()]
    if level == "failure":
        return [_warning_digest(indexed, caps).to_json()]
    return None


def from_row_steps(steps: Any) -> ExemplarDigest | WarningDigest | None:
    """The digest a row's ``steps`` holds; None for rows without one (written before digests,
    or by a version whose digest format this one does not read)."""
    if not isinstance(steps, list) or len(steps) != 1 or not isinstance(steps[0], dict):
        return None
    data = steps[0]
    if data.get(MARKER) != VERSION:
        return None
    kind = {"exemplar": ExemplarDigest, "warning": WarningDigest}.get(data.get("kind"))
    try:
        return kind.from_json(data) if kind else None
    except (KeyError, TypeError, ValueError):  # a damaged digest is a missing one: the trace serves
        return None

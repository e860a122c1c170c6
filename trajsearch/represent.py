"""Trajectory -> index rows: what of a run is searchable, and as which text.

Five levels, each one row per unit:
- ``task``: the instruction, as given;
- ``summary``: goal, approach, what the run touched (files, functions, tests,
  commands, tools), outcome, in a few extractive sentences;
- ``step``: a window of 2-5 consecutive steps, compacted (long outputs keep
  their head and tail; the full text stays in the trace store);
- ``passage``: the part of one long output, argument or error that its step
  window clips away, in pieces of whole lines: searchable by the lexical leg
  only (a passage shares its window's vector and is never embedded), so every
  character of every output (but an encoded blob's) stays findable by its exact text;
- ``failure``: for runs that did not succeed, the decisive error with its
  cause and fix where known.

Every row's text has each encoded blob (a data URI, a screenshot's bare base64) in it replaced by a
placeholder naming it (:func:`indexed_text`); the trace store keeps the blob.

Everything here is deterministic, so re-ingesting a run yields the same rows
and the same ids (see :func:`row_id`).
"""

from __future__ import annotations

import hashlib
import json
import re
import secrets
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterator, Protocol, Sequence

from .model import Outcome, Step, Trajectory
from .actions import INTERRUPTED, NEVER_FINISHED, NOT_RUN
from .blobs import without_blobs
from .steps import command_of, is_read, is_removal, signature
from .touched import touched
from .vocab import FAILED_OUTCOMES

#: Bump when the derived text changes, so re-ingest rewrites rows instead of skipping them.
#: 2: passage rows (the clipped-away parts of long outputs), the summary's "Touched" line.
#: 3: step-window vectors from the window's first WINDOW_TOKENS tokens.
#: 4: the "Touched" line lists the definitions the run's reads showed (where code lives).
#: 5: ... SWE-agent's viewer included; its edit bodies and prose no longer listed as commands.
#: 6: an exemplar digest shows an unevaluated submission as "submitted, not evaluated" (texts unchanged).
#: 7: the summary lists a session's later requests (``metadata.user_prompts``).
#: 8: a failed run's decisive error passes over the slips it got past (format nag, grep with no match, ...).
#: 9: an exemplar digest's key actions keep the changes of the files the run left changed (what reverts and clean-up
#:    undid aside) before the rest (texts unchanged; digests of 8 stay readable, with the older choice, until
#:    re-ingest or ``upgrade``).
#: 10: the "Touched" line leaves out the files a run's diffs show it created (a reproduction script, a scratch
#:     project handed in with the fix), unless it changed nothing else.
#: 11: a run whose diffs only create files (a reproduction script handed in alone) lists them as "created", not
#:     "changed": it changed nothing of the project.
#: 12: the "Touched" line leaves out the files a run's diffs show changed that no action of the run names: its
#:     environment's edits (the SWE-bench harness's ``tox.ini`` ``-rA``, its pins), not the run's work.
#: 13: nor the files of a diff a history command shows (``git show REV``, ``git log -p``, ``git diff A..B``): another
#:     commit's change, not the run's.
#: 14: both rules made conservative (review RR11): an unnamed diffed file is dropped only where the record can tell
#:     (it names another of the diff's files or is whole, is not cut, and ran no command writing files it does not
#:     name); history is judged per command of a chained line.
#: 15: nor a file the run reverted after its last diff showing it or write of it (``git checkout setup.py tox.ini``,
#:     ``git restore F``, ``rm F``): a run that undid the SWE-bench harness's edits did not change them.
#: 16: unless a later step (not a read) named it or ran a script the run wrote naming it (``mv F.bak F``); a removed
#:     directory takes its files; a checkout of another revision is no revert; a run whose every diffed file was
#:     reverted changed what it wrote and kept (review RR11h).
#: 17: a subshell's parentheses are no part of its commands (``(cd x && git checkout F)``), and ``git checkout A B``
#:     without ``--`` is read by what git printed it did (review round 21, FM5).
#: 18: a step's command is read as the adapters read it (Codex's ``cmd`` and argv lists, a shell's script), so Codex
#:     runs' reads, writes and test runs count: their digests and "Touched" line change with the trajectory the same
#:     (review RAUD2); a read's error is passed over only where the command ran and exited non-zero.
#:     And a passage of a step's output or error names the step's call (``[step 20] result of bash sed -n '408,550p'
#:     src/marshmallow/fields.py, clipped part 2/3:``): a file view's later lines said no file (round 22, GEN3).
#: 19: a fish or PowerShell argv is read as its script, ``yarn workspace W test`` is a test run, a whole tree's undo
#:     (``git checkout -- .``) undoes what the run changed before it, and an answer naming a file no longer writes it
#:     again: digests and "Touched" lines change with the trajectory the same (round 23, FM7).
#: 20: a whole tree's undo is not counted again (a change may outlive it: committed, untracked, applied again), and
#:     a prompt is the task as sent (round 23's review of FM7).
#: 21: a failure an outcomes file judged has no cause (it was the file's name), and a failed run's failing step is
#:     one it did not get past: failure rows and warnings' digests change (round 24, RT7).
#: 22: an exemplar digest's step outputs leave out Django's test database lines, which hid a test run's ``Ran N tests``
#:     and its verdict (round 25, RT8): summary rows' digests change.
#: 23: a step window's erroring step records the step by which the run got past its error (``got_past``), so warnings
#:     judge it without reading the trace (round 25, review of RT8): step rows change, their texts do not. And a
#:     digest's step outputs leave out Django's test database lines in CRLF and ``--keepdb`` outputs too.
#: 24: a summary's definitions read list, after every file's first 16 names, the CamelCase names (classes, mostly)
#:     each file showed after them (round 27, R11X): summary rows change.
#: 25: an encoded blob (a data URI, a screenshot's bare base64) is indexed as a placeholder naming it
#:     (``[image/png, 48 KB base64]``, :mod:`trajsearch.blobs`), in its rows' texts and digests: rows of runs holding
#:     one change, no other row does.
#: 26: blobs named in more places (round 32, BLOBR32): a data URI or base64 whose slashes JSON escaped (``\/``), base64
#:     of uncompressed bytes with no header (:func:`~trajsearch.blobs._looks_raw`), a WAV, Ogg, FLAC or MP3 by its
#:     header, UTF-16 text's base64: rows of runs holding one change, no other row does. A message's image part is
#:     named as its blob (not ``[image]``) only on re-ingest: an adapter names it when reading, and the stored trace
#:     an upgrade re-represents from holds the ``[image]`` it was read as.
REPRESENTATION_VERSION = 26

TRAJECTORY_LEVEL_INDEX = -1  # step_index of task and summary rows
MAX_ROW_CHARS = 12_000  # the stored/lexical text of one row
OBSERVATION_HEAD = 700
OBSERVATION_TAIL = 1_100
ARGUMENT_CHARS = 600
CALL_CHARS = 200  # of a step's arguments, where a failure row or a passage names the step it is about
LATER_REQUESTS_CHARS = 1_200  # a multi-prompt session's later prompts, in its summary
THOUGHT_CHARS = 300
ERROR_HEAD = ERROR_TAIL = 400
#: A passage holds whole lines up to this many characters (a longer line is cut into pieces
#: overlapping by PASSAGE_OVERLAP, so any stretch of up to that many characters of it lies
#: whole in one piece).
PASSAGE_CHARS = 1_600
PASSAGE_OVERLAP = 400
PASSAGE_CALL_CHARS = 120  # of the step's call, on one line, in the header of a passage of its output (a path fits)
PASSAGE_CALL_WORD_CHARS = 32  # a word of it cut to fit keeps this many characters: a path's file name, a URL's page
#: A step window's vector is made from its first 128 tokens (task, summary and failure rows: the
#: model's 256, as queries). Nearly every window is far longer than either (median 844 tokens), so
#: a 256-token vector already saw mostly the first step; the lexical leg indexes every character.
#: The model was trained on 128-token texts: found by a step's thought, action or error (dense,
#: 4,250 real windows, hit@5) 0.52 / 0.41 / 0.16 against 0.50 / 0.40 / 0.16 at 256 tokens, and
#: 2.1x the texts/s: windows are ~90% of ingest's model time (issue 12).
WINDOW_TOKENS = 128
WINDOW_TOKENS_SINCE = 3  # the REPRESENTATION_VERSION that brought it: older window vectors are re-made

#: A line naming an exception. Its indent is looked for within the line: ``\s*`` ran from every line of a run of
#: blank lines across all the others, time quadratic in the run (probe I, I1); it found the same lines.
_TRACEBACK_TAIL = re.compile(r"^[^\S\n]*([A-Za-z_][\w.]*(Error|Exception|Exit|Interrupt|Warning)\b.*)$", re.M)
_RETURNCODE = re.compile(r"<returncode>\s*(-?\d+)\s*</returncode>")
_EMPTY_OUTPUT = re.compile(r"<output>\s*</output>")
#: An error a command did not give by running and exiting non-zero, at the error's start: a call the harness did
#: not run (every adapter words it ``not run: ...``: :data:`trajsearch.actions.NOT_RUN`); one the harness stopped before
#: it exited (Claude Code's "interrupted by the user", Qwen Code's and OpenCode's "tool call never finished", Gemini
#: CLI's and Qwen Code's "[Operation Cancelled]" of a running command, OpenCode's "shell tool terminated" and the
#: "command timed out" of Codex and the OpenHands SDK: ran, but was cut off); or the sandbox or the shell itself
#: failed (``bwrap: ...``, the shell's own ``bash: -c: line 1: syntax error ...``, PowerShell's "Program 'x.exe'
#: failed to run"), at the start or after Codex's "failed in sandbox ... with execution error: ". Not such words
#: anywhere: a read's printed lines may hold them (``ci.log:3: bwrap: Can't mount proc``, ``parse.y: syntax error``;
#: review RALL-A). A program not found is told only by its exit code, 127, not by "command not found" in the error
#: (a read's printed line may say so: review RFR 1); where the adapter kept no exit code (SWE-agent's runs) a read
#: of a program not found is taken for one that ran and exited non-zero.
_NOT_THE_COMMANDS = re.compile(
    rf"^(?:{re.escape(NOT_RUN)}|{re.escape(INTERRUPTED)}\b|{re.escape(NEVER_FINISHED)}|\[Operation Cancelled\]"
    r"|shell tool terminated|command timed out|Program '[^']*' failed to run"
    r"|(?:failed in sandbox \w+ with execution error: )?"
    r"(?:bwrap: |(?:[\w./-]*/)?(?:ba|da|k|z)?sh: (?:-c: )?(?:line )?\d+: "
    r"(?:syntax error|unexpected EOF while looking for)))", re.I)
#: The exit code the adapter wrote after the command's line (``... (exit code 2)``, the last: the line itself may
#: say one, ``Process finished with exit code 0``), else the first an error says (``exit code 1``).
_EXIT_CODE = re.compile(r"\bexit code:? (-?\d+)", re.I)
_ADAPTER_EXIT_CODE = re.compile(r"\(exit code (-?\d+)\)", re.I)
#: Exit codes a command's own failure gives (git's fatal is 128): 126 and 127 are the shell's (cannot run, not
#: found), over 128 a signal's.
_COMMAND_EXIT_CODES = frozenset(range(1, 129)) - {126, 127}


@dataclass(frozen=True)
class WindowConfig:
    """Step windows: ``size`` consecutive steps, a new window every ``stride`` steps."""

    size: int = 3
    stride: int = 2

    def __post_init__(self) -> None:
        if not 2 <= self.size <= 5:
            raise ValueError(f"window size must be 2-5 steps, got {self.size}")
        if not 1 <= self.stride <= self.size:
            raise ValueError(f"window stride must be 1..size ({self.size}), got {self.stride}")

    def starts_covering(self, first: int, last: int) -> list[int]:
        """Start positions of every window that can overlap positions ``first..last``."""
        lowest = max(0, first - self.size + 1)
        start = -(-lowest // self.stride) * self.stride  # round up to a multiple of stride
        return list(range(start, max(last, 0) + 1, self.stride))


@dataclass
class Row:
    """One searchable unit of a trajectory, before embedding."""

    level: str
    step_index: int
    step_end: int
    text: str
    steps: list[dict[str, Any]] = field(default_factory=list)
    #: Distinguishes rows of one level at one position (passages: ``<field>.<piece>``); part of the key.
    part: str = ""
    #: A row that is never embedded shares this row's vector (passages: their step window's).
    vector_of: Row | None = field(default=None, repr=False, compare=False)


class Summarizer(Protocol):
    def __call__(self, trajectory: Trajectory) -> str: ...


#: What :func:`clip` leaves where it cut a text's middle (``{}``: how many characters it cut).
CUT_MARK = " …[{} chars cut]… "


def mark_pattern(mark: str) -> str:
    """A regular expression finding ``mark``, a template whose ``{}`` is a count (:data:`CUT_MARK`, ingest's
    ``CLIP_MARKER``), in a text: whoever looks for a mark builds it from the mark's one spelling."""
    return re.escape(mark).replace(re.escape("{}"), r"\d+")


def clip(text: str, head: int, tail: int = 0) -> str:
    """Keep the head and tail of ``text`` (errors sit at the end of outputs)."""
    text = text.strip()
    if len(text) <= head + tail + 20:
        return text
    cut = len(text) - head - tail
    return f"{text[:head]}{CUT_MARK.format(cut)}{text[len(text) - tail:]}" if tail else f"{text[:head]} …"


def argument_text(arguments: Any) -> str:
    """The arguments as step rows render them, in full: a lone string argument
    (``{"command": "ls -la"}``) as the bare string, anything else as sorted JSON."""
    if arguments is None:
        return ""
    if isinstance(arguments, dict) and len(arguments) == 1:
        (value,) = arguments.values()
        if isinstance(value, str):  # {"command": "ls -la"} reads best as the bare command
            return value.strip()
    if isinstance(arguments, str):
        return arguments.strip()
    return json.dumps(arguments, ensure_ascii=False, sort_keys=True)


def render_arguments(arguments: Any) -> str:
    return clip(argument_text(arguments), ARGUMENT_CHARS)


def step_call(step: Step) -> str:
    """The step's action and the head of its arguments (``bash cat -n src/x.py``): what a row about one step's
    output names it by, where the output alone does not say what it is the output of."""
    return f"{step.action or ''} {render_arguments(step.arguments)[:CALL_CHARS]}".strip()


def passage_call(step: Step) -> str:
    """The step's call on one line for the header of a passage of its output, at most :data:`PASSAGE_CALL_CHARS`:
    a longer one has its longest words cut in the middle first, each keeping its head and its end (where a path's
    file name stands), then its own end. A view's sorted JSON puts ``forceReadLargeFiles`` before a long ``path``,
    so the call's head alone named no file in 35 of 36 such passages of a real Copilot CLI run (round 22, review of
    GEN3)."""
    call = f"{step.action or ''} {argument_text(step.arguments)}".strip()
    if len(call) > 4 * PASSAGE_CALL_CHARS:  # a long argument's middle is never shown
        call = f"{call[: 2 * PASSAGE_CALL_CHARS]} {call[-2 * PASSAGE_CALL_CHARS :]}"
    words = call.split()
    excess = len(" ".join(words)) - PASSAGE_CALL_CHARS
    while excess > 0:
        longest = max(range(len(words)), key=lambda at: len(words[at]))
        word = words[longest]
        keep = max(PASSAGE_CALL_WORD_CHARS, len(word) - excess)
        if keep >= len(word):
            break
        head = keep // 3
        words[longest] = f"{word[:head]}…{word[head + 1 - keep :]}"
        excess -= len(word) - keep
    return " ".join(words)[:PASSAGE_CALL_CHARS]


def step_text(step: Step) -> str:
    """A compact, readable rendering of one step: action, arguments, result, error."""
    lines = []
    if step.thought:
        lines.append(f"thought: {clip(step.thought, THOUGHT_CHARS)}")
    if step.action:
        lines.append(f"action: {step.action} {render_arguments(step.arguments)}".rstrip())
    if step.observation:
        lines.append(f"result: {clip(step.observation, OBSERVATION_HEAD, OBSERVATION_TAIL)}")
    if step.error:
        lines.append(f"error: {clip(step.error, ERROR_HEAD, ERROR_TAIL)}")
    return f"[step {step.index}] " + "\n".join(lines)


def judged_by_outcomes_file(trajectory: Trajectory) -> bool:
    """Whether the run's failure is the verdict an outcomes file gave it: ingest then records the file as the
    failure's cause (``outcomes file <name>``, the run's ``metadata.outcome_basis`` too), a source, not a cause."""
    failure = trajectory.failure
    return bool(failure and failure.cause is not None and failure.cause == trajectory.metadata.get("outcome_basis"))


def failure_cause(trajectory: Trajectory) -> str | None:
    """The cause of the run's failure as a warning shows it: None where the cause recorded only names the outcomes
    file that judged the run (round 24, RT7: every not-resolved SWE-bench run warned ``Cause: outcomes file
    swe-bench_verified__...json``, a file name an agent cannot act on, read as why the run failed)."""
    failure = trajectory.failure
    return failure.cause if failure and not judged_by_outcomes_file(trajectory) else None


def decisive_error(trajectory: Trajectory) -> tuple[str, int]:
    """The error that best explains a failed run, and the position of its step (or -1).

    Preference: an explicit failure record; the last step error the run did not get past
    (see :func:`recoveries`); else the outcome itself: a verdict with no detail (a grader's bare
    "failure") is better told as such than by a slip mid-run. An evaluation's failure (an outcome
    file's: a SWE-bench report's "not resolved", its failing tests) judged what the run handed in,
    so it names a step only when the run ended on that step's error (probe E2, E2-1: a script run
    before it was written, a test run that timed out before narrower ones passed).
    """
    failure = trajectory.failure
    if failure and judged_by_outcomes_file(trajectory):
        return failure.error, _ended_on_error(trajectory.steps)
    if failure:  # the last step that erred and the run did not get past (a retried call is no failing step)
        return failure.error, _error_in_steps(trajectory.steps, past_recovered=True)[1]
    error, position = _error_in_steps(trajectory.steps, past_recovered=True)
    if error is not None:
        return error, position
    status = trajectory.metadata.get("exit_status")
    detail = f" (exit status {status})" if status else ""
    return f"run ended with outcome {trajectory.outcome.value}{detail} after {len(trajectory.steps)} steps", -1


def _error_in_steps(steps: Sequence[Step], *, past_recovered: bool) -> tuple[str | None, int]:
    """The last step error and its position, passing over the errors the run recovered from
    when ``past_recovered``."""
    for pos, error, by in recoveries(steps):
        if not past_recovered or by is None:
            return error, pos
    return None, -1


def recoveries(steps: Sequence[Step]) -> Iterator[tuple[int, str, int | None]]:
    """From the last step back, each step that shows an error (:func:`_step_error`): its position, the error, and the
    position of the step by which the run got past it (its own, when it needs none), or None: the run did not.

    The rule: a turn the harness rejected (no action: mini-swe-agent's "Please always provide EXACTLY ONE action")
    is got past by the next step that acts; a shell read that found nothing (``grep``, ``ls`` of a missing path:
    looking changes nothing) and a failed clean-up (``rm`` of a file never made) by themselves, when the command
    ran and exited non-zero: a read the harness refused, the sandbox or shell could not run (Codex's "unsupported
    call: shell", ``bwrap: ... Permission denied``, a syntax error; ``_NOT_THE_COMMANDS``) keeps its place (review
    RAUD2: Codex's shell steps, read since round 22, had those passed over); any other step by the
    nearest later one that did it again without error. Probe J (round p39): the nag, a grep with no match and a
    failed ``rm`` were the decisive error of 52 of 129 unresolved SWE-bench runs (the nag is sent in 207 resolved
    runs too). A run cut to ``MAX_STEPS`` keeps the step that recovered a step it keeps (``within_step_limit``), so
    the rule reads the cut run as it read the whole."""
    done_later: dict[tuple[str, str], int] = {}  # signature -> the nearest later step that did it without error
    acted_later: int | None = None
    for pos in range(len(steps) - 1, -1, -1):
        step = steps[pos]
        error = _step_error(step)
        if error is not None:
            if not step.action:
                yield pos, error, acted_later
            elif (is_removal(step) or (command_of(step) and is_read(step))) and _command_exited(error):
                yield pos, error, pos
            else:
                yield pos, error, done_later.get(signature(step))
        elif step.action:
            done_later[signature(step)] = pos
        if step.action:
            acted_later = pos


def got_past(steps: Sequence[Step]) -> dict[int, int | None]:
    """Each step showing an error (its position): the position of the step by which the run got past that error and
    every later meeting of the same error (:func:`recoveries`), or None: the run met it last without getting past it.
    Decided at ingest and kept in the step rows, so a warning for a pasted error needs no read of the trace (review of
    RT8: a read per step hit took 0.04 s to 0.78 s at 50 ms a read, and a busy trace store changed the answer)."""
    found = sorted((pos, error, by) for pos, error, by in recoveries(steps))
    last: dict[str, int | None] = {}  # an error -> whether its last meeting was got past, walking back from the end
    marks: dict[int, int | None] = {}
    for pos, error, by in reversed(found):
        marks[pos] = last.setdefault(error, by)
    return marks


def _command_exited(error: str) -> bool:
    """Whether ``error`` is a command's own: it ran and exited non-zero (``cat: x: No such file or directory``), the
    harness, the sandbox and the shell saying nothing of it (:data:`_NOT_THE_COMMANDS`, an exit code outside
    :data:`_COMMAND_EXIT_CODES`). Only such an error of a read or a clean-up needs no step to get past it."""
    code = ([*_ADAPTER_EXIT_CODE.finditer(error)] or [_EXIT_CODE.search(error)])[-1]
    return not _NOT_THE_COMMANDS.search(error) and (code is None or int(code.group(1)) in _COMMAND_EXIT_CODES)


def _ended_on_error(steps: Sequence[Step]) -> int:
    """The position of the run's last step that acted or erred, when it erred (the run ended on that error), else -1."""
    acted = [pos for pos, step in enumerate(steps) if step.action or step.error]
    return acted[-1] if acted and _step_error(steps[acted[-1]]) is not None else -1


def _step_error(step: Step) -> str | None:
    """The error a step shows: its own, else its output's last traceback line, else a non-zero
    return code, but not exit code 1 with no output: grep's, test's and diff's "no match"."""
    if step.error:
        return step.error.strip()
    observation = step.observation or ""
    tracebacks = _TRACEBACK_TAIL.findall(observation)
    if tracebacks and "Traceback (most recent call last)" in observation:  # not a file's text naming one
        return tracebacks[-1][0].strip()
    code = _RETURNCODE.search(observation)
    if code and code.group(1) != "0" and not (code.group(1) == "1" and _EMPTY_OUTPUT.search(observation)):
        return f"exit code {code.group(1)}: {clip(observation, 0, 300)}"
    return None


def extractive_summary(trajectory: Trajectory) -> str:
    """Goal + approach + what the run touched + outcome, built only from what the trajectory records."""
    goal = clip(trajectory.task.split("\n\n")[0], 300)
    tools = trajectory.tools_used
    sentences = [f"Goal: {goal}"]
    later = [str(p) for p in trajectory.metadata.get("user_prompts") or [] if str(p).strip()]
    if later:  # a session's later requests (agent CLIs keep them in metadata): often where the real work is asked
        sentences.append(f"Later requests: {clip(' | '.join(later), LATER_REQUESTS_CHARS)}")
    if tools:
        sentences.append(f"Approach: {len(trajectory.steps)} steps using {' -> '.join(tools[:8])}.")
    key_actions = [
        f"{s.action} {render_arguments(s.arguments)[:80]}".strip()
        for s in trajectory.steps
        if s.action and s.arguments
    ]
    if key_actions:
        sentences.append("Key actions: " + "; ".join(dict.fromkeys(key_actions[-3:])) + ".")
    touched_line = touched(trajectory).line()
    if touched_line:
        sentences.append(clip(touched_line, 2_400))
    outcome = f"Outcome: {trajectory.outcome.value}"
    if trajectory.reward is not None:
        outcome += f" (reward {trajectory.reward:g})"
    sentences.append(outcome + ".")
    if trajectory.outcome not in (Outcome.success, Outcome.unknown):
        error, _ = decisive_error(trajectory)
        sentences.append(f"Decisive error: {clip(error, 200)}.")
    elif trajectory.steps and trajectory.steps[-1].observation:
        sentences.append(f"Final result: {clip(trajectory.steps[-1].observation, 200)}")
    if trajectory.what_worked:
        sentences.append(f"What worked: {clip(trajectory.what_worked, 300)}")
    if trajectory.what_failed:
        sentences.append(f"What failed: {clip(trajectory.what_failed, 300)}")
    return "\n".join(sentences)


def failure_text(trajectory: Trajectory) -> tuple[str, int]:
    error, position = decisive_error(trajectory)
    lines = [f"Task: {clip(trajectory.task, 300)}", f"Error: {clip(error, 600, 600)}"]
    if cause := failure_cause(trajectory):
        lines.append(f"Cause: {clip(cause, 600)}")
    if trajectory.failure and trajectory.failure.fix:
        lines.append(f"Fix: {clip(trajectory.failure.fix, 600)}")
    if trajectory.what_failed:
        lines.append(f"What failed: {clip(trajectory.what_failed, 600)}")
    step = trajectory.steps[position] if position >= 0 else None
    named = step_call(step) if step is not None else ""
    if named:  # a step of its error alone (no action: a span's failure) names none, as a warning's digest does not
        lines.append(f"Failing step: {named}")
    return "\n".join(lines), position


def step_windows(trajectory: Trajectory, window: WindowConfig) -> list[Row]:
    """Windows over step *positions* (0..n-1), so keys are computable for expansion."""
    steps = trajectory.steps
    marks = got_past(steps)
    rows: list[Row] = []
    covered = -1
    for start in range(0, len(steps), window.stride):
        end = min(start + window.size, len(steps)) - 1
        if end <= covered:
            break  # the previous window already holds these steps
        parts = [{"index": s.index, "action": s.action or "", "text": step_text(s),
                  **({"got_past": marks[pos]} if marks.get(pos) is not None else {})}
                 for pos, s in enumerate(steps[start : end + 1], start=start)]
        text = "\n".join(p["text"] for p in parts)
        rows.append(Row("step", start, end, text[:MAX_ROW_CHARS], parts))
        covered = end
    return rows


def _clipped(text: str, head: int, tail: int) -> tuple[int, int] | None:
    """The stretch ``[start, end)`` of ``text`` (stripped) that :func:`clip` leaves out, if any."""
    if len(text) <= head + tail + 20:
        return None
    return head, len(text) - tail


def passage_pieces(text: str, start: int, end: int, chars: int = PASSAGE_CHARS) -> list[str]:
    """The whole lines of ``text`` that overlap ``[start, end)``, packed into pieces of at most ``chars``
    characters; a longer line is cut into pieces overlapping by :data:`PASSAGE_OVERLAP`, so a stretch of
    up to that many characters lies whole in one."""
    first = text.rfind("\n", 0, start) + 1
    last = text.find("\n", max(end - 1, first))
    region = text[first : len(text) if last < 0 else last]
    pieces: list[str] = []
    current: list[str] = []
    size = 0

    def flush() -> None:
        nonlocal size
        if current and any(line.strip() for line in current):
            pieces.append("\n".join(current))
        current.clear()
        size = 0

    for line in region.split("\n"):
        if len(line) > chars:
            flush()
            stride = chars - PASSAGE_OVERLAP
            for at in range(0, len(line) - PASSAGE_OVERLAP, stride):
                pieces.append(line[at : at + chars])
            continue
        if current and size + 1 + len(line) > chars:
            flush()
        current.append(line)
        size += len(line) + (1 if size else 0)
    flush()
    return pieces


def _step_fields(step: Step, whole: bool) -> list[tuple[str, str, int, int]]:
    """(label, full text, head kept, tail kept) of each field a step row clips; ``whole``: the
    step row shows none of it (a window cut at MAX_ROW_CHARS), so everything is a passage."""
    fields = [("arguments", argument_text(step.arguments), ARGUMENT_CHARS, 0),
              ("result", (step.observation or "").strip(), OBSERVATION_HEAD, OBSERVATION_TAIL),
              ("error", (step.error or "").strip(), ERROR_HEAD, ERROR_TAIL)]
    if whole:
        fields.insert(0, ("thought", (step.thought or "").strip(), THOUGHT_CHARS, 0))
        return [(label, text, 0, 0) for label, text, _, _ in fields if text]
    return [f for f in fields if f[1]]


#: The fields of a step that are what its call gave back: their passages name the call (:func:`step_call`), as the
#: window holding the step's head does. A later piece of a long ``cat`` / ``view`` held code lines and no file name,
#: so a search for one of them showed a row that named no file (round 22, GEN3: 866 of 866 such passages of the shared
#: mini-swe-agent runs).
_OUTPUTS = frozenset({"result", "error"})


def step_passages(trajectory: Trajectory, windows: list[Row]) -> list[Row]:
    """Passage rows: what the step windows clip away of each step's output, arguments and error.

    Each piece is a ``passage`` row at its step's position (``step_index = step_end``),
    sharing the vector of the first window holding the step. A step that no window shows
    in full (its window text was cut at MAX_ROW_CHARS) gets all of its fields as passages.
    """
    shown: dict[int, Row] = {}  # position -> a window holding that step's whole text
    holder: dict[int, Row] = {}  # position -> the first window holding the step at all
    for row in windows:
        offset = 0
        for position, part in enumerate(row.steps, start=row.step_index):
            holder.setdefault(position, row)
            offset += len(part["text"]) + 1
            if offset - 1 <= MAX_ROW_CHARS:
                shown.setdefault(position, row)
    rows: list[Row] = []
    for position, step in enumerate(trajectory.steps):
        window = shown.get(position) or holder.get(position)
        if window is None:
            continue
        for label, text, head, tail in _step_fields(step, whole=position not in shown):
            span = (0, len(text)) if position not in shown else _clipped(text, head, tail)
            if span is None:
                continue
            call = passage_call(step) if label in _OUTPUTS else ""
            about = f"{label} of {call}" if call else label
            pieces = passage_pieces(text, *span, chars=PASSAGE_CHARS - len(call))  # the header's call is the piece's room
            for number, piece in enumerate(pieces, 1):
                header = f"[step {step.index}] {about}, clipped part {number}/{len(pieces)}:"
                rows.append(Row("passage", position, position, f"{header}\n{piece}", part=f"{label}.{number}",
                                vector_of=window))
    return rows


def represent(
    trajectory: Trajectory,
    *,
    window: WindowConfig = WindowConfig(),
    summarizer: Summarizer | Callable[[Trajectory], str] = extractive_summary,
) -> list[Row]:
    """All index rows for one trajectory, in a stable order: of its text without encoded blobs
    (:func:`indexed_text`)."""
    return represent_indexed(indexed_text(trajectory), window=window, summarizer=summarizer)


def represent_indexed(
    trajectory: Trajectory,
    *,
    window: WindowConfig = WindowConfig(),
    summarizer: Summarizer | Callable[[Trajectory], str] = extractive_summary,
) -> list[Row]:
    """:func:`represent` of a run already through :func:`indexed_text`: the indexer removes a run's blobs once for its
    rows and its digests (``trajsearch.indexer.indexed_rows``), as each pass reads every text of the run."""
    rows = [
        Row("task", TRAJECTORY_LEVEL_INDEX, TRAJECTORY_LEVEL_INDEX, trajectory.task[:MAX_ROW_CHARS]),
        Row("summary", TRAJECTORY_LEVEL_INDEX, TRAJECTORY_LEVEL_INDEX, summarizer(trajectory)[:MAX_ROW_CHARS]),
    ]
    windows = step_windows(trajectory, window)
    rows.extend(windows)
    rows.extend(step_passages(trajectory, windows))
    if trajectory.outcome in FAILED_OUTCOMES:
        text, position = failure_text(trajectory)
        rows.append(Row("failure", position, position, text[:MAX_ROW_CHARS]))
    return rows


def indexed_text(trajectory: Trajectory) -> Trajectory:
    """``trajectory`` with every text its rows are made of without encoded blobs
    (:func:`~trajsearch.blobs.without_blobs`): its task, steps, failure, lessons and later requests. The stored trace
    keeps them: it is the run as it was (an export of it re-ingests to the same run, the image stays there to be
    seen), the rows are what is searched. The same object where it holds no blob, as most runs do."""
    steps = [_changed(step, ("thought", "arguments", "observation", "error")) for step in trajectory.steps]
    run = _changed(trajectory, ("task", "what_worked", "what_failed"))
    failure = trajectory.failure and _changed(trajectory.failure, ("error", "cause", "fix"))
    prompts = trajectory.metadata.get("user_prompts")
    update: dict[str, Any] = {}
    if any(new is not old for new, old in zip(steps, trajectory.steps)):
        update["steps"] = steps
    if failure is not trajectory.failure:
        update["failure"] = failure
    if (kept := without_blobs(prompts)) is not prompts:
        update["metadata"] = {**trajectory.metadata, "user_prompts": kept}
    return run.model_copy(update=update) if update else run


def _changed(model: Any, fields: Sequence[str]) -> Any:
    """``model`` (a pydantic one) with its ``fields`` without blobs; itself where none held one."""
    update = {name: kept for name in fields if (kept := without_blobs(old := getattr(model, name))) is not old}
    return model.model_copy(update=update) if update else model


def token_cap(row: Row) -> int | None:
    """How many of a row's first tokens its vector is made of (``None``: as many as the model reads)."""
    return WINDOW_TOKENS if row.level == "step" else None


def embed_rows(embedder: Any, rows: Sequence[Row], *, batch_size: int = 64) -> Any:
    """One vector per row, in order: rows with ``vector_of`` (passages) take that row's vector
    and cost no embedding; every other row's text is embedded once, as a document (the
    embedder's bulk path where it has one: the vectors ingest writes, however rows are made),
    step windows from their first :data:`WINDOW_TOKENS` tokens."""
    import numpy as np  # noqa: PLC0415 - represent stays importable without numpy

    from .embed.base import document_encoder  # noqa: PLC0415

    own: dict[int, Row] = {}
    for row in rows:
        source = row.vector_of if row.vector_of is not None else row
        own.setdefault(id(source), source)
    sources = list(own.values())
    by_cap: dict[int | None, list[int]] = {}  # token cap -> positions in sources
    for i, row in enumerate(sources):
        by_cap.setdefault(token_cap(row), []).append(i)
    vectors = np.zeros((len(sources), 0), dtype=np.float32)
    for cap, mine in by_cap.items():
        got = np.asarray(document_encoder(embedder, max_tokens=cap)([sources[i].text for i in mine],
                                                                     batch_size=batch_size))
        if not vectors.shape[1]:
            vectors = np.zeros((len(sources), got.shape[1]), dtype=np.float32)
        vectors[mine] = got
    at = {key: i for i, key in enumerate(own)}
    return vectors[[at[id(r.vector_of if r.vector_of is not None else r)] for r in rows]]


def row_id(tenant: str, trajectory_id: str, level: str, step_index: int, part: str = "") -> str:
    """Deterministic primary key: re-ingest upserts, and neighbours are addressable by key.

    Failure rows are keyed at -1 whatever step they point at: one per run. Passages are
    keyed by their step and ``part`` (field and piece).
    """
    key_index = step_index if level in ("step", "passage") else TRAJECTORY_LEVEL_INDEX
    raw = f"{tenant}\x1f{trajectory_id}\x1f{level}\x1f{key_index}" + (f"\x1f{part}" if part else "")
    return hashlib.blake2b(raw.encode(), digest_size=16).hexdigest()


#: ``metadata[TIME_BASIS] == FILE_TIME``: the dump gave the run no time, so ingest dated it by its file's mtime.
TIME_BASIS, FILE_TIME = "created_at_basis", "file mtime"


def content_hash(trajectory: Trajectory, window: WindowConfig, *, version: int | None = None) -> str:
    """Changes whenever the trajectory or the way it is represented (``version``: this one) changes. A time
    taken from the file's mtime is no part of the run (a touch or an append moves it): such a run is unchanged
    when the rest is, so its stored rows keep the date of its first ingest."""
    payload = run_content(trajectory) + f"|v{version or REPRESENTATION_VERSION}|w{window.size}s{window.stride}"
    return hashlib.blake2b(payload.encode(), digest_size=16).hexdigest()


#: ``metadata[INGESTED_FROM]``: which dump file a run was last written from, as :func:`file_digest` of it (set
#: by the indexer on the stored trace), to tell a re-ingest of that file from another file's run that took the
#: same id. A digest, not the path: the trace is shown to tenants (GetTrace, export, the web's JSON), the path
#: is of the operator's disk; keyed by a secret of the store (:func:`stored_digest`), or a tenant could digest a
#: guessed path and compare. Where a run was read is no part of its content: a dump moved holds the same runs.
INGESTED_FROM = "ingested_from"


def file_digest(path: str) -> str:
    """A digest of the dump file ``path``'s resolved path (16 hex), equal for the same file however it was named;
    what :data:`INGESTED_FROM` holds of it is this keyed by the store (:func:`stored_digest`)."""
    try:
        path = str(Path(path).resolve())
    except (OSError, ValueError, RuntimeError):  # a name no file system path holds (a stream's): as it is
        pass
    return hashlib.blake2b(path.encode(errors="surrogateescape"), digest_size=8).hexdigest()


def stored_digest(digest: str, key: bytes | None) -> str:
    """What a trace keeps of the :func:`file_digest` ``digest``: keyed by the store's secret (``key``, see
    ``store.traces.FileTraceStore.digest_key``), since a bare digest of a path lets a tenant who reads the trace
    confirm a guessed path of the operator's disk; ``digest`` itself where the store has no key (and in a store
    written before keys: compare with both)."""
    if not key:
        return digest
    return hashlib.blake2b(digest.encode(), key=key, digest_size=8).hexdigest()


#: What a reader puts in ``metadata[INGESTED_FROM]`` where the indexer that stores the run cannot see the dump
#: file (a server's ingest stream, ``ingest --server``; a dump piped in, whose file is a temporary copy): this
#: prefix and the :func:`file_digest` of the file the operator named. The indexer stores the digest alone, as it
#: stores a file's it read itself, and compares it the same way (probe 50, OP 1: both replaced a stored run in
#: silence). A stream given no name is a dump never seen before (:func:`stream_mark`).
SOURCE_MARK = "read-from:"


def source_mark(path: str) -> str:
    """The :data:`SOURCE_MARK` of the dump file ``path`` (resolved here, where the operator named it)."""
    return SOURCE_MARK + file_digest(path)


def stream_mark() -> str:
    """The :data:`SOURCE_MARK` of a stream no name was given (``cat dump | trajsearch ingest -``): which dump it
    was cannot be told, so any different run of its ids that replaces a stored one is said."""
    return SOURCE_MARK + secrets.token_hex(8)


def marked_digest(trajectory: Trajectory) -> str | None:
    """The file digest a run's reader marked it with (:data:`SOURCE_MARK`), if any."""
    mark = trajectory.metadata.get(INGESTED_FROM)
    if isinstance(mark, str) and re.fullmatch(re.escape(SOURCE_MARK) + "[0-9a-f]{16}", mark):
        return mark[len(SOURCE_MARK):]
    return None


def received_mark(trajectory: Trajectory, tenant: str) -> Trajectory:
    """``trajectory`` as a server takes it from a client of ``tenant``: its reader's mark (:data:`SOURCE_MARK`) put
    in a domain of its own, and any other :data:`INGESTED_FROM` dropped. A client names the digest it likes: were
    it stored keyed as a file's the server read, a tenant would send the digest of a guessed path and compare the
    trace it reads back with the operator's run of that file (review ROP, 1; a path sent as it is was stored
    verbatim). A mark in this domain never equals a file's digest, and still tells one client file from another."""
    if INGESTED_FROM not in trajectory.metadata:
        return trajectory
    metadata = {k: v for k, v in trajectory.metadata.items() if k != INGESTED_FROM}
    if (digest := marked_digest(trajectory)) is not None:
        remote = hashlib.blake2b(f"remote:{tenant}:{digest}".encode(), digest_size=8).hexdigest()
        metadata[INGESTED_FROM] = SOURCE_MARK + remote
    return trajectory.model_copy(update={"metadata": metadata})


def run_content(trajectory: Trajectory, *, without: frozenset[str] = frozenset(),
                metadata_without: frozenset[str] = frozenset()) -> str:
    """What a run holds, as JSON, for telling runs apart: without ``without`` (fields) and ``metadata_without``
    (metadata keys), without a time the file's mtime gave it (:data:`TIME_BASIS`), which a touch or an append
    moves, and without the file it was written from (:data:`INGESTED_FROM`)."""
    exclude: dict[str, Any] = dict.fromkeys(without, True)
    if trajectory.metadata.get(TIME_BASIS) == FILE_TIME:
        exclude["created_at"] = True
    if dropped := ({INGESTED_FROM} | metadata_without) & trajectory.metadata.keys():
        exclude["metadata"] = dropped
    return trajectory.model_dump_json(exclude=exclude or None)


def indexed_version(trajectory: Trajectory, window: WindowConfig, stored_hash: str) -> int | None:
    """The representation version ``trajectory`` was indexed with, told by its stored content hash
    (``None``: another trajectory or window, or a version that never existed)."""
    return next((v for v in range(REPRESENTATION_VERSION, 0, -1)
                 if content_hash(trajectory, window, version=v) == stored_hash), None)

"""Aider (Aider-AI/aider): its Markdown chat history, ``.aider.chat.history.md`` (``--chat-history-file``).

Aider appends every session to one file (``aider/io.py``, ``InputOutput.append_chat_history``): a session opens
with ``# aider chat started at <local time>``; the user's input is ``#### `` lines; what aider itself prints
(model banner, prompts and answers, ``Applied edit to``, ``Commit``, lint reports) is ``> `` lines; the model's
replies are plain Markdown (SEARCH/REPLACE or whole-file blocks). ``aider/utils.py``'s
``split_chat_history_markdown`` reads it back the same way. Not JSON: the adapter reads the text itself
(``read_text``), one session at a time, so a history of years is never held whole.

Mapping, per session (one run):

- ``trajectory_id``: ``aider.<start time>.<digest of the session's head>`` (its banner and first request): what the
  file says, not its path (two sessions started the same second differ by their words; the same session copied
  elsewhere, committed mid-run or followed by a later session keeps its id);
- ``task``: the first request (``#### text``, or ``/ask`` ``/code`` ``/architect`` with words); later requests
  in ``metadata.user_prompts``; ``created_at``: the start time (local, unzoned in the file: read in the zone
  ``TRAJSEARCH_LOCAL_TZ`` names, else as UTC; ``metadata.created_at_zone`` says which, ``_common.local_clock``);
- ``model_id``, ``metadata.edit_format``, ``tool_versions.aider``: the banner's ``Model:``/``Main model:`` and
  ``Aider v`` lines; ``metadata.cost_usd``: the session's cost the last ``Tokens: ... Cost: $X message, $Y session.``
  line says (``Y``, rounded by aider; none where the model's prices are unknown);
- steps: each reply (``reply``, its text the thought: a reasoning model's reasoning and answer, without the tag
  aider wraps the reasoning in), the files an edit applied (``edit``), commits
  (``commit``), shell commands run (``shell``: a reply's suggested command the user ran, or ``/run``, typed or a
  ``--load`` file's), ``/test`` runs (``test``; one that failed, as a failed ``--auto-test`` after an edit, has the
  error "tests failed (N lines of output)": aider adds the output to the chat only then), the auto-linter's report
  (``lint``, its first finding the error); an edit refused is one ``edit`` step, its error "The LLM did not conform
  to the edit format." and aider's reason ("# 1 SEARCH/REPLACE block failed to match!", or the ``^^^`` why of a reply
  it could not parse), its observation the rest of the error, which aider leaves unquoted before the next reply (a
  SEARCH/REPLACE miss's detail, or the reply up to where aider stopped; see ``_NOT_CONFORMED``); provider errors
  (``litellm.*Error``) and a used-up token limit ("Model X has hit a token limit!") are errors of a ``reply`` step
  (one of its own when none came); a session of more than ``MAX_STEPS`` (one session can be a whole history) keeps
  its start, its end and its errors (``within_step_limit``);
- outcome: unknown (an interactive session says nothing of success), but for aider's benchmark harness
  (``benchmark/benchmark.py``), which writes ``.aider.results.json`` beside an exercise's history: its last
  session takes the verdict of ``tests_outcomes`` (passed on any try: ``True`` in the list) and its figures.

A session with no request and no reply (started, then quit or interrupted) is passed over, not an error; a file
with no session header is refused. ``.aider.results.json`` named alone, and an ``--analytics-log`` file, hold no
run (``side_file``).
"""

from __future__ import annotations

import hashlib
import json
import logging
import re
from dataclasses import dataclass, field
from itertools import groupby
from datetime import datetime
from pathlib import Path
from typing import Any, Iterator

from trajsearch.model import Outcome, Step, Trajectory

from ..sources import GZIP_ERRORS, open_dump
from ._agent_cli import error_line, in_trial, prompt_list, within_step_limit
from ._common import TIME_ZONE, Context, PassedOver, clip_step_text, clip_task, loads, local_clock, short
from .atif import harbor_trial

log = logging.getLogger(__name__)

NAME = "aider"
#: The history file's default name (``--chat-history-file``), which a walk reads where it lies (it is hidden).
HISTORY = ".aider.chat.history.md"
#: The history's name in a Harbor trial's ``agent/`` (Harbor's ``agents/installed/aider.py``), and aider's terminal
#: output Harbor keeps beside it (``| tee /logs/agent/aider.txt``: no run).
HARBOR_HISTORY, _HARBOR_OUTPUT = "aider.chat.history.md", "aider.txt"
_HARBOR = (HARBOR_HISTORY, _HARBOR_OUTPUT)
#: What aider's benchmark harness writes beside an exercise's history.
RESULTS = ".aider.results.json"
#: aider's other logs beside its history, by their default names: no run in either.
_LOGS = {".aider.input.history": "aider's history of the lines typed at its prompt (--input-history-file)",
         ".aider.llm.history": "aider's log of the messages it sent the model and got back (--llm-history-file)"}
#: A line of aider's analytics log (``aider/analytics.py``, ``Analytics.event``: ``--analytics-log FILE``).
_ANALYTICS_KEYS = {"event", "properties", "user_id", "time"}
#: A session's header (``InputOutput.__init__``), its start time (local) in the group. Searched in a file's head for
#: detection (``SIGNATURE``): aider writes a blank line and the header first, but a script may have put notes on
#: top (a project's prompt, 16 lines of it in a real one).
_HEADER_TEXT = r"# aider chat started at (\d{4}-\d\d-\d\d \d\d:\d\d:\d\d)\s*$"
SIGNATURE = _HEADER = re.compile("^" + _HEADER_TEXT, re.M)
#: What a history aider wrote opens with (a blank line, then a header: no JSON file does): it is told by that before
#: any line of JSON in it is taken for a record (a reply quoting another format's line in a code block).
HEAD = re.compile(r"\s*" + _HEADER_TEXT, re.M)
#: The banner's model: ``Main model: X with Y edit format`` (0.19: ``using``; 0.14: ``Model: X``, no format).
_BANNER_MODEL = re.compile(r"^(?:Main )?[Mm]odel: (\S+)(?: (?:with|using) ([\w-]+) edit format)?")
_VERSION = re.compile(r"^Aider v(\d[\w.+-]*)")
#: A line of the user's input: aider ends each with two spaces (``InputOutput.user_input``, ``linebreak=True``), a
#: blank one ``####   ``. A ``####`` heading of a model's reply ends as written; a history whose repository strips
#: trailing spaces has no such mark left, and every ``####`` line is read as input there (:func:`_events`).
_INPUT = re.compile(r"#### .*  |####\s*")
_REQUEST_COMMAND = re.compile(r"^/(?:ask|code|architect|context|help)\s+(\S.*)", re.S)
_RUN_COMMAND = re.compile(r"^/(run|test|!)\s*(.*)", re.S)
_EDIT_REFUSED = re.compile(r"^(?:The LLM did not conform to the edit format\.|# \d+ SEARCH/REPLACE blocks? failed to "
                           r"match!|Unable to create .*, skipping edits\.|Exception while updating files:)")
#: How aider reports an edit it could not apply (``Coder.apply_updates``): this line, its docs' address
#: (``_AIDER_DOCS``), then the edit format's ``ValueError``: aider's reason (``# 1 SEARCH/REPLACE block failed to
#: match!``, ``No filename provided before ``` in file listing``), or the model's reply up to the line it could not
#: parse, then ``^^^`` and why (``_UNPARSED``). Since 0.55 aider quotes that error's first line only: the rest runs
#: into the model's next reply, up to the SEARCH/REPLACE failure's closing words (``_REFUSAL_DETAIL``) or the ``^^^``
#: line; before, it quoted every line.
_NOT_CONFORMED = "The LLM did not conform to the edit format."
#: aider's docs, where it points after the refusal (``urls.edit_errors``; 0.36-0.37: ``For more info see:
#: https://aider.chat/docs/faq.html#aider-isnt-editing-my-files``): no reason.
_AIDER_DOCS = "https://aider.chat/docs/"
_REFUSAL_DETAIL = re.compile(
    r"\A## SearchReplaceNoExactMatch: .*?^The SEARCH section must exactly match an existing block of lines including "
    r"all white space, comments, indentation, docstrings, etc$(?:\s*^# The other \d+ SEARCH/REPLACE blocks? were "
    r"applied successfully\.\s*^Don't re-send them\.\s*^Just reply with fixed versions of the blocks? above that "
    r"failed to match\.$)?", re.M | re.S)
#: Why aider could not parse a SEARCH/REPLACE reply (``editblock_coder.find_original_update_blocks``: the reply up
#: to the failing line, then ``^^^ Bad/missing filename...`` or ``^^^ Expected `=======```).
_UNPARSED = re.compile(r"^\^\^\^ (.+)$", re.M)
#: Where a streamed reply's reasoning starts and ends (``reasoning_tags.py``, ``REASONING_TAG``): aider writes the
#: response as it came, its reasoning (``reasoning_content``) inside this tag, which its terminal shows as THINKING.
_REASONING_TAG = re.compile(r"^</?thinking-content-7bbeb8e1441453ad999a0bbba8a46d4b>\n*", re.M)
#: A command of a ``--load`` file (``Commands.cmd_load``), which aider echoes as its own output, not as input.
_LOADED = re.compile(r"^Executing: (/.*)")
#: A provider's error (``litellm.*Error``), or the model's context or output used up (``show_exhausted_error``,
#: ``Model X has hit a token limit!``, the reply cut off or never given): either ends the reply in error.
_PROVIDER_ERROR = re.compile(r"^litellm\.\w+(?:Error|Exception)\b|^Model \S+ has hit a token limit!")
_LINT_RUNNING = re.compile(r"^## Running: (.+)")
#: What aider's benchmark harness puts after a failed try's test output as the next try's input
#: (``benchmark/prompts.py``, ``test_failures``).
_TEST_FAILURES = "See the testing errors above."
_MARKED = re.compile(r"^(\d+)█(.*)$")
#: What ``/test`` (``cmd_run(add_on_nonzero_exit=True)``) writes only when the tests failed; ``/run`` when the user
#: chose to add the output.
_OUTPUT_ADDED = re.compile(r"^Added (\d+ lines?) of output to the chat\.")
#: Why a session holds no run (launched, then quit or interrupted: ``/add`` and Ctrl-C), as the summary counts it.
_STARTED_AND_QUIT = "no request and no reply"
_COMMIT = re.compile(r"^Commit ([0-9a-f]{7,40}) (.+)")
#: What a reply cost (``Coder.calculate_and_show_tokens_and_cost``, when the model's prices are known): the message's
#: and the session's so far (aider's process, begun at the header), as aider rounds them (2 significant digits).
_COST = re.compile(r"^Tokens: .*\bCost: \$[\d.]+ message, \$([\d.]+) session\.")


@dataclass
class Session:
    """One session: where it starts and its pieces (see :func:`_events`, split once: whether it holds a run asks
    them, its id and its reading; its lines are let go); the last of a benchmark exercise's history, with the
    ``.aider.results.json`` aider's harness wrote beside it."""
    started: str
    line: int
    events: list[tuple[str, str]]
    results: dict[str, Any] | None = None

    @property
    def digest(self) -> str:
        """What the session's id is told by beside its start: its head, aider's banner up to the first request, which
        is fixed once typed. Not the whole text: a history committed while aider ran ends mid-session, and aider
        writes each header after a blank line, which the session above it then gains (a grown history read again
        would store that session twice)."""
        events = self.events
        end = next((n + 1 for n, _ in _requests(events)), len(events))
        return hashlib.sha256(json.dumps([self.started, events[:end]]).encode()).hexdigest()[:12]


def matches(record: Any) -> bool:
    """No JSON record is aider's: its history is told by its head (``SIGNATURE``) or its name."""
    return False


def walked_file(path: Path) -> bool:
    """The adapter hook (see ``adapters/__init__``): the history where aider writes it, a hidden ``.md``, or where
    Harbor's aider agent has it write in a trial (``--chat-history-file=/logs/agent/aider.chat.history.md``, no
    ATIF beside it: the trial's run); and the benchmark's results and aider's other logs beside it, hidden too,
    which the walk then passes over as what they are (``side_file``, ``side_path``) rather than count among files
    left unread."""
    return path.name in (HISTORY, RESULTS, *_LOGS) or (path.name in _HARBOR and harbor_trial(path) is not None)


def read_with(path: Path) -> tuple[Path, ...]:
    """A benchmark exercise's verdict, beside its history: a rerun's results change the run read."""
    return (path.with_name(RESULTS),) if path.name == HISTORY else ()


def side_file(record: Any) -> str | None:
    """``.aider.results.json`` named alone: the verdict of the history beside it, no run; or aider's analytics log
    (``--analytics-log``, any name, so not always beside the history: aider's ``args.py`` puts the history at the
    project's git root unless ``--chat-history-file`` says otherwise), whose lines name events (``launched``,
    ``message_send``, ``exit``) and their counts, never a request or a reply."""
    if not isinstance(record, dict):
        return None
    if {"testcase", "tests_outcomes", "edit_format"} <= record.keys():
        return (f"aider's benchmark results of one exercise ({RESULTS}); its verdict is read with the {HISTORY} "
                f"beside it: ingest that file or the exercise's folder")
    if record.keys() == _ANALYTICS_KEYS and isinstance(record["event"], str) and isinstance(record["properties"], dict):
        return (f"aider's analytics log (--analytics-log: events and token counts, no request or reply); its runs "
                f"are in the {HISTORY} aider writes at the root of the project it ran in (by default)")
    return None


def side_path(path: Path, fmt: str | None) -> str | None:
    """aider's input history or LLM log, by name, or its terminal output in a Harbor trial: the runs are in the chat
    history beside it."""
    if path.name == _HARBOR_OUTPUT and harbor_trial(path) is not None:
        return f"aider's terminal output Harbor kept; the trial's run is the {HARBOR_HISTORY} beside it"
    what = _LOGS.get(path.name)
    return f"{what}; its runs are in the {HISTORY} beside it" if what else None


def read_text(path: Path) -> Iterator[tuple[str, Any, str | None, None]]:
    """The sessions of a history, ``(position, session, error, None)`` each, read line by line; the benchmark's
    verdict joins the last that holds a run (an empty one is passed over in ``to_trajectory``)."""
    last: tuple[str, Session] | None = None
    found = False
    try:
        with open_dump(path) as stream:
            for position, session in _sessions(stream):
                found = True
                if not _holds_a_run(session.events):
                    yield position, session, None, None
                    continue
                if last is not None:
                    yield last[0], last[1], None, None
                last = (position, session)
    except (OSError, *GZIP_ERRORS) as exc:
        yield "file", None, f"cannot read {path}: {exc}", None
        return
    if not found:
        yield "file", None, f"no '# aider chat started at <time>' line: not an aider chat history ({HISTORY})", None
    elif last is not None:
        yield last[0], _with_verdict(last[1], path), None, None


def _sessions(stream: Any) -> Iterator[tuple[str, Session]]:
    """The sessions of a history stream; what precedes the first header (a note a user wrote on top) is left out."""
    header: tuple[str, int] | None = None  # the start time and line of the session being read
    lines: list[str] = []
    for number, raw in enumerate(stream, 1):
        line = raw.decode("utf-8", errors="replace").rstrip("\r\n")
        if said := _HEADER.match(line):
            if header is not None:
                yield f"line {header[1]}", Session(*header, _events(lines))
            header, lines = (said.group(1), number), []
        elif header is not None:
            lines.append(line)
    if header is not None:
        yield f"line {header[1]}", Session(*header, _events(lines))


def _holds_a_run(events: list[tuple[str, str]]) -> bool:
    return any(kind == "reply" for kind, _ in events) or bool(_requests(events))


def _with_verdict(session: Session, path: Path) -> Session:
    """The last session of a benchmark exercise's history, with the results aider's harness wrote beside it."""
    results = path.with_name(RESULTS)
    if path.name != HISTORY or not results.is_file():
        return session
    try:
        verdict = loads(results.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        log.warning("%s: not read (%s): the run's outcome stays unknown", results, exc)
        return session
    if isinstance(verdict, dict):
        session.results = verdict
    return session


def _events(lines: list[str]) -> list[tuple[str, str]]:
    """The session as aider wrote it: ``user`` (``####``), ``tool`` (``>``: aider's own output, a line each) and
    ``reply`` (the model's Markdown) pieces, in order (as ``split_chat_history_markdown`` splits it)."""
    events: list[tuple[str, str]] = []
    marked = any(_INPUT.fullmatch(line) for line in lines if line.startswith("####"))
    for kind, group in groupby((_piece(line, marked) for line in lines), key=lambda piece: piece[0]):
        texts = [text for _, text in group]
        if kind == "reply" and not any(k == "user" for k, _ in events):
            continue  # aider's own output went on unquoted (tool_output quotes a message's first line only): the
            # command line it echoes with a multi-line --message; the model replies to a request only
        for text in (texts if kind == "tool" else ["\n".join(texts)]):
            if text.strip():
                events.append((kind, text.strip()))
    return events


def _piece(line: str, marked: bool) -> tuple[str, str]:
    """A line's kind and its text, without its mark and the Markdown line break aider appends. Where the session
    has aider's mark of input (``marked``: lines ending in two spaces), a ``####`` line without it is a heading of
    the model's reply."""
    if _INPUT.fullmatch(line) if marked else (line.startswith("#### ") or line.rstrip() == "####"):
        kind, text = "user", line[5:]
    elif line.startswith("> ") or line == ">":
        kind, text = "tool", line[2:]
    else:
        kind, text = "reply", line
    return kind, text[:-2] if text.endswith("  ") else text


def _requests(events: list[tuple[str, str]]) -> list[tuple[int, str]]:
    """``(position, words)`` of each request the user made in a session, once: a command's words (``/code X``) are
    the request, and aider's echo of them as it runs them (``#### X``; ``/help``'s ``# Question: X`` with the docs
    it found) is passed over; so is an architect's reply, which aider hands its editor model as the next input
    (``ArchitectCoder.reply_completed``, after ``Edit the files?`` or by itself)."""
    found: list[tuple[int, str]] = []
    echo: str | None = None  # the words the next input repeats if it is a command's echo
    reply: str | None = None  # the reply just before
    for position, (kind, text) in enumerate(events):
        if kind == "reply":
            reply = _flat(text)
        if kind != "user":
            continue
        flat, expected, before, echo, reply = _flat(text), echo, reply, None, None
        if expected is not None and (flat == expected or flat.startswith(f"# Question: {expected}")) \
                or flat == before:
            continue
        if said := _request(text):
            found.append((position, said))
            echo = _flat(said) if text.startswith("/") else None
    return found


def _flat(text: str) -> str:
    """Text as compared with its echo: aider rewrites each line of an input it echoes (two spaces appended)."""
    return " ".join(text.split())


def _request(text: str) -> str | None:
    """The request a user input makes: its words, or those of ``/ask`` ``/code`` ``/architect``; None for another
    command (``/add``, ``/drop``, ``/run``), a blank, or the benchmark's test failures."""
    if _TEST_FAILURES in text:
        return None
    if not text.startswith("/"):
        return text if text != "<blank>" else None
    said = _REQUEST_COMMAND.match(text)
    return said.group(1).strip() if said else None


def _created(started: str, source: Path) -> tuple[datetime, str]:
    """The session's start: aider writes ``datetime.now()``, the machine's local time with no zone (``io.py``), and
    nothing beside it says the zone (the history's mtime is its last session's end), so it is read on the operator's
    clock (``local_clock``), with how in ``metadata.created_at_zone``."""
    clock = local_clock(source)
    return clock.at(datetime.strptime(started, "%Y-%m-%d %H:%M:%S")), clock.basis


@dataclass
class _Refusal:
    """An edit aider could not apply (``_NOT_CONFORMED``), its step, while the error's lines are read."""
    step: int
    first: str | None = None  # the error's first line: aider's reason, or the first of the reply it could not parse
    quoted: list[str] = field(default_factory=list)  # the error's next lines, which aider quoted before 0.55


class _Steps:
    """The steps of a session, built as its events are met."""

    def __init__(self) -> None:
        self.steps: list[Step] = []
        self.lint: list[str] | None = None  # the lint report being read
        self.added: str | None = None  # a failed auto-test's "Added N lines of output", before aider asks to fix it
        self.cost: float | None = None  # the session's cost so far, as the last reply's Tokens line said it
        self.refusal: _Refusal | None = None  # the edit aider could not apply, up to the next reply or input

    def add(self, action: str, **fields: Any) -> Step:
        for name in ("thought", "observation", "error"):
            fields[name] = clip_step_text(fields.get(name))
        self.steps.append(Step(index=len(self.steps), action=action, **fields))
        return self.steps[-1]

    def fail_last(self, action: str, error: str) -> None:
        """``error`` on the last step if it is an ``action`` without one, else on a step of its own."""
        last = self.steps[-1] if self.steps else None
        if last is not None and last.action == action and last.error is None:
            self.steps[-1] = last.model_copy(update={"error": clip_step_text(error)})
        else:
            self.add(action, error=error)

    def user(self, text: str) -> None:
        self.refusal = None
        if (at := text.find(_TEST_FAILURES)) > 0:  # the benchmark's next try: the tests' output, as the user's input
            output = text[:at].strip()
            self.add("test", observation=output, error=error_line(output, (output.splitlines() or [_TEST_FAILURES])[-1]))
        elif said := _RUN_COMMAND.match(text):
            command = said.group(2).strip()
            self.add("test" if said.group(1) == "test" else "shell", arguments={"command": command})

    def reply(self, text: str) -> None:
        """A reply of the model, its reasoning and its answer without aider's tags around the reasoning; the rest of
        an edit's refusal that aider left unquoted before it goes to that edit."""
        refusal = self.refusal
        self.refusal = None
        text = _REASONING_TAG.sub("", text).strip()
        if refusal is not None and refusal.first is not None:
            text = self.refusal_rest(refusal, text)
        if text:
            self.add("reply", thought=text)

    def refusal_rest(self, refusal: _Refusal, text: str) -> str:
        """What of a reply is its own: the refusal's unquoted rest it opens with is the edit's (the reply aider could
        not parse and why, or a SEARCH/REPLACE block's failure to match, its observation)."""
        if (unparsed := _UNPARSED.search(text)) and self.quotes_its_reply(refusal):
            self.refuse(refusal, unparsed.group(1), "\n".join([refusal.first or "", text[:unparsed.start()].strip()]))
            return text[unparsed.end():].strip()
        if detail := _REFUSAL_DETAIL.match(text):
            self.refuse(refusal, refusal.first or "", detail.group(0))
            return text[detail.end():].strip()
        return text

    def quotes_its_reply(self, refusal: _Refusal) -> bool:
        """Whether the error aider refused the edit with opens with the model's reply (a line of the reply just
        before), not with aider's reason: the reply it could not parse."""
        before = self.steps[refusal.step - 1] if refusal.step else None
        return (before is not None and before.action == "reply"
                and refusal.first in (line.strip() for line in (before.thought or "").splitlines()))

    def refuse(self, refusal: _Refusal, reason: str, observation: str | None = None) -> None:
        """The refused edit's error, ``_NOT_CONFORMED`` and why; its observation what aider said of it."""
        update = {"error": clip_step_text(f"{_NOT_CONFORMED} {reason}".strip())}
        if observation:
            update["observation"] = clip_step_text(observation)
        self.steps[refusal.step] = self.steps[refusal.step].model_copy(update=update)

    def refusal_line(self, refusal: _Refusal, text: str) -> bool:
        """Whether a line aider quoted is its refusal's: the docs' address, or the error's first line (its reason,
        until the next reply shows it is the model's); before 0.55 the error's next lines were quoted too, up to
        the ``^^^`` why of a reply it could not parse (the others are read as any line, as they were)."""
        if refusal.first is None:
            if _AIDER_DOCS not in text:
                refusal.first = text
                self.refuse(refusal, text)
            return True
        if (unparsed := _UNPARSED.match(text)) and self.quotes_its_reply(refusal):
            self.refuse(refusal, unparsed.group(1), "\n".join([refusal.first, *refusal.quoted]))
            self.refusal = None
            return True
        refusal.quoted.append(text)
        return False

    def tool(self, text: str) -> None:
        if self.refusal is not None and self.refusal_line(self.refusal, text):
            return
        if self.lint is not None:
            if text.startswith("Attempt to fix lint errors?"):
                self.close_lint()
                return
            self.lint.append(text)
            return
        if text.startswith("# Fix any errors below"):
            self.lint = []
        elif text.startswith("Applied edit to "):
            path = text[len("Applied edit to "):]
            last = self.steps[-1] if self.steps else None
            if last is not None and last.action == "edit" and last.error is None and last.arguments:
                last.arguments["files"].append(path)
            else:
                self.add("edit", arguments={"files": [path]})
        elif cost := _COST.match(text):
            self.cost = float(cost.group(1))
        elif commit := _COMMIT.match(text):
            self.add("commit", arguments={"hash": commit.group(1), "message": commit.group(2)})
        elif text.startswith("Unable to commit: "):
            self.fail_last("commit", text)
        elif loaded := _LOADED.match(text):
            self.user(loaded.group(1))
        elif text.startswith("Running "):
            self.add("shell", arguments={"command": text[len("Running "):]})
        elif _OUTPUT_ADDED.match(text):
            self.output_added(text)
        elif text.startswith("Attempt to fix test errors?"):  # --auto-test after an edit: no command is written
            self.add("test", observation=self.added, error=_tests_failed(self.added))
            self.added = None
        elif _EDIT_REFUSED.match(text):
            self.fail_last("edit", text)
            if text == _NOT_CONFORMED:
                self.refusal = _Refusal(len(self.steps) - 1)
        elif _PROVIDER_ERROR.match(text):
            self.fail_last("reply", short(text, 2000, keep="head"))

    def output_added(self, text: str) -> None:
        """A command's output aider added to the chat: a ``/run``'s the user chose to add, a ``/test``'s because
        the tests failed, or (after no command) a failed auto-test's, whose question follows."""
        last = self.steps[-1] if self.steps else None
        if last is not None and last.action in ("shell", "test"):
            failed = {"error": _tests_failed(text)} if last.action == "test" else {}
            self.steps[-1] = last.model_copy(update={"observation": text, **failed})
        else:
            self.added = text

    def close_lint(self) -> None:
        report, self.lint = self.lint or [], None
        command = next((m.group(1) for line in report if (m := _LINT_RUNNING.match(line))), None)
        after = report[next((n for n, line in enumerate(report) if _LINT_RUNNING.match(line)), -1) + 1:]
        finding = (next((line.strip() for line in after if line.strip() and not line.startswith("## ")), None)
                   if command else _marked(report)) or "lint errors"
        self.add("lint", arguments={"command": command} if command else None, error=finding,
                 observation="\n".join(report).strip())


def _tests_failed(added: str | None) -> str:
    """The error of a failed test run: how much output it gave, the test output itself being kept out of the file."""
    said = _OUTPUT_ADDED.match(added or "")
    return f"tests failed ({said.group(1)} of output)" if said else "tests failed"


def _marked(report: list[str]) -> str | None:
    """Where aider's own syntax check (tree-sitter, no linter command) marks an error: ``path:line: code``, from the
    ``path:`` line and the first line it marks with ``█``."""
    path = None
    for line in report:
        if (marked := _MARKED.match(line)) and path:
            return f"{path}:{marked.group(1)}: {marked.group(2).strip()}"
        if line.endswith(":") and not line.startswith(("#", " ")):
            path = line[:-1]
    return None


def to_trajectory(session: Session, ctx: Context) -> Trajectory:
    events = session.events
    if not _holds_a_run(events):
        raise PassedOver(_STARTED_AND_QUIT, f"an aider session with {_STARTED_AND_QUIT}", unit="session")
    requests = [said for _, said in _requests(events)]
    model = edit_format = version = None
    built = _Steps()
    for kind, text in events:
        if kind != "tool" and built.lint is not None:  # a report aider cut off without its question
            built.close_lint()
        if kind == "user":
            built.user(text)
        elif kind == "reply":
            built.reply(text)
        else:
            if model is None and (banner := _BANNER_MODEL.match(text)):
                model, edit_format = banner.groups()
            if version is None and (said := _VERSION.match(text)):
                version = said.group(1)
            built.tool(text)
    if built.lint is not None:
        built.close_lint()
    created_at, zone = _created(session.started, ctx.source)
    metadata = {k: v for k, v in {"edit_format": edit_format, "user_prompts": prompt_list(requests[1:]) or None,
                                  "cost_usd": built.cost or None, "session_line": session.line,
                                  TIME_ZONE: zone}.items() if v is not None}
    steps = [step for _, step in within_step_limit(built.steps, metadata)]  # one session may be a whole history
    fields: dict[str, Any] = dict(
        trajectory_id=f"aider.{session.started.replace(' ', 'T')}.{session.digest}",
        task=clip_task(requests[0] if requests else "(aider session with no request)"),
        created_at=created_at,
        model_id=model,
        tool_versions={"aider": version} if version else {},
        steps=steps,
        metadata=metadata,
    )
    if session.results is not None:
        fields |= _verdict(session.results, fields)
    return in_trial(ctx, fields)  # Harbor's aider agent keeps the history in its trial, with no ATIF conversion


def _verdict(results: dict[str, Any], fields: dict[str, Any]) -> dict[str, Any]:
    """What a benchmark exercise's ``.aider.results.json`` says of its run (``benchmark.py``'s ``results``)."""
    outcomes = results.get("tests_outcomes")
    passed = isinstance(outcomes, list) and True in outcomes
    known = isinstance(outcomes, list) and bool(outcomes)
    said = {k: results[k] for k in ("tests_outcomes", "cost", "duration", "num_error_outputs",
                                    "num_malformed_responses", "test_timeouts") if k in results}
    return {
        "outcome": (Outcome.success if passed else Outcome.failure) if known else Outcome.unknown,
        "reward": (1.0 if passed else 0.0) if known else None,
        "task_id": results.get("testcase") if isinstance(results.get("testcase"), str) else None,
        "model_id": results.get("model") if isinstance(results.get("model"), str) else fields["model_id"],
        "metadata": fields["metadata"] | {"benchmark": said},
    }

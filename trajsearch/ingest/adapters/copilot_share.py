"""GitHub Copilot CLI's ``/share`` Markdown export of a session (``copilot-session-<id>.md``).

Users commit these on GitHub far more often than the raw event logs ``copilot-cli`` reads.

What it looks like (real transcripts, early to mid 2026, Copilot CLI 0.0.39x to 1.0.x by their dates: yididiel7/gitmydocs,
jmservera/SquadScope's ``data/metrics/copilot-transcript.md`` over 21 commits; tests/fixtures/copilot/.cpshare29):
``# 🤖 Copilot CLI Session``, a quoted header (``**Session ID:**``, ``**Started:**`` in the exporter's locale,
``**Duration:**``, ``**Exported:**``; since about May 2026 inside a ``> [!NOTE]`` list), then entries, each
``<sub>⏱️ 2m 20s</sub>`` (time since the start) and a heading: ``### 👤 User``, ``### 💬 Copilot``,
``### 💭 Reasoning`` (italic), ``### ℹ️ Info`` / ``Notification`` (the CLI's own: ``Model changed to: X``),
``### ❌ Error``, ``### ⚠️ Warning`` (the CLI's: an organization's policy that disabled MCP servers),
``### ✓ Task Complete`` (the agent's closing summary), and tool calls ``### ✅ `tool``` / ``### ❌ `tool```
(failed, denied or rejected): a bold description line, then what the call was shown as (bash: ``$ command``; view,
edit: the path), or an ``Arguments`` block of JSON in ``<details>``, then its result in a code block (long ones inside
``<details>``).
A sub-agent (``### 📦 task (Completed)``) lists its own calls and replies under it, with no time line of their own.
The headings inside code blocks (a file the agent viewed) are content, not entries; another heading right after a
time line (``### ◌ Conversation Compacted``) is an entry of a kind not read, not part of the one before it.

Mapping, one run per file, as ``copilot-cli`` reads the raw log of the same session:

- task = the first user entry; later ones go to ``metadata.user_prompts``;
- steps: each tool call: action = its name; arguments = its ``Arguments`` JSON, else ``command`` (``$ ...``) or
  ``shown`` (what the call displayed) with its ``description``; a built-in tool's shown call read back into its
  parameters as the raw log names them (view: ``path``, ``view_range``; edit, create: ``path``; grep: ``pattern``,
  ``glob``, ``path``; glob: ``pattern``, ``path``), so a filter or search by them finds both; and ``subagent`` naming the sub-agent (``task``) a
  call sits under (kept in order); observation = its result block; the ``📦`` entry itself is the session's call
  of the sub-agent, as the raw log has it: action ``task``, arguments its ``status``, observation the sub-agent's
  last reply (not the session's own); error: of a ``❌`` call, its output's decisive line; of one the CLI did not run
  (its output the CLI's own words, ``copilot_cli.NOT_RUN_SAID``: the user rejected it, "Permission denied and could
  not request permission from user"), ``not run: <those words>``, as ``copilot-cli`` reads its log; of a shell call, a
  non-zero ``<exited with exit code N>`` (``copilot_cli.exit_code``); reasoning and Copilot's text before a call are its
  thought, Copilot's text with no call after it a ``respond`` step;
- outcome unknown (the export holds no verdict); the CLI's ``❌ Error`` entries in ``metadata.session_errors``, its
  ``⚠️ Warning`` entries in ``metadata.session_warnings`` (as ``copilot-cli`` keeps a log's ``session.warning``);
- trajectory_id = ``copilot-cli-share.<session id>``, linked to the raw log's run by ``metadata.copilot_session_id``
  (which ``copilot-cli`` writes too): an id of its own, as the export shows less than the log (an edit's strings,
  the times, the model, the version), so that neither replaces the other whichever is ingested first; without a
  session id, ``copilot-cli-share.<start>.<digest of the head>``; created_at = the start (en-US local
  time, on the file's clock, ``_common.local_clock``: its ``Exported`` time against its mtime, else the zone
  ``TRAJSEARCH_LOCAL_TZ`` names, else UTC; ``metadata.created_at_zone`` says which; other locales' dates are left
  unread); model_id = the model a ``Model changed to:`` names before the first call (one named later ran only the later
  calls: left unset), every change in ``metadata.model_changes`` as ``[steps before it, model]``.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any, Iterator

from trajsearch.actions import not_run
from trajsearch.model import Trajectory

from ..sources import whole_text
from ._agent_cli import (
    API_ERROR_CAUSE,
    PromptedSteps,
    command_line,
    error_line,
    exit_code_error,
    json_arguments,
    prompt_list,
    session_trajectory,
)
from ._common import TIME_ZONE, Context, RecordError, local_clock
from .copilot_cli import NOT_RUN_SAID, SHELLS, exit_code, session_warnings

NAME = "copilot-cli-share"
#: What the export opens with (told before any record is looked for: the Markdown quotes JSON).
HEAD = re.compile(r"\s*# 🤖 Copilot CLI Session[ \t]*\r?\n")
#: The name ``/share`` gives the file: a walk takes it where it lies.
_DEFAULT_NAME = re.compile(r"copilot-session-[0-9a-f-]{36}\.md\Z")
_FIELD = re.compile(r"^>\s*(?:-\s*)?\*\*([\w ]+):\*\*\s*(.*?)\s*$")
_TIME = re.compile(r"^<sub>⏱️\s*(.*?)</sub>\s*$")
#: An entry's heading: a call's (``✅ `bash```: its status and tool) or another's, by the emoji the exporter writes.
_ENTRY = re.compile(r"^### (👤 User|💬 Copilot|✓ Task Complete|💭 Reasoning|ℹ️ \w+|⚠️ \w+|❌ Error|📦 .+"
                    r"|(✅|❌) `([^`]+)`)\s*$")
_HEADING = re.compile(r"^#{1,6} (.+?)\s*$")
_FENCE = re.compile(r"^\s*(`{3,}|~{3,})")
#: The CLI's note of a model chosen (``/model``), its reasoning effort after it: ``claude-opus-4.6 (high)``.
#: What the export shows of a built-in tool's call (``X (lines 41-75)``, ``"a|b" in *.ts``, ``"a" (D:\\src)``,
#: ``"**/*.md" in .squad``): its parameters, named as the raw log names them.
_SHOWN = {
    "view": re.compile(r"(?P<path>.+?)(?: \(lines (?P<start>\d+)-(?P<end>-?\d+)\))?"),
    "edit": re.compile(r"(?P<path>.+)"),
    "create": re.compile(r"(?P<path>.+)"),
    "grep": re.compile(r'"(?P<pattern>.*)"(?: in (?P<glob>.+?))?(?: \((?P<path>.+)\))?'),
    "glob": re.compile(r'"(?P<pattern>.*)"(?: in (?P<path>.+))?'),
}
_SUBAGENT = re.compile(r"📦 (\S+)(?: \((.*)\))?")
_MODEL = re.compile(r"^Model changed to:\s*(.+?)(?:\s+\((?:low|medium|high|xhigh)\))?\s*$", re.M)


@dataclass
class Entry:
    """One heading's entry: its heading, its lines, and the sub-agent entry (``📦``) it sits under."""
    heading: str
    status: str | None = None
    tool: str | None = None
    subagent: str | None = None
    lines: list[str] = field(default_factory=list)

    @property
    def text(self) -> str:
        lines = list(self.lines)
        while lines and lines[-1].strip() in ("", "---"):
            lines.pop()
        return "\n".join(lines).strip()


@dataclass
class Share:
    """A ``/share`` file read: its header's fields and its entries in order."""
    fields: dict[str, str]
    entries: list[Entry]
    head: str


def matches(record: Any) -> bool:
    """No JSON record is an export's: it is told by its head (``HEAD``)."""
    return False


def walked_file(path: Path) -> bool:
    """The adapter hook: a file ``/share`` named (``copilot-session-<id>.md``) is taken by a walk."""
    return _DEFAULT_NAME.match(path.name) is not None


def format_by_place(path: Path, fmt: str | None) -> str | None:
    """The adapter hook: a file a walk took by ``/share``'s name whose content no format claims is read as an export,
    so that its rejection says why it is none, not every format there is."""
    return NAME if fmt is None and walked_file(path) else None


def read_text(path: Path) -> Iterator[tuple[str, Any, str | None, None]]:
    """The adapter hook: the file's one session, ``("file", Share, error, None)``."""
    text, unreadable = whole_text(path)
    if text is None:
        yield "file", None, unreadable, None
        return
    if not HEAD.match(text):
        yield "file", None, "no '# 🤖 Copilot CLI Session' heading: not a Copilot CLI /share export", None
        return
    yield "file", parse(text), None, None


def parse(text: str) -> Share:
    """The header's fields and the entries, headings inside code blocks being content. An entry with no time line
    before it, under a ``📦`` entry, is that sub-agent's."""
    fields: dict[str, str] = {}
    entries: list[Entry] = []
    fence: str | None = None
    timed = False  # a time line since the last heading: the next entry is the session's own
    opening = False  # the time line's entry not yet begun: a heading of any kind begins it
    subagent: str | None = None
    head: list[str] = []
    for line in text.splitlines():
        if fence is None and not entries and (said := _FIELD.match(line)):
            fields[said.group(1).strip()] = said.group(2).strip("`")
        opens = _FENCE.match(line)
        if opening and line.strip():
            opening = False
            if not _ENTRY.match(line) and (other := _HEADING.match(line)):
                entries.append(Entry(other.group(1)))  # not read: ends the entry before it
                continue
        if fence is None and (entry := _ENTRY.match(line)):
            heading = entry.group(1)
            if timed:
                subagent = None
            item = Entry(heading, status=entry.group(2), tool=entry.group(3), subagent=subagent)
            if said := _SUBAGENT.match(heading):
                subagent, item.subagent = said.group(1), None
            entries.append(item)
            timed = False
            continue
        if fence is None and _TIME.match(line):
            timed = opening = True
            continue
        if opens and fence is None:
            fence = opens.group(1)
        elif fence is not None and _closes(line, fence):
            fence = None
        if entries:
            entries[-1].lines.append(line)
            if len(head) < 40:
                head.append(line)
    return Share(fields, entries, "\n".join(head))


def _closes(line: str, fence: str) -> bool:
    """Whether ``line`` closes the code block ``fence`` opened: as many of its marks or more, nothing else (a block
    that shows a Markdown file opens with more backticks than the file's own blocks)."""
    said = line.strip()
    return said.startswith(fence) and not said.strip(fence[0])


def to_trajectory(share: Share, ctx: Context) -> Trajectory:
    walk = _Walk()
    for entry in share.entries:
        walk.entry(entry)
    walk.flush()
    if walk.task is None:
        raise RecordError("no '### 👤 User' entry: a session exported before any prompt")
    session = share.fields.get("Session ID")
    started = share.fields.get("Started")
    created_at, zone = _started(started, share.fields.get("Exported"), ctx.source)
    if session:
        run_id = f"{NAME}.{session}"
    else:
        digest = hashlib.sha256(f"{started}\n{share.head}".encode()).hexdigest()[:12]
        run_id = f"{NAME}.{started or 'unstarted'}.{digest}"
    metadata = {
        "copilot_session_id": session,
        "read_from": "Copilot CLI /share Markdown",
        "duration": share.fields.get("Duration"),
        "exported": share.fields.get("Exported"),
        "user_prompts": prompt_list(walk.prompts) or None,
        "session_errors": walk.errors[:20] or None,
        "session_warnings": session_warnings(walk.warnings),
        "model_changes": walk.model_changes or None,
        TIME_ZONE: zone,
    }
    return session_trajectory(ctx, run_id=run_id, task=walk.task, model_id=walk.model, steps=walk.steps,
                              metadata=metadata, last_error=None, error_cause=API_ERROR_CAUSE,
                              created_at=created_at)


class _Walk(PromptedSteps):
    """The entries in order: prompts, the model's text and reasoning, each call a step."""

    def __init__(self) -> None:
        super().__init__()
        self.errors: list[str] = []
        self.warnings: list[str] = []
        self.model_changes: list[list[Any]] = []  # [steps before it, model]
        self.subagent: dict[str, Any] | None = None  # the open ``📦`` call, its sub-agent's entries following

    def flush(self) -> None:
        self.end_subagent()
        super().flush()

    def end_subagent(self) -> None:
        """The sub-agent's text after its last call is its answer: the ``📦`` call's result."""
        if self.subagent is not None:
            self.subagent["observation"] = "\n\n".join(self.narration) or None
            self.thought, self.narration, self.subagent = [], [], None

    def entry(self, entry: Entry) -> None:
        text = entry.text
        if entry.subagent is None:
            self.end_subagent()
        if said := _SUBAGENT.match(entry.heading):
            status = {"status": said.group(2)} if said.group(2) else {}
            self.subagent = self.open_call(None, said.group(1), status, observation=None)
        elif entry.tool is not None:
            self.open_call(None, entry.tool, **_call(entry))
        elif entry.heading == "👤 User":
            self.flush()
            self.prompt(text)
        elif entry.heading in ("💬 Copilot", "✓ Task Complete") and text:
            self.say(text)
        elif entry.heading == "💭 Reasoning" and text:
            self.thought.append(text.strip("*_ \n"))
        elif entry.heading == "❌ Error" and text:
            self.errors.append(error_line(text, text))
        elif entry.heading == "⚠️ Warning" and text:
            self.warnings.append(text)
        elif entry.heading.startswith("ℹ️") and (said := _MODEL.search(text)):
            self.flush()  # the user's /model, between turns: the text before it was a reply
            self.model_changes.append([len(self.steps), said.group(1)])

    @property
    def model(self) -> str | None:
        """The model named before the first call, which ran them all until another was named."""
        if not self.model_changes:
            return None
        before, model = self.model_changes[0]
        return model if all(step["action"] == "respond" for step in self.steps[:before]) else None


def _call(entry: Entry) -> dict[str, Any]:
    """A call's arguments and result (``observation``, ``error``) from its entry: its description, what it showed,
    its Arguments block and its result block."""
    description, shown, arguments, result = _call_parts(entry.lines)
    if arguments is not None:
        args = json_arguments(arguments, key="arguments")
        args = args if isinstance(args, dict) else {"arguments": args}
    elif shown.startswith("$ "):
        args = {"command": shown[2:].strip()}
    else:
        args = _shown_parameters(entry.tool, shown) if shown else {}
    if description and "description" not in args:
        args = {"description": description, **args}
    if entry.subagent:
        args["subagent"] = entry.subagent
    step: dict[str, Any] = {"arguments": args, "observation": result}
    if entry.status == "❌" and (said := (result or "").strip()) in NOT_RUN_SAID:  # not run, as ``copilot-cli`` reads it
        step["observation"], step["error"] = None, not_run(said)
    elif entry.status == "❌":
        step["error"] = error_line(result, "the call failed (the export shows no output)")  # the description is
        # what the call meant to do, not what went wrong
    elif entry.tool in SHELLS and (code := exit_code({}, result)) is not None and code[0] != 0:
        step["error"] = exit_code_error(code[1], code[0], command_line(args))
    return step


def _shown_parameters(tool: str | None, shown: str) -> dict[str, Any]:
    """A built-in tool's shown call as its parameters (``_SHOWN``); another's as ``shown``."""
    said = _SHOWN[tool].fullmatch(shown) if tool in _SHOWN and "\n" not in shown else None
    if said is None:
        return {"shown": shown}
    parameters: dict[str, Any] = {k: v for k, v in said.groupdict().items() if v and k not in ("start", "end")}
    if said.groupdict().get("start"):
        parameters["view_range"] = [int(said.group("start")), int(said.group("end"))]
    return parameters


def _call_parts(lines: list[str]) -> tuple[str | None, str, str | None, str | None]:
    """A call entry's bold description, the text shown before its first block, its ``Arguments`` JSON and its result
    (the last code block that is not the arguments')."""
    description = None
    shown: list[str] = []
    blocks: list[tuple[bool, list[str]]] = []  # (inside an Arguments <details>, lines)
    fence: str | None = None
    in_arguments = False
    started = False  # past the shown text
    for line in lines:
        stripped = line.strip()
        if fence is not None:
            if _closes(line, fence):
                fence = None
            else:
                blocks[-1][1].append(line)
            continue
        if opens := _FENCE.match(line):
            fence, started = opens.group(1), True
            blocks.append((in_arguments, []))
        elif stripped.startswith("<summary>"):
            in_arguments, started = stripped == "<summary>Arguments</summary>", True
        elif stripped.startswith("<details>") or stripped.startswith("</details>"):
            started = True
            if stripped.startswith("</details>"):
                in_arguments = False
        elif not started and description is None and stripped.startswith("**") and stripped.endswith("**") \
                and len(stripped) > 4:
            description = stripped[2:-2].strip()
        elif not started and (stripped or shown) and stripped != "---":
            shown.append(line)
    arguments = next(("\n".join(b) for inside, b in blocks if inside), None)
    result = next(("\n".join(b) for inside, b in reversed(blocks) if not inside), None)
    return description, "\n".join(shown).strip(), arguments, result


def _started(said: str | None, exported: str | None, source: Path) -> tuple[datetime | None, str | None]:
    """The start as an instant, and (for ``metadata.created_at_zone``) how its zone was known. ``/share`` writes
    local time with no zone; the export is written at once, so its ``Exported`` time against the file's mtime can
    give the zone, as Trae Agent's ``end_time`` does (``local_clock``)."""
    wall = _en_us(said)
    if wall is None:
        return None, None
    clock = local_clock(source, written=_en_us(exported))
    return clock.at(wall), clock.basis


def _en_us(said: str | None) -> datetime | None:
    """A time as ``/share`` writes it in en-US (``2/5/2026, 9:25:26 AM``), local and zoneless; another locale's
    (``29/01/2026 17:54:50``: day or month first?) is left unread."""
    try:
        return datetime.strptime(said or "", "%m/%d/%Y, %I:%M:%S %p")
    except ValueError:
        return None

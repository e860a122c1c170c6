"""OpenCode (sst/opencode, ``opencode-ai`` on npm) sessions, as ``opencode export <sessionID>`` writes them.

OpenCode keeps its sessions in a SQLite database (``~/.local/share/opencode/opencode.db``; JSON files under
``storage/`` before 1.2), which trajsearch does not open: ``opencode export <id>`` prints one session as a JSON
document, ``{"info": Session, "messages": [{"info": Message, "parts": [Part]}]}`` (``message-v2.ts``), and that
document is what this adapter reads (one run per file; also after the CLI's ``Exporting session: <id>`` line,
which ``2>&1`` keeps before it: ``HEAD``); also the server's answer to ``GET /session/<id>/message``
(the SDK's ``session.messages()``), the list of those messages alone, read under the session id they name. The
database itself, given or met in a walk, is named with a command exporting every session (``session_store``); the
JSON files of its ``storage/`` folder (1.1.x's sessions, kept beside the database by 1.2+), pieces of sessions, are
passed over by a walk and named once with how to export them (``SESSION_PIECES``); a session never prompted is passed
over (``side_document``); ``opencode run --format json`` output (events, no prompt)
is refused naming the export command (``not_a_run``).

Field mapping:

- task = the first user message's text parts that are the user's (not ``synthetic``: the CLI's own "continue
  after compaction" note; not ``ignored``), or a ``subtask`` part's prompt (a command run as a sub-agent).
  ``opencode run "a prompt"`` wraps each argument holding a space in double quotes (escaping its own quotes as
  ``\\"``: ``cli/cmd/run.ts``) and stores the result as typed: a prompt that is one such quoted argument is read
  without them. Later prompts go to ``metadata.user_prompts``.
- steps: each assistant message's parts in order: ``reasoning`` is the next step's thought, ``text`` its
  narration (the model's answer when no tool call follows), a ``tool`` part a step: action = ``tool``,
  arguments = ``state.input``, observation = ``state.output`` (``completed``) or ``state.error``; ``error``
  status -> the step's error (a call OpenCode's permissions refused, the user's "ask" answered no (``opencode run``
  answers every ask no) or a rule's ``deny``: not run, ``not run: denied by the user``); a ``bash`` call that
  completed with a non-zero ``metadata.exit`` -> an exit-code error (``exit_code_error``, the rule every CLI
  adapter reads exit codes by); a call left ``pending`` or
  ``running`` (the session stopped mid-call) -> error "tool call never finished", its output so far
  (``state.metadata.output``) the observation. A call OpenCode cut off when its turn ended (``error`` "Tool
  execution aborted") is ``interrupted by the user`` where the message ended on the user's abort, else never finished,
  its output so far kept. Times from ``state.time``.
  A ``task`` call's sub-agent session id (``state.metadata.sessionId``) is listed in ``metadata.subagent_sessions``.
- undone messages (``/undo``: ``info.revert``; OpenCode deletes them only at the next prompt) are not read, their
  count is ``metadata.undone_messages``; a session undone to its first prompt is passed over as a never-prompted one.
- a compaction (a user message with a ``compaction`` part, answered by the ``compaction`` agent's summary) is
  counted in ``metadata.compactions``; its summary is not a step.
- outcome: unknown (a session holds no verdict on the task), unless the session ended on an assistant message's
  ``error`` with no work after it: the provider's (``APIError``, ``ProviderAuthError``, ``UnknownError``) ->
  ``infra_error`` with its message; the agent's own limit (``ContextOverflowError``: its context window, with no
  compaction to shrink it; ``MessageOutputLengthError``; ``StructuredOutputError``: no valid structured answer)
  -> ``failure``, as OpenHands' context-window stop, mini-swe-agent's ``ContextWindowExceededError`` and Harbor's
  error policy read them. The user's abort (``MessageAbortedError``) is ``metadata.ended_by``, no verdict; so is a
  last answer the model cut at its output limit (``finish: "length"``: 1.18 records no error for it).
- ``opencode export --sanitize`` writes ``[redacted:<kind>:<id>]`` for texts, outputs, the title and directory, and
  ``{"redacted": ...}`` for a tool's input and metadata: a redacted value is read as not recorded (no arguments, no
  attachment name; a subtask's prompt is no task; a call's redacted output, with its exit code, is observed as "result
  not recorded", neither success nor failure; an error's text is kept, as the export keeps it) and
  ``metadata.sanitized`` says so; a session whose
  prompts are all redacted is a run all the same, its task naming the session and saying the prompt was redacted.
- trajectory_id = ``opencode.<session id>``; created_at = ``info.time.created``; model_id = the first assistant
  message's ``modelID`` (``providerID`` in metadata); tool_versions = ``{"opencode": info.version}``, or
  ``{"kilo": ...}`` where the session's ``metadata`` holds a key of Kilo Code's (``_KILO_KEY``): ``kilo export``
  writes OpenCode's document, and nothing in every export of it names Kilo (its version a number, Kilo's own; a
  provider ``kilo`` OpenCode also has with the opencode-kilo-auth plugin), but a ``/goal`` session's does, and its
  goal's text and last status are kept (``goal``, ``goal_status``, as Qwen Code's); metadata:
  title, directory, project id, agent, cost and tokens, files patched, and for a sub-agent's session
  (``info.parentID``) ``is_subagent`` with ``parent_session_id``, as Codex's and Gemini CLI's sub-agents are linked.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, Iterator

from trajsearch.actions import INTERRUPTED, NEVER_FINISHED, UNNAMED_TOOL, not_run
from trajsearch.model import Failure, Outcome, Trajectory

from ._agent_cli import (
    SessionSteps,
    as_int,
    as_str,
    command_line,
    error_line,
    export_command,
    exit_code_error,
    first_time,
    iso_time,
    prompt_list,
    session_trajectory,
    strip_terminal_codes,
    whole_file,
)
from ._common import Context, RecordError, as_dict, as_list, item_positions, short
from ..sources import parse, whole_text

NAME = "opencode"
#: A file is one session (``opencode export``'s one JSON document).
WHOLE_FILE = True
#: An export too large for its head to parse: it opens with the session's info, its id ``ses_...``.
SIGNATURE = re.compile(r'^\s*\{\s*"info"\s*:\s*\{\s*"id"\s*:\s*"ses_[0-9A-Za-z]+"')
#: The line ``opencode export`` prints before the session, ``Exporting session: <id>`` (on stderr, ``cli/cmd/
#: export.ts``): a file written with ``2>&1``, or by a harness keeping the command's whole output, opens with it.
HEAD = re.compile(r"\s*Exporting session: [^\n]*\n")


def split(document: Any) -> Iterator[tuple[str, Any]]:
    """The file's one session; of several exports in one file (a shell loop's ``opencode export`` output appended,
    a JSON array or a line each), each its own run where it stands: read as one document, every session was lost
    to one rejection (review RALL-A). A list of messages (the server's answer) stays one session."""
    if isinstance(document, list) and document and all(isinstance(item, dict) and _is_export(item)
                                                       for item in document):
        positions = item_positions(document)
        yield from zip(positions, document)
    else:
        yield from whole_file(document)


def read_head_text(path: Path) -> Iterator[tuple[str, Any, str | None, None]]:
    """The adapter hook: an export that opens with the CLI's ``Exporting session`` line (:data:`HEAD`), read as
    without it, ``(position, session, error, None)``: that line alone made the whole session an unrecognised file."""
    text, why = whole_text(path)
    document = None
    if text is not None:
        output = text[HEAD.match(text).end():]
        document, why = parse(output, "export")
        if not output.strip():
            why = "nothing after it (the export printed no session)"
        elif not output.lstrip().startswith(("{", "[")):  # the CLI's own failure ("Session not found"), 2>&1 kept
            first_line = strip_terminal_codes(output.strip().partition("\n")[0])
            why = f"no session after it: {short(first_line, keep='head')}"
    if why is None and _as_export(document) is not None:
        yield "file", document, None, None
        return
    said = why or "no session in it"
    yield "file", None, f"`opencode export` output after its \"Exporting session\" line: {said}", None


#: OpenCode's session database (1.2+: ``~/.local/share/opencode/opencode.db``), and Kilo Code's (its CLI and 2026
#: extension are built on OpenCode: ``~/.local/share/kilo/kilo.db``, the same tables, ``kilo export``): a walk that
#: finds no dump hands it in for detection to name, with how to export its sessions (``session_store``).
SESSION_STORES = ("opencode.db", "kilo.db")
#: The prefix of Kilo Code's own keys in a session's ``metadata``, which ``kilo export`` writes with it
#: (Kilo-Org/kilocode ``packages/opencode/src/kilocode/``: ``kilo.goal`` its ``/goal``, ``session/goal/state.ts``;
#: ``kilo.task`` a paused sub-task, ``tool/task-pause-state.ts``); OpenCode writes none.
_KILO_KEY = "kilo."
#: The files OpenCode keeps sessions in under its data folder's ``storage/`` (all of them before 1.2; 1.2 copies them
#: into ``opencode.db`` and never deletes them, and still writes ``session_diff``): a session's info
#: (``session/<project>/ses_*.json``), each message (``message/<session>/msg_*.json``), each part
#: (``part/<message>/prt_*.json``), its todos, diffs and share, a project's info and permissions (the folders
#: ``json-migration.ts`` reads). Pieces of sessions, none a run alone: a walk passes them over, named once
#: (``pieces_note``), not each rejected as a dump of no known format.
SESSION_PIECES = re.compile(r"(?:^|/)storage/(?:session/[^/]+/ses_[^/]+|message/ses_[^/]+/msg_[^/]+|"
                            r"part/msg_[^/]+/prt_[^/]+|(?:session_diff|todo|session_share)/ses_[^/]+|"
                            r"(?:project|permission)/(?:[0-9a-f]{40}|global))\.json$")


def pieces_note(pieces: list[Path]) -> str:
    """What a walk says of the OpenCode storage files it passed over (``SESSION_PIECES``), and how to read their
    sessions."""
    folders = sorted({str(Path(*p.parts[:len(p.parts) - 1 - p.parts[::-1].index("storage")])) + "/storage"
                      for p in pieces})
    sessions = {p.stem for p in pieces if p.parent.parent.name == "session" and p.stem.startswith("ses_")}
    what = ("a file of OpenCode's session storage", "a piece of a session (its info, a message or a part), no run "
            "alone") if len(pieces) == 1 else (f"{len(pieces)} file(s) of OpenCode's session storage",
                                               "pieces of sessions (info, messages, parts) none of which is a run alone")
    return (f"{what[0]} ({', '.join(folders[:3])}" + (f": {len(sessions)} session(s)" if sessions else "")
            + f"), {what[1]}: export each session with `opencode export <sessionID>` (`opencode "
            "session list` names them) and ingest those; OpenCode 1.2+ holds the same sessions in opencode.db beside "
            "storage/ (ingest it alone for a command exporting every session)")


def side_path(path: Path, fmt: str | None) -> str | None:
    """The adapter hook (see ``adapters/__init__``): a file of OpenCode's ``storage/`` named alone (``ingest
    storage/session/*/*.json``), which no format reads, is said to be that (a walk names them all at once)."""
    if fmt is None and SESSION_PIECES.search(path.as_posix()):
        return pieces_note([path])
    return None


#: Exports every session of an OpenCode database (argv[1]; sub-agents' too, which ``opencode session list`` leaves
#: out) with the CLI's own ``opencode export``, one JSON file each into the folder argv[2]. The CLI reads its own data
#: folder: the database must be the one it uses. Into a file, not a pipe: written to a pipe, the CLI (1.18) exits
#: before it has written more than 64 KiB of a long session. A session the CLI fails to export ("Session not found":
#: a database copied from another machine) is named with the CLI's last line and its empty file removed; the others
#: are exported all the same, and the command exits 1 if any failed.
_EXPORT_SCRIPT = (
    'import pathlib,sqlite3,subprocess,sys;out=pathlib.Path(sys.argv[2]);out.mkdir(exist_ok=True);'
    'db=sqlite3.connect(pathlib.Path(sys.argv[1]).resolve().as_uri()+"?mode=ro",uri=True);'
    'done=[(s,subprocess.run(["@CLI@","export",s],stdout=open(out/(s+".json"),"wb"),stderr=subprocess.PIPE)) '
    'for (s,) in db.execute("select id from session")];bad=[(s,p) for (s,p) in done if p.returncode];'
    '[((out/(s+".json")).unlink(),print(f"@CLI@ export {s} failed (exit {p.returncode}): "'
    '+(p.stderr.decode(errors="replace").strip().splitlines() or [""])[-1],file=sys.stderr)) for (s,p) in bad];'
    'print(f"{len(done)-len(bad)} of {len(done)} sessions exported into {out}",file=sys.stderr);sys.exit(1 if bad else 0)')
EXPORT_SCRIPT = _EXPORT_SCRIPT.replace("@CLI@", "opencode")
#: The same with Kilo Code's CLI, ``kilo export`` (a Kilo database is not the one ``opencode`` reads).
KILO_EXPORT_SCRIPT = _EXPORT_SCRIPT.replace("@CLI@", "kilo")

#: ``opencode run``'s quoting of one argument holding a space: ``"..."`` with its own quotes escaped.
_RUN_QUOTED = re.compile(r'"((?:[^"\\]|\\"|\\(?!"))*\s(?:[^"\\]|\\"|\\(?!"))*)"', re.S)
#: The error a user's interrupt leaves on the assistant message it stopped: no verdict, no infrastructure error.
_ABORTED = "MessageAbortedError"
#: The error OpenCode gives every call still running when its turn ends (``session/processor.ts``; 2026 versions
#: also mark it ``metadata.interrupted``, which is read too): the user's abort (the message's
#: ``MessageAbortedError``), or the turn's own error.
_CALL_ABORTED = "Tool execution aborted"
#: The errors (``message-v2.ts``) of the agent's own limits, not the provider's failing: what ran out.
_LIMITS = {"ContextOverflowError": "its context window", "MessageOutputLengthError": "its output length limit",
           "StructuredOutputError": "its retries at the structured output asked for"}
#: What ended a session whose last answer the model cut at its output limit (``finish: "length"``, no error).
_CUT = "the model's output length limit (finish \"length\"): its last answer cut short"
#: A value ``opencode export --sanitize`` redacted (its kind, then the part's or session's id).
_REDACTED = re.compile(r"\[redacted:[a-z][a-z-]*:[^\]\s]*\]")
#: The observation of a call whose output (and metadata: a shell's exit code) ``opencode export --sanitize``
#: redacted: its result is not recorded, neither a success nor a failure.
_RESULT_REDACTED = "(result not recorded: left out by `opencode export --sanitize`)"
#: The events ``opencode run --format json`` prints (``cli/cmd/run.ts``).
_RUN_EVENTS = frozenset({"step_start", "step_finish", "text", "reasoning", "tool_use", "error"})
#: The errors of a call OpenCode's permissions refused before it ran (``permission/next.ts``: ``RejectedError``,
#: ``CorrectedError``, ``DeniedError``, later worded by its source of rule and by plan mode; Kilo Code's also by the
#: agent's policy), with why it did not run.
_REFUSED = re.compile(
    r"\A(?:(?P<user>The user rejected permission to use this specific tool call)(?: with the following feedback: "
    r"(?P<feedback>.*))?|(?P<rule>The user has specified a rule which prevents you from using this specific tool "
    r"call)|(?P<policy>A global policy prevents you from using this specific tool call)|(?P<agent>This agent's "
    r"policy prevents you from using this specific tool call)|(?P<plan>Plan mode refused this tool call))", re.S)
#: Why a call ``_REFUSED`` matched did not run, by the group that matched it.
_REFUSED_BY = {"user": "denied by the user", "rule": "denied by a permission rule",
               "policy": "denied by a global policy", "agent": "denied by the agent's policy",
               "plan": "refused in plan mode (read-only actions only)"}
#: Shell tools whose ``metadata.exit`` is the command's exit code.
_SHELL_TOOLS = frozenset({"bash", "shell"})
#: The notice OpenCode's bash tool appends to the output of a command it killed or cut short: ``<shell_metadata>``
#: (``<bash_metadata>`` before) holding "shell tool terminated command after exceeding timeout N ms ..." or "User
#: aborted the command"; before those, "(Command timed out after N ms)" and "(Command was aborted)" (``tool/bash.ts``).
_SHELL_NOTICE = re.compile(r"\s*(?:<(shell|bash)_metadata>(.*?)</\1_metadata>|\((Command timed out after \d+ ms|"
                           r"Command was aborted)\))\s*$", re.S)
#: What the bash tool writes for a command that printed nothing: no output line to read an error from (``grep``'s
#: exit 1 with it is a "no match", not a failure).
_NO_OUTPUT = "(no output)"


def side_document(document: Any) -> str | None:
    """A session with no message: created (by a client of ``opencode serve``, an SDK, the TUI) and never prompted;
    or one whose every message the user undid (``/undo`` back to its first prompt). Nothing was run (or kept): a
    walk passes it over, as the other CLIs' session files of bookkeeping only."""
    if not (isinstance(document, dict) and _is_export(document)):
        return None
    if not document["messages"]:
        return "an OpenCode session with no messages: created, never prompted"
    if not _kept_messages(document)[0]:
        return "an OpenCode session whose every message was undone (/undo): nothing kept"
    return None


def _kept_messages(export: dict[str, Any]) -> tuple[list[dict[str, Any]], int]:
    """An export's messages without those the user undid, and how many messages were touched. OpenCode's undo
    (``/undo``, the server's ``revert``) only marks the session (``info.revert``: ``messageID``, ``partID``); the
    undone messages stay in the export until the next prompt deletes them (``SessionRevert.cleanup``): every
    message after ``messageID`` (ids ascend), that message itself, or with a ``partID`` its parts from that one on."""
    messages = export["messages"]
    revert = as_dict(as_dict(export.get("info")).get("revert"))
    at, part = as_str(revert.get("messageID")), as_str(revert.get("partID"))
    if not at:
        return messages, 0
    kept: list[dict[str, Any]] = []
    for message in messages:
        mid = as_str(message["info"].get("id")) or ""
        if mid < at:
            kept.append(message)
        elif mid == at and part:
            parts = message["parts"]
            cut = next((i for i, p in enumerate(parts) if isinstance(p, dict) and p.get("id") == part), len(parts))
            kept.append({**message, "parts": parts[:cut]})
    return kept, sum(1 for m in messages if (as_str(m["info"].get("id")) or "") >= at)


def session_store(path: Path, tables: dict[str, set[str]]) -> str | None:
    """What OpenCode's session database is and how to read its runs, given its tables and their columns (``detect``
    reads them); None for any other database."""
    if not ({"id", "parent_id", "directory"} <= tables.get("session", set())
            and {"session_id", "data"} <= tables.get("message", set()) and "part" in tables):
        return None
    if path.name.startswith("kilo"):
        return ("Kilo Code's session database (SQLite, ~/.local/share/kilo/kilo.db; Kilo is built on OpenCode): "
                "export its sessions with `kilo export <sessionID>` and ingest those; all of them into "
                f"./kilo-sessions/: {export_command(KILO_EXPORT_SCRIPT, path, 'kilo-sessions')}")
    return ("OpenCode's session database (SQLite, ~/.local/share/opencode/opencode.db): export its sessions with "
            "`opencode export <sessionID>` and ingest those; all of them into ./opencode-sessions/: "
            f"{export_command(EXPORT_SCRIPT, path, 'opencode-sessions')}")


def not_a_run(record: Any) -> str | None:
    """``opencode run --format json`` prints the run's events (``step_start``, ``text``, ``tool_use``,
    ``step_finish``, ``error``), each with its ``sessionID``, but not the prompt: the session's export is the run."""
    if not (isinstance(record, dict) and record.get("type") in _RUN_EVENTS and isinstance(record.get("sessionID"), str)
            and (isinstance(record.get("part"), dict) or isinstance(record.get("error"), dict))):
        return None
    return ("this is `opencode run --format json` output: the run's events without its prompt; export the session "
            f"instead, `opencode export {record['sessionID']} > session.json`, and ingest that")


def _is_message(record: Any) -> bool:
    """One message with its parts, ``{"info": {"id", "sessionID", "role"}, "parts": [...]}``: an item of an export's
    ``messages``, and of the server's answer to ``GET /session/<id>/message`` (the SDK's ``session.messages()``)."""
    info = record.get("info") if isinstance(record, dict) else None
    return isinstance(info, dict) and isinstance(record.get("parts"), list) and isinstance(info.get("id"), str) \
        and isinstance(info.get("sessionID"), str) and info.get("role") in ("user", "assistant")


def _as_export(document: Any) -> dict[str, Any] | None:
    """An export, or the server's list of a session's messages as one (its session info: the id they name)."""
    if isinstance(document, dict) and _is_export(document):
        return document
    if isinstance(document, list) and document and all(_is_message(m) for m in document):
        first = document[0]["info"]
        return {"info": {"id": first["sessionID"], "time": {"created": as_dict(first.get("time")).get("created")}},
                "messages": document}
    return None


def matches(record: Any) -> bool:
    return _is_export(record) or _is_message(record)


def _is_export(record: Any) -> bool:
    """``opencode export``'s document: session ``info`` (an id, a project or directory, times) and ``messages``,
    each ``{"info", "parts"}``."""
    if not isinstance(record, dict) or not isinstance(record.get("messages"), list):
        return False
    info = record.get("info")
    if not (isinstance(info, dict) and isinstance(info.get("id"), str) and isinstance(info.get("time"), dict)
            and ("projectID" in info or "directory" in info)):
        return False
    return all(isinstance(m, dict) and isinstance(m.get("info"), dict) and isinstance(m.get("parts"), list)
               for m in record["messages"][:3])


def _typed(text: str) -> str:
    """A prompt as the user typed it: ``opencode run``'s quotes around a single argument taken off."""
    found = _RUN_QUOTED.fullmatch(text.strip())
    return found.group(1).replace('\\"', '"') if found else text


def _redacted(value: Any) -> bool:
    """Whether ``opencode export --sanitize`` replaced a value: ``[redacted:<kind>:<id>]``, or an object
    ``{"redacted": "<kind>:<id>"}`` (a tool's input or metadata)."""
    if isinstance(value, str):
        return _REDACTED.fullmatch(value.strip()) is not None
    return isinstance(value, dict) and set(value) == {"redacted"} and isinstance(value["redacted"], str)


def _output_so_far(meta: dict[str, Any]) -> str | None:
    """What a call cut off or left running had printed (``state.metadata.output``, which OpenCode streams into while
    the call runs); None when it printed nothing (a ``task`` call's sub-agent speaks in its own session)."""
    return strip_terminal_codes(as_str(_kept(meta.get("output"))) or "") or None


def _kept(value: Any) -> Any:
    """A value as recorded; None where the export redacted it (read as not recorded)."""
    return None if _redacted(value) else value


def _user_text(parts: list[Any]) -> str:
    """What the user wrote in a message: its own text parts (not the CLI's synthetic ones), else a subtask's
    prompt."""
    texts = [p["text"] for p in parts if isinstance(p, dict) and p.get("type") == "text" and isinstance(
        p.get("text"), str) and not p.get("synthetic") and not p.get("ignored") and p["text"].strip()
        and not _redacted(p["text"])]
    if texts:
        return _typed("\n\n".join(texts)).strip()
    subtask = next((p for p in parts if isinstance(p, dict) and p.get("type") == "subtask"), None)
    return (as_str(_kept(subtask.get("prompt"))) or "").strip() if subtask else ""


def _shell_error(output: str, code: int | None, command: str | None) -> str | None:
    """The error of a shell call that completed: its exit code read as every CLI adapter reads one
    (``exit_code_error``), on its output without the tool's closing notice; a command the tool killed (no exit
    code: its timeout, the user's abort) fails with that notice."""
    found = _SHELL_NOTICE.search(output)
    printed = output[:found.start()] if found else output
    printed = "" if printed.strip() == _NO_OUTPUT else printed
    if code:
        return exit_code_error(printed, code, command)
    if code is None and found:
        notice = (found.group(2) or found.group(3) or "").strip()
        first = re.split(r"(?<=\.)\s", notice.splitlines()[0])[0] if notice else "command killed"
        return short(first, 300, keep="head")
    return None


def _refused(text: str) -> str | None:
    """The error of a call OpenCode's permissions refused (``_REFUSED``), worded as a call not run; None for others."""
    found = _REFUSED.match(text)
    if not found:
        return None
    said = (found.group("feedback") or "").strip()
    why = next(_REFUSED_BY[group] for group in _REFUSED_BY if found.group(group))
    return not_run(why + (f", saying: {short(said, 200, keep='head')}" if said else ""))


def _error_text(error: Any) -> str:
    """An assistant message's error (``{"name", "data": {"message", ...}}``) as one line: its message, or name."""
    error = as_dict(error)
    data = as_dict(error.get("data"))
    message = as_str(data.get("message")) or as_str(error.get("message"))
    name = as_str(error.get("name")) or "error"
    return short(message or name, 500, keep="head")


class _Session(SessionSteps):
    """The steps of one session as its messages are walked."""

    def __init__(self) -> None:
        super().__init__()
        self.models: list[str] = []
        self.providers: list[str] = []
        self.subagents: list[str] = []
        self.patched: list[str] = []
        self.attached: list[str] = []
        self.compactions = 0
        self.errors: list[str] = []
        self.aborted = False
        self.limit: str | None = None  # the agent's own limit the session ended on (see _LIMITS)
        self.cut = False  # the last answer ended at the model's output limit
        self.sanitized = False  # written by `opencode export --sanitize`: texts, inputs and outputs redacted

    def user(self, parts: list[Any]) -> None:
        self.flush()
        if any(isinstance(p, dict) and p.get("type") == "compaction" for p in parts):
            self.compactions += 1
        text = _user_text(parts)
        self.sanitized = self.sanitized or any(isinstance(p, dict) and any(_redacted(p.get(k)) for k in (
            "text", "prompt", "filename", "url")) for p in parts)
        if text:
            self.prompts.append(text)
        self.attached.extend(name for p in parts if isinstance(p, dict) and p.get("type") == "file"
                             and (name := as_str(_kept(p.get("filename"))) or as_str(_kept(p.get("url")))))

    def assistant(self, info: dict[str, Any], parts: list[Any]) -> None:
        if info.get("mode") == "compaction" or info.get("agent") == "compaction" or info.get("summary") is True:
            return  # the compaction agent's summary of the history: not work on the task
        model = as_str(info.get("modelID"))
        if model and model not in self.models:
            self.models.append(model)
        provider = as_str(info.get("providerID"))
        if provider and provider not in self.providers:
            self.providers.append(provider)
        worked = False
        self.cut = info.get("finish") == "length"
        aborted = as_dict(info.get("error")).get("name") == _ABORTED
        for part in parts:
            if not isinstance(part, dict):
                continue
            kind = part.get("type")
            if kind in ("reasoning", "text") and _redacted(part.get("text")):
                self.sanitized = True
            elif kind == "reasoning" and isinstance(part.get("text"), str):
                self.thought.append(part["text"])
            elif kind == "text" and isinstance(part.get("text"), str) and not part.get("synthetic") \
                    and part["text"].strip():
                self.say(part["text"], as_dict(part.get("time")).get("start"))
                worked = True
            elif kind == "tool":
                self.tool(part, aborted)
                worked = True
            elif kind == "patch":
                self.patched.extend(f for f in as_list(part.get("files")) if isinstance(f, str)
                                    and f not in self.patched and not _redacted(f))
        error = info.get("error")
        if isinstance(error, dict):
            self.flush()
            if aborted:
                self.aborted = True
                self.last_error = None
            else:
                self.errors.append(_error_text(error))
                self.last_error = self.errors[-1]
            self.limit = _LIMITS.get(as_str(error.get("name")) or "")
        elif worked:
            self.last_error, self.aborted, self.limit = None, False, None

    def tool(self, part: dict[str, Any], aborted: bool) -> None:
        """A call, as a step; ``aborted``: its message ended on the user's abort (``_ABORTED``)."""
        state = as_dict(part.get("state"))
        name = as_str(part.get("tool")) or UNNAMED_TOOL
        times = as_dict(state.get("time"))
        arguments = _kept(state.get("input"))
        arguments = arguments if isinstance(arguments, dict) else None
        step = self.open_call(None, name, arguments, times.get("start"), ended_at=iso_time(times.get("end")))
        status = state.get("status")
        meta = as_dict(state.get("metadata"))
        self.sanitized = self.sanitized or any(_redacted(v) for v in (state.get("input"), state.get("output"),
                                                                      state.get("metadata")))
        if status == "completed" and _redacted(state.get("output")):
            step["observation"] = _RESULT_REDACTED  # nor its exit code (metadata redacted too): not a success
        elif status == "completed":
            output = strip_terminal_codes(as_str(_kept(state.get("output"))) or "")
            step["observation"] = output or None
            if name in _SHELL_TOOLS:
                step["error"] = _shell_error(output, as_int(meta.get("exit")), command_line(arguments))
        elif status == "error" and (state.get("error") == _CALL_ABORTED or meta.get("interrupted") is True):
            step["observation"] = _output_so_far(meta)  # cut off while it ran: not its own error
            said = strip_terminal_codes(as_str(state.get("error")) or "") or _CALL_ABORTED
            step["error"] = INTERRUPTED if aborted else f"{NEVER_FINISHED} ({short(said, keep='head')})"
        elif status == "error":
            text = strip_terminal_codes(as_str(state.get("error")) or "")
            step["observation"] = text or None
            step["error"] = _refused(text) or error_line(text)
        else:  # the session stopped mid-call (killed, crashed): what the command printed so far is kept
            step["observation"] = _output_so_far(meta)
            step["error"] = f"{NEVER_FINISHED} (status {status or 'unknown'})"
        child = as_str(meta.get("sessionId"))
        if name == "task" and child and child not in self.subagents:
            self.subagents.append(child)


def to_trajectory(record: Any, ctx: Context) -> Trajectory:
    record = _as_export(record)
    if record is None:
        raise RecordError("expected an `opencode export` document: {\"info\": session, \"messages\": [...]}, "
                          "or the list of a session's messages the server answers")
    info = record["info"]
    session = _Session()
    messages, undone = _kept_messages(record)
    for message in messages:
        minfo, parts = message["info"], message["parts"]
        if minfo.get("role") == "user":
            session.user(parts)
        elif minfo.get("role") == "assistant":
            session.assistant(minfo, parts)
    session.flush()
    if not session.prompts and session.sanitized:
        session.prompts.append(f"OpenCode session {info['id']} (its prompt redacted: `opencode export --sanitize`)")
    if not session.prompts and undone:
        raise RecordError("every prompt of this OpenCode session was undone (/undo): nothing kept")
    if not session.prompts:
        raise RecordError("no user prompt in this OpenCode session")
    tokens = as_dict(info.get("tokens"))
    total = sum(v for v in (as_int(tokens.get("input")), as_int(tokens.get("output")),
                            as_int(tokens.get("reasoning"))) if v) or None
    parent = as_str(info.get("parentID"))
    metadata: dict[str, Any] = {
        "source_format": NAME,
        "session_id": info["id"],
        "title": as_str(_kept(info.get("title"))),
        "directory": as_str(_kept(info.get("directory"))),
        "sanitized": session.sanitized or None,
        "project_id": as_str(info.get("projectID")),
        "agent": as_str(info.get("agent")),
        "provider": session.providers[0] if session.providers else None,
        "models": session.models if len(session.models) > 1 else None,
        "is_subagent": True if parent else None,
        "parent_session_id": parent,
        "subagent_sessions": session.subagents or None,
        "cost": info.get("cost") if isinstance(info.get("cost"), (int, float)) and info.get("cost") else None,
        "total_tokens": total,
        "files_patched": session.patched[:50] or None,
        "attachments": session.attached[:50] or None,
        "compactions": session.compactions or None,
        "undone_messages": undone or None,
        "user_prompts": prompt_list(session.prompts[1:]) or None,
        "error_records": session.errors[:20] or None,
        "ended_by": "the user's interrupt (MessageAbortedError)" if session.aborted else _CUT if session.cut else None,
        "last_updated": as_dict(info.get("time")).get("updated"),
    }
    version, said = as_str(info.get("version")), as_dict(info.get("metadata"))
    goal = as_dict(said.get("kilo.goal"))
    metadata.update(goal=as_str(goal.get("text")), goal_status=as_str(goal.get("status")))
    run = session_trajectory(
        ctx, run_id=f"opencode.{info['id']}", task=session.prompts[0],
        model_id=session.models[0] if session.models else None, steps=session.steps, metadata=metadata,
        last_error=session.last_error, error_cause="infrastructure: the session ended on an API error",
        created_at=first_time(as_dict(info.get("time")).get("created")),
        tool_versions={"kilo" if any(k.startswith(_KILO_KEY) for k in said) else "opencode": version}
        if version else {},
    )
    if session.limit and session.last_error:  # the agent's own limit: its failure, not the provider's
        return run.model_copy(update={"outcome": Outcome.failure, "failure": Failure(
            error=session.last_error, cause=f"the agent ran out of {session.limit}")})
    return run

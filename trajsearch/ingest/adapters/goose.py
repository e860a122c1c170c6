"""``goose``: sessions of goose (block/goose, now aaif-goose/goose), the on-machine coding agent (CLI and desktop).

Source read: block/goose ``crates/goose/src/conversation/message.rs`` (``Message``, ``MessageContent``),
``conversation/tool_result_serde.rs`` (a call's and a result's ``{"status", "value" | "error"}``),
``session/legacy.rs`` (the JSONL files), ``session/session_manager.rs`` (``Session``, the SQLite schema,
``export_session``), ``session/export_bundle.rs`` (``child_sessions``) and ``goose-cli/src/commands/session.rs``
(``goose session export``); aaif-goose/goose ``session_manager.rs`` at schema 17 (``usage`` objects,
``parent_session_id``); the error part and ``metadata.inference`` as emberian/cv ``crates/cv-core/src/harness/goose.rs``
reads goose 1.51's stores; real lines posted in aaif-goose/goose#2529 and #4252 (see
``tests/fixtures/goose/.goose29/README.md``).

Three shapes hold a session, one run each:
- until goose moved them to SQLite (late 2025; its first run after the move imports them), a JSONL file,
  ``~/.local/share/goose/sessions/<id>.jsonl``: a first line of session
  metadata (``SessionMetadata``: ``working_dir``, ``description``, ``schedule_id``, ``message_count``, the token
  counts; later also ``id``, ``created_at``, ``extension_data``), then one ``Message`` a line. goose reads a file
  whose first line is a message as messages only: so does this adapter;
- since then the sessions live in SQLite (``sessions.db`` beside them, tables ``sessions`` and ``messages``), which
  is not read: detection names it and gives a standard-library command writing its sessions as JSON lines
  (:func:`session_store`), each line what ``goose session export --format json`` prints for one session;
- ``goose session export --format json`` (``serde_json::to_string_pretty(&Session)``): the session's fields (``id``,
  ``name``, ``working_dir``, ``created_at``, ``provider_name``, ``model_config``, the token counts: flat
  ``accumulated_total_tokens`` until goose gathered them into ``usage`` / ``accumulated_usage`` objects) and its
  ``conversation``, the list of its messages; since goose's export bundle (``session/export_bundle.rs``) also its
  ``child_sessions``, the sub-agent sessions it spawned, each read as its own run. ``--format yaml``
  (``serde_yaml::to_string(&Session)``) is the same document in YAML, read alike (``read_head_text``: told by its
  first two fields, ``HEAD``; scalars resolved as YAML 1.2 does, as serde_yaml writes them: ``id: 20260301_1`` is a
  string). ``--format markdown`` (``# Session Export: <name>``, ``export.rs``) is refused naming the JSON export:
  it keeps no time, no call id, trims argument strings past 4,096 characters, drops output meant for the user,
  writes a failed result (``isError``) as a successful one and a tool's output raw, so that a ``### User:`` line in
  it cannot be told from the next message. ``goose session list --format json`` (sessions without messages) is
  named as no run;
- ``goose run --output-format json`` (``session/mod.rs``'s ``JsonOutput``): ``{"messages", "metadata":
  {"total_tokens", "status"}}``, the run's whole conversation, its prompt first: one run, named by its file (it
  records no session id); stdout captured whole holds goose's banner before it (unless ``--quiet``: ``_BANNER``),
  and before that, with ``--recipe``, the recipe goose loaded (``_RECIPE``: its title, description, parameters; not
  the task, which is the recipe's prompt, the run's first message), both read past; the banner before the text
  output (no ``--output-format``) is named as no record of the run;
- ``goose run --output-format stream-json`` (``StreamEvent``): a JSON line an event, ``{"type": "message",
  "message"}`` for each message the agent yielded, ``notification``, ``model_change`` (``model``), ``error``
  (``error``), ``complete`` (``total_tokens``). goose emits only the messages the agent yielded, never the prompt
  (``process_agent_response``): a stream is refused, naming the session goose saved, to export instead.

A ``Message`` is ``{"id"?, "role": "user" | "assistant", "created": unix seconds, "content": [...],
"metadata"?: {"userVisible", "agentVisible"}}``; each content part has a ``type``:
- ``text`` (``text``): a user's prompt, or what the model said; ``thinking`` (``thinking``): its reasoning;
- ``toolRequest`` (``id``, ``toolCall``: ``{"status": "success", "value": {"name", "arguments"}}``, or
  ``{"status": "error", "error"}`` for a call goose could not parse) and ``frontendToolRequest`` (the desktop's own
  tools): a step, its action the tool's name (``developer__shell``, ``developer__text_editor``, an extension's
  ``<extension>__<tool>``);
- ``toolResponse`` (``id``, ``toolResult``), in the next user message: the step's observation. ``value`` is MCP's
  ``CallToolResult`` (``{"content": [...], "isError"}``), before 1.x its content list alone; a content item
  addressed to the user only (``annotations.audience: ["user"]``, the developer tools' display copy) is left out
  where one for the model is there. The step failed when ``status`` is ``error`` (the tool raised: its ``error``)
  or ``isError`` is true (the tool said it failed: its output);
- ``error`` (``kind``: ``contextLengthExceeded``, ``authentication``, ``creditsExhausted``, ``other``; ``message``):
  the provider refused the turn; the session's last such part with no work after it is what the run ended on
  (out of context: the agent's failure; else the provider's, an infrastructure error); so is the part that goose
  wrote for an overflow before it had ``error`` parts (``contextLengthExceeded``, ``{"msg": "The context length of
  the model has been exceeded. Please start a new session and try again."}``: ``message.rs``'s
  ``MessageContent::ContextLengthExceeded``, yielded by ``agents/agent.rs`` and a sub-agent's loop on
  ``ProviderError::ContextLengthExceeded``), the same error that
  goose's agent loop writes as the assistant's text instead (``_LOOP_ERROR``: "Ran into this error: ...", and its
  words for a network error, a provider's refusal, an empty reply), and its ``systemNotification`` of
  ``notificationType`` ``creditsExhausted`` (the provider's credits ran out);
- ``toolConfirmationRequest``, ``actionRequired``, ``systemNotification`` (but for the above), ``redactedThinking``,
  ``document``, images: no step.
A message the user never saw (``userVisible: false``: a compaction's summary, goose's own nudges) is not the user's,
nor the model's (the continuation goose writes after a compaction, ``context_mgmt/mod.rs``); the copy of the turn's
prompt that goose appends after compacting a turn mid-way, its original still shown, is no new prompt (told by text
from an original the compaction hid, whose copy is the prompt).

Mapping: task = the first user text (later ones ``metadata.user_prompts``); steps = the tool requests with their
responses, and the model's text with no call after it a ``respond`` step; a request the session ends without an
answer to failed ("never answered"), as does one that names no tool; model_id = ``model_config.model_name`` where
recorded (exports and the database; a JSONL file records none), else the last assistant message's
``metadata.inference`` (``resolvedModel``, ``requestedModel``: goose 1.4x on); outcome unknown (a session holds no
verdict) unless it ended on an error part; a sub-agent's session (``session_type: sub_agent``) is
``metadata.is_subagent`` (never a Harbor trial's run) and names its parent (``metadata.parent_session_id``, the
parent's ``session_id``); trajectory_id = ``goose.<session id>.<digest>``: the recorded ``id``, else the file's name
without ``.jsonl`` (goose's own id for it; a gzipped copy's too), and a digest of the first message's time and the
first prompt (:func:`_digest`: goose's ids repeat across machines), stable across copies and shapes; created_at = the
session's ``created_at``, else its first message's time.
"""

from __future__ import annotations

import hashlib
import re
from pathlib import Path
from typing import Any, Iterator

import yaml

from trajsearch.blobs import image_placeholder
from trajsearch.model import Trajectory

from ._agent_cli import (API_ERROR_CAUSE, SessionSteps, as_records, as_str, error_line, export_command, first_time,
                         iso_time, prompt_list, session_trajectory, sqlite_export, whole_file)
from ._common import Context, RecordError, as_dict, as_list, file_stem, item_positions, loads, short
from ..sources import parse, whole_text

NAME = "goose"
#: A file is one session (a JSONL file, an export); JSON lines of exports (``EXPORT_SCRIPT``'s) are one each.
WHOLE_FILE = True
#: goose's words in the continuation of a compaction the user asked for (``MANUAL_COMPACT_CONTINUATION_TEXT``, each
#: version): it appends no copy of the last prompt.
_MANUAL = "at the user's request"
#: Where goose keeps its sessions (``~/.local/share/goose/sessions``): walked though hidden (a home folder's backup).
SESSION_FOLDERS = (".local/share/goose/sessions",)
#: goose's session database (``~/.local/share/goose/sessions/sessions.db``): a walk that finds no dump hands
#: it in for detection to name, with how to export its sessions (``session_store``).
SESSION_STORES = ("goose/sessions/sessions.db",)

#: Content part types only goose writes (``MessageContent``'s camelCase tags), by which a message line is told.
_GOOSE_PARTS = frozenset({"toolRequest", "toolResponse", "frontendToolRequest", "toolConfirmationRequest",
                          "actionRequired", "systemNotification", "redactedThinking", "contextLengthExceeded",
                          "summarizationRequested", "error"})
_REQUESTS = ("toolRequest", "frontendToolRequest")
#: What goose's agent loop writes in the model's place when the provider failed, as a plain text part
#: (``agents/agent.rs``: "Ran into this error: <error>.\n\nPlease retry if you think this is a transient or
#: recoverable error." for most errors, and after a compaction that failed; "<error>\n\nPlease resend your message
#: to try again." for a ``ProviderError::NetworkError``, whose ``Display`` is "Network error: <detail>"; goose 1.x,
#: 1.43 among them, and its classic loop of 2026): the provider's error, no reply of the model's. Its state machine
#: writes the same words in an ``error`` part. A model's answer that ends with either sentence is no error: it does
#: not open with the loop's words, or it carries ``metadata.inference`` (the provider and model that wrote it), which
#: the loop's own ``Message::assistant()`` never has. (:func:`_loop_error` reads it.)
_LOOP_ERROR = re.compile(r"\ARan into this error(?: trying to compact)?: ")
_LOOP_RETRY = "\n\nPlease retry if you think this is a transient or recoverable error."
_NETWORK_ERROR = re.compile(r"\A(?P<network>Network error: .+?)\n\nPlease resend your message to try again\.\s*\Z",
                            re.S)
#: The loop's words, in the model's place too, for a provider's refusal (``ProviderError::Refusal``: "The provider
#: refused this request.\n\n{details}[\n\nCategory: {category}]" and this sentence, the turn ended) and after three
#: empty replies in a row (``EMPTY_TURN_MESSAGE``): aaif-goose/goose ``agents/agent.rs`` (0009e7e2, goose 1.5x).
_REFUSED = "The provider refused this request."
_REFUSED_TAIL = ("\n\nPlease start a new session to continue — resending this conversation is likely to be refused "
                 "again.")
_EMPTY_TURN = "The model returned an empty response. Please resend your message to continue."
#: The error part's ``kind`` of a ``ProviderError`` by the words its message opens with (``errors.rs``'s ``Display``,
#: ``MessageErrorKind::from``); any other error's kind is ``other``. A refusal's is ``refusal``: the model's
#: safeguards, as ``ended_on_error`` reads it (``MODEL_REFUSAL``).
_LOOP_ERROR_KINDS = (("Context length exceeded:", "contextLengthExceeded"), ("Authentication error:", "authentication"),
                     ("Credits exhausted:", "creditsExhausted"), (_REFUSED, "refusal"))

#: goose's SQLite store as JSON lines of sessions, each shaped as ``goose session export --format json`` prints one
#: (the session's columns, and its ``conversation``), with Python's standard library alone: the database opened
#: read-only (a wrong path fails, where sqlite3 would make an empty one there), the messages in goose's order
#: (``created_timestamp``, then ``id``), a session with no message (created, never prompted) left out, the output
#: written once all is read. Arguments: the database, the file to write.
EXPORT_SCRIPT = sqlite_export(
    'd.row_factory=sqlite3.Row;s=[{**dict(r),"conversation":c} for r in d.execute("select * from sessions")'
    ' for c in [[{"role":m["role"],"created":m["created_timestamp"],"content":json.loads(m["content_json"])'
    ',"metadata":json.loads(dict(m).get("metadata_json") or "{}")} for m in d.execute("select * from messages '
    'where session_id=? order by created_timestamp,id",(r["id"],))]] if c]')


#: The banner ``goose run`` prints on stdout before its output unless ``--quiet`` (``output::display_session_info``:
#: an empty line, ``__( O)>  ● new session · <provider> <model>``, ``\____)  <session id> · <cwd>``, ``L L  goose is
#: ready``): a capture of ``goose run --output-format json``'s stdout opens with it, the JSON after it. Its words are
#: ``console::style``d (green, dim, cyan): captured where colour is on (a pseudo-terminal, ``CLICOLOR_FORCE``; not
#: ``script``'s typescript, which opens with a header of its own) each carries SGR codes, ``ESC[2m`` before and
#: ``ESC[0m`` after, taken here as blanks (``_PAD``); goose's JSON after it has none. The blank ``L L`` needs before
#: ``goose is ready`` is the first one after its codes: two blank runs side by side would split a long run of blanks
#: n ways, each tried again at a failure (a 60 KB line of blanks took two minutes to refuse).
#: ``goose run --recipe`` prints the recipe it loaded before the banner (goose-cli's ``load_recipe_as_template``,
#: later ``print_recipe_info`` on stderr, captured with ``2>&1``): ``Loading recipe: <title>``, ``Description:
#: <description>`` (as many lines as the description has), ``Parameters used to load this recipe:`` (older goose:
#: ``Parameters:``) and a ``key: value`` line each, a blank line. None of it is the task: the recipe's prompt is
#: the run's first message. Read up to the first line that opens as the banner does, in one pass: the atomic
#: group gives back no line, so a preamble with no banner after it is refused having been read once.
_SGR = r"\x1b\[[0-9;]*m"
_PAD = rf"(?:[ \t]|{_SGR})*"
_RECIPE = rf"(?:\s|{_SGR})*Loading recipe:(?>[^\n]*\n(?:(?!{_PAD}__\( O\)>)[^\n]*\n)*)"
_BANNER = re.compile(rf"(?:{_RECIPE})?(?:\s|{_SGR})*__\( O\)>[^\n]*\n{_PAD}\\____\)[^\n]*\n{_PAD}L L(?:{_SGR})*"
                     rf"[ \t]{_PAD}goose is ready{_PAD}(?:\r?\n|\Z)")
#: ``goose session export --format yaml``: the session's first two fields, as serde writes ``Session`` (its
#: ``id``, then its ``working_dir``); a YAML document marker before them is allowed. Or ``goose run``'s banner.
HEAD = re.compile(rf"(?:---[ \t]*\r?\n)?id: [^\n]*\r?\nworking_dir: |{_BANNER.pattern}")
#: ``goose session export --format markdown``'s first lines (``export_session_to_markdown``).
_MARKDOWN = re.compile(r"\s*# Session Export: [^\n]*\n\s*\*(?:Total messages: \d+|\(This session has no messages\))\*")
#: ``goose run --output-format stream-json``'s event types (``StreamEvent``, snake_case tags).
_STREAM_EVENTS = frozenset({"message", "notification", "model_change", "error", "complete"})
NO_PROMPT = ("goose's headless stream (`goose run --output-format stream-json`) records no prompt: the run is the "
             "session goose saved (`goose session list` names it); export it with `goose session export "
             "--session-id <id> --format json`, or run with `--output-format json`, whose output holds the prompt")
TEXT_OUTPUT = ("goose's terminal output (`goose run`'s banner, then the text it printed) is no record of the run: run "
               "with `--output-format json` (`--quiet` leaves the banner out), or export the session goose saved with "
               "`goose session export --session-id <id> --format json`")


def matches(record: Any) -> bool:
    return (_is_export(record) or _is_header(record) or _is_message(record) or _is_run_output(record)
            or _is_stream_event(record))


def _loop_error(text: str) -> str | None:
    """The provider's error goose's agent loop wrote as the model's text (``_LOOP_ERROR``, ``_NETWORK_ERROR``,
    ``_REFUSED``, ``_EMPTY_TURN``), its trailing dots and advice dropped; None for other text. The retry sentence is
    found at the end and the dots stripped in Python: a regex taking the error lazily before ``\\.*`` rescanned a
    run of dots for each one (40 KB of dots: 1.1 s)."""
    body = text.rstrip()
    if (head := _LOOP_ERROR.match(body)) and body.endswith(_LOOP_RETRY):
        return body[head.end():len(body) - len(_LOOP_RETRY)].rstrip(".")
    if body.startswith(_REFUSED) and body.endswith(_REFUSED_TAIL):
        return body[:len(body) - len(_REFUSED_TAIL)]
    if body == _EMPTY_TURN:
        return _EMPTY_TURN.partition(".")[0]
    return network["network"] if (network := _NETWORK_ERROR.match(text)) else None


class _Yaml12(getattr(yaml, "CSafeLoader", yaml.SafeLoader)):  # libyaml's parser where PyYAML has it
    """YAML as serde_yaml writes it: YAML 1.2's core schema (``true``/``false``, decimal and hex
    numbers), not PyYAML's 1.1, which reads ``20260301_1`` (a goose session id) as 202603011, ``yes`` as true and
    an ISO time as a datetime."""


_Yaml12.yaml_implicit_resolvers = {
    first: [(tag, rx) for tag, rx in resolvers if tag.rsplit(":", 1)[-1] not in ("bool", "int", "float", "timestamp")]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()}
_Yaml12.add_implicit_resolver("tag:yaml.org,2002:bool", re.compile(r"^(?:true|True|TRUE|false|False|FALSE)$"),
                              list("tTfF"))
_Yaml12.add_implicit_resolver("tag:yaml.org,2002:int", re.compile(r"^(?:[-+]?[0-9]+|0x[0-9a-fA-F]+)$"),
                              list("-+0123456789"))
_Yaml12.add_implicit_resolver(
    "tag:yaml.org,2002:float",
    re.compile(r"^(?:[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?"
               r"|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))$"),
    list("-+.0123456789"))


def _aliased(document: Any) -> bool:
    """Whether a list or mapping stands in two places of the document: a YAML alias (``*name``), which serde_yaml
    never writes, and which makes a small file huge once the run is converted (nine nested aliases of ten items
    each: an 851-byte file, a billion items). libyaml's loader composes in C, so they are found in what it built."""
    seen: set[int] = set()
    stack = [document]
    while stack:
        node = stack.pop()
        if isinstance(node, (dict, list)):
            if id(node) in seen:
                return True
            seen.add(id(node))
            stack.extend(node.values() if isinstance(node, dict) else node)
    return False


def read_head_text(path: Path) -> Iterator[tuple[str, Any, str | None, None]]:
    """The adapter hook: ``goose session export --format yaml``'s session (and its child sessions, as ``split``
    gives them from the JSON export), or ``goose run``'s output after its banner (:data:`_BANNER`), ``(position,
    session, error, None)``."""
    text, unreadable = whole_text(path)
    if text is not None and (banner := _BANNER.match(text)):
        yield from _after_banner(text[banner.end():])
        return
    document = None
    try:
        document = yaml.load(text, Loader=_Yaml12) if text is not None else None  # noqa: S506 - a safe loader
    except yaml.YAMLError as exc:
        unreadable = f"not goose's YAML export: {str(exc).splitlines()[0]}"
    if _aliased(document):
        document, unreadable = None, "not goose's YAML export: it holds an alias (*name), which goose never writes"
    if not _is_export(document):
        yield "file", None, unreadable or "no session (id, working_dir, conversation): not goose's YAML export", None
        return
    for where, session in split(document):
        yield where, session, None, None


def _after_banner(output: str) -> Iterator[tuple[str, Any, str | None, None]]:
    """What ``goose run`` printed after its banner: ``--output-format json``'s document, read as without the banner;
    a stream (``stream-json``) or the terminal's text named as no run."""
    document, why = parse(output, "output")
    if why is None and matches(document):
        for where, session in split(document):
            yield where, session, None, None
        return
    first, _ = parse(output.lstrip().partition("\n")[0])
    if _is_stream_event(first):
        why = NO_PROMPT
    elif not output.lstrip().startswith("{"):
        why = TEXT_OUTPUT
    yield "file", None, f"goose's `goose run` output after its banner: {why or 'not goose JSON'}", None


def text_not_a_run(head: str) -> str | None:
    """The adapter hook: ``goose session export --format markdown`` is no faithful record of the run (see the
    module's docstring); what to export instead."""
    if _MARKDOWN.match(head):
        return ("goose's Markdown export (`goose session export --format markdown`) keeps no times or call ids, trims "
                "long arguments and cannot tell a failed call or a message boundary from a tool's output: export the "
                "session as JSON (`goose session export --session-id <id> --format json`) and ingest that")
    return None


def _is_run_output(record: Any) -> bool:
    """``goose run --output-format json``'s one document: the conversation, goose's messages (so another tool's
    ``{"messages", "metadata"}`` is not taken for it), and ``metadata.status``."""
    return (isinstance(record, dict) and isinstance(record.get("messages"), list)
            and "status" in as_dict(record.get("metadata")) and record.keys() <= {"messages", "metadata"}
            and (not record["messages"] or _is_message(record["messages"][0])))


def _is_stream_event(record: Any) -> bool:
    """A line of ``goose run --output-format stream-json``: a goose message in its envelope, or the closing count,
    or a model change (an ``error`` line alone is too plain to tell)."""
    if not isinstance(record, dict) or record.get("type") not in _STREAM_EVENTS:
        return False
    kind = record["type"]
    return ((kind == "message" and _is_message(record.get("message")))
            or (kind == "complete" and "total_tokens" in record)
            or (kind == "model_change" and {"model", "mode"} <= record.keys()))


def _is_export(record: Any) -> bool:
    """A ``Session`` with its messages: ``goose session export --format json``, or a line of ``EXPORT_SCRIPT``'s."""
    return (isinstance(record, dict) and isinstance(record.get("id"), str)
            and isinstance(record.get("working_dir"), str) and isinstance(record.get("conversation"), list))


def _is_header(record: Any) -> bool:
    """A JSONL session file's first line (``SessionMetadata``, which always writes ``message_count``)."""
    return (isinstance(record, dict) and isinstance(record.get("working_dir"), str) and "message_count" in record
            and "role" not in record and "conversation" not in record)


def _is_message(record: Any) -> bool:
    """A ``Message`` line (a JSONL file without its metadata line): goose's visibility flags or a part of its own."""
    if not (isinstance(record, dict) and record.get("role") in ("user", "assistant")
            and isinstance(record.get("created"), int) and isinstance(record.get("content"), list)):
        return False
    flags = as_dict(record.get("metadata"))
    return ("userVisible" in flags or "agentVisible" in flags
            or any(as_dict(part).get("type") in _GOOSE_PARTS for part in record["content"]))


def split(document: Any) -> Iterator[tuple[str, Any]]:
    """A file of exports (``EXPORT_SCRIPT``'s JSON lines, or an array of them): each its own run where it stands;
    anything else (a JSONL session file, one export) one run. An export's ``child_sessions`` (goose's export
    bundle: the sub-agent sessions it spawned, each a whole ``Session``) are each their own run after it."""
    exports = isinstance(document, list) and document and all(_is_export(item) for item in document)
    for where, session in zip(item_positions(document), document) if exports else whole_file(document):
        yield where, session
        children = as_list(session.get("child_sessions")) if _is_export(session) else []
        for n, child in enumerate(children, 1):
            if _is_export(child) and child["conversation"]:  # a sub-agent never prompted: no run, as the parent's
                yield f"{where}, child session {n}", child


def session_store(path: Path, tables: dict[str, set[str]]) -> str | None:
    """What goose's session database is and how to read its runs, given its tables and their columns (``detect``
    reads them); None for any other database."""
    if not ({"id", "working_dir"} <= tables.get("sessions", set())
            and {"session_id", "role", "content_json", "created_timestamp"} <= tables.get("messages", set())):
        return None
    return ("goose's session database (SQLite; goose keeps sessions in ~/.local/share/goose/sessions/"
            "sessions.db): write its sessions as JSON lines and ingest those: "
            f"{export_command(EXPORT_SCRIPT, path, 'goose-sessions.jsonl')} (or one "
            "session: `goose session export --session-id <id> --format json`)")


def side_file(record: Any) -> str | None:
    """``goose session list --format json``: the sessions without their messages (``conversation`` null)."""
    if (isinstance(record, dict) and isinstance(record.get("id"), str) and isinstance(record.get("working_dir"), str)
            and "conversation" in record and record["conversation"] is None and "message_count" in record):
        return ("goose's session list (`goose session list --format json`) holds no messages: export each session "
                "with `goose session export --session-id <id> --format json`")
    return None


def side_document(document: Any) -> str | None:
    """A session with no message (created, never prompted): no run, passed over as other CLIs' bookkeeping files."""
    if isinstance(document, dict) and (_is_header(document) or (_is_export(document) and not document["conversation"])):
        return "a goose session with no messages: created, never prompted"
    return None


def _session(document: Any) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """(the session's fields, its messages) of an export, of ``goose run``'s JSON, or of a JSONL file's lines; a
    stream (``goose run --output-format stream-json``) is refused: goose emits only the messages the agent yielded
    (``process_agent_response``), never the prompt."""
    if _is_export(document):
        return document, [m for m in document["conversation"] if isinstance(m, dict)]
    if _is_run_output(document):
        return as_dict(document["metadata"]), [m for m in document["messages"] if isinstance(m, dict)]
    records = as_records(document, "goose session")
    if _is_stream_event(records[0]):
        raise RecordError(NO_PROMPT)
    head = records[0] if _is_header(records[0]) else {}
    messages = [r for r in records[1 if head else 0:] if r.get("role") in ("user", "assistant")]
    if not head and not any(isinstance(m.get("created"), int) and isinstance(m.get("content"), list)
                            for m in messages):  # a file forced on this reader: say what it is not
        raise RecordError("not a goose session (goose's JSONL opens with its metadata line, `working_dir` and "
                          "`message_count`, then messages with `role`, `created` and `content`; its export is one "
                          "document with `id`, `working_dir` and `conversation`)")
    return head, messages


def _result_text(value: Any) -> str:
    """A tool's output: the text of a ``CallToolResult``'s content (or, before 1.x, of the content list itself),
    without the copies addressed to the user alone where the model has its own."""
    items = [as_dict(item) for item in as_list(as_dict(value).get("content") if isinstance(value, dict) else value)]
    for_model = [item for item in items if "user" not in as_list(as_dict(item.get("annotations")).get("audience"))
                 or "assistant" in as_list(as_dict(item.get("annotations")).get("audience"))]
    texts = []
    for item in for_model or items:
        resource = as_dict(item.get("resource"))
        text = as_str(item.get("text")) or as_str(resource.get("text"))
        if text is None and item.get("type") == "image":  # MCP's ``data`` and ``mimeType``: named as in any text
            text = image_placeholder(item)
        if text is None and resource:
            text = f"[resource {resource.get('uri', '')}]"
        if text:
            texts.append(text)
    return "\n".join(texts)


def _earlier(at: Any, than: Any) -> bool:
    """Whether unix time ``at`` is before ``than``; not when either is missing (no time, no evidence)."""
    return all(isinstance(t, (int, float)) and not isinstance(t, bool) for t in (at, than)) and at < than


class _Session(SessionSteps):
    """A session's messages walked in order: prompts, and steps by tool call id; ``last_error`` goose's error part
    with no work after it, what the session ended on."""

    #: From goose's continuation after compacting a turn (an assistant message for the model only) to the next user
    #: text, where goose appends a fresh copy of the turn's prompt (``compact_messages``; none when the user asked for
    #: the compaction, ``_MANUAL``): shown to the user in older goose, and then no new prompt unless goose hid the
    #: original (it was the last message), the copy then the prompt the user sees; for the model alone in newer goose.
    #: goose stamps the copy when it compacts: a shown text older than the continuation (``compacted_at``) is a prompt
    #: a fork kept verbatim after it (gosling keeps the last turns and appends no copy), the user's own.
    compacted = False
    compacted_at: Any = None

    def __init__(self) -> None:
        super().__init__()
        #: Texts hidden from the user and the model since the last prompt: a prompt goose compacted away, its
        #: tool-pair summaries, an earlier compaction's summary. Told by text, as any of them may come before the
        #: copy. A set added to in place: a turn may hide thousands, and copying it for each was quadratic.
        self.hidden_texts: set[str] = set()

    def user(self, message: dict[str, Any], parts: list[dict[str, Any]]) -> None:
        text = "\n".join(p["text"] for p in parts if p.get("type") == "text" and isinstance(p.get("text"), str)).strip()
        metadata = as_dict(message.get("metadata"))
        shown = metadata.get("userVisible") is not False
        if text and self.compacted:
            self.compacted = False
            if (shown and text not in self.hidden_texts and self.prompts and text == self.prompts[-1]
                    and not _earlier(message.get("created"), self.compacted_at)):
                return  # goose's copy of the prompt of the turn it compacted mid-way, no new prompt
        if not shown:
            if text and metadata.get("agentVisible") is False:
                self.hidden_texts.add(text)
            return  # goose's own words to the model (a compaction's summary, a nudge), not the user's
        if text:
            self.flush()
            self.prompts.append(text)
            self.last_error = None
            self.hidden_texts.clear()

    def assistant(self, message: dict[str, Any], parts: list[dict[str, Any]]) -> None:
        if as_dict(message.get("metadata")).get("userVisible") is False:
            # goose's continuation after compacting (agent only): its words, not the model's. Any hidden assistant
            # message is taken for it, as only ``compact_messages`` writes one (in every goose version read).
            self.compacted = not any(_MANUAL in (as_str(p.get("text")) or "") for p in parts)
            self.compacted_at = message.get("created")
            return
        made_by_goose = not as_dict(message.get("metadata")).get("inference")  # no model wrote it: see _LOOP_ERROR
        for part in parts:
            kind = part.get("type")
            if (kind == "text" and made_by_goose and isinstance(part.get("text"), str)
                    and (error := _loop_error(part["text"])) is not None):
                error_kind = next((named for opening, named in _LOOP_ERROR_KINDS if error.startswith(opening)), "other")
                self.last_error = _error_part({"kind": error_kind, "message": error})
            elif kind == "text" and isinstance(part.get("text"), str) and part["text"].strip():
                self.say(part["text"].strip(), message.get("created"))
                self.last_error = None
            elif kind == "error":
                self.last_error = _error_part(part)
            elif kind == "contextLengthExceeded":  # goose 1.0-1.x's own part for it: ``{"msg"}``, no ``kind``
                self.last_error = _error_part({"kind": kind, "message": part.get("msg")})
            elif kind == "systemNotification" and part.get("notificationType") == "creditsExhausted":
                self.last_error = _error_part({"kind": "creditsExhausted", "message": part.get("msg")})
            elif kind == "thinking" and isinstance(part.get("thinking"), str):
                self.thought.append(part["thinking"])
            elif kind in _REQUESTS:
                self.call(message, part)

    def call(self, message: dict[str, Any], part: dict[str, Any]) -> None:
        request = as_dict(part.get("toolCall"))
        value = as_dict(request.get("value"))
        name = as_str(value.get("name"))
        error: str | None = None
        if request.get("status") == "error":  # goose could not parse the model's call: it never ran
            error = as_str(request.get("error")) or "invalid tool call"
        elif name is None:  # not goose's {status, value: {name, arguments}}: no tool could have run it
            error = "invalid tool call: no tool name recorded"
        # a call that never ran is kept out of by_call: no answer is awaited, none could pair with it
        self.open_call(as_str(part.get("id")) if error is None else None, name or "(invalid tool call)",
                       value.get("arguments"), message.get("created"),
                       **({"error": error, "observation": error} if error else {}))
        self.last_error = None

    def response(self, message: dict[str, Any], part: dict[str, Any]) -> None:
        step = self.by_call.pop(part.get("id"), None) if isinstance(part.get("id"), str) else None
        if step is None:
            return  # an answer to no recorded call (the request compacted away)
        result = as_dict(part.get("toolResult"))
        value = result.get("value")
        step["ended_at"] = iso_time(message.get("created"))
        if result.get("status") == "error":
            step["observation"] = as_str(result.get("error")) or "tool error"
            step["error"] = error_line(step["observation"])
        else:
            step["observation"] = _result_text(value) or None
            if isinstance(value, dict) and value.get("isError") is True:
                step["error"] = error_line(step["observation"])


def _digest(messages: list[dict[str, Any]], task: str) -> str:
    """What tells a session from another of the same id, in every shape that holds it (its JSONL file, an export, a
    line of the database's): its first message's time and its first prompt. goose numbers sessions per database
    (``YYYYMMDD_N``, N from 1 each day: ``SessionManager::create_session``), so every user's first session of a day
    has one id."""
    key = f"{messages[0].get('created') if messages else ''}\0{task}".encode()
    return hashlib.blake2b(key, digest_size=6).hexdigest()


def _error_part(part: dict[str, Any]) -> str:
    """goose's error part (``{"type": "error", "kind", "message"}``: the provider refused the turn) as the run's
    error: its message, and its kind in the words :data:`CONTEXT_OVERFLOW` knows (``contextLengthExceeded`` ->
    ``context_length_exceeded``: the agent's failure; ``authentication``, ``creditsExhausted``, ``other``: the
    provider's)."""
    kind = re.sub(r"(?<=[a-z])(?=[A-Z])", "_", as_str(part.get("kind")) or "other").lower()
    return f"{short(as_str(part.get('message')) or 'goose error', 500, keep='head')} ({kind})"


def _tokens(session: dict[str, Any]) -> int | None:
    """The session's tokens: ``accumulated_usage`` / ``usage`` objects (exports since goose moved them to
    ``Usage``), else the flat columns (the database, JSONL headers, earlier exports)."""
    for value in (as_dict(session.get("accumulated_usage")).get("total_tokens"),
                  as_dict(session.get("usage")).get("total_tokens"),
                  session.get("accumulated_total_tokens"), session.get("total_tokens")):
        if isinstance(value, int) and not isinstance(value, bool) and value > 0:
            return value
    return None


def _model(session: dict[str, Any], messages: list[dict[str, Any]]) -> str | None:
    """``model_config.model_name`` (an export's object, the database's ``model_config_json`` text), else the model
    the last assistant message records (``metadata.inference``: ``resolvedModel``, else ``requestedModel``)."""
    config = session.get("model_config")
    if config is None and isinstance(session.get("model_config_json"), str):
        try:
            config = loads(session["model_config_json"])
        except ValueError:
            config = None
    if name := as_str(as_dict(config).get("model_name")):
        return name
    for message in reversed(messages):
        inference = as_dict(as_dict(message.get("metadata")).get("inference"))
        if name := as_str(inference.get("resolvedModel")) or as_str(inference.get("requestedModel")):
            return name
    return None


def to_trajectory(record: Any, ctx: Context) -> Trajectory:
    session, messages = _session(record)
    walk = _Session()
    for message in messages:
        parts = [p for p in as_list(message.get("content")) if isinstance(p, dict)]
        if message.get("role") == "assistant":
            walk.assistant(message, parts)
        else:
            for part in parts:
                if part.get("type") == "toolResponse":
                    walk.response(message, part)
            walk.user(message, parts)
    walk.close()
    if not walk.prompts:
        raise RecordError("no user prompt in this goose session")
    session_id = as_str(session.get("id")) or file_stem(ctx.source, (".jsonl", ".json"))
    name = as_str(session.get("name")) or as_str(session.get("description"))
    parent = as_str(session.get("parent_session_id"))
    sub_agent = session.get("session_type") == "sub_agent" or parent is not None
    metadata: dict[str, Any] = {
        "source_format": NAME,
        "session_id": session_id,
        "session_name": name or None,
        "working_dir": as_str(session.get("working_dir")),
        "session_type": session.get("session_type") if session.get("session_type") not in (None, "user") else None,
        "schedule_id": as_str(session.get("schedule_id")),
        "provider": as_str(session.get("provider_name")),
        "total_tokens": _tokens(session),
        "is_subagent": sub_agent or None,  # a part of its parent's run: never a Harbor trial's run
        "parent_session_id": parent,
        "user_prompts": prompt_list(walk.prompts[1:]) or None,
    }
    return session_trajectory(
        ctx, run_id=f"goose.{session_id}.{_digest(messages, walk.prompts[0])}", task=walk.prompts[0],
        model_id=_model(session, messages), steps=walk.steps, metadata=metadata, last_error=walk.last_error,
        error_cause=API_ERROR_CAUSE, tool_versions=None,
        created_at=first_time(session.get("created_at"), *(m.get("created") for m in messages[:1])))

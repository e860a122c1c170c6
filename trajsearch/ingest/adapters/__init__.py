"""Format adapters: one module per dump format, each turning parsed records into Trajectories.

Adding a format is one module here (plus a fixture and its tests) and one
entry in ``ADAPTERS``. A module exposes:

- ``NAME``; ``matches(record) -> bool`` on a file's first record (detection,
  see ``trajsearch.ingest.detect``); optionally ``SIGNATURE`` (a regex searched
  in the first 64 KiB when no record can be parsed from them: a JSON format's only in
  a file that opens as JSON, ``detect._opens_as_json``, so a README or docs page quoting
  its words is none of it; a text format's, one with ``read_text``, anywhere in them) and
  ``SUFFIXES`` (file names that imply the format); optionally ``ARCHIVES`` (the ends
  of the names of archives it reads itself, Inspect AI's ``.eval`` zip) with
  ``read_archive(path)``, yielding ``(position, record, error, None)`` per run in a
  zip file of its format (a walk takes files of those names, and detection names
  their format by that name, or by ``archive_members(names)`` of a zip otherwise
  named, before it refuses other archives); optionally ``read_text(path)``, the
  same for a file of its format that is no JSON (Aider's Markdown chat history,
  told by ``SIGNATURE``; ``walked_file`` has a walk take it), with optionally
  ``HEAD``, a regex matched at a file's start that names the format before any
  record is looked for (a JSON line the history quotes names none); optionally
  ``read_head_text(path)``, the same for a JSON format's text rendering (goose's YAML export) or its JSON after a
  CLI's line (``goose run``'s banner, ``opencode export``'s ``Exporting session``), read by it only where the file
  opens with the adapter's ``HEAD`` (its other files are bare JSON; ``side_document`` is asked of the document it
  reads); optionally ``text_not_a_run(head)``, why a
  text file its producer wrote, told by its head, holds no run and what to export instead (goose's Markdown
  export); optionally ``not_a_run(record)``,
  the reason a file its producer wrote holds no run and where the run is (a
  headless tool's final result, an event stream without the prompt), for the
  error that names an unrecognised file; optionally ``side_file(record)``, what a
  file its producer writes beside the runs is (predictions, an evaluation report):
  passed over in a directory, named when given alone; optionally
  ``side_document(document)``, the same for a whole small file (a session file
  of bookkeeping only), with ``WHOLE_FILE``; optionally ``side_path(path, fmt)``,
  the same told by where a file sits (a raw session beside the run converted
  from it, a job's own files), given its detected format (None: unrecognised);
  also asked of a run folder (``run_folder``), with its adapter's format;
  optionally ``format_by_place(path, fmt)``, its own format for a file whose
  records another format's rules claim (``fmt``) but whose place says it is
  its producer's (Qwen Code before 0.3 wrote Gemini CLI's recording): two
  hooks, as ``side_path`` passes a file over (no run) and is asked the format
  this one has settled, which picks the reader of a run;
  optionally ``SESSION_FOLDERS``, the hidden folders its producer keeps runs in
  (``.claude/projects``): a directory walk reads them, and no other hidden folder; one
  ending in a file pattern (``.chats/*.json``) has only those files directly in it read;
  optionally ``SESSION_STORES``, its producer's binary session stores
  (``.adk/session.db``), the end of the file's own path (a walk of ``.adk`` itself
  finds it too; a bare file name, ``conversations.db``, is no place: such a file is
  taken where its tables say it is one, outside hidden folders): a walk hands them
  in for detection to name, by the adapter's
  ``session_store(path, tables)``, what an SQLite database of those tables is (its
  producer's store and how to export its sessions; None: not its own);
  optionally ``walked_file(path)``, whether a file not named as a dump is
  its producer's run where it lies (a Harbor trial's ``agent/claude-code.txt``),
  which a walk then reads, or one of its side files lying hidden beside such a
  run (Aider's ``.aider.input.history``), which detection then passes over
  (``side_file``, ``side_path``) rather than the walk count as left unread;
  optionally ``subagent_file(path)``, whether a session file of its format is a
  sub-agent's, told by its own records (a Codex rollout's session meta, a Claude
  Code teammate's team and agent names), where its place does not say so: not a
  second run of the Harbor trial holding it (``atif.trial_sessions``);
  optionally ``read_with(path)``, the other files (present or not) whose content
  the runs of ``path`` depend on (an OpenHands attempt file's aggregate): an
  ingest's checkpoint reads ``path`` again when they change; or optionally
  ``read_with_value(path)``, the part of another file they depend on, as a
  string (None: none), where the whole file changes far more often than that
  part (a Continue session's own entry in the index beside it);
- a record-per-run adapter: ``to_trajectory(record, ctx) -> Trajectory`` (raising
  ``_common.PassedOver`` for a record that holds no run and nothing wrong: a
  copy of a run read from another file). With
  ``WHOLE_FILE = True`` a file is handed over as one value (its JSON document,
  or the list of its JSONL lines) and optionally ``split(document)`` yields
  ``(position, record)`` per run in it; optionally ``read_streamed(path,
  on_bytes)``, the runs of a big single document one at a time instead
  (``(position, record, error, None)``; None for a file it does not stream:
  read whole), which may raise ``sources.Unstreamable`` where the streaming
  parser refuses what a whole read takes (1e400): the runs after those it gave
  are then split from the whole document (Inspect AI's JSON log); with it,
  ``LISTED_RUNS``, the member that lists them: a document whose head its
  ``SIGNATURE`` matches is detected by the members before that one. Optionally ``file_hints(records)``
  reads a file's records once before any is converted and returns what the
  file says of them all (``ctx.hints``; e.g. the one tau-bench domain of a
  results file, for a crashed run that shows none); optionally
  ``run_folder(path)`` (the folder a path stands for, when a run is kept as a
  folder of files: an OpenHands SDK conversation), optionally
  ``folder_files(folder)`` (the files its run is read from: the rest below it
  is read as any other input; default all) and ``read_folder(files, ctx)``
  (its files, ``{relative path: JSON value}``; raising ``_common.PassedOver``
  for a folder that holds no run and nothing wrong: an OpenHands conversation
  whose only prompt the user's hook blocked);
- a span adapter (``GROUPED = True``: OTel GenAI, OpenInference, LangSmith,
  Langfuse, Braintrust): ``nodes(record, ctx, seq)`` yielding ``(trace key, Node,
  conversation id)``, ``trajectory_id(key, by)`` and
  ``assemble_trajectory(key, nodes, ctx, by)`` (raising ``_common.PassedOver``
  for a group that holds no run and nothing wrong: the reader says why at info
  level and counts it for the summary); the reader groups the spans of
  a whole input by trace (or conversation) before assembling.

Run ids: an agent CLI's session is ``<format>.<session id>`` (``continue.``, ``crush.``, ``cursor-cli.``,
``copilot-cli-headless.`` ...), a framework's or trace format's ``<ID_PREFIX>:<id>`` (``pydantic-ai:``).

A sub-agent's run (a session another session spawned) carries ``metadata.is_subagent``
(never its Harbor trial's run: ``_agent_cli.in_trial``) and, where recorded, its
parent as ``metadata.parent_session_id``: the parent's session id as its format
records it (the parent run's ``metadata.session_id``), not a run id. A sub-agent's calls a format keeps among its
parent's steps (copilot-cli, copilot-cli-share, copilot-chat, inspect-ai) carry ``arguments.subagent``
(``_common.subagent_marked``): the format's name for it, copilot's the spawning tool's (``task``, Copilot Chat's
``runSubagent``), Inspect's the agent's (``researcher``).

Each module documents its field mapping in its docstring. File handling
(JSONL, arrays, gzip, positions, grouping, error messages) lives in
``trajsearch.ingest.sources`` and ``trajsearch.ingest.read``.
"""

from __future__ import annotations

from pathlib import Path
from types import ModuleType
from typing import Any

from trajsearch.model import Trajectory

from . import (
    adk_session,
    ag2,
    aider,
    atif,
    autocoderover,
    autogen_agentchat,
    braintrust,
    browser_use,
    claude_code,
    cline,
    codex_cli,
    continue_dev,
    copilot_chat,
    copilot_cli,
    copilot_share,
    crush,
    cursor_cli,
    cursor_ide,
    cursor_transcript,
    droid,
    gemini_cli,
    goose,
    gptme,
    inspect_ai,
    kimi_cli,
    langfuse,
    langsmith,
    letta,
    mini_swe_agent,
    moatless,
    native,
    openai_agents,
    openai_agents_session,
    openhands,
    openinference,
    opencode,
    otel_genai,
    pydantic_ai,
    q_cli,
    qwen_code,
    specstory,
    swe_agent,
    tau2_bench,
    tau_bench,
    trae_agent,
    vercel_ai,
    vercel_ai_chat,
)
from ._common import DEFAULT_TENANT, Context, RecordError

#: Detection order: the first adapter whose ``matches`` accepts a record names its format.
#: (ATIF comes first: an ATIF-v1.7 root carries a ``trajectory_id``, which native records are told by; so does
#: Moatless' 2025 flow file, told by its ``nodes`` of a root ``node_id`` with no ``parent_id``.)
ADAPTERS: dict[str, ModuleType] = {
    m.NAME: m
    for m in (
        atif, moatless, native, openai_agents, mini_swe_agent, tau_bench, tau2_bench, swe_agent, inspect_ai,
        # coding-agent CLI session files
        cursor_cli,  # before Claude Code, whose stream shape Cursor's CLI prints with its own events
        cursor_transcript,  # Cursor's agent transcripts (bare messages, no ids: Claude Code's lines have them)
        droid,  # Factory's Droid CLI's sessions; before Claude Code, whose stream `droid exec` mimics
        claude_code, codex_cli, gemini_cli, qwen_code, openhands, opencode, copilot_cli, goose, crush,
        kimi_cli,  # Kimi Code CLI's context files (a session's model context as JSON lines)
        q_cli,  # Amazon Q Developer CLI's / Kiro CLI's saved conversations (and their SQLite store's rows)
        trae_agent,  # a software-engineering agent's own trajectory file
        autocoderover,  # a software-engineering agent's task folders (told by their files' names)
        cline,  # a coding-agent IDE extension's task folders (Cline, Roo Code, Kilo Code)
        copilot_chat,  # GitHub Copilot Chat's chats (VS Code's export and kept sessions)
        continue_dev,  # Continue's chat sessions (its IDE extensions and ``cn`` CLI)
        gptme,  # gptme's conversation logs (a terminal agent's messages, its calls written in their text)
        aider, copilot_share,  # coding agents' Markdown chat histories and exports (read as text: ``read_text``)
        specstory,  # an editor extension's / CLI wrapper's Markdown chat histories (``read_text``)
        adk_session,  # an agent framework's own session record
        openai_agents_session,  # the OpenAI Agents SDK's session memory (its SQLite store's rows)
        cursor_ide,  # Cursor (the IDE)'s chats (its SQLite chat store's rows)
        braintrust,  # before Langfuse, whose trace matcher takes any row with an id and scores
        langsmith, langfuse, vercel_ai, openinference, otel_genai,
        autogen_agentchat, ag2, pydantic_ai,  # agent frameworks' own saved results (runs, histories)
        browser_use,  # a browser agent's saved history
        letta,  # Letta's agent files (.af): an agent's state with its message history
        vercel_ai_chat,  # an AI SDK app's persisted chats (UIMessage[]); last: it claims no other format's file
    )
}
FORMATS: tuple[str, ...] = tuple(ADAPTERS)


def adapter_for(fmt: str) -> ModuleType:
    """The adapter module for ``fmt``; ValueError naming the supported formats otherwise."""
    try:
        return ADAPTERS[fmt]
    except KeyError:
        raise ValueError(f"unknown format {fmt!r}: supported formats are {', '.join(FORMATS)}") from None


def format_of(record: Any) -> str | None:
    """The format whose records look like ``record`` (by its keys), or None."""
    for name, mod in ADAPTERS.items():
        try:
            if mod.matches(record):
                return name
        except Exception:  # a detector surprised by an odd shape has not recognised it
            continue
    return None


def is_grouped(fmt: str) -> bool:
    """Whether ``fmt`` records are spans that must be grouped into runs."""
    return bool(getattr(adapter_for(fmt), "GROUPED", False))


def to_trajectory(fmt: str, record: Any, ctx: Context) -> Trajectory:
    return adapter_for(fmt).to_trajectory(record, ctx)


__all__ = [
    "ADAPTERS",
    "DEFAULT_TENANT",
    "FORMATS",
    "ARCHIVE_FORMATS",
    "Context",
    "RecordError",
    "adapter_for",
    "archive_format",
    "format_of",
    "is_grouped",
    "to_trajectory",
]


#: The archives an adapter reads itself (its ``ARCHIVES``: Inspect AI's ``.eval``), by the end of their names, and
#: the format of each.
ARCHIVE_FORMATS: dict[str, str] = {suffix: fmt for fmt, mod in ADAPTERS.items()
                                   for suffix in getattr(mod, "ARCHIVES", ())}


def archive_format(path: Path) -> str | None:
    """The format whose adapter reads ``path`` as an archive of its own (``ARCHIVE_FORMATS``), by its name, or
    None."""
    name = path.name.lower()
    return next((fmt for suffix, fmt in ARCHIVE_FORMATS.items() if name.endswith(suffix)), None)


def adapter_hooks(name: str, fmt: str | None = None) -> tuple[ModuleType, ...]:
    """The adapters that define the optional hook or attribute ``name``, under a forced format only its own: the one
    place a hook is gathered across the adapters (a walk's, a unit's, detection's ``side_file`` / ``side_path``).
    Where one format is already known (detection asking a detected format's ``side_file``, a reader its adapter's
    ``WHOLE_FILE``), that adapter's own attribute is read directly."""
    mods = ADAPTERS.values() if fmt is None else [adapter_for(fmt)]
    return tuple(mod for mod in mods if getattr(mod, name, None) is not None)


def side_file(record: Any) -> str | None:
    """What a file is that a producer writes beside its runs (``side_file`` of an adapter), if it is one."""
    return next((reason for mod in adapter_hooks("side_file") if (reason := mod.side_file(record))), None)


def side_path(path: Path, fmt: str | None) -> str | None:
    """What a file is that a producer writes beside its runs, told by where it sits (``side_path`` of an adapter:
    a raw session beside its converted run, a job's own files), given the format detected (None: unrecognised)."""
    return next((reason for mod in adapter_hooks("side_path") if (reason := mod.side_path(path, fmt))), None)


def format_by_place(path: Path, fmt: str | None) -> str | None:
    """The format a file's place says it is of where its records say ``fmt`` (``format_by_place`` of an adapter), if
    one does."""
    return next((own for mod in adapter_hooks("format_by_place") if (own := mod.format_by_place(path, fmt))), None)


def read_with(path: Path, fmt: str | None = None) -> tuple[Path, ...]:
    """The other files whose content the runs of ``path`` depend on (``read_with`` of an adapter; of ``fmt``'s alone
    where it is forced), none mostly."""
    return tuple(p for mod in adapter_hooks("read_with", fmt) for p in mod.read_with(path))


def read_with_value(path: Path, fmt: str | None = None) -> str:
    """What of other files the runs of ``path`` depend on, as a value (``read_with_value`` of an adapter; of
    ``fmt``'s alone where it is forced): the checkpoint's fingerprint of ``path`` holds it; "" mostly."""
    return "".join(value for mod in adapter_hooks("read_with_value", fmt)
                   if (value := mod.read_with_value(path)) is not None)


def why_not_a_run(record: Any) -> str | None:
    """What an adapter knows about a file it does not read: a producer's other output, and where its run is."""
    for mod in ADAPTERS.values():
        explain = getattr(mod, "not_a_run", None)
        try:
            reason = explain(record) if explain is not None else None
        except Exception:  # an odd shape: no hint
            reason = None
        if reason:
            return reason
    return None

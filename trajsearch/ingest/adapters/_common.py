"""Helpers shared by the format adapters: ids, clipping, error lines, building.

Kept apart so each adapter module holds only its own format's mapping.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import math
import re
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone, tzinfo
from pathlib import Path
from typing import Any, Callable, Collection, Mapping, Sequence, TypeVar

from pydantic import ValidationError

from trajsearch import config
from trajsearch.actions import UNNAMED_TOOL, not_run
from trajsearch.steps import strip_terminal_codes

from trajsearch.model import (
    CONTROL_CHARACTERS, FORMER_IDS, MAX_ARGUMENT_DEPTH, MAX_FILTER_VALUE_CHARS, MAX_STEP_FIELD_CHARS, MAX_TASK_CHARS,
    Outcome, Step, Trajectory, argument_chars, json_strings,
)
from trajsearch.represent import FILE_TIME, TIME_BASIS, recoveries

from ..sources import STREAMS_PREFIX, Values, loads, plain_name

DEFAULT_TENANT = "default"
#: A run's metadata key: the index of its first step read from a part still running when its file was saved (a
#: Copilot chat exported while its last request ran: that request's steps are the parts the chat showed then, which
#: its export once the request ended holds otherwise, as the model's rounds). A later copy continues such a run when
#: it opens with the steps before (``ingest.read.continues``), so one ingest of both keeps the later only.
RUNNING_FROM = "running_from_step"
#: A run's step as an adapter holds it: built (a Step), or the dict it is built from.
StepLike = TypeVar("StepLike", Step, dict[str, Any])
#: A fractional reward at or above this marks a run a success (operators may set it per ingest).
DEFAULT_SUCCESS_THRESHOLD = 0.5
#: How an ingest's caller named its tenant, and so how a native record naming another is kept under its own: what
#: the tenant read under is, and what to change. One fix for all ("--tenant acme") failed over --server, where the
#: key's tenant is the one and --tenant naming another is refused, and meant nothing to a Python caller (review of
#: probe 50 NC). ``python``: ``read_dump``/``preview``/``IngestJob`` (``tenant=``); ``cli``: the embedded or a Milvus
#: ingest (``--tenant``); ``server``: parsed by the CLI, sent over ``--server`` under its key's tenant.
TENANT_SET_BY = {
    "python": ("the tenant given ({tenant!r}: tenant=, else 'default')", "pass tenant={own!r}"),
    "cli": ("the operator-given tenant {tenant!r} (--tenant, else $TRAJSEARCH_TENANT, else 'default')",
            "ingest with --tenant {own}"),
    "server": ("the --server key's tenant {tenant!r}", "ingest with a key of tenant {own!r}"),
}
_ID_BAD = re.compile(r"[^A-Za-z0-9_.:@/+=-]+")
_MAX_ID = 192


class RecordError(ValueError):
    """A record that cannot become a trajectory; the message says why."""


class PassedOver(Exception):
    """A group of spans that holds no run and nothing wrong (a trace of embedding calls only, one that only builds
    an agent), or a record that holds none (a copy of a run read from another file: OpenHands' ``output_errors.jsonl``
    beside its attempt files; an aider session started and quit), or a run folder that holds none (an OpenHands
    conversation whose only prompt the user's hook blocked): neither a run nor a rejection, raised by a span
    adapter's ``assemble_trajectory``, a record adapter's ``to_trajectory`` or a folder's ``read_folder`` (``unit``
    names what it counts: "line", "session", "conversation"). ``reason`` is what such groups are counted by in an
    ingest's summary ("embedding calls only"), so an input whose traces were all passed over is told from one that
    held nothing; ``detail`` what the info line says of this one."""

    def __init__(self, reason: str, detail: str | None = None, unit: str = "record") -> None:
        super().__init__(reason)
        self.reason, self.detail, self.unit = reason, detail or reason, unit


@dataclass(frozen=True)
class Context:
    """Where a record came from and what the operator imposes on it."""

    source: Path
    tenant: str | None = DEFAULT_TENANT
    defaults: Mapping[str, Any] = field(default_factory=dict)
    success_threshold: float = DEFAULT_SUCCESS_THRESHOLD
    #: what the whole file says about records that do not say it themselves (an adapter's ``file_hints``)
    hints: Mapping[str, Any] = field(default_factory=dict)
    #: how the caller named ``tenant`` (a key of ``TENANT_SET_BY``)
    tenant_set_by: str = "python"


def version(path: Path) -> int:
    """``path``'s modification time (ns; 0 when it is gone): the key of a cached look at a file or folder, so that
    a walk asking of it for each file beside it looks once, and again only once it changed."""
    try:
        return path.stat().st_mtime_ns
    except OSError:
        return 0


def json_object(record: Any) -> dict[str, Any]:
    """``record`` itself if it is a JSON object; else a RecordError naming what it is.

    Every record-per-run adapter starts with this check, so a stray list or
    string is rejected in the same words whatever the format.
    """
    if not isinstance(record, dict):
        raise RecordError(f"expected a JSON object, got {json_kind(record)}")
    return record


def item_positions(items: Sequence[Any]) -> list[str]:
    """Where each item of a whole file's list stands, for its run's errors: a JSONL file's ``line N`` (the reader's
    ``Values`` keep them), else an array's ``record N``."""
    return getattr(items, "positions", None) or [f"record {n}" for n in range(1, len(items) + 1)]


def json_kind(value: Any) -> str:
    """What a JSON value is, in JSON's words: the Python type's name ("got Values", "got list") told a user
    nothing; a file of several values (JSON Lines) under a format that reads a file as one run says so."""
    if isinstance(value, Values):
        return f"{len(value)} JSON values one after another (JSON Lines), where this format reads one document"
    kinds = ((bool, "true or false"), (dict, "an object"), (list, "an array"), (str, "a string"),
             ((int, float), "a number"), (type(None), "null"))
    return next((name for kind, name in kinds if isinstance(value, kind)), type(value).__name__)


def list_field(record: dict[str, Any], name: str, what: str) -> list[Any]:
    """``record[name]`` if it is a list; else ``RecordError("missing field 'name' (what)")``.

    ``what`` says what the list holds, so the message tells the user which
    part of the dump is missing or malformed.
    """
    value = record.get(name)
    if not isinstance(value, list):
        raise RecordError(f"missing field {name!r} ({what})")
    return value


def as_list(value: Any) -> list[Any]:
    """``value`` if it is a list, else an empty one (a field of the wrong type is treated as missing)."""
    return value if isinstance(value, list) else []


def finite(value: Any) -> float | None:
    """``value`` if it is a finite number (not a bool), else None: a score kept as metadata must compare and
    serialize (NaN and ``1e309``, which JSON parsers read as inf, do neither)."""
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) and \
        math.isfinite(value) else None


def as_dict(value: Any) -> dict[str, Any]:
    """``value`` if it is a JSON object, else an empty one (a field of the wrong type is treated as missing)."""
    return value if isinstance(value, dict) else {}


def json_dict(text: str) -> dict[str, Any] | None:
    """The JSON object ``text`` is written as; None for text that is not JSON, or JSON of another kind: for text a
    tool may or may not have written as an object (a result, an envelope), which is then read as text. JSON nested
    deeper than Python's reader goes (an agent's runaway output) is not JSON this can read either: its RecursionError
    lost the whole run."""
    try:
        value = loads(text)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


def tool_arguments(raw: Any) -> Any:
    """OpenAI-style ``function.arguments``: the JSON string decoded, kept as text when it is not JSON, or JSON
    nested deeper than a step's arguments may be (``MAX_ARGUMENT_DEPTH``: decoded, they rejected the run).

    Chat-message dumps (mini-SWE-agent, tau-bench) store tool-call arguments
    as a JSON string. Unlike ``_spans.maybe_json`` any JSON value is decoded
    (numbers too) and the text is not stripped first.
    """
    if isinstance(raw, str):
        try:
            return loads(raw, MAX_ARGUMENT_DEPTH)
        except ValueError:
            return raw
    return raw


def subagent_marked(arguments: Any, subagent: str) -> dict[str, Any]:
    """A sub-agent's call's ``arguments`` marked as its: ``subagent`` added (arguments that are no object kept under
    ``arguments``), so a filter on ``arguments.subagent`` finds a sub-agent's calls among its parent's steps. What
    the key holds is the format's name for the sub-agent: copilot-cli's the spawning tool's (``task``),
    inspect-ai's the agent's (``researcher``)."""
    return {**(arguments if isinstance(arguments, dict) else {"arguments": arguments}), "subagent": subagent}


def double_encoded(value: Any, *markers: str) -> Any:
    """A document saved as a JSON string of itself (double-encoded: ``json.dumps`` of its JSON text), decoded once
    more where the string opens as an object and holds one of ``markers`` (a key of the format, so no other string
    record is parsed); any other value as it is. ADK 1.x wrote its eval results so; letta-ai/agent-file committed
    agent files so."""
    if isinstance(value, str) and value.lstrip().startswith("{") and any(m in value for m in markers):
        try:
            return loads(value)
        except ValueError:
            return value
    return value


def content_text(content: Any) -> str:
    """A chat message's ``content`` as text: a string as is, a list of parts joined by lines, else empty.

    The shape SWE-agent and mini-SWE-agent histories share (a string, or a
    list of ``{"type": "text", "text": ...}`` parts).
    """
    if isinstance(content, list):
        return "\n".join(str(p.get("text", "")) if isinstance(p, dict) else str(p) for p in content)
    return content if isinstance(content, str) else ""


def thinking_blocks_text(blocks: Any) -> str | None:
    """The text of Anthropic's ``thinking_blocks`` as LiteLLM hands them on (``[{"type": "thinking", "thinking",
    "signature"}]``), joined; a ``redacted_thinking`` block (its ``data`` encrypted) has none. None when empty."""
    thinking = [b["thinking"].strip() for b in as_list(blocks)
                if isinstance(b, dict) and isinstance(b.get("thinking"), str) and b["thinking"].strip()]
    return "\n\n".join(thinking) or None


#: Where a chat-completion message keeps a reasoning model's reasoning once the server has parsed it out of the
#: content (no ``<think>`` block is left there): litellm's and vLLM's ``reasoning_content``, OpenRouter's ``reasoning``.
_REASONING_KEYS = ("reasoning_content", "reasoning")


def message_reasoning(message: Any) -> str | None:
    """The reasoning a chat-completion message carries beside its content (see ``_REASONING_KEYS``), else None."""
    found = next((message[k] for k in _REASONING_KEYS if isinstance(message, dict)
                  and isinstance(message.get(k), str) and message[k].strip()), None)
    return found.strip() if found else None


def outcome_of_reward(reward: float | None, ctx: Context) -> Outcome:
    """A reward in [0, 1] as an outcome: success at or above the operator's threshold, else failure.

    Benchmarks that grade partially (0.65, 0.93, ...) are not all failures, and
    a missing reward is no verdict at all (``unknown``).
    """
    if reward is None:
        return Outcome.unknown
    return Outcome.success if reward >= ctx.success_threshold else Outcome.failure


def safe_id(raw: str) -> str:
    """Map ``raw`` onto ``ID_PATTERN``; long ids keep a hash so they stay distinct."""
    text = _ID_BAD.sub("-", raw).lstrip("_.:@/+=-") or "x"
    if len(text) > _MAX_ID:
        digest = hashlib.sha1(raw.encode()).hexdigest()[:12]
        text = f"{text[: _MAX_ID - 13]}-{digest}"
    return text


#: What stands in a clipped text for its middle (see ``clip``); ``clipped_fields`` finds it again.
CLIP_MARKER = "\n[... {} characters clipped ...]\n"
_CLIPPED = re.compile(re.escape(CLIP_MARKER).replace(re.escape("{}"), r"(\d+)"))
#: The text fields of a step that ``clip_step_text`` bounds.
STEP_TEXT_FIELDS = ("thought", "observation", "error")
#: Every field of a step that reading clips: its texts, and its ``arguments`` (``clip_arguments``).
CLIPPED_STEP_FIELDS = (*STEP_TEXT_FIELDS, "arguments")
#: Shortest a string of ``arguments`` is clipped to; arguments that fit only below it are mostly structure (keys,
#: numbers, many short strings) and become their JSON text, clipped.
_MIN_ARGUMENT_STRING = 1_000


def clip(text: str | None, limit: int) -> str | None:
    """Keep head and tail of an over-long text (errors and results sit at either end)."""
    if text is None or len(text) <= limit:
        return text
    room = max(limit - len(CLIP_MARKER.format(len(text))), 0)
    head, tail = room // 2, room - room // 2
    return text[:head] + CLIP_MARKER.format(len(text) - room) + (text[-tail:] if tail else "")


def clip_step_text(text: str | None) -> str | None:
    return clip(text, MAX_STEP_FIELD_CHARS)


def clip_task(text: str) -> str:
    return clip(text, MAX_TASK_CHARS) or ""


def clip_arguments(arguments: Any) -> Any:
    """A step's ``arguments`` within ``MAX_STEP_FIELD_CHARS`` as JSON (``model.argument_chars``), as its texts are:
    a tool call carrying a whole file (Claude Code's Write, OpenHands' ``create``) costs the middle of its longest
    strings, each clipped as ``clip`` clips a text, down to a length at which the whole fits; names, paths and
    short values stay whole. Arguments whose bulk is not in long strings become their JSON text, clipped."""
    size = argument_chars(arguments)
    if size <= MAX_STEP_FIELD_CHARS:
        return arguments
    if isinstance(arguments, str):
        return clip_step_text(arguments)
    clipped, cap = arguments, max((len(text) for text in json_strings(arguments)), default=0)
    while size > MAX_STEP_FIELD_CHARS and cap > _MIN_ARGUMENT_STRING:
        cap = max(cap * MAX_STEP_FIELD_CHARS // size - len(CLIP_MARKER), _MIN_ARGUMENT_STRING)
        clipped = _strings_clipped(arguments, cap)
        size = argument_chars(clipped)
    if size > MAX_STEP_FIELD_CHARS:
        return clip_step_text(json.dumps(arguments, ensure_ascii=False, default=str))
    return clipped


def _strings_clipped(value: Any, limit: int) -> Any:
    """``value`` with each of its strings longer than ``limit`` clipped to it."""
    if isinstance(value, str):
        return clip(value, limit)
    if isinstance(value, dict):
        return {key: _strings_clipped(item, limit) for key, item in value.items()}
    if isinstance(value, list):
        return [_strings_clipped(item, limit) for item in value]
    return value


def _clipped_step(step: dict[str, Any]) -> dict[str, Any]:
    texts = {k: clip_step_text(step[k]) for k in STEP_TEXT_FIELDS if isinstance(step.get(k), str)}
    return {**step, **texts, **({"arguments": clip_arguments(step["arguments"])} if "arguments" in step else {})}


def clip_fields(fields: dict[str, Any]) -> dict[str, Any]:
    """A run's fields with over-long step texts and arguments clipped: in every format a big output or tool input
    costs its middle, never the whole run nor a flood of index rows (anything else not a string is left to
    validation; a task is the adapter's to clip, if it may)."""
    if isinstance(fields.get("steps"), list):
        fields = {**fields, "steps": [_clipped_step(step) if isinstance(step, dict) else step
                                      for step in fields["steps"]]}
    return fields


#: A UTF-16 surrogate left alone in a decoded string: half of a character that a JavaScript writer cut in two when
#: it sliced a text by UTF-16 code units (``JSON.stringify`` then writes the escape ``\\ud83d``, which JSON allows and
#: Python's ``json`` decodes). A pair is decoded into one character, so any surrogate left is alone; nothing can
#: encode it as UTF-8, so pydantic refuses the string and the store could not write it.
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")
#: The fields of a run that hold free text (any string inside ``failure`` and ``metadata`` too) and of a step
#: (any string inside ``arguments`` too): there a lone surrogate becomes U+FFFD. Any other string is an id, a name
#: or a filter value, which must not change behind the user's back.
_FREE_TEXT = frozenset({"task", "what_worked", "what_failed", "failure", "metadata"})
_STEP_FREE_TEXT = frozenset({"thought", "observation", "error", "arguments"})


def _mended(value: Any) -> Any:
    """``value`` with every lone surrogate in its strings (dict keys too) replaced by U+FFFD."""
    if isinstance(value, str):
        return value if value.isascii() else _LONE_SURROGATE.sub("\ufffd", value)
    if isinstance(value, dict):
        return {_mended(k): _mended(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_mended(item) for item in value]
    return value


def _refuse_surrogate(value: Any, where: str) -> None:
    """A RecordError naming ``where`` (``steps[2].action``) if a string in ``value`` holds a lone surrogate."""
    if isinstance(value, str):
        if not value.isascii() and (found := _LONE_SURROGATE.search(value)):
            raise RecordError(f"field {where!r} holds a lone UTF-16 surrogate {found.group()!r} at position "
                              f"{found.start()} (half of a character cut in two), in {value[:60]!r}")
    elif isinstance(value, dict):
        for key, item in value.items():
            _refuse_surrogate(key, where)
            _refuse_surrogate(item, f"{where}.{key}")
    elif isinstance(value, list):
        for n, item in enumerate(value):
            _refuse_surrogate(item, f"{where}[{n}]")


def mend_surrogates(fields: dict[str, Any]) -> dict[str, Any]:
    """A run's fields with the lone surrogates of its free text (``_FREE_TEXT``, ``_STEP_FREE_TEXT``) replaced by
    U+FFFD: one tool output cut mid-emoji costs a character, not the run. In an id or a name it is a RecordError
    naming the field, where validation would only say "unable to parse raw data as a unicode string"."""
    out: dict[str, Any] = {}
    for key, value in fields.items():
        if key == "steps" and isinstance(value, list):
            out[key] = [_mended_step(step, f"steps[{n}]") if isinstance(step, dict) else step
                        for n, step in enumerate(value)]
        elif key in _FREE_TEXT:
            out[key] = _mended(value)
        else:
            _refuse_surrogate(value, str(key))
            out[key] = value
    return out


def _mended_step(step: dict[str, Any], where: str) -> dict[str, Any]:
    for key, value in step.items():
        if key not in _STEP_FREE_TEXT:
            _refuse_surrogate(value, f"{where}.{key}")
    return {key: _mended(value) if key in _STEP_FREE_TEXT else value for key, value in step.items()}


def readable_fields(fields: dict[str, Any]) -> dict[str, Any]:
    """What every adapter's fields go through before validation (``build``, and ``native``, which validates the
    record as it is): lone surrogates in free text mended (``mend_surrogates``), over-long step texts clipped
    (``clip_fields``)."""
    return clip_fields(mend_surrogates(fields))


def _clipped_chars(value: Any) -> int:
    """How many characters the clip markers in ``value`` (a text, or the strings of a step's arguments) say were
    cut; 0 where nothing was."""
    return sum(int(m.group(1)) for text in json_strings(value) if (m := _CLIPPED.search(text)))


def _clip_marked(fields: dict[str, Any]) -> list[tuple[str, Any]]:
    """(where, value) of each field ``clip`` may cut that holds a clip's marker: the task and each step's
    ``CLIPPED_STEP_FIELDS``."""
    steps = fields.get("steps") if isinstance(fields.get("steps"), list) else []
    found = [("task", fields.get("task"))] + [(f"steps[{n}].{name}", step.get(name)) for n, step in enumerate(steps)
                                              if isinstance(step, dict) for name in CLIPPED_STEP_FIELDS]
    return [(where, value) for where, value in found if _clipped_chars(value)]


def with_clipped_before(run: Trajectory, fields: dict[str, Any]) -> Trajectory:
    """``run`` knowing which of its texts were clipped before this read: they hold a clip's marker in ``fields``,
    the record as read, and are within their limit (a run exported with ``-f jsonl`` and ingested again). The
    clip notice (``clipped_fields``) leaves them out: this read clipped nothing there. Only for a record read as
    it is (``native``): another adapter's fields may hold its own clips of this read."""
    before = frozenset(where for where, value in _clip_marked(fields)
                       if argument_chars(value) <= (MAX_TASK_CHARS if where == "task" else MAX_STEP_FIELD_CHARS))
    if before:
        run._clipped_before = before
    return run


def clipped_fields(trajectory: Trajectory) -> list[str]:
    """Which fields of a run were clipped on reading, and by how much (``steps[3].observation: 908,956
    characters clipped``; a step's ``arguments`` counts the characters cut from all its strings): what the
    ingest summary warns of, since the index never sees that middle. A text that came in clipped already
    (``with_clipped_before``) was not clipped by this read."""
    found = [("task", trajectory.task)] + [(f"steps[{n}].{name}", getattr(step, name))
                                          for n, step in enumerate(trajectory.steps) for name in CLIPPED_STEP_FIELDS]
    return [f"{where}: {cut:,} characters clipped" for where, value in found
            if where not in trajectory._clipped_before and (cut := _clipped_chars(value))]


#: A SWE-smith instance id after ``owner__``: ``<repo>.<commit, 8 hex>.<how its bug was made>``.
_SWE_SMITH_REST = re.compile(r"^(.+?)\.[0-9a-f]{8}\.[^.]+$")
#: An id of a repository at a commit after ``owner__``: ``<repo>.<commit, 7 to 40 hex>``, ProgramBench's task
#: (``eradman__entr.8e2e8b4``, every one of its tasks) and SWE-smith's environment (``<repo>.<8 hex>``).
_AT_COMMIT_REST = re.compile(r"^(.+?)\.[0-9a-f]{7,40}$")
#: A SWE-bench Pro instance id: ``instance_<owner>__<repo>-<commit, 40 hex>`` and, mostly, ``-v<hash>`` (or ``-vnan``).
_SWE_BENCH_PRO = re.compile(r"instance_(?P<owner>[^_].*?)__(?P<repo>.+?)-[0-9a-f]{40}(?:-v(?:[0-9a-f]+|nan))?")


def instance_repo(instance_id: str) -> str | None:
    """The repository a SWE-bench-style instance id names: ``owner__repo-123`` -> ``owner/repo`` (SWE-agent
    names a GitHub issue's instance ``owner__repo-i123``; SWE-smith ``owner__repo.<commit>.<bug>``; ProgramBench
    ``owner__repo.<commit>``; SWE-bench Pro ``instance_owner__repo-<commit>-v<hash>``); None for an id of another
    shape."""
    if pro := _SWE_BENCH_PRO.fullmatch(instance_id):
        return f"{pro.group('owner')}/{pro.group('repo')}"
    owner, sep, rest = instance_id.partition("__")
    if not sep:
        return None
    pinned = _SWE_SMITH_REST.match(rest) or _AT_COMMIT_REST.match(rest)
    return f"{owner}/{pinned.group(1) if pinned else re.sub(r'-i?[0-9]+$', '', rest)}"


def at_commit(instance_id: str) -> bool:
    """Whether ``instance_id`` names a repository at a commit (``owner__repo.<commit>``, see ``_AT_COMMIT_REST``),
    not an issue or pull request to resolve with a patch (``owner__repo-123``) nor a SWE-smith bug."""
    _, sep, rest = instance_id.partition("__")
    return bool(sep and _AT_COMMIT_REST.match(rest))


def short(text: str, limit: int = 300, *, keep: str = "end") -> str:
    """One line of at most ``limit`` chars; keeps the end (where messages conclude) or the head."""
    line = " ".join(text.split())
    if len(line) <= limit:
        return line
    return "…" + line[-(limit - 1) :] if keep == "end" else line[: limit - 1] + "…"


#: How much of a blocking hook's reason is kept: its head (a hook's script says why first), one line; OpenHands' SDK
#: keeps up to 50,000 chars of a hook's stderr.
HOOK_REASON_CHARS = 300


def hook_reason(reason: str, default: str) -> str:
    """A blocking hook's reason as kept (Kimi's and OpenHands' ``PreToolUse``, OpenHands' ``UserPromptSubmit``): one
    rule for all, "" for none and for ``default``, the words the harness gives a block whose hook gave none."""
    reason = reason.strip()
    return "" if reason == default else short(reason, HOOK_REASON_CHARS, keep="head")


def blocked_by_hook(reason: str, default: str) -> str:
    """The error of a call a hook blocked before it ran: not run, the hook's reason kept (:func:`hook_reason`)."""
    kept = hook_reason(reason, default)
    return not_run("blocked by a hook" + (f": {kept}" if kept else ""))


def hook_blocked_prompt(prompt: str, reason: str, default: str) -> dict[str, str]:
    """A user's prompt a ``UserPromptSubmit`` hook blocked, as ``metadata.hook_blocked_prompts`` keeps it (OpenHands',
    Kimi Code's): no turn ran for it; the hook's reason (:func:`hook_reason`) where it gave one."""
    kept = hook_reason(reason, default)
    return {"prompt": short(prompt, 500, keep="head"), **({"reason": kept} if kept else {})}


def hook_prompt_context(prompt: str, context: str) -> dict[str, str]:
    """The context a ``UserPromptSubmit`` hook added to a user's prompt (its ``additionalContext``, which the model
    reads with it), as ``metadata.hook_prompt_contexts`` keeps it (OpenHands', Kimi Code's): apart from the prompt."""
    return {"prompt": short(prompt, 500, keep="head"), "context": short(context.strip(), 1000, keep="head")}


_EXC_LINE = re.compile(r"^(?:E\s+)?[A-Za-z_][\w.]*(?:Error|Exception|Interrupt|Exit|Warning)\b:?")
#: An exception's name anywhere in a line (``Error executing x: TypeError: ...``). Tried once per run of name
#: characters, from its first letter after a word's start (atomic: a later start in the same run ends the same way): at
#: every ``.``-separated word of a long run (``a.py.a.py...``) it would rescan the run's rest, quadratic.
_EXC_ANYWHERE = re.compile(r"(?<![\w.])(?>[\w.]*?\b[A-Za-z_])[\w.]*(?:Error|Exception)\b:")
#: The first line of a traceback as Python's traceback module prints it, alone on its line (indented in doctest's
#: report); inside an exception group, behind the group's margin (``  | ``; ``  + `` on the group's own first line).
_TRACEBACK = re.compile(r"^( *(?:[|+] )?)(?:Exception Group )?Traceback \(most recent call last\):\s*$")
#: The line Python prints after a traceback's last frame, whatever the exception's class is called (``StopIteration``,
#: ``botocore.errorfactory.NoSuchBucket: ...``, Django's ``DoesNotExist``): ``<module.qualname>[: <message>]``; the
#: class and its colon alone where the message starts with a newline (``AssertionError: `` over numpy's message).
_TRACEBACK_EXC = re.compile(r"^[^\W\d][\w.<>]*(?=: |:?$)")
#: An exception's class alone before its colon, the message on the lines below: Python prints ``<class>: <str(exc)>``
#: and numpy's assertions (``build_err_msg``: ``"\nArrays are not equal\n\nMismatched elements: ..."``) and SymPy's
#: ``filldedent`` start their messages with a newline. In a pytest report, every line of it is behind ``E   ``.
_BARE_EXC = re.compile(r"^[^\W\d][\w.<>]*:$")
_PYTEST_E = re.compile(r"^E\s+(\S.*)$")
#: pytest's short test summary line of a failed test or of an error (``-rfE``, its default since pytest 6): ``FAILED
#: tests/test_x.py::test_add - assert 5 == 4``, ``ERROR tests/test_y.py - ModuleNotFoundError: ...``. It names the test
#: and carries the first line of its error, cut to the terminal's width with ``...`` (``_format_trimmed``; whole in CI
#: or with ``-vv``); no message where the test's id alone fills that width.
#: The id is checked for ``.py`` apart (``_PYTEST_ID``): ``\S+\.py\b\S*`` would retry at every ``.py`` of a long id.
_PYTEST_SUMMARY = re.compile(r"^(?:FAILED|ERROR) (?P<id>\S+)(?P<message> - \S.*)?$")
_PYTEST_ID = re.compile(r"\.py\b")
#: pytest's ``collecting ... `` (``-v``: printed while it collects, no newline after it), which the next thing it prints
#: goes on: ``collecting ... ERROR: file or directory not found: t.py`` (a usage error), ``collecting ... collected 3
#: items``. Read off, the line is what pytest said: its ``ERROR:`` a tool's error line, no mere mention of one.
_PYTEST_COLLECTING = re.compile(r"^collecting \.\.\. (?=\S)")
#: Lines under a bare exception line that are no message of it (its message was blank): what SWE-agent appends to an
#: observation (``(Open file: ...)``, ``(Current directory: ...)``), a shell prompt, pytest's ``=== ... ===`` and
#: ``___ test ___`` rules, its short summary's ``FAILED ...`` and its tally (``1 failed, 2 passed in 0.10s``), a tag
#: closing an agent's capture (mini-swe-agent's ``</output>``), another traceback or the chain to it.
_NO_MESSAGE = re.compile(r"^(?:\((?:Open file|Current directory): |bash-[\d.]*\$|\S+@\S+:\S*[$#](?: |$)|[$#>](?: |$)"
                         r"|[=_-]{3,}(?: |$)|(?:FAILED|ERROR) \S|</?\w+>$|(?:\d+ \w+, )*\d+ (?:failed|passed|errors?)\b.* in \d"
                         r"|Traceback \(most recent call last\)|During handling of the above|The above exception was)")
#: A tool's own error line (pip's and git's ``error: ...``, ``fatal: ...``, rustc's ``error[E0308]: ...``, pip's
#: ``ERROR: ...``, ``Error: ...`` as Node, the Maven wrapper, cobra-based Go CLIs and SWE-agent's tools print it;
#: after Gemini CLI's ``Output:`` label): it says what went wrong, where a later line only mentions a failure
#: ("Failure to do this can result in a broken installation", the Maven wrapper's "We cannot execute ..." after
#: "Error: JAVA_HOME is not defined correctly."). Also in the tool's language (``错误: ...``, ``エラー：...``,
#: ``Fehler: ...``), with a full-width colon in CJK. GNU make's fatal error is one too, whatever its words: make
#: prints it as ``make: *** <message>.  Stop.`` (``make[2]:`` in a sub-make, ``<makefile>:<line>:`` for an error in
#: a makefile, ``$(error ...)`` included), where a recipe's failure is ``make: *** [<target>] Error 2``, which only
#: says that a command (a compiler, a sub-make) failed before it. And the few that say it otherwise: apt's and
#: dpkg's ``E: Unable to locate package x`` (its ``W: ...`` warnings come before), CMake's ``CMake Error at
#: CMakeLists.txt:27 (find_package):`` (its message indented under it; "-- Configuring incomplete, errors occurred!"
#: after), ``git add``'s ``The following paths are ignored by one of your .gitignore files:`` over the paths (then
#: its ``hint:`` advice; it exits 1), and GNU patch's (``_PATCH_ERROR``).
_TOOL_ERROR = re.compile(r"^(?:Output:\s*)?(?:[Ee]rror|fatal|ERROR|FATAL|错误|錯誤|エラー|오류|에러|[Ff]ehler|[Ee]rreur|"
                         r"[Ee]rrore|[Оо]шибка)(?:\[[\w-]+\])?(?::\s|：)"
                         r"|^[^\s:][^:]*(?::\d+)?: \*\*\* .*Stop\.$"
                         r"|^E: \S|^CMake Error\b|^The following paths are ignored by one of your \.gitignore files:$"
                         r"|^\[ERROR\] Failed to execute goal .*")  # Maven's: the goal, then its cause (kept: the end)
#: GNU patch's fatal ``patch: **** malformed patch at line 35: ...`` and a file's ``2 out of 2 hunks FAILED -- saving
#: rejects to file x.rej`` (``ignored`` where reversed), after which it goes on to the next file (``patching file y``,
#: ``Hunk #1 succeeded at 485``: DEC31): tool error lines as patch prints them, at the margin. Indented, they are
#: quoted (a docstring's or a doctest's example, a man page, a mail printed before the command failed), and outranked
#: the error that failed it (DEC32); quoted at the margin (a README's fenced block printed by ``cat``), it still counts,
#: as nothing tells it from patch's own. Its line ending in a colon (``... at line 79:``) quotes a blank line of the
#: patch: no message is below it.
_PATCH_ERROR = re.compile(r"^patch: \*{4} \S|^\d+ out of \d+ hunks? (?:FAILED|ignored) -- saving rejects to file ")
#: A compiler's diagnostic of an error, naming the cause where what follows only counts or wraps it (clang's "1 error
#: generated.", javac's "1 error", tsc's "Found 1 error.", cargo's "error: could not compile `x`", make's "*** [x] Error
#: 1", a build script's "Error: Command failed: tsc"): ``<file>:<line>[:<col>]: [fatal ]error: ...`` (gcc, clang,
#: javac, mypy), ``<file>(<line>,<col>): error TS2339: ...`` (tsc, MSBuild's C# and C++ compilers), ``<file>:<line>:<col>
#: - error TS2339: ...`` (tsc --pretty), rustc's coded ``error[E0425]: ...`` and tsc's ``error TS5023: ...`` without a
#: file, the maven-compiler-plugin's ``[ERROR] <file>:[<line>,<col>] ...``; sqlfluff's violation too
#: (``_SQLFLUFF_VIOLATION``). Warnings come before and among them, and one error often causes the next, so the first
#: is the one to read.
_DIAGNOSTIC = re.compile(r"^[^\s:()]*\.\w+(?::\d+(?::\d+)?(?:: (?:fatal )?error| - error TS\d+)|\(\d+(?:,\d+)*\): error \w+):"
                         r"|^error(?:\[E\d+\]| TS\d+):|^\[ERROR\] \S+:\[\d+,\d+\] ")
#: sqlfluff's violation ``L:   1 | P:   8 | L060 | Use 'COALESCE' ...`` (over its "All Finished!": DEC31), only in a
#: block under its file's ``== [<file>] FAIL`` line (``_SQLFLUFF_FILE``): its expected output printed as a test's text
#: (``expected_output = """== [...] FAIL``) or a diff's context is no error, and beat the real one below it.
_SQLFLUFF_VIOLATION = re.compile(r"^L:\s*\d+ \| P:\s*\d+ \|\s*\w+ \| ")
_SQLFLUFF_FILE = re.compile(r"^== \[[^\]]*\] FAIL$")
#: The further lines of a sqlfluff violation's description, wrapped at the terminal's width under its ``| ``.
_SQLFLUFF_WRAPPED = re.compile(r"^\| \S")
#: rustc's error without a code (``error: expected one of ...``): a compiler's diagnostic where the next line says where
#: (`` --> src/main.rs:3:20``), unlike its "error: aborting due to ..." and cargo's "error: could not compile ...".
_RUSTC_ERROR = re.compile(r"^error: ")
#: npm's error report (``npm error`` since npm 10, ``npm ERR!`` before), its first line that is none of its fields
#: (``code E404``, ``errno``, ``syscall``, ``path``, ...) nor where its log is: "404 Not Found - GET ...", "Missing
#: script: ...", "ERESOLVE unable to resolve dependency tree", "Lifecycle script `build` failed with error:".
_NPM_ERROR = re.compile(r"^npm (?:error|ERR!) (?!(?:code|errno|syscall|path|workspace|location|command|signal|cwd)\b"
                        r"|A complete log of this run|Log files were not written)\S")
#: GNU make's progress lines, printed for ``make -C <dir>``, ``-w`` and every recursive make around what the make in
#: that directory printed: where it was, never what went wrong.
_MAKE_DIRECTORY = re.compile(r"^[^\s:]+: (?:Entering|Leaving) directory ")
#: A test runner's tally of a failed run: ExUnit's and RSpec's ``5 tests, 4 failures``, Jest's ``Tests: 4 failed``
#: (the lines before it are the tests' own output, an HTML page, a log).
_TEST_TALLY = re.compile(r"^(?:\d+ (?:tests?|examples?|specs?|doctests?), .*\b[1-9]\d* (?:failures?|failed|errors?)\b"
                         r"|Tests:\s+[1-9]\d* failed\b)")
#: pydantic's ValidationError (v1 and v2): "N validation error(s) for <Model>", then per error the field's location
#: (``payment_id``, ``items.0.name``, v1's ``items -> 0``; none for the model's own check) and, under it, the message
#: with its type (v2: ``Field required [type=missing, input_value=...]``, v1: ``field required (type=value_error.missing)``).
_VALIDATION_HEADER = re.compile(r"\b\d+ validation errors? for \S.*$")
_VALIDATION_MESSAGE = re.compile(r"^(.+?)\s+[\[(]type=\w[\w.]*[,;\])]")
#: A line mentioning an error; a code atom or symbol (Elixir's and Erlang's ``{:error, reason}``, Ruby's ``:error``)
#: is a value the output printed, not a statement that something failed.
_ERRORISH = re.compile(
    r"(?<![:{])\b(error|fatal|failed|failure|not found|no such file|cannot|can't|denied|invalid)\b", re.I
)
#: A line whose last word, an error's, labels what the next line says: astroid's ``Failed to import module x with
#: error:`` over ``No module named x.``, a script's ``The error is:``, ``Error output:`` (DEC32). A label of anything
#: else (``Expected:``, ``Output:``, a heading ``Testing with invalid data:``, a code line ``with
#: np.errstate(invalid='ignore'):``) is not joined: the line under it is no message of an error.
_ERROR_LABEL = re.compile(r"\b(?:error|failure|exception)(?: message| output)?:$", re.I)
#: A closing line that points back at the errors said above it (GNU tar's ``tar: Exiting with failure status due to
#: previous errors``): no line mentioning an error in its own right. Searched on its own, once a line, as a lookahead
#: in ``_ERRORISH`` would rescan the rest of the line at every word of it.
_PREVIOUS_ERRORS = re.compile(r"\bdue to previous errors\b", re.I)


#: A PowerShell error record, each line wrapped at the console's width: ``<command> : <message>``, where
#: it happened (``At line:1 char:1``, or a script's path and ``char:13``), the ``+ ...`` lines echoing the
#: command, then ``+ CategoryInfo : ...`` and ``+ FullyQualifiedErrorId : ...``.
_PS_FIELD = re.compile(r"^\+ (?:CategoryInfo|FullyQualifiedErrorId)\s*:")
_PS_HEADER = re.compile(r"^(\S.*?) :(?: (.+))?$")
_PS_METHOD = re.compile(r'^Exception (?:calling|setting|getting) "')
_CMDLET = re.compile(r"^[A-Z][a-z]+-[A-Z][A-Za-z]+$")  # Get-ChildItem, also when the command echoed is its alias (dir)


#: PowerShell 7's error view (ConciseView) of a script's error: ``<command>:``, ``Line |``, the line quoted as ``  2 |
#: <code>``, ``~~~`` under the failing part, then the message, each of its lines behind a ``| `` gutter.
_PS7_GUTTER = re.compile(r"^\|\s+")
_PS7_QUOTED = re.compile(r"^(?:\d+ )?\|(?:\s|$)")  # a line of the view under ``Line |``, gutter stripped of its indent
_PS7_MARKS = re.compile(r"^\|\s*~+$")
#: PowerShell 7's ConciseView of an error at the prompt, on one line: a command not found (``foo: The term 'foo' is not
#: recognized as a name of a cmdlet, function, script file, or executable program.``) or a cmdlet's (``Remove-Item:
#: Cannot find path 'x' because it does not exist.``). A cmdlet's counts only with one of PowerShell's own sentences
#: naming what it could not use (a path, a parameter, an argument, a process), quoted: ``Name-Name: value`` is also
#: an HTTP header's shape (``Content-Type: text/html``, ``Set-Cookie: ...``), a commit trailer's, package metadata's,
#: which a successful ``curl -I``, ``git log`` or ``pip show`` ends on.
_PS7_ONE_LINE = re.compile(
    r"^(?:\S+: The term '.+' is not recognized as a name of a cmdlet\b|[A-Z][a-z]+-[A-Z][A-Za-z]+: (?:Cannot find "
    r"(?:path|a process with the name|any service with service name) |A (?:positional )?parameter cannot be "
    r"found that (?:matches parameter name|accepts argument) |Cannot bind (?:argument to )?parameter |Access to the "
    r"path |Could not find (?:a part of the path|file) |Cannot validate argument on parameter )['\"].*\.$)")
#: The sentence PowerShell 7 prints under a command not found's, out of its view's gutter.
_PS7_SPELLING = re.compile(r"^Check the spelling of the name, or if a path was included, verify that the path is "
                           r"correct and try again\.$")


def _powershell_error(lines: list[str], raw: list[str]) -> tuple[str, int] | None:
    """(message, index of its record's last line) of the last PowerShell error record in ``lines`` (stripped; ``raw``:
    the same lines as printed, whose indent tells the console's wrap of a field from the next command's output).

    The message is the record's ``<command> : <message>`` line (the command a cmdlet or one the record
    echoes under ``At``: an output line such as ``Version : 5.1`` is no header), else the message under
    the ``+ ~`` marks (a parse error), else (an exception thrown with no message line) the category,
    unwrapped. None without a record, and for a native program's stderr (``NativeCommandError``: its
    first line made a record; the rest of it, a Python traceback say, follows and says more)."""
    fields = [i for i, line in enumerate(lines) if _PS_FIELD.match(line)]
    if not fields or not lines[fields[-1]].startswith("+ FullyQualifiedErrorId") \
            or "NativeCommandError" in "".join(lines[fields[-1]:fields[-1] + 2]):
        return None
    last = fields[-1]
    category = next((f for f in reversed(fields) if last - 4 <= f <= last and lines[f].startswith("+ CategoryInfo")),
                    None)
    first = category if category is not None else last
    previous = max((f for f in fields if f < first), default=-1)  # the end of the record before this one
    wrap = last + 1 < len(lines) and " " not in lines[last + 1] and not lines[last + 1].startswith("+") \
        and raw[last + 1][:1].isspace()  # the console indents a wrapped field ("   nCommand"); `node -v`'s v20 is not
    end = last + 1 if wrap else last  # the id's wrapped tail ("stCommand")
    at = next((i for i in range(first - 1, previous, -1) if lines[i].startswith("At ")
               and "char:" in " ".join(lines[i:i + 2])), None)
    if at is not None:
        echoed = " ".join(line for line in lines[at + 1:first] if line.startswith("+"))
        for i in range(at - 1, max(previous, at - 50), -1):  # a message may run over many lines
            if _PS_METHOD.match(lines[i]):  # a .NET method's exception, which has no command
                return short(lines[i]), end
            header = _PS_HEADER.match(lines[i])
            command = header.group(1) if header else ""
            if header and (_CMDLET.match(command) or re.split(r"[\\/]", command)[-1] in echoed):
                message = " ".join([header.group(2) or "", *lines[i + 1:at]]).strip()  # unwrapped
                return short(f"{command} : {message}".rstrip(" :"), keep="head"), end
    if category is None:
        return None
    below = list(itertools.takewhile(lambda line: not line.startswith("+"), reversed(lines[previous + 1:category])))
    if below and category - len(below) > previous + 1 and not below[-1].startswith("At "):
        return short(below[-1]), end  # a parse error's message, under the ``+ ~`` line marking where
    wrapped = [lines[category]] + list(itertools.takewhile(lambda line: not line.startswith("+"),
                                                           lines[category + 1:last]))
    return short("".join(wrapped).removeprefix("+ ").replace("CategoryInfo", "", 1).lstrip(" :")), end


def _powershell_ended(raw: list[str]) -> str | None:
    """The message of the PowerShell error an output (its non-blank lines, ``raw``) ends on: a record
    (:func:`_powershell_error`: ``+ FullyQualifiedErrorId : ...`` its last line; not a native program's stderr,
    ``NativeCommandError``, which a program that succeeds writes too), PowerShell 7's view of a script's error (the
    ``| `` gutter under ``Line |`` to the end: ``cmake: The term 'cmake' is not recognized ...``), or its one-line view
    of an error at the prompt (``_PS7_ONE_LINE``). PowerShell prints them only for an error (a cmdlet's error that
    let it go on sets ``$?`` false too); output after one (``cd x; npm test``) says how the command ended instead."""
    lines = [line.strip() for line in raw]
    if (record := _powershell_error(lines, raw)) and record[1] == len(lines) - 1:
        return record[0]
    end = len(lines)  # the view's further lines out of its gutter: the spelling sentence, a position's ``+ `` lines
    while end > 1 and (_PS7_SPELLING.match(lines[end - 1]) or lines[end - 1].startswith("+ ")):
        end -= 1
    if "Line |" in lines[:end]:
        at = end - 1 - lines[end - 1::-1].index("Line |")
        view = lines[at + 1:end]
        marks = max((n for n, line in enumerate(view) if _PS7_MARKS.match(line)), default=None)
        if marks is not None and marks + 1 < len(view) and all(_PS7_QUOTED.match(line) for line in view):
            message = " ".join(_PS7_GUTTER.sub("", line) for line in view[marks + 1:])
            command = lines[at - 1].split(": ", 1)[0].rstrip(":") if at else ""
            return short(f"{command}: {message}" if command else message, keep="head")
    said = lines[-2] if len(lines) > 1 and _PS7_SPELLING.match(lines[-1]) else lines[-1] if lines else ""
    return short(said, keep="head") if _PS7_ONE_LINE.match(said) else None


def decisive_line(output: str, *, last_line: bool = True) -> str | None:
    """The line of a failed command's output most likely to say what went wrong.

    Preference: the PowerShell error the output ends on (:func:`_powershell_ended`, as :func:`ended_failing` reads it:
    a record, PowerShell 7's ``Line |`` view or its one-line form), then the message of the last PowerShell error
    record, unless an exception line
    follows the record (its lines are wrapped at the console's width, so a fragment such as
    ``oundException`` would pass for one), then the last exception line (``TypeError: ...``, or the line ending a
    Python traceback whatever its class is called: ``botocore.errorfactory.NoSuchBucket: ...``) or pytest's summary
    line of a failed test whose message it kept whole (``FAILED t.py::test_add - assert 5 == 4``: the test and its
    error), whichever comes last,
    then the last line naming one (``Error executing x: TypeError: ...``), then the last pydantic
    ValidationError printed alone (``1 validation error for Payment``), then the first compiler
    diagnostic of an error (``f.c:3:1: error: ...``, ``error[E0425]: ...``), then a tool's own error
    line (``error: ...``, ``Error: ...``, ``错误: ...``, make's ``make: *** ...  Stop.``, apt's ``E: ...``, ``CMake
    Error at ...:``, git's ``The following paths are ignored ...:``), then a test
    runner's tally (``5 tests, 4 failures``), then npm's first error line that says more than a field
    of the report (``npm error Missing script: "build"``), then pytest's last summary line of a failed test, its
    message cut or left out (it still names the test), then the last line mentioning an error (not tar's closing
    ``... due to previous errors``; pytest's tally ``1 failed, 1 passed in 0.03s`` is one),
    then (unless ``last_line`` is false: output known to hold no message) the last non-empty line
    that is not make's "Entering/Leaving directory". A line the console wrapped inside a
    parenthesis gets its end back, a tool's error label its message below (see ``_unwrapped``); an exception's class
    alone, its message's
    first line below it (``AssertionError: Arrays are not equal``: see ``_BARE_EXC``); a
    ValidationError's header, its first error's field and message (see ``with_validation_error``).
    """
    every = output.splitlines()
    rows = [n for n, ln in enumerate(every) if ln.strip()]  # where each non-blank line is in ``every``
    raw = [every[n] for n in rows]
    lines = [_PYTEST_COLLECTING.sub("", ln.strip()) for ln in raw]
    tested, inside = _tap_failures(raw)  # TAP's failed tests with why, and their YAML blocks' rows: no line of its own
    if said := _powershell_ended([strip_terminal_codes(line) for line in raw]):  # PowerShell's error ends it
        return said
    raised = _traceback_ends(raw, rows)
    if record := _powershell_error(lines, raw):
        message, end = record
        lines = lines[end + 1:]  # what follows the record: an exception line there says more
        raised = {at - end - 1: line for at, line in raised.items() if at > end}
        inside = {at - end - 1 for at in inside if at > end}
        tested = {at - end - 1: line for at, line in tested.items() if at > end}
        if not raised and not any(_EXC_LINE.search(line) or _EXC_ANYWHERE.search(line) for line in lines):
            return message
    kept = raw[len(raw) - len(lines):]  # the rows still read: all, or those after a PowerShell record
    emptied = {at for at, line in enumerate(kept) if line.endswith(": ")}  # Python's ``<class>: `` of a blank message
    indented = {at for at, line in enumerate(kept) if line[:1].isspace()}
    lines = [raised.get(at) or tested.get(at, line) for at, line in enumerate(lines)]
    for find, first in _searches(raised, indented, tested):
        for at in range(len(lines)) if first else range(len(lines) - 1, -1, -1):
            if at not in inside and (found := find(lines, at)):
                return _short_keeping(with_validation_error(lines, at, _unwrapped(lines, at, emptied)), found)
    said = [line for line in lines if not _MAKE_DIRECTORY.match(line)] or lines
    return short(said[-1]) if said and last_line else None


#: A last line only a failed command ends on, said behind the name or path of the program saying it: a program's own
#: ``...: No such file or directory`` (``cat: x: ...``, ``ls: cannot access 'x': ...``, ``bash: cd: x: ...``), the
#: shell's ``...: command not found`` (zsh's ``zsh: command not found: x``), an ``[Errno N]`` (negative for a DNS
#: failure) in Python's own complaint (``python3: can't open file 'x': [Errno 2] ...``) or an exception's line
#: (``FileNotFoundError: [Errno 2] ...``, ``socket.gaierror: [Errno -2] ...``). A log's line saying the same starts
#: with its time or level, grep's match with the file or line number (``17:2026-12-05 ... [Errno 111] ...``): it is
#: what a command printed, not why it failed.
_FAILED_LAST_LINE = re.compile(r"^(?P<program>(?:[\w.+-]*/)*[\w.+-]+): (?:.*: (?:command not found|No such file or "
                               r"directory)$|command not found: \S|.*\[Errno -?\d+\])")
#: pytest's last line for a session with failed tests or errors (``1 failed, 1 passed in 0.12s``, framed by ``=`` unless
#: ``-q``; ``failed`` comes first of the counts, ``error`` after the others): it exits 1 (2 on an interrupt).
_PYTEST_FAILED = re.compile(r"^(?:=+ )?(?:\d+ \w+, )*\d+ (?:failed|errors?)\b.* in \d+(?:\.\d+)?s\b.*?(?: =+)?$")
#: The shells, whose ``command not found`` may end any command's output.
_SHELLS = frozenset({"sh", "bash", "dash", "zsh", "ksh", "fish"})
#: A last line a tool prints as it fails, in words of its own rather than behind its name: git's and cargo's
#: ``fatal: ...`` / ``error: ...`` (git exits 128 / 1; words, not a number: a script's ``error: 2.1e-06`` is a
#: result), pip's ``ERROR: ...``, npm's report (``npm error ...``, ``npm ERR! ...`` before npm 10), GNU make's
#: ``make: *** [x] Error 1`` / ``*** No rule to make target``, the linker's ``collect2: error: ld returned 1 exit
#: status``, clang's ``N errors generated.``, gcc's ``compilation terminated.``, the checkers' tally (tsc's ``Found 1
#: error.`` / ``Found N errors in M files.``, mypy's ``Found N errors in M files (checked K source files)``, ruff's
#: ``Found N errors.``; not ruff's ``Found N errors (N fixed, 0 remaining).``, which ``--fix`` ends on as it
#: succeeds, exit 0), and Node's ``Node.js vX.Y.Z``, printed after an uncaught exception's stack only.
_FAILED_TAIL = re.compile(r"^(?:(?:fatal|error|ERROR): (?![-+]?\.?\d)\S|npm (?:error|ERR!)(?: |$)|"
                          r"make(?:\[\d+\])?: \*\*\* |collect2: error: |[1-9]\d* errors? generated\.$|"
                          r"compilation terminated\.$|Found [1-9]\d* error(?:s|\(s\))?\b(?!.* 0 remaining\)\.$)|"
                          r"Node\.js v\d+\.\d+\.\d+$)")
#: git's own last words of failure where git only prints (``git log``, ``git show REV:file``), whose commit messages
#: and file text are its output too, unindented in ``--format=%s`` or a file (a subject or a line may start
#: ``error: ``): ``fatal: ...`` (not a git repository, an unknown revision or path: git exits 128), and the few
#: ``error: ...`` of its own such a git prints (an option it does not know or that lacks a value, an object it cannot
#: read).
_GIT_FAILED = re.compile(r"fatal: \S|error: (?:unknown (?:option|switch) |(?:option|switch) `[^']+' requires a value|"
                         r"[Cc]ould not read |object file \S+ is empty)")
#: What git prints after its ``fatal:`` / ``error:``: its advice (``hint: ...``, after a rejected ``git push``), and
#: how to tell a revision from a path (after ``fatal: ambiguous argument 'x': unknown revision ...``).
_GIT_AFTERWORDS = re.compile(r"^hint:(?: |$)|^Use '--' to separate paths from revisions, like this:$|"
                             r"^'git <command> \[<revision>\.\.\.\] -- \[<file>\.\.\.\]'$")
#: A compiler's diagnostic line of any kind (gcc's and clang's ``x.c:1:25: note: ...`` follow its errors): where the
#: last of them is among an output's last lines (its source line and caret after it), the compiler ended on them.
#: GNU make's line for a recipe's failure it ignored (``-i``, a recipe line starting ``-``): it goes on, exit 0.
_MAKE_IGNORED = re.compile(r"^make(?:\[\d+\])?: \[.*\] Error \d+ \(ignored\)$")
_DIAGNOSTIC_ANY = re.compile(r"^[^\s:()]*\.\w+:\d+(?::\d+)?: (?:fatal error|error|warning|note): ")


#: A JavaScript test runner's count of failed tests or suites in the summary it ends on (and exits 1 after): Jest's
#: ``Tests: 1 failed, 1 passed, 2 total`` or, where a suite failed to run and no test did, ``Test Suites: 1 failed``;
#: Vitest's ``Tests  1 failed | 1 passed (2)`` / ``Test Files  1 failed (1)``, the TAP tally of ``node --test`` (``#
#: fail 1``) and tape's (``# fail  1``); ``npm test`` running them adds nothing after it (npm 10+). And the other
#: runners' closing tallies of the same kind: bun's `` 1 fail`` (its ``expect() calls`` and ``Ran N tests across M
#: files.`` after it) and `` 1 error`` under its `` N pass`` / `` N fail`` (``_BUN_ERRORS``), RSpec's ``3 examples, 1
#: failure`` or, where a spec file did not load, ``0 examples, 0 failures,
#: 1 error occurred outside of examples`` (its ``Failed examples:`` rerun list after it), ``dotnet
#: test``'s ``Failed!  - Failed:     1, Passed: ...`` (.NET 5+ vstest), ``Test Run Failed.`` (its counts after it, .NET
#: Core 3), Microsoft.Testing.Platform's ``Test run summary: Failed!`` (its ``total:`` / ``failed:`` ... after it), and
#: PHPUnit's ``Tests: 2, Assertions: 2, Failures: 1.`` (``Errors: 1``), under its ``FAILURES!`` / ``ERRORS!``.
_RUNNER_FAILED = re.compile(r"^(?:Test Suites:\s+|Tests:\s+|Test Files\s+|Tests\s+|# fail\s+)[1-9]\d*(?: failed\b|$)|"
                            r"^[1-9]\d* fail$|^\d+ examples?, (?:[1-9]\d* failures?\b|"
                            r"\d+ failures?, [1-9]\d* errors? occurred outside of examples$)|"
                            r"^Failed!\s+-\s+Failed:\s+[1-9]|"
                            r"^Test Run Failed\.$|^Test run summary: Failed!|"
                            r"^Tests: \d+, Assertions: \d+(?:, \w+: \d+)*?, (?:Errors|Failures): [1-9]")
#: Microsoft.Testing.Platform's line of a failed test (``failed Tests.Calc.Adds (33ms)``), its message under it.
_MTP_TEST_FAILED = re.compile(r"^failed \S.* \([\d.]+m?s\)$")
#: bun 1.x's count of errors thrown between tests (``# Unhandled error between tests``), which fail the run (exit 1)
#: where every test passed: `` 2 pass``, `` 0 fail``, `` 1 error``. Bun's only where its `` N pass`` and `` N fail``
#: lines come just before it (:func:`_bun_errors`): a bare ``12 error`` that ends an output is anyone's line. Bun
#: prints its other counts between those two (``test_command.zig``): `` 1 skip`` or `` 3 filtered out``, `` 1 todo``.
_BUN_ERRORS = re.compile(r"^[1-9]\d* errors?$")
_BUN_PASS = re.compile(r"^\d+ pass$")
_BUN_FAIL = re.compile(r"^\d+ fail$")
_BUN_BETWEEN = re.compile(r"^\d+ (?:skip|filtered out|todo)$")
#: npm's notices, which ``npm test`` prints as it exits whatever the script did (``npm notice New minor version of npm
#: available! ...``).
_NPM_NOTICE = re.compile(r"^npm notice(?: |$)")
#: The lines of those summaries that may follow that count: Jest's ``Tests: 2 passed, 2 total`` (under a failed
#: suite's count), ``Snapshots:`` / ``Time:`` / ``Ran all test suites.``, Vitest's ``Tests  2 passed (2)``, ``Start
#: at`` / ``Duration``, TAP's other counts (``# cancelled 0`` ... ``# duration_ms 551.8``) and its plan, which
#: Mocha's TAP reporter prints last (``1..2``); npm's notices, and pnpm's
#: closing word on the failed script (``[ELIFECYCLE] Test failed. See above for more details.``); bun's
#: ``1000 expect() calls`` and ``Ran 1001 tests across 2 files.``, RSpec's
#: rerun list (``Failed examples:``, ``rspec ./x_spec.rb:7 # ...``, ``Randomized with seed 1234``) and SimpleCov's line
#: after it (``Coverage report generated for RSpec to /app/coverage. 120 / 130 LOC (92.31%) covered.``; 0.22's
#: ``... to /app/coverage.`` and ``Line Coverage: 98.27% (910 / 926)``), vstest's counts (``Total tests: 8``,
#: ``Failed: 3``, ``Total time: 1.3 Seconds``),
#: Microsoft.Testing.Platform's (``total: 5``, ``failed: 1``, ``duration: 705ms``, a module's ``X.dll (net9.0|x64) ...``).
_RUNNER_SUMMARY = re.compile(r"^(?:Snapshots:|Time:|Ran all test suites\b|Start at\s|Duration\s|Tests:\s.*\btotal$|"
                             r"Tests\s.*\(\d+\)$|# (?:cancelled|skipped|todo|duration_ms) [\d.]+$|1\.\.\d+$|"
                             rf"\[?ELIFECYCLE\]?\s+Test failed\.)|{_NPM_NOTICE.pattern}|"
                             r"^\d+ (?:expect\(\) calls|snapshots?\b.*)$|"
                             r"^Coverage report generated for \S.* to \S|"
                             r"^(?:Line|Branch) Coverage: [\d.]+% \(\d+ / \d+\)$|"
                             r"^Ran \d+ tests? across \d+ files?\.(?: \[[\d.]+m?s\])?$|"
                             r"^Failed examples:$|^rspec \S+ # |^Randomized with seed \d+$|"
                             r"^(?:Total tests|Passed|Failed|Skipped|Not Run|Total time): [\d.]+(?: \w+)?$|"
                             r"^(?:total|failed|succeeded|skipped|error|duration): \S.*$|^\S.*\.dll \(.*\)(?: .*)?$")


#: Mocha's count of failed tests (``  1 failing``, under ``  1 passing (13ms)``), after which it reports each failure
#: (``  1) math``, the assertion, the stack) and exits with their number: its output ends on the last one's stack
#: frame (``_JS_FRAME``), the count and the first report's ``1)`` before it.
_MOCHA_FAILING = re.compile(r"^\s+[1-9]\d* failing$")
_MOCHA_REPORT = re.compile(r"^\s+1\) \S")
_JS_FRAME = re.compile(r"^\s+at \S.*(?:\)|:\d+:\d+)$")
#: The line a JavaScript error is reported by, above its stack (``_JS_FRAME``): Node's ``Error: x`` / ``TypeError: x``
#: / ``Error [ERR_X]: x``, Bun's ``error: x`` (under its excerpt of the source).
_JS_ERROR = re.compile(r"^\s*(?:error|(?:[A-Z]\w*)?Error)(?: \[\w+\])?: \S")
#: The head of a stack that reports no error: ``console.trace``'s ``Trace: x``, Node's ``(node:12) Warning: x``.
_JS_NO_ERROR = re.compile(r"^(?:Trace: |\(node:\d+\) (?:\[\w+\] )?\w*Warning: )")
#: TAP's line of a failed test, matched on the stripped line (a subtest's is indented: TAP 14, ``node --test``; ``
#: - `` before its name is optional, tape writes none), not one with a ``# TODO`` or ``# SKIP`` directive (the TAP
#: spec: no failure), and the top-level key of the YAML block under it (``---`` to ``...``) that says why: ``node
#: --test``'s ``error:`` (``|-``: the message on the lines under it), the TAP 13 spec's ``message:`` (its ``severity:
#: fail`` after it), as ESLint's ``-f tap`` writes a file's first problem (``message: '''addOne'' is defined but never
#: used.'``, ``severity: error``, its other problems listed under ``messages:``). ``node --test``'s parent of a failed
#: subtest says only that (``failureType: 'subtestsFailed'``, ``error: '1 subtest failed'``): its subtest says why.
#: A block ends at most at the next test line, so reading each is linear in the output.
_TAP_NOT_OK = re.compile(r"^not ok \d+\b(?! .*\s#\s*(?:TODO|SKIP)\b)(?: -)?(?: |$)")
_TAP_SAID = re.compile(r"^(?:error|message): (.*)$")
_TAP_SUBTESTS_FAILED = re.compile(r"^failureType: '?subtestsFailed'?$")
_TAP_TEST = re.compile(r"^(?:not )?ok \d+\b")
#: A YAML block scalar's indicator (``|``, ``|-``, ``>+``): the value is on the lines under its key, indented deeper.
_YAML_BLOCK_SCALAR = re.compile(r"[|>][-+]?")
#: YAML's quotes, each with how a quote is escaped inside it (``''`` in single quotes is one ``'``); ``node --test``
#: puts a message holding both ``'`` and ``"`` in backticks (``error: `it's "quoted" here```), nothing escaped.
_YAML_QUOTES = {"'": "''", '"': '\\"', "`": None}


def _runner_failed(raw: list[str]) -> str | None:
    """The failure a JavaScript test runner's closing summary counts (``_RUNNER_FAILED``), where only the rest of
    that summary follows it (``_RUNNER_SUMMARY``): the output's end, not a log's line in its middle. Said as the
    output's decisive line (Jest's tally is one), of TAP (``node --test``) as its last failed test and that test's
    error message (``not ok 1 - adds: Expected values to be strictly equal: 2 !== 3``: :func:`_tap_failure`); and
    Mocha's report of its failures, which it ends on (:func:`_mocha_failure`)."""
    end = len(raw)
    while end > 1 and _NPM_NOTICE.match(raw[end - 1].strip()):  # ``npm test``'s notices after Mocha's report
        end -= 1
    if _JS_FRAME.match(raw[end - 1]):
        return _mocha_failure(raw[:end])
    tail = raw[-16:]  # a summary's lines after the count (TAP's 5, Jest's 3) and npm's notices
    for at in range(len(tail) - 1, -1, -1):
        line = tail[at]
        if found := _RUNNER_FAILED.match(line.strip()) or _bun_errors(tail[:at + 1]):
            if found.group(0).startswith("Test run summary:"):  # Microsoft.Testing.Platform: its first failed test
                return next((short(ln.strip()) for ln in raw if _MTP_TEST_FAILED.match(ln)), None) or short(line.strip())
            if found.group(0).startswith(("Test Run Failed", "Failed!")) and (said := _vstest_failure(raw)):
                return said
            if not found.group(0).startswith("# fail"):
                said = decisive_line("\n".join(raw), last_line=False)
                return _with_indented_message(raw, said) if said else short(line.strip())
            return _tap_failure(raw) or short(line.strip())
        if not _RUNNER_SUMMARY.match(line.strip()):
            return None
    return None


def _bun_errors(lines: list[str]) -> re.Match[str] | None:
    """bun's count of errors between tests where ``lines`` end on it, bun's fail count just before it and its pass
    count above that, only bun's other counts (``_BUN_BETWEEN``: at most its skip, filtered-out and todo) between."""
    *above, errors = ["", *lines]
    above = [line.strip() for line in reversed(above)]
    if not _BUN_FAIL.match(above[0]):
        return None
    between = next((at for at, line in enumerate(above[1:5], 1) if not _BUN_BETWEEN.match(line)), None)
    return _BUN_ERRORS.match(errors.strip()) if between and _BUN_PASS.match(above[between]) else None


#: ``go test``'s last line where a test failed or a package did not build: ``FAIL`` (after several packages' lines,
#: the failed one's ``FAIL\tpkg\t0.01s`` among them) or that line itself (one package), ``FAIL\tpkg [build failed]``;
#: it exits 1. A test's own ``--- FAIL: TestX (0.00s)`` line, its ``t.Errorf`` message indented under it (above it
#: with ``-v``, under its ``=== RUN``).
_GO_FAIL_END = re.compile(r"^FAIL(?:\t\S+(?:\t[\d.]+s| \[[\w ]+ failed\])?)?$")
_GO_PACKAGE_FAILED = re.compile(r"^FAIL\t\S")
_GO_TEST_FAILED = re.compile(r"^--- FAIL: \S")
#: Maven's last line of a failed build, its link to the wiki page of the failure's kind (``[ERROR] [Help 1]
#: http://cwiki.apache.org/confluence/display/MAVEN/MojoFailureException``): printed after ``BUILD FAILURE`` and
#: the goal that failed (``There are test failures.``), with ``-q`` too; it exits 1.
_MAVEN_FAILED_END = re.compile(r"^\[ERROR\] (?:\[Help 1\] )?https?://cwiki\.apache\.org/")
#: What Maven prints after that link where a module of several failed (``MavenCli.logBuildResumeHint``): a blank
#: ``[ERROR]``, ``After correcting the problems, you can resume the build with the command`` and ``  mvn <args> -rf
#: :core`` (``<goals>`` before Maven 3.6).
_MAVEN_AFTER = re.compile(r"^\[ERROR\](?:\s*|\s+After correcting the problems, you can resume the build with the "
                          r"command|\s+mvn \S.*)$")
#: Gradle's closing word on a failed build (``BUILD FAILED in 3s``; before Gradle 4, ``BUILD FAILED`` alone) and
#: what it may print under it: the count of tasks (before Gradle 4, ``Total time: 12.361 secs``), the configuration
#: cache's word (``Configuration cache entry stored.`` / ``reused.`` / ``discarded with 2 problems.``), and, Gradle 9,
#: its deprecation notice (``Deprecated Gradle features were used in this build, making it incompatible with Gradle
#: 10.``, ``You can use '--warning-mode all' ...``, ``For more on this, please refer to https://docs.gradle.org/...``).
_GRADLE_FAILED = re.compile(r"^BUILD FAILED(?: in \S.*)?$")
_GRADLE_TASKS = re.compile(r"^\d+ actionable tasks?: |^Total time: [\d.]+ secs$|^Configuration cache entry \w+\b.*\.$|"
                           r"^Deprecated Gradle features were used in this build\b|^You can use '--warning-mode all' |"
                           r"^For more on this, please refer to https://docs\.gradle\.org/\S+ in the Gradle "
                           r"documentation\.$")
#: Gradle's report of a failure, after the build's own output (a compiler's errors, a test's exception): its
#: ``FAILURE: Build failed with an exception.`` and ``* What went wrong:`` over what failed (``Execution failed for
#: task ':compileJava'.``), which says it where the output above says nothing (Gradle 9 prints ``BUILD FAILED`` under
#: it, which is no message).
_GRADLE_WRONG = re.compile(r"^\* What went wrong:$")
_GRADLE_FAILURE = re.compile(r"^FAILURE: Build (?:failed with an exception|completed with \d+ failures?)\.$")
#: Yarn 1's closing words on a script that failed (``yarn test``, ``yarn build``): ``error Command failed with exit
#: code 1.`` on stderr and ``info Visit https://yarnpkg.com/en/docs/cli/run for documentation about this command.`` on
#: stdout, in that order or the other (two streams), or the second alone where stderr was not kept; yarn prints them
#: only then.
_YARN_FAILED = re.compile(r"^error Command failed with exit code [1-9]\d*\.$")
_YARN_VISIT = re.compile(r"^info Visit https://yarnpkg\.com/\S+ for documentation about this command\.$")
#: CTest's last words where a test failed (``Errors while running CTest``; 3.2x then says where the log is and how to
#: rerun the failed tests), and its tally above them (``50% tests passed, 1 tests failed out of 2``); it exits 8.
_CTEST_FAILED = re.compile(r"^Errors while running CTest$")
_CTEST_AFTER = re.compile(r"^Output from these tests are in: |^Use \"--rerun-failed --output-on-failure\" ")
_CTEST_TALLY = re.compile(r"^\d+% tests passed, [1-9]\d* tests? failed out of \d+$")


def _build_failed(raw: list[str]) -> str | None:
    """The failure a build tool or test runner that prints no JavaScript-style summary ends on (its exit code lost):
    ``go test``'s ``FAIL`` (:func:`_go_failure`), CTest's ``Errors while running CTest`` (said by its tally), Maven's
    ``[Help 1]`` link, Gradle's ``BUILD FAILED in 3s``, each
    said by the output's decisive line (an assertion's exception, a compiler's error, Gradle's tally ``2 tests
    completed, 1 failed``); Yarn 1's words on a failed script, said by what the script's own output ends on
    (:func:`ended_failing`: Jest's tally, tsc's ``Found 1 error.``), else by Yarn's."""
    text = "\n".join(raw)
    last = raw[-1].strip()
    if _YARN_VISIT.match(last) or _YARN_FAILED.match(last):
        script = [line for line in raw if not (_YARN_VISIT.match(line.strip()) or _YARN_FAILED.match(line.strip()))]
        said = next((line.strip() for line in raw if _YARN_FAILED.match(line.strip())), None) \
            or next((line.strip() for line in reversed(script) if line.startswith("error ")), "yarn: the script failed")
        return (ended_failing("\n".join(script)) if script else None) or short(said)
    if _GO_FAIL_END.match(last) and any(_GO_TEST_FAILED.match(line) or _GO_PACKAGE_FAILED.match(line) for line in raw):
        return _go_failure(raw) or decisive_line(text, last_line=False) or short(last)
    end = len(raw)
    while end > 1 and _CTEST_AFTER.match(raw[end - 1].strip()):
        end -= 1
    if _CTEST_FAILED.match(raw[end - 1].strip()):
        return next((short(line.strip()) for line in reversed(raw) if _CTEST_TALLY.match(line.strip())), short(last))
    end = len(raw)
    while end > 1 and _MAVEN_AFTER.match(raw[end - 1].strip()):
        end -= 1
    if _MAVEN_FAILED_END.match(raw[end - 1].strip()):
        return decisive_line(text, last_line=False) or short(raw[end - 1].strip())
    end = len(raw)
    while end > 1 and _GRADLE_TASKS.match(raw[end - 1].strip()):
        end -= 1
    if _GRADLE_FAILED.match(raw[end - 1].strip()):
        tally = next((line.strip() for line in reversed(raw) if re.match(r"\s*\d+ tests? completed, [1-9]\d* failed", line)),
                     None)
        at = next((n for n, line in enumerate(raw[:-1]) if _GRADLE_WRONG.match(line.strip())), None)
        wrong = raw[at + 1].strip() if at is not None else None
        before = [line for line in raw[:at] if not _GRADLE_FAILURE.match(line.strip())]  # the build's own output
        return short(tally or decisive_line("\n".join(before), last_line=False) or wrong or raw[end - 1].strip())
    return None


def _with_indented_message(raw: list[str], said: str) -> str:
    """``said`` and, where it is an exception's class alone (``_BARE_EXC``), the message RSpec prints indented under
    it (``NoMethodError:`` over ``  undefined method `=~' for ...``): a message on a line indented no further is none
    of its (a prompt, other output)."""
    if not _BARE_EXC.match(said):
        return said
    for at, line in enumerate(raw[:-1]):
        if line.strip() == said:
            below = raw[at + 1]
            if _indent(below) > _indent(line) and not below.lstrip().startswith("# "):
                return short(f"{said} {below.strip()}")
            break
    return said


def _vstest_failure(raw: list[str]) -> str | None:
    """vstest's first failed test (``  Failed Tests.CalcTests.Adds [5 ms]``; .NET Core 3's ``  X CalcTests.Adds
    [5ms]``) and its message, the line under its ``  Error Message:``: ``Failed Tests.CalcTests.Adds [5 ms]:
    Assert.Equal() Failure``, rather than the count ``Failed: 1`` that .NET Core 3's summary ends on."""
    at = next((n for n, line in enumerate(raw) if line.strip() == "Error Message:"), None)
    if at is None or at + 1 >= len(raw):
        return None
    message = raw[at + 1].strip()
    return short(f"{raw[at - 1].strip()}: {message}" if at else message)


def _go_failure(raw: list[str]) -> str | None:
    """``go test``'s first failed test (``--- FAIL: TestAdd (0.00s)``) with its message, the indented line under it
    (above it, under its ``=== RUN``, with ``-v``): ``--- FAIL: TestAdd (0.00s): a_test.go:7: Add(2, 2) = 0, want 4``."""
    at = next((n for n, line in enumerate(raw) if _GO_TEST_FAILED.match(line)), None)
    if at is None:
        return None
    said = raw[at].strip()
    for near in (at + 1, at - 1):
        if 0 <= near < len(raw) and raw[near][:1].isspace() and raw[near].strip() \
                and not raw[near].lstrip().startswith(("---", "===")):
            return short(f"{said}: {raw[near].strip()}")
    return short(said)


def _mocha_failure(raw: list[str]) -> str | None:
    """Of an output ending on a stack frame, Mocha's report of its failures (``_MOCHA_FAILING``, its first report
    next), said by its decisive line (the assertion's), else its count."""
    at = max((n for n, line in enumerate(raw) if _MOCHA_FAILING.match(line)), default=None)
    if at is None or at + 1 >= len(raw) or not _MOCHA_REPORT.match(raw[at + 1]):
        return None
    return decisive_line("\n".join(raw[at:])) or short(raw[at].strip())


def _js_error_ends(raw: list[str]) -> str | None:
    """The error an output ending on a JavaScript stack (``_JS_FRAME``) reports, as a Python traceback's last
    exception line does: the program died of it, or reported it as it gave up (``Error starting session:``, then
    Bun's excerpt, its ``error: Command failed: git clone ...``, the error's fields, the stack). Told by the stack's
    own head, the nearest line above the frames (within 30) that names an error (``_JS_ERROR``) or a stack that
    reports none (``_JS_NO_ERROR``: a ``console.trace`` under a logged ``error: ...`` tells nothing), said by the
    output's decisive line. A script that prints an expected error's stack last is read as failed, as one printing a
    caught Python traceback last is. Mocha's report, which ends so too, is :func:`_mocha_failure`'s."""
    end = len(raw)
    while end and _JS_FRAME.match(raw[end - 1]):
        end -= 1
    head = next((ln for ln in reversed(raw[max(end - 30, 0):end]) if _JS_ERROR.match(ln) or _JS_NO_ERROR.match(ln)),
                None)
    if end == len(raw) or head is None or _JS_NO_ERROR.match(head):
        return None
    return decisive_line("\n".join(raw)) or short(head.strip())


def _tap_failure(raw: list[str]) -> str | None:
    """TAP's last failed test that says why (:func:`_tap_failures`), else its last failed top-level test."""
    said, _ = _tap_failures(raw)
    if said:
        return short(said[max(said)])
    at = max((n for n, line in enumerate(raw) if _TAP_NOT_OK.match(line)), default=None)
    return None if at is None else short(raw[at].strip())


def _tap_failures(raw: list[str]) -> tuple[dict[int, str], set[int]]:
    """TAP's failed tests (``_TAP_NOT_OK``) in an output's non-blank lines ``raw``, each said by its row with why:
    its YAML block's ``message:`` / ``error:`` (:func:`_tap_value`: ``not ok 1 - adds: Expected values to be strictly
    equal: 2 !== 3``, ``not ok 1 - fullOfProblems.js: 'addOne' is defined but never used.``) or, with no block, the
    lines indented under it (Mocha's TAP12 reporter prints ``err.message`` there, then the stack); and the rows of
    those blocks, the test's details, which hold no error line of the output's own (node's ``error: |-``, ESLint's
    ``severity: error``, tape's ``stack:``). A parent that says only that its subtests failed is left out."""
    said: dict[int, str] = {}
    inside: set[int] = set()
    at = 0
    while at < len(raw):
        test = raw[at].strip()
        if not _TAP_NOT_OK.match(test):
            at += 1
            continue
        end, value = at + 1, ""
        if end < len(raw) and raw[end].strip() == "---":
            while end + 1 < len(raw) and raw[end + 1].strip() != "..." and not _TAP_TEST.match(raw[end + 1].strip()):
                end += 1
            value = _tap_value(raw[at + 2:end + 1])
            if end + 1 < len(raw) and raw[end + 1].strip() == "...":
                end += 1
            inside.update(range(at + 1, end + 1))
            end += 1
        elif end < len(raw) and not _JS_FRAME.match(raw[end]):
            value = _first_said(raw[end:end + 2], _indent(raw[at]))  # Mocha's TAP12: its message, no block
        if value is not None:
            said[at] = f"{test}: {value}" if value else test
        at = end
    return said, inside


def _tap_value(block: list[str]) -> str | None:
    """What a TAP YAML block's top-level ``message:`` / ``error:`` says (``_TAP_SAID``; "" where it has none), read
    as YAML quotes it (``_YAML_QUOTES``), a block scalar (``|-``) as :func:`_first_said`; None where the block says
    only that the test's subtests failed (``_TAP_SUBTESTS_FAILED``)."""
    key = min((_indent(line) for line in block), default=0)
    value = ""
    for n, line in enumerate(block):
        if _indent(line) != key:
            continue
        if _TAP_SUBTESTS_FAILED.match(line.strip()):
            return None
        if not value and (said := _TAP_SAID.match(line.strip())):
            value = said.group(1).strip()
            if _YAML_BLOCK_SCALAR.fullmatch(value):
                value = _first_said(block[n + 1:n + 3], key)
            elif len(value) > 1 and value[0] == value[-1] and value[0] in _YAML_QUOTES:
                escaped = _YAML_QUOTES[value[0]]
                value = value[1:-1].replace(escaped, escaped[-1]) if escaped else value[1:-1]
    return value


def _first_said(below: list[str], indent: int) -> str:
    """A message's first line among the (non-blank) lines ``below`` its key or test, indented deeper than ``indent``,
    with the next where it ends in a colon, as ``_unwrapped`` joins a label: node's ``Expected values to be strictly
    equal:`` over ``2 !== 3``; "" where none is indented deeper."""
    said = [line.strip() for line in itertools.takewhile(lambda line: _indent(line) > indent, below[:2])]
    return " ".join(said if said and said[0].endswith(":") else said[:1])


def _indent(line: str) -> int:
    """How far ``line`` is indented."""
    return len(line) - len(line.lstrip())


def ended_failing(output: str, printer: str | None = None) -> str | None:
    """The failure a command's output shows at its end, where no exit code was kept (converters that drop it:
    opencode's, openhands-sdk's; Gemini CLI's stream-json, which shows a command's output alone): its last line when
    that is one only a failed command ends on (``_FAILED_LAST_LINE``); a PowerShell error (:func:`_powershell_ended`:
    a record, PowerShell 7's ``Line |`` view, its one-line ``Get-Item: ...``); a failed pytest session's tally
    (``_PYTEST_FAILED``), a tool's own last words of failure (``_FAILED_TAIL``: git's ``fatal:``, npm's, make's
    ``***``, pip's ``ERROR:``, tsc's / mypy's ``Found 1 error``, Node's version line after a stack) or a compiler's
    error diagnostics (:func:`_compiler_failed`); a test runner's closing summary of failed tests
    (:func:`_runner_failed`: Jest, Vitest, Mocha, ``node --test`` and tape's TAP, bun, RSpec, PHPUnit, ``dotnet
    test``'s vstest and Microsoft.Testing.Platform), or a build tool's or runner's last words of failure
    (:func:`_build_failed`: ``go test``'s ``FAIL``, CTest's, Maven's ``[Help 1]`` link, Gradle's ``BUILD FAILED``,
    Yarn 1's on a failed script); each read as any failed output is (:func:`decisive_line`: pytest's summary line of
    the failed test, ``FAILED t.py::test_add - assert 5 == 4``, or an exception its report names, else the tally
    itself); a
    JavaScript error whose stack ends it (:func:`_js_error_ends`); or the exception line of a Python traceback that
    ends it (the program died of it). Only the end counts: a terminal
    screen keeps earlier commands' lines, and a line in the middle may be a file's or a log's text. A failed ``cargo
    test`` ends on its own ``error: test failed, to rerun pass ...`` (``_FAILED_TAIL``).

    ``printer``: the program of a command known only to print files or logs (``tail -n 5 app.log``, ``grep x app.log
    | tail``: ``_agent_cli.printing_program``), whose output ends on the file's last lines whatever they say (a logged
    traceback, a test log's tally): only that program's or the shell's own complaint tells (``tail: cannot open 'x'
    for reading: No such file or directory``; git's unindented ``fatal: ...``). None otherwise: no code, no other
    words tell.

    git's last words of failure count where only its advice follows them (``_GIT_AFTERWORDS``: the ``hint:`` lines
    after a rejected push, the usage after an unknown revision)."""
    every = strip_terminal_codes(output).splitlines()  # Maven ends even a piped run on its colour reset ``ESC[0m``
    rows = [n for n, ln in enumerate(every) if ln.strip()]
    raw = [every[n] for n in rows]
    if not raw:
        return None
    if said := _FAILED_LAST_LINE.search(raw[-1].strip()):
        program = said.group("program").rsplit("/", 1)[-1]
        return short(raw[-1].strip()) if printer is None or program in (printer, *_SHELLS) else None
    if printer in (None, "git") and (said := _git_failed(raw, printer)):  # git's own, unindented
        return said
    if printer is not None:
        return None
    if said := _powershell_ended(raw):
        return said
    if _PYTEST_FAILED.match(raw[-1].strip()) or _FAILED_TAIL.match(raw[-1].strip()) or _compiler_failed(raw):
        return decisive_line(output) or short(raw[-1].strip())
    if tally := _runner_failed(raw) or _build_failed(raw) or _js_error_ends(raw):
        return tally
    raised = _traceback_ends(raw, rows)
    last = max(raised, default=None)
    if last is not None and (last == len(raw) - 1 or raised[last] != raw[last].strip()
                             and last == len(raw) - 2):  # the exception line (and its message's first line) last
        return short(raised[last])
    return None


def _git_failed(raw: list[str], printer: str | None) -> str | None:
    """git's last words of failure (``_GIT_FAILED`` where git only prints, else ``fatal:`` / ``error:``) that an
    output (its non-blank lines) ends on, or ends on followed only by git's advice (``_GIT_AFTERWORDS``): ``error:
    failed to push some refs to 'x'`` before the ``hint:`` lines, ``fatal: ambiguous argument 'x'`` before the
    usage. Without a printer, a last line of those words alone is left to ``_FAILED_TAIL``."""
    end = len(raw)
    while end and _GIT_AFTERWORDS.match(raw[end - 1]):
        end -= 1
    if not end or printer is None and end == len(raw):
        return None
    said = _GIT_FAILED.match(raw[end - 1]) if printer else re.match(r"(?:fatal|error): \S", raw[end - 1])
    return short(raw[end - 1].strip()) if said else None


def _compiler_failed(raw: list[str]) -> bool:
    """Whether an output (its non-blank lines) ends on a compiler's diagnostics (the last one among its last 4 lines:
    gcc ends on ``note:`` and the source line with its caret) of which one is an error (``_DIAGNOSTIC``): a compiler
    run alone prints no tally (``gcc -o x x.c``). Not where make said after them that it ignored the failure
    (``make: [Makefile:2: all] Error 1 (ignored)``: ``make -i``, a ``-gcc ...`` recipe line), and went on."""
    last = max((n for n, line in enumerate(raw) if _DIAGNOSTIC_ANY.match(line)), default=None)
    return last is not None and last >= len(raw) - 4 and any(_DIAGNOSTIC.search(line) for line in raw[:last + 1]) \
        and not any(_MAKE_IGNORED.match(line) for line in raw[last + 1:])


def with_validation_error(lines: list[str], at: int, line: str | None = None) -> str:
    """``line`` (``lines[at]``, stripped), and where it is a pydantic ValidationError's header, ``: field: message``
    of the first error listed under it (``1 validation error for Payment: payment_id: Field required``): the header
    says neither what was wrong nor where, so every invalid call of a tool would read the same."""
    line = lines[at].strip() if line is None else line
    if not _VALIDATION_HEADER.search(line):
        return line
    below = [text.strip() for text in lines[at + 1:at + 3]]
    for n, text in enumerate(below):
        if message := _VALIDATION_MESSAGE.match(text):
            return ": ".join([line, *below[:n], message.group(1)])
    return line


Finder = Callable[[list[str], int], re.Match[str] | None]


def _searches(raised: dict[int, str], indented: Collection[int],
              tested: Collection[int]) -> tuple[tuple[Finder, bool], ...]:
    """What ``decisive_line`` looks for, best first: (finder of a match at ``lines[at]``, whether the first one wins
    rather than the last). ``raised``: the lines ending a Python traceback (``_traceback_ends``); ``indented``: those
    printed indented (a tool's that it prints at the margin is quoted there: ``_PATCH_ERROR``); ``tested``: TAP's
    failed tests (:func:`_tap_failures`), a test runner's own error lines."""
    def exception_line(lines: list[str], at: int) -> re.Match[str] | None:  # ending a traceback, whatever its name
        return _TRACEBACK_EXC.match(lines[at]) if at in raised else _EXC_LINE.search(lines[at])

    def line(pattern: re.Pattern[str]) -> Finder:
        return lambda lines, at: pattern.search(lines[at])

    def said_last(lines: list[str], at: int) -> re.Match[str] | None:  # of a summary line and an exception line
        return whole_summary(lines, at) or exception_line(lines, at)

    def tool_error(lines: list[str], at: int) -> re.Match[str] | None:
        return _TOOL_ERROR.search(lines[at]) or (None if at in indented else _PATCH_ERROR.match(lines[at])) \
            or (_TAP_NOT_OK.match(lines[at]) if at in tested else None)

    whole_summary = _pytest_summary(whole=True)
    return ((said_last, False), (line(_EXC_ANYWHERE), False),
            (_validation_header, False), (_diagnostics(), True), (tool_error, False), (line(_TEST_TALLY), False),
            (line(_NPM_ERROR), True), (_pytest_summary(whole=False), False), (_mentions_error, False))


def _mentions_error(lines: list[str], at: int) -> re.Match[str] | None:
    """A line mentioning an error (``_ERRORISH``), unless it only points back at those said above it
    (``_PREVIOUS_ERRORS``)."""
    return None if _PREVIOUS_ERRORS.search(lines[at]) else _ERRORISH.search(lines[at])


def _pytest_summary(*, whole: bool) -> Finder:
    """Finder of pytest's summary line of a failed test (``_PYTEST_SUMMARY``): with ``whole``, one whose message is
    whole (:func:`_said_whole`: ``FAILED t.py::test_add - AssertionError: 3 != 4``), which says the error its report's
    ``E`` line above it says and names the test too, so it ranks with the exception lines, the last of them winning
    (an exception raised after the session, ``pytest; python deploy.py``, is what failed the command; a log line
    shaped like a summary, ``ERROR app.py - retrying upload``, is not the traceback's exception below it); else any,
    cut (``...``) or bare, which still names the test where the session's tally (``1 failed, 1 passed in 0.03s``)
    only counts, so it ranks above the lines that merely mention a failure, the tally among them. A line whose
    message its test's report gives back (:func:`_pytest_reported`) is whole too."""
    reports: dict[str, tuple[int, str]] | None = None  # the output's pytest reports, read once, where a line needs them

    def find(lines: list[str], at: int) -> re.Match[str] | None:
        nonlocal reports
        found = _PYTEST_SUMMARY.match(lines[at])
        if not found or not _PYTEST_ID.search(found.group("id")):
            return None
        if not whole or _said_whole(found.group("message")):
            return found
        reports = _report_messages(lines) if reports is None else reports
        return found if _pytest_reported(lines, at, reports) else None
    return find


def _said_whole(message: str | None) -> bool:
    """Whether pytest's summary message (`` - <message>``) is its error's whole first line: not cut to the terminal's
    width (``...``), nor an exception's class alone (``AssertionError:``: its message starts on the next line, numpy's
    ``assert_allclose``), which only the report's ``E`` lines say in full."""
    return bool(message) and not message.endswith("...") and not _BARE_EXC.match(message.removeprefix(" - "))


def _validation_header(lines: list[str], at: int) -> re.Match[str] | None:
    """A pydantic ValidationError's header at ``lines[at]`` with an error listed under it (``str()`` of the error
    printed alone, which names no exception)."""
    found = _VALIDATION_HEADER.search(lines[at])
    return found if found and with_validation_error(lines, at) != lines[at] else None


def _diagnostics() -> Finder:
    """Finder of a compiler's diagnostic of an error at ``lines[at]`` (``_DIAGNOSTIC``, rustc's ``_RUSTC_ERROR`` over
    where, or a violation in sqlfluff's lint of a file: :func:`_sqlfluff_linted`, read once, where a line needs it)."""
    linted: set[int] | None = None

    def find(lines: list[str], at: int) -> re.Match[str] | None:
        nonlocal linted
        if found := _DIAGNOSTIC.search(lines[at]):
            return found
        if found := _SQLFLUFF_VIOLATION.match(lines[at]):
            linted = _sqlfluff_linted(lines) if linted is None else linted
            return found if at in linted else None
        return _RUSTC_ERROR.match(lines[at]) if lines[at + 1:at + 2] and lines[at + 1].startswith("--> ") else None
    return find


def _sqlfluff_linted(lines: list[str]) -> set[int]:
    """Indexes of the lines in sqlfluff's lint of a file: under its ``== [<file>] FAIL`` line, its violations
    (``_SQLFLUFF_VIOLATION``) and their descriptions' wrapped lines (``_SQLFLUFF_WRAPPED``), up to any other line."""
    linted: set[int] = set()
    block = False
    for n, line in enumerate(lines):
        block = bool(_SQLFLUFF_FILE.match(line)) or block and bool(
            _SQLFLUFF_VIOLATION.match(line) or _SQLFLUFF_WRAPPED.match(line))
        if block:
            linted.add(n)
    return linted


def _traceback_ends(raw: list[str], rows: list[int]) -> dict[int, str]:
    """{index in ``raw``: exception line} of each Python traceback in ``raw`` (an output's non-blank lines, unstripped;
    ``rows``: their indexes among all its lines), the class alone joined with its message's first line (see
    ``_with_message``).

    Python prints ``Traceback (most recent call last):``, each frame indented under it (``  File ...``, the code,
    its ``~~^^`` marks, ``[Previous line repeated ...]``), then, at the header's own indentation, the exception line;
    notes, a message's further lines and a chained exception's ``During handling ...`` follow it. A block whose
    indentation the dump lost (no indented frame) or that something interrupted ends no traceback here."""
    ends: dict[int, str] = {}
    for at, line in enumerate(raw):
        if not (header := _TRACEBACK.match(line)):
            continue
        margin = header.group(1).replace("+", "|")  # a group's frames and exception line are behind its ``| ``
        below = at + 1
        while below < len(raw) and raw[below].startswith(margin) and raw[below][len(margin):][:1].isspace():
            below += 1
        if at + 1 < below < len(raw) and raw[below].startswith(margin) \
                and _TRACEBACK_EXC.match(raw[below][len(margin):].rstrip()):
            ends[below] = _with_message(raw, rows, below, margin)
    return ends


def _with_message(raw: list[str], rows: list[int], at: int, margin: str) -> str:
    """The exception line ``raw[at]`` (behind ``margin``) and, where it is its class alone (``_BARE_EXC``: the message
    starts with a newline), the line right under it: the message's first line ("AssertionError: Arrays are not
    equal"). Not across a blank line (the message was blank: what follows is other output), nor a line that is no
    message (``_NO_MESSAGE``); only the first line, since nothing marks where a message ends and other output begins."""
    exception = raw[at][len(margin):].rstrip()
    below = at + 1
    if not _BARE_EXC.match(exception) or below >= len(raw) or rows[below] != rows[at] + 1 \
            or not raw[below].startswith(margin):
        return exception
    message = raw[below][len(margin):].strip()
    return exception if _NO_MESSAGE.match(message) else f"{exception} {message}"


def _unwrapped(lines: list[str], at: int, emptied: Collection[int] = ()) -> str:
    """``lines[at]`` joined with the next line where the console wrapped it: a parenthesis it opens and leaves open,
    which the next line closes ("... Read timed out. (read" / "timeout=60.0)"); or where it is a tool's error label
    ending in a colon whose message is the next line (Go testify's ``Error: Received unexpected error:`` over
    ``open x.json: no such file or directory``, ``Error: Not equal:`` over ``expected: 3``: review 2, D3), or an
    exception's line so ending (Node's ``AssertionError [ERR_ASSERTION]: Expected values to be strictly equal:`` over
    ``-1 !== 1``, Claude Code's ``InputValidationError: ... the following issue:`` over it: DEC31), or any line ending
    on an error's label (``_ERROR_LABEL``: ``... with error:``); or a sqlfluff violation whose description the
    terminal wrapped under its ``| ``; or where it is an exception's class alone in a pytest report (``E
    AssertionError:``) over its message's first line (``E   Arrays are not equal``; a blank line of the message is a
    bare ``E``): see ``_BARE_EXC``. Not an exception's line nor an error's label whose raw line ended in ``: ``
    (``emptied``: Python's ``"%s: %s"`` of a message that was blank, as Django's ``Problem installing fixture 'x': ``
    over the script's next print; a blank ``str(e)`` after ``... with error: ``)."""
    line = lines[at]
    if said := _pytest_reported(lines, at) or _pytest_exception_joined(lines, at):
        return said
    if at + 1 < len(lines) and line.endswith((":", "：")) \
            and (_TOOL_ERROR.match(line)
                 or (_ERROR_LABEL.search(line) or _EXC_LINE.match(line)) and at not in emptied) \
            and not _NO_MESSAGE.match(lines[at + 1]):
        return f"{line} {lines[at + 1]}"
    if _SQLFLUFF_VIOLATION.match(line):  # sqlfluff's violation, its description wrapped
        wrapped = itertools.takewhile(_SQLFLUFF_WRAPPED.match, lines[at + 1:at + 20])
        return " ".join([line, *(more[2:] for more in wrapped)])
    if at + 1 < len(lines) and line.count("(") > line.count(")"):
        joined = f"{line} {lines[at + 1]}"
        if joined.count("(") == joined.count(")"):
            return joined
    return line


def _report_messages(lines: list[str]) -> dict[str, tuple[int, str]]:
    """{test's name: (index, text) of the ``E`` line its report's summary would carry} of pytest's reports in ``lines``,
    read in one pass (a summary line looks its test up here: rescanning the report for each of thousands of bare
    summary lines was quadratic). A report runs from its ``____ <name> ____`` header (the last one of a name) to the
    next rule (``___``, ``===``) or summary line (``FAILED ...``); its line is the first ``E`` line of its last
    exception: after a chain's ``During handling of the above exception ...`` / ``The above exception was the direct
    cause ...``, the raised exception's, as pytest's summary (its ``reprcrash``) says."""
    reports: dict[str, tuple[int, str]] = {}
    name: str | None = None
    chained = False
    for n, line in enumerate(lines):
        if line.startswith("_") and line.endswith("_") and line.strip("_").startswith(" ") \
                and line.strip("_").endswith(" ") and line.strip("_ "):  # not the ``_ _ _`` between frames
            name, chained = line.strip("_")[1:-1], False
            reports.pop(name, None)
        elif line.startswith(("___", "===", "FAILED ", "ERROR ")):  # the next test's report, the summary's rule
            name = None
        elif name is None:
            continue
        elif line.startswith(("During handling of the above", "The above exception was")):
            chained = True
        elif _PYTEST_E.match(line) and (chained or name not in reports):
            reports[name], chained = (n, _PYTEST_E.sub(r"\1", _pytest_exception_joined(lines, n) or line)), False
    return reports


def _pytest_reported(lines: list[str], at: int, reports: dict[str, tuple[int, str]] | None = None) -> str | None:
    """pytest's summary line ``lines[at]`` of a failed test whose message it left out or cut (``FAILED
    tests/x.py::test_y``: the id alone filled the terminal's width), given the message its report above says
    (:func:`_report_messages`; ``TestC.test_y[1]`` heads the report of ``x.py::TestC::test_y[1]``), as pytest's summary
    would carry it (``FAILED tests/x.py::test_y - assert 4 == 4.49``; an exception's class alone there with its
    message's first line, which the summary leaves out: ``- AssertionError:``). A cut message is replaced only by the
    line it starts with. None where the line is no such summary line or no report of its test is kept above it.
    ``reports``: :func:`_report_messages` of ``lines``, where already read."""
    found = _PYTEST_SUMMARY.match(lines[at])
    if not found or _said_whole(found.group("message")) or "::" not in found.group("id"):
        return None
    cut = (found.group("message") or "").removeprefix(" - ").removesuffix("...")
    reported = (_report_messages(lines) if reports is None else reports).get(
        found.group("id").split("::", 1)[1].replace("::", "."))
    if reported is None or reported[0] > at or not reported[1].startswith(cut):
        return None
    return f"{found.group(0).split(' - ', 1)[0]} - {reported[1]}"


def _pytest_exception_joined(lines: list[str], at: int) -> str | None:
    """The ``E`` line ``lines[at]`` of a pytest report holding an exception's class alone (``E   AssertionError:``)
    joined with its message's first line below (``E   Not equal to tolerance ...``); None for any other line."""
    if at + 1 < len(lines) and (exception := _PYTEST_E.match(lines[at])) and _BARE_EXC.match(exception.group(1)) \
            and (message := _PYTEST_E.match(lines[at + 1])):
        return f"{lines[at]} {message.group(1)}"
    return None


def _short_keeping(line: str, found: re.Match[str], limit: int = 300) -> str:
    """``line`` shortened to ``limit`` keeping its end (where messages conclude), unless that would cut off the
    words that made it the decisive line and its head holds them ("Agent type 'x' not found. Available agents:
    ..." listing hundreds of names): then its head."""
    cut = len(line) - limit  # roughly where the kept end starts (``short`` also folds runs of spaces)
    return short(line, limit, keep="head" if found.start() < cut and found.end() < limit else "end")


def timestamp(value: Any) -> datetime | None:
    """Unix seconds -> aware UTC datetime; anything else (a NaN, or past the platform's range: ``1e300``) -> None."""
    if isinstance(value, (int, float)) and not isinstance(value, bool) and value > 0:
        try:
            return datetime.fromtimestamp(value, tz=timezone.utc)
        except (OverflowError, OSError, ValueError):
            return None
    return None


def apply_defaults(fields: dict[str, Any], defaults: Mapping[str, Any]) -> dict[str, Any]:
    """Fill what ``fields`` leaves empty from operator ``defaults``.

    ``metadata`` and ``tags`` are merged instead (the record's own metadata
    wins on a key clash), so a default never hides what the record says; a
    record's ``metadata`` that is not an object, or ``tags`` not a list of
    strings, is left as it is, for validation to name the field (merged, a
    string's tags would be its characters).
    """
    merged = dict(fields)
    for key, value in defaults.items():
        own = merged.get(key)
        if key == "metadata" and isinstance(own or {}, dict):
            merged["metadata"] = {**value, **(own or {})}
        elif key == "tags" and isinstance(own or [], list) and all(isinstance(t, str) for t in own or []):
            merged["tags"] = list(dict.fromkeys([*(own or []), *value]))
        elif key not in ("metadata", "tags") and own in (None, "", [], {}):
            merged[key] = value
    return merged


#: Directories that only hold a run set's files: SWE-bench experiments' ``<system>/trajs/``.
_CONTAINERS = ("trajs", "trajectories")


def stream_copy(source: Path) -> tuple[Path, Path] | None:
    """A stream's copy (``read.Streams``: ``<STREAMS_PREFIX>...-<random>/stream-<n>/<name>``) split into the copy's
    own folders (``.../stream-<n>``, named by chance) and the relative name the operator gave (``stdin``, a pipe's
    ``63``, ``--stream-name``'s ``run1/x.traj``); ``None`` for any other path. The one place that knows the copy's
    layout: names (:func:`named_path`) and the warning about them (``read.NamedAfterSpool``) both read it here."""
    parts = source.parts
    top = next((n for n, part in enumerate(parts) if part.startswith(STREAMS_PREFIX)), None)
    if top is None or len(parts) <= top + 2:
        return None
    return Path(*parts[:top + 2]), Path(*parts[top + 2:])


def named_path(source: Path) -> Path:
    """``source`` as the operator named it, for a run's name: a stream's copy (:func:`stream_copy`) as the relative
    name it was given, since the folders above it are the copy's, named by chance: a run named after the random one
    was added again by every rerun of the same stream, and ``stream-0`` is every stream's. Any other path as it is.
    Only for names: the copy's folders are where its sibling files are read."""
    copy = stream_copy(source)
    return copy[1] if copy is not None else source


def run_directory(source: Path, instance_id: str) -> str:
    """The name of the directory that stands for a file's run set: ``<run>/<id>.traj``,
    ``<run>/<id>/<id>.traj`` and ``<run>/trajs/[<id>/]<id>.traj`` all give ``<run>`` ("" at the root). A stream's
    copy is read by the folders the operator gave it (:func:`named_path`); given none, it is the copy's own
    ``stream-<n>``: every such stream's runs of one instance share that name, and ``read.NamedAfterSpool`` warns
    of it (with "" they shared the fallback name unwarned, the second silently replacing the first); so too when the
    folders given are only the instance's or the container's (``--stream-name <id>/<id>.traj.json``)."""
    copy = stream_copy(source)
    parent = named_path(source).parent
    if parent.name == instance_id:
        parent = parent.parent
    if parent.name in _CONTAINERS:
        parent = parent.parent
    return parent.name or (copy[0].name if copy is not None else "")


def last_part(parts: Sequence[str], name: str) -> int | None:
    """Where the last folder named ``name`` is among a path's ``parts`` (a producer's store, as ``session-state``,
    may lie below another of its name in a backup), else None."""
    return max((i for i, part in enumerate(parts) if part == name), default=None)


def file_stem(source: Path, suffixes: tuple[str, ...]) -> str:
    """The file's name without its compression's suffix (``.gz``, ``.zst``) and then each of its format's
    ``suffixes`` in turn (each cut once if the name ends with it): ``x.traj.json.gz`` gives ``x`` for
    ``(".json", ".traj")``. Run ids are built from it, so it must not change for a given file."""
    name = plain_name(source.name)
    for suffix in suffixes:
        name = name.removesuffix(suffix)
    return name


#: Where an adapter's ``split`` found a run in its file, for :func:`file_run_key`: the number of the run's first item
#: (1 for a file that is one run). Its value is AutoGen's, which used it first: a record kept aside keeps its place.
ITEM_AT = "__autogen_item__"


def json_digest(value: Any) -> str:
    """A short stable digest of a JSON value (its keys sorted): the id of a run named by a record that is unique to
    it (a first message with its own id or timestamps), wherever its file lies."""
    canonical = json.dumps(value, sort_keys=True, ensure_ascii=False)
    return hashlib.blake2b(canonical.encode(), digest_size=10).hexdigest()


def file_run_key(ctx: Context, at: Any) -> str:
    """A run's id where its dump keeps none (AgentChat before 0.6, an AutoGen 0.2 ChatResult's ``chat_id`` None,
    AG2's ``initiate_chats`` numbering its chats 1, 2, ...): the file it was read from (its folder and name, as
    ``file_stem`` gives it) and where in it (``at``, the run's first item), as other formats name a file's runs.
    What was said cannot be the id: a cached or replayed model (AG2's ``cache_seed`` 42, a
    ``ReplayChatCompletionClient``) says the same in every run, and two runs of one task by two models often do
    (their usage differs, which AgentChat's team state and a ChatResult's history do not all keep): the later run
    replaced the earlier. Shared by ``autogen_agentchat``, ``ag2`` and ``pydantic_ai``."""
    folder = named_path(ctx.source).parent  # a stream's copy: the folders the operator named, not the copy's
    where = ".".join(p for p in (folder.name, file_stem(ctx.source, (".json", ".jsonl"))) if p)
    return f"{where}.{at if isinstance(at, int) else 1}"


def file_time(source: Path) -> datetime | None:
    """The dump file's modification time: a stable stand-in for a missing ``created_at``.

    Without it ``created_at`` would default to "now" and every re-ingest of the
    same file would look like a changed run.
    """
    try:
        return datetime.fromtimestamp(source.stat().st_mtime, tz=timezone.utc)
    except OSError:
        return None


def date_by_file(fields: dict[str, Any], source: Path) -> dict[str, Any]:
    """``fields`` with a missing ``created_at`` taken from the file's mtime, marked so in ``metadata``
    (``TIME_BASIS``): change detection then leaves that time out, so touching or appending to the file does
    not make its earlier runs look changed. A ``metadata`` that is not an object is left for validation to name
    (a native record as its user wrote it)."""
    own = fields.get("metadata") or {}
    if fields.get("created_at") is not None or not isinstance(own, dict) or (when := file_time(source)) is None:
        return fields
    metadata = {**own, TIME_BASIS: FILE_TIME}
    return {**fields, "created_at": when, "metadata": metadata}


#: A run's metadata key: how the zone of its times was known where its tool wrote local time without one
#: (:func:`local_clock`); absent where the file gives the zone (a ``Z``, an offset, Unix seconds).
TIME_ZONE = "created_at_zone"
#: What ``TIME_ZONE`` says of a time read as UTC, no zone known: its true instant may be up to 14 hours off.
ZONE_UNKNOWN = "unknown: the tool wrote local time, read as UTC (TRAJSEARCH_LOCAL_TZ sets the zone)"
#: The offsets zones use (UTC-12 to UTC+14) come in quarter hours; a file's own clock against its mtime is read as
#: one of them only within this much of it (the write follows the time it records by milliseconds).
_ZONE_STEP, ZONE_SLACK = timedelta(minutes=15), timedelta(seconds=5)
#: The offsets off the whole hour that zones use, in minutes (every zone of the tz database, standard time and DST:
#: Newfoundland's -3:30/-2:30, the Marquesas' -9:30, India's +5:30, Nepal's +5:45, Chatham's +12:45/+13:45 ...):
#: only these and whole hours are told, so a copy's fresh mtime tells a false zone as rarely as may be.
_ZONES_OFF_THE_HOUR = frozenset(timedelta(minutes=m) for m in (-570, -210, -150, 210, 270, 330, 345, 390, 525, 570,
                                                                630, 765, 825))


@dataclass(frozen=True)
class LocalClock:
    """How one file's local, zoneless times become instants: in ``zone`` (None: this machine's own, DST and all),
    and how that zone was known (``basis``, the run's ``metadata[TIME_ZONE]``)."""

    zone: tzinfo | None
    basis: str

    def at(self, wall: datetime | None) -> datetime | None:
        """``wall`` read on this clock; a time that carries its zone keeps it."""
        if wall is None or wall.tzinfo is not None:
            return wall
        return wall.astimezone() if self.zone is None else wall.replace(tzinfo=self.zone)


def zone_apart(local: datetime, utc: datetime, slack: timedelta) -> tzinfo | None:
    """The zone in which the naive ``local`` and ``utc`` (a UTC time, naive) are one instant: they lie a zone's
    offset apart (UTC-12 to UTC+14, whole hours or ``_ZONES_OFF_THE_HOUR``), within ``slack``; None where they do
    not."""
    apart = local - utc
    offset = round(apart / _ZONE_STEP) * _ZONE_STEP
    if abs(apart - offset) > slack or not config.LEAST_UTC_OFFSET <= offset <= config.MOST_UTC_OFFSET \
            or (offset % timedelta(hours=1) and offset not in _ZONES_OFF_THE_HOUR):
        return None
    return timezone.utc if not offset else timezone(offset)


def local_clock(source: Path, *, given: tzinfo | None = None, given_by: str = "",
                written: datetime | None = None) -> LocalClock:
    """The clock a file's local times are read on, most certain first: a zone the file itself ``given`` (SpecStory's
    UTC name against its local title; ``given_by`` says how); the offset between ``written``, the local time the file
    says it was last written at (Trae Agent's ``end_time``, saved at once), and the file's mtime, where the two lie a
    whole quarter-hour offset apart (a copy or a checkout, which resets the mtime, almost never does); the zone the
    operator sets (``TRAJSEARCH_LOCAL_TZ``); else UTC, said to be a guess (``ZONE_UNKNOWN``). A tool that wrote
    ``datetime.now()`` keeps no zone, and a zone cannot be guessed from the times alone: a run read on the wrong one
    is hours early or late, and recency ranks and ``--since`` filters by it."""
    if given is not None:
        return LocalClock(given, f"{given.tzname(None)} ({given_by})")
    if written is not None and written.tzinfo is None and (mtime := file_time(source)) is not None \
            and (zone := zone_apart(written, mtime.replace(tzinfo=None), ZONE_SLACK)) is not None:
        return LocalClock(zone, f"{zone.tzname(None)} (the file's last time against its mtime)")
    operator = config.local_time_zone()  # (checked where reading started: make_context)
    if operator is None:
        return LocalClock(timezone.utc, ZONE_UNKNOWN)
    named, zone = operator
    return LocalClock(zone, f"{named} (TRAJSEARCH_LOCAL_TZ)")


#: A Vertex AI model's resource name (``projects/P/locations/L/publishers/google/models/gemini-2.5-flash``).
_VERTEX_MODEL = re.compile(r"^projects/[^/]+/locations/[^/]+/publishers/[^/]+/models/([^/]+)$")


def model_name(model: str) -> str:
    """The model's own name where a platform recorded a resource path (Vertex AI) instead."""
    found = _VERTEX_MODEL.match(model.strip())
    return found.group(1) if found else model


#: The characters :func:`~trajsearch.model.filter_value` refuses in a value a filter names, such as a step's action.
_CONTROLS = re.compile(CONTROL_CHARACTERS + "+")


def action_name(action: str) -> str:
    """A step's action as a filter can name it (``model.filter_value``): each run of control characters one space,
    the ends stripped (nothing left: ``UNNAMED_TOOL``), at most ``MAX_FILTER_VALUE_CHARS`` characters. A name is the
    file's to spell (Cursor's ``mcp__<server>__<tool>`` built from its stream's fields, a Letta Code transcript's
    ``name``, a Copilot sub-agent's ``toolName``): a newline in one cost its whole run (review RT1, 3)."""
    if _CONTROLS.search(action):
        action = _CONTROLS.sub(" ", action).strip() or UNNAMED_TOOL
    return action[:MAX_FILTER_VALUE_CHARS]


def _named_actions(fields: dict[str, Any]) -> dict[str, Any]:
    """An adapter's fields with each step's action, and each tool of ``tools_available``, a name a filter takes
    (:func:`action_name`): adapters copy step actions into ``tools_available`` (inspect-ai, mini-swe-agent, the span
    formats), so a name cleaned in one place only still lost the run (review RT2, 1). Only an adapter's: a native
    record's action is refused as its writer spelled it, a name must not change behind the user's back."""
    named = dict(fields)
    steps, tools = fields.get("steps"), fields.get("tools_available")
    if isinstance(steps, list):
        named["steps"] = [{**step, "action": action_name(step["action"])}
                          if isinstance(step, dict) and isinstance(step.get("action"), str) else step
                          for step in steps]
    if isinstance(tools, list) and all(isinstance(tool, str) for tool in tools):  # (else validation names it)
        named["tools_available"] = list(dict.fromkeys(map(action_name, tools)))
    return named


def build(fields: dict[str, Any], ctx: Context) -> Trajectory:
    """Adapter output + operator defaults + tenant -> a validated Trajectory, each step's action a name a filter
    takes (:func:`action_name`: one place for every adapter)."""
    merged = _named_actions(apply_defaults(fields, ctx.defaults))
    merged["tenant"] = ctx.tenant or DEFAULT_TENANT
    if isinstance(merged.get("model_id"), str):
        merged["model_id"] = model_name(merged["model_id"])
    return validated(date_by_file(readable_fields(merged), ctx.source))


def with_former_id(run: Trajectory, former: str) -> Trajectory:
    """``run`` naming in ``metadata.former_ids`` (``model.FORMER_IDS``) the id ``former`` an older version gave it from
    where its file lay, and the ``<former>+<digest>`` ``ingest.read.DistinctIds`` gave it when another run read in the
    same ingest held ``former``, with that version's digest (the whole run, under ``former``, naming no former id).
    So an upgrade's re-ingest and ``delete --from`` find the copy an older version stored under either. Call it on
    the built run; the names go where its metadata holds the key already, else last (its other keys are as that
    version wrote them, in their order)."""
    from trajsearch.represent import run_content  # (represent imports the ingest package)

    if former == run.trajectory_id:
        return run
    before = run.model_copy(update={"trajectory_id": former,
                                    "metadata": {k: v for k, v in run.metadata.items() if k != FORMER_IDS}})
    digest = hashlib.blake2b(run_content(before, without=frozenset({"trajectory_id"})).encode(), digest_size=8)
    run.metadata[FORMER_IDS] = [former, f"{former[:183]}+{digest.hexdigest()[:8]}"]
    return run


def validated(record: dict[str, Any]) -> Trajectory:
    """``record`` as a Trajectory; a ValidationError raised keeps ``record`` (its ``record``), so that its message
    asks after no field the record already holds ("unexpected field 'status' (did you mean 'outcome'?)" of a run
    with its outcome; see ``read.describe_validation_error``)."""
    try:
        return Trajectory.model_validate(record)
    except ValidationError as exc:
        exc.record = record  # type: ignore[attr-defined]
        raise


def last_tool_error(steps: Sequence[StepLike]) -> StepLike | None:
    """The last step (a Step, or a dict as an adapter builds it) whose tool call erred and that the run did not get
    past, for a failed run's ``last tool error`` / ``last failing step``: a call the run made again without error
    (``represent.recoveries``: a ``503 Service Unavailable`` retried) is no part of why it failed, and a warning's
    failing step (``represent.decisive_error``) passes it over too, so the two name one step. Round 24, RT7: 16 of
    the 37 failed grok-3 retail runs in real-formats named such an error; its review: a mini-swe-agent run whose
    step 3 was repeated without error still read ``last failing step 3`` while its failing step was step 1."""
    built = [s if isinstance(s, Step) else
             Step.model_construct(index=i, action=s.get("action"), arguments=s.get("arguments"),
                                  observation=s.get("observation"), error=s.get("error"))
             for i, s in enumerate(steps)]  # not validated: only read here, as the adapter validates the run
    return next((steps[position] for position, _, by in recoveries(built)
                 if by is None and built[position].error), None)

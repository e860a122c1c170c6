"""``inspect-ai``: Inspect AI evaluation logs (``.eval`` archives and JSON logs), one run per sample and epoch.

Records (``inspect_ai/log/_log.py``): an ``EvalLog``, ``{"version", "status", "eval", "plan", "results", "stats",
"samples": [EvalSample], "reductions"}``, as ``--log-format json`` writes it (its fields in that order, on purpose:
its samples are streamed, ``read_streamed``, each with the ``eval`` before them); an ``.eval`` log, Inspect's default,
a zip archive of the same pieces (``inspect_ai/log/_recorders/eval.py``): ``header.json`` (the log without its
samples; written last, so an eval still running or killed has only ``_journal/start.json``, ``{"version", "eval",
"plan"}``) and one ``samples/<id>_epoch_<n>.json`` per sample, read one at a time (stored, deflated or, since 2025,
Zstandard members; an archive cut short keeps the samples before the cut, then says what was lost, as does a JSON
log); or one ``EvalSample`` alone (a member unpacked from an archive). An ``EvalSample`` holds ``id``, ``epoch``,
``input`` (a string or chat messages), ``messages`` (``model/_chat_message.py``: ``system``, ``user``, ``assistant``
with ``tool_calls`` ``[{"id", "function", "arguments"}]``, ``tool`` with ``tool_call_id``, ``function`` and ``error``
``{"type", "message"}``; content a string or parts, ``{"type": "text" | "reasoning" | "tool_use" | "image", ...}``),
``scores`` (``{scorer: {"value", "answer", "explanation"}}``; one ``score`` before July 2024), ``error``
(``{"message", "traceback"}``: what halted the sample), ``limit`` (``{"type", "limit"}``: the message, token, time,
... limit that halted it), ``events`` (tool events give a call's start and end; ``transcript.events`` in some 2024
logs), ``uuid`` (Inspect 0.3.70+), ``started_at`` and ``attachments`` (text kept once, referenced as
``attachment://<hash>``; resolved here). An archive unzipped is read from its ``samples/``, each sample with the
eval's spec from the header beside it (``header.json``, else ``_journal/start.json``: ``read_with``), as its archive
gives it; its other members passed over (``side_path``), as are the manifests ``inspect eval-set`` writes beside its
logs (``eval-set.json``, ``logs.json``: ``side_file``). An ``.eval`` renamed or piped in is told by its members
(``archive_members``).

Mapping
- task: ``input``: the string, or its user messages' text (the system prompt is the solver's, not the task);
- steps: each assistant tool call (action = ``function``, arguments as logged, thought = the message's reasoning
  (unredacted, else its summary) and text) with the ``tool`` message answering its id as observation, failed where that
  message carries an ``error`` (``"<type>: <message>"``: a ToolError, a timeout, a refused approval) or the call's
  arguments did not parse (``parse_error``), or the sample's error halted the run in it (no result); times from the
  call's tool event; a provider-run tool (``tool_use`` content: web search, MCP, code execution) a step with its
  result; an assistant message with text and no call a
  ``respond`` step, its observation the user message after it (an agent's "please continue" nudge); a sub-agent's
  calls (``handoff()``, ``as_tool()``) and answers in words, from its events (:func:`_subagents`), each after the
  call that ran it, ``arguments.subagent`` its name; its turns a handoff copied into the messages are no steps; an
  agent a solver ran with ``run()`` (no call) whose turns are in no message, likewise (:func:`_runs`), by time;
- outcome, by this rule: the first scorer (in the log's order) whose value is one number reads as Inspect's own
  ``value_to_float``: ``C`` 1, ``P`` 0.5, ``I`` and ``N`` 0 (as written: a ``c`` is none), ``yes``/``true`` 1,
  ``no``/``false`` 0 (in any case), a number or a numeric string itself; that is the ``reward``, a success at or
  above the success threshold (0.5: partial credit, ``P``, is a success by default) where it lies in
  [0, 1], unknown outside it (a 1-10 grade: its scale is not logged). A dict or list value (several metrics of one
  scorer, ``{"score": 0.8, "refusal": 0}``) is no single verdict and is not used. No such score: ``unknown``. A
  sample ``error`` is a failure caused by it (none is scored; ``infra_error`` where it came before the agent's first
  step, as a Docker sandbox that never started or an error inside Inspect, where the eval's process died while the
  sample ran (a crashed eval's sample ``inspect log recover`` rebuilt), and for the model provider's or the
  network's outage, a rate limit or a timeout, unless its traceback runs through a tool), and a ``limit`` a failure
  caused by it unless a scorer still judged the run a success (the answer was in before the limit hit); an
  ``operator`` limit (a person stopped the sample) is no limit the agent hit: its scorer's failure says so, no
  verdict stays ``unknown``, as does a sample the operator stopped with an error or cancelled (unscored; the error is
  its last step's, not the agent's failure: :func:`_operator_stopped`). Every score is kept in ``metadata.scores``,
  a score's ``reason`` (``refusal``, ``grader_failed``, ...; Inspect after 0.3.260, before it
  ``metadata.unscored_reason``) in ``metadata.score_reasons``; the verdict is the value's (NaN: unknown;
  :func:`_score_reasons`). A sample a human invalidated afterwards (``invalidation``) is ``unknown`` with no reward,
  whatever its scores (:func:`_invalidated`);
- model: the eval's ``model`` (``openai/gpt-4o``: Inspect's provider/model name), else the sample's own; a sample
  whose model fell back (``model_fallbacks``) for over half its calls that fallback (:func:`_model`), the fallbacks
  in metadata;
- trajectory_id = ``inspect-ai:<uuid>``, Inspect's id of the sample run, the same in the ``.eval``, the JSON log
  and the sample unpacked alone; before 0.3.70 ``inspect-ai:<eval id>.<sample id>.<epoch>`` (the eval's
  ``eval_id``, else ``task_id``, else ``run_id``); task_id = the sample's id, task_family = the eval's task;
- created_at: the sample's ``started_at``, else its first event's time, else the eval's ``created``.
"""

from __future__ import annotations

import math
import re
import zipfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterator

from trajsearch.first_few import first_few
from trajsearch.model import Failure, Outcome, Trajectory

from .. import sources
from ..sources import Record
from ._agent_cli import as_str, join_thought
from ._common import (Context, RecordError, as_dict, as_list, build, clip_task, last_tool_error,
                      outcome_of_reward, safe_id, short, subagent_marked, tool_arguments)
from ._spans.outcome import INFRA_CAUSE, error_outcome

NAME = "inspect-ai"
ID_PREFIX = "inspect-ai"
#: A JSON log is streamed sample by sample (``read_streamed``), a sample alone read whole; an ``.eval`` archive member
#: by member (``read_archive``).
WHOLE_FILE = True
#: The archives this adapter reads itself (``read_archive``), by the end of their names.
ARCHIVES = (".eval",)
#: A JSON log's head, as Inspect writes it (indented, ``version``, ``status`` and ``eval`` first): a log too big to
#: parse for detection (its samples run past the first 64 MB) is told by it.
SIGNATURE = re.compile(r'\A\ufeff?\s*\{\s*"version":\s*\d+,\s*"status":\s*"\w+",\s*"eval":\s*\{\s*'
                       r'"(?:eval_id|run_id|eval_set_id)"')
#: The member of a JSON log that lists its runs: streamed by ``read_streamed``; detection judges a log by what comes
#: before it (see ``adapters/__init__``).
LISTED_RUNS = "samples"
#: Where a sample handed over carries its eval's spec (``EvalLog.eval``).
EVAL_AT = "__inspect_eval__"
_SAMPLE_MEMBER = re.compile(r"samples/.+_epoch_\d+\.json\Z")
#: How a sample refers to text it keeps once (``attachments``; in some 2024 logs ``tc://`` into ``transcript.content``).
_ATTACHMENT = re.compile(r"\A(?:attachment|tc)://([0-9a-f]+)\Z")
#: Where Inspect runs a tool: a sample error whose traceback passes through it is the tool's, whatever it says.
_TOOL_CODE = "inspect_ai/model/_call_tools.py"
#: Inspect's ``value_to_float`` (``scorer/_metric.py``): the score letters, matched as they are (a ``c`` is none), and
#: the words it reads in any case.
_SCORE_LETTERS = {"C": 1.0, "P": 0.5, "I": 0.0, "N": 0.0}
_SCORE_WORDS = {"yes": 1.0, "true": 1.0, "no": 0.0, "false": 0.0}
#: The traceback ``inspect log recover`` (``log/_recover/_reconstruct.py``) gives a sample that was running when the
#: eval's process died: ``CancelledError: recovered from crashed eval`` (``--incomplete-action retry``, the default) or
#: "Sample was in progress when the eval process was terminated; resolved as an error by recovery" (``error``).
_RECOVERED = re.compile(r"recovered from crashed eval|in progress when the eval process was terminated")
_CRASHED = "infrastructure: the eval's process died while the sample ran (a sample `inspect log recover` rebuilt)"
#: Why a sample an operator stopped (Inspect's ``operator`` limit: the viewer's or the control channel's interrupt, the
#: sample then scored as it stood) failed: no limit the agent ran into.
_OPERATOR_STOP = "an operator stopped the sample before it finished; it was scored as it stood"
#: Why a sample whose error came before any step is ``infra_error``, as other formats' runs that failed before their
#: first step are: the agent did nothing (a Docker sandbox that never started, an error inside Inspect itself).
_BEFORE_ANY_STEP = "infrastructure: the sample failed before the agent's first step; it never attempted the task"


def _is_log(record: Any) -> bool:
    return isinstance(record, dict) and _is_spec(record.get("eval")) \
        and bool({"plan", "samples", "version"} & record.keys())


def _is_sample(record: Any) -> bool:
    return isinstance(record, dict) and {"id", "epoch", "input", "messages"} <= record.keys() \
        and bool({"target", "scores", "output"} & record.keys())


def matches(record: Any) -> bool:
    return _is_log(record) or _is_sample(record)


def split(document: Any) -> Iterator[tuple[str, Any]]:
    """The samples of a JSON log, each with its eval's spec; a sample alone is itself. (A log on disk is streamed
    instead, ``read_streamed``: this reads one whose streaming stopped at a value only a whole read takes.)"""
    if not _is_log(document):
        yield "file", document
        return
    samples = document.get("samples")
    if not samples:
        raise RecordError(_no_samples(document.get("status")))
    for n, sample in enumerate(as_list(samples), 1):
        yield _sample_at(sample, n), _with_spec(sample, document["eval"])


def _sample_at(sample: Any, n: int) -> str:
    return f"sample {sample.get('id')} epoch {sample.get('epoch')}" if isinstance(sample, dict) else f"sample {n}"


def _with_spec(sample: Any, spec: dict[str, Any]) -> Any:
    return {**sample, EVAL_AT: spec} if isinstance(sample, dict) else sample


def _is_spec(spec: Any) -> bool:
    return isinstance(spec, dict) and "task" in spec and ("run_id" in spec or "eval_id" in spec)


def read_streamed(path: Path, on_bytes: sources.OnBytes) -> Iterator[Record] | None:
    """The adapter hook (see ``adapters/__init__``): a JSON log's samples, one at a time, each with its eval's spec
    (``eval``, which Inspect writes before them: ``EvalLog``'s fields keep their order on purpose), so that memory
    holds one sample, not the log; a log cut short keeps the samples before the cut, then says what was lost. None
    for a file that is no log (a sample alone: read whole)."""
    spec = sources.document_value(path, "eval")
    return _log_samples(path, spec, on_bytes) if _is_spec(spec) else None


def _log_samples(path: Path, spec: dict[str, Any], on_bytes: sources.OnBytes) -> Iterator[Record]:
    n = 0
    for sample, error in sources.listed_items(path, LISTED_RUNS, on_bytes):
        if sample is None and error is not None:
            said = f"{n} sample{'' if n == 1 else 's'} of this Inspect AI JSON log read, the rest is lost: {error}"
            yield f"sample {n + 1}", None, said, None
            return
        n += 1
        yield _sample_at(sample, n), _with_spec(sample, spec), error, None
    if not n:
        yield "file", None, _no_samples(sources.document_value(path, "status")), None


def _no_samples(status: Any) -> str:
    if status == "started":
        return "an Inspect AI log of an eval still running (status 'started'): no sample finished yet"
    return ("an Inspect AI log without samples (written with --no-log-samples, or by an eval that finished none, "
            f"status {status!r}): no run to read")


def read_archive(path: Path) -> Iterator[Record]:
    """An ``.eval`` log's samples, one member at a time, each with its eval's spec (``header.json``, else the journal's
    ``start.json``); a member that cannot be read is a rejection of its own, and an archive cut short says so after
    the samples it kept. A zip that holds no Inspect log (named ``.eval`` all the same) says so."""
    try:
        members = sources.ZipMembers(path)
    except (zipfile.BadZipFile, OSError) as exc:
        yield "file", None, f"an Inspect AI .eval log that cannot be read: {exc}", None
        return
    samples = [name for name in members.names if _SAMPLE_MEMBER.match(name)]
    if not samples and not members.damage and not {"header.json", "_journal/start.json"} & set(members.names):
        held = f"its members: {first_few(members.names, 5)}" if members.names else "no member"
        yield "file", None, ("a zip archive named .eval, but not an Inspect AI log: it holds no header.json, "
                             f"_journal/start.json or samples/ ({held})"), None
        return
    spec, status = _header(lambda name: members.read(name) if name in members.names else None)
    for name in samples:
        try:
            sample, error = sources.parse(members.read(name), "record")
        except (zipfile.BadZipFile, OSError) as exc:
            yield name, None, str(exc), None
            continue
        yield name, {**sample, EVAL_AT: spec} if isinstance(sample, dict) else sample, error, None
    if members.damage:
        yield "file", None, members.damage, None
    elif not samples:
        yield "file", None, _no_samples(status), None


#: Where an ``.eval`` log keeps its eval's spec: its header, else (an eval still running, or killed) its journal's
#: start.
_HEADERS = ("header.json", "_journal/start.json")


def _header(read: Callable[[str], bytes | None]) -> tuple[dict[str, Any], str | None]:
    """The eval's spec and status from the first of :data:`_HEADERS` that ``read`` gives (None: absent) and holds one;
    ``({}, None)`` where none does."""
    for name in _HEADERS:
        try:
            raw = read(name)
        except (zipfile.BadZipFile, OSError):
            continue
        head, error = sources.parse(raw, "record") if raw is not None else (None, None)
        if error is None and isinstance(head, dict) and isinstance(head.get("eval"), dict):
            return head["eval"], head.get("status", "started")
    return {}, None


def _unzipped_root(path: Path) -> Path | None:
    """The folder of an ``.eval`` log unzipped that sample file ``path`` lies in (``<root>/samples/<id>_epoch_<n>.json``
    beside ``header.json`` or ``_journal/``; an id holding ``/`` puts it in a folder below ``samples/``, as in the
    archive's member names), else None: a sample alone."""
    for samples in (folder for folder in path.parents if folder.name == "samples"):
        if _SAMPLE_MEMBER.match(f"samples/{path.relative_to(samples).as_posix()}") and _unzipped(samples.parent):
            return samples.parent
    return None


def _unzipped(root: Path) -> bool:
    """Whether folder ``root`` is an ``.eval`` log unzipped: ``samples/`` beside ``header.json`` or ``_journal/``."""
    return root.joinpath("samples").is_dir() and (root.joinpath("header.json").is_file()
                                                  or root.joinpath("_journal").is_dir())


def _spec_beside(path: Path) -> dict[str, Any]:
    """The eval's spec from the header beside a sample of an ``.eval`` log unzipped, as its archive gives it."""
    if (root := _unzipped_root(path)) is None:
        return {}
    return _header(lambda name: root.joinpath(name).read_bytes() if root.joinpath(name).is_file() else None)[0]


def read_with(path: Path) -> tuple[Path, ...]:
    """The adapter hook (see ``adapters/__init__``): a sample of an ``.eval`` log unzipped is read with the header
    beside it (its model, task and eval id), which an eval still running writes last."""
    root = _unzipped_root(path)
    return tuple(root / name for name in _HEADERS) if root is not None else ()


def side_file(record: Any) -> str | None:
    """The adapter hook (see ``adapters/__init__``): the manifests ``inspect eval-set`` writes beside its logs."""
    if isinstance(record, dict) and record.keys() == {"eval_set_id", "tasks"}:
        return "Inspect AI's eval-set manifest (eval-set.json): its runs are in the logs beside it"
    if isinstance(record, dict) and record and all(isinstance(name, str) and name.endswith((".eval", ".json"))
                                                   and _is_log(header) for name, header in record.items()):
        return ("Inspect AI's log directory manifest (logs.json: each log's header, without samples): its runs are "
                "in the logs it names")
    return None


#: The members of an ``.eval`` archive beside its samples, by their path in it.
_ARCHIVE_SIDE = ("header.json", "summaries.json", "reductions.json")


def side_path(path: Path, fmt: str | None) -> str | None:
    """The adapter hook (see ``adapters/__init__``): a file of an ``.eval`` archive unzipped other than its samples
    (``header.json``, ``summaries.json``, ``reductions.json``, ``_journal/``), told by the ``samples/`` folder beside
    it; its runs are those samples, each read alone."""
    parts = path.parts
    at = len(parts) - 1 if path.name in _ARCHIVE_SIDE else next(
        (i for i in range(len(parts) - 2, 0, -1) if parts[i] == "_journal"), None)
    if at is None or not _unzipped(Path(*parts[:at])):
        return None
    return (f"{Path(*parts[at:]).as_posix()} of an Inspect AI .eval log unzipped: its runs are the samples in "
            "samples/ beside it, each read with its eval's header")


def archive_members(names: list[str]) -> bool:
    """The adapter hook (see ``adapters/__init__``): whether a zip holding ``names`` is an ``.eval`` log, whatever its
    name (a log renamed, or piped in): its journal's start, or its header beside samples."""
    return "_journal/start.json" in names or ("header.json" in names and any(map(_SAMPLE_MEMBER.match, names)))


def _resolved(value: Any, attachments: dict[str, Any]) -> Any:
    """``value`` with its ``attachment://<hash>`` (``tc://<hash>``) strings replaced by the sample's attachments."""
    if isinstance(value, str):
        found = attachments.get(ref.group(1)) if (ref := _ATTACHMENT.match(value)) else None
        return found if isinstance(found, str) else value
    if isinstance(value, dict):
        return {k: _resolved(v, attachments) for k, v in value.items()}
    if isinstance(value, list):
        return [_resolved(v, attachments) for v in value]
    return value


def _parts(content: Any, kind: str) -> list[dict[str, Any]]:
    return [p for p in as_list(content) if isinstance(p, dict) and p.get("type") == kind]


def _text(content: Any) -> str:
    """A message's text: the string, or its text parts joined (images, audio and reasoning are no text)."""
    if isinstance(content, str):
        return content.strip()
    return "\n".join(str(p.get("text") or "") for p in _parts(content, "text")).strip()


def _reasoning(content: Any) -> str | None:
    said = [str(p.get("summary") if p.get("redacted") else p.get("reasoning") or p.get("summary") or "").strip()
            for p in _parts(content, "reasoning")]
    return "\n\n".join(s for s in said if s) or None


def _task(input_: Any) -> str:
    if isinstance(input_, str):
        return input_.strip()
    messages = [m for m in as_list(input_) if isinstance(m, dict)]
    said = [_text(m.get("content")) for m in messages if m.get("role") == "user"]
    return "\n\n".join(s for s in said if s) or "\n\n".join(s for m in messages if (s := _text(m.get("content"))))


def _tool_times(events: list[Any]) -> dict[str, tuple[Any, Any]]:
    """Each tool call's start and end, by its id, from the sample's tool events."""
    return {str(e["id"]): (e.get("timestamp"), e.get("completed")) for e in events
            if isinstance(e, dict) and e.get("event") == "tool" and e.get("id") is not None}


@dataclass
class _SubStep:
    """A step a sub-agent took, from its events: a tool call (its tool event) or an answer in words (its model's
    output with no call)."""

    spawner: str | None  # the id of the parent's call that ran the sub-agent (handoff, as_tool), where known
    step: dict[str, Any]  # marked ``arguments.subagent``: the agent's name


@dataclass
class _SubAgents:
    """What the sample's sub-agents did, from its events: their steps in order, and the ids of the messages they
    wrote (a handoff copies them into the parent's conversation as text, not the parent's turns)."""

    steps: list[_SubStep] = field(default_factory=list)
    said: set[str] = field(default_factory=set)


@dataclass(frozen=True)
class _Place:
    """Where a span lies, from it up to the sample's root: whether a ``tool`` span there holds an ``agent`` span
    (a sub-agent's), the outermost such tool span's call, the innermost agent's name, and whether the nearest
    ``agent``/``tool`` span is an agent (an event there is that agent's own, not one of its tools')."""

    spawned: bool = False
    spawner: str | None = None
    agent: str | None = None
    own: bool = False


def _spans(events: list[Any]) -> dict[str, dict[str, Any]]:
    """The sample's spans by id (their ``span_begin`` events). Span ids that are no strings (damage) are no spans."""
    return {e["id"]: e for e in events if isinstance(e, dict) and e.get("event") == "span_begin"
            and isinstance(e.get("id"), str)}


def _under_solvers(spans: dict[str, dict[str, Any]]) -> set[str]:
    """The spans that lie below a ``solvers`` span (the run's own work; not ``scorers``, whose agents judge it),
    each chain of spans walked once, however deep; a cycle (damage) ends a walk where it closes."""
    found: dict[str, bool] = {}
    for start in spans:
        chain, at, seen = [], start, set()
        while at in spans and at not in found and at not in seen:
            chain.append(at)
            seen.add(at)
            up = spans[at].get("parent_id")
            at = up if isinstance(up, str) else None
        below = at in found and (found[at] or spans[at].get("type") == "solvers")  # else the root, or a cycle
        for span in reversed(chain):
            found[span] = below
            below = below or spans[span].get("type") == "solvers"
    return {span for span, below in found.items() if below}


def _span_places(events: list[Any], runs: set[str]) -> Callable[[Any], _Place]:
    """Each span's :class:`_Place`, memoised per span (and whether an agent lies below it), each from its parent's:
    a chain of spans is walked once, however deep (a damaged or hostile log's). Span ids that are no strings
    (damage) are no spans. An agent span in ``runs`` (:func:`_runs`) is a sub-agent with no call that ran it."""
    spans = _spans(events)
    call_of: dict[str, str] = {}  # a tool span's id -> its call's id (the tool event logged right after it opens)
    opened: str | None = None
    for event in events:
        kind = as_dict(event).get("event")
        if kind == "tool" and opened is not None:
            call_of[opened] = str(event.get("id"))
        opened = event.get("id") if kind == "span_begin" and event.get("type") == "tool" else None
        opened = opened if isinstance(opened, str) else None
    known: dict[tuple[str, bool], _Place] = {}

    def parent(span_id: str) -> str | None:
        up = spans[span_id].get("parent_id")
        return up if isinstance(up, str) and up in spans else None

    def place(span_id: Any) -> _Place:
        chain: list[tuple[str, bool]] = []  # the spans up to one known (or the root), each with an agent below it
        at, below, seen = (span_id if isinstance(span_id, str) and span_id in spans else None), False, set()
        while at is not None and (at, below) not in known and at not in seen:  # a cycle: damage, stop
            seen.add(at)
            chain.append((at, below))
            kind = spans[at].get("type")
            below, at = True if kind == "agent" else False if kind == "tool" else below, parent(at)
        found = known.get((at, below), _Place()) if at is not None else _Place()
        for at, agent_below in reversed(chain):
            span = spans[at]
            if span.get("type") == "agent":
                found = _Place(found.spawned or at in runs, found.spawner, str(span.get("name") or "agent"), True)
            elif span.get("type") == "tool":
                spawner = found.spawner if found.spawned else call_of.get(at) if agent_below else None
                found = _Place(found.spawned or agent_below, spawner, found.agent, False)
            known[(at, agent_below)] = found
        return found

    return place


def _runs(events: list[Any], messages: list[dict[str, Any]]) -> set[str]:
    """The ``agent`` spans of agents a solver ran on their own (``run()``, no tool call) whose turns are in none of
    the sample's messages: each span below the ``solvers`` span (an agent a scorer runs judges the run: its calls
    are none of its steps) whose model events answered with messages (ids) none of which the sample holds (the
    sample's own agent, which wrote its messages, is not one; a run whose messages the solver copied in is read from
    them)."""
    held = {m["id"] for m in messages if isinstance(m.get("id"), str)}
    said: dict[str, set[str]] = {}  # an agent span's id -> the ids of the messages its own model events answered
    spans = _spans(events)
    agents = {span for span in _under_solvers(spans) if spans[span].get("type") == "agent"}
    for event in events:
        span = as_dict(event).get("span_id")  # one that is no string (damage) is no span
        if as_dict(event).get("event") == "model" and isinstance(span, str) and span in agents:
            for choice in as_list(as_dict(event.get("output")).get("choices")):
                if isinstance(said_id := as_dict(as_dict(choice).get("message")).get("id"), str):
                    said.setdefault(span, set()).add(said_id)
    return {span for span, ids in said.items() if held and not ids & held}


def _subagents(events: list[Any], attachments: dict[str, Any], messages: list[dict[str, Any]]) -> _SubAgents:
    """The sub-agents' steps and messages. Inspect (0.3.94+) opens an ``agent`` span around every agent it runs and
    a ``tool`` span around every call, and logs a call's tool event right after opening its span: an event whose
    spans put an agent below a tool call is a sub-agent's, one ``handoff()`` or ``as_tool()`` (or a deep agent's
    ``agent`` tool) ran. A handoff writes the sub-agent's turns into the parent's messages as text only
    ("[researcher] ...", "lookup(city='Paris')", its result a user message) and an ``as_tool`` sub-agent's calls are
    in no message, so its events are its steps: each tool event a call, with arguments, result and error (one an
    exception escaped, ``failed``, as one unfinished, ``pending``: no result), each answer in words its model gave
    (no call) a ``respond`` (a handoff's sub-agent's answer is in no call's result). A log without such spans has
    none."""
    if not any(isinstance(e, dict) and e.get("event") == "span_begin" and e.get("type") == "agent" for e in events):
        return _SubAgents()
    place = _span_places(events, _runs(events, messages))
    found = _SubAgents()
    thoughts: dict[str, str | None] = {}  # a sub-agent's call id -> the thought of the message that made it
    for event in (e for e in events if isinstance(e, dict) and e.get("event") in ("model", "tool")):
        if not (at := place(event.get("span_id"))).spawned:
            continue
        agent = str(at.agent)
        if event["event"] == "model":
            for choice in as_list(as_dict(event.get("output")).get("choices")):
                message = _resolved(as_dict(as_dict(choice).get("message")), attachments)
                if isinstance(message.get("id"), str):
                    found.said.add(message["id"])
                content, calls = message.get("content"), as_list(message.get("tool_calls"))
                for call in calls:
                    thoughts[str(as_dict(call).get("id"))] = join_thought([_reasoning(content), _text(content)])
                if not calls and at.own and (text := _text(content)):  # not a model one of its tools asked
                    found.steps.append(_SubStep(at.spawner, {
                        "thought": _reasoning(content), "action": "respond",
                        "arguments": subagent_marked({"content": text}, agent), **_times(event)}))
            continue
        if isinstance(event.get("message_id"), str):
            found.said.add(event["message_id"])
        event = _resolved(event, attachments)
        step = {"thought": thoughts.get(str(event.get("id"))), "action": str(event.get("function") or "tool"),
                "arguments": subagent_marked(tool_arguments(event.get("arguments")), agent),
                **_times(event)}
        if not (event.get("pending") or event.get("failed")):  # unfinished, or an exception escaped: no result
            step["observation"] = _result(event.get("result"))
        if error := _tool_error(event.get("error")):
            step["error"] = error
        found.steps.append(_SubStep(at.spawner, step))
    return found


def _times(event: dict[str, Any]) -> dict[str, Any]:
    """An event's times as a step's: its ``timestamp`` and ``completed``, where written."""
    return {k: v for k, v in (("started_at", event.get("timestamp")), ("ended_at", event.get("completed"))) if v}


def _result(result: Any) -> str:
    """A tool event's ``result`` as text: a string, content parts' text, else the value (a number, a bool)."""
    return _text(result) if isinstance(result, (str, list)) else "" if result is None else str(result)


def _tool_error(error: Any) -> str | None:
    """A tool call's error (``ToolCallError``, ``{"type", "message"}``) as ``"<type>: <message>"``, else None."""
    if isinstance(error, dict) and (error.get("message") or error.get("type")):
        return f"{error.get('type') or 'error'}: {error.get('message') or ''}".strip()
    return None


def _steps(messages: list[dict[str, Any]], times: dict[str, tuple[Any, Any]],
           subagents: _SubAgents) -> list[dict[str, Any]]:
    steps: list[dict[str, Any]] = []
    by_call: dict[str, dict[str, Any]] = {}
    replying: dict[str, Any] | None = None
    for msg in messages:
        if msg.get("id") in subagents.said:  # a sub-agent's turn a handoff copied in: its calls are its events'
            continue
        role, content = msg.get("role"), msg.get("content")
        if role == "assistant":
            text, reasoning = _text(content), _reasoning(content)
            thought = join_thought([reasoning, text])
            replying = None
            for used in _parts(content, "tool_use"):  # a tool the provider ran (web search, MCP, code execution)
                steps.append({"thought": thought, "action": str(used.get("name") or used.get("tool_type")),
                              "arguments": tool_arguments(used.get("arguments")),
                              "observation": str(used.get("result") or ""),
                              **({"error": str(used["error"])} if used.get("error") else {})})
            calls = [c for c in as_list(msg.get("tool_calls")) if isinstance(c, dict)]
            for call in calls:
                step = {"thought": thought, "action": str(call.get("function") or "tool"),
                        "arguments": tool_arguments(call.get("arguments"))}
                if call.get("parse_error"):
                    step["error"] = f"the arguments did not parse: {call['parse_error']}"
                started, ended = times.get(str(call.get("id")), (None, None))
                step.update({k: v for k, v in (("started_at", started), ("ended_at", ended)) if v})
                steps.append(step)
                by_call[str(call.get("id"))] = step
            if not calls and text:
                replying = {"thought": reasoning, "action": "respond", "arguments": {"content": text}}
                steps.append(replying)
        elif role == "tool":
            step = by_call.get(str(msg.get("tool_call_id")))
            if step is None or "observation" in step:
                continue
            step["observation"] = _text(content)
            if error := _tool_error(msg.get("error")):
                step["error"] = error
        elif role == "user" and replying is not None and (said := _text(content)):
            replying["observation"] = said
            replying = None
    steps = _with_subagents(steps, by_call, subagents.steps)
    for n, step in enumerate(steps):
        step["index"] = n
    return steps


def _with_subagents(steps: list[dict[str, Any]], by_call: dict[str, dict[str, Any]],
                    subagents: list[_SubStep]) -> list[dict[str, Any]]:
    """``steps`` with the sub-agents' steps, each after the parent's call that ran its sub-agent, in order (those of
    a call not found or of none, ``run()``, before the first of the parent's steps that started after them, else at
    the end, as are those with no time). Times compare as text: Inspect writes one log's in one ISO form and offset."""
    after: dict[str | None, list[dict[str, Any]]] = {}
    for sub in subagents:
        after.setdefault(sub.spawner if sub.spawner in by_call else None, []).append(sub.step)
    following = {id(by_call[spawner]): taken for spawner, taken in after.items() if spawner is not None}
    unplaced = [s for s in after.get(None, []) if s.get("started_at")]
    taken, placed = 0, []
    for step in steps:  # both in time order: merged
        while (taken < len(unplaced) and step.get("started_at")
               and str(step["started_at"]) > str(unplaced[taken]["started_at"])):
            placed.append(unplaced[taken])
            taken += 1
        placed += [step, *following.get(id(step), ())]
    return placed + unplaced[taken:] + [s for s in after.get(None, []) if not s.get("started_at")]


def score_value(value: Any) -> float | None:
    """A score's value as a number (Inspect's ``value_to_float``), or None: a dict or list of values, a word it does
    not read, NaN."""
    if isinstance(value, bool):
        return float(value)
    if isinstance(value, (int, float)):
        return float(value) if math.isfinite(value) else None
    if isinstance(value, str):
        if (known := _SCORE_LETTERS.get(value, _SCORE_WORDS.get(value.lower()))) is not None:
            return known
        try:
            number = float(value)
        except ValueError:
            return None
        return number if math.isfinite(number) else None
    return None


def _verdict(scores: dict[str, Any], ctx: Context) -> tuple[str | None, float | None, Outcome]:
    """The scorer that judges the run, its reward and the outcome (see the module docstring)."""
    for scorer, score in scores.items():
        reward = score_value(as_dict(score).get("value"))
        if reward is not None:
            return scorer, reward, outcome_of_reward(reward, ctx) if 0.0 <= reward <= 1.0 else Outcome.unknown
    return None, None, Outcome.unknown


def _run_id(record: dict[str, Any], spec: dict[str, Any]) -> str:
    if isinstance(record.get("uuid"), str) and record["uuid"]:
        return record["uuid"]
    eval_key = next((str(spec[k]) for k in ("eval_id", "task_id", "run_id") if spec.get(k)), None)
    if eval_key is None:
        raise RecordError("an Inspect AI sample with neither its uuid (Inspect before 0.3.70) nor its eval's id: "
                          "read it from its log (the .eval or .json file) rather than alone")
    return f"{eval_key}.{record.get('id')}.{record.get('epoch')}"


def _invalidated(record: dict[str, Any]) -> dict[str, Any]:
    """Who declared the sample's result invalid, when and why (``invalidation``, ``inspect_ai.log.invalidate_samples``,
    Inspect 0.3.154+), else ``{}``. Inspect reuses no such sample (``eval-set`` and ``eval-retry`` run it again, as
    they do a sample that errored), but its scores stay in the log as they were: read as they are, the run kept the
    verdict a human had withdrawn (a success, ``C``, for a sample invalidated for reward hacking). Any
    ``invalidation`` but null is one, as Inspect takes it (``invalidation is not None``), even with none of these."""
    if record.get("invalidation") is None:
        return {}
    invalidation = as_dict(record["invalidation"])
    return {key: invalidation[key] for key in ("author", "reason", "timestamp", "metadata") if invalidation.get(key)} \
        or {"invalidated": True}


def _score_reasons(scores: dict[str, Any]) -> dict[str, str]:
    """Why each abnormal score is so: ``Score.reason`` (Inspect after 0.3.260; 0.3.245-0.3.260 wrote
    ``metadata.unscored_reason``, which later Inspect lifts into ``reason``). Inspect's ``ScoreReason`` blames the
    model under test for ``refusal``, ``no_response`` and ``invalid_response_format`` and the instrument for
    ``grader_failed`` and ``scoring_failed``; a scorer may write its own word. The verdict stays the score's value's:
    a reason comes with ``INCORRECT`` (``invalid_response_format`` of a math or choice scorer) as with NaN, and a NaN
    score, one Inspect leaves out of its metrics, stays ``unknown``: a refusal is the model's, but whether it was the
    right answer (a harmful request's) is the scorer's to say, and a grader's failure says nothing of the run."""
    reasons = {name: as_str(as_dict(score).get("reason"))
               or as_str(as_dict(as_dict(score).get("metadata")).get("unscored_reason"))
               for name, score in scores.items()}
    return {name: reason for name, reason in reasons.items() if reason}


def _fallbacks(record: dict[str, Any]) -> list[dict[str, Any]]:
    """The sample's ``model_fallbacks`` as Inspect writes them (``{"model", "fallback_model", "count"}``, one per
    pair, ``count`` the generate calls the fallback served, 1 by default): an entry of another shape (a name not a
    string, a count not a whole number) is left out, as no name a model id could be made of."""
    kept = []
    for entry in as_list(record.get("model_fallbacks")):
        entry = as_dict(entry)
        model, fallback, count = as_str(entry.get("model")), as_str(entry.get("fallback_model")), entry.get("count", 1)
        if model and fallback and isinstance(count, int) and not isinstance(count, bool) and count > 0:
            kept.append({"model": model, "fallback_model": fallback, "count": count})
    return kept


def _model(record: dict[str, Any], spec: dict[str, Any], events: list[Any]) -> str | None:
    """The model that ran the sample: the eval's model, unless a fallback of it (``model_fallbacks``) served over
    half of its calls (its ``model`` events, at least the fallbacks' own count), then that fallback. Inspect records
    a fallback for any generate of the sample, a grader's or another role's model as well, and each is a call the
    provider declined and handed on (Anthropic's server-side refusal fallback): a grader's fallback, or one call of
    many, had renamed the run (review SMALLB 1). The fallback names the API's model (``claude-...``, the eval
    ``anthropic/claude-...``), so the eval's provider prefix is put before the one that ran."""
    requested = as_str(spec.get("model"))
    if requested:
        served: dict[str, int] = {}
        for entry in _fallbacks(record):
            if requested == entry["model"] or requested.endswith("/" + entry["model"]):
                served[entry["fallback_model"]] = served.get(entry["fallback_model"], 0) + entry["count"]
        calls = max(sum(served.values()), sum(1 for e in events if as_dict(e).get("event") == "model"
                                               and as_dict(e).get("model") == requested))
        if served and 2 * max(served.values()) > calls:
            fallback = max(served, key=served.__getitem__)
            provider = requested.rpartition("/")[0]
            return fallback if "/" in fallback or not provider else f"{provider}/{fallback}"
        return requested
    output = as_dict(record.get("output"))
    if isinstance(output.get("model"), str) and output["model"]:
        return output["model"]
    return next(iter(as_dict(record.get("model_usage"))), None)


def _tokens(usage: dict[str, Any]) -> int | None:
    counts = [u.get("total_tokens") for u in usage.values() if isinstance(u, dict)]
    return sum(c for c in counts if isinstance(c, int)) or None


def _operator_stopped(events: list[Any]) -> bool:
    """Whether an operator stopped the sample (its ``sample_limit`` event of type ``operator``): Inspect records one
    for each of the interrupt's actions, but only "score" also sets the sample's ``limit``; "error" leaves the sample
    error ``RuntimeError('Sample errored: interrupted by operator')``, "cancel" a ``CancelledError``, neither the
    agent's failure nor a verdict (the sample is not scored)."""
    return any(isinstance(e, dict) and e.get("event") == "sample_limit" and e.get("type") == "operator"
               for e in events)


def _failure(record: dict[str, Any], outcome: Outcome, scorer: str | None, steps: list[dict[str, Any]],
             events: list[Any]) -> tuple[Outcome, Failure | None]:
    """The outcome after the sample's error or limit, and why it failed (see the module docstring)."""
    error, limit = as_dict(record.get("error")), as_dict(record.get("limit"))
    if error:
        said = str(error.get("message") or "").strip() or short(str(error.get("traceback") or ""), 2000)
        if _RECOVERED.search(traceback := str(error.get("traceback") or "")):  # the eval crashed, cutting the agent off
            outcome, cause, said = Outcome.infra_error, _CRASHED, traceback.strip()  # more than "CancelledError()"
        elif _operator_stopped(events):  # a person stopped it ("error" or "cancel"): unscored, no verdict
            return Outcome.unknown, None
        elif not steps:  # before the model's first word: its sandbox never started, or Inspect itself failed
            outcome, cause = Outcome.infra_error, _BEFORE_ANY_STEP
        else:
            outcome = error_outcome(said, by_tool=_TOOL_CODE in str(error.get("traceback") or ""))
            cause = INFRA_CAUSE if outcome is Outcome.infra_error else \
                "the sample raised an error, which halted it (its log's sample error)"
        return outcome, Failure(error=short(said or "an error", 2000, keep="head"), cause=cause)
    if limit and outcome is not Outcome.success:
        kind = str(limit.get("type") or "a")
        if kind == "operator" and outcome is Outcome.unknown:  # a person stopped it and no scorer judged: no verdict
            return outcome, None
        said = str(limit.get("reason") or f"{kind} limit reached ({limit.get('limit')})")
        cause = _OPERATOR_STOP if kind == "operator" else f"the run hit its {kind} limit"
        return Outcome.failure, Failure(error=short(said, 2000, keep="head"), cause=cause)
    if outcome is Outcome.failure:
        value = as_dict(as_dict(record.get("scores")).get(scorer)).get("value")
        said = f"scored {value!r} by {scorer}"
        if (last := last_tool_error(steps)) is not None:
            said += f"; last failing step {last['index']} ({last['action']}): {last['error']}"
        return outcome, Failure(error=short(said, 2000, keep="head"))
    return outcome, None


def _tools(events: list[Any], steps: list[dict[str, Any]]) -> list[str]:
    """The tools the model was offered (its first model event's), then any other a step called."""
    offered = next((e["tools"] for e in events if isinstance(e, dict) and e.get("event") == "model"
                    and isinstance(e.get("tools"), list)), [])
    names = [str(t["name"]) for t in offered if isinstance(t, dict) and t.get("name")]
    return list(dict.fromkeys([*names, *(s["action"] for s in steps if s["action"] != "respond")]))


def to_trajectory(record: Any, ctx: Context) -> Trajectory:
    if not _is_sample(record):
        if _is_log(record):  # a log's samples are its runs (split); a log met here has none
            raise RecordError(_no_samples(record.get("status")))
        raise RecordError("not an Inspect AI sample: expected an object with 'id', 'epoch', 'input' and 'messages'")
    spec = as_dict(record.get(EVAL_AT)) if EVAL_AT in record else _spec_beside(ctx.source)
    transcript = as_dict(record.get("transcript"))  # some 2024 logs: the events and attachments are in it
    attachments = as_dict(record.get("attachments")) or as_dict(transcript.get("content"))
    task = _task(_resolved(record.get("input"), attachments))
    if not task:
        raise RecordError(f"an Inspect AI sample ({record.get('id')!r}, epoch {record.get('epoch')}) whose input "
                          "says nothing: no task")
    events = as_list(record.get("events")) or as_list(transcript.get("events"))
    messages = [_resolved(m, attachments) for m in as_list(record.get("messages")) if isinstance(m, dict)]
    steps = _steps(messages, _tool_times(events), _subagents(events, attachments, messages))
    error = as_dict(record.get("error"))
    if error and steps and steps[-1]["action"] != "respond" and "observation" not in steps[-1]:
        steps[-1]["error"] = f"no result: the sample's error halted the run here: {error.get('message') or 'an error'}"
    scores = as_dict(record.get("scores")) or ({"score": record["score"]} if isinstance(record.get("score"), dict)
                                               else {})  # Inspect before July 2024: one ``score``
    scorer, reward, outcome = _verdict(scores, ctx)
    outcome, failure = _failure(record, outcome, scorer, steps, events)
    invalidated = _invalidated(record)
    if invalidated:
        outcome, reward, failure = Outcome.unknown, None, None
    started = record.get("started_at") or next(
        (e["timestamp"] for e in events if isinstance(e, dict) and e.get("timestamp")), None) or spec.get("created")
    packages = as_dict(spec.get("packages"))
    metadata: dict[str, Any] = {
        "source_format": NAME,
        "eval_id": spec.get("eval_id") or spec.get("task_id"),
        "run_id": spec.get("run_id"),
        "epoch": record.get("epoch"),
        "scores": {name: as_dict(score).get("value") for name, score in scores.items()},
        "scored_by": scorer,
        "score_reasons": _score_reasons(scores),
        "model_fallbacks": _fallbacks(record),
        "limit": record.get("limit"),
        "total_time": record.get("total_time"),
        "working_time": record.get("working_time"),
        "tokens": _tokens(as_dict(record.get("model_usage"))),
        "invalidated": invalidated,
    }
    return build({
        "trajectory_id": f"{ID_PREFIX}:{safe_id(_run_id(record, spec))}",
        "task": clip_task(task),
        "task_id": str(record.get("id"))[:200],
        "task_family": str(spec["task"])[:200] if spec.get("task") else None,
        "model_id": _model(record, spec, events),
        "tool_versions": {"inspect_ai": str(packages["inspect_ai"])} if packages.get("inspect_ai") else {},
        "tools_available": _tools(events, steps),
        "outcome": outcome,
        "reward": reward,
        "failure": failure,
        "steps": steps,
        "metadata": {k: v for k, v in metadata.items() if v not in (None, {}, "", [])},
        **({"created_at": started} if started else {}),
    }, ctx)

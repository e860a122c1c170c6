"""``mini-swe-agent``: one ``<instance_id>.traj.json`` per run (SWE-agent/mini-swe-agent, 1.x and 2.x).

Shapes read (from mini-swe-agent's own saving code):
- 1.x ``save_traj`` and 2.x ``DefaultAgent.serialize``: ``{"info", "messages",
  "trajectory_format": "mini-swe-agent-1[.1]", "instance_id"?}``;
- a bare JSON array of messages (what ``mini`` and the tests write as
  ``*.traj.json`` without the envelope): one run, ``split`` wraps it;
- messages as chat completions (``content`` a string or a list of
  ``{"type": "text", "text"}`` parts, Anthropic style), as tool calls
  (``tool_calls`` + ``role: "tool"`` replies), or as OpenAI Responses API
  items (a whole ``{"object": "response", "output": [...]}`` per model turn,
  ``function_call_output`` replies), plus the final ``role: "exit"`` message.

Mapping
- task: the first user message is the rendered ``instance_template``; when
  the dump saved that template (``info.config.agent.instance_template``) the
  text standing for ``{{task}}`` is cut out of it, else the instruction is
  found by the known delimiters (``<pr_description>``, "Please solve this
  issue: ... You can execute bash commands", see ``_prompts``), else the
  whole message.
- task_id = ``instance_id`` (else, ``mini-extra swebench-single`` saving none, the
  instance its SWE-bench ``sweb.eval.x86_64`` image ``info.config.environment.image``
  names, lowercased as the image is, else the file name before ``.traj.json``);
  task_family = the repository (``marshmallow-code__marshmallow-1343`` ->
  ``marshmallow-code/marshmallow``; ProgramBench's ``eradman__entr.8e2e8b4`` ->
  ``eradman/entr``).
- trajectory_id = ``<model>.<instance_id>.<attempt>`` (the model's name
  without its provider, else ``mini-swe-agent``), the attempt a digest of
  the first model reply's marks: its saved time and provider response id
  (2.x's ``extra``, 1.x's ``timestamp``, a Responses API turn's
  ``created_at`` and ``id``): the same file read from a copy, a re-download
  or a renamed output folder is one run, a save taken mid-run has the
  finished run's id, and two attempts at one instance are two runs. Marks
  that cannot tell two attempts apart (a time in whole seconds and no
  response id: CS 294-264's, ReAct-style files) take the first reply's
  content with them. A run whose replies saved no mark (1.x without them, a first call that failed)
  is told apart by its output folder alone (``config``: the directory above
  the instance directory; a generic output folder, ``results/``,
  ``outputs/``, qualified by the folder above it, ``<system>.results``):
  ``<model>.<instance_id>.<config>``. Each names in ``metadata.former_ids``
  the id its folder gave it before round 27, ``<config>.<instance_id>``,
  which no run with an instance id is given now: ingesting a dump into a
  store written before replaces the run stored under it when it is this
  run (the same content), never another attempt whose folder bore that
  name. A file without ``instance_id`` is named by its path
  (``<grandparent>.<parent>.<file stem>``): Harbor writes every trial's
  ``agent/mini-swe-agent.trajectory.json`` under the same name. The file
  ``mini`` (1.x and 2.x: ``last_mini_run.traj.json``) or ``mini-extra
  swebench-single`` (``last_swebench_single_run.traj.json``) saves every
  session to by default adds the attempt, so that the next session, which
  overwrites it, is a run beside the last, not its replacement (the path
  alone, its id before round 32, is its former id).
- steps: one per action.
  * Tool calls (2.x default): each ``tool_calls`` entry (or Responses API
    ``function_call``) is a step: action = function name, arguments = parsed
    JSON, observation = the reply with the same call id (else the oldest
    unanswered call); the assistant text is the first call's thought.
  * Text actions (1.x, 2.x ``*_textbased``): the command is
    ``extra.actions`` when saved, else found with the config's
    ``action_regex`` (``info.config.model`` / ``info.config.agent``), else
    with the stock fences (```` ```mswea_bash_command ````, ```` ```bash ````,
    ``<mswea_bash_command>``); exactly one match is the action (``bash``,
    ``{"command": ...}``), the rest of the text minus "THOUGHT:" the thought,
    the next user message the observation. No or several matches are what
    the agent itself rejects as a format error: a step with no action whose
    error is the format-error reply.
  * A user message carrying ``extra.actions`` is a command the user typed in
    2.x ``mini``'s human mode (1.x saved those as assistant turns): a ``bash``
    step of its own (thought: typed by the user), the next user message (its
    output) the observation.
  * A user message that answers no action (a format-error nudge) becomes its
    own step with no action (the rejected model output, kept in
    ``extra.model_response``, else 2.x's raw ``extra.response``, a chat
    completion or a whole Responses API response: its text and the calls
    it tried, is its thought); an empty one (1.x's terminating message) is
    dropped.
  * The final ``exit`` message (the submission, or the crash) is the last
    pending step's observation. A run saved with neither an exit message nor
    an exit status (a derived agent's) keeps ``info.submission`` as the
    result of its last turn when that is unanswered (its submitting call).
    Where 2.x's interactive agent answered a submitting call with its "action
    was not executed" placeholder and the user then set a new task or switched
    to human mode (the prompt to finish), that answer is the call's result: it ran.
    That call is the first placeholder of its turn (2.x stops at the call whose
    output submits and pads the rest), whatever its command spells.
  * An observation loses the terminal's codes, also inside the strings of
    ``mini.yaml``'s JSON observation (``commands.without_terminal_codes``).
  * CS 294-264 homework agents (mini-swe-agent-derived ReAct scaffolds) write
    their calls as text, ``----BEGIN_FUNCTION_CALL----`` name, ``----ARG----``
    name ``----VALUE----`` value pairs: action = the name, arguments = the pairs
    (so are SWE-agent's XML calls, ``<function=name><parameter=name>value``, in
    SWE-smith's trajectories read as this format, closed or cut at the stop
    sequence). Such a call counts only where the agent ran it: where the reply
    is the agent's format error (its ``format_error_template``, 2.x's
    ``interrupt_type: FormatError``; a model writing its own call syntax in
    stock mini-swe-agent), the turn is that format error, as above.
    Some save only their turns and replies as ``messages`` (no system prompt,
    no task) or none at all, and the whole conversation as a text log in
    ``context`` (``|MESSAGE(role="user", id=1)|`` blocks): that log is then
    the conversation read.
  * A ``system`` message after the task is a tool reply with no call id when
    it is the way mini-swe-agent-derived homework agents (CS 294-264) save
    their tools' output: worded as theirs (``Result:\n<output>``, ``Tool
    '<name>' error: ...``, ``Format error:``, ``ParserError:``), or in a run
    with no ``user`` or ``tool`` message after the task. Any other (a
    step-limit reminder in an ordinary run) is no reply; the system prompt
    comes before the task.
  Timestamps (``extra.timestamp``, 1.x ``timestamp``, else the API
  response's ``created``) give started_at/ended_at; the first one is
  created_at (else the file's modification time).
- Step.error: the harness's ``<exception>`` (or ``exception_info``), else a
  non-zero return code (``<returncode>``, the JSON observation of ``mini.yaml``,
  or ``extra.returncode``): the decisive output line (last exception line,
  else last error-looking line, else last line) plus "exit code N". Exit code
  1 with no output is the usual "no match"/"false" of grep, test and diff and
  is not an error; exit code 0 never is. A 1.x "timed out and has been
  killed" reply is an error. So is a derived ReAct agent's ``Tool '<name>'
  error:``, its format-error (``Format error:``, ``ParserError:``) and
  backtrack notices, and a ``Result:`` (it
  keeps no return code) whose output opens as a failure (``error:``, a
  traceback, the shell's own complaint).
- passed over (``side_file``): SWE-bench's predictions and reports, ProgramBench's
  ``<instance_id>.eval.json`` (its verdict, read with ``--outcomes``); by a walk, unsaid
  (``side_path``): what a ProgramBench instance keeps beside its run (its solution's
  ``submission.tar.gz``, a leaderboard submission's ``submission.tar.gz.url`` / ``.sha256``,
  ``submission.ref.yaml``, and its evaluation's raw log ``<id>.eval.log.json`` or its
  ``.url`` / ``.sha256``).
- outcome: there is no test result in these dumps. ``Submitted`` only means a
  patch was handed in; it maps to ``success`` (metadata ``outcome_basis`` says
  "submitted, not evaluated"), except an empty patch for a SWE-bench-named
  instance, which cannot resolve it: ``failure``. A ProgramBench run (``mini-extra
  programbench``: ``info.config.agent_type`` its ``ProgramBenchAgent``, or a task id
  ``owner__repo.<commit>``) hands in no patch: its runner archives the workspace
  (``submission.tar.gz``, what ``programbench eval`` scores) and the agent submits
  with a bare ``echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT``, so its ``submission``
  is always empty. Agent-side stops (LimitsExceeded, TimeExceeded,
  RepeatedFormatError, TimeoutExpired, FormatError, ...) -> ``failure``; a
  human stop (UserInterruption, KeyboardInterrupt) or no status -> ``unknown``.
  Anything else is an exception of the harness or the model API
  (InternalServerError, Timeout = ``litellm.Timeout``, RateLimitError, ...)
  -> ``infra_error``, unless its saved traceback (2.x's exit message's
  ``extra.traceback``, 1.x's ``info.traceback``) shows it raised at the
  new-limits prompt, in handling of the agent's own LimitsExceeded /
  TimeExceeded: up to 2.3.0 an unattended ``mini`` asked for new limits with no
  terminal and ended on ``EOFError``. That is the stop's ``failure``, its error
  as a recorded stop's (``LimitsExceeded: last failing step ...``);
  ``exit_status`` as saved. A model call failing after new limits were given is
  chained to the stop too, and stays ``infra_error``.
- failure (when not success): error = exit status + the exception message
  (``info.exception_str``; 2.x's CLI keeps it only in the ``exit`` message's
  ``extra.exception_str``; 1.x's batch runner saved it as the ``submission``), or
  else the last failing step's error; infra errors get cause "infrastructure"
  (``failure_of``, which Harbor's conversion of a run uses too).
- tools_available: ``bash`` and every other tool the steps call (the dump keeps no tool list; a
  tool-calling fork's own tools are known by the calls to them).
- model_id = ``info.config.model.model_name`` (``info.config.model`` where a derived
  agent writes the name there; else the API's response model);
  tool_versions = ``{"mini-swe-agent": info.mini_version}``; metadata keeps
  exit_status, submission length, api_calls, cost and the config name.

Code: this module is the adapter protocol, the run-level fields (ids, task,
outcome, failure) and the exit-status vocabulary; ``_mini_swe_agent.messages``
reads one message whatever model API wrote it, ``_mini_swe_agent.commands``
finds a text turn's command and a reply's error, ``_mini_swe_agent.steps``
pairs actions with their replies.
"""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path
from typing import Any, Iterator

from trajsearch.model import FORMER_IDS, MAX_FILTER_VALUE_CHARS, UNEVALUATED, Failure, Outcome, Trajectory

from . import _prompts
from ..outcomes import is_programbench_eval
from ._agent_cli import CONTEXT_CAUSE
from ._swebench import side_file as swebench_side_file
from ._common import (
    Context, RecordError, as_dict, at_commit, build, clip_task, file_stem, instance_repo, json_object, list_field,
    last_tool_error, named_path, run_directory, safe_id, short, with_former_id,
)
from ._mini_swe_agent.messages import logged_messages, normalise
from ._mini_swe_agent.commands import (
    DEFAULT_ACTION_REGEXES, FENCES, STOCK_FORMAT_ERROR_TEMPLATE, SUBMIT, format_error_opening,
)
from ._mini_swe_agent.steps import hand_in, steps_of

NAME = "mini-swe-agent"
#: A file is one run: the reader hands over its whole JSON document.
WHOLE_FILE = True
#: The submit markers and action fences of mini-swe-agent's prompts: a saved message quotes them in its text.
_PROMPT_MARKS = "|".join((*FENCES, SUBMIT.pattern))
#: Searched in a file's first 64 KiB when no record can be parsed from them (see ``detect``): a big or cut JSON
#: document (it opens with ``{`` or ``[``) holding the envelope's keys, or a message (``"content"`` or ``"text"``)
#: quoting the prompt's marks (a bare message list). A Markdown page, a prompt template's YAML or an issue that
#: merely quotes a mark or the envelope (mini-swe-agent's own docs and ``config/*.yaml``) is no run.
SIGNATURE = re.compile(
    r'\A\ufeff?\s*[\[{][\s\S]*?(?:"trajectory_format"\s*:\s*"mini-swe-agent|"mini_version"\s*:'
    r'|"agent_type"\s*:\s*"minisweagent'
    rf'|"(?:content|text)"\s*:\s*"(?:[^"\\]|\\.)*?(?:{_PROMPT_MARKS}))'
)
#: File names that imply this format when the content says nothing.
SUFFIXES = (".traj.json",)
#: Where the CLIs (1.x and 2.x) save a session by default (``mini``'s and ``mini-extra swebench-single``'s
#: ``DEFAULT_OUTPUT_FILE`` in the global config folder), with no instance id: every session overwrites it.
CLI_SESSION_FILES = frozenset({"last_mini_run", "last_swebench_single_run"})
#: That global config folder (``~/.config/mini-swe-agent``): walked though hidden, so that ingesting a home folder
#: finds those sessions (its ``.env`` and ``mini_task_history.txt`` are passed over, as anywhere).
SESSION_FOLDERS = (".config/mini-swe-agent",)

SUCCESS_STATUSES = {"Submitted"}
#: Stops caused by the agent's own behaviour (budget, hung command, bad format).
AGENT_FAILURE_STATUSES = {
    "LimitsExceeded",
    "TimeExceeded",
    "RepeatedFormatError",
    "TimeoutExpired",
    "ExecutionTimeoutError",
    "FormatError",
    "ContextWindowExceededError",
    "CostLimitExceeded",
    "StepLimitExceeded",
}
#: Stops by the person running the agent: no verdict on the agent.
HUMAN_STOPS = {"UserInterruption", "KeyboardInterrupt"}
#: Why a run whose exit status is none of the above (the exception mini-swe-agent caught and exited on) failed.
HARNESS_CAUSE = "infrastructure: the harness or model API failed, not the agent"


def side_file(record: Any) -> str | None:
    """The adapter hook: SWE-bench's predictions and reports beside the runs, and ProgramBench's evaluation of a run
    (``programbench eval`` writes ``<instance_id>.eval.json`` beside the trajectory)."""
    if is_programbench_eval(record):
        return ("a ProgramBench evaluation (one instance's test results), not a run: pass it (or its folder) with "
                "--outcomes to join its verdict")
    return swebench_side_file(record)


#: What ``mini-extra swebench`` writes beside ``preds.json`` in its output folder (``run/benchmarks/swebench.py``,
#: 1.x and 2.x): its log, and the exit status of each instance (``exit_statuses_<time.time()>.yaml``): no run.
_RUN_SIDE_FILE = re.compile(r"minisweagent\.log|exit_statuses_\d+(?:\.\d+)?\.yaml")


#: What a ProgramBench instance keeps beside its run (``<id>/<id>.traj.json``), by the file's name (``{id}``: the
#: instance's): what each is. The workspace ``mini-extra programbench`` archives (``run/benchmarks/programbench.py``
#: ``copy_submission``) and, in a leaderboard submission (``programbench submit package``), the address and digest of
#: its copy hosted elsewhere, or a git reference; and the evaluation's raw log (``eval.json`` split into a light
#: ``eval.json``, read with ``--outcomes``, and a heavy ``<id>.eval.log.json``: hosted elsewhere too).
_PROGRAMBENCH_BESIDE = {
    "submission.tar.gz": "the workspace the agent left, its solution, what programbench eval scores",
    "submission.tar.gz.url": "the address of the solution's archive, hosted elsewhere",
    "submission.tar.gz.sha256": "the digest of the solution's archive, hosted elsewhere",
    "submission.ref.yaml": "a git reference of the solution",
    "{id}.eval.log.json": "the evaluation's raw log and failure text",
    "{id}.eval.log.json.url": "the address of the evaluation's raw log, hosted elsewhere",
    "{id}.eval.log.json.sha256": "the digest of the evaluation's raw log, hosted elsewhere",
}


def side_path(path: Path, fmt: str | None) -> str | None:
    """The adapter hook (see ``adapters/__init__``): the log and exit statuses of a ``mini-extra swebench`` run,
    beside its instances' ``<id>/<id>.traj.json`` (the runs, each with its exit status in its ``info``); what a
    ProgramBench instance keeps beside its run (``_PROGRAMBENCH_BESIDE``)."""
    if fmt is None and _RUN_SIDE_FILE.fullmatch(path.name):
        return f"mini-swe-agent's {path.name} of a run set, not a run: the runs are its <instance>/<instance>.traj.json"
    instance = path.parent.name
    what = _PROGRAMBENCH_BESIDE.get(path.name) or (_PROGRAMBENCH_BESIDE.get("{id}" + path.name[len(instance):])
                                                   if path.name.startswith(instance) else None)
    if fmt is None and what is not None and (path.parent / f"{instance}.traj.json").is_file():
        return (f"ProgramBench's {path.name} of instance {instance} ({what}), not a run: the run is "
                f"{instance}.traj.json beside it")
    return None


def matches(record: Any) -> bool:
    if not isinstance(record, dict):
        return False
    fmt = record.get("trajectory_format")
    if isinstance(fmt, str):
        return fmt.startswith("mini-swe-agent")
    return {"messages", "info", "instance_id"} <= record.keys()


def split(document: Any) -> Iterator[tuple[str, Any]]:
    """One run per file: the envelope itself, or a bare message list wrapped as one."""
    if isinstance(document, list) and document and all(isinstance(m, dict) for m in document):
        if all("messages" in item for item in document):  # several saved runs in one file
            yield from ((f"record {n}", item) for n, item in enumerate(document, 1))
        else:
            yield "file", {"messages": document}
    elif isinstance(document, list):
        raise RecordError("expected a JSON object or a list of chat messages, got an empty or mixed list")
    else:
        yield "file", document


def exit_status_of(info: dict[str, Any], messages: list[Any]) -> str | None:
    """The run's exit status: ``info.exit_status``, else (an unfinished save) the exit message's."""
    status = info.get("exit_status")
    if isinstance(status, str):
        return status
    last = messages[-1] if messages and isinstance(messages[-1], dict) else {}
    status = as_dict(last.get("extra")).get("exit_status")
    return status if isinstance(status, str) else None


#: A traceback whose first exception is the agent's own stop (1.x: ``minisweagent.agents.default.LimitsExceeded``;
#: 2.x: ``minisweagent.exceptions.LimitsExceeded``, ``TimeExceeded`` its subclass up to 2.3.0).
_STOP_FIRST = re.compile(r"^minisweagent\.[\w.]*\b(LimitsExceeded|TimeExceeded)\b.*\n\s*\n"
                         r"During handling of the above exception, another exception occurred:", re.M)
#: A traceback whose last exception was raised at the interactive agent's new-limits prompt: its last frame's line
#: ``int(input("New step limit: "))`` (or ``cost``), then at most Python's ``^~`` markers, then the exception.
_ENDS_AT_PROMPT = re.compile(r'\binput\("New (?:step|cost) limit: "\)[^\n]*\n(?:[ \t]*[\^~]+\s*\n)*'
                             r"[ \t]*[\w.]+(?::[^\n]*)?\s*\Z")


def _exit_message(messages: list[Any]) -> dict[str, Any]:
    """2.x's closing ``exit`` message (its ``extra`` holds the exception's text and traceback), else ``{}``."""
    return next((m for m in reversed(messages) if isinstance(m, dict) and m.get("role") == "exit"), {})


def _traceback(info: dict[str, Any], messages: list[Any]) -> str:
    """The traceback the run saved: 2.x's ``exit`` message's ``extra.traceback``, 1.x's ``info.traceback``."""
    exit_message = _exit_message(messages)
    said = as_dict(exit_message.get("extra")).get("traceback") or info.get("traceback")
    return said if isinstance(said, str) else ""


def limit_before_prompt_exit(status: str | None, info: dict[str, Any], messages: list[Any]) -> str | None:
    """The agent's own stop (``LimitsExceeded``, ``TimeExceeded``) when the run's other exit status was raised at the
    new-limits prompt, as its traceback shows: up to 2.3.0 the interactive agent answers the stop by asking for new
    limits with ``input()``, which with no terminal (an unattended ``mini -y``) raises ``EOFError``. Its budget ended
    the run, not the harness (2.3.1+ records ``LimitsExceeded`` itself, mini-swe-agent #850). None for a known
    status, and for an exception of the model call the agent makes once new limits were given (it is chained to the
    stop too, but is the harness's or the model API's)."""
    if not status or status in SUCCESS_STATUSES | AGENT_FAILURE_STATUSES | HUMAN_STOPS:
        return None
    traceback = _traceback(info, messages)
    first = _STOP_FIRST.search(traceback)
    return first.group(1) if first and _ENDS_AT_PROMPT.search(traceback) else None


def _exception_text(status: str, info: dict[str, Any], messages: list[Any]) -> str | None:
    """The text of the exception the run exited on, where this version saved it: ``info.exception_str`` (a batch
    runner's), 2.x's ``exit`` message (``handle_uncaught_exception`` puts ``exception_str`` in its ``extra``, and
    ``serialize`` copies only the status and the empty submission into ``info``), or 1.x's ``submission`` (its batch
    runner saved ``str(e)`` there; a submitted run's submission is its patch, no exception)."""
    exit_message = _exit_message(messages)
    submission = info.get("submission") if status not in SUCCESS_STATUSES else None
    said = next((t for t in (info.get("exception_str"), as_dict(exit_message.get("extra")).get("exception_str"),
                             submission) if isinstance(t, str) and t.strip()), None)
    return said.strip() if said else None


def failure_of(status: str, info: dict[str, Any], messages: list[Any], otherwise: str | None = None,
               stop: str | None = None) -> Failure | None:
    """The failure of a run that exited on ``status``: the status and the exception's text the run saved
    (:func:`_exception_text`), else ``otherwise`` (what the caller knows of it); None when neither says anything.
    Where the agent's own ``stop`` lies behind the status (:func:`limit_before_prompt_exit`), the stop's failure,
    worded as for a run that records the stop (``otherwise``: its last failing step), so one failure mode reads
    alike; the prompt's exception stays the saved ``exit_status``. The one judge for this reader and for Harbor's
    conversion, which keeps the raw file beside it (``atif``)."""
    if stop:
        return Failure(error=f"{stop}: {otherwise or 'no error output recorded'}")
    detail = _exception_text(status, info, messages)
    detail = short(detail, 500, keep="head") if detail else otherwise
    if detail is None:
        return None
    outcome = outcome_for(status)
    return Failure(error=f"{status}: {detail}",
                   cause=HARNESS_CAUSE if outcome is Outcome.infra_error
                   else CONTEXT_CAUSE if status == "ContextWindowExceededError"  # litellm's: the one rule's cause
                   else None)


def outcome_for(exit_status: str | None) -> Outcome:
    """Exit status -> outcome (see the module docstring for why)."""
    if not exit_status or exit_status in HUMAN_STOPS:
        return Outcome.unknown
    if exit_status in SUCCESS_STATUSES:
        return Outcome.success
    if exit_status in AGENT_FAILURE_STATUSES:
        return Outcome.failure
    return Outcome.infra_error


task_family = instance_repo  # ``owner__repo-123`` -> ``owner/repo``

#: The agent class of mini-swe-agent's ProgramBench runner (``minisweagent.run.benchmarks.programbench``).
_PROGRAMBENCH_AGENT = ".ProgramBenchAgent"


def hands_in_patch(info: dict[str, Any], instance_id: str) -> bool:
    """Whether the run's submission is a patch to a SWE-bench-style instance, so that an empty one hands in nothing.
    A ProgramBench run's is the workspace its runner archives, never a patch (see the module docstring)."""
    config = info.get("config") if isinstance(info.get("config"), dict) else {}
    agent_type = config.get("agent_type")
    if isinstance(agent_type, str) and agent_type.endswith(_PROGRAMBENCH_AGENT):
        return False
    return task_family(instance_id) is not None and not at_commit(instance_id)


#: SWE-bench's image of an instance (``run/benchmarks/swebench.py`` ``get_swebench_docker_image_name``): the id with
#: ``__`` written ``_1776_`` (docker allows no double underscore), lowercased; ``docker://`` before it for singularity;
#: a tag, a digest (``@sha256:...``) or both after it.
_SWEBENCH_IMAGE = re.compile(r"(?:^|/)sweb\.eval\.x86_64\.([a-z0-9][a-z0-9_.-]*)(?::[\w.-]+)?(?:@sha256:[0-9a-f]+)?$")


def image_instance(info: dict[str, Any]) -> str | None:
    """The SWE-bench instance of a run saved without ``instance_id``, named by its environment's image: ``mini-extra
    swebench-single`` saves none (its default file, ``last_swebench_single_run.traj.json``, names no instance), but the
    image it runs the instance in does (lowercased, as the image's name is). None for a name no task id may hold:
    the run keeps the file's name rather than being refused."""
    config = info.get("config") if isinstance(info.get("config"), dict) else {}
    environment = config.get("environment") if isinstance(config.get("environment"), dict) else {}
    image = environment.get("image")
    found = _SWEBENCH_IMAGE.search(image) if isinstance(image, str) else None
    instance = found.group(1).replace("_1776_", "__") if found else None
    return instance if instance and len(instance) <= MAX_FILTER_VALUE_CHARS else None


def _action_regexes(info: dict[str, Any]) -> tuple[str, ...]:
    """The dump's own ``action_regex`` (``info.config.model`` / ``info.config.agent``), else the stock fences."""
    config = info.get("config") if isinstance(info.get("config"), dict) else {}
    own = [
        (config.get(part) or {}).get("action_regex")
        for part in ("model", "agent")
        if isinstance(config.get(part), dict)
    ]
    return tuple(r for r in own if isinstance(r, str) and r) or DEFAULT_ACTION_REGEXES


def _format_error(info: dict[str, Any]) -> re.Pattern[str] | None:
    """How the run's reply to a malformed turn opens: from its own ``format_error_template``
    (``info.config.agent`` / ``info.config.model``), else from the stock one."""
    config = info.get("config") if isinstance(info.get("config"), dict) else {}
    own = [(config.get(part) or {}).get("format_error_template") for part in ("agent", "model")
           if isinstance(config.get(part), dict)]
    template = next((t for t in own if isinstance(t, str) and t), STOCK_FORMAT_ERROR_TEMPLATE)
    return format_error_opening(template)


def _model_id(info: dict, messages: list[Any]) -> str | None:
    model = (((info.get("config") or {}).get("model") or {}) if isinstance(info.get("config"), dict) else {})
    if isinstance(model, dict) and model.get("model_name"):
        return str(model["model_name"])
    if isinstance(model, str) and model.strip():  # a derived agent's config naming the model itself
        return model.strip()
    for msg in messages:
        if not isinstance(msg, dict):
            continue
        extra = msg.get("extra") if isinstance(msg.get("extra"), dict) else {}
        response = extra.get("response") or {}
        if isinstance(response, dict) and response.get("model"):
            return str(response["model"])
        if msg.get("object") == "response" and msg.get("model"):
            return str(msg["model"])
    return None


def tools_available(steps: list[dict]) -> list[str]:
    """``bash``, every mini-swe-agent run's tool, and the others its steps call (a tool-calling fork's own,
    ``search_hybrid``, ``deepen_file``): the dump saves no list of the tools the model was given, but a call
    names one it was."""
    return list(dict.fromkeys(["bash", *(str(s["action"]) for s in steps if s.get("action"))]))


def _opens_with_task(messages: list[Any]) -> bool:
    """Whether a user message (the task) comes before the first model turn."""
    roles = [normalise(m)["role"] for m in messages if isinstance(m, dict)]
    return "user" in roles[:roles.index("assistant") if "assistant" in roles else len(roles)]


def _conversation(record: dict[str, Any]) -> list[Any]:
    """The saved messages; but where a CS 294-264 homework agent saved them without their opening (the system prompt
    and the task: its turns and replies only) or not at all, the log of the whole conversation it rendered into
    ``context``, which has them. A log with no ``assistant`` message is none to read: an agent that logged its
    model's turns under another role (hw4-mjpreigh: ``user``, its tools' output as ``system``)."""
    messages = list_field(record, "messages", "a list of chat messages")
    logged = logged_messages(record.get("context"))
    if _opens_with_task(messages) or not any(m["role"] == "assistant" for m in logged):
        return messages
    return logged


def _task(messages: list[Any], info: dict[str, Any], context: Any) -> str:
    if not messages and isinstance(context, str) and context.strip():
        raise RecordError("field 'messages' is empty and its text log 'context' holds no model turn (no message "
                          "with role \"assistant\"), so no conversation to read")
    if not messages:  # a harness that saved its run's info but not its conversation
        raise RecordError("field 'messages' is empty: the run saved no conversation, so no task")
    first = next((m for m in messages if isinstance(m, dict) and normalise(m)["role"] == "user"), None)
    content = normalise(first)["text"] if first is not None else ""
    if not content.strip():
        raise RecordError("missing field 'messages': no user message holding the task")
    config = info.get("config") if isinstance(info.get("config"), dict) else {}
    agent = config.get("agent") if isinstance(config.get("agent"), dict) else {}
    text = _prompts.instruction(content, (agent.get("instance_template"),), ("task",))
    # the PR description's own heading; the heading of the CS 294-264 homework scaffold
    text = re.sub(r"^\s*(?:Consider the following PR description:|Please solve the following GitHub issue:)\s*", "",
                  text, flags=re.I)
    if not text.strip():
        raise RecordError("empty task: the first user message has no PR description")
    return clip_task(text.replace("\r\n", "\n").strip())


#: Output folders named for what they hold, not for the agent or configuration that wrote them: ``results/`` is the
#: default of many harness scripts (every CS 294-264 homework agent writes ``results/<id>/<id>.traj.json``), so two
#: systems' runs of one instance would share ``results.<id>``. The folder above one names the system.
_GENERIC_RUN_DIRS = frozenset({"results", "outputs", "output"})


def config_name(source: Path, instance_id: str) -> str:
    """The agent-configuration directory: ``<config>/<instance_id>/<file>`` or ``<config>/<file>``
    (``<system>/trajs/...`` in SWE-bench experiments: the system's); a generic output folder is qualified by the
    folder above it (``<system>.results``)."""
    name = run_directory(source, instance_id)
    if name.lower() not in _GENERIC_RUN_DIRS:
        return name or "run"
    system = next(p for p in named_path(source).parents if p.name == name).parent.name
    return f"{system}.{name}" if system else name


def _marks(message: Any) -> tuple[Any, Any]:
    """A saved message's marks of when and by which call the model wrote it: 2.x's ``extra.timestamp`` and
    ``extra.response.id``, 1.x's ``timestamp``, a Responses API turn's ``created_at`` and ``id``."""
    if not isinstance(message, dict):
        return None, None
    if message.get("object") == "response":
        return message.get("created_at"), message.get("id")
    extra = message.get("extra") if isinstance(message.get("extra"), dict) else {}
    response = extra.get("response") if isinstance(extra.get("response"), dict) else {}
    return extra.get("timestamp", message.get("timestamp")), response.get("id")


def _sharp(marks: tuple[Any, Any]) -> bool:
    """Whether marks tell one model call from any other: a response id, or a time finer than whole seconds."""
    when, response_id = marks
    if isinstance(response_id, (str, int)) and not isinstance(response_id, bool) and str(response_id):
        return True
    if isinstance(when, float):
        return not when.is_integer()
    return isinstance(when, str) and re.search(r"\d[.,]\d*[1-9]", when.split("+")[0]) is not None


def attempt_token(messages: list[Any]) -> str | None:
    """What names this attempt at its instance, from the file alone: a digest of the first marked message's marks
    (:func:`_marks`; the first model reply, or the exit message of a run whose first call failed). A folder name is
    the operator's label, which a copy, a re-download or a renamed output folder changes; the first reply is fixed
    once written, so a save taken mid-run and the finished file give the same token, while two attempts at one
    instance (replies at other times, with other response ids) never do. Marks in whole seconds with no response
    id (:func:`_sharp`; CS 294-264's agents mark their system prompt so) are shared by attempts started together,
    so the first model reply joins them whole. ``None`` when no message saved a mark."""
    for message in messages:
        marks = _marks(message)
        if any(isinstance(mark, (str, int, float)) and not isinstance(mark, bool) for mark in marks):
            named = marks if _sharp(marks) else (*marks, _first_reply(messages))
            return hashlib.sha1(json.dumps(named, default=str, sort_keys=True).encode()).hexdigest()[:10]
    return None


def _first_reply(messages: list[Any]) -> Any:
    """The first message the model wrote (an ``assistant`` turn, a Responses API turn), as saved; None if none."""
    return next((m for m in messages if isinstance(m, dict) and (m.get("object") == "response"
                                                                 or normalise(m)["role"] == "assistant")), None)


def run_id(instance_id: str, model_id: str | None, attempt: str) -> str:
    """``<model>.<instance_id>.<attempt>``: readable (the model, as engineers tell runs apart, and the instance) and
    distinct per attempt; the model's provider prefix (``deepseek/``) is left out, as no folder's name held it."""
    label = (model_id or "").rstrip("/").rsplit("/", 1)[-1] or NAME
    return f"{label}.{instance_id}.{attempt}"


def to_trajectory(record: Any, ctx: Context) -> Trajectory:
    if isinstance(record, list):
        record = dict(next(split(record))[1])
    record = json_object(record)
    messages = _conversation(record)
    if record.get("info") is not None and not isinstance(record.get("info"), dict):
        raise RecordError(f"field 'info' must be an object, got {type(record['info']).__name__}")
    info = record.get("info") or {}
    own_id = record.get("instance_id")
    if own_id is not None and (not isinstance(own_id, str) or not own_id):
        raise RecordError("field 'instance_id' must be a non-empty string")
    stem = file_stem(ctx.source, (".traj.json", ".json", ".traj"))
    task_id = own_id or image_instance(info) or stem
    config = config_name(ctx.source, own_id or stem)
    former: list[str] = []
    if own_id:  # the attempt names itself where it can: the same file read from any folder is one run
        trajectory_id = run_id(own_id, _model_id(info, messages), attempt_token(messages) or config)
        former = [safe_id(f"{config}.{own_id}")]  # its id before round 27: replaced where it holds this run
    else:  # no id of its own: its place on disk tells it apart from other trials
        named = named_path(ctx.source)
        trajectory_id = ".".join(p for p in (named.parent.parent.name, named.parent.name, stem) if p)
        if stem in CLI_SESSION_FILES and (token := attempt_token(messages)):  # each session overwrites the last
            former = [safe_id(trajectory_id)]  # its id before round 32: replaced where it holds this session
            trajectory_id = f"{trajectory_id}.{token}"
    exit_status = exit_status_of(info, messages)
    stop = limit_before_prompt_exit(exit_status, info, messages)
    outcome = outcome_for(stop or exit_status)
    submission = info.get("submission") if isinstance(info.get("submission"), str) else ""
    empty_patch = outcome is Outcome.success and not submission.strip() and hands_in_patch(info, task_id)
    if empty_patch:  # a SWE-bench instance submitted with no patch cannot be resolved
        outcome = Outcome.failure
    steps = steps_of(messages, exit_status, _action_regexes(info), submitted=exit_status in SUCCESS_STATUSES,
                     format_error=_format_error(info))
    handed_in = exit_status is None and hand_in(steps, submission)  # no exit message to carry the patch
    stats = info.get("model_stats") if isinstance(info.get("model_stats"), dict) else {}

    failure = None
    if exit_status is not None and outcome in (Outcome.failure, Outcome.infra_error):
        last_error = last_tool_error(steps)
        if empty_patch:  # a submitted run: no exception saved
            otherwise = "an empty patch (nothing handed in)"
        elif last_error:
            args = last_error.get("arguments")
            command = args.get("command") if isinstance(args, dict) else None
            what = short(str(command or last_error.get("action") or "no action"), 120)
            otherwise = f"last failing step {last_error['index']} (`{what}`): {last_error['error']}"
        else:
            otherwise = "no error output recorded"
        failure = failure_of(exit_status, info, messages, otherwise, stop)

    first_ts = next((s["started_at"] for s in steps if s.get("started_at")), None)
    fields: dict[str, Any] = {
        "trajectory_id": safe_id(trajectory_id),
        "task": _task(messages, info, record.get("context")),
        "task_id": task_id,
        "task_family": task_family(task_id),
        "model_id": _model_id(info, messages),
        "tool_versions": {"mini-swe-agent": str(info["mini_version"])} if info.get("mini_version") else {},
        "tools_available": tools_available(steps),
        "outcome": outcome,
        "failure": failure,
        "steps": steps,
        "metadata": {
            "source_format": NAME,
            "trajectory_format": record.get("trajectory_format"),
            "config": config,
            "exit_status": exit_status,
            "submission_chars": len(submission) if exit_status in SUCCESS_STATUSES or handed_in else 0,
            "api_calls": stats.get("api_calls"),
            "cost": stats.get("instance_cost"),
            **({FORMER_IDS: former} if former else {}),
            **(
                {"outcome_basis": UNEVALUATED}
                if outcome is Outcome.success
                else {}
            ),
        },
    }
    if first_ts:
        fields["created_at"] = first_ts
    run = build(fields, ctx)
    return with_former_id(run, former[0]) if former else run

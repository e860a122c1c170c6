"""``swe-agent``: SWE-agent ``<instance_id>.traj`` files (one run per file, JSON).

Mapping
- run: the file itself. A 1.x retry agent (``agent.type: retry``: chooser or
  score loop) writes ``<run>/<id>/<id>.traj``, ``{"attempts": [...]}`` merged
  with a copy of the attempt it handed in (``info.best_attempt_idx``, absent
  until the loop ends), and each attempt's own ``<run>/<id>/attempt_N/<id>.traj``
  (``RetryAgent.get_trajectory_data`` / ``_setup_agent``): the top level gives
  one run per attempt (``split``) and its attempt files are passed over
  (``side_path``) unless it lacks them (a crashed loop, an attempt still
  running), so no attempt is read twice or lost. Every attempt is
  ``swe-agent.<run>.<id>.attempt_N``, whether the loop has chosen yet or not
  (it saves ``{"attempts": [...]}`` alone after every step, the choice only at
  its end: an id that turned into the instance's once chosen left the
  attempt's earlier copy stored beside it). Each attempt supersedes
  (``metadata.supersedes``, see trajsearch.indexer) ``swe-agent.<run>.<id>``,
  the run an earlier reading made of the whole retry run: a store ingested so
  keeps no copy of an attempt beside the new ``.attempt_N``. Metadata ``handed_in``: true for
  the attempt handed in (an evaluation report of the instance judges it, by
  ``task_id``), false for the others, null while unknown (no choice yet, or
  attempt files without their top level): only a true one takes the report's
  verdict. Once the loop chose, an attempt not handed in that submitted is a
  failure "not handed in" with the reviewer's score / the chooser's pick and
  its reason (when SWE-agent fell back to attempt 0 because the chooser gave
  no answer, ``info.chooser`` ``{}``, it says so). A
  ``trajectory`` of chat
  messages (``role`` / ``content``, no turn's ``action`` / ``observation`` /
  ``response`` / ``thought``) is not SWE-agent's, whatever lies beside it.
- task: ``replay_config.problem_statement.text`` (``replay_config`` is a JSON
  string, or an object, in SWE-agent 1.x; a GitHub-issue or file problem
  statement has no text), else the instance prompt: the first ``user``
  message of ``history`` that is not a demonstration. Demonstrations are
  in-context examples of *another* issue: 0.x and 1.x flag them ``is_demo``
  (1.x also ``message_type: "demonstration"``), older files only wrap them
  in "Here is a demonstration ..." / ``--- DEMONSTRATION ---``; messages of
  an agent other than the main one (the system prompt's ``agent``) are
  skipped too. In that prompt the issue is cut out by the template saved in
  ``replay_config.agent.templates.instance_template`` (``{{problem_statement}}``
  or ``{problem_statement}``), else by the delimiters (``<pr_description>``,
  ``ISSUE:`` ... ``INSTRUCTIONS:`` / ``(Open file:``), else the message up to
  its ``INSTRUCTIONS:`` (EnIGMA's CTF prompt), else the whole message; CRLF
  line ends become LF.
- task_id = ``replay_config.problem_statement.id``, else the file name before
  ``.traj``; task_family = the repository for SWE-bench ids
  (``astropy__astropy-12907`` -> ``astropy/astropy``; a GitHub issue's
  ``owner__repo-i12`` -> ``owner/repo``).
- trajectory_id = ``swe-agent.<run directory>.<task_id>`` (the directory that
  holds the file names the run set, as for mini-swe-agent; in the SWE-bench
  experiments layout, ``<system>/trajs/<id>.traj``, the system's directory;
  in a Harbor trial, ``<trial>/agent/swe-agent-output/<id>/<id>.traj``, the
  trial's).
- steps: one per ``trajectory[]`` entry: thought = the model's thinking
  (1.1+ keeps a Claude model's ``thinking_blocks`` in the ``history``
  message of the step alone, see ``_thinking``), then ``thought`` (else
  ``response``), arguments = ``{"command": action}``, action = the command's
  first word when it is a SWE-agent tool (``str_replace_editor``, ``open``,
  ``edit``, ``find_file``, ``search_dir``, ``submit``, ...) or one the file names
  (a custom bundle's: ``_declared_tools``) else ``bash``,
  observation = ``observation`` (without the terminal's codes; an image a tool showed the model, 1.1's
  ``view_image`` markdown ``![path](data:image/png;base64,...)``, kept: its rows name it, ``trajsearch.blobs``);
  Step.error = the decisive error line when the
  observation shows one (a Python exception line, ``command not found``,
  ``No such file``, a rejected edit (its linter's ``ERRORS:`` lines, 0.x's "No file open" before any
  ``open``), the shell's own ``bash: line N: ...``
  diagnostics, a program it could not execute: ``<file>: cannot execute
  binary file``, ``Permission denied``), a refusal of 1.x's editing tools
  (``str_replace_editor``'s "No replacement was performed ...", "The path ... does
  not exist ...", the windowed ``edit``'s "Your edit was not applied ...": each
  exits non-zero, nothing changed) or a command SWE-agent stopped ("EXECUTION TIMED OUT", 1.x's
  "The command '<cmd>' was cancelled because it took more than N seconds", its
  advice left out), or EnIGMA's
  "Wrong flag!" (the whole reply to a ``submit``: a CTF flag rejected), since SWE-agent
  records no exit codes. The stop SWE-agent
  records as a last action (``exit_cost``, ``exit_context``, ...) keeps its own
  name as the action, not ``bash``. A 1.x entry SWE-agent rejected without
  running it (a format error, a blocked command, a bash syntax error: kept in
  the trajectory, not the history, with an empty observation, and the model
  asked again) has the error "not run: <SWE-agent's message>" and that message,
  the end of the next entry's query, as its observation. A multi-agent run (CodeR: ``history``'s
  assistant messages, one per step, name their ``agent``) keeps its own
  commands ``plan``, ``succeed`` and ``fail`` as actions, and the agent of
  each step: metadata ``agents`` (in the order they first act) and
  ``step_agents`` (``[first step, agent]`` at each hand-over); a sub-agent's
  ``fail`` verdict is the step's error: "<agent> failed: <its reason>", its
  thought before the summary its prompt asks for.
  A file holding only ``history`` (what SWE-agent's ``run_traj_to_demo.py``
  writes for demonstrations, and what its replay reads) has its steps from the
  main agent's non-demonstration messages instead: each ``assistant`` message
  with an ``action`` is a step (thought = its thinking, then ``thought``, else its content), its
  observation the ``tool`` / ``user`` messages up to the next one.
- outcome: there is no test result in a ``.traj``. ``info.exit_status``
  ``submitted`` -> success (metadata ``outcome_basis`` says "submitted, not
  evaluated"), unless ``info.submission`` is recorded empty (nothing handed in:
  failure); ``submitted (<stop>)`` (SWE-agent handed in the diff itself when a
  stop hit; 0.x forks such as CodeR write a bare ``submitted`` and record the
  stop only as the last action, read as ``submitted (<that stop>)``) reads as
  its stop: ``submitted (exit_cost)`` a failure, ``submitted (exit_error)`` (1.1's
  status for any unhandled error after an edit: a model API's, the runtime's) an
  infra_error; ``exit_cost``, ``exit_context``, ``exit_format``,
  ``exit_command_timeout`` and the like -> failure (so is
  1.x's ``exit_command``: the model ran ``exit`` and quit with nothing handed in,
  unless a person typed it, SWE-agent's ``human`` models: unknown);
  ``exit_error``, ``exit_environment_error``, ``exit_api`` and anything else
  -> infra_error; no exit status -> unknown. The failure's error is the
  status and what stopped the run: the last step's "Exit due to <why>: <the
  exception>" SWE-agent writes on an API, runtime or environment error (often
  the only account of it: a run that never reached the model has no other
  step), else, when the last failing step is a rejected output, its "Exit due
  to <limit>" message with the last rejection, else the last failing step,
  else its "Exit due to <limit>" message.
  Join an evaluation report with
  ``--outcomes`` for real verdicts. In a Harbor trial the trial's
  ``result.json`` verdict (its verifier's reward) stands instead, as for the
  ATIF file Harbor converted the run to (``atif.trial_verdict``).
- model_id = ``replay_config.agent.model.name`` (a retry agent: its first
  ``agent_configs`` entry's), else ``info.model``, else the same in the
  instance folder's ``<id>.config.yaml`` (run-batch) or ``config.yaml``
  (run-single), else the run folder's ``run_batch.config.yaml`` (a retry
  agent's ``.traj`` has ``replay_config: null``; these files hold the config as
  one quoted YAML string of JSON), else the model part of a
  0.x run directory name (``<model>__<data>__<config>__t-<temp>__p-<top_p>__c-<cost>__install-<n>``,
  SWE-agent 0.x ``run.py``'s ``run_name``), else that of a SWE-bench
  experiments submission folder (``<YYYYMMDD>_SWE-agent_<model>/trajs/``);
  tool_versions = ``{"swe-agent": info.swe_agent_version}``; metadata keeps
  exit_status, submission length, cost and api calls.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from functools import lru_cache
from pathlib import Path
from typing import Any

import yaml

from trajsearch.actions import AGENT_STOP, NOT_RUN, QUIT, STOP_ACTIONS, not_run
from trajsearch.model import UNEVALUATED, Failure, Outcome, Trajectory
from trajsearch.steps import strip_terminal_codes

from . import _prompts
from .atif import harbor_trial, trial_label, trial_step, trial_verdict
from ._swebench import side_file  # noqa: F401  (the adapter hook: predictions and reports beside the runs)
from ._agent_cli import join_thought
from ._common import (
    Context, RecordError, as_dict, build, clip_step_text, clip_task, content_text, decisive_line, file_stem,
    json_dict, json_object, instance_repo, last_tool_error, list_field, loads, run_directory, safe_id, short,
    thinking_blocks_text, with_former_id,
)

NAME = "swe-agent"
#: A file is one run: the reader hands over its whole JSON document.
WHOLE_FILE = True
#: Searched in a file's first 64 KiB when no record can be parsed from them (see ``detect``).
SIGNATURE = re.compile(r'"environment"\s*:\s*"swe_main"|"swe_agent_version"\s*:|"replay_config"\s*:')
#: File names that imply this format when the content says nothing.
SUFFIXES = (".traj",)
#: The commands SWE-agent itself defines (0.x ``config/commands``, 1.x ``tools/*/config.yaml``): a step whose command
#: starts with one called that tool; any other command ran in the shell (``bash``).
SWE_AGENT_TOOLS = frozenset({
    "str_replace_editor", "open", "goto", "scroll_up", "scroll_down", "create", "edit", "insert", "search_dir",
    "search_file", "find_file", "submit", "filemap", "view", "str_replace_based_edit_tool", "exit_forfeit",
    # 0.x's ``config/commands``: the cursors configs' ``set_cursors``; EnIGMA's (CTF) ``decompile``,
    # ``disassemble``, ``debug.sh`` and ``server_connection.sh``. They had read as ``bash`` (probe AUD3, round 23).
    "set_cursors", "decompile", "disassemble", "debug_start", "debug_add_breakpoint", "debug_continue", "debug_step",
    "debug_exec", "debug_stop", "connect_start", "connect_sendline", "connect_exec", "connect_stop",
    # 1.x's bundles ``tools/image_tools`` and ``tools/web_browser`` (each ``config.yaml``'s ``tools``).
    "view_image", "open_site", "close_site", "screenshot_site", "click_mouse", "double_click_mouse", "move_mouse",
    "drag_mouse", "type_text", "scroll_on_page", "execute_script_on_page", "navigate_back", "navigate_forward",
    "reload_page", "wait_time", "press_keys_on_page", "set_browser_window_size", "get_console_output",
})
#: CodeR's own commands in its multi-agent runs: the Manager's ``plan``, a sub-agent's verdict ``succeed`` / ``fail``.
CODER_COMMANDS = frozenset({"plan", "succeed", "fail"})
#: 1.x's status for a run ended by the action ``exit`` (``DefaultAgent.handle_action``; 0.x blocked the command):
#: the model quit, handing in nothing. Typed by a person driving SWE-agent (its ``human`` models; 1.x's also answers
#: end of input with ``exit``) it is their stop, no verdict on an agent.
EXIT_COMMAND = "exit_command"
#: SWE-agent's stops that are an API's or the runtime's failure, not the agent's (0.x ``forward_with_error_check``):
#: a run ended so is an infrastructure error (:func:`outcome_for`). Only those ``actions.STOP_ACTIONS`` holds (a stop
#: recorded as the run's last action too); 1.x's ``exit_environment_error`` (the container failed) is a status alone,
#: never an action, and is an infrastructure error as every status no list names is.
INFRA_STOPS = frozenset({"exit_api", "exit_error"})
#: The exit statuses (prefixes: ``exit_cost`` may read ``exit_cost (submitted)``) of a run the agent failed: its stops
#: as ``actions.STOP_ACTIONS`` names them (one list for both: a stop a run's last action and its status name alike),
#: but the infrastructure's, and the model's ``exit`` (``EXIT_COMMAND``, which as an action is ``actions.QUIT``).
#: Derived, not listed: a stop added to ``STOP_ACTIONS`` is a verdict on the agent unless it is added to
#: ``INFRA_STOPS`` too, a choice its author makes there; ``test_probe53_formats`` pins the set, so that the choice is
#: seen (a second hand-kept list had drifted from the first before: review RFM4 of probe 53).
AGENT_STOPS = tuple(sorted(STOP_ACTIONS - INFRA_STOPS)) + (EXIT_COMMAND,)
HUMAN_MODELS = frozenset({"human", "human_thought"})
#: The status of a run SWE-agent handed in itself when a stop hit: ``submitted (<the stop's status>)``.
_AUTOSUBMITTED = re.compile(r"^submitted \((.*)\)$", re.S)
_INSTRUCTIONS = re.compile(r"\n\s*INSTRUCTIONS?:\s*\n")  # where SWE-agent (and CodeR) templates start telling how to work
_DEMO = re.compile(r"^\s*Here is a demonstration of how to correctly accomplish|^-{2,} (?:END OF )?DEMONSTRATION -{2,}", re.M)
#: SWE-agent 0.x ``run_name``: ``{model}__{data}__{config}__t-{temp}__p-{top_p}__c-{cost}__install-{n}``.
_RUN_NAME = re.compile(r"^(?P<model>.+?)__.+__t-\d+(?:\.\d+)?__p-\d+(?:\.\d+)?__c-\d+(?:\.\d+)?__install-\d")
#: A SWE-bench (and Multi-SWE-bench) experiments submission folder of SWE-agent: ``<YYYYMMDD>_SWE-agent_<model>``
#: (SWE-bench's own spells it ``sweagent``).
_SUBMISSION = re.compile(r"^\d{8}_(?:SWE-agent|sweagent)_(?P<model>.+)$", re.I)
#: A command SWE-agent stopped: 0.x appends "EXECUTION TIMED OUT"; 1.x answers with its timeout template.
#: SWE-agent's linter refusing an edit lists what it found: ``ERRORS:`` then ``- F821 undefined name 'x'`` lines.
_LINT_ERRORS = re.compile(r"^ERRORS:\n((?:- .+\n?)+)", re.M)
_TIMED_OUT = re.compile(r"^.*(?:EXECUTION TIMED OUT|was cancelled because it took more than \d+ seconds).*$", re.M)
#: 1.x's ``command_cancelled_timeout_template`` (``TemplateConfig``): what matters is its head, the command and the
#: limit; fixed advice follows ("Please try a different command ...").
_CANCELLED = re.compile(
    r"^The command '(?P<command>.*?)' was cancelled because it took more than (?P<limit>\d+) seconds", re.M | re.S)
#: SWE-agent 1.x's editing tools refusing a command (each prints it and exits non-zero, the file left as it was):
#: ``tools/edit_anthropic/bin/str_replace_editor`` (``sys.exit`` 1-21: a missing parameter, a bad command, path or
#: ``view_range`` / ``insert_line``, an ``old_str`` not found, found twice or equal to ``new_str``, no edit to undo,
#: a file it could not read or write) and the windowed tools (``tools/windowed_edit_{replace,rewrite,linting}/bin/``
#: ``edit``, ``insert``, ``windowed/bin/create``: no file opened, a search string not found or found twice, nothing
#: changed).
_EDITOR_REFUSAL = re.compile(
    r"^(?:No replacement was performed[,.] |The path .+ does not exist\. Please provide a valid path|"
    r"The path .+ is not an absolute path, it should start with `/`|"
    r"The path .+ is a directory and only the `view` command can be used on directories|"
    r"File already exists at: .+\. Cannot overwrite files using command `create`|"
    r"The parent directory .+ does not exist\. Please create it first|"
    r"Invalid `(?:view_range|insert_line)`|The `view_range` parameter is not allowed when `path` points to a directory|"
    r"Parameter `\w+` is required for command: |Unrecognized command .+\. The allowed commands for the |"
    r"No edit history found for |Ran into .+ while trying to (?:read|write) |"
    r"Your edit was not applied \(file not modified\)|"
    r"Your search and replace strings are the same\. No changes were made|"
    r"No file opened\. |Warning: File '.+' already exists\.$)",
    re.M,
)
#: A program that could not be run (exit 126), as the shell says it, whatever name it signs with: bash's
#: ``<name>: [line N: ]<file>: cannot execute binary file[: Exec format error]`` (the name ``bash``, or the file
#: itself when bash took it for a script: ``/usr/bin/ls: /usr/bin/ls: cannot execute binary file``), ``... cannot
#: execute: required file not found``, ``...: Permission denied``; dash's ``sh: 1: <file>: Exec format error`` /
#: ``Permission denied``. A command refused a file the same way (``cat: <file>: Permission denied``, ``tee``) failed
#: too; a search's (``find: '/root': Permission denied``, ``grep``, ``du``) is a place it skipped while it ran and
#: listed the rest: no error of the step (review 1 of round 12, D6; review 4, D3).
#: Such a line is the step's error unless the rest of the output shows another: the program never ran, so what
#: else the step printed came from other commands (``ls x; find .``) or is a file's text (``printf "$(<f)"``).
_NO_EXEC = (r"^(?!(?:find|grep|egrep|fgrep|rgrep|rg|du|tree|locate): )"
            r"[^\s:]+: (?:line \d+: |\d+: )?[^\s:]+: (?:cannot execute\b|Exec format error|Permission denied)")
_NO_EXEC_LINE = re.compile(_NO_EXEC + r".*$", re.M)
_ERROR_OUTPUT = re.compile(
    r"^(?:E\s+)?[A-Za-z_][\w.]*(?:Error|Exception)\b:|command not found|No such file or directory|"
    r"Your proposed edit has introduced new syntax error|^Error:|^ERROR:|Traceback \(most recent call last\)|"
    r"^No file open\. Use the .open. command first|"  # 0.x's editor refusing an edit before any ``open``
    r"^(?:/\S*/)?(?:ba|da|z)?sh: (?:line \d+: )?|"  # the shell's own diagnostics (a quote left open, ...)
    + _NO_EXEC,
    re.M,
)
#: The error of a 1.x ``trajectory`` entry SWE-agent did not run (see ``_not_run``) when the entry after it does not
#: show the requery message (the run stopped at the next model call).
_REJECTED = not_run("SWE-agent rejected it (a format error, a blocked command or a bash syntax error)")
#: Where a CodeR sub-agent's verdict turns from its reason to the report its prompt asks for.
_CODER_REPORT = re.compile(r"\n\s*(?:SUMMARY OF ALL ACTIONS PERFORMED|TASK STATUS)\b")
_DISCUSSION = re.compile(r"^\s*DISCUSSION\s*\n")
#: EnIGMA's (SWE-agent for CTF) whole reply to a ``submit`` of a flag that is not the challenge's: the episode goes
#: on (``swe_env.py`` ``step``: ``validate_submission`` failed, ``observation = "Wrong flag!"``).
_WRONG_FLAG = "Wrong flag!"
#: What SWE-agent records as the last action when it stops a run itself (a limit hit, a format error, ...).
_EXIT_ACTION = AGENT_STOP
#: SWE-agent's own word on why it stopped a run, the last step's thought (1.x ``forward_with_handling``'s
#: ``handle_error_with_autosubmission(status, message)``, 0.x ``forward_with_error_check``): with the exception it
#: caught after the colon ("Exit due to unknown error: litellm.APIError: ...", "... runtime error: ...", "... retry
#: error: ...", "... environment error: ..."), or only the limit the status names already ("Exit due to cost limit",
#: "Exit due to repeated format/blocklist/bash syntax errors", "Exiting due to forfeit").
_EXIT_MESSAGE = re.compile(r"^Exit(?:ing)? due to (?P<why>[^:\n]+)(?P<error>: \S)?")


#: The folder of one attempt of a 1.x retry agent, inside the instance's: ``<run>/<id>/attempt_N/<id>.traj``
#: (``RetryAgent._setup_agent``: ``output_dir / f"attempt_{i}"``).
_ATTEMPT_FOLDER = re.compile(r"^attempt_(\d+)$")
#: What ``split`` adds to each attempt of a retry agent's top level (no SWE-agent field): its place in the loop.
_RETRY = "__retry_attempt__"
#: The config files SWE-agent 1.x writes beside a run (``run_single.py``, ``run_batch.py``): each one YAML string
#: holding the config's JSON (``yaml.dump(config.model_dump_json())``).
_CONFIG_FILES = ("{id}.config.yaml", "config.yaml", "../run_batch.config.yaml")
#: A reviewer's or chooser's answer ends with its verdict alone on the last line (a score, an index).
_VERDICT_LINE = re.compile(r"\n\s*-?\d+(?:\.\d+)?\s*$")


def matches(record: Any) -> bool:
    if not isinstance(record, dict) or "messages" in record:
        return False
    if isinstance(record.get("trajectory"), list):
        return ("info" in record or "history" in record) and not _chat_messages(record["trajectory"])
    if "trajectory" not in record and _history_actions(record):
        return True
    attempts = record.get("attempts")
    return isinstance(attempts, list) and bool(attempts) and all(
        isinstance(a, dict) and isinstance(a.get("trajectory"), list) for a in attempts)


def _attempts(document: Any) -> list[dict[str, Any]] | None:
    """A retry agent's attempts (each a whole run), when ``document`` is a retry agent's top-level file."""
    attempts = document.get("attempts") if isinstance(document, dict) else None
    if isinstance(attempts, list) and attempts and all(
            isinstance(a, dict) and isinstance(a.get("trajectory"), list) for a in attempts):
        return attempts
    return None


def split(document: Any) -> Iterator[tuple[str, Any]]:
    """The adapter hook (see ``adapters/__init__``): a retry agent's top level is one run per attempt (its merged
    copy of the attempt handed in is that attempt again), each with its place in the loop; any other file one run."""
    attempts = _attempts(document)
    if attempts is None:
        yield "file", document
        return
    info = document.get("info") if isinstance(document.get("info"), dict) else {}
    best = info.get("best_attempt_idx")
    best = best if isinstance(best, int) and not isinstance(best, bool) and 0 <= best < len(attempts) else None
    for n, attempt in enumerate(attempts):
        not_chosen = _not_chosen(n, best, attempts, info) if best is not None and n != best else None
        yield f"attempt {n}", {**attempt, _RETRY: {"index": n, "handed_in": None if best is None else n == best,
                                                   "not_chosen": not_chosen}}


def _review(attempt: dict[str, Any]) -> tuple[float | bool, str | None] | None:
    """(score, reasoning) of SWE-agent's reviewer on an attempt (``ScoreRetryLoop``: ``info.review``, its
    ``accept`` a score or a yes/no)."""
    info = attempt.get("info") if isinstance(attempt.get("info"), dict) else {}
    review = info.get("review") if isinstance(info.get("review"), dict) else {}
    accept = review.get("accept")
    if not isinstance(accept, (int, float)):
        return None
    outputs = [o for o in review.get("outputs") or [] if isinstance(o, str) and o.strip()]
    return accept, _reasoning(outputs[0]) if outputs else None


def _score(accept: float | bool) -> str:
    return ("accepted" if accept else "rejected") if isinstance(accept, bool) else f"{accept:g}"


def _reasoning(answer: str) -> str | None:
    """A reviewer's or chooser's answer without the verdict line that ends it, one line."""
    text = _VERDICT_LINE.sub("", answer).strip()
    return short(" ".join(text.split()), 300, keep="head") if text else None


def _not_chosen(n: int, best: int, attempts: list[dict[str, Any]], info: dict[str, Any]) -> str:
    """Why SWE-agent's retry loop did not hand in attempt ``n``: the reviewer's scores, else the chooser's pick (only
    when ``info.chooser`` names it: ``RetryAgent.get_trajectory_data`` falls back to attempt 0 when ``get_best()``
    raises, and writes ``chooser: {}`` when the chooser gave no output)."""
    mine, chosen = _review(attempts[n]), _review(attempts[best])
    if mine is not None:
        against = f" (attempt {best}, handed in: {_score(chosen[0])})" if chosen else f" (attempt {best} was handed in)"
        return f"SWE-agent's reviewer scored it {_score(mine[0])}{against}" + (f": {mine[1]}" if mine[1] else "")
    chooser = info.get("chooser") if isinstance(info.get("chooser"), dict) else {}
    if chooser.get("chosen_idx") != best:  # ``get_best`` raised: SWE-agent hands in attempt 0, ``chooser`` ``{}``
        return f"SWE-agent handed in attempt {best} (no {'chooser ' if 'chooser' in info else ''}verdict recorded)"
    said = _reasoning(chooser["response"]) if isinstance(chooser.get("response"), str) else None
    return f"SWE-agent's chooser picked attempt {best}" + (f": {said}" if said else "")


def _attempt_file(source: Path) -> int | None:
    """N for a retry agent's own attempt file ``<run>/<id>/attempt_N/<id>.traj``, else None."""
    found = _ATTEMPT_FOLDER.match(source.parent.name)
    stem = file_stem(source, (".json", ".traj"))
    return int(found.group(1)) if found and source.parent.parent.name == stem else None


#: What SWE-agent's ``run_batch`` writes beside its runs (``sweagent/run/run_batch.py``, ``run_single.py``): in an
#: instance's folder ``<id>/``, beside its ``<id>.traj``, the instance's prediction, patch, configuration and logs;
#: in the run set's folder, the run set's log, configuration and exit statuses.
_INSTANCE_SIDE = (".pred", ".patch", ".config.yaml", ".debug.log", ".info.log", ".trace.log")
_RUN_SIDE = frozenset({"run_batch.log", "run_batch.config.yaml", "run_batch_exit_statuses.yaml"})


def _run_batch_file(path: Path) -> str | None:
    """What a file of :data:`_INSTANCE_SIDE` or :data:`_RUN_SIDE` is, else None."""
    if path.name in _RUN_SIDE:
        return f"SWE-agent run_batch's {path.name}, not a run: the runs are its <instance>/<instance>.traj"
    instance = path.parent.name
    if any(path.name == instance + suffix for suffix in _INSTANCE_SIDE):
        return f"SWE-agent's {path.name.removeprefix(instance)} of instance {instance}, not a run: its run is " \
               f"{instance}.traj"
    return None


def side_path(path: Path, fmt: str | None) -> str | None:
    """The adapter hook (see ``adapters/__init__``): a file ``run_batch`` writes beside the runs
    (:func:`_run_batch_file`); an attempt file of a retry agent whose top level beside it holds that attempt (it is
    read from there: ``split``); one the top level lacks (the loop crashed before it finished the attempt, or the
    top level is gone) is a run of its own."""
    if fmt is None:
        return _run_batch_file(path)
    if fmt != NAME or (n := _attempt_file(path)) is None:
        return None
    top = path.parent.parent / path.name
    try:
        attempts = _attempts(loads(top.read_text(encoding="utf-8")))
    except (OSError, ValueError):
        return None
    if attempts is None or n >= len(attempts):
        return None
    return f"attempt {n} of a SWE-agent retry run, read from {top.name} beside it (which holds every attempt)"


#: What a SWE-agent ``trajectory`` entry holds (one turn: the model's response, the action run, what came back).
_STEP_KEYS = frozenset({"action", "observation", "response", "thought"})


def _chat_messages(entries: list[Any]) -> bool:
    """Whether a ``trajectory`` list is chat messages (``role`` / ``content``, as a tau-bench chat copied into an
    analysis file is), not SWE-agent turns: every entry a message with a role and none a turn's field."""
    entries = [e for e in entries if e is not None]
    return bool(entries) and all(isinstance(e, dict) and "role" in e and not _STEP_KEYS & e.keys() for e in entries)


def _main_history(record: dict[str, Any]) -> list[dict[str, Any]]:
    """The messages of ``history`` from the main agent (the system prompt's ``agent``), demonstrations left out."""
    history = record.get("history") if isinstance(record.get("history"), list) else []
    history = [m for m in history if isinstance(m, dict)]
    main = next((m.get("agent") for m in history if m.get("role") == "system" and m.get("agent")), None)
    return [m for m in history if not _is_demo(m) and (main is None or m.get("agent") in (None, main))]


def _history_actions(record: dict[str, Any]) -> list[dict[str, Any]]:
    """``trajectory``-like entries from a history-only file: an assistant message that ran an
    ``action``, with the tool / user messages that followed it as its observation."""
    entries: list[dict[str, Any]] = []
    for msg in _main_history(record):
        if msg.get("role") == "assistant" and isinstance(msg.get("action"), str):
            entries.append({"action": msg["action"], "thought": msg.get("thought") or content_text(msg.get("content")),
                            "observation": "", _THINKING: thinking_blocks_text(msg.get("thinking_blocks"))})
        elif entries and msg.get("role") in ("tool", "user"):
            text = content_text(msg.get("content"))
            entries[-1]["observation"] = "\n".join(filter(None, [entries[-1]["observation"], text]))
    return entries


#: An entry's thinking, where ``_history_actions`` read it with the entry.
_THINKING = "__thinking__"


def _thinking(record: dict[str, Any], entries: list[dict[str, Any]]) -> list[str | None]:
    """Per ``trajectory`` entry, the model's thinking SWE-agent 1.1+ keeps only in ``history`` (a Claude model's
    ``thinking_blocks``, ``add_step_to_history``; the entry has none). The entries and the main agent's assistant
    messages are the same responses in the same order, less the entries SWE-agent rejected, which never reach
    the history: an entry takes the next message with its action and response (the message's ``content``).
    Entries read from the history (``_history_actions``) hold their message's thinking already: they have no
    ``response`` to pair by, and a message that said words besides its thinking would pair with none."""
    said = [m for m in _main_history(record) if m.get("role") == "assistant" and "action" in m]
    if all(_THINKING in entry for entry in entries) or not any(m.get("thinking_blocks") for m in said):
        return [entry.get(_THINKING) for entry in entries]
    found: list[str | None] = []
    at = 0
    for entry in entries:
        match = next((k for k in range(at, len(said)) if said[k].get("action") == entry.get("action")
                      and content_text(said[k].get("content")) == (entry.get("response") or "")), None)
        found.append(None if match is None else thinking_blocks_text(said[match].get("thinking_blocks")))
        at = at if match is None else match + 1
    return found


def _chosen_attempt(record: dict[str, Any]) -> dict[str, Any]:
    """The run a file stands for: itself, or (retry loop still running) its best/last attempt."""
    if isinstance(record.get("trajectory"), list):
        return record
    attempts = [a for a in record.get("attempts") or [] if isinstance(a, dict)]
    if not attempts:
        return record
    best = (record.get("info") or {}).get("best_attempt_idx") if isinstance(record.get("info"), dict) else None
    return attempts[best] if isinstance(best, int) and 0 <= best < len(attempts) else attempts[-1]


def outcome_for(exit_status: str | None) -> Outcome:
    if not exit_status:
        return Outcome.unknown
    status = exit_status.strip().lower()
    if status == "submitted":
        return Outcome.success
    # handed in by SWE-agent when a stop hit (``attempt_autosubmission_after_error``): the stop decides, a limit the
    # agent's failure, an error (1.1's ``submitted (exit_error)``: any unhandled one) the infrastructure's
    stop = _AUTOSUBMITTED.sub(r"\1", status)
    return Outcome.failure if stop.startswith(AGENT_STOPS) else Outcome.infra_error


def _effective_status(exit_status: str | None, steps: list[dict[str, Any]]) -> str | None:
    """The exit status, with the stop a bare "submitted" hides: 0.x forks (CodeR) auto-submit at a limit
    without saying so in ``exit_status``, only in the last action (``exit_cost``)."""
    last = steps[-1].get("action") if steps else None
    if exit_status and exit_status.strip().lower() == "submitted" and last and _EXIT_ACTION.match(last):
        return f"{exit_status.strip()} ({last})"
    return exit_status


def _replay(record: dict[str, Any]) -> dict[str, Any]:
    raw = record.get("replay_config")
    return as_dict(json_dict(raw) if isinstance(raw, str) else raw)


def _is_demo(msg: dict[str, Any]) -> bool:
    if msg.get("is_demo") or msg.get("message_type") == "demonstration":
        return True
    return bool(_DEMO.search(content_text(msg.get("content"))))


def _instance_prompt(record: dict[str, Any]) -> str | None:
    """The first user message of the main agent that is not a demonstration."""
    for msg in _main_history(record):
        if msg.get("role") != "user":
            continue
        content = content_text(msg.get("content")).strip()
        if content:
            return content
    return None


def _task(record: dict[str, Any], replay: dict[str, Any]) -> str:
    statement = replay.get("problem_statement")
    if isinstance(statement, dict) and isinstance(statement.get("text"), str) and statement["text"].strip():
        return clip_task(statement["text"].replace("\r\n", "\n").strip())
    prompt = _instance_prompt(record)
    if prompt is None:
        raise RecordError("no task: no replay_config.problem_statement.text and no non-demonstration user message "
                          "in 'history'")
    agent = replay.get("agent") if isinstance(replay.get("agent"), dict) else {}
    templates = agent.get("templates") if isinstance(agent.get("templates"), dict) else {}
    text = _prompts.from_template(prompt, templates.get("instance_template"), ("problem_statement",)) or \
        _prompts.from_markers(prompt) or _INSTRUCTIONS.split(prompt, 1)[0]
    return clip_task(text.replace("\r\n", "\n").strip() or prompt)


def _model(replay: dict[str, Any], info: dict[str, Any], run_dir: str, folder: Path | None = None) -> str | None:
    """The model (see the module docstring); ``folder``: the instance folder, where SWE-agent 1.x keeps its config."""
    if model := _config_model(replay):
        return model
    for key in ("model", "model_name"):
        if isinstance(info.get(key), str) and info[key]:
            return info[key]
    for name in _CONFIG_FILES if folder is not None else ():
        if model := _config_model(_config_file(folder / name.format(id=folder.name))):
            return model
    found = _RUN_NAME.match(run_dir or "") or _SUBMISSION.match(run_dir or "")
    return found.group("model") if found else None


def _config_model(config: dict[str, Any]) -> str | None:
    """The model of a run config: its agent's, or a retry agent's first ``agent_configs`` entry's."""
    agent = config.get("agent") if isinstance(config.get("agent"), dict) else {}
    for each in [agent] + [c for c in agent.get("agent_configs") or [] if isinstance(c, dict)]:
        model = each.get("model")
        if isinstance(model, dict) and model.get("name"):
            return str(model["name"])
    return None


def _config_file(path: Path) -> dict[str, Any]:
    """The config SWE-agent 1.x wrote to ``path`` (``{}`` if none): one quoted YAML scalar holding its JSON."""
    try:
        return _read_config(str(path), path.stat().st_mtime_ns)
    except OSError:
        return {}


@lru_cache(maxsize=16)  # an instance's attempts share one config
def _read_config(path: str, _mtime: int) -> dict[str, Any]:
    try:
        text = yaml.safe_load(Path(path).read_text(encoding="utf-8"))  # ``yaml.dump(a_string)``: a quoted scalar
        config = loads(text) if isinstance(text, str) else None
    except (OSError, ValueError, yaml.YAMLError):
        return {}
    return config if isinstance(config, dict) else {}


def _step_error(observation: str, command: str) -> str | None:
    if observation.strip() == _WRONG_FLAG and command.startswith("submit"):
        return f"{_WRONG_FLAG} (the submitted flag was rejected)"
    if observation and (cancelled := _CANCELLED.search(observation)):
        return (f"The command '{short(cancelled['command'], 200, keep='head')}' was cancelled because it took more than"
                f" {cancelled['limit']} seconds")
    if observation and (timed_out := _TIMED_OUT.search(observation)):
        return short(timed_out.group(0).strip())
    if observation and (refused := _EDITOR_REFUSAL.search(observation)):
        return _refusal_text(observation[refused.start():])
    if not observation or not _ERROR_OUTPUT.search(observation):
        return None
    if lint := _LINT_ERRORS.search(observation):  # the linter's findings, not its "DO NOT re-run" footer
        return short("; ".join(line[2:].strip() for line in lint.group(1).splitlines() if line.strip()), 300)
    no_exec = _NO_EXEC_LINE.findall(observation)
    if no_exec and not _ERROR_OUTPUT.search(_NO_EXEC_LINE.sub("", observation)):
        return short(no_exec[-1])
    return decisive_line(observation)


def _refusal_text(message: str) -> str:
    """A tool's refusal, one line: its lines up to the first that ends a sentence (an ``old_str`` quoted in it may span
    lines; the windowed tools' advice follows on lines of its own), the head kept."""
    lines: list[str] = []
    for line in message.strip().splitlines():
        lines.append(line)
        if line.rstrip().endswith((".", "!", "?")):
            break
    return short("\n".join(lines), 300, keep="head")


def _requery(following: dict[str, Any]) -> str | None:
    """The message SWE-agent 1.x asked the model again with, from the query of the entry that followed
    (``get_model_requery_history``: the history, then the rejected output as an ``assistant`` message and the error
    as a ``user`` one, both with that ``message_type``; a step that ran is in the history as ``action`` /
    ``observation`` messages)."""
    query = following.get("query")
    if not isinstance(query, list) or len(query) < 2 or not all(isinstance(m, dict) for m in query[-2:]):
        return None
    said, answer = query[-2:]
    if (said.get("role"), said.get("message_type"), answer.get("role"), answer.get("message_type")) != (
            "assistant", "assistant", "user", "user"):
        return None
    return content_text(answer.get("content")).strip() or None


def _not_run(entry: dict[str, Any], following: dict[str, Any] | None) -> tuple[str, str | None] | None:
    """(error, SWE-agent's message) for a 1.x entry SWE-agent rejected without running it, else None.

    ``forward_with_handling``'s ``handle_error_with_retry`` adds the step of a ``FormatError``, a blocked command
    (``_BlockedActionError``) or a ``BashIncorrectSyntaxError`` to the trajectory (not the history) with an empty
    observation, no execution time and no state, then requeries the model: the next entry's query ends with that
    message. An entry that ran has an execution time; the last entry is the run's stop."""
    observation, took = entry.get("observation"), entry.get("execution_time")
    if following is None or observation not in (None, "") or (isinstance(took, (int, float)) and took > 0):
        return None
    if message := _requery(following):
        lines = [line.strip() for line in message.splitlines() if line.strip()]
        head = re.split(r"(?<=[.!?])\s", lines[0], maxsplit=1)[0]
        diagnostic = next((line for line in lines[1:] if _ERROR_OUTPUT.search(line)), None)  # ``bash -n``'s
        return not_run(short(" ".join(filter(None, [head, diagnostic])), 300, keep="head")), message
    if took == 0 and not isinstance(took, bool) and not entry.get("state"):
        return _REJECTED, None
    return None


def _verdict_error(agent: str, thought: str | None) -> str:
    """A CodeR sub-agent's ``fail``: the agent and its reason, the thought before the report its prompt asks for
    ("SUMMARY OF ALL ACTIONS PERFORMED and the TASK STATUS")."""
    reason = _CODER_REPORT.split(_DISCUSSION.sub("", thought or ""), maxsplit=1)[0].strip()
    return short(f"{agent} failed: {reason}", 300, keep="head") if reason else f"{agent} failed"


#: A command as text mode's system prompt documents it (``{{command_docs}}``: 0.x ``config/commands``, 1.x
#: ``generate_command_docs``): its name on a line of its own, then its indented ``docstring:``.
_COMMAND_DOC = re.compile(r"^([\w.-]+):\n[ \t]+docstring:", re.M)


def _declared_tools(record: dict[str, Any]) -> frozenset[str]:
    """The tools the file itself names: each function its history's assistant messages called (1.x function
    calling: ``tool_calls[].function.name``), each command its system prompts document (text mode). A custom
    bundle's tool is among them, which ``SWE_AGENT_TOOLS`` cannot list (it read as ``bash``: review of AUD3)."""
    history = record.get("history") if isinstance(record.get("history"), list) else []
    names: set[str] = set()
    for msg in (m for m in history if isinstance(m, dict)):
        if msg.get("role") == "system":
            names.update(_COMMAND_DOC.findall(content_text(msg.get("content"))))
        for call in msg.get("tool_calls") if isinstance(msg.get("tool_calls"), list) else []:
            function = call.get("function") if isinstance(call, dict) else None
            if isinstance(function, dict) and isinstance(function.get("name"), str):
                names.add(function["name"])
    return frozenset(names)


def _action(command: str, own: frozenset[str] = frozenset()) -> str:
    """The tool a command called: SWE-agent's own (for a file that names none), the file's and the agent's ``own``
    (``_declared_tools``, CodeR's) or its stop (``exit_cost``) by name, anything else ``bash``."""
    first = command.strip().split(maxsplit=1)[0] if command.strip() else ""
    if first in SWE_AGENT_TOOLS or first in own or (first == command.strip() and (
            _EXIT_ACTION.match(first) or first == QUIT)):
        return first
    return "bash"


def _step_agents(record: dict[str, Any], entries: list[Any]) -> list[str] | None:
    """The agent behind each step of a multi-agent run (CodeR: Manager, Reproducer, Debugger, Programmer, Tester):
    the ``agent`` of the assistant message that issued it; None unless ``history``'s assistant messages match the
    steps one to one, action for action, and more than one agent speaks."""
    history = record.get("history") if isinstance(record.get("history"), list) else []
    said = [m for m in history if isinstance(m, dict) and m.get("role") == "assistant" and not _is_demo(m)]
    if len(said) != len(entries) or not all(
            isinstance(e, dict) and str(m.get("action") or "").strip() == str(e.get("action") or "").strip()
            for m, e in zip(said, entries)):
        return None
    agents = [m.get("agent") for m in said]
    return agents if all(isinstance(a, str) and a for a in agents) and len(set(agents)) > 1 else None


def _handoffs(agents: list[str]) -> list[list[Any]]:
    """``[[first step, agent], ...]``: where each agent's turn begins."""
    return [[i, agent] for i, agent in enumerate(agents) if i == 0 or agents[i - 1] != agent]


def _exit_message(steps: list[dict[str, Any]]) -> tuple[str, bool] | None:
    """SWE-agent's message on stopping the run (``_EXIT_MESSAGE``), one line, and whether it holds the error caught."""
    thought = steps[-1].get("thought") if steps else None
    found = _EXIT_MESSAGE.match(thought or "")
    return (short(thought, keep="head"), bool(found.group("error"))) if found else None


def _failure(outcome: Outcome, status: str | None, steps: list[dict[str, Any]], empty: bool = False
             ) -> Failure | None:
    """Why a failed run failed, as far as the file shows: ``status`` (the exit status, or the verdict's reward),
    then an empty submission, else SWE-agent's exit message when it holds the error that stopped the run (an API,
    runtime or environment error: what failed, where an earlier failing command did not stop anything), else the
    last step with an error, else the exit message that only names the limit hit."""
    if outcome not in (Outcome.failure, Outcome.infra_error):
        return None
    last = last_tool_error(steps)
    said = _exit_message(steps)
    if empty:
        detail = "an empty submission (nothing handed in)"
    elif status == EXIT_COMMAND:
        detail = "the agent ran `exit`: it quit with nothing handed in"
    elif said and (said[1] or not last):
        detail = said[0]
    elif said and last["error"].startswith(NOT_RUN):  # the model's rejected outputs were the last it gave
        refused = next((s for s in reversed(steps) if (s.get("error") or "").startswith(NOT_RUN)
                        and s["error"] != _REJECTED), last)
        detail = f"{said[0]}; last rejected: step {refused['index']}: {refused['error'][len(NOT_RUN):]}"
    elif last:
        arguments = last.get("arguments") if isinstance(last.get("arguments"), dict) else {}
        command = f" (`{short(str(arguments['command']), 120)}`)" if arguments.get("command") else ""
        detail = f"last failing step {last['index']}{command}: {last['error']}"
    else:
        detail = "no error output recorded"
    return Failure(
        error=f"{status}: {detail}",
        cause="infrastructure: the harness or model API failed, not the agent" if outcome is Outcome.infra_error else None,
    )


def to_trajectory(record: Any, ctx: Context) -> Trajectory:
    record = json_object(record)
    retry = record.get(_RETRY) if isinstance(record.get(_RETRY), dict) else {}
    record = _chosen_attempt(record)
    if "trajectory" not in record and (from_history := _history_actions(record)):
        entries = from_history
    else:
        entries = list_field(record, "trajectory", "a list of steps")
    info = record.get("info") if isinstance(record.get("info"), dict) else {}
    replay = _replay(record)
    statement = replay.get("problem_statement") if isinstance(replay.get("problem_statement"), dict) else {}
    stem = file_stem(ctx.source, (".json", ".traj"))
    task_id = str(statement.get("id") or stem)
    agents = _step_agents(record, entries) if "trajectory" in record else None
    own = (CODER_COMMANDS if agents else frozenset()) | _declared_tools(record)
    steps = []
    entries = [e for e in entries if isinstance(e, dict)]
    thinking = _thinking(record, entries)
    for at, entry in enumerate(entries):
        command = str(entry.get("action") or "").strip()
        observation = entry.get("observation")
        observation = observation if isinstance(observation, str) else ("" if observation is None else json.dumps(observation))
        observation = strip_terminal_codes(observation)  # a coloured tool's output (EnIGMA's RsaCtfTool.py)
        said = entry.get("thought") or entry.get("response")
        thought = join_thought([thinking[at], str(said) if said else ""])
        error = _step_error(observation, command)
        if agents and _action(command, own) == "fail":  # a CodeR sub-agent gave up on its part
            error = _verdict_error(agents[at], entry.get("thought"))
        elif "trajectory" in record and (rejected := _not_run(entry, (entries[at + 1:] or [None])[0])):
            error, observation = rejected[0], rejected[1] or observation  # what SWE-agent answered instead
        steps.append({
            "index": len(steps),
            "thought": clip_step_text(thought) if thought else None,
            "action": _action(command, own) if command else None,
            "arguments": {"command": command} if command else None,
            "observation": clip_step_text(observation) if observation else None,
            "error": error,
        })
    recorded = info.get("exit_status") if isinstance(info.get("exit_status"), str) else None
    exit_status = _effective_status(recorded, steps)
    outcome = outcome_for(exit_status)
    trial = harbor_trial(ctx.source)
    attempt = retry.get("index") if retry else _attempt_file(ctx.source)
    instance = ctx.source.parent.parent if attempt is not None and not retry else ctx.source.parent
    folder = run_directory(instance / ctx.source.name, task_id)
    run_dir = trial_label(trial) if trial is not None else folder
    model = _model(replay, info, run_dir, instance if instance.name == stem else None)
    if exit_status == EXIT_COMMAND and model in HUMAN_MODELS:  # a person typed `exit` (see EXIT_COMMAND)
        outcome = Outcome.unknown
    submission = info.get("submission") or ""
    # "submitted" with the submission recorded empty: nothing was handed in (no patch, no flag)
    empty = outcome is Outcome.success and "submission" in info and not str(submission).strip()
    if empty:
        outcome = Outcome.failure
    failure = _failure(outcome, exit_status, steps, empty)
    if retry.get("not_chosen") and outcome is Outcome.success:  # submitted, but SWE-agent handed in another attempt
        outcome, failure = Outcome.failure, Failure(error=f"{exit_status}: not handed in", cause=retry["not_chosen"])
    reward, basis = None, {"outcome_basis": UNEVALUATED} if outcome is Outcome.success else {}
    if trial is not None and (judged := trial_verdict(trial, ctx)) is not None:
        outcome, reward, graded, basis = judged
        failure = graded or _failure(outcome, f"reward {reward:g}" if reward is not None else exit_status, steps)
    # every attempt is a run of its own, its id the same before the loop chose and after (see the module docstring)
    own = f".attempt_{attempt}" if attempt is not None else ""
    stats = info.get("model_stats") if isinstance(info.get("model_stats"), dict) else {}
    fields: dict[str, Any] = {
        "trajectory_id": safe_id(f"swe-agent.{run_dir or 'run'}.{task_id}{own}"),
        "task": _task(record, replay),
        "task_id": task_id,
        "task_family": instance_repo(task_id),
        "model_id": model,
        "tool_versions": {"swe-agent": str(info["swe_agent_version"])} if info.get("swe_agent_version") else {},
        "outcome": outcome,
        "reward": reward,
        "failure": failure,
        "steps": steps,
        "metadata": {
            "source_format": NAME,
            "exit_status": recorded,
            "submission_chars": len(submission) if isinstance(submission, str) else 0,
            "cost": stats.get("instance_cost"),
            "api_calls": stats.get("api_calls"),
            "run_dir": run_dir,
            **basis,
            **({"attempt": attempt} if attempt is not None else {}),
            **({"handed_in": retry.get("handed_in")} if attempt is not None else {}),
            # the id an earlier reading gave the whole retry run (its top level, a copy of one attempt): retired
            **({"supersedes": [safe_id(f"swe-agent.{run_dir or 'run'}.{task_id}")]} if attempt is not None else {}),
            **({"review_score": review[0]} if attempt is not None and (review := _review(record)) else {}),
            **({"agents": list(dict.fromkeys(agents)), "step_agents": _handoffs(agents)} if agents else {}),
        },
    }
    run = build(fields, ctx)
    # a step of a multi-step Harbor trial: its run directory before round 29 read steps was its output folder's
    stepped = trial is not None and trial_step(trial) is not None
    return with_former_id(run, safe_id(f"swe-agent.{folder or 'run'}.{task_id}{own}")) if stepped else run

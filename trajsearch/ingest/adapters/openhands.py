"""``openhands``: OpenHands event trajectories (a JSON list of serialized events; evaluation output.jsonl lines)
and software-agent-sdk (V1) conversations (a folder, their events as JSON lines, benchmark output lines).

Written by ``save_trajectory_path``, the UI's "download trajectory" (a list),
``GET /api/conversations/<id>/trajectory`` (``{"trajectory": [...]}``) or
``GET /api/conversations/<id>/events`` (``{"events": [...], "has_more": ...}``;
an export of it may keep the conversation's details beside, ``{exported_at,
base_url, conversation, events}``, as enyst/llm-playground's
``export_conversation.py`` writes); the V0 server's own conversation store
(``sessions/<id>/events/<n>.json``, one event per file, beside
``sessions/<id>/metadata.json``: read as a folder, the folder, its ``events/``
or its ``metadata.json`` named, its metadata as an export's conversation,
``llm_model`` the model where no response names one; one event file alone is
refused, naming the folder); and
the evaluation harness's ``output.jsonl`` (``evaluation/utils/shared.py``
``EvalOutput``: one line per instance, ``instance_id``, ``instruction``,
``history`` = the run's events, ``metadata`` with ``agent_class`` and
``llm_config.model``, ``test_result`` with the ``git_patch`` and, once
evaluated, a ``report``, and ``error``; the OpenDevin-era harness, before 0.9,
wrote the instance as ``id``, ``history`` as ``[action, observation]`` pairs,
read flat, ``metadata.model_name`` and a benchmark's ``test_result.result``
true/false); and the GitHub issue resolver's
``output.jsonl`` (``openhands/resolver/resolver_output.py`` ``ResolverOutput``:
one line per issue, ``issue`` (owner, repo, number, title, body), ``issue_type``,
``instruction``, ``base_commit``, ``git_patch``, ``history`` = the run's events as
``dataclasses.asdict`` (flat, without ``source``/``id``/``cause``), ``metrics``,
``success`` with ``result_explanation`` (older: ``success_explanation``), ``error``).
Source read: All-Hands-AI/OpenHands ``openhands/events/serialization/event.py``
(``event_to_dict``: top keys ``id``, ``timestamp``, ``source``, ``message``,
``cause``, ``action``/``observation``, ``tool_call_metadata``,
``llm_metrics``; an action's fields under ``args``, an observation's under
``content`` + ``extras``, ``success`` for command output), ``core/schema``
(action / observation / agent-state names), ``events/observation/commands.py``
(a command failed when ``exit_code != 0``) and the replay trajectories in
``tests/runtime/trajs/``; the real run in Harbor's trajectory RFC.

Mapping
- task: the first ``message`` action from ``source: "user"``; the ``system``
  action (the system prompt; its ``args.tools`` give ``tools_available``),
  ``recall`` actions/observations (workspace context) and actions from
  ``source: "environment"`` (the runtime's own ``hidden`` commands:
  ``maybe_run_setup_script``'s ``.openhands/setup.sh``, git hooks; a failed
  one goes to ``metadata.setup_errors``) are not steps. Later user
  messages go to ``metadata.user_prompts``.
- steps: every other agent action, in order: ``run``, ``run_ipython``,
  ``read``, ``write``, ``edit``, ``browse*``, ``call_tool_mcp``, ``think``,
  ``delegate``, ``task_tracking``, ``finish``, ``reject``, ... (action = the
  tool's ``tool_call_metadata.function_name`` when the agent used function
  calling, e.g. ``execute_bash``, ``str_replace_editor``; else the action
  kind); arguments = the LLM's tool-call arguments kept in
  ``tool_call_metadata.model_response`` (decoded JSON), else ``args``
  without ``thought`` and bookkeeping (``impl_source``, ``security_risk``,
  ...); thought = the response's ``reasoning_content`` (once per response)
  and ``args.thought`` (the text the model wrote before the call). An
  agent ``message`` is a ``respond`` step ``{"content": ...}``. The
  observation is the event whose ``cause`` is the action's id (else the one
  with the same ``tool_call_id``): its ``content``. An ``error`` observation
  with no ``cause`` (a tool call OpenHands could not run, e.g. an invalid
  argument: no action event) is a step of its own, with no action.
- Step.error: an ``error`` observation, ``user_rejected``, ``success: false``,
  or ``extras.metadata.exit_code`` other than 0 (OpenHands' own rule: -1 is a
  command that did not finish) -- the decisive output line plus the code; an
  ``edit``/``read`` observation whose content starts ``ERROR:`` (the runtime's
  ``_execute_file_editor`` reports the file editor's failures only so) -- the
  editor's message; a ``run_ipython`` observation where CodeAct's ``agentskills`` say an edit was not made
  (``[No exact match found in ...``) -- their words.
- outcome: the final ``agent_state_changed`` decides only where it records a
  failure: ``error`` / ``rate_limited`` -> ``infra_error`` (reason kept; the
  agent's own iteration, budget or context-window limit -> ``failure``; where
  OpenHands recorded no reason, as 0.13-0.30 never did, ``rate_limited`` is the
  provider's rate limit, and for ``error`` the error says so and names the last
  failing step the run did not get past, its cause unknown), a
  ``reject`` action -> ``failure``. ``finished`` is the agent's own claim,
  not a verdict -> ``unknown`` (the state, and any ``task_completed``, are in
  metadata).
  An evaluation output line decides by its ``test_result.report.resolved``
  where the benchmark's evaluation added one, else by the top-level ``report``
  that ``update_output_with_eval.py`` writes into ``output.jsonl`` after the
  SWE-bench harness, its flags naming why a run was not resolved (empty patch,
  patch not applied, tests timed out; ``error_eval`` alone, the harness's own
  error, is ``infra_error`` as its report's ``error_ids`` are through
  ``--outcomes``); a line of a benchmark that checks the
  agent's answer by that check's true/false (``test_result.result``:
  OpenDevin-era benchmarks, AgentBench; ``.score``: GAIA; ``.success``: MINT),
  or by its ``test_result.reward`` through the success threshold (WebArena,
  MiniWoB; the run's ``reward``);
  else its ``error`` (the harness
  or agent error that ended the run) makes it a failure, or ``infra_error``
  for timeouts, rate limits, connection and server errors, and for any error
  before the agent's first step (the LLM provider or the runtime never worked).
  An error of the benchmark's evaluator (a ``test_result`` of only ``error``
  and ``traceback``: the grader raised) is no verdict on the agent: what the
  events say stands, else ``infra_error`` with that error. A line with no
  events (``history`` empty, or null: an instance V0 skipped after its maximum
  retries) is rejected alone, saying so with its error; the runs beside it read.
  But OpenHands/benchmarks writes an instance that failed after its retries so
  (``output_errors.jsonl``, the attempt's file) and keeps its conversation in
  ``conversations/<instance_id>.tar.gz`` beside them: the line's run is read
  from that archive (metadata ``events_from``) where the line's error names
  the conversation it holds (each retry and attempt overwrites it), else the
  line is rejected saying why (another attempt's run, an archive cut short,
  two conversations, a member not JSON or over 1 GiB); a walk passes it over.
- An issue resolver line: its flat events are read as ``event_to_dict`` would
  have written them (an action's fields are its ``args``; an observation's
  ``content`` + ``extras``, a top-level ``exit_code`` as ``metadata.exit_code``).
  Every action is the agent's except the opening ``message`` (the resolver's
  instruction) and a message right after an agent message that waited for a
  reply (the headless fake user's); an observation answers the action before
  it. task = the issue's title and body; outcome = ``success`` (the resolver's
  own check of the patch): true -> ``success``; false -> ``failure`` with the
  ``error`` (``infra_error`` for infrastructure errors as above) or else the
  explanation as its error, the explanation as cause where both are there;
  model = ``metrics``' token usage model; metadata: issue, issue_type,
  base_commit, patch_chars, comment_success, and for a successful run the
  explanation and any error (``_openhands_resolver`` reads the line's fields).
- task: for a SWE-bench-style prompt the issue between ``<issue_description>``
  tags (OpenHands' own prompt), else the whole first user message.
- trajectory_id = ``openhands.<conversation id>``: an export's
  ``conversation.conversation_id``, else the id the file name holds
  (``trajectory-<id>.json``), else ``openhands.<file stem>.<digest of the
  first event's time and the task>`` so two runs never share an id; an
  evaluation output line: ``openhands.<instance_id>.<digest of the run's
  output directory, start time and model>`` (the runner's ``state_<id>.json``,
  which has no settings: of its first event's id and time; task_id = its ``instance_id``,
  task_family = the repository a SWE-bench-style id names); the runner's
  ``traj_<id>.json`` / ``state_<id>.json`` copies of a run that a line of an
  ``output*.jsonl`` beside them holds (the same events, or none) are passed
  over, and so is its ``eval_<id>.json`` (that line's ``test_result``), and
  ``eval_infer.py``'s ``output.swebench_eval.jsonl`` (verdicts, no events) and
  OpenHands/benchmarks' ``cost_report.jsonl``, and the LLM call logs under
  ``llm_completions/<instance>/``;
  in an iterative run set (``output.critic_attempt_<N>.jsonl`` beside the
  aggregate ``output.jsonl``, gzipped or not) attempt N > 1 is
  ``<id>.attempt_<N>`` whether aggregated yet or not, the aggregate's line
  takes the id of the attempt it copies and that attempt its verdict (one
  run), ``handed_in`` says which the aggregate hands in (null: not known)
  (``_openhands_attempts``);
  a resolver line: ``openhands.resolver.<owner>__<repo>-<number>.<digest of
  the issue type, base commit, patch, cost and history length>``;
  model_id = the LLM response's ``model`` (else an evaluation's
  ``metadata.llm_config.model``); created_at = the first event time;
  metadata: cwd (a command's ``working_dir``), OpenHands version and agent
  class (from the system event), cost, final agent state; an export's
  conversation title, repository and branch.

software-agent-sdk (V1) conversations (what is where: ``_openhands_sdk``)
- read as: the conversation folder ``<id hex>/`` (``base_state.json`` +
  ``events/event-NNNNN-<id>.json``; OpenHands-CLI's recordings: the event
  files in the folder itself), named as the folder, its ``events/`` or
  its ``base_state.json``, is one run (``run_folder``/``read_folder``: the
  reader hands over the folder's files together); under a directory each such
  folder is one run. One event file alone is refused, naming the folder to
  ingest. The same events as JSON lines are a run, and so is the agent
  server's page of them (``EventPage``: ``{"items", "next_page_id"}``, read
  in append order: a ``sort_order=TIMESTAMP_DESC`` page reversed; a page
  that has a next keeps its id in ``metadata.next_page_id``) when it starts
  the conversation (its first event the tree's root; before the tree, the
  ``SystemPromptEvent``): a later page, the newest events, a search filtered
  by kind or source is refused saying which it is; an
  OpenHands/benchmarks ``output.jsonl`` line with SDK events in ``history``
  is an evaluation line as above (task = its ``instruction``, its verdict rules and id; model =
  ``metadata.llm.model``). A folder's run is the branch ending at
  ``base_state.json``'s ``leaf_event_id`` (with the one step a killed process
  left past that leaf, where the state still says ``running``, and the calls of
  a step an agent server's crash recovery left off the branch:
  ``_openhands_sdk.active_branch``).
- task: the first ``MessageEvent`` from ``source: "user"``; later ones go to
  ``metadata.user_prompts``, but for what the SDK itself says so
  (``_openhands_sdk.own_message``: by its words and where it stands): in the
  middle of a run, its refusal of a reply it could not turn into a tool call
  (``FunctionCallValidationError``: a step of its own, failed with that error,
  the model's mistake) and its nudge after a content filter blocked a reply
  (counted in ``metadata.content_filtered_replies``); after a turn its critic
  scored, the critic's "The task appears incomplete (iteration N ..." (counted
  in ``metadata.critic_followups``); while an agent server's ``/goal`` loop
  says it runs, its judge's "The goal is NOT yet complete (audit iteration N)"
  and its resume prompt (counted in ``metadata.goal_followups``). The first message, and one after the
  agent ended its turn, are the user's whatever they say (but those follow-ups). A message a ``UserPromptSubmit``
  hook blocked (its ``HookExecutionEvent``, ``blocked``, names it by ``message_id``: no turn ran for it) is
  no prompt: ``metadata.hook_blocked_prompts``, with the hook's reason if it gave one (a conversation with
  no other is passed over: no run, nothing wrong). The context such a hook adds to a prompt
  (``additionalContext``, the message's last ``extended_content`` part) is no part of it:
  ``metadata.hook_prompt_contexts``, each with its prompt (or with the SDK's own follow-up: the hook runs on every
  user-source message). ``SystemPromptEvent``'s ``tools`` give
  ``tools_available``, with those a ``SystemPromptUpdateEvent`` adds.
- steps: each ``ActionEvent``: action = ``tool_name`` (``terminal``,
  ``file_editor``, ``finish``, ``think``, an MCP tool, ...; a tool the agent
  lacks keeps the name it called), arguments = ``tool_call.arguments`` (the
  LLM's decoded JSON, else ``action`` without ``kind``), thought = the
  response's reasoning (``reasoning_content``, else the Responses API's
  ``responses_reasoning_item`` summary, else ``thinking_blocks``; once per
  ``llm_response_id``) and the
  ``thought`` text; an agent ``MessageEvent`` is a ``respond`` step
  ``{"content": ...}``; an ACP agent's ``ACPToolCallEvent`` (its start and
  its end, one step) is its ``tool_kind`` (``read``, ``execute``, ``edit``;
  a tool of kind ``other``: its ``title``) with ``raw_input``, the
  observation its ``raw_output`` (a command's record: its first output not
  empty, ``stderr`` first for a failed call; content blocks or an MCP
  ``CallToolResult``: their text; else its content blocks' text), a
  ``failed`` call's error its exit code or decisive line (Claude Code's by
  ``claude_code``'s rule), gemini-cli's "Command exited with code: N" one
  too (in debug mode the ``Exit Code: N`` of the report it shows; else it
  sends no exit code of a command that printed anything); a call the SDK
  closed as the turn broke or was interrupted is cancelled, not failed. A
  message ends the scope of the calls that ended, not of one still
  running. A sub-agent session's calls (``acp_session_id``:
  an ACP server's children, stored by the SDK fork with ``acp_subagents``)
  and its other events are not the run's steps (the root's call that spawned
  it answers for it, as Claude Code's sidechain records): counted in
  ``metadata.acp_subagent_sessions`` / ``acp_subagent_calls``.
  An action's observation is the event answering it
  (``action_id``, else ``tool_call_id``): ``observation.content[].text``
  (older: ``output``/``message``), the terminal's control codes the shell
  wrote into it (bracketed-paste switches, colours) dropped.
- Step.error: a command's ``exit_code`` (or ``metadata.exit_code``) other
  than 0 (-1: did not finish), ``timeout``, ``is_error`` (older ``error``):
  the decisive line; an ``AgentErrorEvent``'s ``error``; a
  ``UserRejectObservation`` (rejected by the user / blocked by a hook). A
  call still unanswered in a conversation saved ``waiting_for_confirmation``
  awaits approval: no result, no error, its index in
  ``metadata.awaiting_approval_steps`` (as openai-agents' paused calls).
- outcome: the SDK records no verdict. ``execution_status`` (``base_state.json``,
  else the last ``ConversationStateUpdateEvent``): ``finished`` is the agent's
  own stop -> ``unknown``; ``error`` (the run loop stopped on an exception, a
  ``ConversationErrorEvent``'s code and detail; an error the run was resumed
  from does not count; an ACP agent's "ACP prompt timed out ..." notice)
  -> ``infra_error`` (``MaxIterationsReached`` /
  ``MaxBudgetReached`` / ``LLMContextWindowExceedError``, the conversation
  outgrowing the model's window with no condenser: ``failure``), as the
  event trajectories' final ``error`` state; ``stuck`` (the stuck detector
  ended a run repeating itself) -> ``failure``. A ``/goal`` loop that ended
  (its ``ConversationStateUpdateEvent`` of key ``goal``, kept in
  ``metadata.goal``) decides unless the status is ``error``: its judge found
  the objective ``complete`` -> ``success``; ``capped`` (still not done at
  its round limit) -> ``failure`` naming what the judge found missing; not
  where the user prompted after its last status. Those statuses hang off the
  branch (stamped with the leaf, which they do not move) and are read with it.
  The SDK's standalone ``run_goal`` records no status: its follow-ups read as
  the user's prompts, its verdict unseen.
- trajectory_id = ``openhands.<base_state id as hex>`` (the folder's name, as
  the V0 conversation ids), else the file-name rule above; model_id =
  ``agent.llm.model`` (an ACP agent's: its ``acp_model``, else the model its
  server reported, ``agent_state.acp_current_model_id``, not an alias such as
  ``default``), else the agent's ``stats`` usage; metadata: cwd
  (``workspace.working_dir``), execution_status, cost, agent kind, the
  critic's score of the last turn's end (``critic_score``, a prediction).
- a sub-agent's conversation (the ``task`` / ``delegate`` tools persist it
  under the parent's, ``<parent>/subagents/<id>/``) is a run of its own, as
  Claude Code's and Codex's sub-agents are, marked ``is_subagent`` with its
  ``parent_conversation_id`` and, the parent's folder beside it, the
  ``parent_tool_call_id`` / ``parent_tool`` of the call that started it; so
  is an exported conversation whose details name its
  ``parent_conversation_id`` (the app server's sub-conversation), or a folder
  the agent server ran whose ``meta.json`` (a ``StoredConversation``, read
  with the folder) names it; a parent's details list its
  ``sub_conversation_ids``. Ids that are no UUIDs name no conversation.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import uuid
from pathlib import Path
from typing import Any

from trajsearch.actions import not_run
from trajsearch.model import Failure, Outcome, Trajectory

from ._agent_cli import (
    CONTEXT_CAUSE,
    CONTEXT_OVERFLOW,
    as_int,
    as_key,
    as_str,
    exit_code_error,
    finish_steps,
    first_time,
    iso_time,
    prompt_list,
)
from .. import sources
from . import _openhands_attempts as attempts, _openhands_resolver as resolver_line, _openhands_sdk as sdk, _prompts
from ._common import (
    Context, PassedOver, RecordError, as_dict, as_list, build, clip_task, decisive_line, file_stem, instance_repo,
    finite, hook_blocked_prompt, hook_prompt_context, last_tool_error, loads, outcome_of_reward, safe_id, short,
    tool_arguments, with_former_id,
)
from ._spans.outcome import error_outcome

NAME = "openhands"
#: Where OpenHands keeps its conversations in its persistence dir (``~/.openhands``): the CLI's and the SDK's
#: ``conversations``, the V1 app server's store ``v1_conversations`` and, before, ``v1/events``
#: (``_openhands_sdk.STORE_EVENT_NAME``): walked though hidden (see ``read``).
SESSION_FOLDERS = (".openhands/conversations", ".openhands/v1_conversations", ".openhands/v1/events")
#: A file is one conversation: the reader hands over its whole JSON list.
WHOLE_FILE = True
#: Searched in a file's first 64 KiB when no record can be parsed from them (see ``detect``); the second and third
#: alternatives are the start of a line too long to parse there, as its model writes its first fields: a resolver
#: line (``ResolverOutput``: the issue) and an evaluation line (``EvalOutput``: ``instance_id``, then ``test_result``,
#: whose patch, the instruction and the metadata can push ``history`` far past the window).
SIGNATURE = re.compile(r'"source"\s*:\s*"(?:agent|user|environment)"[\s\S]{0,2000}?"(?:action|observation)"\s*:\s*"'
                       r'(?:system|message|run|read|edit|recall|agent_state_changed)"'
                       r'|^\s*\{\s*"issue"\s*:\s*\{\s*"owner"\s*:\s*"[^"]*"\s*,'
                       r'\s*"repo"\s*:\s*"[^"]*"\s*,\s*"number"\s*:\s*\d+'
                       r'|^\s*\{\s*"instance_id"\s*:\s*"[^"]*"\s*,\s*"test_result"\s*:\s*\{')

SOURCES = frozenset({"agent", "user", "environment"})
NOT_STEPS = frozenset({"system", "recall", "condensation", "condensation_request", "change_agent_state", "null",
                       "pause", "resume", "stop", "start", "loop_recovery"})
NOISE_ARGS = frozenset({"thought", "impl_source", "translated_ipython_code", "security_risk", "confirmation_state",
                        "is_confirmed", "hidden", "wait_for_response", "image_urls", "file_urls",
                        "keep_prompt", "kernel_init_code", "action_risk"})
#: The fields of OpenHands' evaluation ``EvalMetadata`` that tell its ``metadata.json`` (see ``side_file``).
_EVAL_METADATA_KEYS = frozenset({"agent_class", "llm_config", "max_iterations", "eval_output_dir"})
#: The fields of the ``cost_report.jsonl`` OpenHands/benchmarks' ``report_costs.calculate_costs`` writes beside a
#: run set's outputs after its evaluation (see ``side_file``): those of every version (``proxy_cost_summary`` came
#: only on 2026-04-02, so a report written before it has none).
_COST_REPORT_KEYS = frozenset({"directory", "main_output", "critic_files", "summary"})
#: The fields of a line of ``maximum_retries_exceeded.jsonl``, which V0's ``log_skipped_maximum_retries_exceeded``
#: appends beside ``output.jsonl`` for each instance it skips (see ``side_file``).
_SKIPPED_KEYS = frozenset({"instance_id", "error", "timestamp"})
#: Where an OpenHands evaluation's LLM logs each call when its runner turns ``log_completions`` on (the SWE-bench
#: runners do): ``<eval_output_dir>/llm_completions/<instance_id>/<model, / as __>-<time.time()>.json``
#: (``evaluation/utils/shared.py``, ``openhands/llm/llm.py``), see ``side_path``.
COMPLETION_LOGS = "llm_completions"
_COMPLETION_LOG = re.compile(r".+-\d+(?:\.\d+)?\.json")
#: What OpenHands/benchmarks' runner saves of each instance beside ``output.jsonl`` (see ``side_path``): copies of
#: its run, and the evaluator's verdict on it (``eval_<id>.json``, the line's ``test_result``).
_RUNNER_COPY = re.compile(r"(?:state|traj)_(?P<instance>.+)\.json")
_RUNNER_VERDICT = re.compile(r"eval_(?P<instance>.+)\.json")
#: What an OpenHands SWE-bench evaluation writes beside ``output.jsonl`` other than runs (``evaluation/utils/
#: shared.py``'s per-instance log, ``infer_logs/instance_<id>.log``; ``eval_infer.py``'s per-instance
#: ``eval_outputs/<id>/``: the evaluation's script, the patch tested, its log and the tests' output).
INFER_LOGS, EVAL_OUTPUTS = "infer_logs", "eval_outputs"
_INFER_LOG = re.compile(r"instance_.+\.log")
_EVAL_OUTPUT = frozenset({"eval.sh", "patch.diff", "run_instance.log", "test_output.txt"})
_HEX_ID = re.compile(r"([0-9a-f]{16,}|[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})", re.I)


def _is_event(record: Any) -> bool:
    return isinstance(record, dict) and as_str(record.get("source")) in SOURCES and (
        isinstance(record.get("action"), str) or isinstance(record.get("observation"), str)
    ) and ("id" in record or "timestamp" in record)


def _is_eval_output(record: Any) -> bool:
    """A line of the evaluation harness's ``output.jsonl``: one instance's run, its events in ``history``
    (OpenHands/benchmarks writes the SDK's events there; an instance that recorded none leaves it empty)."""
    return isinstance(record, dict) and "instance_id" in record and isinstance(record.get("history"), list) and \
        (not record["history"] or any(_is_event(event) or sdk.is_event(event) for event in record["history"][:5]))


def _skipped(record: Any) -> bool:
    """An evaluation line of an instance that recorded no run: ``history`` null and the ``error`` that ended it, as
    V0's ``log_skipped_maximum_retries_exceeded`` writes into ``output.jsonl`` for an instance whose runtime failed
    its every retry (``EVAL_SKIP_MAXIMUM_RETRIES_EXCEEDED=true``: ``EvalOutput(instance_id, test_result={}, error)``).
    One such line made the whole file one unreadable record: every run beside it was lost."""
    return isinstance(record, dict) and isinstance(record.get("instance_id"), str) and record.get("history") is None \
        and isinstance(record.get("test_result"), dict) and isinstance(record.get("error"), str) \
        and bool(record["error"].strip())


def _paired_line(record: Any) -> Any:
    """An OpenDevin-era evaluation line (before 0.9: the instance's ``id``, ``history`` as ``[action, observation]``
    pairs) in today's shape, ``instance_id`` and the events flat; any other record as it is."""
    if not isinstance(record, dict) or "instance_id" in record or not isinstance(record.get("id"), (str, int)) \
            or not isinstance(record.get("instruction"), str) or not isinstance(record.get("history"), list) \
            or not record["history"] or not all(isinstance(pair, list) and len(pair) == 2 and all(
                isinstance(event, dict) and ("action" in event or "observation" in event) for event in pair)
                for pair in record["history"]):  # OpenHands' events, not a chat's [role, text] pairs
        return record
    return {**record, "instance_id": str(record["id"]),
            "history": [event for pair in record["history"] for event in pair if isinstance(event, dict)]}


def _wrapped(record: Any) -> list[Any] | None:
    """The event list inside an API answer: ``{"trajectory": [...]}``, or ``{"events": [...], "has_more": ...}``
    (``GET /api/conversations/<id>/events``; an export script adds ``conversation``, ``exported_at``, ``base_url``),
    or the V1 agent server's ``EventPage`` of SDK events, ``{"items": [...], "next_page_id": ...}``
    (``GET /api/conversations/<id>/events/search``)."""
    if not isinstance(record, dict):
        return None
    if isinstance(record.get("items"), list) and "next_page_id" in record:
        return record["items"]
    for key in ("trajectory", "events"):
        if isinstance(record.get(key), list):
            return record[key]
    return None


def _conversation(record: Any) -> dict[str, Any]:
    """The conversation's details an export kept beside its events (``GET /api/conversations/<id>``: V0's
    ``ConversationInfo``, its ``conversation_id``; ``GET /api/v1/app-conversations``: the app server's
    ``AppConversationInfo``, its ``id``), else {}."""
    return as_dict(record.get("conversation")) if isinstance(_wrapped(record), list) else {}


def _conversation_id(value: Any) -> str | None:
    """A conversation id as its folder is named (``uuid.hex``: ``3131...a0``), written with dashes or not; None for
    anything that is no UUID (every OpenHands conversation id is one: such a value names no conversation)."""
    try:
        return uuid.UUID(value.strip()).hex if isinstance(value, str) else None
    except ValueError:
        return None


def _own_id(conversation: dict[str, Any]) -> str | None:
    """The conversation's own id (hex), from the details kept of it: the app server's and the agent server's ``id``,
    V0's ``conversation_id``."""
    return _conversation_id(conversation.get("id") or conversation.get("conversation_id"))


def _conversation_link(conversation: dict[str, Any]) -> dict[str, Any]:
    """How a conversation whose details a file kept links to others (OpenHands ``app_conversation_models.py``
    ``AppConversationInfo``; the agent server's ``meta.json``, a ``StoredConversation``): one started with
    ``parent_conversation_id`` (a sub-conversation, run in its parent's sandbox with its parent's settings:
    ``live_status_app_conversation_service.py``) is a sub-agent's run, as a ``subagents/`` folder's is,
    ``is_subagent`` with its ``parent_conversation_id``; a parent names its ``sub_conversation_ids`` (V0's
    ``ConversationInfo`` too). Ids that are no UUIDs, and a parent that is the conversation itself (which the agent
    server refuses), link nothing. Empty for a conversation with neither."""
    own = _own_id(conversation)
    children = [child for value in as_list(conversation.get("sub_conversation_ids"))
                if (child := _conversation_id(value)) not in (None, own)]
    parent = _conversation_id(conversation.get("parent_conversation_id"))
    return {**({"is_subagent": True, "parent_conversation_id": parent} if parent not in (None, own) else {}),
            **({"sub_conversation_ids": children} if children else {})}


def matches(record: Any) -> bool:
    if (wrapped := _wrapped(record)) is not None:
        return bool(wrapped) and (_is_event(wrapped[0]) or sdk.is_event(wrapped[0]))
    return _is_event(record) or _is_eval_output(_paired_line(record)) or resolver_line.is_output(record) or sdk.is_event(record) \
        or sdk.is_base_state(record)


#: The V0 server's conversation store (``openhands/storage/locations.py``): ``sessions/<id>/events/<n>.json``, one
#: event per file (``event_to_dict``), beside ``sessions/<id>/metadata.json`` (``ConversationMetadata``).
STORE_METADATA = "metadata.json"
_STORE_EVENT = re.compile(r"^(\d+)\.json$")


def _store_event_files(folder: Path) -> list[Path]:
    """A V0 conversation store's event files (``events/<n>.json``), by name."""
    try:
        return sorted(p for p in (folder / sdk.EVENTS_DIR).iterdir() if _STORE_EVENT.match(p.name) and p.is_file())
    except OSError:
        return []


def _store_folder(path: Path) -> Path | None:
    """The V0 conversation store ``path`` stands for (the folder, its ``events/`` or its ``metadata.json``): a
    folder holding ``metadata.json`` (a ``ConversationMetadata``: its ``conversation_id``) and ``events/<n>.json``
    (OpenHands events), told by their contents, not their names alone."""
    folder = (path.parent if path.name == STORE_METADATA else None) if path.is_file() else (
        path.parent if path.name == sdk.EVENTS_DIR else path)
    if folder is None or not (events := _store_event_files(folder)) or not _has_metadata(folder):
        return None
    try:
        return folder if _is_event(loads(events[0].read_text(encoding="utf-8"))) else None
    except (OSError, ValueError):
        return None


def _has_metadata(folder: Path) -> bool:
    """Whether ``folder`` holds a conversation's ``metadata.json`` (a ``ConversationMetadata``: its ``conversation_id``)."""
    try:
        metadata = loads((folder / STORE_METADATA).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    return isinstance(metadata, dict) and "conversation_id" in metadata


def walked_file(path: Path) -> bool:
    """The adapter hook (see ``adapters/__init__``): an event of the app server's older store, named with no
    ``.json`` (``sdk.STORE_EVENT_NAME``), which a walk takes to find its conversation folder (``run_folder``)."""
    return path.suffix == "" and sdk.STORE_EVENT_NAME.match(path.name) is not None


def run_folder(path: Path) -> Path | None:
    """A run kept as a folder, read as one run: an SDK conversation (``base_state.json`` + ``events/``), or a V0
    server's conversation store (``metadata.json`` + ``events/<n>.json``)."""
    return sdk.run_folder(path) or _store_folder(path)


def folder_files(folder: Path) -> list[Path]:
    """The files the run of a conversation folder (``run_folder``) is read from; the rest of what lies below it is
    read as any other input is."""
    if not (folder / sdk.BASE_STATE).is_file() and _store_folder(folder) is not None:  # its metadata checked there
        return [folder / STORE_METADATA, *_store_event_files(folder)]
    return [*([folder / STORE_METADATA] if _has_metadata(folder) else []), *sdk.conversation_files(folder)]


def _store_events(files: dict[str, Any]) -> list[Any]:
    """A V0 conversation store's events, in the order of their ids (the file names)."""
    indexed = [(int(found.group(1)), value) for name, value in files.items()
               if (parts := name.split("/"))[0] == sdk.EVENTS_DIR and len(parts) == 2
               and (found := _STORE_EVENT.match(parts[1]))]
    return [event for _, event in sorted(indexed, key=lambda x: x[0])]


def _lone_store_event(record: Any, source: Path) -> str | None:
    """Why one event file of a V0 conversation store is not a run (the folder to ingest instead), if it is one."""
    if not _is_event(record) or source.parent.name != sdk.EVENTS_DIR or not _STORE_EVENT.match(source.name) \
            or not _has_metadata(source.parent.parent):  # a conversation's, as a store is told (_store_folder)
        return None
    folder = source.parent.parent
    return (f"this is one event ({record.get('action') or record.get('observation')}) of an OpenHands conversation, "
            f"which keeps one event per file in {folder}/events/ beside {folder}/{STORE_METADATA}: ingest the "
            f"conversation folder {folder}")


def read_folder(files: dict[str, Any], ctx: Context) -> Trajectory:
    """One conversation folder's files (``{relative path: JSON value}``) as its run: a V0 store's events with its
    metadata as an export's conversation, else an SDK conversation."""
    if STORE_METADATA in files and sdk.BASE_STATE not in files and _store_events(files):
        return to_trajectory({"events": _store_events(files), "conversation": as_dict(files[STORE_METADATA])}, ctx)
    state, events = sdk.folder_events(files)
    if not events:
        raise RecordError(f"no events/event-NNNNN-<id>.json (nor event files in the folder) beside {sdk.BASE_STATE} in "
                          "this OpenHands SDK conversation folder")
    branch = sdk.active_branch(events, state.get("leaf_event_id"), state.get("execution_status"))
    return _sdk_trajectory(branch, state, {}, ctx, folder=ctx.source,
                           link=_conversation_link(as_dict(files.get(sdk.SERVER_META))))


def split(document: Any):
    """A file is one run, except an evaluation or resolver ``output.jsonl``: one run per line (instance, issue; a
    skipped instance's line is one that holds none)."""
    if isinstance(document, list) and document and all(
            _is_eval_output(_paired_line(line)) or resolver_line.names_an_issue(line) or _skipped(line)
            for line in document):
        yield from ((f"record {n}", line) for n, line in enumerate(document, 1))
    else:
        yield "file", document


def _events(document: Any) -> list[dict[str, Any]]:
    if (wrapped := _wrapped(document)) is not None:
        document = wrapped
    elif _is_eval_output(document):
        document = document["history"]
    elif resolver_line.is_output(document):
        return _flat_events(document["history"])  # a resolver that crashed wrote no history: a run without steps
    elif resolver_line.names_an_issue(document):
        raise RecordError(resolver_line.missing(document))
    elif isinstance(document, dict):
        document = [document]
    if not isinstance(document, list):
        raise RecordError(f"expected a JSON list of OpenHands events, got {type(document).__name__}")
    events = [e for e in document if _is_event(e)]
    if not events:
        raise RecordError("no OpenHands event (with 'source' and 'action' or 'observation') in this file")
    return events


def _flat_events(history: list[Any]) -> list[dict[str, Any]]:
    """The resolver's ``dataclasses.asdict`` events in ``event_to_dict``'s shape, so one mapping reads both.

    asdict leaves out the underscored ``source``, ``id`` and ``cause``; they are put back: an action is the
    agent's, except the opening message (the resolver's instruction) and a message answering an agent message
    that waited for a reply (the headless fake user's); an observation answers the action before it."""
    events: list[dict[str, Any]] = []
    user_turn, last_action = True, None
    for n, flat in enumerate(history):
        if not isinstance(flat, dict) or _is_event(flat):  # already event_to_dict's shape: kept as it is
            events.extend([flat] if isinstance(flat, dict) else [])
            continue
        props = {k: v for k, v in flat.items() if k not in ("action", "observation")}
        if isinstance(flat.get("action"), str):
            kind = flat["action"]
            source = "user" if kind == "message" and user_turn else "agent"
            if kind not in NOT_STEPS:  # bookkeeping (system, recall, state changes) does not take a turn
                user_turn = source == "agent" and kind == "message" and bool(flat.get("wait_for_response"))
            events.append({"id": n, "source": source, "action": kind, "args": props})
            last_action = n
        elif isinstance(flat.get("observation"), str):
            if "exit_code" in props and not isinstance(props.get("metadata"), dict):  # before CmdOutputMetadata
                props["metadata"] = {"exit_code": props["exit_code"]}
            content = props.pop("content", "")
            events.append({"id": n, "source": "environment", "cause": last_action,
                           "observation": flat["observation"], "content": content, "extras": props})
    return events


def _args(event: dict[str, Any]) -> dict[str, Any]:
    args = event.get("args")
    return args if isinstance(args, dict) else {}


def _extras(event: dict[str, Any]) -> dict[str, Any]:
    extras = event.get("extras")
    return extras if isinstance(extras, dict) else {}


def _tool_meta(event: dict[str, Any]) -> dict[str, Any]:
    meta = event.get("tool_call_metadata")
    return meta if isinstance(meta, dict) else {}


def _model(event: dict[str, Any]) -> str | None:
    response = _tool_meta(event).get("model_response")
    if isinstance(response, dict) and isinstance(response.get("model"), str) and response["model"]:
        return response["model"]
    model = as_dict(as_dict(event.get("llm_metrics")).get("accumulated_token_usage")).get("model")
    return model if isinstance(model, str) and model and model != "default" else None


def _llm_call(event: dict[str, Any]) -> tuple[Any, str | None]:
    """(decoded arguments, reasoning text) of the LLM tool call behind an action, when the event kept it."""
    meta = _tool_meta(event)
    response = meta.get("model_response")
    if not isinstance(response, dict) or not isinstance(response.get("choices"), list):
        return None, None
    for choice in response["choices"]:
        message = choice.get("message") if isinstance(choice, dict) else None
        if not isinstance(message, dict):
            continue
        reasoning = message.get("reasoning_content") if isinstance(message.get("reasoning_content"), str) else None
        for call in as_list(message.get("tool_calls")):
            if isinstance(call, dict) and call.get("id") == meta.get("tool_call_id"):
                return tool_arguments(as_dict(call.get("function")).get("arguments")), reasoning
    return None, None


def _step_for(event: dict[str, Any]) -> dict[str, Any]:
    kind = event["action"]
    args = _args(event)
    function = _tool_meta(event).get("function_name")
    if kind == "message":
        return {"action": "respond", "arguments": {"content": args.get("content", event.get("message") or "")},
                "thought": None}
    if kind == "think":
        return {"action": str(function or "think"), "arguments": {"thought": args.get("thought", "")}, "thought": None}
    if kind == "call_tool_mcp":
        name = args.get("name") or function or "call_tool_mcp"
        arguments = tool_arguments(args.get("arguments"))
        return {"action": str(name), "arguments": arguments if arguments is not None else {},
                "thought": as_str(args.get("thought")) or None}
    arguments, _ = _llm_call(event)
    own = {k: v for k, v in args.items() if k not in NOISE_ARGS and v is not None}
    if not isinstance(arguments, dict) or (not arguments and own):  # no function call kept: the action's fields
        arguments = own
    if kind == "finish" and not as_str(arguments.get("final_thought") or arguments.get("message")) \
            and as_str(event.get("message")):  # older versions keep the closing words only as the event's message
        arguments = {**arguments, "message": event["message"]}
    return {"action": str(function or kind), "arguments": arguments, "thought": as_str(args.get("thought")) or None}


def _editor_error(content: str) -> str | None:
    """The file editor's failure, which the runtime reports only in the text of an ``edit``/``read`` observation.

    ``_execute_file_editor`` returns ``f'ERROR:\\n{result.error}'`` as the content, with no error flag; the
    message is one sentence, spread over lines only when it quotes an ``old_str`` (its first and last line)."""
    if not content.startswith("ERROR:"):
        return None
    lines = [line.strip() for line in content[len("ERROR:"):].splitlines() if line.strip()]
    if not lines:
        return "file editor error"
    return short(lines[0] if len(lines) == 1 else f"{lines[0]} … {lines[-1]}", 300)


#: What CodeAct's ``agentskills`` (``openhands/runtime/plugins/agent_skills/file_ops``) print, not raise, when an
#: edit it was asked for is not made: ``edit_file_by_replace``'s text not found, an edit's bad line numbers, an edit
#: its linter undid; a ``run_ipython`` observation has no exit code or error flag to say so.
_SKILL_ERROR = re.compile(r"^\[(No exact match found in \S+|Error editing file \S+?\.|Your proposed edit has introduced "
                          r"new syntax error\(s\)\.)", re.M)


def _skill_error(content: str) -> str | None:
    """The failure of an ``agentskills`` edit a ``run_ipython`` observation reports, in the skill's own words."""
    found = _SKILL_ERROR.search(content)
    return short(found.group(1), 300) if found else None


def _observation_error(event: dict[str, Any], content: str) -> str | None:
    kind = event.get("observation")
    if kind == "error":
        return short(decisive_line(content) or content or "error", 300)
    if kind in ("edit", "read") and (error := _editor_error(content)):
        return error
    if kind == "run_ipython" and (error := _skill_error(content)):
        return error
    if kind == "user_rejected":
        return not_run("rejected by the user" + (f": {short(content, 200)}" if content else ""))
    meta = _extras(event).get("metadata")
    code = as_int(meta.get("exit_code")) if isinstance(meta, dict) else None
    if code is not None and code != 0:
        return exit_code_error(content, code) if code != -1 else (
            "command did not finish (exit code -1)" + (f": {decisive_line(content)}" if decisive_line(content) else ""))
    if event.get("success") is False:
        return short(decisive_line(content) or "failed", 300)
    return None


def _unrun_call(content: str, error: str, at: Any) -> dict[str, Any]:
    """An ``error`` observation with no ``cause`` as a step of its own: OpenHands writes one for a tool call it could
    not turn into an action (an invalid argument), so no action event precedes it."""
    return {"action": None, "observation": content or None, "error": error, "started_at": iso_time(at),
            "ended_at": iso_time(at), "_done": True}


def _acted(steps: list[dict[str, Any]]) -> bool:
    """Whether the agent acted: a step with an action. An error event with no cause is a step of its own but no
    action (the controller's ``report_error()`` when the LLM call raised writes one before any step)."""
    return any(step.get("action") for step in steps)


def _evaluation_verdict(evaluation: dict[str, Any], outcome: Outcome, failure: Failure | None,
                        acted: bool, ctx: Context) -> tuple[Outcome, Failure | None]:
    """An evaluation line's outcome: its ``test_result.report.resolved`` where the benchmark's evaluation added
    one, else its ``error`` (the harness or agent error that ended the run) where the events said nothing; an error
    before the agent ``acted`` at all (the LLM provider or the runtime failed to start) is the harness's."""
    report = _harness_report(evaluation)
    if isinstance(resolved := report.get("resolved"), bool):  # the benchmark's own verdict
        if resolved:
            return Outcome.success, None
        why = next((text for flag, text in _NOT_RESOLVED if report.get(flag) is True), None)
        if why is None and report.get("error_eval") is True:  # the harness wrote no report: no verdict on the patch
            own = failure.error if failure is not None and failure.error else None  # what the run's events said
            return Outcome.infra_error, Failure(error=own or _EVAL_ERROR, cause=_EVAL_ERROR_CAUSE)
        return Outcome.failure, Failure(error=f"not resolved: {why or _TESTS_FAILED}")
    checks = as_dict(evaluation.get("test_result"))
    if (key := next((k for k in _ANSWER_CHECKS if isinstance(checks.get(k), bool)), None)) is not None:
        return (Outcome.success, None) if checks[key] else (
            Outcome.failure, Failure(error=f"not solved: the benchmark's check of the answer failed (test_result.{key} "
                                           "false)"))
    if (reward := _benchmark_reward(evaluation)) is not None:  # graded through the operator's success threshold
        graded = outcome_of_reward(reward, ctx)
        return (graded, None) if graded is Outcome.success else (
            graded, Failure(error=f"not solved: the benchmark's reward {reward:g} (test_result.reward)"))
    if crash := _evaluator_crash(evaluation):  # no verdict, and nothing said of the agent: what the events said
        return (Outcome.infra_error, Failure(error=crash, cause=_EVALUATOR_CRASH)) if outcome is Outcome.unknown \
            else (outcome, failure)
    if isinstance(evaluation.get("error"), str) and evaluation["error"].strip() and outcome is Outcome.unknown:
        error = short(evaluation["error"].strip(), 500, keep="head")
        if not acted and not _AGENT_LIMIT.search(error):
            return Outcome.infra_error, Failure(error=error, cause="infrastructure: the run failed before the agent's "
                                                                   "first step")
        return error_outcome(evaluation["error"]), Failure(error=error)
    return outcome, failure


_EVALUATOR_CRASH = "infrastructure: the benchmark's evaluator failed after the run, which says nothing of the agent"
#: Where a benchmark's own check of the agent's answer puts its true/false in ``test_result``: ``result`` (the
#: OpenDevin-era benchmarks, AgentBench, logic reasoning), ``score`` (GAIA's ``question_scorer``, in OpenHands V0's
#: and OpenHands/benchmarks' runners alike), ``success`` (MINT).
_ANSWER_CHECKS = ("result", "score", "success")


def _benchmark_reward(evaluation: dict[str, Any]) -> float | None:
    """The reward a browsing benchmark's runner writes as ``test_result.reward`` (OpenHands V0's WebArena,
    VisualWebArena, MiniWoB: the environment's reward for the run), if a number."""
    reward = as_dict(evaluation.get("test_result")).get("reward")
    return float(reward) if isinstance(reward, (int, float)) and not isinstance(reward, bool) else None


def _graded(evaluation: dict[str, Any]) -> dict[str, Any]:
    """The run's ``reward`` field, where its benchmark graded it (``_benchmark_reward``)."""
    return {"reward": reward} if (reward := _benchmark_reward(evaluation)) is not None else {}
#: Why a run the harness judged was not resolved, by the flags OpenHands' SWE-bench evaluation writes beside
#: ``resolved`` (``eval_infer.py``, ``update_output_with_eval.py``), the first that is set; else the tests failed.
#: Its ``error_eval``, with none of these, is no verdict on the patch: ``update_output_with_eval.py`` sets it for the
#: instances the harness's report lists in ``error_ids``, ``eval_infer.py`` where the evaluation could not start or
#: grade; an ``infra_error`` then, as that report read through ``--outcomes`` makes it.
_NOT_RESOLVED = (("empty_generation", "the patch was empty"), ("failed_apply_patch", "the patch did not apply"),
                 ("test_timeout", "the tests timed out"))
_TESTS_FAILED = "the benchmark's tests failed on the patch"
_EVAL_ERROR = "evaluation errored: the benchmark's harness could not judge the patch (report error_eval)"
_EVAL_ERROR_CAUSE = ("infrastructure: the benchmark's harness wrote no report for this instance (its report's "
                     "error_ids: the patch may not have applied, or the container failed; see its run_instance.log), "
                     "so the patch has no verdict")


def _harness_report(evaluation: dict[str, Any]) -> dict[str, Any]:
    """The benchmark's verdict on an evaluation line: ``test_result.report`` where OpenHands' own evaluator
    (``eval_infer.py``) wrote it, else the top-level ``report`` that ``scripts/eval/update_output_with_eval.py``
    (run by ``eval_infer.sh`` after the SWE-bench / Multi-SWE-bench harness) writes into every line of
    ``output.jsonl``: ``{empty_generation, resolved, failed_apply_patch, error_eval, test_timeout}``."""
    nested = as_dict(as_dict(evaluation.get("test_result")).get("report"))
    return nested if "resolved" in nested else as_dict(evaluation.get("report"))


def _evaluator_crash(evaluation: dict[str, Any]) -> str | None:
    """The error of an evaluator that crashed grading the run: a ``test_result`` holding only ``error`` (and its
    ``traceback``), as OpenHands/benchmarks writes when its grader raises (OpenAgentSafety's ``evaluator_temp``)."""
    result = as_dict(evaluation.get("test_result"))
    error = result.get("error")
    if not result or not set(result) <= {"error", "traceback"} or not isinstance(error, str) or not error.strip():
        return None
    return short(error.strip(), 500, keep="head")


def _instance_task(evaluation: dict[str, Any]) -> dict[str, Any]:
    """An evaluation line's instance as the run's task id, its repository as the family (a SWE-bench-style id), so
    runs of one instance by OpenHands and by other agents group together."""
    instance = evaluation.get("instance_id")
    if not isinstance(instance, str) or not instance.strip():
        return {}
    return {"task_id": instance.strip()[:200], "task_family": instance_repo(instance.strip())}


def _evaluation_id(evaluation: dict[str, Any], model: Any) -> str:
    """``openhands.<instance_id>.<digest of the run's output directory, start time and model>``; with no
    ``metadata`` (the runner's ``state_<id>.json``) the first event's id and time stand for the run, so two
    experiments' state files of one instance never share an id."""
    settings = as_dict(evaluation.get("metadata"))
    parts = [str(settings.get(k) or "") for k in ("eval_output_dir", "start_time")]
    if not any(parts):
        first = next((e for e in evaluation["history"] if isinstance(e, dict)), {})
        parts.append(f"{first.get('id') or ''}\x1f{first.get('timestamp') or ''}")
    run = "\x1f".join(parts) + f"\x1f{model}"
    return f"openhands.{evaluation['instance_id']}.{hashlib.sha1(run.encode()).hexdigest()[:10]}"


def side_file(record: Any) -> str | None:
    """The adapter hook (see ``adapters/__init__``): the evaluation's ``metadata.json`` (its ``EvalMetadata``),
    written beside ``output.jsonl`` when a run set starts; and the verdicts OpenHands' own SWE-bench evaluator
    (``evaluation/benchmarks/{swe_bench,multi_swe_bench}/eval_infer.py``) writes beside it as
    ``output.swebench_eval.jsonl``: per instance an ``EvalOutput`` of the patch and its ``test_result.report``,
    no events (``history`` null)."""
    if isinstance(record, dict) and _EVAL_METADATA_KEYS <= record.keys():
        return ("OpenHands evaluation metadata (the agent, LLM and settings of a run set), not a run: the runs are "
                "the lines of the output.jsonl beside it")
    if isinstance(record, dict) and isinstance(record.get("instance_id"), str) and not record.get("history") \
            and not record.get("instruction") \
            and isinstance(as_dict(as_dict(record.get("test_result")).get("report")).get("resolved"), bool):
        return ("OpenHands' SWE-bench evaluation of the runs in the output.jsonl beside it (eval_infer.py's "
                "verdicts, no events): update_output_with_eval.py writes them into that file, read with them")
    if isinstance(record, dict) and record.keys() == _SKIPPED_KEYS and isinstance(record["instance_id"], str):
        return ("OpenHands' list of the instances an evaluation skipped after their maximum retries "
                "(maximum_retries_exceeded.jsonl: each one's error), not a run: each has a line with that error, and "
                "no events, in the output.jsonl beside it")
    if isinstance(record, dict) and _COST_REPORT_KEYS <= record.keys() and isinstance(record["critic_files"], list):
        return ("OpenHands/benchmarks' cost report of a run set (cost_report.jsonl: the cost and time of its "
                "output.jsonl and attempt files), not a run: the runs are the lines of those files")
    return None


def side_path(path: Path, fmt: str | None) -> str | None:
    """The adapter hook (see ``adapters/__init__``): OpenHands/benchmarks' runner (``openagentsafety/run_infer.py``
    ``_default_on_result_writer``) saves an instance's run as ``traj_<id>.json`` (its events) and ``state_<id>.json``
    (``{instance_id, history, num_events}``) beside ``output.jsonl``, whose line is the same run with its
    instruction, settings and verdict. Such a copy is passed over only when a line of an ``output*.jsonl`` beside it
    holds that instance with the very same events (their ids, in order; or none, for a run that recorded nothing:
    its line says so). The runner's ``eval_<id>.json``, the ``test_result`` of that line (the evaluator's checkpoints
    and score, or its error), is no run: passed over when no format reads it and such a line is beside it. So is an
    empty ``output.jsonl`` beside the evaluation's ``metadata.json``: a run set that finished no instance (the runner
    creates the file when it starts). And so is the log of each LLM call its runner keeps (``COMPLETION_LOGS``), and
    each instance's log and evaluation output (``INFER_LOGS``, ``EVAL_OUTPUTS``)."""
    if fmt is None and path.parent.parent.name == COMPLETION_LOGS and _COMPLETION_LOG.fullmatch(path.name):
        return (f"an OpenHands evaluation's log of one LLM call ({COMPLETION_LOGS}/<instance>/: the messages sent and "
                "the response), not a run: the instance's run is its line in the run set's output.jsonl")
    if fmt is None and path.parent.name == INFER_LOGS and _INFER_LOG.fullmatch(path.name):
        return (f"an OpenHands evaluation's log of one instance ({INFER_LOGS}/), not a run: the instance's run is its "
                "line in the run set's output.jsonl")
    if fmt is None and path.parent.parent.name == EVAL_OUTPUTS and path.name in _EVAL_OUTPUT:
        return (f"the SWE-bench evaluation's {path.name} of instance {path.parent.name} ({EVAL_OUTPUTS}/), not a "
                "run: the instance's run is its line in the run set's output.jsonl")
    if fmt is None and path.name == "output.jsonl" and (path.parent / "metadata.json").is_file() and _empty(path):
        return "an OpenHands evaluation's empty output.jsonl: the run set finished no instance"
    if fmt is None and path.parent.name == sdk.ARCHIVES_DIR and path.name.endswith(".tar.gz") and any(
            path.name.removesuffix(".tar.gz") in lines for _, lines in _outputs_beside(path.parent)):
        return (f"the conversation archive of instance {path.name.removesuffix('.tar.gz')} (OpenHands/benchmarks' "
                f"{sdk.ARCHIVES_DIR}/), not a run of its own: its run is read from it with the line of the run set "
                "that holds no events and whose error names its conversation, else from the line's events")
    if fmt is None and (verdict := _RUNNER_VERDICT.fullmatch(path.name)):
        return _runner_verdict(path, verdict.group("instance"))
    found = _RUNNER_COPY.fullmatch(path.name)
    if fmt != NAME or found is None:
        return None
    try:
        document = loads(path.read_text(encoding="utf-8"))
        mine = attempts.event_ids(document.get("history") if isinstance(document, dict) else document)
    except (OSError, ValueError):
        return None
    for out, runs in _outputs_beside(path):
        if mine is not None and any(line.event_ids == mine for line in runs.get(found.group("instance"), ())):
            return f"a copy of instance {found.group('instance')}'s run, read from its line in {out.name}" if mine \
                else f"a copy of instance {found.group('instance')}'s run, which recorded nothing (as its line in " \
                     f"{out.name} says)"
    return None


def read_with(path: Path) -> tuple[Path, ...]:
    """The adapter hook (see ``adapters/__init__``): an iterative run set's attempt file is read with its aggregate
    and its other attempt files, the runner's file of error lines with its attempt files
    (``_openhands_attempts.read_with``); a run set's file (``output*.jsonl``, an attempt file, the error lines) beside
    ``conversations/`` with the archive there of each of its lines that holds no events (``_archived_run``; one
    appearing or going changes the list, as an attempt rewrites it). The checkpoint asks this of every file of every
    input, even one it then skips: so no other ``.jsonl`` is parsed, nor a run set's file where no archive lies."""
    beside = attempts.read_with(path)
    name = sources.plain_name(path.name)
    if not name.endswith(".jsonl") or not (name.startswith("output") or attempts.ATTEMPT_FILE.fullmatch(path.name)
                                           or attempts.ERRORS_FILE.fullmatch(path.name)):
        return beside
    try:
        with os.scandir(path.parent / sdk.ARCHIVES_DIR) as entries:
            present = {e.name.removesuffix(".tar.gz") for e in entries if e.name.endswith(".tar.gz")}
    except OSError:  # no conversations/ folder
        return beside
    if not present:
        return beside
    return (*beside, *(path.parent / sdk.ARCHIVES_DIR / f"{instance}.tar.gz"
                       for instance, lines in attempts.output_lines(path).items()
                       if instance in present and any(line.fingerprint[0] == 0 for line in lines)))


def _outputs_beside(path: Path) -> list[tuple[Path, dict[str, tuple[attempts.Line, ...]]]]:
    """The lines of each evaluation output (``output*.jsonl``, compressed or not) in the folder of ``path``."""
    outputs = sorted(p for p in path.parent.glob("output*.jsonl*") if sources.plain_name(p.name).endswith(".jsonl"))
    return [(out, attempts.output_lines(out)) for out in outputs]


def _runner_verdict(path: Path, instance: str) -> str | None:
    """Why the runner's ``eval_<instance>.json`` holds no run, when it is a JSON object and a line of an
    ``output*.jsonl`` beside it holds that instance's run (whose ``test_result`` it copies)."""
    out = next((out for out, runs in _outputs_beside(path) if instance in runs), None)
    if out is None:
        return None
    try:
        verdict = loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(verdict, dict):
        return None
    return (f"the evaluator's verdict on instance {instance} (the test_result of its line in {out.name}, "
            "which is read with it), not a run")


def _empty(path: Path) -> bool:
    try:
        return path.stat().st_size == 0
    except OSError:
        return False


#: How the runner's error names the conversation that failed (the SDK's ``ConversationRunError``: "Conversation run
#: failed for id=<uuid>: ..."), kept in an error line's ``error`` ("Instance failed after N retries. Last error: ...").
_FAILED_CONVERSATION = re.compile(r"Conversation run failed for id=(?P<id>[0-9a-fA-F][0-9a-fA-F-]{31,35})\b")


def _archived_run(line: dict[str, Any], source: Path) -> tuple[Path, dict[str, Any], list[dict[str, Any]]] | None:
    """(archive, base state, events) of the run of an evaluation line that holds no events, where its run set keeps
    it: OpenHands/benchmarks writes an instance that failed after its retries (the agent's iteration limit, a stuck or
    broken conversation) as ``history: []`` (``_create_error_output``: into ``output_errors.jsonl`` and the attempt's
    file), while its conversation is in ``conversations/<instance_id>.tar.gz`` beside them (``sdk.ARCHIVES_DIR``).
    Every retry and attempt that got a workspace overwrites that archive, and one that got none (a runtime that never
    came up) leaves the one before: so it is the line's run only where the line's error names the conversation it
    holds. None where there is no such archive; a RecordError where there is one but it is not (or cannot be told to
    be) the line's run, or cannot be read."""
    folder = source.parent / sdk.ARCHIVES_DIR
    archive = folder / f"{line['instance_id']}.tar.gz"
    if archive.parent != folder or not archive.is_file():  # (an id holding a "/", or absolute, names no archive)
        return None
    shown = f"{sdk.ARCHIVES_DIR}/{archive.name}"
    if (named := _FAILED_CONVERSATION.search(str(line.get("error") or ""))) is None:
        raise RecordError(f"its conversation archive {shown} may hold another attempt's run (each attempt at an "
                          "instance overwrites it, and this line's error names no conversation)")
    state, events = sdk.archived_conversation(archive)
    if state.get("id") is None:
        raise RecordError(f"its conversation archive {shown} holds no {sdk.BASE_STATE} naming its conversation")
    if _uuid_hex(state["id"]) != _uuid_hex(named["id"]):
        raise RecordError(f"its conversation archive {shown} holds another attempt's run (conversation "
                          f"{state.get('id')}, not {named['id']} as its error says: each attempt overwrites it)")
    return archive, state, events


def _uuid_hex(value: Any) -> str:
    """A conversation id as its folder is named (``3131...a0``), as :func:`_conversation_id` reads it (an export's
    and a link's ids, so a folder's run and its export's share one id); an id that is no UUID (which the SDK, whose
    ``ConversationID`` is one, does not write) lowercased without its dashes, as its run was named before."""
    return _conversation_id(str(value)) or str(value).strip().replace("-", "").lower()


def _file_run_id(ctx: Context, first_time: Any, task: str) -> str:
    """``openhands.<conversation id>`` when the file name holds one, else ``openhands.<file stem>.<digest of
    the first event's time and the task>`` so two runs never share an id."""
    stem = file_stem(ctx.source, (".json", ".jsonl"))
    if found := _HEX_ID.search(stem):
        return f"openhands.{found.group(1)}"
    digest = hashlib.sha1(f"{first_time or ''}\x1f{task}".encode()).hexdigest()[:10]
    return f"openhands.{stem}.{digest}"


def to_trajectory(record: Any, ctx: Context) -> Trajectory:
    record = _paired_line(record)
    if sdk.is_event(record):
        raise RecordError(sdk.lone_event(record, ctx.source))
    if reason := _lone_store_event(record, ctx.source):
        raise RecordError(reason)
    if sdk.is_base_state(record):
        raise RecordError(f"a {sdk.BASE_STATE} without its events: ingest the conversation folder that holds it")
    if (wrapped := _wrapped(record)) is not None and any(sdk.is_event(e) for e in wrapped):
        if "next_page_id" not in record:  # an export's own wrapping of the events, the conversation's details beside
            conversation = _conversation(record)
            return _sdk_trajectory(sdk.page_order([e for e in wrapped if sdk.is_event(e)])[0],
                                   {"id": _own_id(conversation)}, {}, ctx,
                                   link=_conversation_link(conversation), exported=True)
        return _event_page([e for e in wrapped if sdk.is_event(e)], record.get("next_page_id"), ctx)
    if isinstance(record, list) and any(sdk.is_event(e) for e in record) and not any(_is_event(e) for e in record):
        # pages saved newest first (sort_order=TIMESTAMP_DESC) as one list: the list runs backwards
        return _sdk_trajectory(sdk.page_order([e for e in record if sdk.is_event(e)])[0], {}, {}, ctx)
    if _is_eval_output(record) and (copied := attempts.copied_from(record, ctx.source)) is not None:
        raise PassedOver("a copy of an attempt file's line", f"instance {record['instance_id']}: the runner's copy "
                         f"of its line in {copied.name}, where its run is read", unit="line")
    archived = None
    if _is_eval_output(record) and not record["history"] or _skipped(record):
        try:
            archived = _archived_run(record, ctx.source) if _is_eval_output(record) else None
        except RecordError as exc:
            raise RecordError(f"instance {record['instance_id']}: no event in its history, and {exc}"
                              + (f"; its error: {str(record['error'])[:300]}" if record.get("error") else "")) from None
        if archived is None:
            raise RecordError(f"instance {record['instance_id']}: no event in its history (the run recorded nothing"
                              + (f"; its error: {str(record['error'])[:300]})" if record.get("error") else ")"))
    attempt = attempts.attempt_of(record, ctx.source) if _is_eval_output(record) else None
    record = attempts.judged(record, attempt)
    if archived is not None:  # the line's run is its conversation's archive
        archive, state, events = archived
        return _sdk_trajectory(events, state, {**record, "history": events}, ctx, attempt=attempt, archive=archive)
    if _is_eval_output(record) and not any(_is_event(e) for e in record["history"][:5]):
        return _sdk_trajectory([e for e in record["history"] if sdk.is_event(e)], {}, record, ctx, attempt=attempt)
    events = _events(record)
    steps: list[dict[str, Any]] = []
    by_event: dict[Any, dict[str, Any]] = {}
    by_call: dict[str, dict[str, Any]] = {}
    prompts: list[str] = []
    tools: list[str] = []
    models: list[str] = []
    system_args: dict[str, Any] = {}
    states: list[tuple[str, str]] = []
    loose_errors: list[str] = []
    setup: dict[Any, str] = {}  # the runtime's own commands (id -> command), answered by no step
    setup_errors: list[str] = []
    rejected: str | None = None
    task_completed = None
    seen_responses: set[Any] = set()
    for event in events:
        at = event.get("timestamp")
        if (model := _model(event)) and model not in models:
            models.append(model)
        if isinstance(event.get("action"), str):
            kind = event["action"]
            if kind == "system":
                system_args = _args(event)
                for tool in as_list(system_args.get("tools")):
                    fn = tool.get("function") if isinstance(tool, dict) else None
                    if isinstance(fn, dict) and fn.get("name"):
                        tools.append(str(fn["name"]))
                continue
            if kind == "change_agent_state" and _args(event).get("agent_state"):
                states.append((str(_args(event)["agent_state"]), ""))
            if kind in NOT_STEPS:
                continue
            if event.get("source") == "environment":  # the runtime's setup script or git hooks, not the agent's
                setup[as_key(event.get("id"))] = str(_args(event).get("command") or kind)
                continue
            if event.get("source") == "user":
                if kind == "message":
                    text = str(_args(event).get("content") or event.get("message") or "").strip()
                    if text:
                        prompts.append(text)
                continue
            step = _step_for(event)
            response_id = as_key(as_dict(_tool_meta(event).get("model_response")).get("id"))
            reasoning = _llm_call(event)[1]
            if reasoning and response_id not in seen_responses:
                step["thought"] = "\n\n".join(t for t in (reasoning, step.get("thought")) if t)
            seen_responses.add(response_id)
            step["started_at"] = iso_time(at)
            steps.append(step)
            if as_key(event.get("id")) is not None:
                by_event[event["id"]] = step
            call_id = _tool_meta(event).get("tool_call_id")
            if call_id:
                by_call[str(call_id)] = step
            if kind == "reject":
                outputs = _args(event).get("outputs")
                reason = outputs.get("reason") if isinstance(outputs, dict) else None
                rejected = str(reason or event.get("message") or "the agent rejected the task")
            if kind == "finish" and _args(event).get("task_completed") is not None:
                task_completed = _args(event).get("task_completed")
            continue
        kind = event.get("observation")
        if kind == "agent_state_changed":
            states.append((str(_extras(event).get("agent_state") or ""), str(_extras(event).get("reason") or "")))
            continue
        if kind in ("recall", "null", "condense"):
            continue
        if as_key(event.get("cause")) in setup:
            if error := _observation_error(event, event.get("content") if isinstance(event.get("content"), str) else ""):
                setup_errors.append(f"{short(setup[as_key(event['cause'])], 100)}: {error}")
            continue
        step = by_event.get(as_key(event.get("cause")))
        if step is None and _tool_meta(event).get("tool_call_id"):
            step = by_call.get(str(_tool_meta(event)["tool_call_id"]))
        content = event.get("content")
        content = content if isinstance(content, str) else ("" if content is None else json.dumps(content))
        error = _observation_error(event, content)
        if step is None:
            if error and event.get("cause") is None:  # answering no action: the agent's call it could not run
                steps.append(_unrun_call(content, error, at))
            elif error:
                loose_errors.append(error)
            continue
        if step.get("_done"):
            continue
        step["observation"] = content or None
        step["error"] = error
        step["ended_at"] = iso_time(at)
        step["_done"] = True

    evaluation = record if _is_eval_output(record) else {}
    resolver = record if resolver_line.is_output(record) else {}
    line = evaluation or resolver
    if not prompts and isinstance(line.get("instruction"), str) and line["instruction"].strip():
        prompts.append(line["instruction"].strip())
    if not prompts:
        raise RecordError("no user message in this OpenHands trajectory (no 'message' action from source 'user')")
    task = (resolver and resolver_line.task(resolver)) or _prompts.from_markers(prompts[0]) or prompts[0]
    final_state, reason = states[-1] if states else (None, "")
    outcome, failure = Outcome.unknown, None
    if final_state in ("error", "rate_limited"):
        detail = reason or (loose_errors[-1] if loose_errors else None)
        if detail is None:
            outcome, failure = Outcome.infra_error, _unexplained_stop(final_state, steps)
        else:  # its iteration or budget limit is the agent's failure, not the harness's
            limit = _AGENT_LIMIT.search(detail)
            outcome = Outcome.failure if limit else Outcome.infra_error
            failure = Failure(error=short(detail, 500, keep="head"), cause=_limit_cause(detail) if limit
                              else "infrastructure: the agent stopped in state " + final_state)
    elif rejected is not None or final_state == "rejected":
        outcome = Outcome.failure
        failure = Failure(error=short(rejected or reason or "the agent rejected the task", 500, keep="head"))
    settings = as_dict(evaluation.get("metadata"))
    outcome, failure = _evaluation_verdict(evaluation, outcome, failure, acted=_acted(steps), ctx=ctx)
    outcome, failure = attempts.retried(attempt, outcome, failure)
    if resolver:
        outcome, failure = resolver_line.outcome(resolver)

    conversation = _conversation(record)
    if evaluation:
        model = as_dict(settings.get("llm_config")).get("model") or settings.get("model_name")
        if isinstance(model, str) and model and not models:
            models.append(model)
        run_id = attempts.run_id(_evaluation_id(evaluation, model), attempt)
    elif resolver:
        run_id = resolver_line.run_id(resolver)
        if (model := resolver_line.metrics_model(resolver.get("metrics"))) and not models:
            models.append(model)
    elif isinstance(conversation.get("conversation_id"), str) and conversation["conversation_id"].strip():
        run_id = f"openhands.{conversation['conversation_id'].strip()}"
        if isinstance(conversation.get("llm_model"), str) and conversation["llm_model"] and not models:
            models.append(conversation["llm_model"])  # the model the conversation was set up with
    else:
        run_id = _file_run_id(ctx, events[0].get("timestamp"), task)
    last_metrics = next((e["llm_metrics"] for e in reversed(events) if isinstance(e.get("llm_metrics"), dict)), {})
    cwd = next((wd for e in events if isinstance(
        wd := as_dict(_extras(e).get("metadata")).get("working_dir"), str) and wd), None)
    metadata: dict[str, Any] = {
        "source_format": NAME,
        "cwd": cwd,
        "final_agent_state": final_state,
        "openhands_version": system_args.get("openhands_version"),
        "accumulated_cost": last_metrics.get("accumulated_cost", conversation.get("accumulated_cost")),
        "task_completed": task_completed,
        "user_prompts": prompt_list(prompts[1:]) or None,
        "unmatched_errors": loose_errors or None,
        "setup_errors": setup_errors or None,
        "models": models if len(models) > 1 else None,
        "instance_id": evaluation.get("instance_id"),
        "agent_class": system_args.get("agent_class") or settings.get("agent_class"),
        "conversation_title": conversation.get("title") or None,
        "repository": conversation.get("selected_repository") or None,
        "branch": conversation.get("selected_branch") or None,
        **_conversation_link(conversation),
        "patch_chars": len(patch) if isinstance(patch := as_dict(evaluation.get("test_result")).get("git_patch"), str)
        else None,
    }
    if resolver:
        metadata.update(resolver_line.metadata(resolver, outcome))
    metadata = {k: v for k, v in metadata.items() if v is not None} | attempts.metadata(attempt)
    version = system_args.get("openhands_version")
    fields = _run_fields(run_id, task, models[0] if models else None, tools, outcome, failure, steps, events,
                         metadata, {"openhands": str(version)} if version else {})
    return build(fields | _instance_task(evaluation) | _graded(evaluation), ctx)


def _event_page(events: list[dict[str, Any]], next_page: Any, ctx: Context) -> Trajectory:
    """An API page of SDK events (the agent server's ``EventPage``, at most 100 events), put in append order
    (``sdk.page_order``): the run, if the page starts the conversation. A page with a ``next_page_id`` holds only
    its start (``metadata.next_page_id`` says so, where the rest begins); a later page (its first event's parent
    elsewhere: its follow-up message would read as the task), the newest events of a descending search, or a search
    filtered by kind or source is refused saying what it is (``sdk.page_not_first``)."""
    events, backwards = sdk.page_order(events)
    if reason := sdk.page_not_first(events, backwards):
        raise RecordError(f"not a run: {reason}")
    run = _sdk_trajectory(events, {}, {}, ctx)
    if isinstance(next_page, str) and next_page:
        run.metadata["next_page_id"] = next_page  # more events follow on pages this file does not hold
    return run


def _sdk_step(event: dict[str, Any], seen_responses: set[Any]) -> dict[str, Any]:
    """An ``ActionEvent`` as a step: the tool's name and the LLM's arguments, its thought (the response's
    reasoning once per response, then the text written with the call)."""
    reasoning = sdk.reasoning(event)
    response = as_key(event.get("llm_response_id"))
    if response in seen_responses:
        reasoning = None
    seen_responses.add(response)
    thought = "\n\n".join(t for t in (reasoning, sdk.thought(event)) if t) or None
    name = event.get("tool_name") or as_dict(event.get("tool_call")).get("name") or \
        as_dict(event.get("action")).get("kind") or "action"
    return {"action": str(name), "arguments": sdk.tool_arguments(event), "thought": thought,
            "started_at": iso_time(event.get("timestamp"))}


def _sdk_answer(step: dict[str, Any] | None, event: dict[str, Any], loose_errors: list[str]) -> None:
    """Put what answered a tool call on its step: an observation, a scaffold error, a rejection."""
    kind = event.get("kind")
    if kind == "ObservationEvent":
        observation = as_dict(event.get("observation"))
        text = sdk.observation_text(observation)
        error = sdk.observation_error(observation, text)
    elif kind == "AgentErrorEvent":
        text = str(event.get("error") or "")
        error = short(text, 300, keep="head") if text else "agent error"
    else:  # UserRejectObservation
        text = str(event.get("rejection_reason") or "")
        error = sdk.rejection(event)
    if step is None or step.get("_done"):
        if error and step is None:
            loose_errors.append(error)
        return
    step.update(observation=text or None, error=error, ended_at=iso_time(event.get("timestamp")), _done=True)


def _sdk_trajectory(events: list[dict[str, Any]], state: dict[str, Any], evaluation: dict[str, Any],
                    ctx: Context, folder: Path | None = None, attempt: attempts.Attempt | None = None,
                    archive: Path | None = None, link: dict[str, Any] | None = None,
                    exported: bool = False) -> Trajectory:
    """A software-agent-sdk conversation (see ``_openhands_sdk``) mapped as the event trajectories are; ``attempt``:
    where an evaluation line of an iterative run's attempt file stands (``_openhands_attempts``); ``archive``: the
    conversation archive an evaluation line's events were read from (``_archived_run``); ``link``: how the details
    an export or the agent server's ``meta.json`` kept link the conversation to others (:func:`_conversation_link`),
    where its place (a ``subagents/`` folder) does not; ``exported``: an export (``{conversation, events}``), whose
    run was named by its file (:func:`_file_run_id`) until round 32 named it by its conversation: that id is kept as
    its former one, so a re-ingest replaces the copy stored under it rather than keeping the run twice."""
    steps: list[dict[str, Any]] = []
    by_action: dict[Any, dict[str, Any]] = {}
    by_call: dict[str, dict[str, Any]] = {}
    prompts: list[str] = []
    blocked: list[dict[str, str]] = []  # the user's prompts a UserPromptSubmit hook blocked, with its reasons
    contexts: list[dict[str, str]] = []  # the user's prompts a UserPromptSubmit hook added context to, with it
    hooked = False  # whether such a hook added context since the last user message (sdk.adds_prompt_context)
    # the user's messages a hook blocked, by id: its reason (sdk.prompt_block); gathered first, as the app server's
    # store orders by time and the SDK stamps the message before its hook runs, so the message comes first there
    blocks: dict[str, str] = dict(filter(None, map(sdk.prompt_block, events)))
    filtered = critiqued = goaled = 0  # replies the content filter blocked; the critic's, the /goal loop's follow-ups
    goal: dict[str, Any] | None = None  # the /goal loop's last status, if one ran (sdk.goal_status)
    prompted = False  # whether the user prompted since that status (then it judged no longer the run's end)
    last_end: dict[str, Any] | None = None  # the last event that ended a turn (its critic_result: the critic's)
    users = 0  # source-user messages so far
    turn_end: dict[str, Any] | None = None  # the agent's reply or finish call that ended its turn, if nothing since
    tools: list[str] = []
    statuses: list[str] = []
    loose_errors: list[str] = []
    broke: dict[str, Any] | None = None  # the ConversationErrorEvent the run loop stopped on, if nothing came after
    seen_responses: set[Any] = set()
    acp_calls: dict[str, dict[str, Any]] = {}  # an ACP agent's tool calls of this turn, by tool_call_id
    subagents: dict[str, set[str]] = {}  # an ACP server's sub-agent sessions -> their calls' ids (not the run's steps)
    # (step, event, whether a copy of what the call had shown: sdk.acp_copy): calls just closed failed, no output
    closed: list[tuple[dict[str, Any], dict[str, Any], bool]] = []
    stats: Any = state.get("stats")
    ends_own = sdk.ends_own_calls(as_dict(state.get("agent")))  # whether a late interrupt cancels a closed call
    for event in events:
        kind = event.get("kind")
        just_closed, closed = closed, []
        if (child := sdk.subagent_session(event)) or kind in sdk.ACP_SUBAGENT_KINDS:  # a sub-agent session's
            closed = just_closed  # written between the root's events: no gap between the SDK's closes and its notice
            if kind == "ACPSubagentEvent" and as_str(event.get("acp_session_id")):
                subagents.setdefault(event["acp_session_id"], set())
            elif child:
                subagents.setdefault(child, set()).add(str(event.get("tool_call_id")))
        elif kind in ("SystemPromptEvent", "SystemPromptUpdateEvent"):  # the update: tools added mid-conversation
            tools.extend(sdk.tool_names(event))
        elif kind == "InterruptEvent":  # the run was cancelled: the calls the SDK closed just before it
            for step, closing, copied in just_closed:
                if sdk.closed_with(closing, event, copied, ends_own):
                    sdk.acp_cancelled(step, closing, sdk.interrupted(event))
        elif sdk.adds_prompt_context(event):
            hooked = True
        elif kind == "MessageEvent" and event.get("source") == "user" and event.get("id") in blocks:
            # no turn ran for it: no prompt of the run's, the turn as it stood (a hook that added context made the
            # SDK rewrite the message under a new id, which the block misses: that one ran, and is read as a prompt)
            blocked.append(hook_blocked_prompt(sdk.message_text(event), blocks[event["id"]], sdk.HOOK_BLOCKED))
            hooked = False
        elif kind == "MessageEvent":
            # ids are the server's, counted afresh per session: a message ends the scope of the calls that ended
            # (one still running goes on: the agent server takes a user's message in the middle of a turn)
            acp_calls = {call: step for call, step in acp_calls.items() if not step.get("_ended")}
            text = sdk.message_text(event)
            own = sdk.own_message(text, not users, turn_end, bool(goal and goal.get("active"))) \
                if event.get("source") == "user" else None
            users += event.get("source") == "user"
            hook_added, hooked = hooked and event.get("source") == "user", hooked and event.get("source") != "user"
            if hook_added and (added := sdk.prompt_context(event)):  # the SDK's own follow-ups are hooked too
                contexts.append(hook_prompt_context(text, added))
            turn_end = event if sdk.ends_turn(event) else None
            last_end = turn_end or last_end
            if own == "refused":  # the model's call, refused
                steps.append({"observation": text, "error": short(text, 300), "started_at": iso_time(event.get(
                    "timestamp"))})
            elif own:  # the SDK's nudge after a blocked reply, its critic's or its /goal loop's follow-up
                filtered += own == "filtered"
                critiqued += own == "critic"
                goaled += own == "goal"
            elif event.get("source") == "user":
                prompts.extend([text] if text else [])
                prompted = True
            elif text and sdk.ACP_FAILED.match(text):  # an ACP agent's turn broke: the SDK's notice, no reply
                broke = {"detail": text}
                for step, closing, copied in just_closed:  # the calls the SDK closed as it gave up the turn
                    if sdk.closed_with(closing, event, copied):
                        sdk.acp_cancelled(step, closing, sdk.turn_broke(text))
            elif text and event.get("source") in ("agent", None):  # not the SDK's own nudges (source environment)
                broke = None
                steps.append({"action": "respond", "arguments": {"content": text}, "thought": sdk.reasoning(
                    as_dict(event.get("llm_message"))),
                    "started_at": iso_time(event.get("timestamp"))})
        elif kind == "ActionEvent":
            broke = None  # the run went on after an error (resumed): that error did not end it
            turn_end = event if sdk.ends_turn(event) else None
            last_end = turn_end or last_end
            step = _sdk_step(event, seen_responses)
            steps.append(step)
            by_action[event.get("id")] = step
            if as_str(event.get("tool_call_id")):
                by_call[event["tool_call_id"]] = step
        elif kind in ("ObservationEvent", "AgentErrorEvent", "UserRejectObservation"):
            step = by_action.get(event.get("action_id")) or by_call.get(str(event.get("tool_call_id")))
            _sdk_answer(step, event, loose_errors)
        elif kind == "ACPToolCallEvent":  # its start, then its end, on one step
            broke = None
            call = as_str(event.get("tool_call_id"))
            before = acp_calls.get(call) if call else None
            running = before.get("_event") if before and not before.get("_ended") else None
            step = sdk.acp_call(before, event)
            if not (call and call in acp_calls):
                steps.append(step)
            if call:
                acp_calls[call] = step
            step["_event"] = event
            if event.get("status") == "failed" and event.get("raw_output") is None:
                copied = sdk.acp_copy(event, running, step["arguments"])
                if copied:  # the SDK's close whatever follows: before a retry, the next attempt's events
                    sdk.acp_cancelled(step, event, sdk.ABANDONED)
                closed = just_closed + [(step, event, copied)]
        elif kind == "ConversationErrorEvent":
            broke = event
        elif kind == "ConversationStateUpdateEvent":
            if status := sdk.status_of(event):
                statuses.append(status)
            if event.get("key") == "stats":
                stats = stats or event.get("value")
            if new_goal := sdk.goal_status(event):
                goal, prompted = new_goal, False
    critic = finite(as_dict(last_end.get("critic_result")).get("score")) if last_end else None
    if not prompts and isinstance(evaluation.get("instruction"), str) and evaluation["instruction"].strip():
        prompts.append(evaluation["instruction"].strip())
    if not prompts and blocked:  # nothing wrong in it: the user's own hook stopped the run before it began
        raise PassedOver("an OpenHands SDK conversation whose only prompt a hook blocked",
                         "the only user message of this OpenHands SDK conversation was blocked by a UserPromptSubmit "
                         f"hook{f' ({why})' if (why := blocked[0].get('reason')) else ''}: the agent never ran",
                         unit="conversation")
    if not prompts:
        raise RecordError("no user message in this OpenHands SDK conversation (no MessageEvent from source 'user')")
    task = _prompts.from_markers(prompts[0]) or prompts[0]
    status = state.get("execution_status") if isinstance(state.get("execution_status"), str) else (
        statuses[-1] if statuses else None)
    outcome, failure = (_goal_verdict(None if prompted else goal, status)
                        or _sdk_outcome(status, broke, loose_errors, steps))
    # a run left waiting for the user to confirm its calls (confirmation mode, a risky call under ConfirmRisky):
    # those calls, written but not yet run nor rejected, await approval (no result yet, no error), as openai-agents'
    pending = {id(step) for step in by_action.values() if not step.get("_done")} \
        if status == sdk.AWAITING_CONFIRMATION else set()
    outcome, failure = _evaluation_verdict(evaluation, outcome, failure, acted=_acted(steps), ctx=ctx)
    outcome, failure = attempts.retried(attempt, outcome, failure)
    model, cost = sdk.stats_model(stats)
    agent = as_dict(state.get("agent"))
    llm_model = as_dict(agent.get("llm")).get("model")
    llm_model = (sdk.acp_model(agent, as_dict(state.get("agent_state"))) if llm_model == sdk.ACP_NO_MODEL
                 else llm_model) or \
        as_dict(as_dict(evaluation.get("metadata")).get("llm")).get("model") or \
        as_dict(as_dict(evaluation.get("metadata")).get("llm_config")).get("model")
    model = llm_model if isinstance(llm_model, str) and llm_model else model
    file_id = _file_run_id(ctx, events[0].get("timestamp") if events else None, task)
    if evaluation:
        run_id = attempts.run_id(_evaluation_id(evaluation, model), attempt)
    elif isinstance(state.get("id"), str) and state["id"].strip():
        run_id = "openhands." + _uuid_hex(state["id"])  # the folder's name, uuid.hex
    elif folder is not None and (named := _conversation_id(folder.name)):  # no state: the app server's older store,
        run_id = f"openhands.{named}"  # its folder named by the uuid with dashes; the id its SDK folder's run has
    else:
        run_id = file_id
    cwd = as_dict(state.get("workspace")).get("working_dir") or next((wd for e in events if isinstance(
        wd := as_dict(as_dict(e.get("observation")).get("metadata")).get("working_dir"), str) and wd), None)
    metadata = {k: v for k, v in {
        "source_format": NAME,
        "openhands_sdk": True,
        "cwd": cwd,
        "execution_status": status,
        "accumulated_cost": cost,
        "user_prompts": prompt_list(prompts[1:]) or None,
        "hook_blocked_prompts": blocked[:20] or None,
        "hook_prompt_contexts": contexts[:20] or None,
        "unmatched_errors": loose_errors or None,
        "content_filtered_replies": filtered or None,
        "critic_followups": critiqued or None,
        "critic_score": critic,
        "goal_followups": goaled or None,
        "awaiting_approval_steps": [n for n, step in enumerate(steps) if id(step) in pending] or None,
        "goal": sdk.goal_summary(goal) if goal else None,
        "instance_id": evaluation.get("instance_id"),
        "events_from": f"{sdk.ARCHIVES_DIR}/{archive.name}" if archive is not None else None,
        "agent_class": agent.get("kind"),
        "acp_server": agent.get("acp_server"),
        "acp_subagent_sessions": len(subagents) or None,
        "acp_subagent_calls": sum(len(calls) for calls in subagents.values()) or None,
        **((sdk.subagent_link(folder, state, prompts[0]) if folder is not None else None) or link or {}),
    }.items() if v is not None} | attempts.metadata(attempt)
    run = build(_run_fields(run_id, task, model, tools, outcome, failure, steps, events, metadata)
                | _instance_task(evaluation) | _graded(evaluation), ctx)
    return with_former_id(run, file_id) if exported else run


def _run_fields(run_id: str, task: str, model: Any, tools: list[str], outcome: Outcome, failure: Failure | None,
                steps: list[dict[str, Any]], events: list[dict[str, Any]], metadata: dict[str, Any],
                versions: dict[str, str] | None = None) -> dict[str, Any]:
    """A run's fields, as both event formats (V0 trajectories, SDK conversations) give them."""
    return {
        "trajectory_id": safe_id(run_id),
        "task": clip_task(task),
        "model_id": model,
        "tools_available": list(dict.fromkeys(tools)),
        **({"tool_versions": versions} if versions is not None else {}),
        "outcome": outcome,
        "failure": failure,
        "steps": finish_steps(steps, metadata),
        "created_at": first_time(*(e.get("timestamp") for e in events)),
        "metadata": metadata,
    }


#: The agent's own limits in an event trajectory's error state ("Agent reached maximum iteration ..."), among them
#: its context window: a conversation grown past the model's window with no condenser to shrink it stops in error
#: (V0: "LLMContextWindowExceedError: Conversation history longer than LLM context window limit ..."), the agent's
#: failure as mini-swe-agent's ``ContextWindowExceededError`` and Harbor's are, not the provider's.
_AGENT_LIMIT = re.compile(r"reached maximum iteration|maximum budget|budget (?:exceeded|limit)|"
                          r"LLMContextWindowExceedError", re.I)
#: The run loop's own limits (``ConversationErrorEvent.code``): the agent ran out of its budget or its context window
#: (the SDK's own ``classify_error`` calls ``LLMContextWindowExceedError`` the agent's outcome, ``agent_action``), a
#: failure.
_AGENT_LIMITS = frozenset({"MaxIterationsReached", "MaxBudgetReached", "MaxBudgetPerTaskReached",
                           "LLMContextWindowExceedError"})


def _unexplained_stop(state: str, steps: list[dict[str, Any]]) -> Failure:
    """The failure of a run whose controller stopped it in ``state`` with no reason recorded. ``rate_limited`` is its
    own reason: OpenHands 0.29's ``_react_to_exception`` sets it only for the provider's ``RateLimitError``. For
    ``error``, OpenHands 0.13-0.30 wrote none for any exception that stopped the run (``_react_to_exception``: an LLM
    error, the iteration limit in headless mode, a stuck loop; the text went to the UI's status and the log only, the
    ``reason`` field came in 0.31), and a later server a runtime error its session reports: the harness's failures
    and the agent's alike, so the cause says it is unknown which. A tool call that failed before is no such
    exception: the agent saw its result and went on. So the error says no reason was recorded and names the last
    failing step the run did not get past (``last_tool_error``), as the other readers name it; not that step's error
    as the reason (a ``view_range`` the editor refused read as why the run stopped)."""
    if state == "rate_limited":
        return Failure(error="the agent stopped in state rate_limited: the model provider rate-limited the run",
                       cause="infrastructure: the model provider rate-limited the run")
    said = f"the agent stopped in state {state}; OpenHands recorded no reason"
    last = last_tool_error(steps)
    if last is not None:
        position = next(i for i, step in enumerate(steps) if step is last)
        said += f"; last failing step {position}: {last['error']}"
    return Failure(error=short(said, 500, keep="head"),
                   cause=f"unknown: the agent stopped in state {state} with no reason recorded (an LLM or runtime "
                         "error, the iteration limit or a stuck loop)")


def _limit_cause(detail: str) -> str:
    """Why a run that hit one of the agent's limits failed: its context window in every reader's words
    (``_agent_cli.CONTEXT_CAUSE``), else its iteration or budget limit."""
    return CONTEXT_CAUSE if CONTEXT_OVERFLOW.search(detail) else "the agent ran out of its limit"


def _goal_verdict(goal: dict[str, Any] | None, status: str | None) -> tuple[Outcome, Failure | None] | None:
    """The verdict of a ``/goal`` loop that ended (``sdk.goal_status``), else None: its judge, a second LLM auditing
    the objective against the run's evidence each round, found it ``complete`` (a success), or still not done when
    the loop reached its ``max_iterations`` (``capped``: a failure, naming what its judge found missing). A loop that
    stopped otherwise (``interrupted``: paused, the run's error, a stop) leaves the run's own status to say; an error
    status always does (the loop never judges a run that broke). The caller passes None where the user prompted
    after the loop's last status: the run went on past what the judge audited. A loop's verdict is the run's whatever
    came before it: a ``/goal`` started in the middle of a conversation keeps its first prompt as the task. Only the
    agent server's loop is read: the SDK's standalone ``run_goal`` (``conversation/goal/runner.py``, its example 54)
    records no status, so its follow-ups read as the user's prompts and its verdict is not seen."""
    if not goal or goal.get("active") or status == "error":
        return None
    if goal.get("status") == "complete":
        return Outcome.success, None
    if goal.get("status") != "capped":
        return None
    summary = sdk.goal_summary(goal)
    rounds = f"after {summary['rounds']} audit rounds" if "rounds" in summary else "at its last audit round"
    said = f"goal not complete {rounds} (its judge's cap)" + (
        f": missing {summary['missing']}" if "missing" in summary else "")
    return Outcome.failure, Failure(error=short(said, 500, keep="head"),
                                    cause="the agent did not complete the objective its /goal loop's judge audited")


def _sdk_outcome(status: str | None, broke: dict[str, Any] | None, loose_errors: list[str],
                 steps: list[dict[str, Any]]) -> tuple[Outcome, Failure | None]:
    """The SDK records no verdict: ``finished`` is the agent's own stop (unknown), even after an error it was
    resumed from. ``error`` is the run loop stopping on an exception (``ConversationErrorEvent``): a limit of
    the agent's (:data:`_AGENT_LIMITS`: iterations, budget, context window) is a ``failure``, anything else
    ``infra_error``, as the event trajectories' final ``error`` state; ``stuck`` is the stuck detector ending a run
    that repeated itself: a ``failure``."""
    if status == "stuck":
        return Outcome.failure, Failure(error="stuck: the SDK's stuck detector stopped the agent",
                                        cause="the agent repeated itself without progress")
    if status == "error" or (broke and status is None):
        said = (": ".join(str(broke[k]) for k in ("code", "detail") if broke.get(k)) or "error") if broke else None
        detail = said or (loose_errors[-1] if loose_errors else None) or next(
            (s["error"] for s in reversed(steps) if s.get("error")), None) or "execution status error"
        if broke and broke.get("code") in _AGENT_LIMITS:
            return Outcome.failure, Failure(error=short(detail, 500, keep="head"), cause=_limit_cause(detail))
        return Outcome.infra_error, Failure(error=short(detail, 500, keep="head"),
                                            cause="infrastructure: the conversation stopped in status error")
    return Outcome.unknown, None

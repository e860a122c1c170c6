"""``langsmith``: LangSmith run exports (``client.list_runs`` / the export API), flat runs or run trees.

Records: one run per line (or a JSON array of runs), each with ``id``,
``trace_id``, ``parent_run_id``, ``run_type``, ``name``, ``inputs``,
``outputs``, ``error``, ``start_time``, ``end_time``; a run tree nests its
children in ``child_runs``. Runs are grouped into one trajectory per trace
(``trace_id``; else the root id at the head of ``dotted_order``; else the run's
own id), across every file of the input; ``group_by="conversation"`` merges
the traces of one thread (``extra.metadata.thread_id`` / ``session_id`` /
``conversation_id``).

Mapping
- run role by ``run_type``: ``tool`` = step, ``llm`` = model call,
  ``retriever`` = step, ``chain`` = container (``prompt`` / ``parser`` /
  ``embedding`` are ignored).
- steps: one per ``tool`` run: action = ``name``, arguments = ``inputs``
  (``inputs.input`` JSON-decoded when that is all there is), observation =
  ``outputs.output`` (else all outputs as JSON), error = the last exception
  line of ``error`` (a traceback). The thought is the text of the ``llm`` run
  whose output message requested the call (``tool_calls`` in the
  LangChain/OpenAI message of ``outputs.generations`` or ``outputs.choices``);
  model text requesting no tool is a ``respond`` step.
- task: the root run's ``inputs`` (``input`` / ``question`` / ``query`` /
  ``task`` / the first human message of ``messages``), else the first user
  message of the first ``llm`` run.
- trajectory_id = ``ls:<trace_id>``; task_id = the root's
  ``reference_example_id`` (the dataset example it ran on); tags and
  ``extra.metadata`` of the root are kept in metadata.
- outcome: feedback on the root (``feedback_stats`` ``{key: {"avg": ..}}`` or a
  ``feedback`` list ``[{key, score, value, comment}]``): a pass/fail value, or an
  average of exactly 1/0 on a success/correctness key, decides; else an
  ``error`` on the root run -> failure (infra_error for timeouts, rate limits,
  5xx, connection errors); else ``unknown``.
"""

from __future__ import annotations

import re
from typing import Any, Iterator

from ._common import Context, RecordError, decisive_line
from ._spans import (
    Evaluation,
    Node,
    SpanFormat,
    iso_seconds,
    maybe_json,
    normalise_messages,
    text_of,
)

NAME = "langsmith"
#: Searched in a file's first 64 KiB when no record can be parsed from them (see ``detect``).
SIGNATURE = re.compile(r'"run_type"\s*:\s*"(?:chain|llm|tool|retriever|prompt|parser|embedding)"')
GROUPED = True
ID_PREFIX = "ls"
_FORMAT = SpanFormat(NAME, ID_PREFIX)
_ROLES = {"tool": "tool", "llm": "llm", "chat_model": "llm", "retriever": "retriever", "chain": "chain"}
_DOTTED_ROOT = re.compile(r"^\d{8}T\d{6,}Z([0-9a-fA-F-]{36})")
_THREAD_KEYS = ("thread_id", "session_id", "conversation_id")


def matches(record: Any) -> bool:
    return isinstance(record, dict) and "run_type" in record and "id" in record and (
        "inputs" in record or "outputs" in record
    )


def _trace_id(run: dict[str, Any], inherited: str | None) -> str:
    if run.get("trace_id"):
        return str(run["trace_id"])
    if inherited:
        return inherited
    if isinstance(run.get("dotted_order"), str) and (m := _DOTTED_ROOT.match(run["dotted_order"])):
        return m.group(1)
    return str(run.get("parent_run_id") or run["id"])


def _llm_messages(value: Any) -> list[dict[str, Any]]:
    value = maybe_json(value)
    if isinstance(value, dict):
        if "generations" in value:
            gens = value["generations"]
            gens = gens[0] if gens and isinstance(gens[0], list) else gens
            return [m for g in gens or [] if isinstance(g, dict)
                    for m in normalise_messages([g.get("message") or {"role": "assistant", "content": g.get("text", "")}])]
        if "choices" in value:
            return [m for c in value["choices"] or [] if isinstance(c, dict) for m in normalise_messages([c.get("message") or {}])]
        for key in ("messages", "prompts", "output", "input"):
            if key in value:
                msgs = normalise_messages(value[key] if key != "prompts" else [{"role": "user", "content": p} for p in value[key]])
                if key == "output":
                    msgs = [dict(m, role="assistant") if m["role"] == "user" else m for m in msgs]
                return msgs
    return normalise_messages(value) if isinstance(value, list) else []


def _evaluations(run: dict[str, Any]) -> list[dict[str, Any]]:
    out = []
    for key, stats in (run.get("feedback_stats") or {}).items():
        if isinstance(stats, dict):
            avg = stats.get("avg")
            label = None
            values = stats.get("values") or {}
            if isinstance(values, dict) and len(values) == 1:
                label = next(iter(values))
            out.append(vars(Evaluation(str(key), label, float(avg) if isinstance(avg, (int, float)) else None)))
    for fb in run.get("feedback") or []:
        if isinstance(fb, dict) and fb.get("key"):
            score = fb.get("score")
            value = fb.get("value")
            out.append(vars(Evaluation(
                str(fb["key"]), str(value) if isinstance(value, str) else None,
                float(score) if isinstance(score, (int, float)) and not isinstance(score, bool) else
                (1.0 if score is True else 0.0 if score is False else None),
                fb.get("comment"),
            )))
    return out


def _node(run: dict[str, Any], seq: int) -> Node:
    if not run.get("id"):
        raise RecordError("run without 'id'")
    role = _ROLES.get(str(run.get("run_type") or "").lower(), "other")
    inputs, outputs = run.get("inputs"), run.get("outputs")
    error = run.get("error")
    node = Node(
        id=str(run["id"]), parent=str(run["parent_run_id"]) if run.get("parent_run_id") else None,
        role=role, name=str(run.get("name") or role), seq=seq,
        start=iso_seconds(run.get("start_time")), end=iso_seconds(run.get("end_time")),
        error=(decisive_line(error) or error.strip()[:600]) if isinstance(error, str) and error.strip() else None,
        evaluations=_evaluations(run),
    )
    if role in ("tool", "retriever"):
        node.tool = node.name
        args = inputs
        if isinstance(inputs, dict) and set(inputs) <= {"input", "tool_input", "query"} and len(inputs) == 1:
            args = maybe_json(next(iter(inputs.values())))
        node.arguments = args
        if isinstance(outputs, dict) and set(outputs) <= {"output", "documents"} and outputs:
            out = next(iter(outputs.values()))
            if isinstance(out, dict) and "content" in out:  # a serialised ToolMessage
                out = out["content"]
            node.result = text_of(out)
        elif outputs is not None:
            node.result = text_of(outputs)
        node.call_id = (run.get("extra") or {}).get("metadata", {}).get("tool_call_id") if isinstance(run.get("extra"), dict) else None
    elif role == "llm":
        node.input_messages = _llm_messages(inputs)
        node.output_messages = _llm_messages(outputs)
        invocation = ((run.get("extra") or {}).get("invocation_params") or {}) if isinstance(run.get("extra"), dict) else {}
        meta = ((run.get("extra") or {}).get("metadata") or {}) if isinstance(run.get("extra"), dict) else {}
        node.model = invocation.get("model") or invocation.get("model_name") or meta.get("ls_model_name")
    node.input_text = text_of(inputs) if inputs is not None else None
    node.output_text = text_of(outputs) if outputs is not None else None
    if not run.get("parent_run_id"):
        meta = ((run.get("extra") or {}).get("metadata") or {}) if isinstance(run.get("extra"), dict) else {}
        node.info = {k: v for k, v in {
            "task_id": str(run["reference_example_id"]) if run.get("reference_example_id") else None,
            "tags": run.get("tags") or None,
            "project": run.get("session_name") or run.get("session_id"),
            "conversation_id": next((str(meta[k]) for k in _THREAD_KEYS if meta.get(k)), None),
            "run_metadata": {k: v for k, v in meta.items() if isinstance(v, (str, int, float, bool))} or None,
        }.items() if v}
    return node


def nodes(record: Any, ctx: Context, seq: int = 0) -> Iterator[tuple[str, Node, str | None]]:
    if not isinstance(record, dict):
        raise RecordError(f"expected a run object, got {type(record).__name__}")
    stack: list[tuple[dict[str, Any], str | None]] = [(record, None)]
    n = seq
    while stack:
        run, inherited = stack.pop()
        trace = _trace_id(run, inherited)
        node = _node(run, n)
        n += 1
        yield trace, node, node.info.get("conversation_id")
        for child in reversed(run.get("child_runs") or []):
            if isinstance(child, dict):
                child.setdefault("parent_run_id", run["id"])
                stack.append((child, trace))


# Grouped runs become a trajectory like any span format's: see ``_spans.SpanFormat``.
trajectory_id = _FORMAT.trajectory_id
assemble_trajectory = _FORMAT.assemble_trajectory

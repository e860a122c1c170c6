"""``otel-genai``: OpenTelemetry spans following the GenAI semantic conventions, and their GenAI log events.

Records (see ``_otlp``): OTLP/JSON traces and logs requests (``resourceSpans``
/ ``resourceLogs``; one per line or one per file, both lists of one file
read), Grafana Tempo's trace JSON (``{"batches": [...]}``), the OpenTelemetry
Go SDK's ``stdouttrace`` output, the OpenTelemetry Python
SDK's ``to_json`` (``ConsoleSpanExporter`` / ``ConsoleLogExporter`` output:
concatenated pretty objects, spans and log records mixed), any-agent's
``AgentTrace`` dump ``{"spans": [...], "final_output"}``, JS ``ReadableSpan``
JSON, and flat span objects. Spans and log records are grouped into one
trajectory per trace (ids normalised to hex, so a trace exported twice is one
run), or with ``group_by="conversation"`` per ``gen_ai.conversation.id``
(traces without one stay alone), across every file of the input: log records
in a sibling file join their spans.

Mapping
- span role by ``gen_ai.operation.name``: ``invoke_agent`` / ``create_agent``
  / ``invoke_workflow`` = agent, ``agent_step`` = container, ``execute_tool`` =
  tool (not ADK's ``(merged tools)`` summary after parallel calls, whose calls have
  spans of their own), ``agent_handoff`` (opentelemetry-instrumentation-openai-agents) = a
  step named ``transfer_to_<gen_ai.handoff.to_agent>``, ``chat`` / ``text_completion`` / ``generate_content`` / ``call_llm``
  (any-agent) = model call, ``retrieval`` = a step (query ``gen_ai.retrieval.query.text``, result
  ``gen_ai.retrieval.documents``), ``embeddings`` / ``rerank`` = neither; without one,
  OpenLLMetry's ``traceloop.span.kind`` / ``llm.request.type`` or the span name
  (``call_llm``, ``execute_tool ...``, ``invoke_agent ...``); else a span with ``gen_ai.tool.call.*``
  is a tool, one recording a model's output and naming no agent a model call where it is a leaf
  (around typed spans, as Strands' ``execute_event_loop_cycle`` is, a container); a ``task`` span with
  ``tool.name`` and no ``tool.description`` is a tool (OpenLLMetry's LlamaIndex ``call_tool``
  step, not a legacy agent's step carrying an ``AgentToolCallEvent``: ``tool.arguments``,
  LlamaIndex's ``ToolCallResult``, ``is_error`` its failure). The Langfuse SDK
  (v3 and later: OpenTelemetry spans sent to Langfuse's ``/api/public/otel``)
  writes ``langfuse.observation.type`` (``agent``, ``generation``, ``tool``...)
  and ``langfuse.observation.input`` / ``output`` (a generation's request and
  reply, a tool's ``{"args", "kwargs"}`` and result), ``.model.name``, ``.level``.
- steps: one per ``execute_tool`` span, in parent/start-time order: action =
  ``gen_ai.tool.name``, arguments = ``gen_ai.tool.call.arguments`` (any-agent:
  ``gen_ai.tool.args``; Pydantic AI: ``tool_arguments``; Google ADK:
  ``gcp.vertex.agent.tool_call_args``; JSON-decoded), observation =
  ``gen_ai.tool.call.result`` (any-agent: ``gen_ai.output``; ``tool_response``;
  ``gcp.vertex.agent.tool_response``), error = ``error.type`` with the status
  message or description (the words alone for a type that names none: the
  conventions' ``_OTHER``, Mastra's ``unknown``), or the ``exception`` event (``exception.type:
  message``) when the span status is ERROR; a tool that returned its failure
  (Strands' ``gen_ai.tool.status: "error"``, status OK) failed with its result's words; a type alone (AG2's
  ``ExecutionError``, its result recorded for a success only) is followed by the words of the result the model was
  given (a group's ``_Group_Tool_Executor`` gives it id-less in its ``invoke_agent`` output). AG2's coding chat:
  the user proxy's ``invoke_agent`` reply that is its code executor's report (``exitcode: 1 (execution
  failed)...``) makes the answer before it an ``execute_code`` step. The thought of a tool
  step is the text of the model call whose output requested it (same
  ``gen_ai.tool.call.id``, else same name). Model text that asked for no tool
  is a ``respond`` step. Tool calls a model requested but no span executed are
  kept as steps, their results taken from later input messages (role ``tool``
  / ``tool_call_response`` parts with the same id). A pydantic-ai run resumed with
  ``deferred_tool_results`` (its ``pydantic_ai.all_messages`` from ``new_message_index`` open with
  the calls' results) has the calls its history's last response asked for as steps: one denied
  (``ToolDenied``'s default words) ``not run: denied``, one approved with its result.
- messages of a model call, the first found of: ``gen_ai.input.messages`` /
  ``gen_ai.output.messages`` (parts ``text``, ``tool_call``,
  ``tool_call_response``, ``reasoning``, ``server_tool_call`` /
  ``server_tool_call_response``; ``blob`` / ``uri`` / ``file`` noted as
  ``[image/png, 3 KB base64]`` or by modality, ``[image]``; any-agent: OpenAI-style messages, or
  plain strings; a tool the provider ran, a server tool or a
  ``tool_call_response`` in the model's own message, pydantic-ai's
  ``builtin: true``, is a step with that result, the words after it the
  answer); the older ``gen_ai.prompt`` / ``gen_ai.completion`` (JSON,
  flattened ``gen_ai.prompt.N.content``, where OpenLLMetry keeps a list of
  text and images as its JSON text, read as parts; ``gen_ai.content.*`` events);
  any-agent's ``gen_ai.output`` (``[{"tool.name", "tool.args"}]`` or the answer
  text); Google ADK's ``gcp.vertex.agent.llm_request`` / ``llm_response``
  (Gemini contents); GenAI events, as span events or as log records carrying
  the span's trace and span id (``opentelemetry-instrumentation-openai-v2``):
  ``gen_ai.system.message`` / ``gen_ai.user.message`` /
  ``gen_ai.assistant.message`` (``tool_calls``) / ``gen_ai.tool.message``
  (``id`` = the call answered) in emission order, ``gen_ai.choice``
  (``message``, ``finish_reason``) by ``index`` (ADK's ``"<elided>"`` content,
  written when content capture is off, is no words), and
  ``gen_ai.client.inference.operation.details`` (``gen_ai.input.messages`` /
  ``gen_ai.output.messages`` / ``gen_ai.system_instructions`` attributes);
  Pydantic AI's ``events`` attribute. Log records without ids are reported.
  The AWS Distro for OpenTelemetry (Bedrock AgentCore) moves a span's events and
  content attributes into one log record per span (body ``{"input": {"messages"},
  "output": {"messages"}}``, named after the instrumentation scope): read the same way;
  a tool span's own input and result events are its arguments and observation; ADOT's
  LangChain records hold LangChain's callback arguments (a tool's call and ``ToolMessage``,
  a chain's state or routing decision), which make a tool or chain node, never an answer,
  spans or not. A file of those records alone is known by them (each record's ``event.name`` is
  its scope's name, e.g. ``strands.telemetry.tracer``), so it joins its spans.
- task: the latest user message of the root span's input messages (an
  ``invoke_agent`` span may carry ``gen_ai.input.messages``), else of the first
  model call's: a call that carries a conversation's history answers its last
  turn (smolagents' "New task:" wrapper removed). A framework's own record
  of the request comes first where the root has one: CrewAI under OpenLLMetry
  gives the crew's task descriptions (``crewai.crew.tasks``, a task span's
  ``crewai.task.description``; not CrewAI's prompt template around them) and
  its answer (``crewai.crew.result``). When no span or event
  recorded any input (message content capture off: the instrumentation's
  default), the task is the root span's name with "(no input recorded)" and
  ``metadata.task_source = "span name"``; a trace whose only model work is
  embedding or rerank calls (a RAG app's query embedding) holds no agent run
  and is passed over (``_spans.no_agent_work``).
- trajectory_id = ``otel:<traceId>`` (``otel:conversation:<id>`` when grouped by
  conversation); model_id = ``gen_ai.response.model`` / ``gen_ai.request.model``
  of the first model call; created_at = the earliest span start; metadata keeps
  ``gen_ai.agent.name`` / ``.id``, ``gen_ai.conversation.id``, ``service.name``,
  the provider (when the root is no agent, an A2A server's HTTP span: the agent's
  name, id and provider of the outermost agent span naming one, and the spans of
  that agent; the conversation of the outermost agent span that has one) and, for a
  lone model call, its finish reasons.
- tools_available = the tool names of every ``gen_ai.tool.definitions`` (an agent's
  or a model call's span, the inference details event; the conventions' ``{"name"}``,
  Chat Completions' ``{"function": {"name"}}``, a built-in tool's ``type``, Mastra's
  bare names; Strands' and Splunk's ``gen_ai.agent.tools``; OpenInference's
  ``llm.tools``), first mention first, then every other tool the steps called (a
  built-in left out of the list); a name no filter could take is left out; a list the
  SDK or exporter cut, and none listed, give none: the index then files the run by the
  tools it called (``events.offered_tools``, ``assembly.tools_offered``).
- outcome: ``gen_ai.evaluation.result`` events, span events or log records of the judged
  span (``gen_ai.evaluation.name``,
  ``.score.label``, ``.score.value``, ``.explanation``): a pass/fail label (or a
  score of 1/0 on a success/correctness metric) decides, a failing one winning;
  else an ERROR status on the root span -> failure (infra_error for timeouts,
  rate limits, 5xx, connection errors); else ``unknown``. A root span that
  ended OK says the code did not raise, not that the task was done.
- Haystack's own tracer (haystack-ai, opentelemetry-haystack): an ``Agent``'s
  ``haystack.agent.run`` / ``.step`` / ``.step.llm`` / ``.step.tool`` spans are
  read as ``invoke_agent`` / ``agent_step`` / ``chat`` / ``execute_tool``
  (``haystack.agent.input`` / ``.output``, ``.step.llm.input`` / ``.output``
  with Haystack ``ChatMessage`` dicts, ``haystack.tool.name``,
  ``.step.tool.input`` / ``.output``), inside a pipeline too; a pipeline's
  spans without an agent are no agent run (``not_a_run`` says so).
- passed over (``side_file``): Gemini CLI's local telemetry file (``telemetry.outfile``), whose run is the
  session's chat recording (``gemini-cli``).
- MLflow's own convention (``mlflow.openai.autolog()``, ``@mlflow.trace``, DSPy's
  ``mlflow.dspy.autolog()``: ``mlflow.spanType``, ``mlflow.spanInputs`` / ``Outputs``,
  as MLflow's OTLP export writes them by default, a ``Trace.to_json()``
  ``{"info", "data": {"spans"}}``, a ``traces.json`` artifact ``{"spans"}``) is
  read as the GenAI keys MLflow's GenAI export (``MLFLOW_ENABLE_OTEL_GENAI_SEMCONV``)
  writes for it: a ``TOOL`` span is a tool call, ``AGENT`` an agent, a ``CHAT_MODEL``
  / ``LLM`` span holding a request a model call, its request and reply (Chat
  Completions, Responses, Anthropic Messages, Gemini, DSPy's LM completions) its
  messages; DSPy's ``Predict`` module (typed ``LLM``, no request) a step around it.
- not read: spans in Monocle's own convention (``span.type`` ``agentic.*`` /
  ``inference``, content in ``data.input`` / ``data.output`` events); detection
  says so (``not_a_run``, ``_otlp.MONOCLE``).
"""

from __future__ import annotations

import re
from typing import Any

from ._otlp import (
    MONOCLE,
    TRACER_KIND_KEYS,
    OtlpFormat,
    attributes,
    is_monocle,
    is_span_record,
    js_sdk_resource,
    otlp_nodes,
    raw_spans,
    sample_attribute_keys,
)

NAME = "otel-genai"
#: Searched in a file's first 64 KiB when no record can be parsed from them (see ``detect``).
SIGNATURE = re.compile(
    r'"resource(?:Spans|Logs)"[\s\S]*"gen_ai\.|"gen_ai\.operation\.name"'
    r'|"(?:event_name|eventName|event\.name)"[\s\S]{0,60}?"gen_ai\.'  # GenAI log records, content events
    r'|"langfuse\.observation\.type"'  # the Langfuse SDK's (v3 and later) spans
    r'|"traceloop\.span\.kind"'  # OpenLLMetry's framework spans, without a model call's (LlamaIndex's alone)
    r'|"haystack\.agent\.'  # Haystack's own tracer, an Agent's spans
    # MLflow's own convention, in a JSON file only (its Trace JSON's first span can run past the peek; a chat's
    # Markdown that quotes a span is no span file)
    r'|\A\ufeff?\s*[\[{][\s\S]*?"mlflow\.spanType"'
    # ADOT's content records, named after their instrumentation's scope (Strands'), not OpenInference's
    r'|"scope"\s*:\s*\{\s*"name"\s*:\s*"(?!openinference\.)([\w.-]+)"(?:(?!"scope")[\s\S])*?"event\.name"\s*:\s*"\1"'
)
GROUPED = True
ID_PREFIX = "otel"
_FORMAT = OtlpFormat(NAME, ID_PREFIX, name_when_no_input=True, latest_user_message=True)


#: Haystack's own tracer: the attributes of an ``Agent``'s spans (a run), and of a pipeline's and its components'.
_HAYSTACK_AGENT = "haystack.agent."
_HAYSTACK_PIPELINE = ("haystack.pipeline.", "haystack.component.")


def matches(record: Any) -> bool:
    if not is_span_record(record):
        return False
    keys = sample_attribute_keys(record)
    return (any(k.startswith(("gen_ai.", _HAYSTACK_AGENT)) for k in keys)
            or not keys.isdisjoint({*TRACER_KIND_KEYS, "mlflow.spanType"})) \
        and "openinference.span.kind" not in keys


#: The ``service.name`` of Gemini CLI's telemetry (``packages/core/src/telemetry/constants.ts``).
_GEMINI_CLI = "gemini-cli"


def side_file(record: Any) -> str | None:
    """The adapter hook (see ``adapters/__init__``): Gemini CLI's local telemetry file is no run to read here.

    ``telemetry.outfile`` / ``--telemetry-outfile`` is what the CLI's file exporters write
    (``telemetry/file-exporters.ts``: each span, log record and metrics export ``JSON.stringify``'d by the JS SDK,
    read by ``_otlp.shapes``). Its traces do not follow the session: each model call and each batch of tool calls
    starts a trace of its own, and the prompt, the calls' arguments and errors and the answers are in Gemini CLI's
    own log events, apart from them. Read as spans it gave a run per model call at best (and, before the JS log
    record was read, a "not a span" rejection per record). The chat recording the CLI writes for every session
    holds all of it, as one run (``gemini-cli``)."""
    resource = js_sdk_resource(record)
    if resource is None or resource.get("service.name") != _GEMINI_CLI:
        return None
    session = f" of session {resource['session.id']}" if resource.get("session.id") else ""
    return (f"Gemini CLI's telemetry file{session} (telemetry.outfile: OpenTelemetry spans, log records and "
            "metrics); the session's run is its chat recording, ~/.gemini/tmp/<project>/chats/session-*.json[l]: "
            "ingest that instead")


def not_a_run(record: Any) -> str | None:
    """Spans of Monocle's own convention (no GenAI attribute), or of a Haystack pipeline without an agent: said so,
    rather than "unrecognised"."""
    if is_span_record(record) and any(is_monocle(attributes(span.get("attributes"))) for _, span in raw_spans(record)):
        return f"it holds {MONOCLE}"
    keys = sample_attribute_keys(record) if is_span_record(record) else set()
    if any(k.startswith(_HAYSTACK_PIPELINE) for k in keys) and not any(k.startswith(_HAYSTACK_AGENT) for k in keys):
        return ("it holds Haystack pipeline spans (haystack.pipeline.run / haystack.component.run) and no Agent's: "
                "a pipeline run, not an agent run")
    return None


# The rest of the span-adapter protocol is shared: see ``_otlp.otlp_nodes`` and ``_spans.SpanFormat``.
nodes = otlp_nodes
trajectory_id = _FORMAT.trajectory_id
assemble_trajectory = _FORMAT.assemble_trajectory

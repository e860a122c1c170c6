"""Helpers shared by the coding-agent CLI adapters (Claude Code, Codex CLI, Gemini CLI, OpenHands).

These tools write one session per file, as JSONL lines (or one JSON
document), and each keeps its own step bookkeeping: a call is opened when the
model asks for a tool and closed when the result comes back by call id. What
they share lives here: reading a whole-file document as a list of records,
ISO timestamps, text of content parts, the "pending thought" rule, error
lines, the final numbering / clipping / step-limit of the step list,
(``SessionSteps``) the step list with its unanswered text, which becomes the
model's answer when no tool call follows, and (``session_trajectory``) the
read session -> a trajectory.
"""

from __future__ import annotations

import json
import re
from datetime import datetime, timezone
from typing import Any, Iterator

from trajsearch.model import MAX_STEPS, Failure, Outcome, Trajectory

from ._common import Context, RecordError, build, clip_step_text, clip_task, decisive_line, safe_id, short

_SYSTEM_REMINDER = re.compile(r"<system-reminder>.*?</system-reminder>", re.S)


def as_records(document: Any, what: str) -> list[dict[str, Any]]:
    """A whole-file value as a list of JSON objects.

    A JSONL file arrives as the list of its lines' values, a one-line file as
    that single value; anything that is not an object is skipped (the reader
    has already reported lines that were not JSON at all).
    """
    if isinstance(document, dict):
        return [document]
    if isinstance(document, list):
        found = [r for r in document if isinstance(r, dict)]
        if found:
            return found
        raise RecordError(f"no JSON object in this {what} file")
    raise RecordError(f"expected the lines of a {what} file (JSON objects), got {type(document).__name__}")


def whole_file(document: Any) -> Iterator[tuple[str, Any]]:
    """``split`` for a session-per-file format: the whole file is one run, never one run per line."""
    yield "file", document


def iso_time(value: Any) -> datetime | None:
    """An ISO-8601 string (``Z`` or offset; naive is read as UTC) or Unix seconds/millis -> aware datetime."""
    if isinstance(value, str) and value:
        try:
            when = datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
        except ValueError:
            return None
        return when if when.tzinfo else when.replace(tzinfo=timezone.utc)
    if isinstance(value, (int, float)) and not isinstance(value, bool) and value > 0:
        seconds = value / 1000 if value > 1e11 else value
        try:
            return datetime.fromtimestamp(seconds, tz=timezone.utc)
        except (OverflowError, OSError, ValueError):
            return None
    return None


def parts_text(content: Any, *, image: str = "[image]") -> str:
    """Text of a message ``content``: a string, or a list of parts (``text`` parts joined; images noted)."""
    if isinstance(content, str):
        return content
    if isinstance(content, dict):
        content = [content]
    if not isinstance(content, list):
        return ""
    out: list[str] = []
    for part in content:
        if isinstance(part, str):
            out.append(part)
        elif isinstance(part, dict):
            kind = part.get("type")
            if isinstance(part.get("text"), str) and kind in (None, "text", "input_text", "output_text"):
                out.append(part["text"])
            elif kind in ("image", "input_image", "image_url") or "inlineData" in part:
                out.append(image)
    return "\n".join(p for p in out if p)


def strip_reminders(text: str) -> str:
    """Text without the harness's ``<system-reminder>`` blocks."""
    return _SYSTEM_REMINDER.sub("", text).strip()


def json_arguments(raw: Any, *, key: str = "input") -> Any:
    """Tool arguments as JSON: a JSON string decoded; free text kept under ``{key: text}``."""
    if isinstance(raw, str):
        text = raw.strip()
        if text[:1] in ("{", "["):
            try:
                return json.loads(text)
            except json.JSONDecodeError:
                pass
        return {key: raw} if raw else {}
    return raw


def join_thought(parts: list[str]) -> str | None:
    text = "\n\n".join(p.strip() for p in parts if isinstance(p, str) and p.strip())
    return text or None


def error_line(text: str | None, fallback: str = "tool error") -> str:
    """The line of a failed tool's output that says what went wrong (see ``decisive_line``)."""
    return decisive_line(text or "") or fallback


def exit_code_error(text: str | None, code: int) -> str:
    """Error for a command that exited ``code``: its decisive output line plus the code."""
    line = decisive_line(text or "")
    return f"{line} (exit code {code})" if line else f"exit code {code}"


def as_int(value: Any) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, str) and re.fullmatch(r"-?\d+", value.strip()):
        return int(value.strip())
    return None


def finish_steps(steps: list[dict[str, Any]], metadata: dict[str, Any]) -> list[dict[str, Any]]:
    """Number the steps, clip their texts, and keep at most ``MAX_STEPS`` (noting how many there were)."""
    if len(steps) > MAX_STEPS:
        metadata["steps_truncated_from"] = len(steps)
        steps = steps[:MAX_STEPS]
    out = []
    for index, step in enumerate(steps):
        item = {k: v for k, v in step.items() if not k.startswith("_")}
        item["index"] = index
        for key in ("thought", "observation", "error"):
            if isinstance(item.get(key), str):
                item[key] = clip_step_text(item[key])
        if isinstance(item.get("action"), str):
            item["action"] = item["action"][:200]
        out.append(item)
    return out


def session_trajectory(
    ctx: Context,
    *,
    run_id: str,
    task: str,
    model_id: str | None,
    steps: list[dict[str, Any]],
    metadata: dict[str, Any],
    last_error: str | None,
    error_cause: str,
    created_at: datetime | None,
    tool_versions: dict[str, str] | None = None,
) -> Trajectory:
    """A session read by a CLI adapter (Claude Code, Codex CLI, Gemini CLI) -> its trajectory.

    Metadata without a value is left out and the steps are finished (:func:`finish_steps`). A
    session log holds no verdict on the task, so the outcome is unknown, unless the session
    ended on an error the agent did not make (``last_error``: an API or error record with no
    work after it), which is an infrastructure error caused as ``error_cause`` says.
    """
    metadata = {k: v for k, v in metadata.items() if v is not None}
    finished = finish_steps(steps, metadata)
    outcome, failure = Outcome.unknown, None
    if last_error:
        outcome, failure = Outcome.infra_error, Failure(error=last_error, cause=error_cause)
    return build({
        "trajectory_id": safe_id(run_id),
        "task": clip_task(task),
        "model_id": model_id,
        "tool_versions": tool_versions or {},
        "outcome": outcome,
        "failure": failure,
        "steps": finished,
        "created_at": created_at,
        "metadata": metadata,
    }, ctx)


def first_time(*candidates: Any) -> datetime | None:
    for value in candidates:
        when = value if isinstance(value, datetime) else iso_time(value)
        if when is not None:
            return when
    return None


def prompt_list(prompts: list[str], limit: int = 20) -> list[str]:
    """Later user prompts of a session, each shortened, for metadata."""
    return [short(p, 500, keep="head") for p in prompts[:limit]]


def as_str(value: Any) -> str | None:
    """``value`` if it is a string, else None (a field of the wrong type is treated as missing)."""
    return value if isinstance(value, str) else None


def as_key(value: Any) -> str | int | None:
    """An id usable as a dict key: a string or an integer, else None."""
    if isinstance(value, bool):
        return None
    return value if isinstance(value, (str, int)) else None


class SessionSteps:
    """A session's steps as its records are walked: steps by call id, and assistant text not yet tied to a step.

    ``thought`` (reasoning) and ``narration`` (visible text) collect until a
    tool call takes them as its thought, or :meth:`flush` makes them the
    model's answer. Codex CLI and Gemini CLI build on this; each adds its own
    handling of calls and results.
    """

    def __init__(self) -> None:
        self.steps: list[dict[str, Any]] = []
        self.by_call: dict[str, dict[str, Any]] = {}
        self.thought: list[str] = []
        self.narration: list[str] = []
        self.narration_at: Any = None
        self.last_error: str | None = None

    def flush(self) -> None:
        """Assistant text not followed by a tool call: the model's answer."""
        if self.narration:
            self.steps.append({"thought": join_thought(self.thought), "action": "respond",
                               "arguments": {"content": "\n\n".join(self.narration)},
                               "started_at": iso_time(self.narration_at)})
            self.thought, self.narration = [], []

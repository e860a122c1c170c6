"""``autocoderover``: AutoCodeRover's task output folders (nus-apr/auto-code-rover 2024-04, and 2.x), one run each.

Source read: nus-apr/auto-code-rover ``app/api/manage.py``, ``app/inference.py`` (the search loop, the patch agent),
``app/data_structures.py`` (``MessageThread.save_to_file``: a JSON array of ``{role, content}``); real folders: the
repository's own ``results/acr-run-{1,2,3}``, ``acr-val-only`` (its SWE-bench Lite runs of the version its
``autocoderover-v20240408`` leaderboard submission ran; see ``tests/fixtures/autocoderover/.sweexp30/README.md``).

A task's folder holds the conversation saved after every search round (``conversation_round_<n>.json``, each the
whole thread so far), the patch agent's thread (``debug_agent_write_patch_<n>.json``: the search thread, the request
for a patch, the patch and ACR's answer), the task (``meta.json``: ``task_id`` and the SWE-bench row as
``task_info``, absent in some folders), ``cost.json`` and ``extract_status.json``, and files no format reads
(``info.log``, ``agent_proxy_<n>.json`` (the proxy's extraction of the API calls), ``tool_call_*.json``,
``extracted_patch_<n>.diff``, ``agent_patch_raw_<n>``, ``problem_statement.txt``, SBFL's ``sbfl_result*.json``):
passed over (``side_path``), as is the run set's ``stats.json`` beside its ``predictions_for_swebench.json``. Its
messages hold no tool calls: the model names the search APIs in its text, ACR answers with ``Result of
search_x(...)`` messages.

Mapping
- the run: the longest thread of the folder (each later file extends the one before); task: the issue between
  ``<issue>`` tags of the first user message (else ``meta.json``'s ``problem_statement``); task_id and
  ``metadata.instance_id``: ``meta.json``'s ``task_id``, else the folder's name without its start time, so a
  SWE-bench report (``--outcomes``) judges the run.
- steps: each assistant message a step; the APIs ACR answered in the next user messages (``Result of
  search_class(...)``) its action (the first one; all in ``arguments.calls``), ``respond`` when none (an analysis,
  the patch); those user messages its observation.
- model_id: ``cost.json``'s ``model`` (its ``total_cost``, ``total_tokens`` in metadata); ``metadata.extract_status``:
  ``extract_status.json``'s last, how ACR read the patch (``APPLICABLE_PATCH``, ``RAW_PATCH_BUT_UNMATCHED``, ...).
- outcome: ACR does not test the patch it hands in (validation off, as in these runs): a run whose
  ``extract_status`` holds ``APPLICABLE_PATCH`` handed one in, a success "submitted, not evaluated" as SWE-agent's
  (``outcome_basis``) until an outcome file says (the run set's ``new_eval_results/report.json``, SWE-bench's
  leaderboard ``results.json``); one whose statuses hold none handed in nothing, a failure (in ACR's 1,200 runs
  these are exactly the ones its own report leaves out of ``generated``); no ``extract_status.json``: unknown.
  created_at: the folder name's start time.
- trajectory_id: ``autocoderover.<folder name>``: one folder per attempt at a task.

AutoCodeRover 2.x (AutoCodeRoverSG/auto-code-rover from v2.0.0, 2024-12; read @585d3e63: ``app/inference.py``,
``agents/``, ``api/review_manage.py``) keeps each of a task folder's overall retries in ``output_<n>/``: the
reproducer's ``conv_reproducible.json`` and ``conv_test_<n>.json``, the search rounds' ``search/search_round_<n>.json``,
the patch agent's ``conv_patch_<n>.json`` (each request its own thread), the reviewer's
``conv_review_<patch>_<test>.json``, ``extract_status.json``; ``selected_patch.json``, ``meta.json`` and ``cost.json``
at the top. The folder is one run read as above: each retry's threads in that order (the search's longest; patches and
reviews by number), their assistant messages the steps; its retries' ``extract_status.json`` its outcome (a folder
with none: unknown; ACR raised before any patch, which only its ``info.log`` says); every other file of it passed
over, and no run when named alone, as in 1.x. It is ACR's only when its ``output_0/`` holds such a thread: a
``meta.json`` beside an ``output_0/`` is common (seeds, samples). Real folders: stackcodegen/stackcodegen's (see
``tests/fixtures/autocoderover/.aud36/README.md``).
"""

from __future__ import annotations

import re
from datetime import datetime, timezone
from fnmatch import fnmatch
from functools import lru_cache
from pathlib import Path
from typing import Any, Iterable

from trajsearch.model import UNEVALUATED, Failure, Outcome, Trajectory

from ._agent_cli import finish_steps
from ._common import Context, RecordError, as_dict, as_list, build, clip_task, json_kind, safe_id, version

NAME = "autocoderover"
ID_PREFIX = "autocoderover"
META = "meta.json"
#: The run's model and its cost (``cost.json``: ``model``, ``total_cost``, ``total_tokens``, ...), and how ACR read the
#: patch it extracted (``extract_status.json``: ``APPLICABLE_PATCH``, ``RAW_PATCH_BUT_UNMATCHED``, ...).
COST, STATUS = "cost.json", "extract_status.json"
#: What ACR writes of a whole run set beside its category folders (``applicable_patch/``, ...), with its predictions.
_RUN_STATS, _PREDICTIONS = "stats.json", "predictions_for_swebench.json"
#: The threads a task folder saves, the search rounds' and the patch agent's (``<name>_<n>.json``).
_THREAD = re.compile(r"(?:conversation_round|debug_agent_write_patch)_(\d+)\.json")
#: A task folder's name: the instance and the second its run started.
_FOLDER = re.compile(r"(?P<task>.+)_(?P<at>\d{4}-\d{2}-\d{2}_\d{2}-\d{2}-\d{2})")
#: ``extract_status``'s word for a patch ACR could apply, the one it hands in (``predictions_for_swebench.json``).
_APPLICABLE = "APPLICABLE_PATCH"
_ISSUE = re.compile(r"<issue>(.*?)</issue>", re.S)
#: ACR's answer to one API the model named: ``Result of search_class("X"):``.
_RESULT = re.compile(r"^Result of (\w+)\((.*?)\):\s*$", re.M)


#: A 2.x retry's folder (``output_<n>``) and the threads it saves, in the order its agents run: the reproducer's, the
#: search's, then the patch agent's requests and the reviews of them (``conv_review_<patch>_<test>.json``), one group
#: read in number order, as ``write_patch_iterative_with_review`` interleaves them.
_RETRY = re.compile(r"output_(\d+)")
_RETRY_THREADS = (("conv_reproducible.json",), ("conv_test_*.json",), ("search/search_round_*.json",),
                  ("conv_patch_*.json", "conv_review_*.json"))
_NUMBER = re.compile(r"\d+")
#: The threads that tell a retry is ACR's (a name as common as ``output_<n>`` beside a ``meta.json`` does not): the
#: ones read, so that a folder told by a thread has one its run is read from.
_OWN_THREADS = tuple(pattern for group in _RETRY_THREADS for pattern in group)


def matches(record: Any) -> bool:
    """Never by content: a ``{role, content}`` message list is many tools' shape; a task folder is told by its
    files' names (``run_folder``)."""
    return False


def _threads(folder: Path) -> list[Path]:
    return [p for p in folder.iterdir() if _THREAD.fullmatch(p.name) and p.is_file()]


def _numbered(paths: Iterable[Path]) -> list[Path]:
    """``paths`` by the numbers in their names (``_2`` before ``_10``; ``conv_patch_1`` after ``conv_review_0_0``),
    the order ACR wrote them in."""
    return sorted(paths, key=lambda p: ([int(n) for n in _NUMBER.findall(p.name)], p.name))


def _is_retry(folder: Path) -> bool:
    """A 2.x retry's folder: ``output_<n>`` holding the ``meta.json`` ACR copies in, a thread, or its ``search/``."""
    return bool(_RETRY.fullmatch(folder.name)) and folder.is_dir() and (
        (folder / META).is_file() or (folder / "search").is_dir() or _holds_thread(folder))


def _holds_thread(retry: Path) -> bool:
    """Whether a retry's folder holds a thread its run is read from (:data:`_OWN_THREADS`)."""
    return any(p.is_file() for g in _OWN_THREADS for p in retry.glob(g))


def _retries(folder: Path) -> list[Path]:
    """A 2.x task folder's retry folders (``output_<n>``), in order; none in a 1.x one. Told by its first
    (``output_0``: ACR's retries count from 0) holding a thread ACR saves, before the folder is listed, as a walk
    asks this of every folder; a later retry may hold only its ``meta.json`` and status. A walk asks it for each
    file in the folder and its ``output_<n>/`` too (``side_path``): listed once while neither folder changes, not
    once for each of their files."""
    return list(_listed_retries(folder, version(folder), version(folder / "output_0")))


@lru_cache(maxsize=16)
def _listed_retries(folder: Path, _version: int, _first_version: int) -> tuple[Path, ...]:
    """``_retries``' look (the folders' times: the cache's key)."""
    if not ((folder / META).is_file() and _holds_thread(folder / "output_0")):
        return ()
    return tuple(_numbered(p for p in folder.iterdir() if _is_retry(p)))


def _retry_threads(retry: Path) -> list[Path]:
    """A 2.x retry's threads, in the order its agents ran (reproducer, search, patch and review)."""
    return [p for group in _RETRY_THREADS for p in _numbered(p for g in group for p in retry.glob(g) if p.is_file())]


def _task_folder_v2(path: Path) -> Path | None:
    """The 2.x task folder the folder ``path`` is, or lies in, looked for only where ACR writes (the task folder, a
    retry's ``output_<n>/``, its ``search/``): another tool's files deeper below an ``output_<n>`` are its own."""
    folder = path
    if folder.name == "search" and _RETRY.fullmatch(folder.parent.name):
        folder = folder.parent
    if _RETRY.fullmatch(folder.name):
        folder = folder.parent
    return folder if folder.is_dir() and _retries(folder) else None


def _is_retry_thread(path: Path) -> bool:
    """A thread a 2.x retry saved that its run is read from (:data:`_OWN_THREADS` in ``output_<n>/``)."""
    retry, name = (path.parent.parent, f"search/{path.name}") if path.parent.name == "search" else \
        (path.parent, path.name)
    return bool(_RETRY.fullmatch(retry.name) and any(fnmatch(name, g) for g in _OWN_THREADS)) and path.is_file()


def run_folder(path: Path) -> Path | None:
    """The task folder ``path`` stands for: one holding a ``conversation_round_<n>.json`` (or that file itself), or
    a 2.x one holding ``meta.json`` and its retries' ``output_<n>/``."""
    folder = path.parent if path.is_file() and _THREAD.fullmatch(path.name) else path
    if folder.is_dir() and any(p.name.startswith("conversation_round_") for p in _threads(folder)):
        return folder
    if path.is_file():  # as in 1.x, a thread's file stands for its task folder, any other is passed over
        return _task_folder_v2(path.parent) if _is_retry_thread(path) else None
    return _task_folder_v2(path)


def folder_files(folder: Path) -> list[Path]:
    top = [folder / n for n in (META, COST, STATUS) if (folder / n).is_file()]
    if retries := _retries(folder):
        return [*top, *(p for r in retries for p in (*_retry_threads(r), r / STATUS) if p.is_file())]
    return [*top, *sorted(_threads(folder))]


#: The other files ACR writes in a task folder (the names in its 1,500 real ones; ``sbfl_result*.json``, SBFL's ranked
#: suspicious lines and methods, and ``run_developer_tests.log`` in its ``acr-val-sbfl`` set): told by name first, so
#: that a walk of a folder of many files does not list it once for each of them.
_OWN_FILES = re.compile(r"agent_proxy_\d+\.json|tool_call_(?:sequence|layers)\.json|agent_patch_raw_\d+|"
                        r"extracted_patch_\d+\.diff|developer_patch\.diff|problem_statement\.txt|info\.log|"
                        r"run_test_suite_\d+\.log|run_developer_tests\.log|sbfl_result(?:_method)?\.json")


def side_path(path: Path, fmt: str | None) -> str | None:
    """Any other file of a task folder: ACR's own bookkeeping (the proxy's extractions, tool-call logs), and the
    task, cost and patch status the folder's run is read with, when one is named alone."""
    named = _OWN_FILES.fullmatch(path.name) or path.name in (META, COST, STATUS)
    if named and run_folder(path.parent) is not None or path.is_file() and _task_folder_v2(path.parent) is not None:
        return "an AutoCodeRover task folder's own file (its run is read from the folder's conversation files)"
    if path.name == _RUN_STATS and (path.parent / _PREDICTIONS).is_file():
        return "AutoCodeRover's summary of a run set (its task count, model and costs; the runs are its task folders)"
    return None


def _content(message: Any) -> str:
    content = as_dict(message).get("content")
    return content if isinstance(content, str) else ""


def _steps(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    steps: list[dict[str, Any]] = []
    for n, message in enumerate(messages):
        if message.get("role") != "assistant":
            continue
        replies = []
        for later in messages[n + 1:]:
            if later.get("role") == "assistant":
                break
            replies.append(_content(later))
        observation = "\n\n".join(r for r in replies if r.strip()) or None
        answered = _RESULT.findall(observation or "")  # (api, its arguments) for each API ACR answered
        calls = [f"{name}({args})" for name, args in answered]
        steps.append({"thought": (_content(message) or None) if calls else None,  # a reply: its content alone
                      "action": answered[0][0] if answered else "respond",
                      "arguments": {"calls": calls} if calls else {"content": _content(message)},
                      "observation": observation})
    return steps


def _verdict(status: list[Any]) -> tuple[Outcome, Failure | None, dict[str, Any]]:
    """(outcome, failure, metadata) from how ACR read the patches it extracted (``extract_status.json``)."""
    if not status:
        return Outcome.unknown, None, {}
    if _APPLICABLE in status:
        return Outcome.success, None, {"outcome_basis": UNEVALUATED}
    return Outcome.failure, Failure(error=f"no applicable patch extracted ({status[-1]})",
                                    cause="AutoCodeRover handed in no patch"), {}


def to_trajectory(record: Any, ctx: Context) -> Trajectory:
    """A thread file forced to this format: its conversation alone."""
    return read_folder({ctx.source.name: record}, ctx)


def _is_thread(name: str) -> bool:
    """A thread's file: 1.x's (``conversation_round_<n>.json``, ...), or any a 2.x retry saves."""
    path = Path(name)
    return bool(_THREAD.fullmatch(path.name) or _RETRY.fullmatch(path.parts[0]) and path.name != STATUS)


def _v2_threads(threads: dict[str, list[dict[str, Any]]]) -> list[list[dict[str, Any]]]:
    """A 2.x run's threads in the order read (``folder_files``'s), each retry's search by its longest round alone
    (each round's file the whole search so far)."""
    searches = [name for name in threads if Path(name).parent.name == "search"]
    longest = {Path(n).parts[0]: n for n in sorted(searches, key=lambda n: len(threads[n]))}  # the longest last
    return [m for n, m in threads.items() if n not in searches or longest[Path(n).parts[0]] == n]


def read_folder(files: dict[str, Any], ctx: Context) -> Trajectory:
    threads = {name: value for name, value in files.items() if _is_thread(name)}
    for name, value in threads.items():
        if not isinstance(value, list) or not all(isinstance(m, dict) and "role" in m for m in value):
            raise RecordError(f"{name}: not an AutoCodeRover conversation (a JSON array of {{role, content}} "
                              f"messages; found {json_kind(value)})")
    if not threads:
        raise RecordError("no conversation_round_<n>.json (2.x: output_<n>/conv_*.json) in this AutoCodeRover task "
                          "folder")
    retried = any(_RETRY.fullmatch(Path(name).parts[0]) for name in threads)
    runs = _v2_threads(threads) if retried else [max(threads.values(), key=len)]
    messages = [m for thread in runs for m in thread]
    meta = as_dict(files.get(META))
    info = as_dict(meta.get("task_info"))
    folder = ctx.source.name if ctx.source.is_dir() else ctx.source.parent.name
    named = _FOLDER.fullmatch(folder)
    first = next((_content(m) for m in messages if m.get("role") == "user"), "")
    issue = _ISSUE.search(first)
    task = (issue.group(1) if issue else str(info.get("problem_statement") or first)).strip()
    if not task:
        raise RecordError(f"{folder}: no issue in the conversation's first user message, nor in {META}")
    instance = str(meta.get("task_id") or info.get("instance_id") or (named.group("task") if named else "")) or None
    started = datetime.strptime(named.group("at"), "%Y-%m-%d_%H-%M-%S").replace(tzinfo=timezone.utc) \
        if named else None
    cost = as_dict(files.get(COST))
    status = [s for name, value in files.items() if Path(name).name == STATUS
              for s in as_list(as_dict(value).get("extract_status"))]  # 2.x: each retry's, in order
    metadata = {k: v for k, v in {"instance_id": instance, "repo": info.get("repo"),
                                  "base_commit": info.get("base_commit"), "cost": cost.get("total_cost"),
                                  "total_tokens": cost.get("total_tokens"),
                                  "extract_status": status[-1] if status else None}.items() if v}
    outcome, failure, basis = _verdict(status)
    metadata.update(basis)
    fields: dict[str, Any] = {
        "trajectory_id": f"{ID_PREFIX}.{safe_id(folder)}",
        "task": clip_task(task),
        "task_id": instance,
        "model_id": cost.get("model") if isinstance(cost.get("model"), str) else None,
        "outcome": outcome,
        "failure": failure,
        "steps": finish_steps([s for thread in runs for s in _steps(thread)], metadata),  # (each checked above)
        "metadata": metadata,
    }
    if started is not None:
        fields["created_at"] = started
    return build(fields, ctx)

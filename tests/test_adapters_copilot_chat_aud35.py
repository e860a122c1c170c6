"""VS Code Copilot Chat's kept ``chatSessions/*.jsonl`` as VS Code writes it since 2026 (round 35's audit): the real
chat of tests/fixtures/copilot/.aud32 (CodinGame/monaco-vscode-api, MIT) with lines appended by hand in the shape
VS Code's ``ChatSessionOperationLog`` (``chatSessionOperationLog.ts``, ``objectMutationLog.ts``, MIT) writes them: no
real kept log with a stopped request was found committed (the real exports with one, tsteelematc/tauri-fasthtml's
of March 2026, carry no licence and also hold the ``errorDetails`` coded ``canceled`` that main read already)."""

from __future__ import annotations

import json
from pathlib import Path

from trajsearch.ingest.adapters._common import RUNNING_FROM
from trajsearch.model import Outcome

from adapter_support import only

KEPT_2026 = Path(__file__).parent / "fixtures" / "copilot" / ".aud32" / "b9394793-20e4-4dc7-a7ec-8a39c986dc76.jsonl"


def _kept_with(tmp_path: Path, *edits: dict) -> Path:
    """KEPT_2026 (four requests) with ``edits`` appended as VS Code appends them to the log."""
    path = tmp_path / "chatSessions" / KEPT_2026.name
    path.parent.mkdir(parents=True)
    path.write_text(KEPT_2026.read_text(encoding="utf-8") + "".join(json.dumps(e) + "\n" for e in edits),
                    encoding="utf-8")
    return path


def test_a_request_stopped_before_its_agent_answered_is_canceled_not_running(tmp_path: Path) -> None:
    """VS Code 2026 writes no ``isCanceled`` (its log schema keeps it undefined): a request the user stopped has
    ``modelState`` ``{value: 2}`` (``ResponseModelState.Cancelled``) and, stopped before its agent answered, no
    ``result`` (``chatServiceImpl`` returns without one). Read as still running, the run was marked an unfinished
    save (``running_from_step``) and its cancellation went uncounted."""
    request = {"requestId": "request_aud35", "timestamp": 1771434200000, "modelId": "toto/toto",
               "message": {"text": "write a longer story"}, "response": [], "modelState": {"value": 0}}
    path = _kept_with(tmp_path,
                      {"kind": 2, "k": ["requests"], "v": [request]},
                      {"kind": 2, "k": ["requests", 4, "response"], "v": [{"value": "Once upon a time"}]},
                      {"kind": 1, "k": ["requests", 4, "modelState"], "v": {"value": 2, "completedAt": 1771434203000}})
    run = only(path)
    assert run.metadata.get("canceled_requests") == 1
    assert RUNNING_FROM not in run.metadata
    assert run.outcome is Outcome.unknown and run.steps[-1].arguments == {"content": "Once upon a time"}
    running = only(_kept_with(tmp_path / "running", {"kind": 2, "k": ["requests"], "v": [request]}))
    assert running.metadata[RUNNING_FROM] == 5  # still running (modelState 0, no result): an unfinished save

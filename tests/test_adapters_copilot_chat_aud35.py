"""VS Code Copilot Chat's kept ``chatSessions/*.jsonl`` as VS Code writes it since 2026 (round 35's audit): the real
chat of tests/fixtures/copilot/.aud32 (CodinGame/monaco-vscode-api, MIT) with lines appended by hand in the shape
VS Code's ``ChatSessionOperationLog`` (``chatSessionOperationLog.ts``, ``objectMutationLog.ts``, MIT) writes them: no
real kept log with a stopped request was found committed (the real exports with one, tsteelematc/tauri-fasthtml's
of March 2026, carry no licence and also hold the ``errorDetails`` coded ``canceled`` that main read already)."""

from __future__ import annotations

import json
from pathlib import Path

from trajsearch.ingest import detect
from trajsearch.ingest.adapters._common import RUNNING_FROM
from trajsearch.ingest.read import read_inputs
from trajsearch.model import Outcome

from adapter_support import only, runs

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
    failed = only(_kept_with(tmp_path / "failed", {"kind": 2, "k": ["requests"], "v": [request]},
                             {"kind": 1, "k": ["requests", 4, "modelState"], "v": {"value": 3}}))
    assert RUNNING_FROM not in failed.metadata  # ResponseModelState.Failed with no result: ended, not running


REAL = Path(__file__).parent / "fixtures" / "copilot" / ".copilot29"
FETCH = REAL / "fetch_web_page.json"  # exported while its one request ran (no result)
COMPLETED = REAL / "completed_chat_trimmed.json"  # the same chat exported once it had ended
CANCELED = REAL / "canceled.json"  # Copilot Chat 0.36: the last request stopped (modelState 2, errorDetails canceled)


def test_an_export_made_while_its_last_request_ran_is_running_not_canceled(tmp_path: Path) -> None:
    """An export (or a kept ``.json``) writes ``ChatResponseModel.toJSON``, which maps a request still running
    (``Pending``/``NeedsInput``) to ``{value: 2 (Cancelled), completedAt: now}``: there ``modelState 2`` with no
    ``result`` is a request still running, so the export once ended replaces it, in either order, with no warning.
    Only the kept ``.jsonl`` log writes the state unmapped (the test above)."""
    running = json.loads(FETCH.read_text(encoding="utf-8"))
    running["requests"][0]["modelState"] = {"value": 2, "completedAt": 1771434203000}  # as VS Code 2026 exports it
    path = tmp_path / "running" / FETCH.name
    path.parent.mkdir()
    path.write_text(json.dumps(running), encoding="utf-8")
    run = only(path)
    assert run.metadata.get(RUNNING_FROM) == 0 and run.metadata.get("canceled_requests") is None
    for pair in ((path, COMPLETED), (COMPLETED, path)):
        [run] = {r.trajectory.trajectory_id: r.trajectory for r in read_inputs(pair) if r.ok}.values()
        assert [s.action for s in run.steps] == ["fetch_webpage", "respond"], pair


def test_a_stopped_request_whose_result_lost_its_canceled_code_is_canceled_not_failed(tmp_path: Path) -> None:
    """Newer VS Code's ``setResult`` drops ``errorDetails`` from a result that arrives after the user stopped the
    request, so only ``modelState`` ``{value: 2}`` says it was stopped: a canceled request, not the provider's error
    (``infra_error``) nor an uncounted one. Real 0.36 export with the ``canceled`` code dropped (or all its details)."""
    chat = json.loads(CANCELED.read_text(encoding="utf-8"))
    details = chat["requests"][-1]["result"]["errorDetails"]
    for n, result_details in enumerate(({k: v for k, v in details.items() if k != "code"}, None)):
        chat["requests"][-1]["result"]["errorDetails"] = result_details
        path = tmp_path / f"{n}.json"
        path.write_text(json.dumps(chat), encoding="utf-8")
        run = only(path)
        assert (run.outcome, run.metadata.get("canceled_requests")) == (Outcome.unknown, 1), result_details
        assert RUNNING_FROM not in run.metadata


def test_a_2026_chat_too_big_to_parse_for_detection_is_told_by_its_head(tmp_path: Path, monkeypatch) -> None:
    """A chat past the 64 MiB detection parses whole is told by its head (``SIGNATURE``), which asked for
    ``responderAvatarIconUri``: VS Code 2026's export writes ``{responderUsername, initialLocation, requests}`` and its
    kept ``.jsonl`` opens ``{kind: 0, v: {..., initialLocation, responderUsername, ...}}``, neither the icon, so such
    a chat was an unrecognised file, all lost."""
    monkeypatch.setattr(detect, "WHOLE_PARSE_BYTES", 4096)  # stands for a chat of over 64 MiB
    chat = json.loads(CANCELED.read_text(encoding="utf-8"))
    exported = tmp_path / "big.json"
    exported.write_text(json.dumps({k: chat[k] for k in ("responderUsername", "initialLocation", "requests")},
                                   indent=2), encoding="utf-8")
    opening, *edits = KEPT_2026.read_text(encoding="utf-8").splitlines(keepends=True)
    kept = tmp_path / "chatSessions" / KEPT_2026.name
    kept.parent.mkdir()
    opened = json.loads(opening)
    opened["v"]["customTitle"] = "x" * 70_000  # its first line past the 64 KiB head detection peeks at
    kept.write_text(json.dumps(opened, separators=(",", ":")) + "\n" + "".join(edits), encoding="utf-8")
    for path in (exported, kept):
        assert detect.detect_format(path) == "copilot-chat", path
        assert len(runs(path)) == 1, path

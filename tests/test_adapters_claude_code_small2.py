"""Claude Code 2.1.3xx's results for a call it ended with no result of its own (``toolDenialKind`` ``interrupted``
/ ``cancelled``): where its words say the call had started or may have run, it never finished; it is not a call
that did not run. The real file (``claude-code/.small2/``) is the 2.1.332 CLI's; its origin is in its ``README.md``."""

from __future__ import annotations

import json
from pathlib import Path

from trajsearch.actions import ran
from trajsearch.ingest.read import read_dump
from trajsearch.model import Trajectory

REAL = Path(__file__).parent / "fixtures" / "claude-code" / ".small2" / "3ebf967d-5cb4-4aca-946f-f9f64a86061b.jsonl"
INTERRUPTED = ("[Tool call interrupted: the session ended before this call's result was recorded, so its outcome is "
               "unknown. Check whether it took effect before relying on it or running it again.]")


def _run(path: Path) -> Trajectory:
    (parsed,) = list(read_dump(path, tenant="acme"))
    assert parsed.trajectory is not None, parsed.error
    return parsed.trajectory


def test_a_call_the_session_ended_while_it_ran_never_finished() -> None:
    """Bug (fix-AUDCC32, 3): the CLI killed while its Bash call ran and the session resumed, the CLI wrote the call's
    result on resume, ``toolDenialKind`` ``interrupted``, "[Tool call interrupted: the session ended ...]"; it read
    "not run: ...", though the command ran (its outcome unknown)."""
    run = _run(REAL)
    assert run.task == "INTR: run the long job" and run.metadata["user_prompts"] == ["and now say hi"]
    bash = run.steps[0]
    assert bash.action == "Bash" and bash.error == f"tool call never finished: {INTERRUPTED.strip('[]')}"
    assert ran(bash)


def test_the_clis_words_for_a_call_that_did_not_run_stay_not_run(tmp_path: Path) -> None:
    """The same record with the CLI's words for a call it ended before it started (2.1.332's ``Aco``, kind
    ``cancelled``: "As far as this session knows, this call did not run. ...") is still a call not run; with its words
    for one that may have run (kind ``interrupted``: "This call has no result. It may not have run, or not
    completely. ...") it never finished. The real file with the result's words swapped for those strings."""
    said = {"cancelled": "As far as this session knows, this call did not run. Call it again if it is still wanted.",
            "interrupted": "This call has no result. It may not have run, or not completely. Check before calling it "
                           "again, and decide whether it is still needed."}
    errors = {}
    for kind, text in said.items():
        lines = []
        for line in REAL.read_text().splitlines():
            record = json.loads(line)
            if record.get("toolDenialKind") == "interrupted":
                record["toolDenialKind"] = kind
                record["message"]["content"][0]["content"] = text
                record["toolUseResult"] = text
            lines.append(json.dumps(record))
        (path := tmp_path / f"{kind}.jsonl").write_text("\n".join(lines) + "\n")
        errors[kind] = _run(path).steps[0].error
    assert errors == {"cancelled": f"not run: {said['cancelled']}",
                      "interrupted": f"tool call never finished: {said['interrupted']}"}

"""Claude Code 2.1.332 files found by probe C (round p46): a truncating resume (``--resume-session-at``) that left a
branch of the conversation behind, and a deferred MCP tool's failed call. The fixtures (``claude-code/.real/
probe-c46/``) are written by the released CLI, trimmed; their origin is in ``SOURCE.md``."""

from __future__ import annotations

from pathlib import Path

from trajsearch.ingest.read import read_dump

CC = Path(__file__).parent / "fixtures" / "claude-code" / ".real" / "probe-c46"


def only_run(path: Path):
    [run] = [r.trajectory for r in read_dump(path, tenant="acme")]
    return run


def test_a_truncating_resume_leaves_the_abandoned_branch_out_of_the_run() -> None:
    """Bug (probe C, C3): ``--resume-session-at`` (the Agent SDK's ``resumeSessionAt``, the rewind) writes the new
    turn under an earlier record; the first turn's later call and answer, off the ``parentUuid`` chain the CLI loads
    the session by, were read in file order as the conversation, the abandoned answer a ``respond`` step followed
    by a later request. The run is the chain; the branch left is named in metadata (its command did run)."""
    run = only_run(CC / "resume-at")
    assert [(s.action, s.arguments.get("command") or s.arguments.get("content")) for s in run.steps] == [
        ("Bash", "rm -rf build"), ("Bash", "ls -1"),
        ("respond", "Branch B done: only notes.txt and build/ are here.")]
    assert run.task == "HOOKTEST: clean the build folder and write a marker"
    assert run.metadata["user_prompts"] == ["BRANCHB: forget the marker, just list the folder"]
    assert run.metadata["abandoned_calls"] == ["Bash: echo ok > done.txt"]
    assert run.metadata["abandoned_records"] == 3 and "abandoned_prompts" not in run.metadata


def test_a_deferred_mcp_tools_failure_is_observed_without_the_clis_schema_advice() -> None:
    """Bug (probe C, C8): 2.1.3xx appends to a failed call of a deferred MCP tool "This tool's input schema was not
    in your prompt when you called it. The input schema is: {...} ... call ToolSearch with query
    "select:mcp__vault__read_secret" ...": the CLI's advice to the model, not the tool's output, was the
    observation. The tool's own words are."""
    run = only_run(CC / "mcp")
    failed, ok, _ = run.steps
    refused = "PermissionError: access to secret 'db_password' denied for role reader"
    assert failed.observation == failed.error == refused
    assert ok.observation == "abc123"


def test_the_schema_advice_quoted_inside_an_output_is_the_outputs(tmp_path: Path) -> None:
    """Review 3: the advice was cut from wherever it began to the end of any result, so an output quoting it (a note
    the agent read) lost that quote and all after it. Only advice that ends the result is the CLI's. The probe's
    session with its second call's result made such an output."""
    import json

    (session,) = (CC / "mcp").glob("*.jsonl")
    lines = session.read_text().splitlines()
    advice = json.loads(lines[3])["message"]["content"][0]["content"].split("\n\n", 1)[1]
    note = f"notes.md:\n{advice}\n\n## Next\nrotate the key"
    record = json.loads(lines[5])
    record["message"]["content"][0]["content"] = [{"type": "text", "text": note}]
    lines[5] = json.dumps(record)
    (tmp_path / session.name).write_text("\n".join(lines) + "\n")
    failed, ok, _ = only_run(tmp_path).steps
    assert failed.observation == "PermissionError: access to secret 'db_password' denied for role reader"
    assert ok.observation == note

"""Round 44's probe F read through the public reader and the CLI: several ATIF trajectories in one file (F1, and
review rev1's D6), oversized step arguments (F3).

The ATIF fixtures (``fixtures/atif/.real/several-per-file``, see its SOURCE.md) are real ATIF documents in the
shape a multi-run exporter writes them.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from pydantic import ValidationError

from trajsearch.ingest.detect import detect_format
from trajsearch.ingest.read import read_dump
from trajsearch.model import MAX_STEP_FIELD_CHARS, STORED, Trajectory

from adapter_support import only
from cli_support import run_cli

FIXTURES = Path(__file__).parent / "fixtures"
ATIF = FIXTURES / "atif" / ".real"
SEVERAL = ATIF / "several-per-file"
ALONE = [ATIF / "openagents-qa-login" / "trajectory.json", ATIF / "nemo-relay" / "trajectory.json"]
#: A real Claude Code transcript (see its SOURCE.md) whose line 25 is a ``Write`` of a whole file.
CLAUDE_WRITE = FIXTURES / "claude-code" / "1af7fc5e-8455-4414-9ccd-011d40f70b2a.jsonl"
#: A file's content over the limit of a step's arguments (2.1 MB; the probe's was 21 MB).
BIG_FILE = "".join(f"line {n} of file content\n" for n in range(100_000))


def _same_run(read: object, alone: object) -> bool:
    """The same run but for its id (which names the file it was read from)."""
    fields = {"trajectory_id"}
    return read.model_dump(exclude=fields) == alone.model_dump(exclude=fields)  # type: ignore[attr-defined]


# -- F1: several ATIF trajectories in one file ------------------------------------------------------------------


def test_an_atif_jsonl_of_several_trajectories_is_one_run_per_line() -> None:
    """Bug (probe F, F1): a JSONL with one ATIF trajectory per line (HarnessHop's export of several rollouts) lost
    every run, rejected "expected a JSON object, got list". Each line is the run its document alone gives."""
    path = SEVERAL / "two-trajectories.atif.jsonl"
    assert detect_format(path) == "atif"
    parsed = list(read_dump(path, tenant="acme"))
    assert [(p.position, p.error) for p in parsed] == [("line 1", None), ("line 2", None)]
    for p, alone in zip(parsed, ALONE):
        assert _same_run(p.trajectory, only(alone, tenant="acme"))
    assert len({p.trajectory.trajectory_id for p in parsed}) == 2


def test_an_atif_jsonl_names_each_run_by_its_line_after_a_malformed_one(tmp_path: Path) -> None:
    """Bug (rev1, D6): the runs of an ATIF JSONL were named ``record N``, counted over the lines that parsed, so after
    a malformed line (here a copy of line 2 cut at 300 characters, a write that stopped) they named the wrong
    line; every other JSONL reader says ``line N``."""
    first, second = (SEVERAL / "two-trajectories.atif.jsonl").read_text().splitlines()
    path = tmp_path / "runs.atif.jsonl"
    path.write_text("\n".join([first, second[:300], second]) + "\n")
    parsed = list(read_dump(path, tenant="acme"))
    assert [(p.position, p.ok) for p in parsed] == [("line 2", False), ("line 1", True), ("line 3", True)]
    assert parsed[0].error.startswith("malformed JSON")
    assert _same_run(parsed[2].trajectory, only(ALONE[1], tenant="acme"))


def test_an_atif_json_array_of_trajectories_is_one_run_per_item(tmp_path: Path) -> None:
    """F1, the same documents as a JSON array."""
    path = tmp_path / "runs.json"
    lines = (SEVERAL / "two-trajectories.atif.jsonl").read_text().splitlines()
    path.write_text(json.dumps([json.loads(line) for line in lines], indent=2))
    parsed = list(read_dump(path, tenant="acme"))
    assert [p.ok for p in parsed] == [True, True]
    for p, alone in zip(parsed, ALONE):
        assert _same_run(p.trajectory, only(alone, tenant="acme"))


def test_cli_dry_run_counts_each_trajectory_of_an_atif_jsonl() -> None:
    """F1 through the CLI: the probe's command said ``atif, 0 runs, 1 rejected``."""
    code, out, err = run_cli("ingest", "--dry-run", "--json", str(SEVERAL / "two-trajectories.atif.jsonl"))
    assert code == 0, err
    assert '"runs": 2' in out and '"rejected": 0' in out


def test_a_streamed_atif_file_is_named_not_a_list_of_trajectories() -> None:
    """Probe F, O2: OpenAgents' off-spec streamed ATIF (a session header line, then one line per step) was rejected
    "expected a JSON object, got list", a parser's word; the error now says no line is an ATIF trajectory."""
    [parsed] = read_dump(SEVERAL / "devin-fan-out-six.atif.trimmed.jsonl", tenant="acme")
    assert parsed.error is not None and "got list" not in parsed.error
    assert "no ATIF trajectory among the file's 6 JSON values" in parsed.error
    assert "the first has the keys record, schema_version" in parsed.error


# -- F3: a step's arguments over the limit ---------------------------------------------------------------------


def _json_chars(arguments: object) -> int:
    return len(json.dumps(arguments, ensure_ascii=False))


def _ingest_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TRAJSEARCH_MODEL", "hashing")
    monkeypatch.delenv("TRAJSEARCH_SERVER", raising=False)
    for name, where in (("HOME", ""), ("URI", "milvus.db"), ("TRACES", "traces")):
        monkeypatch.setenv(f"TRAJSEARCH_{name}", str(tmp_path / "home" / where))
    monkeypatch.setenv("TRAJSEARCH_TENANT", "acme")


def test_a_native_tool_argument_over_the_limit_is_clipped_and_said(tmp_path: Path, monkeypatch) -> None:
    """Bug (probe F, F3): a ``write_file`` step carrying a whole file as ``arguments.content`` had no bound: the
    probe's 21 MB became 18,337 passage rows and no notice. Its middle is clipped as an output's is, the path kept
    whole, the ingest summary names it, and an export ingested again is not named as clipped again."""
    _ingest_env(tmp_path, monkeypatch)
    dump = tmp_path / "bigargs.jsonl"
    dump.write_text(json.dumps({"trajectory_id": "bigargs", "task": "Write the big fixture file", "outcome": "success",
                                "steps": [
        {"index": 0, "action": "write_file", "arguments": {"path": "fixture.txt", "content": BIG_FILE},
         "observation": "written"},
        {"index": 1, "action": "bash", "arguments": {"cmd": "wc -l fixture.txt"}, "observation": "100000"}]}) + "\n")
    code, out, err = run_cli("ingest", str(dump), "--json")
    assert code == 0, err
    report = json.loads(out)
    assert report["ingested"] == 1 and report["clipped"]["runs"] == 1
    assert "steps[0].arguments: " in json.dumps(report["clipped"])
    code, out, err = run_cli("show", "bigargs", "--json", "--steps", "0:0")
    assert code == 0, err
    arguments = json.loads(out)["steps"][0]["arguments"]
    assert arguments["path"] == "fixture.txt"
    assert _json_chars(arguments) <= MAX_STEP_FIELD_CHARS and "characters clipped ...]" in arguments["content"]
    assert arguments["content"].startswith("line 0 of ") and arguments["content"].endswith("line 99999 of file content\n")
    code, out, err = run_cli("stats", "--json")
    assert code == 0, err
    assert json.loads(out)["rows_by_level"]["passage"] < 1_000  # the bound's: ~1,000,000 characters' worth
    exported = tmp_path / "export.jsonl"
    code, _, err = run_cli("export", "-q", "big fixture file", "-f", "jsonl", "-k", "1", "-o", str(exported))
    assert code == 0, err
    code, out, err = run_cli("ingest", str(exported), "--json")
    assert code == 0, out + err
    again = json.loads(out)
    assert (again["unchanged"], again["clipped"]["runs"]) == (1, 0)


def test_a_claude_code_write_of_a_big_file_is_clipped_in_its_content_only(tmp_path: Path) -> None:
    """F3 in another format: the bound is every adapter's (``_common.build``). The real transcript's ``Write``
    (line 25), its ``content`` made a 2.1 MB file: the file path stays whole, the content keeps head and tail."""
    lines = CLAUDE_WRITE.read_text().splitlines()
    record = json.loads(lines[24])
    [call] = [p for p in record["message"]["content"] if p.get("type") == "tool_use" and p["name"] == "Write"]
    path_written = call["input"]["file_path"]
    call["input"]["content"] = BIG_FILE
    lines[24] = json.dumps(record)
    dump = tmp_path / CLAUDE_WRITE.name
    dump.write_text("\n".join(lines) + "\n")
    run = only(dump, tenant="acme")
    [write] = [s for s in run.steps if s.action == "Write"]
    assert write.arguments["file_path"] == path_written
    assert _json_chars(write.arguments) <= MAX_STEP_FIELD_CHARS
    content = write.arguments["content"]
    assert "characters clipped ...]" in content and content.startswith("line 0 of file content\n")
    assert [s.action for s in run.steps] == [s.action for s in only(CLAUDE_WRITE, tenant="acme").steps]


def test_the_model_bounds_arguments_for_a_new_run_not_a_stored_one() -> None:
    """F3: the bound is the model's, as the step texts' ``max_length`` is: a run written through the service API
    (validated as it comes) cannot carry 21 MB of arguments; a run stored before the bound stays readable."""
    run = {"trajectory_id": "r", "tenant": "acme", "task": "write a file",
           "steps": [{"index": 0, "action": "write_file", "arguments": {"content": "x" * (MAX_STEP_FIELD_CHARS + 1)}}]}
    with pytest.raises(ValidationError, match="over the limit of 1,000,000"):
        Trajectory.model_validate(run)
    assert Trajectory.model_validate(run, context=STORED).steps[0].arguments == run["steps"][0]["arguments"]

"""One run, one id, wherever its file is read from (round 23, IDS; round 26, RUNID).

A mini-swe-agent run was named ``<output folder>.<instance_id>``: the same ``.traj.json`` read from a copy, a
re-download or a renamed output folder became a second run in the index (a duplicate exemplar, a duplicate warning).
A 2.x file names its attempt itself (its first model reply's saved time and response id), so that is its id now,
``<model>.<instance_id>.<attempt>``; two attempts at one instance stay two runs, and a store written before replaces
its copy under the folder's name. A run whose file saved no such mark (a first call that failed, 1.x) is
``<model>.<instance_id>.<folder>``, never the old shape: round 23's version kept it at ``<folder>.<instance_id>``,
which another attempt from a same-named folder then removed as its own old copy (review RIDS).
The fixtures are cut from two real attempts of one instance by one configuration (``tests/fixtures/ids/SOURCE.md``).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from cli_support import newcomer, run_cli  # noqa: F401  (newcomer: a fixture)

from trajsearch.embed import HashingEmbedder
from trajsearch.ingest.read import read_inputs
from trajsearch.search import TrajSearch

FIXTURES = Path(__file__).parent / "fixtures" / "ids" / ".real" / "mini-swe-agent"
INSTANCE = "marshmallow-code__marshmallow-1343"


def _laid_out(attempt: str, output_folder: Path) -> Path:
    """The attempt's file as mini-swe-agent lays it out, ``<output folder>/<instance>/<instance>.traj.json``."""
    shutil.copytree(FIXTURES / attempt / INSTANCE, output_folder / INSTANCE)
    return output_folder / INSTANCE / f"{INSTANCE}.traj.json"


def _ingest(*paths: Path) -> dict:
    code, stdout, stderr = run_cli("ingest", *map(str, paths), "--json", "-q")
    assert code == 0, stderr
    return json.loads(stdout)


def _run_ids() -> list[str]:
    code, stdout, stderr = run_cli("export", "-q", "marshmallow", "-f", "jsonl", "-k", "10")
    assert code == 0, stderr
    return sorted(json.loads(line)["trajectory_id"] for line in stdout.splitlines() if line.strip())


def _cli(*args: str) -> dict:
    code, stdout, stderr = run_cli(*args, "--json")
    assert code == 0, stdout + stderr
    return json.loads(stdout)


def _stored_before(path: Path, home: Path) -> str:
    """The run of ``path`` stored as a store written before round 26 holds it: under its folder's id, with no
    ``supersedes``; that id."""
    run = next(iter(read_inputs([path]))).trajectory
    [old] = run.metadata["supersedes"]
    before = run.model_copy(update={"trajectory_id": old,
                                    "metadata": {k: v for k, v in run.metadata.items() if k != "supersedes"}})
    with TrajSearch.open(str(home / "milvus.db"), traces=str(home / "traces"), embedder=HashingEmbedder()) as ts:
        ts.add([before])
    return old


def _runs_stored() -> int:
    code, stdout, stderr = run_cli("stats", "--json")
    assert code == 0, stderr
    return json.loads(stdout)["trajectories"]


def test_the_same_file_read_from_two_folders_is_one_run(newcomer, tmp_path: Path):
    first = _laid_out("deepseek_chat_dev", tmp_path / "download-1" / "deepseek_chat_dev").parents[1]
    renamed = _laid_out("deepseek_chat_dev", tmp_path / "download-2" / "deepseek-chat-run-old").parents[1]
    _ingest(first)
    _ingest(renamed)
    assert _runs_stored() == 1
    assert _ingest(first)["read"] == 0  # the checkpoint has it: nothing read, nothing added


def test_both_copies_in_one_ingest_are_one_run(newcomer, tmp_path: Path):
    _laid_out("deepseek_chat_dev", tmp_path / "dump" / "deepseek_chat_dev")
    _laid_out("deepseek_chat_dev", tmp_path / "dump" / "deepseek_chat_dev-copy")
    report = _ingest(tmp_path / "dump")
    assert report["renamed"] == []  # not taken for two runs sharing an id (``<id>+<digest>``)
    assert _runs_stored() == 1


def test_two_attempts_at_one_instance_stay_two_runs(newcomer, tmp_path: Path):
    _laid_out("deepseek_chat_dev", tmp_path / "dump" / "deepseek_chat_dev")
    _laid_out("deepseek_chat_dev_rerun", tmp_path / "dump" / "deepseek_chat_dev_rerun")
    _laid_out("deepseek_chat_dev_rerun", tmp_path / "elsewhere" / "deepseek_chat_dev")  # even under the other's name
    _ingest(tmp_path / "dump", tmp_path / "elsewhere")
    assert _runs_stored() == 2


def test_a_save_taken_mid_run_has_the_finished_runs_id(tmp_path: Path):
    finished = _laid_out("deepseek_chat_dev", tmp_path / "out")
    record = json.loads(finished.read_text())
    record["messages"] = record["messages"][:4]  # mini-swe-agent saves the file as the run goes
    del record["info"]["exit_status"]
    midway = tmp_path / "midway" / INSTANCE / finished.name
    midway.parent.mkdir(parents=True)
    midway.write_text(json.dumps(record))
    ids = [parsed.trajectory.trajectory_id for path in (finished, midway) for parsed in read_inputs([path])]
    assert len(ids) == 2 and ids[0] == ids[1]


def test_a_store_written_before_keeps_one_copy(newcomer, tmp_path: Path):
    """A store holds the run under the id its folder gave it before: ingesting it again replaces that copy."""
    path = _laid_out("deepseek_chat_dev", tmp_path / "deepseek_chat_dev")
    assert _stored_before(path, tmp_path / "home") == f"deepseek_chat_dev.{INSTANCE}"
    assert _run_ids() == [f"deepseek_chat_dev.{INSTANCE}"]
    report = _ingest(path.parents[1])
    assert report["superseded"] == 1
    assert _run_ids() == [f"deepseek-chat.{INSTANCE}.e6416413c5"]  # the model, the instance, the attempt


def test_delete_from_finds_the_run_a_store_written_before_holds(newcomer, tmp_path: Path):
    """``delete --from`` the dump removes its run stored under the folder's id (round 23's version left it)."""
    path = _laid_out("deepseek_chat_dev", tmp_path / "deepseek_chat_dev")
    old = _stored_before(path, tmp_path / "home")
    assert _cli("delete", "--from", str(path.parents[1])) == {"removed": [old], "not_found": [], "kept_other_run": []}
    assert _runs_stored() == 0


def test_an_outcomes_file_keyed_by_the_folder_id_still_judges_the_run(newcomer, tmp_path: Path):
    """A run-id keyed outcomes file written for the ids before round 26 (``<folder>.<instance>``) still matches."""
    path = _laid_out("deepseek_chat_dev", tmp_path / "deepseek_chat_dev")
    outcomes = tmp_path / "verdicts.json"
    outcomes.write_text(json.dumps({f"deepseek_chat_dev.{INSTANCE}": "unresolved"}))
    report = _ingest(path.parents[1], "--outcomes", outcomes)
    assert report["outcomes"]["matched"] == 1, report["outcomes"]
    shown = _cli("show", f"deepseek-chat.{INSTANCE}.e6416413c5")
    assert (shown["outcome"], shown["metadata"]["outcome_basis"]) == ("failure", f"outcomes file {outcomes.name}")


def test_an_attempt_whose_first_call_failed_is_not_taken_for_another_attempts_old_copy(newcomer, tmp_path: Path):
    """Review RIDS: a 2.x run whose first model call failed saves no reply, so no mark of its attempt; round 23 left
    it at ``<folder>.<instance>``, the id another attempt from a same-named folder retires as its own old copy, so
    ingesting that attempt removed it. It has an id of its own shape now, and both stay."""
    failed = _laid_out("deepseek_chat_dev", tmp_path / "first" / "deepseek_chat_dev")
    record = json.loads(failed.read_text())
    record["messages"] = [*record["messages"][:2], {
        "role": "exit", "content": "", "extra": {
            "exit_status": "InternalServerError", "submission": "",
            "exception_str": "litellm.InternalServerError: DeepseekException - [SSL: UNEXPECTED_EOF_WHILE_READING]"}}]
    record["info"].update(exit_status="InternalServerError", submission="")
    failed.write_text(json.dumps(record))
    _ingest(failed.parents[1])
    _ingest(_laid_out("deepseek_chat_dev_rerun", tmp_path / "second" / "deepseek_chat_dev").parents[1])
    assert _runs_stored() == 2

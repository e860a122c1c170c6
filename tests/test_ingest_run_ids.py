"""One run, one id, wherever its file is read from (round 23, IDS; round 26, RUNID).

A mini-swe-agent run was named ``<output folder>.<instance_id>``: the same ``.traj.json`` read from a copy, a
re-download or a renamed output folder became a second run in the index (a duplicate exemplar, a duplicate warning).
A 2.x file names its attempt itself (its first model reply's saved time and response id), so that is its id now,
``<model>.<instance_id>.<attempt>``; two attempts at one instance stay two runs, and a store written before replaces
its copy under the folder's name where that copy is this run, never another attempt whose folder bore the name
(round 27, RUNID2: round 26's version removed it by id alone). A run whose file saved no such mark (a first call
that failed, 1.x) is ``<model>.<instance_id>.<folder>``, never the old shape: round 23's version kept it at
``<folder>.<instance_id>``, which another attempt from a same-named folder then removed as its own old copy
(review RIDS).
The fixtures are cut from two real attempts of one instance by one configuration (``tests/fixtures/ids/SOURCE.md``).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from cli_support import newcomer, run_cli  # noqa: F401  (newcomer: a fixture)

from typer.testing import CliRunner

from trajsearch.cli import app
from trajsearch.embed import HashingEmbedder
from trajsearch.ingest.read import distinct_id, read_inputs
from trajsearch.model import Outcome
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
    every = [arg for outcome in Outcome for arg in ("--outcome", outcome.value)]
    code, stdout, stderr = run_cli("export", "-q", "marshmallow", "-f", "jsonl", "-k", "10", *every)
    assert code == 0, stderr
    return sorted(json.loads(line)["trajectory_id"] for line in stdout.splitlines() if line.strip())


def _cli(*args: str) -> dict:
    code, stdout, stderr = run_cli(*args, "--json")
    assert code == 0, stdout + stderr
    return json.loads(stdout)


def _stored_before(path: Path, home: Path, renamed: str = "", **verdict) -> str:
    """The run of ``path`` stored as a store written before round 27 holds it: under its folder's id, with no
    ``former_ids``; that id."""
    run = next(iter(read_inputs([path]))).trajectory
    old = renamed or run.metadata["former_ids"][0]
    metadata = {k: v for k, v in run.metadata.items() if k != "former_ids"}
    if basis := verdict.pop("outcome_basis", None):
        metadata["outcome_basis"] = basis
    before = run.model_copy(update={"trajectory_id": old, "metadata": metadata, **verdict})
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


def test_an_older_stores_two_folder_copies_of_a_run_both_go_in_one_ingest(newcomer, tmp_path: Path):
    """That store holds the run twice, under each folder's id: one ingest of both folders replaces both copies (the
    run read second is a repeat of the first in the job; the first one's former id counts too)."""
    paths = [_laid_out("deepseek_chat_dev", tmp_path / "dump" / name) for name in ("deepseek_chat_dev", "dev-copy")]
    old = sorted(_stored_before(path, tmp_path / "home") for path in paths)
    assert _run_ids() == old
    assert _ingest(tmp_path / "dump")["superseded"] == 2
    assert _run_ids() == [f"deepseek-chat.{INSTANCE}.e6416413c5"]


@pytest.mark.parametrize("judged", [(), (0,), (1,), (0, 1)])
def test_an_older_stores_two_folder_copies_of_a_run_both_go_when_they_fall_in_two_batches(newcomer, tmp_path: Path,
                                                                                           judged: tuple[int, ...]):
    """The same with one run a batch, so that each copy's former id is met in its own batch: both old copies go, the
    run is stored once, and the verdict an outcome file gave either old copy is kept (``ingest`` cuts batches of
    up to 32 runs: a walk of many folders splits the copies so)."""
    paths = [_laid_out("deepseek_chat_dev", tmp_path / "dump" / name) for name in ("deepseek_chat_dev", "dev-copy")]
    verdict = {"outcome": Outcome.failure, "reward": 0.0, "outcome_basis": "outcomes file report.json"}
    old = sorted(_stored_before(path, tmp_path / "home", **(verdict if n in judged else {}))
                 for n, path in enumerate(paths))
    assert _run_ids() == old
    with TrajSearch.open(str(tmp_path / "home" / "milvus.db"), traces=str(tmp_path / "home" / "traces"),
                         embedder=HashingEmbedder()) as ts:
        report = ts.indexer(batch_size=1).add(read_inputs(paths))
    assert (report.superseded, report.ingested, report.verdicts_kept) == (2, 1, 1 if judged else 0)  # one run
    assert _run_ids() == [_new_id(paths[0])]
    shown = _cli("show", _new_id(paths[0]))
    assert (shown["outcome"], shown["metadata"].get("outcome_basis")) == \
        (("failure", "outcomes file report.json") if judged else ("success", "submitted, not evaluated (no test "
                                                                 "result in the dump)"))


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


# -- round 27, RUNID2: the review of round 26's version found runs lost ----------------------------------------------

ALL_FIXTURES = Path(__file__).parent / "fixtures"


def _stream(data: bytes, name: str) -> dict:
    result = CliRunner().invoke(app, ["ingest", "-", "-q", "--json", "--stream-name", name], input=data)
    assert result.exit_code == 0, result.stderr
    return json.loads(result.stdout)


def _new_id(path: Path) -> str:
    return next(iter(read_inputs([path]))).trajectory.trajectory_id


def test_an_older_stores_copy_of_another_attempt_under_the_folder_id_is_kept(newcomer, tmp_path: Path):
    """Review 1: a store written before holds attempt B under ``deepseek_chat_dev.<instance>`` (B's folder bore
    that name); ingesting attempt A from a folder of that name removed B, A's former id, by the id alone."""
    other = _stored_before(_laid_out("deepseek_chat_dev_rerun", tmp_path / "old" / "deepseek_chat_dev"),
                           tmp_path / "home")
    path = _laid_out("deepseek_chat_dev", tmp_path / "new" / "deepseek_chat_dev")
    report = _ingest(path.parents[1])
    assert (report["ingested"], report["superseded"]) == (1, 0)
    assert _run_ids() == sorted([other, _new_id(path)])


def _marked_in_whole_seconds(attempt: str, output_folder: Path) -> Path:
    """The attempt as a CS 294-264 or ReAct-style agent saves it: every message marked with the same whole second
    (``fixtures/mini-swe-agent/.real/cs294-system-replies``: ``"timestamp": 1759571112``), no response id."""
    path = _laid_out(attempt, output_folder)
    record = json.loads(path.read_text())
    for message in record["messages"]:
        for mark in ("response", "timestamp"):
            (message.get("extra") or {}).pop(mark, None)
        message["timestamp"] = 1759571112
    path.write_text(json.dumps(record))
    return path


def test_attempts_marked_in_the_same_whole_second_without_a_response_id_are_two_runs(newcomer, tmp_path: Path):
    """Review 2: two attempts started in one second, saving no response id, shared one id: the second ingest
    replaced the first. The first reply's content tells them apart; a copy and a save taken mid-run keep the id."""
    first = _marked_in_whole_seconds("deepseek_chat_dev", tmp_path / "a" / "deepseek_chat_dev")
    second = _marked_in_whole_seconds("deepseek_chat_dev_rerun", tmp_path / "b" / "deepseek_chat_dev_rerun")
    _ingest(first.parents[1])
    _ingest(second.parents[1])
    assert _runs_stored() == 2
    copy = tmp_path / "c" / "renamed" / INSTANCE / first.name
    copy.parent.mkdir(parents=True)
    copy.write_bytes(first.read_bytes())
    _ingest(copy.parents[1])
    assert _runs_stored() == 2  # the copy is the stored run
    record = json.loads(first.read_text())
    record["messages"] = record["messages"][:4]
    del record["info"]["exit_status"]
    copy.write_text(json.dumps(record))
    assert _new_id(copy) == _new_id(first) != _new_id(second)
    assert _runs_stored() == 2


def test_a_streamed_save_without_an_instance_id_is_not_removed_by_another_attempt(newcomer, tmp_path: Path):
    """Review 3: a save taken mid-run, before the file held its ``instance_id``, streamed as
    ``deepseek_chat_dev/<instance>.traj.json``, is named by its path as before, ``deepseek_chat_dev.<instance>``:
    the former id of every attempt read from a ``deepseek_chat_dev`` folder, which then removed it."""
    record = json.loads(_laid_out("deepseek_chat_dev_rerun", tmp_path / "rerun").read_text())
    record["messages"] = record["messages"][:4]
    del record["info"]["exit_status"], record["instance_id"]
    _stream(json.dumps(record).encode(), f"deepseek_chat_dev/{INSTANCE}.traj.json")
    assert _run_ids() == [f"deepseek_chat_dev.{INSTANCE}"]
    path = _laid_out("deepseek_chat_dev", tmp_path / "out" / "deepseek_chat_dev")
    assert _ingest(path.parents[1])["superseded"] == 0
    assert _run_ids() == sorted([f"deepseek_chat_dev.{INSTANCE}", _new_id(path)])


def test_swe_agent_and_codex_runs_keep_their_ids_and_digests(tmp_path: Path):
    """Review 4: round 26 left the place a run was read from out of every run's digest, which names a run that
    shares its id with another (``<id>+<digest>``): SWE-agent's (``run_dir``, ``supersedes``) and Codex's
    (``supersedes``) moved, and a store made before got those runs again. The values are main's before round 27."""
    retry = ALL_FIXTURES / "swe-agent" / ".real" / "sa-1.1.0-retry" / "chooser" / "run2" / "demo__greet-retry2"
    codex = ALL_FIXTURES / "codex-cli" / ".real" / "probe-c46-revert" / (
        "rollout-2026-12-04T23-59-43-01a2437f-dcde-73a3-b299-e7a643aa2e2a_01a2437f-e0a4-77c3-bea3-f5b9d18ce63c.jsonl")
    runs = [p.trajectory for path in (retry / "demo__greet-retry2.traj", codex) for p in read_inputs([path])]
    assert [distinct_id(run) for run in runs] == [
        "swe-agent.run2.demo__greet-retry2.attempt_0+884eecca", "swe-agent.run2.demo__greet-retry2.attempt_1+d1c68dad",
        "codex.01a2437f-dcde-73a3-b299-e7a643aa2e2a+92ca9f1a"]


def test_a_store_written_before_upgrades_without_a_run_lost_or_added(newcomer, tmp_path: Path):
    """The upgrade: a store written before round 27 holds two attempts under their folders' ids, one judged by an
    outcomes file, and a run with no instance id under its path's id. Ingesting the same files again moves each run
    to its new id, with its verdict: as many runs, none twice; again, nothing changes."""
    home = tmp_path / "home"
    first = _laid_out("deepseek_chat_dev", tmp_path / "dump" / "deepseek_chat_dev")
    second = _laid_out("deepseek_chat_dev_rerun", tmp_path / "dump" / "deepseek_chat_dev_rerun")
    nameless = tmp_path / "dump" / "streamed" / f"{INSTANCE}.traj.json"
    nameless.parent.mkdir()
    record = json.loads(second.read_text())
    del record["instance_id"]
    nameless.write_text(json.dumps(record))
    judged = _stored_before(first, home, outcome=Outcome.failure, reward=0.0, outcome_basis="outcomes file report.json")
    _stored_before(second, home)
    with TrajSearch.open(str(home / "milvus.db"), traces=str(home / "traces"), embedder=HashingEmbedder()) as ts:
        ts.add([next(iter(read_inputs([nameless]))).trajectory])
    before = _run_ids()
    assert len(before) == 3 and judged in before
    report = _ingest(tmp_path / "dump")
    assert report["superseded"] == 2
    after = _run_ids()
    assert after == sorted([_new_id(first), _new_id(second), f"dump.streamed.{INSTANCE}"])
    shown = _cli("show", _new_id(first))
    assert (shown["outcome"], shown["metadata"]["outcome_basis"]) == ("failure", "outcomes file report.json")
    again = _ingest(tmp_path / "dump")
    assert (again["ingested"], again["superseded"]) == (0, 0) and _run_ids() == after


def test_two_attempts_under_one_folder_name_both_read_again_are_two_runs(newcomer, tmp_path: Path):
    """A store written before held one of two attempts whose folders bore one name (the second replaced the first
    under ``deepseek_chat_dev.<instance>``); both read again are two runs, and ``delete --from`` the other's dump
    keeps the stored one, another run."""
    first = _laid_out("deepseek_chat_dev", tmp_path / "x" / "deepseek_chat_dev")
    second = _laid_out("deepseek_chat_dev_rerun", tmp_path / "y" / "deepseek_chat_dev")
    old = _stored_before(second, tmp_path / "home")
    code, stdout, stderr = run_cli("delete", "--from", str(first.parents[1]), "--json")
    assert json.loads(stdout) == {"removed": [], "not_found": [], "kept_other_run": [_new_id(first)]}, stderr
    assert _ingest(first.parents[1], second.parents[1])["superseded"] == 1
    assert _run_ids() == sorted([_new_id(first), _new_id(second)]) and old not in _run_ids()


def test_an_older_stores_earlier_save_of_the_same_attempt_moves(newcomer, tmp_path: Path):
    """The same attempt stored under its folder's id as a save taken mid-run (or as an older reader read it: other
    content) is this run, begun at the same instant: the finished file takes its place, one run."""
    path = _laid_out("deepseek_chat_dev", tmp_path / "old" / "deepseek_chat_dev")
    finished = path.read_text()
    record = json.loads(finished)
    record["messages"] = record["messages"][:4]
    del record["info"]["exit_status"]
    path.write_text(json.dumps(record))
    old = _stored_before(path, tmp_path / "home")
    path.write_text(finished)
    assert _ingest(path.parents[1])["superseded"] == 1
    assert _run_ids() == [_new_id(path)] != [old]


@pytest.mark.parametrize("stored", [0, 1])
@pytest.mark.parametrize("order", [(0, 1), (1, 0)])
def test_either_attempt_under_a_shared_folder_id_moves_whatever_the_input_order(newcomer, tmp_path: Path, stored,
                                                                                order):
    """Two attempts whose folders bore one name both name ``deepseek_chat_dev.<instance>`` as their former id; the
    store written before holds one of them, judged by an outcomes file. Read again in either order, that copy moves
    to its attempt's new id with its verdict: two runs, none twice (review RUNID2, M1: only the last input naming
    the id was compared, so the first attempt's old copy stayed beside its new one)."""
    attempts = [_laid_out("deepseek_chat_dev", tmp_path / "x" / "deepseek_chat_dev"),
                _laid_out("deepseek_chat_dev_rerun", tmp_path / "y" / "deepseek_chat_dev")]
    old = _stored_before(attempts[stored], tmp_path / "home", outcome=Outcome.failure, reward=0.0,
                         outcome_basis="outcomes file report.json")
    assert _ingest(*(attempts[i].parents[1] for i in order))["superseded"] == 1
    assert _run_ids() == sorted(map(_new_id, attempts)) and old not in _run_ids()
    shown = _cli("show", _new_id(attempts[stored]))
    assert (shown["outcome"], shown["metadata"]["outcome_basis"]) == ("failure", "outcomes file report.json")


#: The id the version before round 27 gave the rerun when both attempts were read in one ingest from folders of one
#: name (``DistinctIds``: ``<folder id>+<digest>``), as it gave it (its CLI run on these fixtures).
RENAMED_BEFORE = f"deepseek_chat_dev.{INSTANCE}+2a548e8c"


def test_an_older_stores_renamed_copy_moves_and_delete_from_finds_it(newcomer, tmp_path: Path):
    """A store written before holds both attempts read in one ingest from folders of one name: the first under the
    folder's id, the second renamed ``<folder id>+<digest>``. ``delete --from`` the second's dump finds that copy,
    and both read again move to their new ids: two runs, none twice (review RUNID2, M2: the renamed copy stayed)."""
    home = tmp_path / "home"
    first = _laid_out("deepseek_chat_dev", tmp_path / "x" / "deepseek_chat_dev")
    second = _laid_out("deepseek_chat_dev_rerun", tmp_path / "y" / "deepseek_chat_dev")
    _stored_before(second, home, renamed=RENAMED_BEFORE)
    assert _cli("delete", "--from", str(second.parents[1]))["removed"] == [RENAMED_BEFORE]
    _stored_before(first, home)
    _stored_before(second, home, renamed=RENAMED_BEFORE)
    assert _ingest(first.parents[1], second.parents[1])["superseded"] == 2
    assert _run_ids() == sorted([_new_id(first), _new_id(second)])

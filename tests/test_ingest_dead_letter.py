"""``--dead-letter FILE`` named by several jobs keeps every job's rejections (probe G, G3): a new job (another
tenant, ``--restart``, another shard) truncated the file to the size its own checkpoint recorded, 0.

Real data: a tau-bench v1 results file cut short, as a download that stopped leaves it: the first 40,000 bytes of
the grok-3 excerpt in ``fixtures/tau-bench/.real`` (see its SOURCE.md), one whole run, then a record cut off.
"""

from __future__ import annotations

import json
from pathlib import Path

from trajsearch.ingest.batch import IngestJob, Shard, run_ingest

from test_ingest_pipeline import open_ts

GROK3 = Path(__file__).parent / "fixtures" / "tau-bench" / ".real" / \
    "tool-calling-grok-3-0.0_range_0--1_user-grok-3-llm_0921131646.json"


def cut_download(path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(GROK3.read_bytes()[:40_000])
    return path


def lines(path: Path) -> list[tuple[str, str]]:
    return [(d["source"], d["reason"].split(":")[0]) for d in map(json.loads, path.read_text().splitlines())]


def test_jobs_that_name_one_dead_letter_file_each_add_their_rejections(tmp_path: Path) -> None:
    dump = cut_download(tmp_path / "dump" / "results.json")
    rejects = tmp_path / "rejects.jsonl"
    with open_ts(tmp_path, "store") as ts:
        for tenant, resume in (("acme", True), ("beta", True), ("acme", False)):  # another tenant, then --restart
            job = IngestJob([dump], tenant=tenant, state_dir=tmp_path / "state", dead_letter=rejects, resume=resume)
            assert run_ingest(ts, job).report.total_rejected == 1
        assert lines(rejects) == [(str(dump), "malformed JSON")] * 3  # "...: cut short: the record ends inside..."
        again = run_ingest(ts, IngestJob([dump], tenant="beta", state_dir=tmp_path / "state", dead_letter=rejects))
    assert again.skipped_units == 1 and len(lines(rejects)) == 3  # a done input adds nothing


def test_shards_that_share_a_dead_letter_file_keep_each_others_lines(tmp_path: Path) -> None:
    """``--shard i/N`` run one after the other with one ``--dead-letter`` path: each shard rejects the records it
    owns, and the file ends with all of them (it held the last shard's only)."""
    dumps = [cut_download(tmp_path / "dump" / f"week {n}" / "results.json") for n in range(6)]
    rejects = tmp_path / "rejects.jsonl"
    with open_ts(tmp_path, "store") as ts:
        rejected = [run_ingest(ts, IngestJob(dumps, tenant="acme", state_dir=tmp_path / "state", dead_letter=rejects,
                                             shard=Shard(i, 3))).report.total_rejected for i in range(3)]
    assert sum(rejected) == 6 and sorted(rejected) != [0, 0, 6]  # the rejections are spread over the shards
    assert sorted(source for source, _ in lines(rejects)) == sorted(map(str, dumps))


def test_a_dead_letter_directory_is_refused_up_front_by_name(tmp_path: Path, monkeypatch) -> None:
    """``--dead-letter DIR`` (a natural guess: ``--state-dir`` takes one) failed every ingest with a bare "[Errno 21]
    Is a directory" (probe G, G3); now a bad argument (exit 2) that names the option, before anything is written."""
    from cli_support import run_cli

    monkeypatch.setenv("TRAJSEARCH_MODEL", "hashing")
    monkeypatch.setenv("TRAJSEARCH_HOME", str(tmp_path / "home"))
    folder = tmp_path / "dl"
    folder.mkdir()
    for option in ("--dead-letter", "--checkpoint"):  # the same guess, the same kind of option
        code, _, err = run_cli("ingest", str(GROK3), "-t", "acme", "-q", option, str(folder))
        assert code == 2, err
        said = " ".join(err.split())  # as wrapped to the terminal's width
        assert f"{option} {folder} is a directory" in said and f"--state-dir {folder}" in said
        assert not (tmp_path / "home" / "milvus.db").exists()

"""Inspect AI JSON logs (``--log-format json``, ``inspect log convert``) read sample by sample, as ``.eval`` logs are.

A JSON log had been parsed whole: 280 MB of peak memory for an 80 MB log, and a log of a long eval (GBs) more than a
machine has. Its samples are now streamed (memory: one sample), each with the ``eval`` header Inspect writes before
them. The logs here are the real ``agent-demo.json.gz`` (tests/fixtures/inspect-ai/.r28, see its README.md), scaled,
reordered or damaged.
"""

from __future__ import annotations

import gzip
import json
import math
import tracemalloc
import zipfile
from pathlib import Path

from adapter_support import read_with_peak, runs

from trajsearch.ingest.read import read_dump
from trajsearch.ingest.sources import ZipMembers

LOGS = Path(__file__).parent / "fixtures" / "inspect-ai" / ".r28"
AGENT_EVAL = LOGS / "agent-demo.eval"
AGENT_JSON = LOGS / "agent-demo.json.gz"


def _log() -> dict:
    return json.loads(gzip.decompress(AGENT_JSON.read_bytes()))


def _by_uuid(path: Path) -> dict[str, dict]:
    return {run.trajectory_id: run.model_dump() for run in runs(path)}


def _in_order(path: Path) -> list[tuple[str, str | None]]:
    """Each result's position and run id, in the order read: a sample given twice shows, as it does not by uuid."""
    return [(r.position, r.trajectory.trajectory_id if r.ok else r.error) for r in read_dump(path)]


def _scaled(path: Path, copies: int) -> Path:
    """The real log with its 8 samples repeated ``copies`` times, each copy its own run (id and uuid)."""
    log = _log()
    log["samples"] = [{**s, "id": f"{s['id']}-{n}", "uuid": f"{s['uuid']}-{n}"}
                      for n in range(copies) for s in log["samples"]]
    path.write_text(json.dumps(log, indent=2))
    return path


def test_a_big_json_log_is_detected_and_read_in_the_memory_of_one_sample(tmp_path):
    """An 8 MB log (160 samples), parsed whole by detection and again by the reader, had a peak of three times its
    size; detected by its header and streamed, a tenth of it (bound here: a fifth)."""
    path = _scaled(tmp_path / "big.json", 20)
    size = path.stat().st_size
    tracemalloc.start()
    try:
        read = sum(result.ok for result in read_dump(path))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert read == 160
    assert peak < size // 5, (peak, size)


def test_a_sample_nested_5000_deep_is_rejected_alone_in_the_memory_of_one_sample(tmp_path):
    """ijson's ``items`` builds a prefix string for every level it is in: 61 MB for this 0.4 MB log, and a sample
    100,000 levels deep exhausted the machine (review INSP29, finding 1), where a whole read stops at the limit.
    Read from the parser's basic events, that sample is refused (named by its id) and the others are kept."""
    log = _log()
    log["samples"][2]["metadata"] = {"deep": "DEEP"}
    path = tmp_path / "deep.json"
    path.write_text(json.dumps(log, indent=2).replace('"DEEP"', "[" * 5_000 + "]" * 5_000))
    results, peak = read_with_peak(path)
    [rejected] = [r for r in results if not r.ok]
    assert rejected.position == "sample notes epoch 1" and "nested deeper than" in rejected.error
    assert len(results) == 8 and peak < 5 * 2**20, peak


def test_a_header_nested_5000_deep_is_judged_and_read_in_little_memory(tmp_path):
    """Detection reads the header (fields before ``samples``) and the reader its ``eval``: through ijson's ``parse``
    and ``items``, 61 MB for this 0.4 MB log, where they now build nothing past the depth limit."""
    log = _log()
    log["eval"]["metadata"] = {"deep": "DEEP"}
    path = tmp_path / "deep.json"
    path.write_text(json.dumps(log, indent=2).replace('"DEEP"', "[" * 5_000 + "]" * 5_000))
    results, peak = read_with_peak(path)
    read = sum(result.ok for result in results)
    assert read == 8 and peak < 5 * 2**20, peak


def test_a_json_log_gives_the_runs_of_its_eval_archive():
    """The streamed read against the archive of the same eval (read member by member): every field of every run."""
    assert _by_uuid(AGENT_JSON) == _by_uuid(AGENT_EVAL)


def test_a_json_log_cut_short_keeps_the_samples_before_the_cut(tmp_path):
    """A copy that stopped, or a log whose writer was killed, had been one rejection: every sample lost."""
    text = gzip.decompress(AGENT_JSON.read_bytes())
    cut = tmp_path / "cut.json"
    cut.write_bytes(text[: len(text) * 3 // 5])
    results = list(read_dump(cut))
    kept = [r.trajectory for r in results if r.ok]
    [rejected] = [r for r in results if not r.ok]
    assert len(kept) == 4 and {r.model_id for r in kept} == {"mockllm/model"}
    archived = _by_uuid(AGENT_EVAL)
    assert all(archived[run.trajectory_id] == run.model_dump() for run in kept)
    assert rejected.position == "sample 5"
    assert rejected.error.startswith("4 samples of this Inspect AI JSON log read, the rest is lost: cut short")


def test_a_value_the_streaming_parser_refuses_costs_nothing(tmp_path):
    """A number past a float's range (``1e400``), which Python's json reads as infinity and ijson refuses ("numeric
    overflow"): the samples after it are read from the whole log, none lost and none twice. (NaN is streamed.)"""
    log = _log()
    log["samples"][2]["metadata"] = {"stderr": 0.5}
    path = tmp_path / "big.json"
    path.write_text(json.dumps(log, indent=2).replace('"stderr": 0.5', '"stderr": 1e400'))
    assert '"stderr": 1e400' in path.read_text()
    assert _by_uuid(path) == _by_uuid(AGENT_EVAL)
    assert _in_order(path) == _in_order(AGENT_JSON)


def test_nothing_after_the_samples_is_read(tmp_path):
    """Inspect repeats each sample's scores in ``reductions``, after the samples: one NaN there sent a streamed log to
    a whole read (its memory: three times the log's size), and a log cut there (its last ``}`` lost) had a rejection
    of a "sample 9" it never held (review INSP29, findings 2 and 5). The samples are all its runs."""
    path = _scaled(tmp_path / "nan.json", 20)
    log = json.loads(path.read_text())
    log["reductions"][0]["samples"][0]["value"] = math.nan
    path.write_text(json.dumps(log, indent=2))
    results, peak = read_with_peak(path)
    assert [r.position for r in results if not r.ok] == [] and len(results) == 160
    assert peak < path.stat().st_size // 2, peak  # whole: three times its size
    cut = tmp_path / "cut.json"
    cut.write_bytes(gzip.decompress(AGENT_JSON.read_bytes())[:-3])
    assert _in_order(cut) == _in_order(AGENT_JSON)


def test_the_eval_after_the_samples_still_names_each_run(tmp_path):
    """Inspect writes ``eval`` before ``samples`` (EvalLog's fields keep their order on purpose); a log rewritten
    with its keys in another order (``jq -S``: ``status`` after the samples) still gives each sample its model."""
    log = _log()
    reordered = {"samples": log.pop("samples"), **log}
    path = tmp_path / "reordered.json"
    path.write_text(json.dumps(reordered))
    assert _by_uuid(path) == _by_uuid(AGENT_EVAL)
    assert _in_order(path) == _in_order(AGENT_JSON)


def test_an_unzipped_archive_reads_each_sample_with_the_header_beside_it(tmp_path):
    """``unzip x.eval``: each sample had been read alone, without its eval's model, task and id (a 2024 sample,
    with no uuid, was refused: "read it from its log"); the header beside the samples gives them, as the archive
    does, also to a sample whose id holds a ``/`` (a folder below ``samples/``). Without a header, with the journal's
    start only (an eval still running), that gives them."""
    for archive in (LOGS / "log_message_deduplication.eval", LOGS / "log_formats.eval"):
        with zipfile.ZipFile(archive) as zipped:
            zipped.extractall(tmp_path / archive.stem)
        assert _by_uuid(tmp_path / archive.stem) == _by_uuid(archive), archive.name
    slashed = LOGS / "cybashbench-inspect-error.eval"  # a sample id holding "/": samples/<task>/<name>_epoch_1.json
    members = ZipMembers(slashed)
    for name in members.names:
        (tmp_path / slashed.stem / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / slashed.stem / name).write_bytes(members.read(name))
    assert _by_uuid(tmp_path / slashed.stem) == _by_uuid(slashed)
    running = tmp_path / "log_message_deduplication"
    (running / "header.json").unlink()
    assert _by_uuid(running) == _by_uuid(LOGS / "log_message_deduplication.eval")

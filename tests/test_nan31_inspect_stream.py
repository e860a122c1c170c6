"""Inspect AI JSON logs holding NaN and Infinity, and logs cut inside a string's escape, still streamed.

Inspect (0.3.2xx, ``ser_json_inf_nan="constants"``) writes every unscored sample's score as a bare ``NaN``, and the
metric it makes of them in ``results``, before the samples; ijson refuses the word, so such a log was read whole
(an 84 MB log: 303 MB peak against 43 MB streamed), and a copy of it cut short lost every sample, the whole read
failing. A cut inside a string's escape (``\\`` the last byte) was no "premature EOF" to ijson: the same. The logs
here are the real ``agent-demo.json.gz`` (tests/fixtures/inspect-ai/.r28, see its README.md), given the NaN scores
inspect-ai 0.3.285 writes for a scorer that returns ``float("nan")`` (nan_scorer in /tmp/p64/wt-aud2's generator),
scaled, placed across the parser's 64 KiB reads, or cut.
"""

from __future__ import annotations

import gzip
import json
import math
import re
from pathlib import Path

import pytest
from adapter_support import read_with_peak

from trajsearch.ingest.read import read_dump
from trajsearch.ingest.sources import _CHUNK as CHUNK

AGENT_JSON = Path(__file__).parent / "fixtures" / "inspect-ai" / ".r28" / "agent-demo.json.gz"
#: A message's text holding the words a bare value would be, and escapes: read as written, not as numbers.
SAID = 'score: NaN, "Infinity" \\ -Infinity; C:\\work\\'


def _nan_log(copies: int = 1) -> dict:
    """The real log as Inspect writes one whose ``nan_scorer`` scored no sample: a NaN score in every sample, NaN
    and Infinity in the metrics of ``results`` (before the samples), ``-Infinity`` in a sample's metadata; its
    samples repeated ``copies`` times, each copy its own run."""
    log = json.loads(gzip.decompress(AGENT_JSON.read_bytes()))
    log["results"]["scores"].insert(0, {"name": "nan_scorer", "scorer": "nan_scorer", "scored_samples": 0,
                                        "unscored_samples": 8, "params": {},
                                        "metrics": {"mean": {"name": "mean", "value": math.nan, "params": {}},
                                                    "stderr": {"name": "stderr", "value": math.inf, "params": {}}}})
    samples = []
    for n in range(copies):
        for sample in log["samples"]:
            scores = {"nan_scorer": {"value": math.nan, "explanation": "not measurable", "history": []},
                      **sample["scores"]}
            samples.append({**sample, "id": f"{sample['id']}-{n}", "uuid": f"{sample['uuid']}-{n}",
                            "scores": scores, "metadata": {**sample["metadata"], "low": -math.inf}})
    samples[1]["input"] = SAID
    log["samples"] = samples
    return log


def _write(path: Path, log: dict) -> bytes:
    text = json.dumps(log, indent=2).encode()
    path.write_bytes(text)
    return text


def _sample_start(text: bytes, n: int) -> int:
    """Where the ``n``-th sample (from 0) of a log written with ``indent=2`` starts."""
    return [m.start() for m in re.finditer(rb'\n    \{\n      "id": ', text)][n]


def _read(path: Path) -> list[tuple[str, object]]:
    """Each result's position, and its run (every field) or its error, in the order read."""
    return [(r.position, r.trajectory.model_dump() if r.ok else r.error) for r in read_dump(path)]


def _check_values(results: list[tuple[str, object]]) -> None:
    """What a whole read makes of the log's values: NaN kept as NaN in the sample's scores (no reward from it: the
    next scorer judges), the words in a sample's input as written."""
    runs = [run for _, run in results if isinstance(run, dict)]
    assert all(run["metadata"]["scored_by"] != "nan_scorer" for run in runs if "scored_by" in run["metadata"])
    assert all(math.isnan(run["metadata"]["scores"]["nan_scorer"]) for run in runs)
    assert runs[1]["task"] == SAID


def test_a_log_with_nan_scores_is_streamed_in_the_memory_of_one_sample(tmp_path):
    """160 samples, each with its NaN score, and NaN in the header's metrics, 8.2 MB: read whole, a peak of 23.5 MB,
    three times its size; streamed, 2.1 MB (a log without NaN: 1.9 MB). Bound here: a third of its size."""
    path = tmp_path / "nan.json"
    size = len(_write(path, _nan_log(copies=20)))
    results, peak = read_with_peak(path)
    assert len(results) == 160 and all(isinstance(run, dict) for _, run in _read(path))
    assert peak < size // 3, (peak, size)
    _check_values(_read(path))


def test_a_log_with_nan_scores_cut_short_keeps_the_samples_before_the_cut(tmp_path):
    """Cut in its fifth sample: the four before it kept, with their NaN and their words as written; the whole read
    it fell back to failed on the cut, every sample lost."""
    text = json.dumps(_nan_log(), indent=2).encode()
    whole = tmp_path / "whole.json"
    whole.write_bytes(text)
    cut = tmp_path / "cut.json"
    cut.write_bytes(text[:_sample_start(text, 4) + 30])
    kept, whole_runs = _read(cut), _read(whole)
    assert kept[:4] == whole_runs[:4]
    assert [position for position, _ in kept[4:]] == ["sample 5"]
    assert kept[4][1].startswith("4 samples of this Inspect AI JSON log read, the rest is lost: cut short")
    _check_values(kept)


@pytest.mark.parametrize("indent", [2, None], ids=["pretty", "one-line"])
@pytest.mark.parametrize("word", ["NaN", "-Infinity", '\\"', "\\\\"])
def test_a_word_or_an_escape_cut_by_the_parsers_read_is_read_whole(tmp_path, word, indent):
    """Each way the parser's 64 KiB read can cut a bare NaN or -Infinity (a score), or a string's escape (in a
    sample's input, with the words after it), read as if it were not cut: its NaN a NaN, the words in the string as
    written; in a log pretty-printed as Inspect writes it and in one written on one line, where no newline tells where
    strings end. The log is cut after its samples (in ``reductions``), which a streamed read never reads and a whole
    read fails on."""
    base = _nan_log()
    said = f"a {word[1]} b NaN, -Infinity" if word[0] == "\\" else SAID
    base["samples"][3]["input"] = said
    for split in range(1, len(word)):
        base["samples"][0]["metadata"]["pad"] = ""
        text = json.dumps(base, indent=indent).encode()
        before = {"NaN": b'"value": ', "-Infinity": b'"low": '}.get(word, b'"input": "a ')  # its key, bare
        at = text.index(before + word.encode(), text.index(b'"id": "sum-0"')) + len(before)  # in the 4th sample
        boundary = -(-(at + split) // CHUNK) * CHUNK  # the first the word can be moved to (by a pad before it)
        base["samples"][0]["metadata"]["pad"] = "x" * (boundary - split - at)
        text = json.dumps(base, indent=indent).encode()
        assert text[boundary - split:boundary - split + len(word)] == word.encode()
        cut = tmp_path / f"cut-{split}.json"
        cut.write_bytes(text[:-3])
        results = _read(cut)
        assert len(results) == 8 and results[3][1]["task"] == said, split
        _check_values(results)


def test_a_log_cut_inside_an_escape_keeps_the_samples_before_the_cut(tmp_path):
    """A cut right after a ``\\`` (a Windows path, a quote in a message) is a lexical error to ijson, not its
    "premature EOF": the log was read whole, and failed. Now a cut like any other: the samples before it kept."""
    text = json.dumps(_nan_log(), indent=2).encode()
    escape = text.index(b"\\", _sample_start(text, 4))
    cut = tmp_path / "cut.json"
    cut.write_bytes(text[:escape + 1])
    results = _read(cut)
    assert [isinstance(run, dict) for _, run in results] == [True] * 4 + [False]
    assert results[4][1].startswith("4 samples of this Inspect AI JSON log read, the rest is lost: cut short")


@pytest.mark.parametrize("ensure_ascii", [True, False], ids=["escaped", "raw"])
def test_a_string_that_looks_like_the_stand_in_for_nan_stays_a_string(tmp_path, ensure_ascii):
    """The stream stands a bare NaN in as a string that is mapped back to the float: a sample whose input or id is
    that string as a log may hold it (U+FDD0, then the word; written ``\\ufdd0`` or raw) is still text, as a whole
    read gives it, not a NaN (review NAN31, finding 2: the sample had no task, its id was "inf")."""
    log = _nan_log()
    log["samples"][2]["input"] = "\ufdd0NaN"
    log["samples"][3]["id"] = "\ufdd0-Infinity"
    path = tmp_path / "marked.json"
    path.write_text(json.dumps(log, indent=2, ensure_ascii=ensure_ascii), encoding="utf-8")
    results = _read(path)
    assert [position for position, run in results if not isinstance(run, dict)] == []
    _check_values(results)
    assert results[2][1]["task"] == "\ufdd0NaN"
    assert results[3][1]["task_id"] == "\ufdd0-Infinity"


def test_a_word_run_into_damage_is_no_sample(tmp_path):
    """``NaNny`` in the list of samples is damage, not a NaN followed by garbage: no rejection of a "sample 3" the
    log never held (review NAN31, finding 5), only the two samples before it and the whole read's naming of it."""
    text = json.dumps(json.loads(gzip.decompress(AGENT_JSON.read_bytes())), indent=2).encode()
    at = _sample_start(text, 2)
    path = tmp_path / "damaged.json"
    path.write_bytes(text[:at] + b"\n    NaNny," + text[at:])
    results = _read(path)
    assert [position for position, _ in results] == ["sample count epoch 1", "sample crash epoch 1", "file"]
    assert results[2][1].startswith("malformed JSON")

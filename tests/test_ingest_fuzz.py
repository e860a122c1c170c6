"""Fuzzing the file readers: no input stops a batch, every rejection says why, every valid record lands.

Seeded and bounded (hypothesis, derandomized; ``$TRAJSEARCH_FUZZ_EXAMPLES`` examples per test,
default 40). Real files: every fixture format, mutated; and native JSONL where good records are
mixed with adversarial lines.
"""

from __future__ import annotations

import json
import os
import random
from pathlib import Path

from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from trajsearch.ingest.adapters import FORMATS
from trajsearch.ingest.read import read_dump

from conftest import make_run

EXAMPLES = int(os.environ.get("TRAJSEARCH_FUZZ_EXAMPLES", "40"))
FUZZ = settings(max_examples=EXAMPLES, derandomize=True, deadline=None,
                suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
FIXTURES = Path(__file__).parent / "fixtures"
SAMPLES = sorted(p for p in FIXTURES.rglob("*") if p.is_file() and p.suffix in (".json", ".jsonl", ".traj")
                 and p.stat().st_size < 200_000)

#: A record whose arguments nest deeper than a record may.
DEEP = '{"trajectory_id": "x", "task": "t", "steps": [{"index": 0, "arguments": ' + "[" * 100 + "]" * 100 + "}]}"
json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-2**70, 2**70) | st.floats(allow_nan=False) | st.text(max_size=40),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=12), inner, max_size=4),
    max_leaves=20,
)
odd_lines = st.one_of(
    json_values.map(lambda v: json.dumps(v)),
    st.binary(max_size=80).map(lambda b: b.decode("latin-1")),
    st.integers(50, 3000).map(lambda n: "[" * n + "]" * n),
    st.just(DEEP),
    st.just('{"trajectory_id": "bad id!", "task": "t"}'),
    st.just('{"trajectory_id": "y", "task": "' + "x" * 30_000 + '"}'),
)


def _read_all(path: Path, fmt: str | None = None) -> list:
    try:
        return list(read_dump(path, fmt=fmt))
    except (ValueError, FileNotFoundError) as exc:  # an undetectable single file: refused up front, with the file named
        assert str(path.name) in str(exc) or "format" in str(exc)
        return []


@FUZZ
@given(lines=st.lists(odd_lines, min_size=1, max_size=6), seed=st.integers(0, 2**16))
@example(lines=["{"], seed=0)  # a lone "{" opened a pretty-printed record that took the whole lines after it
@example(lines=[DEEP, "{", "null", "", DEEP, "null"], seed=3)  # opening "{" then "null": one malformed document
def test_good_records_land_whatever_lines_surround_them(tmp_path_factory, lines, seed) -> None:
    rng = random.Random(seed)
    good = [make_run(f"run-{n}", tenant="default").model_dump_json(exclude={"tenant"}) for n in range(3)]
    mixed = lines + good
    rng.shuffle(mixed)
    dump = tmp_path_factory.mktemp("fuzz") / "runs.jsonl"
    dump.write_text("\n".join(line.replace("\n", " ") for line in mixed) + "\n", encoding="utf-8", errors="replace")
    parsed = list(read_dump(dump, fmt="native"))
    landed = {p.trajectory.trajectory_id for p in parsed if p.ok}
    assert {"run-0", "run-1", "run-2"} <= landed
    for p in parsed:
        assert p.ok or (isinstance(p.error, str) and p.error.strip() and p.position)


@FUZZ
@given(sample=st.sampled_from(SAMPLES), seed=st.integers(0, 2**32), cuts=st.integers(1, 6))
def test_mutated_real_files_never_raise(tmp_path_factory, sample, seed, cuts) -> None:
    """Real files of every format, with bytes flipped, cut or duplicated: a verdict per record, never a crash."""
    rng = random.Random(seed)
    data = bytearray(sample.read_bytes())
    for _ in range(cuts):
        at = rng.randrange(len(data) or 1)
        action = rng.choice(("flip", "cut", "dup", "truncate"))
        if action == "flip" and data:
            data[at] = rng.randrange(256)
        elif action == "cut":
            del data[at: at + rng.randrange(1, 200)]
        elif action == "dup":
            data[at:at] = data[at: at + rng.randrange(1, 200)]
        else:
            del data[at:]
    path = tmp_path_factory.mktemp("mut") / sample.name
    path.write_bytes(bytes(data))
    for fmt in (None, rng.choice(FORMATS)):
        for p in _read_all(path, fmt):
            assert p.ok or (isinstance(p.error, str) and p.error.strip())


@FUZZ
@given(value=json_values, fmt=st.sampled_from(FORMATS))
def test_any_json_value_under_any_format_is_a_verdict(tmp_path_factory, value, fmt) -> None:
    path = tmp_path_factory.mktemp("val") / "record.json"
    path.write_text(json.dumps(value))
    for p in _read_all(path, fmt):
        assert p.ok or (isinstance(p.error, str) and p.error.strip())

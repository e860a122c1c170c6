"""Values ingest must refuse, naming the field, because no page or filter could handle the run after
(probe D, round 40: D2 and D3). The records are the bundled sample's first real tau-bench run
(``trajsearch/samples/sample.jsonl``) with one field set to the value the probe sent over ``Ingest``.
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from trajsearch.cli import SAMPLE

from cli_support import backend, run_cli  # noqa: F401 (fixture)

#: (field, value, what the refusal says) as the probe's records held them (out_g4.txt, out_g11.txt)
REFUSED = [
    ("env_version", "v\u0000x", "env_version 'v\\x00x' contains control characters"),
    ("env_version", "v2\t", "env_version 'v2\\t' contains control characters"),
    ("task_family", "fam\u0000ily", "task_family 'fam\\x00ily' contains control characters"),
    ("policy_version", "p\u001b[31m", "policy_version 'p\\x1b[31m' contains control characters"),
    ("model_id", "gpt\u0000-4o", "model_id 'gpt\\x00-4o' contains control characters"),
    ("tools_available", ["bash\n"], "tools_available 'bash\\n' contains control characters"),
    ("created_at", "0001-01-01T00:00:00+01:00", "0001-01-01T00:00:00+01:00 is outside the years 1 to 9999 in UTC"),
    ("created_at", "0001-01-01T00:00:00+14:00", "0001-01-01T00:00:00+14:00 is outside the years 1 to 9999 in UTC"),
    ("created_at", "9999-12-31T23:59:59-12:00", "9999-12-31T23:59:59-12:00 is outside the years 1 to 9999 in UTC"),
]


def sample_record() -> dict:
    with open(SAMPLE, encoding="utf-8") as fh:
        return {**json.loads(fh.readline()), "tenant": "acme"}  # the CLI's tenant on both backends


def test_ingest_refuses_values_no_filter_or_page_can_handle_naming_the_field(backend, tmp_path):  # noqa: F811
    """Bug (probe D, D3): ``env_version "v\\x00x"``, ``"v2\\t"``, a task family with NUL, a policy version
    with ESC, a model id with NUL and a tool ``"bash\\n"`` were ingested, then every filter naming them was
    refused ("contains control characters"): such runs could never be selected. D2: a ``created_at``
    outside the years 1 to 9999 in UTC was ingested, then every web page showing the run failed with
    "year 0 is out of range". Each is refused now, naming its field; the good records around them are kept."""
    base = sample_record()
    records = []
    for i, (name, value, _) in enumerate(REFUSED):
        records.append({**base, "trajectory_id": f"probe-bad-{i}", name: value})
    action = {**base, "trajectory_id": "probe-bad-action"}
    action["steps"] = [{**action["steps"][0], "action": "bash\n"}] + action["steps"][1:]
    records.append(action)
    records.append({**base, "trajectory_id": "probe-good", "env_version": 'quote "ok"',
                    "created_at": "0001-01-01T00:00:00-01:00"})  # year 1 in UTC too: a page can show it
    dump = tmp_path / "dump.jsonl"
    dump.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    code, out, err = run_cli("ingest", str(dump))
    text = " ".join((out + err).split())  # the report wraps long lines
    assert "ingested 1 runs" in text and f"rejected {len(REFUSED) + 1}" in text, text
    for name, _, said in REFUSED:
        assert f"field '{name}': {said}" in text, (name, text)
    assert "field 'steps[0].action': action 'bash\\n' contains control characters" in text
    code, out, err = run_cli("search", "reservation", "--env-version", 'quote "ok"')
    assert code == 0 and "probe-good" in out


def _traces_dir(backend_name: str, tmp_path) -> Path:
    return tmp_path / ("home/traces" if backend_name == "embedded" else "srv-traces")


def test_a_run_stored_before_these_rules_stays_readable(backend, tmp_path):  # noqa: F811
    """Review 2 (round 40, F4): the rules are ingest's, not the trace store's. A run a store took before them (its
    env_version with a TAB, a 234-character tool name, a tool call ``bash\\n``, a date of year 0 in UTC: here its
    stored trace rewritten as an older version wrote it) went dark: ``show`` said "not a valid trajectory", and
    export left it out. It is shown and exported as stored; ingesting such a run anew is still refused (above)."""
    record = {**sample_record(), "trajectory_id": "legacy-run"}
    dump = tmp_path / "dump.jsonl"
    dump.write_text(json.dumps(record) + "\n", encoding="utf-8")
    code, out, err = run_cli("ingest", str(dump))
    assert code == 0, out + err
    # the run's trace, not the store's .digest-key beside the tenants' folders
    [trace] = [p for p in _traces_dir(backend, tmp_path).rglob("*") if p.is_file() and not p.name.startswith(".")]
    stored = json.loads(gzip.decompress(trace.read_bytes()))
    stored.update(env_version="v2\t", tools_available=["mcp__" + "x" * 234], created_at="0001-01-01T00:00:00+01:00")
    stored["steps"][0]["action"] = "bash\n"
    trace.write_bytes(gzip.compress(json.dumps(stored).encode()))

    code, out, err = run_cli("show", "legacy-run", "--json")
    assert code == 0, err
    shown = json.loads(out)
    assert shown["env_version"] == "v2\t" and shown["steps"][0]["action"] == "bash\n"
    code, out, err = run_cli("export", "--query", "reservation", "--format", "jsonl", "--outcome", "failure",
                             "--outcome", "success", "--outcome", "unknown")
    assert code == 0, err
    assert [json.loads(line)["trajectory_id"] for line in out.splitlines() if line.strip()] == ["legacy-run"]


def test_a_reward_of_nan_or_infinity_is_no_reward_and_a_blank_task_no_task(tmp_path, monkeypatch):
    """Probe F, F8: Python's json writes NaN / Infinity; ``ingest --dry-run --json`` printed them (not JSON),
    while the store kept no reward. Now the run's reward is unknown everywhere, and the dry run says so in JSON.
    F7: a task of whitespace alone was taken (and its run could be a success found by nothing): refused."""
    for name, value in (("TRAJSEARCH_MODEL", "hashing"), ("TRAJSEARCH_HOME", str(tmp_path / "home")),
                        ("TRAJSEARCH_TENANT", "acme")):
        monkeypatch.setenv(name, value)
    monkeypatch.delenv("TRAJSEARCH_SERVER", raising=False)
    base = sample_record()
    records = [{**base, "trajectory_id": f"r{i}", "reward": value}
               for i, value in enumerate([float("nan"), float("inf"), 0.5])]
    records.append({**base, "trajectory_id": "blank", "task": " \n\t "})
    dump = tmp_path / "dump.jsonl"
    dump.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    code, out, err = run_cli("ingest", str(dump), "--dry-run", "--json")
    assert code == 3, err  # as the ingest will: one record rejected
    preview = json.loads(out, parse_constant=lambda name: pytest.fail(f"{name} is not JSON"))["files"][0]
    assert preview["runs"] == 3 and preview["rewards"] == [0.5]
    assert preview["first_rejection"] == "line 4: invalid trajectory: field 'task': the task is blank (whitespace only)"
    assert run_cli("ingest", str(dump))[0] == 3
    code, out, err = run_cli("show", "r0", "--json")
    assert code == 0 and json.loads(out)["reward"] is None

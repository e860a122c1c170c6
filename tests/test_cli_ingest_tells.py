"""``ingest`` in a log (stderr no terminal, as under cron or CI): progress lines instead of a bar that is never
drawn, so a stuck job can be told from a slow one (probe E, round 40: 90 s of a nightly log showed nothing).
The dump is the bundled sample's real tau-bench runs under the CLI's tenant."""

from __future__ import annotations

import json
import re
from pathlib import Path

from trajsearch.cli import SAMPLE

from cli_support import run_cli


def _dump(tmp_path: Path) -> Path:
    records = [{**json.loads(line), "tenant": "acme"} for line in Path(SAMPLE).read_text().splitlines()]
    dump = tmp_path / "batch.jsonl"
    dump.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return dump


def _local_store(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("TRAJSEARCH_MODEL", "hashing")
    monkeypatch.delenv("TRAJSEARCH_SERVER", raising=False)
    monkeypatch.setenv("TRAJSEARCH_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("TRAJSEARCH_URI", str(tmp_path / "home" / "milvus.db"))
    monkeypatch.setenv("TRAJSEARCH_TRACES", str(tmp_path / "home" / "traces"))
    monkeypatch.setenv("TRAJSEARCH_TENANT", "acme")


def test_ingest_into_a_log_says_how_far_it_is(tmp_path, monkeypatch):
    _local_store(tmp_path, monkeypatch)
    dump = _dump(tmp_path)
    code, out, err = run_cli("ingest", str(dump), "--log-every", "0")
    assert code == 0, out + err
    lines = re.findall(r"ingesting: ([\d.]+) of ([\d.]+) MB read, (\d+) runs written, \d+:\d\d:\d\d elapsed", err)
    assert lines, err
    size = f"{dump.stat().st_size / 1e6:.1f}"
    assert {total for _, total, _ in lines} == {size}
    written = [int(runs) for _, _, runs in lines]
    assert written == sorted(written) and written[-1] == 23  # the sample's runs, all committed by the last line


def test_quiet_ingest_prints_no_progress(tmp_path, monkeypatch):
    _local_store(tmp_path, monkeypatch)
    code, out, err = run_cli("ingest", str(_dump(tmp_path)), "--log-every", "0", "--quiet")
    assert code == 0, out + err
    assert "ingesting:" not in err and "read 23: ingested 23 runs" in " ".join(out.split())


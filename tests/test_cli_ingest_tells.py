"""``ingest`` in a log (stderr no terminal, as under cron or CI): progress lines instead of a bar that is never
drawn, so a stuck job can be told from a slow one (probe E, round 40: 90 s of a nightly log showed nothing).
The dump is the bundled sample's real tau-bench runs under the CLI's tenant."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

from trajsearch.cli import SAMPLE

FIXTURES = Path(__file__).parent / "fixtures"
BATCH = FIXTURES / "mini-swe-agent" / ".real" / "batch-2.4.6"  # two real mini-swe-agent 2.4.6 runs, a folder each

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
    lines = re.findall(r"ingesting: ([\d.]+) of ([\d.]+) MB done, (\d+) runs written, \d+:\d\d:\d\d elapsed", err)
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



def _batch_with_a_cut_run(tmp_path: Path) -> tuple[Path, list[Path], Path]:
    """The real batch under a path as long as a CI checkout's, and one run cut short (an interrupted copy)."""
    root = tmp_path / "ci-builds" / "nightly-evaluation-2026-01-05" / "mini-swe-agent-dev" / "deepseek_chat_dev"
    shutil.copytree(BATCH, root)
    whole = sorted(root.glob("*/*.traj.json"))
    cut = root / "demo__greet-99" / "demo__greet-99.traj.json"
    cut.parent.mkdir()
    cut.write_bytes(whole[0].read_bytes()[:3000])
    return root, whole, cut


def test_a_dry_run_into_a_pipe_says_each_file_on_its_own_line(tmp_path, monkeypatch):
    """Probe E, E5: ``ingest --dry-run | less`` (or in CI) got a table squeezed into 80 columns, one word per line,
    the file cut to ``…43/…``: which file a row was about could not be told. Each file is now a line naming it whole,
    and a rejection is one line with its file and cause."""
    _local_store(tmp_path, monkeypatch)
    root, whole, cut = _batch_with_a_cut_run(tmp_path)
    code, out, err = run_cli("ingest", str(root), "--dry-run")
    assert code == 3, out + err
    lines = out.splitlines()
    for path in whole:
        [line] = [line for line in lines if line.startswith(f"{path}: ")]
        assert line.startswith(f"{path}: format mini-swe-agent; runs 1; rejected 0; steps "), line
    [rejected] = [line for line in err.splitlines() if "rejected" in line]
    assert rejected.startswith(f"  rejected {cut}, ") and "Unterminated string" in rejected, err


def test_an_ingest_into_a_log_says_each_rejection_on_one_line(tmp_path, monkeypatch):
    _local_store(tmp_path, monkeypatch)
    root, _, cut = _batch_with_a_cut_run(tmp_path)
    code, out, err = run_cli("ingest", str(root))
    assert code == 3, out + err
    assert out.splitlines()[0].startswith("read 3: ingested 2 runs ("), out
    [rejected] = [line for line in err.splitlines() if "rejected" in line and "Unterminated string" in line]
    assert rejected.startswith(f"  rejected {cut}:file: "), err

"""Round 44's probe F read through the public reader and the CLI: several ATIF trajectories in one file (F1),
oversized step arguments (F3).

The ATIF fixtures (``fixtures/atif/.real/several-per-file``, see its SOURCE.md) are real ATIF documents in the
shape a multi-run exporter writes them.
"""

from __future__ import annotations

import json
from pathlib import Path

from trajsearch.ingest.detect import detect_format
from trajsearch.ingest.read import read_dump

from adapter_support import only
from cli_support import run_cli

FIXTURES = Path(__file__).parent / "fixtures"
ATIF = FIXTURES / "atif" / ".real"
SEVERAL = ATIF / "several-per-file"
ALONE = [ATIF / "openagents-qa-login" / "trajectory.json", ATIF / "nemo-relay" / "trajectory.json"]


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
    assert [(p.position, p.error) for p in parsed] == [("record 1", None), ("record 2", None)]
    for p, alone in zip(parsed, ALONE):
        assert _same_run(p.trajectory, only(alone, tenant="acme"))
    assert len({p.trajectory.trajectory_id for p in parsed}) == 2


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

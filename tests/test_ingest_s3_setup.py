"""Probe G (G2): an ingest into a missing S3 bucket fails at once, saying the bucket does not exist and what mends it.

Each trace put was retried 4 times (NoSuchBucket is no transient error), and the advice was to rerun the same
command, which fails the same way. The S3 server is real (moto's server mode on loopback, see test_traces); the
input real tau-bench results (tests/fixtures/tau-bench/.real).
"""

from __future__ import annotations

from pathlib import Path

from cli_support import run_cli
from test_traces import s3_endpoint  # noqa: F401 - the fixture

TAU = Path(__file__).parent / "fixtures" / "tau-bench" / ".real" / \
    "tool-calling-gpt-oss-20B-1.0_range_0--1_user-Gemma-3-12B-llm_1007041735.json"


def test_a_missing_bucket_is_named_with_its_endpoint_and_not_retried(tmp_path: Path, monkeypatch, s3_endpoint) -> None:  # noqa: F811
    for name, value in (("TRAJSEARCH_MODEL", "hashing"), ("TRAJSEARCH_HOME", str(tmp_path / "home")),
                        ("TRAJSEARCH_URI", str(tmp_path / "home" / "milvus.db")),
                        ("TRAJSEARCH_S3_ENDPOINT", s3_endpoint)):
        monkeypatch.setenv(name, value)
    monkeypatch.delenv("TRAJSEARCH_SERVER", raising=False)
    code, out, err = run_cli("ingest", str(TAU), "-t", "acme", "-q", "--traces", "s3://nobucket/x")
    said = " ".join(err.split())
    assert code == 1, err
    assert f"bucket nobucket does not exist at {s3_endpoint}" in said and "create it" in said and "S3 put_object on s3://nobucket/" in said
    assert "retrying" not in said and "rerun the same command" not in said

"""What a command's process imports and loads before it answers: a command's ``--help`` needs no model, store or
server library; ``show`` and ``stats`` open the store with its embedder (the collection checks the model's name and
dimension) but embed nothing, so the model itself (ONNX Runtime and its session, ~0.4 s of their start) is not
loaded; ``search`` embeds its query and loads it. Checked on ``sys.modules`` of the real CLI process at its exit:
behaviour, not timing (scripts/bench_startup.py times it)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from process_support import cli_env
from trajsearch.cli import SAMPLE

HEAVY = ("torch", "sentence_transformers", "onnxruntime", "pymilvus", "milvus_lite", "grpc", "fastapi", "uvicorn",
         "starlette", "mcp", "pandas", "pyarrow")

#: runs the CLI as ``python -m trajsearch.cli`` does and says, at exit, which of HEAVY it imported
_PROBE = """\
import atexit, json, sys
heavy = json.loads(sys.argv.pop(1))
atexit.register(lambda: sys.stderr.write("IMPORTED " + json.dumps([m for m in heavy if m in sys.modules]) + "\\n"))
sys.argv[0] = "trajsearch"
from trajsearch.cli import main
main()
"""


def _imported(env: dict[str, str], *args: str) -> list[str]:
    result = subprocess.run([sys.executable, "-c", _PROBE, json.dumps(HEAVY), *args], env=env, capture_output=True,
                            text=True, timeout=600)
    assert result.returncode == 0, result.stderr
    line = [l for l in result.stderr.splitlines() if l.startswith("IMPORTED ")][-1]
    return json.loads(line.removeprefix("IMPORTED "))


def test_help_of_every_command_imports_no_model_store_or_server(tmp_path: Path) -> None:
    env = cli_env(TRAJSEARCH_HOME=str(tmp_path))
    for args in (["--help"], ["search", "--help"], ["show", "--help"], ["ingest", "--help"], ["serve", "--help"],
                 ["mcp", "--help"], ["keys", "--help"]):
        assert _imported(env, *args) == [], args


def test_show_and_stats_open_the_store_without_loading_the_model(tmp_path: Path) -> None:
    dump = tmp_path / "one.jsonl"
    dump.write_text(SAMPLE.read_text().splitlines()[0] + "\n")
    run = json.loads(dump.read_text())["trajectory_id"]
    env = cli_env(TRAJSEARCH_HOME=str(tmp_path / "home"))
    env.pop("TRAJSEARCH_MODEL")  # the default model, as a user's store has it
    ingest = subprocess.run([sys.executable, "-m", "trajsearch.cli", "ingest", str(dump), "-t", "demo", "-q"],
                            env=env, capture_output=True, text=True, timeout=600)
    assert ingest.returncode == 0, ingest.stderr
    for args in (["show", run, "-t", "demo"], ["stats", "-t", "demo"]):
        imported = _imported(env, *args)
        assert "pymilvus" in imported and "onnxruntime" not in imported and "torch" not in imported, (args, imported)
    assert "onnxruntime" in _imported(env, "search", "flight", "-t", "demo")  # the query is embedded

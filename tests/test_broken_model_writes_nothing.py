"""A broken model file (a truncated or garbage ``.onnx`` in the model cache) stops ``ingest`` and ``serve`` before
they create or write anything: the model is made lazily, at the first embedding (``show`` and ``stats`` never
embed), so an ingest had opened the store, written its checkpoint and an empty dead-letter file, and a server had
created its collection, before the model's error. The commands that will embed make it first (``TrajSearch.open(...,
warm=True)``), as they did when every open made it. Real CLI processes, a real ONNX Runtime refusing the file."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from process_support import cli_env
from trajsearch.cli import SAMPLE


def _broken_model_env(tmp_path: Path, monkeypatch) -> dict[str, str]:  # type: ignore[no-untyped-def]
    """The default model, its exported ``.onnx`` (where a first run caches it) garbage."""
    from trajsearch.embed.onnx_runtime import cached_onnx_path

    cache = tmp_path / "cache"
    monkeypatch.setenv("TRAJSEARCH_CACHE", str(cache))
    onnx = cached_onnx_path()
    onnx.parent.mkdir(parents=True)
    onnx.write_bytes(b"not a model\n")
    env = cli_env(TRAJSEARCH_HOME=str(tmp_path / "home"), TRAJSEARCH_CACHE=str(cache))
    env.pop("TRAJSEARCH_MODEL")
    return env


def _cli(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "trajsearch.cli", *args], env=env, capture_output=True, text=True,
                          timeout=600)


def _written(home: Path) -> list[str]:
    return sorted(str(p.relative_to(home)) for p in home.rglob("*") if p.is_file()) if home.exists() else []


def test_ingest_with_a_broken_model_fails_before_its_checkpoint_or_the_store(tmp_path: Path, monkeypatch) -> None:
    env = _broken_model_env(tmp_path, monkeypatch)
    home = Path(env["TRAJSEARCH_HOME"])
    done = _cli(env, "ingest", str(SAMPLE), "-t", "demo", "-q")
    assert done.returncode == 1 and "Protobuf parsing failed" in done.stderr, done.stderr
    assert _written(home) == []  # no checkpoint, dead-letter file nor store
    # with workers, the store's one milvus-lite server is started (its lock file taken) before the model is made
    done = _cli(env, "ingest", str(SAMPLE), "-t", "demo", "-q", "--workers", "2")
    assert done.returncode == 1 and "Protobuf parsing failed" in done.stderr, done.stderr
    assert _written(home) == ["milvus.db/LOCK"]


def test_serve_with_a_broken_model_fails_before_creating_the_store(tmp_path: Path, monkeypatch) -> None:
    env = _broken_model_env(tmp_path, monkeypatch)
    keys = tmp_path / "keys.toml"
    made = _cli(env, "keys", "new", "--tenant", "demo", "--append", str(keys))
    assert made.returncode == 0, made.stderr
    served = _cli(env, "serve", "--keys", str(keys), "--address", "127.0.0.1:0")
    assert served.returncode == 1 and "cannot open the index (InvalidProtobuf)" in served.stderr, served.stderr
    assert _written(Path(env["TRAJSEARCH_HOME"])) == []

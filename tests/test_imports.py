"""The light entry points stay light: the gRPC client needs no Milvus, numpy or model."""

from __future__ import annotations

import subprocess
import sys


def _loaded_after(statement: str) -> set[str]:
    code = f"import sys; {statement}; print('\\n'.join(sorted(sys.modules)))"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=600, check=True)
    return set(done.stdout.split())


def test_client_imports_no_pymilvus_and_no_numpy() -> None:
    loaded = _loaded_after("import trajsearch.client")
    heavy = {m for m in loaded if m.split(".")[0] in ("pymilvus", "numpy", "torch", "onnxruntime", "milvus_lite")}
    assert not heavy, sorted(heavy)[:10]
    assert "trajsearch.results" in loaded


def test_the_facade_is_the_package_front_door() -> None:
    loaded = _loaded_after("from trajsearch import TrajSearch; assert TrajSearch.__name__ == 'TrajSearch'")
    assert "trajsearch.search" in loaded

"""Every benchmark and evaluation script under ``scripts/`` starts: ``--help`` exits 0 with its usage.

The scripts are how speed and quality claims are checked (README's figures), but nothing else runs them: one
imported a private helper of ``trajsearch.search`` that a clean-up removed, and ``scripts/eval_exact.py`` failed with
an ImportError for a whole session before anyone noticed. ``--help`` imports everything a script imports (its
heavy work comes after argument parsing) in a few seconds.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).parents[1]
#: the runnable ones (a data module such as ``failure_corpus.py`` is imported by a script, not run)
SCRIPTS = sorted(p for p in (ROOT / "scripts").glob("*.py") if '__name__ == "__main__"' in p.read_text())


def test_the_scripts_folder_holds_the_benchmarks() -> None:
    assert {"bench_hybrid.py", "eval_exact.py", "eval_generalise.py", "eval_runtime.py"} <= {p.name for p in SCRIPTS}


@pytest.mark.parametrize("script", SCRIPTS, ids=lambda p: p.name)
def test_a_script_starts_and_explains_itself(script: Path) -> None:
    done = subprocess.run([sys.executable, str(script), "--help"], cwd=ROOT, capture_output=True, text=True,
                          timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "usage" in done.stdout.lower(), done.stdout[:500]

"""Round 27 (R11X): a summary says where a class lives even when the file's first names crowd it out.

A run's reads of a big module show one class's methods first. gemini-3-pro's run of SWE-bench Verified
``django__django-15499`` (real steps, ``tests/fixtures/.r11x/``) saw ``class RenameModel`` in
``django/db/migrations/operations/models.py`` as the 23rd name there; a summary listed the first 16, so no summary of the
tenant said where ``RenameModel`` lives and ``django__django-14999`` ("RenameModel with db_table should be a noop") had no
home for it: its relevant run came 12th.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from trajsearch.runtime import AdviceConfig, NoveltyConfig, Runtime, RuntimeConfig, RuntimeContext

from conftest import BASE_TIME, make_run

READS = json.loads((Path(__file__).parent / "fixtures" / ".r11x" / "django-15499-reads.json").read_text())
MODELS = "django/db/migrations/operations/models.py"
QUERY = ("RenameModel with db_table should be a noop.\nDescription\n\t\nA RenameModel operation that already has db_table "
         "defined must be a noop.\nIn Postgres, it drops and recreates foreign key constraints. In sqlite it recreates "
         "the table (as expected for a table renaming).")


def _reader() -> object:
    """The real run's reads, then the change it handed in (a ``git diff`` of the file it fixed)."""
    diff = f"diff --git a/{MODELS} b/{MODELS}\n--- a/{MODELS}\n+++ b/{MODELS}\n@@ -1 +1 @@\n-a\n+b\n"
    steps = [("bash", {"command": s["command"]}, s["output"]) for s in READS["steps"]]
    return make_run("reader", task_id="django-15499", task=READS["task"],
                    steps=[*steps, ("bash", {"command": "git diff"}, diff)])


def _defined_in_summary(ts, run_id: str) -> dict[str, list[str]]:
    """File -> the names its summary lists as defined there, in order (a file's extra names come in a later entry)."""
    hit = ts.run(run_id, tenant="acme", level="summary")
    listed = re.search(r"definitions read (.*?)\.(?:\n|$)", hit.text)
    assert listed, hit.text
    defined: dict[str, list[str]] = {}
    for path, _, names in (e.partition(": ") for e in listed.group(1).split(", ")):
        defined.setdefault(path, []).extend(names.split())
    return defined


def _cat(path: str, source: str) -> tuple[str, dict[str, str], str]:
    return ("bash", {"command": f"cat {path}"}, source)


def test_a_class_seen_after_a_files_first_names_is_still_listed(hashing_ts):
    hashing_ts.add([_reader()])
    names = _defined_in_summary(hashing_ts, "reader")[MODELS]
    assert "RenameModel" in names, names
    assert names[:3] == ["_check_for_duplicates", "ModelOperation", "name_lower"]  # the first seen still lead


def test_the_class_a_task_names_says_where_its_work_lies(hashing_ts):
    """The run that read ``class RenameModel`` changed its file: ``where`` is 1 for it (0 while the summary hid it)."""
    hashing_ts.add([_reader(), make_run("other", task_id="other", task="RenameModel db_table noop sqlite schema")])
    open_gate = RuntimeConfig(advice=AdviceConfig(novelty=NoveltyConfig(0.0, 0.0, per_tenant=False)))  # hashing vectors
    found = Runtime(hashing_ts, open_gate).exemplars(QUERY, RuntimeContext(tenant="acme", now=BASE_TIME), k=3)
    reader = next(e for e in found.items if e.trajectory_id == "reader")
    assert reader.features.get("where") == 1.0, reader.features


def test_past_a_files_first_names_only_camel_case_names_are_listed_and_16_at_most(hashing_ts):
    """20 functions, 2 settings, then 40 classes: the first 16 functions, then 16 classes; no later function or
    setting."""
    source = "".join(f"def helper_{i:02}():\n    pass\n" for i in range(20)) + "MAX_SIZE = 1\nMIN_SIZE = 2\n" + "".join(
        f"class Shape{i:02}:\n    pass\n" for i in range(40))
    hashing_ts.add([make_run("big", steps=[_cat("pkg/shapes.py", source)])])
    names = _defined_in_summary(hashing_ts, "big")["pkg/shapes.py"]
    assert names == [f"helper_{i:02}" for i in range(16)] + [f"Shape{i:02}" for i in range(16)], names


def test_a_clipped_line_drops_extra_names_before_a_later_files_first_names(hashing_ts):
    """12 big modules of 40 classes each: their first 16 names fit the summary's clip, the extras do not; the last
    module's first names must survive the clip (listed per file, they were cut for the first modules' extras)."""
    steps = [_cat(f"pkg/mod{f:02}.py", "".join(f"class C{f:02}a{i:02}:\n    pass\n" for i in range(40)))
             for f in range(12)]
    hashing_ts.add([make_run("wide", steps=steps)])
    summary = hashing_ts.run("wide", tenant="acme", level="summary").text
    assert " … " in summary or summary.rstrip().endswith("…"), summary  # the line was clipped
    assert "pkg/mod11.py: " + " ".join(f"C11a{i:02}" for i in range(16)) in summary, summary

"""Round 23, GEN4: of the rows holding a pasted line, those holding it as pasted, its blanks too, come first.

Rows are found holding a query whitespace-normalised (``FusionConfig.verbatim_rows``); a diff's line at another indent
is another hunk's, yet held so. The two outputs below are cut from one real run (../shared/data/mini-swe-agent-dev,
deepseek_chat_dev/sqlfluff__sqlfluff-1763): the agent's first patch, at 16 blanks, and the diff of its last, at 20.
``scripts/eval_generalise.py`` sampled the 20-blank line and found the first patch's row (round 23: 2 of the 7
exact lines of outputs it missed in hybrid were such rows).
"""

from __future__ import annotations

import pytest

from conftest import make_run

FIRST_PATCH = """+            except Exception:
+                # Clean up temp file if it exists
+                if tmp_name and os.path.exists(tmp_name):"""
LAST_DIFF = """+                    return True
+                except Exception:
+                    # Clean up temp file if it exists
+                    if tmp_name and os.path.exists(tmp_name):
+                        os.unlink(tmp_name)
+                    raise"""
PASTED = "+                    if tmp_name and os.path.exists(tmp_name):"


@pytest.mark.parametrize("mode", ["lexical", "hybrid", "auto"])
def test_a_row_holding_the_line_with_its_indent_comes_first(hashing_ts, mode: str) -> None:
    hashing_ts.add([make_run("first-patch", steps=[("bash", {"command": "git diff"}, FIRST_PATCH)]),
                    make_run("last-diff", steps=[("bash", {"command": "git diff"}, LAST_DIFF)])])
    hits = hashing_ts.search(PASTED, tenant="acme", levels=["step"], k=2, mode=mode)
    assert [hit.trajectory_id for hit in hits] == ["last-diff", "first-patch"]
    assert all(hit.verbatim for hit in hits)  # both hold it whitespace-normalised: the second stays a verbatim row

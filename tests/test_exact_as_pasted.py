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
+                if tmp_name and os.path.exists(tmp_name):
+                    os.unlink(tmp_name)"""
LAST_DIFF = """+                    return True
+                except Exception:
+                    # Clean up temp file if it exists
+                    if tmp_name and os.path.exists(tmp_name):
+                        os.unlink(tmp_name)
+                    raise"""
PASTED = "+                    if tmp_name and os.path.exists(tmp_name):"


@pytest.mark.parametrize("mode", ["lexical", "hybrid", "auto"])
@pytest.mark.parametrize("pasted", [PASTED, PASTED[1:]])  # the diff's line; the file's, its indent leading (FRGEN4)
def test_a_row_holding_the_line_with_its_indent_comes_first(hashing_ts, mode: str, pasted: str) -> None:
    hashing_ts.add([make_run("first-patch", steps=[("bash", {"command": "git diff"}, FIRST_PATCH)]),
                    make_run("last-diff", steps=[("bash", {"command": "git diff"}, LAST_DIFF)])])
    hits = hashing_ts.search(pasted, tenant="acme", levels=["step"], k=2, mode=mode)
    assert [hit.trajectory_id for hit in hits] == ["last-diff", "first-patch"]
    assert all(hit.verbatim for hit in hits)  # both hold it whitespace-normalised: the second stays a verbatim row


#: ``python -m pip list`` (pip 26.3) in this project's venv, cut to its header and four packages: pip aligns its columns
#: with runs of blanks.
PIP_LIST = """Package                            Version          Editable project location
---------------------------------- ---------------- -------------------------
grpcio                             1.85.3
numpy                              2.4.6
pandas                             3.1.1
pytest                             9.2.0"""
NOTE = ("The tests fail at import time. I checked the environment first: numpy 2.4.6 is installed, so the error must "
        "come from the pandas build, which was compiled against an older release; next I will read the traceback.")


@pytest.mark.parametrize("mode", ["lexical", "hybrid", "auto"])
def test_a_typed_line_has_no_blanks_to_match_and_ranks_by_score(hashing_ts, mode: str) -> None:
    """Bug (FRGEN4): a line typed, or copied from a page that collapses blanks, has one blank between words, so a row
    holding it single-spaced came first as 'as pasted' and the ``pip list`` row it names came second; a paste laid
    out as ``pip list`` lays it out still finds that row first."""
    hashing_ts.add([make_run("pip-list", steps=[("bash", {"command": "python -m pip list"}, PIP_LIST)]),
                    make_run("note", steps=[("think", {"thought": NOTE}, "")])])
    for query in ("numpy 2.4.6", "numpy                              2.4.6"):
        hits = hashing_ts.search(query, tenant="acme", levels=["step"], k=2, mode=mode)
        assert [hit.trajectory_id for hit in hits] == ["pip-list", "note"], query


@pytest.mark.parametrize("mode", ["lexical", "hybrid", "auto"])
def test_a_paste_with_windows_line_ends_holds_its_lines_as_pasted(hashing_ts, mode: str) -> None:
    """Bug (FRGEN4): two lines pasted from a Windows clipboard end in ``\\r\\n``, which no row holds, so the row
    holding them with their indent got no place above the first patch's."""
    hashing_ts.add([make_run("first-patch", steps=[("bash", {"command": "git diff"}, FIRST_PATCH)]),
                    make_run("last-diff", steps=[("bash", {"command": "git diff"}, LAST_DIFF)])])
    pasted = "\r\n".join(LAST_DIFF.splitlines()[3:5])
    hits = hashing_ts.search(pasted, tenant="acme", levels=["step"], k=2, mode=mode)
    assert [hit.trajectory_id for hit in hits] == ["last-diff", "first-patch"]


#: Two docstrings of one real run (../shared/data/mini-swe-agent-dev, deepseek_chat_dev/pvlib__pvlib-python-1154): a
#: function's, and another's wrapping the same words elsewhere.
ONE_LINE = """    solar_zenith : numeric
        Apparent (refraction-corrected) zenith angles in decimal
        degrees. solar_zenith must be >=0 and <=180.

    solar_azimuth : numeric
        Sun azimuth angles in decimal degrees. solar_azimuth must be >=0
        and <=360. The Azimuth convention is defined as degrees east of
        north (e.g. North = 0, East = 90, West = 270).

    Returns
    -------"""
WRAPPED = """        Sun azimuth angles in decimal degrees. The azimuth convention is
        defined as degrees east of north (e.g. North = 0, East = 90,
        West = 270)."""


@pytest.mark.parametrize("mode", ["lexical", "hybrid", "auto"])
def test_a_line_pasted_without_its_blanks_is_one_line_still(hashing_ts, mode: str) -> None:
    """Round 23 (GEN4): a line of an output, pasted stripped, finds the row holding it on one line above a row that
    wraps its words elsewhere (one of the two misses of ``scripts/eval_generalise.py`` it fixed). FRGEN4 keeps it:
    ignoring every blank of a paste not laid out, line breaks too, put the shorter, wrapped row first."""
    hashing_ts.add([make_run("wrapped", steps=[("bash", {"command": "sed -n 1,40p irradiance.py"}, WRAPPED)]),
                    make_run("one-line", steps=[("bash", {"command": "sed -n 90,130p irradiance.py"}, ONE_LINE)])])
    hits = hashing_ts.search("north (e.g. North = 0, East = 90, West = 270).", tenant="acme", levels=["step"], k=2,
                             mode=mode)
    assert [hit.trajectory_id for hit in hits] == ["one-line", "wrapped"]


SHALLOW = """+    if tmp_name and os.path.exists(tmp_name):
+        os.unlink(tmp_name)"""
DEEP = """+        # if tmp_name exists: os.path.exists(tmp_name) before os.unlink(tmp_name)
+        if tmp_name and os.path.exists(tmp_name):
+            os.unlink(tmp_name)"""


def test_an_indent_pasted_is_not_held_inside_a_deeper_one() -> None:
    """Bug (FRALLB): a paste at 16 blanks was found inside the last diff's line at 20, so both rows counted as pasted."""
    from trajsearch.fusion import FusionConfig

    pasted = PASTED[1:][4:]  # the first patch's line, at its 16 blanks
    closeness = FusionConfig.as_pasted_first(pasted, {"first": FIRST_PATCH, "last": LAST_DIFF}, {"first", "last"})
    assert closeness == {"first": 2.0, "last": 1.0}


@pytest.mark.parametrize("mode", ["lexical", "hybrid", "auto"])
def test_a_shallow_paste_finds_the_shallow_row_first(hashing_ts, mode: str) -> None:
    """Bug (FRALLB): a line pasted at 4 blanks put the row holding it at 8 first (its words once more in a comment
    score it higher): the 4 blanks were found within the 8, so both rows held it "as pasted"."""
    hashing_ts.add([make_run("shallow", steps=[("bash", {"command": "git diff"}, SHALLOW)]),
                    make_run("deep", steps=[("bash", {"command": "git diff"}, DEEP)])])
    hits = hashing_ts.search("    if tmp_name and os.path.exists(tmp_name):", tenant="acme", levels=["step"], k=2,
                             mode=mode)
    assert [hit.trajectory_id for hit in hits] == ["shallow", "deep"]


def test_a_typed_paste_is_held_as_pasted_in_a_row_holding_it_as_typed_or_spread() -> None:
    """A paste of single blanks is held as pasted by a row holding it as it stands (beside a run of blanks, too:
    round 25 looks there first, before collapsing the row's blanks) and by one holding it only once they collapse;
    not by one holding its words on two lines."""
    from trajsearch.fusion import FusionConfig

    texts = {"as typed": "result:   exit code 137  after 3 tries", "spread": "result: exit  code\t137",
             "two lines": "result: exit code\n137"}
    assert FusionConfig.as_pasted_first("exit code 137", texts, set(texts)) == {
        "as typed": 2.0, "spread": 2.0, "two lines": 1.0}

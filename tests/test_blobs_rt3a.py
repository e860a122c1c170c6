"""The blob rule (:mod:`trajsearch.blobs`) beyond ingest: a store indexed before it, upgraded, keeps no base64."""

from __future__ import annotations

import base64
import json
import random
from pathlib import Path

from trajsearch.blobs import without_blobs
from trajsearch.ingest.read import read_inputs
from trajsearch.store.filters import Filters

from cli_support import newcomer, run_cli, unnoted  # noqa: F401 (a fixture)

FIXTURES = Path(__file__).parent / "fixtures"
#: A real SWE-agent 1.1.0 run whose step 0 (``view_image``) output is a markdown image of a PNG in base64.
VIEW_IMAGE = FIXTURES / "swe-agent" / ".aud31" / "demo__greet-image.traj"


def _run():
    (parsed,) = read_inputs([str(VIEW_IMAGE)], tenant="acme")
    assert parsed.trajectory, parsed.error
    return parsed.trajectory


def test_upgrading_a_store_indexed_before_the_blob_rule_leaves_no_base64_row(hashing_ts, monkeypatch) -> None:
    import trajsearch.indexer as indexer_module
    import trajsearch.represent as represent_module

    run = _run()
    with monkeypatch.context() as old:  # representation 24: the base64 indexed as text, its output in passages
        old.setattr(represent_module, "REPRESENTATION_VERSION", 24)
        old.setattr(indexer_module, "indexed_text", lambda trajectory: trajectory)  # where ingest removes blobs
        hashing_ts.add([run])
    levels = lambda: sorted(r["level"] for r in hashing_ts.rows(Filters(tenant="acme"), ["text", "level"])  # noqa: E731
                            if "data:image" in r["text"])
    assert "passage" in levels()

    assert hashing_ts.upgrade() == 1
    assert levels() == []  # the passages the new representation no longer makes are gone, not left stale
    assert all("data:image" not in hit.text
               for hit in hashing_ts.search("image/png base64", tenant="acme", levels="step", mode="lexical"))
    rows = sorted((r["level"], r["step_index"]) for r in hashing_ts.rows(Filters(tenant="acme"), ["level", "step_index"]))
    hashing_ts.delete(run.trajectory_id, tenant="acme")
    hashing_ts.add([run])  # a fresh ingest of the run makes the same rows
    assert sorted((r["level"], r["step_index"]) for r in hashing_ts.rows(Filters(tenant="acme"), ["level", "step_index"])) == rows
    assert hashing_ts.upgrade() == 0


def test_a_query_holding_an_image_is_read_as_its_rows_are(hashing_ts) -> None:
    hashing_ts.add([_run()])
    observation = json.loads(VIEW_IMAGE.read_text())["trajectory"][0]["observation"]
    (pasted,) = [line for line in observation.splitlines() if "base64," in line]  # the agent's observation line
    assert len(pasted) > 2_500 and len(without_blobs(pasted)) < 60

    def best(text: str) -> tuple[str, float]:
        hit = hashing_ts.search(text, tenant="acme", levels="step")[0]
        return hit.trajectory_id, round(hit.score, 6)

    assert best(pasted) == best(without_blobs(pasted))  # the base64 was read as words: 0.06 against 0.26
    png = base64.b64encode(b"\x89PNG\r\n\x1a\n" + random.Random(0).randbytes(30_000)).decode()
    screenshot = f"![shot](data:image/png;base64,{png})"
    # a screenshot over the query limit is its placeholder: searched, not refused as "query text too long"
    assert hashing_ts.search(f"{screenshot} view_image diagram.png", tenant="acme", levels="step")


def test_export_compressed_for_a_prompt_names_the_image_and_holds_none_of_its_base64(hashing_ts) -> None:
    from trajsearch.export import export_runs

    run = _run()
    hashing_ts.add([run])
    payload = json.loads(VIEW_IMAGE.read_text())["trajectory"][0]["observation"]
    payload = payload.split("base64,", 1)[1].rstrip(")\r\n ")

    def record(**budget) -> str:
        (item,) = export_runs(hashing_ts, "greet diagram", tenant="acme", k=1, fmt="openai-chat", **budget)
        return json.dumps(item.record)

    assert payload in record()  # the trace as kept
    compressed = record(max_tokens=400)
    assert "[image/png, 3 KB base64]" in compressed and payload[-40:] not in compressed and payload[:40] not in compressed


def test_a_short_line_after_a_block_of_full_base64_lines_is_kept() -> None:
    png = base64.encodebytes(b"\x89PNG\r\n\x1a\n" + random.Random(0).randbytes(57 * 20 - 8)).decode()  # every line full
    assert {len(line) for line in png.splitlines()} == {76}
    for after in ("0", "FAILED", "Error"):
        text = f"$ base64 shot.png; echo $?\n{png}{after}\nnext"
        assert without_blobs(text) == f"$ base64 shot.png; echo $?\n[image/png, 1 KB base64]\n{after}\nnext"
    padded = base64.encodebytes(b"\x89PNG\r\n\x1a\n" + random.Random(0).randbytes(57 * 20)).decode()  # a short last line
    assert without_blobs(f"{padded}next") == "[image/png, 1 KB base64]\nnext"


def test_the_cli_searches_a_pasted_screenshot_by_its_placeholder_not_its_head_and_tail(newcomer) -> None:  # noqa: F811
    code, _, err = run_cli("ingest", str(VIEW_IMAGE), "-t", "acme")
    assert code == 0, err
    png = base64.b64encode(b"\x89PNG\r\n\x1a\n" + random.Random(0).randbytes(30_000)).decode()
    code, out, err = run_cli("search", f"view_image diagram.png ![shot](data:image/png;base64,{png})", "-t", "acme")
    assert code == 0, err
    assert unnoted(err) == []  # no "over the 20,000 a search takes: searched by its head and tail"


def test_the_cli_says_a_long_paste_s_length_as_read_not_with_its_screenshot_s_base64(newcomer) -> None:  # noqa: F811
    """A log past 20,000 characters pasted with a screenshot is cut, and the CLI said its raw length, the base64
    counted, when the search reads the base64 as its placeholder: the length said is now the one cut (review
    SMALLB 4, one rule with the web form and the agent tool)."""
    code, _, err = run_cli("ingest", str(VIEW_IMAGE), "-t", "acme")
    assert code == 0, err
    png = base64.b64encode(b"\x89PNG\r\n\x1a\n" + random.Random(0).randbytes(30_000)).decode()
    log = "\n".join(f"E   AssertionError: frame {n} is not drawn" for n in range(600))
    pasted = f"{log}\n![shot](data:image/png;base64,{png})"
    read = len(without_blobs(pasted))
    assert read > 20_000 and len(pasted) > read + 30_000
    code, _, err = run_cli("search", pasted, "-t", "acme")
    assert code == 0, err
    assert unnoted(err) == [f"note: the text is {read:,} characters, over the 20,000 a search takes: searched by its "
                            "head and tail (an error is most often at its end)"], err

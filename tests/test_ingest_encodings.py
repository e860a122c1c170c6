"""Dumps saved with a byte-order mark, as Windows tools write them (probe A of round p42, D1).

Real files only, the marks added as the tools add them:

- ``otel-genai/.real/utf16/single_trace.json``: a Jaeger trace a student saved with PowerShell 5.1's ``>``
  (UTF-16 LE with a BOM, CRLF; see the README beside it);
- ``langsmith/.real/wrap_openai_chat.json``: a JSON array of LangSmith run payloads (the SDK's test data, see
  ``langsmith/.real/SOURCE.md``), the shape of every list export (LangSmith ``list_runs``, Langfuse observations);
- ``langsmith/.real/ls_create_agent_anthropic.batch.jsonl``: LangSmith batch payloads, one a line.

A UTF-8 BOM (Notepad's "UTF-8 with BOM", PowerShell's ``-Encoding UTF8``) before a JSON array lost every run of
the file ("malformed JSON after record 0"); UTF-16 was refused as "binary".
"""

from __future__ import annotations

import codecs
import gzip
import shutil
from pathlib import Path
from typing import Any

import pytest

from trajsearch.ingest.read import make_context, plan_units, read_dump, read_unit

FIXTURES = Path(__file__).parent / "fixtures"
UTF16_TRACE = FIXTURES / "otel-genai" / ".real" / "utf16" / "single_trace.json"
ARRAY = FIXTURES / "langsmith" / ".real" / "wrap_openai_chat.json"
JSONL = FIXTURES / "langsmith" / ".real" / "ls_create_agent_anthropic.batch.jsonl"


def read(path: Path) -> list[tuple[str | None, Any]]:
    """Every verdict of a file: its format and its run (as a dict) or its error."""
    return [(p.fmt, p.trajectory.model_dump(mode="json") if p.trajectory else p.error) for p in read_dump(path)]


def saved_as(tmp_path: Path, original: Path, folder: str, data: bytes, gz: bool = False) -> Path:
    """``data`` saved under the original's name (run ids derive from it), in a folder of its own."""
    path = tmp_path / folder / (original.name + (".gz" if gz else ""))
    path.parent.mkdir()
    path.write_bytes(gzip.compress(data) if gz else data)
    return path


def same_file(tmp_path: Path, original: Path) -> Path:
    path = tmp_path / "as-written" / original.name
    path.parent.mkdir()
    shutil.copy(original, path)
    return path


@pytest.mark.parametrize("gz", [False, True], ids=["plain", "gzip"])
def test_a_json_array_saved_with_a_utf8_bom_reads_every_run(tmp_path: Path, gz: bool) -> None:
    expected = read(same_file(tmp_path, ARRAY))
    assert expected and all(isinstance(run, dict) for _, run in expected)
    with_bom = saved_as(tmp_path, ARRAY, "bom", codecs.BOM_UTF8 + ARRAY.read_bytes(), gz)
    assert read(with_bom) == expected


@pytest.mark.parametrize("encoding", ["utf-16-le", "utf-16-be"])
@pytest.mark.parametrize("original", [ARRAY, JSONL], ids=["array", "jsonl"])
def test_a_utf16_export_reads_as_its_utf8_text(tmp_path: Path, original: Path, encoding: str) -> None:
    """Decoded as a stream (no file loaded whole to re-encode it), whichever byte order its BOM says."""
    expected = read(same_file(tmp_path, original))
    assert expected and any(isinstance(run, dict) for _, run in expected)
    bom = codecs.BOM_UTF16_LE if encoding == "utf-16-le" else codecs.BOM_UTF16_BE
    utf16 = saved_as(tmp_path, original, encoding, bom + original.read_text(encoding="utf-8").encode(encoding))
    assert read(utf16) == expected


def test_a_real_powershell_utf16_trace_is_read_not_called_binary(tmp_path: Path) -> None:
    """The trace holds no agent run (its spans are a RAG pipeline's predict calls): it is told so, as its UTF-8
    text is, where it was refused as "binary, not text"."""
    assert UTF16_TRACE.read_bytes()[:2] == codecs.BOM_UTF16_LE
    utf8 = saved_as(tmp_path, UTF16_TRACE, "utf8", UTF16_TRACE.read_text(encoding="utf-16").encode("utf-8"))
    expected = read(utf8)
    assert expected == [("otel-genai", "not an agent run: the trace holds only predict spans and no input")]
    assert read(same_file(tmp_path, UTF16_TRACE)) == expected


def test_a_utf16_file_cut_inside_a_character_is_told_what_its_utf8_text_is_told(tmp_path: Path) -> None:
    """Cut at an odd byte (a copy of a file being written): the half character is dropped and the rest read as
    the same text in UTF-8 is, here a document cut in its second line, where the whole file was refused as "not
    valid UTF-16" whatever it held (review 1 of p42, F6; complete records of a cut file: test_ingest_damaged_text)."""
    broken = tmp_path / "broken.json"
    broken.write_bytes(UTF16_TRACE.read_bytes()[:101])  # cut inside a character: an odd byte count
    utf8 = tmp_path / "utf8.json"
    utf8.write_bytes(UTF16_TRACE.read_bytes()[:100].decode("utf-16").encode("utf-8"))
    for path in (utf8, broken):
        with pytest.raises(ValueError, match=f"^{path}: malformed JSON: Unterminated string starting at: line 2"):
            list(read_dump(path))


def test_a_resumed_utf16_jsonl_read_starts_after_its_cursor(tmp_path: Path) -> None:
    """A checkpoint's cursor counts UTF-8 bytes of the decoded text; a UTF-16 file cannot seek to it, so the read
    skips to it (``native/mixed.jsonl``: the project's own JSONL fixture of several runs)."""
    original = FIXTURES / "native" / "mixed.jsonl"
    utf16 = saved_as(tmp_path, original, "utf16", codecs.BOM_UTF16_LE + original.read_text().encode("utf-16-le"))
    unit, ctx = plan_units(utf16)[0], make_context(utf16)
    every = [str(p) for p in read_unit(unit, ctx)]
    first = next(read_unit(unit, ctx))
    assert first.cursor is not None and len(every) > 2
    assert [str(p) for p in read_unit(unit, ctx, skip=1, cursor=first.cursor)] == every[1:]


def test_a_file_of_utf16_garbage_is_told_it_is_not_valid_utf16(tmp_path: Path) -> None:
    """Its byte-order mark says UTF-16 but no character decodes (lone surrogates): it is told so, with what to do,
    not called binary (its damage reads on as bad UTF-8 bytes, see sources)."""
    garbage = tmp_path / "export.json"
    garbage.write_bytes(codecs.BOM_UTF16_LE + b"\x00\xd8" * 3000)
    with pytest.raises(ValueError, match="UTF-16 by its byte-order mark, but not valid UTF-16 text; re-encode"):
        list(read_dump(garbage))


def test_a_utf16_file_of_its_byte_order_mark_alone_is_empty_not_a_gzip(tmp_path: Path) -> None:
    """Review 3 (N5): it was "a gzip of nothing", though no gzip is involved."""
    empty = tmp_path / "export.jsonl"
    empty.write_bytes(codecs.BOM_UTF16_LE)
    with pytest.raises(ValueError, match=r"empty file \(a byte-order mark only\)"):
        list(read_dump(empty))


GSO_REPORT = FIXTURES / "outcomes" / ".real" / "gso" / "qwen3-coder.json"


@pytest.mark.parametrize("how", ["utf-16", "gzip", "gzip'd utf-16"])
def test_an_outcome_file_saved_as_dumps_are_saved_gives_the_same_verdicts(tmp_path: Path, how: str) -> None:
    """``--outcomes`` read its file as UTF-8 alone: a report saved with PowerShell's ``>`` failed with a codec
    error naming no file, and a gzip'd one as binary."""
    from trajsearch.ingest.outcomes import OutcomeTable

    data = GSO_REPORT.read_bytes()
    data = data.decode().encode("utf-16") if "utf-16" in how else data
    data = gzip.compress(data) if "gzip" in how else data
    path = tmp_path / GSO_REPORT.name
    path.write_bytes(data)
    expected = OutcomeTable.load(GSO_REPORT)
    assert len(expected) > 50
    assert OutcomeTable.load(path).verdicts == expected.verdicts


def test_an_outcome_file_in_another_encoding_is_named_in_a_clear_error(tmp_path: Path) -> None:
    from trajsearch.ingest.outcomes import OutcomeTable

    path = tmp_path / "report.json"
    path.write_bytes('{"astropy__astropy-1": "r\u00e9solu"}'.encode("latin-1"))
    with pytest.raises(ValueError, match=r"report\.json: not UTF-8 or UTF-16 text"):
        OutcomeTable.load(path)


def test_a_gzipd_utf16_dump_cut_mid_stream_keeps_every_whole_line_before_the_cut(tmp_path: Path) -> None:
    """A gzip'd UTF-16 dump cut mid-stream lost the lines of the last chunk decoded before the cut (review 3 of
    round p42, N4: 33 of 1,391 lines), where UTF-8 loses none: the decoder's read of many chunks lost them all
    when the gzip raised. The dump: real mini-swe-agent runs written as native JSON lines."""
    import zlib

    runs = [p.trajectory for p in read_dump(FIXTURES / "mini-swe-agent" / ".real") if p.trajectory is not None]
    text = "".join(run.model_dump_json() + "\n" for run in runs)
    assert len(runs) > 20 and len(text.encode("utf-16")) > 4 * (1 << 16)  # several chunks of the decoder
    for encoding in ("utf-8", "utf-16"):
        packed = gzip.compress(text.encode(encoding))
        cut = packed[: len(packed) * 4 // 5]
        whole_lines = zlib.decompressobj(16 + zlib.MAX_WBITS).decompress(cut).decode(encoding, "ignore").count("\n")
        path = tmp_path / encoding / "runs.jsonl.gz"
        path.parent.mkdir()
        path.write_bytes(cut)
        verdicts = list(read_dump(path))
        assert whole_lines > 5
        assert sum(p.ok for p in verdicts) == whole_lines, encoding
        assert [p.error for p in verdicts if not p.ok] == [
            f"truncated or corrupt gzip stream after line {whole_lines}: Compressed file ended before the "
            "end-of-stream marker was reached"], encoding

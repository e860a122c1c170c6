"""Detection of a pretty-printed JSON document longer than it parses whole for (``WHOLE_PARSE_BYTES``), gzipped.

Fixture: a real file of no supported format, Harbor's ``lock.json`` (tests/fixtures/atif/.real/harbor-runme, see
SOURCE.md there), gzipped in the test; the parse limit is lowered below its length so the test stays small.
"""

from __future__ import annotations

import gzip
from pathlib import Path

import pytest

from trajsearch.ingest import detect
from trajsearch.ingest.read import detect_format

LOCK = Path(__file__).parent / "fixtures/atif/.real/harbor-runme/2026-06-30__14-22-55/lock.json"


def test_a_gzipped_document_longer_than_the_parse_limit_is_unrecognised_not_malformed(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The size guard compared the gzip's size on disk with the limit, so the unpacked text was parsed cut off at
    the limit and a valid document was called "malformed JSON", without the hint to force a format (which is what
    reads such a file)."""
    dump = tmp_path / "lock.json.gz"
    dump.write_bytes(gzip.compress(LOCK.read_bytes()))
    monkeypatch.setattr(detect, "WHOLE_PARSE_BYTES", len(LOCK.read_bytes()) // 2)
    with pytest.raises(ValueError, match=r"unrecognised dump format.*pass --format NAME") as caught:
        detect_format(dump)
    assert "malformed" not in str(caught.value)

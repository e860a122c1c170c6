"""Format leftovers and the shared reading rules (probe FM3, round 52): each test a defect a user with files we had
not seen would hit, shown on a real file or one its own writer wrote (the fixture's ``SOURCE.md`` says which)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from trajsearch.ingest import sources
from trajsearch.ingest.read import detect_format, read_dump

FIXTURES = Path(__file__).parent / "fixtures"
ZSTD_CLI = FIXTURES / "zstd" / ".real"


def test_a_zstd_file_written_with_a_dictionary_is_told_as_needing_it() -> None:
    """``zstd -D codex.dict`` writes a sound file whose frame names the dictionary it needs (``DictID`` in its
    header); without it the decoder says "Dictionary mismatch", and trajsearch said "truncated or corrupt zstd",
    which sends the user looking for damage. It is told what it is, by the id, with the command that reads it."""
    written = ZSTD_CLI / "rollout-with-dictionary.jsonl.zst"
    told = (r"zstd written with a dictionary \(dictionary id 575650545\), which trajsearch is not given: "
            rf"{{}}decompress it first with that dictionary \(zstd -d -D DICTIONARY {re.escape(written.name)}\) "
            r"and ingest that")
    with pytest.raises(ValueError, match=told.format("")):
        detect_format(written)
    [parsed] = list(read_dump(written, fmt="codex-cli"))  # the format forced: the reader's own error
    assert re.fullmatch(told.format("not read after line 0; "), parsed.error) and "corrupt" not in parsed.error
    [(_, _, error, _)] = list(sources.lines(written))
    assert error == parsed.error

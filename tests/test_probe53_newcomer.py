"""A newcomer's own runs, the leftovers (probe 53, area NC4): a record pretty-printed into a JSON Lines file, times as
PostgreSQL and Ruby write them, and JSON arrays with one bad record. Inputs are the hand-written newcomer dump
(``fixtures/native/.newcomer/own-agent.jsonl``, see its SOURCE.md), changed in each test as the writer named in its
docstring would leave it."""

from __future__ import annotations

import json
from pathlib import Path

from cli_support import newcomer as embedded  # noqa: F401 (a fixture)
from cli_support import run_cli
from trajsearch.ingest.read import read_dump

OWN = Path(__file__).parent / "fixtures" / "native" / ".newcomer" / "own-agent.jsonl"


def _valid_runs() -> list[dict]:
    """Lines 1 and 4 of the newcomer dump: the two its SOURCE.md calls valid against the schema."""
    lines = OWN.read_text().splitlines()
    return [json.loads(lines[0]), json.loads(lines[3])]


def _runs(count: int) -> list[dict]:
    """``count`` valid runs of the newcomer dump, each its own id."""
    first, second = _valid_runs()
    return [{**(first, second)[n % 2], "trajectory_id": f"ops-bot/run-{n}"} for n in range(count)]


def _cut_outside_a_string(run: dict) -> str:
    """A compact run as a writer killed after ``"steps": [`` leaves it: cut outside any string."""
    text = json.dumps(run)
    return text[:text.index('"steps": [') + len('"steps": [')]


def test_a_record_pretty_printed_into_a_jsonl_file_is_one_record(embedded, tmp_path: Path) -> None:
    """Bug: ``jq . late-run.json >> runs.jsonl`` (or ``json.dump(run, f, indent=2)`` in a loop writing the rest with
    ``json.dumps``) puts one record over many lines of a JSON Lines file. Each of its lines was read as a record:
    ~20 rejections ("Extra data", "cut short", "Expecting value"), the run lost. It is read as the one record it is,
    named by its lines; one whose text is broken is one rejection naming its lines."""
    runs = _runs(4)
    broken = json.dumps(runs[3], indent=2).replace('"tenant"', '"tenant" "oops"', 1)  # a missing colon
    dump = tmp_path / "runs.jsonl"
    dump.write_text(json.dumps(runs[0]) + "\n" + json.dumps(runs[1], indent=2) + "\n" + json.dumps(runs[2]) + "\n"
                    + broken + "\n")
    pretty_lines = json.dumps(runs[1], indent=2).count("\n") + 1

    parsed = list(read_dump(dump, tenant="acme"))
    assert [p.trajectory.trajectory_id for p in parsed if p.ok] == ["ops-bot/run-0", "ops-bot/run-1", "ops-bot/run-2"]
    assert [p.position for p in parsed if p.ok][1] == f"lines 2-{1 + pretty_lines}"
    (bad,) = [p for p in parsed if not p.ok]
    first_bad = 3 + pretty_lines
    assert bad.position == f"lines {first_bad}-{first_bad + broken.count(chr(10))}", bad
    assert "malformed JSON" in bad.error

    code, out, err = run_cli("ingest", str(dump), "-t", "acme", "--dry-run")
    assert "runs 3; rejected 1;" in out + err, out + err


def test_a_record_cut_short_before_whole_ones_is_still_one_line(tmp_path: Path) -> None:
    """A writer killed mid-line leaves a line that opens a record and does not close it; the next lines are whole
    records of their own and are read, not taken for the rest of the cut one. Cut outside a string (after ``[``: a
    line cut inside one is taken for no record's start whatever follows; review RNC4, D7)."""
    runs = _runs(3)
    dump = tmp_path / "runs.jsonl"
    dump.write_text(json.dumps(runs[0]) + "\n" + _cut_outside_a_string(runs[1]) + "\n" + json.dumps(runs[2]) + "\n")
    parsed = list(read_dump(dump, tenant="acme"))
    assert [(p.position, p.ok) for p in parsed] == [("line 1", True), ("line 2", False), ("line 3", True)]


def test_postgresql_and_ruby_times_are_times(tmp_path: Path) -> None:
    """Bug: a ``created_at`` as PostgreSQL writes a ``timestamptz`` as text (``2026-12-05 10:00:00.25+00``: its offset
    in hours alone, what ``psql``, ``COPY ... TO`` and ``::text`` give) or as Ruby's ``Time#to_s`` and the json gem
    write a time (``2026-12-05 10:00:00 +0530``: a space before the offset) rejected the whole run ("unexpected extra
    characters at the end of the input"). Each says one instant; a step's times are read the same way."""
    runs = _runs(4)
    runs[0]["created_at"] = "2026-12-05 10:00:00.25+00"
    runs[1]["created_at"] = "2026-12-05 10:00:00-07"
    runs[2]["created_at"] = "2026-12-05 10:00:00 +0530"
    runs[3]["created_at"] = "2026-12-05T10:00:00+05:30"
    runs[0]["steps"][0]["started_at"] = "2026-12-05 10:00:01+00"
    runs[0]["steps"][0]["ended_at"] = "2026-12-05 10:00:02 -0800"
    dump = tmp_path / "runs.jsonl"
    dump.write_text("".join(json.dumps(r) + "\n" for r in runs))

    parsed = list(read_dump(dump, tenant="acme"))
    assert all(p.ok for p in parsed), [p.error for p in parsed]
    assert [p.trajectory.created_at.isoformat() for p in parsed] == [
        "2026-12-05T10:00:00.250000+00:00", "2026-12-05T10:00:00-07:00", "2026-12-05T10:00:00+05:30",
        "2026-12-05T10:00:00+05:30"]
    step = parsed[0].trajectory.steps[0]
    assert (step.started_at.isoformat(), step.ended_at.isoformat()) == (
        "2026-12-05T10:00:01+00:00", "2026-12-05T10:00:02-08:00")


def _array_with_bad_records(tmp_path: Path, count: int, bad: dict[int, str], indent: int | None = 2,
                            name: str = "runs.json") -> Path:
    """``json.dump(runs, f, indent=2)`` of ``count`` runs, each run numbered (from 1) in ``bad`` written with its task
    as given there: raw text, as a writer that builds its JSON by hand leaves it (a bad escape, a 5,000-digit
    number, ``NaN``)."""
    texts = []
    for number, run in enumerate(_runs(count), 1):
        text = json.dumps(run, indent=indent)
        if number in bad:
            text = text.replace(json.dumps(run["task"]), bad[number], 1)
        texts.append(text)
    path = tmp_path / name
    path.write_text("[\n" + ",\n".join(texts) + "\n]\n")
    return path


def test_one_bad_record_of_a_big_array_costs_itself_not_the_parser(tmp_path: Path, monkeypatch) -> None:
    """Bug: after one record of a JSON array that the streaming parser cannot read (a bad escape a hand-built writer
    left, ``"C:\\q"``), every later record was cut by the byte scanner and parsed one by one: a 142 MB array of 60,000
    runs with one such record as its 11th took 15 s of CPU to read instead of 3.5 s (49 s instead of 11 s on the
    clock), whatever came after it. The parser now resumes after the bad record: the scanner cuts the records up to
    it and no further."""
    from trajsearch.ingest import sources

    cut: list[int] = []
    scanner = sources.value_texts

    def counted(*args, **kwargs):
        for text in scanner(*args, **kwargs):
            cut.append(len(text))
            yield text

    monkeypatch.setattr(sources, "value_texts", counted)
    dump = _array_with_bad_records(tmp_path, 400, {11: '"task \\\\q"'.replace("\\\\", "\\"), 300: '"x\\\\y"'
                                                   .replace("\\\\", "\\")})
    parsed = list(read_dump(dump, tenant="acme"))
    assert [p.position for p in parsed if not p.ok] == ["record 11", "record 300"]
    assert len([p for p in parsed if p.ok]) == 398
    assert [p.trajectory.trajectory_id for p in parsed if p.ok][-1] == "ops-bot/run-399"
    assert len(cut) <= 11 + 1 + 290, len(cut)  # to each bad record from where the parser last started, and no more


def test_bad_records_anywhere_in_an_array_cost_themselves(tmp_path: Path) -> None:
    """Resumed after each bad record, the parser is not resumed once more where the next bad record is close (the
    scanner reads on alone); a bad first or last record, ``NaN`` (Python's json writes it, the parser refuses it),
    a compact array, each costs itself alone and every other record is read, in order."""
    bad = {1: '"a\\q"', 5: '"b\\q"', 6: "NaN", 150: '"c\\q"', 400: '"d\\q"'}
    for indent in (2, None):
        dump = _array_with_bad_records(tmp_path, 400, bad, indent=indent)
        parsed = list(read_dump(dump, tenant="acme"))
        ids = [p.trajectory.trajectory_id for p in parsed if p.ok]
        assert ids == [f"ops-bot/run-{n - 1}" for n in range(1, 401) if n not in bad], indent
        assert [p.position for p in parsed if not p.ok] == ["record 1", "record 5", "record 6", "record 150",
                                                           "record 400"], indent
        assert len(ids) == 395


# Review RNC4 of probe 53's newcomer reading (fix FRNC4).


def test_a_line_cut_outside_a_string_before_pretty_records_is_one_line(tmp_path: Path) -> None:
    """Bug: a line cut short outside a string (``..."steps": [``) followed by records ``jq .`` appended took them
    for its rest: one rejection "lines 2-50 malformed JSON" naming neither the cut line nor the runs, both lost;
    followed by a line of its own fault (a 5,000-digit number) it was "lines 2-3 a number too long", the cut line's
    own fault unsaid. A line opening a value at its first column ends a record indented as writers indent it."""
    runs = _runs(5)
    cut = _cut_outside_a_string(runs[1])
    pretty = [json.dumps(r, indent=2) + "\n" for r in runs[2:4]]
    dump = tmp_path / "runs.jsonl"
    dump.write_text(json.dumps(runs[0]) + "\n" + cut + "\n" + "".join(pretty) + json.dumps(runs[4]) + "\n")
    parsed = list(read_dump(dump, tenant="acme"))
    end_2 = 2 + pretty[0].count("\n")
    end_3 = end_2 + pretty[1].count("\n")
    assert [(p.position, p.ok and p.trajectory.trajectory_id) for p in parsed] == [
        ("line 1", "ops-bot/run-0"), ("line 2", False), (f"lines 3-{end_2}", "ops-bot/run-2"),
        (f"lines {end_2 + 1}-{end_3}", "ops-bot/run-3"), (f"line {end_3 + 1}", "ops-bot/run-4")]
    assert "cut short" in parsed[1].error, parsed[1].error

    long_number = json.dumps(runs[3]).replace('"tenant"', '"n": ' + "9" * 5000 + ', "tenant"', 1)
    dump.write_text(json.dumps(runs[0]) + "\n" + cut + "\n" + long_number + "\n" + json.dumps(runs[4]) + "\n")
    parsed = list(read_dump(dump, tenant="acme"))
    assert [(p.position, p.ok) for p in parsed] == [("line 1", True), ("line 2", False), ("line 3", False),
                                                    ("line 4", True)]
    assert "cut short" in parsed[1].error and "number too long" in parsed[2].error


def test_a_record_pretty_printed_with_indent_0_is_still_one_record(tmp_path: Path) -> None:
    """``json.dumps(run, indent=0)`` puts every line at the first column, its steps' ``{`` too: still one record."""
    runs = _runs(3)
    dump = tmp_path / "runs.jsonl"
    dump.write_text(json.dumps(runs[0]) + "\n" + json.dumps(runs[1], indent=0) + "\n" + json.dumps(runs[2]) + "\n")
    parsed = list(read_dump(dump, tenant="acme"))
    assert [p.trajectory.trajectory_id for p in parsed if p.ok] == ["ops-bot/run-0", "ops-bot/run-1", "ops-bot/run-2"]


def test_ruby_utc_times_are_times_and_a_bad_offset_is_quoted_as_written(tmp_path: Path) -> None:
    """Bug: Ruby's ``Time#to_s`` writes a UTC time as ``2026-12-05 10:00:00 UTC`` (its ``"%Y-%m-%d %H:%M:%S UTC"``;
    the json gem writes a ``Time`` so): the run was rejected. And an offset no zone has (``+24``) was refused quoting
    ``+24:00``, which the file does not say."""
    runs = _runs(2)
    runs[0]["created_at"] = "2026-12-05 10:00:00 UTC"
    runs[0]["steps"][0]["started_at"] = "2026-12-05 10:00:01 UTC"
    runs[1]["created_at"] = "2026-12-05 10:00:00+24"
    dump = tmp_path / "runs.jsonl"
    dump.write_text("".join(json.dumps(r) + "\n" for r in runs))
    good, bad = read_dump(dump, tenant="acme")
    assert good.ok, good.error
    assert good.trajectory.created_at.isoformat() == "2026-12-05T10:00:00+00:00"
    assert good.trajectory.steps[0].started_at.isoformat() == "2026-12-05T10:00:01+00:00"
    assert not bad.ok and "2026-12-05 10:00:00+24" in bad.error and "+24:00" not in bad.error, bad.error


def test_a_gzip_array_with_many_bad_records_is_read_in_linear_time(tmp_path: Path, monkeypatch) -> None:
    """Bug: in a gzip array with a bad record every ~100 records, each resumption of the parser read the text again
    from its first byte (a gzip stream does not seek back): 9.8 s of CPU for 32,000 records, where the scanner alone
    took 2.6 s. Past a few resumptions the scanner reads the rest; every record is still read, in order."""
    import gzip

    from trajsearch.ingest import sources

    bad = {n: '"a\\q"' for n in range(51, 2001, 101)}
    plain = _array_with_bad_records(tmp_path, 2000, bad)
    packed = tmp_path / "runs.json.gz"
    packed.write_bytes(gzip.compress(plain.read_bytes()))
    read_again: list[int] = []
    rewind = sources.Source.rewind

    def counted(self, at: int = 0) -> None:
        if self.stream is not self.raw:  # a compressed file: read again from its first byte
            read_again.append(at)
        rewind(self, at)

    monkeypatch.setattr(sources.Source, "rewind", counted)
    expected = [(p.position, p.ok and p.trajectory.trajectory_id) for p in read_dump(plain, tenant="acme")]
    assert [(p.position, p.ok and p.trajectory.trajectory_id) for p in read_dump(packed, tenant="acme")] == expected
    assert sum(1 for p in expected if not p[1]) == len(bad)
    assert len(read_again) <= 2 * 3 + 1, len(read_again)


def test_pretty_records_written_with_no_newline_between_are_each_read(tmp_path: Path) -> None:
    """Bug: ``json.dump(run, f, indent=2)`` in a loop writing no newline leaves ``}{`` between two records: both were
    one rejection "lines 2-48 malformed JSON: Extra data", both runs lost. Each is read, named by its lines (the
    line they share in both); a read resumed from either's cursor reads on from the next."""
    from trajsearch.ingest import sources

    runs = _runs(4)
    dump = tmp_path / "runs.jsonl"
    dump.write_text(json.dumps(runs[0]) + "\n" + "".join(json.dumps(r, indent=2) for r in runs[1:3]) + "\n"
                    + json.dumps(runs[3]) + "\n")
    shared = 1 + json.dumps(runs[1], indent=2).count("\n") + 1
    last = shared + json.dumps(runs[2], indent=2).count("\n")
    parsed = list(read_dump(dump, tenant="acme"))
    assert [(p.position, p.ok and p.trajectory.trajectory_id) for p in parsed] == [
        ("line 1", "ops-bot/run-0"), (f"lines 2-{shared}", "ops-bot/run-1"),
        (f"lines {shared}-{last}", "ops-bot/run-2"), (f"line {last + 1}", "ops-bot/run-3")]
    read, _ = sources.records(dump)
    cursors = [cursor for *_, cursor in read]
    for at, cursor in enumerate(cursors[:-1], 1):
        again, honoured = sources.records(dump, cursor)
        assert honoured and [position for position, *_ in again] == [p.position for p in parsed[at:]]

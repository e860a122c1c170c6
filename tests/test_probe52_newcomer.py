"""A newcomer's own data, round three (probe 52, area NC3): a JSON array with one record no parser takes, a JSONL file
whose first record is cut right after its first key, repeats in a dry run, invisible controls in messages. Inputs are
the hand-written newcomer dump (``fixtures/native/.newcomer``, see its SOURCE.md), written in the test as the writer
named in each test's docstring writes it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cli_support import newcomer as embedded  # noqa: F401 (a fixture)
from cli_support import run_cli
from trajsearch.ingest.read import read_dump

OWN = Path(__file__).parent / "fixtures" / "native" / ".newcomer" / "own-agent.jsonl"


def _valid_runs() -> list[dict]:
    """Lines 1 and 4 of the newcomer dump: the two its SOURCE.md calls valid against the schema."""
    lines = OWN.read_text().splitlines()
    return [json.loads(lines[0]), json.loads(lines[3])]


def _read(path: Path) -> list[tuple[str, str | None, str | None]]:
    return [(r.position, r.trajectory.trajectory_id if r.ok else None, r.error) for r in read_dump(path, tenant="acme")]


def test_an_array_record_with_a_number_python_cannot_read_costs_itself_alone(tmp_path: Path) -> None:
    """Bug: an array of runs one of which holds a 5,000-digit integer in its metadata (Go's ``json.Marshal`` writes a
    ``*big.Int`` as its digits, however many; Python reads back at most 4,300) lost every record after it ("malformed
    JSON after record 1: Unexpected symbol '9999...'", with the 5,000 digits), where a JSONL file loses its line. The
    record is one rejection saying why, the records after it are read; at the head of the array too."""
    first, last = _valid_runs()
    big = {**first, "trajectory_id": "big", "metadata": {"counter": "BIG"}}
    dump = tmp_path / "runs.json"
    for runs, bad in (([first, big, last], 2), ([big, first, last], 1)):
        dump.write_text(json.dumps(runs).replace('"BIG"', "9" * 5000))
        read = _read(dump)
        assert [(position, run) for position, run, _ in read] == [
            (f"record {n}", None if n == bad else run["trajectory_id"]) for n, run in enumerate(runs, 1)]
        assert read[bad - 1][2] == ("malformed JSON: a number too long to read (Exceeds the limit (4300 digits) "
                                    "for integer string conversion: value has 5000 digits)")


def test_an_array_record_with_a_bad_escape_or_a_byte_not_utf8_costs_itself_alone(tmp_path: Path) -> None:
    """Bug: a hand-edited ``json.dump(runs, f, indent=2)`` array with a Windows path unescaped (``C:\\Users``) in a
    record, or an ``é`` saved by a Windows editor in cp1252, lost every record after it, and the message was the
    parser's three lines with a caret ("lexical error: inside a string, '\\' occurs before a character..."). The
    record is one rejection naming its fault and where in the record, the ones after it are read."""
    first, last = _valid_runs()
    runs = [first, last, {**first, "trajectory_id": "third"}]
    text = json.dumps(runs, indent=2)
    escaped, cp1252 = tmp_path / "escaped.json", tmp_path / "cp1252.json"
    escaped.write_text(text.replace('"task": "Cancel', '"task": "C:\\Users Cancel'))
    cp1252.write_bytes(text.replace('"task": "Cancel', '"task": "Caf\xe9 Cancel').encode("cp1252"))

    assert _read(escaped) == [("record 1", first["trajectory_id"], None),
                              ("record 2", None, "malformed JSON: Invalid \\escape (line 5 column 16 of the record)"),
                              ("record 3", "third", None)]
    assert [(position, run) for position, run, _ in _read(cp1252)] == [
        ("record 1", first["trajectory_id"]), ("record 2", None), ("record 3", "third")]
    assert _read(cp1252)[1][2].startswith("not UTF-8 text: invalid continuation byte at byte ")


def test_an_array_cut_short_keeps_its_whole_records_and_says_the_last_is_cut(tmp_path: Path) -> None:
    """A ``json.dump(runs, f, indent=2)`` killed mid-write: the whole records are read, the cut one is said to be cut
    short in one line (it was the parser's "premature EOF" with a caret under blanks)."""
    first, last = _valid_runs()
    text = json.dumps([first, last], indent=2)
    dump = tmp_path / "runs.json"
    dump.write_text(text[:text.index('"Cancel reservation')])

    assert _read(dump) == [("record 1", first["trajectory_id"], None),
                           ("record 2", None, "malformed JSON: cut short: the record ends inside its JSON value")]


def test_a_jsonl_first_record_cut_after_its_first_key_keeps_the_records_after_it(tmp_path: Path) -> None:
    """Bug: a writer killed right after ``{"timestamp":`` of its first line, then restarted with appends: the first
    line looked like a wrapper's opening (``{"runs":``), so the file was read as one document: "malformed JSON:
    Expecting ',' delimiter: line 3 column 1", every good line lost (the CLI refused the file). The cut line is
    one rejection, the lines after it are read."""
    first, last = _valid_runs()
    dump = tmp_path / "runs.jsonl"
    dump.write_text('{"timestamp":\n' + json.dumps(first) + "\n" + json.dumps(last) + "\n")

    assert _read(dump) == [
        ("line 1", None, "malformed JSON: cut short: the line ends inside its JSON value, after column 13"),
        ("line 2", first["trajectory_id"], None), ("line 3", last["trajectory_id"], None)]


def test_a_dry_run_counts_a_record_written_twice_once_as_the_ingest_does(embedded, tmp_path: Path) -> None:
    """Bug: a writer that retries an append after a timeout writes a run's line twice (and a folder may hold a copy of
    a file). ``--dry-run`` said "runs 3" where the ingest of the same file said "ingested 2 runs, unchanged 1": the
    pre-flight check promised a run that would never land. Repeats (same id, same content) are counted apart, in
    the file they are met in, and said."""
    first, last = _valid_runs()
    dump = tmp_path / "runs.jsonl"
    dump.write_text("".join(json.dumps(run) + "\n" for run in (first, first, last)))
    copy = tmp_path / "copy.jsonl"
    copy.write_bytes(dump.read_bytes())

    code, out, _ = run_cli("ingest", str(dump), str(copy), "-t", "acme", "--dry-run", "--json")
    assert code == 0
    files = {Path(f["source"]).name: f for f in json.loads(out)["files"]}
    assert [(files[n]["runs"], files[n]["repeated"], files[n]["steps"]) for n in ("runs.jsonl", "copy.jsonl")] == [
        (2, 1, 2), (0, 3, 0)]
    code, _, err = run_cli("ingest", str(dump), str(copy), "-t", "acme", "--dry-run")
    assert "1 run(s) in " in err and "runs.jsonl repeat a run read before (the same id and content" in err

    code, out, _ = run_cli("ingest", str(dump), str(copy), "-t", "acme", "--json")
    assert code == 0
    assert (json.loads(out)["ingested"], json.loads(out)["unchanged"]) == (2, 4)


def test_invisible_and_bidi_characters_in_values_are_shown_escaped(embedded, tmp_path: Path) -> None:
    """Bug: an ``outcome`` copied from a web page with a zero-width space after it was refused as ``got "success"``
    (the writer saw the right word, and nothing to fix), and a task holding U+202E (RIGHT-TO-LEFT OVERRIDE) printed
    the rest of the dry run's line reversed on the terminal: only C0/C1 controls were escaped. They are ``\\uNNNN``
    now, on the terminal, in ``--json`` and in the rejection's reason."""
    first, last = _valid_runs()
    dump = tmp_path / "runs.jsonl"
    dump.write_text(json.dumps({**first, "outcome": "success\u200b"}, ensure_ascii=False) + "\n"
                    + json.dumps({**last, "task": "Open \u202egnp.exe"}, ensure_ascii=False) + "\n")

    code, out, err = run_cli("ingest", str(dump), "-t", "acme", "--dry-run")
    assert code == 3  # some rejected, as the ingest would exit
    assert "got \"success\\u200b\"" in err and "first task Open \\u202egnp.exe" in out
    code, out, _ = run_cli("ingest", str(dump), "-t", "acme", "--dry-run", "--json")
    said = json.loads(out)["files"][0]
    assert said["task"] == "Open \u202egnp.exe" and "\\u202e" in out and "\u202e" not in out
    assert said["rejections"][0]["reason"].endswith("got \"success\\u200b\"")
    for text in (out, err):
        assert not {"\u200b", "\u202e"} & set(text)


@pytest.mark.parametrize(("step", "said"), [
    ({"index": 0, "obervation": "ok"}, "unexpected field 'steps[0].obervation' (did you mean 'observation'?)"),
    ({"index": 0, "tool": "bash"}, "unexpected field 'steps[0].tool' (did you mean 'action'?)"),
    ({"index": 0, "tool_input": {"cmd": "ls"}},
     "unexpected field 'steps[0].tool_input' (did you mean 'arguments'?)"),
    ({"index": 0, "output": "a"}, "unexpected field 'steps[0].output' (did you mean 'observation'?)"),
    ({"index": 0, "Thought": "a"}, "unexpected field 'steps[0].Thought' (did you mean 'thought'?)"),
    ({"index": 0, "colour": "a"}, "unexpected field 'steps[0].colour'"),
])
def test_an_unexpected_field_names_the_schemas_field_a_writer_likely_meant(tmp_path: Path, step: dict,
                                                                          said: str) -> None:
    """Bug: a newcomer's misspelt or otherwise named field (``obervation``; ``tool``, ``tool_input``, ``output``: the
    words of the OpenAI and LangChain records they know) was "unexpected field 'steps[0].tool'", and which field the
    schema has for it was left to find in the schema. The likely one is named; a field like none is said as before."""
    first, _ = _valid_runs()
    dump = tmp_path / "runs.jsonl"
    dump.write_text(json.dumps({**first, "steps": [step]}) + "\n")

    assert _read(dump) == [("line 1", None, f"invalid trajectory: {said}")]


def test_a_misspelt_top_level_or_failure_field_is_named_with_the_schemas(tmp_path: Path) -> None:
    """The same at the run's level and in its ``failure``: ``taks`` beside the missing ``task``, ``trajectoryId``
    (a JavaScript writer's camelCase), a failure's ``message``."""
    first, _ = _valid_runs()
    run = {k: v for k, v in first.items() if k != "task"}
    dump = tmp_path / "runs.jsonl"
    dump.write_text(json.dumps({**run, "taks": first["task"]}) + "\n"
                    + json.dumps({**first, "failure": {"error": "E", "message": "E"}}) + "\n")

    assert [reason for _, _, reason in _read(dump)] == [
        "invalid trajectory: missing required field 'task'; unexpected field 'taks' (did you mean 'task'?)",
        "invalid trajectory: unexpected field 'failure.message'"]  # it has its 'error' (review RNC3, D7)


def test_concatenated_objects_lose_only_the_one_no_parser_takes(tmp_path: Path) -> None:
    """Bug: runs pretty-printed one after another (``jq . runs.jsonl > runs.json``, which since jq 1.7 keeps a number's
    digits as written, or a newcomer's hand-written objects) lost every record after one that no parser takes (a
    5,000-digit number, a Windows path's ``\\`` unescaped). That one is a rejection, the records after it are read."""
    first, last = _valid_runs()
    runs = [first, {**last, "metadata": {"counter": "BIG"}}, {**first, "trajectory_id": "third"}]
    pretty = "\n".join(json.dumps(run, indent=2) for run in runs)
    big, escaped = tmp_path / "big.json", tmp_path / "escaped.json"
    big.write_text(pretty.replace('"BIG"', "9" * 5000))
    escaped.write_text(pretty.replace('"task": "Cancel', '"task": "C:\\Users Cancel'))

    for dump in (big, escaped):
        assert [(position, run) for position, run, _ in _read(dump)] == [
            ("record 1", first["trajectory_id"]), ("record 2", None), ("record 3", "third")]


def test_a_dry_run_warns_of_a_field_clipped_as_the_ingest_does(embedded, tmp_path: Path) -> None:
    """Bug: a run whose tool printed 1.2 MB (a log dumped whole into ``observation``) is kept with its head and tail,
    the middle clipped; the ingest warns of it, the dry run (the pre-flight check) said nothing. It warns the same."""
    first, last = _valid_runs()
    huge = {**last, "steps": [{**last["steps"][0], "observation": "x" * 1_200_000}]}
    dump = tmp_path / "runs.jsonl"
    dump.write_text(json.dumps(first) + "\n" + json.dumps(huge) + "\n")

    code, out, err = run_cli("ingest", str(dump), "-t", "acme", "--dry-run")
    assert code == 0
    said = " ".join(err.split())
    assert "1 run(s) had a field over its limit" in said
    assert f"e.g. {last['trajectory_id']}: steps[0].observation: 200,038 characters clipped" in said
    code, out, _ = run_cli("ingest", str(dump), "-t", "acme", "--dry-run", "--json")
    assert json.loads(out)["files"][0]["clipped"] == 1


def test_set_tags_takes_words_not_characters(embedded, tmp_path: Path) -> None:
    """Bug: ``ingest --set tags=nightly`` tagged every run ``n, i, g, h, t, l, y``: a default's tags are added to the
    run's one by one, and the value was the string. A plain value is a comma-separated list of words."""
    first, last = _valid_runs()
    dump = tmp_path / "runs.jsonl"
    dump.write_text(json.dumps(first) + "\n" + json.dumps({**last, "tags": ["mine"]}) + "\n")

    code, _, _ = run_cli("ingest", str(dump), "-t", "acme", "--set", "tags=nightly, ci", "--json")
    assert code == 0
    for run, tags in ((first, ["nightly", "ci"]), (last, ["mine", "nightly", "ci"])):
        code, out, _ = run_cli("show", run["trajectory_id"], "-t", "acme", "--json")
        assert code == 0 and json.loads(out)["tags"] == tags


@pytest.mark.parametrize(("given", "said"), [
    ("reward=abc", "--set reward=abc: field 'reward': Input should be a valid number"),
    ("quality_score=2", "--set quality_score=2: field 'quality_score': Input should be less than or equal to 1"),
    ("created_at=yesterday", "--set created_at=yesterday: field 'created_at': Input should be a valid datetime"),
])
def test_a_set_value_no_run_can_take_is_refused_before_reading(embedded, tmp_path: Path, given: str, said: str) -> None:
    """Bug: ``--set reward=abc`` was applied record by record: every run of the dump that left the field empty was
    rejected with the same reason (a dead-letter file of the whole dump, exit 3 or 4) and the others landed. A value
    no run can take is a bad argument: exit 2, nothing read or written, the field named."""
    first, _ = _valid_runs()
    dump = tmp_path / "runs.jsonl"
    dump.write_text(json.dumps(first) + "\n")

    for dry in ((), ("--dry-run",)):
        code, _, err = run_cli("ingest", str(dump), "-t", "acme", "--set", given, *dry)
        assert code == 2 and said in " ".join(err.split())
    code, out, _ = run_cli("stats", "-t", "acme", "--json")
    assert json.loads(out)["trajectories"] == 0


TAU = Path(__file__).parent / "fixtures" / "tau-bench" / "gpt-4o-airline-mini.json"


def _tau_runs(count: int) -> list[dict]:
    """``count`` runs of the real tau-bench results file, each a task of its own (as its ``run.py`` writes a
    results file: ``json.dump(results, f, indent=2)``, one entry per task and trial)."""
    runs = json.loads(TAU.read_text())
    return [dict(runs[n % len(runs)], task_id=n) for n in range(count)]


def _tau_ids(path: Path) -> list[tuple[str, str | None, str | None]]:
    return [(r.position, r.trajectory.trajectory_id.split("-")[-2] if r.ok else None, r.error)
            for r in read_dump(path, tenant="acme")]


def test_an_array_saved_with_a_bom_keeps_the_records_after_a_bad_one(tmp_path: Path) -> None:
    """Bug (review RNC3, D1): a results file saved "UTF-8 with BOM" (Notepad, PowerShell's ``-Encoding UTF8``,
    Python's ``utf-8-sig``) whose record 2 holds a cp1252 ``é``: records 1 and 2 were read... and nothing else, no
    error, exit 0: the scanner took the BOM for the start of one value holding the whole array. Cut short, the last
    record was lost unsaid. A BOM is passed over as the parser does; the record after the bad one is read."""
    runs = _tau_runs(4)
    text = json.dumps(runs, indent=2)
    bad = text.replace(f'"task_id": 1,', '"task_id": 1, "note": "caf\xe9",')
    dump = tmp_path / "results.json"
    dump.write_bytes(b"\xef\xbb\xbf" + bad.encode("cp1252", errors="replace"))
    read = _tau_ids(dump)
    assert [(position, run) for position, run, _ in read] == [
        ("record 1", "0"), ("record 2", None), ("record 3", "2"), ("record 4", "3")]
    assert read[1][2].startswith("not UTF-8 text: invalid continuation byte at byte ")

    dump.write_bytes(b"\xef\xbb\xbf" + text[:text.index('"task_id": 3') + 40].encode())
    assert _tau_ids(dump) == [("record 1", "0", None), ("record 2", "1", None), ("record 3", "2", None),
                              ("record 4", None, "malformed JSON: cut short: the record ends inside its JSON value")]


def test_a_windows_path_ending_in_a_backslash_stops_the_read_with_one_clear_error(tmp_path: Path) -> None:
    """Bug (review RNC3, D2): a hand-edited array whose record 2 holds ``"cwd": "C:\\work\\"`` (the path pasted as
    Explorer shows it): its last backslash escapes the closing quote, so the string runs on and every quote after it
    is out of step. Where it stood last in its object, the records after it were read as one (2 runs lost, said as
    one bad record); where a key followed, every inner message was read as a record (dozens of "missing field
    'task_id'"). Where the scanner cannot tell the records apart it says so, once, and gives no fragments; a bad
    escape elsewhere (``C:\\Users``, no backslash before a quote) still costs its record alone."""
    runs = _tau_runs(4)
    text = json.dumps(runs, indent=2)
    dump = tmp_path / "results.json"
    key_after = text.replace('"task_id": 1,', '"cwd": "C:\\work\\",\n    "task_id": 1,')
    for written in (key_after, _last_key(text)):
        dump.write_text(written)
        read = _tau_ids(dump)
        assert [(position, run) for position, run, _ in read] == [
            ("record 1", "0"), ("record 2", None), ("record 3", None)], read
        assert read[1][2].startswith("malformed JSON: Invalid \\escape")
        assert read[2][2].startswith("records after record 2 could not be told apart: not read (")
    dump.write_text(text.replace('"task_id": 1,', '"cwd": "C:\\work\\x",\n    "task_id": 1,'))
    assert [(position, run) for position, run, _ in _tau_ids(dump)] == [
        ("record 1", "0"), ("record 2", None), ("record 3", "2"), ("record 4", "3")]


def _last_key(text: str) -> str:
    """``text`` with the path as the last key of record 2 (before the ``}`` that closes it)."""
    start = text.index('"task_id": 1,')
    close = text.index('\n  },\n  {', start)
    return text[:close] + ',\n    "cwd": "C:\\work\\"' + text[close:]


def test_concatenated_objects_with_a_windows_path_ending_in_a_backslash_say_the_rest_is_not_read(
        tmp_path: Path) -> None:
    """The same path in ``jq .`` output of the runs (pretty-printed objects one after another): the records after it
    were read as one, lost with no word (review RNC3, D2)."""
    first, last = _valid_runs()
    runs = [first, {**first, "trajectory_id": "second", "metadata": {"cwd": "CWD"}}, last,
            {**last, "trajectory_id": "fourth"}]
    dump = tmp_path / "runs.json"
    dump.write_text("\n".join(json.dumps(run, indent=2) for run in runs).replace('"CWD"', '"C:\\work\\"'))
    read = _read(dump)
    assert [(position, run) for position, run, _ in read] == [
        ("record 1", first["trajectory_id"]), ("record 2", None), ("record 3", None)]
    assert read[2][2].startswith("records after record 2 could not be told apart: not read (")


def test_an_array_cut_short_is_read_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Bug (review RNC3, D3): an array cut short (a writer killed) was read a second time from its first byte, by the
    slower scanner, to find the records after the cut: there are none. A 172 MB file took 36 s instead of 7, the
    progress bar at 100% the while."""
    from trajsearch.ingest import sources

    scans: list[object] = []
    real = sources.value_texts
    monkeypatch.setattr(sources, "value_texts", lambda *args, **kwargs: scans.append(args) or real(*args, **kwargs))
    text = json.dumps(_tau_runs(3), indent=2)
    dump = tmp_path / "results.json"
    dump.write_text(text[:text.index('"task_id": 2') + 40])
    assert [(position, run) for position, run, _ in _tau_ids(dump)] == [
        ("record 1", "0"), ("record 2", "1"), ("record 3", None)]
    assert scans == []


@pytest.mark.parametrize(("extra", "said"), [
    ({"model_version": "gpt-4o-2024-08-06"}, "unexpected field 'model_version' (did you mean 'model_id'?)"),
    ({"agent_version": "1.4.2"}, "unexpected field 'agent_version' (did you mean 'policy_version'?)"),
    ({"version": "1.4.2"}, "unexpected field 'version' (did you mean 'policy_version'?)"),
    ({"status": "done"}, "unexpected field 'status'"),  # the run has its outcome
])
def test_a_field_suggestion_is_a_question_and_never_a_field_the_record_has(tmp_path: Path, extra: dict,
                                                                           said: str) -> None:
    """Bug (review RNC3, D7): suggestions were stated as fact and wrong: ``model_version`` "the schema's field is
    'tool_versions'", ``agent_version`` and ``version`` 'env_version' (the closest spellings; the agent's version is
    the schema's ``policy_version``), and ``status`` 'outcome' in a run that has its outcome."""
    first, _ = _valid_runs()
    assert first["outcome"] and first["model_id"]
    run = {k: v for k, v in first.items() if k not in ("model_id", "policy_version")}
    dump = tmp_path / "runs.jsonl"
    dump.write_text(json.dumps({**run, **extra}) + "\n" + json.dumps({**first, **extra}) + "\n")

    assert _read(dump) == [("line 1", None, f"invalid trajectory: {said}"),  # the run has a model_id: not asked
                           ("line 2", None, f"invalid trajectory: {said.split(' (')[0] if 'model' in said else said}")]


def test_hebrew_and_arabic_marks_are_shown_as_written(embedded, tmp_path: Path) -> None:
    """Bug (review RNC3, D4): a Hebrew task holding RIGHT-TO-LEFT MARKs (U+200F, what Hebrew text puts beside
    punctuation and numbers so they read in place) was shown as ``\\u200f`` escapes in the dry run and in
    ``--json``; the marks reorder nothing a letter would not. The overrides and isolates are still escaped."""
    first, last = _valid_runs()
    task = "\u05ea\u05e7\u05df \u05d0\u05ea \u05d4\u05d1\u05d0\u05d2 \u05d1-main.py\u200f (\u05d2\u05e8\u05e1\u05d4 2)\u200f"
    dump = tmp_path / "runs.jsonl"
    dump.write_text(json.dumps({**first, "task": task}, ensure_ascii=False) + "\n"
                    + json.dumps({**last, "task": "\u0627\u0641\u062a\u062d \u061c1.txt \u2067x\u2069"},
                                 ensure_ascii=False) + "\n")

    code, out, _ = run_cli("ingest", str(dump), "-t", "acme", "--dry-run", "--json")
    assert code == 0
    assert json.loads(out)["files"][0]["task"] == task and task in out and "\\u200f" not in out
    code, out, _ = run_cli("ingest", str(dump), "-t", "acme", "--dry-run")
    assert task in out


def test_set_refuses_a_list_the_shell_took_the_quotes_of(embedded, tmp_path: Path) -> None:
    """Bug (review RNC3, D6): ``--set tags=["nightly","ci"]`` typed without single quotes reaches trajsearch as
    ``tags=[nightly,ci]``, which tagged every run '[nightly' and 'ci]'. A value opening ``[`` or ``{`` that is no JSON
    is refused (exit 2) with both ways to write it; a text field takes it as text (``--set task=[WIP] ...``)."""
    first, _ = _valid_runs()
    dump = tmp_path / "runs.jsonl"
    dump.write_text(json.dumps({k: v for k, v in first.items() if k != "task_family"}) + "\n")

    code, _, err = run_cli("ingest", str(dump), "-t", "acme", "--dry-run", "--set", "tags=[nightly,ci]")
    said = " ".join(err.split())
    assert code == 2 and "--set tags=[nightly,ci]: not JSON" in said
    assert "--set tags=nightly,ci" in said and """--set 'tags=["nightly", "ci"]'""" in said
    code, out, _ = run_cli("ingest", str(dump), "-t", "acme", "--dry-run", "--json", "--set", "task_family=[WIP] x")
    assert code == 0, out


def test_set_tools_available_says_what_it_does(embedded) -> None:
    """Bug (review RNC3, D5): the help said a ``--set tools_available`` list is "added to the run's": it is given to a
    run that lists no tools, a run's own list being what its agent had."""
    code, out, _ = run_cli("ingest", "--help")
    said = " ".join(out.translate({ord(c): " " for c in "│╭╮╰╯─"}).split())  # rich's box, narrow or wide
    assert code == 0 and "tools_available for a run that lists none" in said and "added to the run's)" not in said


def test_a_record_missing_a_comma_or_with_a_trailing_one_costs_itself_alone(tmp_path: Path) -> None:
    """A hand-edited array whose record 2 lost a comma between two keys (after a number, or after an object's
    ``}``: a key deleted by hand with its comma, review R2-FNC: the seven runs after it were lost, blamed on a
    Windows path), or kept one after its last: its strings stand where strings do, so the records after it are
    told apart and read (review RNC3, D2's other side)."""
    runs = _tau_runs(4)
    text = json.dumps(runs, indent=2)
    dump = tmp_path / "results.json"
    for edited in (text.replace('"task_id": 1,', '"task_id": 1'), _record_with_trailing_comma(text),
                   _record_missing_comma_after_object(text)):
        dump.write_text(edited)
        assert [(position, run) for position, run, _ in _tau_ids(dump)] == [
            ("record 1", "0"), ("record 2", None), ("record 3", "2"), ("record 4", "3")]


def _record_with_trailing_comma(text: str) -> str:
    """``text`` with a comma after the last key of record 2."""
    start = text.index('"task_id": 1,')
    close = text.index('\n  },\n  {', start)
    return text[:close] + ',' + text[close:]


def _record_missing_comma_after_object(text: str) -> str:
    """``text`` with the comma after record 2's first object value (``"info": {...},``) left out."""
    start = text.index('"task_id": 1,')
    close = text.index('},\n', start)
    return text[:close + 1] + text[close + 2:]


@pytest.mark.parametrize("given", ["reward=", "outcome=", "created_at="])
def test_set_with_an_empty_value_is_refused_for_its_field_not_as_json(embedded, given: str) -> None:
    """``--set reward=`` was refused as "not JSON (did the shell take its quotes?)" with an object's quoting advice
    (an empty value was taken for JSON); it is refused for what the field takes (review R2-FNC)."""
    code, _, err = run_cli("ingest", "--dry-run", "-t", "acme", "--set", given, str(OWN))
    assert code == 2 and "JSON" not in err and f"--set {given}" in err, err


def test_an_array_missing_the_comma_between_two_records_says_so_and_loses_no_other(tmp_path: Path) -> None:
    """Two records of an array with no comma between them: the streaming parser gave the first and stopped; the
    scanner, cutting at commas, took both for one text, skipped it as read, and the record after them was numbered
    in the second's place: the second was dropped without a word (review RALL-A; the code before this session said
    "malformed JSON after record 1"). The second is said malformed, the third read as the third."""
    text = json.dumps(_tau_runs(3), indent=2)
    dump = tmp_path / "results.json"
    dump.write_text(text.replace("},\n  {", "}\n  {", 1))
    read = _tau_ids(dump)
    assert [(position, run) for position, run, _ in read] == [("record 1", "0"), ("record 2", None), ("record 3", "2")]
    assert "malformed JSON after record 1" in read[1][2]

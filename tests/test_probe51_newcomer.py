"""A newcomer's own runs, round two (probe 51, area NC2): native dumps with one bad record at the head, a leap
second, the real ingest's summary of rejections, and choice options that name themselves. Inputs are the bundled
sample (``trajsearch/samples/sample.jsonl``: real tau-bench and mini-swe-agent runs in the native format, see its
README) and the hand-written newcomer dump (``fixtures/native/.newcomer``, see its SOURCE.md), cut or mended in the
test as the writer named in each test's docstring would leave them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from cli_support import newcomer as embedded  # noqa: F401 (a fixture)
from trajsearch.cli import app
from trajsearch.ingest.detect import detect_format
from trajsearch.ingest.read import read_dump

SAMPLE = Path(__file__).parents[1] / "trajsearch" / "samples" / "sample.jsonl"
OWN = Path(__file__).parent / "fixtures" / "native" / ".newcomer" / "own-agent.jsonl"


def _cli(*args: str):
    return CliRunner().invoke(app, list(args))


def _own_lines() -> list[str]:
    return OWN.read_text().splitlines()


def _valid_own_lines() -> list[str]:
    """Lines 1 and 4 of the newcomer dump: the two its SOURCE.md calls valid against the schema."""
    lines = _own_lines()
    return [lines[0], lines[3]]


def test_a_chunk_of_split_b_starting_mid_record_is_read_as_native(tmp_path: Path) -> None:
    """Bug: ``split -b 100000 runs.jsonl`` (or a size-rotated log, a byte-range read of an object store) starts every
    chunk but the first inside a record. Detection looked at the first line only, found no format, and the chunk was
    "unrecognised": every whole run in it lost, where ``--format native`` read them. The first line is now one
    rejection, the last (cut too) another, and the runs between are read."""
    data = SAMPLE.read_bytes()
    chunk = tmp_path / "xab"
    chunk.write_bytes(data[100_000:200_000])
    whole = chunk.read_bytes().split(b"\n")[1:-1]

    assert detect_format(chunk) == "native"
    read = list(read_dump(chunk, tenant="demo"))
    assert [r.trajectory.trajectory_id for r in read if r.ok] == [json.loads(line)["trajectory_id"] for line in whole]
    errors = {r.position: r.error for r in read if not r.ok}
    assert list(errors) == ["line 1", f"line {len(whole) + 2}"]


def test_a_first_record_cut_short_keeps_the_records_after_it(tmp_path: Path) -> None:
    """Bug: a first line that opens a record and does not close it (a writer killed mid-line, then restarted with
    appends) made the file read as one pretty-printed document: "file: malformed JSON", every good line lost, with
    ``--format native`` too. It is read as JSON Lines; the cut line is said to be cut short, not "Expecting
    property name enclosed in double quotes (column 1)", which named a place that holds no fault."""
    first, last = _valid_own_lines()
    dump = tmp_path / "runs.jsonl"
    dump.write_text(first[:120] + "\n" + last + "\n")

    read = list(read_dump(dump, tenant="acme"))
    assert [(r.position, r.trajectory.trajectory_id if r.ok else None) for r in read] == [
        ("line 1", None), ("line 2", "ops-bot/2026-11-01/0004")]
    assert read[0].error == "malformed JSON: cut short: the line ends inside its JSON value, after column 120"
    assert [r.ok for r in read_dump(dump, fmt="native", tenant="acme")] == [False, True]


def test_a_first_record_with_a_bad_escape_or_a_misspelt_id_keeps_the_records_after_it(embedded, tmp_path: Path) -> None:
    """Bug: a hand-rolled writer's first record with a Windows path unescaped (``"C:\\Users"``: an invalid escape)
    lost the whole file as malformed JSON; one whose ``trajectory_id`` is spelt ``trajectoryId`` made the file
    "unrecognised". Either way the good runs after it were lost, and the summary said nothing of them. Each bad
    line is now one rejection, naming its fault."""
    first, last = _valid_own_lines()
    escaped = tmp_path / "escape.jsonl"
    escaped.write_text(first.replace('"task": "', '"task": "In C:\\Users\\ops ', 1) + "\n" + last + "\n")
    misspelt = tmp_path / "misspelt.jsonl"
    misspelt.write_text(first.replace('"trajectory_id"', '"trajectoryId"', 1) + "\n" + last + "\n")

    result = _cli("ingest", str(escaped), str(misspelt), "-t", "acme", "--dry-run", "--json")
    assert result.exit_code == 3, result.output
    files = {Path(f["source"]).name: f for f in json.loads(result.stdout)["files"]}
    # the run after the bad line is the same in both files: the second's is counted as a repeat (probe 52, NC3)
    assert {name: (f["format"], f["runs"] + f["repeated"]) for name, f in files.items()} == {
        "escape.jsonl": ("native", 1), "misspelt.jsonl": ("native", 1)}
    column = first.index('"task": "') + len('"task": "In C:') + 1  # the backslash before "Users"
    assert files["escape.jsonl"]["rejections"] == [
        {"position": "line 1", "reason": f"malformed JSON: Invalid \\escape (column {column})"}]
    assert files["misspelt.jsonl"]["rejections"][0]["reason"].startswith(
        "invalid trajectory: missing required field 'trajectory_id'; unexpected field 'trajectoryId'")


def test_a_pretty_printed_run_is_still_one_document(tmp_path: Path) -> None:
    """The other side of the rule above: a native run written with ``json.dump(run, f, indent=2)`` (its first line
    ``{``, the next an indented member) and one written with ``indent=0`` (no indentation at all) are each one
    record, not lines."""
    run = json.loads(_valid_own_lines()[1])
    for indent in (2, 0):
        dump = tmp_path / f"run-{indent}.json"
        dump.write_text(json.dumps(run, indent=indent))
        assert [r.trajectory.trajectory_id for r in read_dump(dump, tenant="acme")] == [run["trajectory_id"]]


def test_native_records_wrapped_in_an_object_are_told_how_to_unwrap(tmp_path: Path) -> None:
    """Bug: ``json.dump({"runs": runs}, f)``, a newcomer's first file, was an "unrecognised dump format" with the
    general hint to write native records: nothing said that the records were right and only their wrapping was not.
    The list is named, with the command that unwraps it; the records themselves, as a JSON array, are read."""
    runs = [json.loads(line) for line in _valid_own_lines()]
    wrapped = tmp_path / "runs.json"
    wrapped.write_text(json.dumps({"runs": runs}, indent=2))
    with pytest.raises(ValueError, match=r"no run in this file: a JSON object whose 'runs' list holds 2 native "
                                         r"record\(s\): .*jq -c '\.runs\[\]' FILE > runs\.jsonl"):
        detect_format(wrapped)
    array = tmp_path / "array.json"
    array.write_text(json.dumps(runs, indent=2))
    assert [r.ok for r in read_dump(array, tenant="acme")] == [True, True]


def test_a_leap_second_is_a_time(tmp_path: Path) -> None:
    """Bug: ``"created_at": "2016-12-31T23:59:60Z"`` (RFC 3339 allows a leap second; the schema's ``date-time`` is
    RFC 3339's) rejected its run with "unexpected extra characters at the end of the input". It is the last instant
    of the second before, so it still sorts after it; a step's times are read the same way."""
    run = json.loads(_valid_own_lines()[1])
    run["created_at"] = "2016-12-31T18:59:60.25-05:00"
    run["steps"][0]["started_at"] = "2016-12-31T23:59:60Z"
    dump = tmp_path / "leap.jsonl"
    dump.write_text(json.dumps(run) + "\n")

    (parsed,) = read_dump(dump, tenant="acme")
    assert parsed.ok, parsed.error
    assert parsed.trajectory.created_at.isoformat() == "2016-12-31T18:59:59.999999-05:00"
    assert parsed.trajectory.steps[0].started_at.isoformat() == "2016-12-31T23:59:59.999999+00:00"


def test_the_ingest_summary_says_each_reason_once_and_never_hides_a_distinct_one(embedded, tmp_path: Path) -> None:
    """Bug: the ingest's summary (not the dry run's, which groups) printed its first ten rejections line by line:
    eleven records refused for the same outcome word filled the ten lines, and the twelfth record's other fault was
    in no line (only in the dead-letter file). Each reason of a file is now one line, its records named."""
    good, bad = json.loads(_valid_own_lines()[1]), json.loads(_own_lines()[1])  # line 2: "outcome": "succeeded"
    records = [{**bad, "trajectory_id": f"bad-{n}"} for n in range(11)]
    records.append({**good, "trajectory_id": "no-task", "task": None})
    records.append(good)
    dump = tmp_path / "runs.jsonl"
    dump.write_text("".join(json.dumps(r) + "\n" for r in records))

    result = _cli("ingest", str(dump), "-t", "acme")
    assert result.exit_code == 3, result.output
    said = [line.strip() for line in result.stderr.splitlines() if line.strip().startswith("rejected ")]
    assert said == [
        f"rejected {dump}:line 1, line 2, line 3, line 4, line 5 and 6 more: invalid trajectory: field 'outcome': "
        "Input should be 'success', 'failure', 'infra_error' or 'unknown', got \"succeeded\"",
        f"rejected {dump}:line 12: invalid trajectory: field 'task': Input should be a valid string, got null"], \
        result.stderr
    assert "all rejections: " in result.stderr


def test_a_field_of_a_wrong_type_or_word_is_told_with_the_value_given(tmp_path: Path) -> None:
    """Bug: a field of a wrong type or word was told in pydantic's words alone ("Input should be 'success', ...";
    "Input should be a valid dictionary or instance of Failure", a Python class the schema does not name), leaving
    the writer of a long dump to find what their writer had put there. The value given follows, as JSON says it, and
    an object's fields are named."""
    run = json.loads(_valid_own_lines()[1])
    records = [{**run, "outcome": "succeeded"}, {**run, "failure": "OOM killed"},
               {**run, "steps": [{"index": "first", "action": "bash"}]}, {**run, "metadata": ["a"]}]
    dump = tmp_path / "runs.jsonl"
    dump.write_text("".join(json.dumps(r) + "\n" for r in records))

    assert [r.error for r in read_dump(dump, tenant="acme")] == [
        "invalid trajectory: field 'outcome': Input should be 'success', 'failure', 'infra_error' or 'unknown', "
        'got "succeeded"',
        "invalid trajectory: field 'failure': should be an object (error, cause, fix), got \"OOM killed\"",
        "invalid trajectory: field 'steps[0].index': Input should be a valid integer, unable to parse string as an "
        'integer, got "first"',
        "invalid trajectory: field 'metadata': Input should be a valid dictionary, got a list"]


@pytest.mark.parametrize("args, option, words", [
    (("serve", "--log-level", "bogus"), "--log-level", "DEBUG, INFO, WARNING, ERROR, CRITICAL"),
    (("ui", "--log-level", "bogus"), "--log-level", "DEBUG, INFO, WARNING, ERROR, CRITICAL"),
    (("ingest", str(OWN), "--group-by", "bogus", "--dry-run"), "--group-by", "trace, conversation"),
    (("delete", "--from", str(OWN), "--group-by", "bogus"), "--group-by", "trace, conversation"),
])
def test_a_choice_option_given_another_word_names_itself_and_its_words(embedded, args, option, words) -> None:
    """Bug: ``serve --log-level bogus`` (and ``ui``) ended as an unexpected error, "ValueError: Unknown level:
    'BOGUS'", exit 1, naming no option; ``--group-by bogus`` said "group_by must be one of", the library's name. Each
    is now a usage error (exit 2) naming the option and the words it takes, as a bad ``--level`` is."""
    result = _cli(*args)
    assert result.exit_code == 2, result.output
    assert f"error: {option} 'bogus' is not one of {words}\n" in result.output, result.output  # one line


def test_a_log_level_is_taken_in_any_case(embedded, tmp_path: Path) -> None:
    """``--log-level debug`` is DEBUG, as the service's logging setup took it before the option was checked (a bad
    address still fails after it, before anything is opened). Python's other names for a level were refused by the
    check until review RNC2 (D5): see :func:`test_a_log_level_python_takes_is_still_taken`."""
    result = _cli("serve", "--log-level", "debug", "--address", "0.0.0.0:1")
    assert result.exit_code == 2, result.output
    assert "--log-level" not in result.output


# -- review of the newcomer fixes (review RNC2) ---------------------------------------------------------------------

ANY_AGENT = Path(__file__).parent / "fixtures" / "otel-genai" / "any-agent" / "OPENAI_trace.json"
OTLP = Path(__file__).parent / "fixtures" / "otel-genai" / "openai-v2" / "otlp-latest.json"
FIXTURES = Path(__file__).parent / "fixtures"


def _runs(path: Path) -> list[tuple[str, int, str]]:
    parsed = list(read_dump(path, tenant=None))
    assert all(p.ok for p in parsed), [p.error for p in parsed if not p.ok]
    return sorted((p.trajectory.trajectory_id, len(p.trajectory.steps), p.trajectory.outcome.value) for p in parsed)


def _one_item_per_line(document: dict, key: str, comma_first: bool = False) -> str:
    """``document`` written as a script streaming a valid JSON file writes it: the wrapper opened on the first line,
    then one item per line, a comma after each item (or, ``comma_first``, before each but the first), then the
    closing brackets on a line of their own."""
    items = [json.dumps(item) for item in document[key]]
    body = "\n, ".join(items) if comma_first else ",\n".join(items)
    return f'{{"{key}": [\n{body}\n]}}\n'


@pytest.mark.parametrize("source, key, comma_first, pad", [
    (ANY_AGENT, "spans", False, False),
    (ANY_AGENT, "spans", True, False),
    (ANY_AGENT, "spans", False, True),
    (OTLP, "resourceSpans", False, False),
    (OTLP, "resourceSpans", False, True),
], ids=["any-agent", "any-agent-comma-first", "any-agent-past-the-peek", "otlp", "otlp-past-the-peek"])
def test_a_json_document_written_one_item_per_line_is_one_document(tmp_path: Path, source: Path, key: str,
                                                                  comma_first: bool, pad: bool) -> None:
    """Bug (review RNC2, D1): a valid JSON document written one item per line (``{"resourceSpans": [`` then one
    ``{...},`` per line; any-agent's ``{"spans": [``) was taken for JSON Lines with a broken first line: the first
    line and the closing ``]}`` rejected, a trace lost or stored with 0 steps (replacing a good one on re-ingest).
    The real export (any-agent's test asset, the OpenAI instrumentation's OTLP file) is written one item per line;
    ``pad`` makes its first item longer than the 64 KiB peek, so the head never holds the whole file."""
    document = json.loads(source.read_text())
    if pad:
        first = document[key][0]
        first.setdefault("padding", "x" * 70_000)
    path = tmp_path / source.name
    path.write_text(_one_item_per_line(document, key, comma_first))
    whole = tmp_path / ("whole-" + source.name)
    whole.write_text(json.dumps(document, indent=2))
    assert detect_format(path) == detect_format(whole) == "otel-genai"
    assert _runs(path) == _runs(whole)


@pytest.mark.parametrize("session, fmt", [
    ("codex-cli/.real/probe-c45/review-resumed/rollout-2026-12-04T22-17-26-01a24322-3a20-74c1-b45c-b3f17cb052e7.jsonl",
     "codex-cli"),
    ("claude-code/.real/headless-stream-json.jsonl", "claude-code"),
])
def test_a_whole_file_session_whose_first_line_is_cut_says_so_and_its_format(tmp_path: Path, session: str,
                                                                            fmt: str) -> None:
    """Bug (review RNC2, D2): a real Codex CLI rollout or Claude Code stream (whole-file formats, like Gemini CLI's
    and Qwen Code's sessions) whose first line a writer cut was "unrecognised dump format"; before the later lines
    were read, it said the first line's fault. It now says both, and the --format that reads the rest."""
    lines = (FIXTURES / session).read_text().splitlines()
    path = tmp_path / Path(session).name
    path.write_text("\n".join([lines[0][:len(lines[0]) // 2], *lines[1:]]) + "\n")
    with pytest.raises(ValueError) as raised:
        detect_format(path)
    said = str(raised.value)
    assert "line 1 is malformed JSON: cut short" in said, said
    assert f"the lines after it are {fmt} records" in said and f"--format {fmt}" in said, said
    assert "unrecognised" not in said


@pytest.mark.parametrize("cut, said", [
    ('"task": "Cancel reserv', "cut short: the line ends inside a string starting at column"),
    ('"task": "x", "outcome": "success", "steps": [], "extra": tr', "cut short: the line ends inside its JSON value"),
    ('"task": "x", "score": 0.', "cut short: the line ends inside its JSON value"),
])
def test_a_last_line_cut_without_its_newline_is_cut_short(tmp_path: Path, cut: str, said: str) -> None:
    """Bug (review RNC2, D3): the last line of a file has no newline when the file was cut (``split -b``'s chunk, a
    writer killed mid-record): cut inside a string it was "Unterminated string starting (column 32)", inside
    ``true`` or a number "Expecting value": no word that the line was cut."""
    first = SAMPLE.read_text().splitlines()[0]
    path = tmp_path / "runs.jsonl"
    path.write_text(first + '\n{"trajectory_id": "cut", "tenant": "demo", ' + cut)
    parsed = list(read_dump(path, tenant=None))
    assert [p.ok for p in parsed] == [True, False]
    assert parsed[1].position == "line 2" and said in parsed[1].error, parsed[1].error


def test_native_runs_wrapped_in_an_object_are_told_before_a_signature(tmp_path: Path) -> None:
    """Bug (review RNC2, D4): ``json.dump({"runs": runs}, f, indent=2)`` of native runs whose first run came from
    mini-swe-agent matched mini-swe-agent's signature: "missing field 'messages'", no word of the wrapper. A record
    an adapter says is no run is told as that before any format's words are looked for."""
    runs = [json.loads(line) for line in SAMPLE.read_text().splitlines()[17:20]]
    path = tmp_path / "runs.json"
    path.write_text(json.dumps({"runs": runs}, indent=2))
    with pytest.raises(ValueError) as raised:
        detect_format(path)
    said = str(raised.value)
    assert "a JSON object whose 'runs' list holds 3 native record(s)" in said and "jq -c '.runs[]'" in said, said


@pytest.mark.parametrize("word", ["warn", "FATAL", "notset"])
def test_a_log_level_python_takes_is_still_taken(embedded, word: str) -> None:
    """Bug (review RNC2, D5): ``--log-level warn`` (``fatal``, ``notset``), which Python's logging takes and the
    service took before the option checked its word, was refused. The check refuses only words nothing took."""
    result = _cli("serve", "--log-level", word, "--address", "0.0.0.0:1")
    assert result.exit_code == 2, result.output
    assert "--log-level" not in result.output


def test_a_rejected_value_and_field_are_escaped_and_clipped(tmp_path: Path) -> None:
    """Bug (review RNC2, D6): the value and the field an error names are the record's text: a C1 control (U+009B,
    a CSI to a terminal) went raw into the error, the dead-letter file and the terminal, and a 2,000-character key
    of controls filled the line. Both are written as the project's JSON text is (controls escaped), clipped."""
    run = json.loads(SAMPLE.read_text().splitlines()[0])
    bad_outcome = dict(run, outcome="\u202egnp.exe\u009b31m")
    bad_key = dict(run, tool_versions={"K\u001b[31m" + "k" * 2000: 5})
    path = tmp_path / "runs.jsonl"
    path.write_text(json.dumps(bad_outcome, ensure_ascii=False) + "\n" + json.dumps(bad_key, ensure_ascii=False) + "\n")
    errors = [p.error for p in read_dump(path, tenant=None)]
    assert len(errors) == 2 and all(e is not None for e in errors)
    assert "\u009b" not in errors[0] and "\\u009b31m" in errors[0], errors[0]
    assert "\u001b" not in errors[1] and "\\u001b[31m" in errors[1] and len(errors[1]) < 300, errors[1]


def test_an_integer_too_long_for_python_costs_only_its_record(embedded, tmp_path: Path) -> None:
    """Bug (review RNC2, 7): a line holding an integer of more than 4,300 digits (Python's limit) aborted the whole
    ingest, "Exceeds the limit (4300 digits)", exit 2, no file named; it is now that record's rejection and the
    batch keeps its good records."""
    lines = SAMPLE.read_text().splitlines()[:2]
    huge = lines[0].replace('"outcome":"failure"', '"outcome":' + "7" * 5000)
    assert huge != lines[0]
    path = tmp_path / "runs.jsonl"
    path.write_text(huge + "\n" + lines[1] + "\n")
    result = _cli("ingest", str(path), "--dry-run", "--tenant", "demo")
    assert result.exit_code == 3, result.output  # some records rejected, as the ingest would exit
    said = " ".join(result.output.split())
    assert "runs 1; rejected 1" in said and "line 1: malformed JSON: a number too long to read" in said, said


@pytest.mark.parametrize("after", ['"steps":[', '"tool_versions":{', '"task":'])
def test_a_first_record_cut_after_a_bracket_or_colon_is_still_one_bad_line(tmp_path: Path, after: str) -> None:
    """A cut line may end anywhere: right after a ``[``, a ``{`` or a ``:`` too (8 of 278 real files cut at a random
    byte, review RNC2). Telling a document written one item per line by its first line alone (any line ending in
    a wrapper opener) made such a file one malformed document and lost every record; only a first line that opens
    nothing but the wrapper's first member (``{"spans": [``) is a document's."""
    lines = SAMPLE.read_text().splitlines()[:3]
    cut = lines[0][:lines[0].index(after) + len(after)]
    path = tmp_path / "runs.jsonl"
    path.write_text("\n".join([cut, *lines[1:]]) + "\n")
    parsed = list(read_dump(path, tenant=None))
    assert [p.ok for p in parsed] == [False, True, True], [p.error for p in parsed]
    assert "cut short" in parsed[0].error

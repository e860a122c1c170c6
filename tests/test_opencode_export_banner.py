"""An ``opencode export`` kept with its ``Exporting session: <id>`` line (the CLI prints it on stderr; ``2>&1`` and
harnesses keeping the command's whole output put it first in the file) is the same session as without it: that one
line made the whole session an unrecognised file (tests/fixtures/opencode/.aud35/README.md)."""

from __future__ import annotations

import json
from pathlib import Path

from adapter_support import only
from cli_support import newcomer, run_cli  # noqa: F401 (a fixture)

AUD = Path(__file__).parent / "fixtures" / "opencode" / ".aud35"
BANNER = AUD / "jolly-eagle.with-banner.json"


def test_an_export_opening_with_the_clis_line_is_read_as_without_it(tmp_path: Path) -> None:
    bare = tmp_path / "bare.json"
    bare.write_text(BANNER.read_text().partition("\n")[2])
    run, plain = only(BANNER), only(bare)
    assert run.trajectory_id == plain.trajectory_id == "opencode.ses_39b5d713cffeRgAoxPIwS3Plus"
    assert run.task.startswith("Use the `gitter-commit` skill") and run.task == plain.task
    assert [s.action for s in run.steps] == [s.action for s in plain.steps] == ["skill", "task", "respond"]
    assert run.metadata["subagent_sessions"] == ["ses_39b5d3ed8ffea9fQ9vQMuZnTtO"]


def test_a_walk_reads_it_and_a_banner_before_no_export_is_named(tmp_path: Path, newcomer) -> None:
    """The likeliest banner'd non-export is the CLI's own failure (``2>&1`` keeps it, with its colour codes), or
    nothing at all: each is said, not a JSON parser's "Expecting value (column 1)"."""
    (tmp_path / "broken.json").write_text("Exporting session: ses_1\n\x1b[91m\x1b[1mError: \x1b[0mSession not found: "
                                          "ses_1\n")
    (tmp_path / "empty.json").write_text("Exporting session: ses_2\n")
    code, out, err = run_cli("ingest", str(BANNER), str(tmp_path / "broken.json"), str(tmp_path / "empty.json"),
                             "--dry-run")
    said = " ".join((out + err).split())
    assert code == 3, said
    assert "jolly-eagle.with-banner.json: format opencode; runs 1; rejected 0" in said, said
    assert 'after its "Exporting session" line: no session after it: Error: Session not found: ses_1' in said, said
    assert 'after its "Exporting session" line: nothing after it (the export printed no session)' in said, said
    assert "Expecting value" not in said and "\x1b" not in said, said


def test_a_never_prompted_export_with_the_line_is_passed_over_as_without_it(tmp_path: Path, newcomer) -> None:
    """A session created and never prompted holds no run: a walk passes it over whether or not the export kept the
    CLI's line (with it, it was a rejection, "no user prompt", and the walk failed)."""
    banner, _, bare = BANNER.read_text().partition("\n")
    for name, head in (("bare", ""), ("banner", banner + "\n")):
        folder = tmp_path / name
        folder.mkdir()
        export = json.loads(bare)
        export["messages"] = []
        (folder / "np.json").write_text(head + json.dumps(export))
        code, out, err = run_cli("ingest", str(folder), "--dry-run")
        said = " ".join((out + err).split())
        assert code == 0 and "rejected" not in said.replace("rejected 0", ""), (name, said)
        code, out, err = run_cli("ingest", str(folder / "np.json"), "--dry-run")
        said = " ".join((out + err).split())
        assert code == 2 and "no run in this file: an OpenCode session with no messages" in said, (name, said)


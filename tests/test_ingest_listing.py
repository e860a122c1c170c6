"""What the ingest does with the files it lists before it reads a record (probe G, round 12): archives and
compressions it does not read, a walk that passes them over, a file name that is not UTF-8, a file removed after
it was listed, one file named twice.

Every dump here is a real one (sources in the ``SOURCE.md`` beside each fixture), archived, compressed, renamed or
linked in the test as harnesses and operators do it.
"""

from __future__ import annotations

import bz2
import gzip
import json
import logging
import lzma
import os
import shutil
import tarfile
import zipfile
from pathlib import Path

import pytest

from cli_support import run_cli
from trajsearch.ingest.detect import detect_format
from trajsearch.ingest.read import plan_inputs, read_inputs

FIXTURES = Path(__file__).parent / "fixtures"
TAU = FIXTURES / "tau-bench" / "gpt-4o-airline-mini.json"  # 2 real tau-bench runs
TAU_RUNS = len(json.loads(TAU.read_text()))
OPENHANDS = FIXTURES / "openhands" / ".real" / "multi_swe_bench" / "output.jsonl"  # a real run_infer output line
SWE_TRAJ = FIXTURES / "swe-agent" / "default__gpt-4o" / "astropy__astropy-12907.traj"  # a real SWE-agent run
READS = "trajsearch reads JSON, JSON lines and their gzip or zstd, and .eval archives (inspect-ai)"


def _tar(target: Path, members: dict[str, Path], mode: str = "w") -> Path:
    with tarfile.open(target, mode) as tar:
        for name, path in members.items():
            tar.add(path, arcname=name)
    return target


def _reasons(paths: list[Path]) -> dict[str, str]:
    """Each input's rejections by file name, the reason without the path before it; a run read fails the test."""
    read = list(read_inputs(paths, tenant="acme"))
    assert not [p.trajectory.trajectory_id for p in read if p.ok]
    return {Path(p.source).name: p.error.split(": ", 1)[1] for p in read}  # type: ignore[union-attr]


def test_a_tar_archive_is_refused_whole_naming_what_it_is(tmp_path: Path) -> None:
    """Probe G, D2: a tar was read as the JSON lines after its 512-byte header. ``tar cf`` of two OpenHands run
    folders lost the run glued to each member's header ("malformed JSON") and stored the rest; ``tar czf`` of a
    tau-bench results file gave one "malformed JSON" per line of it. Either is refused whole, as zip is,
    told by the ``ustar`` header (gunzipped first), whatever the file is named."""
    oh = _tar(tmp_path / "oh.tar", {"run1/output.jsonl": OPENHANDS, "run2/output.jsonl": OPENHANDS})
    tau = _tar(tmp_path / "results.tar.gz", {"results.json": TAU}, "w:gz")
    renamed = shutil.copy(tau, tmp_path / "results.json.gz")  # a tarball saved under a dump's name
    assert _reasons([oh, tau, renamed]) == {
        "oh.tar": f"a tar archive (unpack it first: tar xf); {READS}",
        "results.tar.gz": f"a gzipped tar archive (unpack it first: tar xzf); {READS}",
        "results.json.gz": f"a gzipped tar archive (unpack it first: tar xzf); {READS}",
    }


def test_bzip2_xz_and_gzip_inside_gzip_are_named(tmp_path: Path) -> None:
    """Probe G, D6: these were "binary, not text (not UTF-8)", where zip is named. A gzip of a gzip is what a
    download saved with its ``Content-Encoding: gzip`` left on gives."""
    data = TAU.read_bytes()
    files = {"airline.json.bz2": bz2.compress(data), "airline.json.xz": lzma.compress(data),
             "double.json.gz": gzip.compress(gzip.compress(data))}
    for name, content in files.items():
        (tmp_path / name).write_bytes(content)
    assert _reasons([tmp_path / name for name in files]) == {
        "airline.json.bz2": f"bzip2-compressed (decompress it first: bunzip2); {READS}",
        "airline.json.xz": f"xz-compressed (decompress it first: xz -d); {READS}",
        "double.json.gz": f"gzip inside gzip (gunzip it once); {READS}",
    }


def _archives(folder: Path) -> Path:
    """A results folder as harnesses ship them: a tarball, a zip and a bzip2 of a real tau-bench results file."""
    folder.mkdir()
    _tar(folder / "results.tar.gz", {"results.json": TAU}, "w:gz")
    with zipfile.ZipFile(folder / "results.zip", "w") as zipped:
        zipped.write(TAU, "results.json")
    (folder / "airline.json.bz2").write_bytes(bz2.compress(TAU.read_bytes()))
    return folder


def test_a_walk_names_the_archives_it_passes_over(tmp_path: Path, caplog) -> None:
    """Probe G, D3: a walk passed over archives and compressed dumps without a word; beside a plain dump, the
    plain dump's runs are read and the others named."""
    folder = _archives(tmp_path / "walk")
    shutil.copy(TAU, folder / "gpt-4o-airline.json")
    with caplog.at_level(logging.WARNING, logger="trajsearch.ingest.read"):
        read = list(read_inputs([folder], tenant="acme"))
    assert len(read) == TAU_RUNS and all(p.ok for p in read)
    assert ("passed over 3 archive(s) / compressed file(s) trajsearch does not read: airline.json.bz2 (bzip2), "
            "results.tar.gz (tar), results.zip (zip): unpack them to read their runs") in caplog.text


def test_a_folder_of_only_archives_is_told_so_not_that_nothing_was_there(tmp_path: Path, home: Path) -> None:
    """Probe G, D3: ``ingest`` of a folder of only archives said "no run in the input: its files hold no record of
    their format", rc 0, though no file was opened: a cron job took it for success. It is one rejection naming
    them, and the exit code says nothing landed."""
    folder = _archives(tmp_path / "walk")
    for extra in ((), ("--dry-run",)):
        code, stdout, stderr = run_cli("ingest", str(folder), "-t", "acme", *extra)
        assert code == 4, stdout + stderr
        said = " ".join(stderr.split())
        assert ("file: no dump file here, only 3 archive(s) / compressed file(s) trajsearch does not read: "
                "airline.json.bz2 (bzip2), results.tar.gz (tar), results.zip (zip): unpack them to read their runs"
                ) in said and said.count(f"{folder}") == 1, said  # the folder named once, before its position
        assert "hold no record of their format" not in stderr


def test_a_file_name_not_utf8_is_refused_alone_and_the_rest_lands(tmp_path: Path, home: Path) -> None:
    """Probe G, D4: a SWE-agent run named in Latin-1 (as unzip of a Windows-made archive leaves it) aborted the
    whole ingest with a bare codec error, rc 2, nothing stored; the dry run said rc 3 and blamed "half of a
    character cut in two". That file is one rejection, named with its byte escaped; the run beside it lands, and
    the dry run agrees on the exit code."""
    folder = tmp_path / "names"
    folder.mkdir()
    shutil.copy(SWE_TRAJ, os.path.join(os.fsencode(folder), b"caf\xe9-latin1.traj"))
    shutil.copy(TAU, folder / "gpt-4o-airline.json")
    escaped = f"{folder}/caf\\xe9-latin1.traj"
    for extra in (("--dry-run",), ("--json",)):
        code, stdout, stderr = run_cli("ingest", str(folder), "-t", "acme", *extra)
        assert code == 3, stdout + stderr
    report = json.loads(stdout)
    assert report["ingested"] == TAU_RUNS and report["rejected"] == 1
    [rejection] = report["rejections"]
    assert rejection["source"] == escaped
    assert rejection["reason"] == (f"{escaped}: the name 'caf\\xe9-latin1.traj' is not UTF-8 (byte 0xE9): rename it "
                                   "(convmv -f latin1 -t utf8, for one): run ids are made of names")


def test_a_file_removed_after_the_listing_is_said_gone_not_empty(tmp_path: Path) -> None:
    """Probe G, D5: files removed while the ingest ran (a harness's clean-up, ``rsync --delete``) were each
    "empty file (0 bytes): no run to read", sending the operator after a writer that truncates files."""
    folder = tmp_path / "runs"
    folder.mkdir()
    for name in ("a.json", "b.json"):
        shutil.copy(TAU, folder / f"gpt-4o-airline-{name}")
    units = plan_inputs([folder])
    (folder / "gpt-4o-airline-b.json").unlink()
    read = list(read_inputs([folder], tenant="acme", units=units))
    assert sum(p.ok for p in read) == TAU_RUNS
    assert [(Path(p.source).name, p.error) for p in read if not p.ok] == [
        ("gpt-4o-airline-b.json", "no longer exists (removed after the ingest listed it)")]
    with pytest.raises(ValueError, match=r"gpt-4o-airline-b\.json: no longer exists \(removed after the ingest "):
        detect_format(folder / "gpt-4o-airline-b.json")  # removed between the listing and its detection


def test_one_file_named_several_ways_is_read_once(tmp_path: Path, caplog) -> None:
    """Probe G, D7: a file named in its folder, on its own, through ``..`` and through a link was read once per
    name: a dry run counted its runs three times over. It is read once, and a warning says it was named again."""
    runs = tmp_path / "dd" / "w1"
    runs.mkdir(parents=True)
    dump = Path(shutil.copy(TAU, runs / "gpt-4o-airline-w1.json"))
    (tmp_path / "dd" / "w3").mkdir()
    (tmp_path / "link.json").symlink_to(dump)
    named = [runs, dump, tmp_path / "dd" / "w3" / ".." / "w1", tmp_path / "link.json"]
    with caplog.at_level(logging.WARNING, logger="trajsearch.ingest.read"):
        read = list(read_inputs(named, tenant="acme"))
    assert len(read) == TAU_RUNS and all(p.ok for p in read)
    assert f"named more than once, read once: {dump} (4 times)" in caplog.text


def test_a_walk_names_an_otlp_export_written_as_protobuf(tmp_path: Path, caplog) -> None:
    """Probe W1: ``harbor traces export --format otel --encoding pb`` writes ``<trial>.pb`` files (a real one here); a
    walk passed them over without a word ("dry run: nothing written", rc 0). They are named, with the JSON encoding
    asked for; beside a plain dump, its runs are read."""
    folder = tmp_path / "walk"
    folder.mkdir()
    real = Path(__file__).parent / "fixtures" / "openinference" / ".real" / "probe47w1"
    shutil.copy(real / "harbor-0.26-atif2otel-0.1.1-hermes.pb", folder / "fix-config__h1.pb")
    shutil.copy(TAU, folder / "gpt-4o-airline.json")
    with caplog.at_level(logging.WARNING, logger="trajsearch.ingest.read"):
        read = list(read_inputs([folder], tenant="acme"))
    assert len(read) == TAU_RUNS and all(p.ok for p in read)
    assert ("1 OTLP export(s) in protobuf trajsearch does not read: fix-config__h1.pb (binary protobuf): export them "
            "as OTLP/JSON to read their runs") in caplog.text

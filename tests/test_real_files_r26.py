"""Real files of the formats trajsearch reads, from sources it had not seen (round 26, AUD6)."""
from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from trajsearch.ingest.read import read_inputs
from trajsearch.model import Trajectory

FIXTURES = Path(__file__).parent / "fixtures"
WEB_SESSION = FIXTURES / "claude-code/.web/sample_session.json"


def _runs(path: Path) -> list[Trajectory]:
    """The runs a folder or file reads as (its other files passed over or rejected)."""
    return [p.trajectory for p in read_inputs([path]) if p.trajectory is not None]


def _dry_run(*args: str | Path) -> tuple[int, str, str]:
    """``trajsearch ingest --dry-run ARGS``: its exit status, its output and what it told on stderr."""
    done = subprocess.run([sys.executable, "-m", "trajsearch.cli", "ingest", *map(str, args), "-t", "x",
                           "--dry-run"], capture_output=True, text=True, check=False)
    return done.returncode, done.stdout, done.stderr


def test_a_claude_code_web_session_is_read_as_its_conversation() -> None:
    """Claude Code for web keeps a session behind Anthropic's session API, which answers ``{"loglines": [...]}``
    (the transcript's records); claude-code-transcripts ``web --json`` saves that as a JSON file, and its own
    sample of the shape holds message records cut to ``type``, ``timestamp`` and ``message``. It was "unrecognised
    dump format"; it reads as the Claude Code session it holds."""
    code, out, _ = _dry_run(WEB_SESSION, "--json")
    assert code == 0
    [file] = json.loads(out)["files"]
    assert (file["format"], file["runs"], file["rejected"]) == ("claude-code", 1, 0)
    [run] = _runs(WEB_SESSION)
    assert run.task == "Create a simple Python function to add two numbers"
    assert [s.action for s in run.steps] == ["Write", "Bash", "TodoWrite", "Bash", "Bash", "Glob", "Edit",
                                                  "Grep", "Bash", "respond"]
    assert run.steps[0].arguments == {"file_path": "/project/math_utils.py", "content":
                                        'def add(a: int, b: int) -> int:\n    """Add two numbers together."""\n'
                                        "    return a + b\n"}
    failed = [i for i, s in enumerate(run.steps) if s.error]
    assert failed == [8] and "expected 5 but got None" in (run.steps[8].error or "")
    assert run.metadata["user_prompts"] == ["Now edit the file to add a subtract function", "Run the tests again"]


NEVER_RAN_JOB = FIXTURES / "atif/.real/harbor-never-ran-job/nova-complex-docker"


def test_a_harbor_job_folder_without_its_trial_folders_says_where_the_runs_are(tmp_path: Path) -> None:
    """A Harbor job's own files (``config.json``, ``result.json``, ``job.log``) copied without its trial folders
    were two "unrecognised dump format" rejections and exit 4, nothing said of the trials; they are the job's
    own files, holding no run, and the report says the trial folders (the runs) are not there."""
    job = tmp_path / "nova-complex-docker"
    job.mkdir()
    for name in ("config.json", "result.json", "job.log"):
        (job / name).write_bytes((NEVER_RAN_JOB / name).read_bytes())
    code, _, told = _dry_run(job)
    assert code == 0
    told = " ".join(told.split())
    for name in ("config.json", "result.json", "job.log"):
        assert (f"{job / name}: no run in this file: Harbor's own {name} of job nova-complex-docker, not a run: the "
                "folder holds no trial folder (its result.json counts 16; each a trial's") in told


RUNME_JOB = FIXTURES / "atif/.real/harbor-runme/2026-06-30__14-22-55"


def test_a_trialless_harbor_job_folder_is_told_whichever_harbor_wrote_it(tmp_path: Path) -> None:
    """Harbor 0.16's ``JobConfig`` has no ``orchestrator`` (``n_concurrent_trials`` took its place): its job's own
    files (``config.json``, ``result.json``, ``lock.json``) without the trial folder were still three "unrecognised
    dump format" rejections, exit 4. They are told by what every version writes, as 0.1's are."""
    job = tmp_path / "2026-06-30__14-22-55"
    job.mkdir()
    for name in ("config.json", "result.json", "lock.json"):
        (job / name).write_bytes((RUNME_JOB / name).read_bytes())
    code, out, told = _dry_run(job)
    told = " ".join(told.split())
    assert code == 0 and "rejected" not in told, told
    for name in ("config.json", "result.json", "lock.json"):
        assert (f"{job / name}: no run in this file: Harbor's own {name} of job {job.name}, not a run: the folder "
                "holds no trial folder (its result.json counts 1; each a trial's") in told


def test_a_harbor_job_that_counts_no_trial_is_told_it_ran_none(tmp_path: Path) -> None:
    """A job whose ``result.json`` counts no trial (``n_total_trials`` 0: no task matched) was told "the folder
    holds none of its trial folders", as if some had been left out."""
    job = tmp_path / "empty-job"
    job.mkdir()
    (job / "config.json").write_bytes((NEVER_RAN_JOB / "config.json").read_bytes())
    result = json.loads((NEVER_RAN_JOB / "result.json").read_text())
    (job / "result.json").write_text(json.dumps({**result, "n_total_trials": 0}))
    code, _, told = _dry_run(job)
    told = " ".join(told.split())
    assert code == 0 and "its result.json counts no trial, so the job has no run" in told, told
    assert "trial folder" not in told


SESSION = FIXTURES / "claude-code/1af7fc5e-8455-4414-9ccd-011d40f70b2a.jsonl"
TIMED_OUT_TRIAL = FIXTURES / "atif/.real/harbor-timeout-unfinished"


def test_files_not_named_as_dumps_beside_the_dumps_read_are_named(tmp_path: Path) -> None:
    """A folder's files not named as dumps were told only when the walk found no dump at all: beside one, a run
    saved as ``session.log`` was left out unsaid. They are named (the largest first); a producer's own files read
    with a run (a Harbor trial's ``trial.log``, ``exception.txt``) are not."""
    (tmp_path / "runs").mkdir()
    (tmp_path / "runs" / SESSION.name).write_bytes(SESSION.read_bytes())
    (tmp_path / "runs" / "session.log").write_bytes(SESSION.read_bytes())
    (tmp_path / "notes.txt").write_text("what these runs are\n")
    code, out, told = _dry_run(tmp_path)
    assert code == 0 and "runs 1;" in out
    assert ("2 file(s) passed over by name, the largest first: runs/session.log, notes.txt; name a file itself to "
            "read it") in " ".join(told.split())
    code, out, told = _dry_run(TIMED_OUT_TRIAL)
    assert code == 0 and "runs 1;" in out and "passed over by name" not in told


WEB_EVENTS = FIXTURES / "claude-code/.web/web-execute-events.jsonl"


def test_a_claude_code_web_sessions_events_are_read_past_its_environment_log() -> None:
    """A web session's live events open with the environment manager's ``env_manager_log`` lines (fetching the
    repository, starting Claude Code), then the CLI's stream-json: detection saw the first line only, and the file
    was "unrecognised dump format" though ``--format claude-code`` read it."""
    code, out, _ = _dry_run(WEB_EVENTS, "--json")
    assert code == 0
    [file] = json.loads(out)["files"]
    assert (file["format"], file["runs"], file["rejected"]) == ("claude-code", 1, 0)
    [run] = _runs(WEB_EVENTS)
    assert run.task == "Hello world" and run.model_id == "claude-sonnet-4-20250514"
    assert [(s.action, s.arguments) for s in run.steps] == [
        ("respond", {"content": "Hello! I'm Claude Code, ready to help you with your software engineering tasks."})]


MINI_SWEBENCH = FIXTURES / "mini-swe-agent/.swebench-2.4.6/out"
SWE_AGENT_RUN = FIXTURES / "swe-agent/.real/sa-1.1.0-refusals/run2/demo__greet-2/demo__greet-2.traj"
OPENHANDS_EVAL = FIXTURES / "openhands/.real/opendevin-eval/prontoqa-output.jsonl"
TRANSCRIPT_PAGES = FIXTURES / "claude-code/.transcripts-html/session_01ABC"


def _copy(source: Path, target: Path) -> None:
    """``source`` (a file or a folder) copied to ``target``, its folders made."""
    target.parent.mkdir(parents=True, exist_ok=True)
    (shutil.copytree if source.is_dir() else shutil.copyfile)(source, target)


def _side_files(folder: Path, names: list[str]) -> None:
    """Files named as a producer names them beside its runs (what they hold does not matter to a walk)."""
    for name in names:
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text("a producer's own file\n")


def _swe_agent_run_batch(root: Path) -> None:
    """A SWE-agent ``run_batch`` output folder as ``sweagent/run/run_batch.py`` lays it out: per instance, beside
    ``<id>/<id>.traj``, ``<id>.pred``, ``.patch``, ``.config.yaml`` and its three logs; the run set's log,
    configuration, exit statuses and ``preds.json``."""
    _copy(SWE_AGENT_RUN, root / "demo__greet-2" / SWE_AGENT_RUN.name)
    _side_files(root, [f"demo__greet-2/demo__greet-2{suffix}" for suffix in (
        ".pred", ".patch", ".config.yaml", ".debug.log", ".info.log", ".trace.log")]
        + ["run_batch.log", "run_batch.config.yaml", "run_batch_exit_statuses.yaml"])


def _openhands_eval(root: Path) -> None:
    """An OpenHands SWE-bench evaluation folder: ``output.jsonl`` (the runs) with the evaluation's README, the
    per-instance inference log (``infer_logs/``) and what ``eval_infer.py`` writes per instance (``eval_outputs/``)."""
    _copy(OPENHANDS_EVAL, root / "output.jsonl")
    _side_files(root, ["README.md", "infer_logs/instance_ponylang__ponyc-4588.log"]
                + [f"eval_outputs/ponylang__ponyc-4588/{name}"
                   for name in ("eval.sh", "patch.diff", "run_instance.log", "test_output.txt")])


def _transcript_pages(root: Path) -> None:
    """claude-code-transcripts' output folder: its HTML pages and, with ``--json``, the session file it read."""
    _copy(TRANSCRIPT_PAGES, root)
    _copy(WEB_SESSION, root / "session_01ABC.json")


@pytest.mark.parametrize("make", [
    lambda root: _copy(MINI_SWEBENCH, root), _swe_agent_run_batch, _openhands_eval, _transcript_pages,
], ids=["mini-swe-agent", "swe-agent", "openhands", "claude-code-transcripts"])
def test_a_producers_own_files_beside_its_runs_are_not_named_but_a_run_kept_under_another_name_is(
        tmp_path: Path, make) -> None:
    """The files each producer writes beside its runs (mini-swe-agent's ``minisweagent.log`` and
    ``exit_statuses_*.yaml``, SWE-agent's six files per instance, an OpenHands evaluation's logs and
    ``eval_outputs/``, claude-code-transcripts' pages, a folder's ``README.md``) were all named as "passed over by
    name": 300 SWE-agent instances made it "1000+ file(s)", the one file that mattered lost among them. They go
    unnamed; a run kept as ``session.log`` beside them is still named, alone."""
    root = tmp_path / "out"
    make(root)
    code, out, told = _dry_run(root)
    assert code == 0 and "rejected 0;" in out and "passed over by name" not in told, told
    (root / "session.log").write_bytes(SESSION.read_bytes())
    code, out, told = _dry_run(root)
    assert ("1 file(s) passed over by name, the largest first: session.log; name a file itself to read it"
            in " ".join(told.split())), told


def test_why_nothing_was_read_reaches_a_json_user(tmp_path: Path) -> None:
    """Under ``--json`` a trial-less Harbor job folder printed ``{"files": []}``, exit 0, and nothing on stderr,
    where a reader without --json was told the folder holds the job's files and not its trials. The JSON on stdout
    is unchanged; the note is said on stderr, as the walk's warnings and the no-dump-file line are under --json."""
    job = tmp_path / "nova-complex-docker"
    job.mkdir()
    for name in ("config.json", "result.json", "job.log"):
        (job / name).write_bytes((NEVER_RAN_JOB / name).read_bytes())
    code, out, told = _dry_run(job, "--json")
    assert code == 0 and json.loads(out)["files"] == []
    told = " ".join(told.split())
    assert "no run in the input: 3 file(s) passed over as holding none" in told
    assert f"{job / 'config.json'}: no run in this file: Harbor's own config.json of job nova-complex-docker" in told


WEB_ANSWER = FIXTURES / "claude-code/.web/session_1af7fc5e.json"


def test_a_web_session_of_whole_records_reads_as_the_transcript_it_holds() -> None:
    """What users have of a web session is the session API's answer (``claude-code-transcripts web --json`` saves
    it): every record whole under ``loglines``, not the cut-down sample. It reads as the very run its transcript
    does, under the same id (ingesting both keeps one run)."""
    code, out, _ = _dry_run(WEB_ANSWER, "--json")
    assert code == 0
    [file] = json.loads(out)["files"]
    assert (file["format"], file["runs"], file["rejected"]) == ("claude-code", 1, 0)
    [web], [transcript] = _runs(WEB_ANSWER), _runs(SESSION)
    assert web.model_dump(mode="json") == transcript.model_dump(mode="json")


def test_a_run_kept_under_another_name_is_named_behind_a_thousand_side_files(tmp_path: Path) -> None:
    """The walk kept the first 1,000 files not named as dumps and then left out the known ones: behind 1,200
    SWE-agent side files (200 instances) a ``session.log`` was never looked at, and a count of what was left was
    marked "+" as if more were unseen. The 1,000 counted are those no producer is known to write."""
    _swe_agent_run_batch(tmp_path)
    _side_files(tmp_path, [f"inst__{n:03}/inst__{n:03}{suffix}" for n in range(200) for suffix in (
        ".pred", ".patch", ".config.yaml", ".debug.log", ".info.log", ".trace.log")])
    (tmp_path / "zz").mkdir()
    (tmp_path / "zz" / "session.log").write_bytes(SESSION.read_bytes())
    code, out, told = _dry_run(tmp_path)
    assert code == 0 and "rejected 0;" in out
    assert "1 file(s) passed over by name, the largest first: zz/session.log;" in " ".join(told.split()), told

"""Every read and write command of the CLI, against both backends: the embedded store and a server.

One CLI (``trajsearch.cli``) renders the results; ``--server`` / ``$TRAJSEARCH_SERVER``
only changes where the verbs run. The server is real (gRPC on 127.0.0.1) and
so is Milvus Lite; the embedder is the fast hashing *test* embedder.
"""

from __future__ import annotations

import json
from pathlib import Path

from cli_support import backend, run_cli  # noqa: F401 (fixture)
from conftest import failing_run, make_run


def dump(tmp_path: Path) -> Path:
    path = tmp_path / "dump.jsonl"
    runs = [make_run("c1", tenant="acme"), failing_run("c2", "KeyError: 'user_id'", tenant="acme")]
    path.write_text("\n".join([runs[0].model_dump_json(exclude={"tenant"}), "{broken",
                               runs[1].model_dump_json(exclude={"tenant"})]) + "\n")
    return path


def test_every_command_on_both_backends(backend, tmp_path: Path) -> None:
    code, out, err = run_cli("ingest", str(dump(tmp_path)), "--json", "--quiet")
    assert code == 3, err  # the dump's broken line is rejected, the rest lands
    report = json.loads(out)
    assert (report["read"], report["ingested"], report["rejected"]) == (3, 2, 1)
    # a local ingest's fields on both (round 22, CLI6: over --server a script's report["seconds"] was a KeyError)
    assert {"units", "units_already_done", "units_streamed", "seconds", "checkpoint", "dead_letter", "error",
            "clipped", "passed_over", "renamed", "outcomes"} <= set(report), sorted(report)
    assert report["units_already_done"] == report["units_streamed"] == 0 and report["error"] is None

    code, out, err = run_cli("search", "KeyError user_id", "-k", "2", "--json")
    assert code == 0, err
    hits = json.loads(out)
    assert hits[0]["trajectory_id"] == "c2" and hits[0]["tenant"] == "acme"

    code, out, err = run_cli("search", "pytest payments", "--level", "step", "-e", "1")
    assert code == 0, err
    assert "> " in out and ("c1" in out or "c2" in out)

    code, out, err = run_cli("similar", "KeyError: 'user_id'", "--json")
    assert code == 0, err
    assert json.loads(out)[0]["trajectory_id"] == "c2"

    code, out, err = run_cli("show", "c2", "--steps", "1:1")
    assert code == 0, err
    assert "KeyError" in out and "pip install" not in out

    code, out, err = run_cli("stats", "--json")
    assert code == 0, err
    stats = json.loads(out)
    assert stats["trajectories"] == 2 and stats["tenant"] == "acme"
    # the same fields on both (round 22, CLI6 3: the server's lacked lexical and window), but the store's own path
    assert set(stats) - {"uri"} == {"tenant", "embedder", "lexical", "window", "trajectories", "rows", "rows_by_level",
                                    "runs_by_outcome"}, stats
    assert ("uri" in stats) == (backend == "embedded") and stats["lexical"] == "memory"  # Milvus Lite: BM25 here
    assert stats["window"] == {"size": 3, "stride": 2}, stats  # the default windows

    code, out, err = run_cli("exemplars", "Fix the failing unit test in the payments service", "--json")
    assert code == 0, err
    data = json.loads(out)
    assert data["strategy"] in ("follow_closely", "use_as_inspiration", "plan_from_scratch")
    assert all(item["provenance"]["trajectory_id"] == "c1" for item in data["items"])

    code, out, err = run_cli("exemplars", "python -m app KeyError: 'user_id'", "--warnings")
    assert code == 0, err
    assert "c2" in out


def test_errors_are_one_line_with_the_right_exit_code(backend, tmp_path: Path) -> None:
    run_cli("ingest", str(dump(tmp_path)), "--quiet")
    code, out, err = run_cli("show", "no-such-run")
    assert code == 1 and "no trajectory 'no-such-run'" in err and "Traceback" not in err
    code, out, err = run_cli("search", "   ")  # a usage error, as click words a bad value (round 22, CLI6)
    assert code == 2 and "nothing to search by" in err and "Traceback" not in err
    code, out, err = run_cli("similar")  # the argument as --help and the blank refusal name it (review RT2, 7)
    assert code == 2 and err.splitlines() == ["error: give either text or --id"]
    code, out, err = run_cli("search", "exit code 137", "--expand", "-1")  # the option's name, not the API's
    assert code == 2 and "--expand" in err and "before/after" not in err
    code, out, err = run_cli("search", "exit code 137", "--level", "passage", "--mode", "dense")
    assert code == 2 and "searched by their words only" in err  # not "no matches"


def test_server_only_commands_and_a_wrong_key(backend, monkeypatch) -> None:
    if backend == "embedded":
        code, out, err = run_cli("whoami")
        assert code == 2 and "talks to a server" in err
        return
    code, out, err = run_cli("whoami")
    assert code == 0 and json.loads(out)["tenant"] == "acme"
    code, out, err = run_cli("health")
    assert code == 0 and json.loads(out)["status"] == "SERVING"
    monkeypatch.setenv("TRAJSEARCH_API_KEY", "ts_wrong")
    code, out, err = run_cli("stats")  # the operator's words, not the gRPC metadata a hand-written client sends
    err = " ".join(err.split())  # the console wraps
    assert code == 2 and "refused the API key in $TRAJSEARCH_API_KEY: it is not one of that server's keys" in err
    assert "send metadata" not in err and "request id" in err
    monkeypatch.delenv("TRAJSEARCH_API_KEY")
    code, out, err = run_cli("stats")
    assert code == 2 and "no API key: set $TRAJSEARCH_API_KEY" in " ".join(err.split())
    code, out, err = run_cli("search", "x", "--tenant", "other")
    assert code == 2


def test_an_unexpected_error_is_one_line_and_debug_shows_the_traceback(tmp_path: Path) -> None:
    import os
    import subprocess
    import sys

    # a data directory whose LOCK is a folder: Milvus Lite fails to open it ("Open local milvus failed") and no
    # diagnosis of ours is written for that, so it is an unexpected error (this test's errors of rounds 23 and 24, a
    # store path that is a file and one not ending in .db, are both diagnosed now)
    (tmp_path / "store.db" / "LOCK").mkdir(parents=True)
    env = {**os.environ, "TRAJSEARCH_MODEL": "hashing", "TRAJSEARCH_HOME": str(tmp_path / "home")}
    env.pop("TRAJSEARCH_DEBUG", None)
    args = [sys.executable, "-m", "trajsearch.cli"]
    store = ["stats", "--uri", str(tmp_path / "store.db"), "--traces", str(tmp_path / "t")]
    plain = subprocess.run([*args, *store], env=env, capture_output=True, text=True, timeout=600)
    assert plain.returncode == 1
    assert plain.stderr.count("\n") == 1 and "Traceback" not in plain.stderr and "--debug" in plain.stderr
    debug = subprocess.run([*args, "--debug", *store], env=env, capture_output=True, text=True, timeout=600)
    assert debug.returncode != 0 and ("Traceback" in debug.stderr or "╭" in debug.stderr)


REAL = Path(__file__).parent / "fixtures"
SWEBENCH_RUN = REAL / "mini-swe-agent/.real/swebench-gemini-3-pro"  # a run, its harness reports and their summary
SWE_AGENT_RUN_DIR = REAL / "swe-agent/.real/gpt4__swe-bench-dev-easy_first_only__default__t-0.00__p-0.95__c-3.00__install-1"


def test_outcome_files_join_on_both_backends_and_say_how_many_runs_they_matched(backend) -> None:
    """Bugs (real SWE-bench outputs): a summary keeping its records under ``instances`` joined nothing, silently;
    a folder of per-instance reports was an IsADirectoryError; ``--server`` dropped ``--outcomes``; the reports and
    predictions beside the runs were rejected as unrecognised dumps."""
    code, out, err = run_cli("ingest", str(SWEBENCH_RUN / "trajs"), "--quiet")
    assert code == 0, err
    code, out, err = run_cli("search", "ModelAdmin inlines", "--level", "summary", "--json")
    [hit] = json.loads(out)
    code, out, err = run_cli("show", hit["trajectory_id"], "--steps", "0:0")
    assert "outcome=submitted, not evaluated" in out  # no verdict yet: not shown as a success
    code, out, err = run_cli("ingest", str(SWEBENCH_RUN), "--outcomes", str(SWEBENCH_RUN / "results_summary.json"),
                             "--json", "--quiet")
    assert code == 0, err
    report = json.loads(out)
    assert (report["ingested"], report["rejected"]) == (1, 0)  # its three report.json and the summary passed over
    assert report["outcomes"] == {"file": "results_summary.json", "verdicts": 500, "runs": 1, "matched": 1,
                                  "outcomes": {"success": 1}}
    code, out, err = run_cli("show", hit["trajectory_id"], "--json")
    assert code == 0, err
    shown = json.loads(out)
    assert shown["outcome"] == "success"
    assert shown["metadata"]["outcome_basis"] == "outcomes file results_summary.json"

    # a folder of the harness's reports, each written without its instance id: the folder names it
    code, out, err = run_cli("ingest", str(SWEBENCH_RUN / "trajs"), "--outcomes", str(SWEBENCH_RUN / "logs"), "--quiet")
    assert code == 0, err
    assert "outcomes file logs/ (3 files): a verdict for 1 of 1 run(s) read" in " ".join(out.split())
    code, out, err = run_cli("show", hit["trajectory_id"], "--json")
    assert json.loads(out)["metadata"]["outcome_basis"] == "outcomes file logs/ (3 files)"

    # verdicts for other runs: said, not silent; SWE-agent's all_preds.jsonl beside its run is no rejection
    code, out, err = run_cli("ingest", str(SWE_AGENT_RUN_DIR), "--outcomes", str(SWEBENCH_RUN / "results_summary.json"),
                             "--quiet")
    assert code == 0, err
    assert "rejected 0" in out
    assert "joined no verdict" in err and "500 ids" in " ".join(err.split())


def test_side_files_named_alone_say_what_they_are(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("TRAJSEARCH_MODEL", "hashing")
    monkeypatch.setenv("TRAJSEARCH_HOME", str(tmp_path))
    code, out, err = run_cli("ingest", "--dry-run", str(SWE_AGENT_RUN_DIR / "all_preds.jsonl"))
    assert code == 2 and "SWE-bench predictions" in " ".join(err.split())
    code, out, err = run_cli("ingest", "--dry-run", str(SWEBENCH_RUN / "results_summary.json"))
    assert code == 2 and "pass it (or its folder) with --outcomes" in " ".join(err.split())
    code, out, err = run_cli("ingest", "--dry-run", str(SWEBENCH_RUN), "--outcomes", str(SWEBENCH_RUN / "no-such.json"))
    assert code == 2 and "no-such.json:nosuchfileordirectory" in "".join(err.split())


def test_an_older_swebench_report_beside_its_runs_is_passed_over_and_says_what_it_failed(tmp_path: Path,
                                                                                          monkeypatch) -> None:
    """Real: AutoCodeRover's SWE-agent runs and their first-harness report, which lists only the resolved."""
    monkeypatch.setenv("TRAJSEARCH_MODEL", "hashing")
    monkeypatch.setenv("TRAJSEARCH_HOME", str(tmp_path))
    run_dir = REAL / "swe-agent/.real/acr-swe-agent-gpt4-lite"
    code, out, err = run_cli("ingest", "--dry-run", str(run_dir), "--outcomes", str(run_dir / "final_report.json"))
    assert code == 0, err
    said = " ".join(out.split())
    assert ("outcomes file final_report.json: a verdict for 3 of 3 run(s) read: 2 failure (2 of them not listed as resolved "
            "in it), 1 success") in said
    code, out, err = run_cli("ingest", "--dry-run", "--json", str(run_dir), "--outcomes", str(run_dir / "final_report.json"))
    report = json.loads(out)
    assert [(Path(f["source"]).name, f["outcomes"]) for f in report["files"]] == [  # the report itself: no rejection
        ("django__django-11283.traj", {"failure": 1}), ("pylint-dev__pylint-7114.traj", {"failure": 1}),
        ("pytest-dev__pytest-5227.traj", {"success": 1})]


def test_recordings_of_one_gemini_session_ingested_apart_are_two_runs(backend) -> None:
    """Bug (real: M-Gemini's two recordings of one session, before and after ``/clear``): both had the run id
    ``gemini-cli.<sessionId>``, so ingesting the second on its own replaced the first, without a word."""
    folder = REAL / "gemini-cli/.real/one-session-two-recordings"
    for name in ("session-2025-12-30T07-24-a1c91f1a.json", "session-2025-12-30T07-44-a1c91f1a.json"):
        code, out, err = run_cli("ingest", str(folder / name), "--quiet")
        assert code == 0, err
    code, out, err = run_cli("search", "change theme of qt-based gui apps", "--level", "task", "--json")
    code2, out2, err2 = run_cli("search", "fix the gemini web app link", "--level", "task", "--json")
    first, second = json.loads(out)[0]["trajectory_id"], json.loads(out2)[0]["trajectory_id"]
    assert first != second and {first, second} == {
        "gemini-cli.a1c91f1a-1a8b-4f17-96c8-ce5d4b9163a5.2025-12-30T07-25-51-744Z",
        "gemini-cli.a1c91f1a-1a8b-4f17-96c8-ce5d4b9163a5.2025-12-30T07-44-49-582Z"}


def test_show_prints_a_sessions_later_prompts(backend) -> None:
    """OpenHands' own replay trajectory: the user's follow-ups are kept as the run's later prompts, and shown."""
    code, out, err = run_cli("ingest", str(REAL / "openhands/.real/runtime-trajs/basic_interactions.json"), "--quiet")
    assert code == 0, err
    code, out, err = run_cli("search", "what's 1+1?", "--level", "task", "--json")
    [hit] = json.loads(out)
    code, out, err = run_cli("show", hit["trajectory_id"])
    assert code == 0, err
    assert "later prompts: No, I mean by Goldbach's conjecture! | Finish please" in " ".join(out.split())


def test_formats_gives_each_format_its_whole_summary():
    """``trajsearch formats`` printed each adapter docstring's first line, so a summary wrapped over two lines stopped
    mid-sentence ("sessions of Kimi Code CLI (...), the terminal coding agent, as"): it is the first paragraph."""
    code, out, _ = run_cli("formats", "--json")
    assert code == 0
    described = {row["format"]: row["description"] for row in json.loads(out)}
    assert described["kimi-cli"].endswith("as its context file keeps them.")
    assert all(text.endswith((".", ")")) for text in described.values()), described

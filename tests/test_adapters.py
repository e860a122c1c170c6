"""Format adapters and dump reading, against small fixtures modelled on real dumps."""

from __future__ import annotations

import gzip
import json
import uuid
from pathlib import Path

import pytest

from trajsearch.ingest.adapters.mini_swe_agent import outcome_for, task_family
from trajsearch.ingest.read import Parsed, detect_format, read_dump
from trajsearch.model import Outcome

from adapter_support import only

FIXTURES = Path(__file__).parent / "fixtures"
NATIVE = FIXTURES / "native" / "mixed.jsonl"
MINI_TOOLCALLS = (
    FIXTURES
    / "mini-swe-agent/deepseek_chat_dev/marshmallow-code__marshmallow-1343/marshmallow-code__marshmallow-1343.traj.json"
)
MINI_LEGACY = FIXTURES / "mini-swe-agent/sonnet_legacy/pvlib__pvlib-python-1072/pvlib__pvlib-python-1072.traj.json"
TAU = FIXTURES / "tau-bench" / "gpt-4o-airline-mini.json"


# -- native --------------------------------------------------------------------------------


def test_native_bad_lines_are_reported_and_good_lines_kept() -> None:
    results = list(read_dump(NATIVE, tenant="acme"))

    assert [r.position for r in results] == ["line 1", "line 2", "line 3", "line 4", "line 5"]
    assert all(r.source == str(NATIVE) for r in results)
    assert [r.trajectory.trajectory_id for r in results if r.ok] == ["run-0001", "run-0005", "run-0002"]
    errors = {r.position: r.error for r in results if not r.ok}
    assert errors["line 2"].startswith("malformed JSON: Expecting ',' delimiter")
    assert errors["line 3"] == "invalid trajectory: missing required field 'task'"
    # a task over its limit is clipped as every format clips it, not rejected (probe F, F4)
    clipped = results[3].trajectory.task
    assert len(clipped) <= 20_000 and "characters clipped ...]" in clipped


def test_native_record_is_kept_as_written() -> None:
    first = next(iter(read_dump(NATIVE, tenant="acme"))).trajectory
    assert first.tenant == "acme"
    assert first.failure.cause == "backoff timer mocked at the wrong module"
    assert first.steps[0].error == "AssertionError: expected 3 retries, got 2"
    assert first.tools_used == ["bash", "edit"]


def test_native_tenant_comes_from_the_operator() -> None:
    results = list(read_dump(NATIVE, tenant="other"))
    assert not any(r.ok for r in results)
    assert results[0].error.startswith("record tenant 'acme' does not match the tenant given ('other'")

    kept = [r.trajectory for r in read_dump(NATIVE, tenant=None) if r.ok]
    assert [t.tenant for t in kept] == ["acme", "acme", "acme"]


def test_defaults_fill_only_empty_fields() -> None:
    runs = [r.trajectory for r in read_dump(NATIVE, tenant="acme", defaults={"env_version": "ci-v9", "tags": ["imported"]}) if r.ok]
    assert [t.env_version for t in runs] == ["ci-v3", "ci-v9", "ci-v9"]
    assert runs[1].tags == ["imported"]
    with pytest.raises(ValueError, match="tenant"):
        read_dump(NATIVE, defaults={"tenant": "x"})
    with pytest.raises(ValueError, match="colour"):
        read_dump(NATIVE, defaults={"colour": "blue"})


def test_nested_field_paths_are_named(tmp_path: Path) -> None:
    dump = tmp_path / "runs.jsonl"
    record = {"trajectory_id": "r1", "tenant": "default", "task": "t", "steps": [{"index": 0, "tool": "bash"}]}
    dump.write_text(json.dumps(record) + "\n")
    [result] = read_dump(dump, fmt="native")
    assert result.error == "invalid trajectory: unexpected field 'steps[0].tool' (did you mean 'action'?)"


# -- mini-swe-agent ------------------------------------------------------------------------


def test_mini_swe_agent_tool_call_dump_mapping() -> None:
    run = only(MINI_TOOLCALLS)

    assert run.trajectory_id == "deepseek-chat.marshmallow-code__marshmallow-1343.dad46cc6e1"
    assert run.task.startswith("[version 2.20.0] TypeError: 'NoneType' object is not subscriptable\nAfter update")
    assert "<pr_description>" not in run.task and "Consider the following" not in run.task
    assert (run.task_id, run.task_family) == ("marshmallow-code__marshmallow-1343", "marshmallow-code/marshmallow")
    assert run.model_id == "deepseek/deepseek-chat"
    assert run.tool_versions == {"mini-swe-agent": "2.2.7"}
    assert run.outcome is Outcome.failure
    assert run.metadata["exit_status"] == "LimitsExceeded"

    steps = run.steps
    assert [s.action for s in steps] == ["bash", "bash", None, "bash", "bash"]
    assert steps[0].thought == "Let me reproduce the issue first."
    assert steps[0].arguments == {"command": "python reproduce_issue.py"}
    assert steps[0].observation.startswith("<returncode>1</returncode>")
    assert steps[0].error == "TypeError: 'NoneType' object is not subscriptable (exit code 1)"
    assert steps[0].started_at < steps[0].ended_at
    assert steps[1].error is None  # grep's "no match": exit 1 without output
    assert steps[2].error.startswith("Error parsing tool call arguments")
    assert steps[4].error == (
        "FAILED tests/test_schema.py::test_nested_validates - TypeError: 'NoneType' object is not subscriptable "
        "(exit code 1)"
    )
    assert run.failure.error.startswith("LimitsExceeded: last failing step 4 (`python -m pytest")
    assert "TypeError: 'NoneType' object is not subscriptable" in run.failure.error


def test_mini_swe_agent_legacy_bash_block_dump_mapping() -> None:
    run = only(MINI_LEGACY)

    # no reply saved a mark of its attempt (1.x): the folder tells it apart; its id before round 27 is named
    assert run.trajectory_id == "claude-sonnet-4-20250514.pvlib__pvlib-python-1072.sonnet_legacy"
    assert run.metadata["former_ids"][0] == "sonnet_legacy.pvlib__pvlib-python-1072"
    assert run.task.startswith("temperature.fuentes errors when given tz-aware inputs")
    assert run.outcome is Outcome.success and run.failure is None
    assert "not evaluated" in run.metadata["outcome_basis"]
    assert run.metadata["submission_chars"] > 0
    assert [s.arguments for s in run.steps] == [
        {"command": "grep -n 'np.diff' pvlib/temperature.py"},
        {"command": "python reproduce.py"},
        {"command": "echo MINI_SWE_AGENT_FINAL_OUTPUT && git diff"},
    ]
    assert run.steps[1].thought == "Run the reproduction script."
    assert run.steps[1].error == (
        "TypeError: float() argument must be a string or a number, not 'Timedelta' (exit code 1)"
    )
    assert run.steps[2].observation.startswith("diff --git a/pvlib/tools.py")


@pytest.mark.parametrize(
    ("status", "outcome"),
    [
        ("Submitted", Outcome.success),
        ("LimitsExceeded", Outcome.failure),
        ("TimeoutExpired", Outcome.failure),
        ("InternalServerError", Outcome.infra_error),
        ("Timeout", Outcome.infra_error),  # litellm.Timeout: the model API, not the agent
        (None, Outcome.unknown),
    ],
)
def test_mini_swe_agent_exit_status_to_outcome(status: str | None, outcome: Outcome) -> None:
    assert outcome_for(status) is outcome


def test_task_family_from_instance_id() -> None:
    assert task_family("pvlib__pvlib-python-1606") == "pvlib/pvlib-python"
    assert task_family("no-separator-1") is None


@pytest.mark.parametrize("layout", ["system/trajs/{id}/{id}.traj.json", "system/trajs/{id}.traj.json",
                                    "system/{id}/{id}.traj.json", "system/{id}.traj.json"])
def test_mini_swe_agent_run_is_named_by_its_system_in_every_layout(tmp_path: Path, layout: str) -> None:
    """SWE-bench experiments keep a system's runs in ``<system>/trajs/``: the run set is the system, not "trajs"
    (what outcome files are told apart by, and the id a store written before round 23 holds the run under)."""
    instance = "marshmallow-code__marshmallow-1343"
    path = tmp_path / layout.format(id=instance)
    path.parent.mkdir(parents=True)
    path.write_bytes(MINI_TOOLCALLS.read_bytes())
    run = only(path)
    assert (run.metadata["config"], run.metadata["former_ids"][0]) == ("system", f"system.{instance}")
    assert run.trajectory_id == only(MINI_TOOLCALLS).trajectory_id  # the file's own attempt, in any layout


def test_mini_swe_agent_infra_error_keeps_the_exception(tmp_path: Path) -> None:
    record = json.loads(MINI_TOOLCALLS.read_text())
    record["info"].update(
        exit_status="InternalServerError",
        exception_str="litellm.InternalServerError: DeepseekException - [SSL: UNEXPECTED_EOF_WHILE_READING]",
    )
    path = tmp_path / "cfg" / "x.traj.json"
    path.parent.mkdir()
    path.write_text(json.dumps(record))
    run = only(path)
    assert run.trajectory_id == only(MINI_TOOLCALLS).trajectory_id  # its own attempt, whatever folder it is in
    assert run.outcome is Outcome.infra_error
    assert run.failure.error == (
        "InternalServerError: litellm.InternalServerError: DeepseekException - [SSL: UNEXPECTED_EOF_WHILE_READING]"
    )
    assert run.failure.cause.startswith("infrastructure")


# -- tau-bench -----------------------------------------------------------------------------


def test_tau_bench_mapping() -> None:
    results = list(read_dump(TAU, tenant="demo"))
    assert [r.position for r in results] == ["record 1", "record 2"]
    failed, passed = (r.trajectory for r in results)

    assert failed.trajectory_id == "tau-gpt-4o-airline-mini-0-t0"
    assert (failed.task_id, failed.task_family, failed.tenant) == ("airline-0", "airline", "demo")
    assert failed.task.startswith("You are mia_li_3668. You want to fly from New York to Seattle")
    assert (failed.outcome, failed.reward) == (Outcome.failure, 0.0)
    assert (passed.outcome, passed.reward) == (Outcome.success, 1.0)
    assert passed.failure is None and passed.metadata["trial"] == 1

    steps = failed.steps
    assert [s.action for s in steps] == [None, "respond", "get_user_details", "book_reservation", "respond"]
    assert steps[0].observation == "Hi! I'm looking to book a flight from New York to Seattle on May 20th."
    assert steps[1].arguments == {"content": "To assist you with booking a flight, I'll need your user ID. Could you please provide that?"}
    assert steps[1].observation == "Sure, my user ID is mia_li_3668."
    assert steps[2].arguments == {"user_id": "mia_li_3668"} and steps[2].error is None
    assert steps[3].error == "Error: payment amount does not add up, total price is 305, but paid 255"
    assert failed.failure.error == (
        "reward 0.0: final database state differs from the expected one; last tool error: "
        "book_reservation -> Error: payment amount does not add up, total price is 305, but paid 255"
    )
    assert failed.failure.cause.startswith(  # its one booking failed: it wrote nothing (probe E, E1)
        "book_reservation failed on its call (Error: payment amount does not add up, total price is 305, but paid 255),"
        " so it changed nothing; the closest call differed: payment_methods expected")
    assert '"amount":55' in failed.failure.cause and '"amount":5}' in failed.failure.cause


def test_tau_bench_domain_from_defaults_and_jsonl_layout(tmp_path: Path) -> None:
    dump = tmp_path / "results.jsonl"
    dump.write_text("".join(json.dumps(run) + "\n" for run in json.loads(TAU.read_text())))
    assert detect_format(dump) == "tau-bench"
    runs = list(read_dump(dump, defaults={"task_family": "retail"}))
    assert [r.position for r in runs] == ["line 1", "line 2"]
    assert [r.trajectory.task_id for r in runs] == ["retail-0", "retail-0"]
    assert runs[0].trajectory.trajectory_id == "tau-results-0-t0"


def test_tau_bench_tool_replies_matched_by_id_then_order(tmp_path: Path) -> None:
    def call(cid, name):
        return {"id": cid, "type": "function", "function": {"name": name, "arguments": "{}"}}

    traj = [
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": "checking", "tool_calls": [call("a", "get_user_details"), call("b", "get_reservation_details")]},
        {"role": "tool", "tool_call_id": "b", "name": "get_reservation_details", "content": "reservation"},
        {"role": "tool", "tool_call_id": "a", "name": "get_user_details", "content": "user"},
        {"role": "assistant", "content": None, "tool_calls": [call(None, "search_direct_flight")]},
        {"role": "tool", "name": "search_direct_flight", "content": "Error: no flights"},
    ]
    run = {"task_id": 7, "trial": 0, "reward": 0.0, "info": {"task": {"instruction": "find a flight"}}, "traj": traj}
    dump = tmp_path / "airline.json"
    dump.write_text(json.dumps([run]))
    steps = only(dump).steps
    assert [(s.action, s.observation) for s in steps[1:]] == [
        ("get_user_details", "user"),
        ("get_reservation_details", "reservation"),
        ("search_direct_flight", "Error: no flights"),
    ]
    assert steps[1].thought == "checking" and steps[2].thought is None
    assert steps[3].error == "Error: no flights"


# -- reading -------------------------------------------------------------------------------


def test_detect_format() -> None:
    assert detect_format(NATIVE) == "native"
    assert detect_format(MINI_TOOLCALLS) == "mini-swe-agent"
    assert detect_format(TAU) == "tau-bench"


def test_detect_format_by_content_and_through_gzip(tmp_path: Path) -> None:
    renamed = tmp_path / "run.json"  # no .traj.json hint: content decides
    renamed.write_bytes(MINI_LEGACY.read_bytes())
    assert detect_format(renamed) == "mini-swe-agent"
    packed = tmp_path / "dump.jsonl.gz"
    packed.write_bytes(gzip.compress(NATIVE.read_bytes()))
    assert detect_format(packed) == "native"
    assert [r.ok for r in read_dump(packed, tenant="acme")] == [True, False, False, True, True]


def test_unknown_format_is_a_clear_error(tmp_path: Path) -> None:
    odd = tmp_path / "notes.jsonl"  # (a tau-bench few-shot line, messages_display, is refused as what it is)
    odd.write_text(json.dumps({"note": "user: hi\nassistant: hello"}) + "\n")
    with pytest.raises(ValueError, match=r"notes\.jsonl: unrecognised dump format.*native.*tau-bench"):
        detect_format(odd)
    with pytest.raises(ValueError, match="notes.jsonl"):
        read_dump(odd)  # raised at call time, not on first iteration
    with pytest.raises(ValueError, match="unknown format 'hermes'"):
        read_dump(NATIVE, fmt="hermes")


def test_truncated_gzip_keeps_records_before_the_break(tmp_path: Path) -> None:
    good = json.loads(NATIVE.read_text().splitlines()[0])
    lines = []
    for n in range(300):  # random ids keep the stream from compressing to nothing
        good.update(trajectory_id=f"run-{n:04d}", task=f"task {uuid.uuid4().hex} {uuid.uuid4().hex}")
        lines.append(json.dumps(good))
    packed = gzip.compress(("\n".join(lines) + "\n").encode())
    dump = tmp_path / "cut.jsonl.gz"
    dump.write_bytes(packed[: len(packed) // 2])

    results = list(read_dump(dump, tenant="acme"))
    *kept, last = results
    assert 10 < len(kept) < 300
    assert all(r.ok for r in kept)
    assert [r.trajectory.trajectory_id for r in kept] == [f"run-{n:04d}" for n in range(len(kept))]
    assert last.position == f"line {len(kept) + 1}"
    assert last.error.startswith(f"truncated or corrupt gzip stream after line {len(kept)}")


def test_an_unforeseen_record_shape_does_not_stop_the_file(tmp_path: Path) -> None:
    runs = json.loads(TAU.read_text())
    broken = dict(runs[0], traj=[{"role": "assistant", "tool_calls": ["not-a-dict"]}])
    dump = tmp_path / "airline.json"
    dump.write_text(json.dumps([broken, runs[1]]))
    first, second = read_dump(dump)
    assert first.error.startswith("cannot convert tau-bench record: AttributeError")
    assert second.ok


def test_directory_is_read_recursively_in_sorted_order() -> None:
    results = list(read_dump(FIXTURES, tenant="acme"))
    per_file = [r for r in results if r.fmt is None or r.fmt in ("native", "mini-swe-agent", "tau-bench", "swe-agent", "atif",
                                                                 "claude-code", "codex-cli", "gemini-cli", "openhands")]
    sources = [Path(r.source).relative_to(FIXTURES).as_posix() for r in per_file]
    assert sources == sorted(sources)  # one file after another, in sorted order
    assert "mini-swe-agent/deepseek_chat_dev/preds.json" not in sources  # sidecar, not a run
    # span files are grouped per format after the per-file inputs: one result per trace
    grouped = results[len(per_file):]
    assert [r.fmt for r in grouped] == (["langfuse"] * 2 + ["langsmith"] * 2 + ["openai-agents"] * 4
                                        + ["openinference"] * 2 + ["otel-genai"] * 9 + ["vercel-ai"] * 10)
    assert len(per_file) == 2 + 5 + 2 + 1 + 1 + 7  # mini, native, tau, atif, swe-agent, CLI sessions
    assert sum(r.ok for r in results) == 2 + 3 + 2 + 1 + 1 + 8 + 4 + 7 + 10 + 7  # vercel-ai: 2 embedding traces passed over
    # a SWE-bench report among the dumps is passed over like preds.json: verdicts, for --outcomes
    assert "outcomes/swebench-report.json" not in sources and all(r.fmt is not None for r in results)


def test_parsed_holds_exactly_one_verdict() -> None:
    with pytest.raises(ValueError):
        Parsed("f", "line 1")
    assert str(Parsed("f", "line 1", error="boom")) == "f, line 1: error: boom"


def test_reading_twice_gives_identical_runs() -> None:
    """No 'now' leaks into a run: re-ingesting an unchanged dump must change nothing."""
    for path in (TAU, NATIVE, MINI_LEGACY):
        first = [r.trajectory for r in read_dump(path, tenant="acme") if r.ok]
        again = [r.trajectory for r in read_dump(path, tenant="acme") if r.ok]
        assert first and first == again
    native_without_time = [r.trajectory for r in read_dump(NATIVE, tenant="acme") if r.ok]
    assert native_without_time[0].created_at.isoformat() == "2025-03-01T12:00:00+00:00"


def test_bundled_sample_is_valid_native_dump() -> None:
    sample = Path(__file__).parents[1] / "trajsearch" / "samples" / "sample.jsonl"
    assert sample.stat().st_size < 450_000
    runs = [r for r in read_dump(sample, tenant="demo")]
    assert all(r.ok for r in runs), [r.error for r in runs if not r.ok]
    sources = {r.trajectory.metadata["source_format"] for r in runs}
    outcomes = {r.trajectory.outcome for r in runs}
    assert len(runs) >= 20 and sources == {"tau-bench", "mini-swe-agent"}
    assert {Outcome.success, Outcome.failure, Outcome.infra_error} <= outcomes

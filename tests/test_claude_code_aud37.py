"""Claude Code 2.1.337's scheduler and safeguards. A dynamic ``/loop``'s wakeup (``ScheduleWakeup``) re-runs the
user's ``/loop`` as a command record marked ``wakeupSource: "loop_wakeup"`` (echoed in stream-json with
``wakeup_source``): the CLI's, no request of the user's. A ``CronCreate`` task's fire is not echoed in stream-json: its
prompt is the one the stream's ``CronCreate`` call scheduled, as the transcript reads it. A prompt the model's
safeguards refused that the CLI withdrew once the user prompted again (``blocked_prompts_withdrawn``) is no request.
The real files (``claude-code/.aud37/`` and ``.aud35/``) are the CLI's own; their origin is in their ``README.md``."""

from __future__ import annotations

import json
from functools import partial
from pathlib import Path

from trajsearch.ingest.read import read_dump
from trajsearch.model import Trajectory

FIXTURES = Path(__file__).parent / "fixtures" / "claude-code"
LOOP = FIXTURES / ".aud37" / "loop-wakeup-2.1.337"
LOOP_SESSION = LOOP / "aa653e71-8b2b-4166-9a80-abb49c8e9e4d.jsonl"
CRON = FIXTURES / ".aud35" / "cron-fire-2.1.332"
LOOP_STEPS = ["ToolSearch", "ScheduleWakeup", "respond", "ScheduleWakeup", "respond"]


def _run(path: Path) -> Trajectory:
    (parsed,) = list(read_dump(path, tenant="acme"))
    assert parsed.trajectory is not None, parsed.error
    return parsed.trajectory


def test_a_loop_wakeup_is_no_prompt_of_the_user() -> None:
    """Bug: the wakeup re-running ``/loop LOOPTASK: check the build`` (a command record, not ``isMeta``, marked
    ``wakeupSource: "loop_wakeup"``) with its expansion was read as the user's follow-up prompt."""
    run = _run(LOOP_SESSION)
    assert run.task == "/loop LOOPTASK: check the build"
    assert not run.metadata.get("user_prompts")
    assert [s.action for s in run.steps] == LOOP_STEPS


def test_a_loop_wakeup_reads_alike_in_the_stream_and_the_transcript() -> None:
    """The stream of the same session (its wakeup echoed with ``wakeup_source``) gives the same task and steps."""
    run = _run(LOOP / "stream-json-stdout.jsonl")
    assert run.task == "/loop LOOPTASK: check the build" and not run.metadata.get("user_prompts")
    assert [s.action for s in run.steps] == LOOP_STEPS
    assert run.metadata["scheduled_turns"] == 1


def test_a_stream_opened_by_a_loop_wakeup_is_read(tmp_path: Path) -> None:
    """Bug: the stream from the wakeup on (as a host that started its output there holds it) was refused, saying
    stream-json never echoes what a scheduler fires, though it holds the echo of the ``/loop`` the wakeup re-ran
    (the user's own words, passed back verbatim): that is its task, ``task_from`` naming the wakeup, and its steps
    are kept."""
    lines = (LOOP / "stream-json-stdout.jsonl").read_text().splitlines()
    start = next(n for n, line in enumerate(lines) if json.loads(line).get("wakeup_source") == "loop_wakeup")
    (path := tmp_path / "stdout.jsonl").write_text("\n".join(lines[start:]) + "\n")
    run = _run(path)
    assert run.task == "/loop LOOPTASK: check the build" and run.metadata["task_from"] == "loop_wakeup"
    assert [s.action for s in run.steps] == LOOP_STEPS[-2:] and run.metadata["scheduled_turns"] == 1


def test_a_fired_tasks_prompt_is_recovered_in_the_stream() -> None:
    """Bug: stream-json does not echo the prompt a ``CronCreate`` task fires, and the turn it started answered no
    prompt; the transcript of the same session has it. It is the prompt the stream's ``CronCreate`` call set."""
    stream = _run(CRON / "stream-json-stdout.jsonl")
    transcript = _run(CRON / "06c554e0-471e-4f69-8926-9bc4501d6559.jsonl")
    assert stream.metadata["user_prompts"] == transcript.metadata["user_prompts"] == ["CRONFIRED: say hi"]
    assert stream.task == transcript.task and stream.metadata["scheduled_turns"] == 1


def _stream_with_second_task(tmp_path: Path, prompt: str) -> Path:
    """The real cron stream with a second ``CronCreate`` call (of ``prompt``) and its result before the fire."""
    records = [json.loads(line) for line in (CRON / "stream-json-stdout.jsonl").read_text().splitlines()]
    at = next(n for n, r in enumerate(records) if r.get("type") == "command_lifecycle")
    call, result = (next(r for r in records if r.get("type") == kind and "toolu_cron1" in json.dumps(r))
                    for kind in ("assistant", "user"))
    second = json.loads(json.dumps(call).replace("toolu_cron1", "toolu_cron2").replace("CRONFIRED: say hi", prompt))
    second["message"]["id"] = "msg_second"
    records[at:at] = [second, json.loads(json.dumps(result).replace("toolu_cron1", "toolu_cron2"))]
    (path := tmp_path / "stdout.jsonl").write_text("\n".join(json.dumps(r) for r in records) + "\n")
    return path


def test_a_fire_among_several_tasks_is_not_guessed(tmp_path: Path) -> None:
    """Two tasks of different prompts: which fired is not said, so no prompt is made up; the same prompt twice is
    that prompt."""
    assert not _run(_stream_with_second_task(tmp_path, "OTHER: say bye")).metadata.get("user_prompts")
    assert _run(_stream_with_second_task(tmp_path, "CRONFIRED: say hi")).metadata["user_prompts"] == [
        "CRONFIRED: say hi"]


def test_a_recovered_fire_is_never_the_task(tmp_path: Path) -> None:
    """The stream without its echoed prompt (as without ``--replay-user-messages``): the fire's prompt, recovered
    from the call, is no task for the request the stream did not record; the output stays refused."""
    lines = [line for line in (CRON / "stream-json-stdout.jsonl").read_text().splitlines()
             if not json.loads(line).get("isReplay")]
    (path := tmp_path / "stdout.jsonl").write_text("\n".join(lines) + "\n")
    (parsed,) = list(read_dump(path, tenant="acme"))
    assert parsed.trajectory is None and "no user prompt" in str(parsed.error)


BLOCKED = FIXTURES / ".aud37" / "blocked-prompt-2.1.337"


def test_a_prompt_the_cli_withdrew_is_no_request() -> None:
    """Bug: the prompt the model's safeguards refused, which the CLI withdrew once the user prompted again (its
    ``blocked_prompts_withdrawn`` attachment; "Claude no longer sees the earlier message that was flagged"), was the
    task, and the request the agent answered a follow-up. Both the transcript and the stream of the session."""
    for path in (BLOCKED / "bac6718b-7822-48cf-9d87-3423df11ecab.jsonl", BLOCKED / "stream-json-stdout.jsonl"):
        run = _run(path)
        assert run.task == "TYPED: a fine request", path.name
        assert run.metadata["withdrawn_prompts"] == ["BLOCKME: a request the model refuses"]
        assert not run.metadata.get("user_prompts")
        assert [s.action for s in run.steps] == ["respond"]


def test_a_refused_prompt_not_withdrawn_stays_the_task(tmp_path: Path) -> None:
    """The session cut before the user prompted again (no withdrawal yet): the refused prompt is still the task."""
    lines = (BLOCKED / "stream-json-stdout.jsonl").read_text().splitlines()
    cut = next(n for n, line in enumerate(lines) if "no longer sees" in line)
    (path := tmp_path / "stdout.jsonl").write_text("\n".join(lines[:cut]) + "\n")
    run = _run(path)
    assert run.task == "BLOCKME: a request the model refuses" and not run.metadata.get("withdrawn_prompts")


def _blocked_stream(tmp_path: Path, first_turn: str) -> Path:
    """The real blocked-prompt stream with two turns before its withdrawn one: A (``first_turn``: ``"tools"``, a call
    that ran, then the response after it refused; ``"fallback"``, refused by one model and answered by the fallback
    model), then B, answered; then the real refused prompt and the real prompt the CLI withdrew it at."""
    lines = [json.loads(line) for line in (BLOCKED / "stream-json-stdout.jsonl").read_text().splitlines()]
    init, echo, result = lines[0], lines[2], lines[6]
    answer = next(r for r in lines if r.get("type") == "assistant" and r["message"]["model"] != "<synthetic>")
    no_fallback = next(r for r in lines if r.get("subtype") == "model_refusal_no_fallback")
    refused = next(r for r in lines if r.get("type") == "assistant" and r["message"]["model"] == "<synthetic>")

    def like(record: dict, **changes: object) -> dict:
        return {**json.loads(json.dumps(record)), **changes}

    def reply(mid: str, content: list) -> dict:
        return like(answer, uuid=f"u-{mid}", message={**answer["message"], "id": mid, "content": content})

    call = reply("m1", [{"type": "tool_use", "id": "t1", "name": "Bash", "input": {"command": "ls"}}])
    ran = like(echo, uuid="r1", isReplay=False,
               message={"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "a.txt"}]})
    prompt_a = like(echo, uuid="A", message={"role": "user", "content": "TASK A: list the files"})
    if first_turn == "tools":
        turn_a = [prompt_a, call, ran, like(no_fallback, uuid="nf-A", refused_user_message_uuid="A"), refused]
    else:
        turn_a = [prompt_a, like(no_fallback, uuid="fb-A", subtype="model_refusal_fallback",
                                 refused_user_message_uuid="A"), call, ran,
                  reply("m2", [{"type": "text", "text": "done"}])]
    turn_b = [like(init, uuid="init-b"), like(echo, uuid="B", message={"role": "user", "content": "B: thanks"}),
              reply("m3", [{"type": "text", "text": "welcome"}]), result]
    records = [like(init, uuid="init-a"), *turn_a, result, *turn_b, *lines]  # each turn's init its own
    (path := tmp_path / f"{first_turn}.jsonl").write_text("\n".join(json.dumps(r) for r in records) + "\n")
    return path


def test_only_a_prompt_whose_turn_was_all_refused_is_withdrawn(tmp_path: Path) -> None:
    """Bug: every prompt a refusal named was withdrawn at the notice, though the CLI withdraws only the prompts of
    the refused turns just before it (``LR`` in 2.1.337's code: none whose turn ran a call or got a reply, none
    before an answered turn; a fallback model's answer is a reply), and B became the task in place of A."""
    for first_turn in ("tools", "fallback"):
        run = _run(_blocked_stream(tmp_path, first_turn))
        assert run.task == "TASK A: list the files", first_turn
        assert run.metadata["withdrawn_prompts"] == ["BLOCKME: a request the model refuses"], first_turn
        assert run.metadata["user_prompts"] == ["B: thanks", "TYPED: a fine request"], first_turn


def test_a_refusal_marks_no_step_of_the_turn_before(tmp_path: Path) -> None:
    """Bug: 2.1.337's refused response writes no content, only the CLI's marks after it, and those marked the last
    step of the turn before (answered, its reply not refused), in the transcript and in the stream, whose notice of
    the refusal comes before the refused prompt's echo."""
    records = [json.loads(line) for line in (BLOCKED / "bac6718b-7822-48cf-9d87-3423df11ecab.jsonl").read_text()
               .splitlines()]
    at = next(n for n, r in enumerate(records) if r.get("type") == "user")
    answer = next(r for r in records if r.get("type") == "assistant" and r["message"]["model"] != "<synthetic>")
    first = {**records[at], "uuid": "p0", "parentUuid": None, "message": {"role": "user", "content": "FIRST: hi"}}
    hello = {**answer, "uuid": "a0", "parentUuid": "p0",
             "message": {**answer["message"], "id": "msg_a0", "content": [{"type": "text", "text": "hello"}]}}
    records[at] = {**records[at], "parentUuid": "a0"}
    records[at:at] = [first, hello]
    (transcript := tmp_path / "session.jsonl").write_text("\n".join(json.dumps(r) for r in records) + "\n")
    for path in (transcript, _blocked_stream(tmp_path, "fallback")):
        run = _run(path)
        assert [s.error for s in run.steps if s.action == "respond"] == [None] * sum(
            s.action == "respond" for s in run.steps), path.name


#: The text 2.1.337 fires for a CronCreate-mode autonomous ``/loop`` (its ``<<autonomous-loop>>`` sentinel resolved at
#: fire time; built by hand from the CLI's code, no real fire of it recorded).
AUTONOMOUS_TICK = ("# Autonomous loop tick\n\nRun the autonomous check using the loop instructions established earlier "
                   "in this conversation. If you cannot find them, treat this as a no-op tick.")


def test_an_autonomous_loops_sentinel_is_no_prompt(tmp_path: Path) -> None:
    """Bug: a ``/loop`` with no prompt schedules ``CronCreate`` with the CLI's sentinel ``<<autonomous-loop>>``, which
    the CLI expands at fire time into its own instructions; the stream recovered the sentinel as the fire's prompt.
    Neither it nor the expansion the transcript holds asks anything of the user's."""
    for name, fired in (("stream-json-stdout.jsonl", "<<autonomous-loop>>"),
                        ("06c554e0-471e-4f69-8926-9bc4501d6559.jsonl", AUTONOMOUS_TICK)):
        text = (CRON / name).read_text().replace('"prompt":"CRONFIRED: say hi"', '"prompt":"<<autonomous-loop>>"')
        (path := tmp_path / name).write_text(text.replace('"CRONFIRED: say hi"', json.dumps(fired)))
        run = _run(path)
        assert run.task == _run(CRON / name).task and not run.metadata.get("user_prompts"), name


def test_a_fired_commands_echo_is_the_fires_prompt(tmp_path: Path) -> None:
    """Bug: 2.1.337 echoes a fired ``/`` command (``wakeup_source: "schedule_wakeup"``, the schema's rule; its
    expansion is not echoed), and that echo was read as a bare command waiting for its body: the fire asked nothing.
    It is the fire's prompt (never the task, as the recovered one), once."""
    records = [json.loads(line) for line in (CRON / "stream-json-stdout.jsonl").read_text().splitlines()]
    records = [json.loads(json.dumps(r).replace('"CRONFIRED: say hi"', '"/review"')) for r in records]
    at = next(n for n, r in enumerate(records) if r.get("type") == "command_lifecycle") + 1
    echo = next(r for r in records if r.get("type") == "user" and r.get("isReplay"))
    records.insert(at, {**echo, "uuid": "echo-fire", "wakeup_source": "schedule_wakeup", "message": {
        "role": "user", "content": "<command-message>review</command-message>\n<command-name>/review</command-name>"}})
    (path := tmp_path / "stdout.jsonl").write_text("\n".join(json.dumps(r) for r in records) + "\n")
    run = _run(path)
    assert run.task == _run(CRON / "stream-json-stdout.jsonl").task and run.metadata["user_prompts"] == ["/review"]


def _cron_stream(tmp_path: Path, change) -> Path:
    """The real cron stream's records, changed by ``change`` (in place), written out."""
    records = [json.loads(line) for line in (CRON / "stream-json-stdout.jsonl").read_text().splitlines()]
    change(records)
    (path := tmp_path / "stdout.jsonl").write_text("\n".join(json.dumps(r) for r in records) + "\n")
    return path


def _cron_result(records: list) -> dict:
    """The record holding the result of the stream's ``CronCreate`` call."""
    (result,) = [r for r in records if "nextFireAt" in json.dumps(r.get("tool_use_result"))]
    return result


def _cron_call(records: list) -> dict:
    """The record holding the stream's ``CronCreate`` call."""
    return next(r for r in records if r.get("type") == "assistant" and '"name": "CronCreate"' in json.dumps(r))


def _fired_twice(records: list) -> None:
    """The fire's turn again, as a recurring task's next fire."""
    at = next(n for n, r in enumerate(records) if r.get("type") == "command_lifecycle")
    for record in json.loads(json.dumps(records[at:])):
        record["uuid"] = "2-" + record["uuid"]
        if record.get("type") == "assistant":
            record["message"]["id"] = "2-" + record["message"]["id"]
        records.append(record)


def test_a_fire_no_task_of_the_stream_could_be_is_not_credited_to_one(tmp_path: Path) -> None:
    """Bug: a fire was credited to the stream's one ``CronCreate`` task whatever fired: a durable task from an earlier
    launch or one a resumed session carried fires unseen. A fire before the task's ``nextFireAt`` (as its result gives
    it), or after that one-shot task already fired, is not that task's: no prompt is made up."""
    def later(records: list) -> None:
        _cron_result(records)["tool_use_result"]["nextFireAt"] += 3_600_000

    assert not _run(_cron_stream(tmp_path, later)).metadata.get("user_prompts")
    run = _run(_cron_stream(tmp_path, _fired_twice))
    assert run.metadata["user_prompts"] == ["CRONFIRED: say hi"] and run.metadata["scheduled_turns"] == 2


def test_a_fire_whose_first_response_failed_keeps_its_place(tmp_path: Path) -> None:
    """Bug: the fire's prompt was recovered at its turn's first reply only; where the fire's request failed (the
    CLI's ``<synthetic>`` API error) and the user then prompted, it was put after that prompt, out of order."""
    synthetic = next(json.loads(line) for line in (BLOCKED / "stream-json-stdout.jsonl").read_text().splitlines()
                     if '"<synthetic>"' in line)

    def failed_then_typed(records: list) -> None:
        at = next(n for n, r in enumerate(records) if r.get("type") == "assistant" and "fired task" in json.dumps(r))
        typed = next(r for r in records if r.get("type") == "user" and r.get("isReplay"))
        records[at:at] = [{**synthetic, "session_id": typed["session_id"]},
                          {**typed, "uuid": "typed-2", "message": {"role": "user", "content": "NEXT: go on"}}]

    run = _run(_cron_stream(tmp_path, failed_then_typed))
    assert run.metadata["user_prompts"] == ["CRONFIRED: say hi", "NEXT: go on"]


def test_a_plan_mode_handoff_session_was_not_interrupted() -> None:
    """Bug: a session plan mode's "clear context" started opens with the CLI's ``[Request interrupted by user for tool
    use]`` before "Implement the following plan: ..." (anthropics/claude-code#29243), and was read as interrupted,
    though nothing of it was: the mark that opens a session ends the planning session's turn, not one of its own."""
    run = _run(FIXTURES / ".aud37" / "plan-fresh-handoff" / "11111111-2222-3333-4444-555555555555.jsonl")
    assert run.task.startswith("Implement the following plan:") and not run.metadata.get("interrupted")


def test_a_plain_fires_echo_is_no_task(tmp_path: Path) -> None:
    """Bug: VS Code's panel gets an echo of a plain prompt a task fired too (``wakeup_prompt`` beside
    ``wakeup_source``, per 2.1.337's schema), read as a typed prompt: the task of output opened at the fire."""
    def opened_at_the_fire(records: list) -> None:
        at = next(n for n, r in enumerate(records) if r.get("type") == "command_lifecycle")
        echo = next(r for r in records if r.get("type") == "user" and r.get("isReplay"))
        records[:] = records[at:at + 1] + [{
            **echo, "uuid": "echo-fire", "wakeup_source": "schedule_wakeup",
            "wakeup_prompt": {"text": "CRONFIRED: say hi"},
            "message": {"role": "user", "content": "CRONFIRED: say hi"}}] + records[at + 1:]

    (parsed,) = list(read_dump(_cron_stream(tmp_path, opened_at_the_fire), tenant="acme"))
    assert parsed.trajectory is None and "scheduled task" in str(parsed.error)


def test_a_transcript_opened_at_a_loop_wakeup_takes_its_loop_not_the_skills_text(tmp_path: Path) -> None:
    """The session file from the wakeup on (as a copy cut there holds it): its task is the ``/loop`` the wakeup
    re-ran; cut after that record, at the expansion (``isMeta``, marked ``loop_wakeup`` too), it has no prompt of the
    user's, and the ``/loop`` skill's text, the CLI's, is no task."""
    lines = LOOP_SESSION.read_text().splitlines()
    at = next(n for n, line in enumerate(lines) if json.loads(line).get("wakeupSource") == "loop_wakeup")
    for start, task in ((at, "/loop LOOPTASK: check the build"), (at + 1, None)):
        (path := tmp_path / f"{start}.jsonl").write_text("\n".join(lines[start:]) + "\n")
        (parsed,) = list(read_dump(path, tenant="acme"))
        assert (parsed.trajectory.task if parsed.trajectory else None) == task, start


def _recurring_by_default(records: list, said: bool | None) -> None:
    """The task made without ``recurring`` in the call (the CLI's default: true), its result saying ``said``
    (``None``: not saying), and fired twice."""
    del _cron_call(records)["message"]["content"][0]["input"]["recurring"]
    result = _cron_result(records)["tool_use_result"]
    result.pop("recurring")
    if said is not None:
        result["recurring"] = said
    _fired_twice(records)


def test_a_task_made_without_recurring_recurs(tmp_path: Path) -> None:
    """Bug: a ``CronCreate`` call that left ``recurring`` out was read as one-shot, though the CLI's default is a
    recurring task (the result's ``recurring`` says so): its fires after the first lost their prompt. The result's
    word, where it gives one, is the task's."""
    for said, fires in ((None, 2), (True, 2), (False, 1)):
        change = partial(_recurring_by_default, said=said)
        assert _run(_cron_stream(tmp_path, change)).metadata["user_prompts"] == ["CRONFIRED: say hi"] * fires


def _deleted(job: str):
    """A change putting a ``CronDelete`` of ``job`` (call and result, as Claude Code 2.1.332's ``CronDeleteTool``
    writes them: ``Cancelled job <id>.``, ``{"id": ...}``) right after the ``CronCreate`` result."""
    def change(records: list) -> None:
        result = _cron_result(records)
        delete = json.loads(json.dumps(_cron_call(records)))
        delete["message"]["id"], delete["uuid"] = "msg_delete", "delete-call"
        delete["message"]["content"] = [{"type": "tool_use", "id": "toolu_del1", "name": "CronDelete",
                                         "input": {"id": job}}]
        deleted = {**json.loads(json.dumps(result)), "uuid": "delete-result", "tool_use_result": {"id": job}}
        deleted["message"]["content"] = [{"tool_use_id": "toolu_del1", "type": "tool_result",
                                          "content": f"Cancelled job {job}."}]
        at = records.index(result) + 1
        records[at:at] = [delete, deleted]
    return change


def test_a_cancelled_task_is_not_credited_with_a_fire(tmp_path: Path) -> None:
    """Bug: ``CronDelete`` was not read, so a task the model cancelled was still credited with a later fire, though
    what fired then was a task the stream does not show. Cancelling another job leaves the task as it was."""
    job = _cron_result([json.loads(line) for line in (CRON / "stream-json-stdout.jsonl").read_text().splitlines()])
    assert not _run(_cron_stream(tmp_path, _deleted(job["tool_use_result"]["id"]))).metadata.get("user_prompts")
    assert _run(_cron_stream(tmp_path, _deleted("0badf00d"))).metadata["user_prompts"] == ["CRONFIRED: say hi"]

"""Probe 49 (X1): format leftovers read on real files: tau-bench exports, AgentChat team state, SWE-agent thinking.

tau-bench / tau2-bench: the run's task is the user simulator's hidden script; the agent only ever saw what the
simulated user said. An export must not hand a trainer that script as the first user message.
"""

from __future__ import annotations

import io
import json
from pathlib import Path

from trajsearch.export import export_runs, to_record, validate_openai_chat, validate_sharegpt, write
from trajsearch.ingest.read import read_dump
from trajsearch.model import Trajectory
from trajsearch.search import TrajSearch

FIXTURES = Path(__file__).parent / "fixtures"
TAU = FIXTURES / "tau-bench/gpt-4o-airline-mini.json"
#: Six real gpt-4o airline runs of 9 to 26 steps (probe 48's excerpt, its SOURCE.md beside it).
TAU_LONG = FIXTURES / "tau-bench/.probe48/gpt-4o-airline-gift-card-loop.json"
TAU2 = FIXTURES / "tau2-bench/.real/airline_run1.json"
TAU2_SOLO = FIXTURES / "tau2-bench/.real/gpt-4.1_telecom_no-user_gpt-4.1_1trials.json"
TAU2_TASKS_MISSING = FIXTURES / "tau2-bench/.real/tasks-missing/smoke_results.two-simulations.json"


def _runs(path: Path) -> list[Trajectory]:
    runs = [p.trajectory for p in read_dump(path, tenant="t") if p.trajectory is not None]
    assert runs
    return runs


def _said_by_user(run: Trajectory) -> list[str]:
    """What the (simulated) user said, in order: the opening line, then each reply to the agent."""
    return [s.observation for s in run.steps if (s.action in (None, "respond")) and s.observation]


def test_tau_bench_export_opens_with_what_the_user_said_not_the_simulators_script() -> None:
    for run in _runs(TAU):
        chat = to_record(run, "openai-chat")
        assert validate_openai_chat(chat) == []
        users = [m["content"] for m in chat["messages"] if m["role"] == "user"]
        assert run.task not in users, run.trajectory_id  # the hidden instruction is nowhere in the record
        assert chat["messages"][0] == {"role": "user", "content": _said_by_user(run)[0]}
        share = to_record(run, "sharegpt")
        assert validate_sharegpt(share) == []
        assert share["conversations"][0] == {"from": "human", "value": _said_by_user(run)[0]}
        assert run.task not in share["conversations"][0]["value"]


def test_tau2_export_starts_at_the_greeting_and_the_users_opening_line() -> None:
    for run in _runs(TAU2):
        greeting = run.steps[0]
        assert greeting.action == "respond"  # tau2 writes the agent's "Hi! How can I help you today?" first
        chat = to_record(run, "openai-chat")
        assert validate_openai_chat(chat) == []
        assert chat["messages"][:2] == [{"role": "assistant", "content": greeting.arguments["content"]},
                                        {"role": "user", "content": greeting.observation}]
        assert all(m.get("content") != run.task for m in chat["messages"])  # the user scenario stays hidden
        share = to_record(run, "sharegpt")
        assert validate_sharegpt(share) == []  # sharegpt must open with a human turn: the greeting goes
        assert share["conversations"][0] == {"from": "human", "value": greeting.observation}


def test_tau2_solo_run_keeps_its_ticket_as_the_prompt() -> None:
    """A solo agent's task is the ticket, the one text it got: that still opens the record."""
    for run in _runs(TAU2_SOLO):
        assert "task_seen_by_agent" not in run.metadata
        assert to_record(run, "openai-chat")["messages"][0] == {"role": "user", "content": run.task}


def test_tau2_task_read_from_the_users_first_message_is_not_said_twice() -> None:
    runs = [r for r in _runs(TAU2_TASKS_MISSING) if r.metadata.get("task_from") == "the user's first message"]
    assert runs
    for run in runs:
        chat = to_record(run, "openai-chat")
        users = [m["content"] for m in chat["messages"] if m["role"] == "user"]
        assert users.count(run.task) == 1, run.trajectory_id


def test_tau_bench_compressed_export_keeps_the_users_opening_line(hashing_ts: TrajSearch) -> None:
    """``--max-tokens`` compresses to decision points, which drop the action-less opening step: without the
    task heading the record it must stay, or the record starts with the agent answering nobody."""
    runs = _runs(TAU_LONG)
    hashing_ts.add(runs)
    export = export_runs(hashing_ts, "cancel my reservation", tenant="t", fmt="openai-chat", k=10,
                         outcome=("success", "failure"), max_tokens=800)
    out = io.StringIO()
    write(export, out, fmt="openai-chat")
    records = [json.loads(line) for line in out.getvalue().splitlines()]
    by_id = {r.trajectory_id: r for r in runs}
    compressed = [r for r in records if len(r["messages"]) < len(to_record(by_id[r["metadata"]["trajectory_id"]],
                                                                           "openai-chat")["messages"])]
    assert len(records) == len(runs) and compressed  # the budget made some records shorter
    for record in records:
        run = by_id[record["metadata"]["trajectory_id"]]
        assert validate_openai_chat(record) == []
        assert record["messages"][0] == {"role": "user", "content": _said_by_user(run)[0]}


AGENTCHAT = FIXTURES / "autogen-agentchat/.probe49"


def test_agentchat_team_state_of_two_runs_without_reset_is_the_two_runs_of_their_task_results() -> None:
    """A team run twice without ``reset()`` keeps both runs in its state's ``message_thread``: read as one run
    under the first run's id, it held the second run's steps too (and its task's words as the first answer's
    observation), and replaced the first run's TaskResult in the store, the second's steps indexed twice."""
    states = _runs(AGENTCHAT / "0.7.5/two_runs_team_state.json")
    results = [*_runs(AGENTCHAT / "0.7.5/two_runs_1_taskresult.json"),
               *_runs(AGENTCHAT / "0.7.5/two_runs_2_taskresult.json")]
    assert [r.trajectory_id for r in states] == [r.trajectory_id for r in results]
    assert [r.task for r in states] == ["What is the weather in Paris?", "And in Atlantis?"]
    for state, result in zip(states, results):
        assert [(s.action, s.arguments, s.observation, s.error) for s in state.steps] == [
            (s.action, s.arguments, s.observation, s.error) for s in result.steps]
        assert state.metadata["saved_as"] == "TeamState"


def test_agentchat_folder_with_the_state_and_both_task_results_indexes_two_runs(hashing_ts: TrajSearch) -> None:
    hashing_ts.add([p.trajectory for p in read_dump(AGENTCHAT / "0.7.5", tenant="t") if p.trajectory is not None])
    assert hashing_ts.stats(tenant="t")["trajectories"] == 2
    for name, city in (("two_runs_1_taskresult.json", "Paris"), ("two_runs_2_taskresult.json", "Atlantis")):
        [result] = _runs(AGENTCHAT / "0.7.5" / name)
        stored = hashing_ts.get_trace(hashing_ts.run(result.trajectory_id, tenant="t").trace_uri, tenant="t")
        assert [(s.action, s.arguments) for s in stored.steps] == [  # each run's own steps, once
            ("get_weather", {"city": city}), ("respond", {"content": result.steps[-1].arguments["content"]})]


def test_agentchat_team_state_of_one_run_keeps_its_id() -> None:
    """A state of one run (and one whose user proxy speaks between the assistant's turns) stays one run."""
    real = FIXTURES / "autogen-agentchat/.real"
    assert len(_runs(real / "hitl_code_team_state.json")) == 1
    [state] = _runs(real / "team_state.json")
    assert state.trajectory_id == _runs(real / "team_taskresult.json")[0].trajectory_id


def test_agentchat_0_5_team_state_of_two_runs_beside_their_files_is_passed_over() -> None:
    """Before 0.6 (no message ids) a state beside its run's file is passed over when the file holds the same
    messages; a state of two runs matched neither file and was read as a third run holding both runs' steps."""
    got = [(Path(p.source).name, p.trajectory.task) for p in read_dump(AGENTCHAT / "0.5.7", tenant="t") if p.trajectory]
    assert got == [("0.5.7-two_runs_1_messages.json", "What is the weather in Paris?"),
                   ("0.5.7-two_runs_2_messages.json", "And in Atlantis?")]


def test_agentchat_0_5_team_state_of_two_runs_saved_alone_is_two_runs(tmp_path: Path) -> None:
    alone = tmp_path / "0.5.7-two_runs_team_state.json"
    alone.write_bytes((AGENTCHAT / "0.5.7/0.5.7-two_runs_team_state.json").read_bytes())
    runs = _runs(alone)
    assert [(r.task, [s.action for s in r.steps]) for r in runs] == [
        ("What is the weather in Paris?", ["get_weather", "respond"]), ("And in Atlantis?", ["get_weather", "respond"])]
    assert len({r.trajectory_id for r in runs}) == 2


SWE_THINKING = FIXTURES / "swe-agent/.real/sa-1.1.0-thinking/out/demo__greet-thinking/demo__greet-thinking.traj"


def test_swe_agent_1_1_claude_thinking_is_the_steps_thought() -> None:
    """SWE-agent 1.1 keeps a Claude model's ``thinking_blocks`` in the history only: a step that called its tool
    without words had no thought at all, its reasoning nowhere in the run."""
    run = _runs(SWE_THINKING)[0]
    assert [(s.action, s.thought) for s in run.steps] == [
        ("bash", "The issue says greet() raises a NameError. I should look at greet.py first to see which name is "
                 "undefined."),
        (None, "The bug is the typo nmae."),  # rejected (no tool call): never in the history, its thinking lost
        ("str_replace_editor", "I must call a tool. Replace `nmae` with `name` in greet.py using the editor.\n\n"
                               "Let me fix the typo."),
        ("submit", "The fix is in. Submit the change."),
        ("submit", "The review asks me to confirm; the diff is only the fix, so submit again."),
    ]


AGENTCHAT_047 = AGENTCHAT / "0.4.7"


def test_agentchat_0_4_human_in_the_loop_state_with_a_proxy_named_user_is_one_run(tmp_path: Path) -> None:
    """autogen-agentchat 0.4.0-0.4.8 keys a team state's ``agent_states`` ``<name>/<team_id>``: a UserProxyAgent
    named ``user`` (the tutorial's name) was not seen as a participant, and each of the person's replies read as a
    new ``run``'s task: one human-in-the-loop run cut into three (a run whose task was "APPROVE")."""
    alone = tmp_path / "0.4.7-hitl_user_team_state.json"
    alone.write_bytes((AGENTCHAT_047 / alone.name).read_bytes())
    [run] = _runs(alone)
    assert run.task == "Write a Python function that returns the n-th Fibonacci number."
    assert [(s.action, s.observation) for s in run.steps] == [
        ("respond", "That is exponential time, make it iterative."), ("respond", "APPROVE")]
    # beside the run's own messages file, the state is that run again: passed over, one run in the folder
    got = [(Path(p.source).name, p.trajectory.task) for p in read_dump(AGENTCHAT_047, tenant="t") if p.trajectory]
    assert got == [("0.4.7-hitl_user_messages.json", run.task)]


def test_agentchat_0_4_state_of_two_runs_saying_the_same_beside_their_files_is_passed_over() -> None:
    """Two runs of a team not reset that said exactly the same (a model-less agent, a replayed model): both files
    matched the state's first run only, so the state was read beside them, the two runs twice (four, not two)."""
    got = [(Path(p.source).name, p.trajectory.task)
           for p in read_dump(AGENTCHAT / "0.4.7-twin", tenant="t") if p.trajectory]
    assert got == [("0.4.7-twin_run1_messages.json", "What is the capital of France?"),
                   ("0.4.7-twin_run2_messages.json", "What is the capital of France?")]


def _head(clipped: str) -> str:
    """A text's head before the mark compression leaves where it cut it (``represent.clip``)."""
    return clipped.split(" …", 1)[0]


def test_tau2_compressed_export_opens_with_the_greeting_and_the_users_first_line(hashing_ts: TrajSearch) -> None:
    """tau2's opening is a ``respond`` step (the agent's greeting, the user's first line its observation):
    ``--max-tokens`` compression dropped it, and the records opened mid-conversation, with a tool call (sharegpt:
    with its result, the call gone) or with the agent answering nobody."""
    runs = _runs(FIXTURES / "tau2-bench/.probe49/airline_run1.cancel.json")  # nine real runs (its SOURCE.md)
    hashing_ts.add(runs)
    by_id = {r.trajectory_id: r for r in runs}
    compressed = 0
    for fmt in ("openai-chat", "sharegpt"):
        export = export_runs(hashing_ts, "cancel my reservation", tenant="t", fmt=fmt, k=10,
                             outcome=("success", "failure"), max_tokens=800)
        out = io.StringIO()
        write(export, out, fmt=fmt)
        records = [json.loads(line) for line in out.getvalue().splitlines()]
        assert records
        for record in records:
            run = by_id[record["metadata"]["trajectory_id"]]
            greeting = run.steps[0]
            whole = to_record(run, fmt)
            if fmt == "openai-chat":
                compressed += len(record["messages"]) < len(whole["messages"])
                assert validate_openai_chat(record) == []
                assert [m["role"] for m in record["messages"][:2]] == ["assistant", "user"]
                assert _head(record["messages"][1]["content"]) in greeting.observation
            else:
                compressed += len(record["conversations"]) < len(whole["conversations"])
                assert validate_sharegpt(record) == []
                assert record["conversations"][0]["from"] == "human"
                assert _head(record["conversations"][0]["value"]) in greeting.observation
    assert compressed  # the budget made some records shorter


def test_export_keeps_the_task_when_the_user_sends_the_first_prompt_again_later() -> None:
    """The task is left out of a record only when the steps open with it (a task read from the user's first
    message); a person sending the first prompt again after the agent's calls made the record lose its opening
    task, the run starting with the agent calling ``Read`` for nobody."""
    [run] = _runs(FIXTURES / "atif/.probe49/resent-prompt/trajectory.json")
    task = "Fix the greeting in main.py to say hello, run it, and have a subagent count the lines in notes.txt"
    assert run.task == task
    chat = to_record(run, "openai-chat")
    assert validate_openai_chat(chat) == []
    assert chat["messages"][0] == {"role": "user", "content": task}
    assert [m["content"] for m in chat["messages"] if m["role"] == "user"].count(task) == 2  # the first, then again
    share = to_record(run, "sharegpt")
    assert validate_sharegpt(share) == []
    assert share["conversations"][0] == {"from": "human", "value": task}


def test_swe_agent_history_only_file_keeps_the_thinking_of_a_step_that_said_words() -> None:
    """A ``.traj`` kept as its ``history`` alone: its entries were paired with the history by a ``response`` they
    do not have, so a step whose message said words besides its thinking lost the thinking."""
    run = _runs(FIXTURES / "swe-agent/.probe49/history-only/demo__greet-thinking.traj")[0]
    assert [(s.action, s.thought) for s in run.steps] == [
        ("bash", "The issue says greet() raises a NameError. I should look at greet.py first to see which name is "
                 "undefined."),
        ("str_replace_editor", "I must call a tool. Replace `nmae` with `name` in greet.py using the editor.\n\n"
                               "Let me fix the typo."),
        ("submit", "The fix is in. Submit the change."),
        ("submit", "The review asks me to confirm; the diff is only the fix, so submit again."),
    ]


def test_sharegpt_record_cut_to_start_on_a_call_opens_with_the_next_human_turn() -> None:
    """A run of a hidden task whose steps start on a tool call (tau2's compressed to its decision points before
    the opening was kept): the call was dropped as not human, and its result opened the record as an
    ``observation`` answering nothing."""
    run = _runs(TAU2)[0]
    first_call = next(n for n, s in enumerate(run.steps) if s.action != "respond")
    cut = run.model_copy(update={"steps": run.steps[first_call:]})
    share = to_record(cut, "sharegpt")
    assert validate_sharegpt(share) == []
    assert share["conversations"][0]["from"] == "human"
    said = next(s.observation for s in cut.steps if s.action == "respond" and s.observation)
    assert share["conversations"][0]["value"] == said

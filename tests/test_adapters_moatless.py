"""Moatless Tools trajectory files (its 2024 ``AgenticLoop``: ``initial_message``, ``transitions``, ``info``), read from
real runs its repository committed (aorwall/moatless-tools ``tests/trajectories``, trimmed:
tests/fixtures/moatless/.sweexp30/README.md): the loop its 2024 SWE-bench leaderboard submissions ran."""

from __future__ import annotations

import json
from datetime import datetime, timezone
from pathlib import Path

from trajsearch.ingest.detect import detect_format
from trajsearch.ingest.read import read_inputs
from trajsearch.model import SUBMITTED, Outcome, outcome_shown

from adapter_support import only
from cli_support import run_cli

MOATLESS = Path(__file__).parent / "fixtures" / "moatless" / ".sweexp30"


def test_a_run_is_its_states_actions_with_the_issue_as_task() -> None:
    path = MOATLESS / "psf__requests-1724.json"
    assert detect_format(path) == "moatless"
    run = only(path)
    assert run.trajectory_id == "moatless.coder_psf__requests-1724_20240815-203425"
    assert run.task.startswith("Unicode method names cause UnicodeDecodeError for some requests in Python 2.7.2")
    assert run.task_id == run.metadata["instance_id"] == "psf__requests-1724"
    assert run.model_id == "claude-3-5-sonnet-20240620"
    assert run.created_at == datetime(2024, 8, 15, 20, 34, 25, 859767, tzinfo=timezone.utc)
    assert [s.action for s in run.steps] == ["SearchCode", "IdentifyCode", "DecideRelevance", "PlanToCode",
                                             "EditCode", "PlanToCode", "EditCode", "PlanToCode", "EditCode",
                                             "EditCode"]
    search = run.steps[0]
    assert search.thought.startswith("To address the issue of Unicode method names")
    assert search.arguments["search_requests"] and "scratch_pad" not in search.arguments
    edit = run.steps[4]
    assert edit.observation.startswith("Applied the change to requests/sessions.py.\n--- requests/sessions.py")
    # an edit Moatless sent back for a retry (its replace block changed nothing) is the step's error
    assert run.steps[8].error.startswith("The code in the replace tag is the same as in the search.")
    assert [s.index for s in run.steps if s.error] == [8]
    # the agent rejected the task (Moatless' status), its patch so far notwithstanding
    assert run.outcome is Outcome.failure and run.failure.cause == "the agent rejected the task"
    assert run.failure.error == "Max retries reached."


def test_how_the_evaluation_recorded_the_run_is_its_outcome() -> None:
    runs = {Path(p.source).name: p.trajectory for p in read_inputs([MOATLESS])}
    finished, limited = runs["django__django-9296.json"], runs["django__django-11095.json"]
    assert finished.outcome is Outcome.success and outcome_shown(finished) == SUBMITTED  # a patch, not tested
    assert limited.outcome is Outcome.failure  # the loop's abort on its cost limit: the run used its budget
    assert limited.failure.error == "RuntimeError: The loop was aborted because the cost exceeded the limit."
    assert limited.failure.cause == "the run used its cost limit"


def test_cli_dry_run_judges_the_runs_by_a_leaderboard_results_json(tmp_path: Path, home: Path) -> None:
    results = tmp_path / "results.json"  # a SWE-bench experiments submission's results/results.json: its lists
    results.write_text(json.dumps({"generated": ["django__django-9296", "psf__requests-1724"],
                                   "resolved": ["psf__requests-1724"]}))
    code, out, err = run_cli("ingest", str(MOATLESS), "-t", "acme", "--dry-run", "--outcomes", str(results))
    assert code == 0, out + err
    assert "django__django-9296.json: format moatless; runs 1; rejected 0; steps 5; errors 0; outcomes failure 1" in out
    assert "psf__requests-1724.json: format moatless; runs 1; rejected 0; steps 10; errors 1; outcomes success 1" in out


def test_a_june_2024_file_its_actions_and_completed_flag() -> None:
    # AgenticLoop's first shape: no workspace, each action {action, output}, its thought `thoughts`, info.completed
    run = only(MOATLESS / "pytest-dev__pytest-7373.json")
    assert run.trajectory_id == "moatless.coder_pytest-dev__pytest-7373_20240616-074447"
    assert run.task.startswith("Incorrect caching of skipif/xfail string condition evaluation")
    assert run.model_id == "gpt-4o-2024-05-13"
    assert [s.action for s in run.steps] == ["PlanToCode", "EditCode", "PlanToCode", "EditCode", "PlanToCode"]
    plan, edit = run.steps[:2]
    assert plan.thought and "thoughts" not in plan.arguments and plan.arguments["action"]
    assert edit.arguments["content"].startswith("<replace>") and edit.observation.startswith("Applied change:")
    assert run.outcome is Outcome.success and outcome_shown(run) == SUBMITTED


def test_transitions_that_hold_no_states_reject_the_run(tmp_path: Path) -> None:
    record = json.loads((MOATLESS / "django__django-9296.json").read_text())
    for bad, said in (([1, "x"], "`transitions` entry 1: expected a state object, found a number"),
                      ([{"actions": "x", "name": 5}], "`transitions` entry 1: `actions` is a string, not a list")):
        record["transitions"] = bad
        path = tmp_path / "bad.json"
        path.write_text(json.dumps(record))
        [parsed] = list(read_inputs([path]))
        assert parsed.trajectory is None and said in parsed.error, parsed.error


TREE = Path(__file__).parent / "fixtures" / "moatless" / ".aud33"


def test_a_tree_search_file_is_its_line_of_nodes_with_named_actions(tmp_path: Path) -> None:
    """moatless-tree-search's ``SearchTree`` file (December 2024 on: ``root`` with nested ``children``) was refused
    as no known format before round 33."""
    path = TREE / "tree-search-sonnet.json"
    assert detect_format(path) == "moatless"
    run = only(path)
    assert run.task.startswith("FileBasedCache has_key is susceptible to race conditions")
    assert run.model_id == "claude-3-5-sonnet-20241022"
    assert [s.action for s in run.steps] == ["FindClass", "SemanticSearch", "Edit", "Finish"]
    assert run.steps[0].arguments == {"class_name": "FileBasedCache"}  # None arguments and the class name dropped
    assert run.steps[0].thought.startswith("1. The issue is a classic TOCTOU")
    assert run.steps[2].observation.startswith("The file django/core/cache/backends/filebased.py has been edited.")
    assert run.outcome is Outcome.success and outcome_shown(run) == SUBMITTED  # Finish, no evaluation in the file
    moved = tmp_path / "elsewhere.json"  # no id nor time in the file: the same run, wherever it lies, the same id
    moved.write_bytes(path.read_bytes())
    assert run.trajectory_id == only(moved).trajectory_id


def test_a_step_dumped_as_its_thoughts_alone_takes_the_nodes_action() -> None:
    run = only(TREE / "tree-search-gpt-4o-mini.json")
    assert [s.action for s in run.steps] == ["FindFunction", "ViewCode", "StringReplace", "RunTests", "Finish"]
    assert run.steps[0].arguments["function_name"] == "has_key"
    assert run.outcome is Outcome.success


def _flat(tree: dict) -> dict:
    """The 2025 layout of the same run, as ``Node.dump_as_list`` and the evaluation manager write it."""
    nodes, stack = [], [(tree["root"], None)]
    while stack:
        node, parent = stack.pop()
        nodes.append({**{k: v for k, v in node.items() if k != "children"}, "parent_id": parent})
        stack.extend((child, node["node_id"]) for child in reversed(node["children"]))
    return {"trajectory_id": "django__django-16379", "project_id": "eval_20250301",
            "metadata": {"instance_id": "django__django-16379"}, "nodes": sorted(nodes, key=lambda n: n["node_id"])}


def test_a_2025_flow_file_its_ids_and_the_evaluated_leaf_decide(tmp_path: Path) -> None:
    flow = _flat(json.loads((TREE / "tree-search-sonnet.json").read_text()))
    # a branch the search left beside the run's line: the leaf the evaluation judged is the run's end
    flow["nodes"].append({**flow["nodes"][2], "node_id": 5, "parent_id": 1, "action_steps": []})
    flow["nodes"][4]["evaluation_result"] = {"resolved": False, "start_time": "2025-03-01T10:00:00",
                                             "end_time": "2025-03-01T10:05:00", "evaluation": "SWE-Bench"}
    # no node timestamp: Moatless dumps exclude_unset and never sets one; it sets each action step's times
    flow["nodes"][1]["action_steps"][0] |= {"start_time": "2025-03-01T09:00:00.000001",
                                            "end_time": "2025-03-01T09:00:04.5"}
    path = tmp_path / "trajectory.json"
    path.write_text(json.dumps(flow))
    run = only(path)
    assert run.trajectory_id == "moatless.eval_20250301/django__django-16379"  # the evaluation's and the instance's
    assert run.task_id == run.metadata["instance_id"] == "django__django-16379"
    assert run.metadata["project_id"] == "eval_20250301" and run.metadata["branches"] == 2
    assert [s.action for s in run.steps] == ["FindClass", "SemanticSearch", "Edit", "Finish"]
    assert run.outcome is Outcome.failure and run.failure.cause == "SWE-Bench's tests failed"
    assert run.created_at == datetime(2025, 3, 1, 9, 0, 0, 1, tzinfo=timezone.utc)


def test_an_action_moatless_could_not_build_is_the_steps_error_and_the_runs_failure() -> None:
    run = only(TREE / "tree-search-action-error.json")
    assert [s.action for s in run.steps] == ["FindClass", "ActionError"]
    assert run.steps[1].error.startswith("Failed to generate action. Error: Failed to create completion")
    assert run.outcome is Outcome.failure and run.failure.cause == "the model answered with no tool call"


def test_runs_of_no_step_are_told_apart_by_their_model() -> None:
    runs = [p.trajectory for p in read_inputs([TREE / "tree-search-no-step-claude-3-haiku.json",
                                               TREE / "tree-search-no-step-claude-3-5-haiku.json"])]
    assert [r.model_id for r in runs] == ["claude-3-haiku", "claude-3-5-haiku-20241022"]
    assert all(not r.steps and r.outcome is Outcome.unknown for r in runs)
    assert runs[0].trajectory_id != runs[1].trajectory_id


def test_the_first_tree_layout_each_node_holding_its_action_and_output_keeps_its_steps() -> None:
    """November to mid-December 2024 a node, the root too, held its own ``action`` and ``output`` (no
    ``action_steps``): read as no step and unknown before."""
    run = only(TREE / "tree-search-node-action-output.json")
    assert [s.action for s in run.steps] == ["FindClass", "RequestMoreContext", "Edit", "Finish"]
    first = run.steps[0]
    assert first.arguments == {"class_name": "FileBasedCache"}  # its `scratch_pad` the thought, not an argument
    assert first.thought.startswith("I'll help analyze and fix the race condition")
    assert first.observation.startswith("Found 1 classes.")
    assert run.outcome is Outcome.success and outcome_shown(run) == SUBMITTED


def test_the_node_moatless_chose_ends_the_run_though_every_leaf_was_judged(tmp_path: Path) -> None:
    """The evaluation judges every leaf of a search tree; the instance is the chosen node's
    (``root.discriminator_result.selected_node_id``), not the last judged, an abandoned branch's."""
    flow = _flat(json.loads((TREE / "tree-search-sonnet.json").read_text()))
    flow["nodes"][4]["evaluation_result"] = {"resolved": True, "evaluation": "SWE-Bench"}
    flow["nodes"].append({**flow["nodes"][2], "node_id": 5, "parent_id": 1,
                          "evaluation_result": {"resolved": False, "evaluation": "SWE-Bench"}})
    flow["nodes"][0]["discriminator_result"] = {"selected_node_id": 4, "explanation": "the finished line"}
    path = tmp_path / "trajectory.json"
    path.write_text(json.dumps(flow))
    run = only(path)
    assert run.metadata["end_node"] == 4
    assert [s.action for s in run.steps] == ["FindClass", "SemanticSearch", "Edit", "Finish"]
    assert run.outcome is Outcome.success


def test_the_flow_settings_and_event_log_beside_a_2025_trajectory_are_passed_over(tmp_path: Path, home: Path) -> None:
    """``projects/<project>/trajs/<id>/`` holds ``trajectory.json``, ``flow.json`` and ``events.jsonl``; the two
    carry the ``trajectory_id`` and were rejected as broken native runs (exit 3)."""
    run_dir = tmp_path / "projects" / "eval_x" / "trajs" / "django__django-16379"
    run_dir.mkdir(parents=True)
    tree = json.loads((TREE / "tree-search-sonnet.json").read_text())
    (run_dir / "trajectory.json").write_text(json.dumps(_flat(tree)))
    flow = json.loads((TREE / "flow-swebench_tools.json").read_text())  # the settings Moatless commits, as it saves one
    flow |= {"project_id": "eval_x", "trajectory_id": "django__django-16379"}
    (run_dir / "flow.json").write_text(json.dumps(flow))
    event = {"timestamp": "2025-08-01T10:00:00+00:00", "scope": "flow", "trajectory_id": "django__django-16379",
             "project_id": "eval_x", "event_type": "started", "data": {}}
    (run_dir / "events.jsonl").write_text(json.dumps(event) + "\n" + json.dumps({**event, "scope": "action",
                                                                               "event_type": "created"}) + "\n")
    code, out, err = run_cli("ingest", str(tmp_path), "-t", "acme", "--dry-run")
    assert code == 0, out + err
    assert "trajectory.json: format moatless; runs 1; rejected 0; steps 4" in out
    assert "flow.json" not in out and "events.jsonl" not in out
    code, out, err = run_cli("ingest", str(TREE / "flow-swebench_tools.json"), "-t", "acme", "--dry-run")
    said = "Moatless' flow settings (flow.json beside a run's trajectory.json, or .moatless/flows/): no run"
    assert said in out + err, out + err


def test_an_action_is_named_by_its_class_in_every_layout_not_by_the_tool_the_model_called() -> None:
    """A mid-December 2024 step kept only its thoughts; the node's action names it (``EditActionArguments``), as
    in the later files. Named by the completion's tool before: Anthropic's ``str_replace_editor``."""
    run = only(TREE / "tree-search-thoughts-only-editor.json")
    assert [s.action for s in run.steps] == ["FindFunction", "ViewCode", "Edit", "SemanticSearch", "RunTests", "Edit",
                                             "Finish"]
    assert run.steps[2].arguments["command"] == "str_replace"


def test_a_reply_moatless_refused_is_the_agents_failure_in_both_generations(tmp_path: Path) -> None:
    """2025's node error for a ``CompletionRejectError`` ("Completion validation error: ...", then the traceback)
    is December 2024's ``ActionError`` asking for a tool call: the model's failure, not an infrastructure error."""
    flow = _flat(json.loads((TREE / "tree-search-sonnet.json").read_text()))
    flow["nodes"][2:] = [{**flow["nodes"][2], "action_steps": [],
                          "error": "Completion validation error: The model did not call a tool\n\nTraceback (most "
                                   "recent call last):\n  File \"moatless/agent/agent.py\", line 160, in _run\n"
                                   "moatless.exceptions.CompletionRejectError: The model did not call a tool\n"}]
    path = tmp_path / "trajectory.json"
    path.write_text(json.dumps(flow))
    run = only(path)
    assert [s.action for s in run.steps] == ["FindClass", "error"]
    assert run.outcome is Outcome.failure and run.failure.cause == "the model's reply failed Moatless' validation"
    assert run.failure.error == "Completion validation error: The model did not call a tool"


def test_a_node_list_whose_lines_break_is_refused_and_says_where(tmp_path: Path) -> None:
    """A parent missing or a cycle lost the run's line silently before (a run of no step, or its first dropped)."""
    flow = _flat(json.loads((TREE / "tree-search-sonnet.json").read_text()))
    for change, said in ((lambda f: f["nodes"][4].update(parent_id=99), "node 4's parent 99 is not in `nodes`"),
                         (lambda f: f["nodes"][1].update(parent_id=3), "the parents of node 3 form a cycle"),
                         (lambda f: f["nodes"][3].update(node_id="3"), "`nodes` entry 4: its `node_id` is a string"),
                         # a second root: read as the first's run ending on the other tree's verdict (review RT1 #4)
                         (lambda f: f["nodes"][4].update(parent_id=None), "node 4's line does not reach the root")):
        broken = json.loads(json.dumps(flow))
        change(broken)
        path = tmp_path / "trajectory.json"
        path.write_text(json.dumps(broken))
        [parsed] = list(read_inputs([path]))
        assert parsed.trajectory is None and said in parsed.error, parsed.error


def test_a_nested_tree_names_a_bad_child_and_an_empty_task_by_its_key_and_another_tree_stays_unrecognised(
        tmp_path: Path) -> None:
    """The nested layout says what a child's ``node_id`` is and names November 2024's ``message`` key, as the flat
    one does (review RT1 #2, #3); a tree dump whose root holds neither task key is no Moatless file (#10: it was
    refused as a Moatless run with no task)."""
    cases = (({"node_id": 0, "message": "Fix foo", "children": [{"node_id": "1", "children": []}]},
              "a child of node 0: its `node_id` is a string, not an integer"),
             ({"node_id": 0, "message": "", "children": []}, "no `user_message` (November 2024: `message`) text"),
             ({"node_id": 0, "name": "plan", "children": [{"node_id": 1, "children": []}]}, "unrecognised dump format"))
    for root, said in cases:
        path = tmp_path / "tree.json"
        path.write_text(json.dumps({"root": root}))
        [parsed] = list(read_inputs([path]))
        assert parsed.trajectory is None and said in parsed.error, parsed.error


def test_the_root_moatless_chose_ends_the_run_at_the_root(tmp_path: Path) -> None:
    """Node 0 is the root: chosen (``selected_node_id`` 0), the run ends there, not on a later node because 0 is
    falsy (November 2024 layout: the root holds the first action)."""
    tree = json.loads((TREE / "tree-search-node-action-output.json").read_text())
    tree["root"]["discriminator_result"] = {"selected_node_id": 0}
    path = tmp_path / "trajectory.json"
    path.write_text(json.dumps(tree))
    run = only(path)
    assert run.metadata["end_node"] == 0 and [s.action for s in run.steps] == ["FindClass"]

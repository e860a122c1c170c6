"""Probe 53, GEN: issue 11's search behaviours on other agents' data (not the SWE-bench and tau-bench runs
``auto`` routing was tuned on).

Real inputs only: the runs are tests/fixtures' real Claude Code, Codex, OpenAI Agents, LangSmith and
OpenTelemetry files (each folder's SOURCE.md names where they come from); their task texts are what their users
typed.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from trajsearch.fusion import resolve_mode
from trajsearch.ingest.read import read_dump

FIXTURES = Path(__file__).parent / "fixtures"

#: Runs whose user wrote the task in Chinese, Japanese, Korean or German (file, the task's opening words).
NON_ENGLISH_RUNS = [
    ("claude-code/.real/claude-backup/1d813ba4-2cda-4218-95be-1a7c8e02427b.jsonl", "帮我创建一个avd"),
    ("claude-code/.real/xuwentao/814710e0-c005-483c-bcb2-727b2e09f73c.jsonl", "解释下这个函数的逻辑"),
    ("claude-code/5c0375b4-57a5-4f26-b12d-d022ee4e51b7.jsonl", "/orchestrator @CLAUDE.md を最新"),
    ("codex-cli/.real/adio/rollout-2026-07-03T15-12-18-019f26d2-378f-7123-aaab-925df3e2bf7b.jsonl",
     "ubpb_c4_342M_sdar_g1这个jobs失败了"),
    ("codex-cli/.probe51/resumed/rollout-2026-06-12T16-44-44-019ebb01-4a7a-7c12-9bb4-d3a37238731b.jsonl", "在绿洲里面"),
    ("codex-cli/.real/probe-c/rollout-2026-02-22T23-33-35-019c85c5-2346-7870-acb2-814f3c6068dd.jsonl", "CONCERN.md を"),
    ("codex-cli/.real/probe-c/rollout-2026-04-29T14-22-18-019dd7e7-1344-7142-aeae-20e633ab2cfc.jsonl", "我要做一个平台"),
    ("codex-cli/.real/probe-c43/rollout-2026-07-26T06-37-23-019f9b36-1e6d-7651-9801-5450483871e2.jsonl",
     "이 프로젝트에"),
    ("codex-cli/.real/probe-c43/rollout-2026-02-19T22-39-36-019c7620-a34f-7273-bd59-a56de1f6c921.jsonl",
     ". ./.devenv/nvm.sh を実行すると"),
    ("openai-agents/.real/oai-agents-ja-tool-error-then-max-turns.jsonl", "東京の年間平均気温と"),
    ("openai-agents/.real/openai-agents-js-0.20-handoff-refund-ja.jsonl", "注文 JP-552 の返金"),
    ("openai-agents/.real/logfire-openai-agents-handoff-de.otlp.json", "Ist meine Rechnung"),
    ("otel-genai/.real/probeD45/af-1.26-handoff-refund-de.otlp.json", "Ich möchte eine Rückerstattung"),
    ("langsmith/.real/run-019e3de2-29fe-70b0-bc69-04c5227f876c.json", "硬件采购清单"),
]


def _runs(path: str) -> list:
    return [p.trajectory for p in read_dump(FIXTURES / path, tenant="t") if p.error is None]


def _task(path: str, opening: str) -> str:
    tasks = [run.task for run in _runs(path) if (run.task or "").startswith(opening)]
    assert tasks, f"{path}: no run's task starts with {opening!r}"
    return tasks[0]


@pytest.mark.parametrize("path,opening", NON_ENGLISH_RUNS, ids=[o for _, o in NON_ENGLISH_RUNS])
def test_a_task_written_in_another_language_is_searched_as_prose(path, opening):
    """Bug (probe 53, GEN): ``auto`` told prose by English function words and space-separated words, so a task
    typed in Chinese, Japanese or Korean (one "word" to ``split``: keywords, or a log line by the path or id in
    it) and a German ask (no English function word) went to hybrid: 18 of the real Claude Code / Codex prompts
    in tests/fixtures, and every non-English one of the OpenAI Agents / OTel / LangSmith runs."""
    assert resolve_mode("auto", _task(path, opening)) == "dense"


@pytest.mark.parametrize("ask", [
    "Fix the failing test in src/utils/parser.ts",
    "Implement pagination for the /api/users endpoint",
    "Add retry logic to the HttpClient in pkg/net/client.go",
    "Rename UserService to AccountService across the codebase",
    "Arregla el test que falla en tests/test_api.py",
    "Corrige le bug dans le fichier app.js qui empêche la connexion",
    "Исправь ошибку в функции parse_date",
    "修复 src/main.rs 中的编译错误",
])
def test_a_one_line_ask_naming_a_file_or_class_is_prose(ask):
    """A one-line ask of a coding agent names the file or class it is about, with too few function words for a
    sentence: it went to hybrid by its path or CamelCase name."""
    assert resolve_mode("auto", ask) == "dense"


@pytest.mark.parametrize("line", [
    "错误: 找不到或无法加载主类 Main",
    "fatal: 不是 git 仓库（或者任何父目录）：.git",
    "E   AssertionError: 期望 3，实际 4",
    "panic: runtime error: index out of range [5] with length 3",
    "thread 'main' panicked at src/main.rs:3:5:",
    "    at Object.<anonymous> (/app/x.js:10:5)",
    "Caused by: java.lang.NullPointerException: Cannot invoke \"String.length()\" because \"s\" is null",
    "npm ERR! code ELIFECYCLE",
    "--- FAIL: TestAdd (0.00s)",
    "goroutine 1 [running]:",
])
def test_log_lines_stay_logs(line):
    """What the new prose rules must not take: labelled CJK messages and other languages' stack traces and
    test-runner lines."""
    assert resolve_mode("auto", line) == "hybrid"


def test_auto_searches_a_chinese_task_as_dense_does(hashing_ts):
    """Through search on a real store: the real runs above, one tenant; each non-English task, its own runs left
    out (a new task, as issue 11 measures), searched in ``auto`` mode over task and summary rows, returns what dense
    returns (before: hybrid, whose lexical leg, weighed
    three to one for a "log line", ranked runs sharing an ASCII token of the prompt first)."""
    runs = [run.model_copy(update={"tenant": "t"}) for path, _ in NON_ENGLISH_RUNS for run in _runs(path)]
    english = FIXTURES / "claude-code"
    runs += [p.trajectory.model_copy(update={"tenant": "t"}) for f in sorted(english.glob("*.jsonl"))
             for p in read_dump(f, tenant="t") if p.error is None]
    hashing_ts.add(runs)
    differ = []
    for path, opening in NON_ENGLISH_RUNS:
        task = _task(path, opening)
        own = [run.trajectory_id for run in _runs(path)]  # a new task: its own runs are not in the store yet
        asked = dict(tenant="t", levels=("task", "summary"), k=5, exclude_trajectory_ids=own)
        auto = [h.id for h in hashing_ts.search(task, mode="auto", **asked)]
        dense = [h.id for h in hashing_ts.search(task, mode="dense", **asked)]
        if auto != dense:
            differ.append(opening)
    assert differ == []


# -- test runners' summary lines, pasted with other counts ---------------------------------------------------------

RUNNERS = FIXTURES / "test-runners"

#: (the failed runs that printed a line like it, a line of a runner's summary as another run of the suite prints it:
#: other counts and times).
SUMMARIES = [
    (("cargo-fail",),
     "test result: FAILED. 4 passed; 2 failed; 0 ignored; 0 measured; 0 filtered out; finished in 1.02s"),
    (("jest-suite-fail", "pnpm-jest-fail", "jest-fail"), "Test Suites: 1 failed, 3 passed, 4 total"),
    (("rspec-fail",), "7 examples, 2 failures, 1 pending"),
    (("pnpm-jest-fail",), "[ELIFECYCLE] Test failed. See above for more details."),
    (("tape-fail",), "not ok 3 should be strictly equal"),
    # round 21, GEN2: ctest's tally as this machine's ctest printed it for another suite (tests/fixtures/runner-errors),
    # Microsoft.Testing.Platform's summary, Gradle's failed task (each went to dense: a title, or no log sign)
    (("ctest-fail",), "33% tests passed, 2 tests failed out of 3"),
    (("mtp-fail",), "Test run summary: Failed!"),
    (("gradle-fail-old",), "Execution failed for task ':test'."),
]
#: Lines not yet found first (none since round 21, GEN2: the cargo line's words with any number for any other are
#: held by the passing run's summary, ``test result: ok. 2 passed; 0 failed; ...``, all but one, by the failed run's
#: all, and the near-verbatim lift now ranks the closer first, where it kept their fused order).
NOT_YET: set[str] = set()


@pytest.mark.parametrize("printed,line", SUMMARIES, ids=[p[0] for p, _ in SUMMARIES])
def test_a_test_runners_summary_line_is_a_log_line(printed, line):
    """Bug (probe 53, GEN): a test runner's summary or result line (cargo's ``test result: FAILED. ...``, jest's
    ``Test Suites: 1 failed, 1 total``, rspec's ``3 examples, 1 failure``, pnpm's ``[ELIFECYCLE] Test failed.``,
    TAP's ``not ok 2 ...``, jest's ``● Test suite failed to run``) held no log sign ``auto`` counted: 12 of the 64
    failure lines of tests/fixtures/test-runners' failing outputs went to dense, and with them the near-verbatim
    lift (another run's counts) and the runtime's look for the failed runs whose steps printed the line."""
    assert resolve_mode("auto", line) == "hybrid"


def test_a_summary_with_other_counts_finds_the_run_that_printed_it(model_ts):
    """Through search on a real store, with the real model (what dense makes of the line is the question): each real
    failing output (tests/fixtures/test-runners) is a bash step of
    its own failed run, the passing outputs of the same runners are steps of successful runs; the summary line,
    pasted as another run of the suite prints it (other counts), finds in ``auto`` the failed run that printed
    it first, as hybrid does (before: dense, which ranked a passing run's summary or another runner's first)."""
    from conftest import make_run

    runs = []
    for path in sorted(RUNNERS.glob("*.txt")):
        failed = "fail" in path.stem
        runs.append(make_run(path.stem, outcome="failure" if failed else "success",
                             steps=[("bash", {"command": "npm test"}, path.read_text())]))
    model_ts.add(runs)
    wrong = []
    for printed, line in SUMMARIES:
        if line in NOT_YET:
            continue
        hits = model_ts.search(line, tenant="acme", levels=("step", "failure"), k=3, mode="auto")
        if not hits or hits[0].trajectory_id not in printed:
            wrong.append((line, [h.trajectory_id for h in hits]))
    assert wrong == []


# -- the reverse mistake (probe 53, FRGEN): log lines in other languages read as prose -------------------------
#: Real program output in Chinese, German, French, Russian (git's, psql's, Python's and Windows' localised
#: messages, log blocks with timestamps and levels) and pnpm <= 10's code-first lines, gathered by the
#: probe's reviewer (RGEN) from the formats' outputs: each went to dense once the CJK and one-line-ask prose
#: rules of this round read its message as a sentence or a title.
LOCALISED_LOG_LINES = [text for text in (FIXTURES / "localised-logs" / "lines.txt").read_text().split("\n====\n")
                       if text.strip()]


@pytest.mark.parametrize("line", LOCALISED_LOG_LINES)
def test_a_log_line_in_another_language_is_a_log_line(line):
    assert resolve_mode("auto", line) == "hybrid"


@pytest.mark.parametrize("text", [
    # prompts opening with an emphasised label (Claude Code's compaction prompt, an ATDD skill's rule)
    "CRITICAL: Respond with TEXT ONLY. Do NOT call any tools. Your entire response must be plain text: an <analysis> "
    "block followed by a <summary> block. Your task is to create a detailed summary of the conversation so far.",
    "CRITICAL: Tests MUST fail (be RED) before implementation begins. This is the core invariant of ATDD.",
    # titles naming the exception they are about, in Ruby's place for it
    "Python raises an error (ValueError)",
    "Test that the parser raises an error for an empty file (ValueError)",
])
def test_a_prompt_or_title_naming_a_level_or_an_exception_is_prose(text):
    assert resolve_mode("auto", text) == "dense"


@pytest.mark.parametrize("line", ["undefined method `name' for nil:NilClass (NoMethodError)",
                                  "cannot load such file -- foo (LoadError)"])
def test_rubys_uncaught_exception_stays_a_log_line(line):
    assert resolve_mode("auto", line) == "hybrid"


@pytest.mark.parametrize("task", ["## 目标\n修复登录页面在移动端的布局错误，并补充对应的单元测试。",
                                  "任务：修复 src/main.rs 中的编译错误"])
def test_a_chinese_task_with_its_own_labels_stays_prose(task):
    assert resolve_mode("auto", task) == "dense"


def test_an_agents_failure_naming_a_japanese_agent_is_a_log_line():
    """OpenAI Agents' failed span as the adapter reads it (tests/fixtures/openai-agents/.real, a real run with Japanese
    agent names): ``agent リサーチ担当 failed`` is an English log line with a name in it, not a line of Japanese prose."""
    path = FIXTURES / "openai-agents" / ".real" / "oai-agents-ja-tool-error-then-max-turns.jsonl"
    lines = {line.strip() for parsed in read_dump(path, tenant="t") if parsed.error is None
             for step in parsed.trajectory.steps for line in (step.observation or "").splitlines()}
    failed = sorted(line for line in lines if line.endswith("リサーチ担当 failed"))
    assert failed, "the fixture's failed agent span is read"
    assert [resolve_mode("auto", line) for line in failed] == ["hybrid"] * len(failed)


def test_a_codex_output_of_json_with_korean_literals_is_a_log():
    """A real Codex exec output (tests/fixtures/codex-cli/.real/probe-c43): ``Script completed`` and a JSON record
    whose Node script holds Korean string literals and ends in a SyntaxError; its Hangul made the JSON line read as
    CJK prose, the whole output dense."""
    path = (FIXTURES / "codex-cli" / ".real" / "probe-c43"
            / "rollout-2026-08-01T07-19-28-019fba42-ce37-78e1-a43b-ca31d6ad2dbe.jsonl")
    outputs = [step.observation for parsed in read_dump(path, tenant="t") if parsed.error is None
               for step in parsed.trajectory.steps if '"chunk_id":"620038"' in (step.observation or "")]
    assert outputs, "the fixture's exec output is read"
    assert [resolve_mode("auto", text) for text in outputs] == ["hybrid"] * len(outputs)


@pytest.mark.parametrize("title", ["[Bug] 修复登录页面在移动端的崩溃问题", "[功能] 为导出命令添加进度条"])
def test_an_issue_title_tag_before_chinese_prose_is_no_log_tag(title):
    """An issue title's ``[Bug]`` / ``[功能]`` is no program's tag: the line is a Chinese task, searched as prose as
    its English twin is (review RALL-B: any bracketed word had made it a log line); a program's tags stay logs."""
    assert resolve_mode("auto", title) == "dense"
    assert resolve_mode("auto", "[hybrid_search] 找到 10 个相关节点") == "hybrid"

"""The CLI's checks of what it is given, and its messages, on both backends (embedded store and server)."""

from __future__ import annotations

import json
from pathlib import Path

from cli_support import backend, newcomer, run_cli  # noqa: F401 (fixtures)
from conftest import failing_run, make_run


def ingest_two(tmp_path: Path) -> None:
    path = tmp_path / "two.jsonl"
    runs = [make_run("c1", tenant="acme"), failing_run("c2", "KeyError: 'user_id'", tenant="acme")]
    path.write_text("\n".join(run.model_dump_json(exclude={"tenant"}) for run in runs) + "\n")
    code, out, err = run_cli("ingest", str(path), "--quiet")
    assert code == 0, err


def test_an_error_message_keeps_its_closing_quote(backend, tmp_path: Path) -> None:
    """Bug: messages lost their last quote (``... in tenant 'acme``): every message was stripped of quotes."""
    ingest_two(tmp_path)
    for command in ("similar", "--id"), ("show",), ("show", "--json"):  # the tenant looked in named on both backends
        code, out, err = run_cli(*command, "nosuch")  # (over a server, "no trajectory 'nosuch'" had named none)
        assert code == 1 and not out
        assert " ".join(err.split()) == "error: no trajectory 'nosuch' in tenant 'acme'", (command, err)
    if backend == "embedded":
        return
    code, out, err = run_cli("search", "zebra", "-t", "other")
    assert code == 2
    assert " ".join(err.split()).endswith("not 'other'"), err


def test_show_steps_are_inclusive_positions_and_bad_bounds_are_refused(backend, tmp_path: Path) -> None:
    """Bug: ``--steps=-2`` showed steps 0-2, ``-1:`` every step, and ``8:3`` none, all with exit 0."""
    ingest_two(tmp_path)  # c1 has steps 0-3
    for spec, shown in (("1:2", [1, 2]), ("2:", [2, 3]), (":1", [0, 1]), ("3", [3]), ("2:9", [2, 3])):
        code, out, err = run_cli("show", "c1", "--steps", spec, "--json")
        assert code == 0, err
        assert [s["index"] for s in json.loads(out)["steps"]] == shown, spec
    for spec, said in (("-2", "negative"), (":-2", "negative"), ("-1:", "negative"), ("8:3", "reversed"),
                       ("3:1", "reversed"), ("4", "the run has 4 step(s)"), ("x", "expected N")):
        code, out, err = run_cli("show", "c1", f"--steps={spec}")
        assert code == 2 and said in " ".join(err.split()), (spec, err)
        assert "[step" not in out


def test_exemplars_checks_k_and_budget_as_the_server_does(backend, tmp_path: Path) -> None:
    """Bug: embedded, ``-k -1`` said 'got -10', ``-k 201`` was taken, ``--budget=-5`` printed 'nothing applicable'
    and ``--budget=5`` a cut header; the server refused them all. Both backends now refuse them in its words."""
    ingest_two(tmp_path)
    task = "Fix the failing unit test in the payments service"
    # (the words of every count refused: trajsearch.bounds.out_of_bounds, probe 53)
    for args, said in ((("-k", "-1"), "-k: must be a whole number from 1 to 10, got -1"),
                       (("-k", "201"), "-k: must be a whole number from 1 to 10, got 201"),
                       (("--budget=-5",), "--budget: must be a whole number from 50 to 32000, got -5"),
                       (("--budget=5",), "--budget: must be a whole number from 50 to 32000, got 5")):
        code, out, err = run_cli("exemplars", task, *args)
        assert code == 2 and said in " ".join(err.split()), (args, err)
        assert out == ""
    code, out, err = run_cli("exemplars", task, "-k", "10", "--budget", "50")
    assert code == 0, err


def test_exemplars_json_describes_the_budgeted_context_the_text_is(backend, tmp_path: Path) -> None:
    """Bug: at one budget ``--json`` held fewer exemplars than the text (rendered apart, the more verbose JSON
    fit fewer; at 300 tokens none of the text's one) and ``items`` listed every candidate, budget or not."""
    path = tmp_path / "four.jsonl"
    services = ("payments", "billing", "orders", "checkout")
    runs = [make_run(f"r-{name}", task=f"Fix the failing unit test in the {name} service", steps=[
        ("bash", {"command": f"pytest tests/test_{name}.py"}, f"1 failed in {name}"),
        ("edit", {"path": f"src/{name}.py"}, "edited"),
        ("bash", {"command": f"pytest tests/test_{name}.py"}, "1 passed")]) for name in services]
    path.write_text("\n".join(run.model_dump_json(exclude={"tenant"}) for run in runs) + "\n")
    assert run_cli("ingest", str(path), "--quiet")[0] == 0
    task = "Fix the failing unit test in the payments service"
    counts = set()
    for budget in ("150", "250", "350", "500"):
        code, text, err = run_cli("exemplars", task, "-k", "4", "--budget", budget)
        assert code == 0, err
        code, out, err = run_cli("exemplars", task, "-k", "4", "--budget", budget, "--json")
        assert code == 0, err
        data = json.loads(out)
        shown = [view["provenance"]["trajectory_id"] for view in data["context"]["exemplars"]]
        in_text = sorted((f"r-{name}" for name in services if f"trajectory_id=r-{name} " in text),
                         key=lambda tid: text.index(f"trajectory_id={tid} "))
        assert shown == in_text and text.count("## Example") == len(shown), budget
        assert [item["provenance"]["trajectory_id"] for item in data["items"]] == shown, budget
        assert all(item["view"] == view for item, view in zip(data["items"], data["context"]["exemplars"]))
        assert data["context"].get("omitted", 0) == 4 - len(shown) == (4 - len(shown) if "left out" in text else 0)
        counts.add(len(shown))
    assert len(counts) > 1  # the budgets cut the context at different places


def test_stats_counts_passage_rows_so_its_rows_are_what_ingest_wrote(backend, tmp_path: Path) -> None:
    """Bug: ``stats`` left passage rows out (ingest 10,231 rows, stats 6,820) and ``--help`` did not list the level."""
    long_output = "\n".join(f"collected line {n}: value={n * 7}" for n in range(2000))
    path = tmp_path / "long.jsonl"
    runs = [make_run("long-1", steps=[("bash", {"command": "cat big.log"}, long_output)]), make_run("short-1")]
    path.write_text("\n".join(run.model_dump_json(exclude={"tenant"}) for run in runs) + "\n")
    code, out, err = run_cli("ingest", str(path), "--json", "--quiet")
    assert code == 0, err
    written = json.loads(out)["rows_written"]
    code, out, err = run_cli("stats", "--json")
    assert code == 0, err
    stats = json.loads(out)
    assert stats["rows_by_level"].get("passage", 0) > 0
    assert stats["rows"] == sum(stats["rows_by_level"].values()) == written
    code, out, err = run_cli("stats")
    assert code == 0 and "passage" in out
    code, out, err = run_cli("search", "--help")
    assert "passage" in out


def test_a_store_in_use_names_its_holder_with_a_cut_command_line_marked(tmp_path: Path, monkeypatch) -> None:
    """Bug: the holder's command line was cut at 120 characters with nothing to say so (``... --http )``)."""
    import subprocess
    import sys

    monkeypatch.setenv("TRAJSEARCH_MODEL", "hashing")
    monkeypatch.delenv("TRAJSEARCH_SERVER", raising=False)
    holder = subprocess.Popen(
        [sys.executable, "-c",
         "import sys; from trajsearch.embed import HashingEmbedder; from trajsearch.search import TrajSearch;"
         f"ts = TrajSearch.open({str(tmp_path / 'm.db')!r}, traces={str(tmp_path / 't')!r}, embedder=HashingEmbedder());"
         "print('open', flush=True); sys.stdin.readline()", "--a-long-final-argument"],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "open"
        code, out, err = run_cli("stats", "--uri", str(tmp_path / "m.db"), "--traces", str(tmp_path / "t"))
    finally:
        holder.kill()
        holder.wait()
    said = " ".join(err.split())
    assert code == 1 and f"in use by process {holder.pid} (" in said, err
    shown = said.split(f"in use by process {holder.pid} (", 1)[1].split("); Milvus Lite", 1)[0]
    assert shown.endswith("…") and len(shown) == 120 and "--a-long-final-argument" not in shown


def test_ingest_set_names_the_fields_it_takes_in_the_clis_words(backend, tmp_path: Path) -> None:
    """Probe E of round p43 (E6): ``--set bogus=1`` said "defaults may only name Trajectory fields other than
    'tenant' (pass tenant=)", the Python API's words, listing nothing the flag takes."""
    path = tmp_path / "two.jsonl"
    path.write_text(make_run("c1", tenant="acme").model_dump_json(exclude={"tenant"}) + "\n")
    code, out, err = run_cli("ingest", str(path), "--set", "bogus=1")
    said = " ".join(err.split())
    assert code == 2 and "--set bogus: no such run field; --set takes one of" in said and "env_version" in said
    assert "pass tenant=" not in said
    code, out, err = run_cli("ingest", str(path), "--set", "tenant=other")
    assert code == 2 and "the tenant is --tenant's" in " ".join(err.split())
    code, out, err = run_cli("ingest", str(path), "--set", "env_version=v9", "--quiet")
    assert code == 0, err


def test_a_search_of_a_tenant_holding_no_runs_says_so(backend, tmp_path: Path) -> None:
    """Probe E of round p43: ``search ... -t nosuchtenant`` printed "no matches", exit 0, as if a tenant's runs
    had been searched: a misspelt tenant read as an empty answer. Over the server the key's tenant is the one
    searched, so no misspelling is hinted at there (review 2 of round p43, R2-6). ``exemplars`` still answers
    (a new tenant's agent plans from scratch), with a note."""
    said = {"embedded": "tenant 'acme' holds no runs in this store (a misspelt tenant?",
            "server": "the key's tenant 'acme' holds no runs on this server"}[backend]
    for args in (("search", "KeyError: 'user_id'"), ("similar", "KeyError: 'user_id'"), ("search", "x", "--json")):
        code, out, err = run_cli(*args)
        assert code == 1 and said in " ".join(err.split()) and "nothing to search" in err, args
    code, out, err = run_cli("exemplars", "Fix the failing payments test")
    assert code == 0 and "plan_from_scratch" in out and said in " ".join(err.split())
    ingest_two(tmp_path)
    code, out, err = run_cli("search", "zzqx-no-such-words", "--mode", "lexical")
    assert code == 0 and "no matches" in out and not err  # a tenant holding runs, none of them matching
    code, out, err = run_cli("exemplars", "Translate this poem into French")
    assert code == 0 and "holds no runs" not in err
    if backend == "embedded":
        code, out, err = run_cli("search", "KeyError", "-t", "acmee")
        assert code == 1 and "tenant 'acmee' holds no runs in this store" in " ".join(err.split())


def test_a_word_no_filter_takes_is_refused_naming_its_flag_on_both_backends(backend, tmp_path: Path) -> None:
    """Round 22, CLI6: ``search --level nope`` was refused in the library's words embedded ("unknown level(s)
    ['nope']") and in the service's over --server ("INVALID_ARGUMENT: levels[0]: unknown value 'nope'", a request
    id), naming no flag either way; so were --outcome, --mode and a blank text. Now the CLI refuses each in one
    line naming the flag (as a bad filter value: review r37-ux 3, it had been click's boxed panel, cut at 80
    columns in a pipe), the same on both, before anything is searched."""
    ingest_two(tmp_path)
    blank = "nothing to search by: give a task, free text or a pasted error line"
    for args, said in ((("search", "x", "--level", "step", "--level", "nope", "--json"),
                        "--level 'nope' is not one of"),
                       (("search", "x", "--outcome", "weird"), "--outcome 'weird' is not one of"),
                       (("similar", "x", "--mode", "bogus"), "--mode 'bogus' is not one of"),
                       (("export", "-q", "x", "-l", "nope"), "--level 'nope' is not one of"),
                       # failures reads failure rows, which only failed runs have (review RCLI6 1: it had been
                       # refused in the library's words embedded, the service's over --server, no flag named)
                       (("failures", "--outcome", "weird"), "--outcome 'weird' is not one of"),
                       (("failures", "--outcome", "success"), "--outcome 'success' is not one of"),
                       # a blank text: the library's "query text must be ...", the service's "text: must be ..."
                       (("search", " "), f"text: {blank}"), (("similar", "\n"), f"text: {blank}"),
                       (("exemplars", ""), f"task: {blank}"), (("export", "-q", " "), f"--query: {blank}")):
        code, out, err = run_cli(*args)
        assert code == 2 and not out and len(err.splitlines()) == 1, (args, code, err)
        assert err.startswith(f"error: {said}"), (args, err)
    code, out, err = run_cli("search", "KeyError", "--level", "failure", "--outcome", "failure", "--json")
    assert code == 0 and [h["trajectory_id"] for h in json.loads(out)] == ["c2"], err  # words it takes still work
    code, out, err = run_cli("failures", "--outcome", "failure", "--json")
    assert code == 0 and json.loads(out)["total"] == 1, err


def test_a_tenant_holding_no_runs_is_told_which_tenants_the_store_holds(newcomer) -> None:  # noqa: F811
    """Round 23, CLI7 (an engineer's session): runs ingested with ``-t acme`` and searched without it were answered
    "tenant 'default' holds no runs in this store (a misspelt tenant? 'trajsearch stats -t TENANT' counts a tenant's
    runs)", and ``stats -t acm`` showed 0 runs and no word: which tenant holds them was nowhere to be read. The
    embedded store names them (its operator owns every tenant's data; a server names none but the key's, above).
    The runs are the bundled sample's real ones, tenant demo."""
    from trajsearch.cli import SAMPLE

    code, out, err = run_cli("ingest", str(SAMPLE), "-t", "demo", "--quiet")
    assert code == 0, err
    code, out, err = run_cli("search", "flight not available")
    said = " ".join(err.split())
    assert code == 1 and ("tenant 'default' holds no runs in this store, which holds runs of tenant 'demo': name it "
                          "with -t demo") in said, said
    code, out, err = run_cli("stats", "-t", "dmeo")
    assert code == 0 and "runs" in out
    assert "note: tenant 'dmeo' holds no runs in this store, which holds runs of tenant 'demo'" in " ".join(err.split())
    code, out, err = run_cli("stats", "-t", "demo")
    assert code == 0 and not err.strip(), err


def test_show_takes_the_step_range_a_search_hit_is_labelled_with(backend, tmp_path: Path) -> None:
    """Round 23, CLI7 (an engineer's session): ``search`` labels a hit ``step 1-2``; pasted into ``show --steps 1-2``
    it was refused ("expected N, N:M, N: or :M"). ``N-M`` is ``N:M``; a negative bound is still refused."""
    ingest_two(tmp_path)  # c1 has steps 0-3
    for spec in ("1-2", " 1 - 2 "):
        code, out, err = run_cli("show", "c1", "--steps", spec, "--json")
        assert code == 0, err
        assert [s["index"] for s in json.loads(out)["steps"]] == [1, 2], spec
    for spec, said in (("-2", "negative"), ("1-x", "expected N, N:M (or N-M)"), ("3-1", "reversed")):
        code, out, err = run_cli("show", "c1", f"--steps={spec}")
        assert code == 2 and said in " ".join(err.split()), (spec, err)


def test_an_id_looked_up_in_a_tenant_holding_no_runs_is_told_which_tenants_the_store_holds(newcomer) -> None:  # noqa: F811
    """Review of CLI7, 1: ``show ID`` and ``similar --id ID`` without ``-t``, of a run ingested with ``-t demo``,
    said only "no trajectory 'ID' in tenant 'default'", where ``search`` named the tenant holding the store's runs.
    They say it in the same words (``_no_runs_said``). The run is the bundled sample's first, tenant demo."""
    from trajsearch.cli import SAMPLE

    run_id = json.loads(SAMPLE.read_text().splitlines()[0])["trajectory_id"]
    code, out, err = run_cli("ingest", str(SAMPLE), "-t", "demo", "--quiet")
    assert code == 0, err
    for command in (("show", run_id), ("similar", "--id", run_id), ("show", run_id, "--json")):
        code, out, err = run_cli(*command)
        assert code == 1 and not out, command
        assert " ".join(err.split()) == (f"error: no trajectory {run_id!r}: tenant 'default' holds no runs in this "
                                         "store, which holds runs of tenant 'demo': name it with -t demo (or "
                                         "$TRAJSEARCH_TENANT)"), (command, err)
    code, out, err = run_cli("show", run_id, "-t", "demo", "--json")
    assert code == 0 and json.loads(out)["trajectory_id"] == run_id, err


def test_an_id_looked_up_over_a_server_names_no_tenant_but_the_keys(tmp_path: Path, monkeypatch) -> None:
    """Review of CLI7, 1: over ``--server`` a key reads its own tenant only, so a run of another tenant's, looked up
    with a key whose tenant holds none, names that tenant alone, never the one holding the run."""
    from trajsearch.embed import HashingEmbedder
    from trajsearch.search import TrajSearch
    from trajsearch.service.auth import KeyRing, key_entry, new_key
    from trajsearch.service.server import ServiceServer

    key = new_key()
    ts = TrajSearch.open(str(tmp_path / "srv.db"), traces=str(tmp_path / "srv-traces"), embedder=HashingEmbedder())
    ts.add([make_run("d1", tenant="demo")])
    with ServiceServer(ts, KeyRing.from_entries([key_entry(key, tenant="acme", role="read")]),
                       address="127.0.0.1:0") as srv:
        monkeypatch.setenv("TRAJSEARCH_SERVER", srv.address)
        monkeypatch.setenv("TRAJSEARCH_API_KEY", key)
        monkeypatch.setenv("TRAJSEARCH_MODEL", "hashing")
        for command in (("show", "d1"), ("similar", "--id", "d1")):
            code, out, err = run_cli(*command)
            said = " ".join(err.split())
            assert code == 1 and "no trajectory 'd1'" in said and "'acme'" in said and "demo" not in said, said
    ts.close()


def test_tenants_past_those_named_are_said_where_each_one_is_listed(newcomer, monkeypatch) -> None:  # noqa: F811
    """Review of CLI7, 4: a store of eight tenants was named as "tenants 'team-0', ... 'team-4' and 3 more", with no
    way to list the other three; the note says which command names them all, and that command does."""
    import os

    from trajsearch.embed import HashingEmbedder
    from trajsearch.search import TrajSearch

    ts = TrajSearch.open(os.environ["TRAJSEARCH_URI"], traces=os.environ["TRAJSEARCH_TRACES"],
                         embedder=HashingEmbedder())
    ts.add([make_run(f"r{i}", tenant=f"team-{i}") for i in range(8)])
    ts.close()
    code, out, err = run_cli("search", "payments")
    said = " ".join(err.split())
    assert code == 1 and ("holds runs of tenants 'team-0', 'team-1', 'team-2', 'team-3', 'team-4' and 3 more "
                          "('trajsearch stats -t default' names them all)") in said, said
    code, out, err = run_cli("stats", "-t", "default")
    said = " ".join(err.split())
    assert code == 0 and all(f"'team-{i}'" in said for i in range(8)) and "more" not in said, said


def test_the_tenants_are_named_from_the_runs_whatever_the_lexical_leg(newcomer) -> None:  # noqa: F811
    """FRALLB 2: the tenants named were the in-process lexical index's, loaded (or rebuilt from every row) for a
    mistyped ``stats -t`` (10.7 s, 676 MB at 7,929 rows), and a store searched by Milvus' own BM25 has no such index,
    so its tenants went unnamed ("a misspelt tenant?"). They are read from the runs' task rows: named either way."""
    import os

    from trajsearch.embed import HashingEmbedder
    from trajsearch.search import TrajSearch

    with TrajSearch.open(os.environ["TRAJSEARCH_URI"], traces=os.environ["TRAJSEARCH_TRACES"],
                         embedder=HashingEmbedder(), lexical="milvus") as ts:
        ts.add([make_run("d1", tenant="demo"), make_run("o1", tenant="ops")])
    code, out, err = run_cli("stats", "-t", "dmeo")
    said = " ".join(err.split())
    assert code == 0 and "tenant 'dmeo' holds no runs in this store, which holds runs of tenants 'demo', 'ops'" in said, \
        said


def test_search_and_similar_counts_are_refused_naming_the_option_as_typed(backend, tmp_path: Path) -> None:
    """Bug (round 25): ``search -k 0`` said "k must be a whole number from 1 to 200" and exited 1, naming the
    library's parameter, not the option typed; ``--group-size 0`` said ``group_size``. Both backends now refuse each
    as a usage error in the words ``exemplars -k`` uses, before anything is searched. Over a server, ``-k``'s words
    say that the server's own bound may be lower, as the client's did before the CLI checked first (review of round
    26's ENG4, 4: "from 1 to 200" alone, then ``-k 150`` refused by the server as "1 to 100")."""
    ingest_two(tmp_path)
    server = " (a server takes at most its --max-k: 100 unless set)" if backend == "server" else ""
    for command, args, said in (
            (("search", "KeyError"), ("-k", "0"), f"-k: must be a whole number from 1 to 200{server}, got 0"),
            (("search", "KeyError"), ("-k", "201"), f"-k: must be a whole number from 1 to 200{server}, got 201"),
            (("search", "KeyError"), ("--group-size", "0"), "--group-size: must be a whole number from 1 to 10, got 0"),
            (("search", "KeyError"), ("--group-size", "11"), "--group-size: must be a whole number from 1 to 10, got 11"),
            (("similar", "KeyError"), ("-k", "-1"), f"-k: must be a whole number from 1 to 200{server}, got -1"),
            (("similar", "--id", "c2"), ("-k", "0"), f"-k: must be a whole number from 1 to 200{server}, got 0")):
        code, out, err = run_cli(*command, *args)
        assert code == 2 and " ".join(err.split()) == f"error: {said}", (command, args, err)
        assert out == ""
    code, out, err = run_cli("search", "KeyError", "-k", "100", "--group-size", "10", "--json")
    assert code == 0 and json.loads(out), err  # the top group size is taken (and a server's top k, 100)
    if backend == "server":  # past its --max-k: the server's refusal, which the hint above prepared
        code, out, err = run_cli("search", "KeyError", "-k", "150")
        assert code != 0 and "1 to 100" in " ".join(err.split()), err


def test_show_steps_prints_a_cut_task_and_json_keeps_it_whole(backend) -> None:
    """Round 28, ENG6: ``show ID --steps 3:8`` printed the whole task first, a 6,281-character SWE-bench issue (a
    real mini-swe-agent run's) above the steps asked for. It is cut to one line, saying so; ``--json`` and ``show``
    without ``--steps`` keep it whole."""
    runs = Path(__file__).parent / "fixtures/mini-swe-agent/.real/deepseek-error-line-elsewhere/deepseek_chat_dev"
    assert run_cli("ingest", str(runs), "--quiet")[0] == 0
    run_id = "deepseek-chat.pvlib__pvlib-python-1606.deepseek_chat_dev"
    code, out, err = run_cli("show", run_id, "--json")
    task = json.loads(out)["task"]
    assert code == 0 and len(task) == 6281, err
    code, out, err = run_cli("show", run_id, "--steps", "3:8")
    assert code == 0, err
    assert "(cut: the task has 6,281 characters;" in out, out[:1000]
    shown = " ".join(out[out.index("task: "):out.index("(cut: the task has")].split())
    assert len(shown) < 400 and shown.endswith("…"), shown
    assert "[step 8]" in out and "[step 9]" not in out
    assert json.loads(run_cli("show", run_id, "--steps", "3:8", "--json")[1])["task"] == task
    assert " ".join(task.split()) in " ".join(run_cli("show", run_id)[1].split())

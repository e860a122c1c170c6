"""Probe 50 (area EN, engineers and the runtime): what ``search``, ``similar``, the web search box and the runtime
tool say of the runs they find.

Real inputs: the mini-swe-agent run of SWE-bench Verified in tests/fixtures/mini-swe-agent/.real/swebench-gemini-3-pro
(handed in, no verdict in its dump; its harness reports beside it) and the runs of the other folders named below (each
folder's SOURCE.md says where they come from).
"""

from __future__ import annotations

import json
from pathlib import Path

from cli_support import backend, run_cli  # noqa: F401 - the fixture

FIXTURES = Path(__file__).parent / "fixtures"
#: A gemini-3-pro run of django__django-16255, handed in with no verdict: "submitted, not evaluated".
UNEVALUATED = FIXTURES / "mini-swe-agent" / ".real" / "swebench-gemini-3-pro" / "trajs"
UNEVALUATED_ID = "gemini-3-pro-preview.django__django-16255.88563d52e3"
SUBMITTED = "submitted, not evaluated"


def test_search_and_similar_say_a_run_no_one_evaluated_is_not_a_success(backend) -> None:  # noqa: F811
    """``search`` and ``similar`` printed ``outcome=success`` for a SWE-bench run handed in with no verdict, where
    ``show``, the web pages and the agents' context call it "submitted, not evaluated": an engineer looking for a
    run that fixed the error was pointed at one nobody had checked. Both now print the outcome shown, and ``--json``
    keeps ``outcome`` (the value ``--outcome`` filters on) with ``outcome_shown`` beside it."""
    assert run_cli("ingest", str(UNEVALUATED), "--quiet")[0] == 0
    for command in (["search", "ModelAdmin sitemap lastmod"], ["similar", "max() arg is an empty sequence"]):
        code, out, err = run_cli(*command, "-k", "1")
        assert code == 0, err
        out = " ".join(out.split())  # as printed, wrapped to the terminal's width
        assert UNEVALUATED_ID in out and f"outcome={SUBMITTED}" in out and "outcome=success" not in out, out
        code, out, err = run_cli(*command, "-k", "1", "--json")
        assert code == 0, err
        [found] = json.loads(out)
        assert found["outcome"] == "success" and found["outcome_shown"] == SUBMITTED, found


def test_the_runtime_tools_step_results_say_a_run_no_one_evaluated_is_not_a_success(hashing_ts) -> None:
    """The tool's ``kind=steps`` results gave ``"outcome": "success"`` for the same run, beside exemplars that call it
    "submitted but not evaluated": the model was told a step of an unchecked run was a step of a success."""
    from trajsearch.ingest.read import read_dump
    from trajsearch.runtime import Runtime, RuntimeContext

    hashing_ts.add([p.trajectory for path in sorted(UNEVALUATED.rglob("*.traj.json"))
                    for p in read_dump(path, tenant="acme")])
    answer = Runtime(hashing_ts).tool(RuntimeContext(tenant="acme"))(
        {"query": "max() arg is an empty sequence", "kind": "steps", "k": 2})
    assert answer["status"] == "ok" and answer["results"], answer
    assert {r["outcome"] for r in answer["results"]} == {SUBMITTED}, answer


def test_an_id_no_run_has_is_said_so_with_the_ids_it_most_likely_meant(backend) -> None:  # noqa: F811
    """An id typed with a digit wrong (``...django__django-16256``), or a SWE-bench instance id where the run's id
    goes, was searched as words with nothing said (``search``, ``similar TEXT``): on /work/shared/data
    ``search deepseek_chat_dev.pylint-dev__astroid-1286`` showed astroid-1333's runs first, as if they were it. Now
    stderr says no run has that id and, on the embedded store, which ids it most likely meant; ``similar --id`` and
    ``show`` name them in their error."""
    assert run_cli("ingest", str(UNEVALUATED), "--quiet")[0] == 0
    typo = UNEVALUATED_ID.replace("16255", "16256")
    for command in ("search", "similar"):
        for typed in (typo, "django__django-16255"):
            code, out, err = run_cli(command, typed, "-k", "1")
            assert code == 0, err
            said = " ".join(err.split())
            assert f"no run of this tenant has the id {typed!r}" in said, (command, typed, err)
            if backend == "embedded":  # the service lists no ids to choose from
                assert f"did you mean {UNEVALUATED_ID!r}" in said, err
    for command in (["similar", "--id", typo], ["show", typo]):
        code, out, err = run_cli(*command)
        assert code == 1 and f"no trajectory {typo!r}" in " ".join(err.split()), err
        if backend == "embedded":
            assert f"did you mean {UNEVALUATED_ID!r}" in " ".join(err.split()), err
    code, out, err = run_cli("search", "ModuleNotFoundError", "-k", "1")  # a word, not an id: no id is named
    assert code == 0 and "has the id" not in err and "did you mean" not in err, err


def test_the_web_search_box_says_an_id_no_run_has_and_links_the_nearest(tmp_path: Path) -> None:
    """The web page takes a pasted run id as "runs like this one"; an id mistyped (``tau-gpt-4o-airline-13-t9`` for
    the sample's ``-t0``/``-t1``) was searched as words, its runs shown with no note. The page now says no run of
    the key's has that id and links the ids it most likely meant, the key's own only (never another tenant's)."""
    from test_probe49_users import _signed_in_web_client
    from web_support import BROKEN, SUCCESS

    ts, client = _signed_in_web_client(tmp_path)
    try:
        page = client.get("/", params={"q": "tau-gpt-4o-airline-13-t9"}).text
        assert "No run of yours has the id tau-gpt-4o-airline-13-t9; searched it as text." in page, page
        assert f'<a href="/runs/{BROKEN}">{BROKEN}</a>' in page and f'<a href="/runs/{SUCCESS}">' in page, page
        assert "other-ok" not in page and "other-broken" not in page
        page = client.get("/", params={"q": BROKEN}).text  # the run itself: runs like it, no such note
        assert "No run of yours has the id" not in page
        page = client.get("/", params={"q": "cancel"}).text  # a word: no note
        assert "No run of yours has the id" not in page
    finally:
        ts.close()


#: Two real tau-bench runs of one airline task (gpt-4o): ``-t0`` failed, ``-t1`` succeeded.
AIRLINE = FIXTURES / "tau-bench" / "gpt-4o-airline-mini.json"


def test_an_empty_failures_answer_of_the_runtime_tool_says_why(hashing_ts) -> None:
    """``kind=failures`` answered ``{"status": "ok", "results": []}`` whether the query was like no failed run, the
    runtime context's env version held no failed run, or the tenant had none: an agent (and its operator reading the
    trace) took "no failed run at all" for "nothing like this failed". The answer now carries a ``reason`` label and
    a ``note`` saying it."""
    from trajsearch.ingest.read import read_dump
    from trajsearch.runtime import Runtime, RuntimeContext

    runs = {p.trajectory.trajectory_id: p.trajectory.model_copy(update={"env_version": "v1"})
            for p in read_dump(AIRLINE, tenant="acme")}
    failed, passed = "tau-gpt-4o-airline-mini-0-t0", "tau-gpt-4o-airline-mini-0-t1"
    assert runs[failed].outcome.value == "failure" and runs[passed].outcome.value == "success"
    task = runs[failed].task
    rt = Runtime(hashing_ts)

    def ask(query: str, **ctx: str) -> dict:
        answer = rt.tool(RuntimeContext(tenant="acme", **ctx))({"query": query, "kind": "failures", "k": 2})
        assert answer["status"] == "ok", answer
        return answer

    hashing_ts.add([runs[passed]])
    answer = ask(task)
    assert answer["results"] == [] and answer["reason"] == "no_failed_runs" and answer["note"], answer
    hashing_ts.add([runs[failed]])
    answer = ask(task, env_version="v2")
    assert answer["results"] == [] and answer["reason"] == "no_failures_in_versions", answer
    answer = ask("zebracorn quasar kubelet eviction threshold", env_version="v1")
    assert answer["results"] == [] and answer["reason"] == "no_similar_failures", answer
    answer = ask(task, env_version="v1")  # found: no reason to give
    assert [r["provenance"]["trajectory_id"] for r in answer["results"]] == [failed] and "reason" not in answer, answer


#: Runs of /work/shared/data ending in ``IndentationError: unexpected indent`` and the traceback an engineer pastes
#: (probe 49's fixture; see SOURCE.md there).
ERROR_TIER = FIXTURES / "mini-swe-agent" / ".real" / "probe49-error-tier"


def test_a_run_holding_a_cut_paste_is_shown_by_its_row_holding_the_pasted_error(hashing_ts) -> None:
    """The error-line tier (``search._fused``: rows holding the error a pasted traceback ends in take their run's
    best score, :func:`~trajsearch.search.in_their_runs_place`) must run after the verbatim and near-verbatim lifts:
    placed before them, a row nearly holding the paste but cut before its error (``python test_issue.py | head -8``
    printing every frame and not the ``IndentationError``) is lifted above the row of the same run holding the
    error, and the run is shown by the cut step, which says nothing failed (review RU3 of probe 49; no test caught
    the order). The run is built from real steps of the fixture's runs (their ``Step`` records as read, unchanged
    but for the cut and their positions): the sqlfluff run's steps (one says ``Sorry: IndentationError: unexpected
    indent``), the rerun's four, and the pasted traceback's step printed without its last line."""
    from trajsearch.ingest.read import read_dump

    runs = {p.trajectory.trajectory_id: p.trajectory
            for path in sorted(ERROR_TIER.rglob("*.traj.json")) for p in read_dump(path, tenant="acme")}
    paste = (ERROR_TIER / "pasted-indentation-error.txt").read_text()
    error = "IndentationError: unexpected indent"
    assert paste.rstrip().endswith(error)
    printed = runs.pop("deepseek-chat.pvlib__pvlib-python-1707.88e89227ca").steps[3]  # prints the paste whole
    cut = printed.model_copy(update={"observation": printed.observation[: printed.observation.rindex(error)],
                                     "error": None})
    steps = [*runs["deepseek-reasoner.sqlfluff__sqlfluff-1517.23b3df3740"].steps,
             *runs["deepseek-chat.pvlib__pvlib-python-1707.418fa37c76"].steps, cut]
    built = runs["deepseek-chat.pvlib__pvlib-python-1707.53e1f0e02b"].model_copy(update={
        "trajectory_id": "built.pvlib__pvlib-python-1707",
        "steps": [s.model_copy(update={"index": i}) for i, s in enumerate(steps)]})
    hashing_ts.add([built, *runs.values()])
    for mode in ("auto", "hybrid", "lexical"):
        hits = hashing_ts.search(paste, tenant="acme", levels="step", k=3, mode=mode)
        assert hits[0].trajectory_id == built.trajectory_id, (mode, hits[0])
        assert error in hits[0].text, (mode, hits[0].step_index)  # not the cut step (positions 6-8)


# -- round 17, FREN: REN's review of the engineers' fixes ---------------------------------------------------------

#: Three gemini-3-pro runs of SWE-bench Verified (two of django, ids 14122 and 16263), a family of their own.
SIMILAR = FIXTURES / "mini-swe-agent" / ".real" / "gemini-3-pro-similar"


def _runs(*dumps: Path, tenant: str = "acme") -> list:
    from trajsearch.ingest.read import read_dump

    files = [f for d in dumps for f in (sorted(d.rglob("*.traj.json")) if d.is_dir() else [d])]
    return [p.trajectory for f in files for p in read_dump(f, tenant=tenant)]


def _ids_read(monkeypatch) -> list[str]:
    """The run ids the store hands out (``TrajectoryIndex.iterate`` or ``some`` of ``trajectory_id`` alone), as read."""
    from trajsearch.store.index import TrajectoryIndex

    read: list[str] = []
    scan, some = TrajectoryIndex.iterate, getattr(TrajectoryIndex, "some", None)

    def scanned(self, fields, *args, **kwargs):
        for row in scan(self, fields, *args, **kwargs):
            if list(fields) == ["trajectory_id"]:
                read.append(row["trajectory_id"])
            yield row

    def looked_up(self, fields, *args, **kwargs):
        rows = some(self, fields, *args, **kwargs)
        read.extend(row["trajectory_id"] for row in rows if list(fields) == ["trajectory_id"])
        return rows

    monkeypatch.setattr(TrajectoryIndex, "iterate", scanned)
    if some is not None:
        monkeypatch.setattr(TrajectoryIndex, "some", looked_up)
    return read


def test_a_mistyped_id_reads_its_familys_ids_only_and_is_offered_ids_two_edits_off(hashing_ts, monkeypatch) -> None:
    """Every id-shaped query read all the tenant's run ids and ranked them with difflib (20 s a search on a 60k-run
    tenant, probe 50 REN D1), and offered ids three or four characters off after the one meant (D6: 14122 for a
    typo of 16263). Now the store is asked for the typed id's family only, and only ids within two edits are
    offered, fewest first."""
    from trajsearch.store.filters import Filters

    hashing_ts.add(_runs(SIMILAR, UNEVALUATED, AIRLINE))
    read = _ids_read(monkeypatch)
    typo = "gemini-3-pro-preview.django__django-16262.7db9769226"
    assert hashing_ts.nearest_run_ids(typo, Filters(tenant="acme")) == [
        "gemini-3-pro-preview.django__django-16263.7db9769226"]
    assert read and all(i.startswith("gemini-3-pro-preview.") for i in read), read  # not the tau runs
    read.clear()
    held = hashing_ts.nearest_run_ids("django__django-16255", Filters(tenant="acme"))  # an instance id: its run
    assert held == [UNEVALUATED_ID] and UNEVALUATED_ID in read and not any(i.startswith("tau-") for i in read), read


def test_a_word_with_digits_searched_reads_no_run_ids(backend, monkeypatch) -> None:  # noqa: F811
    """``python3.11`` and ``exit_code_137`` (short, id-shaped at one character) were looked up as ids on every
    search: a scan of every run id of the tenant. A text shorter than an id is searched as words only."""
    assert run_cli("ingest", str(SIMILAR), "--quiet")[0] == 0
    read = _ids_read(monkeypatch)
    for word in ("python3.11", "exit_code_137", "v2.3.1"):
        code, out, err = run_cli("search", word, "-k", "1")
        assert code == 0 and "has the id" not in err and "did you mean" not in err, err
    assert read == [], read


def test_error_names_and_paths_are_not_told_no_run_has_them(backend) -> None:  # noqa: F811
    """``urllib3.exceptions.ReadTimeoutError``, ``sqlite3.OperationalError``, ``tests/unittest_python3.py`` and
    ``requests==2.31.0`` read as ids (a digit, a separator, 16 characters) and were answered "no run of this tenant
    has the id": an engineer pasting an error name was told they had typed a run id wrong. Said now only of a
    text near an id, or of the family of the tenant's ids; a typo of one still is (the test above this round's)."""
    assert run_cli("ingest", str(UNEVALUATED), "--quiet")[0] == 0
    assert run_cli("ingest", str(SIMILAR), "--quiet")[0] == 0
    for text in ("urllib3.exceptions.ReadTimeoutError", "sqlite3.OperationalError", "tests/unittest_python3.py",
                 "requests==2.31.0"):
        code, out, err = run_cli("search", text, "-k", "3")
        assert code == 0 and "no run of this tenant has the id" not in " ".join(err.split()), (text, err)
    typo = "gemini-3-pro-preview.pylint-dev__pylint-4640.38ed7164d3"  # two digits swapped: its family is the tenant's
    code, out, err = run_cli("search", typo, "-k", "3")
    assert code == 0 and f"no run of this tenant has the id {typo!r}" in " ".join(err.split()), err


def test_over_a_server_an_unreadable_trace_leaves_its_runs_outcome_and_each_run_is_read_once(
        backend, tmp_path: Path, monkeypatch) -> None:  # noqa: F811
    """Over ``--server`` the outcome shown was read from each successful HIT's trace: ``--group-size 3`` asked the
    server for one trace three times, and one trace the server could not read (DATA_LOSS) failed the whole
    ``search`` and ``similar``. Now each run's trace is asked for once, and an unreadable one leaves the row's
    outcome. (A server's hits now carry the outcome shown, read from the rows (probe 52): the traces are read only
    from a server older than that, as this one is made to be.)"""
    if backend != "server":
        return  # the embedded store reads the summary rows' digests (its own test)
    from trajsearch.search import TrajSearch
    from trajsearch.service.client import Client

    monkeypatch.setattr(TrajSearch, "outcomes_known", lambda self, hits, tenant: {})  # an older server's hits

    assert run_cli("ingest", str(UNEVALUATED), "--quiet")[0] == 0
    assert run_cli("ingest", str(SIMILAR), "--quiet")[0] == 0
    asked: list[str] = []
    get_trace = Client.get_trace

    def counted(self, trace_uri, **kwargs):
        asked.append(trace_uri)
        return get_trace(self, trace_uri, **kwargs)

    monkeypatch.setattr(Client, "get_trace", counted)
    code, out, err = run_cli("search", "ModelAdmin sitemap lastmod", "-k", "3", "--group-size", "3", "--json")
    assert code == 0, err
    found = json.loads(out)
    assert len(asked) == len(set(asked)) == len({h["trajectory_id"] for h in found if h["outcome"] == "success"})
    traces = [p for p in (tmp_path / "srv-traces").rglob("*") if p.is_file() and UNEVALUATED_ID in str(p)] or \
        [p for p in (tmp_path / "srv-traces").rglob("*") if p.is_file()]
    for path in traces:
        path.write_bytes(b"\x00 not a trace")
    for command in (["search", "ModelAdmin sitemap lastmod", "--group-size", "3"],
                    ["similar", "max() arg is an empty sequence"]):
        code, out, err = run_cli(*command, "-k", "3", "--json")
        assert code == 0, (command, err)
        assert any(r["trajectory_id"] == UNEVALUATED_ID and r["outcome_shown"] == "success"
                   for r in json.loads(out)), out


def test_a_pinned_keys_empty_failures_answer_says_nothing_of_versions_it_cannot_read(tmp_path: Path) -> None:
    """The runtime tool's ``kind=failures`` answer said why it was empty from a second search of the tenant's whole:
    a key pinned to env ``v2`` was told ``no_failures_in_versions`` ("only for others") when the tenant's only
    failed run was of ``v1``, a version the key may not read (D4). Now the second search stays inside the key's
    pins. And an answer for versions wholly outside them said no reason at all (D5): it now says it."""
    from service_support import key_ring, serve_store
    from trajsearch.service.client import Client
    from trajsearch.service.validate import Limits

    runs = {r.trajectory_id: r.model_copy(update={"env_version": "v1"}) for r in _runs(AIRLINE)}
    failed, passed = "tau-gpt-4o-airline-mini-0-t0", "tau-gpt-4o-airline-mini-0-t1"
    runs[passed] = runs[passed].model_copy(update={"env_version": "v2"})
    made, ring = key_ring(pinned=dict(tenant="acme", role="read", key_id="pinned", env_versions=["v2"]),
                          whole=dict(tenant="acme", role="read", key_id="whole"))
    srv = serve_store(tmp_path, ring, list(runs.values()), Limits())
    try:
        task = runs[failed].task
        with Client(srv.address, made["pinned"]) as pinned:
            answer = pinned.search_past_runs(task, session_id="s1", kind="failures", env_version="v2")
            assert answer["results"] == [] and answer["reason"] == "no_failed_runs", answer
            answer = pinned.search_past_runs(task, session_id="s2", kind="failures", env_version="v1")
            assert answer["results"] == [] and answer["reason"] == "versions_not_readable" and answer["note"], answer
        with Client(srv.address, made["whole"]) as whole:  # a key that reads every version is still told
            answer = whole.search_past_runs(task, session_id="s3", kind="failures", env_version="v2")
            assert answer["results"] == [] and answer["reason"] == "no_failures_in_versions", answer
    finally:
        srv.stop(grace=2)


def test_every_run_holding_an_instance_id_is_offered_once(hashing_ts) -> None:
    """Review RZ2: the id lookup read task and summary rows alike (a level's partition holds both), so each run
    came twice and the ``n`` places went to the first runs' doubles: of three agents' runs of one SWE-bench
    instance, two were offered (one with ``n=2``)."""
    from trajsearch.store.filters import Filters

    [run] = _runs(UNEVALUATED)
    runs = [run.model_copy(update={"trajectory_id": f"agent{n}.django__django-16255"}) for n in (1, 2, 3)]
    hashing_ts.add(runs)
    offered = hashing_ts.nearest_run_ids("django__django-16255", Filters(tenant="acme"), n=3)
    assert offered == [r.trajectory_id for r in runs]


def test_a_long_id_of_many_underscores_is_looked_up_as_typed(backend) -> None:  # noqa: F811
    """Review RZ2: an id may be 192 characters; the lookup checked its escaped pattern (each ``_`` doubled) as a
    filter value of at most 200, so a valid long id failed ``show`` and ``search`` with "trajectory_id too long
    (256 > 200 chars)" quoting a pattern the user never typed."""
    assert run_cli("ingest", str(SIMILAR), "--quiet")[0] == 0
    long_id = "gemini-3-pro-similar.django__django-16263_" + "x_" * 70 + "1"
    assert len(long_id) <= 192
    code, out, err = run_cli("show", long_id)
    assert code == 1 and "no trajectory" in err and "too long" not in err, err
    code, out, err = run_cli("search", long_id, "-k", "1")
    assert code == 0 and "too long" not in err, err

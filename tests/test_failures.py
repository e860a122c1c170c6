"""Failure modes through the public interfaces: the library, the CLI (both backends) and the gRPC service.

Grouping by meaning needs the real model (``@pytest.mark.model``: paraphrases of one
cause merge, different causes in similar words stay apart); counting, periods,
filters, examples and tenancy are plumbing and use the fast hashing test embedder.
All on real Milvus Lite in a temp dir.
"""

from __future__ import annotations

import json
from datetime import timedelta
from pathlib import Path

import numpy as np
import pytest

from trajsearch.client import Client
from trajsearch.embed import HashingEmbedder
from trajsearch.failures import (
    FailureReport, ModeConfig, cluster, error_template, failure_modes, label_for, meaning_text, parse_duration,
    parse_time, plain_error, row_error,
)
from trajsearch.model import Failure
from trajsearch.represent import failure_text
from trajsearch.search import TrajSearch
from trajsearch.service.server import ServiceServer

from cli_support import backend, run_cli  # noqa: F401 (fixture)
from conftest import BASE_TIME, failing_run, make_run
from service_support import key_ring

DAY = 86400
#: The end of the analysed period in the trend tests: BASE_TIME + 20 days.
UNTIL = int((BASE_TIME + timedelta(days=20)).timestamp())


def _errors(ts: TrajSearch, items: list[tuple[str, str, dict]], tenant: str = "acme") -> None:
    """Ingest one failed run per (id, error, fields)."""
    ts.add([failing_run(tid, error, tenant=tenant, **fields) for tid, error, fields in items])


# -- templates ---------------------------------------------------------------------------------


@pytest.mark.parametrize("error, template", [
    ("ModuleNotFoundError: No module named 'yaml'", "ModuleNotFoundError: No module named <name>"),
    ("ModuleNotFoundError: No module named 'requests'", "ModuleNotFoundError: No module named <name>"),
    ("FileNotFoundError: [Errno 2] No such file or directory: '/srv/app/config.yaml'",
     "FileNotFoundError: [Errno 2] No such file or directory: <name>"),
    ("cat: /srv/app/settings.py: No such file or directory", "cat: <path>: No such file or directory"),
    ("flight HAT223 not available on date 2024-05-14", "flight <id> not available on date <date>"),
    ("error: commit 1a2b3c4d5e6f not found", "error: commit <hex> not found"),
    ("segfault at 0x7f3a2c1d", "segfault at <hex>"),
    ("exit code 137: Killed after 600.5 seconds", "exit code 137: Killed after <n> seconds"),
    ("expected outputs never given to the user: 327, 1000, 1786", "expected outputs never given to the user: <n>"),
    ("GET https://api.example.com/v1/chat?x=1 -> HTTP 503", "GET <url> -> HTTP 503"),
    ("run 3f2b9c1e-8a4d-4f6a-9b2c-1d2e3f4a5b6c failed", "run <uuid> failed"),
    ("TypeError: parse_args() takes 2 positional arguments but 3 were given",
     "TypeError: <name>() takes <n> positional arguments but <n> were given"),
])
def test_error_templates_abstract_what_varies(error: str, template: str) -> None:
    assert error_template(error) == template


def test_a_failure_rows_error_is_read_back_from_its_text() -> None:
    run = failing_run("r1", "ValueError: bad\nsecond line", what_failed="the parser")
    text, _ = failure_text(run)
    assert row_error(text) == "ValueError: bad\nsecond line"


def test_meaning_text_keeps_the_most_specific_clause_in_words() -> None:
    template = error_template("reward 0.0: final database state differs from the expected one; last tool error: "
                              "update_reservation_flights -> Error: not enough seats on flight HAT29")
    assert meaning_text(template) == "Error: not enough seats on flight"
    assert meaning_text("ModuleNotFoundError: No module named <name>") == "Module Not Found Error: No module named"
    assert label_for(template) == "not enough seats on flight <id>"
    assert label_for("ImportError: No module named requests") == "missing Python module"


def test_durations_and_times() -> None:
    assert [parse_duration(v) for v in ("7d", "24h", "2w", "90m", 3600, timedelta(hours=1))] == [
        7 * DAY, DAY, 14 * DAY, 5400, 3600, 3600]
    assert parse_time("2026-01-01") == int(BASE_TIME.timestamp())
    assert parse_time("2026-01-01T00:00:00Z") == int(BASE_TIME.timestamp())
    for bad in ("7 parsecs", "-1d", 0, "", True):
        with pytest.raises(ValueError, match="since"):
            parse_duration(bad)
    with pytest.raises(ValueError, match="until"):
        parse_time("yesterday")


def test_clustering_in_blocks_matches_clustering_at_once() -> None:
    """Past ``max_cluster`` meanings, later blocks join the nearest mode or cluster among themselves."""
    rng = np.random.default_rng(3)
    centres = rng.normal(size=(6, 32))
    points = np.concatenate([c + rng.normal(scale=0.05, size=(40, 32)) for c in centres])
    points /= np.linalg.norm(points, axis=1, keepdims=True)
    order = rng.permutation(len(points))
    points = points[order]
    whole, blocks = cluster(points, 0.3, max_cluster=1000), cluster(points, 0.3, max_cluster=50)

    def partition(labels):
        return sorted(sorted(np.flatnonzero(labels == label).tolist()) for label in set(labels.tolist()))

    assert len(set(whole.tolist())) == 6
    assert partition(whole) == partition(blocks)


# -- plumbing on the hashing embedder ----------------------------------------------------------


@pytest.fixture
def seeded(hashing_ts: TrajSearch) -> TrajSearch:
    """acme: 5 missing-module failures (3 templates' worth of modules, one template), 2 disk-full,
    1 infra error; one success; tenant beta: failures acme must never see."""
    ts = hashing_ts
    _errors(ts, [
        ("m1", "ModuleNotFoundError: No module named 'yaml'", {"env_version": "v1", "model_id": "gpt-4o", "days": 1}),
        ("m2", "ModuleNotFoundError: No module named 'requests'", {"env_version": "v1", "model_id": "gpt-4o",
                                                                  "days": 2}),
        ("m3", "ModuleNotFoundError: No module named 'numpy'", {"env_version": "v2", "model_id": "claude", "days": 3}),
        ("m4", "ModuleNotFoundError: No module named 'yaml'", {"env_version": "v2", "model_id": "gpt-4o", "days": 4}),
        ("m5", "ModuleNotFoundError: No module named 'pandas'", {"env_version": "v2", "days": 5}),
        ("d1", "OSError: [Errno 28] No space left on device: '/var/lib/x'", {"env_version": "v1", "days": 1}),
        ("d2", "OSError: [Errno 28] No space left on device: '/tmp/y'", {"env_version": "v2", "days": 2}),
    ])
    ts.add([
        make_run("i1", outcome="infra_error", failure=Failure(error="litellm.Timeout: Connection timed out after "
                                                                   "600 seconds"), env_version="v1"),
        make_run("s1", env_version="v1"),
        failing_run("b1", "ModuleNotFoundError: No module named 'yaml'", tenant="beta"),
        failing_run("b2", "SECRET beta failure", tenant="beta"),
    ])
    return ts


def test_modes_count_share_and_examples(seeded: TrajSearch) -> None:
    report = failure_modes(seeded, tenant="acme")
    assert (report.tenant, report.total, report.since, report.previous_total) == ("acme", 8, None, None)
    top = report.modes[0]
    assert top.label == "missing Python module"
    assert (top.count, round(top.share, 3)) == (5, 0.625)
    assert top.templates == [{"template": "ModuleNotFoundError: No module named <name>", "count": 5}]
    assert top.env_versions == {"v2": 3, "v1": 2}
    assert top.failing_tools == {"bash": 5}
    assert (top.previous, top.trend) == (None, "")
    assert len(top.examples) == 3 and {e.trajectory_id for e in top.examples} <= {"m1", "m2", "m3", "m4", "m5"}
    latest = top.examples[0]
    assert latest.trajectory_id == "m5" and latest.error == "ModuleNotFoundError: No module named 'pandas'"
    assert latest.trace_uri == seeded.run("m5", tenant="acme").trace_uri
    assert latest.task.startswith("Fix the failing unit test")
    assert {e.model for e in top.examples} <= {"gpt-4o", "claude", ""}
    assert sum(top.models.values()) == top.models_sampled == 5  # all five traces read (fewer than the sample)
    assert top.models == {"gpt-4o": 3, "claude": 1, "(unknown)": 1}
    assert top.tools == {"bash": 5}  # of the same runs, from their traces
    labels = [m.label for m in report.modes]
    assert labels[1] == "disk full" and report.modes[1].count == 2
    assert "model API timeout" in labels  # the infra error
    assert sum(m.count for m in report.modes) == report.total
    assert not any("SECRET" in e.error for m in report.modes for e in m.examples)


def test_other_tenants_never_count(seeded: TrajSearch) -> None:
    report = failure_modes(seeded, tenant="beta")
    assert report.total == 2
    assert {e.trajectory_id for m in report.modes for e in m.examples} == {"b1", "b2"}


def test_filters_narrow_the_failures(seeded: TrajSearch) -> None:
    v1 = failure_modes(seeded, tenant="acme", env_version="v1")
    assert v1.total == 4 and all(set(m.env_versions) == {"v1"} for m in v1.modes)
    infra = failure_modes(seeded, tenant="acme", outcome="infra_error")
    assert infra.total == 1 and infra.modes[0].examples[0].trajectory_id == "i1"
    gpt = failure_modes(seeded, tenant="acme", model="gpt-4o")  # from the traces: rows carry no model id
    assert gpt.total == 3 and gpt.modes[0].models == {"gpt-4o": 3} and gpt.modes[0].models_sampled == 3
    assert failure_modes(seeded, tenant="acme", tools="no-such-tool").total == 0
    with pytest.raises(ValueError, match="outcome"):
        failure_modes(seeded, tenant="acme", outcome="success")


def test_limit_counts_the_modes_left_out(seeded: TrajSearch) -> None:
    report = failure_modes(seeded, tenant="acme", limit=1, examples=1)
    assert len(report.modes) == 1 and len(report.modes[0].examples) == 1
    assert report.other_modes == 2 and report.other_failures == 3


def test_trend_against_the_previous_period(hashing_ts: TrajSearch) -> None:
    """until = day 20, since 7d: days 13-20 are this period, 6-13 the previous; older ones not at all."""
    _errors(hashing_ts, [
        *[(f"k{n}", "KeyError: 'user_id'", {"days": 14 + n}) for n in range(4)],  # 4 now
        ("k9", "KeyError: 'user_id'", {"days": 8}),  # 1 before: up
        *[(f"p{n}", "PermissionError: [Errno 13] Permission denied: '/etc/x'", {"days": 7 + n}) for n in range(3)],
        ("p9", "PermissionError: [Errno 13] Permission denied: '/etc/y'", {"days": 15}),  # 3 before, 1 now: down
        ("z1", "ZeroDivisionError: division by zero", {"days": 16}),  # new
        ("old", "ZeroDivisionError: division by zero", {"days": 1}),  # before both periods
        ("future", "KeyError: 'later'", {"days": 25}),  # after until
    ])
    report = failure_modes(hashing_ts, tenant="acme", since="7d", until=UNTIL)
    assert (report.since, report.until) == (UNTIL - 7 * DAY, UNTIL)
    assert (report.total, report.previous_total) == (6, 4)
    by_label = {m.label: m for m in report.modes}
    assert (by_label["missing key"].count, by_label["missing key"].previous, by_label["missing key"].trend,
            by_label["missing key"].change) == (4, 1, "up", 3.0)
    assert (by_label["permission denied"].previous, by_label["permission denied"].trend) == (3, "down")
    assert (by_label["division by zero"].previous, by_label["division by zero"].trend) == (0, "new")
    assert all(e.created_at <= UNTIL for m in report.modes for e in m.examples)


def test_no_failures_is_an_empty_report(hashing_ts: TrajSearch) -> None:
    hashing_ts.add([make_run("ok")])
    report = failure_modes(hashing_ts, tenant="acme", since="1d")
    assert (report.total, report.modes, report.previous_total) == (0, [], 0)


def test_too_rare_to_embed_meanings_are_modes_of_their_own(seeded: TrajSearch) -> None:
    _errors(seeded, [("n1", "not enough seats on flight HAT223", {}), ("n2", "not enough seats on flight HAT29", {}),
                     ("g1", "gift card balance is not enough", {})])
    report = failure_modes(seeded, tenant="acme", config=ModeConfig(max_embed=1))
    assert report.total == 11 and [m.count for m in report.modes] == [5, 2, 2, 1, 1]
    assert report.rare == 3  # the seats (2) and the gift card (1): grouped by their exact template only
    # disk full and the timeout are well-known causes: grouped by cause, embedded or not
    assert {"disk full", "model API timeout"} <= {m.label for m in report.modes}


# -- meaning: the real model -------------------------------------------------------------------


@pytest.mark.model
def test_paraphrases_of_one_cause_merge_and_different_causes_do_not(model_ts: TrajSearch) -> None:
    errors = {
        "missing python module": ["ModuleNotFoundError: No module named 'yaml'"] * 3
        + ["ModuleNotFoundError: No module named 'requests'"] * 2 + ["ImportError: No module named requests"] * 2,
        "file not found": ["FileNotFoundError: [Errno 2] No such file or directory: 'config.yaml'"] * 2,
        "disk full": ["OSError: [Errno 28] No space left on device"] * 2,
        "syntax": ["SyntaxError: invalid syntax (app.py, line 12)"] * 2,
        "indentation": ["IndentationError: unexpected indent"] * 2,
    }
    _errors(model_ts, [(f"{cause[:4]}-{n}", error, {}) for cause, items in errors.items()
                       for n, error in enumerate(items)])
    report = failure_modes(model_ts, tenant="acme")
    modes = {frozenset(e.trajectory_id.split("-")[0] for e in m.examples): m for m in report.modes}
    assert len(report.modes) == 5, [(m.label, m.templates) for m in report.modes]
    top = report.modes[0]
    assert (top.label, top.count) == ("missing Python module", 7)
    assert {t["template"] for t in top.templates} == {"ModuleNotFoundError: No module named <name>",
                                                      "ImportError: No module named requests"}
    assert [m.count for m in report.modes] == [7, 2, 2, 2, 2]
    assert {m.label for m in report.modes} == {"missing Python module", "file not found", "disk full",
                                               "syntax error", "indentation error"}
    assert all(len(key) == 1 for key in modes)  # no mode mixes two causes


# -- the CLI, on both backends -----------------------------------------------------------------


def test_failures_command_on_both_backends(backend, tmp_path: Path) -> None:
    runs = [failing_run(f"f{n}", f"ModuleNotFoundError: No module named 'mod{n}x'", tenant="acme", env_version="v1",
                        days=n) for n in range(3)]
    runs += [failing_run("g1", "OSError: [Errno 28] No space left on device", tenant="acme", env_version="v2",
                         days=9), make_run("ok", tenant="acme")]
    dump = tmp_path / "runs.jsonl"
    dump.write_text("\n".join(r.model_dump_json(exclude={"tenant"}) for r in runs) + "\n")
    code, _, err = run_cli("ingest", str(dump), "--quiet", "--json")
    assert code == 0, err

    code, out, err = run_cli("failures", "--json")
    assert code == 0, err
    report = json.loads(out)
    assert report["tenant"] == "acme" and report["total"] == 4
    assert [(m["label"], m["count"]) for m in report["modes"]] == [("missing Python module", 3), ("disk full", 1)]
    assert len(report["modes"][0]["examples"]) == 3

    code, out, err = run_cli("failures", "--since", "5d", "--until", "2026-01-10", "--env", "v2")
    assert code == 0, err
    assert "1 failure in tenant acme" in out and "disk full" in out and "new" in out and "g1" in out

    code, out, err = run_cli("failures")
    assert code == 0, err
    assert "missing Python module" in out and "f2" in out and "4 failures" in out

    code, _, err = run_cli("failures", "--since", "a fortnight")
    assert code == 2 and "since" in err


# -- gRPC --------------------------------------------------------------------------------------


def test_failures_rpc_answers_the_library_modes_of_the_keys_tenant_only(tmp_path: Path) -> None:
    ts = TrajSearch.open(str(tmp_path / "milvus.db"), traces=str(tmp_path / "traces"), embedder=HashingEmbedder())
    try:
        _errors(ts, [
            ("a1", "ModuleNotFoundError: No module named 'yaml'", {"env_version": "v1", "model_id": "m-1", "days": 15}),
            ("a2", "ModuleNotFoundError: No module named 'toml'", {"env_version": "v2", "days": 16}),
            ("a3", "OSError: [Errno 28] No space left on device", {"env_version": "v2", "days": 9}),
            ("a4", "KeyError: 'user_id'", {"env_version": "v2", "days": 17}),
        ])
        _errors(ts, [("b1", "BETA-ONLY failure: vault sealed", {"days": 16}),
                     ("b2", "ModuleNotFoundError: No module named 'yaml'", {"days": 16})], tenant="beta")
        made, keys = key_ring(acme=dict(tenant="acme", role="read"), beta=dict(tenant="beta", role="read"),
                              acme_v2=dict(tenant="acme", role="read", key_id="v2-only", env_versions=["v2"]))
        with ServiceServer(ts, keys, address="127.0.0.1:0") as srv:
            for key, tenant, pins in ((made["acme"], "acme", {}), (made["beta"], "beta", {}),
                                      (made["acme_v2"], "acme", {"env_version": ["v2"]})):
                with Client(srv.address, key) as client:
                    for options in ({}, {"since": "7d", "until": UNTIL}):
                        remote = client.failures(**options)
                        local = failure_modes(ts, tenant=tenant, **pins, **options)
                        assert _comparable(remote, options) == _comparable(local, options)
                        assert remote.tenant == tenant
            with Client(srv.address, made["acme"]) as client:
                seen = {e.trajectory_id for m in client.failures().modes for e in m.examples}
                assert seen == {"a1", "a2", "a3", "a4"}
                assert client.failures(env_version="v9").total == 0
                with pytest.raises(PermissionError):
                    client.failures(tenant="beta")
                with pytest.raises(ValueError, match="limit"):
                    client.failures(limit=5000)
            with Client(srv.address, made["acme_v2"]) as client:
                pinned = client.failures()
                assert pinned.total == 3 and all(set(m.env_versions) == {"v2"} for m in pinned.modes)
                assert client.failures(env_version="v1").total == 0  # outside the key's pins: nothing
    finally:
        ts.close()


def _comparable(report: FailureReport, options: dict) -> dict:
    data = report.to_dict()
    data.pop("seconds")
    if "until" not in options:  # "now", read a moment apart
        data.pop("until")
    return data


# -- real errors: mini-swe-agent runs on SWE-bench (tests/fixtures/failures/README.md) ------------

REAL_ERRORS = json.loads(
    (Path(__file__).parent / "fixtures" / "failures" / ".real" / "swe_gemini_errors.json").read_text())


def _real(cause: str) -> list[str]:
    return [item["error"] for item in REAL_ERRORS if item["cause"] == cause]


def test_wrapper_elements_and_terminal_codes_are_not_templated() -> None:
    """mini-swe-agent's ``<returncode>1</returncode><output></output>`` had become the title
    ``exit code 1: <returncode><n><<path>> <output> <<path>>`` (closing tags read as paths), and
    pytest's coloured summary a template of its own full of ``\\x1b[<n>m``."""
    grep = error_template(_real("grep matched nothing")[0])
    assert grep == "exit code 1: <n> (no output)"
    assert label_for(grep) == grep
    assert [error_template(e) for e in _real("command timed out")] == [
        "python3 <path> timed out and has been killed"] * 2
    coloured, plain = (error_template(e) for e in _real("pytest summary"))
    assert "\x1b" not in coloured and coloured == plain


@pytest.mark.model
def test_real_errors_group_by_cause(model_ts: TrajSearch) -> None:
    """16 real decisive errors of 8 causes: ``python: No module named pytest`` and ``ModuleNotFoundError``
    had been two "missing Python module" modes; ``rmdir: ... Directory not empty`` had joined "file not
    found"; grep's empty output, SyntaxError and pytest's summary had shared one mode."""
    _errors(model_ts, [(f"{item['instance']}", item["error"], {}) for item in REAL_ERRORS])
    cause_of = {item["instance"]: item["cause"] for item in REAL_ERRORS}
    report = failure_modes(model_ts, tenant="acme", examples=20)
    groups = {m.label: {cause_of[e.trajectory_id] for e in m.examples} for m in report.modes}
    assert all(len(causes) == 1 for causes in groups.values()), groups  # no mode mixes two causes
    modules = next(m for m in report.modes if m.label == "missing Python module")
    assert {t["template"] for t in modules.templates} == {
        "<path>: No module named pytest (exit code 1)", "ModuleNotFoundError: No module named <name> (exit code 1)",
        "ModuleNotFoundError: No module named <name> (exit code 2)"}
    assert groups["file not found"] == {"rm: no such file"}
    assert len(report.modes) == 7, groups  # the two module wordings are one mode, every other cause its own
    assert not any("<<" in m.label or "\x1b" in m.label for m in report.modes)
    assert not any("\x1b" in e.error for m in report.modes for e in m.examples)


NETWORK_ERRORS = json.loads((Path(__file__).parent / "fixtures/failures/.real/network_errors.json").read_text())


def test_a_known_cause_groups_only_what_it_names(hashing_ts: TrajSearch) -> None:
    """A broad pattern had made different causes one mode: ``\\bSSL\\b`` put certificate verification
    failures (a proxy, a missing CA) with dropped TLS connections as "SSL connection dropped", and
    ``Request.{0,40}Timeout`` put a requests ``ConnectTimeout`` to any host with litellm's as "model API
    timeout". Known causes bypass clustering, so the hashing embedder shows the grouping as it is."""
    _errors(hashing_ts, [(item["id"], item["error"], {}) for item in NETWORK_ERRORS])
    cause_of = {item["id"]: item["cause"] for item in NETWORK_ERRORS}
    report = failure_modes(hashing_ts, tenant="acme", examples=20)
    groups = {m.label: sorted(e.trajectory_id for e in m.examples) for m in report.modes}
    assert all(len({cause_of[i] for i in ids}) == 1 for ids in groups.values()), groups
    assert groups["SSL certificate not trusted"] == ["cert-1", "cert-2"]
    assert groups["SSL connection dropped"] == ["eof-1"]
    assert groups["model API timeout"] == ["api-1"]
    assert groups["network request timed out"] == ["net-1", "net-2"]


MARKUP_ERRORS = json.loads((Path(__file__).parent / "fixtures/failures/.real/markup_errors.json").read_text())


def test_examples_show_the_error_as_it_was_and_markup_stays(hashing_ts: TrajSearch) -> None:
    """Every ``<tag>...</tag>`` had been replaced by its content, in templates and in the examples
    shown: ``assert b'<p>text</p>' in b''`` read ``assert b'text' in b''``. Only a harness's wrappers
    (mini-swe-agent's ``<returncode>``/``<output>``) leave templates; examples keep even those, and
    lose only terminal colour codes."""
    wrapped = next(item for item in REAL_ERRORS if item["cause"] == "grep matched nothing")
    coloured = next(item for item in REAL_ERRORS if item["cause"] == "pytest summary" and "\x1b" in item["error"])
    items = [*MARKUP_ERRORS, {"id": "wrapped", "error": wrapped["error"]}, {"id": "coloured", "error": coloured["error"]}]
    _errors(hashing_ts, [(item["id"], item["error"], {}) for item in items])
    for item in MARKUP_ERRORS:
        assert plain_error(item["error"]) == item["error"]
    assert "<returncode>" not in error_template(wrapped["error"])
    report = failure_modes(hashing_ts, tenant="acme", examples=20)
    shown = {e.trajectory_id: e.error for m in report.modes for e in m.examples}
    assert shown["html-1"] == MARKUP_ERRORS[0]["error"] and shown["html-2"] == MARKUP_ERRORS[1]["error"]
    assert shown["wrapped"] == wrapped["error"]
    assert "\x1b" not in shown["coloured"] and "\x1b" in coloured["error"]

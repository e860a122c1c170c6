"""Loose ends a demanding user hit in the CLI and the service (round 27, CLISVC4)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from cli_support import newcomer, run_cli  # noqa: F401 - newcomer: a fixture

FIXTURES = Path(__file__).parent / "fixtures"
#: A real Harbor job whose one trial ended before its agent ran: its folder holds Harbor's own files, no run.
NEVER_RAN_JOB = FIXTURES / "atif/.real/harbor-never-ran-job/nova-complex-docker"


def test_ingest_json_of_a_folder_holding_no_run_says_which_inputs_and_why(tmp_path: Path, newcomer) -> None:
    """``ingest --json`` (and ``--dry-run --json``) of a folder holding no run printed ``{"files": []}`` or a result
    of zeros, exit 0: a script reading stdout could not tell "nothing to do" from a problem. The JSON now names the
    inputs that held no run and says why, in the words the human output says on stderr; the exit status is the
    human path's (0: a run set read and found holding none)."""
    job = tmp_path / "nova-complex-docker"
    shutil.copytree(NEVER_RAN_JOB, job)
    for dry in ((), ("--dry-run",)):
        human_code, _, human_err = run_cli("ingest", str(job), *dry)
        code, out, err = run_cli("ingest", str(job), "--json", *dry)
        assert code == human_code == 0, err
        no_run = json.loads(out)["no_run"]
        assert no_run["inputs"] == [str(job)]
        [why] = no_run["why"]
        assert why.startswith("no run in the input: 7 file(s) passed over as holding none: ") and "config.json" in why
        assert " ".join(why.split()) in " ".join(human_err.split())  # the very line the human output says


def test_ingest_json_of_runs_has_no_no_run(tmp_path: Path, newcomer) -> None:
    """A folder whose runs were read carries no ``no_run``: its absence is the all-clear a script tests for."""
    code, out, err = run_cli("ingest", str(FIXTURES / "tau-bench"), "--json", "--dry-run")
    assert code == 0, err
    assert "no_run" not in json.loads(out) and json.loads(out)["files"]


def _ask(web, method: str, path: str, cookie: str | None) -> tuple[int, dict[str, str], bytes]:
    """``method path`` over a real connection to ``web``: the status, the headers (lower-cased names), the body."""
    import http.client

    host, port = web.address.rsplit(":", 1)
    conn = http.client.HTTPConnection(host, int(port), timeout=60)
    try:
        conn.request(method, path, headers={"cookie": cookie} if cookie else {})
        reply = conn.getresponse()
        return reply.status, {k.lower(): v for k, v in reply.getheaders()}, reply.read()
    finally:
        conn.close()


def test_a_head_of_a_search_url_checks_the_key_and_arguments_and_searches_nothing(tmp_path: Path) -> None:
    """Starlette answers HEAD by running the GET's endpoint: a signed-in HEAD of a search URL (a link checker, a
    chat app's preview) ran the whole search, for no body sent. It is answered as the GET would be, status and
    headers, with no search run: the sign-in and the arguments are still checked."""
    from urllib.parse import quote

    from web_support import SAMPLE_ERROR, build_store, make_keys, served

    keys = make_keys()
    ts = build_store(tmp_path)
    searches: list[str] = []
    search_filtered = ts.search_filtered

    def counted(text: str, *args, **kwargs):  # the store's one search entry the page uses: counted, not changed
        searches.append(text)
        return search_filtered(text, *args, **kwargs)

    ts.search_filtered = counted
    try:
        with served(ts, keys.ring, keys.demo) as (web, cookie):
            url = "/?q=" + quote(SAMPLE_ERROR)
            status, headers, body = _ask(web, "HEAD", url, cookie)
            assert (status, body, searches) == (200, b"", []), headers
            assert headers["content-type"].startswith("text/html") and "content-security-policy" in headers
            got, _, page = _ask(web, "GET", url, cookie)
            assert got == 200 and searches == [SAMPLE_ERROR] and page  # the GET does search
            searches.clear()
            assert _ask(web, "HEAD", "/?q=x&mode=bogus", cookie)[0] == _ask(web, "GET", "/?q=x&mode=bogus", cookie)[0] \
                == 400
            signed_out = _ask(web, "HEAD", url, None)
            assert signed_out[0] == _ask(web, "GET", url, None)[0] != 200
            assert _ask(web, "HEAD", "/failures?env=" + "x" * 1000, cookie)[0] == 400
            assert _ask(web, "HEAD", "/failures", cookie)[0] == 200
            assert searches == []
    finally:
        ts.close()


def _crash_in_a_thread(level: str) -> str:
    """What the service's log (``configure_logging``, as ``serve``, ``ui`` and ``mcp`` set it) says of a server
    thread dying of an uncaught error."""
    import io
    import threading

    from trajsearch.service.observe import configure_logging

    def work() -> None:
        raise RuntimeError("the trace store went away\nwhile reading run-7")

    log = io.StringIO()
    end = configure_logging(level, stream=log)
    try:
        thread = threading.Thread(target=work, name="tenant_rpc_3")
        thread.start()
        thread.join()
    finally:
        end()
    return log.getvalue()


def test_a_crash_in_a_server_thread_is_one_log_line_its_traceback_at_debug() -> None:
    """Python's own hook wrote a server thread's crash as a raw traceback on stderr, a dozen lines among the JSON
    lines. It is one JSON line: the thread, the error's first line; its traceback inside it at DEBUG only."""
    [line] = _crash_in_a_thread("INFO").splitlines()
    record = json.loads(line)
    assert (record["level"], record["msg"], record["thread_name"], record["error"]) == \
        ("ERROR", "thread crashed", "tenant_rpc_3", "RuntimeError: the trace store went away")
    assert "exc_info" not in record
    [line] = _crash_in_a_thread("DEBUG").splitlines()
    assert "in work" in json.loads(line)["exc_info"]

"""A text holding nothing a reader sees is nothing to search by, and every interface refuses it in the same words
(round 25, SVC2): ``Search(text="\\x00")``, ``"\\u200b"`` (zero-width space) and ``"\\ufeff"`` (a BOM) returned 10
arbitrary hits over gRPC and on the web page (``/?q=%00``), where ``"   "`` was refused, each interface testing
blankness with ``str.strip()``. Now the library's one rule (:func:`trajsearch.excerpt.blank`) decides it for the
library, the runtime verbs and tool, the CLI, the server, the web page and MCP.

Real mini-swe-agent runs (tests/fixtures/mini-swe-agent/.real/SOURCE.md: two gemini-3-pro runs that failed after
``No module named 'reproduce_app'``). Plumbing: the hashing test embedder (``hashing_ts``), real Milvus Lite, a real
gRPC server and real uvicorn on loopback, ``trajsearch mcp`` over stdio with the ``mcp`` package's own client."""

from __future__ import annotations

import asyncio
import html
import http.client
import json
import re
from pathlib import Path
from urllib.parse import urlencode

import pytest

from trajsearch.excerpt import BLANK_TEXT
from trajsearch.ingest.outcomes import OutcomeTable
from trajsearch.ingest.read import read_dump
from trajsearch.runtime import Runtime, RuntimeContext, SearchPastRuns
from trajsearch.service.client import Client, InvalidArgument
from trajsearch.service.validate import Limits

from cli_support import backend, run_cli  # noqa: F401 - the fixture
from service_support import key_ring, mcp_session, serve_store
from web_support import served

REAL = Path(__file__).parent / "fixtures" / "mini-swe-agent" / ".real" / "gemini-3-pro-warnings"
LINE = "ModuleNotFoundError: No module named 'reproduce_app'"
CTX = RuntimeContext(tenant="acme")
#: Texts a reader sees nothing of: NUL, a zero-width space, a BOM, joiners and a word joiner, a mix with whitespace,
#: a soft hyphen and a Hangul filler (default-ignorable: shown as nothing), a terminal's colour reset.
BLANKS = ("\x00", "\u200b", "\ufeff", "\u200c\u200d\u2060", " \t\x00\u200b\n\ufeff ", "\u00ad\u3164", "\x1b[0m")


def _runs() -> list:
    report = OutcomeTable.load(REAL / "sb-cli-report.json")
    return [p.trajectory for p in read_dump(REAL, tenant="acme", outcomes=report)]


@pytest.fixture
def store(hashing_ts):
    hashing_ts.add(_runs())
    return hashing_ts


def test_the_library_and_the_runtime_refuse_a_text_with_nothing_visible(store) -> None:
    """Bug: the library's check was ``text.strip()``: ``search("\\u200b")`` ranked every run (the embedder's vector of
    an invisible character), as did ``similar_runs``, the runtime's exemplars, warnings and context, its loop and its
    tool. Each now refuses it as it refuses "" (the tool spending no search)."""
    rt = Runtime(store)
    for text in BLANKS:
        calls = {"search": lambda: store.search(text, tenant="acme"),
                 "similar_runs": lambda: store.similar_runs(text=text, tenant="acme"),
                 "exemplars": lambda: rt.exemplars(text, CTX), "warnings": lambda: rt.warnings(text, CTX),
                 "context_for": lambda: rt.context_for(text, CTX), "advice": lambda: rt.advice("warnings", text, CTX),
                 "loop": lambda: rt.loop().run(text, CTX)}
        for name, call in calls.items():
            with pytest.raises(ValueError) as refused:
                call()
            assert BLANK_TEXT in str(refused.value), (name, text, refused.value)
        tool = SearchPastRuns(store, CTX)
        answer = tool({"query": text, "kind": "failures"})
        assert answer["status"] == "error" and f"query: {BLANK_TEXT}" in answer["error"], (text, answer)
        assert answer["searches_left"] == tool.cap  # refused: no search spent
    # a text with something to read is searched as before, the invisible characters around it and all
    assert store.search("\ufeff\u200b" + LINE, tenant="acme")
    assert rt.warnings(LINE + "\x00", CTX).held  # (refused, it had raised)


def test_the_cli_refuses_a_text_with_nothing_visible_on_both_backends(backend) -> None:  # noqa: F811
    """Bug: ``trajsearch search $'\\u200b'`` searched (``"   "`` was a usage error naming the argument); so did
    ``similar``, ``exemplars`` (and ``--warnings``) and ``export -q``."""
    for args, name in ((("search", "\x00"), "text"), (("similar", "\u200b"), "text"),
                       (("exemplars", "\ufeff"), "task"), (("exemplars", "\u2060", "--warnings"), "task"),
                       (("export", "-q", "\u200d\x00"), "--query")):
        code, out, err = run_cli(*args)
        assert code == 2 and not out and err.splitlines() == [f"error: {name}: {BLANK_TEXT}"], (args, code, err)


def test_the_server_refuses_a_text_with_nothing_visible_in_every_call(tmp_path) -> None:
    """Bug (SVC2): ``Search(text="\\x00")`` returned 10 hits; every call taking a text to search by (``SimilarRuns``
    by text, ``Exemplars``' task, ``Warnings``' pasted error, ``SearchPastRuns``' query) is refused INVALID_ARGUMENT
    naming the field, as a blank one is."""
    keys, ring = key_ring(acme=dict(tenant="acme", role="read"))
    server = serve_store(tmp_path, ring, _runs(), Limits())
    try:
        with Client(server.address, keys["acme"]) as client:
            assert client.search(LINE)  # the store holds runs a blank text would have ranked
            for text in BLANKS:
                calls = {"text": [lambda: client.search(text), lambda: client.similar_runs(text=text),
                                  lambda: client.warnings(text)],
                         "task": [lambda: client.exemplars(text)],
                         "query": [lambda: client.search_past_runs(text, session_id="s1", kind="failures")]}
                for field, said in calls.items():
                    for call in said:
                        with pytest.raises(InvalidArgument) as refused:
                            call()
                        assert refused.value.details.startswith(f"{field}: {BLANK_TEXT}"), (text, refused.value)
    finally:
        server.stop(grace=2)


def test_the_web_page_says_a_text_with_nothing_visible_is_nothing_to_search_by(hashing_ts) -> None:
    """Bug: ``/?q=%00`` showed 10 runs; ``/?q=%E2%80%8B`` too. The page says why beside the box (400, as for a bad
    filter) and searches nothing; an empty box is the empty form, as before."""
    hashing_ts.add(_runs())
    keys, ring = key_ring(acme=dict(tenant="acme", role="read"))
    with served(hashing_ts, ring, keys["acme"]) as (web, cookie):
        host, port = web.address.rsplit(":", 1)

        def page(q: str, status: int = 200) -> str:
            conn = http.client.HTTPConnection(host, int(port), timeout=600)
            conn.request("GET", "/?" + urlencode({"q": q}), headers={"Cookie": cookie})
            reply = conn.getresponse()
            body = reply.read().decode()
            conn.close()
            assert reply.status == status, (q, reply.status)
            return body

        found = page(LINE)
        assert "/runs/" in found  # the runs a blank text would have shown
        for q in [*BLANKS, "   "]:
            body = page(q, 400)  # a field refused, as a bad filter is
            error = re.search(r'<p class="field-error" id="err-q">(.*?)</p>', body, re.S)
            assert error and html.unescape(error.group(1)) == BLANK_TEXT, (q, error)
            assert "/runs/" not in body and 'aria-invalid="true"' in body, q
        assert 'id="err-q"' not in page("")  # nothing typed: the form, no error


def test_mcp_refuses_a_text_with_nothing_visible_as_an_argument_error(tmp_path) -> None:
    """Bug: the tool's argument check was ``value.strip()``, so ``{"query": "\\u200b"}`` spent a search and answered
    runs. It is refused naming the argument, no search spent."""
    keys, ring = key_ring(acme=dict(tenant="acme", role="read"))
    server = serve_store(tmp_path, ring, _runs(), Limits())  # search cap 3
    script = [{"query": text, "kind": "failures"} for text in ("\x00", "\u200b", "\ufeff")] + [{"query": LINE}]
    try:
        _, results = asyncio.run(asyncio.wait_for(mcp_session(server.address, keys["acme"], script), 600))
    finally:
        server.stop(grace=2)
    *refused, searched = results
    for result in refused:
        assert result.is_error and f"query: {BLANK_TEXT}" in result.content[0].text, result.content[0].text
    assert not searched.is_error and json.loads(searched.content[0].text)["searches_left"] == 2  # the refused: free


def test_an_empty_tool_query_gets_the_same_sentence_and_a_non_string_loop_query_its_own(store) -> None:
    """Review RBLANK: the tool's ``""`` was refused in pydantic's words (``String should have at least 1 character``),
    before the shared rule ran; the loop called ``None`` a text with nothing visible where the library names the type."""
    tool = SearchPastRuns(store, CTX)
    answer = tool({"query": "", "kind": "exemplars"})
    assert answer["status"] == "error" and f"query: {BLANK_TEXT}" in answer["error"], answer
    assert answer["searches_left"] == tool.cap
    with pytest.raises(ValueError, match="query: must be a string, got NoneType"):
        Runtime(store).loop().run(None, CTX)  # type: ignore[arg-type]

"""What a person reading one failed run is told caused it: the run page's "Cause" and ``trajsearch show``'s
``(cause: ...)`` read the cause as warnings do (``represent.failure_cause``), and name the outcomes file that judged
the run as its verdict, not as its cause.

The runs are real gemini-3-pro SWE-bench Verified runs left unresolved by their real sb-cli report (trimmed, see that
folder's SOURCE.md), in real Milvus Lite with the fast test embedder; the page is served by real uvicorn on 127.0.0.1.
"""

from __future__ import annotations

import html
import http.client
import re
from pathlib import Path

from trajsearch.embed import HashingEmbedder
from trajsearch.ingest.outcomes import OutcomeTable
from trajsearch.ingest.read import read_dump
from trajsearch.search import TrajSearch

from cli_support import newcomer, run_cli  # noqa: F401 (fixture)
from service_support import key_ring
from web_support import served

GEMINI_WARNINGS = Path(__file__).parent / "fixtures" / "mini-swe-agent" / ".real" / "gemini-3-pro-warnings"
REPORT = GEMINI_WARNINGS / "sb-cli-report.json"
RUN = "gemini-3-pro-preview.django__django-12406.9c6632a9d5"
VERDICT = "outcomes file sb-cli-report.json"  # what ingest records as the failure's cause and the run's basis


def test_the_run_page_shows_the_judging_file_as_the_verdict_not_the_cause(tmp_path: Path) -> None:
    """Bug (round 24, review of RT7, 5): warnings stopped giving the outcomes file's name as a failed run's cause, but
    the run page's "What went wrong" still read ``Cause: outcomes file sb-cli-report.json``. The file stays in the
    header's verdict."""
    ts = TrajSearch.open(str(tmp_path / "milvus.db"), traces=str(tmp_path / "traces"), embedder=HashingEmbedder())
    runs = [p.trajectory for p in read_dump(GEMINI_WARNINGS, tenant="demo", outcomes=OutcomeTable.load(REPORT))]
    assert {run.failure.cause for run in runs} == {VERDICT}  # as stored
    ts.add(runs)
    made, ring = key_ring(demo=dict(tenant="demo", role="read"))
    try:
        with served(ts, ring, made["demo"]) as (web, cookie):
            host, port = web.address.rsplit(":", 1)
            conn = http.client.HTTPConnection(host, int(port), timeout=600)
            conn.request("GET", f"/runs/{RUN}", headers={"Cookie": cookie})
            reply = conn.getresponse()
            body = reply.read().decode()
    finally:
        ts.close()
    assert reply.status == 200, body[:500]
    page = " ".join(html.unescape(re.sub(r"<[^>]+>", " ", body)).split())
    wrong = page[page.index("What went wrong"):page.index("Steps")]
    assert "SWE-bench evaluation: not resolved" in wrong and "Cause" not in wrong and "sb-cli-report" not in wrong
    assert f"verdict {VERDICT}" in page


def test_show_gives_the_judging_file_as_the_verdict_not_the_cause(newcomer) -> None:
    """Bug (round 24, review of RT7, 5): ``trajsearch show`` of a run the report left unresolved printed ``failure:
    SWE-bench evaluation: not resolved ... (cause: outcomes file sb-cli-report.json)``."""
    code, out, err = run_cli("ingest", str(GEMINI_WARNINGS), "--outcomes", str(REPORT), "-t", "acme", "--quiet")
    assert code == 0, err
    code, out, err = run_cli("show", RUN, "-t", "acme", "--steps", "0:0")
    assert code == 0, err
    shown = " ".join(out.split())  # the console wraps long lines
    failure = shown[shown.index("failure: "):shown.index(" trace: ")]
    assert failure == "failure: SWE-bench evaluation: not resolved (in the report's unresolved_ids)"
    assert f"verdict: {VERDICT}" in out.splitlines()

"""The compare page never says two runs took the same steps when one took a step more (review 2, F0); the
program a wrapped shell command runs, which the steps align on (F6).

The runs: the bundled sample's real mini-swe-agent run ``deepseek_chat_dev.pvlib__pvlib-python-1606`` (success,
every step ``bash``) and a broken twin made of that run's own steps, one of them taken twice: the pair of nearly
identical runs the page matters most for (no such pair is in the real data, whose same-task runs differ in many
steps). Real Milvus Lite in a temp dir, the app over loopback as the other web tests use it.
"""

from __future__ import annotations

import html
import re

import pytest
from starlette.testclient import TestClient

from trajsearch.cli import SAMPLE
from trajsearch.embed import HashingEmbedder
from trajsearch.ingest.read import read_dump
from trajsearch.model import Outcome, Step, Trajectory
from trajsearch.search import TrajSearch
from trajsearch.web import WebConfig, create_app
from trajsearch.web.app import LOOPBACK_HOSTS
from trajsearch.web.session import OneTimeTokens
from trajsearch.web.views.compare import does, program

from web_support import csrf_of, make_keys

SUCCESS = "deepseek_chat_dev.pvlib__pvlib-python-1606"
#: step 37 runs the script that rewrites pvlib/tools.py; step 35 backs the file up (a write: ``cp``)
RUN_THE_FIX_AGAIN = 37
BACKUP = 35


def _twin(run: Trajectory, name: str, again: int, drop_last: bool = False) -> Trajectory:
    """``run`` with its step ``again`` taken twice (and its last step left out when ``drop_last``), failed."""
    steps = run.steps[: again + 1] + run.steps[again:]
    steps = steps[:-1] if drop_last else steps
    return run.model_copy(update={
        "trajectory_id": name, "outcome": Outcome.failure,
        "steps": [step.model_copy(update={"index": n}) for n, step in enumerate(steps)],
    })


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("web-compare")
    ts = TrajSearch.open(str(tmp / "milvus.db"), traces=str(tmp / "traces"), embedder=HashingEmbedder())
    run = next(p.trajectory for p in read_dump(SAMPLE, tenant="demo") if p.ok and p.trajectory.trajectory_id == SUCCESS)
    ts.add([run, _twin(run, "twice-fix", RUN_THE_FIX_AGAIN), _twin(run, "twice-backup", BACKUP, drop_last=True)])
    keys = make_keys()
    app = create_app(ts, keys.ring, config=WebConfig(allowed_hosts=LOOPBACK_HOSTS), one_time=OneTimeTokens())
    client = TestClient(app, base_url="http://127.0.0.1", follow_redirects=False)
    page = client.get("/signin")
    assert client.post("/signin", data={"key": keys.demo, "csrf": csrf_of(page.text), "next": "/"}).status_code == 303
    yield client
    ts.close()


def _summary(client: TestClient, broken: str) -> str:
    page = client.get(f"/compare/{broken}", params={"with": SUCCESS}).text
    fragment = re.search(r'<p class="divergence-summary" role="status">(.*?)</p>', page, re.S).group(1)
    return " ".join(html.unescape(re.sub(r"<[^>]+>", "", fragment)).split())


def test_one_step_more_is_the_divergence_when_nothing_else_differs(demo) -> None:
    """Bug: the extra ``python fix_tools.py`` sat beside the same command both runs run, was passed over as "one
    more of the same kind", and the page said "Both runs took the same steps with the same arguments"."""
    summary = _summary(demo, "twice-fix")
    assert "same steps" not in summary, summary
    assert "the broken run does python fix_tools.py (step 38), which the successful run does not do" in summary, summary


def test_a_write_taken_once_more_is_never_passed_over(demo) -> None:
    """Bug: a second ``cp`` (a write, as a second ``sed -i`` would be) beside the same command both runs take was
    passed over, and the page named a later, less relevant difference (the missing last step)."""
    summary = _summary(demo, "twice-backup")
    assert "the broken run does cp ./pvlib/tools.py ./pvlib/tools.py.backup (step 36)" in summary, summary


@pytest.mark.parametrize("command, expected", [
    ("sudo -u root rm -rf build", "rm"),  # was "-u"
    ("time -p ls", "ls"),  # was "-p"
    ("(cd sub && make)", "make"),  # was "(cd"
    ("'/usr/bin/python3' x.py", "python"),  # was "python3'"
    ("timeout -s KILL 10 make", "make"),
    ("cd /testbed && FOO=1 env python3.11 -m pytest", "python"),
    ("cd /testbed", "cd"),
    ("python -c 'import sys", "python"),  # a quote closed on a later line
])
def test_the_program_of_a_wrapped_command(command: str, expected: str) -> None:
    """Bug (review 2, F6): a wrapper's option or a subshell's parenthesis was read as the program run, so two
    runs' same command did not align."""
    assert program(command) == expected


def test_a_blank_command_is_named_by_its_tool() -> None:
    """Bug (review 2, F6): a whitespace-only command named itself "", an empty ``<code></code>`` on the page."""
    assert does(Step(index=0, action="bash", arguments={"command": "   \n  "})) == "bash"

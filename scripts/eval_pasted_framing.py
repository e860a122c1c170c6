"""A traceback pasted from a CI job's log or a log viewer: does the search still find the run that printed it?

Each distinct traceback the real mini-swe-agent runs printed (``read_real_runs``) is pasted whole, framed as real logs
frame it: a CI system's closing lines, a viewer's prefixes, both at once (the closing line without the prefix), a
whole job's raw tail (GitLab's section marks, GitHub's post-job clean-up), journald in other locales. hit@1: the first
hit (default mode, k=5, one per run, step + failure levels, tenant-wide) holds the traceback's error line; a search
that raises counts as a miss and is counted.

The control for loss: every real step output of those runs, its last 40 lines as a user pastes one, read as a query
(``query_text``): how many lose a prefix or closing lines they hold as the program printed them (none is a viewer's
or a CI system's), each printed.

    python scripts/eval_exact.py                       # builds the store this reads
    python scripts/eval_pasted_framing.py              # refuses a store without runs
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import DATA, load_model, open_store, read_real_runs, store_dir  # noqa: E402
from eval_exact import LEVELS, TENANT  # noqa: E402

from trajsearch.excerpt import query_text, strip_terminal_codes  # noqa: E402
from trajsearch.ingest.read import read_dump  # noqa: E402

REAL_FORMATS = DATA / "real-formats"

TRACEBACK = re.compile(r"Traceback \(most recent call last\):\n(?:[ \t].*\n|During.*\n|\n)*?"
                       r"([A-Za-z_.]*(?:Error|Exception)[A-Za-z]*: \S.*)")
GH_TAIL = ("##[error]Process completed with exit code 1.\nPost job cleanup.\n[command]/usr/bin/git version\n"
           "git version 2.36.0\nCleaning up orphan processes")
GL_RAW = ("section_end:1692280744:step_script\nsection_start:1692280744:cleanup_file_variables\n"
          "Cleaning up project directory and file based variables\nsection_end:1692280744:cleanup_file_variables\n"
          "ERROR: Job failed: exit code 1")


def _each(prefix, text: str) -> str:
    return "\n".join(prefix(n) + line for n, line in enumerate(text.splitlines()))


FORMS = {
    "plain": lambda t: t,
    "github web closing": lambda t: t + "\nError: Process completed with exit code 1.",
    "gitlab": lambda t: t + "\nCleaning up project directory and file based variables\nERROR: Job failed: exit code 1",
    "circleci": lambda t: t + "\n\nExited with code exit status 1\nCircleCI received exit code 1",
    "buildkite": lambda t: t + "\n^^^ +++\n🚨 Error: The command exited with status 1\n^^^ +++\n"
                               "user command error: exit status 1",
    "jenkins": lambda t: t + "\n[Pipeline] }\n[Pipeline] // stage\n[Pipeline] End of Pipeline\n"
                             "ERROR: script returned exit code 1\nFinished: FAILURE",
    "gh run view --log": lambda t: _each(lambda n: f"test\tRun pytest\t2024-03-19T10:32:{n % 60:02d}.4567890Z ",
                                         t + "\n##[error]Process completed with exit code 1."),
    "kubectl --prefix": lambda t: _each(lambda n: "[pod/app-7cfd7bf68f-nk5kr/app] ", t),
    "journalctl (de)": lambda t: _each(lambda n: f"Dez 28 06:43:{n % 60:02d} host app[9777]: ", t),
    "journalctl (fr)": lambda t: _each(lambda n: f"juil. 28 06:43:{n % 60:02d} host app[9777]: ", t),
    "journalctl -o short-precise": lambda t: _each(lambda n: f"Dec 28 06:43:{n % 60:02d}.123456 host app[9777]: ", t),
    "stern": lambda t: _each(lambda n: "app-7cfd7bf68f-nk5kr app ", t),
    "compose + github web closing": lambda t: _each(lambda n: "worker-1  | ", t)
                                              + "\nError: Process completed with exit code 1.",
    "journalctl + gitlab": lambda t: _each(lambda n: f"Dez 28 06:43:{n % 60:02d} host app[9777]: ", t)
                                     + "\nERROR: Job failed: exit code 1",
    "kubectl + jenkins": lambda t: _each(lambda n: "[pod/app-7cfd7bf68f-nk5kr/app] ", t) + "\nFinished: FAILURE",
    "gitlab raw trace (section marks)": lambda t: t + "\n" + GL_RAW,
    "github whole-job raw log": lambda t: _each(lambda n: f"2024-03-19T10:32:{n % 60:02d}.4567890Z ",
                                                t + "\n" + GH_TAIL),
}


def control(real) -> None:
    """How many real step outputs, pasted, lose more than terminal codes and invisible characters: those of the
    mini-swe-agent runs and of every run ``read_dump`` reads under the shared ``real-formats`` (SWE-agent, ATIF,
    OpenInference, ... : other agents' commands and outputs)."""
    runs = list(real.swe)
    for folder in sorted(p for p in REAL_FORMATS.iterdir() if p.is_dir() and p.name != "unsupported"):
        runs += [parsed.trajectory for parsed in read_dump(folder) if parsed.error is None]
    texts = (text for run in runs for step in run.steps for text in (step.observation, step.action) if text)
    tails = {"\n".join(text.splitlines()[-40:]) for text in texts}
    tails.discard("")
    changed = []
    for tail in sorted(tails):
        read = query_text(tail)
        if read.split() != strip_terminal_codes(tail).split():  # words lost (or joined: an invisible character)
            changed.append((tail, read))
    print(f"control: {len(changed)} of {len(tails)} real step outputs and actions (last 40 lines; {len(runs)} runs)"
          " lost a prefix or closing line")
    for tail, read in changed:
        print("  ---", repr(tail[-300:]), "\n   ->", repr(read[-300:]))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--store", type=Path, default=Path("/tmp/trajsearch-eval-exact"))
    ap.add_argument("--model", default="all-MiniLM-L6-v2")
    ap.add_argument("--forms", nargs="*", default=list(FORMS), help="none: the control only")
    args = ap.parse_args()
    model, _ = load_model(args.model)
    ts = open_store(store_dir(args.store / args.model.replace("/", "_")), model)
    if not ts.stats(tenant=TENANT)["trajectories"]:  # every search would miss: a plausible "hit@1 0/143"
        ts.close()
        sys.exit(f"no runs in the store under {args.store}: build it with scripts/eval_exact.py --store {args.store} --model {args.model}")
    real = read_real_runs(tenant=TENANT)
    control(real)
    tracebacks: dict[str, str] = {}
    for run in real.swe:
        for step in run.steps:
            for m in TRACEBACK.finditer(step.observation or ""):
                if m.group(1).strip() not in tracebacks and len(m.group(0).splitlines()) >= 3:
                    tracebacks[m.group(1).strip()] = m.group(0)
    print(len(tracebacks), "distinct tracebacks", flush=True)
    for name in args.forms:
        first = raised = 0
        for line, traceback in tracebacks.items():
            try:
                hits = ts.search(FORMS[name](traceback), tenant=TENANT, levels=LEVELS, k=5, group_by_trajectory=True,
                                 group_size=1)
            except Exception:  # a search that fails is a miss, counted
                hits, raised = [], raised + 1
            first += bool(hits) and line in hits[0].text
        print(f"{name}: hit@1 {first}/{len(tracebacks)}" + (f", {raised} raised" if raised else ""), flush=True)
    ts.close()


if __name__ == "__main__":
    main()

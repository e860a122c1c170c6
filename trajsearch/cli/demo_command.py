"""``demo``: the bundled sample dump, ingested and queried, to show in a minute what trajsearch is for."""

from __future__ import annotations

from pathlib import Path

import typer

from .output import err, one_line, out


SAMPLE = Path(__file__).parent.parent / "samples" / "sample.jsonl"
DEMO_TOOLS = ["get_user_details", "get_reservation_details", "cancel_reservation", "search_direct_flight",
              "update_reservation_flights", "send_certificate", "transfer_to_human_agents", "respond"]


def demo(
    home: Path = typer.Option(Path(".trajsearch/demo"), "--home", help="Where the demo index and traces go."),
) -> None:
    """Ingest the bundled sample dump, then show what an agent and an engineer get back.

    \b
    1. exemplars and a failure warning for an airline task, as the budgeted prompt context;
    2. a task from nowhere near the library: nothing but "plan from scratch";
    3. an engineer pasting an error line: runs like this broken one, with the matching steps.
    """
    from ..ingest.read import read_dump
    from ..runtime import Runtime, RuntimeContext
    from ..search import TrajSearch

    err.print(f"[bold]1/4[/bold] loading the embedding model and the index at {home}")
    with TrajSearch.open(str(home / "milvus.db"), traces=str(home / "traces"), warm=True) as ts:
        err.print(f"[bold]2/4[/bold] ingesting {SAMPLE.name} (re-running the demo changes nothing)")
        report = ts.add(read_dump(SAMPLE, tenant="demo"))
        out.print(f"ingested {report.ingested}, unchanged {report.unchanged}, rejected {len(report.rejected)}")

        runtime = Runtime(ts)
        ctx = RuntimeContext(tenant="demo", env_version="airline-v1", tools_available=DEMO_TOOLS)
        task = ("A customer wants to cancel two upcoming reservations and be refunded "
                "to the original payment method.")
        err.print("[bold]3/4[/bold] agent runtime: exemplars + failure warning for a new task")
        out.rule(f"agent task: {task}")
        context = runtime.context_for(task, ctx)
        out.print(f"strategy={context.strategy.value}  best similarity={context.best_similarity:.2f}  "
                  f"tokens={context.tokens}", markup=False)
        out.print(context.text, markup=False)
        novel = "Write a short poem about the autumn harvest festival."
        out.rule(f"agent task: {novel}")
        nothing = runtime.context_for(novel, ctx)
        out.print(f"strategy={nothing.strategy.value}  exemplars={len(nothing.exemplars)}  tokens={nothing.tokens}",
                  markup=False)

        error = "ModuleNotFoundError: No module named 'pytest'"
        err.print("[bold]4/4[/bold] engineer: runs like this broken one")
        out.rule(f"similar runs: {error}")
        for rank, match in enumerate(ts.similar_runs(text=error, tenant="demo", k=3), 1):
            out.print(f"{rank}. {match.trajectory_id}  score={match.score:.3f}  outcome={match.outcome}", markup=False)
            for step in ts.expand(match.best, before=1, after=1) if match.best.step_index >= 0 else []:
                marker = ">" if match.best.step_index <= step.position <= match.best.step_end else " "
                out.print(f"   {marker} {one_line(step.text, 150)}", markup=False)

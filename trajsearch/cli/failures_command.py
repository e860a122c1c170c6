"""``failures``: the failed runs grouped into failure modes, with counts, share, trend and examples.

The report comes from the library (or the server); what is here is its filters and its readable view.
"""

from __future__ import annotations

from typing import Any, List, Optional

import typer

from ..bounds import MAX_EXAMPLES, MAX_MODES
from .connect import connect
from .options import AsJson, Ca, EnvVersions, FailedOutcomes, FailureTools, Server, Tenant, Traces, Uri, filter_values
from .output import fail_naming, one_line, out, print_json


def failures(
    tenant: Tenant = None,
    since: Optional[str] = typer.Option(None, "--since", help="Only this period before --until (7d, 24h, 2w, 90m), compared with the period of the same length before it. Default: every failure, no trend."),
    until: Optional[str] = typer.Option(None, "--until", help="End of the period: an ISO date or time (default now)."),
    env_version: EnvVersions = [],
    model: List[str] = typer.Option([], "--model", callback=filter_values,
                                    help="Keep runs of these model ids (read from each failure's trace: rows carry "
                                         "no model id)."),
    tool: FailureTools = [],
    outcome: FailedOutcomes = [],
    limit: int = typer.Option(20, "--limit", "-n", min=1, max=MAX_MODES, help="How many modes to show (the rest are counted)."),
    examples: int = typer.Option(3, "--examples", min=1, max=MAX_EXAMPLES, help="Example runs per mode, most representative first."),
    server: Server = None,
    ca: Ca = None,
    uri: Uri = None,
    traces: Traces = None,
    as_json: AsJson = False,
) -> None:
    """Failure modes: the failed runs inside the filters grouped by cause, with counts, share, trend and example runs."""
    from ..failures import parse_time
    from ..failures.periods import parse_period

    try:
        since_seconds = parse_period(since) if since else None
    except ValueError as exc:
        fail_naming("--since", exc)
    try:
        until_epoch = parse_time(until)
    except ValueError as exc:
        fail_naming("--until", exc)
    with connect(server, ca, uri, traces, tenant) as api:
        report = api.failures(since=since_seconds, until=until_epoch, env_version=env_version, model=model,
                              tools=tool, outcome=outcome, limit=limit, examples=examples)
    if as_json:
        print_json(report.to_dict())
        return
    _show_failures(report, since)


def _show_failures(report: Any, since: str | None) -> None:
    from datetime import datetime, timezone

    from ..represent import clip

    def day(epoch: int) -> str:
        return datetime.fromtimestamp(epoch, timezone.utc).strftime("%Y-%m-%d %H:%M UTC")

    def line(text: str) -> None:
        out.print(text, markup=False, highlight=False, soft_wrap=True)

    if report.since is not None:
        period = f"the {since} up to {day(report.until)} (the {since} before: {_plural(report.previous_total, 'failure')})"
    else:
        period = "all time"
    line(f"{_plural(report.total, 'failure')} in tenant {report.tenant}, {period}: "
         f"{_plural(report.templates, 'distinct error template')}, {_plural(len(report.modes) + report.other_modes, 'mode')}")
    for n, mode in enumerate(report.modes, 1):
        line("")
        line(f"{n}. {mode.label}  {_plural(mode.count, 'failure')} ({mode.share:.0%}){_trend_text(mode)}")
        where = [f"env {_counts_text(mode.env_versions)}"]
        if mode.models:
            sampled = "" if mode.models_sampled >= mode.count else f" (of {mode.models_sampled} runs read)"
            where.append(f"model {_counts_text(mode.models)}{sampled}")
        if mode.failing_tools:
            where.append(f"failing step {_counts_text(mode.failing_tools)}")
        elif mode.tools:
            where.append(f"tools {_counts_text(mode.tools)}")
        line("   " + " · ".join(where))
        if len(mode.templates) > 1:
            line(f"   {len(mode.templates)} templates, e.g. {one_line(mode.templates[1]['template'], 110)}")
        for example in mode.examples:
            line(f"   - {example.trajectory_id}: {clip(' '.join(example.error.split()), 40, 80)}")
    if report.other_modes:
        line(f"\n({report.other_modes} more modes hold {_plural(report.other_failures, 'failure')}: --limit to see them)")
    if report.rare:
        line(f"({_plural(report.rare, 'failure')} of errors too rare to compare by meaning: grouped by exact template)")


def _plural(n: int | None, word: str) -> str:
    return f"{n} {word}" + ("" if n == 1 else "s")


def _trend_text(mode: Any) -> str:
    if mode.previous is None:
        return ""
    if mode.trend == "new":
        return "  new (none the period before)"
    change = f", {mode.change:+.0%}" if mode.change is not None else ""
    arrow = {"up": "up", "down": "down", "flat": "flat"}.get(mode.trend, mode.trend)
    return f"  {arrow} from {mode.previous}{change}"


def _counts_text(counts: dict[str, int], top: int = 3) -> str:
    items = list(counts.items())
    text = ", ".join(f"{k} {v}" for k, v in items[:top])
    return text + (f", +{len(items) - top} more" if len(items) > top else "")

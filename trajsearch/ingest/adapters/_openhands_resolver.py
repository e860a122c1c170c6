"""The GitHub issue resolver's ``output.jsonl`` lines, for the ``openhands`` adapter (see its docstring).

``openhands/resolver/resolver_output.py`` ``ResolverOutput``: the issue, the
resolver's verdict (``success``, ``result_explanation``), the patch, metrics and
``error`` around the run's events; this module reads everything but the events
(``openhands._flat_events`` turns those into the adapter's usual shape).
"""

from __future__ import annotations

import hashlib
from typing import Any

from trajsearch.model import Failure, Outcome

from ._agent_cli import as_str
from ._common import as_dict, as_list, short
from ._spans.outcome import error_outcome


def names_an_issue(record: Any) -> bool:
    """A line that is the resolver's by its first field, whatever else it holds (one run per line)."""
    issue = record.get("issue") if isinstance(record, dict) else None
    return isinstance(issue, dict) and "number" in issue and "repo" in issue


def is_output(record: Any) -> bool:
    """A line of the issue resolver's ``output.jsonl`` (``ResolverOutput``): one issue's run, its events flat."""
    return names_an_issue(record) and isinstance(record.get("history"), list) and \
        isinstance(record.get("instruction"), str) and "success" in record


def missing(record: dict[str, Any]) -> str:
    """What a line naming an issue lacks to be a resolver run: the reason it is rejected."""
    wants = {"history": "a list of events", "instruction": "a string", "success": "a verdict"}
    absent = [f"'{k}' ({what})" for k, what in wants.items()
              if not (isinstance(record.get(k), list) if k == "history" else
                      isinstance(record.get(k), str) if k == "instruction" else k in record)]
    return "issue resolver line without " + ", ".join(absent)


def task(record: dict[str, Any]) -> str | None:
    """The issue itself (title and body): the resolver's ``instruction`` wraps it in a long template."""
    issue = as_dict(record.get("issue"))
    text = "\n\n".join(t.strip() for t in (issue.get("title"), issue.get("body")) if isinstance(t, str) and t.strip())
    return text or None


def outcome(record: dict[str, Any]) -> tuple[Outcome, Failure | None]:
    """The resolver's own verdict on the patch (``success``); its ``error`` says why a run ended where it has one."""
    explanation = (as_str(record.get("result_explanation")) or as_str(record.get("success_explanation")) or "").strip()
    error = (as_str(record.get("error")) or "").strip()
    if record.get("success") is True:
        return Outcome.success, None
    if error:
        return error_outcome(error), Failure(error=short(error, 500, keep="head"),
                                             cause=short(explanation, 500, keep="head") if explanation else None)
    return Outcome.failure, Failure(error=short(explanation or "not resolved: the resolver judged the issue unresolved",
                                                500, keep="head"))


def run_id(record: dict[str, Any]) -> str:
    """``openhands.resolver.<owner>__<repo>-<number>.<digest>``: the line keeps no time, so the digest of what the
    run produced tells two attempts at one issue apart (and gives a copied line the same id)."""
    issue = as_dict(record.get("issue"))
    cost = as_dict(record.get("metrics")).get("accumulated_cost")
    run = "\x1f".join(str(record.get(k) or "") for k in ("issue_type", "base_commit", "git_patch"))
    run += f"\x1f{cost}\x1f{len(record['history'])}"
    name = f"{issue.get('owner')}__{issue.get('repo')}-{issue.get('number')}"
    return f"openhands.resolver.{name}.{hashlib.sha1(run.encode()).hexdigest()[:10]}"


def metrics_model(metrics: Any) -> str | None:
    """The model named in ``Metrics.get()`` token usages or costs (``default`` is Metrics' placeholder)."""
    metrics = as_dict(metrics)
    for usage in (metrics.get("accumulated_token_usage"), *as_list(metrics.get("token_usages")),
                  *as_list(metrics.get("costs"))):
        model = as_dict(usage).get("model")
        if isinstance(model, str) and model and model != "default":
            return model
    return None


def metadata(record: dict[str, Any], verdict: Outcome) -> dict[str, Any]:
    """What a resolver line says beyond its events: which issue, the patch's size, the resolver's bookkeeping."""
    issue = as_dict(record.get("issue"))
    patch = record.get("git_patch")
    found = {
        "issue": f"{issue.get('owner')}/{issue.get('repo')}#{issue.get('number')}",
        "issue_type": record.get("issue_type"),
        "base_commit": record.get("base_commit") or None,
        "patch_chars": len(patch) if isinstance(patch, str) else None,
        "comment_success": record.get("comment_success"),
        "accumulated_cost": as_dict(record.get("metrics")).get("accumulated_cost"),
    }
    if verdict is Outcome.success:  # a failure carries these as its error and cause
        explanation = as_str(record.get("result_explanation")) or as_str(record.get("success_explanation"))
        found["result_explanation"] = short(explanation, 500, keep="head") if explanation else None
        found["resolver_error"] = (as_str(record.get("error")) or "").strip() or None
    return {k: v for k, v in found.items() if v is not None}

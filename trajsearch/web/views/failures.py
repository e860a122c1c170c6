"""The failure-modes page: what keeps breaking in this tenant, how often, whether it is rising, with runs to open."""

from __future__ import annotations

from dataclasses import dataclass, field

from ...failures import FailureReport, failure_modes
from ...search import TrajSearch
from ...service.auth import Principal, narrow
from ...store.filters import quote

#: The periods the page offers ("" is all time): the analysis compares each with the one before it. The page
#: opens on all time, as ``trajsearch failures`` does: opened on the last 7 days, it said "No failed runs"
#: for a tenant of 129 failures ingested today from last month's runs (probe p42 D3).
PERIODS = (("", "all time"), ("30d", "last 30 days"), ("7d", "last 7 days"), ("24h", "last 24 hours"))
DEFAULT_PERIOD = ""
MAX_FILTER_CHARS = 100  # a run's env_version (model.Trajectory): no longer one was ever ingested


@dataclass
class FailuresForm:
    period: str = DEFAULT_PERIOD
    env: str = ""
    errors: dict[str, str] = field(default_factory=dict)  # field name -> what is wrong, shown beside it

    @classmethod
    def parse(cls, params: dict[str, str]) -> FailuresForm:
        period = params.get("period", DEFAULT_PERIOD)
        if period not in {p for p, _ in PERIODS}:
            period = DEFAULT_PERIOD
        form = cls(period=period, env=(params.get("env") or "").strip())
        if len(form.env) > MAX_FILTER_CHARS:  # refused, not cut: cut, it was answered "No failed runs for env <cut>"
            form.errors["env"] = f"Env version: at most {MAX_FILTER_CHARS} characters (got {len(form.env)})"
            form.env = ""
            return form
        try:
            quote(form.env, "env")
        except ValueError:
            form.errors["env"] = f"Env version: at most {MAX_FILTER_CHARS} characters, no control characters"
            form.env = ""
        return form


def failures_view(ts: TrajSearch, principal: Principal, form: FailuresForm) -> FailureReport:
    """The key's tenant's failure modes in the period; a key's pinned versions bound them as every read."""
    if form.errors:
        return FailureReport(tenant=principal.tenant, since=None, until=0, total=0)
    env = narrow((form.env,) if form.env else (), principal.env_versions)
    if env is None:  # the asked version is outside the key's pins: nothing it may see
        return FailureReport(tenant=principal.tenant, since=None, until=0, total=0)
    return failure_modes(ts, tenant=principal.tenant, since=form.period or None, env_version=env,
                         policy_version=principal.policy_versions, limit=20)

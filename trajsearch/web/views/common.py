"""What every page shares: the not-found rule, the key's pins, links, and where a run may be seen."""

from __future__ import annotations

import re
from datetime import datetime, timezone

from ...bounds import MAX_K, MAX_QUERY_CHARS  # the page cuts a longer paste to what a search reads
from ...model import ID_PATTERN, valid_id
from ...results import Hit
from ...search import TrajSearch
from ...service.auth import Principal
from ...vocab import LEVELS


NOT_FOUND_TEXT = "No such run: it does not exist, or this key cannot see it."
_ID_RE = re.compile(ID_PATTERN)
#: Most bytes of a search's query string the page's script sends (the server reads a head of this and its headers,
#: :data:`~trajsearch.web.server.MAX_REQUEST_HEAD`): a query at the page's limit of ASCII text, each character
#: percent-encoded (3 bytes, a line break too: the script sends it as ``%0A``, where a form sends ``%0D%0A``; a real log
#: is 1.4 a character: a paste of ~40,000 characters is sent, cut to its head and tail by the page). A longer one is
#: stopped by the script with a word of why. Sized on real text, not a 4-byte script's worst case (12 bytes a character,
#: 240 KB): every connection may hold this much unread, and a thousand connections sending a head slowly held 650 MB
#: (review RWEB2, D3). And 1 KiB for the form's other fields.
MAX_QUERY_BYTES = MAX_QUERY_CHARS * 3 + 1024
MAX_FIELD_CHARS = 100_000  # of one step field shown on a page; the JSON download has everything
PAGE_CHARS = 2_000_000  # of all the step fields of a run page: past it, the fields not matched get less
SMALL_FIELD_CHARS = 2_000
#: The page's choices of how many runs to show: the CLI's default (5) up to the library's most (``bounds.MAX_K``); any
#: count from 1 to that most is taken from a link (``?k=30``) and offered beside these.
K_CHOICES = (5, 10, 20, 50, 100, MAX_K)
LEVEL_CHOICES = (("", "Steps and failures"), ("any", "Any level"), *((lv, lv.capitalize()) for lv in LEVELS))
DEFAULT_LEVELS = ("step", "failure")


class NotFound(LookupError):
    """A run (or trace) this key cannot see: missing, another tenant's, outside its pins, malformed."""


class TraceUnavailable(RuntimeError):
    """The trace store failed or did not answer in time."""


class TraceDamaged(RuntimeError):
    """This key's run has a trace, but its stored bytes are not a valid trace of it (``str``: the store's words,
    for the log; ``trajectory_id``: the run, for the page)."""

    def __init__(self, detail: str, trajectory_id: str = "") -> None:
        super().__init__(detail)
        self.trajectory_id = trajectory_id


class TraceMissing(RuntimeError):
    """This key's run is indexed, but the trace store has no trace at its URI (deleted, or the pages read
    another trace store than the run was ingested into: ``--uri`` given without its ``--traces``).

    Not :class:`NotFound`: the run's index row is already this key's to see, so saying that its trace is
    missing reveals nothing, where "it does not exist" sent the reader looking for a run they had just
    been shown in the results."""


# -- the search form ---------------------------------------------------------------------------


def looks_like_id(text: str) -> bool:
    return bool(text) and len(text.split()) == 1 and _ID_RE.match(text) is not None


def looks_like_trace_uri(text: str) -> bool:
    return len(text.split()) == 1 and text.startswith(("file://", "s3://")) and text.endswith(".json.gz")


def visible_run(ts: TrajSearch, principal: Principal, trajectory_id: str, level: str = "task") -> Hit:
    """The run's row (task by default) if this key can see it, else :class:`NotFound`."""
    try:
        valid_id(trajectory_id)
    except ValueError:
        raise NotFound(trajectory_id) from None
    hit = ts.run(trajectory_id, tenant=principal.tenant, level=level)
    if hit is None or not principal.sees(hit.env_version or None, hit.policy_version or None):
        raise NotFound(trajectory_id)
    return hit


def no_runs_said(ts: TrajSearch, principal: Principal, *, ui_tenant: bool = False) -> str:
    """What a page with nothing to show says when the key's tenant holds no run it may see, else "": a key of a
    tenant misspelt or never ingested into (``trajsearch ui`` serves ``--tenant default`` unless told: runs ingested
    with ``--tenant acme`` are not its) was answered "No runs match inside these filters" for every search and "No
    failed runs", as if its runs had been searched (the CLI says so: ``search``'s "holds no runs"). ``ui_tenant``:
    the key is the one ``trajsearch ui`` made for its ``--tenant``, which is what the reader changes."""
    held = ts.stats(tenant=principal.tenant, env_version=principal.env_versions,
                    policy_version=principal.policy_versions)["trajectories"]
    if held:
        return ""
    pinned = " of the versions this key is pinned to" if principal.env_versions or principal.policy_versions else ""
    how = ("; start the pages for theirs with trajsearch ui --tenant NAME (trajsearch stats -t NAME counts a "
           "tenant's runs)" if ui_tenant else " (ingest --tenant)")
    return (f"This key's tenant, {principal.tenant!r}, holds no runs{pinned} in this index: nothing was searched. "
            f"Runs are read by the tenant they were ingested for{how}.")


def run_link(trajectory_id: str, *, q: str = "", match: tuple[int, int] | None = None) -> str:
    from urllib.parse import quote as urlquote, urlencode

    path = "/runs/" + urlquote(trajectory_id, safe="")
    params = {}
    if q:
        params["q"] = q[:500]
    if match is not None and match[0] >= 0:
        params["match"] = f"{match[0]}-{match[1]}"
    link = path + (("?" + urlencode(params)) if params else "")
    if match is not None and match[0] >= 0:
        link += f"#step-{match[0]}"
    return link


def when(epoch: int | float | None) -> str:
    """The time a run started, for a page; a stored instant outside the years 1 to 9999 (ingest refuses
    them now, older stores may hold some) is shown as its epoch seconds instead of failing the page."""
    if not epoch:
        return ""
    try:
        return datetime.fromtimestamp(int(epoch), tz=timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    except (ValueError, OverflowError, OSError):
        return f"{int(epoch)} s from 1970 UTC (outside the years 1 to 9999)"


def _clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"

#: The key of a request's ``scope["state"]`` under which the pages' server puts the status the client got when it is
#: not the app's: one it answered itself while the app still ran (a body too slow: 408), or none, the client having
#: left before the answer was whole (499, nginx's "client closed request"), so that the request's one log line says
#: what the client got.
SERVER_ANSWERED = "server_answered"

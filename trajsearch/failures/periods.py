"""Periods and trends: ``since`` / ``until`` as people write them, and how a mode moved.

The CLI, the gRPC client and the analysis parse ``7d`` and ``2026-05-01`` the same
way, so a period means one thing wherever it is typed; a mode's trend compares its
count with the period of the same length before.
"""

from __future__ import annotations

import re
import time
from datetime import datetime, timedelta, timezone


_DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(s|m|min|h|d|w)?\s*$", re.I)
_UNIT = {"s": 1, "m": 60, "min": 60, "h": 3600, "d": 86400, "w": 604800}


def parse_duration(value: str | int | float | timedelta) -> int:
    """``7d``, ``24h``, ``2w``, ``90m``, ``3600`` (seconds) or a timedelta -> whole seconds (> 0)."""
    if isinstance(value, timedelta):
        seconds = value.total_seconds()
    elif isinstance(value, (int, float)) and not isinstance(value, bool):
        seconds = float(value)
    elif isinstance(value, str) and (match := _DURATION.match(value)):
        seconds = float(match.group(1)) * _UNIT[(match.group(2) or "s").lower()]
    else:
        raise ValueError(f"since: expected a duration like 7d, 24h, 2w or seconds, got {value!r}")
    if not 0 < seconds <= 100 * 365 * 86400:
        raise ValueError(f"since: must be more than 0 and at most 100 years, got {value!r}")
    return int(seconds)


def parse_period(value: str) -> int:
    """A period a person typed (``failures --since``), its unit required: ``20260501`` or ``1714000000`` read as
    seconds had given a window of 234 days or 54 years without a word (review RFIX), where ``search --since`` takes
    the first for a day and refuses the second."""
    if (match := _DURATION.match(value)) and not match.group(2):
        raise ValueError(f"since: a bare number is no period: give its unit, 7d, 24h, 2w, 90m or 3600s, got {value!r}")
    return parse_duration(value)


def parse_time(value: str | int | datetime | None) -> int | None:
    """An ISO date/time (``2026-05-01``, ``2026-05-01T12:00Z``), epoch seconds or a datetime -> epoch seconds."""
    if value is None:
        return None
    if isinstance(value, datetime):
        return int((value if value.tzinfo else value.replace(tzinfo=timezone.utc)).timestamp())
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    if isinstance(value, str):
        try:
            moment = datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
        except ValueError:
            raise ValueError(f"until: expected an ISO date or time like 2026-05-01, got {value!r}") from None
        return parse_time(moment)
    raise ValueError(f"until: expected an ISO date or time, got {value!r}")


def parse_since(value: str, *, now: float | None = None) -> int:
    """The moment ``value`` names as a search's ``--since``, in epoch seconds: a period back from ``now`` with its
    unit (``7d``, ``24h``, as ``failures --since`` takes it) or an ISO date or time (``2026-05-01`` or ``20260501``,
    UTC: the web page's "From" day), so that runs started then or later are searched.

    A number without a unit is no period here: ``20260501`` is the web's YYYYMMDD day, not 20,260,501 seconds back
    (234 days), and ``1714000000`` is refused rather than read as seconds back (1972)."""
    if (match := _DURATION.match(value)) and match.group(2):
        return max(0, int((time.time() if now is None else now) - parse_duration(value)))
    try:
        return max(0, parse_time(value) or 0)
    except ValueError:
        unit = (" (YYYYMMDD names no such day)" if re.fullmatch(r"\d{8}", value.strip()) else
                " (a bare number is no period: give its unit, 7d or 3600s; YYYYMMDD is a day)") if match else ""
        raise ValueError(f"since: expected a date like 2026-05-01 or a period back from now like 7d or 24h{unit}, "
                         f"got {value!r}") from None


def _trend(count: int, previous: int, band: float) -> tuple[str, float | None]:
    if previous == 0:
        return ("new" if count else "flat"), None
    change = (count - previous) / previous
    if abs(change) <= band:
        return "flat", round(change, 4)
    return ("up" if change > 0 else "down"), round(change, 4)

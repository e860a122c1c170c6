"""Request validation at the service edge: every error names the field it is about.

The library validates too; checking here first gives callers a message of the
form ``"<field>: <what is wrong>"`` (sent as ``INVALID_ARGUMENT``) and keeps the
size bounds of the service (max k, text length, list lengths) in one place.

Values are echoed clipped (:func:`shown`): a 1 MB value quoted back in an
error would exceed gRPC's metadata limit and turn the answer into
``RESOURCE_EXHAUSTED`` without the field.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Iterable, Sequence

from ..bounds import MAX_K, MAX_QUERY_CHARS, SERVER_MAX_K, out_of_bounds
from ..excerpt import BLANK_TEXT, blank
from ..model import CONTROL_CHARACTERS, ID_PATTERN, MAX_FILTER_VALUES, valid_id
from ..store.traces import MAX_TRACE_BYTES
from ..vocab import LEVELS, OUTCOMES

#: The longest error text sent back (gRPC status details travel as metadata).
MAX_MESSAGE_CHARS = 1_000
#: The largest answer a server sends and a client takes: a ``GetTrace`` of the largest trace the store keeps
#: (ingest takes runs up to it, embedded or not) and room for the message around it. Requests stay bounded by
#: ``Limits.max_message_bytes`` (``--max-message-mb``): what a caller may make the server parse. With answers
#: bounded by it too, a run of 40 MB ingested was searchable but its trace unreadable over the service
#: (``RESOURCE_EXHAUSTED: Sent message larger than max``).
MAX_RESPONSE_BYTES = MAX_TRACE_BYTES + 64 * 1024
#: The latest instant a ``datetime`` holds (9999-12-31T23:59:59Z), in epoch seconds.
MAX_EPOCH_SECONDS = int(datetime(9999, 12, 31, 23, 59, 59, tzinfo=timezone.utc).timestamp())


def shown(value: object, limit: int = 64) -> str:
    """``repr`` of a caller's value, clipped to ``limit`` characters with its full length noted."""
    text = value if isinstance(value, str) else repr(value)
    if len(text) <= limit:
        return repr(value)
    return f"{text[:limit]!r}... ({len(text)} characters)"


def clip(message: str, limit: int = MAX_MESSAGE_CHARS) -> str:
    return message if len(message) <= limit else message[: limit - 20] + f"... ({len(message)} chars)"


class FieldError(ValueError):
    """A request field is invalid. ``str()`` is ``"<field>: <message>"`` (at most 1,000 characters)."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(clip(f"{field}: {message}"))
        self.field = field


#: Records one Ingest stream may carry. The client opens a new stream past it (``Client.add``), so a dump of more
#: runs is ingested in full over ``--server``: sent as one stream, it was refused at record 50,001 on every rerun.
MAX_STREAM_RECORDS = 50_000
#: Metadata naming the client call an Ingest stream belongs to: a call past a stream's records sends several streams,
#: and the server gives them one indexer so that a run whose copies fall in two of them is counted once, as a local
#: ingest counts it (each stream counted its copy: "ingested 3" for 2 runs stored). Without it, one per stream.
INGEST_CALL_HEADER = "x-ingest-call"
#: The trailing-metadata key of an error this server ended a call with itself (its value the request id). Its
#: initial metadata is sent before any work, so it tells only that the call came; a status without this trailer
#: after it was made by the client's gRPC (its deadline, a cancel, a broken connection): the answer was lost, the
#: work maybe done. A SearchPastRuns the server refused had counted nothing, yet read "may have counted". A key of
#: trajsearch's own: a proxy echoing the generic ``x-request-id`` in its trailers had passed for the server.
ENDED_HERE = "x-trajsearch-ended"


@dataclass(frozen=True)
class Limits:
    """Size bounds enforced by the server (the message size also by gRPC itself)."""

    max_message_bytes: int = 32 * 1024 * 1024
    max_k: int = SERVER_MAX_K
    max_text_chars: int = MAX_QUERY_CHARS
    max_values: int = MAX_FILTER_VALUES  # entries in one repeated filter field
    max_value_chars: int = 200
    max_batch_records: int = 256
    max_stream_records: int = MAX_STREAM_RECORDS
    max_context_steps: int = 50  # expand: before + after

    def __post_init__(self) -> None:
        """Refuse a bound past the library's own: a server taking a longer text than a search takes passed it on to
        be refused in the library's words ("query text too long"), and one of 0 refused every text."""
        bounds = (("max_k", self.max_k, MAX_K), ("max_text_chars", self.max_text_chars, MAX_QUERY_CHARS))
        for name, value, top in bounds:
            if said := out_of_bounds(value, 1, top, " (the library's bound)"):
                raise LimitError(name, said)


class LimitError(ValueError):
    """A :class:`Limits` bound out of range; ``name`` is the field (``serve`` names its flag)."""

    def __init__(self, name: str, said: str) -> None:
        super().__init__(f"{name} {said}")
        self.name, self.said = name, said


def text(field: str, value: str, limits: Limits, *, required: bool = True, max_chars: int | None = None) -> str:
    limit = max_chars or limits.max_text_chars
    if required and not value.strip():
        raise FieldError(field, "must be a non-empty string")
    if len(value) > limit:
        raise FieldError(field, f"too long ({len(value)} > {limit} characters)")
    return value


def searched_by(field: str, value: str, limits: Limits, *, max_chars: int | None = None) -> str:
    """``value``, a text to search by (a query, a task, a pasted error): :func:`text`'s bound, and refused in the
    library's words when it holds nothing a reader sees (:func:`~trajsearch.excerpt.blank`). Checked with ``strip()``
    as any other field, ``"\\x00"`` and ``"\\u200b"`` were searched, 10 arbitrary hits (round 25, SVC2)."""
    text(field, value, limits, required=False, max_chars=max_chars)
    if blank(value):
        raise FieldError(field, BLANK_TEXT)
    return value


def bounded(field: str, value: int, low: int, high: int, *, default: int | None = None, note: str = "") -> int:
    """``value`` (``default`` for 0, when given), refused outside ``low``..``high`` in the library's words."""
    if value == 0 and default is not None:
        return default
    if said := out_of_bounds(value, low, high, note):
        raise FieldError(field, said)
    return value


#: The exemplars and warnings verbs: at most this many runs, and the rendered context's token budget (low, high).
ADVICE_MAX_K = 10
ADVICE_BUDGET = (50, 32_000)


def advice_size(k: int, budget: int, *, names: tuple[str, str] = ("k", "token_budget")) -> tuple[int | None, int | None]:
    """``k`` and the token budget of an exemplars or warnings request, 0 (and so None) for the runtime's default.

    The server and the embedded CLI check them here, each naming the fields as its caller spells them.
    """
    return (bounded(names[0], k, 1, ADVICE_MAX_K, default=0) or None,
            bounded(names[1], budget, *ADVICE_BUDGET, default=0) or None)


#: A control character (model's one rule): looked for by one scan in C, where a Python loop over each character of
#: 10,000 excluded ids of 192 characters (an export's last page) took 0.6 s of every such Search.
_CONTROL_RE = re.compile(CONTROL_CHARACTERS)


def strings(field: str, values: Sequence[str], limits: Limits) -> tuple[str, ...]:
    """A repeated filter value: bounded count and length, no empty values, no control characters."""
    if len(values) > limits.max_values:
        raise FieldError(field, f"at most {limits.max_values} values, got {len(values)}")
    for n, value in enumerate(values):
        if not value:
            raise FieldError(f"{field}[{n}]", "must not be empty")
        if len(value) > limits.max_value_chars:
            raise FieldError(f"{field}[{n}]", f"too long ({len(value)} > {limits.max_value_chars} characters)")
        if _CONTROL_RE.search(value):
            raise FieldError(f"{field}[{n}]", "contains control characters")
    return tuple(values)


def choices(field: str, values: Sequence[str], allowed: Iterable[str], limits: Limits) -> tuple[str, ...]:
    allowed = tuple(allowed)
    for n, value in enumerate(strings(field, values, limits)):
        if value not in allowed:
            raise FieldError(f"{field}[{n}]", f"unknown value {shown(value)}: expected one of {list(allowed)}")
    return tuple(values)


def choice(field: str, value: str, allowed: Iterable[str], *, default: str) -> str:
    allowed = tuple(allowed)
    if not value:
        return default
    if value not in allowed:
        raise FieldError(field, f"unknown value {shown(value)}: expected one of {list(allowed)}")
    return value


def timestamp(field: str, value: int) -> datetime | None:
    """Epoch seconds as an aware datetime; 0 means "not given" (None)."""
    if value == 0:
        return None
    if not 0 < value <= MAX_EPOCH_SECONDS:
        raise FieldError(field, f"must be epoch seconds from 1 to {MAX_EPOCH_SECONDS} (0: now), got {value}")
    return datetime.fromtimestamp(value, timezone.utc)


def identifier(field: str, value: str) -> str:
    if not value:
        raise FieldError(field, "is required")
    try:
        return valid_id(value, field)
    except ValueError:
        raise FieldError(field, f"{shown(value)} is not a valid id (expected {ID_PATTERN})") from None


def identifiers(field: str, values: Sequence[str], limits: Limits) -> tuple[str, ...]:
    strings(field, values, limits)
    return tuple(identifier(f"{field}[{n}]", v) for n, v in enumerate(values))


def levels(field: str, values: Sequence[str], limits: Limits) -> tuple[str, ...]:
    return choices(field, values, LEVELS, limits)


def outcomes(field: str, values: Sequence[str], limits: Limits) -> tuple[str, ...]:
    return choices(field, values, OUTCOMES, limits)

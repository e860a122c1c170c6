"""Where things live by default, and the environment variables that move them.

- ``TRAJSEARCH_HOME``   data directory of the embedded default (``./.trajsearch``)
- ``TRAJSEARCH_URI``    Milvus URI: a local path (Milvus Lite) or ``http://host:19530``
- ``TRAJSEARCH_TRACES`` trace store: a path, ``file:///abs/path`` or ``s3://bucket/prefix``
- ``TRAJSEARCH_MODEL``  embedding model (default all-MiniLM-L6-v2, offline)
- ``TRAJSEARCH_MILVUS_TOKEN`` token for a Milvus server (``user:password`` or an API key)
- ``TRAJSEARCH_BLAS_THREADS`` BLAS threads of an embedded store's dense search (default 1, or
  0 where OPENBLAS_NUM_THREADS, OMP_NUM_THREADS or MKL_NUM_THREADS is set; 0: BLAS's own)
- ``TRAJSEARCH_LOCAL_TZ`` the zone of the local times some tools write without one (aider, Trae Agent, SpecStory
  before 2025-05): an IANA name (``Europe/Berlin``), an offset (``+02:00``), ``UTC`` or ``local`` (this machine's);
  unset, such a time is read as UTC and the run says so (``adapters._common.local_clock``)
"""

from __future__ import annotations

import os
import re
from datetime import timedelta, timezone, tzinfo
from pathlib import Path
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from .embed import DEFAULT_MODEL


def home() -> Path:
    return Path(os.environ.get("TRAJSEARCH_HOME", ".trajsearch"))


def default_uri() -> str:
    return os.environ.get("TRAJSEARCH_URI") or str(home() / "milvus.db")


def default_traces() -> str:
    return os.environ.get("TRAJSEARCH_TRACES") or str(home() / "traces")


def default_model() -> str:
    return os.environ.get("TRAJSEARCH_MODEL", DEFAULT_MODEL)


#: The offsets from UTC zones use lie between these (UTC-12 to UTC+14).
LEAST_UTC_OFFSET, MOST_UTC_OFFSET = timedelta(hours=-12), timedelta(hours=14)
#: ``TRAJSEARCH_LOCAL_TZ`` as an offset: ``+02:00``, ``-0530``, ``+9``.
_OFFSET = re.compile(r"([+-])(\d{1,2}):?(\d\d)?")


def local_time_zone() -> tuple[str, tzinfo | None] | None:
    """``TRAJSEARCH_LOCAL_TZ`` as set and its zone (None: ``local``, this machine's own, DST and all); None unset or
    blank. Read by ``adapters._common.local_clock``, and first where reading starts (``ingest.read.make_context``), so
    that a value naming no zone is the operator's error, said once (the CLI: exit 2), not every run's rejection."""
    named = os.environ.get("TRAJSEARCH_LOCAL_TZ", "").strip()
    if not named:
        return None
    if named.lower() == "local":
        return named, None
    if named.upper() in ("UTC", "Z"):
        return named, timezone.utc
    if offset := _OFFSET.fullmatch(named):
        sign, hours, minutes = offset.groups()
        span = timedelta(hours=int(hours), minutes=int(minutes or 0))
        if int(minutes or 0) < 60 and span <= MOST_UTC_OFFSET:
            return named, timezone(-span if sign == "-" else span)
    else:
        try:
            return named, ZoneInfo(named)
        except (ZoneInfoNotFoundError, ValueError):
            pass
    raise ValueError(f"TRAJSEARCH_LOCAL_TZ={named!r} names no time zone: give an IANA name (Europe/Berlin), an "
                     f"offset from UTC (+02:00), UTC, or local (this machine's zone)")


def milvus_token() -> str:
    return os.environ.get("TRAJSEARCH_MILVUS_TOKEN", "")


#: Environment variables that set BLAS's own threads (store/blas.py leaves those alone).
_BLAS_ENVIRONMENT = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")


def blas_threads() -> int:
    """BLAS threads an embedded store's dense search may use (store/blas.py says why 1 is the default);
    0 leaves BLAS's own setting (all cores). Unset, it is 0 where the environment already sets BLAS's
    threads (``OPENBLAS_NUM_THREADS``, ``OMP_NUM_THREADS``, ``MKL_NUM_THREADS``): someone chose them."""
    if "TRAJSEARCH_BLAS_THREADS" not in os.environ:
        return 0 if any(os.environ.get(name, "").strip() for name in _BLAS_ENVIRONMENT) else 1
    raw = os.environ["TRAJSEARCH_BLAS_THREADS"].strip()
    if not (raw.isascii() and raw.isdigit()):  # one check: '²' is a digit to isdigit(), not to int()
        raise ValueError(f"TRAJSEARCH_BLAS_THREADS must be a whole number of threads (0: BLAS's own), got {raw!r}")
    return int(raw)

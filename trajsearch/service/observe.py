"""Structured JSON logs with request ids, and per-method call / error / latency counters.

Logs are one JSON object per line on stderr. They carry the request id, the
method, the key's label and tenant, the status code and the latency, never
the API key and never query or trajectory text.

:class:`Metrics` keeps, per method, the call count, error count, status-code
counts, cumulative latency buckets (rendered as Prometheus text by
:meth:`Metrics.prometheus`) and a window of recent latencies for p50 / p99.
"""

from __future__ import annotations

import bisect
import json
import logging
import math
import sys
import threading
import time
from collections import deque
from dataclasses import dataclass, field
from datetime import datetime, timezone
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

LOGGER = "trajsearch.service"
BUCKETS_MS = (1, 2.5, 5, 10, 25, 50, 100, 250, 500, 1000, 2500, 5000, 10000)
_WINDOW = 2048


class JsonFormatter(logging.Formatter):
    """``{"ts": ..., "level": ..., "logger": ..., "msg": ..., **extra fields}``."""

    def format(self, record: logging.LogRecord) -> str:
        data: dict[str, Any] = {
            "ts": datetime.fromtimestamp(record.created, timezone.utc).isoformat(timespec="milliseconds"),
            "level": record.levelname.lower(),
            "logger": record.name,
            "msg": record.getMessage(),
        }
        data.update(getattr(record, "fields", {}))
        if record.exc_info:
            data["exc"] = self.formatException(record.exc_info)
        return json.dumps(data, default=str, ensure_ascii=False)


def configure_logging(level: str = "INFO", stream: Any = None) -> None:
    """Send every ``trajsearch`` logger to ``stream`` (stderr) as JSON lines."""
    handler = logging.StreamHandler(stream or sys.stderr)
    handler.setFormatter(JsonFormatter())
    root = logging.getLogger("trajsearch")
    root.handlers[:] = [handler]
    root.setLevel(level.upper())
    root.propagate = False


def log_event(logger: logging.Logger, level: int, msg: str, **fields: Any) -> None:
    logger.log(level, msg, extra={"fields": fields})


@dataclass
class _MethodStats:
    calls: int = 0
    errors: int = 0
    codes: dict[str, int] = field(default_factory=dict)
    total_ms: float = 0.0
    buckets: list[int] = field(default_factory=lambda: [0] * (len(BUCKETS_MS) + 1))
    recent: deque = field(default_factory=lambda: deque(maxlen=_WINDOW))


class Metrics:
    """Thread-safe per-method counters. ``record`` once per finished call."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._methods: dict[str, _MethodStats] = {}
        self._in_flight = 0
        self.started = time.monotonic()

    def enter(self) -> None:
        with self._lock:
            self._in_flight += 1

    def record(self, method: str, code: str, ms: float) -> None:
        with self._lock:
            self._in_flight -= 1
            stats = self._methods.setdefault(method, _MethodStats())
            stats.calls += 1
            if code != "OK":
                stats.errors += 1
            stats.codes[code] = stats.codes.get(code, 0) + 1
            stats.total_ms += ms
            stats.buckets[bisect.bisect_left(BUCKETS_MS, ms)] += 1
            stats.recent.append(ms)

    @property
    def in_flight(self) -> int:
        return self._in_flight

    def snapshot(self) -> dict[str, Any]:
        """``{"methods": {name: {...}}, "in_flight": n, "uptime_s": s}``."""
        with self._lock:
            methods = {}
            for name, s in sorted(self._methods.items()):
                recent = sorted(s.recent)
                methods[name] = {
                    "calls": s.calls,
                    "errors": s.errors,
                    "codes": dict(s.codes),
                    "mean_ms": s.total_ms / s.calls if s.calls else 0.0,
                    "p50_ms": percentile(recent, 50),
                    "p99_ms": percentile(recent, 99),
                }
            return {"methods": methods, "in_flight": self._in_flight, "uptime_s": time.monotonic() - self.started}

    def prometheus(self) -> str:
        """The counters in the Prometheus text exposition format."""
        lines = [
            "# TYPE trajsearch_rpc_calls_total counter",
            "# TYPE trajsearch_rpc_latency_ms histogram",
            "# TYPE trajsearch_rpc_in_flight gauge",
        ]
        with self._lock:
            for name, s in sorted(self._methods.items()):
                for code, n in sorted(s.codes.items()):
                    lines.append(f'trajsearch_rpc_calls_total{{method="{name}",code="{code}"}} {n}')
                cumulative = 0
                for bound, n in zip((*BUCKETS_MS, "+Inf"), s.buckets):
                    cumulative += n
                    lines.append(f'trajsearch_rpc_latency_ms_bucket{{method="{name}",le="{bound}"}} {cumulative}')
                lines.append(f'trajsearch_rpc_latency_ms_sum{{method="{name}"}} {s.total_ms:.3f}')
                lines.append(f'trajsearch_rpc_latency_ms_count{{method="{name}"}} {s.calls}')
            lines.append(f"trajsearch_rpc_in_flight {self._in_flight}")
        return "\n".join(lines) + "\n"


def percentile(sorted_values: list[float], q: float) -> float:
    """Nearest-rank percentile of already sorted values (0.0 when empty)."""
    if not sorted_values:
        return 0.0
    rank = max(1, min(len(sorted_values), math.ceil(q / 100 * len(sorted_values))))
    return float(sorted_values[rank - 1])


def start_metrics_http(metrics: Metrics, host: str, port: int) -> ThreadingHTTPServer:
    """Serve ``GET /metrics`` (Prometheus text) and ``GET /metrics.json`` in a daemon thread."""

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 (http.server's naming)
            if self.path == "/metrics":
                body, kind = metrics.prometheus().encode(), "text/plain; version=0.0.4"
            elif self.path == "/metrics.json":
                body, kind = json.dumps(metrics.snapshot()).encode(), "application/json"
            else:
                self.send_error(404)
                return
            self.send_response(200)
            self.send_header("Content-Type", kind)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: Any) -> None:  # quiet: the RPC log is the log
            pass

    server = ThreadingHTTPServer((host, port), Handler)
    threading.Thread(target=server.serve_forever, name="trajsearch-metrics", daemon=True).start()
    return server

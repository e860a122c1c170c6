"""The Python client: the library's verbs over gRPC, with the tenant taken from the API key.

``Client("127.0.0.1:50051", api_key=...)`` has the façade's method names
(``search``, ``similar_runs``, ``expand``, ``run``, ``get_trace``, ``add``,
``delete``, ``stats``), the failure-mode analysis (``failures``: the same
:class:`~trajsearch.failures.FailureReport` as ``failure_modes``) and the agent
runtime's (``exemplars``, ``warnings``, ``search_past_runs``), and returns the
library's types (:class:`Hit`, :class:`StepView`, :class:`RunMatch`, :class:`Trajectory`). The read
methods take the library's keywords, declared there alone: what a call leaves out is not sent, and the
server answers with the library's default. They accept ``tenant=`` so code written against the library
runs unchanged, but it can only name the key's own tenant (anything else raises PermissionError): the
server never takes a tenant from a request.

Failures raise :class:`ServiceError` subclasses that are also the builtin
exception the library raises for the same problem (``InvalidArgument`` is a
``ValueError``, ``NotFound`` a ``LookupError``, ``PermissionDenied`` a
``PermissionError``); ``Unavailable`` means the server is down or draining, ``ResourceExhausted``
that it is out of disk (a write) or of room for large answers.
"""

from __future__ import annotations

import itertools
import json
import operator
import os
import time
import uuid
from dataclasses import dataclass, field

# grpc's INFO lines ("Got goaway ... connection idle" each time a server closes an idle connection) on every program
# using this client, not only the CLI's, unless its user asked for them (set before grpc is first imported)
os.environ.setdefault("GRPC_VERBOSITY", "ERROR")
from datetime import datetime
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator, Sequence
from urllib.parse import urlsplit

import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc

from ..bounds import MAX_EXAMPLES, MAX_GROUP_SIZE, MAX_K, MAX_MODES, SERVER_K_NOTE, check_count
from ..failures import FailureReport, parse_duration, parse_time
from ..model import STORED, Trajectory
from ..represent import INGESTED_FROM, source_mark
from ..results import OTHER_RUN_REPLACED, ContextResult, Hit, IngestReport, Rejection, RunMatch, StepView
from . import convert
from .auth import API_KEY_ENV, key_problem
from .protos import pb2, pb2_grpc
from .validate import ENDED_HERE, INGEST_CALL_HEADER, MAX_RESPONSE_BYTES, MAX_STREAM_RECORDS, MAX_TRACE_BYTES

SERVER_ENV = "TRAJSEARCH_SERVER"
#: A server's request limit when it does not say (older servers): ``--max-message-mb``'s default.
_DEFAULT_MESSAGE_BYTES = 32 * 1024 * 1024
_FRAMING = 64  # bytes of batch and stream framing around one record
DEFAULT_ADDRESS = "127.0.0.1:50051"
#: The most the server may take over one batch of an Ingest stream, by default (see :meth:`Client.add`): a batch
#: of 64 large runs is written in about a minute on CPU, longer while other writers share the server.
INGEST_STALL_S = 600.0
#: What gRPC may hold of an Ingest stream at once, taken from the caller and not yet read by the server (its
#: flow-control window, a few MiB: ten batches of 650 KB were seen in flight): the server may still have all of it
#: to write after the last batch is taken, so the wait for the answer is bounded per batch of it (review RZ1).
IN_FLIGHT_BYTES = 16 * 2**20
#: A batch is sent once its oldest record has waited this long for more, full or not: a caller's input that yields
#: runs slowly (runs pushed as agents finish) kept its batch back until the server's ``--ingest-idle`` ended the
#: stream, the runs taken from the input lost (review RZ1).
FLUSH_AFTER_S = 30.0
_SERVICE = "trajsearch.v1.TrajSearch"
#: The calls added to the service since its first release (commit 442d521b): only these may be missing from a
#: trajsearch server, one older than the call. Any other call is on every trajsearch server, so UNIMPLEMENTED for it
#: means the address is not a trajsearch server's (Milvus on 19530, another gRPC service). Keep it true: a call added
#: to schemas/trajsearch.proto joins this set (``git log -S "rpc Name(" -- schemas/trajsearch.proto`` dates a call).
ADDED_SINCE_FIRST_RELEASE = frozenset({"Failures"})
#: A call every trajsearch server has, asked to tell an older trajsearch from another gRPC server (see ``_invoke``).
_EVERY_SERVER_HAS = "WhoAmI"
#: How often ``health`` asks again a starting server for its status (see :meth:`Client.health`).
_HEALTH_POLL_S = 0.2
#: Unary calls are retried on UNAVAILABLE (a restart, a dropped connection); all are idempotent. The server
#: turns retries off for an answer that must not be repeated (``grpc-retry-pushback-ms: -1``: a trace
#: store that already retried, or whose read slots are all waiting).
_RETRIED = ["Search", "SimilarRuns", "Expand", "Run", "GetTrace", "Exemplars", "Warnings", "Stats", "Metrics",
            "WhoAmI", "Delete", "Failures"]


class ServiceError(Exception):
    """A call failed: ``code`` (grpc.StatusCode), ``details`` (the server's message), ``request_id``; ``lost``: the
    server had the call (its initial metadata came) but its end is not the server's own (:func:`_lost`), so the server
    may have acted on it. A refusal the server answered itself is not lost: it did nothing."""

    def __init__(self, code: grpc.StatusCode, details: str, request_id: str = "", *, lost: bool = False) -> None:
        # a server's message may name the request id itself (DATA_LOSS, a busy trace store): said once
        said_id = request_id and f"(request id {request_id})" not in details
        super().__init__(f"{code.name}: {details}" + (f" (request id {request_id})" if said_id else ""))
        self.code = code
        self.details = details
        self.request_id = request_id
        self.lost = lost


class Unauthenticated(ServiceError, PermissionError):
    pass


def refused_key(address: str, exc: Unauthenticated) -> str:
    """An operator's words for a refused ``$TRAJSEARCH_API_KEY`` (the CLI, ``trajsearch mcp``): the server's
    own message tells a hand-written client which metadata to send, which the operator never writes."""
    return (f"the trajsearch server at {address} refused the API key in ${API_KEY_ENV}: it is not one of that "
            "server's keys (a key of another server, or one missing from its --keys file)"
            + (f" (request id {exc.request_id})" if exc.request_id else ""))


class PermissionDenied(ServiceError, PermissionError):
    pass


class InvalidArgument(ServiceError, ValueError):
    pass


class NotFound(ServiceError, LookupError):
    pass


class DataLoss(ServiceError, ValueError):
    """A run's stored trace is damaged on the server (the store's ``TraceCorruptError``, a ValueError as that is):
    a reader that leaves out a trace it cannot read (``export``) leaves it out; it stopped an ``export --server``."""


class Unavailable(ServiceError, ConnectionError):
    pass


class DeadlineExceeded(ServiceError, TimeoutError):
    pass


class Unimplemented(ServiceError, NotImplementedError):
    """The server has no such call: it runs a trajsearch older than the call (one of
    :data:`ADDED_SINCE_FIRST_RELEASE`), or the address is not a trajsearch server's."""


class ResourceExhausted(ServiceError):
    """The server is out of something a retry in a moment will not bring back: disk for a write (an ingest on a
    full disk), or room for large answers (held until their callers read them)."""


_ERRORS = {
    grpc.StatusCode.UNAUTHENTICATED: Unauthenticated,
    grpc.StatusCode.PERMISSION_DENIED: PermissionDenied,
    grpc.StatusCode.INVALID_ARGUMENT: InvalidArgument,
    grpc.StatusCode.NOT_FOUND: NotFound,
    grpc.StatusCode.DATA_LOSS: DataLoss,
    grpc.StatusCode.UNAVAILABLE: Unavailable,
    grpc.StatusCode.DEADLINE_EXCEEDED: DeadlineExceeded,
    grpc.StatusCode.RESOURCE_EXHAUSTED: ResourceExhausted,
    grpc.StatusCode.UNIMPLEMENTED: Unimplemented,
}


#: What gRPC's words for a connection of the wrong kind mean: (this client speaks TLS, the words, the hint).
#: A TLS server drops a plaintext client's connection ("Socket closed"), a plaintext server answers a TLS
#: handshake with HTTP/2 bytes (WRONG_VERSION_NUMBER); said alone, neither names the cause.
_TRANSPORT_HINTS = (
    (False, "Socket closed", "if the server speaks TLS, connect with TLS: its address as https://HOST:PORT, or "
                             "its CA certificate (--ca, $TRAJSEARCH_TLS_CA); or the server is at its connection "
                             "limit"),
    (True, "WRONG_VERSION_NUMBER", "the server does not speak TLS: connect without TLS (HOST:PORT, no --ca)"),
    (True, "CERTIFICATE_VERIFY_FAILED", "the server's certificate is not signed by a CA this client trusts: give "
                                        "its CA certificate (--ca, $TRAJSEARCH_TLS_CA)"),
)


def _answered(exc: grpc.RpcError) -> bool:
    """Whether the server had answered the call's start (its initial metadata: a trajsearch server's ``x-request-id``)
    before it failed: then the connection was of the right kind and under the server's cap, and a hint saying it may
    not be misleads. A server killed mid-ingest ("Stream removed (Socket closed)") was said to need TLS."""
    try:
        return bool(exc.initial_metadata())  # type: ignore[attr-defined]
    except Exception:  # noqa: BLE001 (an RpcError that is no call: nothing was answered)
        return False


def _lost(exc: grpc.RpcError) -> bool:
    """Whether the server had the call (:func:`_answered`) but did not end it itself (no :data:`ENDED_HERE` trailer,
    which a trajsearch server sends with each error of its own): its deadline passed here, it was cancelled, the
    connection broke. The initial metadata alone had read "may have acted" for refusals made before any work."""
    if not _answered(exc):
        return False
    try:
        return not any(key == ENDED_HERE for key, _ in exc.trailing_metadata() or ())  # type: ignore[attr-defined]
    except Exception:  # noqa: BLE001 (no trailers to read: none came from the server)
        return True


def _error(exc: grpc.RpcError, request_id: str, tls: bool | None = None, *, method: str = "",
           address: str = "") -> ServiceError:
    code = exc.code() if hasattr(exc, "code") else grpc.StatusCode.UNKNOWN
    details = exc.details() if hasattr(exc, "details") else str(exc)
    if code == grpc.StatusCode.UNIMPLEMENTED and method:  # gRPC's words, "Method not found!", named nothing to do
        details = lacking_call(method, address, details)
    if code == grpc.StatusCode.UNAVAILABLE and details and not _answered(exc):
        hint = next((hint for speaks_tls, words, hint in _TRANSPORT_HINTS if speaks_tls == tls and words in details),
                    None)
        details += f" ({hint})" if hint else ""
    return _ERRORS.get(code, ServiceError)(code, details or "", request_id, lost=_lost(exc))


def lacking_call(method: str, address: str, details: str = "", *, trajsearch: bool = True) -> str:
    """What to tell of a server without the ``method`` call this client made: an older trajsearch, to upgrade (or a
    client of its version to use), only for a call added since the first release, on a server that answers the
    others (``trajsearch``); else the address is not a trajsearch server's. Every UNIMPLEMENTED was said "upgrade
    the server", a ``--server`` pointing at Milvus or any other gRPC service too. (The package's version names no
    build: both may say the same one.)"""
    at = f" at {address}" if address else ""
    said = f" [{details}]" if details else ""
    if method in ADDED_SINCE_FIRST_RELEASE and trajsearch and "unknown service" not in details:
        return (f"the trajsearch server{at} has no {method} call: it runs an older trajsearch, from before the call; "
                f"upgrade the server, or use a client of the server's version{said}")
    return not_trajsearch(address, f"it has no {_SERVICE}/{method} call{said}")


def not_trajsearch(address: str, why: str) -> str:
    """The words for an address whose server is no trajsearch server (``why``: what it answered)."""
    return (f"the server at {address or 'this address'} is not a trajsearch server ({why}): check the address "
            f"(--server, ${SERVER_ENV})")


NO_KEY = f"no API key: set ${API_KEY_ENV} to a key of the server (or pass api_key= to Client)"


def _usable_key(key: str | None, source: str) -> str:
    """The key as sent: surrounding whitespace stripped, as the server strips it (``$(cat key)`` keeps a
    Windows file's ``\\r``); any other character gRPC cannot send in metadata (outside printable ASCII) is
    refused here, naming ``source``, rather than failing every call with ``INTERNAL: Invalid metadata``."""
    key = (key or "").strip()
    if not key:
        raise ValueError(NO_KEY)
    problem = key_problem(key)
    if problem:
        raise ValueError(f"{source} {problem}")
    return key


#: URL schemes people paste as a server's address (gRPC's resolver has none of them), and whether each means TLS.
_URL_SCHEMES = {"http": False, "grpc": False, "https": True, "grpcs": True}


def server_target(address: str) -> tuple[str, bool | None]:
    """(the gRPC target, whether the address asks for TLS: None if it does not say) of a server address as
    people write it.

    ``HOST:PORT`` and gRPC's own target forms (``dns:///h:p``, ``unix:/path``) pass unchanged. A URL is
    what people paste from a proxy's or a browser's address bar (this CLI's ``--uri`` takes
    ``http://host:19530``): gRPC read ``https://search.example.com`` as one DNS name and failed with
    "Misformatted domain name", and TLS came only with ``--ca`` (a file), so a server behind a TLS proxy with
    a public certificate could not be reached without finding the system's CA bundle. ``https://``
    (``grpcs://``) is TLS, verified against the system's roots unless a CA is given, port 443 unless named;
    ``http://`` (``grpc://``) plaintext, port 80 unless named. A URL naming a path, query, fragment or user is
    refused: gRPC has no place for them (and a user part may be a key, so it is not echoed).
    """
    scheme, sep, _ = address.partition("://")
    if not sep or scheme.lower() not in _URL_SCHEMES:
        return address, None
    tls = _URL_SCHEMES[scheme.lower()]
    try:
        parts = urlsplit(address)
        port = parts.port or (443 if tls else 80)
    except ValueError as exc:
        raise ValueError(f"server address {address!r} is not HOST:PORT or a URL of one ({exc})") from None
    if parts.username is not None or parts.password is not None:
        raise ValueError("server address: a URL with a user part (user@host) is not a server address; send the key "
                         f"in ${API_KEY_ENV}, never in the address")
    if parts.path not in ("", "/") or parts.query or parts.fragment or not parts.hostname:
        raise ValueError(f"server address {address!r}: give HOST:PORT (or {scheme}://HOST:PORT), without a path, "
                         "query or fragment: a gRPC server is one address")
    host = parts.hostname
    return (f"[{host}]" if ":" in host else host) + f":{port}", tls


@dataclass
class RemoteIngestReport(IngestReport):
    """:class:`IngestReport` plus one result per record sent (position, trajectory_id, status, reason)."""

    results: list[dict[str, Any]] = field(default_factory=list)


class Client:
    """A connection to a trajsearch server. Use as a context manager or call :meth:`close`."""

    def __init__(
        self,
        address: str | None = None,
        api_key: str | None = None,
        *,
        tls: bool = False,
        root_certificates: str | Path | None = None,
        client_cert: tuple[str | Path, str | Path] | None = None,
        timeout: float | None = 30.0,
        retries: int = 3,
        max_message_bytes: int | None = None,
        require_key: bool = True,
    ) -> None:
        """``require_key=False``: no key is needed to connect (``health``, whose status is no tenant's); a call
        that needs one is then refused here, as a missing key is without it."""
        self.address = address or os.environ.get(SERVER_ENV) or DEFAULT_ADDRESS
        target, url_tls = server_target(self.address.strip())
        key, source = (api_key, "api_key=") if api_key else (os.environ.get(API_KEY_ENV), f"${API_KEY_ENV}")
        self.api_key = _usable_key(key, source) if require_key or (key or "").strip() else ""
        self.timeout = timeout
        #: the most one request may carry: None, the server's own limit (``--max-message-mb``, learnt by ``add``)
        self.max_message_bytes = max_message_bytes
        self._server_limit: int | None = None
        options: list[tuple[str, Any]] = [
            # answers as large as the server sends (a GetTrace of the largest trace it keeps); requests bounded by
            # max_message_bytes, or by the server's limit, checked record by record in ``add``
            ("grpc.max_receive_message_length", max(max_message_bytes or 0, MAX_RESPONSE_BYTES)),
            ("grpc.max_send_message_length", max_message_bytes or MAX_RESPONSE_BYTES),
            # reconnect quickly after a server restart (gRPC's default backoff grows to 120 s)
            ("grpc.initial_reconnect_backoff_ms", 250),
            ("grpc.max_reconnect_backoff_ms", 5_000),
        ]
        if retries > 1:
            options += [("grpc.enable_retries", 1), ("grpc.service_config", json.dumps({"methodConfig": [{
                "name": [{"service": _SERVICE, "method": m} for m in _RETRIED],
                "retryPolicy": {"maxAttempts": retries, "initialBackoff": "0.1s", "maxBackoff": "1s",
                                "backoffMultiplier": 2, "retryableStatusCodes": ["UNAVAILABLE"]},
            }]}))]
        else:
            options.append(("grpc.enable_retries", 0))
        asks_tls = bool(tls or root_certificates or client_cert)
        if url_tls is False and asks_tls:  # http:// says plaintext; speaking TLS anyway would contradict it
            raise ValueError(f"server address {self.address!r} is plaintext (http://) but TLS was asked for (--ca, "
                             "$TRAJSEARCH_TLS_CA, a client certificate): write it https://HOST:PORT, or drop --ca")
        self.tls = bool(asks_tls or url_tls)
        if self.tls:
            root = Path(root_certificates).read_bytes() if root_certificates else None  # None: the system's roots
            key, chain = (Path(client_cert[1]).read_bytes(), Path(client_cert[0]).read_bytes()) if client_cert else (None, None)
            creds = grpc.ssl_channel_credentials(root_certificates=root, private_key=key, certificate_chain=chain)
            self.channel = grpc.secure_channel(target, creds, options=options)
        else:
            self.channel = grpc.insecure_channel(target, options=options)
        self.stub = pb2_grpc.TrajSearchStub(self.channel)
        self._health = health_pb2_grpc.HealthStub(self.channel)
        self._tenant: str | None = None

    # -- plumbing ----------------------------------------------------------------------------

    def close(self) -> None:
        self.channel.close()

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _invoke(self, method: str, request: Any, timeout: float | None = None) -> Any:
        if not self.api_key:  # a client made for health alone
            raise ValueError(NO_KEY)
        request_id = uuid.uuid4().hex
        metadata = (("authorization", f"Bearer {self.api_key}"), ("x-request-id", request_id))
        try:
            return getattr(self.stub, method)(request, timeout=timeout or self.timeout, metadata=metadata)
        except grpc.RpcError as exc:
            error = _error(exc, request_id, self.tls, method=method, address=self.address)
            said = exc.details() if hasattr(exc, "details") else ""
        if isinstance(error, Unimplemented) and method in ADDED_SINCE_FIRST_RELEASE and not self._serves_trajsearch():
            error = Unimplemented(error.code, lacking_call(method, self.address, said or "", trajsearch=False),
                                  request_id)
        raise error

    def _serves_trajsearch(self, *, unsure: bool = True) -> bool:
        """Whether the server has a call every trajsearch server has: grpcio's and grpc-java's words for a call a
        server lacks are the same whether it is an older trajsearch or another gRPC service.

        Every trajsearch server (from its first release) sends back the ``x-request-id`` of each call it answers, a
        refused key too, so an answer with it is trajsearch's. Another answer (a timeout, a refusal without it: an
        auth gateway in front of another gRPC service refuses every call ``UNAUTHENTICATED``) says neither, and
        counts as ``unsure``: "an older trajsearch" for a call it lacks, but not "a trajsearch server starting" for
        ``health``, which sent an operator to wait on a server that was never trajsearch's."""
        request_id = uuid.uuid4().hex
        metadata = (("authorization", f"Bearer {self.api_key}"), ("x-request-id", request_id))
        try:
            getattr(self.stub, _EVERY_SERVER_HAS)(pb2.WhoAmIRequest(), timeout=min(self.timeout or 10.0, 10.0),
                                                  metadata=metadata)
            return True
        except grpc.RpcError as exc:
            if exc.code() == grpc.StatusCode.UNIMPLEMENTED:
                return False
            said = exc.initial_metadata() if hasattr(exc, "initial_metadata") else None
            return True if dict(said or ()).get("x-request-id") == request_id else unsure

    def _check_tenant(self, tenant: str | None) -> None:
        """Library-style ``tenant=`` is allowed only if it names the key's own tenant."""
        if tenant is None:
            return
        if self._tenant is None:
            self._tenant = self.whoami()["tenant"]
        if tenant != self._tenant:
            raise PermissionError(f"this API key belongs to tenant {self._tenant!r}, not {tenant!r}")

    def health(self, timeout: float = 5.0) -> str:
        """``SERVING`` / ``NOT_SERVING`` from the standard gRPC health service (no key needed).

        A trajsearch server answers its calls a moment before it sets its health status (its start-up: the web
        pages of ``serve --http``): no status from a server that answers them is waited for up to ``timeout``, then
        said to be a server starting. It was said to be "not a trajsearch server", sending an operator polling a
        restart to check an address that was right."""
        deadline, starting = time.monotonic() + timeout, None
        while True:
            try:
                reply = self._health.Check(health_pb2.HealthCheckRequest(service=_SERVICE),
                                           timeout=max(deadline - time.monotonic(), _HEALTH_POLL_S))
                return health_pb2.HealthCheckResponse.ServingStatus.Name(reply.status)
            except grpc.RpcError as exc:
                error = _error(exc, "", self.tls)
            if error.code != grpc.StatusCode.NOT_FOUND or not (
                    starting := starting or self._serves_trajsearch(unsure=False)):
                break
            if time.monotonic() + _HEALTH_POLL_S > deadline:
                raise Unavailable(grpc.StatusCode.UNAVAILABLE, (
                    f"the trajsearch server at {self.address} is starting: it answers calls but has not reported "
                    f"its health yet; try again in a moment"))
            time.sleep(_HEALTH_POLL_S)
        if error.code in (grpc.StatusCode.NOT_FOUND, grpc.StatusCode.UNIMPLEMENTED):  # said "NOT_FOUND: " alone
            # every trajsearch server has the health service, and its status from a moment after it starts
            why = (f"it has no health status for {_SERVICE}" if error.code == grpc.StatusCode.NOT_FOUND
                   else "it has no gRPC health service")
            error = type(error)(error.code, not_trajsearch(self.address, why + (f" [{error.details}]"
                                                                                 if error.details else "")))
        raise error

    def wait_ready(self, timeout: float = 30.0) -> None:
        """Block until the channel connects (e.g. while the server starts)."""
        grpc.channel_ready_future(self.channel).result(timeout=timeout)

    # -- reads -------------------------------------------------------------------------------

    def search(self, text: str, *, tenant: str | None = None, timeout: float | None = None,
               **options: Any) -> list[Hit]:
        """:meth:`TrajSearch.search <trajsearch.search.TrajSearch.search>` on the server (its keywords)."""
        self._check_tenant(tenant)
        request = _request(pb2.SearchRequest, "search", _SEARCH, options, text=text)
        return [convert.hit_from_pb(h) for h in self._invoke("Search", request, timeout).hits]

    def similar_runs(self, trajectory_id: str | None = None, text: str | None = None, *, tenant: str | None = None,
                     timeout: float | None = None, **options: Any) -> list[RunMatch]:
        """:meth:`TrajSearch.similar_runs <trajsearch.search.TrajSearch.similar_runs>` on the server (its keywords)."""
        self._check_tenant(tenant)
        if (trajectory_id is None) == (text is None):
            raise ValueError("give exactly one of trajectory_id or text")
        anchor = {"trajectory_id": trajectory_id} if trajectory_id is not None else {"text": text}
        request = _request(pb2.SimilarRunsRequest, "similar_runs", _SIMILAR, options, **anchor)
        return [convert.match_from_pb(m) for m in self._invoke("SimilarRuns", request, timeout).matches]

    def expand(self, hit: Hit, *, before: int = 2, after: int = 2, tenant: str | None = None,
               timeout: float | None = None) -> list[StepView]:
        self._check_tenant(tenant)
        request = pb2.ExpandRequest(trajectory_id=hit.trajectory_id, step_index=hit.step_index,
                                    step_end=hit.step_end, before=before, after=after)
        if hit.step_index < 0:
            raise ValueError(f"a {hit.level} hit has no step position to expand around")
        return [convert.step_from_pb(s) for s in self._invoke("Expand", request, timeout).steps]

    def run(self, trajectory_id: str, *, tenant: str | None = None, level: str = "task",
            timeout: float | None = None) -> Hit | None:
        self._check_tenant(tenant)
        reply = self._invoke("Run", pb2.RunRequest(trajectory_id=trajectory_id, level=level), timeout)
        return convert.hit_from_pb(reply.hit) if reply.found else None

    def get_trace(self, trace_uri: str, *, tenant: str | None = None, timeout: float | None = None) -> Trajectory:
        self._check_tenant(tenant)
        reply = self._invoke("GetTrace", pb2.GetTraceRequest(trace_uri=trace_uri), timeout)
        return Trajectory.model_validate_json(reply.trajectory_json, context=STORED)  # a stored run, as the server read it

    def stats(self, *, tenant: str | None = None, timeout: float | None = None) -> dict[str, Any]:
        if tenant is not None:
            self._check_tenant(tenant)
        reply = self._invoke("Stats", pb2.StatsRequest(), timeout)
        self._tenant = reply.tenant
        built = {"lexical": reply.lexical, "window": {"size": reply.window_size, "stride": reply.window_stride}}
        return {  # the fields of TrajSearch.stats but its uri (the server's own store, not the caller's)
            "tenant": reply.tenant,
            "embedder": reply.embedder,
            **(built if reply.window_size else {}),  # an older server's answer has no such fields
            "trajectories": reply.trajectories,
            "rows": reply.rows,
            "rows_by_level": dict(reply.rows_by_level),
            "runs_by_outcome": dict(reply.runs_by_outcome),
        }

    def whoami(self, timeout: float | None = None) -> dict[str, str]:
        """The key's tenant, role and label."""
        reply = self._invoke("WhoAmI", pb2.WhoAmIRequest(), timeout)
        self._tenant = reply.tenant
        self._server_limit = reply.max_message_bytes  # 0: a server older than the field
        return {"tenant": reply.tenant, "role": reply.role, "key_id": reply.key_id}

    def metrics(self, timeout: float | None = None) -> dict[str, Any]:
        """Per-method counters of this key's tenant (calls, errors, codes, p50/p99/mean ms), in flight, uptime."""
        reply = self._invoke("Metrics", pb2.MetricsRequest(), timeout)
        return {
            "methods": {
                m.method: {"calls": m.calls, "errors": m.errors, "codes": dict(m.codes),
                           "p50_ms": m.p50_ms, "p99_ms": m.p99_ms, "mean_ms": m.mean_ms}
                for m in reply.methods
            },
            "in_flight": reply.in_flight,
            "uptime_s": reply.uptime_s,
        }

    def failures(self, *, tenant: str | None = None, timeout: float | None = None, **options: Any) -> FailureReport:
        """The key's tenant's failure modes: :func:`trajsearch.failures.failure_modes`'s keywords, on the server."""
        self._check_tenant(tenant)
        request = _request(pb2.FailuresRequest, "failures", _FAILURES, options)
        if timeout is None and self.timeout is not None:
            timeout = max(self.timeout, 120.0)  # an analysis of a large tenant takes tens of seconds
        return convert.failure_report_from_pb(self._invoke("Failures", request, timeout))

    # -- agent runtime -----------------------------------------------------------------------

    def exemplars(self, task: str, *, k: int = 0, token_budget: int = 0, timeout: float | None = None,
                  **context: Any) -> ContextResult:
        """Successful past runs to adapt; the tenant is the key's, ``context`` your runtime (:func:`_context`)."""
        request = pb2.ExemplarsRequest(task=task, k=k, token_budget=token_budget, context=_context(**context))
        return _context_result(self._invoke("Exemplars", request, timeout), "exemplars")

    def warnings(self, text: str, *, k: int = 0, token_budget: int = 0, timeout: float | None = None,
                 **context: Any) -> ContextResult:
        """Similar failed runs (what not to do), with error / cause / fix where recorded; ``context`` as exemplars."""
        request = pb2.WarningsRequest(text=text, k=k, token_budget=token_budget, context=_context(**context))
        return _context_result(self._invoke("Warnings", request, timeout), "warnings")

    def search_past_runs(self, query: str, *, session_id: str, k: int = 0, kind: str = "",
                         env_version: str | Sequence[str] = (), policy_version: str | Sequence[str] = (),
                         tools_available: Sequence[str] = (), timeout: float | None = None) -> dict[str, Any]:
        """The ``search_past_runs`` tool; the server caps searches per (key, ``session_id``)."""
        request = pb2.SearchPastRunsRequest(
            session_id=session_id, query=query, k=k, kind=kind,
            context=_context(env_version=env_version, policy_version=policy_version, tools_available=tools_available),
        )
        return json.loads(self._invoke("SearchPastRuns", request, timeout).result_json)

    # -- writes ------------------------------------------------------------------------------

    def add(self, items: Iterable[Any], *, batch_size: int = 64, batch_bytes: int = 4 * 1024 * 1024,
            source: str = "", timeout: float | None = None,
            report: RemoteIngestReport | None = None) -> RemoteIngestReport:
        """Stream trajectories (models, dicts, JSON strings, or parsed dump records) in batches.

        Returns counts like :meth:`TrajSearch.add` plus one result per record sent (``position`` counts every
        record sent by this call). Records that fail to parse locally (``Parsed`` with an error) are reported
        without being sent. A stream carries at most :data:`~.validate.MAX_STREAM_RECORDS` records, the server's
        bound: past it the rest go in another stream, so no number of runs is too many for one call.

        ``timeout`` bounds each batch, not the call: the most the server may take to take the next batch in (and
        to answer after the last), default the larger of the client's timeout and :data:`INGEST_STALL_S`
        (``Client(timeout=None)``: no bound). A deadline on the whole stream ended every ingest longer than it
        however well it went (``ingest --server`` gave each stream an hour: about 9,000 SWE-agent runs written
        on CPU, and each rerun got an hour further), while a server that stopped reading went unnoticed for as
        long. Time spent reading ``items`` here is not the server's and does not count; a batch waiting for the
        input's next run is sent after :data:`FLUSH_AFTER_S` as it is, and an input that yields nothing for longer
        than the server's ``--ingest-idle`` (10 minutes by default) has its stream ended by the server.

        ``report``: the caller's, filled as the call goes, so that a call that raises (the server gone mid-stream,
        the user's Ctrl-C) leaves what was known by then: the records refused here (unparsed, too large) and the
        answers of the streams that ended. ``ingest --server`` had lost its oversize runs from --dead-letter so.
        """
        report = RemoteIngestReport() if report is None else report
        limit = self.request_limit(timeout)
        # where each record sent was read (file, position, format), by its position in the call (the server's answer
        # has it): a rejection the server makes is said where the record lies, as one made here is
        sources: list[tuple[str, str | None, str | None]] = []
        records = self._records(items, source, limit, report, sources)
        offset, first = 0, True
        call_id = uuid.uuid4().hex  # the server counts a run once across this call's streams
        while True:
            head = next(records, None)
            if head is None and not first:
                return report
            sent = [0]
            stream = itertools.chain([head] if head is not None else [],
                                     itertools.islice(records, MAX_STREAM_RECORDS - 1))
            batches = self._batches(stream, batch_size, min(batch_bytes, limit), sent)
            self._ingest_stream(batches, offset, report, self._stall_bound(timeout), sources, call_id)
            offset, first = offset + sent[0], False
            if head is None or sent[0] < MAX_STREAM_RECORDS:
                return report

    def _records(self, items: Iterable[Any], source: str, limit: int, report: IngestReport,
                 sources: list[tuple[str, str | None, str | None]]) -> Iterator[Any]:
        """The records to send for ``items``: those refused here (unparsed, too large) are ``report``'s rejections;
        ``sources`` gets where each record sent was read from: its file, its position there and its format (None
        where the caller passed plain records), so that the server's rejections are said as the file's own."""
        for n, item in enumerate(items):
            record = _record(item, source, report)
            if record is None or self._oversized(record.ByteSize() + _FRAMING, limit, item, record, n, report):
                continue
            sources.append((str(getattr(item, "source", None) or source or "the stream"),
                            getattr(item, "position", None), getattr(item, "fmt", None)))
            yield record

    @staticmethod
    def _batches(records: Iterable[Any], batch_size: int, batch_bytes: int, sent: list[int]) -> Iterator[Any]:
        """``records`` as IngestBatch messages of at most ``batch_size`` records and ``batch_bytes`` (or those that
        came in :data:`FLUSH_AFTER_S`); ``sent[0]`` counts the records handed to gRPC."""
        batch: list[Any] = []
        size, started = 0, time.monotonic()
        for record in records:
            record_size = record.ByteSize() + _FRAMING
            if batch and (len(batch) >= batch_size or size + record_size > batch_bytes
                          or time.monotonic() - started > FLUSH_AFTER_S):
                yield pb2.IngestBatch(records=batch)
                batch, size = [], 0
            if not batch:
                started = time.monotonic()
            batch.append(record)
            size += record_size
            sent[0] += 1
        if batch:
            yield pb2.IngestBatch(records=batch)

    def _stall_bound(self, timeout: float | None) -> float | None:
        """The most the server may take over one batch of an Ingest stream (see :meth:`add`)."""
        if timeout is not None:
            return timeout
        return None if self.timeout is None else max(self.timeout, INGEST_STALL_S)

    def _ingest_stream(self, batches: Iterator[Any], offset: int, report: RemoteIngestReport,
                       stall: float | None, sources: list[tuple[str, str | None, str | None]],
                       call_id: str) -> None:
        """One Ingest stream of ``batches``; its answer added to ``report``, positions after ``offset`` records
        (``sources``: the file of each record sent, by position; ``call_id``: the :meth:`add` call it is part of).

        The stream has no deadline of its own: it is cancelled once the server has taken no batch for ``stall``
        seconds (gRPC takes the next batch once its flow-control window has room, which the server makes by reading
        one), or has not answered after the last in ``stall`` seconds for each batch that may still be unread then
        (:data:`IN_FLIGHT_BYTES`)."""
        request_id = uuid.uuid4().hex
        metadata = (("authorization", f"Bearer {self.api_key}"), ("x-request-id", request_id),
                    (INGEST_CALL_HEADER, call_id))
        progress = _Progress(batches)
        call = self.stub.Ingest.future(iter(progress), metadata=metadata)
        try:
            while True:
                try:
                    reply = call.result(timeout=None if stall is None else min(1.0, stall / 4))
                    break
                except grpc.FutureTimeoutError:
                    if stall is not None and progress.waited() > stall * progress.unread():
                        call.cancel()
                        raise DeadlineExceeded(grpc.StatusCode.DEADLINE_EXCEEDED, (
                            f"the server took no batch of the Ingest stream for {stall:g} s (hung, or the network "
                            "to it is gone): the stream was cancelled; the batches it took before are committed"),
                            request_id) from None
        except grpc.RpcError as exc:
            raise _error(exc, request_id, self.tls, method="Ingest", address=self.address) from None
        except BaseException:  # Ctrl-C, SIGTERM's SystemExit: the call must not go on sending behind the caller
            call.cancel()
            raise
        report.ingested += reply.ingested
        report.unchanged += reply.unchanged
        report.rows += reply.rows_written
        report.verdicts_kept += reply.verdicts_kept
        report.superseded += reply.superseded
        for r in reply.results:
            status = pb2.RecordResult.Status.Name(r.status).lower()
            report.results.append({"position": offset + r.position, "source": r.source,
                                   "trajectory_id": r.trajectory_id, "status": status, "reason": r.reason})
            if r.status == pb2.RecordResult.REJECTED:
                report.rejected.append(_server_rejection(r, offset, sources))
            elif r.reason == OTHER_RUN_REPLACED:
                at = offset + r.position
                now = sources[at][0] if 0 <= at < len(sources) else r.source or "the stream"
                report.note_other_runs([(r.trajectory_id, None, now)])
        # the server counts a run once however many copies a stream held: the other accepted copies were
        # replaced by a later one (the reply has no field of its own for them)
        accepted = sum(1 for r in reply.results if r.status == pb2.RecordResult.ACCEPTED)
        report.replaced += max(0, accepted - reply.ingested - reply.unchanged)

    def request_limit(self, timeout: float | None = None) -> int:
        """The most one request may carry: the server's ``--max-message-mb`` (asked once, by ``WhoAmI``; an older
        server that does not say is taken at the default 32 MiB), or ``max_message_bytes`` if that is smaller."""
        if self._server_limit is None:
            self.whoami(timeout)
        server = self._server_limit or _DEFAULT_MESSAGE_BYTES
        return min(server, self.max_message_bytes or server)

    def _oversized(self, size: int, limit: int, item: Any, record: Any, n: int, report: IngestReport) -> bool:
        """Whether a record of ``size`` bytes is over ``limit``, and if so its rejection in ``report``.

        Sent anyway, the client's gRPC refuses it (``RESOURCE_EXHAUSTED: CLIENT: Sent message larger than max``),
        or the server's (``... SERVER: Received message larger than max``), and either ends the whole stream: one
        run of 40 MB stopped ``ingest --server`` of a dump, leaving every run after it unread. The limit is the
        server's (see :meth:`request_limit`): checking the client's own 32 MiB let a run under it end the stream
        of a server given a smaller ``--max-message-mb``. It is that run's rejection instead, and the stream
        goes on."""
        if size <= limit:
            return False
        where = (item.source, item.position) if hasattr(item, "position") else (record.source or "stream", f"record {n}")
        remedy = ("raise Client max_message_bytes" if self.max_message_bytes and self.max_message_bytes < (
            self._server_limit or _DEFAULT_MESSAGE_BYTES) else "raise the server's --max-message-mb")
        report.rejected.append(Rejection(*where, (
            f"the run is {size / 2**20:.1f} MiB as JSON, over the {_mib(limit)} MiB a message to the server may "
            f"carry: ingest it on the server's host (an ingest of its store takes runs up to "
            f"{MAX_TRACE_BYTES // 2**20} MiB), or {remedy}"), getattr(item, "fmt", None)))
        return True

    def delete(self, trajectory_id: str, *, tenant: str | None = None, timeout: float | None = None) -> bool:
        self._check_tenant(tenant)
        return self._invoke("Delete", pb2.DeleteRequest(trajectory_id=trajectory_id), timeout).deleted


class _Progress:
    """An Ingest stream's batches, timing the server: :meth:`waited` is how long gRPC has been sending the batch
    it took last (it asks for the next one once its window has room), or waiting for the answer after the last;
    :meth:`unread` how many batches the server may not have read by then. Time spent making a batch (reading and
    parsing the caller's input) is not the server's: it does not count."""

    def __init__(self, batches: Iterator[Any]) -> None:
        self.batches = batches
        self.since = time.monotonic()
        self.making = False
        self.done = False
        self.sizes: list[int] = []  # of the batches taken, in bytes

    def __iter__(self) -> Iterator[Any]:
        while True:
            self.making = True
            try:
                batch = next(self.batches)
            except StopIteration:
                self.done = True
                return
            finally:
                self.since, self.making = time.monotonic(), False
            self.sizes.append(batch.ByteSize())
            yield batch

    def waited(self) -> float:
        return 0.0 if self.making else time.monotonic() - self.since

    def unread(self) -> int:
        """1 while batches are still being taken; after the last, the last batches that fit in gRPC's window."""
        if not self.done:
            return 1
        count, held = 0, 0
        for size in reversed(self.sizes):
            held += size
            if count and held > IN_FLIGHT_BYTES:
                break
            count += 1
        return max(1, count)


def _mib(size: int) -> str:
    """``size`` bytes in MiB as a limit is written (32, 0.5)."""
    return f"{size / 2**20:.1f}".removesuffix(".0")


def _list(value: str | Sequence[str]) -> list[str]:
    return [value] if isinstance(value, str) else list(value)


def _as_is(value: Any) -> Any:
    return value


def _counted(name: str, top: int, note: str = "") -> Callable[[Any], int]:
    """The writer of a count the library takes from 1 (``k``, ``group_size``), checked as the library checks it
    (:func:`~trajsearch.bounds.check_count`, the same words): on the wire 0 asks for the server's default, so
    ``search -k 0`` over --server answered 10 hits where the embedded store refused it."""
    return lambda value: check_count(name, value, top, note)


def _limit(limit: Any) -> int:
    """``failures``' ``limit`` as sent: None (every mode) is the most a server returns; a count is checked as the
    library checks it (0 was sent as the server's "every mode" where the library refuses it)."""
    return MAX_MODES if limit is None else check_count("limit", limit, MAX_MODES, " (or None)")


def _examples(value: Any) -> int:
    """``failures``' ``examples`` as sent: from 1 (on the wire 0 asks for the server's default of 3)."""
    return check_count("examples", value, MAX_EXAMPLES, " over the service")


# The read verbs' keywords, as the library's signatures name them, and the request field each travels in
# (written so). The library's signatures are the reference, names and defaults: a keyword left out is not
# sent, and the server answers with the library's default.
_Keywords = dict[str, tuple[str, Callable[[Any], Any]]]
_FILTERS: _Keywords = {
    "levels": ("levels", _list), "outcome": ("outcomes", _list), "env_version": ("env_versions", _list),
    "policy_version": ("policy_versions", _list), "task_family": ("task_families", _list), "tools": ("tools", _list),
}
_SEARCH: _Keywords = {
    **_FILTERS, "exclude_trajectory_ids": ("exclude_trajectory_ids", list),
    "k": ("k", _counted("k", MAX_K, SERVER_K_NOTE)), "group_by_trajectory": ("no_group", operator.not_),
    "group_size": ("group_size", _counted("group_size", MAX_GROUP_SIZE)),
    "mode": ("mode", _as_is), "created_after": ("created_after", _as_is),  # None: unset, any time
}
_SIMILAR: _Keywords = {name: _SEARCH[name] for name in ("k", "outcome", "env_version", "policy_version", "mode",
                                                        "created_after")}
_FAILURES: _Keywords = {
    **{name: _FILTERS[name] for name in ("env_version", "policy_version", "tools", "outcome")},
    "model": ("models", _list),
    "since": ("since_seconds", lambda since: parse_duration(since) if since is not None else 0),
    "until": ("until", lambda until: parse_time(until) or 0),
    "limit": ("limit", _limit),
    "examples": ("examples", _examples),
}


def _request(message: Any, verb: str, fields: _Keywords, options: dict[str, Any], **values: Any) -> Any:
    """A request ``message`` of ``verb``'s keyword ``options`` (see the tables above) and ``values``."""
    for name, value in options.items():
        if name not in fields:
            raise TypeError(f"{verb}() got an unexpected keyword argument {name!r}")
        field_name, write = fields[name]
        values[field_name] = write(value)
    return message(**values)


def _context(*, env_version: str | Sequence[str] = (), policy_version: str | Sequence[str] = (),
             tools_available: Sequence[str] = (), now: datetime | None = None) -> Any:
    """The runtime context the agent-runtime verbs take as keywords (the tenant is the key's), as sent."""
    return pb2.RuntimeContext(env_versions=_list(env_version), policy_versions=_list(policy_version),
                              tools_available=list(tools_available), now=int(now.timestamp()) if now else 0)


def _context_result(reply: Any, call: str) -> ContextResult:
    """An ``Exemplars`` or ``Warnings`` (``call``) reply as ``Runtime.advice`` returns it."""
    items = []
    for item in reply.items:
        p = item.provenance
        items.append({  # the provenance's keys in the runtime's order (``advice._Provenance``, then the outcome):
            # ``exemplars --json`` over --server wrote them in another order than the embedded store's
            "kind": item.kind or _item_kind(call, p.outcome),
            "provenance": {"trajectory_id": p.trajectory_id, "trace_uri": p.trace_uri, "env_version": p.env_version,
                           "similarity": p.similarity, "outcome": p.outcome},
            "text": item.text,
            "view": json.loads(item.json) if item.json else None,
        })
    said = _empty_context_said(reply.json) if not items else {}
    return ContextResult(reply.strategy, items, reply.text, reply.json, said.get("reason", ""), said.get("note", ""))


def _item_kind(call: str, outcome: str) -> str:
    """An item's kind where the server did not say it (a server from before ``ContextItem.kind``, which reads as ""):
    what the call and the item's outcome make it, as the server names it: an exemplar, a warning, or a ``Warnings``
    item of outcome ``success``, a recovery (the proto says so)."""
    from ..runtime.advice import Exemplar, FailureWarning, Recovery

    if call == "exemplars":
        return Exemplar.kind
    return Recovery.kind if outcome == "success" else FailureWarning.kind


def _empty_context_said(document: str) -> dict[str, str]:
    """The reason and note an empty context's JSON carries off the wire, ``{"reason", "note"}`` (decided by
    :func:`trajsearch.runtime.tool.why_empty`); a context whose runs the budget all left out (``{..., "omitted": N}``)
    as the embedded API says it (:func:`trajsearch.runtime.tool.budget_said`); {} for any other document (an older
    server's "")."""
    from ..runtime.tool import budget_said

    try:
        said = json.loads(document) if document else None
    except ValueError:
        return {}
    if isinstance(said, dict) and isinstance(said.get("omitted"), int) and said["omitted"] > 0:
        return dict(zip(("reason", "note"), budget_said(said["omitted"])))
    return said if isinstance(said, dict) and set(said) == {"reason", "note"} else {}


def _server_rejection(result: Any, offset: int, sources: list[tuple[str, str | None, str | None]]) -> Rejection:
    """A record the server rejected, said where it was read (its file's ``line N``, its format) when this call read
    it from a file: "record N", the stream's position, named no line of the file, and a dead-letter line had no
    format where a local ingest's had one. A record given without a position is still "record N"."""
    at = offset + result.position
    where, position, fmt = sources[at] if 0 <= at < len(sources) else (None, None, None)
    if position is None:
        return Rejection(result.source or "stream", f"record {at}", result.reason, fmt)
    return Rejection(where, position, result.reason, fmt)


def _record(item: Any, source: str, report: IngestReport) -> Any | None:
    if isinstance(item, Trajectory):
        return pb2.TrajectoryRecord(json=item.model_dump_json(), source=source)
    if isinstance(item, dict):
        return pb2.TrajectoryRecord(json=json.dumps(item, default=str), source=source)
    if isinstance(item, str):
        return pb2.TrajectoryRecord(json=item, source=source)
    if hasattr(item, "trajectory") and hasattr(item, "error"):  # ingest.read.Parsed
        if item.error is not None:
            report.rejected.append(Rejection(item.source, item.position, item.error, item.fmt))
            return None
        run = item.trajectory
        if INGESTED_FROM not in run.metadata and item.source:  # the server sees no file: say which (review ROP, 3)
            run = run.model_copy(update={"metadata": {**run.metadata, INGESTED_FROM: source_mark(str(item.source))}})
        return pb2.TrajectoryRecord(json=run.model_dump_json(), source=f"{item.source}:{item.position}")
    raise TypeError(f"cannot ingest a {type(item).__name__}: pass Trajectory, dict, JSON str or Parsed")

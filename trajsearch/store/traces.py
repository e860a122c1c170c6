"""The trace store: full trajectories in object storage, addressed by ``trace_uri``.

The search index keeps only a ``trace_uri`` per run; the long, noisy trajectory
lives here as gzip-compressed JSON. Two backends share one layout::

    file:///abs/root/<tenant>/<name>.json.gz
    s3://bucket/prefix/<tenant>/<name>.json.gz

``<name>`` is derived from the trajectory id (see :func:`trace_name`), so
re-putting a trajectory overwrites it in place. In a file store a tenant name
with capitals is a folder ``<tenant>~<hash>`` (:func:`tenant_folder`: case-
insensitive disks), a store's existing ``<tenant>`` folder kept.

URIs come back from the index and may be tampered with, so reading is strict:
a URI is accepted only if it is ``<store location>/<caller's tenant>/<well-formed
name>``. Anything else (another scheme, bucket or prefix, ``..`` in any
spelling, symlinks leading out of the tenant's directory, another tenant's
trace) raises :class:`TraceAccessError`. One allowance, for a store directory
that was moved or copied: an absolute ``file://`` URI under another root is
read by its ``<tenant>/<name>`` tail under *this* root (still the caller's
tenant only, never a file elsewhere), so the index's old URIs keep working.

Exceptions (all subclass :class:`TraceStoreError`):

* :class:`TraceAccessError` (also ``ValueError``): the URI is not one this
  store may serve to this tenant. A bad argument, so it is a ValueError, not
  an OSError that retry-on-I/O-error code would swallow.
* :class:`TraceNotFoundError` (also ``KeyError``): no trace at that URI.
* :class:`TraceCorruptError` (also ``ValueError``): the stored bytes are not
  gzip/JSON, fail validation, or hold a different trajectory than the URI names.
* :class:`TraceStoreError` itself: the storage failed (I/O error, S3 outage
  after retries, missing bucket); the message names the bucket/key or path.
"""

from __future__ import annotations

import contextlib
import errno
import gzip
import hashlib
import io
import logging
import os
import re
import socket
import time
import zlib
from pathlib import Path, PurePosixPath
from typing import Any, Callable, Protocol, runtime_checkable
from urllib.parse import SplitResult, unquote, urlsplit

from pydantic import ValidationError

from ..fsutil import atomic_write, own_private, pid_alive, private_dir
from ..model import STORED, Trajectory, valid_id, valid_tenant

log = logging.getLogger(__name__)

#: Largest decompressed trace we will read or write; guards against gzip bombs.
MAX_TRACE_BYTES = 256 * 1024 * 1024
SUFFIX = ".json.gz"
#: The file, in a file store's root, of its key for digests of dump files (see FileTraceStore.digest_key)
DIGEST_KEY = ".digest-key"
S3_ENDPOINT_ENV = "TRAJSEARCH_S3_ENDPOINT"
S3_TIMEOUT_ENV = "TRAJSEARCH_S3_TIMEOUT"
S3_ATTEMPTS_ENV = "TRAJSEARCH_S3_ATTEMPTS"
DEFAULT_S3_TIMEOUT = 4.0  # seconds to wait for each read of an answer
DEFAULT_S3_ATTEMPTS = 3  # in all, the first one included

_NAME_PREFIX_CHARS = 64
_HASH_HEX = 16
_NAME_RE = re.compile(rf"^[A-Za-z0-9][A-Za-z0-9_.-]{{0,{_NAME_PREFIX_CHARS - 1}}}-[0-9a-f]{{{_HASH_HEX}}}\.json\.gz$")
_UNSAFE_RE = re.compile(r"[^A-Za-z0-9_.-]")
_BUCKET_RE = re.compile(r"^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$")
_PREFIX_SEGMENT_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.=+@-]*$")


class TraceStoreError(Exception):
    """Base class; raised as-is when the underlying storage fails."""


class TraceAccessError(TraceStoreError, ValueError):
    """The URI is outside this store or belongs to another tenant."""


class TraceNotFoundError(TraceStoreError, KeyError):
    """No trace is stored at the URI."""

    def __init__(self, uri: str) -> None:
        super().__init__(uri)
        self.uri = uri

    def __str__(self) -> str:  # KeyError would repr() the message
        return f"no trace at {self.uri}"


class TraceCorruptError(TraceStoreError, ValueError):
    """The stored bytes are not a valid trace for the URI."""


class TraceStoreSetupError(TraceStoreError):
    """The store as configured cannot work (no such bucket, access refused, a read-only directory, a path that is a
    file): retrying, or rerunning, cannot help."""


#: Errors of a file trace store that no retry mends: the mount, the permissions or the path must change.
FILE_SETUP_ERRNOS = frozenset({errno.EROFS, errno.EACCES, errno.EPERM, errno.EEXIST, errno.ENOTDIR})

#: S3 error codes that no retry mends: the bucket, the credentials or the policy must change.
S3_SETUP_CODES = frozenset({"NoSuchBucket", "InvalidBucketName", "AccessDenied", "AllAccessDisabled",
                            "InvalidAccessKeyId", "SignatureDoesNotMatch", "AccountProblem"})


@runtime_checkable
class TraceStore(Protocol):
    """Where full trajectories live. ``location`` is what :func:`open_trace_store` accepts."""

    location: str

    def put(self, trajectory: Trajectory) -> str:
        """Store (or overwrite) ``trajectory``; return its ``trace_uri``."""
        ...

    def get(self, uri: str, *, tenant: str) -> Trajectory: ...

    def delete(self, uri: str, *, tenant: str) -> None:
        """Remove the trace; deleting a missing trace is not an error."""
        ...

    def exists(self, uri: str, *, tenant: str) -> bool: ...

    def uri_for(self, tenant: str, trajectory_id: str) -> str: ...


def trace_name(trajectory_id: str) -> str:
    """File/object name for a trajectory id: readable sanitised prefix + short hash.

    Ids may contain ``/`` and ``:``, so they are never used raw; the hash keeps
    ids that sanitise alike (``a/b`` vs ``a:b``) apart.
    """
    valid_id(trajectory_id)
    readable = _UNSAFE_RE.sub("_", trajectory_id)[:_NAME_PREFIX_CHARS]
    digest = hashlib.sha256(trajectory_id.encode()).hexdigest()[:_HASH_HEX]
    return f"{readable}-{digest}{SUFFIX}"


def encode_trace(trajectory: Trajectory) -> bytes:
    """Gzip JSON with a fixed mtime, so the same trajectory always gives the same bytes."""
    raw = trajectory.model_dump_json().encode()
    if len(raw) > MAX_TRACE_BYTES:
        raise TraceStoreError(
            f"trajectory {trajectory.trajectory_id!r} is {len(raw)} bytes as JSON, over {MAX_TRACE_BYTES}"
        )
    return gzip.compress(raw, compresslevel=6, mtime=0)


def decode_trace(data: bytes, uri: str, *, tenant: str, name: str) -> Trajectory:
    """Parse stored bytes, checking they hold the trajectory the URI names."""
    try:
        with gzip.GzipFile(fileobj=io.BytesIO(data)) as fh:
            raw = fh.read(MAX_TRACE_BYTES + 1)
    except (OSError, EOFError, zlib.error) as exc:
        raise TraceCorruptError(f"trace {uri} is not valid gzip: {exc}") from exc
    if len(raw) > MAX_TRACE_BYTES:
        raise TraceCorruptError(f"trace {uri} decompresses to more than {MAX_TRACE_BYTES} bytes")
    try:
        trajectory = Trajectory.model_validate_json(raw, context=STORED)  # today's ingest rules not applied again
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "<root>"
        raise TraceCorruptError(
            f"trace {uri} is not a valid trajectory ({exc.error_count()} error(s); {where}: {first['msg']})"
        ) from exc
    if trajectory.tenant != tenant or trace_name(trajectory.trajectory_id) != name:
        raise TraceCorruptError(
            f"trace {uri} holds trajectory {trajectory.trajectory_id!r} of tenant "
            f"{trajectory.tenant!r}, not the one its URI names"
        )
    return trajectory


def _split(uri: str) -> SplitResult:
    if not isinstance(uri, str):
        raise TraceAccessError(f"trace URI must be a string, got {type(uri).__name__}")
    try:
        parts = urlsplit(uri)
    except ValueError as exc:
        raise TraceAccessError(f"malformed trace URI {uri!r}: {exc}") from exc
    if parts.query or parts.fragment or "\x00" in uri:
        raise TraceAccessError(f"trace URI {uri!r} must not have a query, fragment or NUL")
    return parts


def tenant_folder(tenant: str) -> str:
    """The folder of a tenant's traces in a file store: its name, and for a name with capitals a hash of it too.

    Tenants differing only in case (``Acme``, ``acme``) shared one folder on a case-insensitive file system (macOS,
    Windows by default): one's trace of a run replaced the other's of the same id, and a delete of one removed the
    other's. No tenant name holds ``~``, so no tenant's folder is another's in any case. An S3 key is exact: the
    object stores keep ``<tenant>/``."""
    if tenant == tenant.lower():
        return tenant
    return hashed_folder(tenant)


def hashed_folder(tenant: str) -> str:
    """``<tenant>~<hash>``: a folder no other tenant's is in any case (what :func:`tenant_folder` gives a name with
    capitals, and a store gives a lowercase tenant whose bare name is another tenant's folder in another case)."""
    return f"{tenant}~{hashlib.sha256(tenant.encode()).hexdigest()[:12]}"


def _check_entry(uri: str, segments: list[str], tenant: str, location: str,
                 folders: tuple[str, ...] | None = None) -> tuple[str, str]:
    """Validate the ``<tenant>/<name>`` tail of a URI against the caller's tenant (whose traces are in one of
    ``folders``: by default the folder named as the tenant)."""
    if len(segments) != 2 or not _NAME_RE.match(segments[1]):
        raise TraceAccessError(
            f"{uri!r} is not a trace URI of {location} (expected {location}/<tenant>/<name>{SUFFIX})"
        )
    if segments[0] not in (folders or (tenant,)):
        if segments[0] == tenant:  # its bare name, only another tenant's folder in another case (FileTraceStore)
            raise TraceAccessError(f"trace URI {uri!r} names folder {tenant!r}, which in this store is another "
                                   f"tenant's in another case, not the folder of tenant {tenant!r}")
        raise TraceAccessError(f"trace URI {uri!r} belongs to tenant {segments[0]!r}, not {tenant!r}")
    return segments[0], segments[1]


class FileTraceStore:
    """Traces as files under ``root``; writes are atomic (temp file + ``os.replace``)."""

    def __init__(self, root: Path | str) -> None:
        self.root = Path(root).expanduser().resolve()
        self.location = self.root.as_uri()
        self._digest_key: bytes | None = None  # read (or made) once: see digest_key
        self._folders: dict[str, str] = {}  # tenant -> the folder its traces are written to (see _folder)
        self._bare: dict[str, str] = {}  # tenant -> whose its bare-named folder is, once that is settled (_bare_folder)

    def uri_for(self, tenant: str, trajectory_id: str) -> str:
        return (self.root / self._folder(valid_tenant(tenant)) / trace_name(trajectory_id)).as_uri()

    def _folder(self, tenant: str) -> str:
        """The folder ``tenant``'s traces are written to: :func:`tenant_folder`, unless this store already keeps them
        in a folder of the tenant's bare name (made by an earlier version), which is kept: its runs' URIs name it,
        and a re-ingest finds their traces there (not missing, written again elsewhere). A lowercase tenant whose
        bare name is only another tenant's folder in another case (``Acme/`` of an earlier version) writes to
        :func:`hashed_folder`: on a case-insensitive disk ``acme/`` is ``Acme/``, and acme's run replaced Acme's
        trace. Decided once per tenant."""
        folder = self._folders.get(tenant)
        if folder is None:
            bare = self._bare_folder(tenant)
            folder = tenant if bare == "own" else tenant_folder(tenant) if bare == "free" else hashed_folder(tenant)
            self._folders[tenant] = folder
        return folder

    def _bare_folder(self, tenant: str) -> str:
        """Whose the folder of ``tenant``'s bare name is, by the names in the root as they were made (a lookup by
        path is case-insensitive on such a disk, and would find another tenant's): ``"own"`` (that exact name is
        there), ``"other"`` (only a name differing from it in case is: another tenant's, on such a disk the same
        folder) or ``"free"`` (neither, or the root cannot be listed). Settled once per tenant, not listed on every
        trace read: a bare name of another case is made only by an earlier version, and "free" and "own" mean the
        same folders (a lowercase tenant's own is its bare name; another's is hashed, see :func:`tenant_folder`)."""
        if (settled := self._bare.get(tenant)) is not None:
            return settled
        try:
            names = os.listdir(self.root)
        except OSError:
            return "free"  # (not settled: the root may not exist yet)
        folded = tenant.casefold()
        whose = "own" if tenant in names else "other" if any(n.casefold() == folded for n in names) else "free"
        self._bare[tenant] = whose
        return whose

    def _folders_of(self, tenant: str) -> tuple[str, ...]:
        """Every folder ``tenant``'s traces may be in: its own, its hashed one, and its bare name where that is its
        own (a lowercase tenant's, or one an earlier version made), not where it is only another tenant's folder in
        another case (see :meth:`_bare_folder`): a tampered URI naming ``Acme/`` would reach, on a case-insensitive
        disk, ``acme``'s traces."""
        folders = dict.fromkeys((tenant_folder(tenant), hashed_folder(tenant), tenant))
        whose = self._bare_folder(tenant)
        if whose == "other" or (whose == "free" and tenant_folder(tenant) != tenant):  # no earlier version's folder
            del folders[tenant]
        return tuple(folders)

    def put(self, trajectory: Trajectory) -> str:
        data = encode_trace(trajectory)
        tenant_dir = self.root / self._folder(trajectory.tenant)
        path = tenant_dir / trace_name(trajectory.trajectory_id)
        try:
            private_dir(self.root)
            private_dir(tenant_dir)
            if tenant_dir.resolve() != tenant_dir:
                raise TraceAccessError(f"tenant directory {tenant_dir} leads outside the store (symlink?)")
            # The hidden temp name never matches _NAME_RE, so readers can't see a half-written file.
            atomic_write(path, data, sync_dir=True, tag=_writer_tag())
        except OSError as exc:
            if exc.errno in FILE_SETUP_ERRNOS:
                raise TraceStoreSetupError(self._setup_advice(exc)) from exc
            raise TraceStoreError(f"writing trace {path} failed: {exc}") from exc
        return path.as_uri()

    def _setup_advice(self, exc: OSError) -> str:
        """What a write error that no retry mends means and what mends it (probe G, G2: a read-only mount or a path
        that is a file was retried 4 times per run, then said to rerun). ``mkdir`` of a path that is a file fails
        EEXIST, and of a path under one ENOTDIR: the file in the way is named."""
        store, elsewhere = f"the trace store {self.root}", "point --traces (TRAJSEARCH_TRACES) at a writable directory"
        if exc.errno == errno.EROFS:
            return f"{store} is on a read-only filesystem ({exc}): remount it read-write, or {elsewhere}"
        if exc.errno in (errno.EACCES, errno.EPERM):
            return f"{store} is not writable by this user ({exc}): give this user write access, or {elsewhere}"
        path = Path(exc.filename or self.root)
        blocker = next((p for p in (path, *path.parents) if p.exists() and not p.is_dir()), path)
        what = "is a file, not a directory" if blocker == self.root else f"cannot hold traces: {blocker} is a file"
        return f"{store} {what} ({exc}): move that file, or {elsewhere}"

    def digest_key(self) -> bytes | None:
        """This store's secret for the digests of the operator's dump files that traces keep
        (``represent.stored_digest``): made once at random and kept in ``root/.digest-key`` (0600; no tenant's name
        starts with a dot), so that a tenant reading a trace cannot confirm a guessed path (probe 50, OP 3) while
        every writer of the store digests alike. Created whole or not at all (linked into place), so that two
        writers starting at once agree. None (digests unkeyed, as before) where it can be neither read nor made."""
        if self._digest_key is None:
            path = self.root / DIGEST_KEY
            try:
                if not path.is_file():
                    private_dir(self.root)
                    temporary = self.root / f".digest-key.{os.getpid()}.{time.monotonic_ns()}.tmp"
                    # 0600 from its creation: a mode set after the write leaves it to the umask (0644) for a while
                    fd = os.open(temporary, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600)
                    try:
                        with os.fdopen(fd, "wb") as out:
                            out.write(os.urandom(32))
                    except BaseException:
                        temporary.unlink(missing_ok=True)
                        raise
                    try:
                        os.link(temporary, path)
                    except FileExistsError:  # another writer's came first: that one is the store's
                        pass
                    finally:
                        temporary.unlink(missing_ok=True)
                with contextlib.suppress(OSError):  # (a read-only store's key is read as it is)
                    own_private(path, 0o600)  # one copied in, or made by an older version, under the umask (ROP 8)
                self._digest_key = path.read_bytes()[:64] or b""
            except OSError as exc:
                log.warning("the trace store's digest key %s cannot be read or made (%s): dump files are digested "
                            "without it", path, exc)
                self._digest_key = b""
        return self._digest_key or None

    def sweep_temporaries(self, tenant: str) -> int:
        """Remove the temp files that writers killed mid-write (``kill -9`` of ``ingest --workers``) left in
        ``tenant``'s directory; how many. A temp file names its writer (see :func:`_writer_tag`): one of this
        host whose process is gone is removed once two minutes old (a pid of another pid namespace under the same
        host name may be alive), and one without a name (older versions) once it is an hour old, far longer than
        any write. Nothing else ever removes them (probe G, G6)."""
        entries = []
        for folder in self._folders_of(valid_tenant(tenant)):
            try:
                entries += list(os.scandir(self.root / folder))
            except OSError:
                continue
        removed = 0
        for entry in entries:
            if entry.name.startswith(".") and entry.name.endswith(".tmp") and _abandoned(entry):
                try:
                    os.unlink(entry.path)
                    removed += 1
                except OSError:
                    continue
        return removed

    def get(self, uri: str, *, tenant: str) -> Trajectory:
        path = self._path(uri, tenant)
        try:
            data = path.read_bytes()
        except FileNotFoundError:
            raise TraceNotFoundError(uri) from None
        except PermissionError as exc:  # no retry mends it (review ROP, 5: read 4 times, 12 s a run, then given up)
            raise TraceStoreSetupError(f"trace {path} is not readable by this user ({exc}): give this user read "
                                       "access to the trace store") from exc
        except OSError as exc:
            raise TraceStoreError(f"reading trace {path} failed: {exc}") from exc
        return decode_trace(data, uri, tenant=tenant, name=path.name)

    def delete(self, uri: str, *, tenant: str) -> None:
        path = self._path(uri, tenant)
        try:
            path.unlink(missing_ok=True)
        except OSError as exc:
            raise TraceStoreError(f"deleting trace {path} failed: {exc}") from exc

    def exists(self, uri: str, *, tenant: str) -> bool:
        return self._path(uri, tenant).is_file()

    def _path(self, uri: str, tenant: str) -> Path:
        """Map a URI to a path inside ``root/<tenant>``, refusing anything else."""
        tenant = valid_tenant(tenant)
        parts = _split(uri)
        if parts.scheme != "file" or parts.netloc not in ("", "localhost"):
            raise TraceAccessError(f"{uri!r} is not a local file:// URI of {self.location}")
        decoded = unquote(parts.path)
        if {".", ".."} & set(decoded.split("/")) or "\x00" in decoded:
            raise TraceAccessError(f"trace URI {uri!r} contains path traversal")
        try:
            rel = PurePosixPath(decoded).relative_to(self.root)
        except ValueError:
            # A store directory that was moved or copied: its rows still name the old root. The
            # URI's <tenant>/<name> tail is the trace's key, looked up under this root only.
            moved = PurePosixPath(decoded)
            if not moved.is_absolute() or len(moved.parts) < 4:  # "/", a root, <tenant>, <name>
                raise TraceAccessError(f"trace URI {uri!r} is outside the store root {self.root}") from None
            rel = PurePosixPath(*moved.parts[-2:])
        folder, _ = _check_entry(uri, list(rel.parts), tenant, self.location, self._folders_of(tenant))
        path = self.root / rel
        # Symlinks may point anywhere, including another tenant's directory.
        if not path.resolve().is_relative_to(self.root / folder):
            raise TraceAccessError(f"trace URI {uri!r} resolves outside tenant {tenant!r}'s directory")
        return path


#: A tagged temp file's end: ``.<name>.w<8 hex of the host name>-<pid>-<mkstemp's random>.tmp``.
_TEMP_OWNER = re.compile(r"\.w(?P<host>[0-9a-f]{8})-(?P<pid>\d+)-[^.]+\.tmp$")
#: An untagged temp file older than this is abandoned.
UNTAGGED_TEMP_AGE_S = 3600.0
#: A tagged one of a dead process of this host, once older than this: far longer than any write, so that a live
#: writer with another pid namespace under the same host name (containers on the host's network) is never swept.
TAGGED_TEMP_AGE_S = 120.0


def _host_hash() -> str:
    return hashlib.blake2b(socket.gethostname().encode(), digest_size=4).hexdigest()


def _writer_tag() -> str:
    """This process, in a temp file's name: a container sharing the directory has a host name (and pids) of its own."""
    return f"w{_host_hash()}-{os.getpid()}-"


def _abandoned(entry: os.DirEntry) -> bool:
    """Whether a temp file's writer is gone: a tagged one of this host's dead process, or an untagged old one."""
    owner = _TEMP_OWNER.search(entry.name)
    try:
        age = time.time() - entry.stat(follow_symlinks=False).st_mtime
    except OSError:
        return False
    if owner is None:
        return age > UNTAGGED_TEMP_AGE_S
    return owner["host"] == _host_hash() and age > TAGGED_TEMP_AGE_S and not pid_alive(int(owner["pid"]))


class S3TraceStore:
    """Traces as objects in ``s3://bucket/prefix``.

    Every call is bounded: ``connect_timeout`` seconds to connect, ``timeout``
    seconds for each read of the answer, and at most ``attempts`` attempts in
    all (botocore's standard retry mode: throttling, 5xx, connection errors and
    timeouts are retried with jittered backoff). An endpoint that accepts
    connections and never answers therefore costs about ``attempts * timeout``
    seconds plus backoff (~15 s with the defaults; boto3's own defaults were
    60 s x 5), not forever. What still fails becomes a :class:`TraceStoreError`
    naming the bucket, key and cause. Defaults come from
    ``$TRAJSEARCH_S3_TIMEOUT`` / ``$TRAJSEARCH_S3_ATTEMPTS`` when set.

    The endpoint is ``endpoint_url``, else ``$TRAJSEARCH_S3_ENDPOINT``, else
    boto3's own default (which honours ``AWS_ENDPOINT_URL``). Pass ``client``
    to use a ready client (its own configuration then applies).
    """

    def __init__(
        self,
        bucket: str,
        prefix: str = "",
        *,
        endpoint_url: str | None = None,
        client: Any = None,
        attempts: int | None = None,
        timeout: float | None = None,
        connect_timeout: float = 2.0,
    ) -> None:
        if not isinstance(bucket, str) or not _BUCKET_RE.match(bucket) or ".." in bucket:
            raise ValueError(f"invalid S3 bucket name {bucket!r}")
        segments = [s for s in prefix.split("/") if s]
        for segment in segments:
            if not _PREFIX_SEGMENT_RE.match(segment) or segment in (".", ".."):
                raise ValueError(f"invalid S3 prefix {prefix!r}: bad segment {segment!r}")
        self.bucket = bucket
        self.prefix = "/".join(segments)
        self.location = f"s3://{bucket}/{self.prefix}" if self.prefix else f"s3://{bucket}"
        if client is None:
            import boto3
            from botocore.config import Config

            attempts = attempts if attempts is not None else _env_number(S3_ATTEMPTS_ENV, int, DEFAULT_S3_ATTEMPTS)
            timeout = timeout if timeout is not None else _env_number(S3_TIMEOUT_ENV, float, DEFAULT_S3_TIMEOUT)
            if attempts < 1 or timeout <= 0 or connect_timeout <= 0:
                raise ValueError("S3 attempts must be >= 1 and timeouts > 0")
            config = Config(
                retries={"total_max_attempts": attempts, "mode": "standard"},
                connect_timeout=min(connect_timeout, timeout),
                read_timeout=timeout,
                tcp_keepalive=True,
            )
            endpoint = endpoint_url or os.environ.get(S3_ENDPOINT_ENV) or None
            client = boto3.client("s3", endpoint_url=endpoint, config=config)
        self.client = client
        self._digest_key: bytes | None = None  # read (or made) once: see digest_key

    def uri_for(self, tenant: str, trajectory_id: str) -> str:
        return f"s3://{self.bucket}/{self._key(valid_tenant(tenant), trace_name(trajectory_id))}"

    def put(self, trajectory: Trajectory) -> str:
        key = self._key(trajectory.tenant, trace_name(trajectory.trajectory_id))
        body = encode_trace(trajectory)
        self._call("put_object", key, Body=body, ContentType="application/gzip")
        return f"s3://{self.bucket}/{key}"

    def get(self, uri: str, *, tenant: str) -> Trajectory:
        key = self._parse(uri, tenant)
        response = self._call("get_object", key, uri=uri)
        data = self._guard("get_object", key, lambda: response["Body"].read())
        return decode_trace(data, uri, tenant=tenant, name=key.rsplit("/", 1)[1])

    def delete(self, uri: str, *, tenant: str) -> None:
        self._call("delete_object", self._parse(uri, tenant))

    def exists(self, uri: str, *, tenant: str) -> bool:
        key = self._parse(uri, tenant)
        try:
            self._call("head_object", key, uri=uri)
        except TraceNotFoundError:
            return False  # note: a missing bucket also answers HEAD with a bare 404
        return True

    def digest_key(self) -> bytes | None:
        """This store's secret for digests of dump files, as :meth:`FileTraceStore.digest_key`'s: the object
        ``<prefix>/.digest-key`` (outside every tenant's folder), read, or made once if absent, where no other
        writer's was made first (``If-None-Match``; an S3 that ignores it may keep the last of two made at once: a
        digest written under the other then reads as another file's). A read refused is tried as a missing one: S3
        answers a missing object AccessDenied to a role without ``s3:ListBucket`` (review ROP, 2: the key was never
        made for such a writer). None where it can be neither read nor made."""
        if self._digest_key is None:
            key = f"{self.prefix}/{DIGEST_KEY}" if self.prefix else DIGEST_KEY
            uri = f"s3://{self.bucket}/{key}"

            def read() -> bytes:
                response = self._call("get_object", key, uri=uri)
                return self._guard("get_object", key, lambda: response["Body"].read(64))

            try:
                try:
                    self._digest_key = read()
                except (TraceNotFoundError, TraceStoreSetupError):  # a role that may not list reads none as refused
                    try:
                        self._call("put_object", key, Body=os.urandom(32), IfNoneMatch="*")
                    except TraceStoreError:  # (PreconditionFailed) another writer's came first: that one is the store's
                        pass
                    self._digest_key = read()
            except TraceStoreError as exc:
                log.warning("the trace store's digest key %s cannot be read or made (%s): dump files are digested "
                            "without it", uri, exc)
                self._digest_key = b""
        return self._digest_key or None

    def _key(self, tenant: str, name: str) -> str:
        return f"{self.prefix}/{tenant}/{name}" if self.prefix else f"{tenant}/{name}"

    def _parse(self, uri: str, tenant: str) -> str:
        """Return the object key for ``uri``, refusing anything outside this store/tenant."""
        tenant = valid_tenant(tenant)
        parts = _split(uri)
        if parts.scheme != "s3" or parts.netloc != self.bucket:
            raise TraceAccessError(f"{uri!r} is not in this store's bucket ({self.location})")
        key = parts.path[1:]
        head = f"{self.prefix}/" if self.prefix else ""
        if not key.startswith(head):
            raise TraceAccessError(f"{uri!r} is outside this store's prefix ({self.location})")
        _check_entry(uri, key[len(head):].split("/"), tenant, self.location)
        return key

    def _setup_advice(self, code: str, message: str, op: str, key: str, read: bool) -> str:
        """What a setup error means and what mends it (probe G, G2: a missing bucket said to rerun), with the call
        that met it. S3 answers a read of a missing object AccessDenied where the policy allows no listing: a
        read says so (review 3, D6: a missing trace had read as a credentials problem)."""
        at, call = _s3_endpoint(self.client), f"S3 {op} on s3://{self.bucket}/{key}"
        if code in ("NoSuchBucket", "InvalidBucketName"):
            return (f"{call}: bucket {self.bucket} does not exist at {at} ({code}): create it, or point --traces "
                    f"(TRAJSEARCH_TRACES) at a bucket that exists")
        missing = " (or the object is missing: S3 answers so where the policy allows no listing)" if read else ""
        return (f"{call}: access refused at {at} ({code}: {message}){missing}: check the credentials "
                "(AWS_ACCESS_KEY_ID, AWS_PROFILE) and the bucket's policy, or point --traces (TRAJSEARCH_TRACES) "
                "elsewhere")

    def _call(self, op: str, key: str, uri: str | None = None, **kwargs: Any) -> Any:
        return self._guard(op, key, lambda: getattr(self.client, op)(Bucket=self.bucket, Key=key, **kwargs), uri)

    def _guard(self, op: str, key: str, fn: Callable[[], Any], uri: str | None = None) -> Any:
        """Run one S3 call, translating botocore failures into this module's errors."""
        from botocore.exceptions import BotoCoreError, ClientError

        try:
            return fn()
        except ClientError as exc:
            error = exc.response.get("Error", {})
            code = str(error.get("Code", ""))
            if uri is not None and code in ("NoSuchKey", "404", "NotFound"):
                raise TraceNotFoundError(uri) from None
            message = error.get("Message") or exc
            if code in S3_SETUP_CODES:
                raise TraceStoreSetupError(self._setup_advice(code, str(message), op, key, uri is not None)) from exc
            raise TraceStoreError(f"S3 {op} on s3://{self.bucket}/{key} failed: {code} {message}") from exc
        except (BotoCoreError, OSError) as exc:
            raise TraceStoreError(f"S3 {op} on s3://{self.bucket}/{key} failed: {exc}") from exc


def _s3_endpoint(client: Any) -> str:
    return str(getattr(getattr(client, "meta", None), "endpoint_url", "") or "S3")


def _env_number(name: str, kind: type, default: Any) -> Any:
    raw = os.environ.get(name, "").strip()
    if not raw:
        return default
    try:
        value = kind(raw)
    except ValueError:
        raise ValueError(f"${name} must be a number, got {raw!r}") from None
    if value <= 0:
        raise ValueError(f"${name} must be positive, got {raw!r}")
    return value


def open_trace_store(location: str) -> TraceStore:
    """Open a store from config: a plain path or ``file:///abs/path``, or ``s3://bucket/prefix``."""
    if not isinstance(location, str) or not location.strip():
        raise ValueError("trace store location is empty; expected a path, file:///abs/path or s3://bucket/prefix")
    if "://" not in location:
        return FileTraceStore(Path(location))
    parts = urlsplit(location)
    scheme = parts.scheme.lower()
    if parts.query or parts.fragment:
        raise ValueError(f"trace store location {location!r} must not have a query or fragment")
    if scheme == "file":
        path = unquote(parts.path)
        if parts.netloc not in ("", "localhost") or not path.startswith("/"):
            raise ValueError(f"trace store location {location!r} must be file:///absolute/path")
        return FileTraceStore(Path(path))
    if scheme == "s3":
        if not parts.netloc:
            raise ValueError(f"trace store location {location!r} has no bucket; expected s3://bucket/prefix")
        return S3TraceStore(parts.netloc, parts.path)
    raise ValueError(
        f"unsupported trace store location {location!r}: expected a path, file:///abs/path or s3://bucket/prefix"
    )

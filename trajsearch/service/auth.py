"""API keys: each maps to exactly one tenant and one role; only their hashes are stored.

A key is ``ts_`` followed by 32 random bytes (urlsafe base64), so a plain
SHA-256 of it is a safe verifier (there is nothing to brute-force; a slow
password hash would only slow every call). Keys are read from a TOML or
JSON file (``--keys`` / ``TRAJSEARCH_KEYS_FILE``) or from JSON in
``TRAJSEARCH_KEYS``::

    [[keys]]
    id = "acme-agents"          # a label for logs; never the key itself
    sha256 = "9f2c..."          # trajsearch keys new prints it
    tenant = "acme"
    role = "read"               # read | write (write may also read)
    env_versions = ["v2"]       # optional: pinned (see below)

The tenant of every call is the key's. Requests carry no tenant, and an
ingested record naming another tenant is rejected.

A key file is read again when it changes (checked at most once a second, on
a call): a key appended by ``trajsearch keys new --append`` works at once and
a removed one is refused from its next call, so a rotation needs no restart
(which would drain every call and sign every web page out). A file that no
longer loads (saved half-way, a typo) leaves the keys as they were, and says so
in the log, and is read again at the next look (made readable by a ``chown``, it
is read at once). A file that holds no key (``keys = []``), still so at the
next look, or one gone for ``GONE_AFTER_S``, lets no key in: that is how an
operator revokes every key at once. An empty file never does: it is a save under
way (a secret manager's CLI writing the file empties it first). The server still refuses to *start* without keys.

Pinned versions (``env_versions`` / ``policy_versions``) bound everything the
key sees, not only its searches: they are ANDed into every search, and a run
outside them does not exist for the key when read by id (``Run``,
``Expand``, ``SimilarRuns``, ``GetTrace``), counted (``Stats``), deleted or
written (``Ingest`` rejects a record outside them, and one whose id names a
stored run outside them, which writing would replace).
"""

from __future__ import annotations

import base64
import hashlib
import json
import logging
import os
import secrets
import threading
import time
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping

from ..model import valid_tenant

KEYS_FILE_ENV = "TRAJSEARCH_KEYS_FILE"
KEYS_ENV = "TRAJSEARCH_KEYS"
#: How a key is made, said where none is configured: a first ``serve`` refused "no API keys configured" and left the
#: operator to find the command that makes one.
MAKE_KEY = "make one with: trajsearch keys new --tenant NAME --append keys.toml"
API_KEY_ENV = "TRAJSEARCH_API_KEY"
PREFIX = "ts_"
ROLES = ("read", "write")
_MAX_KEY_CHARS = 256
#: Seconds between looks at a key file for changes (a look is one ``stat``).
RELOAD_INTERVAL_S = 1.0
#: Seconds a key file must stay gone before that revokes every key: a tool that replaces it by delete-then-write
#: (or a volume remounting) leaves it gone for a moment.
GONE_AFTER_S = 10.0
_NEVER = object()  # KeyRing._failed before any failed load

log = logging.getLogger("trajsearch.service")


class KeyConfigError(ValueError):
    """The key configuration is malformed; the message names the entry and field."""


class NoKeysError(KeyConfigError):
    """The key configuration holds no keys (a key file emptied, or ``keys = []``)."""


def hash_key(key: str) -> str:
    return hashlib.sha256(key.encode("utf-8")).hexdigest()


_KEY_CHARACTERS = {"\r": "a carriage return", "\n": "a newline", "\t": "a tab"}


def key_problem(key: str) -> str | None:
    """What makes ``key`` (whitespace already stripped) no key at all, as the end of a sentence naming where it
    came from, or None. The client refuses such a key before any call, and ``trajsearch keys hash`` before hashing
    it: a character gRPC cannot send in metadata (outside printable ASCII) would fail every call with ``INTERNAL:
    Invalid metadata``; quotes around it are an env file's kept as part of the value (``docker run --env-file``
    does: moby/moby#46773), and a key file holding their hash would take a key the client refuses."""
    bad = next((c for c in key if not " " <= c <= "~"), None)
    if bad is not None:
        what = _KEY_CHARACTERS.get(bad) or ("non-ASCII characters" if ord(bad) > 127 else "control characters")
        return f"contains {what}, which no API key has"
    if len(key) > 1 and key[0] == key[-1] and key[0] in "'\"":
        return ("is wrapped in quotes, which no API key has: remove them (docker run --env-file keeps an env "
                "file's quotes as part of the value)")
    return None


def new_key() -> str:
    """A fresh random API key (show it once; store only :func:`hash_key` of it)."""
    return PREFIX + base64.urlsafe_b64encode(secrets.token_bytes(32)).decode().rstrip("=")


@dataclass(frozen=True)
class Principal:
    """Who is calling: the key's label, its tenant, its role, and its pinned filters.

    ``key_sha256`` is the hash of the key it was read for, kept so that a web session can tell whether *that key*
    is still in the key file (:meth:`KeyRing.holds`); it takes no part in comparing principals and is never shown.
    """

    key_id: str
    tenant: str
    role: str
    env_versions: tuple[str, ...] = ()
    policy_versions: tuple[str, ...] = ()
    key_sha256: str = field(default="", compare=False, repr=False)

    def can(self, role: str) -> bool:
        return role == "read" or self.role == "write"

    def sees(self, env_version: str | None, policy_version: str | None) -> bool:
        """Whether a run of these versions is inside this key's pins (no pins: every run)."""
        return ((not self.env_versions or env_version in self.env_versions)
                and (not self.policy_versions or policy_version in self.policy_versions))


def narrow(requested: tuple[str, ...], pinned: tuple[str, ...]) -> tuple[str, ...] | None:
    """Requested values ANDed with a key's pinned ones; None when nothing can match.

    Every read a pinned key makes, over gRPC or the web pages, filters by this: a pin only ever
    narrows what the caller asked for, never widens it.
    """
    if not pinned:
        return requested
    if not requested:
        return pinned
    both = tuple(x for x in requested if x in pinned)
    return both or None


class KeyRing:
    """Hash -> principal. ``authenticate`` returns None for a missing or unknown key."""

    def __init__(self, principals: Mapping[str, Principal], *, path: Path | None = None) -> None:
        self._by_hash = dict(principals)
        self._path = path  # the key file these came from, read again when it changes (see the module docstring)
        self._seen = _file_state(path) if path else None
        self._failed: object = _NEVER  # the file's state when it last failed to load (None: it was gone)
        self._gone_since: float | None = None  # when the file was first found gone (a look's time), if it still is
        self._looked = time.monotonic()
        self._reloading = threading.Lock()

    def __len__(self) -> int:
        return len(self._by_hash)

    @classmethod
    def from_entries(cls, entries: list[Mapping[str, Any]], *, origin: str = "keys") -> KeyRing:
        by_hash: dict[str, Principal] = {}
        ids: set[str] = set()
        for n, entry in enumerate(entries):
            where = f"{origin}: keys[{n}]"
            if not isinstance(entry, Mapping):
                raise KeyConfigError(f"{where}: expected a table/object")
            unknown = set(entry) - {"id", "sha256", "tenant", "role", "env_versions", "policy_versions"}
            if unknown:
                raise KeyConfigError(f"{where}: unknown field(s) {sorted(unknown)}")
            digest = str(entry.get("sha256", "")).lower()
            if len(digest) != 64 or any(c not in "0123456789abcdef" for c in digest):
                raise KeyConfigError(f"{where}.sha256: expected 64 hex digits (trajsearch keys new prints it)")
            try:
                tenant = valid_tenant(entry.get("tenant", ""))
            except ValueError as exc:
                raise KeyConfigError(f"{where}.tenant: {exc}") from None
            role = entry.get("role")
            if role not in ROLES:
                raise KeyConfigError(f"{where}.role: expected one of {list(ROLES)}, got {role!r}")
            key_id = str(entry.get("id") or digest[:12])
            if key_id in ids:
                raise KeyConfigError(f"{where}.id: duplicate id {key_id!r}")
            if digest in by_hash:
                raise KeyConfigError(f"{where}.sha256: the same key appears twice (one key, one tenant)")
            pins = {}
            for name in ("env_versions", "policy_versions"):
                value = entry.get(name, [])
                if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
                    raise KeyConfigError(f"{where}.{name}: expected a list of strings")
                pins[name] = tuple(value)
            ids.add(key_id)
            by_hash[digest] = Principal(key_id, tenant, role, **pins, key_sha256=digest)
        return cls(by_hash)

    @classmethod
    def load(cls, path: str | Path | None = None) -> KeyRing:
        """From ``path`` (TOML or JSON), else ``$TRAJSEARCH_KEYS_FILE``, else JSON in ``$TRAJSEARCH_KEYS``."""
        path = path or os.environ.get(KEYS_FILE_ENV)
        if path:
            path = Path(path)
            state = _file_state(path)
            ring = cls._from_file(path)
            ring._seen = state  # as it was before it was read: a change made while reading is read again
            return ring
        if os.environ.get(KEYS_ENV):
            try:
                data = json.loads(os.environ[KEYS_ENV])
            except ValueError as exc:
                raise KeyConfigError(f"${KEYS_ENV}: not valid JSON: {exc}") from None
            entries, origin = _entries(data, f"${KEYS_ENV}"), f"${KEYS_ENV}"
        else:
            raise KeyConfigError(f"no API keys configured: pass --keys FILE or set ${KEYS_FILE_ENV} or ${KEYS_ENV} "
                                 f"({MAKE_KEY})")
        if not entries:
            raise KeyConfigError(f"{origin}: expected a non-empty 'keys' list ({MAKE_KEY})")
        return cls.from_entries(entries, origin=origin)

    @classmethod
    def _from_file(cls, path: Path) -> KeyRing:
        entries = key_file_entries(key_file_text(path), path)
        if not entries:
            raise NoKeysError(f"{path}: expected a non-empty 'keys' list")
        return cls(cls.from_entries(entries, origin=str(path))._by_hash, path=path)

    def authenticate(self, key: str | None) -> Principal | None:
        self._reload_if_changed()
        return self.peek(key)

    def peek(self, key: str | None) -> Principal | None:
        """The key's principal as last read, without looking at the key file: for grpcio's polling thread, which
        must not wait on a file system (the call's own authentication, on its worker, reads a changed file)."""
        if not key or len(key) > _MAX_KEY_CHARS:
            return None
        return self._by_hash.get(hash_key(key))

    def tenants(self, role: str) -> frozenset[str]:
        """The tenants with a key of ``role`` (or one that may do what it may), as last read."""
        return frozenset(p.tenant for p in list(self._by_hash.values()) if p.can(role))

    def holds(self, principal: Principal) -> bool:
        """Whether the key this principal was read for is still in the ring, with the same id, tenant, role and pins:
        a web session signed in with a key removed from the file, replaced in it (a rotation that keeps the entry
        and puts a new key's sha256 in it), or whose tenant, role or pins changed, ends with it."""
        self._reload_if_changed()
        return self._by_hash.get(principal.key_sha256) == principal

    def _reload_if_changed(self) -> None:
        """Read the key file again if it changed since it was last read (one ``stat`` a second at most)."""
        if self._path is None or time.monotonic() - self._looked < RELOAD_INTERVAL_S:
            return
        if not self._reloading.acquire(blocking=False):  # another call is looking: use the keys as they are
            return
        try:
            self._looked = time.monotonic()
            state = _file_state(self._path)
            if state == self._seen:
                return
            try:
                fresh = self._from_file(self._path)
            except (KeyConfigError, OSError) as exc:
                # not recorded as seen: the next look reads it again, so a file made readable (chown'd after a root
                # `mv`, or its directory chmod'ed, which leave the file's size and times as they were) is read at once
                # an empty file is a save under way (`vault kv get ... > keys.toml` empties it, then waits on the
                # network), never a revocation; a file that holds no key, or none at all for GONE_AFTER_S, is
                if isinstance(exc, FileNotFoundError):
                    self._gone_since = self._gone_since or self._looked
                    gone = self._looked - self._gone_since >= GONE_AFTER_S
                else:
                    self._gone_since = None
                    gone = isinstance(exc, NoKeysError) and state is not None and state[2] > 0
                if gone and state == self._failed:
                    # holding no key (or gone for a while), and still so a look later: no save leaves a file so, so it
                    # is the operator's doing, as when revoking every key in an incident
                    self._by_hash, self._seen, self._failed = {}, state, _NEVER
                    log.warning("key file %s %s: every key is refused until it holds keys again", self._path,
                                "is gone" if state is None else "holds no keys")
                    return
                if state != self._failed:  # said once for each version of the file, not once a second
                    log.warning("key file %s changed but does not load (%s): the %d keys read before stay in use%s",
                                self._path, exc, len(self._by_hash),
                                " (if it holds none at the next look, every key is refused)" if gone else "")
                self._failed = state
                return
            self._by_hash, self._seen, self._failed, self._gone_since = fresh._by_hash, state, _NEVER, None
            log.info("key file %s read again: %d keys", self._path, len(self._by_hash))
        finally:
            self._reloading.release()


def _file_state(path: Path) -> tuple[int, ...] | None:
    """What tells that a file changed (its device and inode, size, modification and status-change times), or None
    when it cannot be looked at. The status-change time moves with a chmod or chown too, which change nothing else."""
    try:
        st = path.stat()
    except OSError:
        return None
    return st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns


def key_file_text(path: Path) -> str:
    """A key file's text: UTF-8, with or without a byte order mark; else :class:`KeyConfigError` saying so.

    Shared by the server's load and ``keys new --append``. Windows PowerShell writes a mark with ``Set-Content
    -Encoding UTF8``, and UTF-16 with ``>`` and ``Out-File``: a mark made the file "not valid TOML (at line 1,
    column 1)", and UTF-16 was a ``UnicodeDecodeError`` that no caller expected: ``serve`` stopped with it, and a
    file rotated so while serving failed one call a second ``UNKNOWN: Exception calling application``, the keys it
    removed still let in (probe 54, SV5)."""
    data = path.read_bytes()
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        what = "UTF-16 text" if data[:2] in (b"\xff\xfe", b"\xfe\xff") else f"UTF-8 text (byte {exc.start} is not)"
        raise KeyConfigError(f"{path}: {what}: save it as UTF-8") from None


def key_file_entries(text: str, path: Path) -> list[Any]:
    """The entries in a key file's text (TOML, or JSON for a ``.json`` path); ``[]`` for a file with none yet.

    Shared by the server's load and ``keys new --append``, which checks the file it would leave behind.
    """
    as_json = path.suffix == ".json"
    try:
        data = json.loads(text) if as_json else tomllib.loads(text)
    except (ValueError, tomllib.TOMLDecodeError) as exc:
        raise KeyConfigError(f"{path}: not valid {'JSON' if as_json else 'TOML'}: {exc}") from None
    except RecursionError:  # both parsers recurse per level: a call a second had failed "UNKNOWN" with it
        raise KeyConfigError(f"{path}: nested too deeply to be a key file") from None
    return _entries(data, str(path))


def _entries(data: Any, origin: str) -> list[Any]:
    entries = data.get("keys", []) if isinstance(data, dict) else data
    if not isinstance(entries, list):
        raise KeyConfigError(f"{origin}: expected a non-empty 'keys' list")
    return entries


def free_key_id(wanted: str, taken: set[str]) -> str:
    """``wanted``, else ``wanted-2``, ``wanted-3``...: a second key for one tenant and role is a rotation."""
    n = 1
    key_id = wanted
    while key_id in taken:
        n += 1
        key_id = f"{wanted}-{n}"
    return key_id


def keys_from_metadata(metadata: Any) -> list[str]:
    """Every key in ``authorization: Bearer <key>`` and ``x-api-key`` call metadata, in order.

    The server refuses a call whose keys differ (it will not guess which one is meant).
    """
    keys = []
    for name, value in metadata or ():
        if name == "authorization" and isinstance(value, str):
            scheme, _, token = value.partition(" ")
            if scheme.lower() == "bearer" and token.strip():
                keys.append(token.strip())
        if name == "x-api-key" and isinstance(value, str) and value.strip():
            keys.append(value.strip())
    return keys


def key_from_metadata(metadata: Any) -> str | None:
    """The first key in the call metadata (see :func:`keys_from_metadata`)."""
    return next(iter(keys_from_metadata(metadata)), None)


def key_entry(key: str, *, tenant: str, role: str, key_id: str = "") -> dict[str, Any]:
    """The config entry (no secret in it) for ``key``."""
    valid_tenant(tenant)
    if role not in ROLES:
        raise ValueError(f"role must be one of {list(ROLES)}")
    return {"id": key_id or f"{tenant}-{role}", "sha256": hash_key(key), "tenant": tenant, "role": role}

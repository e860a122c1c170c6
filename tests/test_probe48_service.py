"""Probe 48 (S): the service and the batch indexer as an operator running ``trajsearch serve`` for weeks meets them.

Fixtures: real mini-swe-agent runs (``fixtures/mini-swe-agent/.real/batch-2.4.6``, two 2.4.6 runs; sources in the
``SOURCE.md`` there). A full disk is stood in for by a file-size limit (``RLIMIT_FSIZE``) on the command's process:
the same ``write()`` fails the same way (``EFBIG`` for ``ENOSPC``), with no filesystem to mount.
"""

from __future__ import annotations

import http.cookiejar
import json
import os
import shutil
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from urllib.parse import urlencode

from cli_support import run_cli, unnoted
from process_support import launched
from web_support import csrf_of

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = Path(__file__).parent / "fixtures"
BATCH = FIXTURES / "mini-swe-agent" / ".real" / "batch-2.4.6"  # two real mini-swe-agent 2.4.6 runs


def _local_store(tmp_path: Path, monkeypatch) -> dict[str, str]:
    """An embedded store under ``tmp_path`` for this process's CLI and the environment a child process needs."""
    env = {"TRAJSEARCH_MODEL": "hashing", "TRAJSEARCH_HOME": str(tmp_path / "home"), "TRAJSEARCH_TENANT": "acme"}
    for name in ("TRAJSEARCH_SERVER", "TRAJSEARCH_URI", "TRAJSEARCH_TRACES"):
        monkeypatch.delenv(name, raising=False)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    return {**os.environ, **env}


def _cli_with_file_limit(limit: int, env: dict[str, str], *args: str) -> subprocess.CompletedProcess:
    """``trajsearch ARGS...`` in a child process that cannot write a file past ``limit`` bytes (a full disk)."""
    return subprocess.run(launched([sys.executable, "-m", "trajsearch.cli", *args], fsize=limit), cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=300)


def test_a_search_answers_when_the_disk_will_not_take_the_lexical_copy(tmp_path: Path, monkeypatch) -> None:
    """On a full disk every search of an embedded store failed with ``error: OSError: [Errno 28] No space left on
    device``, exit 1, after computing its answer: the read rebuilt the stale lexical index and closing the store
    saved it, which raised (and left a half-written ``.tmp.npz`` taking what space there was). The save is a
    cache's: the search answers, a warning says the copy was not saved, no temp file is left, and the next open
    rebuilds it."""
    env = _local_store(tmp_path, monkeypatch)
    code, out, err = run_cli("ingest", str(BATCH), "--quiet")
    assert code == 0, out + err
    home = tmp_path / "home"
    copy = home / "milvus.db.lexical.npz"
    assert copy.is_file()
    (home / "milvus.db.lexical.json").unlink()  # stale, as a killed writer leaves it: the next read rebuilds

    done = _cli_with_file_limit(copy.stat().st_size // 2, env, "search", "ModuleNotFoundError", "-m", "lexical",
                                "--json")
    assert done.returncode == 0, done.stdout + done.stderr
    assert '"trajectory_id"' in done.stdout, done.stdout + done.stderr
    assert "could not save the lexical index" in done.stderr and "File too large" in done.stderr, done.stderr
    assert sorted(p.name for p in home.iterdir() if p.name.startswith("milvus.db.lexical")) == [
        "milvus.db.lexical.npz"], list(home.iterdir())  # no half-written copy; the label still says stale

    code, out, err = run_cli("search", "ModuleNotFoundError", "-m", "lexical", "--json")
    assert code == 0 and '"trajectory_id"' in out, out + err


def test_a_moved_or_copied_store_searches_with_its_own_lexical_copy(tmp_path: Path, monkeypatch) -> None:
    """A store moved (``mv ~/.trajsearch /data/``, a volume mounted at another path) failed every search with
    ``error: FileNotFoundError: '<old path>/milvus.db.lexical.npz.tmp.npz'``: the collection recorded where its
    lexical copy was made, so the copy moved beside it was never read, the search rebuilt it and closing saved it
    to a directory gone. A copy of a store (a backup restored beside the original) wrote its copy into the
    original's. Opened by its path, a store keeps the copy beside itself: the moved copy is loaded as it is, and
    the original's files are left alone."""
    _local_store(tmp_path, monkeypatch)
    made = tmp_path / "made"
    monkeypatch.setenv("TRAJSEARCH_HOME", str(made / "home"))
    code, out, err = run_cli("ingest", str(BATCH), "--quiet")
    assert code == 0, out + err

    moved = tmp_path / "moved"
    made.rename(moved)
    monkeypatch.setenv("TRAJSEARCH_HOME", str(moved / "home"))
    label = moved / "home" / "milvus.db.lexical.json"
    saved = label.read_text()
    code, out, err = run_cli("search", "ModuleNotFoundError", "-m", "lexical", "--json")
    assert code == 0 and '"trajectory_id"' in out, out + err
    assert label.read_text() == saved  # the moved copy was loaded, not rebuilt and saved again
    assert not made.exists()

    copied = tmp_path / "copied"
    shutil.copytree(moved, copied)
    before = {p.name: p.read_bytes() for p in (moved / "home").iterdir() if p.is_file()}
    (copied / "home" / "milvus.db.lexical.json").unlink()  # the copy's lexical copy is rebuilt and saved
    monkeypatch.setenv("TRAJSEARCH_HOME", str(copied / "home"))
    code, out, err = run_cli("search", "ModuleNotFoundError", "-m", "lexical", "--json")
    assert code == 0 and '"trajectory_id"' in out, out + err
    assert (copied / "home" / "milvus.db.lexical.json").is_file()  # saved beside the copy
    assert {p.name: p.read_bytes() for p in (moved / "home").iterdir() if p.is_file()} == before


def test_show_of_a_run_whose_trace_is_gone_says_so(tmp_path: Path, monkeypatch) -> None:
    """``show`` of an indexed run whose trace file is not where the trace store looks (the traces moved with a
    store's old layout, ``--traces`` naming another folder, a file deleted) said only ``error: file:///...json.gz``:
    the message of a KeyError's bare argument. It says the run is indexed, that the store named holds no trace of
    it, and what names the trace store."""
    _local_store(tmp_path, monkeypatch)
    code, out, err = run_cli("ingest", str(BATCH), "--quiet")
    assert code == 0, out + err
    code, out, err = run_cli("search", "ModuleNotFoundError", "-l", "task", "--json")
    trajectory_id = json.loads(out)[0]["trajectory_id"]
    elsewhere = tmp_path / "traces-elsewhere"
    elsewhere.mkdir()

    code, out, err = run_cli("show", trajectory_id, "--traces", str(elsewhere))
    said = "".join(err.split())  # the console wraps long paths anywhere
    assert code == 1, out + err
    wanted = f"the run is indexed but its trace is not in the trace store {elsewhere.as_uri()}: no trace at file://"
    assert "".join(wanted.split()) in said, err
    assert "--tracesor$TRAJSEARCH_TRACES" in said, err


def test_an_export_the_disk_will_not_take_names_its_file(tmp_path: Path, monkeypatch) -> None:
    """``export -o FILE`` onto a full disk said ``error: OSError: [Errno 28] No space left on device``, naming no
    file. It names the file, says nothing was written, and leaves no temp file beside it."""
    env = _local_store(tmp_path, monkeypatch)
    code, out, err = run_cli("ingest", str(BATCH), "--quiet")
    assert code == 0, out + err
    target = tmp_path / "out"
    target.mkdir()
    done = _cli_with_file_limit(4096, env, "export", "-q", "fix the greeting", "-f", "jsonl", "--outcome", "success",
                                "--outcome", "failure", "--outcome", "unknown", "-o", str(target / "runs.jsonl"))
    said = "".join(done.stderr.split())  # the console wraps long paths anywhere
    assert done.returncode == 1, done.stdout + done.stderr
    wanted = f"cannot write {target / 'runs.jsonl'}: File too large; nothing was written"
    assert "".join(wanted.split()) in said, done.stderr
    assert list(target.iterdir()) == []


def _new_key(path: Path, tenant: str, role: str) -> str:
    """``trajsearch keys new --append PATH``: the key it prints (its hashed entry goes into the file)."""
    code, out, err = run_cli("keys", "new", "--tenant", tenant, "--role", role, "--append", str(path))
    assert code == 0, out + err
    return out.strip()


def test_a_key_rotated_in_the_key_file_works_and_the_old_one_is_refused_without_a_restart(tmp_path: Path) -> None:
    """A rotation as the README gives it (``keys new --append keys.toml``, then the old entry removed) did nothing
    until ``serve`` restarted: the file was read once, so the new key was refused as "not one of that server's keys
    (... or one missing from its --keys file)" while it was in the file, and a removed, maybe leaked, key kept
    working; the only way out, a restart, drains every call and signs every web page out. The server reads the file
    again when it changes; a file saved half-way keeps the keys it had."""
    from trajsearch.embed import HashingEmbedder
    from trajsearch.search import TrajSearch
    from trajsearch.service.auth import KeyRing
    from trajsearch.service.client import Client, Unauthenticated
    from trajsearch.service.server import ServiceServer

    keys = tmp_path / "keys.toml"
    old = _new_key(keys, "acme", "write")
    ts = TrajSearch.open(str(tmp_path / "milvus.db"), traces=str(tmp_path / "traces"), embedder=HashingEmbedder())
    server = ServiceServer(ts, KeyRing.load(keys), address="127.0.0.1:0",  # as `serve --keys ... --http` loads it
                           http_address="127.0.0.1:0").start()

    def whoami(key: str, wait: float = 1.5) -> dict[str, str] | None:
        """The key's answer once the server has looked at the file again (once a second); None: refused."""
        time.sleep(wait)
        with Client(server.address, key) as client:
            try:
                return client.whoami(timeout=600)
            except Unauthenticated:
                return None

    def signed_in(key: str) -> urllib.request.OpenerDirector:
        """A browser signed in to the web pages with ``key``."""
        opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(http.cookiejar.CookieJar()))
        with opener.open(server.web.url + "/signin", timeout=600) as page:
            token = csrf_of(page.read().decode())
        form = urlencode({"key": key, "csrf": token, "next": "/"}).encode()
        opener.open(urllib.request.Request(server.web.url + "/signin", data=form), timeout=600).close()
        return opener

    def page_url(browser: urllib.request.OpenerDirector) -> str:
        """Where the search page lands: itself, or the sign-in page."""
        with browser.open(server.web.url + "/?q=error", timeout=600) as page:
            return page.geturl()

    try:
        assert whoami(old, 0) == {"tenant": "acme", "role": "write", "key_id": "acme-write"}
        browser = signed_in(old)
        assert "/signin" not in page_url(browser)
        new = _new_key(keys, "acme", "write")  # the rotation: acme-write-2
        assert whoami(new) == {"tenant": "acme", "role": "write", "key_id": "acme-write-2"}
        assert "/signin" not in page_url(browser)  # the old key is still in the file
        text = keys.read_text()
        keys.write_text(text[text.index("[[keys]]", text.index("[[keys]]") + 1):])  # the old entry removed
        assert whoami(old) is None
        assert whoami(new, 0) is not None
        assert "/signin" in page_url(browser)  # its web session ended with it
        assert "/signin" not in page_url(signed_in(new))
        keys.write_text(keys.read_text()[:-20])  # saved half-way: not TOML
        assert whoami(new) is not None and whoami(old, 0) is None
    finally:
        server.stop(grace=1)


def test_a_delete_with_a_read_key_is_not_told_to_rerun(tmp_path: Path, monkeypatch) -> None:
    """``delete --server`` with a read key printed "stopped by an error: removed 0 run(s) ...; the others are still in
    the index: rerun the same command to finish" above the PERMISSION_DENIED line: the same command fails the same
    way. The refusal is the one line, exit 2, and the run is still there."""
    from trajsearch.embed import HashingEmbedder
    from trajsearch.ingest.read import read_dump
    from trajsearch.search import TrajSearch
    from trajsearch.service.auth import KeyRing
    from trajsearch.service.server import ServiceServer

    keys = tmp_path / "keys.toml"
    reader = _new_key(keys, "acme", "read")
    ts = TrajSearch.open(str(tmp_path / "milvus.db"), traces=str(tmp_path / "traces"), embedder=HashingEmbedder())
    runs = [p.trajectory for path in sorted(BATCH.rglob("*.traj.json")) for p in read_dump(path, tenant="acme")]
    ts.add([r for r in runs if r is not None])
    server = ServiceServer(ts, KeyRing.load(keys), address="127.0.0.1:0").start()
    monkeypatch.setenv("TRAJSEARCH_SERVER", server.address)
    monkeypatch.setenv("TRAJSEARCH_API_KEY", reader)
    try:
        trajectory_id = runs[0].trajectory_id
        code, out, err = run_cli("delete", trajectory_id)
        assert code == 2, out + err
        assert "PERMISSION_DENIED" in err and "rerun" not in err, err
        assert ts.run(trajectory_id, tenant="acme") is not None
    finally:
        server.stop(grace=1)


# -- review RS of probe S's merge (FRS) ------------------------------------------------------------------------------


def _web_signed_in(app, key: str):
    """A TestClient browser signed in to ``app``'s pages with ``key``."""
    from starlette.testclient import TestClient

    browser = TestClient(app, base_url="http://127.0.0.1", follow_redirects=False)
    page = browser.get("/signin")
    response = browser.post("/signin", data={"key": key, "csrf": csrf_of(page.text), "next": "/"})
    assert response.status_code == 303 and response.headers["location"] == "/", response.text
    return browser


def test_a_key_rotated_in_place_in_the_key_file_signs_its_web_sessions_out(tmp_path: Path) -> None:
    """A rotation that keeps the entry and replaces its sha256 with a new key's (the natural move: ``keys new``
    prints an entry of the same id, tenant and role) refused the old key over gRPC but left every web session
    signed in with it: a session was checked by its principal (id, tenant, role, pins), which the new key's entry
    matched exactly. A session ends when the key it signed in with leaves the file, whatever takes its place."""
    import re

    from trajsearch.embed import HashingEmbedder
    from trajsearch.search import TrajSearch
    from trajsearch.service.auth import RELOAD_INTERVAL_S, KeyRing
    from trajsearch.web import WebConfig, create_app
    from trajsearch.web.app import LOOPBACK_HOSTS

    keys = tmp_path / "keys.toml"
    old = _new_key(keys, "acme", "write")
    ts = TrajSearch.open(str(tmp_path / "milvus.db"), traces=str(tmp_path / "traces"), embedder=HashingEmbedder())
    ring = KeyRing.load(keys)
    app = create_app(ts, ring, config=WebConfig(allowed_hosts=LOOPBACK_HOSTS))
    try:
        browser = _web_signed_in(app, old)
        assert browser.get("/").status_code == 200
        code, new, err = run_cli("keys", "new", "--tenant", "acme", "--role", "write")
        assert code == 0, new + err
        new_sha = re.search(r'sha256 = "([0-9a-f]{64})"', err).group(1)
        text = keys.read_text()
        keys.write_text(re.sub(r'sha256 = "[0-9a-f]{64}"', f'sha256 = "{new_sha}"', text))  # the same size
        time.sleep(RELOAD_INTERVAL_S + 0.2)
        assert ring.authenticate(old) is None and ring.authenticate(new.strip()) is not None
        page = browser.get("/")
        assert page.status_code == 303 and page.headers["location"].startswith("/signin"), page.status_code
        assert _web_signed_in(app, new.strip()).get("/").status_code == 200
    finally:
        ts.close()


_AUTHENTICATE = """
import sys
from trajsearch.service.auth import KeyRing
ring = KeyRing.load(sys.argv[1])  # as `serve --keys` loads it
for key in sys.stdin:
    print("ok" if ring.authenticate(key.strip()) else "refused", flush=True)
"""


def test_a_key_file_that_could_not_be_read_once_is_read_once_it_can_be(tmp_path: Path) -> None:
    """A key file put in place by another account (an operator's ``mv`` of a file it wrote 0600, a config tool's)
    cannot be read by the server's account until it is ``chown``'d. The reload recorded the file as seen before
    reading it, and a chown changes none of what it compared (inode, size, mtime): the file was never read again,
    so the new key stayed refused and the removed one kept working until a restart. A file that does not load is
    read again at the next look.

    The server here is root without the capabilities that let root read any file (``setpriv --bounding-set``), so
    file permissions bind it as they bind any service account."""
    import pytest

    if os.geteuid() != 0 or not shutil.which("setpriv"):
        pytest.skip("needs root and setpriv, to serve under file permissions as a service account")
    from trajsearch.service.auth import RELOAD_INTERVAL_S

    keys = tmp_path / "keys.toml"
    old = _new_key(keys, "acme", "write")
    server = subprocess.Popen(["setpriv", "--bounding-set", "-dac_override,-dac_read_search", sys.executable, "-c",
                               _AUTHENTICATE, str(keys)], cwd=ROOT, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                              text=True)

    def answer(key: str) -> str:
        time.sleep(RELOAD_INTERVAL_S + 0.2)  # the server looks at the file once a second
        server.stdin.write(key + "\n")
        server.stdin.flush()
        return server.stdout.readline().strip()

    try:
        assert answer(old) == "ok"
        staged = tmp_path / "keys.toml.new"
        new = _new_key(staged, "acme", "read")
        staged.chmod(0o600)
        os.chown(staged, 65534, 65534)  # another account's file
        os.replace(staged, keys)
        assert answer(new) == "refused" and answer(old) == "ok"  # unreadable: the keys read before stay in use
        os.chown(keys, os.geteuid(), os.getegid())  # the server's own
        assert answer(new) == "ok"
        assert answer(old) == "refused"
    finally:
        server.stdin.close()
        server.wait(600)


def test_a_store_copied_onto_a_full_disk_opens_and_searches(tmp_path: Path, monkeypatch) -> None:
    """A store copied or moved onto a disk with no room left (a backup restored onto a full volume, a volume seen
    under another mount path) could not be opened at all: every command failed with ``error: MilvusException: ...
    No space left on device``, as opening wrote the copy's new path into the collection. Nothing reads that path
    back (it is worked out from where the store is), so opening writes nothing, and the search answers."""
    env = _local_store(tmp_path, monkeypatch)
    made = tmp_path / "made"
    monkeypatch.setenv("TRAJSEARCH_HOME", str(made))
    code, out, err = run_cli("ingest", str(BATCH), "--quiet")
    assert code == 0, out + err
    copied = tmp_path / "copied"
    shutil.copytree(made, copied)
    before = {p: p.read_bytes() for p in copied.rglob("*") if p.is_file()}

    env = {**env, "TRAJSEARCH_HOME": str(copied)}
    for mode in ("lexical", "dense"):
        done = _cli_with_file_limit(1, env, "search", "ModuleNotFoundError", "-m", mode, "--json")
        assert done.returncode == 0, done.stdout + done.stderr
        assert '"trajectory_id"' in done.stdout, done.stdout + done.stderr
        assert unnoted(done.stderr) == [], done.stderr  # the copy moved with the store is loaded as it is
    assert {p: p.read_bytes() for p in copied.rglob("*") if p.is_file()} == before


def test_a_search_answers_when_the_disk_takes_the_lexical_copy_but_not_the_collections_stamp(
        tmp_path: Path, caplog) -> None:
    """On a disk with room for the rebuilt lexical copy but not for the collection's few KB of metadata, saving the
    copy got as far as stamping its generation into the collection, which Milvus Lite refused with its own
    ``MilvusException: [Errno 28] No space left on device``: the search failed after computing its answer, as it
    had for an ``OSError``. It answers with the same warning, and a server's flushes after a failed save do not
    serialise the whole index again each time to fail the same way (one try per ``SAVE_INTERVAL_S``, and at close).

    A real full disk: a 20 MB tmpfs, filled until just the copy and its label fit (needs root to mount)."""
    import logging

    import pytest

    disk = tmp_path / "disk"
    disk.mkdir()
    if os.geteuid() != 0 or subprocess.run(["mount", "-t", "tmpfs", "-o", "size=20m", "tmpfs", str(disk)],
                                           capture_output=True).returncode != 0:
        pytest.skip("needs to mount a small tmpfs (root), to fill a disk")
    try:
        home = disk / "home"
        env = {**os.environ, "TRAJSEARCH_MODEL": "hashing", "TRAJSEARCH_HOME": str(home), "TRAJSEARCH_TENANT": "acme"}
        for name in ("TRAJSEARCH_SERVER", "TRAJSEARCH_URI", "TRAJSEARCH_TRACES"):
            env.pop(name, None)

        def cli(*args: str) -> subprocess.CompletedProcess:
            return subprocess.run([sys.executable, "-m", "trajsearch.cli", *args], cwd=ROOT, env=env,
                                  capture_output=True, text=True, timeout=300)

        done = cli("ingest", str(BATCH), "--quiet")
        assert done.returncode == 0, done.stdout + done.stderr
        copy = home / "milvus.db.lexical.npz"
        page = os.statvfs(disk).f_bsize
        room = -(-copy.stat().st_size // page) * page + page  # the copy and its label, to the page
        copy.unlink()
        (home / "milvus.db.lexical.json").unlink()  # no copy: the first lexical search rebuilds it, then saves it
        with open(disk / "filler", "wb") as filler:
            filler.write(bytes(os.statvfs(disk).f_bavail * page - room))

        done = cli("search", "ModuleNotFoundError", "-m", "lexical", "--json")
        assert done.returncode == 0, done.stdout + done.stderr
        assert '"trajectory_id"' in done.stdout, done.stdout + done.stderr
        said = " ".join(done.stderr.split())
        assert "could not save the lexical index" in said and "No space left on device" in said, done.stderr

        from trajsearch.embed import HashingEmbedder
        from trajsearch.search import TrajSearch

        ts = TrajSearch.open(str(home / "milvus.db"), traces=str(home / "traces"), embedder=HashingEmbedder())
        try:
            assert ts.search("ModuleNotFoundError", tenant="acme", mode="lexical")  # stale: rebuilt
            with caplog.at_level(logging.WARNING, logger="trajsearch.store.index"):
                for _ in range(3):
                    ts.index.flush()  # as a server flushes after each ingest
            failed = [r for r in caplog.records if "could not save the lexical index" in r.getMessage()]
            assert len(failed) == 1, [r.getMessage() for r in failed]
        finally:
            ts.close()
    finally:
        subprocess.run(["umount", str(disk)], check=True)


def test_a_key_file_left_without_keys_or_gone_lets_no_key_in(tmp_path: Path, caplog, monkeypatch) -> None:
    """An operator revoking every key in an incident removes the key file or leaves it without keys: every key kept
    working, as a file that does not load keeps the keys read before. A file that holds no key (``keys = []``) still
    so at the next look, or one gone for ``GONE_AFTER_S``, lets no key in, and its keys are read again once it holds
    some. An empty file is a save under way, however long (``vault kv get ... > keys.toml`` empties the file, then
    waits on the network): it had locked every key out and signed every browser out for good (review R3)."""
    import logging

    from trajsearch.service import auth
    from trajsearch.service.auth import RELOAD_INTERVAL_S, KeyRing

    monkeypatch.setattr(auth, "GONE_AFTER_S", 3 * RELOAD_INTERVAL_S)  # 10 s in service: the rule, not its length
    keys = tmp_path / "keys.toml"
    key = _new_key(keys, "acme", "write")
    saved = keys.read_text()
    ring = KeyRing.load(keys)  # as `serve --keys` loads it

    def answer(key: str) -> bool:
        time.sleep(RELOAD_INTERVAL_S + 0.1)  # the server looks at the file once a second
        return ring.authenticate(key) is not None

    with caplog.at_level(logging.WARNING, logger="trajsearch.service"):
        keys.write_text("")  # emptied by a slow save...
        assert answer(key) and answer(key) and answer(key)  # ...for seconds: keys kept
        keys.write_text(saved)  # ...which then ends
        assert answer(key)

        keys.write_text("keys = []\n")  # left without keys
        assert answer(key)  # the first look cannot tell it from a save caught half-way
        assert not answer(key)
        keys.write_text(saved)
        assert answer(key)

        keys.unlink()  # removed
        assert answer(key)  # a delete-then-write replace leaves it gone for a moment
        answer(key), answer(key)
        assert not answer(key)  # gone for GONE_AFTER_S
        keys.write_text(saved)
        assert answer(key)
    assert "every key is refused until it holds keys again" in caplog.text


def test_an_ingest_stream_stops_once_its_key_leaves_the_key_file(tmp_path: Path) -> None:
    """A key removed from the key file was refused from its next call, but an ingest stream it had opened (up to an
    hour and 50,000 records) went on writing to the end. Each batch now asks the key ring again: the stream is
    refused from the first batch after the key left the file."""
    from trajsearch.embed import HashingEmbedder
    from trajsearch.ingest.read import read_dump
    from trajsearch.search import TrajSearch
    from trajsearch.service.auth import RELOAD_INTERVAL_S, KeyRing
    from trajsearch.service.client import Client, Unauthenticated
    from trajsearch.service.server import ServiceServer

    keys = tmp_path / "keys.toml"
    leaving = _new_key(keys, "acme", "write")
    _new_key(keys, "acme", "write")  # the key that stays: a file left with no keys is another rule
    runs = [p.trajectory for path in sorted(BATCH.rglob("*.traj.json")) for p in read_dump(path) if p.ok]
    assert len(runs) == 2
    ts = TrajSearch.open(str(tmp_path / "milvus.db"), traces=str(tmp_path / "traces"), embedder=HashingEmbedder())
    server = ServiceServer(ts, KeyRing.load(keys), address="127.0.0.1:0").start()

    def stream():
        yield runs[0]
        text = keys.read_text()
        keys.write_text(text[text.index("[[keys]]", text.index("[[keys]]") + 1):])  # the first entry removed
        time.sleep(RELOAD_INTERVAL_S + 0.3)  # the server looks at the file once a second at most
        yield runs[1]

    try:
        with Client(server.address, leaving) as client:
            try:
                client.add(stream(), batch_size=1, timeout=600)
            except Unauthenticated as exc:
                assert "removed from the server's key file" in str(exc)
            else:
                raise AssertionError("the stream went on after its key left the key file")
    finally:
        server.stop(grace=1)
    ts = TrajSearch.open(str(tmp_path / "milvus.db"), traces=str(tmp_path / "traces"), embedder=HashingEmbedder())
    try:
        assert ts.run(runs[1].trajectory_id, tenant="acme") is None  # nothing the key sent after it left
    finally:
        ts.close()

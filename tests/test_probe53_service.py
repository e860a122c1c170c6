"""Probe 53 (SV4): the service's leftovers: file descriptors, logs, tenants' shares, a hostile caller.

Real gRPC servers (``ServiceServer``) and real uvicorn pages on 127.0.0.1, real Milvus Lite and file traces with the
fast test embedder, reached by real clients over loopback; ``trajsearch serve`` run as a process where its file
limit matters. No timing asserts: status codes, counts and generous bounds.
"""

from __future__ import annotations

import http.client
import socket
import ssl
import threading
import time

import grpc
import pytest

from trajsearch.embed import HashingEmbedder
from trajsearch.search import TrajSearch
from trajsearch.service.client import Client
from trajsearch.service.server import TLS, ServiceServer

from conftest import make_run
from service_support import key_ring
from test_service import _self_signed


@pytest.fixture(scope="module")
def tenants():
    return key_ring(acme=dict(tenant="acme", role="write"), beta=dict(tenant="beta", role="write"))


def _store(tmp_path) -> TrajSearch:
    ts = TrajSearch.open(str(tmp_path / "m.db"), traces=str(tmp_path / "t"), embedder=HashingEmbedder())
    ts.add([make_run("a1"), make_run("b1", tenant="beta")])
    return ts


# -- 3. mutual TLS asked for is asked of the pages too -------------------------------------------------


def test_pages_require_the_client_certificate_mutual_tls_asks_for(tmp_path, tenants) -> None:
    """``serve --tls-client-ca`` (mutual TLS: only machines holding a certificate of that CA may connect) was
    enforced on gRPC and not on ``--http``: the pages' TLS asked for no certificate, so any machine that could
    reach the port got the sign-in page and could try keys. Now a connection without a client certificate is
    refused in the handshake, and one with a certificate of the CA is served."""
    made, ring = tenants
    cert, key = _self_signed(tmp_path)  # (a CA certificate: the server's, and the one the client presents)
    server = ServiceServer(_store(tmp_path), ring, address="127.0.0.1:0", tls=TLS(cert, key, client_ca=cert),
                           http_address="127.0.0.1:0").start()
    host, port = server.web.address.rsplit(":", 1)
    try:
        anonymous = ssl.create_default_context(cafile=str(cert))
        with pytest.raises((ssl.SSLError, ConnectionError)):  # (the alert, or the reset after it)
            conn = http.client.HTTPSConnection(host, int(port), timeout=60, context=anonymous)
            try:
                conn.request("GET", "/signin")
                conn.getresponse().read()
            finally:
                conn.close()
        holder = ssl.create_default_context(cafile=str(cert))
        holder.load_cert_chain(str(cert), str(key))
        conn = http.client.HTTPSConnection(host, int(port), timeout=60, context=holder)
        try:
            conn.request("GET", "/signin")
            assert conn.getresponse().status == 200
        finally:
            conn.close()
        with Client(server.address, made["acme"], timeout=60, root_certificates=cert) as plain:  # (gRPC's own
            with pytest.raises(Exception):  # refusal, as before: no client certificate)
                plain.whoami()
    finally:
        server.stop(grace=1)

"""The service layer: gRPC server, API-key auth, Python client, MCP server, metrics and logs.

- :mod:`.protos`      generated stubs (grpcio-tools, built at install time, never edited)
- :mod:`.auth`        API keys (hashed) -> one tenant, a role and optional pinned versions
- :mod:`.server`      the server process: assembly, TLS / plaintext policy, graceful shutdown
- :mod:`.servicer`    the RPC handlers (validate, call the façade inside the key's tenant, convert)
- :mod:`.interceptor` per call: request id, auth, request parsing, deadline, status codes, metrics, log line
- :mod:`.wire`        request bytes -> messages, naming the field of an undecodable request
- :mod:`.validate`    field-naming validation and the service's size bounds
- :mod:`.trace_reads` trace-store reads on bounded threads of their own (a slow store stalls nothing else)
- :mod:`.observe`     JSON logs (python-json-logger), Prometheus metrics (prometheus_client)
- :mod:`.client`      ``Client``: the library's verbs over gRPC
- :mod:`.mcp_server`  ``search_past_runs`` over MCP (stdio or streamable HTTP)

Heavy modules are imported by whoever needs them; importing this package is cheap.
"""

"""The service layer: gRPC server, API-key auth, Python client, MCP server, metrics and logs.

- :mod:`.protos`   generated stubs (grpcio-tools, built on first import, never edited)
- :mod:`.auth`     API keys (hashed) -> one tenant and a role
- :mod:`.server`   the servicer, the server process, graceful shutdown
- :mod:`.client`   ``Client``: the library's verbs over gRPC
- :mod:`.mcp_server` ``search_past_runs`` over MCP (stdio or streamable HTTP)
- :mod:`.observe`  JSON logs with request ids, per-method counters

Heavy modules are imported by whoever needs them; importing this package is cheap.
"""

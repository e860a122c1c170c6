"""The options many commands share, declared once so their flags, env vars and help cannot drift apart.

Each is an ``Annotated`` type: a command takes one as ``server: Server = None``. Options that one
command alone has stay in that command's signature.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, List, Optional

import typer

# where the runs are: the embedded store (--uri, --traces) or a server (--server, --ca)
Uri = Annotated[Optional[str], typer.Option(
    "--uri", envvar="TRAJSEARCH_URI",
    help="Milvus URI: local path (embedded, default ./.trajsearch/milvus.db) or http://host:19530.")]
Traces = Annotated[Optional[str], typer.Option(
    "--traces", envvar="TRAJSEARCH_TRACES",
    help="Trace store: path, file:///abs/path or s3://bucket/prefix (default ./.trajsearch/traces).")]
Server = Annotated[Optional[str], typer.Option(
    "--server", "-s", envvar="TRAJSEARCH_SERVER",
    help="A trajsearch server (host:port) instead of the embedded store; the key comes from $TRAJSEARCH_API_KEY.")]
Ca = Annotated[Optional[Path], typer.Option(
    "--ca", envvar="TRAJSEARCH_TLS_CA", help="With --server: CA certificate (PEM) to verify it (turns TLS on).")]
Tenant = Annotated[Optional[str], typer.Option(
    "--tenant", "-t", envvar="TRAJSEARCH_TENANT", show_default="default",
    help="Tenant to read or write (embedded store). With --server the key's tenant applies.")]

AsJson = Annotated[bool, typer.Option("--json", help="Print JSON for scripts.")]

# filters that read the same in every command that has them
Tools = Annotated[List[str], typer.Option("--tool", help="Keep runs that had any of these tools.")]
TaskFamilies = Annotated[List[str], typer.Option("--task-family")]

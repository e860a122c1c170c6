"""``trajsearch mcp --http`` stopped by SIGTERM: before uvicorn serves, as every command is stopped (143); once it
serves, uvicorn drains and the command ends as ``serve`` ends (0).

The command caught every ``SystemExit(143)`` as uvicorn's own re-raise after its drain, so a SIGTERM while it was
still starting (here: waiting on its server's answer to the key check) exited 0, as if it had served and drained.
"""

from __future__ import annotations

import re
import signal
import socket
import subprocess
import sys
from pathlib import Path

from process_support import cli_env, serving

#: uvicorn's record once it serves (its signal handlers set): the address line comes just before it runs
STARTED = re.compile(r"Application startup complete")


def _mcp(address: str, err: Path) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "trajsearch.cli", "mcp", "--server", address, "--http",
                             "--port", "0"], env=cli_env(TRAJSEARCH_API_KEY="ts_unused"),
                            stdout=subprocess.DEVNULL, stderr=err.open("w"))


def _stopped(proc: subprocess.Popen) -> int:
    proc.send_signal(signal.SIGTERM)
    try:
        return proc.wait(600)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def test_sigterm_while_mcp_http_starts_exits_143(tmp_path):
    """The server it fronts accepts the connection and never answers: the key check waits (up to 15 s), before
    uvicorn runs; SIGTERM there is a command stopped, not a server drained."""
    with socket.socket() as silent:
        silent.bind(("127.0.0.1", 0))
        silent.listen(1)
        silent.settimeout(600)  # a bound for a hang: the child connects once it has started
        proc = _mcp(f"127.0.0.1:{silent.getsockname()[1]}", tmp_path / "mcp.err")
        conn, _ = silent.accept()  # the key check's connection: the command is past its imports, not serving yet
        with conn:
            code = _stopped(proc)
    said = (tmp_path / "mcp.err").read_text()
    assert code == 128 + signal.SIGTERM, (code, said)
    assert "serving on" not in said


def test_sigterm_once_mcp_http_serves_drains_and_exits_0(tmp_path, refusing_address):
    proc = _mcp(refusing_address, tmp_path / "mcp.err")
    serving(proc, tmp_path / "mcp.err", says=STARTED, timeout=600)
    assert _stopped(proc) == 0, (tmp_path / "mcp.err").read_text()

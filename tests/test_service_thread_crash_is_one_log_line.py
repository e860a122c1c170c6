"""A server thread's uncaught error is one JSON log line, its traceback inside it at DEBUG only."""

from __future__ import annotations

import json


def _crash_in_a_thread(level: str) -> str:
    """What the service's log (``configure_logging``, as ``serve``, ``ui`` and ``mcp`` set it) says of a server
    thread dying of an uncaught error."""
    import io
    import threading

    from trajsearch.service.observe import configure_logging

    def work() -> None:
        raise RuntimeError("the trace store went away\nwhile reading run-7")

    log = io.StringIO()
    end = configure_logging(level, stream=log)
    try:
        thread = threading.Thread(target=work, name="tenant_rpc_3")
        thread.start()
        thread.join()
    finally:
        end()
    return log.getvalue()


def test_a_crash_in_a_server_thread_is_one_log_line_its_traceback_at_debug() -> None:
    """Python's own hook wrote a server thread's crash as a raw traceback on stderr, a dozen lines among the JSON
    lines. It is one JSON line: the thread, the error's first line; its traceback inside it at DEBUG only."""
    [line] = _crash_in_a_thread("INFO").splitlines()
    record = json.loads(line)
    assert (record["level"], record["msg"], record["thread_name"], record["error"]) == \
        ("ERROR", "thread crashed", "tenant_rpc_3", "RuntimeError: the trace store went away")
    assert "exc_info" not in record
    [line] = _crash_in_a_thread("DEBUG").splitlines()
    assert "in work" in json.loads(line)["exc_info"]

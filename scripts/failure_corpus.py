"""A labelled corpus of agent-run errors: causes, each written several ways, with varying details.

Used by ``scripts/failure_modes.py`` to judge failure-mode clustering against known
causes (``--eval``) and to build its synthetic 100k-row benchmark (``--synthetic``).
The real dumps hold only a handful of causes; this corpus adds what they lack:

- *paraphrases of one cause* that exact templates cannot join (``ModuleNotFoundError:
  No module named 'yaml'`` / ``ImportError: No module named requests``; ``curl: (7)
  ... Connection refused`` / ``ConnectionRefusedError: [Errno 111] Connection refused``);
- *different causes in shared words* that must stay apart (connection refused vs
  connection timed out vs name resolution; SyntaxError vs IndentationError; a missing
  Python module vs a missing Node module; step limit vs cost limit; file not found vs
  module not found; permission denied vs a refused API key).

Each cause is a list of wordings; ``{slot}`` fields are filled from :data:`SLOTS`, so
one wording yields many raw errors and (after normalisation) usually one template,
while two wordings of one cause are two templates that only meaning can merge.
Written for this evaluation (the wordings follow the tools' real messages); the
clustering was tuned on it, so the real dumps are the independent check.
"""

from __future__ import annotations

import random
import re

CAUSES: dict[str, list[str]] = {
    "missing python module": [
        "ModuleNotFoundError: No module named '{module}'",
        "ImportError: No module named {module}",
        "ModuleNotFoundError: No module named '{module}.{sub}'; '{module}' is not a package",
    ],
    "missing node module": [
        "Error: Cannot find module '{module}'",
        "npm ERR! code MODULE_NOT_FOUND npm ERR! Cannot find module '{module}' from '{path}'",
    ],
    "file not found": [
        "FileNotFoundError: [Errno 2] No such file or directory: '{path}'",
        "cat: {path}: No such file or directory",
        "ls: cannot access '{path}': No such file or directory",
    ],
    "permission denied": [
        "PermissionError: [Errno 13] Permission denied: '{path}'",
        "bash: {path}: Permission denied",
        "cp: cannot create regular file '{path}': Permission denied",
    ],
    "disk full": [
        "OSError: [Errno 28] No space left on device: '{path}'",
        "write error: No space left on device",
        "fatal: unable to write new index file: No space left on device",
    ],
    "killed: out of memory": [
        "exit code 137: Killed",
        "bash: line 1: {n} Killed python {path}",
        "MemoryError: Unable to allocate {n}.{m} GiB for an array with shape ({n}, {m}) and data type float64",
    ],
    "command timed out": [
        "Command timed out after {n} seconds",
        "subprocess.TimeoutExpired: Command '{command}' timed out after {n} seconds",
        "The command was killed after exceeding the time limit of {n}s",
    ],
    "model API timeout": [
        "Timeout: litellm.Timeout: Timeout Error: DeepseekException - Connection timed out after {n}.0 seconds.",
        "openai.APITimeoutError: Request timed out.",
        "httpx.ReadTimeout: The read operation timed out while waiting for the model API",
    ],
    "rate limited": [
        "RateLimitError: Error code: 429 - Rate limit reached for requests per minute (RPM): Limit {n}, Used {m}",
        "litellm.RateLimitError: AnthropicException - Number of request tokens has exceeded your per-minute rate limit",
        "HTTP 429 Too Many Requests: slow down and retry after {n} seconds",
    ],
    "SSL connection dropped": [
        "InternalServerError: litellm.InternalServerError: DeepseekException - [SSL: UNEXPECTED_EOF_WHILE_READING] EOF "
        "occurred in violation of protocol (_ssl.c:{n})",
        "ssl.SSLEOFError: EOF occurred in violation of protocol (_ssl.c:{n})",
    ],
    "connection refused": [
        "ConnectionRefusedError: [Errno 111] Connection refused",
        "curl: (7) Failed to connect to {host} port {port} after {n} ms: Connection refused",
        "psycopg2.OperationalError: could not connect to server: Connection refused. Is the server running on host "
        "'{host}' and accepting TCP/IP connections on port {port}?",
    ],
    "host name not resolved": [
        "socket.gaierror: [Errno -2] Name or service not known",
        "curl: (6) Could not resolve host: {host}",
        "getaddrinfo ENOTFOUND {host}",
    ],
    "syntax error": [
        "SyntaxError: invalid syntax ({file}, line {n})",
        "SyntaxError: unexpected EOF while parsing",
        "SyntaxError: '(' was never closed",
    ],
    "indentation error": [
        "IndentationError: unexpected indent",
        "IndentationError: expected an indented block after 'if' statement on line {n}",
        "TabError: inconsistent use of tabs and spaces in indentation",
    ],
    "undefined name": [
        "NameError: name '{name}' is not defined",
        "NameError: name '{name}' is not defined. Did you mean: '{name2}'?",
    ],
    "missing attribute": [
        "AttributeError: '{cls}' object has no attribute '{name}'",
        "AttributeError: module '{module}' has no attribute '{name}'",
    ],
    "wrong call arguments": [
        "TypeError: {name}() takes {n} positional arguments but {m} were given",
        "TypeError: {name}() missing 1 required positional argument: '{name2}'",
        "TypeError: {name}() got an unexpected keyword argument '{name2}'",
    ],
    "missing key": [
        "KeyError: '{name}'",
    ],
    "index out of range": [
        "IndexError: list index out of range",
        "IndexError: index {n} is out of bounds for axis 0 with size {m}",
    ],
    "test assertion failed": [
        "AssertionError: assert {n} == {m}",
        "FAILED tests/test_{name}.py::test_{name2} - AssertionError: expected {n} but got {m}",
        "E       assert {n} == {m}",
    ],
    "merge conflict": [
        "CONFLICT (content): Merge conflict in {path}",
        "error: could not apply {hex}... {name}: merge conflict in {path}",
    ],
    "patch does not apply": [
        "error: patch failed: {path}:{n}",
        "error: {path}: patch does not apply",
        "Hunk #{n} FAILED at {m}. 1 out of {n} hunks FAILED -- saving rejects to file {path}.rej",
    ],
    "invalid JSON": [
        "json.decoder.JSONDecodeError: Expecting value: line {n} column {m} (char {k})",
        "JSONDecodeError: Expecting property name enclosed in double quotes: line {n} column {m}",
        "SyntaxError: Unexpected token < in JSON at position {n}",
    ],
    "text encoding error": [
        "UnicodeDecodeError: 'utf-8' codec can't decode byte 0x{hexbyte} in position {n}: invalid start byte",
        "UnicodeEncodeError: 'ascii' codec can't encode character '\\u{hex4}' in position {n}: ordinal not in range(128)",
    ],
    "context window exceeded": [
        "ContextWindowExceededError: This model's maximum context length is {n} tokens. However, your messages "
        "resulted in {m} tokens.",
        "BadRequestError: prompt is too long: {m} tokens > {n} maximum",
        "litellm.ContextWindowExceededError: input length exceeds the context window of the model",
    ],
    "step limit reached": [
        "LimitsExceeded: the agent reached the step limit of {n} steps",
        "no reward evaluation: the episode stopped after {n} messages without the user ending it (step limit?)",
        "max_iterations reached: stopped after {n} turns without a final answer",
    ],
    "cost limit reached": [
        "LimitsExceeded: cost limit exceeded: ${n}.{m} > ${k}.00",
        "Budget exhausted: this run spent ${n}.{m} of its ${k} budget",
    ],
    "invalid API key": [
        "AuthenticationError: Incorrect API key provided: sk-...{hex4}. You can find your API key at {url}",
        "openai.AuthenticationError: Error code: 401 - invalid x-api-key",
    ],
    "command not found": [
        "bash: {command}: command not found",
        "/bin/sh: 1: {command}: not found",
        "zsh: command not found: {command}",
    ],
    "address already in use": [
        "OSError: [Errno 98] Address already in use",
        "Error: listen EADDRINUSE: address already in use :::{port}",
    ],
    "segmentation fault": [
        "Segmentation fault (core dumped)",
        "Fatal Python error: Segmentation fault",
    ],
    "infinite recursion": [
        "RecursionError: maximum recursion depth exceeded while calling a Python object",
        "RecursionError: maximum recursion depth exceeded in comparison",
    ],
    "division by zero": [
        "ZeroDivisionError: division by zero",
        "ZeroDivisionError: float division by zero",
    ],
    "bad number conversion": [
        "ValueError: invalid literal for int() with base 10: '{name}'",
        "ValueError: could not convert string to float: '{name}'",
    ],
    "package version not found": [
        "ERROR: Could not find a version that satisfies the requirement {module}=={version}",
        "ERROR: No matching distribution found for {module}=={version}",
    ],
    "database state differs": [
        "reward 0.0: final database state differs from the expected one",
    ],
    "outputs never given": [
        "reward 0.0: expected outputs never given to the user: {n}, {m}",
    ],
    "payment does not add up": [
        "book_reservation -> Error: payment amount does not add up, total price is {n}, but paid {m}",
    ],
    "balance not enough": [
        "update_reservation_flights -> Error: gift card balance is not enough",
        "book_reservation -> Error: not enough balance in payment method gift_card_{k}",
    ],
    "no seats left": [
        "update_reservation_flights -> Error: not enough seats on flight HAT{k}",
    ],
    "flight not available": [
        "update_reservation_flights -> Error: flight HAT{k} not available on date 2024-05-{day}",
    ],
}

_MODULES = ["yaml", "requests", "numpy", "pandas", "flask", "django", "torch", "attr", "dateutil", "lxml", "boto",
            "jinja", "scipy", "pytest", "sqlalchemy", "express", "lodash", "react", "chalk", "axios"]
_NAMES = ["user_id", "config", "total", "handler", "parse_args", "items", "session", "result", "payload", "value",
          "retries", "timeout", "model", "rows", "data", "name", "path", "token", "cursor", "state"]
_CLASSES = ["NoneType", "str", "dict", "list", "DataFrame", "Response", "Path", "Client", "Session", "int"]
_COMMANDS = ["python3 run.py", "pytest -x", "make test", "npm test", "cargo build", "go test ./...", "jq", "rg",
             "poetry", "yarn", "pnpm", "tox", "mvn", "gradle", "bun"]
_HOSTS = ["api.example.com", "db.internal", "localhost", "redis", "registry.npmjs.org", "pypi.org", "10.0.0.12",
          "github.com", "auth.service.local", "minio"]
_DIRS = ["src", "app", "tests", "lib", "pkg", "scripts", "config", "data", "build", "docs"]
_FILES = ["main.py", "utils.py", "settings.yaml", "config.json", "index.js", "setup.cfg", "README.md", "models.py",
          "views.py", "conftest.py"]


def _path(rng: random.Random) -> str:
    parts = [rng.choice(_DIRS) for _ in range(rng.randint(1, 3))]
    lead = rng.choice(["/", "./", "", "/tmp/"])
    return lead + "/".join(parts) + "/" + rng.choice(_FILES)


def _fill(field: str, rng: random.Random) -> str:
    name = field.rstrip("0123456789")
    if name == "module":
        return rng.choice(_MODULES)
    if name == "sub":
        return rng.choice(["core", "utils", "api", "v2", "compat"])
    if name == "path":
        return _path(rng)
    if name == "file":
        return rng.choice(_FILES)
    if name == "name":
        return rng.choice(_NAMES)
    if name == "cls":
        return rng.choice(_CLASSES)
    if name == "command":
        return rng.choice(_COMMANDS).split()[0]
    if name == "host":
        return rng.choice(_HOSTS)
    if name == "port":
        return str(rng.choice([80, 443, 5432, 6379, 8000, 8080, 9000, 19530]))
    if name == "url":
        return f"https://{rng.choice(_HOSTS)}/{rng.choice(_DIRS)}"
    if name == "hex":
        return "".join(rng.choice("0123456789abcdef") for _ in range(rng.choice([7, 12, 40])))
    if name == "hex4":
        return "".join(rng.choice("0123456789abcdef") for _ in range(4))
    if name == "hexbyte":
        return "".join(rng.choice("89abcdef") + rng.choice("0123456789abcdef"))
    if name == "version":
        return f"{rng.randint(0, 5)}.{rng.randint(0, 30)}.{rng.randint(0, 9)}"
    if name == "day":
        return f"{rng.randint(10, 28)}"
    if name == "k":
        return str(rng.randint(100, 9_999_999))
    return str(rng.randint(1, 5000))


_FIELD = re.compile(r"\{(\w+)\}")


def make_error(cause: str, rng: random.Random, wording: int | None = None) -> tuple[str, int]:
    """One raw error of ``cause`` (a random wording, or ``wording``), and the wording's number."""
    wordings = CAUSES[cause]
    number = rng.randrange(len(wordings)) if wording is None else wording
    text = _FIELD.sub(lambda m: _fill(m.group(1), rng), wordings[number])
    return text, number


_WORDS = ("request handler queue worker cache index shard lease token session socket buffer stream frame "
          "schema column table record batch job task step plugin adapter driver client server proxy gateway "
          "config profile secret mount volume image layer build target bundle module package symbol thread "
          "lock mutex channel signal event hook callback retry budget window cursor offset page branch commit "
          "invalid unexpected missing stale corrupt duplicate empty closed expired rejected unknown broken "
          "overflow underflow mismatch conflict unreachable unsupported malformed detached orphaned").split()


def noise_error(rng: random.Random) -> str:
    """A one-off error of no known cause (the long tail: each its own template), in real words."""
    words = [rng.choice(_WORDS) for _ in range(6)]
    return f"{words[0].capitalize()}{words[1].capitalize()}Error: {' '.join(words[2:])}"


def labelled_errors(per_cause: int = 30, seed: int = 7) -> list[tuple[str, str]]:
    """(raw error, cause) pairs: ``per_cause`` of each cause, every wording represented."""
    rng = random.Random(seed)
    out = []
    for cause, wordings in CAUSES.items():
        for i in range(per_cause):
            text, _ = make_error(cause, rng, wording=i % len(wordings))
            out.append((text, cause))
    return out

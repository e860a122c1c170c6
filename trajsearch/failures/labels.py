"""Readable mode labels: a well-known cause's name, else the mode's most specific clause.

People scan a list of modes by their labels ("missing Python module", "disk full");
the table of well-known causes lives here, and it also says which failures are one
mode (:func:`known_cause`), so a new cause is one line in one place.
"""

from __future__ import annotations

import re

from .templates import _CLAUSES, _PREAMBLE, _TOOL_ARROW


#: Well-known causes, tried in order on a template's most specific clause: the failures of one are
#: one mode of that name; any other mode is labelled with its own most specific clause
#: (``not enough seats on flight <id>``).
KNOWN_CAUSES: list[tuple[re.Pattern[str], str]] = [(re.compile(p, re.I), label) for p, label in [
    (r"No module named|ModuleNotFoundError", "missing Python module"),
    (r"Cannot find module|(?-i:\bMODULE_NOT_FOUND\b)", "missing Node module"),
    (r"No space left on device|(?-i:\bENOSPC\b)", "disk full"),
    (r"exit(?: code| status)? 137|(?-i:\bOOM\b)|out of memory|MemoryError|(?-i:\bKilled\b)", "killed: out of memory"),
    (r"Segmentation fault|exit(?: code| status)? 139|(?-i:\bSIGSEGV\b)", "segmentation fault"),
    (r"context (?:length|window)|prompt is too long|maximum context", "context window exceeded"),
    (r"RateLimit|\b429\b|Too Many Requests|rate limit", "rate limited"),
    # a certificate that fails verification (a proxy, a missing CA) is configuration; a dropped TLS connection is
    # the network or the server: one word, SSL, but two causes
    (r"CERTIFICATE_VERIFY_FAILED|certificate verify failed|SSLCertVerificationError", "SSL certificate not trusted"),
    (r"SSLEOFError|EOF occurred in violation of protocol|UNEXPECTED_EOF|SSLZeroReturnError", "SSL connection dropped"),
    # a model API's timeout names the SDK or the API; any other request timing out (pip reaching pypi.org) is not one
    (r"(?:(?-i:\bAPI)|litellm|openai|anthropic|model).{0,40}(?:timed out|Timeout)"
     r"|Timeout.{0,60}(?:(?-i:\bAPI\b)|litellm|openai|anthropic|model|\w+Exception\b)", "model API timeout"),
    (r"(?-i:Connect|Read)Timeout|connect timeout|Connection timed out|Read timed out|(?-i:\bETIMEDOUT\b)",
     "network request timed out"),
    (r"timed out|TimeoutExpired|time limit", "command timed out"),
    (r"Connection refused|(?-i:\bECONNREFUSED\b)", "connection refused"),
    (r"Name or service not known|Could not resolve host|(?-i:\bENOTFOUND\b)|getaddrinfo", "host name not resolved"),
    (r"Address already in use|(?-i:\bEADDRINUSE\b)", "address already in use"),
    (r"AuthenticationError|\b401\b|API key", "invalid API key"),
    (r"Permission denied|PermissionError|(?-i:\bEACCES\b)", "permission denied"),
    (r"No such file or directory|FileNotFoundError|(?-i:\bENOENT\b)", "file not found"),
    (r"command not found|: not found$", "command not found"),
    (r"IndentationError|TabError", "indentation error"),
    (r"JSONDecodeError|in JSON at position", "invalid JSON"),
    (r"SyntaxError", "syntax error"),
    (r"Unicode(?:De|En)codeError|codec can't", "text encoding error"),
    (r"RecursionError|maximum recursion depth", "infinite recursion"),
    (r"ZeroDivisionError", "division by zero"),
    (r"NameError", "undefined name"),
    (r"AttributeError", "missing attribute"),
    (r"KeyError", "missing key"),
    (r"IndexError", "index out of range"),
    (r"(?-i:\bCONFLICT\b)|merge conflict", "merge conflict"),
    (r"patch failed|patch does not apply|hunks? FAILED", "patch does not apply"),
    (r"AssertionError|\bassert\b|tests? failed", "test assertion failed"),
    (r"step limit|max_iterations|max turns", "step limit reached"),
    (r"cost limit|budget", "cost limit reached"),
]]


def known_cause(template: str) -> str | None:
    """The well-known cause a template names (its label in :data:`KNOWN_CAUSES`), if any.

    The failures of one well-known cause are one mode, however it is worded
    (``No module named pytest`` from ``python -m``, ``ModuleNotFoundError``), so the
    table is both the modes' names and the families they group. On the labelled corpus
    (``scripts/failure_corpus.py``) 960 of the 1,230 errors name one, and no family holds
    two causes; clustering by meaning had split "missing Python module" in two on real runs.
    So a pattern must be as narrow as its cause: a word two causes share (``SSL``, ``Request
    ... Timeout``) had put certificate failures with dropped connections, pip's timeouts with
    the model API's.
    """
    specific = _specific(template)
    return next((label for pattern, label in KNOWN_CAUSES if pattern.search(specific)), None)


def label_for(template: str) -> str:
    """A short readable name for a mode, from its most frequent template."""
    cause = known_cause(template)
    if cause:
        return cause
    specific = re.sub(r"^(?:Error|error|ERROR)\s*:\s*", "", _specific(template)).strip()
    return specific if len(specific) <= 80 else specific[:79].rstrip() + "…"


def _specific(template: str) -> str:
    """A template's most specific clause, without a tool prefix or a grader's preamble."""
    clauses = [c for c in _CLAUSES.split(template) if c.strip()] or [template]
    return _PREAMBLE.sub("", _TOOL_ARROW.sub("", clauses[-1])).strip()

"""Failure modes: the failed runs inside the filters, grouped by cause, counted, trended, with examples.

:func:`failure_modes` reads the ``failure`` rows of a tenant inside the filters
(the façade's ``rows``), takes each row's decisive error (its ``Error:`` section)
and groups them in two steps:

1. **Template.** :func:`error_template` abstracts what varies between occurrences
   of one cause: URLs, e-mails, UUIDs, dates, times, quoted names, paths, host
   names, hex, ids, numbers (``No module named 'yaml'`` and ``'requests'`` are one
   template); numbers that name a kind of error stay (``exit code 137``,
   ``[Errno 28]``, ``HTTP 429``). Rows of one template always share a mode.
2. **Meaning.** Each distinct template is embedded through its
   :func:`meaning_text` (the most specific ``;`` clause, in words: no tool prefix,
   grader preamble, vendor wrapper or placeholders) with the store's own model
   (``embed``), and the meanings are clustered: agglomerative clustering,
   average linkage, cosine distance cut at 0.4 (:class:`ModeConfig`), so
   paraphrases of one cause merge (``ImportError: No module named requests``
   joins ``ModuleNotFoundError: No module named <name>``) while different causes
   in shared words stay apart (``No such file or directory: 'config.yaml'``;
   ``SyntaxError`` vs ``IndentationError``).

Why this clustering (``scripts/failure_modes.py --eval``, all-MiniLM-L6-v2; the
labelled corpus ``scripts/failure_corpus.py``: 1,230 errors of 41 causes written
95 ways, 143 templates; the real dumps: 126 failures, 15 templates; times on
this shared 2-core machine)::

    method (meaning vectors)      corpus modes  purity  inverse  real modes  real purity  2,201 templates
    agglomerative average t=0.4        75        0.967    0.752       10         0.944         0.7 s
    agglomerative average t=0.3        96        0.977    0.658       11         0.960         0.8 s
    agglomerative average t=0.45       65        0.902    0.789       10         0.944         0.7 s
    agglomerative complete t=0.5       65        0.927    0.802        9         0.921         0.7 s
    agglomerative single t=0.2        112        0.985    0.589       12         0.968         0.6 s
    HDBSCAN min_cluster_size=2         67        0.841    0.812        5         0.770         0.5 s
    HDBSCAN min_cluster_size=3         72        0.849    0.679        9         0.921         0.4 s
    Birch threshold=0.6                51        0.780    0.843        7         0.841         1.2 s

Purity: each mode's share of its most common cause (corpus) or exact template
(real), over all failures; inverse purity: each cause's share in its largest mode
(how completely paraphrases merged). Average linkage at 0.4 keeps purity at 0.97
and 0.94 while merging most paraphrases; HDBSCAN merges more but mixes causes
(0.84) and, on the 15 real templates, folds different tau-bench causes together
(0.77): density has little to work with when most causes have one or two
wordings, and its noise points need a rule of their own. A distance threshold
says what it means ("at most this far apart on average") and needs no number of
modes. Clustering all of a 100k-row analysis' distinct meanings takes under a
second; past ``max_cluster`` (3,000) distinct meanings, further ones join the
nearest mode within the threshold or are clustered among themselves, and past
``max_embed`` (1,000) the rarest are grouped by exact template only (counted in
``FailureReport.rare``: 1.1% of the failures in the 100k-row benchmark).

What is embedded matters more than the algorithm: the same clustering on the raw
template text gets purity 0.756 (corpus) and 0.754 (real: 4 modes; shared
``reward 0.0: final database state differs...`` preambles pull different tau-bench
causes together), and on the failure rows' own vectors (task + error + cause,
averaged per template) 0.659 at this threshold and 0.881 at 0.2: the task text
dominates them. So the rows' vectors are not used for grouping, only the
templates' meanings.

Per mode: a readable label (a well-known cause such as "missing Python module",
else its most specific clause), count, share of the period's failures, the
previous period of the same length (``since``) and the trend, env versions,
the failing step's tool, models and tools (read from the traces of up to
``model_sample`` runs per mode: index rows carry no model id), the templates
it holds, and example runs, most representative first (the template nearest the
mode's centroid, its latest run; then the next templates).

Cost at 100k failure rows (``scripts/failure_modes.py --synthetic 100000``, since=7d
over 14 days of rows, 2,300 distinct meanings): median 43.5 s over 5 runs (36.5-61.2 s)
on this 2-core machine at load average 6-7 from other jobs; 27.9 s when the process
has embedded the meanings before. Reading the rows dominates (Milvus Lite scans the
collection once per 16k-row page: ~12 s of CPU, twice that under load); the
distinct meanings are embedded on a thread while the rows are still being read,
and a process that asks again embeds only what is new (:data:`_CACHE`). Reading
5 row fields instead of 9, caching templates on digit-masked errors and capping
the embedded meanings at 1,000 are what keep it under a minute under that load
(the first version took a median 83 s at load average 10).
"""

from __future__ import annotations

import contextvars
import hashlib
import queue
import re
import threading
import time
from collections import Counter, OrderedDict
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from datetime import datetime, timedelta, timezone
from typing import TYPE_CHECKING, Any, Iterable, Sequence

from .store.filters import Filters

if TYPE_CHECKING:
    import numpy as np

# -- error text -> template --------------------------------------------------------------

_SPACE = re.compile(r"\s+")
#: Numbers that name a kind of error rather than data: exit codes, errno, HTTP status, signals.
_KEPT_NUMBER = re.compile(
    r"(?P<kw>\b(?:exit(?:ed)?(?: with)?(?: code| status)?|return ?code|returncode|status(?: code)?|error code|"
    r"errno|http(?:/\d(?:\.\d)?)?|signal|code)\s*[:=]?\s*\[?)(?P<num>-?\d{1,3})\b",
    re.I,
)
_PRIVATE = "\ue000"  # brackets a kept number while the other rules run (no rule matches it)
_DIGIT_WORD = str.maketrans("0123456789-", "abcdefghijz")
_SUBSTITUTIONS: list[tuple[re.Pattern[str], str]] = [
    (re.compile(r"\b[a-z][a-z0-9+.-]*://[^\s'\"<>)\]]+", re.I), "<url>"),
    (re.compile(r"\b[\w.+-]+@[\w-]+\.[\w.-]+\b"), "<email>"),
    (re.compile(r"\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b", re.I), "<uuid>"),
    (re.compile(r"\b\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?)?\b"), "<date>"),
    (re.compile(r"\b\d{1,2}:\d{2}:\d{2}(?:\.\d+)?\b"), "<time>"),
    # quoted names ('yaml', "user_id", `src/app.py`); a quoted sentence keeps its words
    (re.compile(r"'[^'\s]{1,200}'|\"[^\"\s]{1,200}\"|`[^`\s]{1,200}`|‘[^’\s]{1,200}’"), "<name>"),
    # paths: /abs/x, ./rel, ~/x, C:\x, a/b/c, file.py:12
    (re.compile(
        r"(?:\b[A-Za-z]:\\|~?/|\.{1,2}/)[\w.@%+=:,~/\\-]*[\w/]"
        r"|\b[\w.-]+(?:/[\w.@+-]+)+(?:::[\w\[\]-]+)*"
        r"|\b[\w-]+\.(?:py|pyc|js|mjs|ts|tsx|c|h|cc|cpp|hpp|go|rs|java|kt|rb|php|json|ya?ml|toml|txt|cfg|ini|sh|"
        r"log|md|csv|html|xml|lock|so|whl)(?::\d+|::[\w\[\]-]+)*\b"
    ), "<path>"),
    # host names (api.example.com, db.internal) and requirement names (flask==1.2)
    (re.compile(r"\b(?:[a-z0-9-]+\.)+(?:com|org|net|io|dev|ai|app|cloud|co|local|internal|localdomain)\b", re.I),
     "<host>"),
    (re.compile(r"\b[A-Za-z][\w.-]*(?=(?:==|>=|<=|~=|!=)\d)"), "<name>"),
    # called names: parse_args(), Client.get()
    (re.compile(r"\b[A-Za-z_][\w.]*(?=\(\))"), "<name>"),
    (re.compile(r"\b\d+(?:\.\d+)?(?=(?:ms|s|m|h|d|k|[kmg]i?b)\b)", re.I), "<n>"),
    (re.compile(r"\b0x[0-9a-f]+\b", re.I), "<hex>"),
    (re.compile(r"\b(?=[0-9a-f]*\d)(?=[0-9a-f]*[a-f])[0-9a-f]{7,}\b", re.I), "<hex>"),
    # ids: words of letters and at least 3 digits (HAT223, gift_card_8190333), capitals and 2+ digits
    # (HAT29, AB12); not names like urllib3, utf8, boto3
    (re.compile(r"\b(?=[\w-]*[A-Za-z])(?=(?:[\w-]*?\d){3})\w[\w-]*\b|\b[A-Z]{2,}\d{2,}\b"), "<id>"),
    (re.compile(r"[-+]?\b\d+(?:[.,]\d+)*(?:e[-+]?\d+)?\b", re.I), "<n>"),
]
#: A list of one placeholder (``<n>, <n>, <n>``) reads as one.
_REPEATED = re.compile(r"<(\w+)>(?:(?:\s*[,;/|]\s*|\s+(?:and|or)\s+|\s+)<\1>)+")
TEMPLATE_CHARS = 300


def error_template(error: str, limit: int = TEMPLATE_CHARS) -> str:
    """``error`` with what varies between occurrences of one cause abstracted.

    URLs, e-mails, UUIDs, dates and times, quoted names, paths, hex, ids (words
    mixing letters and digits) and numbers become ``<url>``, ``<name>``,
    ``<path>``, ``<hex>``, ``<id>``, ``<n>``...; numbers that name the kind of
    error (``exit code 137``, ``[Errno 28]``, ``HTTP 429``, ``signal 9``) stay.
    Whitespace collapses; the result is cut to ``limit`` characters.

    >>> error_template("ModuleNotFoundError: No module named 'yaml'")
    'ModuleNotFoundError: No module named <name>'
    >>> error_template("flight HAT223 not available on 2024-05-14; exit code 137")
    'flight <id> not available on <date>; exit code 137'
    """
    text = _SPACE.sub(" ", error[: limit * 4]).strip()
    text = _KEPT_NUMBER.sub(lambda m: m["kw"] + _PRIVATE + m["num"].translate(_DIGIT_WORD) + _PRIVATE, text)
    for pattern, replacement in _SUBSTITUTIONS:
        text = pattern.sub(replacement, text)
    text = _REPEATED.sub(r"<\1>", text)
    if _PRIVATE in text:
        back = str.maketrans("abcdefghijz", "0123456789-")
        text = re.sub(f"{_PRIVATE}([a-jz]+){_PRIVATE}", lambda m: m[1].translate(back), text)
    return text[:limit].strip()


_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")
_CLAUSES = re.compile(r";\s+")
#: ``<tool> -> <error>``: how tool errors are written into failures (tau-bench, tau2 adapters).
_TOOL_ARROW = re.compile(r"^\s*(?:last tool error:\s*)?[\w.-]+\s*->\s*")
#: A grader's preamble (``reward 0.0:``) says how the run was scored, not why it failed.
_PREAMBLE = re.compile(r"^\s*reward <n>:\s*")
#: Vendor wrapper names (``DeepseekException``, ``litellm.``): the same cause through another SDK.
_VENDOR = re.compile(r"\b\w*(?:deepseek|openai|anthropic|azure|bedrock|vertex|gemini|litellm|mistral)\w*\b", re.I)
_MODULE_PREFIX = re.compile(r"\b(?:[a-z_]\w*\.)+(?=[A-Za-z])")
_NOT_TEXT = re.compile(r"[^\w\s'?!.,:()-]")


def meaning_text(template: str) -> str:
    """What of a template is embedded: its most specific clause, in words.

    The last ``;`` clause (an error chain ends in its most specific error:
    ``...differs...; last tool error: X -> Error: not enough seats``), without the
    tool prefix, a grader's ``reward <n>:`` preamble, vendor wrapper names and
    module paths; placeholders dropped and CamelCase split (``ModuleNotFoundError``
    -> ``Module Not Found Error``), so the model reads words. Measured on the
    labelled corpus: nearest-neighbour cause accuracy 0.74 on raw templates, 0.81
    on this text; on the real dumps template purity 0.78 -> 0.94 at the same
    threshold (shared preambles had pulled different causes together).
    """
    clauses = [c for c in _CLAUSES.split(template) if c.strip()]
    text = clauses[-1] if clauses else template
    text = _PREAMBLE.sub("", _TOOL_ARROW.sub("", text))
    text = re.sub(r"<\w+>", " ", text)
    text = _VENDOR.sub(" ", text)
    text = _MODULE_PREFIX.sub("", text)
    text = _CAMEL.sub(" ", text).replace("_", " ")
    text = _NOT_TEXT.sub(" ", text)
    words: list[str] = []
    for word in text.split():
        if words and word.lower().strip(":,.-") == words[-1].lower().strip(":,.-"):
            continue  # "Timeout: Timeout Error" -> one "Timeout"
        words.append(word)
    text = re.sub(r"(?:\s*[:,.-]\s*)+(?=[:,.-]|$)", "", " ".join(words))
    return _SPACE.sub(" ", text).strip(" :-") or template


#: The labelled lines of a failure row after its error (see represent.failure_text).
_AFTER_ERROR = re.compile(r"\n(?:Cause|Fix|What failed|Failing step): ")
_FAILING_STEP = re.compile(r"\nFailing step: ([^\s]+)")


def row_error(text: str) -> str:
    """The decisive error of a ``failure`` row: the ``Error:`` section of its text."""
    start = text.find("\nError: ")
    if start < 0:
        return text[len("Error: "):].strip() if text.startswith("Error: ") else text.strip()
    body = text[start + len("\nError: "):]
    end = _AFTER_ERROR.search(body)
    return (body[: end.start()] if end else body).strip()


def row_task(text: str) -> str:
    """The (clipped) task of a ``failure`` row."""
    start = text.find("\nError: ")
    return text[:start].removeprefix("Task: ").strip() if start >= 0 else ""


def row_failing_tool(text: str) -> str | None:
    """The tool of the failing step named in a ``failure`` row, if any."""
    match = _FAILING_STEP.search(text)
    return match.group(1) if match else None


# -- readable labels ---------------------------------------------------------------------

#: Well-known causes, tried in order on a mode's most frequent template; anything else is
#: labelled with its own most specific clause (``not enough seats on flight <id>``).
KNOWN_CAUSES: list[tuple[re.Pattern[str], str]] = [(re.compile(p, re.I), label) for p, label in [
    (r"No module named|ModuleNotFoundError", "missing Python module"),
    (r"Cannot find module|(?-i:\bMODULE_NOT_FOUND\b)", "missing Node module"),
    (r"No space left on device|(?-i:\bENOSPC\b)", "disk full"),
    (r"exit(?: code| status)? 137|(?-i:\bOOM\b)|out of memory|MemoryError|(?-i:\bKilled\b)", "killed: out of memory"),
    (r"Segmentation fault|exit(?: code| status)? 139|(?-i:\bSIGSEGV\b)", "segmentation fault"),
    (r"context (?:length|window)|prompt is too long|maximum context", "context window exceeded"),
    (r"RateLimit|\b429\b|Too Many Requests|rate limit", "rate limited"),
    (r"\bSSL\b|EOF occurred in violation of protocol", "SSL connection dropped"),
    (r"(?:API|Request|read operation|litellm|model).{0,40}(?:timed out|Timeout)|Timeout.{0,60}(?:API|Exception)",
     "model API timeout"),
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


def label_for(template: str) -> str:
    """A short readable name for a mode, from its most frequent template."""
    specific = _specific(template)
    for pattern, label in KNOWN_CAUSES:
        if pattern.search(specific):
            return label
    specific = re.sub(r"^(?:Error|error|ERROR)\s*:\s*", "", specific).strip()
    return specific if len(specific) <= 80 else specific[:79].rstrip() + "…"


# -- results -----------------------------------------------------------------------------


@dataclass
class FailureExample:
    """One run of a mode, with where to find it."""

    trajectory_id: str
    trace_uri: str
    error: str
    task: str = ""
    env_version: str = ""
    model: str = ""  # from the run's trace ("" when the trace could not be read)
    created_at: int = 0
    similarity: float = 0.0  # cosine of its error's meaning to the mode's centroid

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class FailureMode:
    """Failures of one cause inside the filters: how many, where, how it moves, and examples."""

    mode_id: str
    label: str
    count: int
    share: float  # of the period's failures
    previous: int | None = None  # in the previous period of the same length (None: no period given)
    trend: str = ""  # new | up | down | flat ("" without a period)
    change: float | None = None  # (count - previous) / previous
    env_versions: dict[str, int] = field(default_factory=dict)
    models: dict[str, int] = field(default_factory=dict)  # of the runs whose trace was read
    models_sampled: int = 0  # how many runs of the mode ``models`` and ``tools`` count (their traces read)
    tools: dict[str, int] = field(default_factory=dict)  # of those runs: how many used each tool
    failing_tools: dict[str, int] = field(default_factory=dict)  # tool of the failing step
    templates: list[dict[str, Any]] = field(default_factory=list)  # {"template", "count"}, most first
    examples: list[FailureExample] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["examples"] = [e.to_dict() for e in self.examples]
        return data


@dataclass
class FailureReport:
    """The failure modes of one tenant inside the filters, most frequent first."""

    tenant: str
    since: int | None  # epoch seconds; None: all time
    until: int
    total: int  # failures in the period
    previous_total: int | None = None
    modes: list[FailureMode] = field(default_factory=list)
    other_modes: int = 0  # modes beyond ``limit``
    other_failures: int = 0  # failures in those
    templates: int = 0  # distinct error templates in the period
    rare: int = 0  # failures of the period whose meaning was too rare to embed (grouped by template only)
    seconds: float = 0.0

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["modes"] = [m.to_dict() for m in self.modes]
        return data


# -- periods -----------------------------------------------------------------------------

_DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(s|m|min|h|d|w)?\s*$", re.I)
_UNIT = {"s": 1, "m": 60, "min": 60, "h": 3600, "d": 86400, "w": 604800}


def parse_duration(value: str | int | float | timedelta) -> int:
    """``7d``, ``24h``, ``2w``, ``90m``, ``3600`` (seconds) or a timedelta -> whole seconds (> 0)."""
    if isinstance(value, timedelta):
        seconds = value.total_seconds()
    elif isinstance(value, (int, float)) and not isinstance(value, bool):
        seconds = float(value)
    elif isinstance(value, str) and (match := _DURATION.match(value)):
        seconds = float(match.group(1)) * _UNIT[(match.group(2) or "s").lower()]
    else:
        raise ValueError(f"since: expected a duration like 7d, 24h, 2w or seconds, got {value!r}")
    if not 0 < seconds <= 100 * 365 * 86400:
        raise ValueError(f"since: must be more than 0 and at most 100 years, got {value!r}")
    return int(seconds)


def parse_time(value: str | int | datetime | None) -> int | None:
    """An ISO date/time (``2026-05-01``, ``2026-05-01T12:00Z``), epoch seconds or a datetime -> epoch seconds."""
    if value is None:
        return None
    if isinstance(value, datetime):
        return int((value if value.tzinfo else value.replace(tzinfo=timezone.utc)).timestamp())
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    if isinstance(value, str):
        try:
            moment = datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
        except ValueError:
            raise ValueError(f"until: expected an ISO date or time like 2026-05-01, got {value!r}") from None
        return parse_time(moment)
    raise ValueError(f"until: expected an ISO date or time, got {value!r}")


# -- configuration -----------------------------------------------------------------------


@dataclass(frozen=True)
class ModeConfig:
    """How failures are grouped (the figures behind the defaults are in the module docstring)."""

    #: Average-linkage cosine distance below which two groups of templates are one cause.
    threshold: float = 0.4
    #: Distinct meanings clustered together at once (agglomerative clustering is quadratic in
    #: them); rarer ones join the nearest mode within ``threshold`` or are clustered in turn.
    max_cluster: int = 3000
    #: Distinct meanings embedded at most (the most frequent): embedding is the analysis' largest cost that
    #: grows with the tail of one-off errors (1,000 short texts: ~5 s of model time here). Rarer meanings
    #: are grouped by their exact template only; ``FailureReport.rare`` counts their failures.
    max_embed: int = 1000
    #: Runs per mode whose trace is read to name its models (rows carry no model id).
    model_sample: int = 10
    #: Traces read at most to apply a ``model`` filter (every failure in scope needs its trace).
    max_model_traces: int = 20_000
    trace_workers: int = 8
    #: Up-or-down changes smaller than this fraction of the previous count are "flat".
    flat_band: float = 0.1


#: What is read of each failure row. Every field costs decoding time at 100k rows (``tools``, an
#: array, the most); a run's tools and model come from the traces of the runs sampled per mode.
FIELDS = ["trajectory_id", "text", "env_version", "created_at", "trace_uri"]


class _VectorCache:
    """Meaning-text vectors by (embedder, text): a server asked again embeds only what is new."""

    def __init__(self, size: int = 20_000) -> None:
        self.size = size
        self._items: OrderedDict[tuple[str, str], Any] = OrderedDict()
        self._lock = threading.Lock()

    def vectors(self, embed: Any, name: str, texts: Sequence[str]) -> np.ndarray:
        import numpy as np

        with self._lock:
            missing = [t for t in dict.fromkeys(texts) if (name, t) not in self._items]
        fresh = embed(missing) if missing else []
        with self._lock:
            for text, vector in zip(missing, fresh):
                self._items[(name, text)] = np.asarray(vector, dtype=np.float32)
            out = []
            for text in texts:
                vector = self._items.get((name, text))
                if vector is None:  # evicted by a concurrent call
                    vector = np.asarray(embed([text])[0], dtype=np.float32)
                else:
                    self._items.move_to_end((name, text))
                out.append(vector)
            while len(self._items) > self.size:
                self._items.popitem(last=False)
        return np.stack(out) if out else np.zeros((0, 1), dtype=np.float32)


_CACHE = _VectorCache()


# -- clustering --------------------------------------------------------------------------


def cluster(vectors: np.ndarray, threshold: float, max_cluster: int = 3000) -> np.ndarray:
    """Cluster labels for unit ``vectors`` (rows in priority order: most frequent first).

    Agglomerative clustering, average linkage, cosine distance, cut at ``threshold``.
    Past ``max_cluster`` rows, each further block first joins the existing cluster whose
    centroid is within ``threshold`` and clusters what is left among itself.
    """
    import numpy as np

    n = len(vectors)
    labels = np.full(n, -1, dtype=np.int64)
    if n == 0:
        return labels
    next_label = 0
    centroids = np.zeros((0, vectors.shape[1]), dtype=np.float32)
    for start in range(0, n, max_cluster):
        block = np.arange(start, min(n, start + max_cluster))
        if len(centroids):
            sims = vectors[block] @ centroids.T
            best = sims.argmax(axis=1)
            near = sims[np.arange(len(block)), best] >= 1.0 - threshold
            labels[block[near]] = best[near]
            block = block[~near]
        if len(block) == 1:
            local = np.zeros(1, dtype=np.int64)
        elif len(block):
            from sklearn.cluster import AgglomerativeClustering

            local = AgglomerativeClustering(
                n_clusters=None, distance_threshold=threshold, metric="cosine", linkage="average"
            ).fit_predict(vectors[block])
        else:
            continue
        labels[block] = local + next_label
        next_label += int(local.max()) + 1
        sums = np.zeros((next_label, vectors.shape[1]), dtype=np.float32)
        np.add.at(sums, labels[labels >= 0], vectors[labels >= 0])
        centroids = sums / np.maximum(np.linalg.norm(sums, axis=1, keepdims=True), 1e-12)
    return labels


# -- the analysis ------------------------------------------------------------------------


@dataclass(slots=True)
class _Failure:
    trajectory_id: str
    trace_uri: str
    error: str
    template: str
    task: str
    failing_tool: str | None
    env_version: str
    created_at: int
    current: bool


def failure_modes(
    ts: Any,
    *,
    tenant: str,
    since: str | int | timedelta | None = None,
    until: str | int | datetime | None = None,
    env_version: str | Sequence[str] = (),
    policy_version: str | Sequence[str] = (),
    model: str | Sequence[str] = (),
    tools: str | Sequence[str] = (),
    outcome: str | Sequence[str] = (),
    limit: int | None = 20,
    examples: int = 3,
    config: ModeConfig = ModeConfig(),
) -> FailureReport:
    """The failure modes of ``tenant``'s failed runs inside the filters, most frequent first.

    ``since`` (``7d``, ``24h``...) limits the analysis to that period before ``until``
    (default now) and compares each mode with the period of the same length before it
    (``previous``, ``trend``); without it every failure counts and there is no trend.
    ``model`` keeps runs of those model ids: index rows carry none, so every failure in
    scope has its trace read (at most ``config.max_model_traces``). ``limit`` modes are
    returned (None: all); the rest are counted in ``other_modes`` / ``other_failures``.
    Uses only the façade's public verbs: ``rows``, ``embed`` and ``get_trace``.
    """
    started = time.perf_counter()
    if limit is not None and (isinstance(limit, bool) or not isinstance(limit, int) or limit < 1):
        raise ValueError(f"limit must be a whole number >= 1 (or None), got {limit!r}")
    if isinstance(examples, bool) or not isinstance(examples, int) or not 0 <= examples <= 20:
        raise ValueError(f"examples must be 0..20, got {examples!r}")
    outcomes = _strings(outcome) or ("failure", "infra_error")
    bad = set(outcomes) - {"failure", "infra_error"}
    if bad:
        raise ValueError(f"outcome: failure rows exist for failure and infra_error runs only, got {sorted(bad)}")
    end = parse_time(until) or int(time.time())
    length = parse_duration(since) if since is not None else None
    start = end - length if length else None
    filters = Filters(
        tenant=tenant, levels=("failure",), outcomes=outcomes, env_versions=_strings(env_version),
        policy_versions=_strings(policy_version), tools=_strings(tools),
        created_after=max(0, start - length) if start is not None and length else None,
    )
    prefetch = _Prefetch(ts, config.max_embed)
    try:
        failures, meaning = _read(ts, filters, start, end, prefetch)
    finally:
        prefetch.close()
    runs: dict[str, tuple[str, tuple[str, ...]] | None] = {}  # every run's, when a model filter needed them
    wanted_models = _strings(model)
    if wanted_models:
        if len(failures) > config.max_model_traces:
            raise ValueError(
                f"model: {len(failures)} failures in scope and rows carry no model id, so each needs its trace "
                f"read (at most {config.max_model_traces}): narrow with since / env_version first"
            )
        runs = _runs(ts, tenant, failures, config)
        failures = [f for f in failures if (runs.get(f.trace_uri) or ("",))[0] in wanted_models]
    current = [f for f in failures if f.current]
    report = FailureReport(tenant=tenant, since=start, until=end, total=len(current),
                           previous_total=len(failures) - len(current) if start is not None else None)
    if not current:
        report.seconds = time.perf_counter() - started
        return report

    # distinct meanings, most frequent first; rows of one template always share a mode
    weight: Counter[str] = Counter()
    for f in failures:
        weight[meaning[f.template]] += 1
    texts = [text for text, _ in weight.most_common()]
    embedded, rest = texts[: config.max_embed], texts[config.max_embed:]
    import numpy as np

    vectors = _CACHE.vectors(ts.embed, _embedder_name(ts), embedded)
    vectors = vectors / np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-12)
    labels = cluster(vectors, config.threshold, config.max_cluster)
    mode_of_text = dict(zip(embedded, labels.tolist()))
    first_free = int(labels.max()) + 1 if len(labels) else 0
    mode_of_text.update({text: first_free + n for n, text in enumerate(rest)})  # too rare to embed: their own
    unembedded = set(rest)
    report.rare = sum(1 for f in current if meaning[f.template] in unembedded)
    vector_of_text = dict(zip(embedded, vectors))

    members: dict[int, list[_Failure]] = {}
    for f in failures:
        members.setdefault(mode_of_text[meaning[f.template]], []).append(f)
    ranked = sorted(
        (m for m in members.values() if any(f.current for f in m)),
        key=lambda m: (-sum(f.current for f in m), min(f.template for f in m)),
    )
    shown = ranked if limit is None else ranked[:limit]
    report.other_modes = len(ranked) - len(shown)
    report.other_failures = sum(sum(f.current for f in m) for m in ranked[len(shown):])
    report.templates = len({f.template for f in current})
    for group in shown:
        report.modes.append(_mode(ts, tenant, group, report, start is not None, meaning, vector_of_text,
                                  runs, examples, config))
    _distinct_labels(report.modes)
    report.seconds = time.perf_counter() - started
    return report


def _distinct_labels(modes: list[FailureMode]) -> None:
    """Two modes of one well-known label (meaning kept two wordings apart) get their own wording added."""
    seen = Counter(m.label for m in modes)
    for mode in modes:
        if seen[mode.label] > 1:
            wording = _specific(mode.templates[0]["template"])
            mode.label = f"{mode.label}: {wording if len(wording) <= 70 else wording[:69].rstrip() + '…'}"


def _specific(template: str) -> str:
    """A template's most specific clause, without a tool prefix or a grader's preamble."""
    clauses = [c for c in _CLAUSES.split(template) if c.strip()] or [template]
    return _PREAMBLE.sub("", _TOOL_ARROW.sub("", clauses[-1])).strip()


def _strings(value: str | Sequence[str] | None) -> tuple[str, ...]:
    if not value:
        return ()
    return (value,) if isinstance(value, str) else tuple(value)


def _read(ts: Any, filters: Filters, start: int | None, end: int, prefetch: _Prefetch | None = None
          ) -> tuple[list[_Failure], dict[str, str]]:
    """The failure rows inside ``filters`` up to ``end``, marked current (from ``start``) or previous,
    and the meaning text of each template (handed to ``prefetch`` as soon as it is first seen)."""
    out = []
    templates: dict[str, str] = {}
    masked: dict[str, str] = {}
    meanings: dict[str, str] = {}
    for row in ts.rows(filters, FIELDS):
        created = int(row.get("created_at") or 0)
        if created > end:
            continue
        text = row.get("text") or ""
        error = row_error(text)
        template = templates.get(error)
        if template is None:
            template = templates[error] = _template(error, masked)
            if template not in meanings:
                meanings[template] = meaning_text(template)
                if prefetch is not None:
                    prefetch.add(meanings[template])
        out.append(_Failure(row["trajectory_id"], row.get("trace_uri") or "", error[:600], template,
                            row_task(text)[:300], row_failing_tool(text), row.get("env_version") or "", created,
                            start is None or created >= start))
    return out, meanings


_DIGIT = re.compile(r"\d")


def _template(error: str, masked: dict[str, str]) -> str:
    """:func:`error_template`, computed once per error with its digits masked.

    Every rule but the kept numbers (``exit code 137``) treats digits alike, so two errors
    that differ only in digits have one template: cache on the masked text (two cheap
    passes instead of fifteen) unless a kept number is in the error.
    """
    if _KEPT_NUMBER.search(error):
        return error_template(error)
    key = _DIGIT.sub("0", error)
    template = masked.get(key)
    if template is None:
        template = masked[key] = error_template(error)
    return template


class _Prefetch:
    """Embeds meaning texts on a thread while the rows are still being read.

    Reading waits on Milvus (a scan per page) and embedding on the model; on a
    2-core machine the two overlap instead of adding up. Whatever this misses (an
    error, the ``cap``) the caller embeds afterwards through the same cache.
    """

    def __init__(self, ts: Any, cap: int) -> None:
        self._embed, self._name = ts.embed, _embedder_name(ts)
        self._queue: queue.SimpleQueue[str | None] = queue.SimpleQueue()
        self._seen: set[str] = set()
        self._cap = cap
        self._thread = threading.Thread(target=self._run, name="failure-modes-embed", daemon=True)
        self._thread.start()

    def add(self, text: str) -> None:
        if text not in self._seen and len(self._seen) < self._cap:
            self._seen.add(text)
            self._queue.put(text)

    def _run(self) -> None:
        done = False
        while not done:
            item = self._queue.get()
            if item is None:
                return
            batch = [item]
            while len(batch) < 64:
                try:
                    item = self._queue.get_nowait()
                except queue.Empty:
                    break
                if item is None:
                    done = True
                    break
                batch.append(item)
            try:
                _CACHE.vectors(self._embed, self._name, batch)
            except Exception:  # noqa: BLE001 - the caller embeds what is missing and sees the error itself
                return

    def close(self) -> None:
        self._queue.put(None)
        self._thread.join()


def _embedder_name(ts: Any) -> str:
    """What cached vectors belong to: the store's embedder (its name and dimension)."""
    embedder = getattr(ts, "embedder", None)
    return f"{getattr(embedder, 'name', '') or type(ts).__name__}/{getattr(embedder, 'dim', '')}"


_RUN_CACHE: OrderedDict[tuple[str, str], tuple[str, tuple[str, ...]]] = OrderedDict()
_RUN_LOCK = threading.Lock()


def _runs(ts: Any, tenant: str, failures: Iterable[_Failure], config: ModeConfig
          ) -> dict[str, tuple[str, tuple[str, ...]] | None]:
    """trace_uri -> (model id, tools used) read from the traces, in parallel; None when unreadable.

    Index rows carry no model id, so the trace is the only source. Answers are kept per
    (tenant, trace_uri) for the process (a run re-ingested with another model keeps its
    old answer until the process restarts: the LRU holds 100k).
    """
    todo, out = [], {}
    for f in failures:
        if not f.trace_uri or f.trace_uri in out:
            continue
        with _RUN_LOCK:
            known = _RUN_CACHE.get((tenant, f.trace_uri))
        out[f.trace_uri] = known
        if known is None:
            todo.append(f.trace_uri)

    def read(uri: str) -> tuple[str, tuple[str, tuple[str, ...]] | None, bool]:
        try:
            run = ts.get_trace(uri, tenant=tenant)
            return uri, (run.model_id or "", tuple(run.tools_used)), True
        except KeyError:  # no trace there (TraceNotFoundError): unknown for good
            return uri, None, True
        except Exception:  # noqa: BLE001 - unreadable now (a slow or busy store): unknown this time
            return uri, None, False

    if todo:
        with ThreadPoolExecutor(max_workers=max(1, min(config.trace_workers, len(todo)))) as pool:
            # each read in a copy of this context: a server's per-call deadline reaches the trace reads
            futures = [pool.submit(contextvars.copy_context().run, read, uri) for uri in todo]
            for future in futures:
                uri, info, final = future.result()
                out[uri] = info
                if final and info is not None:
                    with _RUN_LOCK:
                        _RUN_CACHE[(tenant, uri)] = info
                        while len(_RUN_CACHE) > 100_000:
                            _RUN_CACHE.popitem(last=False)
    return out


def _mode(ts: Any, tenant: str, group: list[_Failure], report: FailureReport, periods: bool,
          meaning: dict[str, str], vector_of_text: dict[str, Any],
          runs: dict[str, tuple[str, tuple[str, ...]] | None], examples: int, config: ModeConfig) -> FailureMode:
    import numpy as np

    now = [f for f in group if f.current]
    templates = Counter(f.template for f in now)
    top = templates.most_common(1)[0][0]
    # representativeness: the cosine of a template's meaning to the mode's centroid (weighted by count)
    weights = Counter(meaning[f.template] for f in now)
    if all(t in vector_of_text for t in weights):
        centroid = sum(vector_of_text[t] * n for t, n in weights.items())
        centroid = centroid / max(float(np.linalg.norm(centroid)), 1e-12)
        closeness = {t: float(vector_of_text[meaning[t]] @ centroid) for t in templates}
    else:  # a meaning too rare to embed is a mode of its own
        closeness = dict.fromkeys(templates, 1.0)
    mode = FailureMode(
        mode_id=hashlib.blake2b(top.encode(), digest_size=6).hexdigest(),
        label=label_for(top),
        count=len(now),
        share=len(now) / report.total,
        env_versions=dict(Counter(f.env_version or "(none)" for f in now).most_common()),
        failing_tools=dict(Counter(f.failing_tool for f in now if f.failing_tool).most_common()),
        templates=[{"template": t, "count": n} for t, n in templates.most_common()],
    )
    if periods:
        mode.previous = len(group) - len(now)
        mode.trend, mode.change = _trend(mode.count, mode.previous, config.flat_band)
    # examples: the most representative template first, its latest run; then the next templates
    order = sorted(templates, key=lambda t: (-closeness[t], -templates[t], t))
    by_template: dict[str, list[_Failure]] = {t: [] for t in order}
    for f in now:
        by_template[f.template].append(f)
    for members in by_template.values():
        members.sort(key=lambda f: (-f.created_at, f.trajectory_id))
    picked: list[_Failure] = []
    depth = 0
    while len(picked) < min(examples, len(now)):
        for t in order:
            if depth < len(by_template[t]) and len(picked) < examples:
                picked.append(by_template[t][depth])
        depth += 1
    chosen = {id(f): f for f in [*picked, *_spread(now, config.model_sample)]}
    sample = list(chosen.values())[: max(config.model_sample, len(picked))]
    read = now if runs else sample  # with a model filter every run's trace has been read already
    known = runs or _runs(ts, tenant, sample, config)
    infos = [known.get(f.trace_uri) for f in read]
    mode.models_sampled = len(read)
    mode.models = dict(Counter((info[0] if info else "") or "(unknown)" for info in infos).most_common())
    mode.tools = dict(Counter(tool for info in infos if info for tool in info[1]).most_common())
    mode.examples = [
        FailureExample(
            trajectory_id=f.trajectory_id, trace_uri=f.trace_uri, error=f.error, task=f.task,
            env_version=f.env_version, model=(known.get(f.trace_uri) or ("",))[0], created_at=f.created_at,
            similarity=round(closeness[f.template], 4),
        )
        for f in picked
    ]
    return mode


def _spread(items: list[_Failure], n: int) -> list[_Failure]:
    if n <= 0:
        return []
    if len(items) <= n:
        return list(items)
    step = len(items) / n
    return [items[int(i * step)] for i in range(n)]


def _trend(count: int, previous: int, band: float) -> tuple[str, float | None]:
    if previous == 0:
        return ("new" if count else "flat"), None
    change = (count - previous) / previous
    if abs(change) <= band:
        return "flat", round(change, 4)
    return ("up" if change > 0 else "down"), round(change, 4)

"""How the collection is laid out: names, index types per engine, the schema, partitions, errors.

The choices behind these (exact FLAT on Milvus Lite, HNSW on a server;
partitions per tenant on Milvus Lite, three of them, see ``STEPS``; the
partition key on a server; the lexical leg per engine) are explained in
:mod:`trajsearch.store.index`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Iterable
from urllib.parse import urlsplit

import numpy as np
from pymilvus import DataType, Function, FunctionType, MilvusClient

from ..embed.base import normalise
from ..vocab import RUN_LEVELS
from .fields import COLUMNS, MAX_TOOLS
from .filters import quote
from .tokenize import tokenize

SCHEMA_VERSION = "1"
COLLECTION = "trajectories"

#: The dense index on a Milvus server (build params honoured there) and its search params.
INDEX_PARAMS = {"index_type": "HNSW", "metric_type": "COSINE", "params": {"M": 16, "efConstruction": 200}}
SEARCH_PARAMS = {"metric_type": "COSINE", "params": {"ef": 128}}
#: The dense index on Milvus Lite: exact. On 100k synthetic rows with this schema against numpy
#: (scripts/bench_exact.py --layouts), HNSW at ef=128 found 0.69-0.95 of the true top-10 under
#: tenant+level+env+outcome (FACTS.md, another corpus: 0.81-0.88 under ``in`` filters, short
#: lists); FLAT 1.00 under every filter, and no slower. Inner product, not COSINE: the vectors
#: are unit length (TrajectoryIndex normalises what it writes and asks), so IP *is* the cosine,
#: and milvus-lite's COSINE re-normalises every stored vector in scope on every query (its distance
#: step over 44k rows: 146 ms against 8 ms by IP; a whole grouped search there 164 -> 99 ms with the
#: same results, scripts/bench_metric.py).
LITE_INDEX_PARAMS = {"index_type": "FLAT", "metric_type": "IP", "params": {}}
#: What an embedded store's dense index is once opened (an earlier one is replaced: store/migrate.py).
LITE_DENSE = (LITE_INDEX_PARAMS["index_type"], LITE_INDEX_PARAMS["metric_type"])
#: Milvus caps a search's limit (topk) at this.
MAX_LIMIT = 16_384
#: A collection mid-migration (see store/migrate.py): copied rows go here first.
MIGRATING = COLLECTION + "_migrating"

#: The lexical leg. On a Milvus server: its native BM25 (a BM25 Function over a
#: pre-tokenised field), which scales with the cluster. On embedded Milvus Lite: an
#: in-process BM25 (store/lexical.py), because milvus-lite's BM25 costs 70-170 ms a
#: query after flush (seconds before) and computes IDF per segment.
LEXICAL_MEMORY, LEXICAL_MILVUS = "memory", "milvus"
MAX_LEXICAL = 65_000
_NON_WORD = re.compile(r"\W")

class SchemaMismatchError(RuntimeError):
    """The collection on disk was made by another schema version or embedding model."""


class StoreNeedsMigrationError(SchemaMismatchError):
    """An embedded store of the previous layout, opened where it cannot be migrated (over a socket)."""


@dataclass(frozen=True)
class IndexSettings:
    """What a collection is bound to for life: vectors and window keys depend on these."""

    embedder: str
    dim: int
    window: int
    stride: int


#: The URI schemes ``MilvusClient`` connects to as a server, in any case (``client/connection_manager.py``), beside a
#: ``unix:`` socket (lower case); any other URI is a local path it hands Milvus Lite.
SERVER_SCHEMES = ("http", "https", "tcp")


def is_server_uri(uri: str) -> bool:
    """Whether pymilvus takes ``uri`` for a server's address (``HTTP://host:19530`` and ``unix:/sock`` too: they had
    been refused as a store path not ending in .db), as ``MilvusClient``'s connect reads it, not a Milvus Lite path
    (review RFIX: ``grpc://`` and ``UNIX:`` had passed for servers, and pymilvus refused them in its own words)."""
    return uri.startswith("unix:") or urlsplit(uri).scheme.lower() in SERVER_SCHEMES


def unit_vector(vector: Any) -> np.ndarray:
    """``vector`` at length 1 (as it came when it already is; a zero vector stays zero): the
    inner product of two such is their cosine, whatever an embedder handed over."""
    v = np.asarray(vector, dtype=np.float32)
    return v if abs(float(np.linalg.norm(v)) - 1.0) <= 1e-6 else normalise(v[None])[0]


def unit(vector: Any) -> list[float]:
    """:func:`unit_vector` as the list pymilvus writes and searches with."""
    return unit_vector(vector).tolist()


def lexical_text(text: str) -> str:
    """Our log/code tokens, each made one word for Milvus' ``standard`` analyzer.

    Milvus Lite and Milvus offer no custom tokenizer for BM25; joining our tokens
    with their non-word characters turned into ``_`` makes the analyzer keep them
    whole (``src/app/main.py`` -> ``src_app_main_py``), so both legs see the same terms.
    """
    return " ".join(_NON_WORD.sub("_", token) for token in tokenize(text))[:MAX_LEXICAL]


#: The parts a tenant's rows are split into on the embedded layout, as partition-name prefixes.
#: Milvus Lite's dense search costs every row of the partitions it names (a Python loop per row,
#: even for rows a filter excludes), so rows searched apart are kept apart:
#: - ``t_``: step windows, most of a tenant's rows;
#: - ``e_``: the few rows per run (task, summary, failure) that exemplar, warning and task
#:   searches rank. Apart, such a search costs those rows only: at 10k rows of real runs
#:   (1,369 of them task/summary/failure) 10.8 -> 3.9 ms per search, and ``context_for``
#:   makes four or five;
#: - ``p_``: passages, which only the lexical leg reads (no dense search names them).
STEPS, EPISODES, PASSAGES = "t_", "e_", "p_"
#: Levels whose rows live in the ``e_`` part (where the store keeps them apart, see ``EPISODES_APART``).
EPISODE_LEVELS = RUN_LEVELS
#: The level whose rows live in the ``p_`` part.
PASSAGE = "passage"
#: Collection property: "1" once task, summary and failure rows are kept apart from steps
#: (stores made before that hold them with the steps, until opened by their path: store/migrate.py).
EPISODES_APART = "trajsearch.episodes_apart"


def part_of(level: str, episodes_apart: bool = True) -> str:
    """The part (``STEPS``, ``EPISODES`` or ``PASSAGES``) that holds rows of ``level``."""
    if level == PASSAGE:
        return PASSAGES
    return EPISODES if episodes_apart and level in EPISODE_LEVELS else STEPS


def partition_name(tenant: str, part: str = STEPS) -> str:
    """The partition holding one ``part`` of ``tenant``'s rows (embedded layout): the part's
    prefix and the tenant, every character but ASCII letters and digits written ``_xx`` (hex),
    so any valid tenant maps to a valid Milvus partition name and two tenants never share one.
    """
    quote(tenant)  # refuses what no filter may hold (control characters, over-long values)
    return part + re.sub(r"[^A-Za-z0-9]", lambda m: f"_{ord(m.group()):02x}", tenant)


def by_partition(rows: Iterable[dict[str, Any]], episodes_apart: bool = True) -> dict[str, list[dict[str, Any]]]:
    """``rows`` grouped by the partition that holds each (embedded layout), in input order."""
    groups: dict[str, list[dict[str, Any]]] = {}
    for row in rows:
        groups.setdefault(partition_name(row["tenant"], part_of(row["level"], episodes_apart)), []).append(row)
    return groups


_TYPES = {"text": DataType.VARCHAR, "int": DataType.INT64, "float": DataType.FLOAT, "json": DataType.JSON,
          "tags": DataType.ARRAY, "vector": DataType.FLOAT_VECTOR}


def schema(dim: int, lexical: str, *, partition_key: bool = True):
    """The collection schema, from the field table (store/fields.py)."""
    s = MilvusClient.create_schema(auto_id=False, enable_dynamic_field=False)
    for c in COLUMNS:
        extra: dict[str, Any] = {}
        if c.kind == "text":
            extra["max_length"] = c.max_length
        elif c.kind == "tags":
            extra.update(element_type=DataType.VARCHAR, max_capacity=MAX_TOOLS, max_length=c.max_length)
        elif c.kind == "vector":
            extra["dim"] = dim
        if c.nullable:
            extra["nullable"] = True
        if c.name == "id":
            extra["is_primary"] = True
        if c.name == "tenant" and partition_key:
            extra["is_partition_key"] = True
        s.add_field(c.name, _TYPES[c.kind], **extra)
    if lexical == LEXICAL_MILVUS:
        analyzer = {"tokenizer": "standard", "filter": ["lowercase"]}
        s.add_field("lexical", DataType.VARCHAR, max_length=MAX_LEXICAL + 1_000, enable_analyzer=True,
                    analyzer_params=analyzer)
        s.add_field("sparse", DataType.SPARSE_FLOAT_VECTOR)
        s.add_function(Function(name="bm25", function_type=FunctionType.BM25,
                                input_field_names=["lexical"], output_field_names=["sparse"]))
    return s

"""Failure modes: the failed runs inside the filters, grouped by cause, counted, trended, with examples.

:func:`failure_modes` reads the ``failure`` rows of a tenant inside the filters
(the façade's ``rows``), takes each row's decisive error (its ``Error:`` section)
and groups them in three steps:

1. **Template.** :func:`error_template` abstracts what varies between occurrences
   of one cause: URLs, e-mails, UUIDs, dates, times, quoted names, paths, host
   names, hex, ids, numbers (``No module named 'yaml'`` and ``'requests'`` are one
   template); numbers that name a kind of error stay (``exit code 137``,
   ``[Errno 28]``, ``HTTP 429``); terminal colour codes and a harness's wrapper
   elements (``<returncode>1</returncode>``) go first (:func:`plain_error`). Rows
   of one template always share a mode.
2. **Well-known cause.** A template that names a cause of :data:`KNOWN_CAUSES`
   (:func:`known_cause`) is in that cause's mode, however it is worded
   (``python: No module named pytest`` and ``ModuleNotFoundError: No module named
   <name>`` are one "missing Python module"). Each pattern names one cause only
   (a certificate that fails verification is not a dropped TLS connection; a
   request to pypi.org timing out is not a model API timeout).
3. **Meaning.** Each other distinct template is embedded through its
   :func:`meaning_text` (the most specific ``;`` clause, in words: no tool prefix,
   grader preamble, appended exit code, vendor wrapper or placeholders) with the
   store's own model (``embed``), and the meanings are clustered: agglomerative
   clustering, average linkage, cosine distance cut at 0.4 (:class:`ModeConfig`),
   so paraphrases of one cause merge while different causes in shared words stay
   apart.

Per mode: a readable label (a well-known cause such as "missing Python module",
else its most specific clause), count, share of the period's failures, the
previous period of the same length (``since``) and the trend, env versions,
the failing step's tool, models and tools (read from the traces of up to
``model_sample`` runs per mode: index rows carry no model id), the templates
it holds, and example runs, most representative first (the template nearest the
mode's centroid, its latest run; then the next templates).

One module per step, so each can be read (and measured) alone:

- :mod:`.templates`: error text -> template -> meaning text (pure text rules).
- :mod:`.rows`: a failure row's error, task and failing tool; the rows in scope.
- :mod:`.vectors`: meaning vectors, cached per process and embedded while rows are read.
- :mod:`.clustering`: meanings -> modes, :class:`ModeConfig`, and why this clustering (the figures).
- :mod:`.labels`: readable labels for modes.
- :mod:`.traces`: models and tools of sampled runs, from their traces.
- :mod:`.periods`: ``since`` / ``until`` parsing and trends.
- :mod:`.report`: the result types.
- :mod:`.analysis`: :func:`failure_modes`, which puts them together (and what it costs at 100k rows).
"""

from __future__ import annotations

from .analysis import failure_modes
from .clustering import ModeConfig, cluster
from .labels import KNOWN_CAUSES, known_cause, label_for
from .periods import parse_duration, parse_time
from .report import FailureExample, FailureMode, FailureReport
from .rows import FIELDS, row_error, row_failing_tool, row_task
from .templates import TEMPLATE_CHARS, error_template, meaning_text, plain_error

__all__ = [
    "FIELDS", "KNOWN_CAUSES", "TEMPLATE_CHARS", "FailureExample", "FailureMode", "FailureReport", "ModeConfig",
    "cluster", "error_template", "failure_modes", "known_cause", "label_for", "meaning_text", "parse_duration",
    "parse_time", "plain_error", "row_error", "row_failing_tool", "row_task",
]

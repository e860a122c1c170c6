"""The options many commands share, declared once so their flags, env vars and help cannot drift apart.

Each is an ``Annotated`` type: a command takes one as ``server: Server = None`` (the ``=`` value is
that command's default). Options that one command alone has stay in that command's signature. The
words an option accepts (levels, outcomes, modes) are spelled from :mod:`trajsearch.vocab`, where
every interface takes them from.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any, Callable, Iterable, List, Mapping, Optional

import typer

from ..embed.base import DEFAULT_MODEL
from ..excerpt import BLANK_TEXT, blank
from ..model import MAX_TOOL_VALUES, given_filter_values, valid_id
from ..vocab import FAILED_OUTCOMES, LEVELS, MODES, OUTCOMES
from .output import fail


def trimmed(value: Any) -> Any:
    """Run ids as users paste them (:func:`run_ids`): the whitespace around an id (a copied line's newline, a leading
    space) is no part of any id, and was refused with the id pattern."""
    if isinstance(value, str):
        return value.strip()
    return [v.strip() if isinstance(v, str) else v for v in value] if isinstance(value, list) else value


def _checked(name: str, check: Callable[[str], object]) -> None:
    """The library's ``check`` (it takes the name to say), a refusal one ``error:`` line naming the parameter as
    ``--help`` lists it (``name``): the one rule for every door, said in the CLI's own words."""
    try:
        check(name)
    except ValueError as exc:
        fail(str(exc))


def run_ids(param: typer.CallbackParam, value: Any) -> Any:
    """A typer callback for the run ids a command names (``show``, ``similar --id``, ``delete``): :func:`trimmed`,
    then an id no run can have is refused here in one line naming the flag or argument, the same on both backends
    (over --server ``show 'a"b'`` had been "INVALID_ARGUMENT: trajectory_id: ..." with a request id, embedded the
    library's words)."""
    value = trimmed(value)
    ids = value if isinstance(value, list) else [] if value is None else [value]
    # one id of delete's list is refused: named as one ("trajectory_id", as show names it), not as the list
    name = param.opts[0].removesuffix("s") if isinstance(value, list) else param.opts[0]
    _checked(name, lambda said: [valid_id(run_id, said) for run_id in ids])
    return value


def searched(param: typer.CallbackParam, value: str | None) -> str | None:
    """A typer callback for the text a command searches by: a blank one is a usage error naming the argument, the same
    on both backends (it had been the library's "query text must be a non-empty string" embedded, the service's
    "INVALID_ARGUMENT: text: ..." with a request id over --server: round 22, CLI6). Blank as the library judges it
    (:func:`~trajsearch.excerpt.blank`): a paste of terminal codes alone (``ESC[0m``, round 24, ENG2), a NUL or a
    zero-width space (searched here, round 25, SVC2). One line, as every refusal of the CLI's own: click's boxed
    panel came cut at 80 columns in a pipe (review r37-ux 3)."""
    if value is not None and blank(value):
        fail(f"{param.opts[0]}: {BLANK_TEXT}")
    return value


def filter_values(param: typer.CallbackParam, values: list[str]) -> list[str]:
    """A typer callback for a repeatable filter value (``--env-version``, ``--tool``, ...): more than
    :data:`~trajsearch.model.MAX_FILTER_VALUES` of them (the server refuses them), or one no run can be selected by
    (empty, spaces alone, control characters, over 200 characters) is refused here in one line naming the flag (exit
    2), the same on both backends (:func:`~trajsearch.model.given_filter_values`). Embedded, an empty
    ``--env-version`` had kept the runs with no version recorded and ``exemplars --tool`` took any value; over --server
    each was "INVALID_ARGUMENT: env_versions[0]: ..." with a request id."""
    _checked(param.opts[0], lambda said: given_filter_values(values, said))
    return values


def tool_names(param: typer.CallbackParam, values: list[str]) -> list[str]:
    """:func:`filter_values` for the tools an agent has (a runtime context's, ``failures --tool``): up to
    :data:`~trajsearch.model.MAX_TOOL_VALUES`, the server's bound for them."""
    _checked(param.opts[0], lambda said: given_filter_values(values, said, MAX_TOOL_VALUES))
    return values


def _one_of(words: Iterable[str]) -> str:
    return " | ".join(words)


def choice(words: Iterable[str], upper: bool = False,
           aliases: Mapping[str, str] | None = None) -> Callable[[typer.CallbackParam, Any], Any]:
    """A typer callback for an option that takes one of ``words`` (upper-cased first with ``upper``), or one of
    ``aliases``, taken as the word it maps to: any other value is a usage error naming the option and the words
    (exit 2), as click names a bad ``--level``. ``serve --log-level bogus`` ended as an unexpected error,
    "ValueError: Unknown level: 'BOGUS'", naming no option (probe 51, NC2); the aliases keep the words taken before
    the check (``--log-level warn``, Python's own alias, review RNC2 D5). A repeatable option's values are checked
    each: ``search --level nope`` was refused in the library's words embedded and in the service's over --server
    ("INVALID_ARGUMENT: levels[0]: ..." with a request id), naming no flag either way (round 22, CLI6). One line, as
    :func:`searched`."""
    allowed = tuple(words)
    other_names = dict(aliases or {})

    def one(param: typer.CallbackParam, value: Any) -> Any:
        said = value.upper() if upper and isinstance(value, str) else value
        said = other_names.get(said, said)
        if said not in allowed and said not in other_names.values():
            fail(f"{param.opts[0]} {value!r} is not one of {', '.join(allowed)}")
        return said

    def check(param: typer.CallbackParam, value: Any) -> Any:
        return [one(param, v) for v in value] if isinstance(value, list) else one(param, value)

    return check


# where the runs are: the embedded store (--uri, --traces) or a server (--server, --ca)
Uri = Annotated[Optional[str], typer.Option(
    "--uri", envvar="TRAJSEARCH_URI",
    help="Milvus URI: a local path ending in .db (embedded; default: milvus.db in $TRAJSEARCH_HOME, itself ./.trajsearch unless set) or http://host:19530.")]
Traces = Annotated[Optional[str], typer.Option(
    "--traces", envvar="TRAJSEARCH_TRACES",
    help="Trace store: path, file:///abs/path or s3://bucket/prefix (default: traces in $TRAJSEARCH_HOME, itself ./.trajsearch unless set).")]
Server = Annotated[Optional[str], typer.Option(
    "--server", "-s", envvar="TRAJSEARCH_SERVER",
    help="A trajsearch server (host:port) instead of the embedded store; the key comes from $TRAJSEARCH_API_KEY.")]
Ca = Annotated[Optional[Path], typer.Option(
    "--ca", envvar="TRAJSEARCH_TLS_CA", help="With --server: CA certificate (PEM) to verify it (turns TLS on).")]
# typer renders show_default="default" as "[default: (default)]", which names no tenant: the help says it instead
Tenant = Annotated[Optional[str], typer.Option(
    "--tenant", "-t", envvar="TRAJSEARCH_TENANT", show_default=False,
    help="Tenant to read or write (embedded store; without it, the tenant named 'default'). With --server the key's "
         "tenant applies.")]
# the model a process that opens the index embeds with (serve, ui)
EmbeddingModel = Annotated[Optional[str], typer.Option(
    "--model", envvar="TRAJSEARCH_MODEL",
    help=f"Embedding model (default: {DEFAULT_MODEL}); give the one the store was ingested with.")]

AsJson = Annotated[bool, typer.Option("--json", help="Print JSON for scripts.")]

# filters that read the same in every command that has them
Levels = Annotated[List[str], typer.Option(
    "--level", "-l", callback=choice(LEVELS),
    help=f"Rows of these levels: {_one_of(LEVELS)} (repeatable; none named: every level; passage: pieces of long "
         "outputs, lexical search only).")]


def _outcomes(left_out: str) -> Any:
    """The --outcome option, its help saying what naming none keeps (``left_out``)."""
    return Annotated[List[str], typer.Option("--outcome", callback=choice(OUTCOMES),
                                             help=f"Keep runs of these outcomes: {_one_of(OUTCOMES)} (repeatable; "
                                                  f"none named: {left_out}).")]


Outcomes = _outcomes("every outcome")
#: export's: exemplars are successes unless other outcomes are named
SuccessOutcomes = _outcomes("success")
# failure modes are read from failure rows, which failed runs alone have
FailedOutcomes = Annotated[List[str], typer.Option("--outcome", callback=choice(FAILED_OUTCOMES),
                                                   help=f"{_one_of(FAILED_OUTCOMES)} (default both).")]
EnvVersions = Annotated[List[str], typer.Option(
    "--env-version", "--env", callback=filter_values, help="Keep runs of these env versions (repeatable).")]
Tools = Annotated[List[str], typer.Option(
    "--tool", callback=filter_values, help="Keep runs that had any of these tools.")]
#: failures': the server takes as many tools there as an agent may have
FailureTools = Annotated[List[str], typer.Option(
    "--tool", callback=tool_names, help="Keep runs that had any of these tools.")]
TaskFamilies = Annotated[List[str], typer.Option(
    "--task-family", callback=filter_values, help="Keep runs of these task families (repeatable).")]
PolicyVersions = Annotated[List[str], typer.Option(
    "--policy-version", callback=filter_values, help="Keep runs of these policy versions (repeatable).")]
Mode = Annotated[str, typer.Option(
    "--mode", "-m", callback=choice(MODES), help=f"{_one_of(MODES)} (auto: hybrid for log-like queries and for a line a stored row holds "
             "verbatim, else dense).")]

# an agent's runtime context (exemplars, mcp): what applies to the agent now
ContextEnvVersions = Annotated[List[str], typer.Option(
    "--env-version", callback=filter_values, help="Runtime context: applicable env versions.")]
ContextPolicyVersions = Annotated[List[str], typer.Option(
    "--policy-version", callback=filter_values, help="Runtime context: applicable policy versions.")]
ContextTools = Annotated[List[str], typer.Option(
    "--tool", callback=tool_names, help="Runtime context: tools the agent has now.")]

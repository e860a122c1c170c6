"""Why a search found nothing inside its filters while the tenant's runs match without them: the one note.

A value misspelt, or never recorded at ingest (the README's own ``--env-version v2`` over runs ingested without one),
was answered "no matches" as if the tenant's runs had been searched and none were alike. The CLI (on either backend:
it asks through the backend's own search, so over --server the service's answers decide it) and the search page each
put that note together from the same three searches; it is decided and worded here alone, each interface naming its
filters its own way (``--env-version v2`` on the CLI, ``env version v2`` on the page).
"""

from __future__ import annotations

from typing import Any, Callable, Mapping, NamedTuple, Sequence

#: A search of the interface's own: the query given, ``levels``, ``k``, ``mode`` and the filters as its own keywords
#: (those a :class:`FilterGiven` names); its hits, or an empty list.
Search = Callable[..., Sequence[Any]]


class FilterGiven(NamedTuple):
    """One filter a search was given, as :func:`filtered_out_note` weighs it."""

    #: the filter as the interface names it: ``--env-version v2`` (the CLI), ``env version v2`` (the page)
    said: str
    #: its keyword for the search and values (``{"tools": ("a", "b")}``: held when each value is); ``{}``: no row
    #: holds it (the page's model), ``held`` says
    inside: Mapping[str, Sequence[str]]
    #: whether some run holds it, where known without a search (the page's model; an env version the key may not
    #: read: False); None: asked of the search
    held: bool | None = None
    #: the run field ``ingest --set`` records it in where a dump has none (``env_version``), if it is one
    recorded: str = ""


def filtered_out_note(search: Search, given: Sequence[FilterGiven], *, found_without: Callable[[], Any],
                      levels: Sequence[str] = (), code: Callable[[str], str] = str) -> str | None:
    """The note for a search that found nothing inside the filters ``given``, or None when none was given or the
    same question without them (``found_without()``, asked only then) finds nothing either. ``code``: how the
    interface marks a command it names (the CLI in backticks; the page shows its notes as plain text, where the
    backticks had been shown as typed).

    Only a value no run holds is asked about (``env=v1``, held by 23 runs, was asked whether it was misspelt), with
    how such a value is recorded; where every value is held but no row at the ``levels`` searched (all when empty)
    lies inside them all at once, there was nothing to match, and that is said, not "no run inside them matches"
    (two values each held by other runs, or successful runs searched for failure rows)."""
    if not given or not found_without():
        return None
    held = [g.held if g.held is not None else all(value_held(search, **{key: (value,)})
                                                   for key, values in g.inside.items() for value in values)
            for g in given]
    recorded = next((f" ({code(f'ingest --set {g.recorded}=...')} records one)" for g, h in zip(given, held)
                     if g.recorded and not h), "")
    inside: dict[str, tuple[str, ...]] = {}
    for g in given:
        for key, values in g.inside.items():
            inside[key] = tuple(dict.fromkeys((*inside.get(key, ()), *values)))
    together = not all(held) or not inside or rows_inside(search, levels, **inside)
    return _said([(g.said, h) for g, h in zip(given, held)], recorded, together=together, levels=levels)


def _said(given: Sequence[tuple[str, bool]], recorded: str, *, together: bool, levels: Sequence[str]) -> str:
    """The note's words: ``given``, each filter as said and whether some run holds it; ``together``, whether some
    row lies inside every filter at once; ``recorded``, how a value no run holds is recorded, appended when one is
    asked about."""
    said, unheld = ", ".join(g for g, _ in given), [g for g, held in given if not held]
    them = "it" if len(given) == 1 else "them"
    if unheld:
        asked = "a value" if len(unheld) == len(given) else " and ".join(unheld)
        return (f"nothing found inside {said}, but this tenant's runs match without {them}: is {asked} misspelt, or "
                f"not recorded for these runs?{recorded}")
    if together:
        return f"no run inside {said} matches this search; this tenant's runs outside {them} do"
    rows = f"{' or '.join(levels)} row" if levels else "row"
    at_once = " together" if len(given) > 1 else ""
    return (f"no {rows} of this tenant's lies inside {said}{at_once}, so there was nothing to match; this tenant's "
            f"runs outside {them} match")


def value_held(search: Search, **one_filter: Any) -> bool:
    """Whether some run the ``search`` sees holds the value of ``one_filter``: a run's task row inside that filter
    alone (:func:`rows_inside`). A server lists no values, so this is asked the same way on every backend."""
    return rows_inside(search, ("task",), **one_filter)


def rows_inside(search: Search, levels: Sequence[str], **filters: Any) -> bool:
    """Whether some row at ``levels`` (all when empty) the ``search`` sees lies inside every one of ``filters``: a
    dense search finds the nearest rows whatever their words, so one of k=1 finds a row exactly when one lies there.
    Passages have no vector of their own: their steps stand for them."""
    dense = tuple(dict.fromkeys("step" if level == "passage" else level for level in levels))
    return bool(search(levels=dense, k=1, mode="dense", **filters))

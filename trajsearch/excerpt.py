"""Where a query shows in a text: the terms to look for, and the part of a long text to show around them.

One place for every interface that shows a hit (the web page marks the terms, the CLI prints a line):
an error sits at the tail of a long output, so a text cut from its head drops the very line that
was pasted; these pick the part that holds it.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from functools import lru_cache
from re import _casefix
from typing import Any, Iterator, Sequence

import regex

from .blobs import without_blobs
from .fusion import PYTEST_MARK
from .steps import strip_terminal_codes

_WORD = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.:/'-]*[A-Za-z0-9_]|[A-Za-z0-9_]")
_STOP = frozenset(
    "a an and are as at be but by can do does for from has have how i if in into is it its no not of on or "
    "that the then there this to was were what when where which while who why will with you your".split()
)
MAX_TERMS = 40
MAX_MATCHES = 200  # per text: a term found everywhere in a 1 MB output counts its first 200
#: Terms of at most this many characters in all are found by their one regex (:func:`term_pattern`), which
#: compares at most as many at each place of a text; longer ones are looked for one by one (see :func:`_occurrences`).
REGEX_TERMS_CHARS = 256
#: The most words of a pasted last line that :func:`_like_line` compares a run's line with: an error's name and what
#: it names come first, and a pasted line of thousands of words costs as much as one of a dozen.
LIKE_HEAD_WORDS = 12


#: A colour code whose ESC was lost on its way to the paste: a browser's log view shows ``[31m``, ``cat -v`` and
#: ``less`` show ``^[[31m``; not one written as a string's escape (``'\x1b[91mWARN...'`` in a test's assertion, which
#: the step holds as written). A parameter is required: ``[m`` opens ``[mypy]`` and ``mark_list = [mark_list]``.
_LOST_ESCAPE_CODE = re.compile(r"(?<!\\x1b)(?<!\\033)(?<!\\e)(?<!\\u001b)(?:\^\[)?\[[0-9;]+m", re.IGNORECASE)


def query_text(text: str) -> str:
    """``text`` as every search and every excerpt reads a query: without a paste's terminal codes (a coloured
    traceback), as ingest leaves them out of every step's output; kept, they glued to its words (``31mtraceback``)
    and no step held its lines verbatim (round 24, ENG2). The one place: the mode a page names and the mode the
    search ran had each stripped them or not (review of ENG2, 2).

    Codes whose ESC was lost (:data:`_LOST_ESCAPE_CODE`) go too where there are two or more (a colour and its
    reset): one alone may be text (``[10m`` a timeout), and of 40,276 step outputs and thoughts of 500 gemini-3-pro
    runs the 2 holding two or more were colour codes (review of ENG2, 3).

    Characters no reader sees but whitespace (:data:`_INVISIBLE`: NUL, a zero-width space, a BOM) go too, as
    :func:`blank` reads them: an error line pasted with a zero-width space after it was held by no step and got no
    warning, where the same paste without it got 2 (round 26, RT10).

    A log viewer's prefix goes too where two or more lines carry it and every line that is not blank carries one of
    the same kind, and so does a CI runner's mark opening a line (``##[error]``: :func:`_without_line_prefixes`), and
    the lines a CI system closes a failed job's log with, where a line of the job's own is above them
    (:func:`_without_closing_lines`).

    An encoded blob (an image's base64 in a pasted observation) is read as its placeholder, as ingest indexes it
    (:func:`~trajsearch.blobs.without_blobs`): the base64 matched no row, and a screenshot ran the query past
    ``MAX_QUERY_CHARS`` (review RT3, 2).

    Read until a reading changes nothing, so that a query read is read the same again (every search reads it twice:
    here and in :func:`terms`). One reading had left what the next took: compose's prefixes under a closing line
    without one stayed (not every line carried one) while the closing line went; read again, they went too, and
    :func:`pasted_error_line` looked for the new last line among the old ones: every such search failed with
    ``StopIteration`` (review of ENG6, 1: 142 of 143 real tracebacks). Each reading only takes characters away."""
    while (again := _read_once(text)) != text:
        text = again
    return text


def _read_once(text: str) -> str:
    """One reading of :func:`query_text`'s: terminal codes, invisible characters, viewers' prefixes, runners' marks,
    closing lines, blobs."""
    text = strip_terminal_codes(text)
    without, lost = _LOST_ESCAPE_CODE.subn("", text)
    text = _without_line_prefixes(_INVISIBLE.sub("", without if lost >= 2 else text))
    return without_blobs(_without_closing_lines(_without_runner_marks(text)))


#: A line a CI system closes a failed job's log with, which no program of the job printed (whitespace runs as one
#: space). Each seen in real logs: GitHub Actions' (``Error: `` in the web view, ``##[error]`` in the raw log, its
#: mark gone by then: :data:`_RUNNER_MARK`), GitLab's (``Cleaning up project directory and file based variables``,
#: ``ERROR: Job failed: exit code 1``, ``WARNING: Job failed: exit status 1``), CircleCI's (``Exited with code exit
#: status 1``, ``CircleCI received exit code 1``), Buildkite's (``^^^ +++``, ``🚨 Error: The command exited with status
#: 1``, ``user command error: exit status 1``), Jenkins' (``[Pipeline] // stage``, ``[Pipeline] End of Pipeline``,
#: ``ERROR: script returned exit code 1``, ``Finished: FAILURE``), GitLab's section marks of its raw trace
#: (``section_end:1692280744:step_script``) and GitHub's last line of a job (``Cleaning up orphan processes``). These
#: go from a paste's end; a line any tool may close with (:data:`_GENERIC_CLOSE`) only is no paste's error.
_CI_CLOSING = re.compile(
    r"(?:error: )?process completed with exit code \d+\.?|(?:error|warning): job failed: .*|"
    r"cleaning up (?:project directory and )?file based variables|exited with code (?:exit status )?\d+|"
    r"circleci received exit code \d+|\^\^\^ \+\+\+|(?:\S+ )?error: the command exited with status \d+|"
    r"user command error: exit status \d+|\[pipeline\] .*|error: script returned exit code \d+|"
    r"finished: (?:failure|unstable|aborted)|section_(?:start|end):\d+:\S+|cleaning up orphan processes",
    re.IGNORECASE)
#: What opens the tail a GitHub Actions runner writes after a job's steps, each action's clean-up (``Post job
#: cleanup.``, ``[command]/usr/bin/git version``, ...) to ``Cleaning up orphan processes``: a whole job's log
#: (``gh run view --log``, the raw log) ends in it (a real one: voyager1122/04.Gitops's issue log).
_POST_JOB = re.compile(r"post job cleanup\.", re.IGNORECASE)


def _without_closing_lines(text: str) -> str:
    """``text`` without the lines a CI system closed its job's log with (:data:`_CI_CLOSING`, and blank lines among
    them) where a line of the job's own is above them; else as written (a closing line searched alone is the query).
    Kept, the closing line was the paste's last line, taken for its error (:func:`terms`, :func:`pasted_error_line`):
    the error above it lost its first place (round 28, ENG6: of 143 tracebacks the real mini-swe-agent runs printed,
    pasted whole, the first hit held the error line for 142; with GitHub's closing line under them for 134, GitLab's
    23, Jenkins' 100; now 142 each). Only the end goes: what is left is still a part of any row holding the whole
    paste."""
    lines = text.splitlines(keepends=True)
    end = len(lines)
    while end and (not lines[end - 1].strip() or _ci_closing(lines[end - 1])):
        end -= 1
    if end < len(lines) and " ".join(text.split()[-4:]).lower() == "cleaning up orphan processes":  # a job's end
        end = next((i for i in range(end) if _POST_JOB.fullmatch(lines[i].strip())), end)  # its first clean-up
    closed = any(line.strip() for line in lines[end:])
    return "".join(lines[:end]) if end and closed else text


#: What a log viewer writes before each line of a program's output, which the program's run never printed, each kind
#: checked on real samples (round 28, ENG6): journald's short, short-precise and short-iso formats (``Dez 28 06:43:00
#: host mail_on_failure[9777]: ``, the month in the reader's locale, ``juil.``, ``12月``; systemd-cron issue 58; its ISO
#: time always has a ``T`` and a zone, unlike Python logging's ``2024-01-01 12:00:00,123 ERROR app.db: ``, whose level
#: and logger are the program's: review of ENG6, 3), kept before the timestamp it opens with; a CI runner's time (GitHub
#: Actions' raw log and ``docker logs -t``: ``2026-12-06T19:45:01.1234567Z ``); docker compose's service and replica
#: (``worker-1  | ``, compose v1's ``web_1  | ``); ``kubectl logs --prefix``'s source
#: (``[pod/echo-req-7cfd7bf68f-nk5kr/hello] ``, kubernetes PR 76471); ``gh run view --log``'s job and step
#: (``build<TAB>Run pytest<TAB>`` before the runner's ``T...Z`` time and a space: a table's time column, ``mysql -N``'s
#: ``2024-01-01 10:00:00``, is the program's); stern's pod and container (``nginx-cfbcb7b98-96xsv nginx ``: a generated
#: pod name ends in 5 characters of Kubernetes' alphabet, no vowels, no 0, 1 or 3; a StatefulSet's ``web-0 app `` is
#: left, as ``worker-1 started pid 1234`` and ``pip-audit found 2 ...`` are lines of a program's own: review of ENG6,
#: 3). A line holding only the time ends at its line break, ``\r\n`` in a paste from Windows.
_TIME = r"\d{4}-\d\d-\d\d[T ]\d\d:\d\d:\d\d(?:[.,]\d+)?(?:Z|[+-]\d\d:?\d\d)?"
_ISO_TIME = r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?(?:Z|[+-]\d\d:?\d\d)"
_MONTH = r"(?:[^\W\d_]{2,6}\.?|[ \d]?\d[月월])"
_LINE_PREFIXES = (
    r"(?:%s [ \d]\d \d\d:\d\d:\d\d(?:\.\d{6})?|%s) \S+ [^\s\[]+?(?:\[\d+\])?: " % (_MONTH, _ISO_TIME),
    r"%s(?: |(?=[\r\n])|$)" % _TIME,
    r"[A-Za-z0-9][\w.-]*[-_]\d+ +\| ?",
    r"\[pod/[^/\s\]]+/[^\s\]]+\] ",
    r"[^\t\r\n]{1,255}\t[^\t\r\n]{1,255}\t(?=\d{4}-\d\d-\d\dT[\d:.]+Z(?: |[\r\n]|$))",  # (names: no long line read)
    r"[a-z0-9](?:[a-z0-9.-]{0,251}[a-z0-9])?-[bcdfghjklmnpqrstvwxz2456789]{5} "
    r"[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])? ",
)
_LINE_PREFIX_PATTERNS = tuple(map(re.compile, _LINE_PREFIXES))
#: A text opening with one of them (:func:`unseen`): one anchored match, cheap beside reading the text.
_OPENS_WITH_PREFIX = re.compile(r"\s*(?:%s)" % "|".join(_LINE_PREFIXES))
#: The fewest lines carrying a prefix that make a paste a log viewer's: one line alone is no evidence, it is usually
#: a line the program logged with its date (``2026-04-10 04:32:06,551 :: WARNING :: ...``, held verbatim by the run
#: that printed it: first at 0.355 with its date, 0.121 without; review of ENG5, 2), a table row (``col_1 | col_2``)
#: or a pipe (``py-3 | grep foo``).
MIN_PREFIXED_LINES = 2
#: A GitHub Actions (or Azure Pipelines) runner's mark opening a line of its raw log: ``##[group]Run pytest``,
#: ``##[endgroup]``, ``##[error]Process completed with exit code 1.``; the web view shows them as a fold or ``Error: ``.
#: Never a space after it (``##[error] in my notes`` is a line of a text's own).
_RUNNER_MARK = re.compile(r"^##\[(?:group|endgroup|error|warning|notice|debug|command|section|info)\](?! )", re.M)


def _without_line_prefixes(text: str) -> str:
    """``text`` without a log viewer's prefix (:data:`_LINE_PREFIXES`) where at least :data:`MIN_PREFIXED_LINES`
    lines are not blank and each starts with one of the same kind, then without the next viewer's under it (``kubectl
    logs --prefix --timestamps``, ``gh run view --log``: a source before a time). Kept, each pasted line was a line no
    step holds: a traceback pasted from ``docker compose logs`` lost its verbatim first place and its excerpt showed
    another line (round 27, ENG5, the shared runs: an astroid ``No module named 'wrapt'`` traceback behind ``worker-1  |
    `` ranked first at 0.063 a run whose step showed the head; without the prefixes, at 0.242 a run showing the error
    line).
    A paste of prefixes only is kept as written: without them it would be refused as blank (review of ENG5, 1)."""
    for _ in _LINE_PREFIX_PATTERNS:  # each pass takes one viewer's prefix off
        stripped = _without_one_prefix(text)
        if stripped is text:
            break
        text = stripped
    return text


def _without_runner_marks(text: str) -> str:
    """``text`` without a CI runner's marks opening its lines (:data:`_RUNNER_MARK`), unless nothing would remain."""
    unmarked = _RUNNER_MARK.sub("", text) if "##[" in text else text
    return text if _UNSEEN.fullmatch(unmarked) else unmarked


def _without_one_prefix(text: str) -> str:
    """``text`` without the prefix of the first kind every line that is not blank starts with (``text`` itself if
    none, or if nothing would remain)."""
    lines = text.splitlines(keepends=True)
    shown = [line for line in lines if line.strip()]
    if len(shown) < MIN_PREFIXED_LINES:
        return text
    for prefix in _LINE_PREFIX_PATTERNS:
        if all(prefix.match(line) for line in shown):
            stripped = "".join(line[m.end():] if (m := prefix.match(line)) else line for line in lines)
            return text if _UNSEEN.fullmatch(stripped) else stripped
    return text


def unseen(text: str) -> bool:
    """Whether :func:`query_text` may read ``text`` otherwise than as written: it holds a character that reading drops
    (an ESC, a control, a format or other default-ignorable character: :data:`_INVISIBLE`), opens with a log
    viewer's prefix (:data:`_LINE_PREFIXES`), may hold a CI runner's mark (:data:`_RUNNER_MARK`) or ends in a CI
    system's closing line (:data:`_CI_CLOSING`), so a caller comparing many texts reads only those through it. A row of
    compose lines had been read with its prefixes unless it also held a colour code (review of ENG5, 3); a task row
    ending in GitHub's closing line was compared as written with the query read without it, and the rerun of that
    very task lost ``follow_closely`` (review RT-SERVE, 1).
    An ASCII text can hold only controls, which ``str.isprintable`` finds at C speed (the regular expression alone
    took 17 µs a text where it takes 8, on 808 real step texts)."""
    if _OPENS_WITH_PREFIX.match(text) or "##[" in text or _closes_like_ci(text):
        return True
    if text.isascii():
        return not text.translate(_LINE_BREAKS).isprintable()
    return _INVISIBLE.search(text) is not None


def _closes_like_ci(text: str) -> bool:
    """Whether ``text``'s last line that is not blank is a CI system's closing line (:data:`_CI_CLOSING`): one look
    at one line, as :func:`_without_closing_lines` looks at it first."""
    return _ci_closing(text.rstrip().rpartition("\n")[2])


def _ci_closing(line: str) -> bool:
    """Whether ``line`` is a CI system's closing line (:data:`_CI_CLOSING`), however its spaces run."""
    return _CI_CLOSING.fullmatch(" ".join(line.split())) is not None


#: Line breaks and tabs, read as spaces: the controls :func:`unseen` does not count.
_LINE_BREAKS = str.maketrans("\n\r\t", "   ")


#: What every interface says of a text to search by that holds nothing a reader sees (:func:`blank`), after the name
#: it gives the text: the library's ``query text: ...``, the server's ``text: ...``, the CLI's and MCP's argument.
BLANK_TEXT = "nothing to search by: give a task, free text or a pasted error line (this one holds no visible character)"
#: Characters no reader sees: whitespace, controls (NUL), format characters (zero-width space and joiners, word joiner,
#: a BOM, bidi marks) and the other default-ignorable ones (a soft hyphen, variation selectors, Hangul fillers).
_UNSEEN = regex.compile(r"[\p{White_Space}\p{Cc}\p{Cf}\p{Default_Ignorable_Code_Point}]*+")
#: Of those, the ones that are no whitespace: a query loses them (:func:`query_text`), its line breaks and spaces kept.
_INVISIBLE = regex.compile(r"[[\p{Cc}\p{Cf}\p{Default_Ignorable_Code_Point}]--\p{White_Space}]+", regex.V1)


def blank(text: str) -> bool:
    """Whether ``text``, read as a query (:func:`query_text`: a paste's terminal codes and invisible characters left
    out; a log viewer's prefixes only where text remains), holds nothing a reader sees: the one rule of every interface
    taking a text to search by (the library's query check, the runtime's verbs, loop and tool, the CLI, the server, the
    web page, MCP), each refusing it in :data:`BLANK_TEXT`'s words. A bare timestamp is a query (review of ENG5, 1).

    Each had tested ``str.strip()``, which keeps NUL, a zero-width space and a BOM: ``Search(text="\\x00")`` and the
    page's ``/?q=%00`` ranked 10 arbitrary runs by the vector of an invisible character, where ``"   "`` was
    refused (round 25, SVC2)."""
    return _UNSEEN.fullmatch(query_text(text)) is not None


def terms(query: str) -> tuple[str, ...]:
    """What to look for of ``query``: its last line first (a pasted line matched whole: what a pasted
    traceback or log is about, see :func:`excerpt`), then its other lines and its words, longest first.

    A line is one of 8 characters or more holding a space (only lines hold a space); the first term is the
    last such line not seen earlier in the query: the last line itself unless it is short (``Killed``) or a
    repeat, when it is a line above it, which :func:`excerpt` keeps in view only if it is specific.
    Read as :func:`query_text` reads it."""
    if not query:
        return ()
    query = query_text(query)
    lines: dict[str, None] = {}
    for line in query.splitlines():
        line = " ".join(line.split())
        if len(line) >= 8 and " " in line:
            lines[line.lower()] = None
    last = list(lines)[-1:]
    found: dict[str, None] = dict(lines)
    for word in _WORD.findall(query):
        word = word.strip(".:/'-")
        if len(word) < 3 and not word.isdigit():
            continue
        if word.lower() in _STOP:
            continue
        found[word.lower()] = None
        for part in re.split(r"[.:/'_-]+", word):  # parts of dotted names, paths, snake_case
            if len(part) >= 3 and part.lower() not in _STOP:
                found[part.lower()] = None
    rest = sorted((term for term in found if term not in last), key=len, reverse=True)
    return tuple(last + rest)[:MAX_TERMS]


def _last_line(query_terms: tuple[str, ...]) -> str:
    """The query's last line, as :func:`terms` puts it first ("" when the query has no such line)."""
    return query_terms[0] if query_terms and " " in query_terms[0] else ""


@lru_cache(maxsize=256)
def term_pattern(query_terms: tuple[str, ...]) -> re.Pattern[str] | None:
    """One regex for ``query_terms``, longest first (a pasted line wins over its words at the same place)."""
    if not query_terms:
        return None
    # whitespace inside a pasted line matches any run of whitespace in the text; a term starts a word
    # ("date" matches "date" and "dates", not "update")
    alternatives = [(r"(?<![A-Za-z0-9])" if term[:1].isalnum() else "")
                    + r"\s+".join(re.escape(part) for part in term.split(" "))
                    for term in sorted(query_terms, key=len, reverse=True)]
    return re.compile("|".join(alternatives), re.IGNORECASE)


def matches(text: str, query_terms: tuple[str, ...]) -> list[re.Match[str]]:
    """The first :data:`MAX_MATCHES` places ``text`` holds one of ``query_terms``, in order: what
    ``term_pattern(query_terms).finditer(text)`` finds, in time linear in the text and the terms (see
    :func:`_occurrences`)."""
    found = []
    for match in _occurrences(text, query_terms):
        if len(found) >= MAX_MATCHES:
            break
        found.append(match)
    return found


#: A place where a term starting with a letter or digit may start (``term_pattern``'s look-behind) once the text
#: is folded (see :func:`_folded`): marked by ``\0`` in the text searched, so a needle holds its own look-behind.
_EDITS = re.compile(r"\s+|(?<![a-z0-9])(?=[^\W_])")
#: Characters ``re.IGNORECASE`` takes for one another beyond their lower case (``ſ`` for ``s``): each to one of them.
_SAME_CASE = {k: min((k, *v), key=lambda c: (not chr(c).isascii(), not chr(c).isalnum(), c))
              for k, v in _casefix._EXTRA_CASES.items()}


def _folded(text: str) -> str:
    """``text`` with what ``re.IGNORECASE`` matches alike made alike, character for character (and ``\0``, the
    word-start mark of :func:`_searched`, made ``\1``)."""
    if text.isascii():
        return text.lower().replace("\0", "\1")
    return text.replace("\u0130", "i").replace("\0", "\1").lower().translate(_SAME_CASE)  # İ: its lower() is 2


def _searched(text: str) -> tuple[str, list[int], list[int]]:
    """``text`` folded, each run of whitespace one space, ``\0`` where a word starts (see :data:`_EDITS`); and
    where its pieces start here and in ``text`` (piece ``k`` from ``starts[k]`` is ``text`` from ``origins[k]``)."""
    starts, origins, shift = [0], [0], 0

    def edit(match: re.Match[str]) -> str:
        nonlocal shift
        piece = " " if match.end() > match.start() else "\0"
        shift += len(piece) - (match.end() - match.start())
        starts.append(match.end() + shift)
        origins.append(match.end())
        return piece

    return _EDITS.sub(edit, _folded(text)), starts, origins


def _needle(term: str) -> str | None:
    """``term`` as :func:`_searched` writes it (``None`` for a term it cannot hold: one not written with single
    spaces, or whose first character folds out of or into what the look-behind guards)."""
    if not term or term != " ".join(term.split()):
        return None
    needle = _searched(term)[0]
    return needle if needle.startswith("\0") == term[:1].isalnum() else None


def _origin(index: int, starts: list[int], origins: list[int]) -> int:
    """Where the character at ``index`` of the searched text is in the text."""
    k = bisect_right(starts, index) - 1
    return origins[k] + index - starts[k]


def _occurrences(text: str, query_terms: tuple[str, ...]) -> Iterator[re.Match[str]]:
    """What ``term_pattern(query_terms).finditer(text)`` finds (its empty matches left out).

    One regex of every term tried from each character of the text cost the length of each term's partial match
    there: a pasted line of 10,000 words against a text of those words took seconds (probe I, I1). Here each term
    is looked for alone with ``str.find`` (linear) in the text folded as ``re.IGNORECASE`` compares it, whitespace
    runs made one space and word starts marked (see :func:`_searched`); the earliest place wins, the longest term
    at a place (the regex's order); each place is checked with the term's own regex, which makes the match."""
    alternatives = tuple(sorted(query_terms, key=len, reverse=True))
    long = sum(map(len, alternatives)) > REGEX_TERMS_CHARS  # else the regex compares few characters at each place
    needles = [_needle(term) for term in alternatives] if long else []
    if not needles or None in needles:
        pattern = term_pattern(query_terms)
        yield from (m for m in pattern.finditer(text) if m.end() > m.start()) if pattern else ()
        return
    searched, starts, origins = _searched(text)
    nexts: list[tuple[int, int, re.Match[str]] | None] = [None] * len(needles)

    def next_of(i: int, at: int) -> tuple[int, int, re.Match[str]] | None:
        """Term ``i``'s first place from ``at`` of the searched text: (where in the text, i, its match)."""
        while (found := searched.find(needles[i], at)) >= 0:
            begin = _origin(found + (needles[i][0] == "\0"), starts, origins)
            match = term_pattern((alternatives[i],)).match(text, begin)
            if match:
                return begin, i, match
            at = found + 1  # folding took for one another what the regex does not: rare, on through
        return None

    at = 0
    for i in range(len(needles)):
        nexts[i] = next_of(i, at)
    while True:
        best = min((n for n in nexts if n is not None), default=None)
        if best is None:
            return
        yield best[2]
        end = best[2].end()
        at = _searched_index(end - 1, starts, origins) + 1  # the term's last character: not whitespace
        for i, n in enumerate(nexts):
            if n is not None and n[0] < end:
                nexts[i] = next_of(i, at)


def _searched_index(position: int, starts: list[int], origins: list[int]) -> int:
    """Where in the searched text the text's character at ``position`` is (one not whitespace)."""
    k = bisect_right(origins, position) - 1
    return starts[k] + position - origins[k]


def excerpt(text: str, query_terms: tuple[str, ...], limit: int) -> str:
    """At most ``limit`` characters of ``text``: all of it if it fits, else the part holding the most of the
    query (a pasted line counts by its length), centred on its best match, "…" where it was cut.

    Where the text holds the query's last line and that line is specific (see :func:`_specific`), the part
    holds it, with what led to it: a pasted traceback ends in its exception, the line the reader wants, and
    its frames outweighed that line in a terminal's few hundred characters (probe p42 D4: 10 of 12 whole
    tracebacks printed without it). A generic last line (make's ``*** [all] Error 2``) only counts as much
    as it weighs: the compiler error above it is what the paste is about (review 2, F7).
    A text holding none of the terms keeps its head, as before."""
    if len(text) <= limit:
        return text
    last = _last_line(query_terms)
    found = matches(text, query_terms)
    anchors = [match for match in found if last and _term(match) == last]
    tail = _last_occurrence(text, last)
    if tail and (not found or tail.start() > found[-1].start()):  # beyond the matches counted (review 2, F1)
        found.append(tail)
        anchors.append(tail)
    if not anchors and _specific(last) and (like := _like_line(text, last, limit - 2)):
        found.append(like)
        anchors.append(like)
    if not found:
        return text[: limit - 1] + "…"
    width = limit - 2  # room for an ellipsis on each side
    anchors = anchors if _specific(last) else []
    starts = [match.start() - (width - (match.end() - match.start())) // 2 for match in found]
    starts += [match.end() - width for match in anchors]  # ending at the last line: what led to it
    best_start, best_score = 0, (False, -1)
    for start in starts:
        start = max(0, min(start, len(text) - width))
        score = (any(start <= a.start() and a.end() <= start + width for a in anchors),
                 _weight(found, start, start + width))
        if score > best_score:
            best_start, best_score = start, score
    end = best_start + width
    return ("…" if best_start > 0 else "") + text[best_start:end] + ("…" if end < len(text) else "")


#: An error named with its detail (``ValueError: column 'flux' ...``, ``error: 'SO_REUSEPORT' undeclared``,
#: a Rust panic), unlike a run's generic closing line (``make: *** [all] Error 2``, ``1 failed in 0.12s``).
_NAMED_ERROR = re.compile(r"(?:error|exception|fault):\s*\S|panicked at ", re.IGNORECASE)
_SPECIFIC_WORDS = 8  # a sentence this long says what went wrong, error name or not
#: A closing line a tool prints after whatever failed, however it words it: its detail is an exit code or a count
#: (GitHub Actions' ``Error: Process completed with exit code 1.``, cargo's ``error: could not compile `x` ... due to
#: 1 previous error``, ``Error: Command failed with exit code 1``). Kept in the query, unlike the lines only a CI system
#: writes (:data:`_CI_CLOSING`), which go from its end.
_GENERIC_CLOSE = re.compile(r"exit (?:code|status)\s*\d+|due to \d+ previous errors?|could not compile|"
                            r"command failed|process completed|\berror \d+\s*$", re.IGNORECASE)


def _specific(line: str) -> bool:
    """Whether a pasted last line says what went wrong, so that it is worth keeping in view above all."""
    if not line or _GENERIC_CLOSE.search(line):
        return False
    return bool(_NAMED_ERROR.search(line)) or len(_WORD.findall(line)) >= _SPECIFIC_WORDS


def pasted_error_line(query: str) -> str:
    """The error a pasted log or traceback of several lines ends in (its last line, as :func:`terms` takes it, when
    that line names an error with its detail: ``RuntimeError: Dropped elements ...``), else "".

    Such a paste is about that line; its frames are shared by every run that went through the same code, and a
    step whose output was cut before the error (``| head -20``, ``grep -A20``) holds them all. The search shows a
    run by a step holding the line where it has one (:meth:`trajsearch.search.TrajSearch.search_filtered`)."""
    query = query_text(query)  # as terms reads it
    if len(query.strip().splitlines()) < 2:
        return ""
    last = _last_line(terms(query))
    if not last or not _NAMED_ERROR.search(last) or _GENERIC_CLOSE.search(last):
        return ""
    # as written (terms are lower case): rows are matched on it word for word; a pytest report's without its mark
    line = next((line for line in (" ".join(line.split()) for line in reversed(query.splitlines()))
                 if line.lower() == last), "")
    return line[2:] if line[:2] in ("E ", "> ") and PYTEST_MARK.search(query) else line


#: A name an error's detail gives (:func:`names_what_broke`): quoted (``'psycopg2'``), or a word joined by ``_``, ``.``,
#: ``/``, ``\\`` or ``::`` (``auth_user``, ``__main__.MyModel``), in camel case, or of letters and digits: not a
#: plain word, not a bare number (a count, a line number, a port: another run's differ), nor a number with its unit
#: (``timed out after 30s``) or an abbreviation of single letters (``expected e.g. a list``): words of any code's.
_NAME = re.compile(r"['\"`\u2018][^'\"`\u2019\s]+['\"`\u2019]|(?![A-Za-z]\.[A-Za-z]\b)\w*[A-Za-z]\w*(?:[_./\\]|::)\w+|"
                   r"\b[a-z]+[A-Z]\w*|\b(?!\d+(?:\.\d+)?[A-Za-z]{1,3}\b)(?=\w*[A-Za-z])(?=\w*\d)\w+")


def names_what_broke(error_line: str) -> bool:
    """Whether an error line's detail names what broke (a table, module, setting, file: :data:`_NAME`), so that a run
    holding the line met this very failure: ``sqlite3.OperationalError: no such table: __main___author``, ``No module
    named 'test_app'``; not a kind of failure any code may meet in plain words (``IndentationError: unexpected indent``,
    ``SyntaxError: invalid syntax``), which many tasks' runs end in, nor one whose detail is numbers only
    (``AssertionError: 0 != 1``)."""
    named = _NAMED_ERROR.search(error_line)
    return bool(named and _NAME.search(error_line, named.end() - 1))


def _last_occurrence(text: str, line: str) -> re.Match[str] | None:
    """Where ``text`` last holds ``line``, searched in the whole text: one pattern, one pass, however many
    other terms the text holds before it (a long test output's frames used up :data:`MAX_MATCHES`)."""
    if not line:
        return None
    last = None
    for last in _occurrences(text, (line,)):
        pass
    return last


_INDENT = re.compile(r"[ \t]*")


def _like_line(text: str, line: str, width: int) -> re.Match[str] | None:
    """Where ``text`` holds the same error as ``line`` in other words: the longest head of ``line`` (a word short of
    it at least, the error's name at most: ``sqlite3.OperationalError:``) that ``text`` holds, with the rest of the
    line it is on (at most ``width`` characters in all); None if not even the error's name is held.

    A run matched on a paste's frames ends in its own detail (another table, module, test); cut at the pasted
    line's length around its frames, that detail was cut away (``... OperationalError: no s…``; round 24, ENG2).
    Its own line is shown to its end, not to the pasted line's word count (a path with spaces was cut inside), and
    where the error's name alone is held, the line after it is still the run's (its first detail word can differ
    from the paste's). An occurrence opening a line (an output's exception line) is taken before one inside a line
    (a thought quoting the error), the last of either kind."""
    words = line.split(" ")
    named = _NAMED_ERROR.search(line)
    if not named:
        return None
    name = words[:len(line[:named.start()].split(" "))]  # the words up to the error's name, the name's own included
    pattern = re.compile(r"(?<![A-Za-z0-9])%s[^\n]{0,%d}" % (r"\s+".join(map(re.escape, name)),
                                                            max(width - len(" ".join(name)), 0)), re.IGNORECASE)
    head = [word.lower() for word in words[:min(len(words) - 1, LIKE_HEAD_WORDS)]]
    best, best_key = None, (0, False)
    line_start = looked = 0  # where the line of the last match starts; the text is looked back over once
    for match in pattern.finditer(text):
        line_start = max(line_start, text.rfind("\n", looked, match.start()) + 1)
        looked = match.start()
        held = next((i for i, (a, b) in enumerate(zip(match.group(0).lower().split(), head)) if a != b),
                    min(len(head), len(match.group(0).split())))
        key = (held, _INDENT.match(text, line_start).end() >= match.start())
        if key >= best_key:
            best, best_key = match, key
    return best


def _term(match: re.Match[str]) -> str:
    """The term a match is of, as :func:`terms` writes it (lower case, single spaces)."""
    return " ".join(match.group(0).lower().split())


def _weight(found: list[re.Match[str]], start: int, end: int) -> int:
    """How much of the query the window [start, end) shows: the lengths of the distinct terms inside it."""
    inside = {_term(m) for m in found if start <= m.start() and m.end() <= end}
    return sum(len(term) for term in inside)


def failure_error(failure_text: str) -> str:
    """The ``Error:`` line of a failure row's text: what a run is matched on when it is the query
    ("runs like this one")."""
    for line in failure_text.splitlines():
        if line.startswith("Error: "):
            return line[len("Error: "):].strip()
    return ""


def best_step(steps: Sequence[Any], hit: Any, query: str, query_terms: tuple[str, ...]) -> int | None:
    """Which step of a hit's matched window holds the match, by position: the one with ``query`` verbatim, else the
    one with the most distinct ``query_terms`` (a passage hit: its own step); None when no step of the window holds
    any of them (a dense hit of words no step has): then the window matched as a whole, and naming its first step
    claimed a match there that no step holds. One rule for every interface that shows a hit between its neighbours,
    so that the CLI's ``search --expand`` and the web page point at the same step (the CLI marked each step of a
    three-step window as matched, the page one).
    ``steps``: the hit's window and its neighbours (``TrajSearch.expand``), each with ``position`` and ``text``."""
    if hit.level == "passage":  # a passage is the part of one step's output that matched
        return hit.step_index
    needle = " ".join(query.split()).lower()
    best, best_score = None, 0
    for step in steps:
        if not hit.step_index <= step.position <= hit.step_end:
            continue
        flat = " ".join(step.text.split()).lower()
        score = (1000 if len(needle) >= 8 and needle in flat else 0) + sum(1 for t in query_terms if t in flat)
        if score > best_score:
            best, best_score = step.position, score
    return best

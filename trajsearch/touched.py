"""What a run touched: the files it changed and read, the functions and classes it changed,
the tests and commands it ran, the tools it called that change things, and where the code it
read defines things.

Read only from what the run records: unified diffs in outputs and arguments (a
submitted patch, ``git diff``), edit-tool arguments (``path`` + ``old_str`` /
``new_str`` / ``content``), and shell commands (``sed -i FILE``, ``> FILE``,
``tee FILE``, ``open("FILE", "w")``; ``cat`` / ``grep`` / ``sed -n`` / ``head``
of a file; ``pytest`` node ids). When the run shows a diff, the files in its
diffs are what it changed (files it wrote and left out of every diff, such as a
reproduction script, count as read), less those it undid after the last step that showed, wrote or named
them in a command that may write them (``mv F.bak F``; not ``cat F``, ``pytest F > out.txt``, ``git add F``), or ran a
script it wrote naming them (``git checkout setup.py tox.ini``, ``git restore F``, ``rm F``: :func:`undone_by`): a
mini-swe-agent run on SWE-bench that saw the harness's edits in a ``git diff`` and reverted them hands in its fix
alone. When it undid every file its diffs show, what it wrote and kept is what it changed, its scratch files too: no
diff tells a ``reproduce_issue.py`` from a fix then, and dropping the files it created would lose a fix written whole.
A file a diff shows created (``new file mode``: SWE-agent and CodeR hand in their ``reproduce.py``, a scratch Django
project, a sqlite file with the fix) is no file of the project either; a run whose diffs only create files changed
nothing of the project, and its summary lists them as ``created`` (SWE-agent counts a
reproduction script handed in alone as a submission: about 100 of the 238 "successful" runs in
each of two SWE-agent runs of SWE-bench Lite, none a new module of the project). A file a diff shows changed that
no action of the run names (neither its path nor its file name, in any command or argument) was changed by its
environment before the run, not by the run: ``git diff`` shows every uncommitted change, and the SWE-bench harness
leaves its own set-up edits uncommitted in some images (``-rA`` added to ``tox.ini``'s pytest line, pins in
``setup.py`` and ``pyproject.toml``, a deleted ``.coveragerc``), so they came with every submission of those
repositories (see :func:`own_changes`). Nor is a diff a history command shows (``git show REV``, ``git log -p``,
``git diff A..B``: :func:`shows_history`) any change of the run's. Tools are told
apart by name: ``get_``, ``search_``, ``list_``, ``find_``, ``read``, ``view``... read; any
other tool that is not a shell changes something (``book_reservation``, ``str_replace_editor``).

What a read shows also says where code lives: ``def bulk_create`` in the output of
``cat django/db/models/query.py``, a ``grep -rn`` hit ``django/conf/global_settings.py:307:FILE_UPLOAD_PERMISSIONS = 0o644``.
Those definitions (functions, classes, module-level UPPER_CASE settings; per file, as seen)
let a task that names ``bulk_create`` meet a run that changed ``query.py`` even when neither
the task nor the run's patch names the other (see :func:`trajsearch.runtime.rerank.touched_scores`).

This is what makes an exemplar useful beyond its wording: a past run that changed
the module a new task names. The summary row carries it as one ``Touched:`` line
(see :func:`trajsearch.represent.extractive_summary`), so the lexical leg finds a
path, module, class or test named in a new task among the runs that touched it,
and :func:`identifiers` picks those names out of a task.
"""

from __future__ import annotations

import re
import shlex
from collections import Counter
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any, Collection, Iterable, Iterator

from .actions import CALLS_NOTHING, ran
from .memo import call_memo, per_call
from .model import Step, Trajectory, json_strings

#: Tools that run shell commands (their ``command`` argument is parsed).
SHELL_TOOLS = frozenset({"bash", "shell", "sh", "zsh", "terminal", "execute_bash", "run_command", "run_shell_command",
                         "exec_command", "run", "execute", "cmd", "powershell", "local_shell", "container.exec"})


#: Every shell name known, for :func:`tool_kind`: :data:`SHELL_TOOLS` and the shells whose calls are not parsed here
#: (Terminus-2's ``bash_command`` types ``keystrokes``; Cline's ``execute_command``, Cursor's ``run_terminal_cmd``,
#: Copilot's ``run_in_terminal``). A shell missing here is a tool of its own, and an agent with it "has no shell".
SHELL_NAMES = SHELL_TOOLS | {"bash_command", "execute_command", "run_terminal_cmd", "run_in_terminal"}

#: The kind of every shell (:func:`tool_kind`).
SHELL = "shell"


def tool_kind(name: str) -> str:
    """What a tool is, for comparing one agent's tool list with another's runs: a shell is a shell whatever its harness
    calls it (OpenHands' ``execute_bash``, SWE-agent's ``bash``, Gemini CLI's ``run_shell_command``), other tools by
    name, case and all. Compared by name, an agent listing ``execute_bash`` had none of a ``bash`` run's tools. The
    generic names of :data:`SHELL_TOOLS` (``run``, ``execute``, ``cmd``) are shells here too, whatever they run."""
    return SHELL if name.lower() in SHELL_NAMES else name


#: A tool whose name starts like this only reads (or talks): it touches nothing.
_READ_TOOL = re.compile(r"^(?:get|search|list|find|fetch|read|view|open|lookup|query|check|calculate|think|respond"
                        r"|describe|show|grep|glob|ls|cat|browse|web_search|ask|say|message|transfer|finish|submit)"
                        r"(?:_|$)|(?:^|_)(?:view|read|search|list|get)$", re.I)
_PATH_KEYS = ("path", "file_path", "filepath", "filename", "file", "target_file", "notebook_path", "file_name")
_CONTENT_KEYS = ("new_str", "content", "file_text", "code", "new_string", "text", "patch", "diff", "insert_text")

_DIFF_FILE = re.compile(r"^diff --git a/(\S+) b/(\S+)", re.M)
_DIFF_PLUS = re.compile(r"^\+\+\+ (?:b/)?(\S+)", re.M)
#: A file section's header in Codex's ``apply_patch`` envelope (codex-rs ``apply-patch/src/parser.rs``: ``*** Add
#: File: P``, ``*** Delete File: P``, ``*** Update File: P`` and its rename's ``*** Move to: Q``), however the patch is
#: handed to it: a shell's heredoc (``apply_patch <<'PATCH'``), an argv's last argument, the custom tool's input. It
#: has no unified diff's ``+++`` line, so ``_DIFF_PLUS`` never names its files.
_PATCH_BEGIN = "*** Begin Patch"
_PATCH_FILE = re.compile(r"^\*\*\* (?:(?:Add|Delete|Update) File|Move to): (.+?)\s*$", re.M)
_HUNK = re.compile(r"^@@ [^@\n]* @@ ?(.*)$", re.M)
_DEF = re.compile(r"\b(?:async\s+)?(?:def|class|function|func|fn)\s+(?:\([^)]*\)\s*)?([A-Za-z_]\w*)")
_CHANGED_DEF = re.compile(r"^[+-]\s*(?:async\s+)?(?:def|class)\s+([A-Za-z_]\w*)", re.M)
#: A file argument: a path with a directory, or a name with a usual file extension.
_FILE_TOKEN = re.compile(r"""^(?:/?(?:[\w.@+-]+/)+[\w.@+-]+
                          |[\w.@+-]*\w\.(?:py|pyi|pyx|txt|md|rst|cfg|toml|ini|json|ya?ml|sql|js|jsx|ts|tsx|c|h|cc|cpp
                             |hpp|go|rs|java|kt|rb|php|sh|html|css|xml|csv|lock|in|conf|ipynb|dcm|scala|swift|r))$""", re.X)
_HEREDOC = re.compile(r"<<-?\s*['\"]?(\w+)['\"]?")
#: SWE-agent's file viewer (``open``, ``goto``, ``scroll_down``, ``edit``, ``create``) heads its output
#: with the file it shows: ``[File: /repo/pkg/mod.py (372 lines total)]``.
_FILE_VIEW = re.compile(r"^\[File: (\S+) \(\d+ lines total\)\]")
_OPEN_WRITE = re.compile(r"""open\(\s*['"]([^'"\s]+)['"]\s*,\s*['"][wa]""")
_WRITE_TEXT = re.compile(r"""Path\(\s*['"]([^'"\s]+)['"]\s*\)\.write_(?:text|bytes)""")
_REDIRECT = re.compile(r"(?<![<>&\d])>>?\s*([^\s;&|<>]+)")
#: A word that is a redirection (``2>&1``, ``>>log``, ``&>out``, ``<in``, ``2>``): what follows its operator, if any.
_REDIRECTION = re.compile(r"^(?:\d+|&)?(?:>>?|<)&?(.*)$")
_READERS = frozenset({"cat", "head", "tail", "nl", "less", "more", "wc", "bat", "view", "open"})  # open: SWE-agent's
_SEARCHERS = frozenset({"grep", "egrep", "fgrep", "rg", "ag", "awk", "ack"})  # first argument: a pattern
_RUNNERS = frozenset({"pytest", "py.test", "tox", "nosetests"})
_SKIP_WORDS = frozenset({"sudo", "time", "timeout", "env", "nohup", "exec", "xargs"})
#: First words of a line that are no command (code in a quoted script or a patch that the rough split reached; a
#: JavaScript ``(async () => {`` line once its parenthesis is read as a subshell's).
_NOT_COMMANDS = frozenset({"def", "class", "import", "from", "return", "if", "else", "elif", "for", "while", "try",
                           "except", "with", "print", "raise", "assert", "pass", "self", "result", "then", "fi", "do",
                           "done", "EOF", "async"})
_NOT_FILES = re.compile(r"^(?:/dev/|/tmp/|/proc/)|^-")
#: A definition as a reader shows a file (``cat``, ``cat -n``, ``nl``, ``sed -n``, ``grep -n``, an
#: editor's view), after an optional line number: a function or class, or a module-level
#: UPPER_CASE setting (at the start of its line).
_LINE_NO = r"^(?:[ \t]*\d+(?:[:\t-]|  +))?"
_SHOWN_DEF = re.compile(_LINE_NO + r"[ \t]*(?:export\s+(?:default\s+)?|pub(?:\(crate\))?\s+)?(?:async\s+)?"
                        r"(?:def|class|function|func|fn)\s+([A-Za-z_]\w*)", re.M)
_SHOWN_SETTING = re.compile(_LINE_NO + r"([A-Z][A-Z0-9]*_[A-Z0-9_]+)[ \t]*=(?!=)", re.M)
#: The extensions of source files (a regex alternation), for every pattern that finds one.
SOURCE_EXTENSIONS = "py|pyi|pyx|js|jsx|ts|tsx|go|rs|java|kt|rb|php|c|h|cc|cpp|hpp|scala|swift"
_SOURCE_FILE = rf"[\w./@+-]+\.(?:{SOURCE_EXTENSIONS})"
#: Whether a name ends in a source file. Searched, it starts only where a run of path characters starts: from each of
#: them, a long name with no source extension (``....``) cost time quadratic in its length (probe I, I1).
_SOURCE = re.compile(r"(?<![\w./@+-])" + _SOURCE_FILE + "$")
#: One line of a search over many files: ``path:line:text`` (``grep -rn``, ``rg -n``).
_GREP_HIT = re.compile(r"^(?:\./)?(" + _SOURCE_FILE + r")[:-]\d+[:-](.*)$", re.M)

#: How many of each kind the summary line lists.
_SHOWN = {"changed": 12, "read": 10, "symbols": 20, "tests": 8, "commands": 12, "calls": 10}
#: How many changed (or created) files the summary line lists at most: a list that long may have been cut.
FILES_SHOWN = _SHOWN["changed"]
#: How many files the summary line lists as defined, and how many names per file: the first 16 seen, then up to 16
#: more CamelCase names (gemini-3-pro's runs: 19.9 names per run on average, 75 at most).
_DEFINED_FILES, _DEFINED_NAMES = 12, 16
#: A CamelCase name (``RenameModel``, not a setting's ``FILE_UPLOAD_PERMISSIONS`` or a method's ``state_forwards``):
#: mostly classes, but also Go's ``func NewServer`` or JS's ``function MyComponent``. Listed beyond
#: ``_DEFINED_NAMES``, as the first names of a big module are one class's methods and a task names the class
#: (see :func:`_listed_definitions`).
_CAMEL_CASE = re.compile(r"_*[A-Z]\w*[a-z]\w*")


@dataclass
class Touched:
    """What a run touched; lists in order of first sight (commands: most used first)."""

    changed: list[str] = field(default_factory=list)
    #: the files a run whose diffs only create files created (then it changed nothing: see the module)
    created: list[str] = field(default_factory=list)
    read: list[str] = field(default_factory=list)
    symbols: list[str] = field(default_factory=list)
    tests: list[str] = field(default_factory=list)
    commands: list[str] = field(default_factory=list)
    calls: list[str] = field(default_factory=list)
    #: file -> the functions, classes and settings the run saw defined there (in what it read)
    defined: dict[str, list[str]] = field(default_factory=dict)

    @property
    def modules(self) -> list[str]:
        """Dotted module names of the changed source files (``src/pkg/mod.py`` -> ``pkg.mod``)."""
        return list(dict.fromkeys(m for m in map(module_of, self.changed) if m))

    def line(self) -> str:
        """One line for the summary row ("" when nothing was touched)."""
        parts = []
        if self.changed:
            modules = self.modules[: _SHOWN["changed"]]
            parts.append("changed " + ", ".join(self.changed[: _SHOWN["changed"]])
                         + (f" (modules {', '.join(modules)})" if modules else ""))
        if self.created:
            parts.append("created " + ", ".join(self.created[: _SHOWN["changed"]]))
        for name, label in (("symbols", "functions/classes"), ("read", "read"), ("tests", "tests"),
                            ("calls", "calls"), ("commands", "commands")):
            values = getattr(self, name)[: _SHOWN[name]]
            if values:
                parts.append(f"{label} {', '.join(values)}")
        if self.defined:
            parts.append("definitions read " + ", ".join(_listed_definitions(self.defined)))
        return ("Touched: " + "; ".join(parts) + ".") if parts else ""


def _listed_definitions(defined: dict[str, list[str]]) -> list[str]:
    """The ``path: name name ...`` entries a summary lists as defined: for each of the first ``_DEFINED_FILES``
    files, the first ``_DEFINED_NAMES`` names seen; then, as a second entry per file, the CamelCase names seen after
    them (as many again at most). A read of a big module shows one class's methods first: gemini-3-pro's run of
    django-15499 saw ``class RenameModel`` in ``migrations/operations/models.py`` as its 23rd name there, after
    ``CreateModel``'s ``state_forwards``, ``describe``, ..., so no summary said where ``RenameModel`` lives, and
    django-14999 ("RenameModel with db_table should be a noop") had no home for it (round 27). The extras come after
    every file's first names, so if the summary clips the line it drops extras, not a later file's first names."""
    files = list(defined.items())[:_DEFINED_FILES]
    first = [f"{path}: {' '.join(names[:_DEFINED_NAMES])}" for path, names in files]
    more = ((path, [name for name in names[_DEFINED_NAMES:] if _CAMEL_CASE.fullmatch(name)][:_DEFINED_NAMES])
            for path, names in files)
    return first + [f"{path}: {' '.join(names)}" for path, names in more if names]


def module_of(path: str) -> str:
    """``pvlib/irradiance.py`` -> ``pvlib.irradiance``; ``src/sqlfluff/rules/L031.py`` -> ``sqlfluff.rules.L031``."""
    stem, dot, ext = path.rpartition(".")
    if not dot or ext not in ("py", "pyi", "pyx", "js", "ts", "jsx", "tsx", "go", "rs", "java", "rb", "kt", "scala"):
        return ""
    parts = [p for p in stem.split("/") if p and p not in (".", "..")]
    while parts and parts[0] in ("src", "lib", "testbed", "app"):
        parts = parts[1:]
    if parts and parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts) if parts and all(re.fullmatch(r"[A-Za-z_][\w-]*", p) for p in parts) else ""


@dataclass
class _Reading:
    """What the steps read so far show touched, as recorded (paths not yet made relative: see ``_paths``)."""

    diffed: list[str] = field(default_factory=list)
    created: list[str] = field(default_factory=list)  # files a diff shows created (``new file mode``, ``--- /dev/null``)
    written: list[str] = field(default_factory=list)
    read: list[str] = field(default_factory=list)
    symbols: list[str] = field(default_factory=list)
    tests: list[str] = field(default_factory=list)
    commands: Counter[str] = field(default_factory=Counter)
    calls: list[str] = field(default_factory=list)
    roots: set[str] = field(default_factory=set)
    seen: list[tuple[str, str]] = field(default_factory=list)  # (file, name) definitions shown by reads
    said: list[str] = field(default_factory=list)  # the run's own words to its tools: actions and their arguments
    shell: list[str] = field(default_factory=list)  # the shell commands it ran

    def changed(self) -> list[str]:
        """The files changed: those of the diffs shown, else those written (see the module docstring)."""
        return _paths(self.diffed or self.written, self.roots)

    def mark(self) -> tuple[int, int, int]:
        """Where the next step's diffed files, written files and words will start (:class:`_Reverts`' marks)."""
        return len(self.diffed), len(self.written), len(self.said)


def _read_step(step: Step, reading: _Reading) -> None:
    """Add what one step touched to ``reading``."""
    action = (step.action or "").strip()
    args = step.arguments
    texts = [step.observation or ""] + list(json_strings(args))
    _say(step, reading, texts[1:])
    if not ran(step):  # a call the harness did not run read and wrote nothing
        return
    command = _command(action, args)
    history = command is not None and shows_history(command)  # another commit's diff: no change of the run's
    for at, text in enumerate(texts[1:] if history else texts, start=1 if history else 0):
        envelope = at > 0 and _PATCH_BEGIN in text  # an envelope is the call's: one in its output is an example
        if "@@" in text or "diff --git" in text or envelope:
            files, names = _diff(text, envelope=envelope)
            reading.diffed += files
            reading.created += _created(text)
            reading.symbols += names
    viewed = _FILE_VIEW.match((step.observation or "").lstrip())
    if viewed:  # SWE-agent's viewer shows one file, whichever command asked: its header says which
        reading.seen += _definitions(step.observation or "", [viewed.group(1)])
    if command is not None:
        first = len(reading.read)
        _shell(command, reading.written, reading.read, reading.tests, reading.commands, reading.roots)
        if not viewed:
            reading.seen += _definitions(step.observation or "", reading.read[first:])
        return
    if not action or action.lower() in SHELL_TOOLS:
        return
    path = _path_argument(args)
    reading_tool = bool(_READ_TOOL.search(action)) or (isinstance(args, dict) and str(args.get("command", "")).lower()
                                                       in ("view", "read", "open", "show"))
    if path:
        (reading.read if reading_tool else reading.written).append(path)
        if reading_tool:
            if not viewed:
                reading.seen += _definitions(step.observation or "", [path])
        else:
            for key in _CONTENT_KEYS:
                value = args.get(key) if isinstance(args, dict) else None
                if isinstance(value, str):
                    reading.symbols += _DEF.findall(value)
    elif not reading_tool:
        reading.calls.append(action)


def _say(step: Step, reading: _Reading, arguments: list[str] | None = None) -> None:
    """Keep what a step recorded with its arguments asked its tools for (its action and argument strings)."""
    arguments = list(json_strings(step.arguments)) if arguments is None else arguments
    if arguments:
        reading.said += [(step.action or "").strip(), *arguments]
        command = _command((step.action or "").strip(), step.arguments)
        if command:
            reading.shell.append(command)


def changed_by(step: Step) -> list[str]:
    """The files one step changed, as :func:`touched` reads a run: those of a diff it shows, else what its
    command or edit wrote. Per step, so a caller can tell which step changed what (an exemplar's key actions)."""
    reading = _Reading()
    _read_step(step, reading)
    return reading.changed()


class RunReading:
    """A run's steps read once (:func:`_read_step`, in order), for everything asked of them: the summary's
    ``Touched:`` line (:func:`touched`) and the exemplar digest's choice of key actions (:func:`own_changes`,
    :meth:`changed_by`). Read by each of those, every shell command of a run was parsed three times, most of the cost
    of making its rows (README, "What a run touched"). Get one with :func:`run_reading`; what it holds is read-only,
    shared by every caller in a :func:`read_once` block."""

    def __init__(self, trajectory: Trajectory) -> None:
        self.trajectory = trajectory  # held, so its steps' ids (``_position``) stay theirs (a pydantic Step: no hash)
        self._position = {id(step): n for n, step in enumerate(trajectory.steps)}
        self._changed: dict[int, list[str]] = {}
        #: the run's steps read in order into one, and where each step's part starts (and one past the last)
        self.whole = _Reading()
        self.marks: list[tuple[int, int, int]] = []
        #: each step's own working directories: the rest of what :func:`changed_by` reads of a step is its part of
        #: ``whole`` (its marks), as :func:`_read_step` only appends what it reads of a step to the lists it is given
        self._roots: list[frozenset[str]] = []
        shared: dict[frozenset[str], frozenset[str]] = {}  # one of each: most steps cd nowhere, or where the last did
        for step in trajectory.steps:
            self.marks.append(self.whole.mark())
            self.whole.roots = set()  # this step's alone; the run's are their union (below)
            _read_step(step, self.whole)
            roots = frozenset(self.whole.roots)
            self._roots.append(shared.setdefault(roots, roots))
        self.marks.append(self.whole.mark())
        self.whole.roots = set().union(*self._roots)

    def changed_by(self, step: Step) -> list[str]:
        """:func:`changed_by` of one of the run's steps, from its part of the reading (a step of another run is
        read)."""
        n = self._position.get(id(step))
        if n is None:
            return changed_by(step)
        if n not in self._changed:
            (diffed, written, _), (diffed_end, written_end, _) = self.marks[n], self.marks[n + 1]
            files = self.whole.diffed[diffed:diffed_end] or self.whole.written[written:written_end]
            self._changed[n] = _paths(files, self._roots[n])
        return self._changed[n]


_ONCE: ContextVar[RunReading | None] = ContextVar("trajsearch_run_reading", default=None)


@contextmanager
def read_once(trajectory: Trajectory) -> Iterator[None]:
    """Within: :func:`run_reading` of ``trajectory`` (this object, not an equal one) answers from one reading of its
    steps, made here; the ingest makes a run's summary and digests inside one (``indexer.indexed_rows``).
    The reading is dropped on leaving, so it holds one run for one block: no run's reading outlives its rows, nor
    answers for another. A context variable, as :mod:`trajsearch.memo`: each thread its own; a nested block
    of the same run shares it. Not for a block holding a ``yield`` (its caller would share the reading while it is
    suspended), nor for one that edits the run's steps in place (the reading is of the steps as they were).
    The block is a :func:`~trajsearch.memo.call_memo` too: each command's split (:func:`_segments`) and read test
    (``steps.is_read``), asked again of its steps after the reading, are worked out once in it and dropped with it."""
    with call_memo():
        current = _ONCE.get()
        token = None if current is not None and current.trajectory is trajectory else _ONCE.set(RunReading(trajectory))
        try:
            yield
        finally:
            if token is not None:
                _ONCE.reset(token)


def run_reading(trajectory: Trajectory) -> RunReading:
    """``trajectory``'s steps read: once inside :func:`read_once` of it, else afresh at each call."""
    current = _ONCE.get()
    return current if current is not None and current.trajectory is trajectory else RunReading(trajectory)


def own_changes(trajectory: Trajectory, files: Iterable[str]) -> list[str]:
    """Of ``files`` (a patch's, relative to the repository), those the run's own actions name: the rest were changed
    before it started, by its environment (see the module docstring), and are no work of the run. Only where the
    run's record can say so (:func:`_named`)."""
    # read as touched() reads it (the same reading in an ingest): the files its diffs show created count (review RZ)
    reading = run_reading(trajectory).whole
    return _named(list(files), reading, _cut(trajectory), _paths(reading.created, reading.roots), _whole(trajectory))


def named_by_actions(trajectory: Trajectory, files: Iterable[str]) -> list[str]:
    """Of ``files``, those the run's recorded actions name (path or file name), with none of :func:`own_changes`'
    fallbacks: a run handing in only the harness's ``tox.ini`` / ``setup.py`` edits and its scratch files keeps them
    there (its record may lack the steps that made its change), and none here. For evaluation: work two runs share
    by a file neither named is no evidence that they did the same work (``eval_generalise.py --named-truth``)."""
    return _said(list(files), run_reading(trajectory).whole)


def _said(files: list[str], reading: _Reading) -> list[str]:
    """The files whose path or file name the run's actions recorded with their arguments (``reading.said``) hold."""
    text = "\n".join(reading.said)
    return [path for path in files if path in text or path.rsplit("/", 1)[-1] in text]


#: Metadata saying a run's record lacks some of its steps or texts (a long run's middle left out, span attributes
#: cut by an OpenTelemetry SDK, a Claude Code sub-agent's turns kept out of the run's steps): what it does not name
#: it may have named in what is missing.
_CUT_MARKS = ("steps_dropped", "steps_truncated_from", "tags_cut", "sidechain_records")


def _cut(trajectory: Trajectory) -> bool:
    return any(trajectory.metadata.get(mark) for mark in _CUT_MARKS)


def _whole(trajectory: Trajectory) -> bool:
    """Whether the record holds every step the run took, by the count of model calls its format records
    (mini-swe-agent's and SWE-agent's ``api_calls``): a trimmed record keeps fewer steps than it made calls."""
    calls = trajectory.metadata.get("api_calls")
    return isinstance(calls, int) and 0 < calls <= len(trajectory.steps)


def _named(files: list[str], reading: _Reading, cut: bool = False, created: Iterable[str] = (),
           whole: bool = False) -> list[str]:
    """The files whose path or file name the run's actions recorded with their arguments (``reading.said``) hold. An
    agent changes a file by naming it (an edit's path, ``sed -i``, ``open`` before SWE-agent's ``edit``, a script's
    ``open``, a patch it applies); the set-up's edits it never names. A file it names only to read it stays
    (``cat tox.ini``).

    All of ``files`` where the record cannot tell: no action recorded with its arguments, or none naming any of
    ``files`` but those a diff shows ``created`` (a dump holding the patch and not the steps that made it: trimmed
    records, SWE-agent trajectories whose editing steps were not kept, that name only the reproduction script they
    hand in; a run whose every write names files by a glob or a script's walk), a diff of only created files
    unless the record is ``whole`` (:func:`_whole`; then judged file by file: CodeR hands in a ``.coveragerc`` its
    environment wrote), a ``cut`` record, or a command that writes files it does not name (:func:`_writes_unnamed`:
    ``grep -rl x | xargs sed -i``, ``sed -i ... src/*.py``, ``npm install`` changing ``package.json``). Review RR3:
    a whole run naming none of its diff's files had them all dropped, its fix with the harness's edits."""
    if not reading.said or cut:
        return files
    named = _said(files, reading)
    project = set(files) - set(created)  # a diff of only created files: a run naming none of them made none
    if (project and not project & set(named) or not project and not whole or len(named) == len(files)
            or any(_writes_unnamed(command) for command in reading.shell)):
        return files
    return named


#: One simple command whose diff is other commits' (upstream history: ``git show REV``, ``git log -p``, ``git diff
#: A..B``), not the run's change; git's global options allowed (``git --no-pager log -p``, ``git -C dir show``).
HISTORY = re.compile(r"^\s*git\s+(?:(?:-C|-c|--git-dir|--work-tree)\s+\S+\s+|--?[\w-]+(?:=\S*)?\s+)*"
                     r"(?:(?:show|log)\b|diff\s+(?:-\S+\s+)*[^\s-]\S*[^\s/.]\.\.)")
#: One simple command that shows the work tree's own change (``git diff``, ``git diff --cached``, ``git status -v``).
_OWN_DIFF = re.compile(r"^\s*git\s+(?:(?:-C|-c|--git-dir|--work-tree)\s+\S+\s+|--?[\w-]+(?:=\S*)?\s+)*"
                       r"(?:diff|status\s.*-v)\b")


def shows_history(command: str) -> bool:
    """Whether the diffs a command shows are history's (:data:`HISTORY`): one of its simple commands (split at
    ``&&``, ``;``, ``|``, newlines) is a history command and none shows the run's own change. ``git log --oneline -1
    && git diff`` shows the run's diff; ``cd x; git show REV`` and ``git --no-pager log -p`` show history."""
    if "git" not in command:
        return False
    segments = _segments(command)
    return (any(HISTORY.match(segment) for segment in segments)
            and not any(_OWN_DIFF.match(segment) and not HISTORY.match(segment) for segment in segments))


#: Programs that change files of the project no argument names (a small list: what agents run that rewrites
#: manifests, lock files, migrations or whole trees): package managers (``npm install`` -> ``package.json``,
#: ``poetry add`` -> ``pyproject.toml``, ``go mod tidy`` -> ``go.sum``) but for their read-only verbs. Not ``pip``
#: (it installs into site-packages) nor ``make`` (gemini's sphinx runs ``make html`` in a scratch project): they leave
#: the work tree as it was.
_MANAGERS = frozenset({"npm", "npx", "yarn", "pnpm", "poetry", "cargo", "go", "uv", "pipenv", "pip-compile",
                       "bundle", "composer"})
_MANAGER_READS = frozenset({"test", "t", "list", "ls", "view", "info", "show", "version", "--version", "-v",
                            "-V", "help", "--help", "outdated", "search", "why", "vet", "doc", "env", "tree",
                            "check", "build", "run"})
#: Formatters rewrite every file they are given a directory of (``black .``): all but ``--check`` / ``--diff`` ones;
#: ``ruff`` and ``eslint`` only with ``--fix`` (or ``ruff format``).
_FORMATTERS = frozenset({"black", "isort", "autopep8", "yapf", "autoflake", "prettier", "gofmt", "goimports",
                         "rustfmt", "clang-format", "pyupgrade", "2to3", "pre-commit"})
_FIXERS = frozenset({"ruff", "eslint", "stylelint"})
_LOOP = re.compile(r"^(?:for|while|until)\s[^:]*$")  # a shell loop (a Python one ends in ":")
#: A script that walks the tree (``Path('src').rglob('*.py')``, ``os.walk``, ``glob.glob``) and writes what it finds.
_SCRIPT_WALK = re.compile(r"\b(?:rglob|iglob|glob|walk)\(")
_SCRIPT_WRITE = re.compile(r"\b(?:write_text|write_bytes|write|rename|replace|unlink)\(|open\([^)]*['\"][wa]")


def _writes_unnamed(command: str) -> bool:
    """Whether a shell command may change files it does not name: a writer fed by ``xargs``, ``find -exec`` or
    ``$(...)`` / backticks, a loop whose body may write, a package manager (:data:`_MANAGERS`), a formatter
    (:data:`_FORMATTERS`), ``manage.py makemigrations``. Any text; most are no command and quickly say no."""
    if _SCRIPT_WALK.search(command) and _SCRIPT_WRITE.search(command):  # a script writing the files it walks
        return True
    if not re.search(r"xargs|-exec|\$\(|`|[*?]|\b(?:for|while|until)\s|makemigrations|apply|patch|\b(?:"
                     + "|".join(re.escape(p) for p in _MANAGERS | _FORMATTERS | _FIXERS) + r")\b", command):
        return False
    segments = _segments(command)
    looping = False
    for segment in segments:
        words = [w.strip("'\"") for w in _words(segment)]
        while words and (words[0] in ("sudo", "time", "timeout", "env", "nohup", "exec", "do", "then", "else")
                         or "=" in words[0] or words[0].isdigit()):
            words = words[1:]
        if not words:
            continue
        if _LOOP.match(segment):
            looping = True
            continue
        name = words[0].rsplit("/", 1)[-1]
        if not re.fullmatch(r"[a-z][\w.+-]*", name) or name in _NOT_COMMANDS:  # a comment, code in a quoted script
            continue
        if name.startswith("python") and words[1:2] == ["-m"] and len(words) > 2:
            name, words = words[2], words[2:]
        verb = next((w for w in words[1:] if not w.startswith("-")), "")
        if (looping and name != "done" and _may_write([" ".join(words)])
                or name in _MANAGERS and verb not in _MANAGER_READS
                or name in _FORMATTERS and not {"--check", "--diff", "-l", "--list-different"} & set(words)
                or name in _FIXERS and ("--fix" in words or verb == "format")
                or "makemigrations" in words):
            return True
        for feeder in ("xargs", "-exec", "-execdir", "-ok"):
            if feeder in words:
                fed = [w for w in words[words.index(feeder) + 1:] if not w.startswith("-") or w in ("-i", "--in-place")]
                if fed and fed[0] != "rm" and _may_write([" ".join(fed)]):  # rm: of caches (__pycache__)
                    return True
        if ("$(" in segment or "`" in segment) and name not in ("cd", "export", "test", "[") and _may_write([segment]):
            return True
        if (name in ("sed", "perl", "cp", "mv") and any(c in w for w in words[1:] for c in "*?")
                or name == "patch" or name == "git" and "apply" in words[1:3]):  # files a glob or a patch names
            return True
        if name == "done":
            looping = False
    return False


#: The programs :func:`undone_by` looks for (a quick test: most commands undo nothing).
_UNDOING = re.compile(r"\b(?:rm|git)\b")
#: What :class:`Undo` names for the whole working tree (``git stash``, ``git checkout .``, ``git reset --hard``).
EVERY_FILE = "."


@dataclass(frozen=True)
class Undo:
    """What one step set back: files restored to their committed state or removed (:data:`EVERY_FILE`: all of
    them), the changes it set aside (``stashed``: a ``git stash``), or the ones it brought back (``unstashed``)."""

    files: tuple[str, ...] = ()
    stashed: bool = False
    unstashed: bool = False


def undone_by(step: Step) -> Undo:
    """What a step's shell command undid: ``git checkout [--] FILE``, ``git restore FILE`` (not ``--staged`` alone),
    ``git stash [push] [-- FILE]`` (``pop`` / ``apply`` bring it back), ``git reset --hard``, ``rm FILE``. A run's
    earlier changes of those files are not what it left (a ``git stash`` ... ``git stash pop`` in one command: none).
    Not an undo: one after a ``cd`` (its paths are another tree's), one that a later command of the line may
    write again (``git checkout F && python3 patch_f.py``: review 3, N2), a checkout of another revision's
    content (:func:`_checkout_undone`, :func:`_from_head`), or one git refused (its words in the step's output, read
    only where the line ran one checkout)."""
    command = _command((step.action or "").strip(), step.arguments) or ""
    if not _UNDOING.search(command):
        return Undo()
    undone: list[str] = []
    stash: list[str] | None = None  # what a git stash of this command set aside, until it brings it back
    unstashed = False
    segments = _segments(command)
    # git's words after a checkout are its one checkout's only where the line ran one checkout or restore (which
    # say alike): ``git checkout nosuch.py; git checkout setup.py`` printed a refusal that is the first's, ``... &&
    # git checkout F`` an update of the last, ``git checkout F; git restore nosuch.py`` the restore's refusal
    checkouts = sum(_words(segment)[:2] in (["git", "checkout"], ["git", "restore"]) for segment in segments)
    said = (step.observation or "") if checkouts == 1 else ""
    for n, segment in enumerate(segments):
        program, verb, rest = _program_words(segment)
        if program == "cd":  # what follows runs elsewhere: its paths are not the run's (cd /tmp/x && rm -rf pkg)
            break
        if program == "git" and verb == "stash" and rest[:1] in (["pop"], ["apply"]):
            unstashed, stash = stash is None, None
        elif program == "git" and verb == "stash" and (not rest or rest[0] in ("push", "save") or rest[0].startswith("-")):
            stash = _named_files(rest[1:] if rest and rest[0] in ("push", "save") else rest) or [EVERY_FILE]
        elif program in ("rm", "git") and not _writes_again(segments[n + 1:]):  # else undone, then written again (git checkout F && python3 patch_f.py)
            undone += _reverted(program, verb, rest, said) or []
    files = _paths([EVERY_FILE if f == "./" else f for f in undone + (stash or [])], set())
    return Undo(tuple(files), stash is not None, unstashed)


def _program_words(segment: str) -> tuple[str, str, list[str]]:
    """A simple command's program, its first word after it and the words after that (quotes off, none empty)."""
    program, verb, *rest = [word.strip("'\"") for word in _words(segment)] + ["", ""]
    return program, verb, [word for word in rest if word]


def _reverted(program: str, verb: str, rest: list[str], said: str) -> list[str] | None:
    """The files one simple command sets back to their committed state or removes (``rm``, ``git reset --hard``,
    ``git checkout`` / ``git restore`` of files from the index or HEAD; ``said``, git's words after it), or None
    if it is no such command (``git reset --hard HEAD~1`` writes another revision's files)."""
    if program == "rm":
        return [word for word in [verb, *rest] if word and not word.startswith("-")]
    if program != "git":
        return None
    if verb == "reset" and "--hard" in rest:  # to HEAD only: another revision's files (HEAD~1, origin/main) stay changed
        return [EVERY_FILE] if all(w in ("HEAD", "@") or _COMMIT_ID.fullmatch(w)
                                   for w in _without_redirections(rest) if not w.startswith("-")) else None
    if verb == "checkout" and not {"-b", "-B", "--orphan"} & set(rest):
        return _checkout_undone(rest, said)
    if verb == "restore" and ({"--worktree", "-W"} & set(rest) or not {"--staged", "-S"} & set(rest)) \
            and _from_head(rest):
        return _named_files(rest)
    return None


def _writes_again(segments: Iterable[str]) -> bool:
    """Whether a command after an undo in one line may write files again: one that may write (:func:`_may_write`)
    and sets no file back (:func:`_reverted`). Another undo, of other files or of a name git finds no file for
    (``git checkout F; git restore nosuch.py``), writes no change into a file; a switch of branch (``git checkout
    main``: no file named) or another revision's content (``git checkout HEAD~1 -- F``) may."""
    return any(_may_write([segment]) and not _reverted(*_program_words(segment), "") for segment in segments)


#: Programs that change no file of the run (what may follow an undo in one command and leave it undone).
_READ_ONLY = frozenset({"ls", "cat", "echo", "printf", "true", "pwd", "grep", "rg", "head", "tail", "wc", "find"})
#: What git does without changing a file of the work tree.
_GIT_READS = frozenset({"status", "diff", "log", "show", "branch", "rev-parse", "ls-files", "blame", "grep"})


def _may_write(segments: list[str]) -> bool:
    """Whether any of these simple commands may change a file: a program not known to only read (``git`` but for
    its reads, ``git apply`` writes), or output redirected."""
    for segment in segments:
        words = _words(segment)
        if not words:
            continue
        reads = words[0] in _READ_ONLY or (words[0] == "git" and len(words) > 1 and words[1] in _GIT_READS)
        if not reads or re.search(r"(?<![<>&0-9])>(?!&)", segment):
            return True
    return False


#: A commit's id, as an agent resets to one: the commit it started from (the one it knows unless it committed; a
#: task's ``base_commit``), so a ``git reset --hard`` to it is taken for one to HEAD; its edits are gone either way.
_COMMIT_ID = re.compile(r"[0-9a-f]{7,40}")
#: A word that names a revision, not a file: ``HEAD~1``, ``main^``, ``stash@{0}``.
_REVISION_MARK = re.compile(r"[~^@{]")
#: A release tag, a revision though it has dots: ``v1.2``, ``2.0.1``.
_VERSION_TAG = re.compile(r"v?\d+(?:\.\d+)+$")


#: What git (2.22+, ``checkout_paths``) says on stderr after ``git checkout`` wrote files: from the index (no
#: revision among its operands) or from a revision's tree, by its abbreviated hash (the first operand was one).
_CHECKED_OUT = re.compile(r"^Updated \d+ paths? from (?:(the index)|[0-9a-f]{4,})\s*$", re.M)
#: git refusing a checkout of files, which then writes none: a name that is neither a file nor a revision (``error:
#: pathspec 'X' did not match any file(s) known to git``, for any one of them; exit 1), a name that is both
#: (``fatal: ambiguous argument 'X': both revision and filename``, exit 128).
_CHECKOUT_REFUSED = re.compile(r"^(?:error: pathspec '.*' did not match any file|fatal: ambiguous argument '.*': "
                               r"both revision and filename)", re.M)


def _checkout_undone(words: list[str], said: str) -> list[str]:
    """The files a ``git checkout`` (its words after the verb; ``said``, its step's output) put back to their
    committed state: those after ``--`` when no other revision comes before it. Without ``--`` git reads the first
    of several operands as a revision only if it is one (``git checkout Makefile setup.py`` restores both, ``git
    checkout main F`` writes main's F: a change stays, as after ``-p``): its own words say which it did
    (:data:`_CHECKED_OUT`) and when it wrote nothing (:data:`_CHECKOUT_REFUSED`, exit 1); where they were not kept,
    a first operand that names no file (no extension, a revision's mark or a release tag's form: ``main F``,
    ``HEAD~1 F``, ``v1.2 F``) is taken for a revision, an only one too: ``git checkout feature/x`` switches branch
    (review RALL-A: its slash made it a file restored)."""
    words = _without_redirections(words)
    if {"-p", "--patch"} & set(words) or _CHECKOUT_REFUSED.search(said):
        return []
    if "--" in words:
        at = words.index("--")
        revisions = [word for word in words[:at] if not word.startswith("-")]
        return words[at + 1:] if all(word == "HEAD" for word in revisions) else []
    operands = [word for word in words if not word.startswith("-")]
    told = _CHECKED_OUT.search(said)
    if told:
        from_index = told.group(1) is not None
    else:
        from_index = not operands or _names_file(operands[0])
    if from_index:  # every operand a file (git's word), or those that look like one (none said)
        return operands if told else _named_files(operands)
    return operands[1:] if operands[:1] == ["HEAD"] else []


def _names_file(operand: str) -> bool:
    """Whether a checkout's operand looks like a file, not a revision: a directory's (``src/``, ``.``) or a name with an
    extension, neither a revision's mark (``HEAD~1``) nor a release tag's form (``v1.2``)."""
    name = operand.rstrip("/").rsplit("/", 1)[-1]
    return operand.endswith("/") or ("." in name and not _REVISION_MARK.search(operand)
                                      and not _VERSION_TAG.match(name))


def _without_redirections(words: list[str]) -> list[str]:
    """A command's words but its redirections (``2>&1``, ``>/tmp/o.txt``, ``> /tmp/o.txt``: the operator and the
    word it takes): the shell's, not operands of the command (``git checkout Makefile 2>&1`` restores Makefile)."""
    kept: list[str] = []
    target = False  # the word after an operator written alone is its file
    for word in words:
        if target:
            target = False
        elif found := _REDIRECTION.match(word):
            target = not found.group(1)
        else:
            kept.append(word)
    return kept


def _from_head(words: list[str]) -> bool:
    """Whether a ``git restore`` of files (its words after the verb) puts back their committed state: no other
    revision named (``--source=REV``, ``-s REV``) and no part of them picked (``-p``). Those write other content
    into the file: a change stays. ``restore`` takes no revision among its operands: ``git restore Makefile F``
    restores both (review RALL-A)."""
    if {"-p", "--patch"} & set(words):
        return False
    source = next((word.split("=", 1)[1] for word in words if word.startswith("--source=")), None)
    for flag in ("-s", "--source"):
        if flag in words[:-1]:
            source = words[words.index(flag) + 1]
    return source is None or source == "HEAD"


def _named_files(words: list[str]) -> list[str]:
    """The paths a git command names: every word after ``--``, else the words that look like files."""
    if "--" in words:
        return words[words.index("--") + 1:]
    return [word for word in words if word in (".", "./") or (not word.startswith("-") and _FILE_TOKEN.match(word))]


def names_path(paths: Iterable[str], path: str) -> bool:
    """Whether ``paths`` name ``path``, its ``./`` or absolute twin too (``/testbed/pkg/mod.py`` is ``pkg/mod.py``)."""
    path = path.removeprefix("./")
    return any((p := q.removeprefix("./")) == path or p.endswith("/" + path) or path.endswith("/" + p) for q in paths)


def undoes(undone: Iterable[str], path: str) -> bool:
    """Whether undoing ``undone`` (:attr:`Undo.files`) undid ``path``: named (:func:`names_path`), inside a directory
    named (``rm -rf reproduce_issue`` takes ``reproduce_issue/conf.py``), or every file (:data:`EVERY_FILE`)."""
    undone, path = list(undone), path.removeprefix("./")
    return EVERY_FILE in undone or names_path(undone, path) or any(
        path.startswith(directory + "/") for u in undone if (directory := u.removeprefix("./").rstrip("/")))


def mentions(text: str, path: str) -> bool:
    """Whether ``text`` names ``path``: its file name as a word of its own (not ``test_repr.py`` nor ``repr.py.bak``
    for ``repr.py``), with no directory or one of that file (``printing/repr.py``, ``/testbed/sympy/printing/repr.py``;
    not ``sympy/core/repr.py``)."""
    name = path.rstrip("/").rsplit("/", 1)[-1]
    if not name or name not in text:
        return False
    pattern = r"(?<![\w.@+/-])((?:[\w.@+-]*/)*)" + re.escape(name) + r"(?![\w@+/-]|\.\w)"
    return any(not found.group(1) or names_path([found.group(1) + name], path) for found in re.finditer(pattern, text))


#: A script a command runs (``python3 apply_fix.py``, ``bash fix.sh``, ``./fix.sh``; a test file a runner runs:
#: ``pytest F``, sympy's ``bin/test F``): what it may write its writer's text names.
_RUN_SCRIPT = re.compile(r"(?:(?<![\w./-])(?:python[\d.]*|bash|sh|node|ruby|perl|pytest|py\.test|bin/test)[ \t]+"
                         r"(?:-\S+[ \t]+)*"
                         r"|(?<![\w./-])\./)([^\s;&|<>]+)")


@dataclass
class _Reverts:
    """A run's undos (:func:`undone_by`, but a stash's and the whole tree's), and what its steps did after them."""

    steps: list[Step]
    reading: _Reading
    marks: list[tuple[int, int, int]]  # per step, and one past the last: where its diffed, written and said start
    undos: list[tuple[int, tuple[str, ...]]]  # (step, files)

    def reverted(self, path: str) -> bool:
        """Whether the last undo of ``path`` (:func:`undoes`) came after every step that showed it in a diff, wrote
        it, or, not a read, named it (:func:`mentions`: ``mv repr.py.bak repr.py`` after ``cp repr.py repr.py.bak;
        git checkout repr.py``, a ``sed -i`` the rough parse misses) or ran a script the run wrote naming it
        (``python apply_fix.py``). Without a diff after the revert (a Claude Code or Codex session, an OTLP export
        keeping no observations) those are all that say the file changed again (review RR11h)."""
        at = next((n for n, files in reversed(self.undos) if undoes(files, path)), None)
        return at is not None and not any(self._touches(n, path) for n in range(at + 1, len(self.steps)))

    def __post_init__(self) -> None:
        # once per run: each step's words, and which steps wrote a script of each file name (review RALL-A of probe
        # 53: looking at every earlier step's writes for each later script run was quadratic, 21 s for 3,200 steps)
        self._said = ["\n".join(self._slice(n, 2)) for n in range(len(self.steps))]
        self._writers: dict[str, list[tuple[int, str]]] = {}
        for m in range(len(self.steps)):
            for script in self._slice(m, 1):
                self._writers.setdefault(script.rstrip("/").rsplit("/", 1)[-1], []).append((m, script))
        self._named: dict[tuple[int, str], bool] = {}

    def _slice(self, n: int, kind: int) -> list[str]:
        items = (self.reading.diffed, self.reading.written, self.reading.said)[kind]
        return items[self.marks[n][kind]:self.marks[n + 1][kind]]

    def _touches(self, n: int, path: str) -> bool:
        from .steps import is_read, is_test_run, is_write  # steps reads commands with this module's parser

        if names_path(self._slice(n, 0) + self._slice(n, 1), path):
            return True
        said, step = self._said[n], self.steps[n]
        if not said or is_read(step) or step.action in CALLS_NOTHING:  # an answer naming it ("Restored calc.py.")
            return False
        command = _command((step.action or "").strip(), step.arguments)
        if command is not None:  # which of its commands writes is judged one by one (``pytest F > out.txt``)
            if any(_writes_named(segment, path) for segment in _segments(command)):
                return True
        # a file run (``python3 apply_fix.py``, ``pytest tests/test_x.py``) is not written by being run
        elif mentions(_RUN_SCRIPT.sub(" ", said), path) and (is_write(step) or not is_test_run(step)):
            return True
        runs = _RUN_SCRIPT.findall(said)  # the scripts it runs, and the writers of each naming path
        writers = sorted({(m, script) for run in runs for m, script in self._writers.get(run.rsplit("/", 1)[-1], ())
                          if m < n and ("/" not in run or names_path([run], script))})
        return any(self._names(m, path) for m, script in writers if not names_path([script], path))

    def _names(self, m: int, path: str) -> bool:
        """Whether step ``m``'s words name ``path`` (:func:`mentions`), asked once per step and path."""
        if (m, path) not in self._named:
            self._named[m, path] = mentions(self._said[m], path)
        return self._named[m, path]


#: Programs that leave the files they name as they are (a ``diff`` of two files, a checksum).
_LEAVES_FILES = _READ_ONLY | _READERS | _SEARCHERS | {"diff", "cmp", "stat", "file", "md5sum", "sha1sum", "sha256sum"}


def _writes_named(segment: str, path: str) -> bool:
    """Whether one simple command may write ``path``: output redirected into it, or it names the file (not as a
    script it runs, :data:`_RUN_SCRIPT`) and is neither a test run (``pytest F > out.txt``), a program that leaves
    files as they are (``diff F x``, ``cat F``), git's reads or staging (``git diff F``, ``git add F``) nor a copy of
    it elsewhere (``cp F F.orig``: a ``cp`` writes its last operand)."""
    from .steps import _runs_tests  # steps reads commands with this module's parser

    if any(mentions(target.strip("'\""), path) for target in _REDIRECT.findall(segment)):
        return True
    if not mentions(_RUN_SCRIPT.sub(" ", _REDIRECT.sub(" ", segment)), path):
        return False
    words = program_words(_words(segment))
    name = words[0].rsplit("/", 1)[-1] if words else ""
    if name == "cp" and not any(word == "-t" or word.startswith("--target") for word in words):
        operands = [word for word in words[1:] if not word.startswith("-")]
        return bool(operands) and mentions(operands[-1], path)
    if name in _LEAVES_FILES or name == "git" and len(words) > 1 and words[1] in _GIT_READS | {"add", "commit"}:
        return False
    return not _runs_tests(segment)


def touched(trajectory: Trajectory) -> Touched:
    """Everything the run touched, from its steps (see the module docstring). A file undone after the last step
    that showed it in a diff, wrote it or named it (:meth:`_Reverts.reverted`) is no change of the run's (gemini-3-pro
    on SWE-bench, 16 of 500 runs: eight sphinx runs' ``git checkout setup.py tox.ini`` after a ``git diff`` showed the
    harness's edits, four astropy runs' ``pyproject.toml``, test and scratch files checked out or removed); a ``git
    stash`` or a whole tree's undo (``git checkout -- .``, ``git restore .``, ``git reset --hard``) is not counted: a
    stash may be popped, and a change may outlive the whole tree's undo (committed, staged, a new file git does not
    track, saved with ``git diff > fix.patch`` and applied again: real Qwen Code sessions of round 23's review), so
    a run that set back every edit still lists them, which loses less than a fix dropped. When every file its
    diffs show was undone, what it wrote and did not undo is what it changed (sphinx-9281: its only diff showed the
    harness's edits it reverted, its fix a ``sed -i`` no diff showed)."""
    run = run_reading(trajectory)
    reading = run.whole
    undos: list[tuple[int, tuple[str, ...]]] = []  # (step, files) of each undo but a stash's and the whole tree's
    for n, step in enumerate(trajectory.steps):
        undo = undone_by(step)
        if not undo.stashed and (files := tuple(path for path in undo.files if path != EVERY_FILE)):
            undos.append((n, files))
    reverts = _Reverts(trajectory.steps, reading, run.marks, undos)
    changed = [path for path in reading.changed() if not reverts.reverted(path)]
    if reading.diffed and not changed:  # every diffed file undone: what it wrote and kept
        changed = [path for path in _paths(reading.written, reading.roots) if not reverts.reverted(path)]
    if reading.diffed:  # what the run's whole record names (one step's command need not name what it shows changed)
        changed = _named(changed, reading, _cut(trajectory), _paths(reading.created, reading.roots), _whole(trajectory))
    roots = reading.roots
    created = set(_paths(reading.created, roots)) & set(changed)
    only_created = [path for path in changed if path in created] if created and len(created) == len(changed) else []
    changed = [path for path in changed if path not in created]  # no file of the project (see the module)
    defined: dict[str, list[str]] = {}
    for path, name in reading.seen:
        found = _paths([path], roots)
        if found and name not in defined.setdefault(found[0], []):
            defined[found[0]].append(name)
    for path in [p for p in defined if p.startswith("/")]:  # /repo/pkg/mod.py is the pkg/mod.py seen elsewhere
        twin = next((r for r in [*changed, *defined] if not r.startswith("/") and path.endswith("/" + r)), None)
        if twin:
            defined[twin] = _unique([*defined.get(twin, []), *defined.pop(path)])
    scratch = (set(_paths(reading.written, roots)) | created) - set(changed)  # written, and left out of every diff
    defined = {path: names for path, names in defined.items() if path not in scratch}  # a repro script lives nowhere
    return Touched(
        changed=changed,
        created=only_created,
        read=[p for p in _paths(reading.read, roots) if p not in changed and p not in scratch],
        symbols=_unique(s for s in reading.symbols if len(s) > 2 and s not in ("self", "cls")),
        tests=[t for t in _paths(reading.tests, roots) if "/" in t or "::" in t],
        commands=[c for c, _ in reading.commands.most_common()],
        calls=_unique(reading.calls),
        defined=defined,
    )


def source_file(name: str) -> str | None:
    """The source file a name (a path, a link) points at, a ``#L12`` anchor or ``::test`` id cut off; None
    when it names no source file (by its extension)."""
    path = re.split(r"[#:]", name, maxsplit=1)[0]
    return path if _SOURCE.match(path) else None


def _definitions(output: str, files: list[str]) -> list[tuple[str, str]]:
    """(file, name) of what a read's output shows defined: every name when it read one source file,
    else the ``path:line:`` hits of a search over many. Dunder names say nothing about a file."""
    sources = [f for f in dict.fromkeys(files) if _SOURCE.search(f)]
    if len(set(files)) == 1 and sources:
        found = [(sources[0], name) for pattern in (_SHOWN_DEF, _SHOWN_SETTING) for name in pattern.findall(output)]
    else:
        found = [(path, shown.group(1)) for path, text in _GREP_HIT.findall(output)
                 if (shown := _SHOWN_DEF.match(text) or _SHOWN_SETTING.match(text))]
    return [(path, name) for path, name in found if len(name) > 2 and not name.startswith("__")]


def _diff(text: str, *, envelope: bool) -> tuple[list[str], list[str]]:
    """Files and changed functions/classes of the unified diffs in ``text``, and of its ``apply_patch`` envelope when
    ``envelope``: only a call's arguments hand one to the tool; a step's output that shows one (``cat
    apply_patch_tool_instructions.md``) shows its example, no change of the run's (review RALL-A)."""
    files = [b for _, b in _DIFF_FILE.findall(text)] + [p for p in _DIFF_PLUS.findall(text) if p != "/dev/null"]
    if envelope:
        files += _PATCH_FILE.findall(text)
    if not files:
        return [], []
    names = [m.group(1) for h in _HUNK.findall(text) if (m := _DEF.search(h))]
    names += _CHANGED_DEF.findall(text)
    return files, names


#: The header line of a unified diff's file that it creates.
NEW_FILE = re.compile(r"^(?:new file mode \d+|--- /dev/null)\s*$", re.M)


def _created(text: str) -> list[str]:
    """The files the unified diffs in ``text`` create (``new file mode``, or ``--- /dev/null``): a reproduction
    script or a scratch project that ``git add -A && git diff --cached`` hands in with the fix."""
    if not NEW_FILE.search(text):  # most diffs create nothing: no second pass over them
        return []
    found = []
    for block in re.split(r"^(?=diff --git )", text, flags=re.M):
        head = block.split("\n@@", 1)[0]
        if NEW_FILE.search(head):
            found += [b for _, b in _DIFF_FILE.findall(head)[:1]] or [p for p in _DIFF_PLUS.findall(head)[:1]
                                                                     if p != "/dev/null"]
    return found


#: A shell handed its script as its last argument after options, one of them ``-c`` (``bash -lc <script>``, as
#: Codex's ``shell`` tool runs every command; ``bash -e -c``, ``bash --login -c``; fish's ``-c`` / ``--command``).
_SHELL_PROGRAM = re.compile(r"(?:\S*/)?(?:(?:ba|z|da|k)?sh|fish)")
_SCRIPT_FLAG = re.compile(r"-[a-zA-Z]*c[a-zA-Z]*|--command")
#: PowerShell (``powershell.exe`` on Windows, ``pwsh``; a Windows path before it): its script is every word after
#: ``-Command`` (``-c``), joined by spaces as PowerShell joins them, its options case-blind, as codex-rs reads a
#: Windows argv (``extract_powershell_command``).
_POWERSHELL = re.compile(r"(?:.*[\\/])?(?:powershell|pwsh)(?:\.exe)?", re.I)
_POWERSHELL_SCRIPT = frozenset({"-command", "-c", "/command"})


def command_line(arguments: Any) -> str | None:
    """The command line a shell tool's call ran: its ``command`` (Claude Code's ``Bash``, SWE-agent's, OpenHands'),
    or Codex's ``cmd`` (unified exec's ``exec_command``, codex-rs ``ExecCommandArgs``); an argv list (Codex's
    ``shell`` / ``local_shell``) as the shell would be given it (``shlex.join``: ``rg -n 'a b' src``), or, when it
    is a shell given a script (``["bash", "-lc", "rg x"]``, ``["fish", "-c", ...]``, ``["powershell.exe",
    "-Command", ...]``), that script, as codex-rs shows it (``parse_command``): ``bash -lc cat x`` is no read,
    ``cat x`` is. None when the call names no command. The one reader of a step's command: the read, write and
    test-run rules (``steps``), what a run touched, and the adapters' errors."""
    found = arguments.get("command", arguments.get("cmd")) if isinstance(arguments, dict) else None
    if isinstance(found, list) and all(isinstance(part, str) for part in found):
        script = _shell_script(found)
        return script if script is not None else shlex.join(found)
    return found if isinstance(found, str) else None


#: A shell's options that take the next word as their value (``bash -o pipefail -c ...``, ``-O extglob``).
_SHELL_VALUED = frozenset({"-o", "+o", "-O", "+O"})


def _shell_script(argv: list[str]) -> str | None:
    """The script ``argv`` runs a shell on (run as it is or by ``env``: ``/usr/bin/env bash -lc S``): the first word
    after its options, one of them a ``-c``; the words after it are the script's ``$0``, ``$1`` ... (``["sh", "-c",
    S, "sh"]``; fish's ``--command=S``); PowerShell's, the words after its ``-Command``. None if ``argv`` runs no
    shell on a script (review RALL-A 6: ``bash -o pipefail -c S`` and ``sh -c S sh`` were read as argvs, whose reads
    and test runs were then none; round 23: so were fish's and PowerShell's)."""
    words = argv[1:] if argv and argv[0].rsplit("/", 1)[-1] == "env" else argv
    if words and _POWERSHELL.fullmatch(words[0]):
        flags = [word.lower() for word in words[1:]]
        at = next((n for n, flag in enumerate(flags) if flag in _POWERSHELL_SCRIPT), None)
        return " ".join(words[at + 2:]) if at is not None and at + 2 < len(words) else None
    if not words or not _SHELL_PROGRAM.fullmatch(words[0]):
        return None
    script_flag = False
    it = iter(words[1:])
    for word in it:
        if word in _SHELL_VALUED:
            next(it, None)
        elif word.startswith("--command="):
            return word.split("=", 1)[1]
        elif word.startswith(("-", "+")) and word != "--":
            script_flag = script_flag or bool(_SCRIPT_FLAG.fullmatch(word))
        else:
            script = next(it, None) if word == "--" else word
            return script if script_flag else None
    return None


def _command(action: str, args: Any) -> str | None:
    """The shell command of a step, if it ran one: a shell tool's argument, or its command line
    (:func:`command_line`, as the read and write rules read it) or ``script`` argument holding one (an editor's
    ``"command": "view"`` is none)."""
    shell = action.lower() in SHELL_TOOLS
    if isinstance(args, str):
        return args if shell else None
    value = command_line(args) or (args.get("script") if isinstance(args, dict) else None)
    if isinstance(value, str) and value and (shell or " " in value.strip()):
        return value
    return None


def _path_argument(args: Any) -> str:
    if isinstance(args, dict):
        for key in _PATH_KEYS:
            value = args.get(key)
            if isinstance(value, str) and value.strip() and "\n" not in value and len(value) < 300:
                return value.strip()
    return ""


#: A command line's parts: a quoted string (to its end when unclosed), a separator, a parenthesis (``\\(`` is text:
#: ``find . \\( -name a \\)``), other text; a lone ``&`` (``2>&1``, a background job) is text. Matched at once: a loop
#: over the characters was a fifth of a digest's cost.
_SEGMENT_PARTS = re.compile(r"""'[^']*'?|"[^"]*"?|&&|\|\||[;|\n]|[()]|(?:\\[()]|[^'";|\n&()])+|&""")
_SEPARATORS = frozenset({"&&", "||", ";", "|", "\n"})
#: Words after which a parenthesis opens a subshell, as at a command's start: ``for d in a b; do (cd $d && mvn test);
#: done``, ``time (cd x && mvn test)``, ``if ! (cd x && mvn test); then``, ``{ (cd x && make); }``. Not right after
#: ``if`` / ``while`` (``_CONDITIONS``), which a patch's or a heredoc's code the rough split reaches writes as
#: ``if (x.y)``: read as a subshell, ``x.y`` was a command.
_BEFORE_SUBSHELL = frozenset({"do", "then", "else", "time", "!", "{"})
_CONDITIONS = frozenset({"if", "elif", "while", "until"})
#: An assignment whose value opens with a command substitution, at the end of a command's text so far: ``out=$``,
#: and the same made by a shell builtin that declares it (``export OUT=$``, ``local -r out=$``, ``declare``,
#: ``readonly``, ``typeset``), whose substitution's command runs the same.
_ASSIGNED_SUBSTITUTION = re.compile(r"(?:^|(?<=\s))(?:(?:export|local|declare|readonly|typeset)(?:\s+-\w+)*\s+)?"
                                    r"[A-Za-z_]\w*=\$$")


@per_call
def _segments(command: str) -> tuple[str, ...]:
    """Simple commands of a command line: heredoc bodies (and SWE-agent's ``edit``/``plan`` bodies)
    dropped, split at ``&&``, ``||``, ``;``, ``|`` and newlines outside quotes, a subshell's parentheses dropped
    (``(cd app && ./gradlew test) 2>&1`` runs ``cd app`` and ``./gradlew test 2>&1``, as agents copy it from a
    project's instructions), and so the words before one that opens after a keyword (``_BEFORE_SUBSHELL``).
    Split once in a run's reading (:func:`read_once`, a :mod:`~trajsearch.memo` scope), which ``steps.is_write``
    splits again; a tuple, so no caller changes an answer kept."""
    lines = command.split("\n")
    # SWE-agent's multi-line commands (``edit 287:295``, ``plan``) run to an ``end_of_<command>`` line
    closers = {line.strip() for line in lines if line.strip().startswith("end_of_")}
    kept, i = [], 0
    while i < len(lines):
        kept.append(lines[i])
        found = _HEREDOC.search(lines[i])
        first = lines[i].split()[0] if lines[i].split() else ""
        end = found.group(1) if found else f"end_of_{first}" if f"end_of_{first}" in closers else None
        i += 1
        if end:  # skip the body up to the delimiter line
            while i < len(lines) and lines[i].strip() != end:
                i += 1
            i += 1
    text = "\n".join(kept)
    out, current = [], []
    opened: list[bool] = []  # each open parenthesis: a subshell's (dropped) or not (``$(``, ``f()``, ``<(``: text)
    for part in _SEGMENT_PARTS.findall(text):
        if part in _SEPARATORS:
            out.append("".join(current))
            current = []
        elif part == "(" and _opens_subshell("".join(current)):
            out.append("".join(current))  # ``do``, ``if !``, ``time``, ``out=$``: no command of the subshell's
            current = []
            opened.append(True)
        elif part == ")" and (not opened or opened[-1]):  # and closes where no other parenthesis is open
            opened[-1:] = []  # none open: a ``case`` pattern's, left as base read it
            current.append(" ")
        else:
            if part == "(":
                opened.append(False)
            elif part == ")":
                opened.pop()
            current.append(part)
    out.append("".join(current))
    return tuple(segment.strip() for segment in out if segment.strip())


def _opens_subshell(before: str) -> bool:
    """Whether a parenthesis after ``before`` (its command's text so far) opens a subshell: where a command would
    start (nothing before it, or keywords: ``_BEFORE_SUBSHELL``), or a command substitution that is an assignment's
    whole value there (``out=$(cd x && mvn test 2>&1)``), whose command runs as the subshell's does. Any other
    (``echo $(date)``, ``f()``, ``<(cmd)``) is text of its command."""
    words = _ASSIGNED_SUBSTITUTION.sub("", before).split()
    return not words or (words[-1] in _BEFORE_SUBSHELL and set(words) <= _BEFORE_SUBSHELL | _CONDITIONS)


def program_words(words: list[str], also: frozenset[str] = frozenset()) -> list[str]:
    """A command's words from its program on: past the words that run another (``sudo``, ``time``, ``timeout 10``,
    ``env``, ``nohup``, ``exec``, ``xargs``: ``_SKIP_WORDS``, and ``also``), their options and ``VAR=value``
    assignments: ``tail -n 5 x.log`` for ``timeout 10 env LC_ALL=C tail -n 5 x.log``."""
    while words and (words[0] in _SKIP_WORDS or words[0] in also or "=" in words[0] or words[0].isdigit()
                     or (words[0].startswith("-") and len(words) > 1)):
        words = words[1:]
    return words


def _shell(command: str, written: list[str], read: list[str], tests: list[str], commands: Counter[str],
           roots: set[str]) -> None:
    """Files written and read, tests and commands of one shell command (a rough parse, never a failure)."""
    written += [m for m in _OPEN_WRITE.findall(command) + _WRITE_TEXT.findall(command)]
    for segment in _segments(command):
        words = program_words(_words(segment))
        if not words:
            continue
        name = words[0].rsplit("/", 1)[-1]
        if name == "cd" and len(words) > 1 and words[1].startswith("/"):
            roots.add(words[1].rstrip("/") + "/")
            continue
        if not re.fullmatch(r"[a-z][\w.+-]*", name) or name in _NOT_COMMANDS:  # "The", "DISCUSSION": prose
            continue
        commands[name] += 1
        args = [w.strip("'\"") for w in words[1:]]
        for target in _REDIRECT.findall(segment):
            target = target.strip("'\"")
            if _FILE_TOKEN.match(target) and not _NOT_FILES.match(target):
                written.append(target)
        args = [a for a in args if not a.startswith((">", "<", "2>", "&"))]
        operands = [a for a in args if not a.startswith("-")]
        if name in _SEARCHERS or name == "sed":
            operands = operands[1:]  # the pattern or the script
        files = [a for a in operands if _FILE_TOKEN.match(a.split("::", 1)[0]) and not _NOT_FILES.match(a)]
        runner = name in _RUNNERS or (name.startswith("python") and args[:2] == ["-m", "pytest"])
        if runner:
            tests += [a for a in operands if "::" in a or "/" in a and _FILE_TOKEN.match(a)]
        elif name == "sed" and any(a.startswith("-i") or a == "--in-place" for a in args):
            written += files
        elif name == "tee":
            written += files
        elif name in _READERS or name in _SEARCHERS or name == "sed":
            read += files
        elif name.startswith("python") and files and "/" in files[0] and re.search(r"test", files[0]):
            tests.append(files[0])


#: What makes ``shlex`` split otherwise than at whitespace (its quotes and escape), and the whitespace it splits at.
_QUOTING = re.compile(r"""['"\\]""")
_SHELL_SPACE = re.compile(r"[ \t\r\n]+")


def _words(segment: str) -> list[str]:
    """A simple command's words as the shell splits them (``sed -n '/def f/,/return/p' a.py`` is three
    words), or at whitespace where its quoting does not parse. Without quotes or escapes the shell's words are
    the whitespace-separated ones: split so, as ``shlex`` (pure Python) is most of the cost of reading a run."""
    if not _QUOTING.search(segment):
        bare = segment.strip(" \t\r\n")
        return _SHELL_SPACE.split(bare) if bare else []
    try:
        return shlex.split(segment)
    except ValueError:
        return segment.split()


def _paths(paths: Iterable[str], roots: Collection[str]) -> list[str]:
    """Paths made relative to the run's working directories, ``./`` dropped, absolute twins of
    relative paths merged, in order of first sight."""
    out: list[str] = []
    for path in paths:
        path = path.strip().strip("'\"`")
        for root in sorted(roots, key=len, reverse=True):
            if path.startswith(root):
                path = path[len(root):]
                break
        while path.startswith("./"):
            path = path[2:]
        if path and not _NOT_FILES.match(path):
            out.append(path)
    relative = [p for p in out if not p.startswith("/")]
    merged = [p for p in out if not (p.startswith("/") and any(p.endswith("/" + r) for r in relative))]
    return _unique(merged)


def _unique(items: Iterable[str]) -> list[str]:
    return list(dict.fromkeys(items))


# -- the query side: identifiers in a task ---------------------------------------------------------

#: The first four alternatives start only where a run of the characters they begin with starts (the
#: lookbehinds). From inside a run each would scan to the run's end and fail as it did from its
#: start (the run ends alike), so a task holding one long unbroken token (a 19,000-char hex dump)
#: took quadratic time: 8 s. The same names as before on 9,520 real task texts and observations
#: (the shared tau-bench, mini-swe-agent and real-formats runs).
_IDENT = re.compile(r"""
    (?<![\w.-])(?:[\w.-]+/)*[\w.-]+::[\w:\[\]-]+   # test ids
  | (?<![\w.-])(?:[\w.-]+/)+[\w.-]+                # paths
  | (?<!\w)[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+          # dotted names
  | (?<!\w)\w+\.\w{1,5}\b                          # file names
  | \b[a-z]+[A-Z]\w*                          # camelCase
  | \b[A-Z][a-z0-9]+[A-Z]\w*                  # CamelCase
  | \b[A-Za-z][A-Za-z0-9]*_\w+                # snake_case
  | \b[A-Z]{1,4}\d{2,}\b                      # codes: L031, E501
""", re.X)
_BACKTICKS = re.compile(r"`([^`\n]{2,80})`")

#: The longest dotted prefix :func:`identifiers` makes of a dotted name (``pkg.mod`` of ``pkg.mod.func``): the
#: longest token the lexical index keeps (``trajsearch.store.tokenize``), and far past any real module path.
PREFIX_MAX = 120


def identifiers(text: str) -> list[str]:
    """The code-like names in a task text (paths, dotted names, file names, test ids, CamelCase,
    snake_case, codes, anything in backticks), in order of first sight; ``pvlib.irradiance.reindl``
    also yields ``pvlib.irradiance`` and ``pvlib/irradiance.py``, so a task that names a function
    meets a run that changed its module.

    Only the prefixes of up to ``PREFIX_MAX`` characters are made: made for every part, a chain of n parts
    built n strings of up to its whole length, twice (a 20,000-character ``a.a.a...`` task: ~200 MB and 7 s,
    then a lexical query of 199,470,339 characters refused; probe 52, review RPERF)."""
    found: list[str] = []
    for name in _BACKTICKS.findall(text) + _IDENT.findall(text):
        name = name.strip(".,;:()[]{}'\"").removesuffix("()")
        if len(name) < 3 or name.isdigit():
            continue
        found.append(name)
        parts = name.split(".")
        if (len(parts) > 2 and parts[0] not in ("self", "cls", "this")
                and all(re.fullmatch(r"[A-Za-z_]\w*", p) for p in parts)):
            top, size = 1, len(parts[0])  # parts[:top], size characters: the longest prefix within PREFIX_MAX
            while top < len(parts) - 1 and size + 1 + len(parts[top]) <= PREFIX_MAX:
                size += 1 + len(parts[top])
                top += 1
            for n in range(top, 1, -1):  # pkg.mod.func -> pkg.mod, pkg/mod.py
                found.append(".".join(parts[:n]))
                found.append("/".join(parts[:n]) + ".py")
    return _unique(found)
